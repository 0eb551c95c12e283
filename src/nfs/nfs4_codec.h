/*
 * The NFSv4 codec pieces that nfs4_xdr.c (minor version 0) shares with the
 * NFSv4.1 files: opaques, handles, bitmaps, stateids, and the hooks by
 * which the COMPOUND codec frames an NFSv4.1 operation.  Internal to
 * src/nfs.
 */
#ifndef RPCRDMA_NFS4_CODEC_H
#define RPCRDMA_NFS4_CODEC_H

#include "rpcrdma/nfs4.h"
#include "rpcrdma/rpc.h"

#include "codec.h"

/* A zeroed operation @opnum at the end of @c; NULL when @c is full. */
struct rpcrdma_nfs4_op *rpcrdma__nfs4_append(struct rpcrdma_nfs4_compound *c, uint32_t opnum);
int rpcrdma__nfs4_x_opaque(struct nx *n, void *data, uint32_t *len, uint32_t max);
int rpcrdma__nfs4_x_fh(struct nx *n, struct rpcrdma_nfs4_fh *fh);
int rpcrdma__nfs4_x_bitmap(struct nx *n, struct rpcrdma_nfs4_bitmap *b);
int rpcrdma__nfs4_x_stateid(struct nx *n, struct rpcrdma_nfs4_stateid *s);
/* A COMPOUND or CB_COMPOUND tag, kept up to @max bytes (tag[] holds
 * @max + 1); a longer one decodes as empty. */
int rpcrdma__nfs4_x_tag(struct nx *n, char *tag, uint32_t *len, uint32_t max);

/*
 * An NFSv4.1 operation's arguments or results (nfs41_xdr.c).  Return
 * RPCRDMA_ERR_BAD_VALUE for an operation number they do not know.
 */
int rpcrdma__nfs41_op_args(struct nx *n, struct rpcrdma_nfs4_op *op);
int rpcrdma__nfs41_op_res(struct nx *n, struct rpcrdma_nfs4_op *op);
/* The largest encoded result of @op (resop and status included); 0 when
 * it is not an NFSv4.1 operation. */
size_t rpcrdma__nfs41_res_max(const struct rpcrdma_nfs4_op *op);

/*
 * Fill @call (zeroed first) and @chunks for COMPOUND @c as
 * rpcrdma_nfs4_compound_call() sends it.  Returns 0 or -EINVAL.
 */
int rpcrdma__nfs4_compound_prepare(struct rpcrdma_nfs4_compound *c, struct rpcrdma_call *call,
				   struct rpcrdma_ddp_buf chunks[RPCRDMA_CALL_MAX_WRITE_CHUNKS]);

#endif /* RPCRDMA_NFS4_CODEC_H */
