/*
 * svc.c - the RPC server, transport-neutral: the program registry, call
 * dispatch, credential checks, deferred replies, duplicates through the
 * request cache (drc.h), worker loops and counters.  Replies are encoded,
 * cached and sent in svc_reply.c.  A transport (transport.h) accepts
 * connections and moves the bytes.
 *
 * A call is checked in the order the reply forms imply (route_call), then
 * runs, through the cache unless its procedure is idempotent (run_cached).
 * free_res runs only once the transport no longer reads the results (over
 * RDMA they may be written straight from the procedure's memory).  The
 * whole story is in docs/architecture.md ("The RPC server").
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/trace.h"
#include "rpc/svc_internal.h"

void rpcrdma_server_opts_default(struct rpcrdma_server_opts *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->transport = RPCRDMA_TRANSPORT_RDMA;
	opts->provider = "ofi";
	opts->inline_send = 0; /* the transport's default for its provider */
	opts->inline_recv = 0;
	opts->credits = 32;
	opts->min_vers = 1;
	opts->max_vers = 2;
	opts->accept_msgp = false;
	opts->drc_entries = RPCRDMA__DRC_DEFAULT_ENTRIES;
	opts->max_record = 0;
	opts->workers = 0;
}

/* Life cycle helpers (as in clnt.c: free only with nothing of ours on the stack). */

int rpcrdma__svc_finalize(struct rpcrdma_server *s)
{
	struct rpcrdma_loop *loop = s->loop;
	bool worker = s->root != s;
	unsigned int kept = 0;

	/* The transport's destroy below completes replies still in flight
	 * (rpcrdma__svc_reply_done): they must not start the free again. */
	s->finalizing = true;
	rpcrdma__timer_stop(&s->free_timer);
	/* Backchannels send on our connections: they go before them.  Their
	 * calls still outstanding complete now, while the requests deferred
	 * on them still wait: a completion may answer its own. */
	if (s->bc.finalize)
		s->bc.finalize(s);
	/*
	 * Deferred calls left get SYSTEM_ERR, which also serves the
	 * duplicates parked on them; parked ones left (their original was
	 * answered meanwhile, or dropped with its connection) are dropped.
	 */
	while (!rpcrdma__list_empty(&s->waiting)) {
		struct rpcrdma_svc_req *r =
		    rpcrdma__container_of(s->waiting.next, struct rpcrdma_svc_req, wnode);

		rpcrdma__svc_waiting_remove(s, r);
		if (atomic_load_explicit(&r->state, memory_order_relaxed) == RPCRDMA__SVC_DEFERRED) {
			rpcrdma__svc_answer(s, r, -RPCRDMA_RPC_SYSTEM_ERR);
		} else {
			rpcrdma__svc_drop_parked(s, r);
		}
	}
	/* The listener goes first: nothing is handed to a worker after. */
	s->ops->destroy(s->t);
	if (!worker) {
		kept = rpcrdma__svc_workers_stop(s);
		rpcrdma__drc_destroy(s->drc);
		while (s->progs) {
			struct rpcrdma__svc_prog *p = s->progs;

			s->progs = p->next;
			/* Every request is answered and every worker gone:
			 * nothing reads the context any more. */
			if (p->release)
				p->release(p->ctx);
			free(p->procs);
			free((void *)p->idempotent);
			free(p);
		}
		pthread_rwlock_destroy(&s->reg_lock);
		pthread_mutex_destroy(&s->drc_lock);
	}
	rpcrdma__svc_core_fini(s);
	rpcrdma__loop_unref(loop);
	free(s);
	/* A worker's thread returns once its core is gone (worker_main). */
	if (worker)
		rpcrdma_loop_stop(loop);
	return kept ? -EBUSY : 0;
}

/*
 * A backchannel's reverse call completes with our transport's receive
 * handler below it on the stack (its reply came in on our connection), or
 * from its own core's timers while its requester sits on our device, and
 * our busy count knows nothing of either: a server destroyed from such a
 * completion must wait for it to return, as for one of our procedures.
 */
static bool bc_busy(struct rpcrdma_server *s)
{
	return s->bc.busy && s->bc.busy(s);
}

static void free_cb(struct rpcrdma__timer *tm)
{
	struct rpcrdma_server *s = tm->ctx;

	if (s->busy != 0)
		return;
	if (bc_busy(s)) {
		rpcrdma__timer_start(s->loop, &s->free_timer, 1, free_cb, s);
		return;
	}
	(void)rpcrdma__svc_finalize(s); /* deferred: nobody to tell */
}

static void enter(struct rpcrdma_server *s)
{
	s->busy++;
}

static void leave(struct rpcrdma_server *s)
{
	/* Answers given from inside the finalize (a backchannel call's
	 * completion) must not start it again. */
	if (--s->busy == 0 && s->destroying && !s->finalizing)
		rpcrdma__timer_start(s->loop, &s->free_timer, 0, free_cb, s);
}

/*
 * Over RDMA a reply whose results are written from the procedure's memory
 * is done when that Write completes: from the transport's completion
 * handler, with none of our calls on the stack to hold us busy.  free_res
 * runs here and may destroy the server; it must then wait until the
 * handler has returned, as from a procedure.
 */
void rpcrdma__svc_reply_done(struct rpcrdma_svc_req *r)
{
	struct rpcrdma_server *s = r->srv;

	if (s->finalizing) {
		rpcrdma__svc_req_free(r);
		return;
	}
	enter(s);
	rpcrdma__svc_req_free(r);
	leave(s);
}

void rpcrdma__svc_waiting_add(struct rpcrdma_server *s, struct rpcrdma_svc_req *r)
{
	rpcrdma__list_add_head(&s->waiting, &r->wnode);
}

void rpcrdma__svc_waiting_remove(struct rpcrdma_server *s, struct rpcrdma_svc_req *r)
{
	(void)s;
	rpcrdma__list_del(&r->wnode);
}

/* Dispatch. */

/* 0, or the auth_stat to refuse the call with. */
static uint32_t check_auth(const struct rpcrdma_rpc_call *call)
{
	struct rpcrdma_auth_sys sys;

	switch (call->cred.flavor) {
	case RPCRDMA_AUTH_NONE:
		if (call->cred.len != 0)
			return RPCRDMA_AUTH_BADCRED;
		break;
	case RPCRDMA_AUTH_SYS:
		if (rpcrdma_auth_sys_decode(&call->cred, &sys) != 0)
			return RPCRDMA_AUTH_BADCRED;
		break;
	default:
		return RPCRDMA_AUTH_BADCRED;
	}
	if (call->verf.flavor != RPCRDMA_AUTH_NONE || call->verf.len != 0)
		return RPCRDMA_AUTH_BADVERF;
	return 0;
}

/*
 * A header that does not decode: answer AUTH_BADCRED when it is a version 2
 * call whose only fault is an over-long auth body, else drop it.
 */
static bool header_refused(struct rpcrdma_svc_req *r, const struct rpcrdma_xdr_stream *msg, int rc)
{
	struct rpcrdma_xdr_stream xdr = *msg;
	uint32_t xid, type, vers;

	if (rc != RPCRDMA_ERR_TOO_LONG || rpcrdma_xdr_decode_u32(&xdr, &xid) ||
	    rpcrdma_xdr_decode_u32(&xdr, &type) || rpcrdma_xdr_decode_u32(&xdr, &vers) ||
	    type != RPCRDMA_RPC_CALL || vers != RPCRDMA_RPC_VERSION)
		return false;
	r->msg.xid = xid;
	r->msg.type = RPCRDMA_RPC_CALL;
	r->msg.u.call.rpcvers = vers;
	return true;
}

static void run_proc(struct rpcrdma_server *s, struct rpcrdma_svc_req *r,
		     struct rpcrdma_xdr_stream *msg)
{
	const struct rpcrdma_svc_proc *p = r->proc;
	int rc;

	/* One block for both (svc_req_free frees args), res aligned for any
	 * type. */
	size_t align = _Alignof(max_align_t);
	size_t res_off = p->args_size + (align - p->args_size % align) % align;
	size_t total = res_off + p->res_size + 1;

	if (res_off < p->args_size || total <= res_off) {
		r->args = NULL;
	} else if (total <= RPCRDMA__SVC_INLINE_ARGS) {
		r->args = memset(r->inline_args, 0, total);
	} else {
		r->args = calloc(1, total);
	}
	r->res = r->args ? (char *)r->args + res_off : NULL;
	if (!r->args) {
		rpcrdma__svc_reply_accepted(s, r, RPCRDMA_RPC_SYSTEM_ERR, 0, 0);
		return;
	}
	if (p->decode_args && p->decode_args(msg, r->args) != 0) {
		rpcrdma__svc_reply_accepted(s, r, RPCRDMA_RPC_GARBAGE_ARGS, 0, 0);
		return;
	}
	r->ran = true;
	rc = p->fn(r, r->args, r->res);
	if (rc == RPCRDMA_SVC_DEFERRED && !s->destroying) {
		atomic_store_explicit(&r->state, RPCRDMA__SVC_DEFERRED, memory_order_relaxed);
		rpcrdma__svc_waiting_add(s, r);
		return;
	}
	rpcrdma__svc_answer(s, r, rc == RPCRDMA_SVC_DEFERRED ? -RPCRDMA_RPC_SYSTEM_ERR : rc);
}

/* The registered program @prog, version @vers; @low, @high: its version range. */
static const struct rpcrdma__svc_prog *find_prog(const struct rpcrdma_server *s, uint32_t prog,
						 uint32_t vers, bool *known, uint32_t *low,
						 uint32_t *high)
{
	const struct rpcrdma__svc_prog *hit = NULL;

	*known = false;
	for (const struct rpcrdma__svc_prog *p = s->root->progs; p; p = p->next) {
		if (p->prog != prog)
			continue;
		if (!*known || p->vers < *low)
			*low = p->vers;
		if (!*known || p->vers > *high)
			*high = p->vers;
		*known = true;
		if (p->vers == vers)
			hit = p;
	}
	return hit;
}

/*
 * A duplicate whose original runs on another worker cannot be handed that
 * worker's reply (each worker's requests are its own thread's), so it looks
 * at the shared cache now and then until the reply is there.  This is rare:
 * a client that reconnected while its call was still executing.
 */
#define WATCH_FIRST_MS 2u
#define WATCH_MAX_MS 500u

static void watch_look(struct rpcrdma__timer *tm)
{
	struct rpcrdma_svc_req *r = tm->ctx;
	struct rpcrdma_server *s = r->srv;
	struct rpcrdma_server *root = s->root;
	struct rpcrdma__drc_entry *e;
	struct rpcrdma__svc_cached c;
	bool ok = false;

	pthread_mutex_lock(&root->drc_lock);
	switch (rpcrdma__drc_lookup(root->drc, &r->key, &e)) {
	case RPCRDMA__DRC_IN_PROGRESS:
		pthread_mutex_unlock(&root->drc_lock);
		r->watch_ms = r->watch_ms * 2 < WATCH_MAX_MS ? r->watch_ms * 2 : WATCH_MAX_MS;
		rpcrdma__timer_start(s->loop, &r->watch, r->watch_ms, watch_look, r);
		return;
	case RPCRDMA__DRC_DONE:
		ok = rpcrdma__svc_cached_copy(root->drc, e, &c);
		break;
	case RPCRDMA__DRC_NEW:
		/* The original's reply is gone: its entry was evicted for
		 * newer calls before we looked, or it produced none.  We run
		 * the call, as a retransmission arriving now would be run:
		 * dropped, this one would be a lost reply, since a client
		 * sends again only after its connection is lost (over RDMA
		 * always), not while it waits on a live one.  The stream
		 * still holds the arguments (rpc.h: until the reply is sent
		 * or the call dropped). */
		if (e)
			*rpcrdma__drc_owner(e) = r;
		pthread_mutex_unlock(&root->drc_lock);
		enter(s);
		rpcrdma__svc_waiting_remove(s, r);
		atomic_store_explicit(&r->state, RPCRDMA__SVC_RUNNING, memory_order_relaxed);
		r->drc = e;
		run_proc(s, r, &r->wargs);
		leave(s);
		return;
	}
	pthread_mutex_unlock(&root->drc_lock);
	enter(s);
	rpcrdma__svc_waiting_remove(s, r);
	if (ok)
		rpcrdma__svc_send_cached(s, r, c.bytes, c.len, c.ddp, c.nddp);
	else
		s->ops->reply_lost(r->t, -ENOMEM);
	rpcrdma__svc_cached_free(&c);
	rpcrdma__svc_req_free(r);
	leave(s);
}

/*
 * The checks between a decoded call header and its procedure, in the order
 * RFC 5531's reply forms imply.  Returns the program with r->proc set, or
 * NULL once @r has been answered with the error.
 */
static const struct rpcrdma__svc_prog *route_call(struct rpcrdma_server *s,
						  struct rpcrdma_svc_req *r)
{
	const struct rpcrdma_rpc_call *call = &r->msg.u.call;
	const struct rpcrdma__svc_prog *prog;
	uint32_t low = 0, high = 0, auth;
	bool known;

	if (call->rpcvers != RPCRDMA_RPC_VERSION) {
		rpcrdma__svc_reply_denied(s, r, RPCRDMA_RPC_MISMATCH, 0);
		return NULL;
	}
	auth = check_auth(call);
	if (auth) {
		rpcrdma__svc_reply_denied(s, r, RPCRDMA_RPC_AUTH_ERROR, auth);
		return NULL;
	}
	/* Registered programs are never removed while the server lives, so
	 * what the lookup returns stays valid after the lock. */
	pthread_rwlock_rdlock(&s->root->reg_lock);
	prog = find_prog(s, call->prog, call->vers, &known, &low, &high);
	pthread_rwlock_unlock(&s->root->reg_lock);
	if (!known) {
		rpcrdma__svc_reply_accepted(s, r, RPCRDMA_RPC_PROG_UNAVAIL, 0, 0);
		return NULL;
	}
	if (!prog) {
		rpcrdma__svc_reply_accepted(s, r, RPCRDMA_RPC_PROG_MISMATCH, low, high);
		return NULL;
	}
	if (call->proc >= prog->nprocs || !prog->procs[call->proc].fn) {
		rpcrdma__svc_reply_accepted(s, r, RPCRDMA_RPC_PROC_UNAVAIL, 0, 0);
		return NULL;
	}
	r->proc = &prog->procs[call->proc];
	r->prog_ctx = prog->ctx;
	return prog;
}

/*
 * A call that is not idempotent, through the duplicate request cache: a new
 * one runs, a duplicate of an answered one gets the cached reply, and a
 * duplicate of one still running waits for its reply (parked here, or
 * watching the shared cache when the original runs on another worker).
 */
static void run_cached(struct rpcrdma_server *s, struct rpcrdma_svc_req *r,
		       struct rpcrdma_xdr_stream *msg)
{
	struct rpcrdma_server *root = s->root;
	const struct rpcrdma_rpc_call *call = &r->msg.u.call;
	struct rpcrdma__sreq *t = r->t;
	struct rpcrdma__drc_entry *e;
	struct rpcrdma__drc_key key;

	rpcrdma__drc_key_init(&key, r->msg.xid, call->prog, call->vers, call->proc, t->peer, msg);
	/* drc.h: the port counts over TCP only, where clients keep it. */
	rpcrdma__drc_key_bind(&key, t->peer, s->opts.transport == RPCRDMA_TRANSPORT_TCP,
			      call->cred.flavor, call->cred.body, call->cred.len);
	pthread_mutex_lock(&root->drc_lock);
	switch (rpcrdma__drc_lookup(root->drc, &key, &e)) {
	case RPCRDMA__DRC_NEW:
		if (e)
			*rpcrdma__drc_owner(e) = r;
		pthread_mutex_unlock(&root->drc_lock);
		r->drc = e;
		run_proc(s, r, msg);
		break;
	case RPCRDMA__DRC_DONE: {
		struct rpcrdma__svc_cached c;
		bool ok;

		s->dups++;
		/* A copy: once the lock is dropped another worker may
		 * evict the entry. */
		ok = rpcrdma__svc_cached_copy(root->drc, e, &c);
		pthread_mutex_unlock(&root->drc_lock);
		if (ok)
			rpcrdma__svc_send_cached(s, r, c.bytes, c.len, c.ddp, c.nddp);
		else
			s->ops->reply_lost(t, -ENOMEM);
		rpcrdma__svc_cached_free(&c);
		rpcrdma__svc_req_free(r);
		break;
	}
	case RPCRDMA__DRC_IN_PROGRESS: {
		struct rpcrdma_svc_req *orig = *rpcrdma__drc_owner(e);
		/* ORDER: under the lock.  An original on another worker may
		 * be answered and freed once it is dropped; one on this
		 * worker cannot, before we return. */
		bool orig_here = orig && orig->srv == s;

		s->dups++;
		pthread_mutex_unlock(&root->drc_lock);
		if (!orig_here) {
			atomic_store_explicit(&r->state, RPCRDMA__SVC_WATCHING, memory_order_relaxed);
			r->key = key;
			r->wargs = *msg;
			/* A stream over one buffer points into itself. */
			if (msg->iov == &msg->single)
				r->wargs.iov = &r->wargs.single;
			r->watch_ms = WATCH_FIRST_MS;
			rpcrdma__svc_waiting_add(s, r);
			rpcrdma__timer_start(s->loop, &r->watch, r->watch_ms, watch_look, r);
			break;
		}
		/* The original runs here: the duplicate waits for its reply,
		 * with those parked before it.  Which copy the client waits
		 * for is not the last to arrive: copies come in the order
		 * their connections deliver them, and one sent on a
		 * connection the client has since lost may come after the
		 * copy on its new one.  So all are answered, up to a bound
		 * beyond which the earliest to arrive goes. */
		{
			struct rpcrdma_svc_req *q = orig->parked;
			unsigned int n = 1;

			for (; q && q->older; q = q->older)
				n++;
			if (q && n >= RPCRDMA__SVC_PARKED_MAX)
				rpcrdma__svc_drop_parked(s, q);
		}
		atomic_store_explicit(&r->state, RPCRDMA__SVC_PARKED, memory_order_relaxed);
		r->orig = orig;
		r->older = orig->parked;
		orig->parked = r;
		rpcrdma__svc_waiting_add(s, r);
		break;
	}
	}
}

static void on_call(void *ctx, struct rpcrdma__sreq *t, struct rpcrdma_xdr_stream *msg)
{
	struct rpcrdma_server *s = ctx;
	const struct rpcrdma__svc_prog *prog;
	struct rpcrdma_svc_req *r;
	bool refused = false;
	int rc;

	enter(s);
	if (s->destroying)
		goto out_drop;
	r = rpcrdma__svc_req_new(s, t);
	if (!r) {
		/* A call, for all we know, owed an answer we have no memory
		 * for: closing makes the client send it again at once. */
		s->ops->reply_lost(t, -ENOMEM);
		goto out;
	}

	rc = rpcrdma_rpc_decode_msg(msg, &r->msg);
	if (rc) {
		/* A failed decode leaves r->msg as it was: partly uncleared. */
		memset(&r->msg, 0, sizeof(r->msg));
		refused = header_refused(r, msg, rc);
	}
	rpcrdma__svc_req_publish(r);
	if (rc) {
		if (refused) {
			rpcrdma__svc_reply_denied(s, r, RPCRDMA_RPC_AUTH_ERROR,
						  RPCRDMA_AUTH_BADCRED);
			goto out;
		}
		rpcrdma__svc_req_free(r);
		goto out_drop;
	}
	if (r->msg.type != RPCRDMA_RPC_CALL) {
		rpcrdma__svc_req_free(r);
		goto out_drop;
	}
	prog = route_call(s, r);
	if (!prog)
		goto out;
	if (atomic_load_explicit(&prog->idempotent[r->msg.u.call.proc], memory_order_relaxed)) {
		/* Running it again is as good as a cached reply, and much
		 * cheaper than copying every reply into the cache: no entry,
		 * a retransmission runs it again. */
		run_proc(s, r, msg);
		goto out;
	}
	run_cached(s, r, msg);
out:
	leave(s);
	return;

out_drop:
	s->bad_msgs += !s->destroying;
	s->ops->reply_drop(t);
	leave(s);
}

void rpcrdma__svc_bounds_of(const struct rpcrdma_server_opts *opts,
			    const struct rpcrdma__svc_cb *cb, void *cb_ctx,
			    struct rpcrdma__svc_bounds *out)
{
	uint32_t shortest;

	out->max_queued_total = opts->max_queued_total ? opts->max_queued_total
						       : RPCRDMA__SVC_QUEUED_TOTAL_DEFAULT;
	out->queued_total = cb && cb->queued_total ? cb->queued_total(cb_ctx) : NULL;

	out->max_conns = opts->max_conns ? opts->max_conns : RPCRDMA__SVC_MAX_CONNS_DEFAULT;
	out->idle_ms = opts->idle_timeout_ms ? opts->idle_timeout_ms : RPCRDMA__SVC_IDLE_MS_DEFAULT;
	out->record_ms =
	    opts->record_timeout_ms ? opts->record_timeout_ms : RPCRDMA__SVC_RECORD_MS_DEFAULT;
	out->drain_ms =
	    opts->drain_timeout_ms ? opts->drain_timeout_ms : RPCRDMA__SVC_DRAIN_MS_DEFAULT;
	out->max_queued = opts->max_conn_queued ? opts->max_conn_queued : RPCRDMA__SVC_QUEUED_DEFAULT;
	/* A server-wide bound, shared equally by the listener's transport
	 * and each worker's: each waits on its own share, so no call waits
	 * on another thread's releases, and together they stay within it. */
	out->max_read_bytes =
	    opts->max_read_bytes ? opts->max_read_bytes : RPCRDMA__SVC_READ_BYTES_DEFAULT;
	out->cores = cb && cb->cores ? cb->cores(cb_ctx) : 1;
	out->max_read_bytes /= out->cores;
	shortest = out->idle_ms;
	if (out->record_ms < shortest)
		shortest = out->record_ms;
	if (out->drain_ms < shortest)
		shortest = out->drain_ms;
	out->tick_ms = shortest / 4;
	if (out->tick_ms < 10)
		out->tick_ms = 10;
	if (out->tick_ms > 5000)
		out->tick_ms = 5000;
}

static enum rpcrdma__svc_admit on_conn_admit(void *ctx)
{
	struct rpcrdma_server *root = ((struct rpcrdma_server *)ctx)->root;
	unsigned int max = root->opts.max_conns ? root->opts.max_conns
						: RPCRDMA__SVC_MAX_CONNS_DEFAULT;
	unsigned int n = atomic_load(&root->nconns);

	/* Released on the workers' threads, admitted only here. */
	do {
		if (n >= max)
			goto out_full;
	} while (!atomic_compare_exchange_weak(&root->nconns, &n, n + 1));
	return RPCRDMA__SVC_ADMITTED;

out_full:
	/* The least recently active idle connection makes room (svc_lru.c);
	 * it keeps counting until it is gone, so the newcomer counts beyond
	 * max_conns meanwhile. */
	if (root->opts.refuse_at_max_conns || !rpcrdma__svc_lru_evict_one(root))
		return RPCRDMA__SVC_REFUSED;
	atomic_fetch_add(&root->nconns, 1);
	return RPCRDMA__SVC_ADMITTED_EVICTING;
}

static bool on_conn_nofile(void *ctx)
{
	struct rpcrdma_server *root = ((struct rpcrdma_server *)ctx)->root;

	return !root->opts.refuse_at_max_conns && rpcrdma__svc_lru_evict_one(root);
}

static void on_conn_release(void *ctx)
{
	struct rpcrdma_server *root = ((struct rpcrdma_server *)ctx)->root;

	atomic_fetch_sub(&root->nconns, 1);
}

static void on_conn_closed(void *ctx, void *conn)
{
	/*
	 * Nothing to do: requests from that connection stay valid until
	 * answered, and their replies go to the cache, where a retransmission
	 * on the next connection finds them.
	 */
	(void)ctx;
	(void)conn;
}

/* Every transport of the server, and of its workers, counts in the root. */
static _Atomic size_t *on_queued_total(void *ctx)
{
	return &((struct rpcrdma_server *)ctx)->root->queued_total;
}

static size_t size_mul_sat(size_t a, size_t b)
{
	return b && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

static size_t size_add_sat(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/*
 * max_recv_total.  A connection gets its configured credits' receive
 * buffers only while what stays would still give every further
 * connection up to max_conns its fewest; otherwise what stays beyond
 * that, but at least its fewest, while they fit at all.  So a flood of
 * connections cannot take the budget from those that come after it, and
 * the first ones, with the most to do in a server's usual life, keep
 * their full credits.
 */
static size_t on_recv_reserve(void *ctx, size_t min, size_t full, size_t each)
{
	struct rpcrdma_server *root = ((struct rpcrdma_server *)ctx)->root;
	size_t max = root->opts.max_recv_total ? root->opts.max_recv_total
					       : RPCRDMA__SVC_RECV_TOTAL_DEFAULT;
	unsigned int max_conns = root->opts.max_conns ? root->opts.max_conns
						      : RPCRDMA__SVC_MAX_CONNS_DEFAULT;
	unsigned int n = atomic_load(&root->nconns); /* this one included */
	size_t used = atomic_load(&root->recv_reserved);
	size_t give, avail, keep;

	if (min > full)
		min = full;
	/* Beyond max_conns, each newcomer has an idle connection being
	 * closed for it (svc_lru.c), whose reservation comes back soon: it
	 * takes its fewest meanwhile, or eviction would gain it nothing. */
	if (n > max_conns)
		max = size_add_sat(max, size_mul_sat(n - max_conns, each));
	do {
		if (used > max || max - used < min)
			return 0;
		avail = max - used;
		keep = n < max_conns ? max_conns - n : 0;
		keep = size_mul_sat(keep, each);
		give = avail > keep ? avail - keep : 0;
		if (give > full)
			give = full;
		if (give < min)
			give = min;
	} while (!atomic_compare_exchange_weak(&root->recv_reserved, &used, used + give));
	return give;
}

static void on_recv_unreserve(void *ctx, size_t bytes)
{
	atomic_fetch_sub(&((struct rpcrdma_server *)ctx)->root->recv_reserved, bytes);
}

static void on_recv_charge(void *ctx, size_t bytes)
{
	atomic_fetch_add(&((struct rpcrdma_server *)ctx)->root->recv_reserved, bytes);
}

/* The server's loop and its workers: what shares a server-wide bound. */
static unsigned int on_cores(void *ctx)
{
	struct rpcrdma_server *root = ((struct rpcrdma_server *)ctx)->root;

	return root->opts.workers ? root->opts.workers + 1 : 1;
}

/* What the transports call: the listener's, and each worker's. */

static const struct rpcrdma__svc_cb svc_cb = {
    .call = on_call,
    .conn_closed = on_conn_closed,
    .place = rpcrdma__svc_place,
    .conn_admit = on_conn_admit,
    .conn_release = on_conn_release,
    .conn_nofile = on_conn_nofile,
    .conn_idle = rpcrdma__svc_lru_idle,
    .conn_stalled = rpcrdma__svc_lru_stalled,
    .conn_busy = rpcrdma__svc_lru_busy,
    .queued_total = on_queued_total,
    .recv_reserve = on_recv_reserve,
    .recv_unreserve = on_recv_unreserve,
    .recv_charge = on_recv_charge,
    .cores = on_cores,
};

static const struct rpcrdma__svc_cb worker_cb = {
    .call = on_call,
    .conn_closed = on_conn_closed,
    .conn_release = on_conn_release,
    .conn_idle = rpcrdma__svc_lru_idle,
    .conn_stalled = rpcrdma__svc_lru_stalled,
    .conn_busy = rpcrdma__svc_lru_busy,
    .queued_total = on_queued_total,
    .recv_reserve = on_recv_reserve,
    .recv_unreserve = on_recv_unreserve,
    .recv_charge = on_recv_charge,
    .cores = on_cores,
};

/* Public API. */

int rpcrdma_server_create(struct rpcrdma_loop *loop, const char *host, const char *service,
			  const struct rpcrdma_server_opts *opts, struct rpcrdma_server **out)
{
	const struct rpcrdma__svc_transport_ops *ops;
	struct sockaddr_storage ss;
	struct rpcrdma_server *s;
	socklen_t sslen;
	int rc;

	if (!loop || !service || !out)
		return -EINVAL;
	if (opts && opts->workers > RPCRDMA__SVC_WORKERS_MAX) {
		RPCRDMA__TRACE_BAD_ARG(-EINVAL, "rpcrdma_server_opts.workers = %u: above %u",
				       opts->workers, RPCRDMA__SVC_WORKERS_MAX);
		return -EINVAL;
	}
	if (opts && opts->drc_entries > RPCRDMA__DRC_MAX_ENTRIES) {
		RPCRDMA__TRACE_BAD_ARG(-EINVAL, "rpcrdma_server_opts.drc_entries = %u: above %u",
				       opts->drc_entries, RPCRDMA__DRC_MAX_ENTRIES);
		return -EINVAL;
	}
	/* Every call would be refused as too large, after the connection. */
	if (opts && opts->max_record && opts->max_record < RPCRDMA_SERVER_MAX_RECORD_MIN) {
		RPCRDMA__TRACE_BAD_ARG(-EINVAL,
				       "rpcrdma_server_opts.max_record = %u: below %u (the "
				       "smallest call; 0: the default)",
				       opts->max_record, RPCRDMA_SERVER_MAX_RECORD_MIN);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	rpcrdma__svc_core_init(s);
	if (opts)
		s->opts = *opts;
	else
		rpcrdma_server_opts_default(&s->opts);
	s->root = s;
	rc = rpcrdma__svc_ops_for(s->opts.transport, &ops);
	if (rc == -EINVAL)
		RPCRDMA__TRACE_BAD_ARG(rc, "rpcrdma_server_opts.transport = %d: not a transport",
				       (int)s->opts.transport);
	if (!rc && s->opts.transport == RPCRDMA_TRANSPORT_RDMA) {
		/* The RDMA transport refuses the range itself (-EPROTONOSUPPORT):
		 * say here which one, as rpc.h's defaults read it. */
		uint32_t lo = s->opts.min_vers ? s->opts.min_vers : 1;
		uint32_t hi = s->opts.max_vers ? s->opts.max_vers : 2;

		if (lo > hi || hi > 2)
			RPCRDMA__TRACE_BAD_ARG(-EPROTONOSUPPORT,
					       "rpcrdma_server_opts.min_vers..max_vers = %u..%u: "
					       "versions 1 and 2 only, min_vers at most max_vers",
					       lo, hi);
	}
	if (!rc)
		rc = rpcrdma__resolve(host, service, true, &ss, &sslen);
	if (!rc)
		rc = rpcrdma__drc_create(s->opts.drc_entries, 0, &s->drc);
	if (rc) {
		rpcrdma__svc_core_fini(s);
		free(s);
		return rc;
	}
	pthread_rwlock_init(&s->reg_lock, NULL);
	pthread_mutex_init(&s->drc_lock, NULL);
	s->loop = loop;
	s->ops = ops;
	rpcrdma__loop_ref(loop);
	if (s->opts.workers) {
		s->workers = calloc(s->opts.workers, sizeof(*s->workers));
		rc = s->workers ? 0 : -ENOMEM;
		if (!rc && !ops->worker)
			rc = -EOPNOTSUPP;
		for (unsigned int i = 0; !rc && i < s->opts.workers; i++) {
			s->nworkers = i + 1;
			rc = rpcrdma__svc_worker_start(s, &s->workers[i], (struct sockaddr *)&ss, sslen,
						  &worker_cb);
		}
	}
	if (!rc)
		rc = ops->listen(loop, (struct sockaddr *)&ss, sslen, &s->opts, &svc_cb, s, &s->t);
	if (rc) {
		(void)rpcrdma__svc_workers_stop(s); /* none ran a procedure */
		rpcrdma__drc_destroy(s->drc);
		pthread_rwlock_destroy(&s->reg_lock);
		pthread_mutex_destroy(&s->drc_lock);
		rpcrdma__loop_unref(loop);
		rpcrdma__svc_core_fini(s);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int rpcrdma_server_register(struct rpcrdma_server *s, uint32_t prog, uint32_t vers,
			    const struct rpcrdma_svc_proc *procs, uint32_t nprocs)
{
	return rpcrdma_server_register2(s, prog, vers, procs, nprocs, NULL, NULL);
}

int rpcrdma_server_register2(struct rpcrdma_server *s, uint32_t prog, uint32_t vers,
			     const struct rpcrdma_svc_proc *procs, uint32_t nprocs, void *ctx,
			     void (*release)(void *ctx))
{
	struct rpcrdma__svc_prog *p;
	int rc = 0;

	if (!s)
		return -EINVAL;
	if ((nprocs && !procs) || s->destroying) {
		if (s->destroying)
			RPCRDMA__TRACE_BAD_ARG(-EINVAL, "rpcrdma_server_register(%u, %u): the "
					       "server is being destroyed", prog, vers);
		else
			RPCRDMA__TRACE_BAD_ARG(-EINVAL, "rpcrdma_server_register(%u, %u): %u "
					       "procedures and a NULL procs", prog, vers, nprocs);
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (nprocs) {
		p->procs = calloc(nprocs, sizeof(*procs));
		p->idempotent = calloc(nprocs, sizeof(*p->idempotent));
		if (!p->procs || !p->idempotent) {
			free(p->procs);
			free((void *)p->idempotent);
			free(p);
			return -ENOMEM;
		}
		memcpy(p->procs, procs, nprocs * sizeof(*procs));
	}
	p->prog = prog;
	p->vers = vers;
	p->nprocs = nprocs;
	p->ctx = ctx;
	p->release = release;
	pthread_rwlock_wrlock(&s->reg_lock);
	for (const struct rpcrdma__svc_prog *q = s->progs; q; q = q->next) {
		if (q->prog == prog && q->vers == vers)
			rc = -EEXIST;
	}
	if (!rc) {
		p->next = s->progs;
		s->progs = p;
	}
	pthread_rwlock_unlock(&s->reg_lock);
	if (rc) {
		free(p->procs);
		free((void *)p->idempotent);
		free(p);
	}
	return rc;
}

int rpcrdma_server_set_idempotent(struct rpcrdma_server *s, uint32_t prog, uint32_t vers,
				  uint32_t proc, bool idempotent)
{
	int rc = -ENOENT;

	if (!s)
		return -EINVAL;
	s = s->root;
	pthread_rwlock_rdlock(&s->reg_lock);
	for (struct rpcrdma__svc_prog *p = s->progs; p; p = p->next) {
		if (p->prog == prog && p->vers == vers && proc < p->nprocs) {
			atomic_store_explicit(&p->idempotent[proc], idempotent, memory_order_relaxed);
			rc = 0;
		}
	}
	pthread_rwlock_unlock(&s->reg_lock);
	return rc;
}

int rpcrdma_server_port(struct rpcrdma_server *s)
{
	if (!s)
		return -EINVAL;
	return s->ops->port(s->t);
}

static void destroy_posted(void *arg)
{
	(void)rpcrdma_server_destroy(arg);
}

int rpcrdma_server_destroy(struct rpcrdma_server *s)
{
	if (!s)
		return -EINVAL;
	if (rpcrdma__loop_inherited(s->loop, "rpcrdma_server_destroy"))
		return -EPERM;
	if (s->root == s && rpcrdma__svc_worker_of_thread(s)) {
		/*
		 * Joining the workers must not happen on one of them.  Queued
		 * once only: another procedure (on this worker or another)
		 * destroying the server before the server's loop ran the first
		 * would queue a second destruction, to run on freed memory;
		 * and one that runs while the server's thread is destroying it
		 * (destroying is that thread's, not ours to read) must queue
		 * nothing either.
		 */
		if (!atomic_exchange_explicit(&s->destroy_queued, true, memory_order_acq_rel)) {
			while (rpcrdma_loop_wake(s->loop, destroy_posted, s) == -ENOMEM)
				usleep(1000);
		}
		return 0;
	}
	if (s->destroying)
		return 0;
	if (s->root == s)
		atomic_store_explicit(&s->destroy_queued, true, memory_order_release);
	s->destroying = true;
	enter(s);
	if (s->busy == 1 && !bc_busy(s))
		return rpcrdma__svc_finalize(s);
	leave(s);
	return 0;
}

int rpcrdma_svc_reply(struct rpcrdma_svc_req *r, int status)
{
	struct rpcrdma_server *s;

	if (!r || atomic_load_explicit(&r->state, memory_order_relaxed) != RPCRDMA__SVC_DEFERRED ||
	    status == RPCRDMA_SVC_DEFERRED)
		return -EINVAL;
	s = r->srv;
	enter(s);
	rpcrdma__svc_waiting_remove(s, r);
	rpcrdma__svc_answer(s, r, status);
	leave(s);
	return 0;
}

struct rpcrdma__svc_transport *rpcrdma__server_transport(struct rpcrdma_server *s)
{
	return s ? s->t : NULL;
}

/* Bidirectional RPC (core.h). */

int rpcrdma__server_create_on(struct rpcrdma_loop *loop, const struct rpcrdma_server_opts *opts,
			      const struct rpcrdma__svc_transport_ops *ops,
			      rpcrdma__svc_make_fn make, void *arg, struct rpcrdma_server **out)
{
	struct rpcrdma_server *s;
	int rc;

	if (!loop || !ops || !make || !out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	rpcrdma__svc_core_init(s);
	if (opts)
		s->opts = *opts;
	else
		rpcrdma_server_opts_default(&s->opts);
	s->opts.workers = 0; /* it serves one connection, on its owner's loop */
	s->root = s;
	rc = rpcrdma__drc_create(s->opts.drc_entries, 0, &s->drc);
	if (rc) {
		rpcrdma__svc_core_fini(s);
		free(s);
		return rc;
	}
	pthread_rwlock_init(&s->reg_lock, NULL);
	pthread_mutex_init(&s->drc_lock, NULL);
	s->loop = loop;
	s->ops = ops;
	rc = make(arg, &svc_cb, s, &s->t);
	if (rc) {
		rpcrdma__drc_destroy(s->drc);
		pthread_rwlock_destroy(&s->reg_lock);
		pthread_mutex_destroy(&s->drc_lock);
		rpcrdma__svc_core_fini(s);
		free(s);
		return rc;
	}
	rpcrdma__loop_ref(loop);
	*out = s;
	return 0;
}

bool rpcrdma__server_busy(struct rpcrdma_server *s)
{
	return s && s->busy;
}

const struct rpcrdma__svc_transport_ops *rpcrdma__server_ops(struct rpcrdma_server *s)
{
	return s ? s->ops : NULL;
}

struct rpcrdma_loop *rpcrdma__server_loop(struct rpcrdma_server *s)
{
	return s ? s->loop : NULL;
}

struct rpcrdma__server_bc_hooks *rpcrdma__server_bc(struct rpcrdma_server *s)
{
	return s ? &s->bc : NULL;
}
