/*
 * RPC-over-RDMA planning from numbers alone: the inline thresholds of a
 * connection, how a call travels (inline, Read chunks, Long Call) and
 * whether it offers a Reply chunk, how a reply travels (inline, Reply
 * chunk, ERR_CHUNK), how a Write chunk's segments are filled, and how a
 * received call's XDR stream is laid out again from its inline payload and
 * Read chunks.  Credits live in credits.c.
 *
 * Every decision compares exact sizes: a transport header's size is
 * computed here with the same arithmetic as rpcrdma_hdr_encoded_size()
 * (the unit tests hold the two together), so a message that fits is never
 * sent as a chunk and one that does not is never sent inline.
 *
 * The rebuild planner reads numbers that come from the peer: positions,
 * segment lengths and counts.  The decoder has checked their form; this
 * file checks again what it relies on (order, alignment, counts) and does
 * its sums in 64 bits, so a hostile header yields an error, never a wrapped
 * offset.
 */
#include <errno.h>

#include "proto/plan.h"

/* Sizes of header pieces, as RFC 8166 section 5.7 draws them. */
#define WORD RPCRDMA_XDR_UNIT
/* One Read list entry: its "1" discriminator and PHLOO. */
#define READ_ENTRY_SIZE (WORD + RPCRDMA_READ_SEGMENT_SIZE)
/* An RDMA_ERROR / ERR_CHUNK: the fixed words and rdma_err. */
#define ERR_CHUNK_HDR_SIZE (RPCRDMA_HDR_PREFIX_SIZE + WORD)

/* Inline thresholds. */

void rpcrdma__inline_negotiate(const struct rpcrdma_cm_private *peer, uint32_t our_send,
			       uint32_t our_recv, struct rpcrdma_inline *out)
{
	uint32_t peer_recv = peer ? peer->recv_size : RPCRDMA_CM_DEFAULT_INLINE;

	/* Every receiver takes 1024 bytes (4.3.3); RFC 8797 cannot say less. */
	if (peer_recv < RPCRDMA_CM_DEFAULT_INLINE)
		peer_recv = RPCRDMA_CM_DEFAULT_INLINE;
	out->send_max = our_send < peer_recv ? our_send : peer_recv;
	out->recv_max = our_recv;
}

/* Header arithmetic. */

/* A counted array of plain segments: the count and its HLOOs. */
static size_t counted_chunk_size(uint32_t nsegs)
{
	return WORD + (size_t)nsegs * RPCRDMA_SEGMENT_SIZE;
}

static size_t read_list_size(uint32_t nreads)
{
	return (size_t)nreads * READ_ENTRY_SIZE + WORD;
}

/* The Reply chunk field: its discriminator, then the chunk if present. */
static size_t reply_field_size(bool present, uint32_t nsegs)
{
	return WORD + (present ? counted_chunk_size(nsegs) : 0);
}

/* True when @hdr_len header bytes and @len message bytes fit @max. */
static bool fits(size_t hdr_len, size_t len, uint32_t max)
{
	return hdr_len <= max && len <= max - hdr_len;
}

/* Call planning. */

bool rpcrdma__plan_results_inline(size_t max_reply, const struct rpcrdma_inline *thr,
				  uint32_t peer_send)
{
	size_t hdr = RPCRDMA_HDR_PREFIX_SIZE + read_list_size(0) + WORD + reply_field_size(false, 0);

	/* A responder that cannot send the reply inline answers ERR_CHUNK
	 * when it has no chunk to put it in (RFC 8166 4.5.3). */
	return thr && max_reply && fits(hdr, max_reply, thr->recv_max) &&
	       fits(hdr, max_reply, peer_send);
}

static bool shape_valid(const struct rpcrdma_call_shape *s)
{
	if (s->reduced_len > s->full_len)
		return false;
	/* Each DDP item is one Read chunk of at least one segment. */
	if (s->nddp ? s->ddp_segs < s->nddp : s->ddp_segs != 0)
		return false;
	/* A Write chunk is "one or more" segments (4.4.6). */
	if (!s->write_chunk)
		return s->write_segs == 0 && s->write_chunks == 0;
	return s->write_segs >= (s->write_chunks ? s->write_chunks : 1u) &&
	       s->write_chunks <= RPCRDMA_HDR_MAX_WRITE_CHUNKS;
}

int rpcrdma__plan_call(const struct rpcrdma_call_shape *shape, const struct rpcrdma_inline *thr,
		       struct rpcrdma_call_plan *plan)
{
	uint32_t reply_segs;
	size_t write_list, tail, reply_hdr, hdr;
	enum rpcrdma_call_form form;
	bool reply_chunk;

	if (!shape || !thr || !plan || !shape_valid(shape))
		return -EINVAL;
	reply_segs = shape->reply_segs ? shape->reply_segs : 1;
	/* The Write and Reply chunks share segs[] in struct rpcrdma_hdr. */
	if (shape->write_segs > RPCRDMA_HDR_MAX_SEGS ||
	    reply_segs > RPCRDMA_HDR_MAX_SEGS - shape->write_segs)
		return -EMSGSIZE;

	write_list = WORD;
	if (shape->write_chunk) {
		uint32_t nchunks = shape->write_chunks ? shape->write_chunks : 1;

		/* Each chunk: its discriminator and segment count; then the
		 * segments of all of them. */
		write_list += (size_t)nchunks * (WORD + counted_chunk_size(0)) +
			      (size_t)shape->write_segs * RPCRDMA_SEGMENT_SIZE;
	}

	/*
	 * The reply as the responder frames it (rpcrdma__plan_reply): no Read
	 * list, our Write list echoed segment for segment, and no Reply chunk
	 * when it comes inline.  The echo is why a Write chunk can push a
	 * reply over the threshold that would fit alone.
	 */
	reply_hdr = RPCRDMA_HDR_PREFIX_SIZE + read_list_size(0) + write_list +
		    reply_field_size(false, 0);
	reply_chunk = shape->max_reply && !fits(reply_hdr, shape->max_reply, thr->recv_max);
	if (reply_chunk)
		reply_hdr = RPCRDMA_HDR_PREFIX_SIZE + read_list_size(0) + write_list +
			    reply_field_size(true, reply_segs);
	/* Even a Long reply's header must arrive in our receive buffer. */
	if (reply_hdr > thr->recv_max)
		return -EMSGSIZE;

	/* The call header after its Read list: the same for every form. */
	tail = write_list + reply_field_size(reply_chunk, reply_segs);

	/*
	 * - Inline first: chunks cost registrations and RDMA Reads, worth it
	 *   only for data that does not fit anyway.
	 * - Read chunks when the reduced call fits; the decoder caps the Read
	 *   list at RPCRDMA_HDR_MAX_READS entries, so more segments than that
	 *   cannot be described and go Long instead.
	 * - Long Call last: one Position-Zero segment, the smallest header.
	 */
	hdr = RPCRDMA_HDR_PREFIX_SIZE + read_list_size(0) + tail;
	if (fits(hdr, shape->full_len, thr->send_max)) {
		form = RPCRDMA_CALL_INLINE;
	} else if (shape->nddp && shape->ddp_segs <= RPCRDMA_HDR_MAX_READS &&
		   fits(RPCRDMA_HDR_PREFIX_SIZE + read_list_size(shape->ddp_segs) + tail,
			shape->reduced_len, thr->send_max)) {
		form = RPCRDMA_CALL_READ_CHUNKS;
		hdr = RPCRDMA_HDR_PREFIX_SIZE + read_list_size(shape->ddp_segs) + tail;
	} else {
		form = RPCRDMA_CALL_LONG;
		hdr = RPCRDMA_HDR_PREFIX_SIZE + read_list_size(1) + tail;
		if (hdr > thr->send_max)
			return -EMSGSIZE;
	}

	plan->form = form;
	plan->reply_chunk = reply_chunk;
	plan->reply_chunk_len = reply_chunk ? shape->max_reply : 0;
	plan->hdr_len = hdr;
	return 0;
}

/* Reply planning. */

static bool chunk_within(const struct rpcrdma_hdr *hdr, const struct rpcrdma_chunk *c)
{
	return c->first <= hdr->nsegs && c->nsegs <= hdr->nsegs - c->first;
}

/* A call header whose chunk lists can be echoed: what the decoder accepts. */
static bool call_echoable(const struct rpcrdma_hdr *call)
{
	if (call->proc != RPCRDMA_PROC_MSG && call->proc != RPCRDMA_PROC_NOMSG)
		return false;
	if (call->nwrites > RPCRDMA_HDR_MAX_WRITE_CHUNKS || call->nsegs > RPCRDMA_HDR_MAX_SEGS)
		return false;
	for (uint32_t i = 0; i < call->nwrites; i++) {
		if (!chunk_within(call, &call->writes[i]))
			return false;
	}
	return !call->has_reply || chunk_within(call, &call->reply);
}

enum rpcrdma_reply_form rpcrdma__plan_reply(const struct rpcrdma_hdr *call, size_t reply_len,
					    const struct rpcrdma_inline *thr, size_t *hdr_len)
{
	enum rpcrdma_reply_form form;
	size_t write_list, size;
	uint64_t room = 0;

	if (!call || !thr || !call_echoable(call))
		goto out_err_chunk;

	/* The Write list comes back with every chunk and segment (4.4.6). */
	write_list = WORD;
	for (uint32_t i = 0; i < call->nwrites; i++)
		write_list += WORD + counted_chunk_size(call->writes[i].nsegs);

	size = RPCRDMA_HDR_PREFIX_SIZE + read_list_size(0) + write_list + reply_field_size(false, 0);
	if (fits(size, reply_len, thr->send_max)) {
		form = RPCRDMA_REPLY_INLINE;
		goto out;
	}

	if (!call->has_reply)
		goto out_err_chunk;
	/* Nothing follows a Long reply's header, but the header must fit. */
	size = RPCRDMA_HDR_PREFIX_SIZE + read_list_size(0) + write_list +
	       reply_field_size(true, call->reply.nsegs);
	if (size > thr->send_max)
		goto out_err_chunk;
	/* 5.5.3: a Reply chunk too small is caught before writing past it.
	 * At most 256 lengths of 32 bits: the sum cannot wrap 64 bits. */
	for (uint32_t i = 0; i < call->reply.nsegs; i++)
		room += call->segs[call->reply.first + i].length;
	if ((uint64_t)reply_len > room)
		goto out_err_chunk;
	form = RPCRDMA_REPLY_LONG;
	goto out;

out_err_chunk:
	form = RPCRDMA_REPLY_ERR_CHUNK;
	size = ERR_CHUNK_HDR_SIZE;
out:
	if (hdr_len)
		*hdr_len = size;
	return form;
}

/* Write chunks. */

int rpcrdma__write_chunk_fill(const struct rpcrdma_segment *segs, uint32_t nsegs, uint64_t len,
			      uint32_t *lens)
{
	uint64_t remaining = len;

	if (nsegs && (!segs || !lens))
		return -EINVAL;
	/* 4.4.6: fill in array order; what is left over is returned as 0. */
	for (uint32_t i = 0; i < nsegs; i++) {
		uint32_t take = segs[i].length;

		if ((uint64_t)take > remaining)
			take = (uint32_t)remaining;
		lens[i] = take;
		remaining -= take;
	}
	return remaining ? -EMSGSIZE : 0;
}

/* Read-chunk rebuild. */

/*
 * Layout state.  The "source" is what the Read chunks are inserted into:
 * the inline payload for RDMA_MSG, the Position-Zero chunk for
 * RDMA_NOMSG.
 */
struct layout {
	struct rpcrdma_rebuild_piece *pieces;
	int n;
	bool pz_source;    /* the source is the Position-Zero chunk */
	uint32_t pz_nsegs; /* its segments, reads[0..pz_nsegs) */
	uint64_t src_len;  /* bytes in the source */
	uint64_t src_used; /* source bytes laid out so far */
	uint64_t stream;   /* bytes of rebuilt stream laid out so far */
};

static struct rpcrdma_rebuild_piece *next_piece(struct layout *l)
{
	struct rpcrdma_rebuild_piece *p = &l->pieces[l->n++];

	p->chunk = false;
	p->inline_off = 0;
	p->len = 0;
	p->first = 0;
	p->nsegs = 0;
	p->pad = 0;
	p->chunk_off = 0;
	return p;
}

/* Lay out the next @len bytes of the source. */
static void put_source(struct layout *l, uint64_t len)
{
	struct rpcrdma_rebuild_piece *p;

	if (len == 0)
		return;
	p = next_piece(l);
	p->len = (size_t)len;
	if (l->pz_source) {
		p->chunk = true;
		p->first = 0;
		p->nsegs = l->pz_nsegs;
		p->chunk_off = (size_t)l->src_used;
	} else {
		p->inline_off = (size_t)l->src_used;
	}
	l->src_used += len;
	l->stream += len;
}

/*
 * Casts to size_t above and below may truncate only on a 32-bit size_t
 * with a chunk over 4 GiB; the stream then exceeds max_total and the
 * caller never sees the pieces.
 */
static void put_chunk(struct layout *l, uint32_t first, uint32_t nsegs, uint64_t len)
{
	struct rpcrdma_rebuild_piece *p = next_piece(l);

	p->chunk = true;
	p->first = first;
	p->nsegs = nsegs;
	p->len = (size_t)len;
	/* 4.4.5.1: the requester may leave the round-up out; put it back. */
	p->pad = (uint32_t)((WORD - len % WORD) % WORD);
	l->stream += len + p->pad;
}

/* Segments from @i sharing reads[i].position: one chunk (5.3.1). */
static uint32_t chunk_end(const struct rpcrdma_hdr *hdr, uint32_t i, uint64_t *len)
{
	uint32_t pos = hdr->reads[i].position;

	*len = 0;
	while (i < hdr->nreads && hdr->reads[i].position == pos) {
		*len += hdr->reads[i].target.length;
		i++;
	}
	return i;
}

/* What the decoder promises, checked again: the planner's sums rely on it. */
static bool positions_valid(const struct rpcrdma_hdr *hdr)
{
	if (hdr->nreads > RPCRDMA_HDR_MAX_READS)
		return false;
	for (uint32_t i = 0; i < hdr->nreads; i++) {
		if (hdr->reads[i].position % WORD)
			return false;
		if (i && hdr->reads[i].position < hdr->reads[i - 1].position)
			return false;
	}
	return true;
}

int rpcrdma__plan_rebuild(const struct rpcrdma_hdr *hdr, size_t payload_len,
			  struct rpcrdma_rebuild_piece *pieces, size_t max_total)
{
	struct layout l = {.pieces = pieces};
	uint32_t i = 0;

	if (!hdr || !pieces)
		return -EINVAL;
	if (!positions_valid(hdr))
		goto out_bad;

	switch (hdr->proc) {
	case RPCRDMA_PROC_MSG:
		/* The message starts inline: Position Zero means NOMSG. */
		if (hdr->nreads && hdr->reads[0].position == 0)
			goto out_bad;
		l.src_len = payload_len;
		break;
	case RPCRDMA_PROC_NOMSG:
		/* The message is the Position-Zero chunk; anything sent after
		 * the header is not part of it. */
		if (hdr->nreads == 0 || hdr->reads[0].position != 0)
			goto out_bad;
		i = chunk_end(hdr, 0, &l.src_len);
		/* It must at least hold the XID. */
		if (l.src_len < WORD)
			goto out_bad;
		l.pz_source = true;
		l.pz_nsegs = i;
		break;
	default:
		goto out_bad;
	}

	while (i < hdr->nreads) {
		uint32_t pos = hdr->reads[i].position;
		uint64_t len;
		uint32_t end = chunk_end(hdr, i, &len);

		/* Positions count in the rebuilt stream: the gap up to this
		 * one is source bytes, and there must be that many left. */
		if (pos < l.stream)
			goto out_bad;
		if (pos - l.stream > l.src_len - l.src_used)
			goto out_bad;
		put_source(&l, pos - l.stream);
		put_chunk(&l, i, end - i, len);
		i = end;
	}
	/* Before the rest of the source: stream < 2^32 + 2^38 + 4 here, and
	 * only a source length near 2^64 could carry the sum past 64 bits. */
	if (l.src_len - l.src_used > UINT64_MAX - l.stream)
		goto out_too_big;
	put_source(&l, l.src_len - l.src_used);
	if (l.stream > (uint64_t)max_total)
		goto out_too_big;
	return l.n;

out_bad:
	return RPCRDMA_ERR_BAD_HEADER;
out_too_big:
	return -EMSGSIZE;
}
