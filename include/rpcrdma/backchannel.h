/*
 * librpcrdma: bidirectional RPC-over-RDMA (RFC 8167).
 *
 * An ONC RPC server may call the client back on the connection the client
 * opened, as NFSv4.1 callbacks do.  The client hosts callback programs
 * (rpcrdma_client_register_callback(), dispatched like a server's
 * procedures, struct rpcrdma_svc_proc); the server obtains a backchannel for
 * a connected client from inside one of its procedures
 * (rpcrdma_svc_backchannel()) and calls through it, synchronously or not,
 * with struct rpcrdma_call as a client does.
 *
 * RFC 8167 section 6: a reverse call may only be sent once the peer has
 * said, in the upper layer's protocol, that it takes them (NFSv4.1:
 * CREATE_SESSION or BIND_CONN_TO_SESSION with a backchannel).  Until the
 * upper layer calls rpcrdma_backchannel_enable(), calls are refused locally
 * with RPCRDMA_ERR_BACKCHANNEL_OFF.
 *
 * Flow control: forward and reverse credits are separate (4.1).  A client
 * hosting callbacks keeps receives posted for its reverse credits on top of
 * those for its forward replies (4.3.1), and grants the server that many
 * reverse credits; a server keeps receives posted for the replies to its
 * reverse calls (4.3.2).  XIDs of the two directions are independent.
 *
 * Chunks work in the reverse direction as forward (Read chunks for
 * DDP-eligible arguments, a Write chunk for ddp_buf, a Reply chunk for
 * max_reply, Long Calls and Replies); a client may refuse them
 * (refuse_chunks): a reverse call carrying chunks then gets RDMA_ERROR
 * ERR_CHUNK (5.3), which the server's call sees as
 * RPCRDMA_ERR_TRANSPORT_ERROR.
 *
 * Retransmission (5.4): when the connection is lost, reverse calls wait for
 * the client to reconnect and the upper layer to rebind the backchannel
 * (rpcrdma_backchannel_bind(), e.g. on BIND_CONN_TO_SESSION), then go again
 * with the same XID; each call's time-out bounds the wait.  A client keeps
 * its connection open while it hosts callbacks (the library never closes
 * an idle one).
 *
 * RDMA only (TCP transports return -EPROTONOSUPPORT).  Everything runs on
 * the loop of the connection's server (rpcrdma_svc_loop()) or client.
 */
#ifndef RPCRDMA_BACKCHANNEL_H
#define RPCRDMA_BACKCHANNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "rpcrdma/rpc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Client side: callback programs. */

struct rpcrdma_callback_opts {
	uint32_t credits;   /* reverse credits granted (receives kept); 0: 16, at most 32 */
	bool refuse_chunks; /* reverse calls with chunks get ERR_CHUNK (RFC 8167 5.3) */
};

/** Fill @opts with the defaults documented above. */
RPCRDMA_EXTERN void rpcrdma_callback_opts_default(struct rpcrdma_callback_opts *opts);

/**
 * rpcrdma_client_register_callback - serve @prog/@vers on @clnt's connection
 * @procs, @nprocs: as rpcrdma_server_register() (a NULL fn: PROC_UNAVAIL)
 * @opts: the first registration's apply to all (NULL: defaults)
 *
 * Register before the client first connects: the receives for reverse
 * calls are posted with the connection.  The procedures run on the
 * client's loop with a struct rpcrdma_svc_req as on a server (deferred
 * answers included); the request is gone once answered, and the client
 * must not be destroyed from inside one of them.
 *
 * Returns 0; -EINVAL; -ENOMEM; -EEXIST for a program and version already
 * registered; -EISCONN once the client has connected; -EPROTONOSUPPORT
 * for a TCP client.
 */
RPCRDMA_EXTERN int rpcrdma_client_register_callback(struct rpcrdma_client *clnt, uint32_t prog,
						    uint32_t vers,
						    const struct rpcrdma_svc_proc *procs,
						    uint32_t nprocs,
						    const struct rpcrdma_callback_opts *opts);

/* Server side: reverse-direction calls. */

struct rpcrdma_backchannel;

struct rpcrdma_backchannel_opts {
	uint32_t prog, vers;  /* the client's callback program */
	uint32_t credits;     /* reverse credits to ask for; 0: 16, at most 32 */
	int timeout_ms;       /* per call, reconnection waits included; 0: 30000 */
	unsigned int retries; /* connections a call may lose; 0: 3 */
	const struct rpcrdma_opaque_auth *cred; /* NULL: AUTH_NONE */
};

/**
 * rpcrdma_svc_backchannel - the backchannel of the connection @req came on
 *
 * Call from a procedure (or before answering a deferred request), on the
 * request's loop.  Returns the backchannel already bound to that
 * connection (@opts ignored), or binds a new one, disabled.  It stays the
 * server's until rpcrdma_backchannel_release() or rpcrdma_server_destroy().
 *
 * Returns 0, -EINVAL, -ENOMEM, -ENOTCONN when the connection is gone, or
 * -EPROTONOSUPPORT when @req did not come over RDMA.
 */
RPCRDMA_EXTERN int rpcrdma_svc_backchannel(struct rpcrdma_svc_req *req,
					   const struct rpcrdma_backchannel_opts *opts,
					   struct rpcrdma_backchannel **out);

/**
 * rpcrdma_backchannel_bind - move @bc to the connection @req came on
 *
 * For a client that reconnected (RFC 8167 5.4): reverse calls waiting for a
 * connection go out on the new one.  Returns 0 (also when already bound
 * there), -EINVAL, -ENOTCONN, -EPROTONOSUPPORT, -EBUSY when another
 * backchannel holds that connection, or -EXDEV when that connection came
 * through another RDMA device than the one @bc was made on (a server on a
 * wildcard verbs address): make a new backchannel there.
 */
RPCRDMA_EXTERN int rpcrdma_backchannel_bind(struct rpcrdma_backchannel *bc,
					    struct rpcrdma_svc_req *req);

/**
 * rpcrdma_backchannel_enable - the upper layer's switch (RFC 8167 6)
 *
 * @on true once the peer has declared it takes reverse calls; false stops
 * new calls (those in flight go on).  Returns 0 or -EINVAL.
 */
RPCRDMA_EXTERN int rpcrdma_backchannel_enable(struct rpcrdma_backchannel *bc, bool on);

/**
 * rpcrdma_backchannel_call - a reverse call, waiting for it (runs the loop)
 *
 * As rpcrdma_client_call(); besides its codes, RPCRDMA_ERR_BACKCHANNEL_OFF
 * when not enabled (nothing sent).
 */
RPCRDMA_EXTERN int rpcrdma_backchannel_call(struct rpcrdma_backchannel *bc,
					    struct rpcrdma_call *call);

/**
 * rpcrdma_backchannel_call_async - start a reverse call; done runs on the loop
 *
 * As rpcrdma_client_call_async(); besides its codes,
 * RPCRDMA_ERR_BACKCHANNEL_OFF when not enabled (done will not run).
 */
RPCRDMA_EXTERN int rpcrdma_backchannel_call_async(struct rpcrdma_backchannel *bc,
						  struct rpcrdma_call *call);

/**
 * rpcrdma_backchannel_stats - the reverse direction of @bc, as a client
 * sees its calls (calls_sent, timeouts, credits_granted: the client's
 * reverse grant, ...).  Returns 0 or -EINVAL.
 */
RPCRDMA_EXTERN int rpcrdma_backchannel_stats(struct rpcrdma_backchannel *bc,
					     struct rpcrdma_xprt_stats *out);

/**
 * rpcrdma_backchannel_release - unbind and free @bc
 *
 * Calls outstanding complete with RPCRDMA_ERR_CANCELLED before it returns.
 * Not from inside one of @bc's completions.
 */
RPCRDMA_EXTERN void rpcrdma_backchannel_release(struct rpcrdma_backchannel *bc);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_BACKCHANNEL_H */
