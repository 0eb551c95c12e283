/*
 * Remote access for the verbs provider (verbs.c): local registrations, the
 * grants that open memory to a connection's peer for one RPC, their
 * revocation, the memory windows behind them and the choice of handles.
 *
 * Local buffers are registered without remote access.  Where the device has
 * type 2 memory windows, a grant binds a window over the registration with a
 * Bind MW work request on the connection's QP: the handle is usable only on
 * that connection (CONN_SCOPED_HANDLES), its 8-bit key is drawn at random,
 * the window itself is picked at random among the free ones, and handles in
 * quarantine (provider.c) are never handed out again.  revoke posts a Local
 * Invalidate; its completion is the fence.  A peer's Send With Invalidate
 * shows as IBV_WC_WITH_INV on a receive; that window is then already free and
 * revoke completes at once.  Without windows each grant is its own
 * registration with remote access, and revoke deregisters it; the device
 * picks those handles, and we refuse ones in quarantine.  (enum
 * vb_grant_mode; RPCRDMA_VERBS_GRANTS=window|window-own|registration in the
 * environment overrides the choice, a test hook for the lab.)
 *
 * WARNING: Soft-RoCE (rxe, Linux 6.1; vendor id 0xffffff), measured in the
 * lab: (1) it checks an access through a window against the registration
 * under the window, not the window's own bounds, so a window over a large
 * registration would open all of it: on rxe each window is bound over a
 * registration of exactly the granted range (VB_GRANT_WINDOW_OWN_MR), the
 * caller's own when the grant covers all of it (the registration cache's
 * entries are exact ranges), else one made for the grant; (2) a
 * receive's remote invalidation arrives with the kernel's flag value
 * (IB_WC_WITH_INVALIDATE, 1 << 2), which libibverbs reads as
 * IBV_WC_IP_CSUM_OK; on rxe that bit on an RC receive means invalidated
 * (verbs.c); (3) it crashes the kernel when a window that is already free is
 * invalidated again, so revoke never invalidates a window the peer freed;
 * (4) it numbers registrations in sequence and randomises only their low 8
 * bits, so per-grant registrations give near-sequential handles there.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "provider/verbs.h"

/* rxe: parts of one registration whose own registrations are kept. */
#define VB_SUBS_MAX 4u

struct vb_sub {
	struct vb_sub *next;
	struct ibv_mr *mr;
};

/* Free windows below which a grant allocates a new one rather than reuse:
 * the window index is part of the handle, so there must be a choice. */
#define VB_MW_POOL_MIN 32u
#define VB_KEY_TRIES 64
/* The rxe device's vendor id: see the WARNING above. */
#define VB_RXE_VENDOR_ID 0xffffffu

/*
 * Memory windows.  A window is owned by exactly one of: the free pool, a
 * grant, or the REVOKE slot invalidating it.
 */
/* Every registration and deregistration goes through these two, so that
 * the counters show registrations on the data path (issue 18: none in
 * steady state). */
static struct ibv_mr *vb_pin(struct vb_prov *p, void *addr, size_t length, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(p->pd, addr, length, access);

	if (mr)
		p->st.reg_mrs++;
	return mr;
}

static int vb_unpin(struct vb_prov *p, struct ibv_mr *mr)
{
	p->st.dereg_mrs++;
	return ibv_dereg_mr(mr);
}

static void mw_destroy(struct vb_prov *p, struct ibv_mw *mw)
{
	rpcrdma__provider_key_retire(&p->keys, mw->rkey);
	if (ibv_dealloc_mw(mw))
		p->st.errors++;
	p->nmw--;
}

/*
 * Back to the pool; its last handle is already in quarantine.
 *
 * WARNING (rxe, measured in the lab): a free window keeps its last key, and a
 * remote invalidation of that key (Send With Invalidate) dereferences the free
 * window's NULL QP in the responder (rxe_invalidate_mw -> __rxe_put): a
 * kernel panic on our side, triggered by the peer.  The protocol does that
 * whenever a call was aborted (its handles revoked here) and its late reply
 * comes with Send With Invalidate (xprt_test abort).  So on rxe an
 * invalidated window is deallocated, never pooled: its key then names no
 * window (rxe allocates window indexes cyclically), the late invalidation
 * fails its key check and the QP goes to the error state, as the IBA has it
 * for invalidating a handle that is not valid.  A new window takes its place
 * in the pool, so grants still pick their window at random among many (rxe's
 * new window indexes are sequential: the provider suite's handles case).
 */
static void mw_release(struct vb_prov *p, struct ibv_mw *mw)
{
	if (p->mw_no_reuse) {
		mw_destroy(p, mw);
		mw = ibv_alloc_mw(p->pd, IBV_MW_TYPE_2);
		if (!mw)
			return;
		p->nmw++;
	}
	if (p->nfree == p->capfree) {
		size_t ncap = p->capfree ? 2 * p->capfree : 64;
		struct ibv_mw **nv = realloc(p->mw_free, ncap * sizeof(*nv));

		if (!nv) {
			mw_destroy(p, mw);
			return;
		}
		p->mw_free = nv;
		p->capfree = ncap;
	}
	p->mw_free[p->nfree++] = mw;
}

/*
 * A window for a new grant: a new one while the pool is small, otherwise one
 * picked at random among the older three quarters of the free ones, so the
 * window just invalidated is not the next one used.
 */
static int mw_take(struct vb_prov *p, uint32_t rnd, struct ibv_mw **out)
{
	size_t pick, span;

	if (p->nfree < VB_MW_POOL_MIN && p->nmw < p->max_mw) {
		struct ibv_mw *mw = ibv_alloc_mw(p->pd, IBV_MW_TYPE_2);

		if (mw) {
			p->nmw++;
			*out = mw;
			return 0;
		}
		if (!p->nfree)
			return errno_neg();
	}
	if (!p->nfree)
		return -EAGAIN;
	span = p->nfree > 4 ? p->nfree - p->nfree / 4 : p->nfree;
	pick = rnd % span;
	*out = p->mw_free[pick];
	memmove(&p->mw_free[pick], &p->mw_free[pick + 1],
		(p->nfree - pick - 1) * sizeof(p->mw_free[0]));
	p->nfree--;
	return 0;
}

/* A key for @mw: random low byte, the window's index above, not in
 * quarantine. */
static int mw_key(struct vb_prov *p, const struct ibv_mw *mw, uint32_t *rkey)
{
	for (int tries = 0; tries < VB_KEY_TRIES; tries++) {
		uint32_t r, k;
		int ret = rpcrdma__provider_key_draw(&p->keys, &r);

		if (ret)
			return ret;
		k = (mw->rkey & ~0xffu) | (r & 0xffu);
		if (k && k != mw->rkey && !rpcrdma__provider_key_quarantined(&p->keys, k)) {
			*rkey = k;
			return 0;
		}
		p->st.key_redraws++;
	}
	return -EAGAIN;
}

static void emit_revoke(struct vb_prov *p, void *ctx)
{
	struct rpcrdma_prov_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = RPCRDMA_PEV_COMPLETION;
	ev.op = RPCRDMA_POP_REVOKE;
	ev.ctx = ctx;
	rpcrdma__vb_emit(p, &ev);
}

/* The peer invalidated one of our windows with Send With Invalidate. */
void rpcrdma__vb_remote_invalidated(struct vb_conn *c, uint32_t rkey)
{
	struct rpcrdma__list *it;

	rpcrdma__list_foreach(it, &c->grants)
	{
		struct vb_grant *g = rpcrdma__container_of(it, struct vb_grant, cnode);

		if (g->base.handle == rkey) {
			g->invalidated = true;
			return;
		}
	}
}

/* Deallocates the windows bound on (or being invalidated on) @c's QP, which
 * must be in the error state: they die with it. */
void rpcrdma__vb_drop_windows(struct vb_conn *c)
{
	struct vb_prov *p = c->p;

	while (!rpcrdma__list_empty(&c->grants)) {
		struct vb_grant *g = rpcrdma__container_of(c->grants.next, struct vb_grant, cnode);

		rpcrdma__list_del(&g->cnode);
		if (g->mw)
			mw_destroy(p, g->mw);
		g->mw = NULL;
		if (g->own && vb_unpin(p, g->own))
			p->st.errors++;
		g->own = NULL;
		g->conn = NULL;
	}
	for (unsigned int i = 0; i < c->nops; i++) {
		struct vb_op *o = &c->ops[i];

		if (o->in_use && o->mw) {
			mw_destroy(p, o->mw);
			o->mw = NULL;
		}
		if (o->in_use && o->mr) {
			if (vb_unpin(p, o->mr))
				p->st.errors++;
			o->mr = NULL;
		}
	}
}

/*
 * rxe: a registration of exactly [@addr, @addr + @length) inside @m for a
 * window to sit on.  Kept with @m (up to VB_SUBS_MAX of them, until @m is
 * deregistered), so that the same part granted again (a pooled Long Call
 * or Reply chunk buffer of a size seen before) registers nothing; its
 * pages are @m's, pinned as long as @m is.  NULL with *@own set when the
 * registration is the grant's alone (more parts than kept).
 */
static struct ibv_mr *sub_get(struct vb_prov *p, struct vb_mr *m, void *addr, uint32_t length,
			      struct ibv_mr **own)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
	struct vb_sub *s;
	struct ibv_mr *mr;

	*own = NULL;
	for (s = m->subs; s; s = s->next) {
		if (s->mr->addr == addr && s->mr->length == length)
			return s->mr;
	}
	mr = vb_pin(p, addr, length, acc);
	if (!mr)
		return NULL;
	p->st.grant_regs++;
	s = m->nsubs < VB_SUBS_MAX ? calloc(1, sizeof(*s)) : NULL;
	if (!s) {
		*own = mr;
		return mr;
	}
	s->mr = mr;
	s->next = m->subs;
	m->subs = s;
	m->nsubs++;
	return mr;
}

static void subs_free(struct vb_prov *p, struct vb_mr *m)
{
	while (m->subs) {
		struct vb_sub *s = m->subs;

		m->subs = s->next;
		if (vb_unpin(p, s->mr))
			p->st.errors++;
		free(s);
	}
	m->nsubs = 0;
}

int rpcrdma__vb_reg_mr(struct rpcrdma_provider *b, void *addr, size_t length,
		       struct rpcrdma_prov_mr **out)
{
	struct vb_prov *p = prov_of(b);
	struct vb_mr *m;
	/* Local access only: windows bind over it; its own rkey opens
	 * nothing to a peer. */
	int access = IBV_ACCESS_LOCAL_WRITE | (p->use_mw ? IBV_ACCESS_MW_BIND : 0);

	if (!addr || !length || !out || (uintptr_t)addr + length < (uintptr_t)addr)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->mr = vb_pin(p, addr, length, access);
	if (!m->mr) {
		int ret = errno_neg();

		free(m);
		return ret;
	}
	m->base.prov = b;
	m->base.addr = addr;
	m->base.length = length;
	rpcrdma__list_add_tail(&p->mrs, &m->node);
	p->st.mrs_live++;
	*out = &m->base;
	return 0;
}

static void grant_unlink(struct vb_prov *p, struct vb_grant *g)
{
	if (g->conn)
		rpcrdma__list_del(&g->cnode);
	g->conn = NULL;
	rpcrdma__list_del(&g->node);
	p->st.grants_live--;
}

void rpcrdma__vb_dereg_mr(struct rpcrdma_prov_mr *bm)
{
	struct vb_mr *m = rpcrdma__container_of(bm, struct vb_mr, base);
	struct vb_prov *p = prov_of(bm->prov);
	struct rpcrdma__list *it;

	/* A window bound over the registration keeps it from going: a grant
	 * the owner did not revoke loses its window here. */
	rpcrdma__list_foreach(it, &p->grants)
	{
		struct vb_grant *g = rpcrdma__container_of(it, struct vb_grant, node);

		if (g->mr == m && g->mw && !g->own) {
			mw_destroy(p, g->mw);
			g->mw = NULL;
		}
	}
	subs_free(p, m);
	if (vb_unpin(p, m->mr))
		p->st.errors++;
	rpcrdma__list_del(&m->node);
	p->st.mrs_live--;
	free(m);
}

/* A free memory slot on @c, reaping its CQ once if there is none. */
static struct vb_op *mem_slot(struct vb_conn *c)
{
	struct vb_op *o = rpcrdma__vb_op_get(c, VB_POOL_MEM);

	if (o)
		return o;
	rpcrdma__vb_reap(c);
	if (c->base.state != RPCRDMA_PCONN_ESTABLISHED)
		return NULL;
	return rpcrdma__vb_op_get(c, VB_POOL_MEM);
}

static int grant_mw(struct vb_conn *c, struct vb_grant *g, void *addr, uint32_t length,
		    unsigned int access)
{
	struct vb_prov *p = c->p;
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_mr *under = g->mr->mr;
	struct ibv_mw *mw = NULL;
	struct vb_op *o;
	uint32_t rnd = 0, rkey = 0;
	int ret;

	if (c->base.state != RPCRDMA_PCONN_ESTABLISHED || c->closing || !c->qp)
		return -ENOTCONN; /* a window binds on a ready QP */
	o = mem_slot(c);
	if (!o)
		return c->base.state == RPCRDMA_PCONN_ESTABLISHED ? -EAGAIN : -ENOTCONN;
	ret = rpcrdma__provider_key_draw(&p->keys, &rnd);
	if (!ret)
		ret = mw_take(p, rnd, &mw);
	if (!ret)
		ret = mw_key(p, mw, &rkey);
	if (!ret && p->mode == VB_GRANT_WINDOW_OWN_MR &&
	    ((uintptr_t)addr != (uintptr_t)g->mr->base.addr || length != g->mr->base.length)) {
		/* The window's bounds come from the registration under it
		 * (rxe): a grant of a whole registration (a cached one of
		 * exactly the caller's buffer) binds over it as it is, a grant
		 * of part of one over a registration of exactly that part. */
		under = sub_get(p, g->mr, addr, length, &g->own);
		if (!under)
			ret = errno_neg();
	}
	if (ret)
		goto out_undo;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = (uintptr_t)o;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = under;
	wr.bind_mw.bind_info.addr = (uintptr_t)addr;
	wr.bind_mw.bind_info.length = length;
	wr.bind_mw.bind_info.mw_access_flags =
	    ((access & RPCRDMA_PACCESS_REMOTE_READ) ? IBV_ACCESS_REMOTE_READ : 0) |
	    ((access & RPCRDMA_PACCESS_REMOTE_WRITE) ? IBV_ACCESS_REMOTE_WRITE : 0);
	ret = ibv_post_send(c->qp, &wr, &bad);
	if (ret) {
		ret = ret == ENOMEM ? -EAGAIN : ret_neg(ret);
		goto out_undo;
	}
	/* The device checks the window's current key on the next bind. */
	mw->rkey = rkey;
	o->op = VB_OP_BIND;
	o->pending = 1;
	g->mw = mw;
	g->conn = c;
	g->base.handle = rkey;
	rpcrdma__list_add_tail(&c->grants, &g->cnode);
	p->st.work_requests++;
	return 0;

out_undo:
	if (g->own)
		(void)vb_unpin(p, g->own);
	g->own = NULL;
	if (mw)
		mw_release(p, mw);
	rpcrdma__vb_op_put(c, o);
	return ret;
}

static int grant_mr(struct vb_prov *p, struct vb_grant *g, void *addr, uint32_t length,
		    unsigned int access)
{
	int acc = ((access & RPCRDMA_PACCESS_REMOTE_READ) ? IBV_ACCESS_REMOTE_READ : 0) |
		  ((access & RPCRDMA_PACCESS_REMOTE_WRITE)
		       ? IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE
		       : 0);

	/* The device picks the key: refuse ones in quarantine. */
	for (int tries = 0; tries < VB_KEY_TRIES; tries++) {
		struct ibv_mr *mr = vb_pin(p, addr, length, acc);

		if (!mr)
			return errno_neg();
		p->st.grant_regs++;
		if (mr->rkey && !rpcrdma__provider_key_quarantined(&p->keys, mr->rkey)) {
			g->own = mr;
			g->base.handle = mr->rkey;
			return 0;
		}
		p->st.key_redraws++;
		(void)vb_unpin(p, mr);
	}
	return -EAGAIN;
}

int rpcrdma__vb_grant(struct rpcrdma_prov_conn *bc, struct rpcrdma_prov_mr *mr, void *addr,
		      uint32_t length, unsigned int access, struct rpcrdma_prov_grant **out,
		      struct rpcrdma_prov_rseg *seg)
{
	struct vb_conn *c = conn_of(bc);
	struct vb_prov *p = c->p;
	const unsigned int all = RPCRDMA_PACCESS_REMOTE_READ | RPCRDMA_PACCESS_REMOTE_WRITE;
	struct vb_grant *g;
	int ret;

	if (!mr || mr->prov != bc->prov || !out || !seg || !length || !access || (access & ~all) ||
	    !rpcrdma__provider_range_in(addr, length, mr->addr, mr->length))
		return -EINVAL;
	if (bc->state == RPCRDMA_PCONN_CLOSED || c->closing)
		return -ENOTCONN;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->mr = rpcrdma__container_of(mr, struct vb_mr, base);
	rpcrdma__list_init(&g->cnode);
	ret =
	    p->use_mw ? grant_mw(c, g, addr, length, access) : grant_mr(p, g, addr, length, access);
	if (ret) {
		free(g);
		return ret;
	}
	g->base.prov = bc->prov;
	rpcrdma__list_add_tail(&p->grants, &g->node);
	p->st.grants++;
	p->st.grants_live++;
	seg->handle = g->base.handle;
	seg->length = length;
	seg->offset = (uint64_t)(uintptr_t)addr; /* windows and MRs are VA-based */
	*out = &g->base;
	return 0;
}

int rpcrdma__vb_revoke(struct rpcrdma_prov_grant *bg, void *ctx)
{
	struct vb_grant *g = rpcrdma__container_of(bg, struct vb_grant, base);
	struct vb_prov *p = prov_of(bg->prov);
	struct vb_conn *c = g->conn;
	bool later = false, remote;

	if (g->mw && c && !g->invalidated) {
		/* WARNING: rxe crashes the kernel on invalidating a window that
		 * is already free; reaping first learns of a Send With
		 * Invalidate that freed it.  (A peer that invalidates after
		 * this still races us; the protocol never does.)  Reaping may
		 * also end the connection, and with it the window. */
		rpcrdma__vb_reap(c);
		c = g->conn;
	}
	/* The peer's Send With Invalidate did the fence: nothing is posted,
	 * and the work counters (revokes) leave it out. */
	remote = g->invalidated;
	if (g->mw && c && !g->invalidated) {
		struct ibv_send_wr wr, *bad = NULL;
		struct vb_op *o = mem_slot(c);
		int ret;

		if (!o)
			return c->base.state == RPCRDMA_PCONN_ESTABLISHED ? -EAGAIN : -ENOTCONN;
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = (uintptr_t)o;
		wr.opcode = IBV_WR_LOCAL_INV;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.invalidate_rkey = bg->handle;
		ret = ibv_post_send(c->qp, &wr, &bad);
		if (ret) {
			rpcrdma__vb_op_put(c, o);
			return ret == ENOMEM ? -EAGAIN : ret_neg(ret);
		}
		/* The slot owns the window and its registration now. */
		o->op = RPCRDMA_POP_REVOKE;
		o->ctx = ctx;
		o->mw = g->mw;
		o->mr = g->own;
		o->pending = 1;
		g->mw = NULL;
		g->own = NULL;
		p->st.work_requests++;
		later = true;
	}
	if (g->mw) {
		/* Invalidated by the peer: free already. */
		mw_release(p, g->mw);
		g->mw = NULL;
	}
	if (g->own) {
		/* Deregistration is the fence (no windows: it is the grant). */
		int ret = vb_unpin(p, g->own);

		if (ret) {
			/* Its rkey still works on the protection domain, from
			 * any QP of it: failing the instance makes the owner
			 * destroy every QP and connect no more. */
			rpcrdma__vb_fail(p, ret_neg(ret));
			return ret_neg(ret);
		}
		g->own = NULL;
	}
	if (!later)
		emit_revoke(p, ctx);
	rpcrdma__provider_key_retire(&p->keys, bg->handle);
	grant_unlink(p, g);
	if (!remote)
		p->st.revokes++;
	free(g);
	return 0;
}

/*
 * Windows where the device has type 2 ones (one is allocated to be sure),
 * over per-grant registrations on rxe; plain registrations otherwise.
 */
int rpcrdma__vb_pick_mode(struct vb_prov *p, const struct ibv_device_attr *da)
{
	const char *force = getenv("RPCRDMA_VERBS_GRANTS");
	bool rxe = da->vendor_id == VB_RXE_VENDOR_ID;
	bool windows = (da->device_cap_flags &
			(IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B)) &&
		       da->max_mw > 0;

	p->inv_as_csum = rxe;
	p->mw_no_reuse = rxe;
	p->mode = rxe ? VB_GRANT_WINDOW_OWN_MR : VB_GRANT_WINDOW;
	if (force && *force) {
		if (strcmp(force, "window") == 0)
			p->mode = VB_GRANT_WINDOW;
		else if (strcmp(force, "window-own") == 0)
			p->mode = VB_GRANT_WINDOW_OWN_MR;
		else if (strcmp(force, "registration") == 0)
			windows = false;
		else
			return -EINVAL;
	}
	if (windows) {
		struct ibv_mw *mw = ibv_alloc_mw(p->pd, IBV_MW_TYPE_2);

		windows = mw != NULL;
		if (mw) {
			p->use_mw = true;
			p->max_mw = (uint32_t)da->max_mw;
			p->nmw = 1;
			mw_release(p, mw);
		}
	}
	if (!windows)
		p->mode = VB_GRANT_REGISTRATION;
	return 0;
}

/*
 * A Local Invalidate finished, or was flushed with its QP in error: then the
 * window goes, as the QP does.  Either way the peer can no longer reach the
 * memory.
 */
void rpcrdma__vb_revoke_done(struct vb_prov *p, struct vb_op *o)
{
	if (o->mw) {
		if (o->status == RPCRDMA_PST_SUCCESS)
			mw_release(p, o->mw);
		else
			mw_destroy(p, o->mw);
	}
	o->mw = NULL;
	/* Only now: a registration with a window bound over it stays. */
	if (o->mr && vb_unpin(p, o->mr))
		p->st.errors++;
	o->mr = NULL;
	emit_revoke(p, o->ctx);
}

/* Everything left at close, without events; connections are gone already. */
void rpcrdma__vb_mem_close(struct vb_prov *p)
{
	while (!rpcrdma__list_empty(&p->grants)) {
		struct vb_grant *g = rpcrdma__container_of(p->grants.next, struct vb_grant, node);

		if (g->mw)
			mw_destroy(p, g->mw);
		if (g->own)
			(void)vb_unpin(p, g->own);
		grant_unlink(p, g);
		free(g);
	}
	while (p->nfree)
		mw_destroy(p, p->mw_free[--p->nfree]);
	free(p->mw_free);
	while (!rpcrdma__list_empty(&p->mrs))
		rpcrdma__vb_dereg_mr(&rpcrdma__container_of(p->mrs.next, struct vb_mr, node)->base);
}
