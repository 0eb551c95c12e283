/*
 * The responder's send side (svc.h): the core's reply_begin, reply_send and
 * reply_drop, the reply's transport header, RDMA Writes for Write chunks
 * and the Reply chunk, the Send, RDMA_ERROR, and the per-connection send
 * queue with its completions.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace.h"
#include "xprtrdma/svc.h"

/* The reply's Writes and Send are all done (or never went): release.
 * WARNING: the connection may be freed on return. */
static void sreq_tx_done(struct rpcrdma__xsreq *s)
{
	if (s->send_busy || s->writes_left)
		return;
	rpcrdma__xsvc_sreq_release(s);
}

void rpcrdma__xsvc_after_sq(struct rpcrdma__xsconn *sc)
{
	/* Hold the connection while the queues are pumped. */
	sc->sreqs++;
	rpcrdma__xsvc_pump_reads(sc);
	rpcrdma__xsvc_pump_tx(sc);
	sc->sreqs--;
	rpcrdma__xsvc_conn_try_free(sc);
}

static void on_write(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev)
{
	struct rpcrdma__xsreq *s =
	    rpcrdma__container_of(op, struct rpcrdma__xsreq, write_op);
	struct rpcrdma__xsconn *sc = s->conn;

	if (sc->c.ops_out)
		sc->c.ops_out--;
	if (sc->c.sq_used)
		sc->c.sq_used--;
	if (s->writes_left)
		s->writes_left--;
	if (ev->status == RPCRDMA_PST_SUCCESS) {
		sc->svc->st.rdma_write_bytes += ev->byte_len;
		sc->tx_since = rpcrdma__loop_recent_ms(sc->svc->dev.loop);
	} else if (ev->status != RPCRDMA_PST_FLUSHED)
		rpcrdma__xsvc_conn_close(sc);
	sc->sreqs++;
	sreq_tx_done(s);
	sc->sreqs--;
	rpcrdma__xsvc_after_sq(sc);
}

static void on_send(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev)
{
	struct rpcrdma__xsreq *s =
	    rpcrdma__container_of(op, struct rpcrdma__xsreq, send_op);
	struct rpcrdma__xsconn *sc = s->conn;

	if (sc->c.ops_out)
		sc->c.ops_out--;
	if (sc->c.sq_used)
		sc->c.sq_used--;
	s->send_busy = false;
	if (ev->status == RPCRDMA_PST_SUCCESS)
		sc->tx_since = rpcrdma__loop_recent_ms(sc->svc->dev.loop);
	if (ev->status != RPCRDMA_PST_SUCCESS && ev->status != RPCRDMA_PST_FLUSHED)
		rpcrdma__xsvc_conn_close(sc);
	sc->sreqs++;
	sreq_tx_done(s);
	sc->sreqs--;
	rpcrdma__xsvc_after_sq(sc);
}

/* The remote segments of @chunk that carry @len bytes, lengths rewritten
 * (RFC 8166 4.4.6); unused segments get 0.  Returns the count of segments
 * in @out (all of the chunk's), or a negative error. */
static int fill_chunk(const struct rpcrdma_hdr *call, const struct rpcrdma_chunk *c, uint64_t len,
		      struct rpcrdma_segment *out)
{
	uint32_t lens[RPCRDMA_HDR_MAX_SEGS];
	const struct rpcrdma_segment *first = rpcrdma_hdr_chunk_seg(call, c, 0);
	int rc;

	if (!c->nsegs)
		return len ? -EMSGSIZE : 0;
	if (!first || c->nsegs > RPCRDMA_HDR_MAX_SEGS)
		return -EINVAL;
	rc = rpcrdma__write_chunk_fill(first, c->nsegs, len, lens);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < c->nsegs; i++) {
		out[i] = first[i];
		out[i].length = lens[i];
	}
	return (int)c->nsegs;
}

/* RDMA Write of @len bytes at @src into the segments @segs (zero-length
 * ones skipped). */
static int post_chunk_write(struct rpcrdma__xsreq *s, const struct rpcrdma__xbuf *src, size_t len,
			    const struct rpcrdma_segment *segs, uint32_t nsegs)
{
	struct rpcrdma__xsconn *sc = s->conn;
	struct rpcrdma_prov_rseg rs[RPCRDMA_PROV_MAX_RSEGS];
	struct rpcrdma_prov_sge sge = {.addr = src->addr, .length = (uint32_t)len, .mr = src->mr};
	uint32_t n = 0;
	size_t done = 0;
	int rc;

	/* Split by RPCRDMA_PROV_MAX_RSEGS remote segments per operation. */
	for (uint32_t i = 0; i <= nsegs; i++) {
		if (i < nsegs && segs[i].length) {
			rs[n].handle = segs[i].handle;
			rs[n].length = segs[i].length;
			rs[n].offset = segs[i].offset;
			n++;
		}
		if (n && (n == RPCRDMA_PROV_MAX_RSEGS || i == nsegs)) {
			uint64_t bytes = 0;

			for (uint32_t k = 0; k < n; k++)
				bytes += rs[k].length;
			sge.addr = src->addr + done;
			sge.length = (uint32_t)bytes;
			s->write_op.done = on_write;
			rc = rpcrdma__provider_post_write(sc->c.pc, &sge, 1, rs, n, &s->write_op);
			if (rc)
				return rc;
			s->writes_left++;
			sc->c.ops_out++;
			sc->c.sq_used++;
			done += bytes;
			n = 0;
		}
	}
	return done == len ? 0 : -EINVAL;
}

/* The one handle Send With Invalidate may name: the call's chunks must
 * all use the same one (else 0). */
static uint32_t single_handle(const struct rpcrdma_hdr *h)
{
	uint32_t handle = 0;

	for (uint32_t i = 0; i < h->nreads; i++) {
		if (handle && h->reads[i].target.handle != handle)
			return 0;
		handle = h->reads[i].target.handle;
	}
	for (uint32_t i = 0; i < h->nsegs; i++) {
		if (handle && h->segs[i].handle != handle)
			return 0;
		handle = h->segs[i].handle;
	}
	return handle;
}

/* The Send's entries for an inline reply's message after the header at
 * @sge[0]: the stream's bytes, and each lent result where it belongs.
 * Returns the entries in all. */
static unsigned int message_sges(const struct rpcrdma__xsreq *s, struct rpcrdma_prov_sge *sge)
{
	const struct rpcrdma__ddp_resp *d = &s->rddp;
	unsigned int n = 1;
	size_t from = 0;

	for (uint32_t i = 0; i < d->nlent; i++) {
		const struct rpcrdma__ddp_lent *l = &d->lent[i];

		if (l->pos > from)
			sge[n++] = (struct rpcrdma_prov_sge){s->rbuf.addr + from,
							     (uint32_t)(l->pos - from), s->rbuf.mr};
		sge[n++] = (struct rpcrdma_prov_sge){(void *)(uintptr_t)l->data, l->len, l->mr};
		from = l->pos;
	}
	if (s->reply_len > from)
		sge[n++] = (struct rpcrdma_prov_sge){s->rbuf.addr + from,
						     (uint32_t)(s->reply_len - from), s->rbuf.mr};
	return n;
}

static void post_tx(struct rpcrdma__xsreq *s)
{
	struct rpcrdma__xsconn *sc = s->conn;
	struct rpcrdma__xsvc *v = sc->svc;
	struct rpcrdma_prov_sge sge[RPCRDMA__XPRT_SEND_SGES];
	unsigned int nsge = 0, flags = 0;
	uint64_t sent = 0;
	uint32_t inv = 0;
	int rc = 0;

	s->state = SREQ_POSTED;
	/* ORDER: the receives a raised grant promises are posted before the
	 * reply announcing it can reach the requester (RFC 8166 4.3.1). */
	if (s->grant > sc->grant)
		sc->grant = s->grant;
	rpcrdma__xsvc_refill(sc);

	if (s->form != SFORM_ERROR) {
		for (uint32_t i = 0; i < s->rddp.nresults && !rc; i++) {
			const struct rpcrdma__ddp_result *res = &s->rddp.results[i];
			const struct rpcrdma__xbuf src = {(uint8_t *)(uintptr_t)res->src, res->len,
							  res->mr};
			int n;

			if (!res->len)
				continue;
			if (res->own)
				v->st.write_zero_copy_bytes += res->len;
			n = fill_chunk(&s->hdr, &s->hdr.writes[res->chunk], res->len, v->segs);
			rc = n < 0 ? n : post_chunk_write(s, &src, res->len, v->segs, (uint32_t)n);
		}
		if (!rc && s->form == SFORM_LONG) {
			int n = fill_chunk(&s->hdr, &s->hdr.reply, s->reply_len, v->segs);

			rc = n < 0 ? n
				   : post_chunk_write(s, &s->rbuf, s->reply_len, v->segs,
						      (uint32_t)n);
		}
	}
	if (rc)
		goto out_lost;

	sge[nsge].addr = s->sbuf.addr;
	sge[nsge].length = (uint32_t)s->hdr_len;
	sge[nsge++].mr = s->sbuf.mr;
	if (s->form == SFORM_INLINE)
		nsge = message_sges(s, sge);
	/* Send With Invalidate when the requester said it takes it (RFC
	 * 8797) and one handle covers every chunk of the call: it then need
	 * not invalidate that one itself. */
	if (s->form != SFORM_ERROR && sc->c.peer_invalidate &&
	    (v->dev.prov->caps.flags & RPCRDMA_PCAP_SEND_INVALIDATE)) {
		inv = single_handle(&s->hdr);
		if (inv)
			flags |= RPCRDMA_PSEND_INVALIDATE;
	}
	/* ORDER: the Send is posted after the Writes on the same connection;
	 * the provider delivers it only once their data is placed, so the
	 * requester never sees a reply before its data. */
	s->send_op.done = on_send;
	rc = rpcrdma__provider_post_send(sc->c.pc, sge, nsge, flags, inv, &s->send_op);
	if (rc)
		goto out_lost;
	s->send_busy = true;
	sc->c.ops_out++;
	sc->c.sq_used++;
	if (s->counted && sc->in_progress)
		sc->in_progress--;
	s->counted = false;
	v->st.calls_sent++;
	/* Every answer is in its call's version (draft 5.3). */
	if (s->hdr.vers == RPCRDMA_VERSION_TWO)
		v->st.vers_two_msgs++;
	for (unsigned int i = 0; i < nsge; i++)
		sent += sge[i].length;
	v->st.inline_send_bytes += sent;
	v->st.inline_zero_copy_bytes += s->rddp.lent_bytes;
	v->st.credits_granted = s->grant;
	return;

out_lost:
	/* RFC 8166 5.5.4: a responder that cannot send a reply MUST close
	 * the connection.  Writes already posted complete (flushed) first. */
	rpcrdma__xsvc_conn_close(sc);
	sc->sreqs++;
	sreq_tx_done(s);
	sc->sreqs--;
}

void rpcrdma__xsvc_pump_tx(struct rpcrdma__xsconn *sc)
{
	struct rpcrdma__xsreq *s;

	while ((s = sc->tx_head)) {
		if (sc->c.state != RPCRDMA__XCONN_UP) {
			sc->tx_head = s->next;
			if (!sc->tx_head)
				sc->tx_tail = NULL;
			s->next = NULL;
			rpcrdma__xsvc_sreq_release(s);
			continue;
		}
		/* A reply needing more than the whole queue goes alone. */
		if (sc->c.sq_used + s->ops_needed > sc->c.sq_depth && sc->c.sq_used)
			return;
		sc->tx_head = s->next;
		if (!sc->tx_head)
			sc->tx_tail = NULL;
		s->next = NULL;
		post_tx(s);
	}
}

static void queue_tx(struct rpcrdma__xsreq *s)
{
	struct rpcrdma__xsconn *sc = s->conn;

	s->state = SREQ_QUEUED;
	s->next = NULL;
	if (!s->tx_counted) {
		/* What the reply holds until its Writes and Send complete. */
		s->tx_cost = s->hdr_len + s->reply_len + s->rddp.lent_bytes;
		for (uint32_t i = 0; i < s->rddp.nresults; i++)
			s->tx_cost += s->rddp.results[i].len;
		if (!sc->tx_pending)
			sc->tx_since = rpcrdma__loop_recent_ms(sc->svc->dev.loop);
		sc->tx_pending++;
		sc->tx_bytes += s->tx_cost;
		rpcrdma__svc_queued_add(&sc->svc->b, s->tx_cost);
		s->tx_counted = true;
	}
	if (sc->tx_tail)
		sc->tx_tail->next = s;
	else
		sc->tx_head = s;
	sc->tx_tail = s;
	sc->sreqs++;
	rpcrdma__xsvc_pump_tx(sc);
	sc->sreqs--;
	rpcrdma__xsvc_conn_try_free(sc);
}

/*
 * Sends @h alone as the answer to @s (an RDMA_ERROR, or an RDMA_OPTIONAL's
 * answer): no message follows the header.  Returns 0 once queued; else
 * @s is released and the answer lost (-ENOMEM, or the encoder's error).
 */
int rpcrdma__xsvc_send_header_only(struct rpcrdma__xsreq *s, const struct rpcrdma_hdr *h)
{
	struct rpcrdma__xsvc *v = s->conn->svc;
	int n;

	n = rpcrdma__xbuf_reserve(v->dev.prov, &s->sbuf, rpcrdma_hdr_encoded_size(h));
	if (!n)
		n = rpcrdma_hdr_encode(h, s->sbuf.addr, s->sbuf.len);
	if (n < 0) {
		rpcrdma__xsvc_sreq_release(s);
		return n;
	}
	s->hdr_len = (size_t)n;
	s->reply_len = 0;
	s->form = SFORM_ERROR;
	s->ops_needed = 1;
	s->rddp.nresults = 0;
	s->rddp.nlent = 0;
	s->rddp.lent_bytes = 0;
	queue_tx(s);
	return 0;
}

/* Answers the call in @s with RDMA_ERROR (@action from the decoder). */
static void send_error(struct rpcrdma__xsreq *s, enum rpcrdma_hdr_action action, uint32_t low,
		       uint32_t high)
{
	struct rpcrdma__xsconn *sc = s->conn;
	struct rpcrdma__xsvc *v = sc->svc;
	struct rpcrdma_hdr *h = &v->hdr;

	rpcrdma__xsvc_read_phase_end(s);
	s->grant = rpcrdma__credits_grant(sc->credits, s->hdr.credit);
	if (rpcrdma_hdr_init_error(h, &s->hdr, action, low, high, s->grant)) {
		rpcrdma__xsvc_sreq_release(s);
		return;
	}
	if (rpcrdma__xsvc_send_header_only(s, h) == 0) {
		v->st.rdma_errors_sent++;
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_ERR_SENT, sc->c.id, s->hdr.xid,
			       action == RPCRDMA_HDR_REPLY_ERR_VERS    ? RPCRDMA_ERR_VERS
			       : action == RPCRDMA_HDR_REPLY_ERR_CHUNK ? RPCRDMA_ERR_CHUNK
								       : 0,
			       0, "RDMA_ERROR %s sent",
			       action == RPCRDMA_HDR_REPLY_ERR_VERS    ? "ERR_VERS"
			       : action == RPCRDMA_HDR_REPLY_ERR_CHUNK ? "ERR_CHUNK"
								       : "ERR_INVAL_OPTION");
	}
}

void rpcrdma__xsvc_send_error(struct rpcrdma__xsreq *s, enum rpcrdma_hdr_action action)
{
	send_error(s, action, s->conn->svc->vers_low, s->conn->svc->vers_high);
}

void rpcrdma__xsvc_send_vers_error(struct rpcrdma__xsreq *s, uint32_t vers)
{
	send_error(s, RPCRDMA_HDR_REPLY_ERR_VERS, vers, vers);
}

int rpcrdma__xsvc_op_reply_begin(struct rpcrdma__sreq *sreq)
{
	struct rpcrdma__xsreq *s = sreq ? sreq->tpriv : NULL;
	struct rpcrdma__xsconn *sc;
	struct rpcrdma__xsvc *v;
	uint64_t rc_cap = 0;
	size_t room;
	int rc;

	if (!s || s->state != SREQ_CORE)
		return -EINVAL;
	sc = s->conn;
	v = sc->svc;
	if (sc->c.state != RPCRDMA__XCONN_UP)
		return -ENOTCONN;
	/* Room for the largest reply we could send: inline, or as large as
	 * the Reply chunk, or what the core asks for (it then may learn
	 * it fits neither: ERR_CHUNK). */
	if (s->hdr.has_reply) {
		for (uint32_t i = 0; i < s->hdr.reply.nsegs; i++) {
			const struct rpcrdma_segment *seg =
			    rpcrdma_hdr_chunk_seg(&s->hdr, &s->hdr.reply, i);

			if (seg)
				rc_cap += seg->length;
		}
	}
	room = sc->c.thr.send_max;
	/* A Reply chunk is only an offer: what we reserve for it up front is
	 * capped by max_record, so a requester offering huge ones cannot
	 * make each call cost that much (a larger reply asks again). */
	if (rc_cap > v->max_call)
		rc_cap = v->max_call;
	if (rc_cap > room)
		room = rc_cap > RPCRDMA__XPRT_MAX_MSG ? RPCRDMA__XPRT_MAX_MSG : (size_t)rc_cap;
	if (sreq->reply_hint > room)
		room = sreq->reply_hint;
	if (room > RPCRDMA__XPRT_MAX_MSG)
		room = RPCRDMA__XPRT_MAX_MSG;
	rc = rpcrdma__xbuf_reserve(v->dev.prov, &s->rbuf, room);
	/* The reply's header is never longer than the call's: the same
	 * Write list and Reply chunk, an empty Read list, no MSGP fields.
	 * inline_send (68 KiB on ofi) would pin that much per call in
	 * flight for a header of tens of bytes. */
	if (!rc)
		rc = rpcrdma__xbuf_reserve(v->dev.prov, &s->sbuf, s->hdr.hdr_len);
	if (rc)
		return rc;
	/* A second reply_begin starts over. */
	rpcrdma__ddp_resp_release(&s->rddp);
	rpcrdma_xdr_init(&sreq->reply, s->rbuf.addr, room);
	/* No results lent or RDMA Written from the application's memory by a
	 * backchannel's responder: its requests are let go of at destroy
	 * (done frees the results) while the owner's connection, and so a
	 * Send or a Write reading them, may live on (as its requester lends
	 * no arguments, clnt_marshal.c).  Its results are copied. */
	rpcrdma__ddp_resp_init(&s->rddp, v->dev.prov, &s->hdr, &sreq->reply,
			       sreq->done != NULL && !v->partner, !v->partner);
	rpcrdma_xdr_set_ddp(&sreq->reply, &s->rddp.base);
	s->begun = true;
	return 0;
}

/* Builds the reply header for @form in sbuf.  Returns 0 or an error. */
static int encode_reply_hdr(struct rpcrdma__xsreq *s, enum rpcrdma_reply_form form)
{
	struct rpcrdma__xsvc *v = s->conn->svc;
	struct rpcrdma_hdr *h = &v->hdr;
	const struct rpcrdma_hdr *call = &s->hdr;
	int n;

	/* Draft 5.3: the answer is in the version of the call. */
	rpcrdma_hdr_init(h, call->xid, call->vers, s->grant,
			 form == RPCRDMA_REPLY_LONG ? RPCRDMA_PROC_NOMSG : RPCRDMA_PROC_MSG);
	/* Every Write chunk of the call goes back, used or not; an unused
	 * one with zero lengths (RFC 8166 4.4.6.2). */
	for (uint32_t i = 0; i < call->nwrites; i++) {
		uint64_t len = 0;

		for (uint32_t k = 0; k < s->rddp.nresults; k++) {
			if (s->rddp.results[k].chunk == i)
				len = s->rddp.results[k].len;
		}
		n = fill_chunk(call, &call->writes[i], len, v->segs);
		if (n < 0)
			return n;
		n = rpcrdma_hdr_add_write(h, v->segs, (uint32_t)n);
		if (n)
			return n;
	}
	if (form == RPCRDMA_REPLY_LONG) {
		n = fill_chunk(call, &call->reply, s->reply_len, v->segs);
		if (n < 0)
			return n;
		n = rpcrdma_hdr_set_reply(h, v->segs, (uint32_t)n);
		if (n)
			return n;
	}
	n = rpcrdma_hdr_encode(h, s->sbuf.addr, s->sbuf.len);
	if (n < 0)
		return n;
	s->hdr_len = (size_t)n;
	return 0;
}

/*
 * The room reply_begin reserved for a Reply chunk is the requester's
 * offer, which costs it nothing (segments it never registered, up to
 * max_record), and a reply held in it keeps it until its Send completes:
 * for a requester that stops reading, until drain_timeout_ms.  What
 * max_conn_queued and max_queued_total count is the bytes sent, so every
 * call of every connection could pin a 2 MiB registered buffer for a
 * reply of a few bytes, beyond every bound.  As over TCP, a reply that
 * needs less than half of its room (and 4 KiB) moves, before it is
 * queued, to a buffer of its own size, or of what every request keeps
 * when that holds it; the grown one goes back to the pool.  A reply that
 * cannot move keeps its room: no worse than before.
 */
static void trim_room(struct rpcrdma__xsreq *s, size_t need)
{
	struct rpcrdma__xsvc *v = s->conn->svc;
	struct rpcrdma__xbuf small = {0};
	size_t want = need > v->inline_send ? need : v->inline_send;

	if (want > SIZE_MAX / 4 || s->rbuf.len < 2 * want + 4096)
		return;
	if (rpcrdma__xbuf_reserve(v->dev.prov, &small, want))
		return;
	if (need)
		memcpy(small.addr, s->rbuf.addr, need);
	rpcrdma__xbuf_free(&s->rbuf);
	s->rbuf = small;
	v->st.send_room_trimmed++;
}

int rpcrdma__xsvc_op_reply_send(struct rpcrdma__sreq *sreq)
{
	struct rpcrdma__xsreq *s = sreq ? sreq->tpriv : NULL;
	enum rpcrdma_reply_form form;
	struct rpcrdma__xsconn *sc;
	struct rpcrdma__xsvc *v;
	size_t hdr_len = 0;
	int rc;

	if (!s || s->state != SREQ_CORE)
		return -EINVAL;
	sc = s->conn;
	v = sc->svc;
	if (sc->c.state != RPCRDMA__XCONN_UP) {
		rpcrdma__xsvc_sreq_release(s);
		return -ENOTCONN;
	}
	if (!s->begun || s->rddp.error || !rpcrdma__ddp_resp_lent_valid(&s->rddp)) {
		/* No reply to send: the requester would wait for ever. */
		rpcrdma__xsvc_conn_close(sc);
		rpcrdma__xsvc_sreq_release(s);
		return -EINVAL;
	}
	s->reply_len = rpcrdma_xdr_pos(&sreq->reply);
	s->grant = rpcrdma__credits_grant(sc->credits, s->hdr.credit);
	form = rpcrdma__plan_reply(&s->hdr, s->reply_len + s->rddp.lent_bytes, &sc->c.thr,
				   &hdr_len);
	/* Lent results go only inline; a Long Reply is made whole in rbuf,
	 * where each one held its room back. */
	if (s->rddp.nlent && form == RPCRDMA_REPLY_LONG) {
		s->reply_len = rpcrdma__ddp_resp_unlend(&s->rddp, s->rbuf.addr, s->rbuf.len,
							s->reply_len);
		if (!s->reply_len) {
			rpcrdma__xsvc_conn_close(sc);
			rpcrdma__xsvc_sreq_release(s);
			return -EINVAL;
		}
	}
	switch (form) {
	case RPCRDMA_REPLY_INLINE:
		/*
		 * RDMA_MSG:
		 *  - the reply, DDP results taken out into the Write chunks,
		 *    fits the requester's receive buffer with its header.
		 */
		s->form = SFORM_INLINE;
		break;
	case RPCRDMA_REPLY_LONG:
		/*
		 * Long Reply, RDMA_NOMSG:
		 *  - too large to go inline, and the call offered a Reply
		 *    chunk that holds it (RFC 8166 4.5.3: MUST use it).
		 */
		s->form = SFORM_LONG;
		v->st.long_replies++;
		break;
	case RPCRDMA_REPLY_ERR_CHUNK:
	default:
		/*
		 * ERR_CHUNK:
		 *  - the reply fits neither inline nor the Reply chunk (or no
		 *    Reply chunk was offered): no RPC reply is possible for
		 *    this XID (RFC 8166 5.5.3).
		 */
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, sc->c.id, s->hdr.xid,
			       RPCRDMA_ERR_NOSPACE, s->reply_len,
			       "reply of %zu bytes fits neither inline nor a Reply chunk",
			       (size_t)s->reply_len);
		rpcrdma__ddp_resp_release(&s->rddp);
		s->state = SREQ_IDLE;
		trim_room(s, 0); /* an RDMA_ERROR carries no message */
		rpcrdma__xsvc_send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return 0;
	}
	/* ORDER: after unlending, which makes a Long Reply whole in rbuf. */
	trim_room(s, s->reply_len);
	rc = encode_reply_hdr(s, form);
	if (rc || s->hdr_len + (s->form == SFORM_INLINE ? s->reply_len + s->rddp.lent_bytes : 0) >
		      sc->c.thr.send_max) {
		rpcrdma__ddp_resp_release(&s->rddp);
		s->state = SREQ_IDLE;
		rpcrdma__xsvc_send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return 0;
	}
	s->ops_needed = 1 + (s->form == SFORM_LONG ? 1 : 0);
	for (uint32_t i = 0; i < s->rddp.nresults; i++) {
		if (s->rddp.results[i].len)
			s->ops_needed++;
	}
	if (s->ops_needed > sc->c.sq_depth) {
		/*
		 * More Writes than the direction's share of the send queue:
		 * posted together they would take entries of the other
		 * direction's share (RFC 8167: reverse calls must find room
		 * whatever the forward replies do), or fail to post and close
		 * the connection.  No RPC reply is possible for this XID (RFC
		 * 8166 5.5.3).  Only a provider that gives a connection less
		 * of a send queue than asked (op_listen) can get here.
		 */
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, sc->c.id, s->hdr.xid,
			       RPCRDMA_ERR_NOSPACE, s->ops_needed,
			       "reply needs %u send queue entries, its share is %u",
			       s->ops_needed, sc->c.sq_depth);
		rpcrdma__ddp_resp_release(&s->rddp);
		s->state = SREQ_IDLE;
		trim_room(s, 0);
		rpcrdma__xsvc_send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return 0;
	}
	if (s->rddp.nresults)
		v->st.write_chunk_msgs++;
	if (s->rddp.nresults && RPCRDMA__TRACE_ON(RPCRDMA_TRACE_CHUNK)) {
		uint64_t n = 0;

		for (uint32_t i = 0; i < s->rddp.nresults; i++)
			n += s->rddp.results[i].len;
		rpcrdma__trace_emit(RPCRDMA_TRACE_CHUNK, RPCRDMA_TEV_WRITE_CHUNK, sc->c.id,
				    s->hdr.xid, s->rddp.nresults, (int64_t)n,
				    "reply fills %u Write chunks, %llu bytes", s->rddp.nresults,
				    (unsigned long long)n);
	}
	queue_tx(s);
	return 0;
}

void rpcrdma__xsvc_op_reply_lost(struct rpcrdma__sreq *sreq, int err)
{
	struct rpcrdma__xsreq *s = sreq ? sreq->tpriv : NULL;
	struct rpcrdma__xsconn *sc;

	if (!s || s->state != SREQ_CORE)
		return;
	sc = s->conn;
	rpcrdma__xsvc_call_lost(sc, s->hdr.xid, err);
	rpcrdma__xsvc_op_reply_drop(sreq);
}

void rpcrdma__xsvc_op_reply_drop(struct rpcrdma__sreq *sreq)
{
	struct rpcrdma__xsreq *s = sreq ? sreq->tpriv : NULL;
	struct rpcrdma__xsconn *sc;

	if (!s || s->state != SREQ_CORE)
		return;
	sc = s->conn;
	sc->sreqs++;
	rpcrdma__xsvc_sreq_release(s);
	sc->sreqs--;
	/* Its read buffer went back: calls waiting for room may read. */
	rpcrdma__xsvc_after_sq(sc);
}
