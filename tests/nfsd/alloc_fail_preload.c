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
 *                      once disarmed
 *   ALLOC_FAIL_TRACE   set: a backtrace on stderr for the allocation failed
 *
 * SIGUSR2 arms (counting starts at 0) and, the next time, disarms and
 * reports, so the server's start and the sweep's check after the failure
 * allocate freely.  The signal is taken by a thread of this library with
 * every signal blocked, in sigwaitinfo: no thread of the server sees it,
 * so none of its system calls is interrupted by the harness.
 *
 * malloc, calloc, posix_memalign, aligned_alloc and memalign fail; realloc
 * and free are the library's own hooks (src/provider/memhooks.c), which
 * come first in the executable, so they are not interposed here.  Nothing
 * here allocates on the allocation path: the real allocator is reached
 * through glibc's __libc_* entry points, never through dlsym.
 */
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
#include <unistd.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_memalign(size_t align, size_t n);

/* The executable's code: callers between these are the server's. */
static uintptr_t text_lo, text_hi;
static long fail_at;                /* ALLOC_FAIL_N */
static _Atomic bool armed;
static _Atomic long counted, failed;
static bool trace_failure;
static const char *report_path;

static bool fail_this(const void *caller)
{
	uintptr_t c = (uintptr_t)caller;
	long n;

	if (!atomic_load_explicit(&armed, memory_order_relaxed) || c < text_lo || c >= text_hi)
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
	return fail_this(__builtin_return_address(0)) ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	return fail_this(__builtin_return_address(0)) ? NULL : __libc_calloc(n, size);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (fail_this(__builtin_return_address(0)))
		return ENOMEM;
	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
	return fail_this(__builtin_return_address(0)) ? NULL : __libc_memalign(align, n);
}

void *memalign(size_t align, size_t n)
{
	return fail_this(__builtin_return_address(0)) ? NULL : __libc_memalign(align, n);
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
static void report(const char *line)
{
	char tmp[4096];
	int fd;

	if (!report_path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", report_path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, strlen(line)) == (ssize_t)strlen(line) && close(fd) == 0)
		(void)rename(tmp, report_path);
	else
		close(fd);
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
	report_path = getenv("ALLOC_FAIL_REPORT");
	trace_failure = getenv("ALLOC_FAIL_TRACE") != NULL;
	dl_iterate_phdr(find_text, NULL);
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
