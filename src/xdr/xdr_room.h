/*
 * xdr_room.h - room an encoder sets aside at the end of a stream, for the
 * library's transports: bytes that belong in the message but that the
 * stream itself does not carry (a DDP result an RDMA Send reads where the
 * application holds it) still need their place if the message is later
 * made whole in the stream's buffer.
 */
#ifndef RPCRDMA_XDR_ROOM_H
#define RPCRDMA_XDR_ROOM_H

#include <stddef.h>

#include "rpcrdma/xdr.h"

/**
 * rpcrdma__xdr_hold_back - take @n bytes off the end of a stream's room
 *
 * Only for a stream over one buffer (rpcrdma_xdr_init).  A copy of the
 * stream saved before the call gives the room back when restored.  Returns
 * 0, or -ERANGE when the stream is a scatter list or has fewer than @n
 * bytes left.
 */
int rpcrdma__xdr_hold_back(struct rpcrdma_xdr_stream *xdr, size_t n);

#endif /* RPCRDMA_XDR_ROOM_H */
