/*
 * The "tirpc" baseline: the same program served and called by libtirpc
 * over TCP, the ONC RPC most Linux programs use.
 *
 * Server: a listening socket bound to the benchmark's address, handed to
 * svctcp_create() and registered without rpcbind; a thread runs the
 * dispatch loop (svc_run()'s own poll-and-dispatch, with a stop flag so
 * the thread can be ended).  libtirpc's server is one global per process,
 * which is why there is only one.
 *
 * Client: libtirpc clients are synchronous (one call at a time per CLIENT),
 * so "depth" calls in flight means depth threads, each with its own CLIENT
 * and TCP connection, the way such programs get concurrency.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "bench.h"

/* libtirpc's XDR routines take a variadic-looking xdrproc_t; going through
 * a generic function pointer first keeps the cast explicit. */
#define XDRPROC(fn) ((xdrproc_t)(void (*)(void))(fn))

struct tbytes {
	u_int len;
	char *data;
};

static bool_t xdr_tbytes(XDR *x, struct tbytes *b)
{
	return xdr_bytes(x, &b->data, &b->len, BENCH_MAX_SIZE);
}

/*
 * Server.
 */
static struct {
	pthread_t tid;
	SVCXPRT *xprt;
	char *source; /* BENCH_SERVER_BUFS, in turn */
	char *scratch;
	unsigned int next_source;
	atomic_bool stop;
	bool running;
	int sys_fd; /* the serving thread's syscall counter, or -1 */
} tsrv = {.sys_fd = -1};

static void dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	struct tbytes in = {0, tsrv.scratch}, out;
	u_int want = 0;
	uint64_t cpu, syscalls;

	switch (rq->rq_proc) {
	case BENCH_NULL:
		svc_sendreply(xprt, XDRPROC(xdr_void), NULL);
		return;
	case BENCH_ECHO:
	case BENCH_WRITE:
	case BENCH_SUM:
		/* One dispatch thread: the scratch buffer is never shared. */
		if (!svc_getargs(xprt, XDRPROC(xdr_tbytes), (char *)&in)) {
			svcerr_decode(xprt);
			return;
		}
		if (rq->rq_proc == BENCH_ECHO)
			svc_sendreply(xprt, XDRPROC(xdr_tbytes), (char *)&in);
		else
			svc_sendreply(xprt, XDRPROC(xdr_u_int), (char *)&in.len);
		return;
	case BENCH_READ:
	case BENCH_LIST:
		if (!svc_getargs(xprt, XDRPROC(xdr_u_int), (char *)&want) ||
		    want > BENCH_MAX_SIZE) {
			svcerr_decode(xprt);
			return;
		}
		out.len = want;
		out.data =
		    tsrv.source + (size_t)(tsrv.next_source++ % BENCH_SERVER_BUFS) * BENCH_MAX_SIZE;
		svc_sendreply(xprt, XDRPROC(xdr_tbytes), (char *)&out);
		return;
	case BENCH_CPU:
		cpu = (uint64_t)(bench_server_cpu() * 1e6);
		svc_sendreply(xprt, XDRPROC(xdr_u_int64_t), (char *)&cpu);
		return;
	case BENCH_WORK:
		/* Only the system calls: libtirpc has no provider counters. */
		syscalls = tsrv.sys_fd >= 0 ? bench_syscount_read(tsrv.sys_fd) : UINT64_MAX;
		svc_sendreply(xprt, XDRPROC(xdr_u_int64_t), (char *)&syscalls);
		return;
	case BENCH_STOP:
		atomic_store(&bench_stop_requested, true);
		svc_sendreply(xprt, XDRPROC(xdr_void), NULL);
		return;
	default:
		svcerr_noproc(xprt);
		return;
	}
}

static void *tirpc_server_thread(void *arg)
{
	struct pollfd *fds = NULL;
	int cap = 0;

	(void)arg;
	/* Counted like the other stacks' serving threads, which pay the
	 * counter's cost on every system call too. */
	tsrv.sys_fd = bench_syscount_open();
	while (!atomic_load(&tsrv.stop)) {
		int n = svc_max_pollfd;

		/*
		 * Dispatching accepts connections and closes them, which
		 * reallocates svc_pollfd: poll a copy, as svc_run() does.
		 * Only this thread touches libtirpc's server state.
		 */
		if (n > cap) {
			struct pollfd *nf = realloc(fds, (size_t)n * sizeof(*fds));

			if (!nf)
				break;
			fds = nf;
			cap = n;
		}
		memcpy(fds, svc_pollfd, (size_t)n * sizeof(*fds));
		n = poll(fds, (nfds_t)n, 100);
		if (n > 0)
			svc_getreq_poll(fds, n);
		else if (n < 0 && errno != EINTR)
			break;
	}
	free(fds);
	if (tsrv.sys_fd >= 0)
		close(tsrv.sys_fd);
	tsrv.sys_fd = -1;
	return NULL;
}

int bench_tirpc_server_start(const struct bench_config *cfg, int port, int *bound_port)
{
	struct addrinfo hints, *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char svc[16];
	int fd, one = 1;

	tsrv.source = bench_alloc((size_t)BENCH_SERVER_BUFS * BENCH_MAX_SIZE);
	tsrv.scratch = bench_alloc(BENCH_MAX_SIZE);
	if (!tsrv.source || !tsrv.scratch)
		return -ENOMEM;
	bench_fill((uint8_t *)tsrv.source, (size_t)BENCH_SERVER_BUFS * BENCH_MAX_SIZE);
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(svc, sizeof(svc), "%d", port);
	if (getaddrinfo(cfg->host, svc, &hints, &ai) || !ai)
		return -EHOSTUNREACH;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 256) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len)) {
		int rc = -errno;

		freeaddrinfo(ai);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	freeaddrinfo(ai);
	*bound_port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	/* 0, 0: libtirpc's default buffer sizes, as its users get them. */
	tsrv.xprt = svctcp_create(fd, 0, 0);
	if (!tsrv.xprt) {
		close(fd);
		return -EIO;
	}
	/* Protocol 0: not registered with rpcbind. */
	if (!svc_register(tsrv.xprt, BENCH_PROG, BENCH_VERS, dispatch, 0))
		return -EIO;
	atomic_store(&tsrv.stop, false);
	if (pthread_create(&tsrv.tid, NULL, tirpc_server_thread, NULL))
		return -EAGAIN;
	tsrv.running = true;
	return 0;
}

void bench_tirpc_server_stop(void)
{
	if (tsrv.running) {
		atomic_store(&tsrv.stop, true);
		pthread_join(tsrv.tid, NULL);
		tsrv.running = false;
		svc_unregister(BENCH_PROG, BENCH_VERS);
		svc_destroy(tsrv.xprt);
	}
	free(tsrv.source);
	free(tsrv.scratch);
	tsrv.source = tsrv.scratch = NULL;
}

/*
 * Client: one CLIENT per thread.
 */
struct tthread {
	CLIENT *clnt;
	char *buf, *back;
	int sock;
};

static const struct timeval call_timeout = {30, 0};

static int tirpc_connect(const struct bench_config *cfg, CLIENT **out, int *sockp)
{
	struct addrinfo hints, *ai = NULL;
	struct sockaddr_in sin;
	char svc[16];

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET; /* clnttcp_create speaks IPv4 */
	hints.ai_flags = AI_NUMERICSERV;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(svc, sizeof(svc), "%d", bench_ports.port[STACK_TIRPC]);
	if (getaddrinfo(cfg->host, svc, &hints, &ai) || !ai)
		return -EHOSTUNREACH;
	memcpy(&sin, ai->ai_addr, sizeof(sin));
	freeaddrinfo(ai);
	*sockp = RPC_ANYSOCK;
	*out = clnttcp_create(&sin, BENCH_PROG, BENCH_VERS, sockp, 0, 0);
	if (!*out) {
		clnt_pcreateerror("rpcrdma-bench: tirpc");
		return -ECONNREFUSED;
	}
	return 0;
}

static int tirpc_setup(struct bench_thread *t)
{
	struct tthread *tt = calloc(1, sizeof(*tt));
	int rc;

	if (!tt)
		return -ENOMEM;
	t->stack = tt;
	tt->buf = bench_alloc(t->p->size);
	tt->back = bench_alloc(t->p->size);
	if (!tt->buf || !tt->back)
		return -ENOMEM;
	bench_fill((uint8_t *)tt->buf, t->p->size);
	rc = tirpc_connect(t->cfg, &tt->clnt, &tt->sock);
	if (rc)
		return rc;
	return clnt_call(tt->clnt, BENCH_NULL, XDRPROC(xdr_void), NULL, XDRPROC(xdr_void), NULL,
			 call_timeout) == RPC_SUCCESS
		   ? 0
		   : -EIO;
}

static enum clnt_stat one_call(struct tthread *tt, const struct bench_params *p)
{
	struct tbytes out = {p->size, tt->buf}, back = {0, tt->back};
	u_int want = p->size, got = 0;

	switch (p->wl) {
	case WL_LAT:
	case WL_RATE:
		if (!p->size)
			return clnt_call(tt->clnt, BENCH_NULL, XDRPROC(xdr_void), NULL,
					 XDRPROC(xdr_void), NULL, call_timeout);
		return clnt_call(tt->clnt, BENCH_ECHO, XDRPROC(xdr_tbytes), (char *)&out,
				 XDRPROC(xdr_tbytes), (char *)&back, call_timeout);
	case WL_READ:
	case WL_LONGREPLY:
		return clnt_call(tt->clnt, p->wl == WL_READ ? BENCH_READ : BENCH_LIST,
				 XDRPROC(xdr_u_int), (char *)&want, XDRPROC(xdr_tbytes),
				 (char *)&back, call_timeout);
	case WL_WRITE:
	case WL_LONGCALL:
		return clnt_call(tt->clnt, p->wl == WL_WRITE ? BENCH_WRITE : BENCH_SUM,
				 XDRPROC(xdr_tbytes), (char *)&out, XDRPROC(xdr_u_int),
				 (char *)&got, call_timeout);
	default:
		return RPC_PROCUNAVAIL;
	}
}

static int tirpc_run(struct bench_thread *t, double deadline, uint64_t max_calls, bool record)
{
	struct tthread *tt = t->stack;
	uint64_t issued = 0;

	while (bench_now() < deadline && (!max_calls || issued < max_calls)) {
		double t0 = bench_now();
		enum clnt_stat st = one_call(tt, t->p);

		issued++;
		if (st != RPC_SUCCESS) {
			fprintf(stderr, "rpcrdma-bench: tirpc: %s\n", clnt_sperrno(st));
			return -EIO;
		}
		t->calls++;
		if (record && t->lat_us) {
			if (t->lat_n >= t->lat_cap)
				break;
			t->lat_us[t->lat_n++] = (bench_now() - t0) * 1e6;
		}
	}
	return 0;
}

static int tirpc_server_cpu(struct bench_thread *t, double *cpu_s)
{
	struct tthread *tt = t->stack;
	uint64_t us = 0;

	if (clnt_call(tt->clnt, BENCH_CPU, XDRPROC(xdr_void), NULL, XDRPROC(xdr_u_int64_t),
		      (char *)&us, call_timeout) != RPC_SUCCESS)
		return -EIO;
	*cpu_s = (double)us / 1e6;
	return 0;
}

static int tirpc_server_work(struct bench_thread *t, struct bench_work *w)
{
	struct tthread *tt = t->stack;
	uint64_t syscalls = UINT64_MAX;

	memset(w, 0, sizeof(*w));
	if (clnt_call(tt->clnt, BENCH_WORK, XDRPROC(xdr_void), NULL, XDRPROC(xdr_u_int64_t),
		      (char *)&syscalls, call_timeout) != RPC_SUCCESS)
		return -EIO;
	if (syscalls != UINT64_MAX) {
		w->v[BW_syscalls] = syscalls;
		w->sys_valid = true;
	}
	return 0;
}

static void tirpc_teardown(struct bench_thread *t)
{
	struct tthread *tt = t->stack;

	if (!tt)
		return;
	if (tt->clnt)
		clnt_destroy(tt->clnt);
	free(tt->buf);
	free(tt->back);
	free(tt);
	t->stack = NULL;
}

/* One thread (and connection) per call in flight. */
static unsigned int tirpc_threads(const struct bench_params *p)
{
	unsigned int n = p->conns * p->depth;

	return n > BENCH_MAX_DEPTH ? BENCH_MAX_DEPTH : n;
}

const struct bench_stack_ops bench_tirpc_ops = {
	.name = "tirpc",
	.setup = tirpc_setup,
	.run = tirpc_run,
	.server_cpu = tirpc_server_cpu,
	.teardown = tirpc_teardown,
	.threads_for = tirpc_threads,
	.server_work = tirpc_server_work,
};

int bench_tirpc_stop_remote(const struct bench_config *cfg)
{
	CLIENT *clnt;
	int sock, rc;

	rc = tirpc_connect(cfg, &clnt, &sock);
	if (rc)
		return rc;
	rc = clnt_call(clnt, BENCH_STOP, XDRPROC(xdr_void), NULL, XDRPROC(xdr_void), NULL,
		       call_timeout) == RPC_SUCCESS
		 ? 0
		 : -EIO;
	clnt_destroy(clnt);
	return rc;
}
