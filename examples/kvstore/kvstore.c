/*
 * kvstore: the rpcgen key-value store (kv.x) over RPC-over-RDMA, over our
 * TCP, and over libtirpc's TCP, with the same generated code.
 *
 *   kvstore self rdma|tcp|tirpc [ROUNDS]
 *	a server in a child process on 127.0.0.1 (ours over the ofi
 *	provider, ours over TCP, or libtirpc's svc_run over TCP) and the
 *	generated client stubs against it: NULL, small and 1 MiB PUT/GET,
 *	every byte checked; prints the time each took.
 *   kvstore serve [--rpcbind] [HOST]
 *	serve over RDMA and TCP (register with rpcbind under "rdma" and
 *	"tcp", unregister on SIGTERM or SIGINT); prints "ready" when it is.
 *   kvstore call HOST NETID
 *	look the server up through rpcbind ("rdma", "rdma6" with ours,
 *	"tcp" with libtirpc's clnt_create()), PUT and GET 1 MiB, check.
 *   kvstore ping HOST
 *	rpcrdma_client_create() with no port: rpcbind's "rdma" entry, then NULL.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rpc/pmap_clnt.h>

#include "kv.h"
#include "kv_binding.h"

#define BIG (1u << 20)

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void fill(char *p, u_int n, u_int seed)
{
	for (u_int i = 0; i < n; i++)
		p[i] = (char)(seed * 131u + i * 7u + (i >> 9));
}

static int check(const kv_get_res *r, u_int n, u_int seed)
{
	if (!r || r->status != 0 || r->val.kv_val_len != n)
		return -1;
	for (u_int i = 0; i < n; i++)
		if (r->val.kv_val_val[i] != (char)(seed * 131u + i * 7u + (i >> 9)))
			return -1;
	return 0;
}

/* clnt_perror(), and for our CLIENTs what its rpc_err cannot carry (the
 * RDMA_ERROR's code, a refused cl_auth's limit...). */
static void say_failure(CLIENT *cl, const char *what)
{
	const char *why = rpcrdma_tirpc_clnt_strerror(cl);

	clnt_perror(cl, what);
	if (why)
		fprintf(stderr, "%s: %s\n", what, why);
}

/* PUT @n bytes under @key, GET them back and check; 0 or -1. */
static int put_get(CLIENT *cl, const char *key, char *buf, u_int n, u_int seed, bool get)
{
	kv_put_args a;
	kv_get_res *r;
	int *st, rc;

	fill(buf, n, seed);
	a.key = (char *)key;
	a.val.kv_val_len = n;
	a.val.kv_val_val = buf;
	st = kv_put_1(&a, cl);
	if (!st || *st != 0) {
		say_failure(cl, "kv_put_1");
		return -1;
	}
	if (!get)
		return 0;
	r = kv_get_1((kv_key *)&key, cl);
	if (!r) {
		say_failure(cl, "kv_get_1");
		return -1;
	}
	rc = check(r, n, seed);
	clnt_freeres(cl, (xdrproc_t)xdr_kv_get_res, (caddr_t)r);
	return rc;
}

static int workload(CLIENT *cl, const char *mode, int rounds)
{
	char *buf = malloc(BIG);
	double t0, t_null, t_small, t_put, t_get;
	kv_get_res *r;
	char key[32];
	int rc = -1;

	if (!buf)
		return -1;
	/* Warm up: the connection, the server's first buffers. */
	if (!kv_null_1(NULL, cl) || put_get(cl, "warm", buf, BIG, 1, true))
		goto out;

	t0 = now_us();
	for (int i = 0; i < rounds * 10; i++)
		if (!kv_null_1(NULL, cl))
			goto out_err;
	t_null = (now_us() - t0) / (rounds * 10);

	t0 = now_us();
	for (int i = 0; i < rounds; i++) {
		snprintf(key, sizeof(key), "small-%d", i % 64);
		if (put_get(cl, key, buf, 64, (u_int)i, true))
			goto out_err;
	}
	t_small = (now_us() - t0) / rounds;

	t0 = now_us();
	for (int i = 0; i < rounds; i++)
		if (put_get(cl, "big", buf, BIG, (u_int)i, false))
			goto out_err;
	t_put = (now_us() - t0) / rounds;

	t0 = now_us();
	for (int i = 0; i < rounds; i++) {
		const char *k = "big";

		r = kv_get_1((kv_key *)&k, cl);
		if (!r)
			goto out_err;
		if (check(r, BIG, (u_int)(rounds - 1))) {
			fprintf(stderr, "kvstore: GET big: wrong bytes\n");
			clnt_freeres(cl, (xdrproc_t)xdr_kv_get_res, (caddr_t)r);
			goto out;
		}
		clnt_freeres(cl, (xdrproc_t)xdr_kv_get_res, (caddr_t)r);
	}
	t_get = (now_us() - t0) / rounds;

	printf("kvstore %-5s: NULL %7.1f us  PUT+GET 64 B %7.1f us  PUT 1 MiB %7.1f us "
	       "(%6.0f MB/s)  GET 1 MiB %7.1f us (%6.0f MB/s)\n",
	       mode, t_null, t_small, t_put, BIG / t_put, t_get, BIG / t_get);
	rc = 0;
	goto out;
out_err:
	say_failure(cl, "kvstore");
out:
	free(buf);
	return rc;
}

/* Our server of the dispatch kv_prog_1 on @loop. */
static int serve_ours(struct rpcrdma_loop *loop, enum rpcrdma_transport tr, const char *host,
		      struct rpcrdma_server **out, int *port)
{
	struct rpcrdma_server_opts so;
	struct rpcrdma_server *srv;
	int rc;

	rpcrdma_server_opts_default(&so);
	so.transport = tr;
	rc = rpcrdma_server_create(loop, host, "0", &so, &srv);
	if (!rc)
		rc = rpcrdma_tirpc_svc_reg(srv, KV_PROG, KV_VERS, kv_prog_1, &kv_binding);
	if (rc)
		return rc;
	*out = srv;
	*port = rpcrdma_server_port(srv);
	return 0;
}

/* A server in a child; its port through a pipe.  Returns the child's pid. */
static pid_t start_server(const char *mode, int *port)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid != 0) {
		close(fds[1]);
		if (pid > 0 && read(fds[0], port, sizeof(*port)) != sizeof(*port)) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			pid = -1;
		}
		close(fds[0]);
		return pid;
	}
	close(fds[0]);
	if (strcmp(mode, "tirpc") == 0) {
		struct sockaddr_in sin = {.sin_family = AF_INET};
		socklen_t len = sizeof(sin);
		SVCXPRT *xp;
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) ||
		    getsockname(fd, (struct sockaddr *)&sin, &len) || listen(fd, 64))
			_exit(1);
		xp = svc_vc_create(fd, 0, 0);
		/* Protocol 0: do not register with rpcbind. */
		if (!xp || !svc_register(xp, KV_PROG, KV_VERS, kv_prog_1, 0))
			_exit(1);
		*port = ntohs(sin.sin_port);
		if (write(fds[1], port, sizeof(*port)) != sizeof(*port))
			_exit(1);
		svc_run();
		_exit(1);
	}
	{
		struct rpcrdma_server *srv;
		struct rpcrdma_loop *loop;

		if (rpcrdma_loop_create(&loop) ||
		    serve_ours(loop,
			       strcmp(mode, "tcp") == 0 ? RPCRDMA_TRANSPORT_TCP
							: RPCRDMA_TRANSPORT_RDMA,
			       "127.0.0.1", &srv, port))
			_exit(1);
		if (write(fds[1], port, sizeof(*port)) != sizeof(*port))
			_exit(1);
		rpcrdma_loop_run(loop);
		_exit(1);
	}
}

static int self_test(const char *mode, int rounds)
{
	struct rpcrdma_tirpc_opts o = {0};
	char service[16];
	CLIENT *cl;
	pid_t pid;
	int port = 0, rc, status;

	pid = start_server(mode, &port);
	if (pid < 0) {
		fprintf(stderr, "kvstore: the %s server did not start\n", mode);
		return 1;
	}
	snprintf(service, sizeof(service), "%d", port);
	if (strcmp(mode, "tirpc") == 0) {
		struct sockaddr_in sin = {.sin_family = AF_INET};
		int sock = RPC_ANYSOCK;

		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin.sin_port = htons((uint16_t)port);
		cl = clnttcp_create(&sin, KV_PROG, KV_VERS, &sock, 0, 0);
	} else {
		o.transport = strcmp(mode, "tcp") == 0 ? RPCRDMA_TRANSPORT_TCP
						       : RPCRDMA_TRANSPORT_RDMA;
		o.service = service;
		o.binding = &kv_binding;
		cl = rpcrdma_tirpc_clnt_create("127.0.0.1", KV_PROG, KV_VERS, &o);
	}
	if (!cl) {
		clnt_pcreateerror("kvstore");
		rc = 1;
	} else {
		struct rpcrdma_xprt_stats st;

		rc = workload(cl, mode, rounds) ? 1 : 0;
		/* Over RDMA the binding's items moved by RDMA Read and Write. */
		if (!rc && rpcrdma_tirpc_clnt_stats(cl, &st) == 0) {
			printf("kvstore %-5s: %llu calls, %llu with Read chunks, %llu with Write "
			       "chunks, RDMA Read %llu B, Write %llu B\n",
			       mode, (unsigned long long)st.calls_sent,
			       (unsigned long long)st.read_chunk_msgs,
			       (unsigned long long)st.write_chunk_msgs,
			       (unsigned long long)st.rdma_read_bytes,
			       (unsigned long long)st.rdma_write_bytes);
			if (o.transport == RPCRDMA_TRANSPORT_RDMA &&
			    (st.read_chunk_msgs < (uint64_t)rounds ||
			     st.write_chunk_msgs < (uint64_t)rounds ||
			     st.rdma_read_bytes < (uint64_t)rounds * BIG ||
			     st.rdma_write_bytes < (uint64_t)rounds * BIG)) {
				fprintf(stderr, "kvstore: the values did not move by RDMA\n");
				rc = 1;
			}
		}
		clnt_destroy(cl);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return rc;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Serve RDMA and TCP on @host until SIGTERM/SIGINT, registered with rpcbind. */
static int serve(const char *host, bool rpcbind)
{
	static const enum rpcrdma_transport trs[2] = {RPCRDMA_TRANSPORT_RDMA,
						      RPCRDMA_TRANSPORT_TCP};
	struct rpcrdma_server *srv[2] = {NULL, NULL};
	bool registered[2] = {false, false};
	struct rpcrdma_loop *loop;
	struct sigaction sa;
	int port, rc;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	rc = rpcrdma_loop_create(&loop);
	for (int i = 0; !rc && i < 2; i++) {
		rc = serve_ours(loop, trs[i], host, &srv[i], &port);
		if (rc)
			break;
		if (rpcbind) {
			/* Replace what a previous run may have left behind. */
			rpcrdma_server_rpcbind_unregister(loop, srv[i], KV_PROG, KV_VERS, trs[i],
							  AF_INET, NULL);
			rc = rpcrdma_server_rpcbind_register(loop, srv[i], KV_PROG, KV_VERS, trs[i],
							     AF_INET, NULL);
			registered[i] = rc == 0;
		}
		printf("kvstore: serving %s on port %d\n", i ? "tcp" : "rdma", port);
	}
	if (rc) {
		fprintf(stderr, "kvstore serve: %s\n", rpcrdma_strerror(rc));
	} else {
		printf("ready\n");
		fflush(stdout);
		while (!stop)
			rpcrdma_loop_run_once(loop, 200);
	}
	for (int i = 0; i < 2; i++) {
		if (registered[i])
			rpcrdma_server_rpcbind_unregister(loop, srv[i], KV_PROG, KV_VERS, trs[i],
							  AF_INET, NULL);
		if (srv[i])
			rpcrdma_server_destroy(srv[i]);
	}
	rpcrdma_loop_destroy(loop);
	return rc ? 1 : 0;
}

static int call(const char *host, const char *netid)
{
	char *buf = malloc(BIG);
	CLIENT *cl;
	int rc;

	if (!buf)
		return 1;
	cl = rpcrdma_clnt_create(host, KV_PROG, KV_VERS, netid);
	if (!cl) {
		clnt_pcreateerror("kvstore call");
		free(buf);
		return 1;
	}
	rc = put_get(cl, netid, buf, BIG, 7, true);
	printf("kvstore call %s %s: %s\n", host, netid, rc ? "FAILED" : "1 MiB PUT and GET ok");
	clnt_destroy(cl);
	free(buf);
	return rc ? 1 : 0;
}

/* The library's own client, the port from rpcbind's "rdma" entry. */
static int ping(const char *host)
{
	struct rpcrdma_client_opts co;
	struct rpcrdma_client *c;
	struct rpcrdma_loop *loop;
	struct rpcrdma_call nc;
	bool called = false;
	int rc;

	rc = rpcrdma_loop_create(&loop);
	if (rc)
		return 1;
	rpcrdma_client_opts_default(&co);
	rc = rpcrdma_client_create(loop, host, NULL, KV_PROG, KV_VERS, &co, &c);
	if (!rc) {
		memset(&nc, 0, sizeof(nc));
		nc.proc = KV_NULL;
		rc = rpcrdma_client_call(c, &nc);
		called = true;
		rpcrdma_client_destroy(c);
	}
	rpcrdma_loop_destroy(loop);
	/* A failed call says its cause (the RDMA_ERROR's code, ...), not
	 * only its status code. */
	printf("kvstore ping %s: %s\n", host,
	       !rc      ? "NULL answered over rdma"
	       : called ? rpcrdma_call_strerror(&nc)
			: rpcrdma_strerror(rc));
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "self") == 0)
		return self_test(argv[2], argc > 3 ? atoi(argv[3]) > 0 ? atoi(argv[3]) : 1 : 50);
	if (argc >= 2 && strcmp(argv[1], "serve") == 0) {
		bool rb = argc > 2 && strcmp(argv[2], "--rpcbind") == 0;
		const char *host = argc > (rb ? 3 : 2) ? argv[rb ? 3 : 2] : "127.0.0.1";

		return serve(host, rb);
	}
	if (argc == 4 && strcmp(argv[1], "call") == 0)
		return call(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "ping") == 0)
		return ping(argv[2]);
	fprintf(stderr, "usage: kvstore self rdma|tcp|tirpc [ROUNDS]\n"
			"       kvstore serve [--rpcbind] [HOST]\n"
			"       kvstore call HOST rdma|rdma6|tcp\n"
			"       kvstore ping HOST\n");
	return 2;
}
