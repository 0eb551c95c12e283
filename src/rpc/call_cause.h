/*
 * call_cause.h - why a call ended, in more detail than its status code:
 * what the server's RDMA_ERROR said, which check a reply failed, how often
 * its connection was lost.  The transport or the core fills it in the call
 * (struct rpcrdma__creq) before completing it; the core copies it into the
 * caller's struct rpcrdma_call (its library-private slots after priv[0],
 * which the struct had room for, so its size and layout stay as they
 * were), where rpcrdma_call_strerror() reads it.
 */
#ifndef RPCRDMA_RPC_CALL_CAUSE_H
#define RPCRDMA_RPC_CALL_CAUSE_H

#include <stdint.h>
#include <string.h>

#include "rpcrdma/rpc.h"

enum rpcrdma__cause_kind {
	RPCRDMA__CAUSE_NONE = 0,
	/* The server answered RDMA_ERROR.  code: rdma_err; vers: the
	 * version of the answer; a, b: ERR_VERS's range; offered: bytes of
	 * Reply chunk the call offered (0: none). */
	RPCRDMA__CAUSE_RDMA_ERROR,
	/* The reply's transport header does not match what the call offered;
	 * what: the check it failed. */
	RPCRDMA__CAUSE_REPLY_CHUNKS,
	/* The RPC reply does not decode.  a: the byte of the RPC message
	 * where decoding stopped; code: RPCRDMA__CAUSE_AT_* below. */
	RPCRDMA__CAUSE_BAD_REPLY,
	/* The call's connection was lost, or could not be made, more times
	 * than opts.retries.  a: connections lost while it waited; b: whether
	 * it was ever sent. */
	RPCRDMA__CAUSE_CONN_LOST,
	/* No reply in time.  a: the time-out in ms; b: whether it was ever
	 * sent; code: the errno of the last connection failure, if any. */
	RPCRDMA__CAUSE_TIMEDOUT,
	/* The call did not encode.  code: RPCRDMA__CAUSE_IN_*; a: the byte
	 * where encoding stopped; b: the room the transport gave (its
	 * largest call, when the status is RPCRDMA_ERR_NOSPACE). */
	RPCRDMA__CAUSE_ENCODE,
};

/* Which part of a call failed to encode (RPCRDMA__CAUSE_ENCODE). */
enum {
	RPCRDMA__CAUSE_IN_HEADER = 0, /* the RPC call header (credential) */
	RPCRDMA__CAUSE_IN_ARGS,       /* the arguments (encode_args) */
};

/* Where an RPC reply stopped decoding (RPCRDMA__CAUSE_BAD_REPLY). */
enum {
	RPCRDMA__CAUSE_AT_HEADER = 0, /* the RPC reply header */
	RPCRDMA__CAUSE_AT_NOT_REPLY,  /* a CALL where a REPLY belongs */
	RPCRDMA__CAUSE_AT_RESULTS,    /* the results (decode_res) */
};

/* kind and vers are 16 bits so that the whole fits in the 28 bytes the
 * slots have where pointers are 4 bytes (see the second assertion). */
struct rpcrdma__call_cause {
	const char *what; /* static text, or NULL */
	int status;       /* the call status this explains */
	uint16_t kind;    /* enum rpcrdma__cause_kind */
	uint16_t vers;
	uint32_t code;
	uint32_t a, b;
	uint32_t offered;
};

/* The slots it lives in: priv[0] is the core's while the call runs. */
#define RPCRDMA__CALL_CAUSE_ROOM (sizeof(((struct rpcrdma_call *)0)->priv) - sizeof(void *))
_Static_assert(sizeof(struct rpcrdma__call_cause) <= RPCRDMA__CALL_CAUSE_ROOM,
	       "the cause of a call must fit in struct rpcrdma_call's private slots");
/* The same on a 32-bit target, checked from any build: there the slots
 * hold 7 x 4 bytes and the one pointer of the cause takes 4. */
_Static_assert(sizeof(struct rpcrdma__call_cause) - sizeof(const char *) <= 7 * 4 - 4,
	       "the cause of a call must fit in the private slots of a 32-bit build too");

static inline void rpcrdma__call_cause_store(struct rpcrdma_call *call,
					     const struct rpcrdma__call_cause *cause)
{
	memset(&call->priv[1], 0, RPCRDMA__CALL_CAUSE_ROOM);
	if (cause)
		memcpy(&call->priv[1], cause, sizeof(*cause));
}

/* The cause stored in @call for its current status, or false. */
static inline bool rpcrdma__call_cause_load(const struct rpcrdma_call *call,
					    struct rpcrdma__call_cause *out)
{
	memcpy(out, &call->priv[1], sizeof(*out));
	return out->kind != RPCRDMA__CAUSE_NONE && out->status == call->status && call->status != 0;
}

#endif /* RPCRDMA_RPC_CALL_CAUSE_H */
