/*
 * The library's own ways into rpc_msg.c, for the client's per-call path:
 * the same wire forms as rpcrdma_rpc_encode_call() and
 * rpcrdma_rpc_decode_msg(), without the header structs (two 408-byte
 * opaque_auth each) being built, zeroed and copied on every call.
 */
#ifndef RPCRDMA_RPC_MSG_INTERNAL_H
#define RPCRDMA_RPC_MSG_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "rpcrdma/rpc_msg.h"

/* rpcrdma_rpc_encode_call() from the header's parts. */
int rpcrdma__rpc_encode_call_parts(struct rpcrdma_xdr_stream *xdr, uint32_t xid, uint32_t prog,
				   uint32_t vers, uint32_t proc,
				   const struct rpcrdma_opaque_auth *cred,
				   const struct rpcrdma_opaque_auth *verf);

/*
 * A reply's header into @reply, the stream left at its results, with
 * rpcrdma_rpc_decode_msg()'s checks and errors; a well-formed call instead
 * sets *@not_reply and returns RPCRDMA_ERR_BAD_RPC.  On success every field
 * is written except the verifier's body past its length, which keeps what
 * it held (callers pass a zeroed @reply); on failure nothing is written.
 */
int rpcrdma__rpc_decode_reply(struct rpcrdma_xdr_stream *xdr, struct rpcrdma_rpc_reply *reply,
			      bool *not_reply);

#endif
