/*
 * Bidirectional RPC-over-RDMA (RFC 8167): which way a received message
 * goes, the backchannel objects of the public API (backchannel.h), and the
 * glue that puts a requester and a responder of this engine on one
 * connection.
 *
 * Roles.  The end that opened or accepted a connection keeps it (the
 * "owner": the client's requester, clnt.c; the server's responder, svc.c)
 * and posts every receive on it.  The other direction is a "partner" of
 * the opposite role on the same provider connection: a client's callback
 * responder (svc.c in partner mode) or a server's reverse requester
 * (clnt.c in partner mode).  The owner tells each message's direction from
 * the RPC msg_type (rpcrdma__bc_direction) and copies a message of the
 * partner's direction into one of the partner's buffers, so each role
 * keeps its own buffers, credits (4.1: accounted separately), XID table
 * (2.4: the same XID may be in flight both ways) and counters.
 *
 * Flow control.  A client hosting callbacks posts its forward credits plus
 * its reverse credits of receives, and holds forward calls back unless the
 * reverse ones stay posted (4.3.1); its responder grants those reverse
 * credits.  A server binding a backchannel to a connection raises that
 * connection's receive target by the reverse credits it asks for, before
 * the first reverse call can leave (4.3.2).  A message whose direction
 * cannot be told (RDMA_DONE, unknown procedures, an undecodable header)
 * stays with the owner's role, which never applies its credit value.
 *
 * Recovery (5.4).  When the connection goes, the reverse requester fences
 * its calls and gives them back to its core, whose reconnection attempts
 * wait for the upper layer to bind the backchannel to the client's next
 * connection; the calls' time-outs bound the wait.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/direction.h"
#include "rpc/core.h"
#include "rpcrdma/backchannel.h"
#include "xprt/xprt.h"

int rpcrdma__bc_direction(const uint8_t *buf, uint32_t len, const struct rpcrdma_hdr_limits *lim,
			  struct rpcrdma_hdr *scratch)
{
	struct rpcrdma_hdr_fault fault;

	if (rpcrdma_hdr_decode(buf, len, lim, scratch, &fault))
		return RPCRDMA__DIR_UNKNOWN;
	if (scratch->hdr_len > len || scratch->payload_len > len - scratch->hdr_len)
		return RPCRDMA__DIR_INVALID;
	return (int)rpcrdma__msg_direction(scratch, buf + scratch->hdr_len, scratch->payload_len);
}

void rpcrdma__bc_fold_stats(struct rpcrdma_xprt_stats *out, const struct rpcrdma_xprt_stats *p,
			    bool requester)
{
	/* A requester partner (server) sends calls and receives replies; a
	 * responder partner (client) the other way round. */
	out->rev_calls += requester ? p->calls_sent : p->calls_received;
	out->rev_replies += requester ? p->calls_received : p->calls_sent;
	/* Both ends count a reverse call once when its arguments move by
	 * RDMA Read (Read chunks or a Long Call). */
	out->rev_chunk_msgs += p->read_chunk_msgs + p->long_calls;
	out->rev_long_msgs += p->long_calls + p->long_replies;
	out->rev_rdma_bytes += p->rdma_read_bytes + p->rdma_write_bytes;
	out->rev_errors += requester ? p->rdma_errors_received : p->rdma_errors_sent;
	if (p->credits_granted)
		out->rev_credits_granted = p->credits_granted;
	if (p->credits_in_use_max > out->rev_credits_in_use_max)
		out->rev_credits_in_use_max = p->credits_in_use_max;
	out->rev_timeouts += p->timeouts;
	out->rev_retransmits += p->retransmits;
	out->rev_dropped += p->rev_dropped;
	out->rev_bad_msgs += p->bad_msgs;
}

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
	uint32_t send, recv;

	rpcrdma__xclnt_inline(m->owner, &send, &recv);
	return rpcrdma__xsvc_partner_create(rpcrdma__xclnt_dev(m->owner), send, recv,
					    m->opts->credits, m->opts->refuse_chunks, cb, cb_ctx,
					    out);
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
		rpcrdma__xclnt_set_bc_host(owner, rpcrdma__server_transport(host), o.credits);
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
	void *conn;                          /* the connection bound (svc.c), or NULL */
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
	rpcrdma__xclnt_partner_detach(bc->req, -ECONNRESET);
	(void)rpcrdma__xsvc_conn_bind(bc->conn, NULL, NULL);
	bc->conn = NULL;
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

	return rpcrdma__xclnt_partner_create(m->home, m->credits, cb, cb_ctx, out);
}

/* The RDMA connection of @req, or an error. */
static int req_conn(struct rpcrdma_svc_req *req, void **conn)
{
	struct rpcrdma_server *srv = rpcrdma__svc_req_server(req);

	if (!srv)
		return -EINVAL;
	if (rpcrdma__server_ops(srv) != &rpcrdma__rdma_svc_ops)
		return -EPROTONOSUPPORT;
	*conn = rpcrdma__xsvc_req_conn(rpcrdma__svc_req_transport(req));
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
	bc = rpcrdma__xsvc_conn_bc(conn);
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
	}
	bc = calloc(1, sizeof(*bc));
	if (!bc)
		return -ENOMEM;
	rpcrdma_client_opts_default(&co);
	co.transport = RPCRDMA_TRANSPORT_RDMA;
	co.timeout_ms = opts->timeout_ms;
	co.retries = opts->retries;
	co.cred = opts->cred;
	m.home = rpcrdma__server_transport(srv);
	m.credits = opts->credits;
	rc = rpcrdma__client_create_on(rpcrdma__server_loop(srv), opts->prog, opts->vers, &co,
				       &rpcrdma__rdma_bc_clnt_ops, make_req, &m, &bc->clnt);
	if (rc) {
		free(bc);
		return rc;
	}
	bc->srv = srv;
	bc->req = rpcrdma__client_transport(bc->clnt);
	rpcrdma__client_set_refusal(bc->clnt, RPCRDMA_ERR_BACKCHANNEL_OFF);
	bc->next = bc_list_of(srv)->head;
	bc_list_of(srv)->head = bc;
	rc = rpcrdma__xsvc_conn_bind(conn, bc->req, bc);
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
	if (rpcrdma__xsvc_conn_bc(conn))
		return -EBUSY;
	unbind(bc);
	rc = rpcrdma__xsvc_conn_bind(conn, bc->req, bc);
	if (!rc)
		bc->conn = conn;
	return rc;
}

void rpcrdma__bc_conn_down(void *arg)
{
	struct rpcrdma_backchannel *bc = arg;

	/* Its calls wait (5.4) for the next bind, or their time-outs. */
	unbind(bc);
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
