/*
 * RFC 8797 connection private data: encode ours, decode the peer's.  The
 * decoder trusts nothing and falls back to the RFC 8166 defaults.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "rpcrdma/cm_private.h"

static bool size_encodable(uint32_t size)
{
	return size >= 1024 && size <= RPCRDMA_CM_MAX_INLINE;
}

int rpcrdma_cm_private_encode(const struct rpcrdma_cm_private *pd, void *buf, size_t cap)
{
	uint8_t *p = buf;
	uint32_t magic = htobe32(RPCRDMA_CM_PRIVATE_MAGIC);

	if (!pd || !buf || cap < RPCRDMA_CM_PRIVATE_SIZE || !size_encodable(pd->send_size) ||
	    !size_encodable(pd->recv_size))
		return -EINVAL;
	memcpy(p, &magic, 4);
	p[4] = RPCRDMA_CM_PRIVATE_VERSION;
	p[5] = pd->flags & RPCRDMA_CM_FLAG_REMOTE_INVALIDATE;
	p[6] = (uint8_t)(pd->send_size / 1024 - 1);
	p[7] = (uint8_t)(pd->recv_size / 1024 - 1);
	return RPCRDMA_CM_PRIVATE_SIZE;
}

void rpcrdma_cm_private_decode(const void *buf, size_t len, struct rpcrdma_cm_private *pd)
{
	const uint8_t *p = buf;
	uint32_t magic;

	if (!pd)
		return;
	pd->present = false;
	pd->version = 0;
	pd->flags = 0;
	pd->send_size = RPCRDMA_CM_DEFAULT_INLINE;
	pd->recv_size = RPCRDMA_CM_DEFAULT_INLINE;
	if (!buf || len < RPCRDMA_CM_PRIVATE_SIZE)
		return;
	memcpy(&magic, p, 4);
	if (be32toh(magic) != RPCRDMA_CM_PRIVATE_MAGIC || p[4] != RPCRDMA_CM_PRIVATE_VERSION)
		return;
	pd->present = true;
	pd->version = p[4];
	pd->flags = p[5] & RPCRDMA_CM_FLAG_REMOTE_INVALIDATE;
	pd->send_size = ((uint32_t)p[6] + 1) * 1024;
	pd->recv_size = ((uint32_t)p[7] + 1) * 1024;
}
