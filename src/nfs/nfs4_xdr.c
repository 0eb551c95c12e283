/*
 * NFSv4.0 COMPOUND XDR (RFC 7530) for the operations this library speaks:
 * PUTROOTFH, PUTFH, LOOKUP, GETFH, GETATTR, READ, READLINK.  As in
 * nfs3_xdr.c, each type is one codec that encodes or decodes, so the two
 * directions cannot drift apart.  READ data and READLINK text go through
 * the DDP hooks (draft-callaghan-nfsdirect-00 section 4): over RDMA the
 * n-th of them in the reply is the n-th Write chunk of the call.
 *
 * Decoders bound every count by the structure's room and give up at the
 * first fault; a result whose operation differs from the request's, a
 * reply with more results than the request had operations, or one that
 * says NFS4_OK with fewer, is refused.
 */
#include <errno.h>
#include <string.h>

#include "rpcrdma/nfs4.h"

#include "nfs4_codec.h"

#define x_opaque rpcrdma__nfs4_x_opaque
#define x_fh rpcrdma__nfs4_x_fh
#define x_bitmap rpcrdma__nfs4_x_bitmap
#define x_stateid rpcrdma__nfs4_x_stateid

int rpcrdma__nfs4_x_opaque(struct nx *n, void *data, uint32_t *len, uint32_t max)
{
	if (n->enc) {
		if (*len > max)
			return RPCRDMA_ERR_TOO_LONG;
		return rpcrdma_xdr_encode_opaque(n->x, data, *len);
	}
	return rpcrdma_xdr_decode_opaque(n->x, data, max, len);
}

int rpcrdma__nfs4_x_fh(struct nx *n, struct rpcrdma_nfs4_fh *fh)
{
	return rpcrdma__nfs4_x_opaque(n, fh->data, &fh->len, RPCRDMA_NFS4_FHSIZE);
}

int rpcrdma__nfs4_x_bitmap(struct nx *n, struct rpcrdma_nfs4_bitmap *b)
{
	uint32_t count = b->n;

	if (n->enc) {
		if (count > RPCRDMA_NFS4_BITMAP_WORDS)
			return RPCRDMA_ERR_TOO_LONG;
		TRY(rpcrdma_xdr_encode_array_len(n->x, count));
	} else {
		/* Words past those we keep may come from a newer peer; they
		 * must be zero, or we would lose attributes silently. */
		TRY(rpcrdma_xdr_decode_array_len(n->x, 64, 4, &count));
		b->n = count < RPCRDMA_NFS4_BITMAP_WORDS ? count : RPCRDMA_NFS4_BITMAP_WORDS;
	}
	for (uint32_t i = 0; i < count; i++) {
		uint32_t w = i < RPCRDMA_NFS4_BITMAP_WORDS ? b->w[i] : 0;

		TRY(x_u32(n, &w));
		if (i < RPCRDMA_NFS4_BITMAP_WORDS)
			b->w[i] = w;
		else if (w)
			return RPCRDMA_ERR_BAD_VALUE;
	}
	return 0;
}

int rpcrdma__nfs4_x_stateid(struct nx *n, struct rpcrdma_nfs4_stateid *s)
{
	TRY(x_u32(n, &s->seqid));
	return n->enc ? rpcrdma_xdr_encode_fixed_opaque(n->x, s->other, sizeof(s->other))
		      : rpcrdma_xdr_decode_fixed_opaque(n->x, s->other, sizeof(s->other));
}

/* A DDP-eligible result into the operation's buffer. */
static int x_ddp(struct nx *n, struct rpcrdma_nfs4_op *op, uint32_t *len)
{
	if (n->enc) {
		if (*len && !op->buf)
			return -EINVAL;
		return rpcrdma_xdr_encode_ddp(n->x, op->buf, *len);
	}
	if (!op->buf && op->room)
		return -EINVAL;
	return rpcrdma_xdr_decode_ddp(n->x, op->buf, op->room, len);
}

static int x_op_args(struct nx *n, struct rpcrdma_nfs4_op *op)
{
	TRY(x_u32(n, &op->op));
	switch (op->op) {
	case RPCRDMA_NFS4_OP_PUTFH:
		return x_fh(n, &op->arg.putfh);
	case RPCRDMA_NFS4_OP_LOOKUP:
		TRY(x_str(n, op->arg.lookup.name, &op->arg.lookup.len, RPCRDMA_NFS4_NAME_MAX));
		/* RFC 7530 16.15.4: a zero-length component is NFS4ERR_INVAL;
		 * refuse to send one rather than make the server say so. */
		return op->arg.lookup.len ? 0 : RPCRDMA_ERR_BAD_VALUE;
	case RPCRDMA_NFS4_OP_GETATTR:
		return x_bitmap(n, &op->arg.getattr);
	case RPCRDMA_NFS4_OP_READ:
		TRY(x_stateid(n, &op->arg.read.stateid));
		TRY(x_u64(n, &op->arg.read.offset));
		return x_u32(n, &op->arg.read.count);
	case RPCRDMA_NFS4_OP_GETFH:
	case RPCRDMA_NFS4_OP_PUTROOTFH:
	case RPCRDMA_NFS4_OP_READLINK:
		return 0;
	default:
		/* NFSv4.1's operations, or one this codec cannot frame
		 * (RPCRDMA_ERR_BAD_VALUE: the rest of the stream would be
		 * garbage). */
		return rpcrdma__nfs41_op_args(n, op);
	}
}

static int x_op_res(struct nx *n, struct rpcrdma_nfs4_op *op)
{
	uint32_t resop = op->op;

	TRY(x_u32(n, &resop));
	if (resop != op->op)
		return RPCRDMA_ERR_BAD_VALUE;
	TRY(x_u32(n, &op->status));
	if (op->status != RPCRDMA_NFS4_OK)
		return 0;
	switch (op->op) {
	case RPCRDMA_NFS4_OP_GETFH:
		return x_fh(n, &op->res.getfh);
	case RPCRDMA_NFS4_OP_GETATTR:
		TRY(x_bitmap(n, &op->res.getattr.mask));
		return x_opaque(n, op->res.getattr.vals, &op->res.getattr.len,
				RPCRDMA_NFS4_ATTR_MAX);
	case RPCRDMA_NFS4_OP_READ:
		TRY(x_bool(n, &op->res.read.eof));
		return x_ddp(n, op, &op->res.read.len);
	case RPCRDMA_NFS4_OP_READLINK:
		TRY(x_ddp(n, op, &op->res.readlink.len));
		/* linktext4 is a string: no NUL inside, and no more than a
		 * server may send. */
		if (!n->enc && (op->res.readlink.len > RPCRDMA_NFS4_LINK_MAX ||
				memchr(op->buf, 0, op->res.readlink.len)))
			return RPCRDMA_ERR_BAD_VALUE;
		return 0;
	case RPCRDMA_NFS4_OP_PUTFH:
	case RPCRDMA_NFS4_OP_PUTROOTFH:
	case RPCRDMA_NFS4_OP_LOOKUP:
		return 0;
	default:
		return rpcrdma__nfs41_op_res(n, op);
	}
}

int rpcrdma__nfs4_x_tag(struct nx *n, char *tag, uint32_t *tag_len, uint32_t max)
{
	/* A tag longer than we keep is skipped, not refused: it only echoes
	 * what we sent, and its content means nothing to the protocol. */
	if (!n->enc) {
		uint32_t len;

		TRY(rpcrdma_xdr_decode_opaque_len(n->x, UINT32_MAX, &len));
		if (len <= max) {
			TRY(rpcrdma_xdr_decode_fixed_opaque(n->x, tag, len));
			*tag_len = len;
		} else {
			TRY(rpcrdma_xdr_skip(n->x, rpcrdma_xdr_align(len)));
			*tag_len = 0;
		}
		tag[*tag_len] = '\0';
		return 0;
	}
	return x_opaque(n, tag, tag_len, max);
}

static int x_tag(struct nx *n, struct rpcrdma_nfs4_compound *c)
{
	return rpcrdma__nfs4_x_tag(n, c->tag, &c->tag_len, RPCRDMA_NFS4_TAG_MAX);
}

static int x_args(struct nx *n, struct rpcrdma_nfs4_compound *c)
{
	uint32_t count = c->nops;

	TRY(x_tag(n, c));
	TRY(x_u32(n, &c->minorversion));
	if (n->enc) {
		if (count > RPCRDMA_NFS4_MAX_OPS)
			return RPCRDMA_ERR_TOO_LONG;
		TRY(rpcrdma_xdr_encode_array_len(n->x, count));
	} else {
		TRY(rpcrdma_xdr_decode_array_len(n->x, RPCRDMA_NFS4_MAX_OPS, 4, &count));
		c->nops = count;
	}
	for (uint32_t i = 0; i < count; i++)
		TRY(x_op_args(n, &c->ops[i]));
	return 0;
}

static int x_res(struct nx *n, struct rpcrdma_nfs4_compound *c)
{
	uint32_t count = c->nres;

	/* nops is the caller's: above what ops[] holds, both directions
	 * would walk past it (x_args refuses it too). */
	if (c->nops > RPCRDMA_NFS4_MAX_OPS)
		return RPCRDMA_ERR_TOO_LONG;
	TRY(x_u32(n, &c->status));
	TRY(x_tag(n, c));
	if (n->enc) {
		if (count > c->nops)
			return RPCRDMA_ERR_TOO_LONG;
		TRY(rpcrdma_xdr_encode_array_len(n->x, count));
	} else {
		/* A server evaluates at most what was sent (RFC 7530 15.2),
		 * and all of it when the COMPOUND succeeds (RFC 8881 16.2.3):
		 * a caller that finds NFS4_OK reads every operation's result,
		 * so fewer would hand it results that were never sent. */
		TRY(rpcrdma_xdr_decode_array_len(n->x, c->nops, 8, &count));
		if (c->status == RPCRDMA_NFS4_OK && count != c->nops)
			return RPCRDMA_ERR_BAD_VALUE;
		c->nres = count;
	}
	for (uint32_t i = 0; i < count; i++) {
		TRY(x_op_res(n, &c->ops[i]));
		/* Evaluation stops at the first failure (RFC 7530 15.2). */
		if (c->ops[i].status != RPCRDMA_NFS4_OK && i + 1 < count)
			return RPCRDMA_ERR_BAD_VALUE;
	}
	/* The COMPOUND's status is that of its last result. */
	if (!n->enc && count && c->ops[count - 1].status != c->status)
		return RPCRDMA_ERR_BAD_VALUE;
	return 0;
}

NX_ENTRY_POINTS(rpcrdma_nfs4_compound_args_enc, rpcrdma_nfs4_compound_args_dec, x_args)

NX_ENTRY_POINTS(rpcrdma_nfs4_compound_res_enc, rpcrdma_nfs4_compound_res_dec, x_res)

/*
 * Attribute values.
 */

bool rpcrdma_nfs4_bitmap_isset(const struct rpcrdma_nfs4_bitmap *b, uint32_t attr)
{
	uint32_t w = attr / 32;

	return b && w < b->n && w < RPCRDMA_NFS4_BITMAP_WORDS && (b->w[w] >> (attr % 32)) & 1u;
}

/* Encoded size of the fixed-size attributes of RFC 7530 section 5; 0 for
 * those of variable size (supported_attrs, acl, filehandle, fs_locations,
 * mimetype, owner, owner_group, the settable times) or unknown. */
static uint32_t attr_size(uint32_t attr)
{
	switch (attr) {
	case 1: case 2: case 5: case 6: case 7: case 9: case 10: case 11: case 13: case 14:
	case 15: case 16: case 17: case 18: case 25: case 26: case 28: case 29: case 33:
	case 34: case 35: case 46:
		return 4;
	case 3: case 4: case 20: case 21: case 22: case 23: case 27: case 30: case 31: case 38:
	case 39: case 40: case 41: case 42: case 43: case 44: case 45: case 55:
		return 8;
	case 47: case 49: case 50: case 51: case 52: case 53:
		return 12;
	case 8:
		return 16;
	default:
		return 0;
	}
}

static void fattr_set(struct rpcrdma_nfs4_fattr *out, uint32_t attr)
{
	uint32_t w = attr / 32;

	out->present.w[w] |= 1u << (attr % 32);
	if (out->present.n < w + 1)
		out->present.n = w + 1;
}

int rpcrdma_nfs4_fattr_decode(const struct rpcrdma_nfs4_op *op, struct rpcrdma_nfs4_fattr *out)
{
	const struct rpcrdma_nfs4_bitmap *mask;
	struct rpcrdma_xdr_stream x;

	if (!op || !out || op->op != RPCRDMA_NFS4_OP_GETATTR || op->status != RPCRDMA_NFS4_OK ||
	    op->res.getattr.len > RPCRDMA_NFS4_ATTR_MAX)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	mask = &op->res.getattr.mask;
	rpcrdma_xdr_init_const(&x, op->res.getattr.vals, op->res.getattr.len);
	for (uint32_t attr = 0; attr < 32 * RPCRDMA_NFS4_BITMAP_WORDS; attr++) {
		uint32_t size;

		if (!rpcrdma_nfs4_bitmap_isset(mask, attr))
			continue;
		size = attr_size(attr);
		if (!size)
			return -ENOTSUP;
		switch (attr) {
		case RPCRDMA_NFS4_ATTR_TYPE:
			TRY(rpcrdma_xdr_decode_u32(&x, &out->type));
			break;
		case RPCRDMA_NFS4_ATTR_CHANGE:
			TRY(rpcrdma_xdr_decode_u64(&x, &out->change));
			break;
		case RPCRDMA_NFS4_ATTR_SIZE:
			TRY(rpcrdma_xdr_decode_u64(&x, &out->size));
			break;
		case RPCRDMA_NFS4_ATTR_FSID:
			TRY(rpcrdma_xdr_decode_u64(&x, &out->fsid_major));
			TRY(rpcrdma_xdr_decode_u64(&x, &out->fsid_minor));
			break;
		case RPCRDMA_NFS4_ATTR_FILEID:
			TRY(rpcrdma_xdr_decode_u64(&x, &out->fileid));
			break;
		case RPCRDMA_NFS4_ATTR_MODE:
			TRY(rpcrdma_xdr_decode_u32(&x, &out->mode));
			break;
		case RPCRDMA_NFS4_ATTR_NUMLINKS:
			TRY(rpcrdma_xdr_decode_u32(&x, &out->numlinks));
			break;
		case RPCRDMA_NFS4_ATTR_SPACE_USED:
			TRY(rpcrdma_xdr_decode_u64(&x, &out->space_used));
			break;
		case RPCRDMA_NFS4_ATTR_TIME_MODIFY:
			TRY(rpcrdma_xdr_decode_i64(&x, &out->mtime_sec));
			TRY(rpcrdma_xdr_decode_u32(&x, &out->mtime_nsec));
			if (out->mtime_nsec >= 1000000000u)
				return RPCRDMA_ERR_BAD_VALUE;
			break;
		default:
			TRY(rpcrdma_xdr_skip(&x, size));
			continue;
		}
		fattr_set(out, attr);
	}
	/* fattr4's attr_vals holds the mask's attributes in order and
	 * nothing else (RFC 7530 section 5; Linux's verify_attr_len): bytes
	 * left over mean the server encodes some attribute otherwise than
	 * we read it, so the values after it are not what they seem. */
	if (rpcrdma_xdr_remaining(&x))
		return RPCRDMA_ERR_BAD_VALUE;
	return 0;
}

const char *rpcrdma_nfs4_op_name(uint32_t op)
{
	switch (op) {
	case RPCRDMA_NFS4_OP_GETATTR:
		return "GETATTR";
	case RPCRDMA_NFS4_OP_GETFH:
		return "GETFH";
	case RPCRDMA_NFS4_OP_LOOKUP:
		return "LOOKUP";
	case RPCRDMA_NFS4_OP_PUTFH:
		return "PUTFH";
	case RPCRDMA_NFS4_OP_PUTROOTFH:
		return "PUTROOTFH";
	case RPCRDMA_NFS4_OP_READ:
		return "READ";
	case RPCRDMA_NFS4_OP_READLINK:
		return "READLINK";
	default:
		return "?";
	}
}
