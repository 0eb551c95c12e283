/*
 * Errors a user can act on: each mistake a new user makes (the wrong
 * transport for a port, a refused call, an unknown provider, verbs with
 * no device address) fails with a code naming the cause, and its text
 * says what to do.  Over 127.0.0.1; servers take any free port.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpcrdma/loop.h"
#include "rpcrdma/rpc.h"
#include "rpcrdma/rpc_msg.h"
#include "rpcrdma/trace.h"
#include "xprtrdma/clnt.h"

#define PROG 0x20000778u

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

#define CHECK_RC(expr, want)                                                                       \
	do {                                                                                       \
		long rc_ = (long)(expr);                                                           \
		if (rc_ != (long)(want)) {                                                         \
			fprintf(stderr, "%s:%d: %s = %ld (%s), want %ld\n", __FILE__, __LINE__,    \
				#expr, rc_, rpcrdma_strerror((int)rc_), (long)(want));             \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

/* The text names the cause: each of @words appears in it. */
static int says(const char *text, const char *w1, const char *w2)
{
	fprintf(stderr, "  message: %s\n", text);
	CHECK(text && strstr(text, w1));
	CHECK(!w2 || strstr(text, w2));
	return 0;
}

static int proc_null(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return 0;
}

/* Never answers: the client's call times out. */
static int proc_silent(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return RPCRDMA_SVC_DEFERRED;
}

static const struct rpcrdma_svc_proc procs[] = {{proc_null, NULL, 0, NULL, 0, NULL},
						{proc_silent, NULL, 0, NULL, 0, NULL}};

struct env {
	struct rpcrdma_loop *loop;
	struct rpcrdma_server *srv;
	struct rpcrdma_client *clnt;
	char port[16];
};

static int server_up(struct env *e, enum rpcrdma_transport tr)
{
	struct rpcrdma_server_opts so;

	memset(e, 0, sizeof(*e));
	CHECK_RC(rpcrdma_loop_create(&e->loop), 0);
	rpcrdma_server_opts_default(&so);
	so.transport = tr;
	so.provider = "ofi";
	CHECK_RC(rpcrdma_server_create(e->loop, "127.0.0.1", "0", &so, &e->srv), 0);
	CHECK_RC(rpcrdma_server_register(e->srv, PROG, 1, procs, 2), 0);
	snprintf(e->port, sizeof(e->port), "%d", rpcrdma_server_port(e->srv));
	return 0;
}

static int client_of(struct env *e, enum rpcrdma_transport tr, uint32_t prog)
{
	struct rpcrdma_client_opts co;

	rpcrdma_client_opts_default(&co);
	co.transport = tr;
	co.provider = "ofi";
	co.timeout_ms = 60000;
	co.retries = 1;
	CHECK_RC(rpcrdma_client_create(e->loop, "127.0.0.1", e->port, prog, 1, &co, &e->clnt), 0);
	return 0;
}

static int env_down(struct env *e)
{
	if (e->clnt)
		rpcrdma_client_destroy(e->clnt);
	if (e->srv)
		rpcrdma_server_destroy(e->srv);
	for (int i = 0; i < 5; i++)
		(void)rpcrdma_loop_run_once(e->loop, 0);
	CHECK_RC(rpcrdma_loop_destroy(e->loop), 0);
	return 0;
}

/* An RDMA client pointed at an RPC-over-TCP server's port: the software
 * provider's handshake never completes there.  Both the connection and a
 * call fail with the cause (the call long before its time-out). */
static int case_rdma_client_tcp_port(void)
{
	struct rpcrdma_call call;
	struct env e;

	rpcrdma__xclnt_handshake_ms = 2000;
	CHECK_RC(server_up(&e, RPCRDMA_TRANSPORT_TCP), 0);
	CHECK_RC(client_of(&e, RPCRDMA_TRANSPORT_RDMA, PROG), 0);
	CHECK_RC(rpcrdma_client_connect(e.clnt), RPCRDMA_ERR_NOT_RDMA_PEER);
	memset(&call, 0, sizeof(call));
	CHECK_RC(rpcrdma_client_call(e.clnt, &call), RPCRDMA_ERR_NOT_RDMA_PEER);
	CHECK_RC(says(rpcrdma_call_strerror(&call), "not an RPC-over-RDMA server", "TCP port"), 0);
	CHECK_RC(env_down(&e), 0);
	return 0;
}

/* A TCP client at an RPC-over-RDMA server's port: connected, then reset
 * at the first call. */
static int case_tcp_client_rdma_port(void)
{
	struct rpcrdma_call call;
	struct env e;

	CHECK_RC(server_up(&e, RPCRDMA_TRANSPORT_RDMA), 0);
	CHECK_RC(client_of(&e, RPCRDMA_TRANSPORT_TCP, PROG), 0);
	memset(&call, 0, sizeof(call));
	CHECK_RC(rpcrdma_client_call(e.clnt, &call), RPCRDMA_ERR_NOT_TCP_PEER);
	CHECK_RC(says(rpcrdma_strerror(call.status), "before any reply", "RPC-over-RDMA port?"), 0);
	CHECK_RC(env_down(&e), 0);
	return 0;
}

/* The last ERROR event, as the trace callback saw it. */
static struct {
	uint32_t xid;
	char msg[256];
} last_err;

static void on_trace(const struct rpcrdma_trace_event *ev, void *arg)
{
	(void)arg;
	last_err.xid = ev->xid;
	snprintf(last_err.msg, sizeof(last_err.msg), "%s", ev->msg);
}

/* A call the server refused: the reply status by name, on both
 * transports, and in the trace. */
static int refused(enum rpcrdma_transport tr)
{
	struct rpcrdma_call call;
	struct env e;

	CHECK_RC(server_up(&e, tr), 0);
	CHECK_RC(client_of(&e, tr, PROG + 1), 0);
	memset(&call, 0, sizeof(call));
	memset(&last_err, 0, sizeof(last_err));
	CHECK_RC(rpcrdma_trace_set(RPCRDMA_TRACE_ERROR, on_trace, NULL), 0);
	CHECK_RC(rpcrdma_client_call(e.clnt, &call), RPCRDMA_ERR_RPC_REJECTED);
	CHECK_RC(rpcrdma_trace_set(0, NULL, NULL), 0);
	CHECK_RC(call.reply.accept_stat, RPCRDMA_RPC_PROG_UNAVAIL);
	CHECK_RC(says(rpcrdma_call_strerror(&call), "PROG_UNAVAIL", "program"), 0);
	CHECK_RC(last_err.xid, call.xid);
	CHECK_RC(says(last_err.msg, "call refused", "PROG_UNAVAIL"), 0);
	rpcrdma_client_destroy(e.clnt);
	CHECK_RC(client_of(&e, tr, PROG), 0);
	memset(&call, 0, sizeof(call));
	call.proc = 7;
	CHECK_RC(rpcrdma_client_call(e.clnt, &call), RPCRDMA_ERR_RPC_REJECTED);
	CHECK_RC(says(rpcrdma_call_strerror(&call), "PROC_UNAVAIL", "procedure"), 0);
	CHECK(strcmp(rpcrdma_rpc_accept_stat_name(call.reply.accept_stat), "PROC_UNAVAIL") == 0);
	CHECK_RC(env_down(&e), 0);
	return 0;
}

static int case_call_refused(void)
{
	struct rpcrdma_call call;

	CHECK_RC(refused(RPCRDMA_TRANSPORT_TCP), 0);
	CHECK_RC(refused(RPCRDMA_TRANSPORT_RDMA), 0);
	/* The denied forms, as a reply would carry them. */
	memset(&call, 0, sizeof(call));
	call.status = RPCRDMA_ERR_RPC_REJECTED;
	call.reply.stat = RPCRDMA_RPC_MSG_DENIED;
	call.reply.reject_stat = RPCRDMA_RPC_AUTH_ERROR;
	call.reply.auth_stat = RPCRDMA_AUTH_TOOWEAK;
	CHECK_RC(says(rpcrdma_call_strerror(&call), "AUTH_TOOWEAK", "AUTH_SYS"), 0);
	call.reply.reject_stat = RPCRDMA_RPC_MISMATCH;
	CHECK_RC(says(rpcrdma_call_strerror(&call), "RPC_MISMATCH", NULL), 0);
	call.status = -ETIMEDOUT;
	CHECK(strcmp(rpcrdma_call_strerror(&call), rpcrdma_strerror(-ETIMEDOUT)) == 0);
	return 0;
}

/* Results expected where the reply has none. */
static int decode_u32(struct rpcrdma_xdr_stream *xdr, void *obj)
{
	return rpcrdma_xdr_decode_u32(xdr, obj);
}

/* Results that do not decode: the text says the results, and where. */
static int case_results_undecodable(void)
{
	struct rpcrdma_call call;
	uint32_t res;
	struct env e;

	CHECK_RC(server_up(&e, RPCRDMA_TRANSPORT_TCP), 0);
	CHECK_RC(client_of(&e, RPCRDMA_TRANSPORT_TCP, PROG), 0);
	memset(&call, 0, sizeof(call));
	call.decode_res = decode_u32;
	call.res = &res;
	CHECK_RC(rpcrdma_client_call(e.clnt, &call), RPCRDMA_ERR_TRUNCATED);
	CHECK_RC(says(rpcrdma_call_strerror(&call), "results do not decode (decode_res)",
		      "stop at byte 24 of the 24-byte RPC reply"),
		 0);
	CHECK_RC(env_down(&e), 0);
	return 0;
}

/* A server that is not there: the call was never sent, and the retries
 * ran out, not the time-out. */
static int case_conn_refused(void)
{
	struct rpcrdma_call call;
	struct env e;

	CHECK_RC(server_up(&e, RPCRDMA_TRANSPORT_TCP), 0);
	rpcrdma_server_destroy(e.srv); /* its port, now closed */
	e.srv = NULL;
	CHECK_RC(client_of(&e, RPCRDMA_TRANSPORT_TCP, PROG), 0);
	memset(&call, 0, sizeof(call));
	CHECK_RC(rpcrdma_client_call(e.clnt, &call), -ECONNREFUSED);
	CHECK_RC(says(rpcrdma_call_strerror(&call), "never sent: connecting failed 2 times",
		      "Connection refused"),
		 0);
	CHECK_RC(env_down(&e), 0);
	return 0;
}

/* No reply in time: the time-out, and that the call was sent. */
static int case_timed_out(void)
{
	struct rpcrdma_call call;
	struct env e;

	CHECK_RC(server_up(&e, RPCRDMA_TRANSPORT_TCP), 0);
	CHECK_RC(client_of(&e, RPCRDMA_TRANSPORT_TCP, PROG), 0);
	memset(&call, 0, sizeof(call));
	call.proc = 1;
	call.timeout_ms = 300;
	CHECK_RC(rpcrdma_client_call(e.clnt, &call), RPCRDMA_ERR_TIMEDOUT);
	CHECK_RC(says(rpcrdma_call_strerror(&call), "no reply within the call's time-out (300 ms)",
		      NULL),
		 0);
	CHECK_RC(env_down(&e), 0);
	return 0;
}

/* An unknown provider: the text lists those built in. */
static int case_unknown_provider(void)
{
	struct rpcrdma_server_opts so;
	struct rpcrdma_client_opts co;
	struct rpcrdma_server *srv = NULL;
	struct rpcrdma_client *clnt = NULL;
	struct rpcrdma_loop *loop;

	CHECK_RC(rpcrdma_loop_create(&loop), 0);
	rpcrdma_client_opts_default(&co);
	co.provider = "no-such-provider";
	CHECK_RC(rpcrdma_client_create(loop, "127.0.0.1", "9", PROG, 1, &co, &clnt),
		 RPCRDMA_ERR_NO_PROVIDER);
	rpcrdma_server_opts_default(&so);
	so.provider = "no-such-provider";
	CHECK_RC(rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &srv), RPCRDMA_ERR_NO_PROVIDER);
	CHECK_RC(says(rpcrdma_strerror(RPCRDMA_ERR_NO_PROVIDER), "unknown RDMA provider", "ofi"),
		 0);
	CHECK_RC(rpcrdma_loop_destroy(loop), 0);
	return 0;
}

/* A verbs server on a wildcard address: on a machine without RDMA devices
 * it says so; on one with a device it serves every device (and the lab's
 * nfsd-multidev checks that it does). */
static bool have_rdma_device(void)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *e;
	bool any = false;

	while (d && !any && (e = readdir(d)))
		any = e->d_name[0] != '.';
	if (d)
		closedir(d);
	return any;
}

static int case_verbs_no_addr(void)
{
	struct rpcrdma_server_opts so;
	struct rpcrdma_server *srv = NULL;
	struct rpcrdma_loop *loop;
	int rc;

	CHECK_RC(rpcrdma_loop_create(&loop), 0);
	rpcrdma_server_opts_default(&so);
	so.provider = "verbs";
	rc = rpcrdma_server_create(loop, NULL, "0", &so, &srv);
	if (rc == RPCRDMA_ERR_NO_PROVIDER) {
		/* A build without verbs says that instead. */
		CHECK(!strstr(rpcrdma_strerror(rc), "verbs"));
	} else if (have_rdma_device()) {
		CHECK_RC(rc, 0);
		rpcrdma_server_destroy(srv);
	} else {
		CHECK_RC(rc, RPCRDMA_ERR_NO_RDMA_DEVICE);
		CHECK_RC(says(rpcrdma_strerror(rc), "no RDMA device", "--addr"), 0);
	}
	CHECK_RC(rpcrdma_loop_destroy(loop), 0);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(void);
} cases[] = {
    {"errors_rdma_client_tcp_port", case_rdma_client_tcp_port},
    {"errors_tcp_client_rdma_port", case_tcp_client_rdma_port},
    {"errors_call_refused", case_call_refused},
    {"errors_results_undecodable", case_results_undecodable},
    {"errors_conn_refused", case_conn_refused},
    {"errors_timed_out", case_timed_out},
    {"errors_unknown_provider", case_unknown_provider},
    {"errors_verbs_no_addr", case_verbs_no_addr},
};

int main(int argc, char **argv)
{
	int fails = 0;

	signal(SIGPIPE, SIG_IGN);
	alarm(120);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
			continue;
		if (cases[i].fn()) {
			fprintf(stderr, "%s: FAIL\n", cases[i].name);
			fails++;
		} else {
			fprintf(stderr, "%s: ok\n", cases[i].name);
		}
	}
	return fails ? 1 : 0;
}
