/*
 * The requester's Version Two negotiation (clnt.h): an ERR_VERS answer
 * to the probe, and the transport properties exchange once Version Two is
 * agreed (properties.c; docs/rpcrdma-v2-properties.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/version.h"
#include "common/trace.h"
#include "xprtrdma/clnt.h"

/*
 * RDMA_ERROR/ERR_VERS (draft 5.2; RFC 8166 5.5.1): the responder refused
 * the version our call carried.  While probing, the call goes again in the
 * highest version both ranges share, and a peer found to be Version One is
 * remembered by address; anything else ends the connection.
 */
void rpcrdma__xclnt_handle_err_vers(struct rpcrdma__xclnt *t, struct rpcrdma__xrecv *r,
				    const struct rpcrdma_hdr *h)
{
	enum rpcrdma__vneg_verdict verdict;
	struct rpcrdma__xreq *x = t->partner ? NULL : rpcrdma__xclnt_tab_take(t, h->xid);
	bool peer_is_v1;

	if (!x) {
		t->st.bad_msgs++;
		rpcrdma__xclnt_req_repost(t, r);
		return;
	}
	rpcrdma__xclnt_reply_arrived(t, x, h);
	t->st.rdma_errors_received++;
	RPCRDMA__TRACE(
	    RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_ERR_RECEIVED, t->conn.id, h->xid, RPCRDMA_ERR_VERS, 0,
	    "RDMA_ERROR ERR_VERS: the responder speaks versions %u..%u", h->vers_low, h->vers_high);
	rpcrdma__xclnt_req_repost(t, r);
	verdict = rpcrdma__vneg_on_err_vers(&t->vneg, h->vers_low, h->vers_high, &peer_is_v1);
	if (peer_is_v1)
		rpcrdma__vmemo_mark_v1((const struct sockaddr *)&t->dst, t->dstlen);
	if (verdict == RPCRDMA__VNEG_RETRY) {
		t->st.vers_fallbacks++;
		RPCRDMA__TRACE(RPCRDMA_TRACE_VERS, RPCRDMA_TEV_VERS_FALLBACK, t->conn.id, h->xid, 1,
			       t->vneg.vers,
			       "the probe was refused (ERR_VERS): call sent again in Version %u",
			       t->vneg.vers);
		t->conn.vers = t->vneg.vers;
		rpcrdma__xclnt_apply_version(t);
		if (!x->creq) {
			/* Aborted meanwhile: nothing to send again. */
			if (t->norphans)
				t->norphans--;
			x->state = XREQ_DEAD;
			rpcrdma__xclnt_req_fence(t, x);
			return;
		}
		/* ORDER: the Send buffer is ours again only once the first
		 * Send completed. */
		if (x->send_busy)
			x->resend_pending = true;
		else
			rpcrdma__xclnt_resend(t, x);
		return;
	}
	/* No version in common, or ERR_VERS for a version already agreed:
	 * the call fails and the connection ends. */
	if (!x->creq) {
		if (t->norphans)
			t->norphans--;
		x->state = XREQ_DEAD;
	} else {
		x->state = XREQ_FAILED;
		x->fail_err = RPCRDMA_ERR_TRANSPORT_ERROR;
	}
	rpcrdma__xclnt_req_fence(t, x);
	if (t->conn.pc && t->conn.state == RPCRDMA__XCONN_UP)
		(void)rpcrdma__provider_disconnect(t->conn.pc);
}

/*
 * The transport properties exchange (docs/rpcrdma-v2-properties.md): once
 * Version Two is agreed, one RDMA_OPTIONAL with our properties, accounted as
 * a call (a credit, a table entry under an XID of its own); the answer's
 * receive size becomes our inline send threshold on this connection.  An
 * RDMA_ERROR answer (ERR_INVAL_OPTION from a peer without the feature)
 * leaves the defaults.  It is advisory: when no credit is free it is not
 * sent.  A Version Two responder answers every RDMA_OPTIONAL (draft 3.1:
 * ERR_INVAL_OPTION when it does not know the opttype), and the credit the
 * exchange holds comes back only with that answer.  With a small grant
 * that credit may be the one every call waits for, and no core times the
 * exchange out: left unanswered for rpcrdma__xclnt_props_ms, the
 * connection is cut (a new one starts from fresh credits), and this
 * requester does not ask that peer again.
 */
uint32_t rpcrdma__xclnt_props_ms = 10000;

static void on_props_timeout(struct rpcrdma__timer *tm)
{
	struct rpcrdma__xclnt *t = tm->ctx;

	if (!t->props_out || t->conn.state != RPCRDMA__XCONN_UP || !t->conn.pc)
		return;
	t->props_off = true;
	RPCRDMA__TRACE(RPCRDMA_TRACE_CALL, RPCRDMA_TEV_TIMEOUT, t->conn.id, t->props_xid,
		       rpcrdma__xclnt_props_ms, 0,
		       "transport properties unanswered after %u ms: connection cut, "
		       "not asked again",
		       rpcrdma__xclnt_props_ms);
	(void)rpcrdma__provider_disconnect(t->conn.pc);
}

static bool xid_in_flight(struct rpcrdma__xclnt *t, uint32_t xid)
{
	for (const struct rpcrdma__xreq *y = *rpcrdma__xclnt_tab_slot(t, xid); y; y = y->hnext) {
		if (y->xid == xid)
			return true;
	}
	return false;
}

void rpcrdma__xclnt_props_start(struct rpcrdma__xclnt *t)
{
	struct rpcrdma_xdr_stream xdr;
	uint8_t info[64];
	struct rpcrdma__xreq *x;
	uint32_t xid;
	int n, rc;

	if (t->partner || t->props_off || t->props_out || t->conn.vers != RPCRDMA_VERSION_TWO) {
		t->props_due = false;
		return;
	}
	/* No credit or room now: still due, for the next reply or call. */
	if (!rpcrdma__xclnt_can_send(t))
		return;
	t->props_due = false;
	n = rpcrdma__xprops_build(info, sizeof(info), t->inline_send, t->inline_recv, t->credits);
	if (n < 0)
		return;
	/* An XID no call in flight has (the core's come from its own
	 * counter; a later collision only costs this advisory exchange). */
	xid = 0x9e3779b9u ^ (uint32_t)t->conn.gen;
	while (xid_in_flight(t, xid))
		xid++;
	x = rpcrdma__xclnt_req_get(t);
	if (!x)
		return;
	if (rpcrdma__xbuf_reserve(t->dev.prov, &x->sbuf, RPCRDMA__XPRT_HDR_ROOM)) {
		x->state = XREQ_IDLE;
		rpcrdma__xclnt_req_try_free(t, x);
		return;
	}
	x->creq = NULL;
	x->xid = xid;
	x->is_props = true;
	x->ngrants = x->nown = 0;
	x->chunks = 0;
	x->nwch = x->wsegs = x->rsegs = 0;
	x->rep = NULL;
	x->resend_pending = false;
	rpcrdma_xdr_init(&xdr, x->sbuf.addr, x->sbuf.len);
	rc = rpcrdma_xdr_encode_u32(&xdr, xid);
	rc = rc ? rc : rpcrdma_xdr_encode_u32(&xdr, RPCRDMA_VERSION_TWO);
	rc = rc ? rc : rpcrdma_xdr_encode_u32(&xdr, t->credits);
	rc = rc ? rc : rpcrdma_xdr_encode_u32(&xdr, RPCRDMA_PROC_OPTIONAL);
	rc = rc ? rc : rpcrdma_xdr_encode_u32(&xdr, RPCRDMA_OPT_PROPERTIES);
	rc = rc ? rc : rpcrdma_xdr_encode_opaque(&xdr, info, (uint32_t)n);
	if (!rc) {
		x->sge[0].addr = x->sbuf.addr;
		x->sge[0].length = (uint32_t)rpcrdma_xdr_pos(&xdr);
		x->sge[0].mr = x->sbuf.mr;
		x->nsge = 1;
		x->send_op.done = rpcrdma__xclnt_on_send;
		rc = rpcrdma__provider_post_send(t->conn.pc, x->sge, 1, 0, 0, &x->send_op);
	}
	if (rc) {
		x->is_props = false;
		x->state = XREQ_DEAD;
		rpcrdma__xclnt_req_try_free(t, x);
		return;
	}
	rpcrdma__xclnt_req_posted(t, x);
	t->props_out++;
	t->props_xid = xid;
	rpcrdma__timer_start(t->dev.loop, &t->props_timer, rpcrdma__xclnt_props_ms,
			     on_props_timeout, t);
}

void rpcrdma__xclnt_props_answered(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x,
				   const struct rpcrdma_hdr *h)
{
	struct rpcrdma__props peer;

	rpcrdma__credits_reply(&t->cr, h->credit);
	t->st.credits_granted = t->cr.granted;
	if (t->props_out)
		t->props_out--;
	rpcrdma__timer_stop(&t->props_timer);
	if (h->proc == RPCRDMA_PROC_OPTIONAL && h->opttype == RPCRDMA_OPT_PROPERTIES &&
	    !h->payload_len && !rpcrdma__props_decode(h->optinfo, h->optinfo_len, &peer)) {
		t->peer_props = peer;
		t->conn.thr.send_max =
		    rpcrdma__props_send_max(&peer, t->inline_send, t->conn.thr.send_max);
		if (t->bc_host)
			t->bc_host->ops->update(t->bc_host, &t->conn);
	} else if (h->proc == RPCRDMA_PROC_ERROR) {
		t->st.rdma_errors_received++;
	} else {
		t->st.bad_msgs++;
	}
	x->is_props = false;
	x->state = XREQ_DEAD;
	rpcrdma__xclnt_req_try_free(t, x);
}
