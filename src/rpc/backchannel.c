/*
 * The public backchannel API (rpcrdma/backchannel.h): a client hosting
 * callbacks on its own RDMA connection, and a server's backchannels to its
 * clients (RFC 8167).  Built on the engine's bidirectional glue
 * (xprtrdma/bidir.h); docs/architecture.md tells how the two roles share a
 * connection.
 */
#ifdef RPCRDMA_HAVE_RDMA_XPRT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/core.h"
#include "rpcrdma/backchannel.h"
#include "xprtrdma/bidir.h"

/*
 * Client side: the callback server on the client's own connection.
 */
void rpcrdma_callback_opts_default(struct rpcrdma_callback_opts *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->credits = RPCRDMA__BC_CREDITS_DEFAULT;
}

struct host_make {
	struct rpcrdma__clnt_transport *owner;
	const struct rpcrdma_callback_opts *opts;
};

static int make_host(void *arg, const struct rpcrdma__svc_cb *cb, void *cb_ctx,
		     struct rpcrdma__svc_transport **out)
{
	const struct host_make *m = arg;

	return rpcrdma__bc_host_create(m->owner, m->opts->credits, m->opts->refuse_chunks, cb,
				       cb_ctx, out);
}

/* The receives the owner keeps for reverse calls: what the host grants. */
static uint32_t host_credits(const struct rpcrdma_callback_opts *o)
{
	uint32_t n = o->credits ? o->credits : RPCRDMA__BC_CREDITS_DEFAULT;

	return n > RPCRDMA__BC_CREDITS_MAX ? RPCRDMA__BC_CREDITS_MAX : n;
}

int rpcrdma_client_register_callback(struct rpcrdma_client *clnt, uint32_t prog, uint32_t vers,
				     const struct rpcrdma_svc_proc *procs, uint32_t nprocs,
				     const struct rpcrdma_callback_opts *opts)
{
	struct rpcrdma_server *host;
	struct rpcrdma_callback_opts o;
	struct rpcrdma_server_opts so;
	int rc;

	if (!clnt || (nprocs && !procs))
		return -EINVAL;
	host = rpcrdma__client_callbacks(clnt);
	if (!host) {
		struct host_make m;
		struct rpcrdma__clnt_transport *owner = rpcrdma__client_transport(clnt);

		if (rpcrdma__client_ops(clnt) != &rpcrdma__rdma_clnt_ops)
			return -EPROTONOSUPPORT;
		if (rpcrdma__client_connected(clnt))
			return -EISCONN;
		if (opts)
			o = *opts;
		else
			rpcrdma_callback_opts_default(&o);
		o.credits = host_credits(&o);
		rpcrdma_server_opts_default(&so);
		so.credits = o.credits;
		m.owner = owner;
		m.opts = &o;
		rc = rpcrdma__server_create_on(rpcrdma__client_loop(clnt), &so,
					       &rpcrdma__rdma_svc_ops, make_host, &m, &host);
		if (rc)
			return rc;
		rpcrdma__bc_host_attach(owner, rpcrdma__server_transport(host), o.credits);
		rpcrdma__client_set_callbacks(clnt, host);
	}
	return rpcrdma_server_register(host, prog, vers, procs, nprocs);
}

/*
 * Server side: backchannels.
 */
struct rpcrdma_backchannel {
	struct rpcrdma_server *srv;          /* the core whose connection it uses */
	struct rpcrdma_client *clnt;         /* the reverse calls' core */
	struct rpcrdma__clnt_transport *req; /* its requester (a partner) */
	/* The responder whose device the requester's memory is on: on a
	 * wildcard verbs server, the connection's device's, not the
	 * server's listen-only one. */
	struct rpcrdma__svc_transport *home;
	void *conn;                          /* the connection bound (engine's), or NULL */
	bool enabled;
	struct rpcrdma_backchannel *next;
};

/* Counters of backchannels already released, per server core. */
struct bc_list {
	struct rpcrdma_backchannel *head;
	struct rpcrdma_xprt_stats retired;
};

static struct bc_list *bc_list_of(struct rpcrdma_server *srv)
{
	return rpcrdma__server_bc(srv)->list;
}

static void bc_stats_of(struct rpcrdma_backchannel *bc, struct rpcrdma_xprt_stats *acc)
{
	struct rpcrdma_xprt_stats one;

	if (rpcrdma_client_stats(bc->clnt, &one) == 0)
		rpcrdma__bc_fold_stats(acc, &one, true);
}

static void unbind(struct rpcrdma_backchannel *bc)
{
	if (!bc->conn)
		return;
	rpcrdma__bc_unbind(bc->conn, bc->req);
	bc->conn = NULL;
}

/* The connection @arg was bound to is going: its calls wait (RFC 8167
 * 5.4) for the next bind, or their time-outs. */
static void conn_down(void *arg)
{
	unbind(arg);
}

static void bc_free(struct rpcrdma_backchannel *bc)
{
	struct bc_list *l = bc_list_of(bc->srv);

	for (struct rpcrdma_backchannel **pp = &l->head; *pp; pp = &(*pp)->next) {
		if (*pp == bc) {
			*pp = bc->next;
			break;
		}
	}
	bc_stats_of(bc, &l->retired);
	unbind(bc);
	/* The core cancels its calls, then lets go of the requester (which
	 * stays with the server until its last operation completed). */
	rpcrdma_client_destroy(bc->clnt);
	free(bc);
}

static bool server_bc_busy(struct rpcrdma_server *srv)
{
	struct bc_list *l = bc_list_of(srv);

	for (struct rpcrdma_backchannel *bc = l ? l->head : NULL; bc; bc = bc->next) {
		if (rpcrdma__client_busy(bc->clnt))
			return true;
	}
	return false;
}

static void server_finalize(struct rpcrdma_server *srv)
{
	struct bc_list *l = bc_list_of(srv);

	while (l->head)
		bc_free(l->head);
	free(l);
	rpcrdma__server_bc(srv)->list = NULL;
}

/* @acc += the reverse-direction counters of @one (gauges: the larger). */
static void add_reverse(struct rpcrdma_xprt_stats *acc, const struct rpcrdma_xprt_stats *one)
{
	acc->rev_calls += one->rev_calls;
	acc->rev_replies += one->rev_replies;
	acc->rev_chunk_msgs += one->rev_chunk_msgs;
	acc->rev_long_msgs += one->rev_long_msgs;
	acc->rev_rdma_bytes += one->rev_rdma_bytes;
	acc->rev_errors += one->rev_errors;
	acc->rev_timeouts += one->rev_timeouts;
	acc->rev_retransmits += one->rev_retransmits;
	acc->rev_dropped += one->rev_dropped;
	acc->rev_bad_msgs += one->rev_bad_msgs;
	acc->rev_record_timeouts += one->rev_record_timeouts;
	if (one->rev_credits_granted > acc->rev_credits_granted)
		acc->rev_credits_granted = one->rev_credits_granted;
	if (one->rev_credits_in_use_max > acc->rev_credits_in_use_max)
		acc->rev_credits_in_use_max = one->rev_credits_in_use_max;
}

static void server_stats(struct rpcrdma_server *srv, struct rpcrdma_xprt_stats *acc)
{
	struct bc_list *l = bc_list_of(srv);

	if (!l)
		return;
	add_reverse(acc, &l->retired);
	for (struct rpcrdma_backchannel *bc = l->head; bc; bc = bc->next) {
		struct rpcrdma_xprt_stats one;

		memset(&one, 0, sizeof(one));
		bc_stats_of(bc, &one);
		add_reverse(acc, &one);
	}
}

struct req_make {
	struct rpcrdma__svc_transport *home;
	uint32_t credits;
};

static int make_req(void *arg, const struct rpcrdma__clnt_cb *cb, void *cb_ctx,
		    struct rpcrdma__clnt_transport **out)
{
	const struct req_make *m = arg;

	return rpcrdma__bc_req_create(m->home, m->credits, cb, cb_ctx, out);
}

/* The RDMA connection of @req, or an error. */
static int req_conn(struct rpcrdma_svc_req *req, void **conn)
{
	struct rpcrdma_server *srv = rpcrdma__svc_req_server(req);

	if (!srv)
		return -EINVAL;
	if (rpcrdma__server_ops(srv) != &rpcrdma__rdma_svc_ops)
		return -EPROTONOSUPPORT;
	*conn = rpcrdma__bc_req_conn(rpcrdma__svc_req_transport(req));
	return *conn ? 0 : -ENOTCONN;
}

int rpcrdma_svc_backchannel(struct rpcrdma_svc_req *req,
			    const struct rpcrdma_backchannel_opts *opts,
			    struct rpcrdma_backchannel **out)
{
	struct rpcrdma__server_bc_hooks *hooks;
	struct rpcrdma_client_opts co;
	struct rpcrdma_backchannel *bc;
	struct rpcrdma_server *srv;
	struct req_make m;
	void *conn;
	int rc;

	if (!req || !opts || !out)
		return -EINVAL;
	rc = req_conn(req, &conn);
	if (rc)
		return rc;
	bc = rpcrdma__bc_conn_owner(conn);
	if (bc) {
		*out = bc;
		return 0;
	}
	srv = rpcrdma__svc_req_server(req);
	hooks = rpcrdma__server_bc(srv);
	if (!hooks->list) {
		hooks->list = calloc(1, sizeof(struct bc_list));
		if (!hooks->list)
			return -ENOMEM;
		hooks->finalize = server_finalize;
		hooks->stats = server_stats;
		hooks->busy = server_bc_busy;
	}
	bc = calloc(1, sizeof(*bc));
	if (!bc)
		return -ENOMEM;
	rpcrdma_client_opts_default(&co);
	co.transport = RPCRDMA_TRANSPORT_RDMA;
	co.timeout_ms = opts->timeout_ms;
	co.retries = opts->retries;
	co.cred = opts->cred;
	m.home = rpcrdma__bc_conn_home(conn);
	m.credits = opts->credits;
	rc = rpcrdma__client_create_on(rpcrdma__server_loop(srv), opts->prog, opts->vers, &co,
				       &rpcrdma__rdma_bc_clnt_ops, make_req, &m, &bc->clnt);
	if (rc) {
		free(bc);
		return rc;
	}
	bc->srv = srv;
	bc->home = m.home;
	bc->req = rpcrdma__client_transport(bc->clnt);
	rpcrdma__client_set_refusal(bc->clnt, RPCRDMA_ERR_BACKCHANNEL_OFF);
	bc->next = bc_list_of(srv)->head;
	bc_list_of(srv)->head = bc;
	rc = rpcrdma__bc_bind(conn, bc->req, conn_down, bc);
	if (rc) {
		bc_free(bc);
		return rc;
	}
	bc->conn = conn;
	*out = bc;
	return 0;
}

int rpcrdma_backchannel_bind(struct rpcrdma_backchannel *bc, struct rpcrdma_svc_req *req)
{
	void *conn;
	int rc;

	if (!bc || !req || rpcrdma__svc_req_server(req) != bc->srv)
		return -EINVAL;
	rc = req_conn(req, &conn);
	if (rc)
		return rc;
	if (conn == bc->conn)
		return 0;
	if (rpcrdma__bc_conn_owner(conn))
		return -EBUSY;
	if (rpcrdma__bc_conn_home(conn) != bc->home)
		return -EXDEV; /* another device: its memory is not there */
	unbind(bc);
	rc = rpcrdma__bc_bind(conn, bc->req, conn_down, bc);
	if (!rc)
		bc->conn = conn;
	return rc;
}


int rpcrdma_backchannel_enable(struct rpcrdma_backchannel *bc, bool on)
{
	if (!bc)
		return -EINVAL;
	bc->enabled = on;
	rpcrdma__client_set_refusal(bc->clnt, on ? 0 : RPCRDMA_ERR_BACKCHANNEL_OFF);
	return 0;
}

int rpcrdma_backchannel_call(struct rpcrdma_backchannel *bc, struct rpcrdma_call *call)
{
	if (!bc)
		return -EINVAL;
	return rpcrdma_client_call(bc->clnt, call);
}

int rpcrdma_backchannel_call_async(struct rpcrdma_backchannel *bc, struct rpcrdma_call *call)
{
	if (!bc)
		return -EINVAL;
	return rpcrdma_client_call_async(bc->clnt, call);
}

int rpcrdma_backchannel_stats(struct rpcrdma_backchannel *bc, struct rpcrdma_xprt_stats *out)
{
	if (!bc || !out)
		return -EINVAL;
	return rpcrdma_client_stats(bc->clnt, out);
}

void rpcrdma_backchannel_release(struct rpcrdma_backchannel *bc)
{
	if (bc)
		bc_free(bc);
}

struct rpcrdma_client *rpcrdma__backchannel_client(struct rpcrdma_backchannel *bc)
{
	return bc ? bc->clnt : NULL;
}

#endif /* RPCRDMA_HAVE_RDMA_XPRT */
