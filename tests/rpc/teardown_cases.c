/*
 * Teardown at awkward moments: a server with worker loops destroyed while
 * its handlers hold deferred calls, while its replies wait on clients that
 * do not read them, while the RDMA Reads of calls' Read chunks are out;
 * deferred requests answered after their connection closed; a client with
 * several connections destroyed from inside a completion, and while it
 * reconnects to a server that went away.  Every call completes exactly
 * once, every free_res runs, and the loops go with nothing left on them.
 *
 * The procedures here run on worker threads, so they are a program of
 * their own (TEARDOWN_PROG) with atomic counters, as in workers_cases.c.
 *
 *   0 NULL   1 HOLD: deferred until the test answers it (or the server
 *   goes)   2 ECHO opaque<> as service.c's   3 DESTROY: destroys the
 *   server from inside the procedure (on a worker: queued to its loop)
 *   4 ECHO_DOOM: ECHO whose free_res destroys the server   5 ADOPT:
 *   creates a client on the procedure's loop   6 DROP: destroys it
 */
#include <stdatomic.h>
#include <sys/wait.h>

#include "rpcrdma/debug.h"
#include "suite.h"

#define TEARDOWN_PROG (TEST_PROG + 0x20u)
#define TD_WORKERS 2
#define TD_CLIENTS 4
#define TD_HOLDS 3 /* per client */
#define TD_MAXHOLD 64

enum { T_NULL, T_HOLD, T_ECHO, T_DESTROY, T_ECHO_DOOM, T_ADOPT, T_DROP, T_NPROCS };

static struct {
	pthread_mutex_t lock;
	struct rpcrdma_svc_req *held[TD_MAXHOLD];
	unsigned int nheld;
	atomic_uint hold_execs, hold_frees, echo_execs, echo_frees, released;
	atomic_uint answered, destroy_calls;
	struct rpcrdma_server *srv; /* DESTROY's */
	char port[16];              /* ADOPT's client's server */
	/* Set on a worker, read here once its reply came. */
	struct rpcrdma_loop *_Atomic adopt_loop;
	struct rpcrdma_client *_Atomic adopted;
} td = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Descriptors open in this process. */
static unsigned int td_fds(void)
{
	unsigned int n = 0;
	char path[64];

	for (int fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n += access(path, F_OK) == 0;
	}
	return n;
}

static unsigned int td_fds_before;

static void td_fds_check(const char *where)
{
	unsigned int now = td_fds();

	if (now > td_fds_before)
		fprintf(stderr, "%s: %u descriptors before, %u after\n", where, td_fds_before, now);
	CHECK(now <= td_fds_before);
}

static void td_reset(void)
{
	pthread_mutex_lock(&td.lock);
	td.nheld = 0;
	pthread_mutex_unlock(&td.lock);
	td.hold_execs = td.hold_frees = td.echo_execs = td.echo_frees = td.released = 0;
	td.answered = td.destroy_calls = 0;
}

static int t_null(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return 0;
}

static int t_hold(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)args;
	*(uint32_t *)res = 7;
	pthread_mutex_lock(&td.lock);
	CHECK(td.nheld < TD_MAXHOLD);
	td.held[td.nheld++] = req;
	pthread_mutex_unlock(&td.lock);
	td.hold_execs++;
	return RPCRDMA_SVC_DEFERRED;
}

static void t_hold_free(void *res)
{
	(void)res;
	td.hold_frees++;
}

static int t_echo(struct rpcrdma_svc_req *req, void *args, void *res)
{
	const struct echo *in = args;
	struct echo *out = res;

	(void)req;
	out->len = in->len;
	memcpy(out->data, in->data, in->len);
	td.echo_execs++;
	return 0;
}

static void t_echo_free(void *res)
{
	struct echo *out = res;

	memset(out->data, 0xdd, out->len);
	td.echo_frees++;
}

static int t_destroy(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	rpcrdma_server_destroy(td.srv);
	td.destroy_calls++;
	return 0;
}

static void t_echo_doom_free(void *res)
{
	t_echo_free(res);
	if (td.srv) {
		struct rpcrdma_server *srv = td.srv;

		td.srv = NULL;
		rpcrdma_server_destroy(srv);
	}
}

static int t_adopt(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)args;
	(void)res;
	td.adopt_loop = rpcrdma_svc_loop(req);
	td.adopted = client_for(td.adopt_loop, td.port, TEARDOWN_PROG, 1, NULL);
	return 0;
}

static int t_drop(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	rpcrdma_client_destroy(td.adopted);
	td.adopted = NULL;
	return 0;
}

static const struct rpcrdma_svc_proc tprocs[T_NPROCS] = {
    [T_ECHO_DOOM] = {t_echo, xdr_echo_dec, sizeof(struct echo), xdr_echo_enc, sizeof(struct echo),
		     t_echo_doom_free},
    [T_DESTROY] = {t_destroy, NULL, 0, NULL, 0, NULL},
    [T_ADOPT] = {t_adopt, NULL, 0, NULL, 0, NULL},
    [T_DROP] = {t_drop, NULL, 0, NULL, 0, NULL},
    [T_NULL] = {t_null, NULL, 0, NULL, 0, NULL},
    [T_HOLD] = {t_hold, NULL, 0, xdr_u32_enc, sizeof(uint32_t), t_hold_free},
    [T_ECHO] = {t_echo, xdr_echo_dec, sizeof(struct echo), xdr_echo_enc, sizeof(struct echo),
		t_echo_free},
};

static void td_release(void *ctx)
{
	(void)ctx;
	td.released++;
}

static struct rpcrdma_server *td_server(struct rpcrdma_loop *loop, unsigned int workers,
					char *port)
{
	struct rpcrdma_server_opts so;
	struct rpcrdma_server *srv = NULL;

	td_reset();
	rpcrdma_server_opts_default(&so);
	so.transport = transport;
	so.workers = workers;
	CHECK_EQ(rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &srv), 0);
	CHECK_EQ(rpcrdma_server_register2(srv, TEARDOWN_PROG, 1, tprocs, T_NPROCS, NULL,
					  td_release),
		 0);
	snprintf(port, 16, "%d", rpcrdma_server_port(srv));
	return srv;
}

struct td_call {
	struct rpcrdma_call call;
	uint32_t res;
	struct echo *in, *out;
	int completions;
	int status;
	uint32_t accept_stat;
};

static void td_done(struct rpcrdma_call *call, void *ctx)
{
	struct td_call *t = ctx;

	t->completions++;
	t->status = call->status;
	t->accept_stat = call->reply.accept_stat;
}

/* One round trip per connection: RDMA connections start with one credit. */
static void td_open(struct rpcrdma_client *c, unsigned int nconn)
{
	for (unsigned int i = 0; i < nconn; i++)
		open_credits(c, 4);
}

static void start_hold(struct rpcrdma_client *c, struct td_call *t)
{
	memset(t, 0, sizeof(*t));
	call_init(&t->call, T_HOLD, NULL, NULL, xdr_u32_dec, &t->res);
	t->call.done = td_done;
	t->call.ctx = t;
	CHECK_EQ(rpcrdma_client_call_async(c, &t->call), 0);
}

static void pump_until_execs(struct rpcrdma_loop *loop, atomic_uint *n, unsigned int want)
{
	uint64_t end = rpcrdma_loop_now(loop) + 30000;

	while (*n < want) {
		CHECK(rpcrdma_loop_now(loop) < end);
		CHECK(rpcrdma_loop_run_once(loop, 5) >= 0);
	}
}

static void pump_until_done(struct rpcrdma_loop *loop, struct td_call *t, int n)
{
	uint64_t end = rpcrdma_loop_now(loop) + 30000;

	for (int i = 0; i < n; i++) {
		while (t[i].completions == 0) {
			CHECK(rpcrdma_loop_now(loop) < end);
			CHECK(rpcrdma_loop_run_once(loop, 5) >= 0);
		}
	}
}

/*
 * Workers hold deferred calls of every connection when the server goes:
 * each is answered SYSTEM_ERR, each free_res runs once, the registration's
 * release runs once, and the client sees the answers.
 */
void case_teardown_workers_deferred(void)
{
	struct rpcrdma_client *c[TD_CLIENTS];
	struct td_call t[TD_CLIENTS * TD_HOLDS];
	struct rpcrdma_loop *loop;
	struct rpcrdma_server *srv;
	char port[16];

	td_fds_before = td_fds();

	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	srv = td_server(loop, TD_WORKERS, port);
	for (int k = 0; k < TD_CLIENTS; k++) {
		struct rpcrdma_client_opts co;

		rpcrdma_client_opts_default(&co);
		co.timeout_ms = 60000;
		co.retries = 1;
		c[k] = client_for(loop, port, TEARDOWN_PROG, 1, &co);
		CHECK_EQ(rpcrdma_client_connect(c[k]), 0);
		td_open(c[k], 1);
	}
	for (int k = 0; k < TD_CLIENTS; k++)
		for (int i = 0; i < TD_HOLDS; i++)
			start_hold(c[k], &t[k * TD_HOLDS + i]);
	pump_until_execs(loop, &td.hold_execs, TD_CLIENTS * TD_HOLDS);
	rpcrdma_server_destroy(srv);
	CHECK_EQ(td.hold_frees, TD_CLIENTS * TD_HOLDS);
	CHECK_EQ(td.released, 1);
	pump_until_done(loop, t, TD_CLIENTS * TD_HOLDS);
	for (int i = 0; i < TD_CLIENTS * TD_HOLDS; i++) {
		CHECK_EQ(t[i].completions, 1);
		/* SYSTEM_ERR as a rule; a reply the closing connection did
		 * not carry is a lost connection, retried once, refused. */
		CHECK(t[i].status != 0);
	}
	for (int k = 0; k < TD_CLIENTS; k++)
		rpcrdma_client_destroy(c[k]);
	for (int i = 0; i < TD_CLIENTS * TD_HOLDS; i++)
		CHECK_EQ(t[i].completions, 1);
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
	td_fds_check(__func__);
}

static void answer_held(void *arg)
{
	struct rpcrdma_svc_req *req = arg;

	CHECK_EQ(rpcrdma_svc_reply(req, 0), 0);
	td.answered++;
}

/*
 * The client goes while its calls are deferred on workers; they are
 * answered afterwards, on their loops, as the API says: the reply has no
 * one to go to, free_res still runs, and the server then goes cleanly.
 */
void case_teardown_deferred_after_close(void)
{
	struct rpcrdma_client *c[TD_CLIENTS];
	struct td_call t[TD_CLIENTS * TD_HOLDS];
	struct rpcrdma_loop *loop;
	struct rpcrdma_server *srv;
	char port[16];
	unsigned int n;

	td_fds_before = td_fds();

	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	srv = td_server(loop, TD_WORKERS, port);
	for (int k = 0; k < TD_CLIENTS; k++) {
		c[k] = client_for(loop, port, TEARDOWN_PROG, 1, NULL);
		CHECK_EQ(rpcrdma_client_connect(c[k]), 0);
		td_open(c[k], 1);
		for (int i = 0; i < TD_HOLDS; i++)
			start_hold(c[k], &t[k * TD_HOLDS + i]);
	}
	pump_until_execs(loop, &td.hold_execs, TD_CLIENTS * TD_HOLDS);
	for (int k = 0; k < TD_CLIENTS; k++)
		rpcrdma_client_destroy(c[k]);
	for (int i = 0; i < TD_CLIENTS * TD_HOLDS; i++) {
		CHECK_EQ(t[i].completions, 1);
		CHECK_EQ(t[i].status, RPCRDMA_ERR_CANCELLED);
	}
	/* Let the workers see their connections go first. */
	pump_ms(loop, 100);
	pthread_mutex_lock(&td.lock);
	n = td.nheld;
	for (unsigned int i = 0; i < n; i++)
		CHECK_EQ(rpcrdma_loop_wake(rpcrdma_svc_loop(td.held[i]), answer_held, td.held[i]),
			 0);
	pthread_mutex_unlock(&td.lock);
	pump_until_execs(loop, &td.answered, n);
	pump_until_execs(loop, &td.hold_frees, n);
	rpcrdma_server_destroy(srv);
	CHECK_EQ(td.hold_frees, n);
	CHECK_EQ(td.released, 1);
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
	td_fds_check(__func__);
}

/*
 * Large calls (Read chunks over RDMA) and large replies (Write chunks
 * over RDMA, a full socket over TCP) to a client that then stops running
 * its loop: the server goes while the workers' Reads or replies wait on
 * it.  Destroy returns, and the client afterwards sees every call end.
 */
#define TD_ECHOS 8
#define TD_ECHO_LEN (512u << 10)

static void teardown_bulk(bool wait_for_execs)
{
	struct td_call t[TD_ECHOS];
	struct rpcrdma_client *c[2];
	struct rpcrdma_loop *cloop;
	struct rpcrdma_server *srv;
	char port[16];

	td_fds_before = td_fds();

	/* One loop: while the server is destroyed, no one runs the client. */
	CHECK_EQ(rpcrdma_loop_create(&cloop), 0);
	srv = td_server(cloop, TD_WORKERS, port);
	for (int k = 0; k < 2; k++) {
		struct rpcrdma_client_opts co;

		rpcrdma_client_opts_default(&co);
		co.timeout_ms = 20000;
		co.retries = 1;
		c[k] = client_for(cloop, port, TEARDOWN_PROG, 1, &co);
		CHECK_EQ(rpcrdma_client_connect(c[k]), 0);
		td_open(c[k], 1);
	}
	for (int i = 0; i < TD_ECHOS; i++) {
		struct td_call *e = &t[i];

		memset(e, 0, sizeof(*e));
		e->in = malloc(sizeof(*e->in));
		e->out = malloc(sizeof(*e->out));
		CHECK(e->in && e->out);
		e->in->len = TD_ECHO_LEN;
		memset(e->in->data, 0x30 + i, TD_ECHO_LEN);
		call_init(&e->call, T_ECHO, xdr_echo_enc, e->in, xdr_echo_dec, e->out);
		echo_offer_ddp(&e->call, e->out);
		e->call.done = td_done;
		e->call.ctx = e;
		CHECK_EQ(rpcrdma_client_call_async(c[i % 2], &e->call), 0);
	}
	if (wait_for_execs) {
		pump_until_execs(cloop, &td.echo_execs, TD_ECHOS);
	} else {
		/* Until the first call is served: the others are being read. */
		pump_until_execs(cloop, &td.echo_execs, 1);
	}
	rpcrdma_server_destroy(srv);
	CHECK_EQ(td.echo_frees, td.echo_execs);
	CHECK_EQ(td.released, 1);
	pump_until_done(cloop, t, TD_ECHOS);
	for (int k = 0; k < 2; k++)
		rpcrdma_client_destroy(c[k]);
	for (int i = 0; i < TD_ECHOS; i++) {
		CHECK_EQ(t[i].completions, 1);
		if (t[i].status == 0)
			CHECK(t[i].out->len == TD_ECHO_LEN && t[i].out->data[7] == 0x30 + i);
		free(t[i].in);
		free(t[i].out);
	}
	CHECK_EQ(rpcrdma_loop_destroy(cloop), 0);
	td_fds_check(__func__);
}

void case_teardown_workers_replies_unread(void)
{
	teardown_bulk(true);
}

void case_teardown_workers_reads_inflight(void)
{
	teardown_bulk(false);
}

/*
 * nconnect: calls out on every connection, and the client destroyed from
 * inside one call's completion.  The others complete once, inside that
 * destroy, with RPCRDMA_ERR_CANCELLED.
 */
#define TD_NCONN 4u
#define TD_NCALLS 12

static struct rpcrdma_client *td_destroy_me;
static int td_destroyed_in_done;

static void destroy_in_done(struct rpcrdma_call *call, void *ctx)
{
	td_done(call, ctx);
	rpcrdma_client_destroy(td_destroy_me);
	td_destroyed_in_done++;
}

void case_teardown_nconnect_in_done(void)
{
	struct td_call t[TD_NCALLS], trigger;
	struct rpcrdma_client_opts co;
	struct rpcrdma_server *srv;
	struct rpcrdma_loop *loop;
	char port[16];

	td_fds_before = td_fds();

	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	srv = td_server(loop, 0, port);
	rpcrdma_client_opts_default(&co);
	co.timeout_ms = 60000;
	co.nconnect = TD_NCONN;
	td_destroy_me = client_for(loop, port, TEARDOWN_PROG, 1, &co);
	CHECK_EQ(rpcrdma_client_connect(td_destroy_me), 0);
	td_open(td_destroy_me, TD_NCONN);
	for (int i = 0; i < TD_NCALLS; i++)
		start_hold(td_destroy_me, &t[i]);
	pump_until_execs(loop, &td.hold_execs, TD_NCALLS);
	for (unsigned int i = 0; i < TD_NCONN; i++) {
		struct rpcrdma_xprt_stats st;

		CHECK_EQ(rpcrdma_client_conn_stats(td_destroy_me, i, &st), 0);
		CHECK(st.calls_sent > 0);
	}
	memset(&trigger, 0, sizeof(trigger));
	call_init(&trigger.call, T_NULL, NULL, NULL, NULL, NULL);
	trigger.call.done = destroy_in_done;
	trigger.call.ctx = &trigger;
	td_destroyed_in_done = 0;
	CHECK_EQ(rpcrdma_client_call_async(td_destroy_me, &trigger.call), 0);
	while (!td_destroyed_in_done)
		CHECK(rpcrdma_loop_run_once(loop, 1000) >= 0);
	for (int i = 0; i < TD_NCALLS; i++) {
		CHECK_EQ(t[i].completions, 1);
		CHECK_EQ(t[i].status, RPCRDMA_ERR_CANCELLED);
	}
	CHECK_EQ(trigger.completions, 1);
	CHECK_EQ(trigger.status, 0);
	pump_ms(loop, 50);
	for (int i = 0; i < TD_NCALLS; i++)
		CHECK_EQ(t[i].completions, 1);
	rpcrdma_server_destroy(srv);
	CHECK_EQ(td.hold_frees, TD_NCALLS);
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
	td_fds_check(__func__);
}

/*
 * nconnect: the server goes with calls out on every connection; the client
 * reconnects (and backs off), calls made meanwhile wait, and the client is
 * destroyed in the middle of it.
 */
void case_teardown_nconnect_reconnecting(void)
{
	struct td_call t[TD_NCALLS], late[4];
	struct rpcrdma_client_opts co;
	struct rpcrdma_server *srv;
	struct rpcrdma_client *c;
	struct rpcrdma_loop *loop;
	char port[16];

	td_fds_before = td_fds();

	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	srv = td_server(loop, 0, port);
	rpcrdma_client_opts_default(&co);
	co.timeout_ms = 60000;
	co.retries = 100;
	co.nconnect = TD_NCONN;
	c = client_for(loop, port, TEARDOWN_PROG, 1, &co);
	CHECK_EQ(rpcrdma_client_connect(c), 0);
	td_open(c, TD_NCONN);
	for (int i = 0; i < TD_NCALLS; i++)
		start_hold(c, &t[i]);
	pump_until_execs(loop, &td.hold_execs, TD_NCALLS);
	/* Held past the server's end: the answers are SYSTEM_ERR. */
	rpcrdma_server_destroy(srv);
	pump_until_done(loop, t, TD_NCALLS);
	for (int i = 0; i < 4; i++)
		start_hold(c, &late[i]);
	pump_ms(loop, 300);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(late[i].completions, 0);
	rpcrdma_client_destroy(c);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(late[i].completions, 1);
		CHECK_EQ(late[i].status, RPCRDMA_ERR_CANCELLED);
	}
	for (int i = 0; i < TD_NCALLS; i++)
		CHECK_EQ(t[i].completions, 1);
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
	td_fds_check(__func__);
}

/*
 * Two procedures on a worker each destroy the server before the server's
 * loop has run the destruction the first one queued there: the second
 * call is as harmless as it is from a procedure without workers, and the
 * server goes once.
 */
void case_teardown_workers_destroy_twice(void)
{
	struct td_call t[2], o;
	struct rpcrdma_loop *sloop, *cloop;
	struct rpcrdma_client *c;
	char port[16];

	td_fds_before = td_fds();

	CHECK_EQ(rpcrdma_loop_create(&sloop), 0);
	CHECK_EQ(rpcrdma_loop_create(&cloop), 0);
	td.srv = td_server(sloop, TD_WORKERS, port);
	c = client_for(cloop, port, TEARDOWN_PROG, 1, NULL);
	/* Connected and granted credits, with both loops running (the
	 * server's accepts). */
	for (int round = 0; round < 2; round++) {
		memset(&o, 0, sizeof(o));
		call_init(&o.call, T_NULL, NULL, NULL, NULL, NULL);
		o.call.done = td_done;
		o.call.ctx = &o;
		CHECK_EQ(rpcrdma_client_call_async(c, &o.call), 0);
		while (!o.completions) {
			CHECK(rpcrdma_loop_run_once(cloop, 1) >= 0);
			CHECK(rpcrdma_loop_run_once(sloop, 1) >= 0);
		}
		CHECK_EQ(o.status, 0);
	}
	for (int i = 0; i < 2; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		call_init(&t[i].call, T_DESTROY, NULL, NULL, NULL, NULL);
		t[i].call.done = td_done;
		t[i].call.ctx = &t[i];
		t[i].call.timeout_ms = 5000;
		CHECK_EQ(rpcrdma_client_call_async(c, &t[i].call), 0);
	}
	/* Only the client's loop: both destructions wait on the server's. */
	pump_until_execs(cloop, &td.destroy_calls, 2);
	pump_ms(sloop, 50);
	CHECK_EQ(td.released, 1);
	pump_until_done(cloop, t, 2);
	rpcrdma_client_destroy(c);
	CHECK_EQ(rpcrdma_loop_destroy(sloop), 0);
	CHECK_EQ(rpcrdma_loop_destroy(cloop), 0);
	td_fds_check(__func__);
}

/*
 * TCP, nconnect: a listener that never accepts (the kernel completes the
 * connections and takes the calls) goes away with calls out on every
 * connection.  The calls fail as their connections go, and the first
 * completion destroys the client: the rest, those lost with the same
 * connection included, complete once, before that destroy returns.
 */
/* The calls a destroy from a done() must have completed before it
 * returns, and how many completions it had seen when it did. */
static struct td_call *td_watched;
static int td_nwatched, td_seen_at_destroy;

/* done(): the first destroys td_destroy_me and counts td_watched's
 * completions at that moment. */
static void destroy_then_count(struct rpcrdma_call *call, void *ctx)
{
	td_done(call, ctx);
	if (td_destroy_me) {
		struct rpcrdma_client *c = td_destroy_me;

		td_destroy_me = NULL;
		rpcrdma_client_destroy(c);
		td_seen_at_destroy = 0;
		for (int i = 0; i < td_nwatched; i++)
			td_seen_at_destroy += td_watched[i].completions;
		td_destroyed_in_done++;
	}
}

void case_teardown_nconnect_lost_in_done(void)
{
	struct td_call t[TD_NCALLS];
	struct rpcrdma_client_opts co;
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t len = sizeof(sin);
	struct rpcrdma_loop *loop;
	char port[16];
	int lfd;

	td_fds_before = td_fds();
	td_reset();
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(lfd >= 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK_EQ(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	CHECK_EQ(listen(lfd, 64), 0);
	CHECK_EQ(getsockname(lfd, (struct sockaddr *)&sin, &len), 0);
	snprintf(port, sizeof(port), "%u", ntohs(sin.sin_port));
	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	rpcrdma_client_opts_default(&co);
	co.timeout_ms = 20000;
	co.retries = 0;
	co.nconnect = TD_NCONN;
	td_destroy_me = client_for(loop, port, TEARDOWN_PROG, 1, &co);
	CHECK_EQ(rpcrdma_client_connect(td_destroy_me), 0);
	td_destroyed_in_done = 0;
	td_watched = t;
	td_nwatched = TD_NCALLS;
	for (int i = 0; i < TD_NCALLS; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		call_init(&t[i].call, T_NULL, NULL, NULL, NULL, NULL);
		t[i].call.done = destroy_then_count;
		t[i].call.ctx = &t[i];
		CHECK_EQ(rpcrdma_client_call_async(td_destroy_me, &t[i].call), 0);
	}
	pump_ms(loop, 100);
	for (unsigned int i = 0; i < TD_NCONN; i++) {
		struct rpcrdma_xprt_stats st;

		CHECK_EQ(rpcrdma_client_conn_stats(td_destroy_me, i, &st), 0);
		CHECK(st.calls_sent > 0);
	}
	close(lfd);
	for (uint64_t end = rpcrdma_loop_now(loop) + 10000; !td_destroyed_in_done;) {
		CHECK(rpcrdma_loop_now(loop) < end);
		CHECK(rpcrdma_loop_run_once(loop, 5) >= 0);
	}
	/* Those lost with the same connection as the first too. */
	CHECK_EQ(td_seen_at_destroy, TD_NCALLS);
	for (int i = 0; i < TD_NCALLS; i++) {
		CHECK_EQ(t[i].completions, 1);
		CHECK(t[i].status != 0);
	}
	pump_ms(loop, 50);
	for (int i = 0; i < TD_NCALLS; i++)
		CHECK_EQ(t[i].completions, 1);
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
	td_fds_check(__func__);
}

/*
 * nconnect: the client is destroyed while its connections are still being
 * made (the server's loop, which accepts them, has not run yet); then the
 * server meets connections whose client is gone.
 */
void case_teardown_nconnect_connecting(void)
{
	struct td_call t[TD_NCALLS];
	struct rpcrdma_client_opts co;
	struct rpcrdma_loop *sloop, *cloop;
	struct rpcrdma_server *srv;
	struct rpcrdma_client *c;
	char port[16];

	td_fds_before = td_fds();
	CHECK_EQ(rpcrdma_loop_create(&sloop), 0);
	CHECK_EQ(rpcrdma_loop_create(&cloop), 0);
	srv = td_server(sloop, TD_WORKERS, port);
	rpcrdma_client_opts_default(&co);
	co.timeout_ms = 20000;
	co.nconnect = TD_NCONN;
	c = client_for(cloop, port, TEARDOWN_PROG, 1, &co);
	for (int i = 0; i < TD_NCALLS; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		call_init(&t[i].call, T_NULL, NULL, NULL, NULL, NULL);
		t[i].call.done = td_done;
		t[i].call.ctx = &t[i];
		CHECK_EQ(rpcrdma_client_call_async(c, &t[i].call), 0);
	}
	pump_ms(cloop, 30);
	rpcrdma_client_destroy(c);
	for (int i = 0; i < TD_NCALLS; i++) {
		CHECK_EQ(t[i].completions, 1);
		if (transport == RPCRDMA_TRANSPORT_RDMA)
			CHECK_EQ(t[i].status, RPCRDMA_ERR_CANCELLED);
	}
	pump_ms(sloop, 200);
	pump_ms(cloop, 20);
	rpcrdma_server_destroy(srv);
	CHECK_EQ(td.released, 1);
	CHECK_EQ(rpcrdma_loop_destroy(sloop), 0);
	CHECK_EQ(rpcrdma_loop_destroy(cloop), 0);
	td_fds_check(__func__);
}

/*
 * RDMA: calls with Write chunks time out together (their memory is then
 * being revoked before they may complete), and the first completion
 * destroys the client.  Inside a callback, the others cannot complete
 * before that destroy returns (the peer may still reach their buffers
 * until the revocation is done): they complete once each, by the loop's
 * next iteration, and the loop cannot be destroyed before they have, as
 * rpcrdma_client_destroy() says.
 */
void case_teardown_fencing_in_done(void)
{
	enum { N = 4 };
	struct td_call t[N];
	static uint8_t bufs[N][4096];
	struct rpcrdma_server *srv;
	struct rpcrdma_loop *loop;
	char port[16];

	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	srv = td_server(loop, 0, port);
	td_destroy_me = client_for(loop, port, TEARDOWN_PROG, 1, NULL);
	td_open(td_destroy_me, 1);
	td_watched = t;
	td_nwatched = N;
	td_destroyed_in_done = 0;
	for (int i = 0; i < N; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		call_init(&t[i].call, T_HOLD, NULL, NULL, xdr_u32_dec, &t[i].res);
		t[i].call.ddp_buf = bufs[i];
		t[i].call.ddp_len = sizeof(bufs[i]);
		t[i].call.timeout_ms = 300;
		t[i].call.done = destroy_then_count;
		t[i].call.ctx = &t[i];
		CHECK_EQ(rpcrdma_client_call_async(td_destroy_me, &t[i].call), 0);
	}
	for (uint64_t end = rpcrdma_loop_now(loop) + 10000; !td_destroyed_in_done;) {
		CHECK(rpcrdma_loop_now(loop) < end);
		CHECK(rpcrdma_loop_run_once(loop, 5) >= 0);
	}
	CHECK(td_seen_at_destroy >= 1);
	if (td_seen_at_destroy < N)
		CHECK_EQ(rpcrdma_loop_destroy(loop), -EBUSY);
	CHECK(rpcrdma_loop_run_once(loop, 0) >= 0);
	for (int i = 0; i < N; i++) {
		CHECK_EQ(t[i].completions, 1);
		CHECK(t[i].status == RPCRDMA_ERR_TIMEDOUT || t[i].status == RPCRDMA_ERR_CANCELLED);
	}
	pump_ms(loop, 50);
	for (int i = 0; i < N; i++)
		CHECK_EQ(t[i].completions, 1);
	rpcrdma_server_destroy(srv);
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
}

/*
 * A server with workers that cannot listen (its port is taken) stops the
 * workers it started: nothing is left, no thread, memory or descriptor.
 */
void case_teardown_workers_create_fails(void)
{
	struct rpcrdma_server_opts so;
	struct rpcrdma_server *srv, *other = NULL;
	struct rpcrdma_loop *loop;
	char port[16];

	td_fds_before = td_fds();
	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	srv = td_server(loop, 0, port);
	rpcrdma_server_opts_default(&so);
	so.transport = transport;
	so.workers = TD_WORKERS;
	CHECK(rpcrdma_server_create(loop, "127.0.0.1", port, &so, &other) != 0);
	CHECK(other == NULL);
	rpcrdma_server_destroy(srv);
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
	td_fds_check(__func__);
}

/*
 * Calls whose arguments do not encode fail from the loop, one after the
 * other; the first one's completion destroys the client.  The others
 * complete before that destroy returns, as rpcrdma_client_destroy() says,
 * so the caller may free them all right after it.
 */
#define TD_FAILS 4

void case_teardown_send_failed_in_done(void)
{
	struct td_call t[TD_FAILS];
	struct rpcrdma_server *srv;
	struct rpcrdma_loop *loop;
	char port[16];
	uint32_t v = 1;

	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	srv = td_server(loop, 0, port);
	td_destroy_me = client_for(loop, port, TEARDOWN_PROG, 1, NULL);
	CHECK_EQ(rpcrdma_client_connect(td_destroy_me), 0);
	td_watched = t;
	td_nwatched = TD_FAILS;
	td_destroyed_in_done = 0;
	for (int i = 0; i < TD_FAILS; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		call_init(&t[i].call, T_NULL, xdr_fail_enc, &v, NULL, NULL);
		t[i].call.done = destroy_then_count;
		t[i].call.ctx = &t[i];
		CHECK_EQ(rpcrdma_client_call_async(td_destroy_me, &t[i].call), 0);
	}
	for (uint64_t end = rpcrdma_loop_now(loop) + 10000; !td_destroyed_in_done;) {
		CHECK(rpcrdma_loop_now(loop) < end);
		CHECK(rpcrdma_loop_run_once(loop, 5) >= 0);
	}
	CHECK_EQ(td_seen_at_destroy, TD_FAILS);
	pump_ms(loop, 20);
	for (int i = 0; i < TD_FAILS; i++) {
		CHECK_EQ(t[i].completions, 1);
		CHECK(t[i].status != 0);
	}
	rpcrdma_server_destroy(srv);
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
}

/*
 * A procedure's free_res destroys the server.  Over RDMA a large result is
 * written from the procedure's memory and free_res runs when that Write
 * completes, from the transport's completion handler: the server must
 * outlive it, as when destroyed from a procedure.
 */
void case_teardown_destroy_in_free_res(void)
{
	struct td_call e;
	struct rpcrdma_loop *loop;
	struct rpcrdma_client *c;
	char port[16];

	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	td.srv = td_server(loop, 0, port);
	c = client_for(loop, port, TEARDOWN_PROG, 1, NULL);
	memset(&e, 0, sizeof(e));
	e.in = malloc(sizeof(*e.in));
	e.out = malloc(sizeof(*e.out));
	CHECK(e.in && e.out);
	e.in->len = 256u << 10;
	memset(e.in->data, 0x5a, e.in->len);
	call_init(&e.call, T_ECHO_DOOM, xdr_echo_enc, e.in, xdr_echo_dec, e.out);
	echo_offer_ddp(&e.call, e.out);
	e.call.timeout_ms = 5000;
	e.call.done = td_done;
	e.call.ctx = &e;
	CHECK_EQ(rpcrdma_client_call_async(c, &e.call), 0);
	pump_until_done(loop, &e, 1);
	for (uint64_t end = rpcrdma_loop_now(loop) + 5000; td.srv;) {
		CHECK(rpcrdma_loop_now(loop) < end);
		CHECK(rpcrdma_loop_run_once(loop, 5) >= 0);
	}
	pump_ms(loop, 20);
	CHECK_EQ(td.released, 1);
	CHECK_EQ(td.echo_frees, 1);
	rpcrdma_client_destroy(c);
	free(e.in);
	free(e.out);
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
}

/*
 * Clients keep connecting, from a thread of their own, while a server with
 * workers is destroyed: requests are read, being handed to a worker, in a
 * worker's inbox or announced there when the listener and the workers go.
 * Each round leaves no descriptor (and, under ASan, no memory) behind.
 */
#define TD_STORM_ROUNDS 30
#define TD_STORM_BATCH 8

struct td_storm {
	char port[16];
	atomic_bool stop;
	atomic_uint batches;
};

static void storm_done(struct rpcrdma_call *call, void *ctx)
{
	(void)call;
	(*(int *)ctx)--;
}

static void *storm_main(void *arg)
{
	struct td_storm *st = arg;
	struct rpcrdma_client_opts co;
	struct rpcrdma_loop *loop;

	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	rpcrdma_client_opts_default(&co);
	co.timeout_ms = 500;
	while (!st->stop) {
		struct rpcrdma_client *c[TD_STORM_BATCH];
		struct rpcrdma_call call[TD_STORM_BATCH];
		int pending = TD_STORM_BATCH;

		for (int i = 0; i < TD_STORM_BATCH; i++) {
			c[i] = client_for(loop, st->port, TEARDOWN_PROG, 1, &co);
			call_init(&call[i], T_NULL, NULL, NULL, NULL, NULL);
			call[i].done = storm_done;
			call[i].ctx = &pending;
			if (rpcrdma_client_call_async(c[i], &call[i]))
				pending--;
		}
		while (pending > 0 && !st->stop)
			CHECK(rpcrdma_loop_run_once(loop, 5) >= 0);
		for (int i = 0; i < TD_STORM_BATCH; i++)
			rpcrdma_client_destroy(c[i]);
		st->batches++;
	}
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
	return NULL;
}

void case_teardown_workers_connect_storm(void)
{
	struct rpcrdma_loop *loop;

	td_fds_before = td_fds();
	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	for (unsigned int round = 0; round < TD_STORM_ROUNDS; round++) {
		struct td_storm st = {.stop = false};
		struct rpcrdma_server *srv = td_server(loop, TD_WORKERS, st.port);
		pthread_t th;

		CHECK_EQ(pthread_create(&th, NULL, storm_main, &st), 0);
		/* Destroyed at a different point of the storm each round. */
		pump_ms(loop, 2 + (int)(round % 7) * 3);
		rpcrdma_server_destroy(srv);
		st.stop = true;
		CHECK_EQ(pthread_join(th, NULL), 0);
		CHECK_EQ(td.released, 1);
	}
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
	td_fds_check(__func__);
}

/* One call of @proc, running both loops until it completes. */
static void td_call_both(struct rpcrdma_client *c, uint32_t proc, struct rpcrdma_loop *cloop,
			 struct rpcrdma_loop *sloop)
{
	struct td_call o;

	memset(&o, 0, sizeof(o));
	call_init(&o.call, proc, NULL, NULL, NULL, NULL);
	o.call.done = td_done;
	o.call.ctx = &o;
	CHECK_EQ(rpcrdma_client_call_async(c, &o.call), 0);
	while (!o.completions) {
		CHECK(rpcrdma_loop_run_once(cloop, 1) >= 0);
		CHECK(rpcrdma_loop_run_once(sloop, 1) >= 0);
	}
	CHECK_EQ(o.status, 0);
}

/*
 * A procedure creates a client on its worker's loop.  Destroyed before the
 * server, it leaves nothing; left there, the server still goes, says
 * -EBUSY, and the worker's loop is the application's: it destroys the
 * client, then the loop, and nothing is left either.
 */
void case_teardown_worker_loop_kept(void)
{
	struct rpcrdma_loop *sloop, *cloop;
	struct rpcrdma_client *c;

	td_fds_before = td_fds();
	CHECK_EQ(rpcrdma_loop_create(&sloop), 0);
	CHECK_EQ(rpcrdma_loop_create(&cloop), 0);
	for (int left = 0; left < 2; left++) {
		td.srv = td_server(sloop, TD_WORKERS, td.port);
		c = client_for(cloop, td.port, TEARDOWN_PROG, 1, NULL);
		td_call_both(c, T_ADOPT, cloop, sloop);
		CHECK(td.adopted != NULL && td.adopt_loop != sloop);
		if (!left)
			td_call_both(c, T_DROP, cloop, sloop);
		rpcrdma_client_destroy(c);
		CHECK_EQ(rpcrdma_server_destroy(td.srv), left ? -EBUSY : 0);
		CHECK_EQ(td.released, 1);
		if (left) {
			rpcrdma_client_destroy(td.adopted);
			CHECK_EQ(rpcrdma_loop_destroy(td.adopt_loop), 0);
		}
		td.srv = NULL;
		td.adopted = NULL;
	}
	CHECK_EQ(rpcrdma_loop_destroy(sloop), 0);
	CHECK_EQ(rpcrdma_loop_destroy(cloop), 0);
	td_fds_check(__func__);
}

/*
 * A child forked while a server and a client are up (one that exits
 * through its atexit handlers, say) destroys what it inherited.  The
 * descriptors and provider objects it sees are its parent's too: shutting
 * down a socket, or destroying a QP through the shared verbs file, would
 * end them in the parent.  The child's destroys do nothing but say so; the
 * parent's server still accepts and its client still calls.
 */
void case_teardown_forked_child(void)
{
	struct rpcrdma_loop *loop;
	struct rpcrdma_client *c, *c2;
	int status = -1;
	pid_t pid;

	td_fds_before = td_fds();
	CHECK_EQ(rpcrdma_loop_create(&loop), 0);
	td.srv = td_server(loop, 0, td.port);
	c = client_for(loop, td.port, TEARDOWN_PROG, 1, NULL);
	td_call_both(c, T_NULL, loop, loop);
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int rc_srv, rc_loop;

		rpcrdma_client_destroy(c);
		rc_srv = rpcrdma_server_destroy(td.srv);
		rc_loop = rpcrdma_loop_destroy(loop);
		_exit(rc_srv == -EPERM && rc_loop == -EPERM ? 0 : 1);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	/* A moment for anything the child did to reach us. */
	pump_ms(loop, 50);
	td_call_both(c, T_NULL, loop, loop);
	c2 = client_for(loop, td.port, TEARDOWN_PROG, 1, NULL);
	td_call_both(c2, T_NULL, loop, loop);
	rpcrdma_client_destroy(c2);
	rpcrdma_client_destroy(c);
	CHECK_EQ(rpcrdma_server_destroy(td.srv), 0);
	td.srv = NULL;
	CHECK_EQ(rpcrdma_loop_destroy(loop), 0);
	td_fds_check(__func__);
}
