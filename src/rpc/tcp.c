/*
 * ONC RPC over TCP with record marking (RFC 5531 section 11): the client
 * and server transport ops of transport.h for stream sockets.
 *
 * Framing.  Each message goes out as one record of one fragment: a 4-byte
 * big-endian mark (top bit: last fragment; low 31 bits: length), then the
 * message.  On the way in a record may come as any number of fragments; they
 * are reassembled into one buffer before the core sees the message.
 *
 * Input is hostile, so reassembly is bounded:
 *   - a record may not exceed max_record bytes (opts.max_record, default
 *     1 MiB + 64 KiB of header room); the check is made on each fragment
 *     header, before a byte of the body is read or any memory reserved;
 *   - the buffer grows with the bytes that actually arrive, not with the
 *     length a mark announces, so a peer that announces 1 MiB and sends one
 *     byte costs one byte plus slack;
 *   - a record may hold at most MAX_FRAGS fragments (zero-length ones
 *     included) and may not be empty;
 *   - any violation closes the connection: after a bad mark the stream has
 *     no trustworthy boundary left to resynchronise on.
 * Each readable event reads at most READ_BURST times so one busy peer cannot
 * starve the others on the loop.
 *
 * Sending.  Records queue per connection and go out with sendmsg() over an
 * iovec of queued buffers (MSG_NOSIGNAL: a closed peer is an error, never
 * SIGPIPE).  A short write or EAGAIN leaves the rest queued and watches
 * EPOLLOUT until the queue drains.  The client refuses new calls with
 * -EAGAIN beyond SENDQ_LIMIT queued bytes (cb->writable follows); the server
 * stops reading a connection whose replies pile up beyond max_conn_queued
 * or whose calls in progress reach MAX_INFLIGHT, which pushes back on the
 * peer through TCP flow control.
 *
 * Bounds (server; rpcrdma_server_opts): connections beyond max_conns are
 * closed at accept; each connection's tick closes it when its queued
 * replies have not moved for drain_timeout_ms, when a call begun has not
 * arrived whole after record_timeout_ms (however slowly it trickles), or
 * when nothing happened on it for idle_timeout_ms.
 *
 * Recovery.  Errors found while the core is calling in (a write failing in
 * call_send or reply_send, disconnect()) tear the socket down at once but
 * report it from a zero-delay timer, so no core callback ever runs inside a
 * core call.  A client connection's teardown forgets every queued call
 * (a record partly written is dropped with the socket); the core sends them
 * again on the next connection.  A server connection that closes stays
 * allocated until every call read from it has been answered or dropped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/trace.h"
#include "rpc/core.h"
#include "rpc/loop_internal.h"

#define MARK_LAST 0x80000000u
#define MARK_LEN_MAX 0x7fffffffu
#define STAGE_SIZE (64u << 10)
#define READ_BURST 16
#define MAX_FRAGS 65536u
#define SENDQ_LIMIT (8u << 20)
/* Calls of one connection in progress at once: their replies are what may
 * pile up beyond max_conn_queued (deferred procedures answer later), so
 * as many as the RDMA server's default credits, times two. */
#define MAX_INFLIGHT 64u
#define BUF_DEFAULT 8192u
#define IOV_BATCH 64
#define ACCEPT_RETRY_MS 100

/* One outgoing record: the mark, then the message. */
struct tcp_buf {
	struct tcp_buf *next;
	struct rpcrdma__creq *creq; /* client: the call it carries; NULL once detached */
	bool queued;
	size_t cap; /* room for the message, after the mark */
	size_t len; /* bytes to write, mark included */
	size_t off; /* bytes written */
	uint8_t data[];
};

struct sendq {
	struct tcp_buf *head, *tail;
	size_t bytes; /* not yet written */
};

/* Record reassembly. */
struct rx {
	uint8_t mark[4];
	unsigned int mark_have;
	bool in_frag;
	bool last;
	uint32_t frag_left;
	unsigned int frags;
	uint8_t *rec;
	size_t rec_len, rec_cap;
	uint8_t *stage;
	size_t st_off, st_len;
};

/* What the client and server connections share. */
struct conn {
	int fd;
	struct rpcrdma__watch watch;
	struct rpcrdma_loop *loop;
	struct rx rx;
	struct sendq q;
	size_t max_record;
	struct rpcrdma_xprt_stats *st;
	bool paused; /* server: not reading */
	uint64_t last_tx; /* when the queue last moved, or last became non-empty */
};

/* Delivers a complete record (ownership passes); non-zero stops reading. */
typedef int (*deliver_fn)(void *arg, uint8_t *rec, size_t len);

static size_t max_record_of(uint32_t opt)
{
	size_t m = opt ? opt : RPCRDMA__TCP_MAX_RECORD_DEFAULT;

	return m > MARK_LEN_MAX ? MARK_LEN_MAX : m;
}

static void be32_put(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static uint32_t be32_get(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

static struct tcp_buf *buf_new(size_t hint)
{
	size_t cap = hint ? hint : BUF_DEFAULT;
	struct tcp_buf *b;

	/* One fragment carries the whole record; its length has 31 bits. */
	if (cap > MARK_LEN_MAX - 4)
		cap = MARK_LEN_MAX - 4;
	cap &= ~(size_t)3;
	b = malloc(sizeof(*b) + 4 + cap);
	if (!b)
		return NULL;
	b->next = NULL;
	b->creq = NULL;
	b->queued = false;
	b->cap = cap;
	b->len = b->off = 0;
	return b;
}

/* Seal the record: @msglen bytes were encoded after the mark. */
static void buf_seal(struct tcp_buf *b, size_t msglen)
{
	be32_put(b->data, MARK_LAST | (uint32_t)msglen);
	b->len = 4 + msglen;
}

static void q_push(struct conn *c, struct tcp_buf *b)
{
	struct sendq *q = &c->q;

	if (!q->head)
		c->last_tx = rpcrdma_loop_now(c->loop);
	b->next = NULL;
	b->queued = true;
	if (q->tail)
		q->tail->next = b;
	else
		q->head = b;
	q->tail = b;
	q->bytes += b->len;
}

static void q_unlink(struct sendq *q, struct tcp_buf *b)
{
	struct tcp_buf **pp, *prev = NULL;

	for (pp = &q->head; *pp; prev = *pp, pp = &(*pp)->next) {
		if (*pp == b) {
			*pp = b->next;
			if (q->tail == b)
				q->tail = prev;
			q->bytes -= b->len - b->off;
			b->queued = false;
			return;
		}
	}
}

/* Free every queued record; calls they carry are forgotten (tpriv cleared). */
static void q_clear(struct sendq *q)
{
	while (q->head) {
		struct tcp_buf *b = q->head;

		q->head = b->next;
		if (b->creq)
			b->creq->tpriv = NULL;
		free(b);
	}
	q->tail = NULL;
	q->bytes = 0;
}

static int conn_init(struct conn *c, struct rpcrdma_loop *loop, size_t max_record,
		     struct rpcrdma_xprt_stats *st)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->loop = loop;
	c->max_record = max_record;
	c->st = st;
	c->rx.stage = malloc(STAGE_SIZE);
	return c->rx.stage ? 0 : -ENOMEM;
}

static void rx_reset(struct rx *rx)
{
	free(rx->rec);
	rx->rec = NULL;
	rx->rec_len = rx->rec_cap = 0;
	rx->mark_have = 0;
	rx->in_frag = rx->last = false;
	rx->frag_left = 0;
	rx->frags = 0;
	rx->st_off = rx->st_len = 0;
}

/* Close the socket and drop what was queued or half-read. */
static void conn_teardown(struct conn *c)
{
	rpcrdma__watch_stop(&c->watch);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	q_clear(&c->q);
	rx_reset(&c->rx);
	c->paused = false;
}

static void conn_free(struct conn *c)
{
	conn_teardown(c);
	free(c->rx.stage);
	c->rx.stage = NULL;
}

static uint32_t conn_events(const struct conn *c)
{
	return (c->paused ? 0 : EPOLLIN) | (c->q.head ? EPOLLOUT : 0);
}

static void conn_update(struct conn *c)
{
	if (c->watch.active)
		(void)rpcrdma__watch_modify(&c->watch, conn_events(c));
}

/* Make room for @need bytes of record, growing geometrically up to the limit. */
static int rx_reserve(struct conn *c, size_t need)
{
	struct rx *rx = &c->rx;
	size_t cap;
	uint8_t *p;

	if (need <= rx->rec_cap)
		return 0;
	cap = rx->rec_cap ? rx->rec_cap * 2 : 4096;
	if (cap < need)
		cap = need;
	if (cap > c->max_record)
		cap = c->max_record;
	p = realloc(rx->rec, cap);
	if (!p)
		return -ENOMEM;
	rx->rec = p;
	rx->rec_cap = cap;
	return 0;
}

/*
 * Parse staged bytes.  Returns 1 with a complete record in *@rec / *@len
 * (ownership passes), 0 when more input is needed, or a negative error for
 * a framing violation.
 */
static int rx_parse(struct conn *c, uint8_t **rec, size_t *len)
{
	struct rx *rx = &c->rx;

	for (;;) {
		if (!rx->in_frag) {
			uint32_t v;

			while (rx->mark_have < 4 && rx->st_off < rx->st_len)
				rx->mark[rx->mark_have++] = rx->stage[rx->st_off++];
			if (rx->mark_have < 4)
				return 0;
			rx->mark_have = 0;
			v = be32_get(rx->mark);
			if (++rx->frags > MAX_FRAGS)
				return -EPROTO;
			rx->last = (v & MARK_LAST) != 0;
			rx->frag_left = v & MARK_LEN_MAX;
			/* Before anything is reserved: the whole record must fit. */
			if (rx->frag_left > c->max_record - rx->rec_len)
				return -EMSGSIZE;
			rx->in_frag = true;
		}
		if (rx->frag_left) {
			size_t take = rx->st_len - rx->st_off;
			int rc;

			if (take == 0)
				return 0;
			if (take > rx->frag_left)
				take = rx->frag_left;
			rc = rx_reserve(c, rx->rec_len + take);
			if (rc)
				return rc;
			memcpy(rx->rec + rx->rec_len, rx->stage + rx->st_off, take);
			rx->st_off += take;
			rx->rec_len += take;
			rx->frag_left -= (uint32_t)take;
			if (rx->frag_left)
				return 0;
		}
		rx->in_frag = false;
		if (!rx->last)
			continue;
		if (rx->rec_len == 0)
			return -EPROTO;
		*rec = rx->rec;
		*len = rx->rec_len;
		rx->rec = NULL;
		rx->rec_len = rx->rec_cap = 0;
		rx->frags = 0;
		return 1;
	}
}

/*
 * Deliver the complete records already staged.  Returns 0 (need input),
 * 1 (deliver asked to stop, or reading is paused), or a framing error.
 */
static int conn_drain_staged(struct conn *c, deliver_fn deliver, void *arg)
{
	for (;;) {
		uint8_t *rec;
		size_t len;
		int rc;

		if (c->paused)
			return 1;
		rc = rx_parse(c, &rec, &len);
		if (rc <= 0)
			return rc;
		if (deliver(arg, rec, len))
			return 1;
	}
}

/*
 * Read and deliver.  Returns 0 (would block, or the burst is used up: the
 * level-triggered watch brings us back), 1 (stopped by deliver, or paused
 * with records still staged), or a
 * negative error: a framing violation, -ECONNRESET for end of stream, or
 * the read's -errno.
 */
static int conn_read(struct conn *c, deliver_fn deliver, void *arg)
{
	struct rx *rx = &c->rx;

	for (int reads = 0; reads < READ_BURST; reads++) {
		ssize_t n;
		int rc;

		rc = conn_drain_staged(c, deliver, arg);
		if (rc)
			return rc;
		rx->st_off = rx->st_len = 0;
		/*
		 * Inside a large fragment body with nothing staged: read it
		 * straight into the record rather than through the stage.
		 */
		if (rx->in_frag && rx->frag_left >= STAGE_SIZE) {
			size_t want = rx->frag_left;

			if (want > (1u << 20))
				want = 1u << 20;
			rc = rx_reserve(c, rx->rec_len + want);
			if (rc)
				return rc;
			want = rx->rec_cap - rx->rec_len;
			if (want > rx->frag_left)
				want = rx->frag_left;
			n = read(c->fd, rx->rec + rx->rec_len, want);
			if (n > 0) {
				rx->rec_len += (size_t)n;
				rx->frag_left -= (uint32_t)n;
				c->st->inline_recv_bytes += (uint64_t)n;
				continue;
			}
		} else {
			n = read(c->fd, rx->stage, STAGE_SIZE);
			if (n > 0) {
				rx->st_len = (size_t)n;
				c->st->inline_recv_bytes += (uint64_t)n;
				continue;
			}
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		if (errno == EINTR)
			continue;
		return -errno;
	}
	/*
	 * Burst used up.  What is left in the socket brings the watch back;
	 * what the last read staged would not, so deliver it now.
	 */
	return conn_drain_staged(c, deliver, arg);
}

/*
 * Write what is queued.  Returns 0 (all written, or the rest waits for
 * EPOLLOUT) or -errno.  Records fully written are freed; the client's calls
 * they carried lose their tpriv.
 */
static int conn_flush(struct conn *c)
{
	while (c->q.head) {
		struct iovec iov[IOV_BATCH];
		struct msghdr msg;
		struct tcp_buf *b;
		size_t n;
		int cnt = 0;
		ssize_t w;

		for (b = c->q.head; b && cnt < IOV_BATCH; b = b->next, cnt++) {
			iov[cnt].iov_base = b->data + b->off;
			iov[cnt].iov_len = b->len - b->off;
		}
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = iov;
		msg.msg_iovlen = (size_t)cnt;
		w = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -errno;
		}
		n = (size_t)w;
		if (n)
			c->last_tx = rpcrdma_loop_now(c->loop);
		c->st->inline_send_bytes += n;
		c->q.bytes -= n;
		while (n && (b = c->q.head)) {
			size_t left = b->len - b->off;

			if (n < left) {
				b->off += n;
				break;
			}
			n -= left;
			c->q.head = b->next;
			if (!c->q.head)
				c->q.tail = NULL;
			if (b->creq)
				b->creq->tpriv = NULL;
			free(b);
		}
	}
	conn_update(c);
	return 0;
}

static int set_nodelay(int fd)
{
	int one = 1;

	/* Calls and replies are small and latency-bound: no Nagle. */
	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* ---------------------------------------------------------------- client */

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
	struct conn c;
	enum clnt_state state;
	unsigned int gen; /* bumped by every teardown */
	uint32_t conn_id; /* trace id of the current connection (trace.h) */
	bool sent_any, replied_any; /* on the current connection */
	bool want_writable;
	struct rpcrdma__timer report; /* deferred cb->disconnected */
	int report_err;
	struct rpcrdma_xprt_stats st;
	/* The local address of the last connection that came up: the next
	 * one binds it again, as the Linux client does, because a server's
	 * duplicate request cache over TCP knows a client by address and
	 * port (drc.h).  Forgotten when binding or connecting with it fails. */
	struct sockaddr_storage local;
	socklen_t local_len;
	bool local_tried; /* the current attempt bound it */
};

static void clnt_report(struct rpcrdma__timer *tm)
{
	struct rpcrdma__clnt_transport *t = tm->ctx;

	t->cb->disconnected(t->cb_ctx, t->report_err);
}

/* Tear the connection down now; the core hears of it from a timer. */
static void clnt_fail(struct rpcrdma__clnt_transport *t, int err)
{
	if (t->state == C_CONNECTING && t->local_tried)
		t->local_len = 0; /* the old port may be what failed */
	t->local_tried = false;
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
	conn_teardown(&t->c);
	t->state = C_IDLE;
	t->want_writable = false;
	t->gen++;
	t->report_err = err;
	rpcrdma__timer_start(t->loop, &t->report, 0, clnt_report, t);
}

static int clnt_deliver(void *arg, uint8_t *rec, size_t len)
{
	struct rpcrdma__clnt_transport *t = arg;
	struct rpcrdma_xdr_stream xdr;
	struct rpcrdma__creq *req;
	unsigned int gen = t->gen;

	/* xid and msg_type, or it cannot be a reply; no backchannel on TCP. */
	if (len < 8 || be32_get(rec + 4) != RPCRDMA_RPC_REPLY)
		goto out_bad;
	req = t->cb->find(t->cb_ctx, be32_get(rec));
	if (!req)
		goto out_bad;
	if (req->tpriv) {
		/* A reply before our record left: the peer answered an XID it
		 * saw earlier.  Keep the stream intact, forget the call. */
		struct tcp_buf *b = req->tpriv;

		if (b->queued && b->off == 0) {
			q_unlink(&t->c.q, b);
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

static void clnt_on_event(struct rpcrdma__watch *w, uint32_t events)
{
	struct rpcrdma__clnt_transport *t = w->ctx;
	int rc;

	if (t->state == C_CONNECTING) {
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
		t->local_len = sizeof(t->local);
		if (getsockname(t->c.fd, (struct sockaddr *)&t->local, &t->local_len) < 0)
			t->local_len = 0;
		conn_update(&t->c);
		RPCRDMA__TRACE(RPCRDMA_TRACE_CONN, RPCRDMA_TEV_CONNECT, t->conn_id, 0, 0, 0,
			       "TCP: connected");
		t->cb->connected(t->cb_ctx);
		return;
	}
	if (t->state != C_CONNECTED)
		return;
	if (events & EPOLLOUT) {
		rc = conn_flush(&t->c);
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

		rc = conn_read(&t->c, clnt_deliver, t);
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
	if (conn_init(&t->c, loop, max_record_of(opts->max_record), &t->st)) {
		free(t);
		return -ENOMEM;
	}
	t->loop = loop;
	memcpy(&t->addr, addr, addrlen);
	t->addrlen = addrlen;
	t->cb = cb;
	t->cb_ctx = cb_ctx;
	*out = t;
	return 0;
}

static int tcp_clnt_connect(struct rpcrdma__clnt_transport *t)
{
	int fd, rc;

	if (t->state != C_IDLE)
		return -EALREADY;
again:
	fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0)
		return -errno;
	(void)set_nodelay(fd);
	t->local_tried = false;
	if (t->local_len) {
		int one = 1;

		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (const struct sockaddr *)&t->local, t->local_len) < 0) {
			close(fd);
			t->local_len = 0;
			goto again;
		}
		t->local_tried = true;
	}
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
	 */
	if (connect(fd, (const struct sockaddr *)&t->addr, t->addrlen) < 0 && errno != EINPROGRESS) {
		if (t->local_tried && (errno == EADDRNOTAVAIL || errno == EADDRINUSE)) {
			/* The old port is still taken: a new one, at once. */
			rpcrdma__watch_stop(&t->c.watch);
			close(fd);
			t->c.fd = -1;
			t->state = C_IDLE;
			t->local_len = 0;
			goto again;
		}
		clnt_fail(t, -errno);
	}
	return 0;
}

static int tcp_call_begin(struct rpcrdma__clnt_transport *t, struct rpcrdma__creq *req)
{
	struct tcp_buf *b;

	if (t->state != C_CONNECTED)
		return -ENOTCONN;
	if (t->c.q.bytes >= SENDQ_LIMIT) {
		t->want_writable = true;
		return -EAGAIN;
	}
	b = buf_new(req->send_hint);
	if (!b)
		return -ENOMEM;
	b->creq = req;
	req->tpriv = b;
	rpcrdma_xdr_init(&req->send, b->data + 4, b->cap);
	return 0;
}

static int tcp_call_send(struct rpcrdma__clnt_transport *t, struct rpcrdma__creq *req)
{
	struct tcp_buf *b = req->tpriv;
	bool idle;
	int rc;

	if (!b || b->queued)
		return -EINVAL;
	if (t->state != C_CONNECTED) {
		req->tpriv = NULL;
		free(b);
		return -ENOTCONN;
	}
	buf_seal(b, rpcrdma_xdr_pos(&req->send));
	req->conn_id = t->conn_id;
	t->sent_any = true;
	idle = t->c.q.head == NULL;
	q_push(&t->c, b);
	t->st.calls_sent++;
	t->st.inline_msgs++;
	/* With a queue already waiting for EPOLLOUT, the watch writes this too. */
	if (idle) {
		rc = conn_flush(&t->c);
		if (rc)
			clnt_fail(t, rc);
	}
	return 0;
}

/* TCP grants nothing: the call's memory is the caller's at once. */
static int tcp_call_abort(struct rpcrdma__clnt_transport *t, struct rpcrdma__creq *req)
{
	struct tcp_buf *b = req->tpriv;

	if (!b)
		return 0;
	req->tpriv = NULL;
	if (b->queued && b->off > 0) {
		/* Half on the wire: the rest must follow or the stream breaks. */
		b->creq = NULL;
		return 0;
	}
	if (b->queued)
		q_unlink(&t->c.q, b);
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
	conn_free(&t->c);
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

/* ---------------------------------------------------------------- server */

struct sconn {
	struct sconn *next, *prev;
	struct rpcrdma__svc_transport *srv;
	struct conn c;
	struct sockaddr_storage peer;
	unsigned int refs; /* the socket, plus one per call not yet released */
	unsigned int inflight;
	bool dead;
	bool admitted; /* counts against max_conns (cb->conn_admit) */
	struct rpcrdma__timer later; /* deferred close or resume */
	int later_err;
	/* The time-outs (rpcrdma_server_opts): last bytes received, when the
	 * call now partly received began (0: none), and the clock's tick. */
	uint64_t last_rx, rec_start;
	struct rpcrdma__timer tick;
};

struct tcp_sreq {
	struct rpcrdma__sreq base;
	struct sconn *conn;
	uint8_t *rec;        /* the call's record, kept until release */
	struct tcp_buf *buf; /* the reply being encoded */
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
	struct sconn *conns;
	struct rpcrdma_xprt_stats st; /* every connection's, closed ones too */
};

static void sconn_put(struct sconn *sc)
{
	if (--sc->refs == 0) {
		rpcrdma__timer_stop(&sc->later);
		rpcrdma__timer_stop(&sc->tick);
		conn_free(&sc->c);
		free(sc);
	}
}

static void sconn_close(struct sconn *sc, int err)
{
	struct rpcrdma__svc_transport *srv = sc->srv;

	(void)err;
	if (sc->dead)
		return;
	sc->dead = true;
	conn_teardown(&sc->c);
	rpcrdma__timer_stop(&sc->later);
	rpcrdma__timer_stop(&sc->tick);
	if (sc->admitted && srv->cb->conn_release)
		srv->cb->conn_release(srv->cb_ctx);
	sc->admitted = false;
	if (sc->prev)
		sc->prev->next = sc->next;
	else
		srv->conns = sc->next;
	if (sc->next)
		sc->next->prev = sc->prev;
	sc->next = sc->prev = NULL;
	srv->cb->conn_closed(srv->cb_ctx, sc);
	sconn_put(sc);
}

static bool sconn_should_pause(const struct sconn *sc)
{
	return sc->inflight >= MAX_INFLIGHT || sc->c.q.bytes >= sc->srv->b.max_queued;
}

/* Stop reading @sc; a stop for replies the peer does not take is counted. */
static void sconn_pause(struct sconn *sc)
{
	if (sc->c.q.bytes >= sc->srv->b.max_queued)
		sc->srv->st.queue_pauses++;
	sc->c.paused = true;
	conn_update(&sc->c);
}

static bool rx_partial(const struct rx *rx)
{
	return rx->mark_have || rx->in_frag || rx->rec_len || rx->frags || rx->st_off < rx->st_len;
}

static int svc_deliver(void *arg, uint8_t *rec, size_t len)
{
	struct sconn *sc = arg;
	struct rpcrdma__svc_transport *srv = sc->srv;
	struct rpcrdma_xdr_stream xdr;
	struct tcp_sreq *r;

	r = calloc(1, sizeof(*r));
	if (!r) {
		/* Out of memory: drop the call; the client retries or times out. */
		free(rec);
		srv->st.bad_msgs++;
		return 0;
	}
	r->conn = sc;
	r->rec = rec;
	r->base.tpriv = r;
	r->base.peer = (const struct sockaddr *)&sc->peer;
	sc->refs++;
	sc->inflight++;
	srv->st.calls_received++;
	rpcrdma_xdr_init_const(&xdr, rec, len);
	srv->cb->call(srv->cb_ctx, &r->base, &xdr);
	if (sc->dead || sc->later_err)
		return 1;
	if (sconn_should_pause(sc)) {
		sconn_pause(sc);
		return 1;
	}
	return 0;
}

static void sconn_on_event(struct rpcrdma__watch *w, uint32_t events)
{
	struct sconn *sc = w->ctx;
	bool resumed = false;
	int rc;

	sc->refs++; /* the callbacks below may release the last call */
	if (sc->c.paused && (events & (EPOLLERR | EPOLLHUP))) {
		/* Reported whatever we watch: waiting would spin on it. */
		sconn_close(sc, -ECONNRESET);
		goto out;
	}
	if (events & EPOLLOUT) {
		rc = conn_flush(&sc->c);
		if (rc) {
			sconn_close(sc, rc);
			goto out;
		}
		if (sc->c.paused && !sconn_should_pause(sc)) {
			sc->c.paused = false;
			conn_update(&sc->c);
			/* Calls may be staged already; the socket need not fire again. */
			resumed = true;
		}
	}
	if (!sc->dead && !sc->c.paused && (resumed || (events & (EPOLLIN | EPOLLERR | EPOLLHUP)))) {
		uint64_t before = sc->srv->st.inline_recv_bytes;

		rc = conn_read(&sc->c, svc_deliver, sc);
		if (rc < 0) {
			if (rc != -ECONNRESET)
				sc->srv->st.bad_msgs += rc == -EPROTO || rc == -EMSGSIZE;
			sc->srv->st.records_too_large += rc == -EMSGSIZE;
			sconn_close(sc, rc);
		} else if (!sc->dead) {
			uint64_t now = rpcrdma_loop_now(sc->c.loop);

			if (sc->srv->st.inline_recv_bytes != before)
				sc->last_rx = now;
			/* A record begun: its clock runs until it is whole,
			 * however slowly its bytes trickle in. */
			if (!rx_partial(&sc->c.rx))
				sc->rec_start = 0;
			else if (!sc->rec_start)
				sc->rec_start = now;
		}
	}
out:
	sconn_put(sc);
}

/* Runs from a timer: a close found inside a core call, or a resume. */
static void sconn_later(struct rpcrdma__timer *tm)
{
	struct sconn *sc = tm->ctx;
	int rc;

	if (sc->dead)
		return;
	if (sc->later_err) {
		sconn_close(sc, sc->later_err);
		return;
	}
	if (!sc->c.paused || sconn_should_pause(sc))
		return;
	/* Calls may be staged already: the socket need not get readable again. */
	sc->refs++;
	sc->c.paused = false;
	rc = conn_drain_staged(&sc->c, svc_deliver, sc);
	if (rc < 0) {
		sc->srv->st.bad_msgs++;
		sconn_close(sc, rc);
	} else if (!sc->dead) {
		if (!rx_partial(&sc->c.rx))
			sc->rec_start = 0;
		conn_update(&sc->c);
	}
	sconn_put(sc);
}

/*
 * The time-outs, looked at every tick: replies that do not drain, a call
 * that does not arrive whole, a connection that does nothing.  While
 * reading is paused the partial call waits on us, not on the peer.
 */
static void sconn_tick(struct rpcrdma__timer *tm)
{
	struct sconn *sc = tm->ctx;
	struct rpcrdma__svc_transport *srv = sc->srv;
	uint64_t now = rpcrdma_loop_now(sc->c.loop);

	if (sc->dead)
		return;
	if (sc->c.q.head && now - sc->c.last_tx >= srv->b.drain_ms) {
		srv->st.drain_timeouts++;
		sconn_close(sc, -ETIMEDOUT);
		return;
	}
	if (!sc->c.paused && sc->rec_start && now - sc->rec_start >= srv->b.record_ms) {
		srv->st.record_timeouts++;
		sconn_close(sc, -ETIMEDOUT);
		return;
	}
	/* Idle since the last byte either way (a long call's reply counts). */
	if (!sc->inflight && !sc->c.q.head && !sc->rec_start &&
	    now - (sc->last_rx > sc->c.last_tx ? sc->last_rx : sc->c.last_tx) >= srv->b.idle_ms) {
		srv->st.idle_closes++;
		sconn_close(sc, -ETIMEDOUT);
		return;
	}
	rpcrdma__timer_start(sc->c.loop, &sc->tick, srv->b.tick_ms, sconn_tick, sc);
}

static void sconn_fail_later(struct sconn *sc, int err)
{
	sc->later_err = err;
	rpcrdma__timer_start(sc->c.loop, &sc->later, 0, sconn_later, sc);
}

static void svc_accept_retry(struct rpcrdma__timer *tm);

/* Serve the accepted socket @fd (admitted: counted against max_conns)
 * here; closes it, and gives the admission back, on failure. */
static void sconn_start(struct rpcrdma__svc_transport *srv, int fd,
			const struct sockaddr_storage *peer, socklen_t plen, bool admitted)
{
	struct sconn *sc = calloc(1, sizeof(*sc));

	if (!sc || conn_init(&sc->c, srv->loop, srv->max_record, &srv->st)) {
		if (sc)
			conn_free(&sc->c);
		free(sc);
		close(fd);
		goto out_release;
	}
	sc->srv = srv;
	sc->c.fd = fd;
	memcpy(&sc->peer, peer, plen <= sizeof(*peer) ? plen : sizeof(*peer));
	sc->refs = 1;
	if (rpcrdma__watch_start(srv->loop, &sc->c.watch, fd, EPOLLIN, sconn_on_event, sc)) {
		conn_free(&sc->c); /* closes fd */
		free(sc);
		goto out_release;
	}
	sc->admitted = admitted;
	sc->last_rx = rpcrdma_loop_now(srv->loop);
	rpcrdma__timer_start(srv->loop, &sc->tick, srv->b.tick_ms, sconn_tick, sc);
	sc->next = srv->conns;
	if (sc->next)
		sc->next->prev = sc;
	srv->conns = sc;
	return;

out_release:
	if (admitted && srv->cb->conn_release)
		srv->cb->conn_release(srv->cb_ctx);
}

/* A socket on its way to a worker's loop (cb->place). */
struct tcp_handoff {
	struct rpcrdma__svc_transport *to;
	int fd;
	socklen_t plen;
	bool admitted;
	struct sockaddr_storage peer;
};

static void adopt(void *arg)
{
	struct tcp_handoff *h = arg;

	sconn_start(h->to, h->fd, &h->peer, h->plen, h->admitted);
	free(h);
}

/* Runs on the listener's thread; adopt() runs on the worker's. */
static int handoff(struct rpcrdma__svc_transport *to, int fd, const struct sockaddr_storage *peer,
		   socklen_t plen, bool admitted)
{
	struct tcp_handoff *h = malloc(sizeof(*h));
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

static void svc_on_listen(struct rpcrdma__watch *w, uint32_t events)
{
	struct rpcrdma__svc_transport *srv = w->ctx;

	(void)events;
	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		bool admitted;
		int fd;

		fd =
		    accept4(srv->fd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				/* Out of descriptors: the listener would stay
				 * readable and spin; look again a bit later. */
				rpcrdma__watch_stop(&srv->watch);
				rpcrdma__timer_start(srv->loop, &srv->accept_retry, ACCEPT_RETRY_MS,
						     svc_accept_retry, srv);
			}
			return;
		}
		admitted = srv->cb->conn_admit != NULL;
		if (admitted && !srv->cb->conn_admit(srv->cb_ctx)) {
			/* max_conns: refused at once; the peer sees the close. */
			srv->st.conns_refused++;
			close(fd);
			continue;
		}
		(void)set_nodelay(fd);
		if (srv->cb->place) {
			struct rpcrdma__svc_transport *to = srv->cb->place(srv->cb_ctx);

			if (to && to != srv && !handoff(to, fd, &peer, plen, admitted)) {
				srv->st.conns_handed_off++;
				continue;
			}
		}
		sconn_start(srv, fd, &peer, plen, admitted);
	}
}

static void svc_accept_retry(struct rpcrdma__timer *tm)
{
	struct rpcrdma__svc_transport *srv = tm->ctx;

	if (rpcrdma__watch_start(srv->loop, &srv->watch, srv->fd, EPOLLIN, svc_on_listen, srv))
		rpcrdma__timer_start(srv->loop, &srv->accept_retry, ACCEPT_RETRY_MS,
				     svc_accept_retry, srv);
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
	srv->max_record = max_record_of(opts->max_record);
	rpcrdma__svc_bounds_of(opts, &srv->b);
	srv->fd = -1;
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
	rc = rpcrdma__watch_start(loop, &srv->watch, srv->fd, EPOLLIN, svc_on_listen, srv);
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
	struct tcp_sreq *r = req->tpriv;
	struct tcp_buf *b;

	/* Even for a closed connection: the core may cache what it encodes. */
	b = buf_new(req->reply_hint);
	if (!b)
		return -ENOMEM;
	free(r->buf);
	r->buf = b;
	rpcrdma_xdr_init(&req->reply, b->data + 4, b->cap);
	return 0;
}

static void sreq_release(struct tcp_sreq *r)
{
	struct sconn *sc = r->conn;
	void (*done)(void *) = r->base.done;
	void *done_ctx = r->base.done_ctx;

	free(r->buf);
	free(r->rec);
	free(r);
	/* The record holds a copy of the results: the core may free them. */
	if (done)
		done(done_ctx);
	sc->inflight--;
	if (!sc->dead && sc->c.paused && !sconn_should_pause(sc) && !sc->later.armed) {
		sc->later_err = 0;
		rpcrdma__timer_start(sc->c.loop, &sc->later, 0, sconn_later, sc);
	}
	sconn_put(sc);
}

static int tcp_reply_send(struct rpcrdma__sreq *req)
{
	struct tcp_sreq *r = req->tpriv;
	struct sconn *sc = r->conn;
	struct tcp_buf *b = r->buf;
	bool idle;
	int rc;

	if (!b) {
		sreq_release(r);
		return -EINVAL;
	}
	if (sc->dead || sc->later_err) {
		sreq_release(r);
		return -ENOTCONN;
	}
	r->buf = NULL;
	buf_seal(b, rpcrdma_xdr_pos(&req->reply));
	idle = sc->c.q.head == NULL;
	q_push(&sc->c, b);
	sc->srv->st.calls_sent++;
	sc->srv->st.inline_msgs++;
	rc = 0;
	if (idle) {
		rc = conn_flush(&sc->c);
		if (rc)
			sconn_fail_later(sc, rc);
	}
	if (!rc && sconn_should_pause(sc) && !sc->c.paused)
		sconn_pause(sc);
	sreq_release(r);
	return rc;
}

static void tcp_reply_drop(struct rpcrdma__sreq *req)
{
	sreq_release(req->tpriv);
}

static void tcp_svc_destroy(struct rpcrdma__svc_transport *srv)
{
	if (!srv)
		return;
	rpcrdma__watch_stop(&srv->watch);
	rpcrdma__timer_stop(&srv->accept_retry);
	if (srv->fd >= 0)
		close(srv->fd);
	while (srv->conns) {
		struct sconn *sc = srv->conns;

		/* Replies still queued get one last try; the kernel's socket
		 * buffer delivers what it takes after close. */
		if (sc->c.q.head && !sc->later_err)
			(void)conn_flush(&sc->c);
		sconn_close(sc, 0);
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
    .destroy = tcp_svc_destroy,
    .stats = tcp_svc_stats,
};
