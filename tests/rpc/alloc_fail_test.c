/*
 * Allocation failures, one at a time, on every allocation the library
 * makes while a client and a server exchange calls: the n-th allocation
 * from the library's own code fails, for n = 1, 2, ... until the workload
 * runs without reaching it.  Each round checks that nothing crashed or
 * hung, that every call completed (with a result or an error), that the
 * client serves calls again once memory is back, and that teardown gives
 * back every descriptor and every byte.
 *
 * malloc, calloc, posix_memalign and aligned_alloc fail; realloc, which
 * the library's own memory hooks replace (memhooks.c), does not.
 * Only allocations whose caller is in this executable fail (the library is
 * linked in statically), so libfabric's and libc's own allocations, whose
 * failure handling is not ours to test, go through.  The interposer
 * replaces malloc, so the program is not built with a sanitizer (which
 * owns malloc); the valgrind and ASan runs of the other suites cover
 * leaks on the paths that do not fail.
 */
#include <dirent.h>
#include <errno.h>
#include <execinfo.h>
#include <malloc.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpcrdma/backchannel.h"
#include "suite.h"

#define SKIP_EXIT 77
#define ROUNDS_MAX 4000 /* a workload needs far fewer allocations */
#define ASYNC_ADDS 8
#define WORKERS_SLACK (64u << 10)
/* One inline (on ofi), one through chunks: a Read chunk for the call and
 * a Write chunk for the reply over RDMA. */
static const uint32_t echo_bytes[] = {64u << 10, 256u << 10};
#define ECHOS (sizeof(echo_bytes) / sizeof(echo_bytes[0]))

/* ------------------------------------------------------------ interposer */

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_memalign(size_t align, size_t n);
extern char __executable_start, etext;

static _Atomic long countdown; /* > 0: armed; the allocation taking it to 0 fails */
static _Atomic long failed;    /* allocations failed so far */
static bool trace_failures;    /* ALLOC_FAIL_TRACE set: a backtrace for each */

static bool fail_this(const void *caller)
{
	const char *c = caller;

	if (atomic_load_explicit(&countdown, memory_order_relaxed) <= 0)
		return false;
	if (c < &__executable_start || c >= &etext)
		return false;
	if (atomic_fetch_sub(&countdown, 1) != 1)
		return false;
	failed++;
	if (trace_failures) {
		/* Where it failed, without allocating: addr2line reads it. */
		void *bt[16];

		backtrace_symbols_fd(bt, backtrace(bt, 16), 2);
	}
	errno = ENOMEM;
	return true;
}

void *malloc(size_t n)
{
	return fail_this(__builtin_return_address(0)) ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	return fail_this(__builtin_return_address(0)) ? NULL : __libc_calloc(n, size);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (fail_this(__builtin_return_address(0)))
		return ENOMEM;
	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
	return fail_this(__builtin_return_address(0)) ? NULL : __libc_memalign(align, n);
}

/* ------------------------------------------------------------ workload */

struct pending {
	struct rpcrdma_call call;
	struct add_args args;
	int32_t sum;
	bool done;
	int *left;
};

struct echo_call {
	struct rpcrdma_call call;
	struct echo *args, *res;
	bool done;
	int *left;
};

static void pending_done(struct rpcrdma_call *call, void *ctx)
{
	struct pending *p = ctx;

	/* Either the right answer or an error: never a wrong result, nor
	 * silence until the time-out. */
	CHECK(call->status != RPCRDMA_ERR_TIMEDOUT);
	if (call->status == 0)
		CHECK_EQ(p->sum, p->args.a + p->args.b);
	CHECK(!p->done);
	p->done = true;
	(*p->left)--;
}

static void echo_done(struct rpcrdma_call *call, void *ctx)
{
	struct echo_call *e = ctx;

	CHECK(call->status != RPCRDMA_ERR_TIMEDOUT);
	if (call->status == 0) {
		CHECK_EQ(e->res->len, e->args->len);
		CHECK(memcmp(e->res->data, e->args->data, e->args->len) == 0);
	}
	CHECK(!e->done);
	e->done = true;
	(*e->left)--;
}

static unsigned int open_fds(void)
{
	unsigned int n = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	CHECK(d != NULL);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own */
}

struct round_result {
	bool reached;     /* the armed allocation was reached and failed */
	int call_errors;  /* calls that completed with an error */
	bool setup_error; /* the failure hit a client or server being set up */
};

static struct echo *echo_in[ECHOS], *echo_out[ECHOS];
static unsigned int workers;  /* --workers N: the server's worker loops */
static unsigned int nconnect; /* --nconnect N: the client's connections */
static uint32_t max_vers;     /* --v2: the client offers Version Two */
static bool bidir;            /* --bidir: calls that make a reverse call */

/* ------------------------------------------------------------ backchannel */

/*
 * --bidir: the server serves the test program's procedures, and one more,
 * P_CALL_BACK, under BIDIR_PROG; it answers once a reverse call to the
 * client's CB_PROG has come back with its argument plus one.
 */
#define BIDIR_PROG 0x20000097u
#define CB_PROG 0x20000096u
#define P_CALL_BACK P_NPROCS
#define CB_INC 1u
#define BIDIR_CALLS 2

static struct rpcrdma_svc_proc bidir_procs[P_NPROCS + 1];

struct reverse {
	struct rpcrdma_call call;
	struct rpcrdma_svc_req *req;
	int32_t *res;
	uint32_t x;
	int32_t y;
};

static void reverse_done(struct rpcrdma_call *call, void *ctx)
{
	struct reverse *r = ctx;

	if (call->status == 0)
		CHECK_EQ(r->y, (int32_t)r->x + 1);
	*r->res = call->status == 0 ? r->y : -1;
	CHECK_EQ(rpcrdma_svc_reply(r->req, call->status == 0 ? 0 : -RPCRDMA_RPC_SYSTEM_ERR), 0);
	free(r);
}

static int proc_call_back(struct rpcrdma_svc_req *req, void *args, void *res)
{
	const struct rpcrdma_backchannel_opts o = {.prog = CB_PROG, .vers = 1, .timeout_ms = 1000};
	struct rpcrdma_backchannel *bc;
	struct reverse *r;

	if (rpcrdma_svc_backchannel(req, &o, &bc) || rpcrdma_backchannel_enable(bc, true))
		return -RPCRDMA_RPC_SYSTEM_ERR;
	r = __libc_calloc(1, sizeof(*r)); /* the test's own: never failed */
	CHECK(r != NULL);
	r->req = req;
	r->res = res;
	r->x = *(uint32_t *)args;
	call_init(&r->call, CB_INC, xdr_u32_enc, &r->x, xdr_i32_dec, &r->y);
	r->call.done = reverse_done;
	r->call.ctx = r;
	if (rpcrdma_backchannel_call_async(bc, &r->call)) {
		free(r);
		return -RPCRDMA_RPC_SYSTEM_ERR;
	}
	return RPCRDMA_SVC_DEFERRED;
}

static int proc_cb_inc(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	*(int32_t *)res = (int32_t)(*(uint32_t *)args + 1);
	return 0;
}

static const struct rpcrdma_svc_proc cb_procs[] = {
    [CB_INC] = {proc_cb_inc, xdr_u32_dec, sizeof(uint32_t), xdr_i32_enc, sizeof(int32_t), NULL},
};

static void bidir_procs_init(void)
{
	memcpy(bidir_procs, procs, sizeof(procs));
	bidir_procs[P_CALL_BACK] = (struct rpcrdma_svc_proc){
	    proc_call_back, xdr_u32_dec, sizeof(uint32_t), xdr_i32_enc, sizeof(int32_t), NULL};
}

struct bidir_call {
	struct rpcrdma_call call;
	uint32_t x;
	int32_t y;
	bool done;
	int *left;
};

static void bidir_done(struct rpcrdma_call *call, void *ctx)
{
	struct bidir_call *b = ctx;

	CHECK(call->status != RPCRDMA_ERR_TIMEDOUT);
	if (call->status == 0)
		CHECK_EQ(b->y, (int32_t)b->x + 1);
	CHECK(!b->done);
	b->done = true;
	(*b->left)--;
}

/*
 * One round: a client and a server on @loop; the @n-th allocation of the
 * library fails once they exchange calls (@n 0: none fails).
 */
static struct round_result run_round(long n)
{
	struct round_result rr = {0};
	struct pending adds[ASYNC_ADDS];
	struct echo_call echo[ECHOS];
	struct bidir_call back[BIDIR_CALLS];
	struct rpcrdma_client_opts co;
	struct rpcrdma_call call;
	struct env e;
	int left = 0, sum = 0, rc;
	uint64_t deadline;

	memset(&e, 0, sizeof(e));
	CHECK_EQ(rpcrdma_loop_create(&e.loop), 0);
	if (workers) {
		struct rpcrdma_server_opts so;

		rpcrdma_server_opts_default(&so);
		so.transport = transport;
		so.workers = workers;
		CHECK_EQ(rpcrdma_server_create(e.loop, "127.0.0.1", "0", &so, &e.srv), 0);
		CHECK_EQ(rpcrdma_server_register(e.srv, TEST_PROG, 1, procs, P_NPROCS), 0);
		if (bidir)
			CHECK_EQ(rpcrdma_server_register(e.srv, BIDIR_PROG, 1, bidir_procs,
							 P_NPROCS + 1),
				 0);
		snprintf(e.port, sizeof(e.port), "%d", rpcrdma_server_port(e.srv));
		memset(&svc, 0, sizeof(svc));
		svc.loop = e.loop;
	} else {
		e.srv = server_on(e.loop, 0, e.port);
		if (bidir)
			CHECK_EQ(rpcrdma_server_register(e.srv, BIDIR_PROG, 1, bidir_procs,
							 P_NPROCS + 1),
				 0);
	}
	rpcrdma_client_opts_default(&co);
	co.timeout_ms = 5000; /* a call lost with its connection is sent again */
	co.nconnect = nconnect;
	co.max_vers = max_vers;
	e.clnt = client_for(e.loop, e.port, bidir ? BIDIR_PROG : TEST_PROG, 1, &co);
	if (bidir)
		CHECK_EQ(rpcrdma_client_register_callback(e.clnt, CB_PROG, 1, cb_procs,
							  sizeof(cb_procs) / sizeof(cb_procs[0]), NULL),
			 0);

	atomic_store(&countdown, n);
	/* Connecting, and the first calls, with the failure armed. */
	for (int i = 0; i < ASYNC_ADDS; i++) {
		struct pending *p = &adds[i];

		memset(p, 0, sizeof(*p));
		p->args.a = i * 1000;
		p->args.b = i;
		p->left = &left;
		call_init(&p->call, P_ADD, xdr_add_enc, &p->args, xdr_i32_dec, &p->sum);
		p->call.done = pending_done;
		p->call.ctx = p;
		if (rpcrdma_client_call_async(e.clnt, &p->call) == 0)
			left++;
		else
			rr.call_errors++;
	}
	for (size_t i = 0; i < ECHOS; i++) {
		struct echo_call *ec = &echo[i];

		memset(ec, 0, sizeof(*ec));
		ec->args = echo_in[i];
		ec->res = echo_out[i];
		ec->left = &left;
		ec->res->len = 0;
		call_init(&ec->call, P_ECHO, xdr_echo_enc, ec->args, xdr_echo_dec, ec->res);
		echo_offer_ddp(&ec->call, ec->res);
		ec->call.done = echo_done;
		ec->call.ctx = ec;
		if (rpcrdma_client_call_async(e.clnt, &ec->call) == 0)
			left++;
		else
			rr.call_errors++;
	}

	for (int i = 0; bidir && i < BIDIR_CALLS; i++) {
		struct bidir_call *b = &back[i];

		memset(b, 0, sizeof(*b));
		b->x = 100u + (uint32_t)i;
		b->left = &left;
		call_init(&b->call, P_CALL_BACK, xdr_u32_enc, &b->x, xdr_i32_dec, &b->y);
		b->call.done = bidir_done;
		b->call.ctx = b;
		if (rpcrdma_client_call_async(e.clnt, &b->call) == 0)
			left++;
		else
			rr.call_errors++;
	}

	deadline = rpcrdma_loop_now(e.loop) + 60000;
	while (left > 0) {
		CHECK(rpcrdma_loop_run_once(e.loop, 100) >= 0);
		CHECK(rpcrdma_loop_now(e.loop) < deadline);
	}
	for (int i = 0; i < ASYNC_ADDS; i++)
		rr.call_errors += adds[i].done && adds[i].call.status != 0;
	for (size_t i = 0; i < ECHOS; i++)
		rr.call_errors += echo[i].done && echo[i].call.status != 0;
	for (int i = 0; bidir && i < BIDIR_CALLS; i++)
		rr.call_errors += back[i].done && back[i].call.status != 0;

	rr.reached = atomic_load(&countdown) <= 0;
	atomic_store(&countdown, 0);

	/* Memory is back: the same client serves calls again. */
	call_init(&call, P_ADD, xdr_add_enc, &(struct add_args){20, 22}, xdr_i32_dec, &sum);
	call.timeout_ms = 20000;
	rc = rpcrdma_client_call(e.clnt, &call);
	if (rc)
		fprintf(stderr, "round %ld: after the failure, a call fails: %s (%d)\n", n,
			rpcrdma_strerror(rc), rc);
	CHECK_EQ(rc, 0);
	CHECK_EQ(sum, 42);
	env_down(&e);
	return rr;
}

static void sweep(void)
{
	unsigned int fds_before;
	size_t bytes_before;
	long rounds = 0, with_errors = 0;
	/* ALLOC_FAIL_ROUND=n: only round n (with ALLOC_FAIL_TRACE, to see
	 * where its allocation failed). */
	long only = getenv("ALLOC_FAIL_ROUND") ? atol(getenv("ALLOC_FAIL_ROUND")) : 0;

	for (size_t k = 0; k < ECHOS; k++) {
		echo_in[k] = __libc_calloc(1, sizeof(*echo_in[k]));
		echo_out[k] = __libc_calloc(1, sizeof(*echo_out[k]));
		CHECK(echo_in[k] && echo_out[k]);
		echo_in[k]->len = echo_bytes[k];
		for (uint32_t i = 0; i < echo_bytes[k]; i++)
			echo_in[k]->data[i] = (uint8_t)(i * 7u + k + 3u);
	}
	/* Warm-up: what the first round allocates once per process (libfabric's
	 * initialisation, stdio) is not a leak. */
	(void)run_round(0);
	(void)run_round(0);
	fds_before = open_fds();
	bytes_before = mallinfo2().uordblks;

	for (long n = 1; n <= ROUNDS_MAX; n++) {
		struct round_result rr;
		size_t bytes;

		if (only && n != only)
			continue;
		alarm(120);
		rr = run_round(n);
		alarm(0);
		rounds++;
		with_errors += rr.call_errors > 0;
		if (open_fds() != fds_before) {
			fprintf(stderr, "round %ld: %u descriptors open after teardown, %u before\n", n,
				open_fds(), fds_before);
			system("ls -l /proc/$PPID/fd >&2");
			CHECK_EQ(open_fds(), fds_before);
		}
		bytes = mallinfo2().uordblks;
		/* With worker threads, what each one's first use of a loaded
		 * library's thread-local storage allocates varies from round to
		 * round; leaks add up over the rounds, beyond this slack. */
		if (workers ? bytes > bytes_before + WORKERS_SLACK : bytes != bytes_before) {
			fprintf(stderr, "round %ld: %zu bytes in use after teardown, %zu before\n", n,
				bytes, bytes_before);
			CHECK_EQ(bytes, bytes_before);
		}
		if (!rr.reached || only)
			break;
		CHECK(n < ROUNDS_MAX);
	}
	printf("# %s, %u worker(s), nconnect %u, version %u%s: %ld rounds, each failing one more of the library's allocations; "
	       "%ld failed, %ld rounds saw a call fail\n",
	       transport == RPCRDMA_TRANSPORT_TCP ? "tcp" : "rdma", workers, nconnect, max_vers ? max_vers : 1, bidir ? ", reverse calls" : "", rounds, (long)failed,
	       with_errors);
	CHECK(only || rounds > 10); /* the workload does allocate: the sweep did sweep */
	for (size_t k = 0; k < ECHOS; k++) {
		free(echo_in[k]);
		free(echo_out[k]);
	}
}

int main(int argc, char **argv)
{
	/* Blocks in glibc's per-thread cache count as in use in mallinfo2():
	 * without it, the bytes in use after a teardown are exact. */
	if (!getenv("GLIBC_TUNABLES")) {
		setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0", 1);
		execv("/proc/self/exe", argv);
		perror("re-executing without glibc's thread cache");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	trace_failures = getenv("ALLOC_FAIL_TRACE") != NULL;
	{
		/* backtrace() loads libgcc on first use: not while failing. */
		void *bt[1];

		(void)backtrace(bt, 1);
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--transport") == 0 && i + 1 < argc) {
			if (!transport_from_arg(argv[++i])) {
				fprintf(stderr, "unknown transport %s\n", argv[i]);
				return 2;
			}
		} else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc) {
			workers = (unsigned int)atoi(argv[++i]);
		} else if (strcmp(argv[i], "--nconnect") == 0 && i + 1 < argc) {
			nconnect = (unsigned int)atoi(argv[++i]);
		} else if (strcmp(argv[i], "--v2") == 0) {
			max_vers = 2;
		} else if (strcmp(argv[i], "--bidir") == 0) {
			bidir = true;
		} else {
			fprintf(stderr, "unknown option %s\n", argv[i]);
			return 2;
		}
	}
	/* The interposer must be the allocator this program uses. */
	atomic_store(&countdown, 1);
	{
		void *volatile p = malloc(16);

		atomic_store(&countdown, 0);
		if (p) {
			free(p);
			printf("# malloc is not interposed here (valgrind?): skipped\n");
			return SKIP_EXIT;
		}
	}
	bidir_procs_init();
	failed = 0;
	sweep();
	printf("# %d checks passed\n", (int)checks);
	return 0;
}
