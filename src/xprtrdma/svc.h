/*
 * The responder (rpcrdma__rdma_svc_ops): a listener, the connections it
 * accepts and the calls received on them, split by stage into svc_*.c.
 * The first part is what the rest of the engine (bidir.c) may reach; the
 * second what the stage files share.  docs/architecture.md tells the
 * whole story.
 */
#ifndef RPCRDMA_XPRT_SVC_H
#define RPCRDMA_XPRT_SVC_H

#include "xprtrdma/ddp.h"
#include "xprtrdma/xprt.h"

/**
 * rpcrdma__xsvc_partner_create - a client's callback responder
 * @dev: the owner's provider instance (borrowed: never watched or closed)
 * @inline_send: the owner's inline send size
 * @inline_recv: the owner's inline receive size
 * @credits: reverse credits it grants (0: the default; capped)
 * @refuse_chunks: answer reverse calls carrying chunks with ERR_CHUNK
 * @cb: the core's callbacks
 * @cb_ctx: their context
 * @out: the transport made
 *
 * It posts no receives: its owner hands it the call-direction messages
 * (through rpcrdma__xsvc_partner()).
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int rpcrdma__xsvc_partner_create(struct rpcrdma__xdev *dev, uint32_t inline_send,
				 uint32_t inline_recv, uint32_t credits, bool refuse_chunks,
				 const struct rpcrdma__svc_cb *cb, void *cb_ctx,
				 struct rpcrdma__svc_transport **out);

/* How long a callback responder lets the server leave a reverse call's
 * Read chunks unread before it closes the connection (ms; the forward
 * server's record_timeout_ms default; tests shorten it).  Read when the
 * responder is made. */
extern uint32_t rpcrdma__xsvc_partner_record_ms;

/**
 * rpcrdma__xsvc_partner - what an owner sees of a callback responder
 * @t: a transport made by rpcrdma__xsvc_partner_create()
 */
struct rpcrdma__xpartner *rpcrdma__xsvc_partner(struct rpcrdma__svc_transport *t);

/**
 * rpcrdma__xsvc_req_conn - the RDMA connection a request came on
 * @sreq: the core's request
 *
 * Return: the connection (opaque), or NULL when it is gone, belongs to a
 * callback responder, or the request did not come over RDMA.
 */
void *rpcrdma__xsvc_req_conn(struct rpcrdma__sreq *sreq);

/**
 * rpcrdma__xsvc_conn_bc - the backchannel bound to a connection
 * @conn: a connection from rpcrdma__xsvc_req_conn(), or NULL
 *
 * Return: the @bc given to rpcrdma__xsvc_conn_bind(), or NULL.
 */
void *rpcrdma__xsvc_conn_bc(void *conn);

/**
 * rpcrdma__xsvc_conn_bind - bind a reverse requester to a connection
 * @conn: the connection
 * @partner: the reverse requester (NULL: unbinds)
 * @down: called with @bc when the connection goes
 * @bc: the backchannel it serves
 *
 * The connection's receives for the partner's replies are posted before
 * the partner is attached (RFC 8167 4.3.2).
 *
 * Return: 0, -EBUSY when another backchannel holds the connection,
 * -ENOTCONN when it is down.
 */
/**
 * rpcrdma__xsvc_conn_home - the transport that serves connection @conn:
 * the server's, a worker's, or on a wildcard verbs server the one of the
 * connection's device (whose protection domain its memory must be in)
 */
struct rpcrdma__svc_transport *rpcrdma__xsvc_conn_home(void *conn);

int rpcrdma__xsvc_conn_bind(void *conn, struct rpcrdma__xpartner *partner, void (*down)(void *bc),
			    void *bc);

/**
 * rpcrdma__xsvc_dev - a responder's provider instance
 * @t: the responder
 */
struct rpcrdma__xdev *rpcrdma__xsvc_dev(struct rpcrdma__svc_transport *t);

/**
 * rpcrdma__xsvc_inline - a responder's inline sizes
 * @t: the responder
 * @send: its inline send size
 * @recv: its inline receive size
 */
void rpcrdma__xsvc_inline(struct rpcrdma__svc_transport *t, uint32_t *send, uint32_t *recv);

/*
 * Shared by the responder's stage files.
 */
enum rpcrdma__xsreq_state {
	SREQ_IDLE,
	SREQ_READING, /* pulling Read chunks */
	SREQ_CORE,    /* handed to the core */
	SREQ_QUEUED,  /* reply waiting for send-queue room */
	SREQ_POSTED,  /* reply Writes and Send posted */
};

enum rpcrdma__xsreq_form {
	SFORM_INLINE,
	SFORM_LONG,
	SFORM_ERROR, /* an RDMA_ERROR already encoded in sbuf */
};

struct rpcrdma__xsvc;

struct rpcrdma__xsconn;

/* One RDMA Read of a call: one remote segment into the read buffer. */
struct rpcrdma__xsvc_read {
	struct rpcrdma__xop op;
	struct rpcrdma__xsreq *s;
	uint32_t handle;
	uint32_t len;
	uint64_t offset;
	size_t local_off;
};

#define XSREQ_MAX_ROPS (RPCRDMA_HDR_MAX_READS + RPCRDMA_REBUILD_MAX_PIECES)

struct rpcrdma__xsreq {
	struct rpcrdma__sreq sreq; /* the core's view; tpriv points back */
	/* The client's address for sreq.peer, copied: a request may outlive
	 * its connection (transport.h). */
	struct sockaddr_storage peer;
	struct rpcrdma__xsconn *conn;
	enum rpcrdma__xsreq_state state;
	struct rpcrdma__xsreq *next; /* free list, read or send queue */
	struct rpcrdma__xsreq *all_prev, *all_next;
	bool counted; /* counted in conn->in_progress */
	struct rpcrdma__xrecv *r;
	struct rpcrdma_hdr hdr; /* the call's transport header */
	bool msgp;

	/* Read chunks. */
	struct rpcrdma__xbuf rdbuf;
	size_t rd_total; /* bytes its Read chunks bring (charged to the conn) */
	bool rd_charged;
	bool rd_waited;                           /* counted once in read_budget_waits */
	uint64_t rd_start;                        /* when its Reads began: record_timeout_ms */
	struct rpcrdma__xsreq *rl_prev, *rl_next; /* conn's calls with Reads out, oldest first */
	bool rl_linked;
	struct rpcrdma__xsvc_read rops[XSREQ_MAX_ROPS];
	uint32_t nrops, rop_next, reads_left;
	bool read_err;
	struct rpcrdma_rebuild_piece pieces[RPCRDMA_REBUILD_MAX_PIECES];
	unsigned int npieces;
	struct iovec iov[2 * RPCRDMA_REBUILD_MAX_PIECES];
	struct rpcrdma_xdr_stream call_xdr;
	struct rpcrdma__ddp_msgp msgp_ddp;

	/* The reply. */
	bool begun;
	size_t kept;               /* on the free list: sreq_extra_bytes() */
	struct rpcrdma__xbuf sbuf; /* transport header */
	struct rpcrdma__xbuf rbuf; /* the reply message */
	struct rpcrdma__ddp_resp rddp;
	enum rpcrdma__xsreq_form form;
	size_t reply_len, hdr_len;
	uint32_t grant;
	uint32_t ops_needed;
	struct rpcrdma__xop write_op;
	uint32_t writes_left;
	struct rpcrdma__xop send_op;
	bool send_busy;
	size_t tx_cost; /* counted in conn->tx_bytes while queued or posted */
	bool tx_counted;
};

struct rpcrdma__xsconn {
	struct rpcrdma__xconn c;
	struct rpcrdma__xsvc *svc;
	struct rpcrdma__xsconn *prev, *next;
	unsigned int sreqs;   /* calls of this connection alive, any state */
	uint32_t in_progress; /* calls received and not yet answered */
	uint32_t reading;     /* of those, still pulling their Read chunks */
	uint32_t held;        /* receive buffers held by calls */
	uint32_t grant;       /* last grant announced */
	/* The most it grants: the configured credits, or fewer that
	 * max_recv_total left room for; and the receive-buffer bytes it
	 * reserved there (cb->recv_reserve, and recv_charge for a
	 * backchannel's receives), given back when it is freed. */
	uint32_t credits;
	size_t recv_reserved, bc_charged;
	size_t rd_bytes;      /* read buffers held by its calls */
	struct rpcrdma__xsreq *rd_head, *rd_tail;
	struct rpcrdma__xsreq *tx_head, *tx_tail;
	bool told_core;
	/* RFC 8167: the reverse-direction requester bound to this connection
	 * (bidir.c), and the receives kept posted for its replies; @bc_down
	 * tells the backchannel @bc when the connection goes. */
	struct rpcrdma__xpartner *bc_req;
	void (*bc_down)(void *bc);
	void *bc;
	uint32_t bc_recvs;
	/* Bounds (rpcrdma_server_opts): replies queued or posted, their
	 * bytes, and since when they have not moved; the last receive; the
	 * tick that looks at these clocks. */
	bool admitted;   /* counts against max_conns (cb->conn_admit) */
	bool closing;    /* its disconnect is asked for */
	/* Listed while nothing is in progress: it may be closed for a
	 * newcomer at max_conns (svc_lru.c; rpcrdma__xsvc_lru_update). */
	struct rpcrdma__svc_lru_entry lru;
	bool rd_blocked; /* waits for the transport's Read-chunk budget */
	bool paused;     /* receives held back: tx_bytes at max_conn_queued */
	uint32_t tx_pending;
	size_t tx_bytes;
	uint64_t tx_since, last_rx;
	struct rpcrdma__timer tick;
	/* Calls received while tx_bytes is at max_conn_queued: kept in their
	 * receive buffers (counted in held), taken in order once the replies
	 * drain, from hold_kick. */
	struct rpcrdma__xrecv *hold_head, *hold_tail;
	struct rpcrdma__timer hold_kick;
	struct rpcrdma__xsreq *rl_head, *rl_tail; /* calls whose Reads are out, oldest first */
};

struct rpcrdma__xsvc {
	struct rpcrdma__xdev dev;
	struct rpcrdma_prov_listener *lst;
	const struct rpcrdma__svc_cb *cb;
	void *cb_ctx;
	uint32_t inline_send, inline_recv, credits;
	/* The reply buffer every request has: inline_send as the pool
	 * rounds it (68 KiB on ofi takes 128 KiB). */
	size_t rbuf_usual;
	uint32_t vers_low, vers_high;
	bool accept_msgp;
	bool destroying;
	struct rpcrdma_hdr_limits lim;
	/* Version Two optional features (draft section 3) and the context
	 * their handlers see (set per message). */
	struct rpcrdma__opt_registry opts;
	struct rpcrdma__xopt_ctx opt_ctx;
	struct rpcrdma__xrecv_pool pool;
	size_t recv_reserved; /* its connections' share of max_recv_total */
	/* What its receive pool holds beyond those reservations and one
	 * newcomer's (slabs draining after connections went), charged to
	 * max_recv_total too (rpcrdma__xsvc_recv_recharge). */
	size_t recv_excess;
	struct rpcrdma__xbuf_spares rd_spares; /* Read-chunk landing buffers */
	struct rpcrdma__xsconn *conns;
	struct rpcrdma__xsreq *free;
	unsigned int nfree;
	size_t free_bytes;     /* what the requests on free keep beyond the usual */
	size_t free_bytes_max; /* this transport's share of XSVC_KEPT_BYTES */
	struct rpcrdma__xsreq *all;
	struct rpcrdma_hdr hdr; /* scratch: reply headers */
	struct rpcrdma_segment segs[RPCRDMA_HDR_MAX_SEGS];
	struct rpcrdma_xprt_stats st;
	/* A client's callback responder (RFC 8167; xprt.h): it serves the
	 * connection of its owner (the requester) and posts no receives. */
	bool partner;
	bool refuse_chunks; /* reverse calls with chunks get ERR_CHUNK (5.3) */
	struct rpcrdma__xsconn *partner_sc;
	struct rpcrdma__xpartner self; /* what the owner sees of us */
	/* Bounds: the largest call rebuilt (max_record), the Read-chunk
	 * bytes one connection and all of them may hold, and the
	 * connections waiting for the latter (woken from rd_kick). */
	struct rpcrdma__svc_bounds b;
	size_t max_call, conn_read_budget, rd_bytes;
	unsigned int rd_blocked;
	struct rpcrdma__timer rd_kick;
	/* Where the Read-chunk budget (rd_bytes, rd_blocked, rd_kick) and
	 * the kept bytes (kept_loop against free_bytes_max) are counted:
	 * this transport, or for a device's transport of a wildcard
	 * listener, that listener's, so that the devices one loop serves
	 * share the loop's share rather than each taking one. */
	struct rpcrdma__xsvc *acct;
	size_t kept_loop;
	/* The listener's connections that never sent their request, looked
	 * for every tick (provider listener_cut_stale; ofi only). */
	struct rpcrdma__timer stale_tick;
	/* Every device (svc_conn.c): on a listen-only instance (a wildcard
	 * address on verbs) each request goes to the transport of its device
	 * on this loop, opened the first time the device shows up (at most
	 * XSVC_DEVICES_MAX) with the options kept here. */
	bool wild;
	struct rpcrdma__xsvc *devs, *dev_next; /* list of those, and the link */
	unsigned int ndevs;
	struct rpcrdma_server_opts sopts;
	char provider[16];
};

/* Per-device transports one wildcard transport may open: more than any
 * machine has devices; the bound holds if an instance fails and its device
 * is opened again. */
#define XSVC_DEVICES_MAX 32u

/* Answered requests kept for the next calls, and the bytes of the
 * larger buffers they keep beyond the usual ones (grown reply buffers,
 * result copies), over the whole server: each transport (the server's
 * loop and each worker's) keeps an equal share of those, so what a peer
 * can make the server keep does not grow with the workers. */
#define XSREQ_FREE_MAX 64u
#define XSVC_KEPT_BYTES ((size_t)16 << 20)

/* The receive buffers a connection granted @credits may hold: those
 * posted for its grant and those its calls in progress keep, while each
 * answered call's buffer waits for its reply to complete. */
#define XSVC_RECVS_FOR(credits) (2u * (credits) + 4u)

/* The fewest credits a connection is granted when max_recv_total is
 * short (fewer, if so configured): enough for a client to keep a few
 * calls in flight. */
#define XSVC_CREDITS_MIN 4u

/* Read-chunk bytes one connection's calls may hold at once: four of its
 * largest calls (max_record), within the transport's max_read_bytes; a
 * requester cannot make us allocate more by sending many large calls. */
#define XSCONN_READ_CALLS 4u

/* Read-chunk landing buffers kept for the next calls, per transport (a
 * worker's): enough for a pipeline of bulk WRITEs. */
#define XSVC_RD_SPARES_MAX (32u << 20)

static inline struct rpcrdma__xsvc *xsvc_of(struct rpcrdma__svc_transport *t)
{
	return (struct rpcrdma__xsvc *)(void *)t;
}

static inline struct rpcrdma__xsconn *xsconn_of(struct rpcrdma__xconn *c)
{
	return (struct rpcrdma__xsconn *)(void *)((char *)c - offsetof(struct rpcrdma__xsconn, c));
}

/* svc_calls.c: call and connection objects */
/**
 * rpcrdma__xsvc_conn_try_free - free a connection once it is down and nothing refers to it
 * @sc: the connection
 */
void rpcrdma__xsvc_conn_try_free(struct rpcrdma__xsconn *sc);
/**
 * rpcrdma__xsvc_read_phase_end - @s no longer pulls its Read chunks
 * @s: a request in any state
 *
 * A connection whose only calls are still being read has taken none in
 * (none was run): it may be closed for a newcomer at max_conns like an
 * idle one, and its requester sends them again, so that calls whose
 * Reads a requester keeps from finishing (its Read responses held back
 * on a software provider, up to record_timeout_ms each) cannot keep
 * max_conns connections from eviction.  Call before @s leaves
 * SREQ_READING, for the core, an error reply or release; harmless in
 * any other state.
 */
void rpcrdma__xsvc_read_phase_end(struct rpcrdma__xsreq *s);
/**
 * rpcrdma__xsvc_recv_unreserve - give back what @sc reserved of max_recv_total
 * @sc: a connection being freed
 *
 * Also gives the transport's receive pool back what it holds beyond the
 * reservations left, so a flood of connections gone leaves no memory.
 */
void rpcrdma__xsvc_recv_unreserve(struct rpcrdma__xsconn *sc);
/**
 * rpcrdma__xsvc_recv_recharge - count what @v's receive pool holds beyond its reservations
 * @v: the transport
 *
 * Called whenever the pool or the reservations change, so that buffers
 * still registered after their connections went count in max_recv_total
 * (on every worker alike) until their slabs are freed.
 */
void rpcrdma__xsvc_recv_recharge(struct rpcrdma__xsvc *v);

/**
 * rpcrdma__xsvc_lru_update - list @sc for eviction at max_conns, or take it off
 * @sc: the connection
 *
 * Listed while it is up or connecting, not closing, and has nothing in
 * progress: no call object alive (received, reading, served, deferred,
 * its reply queued or being sent), no call held back, and no backchannel
 * bound (its reverse calls).
 */
void rpcrdma__xsvc_lru_update(struct rpcrdma__xsconn *sc);

/**
 * rpcrdma__xsvc_sreq_unlink_all - take a call object off the list of all calls
 * @v: the responder
 * @s: the call
 */
void rpcrdma__xsvc_sreq_unlink_all(struct rpcrdma__xsvc *v, struct rpcrdma__xsreq *s);

/**
 * rpcrdma__xsvc_sreq_free_bufs - free a call object's buffers
 * @s: the call
 */
void rpcrdma__xsvc_sreq_free_bufs(struct rpcrdma__xsreq *s);

/**
 * rpcrdma__xsvc_sreq_get - a call object for a received call (from the free list or new)
 * @v: the responder
 * @sc: the connection
 *
 * Return: the call, or NULL when memory ran out.
 */
struct rpcrdma__xsreq *rpcrdma__xsvc_sreq_get(struct rpcrdma__xsvc *v, struct rpcrdma__xsconn *sc);

/**
 * rpcrdma__xsvc_rl_add - queue a call whose RDMA Reads are out (oldest first)
 * @sc: the connection
 * @s: the call
 */
void rpcrdma__xsvc_rl_add(struct rpcrdma__xsconn *sc, struct rpcrdma__xsreq *s);

/**
 * rpcrdma__xsvc_rl_remove - take a call off the queue of calls reading
 * @sc: the connection
 * @s: the call
 */
void rpcrdma__xsvc_rl_remove(struct rpcrdma__xsconn *sc, struct rpcrdma__xsreq *s);

/**
 * rpcrdma__xsvc_rd_kick - timer: connections waiting for the Read-chunk budget go again
 * @tm: the responder's @rd_kick timer
 */
void rpcrdma__xsvc_rd_kick(struct rpcrdma__timer *tm);

/**
 * rpcrdma__xsvc_sreq_release - a call is done: its buffers, budgets and accounting go back
 * @s: the call
 */
void rpcrdma__xsvc_sreq_release(struct rpcrdma__xsreq *s);

/**
 * rpcrdma__xsvc_conn_close - ask the provider to close a connection (failed RDMA, lost reply)
 * @sc: the connection
 */
void rpcrdma__xsvc_conn_close(struct rpcrdma__xsconn *sc);

/**
 * rpcrdma__xsvc_call_lost - a call on @sc will get no answer (no memory to
 * serve or answer it: @err): close the connection if it is up, counted in
 * replies_lost, so the requester sends it again on a new one at once
 * (RFC 8166 5.5.4) rather than wait out its time-out with a credit held
 * @sc: the connection
 * @xid: the call's, for the trace
 * @err: why
 */
void rpcrdma__xsvc_call_lost(struct rpcrdma__xsconn *sc, uint32_t xid, int err);

/**
 * rpcrdma__xsvc_refill - keep the receives the grant needs posted
 * @sc: the connection
 */
void rpcrdma__xsvc_refill(struct rpcrdma__xsconn *sc);

/**
 * rpcrdma__xsvc_hold_drop - drop the calls held back while replies drain
 * @sc: the connection
 */
void rpcrdma__xsvc_hold_drop(struct rpcrdma__xsconn *sc);

/* svc_send.c: replies, Writes, RDMA_ERROR */
/**
 * rpcrdma__xsvc_after_sq - send-queue room came back: queued Reads and replies go
 * @sc: the connection
 */
void rpcrdma__xsvc_after_sq(struct rpcrdma__xsconn *sc);

/**
 * rpcrdma__xsvc_pump_tx - post queued replies while the send queue has room
 * @sc: the connection
 */
void rpcrdma__xsvc_pump_tx(struct rpcrdma__xsconn *sc);

/**
 * rpcrdma__xsvc_send_header_only - send a reply that is only a transport header
 * @s: the call
 * @h: the header
 *
 * Return: 0 or a negative errno.
 */
int rpcrdma__xsvc_send_header_only(struct rpcrdma__xsreq *s, const struct rpcrdma_hdr *h);

/**
 * rpcrdma__xsvc_send_error - answer a call with RDMA_ERROR (or drop it) as the decoder says
 * @s: the call
 * @action: what rpcrdma_hdr_decode() named
 */
void rpcrdma__xsvc_send_error(struct rpcrdma__xsreq *s, enum rpcrdma_hdr_action action);

/**
 * rpcrdma__xsvc_send_vers_error - answer a call with ERR_VERS for one version
 * @s: the call, of a version its connection does not speak
 * @vers: the one version the connection speaks, as low and high
 */
void rpcrdma__xsvc_send_vers_error(struct rpcrdma__xsreq *s, uint32_t vers);

/**
 * rpcrdma__xsvc_op_reply_begin - ops->reply_begin: the stream and DDP context for a reply
 * @sreq: the core's request
 *
 * Return: 0 or a negative errno.
 */
int rpcrdma__xsvc_op_reply_begin(struct rpcrdma__sreq *sreq);

/**
 * rpcrdma__xsvc_op_reply_send - ops->reply_send: plan, write and send the reply
 * @sreq: the core's request
 *
 * Return: 0, or a negative errno when the reply was lost.
 */
int rpcrdma__xsvc_op_reply_send(struct rpcrdma__sreq *sreq);

/**
 * rpcrdma__xsvc_op_reply_drop - ops->reply_drop: release a request without a reply
 * @sreq: the core's request
 */
void rpcrdma__xsvc_op_reply_drop(struct rpcrdma__sreq *sreq);
/**
 * rpcrdma__xsvc_op_reply_lost - ops->reply_lost: release a request owed a
 * reply that cannot be given, closing its connection (RFC 8166 5.5.4)
 */
void rpcrdma__xsvc_op_reply_lost(struct rpcrdma__sreq *sreq, int err);

/* svc_recv.c: calls and RDMA Reads */
/**
 * rpcrdma__xsvc_pump_reads - post the RDMA Reads of queued calls, within the peer's IRD and the
 * budgets
 * @sc: the connection
 */
void rpcrdma__xsvc_pump_reads(struct rpcrdma__xsconn *sc);

/**
 * rpcrdma__xsvc_handle_call - a call-direction message arrived: screen, plan its Reads, deliver
 * @sc: the connection
 * @r: the receive holding it
 */
void rpcrdma__xsvc_handle_call(struct rpcrdma__xsconn *sc, struct rpcrdma__xrecv *r);

/**
 * rpcrdma__xsvc_on_recv - receive completion handler of the responder's connections
 * @op: the receive's operation
 * @ev: the completion
 */
void rpcrdma__xsvc_on_recv(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev);

/* svc_conn.c: the transport and its connections */
/**
 * rpcrdma__xsvc_conn_down - a connection ends: drop reads and queued replies, tell the core
 * @sc: the connection
 */
void rpcrdma__xsvc_conn_down(struct rpcrdma__xsconn *sc);

/**
 * rpcrdma__xsvc_reads_overdue - whether a call's Read chunks have gone unread past record_ms
 * @sc: the connection
 * @now: the loop's time (ms)
 *
 * The oldest call whose RDMA Reads are out decides: the requester has not
 * let us read its chunks for record_timeout_ms.  An RDMA Read cannot be
 * taken back, so the caller closes the connection.
 */
bool rpcrdma__xsvc_reads_overdue(const struct rpcrdma__xsconn *sc, uint64_t now);

/*
 * Why @sc takes no new call now: its replies reached max_conn_queued
 * (XSVC_FULL_CONN), or the server's over all connections reached
 * max_queued_total while @sc has a reply queued or a call in progress
 * (XSVC_FULL_TOTAL; transport.h rpcrdma__svc_over_queued_total).
 */
enum rpcrdma__xsvc_full { XSVC_NOT_FULL, XSVC_FULL_CONN, XSVC_FULL_TOTAL };

static inline enum rpcrdma__xsvc_full rpcrdma__xsvc_queue_full(const struct rpcrdma__xsconn *sc)
{
	const struct rpcrdma__svc_bounds *b = &sc->svc->b;

	if (sc->tx_bytes >= b->max_queued)
		return XSVC_FULL_CONN;
	if ((sc->tx_bytes || sc->in_progress) && rpcrdma__svc_over_queued_total(b))
		return XSVC_FULL_TOTAL;
	return XSVC_NOT_FULL;
}

/* Counts a stop of @sc's calls for @why in the counter it belongs to. */
static inline void rpcrdma__xsvc_count_pause(struct rpcrdma__xsvc *v, enum rpcrdma__xsvc_full why)
{
	if (why == XSVC_FULL_CONN)
		v->st.queue_pauses++;
	else if (why == XSVC_FULL_TOTAL)
		v->st.queued_total_pauses++;
}

#endif /* RPCRDMA_XPRT_SVC_H */
