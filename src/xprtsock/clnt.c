/*
 * clnt.c - the client side of ONC RPC over TCP: one connection to the
 * server, its calls written as records (record.c), replies matched to calls
 * by XID through the core.
 *
 * Beyond SENDQ_LIMIT queued bytes new calls get -EAGAIN and cb->writable
 * follows the drain.  An error found while the core is calling in tears the
 * socket down at once but reports it from a zero-delay timer, so no core
 * callback runs inside a core call; the queued calls are forgotten (a record
 * partly written goes with the socket) and the core sends them again on the
 * next connection, which binds the previous local port again.
 *
 * The server is not trusted to keep the connection moving: a tick closes
 * it when a reply record begun is not whole, or queued calls have not
 * moved, after the longest call time-out (conn_clock_ms), so that a server trickling a
 * reply or not reading our calls cannot hold a record of up to max_record
 * and the send queue for as long as it likes; the calls go again on the
 * next connection.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/trace.h"
#include "xprtsock/sock.h"

/* Queued bytes beyond which a new call waits for cb->writable. */
#define SENDQ_LIMIT (8u << 20)

/* Attempts to connect from the old port before taking a new one. */
#define LOCAL_PORT_TRIES 3u

/* The connection's clock when calls have no time-out (timeout_ms -1): the
 * server's record_timeout_ms default, far beyond any healthy network. */
#define CLOCK_NO_TIMEOUT_MS 30000u

enum clnt_state {
	C_IDLE,
	C_CONNECTING,
	C_CONNECTED,
};

struct rpcrdma__clnt_transport {
	struct rpcrdma_loop *loop;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	const struct rpcrdma__clnt_cb *cb;
	void *cb_ctx;
	struct rpcrdma__sock_conn c;
	enum clnt_state state;
	unsigned int gen;           /* bumped by every teardown */
	uint32_t conn_id;           /* trace id of the current connection (trace.h) */
	bool sent_any, replied_any; /* on the current connection */
	bool want_writable;
	struct rpcrdma__timer report; /* deferred cb->disconnected */
	int report_err;
	/* How long a reply record begun may take to be whole, and queued
	 * calls may go without a byte written: the call time-out, since a
	 * connection that cannot carry a call within it is of no use to
	 * the call.  Looked at every tick_ms while connected. */
	uint32_t clock_ms, tick_ms;
	/* This connection's bound: clock_ms, raised to the longest time-out
	 * of a call sent on it (a call's own may be longer than the
	 * client's); 0 once a call without a time-out was sent: it waits for
	 * its reply however slow, so the connection is not cut under it.
	 * Back to clock_ms with each new connection. */
	uint32_t conn_clock_ms;
	struct rpcrdma__timer tick;
	struct rpcrdma_xprt_stats st;
	/* The local address of the last connection that came up: the next
	 * one binds it again, as the Linux client does, because a server's
	 * duplicate request cache over TCP knows a client by address and
	 * port (drc.h): a retransmission from a new port misses the cache and
	 * a call that is not idempotent would run twice.  An ephemeral port
	 * let go is soon taken by someone else's connect(), so the port is
	 * held from the moment a connection is lost: @spare_fd, a socket bound
	 * to it (both with SO_REUSEADDR) before the old one closes, becomes the
	 * next connection's.  A new port only after LOCAL_PORT_TRIES failed
	 * attempts with the old one. */
	struct sockaddr_storage local;
	socklen_t local_len;
	bool local_tried;         /* the current attempt bound it */
	unsigned int local_fails; /* attempts with it that failed in a row */
	int spare_fd;             /* -1, or a socket bound to @local */
};

static void report_disconnect(struct rpcrdma__timer *tm)
{
	struct rpcrdma__clnt_transport *t = tm->ctx;

	t->cb->disconnected(t->cb_ctx, t->report_err);
}

/*
 * A new socket with SO_REUSEADDR, bound to @local, or with @local NULL to a
 * port of its own.  A port that bind() handed out is never shared by
 * another socket's connect() (Linux gives connect() only ports that no
 * bind() holds), so the next connection can bind it again (hold_port);
 * one connect() took would be reused by others' connections and stay taken.
 */
static int bound_socket(int family, const struct sockaddr *local, socklen_t len)
{
	struct sockaddr_storage any;
	int one = 1, err, fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);

	if (fd < 0)
		return -errno;
	if (!local) {
		memset(&any, 0, sizeof(any));
		any.ss_family = (sa_family_t)family;
		local = (const struct sockaddr *)&any;
		len = family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, local, len) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* A socket bound to the local address of the connection being lost, made
 * while that connection's socket still holds the port. */
static void hold_port(struct rpcrdma__clnt_transport *t)
{
	int fd = bound_socket(t->addr.ss_family, (const struct sockaddr *)&t->local, t->local_len);

	if (fd >= 0)
		t->spare_fd = fd;
}

/* Tear the connection down now; the core hears of it from a timer. */
static void clnt_fail(struct rpcrdma__clnt_transport *t, int err)
{
	if (t->state == C_CONNECTING && t->local_tried && ++t->local_fails >= LOCAL_PORT_TRIES) {
		t->local_len = 0; /* the old port may be what fails */
		t->local_fails = 0;
	}
	t->local_tried = false;
	if (t->local_len && t->spare_fd < 0)
		hold_port(t);
	if (t->c.fd >= 0) {
		/* An abortive close (RST): no TIME_WAIT keeps our port from
		 * the next connection, which binds it again. */
		struct linger lg = {.l_onoff = 1, .l_linger = 0};

		(void)setsockopt(t->c.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	/* Our first call was answered by a reset: an RPC-over-RDMA server
	 * (the software provider's TCP) refuses what is not its handshake. */
	if (t->state == C_CONNECTED && t->sent_any && !t->replied_any &&
	    (err == -ECONNRESET || err == -EPIPE))
		err = RPCRDMA_ERR_NOT_TCP_PEER;
	RPCRDMA__TRACE(RPCRDMA_TRACE_CONN,
		       t->state == C_CONNECTING ? RPCRDMA_TEV_CONNECT_FAIL : RPCRDMA_TEV_DISCONNECT,
		       t->conn_id, 0, err, 0, "TCP: %s: %s (%d)",
		       t->state == C_CONNECTING ? "connection attempt failed" : "connection lost",
		       rpcrdma_strerror(err), err);
	rpcrdma__sock_conn_teardown(&t->c);
	rpcrdma__timer_stop(&t->tick);
	t->state = C_IDLE;
	t->want_writable = false;
	t->gen++;
	t->report_err = err;
	rpcrdma__timer_start(t->loop, &t->report, 0, report_disconnect, t);
}

static int deliver_reply(void *arg, uint8_t *rec, size_t len)
{
	struct rpcrdma__clnt_transport *t = arg;
	struct rpcrdma_xdr_stream xdr;
	struct rpcrdma__creq *req;
	unsigned int gen = t->gen;

	/* xid and msg_type, or it cannot be a reply; no backchannel on TCP. */
	if (len < 8 || rpcrdma__sock_get_be32(rec + 4) != RPCRDMA_RPC_REPLY)
		goto out_bad;
	req = t->cb->find(t->cb_ctx, rpcrdma__sock_get_be32(rec));
	if (!req)
		goto out_bad;
	if (req->tpriv) {
		/* A reply before our record left: the peer answered an XID it
		 * saw earlier.  Keep the stream intact, forget the call. */
		struct rpcrdma__sock_buf *b = req->tpriv;

		if (b->queued && b->off == 0) {
			rpcrdma__sock_queue_unlink(&t->c.q, b);
			free(b);
		} else {
			b->creq = NULL;
			if (!b->queued)
				free(b);
		}
		req->tpriv = NULL;
	}
	t->st.calls_received++;
	t->replied_any = true;
	rpcrdma_xdr_init_const(&xdr, rec, len);
	t->cb->reply(t->cb_ctx, req, &xdr);
	free(rec);
	/* The core may have dropped the connection from its callback. */
	return gen != t->gen;

out_bad:
	t->st.bad_msgs++;
	free(rec);
	return 0;
}

/*
 * The connection's clock, while connected.  The reply record's clock runs
 * from its first byte (record.c) and does not restart with each byte, so
 * a reply trickled a byte at a time is cut as surely as one stopped; the
 * client always reads, so the time is all the server's.  The send queue's
 * runs from when it last moved or last became non-empty.
 */
static void clnt_tick(struct rpcrdma__timer *tm)
{
	struct rpcrdma__clnt_transport *t = tm->ctx;
	uint64_t now = rpcrdma_loop_now(t->loop);

	if (t->state != C_CONNECTED)
		return;
	if (t->conn_clock_ms && t->c.q.head && now - t->c.last_tx >= t->conn_clock_ms)
		goto out_send_stalled;
	if (t->conn_clock_ms && rpcrdma__sock_rx_in_record(&t->c.rx) &&
	    now - t->c.rx.rec_began >= t->conn_clock_ms)
		goto out_reply_stalled;
	rpcrdma__timer_start(t->loop, &t->tick, t->tick_ms, clnt_tick, t);
	return;

out_send_stalled:
	t->st.send_stall_timeouts++;
	clnt_fail(t, -ETIMEDOUT);
	return;
out_reply_stalled:
	t->st.reply_record_timeouts++;
	clnt_fail(t, -ETIMEDOUT);
}

/* The socket of a connection under way reported @events: done, or failed. */
static void finish_connect(struct rpcrdma__clnt_transport *t, uint32_t events)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(t->c.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err == 0 && !(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
		return;
	if (err == 0 && (events & (EPOLLERR | EPOLLHUP)))
		err = ECONNREFUSED;
	if (err) {
		clnt_fail(t, -err);
		return;
	}
	t->state = C_CONNECTED;
	t->local_tried = false;
	t->local_fails = 0;
	t->local_len = sizeof(t->local);
	if (getsockname(t->c.fd, (struct sockaddr *)&t->local, &t->local_len) < 0)
		t->local_len = 0;
	rpcrdma__sock_conn_update(&t->c);
	t->conn_clock_ms = t->clock_ms;
	rpcrdma__timer_start(t->loop, &t->tick, t->tick_ms, clnt_tick, t);
	RPCRDMA__TRACE(RPCRDMA_TRACE_CONN, RPCRDMA_TEV_CONNECT, t->conn_id, 0, 0, 0,
		       "TCP: connected");
	t->cb->connected(t->cb_ctx);
}

static void clnt_on_event(struct rpcrdma__watch *w, uint32_t events)
{
	struct rpcrdma__clnt_transport *t = w->ctx;
	int rc;

	if (t->state == C_CONNECTING) {
		finish_connect(t, events);
		return;
	}
	if (t->state != C_CONNECTED)
		return;
	if (events & EPOLLOUT) {
		rc = rpcrdma__sock_flush(&t->c);
		if (rc) {
			clnt_fail(t, rc);
			return;
		}
		if (t->want_writable && t->c.q.bytes < SENDQ_LIMIT / 2) {
			unsigned int gen = t->gen;

			t->want_writable = false;
			t->cb->writable(t->cb_ctx);
			if (gen != t->gen)
				return;
		}
	}
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
		unsigned int gen = t->gen;

		rc = rpcrdma__sock_read(&t->c, deliver_reply, t);
		if (rc < 0 && gen == t->gen)
			clnt_fail(t, rc);
	}
}

static int tcp_clnt_create(struct rpcrdma_loop *loop, const struct sockaddr *addr,
			   socklen_t addrlen, const struct rpcrdma_client_opts *opts,
			   const struct rpcrdma__clnt_cb *cb, void *cb_ctx,
			   struct rpcrdma__clnt_transport **out)
{
	struct rpcrdma__clnt_transport *t;

	if (!loop || !addr || addrlen > sizeof(t->addr) || !opts || !cb || !out)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (rpcrdma__sock_conn_init(&t->c, loop, rpcrdma__sock_max_record(opts->max_record),
				    &t->st)) {
		free(t);
		return -ENOMEM;
	}
	t->loop = loop;
	t->spare_fd = -1;
	memcpy(&t->addr, addr, addrlen);
	t->addrlen = addrlen;
	t->cb = cb;
	t->cb_ctx = cb_ctx;
	t->clock_ms = opts->timeout_ms > 0 ? (uint32_t)opts->timeout_ms : CLOCK_NO_TIMEOUT_MS;
	/* A quarter of the bound, as the server's tick: a cut comes at most
	 * a quarter late, and a healthy connection wakes seldom. */
	t->tick_ms = t->clock_ms / 4;
	if (t->tick_ms < 10)
		t->tick_ms = 10;
	if (t->tick_ms > 5000)
		t->tick_ms = 5000;
	*out = t;
	return 0;
}

static int tcp_clnt_connect(struct rpcrdma__clnt_transport *t)
{
	int fd = -1, rc;

	if (t->state != C_IDLE)
		return -EALREADY;
	t->local_tried = false;
	if (t->spare_fd >= 0 && t->local_len) {
		fd = t->spare_fd; /* bound to the old port already */
		t->spare_fd = -1;
		t->local_tried = true;
	} else {
		if (t->spare_fd >= 0)
			close(t->spare_fd);
		t->spare_fd = -1;
		if (t->local_len) {
			fd = bound_socket(t->addr.ss_family, (const struct sockaddr *)&t->local,
					  t->local_len);
			t->local_tried = fd >= 0;
		}
		if (fd < 0) {
			/* The old port is gone: a retransmission from a new one
			 * misses the server's cache, but failing calls for a
			 * port we cannot have would be worse. */
			t->local_len = 0;
			t->local_fails = 0;
			fd = bound_socket(t->addr.ss_family, NULL, 0);
		}
		if (fd < 0) {
			fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
				    IPPROTO_TCP);
			if (fd < 0)
				return -errno;
		}
	}
	(void)rpcrdma__sock_set_nodelay(fd);
	t->c.fd = fd;
	t->conn_id = rpcrdma__trace_conn_id();
	t->sent_any = t->replied_any = false;
	rc = rpcrdma__watch_start(t->loop, &t->c.watch, fd, EPOLLOUT, clnt_on_event, t);
	if (rc) {
		close(fd);
		t->c.fd = -1;
		return rc;
	}
	t->state = C_CONNECTING;
	/*
	 * Even an immediate answer is reported through the watch (success:
	 * the socket is writable) or the timer (failure), never from here.
	 * The core tries again after its back-off, from the same port until
	 * LOCAL_PORT_TRIES attempts with it failed in a row.
	 */
	if (connect(fd, (const struct sockaddr *)&t->addr, t->addrlen) < 0 && errno != EINPROGRESS)
		clnt_fail(t, -errno);
	return 0;
}

static int tcp_call_begin(struct rpcrdma__clnt_transport *t, struct rpcrdma__creq *req)
{
	struct rpcrdma__sock_buf *b;

	if (t->state != C_CONNECTED)
		return -ENOTCONN;
	if (t->c.q.bytes >= SENDQ_LIMIT) {
		t->st.send_queue_full++;
		t->want_writable = true;
		return -EAGAIN;
	}
	b = rpcrdma__sock_buf_new(req->send_hint);
	if (!b)
		return -ENOMEM;
	b->creq = req;
	req->tpriv = b;
	rpcrdma_xdr_init(&req->send, b->data + 4, b->cap);
	return 0;
}

static int tcp_call_send(struct rpcrdma__clnt_transport *t, struct rpcrdma__creq *req)
{
	struct rpcrdma__sock_buf *b = req->tpriv;
	int rc;

	if (!b || b->queued)
		return -EINVAL;
	if (t->state != C_CONNECTED) {
		req->tpriv = NULL;
		free(b);
		return -ENOTCONN;
	}
	rpcrdma__sock_buf_seal(b, rpcrdma_xdr_pos(&req->send));
	req->conn_id = t->conn_id;
	if (req->timeout_ms < 0)
		t->conn_clock_ms = 0;
	else if (t->conn_clock_ms && (uint32_t)req->timeout_ms > t->conn_clock_ms)
		t->conn_clock_ms = (uint32_t)req->timeout_ms;
	t->sent_any = true;
	t->st.calls_sent++;
	t->st.inline_msgs++;
	/* With a queue already waiting for EPOLLOUT, the watch writes this too. */
	rc = rpcrdma__sock_queue_send(&t->c, b);
	if (rc)
		clnt_fail(t, rc);
	return 0;
}

/* TCP grants nothing: the call's memory is the caller's at once. */
static int tcp_call_abort(struct rpcrdma__clnt_transport *t, struct rpcrdma__creq *req)
{
	struct rpcrdma__sock_buf *b = req->tpriv;

	if (!b)
		return 0;
	req->tpriv = NULL;
	if (b->queued && b->off > 0) {
		/* Half on the wire: the rest must follow or the stream breaks. */
		b->creq = NULL;
		return 0;
	}
	if (b->queued)
		rpcrdma__sock_queue_unlink(&t->c.q, b);
	free(b);
	return 0;
}

static void tcp_clnt_disconnect(struct rpcrdma__clnt_transport *t)
{
	if (t->state != C_IDLE)
		clnt_fail(t, -ECONNABORTED);
}

static void tcp_clnt_destroy(struct rpcrdma__clnt_transport *t)
{
	if (!t)
		return;
	rpcrdma__timer_stop(&t->report);
	rpcrdma__timer_stop(&t->tick);
	rpcrdma__sock_conn_free(&t->c);
	if (t->spare_fd >= 0)
		close(t->spare_fd);
	free(t);
}

static void tcp_clnt_stats(struct rpcrdma__clnt_transport *t, struct rpcrdma_xprt_stats *out)
{
	*out = t->st;
}

const struct rpcrdma__clnt_transport_ops rpcrdma__tcp_clnt_ops = {
    .name = "tcp",
    .create = tcp_clnt_create,
    .connect = tcp_clnt_connect,
    .call_begin = tcp_call_begin,
    .call_send = tcp_call_send,
    .call_abort = tcp_call_abort,
    .disconnect = tcp_clnt_disconnect,
    .destroy = tcp_clnt_destroy,
    .stats = tcp_clnt_stats,
};
