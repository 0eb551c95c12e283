/*
 * READ result buffers (read_bufs.h).  One anonymous mapping holds them
 * all, declared with rpcrdma_mem_register() as one region: every provider
 * instance registers it once, at its first READ, and never again.  A
 * buffer per READ from malloc() would be registered and deregistered at
 * every call on verbs (the library's cache must forget memory that is
 * freed), or copied into a library buffer for results up to 256 KiB.
 *
 * A READ holds its buffer from the filesystem thread's pread() until the
 * transport has sent the data (the procedure's free_res, on the loop
 * thread), so the buffers are a stack under a mutex.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "read_bufs.h"
#include "rpcrdma/mem.h"
#include "rpcrdma/nfs3.h"

static struct {
	pthread_mutex_t lock;
	uint8_t *base;
	size_t bytes;
	struct rpcrdma_mem_region *region;
	unsigned int *free_idx; /* a stack of the unused buffers' indices */
	unsigned int nfree, n;
	_Atomic unsigned long long misses;
} bufs = {.lock = PTHREAD_MUTEX_INITIALIZER};

int nfsd_read_bufs_start(unsigned int n)
{
	void *mem;

	if (!n)
		return 0;
	if (n > NFSD_READ_BUFS_MAX)
		return -EINVAL;
	bufs.bytes = (size_t)n * RPCRDMA_NFS3_MAXDATA;
	mem = mmap(NULL, bufs.bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bufs.free_idx = calloc(n, sizeof(*bufs.free_idx));
	if (mem == MAP_FAILED || !bufs.free_idx) {
		if (mem != MAP_FAILED)
			munmap(mem, bufs.bytes);
		free(bufs.free_idx);
		bufs.free_idx = NULL;
		return -ENOMEM;
	}
	bufs.base = mem;
	/* Declaring is an optimisation: without it the registration cache
	 * still keeps these (they are never freed), registering each range
	 * the first time it is used. */
	if (rpcrdma_mem_register(bufs.base, bufs.bytes, &bufs.region))
		bufs.region = NULL;
	for (unsigned int i = 0; i < n; i++)
		bufs.free_idx[i] = n - 1 - i;
	bufs.n = bufs.nfree = n;
	return 0;
}

void nfsd_read_bufs_stop(void)
{
	/* A reply the library still holds may still be sent from one: the
	 * memory then stays until the process exits. */
	if (!bufs.base || bufs.nfree != bufs.n)
		return;
	if (bufs.region)
		(void)rpcrdma_mem_deregister(bufs.region);
	munmap(bufs.base, bufs.bytes);
	free(bufs.free_idx);
	bufs.base = NULL;
	bufs.free_idx = NULL;
	bufs.region = NULL;
	bufs.n = bufs.nfree = 0;
}

void *nfsd_read_buf_get(void)
{
	void *p = NULL;

	pthread_mutex_lock(&bufs.lock);
	if (bufs.nfree)
		p = bufs.base + (size_t)bufs.free_idx[--bufs.nfree] * RPCRDMA_NFS3_MAXDATA;
	pthread_mutex_unlock(&bufs.lock);
	if (!p)
		atomic_fetch_add(&bufs.misses, 1);
	return p;
}

bool nfsd_read_buf_put(void *p)
{
	uintptr_t at = (uintptr_t)p, base = (uintptr_t)bufs.base;

	if (!bufs.base || at < base || at >= base + bufs.bytes)
		return false;
	pthread_mutex_lock(&bufs.lock);
	bufs.free_idx[bufs.nfree++] = (unsigned int)((at - base) / RPCRDMA_NFS3_MAXDATA);
	pthread_mutex_unlock(&bufs.lock);
	return true;
}

unsigned long long nfsd_read_buf_misses(void)
{
	return atomic_load(&bufs.misses);
}
