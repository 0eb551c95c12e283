/*
 * The requester's connection (clnt.h): create, connect, the provider's
 * connection events, losing a connection (recovery: every call in flight
 * fenced, then the core told), destroy, counters, and the core's transport
 * ops (rpcrdma__rdma_clnt_ops).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/version.h"
#include "common/trace.h"
#include "xprtrdma/clnt.h"

/*
 * Connection life cycle.
 */
void rpcrdma__xclnt_finish_down(struct rpcrdma__xclnt *t)
{
	int err;

	if (t->conn.state != RPCRDMA__XCONN_DOWN || t->fences_live)
		return;
	if (t->conn.pc && !t->partner) /* a partner's is its owner's */
		rpcrdma__provider_conn_destroy(t->conn.pc);
	t->conn.pc = NULL;
	t->conn.state = RPCRDMA__XCONN_IDLE;
	t->norphans = 0;
	t->props_out = 0;
	t->props_due = false;
	t->conn.sq_used = 0;
	t->conn.recv_posted = 0;
	rpcrdma__credits_reset(&t->cr);
	/* ORDER: the endpoint is closed, so nothing the responder started
	 * can move any more: the calls that waited for that end, before the
	 * core hears of the loss (it would send a failed call again). */
	rpcrdma__xclnt_complete_closed(t);
	err = t->down_err ? t->down_err : -ECONNRESET;
	t->down_err = 0;
	t->cb->disconnected(t->cb_ctx, err);
	if (t->partner && t->pending_owner) {
		const struct rpcrdma__xconn *owner = t->pending_owner;

		t->pending_owner = NULL;
		rpcrdma__xclnt_partner_attach(t, owner);
	}
}

/* A call of the lost connection: the core no longer hears of it (it sends
 * it again once told of the loss), and its grants are revoked. */
static void forget_call(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x)
{
	if (x->creq) {
		x->creq->tpriv = NULL;
		x->creq = NULL;
	}
	x->resend_pending = false;
	x->state = XREQ_DEAD;
	rpcrdma__xclnt_req_fence(t, x);
}

void rpcrdma__xclnt_start_down(struct rpcrdma__xclnt *t, int err)
{
	struct rpcrdma__xreq *waiting = NULL, *x;

	if (t->conn.state == RPCRDMA__XCONN_IDLE || t->conn.state == RPCRDMA__XCONN_DOWN)
		return;
	int raw = err;

	rpcrdma__timer_stop(&t->handshake);
	rpcrdma__timer_stop(&t->props_timer);
	rpcrdma__xclnt_optans_down(t);
	/* A peer that took the transport's TCP connection and then dropped
	 * it, or never answered, in the handshake is no RDMA endpoint. */
	if (t->conn.state == RPCRDMA__XCONN_CONNECTING &&
	    (err == -ECONNRESET || err == -EPIPE || err == -EINPROGRESS || err == -EPROTO ||
	     err == -ECONNABORTED))
		err = RPCRDMA_ERR_NOT_RDMA_PEER;
	RPCRDMA__TRACE(RPCRDMA_TRACE_CONN,
		       t->conn.state == RPCRDMA__XCONN_CONNECTING ? RPCRDMA_TEV_CONNECT_FAIL
								  : RPCRDMA_TEV_DISCONNECT,
		       t->conn.id, 0, err, raw, "%s: %s (%d, from %d)",
		       t->conn.state == RPCRDMA__XCONN_CONNECTING ? "connection attempt failed"
								  : "connection lost",
		       rpcrdma_strerror(err), err, raw);
	t->conn.state = RPCRDMA__XCONN_DOWN;
	t->down_err = err;
	/* Draft 5.2: a probe lost with its connection counts as a Version
	 * One answer, so the next connection does not probe again. */
	if (!t->partner && rpcrdma__vneg_on_lost(&t->vneg)) {
		rpcrdma__vmemo_mark_v1((const struct sockaddr *)&t->dst, t->dstlen);
		t->st.vers_fallbacks++;
		RPCRDMA__TRACE(RPCRDMA_TRACE_VERS, RPCRDMA_TEV_VERS_FALLBACK, t->conn.id, 0, 0, 1,
			       "the Version Two probe was lost with its connection: the peer is "
			       "taken to be Version One");
	}
	if (t->bc_host)
		t->bc_host->ops->detach(t->bc_host, err);
	/* Guard, so that fences ending synchronously below cannot finish
	 * the teardown before every call was visited. */
	t->fences_live++;
	for (uint32_t i = 0; i <= t->mask; i++) {
		while ((x = t->tab[i])) {
			rpcrdma__xclnt_tab_del(t, x);
			forget_call(t, x);
		}
	}
	/*
	 * Calls refused with ERR_VERS whose first Send had not completed are
	 * out of the table, waiting to go again from that completion
	 * (clnt_vers.c), yet still hold their grants and the core's call.
	 * Gathered first, fenced after: a fence may call the core, which may
	 * change the list of all requests; a request with a busy Send is
	 * never freed, so the gathered ones stay.
	 */
	for (x = t->all; x; x = x->all_next) {
		if (x->resend_pending) {
			x->hnext = waiting;
			waiting = x;
		}
	}
	while ((x = waiting)) {
		waiting = x->hnext;
		x->hnext = NULL;
		forget_call(t, x);
	}
	t->fences_live--;
	rpcrdma__xclnt_finish_down(t);
}

uint32_t rpcrdma__xclnt_handshake_ms = 10000;

/* The RDMA handshake did not finish: the software provider's TCP
 * connection was taken by something that is not an RDMA endpoint (it
 * waits for ever there), or the peer is far too slow. */
static void on_handshake(struct rpcrdma__timer *tm)
{
	struct rpcrdma__xclnt *t = tm->ctx;

	if (t->conn.state == RPCRDMA__XCONN_CONNECTING)
		rpcrdma__xclnt_start_down(t, RPCRDMA_ERR_NOT_RDMA_PEER);
}

/* Thresholds for the version negotiation has reached: that version's
 * defaults, and while the probe is out no more than a Version One
 * receiver takes (draft 5.2: at most 1024 bytes). */
void rpcrdma__xclnt_apply_version(struct rpcrdma__xclnt *t)
{
	rpcrdma__xconn_set_version(&t->conn, t->vneg.vers, t->inline_send, t->inline_recv);
	t->conn.thr.send_max = rpcrdma__vneg_send_max(&t->vneg, t->conn.thr.send_max);
	/* The callback responder answers on this connection: the same
	 * thresholds (RFC 8167 4.2). */
	if (t->bc_host && t->conn.state == RPCRDMA__XCONN_UP)
		t->bc_host->ops->update(t->bc_host, &t->conn);
}

static void on_event(struct rpcrdma__xdev *dev, const struct rpcrdma_prov_event *ev)
{
	struct rpcrdma__xclnt *t = dev->ctx;

	if (ev->type == RPCRDMA_PEV_DEVICE_ERROR) {
		if (!ev->listener)
			rpcrdma__xclnt_start_down(t, ev->error ? ev->error : -EIO);
		return;
	}
	if (!ev->conn || ev->conn != t->conn.pc)
		return;
	switch (ev->type) {
	case RPCRDMA_PEV_ESTABLISHED:
		if (t->conn.state != RPCRDMA__XCONN_CONNECTING)
			return;
		/* RFC 8797: the server's accept data bounds what we may send;
		 * without any, 1024 bytes (RFC 8166 3.3.3). */
		rpcrdma__xconn_negotiate(&t->conn, ev->private_len ? ev->private_data : NULL,
					 ev->private_len, t->inline_send, t->inline_recv);
		rpcrdma__xclnt_apply_version(t);
		t->conn.sq_depth = t->conn.pc->attr.send_depth;
		t->conn.bc_sq_share = 0;
		if (t->bc_host) {
			/* The callback responder's share of the send queue. */
			t->conn.bc_sq_share = t->conn.sq_depth > 2 * RPCRDMA__BC_SQ_SHARE
						  ? RPCRDMA__BC_SQ_SHARE
						  : t->conn.sq_depth / 2;
			t->conn.sq_depth -= t->conn.bc_sq_share;
		}
		rpcrdma__credits_init(&t->cr, t->credits);
		rpcrdma__timer_stop(&t->handshake);
		t->conn.state = RPCRDMA__XCONN_UP;
		if (t->bc_host)
			t->bc_host->ops->attach(t->bc_host, &t->conn);
		RPCRDMA__TRACE(RPCRDMA_TRACE_CONN, RPCRDMA_TEV_CONNECT, t->conn.id, 0, t->conn.vers,
			       0, "connected, version %u, inline send %u recv %u, credits asked %u",
			       t->conn.vers, t->conn.thr.send_max, t->conn.thr.recv_max,
			       t->credits);
		t->cb->connected(t->cb_ctx);
		rpcrdma__xclnt_maybe_writable(t);
		return;
	case RPCRDMA_PEV_REJECTED:
	case RPCRDMA_PEV_CONNECT_ERROR:
		rpcrdma__xclnt_start_down(t, ev->error ? ev->error : -ECONNREFUSED);
		return;
	case RPCRDMA_PEV_DISCONNECTED:
		rpcrdma__xclnt_start_down(t, ev->error ? ev->error : -ECONNRESET);
		return;
	default:
		return;
	}
}

/*
 * The transport ops.
 */
static int op_create(struct rpcrdma_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		     const struct rpcrdma_client_opts *opts, const struct rpcrdma__clnt_cb *cb,
		     void *cb_ctx, struct rpcrdma__clnt_transport **out)
{
	struct sockaddr_storage local;
	socklen_t locallen;
	struct rpcrdma__xclnt *t;
	uint32_t nslots;
	int rc;

	if (!loop || !addr || !addrlen || addrlen > sizeof(t->dst) || !opts || !cb || !cb->find ||
	    !cb->reply || !cb->failed || !cb->connected || !cb->disconnected || !out)
		return -EINVAL;
	rc = rpcrdma__xprt_local_addr(addr, addrlen, &local, &locallen);
	if (rc)
		return rc;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->cb = cb;
	t->cb_ctx = cb_ctx;
	memcpy(&t->dst, addr, addrlen);
	t->dstlen = addrlen;
	t->credits = opts->credits ? opts->credits : RPCRDMA__XPRT_CLNT_CREDITS_DEFAULT;
	/* rpc.h: 0 means Version One; more than Two is not spoken. */
	t->max_vers =
	    opts->max_vers >= RPCRDMA_VERSION_TWO ? RPCRDMA_VERSION_TWO : RPCRDMA_VERSION_ONE;

	rc = rpcrdma__xdev_open(&t->dev, loop,
				opts->provider ? opts->provider : RPCRDMA__XPRT_PROVIDER_DEFAULT,
				(struct sockaddr *)&local, locallen, on_event, t);
	if (rc) {
		free(t);
		return rc;
	}
	t->inline_send = rpcrdma__xprt_inline_size(opts->inline_send,
						   rpcrdma__xprt_inline_default(t->dev.prov));
	t->inline_recv = rpcrdma__xprt_inline_size(opts->inline_recv,
						   rpcrdma__xprt_inline_default(t->dev.prov));
	/* We can only ask for what we can keep posted. */
	if (t->dev.prov->caps.max_recv_depth > 2 &&
	    t->credits > t->dev.prov->caps.max_recv_depth - 2)
		t->credits = t->dev.prov->caps.max_recv_depth - 2;
	t->seg_max = t->dev.prov->caps.max_msg_size < RPCRDMA__XPRT_MAX_SEG
			 ? t->dev.prov->caps.max_msg_size
			 : RPCRDMA__XPRT_MAX_SEG;
	rpcrdma__xrecv_pool_init(&t->pool, t->dev.prov, t->inline_recv, t->credits + 64);

	for (nslots = 16; nslots < 2 * t->credits; nslots *= 2)
		;
	t->tab = calloc(nslots, sizeof(*t->tab));
	if (!t->tab) {
		rpcrdma__xdev_close(&t->dev);
		free(t);
		return -ENOMEM;
	}
	t->mask = nslots - 1;

	rpcrdma_hdr_limits_default(&t->lim);
	/* Answers in either version we may have sent are decoded; which one
	 * is right is the negotiation's to say (rpcrdma__xclnt_handle_reply). */
	t->lim.vers_low = RPCRDMA_VERSION_ONE;
	t->lim.vers_high = t->max_vers;
	t->lim.max_hdr_size = t->inline_recv;

	t->conn.dev = &t->dev;
	t->conn.state = RPCRDMA__XCONN_IDLE;
	t->conn.vers = RPCRDMA_VERSION_ONE;
	rpcrdma__vneg_start(&t->vneg, RPCRDMA_VERSION_ONE, true);
	t->conn.pool = &t->pool;
	t->conn.on_recv = rpcrdma__xclnt_on_recv;
	t->conn.st = &t->st;
	t->conn.owner = t;
	rpcrdma__credits_init(&t->cr, t->credits);
	*out = (struct rpcrdma__clnt_transport *)(void *)t;
	return 0;
}

static int op_connect(struct rpcrdma__clnt_transport *tt)
{
	struct rpcrdma__xclnt *t = xclnt_of(tt);
	struct rpcrdma_prov_conn_attr attr = {0};
	uint8_t pd[RPCRDMA_CM_PRIVATE_SIZE];
	size_t pdlen;
	int rc;

	switch (t->conn.state) {
	case RPCRDMA__XCONN_IDLE:
		break;
	case RPCRDMA__XCONN_UP:
		return -EISCONN;
	default:
		return -EALREADY;
	}
	if (t->dev.failed)
		return -EIO;
	/* One Send per call; receives: one per credit we ask for, plus
	 * room for a reply whose buffer is briefly held, plus those kept for
	 * reverse calls (RFC 8167 4.3.1) and the callback responder's sends. */
	attr.send_depth = t->credits + 8 + (t->bc_host ? RPCRDMA__BC_SQ_SHARE : 0);
	attr.recv_depth = t->credits + 2 + t->bc_credits;
	/* Version Two is offered unless this peer was found to be Version
	 * One only (on an earlier connection, by any client). */
	rpcrdma__vneg_start(&t->vneg, t->max_vers,
			    rpcrdma__vmemo_is_v1((const struct sockaddr *)&t->dst, t->dstlen));
	t->conn.vers = t->vneg.vers;
	rc = rpcrdma__provider_conn_create(t->dev.prov, &attr, &t->conn, &t->conn.pc);
	if (rc)
		return rc;
	t->conn.gen++;
	t->conn.id = rpcrdma__trace_conn_id();
	t->conn.state = RPCRDMA__XCONN_CONNECTING;
	t->conn.sq_used = 0;
	t->conn.recv_posted = 0;
	t->conn.sq_depth = t->conn.pc->attr.send_depth;
	/* ORDER: receives before connect, so the server's first reply finds
	 * one (provider.h).  One more than the calls and reverse calls need:
	 * a reply's receive is reposted only after the core's callback, and
	 * a call made from that callback (a pipeline) would otherwise wait
	 * for it, through the queue and a second flush, every time. */
	rc = rpcrdma__xconn_fill_recvs(&t->conn, t->credits + t->bc_credits + 1);
	if (!rc) {
		pdlen = rpcrdma__xconn_private(
		    t->inline_send, t->inline_recv,
		    t->dev.prov->caps.flags & RPCRDMA_PCAP_SEND_INVALIDATE, pd, sizeof(pd));
		rc = rpcrdma__provider_connect(t->conn.pc, (struct sockaddr *)&t->dst, t->dstlen,
					       pd, pdlen);
	}
	if (rc) {
		/* Receives posted so far come back FLUSHED with no
		 * connection; their completions return them to the pool. */
		rpcrdma__provider_conn_destroy(t->conn.pc);
		t->conn.pc = NULL;
		t->conn.state = RPCRDMA__XCONN_IDLE;
		t->conn.recv_posted = 0;
		return rc;
	}
	rpcrdma__timer_start(t->dev.loop, &t->handshake, rpcrdma__xclnt_handshake_ms, on_handshake,
			     t);
	return 0;
}

static void op_disconnect(struct rpcrdma__clnt_transport *tt)
{
	struct rpcrdma__xclnt *t = xclnt_of(tt);

	if (t->conn.pc &&
	    (t->conn.state == RPCRDMA__XCONN_UP || t->conn.state == RPCRDMA__XCONN_CONNECTING))
		(void)rpcrdma__provider_disconnect(t->conn.pc);
}

void rpcrdma__xclnt_op_destroy(struct rpcrdma__clnt_transport *tt)
{
	struct rpcrdma__xclnt *t = xclnt_of(tt);
	struct rpcrdma__xreq *x;

	if (!t)
		return;
	if (t->partner) {
		rpcrdma__xclnt_partner_destroy(t);
		return;
	}
	rpcrdma__timer_stop(&t->later);
	rpcrdma__timer_stop(&t->handshake);
	rpcrdma__timer_stop(&t->props_timer);
	/* Closing the instance destroys every grant with it (the fence of
	 * last resort), and no event follows. */
	if (t->conn.pc && t->conn.state != RPCRDMA__XCONN_DOWN)
		RPCRDMA__TRACE(RPCRDMA_TRACE_CONN, RPCRDMA_TEV_DISCONNECT, t->conn.id, 0,
			       -ESHUTDOWN, 0, "closed: the client was destroyed");
	if (t->conn.pc)
		rpcrdma__provider_conn_destroy(t->conn.pc);
	t->conn.pc = NULL;
	rpcrdma__xclnt_optans_free(t);
	while ((x = t->all)) {
		x->nown = 0; /* freed with the instance's cache below */
		rpcrdma__xclnt_req_unlink_all(t, x);
		rpcrdma__xbuf_free(&x->msg);
		rpcrdma__xbuf_free(&x->sbuf);
		rpcrdma__xbuf_free(&x->lbuf);
		rpcrdma__xbuf_free(&x->rbuf);
		free(x);
	}
	rpcrdma__xrecv_pool_destroy(&t->pool);
	rpcrdma__xdev_close(&t->dev);
	free(t->tab);
	free(t);
}

void rpcrdma__xclnt_op_stats(struct rpcrdma__clnt_transport *tt, struct rpcrdma_xprt_stats *out)
{
	struct rpcrdma__xclnt *t = xclnt_of(tt);

	*out = t->st;
	rpcrdma__xdev_add_stats(&t->dev, out);
	out->recvs_posted_now += t->conn.recv_posted;
	if (t->cr.max_in_flight_seen > out->credits_in_use_max)
		out->credits_in_use_max = t->cr.max_in_flight_seen;
	if (t->bc_host)
		t->bc_host->ops->stats(t->bc_host, out);
}

struct rpcrdma_provider *rpcrdma__xprt_clnt_provider(struct rpcrdma__clnt_transport *tt)
{
	return tt ? xclnt_of(tt)->dev.prov : NULL;
}

const struct rpcrdma__clnt_transport_ops rpcrdma__rdma_clnt_ops = {
    .name = "rdma",
    .create = op_create,
    .connect = op_connect,
    .call_begin = rpcrdma__xclnt_op_call_begin,
    .call_send = rpcrdma__xclnt_op_call_send,
    .call_abort = rpcrdma__xclnt_op_call_abort,
    .disconnect = op_disconnect,
    .destroy = rpcrdma__xclnt_op_destroy,
    .stats = rpcrdma__xclnt_op_stats,
};

void rpcrdma__xclnt_set_bc_host(struct rpcrdma__clnt_transport *tt, struct rpcrdma__xpartner *host,
				uint32_t credits)
{
	struct rpcrdma__xclnt *t = xclnt_of(tt);

	uint32_t depth = t->dev.prov->caps.max_recv_depth;

	t->bc_host = host;
	t->bc_credits = host ? credits : 0;
	/* Forward and reverse receives share the queue (RFC 8167 4.3.1). */
	if (depth > 2 + 2 * t->bc_credits && t->credits > depth - 2 - t->bc_credits)
		t->credits = depth - 2 - t->bc_credits;
	/* Reverse calls hold their own buffers (copies): ours only turn
	 * over faster; the pool grows for the extra receives posted. */
	t->pool.max = t->credits + 64 + t->bc_credits;
}

struct rpcrdma__xdev *rpcrdma__xclnt_dev(struct rpcrdma__clnt_transport *tt)
{
	return &xclnt_of(tt)->dev;
}

void rpcrdma__xclnt_inline(struct rpcrdma__clnt_transport *tt, uint32_t *send, uint32_t *recv)
{
	*send = xclnt_of(tt)->inline_send;
	*recv = xclnt_of(tt)->inline_recv;
}
