/*
 * An rpcgen program (dir.x: a struct with a string and an array, a union,
 * two versions of a program and a second program) over librpcrdma-tirpc,
 * rpcgen's output untouched, as README "Your rpcgen program over RDMA"
 * tells a user: one server serves all three with the dispatch functions
 * of rpcgen -m; a client calls through the stubs of rpcgen -l and sees
 * each status libtirpc gives (time-out, PROC_UNAVAIL, GARBAGE_ARGS,
 * PROG_MISMATCH, PROG_UNAVAIL), and an AUTH_SYS credential set in
 * cl_auth reaches the procedure.
 *
 * Usage: rpcgen_test rdma|tcp
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpcrdma/loop.h>
#include <rpcrdma/tirpc.h>

#include "dir.h"

/* rpcgen -m writes the dispatch functions without declaring them. */
void dir_prog_1(struct svc_req *rq, SVCXPRT *xp);
void dir_prog_2(struct svc_req *rq, SVCXPRT *xp);
void echo_prog_1(struct svc_req *rq, SVCXPRT *xp);

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond);         \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

struct server {
	struct rpcrdma_loop *loop;
	struct rpcrdma_server *srv;
	pthread_t thread;
	char port[16];
};

static void *serve(void *arg)
{
	rpcrdma_loop_run(((struct server *)arg)->loop);
	return NULL;
}

static void stop(void *loop)
{
	rpcrdma_loop_stop(loop);
}

static void server_start(struct server *s, enum rpcrdma_transport transport)
{
	struct rpcrdma_server_opts so;

	CHECK(rpcrdma_loop_create(&s->loop) == 0);
	rpcrdma_server_opts_default(&so);
	so.transport = transport;
	CHECK(rpcrdma_server_create(s->loop, "127.0.0.1", "0", &so, &s->srv) == 0);
	CHECK(rpcrdma_tirpc_svc_reg(s->srv, DIR_PROG, DIR_V1, dir_prog_1, NULL) == 0);
	CHECK(rpcrdma_tirpc_svc_reg(s->srv, DIR_PROG, DIR_V2, dir_prog_2, NULL) == 0);
	CHECK(rpcrdma_tirpc_svc_reg(s->srv, ECHO_PROG, ECHO_V1, echo_prog_1, NULL) == 0);
	snprintf(s->port, sizeof(s->port), "%d", rpcrdma_server_port(s->srv));
	CHECK(pthread_create(&s->thread, NULL, serve, s) == 0);
}

static void server_stop(struct server *s)
{
	CHECK(rpcrdma_loop_wake(s->loop, stop, s->loop) == 0);
	pthread_join(s->thread, NULL);
	rpcrdma_server_destroy(s->srv);
	CHECK(rpcrdma_loop_destroy(s->loop) == 0);
}

static CLIENT *client(enum rpcrdma_transport transport, const char *port, rpcprog_t prog,
		      rpcvers_t vers)
{
	struct rpcrdma_tirpc_opts o = {0};
	CLIENT *cl;

	o.transport = transport;
	o.service = port;
	cl = rpcrdma_tirpc_clnt_create("127.0.0.1", prog, vers, &o);
	if (!cl)
		clnt_pcreateerror("rpcgen_test");
	CHECK(cl != NULL);
	return cl;
}

static enum clnt_stat null_call(CLIENT *cl, rpcproc_t proc)
{
	struct timeval tv = {10, 0};

	return clnt_call(cl, proc, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void, NULL, tv);
}

static void version_one(enum rpcrdma_transport transport, const char *port)
{
	CLIENT *cl = client(transport, port, DIR_PROG, DIR_V1);
	int scores[3] = {7, 8, 9}, slow = 1500, *r;
	dir_person p = {"ann", 40, {3, scores}};
	struct timeval tv = {0, 300000}, got;
	dir_name name = "ann";
	dir_find_res *f;
	struct rpc_err e;

	r = dir_add_1(&p, cl);
	CHECK(r && *r == 1);
	f = dir_find_1(&name, cl);
	CHECK(f && f->status == 0);
	CHECK(strcmp(f->dir_find_res_u.who.name, "ann") == 0);
	CHECK(f->dir_find_res_u.who.age == 40);
	CHECK(f->dir_find_res_u.who.scores.scores_len == 3);
	CHECK(f->dir_find_res_u.who.scores.scores_val[2] == 9);
	CHECK(clnt_freeres(cl, (xdrproc_t)xdr_dir_find_res, (caddr_t)f));
	name = "bob";
	f = dir_find_1(&name, cl);
	CHECK(f && f->status == 2);

	/* A procedure slower than CLSET_TIMEOUT: NULL from the stub. */
	CHECK(clnt_control(cl, CLSET_TIMEOUT, (char *)&tv));
	CHECK(clnt_control(cl, CLGET_TIMEOUT, (char *)&got) && got.tv_usec == 300000);
	CHECK(dir_slow_1(&slow, cl) == NULL);
	clnt_geterr(cl, &e);
	CHECK(e.re_status == RPC_TIMEDOUT);
	CHECK(strstr(clnt_sperror(cl, "slow"), "Timed out") != NULL);
	usleep((useconds_t)slow * 1000);
	tv.tv_sec = 10;
	CHECK(clnt_control(cl, CLSET_TIMEOUT, (char *)&tv));

	CHECK(null_call(cl, 77) == RPC_PROCUNAVAIL);
	/* dir_find with no argument: the dispatch's svc_getargs() fails. */
	CHECK(null_call(cl, DIR_FIND) == RPC_CANTDECODEARGS);
	clnt_destroy(cl);
}

static void version_two(enum rpcrdma_transport transport, const char *port)
{
	CLIENT *cl = client(transport, port, DIR_PROG, DIR_V2);
	dir_cred *c;
	int *count;

	count = dir_count_2(NULL, cl);
	CHECK(count && *count == 1);
	c = dir_whoami_2(NULL, cl);
	CHECK(c && c->flavor == AUTH_NONE);
	cl->cl_auth = authunix_create_default();
	CHECK(cl->cl_auth != NULL);
	c = dir_whoami_2(NULL, cl);
	CHECK(c && c->flavor == AUTH_SYS);
	CHECK(c->uid == geteuid() && c->gid == getegid());
	auth_destroy(cl->cl_auth);
	clnt_destroy(cl);
}

static void others(enum rpcrdma_transport transport, const char *port)
{
	struct rpc_err e;
	dir_name name = "hi", *out;
	CLIENT *cl;

	cl = client(transport, port, DIR_PROG, 3);
	CHECK(null_call(cl, 0) == RPC_PROGVERSMISMATCH);
	clnt_geterr(cl, &e);
	CHECK(e.re_vers.low == DIR_V1 && e.re_vers.high == DIR_V2);
	clnt_destroy(cl);

	cl = client(transport, port, ECHO_PROG, ECHO_V1);
	out = echo_1(&name, cl);
	CHECK(out && strcmp(*out, "echo:hi") == 0);
	CHECK(clnt_freeres(cl, (xdrproc_t)xdr_dir_name, (caddr_t)out));
	clnt_destroy(cl);

	cl = client(transport, port, ECHO_PROG + 1, 1);
	CHECK(null_call(cl, 0) == RPC_PROGUNAVAIL);
	clnt_destroy(cl);
}

int main(int argc, char **argv)
{
	enum rpcrdma_transport transport;
	struct server s;

	if (argc != 2 || (strcmp(argv[1], "rdma") != 0 && strcmp(argv[1], "tcp") != 0)) {
		fprintf(stderr, "usage: rpcgen_test rdma|tcp\n");
		return 2;
	}
	transport = strcmp(argv[1], "rdma") == 0 ? RPCRDMA_TRANSPORT_RDMA : RPCRDMA_TRANSPORT_TCP;
	server_start(&s, transport);
	version_one(transport, s.port);
	version_two(transport, s.port);
	others(transport, s.port);
	server_stop(&s);
	printf("rpcgen program over %s: ok\n", argv[1]);
	return 0;
}
