/*
 * Version negotiation tests (draft-cel-nfsv4-rpcrdma-version-two-00
 * section 5): the probe's size and exclusivity, settling on Version Two,
 * falling back on ERR_VERS, a lost probe, replies in the wrong version,
 * hostile ERR_VERS ranges, and the memory of Version One peers.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proto/version.h"

static void test_v1_only(void **state)
{
	struct rpcrdma__vneg v;

	(void)state;
	rpcrdma__vneg_start(&v, 1, false);
	assert_int_equal(v.vers, 1);
	assert_false(v.probing);
	assert_int_equal(rpcrdma__vneg_send_max(&v, 4096), 4096);
	assert_true(rpcrdma__vneg_may_send(&v, 5));
	assert_int_equal(rpcrdma__vneg_on_reply(&v, 1), RPCRDMA__VNEG_OK);
	assert_false(rpcrdma__vneg_on_lost(&v));
	/* 0 means Version One only too. */
	rpcrdma__vneg_start(&v, 0, false);
	assert_int_equal(v.vers, 1);
}

static void test_probe_then_settle(void **state)
{
	struct rpcrdma__vneg v;

	(void)state;
	rpcrdma__vneg_start(&v, 2, false);
	assert_int_equal(v.vers, 2);
	assert_true(v.probing);
	/* The probe must fit a Version One receiver. */
	assert_int_equal(rpcrdma__vneg_send_max(&v, 4096), 1024);
	assert_int_equal(rpcrdma__vneg_send_max(&v, 512), 512);
	assert_true(rpcrdma__vneg_may_send(&v, 0));
	rpcrdma__vneg_sent(&v);
	/* Nothing else goes until the answer. */
	assert_false(rpcrdma__vneg_may_send(&v, 1));
	assert_false(rpcrdma__vneg_may_send(&v, 0));
	assert_int_equal(rpcrdma__vneg_on_reply(&v, 2), RPCRDMA__VNEG_SETTLED);
	assert_false(v.probing);
	assert_int_equal(rpcrdma__vneg_send_max(&v, 4096), 4096);
	assert_true(rpcrdma__vneg_may_send(&v, 7));
	assert_int_equal(rpcrdma__vneg_on_reply(&v, 2), RPCRDMA__VNEG_OK);
	assert_int_equal(rpcrdma__vneg_default_inline(v.vers), 4096);
}

static void test_err_vers_fallback(void **state)
{
	struct rpcrdma__vneg v;
	bool v1;

	(void)state;
	rpcrdma__vneg_start(&v, 2, false);
	rpcrdma__vneg_sent(&v);
	assert_int_equal(rpcrdma__vneg_on_err_vers(&v, 1, 1, &v1), RPCRDMA__VNEG_RETRY);
	assert_true(v1);
	assert_int_equal(v.vers, 1);
	assert_false(v.probing);
	assert_int_equal(rpcrdma__vneg_default_inline(v.vers), 1024);
	/* Later replies must be Version One. */
	assert_int_equal(rpcrdma__vneg_on_reply(&v, 2), RPCRDMA__VNEG_MISMATCH);
	assert_int_equal(rpcrdma__vneg_on_reply(&v, 1), RPCRDMA__VNEG_OK);
	/* A second ERR_VERS once settled is a peer bug. */
	assert_int_equal(rpcrdma__vneg_on_err_vers(&v, 1, 1, &v1), RPCRDMA__VNEG_UNSUPPORTED);
}

static void test_err_vers_hostile_ranges(void **state)
{
	static const uint32_t ranges[][2] = {
	    {2, 2}, /* claims 2, yet refused 2 */
	    {3, 7}, /* only newer versions */
	    {0, 0}, /* nothing */
	    {5, 1}, /* inverted */
	    {0xffffffffu, 0xffffffffu},
	};
	struct rpcrdma__vneg v;
	bool v1;

	(void)state;
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		rpcrdma__vneg_start(&v, 2, false);
		rpcrdma__vneg_sent(&v);
		assert_int_equal(rpcrdma__vneg_on_err_vers(&v, ranges[i][0], ranges[i][1], &v1),
				 RPCRDMA__VNEG_UNSUPPORTED);
		assert_false(v1);
		/* Answered, so the connection's end that follows is no
		 * lost probe: the peer is not to be remembered as One. */
		assert_false(rpcrdma__vneg_on_lost(&v));
	}
	/* A wide range that includes 1 settles on 1. */
	rpcrdma__vneg_start(&v, 2, false);
	rpcrdma__vneg_sent(&v);
	assert_int_equal(rpcrdma__vneg_on_err_vers(&v, 0, 0xffffffffu, &v1), RPCRDMA__VNEG_RETRY);
	assert_int_equal(v.vers, 1);
}

static void test_lost_probe(void **state)
{
	struct rpcrdma__vneg v;

	(void)state;
	rpcrdma__vneg_start(&v, 2, false);
	/* Lost before the probe left: nothing learnt. */
	assert_false(rpcrdma__vneg_on_lost(&v));
	rpcrdma__vneg_sent(&v);
	assert_true(rpcrdma__vneg_on_lost(&v));
	/* The next connection to a remembered peer starts at Version One. */
	rpcrdma__vneg_start(&v, 2, true);
	assert_int_equal(v.vers, 1);
	assert_false(v.probing);
	/* Settled connections that drop teach nothing. */
	rpcrdma__vneg_start(&v, 2, false);
	rpcrdma__vneg_sent(&v);
	rpcrdma__vneg_on_reply(&v, 2);
	assert_false(rpcrdma__vneg_on_lost(&v));
}

static void test_reply_wrong_version_while_probing(void **state)
{
	struct rpcrdma__vneg v;

	(void)state;
	rpcrdma__vneg_start(&v, 2, false);
	rpcrdma__vneg_sent(&v);
	assert_int_equal(rpcrdma__vneg_on_reply(&v, 1), RPCRDMA__VNEG_MISMATCH);
	assert_true(v.probing);
}

static void sin_of(struct sockaddr_in *sin, const char *ip, uint16_t port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, ip, &sin->sin_addr), 1);
}

static void test_memo(void **state)
{
	struct sockaddr_in a, b;
	struct sockaddr_in6 c;

	(void)state;
	rpcrdma__vmemo_forget(NULL, 0);
	sin_of(&a, "127.0.0.1", 20049);
	sin_of(&b, "127.0.0.1", 20050);
	memset(&c, 0, sizeof(c));
	c.sin6_family = AF_INET6;
	c.sin6_port = htons(20049);
	c.sin6_addr = in6addr_loopback;

	assert_false(rpcrdma__vmemo_is_v1((struct sockaddr *)&a, sizeof(a)));
	rpcrdma__vmemo_mark_v1((struct sockaddr *)&a, sizeof(a));
	assert_true(rpcrdma__vmemo_is_v1((struct sockaddr *)&a, sizeof(a)));
	assert_false(rpcrdma__vmemo_is_v1((struct sockaddr *)&b, sizeof(b)));
	assert_false(rpcrdma__vmemo_is_v1((struct sockaddr *)&c, sizeof(c)));
	rpcrdma__vmemo_mark_v1((struct sockaddr *)&c, sizeof(c));
	assert_true(rpcrdma__vmemo_is_v1((struct sockaddr *)&c, sizeof(c)));
	/* Short or NULL addresses are never remembered nor found. */
	rpcrdma__vmemo_mark_v1((struct sockaddr *)&b, 4);
	assert_false(rpcrdma__vmemo_is_v1((struct sockaddr *)&b, sizeof(b)));
	assert_false(rpcrdma__vmemo_is_v1(NULL, 0));
	rpcrdma__vmemo_forget((struct sockaddr *)&a, sizeof(a));
	assert_false(rpcrdma__vmemo_is_v1((struct sockaddr *)&a, sizeof(a)));
	assert_true(rpcrdma__vmemo_is_v1((struct sockaddr *)&c, sizeof(c)));
	rpcrdma__vmemo_forget(NULL, 0);
	assert_false(rpcrdma__vmemo_is_v1((struct sockaddr *)&c, sizeof(c)));
}

static void test_memo_bounded_lru(void **state)
{
	struct sockaddr_in sin;

	(void)state;
	rpcrdma__vmemo_forget(NULL, 0);
	for (uint16_t p = 1; p <= RPCRDMA__VMEMO_ENTRIES; p++) {
		sin_of(&sin, "127.0.0.1", p);
		rpcrdma__vmemo_mark_v1((struct sockaddr *)&sin, sizeof(sin));
	}
	/* Refresh port 1, then overflow by one: port 2 is the oldest. */
	sin_of(&sin, "127.0.0.1", 1);
	rpcrdma__vmemo_mark_v1((struct sockaddr *)&sin, sizeof(sin));
	sin_of(&sin, "127.0.0.1", 1000);
	rpcrdma__vmemo_mark_v1((struct sockaddr *)&sin, sizeof(sin));
	assert_true(rpcrdma__vmemo_is_v1((struct sockaddr *)&sin, sizeof(sin)));
	sin_of(&sin, "127.0.0.1", 1);
	assert_true(rpcrdma__vmemo_is_v1((struct sockaddr *)&sin, sizeof(sin)));
	sin_of(&sin, "127.0.0.1", 2);
	assert_false(rpcrdma__vmemo_is_v1((struct sockaddr *)&sin, sizeof(sin)));
	sin_of(&sin, "127.0.0.1", 3);
	assert_true(rpcrdma__vmemo_is_v1((struct sockaddr *)&sin, sizeof(sin)));
	rpcrdma__vmemo_forget(NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v1_only),
	    cmocka_unit_test(test_probe_then_settle),
	    cmocka_unit_test(test_err_vers_fallback),
	    cmocka_unit_test(test_err_vers_hostile_ranges),
	    cmocka_unit_test(test_lost_probe),
	    cmocka_unit_test(test_reply_wrong_version_while_probing),
	    cmocka_unit_test(test_memo),
	    cmocka_unit_test(test_memo_bounded_lru),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
