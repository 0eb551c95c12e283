/*
 * Error descriptions for the library's own codes and for negated errno
 * values, so a caller needs one function whatever the layer that failed.
 */
#include <string.h>

#include "rpcrdma/common.h"

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
	}
	if (err < 0 && err > -4096)
		return strerror(-err);
	return "unknown error";
}
