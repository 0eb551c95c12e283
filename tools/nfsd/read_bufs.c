/*
 * READ result buffers (read_bufs.h).  They are made NFSD_READ_BUFS_STEP at
 * a time, each batch one anonymous mapping declared with
 * rpcrdma_mem_register() as one region: every provider instance registers
 * a batch once, at its first READ from it, and never again.  A buffer per
 * READ from malloc() would be registered and deregistered at every call
 * on verbs (the library's cache must forget memory that is freed), or
 * copied into a library buffer for results up to 256 KiB.
 *
 * A READ holds its buffer from the filesystem thread's pread() until the
 * transport has sent the data (the procedure's free_res, on the loop
 * thread), so the buffers are a stack under a mutex; batches are only
 * ever added while the server runs.
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

struct batch {
	uint8_t *base;
	size_t bytes;
	struct rpcrdma_mem_region *region; /* NULL: not declared */
};

static struct {
	pthread_mutex_t lock;
	unsigned int max, made;
	bool declare;
	struct batch batches[NFSD_READ_BUFS_MAX / NFSD_READ_BUFS_STEP];
	unsigned int nbatches;
	uint8_t **free; /* a stack of the unused buffers, room for max */
	unsigned int nfree;
	_Atomic unsigned long long misses;
} bufs = {.lock = PTHREAD_MUTEX_INITIALIZER};

int nfsd_read_bufs_start(unsigned int max, bool declare)
{
	if (max > NFSD_READ_BUFS_MAX)
		return -EINVAL;
	if (!max)
		return 0;
	bufs.free = calloc(max, sizeof(*bufs.free));
	if (!bufs.free)
		return -ENOMEM;
	bufs.max = max;
	bufs.declare = declare;
	return 0;
}

/* Another batch, as far as max allows; with the lock held. */
static void grow_locked(void)
{
	unsigned int k = bufs.max - bufs.made < NFSD_READ_BUFS_STEP ? bufs.max - bufs.made
								  : NFSD_READ_BUFS_STEP;
	struct batch *b = &bufs.batches[bufs.nbatches];
	size_t bytes = (size_t)k * RPCRDMA_NFS3_MAXDATA;
	void *mem;

	if (!k)
		return;
	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return;
	b->base = mem;
	b->bytes = bytes;
	b->region = NULL;
	/* Declaring saves registrations: without it the registration cache
	 * still keeps these (they are never freed), registering each range
	 * the first time a READ of that size uses it. */
	if (bufs.declare && rpcrdma_mem_register(b->base, bytes, &b->region))
		b->region = NULL;
	for (unsigned int i = k; i-- > 0;)
		bufs.free[bufs.nfree++] = b->base + (size_t)i * RPCRDMA_NFS3_MAXDATA;
	bufs.made += k;
	bufs.nbatches++;
}

void nfsd_read_bufs_stop(void)
{
	pthread_mutex_lock(&bufs.lock);
	/* A reply the library still holds may still be sent from one: the
	 * memory then stays until the process exits. */
	if (bufs.nfree == bufs.made) {
		for (unsigned int i = 0; i < bufs.nbatches; i++) {
			if (bufs.batches[i].region)
				(void)rpcrdma_mem_deregister(bufs.batches[i].region);
			munmap(bufs.batches[i].base, bufs.batches[i].bytes);
		}
		bufs.nbatches = bufs.made = bufs.nfree = bufs.max = 0;
		free(bufs.free);
		bufs.free = NULL;
	}
	pthread_mutex_unlock(&bufs.lock);
}

void *nfsd_read_buf_get(void)
{
	void *p = NULL;

	pthread_mutex_lock(&bufs.lock);
	if (!bufs.nfree)
		grow_locked();
	if (bufs.nfree)
		p = bufs.free[--bufs.nfree];
	pthread_mutex_unlock(&bufs.lock);
	if (!p)
		atomic_fetch_add(&bufs.misses, 1);
	return p;
}

bool nfsd_read_buf_put(void *p)
{
	uintptr_t at = (uintptr_t)p;
	bool ours = false;

	if (!p)
		return false;
	pthread_mutex_lock(&bufs.lock);
	for (unsigned int i = 0; i < bufs.nbatches && !ours; i++) {
		uintptr_t base = (uintptr_t)bufs.batches[i].base;

		ours = at >= base && at < base + bufs.batches[i].bytes;
	}
	if (ours && bufs.nfree < bufs.made)
		bufs.free[bufs.nfree++] = p;
	pthread_mutex_unlock(&bufs.lock);
	return ours;
}

unsigned long long nfsd_read_buf_misses(void)
{
	return atomic_load(&bufs.misses);
}

unsigned int nfsd_read_bufs_made(void)
{
	unsigned int n;

	pthread_mutex_lock(&bufs.lock);
	n = bufs.made;
	pthread_mutex_unlock(&bufs.lock);
	return n;
}
