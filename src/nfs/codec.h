/*
 * The two-way codec the NFS XDR files share: one function per type that
 * encodes or decodes as the stream's direction says, so that the two
 * directions cannot drift apart.  Internal to src/nfs.
 */
#ifndef RPCRDMA_NFS_CODEC_H
#define RPCRDMA_NFS_CODEC_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "rpcrdma/xdr.h"

struct nx {
	struct rpcrdma_xdr_stream *x;
	bool enc;
};

/*
 * The public pair for one two-way codec function: NX_ENTRY_POINTS(enc,
 * dec, fn) defines enc() and dec() as rpcrdma_xdr_fn's that run fn in one
 * direction each (a NULL object is -EINVAL).
 */
#define NX_ENTRY_POINTS(enc_name, dec_name, fn)                                                    \
	int enc_name(struct rpcrdma_xdr_stream *x, void *obj)                                      \
	{                                                                                          \
		struct nx n = {x, true};                                                           \
                                                                                                   \
		return obj ? fn(&n, obj) : -EINVAL;                                                \
	}                                                                                          \
	int dec_name(struct rpcrdma_xdr_stream *x, void *obj)                                      \
	{                                                                                          \
		struct nx n = {x, false};                                                          \
                                                                                                   \
		return obj ? fn(&n, obj) : -EINVAL;                                                \
	}

#define TRY(expr)                                                                                  \
	do {                                                                                       \
		int rc_ = (expr);                                                                  \
		if (rc_)                                                                           \
			return rc_;                                                                \
	} while (0)

static inline int x_u32(struct nx *n, uint32_t *v)
{
	return n->enc ? rpcrdma_xdr_encode_u32(n->x, *v) : rpcrdma_xdr_decode_u32(n->x, v);
}

static inline int x_u64(struct nx *n, uint64_t *v)
{
	return n->enc ? rpcrdma_xdr_encode_u64(n->x, *v) : rpcrdma_xdr_decode_u64(n->x, v);
}

static inline int x_bool(struct nx *n, bool *v)
{
	return n->enc ? rpcrdma_xdr_encode_bool(n->x, *v) : rpcrdma_xdr_decode_bool(n->x, v);
}

/* A string of at most @max bytes into @s (room @max + 1, NUL-terminated). */
static inline int x_str(struct nx *n, char *s, uint32_t *len, uint32_t max)
{
	if (n->enc) {
		if (*len > max)
			return RPCRDMA_ERR_TOO_LONG;
		return rpcrdma_xdr_encode_string(n->x, s, *len);
	}
	return rpcrdma_xdr_decode_string(n->x, s, (size_t)max + 1, len);
}

#endif /* RPCRDMA_NFS_CODEC_H */
