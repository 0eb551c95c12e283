/*
 * svc_workers.c - a server's worker loops: one thread, loop and core each,
 * connections placed round robin, started and stopped with the server; and
 * rpcrdma_server_stats(), which gathers every core's counters on its own
 * thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpc/svc_internal.h"

struct rpcrdma__svc_transport *rpcrdma__svc_place(void *ctx)
{
	struct rpcrdma_server *s = ctx;
	struct rpcrdma__svc_worker *w;

	if (!s->nworkers || s->destroying)
		return NULL;
	/* Round robin: the cache is shared, so a client's reconnection may
	 * land on any worker and still find its replies. */
	w = &s->workers[s->next_worker++ % s->nworkers];
	return w->srv->t;
}

static void *worker_main(void *arg)
{
	struct rpcrdma__svc_worker *w = arg;

	(void)rpcrdma_loop_run(w->loop);
	return NULL;
}

static void worker_stop(void *arg)
{
	struct rpcrdma__svc_worker *w = arg;

	/* Its finalize stops the loop, and worker_main returns. */
	rpcrdma_server_destroy(w->srv);
}

/* Returns the worker running on the calling thread, or NULL. */
struct rpcrdma__svc_worker *rpcrdma__svc_worker_of_thread(const struct rpcrdma_server *s)
{
	for (unsigned int i = 0; i < s->nworkers; i++) {
		if (s->workers[i].running && pthread_equal(s->workers[i].thread, pthread_self()))
			return &s->workers[i];
	}
	return NULL;
}

unsigned int rpcrdma__svc_workers_stop(struct rpcrdma_server *s)
{
	unsigned int kept = 0;

	for (unsigned int i = 0; i < s->nworkers; i++) {
		struct rpcrdma__svc_worker *w = &s->workers[i];

		if (!w->running) {
			/* Never ran: nothing in flight, nothing on its loop. */
			if (w->srv)
				(void)rpcrdma__svc_finalize(w->srv);
			continue;
		}
		/* Queued behind any connection handed over before the
		 * listener closed, so those are served, then closed. */
		while (rpcrdma_loop_wake(w->loop, worker_stop, w) == -ENOMEM)
			usleep(1000);
	}
	for (unsigned int i = 0; i < s->nworkers; i++) {
		struct rpcrdma__svc_worker *w = &s->workers[i];

		if (w->running)
			pthread_join(w->thread, NULL);
		/* Busy with a client or server of the application's (made
		 * with rpcrdma_svc_loop()): freeing the loop would pull it
		 * from under them, so it is left to the application. */
		if (w->loop && rpcrdma_loop_destroy(w->loop) == -EBUSY)
			kept++;
	}
	free(s->workers);
	s->workers = NULL;
	s->nworkers = 0;
	return kept;
}

/* A worker's core: a transport without a listener on its own loop. */
int rpcrdma__svc_worker_start(struct rpcrdma_server *root, struct rpcrdma__svc_worker *w,
			      const struct sockaddr *addr, socklen_t addrlen,
			      const struct rpcrdma__svc_cb *cb)
{
	struct rpcrdma_server *c;
	int rc = rpcrdma_loop_create(&w->loop);

	if (rc)
		return rc;
	(void)rpcrdma_loop_set_busy_poll(w->loop, rpcrdma__loop_busy_poll(root->loop));
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	rpcrdma__svc_core_init(c);
	c->opts = root->opts;
	c->opts.workers = 0;
	c->loop = w->loop;
	c->ops = root->ops;
	c->root = root;
	rc = c->ops->worker(w->loop, addr, addrlen, &c->opts, cb, c, &c->t);
	if (rc) {
		rpcrdma__svc_core_fini(c);
		free(c);
		return rc;
	}
	rpcrdma__loop_ref(w->loop);
	w->srv = c;
	/* Everything above happens before the thread runs (pthread_create). */
	rc = -pthread_create(&w->thread, NULL, worker_main, w);
	if (rc)
		return rc;
	w->running = true;
	return 0;
}

/* Counters. */

/* @acc += @one; the gauges and maxima take the larger value instead. */
static void stats_add(struct rpcrdma_xprt_stats *acc, const struct rpcrdma_xprt_stats *one)
{
	uint64_t granted = acc->credits_granted > one->credits_granted ? acc->credits_granted
								       : one->credits_granted;
	uint64_t in_use = acc->credits_in_use_max > one->credits_in_use_max
			      ? acc->credits_in_use_max
			      : one->credits_in_use_max;
	uint64_t rev_granted = acc->rev_credits_granted > one->rev_credits_granted
				   ? acc->rev_credits_granted
				   : one->rev_credits_granted;
	uint64_t rev_in_use = acc->rev_credits_in_use_max > one->rev_credits_in_use_max
				  ? acc->rev_credits_in_use_max
				  : one->rev_credits_in_use_max;
	uint64_t read_max =
	    acc->read_bytes_max > one->read_bytes_max ? acc->read_bytes_max : one->read_bytes_max;

#define ADD(name) acc->name += one->name;
	RPCRDMA_XPRT_STATS(ADD)
#undef ADD
	acc->credits_granted = granted;
	acc->credits_in_use_max = in_use;
	acc->rev_credits_granted = rev_granted;
	acc->rev_credits_in_use_max = rev_in_use;
	acc->read_bytes_max = read_max;
}

/* One core's counters, on its own thread. */
static void stats_of(struct rpcrdma_server *s, struct rpcrdma_xprt_stats *acc)
{
	struct rpcrdma_xprt_stats one;

	memset(&one, 0, sizeof(one));
	s->ops->stats(s->t, &one);
	one.bad_msgs += s->bad_msgs;
	one.retransmits += s->dups;
	if (s->bc.stats)
		s->bc.stats(s, &one);
	stats_add(acc, &one);
}

/* Gathering the workers' counters, each on its own thread. */
struct stats_job {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int pending;
	struct rpcrdma_xprt_stats sum;
};

struct stats_ask {
	struct stats_job *job;
	struct rpcrdma_server *core;
};

static void stats_answer(void *arg)
{
	struct stats_ask *a = arg;
	struct rpcrdma_xprt_stats one;

	memset(&one, 0, sizeof(one));
	stats_of(a->core, &one);
	pthread_mutex_lock(&a->job->lock);
	stats_add(&a->job->sum, &one);
	if (--a->job->pending == 0)
		pthread_cond_signal(&a->job->cond);
	pthread_mutex_unlock(&a->job->lock);
}

int rpcrdma_server_stats(struct rpcrdma_server *s, struct rpcrdma_xprt_stats *out)
{
	struct stats_job job;
	struct stats_ask *asks;
	int rc = 0;

	if (!s || !out)
		return -EINVAL;
	if (rpcrdma__svc_worker_of_thread(s))
		return -EDEADLK; /* it would wait for its own loop */
	memset(out, 0, sizeof(*out));
	stats_of(s, out);
	/* The duplicate request cache is the server's, shared by its workers. */
	if (s->drc) {
		struct rpcrdma__drc_counts n;

		pthread_mutex_lock(&s->drc_lock);
		rpcrdma__drc_counts(s->drc, &n);
		pthread_mutex_unlock(&s->drc_lock);
		out->drc_evictions = n.evictions;
		out->drc_uncached = n.uncached;
		out->drc_bytes_now = n.bytes;
	}
	out->queued_bytes_now = atomic_load_explicit(&s->root->queued_total, memory_order_relaxed);
	out->recv_bytes_now = atomic_load_explicit(&s->root->recv_reserved, memory_order_relaxed);
	if (!s->nworkers)
		return 0;
	asks = calloc(s->nworkers, sizeof(*asks));
	if (!asks)
		return -ENOMEM;
	memset(&job, 0, sizeof(job));
	pthread_mutex_init(&job.lock, NULL);
	pthread_cond_init(&job.cond, NULL);
	for (unsigned int i = 0; i < s->nworkers; i++) {
		asks[i].job = &job;
		asks[i].core = s->workers[i].srv;
		pthread_mutex_lock(&job.lock);
		job.pending++;
		pthread_mutex_unlock(&job.lock);
		if (rpcrdma_loop_wake(s->workers[i].loop, stats_answer, &asks[i])) {
			pthread_mutex_lock(&job.lock);
			job.pending--;
			pthread_mutex_unlock(&job.lock);
			rc = -ENOMEM;
		}
	}
	pthread_mutex_lock(&job.lock);
	while (job.pending)
		pthread_cond_wait(&job.cond, &job.lock);
	pthread_mutex_unlock(&job.lock);
	pthread_cond_destroy(&job.cond);
	pthread_mutex_destroy(&job.lock);
	free(asks);
	if (!rc)
		stats_add(out, &job.sum);
	return rc;
}
