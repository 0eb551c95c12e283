/*
 * Internal glue of the transport-neutral RPC core: which transport serves
 * which rpcrdma_transport value (transports.c), and the hooks tests use to
 * reach a client's or server's transport (fault injection).
 */
#ifndef RPCRDMA_RPC_CORE_H
#define RPCRDMA_RPC_CORE_H

#include <stddef.h>

#include "rpc/transport.h"

/* TCP: the largest record accepted when opts.max_record is 0. */
#define RPCRDMA__TCP_MAX_RECORD_DEFAULT ((1u << 20) + (64u << 10))

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
 * Test hooks.  rpcrdma__client_disconnect() drops the client's connection
 * now (ops->disconnect), as a network failure would: outstanding calls are
 * then sent again after a reconnect.
 */
void rpcrdma__client_disconnect(struct rpcrdma_client *clnt);
struct rpcrdma__clnt_transport *rpcrdma__client_transport(struct rpcrdma_client *clnt);
struct rpcrdma__svc_transport *rpcrdma__server_transport(struct rpcrdma_server *srv);

#endif /* RPCRDMA_RPC_CORE_H */
