/*
 * The requester side of RPC-over-RDMA Versions One and Two (rpcrdma__rdma_clnt_ops):
 * one connection to one server, the calls in flight on it, their chunks and
 * remote-access grants, credits, and reconnection support for the core.
 *
 * Normal operation.  call_begin hands the core a registered buffer to
 * encode the call into, with a DDP context that takes DDP-eligible
 * arguments out of the stream (ddp.c).  call_send measures the result,
 * asks rpcrdma__plan_call() how it travels, grants the responder access to
 * exactly the memory that form needs (the caller's buffers for Read chunks
 * and the Write chunk; our buffers for a Long Call and the Reply chunk),
 * encodes the transport header and posts one Send.  A reply is matched by
 * XID in our own table of calls in flight, checked against what the call
 * offered, and held while every grant of the call is revoked; only when the
 * last REVOKE completion is in does the core see the reply (RFC 8166
 * 5.4.1: fenced "before allowing Upper Layer access").
 *
 * Credits (RFC 8166 4.3.1).  The call header asks for as many credits as
 * we keep receives posted.  Until the first reply we assume one; afterwards
 * the last grant, clamped to 1..requested (rpcrdma__credits_*).  A call is
 * also held back while fewer receives are posted than calls in flight plus
 * one, which happens briefly while a reply's buffer is still held, so every
 * reply in flight always finds a receive.
 *
 * Chunk combinations sent: none (Short message); Read chunks, one per
 * DDP-eligible argument (at most RPCRDMA__XPRT_MAX_DDP, one segment each);
 * a Long Call's single Position-Zero segment holding the full call; each
 * of those with Write chunks (the caller's ddp_buf, or one per entry of its
 * ddp_list, zero-length ones included; RPCRDMA__XPRT_MAX_WSEGS segments in
 * all) and/or a Reply chunk.  Not sent: a Long Call
 * carrying a reduced call plus Read chunks (plan.h prefers the full call),
 * RDMA_MSGP and RDMA_DONE.  Replies taken: RDMA_MSG with the Write chunk
 * echoed (or not at all), RDMA_NOMSG through our Reply chunk, RDMA_ERROR.
 *
 * Version Two (draft-cel-nfsv4-rpcrdma-version-two-00 section 5).  With
 * max_vers 2 each connection starts with a probe (proto/version.h): the
 * first call alone, in Version Two, within 1024 bytes.  A Version Two answer
 * settles the connection there, moves its thresholds to Version Two's
 * defaults and starts the transport properties exchange (properties.c); an
 * ERR_VERS answer sends the same Send again in Version One and remembers the
 * peer's address, as does a probe lost with its connection.
 *
 * Recovery.  When the connection ends, every call in flight is fenced (all
 * grants revoked; on providers whose handles are not scoped to a
 * connection, such as ofi/tcp, the next connection could otherwise still
 * reach them) and forgotten, and only then is the core told
 * (cb->disconnected); it reconnects and sends them again.  A call the core
 * aborts is fenced at once, and the core completes it only once that
 * fence is done (call_abort returns 1, cb->aborted follows), but it stays
 * in the table until its reply or the
 * end of the connection, because it still holds a credit at the responder;
 * when aborted calls hold every credit, the connection is cut (as the Linux
 * client does on a time-out), since nothing else could free one.  A late
 * reply that writes into an aborted call's Write chunk meets a revoked
 * handle: on ofi/tcp that ends the connection too, which is the memory
 * protection doing its job.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/version.h"
#include "common/trace.h"
#include "xprt/clnt.h"

enum xreq_state {
	XREQ_IDLE,    /* on the free list, or being set up */
	XREQ_BEGUN,   /* call_begin done: the core is encoding */
	XREQ_SENT,    /* in the table, waiting for a reply */
	XREQ_REPLIED, /* reply held, grants being revoked */
	XREQ_FAILED,  /* RDMA_ERROR or a bad reply, grants being revoked */
	XREQ_DEAD,    /* forgotten: freed once nothing refers to it */
};

/* How the call went, for the counters. */
enum xreq_chunks {
	XREQ_CH_READ = 1u << 0,
	XREQ_CH_LONG = 1u << 1,
	XREQ_CH_WRITE = 1u << 2,
	XREQ_CH_REPLY = 1u << 3,
};

struct xclnt;

struct xreq {
	struct xclnt *t;
	struct rpcrdma__creq *creq; /* NULL once the core forgot it */
	enum xreq_state state;
	uint32_t xid;
	struct xreq *hnext; /* table chain */
	struct xreq *next;  /* free list */
	struct xreq *all_prev, *all_next;
	bool in_table;
	bool send_busy;
	bool in_callback; /* the core is looking at its reply: keep it all */
	/* ERR_VERS came before the Send completed: send again from on_send. */
	bool resend_pending;
	/* Not a call: our transport properties exchange (Version Two). */
	bool is_props;
	struct rpcrdma__xop send_op;
	struct rpcrdma__xfence fence;
	/* The core gave up on the call while its grants were still being
	 * revoked: told (cb->aborted) once they are. */
	struct rpcrdma__creq *abort_creq;
	uint64_t fence_t0; /* tracing CHUNK: when its fence started */

	struct rpcrdma__xbuf msg;  /* the call as the core encodes it */
	struct rpcrdma__xbuf sbuf; /* the Send: transport header, maybe the message */
	struct rpcrdma__xbuf lbuf; /* a Long Call's full message, when DDP items were taken */
	struct rpcrdma__xbuf rbuf; /* the Reply chunk's memory */
	struct rpcrdma__ddp_call cddp;
	struct rpcrdma__ddp_reply rddp;

	/* Remote access for this call, and the caller's buffers registered
	 * for it (deregistered once the grants are revoked). */
	struct rpcrdma__xgrant grants[RPCRDMA__XPRT_MAX_GRANTS];
	/* The Send as posted, kept so that a call refused with ERR_VERS can
	 * go again in the version the responder speaks. */
	struct rpcrdma_prov_sge sge[2];
	unsigned int nsge;
	unsigned int ngrants;
	struct rpcrdma_prov_mr *own_mr[RPCRDMA__XPRT_MAX_DDP + 1];
	unsigned int nown;

	/* What the call offered. */
	unsigned int chunks; /* enum xreq_chunks */
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

struct xclnt {
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
	 * Version Two is agreed, and how many are out (0 or 1). */
	bool props_due;
	uint32_t props_out;
	struct rpcrdma__props peer_props;

	struct rpcrdma__xconn conn;
	struct rpcrdma_credits cr;
	struct rpcrdma__xrecv_pool pool;
	struct rpcrdma_hdr_limits lim;

	struct xreq *free;
	unsigned int nfree;
	struct xreq *all;
	struct xreq **tab;
	uint32_t mask;

	unsigned int fences_live;
	unsigned int norphans; /* aborted calls still in the table */
	int down_err;
	bool want_writable;
	/* Inside a transport op called by the core: callbacks wait for
	 * @later, so the core is never re-entered from its own call. */
	unsigned int api_depth;
	struct rpcrdma__timer later;
	struct rpcrdma__timer handshake; /* bounds CONNECTING */

	struct rpcrdma_hdr hdr; /* scratch: one header at a time */
	struct rpcrdma_xprt_stats st;

	/* Bidirectional operation (xprt.h, backchannel.c).  As an owner: the
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

static void partner_destroy(struct xclnt *t);
static void partner_attach(struct xclnt *t, const struct rpcrdma__xconn *owner);

static struct xclnt *xclnt_of(struct rpcrdma__clnt_transport *t)
{
	return (struct xclnt *)(void *)t;
}

/*
 * The table of calls in flight, by XID.
 */
static struct xreq **tab_slot(struct xclnt *t, uint32_t xid)
{
	return &t->tab[(xid * 2654435761u) & t->mask];
}

static void tab_add(struct xclnt *t, struct xreq *x)
{
	struct xreq **s = tab_slot(t, x->xid);

	x->hnext = *s;
	*s = x;
	x->in_table = true;
}

static void tab_del(struct xclnt *t, struct xreq *x)
{
	for (struct xreq **pp = tab_slot(t, x->xid); *pp; pp = &(*pp)->hnext) {
		if (*pp == x) {
			*pp = x->hnext;
			break;
		}
	}
	x->hnext = NULL;
	x->in_table = false;
}

/* The call a reply answers: a live one first (a retransmission after the
 * core aborted the first try may share its XID), else an aborted one. */
static struct xreq *tab_take(struct xclnt *t, uint32_t xid)
{
	struct xreq *orphan = NULL, *x;

	for (x = *tab_slot(t, xid); x; x = x->hnext) {
		if (x->xid != xid || x->state != XREQ_SENT)
			continue;
		if (x->creq)
			break;
		if (!orphan)
			orphan = x;
	}
	if (!x)
		x = orphan;
	if (x)
		tab_del(t, x);
	return x;
}

/*
 * Request objects.
 */
static void req_unlink_all(struct xclnt *t, struct xreq *x)
{
	if (x->all_prev)
		x->all_prev->all_next = x->all_next;
	else
		t->all = x->all_next;
	if (x->all_next)
		x->all_next->all_prev = x->all_prev;
	x->all_prev = x->all_next = NULL;
}

static void req_destroy(struct xclnt *t, struct xreq *x)
{
	req_unlink_all(t, x);
	for (unsigned int i = 0; i < x->nown; i++)
		rpcrdma__provider_dereg_mr(x->own_mr[i]);
	rpcrdma__xbuf_free(&x->msg);
	rpcrdma__xbuf_free(&x->sbuf);
	rpcrdma__xbuf_free(&x->lbuf);
	rpcrdma__xbuf_free(&x->rbuf);
	free(x);
}

static struct xreq *req_get(struct xclnt *t)
{
	struct xreq *x = t->free;

	if (x) {
		t->free = x->next;
		t->nfree--;
		x->next = NULL;
		return x;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->t = t;
	x->all_next = t->all;
	if (t->all)
		t->all->all_prev = x;
	t->all = x;
	return x;
}

/* Drops the caller's registrations: only once no grant refers to them. */
static void req_drop_own(struct xreq *x)
{
	for (unsigned int i = 0; i < x->nown; i++)
		rpcrdma__provider_dereg_mr(x->own_mr[i]);
	x->nown = 0;
}

static void req_repost(struct xclnt *t, struct rpcrdma__xrecv *r)
{
	/* A partner's buffers are copies: its owner posts the receives. */
	if (t->conn.state == RPCRDMA__XCONN_UP && !t->partner)
		(void)rpcrdma__xconn_repost(&t->conn, r);
	else
		rpcrdma__xrecv_put(&t->pool, r);
}

/* Returns @x to the free list once nothing refers to it any more. */
static void req_try_free(struct xclnt *t, struct xreq *x)
{
	if (x->creq || x->send_busy || x->in_table || x->fence.pending || x->in_callback)
		return;
	if (x->rep) {
		req_repost(t, x->rep);
		x->rep = NULL;
	}
	req_drop_own(x);
	x->ngrants = 0;
	x->is_props = false;
	x->state = XREQ_IDLE;
	if (t->nfree >= XREQ_FREE_MAX) {
		req_destroy(t, x);
		return;
	}
	/* Keep the common sizes, give back what one large call needed. */
	if (x->msg.len > t->inline_send)
		rpcrdma__xbuf_free(&x->msg);
	rpcrdma__xbuf_free(&x->lbuf);
	if (x->rbuf.len > 4u * t->inline_recv)
		rpcrdma__xbuf_free(&x->rbuf);
	x->next = t->free;
	t->free = x;
	t->nfree++;
}

static bool can_send(const struct xclnt *t)
{
	const struct rpcrdma__xconn *c = &t->conn;

	/* The receives kept for reverse calls are not for our replies. */
	/* While the Version Two probe is out, it goes alone (draft 5.2). */
	return c->state == RPCRDMA__XCONN_UP && rpcrdma__credits_available(&t->cr) &&
	       t->cr.in_flight + t->bc_credits < c->recv_posted && c->sq_used < c->sq_depth &&
	       rpcrdma__vneg_may_send(&t->vneg, t->cr.in_flight);
}

static void maybe_writable(struct xclnt *t)
{
	if (t->want_writable && can_send(t)) {
		t->want_writable = false;
		if (t->cb->writable)
			t->cb->writable(t->cb_ctx);
	}
}

static void finish_down(struct xclnt *t);

static void on_later(struct rpcrdma__timer *tm)
{
	struct xclnt *t = tm->ctx;

	finish_down(t);
	maybe_writable(t);
}

/* Work that may call the core: now, or right after the current op. */
static void kick_later(struct xclnt *t)
{
	if (t->api_depth) {
		rpcrdma__timer_start(t->dev.loop, &t->later, 0, on_later, t);
		return;
	}
	finish_down(t);
	maybe_writable(t);
}

static void req_fenced(struct rpcrdma__xfence *f)
{
	struct xreq *x = (struct xreq *)((char *)f - offsetof(struct xreq, fence));
	struct xclnt *t = x->t;
	struct rpcrdma__creq *creq = x->creq;

	t->fences_live--;
	if (x->fence_t0) {
		RPCRDMA__TRACE(RPCRDMA_TRACE_CHUNK, RPCRDMA_TEV_REVOKE, t->conn.id, x->xid, x->ngrants,
			       (rpcrdma__trace_now_ns() - x->fence_t0) / 1000,
			       "%u grants revoked, fence took %llu us", x->ngrants,
			       (unsigned long long)(rpcrdma__trace_now_ns() - x->fence_t0) / 1000);
		x->fence_t0 = 0;
	}
	/* ORDER: every grant of the call is revoked; the responder can no
	 * longer reach the caller's memory, so it may be handed back. */
	req_drop_own(x);
	if (creq && (x->state == XREQ_REPLIED || x->state == XREQ_FAILED)) {
		x->creq = NULL;
		creq->tpriv = NULL;
		/* WARNING: the core may run the loop from its callback; the
		 * Send completion could then free @x and repost the receive
		 * the core is decoding. */
		x->in_callback = true;
		if (x->state == XREQ_REPLIED) {
			struct rpcrdma_xdr_stream xdr;
			const uint8_t *buf =
			    x->rep_in_rbuf ? x->rbuf.addr : x->rep->buf + x->rep_off;

			rpcrdma_xdr_init_const(&xdr, buf, x->rep_len);
			rpcrdma__ddp_reply_init(&x->rddp, x->wch, x->nwch);
			rpcrdma_xdr_set_ddp(&xdr, &x->rddp.base);
			t->cb->reply(t->cb_ctx, creq, &xdr);
		} else {
			t->cb->failed(t->cb_ctx, creq, x->fail_err);
		}
		x->in_callback = false;
	}
	if (x->abort_creq) {
		struct rpcrdma__creq *gone = x->abort_creq;

		/* ORDER: revoked: the caller may have its memory back. */
		x->abort_creq = NULL;
		x->in_callback = true;
		t->cb->aborted(t->cb_ctx, gone);
		x->in_callback = false;
	}
	if (x->state == XREQ_REPLIED || x->state == XREQ_FAILED)
		x->state = XREQ_DEAD;
	req_try_free(t, x);
	kick_later(t);
}

/* Revokes every grant of @x; req_fenced() follows, maybe at once.
 * WARNING: @x may be freed on return. */
static void req_fence(struct xclnt *t, struct xreq *x)
{
	unsigned int failed = 0;

	if (!x->fence.pending)
		t->fences_live++;
	if (!x->fence.pending && x->ngrants && RPCRDMA__TRACE_ON(RPCRDMA_TRACE_CHUNK))
		x->fence_t0 = rpcrdma__trace_now_ns();
	rpcrdma__xfence_start(&x->fence, t->conn.dev, x->grants, x->ngrants, req_fenced, &failed);
	if (failed) {
		/* RFC 8166 5.5.4: memory we could not fence is fenced by
		 * closing the connection. */
		if (t->conn.pc && t->conn.state != RPCRDMA__XCONN_DOWN)
			(void)rpcrdma__provider_disconnect(t->conn.pc);
	}
}

/*
 * Connection life cycle.
 */
static void finish_down(struct xclnt *t)
{
	int err;

	if (t->conn.state != RPCRDMA__XCONN_DOWN || t->fences_live)
		return;
	if (t->conn.pc && !t->partner) /* a partner's is its owner's */
		rpcrdma__provider_conn_destroy(t->conn.pc);
	t->conn.pc = NULL;
	t->conn.state = RPCRDMA__XCONN_IDLE;
	t->norphans = 0;
	t->props_out = 0;
	t->props_due = false;
	t->conn.sq_used = 0;
	t->conn.recv_posted = 0;
	rpcrdma__credits_reset(&t->cr);
	err = t->down_err ? t->down_err : -ECONNRESET;
	t->down_err = 0;
	t->cb->disconnected(t->cb_ctx, err);
	if (t->partner && t->pending_owner) {
		const struct rpcrdma__xconn *owner = t->pending_owner;

		t->pending_owner = NULL;
		partner_attach(t, owner);
	}
}

static void start_down(struct xclnt *t, int err)
{
	if (t->conn.state == RPCRDMA__XCONN_IDLE || t->conn.state == RPCRDMA__XCONN_DOWN)
		return;
	int raw = err;

	rpcrdma__timer_stop(&t->handshake);
	/* A peer that took the transport's TCP connection and then dropped
	 * it, or never answered, in the handshake is no RDMA endpoint. */
	if (t->conn.state == RPCRDMA__XCONN_CONNECTING &&
	    (err == -ECONNRESET || err == -EPIPE || err == -EINPROGRESS || err == -EPROTO ||
	     err == -ECONNABORTED))
		err = RPCRDMA_ERR_NOT_RDMA_PEER;
	RPCRDMA__TRACE(RPCRDMA_TRACE_CONN,
		       t->conn.state == RPCRDMA__XCONN_CONNECTING ? RPCRDMA_TEV_CONNECT_FAIL
								  : RPCRDMA_TEV_DISCONNECT,
		       t->conn.id, 0, err, raw, "%s: %s (%d, from %d)",
		       t->conn.state == RPCRDMA__XCONN_CONNECTING ? "connection attempt failed"
								  : "connection lost",
		       rpcrdma_strerror(err), err, raw);
	t->conn.state = RPCRDMA__XCONN_DOWN;
	t->down_err = err;
	/* Draft 5.2: a probe lost with its connection counts as a Version
	 * One answer, so the next connection does not probe again. */
	if (!t->partner && rpcrdma__vneg_on_lost(&t->vneg)) {
		rpcrdma__vmemo_mark_v1((const struct sockaddr *)&t->dst, t->dstlen);
		t->st.vers_fallbacks++;
		RPCRDMA__TRACE(RPCRDMA_TRACE_VERS, RPCRDMA_TEV_VERS_FALLBACK, t->conn.id, 0, 0, 1,
			       "the Version Two probe was lost with its connection: the peer is "
			       "taken to be Version One");
	}
	if (t->bc_host)
		t->bc_host->ops->detach(t->bc_host, err);
	/* Guard, so that fences ending synchronously below cannot finish
	 * the teardown before every call was visited. */
	t->fences_live++;
	for (uint32_t i = 0; i <= t->mask; i++) {
		struct xreq *x;

		while ((x = t->tab[i])) {
			tab_del(t, x);
			if (x->creq) {
				x->creq->tpriv = NULL;
				x->creq = NULL;
			}
			x->state = XREQ_DEAD;
			req_fence(t, x);
		}
	}
	t->fences_live--;
	finish_down(t);
}

uint32_t rpcrdma__xclnt_handshake_ms = 10000;

/* The RDMA handshake did not finish: the software provider's TCP
 * connection was taken by something that is not an RDMA endpoint (it
 * waits for ever there), or the peer is far too slow. */
static void on_handshake(struct rpcrdma__timer *tm)
{
	struct xclnt *t = tm->ctx;

	if (t->conn.state == RPCRDMA__XCONN_CONNECTING)
		start_down(t, RPCRDMA_ERR_NOT_RDMA_PEER);
}

/* Thresholds for the version negotiation has reached: that version's
 * defaults, and while the probe is out no more than a Version One
 * receiver takes (draft 5.2: at most 1024 bytes). */
static void apply_version(struct xclnt *t)
{
	rpcrdma__xconn_set_version(&t->conn, t->vneg.vers, t->inline_send, t->inline_recv);
	t->conn.thr.send_max = rpcrdma__vneg_send_max(&t->vneg, t->conn.thr.send_max);
	/* The callback responder answers on this connection: the same
	 * thresholds (RFC 8167 4.2). */
	if (t->bc_host && t->conn.state == RPCRDMA__XCONN_UP)
		t->bc_host->ops->update(t->bc_host, &t->conn);
}

static void on_event(struct rpcrdma__xdev *dev, const struct rpcrdma_prov_event *ev)
{
	struct xclnt *t = dev->ctx;

	if (ev->type == RPCRDMA_PEV_DEVICE_ERROR) {
		if (!ev->listener)
			start_down(t, ev->error ? ev->error : -EIO);
		return;
	}
	if (!ev->conn || ev->conn != t->conn.pc)
		return;
	switch (ev->type) {
	case RPCRDMA_PEV_ESTABLISHED:
		if (t->conn.state != RPCRDMA__XCONN_CONNECTING)
			return;
		/* RFC 8797: the server's accept data bounds what we may send;
		 * without any, 1024 bytes (RFC 8166 3.3.3). */
		rpcrdma__xconn_negotiate(&t->conn, ev->private_len ? ev->private_data : NULL,
					 ev->private_len, t->inline_send, t->inline_recv);
		apply_version(t);
		t->conn.sq_depth = t->conn.pc->attr.send_depth;
		t->conn.bc_sq_share = 0;
		if (t->bc_host) {
			/* The callback responder's share of the send queue. */
			t->conn.bc_sq_share = t->conn.sq_depth > 2 * RPCRDMA__BC_SQ_SHARE
						  ? RPCRDMA__BC_SQ_SHARE
						  : t->conn.sq_depth / 2;
			t->conn.sq_depth -= t->conn.bc_sq_share;
		}
		rpcrdma__credits_init(&t->cr, t->credits);
		rpcrdma__timer_stop(&t->handshake);
		t->conn.state = RPCRDMA__XCONN_UP;
		if (t->bc_host)
			t->bc_host->ops->attach(t->bc_host, &t->conn);
		RPCRDMA__TRACE(RPCRDMA_TRACE_CONN, RPCRDMA_TEV_CONNECT, t->conn.id, 0, t->conn.vers, 0,
			       "connected, version %u, inline send %u recv %u, credits asked %u",
			       t->conn.vers, t->conn.thr.send_max, t->conn.thr.recv_max, t->credits);
		t->cb->connected(t->cb_ctx);
		maybe_writable(t);
		return;
	case RPCRDMA_PEV_REJECTED:
	case RPCRDMA_PEV_CONNECT_ERROR:
		start_down(t, ev->error ? ev->error : -ECONNREFUSED);
		return;
	case RPCRDMA_PEV_DISCONNECTED:
		start_down(t, ev->error ? ev->error : -ECONNRESET);
		return;
	default:
		return;
	}
}

/* Tracing CHUNK: what a call that just left carries. */
static void trace_call_chunks(const struct xclnt *t, const struct xreq *x,
			      const struct rpcrdma_hdr *h)
{
	uint64_t rbytes = 0, wbytes = 0;

	for (uint32_t i = 0; i < h->nreads; i++)
		rbytes += h->reads[i].target.length;
	for (uint32_t i = 0; i < x->wsegs; i++)
		wbytes += x->wseg[i].length;
	if (x->chunks & XREQ_CH_LONG)
		rpcrdma__trace_emit(RPCRDMA_TRACE_CHUNK, RPCRDMA_TEV_LONG_CALL, t->conn.id, x->xid,
				    (int64_t)rbytes, 0, "Long Call: %llu bytes in a Position-Zero Read chunk",
				    (unsigned long long)rbytes);
	else if (x->chunks & XREQ_CH_READ)
		rpcrdma__trace_emit(RPCRDMA_TRACE_CHUNK, RPCRDMA_TEV_READ_CHUNK, t->conn.id, x->xid,
				    (int64_t)rbytes, 0, "%u Read segments, %llu bytes", h->nreads,
				    (unsigned long long)rbytes);
	if (x->chunks & XREQ_CH_WRITE)
		rpcrdma__trace_emit(RPCRDMA_TRACE_CHUNK, RPCRDMA_TEV_WRITE_CHUNK, t->conn.id, x->xid,
				    x->nwch, (int64_t)wbytes, "offers %u Write chunks, %llu bytes",
				    x->nwch, (unsigned long long)wbytes);
	if (x->chunks & XREQ_CH_REPLY) {
		uint64_t n = 0;

		for (uint32_t i = 0; i < x->rsegs; i++)
			n += x->rseg[i].length;
		rpcrdma__trace_emit(RPCRDMA_TRACE_CHUNK, RPCRDMA_TEV_REPLY_CHUNK, t->conn.id, x->xid,
				    (int64_t)n, 0, "offers a Reply chunk of %llu bytes",
				    (unsigned long long)n);
	}
	if (x->ngrants)
		rpcrdma__trace_emit(RPCRDMA_TRACE_CHUNK, RPCRDMA_TEV_GRANT, t->conn.id, x->xid,
				    x->ngrants, 0, "%u memory grants for the responder",
				    x->ngrants);
}

/*
 * Replies.
 */
static void on_send(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev);

/* Checks the segments a responder returned against those offered: same
 * count and handles, no length grown, filled in order (RFC 8166 4.4.6). */
static int check_returned(const struct rpcrdma_hdr *h, const struct rpcrdma_chunk *c,
			  const struct rpcrdma_segment *offered, uint32_t n, uint64_t *total)
{
	bool short_seen = false;

	*total = 0;
	if (c->nsegs != n)
		return RPCRDMA_ERR_BAD_HEADER;
	for (uint32_t i = 0; i < n; i++) {
		const struct rpcrdma_segment *s = rpcrdma_hdr_chunk_seg(h, c, i);

		if (!s || s->handle != offered[i].handle || s->length > offered[i].length)
			return RPCRDMA_ERR_BAD_HEADER;
		if (short_seen && s->length)
			return RPCRDMA_ERR_BAD_HEADER;
		if (s->length < offered[i].length)
			short_seen = true;
		*total += s->length;
	}
	return 0;
}

static int check_reply(struct xreq *x, const struct rpcrdma_hdr *h)
{
	uint64_t total;

	/* Version One responders send no Read chunks. */
	if (h->nreads)
		return RPCRDMA_ERR_BAD_HEADER;
	x->written = 0;
	/* Every Write chunk comes back, used or not (4.4.6.2); a responder
	 * that drops the list entirely wrote nothing. */
	if (h->nwrites) {
		if (h->nwrites != x->nwch)
			return RPCRDMA_ERR_BAD_HEADER;
		for (uint32_t i = 0; i < x->nwch; i++) {
			struct rpcrdma__wchunk *c = &x->wch[i];

			if (check_returned(h, &h->writes[i], &x->wseg[c->seg0], c->nsegs,
					   &c->written))
				return RPCRDMA_ERR_BAD_HEADER;
			x->written += c->written;
		}
	} else {
		for (uint32_t i = 0; i < x->nwch; i++)
			x->wch[i].written = 0;
	}
	if (h->proc == RPCRDMA_PROC_MSG) {
		x->rep_in_rbuf = false;
		x->rep_off = h->hdr_len;
		x->rep_len = h->payload_len;
		return 0;
	}
	/* RDMA_NOMSG: the message is in our Reply chunk. */
	if (!(x->chunks & XREQ_CH_REPLY) || !h->has_reply ||
	    check_returned(h, &h->reply, x->rseg, x->rsegs, &total) || total > x->rbuf.len ||
	    total < 4)
		return RPCRDMA_ERR_BAD_HEADER;
	{
		uint32_t xid;

		memcpy(&xid, x->rbuf.addr, 4);
		if (be32toh(xid) != x->xid)
			return RPCRDMA_ERR_BAD_HEADER;
	}
	x->rep_in_rbuf = true;
	x->rep_off = 0;
	x->rep_len = (size_t)total;
	return 0;
}

/* The call's Send is posted: it holds a credit and a send slot, and its
 * reply is looked up by XID from now on. */
static void req_posted(struct xclnt *t, struct xreq *x)
{
	x->send_busy = true;
	t->conn.sq_used++;
	x->state = XREQ_SENT;
	tab_add(t, x);
	rpcrdma__credits_sent(&t->cr);
}

/* Posts @x's Send again, its header now in the connection's version
 * (RDMA_MSG and RDMA_NOMSG are laid out alike in both versions, so only
 * rdma_vers changes).  The grants of the first try still stand. */
static void resend(struct xclnt *t, struct xreq *x)
{
	uint32_t vers_be = htobe32(t->conn.vers);
	int rc = -ENOTCONN;

	memcpy(x->sbuf.addr + 4, &vers_be, sizeof(vers_be));
	if (t->conn.state == RPCRDMA__XCONN_UP && t->conn.sq_used < t->conn.sq_depth) {
		x->send_op.done = on_send;
		rc = rpcrdma__provider_post_send(t->conn.pc, x->sge, x->nsge, 0, 0, &x->send_op);
	}
	if (rc) {
		x->state = XREQ_FAILED;
		x->fail_err = rc == -ENOTCONN ? -ECONNRESET : rc;
		req_fence(t, x);
		return;
	}
	req_posted(t, x);
	t->st.calls_sent++;
}

/*
 * Any answer to call @x (a reply or an RDMA_ERROR) ends it at the
 * responder: its credit is free again, and the grant the answer carries is
 * the new limit.  A call the core no longer waits for (and did not tell us
 * of) is answered, but to nobody.
 */
static void reply_arrived(struct xclnt *t, struct xreq *x, const struct rpcrdma_hdr *h)
{
	if (x->creq && t->cb->find(t->cb_ctx, h->xid) != x->creq) {
		x->creq = NULL;
		t->norphans++;
	}
	rpcrdma__credits_reply(&t->cr, h->credit);
	if (t->st.credits_granted != t->cr.granted)
		RPCRDMA__TRACE(RPCRDMA_TRACE_CREDIT, RPCRDMA_TEV_CREDIT_GRANT, t->conn.id, h->xid,
			       t->cr.granted, t->st.credits_granted, "grant %u (was %llu)",
			       t->cr.granted, (unsigned long long)t->st.credits_granted);
	t->st.credits_granted = t->cr.granted;
}

/*
 * RDMA_ERROR/ERR_VERS (draft 5.2; RFC 8166 5.5.1): the responder refused
 * the version our call carried.  While probing, the call goes again in the
 * highest version both ranges share, and a peer found to be Version One is
 * remembered by address; anything else ends the connection.
 */
static void handle_err_vers(struct xclnt *t, struct rpcrdma__xrecv *r, const struct rpcrdma_hdr *h)
{
	enum rpcrdma__vneg_verdict verdict;
	struct xreq *x = t->partner ? NULL : tab_take(t, h->xid);
	bool peer_is_v1;

	if (!x) {
		t->st.bad_msgs++;
		req_repost(t, r);
		return;
	}
	reply_arrived(t, x, h);
	t->st.rdma_errors_received++;
	RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_ERR_RECEIVED, t->conn.id, h->xid,
		       RPCRDMA_ERR_VERS, 0, "RDMA_ERROR ERR_VERS: the responder speaks versions %u..%u",
		       h->vers_low, h->vers_high);
	req_repost(t, r);
	verdict = rpcrdma__vneg_on_err_vers(&t->vneg, h->vers_low, h->vers_high, &peer_is_v1);
	if (peer_is_v1)
		rpcrdma__vmemo_mark_v1((const struct sockaddr *)&t->dst, t->dstlen);
	if (verdict == RPCRDMA__VNEG_RETRY) {
		t->st.vers_fallbacks++;
		RPCRDMA__TRACE(RPCRDMA_TRACE_VERS, RPCRDMA_TEV_VERS_FALLBACK, t->conn.id, h->xid, 1,
			       t->vneg.vers, "the probe was refused (ERR_VERS): call sent again in Version %u",
			       t->vneg.vers);
		t->conn.vers = t->vneg.vers;
		apply_version(t);
		if (!x->creq) {
			/* Aborted meanwhile: nothing to send again. */
			if (t->norphans)
				t->norphans--;
			x->state = XREQ_DEAD;
			req_fence(t, x);
			return;
		}
		/* ORDER: the Send buffer is ours again only once the first
		 * Send completed. */
		if (x->send_busy)
			x->resend_pending = true;
		else
			resend(t, x);
		return;
	}
	/* No version in common, or ERR_VERS for a version already agreed:
	 * the call fails and the connection ends. */
	if (!x->creq) {
		if (t->norphans)
			t->norphans--;
		x->state = XREQ_DEAD;
	} else {
		x->state = XREQ_FAILED;
		x->fail_err = RPCRDMA_ERR_TRANSPORT_ERROR;
	}
	req_fence(t, x);
	if (t->conn.pc && t->conn.state == RPCRDMA__XCONN_UP)
		(void)rpcrdma__provider_disconnect(t->conn.pc);
}

/*
 * The transport properties exchange (docs/rpcrdma-v2-properties.md): once
 * Version Two is agreed, one RDMA_OPTIONAL with our properties, accounted as
 * a call (a credit, a table entry under an XID of its own); the answer's
 * receive size becomes our inline send threshold on this connection.  An
 * RDMA_ERROR answer (ERR_INVAL_OPTION from a peer without the feature)
 * leaves the defaults.  It is advisory: when no credit is free it is not
 * sent.
 */
static bool xid_in_flight(struct xclnt *t, uint32_t xid)
{
	for (const struct xreq *y = *tab_slot(t, xid); y; y = y->hnext) {
		if (y->xid == xid)
			return true;
	}
	return false;
}

static void props_start(struct xclnt *t)
{
	struct rpcrdma_xdr_stream xdr;
	uint8_t info[64];
	struct xreq *x;
	uint32_t xid;
	int n, rc;

	if (t->partner || t->props_out || t->conn.vers != RPCRDMA_VERSION_TWO || !can_send(t))
		return;
	n = rpcrdma__xprops_build(info, sizeof(info), t->inline_send, t->inline_recv, t->credits);
	if (n < 0)
		return;
	/* An XID no call in flight has (the core's come from its own
	 * counter; a later collision only costs this advisory exchange). */
	xid = 0x9e3779b9u ^ (uint32_t)t->conn.gen;
	while (xid_in_flight(t, xid))
		xid++;
	x = req_get(t);
	if (!x)
		return;
	if (rpcrdma__xbuf_reserve(t->dev.prov, &x->sbuf, RPCRDMA__XPRT_HDR_ROOM)) {
		x->state = XREQ_IDLE;
		req_try_free(t, x);
		return;
	}
	x->creq = NULL;
	x->xid = xid;
	x->is_props = true;
	x->ngrants = x->nown = 0;
	x->chunks = 0;
	x->nwch = x->wsegs = x->rsegs = 0;
	x->rep = NULL;
	x->resend_pending = false;
	rpcrdma_xdr_init(&xdr, x->sbuf.addr, x->sbuf.len);
	rc = rpcrdma_xdr_encode_u32(&xdr, xid);
	rc = rc ? rc : rpcrdma_xdr_encode_u32(&xdr, RPCRDMA_VERSION_TWO);
	rc = rc ? rc : rpcrdma_xdr_encode_u32(&xdr, t->credits);
	rc = rc ? rc : rpcrdma_xdr_encode_u32(&xdr, RPCRDMA_PROC_OPTIONAL);
	rc = rc ? rc : rpcrdma_xdr_encode_u32(&xdr, RPCRDMA_OPT_PROPERTIES);
	rc = rc ? rc : rpcrdma_xdr_encode_opaque(&xdr, info, (uint32_t)n);
	if (!rc) {
		x->sge[0].addr = x->sbuf.addr;
		x->sge[0].length = (uint32_t)rpcrdma_xdr_pos(&xdr);
		x->sge[0].mr = x->sbuf.mr;
		x->nsge = 1;
		x->send_op.done = on_send;
		rc = rpcrdma__provider_post_send(t->conn.pc, x->sge, 1, 0, 0, &x->send_op);
	}
	if (rc) {
		x->is_props = false;
		x->state = XREQ_DEAD;
		req_try_free(t, x);
		return;
	}
	req_posted(t, x);
	t->props_out++;
}

static void props_answered(struct xclnt *t, struct xreq *x, const struct rpcrdma_hdr *h)
{
	struct rpcrdma__props peer;

	rpcrdma__credits_reply(&t->cr, h->credit);
	t->st.credits_granted = t->cr.granted;
	if (t->props_out)
		t->props_out--;
	if (h->proc == RPCRDMA_PROC_OPTIONAL && h->opttype == RPCRDMA_OPT_PROPERTIES &&
	    !h->payload_len && !rpcrdma__props_decode(h->optinfo, h->optinfo_len, &peer)) {
		t->peer_props = peer;
		t->conn.thr.send_max =
		    rpcrdma__props_send_max(&peer, t->inline_send, t->conn.thr.send_max);
		if (t->bc_host)
			t->bc_host->ops->update(t->bc_host, &t->conn);
	} else if (h->proc == RPCRDMA_PROC_ERROR) {
		t->st.rdma_errors_received++;
	} else {
		t->st.bad_msgs++;
	}
	x->is_props = false;
	x->state = XREQ_DEAD;
	req_try_free(t, x);
}

static void handle_reply(struct xclnt *t, struct rpcrdma__xrecv *r,
			 const struct rpcrdma_prov_event *ev)
{
	struct rpcrdma_hdr *h = &t->hdr;
	struct rpcrdma_hdr_fault fault;
	struct xreq *x;

	if (rpcrdma_hdr_decode(r->buf, r->len, &t->lim, h, &fault)) {
		/* A requester never answers with RDMA_ERROR: two peers must
		 * not trade errors.  The call, if any, times out. */
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, t->conn.id,
			       rpcrdma__trace_xid_of(r->buf, r->len),
			       RPCRDMA_ERR_BAD_HEADER, fault.offset,
			       "reply header refused at byte %zu: %s", fault.offset,
			       fault.reason ? fault.reason : "malformed");
		goto out_bad;
	}
	if (ev->flags & RPCRDMA_PEVF_INVALIDATED)
		t->st.remote_invalidations++;
	switch (h->proc) {
	case RPCRDMA_PROC_MSG:
	case RPCRDMA_PROC_NOMSG:
	case RPCRDMA_PROC_ERROR:
		break;
	case RPCRDMA_PROC_OPTIONAL:
		/* Only as the answer to our properties exchange. */
		if (t->props_out)
			break;
		goto out_bad;
	default:
		/* RDMA_DONE, RDMA_MSGP, anything else: not a reply. */
		goto out_bad;
	}
	if (h->proc == RPCRDMA_PROC_ERROR && h->err == RPCRDMA_ERR_VERS) {
		handle_err_vers(t, r, h);
		return;
	}
	/* Draft 5.3: every answer comes in the version of its call. */
	if (h->vers != t->conn.vers)
		goto out_bad;
	x = tab_take(t, h->xid);
	if (!x)
		goto out_bad;
	/* The first answer in Version Two settles it: its 4096-byte
	 * defaults apply from the next call on, on this connection. */
	if (!t->partner && rpcrdma__vneg_on_reply(&t->vneg, h->vers) == RPCRDMA__VNEG_SETTLED) {
		RPCRDMA__TRACE(RPCRDMA_TRACE_VERS, RPCRDMA_TEV_VERS_SETTLED, t->conn.id, h->xid,
			       h->vers, 0, "settled on Version %u", h->vers);
		apply_version(t);
		t->props_due = true;
	}
	if (x->is_props) {
		props_answered(t, x, h);
		req_repost(t, r);
		return;
	}
	if (h->proc == RPCRDMA_PROC_OPTIONAL) {
		/* An RDMA_OPTIONAL answers no call of ours. */
		tab_add(t, x);
		goto out_bad;
	}
	reply_arrived(t, x, h);
	t->st.calls_received++;
	if (!x->creq) {
		/* Aborted: already fenced; only the credit mattered. */
		if (t->norphans)
			t->norphans--;
		x->state = XREQ_DEAD;
		req_repost(t, r);
		req_fence(t, x); /* a no-op unless it was never fenced */
		return;
	}
	if (h->proc == RPCRDMA_PROC_ERROR) {
		t->st.rdma_errors_received++;
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_ERR_RECEIVED, t->conn.id, h->xid,
			       h->err, 0, "RDMA_ERROR %s: the responder refused the call",
			       h->err == RPCRDMA_ERR_CHUNK ? "ERR_CHUNK" : "(unknown code)");
		x->state = XREQ_FAILED;
		x->fail_err = RPCRDMA_ERR_TRANSPORT_ERROR;
		req_repost(t, r);
		req_fence(t, x);
		return;
	}
	if (check_reply(x, h)) {
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, t->conn.id, h->xid,
			       RPCRDMA_ERR_BAD_HEADER, 0,
			       "reply refused: its chunks do not match those the call offered");
		t->st.bad_msgs++;
		x->state = XREQ_FAILED;
		x->fail_err = RPCRDMA_ERR_BAD_HEADER;
		req_repost(t, r);
		req_fence(t, x);
		return;
	}
	if (x->rep_in_rbuf)
		t->st.long_replies++;
	t->st.rdma_write_bytes += x->written + (x->rep_in_rbuf ? x->rep_len : 0);
	x->rep = r;
	x->state = XREQ_REPLIED;
	req_fence(t, x);
	return;

out_bad:
	t->st.bad_msgs++;
	req_repost(t, r);
}

static void on_recv(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev)
{
	struct rpcrdma__xrecv *r = (struct rpcrdma__xrecv *)op;
	struct xclnt *t = r->conn ? r->conn->owner : NULL;

	if (!t)
		return;
	if (!rpcrdma__xconn_recv_completed(&t->conn, r, ev))
		return;
	if (ev->status != RPCRDMA_PST_SUCCESS) {
		rpcrdma__xrecv_put(&t->pool, r);
		if (ev->status != RPCRDMA_PST_FLUSHED && t->conn.pc &&
		    t->conn.state == RPCRDMA__XCONN_UP)
			(void)rpcrdma__provider_disconnect(t->conn.pc);
		return;
	}
	t->st.inline_recv_bytes += r->len;
	if (t->bc_host) {
		int dir = rpcrdma__bc_direction(r->buf, r->len, &t->lim, &t->hdr);

		/* RFC 8167: a reverse-direction call is for the callbacks we
		 * host, never matched against our calls (its XID may equal
		 * one of theirs, 2.4).  A message whose direction cannot be
		 * told is dropped, so its credit value is never applied
		 * (4.1).  Without callbacks no server may send calls
		 * (section 6): everything is then taken as a reply, and one
		 * that matches no call is dropped (bad_msgs). */
		/* RDMA_OPTIONAL tells no direction; a server sends one only
		 * to answer our properties exchange. */
		if (dir == RPCRDMA__DIR_UNKNOWN && t->props_out &&
		    t->hdr.proc == RPCRDMA_PROC_OPTIONAL)
			dir = RPCRDMA__DIR_REPLY;
		if (dir == RPCRDMA__DIR_CALL)
			t->bc_host->ops->recv(t->bc_host, r->buf, r->len, ev->flags);
		if (dir != RPCRDMA__DIR_REPLY) {
			if (dir != RPCRDMA__DIR_CALL)
				t->st.bad_msgs++;
			req_repost(t, r);
			maybe_writable(t);
			return;
		}
	}
	handle_reply(t, r, ev);
	if (t->props_due) {
		t->props_due = false;
		props_start(t);
	}
	maybe_writable(t);
}

static void on_send(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev)
{
	struct xreq *x = (struct xreq *)((char *)op - offsetof(struct xreq, send_op));
	struct xclnt *t = x->t;

	x->send_busy = false;
	if (t->conn.sq_used)
		t->conn.sq_used--;
	if (x->resend_pending) {
		x->resend_pending = false;
		if (x->creq && x->state == XREQ_SENT && !x->in_table) {
			resend(t, x);
		} else if (!x->in_table && x->state == XREQ_SENT) {
			/* Aborted while waiting to go again: call_abort
			 * counted it as an orphan holding a credit, which
			 * it no longer holds. */
			if (t->norphans)
				t->norphans--;
			x->state = XREQ_DEAD;
			req_fence(t, x);
			return;
		}
	}
	if (ev->status != RPCRDMA_PST_SUCCESS && ev->status != RPCRDMA_PST_FLUSHED && t->conn.pc &&
	    t->conn.state == RPCRDMA__XCONN_UP)
		(void)rpcrdma__provider_disconnect(t->conn.pc);
	req_try_free(t, x);
	maybe_writable(t);
}

/*
 * The transport ops.
 */
static int x_create(struct rpcrdma_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		    const struct rpcrdma_client_opts *opts, const struct rpcrdma__clnt_cb *cb,
		    void *cb_ctx, struct rpcrdma__clnt_transport **out)
{
	struct sockaddr_storage local;
	socklen_t locallen;
	struct xclnt *t;
	uint32_t nslots;
	int rc;

	if (!loop || !addr || !addrlen || addrlen > sizeof(t->dst) || !opts || !cb || !cb->find ||
	    !cb->reply || !cb->failed || !cb->connected || !cb->disconnected || !out)
		return -EINVAL;
	rc = rpcrdma__xprt_local_addr(addr, addrlen, &local, &locallen);
	if (rc)
		return rc;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->cb = cb;
	t->cb_ctx = cb_ctx;
	memcpy(&t->dst, addr, addrlen);
	t->dstlen = addrlen;
	t->inline_send = rpcrdma__xprt_inline_size(opts->inline_send);
	t->inline_recv = rpcrdma__xprt_inline_size(opts->inline_recv);
	t->credits = opts->credits ? opts->credits : RPCRDMA__XPRT_CLNT_CREDITS_DEFAULT;
	/* rpc.h: 0 means Version One; more than Two is not spoken. */
	t->max_vers =
	    opts->max_vers >= RPCRDMA_VERSION_TWO ? RPCRDMA_VERSION_TWO : RPCRDMA_VERSION_ONE;

	rc = rpcrdma__xdev_open(&t->dev, loop,
				opts->provider ? opts->provider : RPCRDMA__XPRT_PROVIDER_DEFAULT,
				(struct sockaddr *)&local, locallen, on_event, t);
	if (rc) {
		free(t);
		return rc;
	}
	/* We can only ask for what we can keep posted. */
	if (t->dev.prov->caps.max_recv_depth > 2 &&
	    t->credits > t->dev.prov->caps.max_recv_depth - 2)
		t->credits = t->dev.prov->caps.max_recv_depth - 2;
	t->seg_max = t->dev.prov->caps.max_msg_size < RPCRDMA__XPRT_MAX_SEG
			 ? t->dev.prov->caps.max_msg_size
			 : RPCRDMA__XPRT_MAX_SEG;
	rpcrdma__xrecv_pool_init(&t->pool, t->dev.prov, t->inline_recv, t->credits + 64);

	for (nslots = 16; nslots < 2 * t->credits; nslots *= 2)
		;
	t->tab = calloc(nslots, sizeof(*t->tab));
	if (!t->tab) {
		rpcrdma__xdev_close(&t->dev);
		free(t);
		return -ENOMEM;
	}
	t->mask = nslots - 1;

	rpcrdma_hdr_limits_default(&t->lim);
	/* Answers in either version we may have sent are decoded; which one
	 * is right is the negotiation's to say (handle_reply). */
	t->lim.vers_low = RPCRDMA_VERSION_ONE;
	t->lim.vers_high = t->max_vers;
	t->lim.max_hdr_size = t->inline_recv;

	t->conn.dev = &t->dev;
	t->conn.state = RPCRDMA__XCONN_IDLE;
	t->conn.vers = RPCRDMA_VERSION_ONE;
	rpcrdma__vneg_start(&t->vneg, RPCRDMA_VERSION_ONE, true);
	t->conn.pool = &t->pool;
	t->conn.on_recv = on_recv;
	t->conn.st = &t->st;
	t->conn.owner = t;
	rpcrdma__credits_init(&t->cr, t->credits);
	*out = (struct rpcrdma__clnt_transport *)(void *)t;
	return 0;
}

static int x_connect(struct rpcrdma__clnt_transport *tt)
{
	struct xclnt *t = xclnt_of(tt);
	struct rpcrdma_prov_conn_attr attr = {0};
	uint8_t pd[RPCRDMA_CM_PRIVATE_SIZE];
	size_t pdlen;
	int rc;

	switch (t->conn.state) {
	case RPCRDMA__XCONN_IDLE:
		break;
	case RPCRDMA__XCONN_UP:
		return -EISCONN;
	default:
		return -EALREADY;
	}
	if (t->dev.failed)
		return -EIO;
	/* One Send per call; receives: one per credit we ask for, plus
	 * room for a reply whose buffer is briefly held, plus those kept for
	 * reverse calls (RFC 8167 4.3.1) and the callback responder's sends. */
	attr.send_depth = t->credits + 8 + (t->bc_host ? RPCRDMA__BC_SQ_SHARE : 0);
	attr.recv_depth = t->credits + 2 + t->bc_credits;
	/* Version Two is offered unless this peer was found to be Version
	 * One only (on an earlier connection, by any client). */
	rpcrdma__vneg_start(&t->vneg, t->max_vers,
			    rpcrdma__vmemo_is_v1((const struct sockaddr *)&t->dst, t->dstlen));
	t->conn.vers = t->vneg.vers;
	rc = rpcrdma__provider_conn_create(t->dev.prov, &attr, &t->conn, &t->conn.pc);
	if (rc)
		return rc;
	t->conn.gen++;
	t->conn.id = rpcrdma__trace_conn_id();
	t->conn.state = RPCRDMA__XCONN_CONNECTING;
	t->conn.sq_used = 0;
	t->conn.recv_posted = 0;
	t->conn.sq_depth = t->conn.pc->attr.send_depth;
	/* ORDER: receives before connect, so the server's first reply finds
	 * one (provider.h). */
	rc = rpcrdma__xconn_fill_recvs(&t->conn, t->credits + t->bc_credits);
	if (!rc) {
		pdlen = rpcrdma__xconn_private(
		    t->inline_send, t->inline_recv,
		    t->dev.prov->caps.flags & RPCRDMA_PCAP_SEND_INVALIDATE, pd, sizeof(pd));
		rc = rpcrdma__provider_connect(t->conn.pc, (struct sockaddr *)&t->dst, t->dstlen,
					       pd, pdlen);
	}
	if (rc) {
		/* Receives posted so far come back FLUSHED with no
		 * connection; their completions return them to the pool. */
		rpcrdma__provider_conn_destroy(t->conn.pc);
		t->conn.pc = NULL;
		t->conn.state = RPCRDMA__XCONN_IDLE;
		t->conn.recv_posted = 0;
		return rc;
	}
	rpcrdma__timer_start(t->dev.loop, &t->handshake, rpcrdma__xclnt_handshake_ms, on_handshake,
			     t);
	return 0;
}

static int x_call_begin(struct rpcrdma__clnt_transport *tt, struct rpcrdma__creq *creq)
{
	struct xclnt *t = xclnt_of(tt);
	struct xreq *x;
	size_t room;
	int rc;

	if (!creq)
		return -EINVAL;
	if (t->conn.state != RPCRDMA__XCONN_UP)
		return -ENOTCONN;
	if (!can_send(t)) {
		if (!t->want_writable && !rpcrdma__credits_available(&t->cr))
			RPCRDMA__TRACE(RPCRDMA_TRACE_CREDIT, RPCRDMA_TEV_CREDIT_STALL, t->conn.id, 0,
				       t->cr.in_flight, t->cr.granted,
				       "calls wait for a credit: %u in flight, %u granted",
				       t->cr.in_flight, t->cr.granted);
		t->want_writable = true;
		return -EAGAIN;
	}
	x = req_get(t);
	if (!x)
		return -ENOMEM;
	room = creq->send_hint > t->inline_send ? creq->send_hint : t->inline_send;
	if (room > RPCRDMA__XPRT_MAX_MSG)
		room = RPCRDMA__XPRT_MAX_MSG;
	rc = rpcrdma__xbuf_reserve(t->dev.prov, &x->msg, room);
	if (!rc)
		rc = rpcrdma__xbuf_reserve(t->dev.prov, &x->sbuf, t->inline_send);
	if (rc) {
		x->state = XREQ_IDLE;
		req_try_free(t, x);
		return rc;
	}
	x->creq = creq;
	x->xid = creq->xid;
	x->state = XREQ_BEGUN;
	x->ngrants = 0;
	x->nown = 0;
	x->chunks = 0;
	x->wsegs = x->rsegs = 0;
	x->nwch = 0;
	x->rep = NULL;
	x->written = 0;
	x->fail_err = 0;
	rpcrdma_xdr_init(&creq->send, x->msg.addr, room);
	rpcrdma__ddp_call_init(&x->cddp, t->seg_max);
	rpcrdma_xdr_set_ddp(&creq->send, &x->cddp.base);
	creq->tpriv = x;
	return 0;
}

/* Grants the responder @access to [addr, addr + len) in segments. */
static int grant_region(struct xclnt *t, struct xreq *x, struct rpcrdma_prov_mr *mr, void *addr,
			uint64_t len, unsigned int access, struct rpcrdma_segment *segs,
			uint32_t maxsegs, uint32_t *nsegs)
{
	uint8_t *p = addr;

	*nsegs = 0;
	while (len) {
		uint32_t n = len > t->seg_max ? t->seg_max : (uint32_t)len;
		struct rpcrdma_prov_rseg rs;
		int rc;

		if (*nsegs >= maxsegs || x->ngrants >= RPCRDMA__XPRT_MAX_GRANTS)
			return -EMSGSIZE;
		rc = rpcrdma__provider_grant(t->conn.pc, mr, p, n, access, &x->grants[x->ngrants].g,
					     &rs);
		if (rc)
			return rc;
		x->grants[x->ngrants].handle = rs.handle;
		x->ngrants++;
		segs[*nsegs].handle = rs.handle;
		segs[*nsegs].length = rs.length;
		segs[*nsegs].offset = rs.offset;
		(*nsegs)++;
		p += n;
		len -= n;
	}
	return 0;
}

/* Registers a caller's buffer for this call only. */
static int own_reg(struct xclnt *t, struct xreq *x, const void *addr, size_t len,
		   struct rpcrdma_prov_mr **mr)
{
	int rc;

	if (x->nown >= sizeof(x->own_mr) / sizeof(x->own_mr[0]))
		return -EMSGSIZE;
	/* The provider never writes through a local registration; remote
	 * writes are what the grant (REMOTE_WRITE only for the Write chunk)
	 * allows. */
	rc = rpcrdma__provider_reg_mr(t->dev.prov, (void *)(uintptr_t)addr, len, mr);
	if (rc)
		return rc;
	x->own_mr[x->nown++] = *mr;
	return 0;
}

/* Copies the reduced message with the DDP items put back (and their XDR
 * padding) to @dst: the full call. */
static void rebuild_full(const struct xreq *x, size_t reduced_len, uint8_t *dst)
{
	static const uint8_t zero[4];
	size_t from = 0;

	for (uint32_t i = 0; i < x->cddp.nitems; i++) {
		const struct rpcrdma__ddp_item *it = &x->cddp.items[i];
		size_t pad = rpcrdma_xdr_align(it->len) - it->len;

		memcpy(dst, x->msg.addr + from, it->pos - from);
		dst += it->pos - from;
		memcpy(dst, it->data, it->len);
		dst += it->len;
		memcpy(dst, zero, pad);
		dst += pad;
		from = it->pos;
	}
	memcpy(dst, x->msg.addr + from, reduced_len - from);
}

/* Undoes call_begin and the grants of a failed call_send. */
static void send_failed(struct xclnt *t, struct xreq *x)
{
	if (x->creq) {
		x->creq->tpriv = NULL;
		x->creq = NULL;
	}
	x->state = XREQ_DEAD;
	req_fence(t, x);
}

/*
 * Takes the call's Write chunks from the core's request: its one ddp_buf,
 * or its ddp_list.  Segments are counted here, granted in call_send.
 */
static int plan_write_chunks(struct xclnt *t, struct xreq *x, const struct rpcrdma__creq *creq)
{
	uint32_t segs = 0;

	x->nwch = 0;
	if (creq->ddp_count > RPCRDMA__XPRT_MAX_WCHUNKS)
		return -EMSGSIZE;
	for (unsigned int i = 0; i < creq->ddp_count; i++) {
		x->wch[x->nwch].buf = creq->ddp_list[i].buf;
		x->wch[x->nwch].len = creq->ddp_list[i].buf ? creq->ddp_list[i].len : 0;
		x->nwch++;
	}
	if (!creq->ddp_count && creq->ddp_buf && creq->ddp_len) {
		x->wch[0].buf = (void *)(uintptr_t)creq->ddp_buf;
		x->wch[0].len = creq->ddp_len;
		x->nwch = 1;
	}
	for (uint32_t i = 0; i < x->nwch; i++) {
		struct rpcrdma__wchunk *c = &x->wch[i];

		if (c->len > (uint64_t)t->seg_max * RPCRDMA__XPRT_MAX_WSEGS)
			return -EMSGSIZE;
		c->nsegs = c->len ? (uint32_t)((c->len + t->seg_max - 1) / t->seg_max) : 1;
		c->written = 0;
		segs += c->nsegs;
	}
	return segs > RPCRDMA__XPRT_MAX_WSEGS ? -EMSGSIZE : 0;
}

/* The full call's length: the reduced stream plus the DDP items taken out
 * of it (XDR-padded), which must lie in order on XDR units of it. */
static int measure_call(const struct xreq *x, size_t reduced_len, size_t *full_len)
{
	size_t prev = 0;

	*full_len = reduced_len;
	for (uint32_t i = 0; i < x->cddp.nitems; i++) {
		const struct rpcrdma__ddp_item *it = &x->cddp.items[i];

		/* An upper layer that rewound its stream after an item was
		 * taken leaves items we cannot place. */
		if (it->pos < prev || it->pos > reduced_len || it->pos % RPCRDMA_XDR_UNIT)
			return -EINVAL;
		prev = it->pos;
		*full_len += rpcrdma_xdr_align(it->len);
	}
	return 0;
}

/* Asks the protocol (rpcrdma__plan_call) how the call travels. */
static int plan_call(struct xclnt *t, struct xreq *x, const struct rpcrdma__creq *creq,
		     size_t reduced_len, size_t full_len, struct rpcrdma_call_plan *plan)
{
	struct rpcrdma_call_shape shape;
	uint64_t ddp_total = 0;
	int rc;

	memset(&shape, 0, sizeof(shape));
	shape.full_len = full_len;
	shape.reduced_len = reduced_len;
	shape.nddp = x->cddp.nitems;
	shape.ddp_segs = x->cddp.nitems; /* each item fits one segment (ddp.c) */
	rc = plan_write_chunks(t, x, creq);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < x->nwch; i++) {
		ddp_total += x->wch[i].len;
		shape.write_segs += x->wch[i].nsegs;
	}
	if (x->nwch) {
		shape.write_chunk = true;
		shape.write_chunks = x->nwch;
	}
	/* creq->max_reply counts the whole reply.  With Write chunks the
	 * DDP results leave it, so the Reply chunk (if any) needs room only
	 * for the rest; a max_reply smaller than the Write chunks is taken
	 * to exclude them already. */
	shape.max_reply = creq->max_reply;
	if (ddp_total && shape.max_reply >= ddp_total)
		shape.max_reply -= ddp_total;
	if (shape.max_reply > RPCRDMA__XPRT_MAX_MSG)
		shape.max_reply = RPCRDMA__XPRT_MAX_MSG;
	shape.reply_segs = 1;
	return rpcrdma__plan_call(&shape, &t->conn.thr, plan);
}

/*
 * RDMA_MSG with Read chunks:
 *  - the full call does not fit inline, the reduced one does;
 *  - each DDP item is one Read chunk at its position in the full stream,
 *    carrying the data without XDR padding (RFC 8166 4.4.5.1): the server
 *    adds the round-up.
 */
static int encode_read_list(struct xclnt *t, struct xreq *x, struct rpcrdma_hdr *h)
{
	struct rpcrdma_prov_mr *mr;
	size_t prev = 0;
	uint32_t nseg;
	int rc;

	x->chunks |= XREQ_CH_READ;
	for (uint32_t i = 0; i < x->cddp.nitems; i++) {
		const struct rpcrdma__ddp_item *it = &x->cddp.items[i];
		struct rpcrdma_segment seg;

		rc = own_reg(t, x, it->data, it->len, &mr);
		if (!rc)
			rc = grant_region(t, x, mr, (void *)(uintptr_t)it->data, it->len,
					  RPCRDMA_PACCESS_REMOTE_READ, &seg, 1, &nseg);
		if (!rc)
			rc = rpcrdma_hdr_add_read(h, (uint32_t)(it->pos + prev), &seg);
		if (rc)
			return rc;
		prev += rpcrdma_xdr_align(it->len);
	}
	return 0;
}

/*
 * Long Call, RDMA_NOMSG with a Position-Zero Read chunk:
 *  - even the reduced call exceeds the server's threshold;
 *  - the full call travels as one region (the smallest header, plan.h):
 *    our encode buffer when no item was taken out, else a copy with the
 *    items put back.
 */
static int encode_long_call(struct xclnt *t, struct xreq *x, struct rpcrdma_hdr *h,
			    size_t reduced_len, size_t full_len)
{
	struct rpcrdma_segment seg;
	struct rpcrdma__xbuf *b = &x->msg;
	uint32_t nseg;
	int rc;

	if (full_len > UINT32_MAX)
		return -EMSGSIZE;
	x->chunks |= XREQ_CH_LONG;
	h->proc = RPCRDMA_PROC_NOMSG;
	if (x->cddp.nitems) {
		rc = rpcrdma__xbuf_reserve(t->dev.prov, &x->lbuf, full_len);
		if (rc)
			return rc;
		rebuild_full(x, reduced_len, x->lbuf.addr);
		b = &x->lbuf;
	}
	rc = grant_region(t, x, b->mr, b->addr, full_len, RPCRDMA_PACCESS_REMOTE_READ, &seg, 1,
			  &nseg);
	if (!rc)
		rc = rpcrdma_hdr_add_read(h, 0, &seg);
	return rc;
}

/*
 * Write chunks for the DDP results, in the order the results consume them:
 *  - the caller gave a buffer for each, so the server places the result
 *    there directly; sized exactly, no room for XDR padding (RFC 8166
 *    4.4.6.1);
 *  - a zero-length one is a single segment of zeros (nfsdirect-00
 *    section 4): no memory is exposed for it.
 */
static int encode_write_list(struct xclnt *t, struct xreq *x, struct rpcrdma_hdr *h)
{
	struct rpcrdma_prov_mr *mr;
	uint32_t nseg;
	int rc;

	for (uint32_t i = 0; i < x->nwch; i++) {
		struct rpcrdma__wchunk *c = &x->wch[i];

		c->seg0 = x->wsegs;
		if (c->len) {
			rc = own_reg(t, x, c->buf, c->len, &mr);
			if (!rc)
				rc = grant_region(t, x, mr, c->buf, c->len,
						  RPCRDMA_PACCESS_REMOTE_WRITE, &x->wseg[c->seg0],
						  RPCRDMA__XPRT_MAX_WSEGS - c->seg0, &nseg);
		} else {
			memset(&x->wseg[c->seg0], 0, sizeof(x->wseg[0]));
			nseg = 1;
			rc = 0;
		}
		if (!rc)
			rc = rpcrdma_hdr_add_write(h, &x->wseg[c->seg0], nseg);
		if (rc)
			return rc;
		c->nsegs = nseg;
		x->wsegs += nseg;
		x->chunks |= XREQ_CH_WRITE;
	}
	return 0;
}

/*
 * Reply chunk: the largest reply, with its header, can exceed our inline
 * receive size (RFC 8166 5.3.3: MUST provide one); it goes with a Write
 * chunk when both apply.
 */
static int encode_reply_chunk(struct xclnt *t, struct xreq *x, struct rpcrdma_hdr *h,
			      uint64_t len)
{
	int rc;

	rc = rpcrdma__xbuf_reserve(t->dev.prov, &x->rbuf, len);
	if (!rc)
		rc = grant_region(t, x, x->rbuf.mr, x->rbuf.addr, len, RPCRDMA_PACCESS_REMOTE_WRITE,
				  x->rseg, RPCRDMA__XPRT_MAX_WSEGS, &x->rsegs);
	if (!rc)
		rc = rpcrdma_hdr_set_reply(h, x->rseg, x->rsegs);
	if (rc)
		return rc;
	x->chunks |= XREQ_CH_REPLY;
	return 0;
}

/* Encodes the transport header and lays out the Send: the header, then
 * the message inline (the reduced one, or the full one when the planned
 * form is inline and items were taken out), or nothing (Long Call). */
static int build_send_sges(struct xclnt *t, struct xreq *x, struct rpcrdma_hdr *h,
			   const struct rpcrdma_call_plan *plan, size_t reduced_len,
			   size_t full_len, struct rpcrdma_prov_sge *sge, unsigned int *nsge)
{
	size_t hdr_len;
	int n;

	n = rpcrdma_hdr_encode(h, x->sbuf.addr, x->sbuf.len);
	if (n < 0)
		return n;
	hdr_len = (size_t)n;
	sge[0].addr = x->sbuf.addr;
	sge[0].mr = x->sbuf.mr;
	*nsge = 1;
	if (plan->form == RPCRDMA_CALL_INLINE && x->cddp.nitems) {
		/* The items go back inline: one copy of small data beats
		 * registering it. */
		if (hdr_len + full_len > t->conn.thr.send_max || hdr_len + full_len > x->sbuf.len)
			return -EMSGSIZE;
		rebuild_full(x, reduced_len, x->sbuf.addr + hdr_len);
		sge[0].length = (uint32_t)(hdr_len + full_len);
	} else {
		size_t body = plan->form == RPCRDMA_CALL_LONG ? 0 : reduced_len;

		/* RFC 8166 5.2: the Send MUST NOT exceed the receiver's
		 * threshold. */
		if (hdr_len + body > t->conn.thr.send_max)
			return -EMSGSIZE;
		sge[0].length = (uint32_t)hdr_len;
		if (body) {
			sge[1].addr = x->msg.addr;
			sge[1].mr = x->msg.mr;
			sge[1].length = (uint32_t)body;
			*nsge = 2;
		}
	}
	return 0;
}

/* A call went out: the counters. */
static void count_call(struct xclnt *t, const struct xreq *x, const struct rpcrdma_hdr *h,
		       const struct rpcrdma_prov_sge *sge, unsigned int nsge)
{
	t->st.calls_sent++;
	if (t->conn.vers == RPCRDMA_VERSION_TWO)
		t->st.vers_two_msgs++;
	t->st.inline_send_bytes += sge[0].length + (nsge > 1 ? sge[1].length : 0);
	if (x->chunks & XREQ_CH_LONG)
		t->st.long_calls++;
	else if (x->chunks & XREQ_CH_READ)
		t->st.read_chunk_msgs++;
	else
		t->st.inline_msgs++;
	if (x->chunks & XREQ_CH_WRITE)
		t->st.write_chunk_msgs++;
	if (x->chunks & XREQ_CH_REPLY)
		t->st.reply_chunk_msgs++;
	for (uint32_t i = 0; i < h->nreads; i++)
		t->st.rdma_read_bytes += h->reads[i].target.length;
	if (t->cr.in_flight > t->st.credits_in_use_max)
		t->st.credits_in_use_max = t->cr.in_flight;
}

/* Marshals and posts one call: measure, plan, the chunk lists, the Send. */
static int call_send(struct xclnt *t, struct rpcrdma__creq *creq)
{
	struct xreq *x = creq ? creq->tpriv : NULL;
	struct rpcrdma_hdr *h = &t->hdr;
	struct rpcrdma_call_plan plan;
	struct rpcrdma_prov_sge sge[2];
	unsigned int nsge = 0;
	size_t reduced_len, full_len;
	int rc;

	if (!x || x->creq != creq || x->state != XREQ_BEGUN)
		return -EINVAL;
	if (t->conn.state != RPCRDMA__XCONN_UP) {
		rc = -ENOTCONN;
		goto out_fail;
	}
	if (!can_send(t)) {
		t->want_writable = true;
		rc = -EAGAIN;
		goto out_fail;
	}
	reduced_len = rpcrdma_xdr_pos(&creq->send);
	rc = measure_call(x, reduced_len, &full_len);
	if (!rc)
		rc = plan_call(t, x, creq, reduced_len, full_len, &plan);
	if (rc)
		goto out_fail;

	rpcrdma_hdr_init(h, x->xid, t->conn.vers, t->credits, RPCRDMA_PROC_MSG);
	switch (plan.form) {
	case RPCRDMA_CALL_INLINE:
		/* Short message, RDMA_MSG with no Read list: the whole call,
		 * DDP items included, fits the server's inline threshold, so
		 * moving them by RDMA would only add round trips and
		 * registrations. */
		break;
	case RPCRDMA_CALL_READ_CHUNKS:
		rc = encode_read_list(t, x, h);
		break;
	case RPCRDMA_CALL_LONG:
		rc = encode_long_call(t, x, h, reduced_len, full_len);
		break;
	}
	if (!rc)
		rc = encode_write_list(t, x, h);
	if (!rc && plan.reply_chunk)
		rc = encode_reply_chunk(t, x, h, plan.reply_chunk_len);
	if (!rc)
		rc = build_send_sges(t, x, h, &plan, reduced_len, full_len, sge, &nsge);
	if (rc)
		goto out_fail;

	x->send_op.done = on_send;
	rc = rpcrdma__provider_post_send(t->conn.pc, sge, nsge, 0, 0, &x->send_op);
	if (rc) {
		if (rc == -ENOTCONN)
			rc = -EAGAIN; /* the connection is going: the core waits for it */
		goto out_fail;
	}
	memcpy(x->sge, sge, sizeof(sge));
	x->nsge = nsge;
	x->resend_pending = false;
	if (!t->partner && t->vneg.probing && !t->vneg.probe_sent)
		RPCRDMA__TRACE(RPCRDMA_TRACE_VERS, RPCRDMA_TEV_VERS_PROBE, t->conn.id, x->xid, 2, 0,
			       "Version Two probe sent; other calls wait for its answer");
	if (!t->partner)
		rpcrdma__vneg_sent(&t->vneg);
	req_posted(t, x);
	creq->conn_id = t->conn.id;
	if (RPCRDMA__TRACE_ON(RPCRDMA_TRACE_CHUNK))
		trace_call_chunks(t, x, h);
	count_call(t, x, h, sge, nsge);
	return 0;

out_fail:
	/* The provider's grant queue is full (verbs): like a missing credit,
	 * the core waits for cb->writable, which the revocations and replies
	 * under way will bring. */
	if (rc == -EAGAIN)
		t->want_writable = true;
	/* Whatever was granted is revoked before the memory is reused. */
	send_failed(t, x);
	return rc;
}

static int x_call_send(struct rpcrdma__clnt_transport *tt, struct rpcrdma__creq *creq)
{
	struct xclnt *t = xclnt_of(tt);
	int rc;

	t->api_depth++;
	rc = call_send(t, creq);
	t->api_depth--;
	return rc;
}

/*
 * Whether the core must wait for @x's revocation before handing the call's
 * memory back: a REVOKE completion still to come (verbs posts an
 * invalidation; a full send queue defers it), told by cb->aborted.
 */
static int abort_wait(struct xclnt *t, struct xreq *x, struct rpcrdma__creq *creq)
{
	if (!x->fence.pending || !t->cb->aborted)
		return 0;
	x->abort_creq = creq;
	t->st.abort_waits++;
	return 1;
}

static int call_abort(struct xclnt *t, struct rpcrdma__creq *creq)
{
	struct xreq *x = creq ? creq->tpriv : NULL;
	int rc;

	if (!x || x->creq != creq)
		return 0;
	creq->tpriv = NULL;
	x->creq = NULL;
	switch (x->state) {
	case XREQ_SENT:
		/* RFC 8166 5.4.1: a cancelled call's memory is fenced too; the
		 * call keeps its table entry (and credit) until it is
		 * answered or the connection ends. */
		req_fence(t, x);
		t->norphans++;
		/*
		 * Credits held only by calls the core gave up on may never
		 * come back (a responder that never answers), and RFC 8166
		 * 4.3.1 forbids sending past them.  Then the connection is
		 * cut, as the Linux client does on a time-out: a new one
		 * starts from one credit and the core sends again.
		 */
		if (t->norphans >= t->cr.in_flight && !rpcrdma__credits_available(&t->cr) &&
		    t->conn.pc && t->conn.state == RPCRDMA__XCONN_UP) {
			(void)rpcrdma__provider_disconnect(t->conn.pc);
		}
		return abort_wait(t, x, creq); /* in the table: not freed */
	case XREQ_REPLIED:
	case XREQ_FAILED:
		/* Fencing already; the core hears only that it ended. */
		rc = abort_wait(t, x, creq);
		if (rc)
			return rc;
		break;
	default:
		x->state = XREQ_DEAD;
		break;
	}
	req_try_free(t, x);
	return 0;
}

static int x_call_abort(struct rpcrdma__clnt_transport *tt, struct rpcrdma__creq *creq)
{
	struct xclnt *t = xclnt_of(tt);
	int rc;

	t->api_depth++;
	rc = call_abort(t, creq);
	t->api_depth--;
	return rc;
}

static void x_disconnect(struct rpcrdma__clnt_transport *tt)
{
	struct xclnt *t = xclnt_of(tt);

	if (t->conn.pc &&
	    (t->conn.state == RPCRDMA__XCONN_UP || t->conn.state == RPCRDMA__XCONN_CONNECTING))
		(void)rpcrdma__provider_disconnect(t->conn.pc);
}

static void x_destroy(struct rpcrdma__clnt_transport *tt)
{
	struct xclnt *t = xclnt_of(tt);
	struct xreq *x;

	if (!t)
		return;
	if (t->partner) {
		partner_destroy(t);
		return;
	}
	rpcrdma__timer_stop(&t->later);
	rpcrdma__timer_stop(&t->handshake);
	/* Closing the instance destroys every grant with it (the fence of
	 * last resort), and no event follows. */
	if (t->conn.pc && t->conn.state != RPCRDMA__XCONN_DOWN)
		RPCRDMA__TRACE(RPCRDMA_TRACE_CONN, RPCRDMA_TEV_DISCONNECT, t->conn.id, 0, -ESHUTDOWN,
			       0, "closed: the client was destroyed");
	if (t->conn.pc)
		rpcrdma__provider_conn_destroy(t->conn.pc);
	t->conn.pc = NULL;
	while ((x = t->all)) {
		x->nown = 0; /* closed with the instance below */
		req_unlink_all(t, x);
		rpcrdma__xbuf_free(&x->msg);
		rpcrdma__xbuf_free(&x->sbuf);
		rpcrdma__xbuf_free(&x->lbuf);
		rpcrdma__xbuf_free(&x->rbuf);
		free(x);
	}
	rpcrdma__xrecv_pool_destroy(&t->pool);
	rpcrdma__xdev_close(&t->dev);
	free(t->tab);
	free(t);
}

static void x_stats(struct rpcrdma__clnt_transport *tt, struct rpcrdma_xprt_stats *out)
{
	struct xclnt *t = xclnt_of(tt);

	*out = t->st;
	if (t->cr.max_in_flight_seen > out->credits_in_use_max)
		out->credits_in_use_max = t->cr.max_in_flight_seen;
	if (t->bc_host)
		t->bc_host->ops->stats(t->bc_host, out);
}

struct rpcrdma_provider *rpcrdma__xprt_clnt_provider(struct rpcrdma__clnt_transport *tt)
{
	return tt ? xclnt_of(tt)->dev.prov : NULL;
}

const struct rpcrdma__clnt_transport_ops rpcrdma__rdma_clnt_ops = {
    .name = "rdma",
    .create = x_create,
    .connect = x_connect,
    .call_begin = x_call_begin,
    .call_send = x_call_send,
    .call_abort = x_call_abort,
    .disconnect = x_disconnect,
    .destroy = x_destroy,
    .stats = x_stats,
};

/*
 * The server's reverse-direction requester (RFC 8167; backchannel.c): this
 * engine on a connection that the responder (svc.c, its owner) accepted.
 * It has no connection or receives of its own: the owner keeps t->credits
 * receives posted for our replies, copies each reply-direction message
 * here (rpcrdma__xclnt_partner_recv), and attaches us while its connection
 * is up.  connect only waits for the next attach (RFC 8167 5.4: a server
 * cannot reconnect; the core's time-outs bound the wait); disconnect does
 * nothing, since the connection is the forward direction's too.
 */
static void partner_announce(struct rpcrdma__timer *tm)
{
	struct xclnt *t = tm->ctx;

	if (t->partner_waiting && t->conn.state == RPCRDMA__XCONN_UP) {
		t->partner_waiting = false;
		t->cb->connected(t->cb_ctx);
		maybe_writable(t);
	}
}

static int partner_connect(struct rpcrdma__clnt_transport *tt)
{
	struct xclnt *t = xclnt_of(tt);

	if (t->dev.failed)
		return -EIO;
	t->partner_waiting = true;
	/* Told from a timer: the core is inside its own connect here. */
	if (t->conn.state == RPCRDMA__XCONN_UP)
		rpcrdma__timer_start(t->dev.loop, &t->partner_timer, 0, partner_announce, t);
	return 0;
}

static void partner_disconnect(struct rpcrdma__clnt_transport *tt)
{
	(void)tt;
}

static const struct rpcrdma__xpartner_ops partner_ops;

int rpcrdma__xclnt_partner_create(struct rpcrdma__xdev *dev, uint32_t inline_send,
				  uint32_t inline_recv, uint32_t credits,
				  const struct rpcrdma__clnt_cb *cb, void *cb_ctx,
				  struct rpcrdma__clnt_transport **out)
{
	struct xclnt *t;
	uint32_t nslots;

	if (!dev || !dev->prov || !cb || !cb->find || !cb->reply || !cb->failed || !cb->connected ||
	    !cb->disconnected || !out)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->partner = true;
	t->self.ops = &partner_ops;
	t->cb = cb;
	t->cb_ctx = cb_ctx;
	/* The owner's instance, borrowed: never watched, opened or closed
	 * here (its events reach the owner). */
	t->dev.loop = dev->loop;
	t->dev.prov = dev->prov;
	t->inline_send = inline_send;
	t->inline_recv = inline_recv;
	t->credits = credits ? credits : RPCRDMA__BC_CREDITS_DEFAULT;
	if (t->credits > RPCRDMA__BC_CREDITS_MAX)
		t->credits = RPCRDMA__BC_CREDITS_MAX;
	t->seg_max = dev->prov->caps.max_msg_size < RPCRDMA__XPRT_MAX_SEG
			 ? dev->prov->caps.max_msg_size
			 : RPCRDMA__XPRT_MAX_SEG;
	rpcrdma__xrecv_pool_init(&t->pool, dev->prov, inline_recv, t->credits + 64);
	for (nslots = 16; nslots < 2 * t->credits; nslots *= 2)
		;
	t->tab = calloc(nslots, sizeof(*t->tab));
	if (!t->tab) {
		free(t);
		return -ENOMEM;
	}
	t->mask = nslots - 1;
	rpcrdma_hdr_limits_default(&t->lim);
	/* Reverse replies come in the forward direction's version, One or
	 * Two (RFC 8167 5.1; handle_reply checks it is the connection's). */
	t->lim.vers_low = RPCRDMA_VERSION_ONE;
	t->lim.vers_high = RPCRDMA_VERSION_TWO;
	t->lim.max_hdr_size = inline_recv;
	/* Deferred revocations wait on the owner's device, which polls. */
	t->conn.dev = dev;
	t->conn.state = RPCRDMA__XCONN_IDLE;
	t->conn.vers = RPCRDMA_VERSION_ONE;
	t->conn.pool = &t->pool;
	t->conn.on_recv = on_recv;
	t->conn.st = &t->st;
	t->conn.owner = t;
	rpcrdma__credits_init(&t->cr, t->credits);
	*out = (struct rpcrdma__clnt_transport *)(void *)t;
	return 0;
}

static struct xclnt *xclnt_of_partner(struct rpcrdma__xpartner *p)
{
	return (struct xclnt *)(void *)((char *)p - offsetof(struct xclnt, self));
}

static void partner_attach(struct xclnt *t, const struct rpcrdma__xconn *owner)
{

	if (!owner->pc)
		return;
	if (t->conn.state == RPCRDMA__XCONN_DOWN) {
		t->pending_owner = owner; /* once the last calls are fenced */
		return;
	}
	if (t->conn.state != RPCRDMA__XCONN_IDLE)
		return;
	t->conn.pc = owner->pc;
	t->conn.gen++;
	t->conn.id = owner->id;
	t->conn.vers = owner->vers; /* RFC 8167 5.1: the forward direction's */
	t->conn.peer = owner->peer;
	t->conn.thr = owner->thr; /* 4.2: the same thresholds, same buffers */
	t->conn.sq_depth = owner->bc_sq_share ? owner->bc_sq_share : 1;
	t->conn.sq_used = 0;
	/* Not ours: the owner keeps this many posted for our replies (one
	 * more than the credits, as can_send() wants). */
	t->conn.recv_posted = t->credits + 1;
	rpcrdma__credits_init(&t->cr, t->credits);
	t->norphans = 0;
	t->conn.state = RPCRDMA__XCONN_UP;
	if (t->partner_waiting)
		rpcrdma__timer_start(t->dev.loop, &t->partner_timer, 0, partner_announce, t);
}

static void partner_detach(struct xclnt *t, int err)
{

	t->pending_owner = NULL;
	if (t->conn.state != RPCRDMA__XCONN_UP)
		return;
	/* The calls in flight are fenced now, while the owner's connection
	 * still exists; the core hears of it from a timer, never from inside
	 * the owner's teardown. */
	t->fences_live++;
	start_down(t, err ? err : -ECONNRESET);
	t->fences_live--;
	t->conn.pc = NULL; /* the owner destroys it */
	t->conn.recv_posted = 0;
	rpcrdma__timer_start(t->dev.loop, &t->later, 0, on_later, t);
}

static void partner_recv(struct rpcrdma__xpartner *p, const uint8_t *buf, uint32_t len,
			 unsigned int flags)
{
	struct xclnt *t = xclnt_of_partner(p);
	struct rpcrdma_prov_event ev;
	struct rpcrdma__xrecv *r;

	if (t->conn.state != RPCRDMA__XCONN_UP || len > t->pool.size) {
		t->st.bad_msgs++;
		return;
	}
	r = rpcrdma__xrecv_get(&t->pool);
	if (!r) {
		/* Out of buffers: the call times out (or is sent again). */
		t->st.bad_msgs++;
		return;
	}
	memcpy(r->buf, buf, len);
	r->len = len;
	memset(&ev, 0, sizeof(ev));
	ev.flags = flags;
	t->st.inline_recv_bytes += len;
	handle_reply(t, r, &ev);
	maybe_writable(t);
}

static bool partner_idle(struct xclnt *t)
{

	if (t->conn.state != RPCRDMA__XCONN_IDLE || t->fences_live)
		return false;
	for (struct xreq *x = t->all; x; x = x->all_next) {
		if (x->send_busy || x->fence.pending || x->in_callback)
			return false;
	}
	return true;
}

static uint32_t partner_credits(struct rpcrdma__xpartner *p)
{
	return xclnt_of_partner(p)->credits;
}

static struct rpcrdma__creq *noop_find(void *ctx, uint32_t xid)
{
	(void)ctx;
	(void)xid;
	return NULL;
}

static void noop_reply(void *ctx, struct rpcrdma__creq *req, struct rpcrdma_xdr_stream *msg)
{
	(void)ctx;
	(void)req;
	(void)msg;
}

static void noop_failed(void *ctx, struct rpcrdma__creq *req, int err)
{
	(void)ctx;
	(void)req;
	(void)err;
}

static void noop_event(void *ctx)
{
	(void)ctx;
}

static void noop_disconnected(void *ctx, int err)
{
	(void)ctx;
	(void)err;
}

/* What a partner the core let go of tells nobody. */
static const struct rpcrdma__clnt_cb partner_gone_cb = {
    .find = noop_find,
    .reply = noop_reply,
    .failed = noop_failed,
    .connected = noop_event,
    .disconnected = noop_disconnected,
    .writable = noop_event,
};

static void partner_free(struct xclnt *t)
{
	struct xreq *x;

	rpcrdma__timer_stop(&t->later);
	rpcrdma__timer_stop(&t->partner_timer);
	while ((x = t->all)) {
		if (x->fence.deferred)
			rpcrdma__xfence_cancel(&x->fence);
		req_unlink_all(t, x);
		req_drop_own(x);
		if (x->rep)
			rpcrdma__xrecv_put(&t->pool, x->rep);
		rpcrdma__xbuf_free(&x->msg);
		rpcrdma__xbuf_free(&x->sbuf);
		rpcrdma__xbuf_free(&x->lbuf);
		rpcrdma__xbuf_free(&x->rbuf);
		free(x);
	}
	rpcrdma__xrecv_pool_destroy(&t->pool);
	free(t->tab);
	free(t);
}

/* The core let go of us (it aborted its calls first).  Operations still
 * posted name our memory: until they complete we stay with our home
 * responder, which frees us then, or before its provider instance goes. */
static void partner_destroy(struct xclnt *t)
{
	t->cb = &partner_gone_cb;
	t->partner_waiting = false;
	rpcrdma__timer_stop(&t->partner_timer);
	if (t->conn.state == RPCRDMA__XCONN_UP)
		partner_detach(t, 0);
	if (t->conn.state == RPCRDMA__XCONN_DOWN && !t->fences_live) {
		rpcrdma__timer_stop(&t->later);
		finish_down(t);
	}
	if (partner_idle(t)) {
		partner_free(t);
		return;
	}
	/* The owner's device: t->dev is only a borrowed copy. */
	rpcrdma__xdev_bury(t->conn.dev, &t->self);
}

static void partner_op_attach(struct rpcrdma__xpartner *p, const struct rpcrdma__xconn *owner)
{
	partner_attach(xclnt_of_partner(p), owner);
}

static void partner_op_detach(struct rpcrdma__xpartner *p, int err)
{
	partner_detach(xclnt_of_partner(p), err);
}

static bool partner_op_idle(struct rpcrdma__xpartner *p)
{
	return partner_idle(xclnt_of_partner(p));
}

static void partner_op_free(struct rpcrdma__xpartner *p)
{
	partner_free(xclnt_of_partner(p));
}

/* The server's reverse requester as its owner (the responder) sees it. */
static const struct rpcrdma__xpartner_ops partner_ops = {
    .recv = partner_recv,
    .attach = partner_op_attach,
    .detach = partner_op_detach,
    .idle = partner_op_idle,
    .credits = partner_credits,
    .free = partner_op_free,
};

struct rpcrdma__xpartner *rpcrdma__xclnt_partner(struct rpcrdma__clnt_transport *tt)
{
	return &xclnt_of(tt)->self;
}

void rpcrdma__xclnt_set_bc_host(struct rpcrdma__clnt_transport *tt, struct rpcrdma__xpartner *host,
				uint32_t credits)
{
	struct xclnt *t = xclnt_of(tt);

	uint32_t depth = t->dev.prov->caps.max_recv_depth;

	t->bc_host = host;
	t->bc_credits = host ? credits : 0;
	/* Forward and reverse receives share the queue (RFC 8167 4.3.1). */
	if (depth > 2 + 2 * t->bc_credits && t->credits > depth - 2 - t->bc_credits)
		t->credits = depth - 2 - t->bc_credits;
	/* Reverse calls hold their own buffers (copies): ours only turn
	 * over faster; the pool grows for the extra receives posted. */
	t->pool.max = t->credits + 64 + t->bc_credits;
}

struct rpcrdma__xdev *rpcrdma__xclnt_dev(struct rpcrdma__clnt_transport *tt)
{
	return &xclnt_of(tt)->dev;
}

void rpcrdma__xclnt_inline(struct rpcrdma__clnt_transport *tt, uint32_t *send, uint32_t *recv)
{
	*send = xclnt_of(tt)->inline_send;
	*recv = xclnt_of(tt)->inline_recv;
}

const struct rpcrdma__clnt_transport_ops rpcrdma__rdma_bc_clnt_ops = {
    .name = "rdma-backchannel",
    .create = NULL, /* rpcrdma__xclnt_partner_create */
    .connect = partner_connect,
    .call_begin = x_call_begin,
    .call_send = x_call_send,
    .call_abort = x_call_abort,
    .disconnect = partner_disconnect,
    .destroy = x_destroy,
    .stats = x_stats,
};
