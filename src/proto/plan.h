/*
 * RPC-over-RDMA decisions, without I/O: how a call or a reply travels, how
 * a call's XDR stream is rebuilt from its Read chunks, how a Write chunk is
 * filled, what the inline thresholds of a connection are, and how credits
 * are accounted.  The connection engine (src/xprt/) asks; this module
 * answers from numbers alone, so every rule is unit-tested with no RDMA.
 *
 * References: rfc5666bis-04 (RFC 8166) sections 4.3 (credits, inline
 * threshold), 4.4 (chunks, round-up), 4.5 (message forms), 5.3 (chunk lists);
 * RFC 8797 (private data); RFC 8167 section 4 (credits per direction).
 */
#ifndef RPCRDMA_PROTO_PLAN_H
#define RPCRDMA_PROTO_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/cm_private.h"
#include "rpcrdma/header.h"

/* Inline thresholds of one connection, in bytes. */
struct rpcrdma_inline {
	uint32_t send_max; /* largest Send we may post: min(ours, peer's recv) */
	uint32_t recv_max; /* our posted receive size: what the peer may send */
};

/**
 * rpcrdma__inline_negotiate - thresholds once the peer's private data is known
 * @peer: the peer's decoded private data (defaults when it sent none)
 * @our_send, @our_recv: our configured sizes (>= 1024)
 *
 * send_max = min(our_send, peer->recv_size); recv_max = our_recv.
 * The peer's own send size only bounds what it will send us, which our
 * receive size already covers.
 */
void rpcrdma__inline_negotiate(const struct rpcrdma_cm_private *peer, uint32_t our_send,
			       uint32_t our_recv, struct rpcrdma_inline *out);

/* How a call travels (the kernel's rpcrdma_chunktype, requester side). */
enum rpcrdma_call_form {
	RPCRDMA_CALL_INLINE,      /* RDMA_MSG, whole call in the Send */
	RPCRDMA_CALL_READ_CHUNKS, /* RDMA_MSG, DDP items in Read chunks */
	RPCRDMA_CALL_LONG,        /* RDMA_NOMSG, Position-Zero Read chunk */
};

struct rpcrdma_call_shape {
	size_t full_len;    /* the call with every DDP item inline (padded) */
	size_t reduced_len; /* the call with the DDP items taken out */
	uint32_t nddp;      /* DDP items taken out (0: reduced == full) */
	uint32_t ddp_segs;  /* Read segments those items need in all */
	bool write_chunk;   /* a Write chunk will be offered (DDP result) */
	uint32_t write_segs;
	size_t max_reply;   /* largest reply, Write chunk data excluded; 0: small */
};

struct rpcrdma_call_plan {
	enum rpcrdma_call_form form;
	bool reply_chunk;       /* offer a Reply chunk */
	size_t reply_chunk_len; /* its size: the whole largest reply */
	size_t hdr_len;         /* transport header size for this plan */
};

/**
 * rpcrdma__plan_call - choose how a call travels
 *
 * Rules, in order:
 *  - Reply chunk when the largest reply, with its transport header (the
 *    Write list echoed), can exceed our inline receive size (RFC 8166
 *    5.3.3: "MUST provide a Reply chunk whenever the maximum possible size
 *    of the reply is larger than its own inline threshold").
 *  - Inline when the transport header plus the full call fit the peer's
 *    threshold: DDP pays only for data that would not fit.
 *  - Read chunks when the header plus the reduced call fit.
 *  - Otherwise a Long Call: the whole call in a Position-Zero Read chunk.
 * Returns 0, or -EMSGSIZE when even a Long Call's header does not fit
 * (too many Write or Reply segments for the threshold).
 */
int rpcrdma__plan_call(const struct rpcrdma_call_shape *shape, const struct rpcrdma_inline *thr,
		       struct rpcrdma_call_plan *plan);

/* How a reply travels (responder side). */
enum rpcrdma_reply_form {
	RPCRDMA_REPLY_INLINE,    /* RDMA_MSG: Write chunks used as given */
	RPCRDMA_REPLY_LONG,      /* RDMA_NOMSG: the reply in the Reply chunk */
	RPCRDMA_REPLY_ERR_CHUNK, /* fits neither: RDMA_ERROR / ERR_CHUNK */
};

/**
 * rpcrdma__plan_reply - choose how a reply travels
 * @call: the call's decoded header (its Write list is echoed, its Reply
 *	chunk may carry the reply)
 * @reply_len: the reply's RPC message with Write chunk data taken out
 * @thr: the connection's thresholds (send_max is the requester's receive)
 *
 * Inline when header + reply fit send_max; else the Reply chunk when the
 * call offered one at least @reply_len long; else ERR_CHUNK (RFC 8166
 * 4.5.3 / 5.5.3).  Sets *hdr_len to the reply header's size.
 */
enum rpcrdma_reply_form rpcrdma__plan_reply(const struct rpcrdma_hdr *call, size_t reply_len,
					    const struct rpcrdma_inline *thr, size_t *hdr_len);

/**
 * rpcrdma__write_chunk_fill - lengths for a Write chunk carrying @len bytes
 * @segs, @nsegs: the chunk's segments as the requester offered them
 * @lens: out, the length to return for each segment
 *
 * Fills segments in array order; unused segments get 0 (RFC 8166 4.4.6).
 * Returns 0, or -EMSGSIZE when the chunk is smaller than @len.
 */
int rpcrdma__write_chunk_fill(const struct rpcrdma_segment *segs, uint32_t nsegs, uint64_t len,
			      uint32_t *lens);

/* One piece of a rebuilt call: either inline bytes or one Read chunk. */
struct rpcrdma_rebuild_piece {
	bool chunk;        /* false: inline bytes; true: a Read chunk */
	size_t inline_off; /* inline: offset in the received payload */
	size_t len;        /* bytes (for a chunk: the sum of its segments) */
	uint32_t first;    /* chunk: index of its first read segment */
	uint32_t nsegs;    /* chunk: number of read segments */
	uint32_t pad;      /* zero bytes to add after a chunk (round-up) */
};

#define RPCRDMA_REBUILD_MAX_PIECES (2 * RPCRDMA_HDR_MAX_READS + 1)

/**
 * rpcrdma__plan_rebuild - lay out a call's XDR stream from its Read list
 * @hdr: the decoded call header (RDMA_MSG or RDMA_NOMSG)
 * @payload_len: bytes of RPC message that came inline
 * @pieces: out, at most RPCRDMA_REBUILD_MAX_PIECES
 * @max_total: largest rebuilt stream accepted
 *
 * Read segments with equal positions form one chunk.  A position counts in
 * the rebuilt stream, so each chunk's inline split point is its position
 * minus the (padded) chunks before it.  Round-up is added after a chunk
 * whose length is not a multiple of 4 (4.4.5.1).  A Position-Zero chunk is
 * allowed only with RDMA_NOMSG and then holds the whole message (and other
 * chunks may follow it).  Returns the number of pieces, or
 * RPCRDMA_ERR_BAD_HEADER when the chunks do not fit the payload (the
 * responder answers GARBAGE_ARGS or ERR_CHUNK), or -EMSGSIZE over
 * @max_total.
 */
int rpcrdma__plan_rebuild(const struct rpcrdma_hdr *hdr, size_t payload_len,
			  struct rpcrdma_rebuild_piece *pieces, size_t max_total);

/*
 * Credits (4.3.1), requester side.  One instance per direction (RFC 8167:
 * forward and backward credits are independent).
 */
struct rpcrdma_credits {
	uint32_t requested; /* what we ask for: our receive capacity */
	uint32_t granted;   /* last grant seen; 1 until the first reply */
	uint32_t in_flight; /* calls sent and not yet answered */
	uint32_t max_in_flight_seen;
};

void rpcrdma__credits_init(struct rpcrdma_credits *c, uint32_t requested);
/** True when one more call may be sent now: in_flight < min(granted, requested). */
bool rpcrdma__credits_available(const struct rpcrdma_credits *c);
/** A call was sent. */
void rpcrdma__credits_sent(struct rpcrdma_credits *c);
/**
 * A reply (or RDMA_ERROR) arrived carrying @credit_field: it ends one call
 * and updates the grant, clamped to 1..requested (a grant of 0 would
 * deadlock: treat as 1).
 */
void rpcrdma__credits_reply(struct rpcrdma_credits *c, uint32_t credit_field);
/** A call ended without a reply (connection loss resets to 1 credit). */
void rpcrdma__credits_reset(struct rpcrdma_credits *c);

/**
 * Responder side: the grant to put in a reply.  @configured is the server's
 * credit limit, @requested the requester's value; the result is at least 1
 * and at most @configured.  The engine must have posted that many receives
 * (plus those for replies in flight) before sending the reply.
 */
uint32_t rpcrdma__credits_grant(uint32_t configured, uint32_t requested);

#endif /* RPCRDMA_PROTO_PLAN_H */
