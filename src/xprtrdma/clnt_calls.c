/*
 * The requester's calls in flight (clnt.h): the table by XID, request
 * objects and their buffers, fencing a call's grants before the core sees
 * its end, and the core aborting a call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace.h"
#include "xprtrdma/clnt.h"

/*
 * The table of calls in flight, by XID.
 */
struct rpcrdma__xreq **rpcrdma__xclnt_tab_slot(struct rpcrdma__xclnt *t, uint32_t xid)
{
	return &t->tab[(xid * 2654435761u) & t->mask];
}

void rpcrdma__xclnt_tab_add(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x)
{
	struct rpcrdma__xreq **s = rpcrdma__xclnt_tab_slot(t, x->xid);

	x->hnext = *s;
	*s = x;
	x->in_table = true;
}

void rpcrdma__xclnt_tab_del(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x)
{
	for (struct rpcrdma__xreq **pp = rpcrdma__xclnt_tab_slot(t, x->xid); *pp;
	     pp = &(*pp)->hnext) {
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
struct rpcrdma__xreq *rpcrdma__xclnt_tab_take(struct rpcrdma__xclnt *t, uint32_t xid)
{
	struct rpcrdma__xreq *orphan = NULL, *x;

	for (x = *rpcrdma__xclnt_tab_slot(t, xid); x; x = x->hnext) {
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
		rpcrdma__xclnt_tab_del(t, x);
	return x;
}

/*
 * Request objects.
 */
void rpcrdma__xclnt_req_unlink_all(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x)
{
	if (x->all_prev)
		x->all_prev->all_next = x->all_next;
	else
		t->all = x->all_next;
	if (x->all_next)
		x->all_next->all_prev = x->all_prev;
	x->all_prev = x->all_next = NULL;
}

static void req_destroy(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x)
{
	rpcrdma__xclnt_req_unlink_all(t, x);
	for (unsigned int i = 0; i < x->nown; i++)
		rpcrdma__regcache_put(x->own[i]);
	rpcrdma__xbuf_free(&x->msg);
	rpcrdma__xbuf_free(&x->sbuf);
	rpcrdma__xbuf_free(&x->lbuf);
	rpcrdma__xbuf_free(&x->rbuf);
	for (unsigned int i = 0; i < sizeof(x->bounce) / sizeof(x->bounce[0]); i++)
		rpcrdma__xbuf_free(&x->bounce[i]);
	free(x);
}

struct rpcrdma__xreq *rpcrdma__xclnt_req_get(struct rpcrdma__xclnt *t)
{
	struct rpcrdma__xreq *x = t->free;

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
void rpcrdma__xclnt_req_drop_own(struct rpcrdma__xreq *x)
{
	for (unsigned int i = 0; i < x->nown; i++)
		rpcrdma__regcache_put(x->own[i]);
	x->nown = 0;
}

void rpcrdma__xclnt_req_repost(struct rpcrdma__xclnt *t, struct rpcrdma__xrecv *r)
{
	/* A partner's buffers are copies: its owner posts the receives. */
	if (t->conn.state == RPCRDMA__XCONN_UP && !t->partner)
		(void)rpcrdma__xconn_repost(&t->conn, r);
	else
		rpcrdma__xrecv_put(&t->pool, r);
}

/* Returns @x to the free list once nothing refers to it any more. */
void rpcrdma__xclnt_req_try_free(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x)
{
	if (x->creq || x->send_busy || x->in_table || x->fence.pending || x->in_callback ||
	    x->awaiting_close)
		return;
	if (x->rep) {
		rpcrdma__xclnt_req_repost(t, x->rep);
		x->rep = NULL;
	}
	rpcrdma__xclnt_req_drop_own(x);
	x->ngrants = 0;
	x->lent = 0;
	x->fence_after_send = false;
	x->fence.refused = 0;
	x->close_fence = false;
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

bool rpcrdma__xclnt_can_send(const struct rpcrdma__xclnt *t)
{
	const struct rpcrdma__xconn *c = &t->conn;

	/* The receives kept for reverse calls are not for our replies. */
	/* While the Version Two probe is out, it goes alone (draft 5.2). */
	return c->state == RPCRDMA__XCONN_UP && rpcrdma__credits_available(&t->cr) &&
	       t->cr.in_flight + t->bc_credits < c->recv_posted && c->sq_used < c->sq_depth &&
	       rpcrdma__vneg_may_send(&t->vneg, t->cr.in_flight);
}

void rpcrdma__xclnt_maybe_writable(struct rpcrdma__xclnt *t)
{
	/* ORDER: what frees a credit or a send slot serves the answers the
	 * draft requires before the core's calls. */
	if (t->optans_waiting)
		rpcrdma__xclnt_optans_pump(t);
	if (t->want_writable && rpcrdma__xclnt_can_send(t)) {
		t->want_writable = false;
		if (t->cb->writable)
			t->cb->writable(t->cb_ctx);
	}
}

void rpcrdma__xclnt_on_later(struct rpcrdma__timer *tm)
{
	struct rpcrdma__xclnt *t = tm->ctx;

	rpcrdma__xclnt_finish_down(t);
	rpcrdma__xclnt_maybe_writable(t);
}

/* Work that may call the core: now, or right after the current op. */
static void kick_later(struct rpcrdma__xclnt *t)
{
	if (t->api_depth) {
		rpcrdma__timer_start(t->dev.loop, &t->later, 0, rpcrdma__xclnt_on_later, t);
		return;
	}
	rpcrdma__xclnt_finish_down(t);
	rpcrdma__xclnt_maybe_writable(t);
}

/* Whether the connection @x was sent on still has its endpoint: on a
 * provider whose revocation does not stop transfers under way, the
 * responder may still be reading or writing @x's memory through it. */
static bool call_conn_open(const struct rpcrdma__xclnt *t, const struct rpcrdma__xreq *x)
{
	return t->conn.pc && x->gen == t->conn.gen;
}

static void req_complete(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x);

static void req_fenced(struct rpcrdma__xfence *f)
{
	struct rpcrdma__xreq *x =
	    (struct rpcrdma__xreq *)((char *)f - offsetof(struct rpcrdma__xreq, fence));
	struct rpcrdma__xclnt *t = x->t;

	if (x->lent && x->send_busy) {
		/* ORDER: the Send still reads the caller's memory; the call
		 * ends when it completes (rpcrdma__xclnt_send_released). */
		x->fence_after_send = true;
		return;
	}
	x->fence_after_send = false;
	t->fences_live--;
	if (x->fence_t0) {
		RPCRDMA__TRACE(RPCRDMA_TRACE_CHUNK, RPCRDMA_TEV_REVOKE, t->conn.id, x->xid,
			       x->ngrants, (rpcrdma__trace_now_ns() - x->fence_t0) / 1000,
			       "%u grants revoked, fence took %llu us", x->ngrants,
			       (unsigned long long)(rpcrdma__trace_now_ns() - x->fence_t0) / 1000);
		x->fence_t0 = 0;
	}
	if (x->fence.refused)
		x->close_fence = true; /* and the provider keeps it unreachable */
	if (x->close_fence && call_conn_open(t, x)) {
		/* ORDER: revoked (or refused), yet an RDMA Read or Write the
		 * responder started may still be moving the caller's bytes:
		 * the call ends once the endpoint is closed (finish_down). */
		if (t->conn.state != RPCRDMA__XCONN_DOWN)
			(void)rpcrdma__provider_disconnect(t->conn.pc);
		if (!x->awaiting_close) {
			x->awaiting_close = true;
			x->close_next = t->closing;
			t->closing = x;
		}
		kick_later(t);
		return;
	}
	req_complete(t, x);
}

/* The end of a fenced call: the core hears of it, and @x is let go.
 * WARNING: @x may be freed on return. */
static void req_complete(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x)
{
	struct rpcrdma__creq *creq = x->creq;

	/* ORDER: every grant of the call is revoked and nothing the
	 * responder started can still move; the responder can no longer
	 * reach the caller's memory, so it may be handed back. */
	rpcrdma__xclnt_req_drop_own(x);
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

			/* ORDER: revoked, so the bounce buffers hold what the
			 * responder wrote and nothing more can come. */
			for (uint32_t i = 0; i < x->nwch; i++) {
				if (x->wch_bounced & (1u << i) && x->wch[i].written)
					memcpy(x->wch[i].buf,
					       x->bounce[RPCRDMA__XPRT_MAX_DDP + i].addr,
					       (size_t)x->wch[i].written);
			}

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
	rpcrdma__xclnt_req_try_free(t, x);
	kick_later(t);
}

void rpcrdma__xclnt_complete_closed(struct rpcrdma__xclnt *t)
{
	struct rpcrdma__xreq *x, *ready = NULL;

	/* Gathered first, completed after: a completion may call the core,
	 * which may fence (and park) other calls meanwhile. */
	for (struct rpcrdma__xreq **pp = &t->closing; (x = *pp);) {
		if (call_conn_open(t, x)) {
			pp = &x->close_next;
			continue;
		}
		*pp = x->close_next;
		x->close_next = ready;
		ready = x;
	}
	while ((x = ready)) {
		ready = x->close_next;
		x->close_next = NULL;
		x->awaiting_close = false;
		req_complete(t, x); /* WARNING: may free @x */
	}
}

void rpcrdma__xclnt_send_released(struct rpcrdma__xreq *x)
{
	if (x->fence_after_send && !x->send_busy) {
		x->fence_after_send = false;
		req_fenced(&x->fence);
	}
}

/* Revokes every grant of @x; req_fenced() follows, maybe at once.
 * WARNING: @x may be freed on return. */
void rpcrdma__xclnt_req_fence(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x)
{
	/* A fence waiting for its Send (req_fenced) is still live. */
	if (!x->fence.pending && !x->fence_after_send)
		t->fences_live++;
	if (!x->fence.pending && x->ngrants && RPCRDMA__TRACE_ON(RPCRDMA_TRACE_CHUNK))
		x->fence_t0 = rpcrdma__trace_now_ns();
	/*
	 * A call the core gave up on while it was out (time-out, cancel)
	 * has no word from the responder on its grants: where revoking does
	 * not stop a transfer under way, only closing the connection does
	 * (req_fenced).  An answer (a reply, RDMA_ERROR, even one we refuse)
	 * comes after the responder's own Reads and Writes; one that does
	 * not is a hostile responder's, which revoking cannot stop on such a
	 * provider either (docs/security.md).  A Send never posted
	 * (send_failed: DEAD) gave the responder no handle.
	 */
	if (!x->close_fence && x->ngrants && call_conn_open(t, x) &&
	    !(t->dev.prov->caps.flags & RPCRDMA_PCAP_REVOKE_FENCES_INFLIGHT) &&
	    x->state == XREQ_SENT && !x->creq)
		x->close_fence = true;
	/* A revocation refused (counted in the fence) is handled there too:
	 * RFC 8166 5.5.4, memory we could not fence is fenced by closing the
	 * connection, before the call completes. */
	rpcrdma__xfence_start(&x->fence, t->conn.dev, x->grants, x->ngrants, req_fenced, NULL);
}

/* The call's Send is posted: it holds a credit and a send slot, and its
 * reply is looked up by XID from now on. */
void rpcrdma__xclnt_req_posted(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x)
{
	x->gen = t->conn.gen;
	x->send_busy = true;
	t->conn.sq_used++;
	x->state = XREQ_SENT;
	rpcrdma__xclnt_tab_add(t, x);
	rpcrdma__credits_sent(&t->cr);
}

/* Undoes call_begin and the grants of a failed rpcrdma__xclnt_call_send. */
void rpcrdma__xclnt_send_failed(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x)
{
	if (x->creq) {
		x->creq->tpriv = NULL;
		x->creq = NULL;
	}
	x->state = XREQ_DEAD;
	rpcrdma__xclnt_req_fence(t, x);
}

/*
 * Whether the core must wait for @x's revocation before handing the call's
 * memory back: a REVOKE completion still to come (verbs posts an
 * invalidation; a full send queue defers it), or the completion of a Send
 * that reads the caller's memory (lend_items), told by cb->aborted.
 */
static int abort_wait(struct rpcrdma__xclnt *t, struct rpcrdma__xreq *x, struct rpcrdma__creq *creq)
{
	if ((!x->fence.pending && !(x->lent && x->send_busy) && !x->awaiting_close) ||
	    !t->cb->aborted)
		return 0;
	x->abort_creq = creq;
	t->st.abort_waits++;
	return 1;
}

int rpcrdma__xclnt_call_abort(struct rpcrdma__xclnt *t, struct rpcrdma__creq *creq)
{
	struct rpcrdma__xreq *x = creq ? creq->tpriv : NULL;
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
		rpcrdma__xclnt_req_fence(t, x);
		if (!x->in_table) {
			/* Refused with ERR_VERS, waiting for its first Send to
			 * complete (resend_pending): that answer freed its
			 * credit, so it is no orphan, and the Send completion
			 * lets it go. */
			return abort_wait(t, x, creq);
		}
		t->norphans++;
		/*
		 * Credits held only by calls the core gave up on, and by our
		 * properties exchange, which no core waits for, may never
		 * come back (a responder that never answers), and RFC 8166
		 * 4.3.1 forbids sending past them.  Then the connection is
		 * cut, as the Linux client does on a time-out: a new one
		 * starts from one credit and the core sends again.
		 */
		if (t->norphans + t->props_out >= t->cr.in_flight &&
		    !rpcrdma__credits_available(&t->cr) && t->conn.pc &&
		    t->conn.state == RPCRDMA__XCONN_UP) {
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
	rpcrdma__xclnt_req_try_free(t, x);
	return 0;
}

int rpcrdma__xclnt_op_call_abort(struct rpcrdma__clnt_transport *tt, struct rpcrdma__creq *creq)
{
	struct rpcrdma__xclnt *t = xclnt_of(tt);
	int rc;

	t->api_depth++;
	rc = rpcrdma__xclnt_call_abort(t, creq);
	t->api_depth--;
	return rc;
}
