/*
 * Internal glue of the transport-neutral RPC core: which transport serves
 * which rpcrdma_transport value (transports.c), and the hooks tests use to
 * reach a client's or server's transport (fault injection).
 */
#ifndef RPCRDMA_RPC_CORE_H
#define RPCRDMA_RPC_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "rpc/transport.h"

/* TCP: the largest record accepted when opts.max_record is 0. */
#define RPCRDMA__TCP_MAX_RECORD_DEFAULT RPCRDMA__SVC_MAX_RECORD_DEFAULT

/**
 * The transport ops for @kind.  Returns 0, -EINVAL for an unknown value, or
 * -EPROTONOSUPPORT for RDMA in a build without the RDMA transport.
 */
int rpcrdma__clnt_ops_for(enum rpcrdma_transport kind,
			  const struct rpcrdma__clnt_transport_ops **out);
int rpcrdma__svc_ops_for(enum rpcrdma_transport kind,
			 const struct rpcrdma__svc_transport_ops **out);

/** Resolve @host:@service for a stream socket: 0, -EHOSTUNREACH for a host
 * that does not resolve, RPCRDMA_ERR_NO_SERVICE, -EAGAIN, -ENOMEM. */
int rpcrdma__resolve(const char *host, const char *service, bool passive,
		     struct sockaddr_storage *ss, socklen_t *len);

/*
 * Set the port of *@ss (a resolved server address) to the one rpcbind on
 * that address maps @prog/@vers to under @transport's netid (rpcbind.c).
 * Runs @loop while waiting.  Returns 0 or the errors of
 * rpcrdma_rpcbind_getaddr(); -ENOENT when nothing is registered.
 */
int rpcrdma__rpcbind_port(struct rpcrdma_loop *loop, uint32_t prog, uint32_t vers,
			  enum rpcrdma_transport transport, struct sockaddr_storage *ss);

/*
 * rpcbind's results as rpcrdma_rpcbind_getaddr() decodes them off the wire
 * (rpcbind.c), reachable on their own for tests/fuzz/rpcbind_fuzz.c: the
 * universal address of a GETADDR result, or of the first mapping of
 * @prog/@vers over @netid a DUMP lists ("" when it lists none).  @uaddr
 * has room for RPCRDMA_RPCBIND_STRING_MAX + 1 bytes.  Returns 0 with the
 * address's length in *@len, or the XDR decoders' error.
 */
int rpcrdma__rpcbind_decode_getaddr(struct rpcrdma_xdr_stream *xdr, char *uaddr, uint32_t *len);
int rpcrdma__rpcbind_decode_dump(struct rpcrdma_xdr_stream *xdr, uint32_t prog, uint32_t vers,
				 const char *netid, char *uaddr, uint32_t *len);

/*
 * Test hooks.  rpcrdma__client_disconnect() drops the client's connections
 * now (ops->disconnect), as a network failure would: outstanding calls are
 * then sent again after a reconnect.  _conn drops connection @conn only
 * (opts.nconnect); its calls go again on the others (RDMA) or on it (TCP).
 * rpcrdma__client_transport() is the first connection's transport, the
 * one that serves callbacks.
 */
void rpcrdma__client_disconnect(struct rpcrdma_client *clnt);
void rpcrdma__client_disconnect_conn(struct rpcrdma_client *clnt, unsigned int conn);
struct rpcrdma__clnt_transport *rpcrdma__client_transport(struct rpcrdma_client *clnt);
struct rpcrdma__svc_transport *rpcrdma__server_transport(struct rpcrdma_server *srv);
/* The core client behind a backchannel (backchannel.c; to steer its XIDs). */
struct rpcrdma_backchannel;
struct rpcrdma_client *rpcrdma__backchannel_client(struct rpcrdma_backchannel *bc);

/*
 * Bidirectional RPC (backchannel.c).  A core client or server whose
 * transport is made by @make rather than by connecting or listening: the
 * server's reverse-direction client on one of its connections, and the
 * callback server a client hosts on its own connection.
 */
typedef int (*rpcrdma__clnt_make_fn)(void *arg, const struct rpcrdma__clnt_cb *cb, void *cb_ctx,
				     struct rpcrdma__clnt_transport **out);
typedef int (*rpcrdma__svc_make_fn)(void *arg, const struct rpcrdma__svc_cb *cb, void *cb_ctx,
				    struct rpcrdma__svc_transport **out);
int rpcrdma__client_create_on(struct rpcrdma_loop *loop, uint32_t prog, uint32_t vers,
			      const struct rpcrdma_client_opts *opts,
			      const struct rpcrdma__clnt_transport_ops *ops,
			      rpcrdma__clnt_make_fn make, void *arg, struct rpcrdma_client **out);
int rpcrdma__server_create_on(struct rpcrdma_loop *loop, const struct rpcrdma_server_opts *opts,
			      const struct rpcrdma__svc_transport_ops *ops,
			      rpcrdma__svc_make_fn make, void *arg, struct rpcrdma_server **out);
/* Calls are refused with @err (0: accepted) before they are queued. */
void rpcrdma__client_set_refusal(struct rpcrdma_client *clnt, int err);
/* The callback server @clnt hosts (destroyed with it, first). */
void rpcrdma__client_set_callbacks(struct rpcrdma_client *clnt, struct rpcrdma_server *cb_srv);
struct rpcrdma_server *rpcrdma__client_callbacks(struct rpcrdma_client *clnt);
const struct rpcrdma__clnt_transport_ops *rpcrdma__client_ops(struct rpcrdma_client *clnt);
struct rpcrdma_loop *rpcrdma__client_loop(struct rpcrdma_client *clnt);
bool rpcrdma__client_connected(struct rpcrdma_client *clnt);
bool rpcrdma__server_busy(struct rpcrdma_server *srv);
/* Whether one of @clnt's callbacks (a call's done) is on the stack. */
bool rpcrdma__client_busy(struct rpcrdma_client *clnt);
/* Tests: the next XID @clnt gives (to make XIDs collide on purpose). */
void rpcrdma__client_set_next_xid(struct rpcrdma_client *clnt, uint32_t xid);

/* The transport's view of a request, the core and ops serving it. */
struct rpcrdma__sreq *rpcrdma__svc_req_transport(struct rpcrdma_svc_req *req);
struct rpcrdma_server *rpcrdma__svc_req_server(struct rpcrdma_svc_req *req);
const struct rpcrdma__svc_transport_ops *rpcrdma__server_ops(struct rpcrdma_server *srv);
struct rpcrdma_loop *rpcrdma__server_loop(struct rpcrdma_server *srv);
/* The backchannels a server core keeps (backchannel.c): released at the
 * start of its finalisation, before its transport goes; their counters
 * added to the server's. */
struct rpcrdma__server_bc_hooks {
	void *list;
	void (*finalize)(struct rpcrdma_server *srv);
	void (*stats)(struct rpcrdma_server *srv, struct rpcrdma_xprt_stats *acc);
	/* Whether a backchannel's core is inside one of its callbacks: a
	 * reverse call's done runs below our transport's receive handler,
	 * or holds the requester that sits on our transport's device, and
	 * neither may be freed under it. */
	bool (*busy)(struct rpcrdma_server *srv);
};
struct rpcrdma__server_bc_hooks *rpcrdma__server_bc(struct rpcrdma_server *srv);

#endif /* RPCRDMA_RPC_CORE_H */
