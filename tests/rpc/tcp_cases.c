/*
 * Cases that speak raw TCP: replies checked byte for byte (RPC_MISMATCH,
 * AUTH_ERROR forms), the duplicate request cache seen from the wire, and
 * hostile record marking (empty, huge and too many fragments, records over
 * the limit, garbage, a peer that leaves mid-record or never reads), plus a
 * hand-written server that answers a client badly.
 */
#include <stdatomic.h>

#include "suite.h"

void case_rpc_mismatch_raw(void)
{
	const uint8_t *b;
	uint8_t msg[64];
	struct raw r;
	struct env e;
	ssize_t n;

	env_up(&e, 0);
	raw_open(&r, e.loop, e.port);
	raw_send_record(&r, msg, build_call(msg, 0xabcd0001, 3, P_NULL));
	n = raw_recv_record(&r, e.loop, 3000);
	b = reply_body(&r, n, 0xabcd0001, RPCRDMA_RPC_MSG_DENIED);
	CHECK_EQ(n, 24);
	CHECK_EQ(get32(b), RPCRDMA_RPC_MISMATCH);
	CHECK_EQ(get32(b + 4), 2);
	CHECK_EQ(get32(b + 8), 2);
	/* Only the XID and rpcvers of such a call are read: 12 bytes do. */
	raw_send_record(&r, msg, 12);
	n = raw_recv_record(&r, e.loop, 3000);
	reply_body(&r, n, 0xabcd0001, RPCRDMA_RPC_MSG_DENIED);
	/* And the connection serves a good call after it. */
	raw_send_record(&r, msg, build_call(msg, 0xabcd0002, 2, P_NULL));
	n = raw_recv_record(&r, e.loop, 3000);
	b = reply_body(&r, n, 0xabcd0002, RPCRDMA_RPC_MSG_ACCEPTED);
	CHECK_EQ(get32(b + 8), RPCRDMA_RPC_SUCCESS);
	raw_close(&r);
	env_down(&e);
}

void case_auth(void)
{
	struct rpcrdma_client_opts co;
	struct rpcrdma_opaque_auth cred;
	struct rpcrdma_auth_sys sys;
	struct rpcrdma_client *c;
	struct rpcrdma_call call;
	struct whoami w;
	const uint8_t *b;
	uint8_t msg[600];
	struct raw r;
	struct env e;
	size_t len;
	ssize_t n;

	env_up(&e, 0);
	call_init(&call, P_WHOAMI, NULL, NULL, xdr_whoami_dec, &w);
	CHECK_EQ(rpcrdma_client_call(e.clnt, &call), 0);
	CHECK_EQ(w.flavor, RPCRDMA_AUTH_NONE);
	CHECK_EQ(w.uid, UINT32_MAX);

	memset(&sys, 0, sizeof(sys));
	sys.stamp = 99;
	strcpy(sys.machinename, "rpc-suite");
	sys.uid = 1234;
	sys.gid = 567;
	sys.ngids = 2;
	sys.gids[0] = 10;
	sys.gids[1] = 20;
	CHECK_EQ(rpcrdma_auth_sys_encode(&sys, &cred), 0);
	rpcrdma_client_opts_default(&co);
	co.cred = &cred;
	c = client_for(e.loop, e.port, TEST_PROG, 1, &co);
	memset(&cred, 0, sizeof(cred)); /* the client keeps its own copy */
	CHECK_EQ(rpcrdma_client_call(c, &call), 0);
	CHECK_EQ(w.flavor, RPCRDMA_AUTH_SYS);
	CHECK_EQ(w.uid, 1234);
	CHECK_EQ(w.gid, 567);
	rpcrdma_client_destroy(c);

	/* A flavor the server does not take, and an AUTH_SYS body that does not parse. */
	for (int i = 0; i < 2; i++) {
		memset(&cred, 0, sizeof(cred));
		cred.flavor = i == 0 ? RPCRDMA_AUTH_DH : RPCRDMA_AUTH_SYS;
		cred.len = 8;
		co.cred = &cred;
		c = client_for(e.loop, e.port, TEST_PROG, 1, &co);
		CHECK_EQ(rpcrdma_client_call(c, &call), RPCRDMA_ERR_RPC_REJECTED);
		CHECK_EQ(call.reply.stat, RPCRDMA_RPC_MSG_DENIED);
		CHECK_EQ(call.reply.reject_stat, RPCRDMA_RPC_AUTH_ERROR);
		CHECK_EQ(call.reply.auth_stat, RPCRDMA_AUTH_BADCRED);
		rpcrdma_client_destroy(c);
	}

	/* Raw: a verifier that is not AUTH_NONE, then an over-long credential. */
	raw_open(&r, e.loop, e.port);
	len = build_call(msg, 0x5151, 2, P_NULL);
	put32(msg + 32, RPCRDMA_AUTH_SYS);
	raw_send_record(&r, msg, len);
	n = raw_recv_record(&r, e.loop, 3000);
	b = reply_body(&r, n, 0x5151, RPCRDMA_RPC_MSG_DENIED);
	CHECK_EQ(get32(b), RPCRDMA_RPC_AUTH_ERROR);
	CHECK_EQ(get32(b + 4), RPCRDMA_AUTH_BADVERF);

	len = build_call(msg, 0x5152, 2, P_NULL);
	put32(msg + 28, 404);
	memset(msg + 32, 0, 404 + 8);
	raw_send_record(&r, msg, 32 + 404 + 8);
	n = raw_recv_record(&r, e.loop, 3000);
	b = reply_body(&r, n, 0x5152, RPCRDMA_RPC_MSG_DENIED);
	CHECK_EQ(get32(b), RPCRDMA_RPC_AUTH_ERROR);
	CHECK_EQ(get32(b + 4), RPCRDMA_AUTH_BADCRED);
	raw_close(&r);
	env_down(&e);
}

void case_drc_replay_raw(void)
{
	uint8_t msg[64], first[64];
	struct raw r, r2;
	ssize_t n, n1;
	struct env e;
	size_t len;

	env_up(&e, 0);
	len = build_call(msg, 0x77770001, 2, P_COUNT);
	put32(msg + len, 5);
	len += 4;
	raw_open(&r, e.loop, e.port);
	raw_send_record(&r, msg, len);
	n1 = raw_recv_record(&r, e.loop, 3000);
	CHECK(n1 > 0 && (size_t)n1 <= sizeof(first));
	memcpy(first, r.buf + 4, (size_t)n1);
	CHECK_EQ(get32(first + (n1 - 4)), 1);
	/* The same call again, on this connection and on another one. */
	raw_send_record(&r, msg, len);
	n = raw_recv_record(&r, e.loop, 3000);
	CHECK_EQ(n, n1);
	CHECK(memcmp(first, r.buf + 4, (size_t)n) == 0);
	/* Another client (another port) with the same call: its own. */
	raw_open(&r2, e.loop, e.port);
	raw_send_record(&r2, msg, len);
	n = raw_recv_record(&r2, e.loop, 3000);
	CHECK_EQ(n, n1);
	CHECK_EQ(get32(r2.buf + 4 + n - 4), 2);
	raw_abort(&r2);
	/* The first client reconnecting from its port: the cached reply. */
	raw_reconnect(&r2, &r, e.loop, e.port);
	raw_send_record(&r2, msg, len);
	n = raw_recv_record(&r2, e.loop, 3000);
	CHECK_EQ(n, n1);
	CHECK(memcmp(first, r2.buf + 4, (size_t)n) == 0);
	CHECK_EQ(svc.count_execs, 2);
	/* Same XID, other arguments: executed. */
	put32(msg + len - 4, 6);
	raw_send_record(&r2, msg, len);
	n = raw_recv_record(&r2, e.loop, 3000);
	CHECK(n > 0);
	CHECK_EQ(get32(r2.buf + 4 + n - 4), 3);
	raw_close(&r2);
	env_down(&e);
}

void case_hostile_fragments(void)
{
	uint8_t msg[64], marks[4 * 100];
	struct rpcrdma_xprt_stats st;
	struct raw r;
	struct env e;
	ssize_t n;
	size_t len;

	env_up(&e, 0);

	/* 100 empty fragments, then the call as the last one: a good record. */
	raw_open(&r, e.loop, e.port);
	memset(marks, 0, sizeof(marks));
	raw_send(&r, marks, sizeof(marks));
	raw_send_record(&r, msg, build_call(msg, 0x1001, 2, P_NULL));
	n = raw_recv_record(&r, e.loop, 3000);
	reply_body(&r, n, 0x1001, RPCRDMA_RPC_MSG_ACCEPTED);

	/* A call split into 4-byte fragments, and sent one byte at a time. */
	len = build_call(msg, 0x1002, 2, P_NULL);
	for (size_t off = 0; off < len; off += 4) {
		uint8_t frag[8];

		put32(frag, (off + 4 == len ? 0x80000000u : 0) | 4);
		memcpy(frag + 4, msg + off, 4);
		for (int i = 0; i < 8; i++) {
			raw_send(&r, frag + i, 1);
			CHECK(rpcrdma_loop_run_once(e.loop, 0) >= 0);
		}
	}
	n = raw_recv_record(&r, e.loop, 3000);
	reply_body(&r, n, 0x1002, RPCRDMA_RPC_MSG_ACCEPTED);

	/* Garbage that is not an RPC call: dropped, the connection lives on. */
	memset(msg, 0xee, 32);
	raw_send_record(&r, msg, 32);
	put32(msg, 0x1003);
	put32(msg + 4, RPCRDMA_RPC_REPLY); /* a reply sent to a server */
	raw_send_record(&r, msg, 24);
	memset(msg + 8, 0, 16); /* ... and one that parses */
	raw_send_record(&r, msg, 24);
	raw_send_record(&r, msg, 3); /* shorter than an XID */
	raw_send_record(&r, msg, build_call(msg, 0x1004, 2, P_NULL));
	n = raw_recv_record(&r, e.loop, 3000);
	reply_body(&r, n, 0x1004, RPCRDMA_RPC_MSG_ACCEPTED);
	CHECK_EQ(rpcrdma_server_stats(e.srv, &st), 0);
	CHECK(st.bad_msgs >= 4);

	/* Truncated arguments: GARBAGE_ARGS. */
	len = build_call(msg, 0x1005, 2, P_ADD);
	put32(msg + len, 1);
	raw_send_record(&r, msg, len + 4);
	n = raw_recv_record(&r, e.loop, 3000);
	CHECK_EQ(get32(reply_body(&r, n, 0x1005, RPCRDMA_RPC_MSG_ACCEPTED) + 8),
		 RPCRDMA_RPC_GARBAGE_ARGS);

	/* An empty record: the connection is closed. */
	put32(marks, 0x80000000u);
	raw_send(&r, marks, 4);
	CHECK(raw_closed_by_server(&r, e.loop));
	raw_close(&r);
	env_down(&e);
}

void case_hostile_lengths(void)
{
	static const uint32_t bad_marks[] = {
	    0xffffffffu,                                  /* 2 GiB - 1, last */
	    0x7fffffffu,                                  /* 2 GiB - 1, more to come */
	    0x80000000u | ((1u << 20) + (64u << 10) + 1), /* one over the default limit */
	};
	uint8_t mark[4], msg[64];
	struct raw r;
	struct env e;
	ssize_t n;

	env_up(&e, 0);
	for (size_t i = 0; i < sizeof(bad_marks) / sizeof(bad_marks[0]); i++) {
		raw_open(&r, e.loop, e.port);
		put32(mark, bad_marks[i]);
		raw_send(&r, mark, 4);
		raw_send(&r, "abcd", 4);
		CHECK(raw_closed_by_server(&r, e.loop));
		raw_close(&r);
	}
	/* Fragments that are fine alone but not together: closed after the second header. */
	raw_open(&r, e.loop, e.port);
	put32(mark, 1u << 20);
	raw_send(&r, mark, 4);
	{
		uint8_t *blob = calloc(1, 1u << 20);

		CHECK(blob);
		raw_send(&r, blob, 1u << 20);
		free(blob);
	}
	put32(mark, 0x80000000u | (128u << 10));
	raw_send(&r, mark, 4);
	CHECK(raw_closed_by_server(&r, e.loop));
	raw_close(&r);

	/* Too many fragments (65537 empty ones). */
	raw_open(&r, e.loop, e.port);
	{
		size_t sz = 4 * 65537;
		uint8_t *zeros = calloc(1, sz);

		CHECK(zeros);
		raw_send(&r, zeros, sz);
		free(zeros);
	}
	CHECK(raw_closed_by_server(&r, e.loop));
	raw_close(&r);

	/* A peer that leaves mid-record. */
	raw_open(&r, e.loop, e.port);
	put32(mark, 0x80000000u | 1000);
	raw_send(&r, mark, 4);
	raw_send(&r, "half", 4);
	CHECK(rpcrdma_loop_run_once(e.loop, 10) >= 0);
	raw_close(&r);
	pump_ms(e.loop, 20);

	/* Through all that the server kept serving. */
	raw_open(&r, e.loop, e.port);
	raw_send_record(&r, msg, build_call(msg, 0x2001, 2, P_NULL));
	n = raw_recv_record(&r, e.loop, 3000);
	reply_body(&r, n, 0x2001, RPCRDMA_RPC_MSG_ACCEPTED);
	raw_close(&r);
	env_down(&e);
}

void case_max_record(void)
{
	struct rpcrdma_client_opts co;
	struct rpcrdma_client *small;
	struct rpcrdma_call call;
	struct echo *in, *out;
	uint8_t mark[4];
	struct raw r;
	struct env e;

	env_up(&e, 4096);
	in = malloc(sizeof(*in));
	out = malloc(sizeof(*out));
	CHECK(in && out);
	memset(in->data, 0x42, 8192);
	in->len = 3000;
	call_init(&call, P_ECHO, xdr_echo_enc, in, xdr_echo_dec, out);
	CHECK_EQ(rpcrdma_client_call(e.clnt, &call), 0);
	CHECK_EQ(out->len, 3000);

	/* A record one byte over the server's 4096: the connection is closed. */
	raw_open(&r, e.loop, e.port);
	put32(mark, 0x80000000u | 4097);
	raw_send(&r, mark, 4);
	CHECK(raw_closed_by_server(&r, e.loop));
	raw_close(&r);

	/* The same call that would overflow it: the client loses the connection each try,
	 * reset before any reply, which the client reports as it would a wrong port. */
	in->len = 5000;
	rpcrdma_client_opts_default(&co);
	co.retries = 1;
	co.timeout_ms = 10000;
	small = client_for(e.loop, e.port, TEST_PROG, 1, &co);
	CHECK_EQ(rpcrdma_client_call(small, &call), RPCRDMA_ERR_NOT_TCP_PEER);
	rpcrdma_client_destroy(small);

	/* A client that accepts 1 KiB replies: an echo of 2000 bytes cannot come back. */
	in->len = 2000;
	co.max_record = 1024;
	small = client_for(e.loop, e.port, TEST_PROG, 1, &co);
	CHECK(rpcrdma_client_call(small, &call) < 0);
	rpcrdma_client_destroy(small);
	free(in);
	free(out);
	env_down(&e);
}

/* A client that sends big calls and does not read: the server stops reading it. */
void case_server_backpressure(void)
{
	enum { N = 16 };
	const size_t len = 40 + 4 + ECHO_MAX;
	struct rpcrdma_xprt_stats st;
	uint8_t *msg = malloc(len);
	struct raw r;
	struct env e;

	CHECK(msg);
	env_up(&e, 0);
	build_call(msg, 0, 2, P_ECHO);
	put32(msg + 40, ECHO_MAX);
	memset(msg + 44, 0x3c, ECHO_MAX);
	raw_open(&r, e.loop, e.port);
	for (uint32_t i = 0; i < N; i++) {
		put32(msg, 0x9000 + i);
		raw_send_record(&r, msg, len);
	}
	for (uint32_t i = 0; i < N; i++) {
		ssize_t n = raw_recv_record(&r, e.loop, 10000);

		CHECK_EQ(n, 24 + 4 + ECHO_MAX);
		reply_body(&r, n, 0x9000 + i, RPCRDMA_RPC_MSG_ACCEPTED);
		CHECK_EQ(get32(r.buf + 4 + 24), ECHO_MAX);
		CHECK(r.buf[4 + 28 + ECHO_MAX - 1] == 0x3c);
	}
	CHECK_EQ(rpcrdma_server_stats(e.srv, &st), 0);
	CHECK_EQ(st.calls_received, N);
	CHECK_EQ(st.calls_sent, N);
	raw_close(&r);
	free(msg);
	env_down(&e);
}

/* Three copies of a call in progress from one client: one runs, the newest
 * duplicate gets the reply. */
void case_drc_parked(void)
{
	struct raw r[3];
	uint8_t msg[64];
	struct env e;
	size_t len;
	ssize_t n;

	env_up(&e, 0);
	len = build_call(msg, 0x4242, 2, P_DEFER);
	put32(msg + len, 800);
	put32(msg + len + 4, 7);
	len += 8;
	for (int i = 0; i < 3; i++) {
		struct rpcrdma_xprt_stats st;

		/* The same client (address and port) on each connection,
		 * as a TCP client that reconnects keeps its port; each
		 * reconnection resets the connection before. */
		if (i == 0)
			raw_open(&r[i], e.loop, e.port);
		else
			raw_reconnect(&r[i], &r[i - 1], e.loop, e.port);
		raw_send_record(&r[i], msg, len);
		/* One at a time: the server must have seen this copy before the next. */
		do {
			CHECK(rpcrdma_loop_run_once(e.loop, 10) >= 0);
			CHECK_EQ(rpcrdma_server_stats(e.srv, &st), 0);
		} while (svc.defer_execs + st.retransmits < (unsigned int)i + 1);
	}
	CHECK_EQ(svc.defer_execs, 1);
	/* The newest copy gets the reply (the one in the middle and the
	 * original's went with their connections). */
	n = raw_recv_record(&r[2], e.loop, 3000);
	CHECK_EQ(get32(reply_body(&r[2], n, 0x4242, RPCRDMA_RPC_MSG_ACCEPTED) + 12), 8);
	raw_close(&r[2]);
	env_down(&e);
	CHECK_EQ(svc.free_res_calls, 1);
}

void case_client_hostile_server(void)
{
	struct rpcrdma_xprt_stats st;
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	struct rpcrdma_loop *loop;
	struct rpcrdma_client *c;
	struct add_call a;
	struct async_ctx ctx = {0};
	uint8_t msg[64], mark[4];
	struct raw r;
	char port[16];
	uint32_t xid;
	int lfd;
	ssize_t n;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK_EQ(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	CHECK_EQ(listen(lfd, 4), 0);
	CHECK_EQ(getsockname(lfd, (struct sockaddr *)&sin, &sl), 0);
	snprintf(port, sizeof(port), "%d", ntohs(sin.sin_port));
	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	c = client_for(loop, port, TEST_PROG, 1, NULL);

	memset(msg, 0, sizeof(msg));
	start_adds(c, &a, 1, &ctx, 0);
	raw_adopt(&r, loop, accept_one(loop, lfd));
	n = raw_recv_record(&r, loop, 3000);
	CHECK(n >= 48);
	xid = get32(r.buf + 4);
	CHECK_EQ(xid, a.call.xid);
	raw_send_record(&r, msg, 3);                            /* too short */
	raw_send_record(&r, msg, build_reply(msg, xid + 1, 5)); /* nobody's XID */
	raw_send_record(&r, msg, build_call(msg, xid, 2, 0));   /* a call, not a reply */
	raw_send_record(&r, msg, build_reply(msg, xid, 0));     /* 0 + 0 */
	while (!ctx.done)
		CHECK(rpcrdma_loop_run_once(loop, 1000) >= 0);
	CHECK_EQ(ctx.fails, 0);
	CHECK_EQ(rpcrdma_client_stats(c, &st), 0);
	CHECK_EQ(st.bad_msgs, 3);

	/* A reply whose header does not parse fails the call. */
	ctx.done = 0;
	start_adds(c, &a, 1, &ctx, 0);
	n = raw_recv_record(&r, loop, 3000);
	CHECK(n >= 48);
	build_reply(msg, a.call.xid, 0);
	put32(msg + 8, 9);
	raw_send_record(&r, msg, 28);
	while (!ctx.done)
		CHECK(rpcrdma_loop_run_once(loop, 1000) >= 0);
	CHECK_EQ(a.call.status, RPCRDMA_ERR_BAD_RPC);

	/* A 2 GiB fragment: the client hangs up, reconnects, and sends again. */
	ctx.done = 0;
	ctx.fails = 0;
	start_adds(c, &a, 1, &ctx, 0);
	n = raw_recv_record(&r, loop, 3000);
	CHECK(n >= 48);
	put32(mark, 0xffffffffu);
	raw_send(&r, mark, 4);
	CHECK_EQ(raw_recv_record(&r, loop, 3000), 0);
	raw_close(&r);
	raw_adopt(&r, loop, accept_one(loop, lfd));
	n = raw_recv_record(&r, loop, 3000);
	CHECK(n >= 48);
	CHECK_EQ(get32(r.buf + 4), a.call.xid); /* the same XID */
	raw_send_record(&r, msg, build_reply(msg, a.call.xid, 0));
	while (!ctx.done)
		CHECK(rpcrdma_loop_run_once(loop, 1000) >= 0);
	CHECK_EQ(ctx.fails, 0);
	CHECK_EQ(rpcrdma_client_stats(c, &st), 0);
	CHECK_EQ(st.reconnects, 1);
	CHECK_EQ(st.retransmits, 1);

	/* The server goes away for good: the call fails once its retries are spent. */
	ctx.done = 0;
	start_adds(c, &a, 1, &ctx, 0);
	n = raw_recv_record(&r, loop, 3000);
	CHECK(n >= 48);
	raw_close(&r);
	close(lfd);
	while (!ctx.done)
		CHECK(rpcrdma_loop_run_once(loop, 1000) >= 0);
	CHECK(a.call.status == -ECONNREFUSED || a.call.status == -ECONNRESET);
	rpcrdma_client_destroy(c);
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
}

/*
 * Someone else churning loopback connections: their connect()s take
 * ephemeral ports, and on Linux a port one connect() took is shared by
 * others to other destinations.  CHURN_HELD of theirs stay open at a time.
 */
#define CHURN_HELD 200

struct churn {
	pthread_t thread;
	atomic_bool stop;
	int listen_fd;
	struct sockaddr_in addr;
};

static void *churn_run(void *arg)
{
	struct churn *ch = arg;
	int held[CHURN_HELD][2];
	unsigned int n = 0, next = 0;

	while (!atomic_load(&ch->stop)) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), afd;

		CHECK(fd >= 0);
		if (connect(fd, (const struct sockaddr *)&ch->addr, sizeof(ch->addr)) < 0) {
			close(fd); /* out of ports for a moment: let the kernel breathe */
			usleep(1000);
			continue;
		}
		afd = accept(ch->listen_fd, NULL, NULL);
		CHECK(afd >= 0);
		if (n == CHURN_HELD) {
			close(held[next][0]);
			close(held[next][1]);
		} else {
			n++;
		}
		held[next][0] = fd;
		held[next][1] = afd;
		next = (next + 1) % CHURN_HELD;
	}
	for (unsigned int i = 0; i < n; i++) {
		close(held[i][0]);
		close(held[i][1]);
	}
	return NULL;
}

static void churn_start(struct churn *ch)
{
	socklen_t len = sizeof(ch->addr);

	memset(ch, 0, sizeof(*ch));
	ch->addr.sin_family = AF_INET;
	ch->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ch->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(ch->listen_fd >= 0);
	CHECK_EQ(bind(ch->listen_fd, (const struct sockaddr *)&ch->addr, sizeof(ch->addr)), 0);
	CHECK_EQ(listen(ch->listen_fd, 64), 0);
	CHECK_EQ(getsockname(ch->listen_fd, (struct sockaddr *)&ch->addr, &len), 0);
	CHECK_EQ(pthread_create(&ch->thread, NULL, churn_run, ch), 0);
}

static void churn_stop(struct churn *ch)
{
	atomic_store(&ch->stop, true);
	CHECK_EQ(pthread_join(ch->thread, NULL), 0);
	close(ch->listen_fd);
}

/*
 * A call whose reply is lost runs once though other processes' connect()s
 * churn the ephemeral ports: the client reconnects from the port the
 * server's cache knows it by, every time, and no call fails for a port.
 */
void case_conn_cut_port_churn(void)
{
	struct rpcrdma_xprt_stats cs, ss;
	struct rpcrdma_call call;
	uint32_t tag = 1, count = 0;
	struct churn ch;
	struct env e;

	churn_start(&ch);
	env_up(&e, 0);
	CHECK_EQ(rpcrdma_client_connect(e.clnt), 0);
	for (uint32_t i = 1; i <= 20; i++) {
		pump_ms(e.loop, 5); /* the churn moves on meanwhile */
		svc.cut = e.clnt;
		call_init(&call, P_COUNT, xdr_u32_enc, &tag, xdr_u32_dec, &count);
		CHECK_EQ(rpcrdma_client_call(e.clnt, &call), 0);
		CHECK_EQ(count, i);
		CHECK_EQ(svc.count_execs, i);
	}
	CHECK_EQ(rpcrdma_client_stats(e.clnt, &cs), 0);
	CHECK_EQ(cs.reconnects, 20);
	CHECK_EQ(cs.retransmits, 20);
	CHECK_EQ(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK_EQ(ss.retransmits, 20);
	env_down(&e);
	churn_stop(&ch);
}

/*
 * A server that accepts and closes at once: each connection was up, but
 * only briefly, so the client backs off as after a failed attempt instead
 * of reconnecting in a tight loop.  The call (many retries allowed) keeps
 * the connection wanted for 1.5 s; reconnecting at 0, 0, 100, 200, 400
 * and 800 ms is 6 connections, a tight loop thousands.
 */
void case_reconnect_backoff_brief(void)
{
	struct rpcrdma_client_opts co;
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	struct rpcrdma_loop *loop;
	struct rpcrdma_client *c;
	struct add_call a;
	struct async_ctx ctx = {0};
	unsigned int accepted = 0;
	char port[16];
	int lfd, fd;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK_EQ(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	CHECK_EQ(listen(lfd, 64), 0);
	CHECK_EQ(getsockname(lfd, (struct sockaddr *)&sin, &sl), 0);
	snprintf(port, sizeof(port), "%d", ntohs(sin.sin_port));
	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	rpcrdma_client_opts_default(&co);
	co.timeout_ms = 1500;
	co.retries = 1000000;
	c = client_for(loop, port, TEST_PROG, 1, &co);

	start_adds(c, &a, 1, &ctx, 0);
	while (!ctx.done) {
		CHECK(rpcrdma_loop_run_once(loop, 5) >= 0);
		while ((fd = accept(lfd, NULL, NULL)) >= 0) {
			close(fd);
			accepted++;
		}
	}
	CHECK_EQ(ctx.fails, 1);
	CHECK_EQ(a.call.status, RPCRDMA_ERR_TIMEDOUT);
	CHECK(accepted >= 2);
	CHECK(accepted <= 10);
	rpcrdma_client_destroy(c);
	CHECK_EQ(rpcrdma_loop_run_once(loop, 0) >= 0, 1);
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
	close(lfd);
}
