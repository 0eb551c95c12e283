/*
 * One client over several connections (rpcrdma_client_opts.nconnect): calls
 * spread over them, one connection lost with calls out and every call
 * completed exactly once at the server, and the bound.
 */
#include "rpcrdma/debug.h"
#include "suite.h"

#define NCONN 4u
#define NCALLS 32

static struct rpcrdma_client *nconnect_client(struct env *e, unsigned int n)
{
	struct rpcrdma_client_opts co;

	rpcrdma_client_opts_default(&co);
	co.timeout_ms = 20000;
	co.nconnect = n;
	return client_for(e->loop, e->port, TEST_PROG, 1, &co);
}

static uint64_t conn_sent(struct rpcrdma_client *c, unsigned int i)
{
	struct rpcrdma_xprt_stats st;

	CHECK_EQ(rpcrdma_client_conn_stats(c, i, &st), 0);
	return st.calls_sent;
}

/* Calls go round the connections; the in-flight list shows each one's. */
void case_nconnect_spread(void)
{
	struct rpcrdma_call_info info[NCALLS + 8];
	struct rpcrdma_xprt_stats total;
	struct defer_call d[NCALLS];
	uint64_t sent[NCONN], sum = 0;
	uint32_t ids[NCONN] = {0};
	unsigned int nids = 0;
	struct env e;
	int32_t s;
	int n;

	env_up(&e, 0);
	rpcrdma_client_destroy(e.clnt);
	e.clnt = nconnect_client(&e, NCONN);
	CHECK_EQ(rpcrdma_client_connect(e.clnt), 0);
	for (int i = 0; i < 40; i++) {
		CHECK_EQ(add(e.clnt, i, 1, &s), 0);
		CHECK_EQ(s, i + 1);
	}
	/* One call at a time: every connection is as idle as the others,
	 * so they take turns. */
	for (unsigned int i = 0; i < NCONN; i++) {
		sent[i] = conn_sent(e.clnt, i);
		CHECK_EQ(sent[i], 40 / NCONN);
		sum += sent[i];
	}
	CHECK_EQ(rpcrdma_client_stats(e.clnt, &total), 0);
	CHECK_EQ(total.calls_sent, sum);
	CHECK_EQ(total.calls_received, 40);
	CHECK_EQ(rpcrdma_client_conn_stats(e.clnt, NCONN, &total), -ENOENT);

	/* Calls the server holds: all out at once, spread evenly.  Held
	 * until they are counted, not for a time: one answered before the
	 * last was run would be missing from the in-flight list. */
	for (int i = 0; i < NCALLS; i++)
		start_defer(e.clnt, &d[i], 600000, (uint32_t)i);
	while (svc.defer_execs < NCALLS)
		CHECK(rpcrdma_loop_run_once(e.loop, 1000) >= 0);
	n = rpcrdma_client_inflight(e.clnt, info, NCALLS + 8);
	CHECK_EQ(n, NCALLS);
	for (int i = 0; i < n; i++) {
		unsigned int j;

		CHECK_EQ(info[i].state, RPCRDMA_CALL_SENT);
		CHECK(info[i].conn_id != 0);
		for (j = 0; j < nids && ids[j] != info[i].conn_id; j++)
			;
		if (j == nids) {
			CHECK(nids < NCONN);
			ids[nids++] = info[i].conn_id;
		}
	}
	CHECK_EQ(nids, NCONN);
	for (unsigned int i = 0; i < NCONN; i++)
		CHECK_EQ(conn_sent(e.clnt, i) - sent[i], NCALLS / NCONN);
	svc_answer_pending();
	for (int i = 0; i < NCALLS; i++) {
		while (d[i].completions == 0)
			CHECK(rpcrdma_loop_run_once(e.loop, 1000) >= 0);
		CHECK_EQ(d[i].status, 0);
		CHECK_EQ(d[i].res, (uint32_t)i + 1);
	}
	env_down(&e);
}

/*
 * One connection cut while the server holds every call: each call
 * completes once, executed once (the retransmissions meet the duplicate
 * request cache), over RDMA on the other connections, over TCP on its own
 * once it is back (same port: the cache keys TCP callers by port).  The
 * calls are held until the server has seen every retransmission, not for
 * a fixed time: a slow reconnection would otherwise find them answered.
 */
void case_nconnect_lost(void)
{
	struct rpcrdma_xprt_stats cs, ss;
	struct defer_call d[NCALLS];
	uint64_t before[NCONN], after[NCONN], moved = 0;
	const unsigned int cut = 1;
	struct env e;

	env_up(&e, 0);
	rpcrdma_client_destroy(e.clnt);
	e.clnt = nconnect_client(&e, NCONN);
	CHECK_EQ(rpcrdma_client_connect(e.clnt), 0);
	/* A first reply on each connection grants its credits (RDMA). */
	for (int i = 0; i < (int)NCONN; i++) {
		int32_t s;

		CHECK_EQ(add(e.clnt, i, 0, &s), 0);
	}
	for (int i = 0; i < NCALLS; i++)
		start_defer(e.clnt, &d[i], 600000, (uint32_t)i * 3);
	while (svc.defer_execs < NCALLS)
		CHECK(rpcrdma_loop_run_once(e.loop, 1000) >= 0);
	for (unsigned int i = 0; i < NCONN; i++)
		before[i] = conn_sent(e.clnt, i);
	CHECK_EQ(before[cut], 1 + NCALLS / NCONN);
	rpcrdma__client_disconnect_conn(e.clnt, cut);
	{
		uint64_t end = rpcrdma_loop_now(e.loop) + 20000;

		do {
			CHECK(rpcrdma_loop_now(e.loop) < end);
			CHECK(rpcrdma_loop_run_once(e.loop, 5) >= 0);
			CHECK_EQ(rpcrdma_server_stats(e.srv, &ss), 0);
		} while (ss.retransmits < NCALLS / NCONN);
	}
	for (int i = 0; i < NCALLS; i++)
		CHECK_EQ(d[i].completions, 0);
	svc_answer_pending();
	for (int i = 0; i < NCALLS; i++) {
		while (d[i].completions == 0)
			CHECK(rpcrdma_loop_run_once(e.loop, 1000) >= 0);
		CHECK_EQ(d[i].status, 0);
		CHECK_EQ(d[i].res, (uint32_t)i * 3 + 1);
	}
	pump_ms(e.loop, 50);
	CHECK_EQ(svc.defer_execs, NCALLS);
	for (int i = 0; i < NCALLS; i++)
		CHECK_EQ(d[i].completions, 1);
	CHECK_EQ(rpcrdma_client_stats(e.clnt, &cs), 0);
	CHECK_EQ(cs.retransmits, NCALLS / NCONN);
	CHECK_EQ(cs.timeouts, 0);
	CHECK_EQ(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK_EQ(ss.retransmits, NCALLS / NCONN);
	for (unsigned int i = 0; i < NCONN; i++) {
		after[i] = conn_sent(e.clnt, i);
		if (i != cut)
			moved += after[i] - before[i];
	}
	if (transport == RPCRDMA_TRANSPORT_RDMA) {
		CHECK_EQ(moved, NCALLS / NCONN);
	} else {
		CHECK_EQ(moved, 0);
		CHECK_EQ(after[cut] - before[cut], NCALLS / NCONN);
	}
	/* The connection lost is used again. */
	for (int i = 0; i < 8; i++) {
		int32_t s;

		CHECK_EQ(add(e.clnt, i, 2, &s), 0);
		CHECK_EQ(s, i + 2);
	}
	env_down(&e);
}

/* More than RPCRDMA_NCONNECT_MAX is refused with its own error. */
void case_nconnect_bound(void)
{
	struct rpcrdma_client_opts co;
	struct rpcrdma_client *c = NULL;
	struct rpcrdma_xprt_stats st;
	struct env e;
	int32_t s;

	env_up(&e, 0);
	rpcrdma_client_opts_default(&co);
	co.transport = transport;
	co.nconnect = RPCRDMA_NCONNECT_MAX + 1;
	CHECK_EQ(rpcrdma_client_create(e.loop, "127.0.0.1", e.port, TEST_PROG, 1, &co, &c),
		 RPCRDMA_ERR_NCONNECT);
	CHECK(c == NULL);
	CHECK(strstr(rpcrdma_strerror(RPCRDMA_ERR_NCONNECT), "nconnect") != NULL);
	co.nconnect = 1000000;
	CHECK_EQ(rpcrdma_client_create(e.loop, "127.0.0.1", e.port, TEST_PROG, 1, &co, &c),
		 RPCRDMA_ERR_NCONNECT);
	/* The bound itself is taken, and works. */
	co.nconnect = RPCRDMA_NCONNECT_MAX;
	co.timeout_ms = 20000;
	CHECK_EQ(rpcrdma_client_create(e.loop, "127.0.0.1", e.port, TEST_PROG, 1, &co, &c), 0);
	CHECK_EQ(rpcrdma_client_connect(c), 0);
	for (unsigned int i = 0; i < RPCRDMA_NCONNECT_MAX; i++) {
		CHECK_EQ(add(c, (int32_t)i, 5, &s), 0);
		CHECK_EQ(s, (int32_t)i + 5);
	}
	for (unsigned int i = 0; i < RPCRDMA_NCONNECT_MAX; i++)
		CHECK_EQ(conn_sent(c, i), 1);
	CHECK_EQ(rpcrdma_client_conn_stats(c, RPCRDMA_NCONNECT_MAX, &st), -ENOENT);
	rpcrdma_client_destroy(c);
	/* 0 and 1 are one connection, as before. */
	co.nconnect = 0;
	CHECK_EQ(rpcrdma_client_create(e.loop, "127.0.0.1", e.port, TEST_PROG, 1, &co, &c), 0);
	CHECK_EQ(add(c, 1, 1, &s), 0);
	CHECK_EQ(rpcrdma_client_conn_stats(c, 0, &st), 0);
	CHECK_EQ(st.calls_sent, 1);
	CHECK_EQ(rpcrdma_client_conn_stats(c, 1, &st), -ENOENT);
	rpcrdma_client_destroy(c);
	env_down(&e);
}
