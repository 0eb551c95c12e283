/*
 * Registration cache tests against a fake pinning provider (one that does
 * not find memory by address, like verbs): hits register nothing, memory
 * the hooks report freed is forgotten, and the steady lookup refuses to
 * register memory that churns (freed while registered) so that the data
 * path can copy instead, remembering only the last RPCRDMA__REGCACHE_CHURN
 * such ranges.
 *
 * The cache keeps entries on a pinning provider only while the memory hooks
 * are active; under a sanitizer they are not, and the cases that need a
 * kept entry are skipped there.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "provider/provider.h"
#include "provider/regcache.h"
#include "rpcrdma/mem.h"
#include "../unseen_munmap.h"

static unsigned int regs, deregs, refused;
/* Registrations longer than this fail, as RLIMIT_MEMLOCK makes them
 * (0: none). */
static size_t refuse_above;

static int fake_reg_mr(struct rpcrdma_provider *p, void *addr, size_t length,
		       struct rpcrdma_prov_mr **out)
{
	struct rpcrdma_prov_mr *mr;

	if (refuse_above && length > refuse_above) {
		refused++;
		return -ENOMEM;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	mr->prov = p;
	mr->addr = addr;
	mr->length = length;
	regs++;
	*out = mr;
	return 0;
}

static void fake_dereg_mr(struct rpcrdma_prov_mr *mr)
{
	deregs++;
	free(mr);
}

/* Nothing ever waits: the owner's loop may always sleep. */
static int fake_trywait(struct rpcrdma_provider *p)
{
	(void)p;
	return 0;
}

static const struct rpcrdma_provider_ops fake_ops = {
    .name = "fake",
    .trywait = fake_trywait,
    .reg_mr = fake_reg_mr,
    .dereg_mr = fake_dereg_mr,
};

/* 64 KiB areas, apart from each other, that malloc never hands out: the
 * hooks must not see them freed behind the test's back. */
static uint8_t area[RPCRDMA__REGCACHE_CHURN + 2][64u << 10];

static int setup(void **state)
{
	struct rpcrdma_provider *p = calloc(1, sizeof(*p));

	if (!p)
		return -1;
	p->ops = &fake_ops;
	regs = deregs = refused = 0;
	refuse_above = 0;
	*state = p;
	return 0;
}

static int teardown(void **state)
{
	struct rpcrdma_provider *p = *state;

	rpcrdma__regcache_close(p);
	free(p);
	return 0;
}

static void need_kept_entries(void)
{
	if (!rpcrdma__memhooks_active())
		skip();
}

static void get_put(struct rpcrdma_provider *p, const void *addr, size_t len, bool steady,
		    int expect)
{
	struct rpcrdma__regent *e = NULL;
	int rc = steady ? rpcrdma__regcache_get_steady(p, addr, len, &e)
			: rpcrdma__regcache_get(p, addr, len, &e);

	assert_int_equal(rc, expect);
	if (!rc) {
		assert_non_null(rpcrdma__regent_mr(e));
		rpcrdma__regcache_put(e);
	} else {
		assert_null(e);
	}
}

static void test_hit_registers_nothing(void **state)
{
	struct rpcrdma_provider *p = *state;

	need_kept_entries();
	get_put(p, area[0], sizeof(area[0]), true, 0);
	assert_int_equal(regs, 1);
	for (int i = 0; i < 10; i++)
		get_put(p, area[0] + 100, 4096, true, 0); /* inside: a hit */
	assert_int_equal(regs, 1);
	assert_int_equal(deregs, 0);
}

/* Freed while registered: forgotten, and from then on the steady lookup
 * registers nothing there (the caller copies); the plain one still does. */
static void test_churned_memory_is_not_registered(void **state)
{
	struct rpcrdma_provider *p = *state;

	need_kept_entries();
	get_put(p, area[0], sizeof(area[0]), true, 0);
	rpcrdma__regcache_invalidate(area[0], sizeof(area[0]), false);
	get_put(p, area[1], 4096, true, 0); /* deregisters the dead entry */
	assert_int_equal(regs, 2);
	assert_int_equal(deregs, 1);
	for (int i = 0; i < 10; i++)
		get_put(p, area[0], sizeof(area[0]), true, -EAGAIN);
	get_put(p, area[0] + 4096, 8192, true, -EAGAIN); /* any overlap */
	assert_int_equal(regs, 2);
	get_put(p, area[0], sizeof(area[0]), false, 0);
	assert_int_equal(regs, 3);
	/* Memory that never churned registers as before. */
	get_put(p, area[2], sizeof(area[2]), true, 0);
	assert_int_equal(regs, 4);
}

/* The free path's filter (64 KiB granules that count live entries) lets
 * through every invalidation that touches an entry, down to its first and
 * last byte in whatever granule they fall, and none that only borders it. */
static void test_invalidation_at_entry_edges(void **state)
{
	struct rpcrdma_provider *p = *state;
	struct rpcrdma__regcache_stats st;
	const size_t len = sizeof(area[0]);

	need_kept_entries();
	get_put(p, area[5], len, true, 0);
	rpcrdma__regcache_invalidate(area[5] + len, 1, false); /* just past it */
	rpcrdma__regcache_invalidate(area[5] - 1, 1, false);   /* just before it */
	rpcrdma__regcache_stats(p, &st);
	assert_int_equal(st.invalidations, 0);
	get_put(p, area[5], len, true, 0); /* still a hit */
	assert_int_equal(regs, 1);
	rpcrdma__regcache_invalidate(area[5] + len - 1, 1, false); /* its last byte */
	rpcrdma__regcache_stats(p, &st);
	assert_int_equal(st.invalidations, 1);
	get_put(p, area[5], len, true, -EAGAIN);

	get_put(p, area[7], len, true, 0);
	rpcrdma__regcache_invalidate(area[7], 1, false); /* its first byte */
	rpcrdma__regcache_stats(p, &st);
	assert_int_equal(st.invalidations, 2);
	/* A range that starts before and ends after it. */
	get_put(p, area[9], len, true, 0);
	rpcrdma__regcache_invalidate(area[8], 3 * len, false);
	rpcrdma__regcache_stats(p, &st);
	assert_int_equal(st.invalidations, 3);
}

/*
 * Random gets of ranges of every size over a 2 MiB arena (overlapping,
 * nested, more than the cache holds so that it evicts), puts, and
 * invalidations: after each step the index agrees with the entries, an
 * invalidated range has no entry left, and a range just got is a hit the
 * next time (no registration).
 */
static void test_index_random(void **state)
{
	static uint8_t arena[2u << 20];
	struct rpcrdma_provider *p = *state;

	need_kept_entries();
	srand(12345);
	for (int step = 0; step < 4000; step++) {
		size_t len = (size_t)1 << (rand() % 18);
		size_t off = (size_t)rand() % (sizeof(arena) - len);

		len += (size_t)rand() % 100;
		if (off + len > sizeof(arena))
			len = sizeof(arena) - off;
		if (rand() % 5 == 0) {
			rpcrdma__regcache_invalidate(arena + off, len, rand() % 2);
			assert_int_equal(rpcrdma__regcache_selfcheck(p, arena + off, len), 0);
		} else {
			unsigned int before;

			get_put(p, arena + off, len, false, 0);
			before = regs;
			get_put(p, arena + off, len, false, 0);
			assert_int_equal(regs, before);
			assert_int_equal(rpcrdma__regcache_selfcheck(p, NULL, 0), 0);
		}
	}
}

/* Only the last RPCRDMA__REGCACHE_CHURN churned ranges are remembered: the
 * record is bounded, and memory reused for good gets registered again. */
static void test_churn_record_is_bounded(void **state)
{
	struct rpcrdma_provider *p = *state;
	unsigned int before;

	need_kept_entries();
	for (unsigned int i = 0; i <= RPCRDMA__REGCACHE_CHURN; i++) {
		get_put(p, area[i], sizeof(area[i]), true, 0);
		rpcrdma__regcache_invalidate(area[i], sizeof(area[i]), false);
	}
	before = regs;
	get_put(p, area[0], sizeof(area[0]), true, 0); /* pushed out */
	assert_int_equal(regs, before + 1);
	get_put(p, area[RPCRDMA__REGCACHE_CHURN], 4096, true, -EAGAIN);
	assert_int_equal(regs, before + 1);
}

/* Without kept entries (sanitizer builds) every get registers for one use
 * and nothing is remembered as churning. */
static void test_without_hooks_every_get_registers(void **state)
{
	struct rpcrdma_provider *p = *state;

	if (rpcrdma__memhooks_active())
		skip();
	get_put(p, area[0], sizeof(area[0]), true, 0);
	get_put(p, area[0], sizeof(area[0]), true, 0);
	assert_int_equal(regs, 2);
	assert_int_equal(deregs, 2);
}

/* A declared region this instance cannot register whole: tried once, then
 * its ranges are registered like undeclared memory; withdrawn, its marker
 * goes without a deregistration. */
static void test_declared_region_refused_once(void **state)
{
	struct rpcrdma_provider *p = *state;
	struct rpcrdma__regcache_stats st;
	struct rpcrdma_mem_region *region = NULL;

	assert_int_equal(rpcrdma_mem_register(area[1], sizeof(area[1]), &region), 0);
	refuse_above = 32u << 10;
	for (int i = 0; i < 5; i++)
		get_put(p, area[1] + 100, 4096, false, 0);
	assert_int_equal(refused, 1);
	assert_true(regs >= 1);
	rpcrdma__regcache_stats(p, &st);
	assert_int_equal(st.decl_failures, 1);
	/* Larger than the limit allows: refused, and the region not tried
	 * again for it. */
	get_put(p, area[1], sizeof(area[1]), false, -ENOMEM);
	assert_int_equal(refused, 2);
	assert_int_equal(rpcrdma_mem_deregister(region), 0);
	get_put(p, area[1] + 100, 4096, false, 0);
	assert_int_equal(rpcrdma__regcache_selfcheck(p, NULL, 0), 0);
}

static uint64_t invalidations(struct rpcrdma_provider *p)
{
	struct rpcrdma__regcache_stats st;

	rpcrdma__regcache_stats(p, &st);
	return st.invalidations;
}

/* One call with a large buffer, then the application frees it and makes
 * no call that registers: the registration (pinning the freed pages) goes
 * at the owner's next loop iteration, which asks trywait before sleeping,
 * not at the instance's close.  One still in use stays until its put. */
static void test_freed_memory_deregistered_when_idle(void **state)
{
	struct rpcrdma_provider *p = *state;
	const size_t len = 1u << 20;
	struct rpcrdma__regcache_stats st;
	struct rpcrdma__regent *in_use;
	uint8_t *buf, *busy;

	need_kept_entries(); /* before the buffers, which a skip would leak */
	buf = malloc(len);
	busy = malloc(len);
	assert_non_null(buf);
	assert_non_null(busy);
	get_put(p, buf, len, false, 0);
	assert_int_equal(rpcrdma__regcache_get(p, busy, len, &in_use), 0);
	assert_int_equal(regs, 2);
	free(buf);
	free(busy);
	rpcrdma__regcache_stats(p, &st);
	assert_int_equal(st.invalidations, 2);
	assert_int_equal(st.dead_now, 1); /* the other is still in use */
	assert_int_equal(deregs, 0);      /* the hooks call no provider */

	assert_int_equal(rpcrdma__provider_trywait(p), 0);
	assert_int_equal(deregs, 1);
	rpcrdma__regcache_stats(p, &st);
	assert_int_equal(st.dead_now, 0);
	assert_int_equal(st.dead_reaped, 1);
	assert_int_equal(rpcrdma__provider_trywait(p), 0);
	assert_int_equal(deregs, 1);

	rpcrdma__regcache_put(in_use); /* its last use: deregistered now */
	assert_int_equal(deregs, 2);
	rpcrdma__regcache_stats(p, &st);
	assert_int_equal(st.dead_reaped, 1);
	assert_int_equal(rpcrdma__regcache_selfcheck(p, NULL, 0), 0);
}

/* Memory released through syscall(2) rather than munmap(): seen all the
 * same, before the pages go; syscall(SYS_brk, 0) drops nothing. */
static void test_munmap_by_syscall(void **state)
{
	struct rpcrdma_provider *p = *state;
	const size_t len = 128u << 10;
	uint8_t *m;

	need_kept_entries();
#if !defined(__LP64__)
	skip(); /* syscall is interposed on 64-bit systems only (memhooks.c) */
#endif
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	get_put(p, m, len, false, 0);
	get_put(p, area[0], 4096, false, 0);  /* below the break */
	assert_true(syscall(SYS_brk, 0) > 0); /* only asks */
	assert_int_equal(invalidations(p), 0);
	assert_int_equal(syscall(SYS_munmap, m, len), 0);
	assert_int_equal(invalidations(p), 1);
}

/* Released unseen, then handed out again by mmap: the stale registration
 * goes before the new memory can be used, and the next use registers the
 * new pages. */
static void test_unseen_release_caught_at_reuse(void **state)
{
	struct rpcrdma_provider *p = *state;
	const size_t len = 128u << 10;
	uint8_t *m, *again;
	long rc;

	need_kept_entries();
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	get_put(p, m, len, false, 0);
	get_put(p, m, len, false, 0);
	assert_int_equal(regs, 1);
	rc = unseen_munmap(m, len);
	if (rc == -ENOSYS) {
		assert_int_equal(munmap(m, len), 0);
		skip();
	}
	assert_int_equal(rc, 0);
	assert_int_equal(invalidations(p), 0);
	again = mmap(m, len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	assert_true(again == m);
	assert_int_equal(invalidations(p), 1);
	get_put(p, again, len, false, 0);
	assert_int_equal(regs, 2);
	assert_int_equal(munmap(again, len), 0);
}

/* A System V segment detached: its registration goes; attached again (at
 * whatever address), it is registered anew. */
static void test_shm_detach(void **state)
{
	struct rpcrdma_provider *p = *state;
	const size_t len = 128u << 10;
	uint8_t *m;
	int id;

	need_kept_entries(); /* before the segment, which a skip would leak */
	id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);
	if (id < 0)
		skip(); /* no System V memory here */
	m = shmat(id, NULL, 0);
	assert_int_equal(shmctl(id, IPC_RMID, NULL), 0); /* goes with the last detach */
	assert_true(m != (void *)-1);
	get_put(p, m + 4096, 8192, false, 0);
	get_put(p, m + 4096, 8192, false, 0);
	assert_int_equal(regs, 1);
	assert_int_equal(shmdt(m), 0);
	assert_int_equal(invalidations(p), 1);
}

/* Two attachments of one segment side by side: detaching the first
 * leaves the second's registration alone; and a detach whose extent
 * /proc/self/maps cannot tell (no descriptor left) drops every entry from
 * its address up rather than risk a stale one. */
static void test_shm_detach_extent(void **state)
{
	struct rpcrdma_provider *p = *state;
	const size_t len = 64u << 10;
	struct rlimit old, none;
	uint8_t *hole, *a, *b;
	int id, fd, rc;

	need_kept_entries();
	hole = mmap(NULL, 2 * len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(hole != MAP_FAILED);
	assert_int_equal(munmap(hole, 2 * len), 0);
	id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);
	if (id < 0)
		skip();
	a = shmat(id, hole, 0);
	b = shmat(id, hole + len, 0);
	/* Removed before any check can return: gone at the last detach. */
	assert_int_equal(shmctl(id, IPC_RMID, NULL), 0);
	assert_true(a == hole && b == hole + len);
	get_put(p, b, 4096, false, 0);
	assert_int_equal(shmdt(a), 0);
	assert_int_equal(invalidations(p), 0);

	fd = open("/dev/null", O_RDONLY); /* the lowest free descriptor */
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	none = old;
	none.rlim_cur = (rlim_t)fd; /* the next descriptor would be fd */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &none), 0);
	rc = shmdt(b);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(rc, 0);
	assert_int_equal(invalidations(p), 1);
}

/* A detach takes the whole attachment, across a hole unmapped in it: a
 * registration past the hole goes too. */
static void test_shm_detach_across_hole(void **state)
{
	struct rpcrdma_provider *p = *state;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *m;
	int id;

	need_kept_entries();
	id = shmget(IPC_PRIVATE, 3 * pg, IPC_CREAT | 0600);
	if (id < 0)
		skip();
	m = shmat(id, NULL, 0);
	assert_int_equal(shmctl(id, IPC_RMID, NULL), 0);
	assert_true(m != (void *)-1);
	assert_int_equal(munmap(m + pg, pg), 0);
	get_put(p, m + 2 * pg, 64, false, 0);
	assert_int_equal(invalidations(p), 0);
	assert_int_equal(shmdt(m), 0);
	assert_int_equal(invalidations(p), 1);
}

/* The break lowered over registered pages: forgotten.  Asking where it
 * is (brk(NULL), sbrk(0)) drops nothing. */
static void test_break_lowered(void **state)
{
	struct rpcrdma_provider *p = *state;
	const intptr_t len = 128 << 10;
	uint8_t *m;

	need_kept_entries();
	/* The cache's own allocations first, so that malloc does not move
	 * the break while the test holds it. */
	get_put(p, area[0], 4096, false, 0);
	get_put(p, area[1], 4096, false, 0);
	assert_int_equal(brk(NULL), 0);
	assert_true(sbrk(0) != (void *)-1);
	assert_int_equal(invalidations(p), 0);
	m = sbrk(len);
	if (m == (void *)-1)
		skip();
	get_put(p, m, 8192, false, 0);
	assert_int_equal(regs, 3);
	/* Lowered only if malloc did not move the break meanwhile, which
	 * would cut its own memory off. */
	if (sbrk(0) != m + len)
		skip();
	assert_true(sbrk(-len) != (void *)-1);
	assert_int_equal(invalidations(p), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_hit_registers_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_churned_memory_is_not_registered, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_invalidation_at_entry_edges, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_index_random, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_churn_record_is_bounded, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_declared_region_refused_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_without_hooks_every_get_registers, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_freed_memory_deregistered_when_idle, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_munmap_by_syscall, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unseen_release_caught_at_reuse, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_shm_detach, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_shm_detach_extent, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_shm_detach_across_hole, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_break_lowered, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
