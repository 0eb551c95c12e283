/*
 * The requester's reply handling (clnt.h): a receive completes, its
 * header is checked against what the call offered, the call is fenced and
 * only then completed to the core (RFC 8166 5.4.1); Send completions.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/version.h"
#include "common/trace.h"
#include "xprtrdma/clnt.h"

/* Checks the segments a responder returned against those offered: same
 * count and handles, no length grown, filled in order (RFC 8166 4.4.6). */
static int check_returned(const struct rpcrdma_hdr *h, const struct rpcrdma_chunk *c,
			  const struct rpcrdma_segment *offered, uint32_t n, uint64_t *total)
{
	bool short_seen = false;

	*total = 0;
	if (c->nsegs != n)
		return RPCRDMA_ERR_BAD_HEADER;
	for (uint32_t i = 0; i < n; i++) {
		const struct rpcrdma_segment *s = rpcrdma_hdr_chunk_seg(h, c, i);

		if (!s || s->handle != offered[i].handle || s->length > offered[i].length)
			return RPCRDMA_ERR_BAD_HEADER;
		if (short_seen && s->length)
			return RPCRDMA_ERR_BAD_HEADER;
		if (s->length < offered[i].length)
			short_seen = true;
		*total += s->length;
	}
	return 0;
}

/* Checks the reply header @h against what call @x offered.  Returns NULL,
 * or the rule it breaks, in words, for the trace and
 * rpcrdma_call_strerror(). */
static const char *check_reply(struct rpcrdma__xreq *x, const struct rpcrdma_hdr *h)
{
	uint64_t total;

	/* Version One responders send no Read chunks. */
	if (h->nreads)
		return "it carries a Read list, which no reply may";
	x->written = 0;
	/* Every Write chunk comes back, used or not (4.4.6.2); a responder
	 * that drops the list entirely wrote nothing. */
	if (h->nwrites) {
		if (h->nwrites != x->nwch)
			return "its Write list has another number of chunks than the call offered";
		for (uint32_t i = 0; i < x->nwch; i++) {
			struct rpcrdma__wchunk *c = &x->wch[i];

			if (check_returned(h, &h->writes[i], &x->wseg[c->seg0], c->nsegs,
					   &c->written))
				return "a Write chunk comes back with other segments than "
				       "offered, longer ones, or filled out of order";
			x->written += c->written;
		}
	} else {
		for (uint32_t i = 0; i < x->nwch; i++)
			x->wch[i].written = 0;
	}
	if (h->proc == RPCRDMA_PROC_MSG) {
		x->rep_in_rbuf = false;
		x->rep_off = h->hdr_len;
		x->rep_len = h->payload_len;
		return NULL;
	}
	/* RDMA_NOMSG: the message is in our Reply chunk. */
	if (!(x->chunks & XREQ_CH_REPLY))
		return "RDMA_NOMSG, but the call offered no Reply chunk";
	if (!h->has_reply || check_returned(h, &h->reply, x->rseg, x->rsegs, &total) ||
	    total > x->rbuf.len)
		return "the Reply chunk comes back with other segments than offered, or "
		       "longer ones";
	if (total < 4)
		return "the Reply chunk holds less than an XID";
	{
		uint32_t xid;

		/* RFC 8166 5.2.1, RFC 8167 5.2: the reply in the chunk starts
		 * with the XID its header carries (which found @x).  A
		 * requester answers nothing: the call fails. */
		memcpy(&xid, x->rbuf.addr, 4);
		if (be32toh(xid) != x->xid)
			return "the message in the Reply chunk has another XID";
	}
	x->rep_in_rbuf = true;
	x->rep_off = 0;
	x->rep_len = (size_t)total;
	return NULL;
}

/* Posts @x's Send again, its header now in the connection's version
 * (RDMA_MSG and RDMA_NOMSG are laid out alike in both versions, so only
 * rdma_vers changes).  The grants of the first try still stand, and they
 * were made for the connection the first Send went on: never on another
 * (a lost connection's calls go again through the core, granted anew). */
void rpcrdma__xclnt_resend(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x)
{
	uint32_t vers_be = htobe32(t->conn.vers);
	int rc = -ENOTCONN;

	memcpy(x->sbuf.addr + 4, &vers_be, sizeof(vers_be));
	if (t->conn.state == RPCRDMA__XCONN_UP && x->gen == t->conn.gen &&
	    t->conn.sq_used < t->conn.sq_depth) {
		x->send_op.done = rpcrdma__xclnt_on_send;
		rc = rpcrdma__provider_post_send(t->conn.pc, x->sge, x->nsge, 0, 0, &x->send_op);
	}
	if (rc) {
		x->state = XREQ_FAILED;
		x->fail_err = rc == -ENOTCONN ? -ECONNRESET : rc;
		rpcrdma__xclnt_req_fence(t, x);
		return;
	}
	rpcrdma__xclnt_req_posted(t, x);
	t->st.calls_sent++;
}

/*
 * Any answer to call @x (a reply or an RDMA_ERROR) ends it at the
 * responder: its credit is free again, and the grant the answer carries is
 * the new limit.  A call the core no longer waits for (and did not tell us
 * of) is answered, but to nobody.
 */
void rpcrdma__xclnt_reply_arrived(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x,
				  const struct rpcrdma_hdr *h)
{
	if (x->creq && t->cb->find(t->cb_ctx, h->xid) != x->creq) {
		x->creq = NULL;
		t->norphans++;
	}
	rpcrdma__credits_reply(&t->cr, h->credit);
	if (t->st.credits_granted != t->cr.granted)
		RPCRDMA__TRACE(RPCRDMA_TRACE_CREDIT, RPCRDMA_TEV_CREDIT_GRANT, t->conn.id, h->xid,
			       t->cr.granted, t->st.credits_granted, "grant %u (was %llu)",
			       t->cr.granted, (unsigned long long)t->st.credits_granted);
	t->st.credits_granted = t->cr.granted;
}

/* Bytes of Reply chunk call @x offered; 0: none. */
static uint32_t reply_chunk_offered(const struct rpcrdma__xreq *x)
{
	uint64_t n = 0;

	if (!(x->chunks & XREQ_CH_REPLY))
		return 0;
	for (uint32_t i = 0; i < x->rsegs; i++)
		n += x->rseg[i].length;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* The answer @h to call @x, in @r, ends the call: an aborted call's only
 * freed its credit; an RDMA_ERROR or a reply that does not match what the
 * call offered fails it; a good one is held.  Each way the call's grants
 * are revoked before the core hears of it. */
static void reply_complete(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x,
			   struct rpcrdma__xrecv *r, const struct rpcrdma_hdr *h)
{
	const char *why;

	rpcrdma__xclnt_reply_arrived(t, x, h);
	t->st.calls_received++;
	if (!x->creq) {
		/* Aborted: already fenced; only the credit mattered. */
		if (t->norphans)
			t->norphans--;
		x->state = XREQ_DEAD;
		rpcrdma__xclnt_req_repost(t, r);
		rpcrdma__xclnt_req_fence(t, x); /* a no-op unless it was never fenced */
		return;
	}
	if (h->proc == RPCRDMA_PROC_ERROR) {
		t->st.rdma_errors_received++;
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_ERR_RECEIVED, t->conn.id, h->xid,
			       h->err, 0, "RDMA_ERROR %s: the responder refused the call",
			       h->err == RPCRDMA_ERR_CHUNK          ? "ERR_CHUNK"
			       : h->err == RPCRDMA_ERR_INVAL_OPTION ? "ERR_INVAL_OPTION"
								    : "(unknown code)");
		x->state = XREQ_FAILED;
		x->fail_err = RPCRDMA_ERR_TRANSPORT_ERROR;
		x->creq->cause = (struct rpcrdma__call_cause){
		    .kind = RPCRDMA__CAUSE_RDMA_ERROR,
		    .code = h->err,
		    .vers = h->vers,
		    .offered = reply_chunk_offered(x),
		};
		rpcrdma__xclnt_req_repost(t, r);
		rpcrdma__xclnt_req_fence(t, x);
		return;
	}
	why = check_reply(x, h);
	if (why) {
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, t->conn.id, h->xid,
			       RPCRDMA_ERR_BAD_HEADER, 0,
			       "reply refused: its chunks do not match those the call offered: %s",
			       why);
		t->st.bad_msgs++;
		x->state = XREQ_FAILED;
		x->fail_err = RPCRDMA_ERR_BAD_HEADER;
		x->creq->cause = (struct rpcrdma__call_cause){
		    .kind = RPCRDMA__CAUSE_REPLY_CHUNKS,
		    .what = why,
		};
		rpcrdma__xclnt_req_repost(t, r);
		rpcrdma__xclnt_req_fence(t, x);
		return;
	}
	if (x->rep_in_rbuf)
		t->st.long_replies++;
	t->st.rdma_write_bytes += x->written + (x->rep_in_rbuf ? x->rep_len : 0);
	x->rep = r;
	x->state = XREQ_REPLIED;
	rpcrdma__xclnt_req_fence(t, x);
}

void rpcrdma__xclnt_handle_reply(struct rpcrdma__xclnt *t, struct rpcrdma__xrecv *r,
				 const struct rpcrdma_prov_event *ev)
{
	struct rpcrdma_hdr *h = &t->hdr;
	struct rpcrdma_hdr_fault fault;
	struct rpcrdma__xreq *x;

	if (rpcrdma_hdr_decode(r->buf, r->len, &t->lim, h, &fault)) {
		/* A requester never answers with RDMA_ERROR: two peers must
		 * not trade errors.  The call, if any, times out. */
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, t->conn.id,
			       rpcrdma__trace_xid_of(r->buf, r->len), RPCRDMA_ERR_BAD_HEADER,
			       fault.offset, "reply header refused at byte %zu: %s", fault.offset,
			       fault.reason ? fault.reason : "malformed");
		goto out_bad;
	}
	if (ev->flags & RPCRDMA_PEVF_INVALIDATED)
		t->st.remote_invalidations++;
	switch (h->proc) {
	case RPCRDMA_PROC_MSG:
	case RPCRDMA_PROC_NOMSG:
	case RPCRDMA_PROC_ERROR:
		break;
	case RPCRDMA_PROC_OPTIONAL:
		/* The decoder takes it in Version Two only; an answer must
		 * still be in the connection's version (draft 5.3), and a
		 * server's reverse requester never receives one.  An opttype
		 * we do not support is a message of the server's own, never
		 * matched against our calls: draft 3.1 wants ERR_INVAL_OPTION
		 * under its XID (clnt_vers.c). */
		if (t->partner || h->vers != t->conn.vers)
			goto out_bad;
		if (h->opttype != RPCRDMA_OPT_PROPERTIES) {
			rpcrdma__xclnt_req_repost(t, r);
			rpcrdma__xclnt_optional_unsupported(t, h);
			return;
		}
		/* Ours: only as the answer to our properties exchange. */
		if (t->props_out)
			break;
		goto out_bad;
	default:
		/* RDMA_DONE, RDMA_MSGP, anything else: not a reply. */
		goto out_bad;
	}
	if (h->proc == RPCRDMA_PROC_ERROR && h->err == RPCRDMA_ERR_VERS) {
		rpcrdma__xclnt_handle_err_vers(t, r, h);
		return;
	}
	/* Draft 5.3: every answer comes in the version of its call. */
	if (h->vers != t->conn.vers)
		goto out_bad;
	x = rpcrdma__xclnt_tab_take(t, h->xid);
	if (!x)
		goto out_bad;
	/* The first answer in Version Two settles it: its 4096-byte
	 * defaults apply from the next call on, on this connection. */
	if (!t->partner && rpcrdma__vneg_on_reply(&t->vneg, h->vers) == RPCRDMA__VNEG_SETTLED) {
		RPCRDMA__TRACE(RPCRDMA_TRACE_VERS, RPCRDMA_TEV_VERS_SETTLED, t->conn.id, h->xid,
			       h->vers, 0, "settled on Version %u", h->vers);
		rpcrdma__xclnt_apply_version(t);
		t->props_due = true;
	}
	if (x->is_props) {
		rpcrdma__xclnt_props_answered(t, x, h);
		rpcrdma__xclnt_req_repost(t, r);
		return;
	}
	if (h->proc == RPCRDMA_PROC_OPTIONAL) {
		/* An RDMA_OPTIONAL answers no call of ours. */
		rpcrdma__xclnt_tab_add(t, x);
		goto out_bad;
	}
	reply_complete(t, x, r, h);
	return;

out_bad:
	t->st.bad_msgs++;
	rpcrdma__xclnt_req_repost(t, r);
}

void rpcrdma__xclnt_on_recv(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev)
{
	struct rpcrdma__xrecv *r = (struct rpcrdma__xrecv *)op;
	struct rpcrdma__xclnt *t = r->conn ? r->conn->owner : NULL;

	if (!t)
		return;
	if (!rpcrdma__xconn_recv_completed(&t->conn, r, ev))
		return;
	if (ev->status != RPCRDMA_PST_SUCCESS) {
		rpcrdma__xrecv_put(&t->pool, r);
		if (ev->status != RPCRDMA_PST_FLUSHED && t->conn.pc &&
		    t->conn.state == RPCRDMA__XCONN_UP)
			(void)rpcrdma__provider_disconnect(t->conn.pc);
		return;
	}
	t->st.inline_recv_bytes += r->len;
	if (t->bc_host) {
		int dir = rpcrdma__bc_direction(r->buf, r->len, &t->lim, &t->hdr);

		/* RFC 8167: a reverse-direction call is for the callbacks we
		 * host, never matched against our calls (its XID may equal
		 * one of theirs, 2.4).  A message whose direction cannot be
		 * told is dropped, so its credit value is never applied
		 * (4.1).  Without callbacks no server may send calls
		 * (section 6): everything is then taken as a reply, and one
		 * that matches no call is dropped (bad_msgs). */
		/* RDMA_OPTIONAL tells no direction: the requester owns it,
		 * as the answer to its properties exchange or as a message
		 * to answer with ERR_INVAL_OPTION (handle_reply). */
		if (dir == RPCRDMA__DIR_UNKNOWN && t->hdr.proc == RPCRDMA_PROC_OPTIONAL)
			dir = RPCRDMA__DIR_REPLY;
		if (dir == RPCRDMA__DIR_CALL)
			t->bc_host->ops->recv(t->bc_host, r->buf, r->len, ev->flags);
		if (dir != RPCRDMA__DIR_REPLY) {
			if (dir != RPCRDMA__DIR_CALL)
				t->st.bad_msgs++;
			rpcrdma__xclnt_req_repost(t, r);
			rpcrdma__xclnt_maybe_writable(t);
			return;
		}
	}
	rpcrdma__xclnt_handle_reply(t, r, ev);
	/* ORDER: a credit the reply freed goes to the answers the draft
	 * requires first, then to our advisory exchange, then to the core. */
	rpcrdma__xclnt_optans_pump(t);
	if (t->props_due)
		rpcrdma__xclnt_props_start(t);
	rpcrdma__xclnt_maybe_writable(t);
}

void rpcrdma__xclnt_on_send(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev)
{
	struct rpcrdma__xreq *x =
	    rpcrdma__container_of(op, struct rpcrdma__xreq, send_op);
	struct rpcrdma__xclnt *t = x->t;
	bool bad = ev->status != RPCRDMA_PST_SUCCESS && ev->status != RPCRDMA_PST_FLUSHED;

	x->send_busy = false;
	/* A Send of an earlier connection held no slot of this one. */
	if (x->gen == t->conn.gen && t->conn.sq_used)
		t->conn.sq_used--;
	if (x->resend_pending) {
		x->resend_pending = false;
		if (x->creq && x->state == XREQ_SENT && !x->in_table) {
			/* Posted again, or failed and fenced (which may have
			 * freed @x): either way @x is not ours any more. */
			rpcrdma__xclnt_resend(t, x);
			if (bad && t->conn.pc && t->conn.state == RPCRDMA__XCONN_UP)
				(void)rpcrdma__provider_disconnect(t->conn.pc);
			rpcrdma__xclnt_maybe_writable(t);
			return;
		} else if (!x->in_table && x->state == XREQ_SENT) {
			/* Aborted while waiting to go again (already fenced,
			 * and holding no credit): nothing to send. */
			x->state = XREQ_DEAD;
			rpcrdma__xclnt_req_fence(t, x);
			return;
		}
	}
	if (bad && t->conn.pc && t->conn.state == RPCRDMA__XCONN_UP)
		(void)rpcrdma__provider_disconnect(t->conn.pc);
	if (x->fence_after_send)
		rpcrdma__xclnt_send_released(x); /* WARNING: may free @x */
	else
		rpcrdma__xclnt_req_try_free(t, x);
	rpcrdma__xclnt_maybe_writable(t);
}
