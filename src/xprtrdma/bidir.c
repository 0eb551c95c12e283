/*
 * Bidirectional RPC-over-RDMA (RFC 8167): the glue that puts a requester
 * and a responder of this engine on one connection.  The only file that
 * knows both roles; each reaches the other through its partner ops
 * (xprt.h).  docs/architecture.md tells the story (owners, partners, flow
 * control, recovery).
 */
#include <errno.h>

#include "xprtrdma/bidir.h"
#include "xprtrdma/clnt.h"
#include "xprtrdma/svc.h"

int rpcrdma__bc_host_create(struct rpcrdma__clnt_transport *owner, uint32_t credits,
			    bool refuse_chunks, const struct rpcrdma__svc_cb *cb, void *cb_ctx,
			    struct rpcrdma__svc_transport **out)
{
	uint32_t send, recv;

	rpcrdma__xclnt_inline(owner, &send, &recv);
	return rpcrdma__xsvc_partner_create(rpcrdma__xclnt_dev(owner), send, recv, credits,
					    refuse_chunks, cb, cb_ctx, out);
}

void rpcrdma__bc_host_attach(struct rpcrdma__clnt_transport *owner,
			     struct rpcrdma__svc_transport *host, uint32_t credits)
{
	rpcrdma__xclnt_set_bc_host(owner, host ? rpcrdma__xsvc_partner(host) : NULL, credits);
}

int rpcrdma__bc_req_create(struct rpcrdma__svc_transport *home, uint32_t credits,
			   const struct rpcrdma__clnt_cb *cb, void *cb_ctx,
			   struct rpcrdma__clnt_transport **out)
{
	uint32_t send, recv;

	if (!home)
		return -EINVAL;
	rpcrdma__xsvc_inline(home, &send, &recv);
	return rpcrdma__xclnt_partner_create(rpcrdma__xsvc_dev(home), send, recv, credits, cb,
					     cb_ctx, out);
}

void *rpcrdma__bc_req_conn(struct rpcrdma__sreq *sreq)
{
	return rpcrdma__xsvc_req_conn(sreq);
}

struct rpcrdma__svc_transport *rpcrdma__bc_conn_home(void *conn)
{
	return rpcrdma__xsvc_conn_home(conn);
}

void *rpcrdma__bc_conn_owner(void *conn)
{
	return rpcrdma__xsvc_conn_bc(conn);
}

int rpcrdma__bc_bind(void *conn, struct rpcrdma__clnt_transport *req, void (*down)(void *bc),
		     void *bc)
{
	return rpcrdma__xsvc_conn_bind(conn, rpcrdma__xclnt_partner(req), down, bc);
}

void rpcrdma__bc_unbind(void *conn, struct rpcrdma__clnt_transport *req)
{
	struct rpcrdma__xpartner *p = rpcrdma__xclnt_partner(req);

	p->ops->detach(p, -ECONNRESET);
	(void)rpcrdma__xsvc_conn_bind(conn, NULL, NULL, NULL);
}
