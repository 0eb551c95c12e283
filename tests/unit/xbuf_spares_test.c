/*
 * The Read-chunk landing buffers a server transport keeps between calls
 * (rpcrdma__xbuf_spares, xprtrdma/conn.c): a call takes the smallest spare
 * that fits, what it held before goes back (or is freed), and the spares'
 * byte count always matches what they hold.  Buffers here are plain
 * malloc() ones (no registration), which the functions free with free().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "xprtrdma/xprt.h"

static struct rpcrdma__xbuf plain(size_t len)
{
	struct rpcrdma__xbuf b = {.addr = malloc(len), .len = len};

	assert_non_null(b.addr);
	return b;
}

static void check_bytes(const struct rpcrdma__xbuf_spares *sp)
{
	size_t sum = 0;

	for (unsigned int i = 0; i < sp->n; i++) {
		assert_non_null(sp->bufs[i].addr);
		sum += sp->bufs[i].len;
		for (unsigned int j = 0; j < i; j++)
			assert_ptr_not_equal(sp->bufs[i].addr, sp->bufs[j].addr);
	}
	assert_int_equal(sum, sp->bytes);
	assert_true(sp->bytes <= sp->max_bytes);
}

static void fill(struct rpcrdma__xbuf_spares *sp, const size_t *lens, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct rpcrdma__xbuf b = plain(lens[i]);

		rpcrdma__xbuf_give(sp, &b);
		assert_null(b.addr);
	}
	assert_int_equal(sp->n, n);
	check_bytes(sp);
}

/* An empty buffer takes the smallest spare that fits. */
static void test_take_best_fit(void **state)
{
	static const size_t lens[] = {8192, 131072, 65536, 262144};
	struct rpcrdma__xbuf_spares sp = {.max_bytes = 1u << 20};
	struct rpcrdma__xbuf b = {0};

	(void)state;
	fill(&sp, lens, 4);
	assert_int_equal(rpcrdma__xbuf_take(&sp, NULL, &b, 40000), 0);
	assert_int_equal(b.len, 65536);
	assert_int_equal(sp.n, 3);
	check_bytes(&sp);
	rpcrdma__xbuf_free(&b);
	rpcrdma__xbuf_spares_free(&sp);
}

/*
 * The spares full, the best fit last among them, and the buffer being
 * replaced larger than the smallest spare: given back before the best fit
 * was taken out, it evicted that smallest one and landed in the best
 * fit's slot, and the call got its own 16 KiB buffer back for 32 KiB.
 * Now the call gets the best fit, and nothing is lost or kept twice.
 */
static void test_take_while_giving_back(void **state)
{
	size_t lens[RPCRDMA__XBUF_SPARES];
	struct rpcrdma__xbuf_spares sp = {.max_bytes = 64u << 20};
	struct rpcrdma__xbuf b = plain(16384);
	void *old = b.addr;

	(void)state;
	lens[0] = 8192;
	for (unsigned int i = 1; i + 1 < RPCRDMA__XBUF_SPARES; i++)
		lens[i] = 131072;
	lens[RPCRDMA__XBUF_SPARES - 1] = 65536;
	fill(&sp, lens, RPCRDMA__XBUF_SPARES);
	assert_int_equal(rpcrdma__xbuf_take(&sp, NULL, &b, 32768), 0);
	assert_int_equal(b.len, 65536);
	assert_ptr_not_equal(b.addr, old);
	check_bytes(&sp);
	/* The old 16 KiB buffer took the best fit's place among the spares. */
	assert_int_equal(sp.n, RPCRDMA__XBUF_SPARES);
	for (unsigned int i = 0; i < sp.n; i++)
		assert_true(sp.bufs[i].len != 65536);
	assert_ptr_equal(sp.bufs[RPCRDMA__XBUF_SPARES - 1].addr, old);
	rpcrdma__xbuf_free(&b);
	rpcrdma__xbuf_spares_free(&sp);
}

/* A buffer already large enough is kept as it is. */
static void test_take_keeps_large_enough(void **state)
{
	static const size_t lens[] = {65536};
	struct rpcrdma__xbuf_spares sp = {.max_bytes = 1u << 20};
	struct rpcrdma__xbuf b = plain(100000);
	void *old = b.addr;

	(void)state;
	fill(&sp, lens, 1);
	assert_int_equal(rpcrdma__xbuf_take(&sp, NULL, &b, 65536), 0);
	assert_ptr_equal(b.addr, old);
	assert_int_equal(sp.n, 1);
	check_bytes(&sp);
	rpcrdma__xbuf_free(&b);
	rpcrdma__xbuf_spares_free(&sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_take_best_fit),
	    cmocka_unit_test(test_take_while_giving_back),
	    cmocka_unit_test(test_take_keeps_large_enough),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
