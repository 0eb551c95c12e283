/*
 * svc_internal.h - what the server core's dispatch (svc.c) and its reply
 * path (svc_reply.c) share: the server, its requests and programs.
 */
#ifndef RPCRDMA_RPC_SVC_INTERNAL_H
#define RPCRDMA_RPC_SVC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/list.h"
#include "common/sanitizer.h"
#include "rpc/core.h"
#include "rpc/drc.h"
#include "rpc/loop_internal.h"

struct rpcrdma__svc_prog {
	struct rpcrdma__svc_prog *next;
	uint32_t prog, vers;
	uint32_t nprocs;
	struct rpcrdma_svc_proc *procs;
	_Atomic bool *idempotent; /* per procedure; set while workers dispatch */
	void *ctx;                /* rpcrdma_svc_prog_ctx() */
	void (*release)(void *ctx); /* when the server is freed; may be NULL */
};

/*
 * Arguments and results of a procedure that fit this many bytes together
 * live inside the request: no allocation of their own per call.  Not in
 * AddressSanitizer builds, where a block of its own lets an overrun of
 * either be caught.
 */
#define RPCRDMA__SVC_INLINE_ARGS (RPCRDMA__ASAN ? 0 : 256)

/*
 * Requests a core keeps for reuse once answered, so that a steady stream
 * of calls allocates none.  None in AddressSanitizer builds, where a block
 * reused would hide a use after free.
 */
#define RPCRDMA__SVC_SPARE_REQS (RPCRDMA__ASAN ? 0u : 64u)

enum rpcrdma__svc_req_state {
	RPCRDMA__SVC_RUNNING,  /* being dispatched */
	RPCRDMA__SVC_DEFERRED, /* the procedure will answer through rpcrdma_svc_reply() */
	RPCRDMA__SVC_PARKED,   /* a duplicate waiting for its original's reply */
	RPCRDMA__SVC_WATCHING, /* a duplicate of a call running on another worker */
	RPCRDMA__SVC_SPARE,    /* answered, kept for reuse: a late rpcrdma_svc_reply()
				* on it is refused, as on any request not waiting */
};

struct rpcrdma_svc_req {
	struct rpcrdma_server *srv;
	struct rpcrdma__sreq *t;
	const struct rpcrdma_svc_proc *proc;
	void *prog_ctx; /* its registration's context (rpcrdma_server_register2) */
	void *args, *res;
	struct rpcrdma__drc_entry *drc;     /* running: its cache entry (the entry's owner is us) */
	struct rpcrdma_svc_req *parked;     /* running: its newest duplicate waiting */
	struct rpcrdma_svc_req *orig;       /* parked: the call it waits for */
	struct rpcrdma_svc_req *older;      /* parked: the duplicate parked before it */
	struct rpcrdma_svc_req *spare_next; /* answered: on the core's spares */
	struct rpcrdma__drc_key key;        /* watching: the call it waits for */
	struct rpcrdma_xdr_stream wargs;    /* watching: its arguments, to run it itself */
	struct rpcrdma__timer watch;        /* watching: the next look at the cache */
	uint32_t watch_ms;
	/* Set on the core's thread, read by rpcrdma_server_inflight() from any. */
	_Atomic(enum rpcrdma__svc_req_state) state;
	bool ran;                   /* the procedure was called: free_res applies */
	struct rpcrdma__list wnode; /* on the core's waiting list: deferred or parked */
	struct rpcrdma__list live;  /* on the core's live list, from its decode to free */
	uint64_t start_ns;          /* arrival, for rpcrdma_server_inflight() */
	/* The transport's call, as rpcrdma_server_inflight() shows it: copied
	 * at publish, since the transport may free its call (a TCP reply
	 * sent) before the request leaves the live list. */
	uint32_t conn_id, read_segs, write_chunks;
	bool reply_chunk;
	/*
	 * Not cleared by rpcrdma__svc_req_new (everything above is): the
	 * call header, written whole by its decode (or cleared when that
	 * fails) before the request goes on the live list, and the room for
	 * small arguments and results, cleared by run_proc as it uses it.
	 */
	struct rpcrdma_rpc_msg msg;
	max_align_t inline_args[RPCRDMA__SVC_INLINE_ARGS / sizeof(max_align_t) + 1];
};

/* Duplicates parked on one call at most: each took a reconnection. */
#define RPCRDMA__SVC_PARKED_MAX 4u

struct rpcrdma__svc_worker {
	struct rpcrdma_server *srv; /* the worker's core */
	struct rpcrdma_loop *loop;
	pthread_t thread;
	bool running;
};

/*
 * A server, or one worker's core.  A worker's core has its own loop,
 * transport, deferred and parked requests and counters, all touched only
 * on its thread; the program registry and the duplicate request cache are
 * its root's, shared under the root's locks.
 */
struct rpcrdma_server {
	struct rpcrdma_loop *loop;
	const struct rpcrdma__svc_transport_ops *ops;
	struct rpcrdma__svc_transport *t;
	struct rpcrdma_server_opts opts;
	struct rpcrdma_server *root;  /* itself, or the server a worker serves */
	struct rpcrdma__list waiting; /* deferred and parked requests (wnode) */
	/* Every request of the core, for rpcrdma_server_inflight() from any
	 * thread: linked and unlinked under live_lock. */
	struct rpcrdma__list live;
	pthread_mutex_t live_lock;
	uint64_t bad_msgs, dups;
	/* Answered requests kept for the next calls (RPCRDMA__SVC_SPARE_REQS). */
	struct rpcrdma_svc_req *spare_reqs;
	unsigned int nspare_reqs;
	unsigned int busy;
	bool destroying;
	bool finalizing; /* rpcrdma__svc_finalize is under way */
	struct rpcrdma__timer free_timer;
	/* The root's alone. */
	pthread_rwlock_t reg_lock; /* progs: registered here, read by workers */
	pthread_mutex_t drc_lock;  /* drc, and the owner slots of its entries */
	struct rpcrdma__svc_prog *progs;
	struct rpcrdma__drc *drc;
	struct rpcrdma__svc_worker *workers;
	unsigned int nworkers, next_worker;
	/* Set once the server's destruction is under way or queued to its
	 * loop from a worker's thread (rpcrdma_server_destroy): the one
	 * thing about it a worker may look at while the server's thread
	 * destroys it. */
	atomic_bool destroy_queued;
	/* Reverse-direction clients of this core's connections. */
	struct rpcrdma__server_bc_hooks bc;
	/* The root's: connections admitted and not yet released, on any
	 * worker (max_conns). */
	_Atomic unsigned int nconns;
	/* The root's: receive-buffer bytes the RDMA connections of every
	 * worker reserved (max_recv_total), changed as they come and go. */
	_Atomic size_t recv_reserved;
	/* The root's: reply bytes queued on every transport and worker
	 * (max_queued_total; transport.h rpcrdma__svc_over_queued_total).
	 * Written by every worker at each reply: on a cache line of its own,
	 * so that it does not slow what the workers read beside it. */
	char queued_pad0[64];
	_Atomic size_t queued_total;
	char queued_pad1[64];
	/* Eviction at max_conns (svc_lru.c): this core's admitted
	 * connections with nothing in progress, least recently active first;
	 * those with only replies queued that do not move; and those chosen
	 * to be closed on its loop.  Under lru_lock: the listener's thread
	 * takes from every core's list. */
	pthread_mutex_t lru_lock;
	struct rpcrdma__list lru_idle, lru_stalled, lru_evict;
	struct rpcrdma__timer evict_timer; /* the root's own evictions */
};

/**
 * rpcrdma__svc_lru_idle - cb->conn_idle: list @e as @ctx's most recently active idle connection
 * @ctx: the core the transport reports to
 * @e: an admitted connection with nothing in progress
 */
void rpcrdma__svc_lru_idle(void *ctx, struct rpcrdma__svc_lru_entry *e);

/* How long a connection's queued replies must not have moved before it
 * may be closed for a newcomer at max_conns with no idle one (svc_lru.c). */
#define RPCRDMA__SVC_STALL_EVICT_MS 1000u

/**
 * rpcrdma__svc_lru_stalled - cb->conn_stalled: list @e as one whose only business is queued replies
 * @ctx: the core the transport reports to
 * @e: an admitted connection with no call in progress and replies queued
 * @since: when its replies last moved (loop ms)
 */
void rpcrdma__svc_lru_stalled(void *ctx, struct rpcrdma__svc_lru_entry *e, uint64_t since);

/**
 * rpcrdma__svc_lru_busy - cb->conn_busy: take @e off the lists of @ctx
 * @ctx: the core the transport reports to
 * @e: the connection, listed or not
 *
 * Return: false when @e had been chosen for eviction: the caller closes it.
 */
bool rpcrdma__svc_lru_busy(void *ctx, struct rpcrdma__svc_lru_entry *e);

/**
 * rpcrdma__svc_lru_evict_one - choose a connection to close for a new one at max_conns
 * @root: the server, on its listener's loop
 *
 * Picks the least recently active idle connection over the server and
 * its workers, or when none is idle the one whose queued replies have
 * not moved for longest (at least RPCRDMA__SVC_STALL_EVICT_MS), and has
 * it closed on its own loop.
 *
 * Return: false when every connection has a call in progress or replies
 * that move.
 */
bool rpcrdma__svc_lru_evict_one(struct rpcrdma_server *root);

/* A cached reply copied out of the cache. */
struct rpcrdma__svc_cached {
	void *bytes;
	size_t len;
	struct rpcrdma__drc_ddp *ddp;
	unsigned int nddp;
};

/**
 * rpcrdma__svc_waiting_add - file @r among @s's deferred and parked requests
 * @s: the core @r belongs to
 * @r: a request on no list
 */
void rpcrdma__svc_waiting_add(struct rpcrdma_server *s, struct rpcrdma_svc_req *r);

/**
 * rpcrdma__svc_waiting_remove - take @r off @s's deferred and parked requests
 * @s: the core @r belongs to
 * @r: a request, filed or not
 */
void rpcrdma__svc_waiting_remove(struct rpcrdma_server *s, struct rpcrdma_svc_req *r);

/* Worker loops a server may have (rpcrdma_server_opts.workers). */
#define RPCRDMA__SVC_WORKERS_MAX 256u

/**
 * rpcrdma__svc_finalize - free core @s now: nothing of it may be on the stack
 * @s: a server, or a worker's core (whose loop then stops)
 *
 * Return: 0, or -EBUSY when a worker's loop was left to the application
 * (rpcrdma__svc_workers_stop()); @s is freed either way.
 */
int rpcrdma__svc_finalize(struct rpcrdma_server *s);

/**
 * rpcrdma__svc_worker_start - start worker @w of @root: its loop, its core
 * (a transport without a listener, served through @cb) and its thread
 * @addr, @addrlen: the server's address, for the transport
 *
 * Return: 0 or a negative errno; @w is then stopped by
 * rpcrdma__svc_workers_stop() either way.
 */
int rpcrdma__svc_worker_start(struct rpcrdma_server *root, struct rpcrdma__svc_worker *w,
			      const struct sockaddr *addr, socklen_t addrlen,
			      const struct rpcrdma__svc_cb *cb);

/**
 * rpcrdma__svc_workers_stop - stop and join every worker of @s, after each
 * served what was handed to it; not on a worker's thread
 *
 * Return: how many workers' loops were not freed, a client or server of
 * the application's still on them (rpcrdma_server_destroy()).
 */
unsigned int rpcrdma__svc_workers_stop(struct rpcrdma_server *s);

/** The worker of @s whose thread calls, or NULL. */
struct rpcrdma__svc_worker *rpcrdma__svc_worker_of_thread(const struct rpcrdma_server *s);

/**
 * rpcrdma__svc_place - cb->place: the next worker's transport, round robin
 * @ctx: the listener's core
 *
 * Return: the transport, or NULL to keep the connection on the listener.
 */
struct rpcrdma__svc_transport *rpcrdma__svc_place(void *ctx);

/**
 * rpcrdma__svc_core_init - the lists and lock every core (a server, or a
 * worker's core) starts with
 * @s: a zeroed core
 */
void rpcrdma__svc_core_init(struct rpcrdma_server *s);

/**
 * rpcrdma__svc_core_fini - undo rpcrdma__svc_core_init
 * @s: a core whose requests are all freed
 */
void rpcrdma__svc_core_fini(struct rpcrdma_server *s);

/**
 * rpcrdma__svc_req_new - a request of @s for the transport's @t, not yet
 * on the live list
 *
 * Return: the request, or NULL without memory.
 */
struct rpcrdma_svc_req *rpcrdma__svc_req_new(struct rpcrdma_server *s, struct rpcrdma__sreq *t);

/**
 * rpcrdma__svc_req_publish - put @r on its core's live list
 * @r: a new request whose header is final (decoded, or cleared)
 *
 * rpcrdma_server_inflight() reads the live lists from other threads: what
 * it reads of a request is written before it is linked, under the lock
 * that reader takes.
 */
void rpcrdma__svc_req_publish(struct rpcrdma_svc_req *r);

/**
 * rpcrdma__svc_req_free - free @r, running free_res if its procedure ran
 * @r: a request the transport no longer refers to
 */
void rpcrdma__svc_req_free(struct rpcrdma_svc_req *r);
/*
 * rpcrdma__svc_reply_done - the transport no longer reads @r's results
 * (transport.h, done): free it, with its core held busy, since over RDMA
 * this comes from a completion handler and free_res may destroy the server
 */
void rpcrdma__svc_reply_done(struct rpcrdma_svc_req *r);

/**
 * rpcrdma__svc_reply_accepted - answer @r with MSG_ACCEPTED and @stat
 * @s: the core
 * @r: the request; freed (now, or once the transport is done with its results)
 * @stat: the accept_stat; SUCCESS encodes the procedure's results
 * @low: PROG_MISMATCH: the lowest version registered
 * @high: PROG_MISMATCH: the highest version registered
 *
 * A reply that reaches a procedure also goes to the duplicate request
 * cache and to every duplicate parked on @r.  Results that do not encode
 * become SYSTEM_ERR.
 */
void rpcrdma__svc_reply_accepted(struct rpcrdma_server *s, struct rpcrdma_svc_req *r, uint32_t stat,
				 uint32_t low, uint32_t high);

/**
 * rpcrdma__svc_reply_denied - answer @r with MSG_DENIED
 * @s: the core
 * @r: the request; freed
 * @reject: RPC_MISMATCH (with version 2 as the range) or AUTH_ERROR
 * @auth_stat: AUTH_ERROR: why
 */
void rpcrdma__svc_reply_denied(struct rpcrdma_server *s, struct rpcrdma_svc_req *r, uint32_t reject,
			       uint32_t auth_stat);

/**
 * rpcrdma__svc_answer - answer @r as its procedure's return value asks
 * @s: the core
 * @r: the request; freed
 * @status: 0 (SUCCESS), -PROG_UNAVAIL, -PROC_UNAVAIL or -GARBAGE_ARGS;
 *          anything else is SYSTEM_ERR
 */
void rpcrdma__svc_answer(struct rpcrdma_server *s, struct rpcrdma_svc_req *r, int status);

/**
 * rpcrdma__svc_send_cached - send a reply from the cache to the duplicate @r
 * @s: the core
 * @r: the duplicate; the caller frees it (its transport request is released)
 * @bytes: the reply's XDR bytes
 * @len: their length
 * @ddp: where the reply's DDP-eligible items are, placed again as DDP
 * @nddp: how many
 */
void rpcrdma__svc_send_cached(struct rpcrdma_server *s, struct rpcrdma_svc_req *r,
			      const void *bytes, size_t len, const struct rpcrdma__drc_ddp *ddp,
			      unsigned int nddp);

/**
 * rpcrdma__svc_drop_parked - release a parked or watching duplicate unanswered
 * @s: the core
 * @r: the duplicate; freed
 */
void rpcrdma__svc_drop_parked(struct rpcrdma_server *s, struct rpcrdma_svc_req *r);

/**
 * rpcrdma__svc_cached_copy - copy the reply of cache entry @e out of the cache
 * @drc: the cache; caller holds the root's drc_lock
 * @e: an answered entry
 * @c: filled; free with rpcrdma__svc_cached_free() whatever is returned
 *
 * Return: true, or false when out of memory.
 */
bool rpcrdma__svc_cached_copy(struct rpcrdma__drc *drc, struct rpcrdma__drc_entry *e,
			      struct rpcrdma__svc_cached *c);

/**
 * rpcrdma__svc_cached_free - free what rpcrdma__svc_cached_copy() copied
 * @c: the copy
 */
void rpcrdma__svc_cached_free(struct rpcrdma__svc_cached *c);

#endif
