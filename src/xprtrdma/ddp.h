/*
 * The XDR direct-data-placement hooks of both roles (ddp.c): the contexts
 * the requester's marshalling and reply handling, and the responder's
 * receive and send sides, hand rpcrdma_xdr_encode_ddp() and
 * rpcrdma_xdr_decode_ddp().
 */
#ifndef RPCRDMA_XPRT_DDP_H
#define RPCRDMA_XPRT_DDP_H

#include "xprtrdma/xprt.h"


/* A DDP-eligible argument taken out of a call (a Read chunk candidate). */
struct rpcrdma__ddp_item {
	size_t pos; /* XDR position in the reduced stream */
	const void *data;
	uint32_t len;
};

/* Requester, encoding a call: records DDP items. */
struct rpcrdma__ddp_call {
	struct rpcrdma_xdr_ddp base;
	uint32_t nitems;
	uint32_t max_len; /* items longer than this stay inline */
	struct rpcrdma__ddp_item items[RPCRDMA__XPRT_MAX_DDP];
};

/**
 * rpcrdma__ddp_call_init - start recording a call's DDP items
 * @d: the context
 * @max_len: items longer than this stay inline
 */
void rpcrdma__ddp_call_init(struct rpcrdma__ddp_call *d, uint32_t max_len);

/* Requester: one Write chunk a call offered, and what the reply said of it. */
struct rpcrdma__wchunk {
	uint8_t *buf;  /* the caller's memory; NULL for a zero-length chunk */
	size_t len;    /* its room; 0: the result is to come inline */
	uint32_t seg0; /* first of its segments in the call's segment table */
	uint32_t nsegs;
	uint64_t written; /* bytes the responder wrote there */
};

/* Requester, decoding a reply: resolves the n-th DDP item against the n-th
 * Write chunk offered. */
struct rpcrdma__ddp_reply {
	struct rpcrdma_xdr_ddp base;
	const struct rpcrdma__wchunk *chunks;
	uint32_t nchunks;
	uint32_t next; /* chunks the items decoded so far consumed */
};

/**
 * rpcrdma__ddp_reply_init - start resolving a reply's DDP items
 * @d: the context
 * @chunks: the Write chunks the call offered
 * @nchunks: their number
 */
void rpcrdma__ddp_reply_init(struct rpcrdma__ddp_reply *d, const struct rpcrdma__wchunk *chunks,
			     uint32_t nchunks);

/*
 * Responder, encoding a reply: takes DDP results into the call's Write
 * chunks.  A result of at least RPCRDMA__XPRT_ZC_MIN bytes, when the core
 * keeps its memory until the reply is done (struct rpcrdma__sreq done), is
 * written straight from where the application put it, through a
 * registration made for this reply; smaller ones, and every result when
 * the memory is not kept, are copied into a registered buffer that stays
 * with the request slot for the next reply.
 */
#define RPCRDMA__XPRT_ZC_MIN (32u << 10)
/* Copy buffers larger than this are not kept between replies. */
#define RPCRDMA__XPRT_KEEP_MAX (256u << 10)
/* Results up to this size from memory that churns are copied, not
 * registered (regcache.h, rpcrdma__regcache_get_steady): their copy buffer
 * stays with the request slot (RPCRDMA__XPRT_KEEP_MAX), and a copy of that
 * much costs less than pinning it; beyond, the two costs meet. */
#define RPCRDMA__XPRT_CHURN_COPY_MAX RPCRDMA__XPRT_KEEP_MAX

struct rpcrdma__ddp_result {
	uint32_t chunk; /* index in the call's Write list */
	uint32_t len;
	const uint8_t *src;          /* where the Write reads from */
	struct rpcrdma_prov_mr *mr;  /* its registration */
	struct rpcrdma__regent *own; /* the result's own memory (zero copy), or NULL */
	struct rpcrdma__xbuf buf;    /* copy buffer, kept between replies */
};

/*
 * A DDP result that goes inline, lent to the reply's Send: the Send reads
 * it where the application holds it instead of a copy in the stream (as
 * the requester lends its arguments, clnt_marshal.c).  The stream keeps
 * the result's length word and XDR padding, and sets its length aside at
 * its end (rpcrdma__xdr_hold_back), so that a reply that then goes as a
 * Long Reply can take the bytes back in (rpcrdma__ddp_resp_unlend).
 */
struct rpcrdma__ddp_lent {
	size_t pos;                  /* where its bytes belong in the stream */
	const uint8_t *data;
	uint32_t len;
	struct rpcrdma_prov_mr *mr;  /* NULL where Sends need no registration */
	struct rpcrdma__regent *own; /* the registration behind mr, or NULL */
};
/* Each lent result costs the Send two entries (itself, and the stream's
 * bytes after it) besides the header's and the stream's first. */
#define RPCRDMA__DDP_MAX_LENT ((RPCRDMA__XPRT_SEND_SGES - 2u) / 2u)

struct rpcrdma__ddp_resp {
	struct rpcrdma_xdr_ddp base;
	struct rpcrdma_provider *prov;
	const struct rpcrdma_hdr *call;
	struct rpcrdma_xdr_stream *xdr; /* the reply's stream (one buffer) */
	size_t room;                    /* its room when the reply began */
	uint32_t next; /* next unused Write chunk */
	uint32_t nresults;
	uint32_t bufs_used; /* results[] below this may keep a copy buffer */
	struct rpcrdma__ddp_result results[RPCRDMA_HDR_MAX_WRITE_CHUNKS];
	uint32_t nlent, lend_max;
	uint64_t lent_bytes;
	struct rpcrdma__ddp_lent lent[RPCRDMA__DDP_MAX_LENT];
	int error;                /* first failure (memory, registration) */
	bool zero_copy;           /* the source memory outlives the reply's operations */
	uint64_t zero_copy_bytes; /* counters: bytes written without a copy */
	uint64_t copied_bytes;
};

/**
 * rpcrdma__ddp_resp_init - start a reply (copy buffers of an earlier one are kept)
 * @d: the context
 * @prov: the provider instance that registers result memory
 * @call: the call's header (its Write list)
 * @xdr: the reply's stream, started over one buffer; results that go
 *	inline may be lent (struct rpcrdma__ddp_lent) only through it
 * @zero_copy: the results' memory outlives the reply's operations
 * @lend: results that go inline may be lent
 */
void rpcrdma__ddp_resp_init(struct rpcrdma__ddp_resp *d, struct rpcrdma_provider *prov,
			    const struct rpcrdma_hdr *call, struct rpcrdma_xdr_stream *xdr,
			    bool zero_copy, bool lend);
/**
 * rpcrdma__ddp_resp_lent_valid - whether the lent results still fit the
 * stream as encoded: each one's room still held back and its place in
 * order (an encoder that restored a stream saved before one breaks both)
 */
bool rpcrdma__ddp_resp_lent_valid(const struct rpcrdma__ddp_resp *d);
/**
 * rpcrdma__ddp_resp_unlend - put the lent results' bytes into the reply's
 * buffer, where they belong, for a reply that does not go inline
 * @d: the context (rpcrdma__ddp_resp_lent_valid)
 * @buf: the buffer the reply's stream was started on
 * @cap: its size
 * @len: the stream's bytes in it
 *
 * Returns the message's length with them (the results are no longer
 * lent), or 0 when they would not fit (@d not valid).
 */
size_t rpcrdma__ddp_resp_unlend(struct rpcrdma__ddp_resp *d, uint8_t *buf, size_t cap, size_t len);
/**
 * rpcrdma__ddp_resp_release - end a reply
 * @d: the context; registrations made for the reply go, large copy
 *	buffers too -- only once no posted operation reads from them
 */
void rpcrdma__ddp_resp_release(struct rpcrdma__ddp_resp *d);
/**
 * rpcrdma__ddp_resp_free - free everything, kept copy buffers included
 * @d: the context (zeroed before its first use)
 */
void rpcrdma__ddp_resp_free(struct rpcrdma__ddp_resp *d);

/* The bytes of copy buffers @d keeps between calls. */
size_t rpcrdma__ddp_resp_kept(const struct rpcrdma__ddp_resp *d);
/**
 * rpcrdma__ddp_chunk_capacity - bytes a Write chunk of a call can take
 * @call: the call's header
 * @i: the chunk's index in its Write list
 */
uint64_t rpcrdma__ddp_chunk_capacity(const struct rpcrdma_hdr *call, uint32_t i);

/* Responder, decoding an RDMA_MSGP call (accept_msgp): skips the padding
 * the requester put before large DDP-eligible items. */
struct rpcrdma__ddp_msgp {
	struct rpcrdma_xdr_ddp base;
	struct rpcrdma_xdr_stream *xdr; /* the stream handed to the core */
	size_t hdr_len;                 /* transport header before the payload */
	uint32_t align, thresh;
};

/**
 * rpcrdma__ddp_msgp_init - start decoding an RDMA_MSGP call
 * @d: the context
 * @xdr: the stream handed to the core
 * @hdr_len: the transport header's length before the payload
 * @align: the call's alignment
 * @thresh: its padding threshold
 */
void rpcrdma__ddp_msgp_init(struct rpcrdma__ddp_msgp *d, struct rpcrdma_xdr_stream *xdr,
			    size_t hdr_len, uint32_t align, uint32_t thresh);

#endif /* RPCRDMA_XPRT_DDP_H */
