/*
 * The server half of the TI-RPC layer: an rpcgen dispatch function served
 * by a struct rpcrdma_server.  Each program/version is registered with the
 * core as RPCRDMA_TIRPC_MAX_PROCS procedures that all lead here:
 *
 *   - decode_args keeps the call's argument stream (valid while the
 *     procedure runs) instead of decoding: the dispatch decodes with
 *     svc_getargs(), through the SVCXPRT's xp_ops, on that stream;
 *   - the procedure builds a struct svc_req and an SVCXPRT on its stack
 *     and runs the dispatch;
 *   - svc_sendreply() and the svcerr_*() calls reach xp_reply: results are
 *     encoded there and then, into a buffer of the request (rpcgen's
 *     results may live on the dispatch's stack, or be freed as soon as it
 *     returns), with DDP-eligible items copied aside; encode_res replays
 *     the bytes, the items through rpcrdma_xdr_encode_ddp() so that they
 *     go in the client's Write chunk, and free_res frees the copies after
 *     the Write.
 *
 * Registrations, as libtirpc's svc_reg(), which keys them by program,
 * version and netid: each server (one transport) may serve a program and
 * version with a dispatch of its own; the same dispatch registered again
 * on a server is accepted, another one refused (-EEXIST, where svc_reg()
 * returns FALSE).  Each registration is the core's context for that
 * program on that server (rpcrdma_server_register2), so a call finds its
 * dispatch without a process-wide look-up, and the registration ends with
 * its server: a program registered anew after rpcrdma_server_destroy() is
 * free to take another dispatch.  libtirpc's svc_unreg() has no
 * counterpart: the core does not take a program off a running server.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tirpc/tirpc_xdr.h"

#define RES_FIRST (4u << 10)
#define RES_MAX ((size_t)64 << 20)
#define RES_MAX_DDP 8u

/* One program/version on one server, from registration to the server's end. */
struct treg {
	const struct rpcrdma_server *srv; /* only compared: valid while listed */
	uint32_t prog, vers;
	void (*dispatch)(struct svc_req *, SVCXPRT *);
	struct rpcrdma_tirpc_binding *binding;
	struct treg *next;
};

/* The live registrations, to tell a repeated one from a conflicting one. */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct treg *regs;

/* The results of one reply, encoded by xp_reply. */
struct tres {
	uint8_t *buf;
	size_t len;
	struct titem {
		size_t off;     /* where its length word was in buf */
		uint8_t *data;  /* a copy: the dispatch's memory is gone by then */
		uint32_t len;
	} items[RES_MAX_DDP];
	unsigned int nitems;
};

/* The DDP context of the result encoding: takes each item aside. */
struct tres_ddp {
	struct rpcrdma_xdr_ddp base;
	struct tres *res;
	int err;
};

/* One request while its dispatch runs. */
struct tsvc {
	struct rpcrdma_xdr_stream *args;
	struct tres *res;
	uint32_t res_items;
	int status;
	bool replied;
	struct sockaddr_storage peer;
	struct authunix_parms aup;
	struct rpcrdma_auth_sys sys;
	gid_t gids[RPCRDMA_AUTH_SYS_NGIDS_MAX];
};

static void res_clear(struct tres *r)
{
	free(r->buf);
	for (unsigned int i = 0; i < r->nitems; i++)
		free(r->items[i].data);
	memset(r, 0, sizeof(*r));
}

static int res_take(struct rpcrdma_xdr_ddp *ddp, size_t pos, const void *data, uint32_t len)
{
	struct tres_ddp *d = (struct tres_ddp *)ddp;
	struct tres *r = d->res;
	struct titem *it;

	/* Beyond the table an item simply stays inline. */
	if (r->nitems >= RES_MAX_DDP || pos < RPCRDMA_XDR_UNIT)
		return 0;
	it = &r->items[r->nitems];
	it->data = malloc(len);
	if (!it->data)
		return -ENOMEM;
	memcpy(it->data, data, len);
	it->off = pos - RPCRDMA_XDR_UNIT;
	it->len = len;
	r->nitems++;
	return 1;
}

static const struct rpcrdma_xdr_ddp_ops res_ddp_ops = {
	.encode = res_take,
	.decode = NULL,
};

/* Encode @proc(@where) into @r, growing the buffer until it fits. */
static int res_encode(struct tres *r, xdrproc_t proc, void *where, uint32_t res_items)
{
	size_t room = RES_FIRST;

	for (;;) {
		struct tres_ddp d = {{&res_ddp_ops}, r, 0};
		struct rpcrdma_xdr_stream s;
		struct rpcrdma__txdr t;
		XDR x;

		res_clear(r);
		r->buf = malloc(room);
		if (!r->buf)
			return -ENOMEM;
		rpcrdma_xdr_init(&s, r->buf, room);
		rpcrdma_xdr_set_ddp(&s, &d.base);
		rpcrdma__txdr_init(&x, &t, &s, XDR_ENCODE, res_items);
		if (!proc || (*proc)(&x, where)) {
			r->len = rpcrdma_xdr_pos(&s);
			return 0;
		}
		if (t.err != RPCRDMA_ERR_NOSPACE || room >= RES_MAX)
			return t.err ? t.err : RPCRDMA_ERR_BAD_VALUE;
		room *= 2;
	}
}

/* encode_res: the bytes xp_reply encoded, DDP-eligible items placed anew. */
static int res_replay(struct rpcrdma_xdr_stream *s, void *obj)
{
	const struct tres *r = obj;
	size_t at = 0;
	int rc;

	for (unsigned int i = 0; i < r->nitems; i++) {
		const struct titem *it = &r->items[i];

		rc = rpcrdma_xdr_encode_fixed_opaque(s, r->buf + at, it->off - at);
		if (!rc)
			rc = rpcrdma_xdr_encode_ddp(s, it->data, it->len);
		if (rc)
			return rc;
		at = it->off + RPCRDMA_XDR_UNIT;
	}
	return rpcrdma_xdr_encode_fixed_opaque(s, r->buf + at, r->len - at);
}

static void res_free(void *obj)
{
	res_clear(obj);
}

/* decode_args: keep the stream for svc_getargs(). */
static int args_keep(struct rpcrdma_xdr_stream *s, void *obj)
{
	*(struct rpcrdma_xdr_stream *)obj = *s;
	return 0;
}

static bool_t xp_recv(SVCXPRT *xp, struct rpc_msg *msg)
{
	(void)xp;
	(void)msg;
	return FALSE;
}

static enum xprt_stat xp_stat(SVCXPRT *xp)
{
	(void)xp;
	return XPRT_IDLE;
}

static bool_t xp_getargs(SVCXPRT *xp, xdrproc_t proc, void *where)
{
	struct tsvc *st = xp->xp_p1;
	struct rpcrdma__txdr t;
	XDR x;

	/* Over RDMA the transport has already pulled Read chunks inline. */
	rpcrdma__txdr_init(&x, &t, st->args, XDR_DECODE, 0);
	if ((*proc)(&x, where))
		return TRUE;
	/*
	 * What the items before the one that failed allocated is ours to
	 * free: rpcgen's dispatch answers GARBAGE_ARGS and never calls
	 * svc_freeargs() after a failed svc_getargs().  libtirpc's XDR_FREE
	 * sets each pointer it frees back to NULL, so a dispatch that calls
	 * svc_freeargs() anyway frees nothing twice.
	 */
	xdr_free(proc, where);
	return FALSE;
}

static bool_t xp_freeargs(SVCXPRT *xp, xdrproc_t proc, void *where)
{
	(void)xp;
	xdr_free(proc, where);
	return TRUE;
}

static bool_t xp_reply(SVCXPRT *xp, struct rpc_msg *msg)
{
	struct tsvc *st = xp->xp_p1;

	res_clear(st->res);
	st->replied = true;
	if (msg->rm_reply.rp_stat != MSG_ACCEPTED) {
		/* The core alone denies calls (RPC version, credentials). */
		st->status = -RPCRDMA_RPC_SYSTEM_ERR;
		return TRUE;
	}
	switch (msg->acpted_rply.ar_stat) {
	case SUCCESS:
		if (res_encode(st->res, msg->acpted_rply.ar_results.proc,
			       msg->acpted_rply.ar_results.where, st->res_items)) {
			res_clear(st->res);
			st->status = -RPCRDMA_RPC_SYSTEM_ERR;
			return FALSE;
		}
		st->status = 0;
		return TRUE;
	case PROG_UNAVAIL:
		st->status = -RPCRDMA_RPC_PROG_UNAVAIL;
		return TRUE;
	case PROC_UNAVAIL:
		st->status = -RPCRDMA_RPC_PROC_UNAVAIL;
		return TRUE;
	case GARBAGE_ARGS:
		st->status = -RPCRDMA_RPC_GARBAGE_ARGS;
		return TRUE;
	default:
		st->status = -RPCRDMA_RPC_SYSTEM_ERR;
		return TRUE;
	}
}

static void xp_destroy(SVCXPRT *xp)
{
	(void)xp;
}

static bool_t xp_control(SVCXPRT *xp, const u_int rq, void *in)
{
	(void)xp;
	(void)rq;
	(void)in;
	return FALSE;
}

static const struct xp_ops svc_ops = {
	.xp_recv = xp_recv,
	.xp_stat = xp_stat,
	.xp_getargs = xp_getargs,
	.xp_reply = xp_reply,
	.xp_freeargs = xp_freeargs,
	.xp_destroy = xp_destroy,
};

static const struct xp_ops2 svc_ops2 = {
	.xp_control = xp_control,
};

/* rq_clntcred for AUTH_SYS, as libtirpc's own servers give it. */
static void *cooked_cred(struct tsvc *st, const struct rpcrdma_opaque_auth *cred)
{
	if (cred->flavor != RPCRDMA_AUTH_SYS || rpcrdma_auth_sys_decode(cred, &st->sys))
		return NULL;
	for (uint32_t i = 0; i < st->sys.ngids; i++)
		st->gids[i] = st->sys.gids[i];
	st->aup.aup_time = st->sys.stamp;
	st->aup.aup_machname = st->sys.machinename;
	st->aup.aup_uid = st->sys.uid;
	st->aup.aup_gid = st->sys.gid;
	st->aup.aup_len = st->sys.ngids;
	st->aup.aup_gids = st->gids;
	return &st->aup;
}

static int run_dispatch(struct rpcrdma_svc_req *req, void *args, void *res)
{
	const struct rpcrdma_rpc_msg *m = rpcrdma_svc_msg(req);
	const struct rpcrdma_opaque_auth *cred = rpcrdma_svc_cred(req);
	const struct sockaddr *peer = rpcrdma_svc_peer(req);
	const struct treg *reg = rpcrdma_svc_prog_ctx(req);
	const struct rpcrdma_tirpc_proc *b;
	struct svc_req rq;
	struct tsvc st;
	SVCXPRT xp;

	if (!reg)
		return -RPCRDMA_RPC_PROG_UNAVAIL; /* our procedures, registered by others */
	b = rpcrdma__tirpc_proc_for(reg->binding, m->u.call.proc);

	memset(&st, 0, sizeof(st));
	st.args = args;
	st.res = res;
	st.res_items = b ? b->res_items : 0;
	st.status = -RPCRDMA_RPC_SYSTEM_ERR;
	memset(&xp, 0, sizeof(xp));
	xp.xp_fd = -1;
	xp.xp_ops = &svc_ops;
	xp.xp_ops2 = &svc_ops2;
	xp.xp_p1 = &st;
	if (peer) {
		socklen_t len = peer->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							    : sizeof(struct sockaddr_in);

		memcpy(&st.peer, peer, len);
		memcpy(&xp.xp_raddr, peer, len);
		xp.xp_addrlen = (int)len;
		xp.xp_rtaddr.buf = &st.peer;
		xp.xp_rtaddr.len = xp.xp_rtaddr.maxlen = len;
	}
	memset(&rq, 0, sizeof(rq));
	rq.rq_prog = m->u.call.prog;
	rq.rq_vers = m->u.call.vers;
	rq.rq_proc = m->u.call.proc;
	rq.rq_cred.oa_flavor = (enum_t)cred->flavor;
	rq.rq_cred.oa_base = (caddr_t)cred->body;
	rq.rq_cred.oa_length = cred->len;
	rq.rq_clntcred = cooked_cred(&st, cred);
	rq.rq_xprt = &xp;
	reg->dispatch(&rq, &xp);
	return st.status;
}

static struct rpcrdma_svc_proc procs[RPCRDMA_TIRPC_MAX_PROCS];
static pthread_once_t procs_once = PTHREAD_ONCE_INIT;

static void procs_init(void)
{
	for (unsigned int i = 0; i < RPCRDMA_TIRPC_MAX_PROCS; i++) {
		procs[i].fn = run_dispatch;
		procs[i].decode_args = args_keep;
		procs[i].args_size = sizeof(struct rpcrdma_xdr_stream);
		procs[i].encode_res = res_replay;
		procs[i].res_size = sizeof(struct tres);
		procs[i].free_res = res_free;
	}
}

static bool same_binding(const struct rpcrdma_tirpc_binding *a,
			 const struct rpcrdma_tirpc_binding *b)
{
	unsigned int na = a ? a->nprocs : 0, nb = b ? b->nprocs : 0;

	if (na != nb)
		return false;
	for (unsigned int i = 0; i < na; i++) {
		const struct rpcrdma_tirpc_proc *x = &a->procs[i], *y = &b->procs[i];

		if (x->proc != y->proc || x->args_items != y->args_items ||
		    x->res_items != y->res_items || x->res_max != y->res_max ||
		    x->idempotent != y->idempotent)
			return false;
	}
	return true;
}

static void reg_free(struct treg *r)
{
	free(r->binding);
	free(r);
}

/* The core's release of a registration: its server is being freed. */
static void reg_release(void *ctx)
{
	struct treg *r = ctx;

	pthread_mutex_lock(&reg_lock);
	for (struct treg **pp = &regs; *pp; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	reg_free(r);
}

/* @srv's registration of @prog/@vers.  Caller holds reg_lock. */
static const struct treg *reg_find_locked(const struct rpcrdma_server *srv, uint32_t prog,
					  uint32_t vers)
{
	for (const struct treg *r = regs; r; r = r->next)
		if (r->srv == srv && r->prog == prog && r->vers == vers)
			return r;
	return NULL;
}

int rpcrdma_tirpc_svc_reg(struct rpcrdma_server *srv, rpcprog_t prog, rpcvers_t vers,
			  void (*dispatch)(struct svc_req *, SVCXPRT *),
			  const struct rpcrdma_tirpc_binding *binding)
{
	const struct treg *old;
	struct treg *r;
	int rc;

	if (!srv || !dispatch)
		return -EINVAL;
	pthread_once(&procs_once, procs_init);
	/*
	 * One critical section from the look-up to the listing: two threads
	 * registering the same dispatch at once must not both find nothing,
	 * or the core refuses the second with -EEXIST.  ORDER: reg_lock,
	 * then the server's own lock (rpcrdma_server_register2); reg_release
	 * takes reg_lock alone.
	 */
	pthread_mutex_lock(&reg_lock);
	old = reg_find_locked(srv, (uint32_t)prog, (uint32_t)vers);
	if (old) {
		/* As svc_reg(): the same dispatch again is no error, another one is. */
		rc = old->dispatch == dispatch && same_binding(old->binding, binding) ? 0 : -EEXIST;
		goto out_unlock;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		rc = -ENOMEM;
		goto out_unlock;
	}
	rc = rpcrdma__tirpc_binding_copy(binding, &r->binding);
	if (rc) {
		free(r);
		goto out_unlock;
	}
	r->srv = srv;
	r->prog = (uint32_t)prog;
	r->vers = (uint32_t)vers;
	r->dispatch = dispatch;
	rc = rpcrdma_server_register2(srv, (uint32_t)prog, (uint32_t)vers, procs,
				      RPCRDMA_TIRPC_MAX_PROCS, r, reg_release);
	if (rc) {
		/* -EEXIST here: registered on this server through
		 * rpcrdma_server_register().  The core keeps nothing of it. */
		reg_free(r);
		goto out_unlock;
	}
	/* Listed before reg_lock is released, so before the server's end can
	 * call reg_release. */
	r->next = regs;
	regs = r;
	pthread_mutex_unlock(&reg_lock);
	for (unsigned int i = 0; binding && i < binding->nprocs; i++)
		if (binding->procs[i].idempotent &&
		    binding->procs[i].proc < RPCRDMA_TIRPC_MAX_PROCS)
			(void)rpcrdma_server_set_idempotent(srv, (uint32_t)prog, (uint32_t)vers,
							    binding->procs[i].proc, true);
	return 0;

out_unlock:
	pthread_mutex_unlock(&reg_lock);
	return rc;
}
