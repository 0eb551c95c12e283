/*
 * Credit accounting tests: the initial single credit, grants clamped to
 * 1..requested, calls in flight against min(requested, granted), reset on
 * connection loss, a credit given back by an unanswered message, the
 * responder's grant, independent directions (RFC 8167 section 4), and a
 * seeded random exchange with a hostile grantor in which the requester
 * must never exceed what it was granted or asked for.
 *
 * RPCRDMA_TEST_SEED overrides the seed of the random test.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "proto/plan.h"

/* Send while credits allow; returns how many went. */
static uint32_t send_all(struct rpcrdma_credits *c)
{
	uint32_t n = 0;

	while (rpcrdma__credits_available(c)) {
		rpcrdma__credits_sent(c);
		n++;
	}
	return n;
}

static void test_initial_single_credit(void **state)
{
	struct rpcrdma_credits c;

	(void)state;
	rpcrdma__credits_init(&c, 128);
	assert_int_equal(c.requested, 128);
	assert_int_equal(c.granted, 1);
	assert_int_equal(c.in_flight, 0);
	assert_int_equal(c.max_in_flight_seen, 0);
	/* 4.3.3: one call, then wait for the reply's grant. */
	assert_int_equal(send_all(&c), 1);
	assert_false(rpcrdma__credits_available(&c));
	rpcrdma__credits_reply(&c, 32);
	assert_int_equal(c.in_flight, 0);
	assert_int_equal(c.granted, 32);
	assert_int_equal(send_all(&c), 32);
	assert_int_equal(c.max_in_flight_seen, 32);
}

/* "The granted value MUST NOT be zero, since such a value would result in
 * deadlock": treated as 1. */
static void test_zero_grant_is_one(void **state)
{
	struct rpcrdma_credits c;

	(void)state;
	rpcrdma__credits_init(&c, 16);
	rpcrdma__credits_sent(&c);
	rpcrdma__credits_reply(&c, 0);
	assert_int_equal(c.granted, 1);
	assert_true(rpcrdma__credits_available(&c));
	assert_int_equal(send_all(&c), 1);
	rpcrdma__credits_reply(&c, 0);
	assert_true(rpcrdma__credits_available(&c));
}

/* More than we asked for is clamped: we cannot take more replies. */
static void test_grant_above_requested(void **state)
{
	struct rpcrdma_credits c;

	(void)state;
	rpcrdma__credits_init(&c, 8);
	rpcrdma__credits_sent(&c);
	rpcrdma__credits_reply(&c, 1000);
	assert_int_equal(c.granted, 8);
	assert_int_equal(send_all(&c), 8);
	rpcrdma__credits_reply(&c, UINT32_MAX);
	assert_int_equal(c.granted, 8);
	assert_int_equal(c.in_flight, 7);
	assert_int_equal(send_all(&c), 1);
	/* Exactly the request, and one below. */
	rpcrdma__credits_reply(&c, 8);
	assert_int_equal(c.granted, 8);
	rpcrdma__credits_reply(&c, 7);
	assert_int_equal(c.granted, 7);
}

/* A requested value of 0 would never let a call go: counted as 1. */
static void test_requested_zero(void **state)
{
	struct rpcrdma_credits c;

	(void)state;
	rpcrdma__credits_init(&c, 0);
	assert_int_equal(c.requested, 1);
	assert_int_equal(send_all(&c), 1);
	rpcrdma__credits_reply(&c, 50);
	assert_int_equal(c.granted, 1);
}

/* The limit is min(requested, granted) minus calls in flight (4.3.1); a
 * lower grant with more in flight waits for enough replies. */
static void test_in_flight_accounting(void **state)
{
	struct rpcrdma_credits c;

	(void)state;
	rpcrdma__credits_init(&c, 16);
	rpcrdma__credits_sent(&c);
	rpcrdma__credits_reply(&c, 32);
	assert_int_equal(c.granted, 16);
	assert_int_equal(send_all(&c), 16);
	assert_int_equal(c.in_flight, 16);

	/* The responder shrinks its grant to 4. */
	rpcrdma__credits_reply(&c, 4);
	assert_int_equal(c.in_flight, 15);
	for (int i = 0; i < 11; i++) {
		assert_false(rpcrdma__credits_available(&c));
		rpcrdma__credits_reply(&c, 4);
	}
	assert_int_equal(c.in_flight, 4);
	assert_false(rpcrdma__credits_available(&c));
	rpcrdma__credits_reply(&c, 4);
	assert_int_equal(c.in_flight, 3);
	assert_int_equal(send_all(&c), 1);
	assert_int_equal(c.max_in_flight_seen, 16);

	/* A reply with nothing in flight (the engine should not call it,
	 * but must not wrap the count if it does). */
	rpcrdma__credits_init(&c, 4);
	rpcrdma__credits_reply(&c, 2);
	assert_int_equal(c.in_flight, 0);
	assert_int_equal(c.granted, 2);

	/* A send past the limit is counted, saturating. */
	c.in_flight = UINT32_MAX;
	rpcrdma__credits_sent(&c);
	assert_int_equal(c.in_flight, UINT32_MAX);
	assert_int_equal(c.max_in_flight_seen, UINT32_MAX);
}

/* Connection loss: the calls are gone and the next connection starts
 * from one credit. */
static void test_reset(void **state)
{
	struct rpcrdma_credits c;

	(void)state;
	rpcrdma__credits_init(&c, 64);
	rpcrdma__credits_sent(&c);
	rpcrdma__credits_reply(&c, 64);
	assert_int_equal(send_all(&c), 64);
	rpcrdma__credits_reset(&c);
	assert_int_equal(c.in_flight, 0);
	assert_int_equal(c.granted, 1);
	assert_int_equal(c.requested, 64);
	assert_int_equal(c.max_in_flight_seen, 64);
	assert_int_equal(send_all(&c), 1);
	/* A late reply from the old connection cannot be matched; one for
	 * the call just sent restores the grant. */
	rpcrdma__credits_reply(&c, 64);
	assert_int_equal(send_all(&c), 64);
}

/* An unanswered message (an RDMA_ERROR the requester sends) holds a
 * credit while it travels and gives it back without touching the grant;
 * it never wraps the count. */
static void test_returned_keeps_grant(void **state)
{
	struct rpcrdma_credits c;

	(void)state;
	rpcrdma__credits_init(&c, 8);
	rpcrdma__credits_sent(&c);
	rpcrdma__credits_reply(&c, 4);
	assert_int_equal(send_all(&c), 4);
	rpcrdma__credits_returned(&c);
	assert_int_equal(c.in_flight, 3);
	assert_int_equal(c.granted, 4);
	assert_int_equal(send_all(&c), 1);
	rpcrdma__credits_reset(&c);
	rpcrdma__credits_returned(&c);
	assert_int_equal(c.in_flight, 0);
	assert_int_equal(c.granted, 1);
}

static void test_responder_grant(void **state)
{
	(void)state;
	assert_int_equal(rpcrdma__credits_grant(128, 32), 32);
	assert_int_equal(rpcrdma__credits_grant(16, 128), 16);
	assert_int_equal(rpcrdma__credits_grant(16, 16), 16);
	/* Never 0, whatever either side says. */
	assert_int_equal(rpcrdma__credits_grant(16, 0), 1);
	assert_int_equal(rpcrdma__credits_grant(0, 5), 1);
	assert_int_equal(rpcrdma__credits_grant(0, 0), 1);
	assert_int_equal(rpcrdma__credits_grant(UINT32_MAX, UINT32_MAX), UINT32_MAX);
}

/* RFC 8167 section 4.1: forward and backward credits are accounted
 * separately, so one direction's stall leaves the other alone. */
static void test_directions_independent(void **state)
{
	struct rpcrdma_credits fwd, bwd;

	(void)state;
	rpcrdma__credits_init(&fwd, 32);
	rpcrdma__credits_init(&bwd, 2);
	rpcrdma__credits_sent(&fwd);
	rpcrdma__credits_reply(&fwd, 32);
	assert_int_equal(send_all(&fwd), 32);
	assert_false(rpcrdma__credits_available(&fwd));
	/* The backward direction still has its own first credit. */
	assert_true(rpcrdma__credits_available(&bwd));
	rpcrdma__credits_sent(&bwd);
	rpcrdma__credits_reply(&bwd, 2);
	assert_int_equal(bwd.granted, 2);
	assert_int_equal(fwd.granted, 32);
	assert_int_equal(fwd.in_flight, 32);
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * A random exchange: the requester sends while credits allow; replies come
 * back one at a time carrying hostile grants (0, huge, random).  In flight
 * never exceeds the request, nor the grant in force when each call went.
 */
static void test_random_exchange(void **state)
{
	const char *env = getenv("RPCRDMA_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : 0x5eed0004, x = seed ? seed : 1;
	struct rpcrdma_credits c;

	(void)state;
	for (int round = 0; round < 200; round++) {
		rpcrdma__credits_init(&c, (uint32_t)(xorshift(&x) % 200));
		for (int step = 0; step < 2000; step++) {
			uint32_t grant;

			switch (xorshift(&x) % 8) {
			case 0:
				grant = 0;
				break;
			case 1:
				grant = (uint32_t)(x >> 32);
				break;
			default:
				grant = (uint32_t)((x >> 8) % 256);
			}
			if ((x >> 40) % 3 && rpcrdma__credits_available(&c)) {
				uint32_t limit = c.granted < c.requested ? c.granted : c.requested;

				rpcrdma__credits_sent(&c);
				if (c.in_flight > limit || c.in_flight > c.requested) {
					print_error("seed %" PRIu64 " round %d step %d\n", seed, round,
						    step);
					fail();
				}
			} else if (c.in_flight) {
				rpcrdma__credits_reply(&c, grant);
				assert_true(c.granted >= 1 && c.granted <= c.requested);
			} else if ((x >> 50) % 16 == 0) {
				rpcrdma__credits_reset(&c);
			}
		}
		assert_true(c.max_in_flight_seen <= c.requested);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_initial_single_credit),
		cmocka_unit_test(test_zero_grant_is_one),
		cmocka_unit_test(test_grant_above_requested),
		cmocka_unit_test(test_requested_zero),
		cmocka_unit_test(test_in_flight_accounting),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_returned_keeps_grant),
		cmocka_unit_test(test_responder_grant),
		cmocka_unit_test(test_directions_independent),
		cmocka_unit_test(test_random_exchange),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
