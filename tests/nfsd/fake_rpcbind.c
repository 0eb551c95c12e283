/*
 * A stand-in for rpcbind on a loopback port of the test's choosing, so
 * the stop test can see what rpcrdma-nfsd registers and removes without
 * the host's rpcbind (which make check must not touch).  Serves RPCBPROC
 * SET and UNSET of versions 3 and 4 over TCP, answers TRUE, and prints one
 * line per call on stdout: "SET PROG VERS NETID ADDR" or "UNSET PROG VERS
 * NETID".  Runs until SIGTERM.
 *
 * Usage: fake_rpcbind PORT
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/loop.h"
#include "rpcrdma/rpc.h"
#include "rpcrdma/xdr.h"

struct rpcb {
	uint32_t prog, vers;
	char netid[128], addr[128], owner[128];
};

static int rpcb_dec(struct rpcrdma_xdr_stream *x, void *o)
{
	struct rpcb *b = o;
	uint32_t len;
	int rc;

	if ((rc = rpcrdma_xdr_decode_u32(x, &b->prog)) ||
	    (rc = rpcrdma_xdr_decode_u32(x, &b->vers)) ||
	    (rc = rpcrdma_xdr_decode_string(x, b->netid, sizeof(b->netid), &len)) ||
	    (rc = rpcrdma_xdr_decode_string(x, b->addr, sizeof(b->addr), &len)) ||
	    (rc = rpcrdma_xdr_decode_string(x, b->owner, sizeof(b->owner), &len)))
		return rc;
	return 0;
}

static int bool_enc(struct rpcrdma_xdr_stream *x, void *o)
{
	(void)o;
	return rpcrdma_xdr_encode_bool(x, true);
}

static int set(struct rpcrdma_svc_req *req, void *args, void *res)
{
	const struct rpcb *b = args;

	(void)req;
	(void)res;
	printf("SET %u %u %s %s\n", b->prog, b->vers, b->netid, b->addr);
	fflush(stdout);
	return 0;
}

static int unset(struct rpcrdma_svc_req *req, void *args, void *res)
{
	const struct rpcb *b = args;

	(void)req;
	(void)res;
	printf("UNSET %u %u %s\n", b->prog, b->vers, b->netid);
	fflush(stdout);
	return 0;
}

static int null_proc(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return 0;
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	const struct rpcrdma_svc_proc procs[3] = {
	    {null_proc, NULL, 0, NULL, 0, NULL},
	    {set, rpcb_dec, sizeof(struct rpcb), bool_enc, 4, NULL},
	    {unset, rpcb_dec, sizeof(struct rpcb), bool_enc, 4, NULL},
	};
	struct rpcrdma_server_opts so;
	struct rpcrdma_server *srv;
	struct rpcrdma_loop *loop;

	if (argc != 2)
		return 2;
	signal(SIGTERM, on_term);
	if (rpcrdma_loop_create(&loop))
		return 1;
	rpcrdma_server_opts_default(&so);
	so.transport = RPCRDMA_TRANSPORT_TCP;
	if (rpcrdma_server_create(loop, "127.0.0.1", argv[1], &so, &srv) ||
	    rpcrdma_server_register(srv, 100000, 4, procs, 3) ||
	    rpcrdma_server_register(srv, 100000, 3, procs, 3)) {
		fprintf(stderr, "fake_rpcbind: cannot serve port %s\n", argv[1]);
		return 1;
	}
	printf("READY\n");
	fflush(stdout);
	while (!stop)
		(void)rpcrdma_loop_run_once(loop, 200);
	rpcrdma_server_destroy(srv);
	(void)rpcrdma_loop_destroy(loop);
	return 0;
}
