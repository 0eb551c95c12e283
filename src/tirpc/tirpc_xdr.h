/*
 * The XDR of libtirpc over a struct rpcrdma_xdr_stream (tirpc_xdr.c), and
 * the pieces the client and server halves of the TI-RPC layer share.
 */
#ifndef RPCRDMA_TIRPC_XDR_H
#define RPCRDMA_TIRPC_XDR_H

#include "rpcrdma/tirpc.h"

/* An XDR's private state: the stream and the DDP-eligible item rule. */
struct rpcrdma__txdr {
	struct rpcrdma_xdr_stream *s;
	uint32_t ddp_items;   /* bit k: the k-th non-empty opaque is DDP-eligible */
	unsigned int item;    /* non-empty opaques seen so far */
	bool have_len;        /* the last item was a word: perhaps an opaque's length */
	uint32_t len;         /* that word */
	struct rpcrdma_xdr_stream before; /* the stream before that word */
	uint32_t skip_pad;    /* padding the stream already consumed or produced */
	int err;              /* the first stream error, for the caller */
};

/* Set up @x to encode (@op XDR_ENCODE) or decode (XDR_DECODE) on @s. */
void rpcrdma__txdr_init(XDR *x, struct rpcrdma__txdr *t, struct rpcrdma_xdr_stream *s,
			enum xdr_op op, uint32_t ddp_items);

/* The binding's entry for @proc, or NULL. */
const struct rpcrdma_tirpc_proc *rpcrdma__tirpc_proc_for(const struct rpcrdma_tirpc_binding *b,
						       uint32_t proc);

/* A deep copy of @b (NULL stays NULL); free with free(). */
int rpcrdma__tirpc_binding_copy(const struct rpcrdma_tirpc_binding *b,
				struct rpcrdma_tirpc_binding **out);

#endif
