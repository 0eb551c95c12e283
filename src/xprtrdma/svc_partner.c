/*
 * The responder as a client's callback partner (RFC 8167; svc.h): a
 * responder serving the connection its owner, the client's requester,
 * opened, and what that owner sees of it (struct rpcrdma__xpartner).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xprtrdma/svc.h"

/*
 * A client's callback responder (RFC 8167; bidir.c): this engine on the
 * connection its owner, the client's requester (clnt_*.c), opened.  It
 * never posts receives: the owner keeps its reverse credits' worth posted
 * and hands it each call-direction message (partner_recv), copied here.
 * Its connection object lives from the owner's ESTABLISHED to the owner's
 * teardown (attach, detach); the provider connection stays the owner's.
 * Calls beyond the credits we grant are bounded by the pool's limit: a
 * server that ignores them loses the excess, not our memory.  A reverse
 * call's Read chunks are bounded in time as the forward server bounds a
 * call's (partner_tick).
 */
static const struct rpcrdma__xpartner_ops partner_ops;

uint32_t rpcrdma__xsvc_partner_record_ms = RPCRDMA__SVC_RECORD_MS_DEFAULT;

/*
 * The forward server's record time limit (svc_conn.c, conn_tick), for
 * reverse calls.  Reverse calls may carry Read chunks (unless
 * refuse_chunks), up to max_call each and conn_read_budget at once; a
 * server that sends one and never lets us read it (on a software provider
 * it need only stop running its progress) would pin that landing buffer
 * and a callback slot for as long as the connection lives.  An RDMA Read
 * cannot be taken back, so the connection is closed: the owner's, which
 * then reconnects (a client hosting callbacks always does), as the
 * forward server closes its own.  Idle and drain time-outs are not ours
 * to apply: the connection is the owner's, and the core's call time-outs
 * bound what waits on it.
 */
static void partner_tick(struct rpcrdma__timer *tm)
{
	struct rpcrdma__xsconn *sc = tm->ctx;
	struct rpcrdma__xsvc *v = sc->svc;

	if (sc->c.state != RPCRDMA__XCONN_UP)
		return;
	if (rpcrdma__xsvc_reads_overdue(sc, rpcrdma_loop_now(v->dev.loop))) {
		v->st.record_timeouts++;
		rpcrdma__xsvc_conn_close(sc);
		return;
	}
	rpcrdma__timer_start(v->dev.loop, &sc->tick, v->b.tick_ms, partner_tick, sc);
}

int rpcrdma__xsvc_partner_create(struct rpcrdma__xdev *dev, uint32_t inline_send,
				 uint32_t inline_recv, uint32_t credits, bool refuse_chunks,
				 const struct rpcrdma__svc_cb *cb, void *cb_ctx,
				 struct rpcrdma__svc_transport **out)
{
	struct rpcrdma__xsvc *v;

	if (!dev || !dev->prov || !cb || !cb->call || !out)
		return -EINVAL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->partner = true;
	v->self.ops = &partner_ops;
	v->refuse_chunks = refuse_chunks;
	v->cb = cb;
	v->cb_ctx = cb_ctx;
	/* The owner's instance, borrowed: never watched or closed here. */
	v->dev.loop = dev->loop;
	v->dev.prov = dev->prov;
	v->inline_send = inline_send;
	v->inline_recv = inline_recv;
	v->rbuf_usual = rpcrdma__bufpool_cap(inline_send);
	v->credits = credits ? credits : RPCRDMA__BC_CREDITS_DEFAULT;
	if (v->credits > RPCRDMA__BC_CREDITS_MAX)
		v->credits = RPCRDMA__BC_CREDITS_MAX;
	/* Reverse calls come in the forward direction's version (RFC 8167
	 * 5.1): One, or Two after negotiation. */
	v->vers_low = RPCRDMA_VERSION_ONE;
	v->vers_high = RPCRDMA_VERSION_TWO;
	rpcrdma__opt_registry_init(&v->opts);
	rpcrdma_hdr_limits_default(&v->lim);
	v->lim.vers_low = v->vers_low;
	v->lim.vers_high = v->vers_high;
	v->lim.max_hdr_size = v->inline_recv;
	rpcrdma__xrecv_pool_init(&v->pool, dev->prov, inline_recv, 2 * v->credits + 32);
	v->rd_spares.max_bytes = XSVC_RD_SPARES_MAX;
	v->free_bytes_max = XSVC_KEPT_BYTES; /* one connection's, not a server's */
	v->acct = v;
	{
		/* Reverse calls: the defaults, and the engine's largest message
		 * (a callback's size is the client's own business). */
		struct rpcrdma_server_opts dflt;

		memset(&dflt, 0, sizeof(dflt));
		dflt.record_timeout_ms = rpcrdma__xsvc_partner_record_ms;
		rpcrdma__svc_bounds_of(&dflt, NULL, NULL, &v->b);
		v->max_call = RPCRDMA__XPRT_MAX_MSG;
		v->conn_read_budget = XSCONN_READ_CALLS * v->max_call;
		v->b.max_read_bytes = v->conn_read_budget;
	}
	*out = (struct rpcrdma__svc_transport *)(void *)v;
	return 0;
}

static struct rpcrdma__xsvc *xsvc_of_partner(struct rpcrdma__xpartner *p)
{
	return rpcrdma__container_of(p, struct rpcrdma__xsvc, self);
}

static void partner_attach(struct rpcrdma__xpartner *p, const struct rpcrdma__xconn *owner)
{
	struct rpcrdma__xsvc *v = xsvc_of_partner(p);
	struct rpcrdma__xsconn *sc;

	if (v->partner_sc || v->destroying || !owner->pc)
		return;
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return; /* reverse calls are then dropped: rev_dropped */
	sc->svc = v;
	sc->credits = v->credits; /* the reverse credits it grants */
	sc->c.dev = owner->dev;
	sc->c.pc = owner->pc;
	sc->c.gen = 1;
	sc->c.id = owner->id;
	sc->c.vers = owner->vers;
	sc->c.pool = &v->pool;
	sc->c.on_recv = rpcrdma__xsvc_on_recv;
	sc->c.st = &v->st;
	sc->c.owner = sc;
	sc->c.peer = owner->peer;
	sc->c.thr = owner->thr; /* RFC 8167 4.2 */
	/* The server, as reverse requester, announced no Send With
	 * Invalidate (it does not take it as a responder either). */
	sc->c.peer_invalidate = false;
	sc->c.sq_depth = owner->bc_sq_share ? owner->bc_sq_share : 1;
	sc->c.rd_depth = owner->pc->attr.read_depth ? owner->pc->attr.read_depth : 1;
	sc->c.state = RPCRDMA__XCONN_UP;
	sc->next = v->conns;
	if (v->conns)
		v->conns->prev = sc;
	v->conns = sc;
	v->partner_sc = sc;
	/* Stopped when the connection goes (rpcrdma__xsvc_conn_down). */
	rpcrdma__timer_start(v->dev.loop, &sc->tick, v->b.tick_ms, partner_tick, sc);
}

static void partner_update(struct rpcrdma__xpartner *p, const struct rpcrdma__xconn *owner)
{
	struct rpcrdma__xsvc *v = xsvc_of_partner(p);

	if (!v->partner_sc)
		return;
	v->partner_sc->c.vers = owner->vers;
	v->partner_sc->c.thr = owner->thr;
}

static void partner_detach(struct rpcrdma__xpartner *p, int err)
{
	struct rpcrdma__xsvc *v = xsvc_of_partner(p);
	struct rpcrdma__xsconn *sc = v->partner_sc;

	if (!sc)
		return;
	(void)err;
	v->partner_sc = NULL;
	rpcrdma__xsvc_conn_down(sc);
}

static void partner_recv(struct rpcrdma__xpartner *p, const uint8_t *buf, uint32_t len,
			 unsigned int flags)
{
	struct rpcrdma__xsvc *v = xsvc_of_partner(p);
	struct rpcrdma__xsconn *sc = v->partner_sc;
	struct rpcrdma__xrecv *r;

	if (!sc || sc->c.state != RPCRDMA__XCONN_UP || v->destroying || len > v->pool.size) {
		v->st.rev_dropped++;
		return;
	}
	r = rpcrdma__xrecv_get(&v->pool);
	if (!r) {
		v->st.rev_dropped++;
		return;
	}
	memcpy(r->buf, buf, len);
	r->len = len;
	r->conn = &sc->c;
	v->st.inline_recv_bytes += len;
	(void)flags;
	sc->sreqs++;
	rpcrdma__xsvc_handle_call(sc, r);
	sc->sreqs--;
	rpcrdma__xsvc_conn_try_free(sc);
}

static void partner_stats(struct rpcrdma__xpartner *p, struct rpcrdma_xprt_stats *out)
{
	rpcrdma__bc_fold_stats(out, &xsvc_of_partner(p)->st, false);
}

/* The client's callback responder as its owner (the requester) sees it. */
static const struct rpcrdma__xpartner_ops partner_ops = {
    .recv = partner_recv,
    .attach = partner_attach,
    .update = partner_update,
    .detach = partner_detach,
    .stats = partner_stats,
};

struct rpcrdma__xpartner *rpcrdma__xsvc_partner(struct rpcrdma__svc_transport *t)
{
	return &xsvc_of(t)->self;
}
