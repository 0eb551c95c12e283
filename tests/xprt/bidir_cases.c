/*
 * Bidirectional RPC-over-RDMA (RFC 8167) end to end through the public API
 * (backchannel.h): part of e2e_test.c, whose procedures and XDR functions
 * it reuses.  The client hosts a callback program; the server obtains the
 * backchannel from inside a procedure of its own (SETUP, the upper layer's
 * "I take callbacks" and "bind this connection", as NFSv4.1's
 * CREATE_SESSION and BIND_CONN_TO_SESSION) and calls the client back.
 */
#include "rpcrdma/backchannel.h"
#include "xprtrdma/xprt.h"

#define CBPROG 0x40000001u
#define CB_CREDITS 8u
#define FWD_CREDITS 16u

enum { CB_NULL, CB_ECHO, CB_BLOB, CB_HOLD, CB_NPROCS };
enum {
	SETUP_ENABLE = 1,
	SETUP_BIND = 2,
	SETUP_PING = 4,
	SETUP_STORM = 8,
	SETUP_HOLDS = 16,
	SETUP_AWAIT = 32,
};

/* The highest RPC-over-RDMA version the client offers (v2_cases.c sets
 * 2), and whether a case saw Version Two on the forward direction. */
static uint32_t g_clnt_max_vers;
static int g_v2_checked;

/* Where the server listens: test_addr, or (e2e_bidir_wildcard) every
 * address, which on verbs makes a listen-only instance that serves each
 * connection from a transport of its device. */
static const char *g_srv_addr;

/* The server's one backchannel (one client per case). */
static struct rpcrdma_backchannel *g_bc;
static int g_setup_rc;
static uint32_t g_bc_timeout_ms;
static unsigned int g_max_conns; /* the server's; 0: its default */
static size_t g_max_queued_total; /* the server's; 0: its default */

/* CB_HOLD requests the client defers until the case answers them. */
#define HOLD_MAX 16
static struct rpcrdma_svc_req *held[HOLD_MAX];
static unsigned int nheld;

/* Completion of a call with no data to check. */
static void flag_done(struct rpcrdma_call *call, void *ctx)
{
	(void)call;
	*(int *)ctx = 1;
}

static int u32_dec(struct rpcrdma_xdr_stream *x, void *o)
{
	return rpcrdma_xdr_decode_u32(x, o);
}

static int u32_enc(struct rpcrdma_xdr_stream *x, void *o)
{
	return rpcrdma_xdr_encode_u32(x, *(uint32_t *)o);
}

/* SETUP_PING: a reverse CB_NULL started from inside the procedure, on the
 * loop that serves the connection (a worker's, in e2e_bidir_workers). */
static struct rpcrdma_call g_ping;
static _Atomic int g_ping_status = 1;

static void ping_done(struct rpcrdma_call *call, void *ctx)
{
	(void)ctx;
	g_ping_status = call->status;
}

/* SETUP_STORM: STORM_CALLS reverse CB_NULLs, one after the other, from a
 * procedure that answers once the last is done: a server call waiting on
 * callbacks, as an NFSv4.1 server's CB_RECALLs before a conflicting OPEN
 * is answered. */
#define STORM_CALLS 64u
static struct rpcrdma_call g_storm[STORM_CALLS];
static struct rpcrdma_svc_req *g_storm_req;
static unsigned int g_storm_done;
static int g_storm_status;

static void storm_next(struct rpcrdma_call *call, void *ctx)
{
	(void)ctx;
	if (call->status)
		g_storm_status = call->status;
	else if (++g_storm_done < STORM_CALLS) {
		struct rpcrdma_call *next = &g_storm[g_storm_done];

		call_init(next, CB_NULL, NULL, NULL, NULL, NULL);
		next->done = storm_next;
		g_storm_status = rpcrdma_backchannel_call_async(g_bc, next);
		if (!g_storm_status)
			return;
	}
	(void)rpcrdma_svc_reply(g_storm_req, 0);
	g_storm_req = NULL;
}

/* SETUP_HOLDS: on the loop serving the connection (a worker's), a reverse
 * CB_NULL, then, with the credits its reply granted, HOLDS_OUT CB_HOLDs
 * the client keeps deferred (e2e_bidir_workers_destroy_out). */
#define HOLDS_OUT 3
static struct rpcrdma_call g_holds[HOLDS_OUT + 1];
static _Atomic int g_holds_done[HOLDS_OUT], g_holds_status[HOLDS_OUT];

static void holds_one_done(struct rpcrdma_call *call, void *ctx)
{
	int i = (int)(intptr_t)ctx;

	g_holds_status[i] = call->status;
	g_holds_done[i]++;
}

static void holds_start(struct rpcrdma_call *call, void *ctx)
{
	(void)ctx;
	if (call->status)
		return;
	for (int i = 0; i < HOLDS_OUT; i++) {
		call_init(&g_holds[i], CB_HOLD, NULL, NULL, NULL, NULL);
		g_holds[i].done = holds_one_done;
		g_holds[i].ctx = (void *)(intptr_t)i;
		if (rpcrdma_backchannel_call_async(g_bc, &g_holds[i]) != 0)
			g_holds_status[i] = -1;
	}
}

/* SETUP_AWAIT: a procedure answered from the completion of the reverse
 * CB_HOLD it made (which the client keeps): a server call waiting on a
 * callback when the server goes (e2e_bidir_destroy_awaiting). */
static struct rpcrdma_call g_await;
static struct rpcrdma_svc_req *g_await_req;
static int g_await_done, g_await_status, g_await_reply_rc;

static void await_done(struct rpcrdma_call *call, void *ctx)
{
	(void)ctx;
	g_await_done++;
	g_await_status = call->status;
	g_await_reply_rc =
	    rpcrdma_svc_reply(g_await_req, call->status ? -RPCRDMA_RPC_SYSTEM_ERR : 0);
	g_await_req = NULL;
}

static int proc_setup(struct rpcrdma_svc_req *req, void *args, void *res)
{
	uint32_t flags = *(uint32_t *)args;
	struct rpcrdma_backchannel_opts o = {
	    .prog = CBPROG, .vers = 1, .credits = CB_CREDITS, .timeout_ms = (int)g_bc_timeout_ms};

	(void)res;
	if ((flags & SETUP_BIND) && g_bc)
		g_setup_rc = rpcrdma_backchannel_bind(g_bc, req);
	else
		g_setup_rc = rpcrdma_svc_backchannel(req, &o, &g_bc);
	if (!g_setup_rc && (flags & SETUP_ENABLE))
		g_setup_rc = rpcrdma_backchannel_enable(g_bc, true);
	if (!g_setup_rc && (flags & SETUP_PING)) {
		call_init(&g_ping, CB_NULL, NULL, NULL, NULL, NULL);
		g_ping.done = ping_done;
		g_ping_status = 1;
		g_setup_rc = rpcrdma_backchannel_call_async(g_bc, &g_ping);
	}
	if (!g_setup_rc && (flags & SETUP_HOLDS)) {
		call_init(&g_holds[HOLDS_OUT], CB_NULL, NULL, NULL, NULL, NULL);
		g_holds[HOLDS_OUT].done = holds_start;
		g_setup_rc = rpcrdma_backchannel_call_async(g_bc, &g_holds[HOLDS_OUT]);
	}
	if (!g_setup_rc && (flags & SETUP_AWAIT)) {
		call_init(&g_await, CB_HOLD, NULL, NULL, NULL, NULL);
		g_await.done = await_done;
		g_await_req = req;
		g_setup_rc = rpcrdma_backchannel_call_async(g_bc, &g_await);
		if (!g_setup_rc)
			return RPCRDMA_SVC_DEFERRED;
		g_await_req = NULL;
	}
	if (!g_setup_rc && (flags & SETUP_STORM)) {
		call_init(&g_storm[0], CB_NULL, NULL, NULL, NULL, NULL);
		g_storm[0].done = storm_next;
		g_storm_done = 0;
		g_storm_status = 1;
		g_storm_req = req;
		g_setup_rc = rpcrdma_backchannel_call_async(g_bc, &g_storm[0]);
		if (!g_setup_rc)
			return RPCRDMA_SVC_DEFERRED;
		g_storm_req = NULL;
	}
	return 0;
}

static int proc_hold(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)args;
	(void)res;
	if (nheld >= HOLD_MAX)
		return -RPCRDMA_RPC_SYSTEM_ERR;
	held[nheld++] = req;
	return RPCRDMA_SVC_DEFERRED;
}

static const struct rpcrdma_svc_proc cb_procs[CB_NPROCS] = {
    [CB_NULL] = {proc_null, NULL, 0, NULL, 0, NULL},
    [CB_ECHO] = {proc_echo, echo_dec, sizeof(struct echo), echo_enc, sizeof(struct echo),
		 free_echo},
    [CB_BLOB] = {proc_blob, blob_dec, sizeof(struct blob), res_blob_enc, sizeof(struct blob),
		 free_blob},
    [CB_HOLD] = {proc_hold, NULL, 0, NULL, 0, NULL},
};

/* A server with the setup program, a client hosting CBPROG (or not). */
static int bidir_up(struct env *e, bool host, bool refuse_chunks)
{
	struct rpcrdma_callback_opts cbo;
	struct rpcrdma_server_opts so;
	struct rpcrdma_client_opts co;
	char port[16];

	memset(e, 0, sizeof(*e));
	g_bc = NULL;
	g_setup_rc = -1;
	nheld = 0;
	if (!g_bc_timeout_ms)
		g_bc_timeout_ms = 20000;
	CHECK_RC(rpcrdma_loop_create(&e->loop), 0);
	rpcrdma_server_opts_default(&so);
	so.provider = test_provider;
	so.credits = FWD_CREDITS;
	so.inline_send = so.inline_recv = TEST_INLINE;
	so.max_conns = g_max_conns;
	so.max_queued_total = g_max_queued_total;
	CHECK_RC(rpcrdma_server_create(e->loop, g_srv_addr ? g_srv_addr : test_addr, "0", &so,
				       &e->srv),
		 0);
	CHECK_RC(rpcrdma_server_register(e->srv, PROG, VERS, procs, P_NPROCS), 0);
	snprintf(port, sizeof(port), "%d", rpcrdma_server_port(e->srv));
	rpcrdma_client_opts_default(&co);
	co.provider = test_provider;
	co.credits = FWD_CREDITS;
	co.inline_send = co.inline_recv = TEST_INLINE;
	co.timeout_ms = 20000;
	co.max_vers = g_clnt_max_vers;
	CHECK_RC(rpcrdma_client_create(e->loop, test_addr, port, PROG, VERS, &co, &e->clnt), 0);
	if (host) {
		rpcrdma_callback_opts_default(&cbo);
		cbo.credits = CB_CREDITS;
		cbo.refuse_chunks = refuse_chunks;
		CHECK_RC(
		    rpcrdma_client_register_callback(e->clnt, CBPROG, 1, cb_procs, CB_NPROCS, &cbo),
		    0);
		/* Twice the same program: refused. */
		CHECK_RC(
		    rpcrdma_client_register_callback(e->clnt, CBPROG, 1, cb_procs, CB_NPROCS, &cbo),
		    -EEXIST);
	}
	CHECK_RC(rpcrdma_client_connect(e->clnt), 0);
	/* Callbacks are set up with the connection, never after; once they
	 * are, more programs may come. */
	CHECK_RC(rpcrdma_client_register_callback(e->clnt, CBPROG, 2, cb_procs, 1, NULL),
		 host ? 0 : -EISCONN);
	return 0;
}

/* SETUP on the client's own connection: the server binds (and enables)
 * its backchannel there. */
static int setup_call(struct env *e, uint32_t flags)
{
	struct rpcrdma_call call;

	call_init(&call, P_SETUP, u32_enc, &flags, NULL, NULL);
	g_setup_rc = -1;
	CHECK_RC(rpcrdma_client_call(e->clnt, &call), 0);
	CHECK_RC(g_setup_rc, 0);
	CHECK(g_bc != NULL);
	return 0;
}

/* Prepares an ECHO of @len bytes whose result lands in a @cap-byte buffer. */
static int prep_echo(struct async_echo *a, uint32_t len, uint32_t seed, uint32_t cap)
{
	memset(a, 0, sizeof(*a));
	a->in.data = malloc(len + 1);
	a->out.data = malloc(cap);
	CHECK(a->in.data && a->out.data);
	a->in.len = len;
	for (uint32_t k = 0; k < len; k++)
		a->in.data[k] = pat(seed, k);
	call_init(&a->call, P_ECHO, echo_enc, &a->in, echo_dec, &a->out);
	a->call.ddp_buf = a->out.data;
	a->call.ddp_len = cap;
	a->call.max_reply = cap + 128;
	a->call.done = async_done;
	a->call.ctx = a;
	return 0;
}

static void free_echoes(struct async_echo *a, int n)
{
	for (int i = 0; i < n; i++) {
		free(a[i].in.data);
		free(a[i].out.data);
	}
	free(a);
}

static int pump_until(struct env *e, struct async_echo *a, int n)
{
	int done;

	do {
		CHECK(rpcrdma_loop_run_once(e->loop, 1000) >= 0);
		done = 0;
		for (int i = 0; i < n; i++)
			done += a[i].done;
	} while (done < n);
	return 0;
}

/*
 * A connection that takes no new call still receives its backchannel's
 * replies.  Another client stops reading a 16 MiB result, so the replies
 * queued over the server stay at or above max_queued_total (1 byte here)
 * and every connection with a call in progress takes no new one.  Ours
 * then makes a call whose procedure calls it back STORM_CALLS times, one
 * after the other, before answering: far more replies than the receives
 * the connection has posted (FWD_CREDITS + CB_CREDITS).  Each reply's
 * receive is replaced all the same, so every callback and the call
 * complete within the pause; held back like a call's, the receives ran
 * out and the next reply waited for a pause that its own call kept up.
 */
static int case_bidir_paused(void)
{
	struct rpcrdma_loop *aloop;
	struct rpcrdma_client *a;
	struct rpcrdma_client_opts co;
	struct rpcrdma_xprt_stats ss;
	struct rpcrdma_call acall, call;
	struct bulk ares = {0};
	uint32_t flags = SETUP_STORM;
	uint64_t dl;
	char port[16];
	struct env e;
	int adone = 0, done = 0;

	bulk_src = malloc(BULK_LEN);
	ares.data = malloc(BULK_LEN);
	CHECK(bulk_src && ares.data);
	memset(bulk_src, BULK_SRC_BYTE, BULK_LEN);
	g_max_queued_total = 1;
	g_bc_timeout_ms = 5000;
	CHECK_RC(bidir_up(&e, true, false), 0);
	g_max_queued_total = 0;
	CHECK_RC(setup_call(&e, SETUP_ENABLE), 0);

	/* The client that stops reading: its loop runs only to send. */
	CHECK_RC(rpcrdma_loop_create(&aloop), 0);
	snprintf(port, sizeof(port), "%d", rpcrdma_server_port(e.srv));
	rpcrdma_client_opts_default(&co);
	co.provider = test_provider;
	co.timeout_ms = 60000;
	CHECK_RC(rpcrdma_client_create(aloop, test_addr, port, PROG, VERS, &co, &a), 0);
	call_init(&acall, P_BULK_READ, NULL, NULL, bulk_dec_into, &ares);
	acall.ddp_buf = ares.data;
	acall.ddp_len = BULK_LEN;
	acall.max_reply = 4096;
	acall.done = flag_done;
	acall.ctx = &adone;
	/* It connects and sends while both loops run. */
	CHECK_RC(rpcrdma_client_call_async(a, &acall), 0);
	for (dl = rpcrdma_loop_now(e.loop) + 20000;;) {
		CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
		if (ss.queued_bytes_now)
			break;
		CHECK(rpcrdma_loop_now(e.loop) < dl);
		CHECK(rpcrdma_loop_run_once(aloop, 0) >= 0);
		CHECK(rpcrdma_loop_run_once(e.loop, 1) >= 0);
	}
	/* Whatever the sockets took is in; the rest stays queued. */
	for (dl = rpcrdma_loop_now(e.loop) + 200; rpcrdma_loop_now(e.loop) < dl;)
		CHECK(rpcrdma_loop_run_once(e.loop, 5) >= 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK(ss.queued_bytes_now > 0);

	call_init(&call, P_SETUP, u32_enc, &flags, NULL, NULL);
	call.done = flag_done;
	call.ctx = &done;
	g_setup_rc = -1;
	CHECK_RC(rpcrdma_client_call_async(e.clnt, &call), 0);
	for (dl = rpcrdma_loop_now(e.loop) + 30000; !done;) {
		CHECK(rpcrdma_loop_now(e.loop) < dl);
		CHECK(rpcrdma_loop_run_once(e.loop, 5) >= 0);
	}
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	fprintf(stderr,
		"bidir_paused: %u of %u callbacks answered (last status %d), call %d, "
		"queued %llu bytes, %llu pauses\n",
		g_storm_done, STORM_CALLS, g_storm_status, call.status,
		(unsigned long long)ss.queued_bytes_now, (unsigned long long)ss.queued_total_pauses);
	CHECK_RC(g_setup_rc, 0);
	CHECK_RC(call.status, 0);
	CHECK_RC(g_storm_done, STORM_CALLS);
	/* The pause held all along: the other client still reads nothing. */
	CHECK(ss.queued_bytes_now > 0);
	CHECK(ss.queued_total_pauses > 0);
	CHECK_RC(adone, 0);

	/* It reads again, and has its 16 MiB. */
	for (dl = rpcrdma_loop_now(e.loop) + 60000; !adone;) {
		CHECK(rpcrdma_loop_now(e.loop) < dl);
		CHECK(rpcrdma_loop_run_once(aloop, 1) >= 0);
		CHECK(rpcrdma_loop_run_once(e.loop, 0) >= 0);
	}
	CHECK_RC(acall.status, 0);
	CHECK_RC(ares.len, BULK_LEN);
	CHECK(ares.data[BULK_LEN - 1] == BULK_SRC_BYTE);
	rpcrdma_client_destroy(a);
	for (int i = 0; i < 5; i++)
		(void)rpcrdma_loop_run_once(aloop, 0);
	CHECK_RC(rpcrdma_loop_destroy(aloop), 0);
	rpcrdma_backchannel_release(g_bc);
	g_bc = NULL;
	g_bc_timeout_ms = 0;
	CHECK_RC(env_down(&e), 0);
	free(ares.data);
	free(bulk_src);
	bulk_src = NULL;
	return 0;
}

/*
 * Forward and reverse calls interleaved, each direction at its full
 * credits, their XIDs colliding on purpose (RFC 8167 2.4): the directions
 * never mix up, and the credits are accounted per direction.
 */
static int case_bidir_interleave(void)
{
	enum { NF = 4 * FWD_CREDITS, NR = 4 * CB_CREDITS };
	struct async_echo *f = calloc(NF, sizeof(*f)), *r = calloc(NR, sizeof(*r));
	struct rpcrdma_xprt_stats cs, ss, bs;
	struct env e;

	CHECK(f && r);
	CHECK_RC(bidir_up(&e, true, false), 0);
	CHECK_RC(setup_call(&e, SETUP_ENABLE), 0);
	/* SETUP again on the same connection: the same backchannel. */
	{
		struct rpcrdma_backchannel *first = g_bc;

		CHECK_RC(setup_call(&e, 0), 0);
		CHECK(g_bc == first);
	}
	rpcrdma__client_set_next_xid(e.clnt, 0x10000);
	rpcrdma__client_set_next_xid(rpcrdma__backchannel_client(g_bc), 0x10000);
	for (int i = 0; i < NF || i < NR; i++) {
		/* Inline and DDP sizes alternate in both directions. */
		uint32_t len = (uint32_t)(i * 1499) % 12000;

		if (i < NF) {
			CHECK_RC(prep_echo(&f[i], len, (uint32_t)i, 12000), 0);
			CHECK_RC(rpcrdma_client_call_async(e.clnt, &f[i].call), 0);
		}
		if (i < NR) {
			CHECK_RC(prep_echo(&r[i], len + 7, (uint32_t)i + 5000, 12100), 0);
			CHECK_RC(rpcrdma_backchannel_call_async(g_bc, &r[i].call), 0);
		}
	}
	CHECK_RC(pump_until(&e, f, NF), 0);
	CHECK_RC(pump_until(&e, r, NR), 0);
	for (int i = 0; i < NF; i++)
		CHECK_RC(f[i].call.status, 0);
	for (int i = 0; i < NR; i++) {
		CHECK_RC(r[i].call.status, 0);
		CHECK_RC(r[i].call.xid, f[i].call.xid); /* the same XIDs both ways */
	}
	CHECK_RC(rpcrdma_client_stats(e.clnt, &cs), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK_RC(rpcrdma_backchannel_stats(g_bc, &bs), 0);
	fprintf(stderr,
		"client: fwd calls %llu in_use_max %llu granted %llu | rev calls %llu replies %llu "
		"granted %llu dropped %llu bad %llu\n",
		(unsigned long long)cs.calls_sent, (unsigned long long)cs.credits_in_use_max,
		(unsigned long long)cs.credits_granted, (unsigned long long)cs.rev_calls,
		(unsigned long long)cs.rev_replies, (unsigned long long)cs.rev_credits_granted,
		(unsigned long long)cs.rev_dropped, (unsigned long long)cs.rev_bad_msgs);
	fprintf(stderr,
		"server: fwd replies %llu in_use_max %llu | rev calls %llu replies %llu in_use_max "
		"%llu granted %llu chunk msgs %llu rdma bytes %llu\n",
		(unsigned long long)ss.calls_sent, (unsigned long long)ss.credits_in_use_max,
		(unsigned long long)ss.rev_calls, (unsigned long long)ss.rev_replies,
		(unsigned long long)ss.rev_credits_in_use_max,
		(unsigned long long)ss.rev_credits_granted, (unsigned long long)ss.rev_chunk_msgs,
		(unsigned long long)ss.rev_rdma_bytes);
	if (g_clnt_max_vers == 2) {
		CHECK_RC(cs.vers_two_msgs, cs.calls_sent);
		CHECK_RC(ss.vers_two_msgs, ss.calls_sent);
		CHECK_RC(cs.vers_fallbacks, 0);
		g_v2_checked = 1;
	}
	/* Forward: the client's calls; reverse: the server's, apart. */
	CHECK_RC(cs.credits_in_use_max, FWD_CREDITS);
	CHECK_RC(cs.credits_granted, FWD_CREDITS);
	CHECK_RC(cs.rev_calls, NR);
	CHECK_RC(cs.rev_replies, NR);
	CHECK_RC(cs.rev_credits_granted, CB_CREDITS);
	CHECK_RC(ss.rev_calls, NR);
	CHECK_RC(ss.rev_replies, NR);
	CHECK_RC(ss.rev_credits_in_use_max, CB_CREDITS);
	CHECK_RC(ss.rev_credits_granted, CB_CREDITS);
	CHECK_RC(bs.calls_sent, NR);
	CHECK_RC(bs.credits_in_use_max, CB_CREDITS);
	CHECK_RC(cs.bad_msgs + cs.rev_bad_msgs + cs.rev_dropped, 0);
	CHECK_RC(ss.bad_msgs + ss.rev_bad_msgs + ss.rev_dropped, 0);
	CHECK(ss.rev_chunk_msgs > 0 && ss.rev_rdma_bytes > 0);
	CHECK_RC(env_down(&e), 0);
	free_echoes(f, NF);
	free_echoes(r, NR);
	return 0;
}

/* Reverse calls in every form: inline, Read chunks, Write chunk, Long Call
 * and Long Reply; the server's memory is read and written by the client. */
static int case_bidir_chunks(void)
{
	static const uint32_t sizes[] = {0, 1, 1000, 4001, 65537, 300000, BIG};
	struct async_echo a;
	struct rpcrdma_xprt_stats cs, ss;
	struct env e;

	CHECK_RC(bidir_up(&e, true, false), 0);
	CHECK_RC(setup_call(&e, SETUP_ENABLE), 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		CHECK_RC(prep_echo(&a, sizes[i], (uint32_t)i, BIG), 0);
		CHECK_RC(rpcrdma_backchannel_call(g_bc, &a.call), 0);
		CHECK_RC(a.out.len, sizes[i]);
		CHECK(memcmp(a.in.data, a.out.data, sizes[i]) == 0);
		free(a.in.data);
		free(a.out.data);
	}
	/* No DDP: Long Call, Long Reply, both. */
	{
		static const uint32_t blobs[][2] = {
		    {300000, 5}, {5, 300000}, {70000, 70000}, {9, 9}};

		for (size_t i = 0; i < sizeof(blobs) / sizeof(blobs[0]); i++) {
			struct blob in = {.want = blobs[i][1], .len = blobs[i][0]};
			struct blob out = {.want = blobs[i][1]};
			struct rpcrdma_call call;

			in.data = malloc(in.len + 1);
			out.data = malloc(out.want + 1);
			CHECK(in.data && out.data);
			for (uint32_t k = 0; k < in.len; k++)
				in.data[k] = pat(in.len, k);
			call_init(&call, CB_BLOB, blob_enc, &in, res_blob_dec, &out);
			call.max_reply = 128 + out.want;
			CHECK_RC(rpcrdma_backchannel_call(g_bc, &call), 0);
			CHECK_RC(out.len, blobs[i][1]);
			for (uint32_t k = 0; k < out.len; k++)
				CHECK(out.data[k] == pat(out.len + 1, k));
			free(in.data);
			free(out.data);
		}
	}
	/* The forward direction still works alongside. */
	{
		struct async_echo f;

		CHECK_RC(prep_echo(&f, 100000, 77, 100000), 0);
		CHECK_RC(rpcrdma_client_call(e.clnt, &f.call), 0);
		CHECK_RC(f.out.len, 100000);
		free(f.in.data);
		free(f.out.data);
	}
	CHECK_RC(rpcrdma_client_stats(e.clnt, &cs), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	fprintf(stderr, "server: rev calls %llu chunk msgs %llu long msgs %llu rdma bytes %llu\n",
		(unsigned long long)ss.rev_calls, (unsigned long long)ss.rev_chunk_msgs,
		(unsigned long long)ss.rev_long_msgs, (unsigned long long)ss.rev_rdma_bytes);
	CHECK(ss.rev_chunk_msgs > 0 && ss.rev_long_msgs >= 4 && ss.rev_rdma_bytes > BIG);
	CHECK(cs.rev_chunk_msgs > 0 && cs.rev_long_msgs >= 4);
	CHECK_RC(cs.rev_errors + ss.rev_errors, 0);
	CHECK_RC(env_down(&e), 0);
	return 0;
}

/*
 * The same on a server listening on every address: on verbs a listen-only
 * instance hands each connection to a transport of its device, and the
 * backchannel's memory (Read and Write chunks, Long Calls and Replies both
 * ways) must be registered on that device, not on the listener's.
 */
static int case_bidir_wildcard(void)
{
	int rc;

	g_srv_addr = strchr(test_addr, ':') ? "::" : "0.0.0.0";
	rc = case_bidir_chunks();
	g_srv_addr = NULL;
	return rc;
}

/* A client that takes no chunks in the reverse direction: ERR_CHUNK
 * (RFC 8167 5.3), and inline calls still go. */
static int case_bidir_refuse_chunks(void)
{
	struct async_echo a;
	struct rpcrdma_xprt_stats cs, ss;
	struct env e;

	CHECK_RC(bidir_up(&e, true, true), 0);
	CHECK_RC(setup_call(&e, SETUP_ENABLE), 0);
	CHECK_RC(prep_echo(&a, 100, 1, 100), 0);
	a.call.ddp_buf = NULL; /* no Write chunk: a plain inline call */
	a.call.ddp_len = 0;
	a.call.max_reply = 0;
	CHECK_RC(rpcrdma_backchannel_call(g_bc, &a.call), 0);
	free(a.in.data);
	free(a.out.data);
	CHECK_RC(prep_echo(&a, 200000, 2, 200000), 0); /* Read and Write chunks */
	CHECK_RC(rpcrdma_backchannel_call(g_bc, &a.call), RPCRDMA_ERR_TRANSPORT_ERROR);
	free(a.in.data);
	free(a.out.data);
	CHECK_RC(prep_echo(&a, 10, 3, 10), 0); /* only a Write chunk */
	/* An unknown reply size keeps the Write chunk: with max_reply
	 * known, a result this small would come inline with no chunk. */
	a.call.max_reply = 0;
	CHECK_RC(rpcrdma_backchannel_call(g_bc, &a.call), RPCRDMA_ERR_TRANSPORT_ERROR);
	free(a.in.data);
	free(a.out.data);
	CHECK_RC(rpcrdma_client_stats(e.clnt, &cs), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK_RC(cs.rev_errors, 2);
	CHECK_RC(ss.rev_errors, 2);
	CHECK_RC(cs.rdma_errors_received, 0); /* the forward direction saw none */
	CHECK_RC(env_down(&e), 0);
	return 0;
}

/* RFC 8167 6: nothing goes before the upper layer enables the backchannel;
 * a client that hosts no callbacks drops what comes anyway. */
static int case_bidir_disabled(void)
{
	struct rpcrdma_xprt_stats cs, ss;
	struct rpcrdma_call call;
	struct env e;

	CHECK_RC(bidir_up(&e, true, false), 0);
	CHECK_RC(setup_call(&e, 0), 0);
	call_init(&call, CB_NULL, NULL, NULL, NULL, NULL);
	CHECK_RC(rpcrdma_backchannel_call(g_bc, &call), RPCRDMA_ERR_BACKCHANNEL_OFF);
	{
		int flag = 0;

		call.done = flag_done;
		call.ctx = &flag;
		CHECK_RC(rpcrdma_backchannel_call_async(g_bc, &call), RPCRDMA_ERR_BACKCHANNEL_OFF);
		CHECK_RC(flag, 0); /* a refused call never completes */
	}
	CHECK_RC(rpcrdma_client_stats(e.clnt, &cs), 0);
	CHECK_RC(cs.rev_calls, 0);
	CHECK_RC(rpcrdma_backchannel_enable(g_bc, true), 0);
	call_init(&call, CB_NULL, NULL, NULL, NULL, NULL);
	CHECK_RC(rpcrdma_backchannel_call(g_bc, &call), 0);
	CHECK_RC(rpcrdma_backchannel_enable(g_bc, false), 0);
	CHECK_RC(rpcrdma_backchannel_call(g_bc, &call), RPCRDMA_ERR_BACKCHANNEL_OFF);
	CHECK_RC(env_down(&e), 0);

	/* A server that enables it for a client hosting nothing: the call
	 * matches none of the client's and is dropped there (counted), and
	 * times out here. */
	g_bc_timeout_ms = 700;
	CHECK_RC(bidir_up(&e, false, false), 0);
	CHECK_RC(setup_call(&e, SETUP_ENABLE), 0);
	call_init(&call, CB_NULL, NULL, NULL, NULL, NULL);
	CHECK_RC(rpcrdma_backchannel_call(g_bc, &call), RPCRDMA_ERR_TIMEDOUT);
	CHECK_RC(rpcrdma_client_stats(e.clnt, &cs), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK_RC(cs.bad_msgs, 1);
	CHECK_RC(ss.rev_timeouts, 1);
	/* The forward direction is unharmed. */
	call_init(&call, P_NULL, NULL, NULL, NULL, NULL);
	CHECK_RC(rpcrdma_client_call(e.clnt, &call), 0);
	g_bc_timeout_ms = 0;
	/* Over TCP there is no backchannel (yet). */
	{
		struct rpcrdma_client_opts co;
		struct rpcrdma_client *tcp;

		rpcrdma_client_opts_default(&co);
		co.transport = RPCRDMA_TRANSPORT_TCP;
		CHECK_RC(rpcrdma_client_create(e.loop, test_addr, "9", PROG, VERS, &co, &tcp), 0);
		CHECK_RC(
		    rpcrdma_client_register_callback(tcp, CBPROG, 1, cb_procs, CB_NPROCS, NULL),
		    -EPROTONOSUPPORT);
		rpcrdma_client_destroy(tcp);
	}
	CHECK_RC(env_down(&e), 0);
	return 0;
}

/*
 * The connection is cut with reverse calls outstanding (the client's
 * callback holds them): they wait for the client to reconnect and the
 * upper layer to rebind, go again with the same XIDs, and complete once
 * the held originals are answered (the duplicates were parked on them).
 * Then a cut with no rebind: the reverse call times out.
 */
static int case_bidir_reconnect(void)
{
	enum { N = 4 };
	struct rpcrdma_call calls[N];
	int flags[N];
	struct rpcrdma_xprt_stats cs, ss, bs;
	struct env e;
	uint32_t xids[N];

	g_bc_timeout_ms = 15000;
	CHECK_RC(bidir_up(&e, true, false), 0);
	CHECK_RC(setup_call(&e, SETUP_ENABLE), 0);
	/* A requester assumes one credit until the first reply grants more. */
	call_init(&calls[0], CB_NULL, NULL, NULL, NULL, NULL);
	CHECK_RC(rpcrdma_backchannel_call(g_bc, &calls[0]), 0);
	for (int i = 0; i < N; i++) {
		flags[i] = 0;
		call_init(&calls[i], CB_HOLD, NULL, NULL, NULL, NULL);
		calls[i].done = flag_done;
		calls[i].ctx = &flags[i];
		CHECK_RC(rpcrdma_backchannel_call_async(g_bc, &calls[i]), 0);
		xids[i] = calls[i].xid;
	}
	while (nheld < N)
		CHECK(rpcrdma_loop_run_once(e.loop, 1000) >= 0);
	rpcrdma__client_disconnect(e.clnt);
	/* The client comes back by itself (it hosts callbacks); SETUP on the
	 * new connection rebinds. */
	for (int i = 0; i < 50; i++)
		CHECK(rpcrdma_loop_run_once(e.loop, 20) >= 0);
	CHECK_RC(setup_call(&e, SETUP_BIND), 0);
	for (int i = 0; i < 50; i++)
		CHECK(rpcrdma_loop_run_once(e.loop, 10) >= 0);
	for (int i = 0; i < N; i++)
		CHECK_RC(flags[i], 0);
	/* Answer the originals: the duplicates parked on them get it. */
	for (unsigned int i = 0; i < N; i++)
		CHECK_RC(rpcrdma_svc_reply(held[i], 0), 0);
	nheld = 0;
	/* By the clock: a turn of the loop may return at once. */
	for (uint64_t dl = rpcrdma_loop_now(e.loop) + 20000; rpcrdma_loop_now(e.loop) < dl;) {
		int done = 0;

		for (int i = 0; i < N; i++)
			done += flags[i];
		if (done == N)
			break;
		CHECK(rpcrdma_loop_run_once(e.loop, 20) >= 0);
	}
	for (int i = 0; i < N; i++) {
		CHECK_RC(flags[i], 1);
		CHECK_RC(calls[i].status, 0);
		CHECK_RC(calls[i].xid, xids[i]);
	}
	CHECK_RC(rpcrdma_backchannel_stats(g_bc, &bs), 0);
	CHECK(bs.retransmits >= N);

	/* Cut again, never rebind: the call times out. */
	flags[0] = 0;
	call_init(&calls[0], CB_HOLD, NULL, NULL, NULL, NULL);
	calls[0].done = flag_done;
	calls[0].ctx = &flags[0];
	calls[0].timeout_ms = 1500;
	CHECK_RC(rpcrdma_backchannel_call_async(g_bc, &calls[0]), 0);
	while (nheld < 1)
		CHECK(rpcrdma_loop_run_once(e.loop, 1000) >= 0);
	rpcrdma__client_disconnect(e.clnt);
	while (!flags[0])
		CHECK(rpcrdma_loop_run_once(e.loop, 1000) >= 0);
	CHECK_RC(calls[0].status, RPCRDMA_ERR_TIMEDOUT);
	CHECK_RC(rpcrdma_svc_reply(held[0], 0), 0); /* to a closed connection */
	nheld = 0;
	CHECK_RC(rpcrdma_client_stats(e.clnt, &cs), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK(cs.reconnects >= 2);
	CHECK(ss.rev_retransmits >= N && ss.rev_timeouts >= 1);
	/* The backchannel goes with the server; release one explicitly too. */
	rpcrdma_backchannel_release(g_bc);
	g_bc = NULL;
	g_bc_timeout_ms = 0;
	CHECK_RC(env_down(&e), 0);
	return 0;
}

/*
 * A connection whose backchannel has a reverse call out (the client's
 * callback holds it) has a call in progress: at max_conns a newcomer does
 * not close it for room (rpc.h), it is refused.  Before, only forward
 * calls counted, so the connection was closed as idle and the reverse
 * call had to wait for the client to come back and the upper layer to
 * rebind.
 */
static int case_bidir_evict(void)
{
	struct rpcrdma_xprt_stats cs, ss;
	struct rpcrdma_client_opts co;
	struct rpcrdma_client *x;
	struct rpcrdma_call call;
	char port[16];
	int flag = 0;
	struct env e;

	g_max_conns = 1;
	CHECK_RC(bidir_up(&e, true, false), 0);
	g_max_conns = 0;
	CHECK_RC(setup_call(&e, SETUP_ENABLE), 0);
	call_init(&call, CB_NULL, NULL, NULL, NULL, NULL);
	CHECK_RC(rpcrdma_backchannel_call(g_bc, &call), 0);
	call_init(&call, CB_HOLD, NULL, NULL, NULL, NULL);
	call.done = flag_done;
	call.ctx = &flag;
	CHECK_RC(rpcrdma_backchannel_call_async(g_bc, &call), 0);
	while (nheld < 1)
		CHECK(rpcrdma_loop_run_once(e.loop, 1000) >= 0);
	/* The only place is taken by a connection with a reverse call out. */
	snprintf(port, sizeof(port), "%d", rpcrdma_server_port(e.srv));
	rpcrdma_client_opts_default(&co);
	co.provider = test_provider;
	co.inline_send = co.inline_recv = TEST_INLINE;
	CHECK_RC(rpcrdma_client_create(e.loop, test_addr, port, PROG, VERS, &co, &x), 0);
	CHECK_RC(rpcrdma_client_connect(x), -ECONNREFUSED);
	rpcrdma_client_destroy(x);
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK_RC(ss.conns_evicted, 0);
	CHECK_RC(ss.conns_refused, 1);
	CHECK_RC(rpcrdma_client_stats(e.clnt, &cs), 0);
	CHECK_RC(cs.reconnects, 0);
	/* Answered, the reverse call completes on its connection. */
	CHECK_RC(rpcrdma_svc_reply(held[0], 0), 0);
	nheld = 0;
	while (!flag)
		CHECK(rpcrdma_loop_run_once(e.loop, 1000) >= 0);
	CHECK_RC(call.status, 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK_RC(ss.rev_retransmits, 0);
	CHECK_RC(env_down(&e), 0);
	return 0;
}

/* A server with worker loops: the backchannel belongs to the worker that
 * serves the connection, and reverse calls go from its loop. */
static int case_bidir_workers(void)
{
	struct rpcrdma_callback_opts cbo;
	struct rpcrdma_server_opts so;
	struct rpcrdma_client_opts co;
	struct rpcrdma_xprt_stats cs, ss;
	struct env e;
	char port[16];

	memset(&e, 0, sizeof(e));
	g_bc = NULL;
	g_bc_timeout_ms = 20000;
	executions = 0;
	CHECK_RC(rpcrdma_loop_create(&e.loop), 0);
	rpcrdma_server_opts_default(&so);
	so.provider = test_provider;
	so.workers = 2;
	CHECK_RC(rpcrdma_server_create(e.loop, test_addr, "0", &so, &e.srv), 0);
	CHECK_RC(rpcrdma_server_register(e.srv, PROG, VERS, procs, P_NPROCS), 0);
	snprintf(port, sizeof(port), "%d", rpcrdma_server_port(e.srv));
	rpcrdma_client_opts_default(&co);
	co.provider = test_provider;
	CHECK_RC(rpcrdma_client_create(e.loop, test_addr, port, PROG, VERS, &co, &e.clnt), 0);
	rpcrdma_callback_opts_default(&cbo);
	CHECK_RC(rpcrdma_client_register_callback(e.clnt, CBPROG, 1, cb_procs, CB_NPROCS, &cbo), 0);
	CHECK_RC(setup_call(&e, SETUP_ENABLE | SETUP_PING), 0);
	for (int i = 0; i < 500 && g_ping_status == 1; i++)
		CHECK(rpcrdma_loop_run_once(e.loop, 10) >= 0);
	CHECK_RC(g_ping_status, 0);
	CHECK_RC(executions, 1); /* CB_NULL, on the client */
	CHECK_RC(rpcrdma_client_stats(e.clnt, &cs), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK_RC(cs.rev_calls, 1);
	CHECK_RC(ss.rev_calls, 1);
	CHECK_RC(ss.rev_replies, 1);
	g_bc = NULL; /* the worker's: it goes with the server */
	g_bc_timeout_ms = 0;
	CHECK_RC(env_down(&e), 0);
	return 0;
}

/* A longer run at full credits both ways, every form mixed in: the
 * counters of a loaded connection.  Every call is started at once, so the
 * last ones wait behind all the others for a credit: their time-out is
 * that of the whole run, which on an emulated guest (the lab, under TCG,
 * with other work on the machine) takes tens of seconds. */
#define LOAD_TIMEOUT_MS 100000
static int case_bidir_load(void)
{
	enum { NF = 400, NR = 200 };
	struct async_echo *f = calloc(NF, sizeof(*f)), *r = calloc(NR, sizeof(*r));
	struct rpcrdma_xprt_stats cs, ss, bs;
	struct env e;

	CHECK(f && r);
	CHECK_RC(bidir_up(&e, true, false), 0);
	CHECK_RC(setup_call(&e, SETUP_ENABLE), 0);
	for (int i = 0; i < NF || i < NR; i++) {
		uint32_t len = (uint32_t)(i * 7919) % 70000;

		if (i < NF) {
			CHECK_RC(prep_echo(&f[i], len, (uint32_t)i, 70000), 0);
			f[i].call.timeout_ms = LOAD_TIMEOUT_MS;
			CHECK_RC(rpcrdma_client_call_async(e.clnt, &f[i].call), 0);
		}
		if (i < NR) {
			CHECK_RC(prep_echo(&r[i], len / 2, (uint32_t)i + 9000, 70000), 0);
			r[i].call.timeout_ms = LOAD_TIMEOUT_MS;
			CHECK_RC(rpcrdma_backchannel_call_async(g_bc, &r[i].call), 0);
		}
	}
	CHECK_RC(pump_until(&e, f, NF), 0);
	CHECK_RC(pump_until(&e, r, NR), 0);
	/* The counters first, so that a failed run says where calls stuck. */
	CHECK_RC(rpcrdma_client_stats(e.clnt, &cs), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK_RC(rpcrdma_backchannel_stats(g_bc, &bs), 0);
	fprintf(stderr, "load client:");
#define SHOW(name) fprintf(stderr, " %s=%llu", #name, (unsigned long long)cs.name);
	RPCRDMA_XPRT_STATS(SHOW)
#undef SHOW
	fprintf(stderr, "\nload server:");
#define SHOW(name) fprintf(stderr, " %s=%llu", #name, (unsigned long long)ss.name);
	RPCRDMA_XPRT_STATS(SHOW)
#undef SHOW
	fprintf(stderr, "\nload backchannel:");
#define SHOW(name) fprintf(stderr, " %s=%llu", #name, (unsigned long long)bs.name);
	RPCRDMA_XPRT_STATS(SHOW)
#undef SHOW
	fprintf(stderr, "\n");
	for (int i = 0; i < NF; i++)
		if (f[i].call.status)
			fprintf(stderr, "forward call %d (xid %08x): %d\n", i, f[i].call.xid,
				f[i].call.status);
	for (int i = 0; i < NR; i++)
		if (r[i].call.status)
			fprintf(stderr, "reverse call %d (xid %08x): %d\n", i, r[i].call.xid,
				r[i].call.status);
	for (int i = 0; i < NF; i++)
		CHECK_RC(f[i].call.status, 0);
	for (int i = 0; i < NR; i++)
		CHECK_RC(r[i].call.status, 0);
	CHECK_RC(cs.credits_in_use_max, FWD_CREDITS);
	CHECK_RC(ss.rev_credits_in_use_max, CB_CREDITS);
	CHECK_RC(cs.rev_calls, NR);
	CHECK_RC(ss.rev_replies, NR);
	CHECK_RC(cs.bad_msgs + cs.rev_bad_msgs + cs.rev_dropped, 0);
	CHECK_RC(ss.bad_msgs + ss.rev_bad_msgs + ss.rev_dropped, 0);
	CHECK_RC(env_down(&e), 0);
	free_echoes(f, NF);
	free_echoes(r, NR);
	return 0;
}

/*
 * The server goes while reverse calls are out: the client defers its
 * CB_HOLDs, and the server is destroyed, from the main loop or from
 * inside a reverse call's completion (which no server procedure is on
 * the stack of).  Each reverse call completes once, RPCRDMA_ERR_CANCELLED;
 * the client answers its deferred callbacks after the connection went,
 * and everything goes cleanly.
 */
#define TD_REV_HOLDS 3

static struct rpcrdma_server *g_doomed_srv;
static int g_rev_done[TD_REV_HOLDS + 1];
static int g_rev_status[TD_REV_HOLDS + 1];

static void rev_done(struct rpcrdma_call *call, void *ctx)
{
	int i = (int)(intptr_t)ctx;

	g_rev_done[i]++;
	g_rev_status[i] = call->status;
}

static void rev_done_destroy(struct rpcrdma_call *call, void *ctx)
{
	rev_done(call, ctx);
	if (g_doomed_srv) {
		struct rpcrdma_server *s = g_doomed_srv;

		g_doomed_srv = NULL;
		rpcrdma_server_destroy(s);
	}
}

static int bidir_destroy_out(bool from_done)
{
	struct rpcrdma_call calls[TD_REV_HOLDS + 1];
	uint64_t dl;
	struct env e;

	CHECK_RC(bidir_up(&e, true, false), 0);
	CHECK_RC(setup_call(&e, SETUP_ENABLE), 0);
	/* The reverse requester has one credit until a reply grants more. */
	call_init(&calls[0], CB_NULL, NULL, NULL, NULL, NULL);
	CHECK_RC(rpcrdma_backchannel_call(g_bc, &calls[0]), 0);
	memset(g_rev_done, 0, sizeof(g_rev_done));
	for (int i = 0; i < TD_REV_HOLDS; i++) {
		call_init(&calls[i], CB_HOLD, NULL, NULL, NULL, NULL);
		calls[i].done = rev_done;
		calls[i].ctx = (void *)(intptr_t)i;
		CHECK_RC(rpcrdma_backchannel_call_async(g_bc, &calls[i]), 0);
	}
	for (dl = rpcrdma_loop_now(e.loop) + 20000; nheld < TD_REV_HOLDS;) {
		CHECK(rpcrdma_loop_now(e.loop) < dl);
		CHECK(rpcrdma_loop_run_once(e.loop, 5) >= 0);
	}
	if (from_done) {
		/* A reverse CB_NULL whose completion takes the server down. */
		g_doomed_srv = e.srv;
		call_init(&calls[TD_REV_HOLDS], CB_NULL, NULL, NULL, NULL, NULL);
		calls[TD_REV_HOLDS].done = rev_done_destroy;
		calls[TD_REV_HOLDS].ctx = (void *)(intptr_t)TD_REV_HOLDS;
		CHECK_RC(rpcrdma_backchannel_call_async(g_bc, &calls[TD_REV_HOLDS]), 0);
		for (dl = rpcrdma_loop_now(e.loop) + 20000; g_doomed_srv;) {
			CHECK(rpcrdma_loop_now(e.loop) < dl);
			CHECK(rpcrdma_loop_run_once(e.loop, 5) >= 0);
		}
		CHECK_RC(g_rev_done[TD_REV_HOLDS], 1);
		CHECK_RC(g_rev_status[TD_REV_HOLDS], 0);
	} else {
		rpcrdma_server_destroy(e.srv);
	}
	e.srv = NULL;
	g_bc = NULL;
	/* From a completion, the server (and its backchannel, whose calls
	 * complete then) goes at the loop's next iteration; else before
	 * destroy returned. */
	if (from_done)
		for (dl = rpcrdma_loop_now(e.loop) + 2000; !g_rev_done[0];) {
			CHECK(rpcrdma_loop_now(e.loop) < dl);
			CHECK(rpcrdma_loop_run_once(e.loop, 5) >= 0);
		}
	for (int i = 0; i < TD_REV_HOLDS; i++) {
		CHECK_RC(g_rev_done[i], 1);
		CHECK_RC(g_rev_status[i], RPCRDMA_ERR_CANCELLED);
	}
	/* The client answers its callbacks with no one to take the answers. */
	for (int i = 0; i < 20; i++)
		(void)rpcrdma_loop_run_once(e.loop, 5);
	for (unsigned int i = 0; i < nheld; i++)
		CHECK_RC(rpcrdma_svc_reply(held[i], 0), 0);
	nheld = 0;
	for (int i = 0; i < 20; i++)
		(void)rpcrdma_loop_run_once(e.loop, 5);
	for (int i = 0; i <= (from_done ? TD_REV_HOLDS : TD_REV_HOLDS - 1); i++)
		CHECK_RC(g_rev_done[i], 1);
	CHECK_RC(env_down(&e), 0);
	return 0;
}

static int case_bidir_destroy_out(void)
{
	return bidir_destroy_out(false);
}

static int case_bidir_destroy_in_done(void)
{
	return bidir_destroy_out(true);
}

/*
 * The server goes while one of its procedures waits, deferred, for a
 * reverse call that the client holds; the procedure's answer comes from
 * that call's completion.  The completion runs, with
 * RPCRDMA_ERR_CANCELLED, while the request is still waiting for its
 * answer, so the answer it gives is taken (before, the destroy had
 * already answered and freed the request: a use after free).  From
 * outside, or (@from_done) from the completion of another reverse call,
 * when the backchannel goes at the loop's next iteration.  The client's
 * call ends with an error, once.
 */
static void count_done(struct rpcrdma_call *call, void *ctx)
{
	(void)call;
	(*(int *)ctx)++;
}

static int bidir_destroy_awaiting(bool from_done)
{
	struct rpcrdma_call setup, ping;
	uint32_t flags = SETUP_AWAIT;
	int setup_done = 0;
	uint64_t dl;
	struct env e;

	CHECK_RC(bidir_up(&e, true, false), 0);
	CHECK_RC(setup_call(&e, SETUP_ENABLE), 0);
	/* The reverse requester has one credit until a reply grants more. */
	call_init(&ping, CB_NULL, NULL, NULL, NULL, NULL);
	CHECK_RC(rpcrdma_backchannel_call(g_bc, &ping), 0);
	nheld = 0;
	g_await_done = 0;
	g_await_reply_rc = 1;
	call_init(&setup, P_SETUP, u32_enc, &flags, NULL, NULL);
	setup.done = count_done;
	setup.ctx = &setup_done;
	CHECK_RC(rpcrdma_client_call_async(e.clnt, &setup), 0);
	for (dl = rpcrdma_loop_now(e.loop) + 20000; nheld < 1;) {
		CHECK(rpcrdma_loop_now(e.loop) < dl);
		CHECK(rpcrdma_loop_run_once(e.loop, 5) >= 0);
	}
	CHECK_RC(g_await_done, 0);
	if (from_done) {
		memset(g_rev_done, 0, sizeof(g_rev_done));
		g_doomed_srv = e.srv;
		call_init(&ping, CB_NULL, NULL, NULL, NULL, NULL);
		ping.done = rev_done_destroy;
		ping.ctx = (void *)(intptr_t)0;
		CHECK_RC(rpcrdma_backchannel_call_async(g_bc, &ping), 0);
		for (dl = rpcrdma_loop_now(e.loop) + 20000; g_doomed_srv;) {
			CHECK(rpcrdma_loop_now(e.loop) < dl);
			CHECK(rpcrdma_loop_run_once(e.loop, 5) >= 0);
		}
		CHECK_RC(g_rev_status[0], 0);
		for (dl = rpcrdma_loop_now(e.loop) + 2000; !g_await_done;) {
			CHECK(rpcrdma_loop_now(e.loop) < dl);
			CHECK(rpcrdma_loop_run_once(e.loop, 5) >= 0);
		}
	} else {
		rpcrdma_server_destroy(e.srv);
	}
	e.srv = NULL;
	g_bc = NULL;
	CHECK_RC(g_await_done, 1);
	CHECK_RC(g_await_status, RPCRDMA_ERR_CANCELLED);
	CHECK_RC(g_await_reply_rc, 0);
	/* The client's call ends, with an error: the server went. */
	for (dl = rpcrdma_loop_now(e.loop) + 30000; !setup_done;) {
		CHECK(rpcrdma_loop_now(e.loop) < dl);
		CHECK(rpcrdma_loop_run_once(e.loop, 5) >= 0);
	}
	CHECK_RC(setup_done, 1);
	CHECK(setup.status != 0);
	for (unsigned int i = 0; i < nheld; i++)
		CHECK_RC(rpcrdma_svc_reply(held[i], 0), 0);
	nheld = 0;
	for (int i = 0; i < 20; i++)
		(void)rpcrdma_loop_run_once(e.loop, 5);
	CHECK_RC(g_await_done, 1);
	CHECK_RC(env_down(&e), 0);
	return 0;
}

static int case_bidir_destroy_awaiting(void)
{
	return bidir_destroy_awaiting(false);
}

static int case_bidir_destroy_awaiting_in_done(void)
{
	return bidir_destroy_awaiting(true);
}

/*
 * The client goes while it holds the server's reverse calls deferred:
 * its callback server answers them SYSTEM_ERR on the way out, and the
 * server's reverse calls end (answered, or their connection lost) once
 * each; then the server goes.
 */
static int case_bidir_client_destroy_held(void)
{
	struct rpcrdma_call calls[TD_REV_HOLDS];
	uint64_t dl;
	struct env e;

	CHECK_RC(bidir_up(&e, true, false), 0);
	CHECK_RC(setup_call(&e, SETUP_ENABLE), 0);
	call_init(&calls[0], CB_NULL, NULL, NULL, NULL, NULL);
	CHECK_RC(rpcrdma_backchannel_call(g_bc, &calls[0]), 0);
	memset(g_rev_done, 0, sizeof(g_rev_done));
	for (int i = 0; i < TD_REV_HOLDS; i++) {
		call_init(&calls[i], CB_HOLD, NULL, NULL, NULL, NULL);
		calls[i].done = rev_done;
		calls[i].ctx = (void *)(intptr_t)i;
		calls[i].timeout_ms = 3000;
		CHECK_RC(rpcrdma_backchannel_call_async(g_bc, &calls[i]), 0);
	}
	for (dl = rpcrdma_loop_now(e.loop) + 20000; nheld < TD_REV_HOLDS;) {
		CHECK(rpcrdma_loop_now(e.loop) < dl);
		CHECK(rpcrdma_loop_run_once(e.loop, 5) >= 0);
	}
	rpcrdma_client_destroy(e.clnt);
	e.clnt = NULL;
	nheld = 0;
	for (dl = rpcrdma_loop_now(e.loop) + 20000;;) {
		int n = 0;

		for (int i = 0; i < TD_REV_HOLDS; i++)
			n += g_rev_done[i];
		if (n == TD_REV_HOLDS)
			break;
		CHECK(rpcrdma_loop_now(e.loop) < dl);
		CHECK(rpcrdma_loop_run_once(e.loop, 5) >= 0);
	}
	for (int i = 0; i < TD_REV_HOLDS; i++) {
		CHECK_RC(g_rev_done[i], 1);
		CHECK(g_rev_status[i] != 0);
	}
	g_bc = NULL;
	CHECK_RC(env_down(&e), 0);
	return 0;
}

/*
 * Worker loops: the server goes while the reverse calls a worker made are
 * held by the client.  They complete once each, on the worker, inside the
 * destroy; the client then answers its callbacks to no one.
 */
static int case_bidir_workers_destroy_out(void)
{
	struct rpcrdma_callback_opts cbo;
	struct rpcrdma_server_opts so;
	struct rpcrdma_client_opts co;
	uint64_t dl;
	struct env e;
	char port[16];

	memset(&e, 0, sizeof(e));
	g_bc = NULL;
	g_bc_timeout_ms = 20000;
	nheld = 0;
	for (int i = 0; i < HOLDS_OUT; i++)
		g_holds_done[i] = g_holds_status[i] = 0;
	CHECK_RC(rpcrdma_loop_create(&e.loop), 0);
	rpcrdma_server_opts_default(&so);
	so.provider = test_provider;
	so.workers = 2;
	CHECK_RC(rpcrdma_server_create(e.loop, test_addr, "0", &so, &e.srv), 0);
	CHECK_RC(rpcrdma_server_register(e.srv, PROG, VERS, procs, P_NPROCS), 0);
	snprintf(port, sizeof(port), "%d", rpcrdma_server_port(e.srv));
	rpcrdma_client_opts_default(&co);
	co.provider = test_provider;
	CHECK_RC(rpcrdma_client_create(e.loop, test_addr, port, PROG, VERS, &co, &e.clnt), 0);
	rpcrdma_callback_opts_default(&cbo);
	CHECK_RC(rpcrdma_client_register_callback(e.clnt, CBPROG, 1, cb_procs, CB_NPROCS, &cbo), 0);
	CHECK_RC(setup_call(&e, SETUP_ENABLE | SETUP_HOLDS), 0);
	for (dl = rpcrdma_loop_now(e.loop) + 20000; nheld < HOLDS_OUT;) {
		CHECK(rpcrdma_loop_now(e.loop) < dl);
		CHECK(rpcrdma_loop_run_once(e.loop, 5) >= 0);
	}
	rpcrdma_server_destroy(e.srv);
	e.srv = NULL;
	g_bc = NULL;
	for (int i = 0; i < HOLDS_OUT; i++) {
		CHECK_RC(g_holds_done[i], 1);
		CHECK_RC(g_holds_status[i], RPCRDMA_ERR_CANCELLED);
	}
	for (int i = 0; i < 20; i++)
		(void)rpcrdma_loop_run_once(e.loop, 5);
	for (unsigned int i = 0; i < nheld; i++)
		CHECK_RC(rpcrdma_svc_reply(held[i], 0), 0);
	nheld = 0;
	g_bc_timeout_ms = 0;
	CHECK_RC(env_down(&e), 0);
	return 0;
}
