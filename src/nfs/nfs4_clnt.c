/*
 * Calling an NFSv4 server with a COMPOUND: building the operation list, and
 * what the call offers the RDMA transport.  The upper-layer binding for
 * NFSv4 (draft-callaghan-nfsdirect-00 section 4, RFC 8267 section 4.2)
 * makes READ data and READLINK text DDP-eligible and lets one COMPOUND
 * carry several of them: the Write list has one chunk per such operation,
 * consumed in the order the operations appear, and a zero-length chunk
 * asks for that operation's result inline.
 */
#include <errno.h>
#include <string.h>

#include "rpcrdma/nfs4.h"

#include "common/trace.h"
#include "nfs4_codec.h"

/* xid, msg type, reply stat, verifier (flavor, length, 400 bytes), accept stat */
#define RPC_REPLY_HDR_MAX (4u * 5u + 400u)

void rpcrdma_nfs4_compound_init(struct rpcrdma_nfs4_compound *c)
{
	if (!c)
		return;
	memset(c, 0, sizeof(*c));
	c->write_chunks = -1;
}

struct rpcrdma_nfs4_op *rpcrdma__nfs4_append(struct rpcrdma_nfs4_compound *c, uint32_t opnum)
{
	struct rpcrdma_nfs4_op *op;

	if (!c || c->nops >= RPCRDMA_NFS4_MAX_OPS)
		return NULL;
	op = &c->ops[c->nops++];
	memset(op, 0, sizeof(*op));
	op->op = opnum;
	return op;
}

struct rpcrdma_nfs4_op *rpcrdma_nfs4_putrootfh(struct rpcrdma_nfs4_compound *c)
{
	return rpcrdma__nfs4_append(c, RPCRDMA_NFS4_OP_PUTROOTFH);
}

struct rpcrdma_nfs4_op *rpcrdma_nfs4_putfh(struct rpcrdma_nfs4_compound *c,
					   const struct rpcrdma_nfs4_fh *fh)
{
	struct rpcrdma_nfs4_op *op;

	if (!fh || fh->len > RPCRDMA_NFS4_FHSIZE)
		return NULL;
	op = rpcrdma__nfs4_append(c, RPCRDMA_NFS4_OP_PUTFH);
	if (op)
		op->arg.putfh = *fh;
	return op;
}

struct rpcrdma_nfs4_op *rpcrdma_nfs4_lookup(struct rpcrdma_nfs4_compound *c, const char *name)
{
	struct rpcrdma_nfs4_op *op;
	size_t len = name ? strlen(name) : 0;

	if (!len || len > RPCRDMA_NFS4_NAME_MAX)
		return NULL;
	op = rpcrdma__nfs4_append(c, RPCRDMA_NFS4_OP_LOOKUP);
	if (op) {
		memcpy(op->arg.lookup.name, name, len + 1);
		op->arg.lookup.len = (uint32_t)len;
	}
	return op;
}

struct rpcrdma_nfs4_op *rpcrdma_nfs4_getfh(struct rpcrdma_nfs4_compound *c)
{
	return rpcrdma__nfs4_append(c, RPCRDMA_NFS4_OP_GETFH);
}

struct rpcrdma_nfs4_op *rpcrdma_nfs4_getattr(struct rpcrdma_nfs4_compound *c,
					     const uint32_t *attrs, unsigned int n)
{
	struct rpcrdma_nfs4_bitmap b;
	struct rpcrdma_nfs4_op *op;

	memset(&b, 0, sizeof(b));
	if (n && !attrs)
		return NULL;
	for (unsigned int i = 0; i < n; i++) {
		uint32_t w = attrs[i] / 32;

		if (w >= RPCRDMA_NFS4_BITMAP_WORDS)
			return NULL;
		b.w[w] |= 1u << (attrs[i] % 32);
		if (b.n < w + 1)
			b.n = w + 1;
	}
	op = rpcrdma__nfs4_append(c, RPCRDMA_NFS4_OP_GETATTR);
	if (op)
		op->arg.getattr = b;
	return op;
}

/* READ's data lands in [buf, buf + room): over RDMA its Write chunk is
 * count bytes there, so a count past the room lets the server write past
 * it. */
static bool read_fits(uint32_t count, const void *buf, uint32_t room)
{
	return count <= RPCRDMA_NFS4_MAXREAD && count <= room && (!room || buf);
}

struct rpcrdma_nfs4_op *rpcrdma_nfs4_read(struct rpcrdma_nfs4_compound *c,
					  const struct rpcrdma_nfs4_stateid *stateid,
					  uint64_t offset, uint32_t count, void *buf, uint32_t room)
{
	struct rpcrdma_nfs4_op *op;

	if (!read_fits(count, buf, room))
		return NULL;
	op = rpcrdma__nfs4_append(c, RPCRDMA_NFS4_OP_READ);
	if (!op)
		return NULL;
	if (stateid)
		op->arg.read.stateid = *stateid;
	op->arg.read.offset = offset;
	op->arg.read.count = count;
	op->buf = buf;
	op->room = room;
	return op;
}

struct rpcrdma_nfs4_op *rpcrdma_nfs4_readlink(struct rpcrdma_nfs4_compound *c, void *buf,
					      uint32_t room)
{
	struct rpcrdma_nfs4_op *op;

	if (!buf || !room)
		return NULL;
	op = rpcrdma__nfs4_append(c, RPCRDMA_NFS4_OP_READLINK);
	if (!op)
		return NULL;
	op->buf = buf;
	op->room = room;
	return op;
}

size_t rpcrdma_nfs4_compound_max_reply(const struct rpcrdma_nfs4_compound *c)
{
	/* status, tag, result count */
	size_t max = RPC_REPLY_HDR_MAX + 4 + 4 + RPCRDMA_NFS4_TAG_MAX + 4;

	if (!c)
		return 0;
	for (uint32_t i = 0; i < c->nops && i < RPCRDMA_NFS4_MAX_OPS; i++) {
		const struct rpcrdma_nfs4_op *op = &c->ops[i];

		max += 8; /* resop, status */
		switch (op->op) {
		case RPCRDMA_NFS4_OP_GETFH:
			max += 4 + RPCRDMA_NFS4_FHSIZE;
			break;
		case RPCRDMA_NFS4_OP_GETATTR:
			max += 4 + 4 * RPCRDMA_NFS4_BITMAP_WORDS + 4 + RPCRDMA_NFS4_ATTR_MAX;
			break;
		case RPCRDMA_NFS4_OP_READ:
			max += 4 + 4 + rpcrdma_xdr_align(op->arg.read.count);
			break;
		case RPCRDMA_NFS4_OP_READLINK:
			max += 4 + rpcrdma_xdr_align(op->room < RPCRDMA_NFS4_LINK_MAX
							 ? op->room
							 : RPCRDMA_NFS4_LINK_MAX);
			break;
		default:
			max += rpcrdma__nfs41_res_max(op);
			break;
		}
	}
	return max;
}

int rpcrdma__nfs4_compound_prepare(struct rpcrdma_nfs4_compound *c, struct rpcrdma_call *call,
				   struct rpcrdma_ddp_buf chunks[RPCRDMA_CALL_MAX_WRITE_CHUNKS])
{
	unsigned int nchunks = 0, limit;

	if (!c || !c->nops || c->nops > RPCRDMA_NFS4_MAX_OPS ||
	    c->tag_len > RPCRDMA_NFS4_TAG_MAX || c->write_chunks < -1)
		return -EINVAL;
	/* The operations are the caller's to fill, or to change after a
	 * builder made them: what the builders refuse is refused here too. */
	for (uint32_t i = 0; i < c->nops; i++) {
		const struct rpcrdma_nfs4_op *op = &c->ops[i];

		if (op->op == RPCRDMA_NFS4_OP_READ &&
		    !read_fits(op->arg.read.count, op->buf, op->room)) {
			RPCRDMA__TRACE_BAD_ARG(-EINVAL,
					       "COMPOUND ops[%u]: READ of %u bytes, with a room "
					       "of %u at %s (at most the room, and %u)",
					       i, op->arg.read.count, op->room,
					       op->buf ? "buf" : "a NULL buf", RPCRDMA_NFS4_MAXREAD);
			return -EINVAL;
		}
		if (op->op == RPCRDMA_NFS4_OP_READLINK && op->room && !op->buf) {
			RPCRDMA__TRACE_BAD_ARG(-EINVAL,
					       "COMPOUND ops[%u]: READLINK with a room of %u and "
					       "a NULL buf",
					       i, op->room);
			return -EINVAL;
		}
	}
	/*
	 * The Write list: one chunk per READ and READLINK, in order.
	 *  - READ's chunk is exactly its count: the server never sends more.
	 *  - READLINK's, when asked for (DDP_CHUNK), is the caller's room.
	 *  - DDP_INLINE gives a zero-length chunk, so the operations after it
	 *    still find theirs.
	 *  - By default (DDP_AUTO) the list ends at the first READLINK, for
	 *    the Linux server's sake (nfs4.h, enum rpcrdma_nfs4_ddp).
	 *  - Past the caller's limit (or the library's), no more chunks:
	 *    those results come inline or in the Reply chunk.
	 */
	limit = c->write_chunks < 0 ? RPCRDMA_CALL_MAX_WRITE_CHUNKS : (unsigned int)c->write_chunks;
	if (limit > RPCRDMA_CALL_MAX_WRITE_CHUNKS)
		limit = RPCRDMA_CALL_MAX_WRITE_CHUNKS;
	for (uint32_t i = 0; i < c->nops && nchunks < limit; i++) {
		struct rpcrdma_nfs4_op *op = &c->ops[i];
		size_t len;

		if (op->op == RPCRDMA_NFS4_OP_READLINK && op->ddp == RPCRDMA_NFS4_DDP_AUTO)
			break;
		if (op->op == RPCRDMA_NFS4_OP_READ)
			len = op->arg.read.count;
		else if (op->op == RPCRDMA_NFS4_OP_READLINK)
			len = op->room;
		else
			continue;
		if (op->ddp == RPCRDMA_NFS4_DDP_INLINE)
			len = 0;
		chunks[nchunks].buf = len ? op->buf : NULL;
		chunks[nchunks].len = len;
		nchunks++;
	}
	for (uint32_t i = 0; i < c->nops; i++)
		c->ops[i].status = 0;
	c->status = 0;
	c->nres = 0;
	memset(call, 0, sizeof(*call));
	call->proc = RPCRDMA_NFS4_PROC_COMPOUND;
	call->encode_args = rpcrdma_nfs4_compound_args_enc;
	call->args = c;
	call->decode_res = rpcrdma_nfs4_compound_res_dec;
	call->res = c;
	call->ddp_list = nchunks ? chunks : NULL;
	call->ddp_count = nchunks;
	call->max_reply = rpcrdma_nfs4_compound_max_reply(c);
	return 0;
}

int rpcrdma_nfs4_compound_call(struct rpcrdma_client *clnt, struct rpcrdma_nfs4_compound *c)
{
	struct rpcrdma_ddp_buf chunks[RPCRDMA_CALL_MAX_WRITE_CHUNKS];
	struct rpcrdma_call call;
	int rc;

	if (!clnt)
		return -EINVAL;
	rc = rpcrdma__nfs4_compound_prepare(c, &call, chunks);
	return rc ? rc : rpcrdma_client_call(clnt, &call);
}
