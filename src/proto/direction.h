/*
 * Which way a received RPC-over-RDMA message goes (RFC 8167 sections 4.1
 * and 5), without I/O.  On a bidirectional connection both ends receive
 * calls and replies on the same receive queue; the direction decides
 * whether the message is matched against our outstanding calls (a reply)
 * or dispatched (a call), and whether its rdma_credit is a grant or a
 * request.  A message whose direction cannot be told from its header and
 * payload has its credit value ignored (4.1).
 */
#ifndef RPCRDMA_PROTO_DIRECTION_H
#define RPCRDMA_PROTO_DIRECTION_H

#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/header.h"

enum rpcrdma__direction {
	RPCRDMA__DIR_UNKNOWN = 0, /* not told by header or payload */
	RPCRDMA__DIR_CALL,        /* an RPC call: we are its responder */
	RPCRDMA__DIR_REPLY,       /* an answer to one of our calls */
	RPCRDMA__DIR_INVALID,     /* the payload contradicts the header */
};

/**
 * rpcrdma__msg_direction - classify a decoded, accepted header
 * @hdr: the decoded transport header (rpcrdma_hdr_decode() returned 0)
 * @payload, @len: the inline RPC message that followed it (may be empty)
 *
 * RDMA_MSG (and RDMA_MSGP): the RPC message's msg_type, whose XID must be
 * the header's (RFC 8167 5.1/5.2: "MUST start with the same XID");
 * anything but CALL (0) or REPLY (1), or a short payload, is INVALID.
 * RDMA_NOMSG: a call when it carries a Position-Zero Read chunk (a Long
 * Call), a reply when it does not (a Long Reply through the Reply chunk
 * the caller offered).
 * RDMA_ERROR: a reply: it always answers a message we sent.
 * RDMA_DONE, RDMA_OPTIONAL and unknown procedures: UNKNOWN.
 */
enum rpcrdma__direction rpcrdma__msg_direction(const struct rpcrdma_hdr *hdr,
					       const uint8_t *payload, size_t len);

const char *rpcrdma__direction_str(enum rpcrdma__direction d);

#endif /* RPCRDMA_PROTO_DIRECTION_H */
