/*
 * The TCP client's bounds in time under a hand-written hostile server
 * (docs/security.md, "What a server can make a client hold"): a reply
 * record begun and then trickled or stopped, and a server that stops
 * reading our calls, each close the connection after the client's
 * timeout_ms, and the calls go again on the next connection; a slow reply
 * within the bound is not cut.
 */
#include "suite.h"

#include <poll.h>

/* A listening socket on 127.0.0.1 whose port is written to @port;
 * @rcvbuf, when not 0, is the receive buffer its connections get. */
static int hostile_listen(char *port, size_t port_len, int rcvbuf)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	CHECK(lfd >= 0);
	if (rcvbuf)
		CHECK_EQ(setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)), 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK_EQ(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	CHECK_EQ(listen(lfd, 4), 0);
	CHECK_EQ(getsockname(lfd, (struct sockaddr *)&sin, &sl), 0);
	snprintf(port, port_len, "%d", ntohs(sin.sin_port));
	return lfd;
}

/* Whether the client has closed @r (it closes with a reset). */
static bool cut_by_client(struct raw *r)
{
	uint8_t b;
	ssize_t n = recv(r->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);

	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

/*
 * Send @len bytes of @p one at a time, @gap_ms apart, running @loop
 * between them.  Returns how long it took, or -1 if the client cut the
 * connection first.
 */
static int trickle(struct raw *r, const uint8_t *p, size_t len, int gap_ms)
{
	uint64_t start = rpcrdma_loop_now(r->loop);

	for (size_t i = 0; i < len; i++) {
		if (cut_by_client(r))
			return -1;
		raw_send(r, p + i, 1);
		pump_ms(r->loop, gap_ms);
	}
	return cut_by_client(r) ? -1 : (int)(rpcrdma_loop_now(r->loop) - start);
}

/* Run @loop until the client cuts @r; returns how long that took (at most
 * @limit_ms, or the case fails). */
static int wait_cut(struct raw *r, int limit_ms)
{
	uint64_t start = rpcrdma_loop_now(r->loop);

	while (!cut_by_client(r)) {
		CHECK(rpcrdma_loop_now(r->loop) - start < (uint64_t)limit_ms);
		CHECK(rpcrdma_loop_run_once(r->loop, 5) >= 0);
	}
	return (int)(rpcrdma_loop_now(r->loop) - start);
}

static struct rpcrdma_client *client_with_clock(struct rpcrdma_loop *loop, const char *port,
						int clock_ms)
{
	struct rpcrdma_client_opts co;

	rpcrdma_client_opts_default(&co);
	co.timeout_ms = clock_ms;
	return client_for(loop, port, TEST_PROG, 1, &co);
}

/* A record mark for a last fragment of @len bytes, and a reply after it. */
static size_t marked_reply(uint8_t *p, uint32_t xid, int32_t result)
{
	size_t len = build_reply(p + 4, xid, result);

	put32(p, 0x80000000u | (uint32_t)len);
	return 4 + len;
}

#define CLOCK_MS 400
/* A time-out of a call's own, longer than the client's clock. */
#define CALL_MS 20000

/*
 * A server that trickles a reply a byte at a time (well within any
 * per-byte gap), then one that begins a reply and stops.  The calls have
 * the client's time-out, so the connection's clock is that: each call
 * times out first, and its connection is cut one clock after the reply
 * began, freeing the record.  A server that answers gets the next call
 * answered on a new connection.
 */
void case_client_bound_reply_record(void)
{
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_loop *loop;
	struct rpcrdma_client *c;
	struct add_call a;
	struct async_ctx ctx = {0};
	uint8_t reply[64];
	struct raw r;
	char port[16];
	size_t len;
	int lfd, took;

	lfd = hostile_listen(port, sizeof(port), 0);
	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	c = client_with_clock(loop, port, CLOCK_MS);
	start_adds(c, &a, 1, &ctx, 0);

	/* 32 bytes, 50 ms apart: 1.6 s for the record, cut at 0.4 s. */
	raw_adopt(&r, loop, accept_one(loop, lfd));
	CHECK(raw_recv_record(&r, loop, 3000) >= 48);
	len = marked_reply(reply, a.call.xid, 0);
	CHECK_EQ(trickle(&r, reply, len, 50), -1);
	CHECK_EQ(rpcrdma_client_stats(c, &st), 0);
	CHECK_EQ(st.reply_record_timeouts, 1);
	raw_close(&r);
	while (ctx.done < 1)
		CHECK(rpcrdma_loop_run_once(loop, 1000) >= 0);
	CHECK_EQ(a.call.status, RPCRDMA_ERR_TIMEDOUT);

	/* The next call: the mark and half the reply, then nothing. */
	start_adds(c, &a, 1, &ctx, 0);
	raw_adopt(&r, loop, accept_one(loop, lfd));
	CHECK(raw_recv_record(&r, loop, 3000) >= 48);
	CHECK_EQ(get32(r.buf + 4), a.call.xid);
	len = marked_reply(reply, a.call.xid, 0);
	raw_send(&r, reply, len / 2);
	took = wait_cut(&r, 3000);
	CHECK(took >= CLOCK_MS - CLOCK_MS / 4); /* not before its time (less a tick) */
	CHECK_EQ(rpcrdma_client_stats(c, &st), 0);
	CHECK_EQ(st.reply_record_timeouts, 2);
	raw_close(&r);
	while (ctx.done < 2)
		CHECK(rpcrdma_loop_run_once(loop, 1000) >= 0);
	CHECK_EQ(a.call.status, RPCRDMA_ERR_TIMEDOUT);

	/* A server that answers at once. */
	start_adds(c, &a, 1, &ctx, 0);
	raw_adopt(&r, loop, accept_one(loop, lfd));
	CHECK(raw_recv_record(&r, loop, 3000) >= 48);
	CHECK_EQ(get32(r.buf + 4), a.call.xid);
	len = marked_reply(reply, a.call.xid, 0);
	raw_send(&r, reply, len);
	while (ctx.done < 3)
		CHECK(rpcrdma_loop_run_once(loop, 1000) >= 0);
	CHECK_EQ(ctx.fails, 2);
	CHECK_EQ(a.call.status, 0);
	CHECK_EQ(rpcrdma_client_stats(c, &st), 0);
	CHECK_EQ(st.reply_record_timeouts, 2);
	CHECK_EQ(st.send_stall_timeouts, 0);
	raw_close(&r);
	rpcrdma_client_destroy(c);
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
	close(lfd);
}

/*
 * Slow but healthy: three replies, each trickled over about 40% of the
 * clock, one right after the other.  Together they take longer than the
 * clock, but each record has its own from its first byte: nothing is cut.
 * (40%, not more: a loaded machine stretches each trickle's sleeps.)
 */
void case_client_bound_slow_reply(void)
{
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_loop *loop;
	struct rpcrdma_client *c;
	struct add_call a[3];
	struct async_ctx ctx = {0};
	uint8_t reply[64];
	struct raw r;
	char port[16];
	size_t len;
	int lfd, took = 0;
	const int clock_ms = 1000;

	lfd = hostile_listen(port, sizeof(port), 0);
	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	c = client_with_clock(loop, port, clock_ms);
	start_adds(c, a, 3, &ctx, CALL_MS);
	raw_adopt(&r, loop, accept_one(loop, lfd));
	for (int i = 0; i < 3; i++)
		CHECK(raw_recv_record(&r, loop, 3000) >= 48);
	for (int i = 0; i < 3; i++) {
		int one;

		len = marked_reply(reply, a[i].call.xid, a[i].args.a + a[i].args.b);
		one = trickle(&r, reply, len, clock_ms * 4 / 10 / (int)len);
		CHECK(one >= 0);
		took += one;
	}
	CHECK(took > clock_ms);
	while (ctx.done < 3)
		CHECK(rpcrdma_loop_run_once(loop, 1000) >= 0);
	CHECK_EQ(ctx.fails, 0);
	CHECK_EQ(rpcrdma_client_stats(c, &st), 0);
	CHECK_EQ(st.reply_record_timeouts, 0);
	CHECK_EQ(st.reconnects, 0);
	CHECK(!cut_by_client(&r));
	raw_close(&r);
	rpcrdma_client_destroy(c);
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
	close(lfd);
}

#define STALL_CALLS 16

struct stall_call {
	struct rpcrdma_call call;
	int status;
	bool done;
};

static void stall_done(struct rpcrdma_call *call, void *ctx)
{
	struct stall_call *s = ctx;

	s->status = call->status;
	s->done = true;
}

/*
 * A server that takes the connection and never reads: 16 MiB of calls
 * fill the sockets' buffers and then the client's send queue (the calls
 * past its 8 MiB wait: send_queue_full).  The calls have the client's
 * time-out, which is then the connection's clock: they time out, and
 * once nothing has been written for a clock the connection is cut, which
 * frees what was queued.
 */
void case_client_bound_send_stall(void)
{
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_loop *loop;
	struct rpcrdma_client *c;
	struct stall_call *calls;
	struct echo *args;
	struct raw r;
	char port[16];
	uint64_t start;
	int lfd;

	args = malloc(sizeof(*args));
	calls = calloc(STALL_CALLS, sizeof(*calls));
	CHECK(args && calls);
	args->len = ECHO_MAX;
	memset(args->data, 0x5a, ECHO_MAX);
	lfd = hostile_listen(port, sizeof(port), 4096);
	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	c = client_with_clock(loop, port, CLOCK_MS);
	CHECK_EQ(rpcrdma_client_connect(c), 0);
	raw_adopt(&r, loop, accept_one(loop, lfd));
	start = rpcrdma_loop_now(loop);
	for (int i = 0; i < STALL_CALLS; i++) {
		call_init(&calls[i].call, P_ECHO, xdr_echo_enc, args, NULL, NULL);
		calls[i].call.done = stall_done;
		calls[i].call.ctx = &calls[i];
		CHECK_EQ(rpcrdma_client_call_async(c, &calls[i].call), 0);
	}
	/* Nothing read: the connection goes within a clock and a tick of the
	 * last byte written, and not before a clock (less a tick) from the
	 * first call. */
	for (uint64_t end = rpcrdma_loop_now(loop) + 5000;;) {
		CHECK_EQ(rpcrdma_client_stats(c, &st), 0);
		if (st.send_stall_timeouts)
			break;
		CHECK(rpcrdma_loop_now(loop) < end);
		CHECK(rpcrdma_loop_run_once(loop, 5) >= 0);
	}
	CHECK(rpcrdma_loop_now(loop) - start >= CLOCK_MS - CLOCK_MS / 4);
	CHECK_EQ(st.send_stall_timeouts, 1);
	CHECK_EQ(st.reply_record_timeouts, 0);
	CHECK(st.send_queue_full >= 1);
	CHECK(st.inline_send_bytes < (uint64_t)STALL_CALLS * ECHO_MAX);
	raw_close(&r);
	for (uint64_t end = rpcrdma_loop_now(loop) + 5000;;) {
		bool all = true;

		for (int i = 0; i < STALL_CALLS; i++)
			all = all && calls[i].done;
		if (all)
			break;
		CHECK(rpcrdma_loop_now(loop) < end);
		CHECK(rpcrdma_loop_run_once(loop, 5) >= 0);
	}
	for (int i = 0; i < STALL_CALLS; i++)
		CHECK_EQ(calls[i].status, RPCRDMA_ERR_TIMEDOUT);
	rpcrdma_client_destroy(c);
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
	close(lfd);
	free(calls);
	free(args);
}

/*
 * A call given a time-out of its own, longer than the client's: the
 * reply comes steadily (never a gap of more than a tenth of the client's
 * clock) and is whole after twice that clock, well within the call's own
 * time.  The call is answered on its first connection: the call's
 * time-out raised the connection's clock.  With the client's clock alone
 * every connection was cut half-way through the reply, the server sent
 * the whole reply again on the next one, and the call, which asked to
 * wait CALL_MS, ended in an error once its retries were spent.
 */
void case_client_bound_call_timeout(void)
{
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_loop *loop;
	struct rpcrdma_client *c;
	struct add_call a;
	struct async_ctx ctx = {0};
	uint8_t reply[64];
	struct raw r;
	char port[16];
	size_t len;
	int lfd, cuts = 0;

	lfd = hostile_listen(port, sizeof(port), 0);
	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	c = client_with_clock(loop, port, CLOCK_MS);
	start_adds(c, &a, 1, &ctx, CALL_MS);
	for (int conn = 0; conn < 5 && !ctx.done; conn++) {
		uint64_t end = rpcrdma_loop_now(loop) + 3000;
		int lfd_ready = 0;

		/* The call may have failed for good: then no connection comes. */
		while (!ctx.done && !lfd_ready) {
			struct pollfd p = {.fd = lfd, .events = POLLIN};

			lfd_ready = poll(&p, 1, 0) > 0;
			CHECK(rpcrdma_loop_now(loop) < end);
			if (!lfd_ready)
				CHECK(rpcrdma_loop_run_once(loop, 5) >= 0);
		}
		if (ctx.done)
			break;
		raw_adopt(&r, loop, accept_one(loop, lfd));
		CHECK(raw_recv_record(&r, loop, 3000) >= 48);
		len = marked_reply(reply, a.call.xid, a.args.a + a.args.b);
		/* The whole reply over two clocks, at an even pace. */
		if (trickle(&r, reply, len, 2 * CLOCK_MS / (int)len) < 0)
			cuts++;
		for (uint64_t e2 = rpcrdma_loop_now(loop) + 200;
		     !ctx.done && rpcrdma_loop_now(loop) < e2;)
			CHECK(rpcrdma_loop_run_once(loop, 5) >= 0);
		raw_close(&r);
	}
	CHECK_EQ(rpcrdma_client_stats(c, &st), 0);
	CHECK(ctx.done);
	CHECK_EQ(ctx.fails, 0);
	CHECK_EQ(cuts, 0);
	CHECK_EQ(st.reply_record_timeouts, 0);
	rpcrdma_client_destroy(c);
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
	close(lfd);
}
