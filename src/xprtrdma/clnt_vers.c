/*
 * The requester's Version Two negotiation (clnt.h): an ERR_VERS answer
 * to the probe, the transport properties exchange once Version Two is
 * agreed (properties.c; docs/rpcrdma-v2-properties.md), and the
 * ERR_INVAL_OPTION answers to a server's RDMA_OPTIONALs we do not support.
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
		x->creq->cause = (struct rpcrdma__call_cause){
		    .kind = RPCRDMA__CAUSE_RDMA_ERROR,
		    .code = RPCRDMA_ERR_VERS,
		    .vers = h->vers,
		    .a = h->vers_low,
		    .b = h->vers_high,
		};
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

/*
 * RDMA_OPTIONALs a server sends us (draft 3.1): "When an implementation
 * does not recognize or support the value contained in the rdma_opttype
 * field, it MUST send" RDMA_ERROR/ERR_INVAL_OPTION with the same XID.  A
 * requester is such an implementation too, so every opttype but our own
 * properties exchange's is answered that way, in Version Two (the only
 * version where RDMA_OPTIONAL exists).
 *
 * What the answer costs the server: a receive, which RFC 8166 4.3.1
 * backs with a credit, and no answer comes to give that credit back.  So
 * an answer waits for a free credit like a call, and holds it until its
 * Send completes, by which time it has landed in a receive the server
 * replaces at once (ours drops it: rdma_errors_received, or rev_bad_msgs
 * with a backchannel bound).  Answers go before the core's next call.
 *
 * What a server can make us hold or send: XCLNT_OPT_ANSWERS slots with
 * a small registered buffer each, and at most XCLNT_OPT_ANSWERS_PER_CONN
 * answers per connection, so a server that sends an RDMA_OPTIONAL again
 * for each error it gets cannot keep both ends trading messages.  What
 * comes beyond either bound, or is still waiting when the connection goes
 * or settles on Version One, is dropped and counted
 * (inval_option_dropped).
 */
/* The answer: rdma_xid, rdma_vers, rdma_credit, rdma_proc, rdma_err. */
#define OPTANS_LEN (5u * RPCRDMA_XDR_UNIT)

static void optans_drop(struct rpcrdma__xclnt *t, uint32_t xid, const char *why)
{
	t->st.inval_option_dropped++;
	RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, t->conn.id, xid,
		       RPCRDMA_ERR_TRANSPORT_ERROR, 0, "RDMA_OPTIONAL left unanswered: %s", why);
}

static void optans_sent(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev)
{
	struct rpcrdma__xoptans *a = rpcrdma__container_of(op, struct rpcrdma__xoptans, send_op);
	struct rpcrdma__xclnt *t = a->t;

	a->state = OPTANS_FREE;
	/* A Send of an earlier connection held nothing of this one. */
	if (a->gen == t->conn.gen) {
		if (t->conn.sq_used)
			t->conn.sq_used--;
		rpcrdma__credits_returned(&t->cr);
	}
	if (ev->status != RPCRDMA_PST_SUCCESS && ev->status != RPCRDMA_PST_FLUSHED && t->conn.pc &&
	    t->conn.state == RPCRDMA__XCONN_UP)
		(void)rpcrdma__provider_disconnect(t->conn.pc);
	rpcrdma__xclnt_maybe_writable(t); /* the next answer, then the core */
}

/* Posts @a's answer; it then holds a credit and a send slot. */
static int optans_send(struct rpcrdma__xclnt *t, struct rpcrdma__xoptans *a)
{
	struct rpcrdma_xdr_stream xdr;
	int rc;

	rc = rpcrdma__xbuf_reserve(t->dev.prov, &a->sbuf, OPTANS_LEN);
	if (rc)
		return rc;
	/* Section 5.5 of RFC 8166, kept by Version Two: the failing
	 * message's XID and version; our credit request, as in every
	 * message we send. */
	rpcrdma_xdr_init(&xdr, a->sbuf.addr, a->sbuf.len);
	rc = rpcrdma_xdr_encode_u32(&xdr, a->xid);
	rc = rc ? rc : rpcrdma_xdr_encode_u32(&xdr, RPCRDMA_VERSION_TWO);
	rc = rc ? rc : rpcrdma_xdr_encode_u32(&xdr, t->credits);
	rc = rc ? rc : rpcrdma_xdr_encode_u32(&xdr, RPCRDMA_PROC_ERROR);
	rc = rc ? rc : rpcrdma_xdr_encode_u32(&xdr, RPCRDMA_ERR_INVAL_OPTION);
	if (rc)
		return rc;
	a->sge.addr = a->sbuf.addr;
	a->sge.length = (uint32_t)rpcrdma_xdr_pos(&xdr);
	a->sge.mr = a->sbuf.mr;
	a->t = t;
	a->send_op.done = optans_sent;
	rc = rpcrdma__provider_post_send(t->conn.pc, &a->sge, 1, 0, 0, &a->send_op);
	if (rc)
		return rc;
	a->gen = t->conn.gen;
	a->state = OPTANS_SENDING;
	t->conn.sq_used++;
	rpcrdma__credits_sent(&t->cr);
	t->st.rdma_errors_sent++;
	RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_ERR_SENT, t->conn.id, a->xid,
		       RPCRDMA_ERR_INVAL_OPTION, 0,
		       "RDMA_ERROR ERR_INVAL_OPTION sent: the server's RDMA_OPTIONAL is not "
		       "supported here");
	return 0;
}

static struct rpcrdma__xoptans *optans_oldest_waiting(struct rpcrdma__xclnt *t)
{
	struct rpcrdma__xoptans *oldest = NULL;

	for (unsigned int i = 0; i < XCLNT_OPT_ANSWERS; i++) {
		struct rpcrdma__xoptans *a = &t->optans[i];

		if (a->state == OPTANS_WAITING && (!oldest || a->queued < oldest->queued))
			oldest = a;
	}
	return oldest;
}

void rpcrdma__xclnt_optans_pump(struct rpcrdma__xclnt *t)
{
	struct rpcrdma__xoptans *a;

	while (t->optans_waiting && (a = optans_oldest_waiting(t))) {
		if (t->conn.vers != RPCRDMA_VERSION_TWO) {
			/* Taken while probing, then ERR_VERS settled the
			 * connection on One: no RDMA_OPTIONAL exists there. */
			a->state = OPTANS_FREE;
			t->optans_waiting--;
			optans_drop(t, a->xid, "the connection settled on Version One");
			continue;
		}
		/* The version probe goes first and alone (draft 5.2): the
		 * answer waits for the version to settle. */
		if (t->vneg.probing || !rpcrdma__xclnt_can_send(t))
			return;
		t->optans_waiting--;
		if (optans_send(t, a)) {
			a->state = OPTANS_FREE;
			optans_drop(t, a->xid, "its Send could not be posted");
		}
	}
}

void rpcrdma__xclnt_optional_unsupported(struct rpcrdma__xclnt *t, const struct rpcrdma_hdr *h)
{
	struct rpcrdma__xoptans *a = NULL;

	if (t->optans_conn >= XCLNT_OPT_ANSWERS_PER_CONN) {
		optans_drop(t, h->xid, "this connection's answers are used up");
		return;
	}
	for (unsigned int i = 0; i < XCLNT_OPT_ANSWERS && !a; i++) {
		if (t->optans[i].state == OPTANS_FREE)
			a = &t->optans[i];
	}
	if (!a) {
		optans_drop(t, h->xid, "too many answers already waiting or in flight");
		return;
	}
	a->state = OPTANS_WAITING;
	a->xid = h->xid;
	a->queued = ++t->optans_seq;
	t->optans_waiting++;
	t->optans_conn++;
	rpcrdma__xclnt_optans_pump(t);
}

void rpcrdma__xclnt_optans_down(struct rpcrdma__xclnt *t)
{
	for (unsigned int i = 0; i < XCLNT_OPT_ANSWERS; i++) {
		struct rpcrdma__xoptans *a = &t->optans[i];

		if (a->state != OPTANS_WAITING)
			continue;
		a->state = OPTANS_FREE;
		optans_drop(t, a->xid, "the connection was lost");
	}
	t->optans_waiting = 0;
	t->optans_conn = 0;
}

void rpcrdma__xclnt_optans_free(struct rpcrdma__xclnt *t)
{
	for (unsigned int i = 0; i < XCLNT_OPT_ANSWERS; i++)
		rpcrdma__xbuf_free(&t->optans[i].sbuf);
}
