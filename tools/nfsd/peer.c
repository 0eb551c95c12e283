/*
 * The client address of a request.  The public API has no accessor for it
 * yet (the one wanted: rpcrdma_svc_peer(req), returning the transport's
 * rpcrdma__sreq.peer), so until the library offers one this reads it
 * through the core's request, whose first members are the server, the
 * transport's request and the RPC message.  WARNING: that is the layout
 * of struct rpcrdma_svc_req in src/rpc/svc.c; each lookup checks it
 * against rpcrdma_svc_msg(), and a mismatch gives NULL, which every
 * caller treats as a host to refuse: a changed layout fails closed.
 */
#include <stddef.h>

#include "peer.h"
#include "rpc/transport.h"

struct svc_req_head {
	struct rpcrdma_server *srv;
	struct rpcrdma__sreq *t;
	struct rpcrdma_rpc_msg msg;
};

const struct sockaddr *nfsd_peer(const struct rpcrdma_svc_req *req)
{
	const struct svc_req_head *h = (const void *)req;

	if (!req || (const void *)rpcrdma_svc_msg(req) != (const void *)&h->msg || !h->t)
		return NULL;
	return h->t->peer;
}
