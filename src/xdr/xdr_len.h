/*
 * xdr_len.h - whether an item and its XDR padding fit in the bytes left,
 * for a length the peer chose.
 *
 * rpcrdma_xdr_align() wraps for a length above SIZE_MAX - 3.  Where size_t
 * has 32 bits, a uint32_t length from the wire near UINT32_MAX is such a
 * length: aligned first, 0xfffffffd becomes 0, and a check of the aligned
 * length against what remains accepts a body that is not there.  This
 * compares the length itself first, and the padding with what is left
 * after it, so nothing is ever added.
 */
#ifndef RPCRDMA_XDR_LEN_H
#define RPCRDMA_XDR_LEN_H

#include <stdbool.h>
#include <stddef.h>

#include "rpcrdma/xdr.h"

/* Whether @len bytes and the padding after them fit in @room bytes. */
static inline bool rpcrdma__xdr_fits_padded(size_t len, size_t room)
{
	size_t pad = (RPCRDMA_XDR_UNIT - len % RPCRDMA_XDR_UNIT) % RPCRDMA_XDR_UNIT;

	return len <= room && pad <= room - len;
}

#endif /* RPCRDMA_XDR_LEN_H */
