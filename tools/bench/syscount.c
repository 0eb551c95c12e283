/*
 * System calls per RPC: a perf counter on the raw_syscalls:sys_enter
 * tracepoint for the calling thread, inherited by threads it starts after
 * (a provider's helper threads are then counted with the side that owns
 * them).  No sampling, no ring buffer: the kernel adds one per system call
 * entry.  That is not free: every system call of a counted thread takes the
 * tracepoint path, which perf measured at some 0.25 us per NULL call at
 * depth 32 when only one side was counted.  So every stack counts both its
 * client threads and its serving thread, and each pays alike.  The count
 * includes the read() that fetches it (one per snapshot, negligible against
 * thousands of calls).
 *
 * Opening it needs the tracepoint's id from tracefs and a perf_event_open
 * the kernel allows (tracepoints need CAP_PERFMON, or root, unless
 * kernel.perf_event_paranoid is -1).  When either is missing the counts are
 * reported as "n/a" with the reason from bench_syscount_why().
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

static char why[160];

static long tracepoint_id(void)
{
	static const char *const paths[] = {
	    "/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
	    "/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id",
	};
	int err = ENOENT;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		FILE *f = fopen(paths[i], "r");
		long id = -1;

		if (!f) {
			if (errno != ENOENT)
				err = errno;
			continue;
		}
		if (fscanf(f, "%ld", &id) != 1)
			id = -1;
		fclose(f);
		if (id >= 0)
			return id;
	}
	snprintf(why, sizeof(why), "tracefs raw_syscalls/sys_enter/id unreadable: %s",
		 strerror(err));
	return -1;
}

int bench_syscount_open(void)
{
	struct perf_event_attr a;
	long id = tracepoint_id();
	int fd;

	if (id < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)id;
	a.inherit = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0 /* this thread */, -1 /* any CPU */, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		snprintf(why, sizeof(why), "perf_event_open(raw_syscalls:sys_enter): %s%s",
			 strerror(e),
			 e == EACCES || e == EPERM
			     ? " (needs CAP_PERFMON or kernel.perf_event_paranoid=-1)"
			     : "");
		return -1;
	}
	return fd;
}

uint64_t bench_syscount_read(int fd)
{
	uint64_t v = 0;

	if (fd < 0 || read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return 0;
	return v;
}

const char *bench_syscount_why(void)
{
	return why[0] ? why : "not counted";
}
