/*
 * The bidirectional glue (bidir.c): the one part of the engine that knows
 * both roles.  It makes a role's partner for another role's connection;
 * the public backchannel API (src/rpc/backchannel.c) is built on it.
 */
#ifndef RPCRDMA_XPRT_BIDIR_H
#define RPCRDMA_XPRT_BIDIR_H

#include "xprtrdma/xprt.h"

/* The reverse requester's core ops (a server's backchannel client). */
extern const struct rpcrdma__clnt_transport_ops rpcrdma__rdma_bc_clnt_ops;

/**
 * rpcrdma__bc_host_create - a callback responder for a client's connection
 * @owner: the client's requester
 * @credits: reverse credits to grant (0: the default; capped)
 * @refuse_chunks: answer reverse calls with chunks with ERR_CHUNK
 * @cb: the core's callbacks
 * @cb_ctx: their context
 * @out: the transport made
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int rpcrdma__bc_host_create(struct rpcrdma__clnt_transport *owner, uint32_t credits,
			    bool refuse_chunks, const struct rpcrdma__svc_cb *cb, void *cb_ctx,
			    struct rpcrdma__svc_transport **out);

/**
 * rpcrdma__bc_host_attach - make @owner carry the callback responder @host
 * @owner: the client's requester (not connected yet)
 * @host: a transport from rpcrdma__bc_host_create()
 * @credits: the reverse credits it grants
 */
void rpcrdma__bc_host_attach(struct rpcrdma__clnt_transport *owner,
			     struct rpcrdma__svc_transport *host, uint32_t credits);

/**
 * rpcrdma__bc_conn_home - the responder serving @conn (a connection from
 * rpcrdma__bc_req_conn()): what rpcrdma__bc_req_create() takes as @home
 */
struct rpcrdma__svc_transport *rpcrdma__bc_conn_home(void *conn);

/**
 * rpcrdma__bc_req_create - a reverse requester on a server's connections
 * @home: the responder serving them (rpcrdma__bc_conn_home())
 * @credits: reverse credits to ask for (0: the default; capped)
 * @cb: the core's callbacks
 * @cb_ctx: their context
 * @out: the transport made
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int rpcrdma__bc_req_create(struct rpcrdma__svc_transport *home, uint32_t credits,
			   const struct rpcrdma__clnt_cb *cb, void *cb_ctx,
			   struct rpcrdma__clnt_transport **out);

/**
 * rpcrdma__bc_req_conn - the RDMA connection a request came on
 * @sreq: the core's request
 *
 * Return: the connection (opaque), or NULL (see rpcrdma__xsvc_req_conn()).
 */
void *rpcrdma__bc_req_conn(struct rpcrdma__sreq *sreq);

/**
 * rpcrdma__bc_conn_owner - the backchannel bound to @conn, or NULL
 * @conn: a connection from rpcrdma__bc_req_conn()
 */
void *rpcrdma__bc_conn_owner(void *conn);

/**
 * rpcrdma__bc_bind - bind a reverse requester to a connection
 * @conn: the connection
 * @req: the reverse requester
 * @down: called with @bc when the connection goes
 * @bc: the backchannel it serves
 *
 * Return: 0, -EBUSY or -ENOTCONN (rpcrdma__xsvc_conn_bind()).
 */
int rpcrdma__bc_bind(void *conn, struct rpcrdma__clnt_transport *req, void (*down)(void *bc),
		     void *bc);

/**
 * rpcrdma__bc_unbind - take a reverse requester off its connection
 * @conn: the connection it is bound to
 * @req: the reverse requester, whose calls in flight are fenced and given
 *	back to its core
 */
void rpcrdma__bc_unbind(void *conn, struct rpcrdma__clnt_transport *req);

#endif /* RPCRDMA_XPRT_BIDIR_H */
