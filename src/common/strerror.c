/*
 * Error descriptions for the library's own codes and for negated errno
 * values, so a caller needs one function whatever the layer that failed.
 */
#include <string.h>

#include "rpcrdma/common.h"
#include "rpcrdma/rpc.h"

const char *rpcrdma_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case RPCRDMA_ERR_TRUNCATED:
		return "input ends before the item";
	case RPCRDMA_ERR_TOO_LONG:
		return "length or count over the allowed bound";
	case RPCRDMA_ERR_BAD_VALUE:
		return "value not allowed by the protocol";
	case RPCRDMA_ERR_NOSPACE:
		return "encode buffer too small";
	case RPCRDMA_ERR_OVERFLOW:
		return "wire values overflow";
	case RPCRDMA_ERR_VERSION:
		return "unsupported RPC-over-RDMA version";
	case RPCRDMA_ERR_BAD_HEADER:
		return "malformed RPC-over-RDMA header";
	case RPCRDMA_ERR_DROP:
		return "message dropped";
	case RPCRDMA_ERR_BAD_OPTION:
		return "unknown RPC-over-RDMA optional feature";
	case RPCRDMA_ERR_BAD_RPC:
		return "malformed RPC message";
	case RPCRDMA_ERR_RPC_REJECTED:
		return "the server refused the call (see the reply status)";
	case RPCRDMA_ERR_TRANSPORT_ERROR:
		return "the peer answered with RDMA_ERROR";
	case RPCRDMA_ERR_TIMEDOUT:
		return "no reply before the time-out";
	case RPCRDMA_ERR_CANCELLED:
		return "call cancelled";
	case RPCRDMA_ERR_BACKCHANNEL_OFF:
		return "the peer has not enabled reverse-direction calls";
	}
	if (err < 0 && err > -4096)
		return strerror(-err);
	return "unknown error";
}
