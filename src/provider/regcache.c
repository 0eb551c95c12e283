/*
 * The registration cache (regcache.h): a provider instance keeps the
 * registrations of caller memory it made for one call, so that the next
 * call over the same buffer registers nothing.
 *
 * Normal operation.  Entries are exact ranges, on one LRU list per
 * instance and in an array sorted by start (by_start: lookups and
 * invalidations are binary searches, not scans); a get whose range lies
 * inside a live entry takes a reference (a hit, an exact one preferred),
 * otherwise it registers the range and keeps it (a miss), evicting
 * unreferenced entries from the cold end to stay within
 * RPCRDMA__REGCACHE_MAX_ENTRIES and _MAX_BYTES.  Only the instance's thread
 * gets and puts; it never calls the provider with the lock held.
 *
 * Invalidation.  memhooks.c calls rpcrdma__regcache_invalidate() from
 * whatever thread frees or unmaps memory, before the memory goes (and for
 * page operations again after): every overlapping entry leaves the list at
 * once, so no later get can hit it, and is deregistered on the instance's
 * thread once no call uses it: at its next get or put, or, when it has
 * none (a client gone idle, or making inline calls only), at the next
 * iteration of its loop (rpcrdma__regcache_reap, from the before-sleep
 * trywait), so that freed memory does not stay pinned until the instance
 * closes.  The hook only raises reap_due under the lock it already holds;
 * it never calls the provider.  Most frees touch no entry: they skip the
 * lock when they fall outside the hull of pinning entries or in 64 KiB
 * granules no pinning entry touches (granule_refs).  A registration that
 * was being made while a page operation ran (page_gen moved) is used once
 * and not kept.  Where the
 * provider pins pages (verbs) and the hooks are not active, nothing is kept:
 * every get registers and every put deregisters, as before the cache.
 *
 * Declared regions (rpcrdma/mem.h).  A get inside a region the application
 * declared takes the instance's registration of the whole region, made at
 * its first use and kept on the decl list: never evicted, never
 * invalidated by the hooks (the application promised the memory stays),
 * until rpcrdma_mem_deregister() moves it to dead or held like an
 * invalidated entry.  When that registration fails, a marker without one
 * takes its place on decl, and the region's ranges are looked up and
 * registered like undeclared memory from then on.
 *
 * WARNING: the lock is taken inside free(); nothing under it allocates,
 * frees or calls out.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace.h"
#include "provider/provider.h"
#include "provider/regcache.h"
#include "rpcrdma/mem.h"

enum re_state {
	RE_LIVE, /* on the LRU list: hits may take it */
	RE_DEAD, /* invalidated, evicted or one-shot: deregistered at the last put */
};

struct rpcrdma__regent {
	struct rpcrdma__regcache *rc;
	uintptr_t start, end;
	struct rpcrdma_prov_mr *mr;
	unsigned int refs;
	enum re_state state;
	const struct rpcrdma_mem_region *region; /* LIVE on decl: the one it covers */
	/* On exactly one list of rc: lru or decl (LIVE), dead (DEAD, no
	 * reference: deregistered at the next get, put or reap) or held
	 * (DEAD, referenced). */
	struct rpcrdma__regent *prev, *next;
};

struct re_list {
	struct rpcrdma__regent *head, *tail;
};

struct rpcrdma__regcache {
	struct rpcrdma_provider *p;
	bool keep; /* entries may be kept: no pinning, or the hooks are active */
	/* The provider finds the memory by address at each access and pins
	 * nothing (RPCRDMA_PCAP_REG_BY_ADDRESS): an entry whose memory was
	 * freed stays right for whatever is mapped there next, so the hooks
	 * leave it (a server that mallocs each call's results registers
	 * once, not per call). */
	bool by_address;
	struct re_list lru, decl, dead, held;
	size_t nent, bytes; /* on lru */
	/* The lru entries again, by start address, and the longest of them
	 * ever (since the cache was last empty): an entry overlapping
	 * [a, b) starts in (a - max_len, b), found by binary search rather
	 * than by scanning every entry, in lookups and in free(). */
	struct rpcrdma__regent *by_start[RPCRDMA__REGCACHE_MAX_ENTRIES];
	/* An entry went to dead from another thread (the hooks, or
	 * rpcrdma_mem_deregister): the instance's thread deregisters it at
	 * its next reap.  Written under rc_lock; read without it by the reap,
	 * which then looks under the lock. */
	atomic_bool reap_due;
	size_t max_len;
	/* Ranges whose registration the hooks dropped, newest over oldest. */
	struct {
		uintptr_t start, end;
	} churned[RPCRDMA__REGCACHE_CHURN];
	unsigned int churn_next;
	struct rpcrdma__regcache_stats st;
	struct rpcrdma__regcache *gprev, *gnext;
};

struct rpcrdma_mem_region {
	uintptr_t start, end;
	struct rpcrdma_mem_region *next;
};

static pthread_mutex_t rc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rpcrdma__regcache *caches;   /* under rc_lock */
static struct rpcrdma_mem_region *regions; /* under rc_lock */
static unsigned int nregions;
/* The hull of every range ever kept by a pinning cache: frees outside it
 * skip the lock. */
static _Atomic uintptr_t hull_lo = UINTPTR_MAX, hull_hi;
/*
 * Inside the hull, most frees are of memory no entry covers (a heap holds
 * registered buffers among everything else), and taking the lock and
 * scanning every pinning cache's entries in each free() would serialize a
 * multi-threaded program.  So each 64 KiB granule of the address space
 * (hashed into a table) counts the live pinning entries touching it; a
 * free whose granules all count zero skips the lock.  Counts go up before
 * page_gen is checked, like the hull (see get_common).
 */
#define GRANULE_SHIFT 16
#define GRANULES 16384u
static _Atomic uint32_t granule_refs[GRANULES];
/* Bumped by every page operation before it acts. */
static _Atomic uint64_t page_gen;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
	pthread_mutex_lock(&rc_lock);
}

static void fork_after(void)
{
	pthread_mutex_unlock(&rc_lock);
}

/* A fork while another thread holds the lock would leave the child's
 * frees waiting for ever. */
static void atfork_init(void)
{
	(void)pthread_atfork(fork_prepare, fork_after, fork_after);
}

/* At load, not at the first use: prepare handlers run in the reverse order
 * of registration, and one registered before ours would run with the lock
 * held, where a free or munmap of its own would wait for ever. */
__attribute__((constructor)) static void atfork_at_load(void)
{
	pthread_once(&atfork_once, atfork_init);
}

static void list_push(struct re_list *l, struct rpcrdma__regent *e)
{
	e->prev = NULL;
	e->next = l->head;
	if (l->head)
		l->head->prev = e;
	else
		l->tail = e;
	l->head = e;
}

static void list_unlink(struct re_list *l, struct rpcrdma__regent *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		l->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		l->tail = e->prev;
	e->prev = e->next = NULL;
}

/* Adds @delta to the count of every granule [@a, @b) touches. */
static void granules_add(uintptr_t a, uintptr_t b, int delta)
{
	uintptr_t g0 = a >> GRANULE_SHIFT, g1 = (b - 1) >> GRANULE_SHIFT;

	if (g1 - g0 >= GRANULES) {
		g0 = 0;
		g1 = GRANULES - 1;
	}
	for (uintptr_t g = g0; g <= g1; g++)
		atomic_fetch_add(&granule_refs[g % GRANULES], (uint32_t)delta);
}

/* Whether no live pinning entry may touch [@a, @b). */
static bool granules_clear(uintptr_t a, uintptr_t b)
{
	uintptr_t g0 = a >> GRANULE_SHIFT, g1 = (b - 1) >> GRANULE_SHIFT;

	if (g1 - g0 >= GRANULES)
		return false;
	for (uintptr_t g = g0; g <= g1; g++) {
		if (atomic_load(&granule_refs[g % GRANULES]))
			return false;
	}
	return true;
}

/* The first index of by_start whose entry starts at or after @a. */
static size_t first_at_or_after(const struct rpcrdma__regcache *rc, uintptr_t a)
{
	size_t lo = 0, hi = rc->nent;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rc->by_start[mid]->start < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first index whose entry may overlap [@a, ...): it starts after
 * a - max_len (entries are at most max_len long). */
static size_t first_candidate(const struct rpcrdma__regcache *rc, uintptr_t a)
{
	return first_at_or_after(rc, a >= rc->max_len ? a - rc->max_len + 1 : 0);
}

/* Caller holds rc_lock; nent counts the entries already in by_start. */
static void index_add_locked(struct rpcrdma__regcache *rc, struct rpcrdma__regent *e)
{
	size_t i = first_at_or_after(rc, e->start);

	memmove(&rc->by_start[i + 1], &rc->by_start[i], (rc->nent - i) * sizeof(rc->by_start[0]));
	rc->by_start[i] = e;
	if (e->end - e->start > rc->max_len)
		rc->max_len = e->end - e->start;
}

/* Caller holds rc_lock; before nent drops. */
static void index_del_locked(struct rpcrdma__regcache *rc, struct rpcrdma__regent *e)
{
	size_t i = first_at_or_after(rc, e->start);

	while (i < rc->nent && rc->by_start[i] != e)
		i++;
	if (i == rc->nent)
		return; /* not indexed: cannot happen */
	memmove(&rc->by_start[i], &rc->by_start[i + 1],
		(rc->nent - i - 1) * sizeof(rc->by_start[0]));
	if (rc->nent == 1)
		rc->max_len = 0;
}

/* Caller holds rc_lock.  @e, live on @rc's lru, leaves it (and the
 * granule counts, on a pinning cache). */
static void leave_lru_locked(struct rpcrdma__regcache *rc, struct rpcrdma__regent *e)
{
	index_del_locked(rc, e);
	list_unlink(&rc->lru, e);
	rc->nent--;
	rc->bytes -= e->end - e->start;
	if (!rc->by_address)
		granules_add(e->start, e->end, -1);
}

/* Caller holds rc_lock.  @e, now DEAD and on no list, waits on held for
 * its last put or, unreferenced, on dead for the instance's thread. */
static void to_dead_or_held_locked(struct rpcrdma__regcache *rc, struct rpcrdma__regent *e)
{
	if (e->refs) {
		list_push(&rc->held, e);
		return;
	}
	list_push(&rc->dead, e);
	atomic_store_explicit(&rc->reap_due, true, memory_order_relaxed);
}

/* Caller holds rc_lock.  @e leaves lru for dead or held. */
static void kill_locked(struct rpcrdma__regcache *rc, struct rpcrdma__regent *e)
{
	leave_lru_locked(rc, e);
	e->state = RE_DEAD;
	to_dead_or_held_locked(rc, e);
}

/* Caller holds rc_lock: the dead list, to deregister without the lock. */
static struct rpcrdma__regent *take_dead_locked(struct rpcrdma__regcache *rc)
{
	struct rpcrdma__regent *d = rc->dead.head;

	rc->dead.head = rc->dead.tail = NULL;
	atomic_store_explicit(&rc->reap_due, false, memory_order_relaxed);
	return d;
}

static void free_chain(struct rpcrdma__regent *e)
{
	while (e) {
		struct rpcrdma__regent *n = e->next;

		if (e->mr)
			rpcrdma__provider_dereg_mr(e->mr);
		free(e);
		e = n;
	}
}

static struct rpcrdma__regcache *cache_of(struct rpcrdma_provider *p)
{
	struct rpcrdma__regcache *rc = p->regcache;

	if (rc)
		return rc;
	rc = calloc(1, sizeof(*rc));
	if (!rc)
		return NULL;
	rc->p = p;
	rc->by_address = p->caps.flags & RPCRDMA_PCAP_REG_BY_ADDRESS;
	rc->keep = rc->by_address || rpcrdma__memhooks_active();
	pthread_once(&atfork_once, atfork_init);
	pthread_mutex_lock(&rc_lock);
	rc->gnext = caches;
	if (caches)
		caches->gprev = rc;
	caches = rc;
	pthread_mutex_unlock(&rc_lock);
	p->regcache = rc;
	return rc;
}

static bool covers(const struct rpcrdma__regent *e, uintptr_t a, uintptr_t b)
{
	return e->start <= a && b <= e->end;
}

/* Caller holds rc_lock: @r, seen over [@rs, @re) without the lock, is
 * still declared (and not another region reusing its address). */
static bool still_declared_locked(const struct rpcrdma_mem_region *r, uintptr_t rs, uintptr_t re)
{
	const struct rpcrdma_mem_region *still;

	for (still = regions; still && still != r; still = still->next)
		;
	return still && still->start == rs && still->end == re;
}

/* The instance's registration of declared region @r, [@rs, @re), at its
 * first use.  @r is only compared from here on: it may be deregistered
 * meanwhile, and its memory even reused by another region, which the range
 * tells apart. */
static int reg_declared(struct rpcrdma__regcache *rc, const struct rpcrdma_mem_region *r,
			uintptr_t rs, uintptr_t re, struct rpcrdma__regent **out)
{
	struct rpcrdma__regent *e = calloc(1, sizeof(*e));
	bool kept;
	int ret;

	if (!e)
		return -ENOMEM;
	e->rc = rc;
	e->start = rs;
	e->end = re;
	e->refs = 1;
	ret = rpcrdma__provider_reg_mr(rc->p, (void *)rs, re - rs, &e->mr);
	if (ret) {
		/* Remembered, so that later gets do not pin the whole region
		 * again only to fail (RLIMIT_MEMLOCK, say): a marker with no
		 * registration, until the region goes. */
		e->mr = NULL;
		e->refs = 0;
	}
	pthread_mutex_lock(&rc_lock);
	kept = still_declared_locked(r, rs, re);
	if (kept) {
		e->state = RE_LIVE;
		e->region = r;
		list_push(&rc->decl, e);
		if (ret)
			rc->st.decl_failures++;
		else
			rc->st.misses++;
	} else if (!ret) {
		e->state = RE_DEAD; /* deregistered meanwhile: this call only */
		list_push(&rc->held, e);
		rc->st.uncached++;
	}
	pthread_mutex_unlock(&rc_lock);
	if (ret) {
		/* The marker is the lists' now, unless the region went. */
		if (!kept)
			free(e);
		return ret;
	}
	*out = e;
	return 0;
}

static bool churns_locked(const struct rpcrdma__regcache *rc, uintptr_t a, uintptr_t b)
{
	for (unsigned int i = 0; i < RPCRDMA__REGCACHE_CHURN; i++) {
		if (rc->churned[i].start < b && a < rc->churned[i].end)
			return true;
	}
	return false;
}

/* What a miss may do: register the range, register it unless the memory
 * churns, or nothing (only declared regions are registered then: that is
 * what the application declared them for). */
enum miss_policy {
	MISS_REGISTER,
	MISS_REGISTER_STEADY,
	MISS_FAIL,
};

static int get_common(struct rpcrdma_provider *p, const void *addr, size_t len,
		      enum miss_policy miss, struct rpcrdma__regent **out)
{
	struct rpcrdma__regcache *rc = cache_of(p);
	uintptr_t a = (uintptr_t)addr, b = a + len;
	struct rpcrdma__regent *e, *drop, *evict = NULL;
	const struct rpcrdma_mem_region *r;
	uint64_t gen;
	bool keep;
	int ret;

	if (!rc)
		return -ENOMEM;
	if (!addr || !len || b < a || !out)
		return -EINVAL;
	pthread_mutex_lock(&rc_lock);
	drop = take_dead_locked(rc);
	for (r = regions; r; r = r->next) {
		if (r->start <= a && b <= r->end)
			break;
	}
	if (r) {
		uintptr_t rs = r->start, re = r->end;

		for (e = rc->decl.head; e && e->region != r; e = e->next)
			;
		if (!e || e->mr) {
			if (e) {
				e->refs++;
				rc->st.hits++;
			}
			pthread_mutex_unlock(&rc_lock);
			free_chain(drop);
			if (e) {
				*out = e;
				return 0;
			}
			if (reg_declared(rc, r, rs, re, out) == 0)
				return 0;
			drop = NULL;
			pthread_mutex_lock(&rc_lock);
		}
		/* This instance could not register the region whole: its
		 * ranges go through the cache like undeclared memory. */
	}
	/* An entry of exactly the range first: a grant of a whole
	 * registration needs no registration of its part (verbs_mem.c). */
	e = NULL;
	for (size_t i = first_at_or_after(rc, b >= rc->max_len ? b - rc->max_len : 0);
	     i < rc->nent && rc->by_start[i]->start <= a; i++) {
		struct rpcrdma__regent *c = rc->by_start[i];

		if (!covers(c, a, b))
			continue;
		if (!e || (c->start == a && c->end == b))
			e = c;
		if (e->start == a && e->end == b)
			break;
	}
	if (e) {
		list_unlink(&rc->lru, e);
		list_push(&rc->lru, e);
		e->refs++;
		rc->st.hits++;
		pthread_mutex_unlock(&rc_lock);
		free_chain(drop);
		*out = e;
		return 0;
	}
	if (miss == MISS_FAIL || (miss == MISS_REGISTER_STEADY && churns_locked(rc, a, b))) {
		pthread_mutex_unlock(&rc_lock);
		free_chain(drop);
		return miss == MISS_FAIL ? -ENOENT : -EAGAIN;
	}
	keep = rc->keep && len <= RPCRDMA__REGCACHE_MAX_BYTES;
	/* Room for the new entry: unreferenced ones go, coldest first. */
	for (e = rc->lru.tail; keep && e &&
			       (rc->nent >= RPCRDMA__REGCACHE_MAX_ENTRIES ||
				rc->bytes + len > RPCRDMA__REGCACHE_MAX_BYTES);) {
		struct rpcrdma__regent *prev = e->prev;

		if (!e->refs) {
			leave_lru_locked(rc, e);
			e->state = RE_DEAD;
			e->next = evict;
			evict = e;
			rc->st.evictions++;
		}
		e = prev;
	}
	if (rc->nent >= RPCRDMA__REGCACHE_MAX_ENTRIES ||
	    rc->bytes + len > RPCRDMA__REGCACHE_MAX_BYTES)
		keep = false; /* every entry is in use */
	gen = atomic_load(&page_gen);
	pthread_mutex_unlock(&rc_lock);
	free_chain(drop);
	free_chain(evict);

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	ret = rpcrdma__provider_reg_mr(p, (void *)a, len, &e->mr);
	if (ret) {
		free(e);
		return ret;
	}
	e->rc = rc;
	e->start = a;
	e->end = b;
	e->refs = 1;
	pthread_mutex_lock(&rc_lock);
	/* ORDER: the hull grows before page_gen is checked; a page operation
	 * bumps page_gen before it reads the hull.  Either it sees the entry,
	 * or we see it moved. */
	/* Entries of a by-address cache are never invalidated (the hooks
	 * skip them), so they stay out of the hull: a process on ofi alone
	 * never takes the lock in free(). */
	if (keep && !rc->by_address) {
		uintptr_t lo = atomic_load(&hull_lo), hi = atomic_load(&hull_hi);

		if (a < lo)
			atomic_store(&hull_lo, a);
		if (b > hi)
			atomic_store(&hull_hi, b);
		granules_add(a, b, 1);
	}
	if (keep && atomic_load(&page_gen) == gen) {
		e->state = RE_LIVE;
		list_push(&rc->lru, e);
		index_add_locked(rc, e);
		rc->nent++;
		rc->bytes += len;
		rc->st.misses++;
	} else {
		if (keep && !rc->by_address)
			granules_add(a, b, -1);
		e->state = RE_DEAD;
		list_push(&rc->held, e);
		rc->st.uncached++;
	}
	pthread_mutex_unlock(&rc_lock);
	*out = e;
	return 0;
}

int rpcrdma__regcache_get(struct rpcrdma_provider *p, const void *addr, size_t len,
			  struct rpcrdma__regent **out)
{
	return get_common(p, addr, len, MISS_REGISTER, out);
}

int rpcrdma__regcache_get_steady(struct rpcrdma_provider *p, const void *addr, size_t len,
				 struct rpcrdma__regent **out)
{
	return get_common(p, addr, len, MISS_REGISTER_STEADY, out);
}

int rpcrdma__regcache_find(struct rpcrdma_provider *p, const void *addr, size_t len,
			   struct rpcrdma__regent **out)
{
	return get_common(p, addr, len, MISS_FAIL, out);
}

struct rpcrdma_prov_mr *rpcrdma__regent_mr(const struct rpcrdma__regent *e)
{
	return e->mr;
}

void rpcrdma__regcache_put(struct rpcrdma__regent *e)
{
	struct rpcrdma__regcache *rc = e->rc;
	struct rpcrdma__regent *drop;

	pthread_mutex_lock(&rc_lock);
	if (--e->refs == 0 && e->state == RE_DEAD) {
		list_unlink(&rc->held, e);
		list_push(&rc->dead, e);
	}
	drop = take_dead_locked(rc);
	pthread_mutex_unlock(&rc_lock);
	free_chain(drop);
}

void rpcrdma__regcache_reap(struct rpcrdma_provider *p)
{
	struct rpcrdma__regcache *rc = p->regcache;
	struct rpcrdma__regent *drop;

	/* Every loop iteration comes here: one load when nothing is due. */
	if (!rc || !atomic_load_explicit(&rc->reap_due, memory_order_relaxed))
		return;
	pthread_mutex_lock(&rc_lock);
	drop = take_dead_locked(rc);
	for (const struct rpcrdma__regent *e = drop; e; e = e->next)
		rc->st.dead_reaped++;
	pthread_mutex_unlock(&rc_lock);
	free_chain(drop);
}

void rpcrdma__regcache_stats(struct rpcrdma_provider *p, struct rpcrdma__regcache_stats *out)
{
	struct rpcrdma__regcache *rc = p->regcache;

	*out = (struct rpcrdma__regcache_stats){0};
	if (!rc)
		return;
	pthread_mutex_lock(&rc_lock);
	*out = rc->st;
	for (const struct rpcrdma__regent *e = rc->dead.head; e; e = e->next)
		out->dead_now++;
	pthread_mutex_unlock(&rc_lock);
}

static void append(struct rpcrdma__regent **chain, struct re_list *l)
{
	while (l->head) {
		struct rpcrdma__regent *e = l->head;

		list_unlink(l, e);
		e->next = *chain;
		*chain = e;
	}
}

void rpcrdma__regcache_close(struct rpcrdma_provider *p)
{
	struct rpcrdma__regcache *rc = p->regcache;
	struct rpcrdma__regent *all = NULL;

	if (!rc)
		return;
	pthread_mutex_lock(&rc_lock);
	if (rc->gprev)
		rc->gprev->gnext = rc->gnext;
	else
		caches = rc->gnext;
	if (rc->gnext)
		rc->gnext->gprev = rc->gprev;
	for (struct rpcrdma__regent *e = rc->lru.head; e && !rc->by_address; e = e->next)
		granules_add(e->start, e->end, -1);
	append(&all, &rc->lru);
	append(&all, &rc->decl);
	append(&all, &rc->dead);
	append(&all, &rc->held);
	pthread_mutex_unlock(&rc_lock);
	free_chain(all);
	p->regcache = NULL;
	free(rc);
}

int rpcrdma__regcache_selfcheck(struct rpcrdma_provider *p, const void *addr, size_t len)
{
	struct rpcrdma__regcache *rc = p->regcache;
	uintptr_t a = (uintptr_t)addr, b = a + len;
	size_t n = 0;
	int bad = 0;

	if (!rc)
		return 0;
	pthread_mutex_lock(&rc_lock);
	for (struct rpcrdma__regent *e = rc->lru.head; e; e = e->next) {
		size_t i = first_at_or_after(rc, e->start);

		n++;
		while (i < rc->nent && rc->by_start[i] != e)
			i++;
		if (i == rc->nent || e->state != RE_LIVE || e->end - e->start > rc->max_len)
			bad = 1;
		if (len && e->start < b && a < e->end)
			bad = 2;
		for (uintptr_t g = e->start >> GRANULE_SHIFT;
		     !rc->by_address && g <= (e->end - 1) >> GRANULE_SHIFT; g++) {
			if (!atomic_load(&granule_refs[g % GRANULES]))
				bad = 3;
		}
	}
	if (n != rc->nent)
		bad = 4;
	for (size_t i = 1; i < rc->nent; i++) {
		if (rc->by_start[i - 1]->start > rc->by_start[i]->start)
			bad = 5;
	}
	pthread_mutex_unlock(&rc_lock);
	return bad ? -bad : 0;
}

void rpcrdma__regcache_invalidate(const void *addr, size_t len, bool pages)
{
	uintptr_t a = (uintptr_t)addr, b = a + len;

	if (pages)
		atomic_fetch_add(&page_gen, 1);
	if (!len)
		return;
	if (b < a)
		b = UINTPTR_MAX;
	if (b <= atomic_load(&hull_lo) || a >= atomic_load(&hull_hi) || granules_clear(a, b))
		return;
	pthread_mutex_lock(&rc_lock);
	for (struct rpcrdma__regcache *rc = caches; rc; rc = rc->gnext) {
		size_t i = rc->by_address ? rc->nent : first_candidate(rc, a);

		while (i < rc->nent && rc->by_start[i]->start < b) {
			struct rpcrdma__regent *e = rc->by_start[i];

			if (a >= e->end) {
				i++;
				continue;
			}
			rc->churned[rc->churn_next].start = e->start;
			rc->churned[rc->churn_next].end = e->end;
			rc->churn_next = (rc->churn_next + 1) % RPCRDMA__REGCACHE_CHURN;
			kill_locked(rc, e); /* takes it out of by_start: i is the next */
			rc->st.invalidations++;
		}
	}
	pthread_mutex_unlock(&rc_lock);
}

int rpcrdma_mem_register(void *addr, size_t len, struct rpcrdma_mem_region **out)
{
	uintptr_t a = (uintptr_t)addr, b = a + len;
	struct rpcrdma_mem_region *r, *it;

	if (!addr || !len || b < a || !out) {
		RPCRDMA__TRACE_BAD_ARG(-EINVAL, "rpcrdma_mem_register(%p, %zu): %s", addr, len,
				       !addr  ? "a NULL addr"
				       : !len ? "len 0"
				       : !out ? "a NULL out"
					      : "the range wraps past the end of memory");
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->start = a;
	r->end = b;
	pthread_mutex_lock(&rc_lock);
	for (it = regions; it; it = it->next) {
		if (it->start < b && a < it->end)
			break;
	}
	if (it || nregions >= RPCRDMA_MEM_MAX_REGIONS) {
		pthread_mutex_unlock(&rc_lock);
		free(r);
		return it ? -EEXIST : -ENOSPC;
	}
	r->next = regions;
	regions = r;
	nregions++;
	pthread_mutex_unlock(&rc_lock);
	*out = r;
	return 0;
}

int rpcrdma_mem_deregister(struct rpcrdma_mem_region *region)
{
	struct rpcrdma_mem_region **pp;

	if (!region)
		return -EINVAL;
	pthread_mutex_lock(&rc_lock);
	for (pp = &regions; *pp && *pp != region; pp = &(*pp)->next)
		;
	if (!*pp) {
		pthread_mutex_unlock(&rc_lock);
		return -EINVAL;
	}
	*pp = region->next;
	nregions--;
	/* Each instance's registration of it goes once no call uses it, on
	 * that instance's thread (dead is reaped at its next get, put or loop
	 * iteration). */
	for (struct rpcrdma__regcache *rc = caches; rc; rc = rc->gnext) {
		struct rpcrdma__regent *e = rc->decl.head;

		while (e) {
			struct rpcrdma__regent *n = e->next;

			if (e->region == region) {
				list_unlink(&rc->decl, e);
				e->region = NULL;
				e->state = RE_DEAD;
				to_dead_or_held_locked(rc, e);
			}
			e = n;
		}
	}
	pthread_mutex_unlock(&rc_lock);
	free(region);
	return 0;
}
