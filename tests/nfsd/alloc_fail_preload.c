/*
 * LD_PRELOAD into rpcrdma-nfsd: the n-th allocation made by the server's
 * own code (the executable, which has the library linked in statically)
 * fails with ENOMEM, once; nfsd_alloc_fail.c drives it.  libc's,
 * libfabric's and the loader's allocations always go through: how they
 * cope is not ours to test, and failing them would only show their
 * handling.
 *
 * Environment:
 *   ALLOC_FAIL_N       the allocation to fail, counted from arming (0 or
 *                      unset: count only)
 *   ALLOC_FAIL_REPORT  a file: "armed" once armed, then "counted C failed F"
 *                      once disarmed; and its name with ".exit" appended:
 *                      "exit live B bytes N of T counted C failed F", the
 *                      blocks (and their bytes) the server's code had not
 *                      given back when it exited, of the T it allocated,
 *                      and the counts since it was last armed
 *   ALLOC_FAIL_TRACE   set: a backtrace on stderr for the allocation failed
 *   ALLOC_FAIL_FROM_START  set: armed from the start, so that the server's
 *                      own start-up is what fails
 *
 * SIGUSR2 arms (counting starts at 0) and, the next time, disarms and
 * reports (armed from the start, the first disarms), so that what the
 * sweep does not test at that moment allocates freely: the server's start
 * while the workload is tested, the check after the failure.  The signal is taken by a thread of this library with
 * every signal blocked, in sigwaitinfo: no thread of the server sees it,
 * so none of its system calls is interrupted by the harness.
 *
 * malloc, calloc, posix_memalign, aligned_alloc, memalign, realloc and
 * reallocarray fail; realloc and free reach here through the library's own
 * hooks (src/provider/memhooks.c), which come first in the executable.
 * Nothing here allocates on the allocation path: the real allocator is
 * reached through glibc's __libc_* entry points, never through dlsym.
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_memalign(size_t align, size_t n);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

/* The executable's code: callers between these are the server's. */
static uintptr_t text_lo, text_hi;
static long fail_at;                /* ALLOC_FAIL_N */
static _Atomic bool armed;
static _Atomic long counted, failed;
static bool trace_failure;
static const char *report_path;

/*
 * The blocks the server's code holds: an open-addressed set of addresses
 * in memory of its own (mmap, at init), so that what is still allocated at
 * exit can be counted without allocating.  A slot once used keeps a
 * tombstone, so a look-up stops only at a slot never used; the server makes
 * a few thousand allocations in a round, far below the room.
 */
#define SLOTS_LOG2 18
#define SLOTS (1u << SLOTS_LOG2)
#define TOMBSTONE ((uintptr_t)1)
static _Atomic uintptr_t *slots;
static _Atomic long live_blocks, live_bytes, tracked;

static size_t slot_of(uintptr_t p)
{
	return (size_t)(((uint64_t)(p >> 4) * 0x9e3779b97f4a7c15ull) >> (64 - SLOTS_LOG2));
}

static bool in_text(const void *caller)
{
	return (uintptr_t)caller >= text_lo && (uintptr_t)caller < text_hi;
}

static void track(void *p)
{
	size_t i = slot_of((uintptr_t)p);

	if (!slots || !p)
		return;
	for (unsigned int probes = 0; probes < SLOTS; probes++, i = (i + 1) & (SLOTS - 1)) {
		uintptr_t v = atomic_load_explicit(&slots[i], memory_order_relaxed);

		if ((v == 0 || v == TOMBSTONE) &&
		    atomic_compare_exchange_strong(&slots[i], &v, (uintptr_t)p)) {
			atomic_fetch_add(&live_blocks, 1);
			atomic_fetch_add(&live_bytes, (long)malloc_usable_size(p));
			atomic_fetch_add(&tracked, 1);
			return;
		}
	}
}

static bool untrack(void *p)
{
	size_t i = slot_of((uintptr_t)p);

	if (!slots || !p)
		return false;
	for (unsigned int probes = 0; probes < SLOTS; probes++, i = (i + 1) & (SLOTS - 1)) {
		uintptr_t v = atomic_load_explicit(&slots[i], memory_order_relaxed);

		if (v == 0)
			return false;
		if (v == (uintptr_t)p && atomic_compare_exchange_strong(&slots[i], &v, TOMBSTONE)) {
			atomic_fetch_sub(&live_blocks, 1);
			atomic_fetch_sub(&live_bytes, (long)malloc_usable_size(p));
			return true;
		}
	}
	return false;
}

/* What the server's code asked for, kept track of. */
static void *mine(const void *caller, void *p)
{
	if (p && in_text(caller))
		track(p);
	return p;
}

static bool fail_this(const void *caller)
{
	long n;

	if (!atomic_load_explicit(&armed, memory_order_relaxed) || !in_text(caller))
		return false;
	n = atomic_fetch_add(&counted, 1) + 1;
	if (n != fail_at)
		return false;
	atomic_fetch_add(&failed, 1);
	if (trace_failure) {
		/* Without allocating (libgcc is loaded at init): addr2line
		 * reads the addresses. */
		void *bt[24];

		backtrace_symbols_fd(bt, backtrace(bt, 24), 2);
	}
	errno = ENOMEM;
	return true;
}

void *malloc(size_t n)
{
	const void *caller = __builtin_return_address(0);

	return fail_this(caller) ? NULL : mine(caller, __libc_malloc(n));
}

void *calloc(size_t n, size_t size)
{
	const void *caller = __builtin_return_address(0);

	return fail_this(caller) ? NULL : mine(caller, __libc_calloc(n, size));
}

int posix_memalign(void **out, size_t align, size_t n)
{
	const void *caller = __builtin_return_address(0);
	void *p;

	if (fail_this(caller))
		return ENOMEM;
	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	*out = mine(caller, p);
	return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
	const void *caller = __builtin_return_address(0);

	return fail_this(caller) ? NULL : mine(caller, __libc_memalign(align, n));
}

void *memalign(size_t align, size_t n)
{
	const void *caller = __builtin_return_address(0);

	return fail_this(caller) ? NULL : mine(caller, __libc_memalign(align, n));
}

/*
 * The executable's own free, realloc and reallocarray (memhooks.c) come
 * first and call these (dlsym RTLD_NEXT), for every caller: a block that
 * was the server's stays so when it moves.  Its realloc ends in a tail
 * call, so the caller seen here is the one that called realloc; where it
 * is not (a build that keeps the hook's frame: the caller is the hook
 * itself), whose call it is cannot be told, and it never fails.
 */
static uintptr_t hooks_lo[2], hooks_hi[2];

void free(void *p)
{
	(void)untrack(p);
	__libc_free(p);
}

static bool in_hooks(const void *caller)
{
	for (int i = 0; i < 2; i++)
		if ((uintptr_t)caller >= hooks_lo[i] && (uintptr_t)caller < hooks_hi[i])
			return true;
	return false;
}

static void *realloc_from(const void *caller, void *p, size_t n)
{
	bool known = !in_hooks(caller), was_mine;
	void *q;

	if (!p && !known)
		return __libc_malloc(n);
	if (!p)
		return fail_this(caller) ? NULL : mine(caller, __libc_malloc(n));
	if (n && known && fail_this(caller))
		return NULL; /* the block stays as it was */
	was_mine = untrack(p);
	q = __libc_realloc(p, n);
	if (was_mine && q)
		track(q);
	else if (was_mine && n)
		track(p); /* it failed: the old block stays */
	return q;
}

void *realloc(void *p, size_t n)
{
	return realloc_from(__builtin_return_address(0), p, n);
}

void *reallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc_from(__builtin_return_address(0), p, n * size);
}

/* Where the executable's own realloc and reallocarray lie, if it has them. */
static void find_hooks(void)
{
	static const char *const names[2] = {"realloc", "reallocarray"};

	for (int i = 0; i < 2; i++) {
		void *at = dlsym(RTLD_DEFAULT, names[i]);
		const ElfW(Sym) *sym = NULL;
		Dl_info info;

		if (!at || !in_text(at) || !dladdr1(at, &info, (void **)&sym, RTLD_DL_SYMENT) ||
		    !sym)
			continue;
		hooks_lo[i] = (uintptr_t)at;
		hooks_hi[i] = (uintptr_t)at + (sym->st_size ? sym->st_size : 1);
	}
}

/* The main program is the first object dl_iterate_phdr reports. */
static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (!text_lo || lo < text_lo)
			text_lo = lo;
		if (hi > text_hi)
			text_hi = hi;
	}
	return 1;
}

/* Written whole under another name, then renamed: the reader never sees
 * half a report. */
static void report_to(const char *suffix, const char *line)
{
	char tmp[4112], path[4096];
	int fd;

	if (!report_path)
		return;
	snprintf(path, sizeof(path), "%s%s", report_path, suffix);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, strlen(line)) == (ssize_t)strlen(line) && close(fd) == 0)
		(void)rename(tmp, path);
	else
		close(fd);
}

static void report(const char *line)
{
	report_to("", line);
}

static void *signal_thread(void *arg)
{
	sigset_t usr2;

	(void)arg;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	for (;;) {
		char line[128];

		if (sigwaitinfo(&usr2, NULL) != SIGUSR2)
			continue;
		if (!atomic_load(&armed)) {
			atomic_store(&counted, 0);
			atomic_store(&failed, 0);
			atomic_store(&armed, true);
			report("armed\n");
		} else {
			atomic_store(&armed, false);
			snprintf(line, sizeof(line), "counted %ld failed %ld\n",
				 atomic_load(&counted), atomic_load(&failed));
			report(line);
		}
	}
	return NULL;
}

__attribute__((constructor)) static void alloc_fail_init(void)
{
	const char *n = getenv("ALLOC_FAIL_N");
	sigset_t all, before;
	pthread_t t;

	fail_at = n ? atol(n) : 0;
	atomic_store(&armed, getenv("ALLOC_FAIL_FROM_START") != NULL);
	report_path = getenv("ALLOC_FAIL_REPORT");
	trace_failure = getenv("ALLOC_FAIL_TRACE") != NULL;
	dl_iterate_phdr(find_text, NULL);
	find_hooks();
	{
		void *m = mmap(NULL, SLOTS * sizeof(*slots), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		slots = m == MAP_FAILED ? NULL : m;
	}
	{
		/* backtrace() loads libgcc on first use: now, not while failing. */
		void *bt[1];

		(void)backtrace(bt, 1);
	}
	/* The thread starts with every signal blocked, so it never takes
	 * the server's SIGTERM, SIGINT or SIGUSR1 (whose signalfd must get
	 * them); every thread the server makes inherits SIGUSR2 blocked
	 * from the main thread, so only sigwaitinfo takes it. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &before);
	if (pthread_create(&t, NULL, signal_thread, NULL) == 0)
		pthread_detach(t);
	sigaddset(&before, SIGUSR2);
	pthread_sigmask(SIG_SETMASK, &before, NULL);
}

/* After main has returned and every other destructor ran (this library
 * was set up first): what the server's code never gave back. */
__attribute__((destructor)) static void alloc_fail_fini(void)
{
	char line[128];

	snprintf(line, sizeof(line), "exit live %ld bytes %ld of %ld counted %ld failed %ld\n",
		 atomic_load(&live_blocks), atomic_load(&live_bytes), atomic_load(&tracked),
		 atomic_load(&counted), atomic_load(&failed));
	report_to(".exit", line);
}
