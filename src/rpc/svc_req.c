/*
 * svc_req.c - a server's requests: their life (every request of a core on
 * its live list), what a procedure may ask of its request, and
 * rpcrdma_server_inflight() reading the live lists from any thread
 * (rpcrdma/debug.h).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace.h"
#include "rpc/svc_internal.h"
#include "rpcrdma/debug.h"

/* Attempts at a core's lock before it counts as busy: the lock is held
 * only to link or unlink one request. */
#define LIVE_TRIES 1000

void rpcrdma__svc_core_init(struct rpcrdma_server *s)
{
	rpcrdma__list_init(&s->waiting);
	rpcrdma__list_init(&s->live);
	pthread_mutex_init(&s->live_lock, NULL);
	pthread_mutex_init(&s->lru_lock, NULL);
	rpcrdma__list_init(&s->lru_idle);
	rpcrdma__list_init(&s->lru_stalled);
	rpcrdma__list_init(&s->lru_evict);
}

void rpcrdma__svc_core_fini(struct rpcrdma_server *s)
{
	while (s->spare_reqs) {
		struct rpcrdma_svc_req *r = s->spare_reqs;

		s->spare_reqs = r->spare_next;
		free(r);
	}
	s->nspare_reqs = 0;
	pthread_mutex_destroy(&s->live_lock);
	rpcrdma__timer_stop(&s->evict_timer);
	pthread_mutex_destroy(&s->lru_lock);
}

struct rpcrdma_svc_req *rpcrdma__svc_req_new(struct rpcrdma_server *s, struct rpcrdma__sreq *t)
{
	struct rpcrdma_svc_req *r = s->spare_reqs;

	if (r) {
		s->spare_reqs = r->spare_next;
		s->nspare_reqs--;
	} else {
		r = malloc(sizeof(*r));
		if (!r)
			return NULL;
	}
	memset(r, 0, offsetof(struct rpcrdma_svc_req, msg));
	r->srv = s;
	r->t = t;
	t->core = r;
	atomic_init(&r->state, RPCRDMA__SVC_RUNNING);
	r->start_ns = rpcrdma__coarse_now_ns();
	rpcrdma__list_init(&r->wnode);
	rpcrdma__list_init(&r->live);
	return r;
}

void rpcrdma__svc_req_publish(struct rpcrdma_svc_req *r)
{
	struct rpcrdma_server *s = r->srv;

	r->conn_id = r->t->conn_id;
	r->read_segs = r->t->read_segs;
	r->write_chunks = r->t->write_chunks;
	r->reply_chunk = r->t->reply_chunk;
	pthread_mutex_lock(&s->live_lock);
	rpcrdma__list_add_tail(&s->live, &r->live);
	pthread_mutex_unlock(&s->live_lock);
}

void rpcrdma__svc_req_free(struct rpcrdma_svc_req *r)
{
	struct rpcrdma_server *s = r->srv;

	pthread_mutex_lock(&s->live_lock);
	rpcrdma__list_del(&r->live);
	pthread_mutex_unlock(&s->live_lock);
	if (r->ran && r->proc && r->proc->free_res)
		r->proc->free_res(r->res);
	/* r->res lies in the same block (run_proc). */
	if (r->args != (void *)r->inline_args)
		free(r->args);
#if RPCRDMA__SVC_SPARE_REQS
	/* Requests are freed on their core's thread, as they are made. */
	if (s->nspare_reqs < RPCRDMA__SVC_SPARE_REQS && !s->destroying) {
		/* A second answer through a stale handle must find it not
		 * DEFERRED: answered again, it would go onto the spares twice
		 * and two requests would share one block. */
		atomic_store_explicit(&r->state, RPCRDMA__SVC_SPARE, memory_order_relaxed);
		r->spare_next = s->spare_reqs;
		s->spare_reqs = r;
		s->nspare_reqs++;
		return;
	}
#endif
	free(r);
}

/* What a procedure may ask of its request (rpc.h). */

void *rpcrdma_svc_prog_ctx(const struct rpcrdma_svc_req *r)
{
	return r ? r->prog_ctx : NULL;
}

struct rpcrdma_loop *rpcrdma_svc_loop(const struct rpcrdma_svc_req *r)
{
	return r ? r->srv->loop : NULL;
}

const struct rpcrdma_opaque_auth *rpcrdma_svc_cred(const struct rpcrdma_svc_req *r)
{
	return r ? &r->msg.u.call.cred : NULL;
}

const struct rpcrdma_rpc_msg *rpcrdma_svc_msg(const struct rpcrdma_svc_req *r)
{
	return r ? &r->msg : NULL;
}

const struct sockaddr *rpcrdma_svc_peer(const struct rpcrdma_svc_req *r)
{
	return r && r->t ? r->t->peer : NULL;
}

struct rpcrdma__sreq *rpcrdma__svc_req_transport(struct rpcrdma_svc_req *r)
{
	return r ? r->t : NULL;
}

struct rpcrdma_server *rpcrdma__svc_req_server(struct rpcrdma_svc_req *r)
{
	return r ? r->srv : NULL;
}

/* In-flight listing. */

static enum rpcrdma_svc_call_state public_state(enum rpcrdma__svc_req_state st)
{
	switch (st) {
	case RPCRDMA__SVC_DEFERRED:
		return RPCRDMA_SVC_CALL_DEFERRED;
	case RPCRDMA__SVC_PARKED:
		return RPCRDMA_SVC_CALL_PARKED;
	case RPCRDMA__SVC_WATCHING:
		return RPCRDMA_SVC_CALL_WATCHING;
	case RPCRDMA__SVC_RUNNING:
	default:
		return RPCRDMA_SVC_CALL_RUNNING;
	}
}

static void info_of(const struct rpcrdma_svc_req *r, uint32_t worker, uint64_t now,
		    struct rpcrdma_svc_call_info *out)
{
	out->xid = r->msg.xid;
	out->prog = r->msg.u.call.prog;
	out->vers = r->msg.u.call.vers;
	out->proc = r->msg.u.call.proc;
	out->age_ms = now > r->start_ns ? (now - r->start_ns) / 1000000u : 0;
	out->state = public_state(atomic_load_explicit(&r->state, memory_order_relaxed));
	out->worker = worker;
	out->conn_id = r->conn_id;
	out->read_segs = r->read_segs;
	out->write_chunks = r->write_chunks;
	out->reply_chunk = r->reply_chunk;
}

/* Lists one core's requests after the @n already listed; false when its
 * lock could not be had. */
static bool list_core(struct rpcrdma_server *core, uint32_t worker, uint64_t now,
		      struct rpcrdma_svc_call_info *out, unsigned int max, unsigned int *n)
{
	struct rpcrdma__list *it;
	int tries = 0;

	while (pthread_mutex_trylock(&core->live_lock)) {
		if (++tries >= LIVE_TRIES)
			return false;
	}
	rpcrdma__list_foreach(it, &core->live)
	{
		const struct rpcrdma_svc_req *r =
		    rpcrdma__container_of(it, struct rpcrdma_svc_req, live);

		if (*n < max)
			info_of(r, worker, now, &out[*n]);
		(*n)++;
	}
	pthread_mutex_unlock(&core->live_lock);
	return true;
}

int rpcrdma_server_inflight(struct rpcrdma_server *srv, struct rpcrdma_svc_call_info *out,
			    unsigned int max, unsigned int *busy)
{
	uint64_t now = rpcrdma__coarse_now_ns();
	unsigned int n = 0, nbusy = 0;

	if (!srv || (!out && max) || srv->root != srv)
		return -EINVAL;
	if (!list_core(srv, 0, now, out, max, &n))
		nbusy++;
	for (unsigned int i = 0; i < srv->nworkers; i++) {
		struct rpcrdma_server *core = srv->workers[i].srv;

		if (core && !list_core(core, i + 1, now, out, max, &n))
			nbusy++;
	}
	if (busy)
		*busy = nbusy;
	return n > INT32_MAX ? INT32_MAX : (int)n;
}
