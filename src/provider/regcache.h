/*
 * The registration cache: registrations of caller memory kept between
 * calls, per provider instance (regcache.c), and the process-wide hooks that
 * tell it when memory is freed or unmapped (memhooks.c).  docs/architecture.md,
 * "Memory registration", has the argument for why a hit is never stale.
 */
#ifndef RPCRDMA_PROVIDER_REGCACHE_H
#define RPCRDMA_PROVIDER_REGCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rpcrdma_provider;
struct rpcrdma_prov_mr;
struct rpcrdma__regent;

/* Bounds of one instance's cache (entries unused by any call are evicted,
 * least recently used first, to stay within both). */
#define RPCRDMA__REGCACHE_MAX_ENTRIES 256u
#define RPCRDMA__REGCACHE_MAX_BYTES (256u << 20)

struct rpcrdma__regcache_stats {
	uint64_t hits;          /* a cached registration covered the range */
	uint64_t misses;        /* registered, then kept */
	uint64_t uncached;      /* registered for one use only (cache off, or raced) */
	uint64_t evictions;     /* dropped for the bounds */
	uint64_t invalidations; /* dropped because the memory was freed or unmapped */
	uint64_t decl_failures; /* declared regions this instance could not register */
	/* Unreferenced registrations dropped (freed memory, a declared region
	 * gone) and not yet deregistered, now: a level.  On a pinning provider
	 * each still pins its pages until the instance's thread next runs. */
	uint64_t dead_now;
	/* Of the deregistrations of dropped entries, those made by
	 * rpcrdma__regcache_reap(): between calls, not by a get or put. */
	uint64_t dead_reaped;
};

/**
 * rpcrdma__regcache_get - a registration covering [@addr, @addr + @len)
 * @p: the provider instance
 * @addr: first byte
 * @len: bytes, > 0
 * @out: the entry, referenced until rpcrdma__regcache_put()
 *
 * Caller is the instance's thread.  A hit costs no registration; a miss
 * registers exactly the range.  Return: 0 or the provider's error.
 */
int rpcrdma__regcache_get(struct rpcrdma_provider *p, const void *addr, size_t len,
			  struct rpcrdma__regent **out);
/**
 * rpcrdma__regcache_get_steady - rpcrdma__regcache_get(), except that a
 * miss on memory that churns registers nothing and returns -EAGAIN
 *
 * Memory churns when a registration of it was dropped because the
 * application freed or unmapped it (the last RPCRDMA__REGCACHE_CHURN such
 * ranges are remembered): a procedure that allocates its results at each
 * call and frees them after.  A caller that can copy into memory it
 * registered up front does so then, and the data path registers nothing.
 */
int rpcrdma__regcache_get_steady(struct rpcrdma_provider *p, const void *addr, size_t len,
				 struct rpcrdma__regent **out);
/**
 * rpcrdma__regcache_find - rpcrdma__regcache_get(), except that it never
 * registers memory the application did not declare (rpcrdma_mem_register):
 * a miss there returns -ENOENT.  For callers to whom a copy costs less
 * than a registration.
 */
int rpcrdma__regcache_find(struct rpcrdma_provider *p, const void *addr, size_t len,
			   struct rpcrdma__regent **out);
#define RPCRDMA__REGCACHE_CHURN 16u

/** rpcrdma__regent_mr - the registration behind an entry */
struct rpcrdma_prov_mr *rpcrdma__regent_mr(const struct rpcrdma__regent *e);
/**
 * rpcrdma__regcache_put - drop a reference; only once nothing posted and no
 * grant uses the registration any more
 */
void rpcrdma__regcache_put(struct rpcrdma__regent *e);
/**
 * rpcrdma__regcache_selfcheck - tests: 0 when the instance's index agrees
 * with its entries (sorted, complete, within max_len, granules counted)
 * and, with @len, no live entry overlaps [@addr, @addr + @len); else a
 * negative code saying which check failed
 */
int rpcrdma__regcache_selfcheck(struct rpcrdma_provider *p, const void *addr, size_t len);
/**
 * rpcrdma__regcache_reap - deregister the entries other threads dropped
 * @p: the provider instance
 *
 * Caller is the instance's thread, once per loop iteration (the provider's
 * trywait does it): memory the application freed while no call used its
 * registration stops being pinned then, not at the next call that
 * registers or at the instance's close.  Costs one atomic load when
 * nothing was dropped.
 */
void rpcrdma__regcache_reap(struct rpcrdma_provider *p);
/** rpcrdma__regcache_stats - the instance's counters (zeros without a cache) */
void rpcrdma__regcache_stats(struct rpcrdma_provider *p, struct rpcrdma__regcache_stats *out);
/**
 * rpcrdma__regcache_close - deregister everything, referenced or not; from the
 * instance's close, before its registrations go.  Entries still referenced
 * must not be put afterwards.
 */
void rpcrdma__regcache_close(struct rpcrdma_provider *p);

/**
 * rpcrdma__regcache_invalidate - memory in [@addr, @addr + @len) is being
 * freed or unmapped: forget every registration overlapping it
 * @pages: true for page-level operations (munmap, mremap, madvise,
 *         mmap MAP_FIXED): registrations racing with one are not kept.
 *
 * Any thread, from inside the allocator too: it takes one mutex, allocates
 * nothing and calls nothing that could come back here.
 */
void rpcrdma__regcache_invalidate(const void *addr, size_t len, bool pages);

/**
 * rpcrdma__memhooks_active - whether this process's frees and unmaps reach
 * the hooks (a self-check done once: they do not when a sanitizer or another
 * interposer owns those symbols, or in a sanitizer build)
 */
bool rpcrdma__memhooks_active(void);

#endif
