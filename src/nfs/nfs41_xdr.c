/*
 * NFSv4.1 operations in the COMPOUND codec (RFC 8881 section 18):
 * SEQUENCE, EXCHANGE_ID, CREATE_SESSION, BIND_CONN_TO_SESSION,
 * DESTROY_SESSION, DESTROY_CLIENTID, RECLAIM_COMPLETE, and OPEN, CLOSE
 * and DELEGRETURN as minor version 1 has them.  nfs4_xdr.c hands every
 * operation it does not know to these two functions, so one COMPOUND
 * builder and one Write-list rule serve both minor versions.
 *
 * What is sent is the one form this client uses; what is decoded is the
 * whole of what a server may send, bounded:
 *  - EXCHANGE_ID goes with SP4_NONE and no implementation id; a reply
 *    that names another state protection is refused (we did not ask), the
 *    server's owner, scope and implementation id are checked and skipped
 *    (their lengths kept), each at most NFS4_OPAQUE_LIMIT.
 *  - CREATE_SESSION offers one callback security flavor, AUTH_NONE or
 *    AUTH_SYS; a decoder (a server's) walks up to 8 of them, RPCSEC_GSS
 *    handles included, and keeps the first flavor.
 *  - OPEN is OPEN4_NOCREATE with CLAIM_NULL or CLAIM_FH; its result
 *    decodes every delegation arm, the ACE's who skipped.
 */
#include <errno.h>
#include <string.h>

#include "nfs4_codec.h"

#define x_opaque rpcrdma__nfs4_x_opaque
#define x_bitmap rpcrdma__nfs4_x_bitmap
#define x_stateid rpcrdma__nfs4_x_stateid

#define SP4_NONE 0u
#define OPEN4_NOCREATE 0u
#define NFS_LIMIT_SIZE 1u
#define NFS_LIMIT_BLOCKS 2u
#define WND4_CONTENTION 1u
#define WND4_RESOURCE 2u
#define AUTH_NONE 0u
#define AUTH_SYS 1u
#define RPCSEC_GSS 6u
#define SEC_PARMS_MAX 8u

static const uint8_t zeros[RPCRDMA_NFS4_OPAQUE_LIMIT];

static int x_sessionid(struct nx *n, uint8_t *id)
{
	return n->enc ? rpcrdma_xdr_encode_fixed_opaque(n->x, id, RPCRDMA_NFS4_SESSIONID_SIZE)
		      : rpcrdma_xdr_decode_fixed_opaque(n->x, id, RPCRDMA_NFS4_SESSIONID_SIZE);
}

/*
 * An opaque whose content we do not keep: decoded, checked against @max and
 * skipped; encoded as @len zero bytes (servers in tests, the fuzzer).
 */
static int x_skipped(struct nx *n, uint32_t *len, uint32_t max)
{
	if (n->enc) {
		if (*len > max || *len > sizeof(zeros))
			return RPCRDMA_ERR_TOO_LONG;
		return rpcrdma_xdr_encode_opaque(n->x, zeros, *len);
	}
	TRY(rpcrdma_xdr_decode_opaque_len(n->x, max, len));
	return rpcrdma_xdr_skip(n->x, rpcrdma_xdr_align(*len));
}

/* nfs_impl_id4<1>: we send none; one from the peer is skipped. */
static int x_impl_id(struct nx *n)
{
	uint32_t count = 0, len;

	if (n->enc)
		return rpcrdma_xdr_encode_array_len(n->x, 0);
	TRY(rpcrdma_xdr_decode_array_len(n->x, 1, 20, &count));
	if (!count)
		return 0;
	TRY(x_skipped(n, &len, RPCRDMA_NFS4_OPAQUE_LIMIT)); /* nii_domain */
	TRY(x_skipped(n, &len, RPCRDMA_NFS4_OPAQUE_LIMIT)); /* nii_name */
	return rpcrdma_xdr_skip(n->x, 12);                    /* nii_date */
}

static int x_chan_attrs(struct nx *n, struct rpcrdma_nfs41_chan_attrs *a)
{
	uint32_t count = a->nrdma_ird;

	TRY(x_u32(n, &a->headerpadsize));
	TRY(x_u32(n, &a->maxrequestsize));
	TRY(x_u32(n, &a->maxresponsesize));
	TRY(x_u32(n, &a->maxresponsesize_cached));
	TRY(x_u32(n, &a->maxoperations));
	TRY(x_u32(n, &a->maxrequests));
	if (n->enc) {
		if (count > 1)
			return RPCRDMA_ERR_TOO_LONG;
		TRY(rpcrdma_xdr_encode_array_len(n->x, count));
	} else {
		TRY(rpcrdma_xdr_decode_array_len(n->x, 1, 4, &count));
		a->nrdma_ird = count;
		a->rdma_ird = 0;
	}
	return count ? x_u32(n, &a->rdma_ird) : 0;
}

/* callback_sec_parms4<>: one sent; up to SEC_PARMS_MAX walked, the first kept. */
static int x_cb_sec(struct nx *n, uint32_t *flavor)
{
	uint32_t count = 1, f, len;

	if (n->enc) {
		TRY(rpcrdma_xdr_encode_array_len(n->x, 1));
		TRY(x_u32(n, flavor));
		if (*flavor == AUTH_NONE)
			return 0;
		if (*flavor == AUTH_SYS) {
			/* stamp, machinename "", uid, gid, no gids */
			for (int i = 0; i < 5; i++)
				TRY(rpcrdma_xdr_encode_u32(n->x, 0));
			return 0;
		}
		return RPCRDMA_ERR_BAD_VALUE;
	}
	TRY(rpcrdma_xdr_decode_array_len(n->x, SEC_PARMS_MAX, 4, &count));
	*flavor = AUTH_NONE;
	for (uint32_t i = 0; i < count; i++) {
		TRY(rpcrdma_xdr_decode_u32(n->x, &f));
		if (i == 0)
			*flavor = f;
		switch (f) {
		case AUTH_NONE:
			break;
		case AUTH_SYS:
			TRY(rpcrdma_xdr_skip(n->x, 4));        /* stamp */
			TRY(x_skipped(n, &len, 255));           /* machinename */
			TRY(rpcrdma_xdr_skip(n->x, 8));        /* uid, gid */
			TRY(rpcrdma_xdr_decode_array_len(n->x, 16, 4, &len));
			TRY(rpcrdma_xdr_skip(n->x, (size_t)len * 4));
			break;
		case RPCSEC_GSS:
			TRY(rpcrdma_xdr_skip(n->x, 4)); /* service */
			TRY(x_skipped(n, &len, RPCRDMA_NFS4_OPAQUE_LIMIT));
			TRY(x_skipped(n, &len, RPCRDMA_NFS4_OPAQUE_LIMIT));
			break;
		default:
			return RPCRDMA_ERR_BAD_VALUE;
		}
	}
	if (count == 0 || (*flavor != AUTH_NONE && *flavor != AUTH_SYS))
		return RPCRDMA_ERR_BAD_VALUE; /* nothing we could encode again */
	return 0;
}

static int x_owner(struct nx *n, uint8_t *owner, uint32_t *len)
{
	return x_opaque(n, owner, len, RPCRDMA_NFS41_OWNER_MAX);
}

static int x_open_args(struct nx *n, struct rpcrdma_nfs4_op *op)
{
	uint32_t seqid = 0, opentype = OPEN4_NOCREATE;

	TRY(x_u32(n, &seqid)); /* ignored in minor version 1 */
	TRY(x_u32(n, &op->arg.open.share_access));
	TRY(x_u32(n, &op->arg.open.share_deny));
	TRY(x_u64(n, &op->arg.open.clientid));
	TRY(x_owner(n, op->arg.open.owner, &op->arg.open.owner_len));
	TRY(x_u32(n, &opentype));
	if (opentype != OPEN4_NOCREATE)
		return RPCRDMA_ERR_BAD_VALUE;
	TRY(x_u32(n, &op->arg.open.claim));
	switch (op->arg.open.claim) {
	case RPCRDMA_CLAIM_NULL:
		TRY(x_str(n, op->arg.open.name, &op->arg.open.name_len, RPCRDMA_NFS4_NAME_MAX));
		return op->arg.open.name_len ? 0 : RPCRDMA_ERR_BAD_VALUE;
	case RPCRDMA_CLAIM_FH:
		return 0;
	default:
		return RPCRDMA_ERR_BAD_VALUE;
	}
}

static int x_ace(struct nx *n, struct rpcrdma_nfs4_op *op)
{
	uint32_t who = 0;

	TRY(x_u32(n, &op->res.open.ace_type));
	TRY(x_u32(n, &op->res.open.ace_flag));
	TRY(x_u32(n, &op->res.open.ace_mask));
	return x_skipped(n, &who, RPCRDMA_NFS4_OPAQUE_LIMIT);
}

static int x_open_res(struct nx *n, struct rpcrdma_nfs4_op *op)
{
#define r (&op->res.open)
	TRY(x_stateid(n, &r->stateid));
	TRY(x_bool(n, &r->cinfo_atomic));
	TRY(x_u64(n, &r->cinfo_before));
	TRY(x_u64(n, &r->cinfo_after));
	TRY(x_u32(n, &r->rflags));
	TRY(x_bitmap(n, &r->attrset));
	TRY(x_u32(n, &r->deleg_type));
	switch (r->deleg_type) {
	case RPCRDMA_OPEN_DELEGATE_NONE:
		return 0;
	case RPCRDMA_OPEN_DELEGATE_READ:
		TRY(x_stateid(n, &r->deleg_stateid));
		TRY(x_bool(n, &r->deleg_recall));
		return x_ace(n, op);
	case RPCRDMA_OPEN_DELEGATE_WRITE:
		TRY(x_stateid(n, &r->deleg_stateid));
		TRY(x_bool(n, &r->deleg_recall));
		TRY(x_u32(n, &r->limitby));
		if (r->limitby == NFS_LIMIT_SIZE) {
			TRY(x_u64(n, &r->limit_size));
		} else if (r->limitby == NFS_LIMIT_BLOCKS) {
			TRY(x_u32(n, &r->limit_a));
			TRY(x_u32(n, &r->limit_b));
		} else {
			return RPCRDMA_ERR_BAD_VALUE;
		}
		return x_ace(n, op);
	case RPCRDMA_OPEN_DELEGATE_NONE_EXT:
		TRY(x_u32(n, &r->why_none));
		if (r->why_none == WND4_CONTENTION || r->why_none == WND4_RESOURCE)
			return x_bool(n, &r->why_flag);
		return 0;
	default:
		return RPCRDMA_ERR_BAD_VALUE;
	}
#undef r
}

int rpcrdma__nfs41_op_args(struct nx *n, struct rpcrdma_nfs4_op *op)
{
	switch (op->op) {
	case RPCRDMA_NFS4_OP_SEQUENCE:
		TRY(x_sessionid(n, op->arg.sequence.sessionid));
		TRY(x_u32(n, &op->arg.sequence.seqid));
		TRY(x_u32(n, &op->arg.sequence.slotid));
		TRY(x_u32(n, &op->arg.sequence.highest_slotid));
		return x_bool(n, &op->arg.sequence.cachethis);
	case RPCRDMA_NFS4_OP_EXCHANGE_ID: {
		uint32_t how = SP4_NONE;

		TRY(n->enc ? rpcrdma_xdr_encode_fixed_opaque(n->x, op->arg.exchange_id.verifier, 8)
			   : rpcrdma_xdr_decode_fixed_opaque(n->x, op->arg.exchange_id.verifier, 8));
		TRY(x_owner(n, op->arg.exchange_id.owner, &op->arg.exchange_id.owner_len));
		TRY(x_u32(n, &op->arg.exchange_id.flags));
		TRY(x_u32(n, &how));
		if (how != SP4_NONE)
			return RPCRDMA_ERR_BAD_VALUE;
		return x_impl_id(n);
	}
	case RPCRDMA_NFS4_OP_CREATE_SESSION:
		TRY(x_u64(n, &op->arg.create_session.clientid));
		TRY(x_u32(n, &op->arg.create_session.seqid));
		TRY(x_u32(n, &op->arg.create_session.flags));
		TRY(x_chan_attrs(n, &op->arg.create_session.fore));
		TRY(x_chan_attrs(n, &op->arg.create_session.back));
		TRY(x_u32(n, &op->arg.create_session.cb_program));
		return x_cb_sec(n, &op->arg.create_session.cb_secflavor);
	case RPCRDMA_NFS4_OP_BIND_CONN_TO_SESSION:
		TRY(x_sessionid(n, op->arg.bind_conn.sessionid));
		TRY(x_u32(n, &op->arg.bind_conn.dir));
		return x_bool(n, &op->arg.bind_conn.rdma_mode);
	case RPCRDMA_NFS4_OP_DESTROY_SESSION:
		return x_sessionid(n, op->arg.destroy_session);
	case RPCRDMA_NFS4_OP_DESTROY_CLIENTID:
		return x_u64(n, &op->arg.destroy_clientid);
	case RPCRDMA_NFS4_OP_RECLAIM_COMPLETE:
		return x_bool(n, &op->arg.reclaim_complete_one_fs);
	case RPCRDMA_NFS4_OP_OPEN:
		return x_open_args(n, op);
	case RPCRDMA_NFS4_OP_CLOSE: {
		uint32_t seqid = 0;

		TRY(x_u32(n, &seqid));
		return x_stateid(n, &op->arg.close);
	}
	case RPCRDMA_NFS4_OP_DELEGRETURN:
		return x_stateid(n, &op->arg.delegreturn);
	default:
		return RPCRDMA_ERR_BAD_VALUE;
	}
}

int rpcrdma__nfs41_op_res(struct nx *n, struct rpcrdma_nfs4_op *op)
{
	switch (op->op) {
	case RPCRDMA_NFS4_OP_SEQUENCE:
		TRY(x_sessionid(n, op->res.sequence.sessionid));
		TRY(x_u32(n, &op->res.sequence.seqid));
		TRY(x_u32(n, &op->res.sequence.slotid));
		TRY(x_u32(n, &op->res.sequence.highest_slotid));
		TRY(x_u32(n, &op->res.sequence.target_highest_slotid));
		return x_u32(n, &op->res.sequence.status_flags);
	case RPCRDMA_NFS4_OP_EXCHANGE_ID: {
		uint32_t how = SP4_NONE;

		TRY(x_u64(n, &op->res.exchange_id.clientid));
		TRY(x_u32(n, &op->res.exchange_id.seqid));
		TRY(x_u32(n, &op->res.exchange_id.flags));
		TRY(x_u32(n, &how));
		/* We asked for SP4_NONE: the server must answer it (RFC 8881
		 * 18.35.4); its other arms are not ours to parse. */
		if (how != SP4_NONE)
			return RPCRDMA_ERR_BAD_VALUE;
		TRY(x_u64(n, &op->res.exchange_id.so_minor_id));
		TRY(x_skipped(n, &op->res.exchange_id.so_major_len, RPCRDMA_NFS4_OPAQUE_LIMIT));
		TRY(x_skipped(n, &op->res.exchange_id.scope_len, RPCRDMA_NFS4_OPAQUE_LIMIT));
		return x_impl_id(n);
	}
	case RPCRDMA_NFS4_OP_CREATE_SESSION:
		TRY(x_sessionid(n, op->res.create_session.sessionid));
		TRY(x_u32(n, &op->res.create_session.seqid));
		TRY(x_u32(n, &op->res.create_session.flags));
		TRY(x_chan_attrs(n, &op->res.create_session.fore));
		return x_chan_attrs(n, &op->res.create_session.back);
	case RPCRDMA_NFS4_OP_BIND_CONN_TO_SESSION:
		TRY(x_sessionid(n, op->res.bind_conn.sessionid));
		TRY(x_u32(n, &op->res.bind_conn.dir));
		return x_bool(n, &op->res.bind_conn.rdma_mode);
	case RPCRDMA_NFS4_OP_OPEN:
		return x_open_res(n, op);
	case RPCRDMA_NFS4_OP_CLOSE:
		return x_stateid(n, &op->res.close);
	case RPCRDMA_NFS4_OP_DESTROY_SESSION:
	case RPCRDMA_NFS4_OP_DESTROY_CLIENTID:
	case RPCRDMA_NFS4_OP_RECLAIM_COMPLETE:
	case RPCRDMA_NFS4_OP_DELEGRETURN:
		return 0;
	default:
		return RPCRDMA_ERR_BAD_VALUE;
	}
}

size_t rpcrdma__nfs41_res_max(const struct rpcrdma_nfs4_op *op)
{
	const size_t opaque = 4 + RPCRDMA_NFS4_OPAQUE_LIMIT;
	const size_t impl = 4 + 2 * opaque + 12;
	const size_t attrs = 4 * 6 + 4 + 4;
	const size_t bitmap = 4 + 4 * 64; /* the decoder takes up to 64 words */
	size_t body;

	switch (op->op) {
	case RPCRDMA_NFS4_OP_SEQUENCE:
		body = RPCRDMA_NFS4_SESSIONID_SIZE + 5 * 4;
		break;
	case RPCRDMA_NFS4_OP_EXCHANGE_ID:
		body = 8 + 4 + 4 + 4 + 8 + 2 * opaque + impl;
		break;
	case RPCRDMA_NFS4_OP_CREATE_SESSION:
		body = RPCRDMA_NFS4_SESSIONID_SIZE + 8 + 2 * attrs;
		break;
	case RPCRDMA_NFS4_OP_BIND_CONN_TO_SESSION:
		body = RPCRDMA_NFS4_SESSIONID_SIZE + 8;
		break;
	case RPCRDMA_NFS4_OP_OPEN:
		/* stateid, cinfo, rflags, attrset, then the largest arm (WRITE) */
		body = 16 + 20 + 4 + bitmap + 4 + 16 + 4 + 12 + 12 + opaque;
		break;
	case RPCRDMA_NFS4_OP_CLOSE:
		body = 16;
		break;
	case RPCRDMA_NFS4_OP_DESTROY_SESSION:
	case RPCRDMA_NFS4_OP_DESTROY_CLIENTID:
	case RPCRDMA_NFS4_OP_RECLAIM_COMPLETE:
	case RPCRDMA_NFS4_OP_DELEGRETURN:
		body = 0;
		break;
	default:
		return 0;
	}
	return 8 + body;
}
