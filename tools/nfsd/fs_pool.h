/*
 * rpcrdma-nfsd's filesystem threads.  NFS procedures run here, not on the
 * RPC event loops, for two reasons: filesystem calls block, and acting as
 * the caller (setfsuid and friends) gives a thread new credentials, after
 * which the kernel refuses that thread's writes to the RDMA device files
 * (uverbs and rdma_cm check that the writer's credentials are the
 * opener's).  A job runs on a pool thread, then its completion runs on the
 * loop it came from.
 */
#ifndef RPCRDMA_NFSD_FS_POOL_H
#define RPCRDMA_NFSD_FS_POOL_H

#include "rpcrdma/loop.h"

struct nfsd_job {
	struct nfsd_job *next;
	struct rpcrdma_loop *loop;          /* where done runs */
	void (*run)(struct nfsd_job *job);  /* on a pool thread */
	void (*done)(struct nfsd_job *job); /* then on @loop's thread */
};

/* Starts @n threads, which take at most @max_queued jobs waiting beyond
 * those running.  Returns 0 or -errno. */
int nfsd_pool_start(unsigned int n, unsigned int max_queued);
/* Queues @job.  Returns 0, -EAGAIN when @max_queued jobs already wait (the
 * caller answers NFS3ERR_JUKEBOX: try again later), or -ESHUTDOWN once the
 * pool is closed or stopping. */
int nfsd_pool_submit(struct nfsd_job *job);
/* Refuse every job from now on (the server is stopping). */
void nfsd_pool_close(void);
/* Waits until every job submitted has run and its done is queued. */
void nfsd_pool_drain(void);
/* Jobs refused because the queue was full, and the most that waited. */
void nfsd_pool_counts(unsigned long long *full, unsigned int *queued_max);
/* Drains, then ends the threads. */
void nfsd_pool_stop(void);

#endif /* RPCRDMA_NFSD_FS_POOL_H */
