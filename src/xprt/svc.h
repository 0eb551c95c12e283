/*
 * The responder (svc.c): what the rest of the engine may reach of it.
 */
#ifndef RPCRDMA_XPRT_SVC_H
#define RPCRDMA_XPRT_SVC_H

#include "xprt/xprt.h"

/**
 * rpcrdma__xsvc_partner_create - a client's callback responder
 * @dev: the owner's provider instance (borrowed: never watched or closed)
 * @inline_send: the owner's inline send size
 * @inline_recv: the owner's inline receive size
 * @credits: reverse credits it grants (0: the default; capped)
 * @refuse_chunks: answer reverse calls carrying chunks with ERR_CHUNK
 * @cb: the core's callbacks
 * @cb_ctx: their context
 * @out: the transport made
 *
 * It posts no receives: its owner hands it the call-direction messages
 * (through rpcrdma__xsvc_partner()).
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int rpcrdma__xsvc_partner_create(struct rpcrdma__xdev *dev, uint32_t inline_send,
				 uint32_t inline_recv, uint32_t credits, bool refuse_chunks,
				 const struct rpcrdma__svc_cb *cb, void *cb_ctx,
				 struct rpcrdma__svc_transport **out);

/**
 * rpcrdma__xsvc_partner - what an owner sees of a callback responder
 * @t: a transport made by rpcrdma__xsvc_partner_create()
 */
struct rpcrdma__xpartner *rpcrdma__xsvc_partner(struct rpcrdma__svc_transport *t);

/**
 * rpcrdma__xsvc_req_conn - the RDMA connection a request came on
 * @sreq: the core's request
 *
 * Return: the connection (opaque), or NULL when it is gone, belongs to a
 * callback responder, or the request did not come over RDMA.
 */
void *rpcrdma__xsvc_req_conn(struct rpcrdma__sreq *sreq);

/**
 * rpcrdma__xsvc_conn_bc - the backchannel bound to a connection
 * @conn: a connection from rpcrdma__xsvc_req_conn(), or NULL
 *
 * Return: the @bc given to rpcrdma__xsvc_conn_bind(), or NULL.
 */
void *rpcrdma__xsvc_conn_bc(void *conn);

/**
 * rpcrdma__xsvc_conn_bind - bind a reverse requester to a connection
 * @conn: the connection
 * @partner: the reverse requester (NULL: unbinds)
 * @down: called with @bc when the connection goes
 * @bc: the backchannel it serves
 *
 * The connection's receives for the partner's replies are posted before
 * the partner is attached (RFC 8167 4.3.2).
 *
 * Return: 0, -EBUSY when another backchannel holds the connection,
 * -ENOTCONN when it is down.
 */
int rpcrdma__xsvc_conn_bind(void *conn, struct rpcrdma__xpartner *partner, void (*down)(void *bc),
			    void *bc);

/**
 * rpcrdma__xsvc_dev - a responder's provider instance
 * @t: the responder
 */
struct rpcrdma__xdev *rpcrdma__xsvc_dev(struct rpcrdma__svc_transport *t);

/**
 * rpcrdma__xsvc_inline - a responder's inline sizes
 * @t: the responder
 * @send: its inline send size
 * @recv: its inline receive size
 */
void rpcrdma__xsvc_inline(struct rpcrdma__svc_transport *t, uint32_t *send, uint32_t *recv);

#endif /* RPCRDMA_XPRT_SVC_H */
