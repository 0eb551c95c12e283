/*
 * The trace facility (rpcrdma/trace.h) end to end: the application's
 * callback sees, for one call, the events its form implies, in order, with
 * the connection ids of both ends and the call's XID.  Included by
 * e2e_test.c (after v2_cases.c, whose env_up_vers it uses).
 */
#include "common/trace.h"
#include "rpcrdma/trace.h"

#define TREC_MAX 8192

struct trec_ev {
	enum rpcrdma_trace_kind kind;
	uint32_t conn, xid;
	int64_t a, b;
};

static struct trec {
	struct trec_ev ev[TREC_MAX];
	unsigned int n, lost;
} trec;

static void trec_fn(const struct rpcrdma_trace_event *ev, void *arg)
{
	char line[512];

	(void)arg;
	/* Every event formats; the line names its kind and ids. */
	if (rpcrdma_trace_format(ev, line, sizeof(line)) <= 0 ||
	    !strstr(line, rpcrdma_trace_kind_name(ev->kind)))
		trec.lost++;
	if (trec.n == TREC_MAX) {
		trec.lost++;
		return;
	}
	trec.ev[trec.n++] = (struct trec_ev){ev->kind, ev->conn_id, ev->xid, ev->a, ev->b};
}

static void trec_start(void)
{
	memset(&trec, 0, sizeof(trec));
	(void)rpcrdma_trace_set(RPCRDMA_TRACE_ALL, trec_fn, NULL);
}

static void trec_stop(void)
{
	(void)rpcrdma_trace_set(0, NULL, NULL);
}

/* The first event of @kind at or after @from (with @xid unless 0), or -1. */
static int trec_find(unsigned int from, enum rpcrdma_trace_kind kind, uint32_t xid)
{
	for (unsigned int i = from; i < trec.n; i++)
		if (trec.ev[i].kind == kind && (!xid || trec.ev[i].xid == xid))
			return (int)i;
	return -1;
}

/* @n kinds for @xid, in this order (other events may come between). */
static int trec_expect(uint32_t xid, const enum rpcrdma_trace_kind *kinds, unsigned int n,
		       int *at)
{
	int pos = 0;

	for (unsigned int i = 0; i < n; i++) {
		pos = trec_find((unsigned int)pos, kinds[i], xid);
		if (pos < 0) {
			fprintf(stderr, "trace: no %s for xid 0x%08x after event %u\n",
				rpcrdma_trace_kind_name(kinds[i]), xid, i);
			return 1;
		}
		if (at)
			at[i] = pos;
		pos++;
	}
	return 0;
}

/* The ids of the client's and the server's ends of the connection. */
static int trec_conn_ids(uint32_t *clnt, uint32_t *srv)
{
	int c = trec_find(0, RPCRDMA_TEV_CONNECT, 0), s = trec_find(0, RPCRDMA_TEV_ACCEPT, 0);

	CHECK(c >= 0 && s >= 0);
	*clnt = trec.ev[c].conn;
	*srv = trec.ev[s].conn;
	CHECK(*clnt && *srv && *clnt != *srv);
	return 0;
}

static int case_trace_api(void)
{
	uint32_t m;

	CHECK_RC(rpcrdma_trace_parse("conn,call", &m), 0);
	CHECK_RC(m, RPCRDMA_TRACE_CONN | RPCRDMA_TRACE_CALL);
	CHECK_RC(rpcrdma_trace_parse(" chunk credit,error vers ", &m), 0);
	CHECK_RC(m, RPCRDMA_TRACE_CHUNK | RPCRDMA_TRACE_CREDIT | RPCRDMA_TRACE_ERROR |
			RPCRDMA_TRACE_VERS);
	CHECK_RC(rpcrdma_trace_parse("ALL", &m), 0);
	CHECK_RC(m, RPCRDMA_TRACE_ALL);
	CHECK_RC(rpcrdma_trace_parse("conn,bogus", &m), -EINVAL);
	CHECK_RC(m, RPCRDMA_TRACE_CONN);
	CHECK_RC(rpcrdma_trace_parse("", &m), 0);
	CHECK_RC(m, 0);
	CHECK_RC(rpcrdma_trace_set(0x1000, trec_fn, NULL), -EINVAL);
	CHECK(strcmp(rpcrdma_trace_kind_name(RPCRDMA_TEV_VERS_FALLBACK), "vers_fallback") == 0);
	CHECK(strcmp(rpcrdma_trace_kind_name((enum rpcrdma_trace_kind)999), "unknown") == 0);
	return 0;
}

/* A Long Call: the requester's Position-Zero Read chunk and its grant,
 * the responder's view of it, then the fence after the reply. */
static int case_trace_long_call(void)
{
	static const enum rpcrdma_trace_kind want[] = {
	    RPCRDMA_TEV_LONG_CALL, RPCRDMA_TEV_GRANT, RPCRDMA_TEV_LONG_CALL, RPCRDMA_TEV_REVOKE};
	struct blob in = {.want = 5, .len = 300000, .data = malloc(300000)};
	struct blob out = {.want = 5, .data = malloc(8)};
	struct rpcrdma_call call;
	uint32_t cid, sid;
	int at[4];
	struct env e;

	CHECK(in.data && out.data);
	for (uint32_t i = 0; i < in.len; i++)
		in.data[i] = pat(in.len, i);
	trec_start();
	CHECK_RC(env_up(&e, 0, 0), 0);
	call_init(&call, P_BLOB, blob_enc, &in, res_blob_dec, &out);
	call.max_reply = 256;
	CHECK_RC(rpcrdma_client_call(e.clnt, &call), 0);
	CHECK_RC(env_down(&e), 0);
	trec_stop();
	CHECK_RC(trec_conn_ids(&cid, &sid), 0);
	CHECK_RC(trec_expect(call.xid, want, 4, at), 0);
	CHECK_RC(trec.ev[at[0]].conn, cid);
	CHECK(trec.ev[at[0]].a >= 300000);
	CHECK_RC(trec.ev[at[1]].conn, cid);
	CHECK_RC(trec.ev[at[2]].conn, sid);
	CHECK_RC(trec.ev[at[3]].conn, cid);
	CHECK_RC(trec.ev[at[3]].a, trec.ev[at[1]].a); /* every grant revoked */
	CHECK(trec_find(0, RPCRDMA_TEV_DISCONNECT, 0) > at[3]);
	CHECK_RC(trec.lost, 0);
	free(in.data);
	free(out.data);
	return 0;
}

/* A Write chunk reply: offered and granted by the requester, filled by
 * the responder, fenced after. */
static int case_trace_write_chunk(void)
{
	static const enum rpcrdma_trace_kind want[] = {
	    RPCRDMA_TEV_WRITE_CHUNK, RPCRDMA_TEV_GRANT, RPCRDMA_TEV_WRITE_CHUNK, RPCRDMA_TEV_REVOKE};
	struct echo in = {.data = malloc(BIG)}, out = {.data = malloc(BIG)};
	struct rpcrdma_call call;
	uint32_t cid, sid;
	int at[4];
	struct env e;

	CHECK(in.data && out.data);
	in.len = 70000;
	for (uint32_t i = 0; i < in.len; i++)
		in.data[i] = pat(in.len, i);
	trec_start();
	CHECK_RC(env_up(&e, 0, 0), 0);
	call_init(&call, P_ECHO, echo_enc, &in, echo_dec, &out);
	call.ddp_buf = out.data;
	call.ddp_len = BIG;
	call.max_reply = 128 + BIG;
	CHECK_RC(rpcrdma_client_call(e.clnt, &call), 0);
	CHECK_RC(out.len, in.len);
	CHECK_RC(env_down(&e), 0);
	trec_stop();
	CHECK_RC(trec_conn_ids(&cid, &sid), 0);
	CHECK_RC(trec_expect(call.xid, want, 4, at), 0);
	CHECK_RC(trec.ev[at[0]].conn, cid);
	CHECK_RC(trec.ev[at[0]].a, 1);   /* one chunk */
	CHECK_RC(trec.ev[at[0]].b, BIG); /* of BIG bytes */
	CHECK_RC(trec.ev[at[2]].conn, sid);
	CHECK_RC(trec.ev[at[2]].b, 70000); /* what the responder wrote */
	CHECK_RC(trec.ev[at[3]].conn, cid);
	CHECK_RC(trec.lost, 0);
	free(in.data);
	free(out.data);
	return 0;
}

/* ERR_CHUNK: the reply fits nowhere the call allowed; the responder says
 * why, sends ERR_CHUNK, the requester receives it. */
static int case_trace_err_chunk(void)
{
	static const enum rpcrdma_trace_kind want[] = {
	    RPCRDMA_TEV_BAD_MSG, RPCRDMA_TEV_ERR_SENT, RPCRDMA_TEV_ERR_RECEIVED};
	struct blob in = {.want = 100000, .len = 4, .data = malloc(8)};
	struct blob out = {.want = 200000, .data = malloc(200000)};
	struct rpcrdma_call call;
	uint32_t cid, sid;
	int at[3];
	struct env e;

	CHECK(in.data && out.data);
	for (uint32_t i = 0; i < 4; i++)
		in.data[i] = pat(4, i);
	trec_start();
	CHECK_RC(env_up(&e, 0, 0), 0);
	call_init(&call, P_BLOB, blob_enc, &in, res_blob_dec, &out);
	call.max_reply = 50000; /* the reply is 100 KB */
	CHECK_RC(rpcrdma_client_call(e.clnt, &call), RPCRDMA_ERR_TRANSPORT_ERROR);
	CHECK_RC(env_down(&e), 0);
	trec_stop();
	CHECK_RC(trec_conn_ids(&cid, &sid), 0);
	CHECK_RC(trec_expect(call.xid, want, 3, at), 0);
	CHECK_RC(trec.ev[at[0]].conn, sid);
	CHECK_RC(trec.ev[at[1]].conn, sid);
	CHECK_RC(trec.ev[at[1]].a, RPCRDMA_ERR_CHUNK);
	CHECK_RC(trec.ev[at[2]].conn, cid);
	CHECK_RC(trec.ev[at[2]].a, RPCRDMA_ERR_CHUNK);
	CHECK_RC(trec.lost, 0);
	free(in.data);
	free(out.data);
	return 0;
}

/*
 * A peer cannot flood the log: with RPCRDMA_TRACE=error on stderr, a client
 * whose calls each make the server answer ERR_CHUNK (three error events
 * a call) gets at most RPCRDMA_TRACE_RATE lines a second on stderr, the
 * rest counted (rpcrdma_trace_suppressed) and summed up in one line; the
 * callback still sees every event.
 */
static int64_t flood_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int case_trace_flood(void)
{
	enum { CALLS = 400, RATE = 50 };
	struct blob in = {.want = 100000, .len = 4, .data = malloc(8)};
	struct blob out = {.want = 200000, .data = malloc(200000)};
	char path[] = "/tmp/rpcrdma-trace-flood-XXXXXX", line[512];
	unsigned int lines = 0, summaries = 0;
	int64_t t0, elapsed_ms;
	int fd, saved;
	FILE *f;
	struct env e;

	CHECK(in.data && out.data);
	for (uint32_t i = 0; i < 4; i++)
		in.data[i] = pat(4, i);
	setenv("RPCRDMA_TRACE", "error", 1);
	setenv("RPCRDMA_TRACE_RATE", "50", 1);
	rpcrdma__trace_read_env(); /* the whole program may run in one process */
	fd = mkstemp(path);
	CHECK(fd >= 0);
	unlink(path);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	CHECK(saved >= 0 && dup2(fd, STDERR_FILENO) == STDERR_FILENO);
	trec_start();
	CHECK_RC(env_up(&e, 0, 0), 0);
	t0 = flood_now_ms();
	for (int i = 0; i < CALLS; i++) {
		struct rpcrdma_call call;

		call_init(&call, P_BLOB, blob_enc, &in, res_blob_dec, &out);
		call.max_reply = 50000; /* the reply is 100 KB: ERR_CHUNK */
		CHECK_RC(rpcrdma_client_call(e.clnt, &call), RPCRDMA_ERR_TRANSPORT_ERROR);
	}
	elapsed_ms = flood_now_ms() - t0;
	/* One more in a later second: its line comes after the summary. */
	usleep(1100 * 1000);
	{
		struct rpcrdma_call call;

		call_init(&call, P_BLOB, blob_enc, &in, res_blob_dec, &out);
		call.max_reply = 50000;
		CHECK_RC(rpcrdma_client_call(e.clnt, &call), RPCRDMA_ERR_TRANSPORT_ERROR);
	}
	CHECK_RC(env_down(&e), 0);
	trec_stop();
	fflush(stderr);
	CHECK(dup2(saved, STDERR_FILENO) == STDERR_FILENO);
	close(saved);
	f = fdopen(fd, "r");
	CHECK(f && fseek(f, 0, SEEK_SET) == 0);
	while (fgets(line, sizeof(line), f)) {
		lines += !strncmp(line, "rpcrdma: error ", 15);
		summaries += strstr(line, "lines suppressed") != NULL;
	}
	fclose(f);
	fprintf(stderr,
		"%d calls in %lld ms: %u error lines on stderr, %u summaries, %llu "
		"suppressed; the callback saw %u events\n",
		CALLS, (long long)elapsed_ms, lines, summaries,
		(unsigned long long)rpcrdma_trace_suppressed(), trec.n);
	/* Every event reached the callback. */
	CHECK(trec.n >= 3 * CALLS && trec.lost == 0);
	/* RATE a second, in each second the flood touched. */
	CHECK(lines <= RATE * (unsigned int)(elapsed_ms / 1000 + 3));
	CHECK(rpcrdma_trace_suppressed() >= 3 * CALLS - lines);
	CHECK(summaries >= 1);
	unsetenv("RPCRDMA_TRACE");
	unsetenv("RPCRDMA_TRACE_RATE");
	rpcrdma__trace_read_env();
	free(in.data);
	free(out.data);
	return 0;
}

/* A reconnect: the first connection's loss with its reason, a new
 * connection with a new id, and every call in flight at the cut sent
 * again on it. */
static int case_trace_reconnect(void)
{
	enum { N = 40 };
	struct async_echo *a = calloc(N, sizeof(*a));
	struct rpcrdma_xprt_stats cs;
	struct rpcrdma_call call;
	unsigned int nretrans = 0;
	uint32_t c1, c2;
	int i1, d1, i2;
	struct env e;
	int done;

	CHECK(a);
	trec_start();
	CHECK_RC(env_up(&e, 0, 0), 0);
	call_init(&call, P_NULL, NULL, NULL, NULL, NULL);
	CHECK_RC(rpcrdma_client_call(e.clnt, &call), 0);
	executions = 0;
	cut_after = 3;
	cut_after_clnt = e.clnt;
	for (int i = 0; i < N; i++) {
		uint32_t len = 100 + (uint32_t)i * 97;

		a[i].in.data = malloc(len);
		a[i].out.data = malloc(len);
		CHECK(a[i].in.data && a[i].out.data);
		a[i].in.len = len;
		for (uint32_t k = 0; k < len; k++)
			a[i].in.data[k] = pat((uint32_t)i + 7, k);
		call_init(&a[i].call, P_ECHO, echo_enc, &a[i].in, echo_dec, &a[i].out);
		a[i].call.ddp_buf = a[i].out.data;
		a[i].call.ddp_len = len;
		a[i].call.max_reply = len + 128;
		a[i].call.done = async_done;
		a[i].call.ctx = &a[i];
		CHECK_RC(rpcrdma_client_call_async(e.clnt, &a[i].call), 0);
	}
	while (executions < 3)
		CHECK(rpcrdma_loop_run_once(e.loop, 1000) >= 0);
	CHECK(!cut_after_clnt);
	do {
		CHECK(rpcrdma_loop_run_once(e.loop, 1000) >= 0);
		done = 0;
		for (int i = 0; i < N; i++)
			done += a[i].done;
	} while (done < N);
	for (int i = 0; i < N; i++) {
		CHECK_RC(a[i].call.status, 0);
		free(a[i].in.data);
		free(a[i].out.data);
	}
	CHECK_RC(rpcrdma_client_stats(e.clnt, &cs), 0);
	CHECK(cs.reconnects >= 1);
	CHECK_RC(env_down(&e), 0);
	trec_stop();

	i1 = trec_find(0, RPCRDMA_TEV_CONNECT, 0);
	CHECK(i1 >= 0);
	c1 = trec.ev[i1].conn;
	/* The client's loss of its first connection, with the reason. */
	for (d1 = i1; (d1 = trec_find((unsigned int)d1 + 1, RPCRDMA_TEV_DISCONNECT, 0)) >= 0;)
		if (trec.ev[d1].conn == c1)
			break;
	CHECK(d1 > i1);
	CHECK(trec.ev[d1].a < 0);
	i2 = trec_find((unsigned int)d1, RPCRDMA_TEV_CONNECT, 0);
	CHECK(i2 > d1);
	c2 = trec.ev[i2].conn;
	CHECK(c2 != c1 && c2 != 0);
	for (unsigned int i = 0; i < trec.n; i++) {
		if (trec.ev[i].kind != RPCRDMA_TEV_RETRANSMIT)
			continue;
		/* On the new connection, after it came up, for a real call. */
		CHECK((int)i > i2);
		CHECK_RC(trec.ev[i].conn, c2);
		CHECK(trec.ev[i].xid != 0);
		CHECK_RC(trec.ev[i].a, 1); /* one connection lost */
		nretrans++;
	}
	CHECK_RC(nretrans, cs.retransmits);
	CHECK(nretrans > 0);
	CHECK_RC(trec.lost, 0);
	free(a);
	return 0;
}

/* Version Two against a Version One server: the probe, the server's
 * ERR_VERS, the requester receiving it, the fall back, all on one XID. */
static int case_trace_v2_fallback(void)
{
	static const enum rpcrdma_trace_kind want[] = {
	    RPCRDMA_TEV_VERS_PROBE, RPCRDMA_TEV_BAD_MSG, RPCRDMA_TEV_ERR_SENT,
	    RPCRDMA_TEV_ERR_RECEIVED, RPCRDMA_TEV_VERS_FALLBACK};
	struct rpcrdma_call call;
	uint32_t cid, sid;
	char port[16];
	int at[5];
	struct env e;

	trec_start();
	CHECK_RC(env_up_vers(&e, 1, 1, 2, port, sizeof(port)), 0);
	call_init(&call, P_NULL, NULL, NULL, NULL, NULL);
	CHECK_RC(rpcrdma_client_call(e.clnt, &call), 0);
	CHECK_RC(env_down(&e), 0);
	trec_stop();
	CHECK_RC(trec_conn_ids(&cid, &sid), 0);
	CHECK_RC(trec_expect(call.xid, want, 5, at), 0);
	CHECK_RC(trec.ev[at[0]].conn, cid);
	CHECK_RC(trec.ev[at[1]].conn, sid);
	CHECK_RC(trec.ev[at[2]].conn, sid);
	CHECK_RC(trec.ev[at[2]].a, RPCRDMA_ERR_VERS);
	CHECK_RC(trec.ev[at[3]].conn, cid);
	CHECK_RC(trec.ev[at[3]].a, RPCRDMA_ERR_VERS);
	CHECK_RC(trec.ev[at[4]].conn, cid);
	CHECK_RC(trec.ev[at[4]].b, 1); /* now Version One */
	/* Never settled on Two. */
	CHECK(trec_find(0, RPCRDMA_TEV_VERS_SETTLED, 0) < 0);
	CHECK_RC(trec.lost, 0);
	return 0;
}

/* In flight (rpcrdma/debug.h): calls held by a procedure that answers
 * later are listed as sent, on the connection they left on, with the
 * chunks they offer; then as nothing once answered. */
#include "rpcrdma/debug.h"

/* proc_hold, held[] and count_done are bidir_cases.c's. */

static int case_inflight(void)
{
	static const struct rpcrdma_svc_proc hold_procs[] = {{proc_hold, NULL, 0, NULL, 0, NULL},
							     {proc_null, NULL, 0, NULL, 0, NULL}};
	enum { N = 5 };
	struct rpcrdma_call_info info[N + 1];
	struct rpcrdma_svc_call_info sinfo[N + 1];
	struct rpcrdma_call calls[N];
	unsigned int busy = 1;
	struct rpcrdma_server_opts so;
	struct rpcrdma_client_opts co;
	uint8_t chunk[4096];
	char port[16], text[4096];
	int fds[2], done = 0, n;
	uint32_t cid, sid;
	ssize_t len;
	struct env e;

	memset(&e, 0, sizeof(e));
	nheld = 0;
	trec_start();
	CHECK_RC(rpcrdma_loop_create(&e.loop), 0);
	rpcrdma_server_opts_default(&so);
	so.provider = test_provider;
	CHECK_RC(rpcrdma_server_create(e.loop, test_addr, "0", &so, &e.srv), 0);
	CHECK_RC(rpcrdma_server_register(e.srv, PROG + 5, VERS, hold_procs, 2), 0);
	snprintf(port, sizeof(port), "%d", rpcrdma_server_port(e.srv));
	rpcrdma_client_opts_default(&co);
	co.provider = test_provider;
	co.timeout_ms = 60000;
	CHECK_RC(rpcrdma_client_create(e.loop, test_addr, port, PROG + 5, VERS, &co, &e.clnt), 0);
	CHECK_RC(rpcrdma_client_connect(e.clnt), 0);
	/* The first reply brings the credits for the rest. */
	memset(calls, 0, sizeof(calls));
	calls[0].proc = 1;
	CHECK_RC(rpcrdma_client_call(e.clnt, &calls[0]), 0);

	memset(calls, 0, sizeof(calls));
	for (int i = 0; i < N; i++) {
		calls[i].done = count_done;
		calls[i].ctx = &done;
	}
	calls[2].ddp_buf = chunk;
	calls[2].ddp_len = sizeof(chunk);
	for (int i = 0; i < N; i++)
		CHECK_RC(rpcrdma_client_call_async(e.clnt, &calls[i]), 0);
	/* Each went at once while the connection had room (credits), the
	 * rest wait in the queue, on no connection yet. */
	CHECK_RC(rpcrdma_client_inflight(e.clnt, NULL, 0), N);
	CHECK_RC(rpcrdma_client_inflight(e.clnt, info, N + 1), N);
	for (int i = 0; i < N; i++) {
		CHECK(info[i].state == RPCRDMA_CALL_QUEUED || info[i].state == RPCRDMA_CALL_SENT);
		CHECK_RC(info[i].xid, calls[i].xid);
		if (info[i].state == RPCRDMA_CALL_QUEUED)
			CHECK_RC(info[i].conn_id, 0);
	}
	while (nheld < N)
		CHECK(rpcrdma_loop_run_once(e.loop, 1000) >= 0);
	CHECK_RC(trec_conn_ids(&cid, &sid), 0);
	/* A short @max still counts them all. */
	CHECK_RC(rpcrdma_client_inflight(e.clnt, info, 2), N);
	CHECK_RC(rpcrdma_client_inflight(e.clnt, info, N + 1), N);
	for (int i = 0; i < N; i++) {
		CHECK_RC(info[i].state, RPCRDMA_CALL_SENT);
		CHECK_RC(info[i].conn_id, cid);
		CHECK_RC(info[i].losses, 0);
		CHECK_RC(info[i].write_chunks, info[i].xid == calls[2].xid);
	}
	/* The signal-safe text form, through a pipe. */
	CHECK(pipe(fds) == 0);
	CHECK_RC(rpcrdma_client_inflight_write(e.clnt, fds[1]), N);
	close(fds[1]);
	len = read(fds[0], text, sizeof(text) - 1);
	close(fds[0]);
	CHECK(len > 0);
	text[len] = 0;
	fprintf(stderr, "%s", text);
	CHECK(strncmp(text, "rpcrdma: 5 calls in flight\n", 27) == 0);
	n = 0;
	for (const char *p = text; (p = strstr(p, "  sent ")); p++)
		n++;
	CHECK_RC(n, N);
	snprintf(port, sizeof(port), "0x%08x", calls[2].xid);
	CHECK(strstr(text, port));

	/* The server's side: the same calls, held by the procedure. */
	CHECK_RC(rpcrdma_server_inflight(e.srv, NULL, 0, NULL), N);
	CHECK_RC(rpcrdma_server_inflight(e.srv, sinfo, N + 1, &busy), N);
	CHECK_RC(busy, 0);
	for (int i = 0; i < N; i++) {
		bool known = false;

		for (int j = 0; j < N; j++)
			known |= sinfo[i].xid == calls[j].xid;
		CHECK(known);
		CHECK_RC(sinfo[i].state, RPCRDMA_SVC_CALL_DEFERRED);
		CHECK_RC(sinfo[i].prog, PROG + 5);
		CHECK_RC(sinfo[i].proc, 0);
		CHECK_RC(sinfo[i].worker, 0);
		CHECK_RC(sinfo[i].conn_id, sid);
		CHECK_RC(sinfo[i].write_chunks, sinfo[i].xid == calls[2].xid);
		CHECK_RC(sinfo[i].read_segs, 0);
	}
	CHECK(pipe(fds) == 0);
	CHECK_RC(rpcrdma_server_inflight_write(e.srv, fds[1]), N);
	close(fds[1]);
	len = read(fds[0], text, sizeof(text) - 1);
	close(fds[0]);
	CHECK(len > 0);
	text[len] = 0;
	fprintf(stderr, "%s", text);
	CHECK(strncmp(text, "rpcrdma server: 5 calls in flight\n", 34) == 0);
	n = 0;
	for (const char *p = text; (p = strstr(p, "deferred ")); p++)
		n++;
	CHECK_RC(n, N);
	CHECK_RC(rpcrdma_server_inflight(NULL, sinfo, 1, NULL), -EINVAL);

	for (unsigned int i = 0; i < nheld; i++)
		CHECK_RC(rpcrdma_svc_reply(held[i], 0), 0);
	while (done < N)
		CHECK(rpcrdma_loop_run_once(e.loop, 1000) >= 0);
	for (int i = 0; i < N; i++)
		CHECK_RC(calls[i].status, 0);
	CHECK_RC(rpcrdma_client_inflight(e.clnt, info, N + 1), 0);
	CHECK_RC(rpcrdma_client_inflight(NULL, info, 1), -EINVAL);
	CHECK_RC(rpcrdma_server_inflight(e.srv, sinfo, N + 1, NULL), 0);
	CHECK_RC(env_down(&e), 0);
	trec_stop();
	return 0;
}

/* Credits: a server granting 4 while 24 calls wait.  The first reply
 * moves the grant from the initial 1 to 4; then calls stall for credits,
 * and each stall is on the client's connection with the grant it hit. */
static int case_trace_credits(void)
{
	enum { N = 24 };
	struct rpcrdma_call calls[N];
	unsigned int stalls = 0;
	uint32_t cid, sid;
	int g, done = 0;
	struct env e;

	trec_start();
	CHECK_RC(env_up(&e, 4, 0), 0);
	memset(calls, 0, sizeof(calls));
	for (int i = 0; i < N; i++) {
		call_init(&calls[i], P_NULL, NULL, NULL, NULL, NULL);
		calls[i].done = count_done;
		calls[i].ctx = &done;
		CHECK_RC(rpcrdma_client_call_async(e.clnt, &calls[i]), 0);
	}
	while (done < N)
		CHECK(rpcrdma_loop_run_once(e.loop, 1000) >= 0);
	for (int i = 0; i < N; i++)
		CHECK_RC(calls[i].status, 0);
	CHECK_RC(env_down(&e), 0);
	trec_stop();
	CHECK_RC(trec_conn_ids(&cid, &sid), 0);
	g = trec_find(0, RPCRDMA_TEV_CREDIT_GRANT, 0);
	CHECK(g >= 0);
	CHECK_RC(trec.ev[g].conn, cid);
	CHECK_RC(trec.ev[g].a, 4);
	CHECK(trec.ev[g].xid != 0); /* the reply that carried it */
	for (unsigned int i = 0; i < trec.n; i++) {
		if (trec.ev[i].kind != RPCRDMA_TEV_CREDIT_STALL)
			continue;
		CHECK_RC(trec.ev[i].conn, cid);
		CHECK(trec.ev[i].a >= trec.ev[i].b); /* in flight >= granted */
		stalls++;
	}
	CHECK(stalls > 0);
	/* Never more than one grant change: the server keeps granting 4. */
	CHECK(trec_find((unsigned int)g + 1, RPCRDMA_TEV_CREDIT_GRANT, 0) < 0);
	CHECK_RC(trec.lost, 0);
	return 0;
}
