/*
 * RPC-over-RDMA decisions, without I/O: how a call or a reply travels, how
 * a call's XDR stream is rebuilt from its Read chunks, how a Write chunk is
 * filled, what the inline thresholds of a connection are, and how credits
 * are accounted.  The connection engine (src/xprtrdma/) asks; this module
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
 * receive size already covers.  A NULL @peer, or a recv_size below 1024,
 * counts as 1024: every receiver must take that much (RFC 8166 4.3.3),
 * and the private data cannot express less.
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
	bool write_chunk;   /* Write chunks will be offered (DDP results) */
	uint32_t write_segs; /* their segments in all (>= write_chunks, else 0) */
	uint32_t write_chunks; /* how many; 0 counts as 1 when write_chunk */
	size_t max_reply;   /* largest reply, Write chunk data excluded; 0: small */
	uint32_t reply_segs; /* segments a Reply chunk would take; 0 counts as 1 */
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
 *
 * Header sizes are exact, the bytes rpcrdma_hdr_encoded_size() gives:
 *  - the call: 16 fixed bytes; the Read list (4 per terminator, 24 per
 *    entry): empty inline, shape->ddp_segs entries for Read chunks, ONE
 *    entry for a Long Call (the engine registers the full call, DDP items
 *    inline, as one region); the Write list (4, plus 8 per Write chunk
 *    and 16 per segment); the Reply chunk (4 absent, 8 + 16 * reply_segs
 *    present).
 *  - the reply as a responder following rpcrdma__plan_reply() sends it:
 *    16 + 4 (no Read list) + the Write list echoed with the same segment
 *    counts + 4 (no Reply chunk) when inline; with the Reply chunk echoed
 *    (8 + 16 * reply_segs instead of 4) for a Long reply.  "Fits" means
 *    header + message <= threshold (rfc5666bis 5.2.4: the Send "MUST NOT
 *    exceed" the receiver's threshold).
 * A Long Call always carries the full call in its one Position-Zero
 * segment, never a reduced call with more Read chunks: its header is then
 * the smallest possible, so it is the form of last resort.
 *
 * Returns 0; -EMSGSIZE when even a Long Call's header does not fit
 * send_max, when the reply's header (inline or Long) cannot fit recv_max
 * (too many Write or Reply segments for the threshold), or when the
 * segments exceed what struct rpcrdma_hdr holds; -EINVAL for an
 * inconsistent shape (reduced_len > full_len, fewer ddp_segs than nddp,
 * DDP segments without DDP items, a Write chunk of no segments or
 * write_segs without a Write chunk).  Do not retry the same shape.
 */
int rpcrdma__plan_call(const struct rpcrdma_call_shape *shape, const struct rpcrdma_inline *thr,
		       struct rpcrdma_call_plan *plan);

/**
 * rpcrdma__plan_results_inline - whether a call's DDP results can come inline
 * @max_reply: the largest whole reply (DDP results included, XDR-padded),
 *	0 when unknown
 * @thr: the connection's thresholds (recv_max: our receive size)
 * @peer_send: the largest Send the responder will post (its RFC 8797
 *	send size, or the version's default when it sent no private data)
 *
 * True when the whole reply fits both our receive buffer and the
 * responder's Send behind the smallest reply header (no Read list, an
 * empty Write list, no Reply chunk): the
 * requester then offers no Write chunk, and the responder, having none,
 * returns its results inline (nfsdirect-00 section 4, RFC 8166 4.5.1), one
 * Send instead of a grant, an RDMA Write and a revoke.  An unknown
 * @max_reply never qualifies.
 */
bool rpcrdma__plan_results_inline(size_t max_reply, const struct rpcrdma_inline *thr,
				  uint32_t peer_send);

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
 * @hdr_len: out (may be NULL), the reply header's exact encoded size
 *
 * Inline when header + reply fit send_max; else the Reply chunk when the
 * call offered one at least @reply_len long; else ERR_CHUNK (RFC 8166
 * 4.5.3 / 5.5.3).  The reply header of each form:
 *  - INLINE: RDMA_MSG, empty Read list, every Write chunk of the call
 *    echoed with its segment count (lengths rewritten by
 *    rpcrdma__write_chunk_fill(), zero when unused), Reply chunk ABSENT
 *    even when the call offered one: an unused Reply chunk returns nothing,
 *    and the Linux client refuses an RDMA_MSG reply whose Reply chunk
 *    carries bytes.
 *  - LONG: RDMA_NOMSG, the same Write list, the Reply chunk echoed with
 *    its segment count and lengths rewritten to the reply's.  Its header
 *    must itself fit send_max, else ERR_CHUNK.
 *  - ERR_CHUNK: RDMA_ERROR / ERR_CHUNK, 20 bytes.  Also the answer when
 *    @call is not an RDMA_MSG/RDMA_NOMSG header or its chunks are not
 *    within its segs[] (a header the decoder did not accept).
 */
enum rpcrdma_reply_form rpcrdma__plan_reply(const struct rpcrdma_hdr *call, size_t reply_len,
					    const struct rpcrdma_inline *thr, size_t *hdr_len);

/**
 * rpcrdma__write_chunk_fill - lengths for a Write chunk carrying @len bytes
 * @segs, @nsegs: the chunk's segments as the requester offered them
 * @lens: out, the length to return for each segment
 *
 * Fills segments in array order; unused segments get 0 (RFC 8166 4.4.6).
 * @len is the data item without XDR round-up: a responder never writes
 * pad bytes into a Write chunk (4.4.6.1).  Returns 0, -EMSGSIZE when the
 * chunk is smaller than @len (@lens then holds every segment full: answer
 * ERR_CHUNK), or -EINVAL when @segs or @lens is NULL with @nsegs > 0.
 */
int rpcrdma__write_chunk_fill(const struct rpcrdma_segment *segs, uint32_t nsegs, uint64_t len,
			      uint32_t *lens);

/*
 * One piece of a rebuilt call: either inline bytes or (part of) one Read
 * chunk.  The pieces, in order, are the whole XDR stream.
 */
struct rpcrdma_rebuild_piece {
	bool chunk;        /* false: inline bytes; true: a Read chunk */
	size_t inline_off; /* inline: offset in the received payload */
	size_t len;        /* bytes (for a chunk: the sum of its segments) */
	uint32_t first;    /* chunk: index of its first read segment */
	uint32_t nsegs;    /* chunk: number of read segments */
	uint32_t pad;      /* zero bytes to add after a chunk (round-up) */
	/*
	 * chunk: where in the chunk's data this piece starts.  Always 0
	 * except for a Position-Zero chunk that other chunks split: its
	 * parts are pieces of that one chunk at increasing chunk_off, each
	 * @len bytes long (read that byte range across its segments).
	 */
	size_t chunk_off;
};

#define RPCRDMA_REBUILD_MAX_PIECES (2 * RPCRDMA_HDR_MAX_READS + 1)

/**
 * rpcrdma__plan_rebuild - lay out a call's XDR stream from its Read list
 * @hdr: the decoded call header (RDMA_MSG or RDMA_NOMSG)
 * @payload_len: bytes of RPC message that came inline (ignored for
 *	RDMA_NOMSG: nothing after its header belongs to the message)
 * @pieces: out, at most RPCRDMA_REBUILD_MAX_PIECES
 * @max_total: largest rebuilt stream accepted
 *
 * Read segments with equal positions form one chunk.  A position counts in
 * the rebuilt stream, so each chunk's inline split point is its position
 * minus the (padded) chunks before it.  Round-up is added after a chunk
 * whose length is not a multiple of 4 (4.4.5.1).  A Position-Zero chunk is
 * allowed only with RDMA_NOMSG and then holds the whole message (and other
 * chunks may follow it).
 *
 * With RDMA_NOMSG the Position-Zero chunk plays the part of the inline
 * payload: with no other chunk it is the only piece; other chunks split it
 * into parts (pieces with chunk_off, see above), and positions count in
 * the rebuilt stream exactly as with RDMA_MSG.  It gets no round-up of its
 * own, like an inline payload: it is a whole RPC message.
 *
 * Returns the number of pieces (0 only for an RDMA_MSG with no payload
 * and no chunks), or RPCRDMA_ERR_BAD_HEADER when the chunks do not fit
 * the payload (the responder answers GARBAGE_ARGS or ERR_CHUNK): a
 * position before the end of the previous chunk, past the end of the
 * inline data, not a multiple of 4 or going backwards; Position Zero with
 * RDMA_MSG; RDMA_NOMSG without a Position-Zero chunk or with one shorter
 * than an XID; any other proc; more reads than struct rpcrdma_hdr holds.
 * Otherwise -EMSGSIZE when the rebuilt stream exceeds @max_total (checked
 * after the structure, so a malformed header is always BAD_HEADER);
 * -EINVAL for a NULL argument.  On error the contents of @pieces are
 * undefined.
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

/** Start a connection: 1 credit (4.3.3), nothing in flight; @requested 0 counts as 1. */
void rpcrdma__credits_init(struct rpcrdma_credits *c, uint32_t requested);
/** True when one more call may be sent now: in_flight < min(granted, requested). */
bool rpcrdma__credits_available(const struct rpcrdma_credits *c);
/** A call was sent. */
void rpcrdma__credits_sent(struct rpcrdma_credits *c);
/**
 * A reply (or RDMA_ERROR) arrived carrying @credit_field: it ends one call
 * and updates the grant, clamped to 1..requested (a grant of 0 would
 * deadlock: treat as 1).  Call it only for a reply that matched a call in
 * flight; with none in flight the count stays 0 (never wraps).
 */
void rpcrdma__credits_reply(struct rpcrdma_credits *c, uint32_t credit_field);
/**
 * A message that takes a receive at the responder but is never answered
 * (an RDMA_ERROR the requester sends) no longer needs its credit: one
 * fewer in flight, the grant unchanged.  With none in flight the count
 * stays 0.
 */
void rpcrdma__credits_returned(struct rpcrdma_credits *c);
/**
 * The connection was lost: every call in flight ended without a reply and
 * the new connection starts from 1 credit (4.3.3).  @requested and
 * max_in_flight_seen are kept.
 */
void rpcrdma__credits_reset(struct rpcrdma_credits *c);

/**
 * Responder side: the grant to put in a reply.  @configured is the server's
 * credit limit, @requested the requester's value; the result is
 * min(@configured, @requested), at least 1 (even for a @configured of 0:
 * a grant of 0 deadlocks).  Granting more than was requested buys nothing
 * (the requester uses the lower value) and would oblige us to keep more
 * receives posted.  The engine must have posted that many receives
 * (plus those for replies in flight) before sending the reply.
 */
uint32_t rpcrdma__credits_grant(uint32_t configured, uint32_t requested);

#endif /* RPCRDMA_PROTO_PLAN_H */
