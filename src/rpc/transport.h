/*
 * transport.h - the contract between the transport-neutral RPC core
 * (src/rpc/clnt.c, svc.c) and a transport: TCP with record marking
 * (src/xprtsock/) or RPC-over-RDMA (src/xprtrdma/).
 *
 * The core owns calls, XIDs, retransmission, time-outs, authentication,
 * program dispatch and the duplicate request cache.  A transport owns
 * connections, buffers, framing and (RDMA) chunks, credits and memory
 * registration.  Neither knows the other's internals.  All callbacks run
 * on the loop's thread; no callback may destroy the transport it was
 * called from (defer with rpcrdma_loop_wake()).  The ops below say, each,
 * what happens on the way; docs/architecture.md tells the whole flow.
 */
#ifndef RPCRDMA_RPC_TRANSPORT_H
#define RPCRDMA_RPC_TRANSPORT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/list.h"
#include "rpc/call_cause.h"
#include "rpcrdma/rpc.h"
#include "rpcrdma/xdr.h"

struct rpcrdma__clnt_transport;
struct rpcrdma__svc_transport;

/* One outgoing call as the transport sees it. */
struct rpcrdma__creq {
	uint32_t xid;
	const void *ddp_buf; /* offer as a Write chunk (may be NULL) */
	size_t ddp_len;
	/* Or one Write chunk per entry, in order (rpcrdma_call.ddp_list);
	 * ddp_buf is NULL then. */
	const struct rpcrdma_ddp_buf *ddp_list;
	unsigned int ddp_count;
	size_t max_reply;    /* 0: unknown; the transport then assumes inline */
	/* The call's own time-out in ms (rpcrdma_call.timeout_ms, else the
	 * client's), -1 for none: a transport's clock on the connection must
	 * not cut it sooner. */
	int timeout_ms;
	/* Room the core asks call_begin for, in bytes; 0: the transport's
	 * default.  When an encode runs out of room the core calls call_abort,
	 * raises the hint and calls call_begin again; a transport that cannot
	 * offer more returns the same room and the call fails. */
	size_t send_hint;
	struct rpcrdma_xdr_stream send; /* set by call_begin */
	void *core;          /* the core's call */
	void *tpriv;         /* the transport's per-call state */
	uint32_t conn_id;    /* set by call_send: the connection it left on (trace.h) */
	/* Why it failed, when the status alone does not say (what the
	 * peer's RDMA_ERROR carried, which check a reply failed): set by
	 * the transport before cb->failed, or by the core; zero otherwise. */
	struct rpcrdma__call_cause cause;
};

/**
 * struct rpcrdma__clnt_cb - what a client transport calls in the core
 * @find: the call waiting for @xid, or NULL (the transport counts and drops
 *        the reply).
 * @reply: a reply for @req.  Every remote access granted for @req is
 *         unreachable already (revoked, or the peer's Send With
 *         Invalidate).  @msg starts at the RPC reply header, with a DDP
 *         context that resolves rpcrdma_xdr_decode_ddp() against the Write
 *         chunk; the core decodes during the call, @msg is invalid after.
 * @failed: @req ends with @err (RDMA_ERROR: RPCRDMA_ERR_TRANSPORT_ERROR),
 *          its grants revoked as for @reply; req->cause says more when
 *          the transport knows more (the RDMA_ERROR's code and range).
 * @connected: the connection asked for by connect is up.
 * @disconnected: the connection is gone or could not be made.  Every call
 *                outstanding has had its remote access revoked (closing
 *                the connection fences it, RFC 8166 5.5.4) and is
 *                forgotten; the core reconnects and sends each unfinished
 *                call again from call_begin with the same XID, or fails it
 *                when its retries run out.
 * @writable: credits or queue space freed: calls held back may go now.
 * @aborted: a call whose call_abort returned 1: the peer can no longer
 *           reach its memory (may be NULL: the owner does not wait).
 */
struct rpcrdma__clnt_cb {
	struct rpcrdma__creq *(*find)(void *ctx, uint32_t xid);
	void (*reply)(void *ctx, struct rpcrdma__creq *req, struct rpcrdma_xdr_stream *msg);
	void (*failed)(void *ctx, struct rpcrdma__creq *req, int err);
	void (*connected)(void *ctx);
	void (*disconnected)(void *ctx, int err);
	void (*writable)(void *ctx);
	void (*aborted)(void *ctx, struct rpcrdma__creq *req);
};

/*
 * Who releases what (client):
 *   - call_begin that fails has set up nothing; -EAGAIN from it means the
 *     same as from call_send.
 *   - call_send that fails (-EAGAIN included) has released what call_begin
 *     set up; the core starts again from call_begin.
 *   - call_abort releases a req at any point after call_begin, sent or not
 *     (time-out, cancel, or an encode that failed before call_send).
 *   - connect that returns an error has started nothing and no callback
 *     follows; 0 means cb->connected or cb->disconnected will follow.
 *   - stats fills *out; the core then sets reconnects, retransmits and
 *     timeouts itself (it owns them), whatever the transport wrote there.
 */
/**
 * struct rpcrdma__clnt_transport_ops - a client transport
 * @name: for logs ("tcp", "rdma").
 * @create: a transport for the server at @addr, not connected yet.
 *          Returns 0 with *@out set, -EINVAL or -ENOMEM.
 * @connect: start connecting.  0: cb->connected or cb->disconnected
 *           follows (never from inside this call); an error: nothing was
 *           started and no callback follows; -EALREADY while a connection
 *           is up or under way.
 * @call_begin: give @req a stream to encode into (req->send, with room
 *              for req->send_hint bytes), with a DDP context attached
 *              when the transport places DDP-eligible arguments (Read
 *              chunks).  -ENOTCONN, -EAGAIN (as from call_send) or -ENOMEM
 *              have set up nothing.
 * @call_send: send the call the core encoded into req->send: the transport
 *             chooses how it travels (inline, Read chunks, Long Call;
 *             Write chunks for req->ddp_buf or ddp_list; a Reply chunk when
 *             req->max_reply exceeds its inline receive size), within its
 *             credits.  Returns 0 (sent or queued), -EAGAIN (no credit or
 *             buffer: wait for cb->writable, then call_begin again), or an
 *             error for this call; on any error what call_begin set up is
 *             released.
 * @call_abort: forget @req (time-out, cancel, or an encode that failed
 *              before call_send) and revoke its remote access.  Returns 0
 *              when nothing the call granted is reachable any more, or 1
 *              while a revocation is still under way: cb->aborted(req)
 *              follows once it completed (before cb->disconnected reports
 *              a loss), or destroy ends it (closing the instance ends every
 *              grant).  The core hands the call's memory back only then.
 * @disconnect: drop the connection now (tests, and the core after a fatal
 *              error); cb->disconnected follows from a timer.
 * @destroy: free the transport; no callback follows.  NULL is a no-op.
 * @stats: fill *@out for rpcrdma_client_stats(); the core then sets
 *         reconnects, retransmits and timeouts itself (it owns them).
 */
struct rpcrdma__clnt_transport_ops {
	const char *name;
	int (*create)(struct rpcrdma_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		      const struct rpcrdma_client_opts *opts, const struct rpcrdma__clnt_cb *cb,
		      void *cb_ctx, struct rpcrdma__clnt_transport **out);
	int (*connect)(struct rpcrdma__clnt_transport *t);
	int (*call_begin)(struct rpcrdma__clnt_transport *t, struct rpcrdma__creq *req);
	int (*call_send)(struct rpcrdma__clnt_transport *t, struct rpcrdma__creq *req);
	int (*call_abort)(struct rpcrdma__clnt_transport *t, struct rpcrdma__creq *req);
	void (*disconnect)(struct rpcrdma__clnt_transport *t);
	void (*destroy)(struct rpcrdma__clnt_transport *t);
	void (*stats)(struct rpcrdma__clnt_transport *t, struct rpcrdma_xprt_stats *out);
};

/* One incoming call as the transport hands it over. */
struct rpcrdma__sreq {
	struct rpcrdma_xdr_stream reply; /* set by reply_begin */
	/* Room the core asks reply_begin for; 0: the transport's default.
	 * As send_hint: after an encode ran out of room the core raises it and
	 * calls reply_begin again, which replaces the stream it gave before. */
	size_t reply_hint;
	void *core;
	void *tpriv;
	const struct sockaddr *peer;
	/* For rpcrdma_server_inflight(): the connection's trace id, and the
	 * chunks the call came with (none on TCP). */
	uint32_t conn_id;
	uint32_t read_segs, write_chunks;
	bool reply_chunk;
	/*
	 * Set by the core before reply_begin when the results it encodes may
	 * be referenced rather than copied: DDP-eligible results then stay in
	 * the core's (the application's) memory, and the transport calls
	 * done(done_ctx) exactly once, after reply_send or reply_drop, when
	 * nothing it posted refers to that memory any more (possibly before
	 * reply_send returns).  NULL: the transport copies what it keeps.
	 */
	void (*done)(void *ctx);
	void *done_ctx;
};

/*
 * What cb->conn_admit answers: refused (max_conns reached, counted in
 * conns_refused), admitted, or admitted by closing the least recently
 * active connection that had nothing in progress (conns_evicted).
 */
enum rpcrdma__svc_admit {
	RPCRDMA__SVC_REFUSED,
	RPCRDMA__SVC_ADMITTED,
	RPCRDMA__SVC_ADMITTED_EVICTING,
};

/*
 * A server connection as the eviction at max_conns sees it (svc_lru.c).
 * The transport embeds it in its connection, sets @evict, and calls
 * cb->conn_idle, cb->conn_stalled and cb->conn_busy; @node, @since and @state belong to the
 * core, under the lock of the core the transport reports to.
 */
struct rpcrdma__svc_lru_entry {
	struct rpcrdma__list node;
	uint64_t since; /* last activity (loop ms): the order of the idle list */
	unsigned char state;
	bool chosen_stalled; /* chosen from the stalled ones: @evict counts it */
	bool listed; /* the transport's: between conn_idle and a conn_busy */
	/* The transport's: listed by conn_stalled, with this @since. */
	bool stalled;
	uint64_t stalled_since;
	/* Closes the connection: runs on its loop, after the core took the
	 * entry off every list. */
	void (*evict)(struct rpcrdma__svc_lru_entry *e);
};

/**
 * struct rpcrdma__svc_cb - what a server transport calls in the core
 * @call: a valid call, @msg the call message rebuilt as one XDR stream (Read
 *        chunks already pulled and inserted at their positions, round-up
 *        added).  The core dispatches, then answers through reply_begin
 *        and reply_send, or releases @req with reply_drop; it may do so
 *        later, from another callback.
 * @conn_closed: the connection @conn is gone; its calls stay valid until
 *               reply_send or reply_drop, and their replies are discarded.
 * @place: worker loops; see below.
 * @conn_admit: the connection limit; see below.
 * @conn_release: gives back what @conn_admit admitted; see below.
 * @conn_idle: an admitted connection may be evicted from now on; see below.
 * @conn_busy: it may not any more; see below.
 */
struct rpcrdma__svc_cb {
	void (*call)(void *ctx, struct rpcrdma__sreq *req, struct rpcrdma_xdr_stream *msg);
	void (*conn_closed)(void *ctx, void *conn);
	/*
	 * Worker loops (may be NULL): called on the listener's loop for each
	 * connection it accepts.  Returns the worker transport (made by
	 * ops->worker on another loop) that serves the connection from now
	 * on, or NULL to serve it here.  The listener hands it over safely
	 * across threads; its calls then reach the worker's cb->call on the
	 * worker's loop.  A worker must outlive the listener (destroy the
	 * listener first), so nothing is ever handed to a worker that is gone.
	 * A handoff that fails leaves the connection with the listener.
	 */
	struct rpcrdma__svc_transport *(*place)(void *ctx);
	/*
	 * The connection limit (may be NULL: no limit).  The listener asks
	 * conn_admit, on its loop, for each connection before it is accepted
	 * or handed to a worker; RPCRDMA__SVC_REFUSED: refuse it (and count
	 * conns_refused); RPCRDMA__SVC_ADMITTED_EVICTING: accept it, and count
	 * conns_evicted (another connection is being closed for it).
	 * Every admitted connection is given back exactly once with
	 * conn_release, on the loop that served it, when it and every call
	 * read from it are gone (or it could not be set up): calls outlive
	 * their connection, holding what was read for them, so a client
	 * that closes with calls in progress does not get its place back
	 * until they are answered or dropped.
	 */
	enum rpcrdma__svc_admit (*conn_admit)(void *ctx);
	void (*conn_release)(void *ctx);
	/*
	 * The process is out of descriptors (may be NULL): the listener's
	 * accept failed with EMFILE or ENFILE, so peers wait in the backlog
	 * whatever max_conns allows.  Asks for the least recently active
	 * idle connection to be closed, as at max_conns, so that the next
	 * accept can succeed; true when one was chosen (counted in
	 * conns_evicted).  Without it, silent connections held the
	 * descriptors until their idle clock ran out.
	 */
	bool (*conn_nofile)(void *ctx);
	/*
	 * Eviction at the limit (may be NULL: none).  A transport lists each
	 * admitted connection with conn_idle, on the loop that serves it,
	 * whenever it has nothing in progress: no call taken in, served,
	 * deferred or answered, no reply queued; a TCP record not yet whole,
	 * or an RDMA call whose Read chunks are still being read, is no call
	 * taken in.  It lists it again (as the most recent) when it receives
	 * while listed, and takes it off with conn_busy before it takes a
	 * call in (a whole TCP record; an RDMA call whose Reads are done),
	 * and when it closes.  When conn_busy returns false the connection
	 * was chosen for eviction meanwhile and is off every list (e->listed
	 * false): e->evict will not run for it, so the transport drops what
	 * arrived and closes it itself.  The entry must stay valid until
	 * conn_busy has taken it off (svc_lru.c).
	 *
	 * conn_stalled (may be NULL) lists it instead while its only business
	 * is replies queued (no call in progress, nothing deferred), with when
	 * they last moved: a TCP reply record last left the queue, an RDMA
	 * Send or Write last completed, or the first was queued.  The
	 * transport calls it again each time they move, and takes it off
	 * with conn_busy as for conn_idle; chosen, it is closed with its
	 * replies (svc_lru.c says when).
	 */
	void (*conn_idle)(void *ctx, struct rpcrdma__svc_lru_entry *e);
	void (*conn_stalled)(void *ctx, struct rpcrdma__svc_lru_entry *e, uint64_t since);
	bool (*conn_busy)(void *ctx, struct rpcrdma__svc_lru_entry *e);
	/*
	 * The server's count of reply bytes queued over all its transports
	 * and workers (may be NULL: none), asked once when a transport is
	 * made; transports add and subtract what they queue and finish
	 * (rpcrdma__svc_queued_add/sub) and hold back new calls past
	 * max_queued_total (rpcrdma__svc_over_queued_total).
	 */
	_Atomic size_t *(*queued_total)(void *ctx);
	/*
	 * max_recv_total (may be NULL: no such bound).  An RDMA transport
	 * reserves the receive buffers of each admitted connection before it
	 * accepts it: @min and @full bytes are what it must have and what
	 * its configured credits let it hold, beyond what the transport's
	 * pool already has charged; @each is what the fewest credits of one
	 * connection hold, kept for those that may come.  Returns the bytes
	 * reserved, from @min to @full, or 0 with @min above 0: refuse it.
	 * recv_unreserve gives them back when the connection is released
	 * (any loop); recv_charge adds bytes beyond the bound, for receives a
	 * connection must post whatever the budget (a backchannel's replies)
	 * and for what a transport's receive pool holds beyond its
	 * connections' reservations, and is undone by recv_unreserve.
	 */
	size_t (*recv_reserve)(void *ctx, size_t min, size_t full, size_t each);
	void (*recv_unreserve)(void *ctx, size_t bytes);
	void (*recv_charge)(void *ctx, size_t bytes);
	/*
	 * How many transports of this kind the server has, one per loop (its
	 * own and each worker's; may be NULL: one): a bound that each
	 * enforces on its own, such as max_read_bytes, is split among them.
	 */
	unsigned int (*cores)(void *ctx);
};

/*
 * Who releases what (server):
 *   - reply_begin may be called more than once for one req (a larger
 *     reply_hint, or the core starting over to answer SYSTEM_ERR); each
 *     call replaces the stream.  When it fails the core calls reply_lost.
 *   - reply_send releases the req whatever it returns (an error means the
 *     reply was lost, e.g. the connection is gone).
 *   - A req stays valid after its connection closed (cb->conn_closed),
 *     until reply_send or reply_drop; a reply to it is then discarded.
 *   - stats: the core adds its own counts (bad_msgs for calls it could not
 *     parse; retransmits: duplicate calls its DRC caught).
 */
/**
 * struct rpcrdma__svc_transport_ops - a server transport
 * @name: for logs ("tcp", "rdma").
 * @listen: listen on @addr and serve what connects.  Returns 0 with *@out
 *          set, -EINVAL, -ENOMEM, or the socket's or provider's -errno
 *          (-EADDRINUSE...).
 * @worker: a transport that does not listen: it serves what a listener on
 *          another loop hands it (cb->place).  @addr is the listener's
 *          (over RDMA it picks the device).  Same return values as @listen.
 * @port: the port listened on, or -errno.
 * @reply_begin: a stream for @req's reply (req->reply, room for
 *               req->reply_hint bytes), with a DDP context that places
 *               DDP-eligible results into the call's Write chunks.  May be
 *               called again for the same @req (a larger hint, or the core
 *               starting over to answer SYSTEM_ERR): each call replaces the
 *               stream.  When it fails the core calls @reply_lost.
 * @reply_send: send the reply encoded into req->reply: inline, with Write
 *              chunks, through the Reply chunk, or ERR_CHUNK when it fits
 *              neither.  Releases @req whatever it returns; an error means
 *              the reply was lost (the connection is gone, or closes: a
 *              transport error that loses a reply closes the connection).
 * @reply_drop: release @req without answering: a message that wants no
 *              answer, or a duplicate while other copies are answered.
 * @reply_lost: release @req whose answer is owed and cannot be given (no
 *              memory for it: @err).  The transport closes the connection
 *              when it is still up (RFC 8166 5.5.4: a responder that cannot
 *              send a reply MUST), so that the client sends the call again
 *              on a new one at once: over RDMA a client sends again only
 *              after it reconnects, and the unanswered call holds one of
 *              its credits until then.  TCP does the same, rather than
 *              leave the client to its time-out.  Counted in replies_lost.
 * @destroy: stop listening, finish replies in progress, close, free.
 * @stats: fill *@out; the core adds its own counts (bad_msgs for calls it
 *         could not parse; retransmits: duplicate calls its cache caught).
 */
struct rpcrdma__svc_transport_ops {
	const char *name;
	int (*listen)(struct rpcrdma_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		      const struct rpcrdma_server_opts *opts, const struct rpcrdma__svc_cb *cb,
		      void *cb_ctx, struct rpcrdma__svc_transport **out);
	int (*worker)(struct rpcrdma_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		      const struct rpcrdma_server_opts *opts, const struct rpcrdma__svc_cb *cb,
		      void *cb_ctx, struct rpcrdma__svc_transport **out);
	int (*port)(struct rpcrdma__svc_transport *t);
	int (*reply_begin)(struct rpcrdma__sreq *req);
	int (*reply_send)(struct rpcrdma__sreq *req);
	void (*reply_drop)(struct rpcrdma__sreq *req);
	void (*reply_lost)(struct rpcrdma__sreq *req, int err);
	void (*destroy)(struct rpcrdma__svc_transport *t);
	void (*stats)(struct rpcrdma__svc_transport *t, struct rpcrdma_xprt_stats *out);
};

/*
 * The server's resource bounds (rpcrdma_server_opts, docs/security.md),
 * with the defaults applied.  Why these defaults: six idle minutes is what
 * the Linux NFS server allows; 30 seconds for a call to arrive or a reply
 * to move is far beyond any healthy network and short enough that a
 * stalled peer is gone long before a client's own time-out would retry;
 * 8 MiB of queued replies covers a pipeline of eight 1 MiB READs, which
 * fills any link a client can keep up with; 256 MiB of Read-chunk buffers
 * is 64 concurrent 4 MiB WRITEs per transport.  Every server transport
 * enforces them; the core computes them (rpcrdma__svc_bounds_of, svc.c).
 */
/* The largest call a server takes when opts.max_record is 0 (any transport). */
#define RPCRDMA__SVC_MAX_RECORD_DEFAULT ((1u << 20) + (64u << 10))
#define RPCRDMA__SVC_MAX_CONNS_DEFAULT 1024u
#define RPCRDMA__SVC_IDLE_MS_DEFAULT 360000u
#define RPCRDMA__SVC_RECORD_MS_DEFAULT 30000u
#define RPCRDMA__SVC_QUEUED_DEFAULT ((size_t)8 << 20)
#define RPCRDMA__SVC_DRAIN_MS_DEFAULT 30000u
#define RPCRDMA__SVC_READ_BYTES_DEFAULT ((size_t)256 << 20)
#define RPCRDMA__SVC_QUEUED_TOTAL_DEFAULT ((size_t)256 << 20)
#define RPCRDMA__SVC_RECV_TOTAL_DEFAULT ((size_t)1 << 30)

struct rpcrdma__svc_bounds {
	unsigned int max_conns;
	uint32_t idle_ms, record_ms, drain_ms;
	size_t max_queued;
	size_t max_read_bytes;
	/* The loops a server-wide bound is shared by (cb->cores; 1 without). */
	unsigned int cores;
	/* How often a connection looks at its clocks: a quarter of the
	 * shortest time-out, within 10 ms .. 5 s. */
	uint32_t tick_ms;
	/* max_queued_total, and the server's count of queued reply bytes
	 * over all its transports (cb->queued_total; NULL: no such bound,
	 * as for a client's callback responder). */
	size_t max_queued_total;
	_Atomic size_t *queued_total;
};

/* Computes @out from @opts; @cb and @cb_ctx give the shared count. */
void rpcrdma__svc_bounds_of(const struct rpcrdma_server_opts *opts,
			    const struct rpcrdma__svc_cb *cb, void *cb_ctx,
			    struct rpcrdma__svc_bounds *out);

/* Reply bytes a connection queued (+) or finished with (-). */
static inline void rpcrdma__svc_queued_add(const struct rpcrdma__svc_bounds *b, size_t n)
{
	if (b->queued_total && n)
		atomic_fetch_add_explicit(b->queued_total, n, memory_order_relaxed);
}

static inline void rpcrdma__svc_queued_sub(const struct rpcrdma__svc_bounds *b, size_t n)
{
	if (b->queued_total && n)
		atomic_fetch_sub_explicit(b->queued_total, n, memory_order_relaxed);
}

/*
 * Whether a connection with a reply queued or a call in progress must
 * take no new call because the server as a whole holds max_queued_total.
 * One without either always may: the clients that read their replies
 * are served, one call at a time, and each connection held back goes on
 * once its own replies are done, whatever the others do.
 */
static inline bool rpcrdma__svc_over_queued_total(const struct rpcrdma__svc_bounds *b)
{
	return b->queued_total &&
	       atomic_load_explicit(b->queued_total, memory_order_relaxed) >= b->max_queued_total;
}

extern const struct rpcrdma__clnt_transport_ops rpcrdma__tcp_clnt_ops;
extern const struct rpcrdma__svc_transport_ops rpcrdma__tcp_svc_ops;
extern const struct rpcrdma__clnt_transport_ops rpcrdma__rdma_clnt_ops;
extern const struct rpcrdma__svc_transport_ops rpcrdma__rdma_svc_ops;

#endif /* RPCRDMA_RPC_TRANSPORT_H */
