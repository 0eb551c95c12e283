/*
 * Direct data placement through the XDR hooks (rpcrdma_xdr_ddp_ops): the
 * glue between an upper layer's rpcrdma_xdr_encode_ddp() /
 * rpcrdma_xdr_decode_ddp() and the chunks of RPC-over-RDMA.
 *
 *   - Requester, encoding a call: every DDP-eligible argument leaves the
 *     stream and is recorded; clnt_marshal.c then decides per call whether the
 *     items travel in Read chunks, go back inline, or ride in a Long Call.
 *   - Requester, decoding a reply: the n-th DDP-eligible result resolves
 *     against the n-th Write chunk offered; what the responder placed
 *     there is already in the caller's buffer, and a zero-length chunk
 *     means the result is inline.
 *   - Responder, encoding a reply: each DDP-eligible result takes the next
 *     Write chunk of the call (RFC 8166 5.3.2: "fills in each Write chunk
 *     with a DDP-eligible result until either there are no more results
 *     or no more Write chunks"); one of zero length, or too small for it,
 *     goes back unused and the result comes inline.
 *   - Responder, decoding an RDMA_MSGP call: the padding an RFC 5666-era
 *     requester put before large items is skipped.
 *
 * Nothing here touches the wire or the provider except the responder's
 * result buffers, registered so svc_send.c can RDMA Write from them.
 */
#include <errno.h>
#include <string.h>

#include "xdr/xdr_len.h"
#include "xdr/xdr_room.h"
#include "xprtrdma/ddp.h"

static int call_encode(struct rpcrdma_xdr_ddp *ddp, size_t pos, const void *data, uint32_t len)
{
	struct rpcrdma__ddp_call *d = (struct rpcrdma__ddp_call *)ddp;
	struct rpcrdma__ddp_item *it;

	/*
	 * Why an item stays inline here:
	 *  - it is empty: there is nothing to place;
	 *  - the table is full: further items cost a Read segment each;
	 *  - it is longer than one segment may be.
	 * Everything else is taken out now; whether it really travels in a
	 * Read chunk is decided per call once the whole call is known.
	 */
	if (!len || d->nitems >= RPCRDMA__XPRT_MAX_DDP || len > d->max_len)
		return 0;
	it = &d->items[d->nitems++];
	it->pos = pos;
	it->data = data;
	it->len = len;
	return 1;
}

static int call_decode(struct rpcrdma_xdr_ddp *ddp, size_t pos, void *buf, uint32_t len)
{
	(void)ddp;
	(void)pos;
	(void)buf;
	(void)len;
	return 0;
}

static const struct rpcrdma_xdr_ddp_ops call_ops = {
    .encode = call_encode,
    .decode = call_decode,
};

void rpcrdma__ddp_call_init(struct rpcrdma__ddp_call *d, uint32_t max_len)
{
	d->base.ops = &call_ops;
	d->nitems = 0;
	d->max_len = max_len;
}

static int reply_encode(struct rpcrdma_xdr_ddp *ddp, size_t pos, const void *data, uint32_t len)
{
	(void)ddp;
	(void)pos;
	(void)data;
	(void)len;
	return 0;
}

static int reply_decode(struct rpcrdma_xdr_ddp *ddp, size_t pos, void *buf, uint32_t len)
{
	struct rpcrdma__ddp_reply *d = (struct rpcrdma__ddp_reply *)ddp;
	const struct rpcrdma__wchunk *c;

	(void)pos;
	/* Items beyond the Write list come inline (nfsdirect-00 section 4:
	 * "remaining results will be returned in-line"). */
	if (d->next >= d->nchunks)
		return 0;
	c = &d->chunks[d->next++];
	/* A zero-length chunk asked for this item inline; it is consumed
	 * all the same, so the next item takes the next chunk. */
	if (!c->len)
		return 0;
	if (c->written == 0 && len != 0) {
		/* The responder left the chunk unused and sent the item
		 * inline (not what RFC 8166 5.3.2 asks, but harmless): read
		 * it from the stream. */
		return 0;
	}
	/* RFC 8166 4.4.4.1: the length left in the stream must match what
	 * the chunk carries. */
	if (c->written != len || len > c->len)
		return RPCRDMA_ERR_BAD_VALUE;
	if (len && buf != c->buf) {
		/* The upper layer decodes into another buffer than the one it
		 * offered: correct, at the price of a copy. */
		if (!buf)
			return -EINVAL;
		memmove(buf, c->buf, len);
	}
	return 1;
}

static const struct rpcrdma_xdr_ddp_ops reply_ops = {
    .encode = reply_encode,
    .decode = reply_decode,
};

void rpcrdma__ddp_reply_init(struct rpcrdma__ddp_reply *d, const struct rpcrdma__wchunk *chunks,
			     uint32_t nchunks)
{
	d->base.ops = &reply_ops;
	d->chunks = chunks;
	d->nchunks = nchunks;
	d->next = 0;
}

uint64_t rpcrdma__ddp_chunk_capacity(const struct rpcrdma_hdr *call, uint32_t i)
{
	const struct rpcrdma_chunk *c;
	uint64_t cap = 0;

	if (i >= call->nwrites)
		return 0;
	c = &call->writes[i];
	for (uint32_t s = 0; s < c->nsegs; s++) {
		const struct rpcrdma_segment *seg = rpcrdma_hdr_chunk_seg(call, c, s);

		if (seg)
			cap += seg->length;
	}
	return cap;
}

/* Drops what lending a result holds; the stream is left as it is. */
static void lent_release(struct rpcrdma__ddp_resp *d)
{
	for (uint32_t i = 0; i < d->nlent; i++) {
		if (d->lent[i].own)
			rpcrdma__regcache_put(d->lent[i].own);
		d->lent[i].own = NULL;
	}
	d->nlent = 0;
	d->lent_bytes = 0;
}

/*
 * A result that goes inline: lent to the Send (struct rpcrdma__ddp_lent)
 * when the core keeps its memory until the reply is done, it is at least
 * RPCRDMA__XPRT_LEND_MIN bytes (below, a copy costs less than the
 * device's gather entry), the Send has entries left, and the provider can
 * send from it without registering: any memory where Sends need no
 * registration, else memory the cache already holds registered (declared
 * with rpcrdma_mem_register, or a Write chunk's source before).  A copy
 * of what inline thresholds allow costs less than a registration made
 * for it.  Returns 1 when lent, 0 when the encoder is to copy it.
 */
static int lend_inline(struct rpcrdma__ddp_resp *d, size_t pos, const void *data, uint32_t len)
{
	uint32_t pad = (RPCRDMA_XDR_UNIT - len % RPCRDMA_XDR_UNIT) % RPCRDMA_XDR_UNIT;
	struct rpcrdma__regent *own = NULL;
	struct rpcrdma__ddp_lent *l;
	uint8_t *tail;

	if (!d->zero_copy || !d->xdr || len < RPCRDMA__XPRT_LEND_MIN || d->nlent >= d->lend_max ||
	    rpcrdma_xdr_pos(d->xdr) != pos ||
	    !rpcrdma__xdr_fits_padded(len, rpcrdma_xdr_remaining(d->xdr)))
		return 0;
	if (!(d->prov->caps.flags & RPCRDMA_PCAP_SEND_UNREGISTERED) &&
	    rpcrdma__regcache_find(d->prov, data, len, &own))
		return 0;
	/* The padding stays in the stream; the bytes' room is set aside. */
	if (rpcrdma__xdr_hold_back(d->xdr, len) || !(tail = rpcrdma_xdr_inline(d->xdr, pad))) {
		if (own)
			rpcrdma__regcache_put(own);
		return 0;
	}
	memset(tail, 0, pad);
	l = &d->lent[d->nlent++];
	l->pos = pos;
	l->data = data;
	l->len = len;
	l->own = own;
	l->mr = own ? rpcrdma__regent_mr(own) : NULL;
	d->lent_bytes += len;
	return 1;
}

bool rpcrdma__ddp_resp_lent_valid(const struct rpcrdma__ddp_resp *d)
{
	size_t end;

	if (!d->nlent)
		return true;
	end = rpcrdma_xdr_pos(d->xdr);
	if (d->xdr->len + d->lent_bytes != d->room)
		return false;
	for (uint32_t i = 0; i < d->nlent; i++) {
		if ((i && d->lent[i].pos <= d->lent[i - 1].pos) || d->lent[i].pos > end)
			return false;
	}
	return true;
}

size_t rpcrdma__ddp_resp_unlend(struct rpcrdma__ddp_resp *d, uint8_t *buf, size_t cap, size_t len)
{
	size_t end = len, shift = (size_t)d->lent_bytes, total = len + shift;

	if (total < len || total > cap) {
		lent_release(d);
		return 0;
	}

	/* Last result first: each one's bytes, and the stream after them,
	 * move up by the lengths of the results before. */
	for (uint32_t i = d->nlent; i-- > 0;) {
		const struct rpcrdma__ddp_lent *l = &d->lent[i];

		memmove(buf + l->pos + shift, buf + l->pos, end - l->pos);
		shift -= l->len;
		memcpy(buf + l->pos + shift, l->data, l->len);
		end = l->pos;
	}
	lent_release(d);
	return total;
}

static int resp_encode(struct rpcrdma_xdr_ddp *ddp, size_t pos, const void *data, uint32_t len)
{
	struct rpcrdma__ddp_resp *d = (struct rpcrdma__ddp_resp *)ddp;
	struct rpcrdma__ddp_result *res;
	uint64_t cap;
	int rc;

	/*
	 * Why a result stays inline here (copied, or lent to the Send):
	 *  - the call offered no (more) Write chunks;
	 *  - the next chunk has zero length: the requester asks for this
	 *    result inline, and the chunk is consumed all the same, so the
	 *    next result takes the next one (nfsdirect-00 section 4);
	 *  - the next chunk is too small for it: writing past its end would
	 *    be a Remote Access error that kills the connection (RFC 8166
	 *    5.5.3).  The chunk is consumed all the same, returned unused:
	 *    the requester pairs the n-th result with the n-th chunk as it
	 *    decodes (5.3.2, "each decoded result consumes one entry in the
	 *    Write list"), so a later result placed in it would be read as
	 *    this one.
	 * Otherwise the result leaves the stream, without its XDR padding
	 * (4.4.6.1: "MUST NOT write XDR pad bytes for a Write chunk").
	 */
	if (d->next >= d->call->nwrites)
		return lend_inline(d, pos, data, len);
	cap = rpcrdma__ddp_chunk_capacity(d->call, d->next);
	if (cap == 0) {
		d->next++;
		return lend_inline(d, pos, data, len);
	}
	if (len > cap) {
		d->next++;
		return lend_inline(d, pos, data, len);
	}
	res = &d->results[d->nresults];
	res->chunk = d->next;
	res->len = len;
	res->src = NULL;
	res->mr = NULL;
	res->own = NULL;
	/*
	 * Large results go from the application's memory when it stays put
	 * until the Write is done: a registration (from the instance's cache,
	 * so none when the memory was used before) instead of a copy.  Memory
	 * the provider will not register (read-only mappings on verbs, say) is
	 * copied after all, and so is memory the procedure allocates and frees
	 * at each call (up to RPCRDMA__XPRT_CHURN_COPY_MAX): the cache cannot
	 * keep its registration, and a copy costs less than registering on
	 * the data path.
	 */
	if (len >= RPCRDMA__XPRT_ZC_MIN && d->zero_copy &&
	    !(len <= RPCRDMA__XPRT_CHURN_COPY_MAX
		  ? rpcrdma__regcache_get_steady(d->prov, data, len, &res->own)
		  : rpcrdma__regcache_get(d->prov, data, len, &res->own))) {
		res->src = data;
		res->mr = rpcrdma__regent_mr(res->own);
		d->zero_copy_bytes += len;
	} else if (len) {
		rc = rpcrdma__xbuf_reserve(d->prov, &res->buf, len);
		if (rc) {
			d->error = d->error ? d->error : rc;
			return rc;
		}
		if (d->nresults >= d->bufs_used)
			d->bufs_used = d->nresults + 1;
		memcpy(res->buf.addr, data, len);
		res->src = res->buf.addr;
		res->mr = res->buf.mr;
		d->copied_bytes += len;
	}
	d->nresults++;
	d->next++;
	return 1;
}

static int resp_decode(struct rpcrdma_xdr_ddp *ddp, size_t pos, void *buf, uint32_t len)
{
	(void)ddp;
	(void)pos;
	(void)buf;
	(void)len;
	return 0;
}

static const struct rpcrdma_xdr_ddp_ops resp_ops = {
    .encode = resp_encode,
    .decode = resp_decode,
};

void rpcrdma__ddp_resp_init(struct rpcrdma__ddp_resp *d, struct rpcrdma_provider *prov,
			    const struct rpcrdma_hdr *call, struct rpcrdma_xdr_stream *xdr,
			    bool zero_copy, bool lend)
{
	uint32_t sges = prov->caps.max_send_sge < RPCRDMA__XPRT_SEND_SGES
			    ? prov->caps.max_send_sge
			    : RPCRDMA__XPRT_SEND_SGES;

	d->base.ops = &resp_ops;
	d->prov = prov;
	d->call = call;
	d->xdr = xdr;
	d->room = xdr ? xdr->len : 0;
	d->next = 0;
	d->nresults = 0;
	d->nlent = 0;
	d->lent_bytes = 0;
	d->lend_max = lend && xdr && sges >= 4 ? (sges - 2) / 2 : 0;
	d->error = 0;
	d->zero_copy = zero_copy;
}

void rpcrdma__ddp_resp_release(struct rpcrdma__ddp_resp *d)
{
	lent_release(d);
	for (uint32_t i = 0; i < d->nresults; i++) {
		struct rpcrdma__ddp_result *res = &d->results[i];

		if (res->own)
			rpcrdma__regcache_put(res->own);
		res->own = NULL;
		res->mr = NULL;
		res->src = NULL;
		if (res->buf.len > RPCRDMA__XPRT_KEEP_MAX)
			rpcrdma__xbuf_free(&res->buf);
	}
	d->nresults = 0;
	d->next = 0;
}

size_t rpcrdma__ddp_resp_kept(const struct rpcrdma__ddp_resp *d)
{
	size_t n = 0;

	for (uint32_t i = 0; i < d->bufs_used; i++)
		n += d->results[i].buf.len;
	return n;
}

void rpcrdma__ddp_resp_free(struct rpcrdma__ddp_resp *d)
{
	rpcrdma__ddp_resp_release(d);
	for (uint32_t i = 0; i < RPCRDMA_HDR_MAX_WRITE_CHUNKS; i++)
		rpcrdma__xbuf_free(&d->results[i].buf);
	d->bufs_used = 0;
}

static int msgp_encode(struct rpcrdma_xdr_ddp *ddp, size_t pos, const void *data, uint32_t len)
{
	(void)ddp;
	(void)pos;
	(void)data;
	(void)len;
	return 0;
}

static int msgp_decode(struct rpcrdma_xdr_ddp *ddp, size_t pos, void *buf, uint32_t len)
{
	struct rpcrdma__ddp_msgp *d = (struct rpcrdma__ddp_msgp *)ddp;
	size_t at, pad;

	(void)buf;
	/*
	 * draft-ietf-nfsv4-rpcrdma-01 section 3.5: an opaque of at least
	 * rdma_thresh bytes is preceded by padding that brings its first byte
	 * to a multiple of rdma_align in the receiver's buffer, which starts
	 * with the transport header (as the RFC 5666-era Linux client
	 * computed it).  Smaller items are not padded.
	 */
	if (len < d->thresh)
		return 0;
	/* We can only skip on the stream we handed out; an upper layer that
	 * decodes from a copy cannot be served. */
	if (rpcrdma_xdr_pos(d->xdr) != pos)
		return RPCRDMA_ERR_BAD_VALUE;
	at = d->hdr_len + pos;
	pad = (d->align - at % d->align) % d->align;
	if (pad && rpcrdma_xdr_skip(d->xdr, pad))
		return RPCRDMA_ERR_TRUNCATED;
	return 0;
}

static const struct rpcrdma_xdr_ddp_ops msgp_ops = {
    .encode = msgp_encode,
    .decode = msgp_decode,
};

void rpcrdma__ddp_msgp_init(struct rpcrdma__ddp_msgp *d, struct rpcrdma_xdr_stream *xdr,
			    size_t hdr_len, uint32_t align, uint32_t thresh)
{
	d->base.ops = &msgp_ops;
	d->xdr = xdr;
	d->hdr_len = hdr_len;
	d->align = align;
	d->thresh = thresh;
}
