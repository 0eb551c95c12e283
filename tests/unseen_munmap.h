/*
 * unseen_munmap.h - munmap as no interposed function sees it: a system call
 * instruction of the caller's own, as io_uring or a hand-written stub would
 * release memory.  The registration cache's tests use it to release memory
 * behind its hooks (src/provider/memhooks.c).
 */
#ifndef RPCRDMA_TESTS_UNSEEN_MUNMAP_H
#define RPCRDMA_TESTS_UNSEEN_MUNMAP_H

#include <errno.h>
#include <stddef.h>
#include <sys/syscall.h>

/* 0, -errno, or -ENOSYS where the tests have no such instruction. */
static inline long unseen_munmap(void *addr, size_t len)
{
	long ret = -ENOSYS;

#if defined(__x86_64__)
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_munmap), "D"(addr), "S"(len)
			 : "rcx", "r11", "memory");
#else
	(void)addr;
	(void)len;
#endif
	return ret;
}

#endif
