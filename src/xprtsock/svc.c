/*
 * svc.c - the server side of ONC RPC over TCP: a listener, its accepted
 * connections (or those handed to this worker's loop), calls read as records
 * (record.c) and replies queued in the order they are sent.
 *
 * Bounds (rpcrdma_server_opts): a connection beyond max_conns closes the
 * least recently active one that has nothing in progress (svc_lru.c; a
 * connection is listed there while it has no call taken in and no reply
 * queued, whether or not a record has begun arriving), or failing one,
 * the one whose queued reply has not left for longest, or is closed at
 * accept when every one has something; a connection
 * stops being read while its replies exceed max_conn_queued or
 * MAX_INFLIGHT calls are in progress, or while it has a call in progress
 * and the records of this transport's calls in progress fill its share
 * of max_read_bytes, which pushes back through TCP flow control; its
 * tick closes it when queued replies do not move for drain_timeout_ms,
 * when a call begun is not whole after record_timeout_ms, or when
 * nothing happens for idle_timeout_ms.  A closed connection stays
 * allocated, and keeps its place under max_conns, until each call read
 * from it is answered or dropped: the calls hold their records, so a
 * client that closes and comes back must not get a new place while they
 * do.  A close found inside a core call is carried out from a timer.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/list.h"
#include "common/trace.h"
#include "xprtsock/sock.h"

/* Calls of one connection in progress at once: their replies are what may
 * pile up beyond max_conn_queued (deferred procedures answer later), so
 * as many as the RDMA server's default credits, times two. */
#define MAX_INFLIGHT 64u
/* How long a listener out of descriptors waits before accepting again. */
#define ACCEPT_RETRY_MS 100
/* Connections accepted per readable event of the listener. */
#define ACCEPT_BURST 64

/* One accepted connection; freed when its socket and every call read from
 * it are gone (refs). */
struct svc_conn {
	struct rpcrdma__list node;          /* srv->conns while open, then srv->closed */
	struct rpcrdma__svc_transport *srv; /* NULL once the transport is gone */
	struct rpcrdma__sock_conn c;
	struct sockaddr_storage peer;
	uint32_t id;       /* trace.h connection id */
	unsigned int refs; /* the socket, plus one per call not yet released */
	unsigned int inflight;
	size_t queued_counted; /* of c.q.bytes, what the server's total holds */
	bool dead;
	bool admitted;               /* counts against max_conns (cb->conn_admit) until freed */
	struct rpcrdma__svc_lru_entry lru; /* while idle: may be closed for a newcomer */
	struct rpcrdma__timer later; /* deferred close or resume */
	int later_err;
	/* The time-outs (rpcrdma_server_opts): last bytes received, since
	 * when reading is paused, and the clock's tick.  The record time-out's
	 * clock is the reassembly's own (c.rx.rec_began). */
	uint64_t last_rx, paused_at;
	struct rpcrdma__timer tick;
};

/* A call read from a connection, until its reply is sent or dropped. */
struct svc_call {
	struct rpcrdma__sreq base;
	struct svc_conn *conn;
	uint8_t *rec;                  /* the call's record, kept until release */
	size_t rec_len;                /* counted in the transport's held_bytes */
	struct rpcrdma__sock_buf *buf; /* the reply being encoded */
};

struct rpcrdma__svc_transport {
	struct rpcrdma_loop *loop;
	int fd;
	struct rpcrdma__watch watch;
	struct rpcrdma__timer accept_retry;
	const struct rpcrdma__svc_cb *cb;
	void *cb_ctx;
	size_t max_record;
	struct rpcrdma__svc_bounds b;
	struct rpcrdma__list conns;   /* open connections, newest first */
	struct rpcrdma__list closed;  /* closed ones with calls not yet released */
	/* Bytes of the records that calls in progress hold, against
	 * b.max_read_bytes (this loop's share of the server's). */
	size_t held_bytes;
	struct rpcrdma_xprt_stats st; /* every connection's, closed ones too */
};

static void conn_put(struct svc_conn *sc)
{
	struct rpcrdma__svc_transport *srv = sc->srv;

	if (--sc->refs)
		return;
	rpcrdma__list_del(&sc->node);
	/* Its last call is released: its place under max_conns is free. */
	if (sc->admitted && srv && srv->cb->conn_release)
		srv->cb->conn_release(srv->cb_ctx);
	rpcrdma__timer_stop(&sc->later);
	rpcrdma__timer_stop(&sc->tick);
	rpcrdma__sock_conn_free(&sc->c);
	free(sc);
}

/*
 * Tell the core whether @sc may be closed for a newcomer at max_conns:
 * while no call taken in is served and no reply is queued.  A record
 * begun and not whole does not keep it off the list: the server has
 * taken nothing from it yet, so closing it loses nothing the client does
 * not send again, and a peer that keeps a record always begun (a byte
 * each record_timeout_ms) would otherwise hold its place for ever, and
 * with max_conns of them lock every later client out.  A whole call goes
 * through deliver_call's own check.  Listed when it becomes idle;
 * @received (conn_on_event, bytes read) makes it the most recent, so a
 * record arriving at speed is not the one chosen.  With no call in
 * progress and replies queued it is listed as stalled instead, since the
 * record first in the queue got there (c.head_since), again each time a
 * record leaves: a client that takes a byte of it now and then does not
 * keep its place from newcomers (svc_lru.c).  Returns false when it was
 * chosen for eviction while listed and is no longer idle: the caller
 * closes it, since the core no longer will.
 */
static bool conn_lru_update(struct svc_conn *sc, bool received)
{
	struct rpcrdma__svc_transport *srv = sc->srv;
	struct rpcrdma__svc_lru_entry *e = &sc->lru;
	bool calls_done = !sc->dead && !sc->later_err && !sc->inflight;
	bool idle = calls_done && !sc->c.q.head;
	bool stalled;

	/* Without its transport (destroyed, calls left) it is listed nowhere. */
	if (!srv || !sc->admitted || !srv->cb->conn_idle)
		return true;
	stalled = calls_done && sc->c.q.head && srv->cb->conn_stalled;
	if (idle && (!e->listed || e->stalled || received)) {
		e->stalled = false;
		srv->cb->conn_idle(srv->cb_ctx, e);
	} else if (stalled &&
		   (!e->listed || !e->stalled || e->stalled_since != sc->c.head_since)) {
		e->stalled = true;
		e->stalled_since = sc->c.head_since;
		srv->cb->conn_stalled(srv->cb_ctx, e, e->stalled_since);
	} else if (!idle && !stalled && e->listed) {
		return srv->cb->conn_busy(srv->cb_ctx, e);
	}
	return true;
}

static void conn_close(struct svc_conn *sc, int err);

/* Chosen to make room at max_conns (svc_lru.c), on our loop. */
static void conn_evict(struct rpcrdma__svc_lru_entry *e)
{
	struct svc_conn *sc = rpcrdma__container_of(e, struct svc_conn, lru);

	sc->srv->st.conns_evicted_stalled += e->chosen_stalled;
	conn_close(sc, -ECONNABORTED);
}

/* Brings the server's count of queued reply bytes up to date with @sc's
 * queue, after it grew, drained or was freed. */
static void queued_sync(struct svc_conn *sc)
{
	const struct rpcrdma__svc_bounds *b = &sc->srv->b;

	if (sc->c.q.bytes > sc->queued_counted)
		rpcrdma__svc_queued_add(b, sc->c.q.bytes - sc->queued_counted);
	else
		rpcrdma__svc_queued_sub(b, sc->queued_counted - sc->c.q.bytes);
	sc->queued_counted = sc->c.q.bytes;
}

static void conn_close(struct svc_conn *sc, int err)
{
	struct rpcrdma__svc_transport *srv = sc->srv;

	if (sc->dead)
		return;
	sc->dead = true;
	(void)conn_lru_update(sc, false);
	RPCRDMA__TRACE(RPCRDMA_TRACE_CONN, RPCRDMA_TEV_DISCONNECT, sc->id, 0, err, 0,
		       "TCP: %s: %s (%d)", err ? "connection closed" : "connection shut down",
		       rpcrdma_strerror(err), err);
	rpcrdma__sock_conn_teardown(&sc->c);
	queued_sync(sc);
	rpcrdma__timer_stop(&sc->later);
	rpcrdma__timer_stop(&sc->tick);
	/* The admission stays with the calls still held (conn_put). */
	rpcrdma__list_del(&sc->node);
	rpcrdma__list_add_head(&srv->closed, &sc->node);
	srv->cb->conn_closed(srv->cb_ctx, sc);
	conn_put(sc);
}

static bool over_queued_total(const struct svc_conn *sc)
{
	return (sc->inflight || sc->c.q.bytes) && rpcrdma__svc_over_queued_total(&sc->srv->b);
}

/*
 * The records of calls in progress fill this loop's share of
 * max_read_bytes: a connection with a call of its own in progress waits
 * for it (or for the others' to end), one with none still takes a call,
 * so the calls in progress always end and nothing waits on itself.
 */
static bool over_held_budget(const struct svc_conn *sc)
{
	return sc->inflight && sc->srv->held_bytes >= sc->srv->b.max_read_bytes;
}

static bool conn_should_pause(const struct svc_conn *sc)
{
	return sc->inflight >= MAX_INFLIGHT || sc->c.q.bytes >= sc->srv->b.max_queued ||
	       over_queued_total(sc) || over_held_budget(sc);
}

/* Stop reading @sc; a stop for replies the peer does not take is counted. */
static void conn_pause(struct svc_conn *sc)
{
	if (sc->c.q.bytes >= sc->srv->b.max_queued)
		sc->srv->st.queue_pauses++;
	else if (sc->inflight < MAX_INFLIGHT && over_queued_total(sc))
		sc->srv->st.queued_total_pauses++;
	else if (sc->inflight < MAX_INFLIGHT && over_held_budget(sc))
		sc->srv->st.read_budget_waits++;
	sc->c.paused = true;
	sc->paused_at = rpcrdma_loop_now(sc->c.loop);
	rpcrdma__sock_conn_update(&sc->c);
}

/*
 * Read @sc again (the caller updates the watch).  A record it was in the
 * middle of gets the paused time back on its clock: the server held it
 * up, not the peer.
 */
static void conn_resume(struct svc_conn *sc)
{
	if (rpcrdma__sock_rx_in_record(&sc->c.rx))
		sc->c.rx.rec_began += rpcrdma_loop_now(sc->c.loop) - sc->paused_at;
	sc->c.paused = false;
}

static void conn_fail_later(struct svc_conn *sc, int err);
static void conn_call_lost(struct svc_conn *sc, int err);

static int deliver_call(void *arg, uint8_t *rec, size_t len)
{
	struct svc_conn *sc = arg;
	struct rpcrdma__svc_transport *srv = sc->srv;
	struct rpcrdma_xdr_stream xdr;
	struct svc_call *r;

	if (sc->lru.listed && !srv->cb->conn_busy(srv->cb_ctx, &sc->lru)) {
		/* Closed for a newcomer at max_conns while it had nothing in
		 * progress; the call that came since goes with it. */
		free(rec);
		conn_fail_later(sc, -ECONNABORTED);
		return 1;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		/* Out of memory: the call goes unanswered. */
		free(rec);
		conn_call_lost(sc, -ENOMEM);
		return 1;
	}
	r->conn = sc;
	r->rec = rec;
	r->rec_len = len;
	srv->held_bytes += len;
	if (srv->held_bytes > srv->st.read_bytes_max)
		srv->st.read_bytes_max = srv->held_bytes;
	r->base.tpriv = r;
	r->base.peer = (const struct sockaddr *)&sc->peer;
	r->base.conn_id = sc->id;
	sc->refs++;
	sc->inflight++;
	srv->st.calls_received++;
	rpcrdma_xdr_init_const(&xdr, rec, len);
	srv->cb->call(srv->cb_ctx, &r->base, &xdr);
	if (sc->dead || sc->later_err)
		return 1;
	if (conn_should_pause(sc)) {
		conn_pause(sc);
		return 1;
	}
	return 0;
}

/*
 * Reading @sc's records failed with @rc, whether from the socket or from
 * bytes staged before a pause: count what the peer broke (its framing,
 * or a record over max_record), not our memory nor its close, and close.
 */
static void conn_read_failed(struct svc_conn *sc, int rc)
{
	sc->srv->st.bad_msgs += rc == -EPROTO || rc == -EMSGSIZE;
	sc->srv->st.records_too_large += rc == -EMSGSIZE;
	conn_close(sc, rc);
}

static void conn_on_event(struct rpcrdma__watch *w, uint32_t events)
{
	struct svc_conn *sc = w->ctx;
	bool resumed = false;
	int rc;

	sc->refs++; /* the callbacks below may release the last call */
	if (sc->c.paused && (events & (EPOLLERR | EPOLLHUP))) {
		/* Reported whatever we watch: waiting would spin on it. */
		conn_close(sc, -ECONNRESET);
		goto out;
	}
	if (events & EPOLLOUT) {
		rc = rpcrdma__sock_flush(&sc->c);
		queued_sync(sc);
		if (rc) {
			conn_close(sc, rc);
			goto out;
		}
		(void)conn_lru_update(sc, false); /* the last reply may have left */
		if (sc->c.paused && !conn_should_pause(sc)) {
			conn_resume(sc);
			rpcrdma__sock_conn_update(&sc->c);
			/* Calls may be staged already; the socket need not fire again. */
			resumed = true;
		}
	}
	if (!sc->dead && !sc->c.paused && (resumed || (events & (EPOLLIN | EPOLLERR | EPOLLHUP)))) {
		uint64_t before = sc->srv->st.inline_recv_bytes;

		rc = rpcrdma__sock_read(&sc->c, deliver_call, sc);
		if (rc < 0) {
			conn_read_failed(sc, rc);
		} else if (!sc->dead && sc->srv->st.inline_recv_bytes != before) {
			sc->last_rx = rpcrdma_loop_now(sc->c.loop);
			/* Now the most recently active, even with a record
			 * not yet whole (conn_lru_update). */
			if (!conn_lru_update(sc, true))
				conn_close(sc, -ECONNABORTED);
		}
	}
out:
	conn_put(sc);
}

/* Runs from a timer: a close found inside a core call, or a resume. */
static void conn_deferred(struct rpcrdma__timer *tm)
{
	struct svc_conn *sc = tm->ctx;
	int rc;

	if (sc->dead)
		return;
	if (sc->later_err) {
		conn_close(sc, sc->later_err);
		return;
	}
	if (!sc->c.paused || conn_should_pause(sc))
		return;
	/* Calls may be staged already: the socket need not get readable again. */
	sc->refs++;
	conn_resume(sc);
	rc = rpcrdma__sock_deliver_staged(&sc->c, deliver_call, sc);
	if (rc < 0)
		conn_read_failed(sc, rc);
	else if (!sc->dead)
		rpcrdma__sock_conn_update(&sc->c);
	conn_put(sc);
}

/*
 * The time-outs, looked at every tick: replies that do not drain, a call
 * that does not arrive whole, a connection that does nothing.  The record
 * clock measures only the record now arriving, from its first byte, so a
 * client that pipelines (each read ending inside the next record) is
 * never blamed for the records before it.  While reading is paused the
 * partial call waits on us, not on the peer: the clock stands still
 * (conn_resume()).
 */
static void conn_tick(struct rpcrdma__timer *tm)
{
	struct svc_conn *sc = tm->ctx;
	struct rpcrdma__svc_transport *srv = sc->srv;
	uint64_t now = rpcrdma_loop_now(sc->c.loop);

	if (sc->dead)
		return;
	if (sc->c.q.head && now - sc->c.last_tx >= srv->b.drain_ms) {
		srv->st.drain_timeouts++;
		conn_close(sc, -ETIMEDOUT);
		return;
	}
	if (!sc->c.paused && rpcrdma__sock_rx_in_record(&sc->c.rx) &&
	    now - sc->c.rx.rec_began >= srv->b.record_ms) {
		srv->st.record_timeouts++;
		conn_close(sc, -ETIMEDOUT);
		return;
	}
	/* Idle since the last byte either way (a long call's reply counts). */
	if (!sc->inflight && !sc->c.q.head && !rpcrdma__sock_rx_in_record(&sc->c.rx) &&
	    now - (sc->last_rx > sc->c.last_tx ? sc->last_rx : sc->c.last_tx) >= srv->b.idle_ms) {
		srv->st.idle_closes++;
		conn_close(sc, -ETIMEDOUT);
		return;
	}
	rpcrdma__timer_start(sc->c.loop, &sc->tick, srv->b.tick_ms, conn_tick, sc);
}

static void conn_fail_later(struct svc_conn *sc, int err)
{
	sc->later_err = err;
	rpcrdma__timer_start(sc->c.loop, &sc->later, 0, conn_deferred, sc);
}

/* A call on @sc will get no answer (@err): the connection closes rather
 * than leave the client to its time-out (transport.h, reply_lost). */
static void conn_call_lost(struct svc_conn *sc, int err)
{
	if (sc->dead || sc->later_err)
		return;
	sc->srv->st.replies_lost++;
	RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_DISCONNECT, sc->id, 0, err, 0,
		       "TCP: call left unanswered: %s (%d); closing so the client sends again",
		       rpcrdma_strerror(err), err);
	conn_fail_later(sc, err);
}

static void accept_retry(struct rpcrdma__timer *tm);

/* Serve the accepted socket @fd (admitted: counted against max_conns)
 * here; closes it, and gives the admission back, on failure. */
static void conn_start(struct rpcrdma__svc_transport *srv, int fd,
		       const struct sockaddr_storage *peer, socklen_t plen, bool admitted)
{
	struct svc_conn *sc = calloc(1, sizeof(*sc));

	if (!sc || rpcrdma__sock_conn_init(&sc->c, srv->loop, srv->max_record, &srv->st)) {
		if (sc)
			rpcrdma__sock_conn_free(&sc->c);
		free(sc);
		close(fd);
		goto out_release;
	}
	rpcrdma__list_init(&sc->node);
	sc->srv = srv;
	sc->c.fd = fd;
	memcpy(&sc->peer, peer, plen <= sizeof(*peer) ? plen : sizeof(*peer));
	sc->refs = 1;
	if (rpcrdma__watch_start(srv->loop, &sc->c.watch, fd, EPOLLIN, conn_on_event, sc)) {
		rpcrdma__sock_conn_free(&sc->c); /* closes fd */
		free(sc);
		goto out_release;
	}
	sc->admitted = admitted;
	sc->lru.evict = conn_evict;
	sc->last_rx = rpcrdma_loop_now(srv->loop);
	rpcrdma__timer_start(srv->loop, &sc->tick, srv->b.tick_ms, conn_tick, sc);
	rpcrdma__list_add_head(&srv->conns, &sc->node);
	(void)conn_lru_update(sc, false);
	sc->id = rpcrdma__trace_conn_id();
	RPCRDMA__TRACE(RPCRDMA_TRACE_CONN, RPCRDMA_TEV_ACCEPT, sc->id, 0, 0, 0,
		       "TCP: accepted");
	return;

out_release:
	if (admitted && srv->cb->conn_release)
		srv->cb->conn_release(srv->cb_ctx);
}

/* A socket on its way to a worker's loop (cb->place). */
struct handed_socket {
	struct rpcrdma__svc_transport *to;
	int fd;
	socklen_t plen;
	bool admitted;
	struct sockaddr_storage peer;
};

static void adopt(void *arg)
{
	struct handed_socket *h = arg;

	conn_start(h->to, h->fd, &h->peer, h->plen, h->admitted);
	free(h);
}

/* Runs on the listener's thread; adopt() runs on the worker's. */
static int handoff(struct rpcrdma__svc_transport *to, int fd, const struct sockaddr_storage *peer,
		   socklen_t plen, bool admitted)
{
	struct handed_socket *h = malloc(sizeof(*h));
	int rc;

	if (!h)
		return -ENOMEM;
	h->to = to;
	h->fd = fd;
	h->admitted = admitted;
	h->plen = plen <= sizeof(h->peer) ? plen : sizeof(h->peer);
	memcpy(&h->peer, peer, h->plen);
	rc = rpcrdma_loop_wake(to->loop, adopt, h);
	if (rc)
		free(h);
	return rc;
}

static void on_listener_event(struct rpcrdma__watch *w, uint32_t events)
{
	struct rpcrdma__svc_transport *srv = w->ctx;

	(void)events;
	for (int i = 0; i < ACCEPT_BURST; i++) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		enum rpcrdma__svc_admit admit = RPCRDMA__SVC_ADMITTED;
		bool admitted;
		int fd;

		fd =
		    accept4(srv->fd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				/* Out of descriptors: the listener would stay
				 * readable and spin; look again a bit later,
				 * an idle connection closed meanwhile to make
				 * room. */
				if ((errno == EMFILE || errno == ENFILE) && srv->cb->conn_nofile &&
				    srv->cb->conn_nofile(srv->cb_ctx))
					srv->st.conns_evicted++;
				rpcrdma__watch_stop(&srv->watch);
				rpcrdma__timer_start(srv->loop, &srv->accept_retry, ACCEPT_RETRY_MS,
						     accept_retry, srv);
			}
			return;
		}
		admitted = srv->cb->conn_admit != NULL;
		if (admitted)
			admit = srv->cb->conn_admit(srv->cb_ctx);
		if (admit == RPCRDMA__SVC_REFUSED) {
			/* max_conns, every connection busy: refused at once;
			 * the peer sees the close. */
			srv->st.conns_refused++;
			close(fd);
			continue;
		}
		srv->st.conns_evicted += admit == RPCRDMA__SVC_ADMITTED_EVICTING;
		(void)rpcrdma__sock_set_nodelay(fd);
		if (srv->cb->place) {
			struct rpcrdma__svc_transport *to = srv->cb->place(srv->cb_ctx);

			if (to && to != srv && !handoff(to, fd, &peer, plen, admitted)) {
				srv->st.conns_handed_off++;
				continue;
			}
		}
		conn_start(srv, fd, &peer, plen, admitted);
	}
}

static void accept_retry(struct rpcrdma__timer *tm)
{
	struct rpcrdma__svc_transport *srv = tm->ctx;

	if (rpcrdma__watch_start(srv->loop, &srv->watch, srv->fd, EPOLLIN, on_listener_event, srv))
		rpcrdma__timer_start(srv->loop, &srv->accept_retry, ACCEPT_RETRY_MS, accept_retry,
				     srv);
}

/* A server transport without a socket yet; NULL on bad arguments or no memory. */
static struct rpcrdma__svc_transport *svc_alloc(struct rpcrdma_loop *loop,
						const struct rpcrdma_server_opts *opts,
						const struct rpcrdma__svc_cb *cb, void *cb_ctx,
						struct rpcrdma__svc_transport **out)
{
	struct rpcrdma__svc_transport *srv;

	if (!loop || !opts || !cb || !out || !(srv = calloc(1, sizeof(*srv))))
		return NULL;
	srv->loop = loop;
	srv->cb = cb;
	srv->cb_ctx = cb_ctx;
	srv->max_record = rpcrdma__sock_max_record(opts->max_record);
	rpcrdma__svc_bounds_of(opts, cb, cb_ctx, &srv->b);
	srv->fd = -1;
	rpcrdma__list_init(&srv->conns);
	rpcrdma__list_init(&srv->closed);
	return srv;
}

static int tcp_listen(struct rpcrdma_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		      const struct rpcrdma_server_opts *opts, const struct rpcrdma__svc_cb *cb,
		      void *cb_ctx, struct rpcrdma__svc_transport **out)
{
	struct rpcrdma__svc_transport *srv;
	int one = 1, rc;

	if (!addr)
		return -EINVAL;
	srv = svc_alloc(loop, opts, cb, cb_ctx, out);
	if (!srv)
		return out && loop && opts && cb ? -ENOMEM : -EINVAL;
	srv->fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (srv->fd < 0) {
		rc = -errno;
		free(srv);
		return rc;
	}
	(void)setsockopt(srv->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(srv->fd, addr, addrlen) < 0 || listen(srv->fd, SOMAXCONN) < 0) {
		rc = -errno;
		goto out_close;
	}
	rc = rpcrdma__watch_start(loop, &srv->watch, srv->fd, EPOLLIN, on_listener_event, srv);
	if (rc)
		goto out_close;
	*out = srv;
	return 0;

out_close:
	close(srv->fd);
	free(srv);
	return rc;
}

static int tcp_worker(struct rpcrdma_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		      const struct rpcrdma_server_opts *opts, const struct rpcrdma__svc_cb *cb,
		      void *cb_ctx, struct rpcrdma__svc_transport **out)
{
	struct rpcrdma__svc_transport *srv;

	(void)addr;
	(void)addrlen;
	srv = svc_alloc(loop, opts, cb, cb_ctx, out);
	if (!srv)
		return out && loop && opts && cb ? -ENOMEM : -EINVAL;
	*out = srv;
	return 0;
}

static int tcp_port(struct rpcrdma__svc_transport *srv)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(srv->fd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return -EAFNOSUPPORT;
}

static int tcp_reply_begin(struct rpcrdma__sreq *req)
{
	struct svc_call *r = req->tpriv;
	struct rpcrdma__sock_buf *b;

	/* Even for a closed connection: the core may cache what it encodes. */
	b = rpcrdma__sock_buf_new(req->reply_hint);
	if (!b)
		return -ENOMEM;
	free(r->buf);
	r->buf = b;
	rpcrdma_xdr_init(&req->reply, b->data + 4, b->cap);
	return 0;
}

/* Read @sc again from a timer, if it waits and need not any more. */
static void conn_resume_later(struct svc_conn *sc)
{
	if (!sc->dead && sc->c.paused && !conn_should_pause(sc) && !sc->later.armed) {
		sc->later_err = 0;
		rpcrdma__timer_start(sc->c.loop, &sc->later, 0, conn_deferred, sc);
	}
}

/*
 * @srv's held records fell below its share by @bytes: the connections
 * waiting for other connections' calls may take theirs again.  Only on
 * that crossing, so a server under its share never walks the list.
 */
static void held_release(struct rpcrdma__svc_transport *srv, size_t bytes)
{
	bool was_over = srv->held_bytes >= srv->b.max_read_bytes;
	struct rpcrdma__list *pos;

	srv->held_bytes -= bytes;
	if (!was_over || srv->held_bytes >= srv->b.max_read_bytes)
		return;
	rpcrdma__list_foreach(pos, &srv->conns)
		conn_resume_later(rpcrdma__container_of(pos, struct svc_conn, node));
}

static void call_release(struct svc_call *r)
{
	struct svc_conn *sc = r->conn;
	void (*done)(void *) = r->base.done;
	void *done_ctx = r->base.done_ctx;
	size_t rec_len = r->rec_len;

	free(r->buf);
	free(r->rec);
	free(r);
	/* The record holds a copy of the results: the core may free them. */
	if (done)
		done(done_ctx);
	sc->inflight--;
	(void)conn_lru_update(sc, false);
	if (sc->srv)
		held_release(sc->srv, rec_len);
	conn_resume_later(sc);
	conn_put(sc);
}

static int tcp_reply_send(struct rpcrdma__sreq *req)
{
	struct svc_call *r = req->tpriv;
	struct svc_conn *sc = r->conn;
	struct rpcrdma__sock_buf *b = r->buf;
	int rc;

	if (!b) {
		call_release(r);
		return -EINVAL;
	}
	if (sc->dead || sc->later_err) {
		call_release(r);
		return -ENOTCONN;
	}
	r->buf = NULL;
	rpcrdma__sock_buf_seal(b, rpcrdma_xdr_pos(&req->reply));
	sc->srv->st.calls_sent++;
	sc->srv->st.inline_msgs++;
	rc = rpcrdma__sock_queue_send(&sc->c, b);
	if (rc)
		conn_fail_later(sc, rc);
	queued_sync(sc);
	if (!rc && conn_should_pause(sc) && !sc->c.paused)
		conn_pause(sc);
	call_release(r);
	return rc;
}

static void tcp_reply_drop(struct rpcrdma__sreq *req)
{
	call_release(req->tpriv);
}

static void tcp_reply_lost(struct rpcrdma__sreq *req, int err)
{
	struct svc_call *r = req->tpriv;

	conn_call_lost(r->conn, err);
	call_release(r);
}

static void tcp_svc_destroy(struct rpcrdma__svc_transport *srv)
{
	if (!srv)
		return;
	rpcrdma__watch_stop(&srv->watch);
	rpcrdma__timer_stop(&srv->accept_retry);
	if (srv->fd >= 0)
		close(srv->fd);
	while (!rpcrdma__list_empty(&srv->conns)) {
		struct svc_conn *sc =
		    rpcrdma__container_of(rpcrdma__list_first(&srv->conns), struct svc_conn, node);

		/* Replies still queued get one last try; the kernel's socket
		 * buffer delivers what it takes after close. */
		if (sc->c.q.head && !sc->later_err)
			(void)rpcrdma__sock_flush(&sc->c);
		conn_close(sc, 0);
	}
	/*
	 * The core answers or drops every call before it destroys its
	 * transport, so normally no connection is left here.  One that is
	 * gives its place back now and forgets us: its calls may still be
	 * released after we are gone.
	 */
	while (!rpcrdma__list_empty(&srv->closed)) {
		struct svc_conn *sc =
		    rpcrdma__container_of(rpcrdma__list_first(&srv->closed), struct svc_conn, node);

		rpcrdma__list_del(&sc->node);
		if (sc->admitted && srv->cb->conn_release)
			srv->cb->conn_release(srv->cb_ctx);
		sc->admitted = false;
		sc->srv = NULL;
	}
	free(srv);
}

static void tcp_svc_stats(struct rpcrdma__svc_transport *srv, struct rpcrdma_xprt_stats *out)
{
	*out = srv->st;
}

const struct rpcrdma__svc_transport_ops rpcrdma__tcp_svc_ops = {
    .name = "tcp",
    .listen = tcp_listen,
    .worker = tcp_worker,
    .port = tcp_port,
    .reply_begin = tcp_reply_begin,
    .reply_send = tcp_reply_send,
    .reply_drop = tcp_reply_drop,
    .reply_lost = tcp_reply_lost,
    .destroy = tcp_svc_destroy,
    .stats = tcp_svc_stats,
};
