/*
 * librpcrdma: what a client or a server has in flight, for a user
 * debugging a hang.
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

/*
 * A server's calls: from the moment their arguments are complete (RDMA
 * Reads done) until the reply is handed to the transport.  Every core (the
 * listener's, and each worker's) keeps its calls on a list under a lock of
 * its own; the listing takes each lock with pthread_mutex_trylock() only,
 * so it never blocks and may be called from a signal handler: a core whose
 * lock is held at that moment is reported as busy and its calls are not
 * listed.  Not during rpcrdma_server_destroy().
 */
enum rpcrdma_svc_call_state {
	RPCRDMA_SVC_CALL_RUNNING = 0,  /* its procedure is being called */
	RPCRDMA_SVC_CALL_DEFERRED = 1, /* the procedure answers later (rpcrdma_svc_reply) */
	RPCRDMA_SVC_CALL_PARKED = 2,   /* a retransmission waiting for its original's reply */
	RPCRDMA_SVC_CALL_WATCHING = 3, /* the same, the original running on another worker */
};

/** One call a server has not answered. */
struct rpcrdma_svc_call_info {
	uint32_t xid;
	uint32_t prog, vers, proc;
	uint64_t age_ms; /* since its arguments were complete */
	enum rpcrdma_svc_call_state state;
	uint32_t worker;       /* 0: the listener's loop; k: worker k */
	uint32_t conn_id;      /* the connection it came on (trace.h ids) */
	uint32_t read_segs;    /* Read segments it came with (over RDMA) */
	uint32_t write_chunks; /* Write chunks it offered (over RDMA) */
	uint32_t reply_chunk;  /* 1: it offered a Reply chunk */
};

/**
 * rpcrdma_server_inflight - the calls @srv has not answered, core by core
 * @out, @max: room for @max records (may be NULL and 0, to count)
 * @busy: if not NULL, the number of cores whose calls could not be listed
 *
 * Async-signal-safe (see above).  Returns how many calls there are (more
 * than @max when they did not all fit), or -EINVAL.
 */
RPCRDMA_EXTERN int rpcrdma_server_inflight(struct rpcrdma_server *srv,
					   struct rpcrdma_svc_call_info *out, unsigned int max,
					   unsigned int *busy);

/**
 * rpcrdma_server_inflight_write - the same as a text table on @fd
 *
 * One header line, then "xid prog vers proc age_ms state worker conn
 * rsegs wchunks rchunk" per call (at most 64, then how many more), and a
 * line for cores that were busy.  Async-signal-safe.  Returns the number of
 * calls, or -EINVAL, or -errno of write(2).
 */
RPCRDMA_EXTERN int rpcrdma_server_inflight_write(struct rpcrdma_server *srv, int fd);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_DEBUG_H */
