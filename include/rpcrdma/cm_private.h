/*
 * librpcrdma: RDMA-CM private data for RPC-over-RDMA (RFC 8797).
 *
 * Eight bytes carried in the connection request and reply: a magic number,
 * a format version, flags, and the sender's inline send and receive sizes in
 * 1 KiB units minus one.  Peers that send none (or something else) get the
 * RFC 8166 defaults, 1024 bytes each way, and no Send With Invalidate.
 */
#ifndef RPCRDMA_CM_PRIVATE_H
#define RPCRDMA_CM_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RPCRDMA_CM_PRIVATE_MAGIC 0xf6ab0e18u
#define RPCRDMA_CM_PRIVATE_VERSION 1u
#define RPCRDMA_CM_PRIVATE_SIZE 8u
/** Flag bit 0: the sender may be sent Send With Invalidate. */
#define RPCRDMA_CM_FLAG_REMOTE_INVALIDATE 0x01u
/** Inline size when the peer says nothing (RFC 8166 section 3.3.3). */
#define RPCRDMA_CM_DEFAULT_INLINE 1024u
/** Largest size the one-byte encoding can carry: 256 x 1 KiB. */
#define RPCRDMA_CM_MAX_INLINE (256u * 1024u)

struct rpcrdma_cm_private {
	bool present;        /* decode: valid private data was found */
	uint8_t version;
	uint8_t flags;       /* RPCRDMA_CM_FLAG_* */
	uint32_t send_size;  /* bytes the sender will send inline at most */
	uint32_t recv_size;  /* bytes the sender can receive inline */
};

/**
 * rpcrdma_cm_private_encode - write the eight bytes of private data
 *
 * Sizes are rounded down to a multiple of 1 KiB (a peer must never be told
 * it may send more than we can take).  Returns RPCRDMA_CM_PRIVATE_SIZE, or
 * -EINVAL when a size is below 1 KiB or above RPCRDMA_CM_MAX_INLINE, @cap
 * is too small, or @pd or @buf is NULL.
 */
RPCRDMA_EXTERN int rpcrdma_cm_private_encode(const struct rpcrdma_cm_private *pd, void *buf,
					     size_t cap);

/**
 * rpcrdma_cm_private_decode - read a peer's private data
 *
 * Never fails.  Data that is absent, too short, with another magic or an
 * unknown version sets @pd->present to false and the 1 KiB defaults; extra
 * bytes after the eight (CM transports pad private data) are ignored, and so
 * are flag bits this version does not define.  A NULL @buf is absent data;
 * a NULL @pd does nothing.
 */
RPCRDMA_EXTERN void rpcrdma_cm_private_decode(const void *buf, size_t len,
					      struct rpcrdma_cm_private *pd);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_CM_PRIVATE_H */
