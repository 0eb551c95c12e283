/*
 * record.c - one TCP connection's stream, for the client and the server:
 * record marking (RFC 5531 section 11), the send queue and bounded
 * reassembly of what arrives.
 *
 * Each message leaves as one record of one fragment; a record coming in may
 * have any number of fragments.  Input is hostile: a record is refused on
 * the mark that would take it over max_record, before anything is reserved;
 * the buffer grows with the bytes that arrive, not with what a mark
 * announces; a record has at most MAX_FRAGS fragments and is never empty;
 * any violation closes the connection (no boundary is left to trust).  One
 * readable event reads at most READ_BURST times.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xprtsock/sock.h"

#define MARK_LAST 0x80000000u
#define MARK_LEN_MAX 0x7fffffffu
#define STAGE_SIZE (64u << 10)
#define READ_BURST 16
#define MAX_FRAGS 65536u
#define BUF_DEFAULT 8192u
#define IOV_BATCH 64
/* The most one read into a large fragment's body asks for. */
#define DIRECT_READ_MAX (1u << 20)
/*
 * A large fragment's record grows, once less than DIRECT_ROOM_MIN is
 * left, to DIRECT_GROWTH times what it holds.  Each growth copies the
 * record (realloc seldom extends it in place on a busy server): doubling
 * copies about one record per record, four times about a third of one.
 */
#define DIRECT_GROWTH 4u
#define DIRECT_ROOM_MIN 4096u
/*
 * A record that stays queued keeps at most twice its message plus this
 * much room.  Its room was sized before the message was encoded (the
 * default 8 KiB, or grown fourfold each time the message did not fit,
 * so up to four times it), while the send queue and its bounds
 * (max_conn_queued, max_queued_total, the client's SENDQ_LIMIT) count
 * the bytes to write: without giving the rest back, queued records held
 * up to four times what those bounds allow, and a small reply 8 KiB.
 */
#define QUEUED_SLACK 4096u

size_t rpcrdma__sock_max_record(uint32_t opt)
{
	size_t m = opt ? opt : RPCRDMA__TCP_MAX_RECORD_DEFAULT;

	return m > MARK_LEN_MAX ? MARK_LEN_MAX : m;
}

static void be32_put(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

struct rpcrdma__sock_buf *rpcrdma__sock_buf_new(size_t hint)
{
	size_t cap = hint ? hint : BUF_DEFAULT;
	struct rpcrdma__sock_buf *b;

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

void rpcrdma__sock_buf_seal(struct rpcrdma__sock_buf *b, size_t msglen)
{
	be32_put(b->data, MARK_LAST | (uint32_t)msglen);
	b->len = 4 + msglen;
}

/* Queue the sealed record @b last on @c, unwritten. */
static void queue_push(struct rpcrdma__sock_conn *c, struct rpcrdma__sock_buf *b)
{
	struct rpcrdma__sock_sendq *q = &c->q;

	if (!q->head)
		c->last_tx = c->head_since = rpcrdma_loop_now(c->loop);
	b->next = NULL;
	b->queued = true;
	if (q->tail)
		q->tail->next = b;
	else
		q->head = b;
	q->tail = b;
	q->bytes += b->len;
}

/*
 * @b, on no queue or alone on @c's, with the room it does not need given
 * back; it may move (a client call's tpriv follows it).
 */
static struct rpcrdma__sock_buf *queued_fit(struct rpcrdma__sock_conn *c,
					    struct rpcrdma__sock_buf *b)
{
	size_t msglen = b->len - 4;
	struct rpcrdma__sock_buf *fit;

	if (b->cap <= 2 * msglen + QUEUED_SLACK)
		return b;
	/* Shrinking seldom moves or fails; if it fails the record is still
	 * good, only larger than it should be. */
	fit = realloc(b, sizeof(*b) + b->len);
	if (!fit)
		return b;
	fit->cap = msglen;
	if (fit->creq)
		fit->creq->tpriv = fit;
	c->st->send_room_trimmed++;
	return fit;
}

int rpcrdma__sock_queue_send(struct rpcrdma__sock_conn *c, struct rpcrdma__sock_buf *b)
{
	int rc;

	/* Behind others it stays queued for a while: fit it first. */
	if (c->q.head) {
		queue_push(c, queued_fit(c, b));
		return 0;
	}
	/* Alone, it usually leaves at once and is freed: fit it only if the
	 * socket did not take it all. */
	queue_push(c, b);
	rc = rpcrdma__sock_flush(c);
	if (!rc && c->q.head)
		c->q.head = c->q.tail = queued_fit(c, c->q.head);
	return rc;
}

void rpcrdma__sock_queue_unlink(struct rpcrdma__sock_sendq *q, struct rpcrdma__sock_buf *b)
{
	struct rpcrdma__sock_buf **pp, *prev = NULL;

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
static void queue_clear(struct rpcrdma__sock_sendq *q)
{
	while (q->head) {
		struct rpcrdma__sock_buf *b = q->head;

		q->head = b->next;
		if (b->creq)
			b->creq->tpriv = NULL;
		free(b);
	}
	q->tail = NULL;
	q->bytes = 0;
}

int rpcrdma__sock_conn_init(struct rpcrdma__sock_conn *c, struct rpcrdma_loop *loop,
			    size_t max_record, struct rpcrdma_xprt_stats *st)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->loop = loop;
	c->max_record = max_record;
	c->st = st;
	c->rx.stage = malloc(STAGE_SIZE);
	return c->rx.stage ? 0 : -ENOMEM;
}

static void rx_reset(struct rpcrdma__sock_rx *rx)
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

void rpcrdma__sock_conn_teardown(struct rpcrdma__sock_conn *c)
{
	rpcrdma__watch_stop(&c->watch);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	queue_clear(&c->q);
	rx_reset(&c->rx);
	c->paused = false;
}

void rpcrdma__sock_conn_free(struct rpcrdma__sock_conn *c)
{
	rpcrdma__sock_conn_teardown(c);
	free(c->rx.stage);
	c->rx.stage = NULL;
}

static uint32_t conn_events(const struct rpcrdma__sock_conn *c)
{
	return (c->paused ? 0 : EPOLLIN) | (c->q.head ? EPOLLOUT : 0);
}

void rpcrdma__sock_conn_update(struct rpcrdma__sock_conn *c)
{
	if (c->watch.active)
		(void)rpcrdma__watch_modify(&c->watch, conn_events(c));
}

/* Give the record exactly @cap bytes of room (at most the limit). */
static int rx_grow(struct rpcrdma__sock_conn *c, size_t cap)
{
	struct rpcrdma__sock_rx *rx = &c->rx;
	uint8_t *p;

	if (cap > c->max_record)
		cap = c->max_record;
	p = realloc(rx->rec, cap);
	if (!p)
		return -ENOMEM;
	rx->rec = p;
	rx->rec_cap = cap;
	return 0;
}

/* Make room for @need bytes of record, growing geometrically: the room
 * only ever grows to hold bytes already received, so it stays below twice
 * what the record holds. */
static int rx_reserve(struct rpcrdma__sock_conn *c, size_t need)
{
	size_t cap;

	if (need <= c->rx.rec_cap)
		return 0;
	cap = c->rx.rec_cap ? c->rx.rec_cap * 2 : 4096;
	return rx_grow(c, cap < need ? need : cap);
}

/*
 * Room to read a large fragment's body straight into the record.  What
 * the mark announced is only a promise, so the record grows with what
 * arrived: once it is (nearly) full, to DIRECT_GROWTH times what it holds
 * (at least STAGE_SIZE more), or by what already waits in the socket if
 * that is more; never by more than DIRECT_READ_MAX or what the fragment
 * still lacks.  A mark alone thus commits 64 KiB, not the megabyte it
 * may announce; a record that trickles in holds at most DIRECT_GROWTH
 * times its bytes plus 64 KiB; a 1 MiB one takes two steps.
 */
static int rx_direct_room(struct rpcrdma__sock_conn *c)
{
	struct rpcrdma__sock_rx *rx = &c->rx;
	size_t more;
	int arrived = 0;

	if (rx->rec_cap - rx->rec_len >= DIRECT_ROOM_MIN)
		return 0;
	more = rx->rec_len * (DIRECT_GROWTH - 1);
	if (more < STAGE_SIZE)
		more = STAGE_SIZE;
	if (ioctl(c->fd, FIONREAD, &arrived) == 0 && arrived > 0 && (size_t)arrived > more)
		more = (size_t)arrived;
	if (more > DIRECT_READ_MAX)
		more = DIRECT_READ_MAX;
	if (more > rx->frag_left)
		more = rx->frag_left;
	return rx_grow(c, rx->rec_len + more);
}

/*
 * Parse staged bytes.  Returns 1 with a complete record in *@rec / *@len
 * (ownership passes), 0 when more input is needed, or a negative error for
 * a framing violation.
 */
static int rx_parse(struct rpcrdma__sock_conn *c, uint8_t **rec, size_t *len)
{
	struct rpcrdma__sock_rx *rx = &c->rx;

	for (;;) {
		if (!rx->in_frag) {
			uint32_t v;

			/* A new record's first byte: its clock starts here. */
			if (!rx->frags && !rx->mark_have && rx->st_off < rx->st_len)
				rx->rec_began = rpcrdma_loop_now(c->loop);
			while (rx->mark_have < 4 && rx->st_off < rx->st_len)
				rx->mark[rx->mark_have++] = rx->stage[rx->st_off++];
			if (rx->mark_have < 4)
				return 0;
			rx->mark_have = 0;
			v = rpcrdma__sock_get_be32(rx->mark);
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

int rpcrdma__sock_deliver_staged(struct rpcrdma__sock_conn *c, rpcrdma__sock_deliver_fn deliver,
				 void *arg)
{
	for (;;) {
		uint8_t *rec = NULL;
		size_t len = 0;
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

int rpcrdma__sock_read(struct rpcrdma__sock_conn *c, rpcrdma__sock_deliver_fn deliver, void *arg)
{
	struct rpcrdma__sock_rx *rx = &c->rx;

	for (int reads = 0; reads < READ_BURST; reads++) {
		ssize_t n;
		int rc;

		rc = rpcrdma__sock_deliver_staged(c, deliver, arg);
		if (rc)
			return rc;
		rx->st_off = rx->st_len = 0;
		/*
		 * Inside a large fragment body with nothing staged: read it
		 * straight into the record rather than through the stage.
		 */
		if (rx->in_frag && rx->frag_left >= STAGE_SIZE) {
			size_t want;

			rc = rx_direct_room(c);
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
	return rpcrdma__sock_deliver_staged(c, deliver, arg);
}

int rpcrdma__sock_flush(struct rpcrdma__sock_conn *c)
{
	while (c->q.head) {
		struct iovec iov[IOV_BATCH];
		struct msghdr msg;
		struct rpcrdma__sock_buf *b;
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
			c->head_since = c->last_tx;
			if (!c->q.head)
				c->q.tail = NULL;
			if (b->creq)
				b->creq->tpriv = NULL;
			free(b);
		}
	}
	rpcrdma__sock_conn_update(c);
	return 0;
}

int rpcrdma__sock_set_nodelay(int fd)
{
	int one = 1;

	/* Calls and replies are small and latency-bound: no Nagle. */
	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

bool rpcrdma__sock_rx_in_record(const struct rpcrdma__sock_rx *rx)
{
	return rx->mark_have || rx->frags;
}
