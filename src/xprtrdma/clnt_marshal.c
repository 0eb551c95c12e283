/*
 * The requester's marshalling (clnt.h): a call from the core's stream to
 * a posted Send: measure, plan (rpcrdma__plan_call), Read list or Long
 * Call, Write list, Reply chunk, the Send's SGEs, the counters.  Grants
 * are made here and revoked by the call's fence (clnt_calls.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/version.h"
#include "common/trace.h"
#include "xprtrdma/clnt.h"

/* Tracing CHUNK: what a call that just left carries. */
static void trace_call_chunks(const struct rpcrdma__xclnt *t, const struct rpcrdma__xreq *x,
			      const struct rpcrdma_hdr *h)
{
	uint64_t rbytes = 0, wbytes = 0;

	for (uint32_t i = 0; i < h->nreads; i++)
		rbytes += h->reads[i].target.length;
	for (uint32_t i = 0; i < x->wsegs; i++)
		wbytes += x->wseg[i].length;
	if (x->chunks & XREQ_CH_LONG)
		rpcrdma__trace_emit(RPCRDMA_TRACE_CHUNK, RPCRDMA_TEV_LONG_CALL, t->conn.id, x->xid,
				    (int64_t)rbytes, 0,
				    "Long Call: %llu bytes in a Position-Zero Read chunk",
				    (unsigned long long)rbytes);
	else if (x->chunks & XREQ_CH_READ)
		rpcrdma__trace_emit(RPCRDMA_TRACE_CHUNK, RPCRDMA_TEV_READ_CHUNK, t->conn.id, x->xid,
				    (int64_t)rbytes, 0, "%u Read segments, %llu bytes", h->nreads,
				    (unsigned long long)rbytes);
	if (x->chunks & XREQ_CH_WRITE)
		rpcrdma__trace_emit(RPCRDMA_TRACE_CHUNK, RPCRDMA_TEV_WRITE_CHUNK, t->conn.id,
				    x->xid, x->nwch, (int64_t)wbytes,
				    "offers %u Write chunks, %llu bytes", x->nwch,
				    (unsigned long long)wbytes);
	if (x->chunks & XREQ_CH_REPLY) {
		uint64_t n = 0;

		for (uint32_t i = 0; i < x->rsegs; i++)
			n += x->rseg[i].length;
		rpcrdma__trace_emit(RPCRDMA_TRACE_CHUNK, RPCRDMA_TEV_REPLY_CHUNK, t->conn.id,
				    x->xid, (int64_t)n, 0, "offers a Reply chunk of %llu bytes",
				    (unsigned long long)n);
	}
	if (x->ngrants)
		rpcrdma__trace_emit(RPCRDMA_TRACE_CHUNK, RPCRDMA_TEV_GRANT, t->conn.id, x->xid,
				    x->ngrants, 0, "%u memory grants for the responder",
				    x->ngrants);
}

int rpcrdma__xclnt_op_call_begin(struct rpcrdma__clnt_transport *tt, struct rpcrdma__creq *creq)
{
	struct rpcrdma__xclnt *t = xclnt_of(tt);
	struct rpcrdma__xreq *x;
	size_t room;
	int rc;

	if (!creq)
		return -EINVAL;
	if (t->conn.state != RPCRDMA__XCONN_UP)
		return -ENOTCONN;
	if (!rpcrdma__xclnt_can_send(t)) {
		if (!t->want_writable && !rpcrdma__credits_available(&t->cr))
			RPCRDMA__TRACE(RPCRDMA_TRACE_CREDIT, RPCRDMA_TEV_CREDIT_STALL, t->conn.id,
				       0, t->cr.in_flight, t->cr.granted,
				       "calls wait for a credit: %u in flight, %u granted",
				       t->cr.in_flight, t->cr.granted);
		t->want_writable = true;
		return -EAGAIN;
	}
	x = rpcrdma__xclnt_req_get(t);
	if (!x)
		return -ENOMEM;
	room = creq->send_hint > t->inline_send ? creq->send_hint : t->inline_send;
	if (room > RPCRDMA__XPRT_MAX_MSG)
		room = RPCRDMA__XPRT_MAX_MSG;
	rc = rpcrdma__xbuf_reserve(t->dev.prov, &x->msg, room);
	if (!rc)
		rc = rpcrdma__xbuf_reserve(t->dev.prov, &x->sbuf, t->inline_send);
	if (rc) {
		x->state = XREQ_IDLE;
		rpcrdma__xclnt_req_try_free(t, x);
		return rc;
	}
	x->creq = creq;
	x->xid = creq->xid;
	x->state = XREQ_BEGUN;
	x->ngrants = 0;
	x->nown = 0;
	x->wch_bounced = 0;
	x->chunks = 0;
	x->wsegs = x->rsegs = 0;
	x->nwch = 0;
	x->rep = NULL;
	x->written = 0;
	x->fail_err = 0;
	rpcrdma_xdr_init(&creq->send, x->msg.addr, room);
	rpcrdma__ddp_call_init(&x->cddp, t->seg_max);
	rpcrdma_xdr_set_ddp(&creq->send, &x->cddp.base);
	creq->tpriv = x;
	return 0;
}

/* Grants the responder @access to [addr, addr + len) in segments. */
static int grant_region(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x,
			struct rpcrdma_prov_mr *mr, void *addr, uint64_t len, unsigned int access,
			struct rpcrdma_segment *segs, uint32_t maxsegs, uint32_t *nsegs)
{
	uint8_t *p = addr;

	*nsegs = 0;
	while (len) {
		uint32_t n = len > t->seg_max ? t->seg_max : (uint32_t)len;
		struct rpcrdma_prov_rseg rs;
		int rc;

		if (*nsegs >= maxsegs || x->ngrants >= RPCRDMA__XPRT_MAX_GRANTS)
			return -EMSGSIZE;
		rc = rpcrdma__provider_grant(t->conn.pc, mr, p, n, access, &x->grants[x->ngrants].g,
					     &rs);
		if (rc)
			return rc;
		x->grants[x->ngrants].handle = rs.handle;
		x->ngrants++;
		segs[*nsegs].handle = rs.handle;
		segs[*nsegs].length = rs.length;
		segs[*nsegs].offset = rs.offset;
		(*nsegs)++;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * A registration of a caller's buffer for this call: from the instance's
 * cache, so a buffer used before costs none (regcache.c).  Memory the
 * caller allocates and frees at each call churns: the cache cannot keep
 * its registration.  Up to RPCRDMA__XPRT_CHURN_COPY_MAX it goes through
 * @bounce, a pooled buffer registered once (*@copy set; the caller copies
 * in or out), as the server does with results (ddp.c).
 */
static int own_reg(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x, const void *addr, size_t len,
		   struct rpcrdma__xbuf *bounce, struct rpcrdma_prov_mr **mr, void **at, bool *copy)
{
	struct rpcrdma__regent *e;
	int rc;

	*copy = false;
	*at = (void *)(uintptr_t)addr;
	if (x->nown >= sizeof(x->own) / sizeof(x->own[0]))
		return -EMSGSIZE;
	/* The provider never writes through a local registration; remote
	 * writes are what the grant (REMOTE_WRITE only for the Write chunk)
	 * allows. */
	if (len <= RPCRDMA__XPRT_CHURN_COPY_MAX) {
		rc = rpcrdma__regcache_get_steady(t->dev.prov, addr, len, &e);
		if (rc == -EAGAIN) {
			rc = rpcrdma__xbuf_reserve(t->dev.prov, bounce, len);
			if (rc)
				return rc;
			t->st.churn_copy_bytes += len;
			*mr = bounce->mr;
			*at = bounce->addr;
			*copy = true;
			return 0;
		}
	} else {
		rc = rpcrdma__regcache_get(t->dev.prov, addr, len, &e);
	}
	if (rc)
		return rc;
	x->own[x->nown++] = e;
	*mr = rpcrdma__regent_mr(e);
	return 0;
}

/*
 * Copies the reduced message with the DDP items put back (and their XDR
 * padding) to @dst: the full call.  With @sge, the items whose bit is set
 * in @lent are not copied but get a Send entry of their own, pointing at
 * the caller's memory (with x->lent_mr[i]); the copied runs between them
 * are consecutive in @dst and each gets an entry there.  @sge[*nsge - 1]
 * is the open entry that the first run extends (the header's).
 */
static void rebuild_full(const struct rpcrdma__xreq *x, size_t reduced_len, uint8_t *dst,
			 uint32_t lent, struct rpcrdma_prov_sge *sge, unsigned int *nsge)
{
	static const uint8_t zero[4];
	size_t from = 0;

	for (uint32_t i = 0; i < x->cddp.nitems; i++) {
		const struct rpcrdma__ddp_item *it = &x->cddp.items[i];
		size_t pad = rpcrdma_xdr_align(it->len) - it->len;

		memcpy(dst, x->msg.addr + from, it->pos - from);
		dst += it->pos - from;
		if (lent & (1u << i)) {
			struct rpcrdma_prov_sge *run = &sge[*nsge - 1];

			run->length = (uint32_t)(dst - (uint8_t *)run->addr);
			sge[(*nsge)++] = (struct rpcrdma_prov_sge){(void *)(uintptr_t)it->data,
								   it->len, x->lent_mr[i]};
			sge[(*nsge)++] = (struct rpcrdma_prov_sge){dst, 0, run->mr};
		} else {
			memcpy(dst, it->data, it->len);
			dst += it->len;
		}
		memcpy(dst, zero, pad);
		dst += pad;
		from = it->pos;
	}
	memcpy(dst, x->msg.addr + from, reduced_len - from);
	dst += reduced_len - from;
	if (sge) {
		struct rpcrdma_prov_sge *run = &sge[*nsge - 1];

		run->length = (uint32_t)(dst - (uint8_t *)run->addr);
		if (!run->length)
			(*nsge)--; /* the message ended with a lent item */
	}
}

/*
 * Inline from the caller's memory.  An inline call's DDP items are copied
 * into the Send, except those the provider can read where the caller holds
 * them without a registration made for this call: any memory when Sends
 * need no registration (ofi/tcp), else memory already in the registration
 * cache or declared with rpcrdma_mem_register().  Such an item is lent: its
 * memory must stay put until the Send completes, so the call ends only
 * then (rpcrdma__xclnt_on_send).  Returns the bit mask of lent items.
 */
static uint32_t lend_items(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x)
{
	const struct rpcrdma_prov_caps *caps = &t->dev.prov->caps;
	bool unregistered = caps->flags & RPCRDMA_PCAP_SEND_UNREGISTERED;
	unsigned int max = caps->max_send_sge < RPCRDMA__XPRT_SEND_SGES ? caps->max_send_sge
									: RPCRDMA__XPRT_SEND_SGES;
	unsigned int used = 1; /* the header's run */
	uint32_t lent = 0;

	/* A call given up on must then wait for its Send (abort_wait): only
	 * a core that can be told later lends.  Not a reverse-direction
	 * requester either: its calls are small, and the backchannel lets go
	 * of them while the owner's connection, and so the Send, lives on. */
	if (!t->cb->aborted || t->partner)
		return 0;

	for (uint32_t i = 0; i < x->cddp.nitems; i++) {
		const struct rpcrdma__ddp_item *it = &x->cddp.items[i];
		struct rpcrdma__regent *e;

		/* The item, and a run after it unless it ends the message. */
		if (it->len < RPCRDMA__XPRT_LEND_MIN || used + 2 > max)
			continue;
		x->lent_mr[i] = NULL;
		if (!unregistered) {
			if (x->nown >= sizeof(x->own) / sizeof(x->own[0]) ||
			    rpcrdma__regcache_find(t->dev.prov, it->data, it->len, &e))
				continue;
			x->own[x->nown++] = e;
			x->lent_mr[i] = rpcrdma__regent_mr(e);
		}
		lent |= 1u << i;
		used += 2;
	}
	return lent;
}

/* The largest Send the server will post: its RFC 8797 send size, or the
 * default of the version spoken when it sent no private data. */
static uint32_t peer_send_size(const struct rpcrdma__xconn *c)
{
	return c->peer.present ? c->peer.send_size : rpcrdma__vneg_default_inline(c->vers);
}

/* Bytes of DDP results the Write chunks planned so far can take. */
static uint64_t ddp_total_of(const struct rpcrdma__xreq *x)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < x->nwch; i++)
		total += x->wch[i].len;
	return total;
}

/*
 * Takes the call's Write chunks from the core's request: its one ddp_buf,
 * or its ddp_list.  Segments are counted here, granted in rpcrdma__xclnt_call_send.
 */
static int plan_write_chunks(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x,
			     const struct rpcrdma__creq *creq)
{
	uint32_t segs = 0;

	x->nwch = 0;
	if (creq->ddp_count > RPCRDMA__XPRT_MAX_WCHUNKS)
		return -EMSGSIZE;
	for (unsigned int i = 0; i < creq->ddp_count; i++) {
		x->wch[x->nwch].buf = creq->ddp_list[i].buf;
		x->wch[x->nwch].len = creq->ddp_list[i].buf ? creq->ddp_list[i].len : 0;
		x->nwch++;
	}
	if (!creq->ddp_count && creq->ddp_buf && creq->ddp_len) {
		x->wch[0].buf = (void *)(uintptr_t)creq->ddp_buf;
		x->wch[0].len = creq->ddp_len;
		x->nwch = 1;
	}
	/* No Write chunks when the whole reply, results included, fits our
	 * receive and the server's Send: the results come inline and are
	 * copied once, where a chunk costs a grant, an RDMA Write and a
	 * revoke (the kernel client decides the same way).  Needs max_reply
	 * to cover the results. */
	if (x->nwch && creq->max_reply >= ddp_total_of(x) &&
	    rpcrdma__plan_results_inline(creq->max_reply, &t->conn.thr, peer_send_size(&t->conn)))
		x->nwch = 0;
	for (uint32_t i = 0; i < x->nwch; i++) {
		struct rpcrdma__wchunk *c = &x->wch[i];

		if (c->len > (uint64_t)t->seg_max * RPCRDMA__XPRT_MAX_WSEGS)
			return -EMSGSIZE;
		c->nsegs = c->len ? (uint32_t)((c->len + t->seg_max - 1) / t->seg_max) : 1;
		c->written = 0;
		segs += c->nsegs;
	}
	return segs > RPCRDMA__XPRT_MAX_WSEGS ? -EMSGSIZE : 0;
}

/* The full call's length: the reduced stream plus the DDP items taken out
 * of it (XDR-padded), which must lie in order on XDR units of it. */
static int measure_call(const struct rpcrdma__xreq *x, size_t reduced_len, size_t *full_len)
{
	size_t prev = 0;

	*full_len = reduced_len;
	for (uint32_t i = 0; i < x->cddp.nitems; i++) {
		const struct rpcrdma__ddp_item *it = &x->cddp.items[i];

		/* An upper layer that rewound its stream after an item was
		 * taken leaves items we cannot place. */
		if (it->pos < prev || it->pos > reduced_len || it->pos % RPCRDMA_XDR_UNIT)
			return -EINVAL;
		prev = it->pos;
		*full_len += rpcrdma_xdr_align(it->len);
	}
	return 0;
}

/* Asks the protocol (rpcrdma__plan_call) how the call travels. */
static int plan_call(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x,
		     const struct rpcrdma__creq *creq, size_t reduced_len, size_t full_len,
		     struct rpcrdma_call_plan *plan)
{
	struct rpcrdma_call_shape shape;
	uint64_t ddp_total = 0;
	int rc;

	memset(&shape, 0, sizeof(shape));
	shape.full_len = full_len;
	shape.reduced_len = reduced_len;
	shape.nddp = x->cddp.nitems;
	shape.ddp_segs = x->cddp.nitems; /* each item fits one segment (ddp.c) */
	rc = plan_write_chunks(t, x, creq);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < x->nwch; i++) {
		ddp_total += x->wch[i].len;
		shape.write_segs += x->wch[i].nsegs;
	}
	if (x->nwch) {
		shape.write_chunk = true;
		shape.write_chunks = x->nwch;
	}
	/* creq->max_reply counts the whole reply.  With Write chunks the
	 * DDP results leave it, so the Reply chunk (if any) needs room only
	 * for the rest; a max_reply smaller than the Write chunks is taken
	 * to exclude them already. */
	shape.max_reply = creq->max_reply;
	if (ddp_total && shape.max_reply >= ddp_total)
		shape.max_reply -= ddp_total;
	if (shape.max_reply > RPCRDMA__XPRT_MAX_MSG)
		shape.max_reply = RPCRDMA__XPRT_MAX_MSG;
	shape.reply_segs = 1;
	return rpcrdma__plan_call(&shape, &t->conn.thr, plan);
}

/*
 * RDMA_MSG with Read chunks:
 *  - the full call does not fit inline, the reduced one does;
 *  - each DDP item is one Read chunk at its position in the full stream,
 *    carrying the data without XDR padding (RFC 8166 4.4.5.1): the server
 *    adds the round-up.
 */
static int encode_read_list(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x,
			    struct rpcrdma_hdr *h)
{
	struct rpcrdma_prov_mr *mr;
	size_t prev = 0;
	uint32_t nseg;
	int rc;

	x->chunks |= XREQ_CH_READ;
	for (uint32_t i = 0; i < x->cddp.nitems; i++) {
		const struct rpcrdma__ddp_item *it = &x->cddp.items[i];
		struct rpcrdma_segment seg;
		bool copy;
		void *at;

		rc = own_reg(t, x, it->data, it->len, &x->bounce[i], &mr, &at, &copy);
		if (!rc && copy)
			memcpy(at, it->data, it->len);
		if (!rc)
			rc = grant_region(t, x, mr, at, it->len, RPCRDMA_PACCESS_REMOTE_READ, &seg,
					  1, &nseg);
		if (!rc)
			rc = rpcrdma_hdr_add_read(h, (uint32_t)(it->pos + prev), &seg);
		if (rc)
			return rc;
		prev += rpcrdma_xdr_align(it->len);
	}
	return 0;
}

/*
 * Long Call, RDMA_NOMSG with a Position-Zero Read chunk:
 *  - even the reduced call exceeds the server's threshold;
 *  - the full call travels as one region (the smallest header, plan.h):
 *    our encode buffer when no item was taken out, else a copy with the
 *    items put back.
 */
static int encode_long_call(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x,
			    struct rpcrdma_hdr *h, size_t reduced_len, size_t full_len)
{
	struct rpcrdma_segment seg;
	struct rpcrdma__xbuf *b = &x->msg;
	uint32_t nseg;
	int rc;

	if (full_len > UINT32_MAX)
		return -EMSGSIZE;
	x->chunks |= XREQ_CH_LONG;
	h->proc = RPCRDMA_PROC_NOMSG;
	if (x->cddp.nitems) {
		rc = rpcrdma__xbuf_reserve(t->dev.prov, &x->lbuf, full_len);
		if (rc)
			return rc;
		rebuild_full(x, reduced_len, x->lbuf.addr, 0, NULL, NULL);
		b = &x->lbuf;
	}
	rc = grant_region(t, x, b->mr, b->addr, full_len, RPCRDMA_PACCESS_REMOTE_READ, &seg, 1,
			  &nseg);
	if (!rc)
		rc = rpcrdma_hdr_add_read(h, 0, &seg);
	return rc;
}

/*
 * Write chunks for the DDP results, in the order the results consume them:
 *  - the caller gave a buffer for each, so the server places the result
 *    there directly; sized exactly, no room for XDR padding (RFC 8166
 *    4.4.6.1);
 *  - a zero-length one is a single segment of zeros (nfsdirect-00
 *    section 4): no memory is exposed for it.
 */
static int encode_write_list(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x,
			     struct rpcrdma_hdr *h)
{
	struct rpcrdma_prov_mr *mr;
	uint32_t nseg;
	int rc;

	for (uint32_t i = 0; i < x->nwch; i++) {
		struct rpcrdma__wchunk *c = &x->wch[i];

		c->seg0 = x->wsegs;
		if (c->len) {
			bool copy;
			void *at;

			rc = own_reg(t, x, c->buf, c->len, &x->bounce[RPCRDMA__XPRT_MAX_DDP + i], &mr,
				     &at, &copy);
			if (!rc && copy)
				x->wch_bounced |= 1u << i; /* copied out in req_fenced */
			if (!rc)
				rc = grant_region(t, x, mr, at, c->len, RPCRDMA_PACCESS_REMOTE_WRITE,
						  &x->wseg[c->seg0],
						  RPCRDMA__XPRT_MAX_WSEGS - c->seg0, &nseg);
		} else {
			memset(&x->wseg[c->seg0], 0, sizeof(x->wseg[0]));
			nseg = 1;
			rc = 0;
		}
		if (!rc)
			rc = rpcrdma_hdr_add_write(h, &x->wseg[c->seg0], nseg);
		if (rc)
			return rc;
		c->nsegs = nseg;
		x->wsegs += nseg;
		x->chunks |= XREQ_CH_WRITE;
	}
	return 0;
}

/*
 * Reply chunk: the largest reply, with its header, can exceed our inline
 * receive size (RFC 8166 5.3.3: MUST provide one); it goes with a Write
 * chunk when both apply.
 */
static int encode_reply_chunk(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x,
			      struct rpcrdma_hdr *h, uint64_t len)
{
	int rc;

	rc = rpcrdma__xbuf_reserve(t->dev.prov, &x->rbuf, len);
	if (!rc)
		rc = grant_region(t, x, x->rbuf.mr, x->rbuf.addr, len, RPCRDMA_PACCESS_REMOTE_WRITE,
				  x->rseg, RPCRDMA__XPRT_MAX_WSEGS, &x->rsegs);
	if (!rc)
		rc = rpcrdma_hdr_set_reply(h, x->rseg, x->rsegs);
	if (rc)
		return rc;
	x->chunks |= XREQ_CH_REPLY;
	return 0;
}

/* Encodes the transport header and lays out the Send: the header, then
 * the message inline (the reduced one, or the full one when the planned
 * form is inline and items were taken out), or nothing (Long Call). */
static int build_send_sges(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x, struct rpcrdma_hdr *h,
			   const struct rpcrdma_call_plan *plan, size_t reduced_len,
			   size_t full_len, struct rpcrdma_prov_sge *sge, unsigned int *nsge)
{
	size_t hdr_len;
	int n;

	n = rpcrdma_hdr_encode(h, x->sbuf.addr, x->sbuf.len);
	if (n < 0)
		return n;
	hdr_len = (size_t)n;
	sge[0].addr = x->sbuf.addr;
	sge[0].mr = x->sbuf.mr;
	*nsge = 1;
	x->lent = 0;
	if (plan->form == RPCRDMA_CALL_INLINE && x->cddp.nitems) {
		/* The items go back inline: one copy of small data beats
		 * registering it; larger ones are sent from where they are
		 * when that needs no registration. */
		if (hdr_len + full_len > t->conn.thr.send_max || hdr_len + full_len > x->sbuf.len)
			return -EMSGSIZE;
		x->lent = lend_items(t, x);
		rebuild_full(x, reduced_len, x->sbuf.addr + hdr_len, x->lent, sge, nsge);
	} else {
		size_t body = plan->form == RPCRDMA_CALL_LONG ? 0 : reduced_len;

		/* RFC 8166 5.2: the Send MUST NOT exceed the receiver's
		 * threshold. */
		if (hdr_len + body > t->conn.thr.send_max)
			return -EMSGSIZE;
		sge[0].length = (uint32_t)hdr_len;
		if (body) {
			sge[1].addr = x->msg.addr;
			sge[1].mr = x->msg.mr;
			sge[1].length = (uint32_t)body;
			*nsge = 2;
		}
	}
	return 0;
}

/* A call went out: the counters. */
static void count_call(struct rpcrdma__xclnt *t, const struct rpcrdma__xreq *x,
		       const struct rpcrdma_hdr *h, const struct rpcrdma_prov_sge *sge,
		       unsigned int nsge)
{
	t->st.calls_sent++;
	if (t->conn.vers == RPCRDMA_VERSION_TWO)
		t->st.vers_two_msgs++;
	for (unsigned int i = 0; i < nsge; i++)
		t->st.inline_send_bytes += sge[i].length;
	for (uint32_t i = 0; x->lent && i < x->cddp.nitems; i++) {
		if (x->lent & (1u << i))
			t->st.inline_zero_copy_bytes += x->cddp.items[i].len;
	}
	if (x->chunks & XREQ_CH_LONG)
		t->st.long_calls++;
	else if (x->chunks & XREQ_CH_READ)
		t->st.read_chunk_msgs++;
	else
		t->st.inline_msgs++;
	if (x->chunks & XREQ_CH_WRITE)
		t->st.write_chunk_msgs++;
	if (x->chunks & XREQ_CH_REPLY)
		t->st.reply_chunk_msgs++;
	for (uint32_t i = 0; i < h->nreads; i++)
		t->st.rdma_read_bytes += h->reads[i].target.length;
	if (t->cr.in_flight > t->st.credits_in_use_max)
		t->st.credits_in_use_max = t->cr.in_flight;
}

/* Marshals and posts one call: measure, plan, the chunk lists, the Send. */
int rpcrdma__xclnt_call_send(struct rpcrdma__xclnt *t, struct rpcrdma__creq *creq)
{
	struct rpcrdma__xreq *x = creq ? creq->tpriv : NULL;
	struct rpcrdma_hdr *h = &t->hdr;
	struct rpcrdma_call_plan plan;
	struct rpcrdma_prov_sge sge[RPCRDMA__XPRT_SEND_SGES];
	unsigned int nsge = 0;
	size_t reduced_len, full_len;
	int rc;

	if (!x || x->creq != creq || x->state != XREQ_BEGUN)
		return -EINVAL;
	if (t->conn.state != RPCRDMA__XCONN_UP) {
		rc = -ENOTCONN;
		goto out_fail;
	}
	/* ORDER: the ERR_INVAL_OPTION answers the draft requires, then the
	 * properties exchange, go before the core's next call, which may
	 * come from the very reply that freed a credit and would otherwise
	 * take the last one, every time. */
	if (t->optans_waiting)
		rpcrdma__xclnt_optans_pump(t);
	if (t->props_due)
		rpcrdma__xclnt_props_start(t);
	if (!rpcrdma__xclnt_can_send(t)) {
		t->want_writable = true;
		rc = -EAGAIN;
		goto out_fail;
	}
	reduced_len = rpcrdma_xdr_pos(&creq->send);
	rc = measure_call(x, reduced_len, &full_len);
	if (!rc)
		rc = plan_call(t, x, creq, reduced_len, full_len, &plan);
	if (rc)
		goto out_fail;

	rpcrdma_hdr_init(h, x->xid, t->conn.vers, t->credits, RPCRDMA_PROC_MSG);
	switch (plan.form) {
	case RPCRDMA_CALL_INLINE:
		/* Short message, RDMA_MSG with no Read list: the whole call,
		 * DDP items included, fits the server's inline threshold, so
		 * moving them by RDMA would only add round trips and
		 * registrations. */
		break;
	case RPCRDMA_CALL_READ_CHUNKS:
		rc = encode_read_list(t, x, h);
		break;
	case RPCRDMA_CALL_LONG:
		rc = encode_long_call(t, x, h, reduced_len, full_len);
		break;
	}
	if (!rc)
		rc = encode_write_list(t, x, h);
	if (!rc && plan.reply_chunk)
		rc = encode_reply_chunk(t, x, h, plan.reply_chunk_len);
	if (!rc)
		rc = build_send_sges(t, x, h, &plan, reduced_len, full_len, sge, &nsge);
	if (rc)
		goto out_fail;

	x->send_op.done = rpcrdma__xclnt_on_send;
	rc = rpcrdma__provider_post_send(t->conn.pc, sge, nsge, 0, 0, &x->send_op);
	if (rc) {
		if (rc == -ENOTCONN)
			rc = -EAGAIN; /* the connection is going: the core waits for it */
		goto out_fail;
	}
	memcpy(x->sge, sge, nsge * sizeof(sge[0]));
	x->nsge = nsge;
	x->resend_pending = false;
	if (!t->partner && t->vneg.probing && !t->vneg.probe_sent)
		RPCRDMA__TRACE(RPCRDMA_TRACE_VERS, RPCRDMA_TEV_VERS_PROBE, t->conn.id, x->xid, 2, 0,
			       "Version Two probe sent; other calls wait for its answer");
	if (!t->partner)
		rpcrdma__vneg_sent(&t->vneg);
	rpcrdma__xclnt_req_posted(t, x);
	creq->conn_id = t->conn.id;
	if (RPCRDMA__TRACE_ON(RPCRDMA_TRACE_CHUNK))
		trace_call_chunks(t, x, h);
	count_call(t, x, h, sge, nsge);
	return 0;

out_fail:
	/* The provider's grant queue is full (verbs): like a missing credit,
	 * the core waits for cb->writable, which the revocations and replies
	 * under way will bring. */
	if (rc == -EAGAIN)
		t->want_writable = true;
	/* Whatever was granted is revoked before the memory is reused. */
	rpcrdma__xclnt_send_failed(t, x);
	return rc;
}

int rpcrdma__xclnt_op_call_send(struct rpcrdma__clnt_transport *tt, struct rpcrdma__creq *creq)
{
	struct rpcrdma__xclnt *t = xclnt_of(tt);
	int rc;

	t->api_depth++;
	rc = rpcrdma__xclnt_call_send(t, creq);
	t->api_depth--;
	return rc;
}
