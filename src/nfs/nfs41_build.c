/*
 * Appending NFSv4.1 operations to a COMPOUND (RFC 8881 section 18): the
 * arguments checked against what the codec can send, as nfs4_clnt.c does
 * for minor version 0.
 */
#include <errno.h>
#include <string.h>

#include "rpcrdma/nfs4.h"

#include "nfs4_codec.h"

struct rpcrdma_nfs4_op *rpcrdma_nfs4_sequence(struct rpcrdma_nfs4_compound *c)
{
	return rpcrdma__nfs4_append(c, RPCRDMA_NFS4_OP_SEQUENCE);
}

struct rpcrdma_nfs4_op *rpcrdma_nfs4_exchange_id(struct rpcrdma_nfs4_compound *c,
						 const uint8_t verifier[8], const void *owner,
						 uint32_t owner_len, uint32_t flags)
{
	struct rpcrdma_nfs4_op *op;

	if (!verifier || !owner || !owner_len || owner_len > RPCRDMA_NFS41_OWNER_MAX)
		return NULL;
	op = rpcrdma__nfs4_append(c, RPCRDMA_NFS4_OP_EXCHANGE_ID);
	if (!op)
		return NULL;
	memcpy(op->arg.exchange_id.verifier, verifier, 8);
	memcpy(op->arg.exchange_id.owner, owner, owner_len);
	op->arg.exchange_id.owner_len = owner_len;
	op->arg.exchange_id.flags = flags;
	return op;
}

struct rpcrdma_nfs4_op *
rpcrdma_nfs4_create_session(struct rpcrdma_nfs4_compound *c, uint64_t clientid, uint32_t seqid,
			    uint32_t flags, const struct rpcrdma_nfs41_chan_attrs *fore,
			    const struct rpcrdma_nfs41_chan_attrs *back, uint32_t cb_program)
{
	struct rpcrdma_nfs4_op *op;

	if (!fore || !back || fore->nrdma_ird > 1 || back->nrdma_ird > 1)
		return NULL;
	op = rpcrdma__nfs4_append(c, RPCRDMA_NFS4_OP_CREATE_SESSION);
	if (!op)
		return NULL;
	op->arg.create_session.clientid = clientid;
	op->arg.create_session.seqid = seqid;
	op->arg.create_session.flags = flags;
	op->arg.create_session.fore = *fore;
	op->arg.create_session.back = *back;
	op->arg.create_session.cb_program = cb_program;
	op->arg.create_session.cb_secflavor = 0; /* AUTH_NONE */
	return op;
}

struct rpcrdma_nfs4_op *
rpcrdma_nfs4_bind_conn_to_session(struct rpcrdma_nfs4_compound *c,
				  const uint8_t sessionid[RPCRDMA_NFS4_SESSIONID_SIZE],
				  uint32_t dir, bool rdma_mode)
{
	struct rpcrdma_nfs4_op *op;

	if (!sessionid)
		return NULL;
	op = rpcrdma__nfs4_append(c, RPCRDMA_NFS4_OP_BIND_CONN_TO_SESSION);
	if (!op)
		return NULL;
	memcpy(op->arg.bind_conn.sessionid, sessionid, RPCRDMA_NFS4_SESSIONID_SIZE);
	op->arg.bind_conn.dir = dir;
	op->arg.bind_conn.rdma_mode = rdma_mode;
	return op;
}

struct rpcrdma_nfs4_op *
rpcrdma_nfs4_destroy_session(struct rpcrdma_nfs4_compound *c,
			     const uint8_t sessionid[RPCRDMA_NFS4_SESSIONID_SIZE])
{
	struct rpcrdma_nfs4_op *op;

	if (!sessionid)
		return NULL;
	op = rpcrdma__nfs4_append(c, RPCRDMA_NFS4_OP_DESTROY_SESSION);
	if (op)
		memcpy(op->arg.destroy_session, sessionid, RPCRDMA_NFS4_SESSIONID_SIZE);
	return op;
}

struct rpcrdma_nfs4_op *rpcrdma_nfs4_destroy_clientid(struct rpcrdma_nfs4_compound *c,
						      uint64_t clientid)
{
	struct rpcrdma_nfs4_op *op = rpcrdma__nfs4_append(c, RPCRDMA_NFS4_OP_DESTROY_CLIENTID);

	if (op)
		op->arg.destroy_clientid = clientid;
	return op;
}

struct rpcrdma_nfs4_op *rpcrdma_nfs4_reclaim_complete(struct rpcrdma_nfs4_compound *c, bool one_fs)
{
	struct rpcrdma_nfs4_op *op = rpcrdma__nfs4_append(c, RPCRDMA_NFS4_OP_RECLAIM_COMPLETE);

	if (op)
		op->arg.reclaim_complete_one_fs = one_fs;
	return op;
}

struct rpcrdma_nfs4_op *rpcrdma_nfs4_open(struct rpcrdma_nfs4_compound *c, uint32_t share_access,
					  uint64_t clientid, const void *owner, uint32_t owner_len,
					  const char *name)
{
	struct rpcrdma_nfs4_op *op;
	size_t len = name ? strlen(name) : 0;
	uint32_t access = share_access & 0xffu, want = share_access & ~0xffu;

	if (!owner || !owner_len || owner_len > RPCRDMA_NFS41_OWNER_MAX ||
	    (name && (!len || len > RPCRDMA_NFS4_NAME_MAX)))
		return NULL;
	/* One of READ, WRITE, BOTH; the wishes of RFC 8881 18.16.3 only. */
	if (access < RPCRDMA_OPEN4_SHARE_ACCESS_READ || access > RPCRDMA_OPEN4_SHARE_ACCESS_BOTH ||
	    (want & ~0xff00u) || want > 0x0500u)
		return NULL;
	op = rpcrdma__nfs4_append(c, RPCRDMA_NFS4_OP_OPEN);
	if (!op)
		return NULL;
	op->arg.open.share_access = share_access;
	op->arg.open.share_deny = 0;
	op->arg.open.clientid = clientid;
	memcpy(op->arg.open.owner, owner, owner_len);
	op->arg.open.owner_len = owner_len;
	if (name) {
		op->arg.open.claim = RPCRDMA_CLAIM_NULL;
		memcpy(op->arg.open.name, name, len + 1);
		op->arg.open.name_len = (uint32_t)len;
	} else {
		op->arg.open.claim = RPCRDMA_CLAIM_FH;
	}
	return op;
}

struct rpcrdma_nfs4_op *rpcrdma_nfs4_close(struct rpcrdma_nfs4_compound *c,
					   const struct rpcrdma_nfs4_stateid *stateid)
{
	struct rpcrdma_nfs4_op *op;

	if (!stateid)
		return NULL;
	op = rpcrdma__nfs4_append(c, RPCRDMA_NFS4_OP_CLOSE);
	if (op)
		op->arg.close = *stateid;
	return op;
}

struct rpcrdma_nfs4_op *rpcrdma_nfs4_delegreturn(struct rpcrdma_nfs4_compound *c,
						 const struct rpcrdma_nfs4_stateid *stateid)
{
	struct rpcrdma_nfs4_op *op;

	if (!stateid)
		return NULL;
	op = rpcrdma__nfs4_append(c, RPCRDMA_NFS4_OP_DELEGRETURN);
	if (op)
		op->arg.delegreturn = *stateid;
	return op;
}
