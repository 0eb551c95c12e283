/*
 * The requester (clnt.c): what the rest of the engine may reach of it.
 */
#ifndef RPCRDMA_XPRT_CLNT_H
#define RPCRDMA_XPRT_CLNT_H

#include "xprt/xprt.h"

/* The requester as the server's reverse-direction partner (a core
 * client's ops, made by rpcrdma__xclnt_partner_create()). */
extern const struct rpcrdma__clnt_transport_ops rpcrdma__rdma_bc_clnt_ops;

/**
 * rpcrdma__xclnt_partner_create - a requester serving another's connections
 * @dev: the owner's provider instance (borrowed: never watched or closed)
 * @inline_send: the owner's inline send size
 * @inline_recv: the owner's inline receive size
 * @credits: reverse credits to ask for (0: the default; capped)
 * @cb: the core's callbacks
 * @cb_ctx: their context
 * @out: the transport made
 *
 * It has no connection of its own: it sends once attached (through
 * rpcrdma__xclnt_partner()) to an owner's connection.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int rpcrdma__xclnt_partner_create(struct rpcrdma__xdev *dev, uint32_t inline_send,
				  uint32_t inline_recv, uint32_t credits,
				  const struct rpcrdma__clnt_cb *cb, void *cb_ctx,
				  struct rpcrdma__clnt_transport **out);

/**
 * rpcrdma__xclnt_partner - what an owner sees of a partner requester
 * @t: a transport made by rpcrdma__xclnt_partner_create()
 */
struct rpcrdma__xpartner *rpcrdma__xclnt_partner(struct rpcrdma__clnt_transport *t);

/**
 * rpcrdma__xclnt_set_bc_host - make a requester the owner of a callback host
 * @t: the client's requester (not connected yet)
 * @host: the callback responder, as a partner
 * @credits: the reverse credits it grants (receives kept posted for it)
 */
void rpcrdma__xclnt_set_bc_host(struct rpcrdma__clnt_transport *t, struct rpcrdma__xpartner *host,
				uint32_t credits);

/**
 * rpcrdma__xclnt_dev - a requester's provider instance
 * @t: the requester
 */
struct rpcrdma__xdev *rpcrdma__xclnt_dev(struct rpcrdma__clnt_transport *t);

/**
 * rpcrdma__xclnt_inline - a requester's inline sizes
 * @t: the requester
 * @send: its inline send size
 * @recv: its inline receive size
 */
void rpcrdma__xclnt_inline(struct rpcrdma__clnt_transport *t, uint32_t *send, uint32_t *recv);

#endif /* RPCRDMA_XPRT_CLNT_H */
