/*
 * The requester as the server's reverse-direction partner (RFC 8167;
 * clnt.h): a requester with no connection of its own that sends on its
 * owner's (a responder's) connections, and what that owner sees of it
 * (struct rpcrdma__xpartner).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xprtrdma/clnt.h"

/*
 * The server's reverse-direction requester (RFC 8167; bidir.c): this
 * engine on a connection that the responder (svc_*.c, its owner) accepted.
 * It has no connection or receives of its own: the owner keeps t->credits
 * receives posted for our replies, hands us each reply-direction message
 * (partner_recv), and attaches us while its connection is up.  connect only waits for the next
 * attach (RFC 8167 5.4: a server cannot reconnect; the core's time-outs bound the wait); disconnect
 * does nothing, since the connection is the forward direction's too.
 */
static void partner_announce(struct rpcrdma__timer *tm)
{
	struct rpcrdma__xclnt *t = tm->ctx;

	if (t->partner_waiting && t->conn.state == RPCRDMA__XCONN_UP) {
		t->partner_waiting = false;
		t->cb->connected(t->cb_ctx);
		rpcrdma__xclnt_maybe_writable(t);
	}
}

static int partner_connect(struct rpcrdma__clnt_transport *tt)
{
	struct rpcrdma__xclnt *t = xclnt_of(tt);

	if (t->dev.failed)
		return -EIO;
	t->partner_waiting = true;
	/* Told from a timer: the core is inside its own connect here. */
	if (t->conn.state == RPCRDMA__XCONN_UP)
		rpcrdma__timer_start(t->dev.loop, &t->partner_timer, 0, partner_announce, t);
	return 0;
}

static void partner_disconnect(struct rpcrdma__clnt_transport *tt)
{
	(void)tt;
}

static const struct rpcrdma__xpartner_ops partner_ops;

int rpcrdma__xclnt_partner_create(struct rpcrdma__xdev *dev, uint32_t inline_send,
				  uint32_t inline_recv, uint32_t credits,
				  const struct rpcrdma__clnt_cb *cb, void *cb_ctx,
				  struct rpcrdma__clnt_transport **out)
{
	struct rpcrdma__xclnt *t;
	uint32_t nslots;

	if (!dev || !dev->prov || !cb || !cb->find || !cb->reply || !cb->failed || !cb->connected ||
	    !cb->disconnected || !out)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->partner = true;
	t->self.ops = &partner_ops;
	t->cb = cb;
	t->cb_ctx = cb_ctx;
	/* The owner's instance, borrowed: never watched, opened or closed
	 * here (its events reach the owner). */
	t->dev.loop = dev->loop;
	t->dev.prov = dev->prov;
	t->inline_send = inline_send;
	t->inline_recv = inline_recv;
	t->credits = credits ? credits : RPCRDMA__BC_CREDITS_DEFAULT;
	if (t->credits > RPCRDMA__BC_CREDITS_MAX)
		t->credits = RPCRDMA__BC_CREDITS_MAX;
	t->seg_max = dev->prov->caps.max_msg_size < RPCRDMA__XPRT_MAX_SEG
			 ? dev->prov->caps.max_msg_size
			 : RPCRDMA__XPRT_MAX_SEG;
	rpcrdma__xrecv_pool_init(&t->pool, dev->prov, inline_recv, t->credits + 64);
	for (nslots = 16; nslots < 2 * t->credits; nslots *= 2)
		;
	t->tab = calloc(nslots, sizeof(*t->tab));
	if (!t->tab) {
		free(t);
		return -ENOMEM;
	}
	t->mask = nslots - 1;
	rpcrdma_hdr_limits_default(&t->lim);
	/* Reverse replies come in the forward direction's version, One or
	 * Two (RFC 8167 5.1; rpcrdma__xclnt_handle_reply checks it is the connection's). */
	t->lim.vers_low = RPCRDMA_VERSION_ONE;
	t->lim.vers_high = RPCRDMA_VERSION_TWO;
	t->lim.max_hdr_size = inline_recv;
	/* Deferred revocations wait on the owner's device, which polls. */
	t->conn.dev = dev;
	t->conn.state = RPCRDMA__XCONN_IDLE;
	t->conn.vers = RPCRDMA_VERSION_ONE;
	t->conn.pool = &t->pool;
	t->conn.on_recv = rpcrdma__xclnt_on_recv;
	t->conn.st = &t->st;
	t->conn.owner = t;
	rpcrdma__credits_init(&t->cr, t->credits);
	*out = (struct rpcrdma__clnt_transport *)(void *)t;
	return 0;
}

static struct rpcrdma__xclnt *xclnt_of_partner(struct rpcrdma__xpartner *p)
{
	return rpcrdma__container_of(p, struct rpcrdma__xclnt, self);
}

void rpcrdma__xclnt_partner_attach(struct rpcrdma__xclnt *t, const struct rpcrdma__xconn *owner)
{

	if (!owner->pc)
		return;
	if (t->conn.state == RPCRDMA__XCONN_DOWN) {
		t->pending_owner = owner; /* once the last calls are fenced */
		return;
	}
	if (t->conn.state != RPCRDMA__XCONN_IDLE)
		return;
	t->conn.pc = owner->pc;
	t->conn.gen++;
	t->conn.id = owner->id;
	t->conn.vers = owner->vers; /* RFC 8167 5.1: the forward direction's */
	t->conn.peer = owner->peer;
	t->conn.thr = owner->thr; /* 4.2: the same thresholds, same buffers */
	t->conn.sq_depth = owner->bc_sq_share ? owner->bc_sq_share : 1;
	t->conn.sq_used = 0;
	/* Not ours: the owner keeps this many posted for our replies (one
	 * more than the credits, as rpcrdma__xclnt_can_send() wants). */
	t->conn.recv_posted = t->credits + 1;
	rpcrdma__credits_init(&t->cr, t->credits);
	t->norphans = 0;
	t->conn.state = RPCRDMA__XCONN_UP;
	if (t->partner_waiting)
		rpcrdma__timer_start(t->dev.loop, &t->partner_timer, 0, partner_announce, t);
}

static void partner_detach(struct rpcrdma__xclnt *t, int err)
{

	t->pending_owner = NULL;
	if (t->conn.state != RPCRDMA__XCONN_UP)
		return;
	/* The calls in flight are fenced now, while the owner's connection
	 * still exists; the core hears of it from a timer, never from inside
	 * the owner's teardown. */
	t->fences_live++;
	rpcrdma__xclnt_start_down(t, err ? err : -ECONNRESET);
	t->fences_live--;
	t->conn.pc = NULL; /* the owner destroys it */
	t->conn.recv_posted = 0;
	rpcrdma__timer_start(t->dev.loop, &t->later, 0, rpcrdma__xclnt_on_later, t);
}

static void partner_recv(struct rpcrdma__xpartner *p, const uint8_t *buf, uint32_t len,
			 unsigned int flags)
{
	struct rpcrdma__xclnt *t = xclnt_of_partner(p);
	struct rpcrdma_prov_event ev;
	struct rpcrdma__xrecv *r;

	if (t->conn.state != RPCRDMA__XCONN_UP || len > t->pool.size) {
		t->st.bad_msgs++;
		return;
	}
	r = rpcrdma__xrecv_get(&t->pool);
	if (!r) {
		/* Out of buffers: the call times out (or is sent again). */
		t->st.bad_msgs++;
		return;
	}
	memcpy(r->buf, buf, len);
	r->len = len;
	memset(&ev, 0, sizeof(ev));
	ev.flags = flags;
	t->st.inline_recv_bytes += len;
	rpcrdma__xclnt_handle_reply(t, r, &ev);
	rpcrdma__xclnt_maybe_writable(t);
}

static bool partner_idle(struct rpcrdma__xclnt *t)
{

	if (t->conn.state != RPCRDMA__XCONN_IDLE || t->fences_live)
		return false;
	for (struct rpcrdma__xreq *x = t->all; x; x = x->all_next) {
		if (x->send_busy || x->fence.pending || x->in_callback)
			return false;
	}
	return true;
}

static uint32_t partner_credits(struct rpcrdma__xpartner *p)
{
	return xclnt_of_partner(p)->credits;
}

static struct rpcrdma__creq *noop_find(void *ctx, uint32_t xid)
{
	(void)ctx;
	(void)xid;
	return NULL;
}

static void noop_reply(void *ctx, struct rpcrdma__creq *req, struct rpcrdma_xdr_stream *msg)
{
	(void)ctx;
	(void)req;
	(void)msg;
}

static void noop_failed(void *ctx, struct rpcrdma__creq *req, int err)
{
	(void)ctx;
	(void)req;
	(void)err;
}

static void noop_event(void *ctx)
{
	(void)ctx;
}

static void noop_disconnected(void *ctx, int err)
{
	(void)ctx;
	(void)err;
}

static void noop_aborted(void *ctx, struct rpcrdma__creq *req)
{
	(void)ctx;
	(void)req;
}

/* What a partner the core let go of tells nobody. */
static const struct rpcrdma__clnt_cb partner_gone_cb = {
    .aborted = noop_aborted,
    .find = noop_find,
    .reply = noop_reply,
    .failed = noop_failed,
    .connected = noop_event,
    .disconnected = noop_disconnected,
    .writable = noop_event,
};

static void partner_free(struct rpcrdma__xclnt *t)
{
	struct rpcrdma__xreq *x;

	rpcrdma__timer_stop(&t->later);
	rpcrdma__timer_stop(&t->partner_timer);
	while ((x = t->all)) {
		if (x->fence.deferred)
			rpcrdma__xfence_cancel(&x->fence);
		rpcrdma__xclnt_req_unlink_all(t, x);
		rpcrdma__xclnt_req_drop_own(x);
		if (x->rep)
			rpcrdma__xrecv_put(&t->pool, x->rep);
		rpcrdma__xbuf_free(&x->msg);
		rpcrdma__xbuf_free(&x->sbuf);
		rpcrdma__xbuf_free(&x->lbuf);
		rpcrdma__xbuf_free(&x->rbuf);
		free(x);
	}
	rpcrdma__xrecv_pool_destroy(&t->pool);
	free(t->tab);
	free(t);
}

/* The core let go of us (it aborted its calls first).  Operations still
 * posted name our memory: until they complete we stay buried on our
 * owner's provider instance (rpcrdma__xdev_bury), which frees us then, or
 * before it closes. */
void rpcrdma__xclnt_partner_destroy(struct rpcrdma__xclnt *t)
{
	t->cb = &partner_gone_cb;
	/* The core freed the calls it gave up on: nothing to tell about them. */
	for (struct rpcrdma__xreq *x = t->all; x; x = x->all_next)
		x->abort_creq = NULL;
	t->partner_waiting = false;
	rpcrdma__timer_stop(&t->partner_timer);
	if (t->conn.state == RPCRDMA__XCONN_UP)
		partner_detach(t, 0);
	if (t->conn.state == RPCRDMA__XCONN_DOWN && !t->fences_live) {
		rpcrdma__timer_stop(&t->later);
		rpcrdma__xclnt_finish_down(t);
	}
	if (partner_idle(t)) {
		partner_free(t);
		return;
	}
	/* The owner's device: t->dev is only a borrowed copy. */
	rpcrdma__xdev_bury(t->conn.dev, &t->self);
}

static void partner_op_attach(struct rpcrdma__xpartner *p, const struct rpcrdma__xconn *owner)
{
	rpcrdma__xclnt_partner_attach(xclnt_of_partner(p), owner);
}

static void partner_op_detach(struct rpcrdma__xpartner *p, int err)
{
	partner_detach(xclnt_of_partner(p), err);
}

static bool partner_op_idle(struct rpcrdma__xpartner *p)
{
	return partner_idle(xclnt_of_partner(p));
}

static void partner_op_free(struct rpcrdma__xpartner *p)
{
	partner_free(xclnt_of_partner(p));
}

/* The server's reverse requester as its owner (the responder) sees it. */
static const struct rpcrdma__xpartner_ops partner_ops = {
    .recv = partner_recv,
    .attach = partner_op_attach,
    .detach = partner_op_detach,
    .idle = partner_op_idle,
    .credits = partner_credits,
    .free = partner_op_free,
};

struct rpcrdma__xpartner *rpcrdma__xclnt_partner(struct rpcrdma__clnt_transport *tt)
{
	return &xclnt_of(tt)->self;
}

const struct rpcrdma__clnt_transport_ops rpcrdma__rdma_bc_clnt_ops = {
    .name = "rdma-backchannel",
    .create = NULL, /* rpcrdma__xclnt_partner_create */
    .connect = partner_connect,
    .call_begin = rpcrdma__xclnt_op_call_begin,
    .call_send = rpcrdma__xclnt_op_call_send,
    .call_abort = rpcrdma__xclnt_op_call_abort,
    .disconnect = partner_disconnect,
    .destroy = rpcrdma__xclnt_op_destroy,
    .stats = rpcrdma__xclnt_op_stats,
};
