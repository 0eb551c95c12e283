/*
 * The process-wide hooks that keep the registration cache (regcache.c)
 * correct: this file defines munmap, mremap, madvise, mmap, mmap64, free,
 * realloc, reallocarray, shmat, shmdt, brk, sbrk and syscall, so that the
 * application's calls (and those of every library it loads after us) reach
 * us first; each one tells the cache what memory is going, then calls the
 * next definition (dlsym RTLD_NEXT).
 *
 * Why free and realloc too: glibc releases large blocks (mmapped chunks)
 * and trims its heaps with its own internal munmap and madvise, which no
 * symbol interposition sees; the block passed to free is the only trace.
 * Every page glibc gives back belonged to blocks that were freed, so
 * invalidating each freed block's range covers them.
 *
 * And a second net under all of them: the kernel hands out an address
 * range (mmap without MAP_FIXED, mremap's new place, shmat, a growing
 * break) only where nothing is mapped, so a registration still covering
 * it was left by a release no hook saw (a system call instruction of the
 * application's own, io_uring): the hooks drop it before returning the
 * new memory.  Only ranges handed out through these functions are seen:
 * not those glibc's malloc maps or takes from the break internally.
 *
 * Whether the hooks are reached is checked once, by doing each operation
 * and counting (rpcrdma__memhooks_active): a sanitizer's interceptors or
 * another allocator loaded before us take these symbols, and a sanitizer
 * build (RPCRDMA_NO_MEMHOOKS) defines none.  The check leaves out shmat,
 * shmdt, brk, sbrk, mmap64 and syscall, which it could not make on every
 * system (SysV memory may be forbidden) or at all safely (the break belongs
 * to malloc).  Not seen in any case: a release made without libc's
 * wrappers whose addresses do not come back through these functions, and
 * mappings glibc and the loader make and remove themselves (thread stacks,
 * dlopen).
 *
 * WARNING: free runs everywhere, inside other allocators' and dlsym's
 * paths too: the hooks allocate nothing, and free called while the next
 * free is being looked up leaks that block rather than recurse.  A hook
 * that meets a registration takes the cache's mutex: munmap, madvise or
 * syscall(SYS_munmap) from a signal handler that interrupted one of these
 * hooks in the same thread would deadlock, like malloc there.
 */
/* With 64-bit file offsets glibc names mmap mmap64 in its headers, and this
 * file defines both; on 64-bit systems they are the same function. */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "provider/regcache.h"

/* Where syscall(2)'s numbers map one to one onto the calls hooked here
 * (32-bit x86 multiplexes System V memory through ipc and passes old mmap
 * a structure): only there is syscall interposed. */
#if defined(__LP64__) && defined(SYS_shmat) && defined(SYS_shmdt) && defined(SYS_mmap)
#define MEMHOOKS_SYSCALL 1
#endif

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

static void *_Atomic next_munmap, *_Atomic next_mremap, *_Atomic next_madvise, *_Atomic next_mmap,
    *_Atomic next_free, *_Atomic next_realloc, *_Atomic next_reallocarray, *_Atomic next_shmat,
    *_Atomic next_shmdt, *_Atomic next_brk, *_Atomic next_sbrk, *_Atomic next_syscall;

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
	(void)next_sym(&next_shmat, "shmat");
	(void)next_sym(&next_shmdt, "shmdt");
	(void)next_sym(&next_brk, "brk");
	(void)next_sym(&next_sbrk, "sbrk");
	(void)next_sym(&next_syscall, "syscall");
}

static uintptr_t page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (uintptr_t)ps : 4096;
}

static size_t page_round(size_t len)
{
	size_t pg = page_size();

	return len > SIZE_MAX - pg ? SIZE_MAX : (len + pg - 1) & ~(pg - 1);
}

/* The kernel releases or advises whole pages: [@addr, @addr + @len)
 * widened to them. */
static void pages_going(uintptr_t addr, size_t len)
{
	uintptr_t start = addr & ~(page_size() - 1);
	size_t span = len > SIZE_MAX - (addr - start) ? SIZE_MAX : len + (addr - start);

	rpcrdma__regcache_invalidate((const void *)start, page_round(span), true);
}

/*
 * Pages the kernel just handed out where nothing was mapped.  Without a
 * bump of the page generation: every mmap of the process comes here, and
 * a registration racing with one that is not of its memory is fine.
 */
static void pages_fresh(uintptr_t addr, size_t len)
{
	rpcrdma__regcache_invalidate((const void *)addr, len, false);
}

/* [lo, hi) in either order. */
static void pages_between(uintptr_t a, uintptr_t b)
{
	if (a < b)
		pages_going(a, b - a);
	else if (b < a)
		pages_going(b, a - b);
}

/* The kernel's entry without libc, for when libc's syscall() is not
 * known yet (inside its look-up); -ENOSYS where this file has none. */
static long direct_syscall6(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
#if defined(__x86_64__)
	register long r10 __asm__("r10") = a3;
	register long r8 __asm__("r8") = a4;
	register long r9 __asm__("r9") = a5;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a0;
	register long x1 __asm__("x1") = a1;
	register long x2 __asm__("x2") = a2;
	register long x3 __asm__("x3") = a3;
	register long x4 __asm__("x4") = a4;
	register long x5 __asm__("x5") = a5;

	__asm__ volatile("svc #0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
#else
	(void)nr, (void)a0, (void)a1, (void)a2, (void)a3, (void)a4, (void)a5;
	return -ENOSYS;
#endif
}

/* The system call itself, past every wrapper (ours included), returning
 * as libc's syscall() does: -1 with errno set on failure. */
static long raw_syscall6(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	long (*f)(long, ...) = (long (*)(long, ...))next_sym(&next_syscall, "syscall");
	long ret;

	if (f)
		return f(nr, a0, a1, a2, a3, a4, a5);
	ret = direct_syscall6(nr, a0, a1, a2, a3, a4, a5);
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

/* Everything from @addr up: for when the extent of what goes is unknown.
 * Only re-registrations are lost. */
static void pages_going_from(uintptr_t addr)
{
	rpcrdma__regcache_invalidate((const void *)addr, UINTPTR_MAX - addr, true);
}

static uintptr_t current_break(void)
{
	long b = raw_syscall6(SYS_brk, 0, 0, 0, 0, 0, 0);

	return b == -1 ? 0 : (uintptr_t)b;
}

/* The size of System V segment @shmid in bytes (0 if unknown). */
static size_t segment_len(int shmid)
{
	struct shmid_ds ds;
	int saved = errno;

	if (shmctl(shmid, IPC_STAT, &ds)) {
		errno = saved;
		return 0;
	}
	return ds.shm_segsz;
}

/*
 * The extent of the System V attachment at @addr, as shmdt will detach
 * it: the segment's size in pages, the segment being the one
 * /proc/self/maps shows there (its inode is the segment's id), or longer
 * where the maps show its pages going on (huge pages).  Read a byte at a
 * time through a small buffer, since nothing here may allocate, and not
 * cancelled half way.  0 when nothing starts at @addr or the file cannot
 * be read.
 */
static size_t attached_len(uintptr_t addr)
{
	int saved = errno, cancel, fd;
	size_t len;
	uintptr_t start = 0, end = 0, seg_end = 0, offset = 0;
	unsigned long inode = 0, seg_inode = 0;
	unsigned int field = 0;
	bool found = false, done = false;
	char buf[1024];
	ssize_t n;

	(void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		(void)pthread_setcancelstate(cancel, NULL);
		errno = saved;
		return 0;
	}
	/* Each line: start-end perms offset dev inode [path]. */
	while (!done && (n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n && !done; i++) {
			char c = buf[i];
			unsigned int hex = c >= '0' && c <= '9'   ? (unsigned int)(c - '0')
					   : c >= 'a' && c <= 'f' ? (unsigned int)(c - 'a' + 10)
								  : 0;

			if (c == '\n') {
				if (!found && start == addr) {
					found = true;
					seg_end = end;
					seg_inode = inode;
				} else if (found) {
					/* The same attachment goes on where the
					 * segment's offsets do (a hole in it is
					 * covered by the segment's size). */
					if (start == seg_end && inode == seg_inode && inode != 0 &&
					    offset == start - addr)
						seg_end = end;
					else
						done = true;
				}
				start = end = offset = 0;
				inode = 0;
				field = 0;
			} else if (field == 0) {
				if (c == '-')
					field = 1;
				else
					start = start * 16 + hex;
			} else if (field == 1) {
				if (c == ' ')
					field = 2;
				else
					end = end * 16 + hex;
			} else if (field == 3) {
				if (c == ' ')
					field = 4;
				else
					offset = offset * 16 + hex;
			} else if (field < 5) {
				if (c == ' ')
					field++;
			} else if (field == 5) {
				if (c == ' ')
					field = 6;
				else
					inode = inode * 10 + hex;
			}
		}
	}
	close(fd);
	(void)pthread_setcancelstate(cancel, NULL);
	len = found && seg_end > addr ? seg_end - addr : 0;
	if (found && seg_inode && seg_inode <= (unsigned long)INT32_MAX) {
		size_t whole = page_round(segment_len((int)seg_inode));

		if (whole > len)
			len = whole;
	}
	errno = saved;
	return len;
}

HOOK int munmap(void *addr, size_t len)
{
	int (*f)(void *, size_t) = (int (*)(void *, size_t))next_sym(&next_munmap, "munmap");
	int ret;

	seen(H_MUNMAP);
	pages_going((uintptr_t)addr, len);
	ret = f ? f(addr, len) : (int)syscall(SYS_munmap, addr, len);
	pages_going((uintptr_t)addr, len);
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
	pages_going((uintptr_t)old, old_len);
	if (dst)
		pages_going((uintptr_t)dst, new_len);
	if (f)
		ret = dst ? f(old, old_len, new_len, flags, dst) : f(old, old_len, new_len, flags);
	else
		ret = (void *)syscall(SYS_mremap, old, old_len, new_len, flags, dst);
	pages_going((uintptr_t)old, old_len);
	if (dst)
		pages_going((uintptr_t)dst, new_len);
	if (ret != MAP_FAILED)
		pages_fresh((uintptr_t)ret, page_round(new_len));
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
		pages_going((uintptr_t)addr, len);
	ret = f ? f(addr, len, advice) : (int)syscall(SYS_madvise, addr, len, advice);
	if (pages)
		pages_going((uintptr_t)addr, len);
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
		pages_going((uintptr_t)addr, len);
	ret = f ? f(addr, len, prot, flags, fd, off)
		: (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	if (replaces)
		pages_going((uintptr_t)addr, len);
	if (ret != MAP_FAILED)
		pages_fresh((uintptr_t)ret, page_round(len));
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

/* The extent of the attachment shmat just made at @at: what the maps
 * say (huge pages too), else the segment's size in pages. */
static size_t attachment_len(uintptr_t at, int shmid)
{
	size_t len = attached_len(at);

	return len ? len : page_round(segment_len(shmid));
}

/* Where shmat(@addr, @flags) attaches: SHM_RND rounds down to SHMLBA. */
static uintptr_t attach_at(const void *addr, int flags)
{
	uintptr_t a = (uintptr_t)addr;

	return flags & SHM_RND ? a - a % (uintptr_t)SHMLBA : a;
}

/* Before and after an attachment: SHM_REMAP replaces whatever was mapped
 * there without munmap (before: what it will replace, after: all it did;
 * a registration made meanwhile over the old pages goes too).  Otherwise
 * the kernel found the range unmapped. */
static void attach_before(int shmid, const void *addr, int flags)
{
	if (addr && (flags & SHM_REMAP))
		pages_going(attach_at(addr, flags), page_round(segment_len(shmid)));
}

static void attach_after(int shmid, int flags, void *ret)
{
	if (ret == (void *)-1)
		return;
	if (flags & SHM_REMAP)
		pages_going((uintptr_t)ret, attachment_len((uintptr_t)ret, shmid));
	else
		pages_fresh((uintptr_t)ret, attachment_len((uintptr_t)ret, shmid));
}

/* What a detach at @addr is about to release; unknown (no /proc): all
 * from @addr up, since a registration left over it would be stale. */
static void detach_going(uintptr_t addr, size_t len)
{
	if (len)
		pages_going(addr, len);
	else
		pages_going_from(addr);
}

/* shmat (@detach 0) or shmdt (1) when libc's is not known yet. */
static void *shm_fallback(int detach, int shmid, const void *addr, int flags)
{
#ifdef MEMHOOKS_SYSCALL
	return detach ? (void *)raw_syscall6(SYS_shmdt, (long)addr, 0, 0, 0, 0, 0)
		      : (void *)raw_syscall6(SYS_shmat, shmid, (long)addr, flags, 0, 0, 0);
#else
	(void)detach, (void)shmid, (void)addr, (void)flags;
	errno = ENOSYS;
	return (void *)-1;
#endif
}

HOOK void *shmat(int shmid, const void *addr, int flags)
{
	void *(*f)(int, const void *, int) =
	    (void *(*)(int, const void *, int))next_sym(&next_shmat, "shmat");
	void *ret;

	attach_before(shmid, addr, flags);
	ret = f ? f(shmid, addr, flags) : (void *)shm_fallback(0, shmid, addr, flags);
	attach_after(shmid, flags, ret);
	return ret;
}

HOOK int shmdt(const void *addr)
{
	int (*f)(const void *) = (int (*)(const void *))next_sym(&next_shmdt, "shmdt");
	size_t len = attached_len((uintptr_t)addr);
	int ret;

	detach_going((uintptr_t)addr, len);
	ret = f ? f(addr) : (int)(intptr_t)shm_fallback(1, 0, addr, 0);
	detach_going((uintptr_t)addr, len);
	return ret;
}

/* The break moves: pages below it go when it falls, new ones appear when
 * it rises.  glibc's malloc moves it with its own internal calls, which
 * these do not see and need not (free does).  brk(NULL) and sbrk(0) only
 * ask. */
HOOK int brk(void *addr)
{
	int (*f)(void *) = (int (*)(void *))next_sym(&next_brk, "brk");
	uintptr_t before;
	int ret;

	if (!addr)
		return f ? f(addr) : -1;
	before = current_break();
	if ((uintptr_t)addr < before)
		pages_between((uintptr_t)addr, before);
	ret = f ? f(addr) : -1;
	pages_between(before, current_break());
	return ret;
}

HOOK void *sbrk(intptr_t incr)
{
	void *(*f)(intptr_t) = (void *(*)(intptr_t))next_sym(&next_sbrk, "sbrk");
	uintptr_t before;
	void *ret;

	if (!incr)
		return f ? f(incr) : (void *)-1;
	before = current_break();
	if (incr < 0)
		pages_between(before + (uintptr_t)incr, before);
	ret = f ? f(incr) : (void *)-1;
	pages_between(before, current_break());
	return ret;
}

#if defined(__LP64__)
/* The same function as mmap where off_t has 64 bits; exported apart. */
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);

HOOK void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}
#endif

#ifdef MEMHOOKS_SYSCALL
/* What system call @nr with arguments @a releases, dropped before it runs
 * and again after, as the wrappers above do; @shm_len: shmdt's extent. */
static void syscall_going(long nr, const long *a, size_t shm_len)
{
	switch (nr) {
	case SYS_munmap:
		pages_going((uintptr_t)a[0], (size_t)a[1]);
		break;
	case SYS_mremap:
		pages_going((uintptr_t)a[0], (size_t)a[1]);
		if (a[3] & MREMAP_FIXED)
			pages_going((uintptr_t)a[4], (size_t)a[2]);
		break;
	case SYS_madvise:
		if (!advice_keeps_pages((int)a[2]))
			pages_going((uintptr_t)a[0], (size_t)a[1]);
		break;
	case SYS_mmap:
		if ((a[3] & MAP_FIXED) && !(a[3] & MAP_FIXED_NOREPLACE))
			pages_going((uintptr_t)a[0], (size_t)a[1]);
		break;
	case SYS_shmdt:
		detach_going((uintptr_t)a[0], shm_len);
		break;
	default:
		break;
	}
}

/* What it handed out where nothing was mapped (@ret: its result). */
static void syscall_fresh(long nr, const long *a, long ret)
{
	if (ret == -1)
		return;
	switch (nr) {
	case SYS_mremap:
		pages_fresh((uintptr_t)ret, page_round((size_t)a[2]));
		break;
	case SYS_mmap:
		pages_fresh((uintptr_t)ret, page_round((size_t)a[1]));
		break;
	default:
		break;
	}
}

/*
 * syscall(2) with the numbers that release or hand out pages: the same as
 * their wrappers above.  Every other number passes straight through.
 */
HOOK long syscall(long nr, ...)
{
	long a[6], ret;
	size_t shm_len;
	uintptr_t before;
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	shm_len = nr == SYS_shmdt ? attached_len((uintptr_t)a[0]) : 0;
	/* brk(0) only asks where the break is. */
	before = nr == SYS_brk && a[0] ? current_break() : 0;
	syscall_going(nr, a, shm_len);
	if (nr == SYS_shmat)
		attach_before((int)a[0], (const void *)a[1], (int)a[2]);
	if (before && (uintptr_t)a[0] < before)
		pages_between((uintptr_t)a[0], before);
	ret = raw_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	syscall_going(nr, a, shm_len);
	syscall_fresh(nr, a, ret);
	if (nr == SYS_shmat)
		attach_after((int)a[0], (int)a[2], (void *)ret);
	if (before)
		pages_between(before, current_break());
	return ret;
}
#endif /* MEMHOOKS_SYSCALL */

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
