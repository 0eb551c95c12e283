/*
 * Which transport serves a client or server: TCP with record marking is
 * always built; RPC-over-RDMA (src/xprtrdma/) only when its CMake defines
 * RPCRDMA_HAVE_RDMA_XPRT, so the core links without it.  Also the one
 * address resolver the core and the transports share.
 */
#include <errno.h>
#include <netdb.h>
#include <string.h>

#include "common/trace.h"
#include "rpc/core.h"
#include "rpc/service_port.h"

int rpcrdma__clnt_ops_for(enum rpcrdma_transport kind,
			  const struct rpcrdma__clnt_transport_ops **out)
{
	switch (kind) {
	case RPCRDMA_TRANSPORT_TCP:
		*out = &rpcrdma__tcp_clnt_ops;
		return 0;
	case RPCRDMA_TRANSPORT_RDMA:
#ifdef RPCRDMA_HAVE_RDMA_XPRT
		*out = &rpcrdma__rdma_clnt_ops;
		return 0;
#else
		return -EPROTONOSUPPORT;
#endif
	}
	return -EINVAL;
}

int rpcrdma__svc_ops_for(enum rpcrdma_transport kind, const struct rpcrdma__svc_transport_ops **out)
{
	switch (kind) {
	case RPCRDMA_TRANSPORT_TCP:
		*out = &rpcrdma__tcp_svc_ops;
		return 0;
	case RPCRDMA_TRANSPORT_RDMA:
#ifdef RPCRDMA_HAVE_RDMA_XPRT
		*out = &rpcrdma__rdma_svc_ops;
		return 0;
#else
		return -EPROTONOSUPPORT;
#endif
	}
	return -EINVAL;
}

/*
 * getaddrinfo()'s failure as the caller can act on it: only a name that
 * does not resolve is -EHOSTUNREACH; a bad service, a name server that
 * failed for now, and a local failure each say so.
 */
static int resolve_error(int eai)
{
	switch (eai) {
	case EAI_SERVICE:
		return RPCRDMA_ERR_NO_SERVICE;
	case EAI_AGAIN:
		return -EAGAIN;
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_SYSTEM:
		return errno ? -errno : -EHOSTUNREACH;
	default:
		return -EHOSTUNREACH;
	}
}

int rpcrdma__resolve(const char *host, const char *service, bool passive,
		     struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints, *res = NULL;
	int rc;

	if (service && rpcrdma__service_out_of_range(service)) {
		RPCRDMA__TRACE_BAD_ARG(RPCRDMA_ERR_NO_SERVICE,
				       "service \"%s\": a number above 65535, or empty", service);
		return RPCRDMA_ERR_NO_SERVICE;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	hints.ai_flags = passive ? AI_PASSIVE : 0;
	rc = getaddrinfo(host, service, &hints, &res);
	if (rc == EAI_SERVICE)
		RPCRDMA__TRACE_BAD_ARG(RPCRDMA_ERR_NO_SERVICE,
				       "service \"%s\": neither a port nor a name in /etc/services",
				       service ? service : "");
	if (rc != 0 || !res)
		return resolve_error(rc);
	if (res->ai_addrlen > sizeof(*ss)) {
		freeaddrinfo(res);
		return -EHOSTUNREACH;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}
