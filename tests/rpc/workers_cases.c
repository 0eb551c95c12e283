/*
 * Worker loops (rpcrdma_server_opts.workers): a server whose connections
 * are served by threads of their own.  The procedures here are safe to run
 * on several threads at once, unlike those of service.c, so they are a
 * program of their own (WORKER_PROG).
 *
 *   0 NULL   1 WHERE: the index of the worker thread that ran it
 *   2 ECHO opaque<> as service.c's, its free_res poisoning the data
 *   3 ONCE: counts executions, deferred; the test's main thread cuts the
 *     client's connection so that the reply is lost, and the client's
 *     retransmission arrives on another worker
 */
#include <stdatomic.h>

#include "rpc/svc_internal.h"
#include "rpcrdma/debug.h"
#include "suite.h"

#define WORKER_PROG (TEST_PROG + 0x10u)
#define NWORKERS 4
#define NCLIENTS 16
#define WHERE_CALLS 5
#define LATE_POLL_MS 5u

enum { W_NULL, W_WHERE, W_ECHO, W_ONCE, W_NPROCS };

enum once_mode {
	ONCE_LATE,     /* answered once the retransmission came: it finds it running */
	ONCE_ANSWERED, /* answered before the cut: the retransmission finds it cached */
};

static struct {
	pthread_mutex_t lock;
	pthread_t seen[NWORKERS + 1];
	unsigned int nseen;
	pthread_t main_thread;
	struct rpcrdma_loop *main_loop;
	struct rpcrdma_server *srv;
	struct rpcrdma_client *cut; /* ONCE cuts this client's connection */
	struct rpcrdma__timer late_poll; /* main thread: ONCE_LATE's retransmission yet? */
	uint64_t dups_before;
	atomic_uint once_execs, echo_execs, echo_frees, stats_refused;
	atomic_bool answered;
} wk = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint32_t thread_index(void)
{
	uint32_t i;

	pthread_mutex_lock(&wk.lock);
	for (i = 0; i < wk.nseen; i++) {
		if (pthread_equal(wk.seen[i], pthread_self()))
			break;
	}
	if (i == wk.nseen) {
		CHECK(wk.nseen < NWORKERS);
		wk.seen[wk.nseen++] = pthread_self();
	}
	pthread_mutex_unlock(&wk.lock);
	return i;
}

static int w_null(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return 0;
}

static int w_where(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct rpcrdma_xprt_stats st;

	(void)args;
	CHECK(!pthread_equal(pthread_self(), wk.main_thread));
	CHECK(rpcrdma_svc_loop(req) != wk.main_loop);
	/* Asking for the server's counters from a worker would wait on itself. */
	if (rpcrdma_server_stats(wk.srv, &st) == -EDEADLK)
		wk.stats_refused++;
	*(uint32_t *)res = thread_index();
	return 0;
}

static int w_echo(struct rpcrdma_svc_req *req, void *args, void *res)
{
	const struct echo *in = args;
	struct echo *out = res;

	(void)req;
	out->len = in->len;
	memcpy(out->data, in->data, in->len);
	wk.echo_execs++;
	return 0;
}

static void w_echo_free(void *res)
{
	struct echo *out = res;

	memset(out->data, 0xee, out->len);
	wk.echo_frees++;
}

struct once {
	struct rpcrdma_svc_req *req;
	uint32_t *res;
	enum once_mode mode;
};

static void once_answer(struct once *o)
{
	*o->res = wk.once_execs;
	CHECK_EQ(rpcrdma_svc_reply(o->req, 0), 0);
	free(o);
}

/* On the worker's thread, once the retransmission has come. */
static void once_late(void *arg)
{
	once_answer(arg);
}

/*
 * On the main thread, after the cut: the original is answered only once
 * the server has counted the retransmission, not after a fixed time that
 * a slow reconnection (valgrind, TSan) could outlast, which would have it
 * answered from the cache like ONCE_ANSWERED.
 */
static void late_poll(struct rpcrdma__timer *tm)
{
	struct once *o = tm->ctx;
	struct rpcrdma_xprt_stats st;

	CHECK_EQ(rpcrdma_server_stats(wk.srv, &st), 0);
	if (st.retransmits == wk.dups_before) {
		rpcrdma__timer_start(wk.main_loop, &wk.late_poll, LATE_POLL_MS, late_poll, o);
		return;
	}
	CHECK_EQ(rpcrdma_loop_wake(rpcrdma_svc_loop(o->req), once_late, o), 0);
}

/* On the worker's thread, before the cut. */
static void once_now(void *arg)
{
	once_answer(arg);
	wk.answered = true;
}

/* On the main thread, where the client lives. */
static void once_cut(void *arg)
{
	struct once *o = arg;
	struct rpcrdma_loop *wloop = rpcrdma_svc_loop(o->req);
	struct rpcrdma_xprt_stats st;

	if (o->mode == ONCE_ANSWERED) {
		/* The reply is sent while this thread, the client's, is held
		 * here: it has not read it when the connection goes. */
		CHECK_EQ(rpcrdma_loop_wake(wloop, once_now, o), 0);
		while (!wk.answered)
			usleep(1000);
		usleep(20000);
		rpcrdma__client_disconnect(wk.cut);
		return;
	}
	CHECK_EQ(rpcrdma_server_stats(wk.srv, &st), 0);
	wk.dups_before = st.retransmits;
	rpcrdma__client_disconnect(wk.cut);
	rpcrdma__timer_start(wk.main_loop, &wk.late_poll, LATE_POLL_MS, late_poll, o);
}

static int w_once(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct once *o = calloc(1, sizeof(*o));

	CHECK(o != NULL);
	o->req = req;
	o->res = res;
	o->mode = (enum once_mode) * (uint32_t *)args;
	wk.once_execs++;
	CHECK_EQ(rpcrdma_loop_wake(wk.main_loop, once_cut, o), 0);
	return RPCRDMA_SVC_DEFERRED;
}

static const struct rpcrdma_svc_proc wprocs[W_NPROCS] = {
    [W_NULL] = {w_null, NULL, 0, NULL, 0, NULL},
    [W_WHERE] = {w_where, NULL, 0, xdr_u32_enc, sizeof(uint32_t), NULL},
    [W_ECHO] = {w_echo, xdr_echo_dec, sizeof(struct echo), xdr_echo_enc, sizeof(struct echo),
		w_echo_free},
    [W_ONCE] = {w_once, xdr_u32_dec, sizeof(uint32_t), xdr_u32_enc, sizeof(uint32_t), NULL},
};

struct echo_call {
	struct rpcrdma_call call;
	struct echo *in, *out;
	int *done;
};

static void echo_call_done(struct rpcrdma_call *call, void *ctx)
{
	struct echo_call *ec = ctx;

	CHECK_EQ(call->status, 0);
	CHECK_EQ(ec->out->len, ec->in->len);
	CHECK(memcmp(ec->in->data, ec->out->data, ec->in->len) == 0);
	(*ec->done)++;
}

static uint32_t once_call(struct rpcrdma_client *c, enum once_mode mode)
{
	struct rpcrdma_call call;
	uint32_t arg = mode, res = 0;

	call_init(&call, W_ONCE, xdr_u32_enc, &arg, xdr_u32_dec, &res);
	CHECK_EQ(rpcrdma_client_call(c, &call), 0);
	return res;
}

/*
 * 16 clients on 4 workers: each connection stays on one worker thread, the
 * workers share the load, bulk data moves correctly under concurrency, a
 * program registered while the workers run is served, the counters add up,
 * and a call whose reply is lost runs once though its retransmission
 * reaches another worker (still running there, or answered already).
 */
void case_workers(void)
{
	static const uint32_t sizes[] = {0, 1, 1000, 4095, 4096, 4097, (32u << 10) + 3, 200000};
	enum { NSIZES = sizeof(sizes) / sizeof(sizes[0]) };
	struct rpcrdma_client *c[NCLIENTS];
	struct echo_call *ec = calloc(NCLIENTS * NSIZES, sizeof(*ec));
	struct rpcrdma_server_opts so;
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_call call;
	struct rpcrdma_loop *loop;
	uint32_t where[NCLIENTS];
	bool used[NWORKERS] = {false};
	char port[16];
	int done = 0;

	CHECK(ec != NULL);
	wk.main_thread = pthread_self();
	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	wk.main_loop = loop;
	rpcrdma_server_opts_default(&so);
	so.transport = transport;
	so.workers = NWORKERS;
	CHECK_EQ(rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &wk.srv), 0);
	CHECK(rpcrdma_server_port(wk.srv) > 0);
	snprintf(port, sizeof(port), "%d", rpcrdma_server_port(wk.srv));

	/* Before the program exists a worker answers PROG_UNAVAIL. */
	c[0] = client_for(loop, port, WORKER_PROG, 1, NULL);
	expect_rejected(c[0], W_NULL, NULL, NULL, RPCRDMA_RPC_PROG_UNAVAIL);
	CHECK_EQ(rpcrdma_server_register(wk.srv, WORKER_PROG, 1, wprocs, W_NPROCS), 0);
	call_init(&call, W_NULL, NULL, NULL, NULL, NULL);
	CHECK_EQ(rpcrdma_client_call(c[0], &call), 0);

	/* Pinning: every call of a connection runs on the same worker. */
	for (int k = 1; k < NCLIENTS; k++)
		c[k] = client_for(loop, port, WORKER_PROG, 1, NULL);
	for (int k = 0; k < NCLIENTS; k++) {
		for (int i = 0; i < WHERE_CALLS; i++) {
			uint32_t w = UINT32_MAX;

			call_init(&call, W_WHERE, NULL, NULL, xdr_u32_dec, &w);
			CHECK_EQ(rpcrdma_client_call(c[k], &call), 0);
			CHECK(w < NWORKERS);
			if (i == 0)
				where[k] = w;
			CHECK_EQ(w, where[k]);
		}
		used[where[k]] = true;
	}
	/* Round robin over 16 connections: every worker has some. */
	for (int w = 0; w < NWORKERS; w++)
		CHECK(used[w]);
	CHECK_EQ(wk.nseen, NWORKERS);
	CHECK_EQ(wk.stats_refused, NCLIENTS * WHERE_CALLS);

	/* Every client at once, sizes around the inline and zero-copy limits. */
	for (int k = 0; k < NCLIENTS; k++) {
		for (int j = 0; j < NSIZES; j++) {
			struct echo_call *e = &ec[k * NSIZES + j];

			e->in = malloc(sizeof(*e->in));
			e->out = malloc(sizeof(*e->out));
			CHECK(e->in && e->out);
			e->in->len = sizes[j];
			for (uint32_t b = 0; b < sizes[j]; b++)
				e->in->data[b] = (uint8_t)(b * 31 + (uint32_t)k * 7 + (uint32_t)j);
			e->done = &done;
			call_init(&e->call, W_ECHO, xdr_echo_enc, e->in, xdr_echo_dec, e->out);
			/* 128 calls at once on one thread: under a loaded
			 * sanitizer build, 10 s is not always enough. */
			e->call.timeout_ms = 120000;
			echo_offer_ddp(&e->call, e->out);
			e->call.done = echo_call_done;
			e->call.ctx = e;
			CHECK_EQ(rpcrdma_client_call_async(c[k], &e->call), 0);
		}
	}
	while (done < NCLIENTS * NSIZES)
		CHECK(rpcrdma_loop_run_once(loop, 1000) >= 0);

	/* A lost reply, the retransmission on another worker: run once. */
	wk.cut = c[3];
	CHECK_EQ(once_call(c[3], ONCE_LATE), 1);
	CHECK_EQ(wk.once_execs, 1);
	wk.once_execs = 0;
	wk.cut = c[5];
	CHECK_EQ(once_call(c[5], ONCE_ANSWERED), 1);
	CHECK_EQ(wk.once_execs, 1);
	CHECK_EQ(rpcrdma_client_stats(c[3], &st), 0);
	CHECK(st.reconnects >= 1 && st.retransmits >= 1);
	CHECK_EQ(rpcrdma_client_stats(c[5], &st), 0);
	CHECK(st.reconnects >= 1 && st.retransmits >= 1);

	CHECK_EQ(rpcrdma_server_stats(wk.srv, &st), 0);
	CHECK_EQ(st.conns_handed_off, NCLIENTS + 2);
	CHECK(st.calls_received >= NCLIENTS * (WHERE_CALLS + NSIZES) + 2 + 2);
	CHECK(st.retransmits >= 2);
	if (transport == RPCRDMA_TRANSPORT_RDMA)
		CHECK(st.write_zero_copy_bytes >= (uint64_t)NCLIENTS * ((32u << 10) + 3 + 200000));

	/* The server goes first, its clients still connected. */
	rpcrdma_server_destroy(wk.srv);
	CHECK_EQ(wk.echo_frees, wk.echo_execs);
	for (int k = 0; k < NCLIENTS; k++)
		rpcrdma_client_destroy(c[k]);
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
	for (int i = 0; i < NCLIENTS * NSIZES; i++) {
		free(ec[i].in);
		free(ec[i].out);
	}
	free(ec);
}

/*
 * rpcrdma_server_inflight() from the listener's thread while a worker
 * serves: every call it lists has its header (program, version,
 * procedure), never the zeros of a request whose call is still being
 * decoded on the worker's thread.
 */
#define INFLIGHT_CALLS 10000
#define INFLIGHT_DEPTH 16

struct inflight_call {
	struct rpcrdma_call call;
	int *done;
};

static void inflight_call_done(struct rpcrdma_call *call, void *ctx)
{
	struct inflight_call *ic = ctx;

	CHECK_EQ(call->status, 0);
	(*ic->done)++;
}

void case_workers_inflight(void)
{
	struct inflight_call calls[INFLIGHT_DEPTH];
	struct rpcrdma_svc_call_info info[2 * INFLIGHT_DEPTH];
	struct rpcrdma_server_opts so;
	struct rpcrdma_client *c;
	struct rpcrdma_loop *loop;
	int started = 0, done = 0, listed = 0;
	char port[16];

	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	rpcrdma_server_opts_default(&so);
	so.transport = transport;
	so.workers = 1;
	CHECK_EQ(rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &wk.srv), 0);
	CHECK_EQ(rpcrdma_server_register(wk.srv, WORKER_PROG, 1, wprocs, W_NPROCS), 0);
	snprintf(port, sizeof(port), "%d", rpcrdma_server_port(wk.srv));
	c = client_for(loop, port, WORKER_PROG, 1, NULL);
	while (done < INFLIGHT_CALLS) {
		int n;

		while (started - done < INFLIGHT_DEPTH && started < INFLIGHT_CALLS) {
			struct inflight_call *ic = &calls[started % INFLIGHT_DEPTH];

			call_init(&ic->call, W_NULL, NULL, NULL, NULL, NULL);
			ic->call.done = inflight_call_done;
			ic->call.ctx = ic;
			ic->done = &done;
			CHECK_EQ(rpcrdma_client_call_async(c, &ic->call), 0);
			started++;
		}
		CHECK(rpcrdma_loop_run_once(loop, 1000) >= 0);
		n = rpcrdma_server_inflight(wk.srv, info, 2 * INFLIGHT_DEPTH, NULL);
		CHECK(n >= 0);
		for (int i = 0; i < n && i < 2 * INFLIGHT_DEPTH; i++) {
			CHECK_EQ(info[i].prog, WORKER_PROG);
			CHECK_EQ(info[i].vers, 1);
			CHECK_EQ(info[i].proc, W_NULL);
			listed++;
		}
	}
	printf("workers_inflight: %d calls, %d listed while running\n", done, listed);
	rpcrdma_client_destroy(c);
	rpcrdma_server_destroy(wk.srv);
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
}

/*
 * Busy polling on both sides (rpcrdma_loop_set_busy_poll): the worker
 * loops take the server loop's setting, and calls go as without it.
 */
void case_workers_busy_poll(void)
{
	struct rpcrdma_server_opts so;
	struct rpcrdma_client *c;
	struct rpcrdma_loop *loop;
	uint64_t found = 0, slept = 0;
	char port[16];

	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	CHECK_EQ(rpcrdma_loop_set_busy_poll(loop, 200), 0);
	rpcrdma_server_opts_default(&so);
	so.transport = transport;
	so.workers = 2;
	CHECK_EQ(rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &wk.srv), 0);
	CHECK_EQ(rpcrdma_server_register(wk.srv, WORKER_PROG, 1, wprocs, W_NPROCS), 0);
	CHECK_EQ(wk.srv->nworkers, 2);
	for (unsigned int i = 0; i < wk.srv->nworkers; i++)
		CHECK_EQ(rpcrdma__loop_busy_poll(wk.srv->workers[i].loop), 200);
	snprintf(port, sizeof(port), "%d", rpcrdma_server_port(wk.srv));
	c = client_for(loop, port, WORKER_PROG, 1, NULL);
	for (int i = 0; i < 50; i++) {
		struct rpcrdma_call call;

		call_init(&call, W_NULL, NULL, NULL, NULL, NULL);
		CHECK_EQ(rpcrdma_client_call(c, &call), 0);
	}
	rpcrdma__loop_busy_poll_stats(loop, &found, &slept);
	CHECK(found + slept > 0); /* the client's waits went through the spin */
	rpcrdma_client_destroy(c);
	CHECK_EQ(rpcrdma_server_destroy(wk.srv), 0);
	wk.srv = NULL;
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
}
