/*
 * librpcrdma: what a client has in flight, for a user debugging a hang.
 *
 * rpcrdma_client_inflight() fills caller-provided records;
 * rpcrdma_client_inflight_write() writes them as a text table with
 * write(2) only (no allocation, no stdio, no lock), so that a SIGUSR1
 * handler may call it (tools/rpcrdma-demo --inflight shows both).
 *
 * WARNING: from a signal handler the client's lists are read as they
 * are: if the signal interrupted the loop thread while it changed them, the
 * listing may be torn or (rarely) read a call being freed.  It is a
 * debugging aid; from the loop's own thread it is exact.
 */
#ifndef RPCRDMA_DEBUG_H
#define RPCRDMA_DEBUG_H

#include <stdint.h>

#include "rpcrdma/common.h"
#include "rpcrdma/rpc.h"

#ifdef __cplusplus
extern "C" {
#endif

enum rpcrdma_call_state {
	RPCRDMA_CALL_QUEUED = 0, /* waiting for a connection, a credit or room */
	RPCRDMA_CALL_SENT = 1,   /* handed to the transport, no reply yet */
};

/** One call a client has not completed. */
struct rpcrdma_call_info {
	uint32_t xid;
	uint32_t proc;
	uint64_t age_ms;       /* since rpcrdma_client_call_async() */
	enum rpcrdma_call_state state;
	uint32_t losses;       /* connections lost while it was out */
	uint32_t write_chunks; /* Write chunks it offers (over RDMA) */
	uint32_t conn_id;      /* connection it last left on (trace.h ids; with   */
			       /* opts.nconnect, any of the client's); 0: never sent */
};

/**
 * rpcrdma_client_inflight - the calls @clnt has not completed, oldest
 * sent first (on every connection, opts.nconnect), then those queued
 * @out, @max: room for @max records (may be NULL and 0, to count)
 *
 * Async-signal-safe (see above).  Returns how many calls there are (more
 * than @max when they did not all fit), or -EINVAL.
 */
RPCRDMA_EXTERN int rpcrdma_client_inflight(struct rpcrdma_client *clnt,
					   struct rpcrdma_call_info *out, unsigned int max);

/**
 * rpcrdma_client_inflight_write - the same as a text table on @fd
 *
 * One header line, then "xid proc age_ms state losses wchunks conn" per
 * call (at most 64, then how many more).  Async-signal-safe (see above).
 * Returns the number of calls, or -EINVAL, or -errno of write(2).
 */
RPCRDMA_EXTERN int rpcrdma_client_inflight_write(struct rpcrdma_client *clnt, int fd);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_DEBUG_H */
