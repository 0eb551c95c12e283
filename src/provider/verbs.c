/*
 * The "verbs" provider: the RDMA provider interface (provider.h) on
 * librdmacm and libibverbs (InfiniBand, RoCE; measured on Soft-RoCE, rxe, in
 * the project's lab, tests/lab/README.md).  This file owns the instance (an
 * RDMA CM event channel, its own context on the device that serves its
 * address, a protection domain, a completion channel, one pollable fd) and,
 * per connection, the reliable-connected QP, that QP's own completion queue
 * and the slots of posted operations.  verbs_cm.c drives connections through
 * RDMA CM; verbs_mem.c owns registrations and remote-access grants.
 *
 * Normal operation.  Each posted operation takes a slot (struct vb_op) from
 * its connection: send slots for Sends, Reads and Writes (send_depth), receive
 * slots (recv_depth) and memory slots for window binds and invalidations
 * (VB_MEM_OPS).  The slot is the work request id; a Read or Write needs one
 * work request per remote segment and counts them down in its slot.  The send
 * queue holds every slot's worst case, so posting never finds it full.  The
 * QP is ours, not librdmacm's (no rdma_create_qp): it lives on our own device
 * context, so that the context's async events and completion channel are
 * this instance's alone, and we move it through INIT, RTR and RTS ourselves
 * with rdma_init_qp_attr.  QPs exist from conn_create (the id is bound to the
 * instance's address first) or from CONNECT_REQUEST, so receives go straight
 * to the hardware from the start.  A connection's CQ is polled only once its
 * ESTABLISHED event is out, which is how no completion ever precedes it.
 * One fd serves the owner: an epoll set over the CM channel, the completion
 * channel and the device's async event fd, all non-blocking.  CQs whose
 * notification fired sit on a "hot" list until polled empty and re-armed.
 *
 * A wildcard address gives a listen-only instance (provider.h, "Every
 * device"; open_listen_only): only the event channel, the epoll set and the
 * inbox.  Its requests make no QP and take no slots; they are handed to an
 * instance on their device (verbs_cm.c, conn_handoff checks the request's
 * device, not the instance's).
 *
 * Recovery.  A connection ends (peer or local disconnect, a CM error, an error
 * completion, which means its QP went to the error state, or destroy) in one
 * synchronous step, conn_retire: the QP is moved to ERR, the completions
 * already in its CQ are reported, the windows bound on it are deallocated,
 * the QP is destroyed (after which the device touches none of its buffers),
 * the CQ is drained again and every slot still busy is reported FLUSHED by
 * hand, then the CQ is destroyed.  So all of a connection's completions
 * precede its terminal event without waiting for the device's own flushes,
 * and nothing refers to its slots afterwards.  An error completion also makes
 * us send a disconnect, so the peer, whose QP may still be fine, learns it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "provider/verbs.h"

#define VB_DEF_SEND_DEPTH 32u
#define VB_DEF_RECV_DEPTH 64u
#define VB_DEF_READ_DEPTH 16u
#define VB_CQ_BATCH 16
/* RNR timer code 14: the peer's Send retries after 1.28 ms when we have no
 * receive posted (code 0, the CM's default, would be 655 ms). */
#define VB_MIN_RNR_TIMER 14

static enum rpcrdma_prov_status status_of(enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_SUCCESS:
		return RPCRDMA_PST_SUCCESS;
	case IBV_WC_WR_FLUSH_ERR:
		return RPCRDMA_PST_FLUSHED;
	case IBV_WC_REM_ACCESS_ERR:
		return RPCRDMA_PST_REMOTE_ACCESS;
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_INV_RD_REQ_ERR:
	case IBV_WC_REM_ABORT_ERR:
		return RPCRDMA_PST_REMOTE_OP;
	case IBV_WC_LOC_LEN_ERR:
		return RPCRDMA_PST_LOCAL_LENGTH;
	case IBV_WC_LOC_PROT_ERR:
	case IBV_WC_LOC_ACCESS_ERR:
	case IBV_WC_MW_BIND_ERR:
		return RPCRDMA_PST_LOCAL_PROTECTION;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return RPCRDMA_PST_RNR_RETRY;
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RESP_TIMEOUT_ERR:
	case IBV_WC_BAD_RESP_ERR:
	case IBV_WC_FATAL_ERR:
		return RPCRDMA_PST_TRANSPORT;
	default:
		return RPCRDMA_PST_OTHER;
	}
}

static int errno_of(enum ibv_wc_status s)
{
	switch (status_of(s)) {
	case RPCRDMA_PST_SUCCESS:
		return 0;
	case RPCRDMA_PST_FLUSHED:
		return -ECONNRESET;
	case RPCRDMA_PST_REMOTE_ACCESS:
	case RPCRDMA_PST_LOCAL_PROTECTION:
		return -EACCES;
	case RPCRDMA_PST_LOCAL_LENGTH:
		return -EMSGSIZE;
	case RPCRDMA_PST_RNR_RETRY:
	case RPCRDMA_PST_TRANSPORT:
		return -ETIMEDOUT;
	case RPCRDMA_PST_REMOTE_OP:
		return -EREMOTEIO;
	case RPCRDMA_PST_OTHER:
		break;
	}
	return -EIO;
}

/* The event queue grows instead of refusing: an event that cannot be queued
 * is a broken promise to the owner, so running out of memory there fails the
 * instance. */
void rpcrdma__vb_fail(struct vb_prov *p, int err)
{
	if (!p->failed)
		p->failed = err < 0 ? err : -EIO;
}

void rpcrdma__vb_emit(struct vb_prov *p, const struct rpcrdma_prov_event *ev)
{
	if (rpcrdma__provider_evq_push(&p->q, ev))
		rpcrdma__vb_fail(p, -ENOMEM);
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return errno_neg();
	return 0;
}

/*
 * Private data from a CM event.  InfiniBand CM messages carry fixed-size
 * private data, zero-padded: what lies beyond RPCRDMA_PROV_PRIVATE_MAX counts
 * as dropped only if it is not all zeros.
 */
void rpcrdma__vb_copy_private(struct rpcrdma_prov_event *ev, const uint8_t *data, size_t len)
{
	if (!data)
		len = 0;
	if (len > RPCRDMA_PROV_PRIVATE_MAX) {
		for (size_t i = RPCRDMA_PROV_PRIVATE_MAX; i < len; i++)
			if (data[i])
				ev->flags |= RPCRDMA_PEVF_PRIVATE_TRUNCATED;
		len = RPCRDMA_PROV_PRIVATE_MAX;
	}
	if (len)
		memcpy(ev->private_data, data, len);
	ev->private_len = (uint32_t)len;
}

/*
 * Slots.
 */
struct vb_op *rpcrdma__vb_op_get(struct vb_conn *c, enum vb_pool pool)
{
	struct vb_op *o = c->free[pool];

	if (!o)
		return NULL;
	c->free[pool] = o->next;
	o->next = NULL;
	o->in_use = true;
	o->pending = 0;
	o->status = RPCRDMA_PST_SUCCESS;
	o->error = 0;
	o->byte_len = o->flags = o->inv_handle = 0;
	o->mw = NULL;
	o->mr = NULL;
	return o;
}

void rpcrdma__vb_op_put(struct vb_conn *c, struct vb_op *o)
{
	o->in_use = false;
	o->ctx = NULL;
	o->next = c->free[o->pool];
	c->free[o->pool] = o;
}

/* The slot's last work request completed. */
static void op_finish(struct vb_conn *c, struct vb_op *o)
{
	struct vb_prov *p = c->p;
	struct rpcrdma_prov_event ev;

	if (o->op == VB_OP_BIND) {
		if (o->status != RPCRDMA_PST_SUCCESS && o->status != RPCRDMA_PST_FLUSHED)
			p->st.errors++;
		rpcrdma__vb_op_put(c, o);
		return;
	}
	if (o->op == RPCRDMA_POP_REVOKE) {
		rpcrdma__vb_revoke_done(p, o);
		rpcrdma__vb_op_put(c, o);
		return;
	}
	memset(&ev, 0, sizeof(ev));
	ev.type = RPCRDMA_PEV_COMPLETION;
	ev.conn = c->destroyed ? NULL : &c->base;
	ev.ctx = o->ctx;
	ev.op = (enum rpcrdma_prov_op)o->op;
	ev.status = o->status;
	/* A message that arrived on a connection never reported up cannot
	 * be reported before ESTABLISHED: it is dropped, as flushed. */
	if (!c->was_up && ev.status == RPCRDMA_PST_SUCCESS)
		ev.status = RPCRDMA_PST_FLUSHED;
	ev.error = o->error;
	if (ev.status == RPCRDMA_PST_SUCCESS) {
		ev.byte_len = o->byte_len;
		ev.flags = o->flags;
		ev.invalidated_handle = o->inv_handle;
	}
	if (ev.status == RPCRDMA_PST_FLUSHED)
		p->st.flushed++;
	else if (ev.status != RPCRDMA_PST_SUCCESS)
		p->st.errors++;
	rpcrdma__vb_op_put(c, o);
	rpcrdma__vb_emit(p, &ev);
}

static void wc_handle(struct vb_conn *c, const struct ibv_wc *wc)
{
	struct vb_op *o = (struct vb_op *)(uintptr_t)wc->wr_id;
	enum rpcrdma_prov_status st = status_of(wc->status);

	if (!o || o < c->ops || o >= c->ops + c->nops || !o->in_use || !o->pending) {
		/* Not a slot we think is busy: say so rather than corrupt it. */
		c->p->st.errors++;
		return;
	}
	if (st != RPCRDMA_PST_SUCCESS) {
		if (o->status == RPCRDMA_PST_SUCCESS) {
			o->status = st;
			o->error = errno_of(wc->status);
		}
		/* Any error, a flush we did not cause included, means the QP
		 * is in the error state: the connection is over. */
		if (!c->closing && !c->qp_failed) {
			c->qp_failed = true;
			c->fail_err = errno_of(wc->status);
		}
	} else if (o->op == RPCRDMA_POP_RECV) {
		o->byte_len = wc->byte_len;
		if ((wc->wc_flags & IBV_WC_WITH_INV) ||
		    (c->p->inv_as_csum && (wc->wc_flags & IBV_WC_IP_CSUM_OK))) {
			o->flags |= RPCRDMA_PEVF_INVALIDATED;
			o->inv_handle = wc->invalidated_rkey;
			rpcrdma__vb_remote_invalidated(c, wc->invalidated_rkey);
		}
	}
	if (--o->pending == 0)
		op_finish(c, o);
}

/* Reads @c's CQ until it is empty.  Returns the entries handled. */
static int cq_drain(struct vb_conn *c)
{
	struct ibv_wc wc[VB_CQ_BATCH];
	int n, total = 0;

	while (c->cq && (n = ibv_poll_cq(c->cq, VB_CQ_BATCH, wc)) > 0) {
		for (int i = 0; i < n; i++)
			wc_handle(c, &wc[i]);
		total += n;
	}
	return total;
}

static void hot_add(struct vb_conn *c)
{
	if (!c->hot && c->cq) {
		rpcrdma__list_add_tail(&c->p->hot, &c->hot_node);
		c->hot = true;
	}
}

static void hot_del(struct vb_conn *c)
{
	if (c->hot) {
		rpcrdma__list_del(&c->hot_node);
		c->hot = false;
	}
}

/* Ends @c's QP: see "Recovery" at the top. */
void rpcrdma__vb_conn_retire(struct vb_conn *c)
{
	c->closing = true;
	hot_del(c);
	if (c->qp) {
		struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};

		(void)ibv_modify_qp(c->qp, &a, IBV_QP_STATE);
		cq_drain(c);
		rpcrdma__vb_drop_windows(c);
		if (ibv_destroy_qp(c->qp))
			c->p->st.errors++;
		c->qp = NULL;
	}
	cq_drain(c);
	rpcrdma__vb_drop_windows(c);
	for (unsigned int i = 0; i < c->nops; i++) {
		struct vb_op *o = &c->ops[i];

		if (!o->in_use)
			continue;
		if (o->status == RPCRDMA_PST_SUCCESS)
			o->status = RPCRDMA_PST_FLUSHED;
		o->pending = 0;
		op_finish(c, o);
	}
	if (c->cq) {
		if (ibv_destroy_cq(c->cq))
			c->p->st.errors++;
		c->cq = NULL;
	}
	c->base.state = RPCRDMA_PCONN_CLOSED;
}

void rpcrdma__vb_conn_end(struct vb_conn *c, enum rpcrdma_prov_event_type type, int error,
			  const uint8_t *data, size_t len)
{
	struct rpcrdma_prov_event ev;

	if (c->base.state == RPCRDMA_PCONN_CLOSED)
		return;
	switch (type) {
	case RPCRDMA_PEV_REJECTED:
		c->p->st.conns_rejected++;
		break;
	case RPCRDMA_PEV_CONNECT_ERROR:
		c->p->st.conns_failed++;
		break;
	default:
		c->p->st.conns_disconnected++;
		break;
	}
	rpcrdma__vb_conn_retire(c);
	if (c->destroyed)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.conn = &c->base;
	ev.ctx = c->base.ctx;
	ev.error = error;
	rpcrdma__vb_copy_private(&ev, data, len);
	rpcrdma__vb_emit(c->p, &ev);
}

/* The QP broke (an error completion or an async error): tell the peer,
 * whose QP may not know yet, and end the connection. */
static void conn_fail(struct vb_conn *c, int err)
{
	enum rpcrdma_prov_conn_state s = c->base.state;

	if (s == RPCRDMA_PCONN_CLOSED || c->closing)
		return;
	if (s == RPCRDMA_PCONN_REQUESTED) {
		(void)rdma_reject(c->id, NULL, 0);
		rpcrdma__vb_conn_retire(c);
		return;
	}
	if (s == RPCRDMA_PCONN_IDLE) {
		rpcrdma__vb_conn_retire(c);
		return;
	}
	(void)rdma_disconnect(c->id);
	if (s == RPCRDMA_PCONN_CONNECTING && !c->passive)
		rpcrdma__vb_conn_end(c, RPCRDMA_PEV_CONNECT_ERROR, err, NULL, 0);
	else
		rpcrdma__vb_conn_end(c, RPCRDMA_PEV_DISCONNECTED, err, NULL, 0);
}

/* Reports what @c's CQ holds now (only once ESTABLISHED is out). */
void rpcrdma__vb_reap(struct vb_conn *c)
{
	if (c->base.state != RPCRDMA_PCONN_ESTABLISHED || c->closing)
		return;
	cq_drain(c);
	if (c->qp_failed)
		conn_fail(c, c->fail_err);
}

struct rpcrdma_prov_conn_attr rpcrdma__vb_clamp_attr(const struct vb_prov *p,
						     const struct rpcrdma_prov_conn_attr *in)
{
	const struct rpcrdma_prov_caps *caps = &p->base.caps;
	struct rpcrdma_prov_conn_attr a = {0};

	if (in)
		a = *in;
	if (!a.send_depth)
		a.send_depth = VB_DEF_SEND_DEPTH;
	if (!a.recv_depth)
		a.recv_depth = VB_DEF_RECV_DEPTH;
	if (!a.read_depth)
		a.read_depth = VB_DEF_READ_DEPTH;
	if (listen_only(p))
		return a; /* the instance it is handed to clamps */
	if (a.send_depth > caps->max_send_depth)
		a.send_depth = caps->max_send_depth;
	if (a.recv_depth > caps->max_recv_depth)
		a.recv_depth = caps->max_recv_depth;
	if (a.read_depth > caps->max_read_depth)
		a.read_depth = caps->max_read_depth;
	if (a.read_depth > UINT8_MAX)
		a.read_depth = UINT8_MAX; /* the CM carries 8 bits */
	return a;
}

struct vb_conn *rpcrdma__vb_conn_alloc(struct vb_prov *p, const struct rpcrdma_prov_conn_attr *attr,
				       void *ctx)
{
	struct vb_conn *c = calloc(1, sizeof(*c));
	unsigned int ns, nr;

	if (!c)
		return NULL;
	c->kind = VB_KIND_CONN;
	c->p = p;
	c->base.prov = &p->base;
	c->base.ctx = ctx;
	c->base.attr = rpcrdma__vb_clamp_attr(p, attr);
	c->base.state = RPCRDMA_PCONN_IDLE;
	ns = c->base.attr.send_depth;
	nr = c->base.attr.recv_depth;
	/* A listen-only instance's request never posts: no slots. */
	c->nops = listen_only(p) ? 0 : ns + nr + (p->use_mw ? VB_MEM_OPS : 0);
	c->ops = c->nops ? calloc(c->nops, sizeof(*c->ops)) : NULL;
	if (c->nops && !c->ops) {
		free(c);
		return NULL;
	}
	for (unsigned int i = c->nops; i-- > 0;) {
		struct vb_op *o = &c->ops[i];

		o->conn = c;
		o->pool = i < ns ? VB_POOL_SEND : i < ns + nr ? VB_POOL_RECV : VB_POOL_MEM;
		rpcrdma__vb_op_put(c, o);
	}
	rpcrdma__list_init(&c->node);
	rpcrdma__list_init(&c->hot_node);
	rpcrdma__list_init(&c->grants);
	rpcrdma__list_add_tail(&p->conns, &c->node);
	p->st.conns_live++;
	p->st.conns_created++;
	return c;
}

/* The connection's CQ and QP, the QP moved to INIT so receives can be
 * posted at once.  On failure what was made stays for conn_retire. */
int rpcrdma__vb_qp_create(struct vb_conn *c)
{
	struct vb_prov *p = c->p;
	const struct rpcrdma_prov_caps *caps = &p->base.caps;
	uint32_t swr = c->base.attr.send_depth * VB_WR_PER_OP + (p->use_mw ? VB_MEM_OPS : 0);
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	int mask = 0, ret;

	c->cq = ibv_create_cq(p->ctx, (int)(swr + c->base.attr.recv_depth), c, p->cch, 0);
	if (!c->cq)
		return errno_neg();
	ret = ibv_req_notify_cq(c->cq, 0);
	if (ret)
		return ret_neg(ret);
	c->armed = true;
	memset(&ia, 0, sizeof(ia));
	ia.qp_context = c;
	ia.send_cq = c->cq;
	ia.recv_cq = c->cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = swr;
	ia.cap.max_recv_wr = c->base.attr.recv_depth;
	ia.cap.max_send_sge = caps->max_send_sge;
	ia.cap.max_recv_sge = caps->max_recv_sge;
	ia.cap.max_inline_data = caps->max_inline;
	c->qp = ibv_create_qp(p->pd, &ia);
	if (!c->qp)
		return errno_neg();
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	if (rdma_init_qp_attr(c->id, &a, &mask))
		return errno_neg();
	/* Remote access is decided by the windows, not the QP. */
	a.qp_access_flags =
	    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	mask |= IBV_QP_ACCESS_FLAGS;
	return ret_neg(ibv_modify_qp(c->qp, &a, mask));
}

/*
 * INIT -> RTR -> RTS from what the CM negotiated.  The passive side, which
 * moves its QP before rdma_accept, overrides the Read depths with what it is
 * about to accept (ird, ord >= 0).  The agreed ORD ends up in attr.
 */
int rpcrdma__vb_qp_ready(struct vb_conn *c, int ird, int ord)
{
	struct ibv_qp_attr a;
	int mask = 0, ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (rdma_init_qp_attr(c->id, &a, &mask))
		return errno_neg();
	if (ird >= 0)
		a.max_dest_rd_atomic = (uint8_t)ird;
	a.min_rnr_timer = VB_MIN_RNR_TIMER;
	mask |= IBV_QP_MIN_RNR_TIMER;
	ret = ibv_modify_qp(c->qp, &a, mask);
	if (ret)
		return ret_neg(ret);
	memset(&a, 0, sizeof(a));
	mask = 0;
	a.qp_state = IBV_QPS_RTS;
	if (rdma_init_qp_attr(c->id, &a, &mask))
		return errno_neg();
	if (ord >= 0)
		a.max_rd_atomic = (uint8_t)ord;
	ret = ibv_modify_qp(c->qp, &a, mask);
	if (ret)
		return ret_neg(ret);
	c->base.attr.read_depth = a.max_rd_atomic;
	return 0;
}

void rpcrdma__vb_conn_free(struct vb_conn *c)
{
	struct vb_prov *p = c->p;

	c->destroyed = true;
	/* No queued event may name it once it is freed (provider.h). */
	rpcrdma__provider_evq_scrub(&p->q, &c->base, NULL);
	switch (c->base.state) {
	case RPCRDMA_PCONN_REQUESTED:
		if (c->id)
			(void)rdma_reject(c->id, NULL, 0);
		break;
	case RPCRDMA_PCONN_CONNECTING:
	case RPCRDMA_PCONN_ESTABLISHED:
		(void)rdma_disconnect(c->id);
		break;
	default:
		break;
	}
	if (c->base.state != RPCRDMA_PCONN_CLOSED || c->qp || c->cq)
		rpcrdma__vb_conn_retire(c);
	if (c->id)
		(void)rdma_destroy_id(c->id);
	hot_del(c);
	rpcrdma__list_del(&c->node);
	p->st.conns_live--;
	free(c->ops);
	free(c);
}

void rpcrdma__vb_on_established(struct vb_conn *c, const uint8_t *data, size_t len)
{
	struct rpcrdma_prov_event ev;

	if (c->base.state != RPCRDMA_PCONN_CONNECTING)
		return;
	c->base.state = RPCRDMA_PCONN_ESTABLISHED;
	c->was_up = true;
	c->p->st.conns_established++;
	memset(&ev, 0, sizeof(ev));
	ev.type = RPCRDMA_PEV_ESTABLISHED;
	ev.conn = &c->base;
	ev.ctx = c->base.ctx;
	rpcrdma__vb_copy_private(&ev, c->passive ? NULL : data, len);
	rpcrdma__vb_emit(c->p, &ev);
	/* Whatever arrived before ESTABLISHED waits in the CQ: look now. */
	hot_add(c);
}

/* Reads the completion channel: CQs that fired go hot.  Returns events
 * read, at most @max: a channel known to be ready (vb_fill) is read once,
 * and the next look at the epoll set says whether more came, which saves
 * the read that would only say EAGAIN. */
static int cq_events_read(struct vb_prov *p, int max)
{
	int n = 0;

	while (n < max) {
		struct ibv_cq *cq;
		void *cctx;
		struct vb_conn *c;

		if (ibv_get_cq_event(p->cch, &cq, &cctx)) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				rpcrdma__vb_fail(p, errno_neg());
			return n;
		}
		ibv_ack_cq_events(cq, 1);
		n++;
		c = cctx;
		if (!c)
			continue;
		c->armed = false;
		/* Before ESTABLISHED the CQ waits; on_established looks. */
		if (c->base.state == RPCRDMA_PCONN_ESTABLISHED)
			hot_add(c);
		else
			p->st.parked++;
	}
	return n;
}

/* Polls the first hot CQ once.  Returns 1 if that did anything. */
static int hot_poll_one(struct vb_prov *p)
{
	struct ibv_wc wc[VB_CQ_BATCH];
	struct vb_conn *c;
	int n;

	if (rpcrdma__list_empty(&p->hot))
		return 0;
	c = rpcrdma__container_of(p->hot.next, struct vb_conn, hot_node);
	n = ibv_poll_cq(c->cq, VB_CQ_BATCH, wc);
	if (n < 0) {
		rpcrdma__vb_fail(p, -EIO);
		return 0;
	}
	if (n > 0) {
		for (int i = 0; i < n; i++)
			wc_handle(c, &wc[i]);
		/* Round robin between busy connections. */
		rpcrdma__list_del(&c->hot_node);
		rpcrdma__list_add_tail(&p->hot, &c->hot_node);
		if (c->qp_failed)
			conn_fail(c, c->fail_err);
		return 1;
	}
	if (!c->armed) {
		/* ORDER: arm, then poll again (the next round) before
		 * trusting the CQ to be empty. */
		int ret = ibv_req_notify_cq(c->cq, 0);

		if (ret) {
			rpcrdma__vb_fail(p, ret_neg(ret));
			return 0;
		}
		c->armed = true;
		return 1;
	}
	hot_del(c);
	return 1;
}

static int async_read_one(struct vb_prov *p)
{
	struct ibv_async_event ae;
	enum ibv_event_type type;
	struct vb_conn *c = NULL;

	if (ibv_get_async_event(p->ctx, &ae)) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			rpcrdma__vb_fail(p, errno_neg());
		return 0;
	}
	type = ae.event_type;
	switch (type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
		c = ae.element.qp ? ae.element.qp->qp_context : NULL;
		break;
	case IBV_EVENT_CQ_ERR:
		c = ae.element.cq ? ae.element.cq->cq_context : NULL;
		break;
	default:
		break;
	}
	/* Acknowledged before handling: destroying the QP waits for it. */
	ibv_ack_async_event(&ae);
	switch (type) {
	case IBV_EVENT_COMM_EST:
		/* Data before the CM's RTU: let the CM call it established. */
		if (c && c->id && c->base.state == RPCRDMA_PCONN_CONNECTING)
			(void)rdma_notify(c->id, IBV_EVENT_COMM_EST);
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_CQ_ERR:
		p->st.errors++;
		if (c)
			conn_fail(c, type == IBV_EVENT_QP_ACCESS_ERR ? -EACCES : -EIO);
		break;
	case IBV_EVENT_DEVICE_FATAL:
		rpcrdma__vb_fail(p, -EIO);
		break;
	default:
		/* Port and path events: connections fail on their own. */
		break;
	}
	return 1;
}

/*
 * The vtable.
 */
static int vb_fd(struct rpcrdma_provider *b)
{
	return prov_of(b)->epfd;
}

#define VB_SOURCES_EVERY 64u

/* Marks the fds of the epoll set that are readable now (see sources_due). */
static void sources_check(struct vb_prov *p)
{
	struct epoll_event ev[4];
	int n = epoll_wait(p->epfd, ev, 4, 0);

	p->fills_since_sources = 0;
	if (n < 0) {
		/* Could not tell (EINTR): read them all. */
		p->cm_ready = true;
		p->cch_ready = p->async_ready = !listen_only(p);
		return;
	}
	for (int i = 0; i < n; i++) {
		int fd = ev[i].data.fd;

		if (fd == p->ec->fd)
			p->cm_ready = true;
		else if (p->cch && fd == p->cch->fd)
			p->cch_ready = true;
		else if (p->ctx && fd == p->ctx->async_fd)
			p->async_ready = true;
		/* The inbox's eventfd: its signaled flag says it for free. */
	}
}

static bool vb_fill(void *ctx)
{
	struct vb_prov *p = ctx;

	/* Not when the hot list has just emptied: the CQ is armed then, and
	 * whatever comes makes the set readable for the owner's epoll, which
	 * wakes us with the sources due. */
	if (p->sources_due || ++p->fills_since_sources >= VB_SOURCES_EVERY) {
		bool woken = p->sources_due;

		p->sources_due = false;
		/* What wakes a connection's loop is nearly always the
		 * completion channel: read it first, and ask the set only when
		 * it had nothing.  That saves a system call per wake-up; a
		 * source left unread keeps the set readable, so the owner's
		 * next wait returns at once and comes back here. */
		if (woken && !listen_only(p) && cq_events_read(p, 1))
			return true;
		sources_check(p);
	}
	if (p->cm_ready) {
		if (rpcrdma__vb_cm_read_one(p))
			return true;
		p->cm_ready = false;
	}
	if (!listen_only(p)) {
		if (p->cch_ready) {
			p->cch_ready = false;
			if (cq_events_read(p, 1))
				return true;
		}
		if (hot_poll_one(p))
			return true;
		if (p->async_ready) {
			if (async_read_one(p))
				return true;
			p->async_ready = false;
		}
	}
	return rpcrdma__vb_inbox_drain(p);
}

static void vb_announce(void *ctx, struct rpcrdma_prov_conn *c)
{
	(void)ctx;
	conn_of(c)->announced = true;
}

static int vb_poll(struct rpcrdma_provider *b, struct rpcrdma_prov_event *ev, unsigned int max)
{
	struct vb_prov *p = prov_of(b);
	const struct rpcrdma_prov_poll_state ps = {
	    &p->q, &p->st, &p->failed, &p->failed_reported, vb_fill, vb_announce, p,
	};

	int n = rpcrdma__provider_poll_loop(&ps, ev, max);

	/* Found nothing: the next poll looks at the sources first, also for
	 * owners that poll without trywait. */
	if (n <= 0)
		p->sources_due = true;
	return n;
}

static int vb_trywait(struct rpcrdma_provider *b)
{
	struct vb_prov *p = prov_of(b);

	p->sources_due = true; /* whatever wakes us next */
	if (p->failed)
		return p->failed_reported && !p->q.count ? -EIO : -EAGAIN;
	/* Everything else wakes the fd: CM and async events are queued on
	 * their fds, and a CQ off the hot list is armed. */
	if (p->q.count || !rpcrdma__list_empty(&p->hot) || p->cm_ready || p->cch_ready ||
	    p->async_ready)
		return -EAGAIN;
	return 0;
}

static void vb_stats(struct rpcrdma_provider *b, struct rpcrdma_prov_stats *out)
{
	struct vb_prov *p = prov_of(b);

	*out = p->st;
	out->key_redraws += p->keys.redraws;
}

static int vb_reg_mr(struct rpcrdma_provider *b, void *addr, size_t length,
		     struct rpcrdma_prov_mr **out)
{
	if (listen_only(prov_of(b)))
		return -EOPNOTSUPP; /* no protection domain */
	return rpcrdma__vb_reg_mr(b, addr, length, out);
}

static void vb_conn_destroy(struct rpcrdma_prov_conn *bc)
{
	rpcrdma__vb_conn_free(conn_of(bc));
}

static bool can_send(const struct vb_conn *c)
{
	return c->qp && c->base.state == RPCRDMA_PCONN_ESTABLISHED && !c->closing;
}

static void to_sge(struct ibv_sge *out, const struct rpcrdma_prov_sge *s)
{
	out->addr = (uintptr_t)s->addr;
	out->length = s->length;
	out->lkey = s->mr ? rpcrdma__container_of(s->mr, struct vb_mr, base)->mr->lkey : 0;
}

static int vb_post_recv(struct rpcrdma_prov_conn *bc, const struct rpcrdma_prov_sge *sgl,
			unsigned int nsge, void *ctx)
{
	struct vb_conn *c = conn_of(bc);
	int64_t total =
	    rpcrdma__provider_sgl_check(bc->prov, sgl, nsge, bc->prov->caps.max_recv_sge, false);
	struct ibv_sge sge[RPCRDMA_PROV_MAX_SGE];
	struct ibv_recv_wr wr, *bad = NULL;
	struct vb_op *o;
	int ret;

	if (total < 0)
		return (int)total;
	if (total > UINT32_MAX)
		return -EINVAL;
	if (bc->state == RPCRDMA_PCONN_CLOSED || c->closing || !c->qp)
		return -ENOTCONN;
	o = rpcrdma__vb_op_get(c, VB_POOL_RECV);
	if (!o)
		return -EAGAIN;
	for (unsigned int i = 0; i < nsge; i++)
		to_sge(&sge[i], &sgl[i]);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = (uintptr_t)o;
	wr.sg_list = sge;
	wr.num_sge = (int)nsge;
	ret = ibv_post_recv(c->qp, &wr, &bad);
	if (ret) {
		rpcrdma__vb_op_put(c, o);
		return ret == ENOMEM ? -EAGAIN : ret_neg(ret);
	}
	o->op = RPCRDMA_POP_RECV;
	o->ctx = ctx;
	o->pending = 1;
	c->p->st.recvs++;
	c->p->st.work_requests++;
	return 0;
}

static int vb_post_send(struct rpcrdma_prov_conn *bc, const struct rpcrdma_prov_sge *sgl,
			unsigned int nsge, unsigned int flags, uint32_t inv_handle, void *ctx)
{
	struct vb_conn *c = conn_of(bc);
	const struct rpcrdma_prov_caps *caps = &bc->prov->caps;
	bool inl = flags & RPCRDMA_PSEND_INLINE;
	struct ibv_sge sge[RPCRDMA_PROV_MAX_SGE];
	struct ibv_send_wr wr, *bad = NULL;
	struct vb_op *o;
	int64_t total;
	int ret;

	if (flags & ~(unsigned int)(RPCRDMA_PSEND_INVALIDATE | RPCRDMA_PSEND_INLINE))
		return -EINVAL;
	if ((flags & RPCRDMA_PSEND_INVALIDATE) && !(caps->flags & RPCRDMA_PCAP_SEND_INVALIDATE))
		return -EOPNOTSUPP;
	total = rpcrdma__provider_sgl_check(bc->prov, sgl, nsge, caps->max_send_sge, inl);
	if (total < 0)
		return (int)total;
	if (total > caps->max_msg_size || (inl && total > caps->max_inline))
		return -EINVAL;
	if (!can_send(c))
		return -ENOTCONN;
	o = rpcrdma__vb_op_get(c, VB_POOL_SEND);
	if (!o)
		return -EAGAIN;
	for (unsigned int i = 0; i < nsge; i++)
		to_sge(&sge[i], &sgl[i]);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = (uintptr_t)o;
	wr.sg_list = sge;
	wr.num_sge = (int)nsge;
	wr.opcode = IBV_WR_SEND;
	/* Inline: the device copies the payload at post time. */
	wr.send_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0);
	if (flags & RPCRDMA_PSEND_INVALIDATE) {
		wr.opcode = IBV_WR_SEND_WITH_INV;
		wr.invalidate_rkey = inv_handle;
	}
	ret = ibv_post_send(c->qp, &wr, &bad);
	if (ret) {
		rpcrdma__vb_op_put(c, o);
		return ret == ENOMEM ? -EAGAIN : ret_neg(ret);
	}
	o->op = RPCRDMA_POP_SEND;
	o->ctx = ctx;
	o->pending = 1;
	o->byte_len = (uint32_t)total;
	c->p->st.sends++;
	c->p->st.work_requests++;
	return 0;
}

/*
 * RDMA Read and Write: one work request per remote segment (verbs has no
 * remote scatter list), posted as one chain.
 */
static int post_rma(struct rpcrdma_prov_conn *bc, const struct rpcrdma_prov_sge *sgl,
		    unsigned int nsge, const struct rpcrdma_prov_rseg *segs, unsigned int nseg,
		    void *ctx, bool write)
{
	struct vb_conn *c = conn_of(bc);
	struct vb_prov *p = c->p;
	struct ibv_send_wr wr[VB_WR_PER_OP], *bad = NULL;
	struct ibv_sge sge[VB_WR_PER_OP][RPCRDMA_PROV_MAX_SGE];
	struct rpcrdma_prov_rma_cursor cur;
	struct rpcrdma_prov_rma_piece piece;
	unsigned int n = 0, posted;
	struct vb_op *o;
	int64_t total;
	int ret;

	total = rpcrdma__provider_rma_check(bc->prov, sgl, nsge, segs, nseg);
	if (total < 0)
		return (int)total;
	if (!can_send(c))
		return -ENOTCONN;
	o = rpcrdma__vb_op_get(c, VB_POOL_SEND);
	if (!o)
		return -EAGAIN;
	memset(&cur, 0, sizeof(cur));
	memset(wr, 0, sizeof(wr));
	while (n < VB_WR_PER_OP &&
	       rpcrdma__provider_rma_next(&cur, sgl, nsge, segs, nseg, bc->prov->caps.max_rdma_sge,
					  1, &piece)) {
		for (unsigned int i = 0; i < piece.nlocal; i++) {
			sge[n][i].addr = (uintptr_t)piece.local[i].iov_base;
			sge[n][i].length = (uint32_t)piece.local[i].iov_len;
			sge[n][i].lkey =
			    rpcrdma__container_of(piece.local_sge[i]->mr, struct vb_mr, base)
				->mr->lkey;
		}
		wr[n].wr_id = (uintptr_t)o;
		wr[n].sg_list = sge[n];
		wr[n].num_sge = (int)piece.nlocal;
		wr[n].opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
		wr[n].send_flags = IBV_SEND_SIGNALED;
		wr[n].wr.rdma.remote_addr = piece.remote[0].offset;
		wr[n].wr.rdma.rkey = piece.remote[0].handle;
		if (n)
			wr[n - 1].next = &wr[n];
		n++;
	}
	o->op = write ? RPCRDMA_POP_WRITE : RPCRDMA_POP_READ;
	o->ctx = ctx;
	o->byte_len = (uint32_t)total;
	ret = ibv_post_send(c->qp, wr, &bad);
	posted = ret ? (bad ? (unsigned int)(bad - wr) : 0) : n;
	if (ret && !posted) {
		rpcrdma__vb_op_put(c, o);
		return ret == ENOMEM ? -EAGAIN : ret_neg(ret);
	}
	if (ret) {
		/* Some pieces are on the wire and cannot be taken back: the
		 * operation completes, failed, when they do. */
		o->status = RPCRDMA_PST_OTHER;
		o->error = ret_neg(ret);
	}
	o->pending = posted;
	if (write)
		p->st.writes++;
	else
		p->st.reads++;
	p->st.work_requests += posted;
	return 0;
}

static int vb_post_read(struct rpcrdma_prov_conn *c, const struct rpcrdma_prov_sge *sgl,
			unsigned int nsge, const struct rpcrdma_prov_rseg *segs, unsigned int nseg,
			void *ctx)
{
	return post_rma(c, sgl, nsge, segs, nseg, ctx, false);
}

static int vb_post_write(struct rpcrdma_prov_conn *c, const struct rpcrdma_prov_sge *sgl,
			 unsigned int nsge, const struct rpcrdma_prov_rseg *segs, unsigned int nseg,
			 void *ctx)
{
	return post_rma(c, sgl, nsge, segs, nseg, ctx, true);
}

/*
 * Open and close.
 */
static void vb_close(struct rpcrdma_provider *b)
{
	struct vb_prov *p = prov_of(b);

	while (!rpcrdma__list_empty(&p->conns))
		rpcrdma__vb_conn_free(rpcrdma__container_of(p->conns.next, struct vb_conn, node));
	while (!rpcrdma__list_empty(&p->listeners))
		rpcrdma__vb_listener_close(
		    &rpcrdma__container_of(p->listeners.next, struct vb_listener, node)->base);
	rpcrdma__vb_inbox_close(p);
	rpcrdma__vb_mem_close(p);
	if (p->epfd >= 0)
		close(p->epfd);
	if (p->cch)
		(void)ibv_destroy_comp_channel(p->cch);
	if (p->pd)
		(void)ibv_dealloc_pd(p->pd);
	if (p->ctx)
		(void)ibv_close_device(p->ctx);
	if (p->anchor)
		(void)rdma_destroy_id(p->anchor);
	if (p->ec)
		rdma_destroy_event_channel(p->ec);
	rpcrdma__provider_evq_free(&p->q);
	explicit_bzero(&p->keys, sizeof(p->keys));
	free(p);
}

/* The largest inline payload the device takes on a QP like ours. */
static uint32_t probe_inline(struct vb_prov *p, uint32_t nsge)
{
	static const uint32_t want[] = {512, 256, 128, 64, 32, 0};
	struct ibv_cq *cq = ibv_create_cq(p->ctx, 4, NULL, NULL, 0);
	uint32_t got = 0;

	if (!cq)
		return 0;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct ibv_qp_init_attr ia;
		struct ibv_qp *qp;

		memset(&ia, 0, sizeof(ia));
		ia.send_cq = cq;
		ia.recv_cq = cq;
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = 1;
		ia.cap.max_recv_wr = 1;
		ia.cap.max_send_sge = nsge;
		ia.cap.max_recv_sge = nsge;
		ia.cap.max_inline_data = want[i];
		qp = ibv_create_qp(p->pd, &ia);
		if (qp) {
			got = want[i];
			(void)ibv_destroy_qp(qp);
			break;
		}
	}
	(void)ibv_destroy_cq(cq);
	return got;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static int set_caps(struct vb_prov *p, const struct ibv_device_attr *da,
		    const struct ibv_port_attr *pa)
{
	struct rpcrdma_prov_caps *caps = &p->base.caps;
	uint32_t sge = min_u32((uint32_t)da->max_sge, RPCRDMA_PROV_MAX_SGE);
	uint32_t rdsge = da->max_sge_rd > 0 ? min_u32(sge, (uint32_t)da->max_sge_rd) : sge;
	uint32_t wr = min_u32((uint32_t)da->max_qp_wr, (uint32_t)da->max_cqe / 2);
	uint32_t mem = p->use_mw ? VB_MEM_OPS : 0;

	if (!sge || wr <= mem + VB_WR_PER_OP)
		return -EOPNOTSUPP;
	caps->flags = RPCRDMA_PCAP_PER_OP_REVOKE | RPCRDMA_PCAP_WRITE_ERRORS_REPORTED |
		      RPCRDMA_PCAP_REVOKE_FENCES_INFLIGHT;
	/* Send With Invalidate needs grants the peer can invalidate:
	 * windows, not plain registrations. */
	if (p->use_mw && (da->device_cap_flags & IBV_DEVICE_MEM_MGT_EXTENSIONS))
		caps->flags |= RPCRDMA_PCAP_SEND_INVALIDATE;
	if (p->use_mw)
		caps->flags |= RPCRDMA_PCAP_CONN_SCOPED_HANDLES;
	caps->max_send_sge = sge;
	caps->max_recv_sge = sge;
	caps->max_rdma_sge = rdsge;
	caps->max_rdma_segs = RPCRDMA_PROV_MAX_RSEGS;
	caps->max_inline = probe_inline(p, sge);
	caps->max_send_depth = (wr - mem) / VB_WR_PER_OP;
	caps->max_recv_depth = wr;
	caps->max_read_depth =
	    min_u32((uint32_t)da->max_qp_rd_atom, (uint32_t)da->max_qp_init_rd_atom);
	if (!caps->max_read_depth)
		caps->max_read_depth = 1;
	caps->max_msg_size = pa->max_msg_sz;
	caps->max_private_data = RPCRDMA_PROV_PRIVATE_MAX;
	return 0;
}

static int epoll_watch(int epfd, int fd)
{
	struct epoll_event ee;
	int ret = set_nonblock(fd);

	if (ret)
		return ret;
	memset(&ee, 0, sizeof(ee));
	ee.events = EPOLLIN;
	ee.data.fd = fd;
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ee) ? errno_neg() : 0;
}

/*
 * A listen-only instance (a wildcard address): the event channel, the epoll
 * set over it and the inbox; no device, so nothing else.  Its listeners
 * take requests on every device, which the owner hands to instances it
 * opens on each request's local address (provider.h, "Every device").
 */
static int open_listen_only(struct vb_prov *p)
{
	int ret;

	p->base.caps.flags = RPCRDMA_PCAP_LISTEN_ONLY;
	p->base.caps.max_private_data = RPCRDMA_PROV_PRIVATE_MAX;
	p->ec = rdma_create_event_channel();
	if (!p->ec)
		return errno == ENOENT || errno == ENODEV || errno == ENOSYS ? -ENODEV
									     : errno_neg();
	p->sources_due = true;
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p->epfd < 0)
		return errno_neg();
	ret = epoll_watch(p->epfd, p->ec->fd);
	if (!ret)
		ret = rpcrdma__provider_inbox_init(&p->inbox, p->epfd);
	return ret;
}

static int vb_open(const struct rpcrdma_prov_open_attr *attr, struct rpcrdma_provider **out)
{
	struct ibv_device **list;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct vb_prov *p;
	int ndev = 0, ret;

	if (!attr || !out || check_addr(attr->addr, attr->addrlen))
		return -EINVAL;
	/* No RDMA device at all (no rdma_rxe, no HCA): say so before
	 * librdmacm goes looking. */
	list = ibv_get_device_list(&ndev);
	if (list)
		ibv_free_device_list(list);
	if (!list || ndev <= 0)
		return -ENODEV;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->base.ops = &rpcrdma__provider_verbs_ops;
	p->epfd = -1;
	p->inbox.efd = -1;
	rpcrdma__list_init(&p->conns);
	rpcrdma__list_init(&p->listeners);
	rpcrdma__list_init(&p->mrs);
	rpcrdma__list_init(&p->grants);
	rpcrdma__list_init(&p->hot);
	ret = rpcrdma__provider_evq_init(&p->q);
	if (ret)
		goto out_close;
	memcpy(&p->addr, attr->addr, sockaddr_size(attr->addr));
	if (p->addr.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&p->addr)->sin6_port = 0;
	else
		((struct sockaddr_in *)&p->addr)->sin_port = 0;
	if (is_wildcard((struct sockaddr *)&p->addr)) {
		ret = open_listen_only(p);
		if (ret)
			goto out_close;
		*out = &p->base;
		return 0;
	}

	p->ec = rdma_create_event_channel();
	if (!p->ec) {
		ret = errno == ENOENT || errno == ENODEV || errno == ENOSYS ? -ENODEV : errno_neg();
		goto out_close;
	}
	if (rdma_create_id(p->ec, &p->anchor, NULL, RDMA_PS_TCP)) {
		p->anchor = NULL;
		ret = errno_neg();
		goto out_close;
	}
	/* The device is the one that serves our address. */
	if (rdma_bind_addr(p->anchor, (struct sockaddr *)&p->addr)) {
		ret = errno == EADDRNOTAVAIL || errno == ENODEV ? -ENODEV : errno_neg();
		goto out_close;
	}
	if (!p->anchor->verbs) {
		ret = -ENODEV;
		goto out_close;
	}
	p->dev = p->anchor->verbs->device;
	p->ctx = ibv_open_device(p->dev);
	if (!p->ctx) {
		ret = errno_neg();
		goto out_close;
	}
	ret = ret_neg(ibv_query_device(p->ctx, &da));
	if (!ret)
		ret = ret_neg(ibv_query_port(p->ctx, p->anchor->port_num, &pa));
	if (ret)
		goto out_close;
	p->pd = ibv_alloc_pd(p->ctx);
	p->cch = p->pd ? ibv_create_comp_channel(p->ctx) : NULL;
	if (!p->cch) {
		ret = errno_neg();
		goto out_close;
	}
	p->sources_due = true;
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p->epfd < 0) {
		ret = errno_neg();
		goto out_close;
	}
	ret = epoll_watch(p->epfd, p->ec->fd);
	if (!ret)
		ret = epoll_watch(p->epfd, p->cch->fd);
	if (!ret)
		ret = epoll_watch(p->epfd, p->ctx->async_fd);
	if (!ret)
		ret = rpcrdma__provider_inbox_init(&p->inbox, p->epfd);
	if (ret)
		goto out_close;
	ret = rpcrdma__vb_pick_mode(p, &da);
	if (ret)
		goto out_close;
	ret = set_caps(p, &da, &pa);
	if (ret)
		goto out_close;
	*out = &p->base;
	return 0;

out_close:
	vb_close(&p->base);
	return ret;
}

const struct rpcrdma_provider_ops rpcrdma__provider_verbs_ops = {
    .name = "verbs",
    .open = vb_open,
    .close = vb_close,
    .fd = vb_fd,
    .poll = vb_poll,
    .trywait = vb_trywait,
    .stats = vb_stats,
    .reg_mr = vb_reg_mr,
    .dereg_mr = rpcrdma__vb_dereg_mr,
    .grant = rpcrdma__vb_grant,
    .revoke = rpcrdma__vb_revoke,
    .listen = rpcrdma__vb_listen,
    .listener_addr = rpcrdma__vb_listener_addr,
    .listener_close = rpcrdma__vb_listener_close,
    .conn_create = rpcrdma__vb_conn_create,
    .connect = rpcrdma__vb_connect,
    .accept = rpcrdma__vb_accept,
    .reject = rpcrdma__vb_reject,
    .disconnect = rpcrdma__vb_disconnect,
    .conn_handoff = rpcrdma__vb_conn_handoff,
    .conn_destroy = vb_conn_destroy,
    .post_recv = vb_post_recv,
    .post_send = vb_post_send,
    .post_read = vb_post_read,
    .post_write = vb_post_write,
};
