/* Filesystem threads (fs_pool.h): one bounded queue, a mutex and two
 * conditions.  The bound matters: each waiting job holds its request's
 * arguments (a WRITE's are a megabyte), and clients on many connections
 * could otherwise queue work faster than the disk takes it. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "fs_pool.h"

static struct {
	pthread_mutex_t lock;
	pthread_cond_t work, idle;
	struct nfsd_job *head, **tail;
	unsigned int busy, nthreads, queued, max_queued, queued_max;
	unsigned long long full;
	bool stopping, closed;
	pthread_t *threads;
} pool = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .work = PTHREAD_COND_INITIALIZER,
    .idle = PTHREAD_COND_INITIALIZER,
};

static void job_done(void *arg)
{
	struct nfsd_job *job = arg;

	job->done(job);
}

static void *pool_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pool.lock);
	for (;;) {
		struct nfsd_job *job;

		while (!pool.head && !pool.stopping)
			pthread_cond_wait(&pool.work, &pool.lock);
		if (!pool.head)
			break;
		job = pool.head;
		pool.head = job->next;
		if (!pool.head)
			pool.tail = &pool.head;
		pool.queued--;
		pool.busy++;
		pthread_mutex_unlock(&pool.lock);
		job->run(job);
		/* Only allocation fails here, and the job's request waits
		 * for its answer: try until it goes. */
		while (rpcrdma_loop_wake(job->loop, job_done, job) == -ENOMEM)
			usleep(1000);
		pthread_mutex_lock(&pool.lock);
		pool.busy--;
		if (!pool.head && !pool.busy)
			pthread_cond_broadcast(&pool.idle);
	}
	pthread_mutex_unlock(&pool.lock);
	return NULL;
}

int nfsd_pool_start(unsigned int n, unsigned int max_queued)
{
	pool.max_queued = max_queued;
	pool.head = NULL;
	pool.tail = &pool.head;
	pool.threads = calloc(n ? n : 1, sizeof(*pool.threads));
	if (!pool.threads)
		return -ENOMEM;
	for (unsigned int i = 0; i < n; i++) {
		int rc = pthread_create(&pool.threads[i], NULL, pool_main, NULL);

		if (rc) {
			nfsd_pool_stop();
			return -rc;
		}
		pool.nthreads++;
	}
	return 0;
}

int nfsd_pool_submit(struct nfsd_job *job)
{
	pthread_mutex_lock(&pool.lock);
	if (pool.stopping || pool.closed || !pool.nthreads) {
		pthread_mutex_unlock(&pool.lock);
		return -ESHUTDOWN;
	}
	if (pool.queued >= pool.max_queued) {
		pool.full++;
		pthread_mutex_unlock(&pool.lock);
		return -EAGAIN;
	}
	if (++pool.queued > pool.queued_max)
		pool.queued_max = pool.queued;
	job->next = NULL;
	*pool.tail = job;
	pool.tail = &job->next;
	pthread_cond_signal(&pool.work);
	pthread_mutex_unlock(&pool.lock);
	return 0;
}

void nfsd_pool_close(void)
{
	pthread_mutex_lock(&pool.lock);
	pool.closed = true;
	pthread_mutex_unlock(&pool.lock);
}

void nfsd_pool_counts(unsigned long long *full, unsigned int *queued_max)
{
	pthread_mutex_lock(&pool.lock);
	*full = pool.full;
	*queued_max = pool.queued_max;
	pthread_mutex_unlock(&pool.lock);
}

void nfsd_pool_drain(void)
{
	pthread_mutex_lock(&pool.lock);
	while (pool.head || pool.busy)
		pthread_cond_wait(&pool.idle, &pool.lock);
	pthread_mutex_unlock(&pool.lock);
}

void nfsd_pool_stop(void)
{
	nfsd_pool_drain();
	pthread_mutex_lock(&pool.lock);
	pool.stopping = true;
	pthread_cond_broadcast(&pool.work);
	pthread_mutex_unlock(&pool.lock);
	for (unsigned int i = 0; i < pool.nthreads; i++)
		pthread_join(pool.threads[i], NULL);
	free(pool.threads);
	pool.threads = NULL;
	pool.nthreads = 0;
}
