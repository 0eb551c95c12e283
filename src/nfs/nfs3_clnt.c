/*
 * Calling NFSv3 and MOUNT v3 servers: the upper-layer binding decides, per
 * procedure, what a call offers the RDMA transport (RFC 8267 section 4).
 */
#include <errno.h>
#include <string.h>

#include "rpcrdma/nfs3.h"

int rpcrdma_nfs3_call(struct rpcrdma_client *clnt, uint32_t proc, void *args, void *res)
{
	struct rpcrdma_call call;
	uint32_t count = 0;

	if (!clnt || proc >= RPCRDMA_NFS3_NPROCS || (!args && proc) || (!res && proc))
		return -EINVAL;
	memset(&call, 0, sizeof(call));
	call.proc = proc;
	call.encode_args = rpcrdma_nfs3_encode_args(proc);
	call.args = args;
	call.decode_res = rpcrdma_nfs3_decode_res(proc);
	call.res = res;
	switch (proc) {
	case RPCRDMA_NFS3_READ: {
		struct rpcrdma_nfs3_read_res *r = res;

		count = ((struct rpcrdma_nfs3_read_args *)args)->count;
		if (count > r->data_max)
			return -EINVAL; /* the reply could not be placed */
		/* The data lands where the caller wants it. */
		call.ddp_buf = r->data;
		call.ddp_len = count;
		break;
	}
	case RPCRDMA_NFS3_READLINK: {
		struct rpcrdma_nfs3_readlink_res *r = res;

		call.ddp_buf = r->path.s;
		call.ddp_len = RPCRDMA_NFS3_PATH_MAX;
		break;
	}
	case RPCRDMA_NFS3_READDIR:
	case RPCRDMA_NFS3_READDIRPLUS:
		count = ((struct rpcrdma_nfs3_readdir_args *)args)->count;
		break;
	default:
		break;
	}
	call.max_reply = rpcrdma_nfs3_max_reply(proc, count);
	return rpcrdma_client_call(clnt, &call);
}

int rpcrdma_mount3_mnt(struct rpcrdma_loop *loop, const char *host, const char *service,
		       const char *path, const struct rpcrdma_opaque_auth *cred,
		       struct rpcrdma_nfs3_fh *fh)
{
	struct rpcrdma_nfs3_path p;
	struct rpcrdma_mount3_mnt_res res;
	struct rpcrdma_client_opts co;
	struct rpcrdma_client *c;
	struct rpcrdma_call call;
	size_t len = path ? strlen(path) : 0;
	int rc;

	if (!loop || !path || !fh || len > RPCRDMA_NFS3_PATH_MAX)
		return -EINVAL;
	p.len = (uint32_t)len;
	memcpy(p.s, path, len + 1);
	rpcrdma_client_opts_default(&co);
	co.transport = RPCRDMA_TRANSPORT_TCP;
	co.cred = cred;
	co.timeout_ms = 15000;
	rc = rpcrdma_client_create(loop, host, service, RPCRDMA_MOUNT_PROGRAM, RPCRDMA_MOUNT_V3,
				   &co, &c);
	if (rc)
		return rc;
	memset(&call, 0, sizeof(call));
	memset(&res, 0, sizeof(res));
	call.proc = RPCRDMA_MOUNT3_MNT;
	call.encode_args = rpcrdma_mount3_xdr_path_enc;
	call.args = &p;
	call.decode_res = rpcrdma_mount3_xdr_mnt_res_dec;
	call.res = &res;
	rc = rpcrdma_client_call(c, &call);
	rpcrdma_client_destroy(c);
	if (rc)
		return rc;
	if (res.status)
		return (int)res.status;
	*fh = res.fh;
	return 0;
}
