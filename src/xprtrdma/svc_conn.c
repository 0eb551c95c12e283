/*
 * The responder's transport (svc.h): listen or serve as a worker,
 * connection requests (admission, accept, handoff to a worker or to the
 * transport of the request's device), the provider's connection events, a
 * connection's end and its tick (the bounds' clocks), destroy, counters,
 * the core's ops (rpcrdma__rdma_svc_ops), and what bidir.c binds a
 * backchannel through.
 *
 * Every device.  On a wildcard address verbs gives a listen-only instance
 * (provider.h, RPCRDMA_PCAP_LISTEN_ONLY), whose requests come from any
 * device.  Such a transport (v->wild) serves no connection itself: after
 * admission and placement on a worker (whose own transport is wild too),
 * each request goes to the transport of its device on the same loop, found
 * by trying the ones open (a handoff to another device's instance says
 * -EOPNOTSUPP) or opened on the request's local address the first time its
 * device shows up (devices_opened).  Those per-device transports are
 * ordinary ones without a listener; they live until their parent is
 * destroyed, and their counters are the parent's.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace.h"
#include "xprtrdma/svc.h"

/*
 * Connections.
 */
void rpcrdma__xsvc_conn_down(struct rpcrdma__xsconn *sc)
{
	struct rpcrdma__xsvc *v = sc->svc;

	if (sc->c.state == RPCRDMA__XCONN_DOWN)
		return;
	sc->c.state = RPCRDMA__XCONN_DOWN;
	rpcrdma__timer_stop(&sc->tick);
	rpcrdma__xsvc_hold_drop(sc);
	sc->sreqs++;
	/* ORDER: the reverse calls are fenced while the connection exists. */
	if (sc->bc)
		sc->bc_down(sc->bc);
	rpcrdma__xsvc_pump_reads(sc);
	rpcrdma__xsvc_pump_tx(sc);
	if (sc->c.pc && !v->partner) /* a partner's is its owner's */
		rpcrdma__provider_conn_destroy(sc->c.pc);
	sc->c.pc = NULL;
	if (sc->told_core && !v->destroying && v->cb->conn_closed)
		v->cb->conn_closed(v->cb_ctx, sc);
	if (v->dev.buried)
		rpcrdma__xdev_reap(&v->dev, false);
	sc->sreqs--;
	rpcrdma__xsvc_conn_try_free(sc);
}

bool rpcrdma__xsvc_reads_overdue(const struct rpcrdma__xsconn *sc, uint64_t now)
{
	const struct rpcrdma__xsreq *rd = sc->rl_head; /* the oldest reading */

	return rd && now - rd->rd_start >= sc->svc->b.record_ms;
}

/*
 * The time-outs of one connection, looked at every tick: replies the
 * requester does not let finish (drain), Read chunks it does not let us
 * read (record), a connection that does nothing (idle).  Closing is all we
 * can do: a posted operation cannot be taken back otherwise.
 */
static void conn_tick(struct rpcrdma__timer *tm)
{
	struct rpcrdma__xsconn *sc = tm->ctx;
	struct rpcrdma__xsvc *v = sc->svc;
	uint64_t now = rpcrdma_loop_now(v->dev.loop);
	const struct rpcrdma__xsreq *rd = sc->rl_head;

	if (sc->c.state == RPCRDMA__XCONN_CONNECTING) {
		/* Accepted, never established (the requester did not finish
		 * the handshake): it holds receives and a place in max_conns. */
		if (now - sc->last_rx >= v->b.record_ms) {
			v->st.record_timeouts++;
			rpcrdma__xsvc_conn_close(sc);
			return;
		}
		rpcrdma__timer_start(v->dev.loop, &sc->tick, v->b.tick_ms, conn_tick, sc);
		return;
	}
	if (sc->c.state != RPCRDMA__XCONN_UP)
		return;
	if (sc->tx_pending && now - sc->tx_since >= v->b.drain_ms) {
		v->st.drain_timeouts++;
		rpcrdma__xsvc_conn_close(sc);
		return;
	}
	if (rpcrdma__xsvc_reads_overdue(sc, now)) {
		v->st.record_timeouts++;
		rpcrdma__xsvc_conn_close(sc);
		return;
	}
	/* Idle since the last message either way (a long call's reply
	 * counts: tx_since moves when it completes). */
	if (!sc->in_progress && !sc->tx_pending && !rd && !sc->rd_head && !sc->hold_head &&
	    now - (sc->last_rx > sc->tx_since ? sc->last_rx : sc->tx_since) >= v->b.idle_ms) {
		v->st.idle_closes++;
		rpcrdma__xsvc_conn_close(sc);
		return;
	}
	rpcrdma__timer_start(v->dev.loop, &sc->tick, v->b.tick_ms, conn_tick, sc);
}

static int svc_open(struct rpcrdma_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		    const struct rpcrdma_server_opts *opts, const struct rpcrdma__svc_cb *cb,
		    void *cb_ctx, struct rpcrdma__xsvc **out);

/* Chosen to make room at max_conns (svc_lru.c), on our loop: closed as
 * an idle one is, its posted replies flushed; its place comes back once
 * it is down. */
static void conn_evict(struct rpcrdma__svc_lru_entry *e)
{
	struct rpcrdma__xsconn *sc = rpcrdma__container_of(e, struct rpcrdma__xsconn, lru);

	sc->svc->st.conns_evicted_stalled += e->chosen_stalled;
	RPCRDMA__TRACE(RPCRDMA_TRACE_CONN, RPCRDMA_TEV_DISCONNECT, sc->c.id, 0, -ECONNABORTED, 0,
		       "closed, %s longest, for a new connection at max_conns",
		       e->chosen_stalled ? "its replies stalled" : "idle");
	rpcrdma__xsvc_conn_close(sc);
}

/*
 * Connections the provider took on our port whose request never came (a
 * peer that connects and sends nothing, or a byte at a time): they hold a
 * descriptor before on_connect_request ever runs, so they get the bounds
 * of the handshake here, record_timeout_ms and max_conns of them.
 */
static void stale_tick(struct rpcrdma__timer *tm)
{
	struct rpcrdma__xsvc *v = tm->ctx;
	int cut;

	if (!v->lst || v->destroying)
		return;
	cut = rpcrdma__provider_listener_cut_stale(v->lst, rpcrdma_loop_now(v->dev.loop),
						   v->b.record_ms, v->b.max_conns);
	if (cut > 0) {
		v->st.handshake_timeouts += (uint64_t)cut;
		RPCRDMA__TRACE(RPCRDMA_TRACE_CONN, RPCRDMA_TEV_DISCONNECT, 0, 0, -ETIMEDOUT, 0,
			       "%d connection(s) cut before their request came", cut);
	}
	rpcrdma__timer_start(v->dev.loop, &v->stale_tick, v->b.tick_ms, stale_tick, v);
}
static void svc_close(struct rpcrdma__xsvc *v);

/* Hands @pc to the transport of its device on this loop, which is opened
 * the first time the device shows up.  Returns 0 once handed over. */
static int route_to_device(struct rpcrdma__xsvc *v, struct rpcrdma_prov_conn *pc)
{
	struct rpcrdma__xsvc *d;
	int rc;

	for (d = v->devs; d; d = d->dev_next) {
		rc = rpcrdma__provider_conn_handoff(pc, d->dev.prov, d);
		if (rc != -EOPNOTSUPP)
			return rc; /* handed over, or failed for another reason */
	}
	if (!pc->local_addrlen)
		return -EADDRNOTAVAIL;
	if (v->ndevs >= XSVC_DEVICES_MAX)
		return -EMFILE;
	rc = svc_open(v->dev.loop, (const struct sockaddr *)&pc->local_addr, pc->local_addrlen,
		      &v->sopts, v->cb, v->cb_ctx, &d);
	if (rc)
		return rc;
	if (d->wild) {
		/* The request's address gave no device either. */
		svc_close(d);
		return -ENODEV;
	}
	d->acct = v->acct;
	d->dev_next = v->devs;
	v->devs = d;
	v->ndevs++;
	v->st.devices_opened++;
	RPCRDMA__TRACE(RPCRDMA_TRACE_CONN, RPCRDMA_TEV_ACCEPT, 0, 0, v->ndevs, 0,
		       "opened device %u of a wildcard listener", v->ndevs);
	return rpcrdma__provider_conn_handoff(pc, d->dev.prov, d);
}

/*
 * max_recv_total: the credits @sc may grant, from what the server's
 * budget can reserve for its receive buffers.  False: not even the
 * fewest fit; refuse it.
 */
static bool recv_reserve(struct rpcrdma__xsvc *v, struct rpcrdma__xsconn *sc)
{
	uint32_t fewest = v->credits < XSVC_CREDITS_MIN ? v->credits : XSVC_CREDITS_MIN;
	size_t min = (size_t)XSVC_RECVS_FOR(fewest) * v->inline_recv;
	size_t full = (size_t)XSVC_RECVS_FOR(v->credits) * v->inline_recv;
	size_t got, bufs;

	sc->credits = v->credits;
	if (!sc->admitted || !v->cb->recv_reserve)
		return true;
	/* Memory the pool holds and max_recv_total already counts (draining
	 * slabs) is this connection's first: it asks only for the rest. */
	if (v->recv_excess >= full) {
		got = full;
		v->recv_excess -= full;
	} else {
		size_t covered = v->recv_excess;
		size_t more = v->cb->recv_reserve(v->cb_ctx, min > covered ? min - covered : 0,
						  full - covered, min);

		if (!more && min > covered)
			return false;
		got = covered + more;
		v->recv_excess = 0;
	}
	sc->recv_reserved = got;
	v->recv_reserved += got;
	rpcrdma__xsvc_recv_recharge(v);
	bufs = got / v->inline_recv;
	if (bufs < XSVC_RECVS_FOR(v->credits)) {
		sc->credits = bufs > XSVC_RECVS_FOR(fewest) ? (uint32_t)(bufs - 4) / 2 : fewest;
		v->st.recv_credits_cut++;
	}
	return true;
}

void rpcrdma__xsvc_recv_unreserve(struct rpcrdma__xsconn *sc)
{
	struct rpcrdma__xsvc *v = sc->svc;
	size_t keep;

	if (!sc->recv_reserved)
		return;
	v->cb->recv_unreserve(v->cb_ctx, sc->recv_reserved);
	v->recv_reserved -= sc->recv_reserved;
	sc->recv_reserved = 0;
	if (v->destroying)
		return; /* the pool goes whole */
	/* What the connections left may take, and one newcomer at full
	 * credits, stay registered; a flood gone gives the rest back, and
	 * what cannot go yet counts (the pool's resized hook). */
	keep = v->recv_reserved / v->inline_recv + XSVC_RECVS_FOR(v->credits);
	rpcrdma__xrecv_pool_trim(&v->pool, keep > UINT32_MAX ? UINT32_MAX : (uint32_t)keep);
	rpcrdma__xsvc_recv_recharge(v);
}

void rpcrdma__xsvc_recv_recharge(struct rpcrdma__xsvc *v)
{
	/* One newcomer's buffers, rounded up to whole slabs, are the
	 * transport's own; trim keeps the pool within that beside the
	 * reservations. */
	size_t own = (size_t)(XSVC_RECVS_FOR(v->credits) + RPCRDMA__XRECV_SLAB) * v->inline_recv;
	size_t held = (size_t)v->pool.total * v->inline_recv;
	size_t allowed = v->recv_reserved + own;
	size_t excess = held > allowed ? held - allowed : 0;

	if (v->destroying || v->partner || !v->cb->recv_charge || !v->cb->recv_unreserve)
		return;
	if (excess > v->recv_excess)
		v->cb->recv_charge(v->cb_ctx, excess - v->recv_excess);
	else if (excess < v->recv_excess)
		v->cb->recv_unreserve(v->cb_ctx, v->recv_excess - excess);
	v->recv_excess = excess;
}

static void pool_resized(struct rpcrdma__xrecv_pool *pool)
{
	rpcrdma__xsvc_recv_recharge(
	    (struct rpcrdma__xsvc *)(void *)((char *)pool - offsetof(struct rpcrdma__xsvc, pool)));
}

static void on_connect_request(struct rpcrdma__xsvc *v, const struct rpcrdma_prov_event *ev)
{
	struct rpcrdma_prov_conn *pc = ev->conn;
	uint8_t pd[RPCRDMA_CM_PRIVATE_SIZE];
	struct rpcrdma__xsconn *sc;
	enum rpcrdma__svc_admit admit;
	bool admitted;
	size_t pdlen;
	int rc;

	/*
	 * max_conns: the listener admits (a request handed to a worker,
	 * listener NULL, was admitted there), by closing an idle connection
	 * if it must; refused at the connection manager, before anything is
	 * allocated for it, when every connection has a call in progress.
	 */
	if (ev->listener) {
		admitted = v->cb->conn_admit != NULL;
		admit = admitted && !v->destroying ? v->cb->conn_admit(v->cb_ctx)
						   : RPCRDMA__SVC_ADMITTED;
		if (admitted && (v->destroying || admit == RPCRDMA__SVC_REFUSED)) {
			v->st.conns_refused += !v->destroying;
			(void)rpcrdma__provider_reject(pc, NULL, 0);
			rpcrdma__provider_conn_destroy(pc);
			return;
		}
		v->st.conns_evicted += admit == RPCRDMA__SVC_ADMITTED_EVICTING;
	} else {
		admitted = v->cb->conn_release != NULL;
	}
	if (!v->destroying && ev->listener && v->cb->place) {
		struct rpcrdma__svc_transport *to = v->cb->place(v->cb_ctx);

		/* A worker's instance takes the request over; it accepts it
		 * there (this function, on the worker's loop). */
		if (to && xsvc_of(to) != v &&
		    !rpcrdma__provider_conn_handoff(pc, xsvc_of(to)->dev.prov, to)) {
			v->st.conns_handed_off++;
			return;
		}
	}
	if (!v->destroying && v->wild) {
		/* Served by its device's transport, which accepts it there
		 * (this function again, on this loop). */
		rc = route_to_device(v, pc);
		if (!rc)
			return;
		RPCRDMA__TRACE(RPCRDMA_TRACE_CONN, RPCRDMA_TEV_DISCONNECT, 0, 0, rc, 0,
			       "request refused: no transport for its device: %s (%d)",
			       rpcrdma_strerror(rc), rc);
	}
	if (v->destroying || v->wild || !(sc = calloc(1, sizeof(*sc)))) {
		(void)rpcrdma__provider_reject(pc, NULL, 0);
		rpcrdma__provider_conn_destroy(pc);
		if (admitted && v->cb->conn_release)
			v->cb->conn_release(v->cb_ctx);
		return;
	}
	sc->admitted = admitted;
	sc->svc = v;
	if (!recv_reserve(v, sc)) {
		v->st.recv_budget_refused++;
		v->st.conns_refused++;
		RPCRDMA__TRACE(RPCRDMA_TRACE_CONN, RPCRDMA_TEV_DISCONNECT, 0, 0, -ENOBUFS, 0,
			       "request refused: max_recv_total has no room for %u credits",
			       v->credits < XSVC_CREDITS_MIN ? v->credits : XSVC_CREDITS_MIN);
		free(sc);
		(void)rpcrdma__provider_reject(pc, NULL, 0);
		rpcrdma__provider_conn_destroy(pc);
		if (admitted && v->cb->conn_release)
			v->cb->conn_release(v->cb_ctx);
		return;
	}
	sc->lru.evict = conn_evict;
	sc->c.dev = &v->dev;
	sc->c.pc = pc;
	sc->c.gen = 1;
	sc->c.id = rpcrdma__trace_conn_id();
	sc->c.vers = RPCRDMA_VERSION_ONE;
	sc->c.pool = &v->pool;
	sc->c.on_recv = rpcrdma__xsvc_on_recv;
	sc->c.st = &v->st;
	sc->c.owner = sc;
	sc->c.sq_depth = pc->attr.send_depth;
	sc->c.rd_depth = pc->attr.read_depth ? pc->attr.read_depth : 1;
	sc->c.state = RPCRDMA__XCONN_CONNECTING;
	sc->next = v->conns;
	if (v->conns)
		v->conns->prev = sc;
	v->conns = sc;
	pc->ctx = sc;
	/* RFC 8797: the requester's receive size bounds our replies; none
	 * sent means 1024 (RFC 8166 3.3.3). */
	rpcrdma__xconn_negotiate(&sc->c, ev->private_len ? ev->private_data : NULL, ev->private_len,
				 v->inline_send, v->inline_recv);
	/* ORDER: receives before accept: the requester may send the moment
	 * it sees the connection (provider.h). */
	rc = rpcrdma__xconn_fill_recvs(&sc->c, sc->credits);
	if (!rc) {
		/* We never take Send With Invalidate as a responder. */
		pdlen =
		    rpcrdma__xconn_private(v->inline_send, v->inline_recv, false, pd, sizeof(pd));
		rc = rpcrdma__provider_accept(pc, pd, pdlen);
	} else {
		(void)rpcrdma__provider_reject(pc, NULL, 0);
	}
	if (rc) {
		/* Rejected; receives come back flushed, no terminal event. */
		sc->c.state = RPCRDMA__XCONN_DOWN;
		rpcrdma__provider_conn_destroy(pc);
		sc->c.pc = NULL;
		rpcrdma__xsvc_conn_try_free(sc);
		return;
	}
	/* The handshake, too, must finish within record_timeout_ms. */
	sc->last_rx = rpcrdma_loop_now(v->dev.loop);
	rpcrdma__timer_start(v->dev.loop, &sc->tick, v->b.tick_ms, conn_tick, sc);
	/* Nothing in progress yet: a newcomer at max_conns may close it. */
	rpcrdma__xsvc_lru_update(sc);
}

static void on_event(struct rpcrdma__xdev *dev, const struct rpcrdma_prov_event *ev)
{
	struct rpcrdma__xsvc *v = dev->ctx;
	struct rpcrdma__xsconn *sc;

	switch (ev->type) {
	case RPCRDMA_PEV_CONNECT_REQUEST:
		if (ev->conn)
			on_connect_request(v, ev);
		return;
	case RPCRDMA_PEV_ESTABLISHED:
		sc = ev->conn ? ev->conn->ctx : NULL;
		if (!sc || sc->c.state != RPCRDMA__XCONN_CONNECTING)
			return;
		sc->c.state = RPCRDMA__XCONN_UP;
		sc->c.sq_depth = ev->conn->attr.send_depth;
		/* A share of the send queue for reverse calls (RFC 8167). */
		sc->c.bc_sq_share = sc->c.sq_depth > 2 * RPCRDMA__BC_SQ_SHARE ? RPCRDMA__BC_SQ_SHARE
									      : sc->c.sq_depth / 2;
		sc->c.sq_depth -= sc->c.bc_sq_share;
		/* The peer's IRD, as the provider agreed it. */
		sc->c.rd_depth = ev->conn->attr.read_depth ? ev->conn->attr.read_depth : 1;
		if (!v->partner) {
			sc->last_rx = rpcrdma_loop_now(v->dev.loop);
			rpcrdma__timer_start(v->dev.loop, &sc->tick, v->b.tick_ms, conn_tick, sc);
		}
		RPCRDMA__TRACE(RPCRDMA_TRACE_CONN, RPCRDMA_TEV_ACCEPT, sc->c.id, 0, 0, 0,
			       "accepted, inline send %u recv %u", sc->c.thr.send_max,
			       sc->c.thr.recv_max);
		return;
	case RPCRDMA_PEV_DISCONNECTED:
	case RPCRDMA_PEV_CONNECT_ERROR:
	case RPCRDMA_PEV_REJECTED:
		sc = ev->conn ? ev->conn->ctx : NULL;
		if (sc && sc->c.state != RPCRDMA__XCONN_DOWN)
			RPCRDMA__TRACE(RPCRDMA_TRACE_CONN, RPCRDMA_TEV_DISCONNECT, sc->c.id, 0,
				       ev->error, 0, "connection lost: %s (%d)",
				       rpcrdma_strerror(ev->error ? ev->error : -ECONNRESET),
				       ev->error);
		if (sc)
			rpcrdma__xsvc_conn_down(sc);
		return;
	case RPCRDMA_PEV_DEVICE_ERROR:
		if (ev->listener)
			return;
		/* The instance is dead: every connection with it. */
		for (sc = v->conns; sc;) {
			struct rpcrdma__xsconn *next = sc->next;

			rpcrdma__xsvc_conn_down(sc);
			sc = next;
		}
		return;
	default:
		return;
	}
}

/*
 * The transport ops.
 */
/* The transport without a listener: its own provider instance on @addr's device. */
static int svc_open(struct rpcrdma_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		    const struct rpcrdma_server_opts *opts, const struct rpcrdma__svc_cb *cb,
		    void *cb_ctx, struct rpcrdma__xsvc **out)
{
	uint32_t vers_low, vers_high;
	struct rpcrdma__xsvc *v;
	int rc;

	if (!loop || !addr || !opts || !cb || !cb->call || !out)
		return -EINVAL;
	vers_low = opts->min_vers ? opts->min_vers : RPCRDMA_VERSION_ONE;
	vers_high = opts->max_vers ? opts->max_vers : RPCRDMA_VERSION_TWO;
	if (vers_low > vers_high || vers_high > RPCRDMA_VERSION_TWO)
		return -EPROTONOSUPPORT;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->cb = cb;
	v->cb_ctx = cb_ctx;
	v->acct = v;
	v->credits = opts->credits ? opts->credits : RPCRDMA__XPRT_SVC_CREDITS_DEFAULT;
	v->vers_low = vers_low;
	v->vers_high = vers_high;
	v->accept_msgp = opts->accept_msgp;
	rpcrdma__opt_registry_init(&v->opts);
	(void)rpcrdma__opt_register(&v->opts, &rpcrdma__xprops_feature, &v->opt_ctx);

	rc = rpcrdma__xdev_open(&v->dev, loop,
				opts->provider ? opts->provider : RPCRDMA__XPRT_PROVIDER_DEFAULT,
				addr, addrlen, on_event, v);
	if (rc) {
		free(v);
		return rc;
	}
	v->inline_send = rpcrdma__xprt_inline_size(opts->inline_send,
						   rpcrdma__xprt_inline_default(v->dev.prov));
	v->inline_recv = rpcrdma__xprt_inline_size(opts->inline_recv,
						   rpcrdma__xprt_inline_default(v->dev.prov));
	v->rbuf_usual = rpcrdma__bufpool_cap(v->inline_send);
	/* What each device's transport is opened with (route_to_device);
	 * the provider's name is ours, the caller's string may go. */
	v->wild = (v->dev.prov->caps.flags & RPCRDMA_PCAP_LISTEN_ONLY) != 0;
	v->sopts = *opts;
	snprintf(v->provider, sizeof(v->provider), "%s",
		 opts->provider ? opts->provider : RPCRDMA__XPRT_PROVIDER_DEFAULT);
	v->sopts.provider = v->provider;
	/* Room for the receives of reverse replies too (RFC 8167 4.3.2). */
	if (v->dev.prov->caps.max_recv_depth > 4 + 2 * RPCRDMA__BC_CREDITS_MAX &&
	    v->credits > v->dev.prov->caps.max_recv_depth - 4 - RPCRDMA__BC_CREDITS_MAX)
		v->credits = v->dev.prov->caps.max_recv_depth - 4 - RPCRDMA__BC_CREDITS_MAX;
	else if (v->dev.prov->caps.max_recv_depth > 4 &&
		 v->credits > v->dev.prov->caps.max_recv_depth - 4)
		v->credits = v->dev.prov->caps.max_recv_depth - 4;
	/* A budget below one connection's fewest receives refuses every
	 * connection at the connection manager: nothing could be served. */
	if (opts->max_recv_total) {
		uint32_t fewest = v->credits < XSVC_CREDITS_MIN ? v->credits : XSVC_CREDITS_MIN;
		size_t floor = (size_t)XSVC_RECVS_FOR(fewest) * v->inline_recv;

		if (opts->max_recv_total < floor) {
			RPCRDMA__TRACE_BAD_ARG(-EINVAL,
					       "rpcrdma_server_opts.max_recv_total = %zu: below %zu "
					       "(the fewest credits, %u, hold %u receive buffers "
					       "of inline_recv, %u bytes)",
					       opts->max_recv_total, floor, fewest,
					       XSVC_RECVS_FOR(fewest), v->inline_recv);
			rpcrdma__xdev_close(&v->dev);
			free(v);
			return -EINVAL;
		}
	}
	rpcrdma_hdr_limits_default(&v->lim);
	v->lim.vers_low = v->vers_low;
	v->lim.vers_high = v->vers_high;
	v->lim.max_hdr_size = v->inline_recv;
	rpcrdma__xrecv_pool_init(&v->pool, v->dev.prov, v->inline_recv, UINT32_MAX);
	v->pool.resized = pool_resized;
	rpcrdma__svc_bounds_of(opts, cb, cb_ctx, &v->b);
	/* Kept landing buffers, too, within the transport's share. */
	v->rd_spares.max_bytes = XSVC_RD_SPARES_MAX < v->b.max_read_bytes ? XSVC_RD_SPARES_MAX
									 : v->b.max_read_bytes;
	v->free_bytes_max = XSVC_KEPT_BYTES / v->b.cores;
	v->max_call = opts->max_record ? opts->max_record : RPCRDMA__SVC_MAX_RECORD_DEFAULT;
	if (v->max_call > RPCRDMA__XPRT_MAX_MSG)
		v->max_call = RPCRDMA__XPRT_MAX_MSG;
	v->conn_read_budget = XSCONN_READ_CALLS * v->max_call;
	if (v->conn_read_budget > v->b.max_read_bytes)
		v->conn_read_budget = v->b.max_read_bytes;
	*out = v;
	return 0;
}

static void svc_close(struct rpcrdma__xsvc *v)
{
	/* The devices' transports are destroyed first (op_destroy). */
	rpcrdma__timer_stop(&v->rd_kick);
	rpcrdma__timer_stop(&v->stale_tick);
	rpcrdma__xbuf_spares_free(&v->rd_spares);
	rpcrdma__xrecv_pool_destroy(&v->pool);
	if (v->recv_excess && v->cb && v->cb->recv_unreserve)
		v->cb->recv_unreserve(v->cb_ctx, v->recv_excess);
	if (!v->partner) /* a partner borrows its owner's */
		rpcrdma__xdev_close(&v->dev);
	free(v);
}

static int op_listen(struct rpcrdma_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		     const struct rpcrdma_server_opts *opts, const struct rpcrdma__svc_cb *cb,
		     void *cb_ctx, struct rpcrdma__svc_transport **out)
{
	struct rpcrdma_prov_conn_attr attr = {0};
	struct rpcrdma__xsvc *v;
	int rc = svc_open(loop, addr, addrlen, opts, cb, cb_ctx, &v);

	if (rc)
		return rc;
	/* A call needs a Send and a few Writes; its Reads go one by one.
	 * Reverse calls (RFC 8167) get a share of the send queue and
	 * receives for their replies (4.3.2). */
	attr.send_depth = 4 * v->credits + 16 + RPCRDMA__BC_SQ_SHARE;
	attr.recv_depth = v->credits + 4 + RPCRDMA__BC_CREDITS_MAX;
	rc = rpcrdma__provider_listen(v->dev.prov, addr, addrlen, 64, &attr, v, &v->lst);
	if (rc) {
		svc_close(v);
		return rc;
	}
	if (rpcrdma__provider_can_cut_stale(v->lst))
		rpcrdma__timer_start(loop, &v->stale_tick, v->b.tick_ms, stale_tick, v);
	*out = (struct rpcrdma__svc_transport *)(void *)v;
	return 0;
}

static int op_worker(struct rpcrdma_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		     const struct rpcrdma_server_opts *opts, const struct rpcrdma__svc_cb *cb,
		     void *cb_ctx, struct rpcrdma__svc_transport **out)
{
	struct rpcrdma__xsvc *v;
	int rc = svc_open(loop, addr, addrlen, opts, cb, cb_ctx, &v);

	if (!rc)
		*out = (struct rpcrdma__svc_transport *)(void *)v;
	return rc;
}

static int op_port(struct rpcrdma__svc_transport *t)
{
	struct rpcrdma__xsvc *v = xsvc_of(t);
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int rc;

	if (!v->lst)
		return -ENOTCONN;
	rc = rpcrdma__provider_listener_addr(v->lst, &ss, &len);
	if (rc)
		return rc;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/* destroy: finish replies in progress, for at most this long. */
#define XSVC_FINISH_MS 1000

static bool replies_in_flight(const struct rpcrdma__xsvc *v)
{
	for (const struct rpcrdma__xsconn *sc = v->conns; sc; sc = sc->next) {
		if (sc->c.pc && sc->c.state == RPCRDMA__XCONN_UP && (sc->tx_head || sc->c.sq_used))
			return true;
	}
	return false;
}

static void op_destroy(struct rpcrdma__svc_transport *t)
{
	struct rpcrdma__xsvc *v = xsvc_of(t);
	struct rpcrdma__xsreq *s;
	struct rpcrdma__xsconn *sc;

	if (!v)
		return;
	v->destroying = true;
	rpcrdma__timer_stop(&v->stale_tick);
	if (v->lst) {
		rpcrdma__provider_listener_close(v->lst);
		v->lst = NULL;
	}
	/* ORDER: the devices' transports before our instance: requests
	 * handed to them and not yet taken are refused as they close. */
	while (v->devs) {
		struct rpcrdma__xsvc *d = v->devs;

		v->devs = d->dev_next;
		v->ndevs--;
		op_destroy((struct rpcrdma__svc_transport *)(void *)d);
	}
	/* Replies already handed to the provider get their chance to leave;
	 * no callback reaches the core meanwhile (destroying). */
	for (int i = 0;
	     !v->partner && i < XSVC_FINISH_MS / 5 && replies_in_flight(v) && !v->dev.failed; i++) {
		struct pollfd pfd = {.fd = rpcrdma__provider_fd(v->dev.prov), .events = POLLIN};

		if (!rpcrdma__xdev_drain(&v->dev, 256))
			(void)poll(&pfd, 1, 5);
	}
	for (sc = v->conns; sc; sc = sc->next) {
		if (sc->bc)
			sc->bc_down(sc->bc);
		if (sc->c.pc && !v->partner)
			rpcrdma__provider_conn_destroy(sc->c.pc);
		sc->c.pc = NULL;
	}
	while ((s = v->all)) {
		void (*done)(void *) = s->sreq.done;

		rpcrdma__xsvc_sreq_unlink_all(v, s);
		if (s->r)
			rpcrdma__xrecv_put(&v->pool, s->r);
		rpcrdma__xsvc_sreq_free_bufs(s);
		/* The connections are gone, so nothing reads the results: the
		 * core may free them (transport.h: done exactly once). */
		if (done)
			done(s->sreq.done_ctx);
		free(s);
	}
	while ((sc = v->conns)) {
		v->conns = sc->next;
		if (sc->lru.listed)
			(void)v->cb->conn_busy(v->cb_ctx, &sc->lru);
		rpcrdma__timer_stop(&sc->tick);
		rpcrdma__xsvc_hold_drop(sc);
		rpcrdma__xsvc_recv_unreserve(sc);
		if (sc->admitted && v->cb->conn_release)
			v->cb->conn_release(v->cb_ctx);
		free(sc);
	}
	/* ORDER: after the last poll, before the instance closes (they
	 * deregister their memory). */
	rpcrdma__xdev_reap(&v->dev, true);
	svc_close(v);
}

/* @acc += @one; the gauges take the larger value instead. */
static void stats_fold(struct rpcrdma_xprt_stats *acc, const struct rpcrdma_xprt_stats *one)
{
	struct rpcrdma_xprt_stats g = *acc;

#define XSVC_MAX(name) g.name = acc->name > one->name ? acc->name : one->name;
	XSVC_MAX(credits_granted)
	XSVC_MAX(credits_in_use_max)
	XSVC_MAX(rev_credits_granted)
	XSVC_MAX(rev_credits_in_use_max)
	XSVC_MAX(read_bytes_max)
#define XSVC_ADD(name) acc->name += one->name;
	RPCRDMA_XPRT_STATS(XSVC_ADD)
#undef XSVC_ADD
	acc->credits_granted = g.credits_granted;
	acc->credits_in_use_max = g.credits_in_use_max;
	acc->rev_credits_granted = g.rev_credits_granted;
	acc->rev_credits_in_use_max = g.rev_credits_in_use_max;
	acc->read_bytes_max = g.read_bytes_max;
#undef XSVC_MAX
}

static void op_stats(struct rpcrdma__svc_transport *t, struct rpcrdma_xprt_stats *out)
{
	struct rpcrdma__xsvc *v = xsvc_of(t);

	*out = v->st;
	out->reply_bytes_kept = v->free_bytes;
	rpcrdma__xdev_add_stats(&v->dev, out);
	for (struct rpcrdma__xsconn *sc = v->conns; sc; sc = sc->next)
		out->recvs_posted_now += sc->c.recv_posted;
	if (!v->partner)
		out->recv_pool_bytes_now = (uint64_t)v->pool.total * v->inline_recv;
	for (struct rpcrdma__xsvc *d = v->devs; d; d = d->dev_next) {
		struct rpcrdma_xprt_stats one;

		op_stats((struct rpcrdma__svc_transport *)(void *)d, &one);
		stats_fold(out, &one);
	}
}

struct rpcrdma_provider *rpcrdma__xprt_svc_provider(struct rpcrdma__svc_transport *t)
{
	return t ? xsvc_of(t)->dev.prov : NULL;
}

const struct rpcrdma__svc_transport_ops rpcrdma__rdma_svc_ops = {
    .name = "rdma",
    .listen = op_listen,
    .worker = op_worker,
    .port = op_port,
    .reply_begin = rpcrdma__xsvc_op_reply_begin,
    .reply_send = rpcrdma__xsvc_op_reply_send,
    .reply_drop = rpcrdma__xsvc_op_reply_drop,
    .reply_lost = rpcrdma__xsvc_op_reply_lost,
    .destroy = op_destroy,
    .stats = op_stats,
};

void *rpcrdma__xsvc_req_conn(struct rpcrdma__sreq *sreq)
{
	struct rpcrdma__xsreq *s = sreq ? sreq->tpriv : NULL;

	if (!s || !s->conn || s->conn->svc->partner || s->conn->c.state != RPCRDMA__XCONN_UP)
		return NULL;
	return s->conn;
}

void *rpcrdma__xsvc_conn_bc(void *conn)
{
	return conn ? ((struct rpcrdma__xsconn *)conn)->bc : NULL;
}

struct rpcrdma__svc_transport *rpcrdma__xsvc_conn_home(void *conn)
{
	return conn ? (struct rpcrdma__svc_transport *)(void *)((struct rpcrdma__xsconn *)conn)->svc
		    : NULL;
}

int rpcrdma__xsvc_conn_bind(void *conn, struct rpcrdma__xpartner *partner, void (*down)(void *bc),
			    void *bc)
{
	struct rpcrdma__xsconn *sc = conn;
	struct rpcrdma__xsvc *v = sc->svc;

	if (!partner) {
		sc->bc_req = NULL;
		sc->bc_down = NULL;
		sc->bc = NULL;
		sc->bc_recvs = 0;
		rpcrdma__xsvc_lru_update(sc); /* idle again, maybe */
		return 0;
	}
	if (sc->bc && sc->bc != bc)
		return -EBUSY;
	if (sc->c.state != RPCRDMA__XCONN_UP || !sc->c.pc)
		return -ENOTCONN;
	sc->bc = bc;
	sc->bc_down = down;
	sc->bc_req = partner;
	sc->bc_recvs = partner->ops->credits(partner);
	/* Its replies need receives whatever max_recv_total says (a
	 * backchannel's credits are fixed when it is made); counted in it,
	 * once per connection, so the next connections see less room. */
	if (sc->admitted && v->cb->recv_charge &&
	    (size_t)sc->bc_recvs * v->inline_recv > sc->bc_charged) {
		size_t more = (size_t)sc->bc_recvs * v->inline_recv - sc->bc_charged;

		v->cb->recv_charge(v->cb_ctx, more);
		sc->bc_charged += more;
		sc->recv_reserved += more;
		v->recv_reserved += more;
	}
	/* ORDER: the receives for the replies are posted before the first
	 * reverse call can leave (RFC 8167 4.3.2). */
	rpcrdma__xsvc_refill(sc);
	partner->ops->attach(partner, &sc->c);
	/* Off the eviction list (normally already: bound from a call). */
	rpcrdma__xsvc_lru_update(sc);
	return 0;
}

struct rpcrdma__xdev *rpcrdma__xsvc_dev(struct rpcrdma__svc_transport *t)
{
	return &xsvc_of(t)->dev;
}

void rpcrdma__xsvc_inline(struct rpcrdma__svc_transport *t, uint32_t *send, uint32_t *recv)
{
	*send = xsvc_of(t)->inline_send;
	*recv = xsvc_of(t)->inline_recv;
}
