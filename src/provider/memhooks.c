/*
 * The process-wide hooks that keep the registration cache (regcache.c)
 * correct: this file defines munmap, mremap, madvise, mmap, free, realloc
 * and reallocarray, so that the application's calls (and those of every
 * library it loads after us) reach us first; each one tells the cache what
 * memory is going, then calls the next definition (dlsym RTLD_NEXT).
 *
 * Why free and realloc too: glibc releases large blocks (mmapped chunks)
 * and trims its heaps with its own internal munmap and madvise, which no
 * symbol interposition sees; the block passed to free is the only trace.
 * Every page glibc gives back belonged to blocks that were freed, so
 * invalidating each freed block's range covers them.
 *
 * Whether the hooks are reached is checked once, by doing each operation
 * and counting (rpcrdma__memhooks_active): a sanitizer's interceptors or
 * another allocator loaded before us take these symbols, and a sanitizer
 * build (RPCRDMA_NO_MEMHOOKS) defines none.  Not seen in any case: system
 * calls made without libc's wrappers (syscall(2), io_uring), shmdt, brk.
 *
 * WARNING: free runs everywhere, inside other allocators' and dlsym's
 * paths too: the hooks allocate nothing, and free called while the next
 * free is being looked up leaks that block rather than recurse.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "provider/regcache.h"

enum hook_kind { H_MUNMAP, H_MREMAP, H_MADVISE, H_MMAP, H_FREE, H_REALLOC, H_NKINDS };

/* Counted only while the self-check probes: every thread frees, and an
 * atomic add on one shared line per free would bounce that line between
 * cores on every call of every RPC. */
static _Atomic bool probing;
static _Atomic unsigned long hook_calls[H_NKINDS];

#ifndef RPCRDMA_NO_MEMHOOKS

static void seen(enum hook_kind k)
{
	if (atomic_load_explicit(&probing, memory_order_relaxed))
		atomic_fetch_add_explicit(&hook_calls[k], 1, memory_order_relaxed);
}

#define HOOK __attribute__((visibility("default")))

static _Thread_local bool resolving;

static void *next_sym(void *_Atomic *slot, const char *name)
{
	void *f = atomic_load_explicit(slot, memory_order_acquire);

	if (f || resolving)
		return f;
	resolving = true;
	f = dlsym(RTLD_NEXT, name);
	resolving = false;
	atomic_store_explicit(slot, f, memory_order_release);
	return f;
}

static void *_Atomic next_munmap, *_Atomic next_mremap, *_Atomic next_madvise,
    *_Atomic next_mmap, *_Atomic next_free, *_Atomic next_realloc, *_Atomic next_reallocarray;

/* Resolve before threads and early frees can race the look-up. */
__attribute__((constructor)) static void memhooks_init(void)
{
	(void)next_sym(&next_free, "free");
	(void)next_sym(&next_realloc, "realloc");
	(void)next_sym(&next_reallocarray, "reallocarray");
	(void)next_sym(&next_munmap, "munmap");
	(void)next_sym(&next_mremap, "mremap");
	(void)next_sym(&next_madvise, "madvise");
	(void)next_sym(&next_mmap, "mmap");
}

HOOK int munmap(void *addr, size_t len)
{
	int (*f)(void *, size_t) = (int (*)(void *, size_t))next_sym(&next_munmap, "munmap");
	int ret;

	seen(H_MUNMAP);
	rpcrdma__regcache_invalidate(addr, len, true);
	ret = f ? f(addr, len) : (int)syscall(SYS_munmap, addr, len);
	rpcrdma__regcache_invalidate(addr, len, true);
	return ret;
}

HOOK void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *(*f)(void *, size_t, size_t, int, ...) =
	    (void *(*)(void *, size_t, size_t, int, ...))next_sym(&next_mremap, "mremap");
	void *dst = NULL, *ret;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		dst = va_arg(ap, void *);
		va_end(ap);
	}
	seen(H_MREMAP);
	rpcrdma__regcache_invalidate(old, old_len, true);
	if (dst)
		rpcrdma__regcache_invalidate(dst, new_len, true);
	if (f)
		ret = dst ? f(old, old_len, new_len, flags, dst) : f(old, old_len, new_len, flags);
	else
		ret = (void *)syscall(SYS_mremap, old, old_len, new_len, flags, dst);
	rpcrdma__regcache_invalidate(old, old_len, true);
	if (dst)
		rpcrdma__regcache_invalidate(dst, new_len, true);
	return ret;
}

/* Advice that leaves the pages where they are. */
static bool advice_keeps_pages(int advice)
{
	switch (advice) {
	case MADV_NORMAL:
	case MADV_RANDOM:
	case MADV_SEQUENTIAL:
	case MADV_WILLNEED:
	case MADV_DONTFORK:
	case MADV_DOFORK:
	case MADV_DONTDUMP:
	case MADV_DODUMP:
		return true;
	default:
		return false;
	}
}

HOOK int madvise(void *addr, size_t len, int advice)
{
	int (*f)(void *, size_t, int) =
	    (int (*)(void *, size_t, int))next_sym(&next_madvise, "madvise");
	bool pages = !advice_keeps_pages(advice);
	int ret;

	seen(H_MADVISE);
	if (pages)
		rpcrdma__regcache_invalidate(addr, len, true);
	ret = f ? f(addr, len, advice) : (int)syscall(SYS_madvise, addr, len, advice);
	if (pages)
		rpcrdma__regcache_invalidate(addr, len, true);
	return ret;
}

HOOK void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *(*f)(void *, size_t, int, int, int, off_t) =
	    (void *(*)(void *, size_t, int, int, int, off_t))next_sym(&next_mmap, "mmap");
	/* MAP_FIXED replaces whatever was mapped there, without munmap. */
	bool replaces = (flags & MAP_FIXED) && !(flags & MAP_FIXED_NOREPLACE);
	void *ret;

	seen(H_MMAP);
	if (replaces)
		rpcrdma__regcache_invalidate(addr, len, true);
	ret = f ? f(addr, len, prot, flags, fd, off)
		: (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	if (replaces)
		rpcrdma__regcache_invalidate(addr, len, true);
	return ret;
}

/* A block about to be freed or moved: its registrations go first, so that
 * no other thread can hit them once the block can be handed out again. */
static void block_going(void *ptr)
{
	if (ptr)
		rpcrdma__regcache_invalidate(ptr, malloc_usable_size(ptr), false);
}

HOOK void free(void *ptr)
{
	void (*f)(void *) = (void (*)(void *))next_sym(&next_free, "free");

	seen(H_FREE);
	if (!f)
		return; /* inside the look-up of free itself: leak, not recurse */
	block_going(ptr);
	f(ptr);
}

HOOK void *realloc(void *ptr, size_t size)
{
	void *(*f)(void *, size_t) = (void *(*)(void *, size_t))next_sym(&next_realloc, "realloc");

	seen(H_REALLOC);
	if (!f)
		return NULL;
	block_going(ptr);
	return f(ptr, size);
}

HOOK void *reallocarray(void *ptr, size_t n, size_t size)
{
	void *(*f)(void *, size_t, size_t) =
	    (void *(*)(void *, size_t, size_t))next_sym(&next_reallocarray, "reallocarray");

	seen(H_REALLOC);
	if (!f)
		return NULL;
	block_going(ptr);
	return f(ptr, n, size);
}

#endif /* RPCRDMA_NO_MEMHOOKS */

static bool hooks_ok;
static pthread_once_t check_once = PTHREAD_ONCE_INIT;
/* Keeps the compiler from pairing and dropping the allocation below. */
static void *volatile probe_block;

static void self_check(void)
{
	unsigned long before[H_NKINDS];
	long ps = sysconf(_SC_PAGESIZE);
	size_t pg = ps > 0 ? (size_t)ps : 4096;
	/* Large enough to be a mapping of its own at glibc's default threshold. */
	const size_t big = 1u << 20;
	char *m;

	atomic_store(&probing, true);
	for (int k = 0; k < H_NKINDS; k++)
		before[k] = atomic_load(&hook_calls[k]);
	m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		atomic_store(&probing, false);
		return;
	}
	(void)mmap(m, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	(void)madvise(m, pg, MADV_DONTNEED);
	(void)mremap(m, 3 * pg, 2 * pg, 0);
	(void)munmap(m, 2 * pg);
	probe_block = malloc(pg);
	probe_block = realloc(probe_block, big);
	free(probe_block);
	probe_block = NULL;
	hooks_ok = true;
	for (int k = 0; k < H_NKINDS; k++)
		hooks_ok = hooks_ok && atomic_load(&hook_calls[k]) > before[k];
	atomic_store(&probing, false);
}

bool rpcrdma__memhooks_active(void)
{
	pthread_once(&check_once, self_check);
	return hooks_ok;
}
