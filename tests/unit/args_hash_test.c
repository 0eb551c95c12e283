/*
 * The duplicate request cache's argument hash: the same value however the
 * bytes are split (across the head/NH boundary and NH's blocks and folds
 * included), and a different value for any one-bit change, any swap of two
 * blocks, and any change of length, including trailing zeros; and the same
 * value from every NH code the CPU runs (AVX2, SSE2, portable).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rpc/args_hash.h"

static uint64_t hash_whole(const uint8_t *p, size_t n)
{
	struct rpcrdma__args_hash h;

	rpcrdma__args_hash_init(&h);
	rpcrdma__args_hash_update(&h, p, n);
	return rpcrdma__args_hash_final(&h);
}

static uint8_t *pattern(size_t n, unsigned int seed)
{
	uint8_t *p = malloc(n ? n : 1);

	assert_non_null(p);
	srand(seed);
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rand();
	return p;
}

static void test_split_anywhere(void **state)
{
	static const size_t lens[] = {0, 1, 31, 32, 33, 255, 256, 257, 319, 320, 321,
				      1279, 1280, 1281, 3000, 4351, 4352, 4353, 70001};

	(void)state;
	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		size_t n = lens[li];
		uint8_t *p = pattern(n, (unsigned int)n);
		uint64_t whole = hash_whole(p, n);

		for (unsigned int trial = 0; trial < 40; trial++) {
			struct rpcrdma__args_hash h;
			size_t at = 0;

			rpcrdma__args_hash_init(&h);
			while (at < n) {
				size_t piece = (size_t)rand() % (trial < 20 ? 7 : 300);

				if (piece > n - at)
					piece = n - at;
				rpcrdma__args_hash_update(&h, p + at, piece);
				at += piece;
			}
			assert_true(rpcrdma__args_hash_final(&h) == whole);
		}
		free(p);
	}
}

static void test_every_bit_counts(void **state)
{
	size_t n = 256 + 2 * 4096 + 1000 + 20; /* head, two folds, a partial one and block */
	uint8_t *p = pattern(n, 7);
	uint64_t base = hash_whole(p, n);

	(void)state;
	for (size_t at = 0; at < n; at++) {
		for (unsigned int bit = 0; bit < 8; bit += 3) {
			p[at] ^= (uint8_t)(1u << bit);
			assert_true(hash_whole(p, n) != base);
			p[at] ^= (uint8_t)(1u << bit);
		}
	}
	assert_true(hash_whole(p, n) == base);
	free(p);
}

static void test_blocks_in_order(void **state)
{
	size_t n = 256 + 3 * 4096;
	uint8_t *p = pattern(n, 9);
	uint64_t base = hash_whole(p, n);
	/* Within a fold, across folds, and a word swap within a block. */
	static const size_t swaps[][3] = {{256, 256 + 64, 64}, {256, 256 + 4096, 64},
					  {256 + 8192, 256 + 4096, 4096}, {300, 304, 4}};

	(void)state;
	for (size_t i = 0; i < sizeof(swaps) / sizeof(swaps[0]); i++) {
		uint8_t *a = p + swaps[i][0], *b = p + swaps[i][1];
		size_t len = swaps[i][2];
		uint8_t *save = malloc(len);

		assert_non_null(save);
		memcpy(save, a, len);
		memmove(a, b, len);
		memcpy(b, save, len);
		assert_true(hash_whole(p, n) != base);
		memcpy(b, a, len);
		memcpy(a, save, len);
		free(save);
	}
	assert_true(hash_whole(p, n) == base);
	free(p);
}

/* Every NH code this CPU runs gives what the portable one gives. */
static void test_every_path_agrees(void **state)
{
	static const char *const paths[] = {"avx512", "avx2", "sse2"};
	static const size_t lens[] = {257, 320, 448, 4352, 70001, 1u << 20};
	uint64_t want[sizeof(lens) / sizeof(lens[0])];
	unsigned int ran = 0;

	(void)state;
	assert_int_equal(rpcrdma__args_hash_use("portable"), 0);
	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		uint8_t *p = pattern(lens[li], 11);

		want[li] = hash_whole(p, lens[li]);
		free(p);
	}
	for (size_t pi = 0; pi < sizeof(paths) / sizeof(paths[0]); pi++) {
		int rc = rpcrdma__args_hash_use(paths[pi]);

		if (rc == -ENOENT || rc == -ENOTSUP)
			continue;
		assert_int_equal(rc, 0);
		ran++;
		for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
			uint8_t *p = pattern(lens[li], 11);

			assert_true(hash_whole(p, lens[li]) == want[li]);
			free(p);
		}
	}
	assert_int_equal(rpcrdma__args_hash_use("nonesuch"), -ENOENT);
#if defined(__x86_64__)
	assert_true(ran >= 1); /* SSE2 is part of x86-64 */
#endif
	(void)ran;
}

static void test_length_counts(void **state)
{
	uint8_t *p = calloc(1, 5000);

	(void)state;
	assert_non_null(p);
	for (size_t n = 0; n < 1400; n++)
		assert_true(hash_whole(p, n) != hash_whole(p, n + 1));
	assert_true(hash_whole(p, 4096) != hash_whole(p, 4100));
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_split_anywhere),
	    cmocka_unit_test(test_every_bit_counts),
	    cmocka_unit_test(test_blocks_in_order),
	    cmocka_unit_test(test_length_counts),
	    cmocka_unit_test(test_every_path_agrees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
