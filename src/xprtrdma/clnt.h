/*
 * The requester (rpcrdma__rdma_clnt_ops): one connection to one server
 * and the calls in flight on it, split by stage into clnt_*.c.  The first
 * part is what the rest of the engine (bidir.c) may reach; the second what
 * the stage files share.  docs/architecture.md tells the whole story.
 */
#ifndef RPCRDMA_XPRT_CLNT_H
#define RPCRDMA_XPRT_CLNT_H

#include "proto/version.h"
#include "xprtrdma/ddp.h"
#include "xprtrdma/xprt.h"

/* The requester as the server's reverse-direction partner (a core
 * client's ops, made by rpcrdma__xclnt_partner_create()). */
extern const struct rpcrdma__clnt_transport_ops rpcrdma__rdma_bc_clnt_ops;

/* How long a requester's connection may stay in the RDMA handshake
 * (ms; tests shorten it). */
extern uint32_t rpcrdma__xclnt_handshake_ms;

/* How long the transport properties exchange may stay unanswered before
 * the connection is cut (ms; tests shorten it). */
extern uint32_t rpcrdma__xclnt_props_ms;

/**
 * rpcrdma__xclnt_partner_create - a requester serving another's connections
 * @dev: the owner's provider instance (borrowed: never watched or closed)
 * @inline_send: the owner's inline send size
 * @inline_recv: the owner's inline receive size
 * @credits: reverse credits to ask for (0: the default; capped)
 * @cb: the core's callbacks
 * @cb_ctx: their context
 * @out: the transport made
 *
 * It has no connection of its own: it sends once attached (through
 * rpcrdma__xclnt_partner()) to an owner's connection.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int rpcrdma__xclnt_partner_create(struct rpcrdma__xdev *dev, uint32_t inline_send,
				  uint32_t inline_recv, uint32_t credits,
				  const struct rpcrdma__clnt_cb *cb, void *cb_ctx,
				  struct rpcrdma__clnt_transport **out);

/**
 * rpcrdma__xclnt_partner - what an owner sees of a partner requester
 * @t: a transport made by rpcrdma__xclnt_partner_create()
 */
struct rpcrdma__xpartner *rpcrdma__xclnt_partner(struct rpcrdma__clnt_transport *t);

/**
 * rpcrdma__xclnt_set_bc_host - make a requester the owner of a callback host
 * @t: the client's requester (not connected yet)
 * @host: the callback responder, as a partner
 * @credits: the reverse credits it grants (receives kept posted for it)
 */
void rpcrdma__xclnt_set_bc_host(struct rpcrdma__clnt_transport *t, struct rpcrdma__xpartner *host,
				uint32_t credits);

/**
 * rpcrdma__xclnt_dev - a requester's provider instance
 * @t: the requester
 */
struct rpcrdma__xdev *rpcrdma__xclnt_dev(struct rpcrdma__clnt_transport *t);

/**
 * rpcrdma__xclnt_inline - a requester's inline sizes
 * @t: the requester
 * @send: its inline send size
 * @recv: its inline receive size
 */
void rpcrdma__xclnt_inline(struct rpcrdma__clnt_transport *t, uint32_t *send, uint32_t *recv);

/*
 * Shared by the requester's stage files.
 */

enum rpcrdma__xreq_state {
	XREQ_IDLE,    /* on the free list, or being set up */
	XREQ_BEGUN,   /* call_begin done: the core is encoding */
	XREQ_SENT,    /* in the table, waiting for a reply */
	XREQ_REPLIED, /* reply held, grants being revoked */
	XREQ_FAILED,  /* RDMA_ERROR or a bad reply, grants being revoked */
	XREQ_DEAD,    /* forgotten: freed once nothing refers to it */
};

/* How the call went, for the counters. */
enum rpcrdma__xreq_chunks {
	XREQ_CH_READ = 1u << 0,
	XREQ_CH_LONG = 1u << 1,
	XREQ_CH_WRITE = 1u << 2,
	XREQ_CH_REPLY = 1u << 3,
};

struct rpcrdma__xclnt;

/*
 * RDMA_ERROR/ERR_INVAL_OPTION answers to the RDMA_OPTIONALs of a Version
 * Two server whose opttype this requester does not support (draft section
 * 3.1; clnt_vers.c).  Each takes a receive at the server, so it waits for
 * a free credit and holds it until its Send completes.  What a server can
 * make us hold or send is bounded: at most XCLNT_OPT_ANSWERS answers wait
 * or travel at once (their buffers are these slots), at most
 * XCLNT_OPT_ANSWERS_PER_CONN are sent on one connection; RDMA_OPTIONALs
 * beyond either go unanswered (inval_option_dropped).
 */
#define XCLNT_OPT_ANSWERS 4u
#define XCLNT_OPT_ANSWERS_PER_CONN 32u

enum rpcrdma__xoptans_state {
	OPTANS_FREE,
	OPTANS_WAITING, /* for a credit (or the end of the version probe) */
	OPTANS_SENDING, /* its Send posted, not yet completed */
};

struct rpcrdma__xoptans {
	struct rpcrdma__xop send_op;
	struct rpcrdma__xclnt *t;
	enum rpcrdma__xoptans_state state;
	uint32_t xid;              /* the RDMA_OPTIONAL's, echoed */
	uint64_t queued;           /* arrival order among those waiting */
	uint64_t gen;              /* the connection its Send went on */
	struct rpcrdma__xbuf sbuf; /* registered; kept until destroy */
	struct rpcrdma_prov_sge sge;
};

struct rpcrdma__xreq {
	struct rpcrdma__xclnt *t;
	struct rpcrdma__creq *creq; /* NULL once the core forgot it */
	enum rpcrdma__xreq_state state;
	uint32_t xid;
	struct rpcrdma__xreq *hnext; /* table chain */
	struct rpcrdma__xreq *next;  /* free list */
	struct rpcrdma__xreq *all_prev, *all_next;
	bool in_table;
	bool send_busy;
	bool in_callback; /* the core is looking at its reply: keep it all */
	/* ERR_VERS came before the Send completed: send again from on_send.
	 * Out of the table meanwhile, but the grants and the core's call are
	 * still the request's: a lost connection fences and forgets it too
	 * (rpcrdma__xclnt_start_down). */
	bool resend_pending;
	/* Not a call: our transport properties exchange (Version Two). */
	bool is_props;
	struct rpcrdma__xop send_op;
	/* The connection (conn.gen) its last Send was posted on: a Send
	 * completion or a resend for an earlier one must not touch the
	 * current connection. */
	uint64_t gen;
	struct rpcrdma__xfence fence;
	/* The core gave up on the call while its grants were still being
	 * revoked: told (cb->aborted) once they are. */
	struct rpcrdma__creq *abort_creq;
	uint64_t fence_t0; /* tracing CHUNK: when its fence started */
	/* The call ended with no answer (aborted while out) or a
	 * revocation refused, so the responder may still be moving data
	 * through its grants, which revoking does not stop on this provider
	 * (no RPCRDMA_PCAP_REVOKE_FENCES_INFLIGHT) or could not do: it
	 * completes only once the connection it was sent on (gen) is
	 * closed. */
	bool close_fence;
	/* Fenced, and on t->closing until that connection is closed. */
	bool awaiting_close;
	struct rpcrdma__xreq *close_next;

	struct rpcrdma__xbuf msg;  /* the call as the core encodes it */
	struct rpcrdma__xbuf sbuf; /* the Send: transport header, maybe the message */
	struct rpcrdma__xbuf lbuf; /* a Long Call's full message, when DDP items were taken */
	struct rpcrdma__xbuf rbuf; /* the Reply chunk's memory */
	struct rpcrdma__ddp_call cddp;
	struct rpcrdma__ddp_reply rddp;

	/* Remote access for this call, and the registrations of the
	 * caller's buffers it uses (from the instance's registration cache;
	 * put back once the grants are revoked). */
	struct rpcrdma__xgrant grants[RPCRDMA__XPRT_MAX_GRANTS];
	/* The Send as posted, kept so that a call refused with ERR_VERS can
	 * go again in the version the responder speaks. */
	struct rpcrdma_prov_sge sge[RPCRDMA__XPRT_SEND_SGES];
	unsigned int nsge;
	/* Bit i: the Send reads DDP item i where the caller holds it, so the
	 * call ends only once the Send completed (fence_after_send: the
	 * fence finished first and waits for it). */
	uint32_t lent;
	bool fence_after_send;
	struct rpcrdma_prov_mr *lent_mr[RPCRDMA__XPRT_MAX_DDP]; /* NULL: unregistered */
	unsigned int ngrants;
	struct rpcrdma__regent *own[RPCRDMA__XPRT_MAX_DDP + 1];
	unsigned int nown;
	/* Pooled copies of caller memory that churns (own_reg): Read-chunk
	 * data is copied in before the Send, bounce[MAX_DDP + i] holds Write
	 * chunk i's result until it is revoked and copied out.  At most
	 * RPCRDMA__XPRT_CHURN_COPY_MAX each, so they stay with the slot. */
	struct rpcrdma__xbuf bounce[RPCRDMA__XPRT_MAX_DDP + RPCRDMA__XPRT_MAX_WCHUNKS];
	unsigned int wch_bounced; /* bit i: Write chunk i went to its bounce buffer */

	/* What the call offered. */
	unsigned int chunks; /* enum rpcrdma__xreq_chunks */
	uint32_t nwch;
	struct rpcrdma__wchunk wch[RPCRDMA__XPRT_MAX_WCHUNKS];
	uint32_t wsegs; /* segments of all Write chunks */
	struct rpcrdma_segment wseg[RPCRDMA__XPRT_MAX_WSEGS];
	uint32_t rsegs;
	struct rpcrdma_segment rseg[RPCRDMA__XPRT_MAX_WSEGS];

	/* The reply. */
	struct rpcrdma__xrecv *rep;
	bool rep_in_rbuf; /* RDMA_NOMSG: the message is in rbuf */
	size_t rep_off, rep_len;
	uint64_t written;
	int fail_err;
};

struct rpcrdma__xclnt {
	struct rpcrdma__xdev dev;
	const struct rpcrdma__clnt_cb *cb;
	void *cb_ctx;
	struct sockaddr_storage dst;
	socklen_t dstlen;
	uint32_t inline_send, inline_recv, credits, seg_max;
	/* Version negotiation (proto/version.h): the highest version offered,
	 * and this connection's state. */
	uint32_t max_vers;
	struct rpcrdma__vneg vneg;
	/* The transport properties exchange (properties.c): due once
	 * Version Two is agreed, and how many are out (0 or 1), under which
	 * XID.  It holds a credit until answered: unanswered after
	 * rpcrdma__xclnt_props_ms the connection is cut (props_timer), and
	 * the peer is not asked again by this requester (props_off). */
	bool props_due;
	bool props_off;
	uint32_t props_out;
	uint32_t props_xid;
	struct rpcrdma__timer props_timer;
	struct rpcrdma__props peer_props;
	/* Answers to RDMA_OPTIONALs we do not support (clnt_vers.c): how
	 * many wait for a credit, how many this connection has taken, and
	 * the order they came in. */
	struct rpcrdma__xoptans optans[XCLNT_OPT_ANSWERS];
	uint32_t optans_waiting;
	uint32_t optans_conn;
	uint64_t optans_seq;

	struct rpcrdma__xconn conn;
	struct rpcrdma_credits cr;
	struct rpcrdma__xrecv_pool pool;
	struct rpcrdma_hdr_limits lim;

	struct rpcrdma__xreq *free;
	unsigned int nfree;
	struct rpcrdma__xreq *all;
	struct rpcrdma__xreq **tab;
	uint32_t mask;

	unsigned int fences_live;
	/* Calls whose end waits for the connection's endpoint to close
	 * (close_fence): completed by rpcrdma__xclnt_finish_down. */
	struct rpcrdma__xreq *closing;
	/* Aborted calls still in the table: with an unanswered properties
	 * exchange, what holds credits nothing else will free. */
	unsigned int norphans;
	int down_err;
	bool want_writable;
	/* Inside a transport op called by the core: callbacks wait for
	 * @later, so the core is never re-entered from its own call. */
	unsigned int api_depth;
	struct rpcrdma__timer later;
	struct rpcrdma__timer handshake; /* bounds CONNECTING */

	struct rpcrdma_hdr hdr; /* scratch: one header at a time */
	struct rpcrdma_xprt_stats st;

	/* Bidirectional operation (xprt.h, bidir.c).  As an owner: the
	 * callback responder served on our connection and the receives we
	 * keep posted for its calls.  As the server's reverse-direction
	 * partner: no connection of our own. */
	struct rpcrdma__xpartner *bc_host;
	uint32_t bc_credits;
	bool partner;
	bool partner_waiting; /* the core asked to connect: tell it at attach */
	struct rpcrdma__timer partner_timer;
	/* An attach that came while the last connection's calls were still
	 * being fenced: done once they are (finish_down). */
	const struct rpcrdma__xconn *pending_owner;
	/* What our owner sees of us (a partner): buried on the owner's
	 * device when the core let go of us before our last operation
	 * completed. */
	struct rpcrdma__xpartner self;
};

#define XREQ_FREE_MAX 64u

static inline struct rpcrdma__xclnt *xclnt_of(struct rpcrdma__clnt_transport *t)
{
	return (struct rpcrdma__xclnt *)(void *)t;
}

/* clnt_calls.c: calls in flight */
/**
 * rpcrdma__xclnt_tab_slot - the table chain a call with @xid hashes to
 * @t: the requester
 * @xid: the XID
 */
struct rpcrdma__xreq **rpcrdma__xclnt_tab_slot(struct rpcrdma__xclnt *t, uint32_t xid);

/**
 * rpcrdma__xclnt_tab_add - enter a sent call in the table by XID
 * @t: the requester
 * @x: the call
 */
void rpcrdma__xclnt_tab_add(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x);

/**
 * rpcrdma__xclnt_tab_del - take a call out of the table
 * @t: the requester
 * @x: the call
 */
void rpcrdma__xclnt_tab_del(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x);

/**
 * rpcrdma__xclnt_tab_take - find and take out the call a reply answers
 * @t: the requester
 * @xid: the reply's XID
 *
 * Return: the call, or NULL when none is in flight with @xid.
 */
struct rpcrdma__xreq *rpcrdma__xclnt_tab_take(struct rpcrdma__xclnt *t, uint32_t xid);

/**
 * rpcrdma__xclnt_req_unlink_all - take a call object off the list of all calls
 * @t: the requester
 * @x: the call
 */
void rpcrdma__xclnt_req_unlink_all(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x);

/**
 * rpcrdma__xclnt_req_get - a call object for call_begin (from the free list or new)
 * @t: the requester
 *
 * Return: the call, or NULL when memory ran out.
 */
struct rpcrdma__xreq *rpcrdma__xclnt_req_get(struct rpcrdma__xclnt *t);

/**
 * rpcrdma__xclnt_req_drop_own - put back the registrations of the caller's buffers
 * @x: the call, none of whose grants may still stand
 */
void rpcrdma__xclnt_req_drop_own(struct rpcrdma__xreq *x);

/**
 * rpcrdma__xclnt_req_repost - give a receive back to the connection (post it again)
 * @t: the requester
 * @r: the receive buffer
 */
void rpcrdma__xclnt_req_repost(struct rpcrdma__xclnt *t, struct rpcrdma__xrecv *r);

/**
 * rpcrdma__xclnt_req_try_free - return a call object once nothing refers to it
 * @t: the requester
 * @x: the call
 */
void rpcrdma__xclnt_req_try_free(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x);

/**
 * rpcrdma__xclnt_can_send - whether a credit and the receives a call needs are there
 * @t: the requester
 */
bool rpcrdma__xclnt_can_send(const struct rpcrdma__xclnt *t);

/**
 * rpcrdma__xclnt_maybe_writable - tell the core it may send again, if it waited and may
 * @t: the requester
 */
void rpcrdma__xclnt_maybe_writable(struct rpcrdma__xclnt *t);

/**
 * rpcrdma__xclnt_on_later - timer: callbacks held back while the core was inside an op
 * @tm: the requester's @later timer
 */
void rpcrdma__xclnt_on_later(struct rpcrdma__timer *tm);

/**
 * rpcrdma__xclnt_req_fence - revoke every grant of a call; its end follows once done
 * @t: the requester
 * @x: the call (may be freed on return)
 */
void rpcrdma__xclnt_req_fence(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x);

/**
 * rpcrdma__xclnt_req_posted - a call's Send is posted: it holds a credit and is looked up by XID
 * @t: the requester
 * @x: the call
 */
void rpcrdma__xclnt_req_posted(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x);

/**
 * rpcrdma__xclnt_send_failed - undo call_begin and the grants of a call_send that failed
 * @t: the requester
 * @x: the call
 */
void rpcrdma__xclnt_send_failed(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x);

/**
 * rpcrdma__xclnt_call_abort - the core gives up on a call
 * @t: the requester
 * @creq: the core's call
 *
 * Return: 0, or 1 when the core must wait for cb->aborted (a revocation is pending).
 */
int rpcrdma__xclnt_call_abort(struct rpcrdma__xclnt *t, struct rpcrdma__creq *creq);

/**
 * rpcrdma__xclnt_op_call_abort - ops->call_abort
 * @tt: the transport
 * @creq: the core's call
 *
 * Return: as rpcrdma__xclnt_call_abort().
 */
int rpcrdma__xclnt_op_call_abort(struct rpcrdma__clnt_transport *tt, struct rpcrdma__creq *creq);

/* clnt_conn.c: the connection */
/**
 * rpcrdma__xclnt_finish_down - end a lost connection once every call is fenced: tell the core
 * @t: the requester
 */
void rpcrdma__xclnt_finish_down(struct rpcrdma__xclnt *t);

/**
 * rpcrdma__xclnt_complete_closed - complete the calls that waited for their
 * connection's endpoint to close (close_fence), now that it is
 * @t: the requester
 */
void rpcrdma__xclnt_complete_closed(struct rpcrdma__xclnt *t);

/**
 * rpcrdma__xclnt_start_down - the connection is lost: fence every call in flight
 * @t: the requester
 * @err: why (negative errno or RPCRDMA_ERR_*)
 */
void rpcrdma__xclnt_start_down(struct rpcrdma__xclnt *t, int err);

/**
 * rpcrdma__xclnt_apply_version - set the thresholds for the version the negotiation reached
 * @t: the requester
 */
void rpcrdma__xclnt_apply_version(struct rpcrdma__xclnt *t);

/**
 * rpcrdma__xclnt_op_destroy - ops->destroy
 * @tt: the transport
 */
void rpcrdma__xclnt_op_destroy(struct rpcrdma__clnt_transport *tt);

/**
 * rpcrdma__xclnt_op_stats - ops->stats, reverse-direction counters of a callback host folded in
 * @tt: the transport
 * @out: the counters
 */
void rpcrdma__xclnt_op_stats(struct rpcrdma__clnt_transport *tt, struct rpcrdma_xprt_stats *out);

/* clnt_marshal.c: marshalling */
/**
 * rpcrdma__xclnt_op_call_begin - ops->call_begin: a registered buffer and DDP context for a call
 * @tt: the transport
 * @creq: the core's call
 *
 * Return: 0 or a negative errno.
 */
int rpcrdma__xclnt_op_call_begin(struct rpcrdma__clnt_transport *tt, struct rpcrdma__creq *creq);

/**
 * rpcrdma__xclnt_call_send - marshal a call and post its Send
 * @t: the requester
 * @creq: the core's call, begun
 *
 * Return: 0, -EAGAIN (wait for cb->writable), or a negative errno (the call failed).
 */
int rpcrdma__xclnt_call_send(struct rpcrdma__xclnt *t, struct rpcrdma__creq *creq);

/**
 * rpcrdma__xclnt_op_call_send - ops->call_send
 * @tt: the transport
 * @creq: the core's call
 *
 * Return: as rpcrdma__xclnt_call_send().
 */
int rpcrdma__xclnt_op_call_send(struct rpcrdma__clnt_transport *tt, struct rpcrdma__creq *creq);

/* clnt_reply.c: replies */
/**
 * rpcrdma__xclnt_resend - post a call's Send again in the connection's version (after ERR_VERS)
 * @t: the requester
 * @x: the call
 */
void rpcrdma__xclnt_resend(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x);

/**
 * rpcrdma__xclnt_reply_arrived - an answer ended a call at the responder: free its credit, take the
 * grant
 * @t: the requester
 * @x: the call
 * @h: the answer's header
 */
void rpcrdma__xclnt_reply_arrived(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x,
				  const struct rpcrdma_hdr *h);

/**
 * rpcrdma__xclnt_handle_reply - a reply-direction message arrived: check it, fence its call,
 * complete
 * @t: the requester
 * @r: the receive holding it
 * @ev: its completion
 */
void rpcrdma__xclnt_handle_reply(struct rpcrdma__xclnt *t, struct rpcrdma__xrecv *r,
				 const struct rpcrdma_prov_event *ev);

/**
 * rpcrdma__xclnt_on_recv - receive completion handler of the requester's connection
 * @op: the receive's operation
 * @ev: the completion
 */
void rpcrdma__xclnt_on_recv(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev);

/**
 * rpcrdma__xclnt_on_send - Send completion handler of a call
 * @op: the call's Send operation
 * @ev: the completion
 */
void rpcrdma__xclnt_on_send(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev);
/**
 * rpcrdma__xclnt_send_released - the Send of @x, which lent the caller's
 * memory, completed: a fence that finished before it ends the call now
 *
 * WARNING: @x may be freed on return.
 */
void rpcrdma__xclnt_send_released(struct rpcrdma__xreq *x);

/* clnt_vers.c: Version Two negotiation */
/**
 * rpcrdma__xclnt_handle_err_vers - an RDMA_ERROR/ERR_VERS answer: fall back, or end the connection
 * @t: the requester
 * @r: the receive holding it
 * @h: its header
 */
void rpcrdma__xclnt_handle_err_vers(struct rpcrdma__xclnt *t, struct rpcrdma__xrecv *r,
				    const struct rpcrdma_hdr *h);

/**
 * rpcrdma__xclnt_props_start - send our transport properties once Version Two is agreed
 * @t: the requester, with props_due set
 *
 * Clears props_due once sent, or when it never will be; with no credit or
 * room it stays due, and the next reply or call_send tries again.
 */
void rpcrdma__xclnt_props_start(struct rpcrdma__xclnt *t);

/**
 * rpcrdma__xclnt_props_answered - the answer to our properties exchange arrived
 * @t: the requester
 * @x: the exchange's call object
 * @h: the answer's header
 */
void rpcrdma__xclnt_props_answered(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x,
				   const struct rpcrdma_hdr *h);

/**
 * rpcrdma__xclnt_optional_unsupported - a server's RDMA_OPTIONAL whose opttype we do not support
 * @t: the requester (never a partner), its connection in Version Two
 * @h: the RDMA_OPTIONAL's header
 *
 * Its RDMA_ERROR/ERR_INVAL_OPTION answer (draft 3.1) goes now or once a
 * credit is free, within the bounds of XCLNT_OPT_ANSWERS and
 * XCLNT_OPT_ANSWERS_PER_CONN; beyond them it is counted in
 * inval_option_dropped and left unanswered.
 */
void rpcrdma__xclnt_optional_unsupported(struct rpcrdma__xclnt *t, const struct rpcrdma_hdr *h);

/**
 * rpcrdma__xclnt_optans_pump - send the waiting ERR_INVAL_OPTION answers, oldest first, while a
 * credit and a send slot are free
 * @t: the requester
 */
void rpcrdma__xclnt_optans_pump(struct rpcrdma__xclnt *t);

/**
 * rpcrdma__xclnt_optans_down - the connection is lost: answers still waiting are dropped
 * @t: the requester
 *
 * Answers whose Send is out end with its completion.
 */
void rpcrdma__xclnt_optans_down(struct rpcrdma__xclnt *t);

/**
 * rpcrdma__xclnt_optans_free - give the answers' buffers back (destroy)
 * @t: the requester
 */
void rpcrdma__xclnt_optans_free(struct rpcrdma__xclnt *t);

/* clnt_partner.c: the reverse-direction partner */
/**
 * rpcrdma__xclnt_partner_attach - a reverse requester starts sending on its owner's connection
 * @t: the requester (a partner)
 * @owner: the owner's connection, up
 */
void rpcrdma__xclnt_partner_attach(struct rpcrdma__xclnt *t, const struct rpcrdma__xconn *owner);

/**
 * rpcrdma__xclnt_partner_destroy - the core let go of a reverse requester: free or bury it
 * @t: the requester (a partner)
 */
void rpcrdma__xclnt_partner_destroy(struct rpcrdma__xclnt *t);

#endif /* RPCRDMA_XPRT_CLNT_H */
