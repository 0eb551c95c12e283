/*
 * librpcrdma: the RPC-over-RDMA transport header.
 *
 * Version One as RFC 8166 (draft-ietf-nfsv4-rfc5666bis-04 section 5) defines
 * it, the legacy RDMA_MSGP and RDMA_DONE of RFC 5666 and
 * draft-ietf-nfsv4-rpcrdma-01, and Version Two exactly as
 * draft-cel-nfsv4-rpcrdma-version-two-00 section 4.2 defines it (vers 2,
 * RDMA_OPTIONAL = 5, RDMA_ERR_INVAL_OPTION = 3).
 *
 * One structure, struct rpcrdma_hdr, is both what the decoder fills and what
 * the encoder reads.  Segments of the Write list and the Reply chunk live in
 * one array, segs[]; each chunk names a run of it.
 *
 * The decoder is the first line of defence against a hostile peer: it checks
 * every count, position, length and offset, enforces configurable limits, and
 * on failure says which answer the specification demands (RDMA_ERROR with
 * ERR_VERS, RDMA_ERROR with ERR_CHUNK, or a silent drop).
 */
#ifndef RPCRDMA_HEADER_H
#define RPCRDMA_HEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/common.h"
#include "rpcrdma/xdr.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RPCRDMA_VERSION_ONE 1u
#define RPCRDMA_VERSION_TWO 2u

/** rdma_proc (Version One: rdma_htype) values. */
enum rpcrdma_proc {
	RPCRDMA_PROC_MSG = 0,      /* chunk lists, then the RPC message */
	RPCRDMA_PROC_NOMSG = 1,    /* chunk lists only; the message is in a chunk */
	RPCRDMA_PROC_MSGP = 2,     /* RFC 5666 padded message; reserved since */
	RPCRDMA_PROC_DONE = 3,     /* RFC 5666 Read-Read completion; reserved since */
	RPCRDMA_PROC_ERROR = 4,    /* a transport-level error */
	RPCRDMA_PROC_OPTIONAL = 5, /* Version Two only: an optional feature */
};

/** rdma_err values.  ERR_CHUNK is RDMA_ERR_BADHEADER in the drafts (2). */
enum rpcrdma_errcode_wire {
	RPCRDMA_ERR_VERS = 1,
	RPCRDMA_ERR_CHUNK = 2,
	RPCRDMA_ERR_INVAL_OPTION = 3, /* Version Two only */
};

/** Capacities of struct rpcrdma_hdr; configured limits may only be lower. */
#define RPCRDMA_HDR_MAX_READS 64        /* Read list entries (segments) */
#define RPCRDMA_HDR_MAX_WRITE_CHUNKS 32 /* Write list entries */
#define RPCRDMA_HDR_MAX_SEGS 256        /* Write list + Reply chunk segments */

/** Size of the four fixed words. */
#define RPCRDMA_HDR_PREFIX_SIZE 16u
/** Smallest RDMA_MSG/NOMSG header: the prefix and three empty lists. */
#define RPCRDMA_HDR_MIN_SIZE 28u
/** Bytes of one plain segment (HLOO) and one read segment (PHLOO). */
#define RPCRDMA_SEGMENT_SIZE 16u
#define RPCRDMA_READ_SEGMENT_SIZE 20u

/** An RDMA segment: a steering tag (handle), a byte count and an offset. */
struct rpcrdma_segment {
	uint32_t handle;
	uint32_t length;
	uint64_t offset;
};

/** A Read list entry; entries with equal positions form one Read chunk. */
struct rpcrdma_read_segment {
	uint32_t position;
	struct rpcrdma_segment target;
};

/** A Write chunk or the Reply chunk: @nsegs entries of segs[] from @first. */
struct rpcrdma_chunk {
	uint32_t first;
	uint32_t nsegs;
};

struct rpcrdma_hdr {
	uint32_t xid;
	uint32_t vers;
	uint32_t credit;
	uint32_t proc; /* enum rpcrdma_proc, or any value seen on the wire */

	/* RDMA_MSGP only. */
	uint32_t align;
	uint32_t thresh;

	/* RDMA_MSG, RDMA_NOMSG, RDMA_MSGP. */
	uint32_t nreads;
	struct rpcrdma_read_segment reads[RPCRDMA_HDR_MAX_READS];
	uint32_t nwrites;
	struct rpcrdma_chunk writes[RPCRDMA_HDR_MAX_WRITE_CHUNKS];
	bool has_reply;
	struct rpcrdma_chunk reply;
	uint32_t nsegs;
	struct rpcrdma_segment segs[RPCRDMA_HDR_MAX_SEGS];

	/* RDMA_ERROR. */
	uint32_t err;       /* enum rpcrdma_errcode_wire */
	uint32_t vers_low;  /* ERR_VERS only */
	uint32_t vers_high;

	/* RDMA_OPTIONAL: optinfo points into the decoded buffer. */
	uint32_t opttype;
	uint32_t optinfo_len;
	const uint8_t *optinfo;

	/* Set by the decoder: where the RPC message starts, and its length. */
	size_t hdr_len;
	size_t payload_len;
};

/** Limits the decoder enforces; start from rpcrdma_hdr_limits_default().
 *  A limit above the capacity of struct rpcrdma_hdr acts as that capacity. */
struct rpcrdma_hdr_limits {
	uint32_t vers_low;           /* versions this end accepts */
	uint32_t vers_high;
	uint32_t max_reads;          /* Read list entries */
	uint32_t max_write_chunks;   /* Write list entries */
	uint32_t max_chunk_segs;     /* segments in one Write or Reply chunk */
	uint32_t max_optinfo;        /* RDMA_OPTIONAL rdma_optinfo bytes */
	size_t max_hdr_size;         /* bytes of transport header */
};

/**
 * rpcrdma_hdr_limits_default - the decoder's defaults
 *
 * Versions 1..2, the full capacities of struct rpcrdma_hdr, 16 segments per
 * chunk, 1024 bytes of optinfo and 4096 bytes of header (the largest inline
 * threshold either version defaults to).  Does nothing when @lim is NULL.
 */
RPCRDMA_EXTERN void rpcrdma_hdr_limits_default(struct rpcrdma_hdr_limits *lim);

/** What the receiver of a bad header must do (RFC 8166 section 4.5 ff). */
enum rpcrdma_hdr_action {
	RPCRDMA_HDR_ACCEPT = 0,         /* valid: process it */
	RPCRDMA_HDR_REPLY_ERR_VERS,     /* answer RDMA_ERROR/ERR_VERS, our range */
	RPCRDMA_HDR_REPLY_ERR_CHUNK,    /* answer RDMA_ERROR/ERR_CHUNK */
	RPCRDMA_HDR_REPLY_INVAL_OPTION, /* answer RDMA_ERROR/ERR_INVAL_OPTION */
	RPCRDMA_HDR_DROP,               /* discard silently */
};

/** Why a header was refused, and what to do about it. */
struct rpcrdma_hdr_fault {
	enum rpcrdma_hdr_action action;
	const char *reason; /* static text, for logs and rpcrdma-dump */
	size_t offset;      /* byte offset in the header where it went wrong */
};

/**
 * rpcrdma_hdr_decode - decode and validate a received transport header
 * @buf, @len: the whole received message (header and any RPC payload)
 * @lim: limits to enforce, or NULL for rpcrdma_hdr_limits_default()
 * @hdr: filled with everything decoded, even on failure (fields not reached
 *	keep the zero value)
 * @fault: set on every call; its action is RPCRDMA_HDR_ACCEPT on success
 *
 * Returns 0 when the header is valid; then @hdr->hdr_len is where the RPC
 * message (if any) starts and @hdr->payload_len its length.  Otherwise one
 * of RPCRDMA_ERR_VERSION (answer ERR_VERS), RPCRDMA_ERR_BAD_HEADER (answer
 * ERR_CHUNK), RPCRDMA_ERR_DROP (say nothing); @fault says the same with a
 * reason.  An error reply must carry @hdr->xid and, for ERR_CHUNK, @hdr->vers.
 * A NULL @buf reads as @len 0 (a header too short: RPCRDMA_ERR_DROP); a NULL
 * @hdr or @fault is -EINVAL, and then neither is written.
 */
RPCRDMA_EXTERN int rpcrdma_hdr_decode(const void *buf, size_t len,
				      const struct rpcrdma_hdr_limits *lim, struct rpcrdma_hdr *hdr,
				      struct rpcrdma_hdr_fault *fault);

/**
 * rpcrdma_hdr_encoded_size - exact bytes rpcrdma_hdr_encode() will write
 *
 * Returns 0 when @hdr is NULL or cannot be encoded (see rpcrdma_hdr_encode()).
 */
RPCRDMA_EXTERN size_t rpcrdma_hdr_encoded_size(const struct rpcrdma_hdr *hdr);

/**
 * rpcrdma_hdr_encode - write a transport header
 *
 * Encodes the fields @hdr->proc calls for (payload_len and hdr_len are
 * ignored).  Returns the number of bytes written, -EINVAL when @hdr is NULL,
 * @buf is NULL with a non-zero @cap, or @hdr is inconsistent (counts above capacity, a chunk outside segs[], an unknown
 * proc or error code, optinfo missing), or RPCRDMA_ERR_NOSPACE when @cap is
 * below rpcrdma_hdr_encoded_size() (nothing is written then).
 */
RPCRDMA_EXTERN int rpcrdma_hdr_encode(const struct rpcrdma_hdr *hdr, void *buf, size_t cap);

/** The same, appending to an XDR stream (e.g. a scatter list).  Where the
 *  room spans two elements the header is staged in a heap buffer first,
 *  which can also fail with -ENOMEM.  -EINVAL for a NULL @xdr, too. */
RPCRDMA_EXTERN int rpcrdma_hdr_encode_xdr(const struct rpcrdma_hdr *hdr,
					  struct rpcrdma_xdr_stream *xdr);

/* Builders, for senders and tests.  Each returns 0 or -EINVAL / -ENOSPC
 * (-EINVAL also for a @hdr whose counts are past its arrays' capacity, a
 * NULL @hdr, a NULL @seg, or NULL @segs with a non-zero @n). */

/** Clear @hdr (its fields and counts; the array entries past the counts
 *  are left as they were) and set the four fixed words.  Does nothing
 *  when @hdr is NULL. */
RPCRDMA_EXTERN void rpcrdma_hdr_init(struct rpcrdma_hdr *hdr, uint32_t xid, uint32_t vers,
				     uint32_t credit, uint32_t proc);
/** Append one Read list entry. */
RPCRDMA_EXTERN int rpcrdma_hdr_add_read(struct rpcrdma_hdr *hdr, uint32_t position,
					const struct rpcrdma_segment *seg);
/** Append a Write chunk of @n segments to the Write list. */
RPCRDMA_EXTERN int rpcrdma_hdr_add_write(struct rpcrdma_hdr *hdr,
					 const struct rpcrdma_segment *segs, uint32_t n);
/** Set the Reply chunk to @n segments. */
RPCRDMA_EXTERN int rpcrdma_hdr_set_reply(struct rpcrdma_hdr *hdr,
					 const struct rpcrdma_segment *segs, uint32_t n);

/** Segment @i (0-based) of @chunk; NULL when out of range or when @hdr or
 *  @chunk is NULL. */
RPCRDMA_EXTERN const struct rpcrdma_segment *
rpcrdma_hdr_chunk_seg(const struct rpcrdma_hdr *hdr, const struct rpcrdma_chunk *chunk,
		      uint32_t i);

/**
 * rpcrdma_hdr_init_error - the RDMA_ERROR answering a refused header
 * @bad: the refused header as decoded (its xid and vers are echoed)
 * @action: RPCRDMA_HDR_REPLY_* from the decoder's fault
 * @vers_low, @vers_high: our supported range, for ERR_VERS
 * @credit: the credit value to advertise
 *
 * Returns 0, or -EINVAL when @action is not a reply or @hdr or @bad is NULL.
 */
RPCRDMA_EXTERN int rpcrdma_hdr_init_error(struct rpcrdma_hdr *hdr, const struct rpcrdma_hdr *bad,
					  enum rpcrdma_hdr_action action, uint32_t vers_low,
					  uint32_t vers_high, uint32_t credit);

/** "RDMA_MSG", "RDMA_NOMSG", ...; NULL for an unknown value. */
RPCRDMA_EXTERN const char *rpcrdma_proc_name(uint32_t proc);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_HEADER_H */
