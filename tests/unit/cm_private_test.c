/*
 * RFC 8797 private data: the eight bytes exactly, size encoding limits, and
 * a decoder that falls back to the 1 KiB defaults on anything unexpected.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rpcrdma/cm_private.h"

static void test_encode_exact_bytes(void **state)
{
	struct rpcrdma_cm_private pd = {
		.flags = RPCRDMA_CM_FLAG_REMOTE_INVALIDATE, .send_size = 4096, .recv_size = 4096};
	static const uint8_t want[] = {0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3};
	uint8_t buf[16];

	(void)state;
	assert_int_equal(rpcrdma_cm_private_encode(&pd, buf, sizeof(buf)), 8);
	assert_memory_equal(buf, want, sizeof(want));

	/* Sizes round down to whole KiB; the extremes fit one byte. */
	pd.flags = 0xff;
	pd.send_size = 1024;
	pd.recv_size = 256 * 1024;
	assert_int_equal(rpcrdma_cm_private_encode(&pd, buf, sizeof(buf)), 8);
	assert_int_equal(buf[5], 1);
	assert_int_equal(buf[6], 0);
	assert_int_equal(buf[7], 255);
	pd.send_size = 8191;
	assert_int_equal(rpcrdma_cm_private_encode(&pd, buf, sizeof(buf)), 8);
	assert_int_equal(buf[6], 6);
}

static void test_encode_refuses(void **state)
{
	struct rpcrdma_cm_private pd = {.send_size = 1023, .recv_size = 4096};
	uint8_t buf[8];

	(void)state;
	assert_int_equal(rpcrdma_cm_private_encode(&pd, buf, sizeof(buf)), -EINVAL);
	pd.send_size = 256 * 1024 + 1024;
	assert_int_equal(rpcrdma_cm_private_encode(&pd, buf, sizeof(buf)), -EINVAL);
	pd.send_size = 4096;
	assert_int_equal(rpcrdma_cm_private_encode(&pd, buf, 7), -EINVAL);
	assert_int_equal(rpcrdma_cm_private_encode(NULL, buf, 8), -EINVAL);
}

static void test_decode(void **state)
{
	/* What the Linux client sends with 4 KiB thresholds, padded by the CM
	 * to a larger private data area. */
	uint8_t linux_pd[56] = {0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3};
	struct rpcrdma_cm_private pd;

	(void)state;
	rpcrdma_cm_private_decode(linux_pd, sizeof(linux_pd), &pd);
	assert_true(pd.present);
	assert_int_equal(pd.version, 1);
	assert_int_equal(pd.flags, RPCRDMA_CM_FLAG_REMOTE_INVALIDATE);
	assert_int_equal(pd.send_size, 4096);
	assert_int_equal(pd.recv_size, 4096);

	linux_pd[5] = 0xfe; /* undefined flag bits are ignored */
	linux_pd[6] = 255;
	linux_pd[7] = 0;
	rpcrdma_cm_private_decode(linux_pd, 8, &pd);
	assert_true(pd.present);
	assert_int_equal(pd.flags, 0);
	assert_int_equal(pd.send_size, 256 * 1024);
	assert_int_equal(pd.recv_size, 1024);
}

static void expect_defaults(const void *buf, size_t len)
{
	struct rpcrdma_cm_private pd;

	memset(&pd, 0x77, sizeof(pd));
	rpcrdma_cm_private_decode(buf, len, &pd);
	assert_false(pd.present);
	assert_int_equal(pd.flags, 0);
	assert_int_equal(pd.send_size, RPCRDMA_CM_DEFAULT_INLINE);
	assert_int_equal(pd.recv_size, RPCRDMA_CM_DEFAULT_INLINE);
}

static void test_decode_falls_back(void **state)
{
	static const uint8_t good[] = {0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3};
	uint8_t bad[8];

	(void)state;
	expect_defaults(NULL, 0);
	expect_defaults(good, 0);
	for (size_t len = 1; len < sizeof(good); len++)
		expect_defaults(good, len);
	memcpy(bad, good, 8);
	bad[0] = 0xf7;
	expect_defaults(bad, 8);
	memcpy(bad, good, 8);
	bad[4] = 2; /* a future format we cannot read */
	expect_defaults(bad, 8);
	memset(bad, 0, 8);
	expect_defaults(bad, 8);
}

static void test_round_trip_all_sizes(void **state)
{
	(void)state;
	for (uint32_t s = 1; s <= 256; s++) {
		struct rpcrdma_cm_private in = {.send_size = s * 1024,
						.recv_size = (257 - s) * 1024,
						.flags = (uint8_t)(s & 1)},
					  out;
		uint8_t buf[8];

		assert_int_equal(rpcrdma_cm_private_encode(&in, buf, sizeof(buf)), 8);
		rpcrdma_cm_private_decode(buf, sizeof(buf), &out);
		assert_true(out.present);
		assert_int_equal(out.send_size, in.send_size);
		assert_int_equal(out.recv_size, in.recv_size);
		assert_int_equal(out.flags, in.flags);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_exact_bytes),
		cmocka_unit_test(test_encode_refuses),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_decode_falls_back),
		cmocka_unit_test(test_round_trip_all_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
