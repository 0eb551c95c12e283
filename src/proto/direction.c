/*
 * Message direction on a bidirectional connection (direction.h).
 */
#include "proto/direction.h"

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool has_position_zero_chunk(const struct rpcrdma_hdr *hdr)
{
	for (uint32_t i = 0; i < hdr->nreads && i < RPCRDMA_HDR_MAX_READS; i++) {
		if (hdr->reads[i].position == 0)
			return true;
	}
	return false;
}

enum rpcrdma__direction rpcrdma__msg_direction(const struct rpcrdma_hdr *hdr,
					       const uint8_t *payload, size_t len)
{
	switch (hdr->proc) {
	case RPCRDMA_PROC_MSG:
	case RPCRDMA_PROC_MSGP:
		if (!payload || len < 8 || be32(payload) != hdr->xid)
			return RPCRDMA__DIR_INVALID;
		switch (be32(payload + 4)) {
		case 0:
			return RPCRDMA__DIR_CALL;
		case 1:
			return RPCRDMA__DIR_REPLY;
		default:
			return RPCRDMA__DIR_INVALID;
		}
	case RPCRDMA_PROC_NOMSG:
		return has_position_zero_chunk(hdr) ? RPCRDMA__DIR_CALL : RPCRDMA__DIR_REPLY;
	case RPCRDMA_PROC_ERROR:
		return RPCRDMA__DIR_REPLY;
	default:
		return RPCRDMA__DIR_UNKNOWN;
	}
}

const char *rpcrdma__direction_str(enum rpcrdma__direction d)
{
	switch (d) {
	case RPCRDMA__DIR_CALL:
		return "call";
	case RPCRDMA__DIR_REPLY:
		return "reply";
	case RPCRDMA__DIR_INVALID:
		return "invalid";
	default:
		return "unknown";
	}
}
