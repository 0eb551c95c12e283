/*
 * clnt_internal.h - what the RPC client's files share: a call, a
 * connection and the client.  clnt.c owns calls (XIDs, the table, time-outs,
 * replies, the public API); clnt_conns.c owns the connections (one
 * transport each, opts.nconnect of them), which one a call leaves on, and
 * their loss and reconnection; inflight.c lists what is in flight.
 */
#ifndef RPCRDMA_RPC_CLNT_INTERNAL_H
#define RPCRDMA_RPC_CLNT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/list.h"
#include "common/sanitizer.h"
#include "rpc/core.h"
#include "rpc/loop_internal.h"

#define RPCRDMA__CLNT_TABLE_SIZE 1024u /* XIDs are sequential: xid & mask spreads evenly */
#define RPCRDMA__CLNT_HINT_SLOTS 64u   /* procedures whose large calls we remember */

/*
 * Finished calls' blocks a client keeps for its next calls, so that a
 * steady stream of calls allocates none.  None in AddressSanitizer builds,
 * where a block reused would hide a use after free.
 */
#define RPCRDMA__CLNT_SPARE_CALLS (RPCRDMA__ASAN ? 0u : 64u)

enum rpcrdma__conn_state {
	RPCRDMA__CONN_DOWN,
	RPCRDMA__CONN_CONNECTING,
	RPCRDMA__CONN_UP,
};

enum rpcrdma__cc_state {
	RPCRDMA__CC_QUEUED,  /* waiting to be sent (again) */
	RPCRDMA__CC_SENT,    /* a transport has it; a reply may come */
	RPCRDMA__CC_FENCING, /* given up on; the peer's access to its memory being revoked */
};

struct rpcrdma__clnt_conn;

struct rpcrdma__client_call {
	struct rpcrdma__creq req;
	struct rpcrdma_call *call;
	struct rpcrdma_client *clnt;
	/* SENT: the connection that has it.  QUEUED on conn->pinned: the
	 * connection it must go again on (TCP).  Otherwise NULL. */
	struct rpcrdma__clnt_conn *conn;
	struct rpcrdma__timer timer;
	struct rpcrdma__client_call *table_next; /* table chain; finished: the spares */
	struct rpcrdma__list node; /* on queued, a pinned list, sent, fencing (or a local list) */
	enum rpcrdma__cc_state state;
	unsigned int losses; /* connections lost while in flight */
	bool sent_once;
	uint64_t start_ns; /* for rpcrdma_client_inflight() */
	size_t hint;       /* room the last encode needed */
	int fence_status;  /* FENCING: what the caller gets once revoked */
	int send_err;      /* its send failed (or, on c->failed, its retries ran out): its status */
};

/* One connection of a client: a transport with its own credits, state and
 * reconnection.  The transport's callbacks get it as their context. */
struct rpcrdma__clnt_conn {
	struct rpcrdma_client *clnt;
	struct rpcrdma__clnt_transport *t;
	unsigned int idx;
	enum rpcrdma__conn_state state;
	bool blocked;  /* the transport said -EAGAIN: wait for writable */
	bool ever_up;
	bool disc_pending; /* a loss reported while flushing */
	int disc_err;
	unsigned int backoff_ms;
	uint64_t up_since_ms; /* loop time it last came up */
	bool answered;        /* a reply came on it since then */
	unsigned int nsent;   /* calls out on it now */
	uint64_t reconnects;
	struct rpcrdma__list pinned; /* TCP: calls lost with it, to go again on it first */
	struct rpcrdma__timer reconnect_timer;
	struct rpcrdma__timer disc_timer;
};

struct rpcrdma_client {
	struct rpcrdma_loop *loop;
	const struct rpcrdma__clnt_transport_ops *ops;
	struct rpcrdma__clnt_conn conns[RPCRDMA_NCONNECT_MAX];
	unsigned int nconn;
	unsigned int turn; /* where the next choice of connection starts */
	uint32_t prog, vers;
	struct rpcrdma_client_opts opts;
	struct rpcrdma_opaque_auth cred, verf;
	uint32_t next_xid;
	/* Room the last large call of procedure p needed (slot p % HINT_SLOTS),
	 * so a stream of large writes does not rediscover it each time. */
	size_t proc_hint[RPCRDMA__CLNT_HINT_SLOTS];
	struct rpcrdma__client_call *table[RPCRDMA__CLNT_TABLE_SIZE];
	struct rpcrdma__client_call *spare_calls; /* RPCRDMA__CLNT_SPARE_CALLS */
	unsigned int nspare_calls;
	struct rpcrdma__list queued, sent;
	struct rpcrdma__list fencing; /* FENCING calls, completed from on_aborted */
	/* Calls out of the client, failed with send_err, their done() yet to
	 * run: those a flush failed to send (clnt_conns.c, finish_failed)
	 * and those a lost connection left out of retries (on_disconnected).
	 * Here rather than on a local list so that a destroy from one of
	 * those done()s completes the rest before it returns. */
	struct rpcrdma__list failed;
	unsigned int nsent, nsent_max;

	bool flushing;            /* a transmit is on the stack: never while a done() runs */
	bool flush_again;         /* a flush was asked for while flushing */
	unsigned int conn_events; /* connected + disconnected, for client_connect */
	int last_err;
	struct rpcrdma__timer kick_timer;

	uint64_t retransmits, timeouts;

	unsigned int busy; /* client code on the stack */
	bool destroying;
	struct rpcrdma__timer free_timer;

	int refusal;                   /* calls fail with it before queueing (0: none) */
	struct rpcrdma_server *cb_srv; /* callback programs hosted (backchannel.h) */
};

/* clnt.c, for clnt_conns.c: the transport callbacks about calls (their
 * context is the connection, struct rpcrdma__clnt_conn). */
struct rpcrdma__creq *rpcrdma__clnt_on_find(void *ctx, uint32_t xid);
void rpcrdma__clnt_on_reply(void *ctx, struct rpcrdma__creq *req, struct rpcrdma_xdr_stream *msg);
void rpcrdma__clnt_on_failed(void *ctx, struct rpcrdma__creq *req, int err);
void rpcrdma__clnt_on_aborted(void *ctx, struct rpcrdma__creq *req);
void rpcrdma__clnt_enter(struct rpcrdma_client *c);
void rpcrdma__clnt_leave(struct rpcrdma_client *c);
struct rpcrdma__client_call *rpcrdma__clnt_call_at(struct rpcrdma__list *n);
/* Take @cc out of the client and complete it with @status (after its fence). */
void rpcrdma__clnt_fail_call(struct rpcrdma_client *c, struct rpcrdma__client_call *cc,
			     int status);
/* Take @cc out of the client (not the transport); the caller then finishes it. */
void rpcrdma__clnt_forget(struct rpcrdma_client *c, struct rpcrdma__client_call *cc);
void rpcrdma__clnt_finish(struct rpcrdma__client_call *cc, int status);
/* Send @cc, just queued, now if it can go, else kick (clnt_conns.c). */
void rpcrdma__clnt_send_now(struct rpcrdma_client *c, struct rpcrdma__client_call *cc);

/* clnt_conns.c */
extern const struct rpcrdma__clnt_cb rpcrdma__clnt_callbacks;
void rpcrdma__clnt_conn_init(struct rpcrdma_client *c, unsigned int idx);
/* Make the transports (one per connection); on failure none is left. */
int rpcrdma__clnt_conns_create(struct rpcrdma_client *c, const struct sockaddr *addr,
			       socklen_t addrlen);
/* Stop every connection's timers, then (@destroy) free its transport. */
void rpcrdma__clnt_conns_stop(struct rpcrdma_client *c, bool destroy);
/* Send queued calls from a zero-delay timer, connecting as needed. */
void rpcrdma__clnt_kick(struct rpcrdma_client *c);

#endif /* RPCRDMA_RPC_CLNT_INTERNAL_H */
