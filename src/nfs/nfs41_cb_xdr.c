/*
 * CB_COMPOUND XDR (RFC 8881 section 20): what the server sends the client
 * on the backchannel, and the client's answer.  One codec per type as in
 * nfs4_xdr.c.
 *
 * Decoding the arguments is hostile-input work on the client: the
 * operation count is bounded by RPCRDMA_NFS41_CB_MAX_OPS (above it only the
 * first operation is read; the service answers NFS4ERR_TOO_MANY_OPS), and at the first
 * operation this codec cannot frame it stops, keeping that operation's
 * number, since its arguments' length is unknown and the evaluation
 * stops at its error anyway (RFC 8881 16.2.3, 20.1).  CB_SEQUENCE's
 * referring-call lists are walked, as many as the call holds.  Tags are
 * kept up to RPCRDMA_NFS41_CB_TAG_MAX bytes, to be echoed (16.2.3: the
 * reply's tag SHOULD be the call's): any a call within the sizes we offer
 * can carry.  A longer one is skipped; its call is then larger than we
 * offered and gets NFS4ERR_REQ_TOO_BIG.  (Linux's client keeps 512 bytes
 * and refuses longer tags with GARBAGE_ARGS.)
 */
#include <errno.h>
#include <string.h>

#include "nfs4_codec.h"

static int x_sessionid(struct nx *n, uint8_t *id)
{
	return n->enc ? rpcrdma_xdr_encode_fixed_opaque(n->x, id, RPCRDMA_NFS4_SESSIONID_SIZE)
		      : rpcrdma_xdr_decode_fixed_opaque(n->x, id, RPCRDMA_NFS4_SESSIONID_SIZE);
}

/* Whether @op is one this codec frames. */
static bool framed(uint32_t op)
{
	return op == RPCRDMA_NFS4_OP_CB_SEQUENCE || op == RPCRDMA_NFS4_OP_CB_RECALL;
}

/* Whether @op is a callback operation of the protocol (RFC 8881, 7862). */
static bool in_protocol(uint32_t op)
{
	return op >= RPCRDMA_NFS4_OP_CB_GETATTR && op <= RPCRDMA_NFS4_OP_CB_OFFLOAD;
}

static int x_referring(struct nx *n, uint32_t *nlists)
{
	uint32_t count = 0, calls;
	uint8_t sid[RPCRDMA_NFS4_SESSIONID_SIZE];

	if (n->enc) /* we send none (tests' servers) */
		return rpcrdma_xdr_encode_array_len(n->x, 0);
	/*
	 * No bound of their own: nothing is kept, and each list or call
	 * takes bytes the call must hold, so the walk ends with them.  A call
	 * within the sizes we offer is answered whatever its lists; a larger
	 * one gets NFS4ERR_REQ_TOO_BIG (RFC 8881 2.10.6.4), not GARBAGE_ARGS.
	 */
	TRY(rpcrdma_xdr_decode_array_len(n->x, UINT32_MAX, RPCRDMA_NFS4_SESSIONID_SIZE + 4,
					 &count));
	for (uint32_t i = 0; i < count; i++) {
		TRY(rpcrdma_xdr_decode_fixed_opaque(n->x, sid, sizeof(sid)));
		TRY(rpcrdma_xdr_decode_array_len(n->x, UINT32_MAX, 8, &calls));
		TRY(rpcrdma_xdr_skip(n->x, (size_t)calls * 8));
	}
	*nlists = count;
	return 0;
}

static int x_cb_op_args(struct nx *n, struct rpcrdma_nfs41_cb_op *op)
{
	switch (op->op) {
	case RPCRDMA_NFS4_OP_CB_SEQUENCE:
		TRY(x_sessionid(n, op->arg.sequence.sessionid));
		TRY(x_u32(n, &op->arg.sequence.seqid));
		TRY(x_u32(n, &op->arg.sequence.slotid));
		TRY(x_u32(n, &op->arg.sequence.highest_slotid));
		TRY(x_bool(n, &op->arg.sequence.cachethis));
		return x_referring(n, &op->arg.sequence.nreferring);
	case RPCRDMA_NFS4_OP_CB_RECALL:
		TRY(rpcrdma__nfs4_x_stateid(n, &op->arg.recall.stateid));
		TRY(x_bool(n, &op->arg.recall.truncate));
		return rpcrdma__nfs4_x_fh(n, &op->arg.recall.fh);
	default:
		return RPCRDMA_ERR_BAD_VALUE;
	}
}

static int x_args(struct nx *n, struct rpcrdma_nfs41_cb_compound *c)
{
	uint32_t count = c->count, want;

	TRY(rpcrdma__nfs4_x_tag(n, c->tag, &c->tag_len, RPCRDMA_NFS41_CB_TAG_MAX));
	TRY(x_u32(n, &c->minorversion));
	TRY(x_u32(n, &c->callback_ident));
	if (n->enc) {
		if (c->nops > RPCRDMA_NFS41_CB_MAX_OPS || count < c->nops)
			return RPCRDMA_ERR_TOO_LONG;
		TRY(rpcrdma_xdr_encode_u32(n->x, count));
		for (uint32_t i = 0; i < c->nops; i++) {
			TRY(x_u32(n, &c->ops[i].op));
			/* an operation we cannot frame goes as its number alone:
			 * the peer stops there (tests of our service) */
			if (framed(c->ops[i].op))
				TRY(x_cb_op_args(n, &c->ops[i]));
			else
				break;
		}
		return 0;
	}
	c->call_len = n->x->len < UINT32_MAX ? (uint32_t)n->x->len : UINT32_MAX;
	TRY(rpcrdma_xdr_decode_u32(n->x, &count));
	c->count = count;
	c->nops = 0;
	c->stopped = false;
	/*
	 * Another minor version's operations may have other arguments (or be
	 * others): reading them as 4.1's could fail, and the call would get
	 * GARBAGE_ARGS where RFC 8881 16.2.3 has NFS4ERR_MINOR_VERS_MISMATCH
	 * answered, with no results, whatever the operations are.
	 */
	if (c->minorversion != 1)
		return 0;
	/* Too many: only CB_SEQUENCE is read, to answer NFS4ERR_TOO_MANY_OPS
	 * on its slot (RFC 8881 20.9.3). */
	want = count <= RPCRDMA_NFS41_CB_MAX_OPS ? count : 1;
	for (uint32_t i = 0; i < want; i++) {
		struct rpcrdma_nfs41_cb_op *op = &c->ops[i];

		memset(op, 0, sizeof(*op));
		TRY(rpcrdma_xdr_decode_u32(n->x, &op->op));
		c->nops = i + 1;
		if (!framed(op->op)) {
			c->stopped = true;
			return 0;
		}
		TRY(x_cb_op_args(n, op));
	}
	return 0;
}

/* The result's operation number: OP_CB_ILLEGAL for numbers outside the
 * protocol (RFC 8881 20.13). */
static uint32_t resop_of(uint32_t op)
{
	return in_protocol(op) ? op : RPCRDMA_NFS4_OP_CB_ILLEGAL;
}

static int x_res(struct nx *n, struct rpcrdma_nfs41_cb_compound *c)
{
	uint32_t count = c->nres;

	TRY(x_u32(n, &c->status));
	TRY(rpcrdma__nfs4_x_tag(n, c->tag, &c->tag_len, RPCRDMA_NFS41_CB_TAG_MAX));
	if (n->enc) {
		if (count > c->nops)
			return RPCRDMA_ERR_TOO_LONG;
		TRY(rpcrdma_xdr_encode_array_len(n->x, count));
	} else {
		/* At most a result per operation sent, and one for each when
		 * the CB_COMPOUND succeeded (RFC 8881 16.2.3, 20.1). */
		TRY(rpcrdma_xdr_decode_array_len(n->x, c->nops, 8, &count));
		if (c->status == RPCRDMA_NFS4_OK && count != c->nops)
			return RPCRDMA_ERR_BAD_VALUE;
		c->nres = count;
	}
	for (uint32_t i = 0; i < count; i++) {
		struct rpcrdma_nfs41_cb_op *op = &c->ops[i];
		uint32_t resop = resop_of(op->op);

		TRY(x_u32(n, &resop));
		if (resop != resop_of(op->op))
			return RPCRDMA_ERR_BAD_VALUE;
		TRY(x_u32(n, &op->status));
		if (op->status == RPCRDMA_NFS4_OK && op->op == RPCRDMA_NFS4_OP_CB_SEQUENCE) {
			TRY(x_sessionid(n, op->res.sessionid));
			TRY(x_u32(n, &op->res.seqid));
			TRY(x_u32(n, &op->res.slotid));
			TRY(x_u32(n, &op->res.highest_slotid));
			TRY(x_u32(n, &op->res.target_highest_slotid));
		}
		if (op->status != RPCRDMA_NFS4_OK && i + 1 < count)
			return RPCRDMA_ERR_BAD_VALUE;
	}
	if (!n->enc && count && c->ops[count - 1].status != c->status)
		return RPCRDMA_ERR_BAD_VALUE;
	return 0;
}

NX_ENTRY_POINTS(rpcrdma_nfs41_cb_args_enc, rpcrdma_nfs41_cb_args_dec, x_args)

NX_ENTRY_POINTS(rpcrdma_nfs41_cb_res_enc, rpcrdma_nfs41_cb_res_dec, x_res)
