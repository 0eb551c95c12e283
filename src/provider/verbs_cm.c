/*
 * Connection management for the verbs provider (verbs.c): listeners, the
 * calls that connect, accept, reject and disconnect, and the events of the
 * instance's RDMA CM event channel.  Private data travels as given (at most
 * RPCRDMA_PROV_PRIVATE_MAX bytes); InfiniBand CM (RoCE too) pads it to the
 * message's fixed size, so it arrives zero-padded.  Read depths: the REQ
 * offers ours, the passive side accepts the smaller of each pair (its IRD
 * against the peer's ORD, its ORD against the peer's IRD), and each side's
 * attr.read_depth becomes the ORD agreed.  Our QPs are not librdmacm's, so
 * the active side finishes the handshake itself on CONNECT_RESPONSE (QP to
 * RTR and RTS, then rdma_establish sends the RTU); the passive side readies
 * its QP before rdma_accept.  Events are copied and acknowledged at once,
 * because destroying an id waits for its events' acknowledgements.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "provider/verbs.h"

#define VB_RESOLVE_MS 2000
/* Private data of an RDMA CM event: its length is 8 bits (IB CM REP: 196). */
#define VB_CM_DATA_MAX 256u
_Static_assert(VB_CM_DATA_MAX > UINT8_MAX, "CM private data length is a uint8_t");
/* IB CM reject reason "consumer defined": the peer called rdma_reject. */
#define VB_IB_REJ_CONSUMER 28
/* Transport retries; RNR retries 7 = forever: a Send waits for a receive. */
#define VB_RETRY_COUNT 7
#define VB_RNR_RETRY 7

static int check_private(const void *pdata, size_t pdlen)
{
	if (pdlen > RPCRDMA_PROV_PRIVATE_MAX || (pdlen && !pdata))
		return -EINVAL;
	return 0;
}

/* A passive connection's QP, then CONNECT_REQUEST to the owner
 * (@l NULL: handed over by another instance). */
static void announce_request(struct vb_prov *p, struct vb_conn *c, struct vb_listener *l, void *ctx)
{
	struct rpcrdma_prov_event ev;

	/* A listen-only instance makes no QP: the instance the request is
	 * handed to does, in its own protection domain. */
	if (!listen_only(p) && rpcrdma__vb_qp_create(c)) {
		p->st.errors++;
		rpcrdma__vb_conn_free(c); /* rejects it */
		return;
	}
	memset(&ev, 0, sizeof(ev));
	ev.type = RPCRDMA_PEV_CONNECT_REQUEST;
	ev.conn = &c->base;
	ev.listener = l ? &l->base : NULL;
	ev.ctx = ctx;
	rpcrdma__vb_copy_private(&ev, c->pdata, c->pdlen);
	if (rpcrdma__provider_evq_push(&p->q, &ev)) {
		/* Refused, rather than the whole instance failed: the peer
		 * sees its attempt fail and may try again. */
		p->st.errors++;
		rpcrdma__vb_conn_free(c);
	}
}

static void on_connreq(struct vb_prov *p, struct vb_listener *l, struct rdma_cm_id *id,
		       const struct rdma_conn_param *cp, const uint8_t *data, size_t len)
{
	struct vb_conn *c = NULL;

	if (!l || !id->verbs || (!listen_only(p) && id->verbs->device != p->dev) ||
	    !(c = rpcrdma__vb_conn_alloc(p, &l->attr, NULL))) {
		/* Another device (a wildcard listener on an instance with a
		 * device), or no memory: refuse rather than lose track of the
		 * request.  A listen-only instance takes every device's. */
		(void)rdma_reject(id, NULL, 0);
		(void)rdma_destroy_id(id);
		p->st.errors++;
		return;
	}
	c->id = id;
	id->context = &c->kind;
	c->passive = true;
	c->listener = l;
	/* The CM reports a REQ's depths as the passive side sees them: its
	 * responder_resources is the peer's initiator depth (the peer's ORD)
	 * and its initiator_depth the peer's responder resources (IRD).  The
	 * Linux NFS client offers IRD 128 and ORD 0, which shows a swap. */
	c->peer_ird = cp->initiator_depth;
	c->peer_ord = cp->responder_resources;
	c->pdlen = (uint8_t)(len < RPCRDMA_PROV_PRIVATE_MAX ? len : RPCRDMA_PROV_PRIVATE_MAX);
	memcpy(c->pdata, data, c->pdlen);
	c->base.state = RPCRDMA_PCONN_REQUESTED;
	rpcrdma__provider_set_peer(&c->base, rdma_get_peer_addr(id), sizeof(struct sockaddr_storage));
	rpcrdma__provider_set_local(&c->base, rdma_get_local_addr(id),
				    sizeof(struct sockaddr_storage));
	announce_request(p, c, l, l->base.ctx);
}

/* CONNECT_RESPONSE on the active side: our QP, then the RTU (rdma_establish). */
static void on_response(struct vb_conn *c, const uint8_t *data, size_t len)
{
	int ret;

	if (c->base.state != RPCRDMA_PCONN_CONNECTING || c->passive) {
		(void)rdma_reject(c->id, NULL, 0);
		return;
	}
	ret = rpcrdma__vb_qp_ready(c, -1, -1);
	if (!ret && rdma_establish(c->id))
		ret = errno_neg();
	if (ret) {
		(void)rdma_reject(c->id, NULL, 0);
		rpcrdma__vb_conn_end(c, RPCRDMA_PEV_CONNECT_ERROR, ret, NULL, 0);
		return;
	}
	rpcrdma__vb_on_established(c, data, len);
}

static int cm_status(int status, int dflt)
{
	return status < 0 ? status : dflt;
}

static void on_conn_event(struct vb_conn *c, enum rdma_cm_event_type type, int status,
			  const uint8_t *data, size_t len, bool consumer)
{
	struct vb_prov *p = c->p;
	enum rpcrdma_prov_conn_state s = c->base.state;
	bool active_pending = s == RPCRDMA_PCONN_CONNECTING && !c->passive;
	int ret;

	switch (type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (active_pending && rdma_resolve_route(c->id, VB_RESOLVE_MS))
			rpcrdma__vb_conn_end(c, RPCRDMA_PEV_CONNECT_ERROR, errno_neg(), NULL, 0);
		return;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (!active_pending)
			return;
		{
			struct rdma_conn_param par = {
			    .private_data = c->pdlen ? c->pdata : NULL,
			    .private_data_len = c->pdlen,
			    .responder_resources = (uint8_t)c->base.attr.read_depth,
			    .initiator_depth = (uint8_t)c->base.attr.read_depth,
			    .flow_control = 1,
			    .retry_count = VB_RETRY_COUNT,
			    .rnr_retry_count = VB_RNR_RETRY,
			    .qp_num = c->qp->qp_num,
			};

			ret = c->id->verbs && c->id->verbs->device == p->dev ? 0 : -ENODEV;
			if (!ret && rdma_connect(c->id, &par))
				ret = errno_neg();
			if (ret)
				rpcrdma__vb_conn_end(c, RPCRDMA_PEV_CONNECT_ERROR, ret, NULL, 0);
		}
		return;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		on_response(c, data, len);
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
		rpcrdma__vb_on_established(c, data, len);
		return;
	case RDMA_CM_EVENT_REJECTED:
		if (active_pending)
			rpcrdma__vb_conn_end(c, RPCRDMA_PEV_REJECTED, -ECONNREFUSED,
					     consumer ? data : NULL, len);
		else if (s == RPCRDMA_PCONN_CONNECTING)
			rpcrdma__vb_conn_end(c, RPCRDMA_PEV_DISCONNECTED, -ECONNREFUSED, NULL, 0);
		return;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		ret = cm_status(status, type == RDMA_CM_EVENT_UNREACHABLE     ? -ETIMEDOUT
					: type == RDMA_CM_EVENT_CONNECT_ERROR ? -ECONNABORTED
									      : -EHOSTUNREACH);
		if (active_pending)
			rpcrdma__vb_conn_end(c, RPCRDMA_PEV_CONNECT_ERROR, ret, NULL, 0);
		else if (s == RPCRDMA_PCONN_CONNECTING || s == RPCRDMA_PCONN_ESTABLISHED)
			rpcrdma__vb_conn_end(c, RPCRDMA_PEV_DISCONNECTED, ret, NULL, 0);
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (s == RPCRDMA_PCONN_CONNECTING || s == RPCRDMA_PCONN_ESTABLISHED) {
			/* Answers the peer's DREQ at once (else it waits for a
			 * time-out) and moves nothing: conn_end does. */
			(void)rdma_disconnect(c->id);
			rpcrdma__vb_conn_end(c,
					     active_pending ? RPCRDMA_PEV_CONNECT_ERROR
							    : RPCRDMA_PEV_DISCONNECTED,
					     active_pending ? -ECONNRESET : 0, NULL, 0);
		}
		return;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		rpcrdma__vb_fail(p, -ENODEV);
		rpcrdma__vb_conn_end(
		    c, active_pending ? RPCRDMA_PEV_CONNECT_ERROR : RPCRDMA_PEV_DISCONNECTED,
		    -ENODEV, NULL, 0);
		return;
	default:
		return;
	}
}

/* Handles one CM event.  Returns 1 if there was one, 0 if none. */
int rpcrdma__vb_cm_read_one(struct vb_prov *p)
{
	struct rdma_cm_event *e;
	struct rdma_conn_param cp;
	enum rdma_cm_event_type type;
	struct rdma_cm_id *id, *lid;
	uint8_t data[VB_CM_DATA_MAX];
	size_t len = 0;
	int status;
	bool consumer;
	enum vb_kind *kind;

	if (rdma_get_cm_event(p->ec, &e)) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			rpcrdma__vb_fail(p, errno_neg());
		return 0;
	}
	/* Copy, then acknowledge at once: destroying an id waits for its
	 * events to be acknowledged, and handling may destroy one. */
	type = e->event;
	id = e->id;
	lid = e->listen_id;
	status = e->status;
	cp = e->param.conn;
	if (cp.private_data && cp.private_data_len) {
		len = cp.private_data_len; /* 8 bits: fits (VB_CM_DATA_MAX) */
		memcpy(data, cp.private_data, len);
	}
	cp.private_data = NULL;
	/* Only a consumer's reject carries the peer's data (IB reason 28);
	 * other reasons (nobody listening: invalid service ID) carry none. */
	consumer = type == RDMA_CM_EVENT_REJECTED &&
		   (status == VB_IB_REJ_CONSUMER ||
		    (id && id->verbs && id->verbs->device->transport_type == IBV_TRANSPORT_IWARP));
	rdma_ack_cm_event(e);

	if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		kind = lid ? lid->context : NULL;
		on_connreq(p,
			   kind && *kind == VB_KIND_LISTENER
			       ? rpcrdma__container_of(kind, struct vb_listener, kind)
			       : NULL,
			   id, &cp, data, len);
		return 1;
	}
	kind = id ? id->context : NULL;
	if (kind && *kind == VB_KIND_HANDOFF) {
		/* Handed to us, and its event came before the inbox was
		 * read: adopt it first (the push is complete once the inbox
		 * can be taken), then find the connection it became. */
		struct vb_conn *c = NULL;
		struct rpcrdma__list *it;

		(void)rpcrdma__vb_inbox_drain(p);
		rpcrdma__list_foreach(
		    it, &p->conns) if (rpcrdma__container_of(it, struct vb_conn, node)->id == id)
		{
			c = rpcrdma__container_of(it, struct vb_conn, node);
			break;
		}
		if (c)
			on_conn_event(c, type, status, data, len, consumer);
		return 1;
	}
	if (!kind)
		return 1; /* the anchor, or an id being given up */
	if (*kind == VB_KIND_LISTENER) {
		struct vb_listener *l = rpcrdma__container_of(kind, struct vb_listener, kind);
		struct rpcrdma_prov_event ev;

		if (type != RDMA_CM_EVENT_DEVICE_REMOVAL)
			return 1;
		memset(&ev, 0, sizeof(ev));
		ev.type = RPCRDMA_PEV_DEVICE_ERROR;
		ev.listener = &l->base;
		ev.ctx = l->base.ctx;
		ev.error = -ENODEV;
		p->st.errors++;
		rpcrdma__vb_emit(p, &ev);
		rpcrdma__vb_fail(p, -ENODEV);
		return 1;
	}
	if (*kind == VB_KIND_CONN)
		on_conn_event(rpcrdma__container_of(kind, struct vb_conn, kind), type, status, data,
			      len, consumer);
	return 1;
}

int rpcrdma__vb_listen(struct rpcrdma_provider *b, const struct sockaddr *addr, socklen_t addrlen,
		       int backlog, const struct rpcrdma_prov_conn_attr *attr, void *ctx,
		       struct rpcrdma_prov_listener **out)
{
	struct vb_prov *p = prov_of(b);
	struct vb_listener *l;
	int ret = check_addr(addr, addrlen);

	if (ret || !out)
		return ret ? ret : -EINVAL;
	if (p->failed)
		return -EIO;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->kind = VB_KIND_LISTENER;
	l->p = p;
	l->base.prov = b;
	l->base.ctx = ctx;
	l->attr = rpcrdma__vb_clamp_attr(p, attr);
	if (rdma_create_id(p->ec, &l->id, &l->kind, RDMA_PS_TCP)) {
		ret = errno_neg();
		free(l);
		return ret;
	}
	if (rdma_bind_addr(l->id, (struct sockaddr *)(uintptr_t)addr))
		ret = errno_neg();
	else if (l->id->verbs && l->id->verbs->device != p->dev)
		ret = -EADDRNOTAVAIL; /* another device's address */
	else if (rdma_listen(l->id, backlog > 0 ? backlog : 128))
		ret = errno_neg();
	if (ret) {
		(void)rdma_destroy_id(l->id);
		free(l);
		return ret;
	}
	rpcrdma__list_add_tail(&p->listeners, &l->node);
	p->st.listeners_live++;
	*out = &l->base;
	return 0;
}

int rpcrdma__vb_listener_addr(struct rpcrdma_prov_listener *bl, struct sockaddr_storage *ss,
			      socklen_t *len)
{
	struct vb_listener *l = rpcrdma__container_of(bl, struct vb_listener, base);
	struct sockaddr *sa;

	if (!ss || !len)
		return -EINVAL;
	sa = rdma_get_local_addr(l->id);
	memset(ss, 0, sizeof(*ss));
	*len = (socklen_t)sockaddr_size(sa);
	memcpy(ss, sa, *len);
	return 0;
}

void rpcrdma__vb_listener_close(struct rpcrdma_prov_listener *bl)
{
	struct vb_listener *l = rpcrdma__container_of(bl, struct vb_listener, base);
	struct vb_prov *p = l->p;
	struct rpcrdma__list *it, *next;

	rpcrdma__list_foreach_safe(it, next, &p->conns)
	{
		struct vb_conn *c = rpcrdma__container_of(it, struct vb_conn, node);

		if (c->listener != l || c->base.state != RPCRDMA_PCONN_REQUESTED)
			continue;
		c->listener = NULL;
		if (!c->announced) {
			/* The owner never heard of it: ours to refuse and free. */
			rpcrdma__vb_conn_free(c);
			continue;
		}
		(void)rdma_reject(c->id, NULL, 0);
		rpcrdma__vb_conn_end(c, RPCRDMA_PEV_DISCONNECTED, -ECONNABORTED, NULL, 0);
	}
	rpcrdma__provider_evq_scrub(&p->q, NULL, bl);
	(void)rdma_destroy_id(l->id);
	rpcrdma__list_del(&l->node);
	p->st.listeners_live--;
	free(l);
}

int rpcrdma__vb_conn_create(struct rpcrdma_provider *b, const struct rpcrdma_prov_conn_attr *attr,
			    void *ctx, struct rpcrdma_prov_conn **out)
{
	struct vb_prov *p = prov_of(b);
	struct vb_conn *c;
	int ret = 0;

	if (!out)
		return -EINVAL;
	if (listen_only(p))
		return -EOPNOTSUPP;
	if (p->failed)
		return -EIO;
	c = rpcrdma__vb_conn_alloc(p, attr, ctx);
	if (!c)
		return -ENOMEM;
	/* Bound to our address now, so the QP exists (and takes receives)
	 * before the connection is resolved. */
	if (rdma_create_id(p->ec, &c->id, &c->kind, RDMA_PS_TCP)) {
		c->id = NULL;
		ret = errno_neg();
	} else if (rdma_bind_addr(c->id, (struct sockaddr *)&p->addr)) {
		ret = errno_neg();
	} else if (!c->id->verbs || c->id->verbs->device != p->dev) {
		ret = -ENODEV;
	}
	if (!ret)
		ret = rpcrdma__vb_qp_create(c);
	if (ret) {
		rpcrdma__vb_conn_free(c);
		return ret;
	}
	*out = &c->base;
	return 0;
}

int rpcrdma__vb_connect(struct rpcrdma_prov_conn *bc, const struct sockaddr *dst, socklen_t dstlen,
			const void *pdata, size_t pdlen)
{
	struct vb_conn *c = conn_of(bc);
	int ret = check_addr(dst, dstlen);

	if (!ret)
		ret = check_private(pdata, pdlen);
	if (ret)
		return ret;
	if (bc->state != RPCRDMA_PCONN_IDLE || !c->qp)
		return -ENOTCONN;
	/* Sent with the REQ once the route is resolved. */
	if (pdlen)
		memcpy(c->pdata, pdata, pdlen);
	c->pdlen = (uint8_t)pdlen;
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)(uintptr_t)dst, VB_RESOLVE_MS))
		return errno_neg();
	rpcrdma__provider_set_peer(bc, dst, dstlen);
	bc->state = RPCRDMA_PCONN_CONNECTING;
	return 0;
}

int rpcrdma__vb_accept(struct rpcrdma_prov_conn *bc, const void *pdata, size_t pdlen)
{
	struct vb_conn *c = conn_of(bc);
	struct rdma_conn_param par;
	uint32_t want = bc->attr.read_depth;
	int ird, ord, ret = check_private(pdata, pdlen);

	if (ret)
		return ret;
	if (listen_only(c->p))
		return -EOPNOTSUPP; /* hand it to its device's instance */
	if (bc->state != RPCRDMA_PCONN_REQUESTED || !c->qp)
		return -ENOTCONN;
	/* IRD: Reads we take, no more than the peer will issue (its ORD);
	 * ORD: Reads we issue, no more than the peer takes (its IRD). */
	ird = (int)(want < c->peer_ord ? want : c->peer_ord);
	ord = (int)(want < c->peer_ird ? want : c->peer_ird);
	ret = rpcrdma__vb_qp_ready(c, ird, ord);
	if (!ret) {
		memset(&par, 0, sizeof(par));
		par.private_data = pdlen ? pdata : NULL;
		par.private_data_len = (uint8_t)pdlen;
		par.responder_resources = (uint8_t)ird;
		par.initiator_depth = (uint8_t)ord;
		par.flow_control = 1;
		par.rnr_retry_count = VB_RNR_RETRY;
		par.qp_num = c->qp->qp_num;
		if (rdma_accept(c->id, &par))
			ret = errno_neg();
	}
	if (ret) {
		/* Refused instead; receives posted here are flushed. */
		(void)rdma_reject(c->id, NULL, 0);
		c->listener = NULL;
		rpcrdma__vb_conn_retire(c);
		return ret;
	}
	c->listener = NULL;
	bc->state = RPCRDMA_PCONN_CONNECTING;
	return 0;
}

int rpcrdma__vb_reject(struct rpcrdma_prov_conn *bc, const void *pdata, size_t pdlen)
{
	struct vb_conn *c = conn_of(bc);
	int ret = check_private(pdata, pdlen);

	if (ret)
		return ret;
	if (bc->state != RPCRDMA_PCONN_REQUESTED)
		return -ENOTCONN;
	ret = rdma_reject(c->id, pdlen ? pdata : NULL, (uint8_t)pdlen) ? errno_neg() : 0;
	/* Whatever rdma_reject said, the request is finished with. */
	c->listener = NULL;
	c->p->st.conns_rejected++;
	rpcrdma__vb_conn_retire(c);
	return ret;
}

int rpcrdma__vb_disconnect(struct rpcrdma_prov_conn *bc)
{
	struct vb_conn *c = conn_of(bc);

	switch (bc->state) {
	case RPCRDMA_PCONN_CLOSED:
		return 0;
	case RPCRDMA_PCONN_IDLE:
		return -ENOTCONN;
	case RPCRDMA_PCONN_REQUESTED:
		return -EINVAL; /* reject it instead */
	case RPCRDMA_PCONN_CONNECTING:
	case RPCRDMA_PCONN_ESTABLISHED:
		break;
	}
	/* The DREQ goes out now; the peer's DREP, and our own DISCONNECTED
	 * event, are not waited for. */
	(void)rdma_disconnect(c->id);
	if (bc->state == RPCRDMA_PCONN_CONNECTING && !c->passive)
		rpcrdma__vb_conn_end(c, RPCRDMA_PEV_CONNECT_ERROR, -ECONNABORTED, NULL, 0);
	else
		rpcrdma__vb_conn_end(c, RPCRDMA_PEV_DISCONNECTED, 0, NULL, 0);
	return 0;
}

/*
 * Handing a connection request to another instance.  The CM id moves to the
 * target's event channel (rdma_migrate_id) under the target's inbox lock,
 * with a handoff record as its context, so an event the target reads before
 * it takes the inbox finds the record and adopts it first.  The QP does not
 * move: it belongs to the source's protection domain and completion
 * channel, and nothing is posted on it yet, so the target makes its own.
 */
static int handoff_migrate(void *arg)
{
	struct vb_handoff *h = arg;
	void *old = h->id->context;

	h->id->context = &h->kind;
	if (rdma_migrate_id(h->id, h->to->ec)) {
		int ret = errno_neg();

		h->id->context = old;
		return ret;
	}
	return 0;
}

int rpcrdma__vb_conn_handoff(struct rpcrdma_prov_conn *bc, struct rpcrdma_provider *to, void *ctx)
{
	struct vb_conn *c = conn_of(bc);
	struct ibv_device *dev;
	struct vb_prov *dst;
	struct vb_handoff *h;
	int ret;

	if (!to || to == bc->prov)
		return -EINVAL;
	if (to->ops != bc->prov->ops)
		return -EOPNOTSUPP;
	dst = prov_of(to);
	/* The request's device is its id's (a listen-only instance has none
	 * of its own); a listen-only target takes any. */
	dev = c->id && c->id->verbs ? c->id->verbs->device : NULL;
	if (dst->failed || dst->inbox.efd < 0 || (!listen_only(dst) && dst->dev != dev))
		return -EOPNOTSUPP;
	if (bc->state != RPCRDMA_PCONN_REQUESTED || !c->id || c->destroyed)
		return -ENOTCONN;
	for (unsigned int i = 0; i < c->nops; i++)
		if (c->ops[i].in_use)
			return -EBUSY;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->kind = VB_KIND_HANDOFF;
	h->id = c->id;
	h->to = dst;
	h->attr = bc->attr;
	h->ctx = ctx;
	memcpy(&h->peer, &bc->peer_addr, sizeof(h->peer));
	h->peerlen = bc->peer_addrlen;
	memcpy(&h->local, &bc->local_addr, sizeof(h->local));
	h->locallen = bc->local_addrlen;
	h->peer_ird = c->peer_ird;
	h->peer_ord = c->peer_ord;
	h->pdlen = c->pdlen;
	memcpy(h->pdata, c->pdata, c->pdlen);
	ret = rpcrdma__provider_inbox_push_with(&dst->inbox, &h->item, handoff_migrate, h);
	if (ret) {
		free(h);
		return ret;
	}
	/* The id is the target's now: free the rest without refusing. */
	c->id = NULL;
	c->listener = NULL;
	c->p->st.conns_handed_off++;
	rpcrdma__vb_conn_free(c);
	return 0;
}

static void adopt(struct vb_prov *p, struct vb_handoff *h)
{
	struct vb_conn *c = rpcrdma__vb_conn_alloc(p, &h->attr, h->ctx);

	if (!c) {
		h->id->context = NULL;
		(void)rdma_reject(h->id, NULL, 0);
		(void)rdma_destroy_id(h->id);
		p->st.errors++;
		return;
	}
	c->id = h->id;
	h->id->context = &c->kind;
	c->passive = true;
	c->peer_ird = h->peer_ird;
	c->peer_ord = h->peer_ord;
	c->pdlen = h->pdlen;
	memcpy(c->pdata, h->pdata, h->pdlen);
	c->base.state = RPCRDMA_PCONN_REQUESTED;
	rpcrdma__provider_set_peer(&c->base, (struct sockaddr *)&h->peer, h->peerlen);
	rpcrdma__provider_set_local(&c->base, (struct sockaddr *)&h->local, h->locallen);
	announce_request(p, c, NULL, h->ctx);
}

bool rpcrdma__vb_inbox_drain(struct vb_prov *p)
{
	struct rpcrdma_prov_inbox_item *it = rpcrdma__provider_inbox_take(&p->inbox);
	bool any = it != NULL;

	while (it) {
		struct vb_handoff *h = rpcrdma__container_of(it, struct vb_handoff, item);

		it = it->next;
		adopt(p, h);
		free(h);
	}
	return any;
}

void rpcrdma__vb_inbox_close(struct vb_prov *p)
{
	struct rpcrdma_prov_inbox_item *it = rpcrdma__provider_inbox_take(&p->inbox);

	while (it) {
		struct vb_handoff *h = rpcrdma__container_of(it, struct vb_handoff, item);

		it = it->next;
		h->id->context = NULL;
		(void)rdma_reject(h->id, NULL, 0);
		(void)rdma_destroy_id(h->id);
		free(h);
	}
	rpcrdma__provider_inbox_destroy(&p->inbox);
}
