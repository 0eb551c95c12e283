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
#define RPCRDMA__TCP_MAX_RECORD_DEFAULT ((1u << 20) + (64u << 10))

/*
 * The server's resource bounds (rpcrdma_server_opts, docs/security.md),
 * with the defaults applied.  Why these defaults: six idle minutes is what
 * the Linux NFS server allows; 30 seconds for a call to arrive or a reply
 * to move is far beyond any healthy network and short enough that a
 * stalled peer is gone long before a client's own time-out would retry;
 * 8 MiB of queued replies covers a pipeline of eight 1 MiB READs, which
 * fills any link a client can keep up with; 256 MiB of Read-chunk buffers
 * is 64 concurrent 4 MiB WRITEs per transport.
 */
#define RPCRDMA__SVC_MAX_CONNS_DEFAULT 1024u
#define RPCRDMA__SVC_IDLE_MS_DEFAULT 360000u
#define RPCRDMA__SVC_RECORD_MS_DEFAULT 30000u
#define RPCRDMA__SVC_QUEUED_DEFAULT ((size_t)8 << 20)
#define RPCRDMA__SVC_DRAIN_MS_DEFAULT 30000u
#define RPCRDMA__SVC_READ_BYTES_DEFAULT ((size_t)256 << 20)

struct rpcrdma__svc_bounds {
	unsigned int max_conns;
	uint32_t idle_ms, record_ms, drain_ms;
	size_t max_queued;
	size_t max_read_bytes;
	/* How often a connection looks at its clocks: a quarter of the
	 * shortest time-out, within 10 ms .. 5 s. */
	uint32_t tick_ms;
};

void rpcrdma__svc_bounds_of(const struct rpcrdma_server_opts *opts,
			    struct rpcrdma__svc_bounds *out);

/**
 * The transport ops for @kind.  Returns 0, -EINVAL for an unknown value, or
 * -EPROTONOSUPPORT for RDMA in a build without the RDMA transport.
 */
int rpcrdma__clnt_ops_for(enum rpcrdma_transport kind,
			  const struct rpcrdma__clnt_transport_ops **out);
int rpcrdma__svc_ops_for(enum rpcrdma_transport kind,
			 const struct rpcrdma__svc_transport_ops **out);

/** Resolve @host:@service for a stream socket; -EHOSTUNREACH on failure. */
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
 * Test hooks.  rpcrdma__client_disconnect() drops the client's connection
 * now (ops->disconnect), as a network failure would: outstanding calls are
 * then sent again after a reconnect.
 */
void rpcrdma__client_disconnect(struct rpcrdma_client *clnt);
struct rpcrdma__clnt_transport *rpcrdma__client_transport(struct rpcrdma_client *clnt);
struct rpcrdma__svc_transport *rpcrdma__server_transport(struct rpcrdma_server *srv);

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
};
struct rpcrdma__server_bc_hooks *rpcrdma__server_bc(struct rpcrdma_server *srv);

#endif /* RPCRDMA_RPC_CORE_H */
