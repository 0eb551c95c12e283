/*
 * The measurement runner: turns one struct bench_params into one struct
 * bench_result, the same way for every stack.  It owns the client threads
 * and the phases they go through together (a barrier between each):
 *
 *   set up connections -> warm up -> read the server's CPU time ->
 *   measure (wall clock and each thread's own CPU time) -> read the
 *   server's CPU time again -> tear down
 *
 * so that connection set-up and first-touch costs stay out of the numbers,
 * and so that CPU cost per call is the CPU both sides spent during exactly
 * the measured interval.  It also owns latency percentiles and the small
 * helpers (clock, CPU time, buffers) the stacks share.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

atomic_bool bench_stop_requested;
struct bench_ports bench_ports;

/* Latency samples kept at most (one per call of a WL_LAT run). */
#define LAT_MAX_SAMPLES (2u << 20)

static bool servers_in_own_process;

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double rusage_s(int who)
{
	struct rusage ru;

	if (getrusage(who, &ru))
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void bench_set_server_process(bool own_process)
{
	servers_in_own_process = own_process;
}

double bench_thread_cpu(void)
{
	return rusage_s(RUSAGE_THREAD);
}

double bench_server_cpu(void)
{
	/* A server process of its own also has idle threads of the other
	 * stacks, which cost nothing measurable; in one process the serving
	 * thread is the only fair count. */
	return rusage_s(servers_in_own_process ? RUSAGE_SELF : RUSAGE_THREAD);
}

void bench_fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131u >> 3 ^ i >> 12);
}

void *bench_alloc(size_t n)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, n ? n : 1))
		return NULL;
	return p;
}

struct run_shared {
	const struct bench_config *cfg;
	const struct bench_params *p;
	const struct bench_stack_ops *ops;
	pthread_barrier_t bar;
	atomic_int error;
	double server_cpu[2];
	struct bench_work server_work[2];
};

struct thread_slot {
	struct run_shared *sh;
	struct bench_thread t;
	pthread_t tid;
	double t0, t1, cpu;
	struct bench_work work[2]; /* at the start and the end of the interval */
};

static void fail(struct run_shared *sh, int rc)
{
	int zero = 0;

	if (rc)
		atomic_compare_exchange_strong(&sh->error, &zero, rc);
}

static bool failed(struct run_shared *sh)
{
	return atomic_load(&sh->error) != 0;
}

/* A client thread's counters now. */
static void client_snapshot(struct run_shared *sh, struct bench_thread *t, struct bench_work *w)
{
	memset(w, 0, sizeof(*w));
	if (sh->ops->client_work)
		sh->ops->client_work(t, w);
	if (t->sys_fd >= 0) {
		w->v[BW_syscalls] = bench_syscount_read(t->sys_fd);
		w->sys_valid = true;
	}
}

/* @out = @b - @a, valid when both were. */
static void work_delta(const struct bench_work *a, const struct bench_work *b,
		       struct bench_work *out)
{
	memset(out, 0, sizeof(*out));
	out->ops_valid = a->ops_valid && b->ops_valid;
	out->sys_valid = a->sys_valid && b->sys_valid;
	for (int i = 0; i < BW_COUNT; i++)
		out->v[i] = b->v[i] - a->v[i];
}

static void work_add(struct bench_work *sum, const struct bench_work *d, bool first)
{
	if (first) {
		*sum = *d;
		return;
	}
	sum->ops_valid = sum->ops_valid && d->ops_valid;
	sum->sys_valid = sum->sys_valid && d->sys_valid;
	for (int i = 0; i < BW_COUNT; i++)
		sum->v[i] += d->v[i];
}

/*
 * Every thread goes through every barrier even after a failure, so that a
 * failing connection never leaves the others waiting forever.
 */
static void *client_thread(void *arg)
{
	struct thread_slot *ts = arg;
	struct run_shared *sh = ts->sh;
	struct bench_thread *t = &ts->t;
	const struct bench_params *p = sh->p;
	bool up = false;
	int rc;

	/* Before setup, so that threads the stack starts are counted too. */
	t->sys_fd = bench_syscount_open();
	rc = sh->ops->setup(t);
	fail(sh, rc);
	up = rc == 0;
	pthread_barrier_wait(&sh->bar);

	if (up && !failed(sh) && p->warmup_s > 0)
		fail(sh, sh->ops->run(t, bench_now() + p->warmup_s, 0, false));
	t->calls = 0;
	pthread_barrier_wait(&sh->bar);

	if (t->index == 0 && up && !failed(sh))
		fail(sh, sh->ops->server_cpu(t, &sh->server_cpu[0]));
	if (t->index == 0 && up && !failed(sh) && sh->ops->server_work)
		fail(sh, sh->ops->server_work(t, &sh->server_work[0]));
	pthread_barrier_wait(&sh->bar);

	if (up)
		client_snapshot(sh, t, &ts->work[0]);
	ts->t0 = bench_now();
	ts->cpu = bench_thread_cpu();
	if (up && !failed(sh)) {
		uint64_t share = p->max_calls ? (p->max_calls + p->threads - 1) / p->threads : 0;

		fail(sh, sh->ops->run(t, ts->t0 + p->duration_s, share, true));
	}
	ts->t1 = bench_now();
	ts->cpu = bench_thread_cpu() - ts->cpu;
	if (up)
		client_snapshot(sh, t, &ts->work[1]);
	pthread_barrier_wait(&sh->bar);

	/* ORDER: the server's work first, so that between its two snapshots
	 * the server did, beside the measured calls, only the reply to the
	 * first snapshot and the receive reposted for the second (taken off
	 * in bench_measure). */
	if (t->index == 0 && up && !failed(sh) && sh->ops->server_work)
		fail(sh, sh->ops->server_work(t, &sh->server_work[1]));
	if (t->index == 0 && up && !failed(sh))
		fail(sh, sh->ops->server_cpu(t, &sh->server_cpu[1]));
	pthread_barrier_wait(&sh->bar);

	if (up)
		sh->ops->teardown(t);
	if (t->sys_fd >= 0)
		close(t->sys_fd);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The sample at quantile @q (nearest rank) of @n sorted samples. */
static double quantile(const double *v, uint64_t n, double q)
{
	uint64_t rank = (uint64_t)(q * (double)n + 0.999999);

	if (rank == 0)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

static const struct bench_stack_ops *stack_ops(enum bench_stack s)
{
	switch (s) {
	case STACK_OURS:
		return &bench_ours_ops;
	case STACK_RAW:
		return &bench_raw_ops;
	case STACK_TIRPC:
		return &bench_tirpc_ops;
	default:
		return NULL;
	}
}

int bench_measure(const struct bench_config *cfg, const struct bench_params *in,
		  struct bench_result *r)
{
	struct bench_params p = *in;
	struct run_shared sh;
	struct thread_slot *ts;
	unsigned int started = 0;
	double t0 = 0, t1 = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&sh, 0, sizeof(sh));
	sh.cfg = cfg;
	sh.ops = stack_ops(p.stack);
	if (!sh.ops)
		return -EINVAL;
	if (p.wl == WL_LAT) {
		p.depth = 1;
		p.conns = 1;
		p.threads = 1;
	}
	if (p.conns < 1)
		p.conns = 1;
	if (p.threads < 1)
		p.threads = 1;
	if (p.threads > p.conns)
		p.threads = p.conns;
	if (sh.ops->threads_for)
		p.threads = sh.ops->threads_for(&p);
	r->p = p;
	sh.p = &r->p;

	ts = calloc(p.threads, sizeof(*ts));
	if (!ts)
		return -ENOMEM;
	if (pthread_barrier_init(&sh.bar, NULL, p.threads)) {
		free(ts);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < p.threads; i++) {
		struct bench_thread *t = &ts[i].t;

		ts[i].sh = &sh;
		t->index = i;
		t->cfg = cfg;
		t->p = &r->p;
		/* Connections dealt out as evenly as they go. */
		t->first_conn = (unsigned int)((uint64_t)p.conns * i / p.threads);
		t->nconns = (unsigned int)((uint64_t)p.conns * (i + 1) / p.threads) - t->first_conn;
		if (p.wl == WL_LAT && i == 0) {
			t->lat_cap = p.max_calls && p.max_calls < LAT_MAX_SAMPLES ? p.max_calls
										: LAT_MAX_SAMPLES;
			t->lat_us = malloc(t->lat_cap * sizeof(double));
			if (!t->lat_us) {
				fail(&sh, -ENOMEM);
				break;
			}
		}
	}
	if (!failed(&sh)) {
		for (started = 0; started < p.threads; started++) {
			if (pthread_create(&ts[started].tid, NULL, client_thread, &ts[started]))
				break;
		}
		if (started < p.threads) {
			/* The barrier counts on every thread: without all of
			 * them nobody may start waiting.  Create failures are
			 * rare enough to treat as fatal for the whole run. */
			fprintf(stderr, "rpcrdma-bench: cannot start %u client threads\n",
				p.threads);
			exit(1);
		}
		for (unsigned int i = 0; i < started; i++)
			pthread_join(ts[i].tid, NULL);
	}
	pthread_barrier_destroy(&sh.bar);

	rc = atomic_load(&sh.error);
	for (unsigned int i = 0; i < p.threads; i++) {
		r->calls += ts[i].t.calls;
		r->client_cpu_s += ts[i].cpu;
		if (i == 0 || ts[i].t0 < t0)
			t0 = ts[i].t0;
		if (i == 0 || ts[i].t1 > t1)
			t1 = ts[i].t1;
	}
	r->seconds = t1 - t0;
	r->server_cpu_s = sh.server_cpu[1] - sh.server_cpu[0];
	for (unsigned int i = 0; i < p.threads; i++) {
		struct bench_work d;

		work_delta(&ts[i].work[0], &ts[i].work[1], &d);
		work_add(&r->work[0], &d, i == 0);
	}
	work_delta(&sh.server_work[0], &sh.server_work[1], &r->work[1]);
	if (r->work[1].v[BW_sends])
		r->work[1].v[BW_sends]--;
	if (r->work[1].v[BW_recvs])
		r->work[1].v[BW_recvs]--;
	if (ts[0].t.lat_us && ts[0].t.lat_n && !rc) {
		double *v = ts[0].t.lat_us;
		uint64_t n = ts[0].t.lat_n;

		qsort(v, n, sizeof(*v), cmp_double);
		r->has_lat = true;
		r->lat_us[0] = v[0];
		r->lat_us[1] = quantile(v, n, 0.5);
		r->lat_us[2] = quantile(v, n, 0.99);
		r->lat_us[3] = quantile(v, n, 0.999);
		r->lat_us[4] = v[n - 1];
	}
	for (unsigned int i = 0; i < p.threads; i++)
		free(ts[i].t.lat_us);
	free(ts);
	r->error = rc;
	return rc;
}
