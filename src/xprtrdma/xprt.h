/*
 * The RPC-over-RDMA connection engine (Versions One and Two): the
 * interfaces its files share.  conn.c drives a provider instance from the
 * event loop and owns buffers, receive pools, the state of a connection
 * common to both roles, fencing and private data; partner.c the
 * role-neutral part of bidirectional operation; ddp.c (ddp.h) the XDR DDP
 * hooks; properties.c the transport properties feature.  The requester is
 * clnt_*.c (clnt.h), the responder svc_*.c (svc.h); only bidir.c knows
 * both.  Protocol decisions come from src/proto/plan.h.  The whole story,
 * with a call's path through the files, is in docs/architecture.md.
 *
 * Threads: everything here belongs to the loop's thread.
 */
#ifndef RPCRDMA_XPRT_XPRT_H
#define RPCRDMA_XPRT_XPRT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/list.h"
#include "proto/direction.h"
#include "proto/options.h"
#include "proto/plan.h"
#include "provider/provider.h"
#include "rpc/loop_internal.h"
#include "rpc/transport.h"
#include "rpcrdma/cm_private.h"
#include "rpcrdma/header.h"
#include "rpcrdma/rpc.h"
#include "rpcrdma/xdr.h"

/* Defaults (rpc.h documents them for the options). */
/* 8 KiB, not the kernel's 4 KiB: a 4 KiB NFS READ or WRITE with its RPC,
 * NFS and transport headers then travels inline between two peers that
 * both advertise it (RFC 8797 private data; the Send never exceeds what
 * the peer advertised, so kernel peers still get at most 4 KiB), one Send
 * instead of a Send, a grant, an RDMA Read or Write and a revoke. */
#define RPCRDMA__XPRT_INLINE_DEFAULT 8192u
/* Both ways on a provider that places RDMA data with the CPU
 * (RPCRDMA_PCAP_CPU_PLACEMENT: ofi): a READ or WRITE of up to 64 KiB then
 * travels in one Send instead of a Send, an RDMA Write or Read and a Send.
 * On libfabric tcp every message is several system calls and a wake-up of
 * the peer, which cost more than copying 64 KiB out of a receive buffer
 * (bench/README.md, "64 KiB inline on ofi").  What it lets a client make
 * a server hold: (2 x credits + 4) receive buffers per connection, 4.5 MiB
 * at the default 32 credits, below the 8 MiB of queued replies a
 * connection may already hold (docs/security.md). */
#define RPCRDMA__XPRT_INLINE_SOFT (68u * 1024u)
#define RPCRDMA__XPRT_CLNT_CREDITS_DEFAULT 128u
#define RPCRDMA__XPRT_SVC_CREDITS_DEFAULT 32u
#define RPCRDMA__XPRT_PROVIDER_DEFAULT "ofi"

/* The largest call or reply message (reduced: DDP data excluded) a stream
 * offers the core, whatever hint it gives. */
#define RPCRDMA__XPRT_MAX_MSG (16u << 20)
/* DDP-eligible arguments one call moves in Read chunks; more go inline. */
#define RPCRDMA__XPRT_MAX_DDP 8u
/* Entries of a call's Send: the header and the copied parts of the
 * message, and between them the DDP items sent from the caller's memory
 * (clnt_marshal.c, "Inline from the caller's memory"). */
#define RPCRDMA__XPRT_SEND_SGES 6u
/* Smaller DDP items of an inline call are copied: an entry of their own
 * costs the device a DMA descriptor, more than a copy of a few KiB. */
#define RPCRDMA__XPRT_LEND_MIN 4096u
/* Segments one call offers in all its Write chunks together, and in its
 * Reply chunk. */
#define RPCRDMA__XPRT_MAX_WSEGS 8u
/* Write chunks one call offers (RPCRDMA_CALL_MAX_WRITE_CHUNKS). */
#define RPCRDMA__XPRT_MAX_WCHUNKS 4u
/* Bytes in one segment we advertise (and the provider's max_msg_size). */
#define RPCRDMA__XPRT_MAX_SEG (1u << 30)
/* Remote grants one call may hold: Read chunks, the Position-Zero chunk,
 * the Write chunks' segments and the Reply chunk. */
#define RPCRDMA__XPRT_MAX_GRANTS (RPCRDMA__XPRT_MAX_DDP + 1 + RPCRDMA__XPRT_MAX_WSEGS + 1)
/* Room reserved for a transport header in our send buffers: every header
 * this engine sends fits (see rpcrdma__plan_call's -EMSGSIZE). */
#define RPCRDMA__XPRT_HDR_ROOM 2048u

/*
 * Completion dispatch.  Every context this engine hands the provider (a
 * posted operation, a revocation) starts with one of these; the provider's
 * COMPLETION event calls @done.
 */
struct rpcrdma__xop;
typedef void (*rpcrdma__xop_fn)(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev);

struct rpcrdma__xop {
	rpcrdma__xop_fn done;
};

/*
 * A provider instance driven by the loop.  The provider's fd is watched;
 * the before-sleep hook only asks trywait (hooks must not run the loop, and
 * dispatching can reach the core's callbacks, which may), and when there is
 * work it arms a 0 ms timer whose callback polls and dispatches.  Events are
 * taken one at a time, so a nested run of the loop from a callback never
 * reorders them.
 */
struct rpcrdma__xdev {
	struct rpcrdma_loop *loop;
	struct rpcrdma_provider *prov;
	struct rpcrdma__watch watch;
	struct rpcrdma__watch cm_watch; /* connection events, when apart */
	struct rpcrdma__hook hook;
	struct rpcrdma__timer kick;
	struct rpcrdma__timer pool_trim; /* rpcrdma__bufpool_trim, periodically */
	/* Connection, listener and device events (not completions). */
	void (*on_event)(struct rpcrdma__xdev *dev, const struct rpcrdma_prov_event *ev);
	void *ctx;
	int failed;                       /* 0, or the instance's error: only close is left */
	struct rpcrdma__xfence *deferred; /* fences waiting to revoke more */
	/* Reverse-direction partners their core let go of while operations
	 * were outstanding (partner.c): freed once idle, or at close. */
	struct rpcrdma__xpartner *buried;
};

/**
 * rpcrdma__xdev_open - open a provider instance and watch it from a loop
 * @dev: the device to fill
 * @loop: the loop that drives it
 * @name: the provider ("ofi" or "verbs")
 * @local: the local address that picks the device
 * @locallen: its length
 * @on_event: connection, listener and device events (not completions)
 * @ctx: @dev->ctx
 *
 * Return: 0 or a negative errno.
 */
int rpcrdma__xdev_open(struct rpcrdma__xdev *dev, struct rpcrdma_loop *loop, const char *name,
		       const struct sockaddr *local, socklen_t locallen,
		       void (*on_event)(struct rpcrdma__xdev *, const struct rpcrdma_prov_event *),
		       void *ctx);
/**
 * rpcrdma__xdev_close - stop the loop's watches and close the instance
 * @dev: the device; no event follows
 */
void rpcrdma__xdev_close(struct rpcrdma__xdev *dev);
/**
 * rpcrdma__xdev_add_stats - add the instance's operation counters to @out
 * @dev: the device (nothing is added when it has no open instance)
 * @out: the prov_* counters of struct rpcrdma_xprt_stats
 */
void rpcrdma__xdev_add_stats(const struct rpcrdma__xdev *dev, struct rpcrdma_xprt_stats *out);
/**
 * rpcrdma__xdev_drain - poll and dispatch events
 * @dev: the device
 * @max: the most events to dispatch
 *
 * Return: how many were dispatched.
 */
unsigned int rpcrdma__xdev_drain(struct rpcrdma__xdev *dev, unsigned int max);

/**
 * rpcrdma__xprt_local_addr - the local address a connection would leave from
 * @dst: the destination
 * @dstlen: its length
 * @out: the address (port 0), from a route look-up through a connected
 *	UDP socket
 * @outlen: its length
 *
 * Return: 0 or a negative errno.
 */
int rpcrdma__xprt_local_addr(const struct sockaddr *dst, socklen_t dstlen,
			     struct sockaddr_storage *out, socklen_t *outlen);

/*
 * A buffer of ours with a local registration (Sends, receives, RDMA Read
 * targets, RDMA Write sources, and regions we grant for Long messages).
 */
struct rpcrdma__xbuf {
	uint8_t *addr;
	size_t len;
	struct rpcrdma_prov_mr *mr;
};

/**
 * rpcrdma__xbuf_reserve - make a registered buffer at least @len bytes
 * @p: the provider instance that registers it
 * @b: the buffer (kept when already large enough)
 * @len: the bytes needed
 *
 * Return: 0 or a negative errno.
 */
int rpcrdma__xbuf_reserve(struct rpcrdma_provider *p, struct rpcrdma__xbuf *b, size_t len);
/**
 * rpcrdma__xbuf_free - give a buffer back to its instance's pool (bufpool.c)
 * @b: the buffer (emptied)
 */
void rpcrdma__xbuf_free(struct rpcrdma__xbuf *b);

/*
 * Registered buffers kept for reuse: large ones (bulk data) cost a
 * malloc, fresh pages to fault in and a registration each time, more
 * than the data they carry.  Bounded in count and bytes; one per provider
 * instance, whose registrations they are.
 */
#define RPCRDMA__XBUF_SPARES 8u
struct rpcrdma__xbuf_spares {
	struct rpcrdma__xbuf bufs[RPCRDMA__XBUF_SPARES];
	unsigned int n;
	size_t bytes, max_bytes;
};

/**
 * rpcrdma__xbuf_take - as rpcrdma__xbuf_reserve(), from the spares first
 * @sp: the spares; the smallest that fits is taken
 * @p: the provider instance
 * @b: the buffer
 * @len: the bytes needed
 *
 * Return: 0 or a negative errno.
 */
int rpcrdma__xbuf_take(struct rpcrdma__xbuf_spares *sp, struct rpcrdma_provider *p,
		       struct rpcrdma__xbuf *b, size_t len);
/**
 * rpcrdma__xbuf_give - keep a buffer for reuse
 * @sp: the spares (full: the buffer is freed)
 * @b: the buffer (emptied)
 */
void rpcrdma__xbuf_give(struct rpcrdma__xbuf_spares *sp, struct rpcrdma__xbuf *b);
/**
 * rpcrdma__xbuf_spares_free - free every spare
 * @sp: the spares
 */
void rpcrdma__xbuf_spares_free(struct rpcrdma__xbuf_spares *sp);

/*
 * Receive buffers: all of one size (our advertised inline receive size),
 * carved from registered slabs of RPCRDMA__XRECV_SLAB that grow on demand
 * up to a limit and are kept across reconnections; a server gives back
 * what its connections no longer need when they go
 * (rpcrdma__xrecv_pool_trim).
 */
#define RPCRDMA__XRECV_SLAB 32u

struct rpcrdma__xconn;

struct rpcrdma__xrecv {
	struct rpcrdma__xop op;
	struct rpcrdma__xconn *conn; /* where it is posted or was received */
	uint64_t conn_gen;
	uint8_t *buf;
	struct rpcrdma_prov_mr *mr;
	uint32_t len; /* bytes received */
	bool taken;   /* out of the pool (rpcrdma__xrecv_get) */
	struct rpcrdma__xrecv *next;
	struct rpcrdma__xrecv_slab *slab;
};

struct rpcrdma__xrecv_slab;

struct rpcrdma__xrecv_pool {
	struct rpcrdma_provider *prov;
	uint32_t size;
	uint32_t total, max; /* buffers registered (draining included), the most */
	uint32_t draining;   /* buffers of slabs freed with their last one put */
	struct rpcrdma__xrecv *free;
	struct rpcrdma__xrecv_slab *slabs;
	/* Called after total changed (may be NULL); the owner's to count. */
	void (*resized)(struct rpcrdma__xrecv_pool *pool);
};

/**
 * rpcrdma__xrecv_pool_init - an empty pool of receive buffers
 * @pool: the pool
 * @prov: the provider instance that registers its slabs
 * @size: the size of every buffer (our inline receive size)
 * @max: the most buffers it may hold
 */
void rpcrdma__xrecv_pool_init(struct rpcrdma__xrecv_pool *pool, struct rpcrdma_provider *prov,
			      uint32_t size, uint32_t max);
/**
 * rpcrdma__xrecv_pool_destroy - free a pool's slabs
 * @pool: the pool, none of whose buffers may still be posted
 */
void rpcrdma__xrecv_pool_destroy(struct rpcrdma__xrecv_pool *pool);
/**
 * rpcrdma__xrecv_get - a receive buffer
 * @pool: the pool
 *
 * Return: the buffer, or NULL when the pool is at its limit or memory ran
 * out.
 */
struct rpcrdma__xrecv *rpcrdma__xrecv_get(struct rpcrdma__xrecv_pool *pool);
/**
 * rpcrdma__xrecv_put - give a receive buffer back
 * @pool: the pool
 * @r: the buffer
 */
void rpcrdma__xrecv_put(struct rpcrdma__xrecv_pool *pool, struct rpcrdma__xrecv *r);
/**
 * rpcrdma__xrecv_pool_trim - bring the pool down towards @keep buffers
 * @pool: the pool
 * @keep: the buffers to keep, besides those of draining slabs
 *
 * Slabs no buffer uses are freed now; then, while the rest would still
 * hold @keep, slabs with buffers still taken are marked draining (the
 * fewest taken first): each is freed when its last buffer is put back,
 * and none of their buffers is handed out meanwhile unless the pool must
 * grow (a draining slab is taken back before a new one is registered).
 * Each slab freed is a deregistration: call it when connections go, not
 * per message.
 */
void rpcrdma__xrecv_pool_trim(struct rpcrdma__xrecv_pool *pool, uint32_t keep);

/*
 * One connection, as both roles see it.  A requester and a responder embed
 * it; the role-specific state (credits, calls) lives with the role, so a
 * bidirectional connection carries both on one of these (the partner's
 * copy shares the owner's provider connection).
 */
enum rpcrdma__xconn_state {
	RPCRDMA__XCONN_IDLE,       /* no provider connection */
	RPCRDMA__XCONN_CONNECTING, /* connect or accept called */
	RPCRDMA__XCONN_UP,         /* ESTABLISHED */
	RPCRDMA__XCONN_DOWN,       /* terminal event seen; cleaning up */
};

struct rpcrdma__xconn {
	struct rpcrdma__xdev *dev;
	struct rpcrdma_prov_conn *pc;
	enum rpcrdma__xconn_state state;
	uint64_t gen; /* changes with every provider connection */
	uint32_t id;  /* trace id of the current provider connection (trace.h) */
	/* RPC-over-RDMA version spoken on this connection: the requester's
	 * negotiation (proto/version.h) sets it; a responder takes it from
	 * the first call it accepts, and answers each call in its own. */
	uint32_t vers;
	bool vers_known;                /* responder: a call fixed @vers */
	struct rpcrdma_cm_private peer; /* as decoded (defaults if none) */
	struct rpcrdma_inline thr;
	bool peer_invalidate; /* the peer takes Send With Invalidate */
	/* Send queue: Sends, RDMA Reads and Writes share it. */
	uint32_t sq_depth, sq_used;
	/* RDMA Reads we may have in flight (the peer's IRD). */
	uint32_t rd_depth, rd_used;
	uint32_t recv_posted;
	/* Operations posted and not yet completed, of any kind: the owner
	 * may free this only at 0 (completions still name it). */
	uint32_t ops_out;
	struct rpcrdma__xrecv_pool *pool;
	rpcrdma__xop_fn on_recv; /* completion handler of its receives */
	struct rpcrdma_xprt_stats *st;
	void *owner;
	/* Send-queue entries of this connection left to a bidirectional
	 * partner (set by the owner; 0: none). */
	uint32_t bc_sq_share;
};

/**
 * rpcrdma__xconn_fill_recvs - post receives up to a target
 * @c: the connection
 * @target: receives to have posted (fewer when the pool is out)
 *
 * Return: 0, or the error of a post that failed.
 */
int rpcrdma__xconn_fill_recvs(struct rpcrdma__xconn *c, uint32_t target);
/**
 * rpcrdma__xconn_repost - post one receive again
 * @c: the connection
 * @r: a buffer the caller took back from a completion
 *
 * Return: 0 or a negative errno.
 */
int rpcrdma__xconn_repost(struct rpcrdma__xconn *c, struct rpcrdma__xrecv *r);
/**
 * rpcrdma__xconn_recv_completed - account for a receive completion
 * @c: the connection (ops_out included)
 * @r: the buffer
 * @ev: the completion
 *
 * Return: true when it belongs to @c's current connection; false for a
 * stale completion, whose buffer went back to the pool.
 */
bool rpcrdma__xconn_recv_completed(struct rpcrdma__xconn *c, struct rpcrdma__xrecv *r,
				   const struct rpcrdma_prov_event *ev);

/**
 * rpcrdma__xconn_private - our RFC 8797 private data
 * @inline_send: our inline send size
 * @inline_recv: our inline receive size
 * @invalidate: we take Send With Invalidate
 * @buf: where it is encoded
 * @cap: room in @buf
 *
 * Return: its length.
 */
size_t rpcrdma__xconn_private(uint32_t inline_send, uint32_t inline_recv, bool invalidate,
			      uint8_t *buf, size_t cap);
/**
 * rpcrdma__xconn_negotiate - set the thresholds from the peer's private data
 * @c: the connection
 * @pdata: the peer's private data, or NULL when none came
 * @len: its length
 * @our_send: our inline send size
 * @our_recv: our inline receive size
 */
void rpcrdma__xconn_negotiate(struct rpcrdma__xconn *c, const void *pdata, size_t len,
			      uint32_t our_send, uint32_t our_recv);
/**
 * rpcrdma__xconn_set_version - the connection speaks @vers now
 * @c: the connection
 * @vers: the version negotiation settled on
 * @our_send: our inline send size
 * @our_recv: our inline receive size
 *
 * Thresholds again, with that version's default for a peer that sent no
 * private data (1024 or 4096), without dropping the connection.
 */
void rpcrdma__xconn_set_version(struct rpcrdma__xconn *c, uint32_t vers, uint32_t our_send,
				uint32_t our_recv);
/* Tests: send no RFC 8797 private data (both roles), so that the
 * versions' default thresholds apply. */
extern bool rpcrdma__xprt_omit_private;

/**
 * rpcrdma__xprt_inline_size - normalise a configured inline size
 * @configured: 0 for the default
 * @dflt: the default (rpcrdma__xprt_inline_default)
 *
 * Return: the size clamped to [1024, RPCRDMA_CM_MAX_INLINE] and rounded
 * down to what RFC 8797 can advertise (whole KiB), so buffers are exactly
 * what the peer is told.
 */
uint32_t rpcrdma__xprt_inline_size(uint32_t configured, uint32_t dflt);

/**
 * rpcrdma__xprt_inline_default - the inline size used when none is configured
 * @prov: the instance the transport runs on
 */
uint32_t rpcrdma__xprt_inline_default(const struct rpcrdma_provider *prov);

/*
 * Remote access granted for one RPC, and its fencing.  A grant covers one
 * segment; its registration is either borrowed (our own buffers) or owned
 * (the caller's buffer, registered for this RPC and deregistered once the
 * grant is revoked).
 */
struct rpcrdma__xgrant {
	struct rpcrdma_prov_grant *g;
	uint32_t handle;
};

struct rpcrdma__xfence {
	struct rpcrdma__xop op;
	unsigned int pending; /* REVOKE completions still to come (+1 while deferred) */
	void (*done)(struct rpcrdma__xfence *f);
	/* Revocations the provider could not take yet (-EAGAIN: too many in
	 * flight); retried by the device after each event it dispatches. */
	struct rpcrdma__xdev *dev;
	struct rpcrdma__xgrant *g;
	unsigned int n;
	bool deferred;
	struct rpcrdma__xfence *next_deferred;
	/* Revocations the provider refused: only the connection's end can
	 * fence those (the owner's done callback looks). */
	unsigned int refused;
};

/**
 * rpcrdma__xfence_start - revoke a call's grants
 * @f: the fence
 * @dev: the device the grants were made on
 * @g: the grants (entries with g == NULL are skipped, done ones cleared)
 * @n: their number
 * @done: called once every REVOKE completion has arrived -- possibly
 *	before returning, when nothing was granted; it may free @f's owner,
 *	so the caller must not touch it afterwards
 * @failed: gets the number of revocations the provider refused (may be NULL)
 *
 * Return: the number of revocations started.
 */
unsigned int rpcrdma__xfence_start(struct rpcrdma__xfence *f, struct rpcrdma__xdev *dev,
				   struct rpcrdma__xgrant *g, unsigned int n,
				   void (*done)(struct rpcrdma__xfence *), unsigned int *failed);

/**
 * rpcrdma__xfence_cancel - take a fence off its device's deferred list
 * @f: the fence, whose owner is being freed with the instance still open
 */
void rpcrdma__xfence_cancel(struct rpcrdma__xfence *f);

/*
 * Bidirectional RPC-over-RDMA (RFC 8167; partner.c, and bidir.c for the
 * glue that knows both roles).  The role that opened or accepted a
 * connection (the "owner": the client's requester, the server's responder)
 * posts every receive on it and keeps it; the other direction is served by
 * a "partner" of the opposite role (the client's callback responder, the
 * server's reverse requester) that sends on the owner's connection and
 * never posts receives of its own.  The owner tells each message's
 * direction (rpcrdma__bc_direction) and hands a message of the partner's
 * direction to the partner, which copies it into one of its own buffers,
 * so each role keeps its own buffers, credits and counters.  An owner
 * reaches its partner only through struct rpcrdma__xpartner, so neither
 * role depends on the other.
 */

/* Reverse credits, either end: requested (server) or granted (client). */
#define RPCRDMA__BC_CREDITS_DEFAULT 16u
#define RPCRDMA__BC_CREDITS_MAX 32u
/* Send-queue entries set aside for the partner on a connection that may
 * carry a backchannel: a reverse call is one Send, a reverse reply a Send
 * plus its Writes, and the callback responder's Reads go one by one. */
#define RPCRDMA__BC_SQ_SHARE 48u

struct rpcrdma__xpartner;

/**
 * struct rpcrdma__xpartner_ops - what an owner may ask of its partner
 * @recv: a message of the partner's direction arrived on the owner's
 *	connection (@flags: the receive completion's); the partner copies it
 * @attach: the owner's connection @owner is up: send on it (its version,
 *	thresholds and send-queue share)
 * @update: the owner's version or thresholds changed on the same connection
 * @detach: the owner's connection is going (@err: why, or 0); the partner
 *	fences what it has in flight while the connection still exists
 * @idle: nothing posted or fenced is outstanding: @free may be called
 * @credits: receives the partner asks its owner to keep posted for it
 * @free: frees the partner (idle, or its provider instance about to close)
 * @stats: adds the partner's counters to @out's reverse-direction ones
 *
 * Each role provides one table (clnt_partner.c: the reverse requester;
 * svc_partner.c: the callback responder); the ones a role does not need
 * may be NULL.
 */
struct rpcrdma__xpartner_ops {
	void (*recv)(struct rpcrdma__xpartner *p, const uint8_t *buf, uint32_t len,
		     unsigned int flags);
	void (*attach)(struct rpcrdma__xpartner *p, const struct rpcrdma__xconn *owner);
	void (*update)(struct rpcrdma__xpartner *p, const struct rpcrdma__xconn *owner);
	void (*detach)(struct rpcrdma__xpartner *p, int err);
	bool (*idle)(struct rpcrdma__xpartner *p);
	uint32_t (*credits)(struct rpcrdma__xpartner *p);
	void (*free)(struct rpcrdma__xpartner *p);
	void (*stats)(struct rpcrdma__xpartner *p, struct rpcrdma_xprt_stats *out);
};

/**
 * struct rpcrdma__xpartner - a role serving the reverse direction
 * @ops: its operations
 * @buried_next: link on its device's list of buried partners
 *
 * Embedded in the role's transport; the role finds itself back with
 * container arithmetic.
 */
struct rpcrdma__xpartner {
	const struct rpcrdma__xpartner_ops *ops;
	struct rpcrdma__xpartner *buried_next;
};

/**
 * rpcrdma__bc_direction - the direction of a received message
 * @buf: the message
 * @len: its length
 * @lim: header limits to decode it against
 * @scratch: where its header is decoded
 *
 * Return: RPCRDMA__DIR_* of proto/direction.h.
 */
int rpcrdma__bc_direction(const uint8_t *buf, uint32_t len, const struct rpcrdma_hdr_limits *lim,
			  struct rpcrdma_hdr *scratch);

/**
 * rpcrdma__bc_fold_stats - a partner's counters as reverse-direction ones
 * @out: the owner's counters, whose rev_* fields grow
 * @p: the partner's own counters
 * @requester: the partner is a reverse requester (server side)
 */
void rpcrdma__bc_fold_stats(struct rpcrdma_xprt_stats *out, const struct rpcrdma_xprt_stats *p,
			    bool requester);

/**
 * rpcrdma__xdev_bury - keep a partner its core let go of
 * @dev: the provider instance its operations were posted on
 * @p: the partner, not idle yet
 *
 * The partner is freed by rpcrdma__xdev_reap() once idle.
 */
void rpcrdma__xdev_bury(struct rpcrdma__xdev *dev, struct rpcrdma__xpartner *p);

/**
 * rpcrdma__xdev_reap - free buried partners
 * @dev: their provider instance
 * @all: every one (the instance is about to close), not only idle ones
 */
void rpcrdma__xdev_reap(struct rpcrdma__xdev *dev, bool all);

/*
 * RPC-over-RDMA Version Two optional features a responder serves (draft
 * section 3; proto/options.h).  The responder fills this context for the
 * connection an RDMA_OPTIONAL came on, dispatches through its registry, and
 * sends @answer (when the handler left one) as an RDMA_OPTIONAL of the same
 * opttype and XID.
 */
struct rpcrdma__xopt_ctx {
	struct rpcrdma__xconn *conn;
	uint32_t our_send, our_recv, credits;
	struct rpcrdma__props peer; /* the last properties the peer sent */
	uint8_t answer[128];
	uint32_t answer_len;
};

/* properties.c: RPCRDMA_OPT_PROPERTIES (docs/rpcrdma-v2-properties.md). */
extern const struct rpcrdma__opt_feature rpcrdma__xprops_feature;
/**
 * rpcrdma__xprops_build - our properties as rdma_optinfo (both roles send the same four)
 * @buf: where they are encoded
 * @cap: room in @buf
 * @our_send: our inline send size
 * @our_recv: our inline receive size
 * @credits: our credits
 *
 * Return: the length, or -ENOSPC.
 */
int rpcrdma__xprops_build(uint8_t *buf, size_t cap, uint32_t our_send, uint32_t our_recv,
			  uint32_t credits);

/**
 * rpcrdma__xprt_clnt_provider - tests: the provider instance behind a requester
 * @t: the transport
 */
struct rpcrdma_provider *rpcrdma__xprt_clnt_provider(struct rpcrdma__clnt_transport *t);
/**
 * rpcrdma__xprt_svc_provider - tests: the provider instance behind a responder
 * @t: the transport
 */
struct rpcrdma_provider *rpcrdma__xprt_svc_provider(struct rpcrdma__svc_transport *t);

#endif /* RPCRDMA_XPRT_XPRT_H */
