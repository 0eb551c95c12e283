/*
 * xdr_word.h - one XDR word in or out, inline, for the library's own hot
 * decoders and encoders (the RPC and RPC-over-RDMA headers: some seventy
 * words per round trip).  Where the word lies inside the current element
 * with a byte to spare, it is a load or a store and two additions; every
 * other case (a word across elements, the last word of an element, the
 * end of the stream) goes to the exported function, which has the same
 * result.
 */
#ifndef RPCRDMA_XDR_WORD_H
#define RPCRDMA_XDR_WORD_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

#include "rpcrdma/xdr.h"

/* The next word's bytes, when it can be taken without settling on the
 * next element afterwards; else NULL. */
static inline uint8_t *rpcrdma__xdr_word_at(const struct rpcrdma_xdr_stream *xdr)
{
	const struct iovec *e;

	if (xdr->seg >= xdr->iovcnt || rpcrdma_xdr_remaining(xdr) < 4)
		return NULL;
	e = &xdr->iov[xdr->seg];
	if (e->iov_len - xdr->seg_off <= 4)
		return NULL;
	return (uint8_t *)e->iov_base + xdr->seg_off;
}

static inline int rpcrdma__xdr_get_u32(struct rpcrdma_xdr_stream *xdr, uint32_t *v)
{
	const uint8_t *p = rpcrdma__xdr_word_at(xdr);
	uint32_t be;

	if (!p)
		return rpcrdma_xdr_decode_u32(xdr, v);
	memcpy(&be, p, 4);
	xdr->seg_off += 4;
	xdr->pos += 4;
	*v = be32toh(be);
	return 0;
}

static inline int rpcrdma__xdr_put_u32(struct rpcrdma_xdr_stream *xdr, uint32_t v)
{
	uint8_t *p = rpcrdma__xdr_word_at(xdr);
	uint32_t be = htobe32(v);

	if (!p)
		return rpcrdma_xdr_encode_u32(xdr, v);
	memcpy(p, &be, 4);
	xdr->seg_off += 4;
	xdr->pos += 4;
	return 0;
}

#endif /* RPCRDMA_XDR_WORD_H */
