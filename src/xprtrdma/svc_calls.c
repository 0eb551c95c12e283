/*
 * The responder's call and connection objects (svc.h): getting and
 * releasing a call (its buffers, its Read-chunk budget, its place in the
 * send accounting), freeing a connection once nothing refers to it,
 * keeping receives posted for the grant, and calls held back while a
 * connection's replies drain.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace.h"
#include "xprtrdma/svc.h"

static void hold_release(struct rpcrdma__timer *tm);

/*
 * Objects.
 */
void rpcrdma__xsvc_lru_update(struct rpcrdma__xsconn *sc)
{
	struct rpcrdma__xsvc *v = sc->svc;
	/* A bound backchannel makes it busy too: reverse calls may be out on
	 * it at any time (they wait on the client, not on us), and closed,
	 * its client cannot be called back until it reconnects and its upper
	 * layer binds again (backchannel.h). */
	/* Calls whose Read chunks are still being read are no calls taken
	 * in (rpcrdma__xsvc_read_phase_end): deliver() takes the connection
	 * off the list before the core sees one. */
	bool open = !sc->closing && !v->destroying && sc->c.pc && !sc->bc_req;
	bool idle = open && sc->sreqs == sc->reading && !sc->hold_head &&
		    (sc->c.state == RPCRDMA__XCONN_UP || sc->c.state == RPCRDMA__XCONN_CONNECTING);
	/* Only replies posted or queued to post, besides calls still
	 * reading (taken in by nobody) and calls held in their receive
	 * buffers (nothing ran: they go with the connection, and their
	 * requester sends them again). */
	bool stalled = open && sc->tx_pending && sc->sreqs == sc->reading + sc->tx_pending &&
		       sc->c.state == RPCRDMA__XCONN_UP && v->cb->conn_stalled;
	struct rpcrdma__svc_lru_entry *e = &sc->lru;

	if (!sc->admitted || v->partner || !v->cb->conn_idle)
		return;
	if (idle && (!e->listed || e->stalled)) {
		e->stalled = false;
		v->cb->conn_idle(v->cb_ctx, e);
	} else if (stalled && (!e->listed || !e->stalled || e->stalled_since != sc->tx_since)) {
		e->stalled = true;
		e->stalled_since = sc->tx_since;
		v->cb->conn_stalled(v->cb_ctx, e, e->stalled_since);
	} else if (!idle && !stalled && e->listed) {
		(void)v->cb->conn_busy(v->cb_ctx, e);
	}
}

void rpcrdma__xsvc_read_phase_end(struct rpcrdma__xsreq *s)
{
	if (s->state != SREQ_READING)
		return;
	s->state = SREQ_IDLE;
	if (s->conn && s->conn->reading)
		s->conn->reading--;
}

void rpcrdma__xsvc_conn_try_free(struct rpcrdma__xsconn *sc)
{
	struct rpcrdma__xsvc *v = sc->svc;

	rpcrdma__xsvc_lru_update(sc);
	if (sc->c.pc || sc->sreqs || sc->c.ops_out)
		return;
	rpcrdma__timer_stop(&sc->tick);
	rpcrdma__timer_stop(&sc->hold_kick);
	if (sc->rd_blocked && v->acct->rd_blocked)
		v->acct->rd_blocked--;
	rpcrdma__xsvc_recv_unreserve(sc);
	if (sc->admitted && v->cb->conn_release)
		v->cb->conn_release(v->cb_ctx);
	if (sc->prev)
		sc->prev->next = sc->next;
	else
		v->conns = sc->next;
	if (sc->next)
		sc->next->prev = sc->prev;
	free(sc);
}

void rpcrdma__xsvc_sreq_unlink_all(struct rpcrdma__xsvc *v, struct rpcrdma__xsreq *s)
{
	if (s->all_prev)
		s->all_prev->all_next = s->all_next;
	else
		v->all = s->all_next;
	if (s->all_next)
		s->all_next->all_prev = s->all_prev;
	s->all_prev = s->all_next = NULL;
}

void rpcrdma__xsvc_sreq_free_bufs(struct rpcrdma__xsreq *s)
{
	rpcrdma__ddp_resp_free(&s->rddp);
	rpcrdma__xbuf_free(&s->rdbuf);
	rpcrdma__xbuf_free(&s->sbuf);
	rpcrdma__xbuf_free(&s->rbuf);
}

/*
 * What an answered request keeps for the next call beyond what every
 * request has (a reply buffer of inline_send, and a header buffer as
 * large as a call's header, bounded by inline_recv: a working set the
 * configuration fixes): a reply buffer grown for a Long
 * Reply and the copy buffers of its results.  The landing buffer went to
 * rd_spares.
 */
static size_t sreq_extra_bytes(const struct rpcrdma__xsvc *v, const struct rpcrdma__xsreq *s)
{
	return (s->rbuf.len > v->rbuf_usual ? s->rbuf.len : 0) +
	       rpcrdma__ddp_resp_kept(&s->rddp);
}

struct rpcrdma__xsreq *rpcrdma__xsvc_sreq_get(struct rpcrdma__xsvc *v, struct rpcrdma__xsconn *sc)
{
	struct rpcrdma__xsreq *s = v->free;

	if (s) {
		v->free = s->next;
		v->nfree--;
		v->free_bytes -= s->kept;
		v->acct->kept_loop -= s->kept;
	} else {
		s = calloc(1, sizeof(*s));
		if (!s)
			return NULL;
		s->all_next = v->all;
		if (v->all)
			v->all->all_prev = s;
		v->all = s;
	}
	s->next = NULL;
	s->conn = sc;
	s->state = SREQ_IDLE;
	s->counted = false;
	s->r = NULL;
	s->msgp = false;
	s->nrops = s->rop_next = s->reads_left = 0;
	s->rd_total = 0;
	s->rd_charged = false;
	s->rd_waited = false;
	s->rl_linked = false;
	s->rl_prev = s->rl_next = NULL;
	s->tx_counted = false;
	s->tx_cost = 0;
	s->read_err = false;
	s->begun = false;
	s->writes_left = 0;
	s->send_busy = false;
	s->rddp.nresults = 0;
	memset(&s->sreq, 0, sizeof(s->sreq));
	s->sreq.tpriv = s;
	if (sc->c.pc && sc->c.pc->peer_addrlen) {
		memcpy(&s->peer, &sc->c.pc->peer_addr, sc->c.pc->peer_addrlen);
		s->sreq.peer = (const struct sockaddr *)&s->peer;
	}
	sc->sreqs++;
	return s;
}

/* The calls of a connection whose Reads are out (record_timeout_ms). */
void rpcrdma__xsvc_rl_add(struct rpcrdma__xsconn *sc, struct rpcrdma__xsreq *s)
{
	s->rl_next = NULL;
	s->rl_prev = sc->rl_tail;
	if (sc->rl_tail)
		sc->rl_tail->rl_next = s;
	else
		sc->rl_head = s;
	sc->rl_tail = s;
	s->rl_linked = true;
}

void rpcrdma__xsvc_rl_remove(struct rpcrdma__xsconn *sc, struct rpcrdma__xsreq *s)
{
	if (!s->rl_linked)
		return;
	if (s->rl_prev)
		s->rl_prev->rl_next = s->rl_next;
	else
		sc->rl_head = s->rl_next;
	if (s->rl_next)
		s->rl_next->rl_prev = s->rl_prev;
	else
		sc->rl_tail = s->rl_prev;
	s->rl_prev = s->rl_next = NULL;
	s->rl_linked = false;
}

/* @t's connections that waited for @a's Read-chunk budget try again. */
static void rd_kick_conns(struct rpcrdma__xsvc *a, struct rpcrdma__xsvc *t)
{
	for (struct rpcrdma__xsconn *sc = t->conns, *next; sc && a->rd_blocked; sc = next) {
		next = sc->next;
		if (!sc->rd_blocked)
			continue;
		sc->rd_blocked = false;
		a->rd_blocked--;
		rpcrdma__xsvc_after_sq(sc); /* may block it again */
	}
}

/* Connections that waited for the budget counted at @tm's transport try
 * again: its own, and those of the devices' transports that count there. */
void rpcrdma__xsvc_rd_kick(struct rpcrdma__timer *tm)
{
	struct rpcrdma__xsvc *a = tm->ctx;

	rd_kick_conns(a, a);
	for (struct rpcrdma__xsvc *d = a->devs; d && a->rd_blocked; d = d->dev_next)
		rd_kick_conns(a, d);
}

/* Ends a call: every buffer back, the connection maybe freed. */
void rpcrdma__xsvc_sreq_release(struct rpcrdma__xsreq *s)
{
	struct rpcrdma__xsconn *sc = s->conn;
	struct rpcrdma__xsvc *v = sc->svc;
	void (*done)(void *) = s->sreq.done;
	void *done_ctx = s->sreq.done_ctx;

	rpcrdma__xsvc_read_phase_end(s);
	s->sreq.done = NULL;

	if (s->counted && sc->in_progress)
		sc->in_progress--;
	s->counted = false;
	if (s->r) {
		rpcrdma__xrecv_put(&v->pool, s->r);
		s->r = NULL;
		if (sc->held)
			sc->held--;
	}
	rpcrdma__ddp_resp_release(&s->rddp);
	rpcrdma__xsvc_rl_remove(sc, s);
	rpcrdma__xbuf_give(&v->rd_spares, &s->rdbuf);
	if (s->rd_charged) {
		struct rpcrdma__xsvc *a = v->acct;

		sc->rd_bytes -= s->rd_total;
		a->rd_bytes -= s->rd_total;
		/* Connections waiting for the budget go again, from a timer:
		 * not inside whatever released this call. */
		if (a->rd_blocked && !a->rd_kick.armed && !a->destroying)
			rpcrdma__timer_start(a->dev.loop, &a->rd_kick, 0, rpcrdma__xsvc_rd_kick, a);
	}
	s->rd_charged = false;
	if (s->tx_counted) {
		sc->tx_bytes -= s->tx_cost;
		rpcrdma__svc_queued_sub(&v->b, s->tx_cost);
		sc->tx_pending--;
		sc->tx_since = rpcrdma__loop_recent_ms(v->dev.loop);
	}
	s->tx_counted = false;
	/* Calls held for the queue bounds go on once there is room: a reply
	 * done, or (max_queued_total) the last call in progress gone. */
	if (sc->hold_head && !rpcrdma__xsvc_queue_full(sc) && !sc->hold_kick.armed)
		rpcrdma__timer_start(v->dev.loop, &sc->hold_kick, 0, hold_release, sc);
	if (s->rbuf.len > 4u * v->inline_send)
		rpcrdma__xbuf_free(&s->rbuf);
	s->sreq.tpriv = NULL;
	s->state = SREQ_IDLE;
	s->conn = NULL;
	/* A buffer came back: receives held back by the cap may go now. */
	rpcrdma__xsvc_refill(sc);
	sc->sreqs--;
	if (v->nfree < XSREQ_FREE_MAX) {
		s->kept = sreq_extra_bytes(v, s);
		/* Beyond the share, back to what every request keeps: a
		 * steady stream of ordinary calls never meets the bound, so
		 * it never registers again. */
		if (s->kept && v->acct->kept_loop + s->kept > v->acct->free_bytes_max) {
			if (s->rbuf.len > v->rbuf_usual)
				rpcrdma__xbuf_free(&s->rbuf);
			rpcrdma__ddp_resp_free(&s->rddp);
			s->kept = 0;
		}
		v->free_bytes += s->kept;
		v->acct->kept_loop += s->kept;
		s->next = v->free;
		v->free = s;
		v->nfree++;
	} else {
		rpcrdma__xsvc_sreq_unlink_all(v, s);
		rpcrdma__xsvc_sreq_free_bufs(s);
		free(s);
	}
	rpcrdma__xsvc_conn_try_free(sc);
	/* Nothing posted reads the results any more: the core may free them. */
	if (done)
		done(done_ctx);
}

/* RFC 8166 5.5.3 / 5.5.4: failed RDMA, or a reply we could not send. */
void rpcrdma__xsvc_conn_close(struct rpcrdma__xsconn *sc)
{
	sc->closing = true;
	if (sc->c.pc &&
	    (sc->c.state == RPCRDMA__XCONN_UP || sc->c.state == RPCRDMA__XCONN_CONNECTING))
		(void)rpcrdma__provider_disconnect(sc->c.pc);
}

void rpcrdma__xsvc_call_lost(struct rpcrdma__xsconn *sc, uint32_t xid, int err)
{
	if (sc->closing || sc->c.state != RPCRDMA__XCONN_UP)
		return;
	sc->svc->st.replies_lost++;
	RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_DISCONNECT, sc->c.id, xid, err, 0,
		       "call left unanswered: %s (%d); closing so the client sends again",
		       rpcrdma_strerror(err), err);
	rpcrdma__xsvc_conn_close(sc);
}

/* Keep the receives the grant needs posted, within what one connection
 * may hold.  Until a reply has granted credits the requester's need is
 * unknown: the configured credits are posted.  After, the most ever
 * granted, which a requester asking for fewer credits than configured
 * keeps below them: its receives, and the memory they cycle through,
 * follow what it asked for. */
void rpcrdma__xsvc_refill(struct rpcrdma__xsconn *sc)
{
	struct rpcrdma__xsvc *v = sc->svc;
	uint32_t target = (sc->grant ? sc->grant : sc->credits) + sc->bc_recvs;
	uint32_t cap = XSVC_RECVS_FOR(sc->credits) + sc->bc_recvs;
	enum rpcrdma__xsvc_full full;

	if (v->partner)
		return; /* the owner posts every receive */
	if (sc->c.state != RPCRDMA__XCONN_UP && sc->c.state != RPCRDMA__XCONN_CONNECTING)
		return;
	if (sc->held >= cap)
		return;
	/* max_conn_queued, max_queued_total: no new call is taken while the
	 * requester leaves our replies unfinished (the receives return as
	 * replies complete). */
	full = rpcrdma__xsvc_queue_full(sc);
	if (full) {
		if (!sc->paused)
			rpcrdma__xsvc_count_pause(v, full);
		sc->paused = true;
		return;
	}
	sc->paused = false;
	if (target > cap - sc->held)
		target = cap - sc->held;
	(void)rpcrdma__xconn_fill_recvs(&sc->c, target);
}

/* The calls held for max_conn_queued, taken in order while there is room. */
static void hold_release(struct rpcrdma__timer *tm)
{
	struct rpcrdma__xsconn *sc = tm->ctx;
	struct rpcrdma__xsvc *v = sc->svc;
	struct rpcrdma__xrecv *r;

	sc->sreqs++;
	while ((r = sc->hold_head) && !rpcrdma__xsvc_queue_full(sc) &&
	       sc->c.state == RPCRDMA__XCONN_UP && !v->destroying) {
		sc->hold_head = r->next;
		if (!sc->hold_head)
			sc->hold_tail = NULL;
		r->next = NULL;
		sc->held--;
		rpcrdma__xsvc_handle_call(sc, r);
	}
	sc->sreqs--;
	rpcrdma__xsvc_conn_try_free(sc);
}

/* Calls held when the connection ends go with it. */
void rpcrdma__xsvc_hold_drop(struct rpcrdma__xsconn *sc)
{
	struct rpcrdma__xrecv *r;

	while ((r = sc->hold_head)) {
		sc->hold_head = r->next;
		r->next = NULL;
		if (sc->held)
			sc->held--;
		rpcrdma__xrecv_put(&sc->svc->pool, r);
	}
	sc->hold_tail = NULL;
	rpcrdma__timer_stop(&sc->hold_kick);
}
