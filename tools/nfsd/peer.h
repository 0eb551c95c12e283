/* The client address of a request (peer.c says how it is found). */
#ifndef RPCRDMA_NFSD_PEER_H
#define RPCRDMA_NFSD_PEER_H

#include <sys/socket.h>

#include "rpcrdma/rpc.h"

/* The address the request came from, or NULL when it cannot be told. */
const struct sockaddr *nfsd_peer(const struct rpcrdma_svc_req *req);

#endif /* RPCRDMA_NFSD_PEER_H */
