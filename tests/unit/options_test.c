/*
 * Version Two optional features: the registry's answers (unknown opttype ->
 * ERR_INVAL_OPTION, payload rules -> ERR_CHUNK, handler verdicts), and the
 * transport properties codec, including hostile optinfo.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proto/options.h"

static int handled;

static enum rpcrdma_hdr_action count_handler(void *ctx, const struct rpcrdma_hdr *hdr,
					     const uint8_t *payload, size_t payload_len)
{
	(void)hdr;
	(void)payload;
	(void)payload_len;
	handled += *(int *)ctx;
	return RPCRDMA_HDR_ACCEPT;
}

static const struct rpcrdma__opt_feature never = {0x100, "never", RPCRDMA__OPT_PAYLOAD_NEVER,
						  count_handler};
static const struct rpcrdma__opt_feature always = {0x101, "always", RPCRDMA__OPT_PAYLOAD_ALWAYS,
						   count_handler};
static const struct rpcrdma__opt_feature maybe = {0x102, "maybe", RPCRDMA__OPT_PAYLOAD_MAY,
						  count_handler};

static void opt_hdr(struct rpcrdma_hdr *hdr, uint32_t opttype)
{
	rpcrdma_hdr_init(hdr, 0x1234, RPCRDMA_VERSION_TWO, 1, RPCRDMA_PROC_OPTIONAL);
	hdr->opttype = opttype;
}

static void test_registry(void **state)
{
	struct rpcrdma__opt_registry r;
	struct rpcrdma__opt_feature bad = never;
	struct rpcrdma_hdr hdr;
	static const uint8_t body[8];
	int one = 1;

	(void)state;
	handled = 0;
	rpcrdma__opt_registry_init(&r);
	assert_int_equal(rpcrdma__opt_register(&r, &never, &one), 0);
	assert_int_equal(rpcrdma__opt_register(&r, &always, &one), 0);
	assert_int_equal(rpcrdma__opt_register(&r, &maybe, &one), 0);
	assert_int_equal(rpcrdma__opt_register(&r, &never, &one), -EEXIST);
	bad.opttype = 0x200;
	bad.handle = NULL;
	assert_int_equal(rpcrdma__opt_register(&r, &bad, &one), -EINVAL);
	assert_ptr_equal(rpcrdma__opt_lookup(&r, 0x101), &always);
	assert_null(rpcrdma__opt_lookup(&r, 0x999));

	opt_hdr(&hdr, 0x999);
	assert_int_equal(rpcrdma__opt_dispatch(&r, &hdr, NULL, 0), RPCRDMA_HDR_REPLY_INVAL_OPTION);
	opt_hdr(&hdr, 0x100);
	assert_int_equal(rpcrdma__opt_dispatch(&r, &hdr, body, sizeof(body)),
			 RPCRDMA_HDR_REPLY_ERR_CHUNK);
	assert_int_equal(rpcrdma__opt_dispatch(&r, &hdr, NULL, 0), RPCRDMA_HDR_ACCEPT);
	opt_hdr(&hdr, 0x101);
	assert_int_equal(rpcrdma__opt_dispatch(&r, &hdr, NULL, 0), RPCRDMA_HDR_REPLY_ERR_CHUNK);
	assert_int_equal(rpcrdma__opt_dispatch(&r, &hdr, body, sizeof(body)), RPCRDMA_HDR_ACCEPT);
	opt_hdr(&hdr, 0x102);
	assert_int_equal(rpcrdma__opt_dispatch(&r, &hdr, NULL, 0), RPCRDMA_HDR_ACCEPT);
	assert_int_equal(rpcrdma__opt_dispatch(&r, &hdr, body, sizeof(body)), RPCRDMA_HDR_ACCEPT);
	assert_int_equal(handled, 4);
}

static void test_registry_full(void **state)
{
	static struct rpcrdma__opt_feature f[RPCRDMA__OPT_MAX_FEATURES + 1];
	struct rpcrdma__opt_registry r;

	(void)state;
	rpcrdma__opt_registry_init(&r);
	for (unsigned int i = 0; i <= RPCRDMA__OPT_MAX_FEATURES; i++) {
		f[i] = never;
		f[i].opttype = i;
		assert_int_equal(rpcrdma__opt_register(&r, &f[i], NULL),
				 i < RPCRDMA__OPT_MAX_FEATURES ? 0 : -ENOSPC);
	}
}

static void test_props_round_trip(void **state)
{
	struct rpcrdma__props in = {0}, out;
	uint8_t buf[128];
	int n;

	(void)state;
	in.present =
	    1u << RPCRDMA_PROP_RECV_SIZE | 1u << RPCRDMA_PROP_CREDITS | 1u << RPCRDMA_PROP_REVERSE;
	in.recv_size = 65536;
	in.credits = 128;
	in.reverse = 1;
	n = rpcrdma__props_encode(&in, buf, sizeof(buf));
	assert_int_equal(n, (int)rpcrdma__props_size(&in));
	assert_int_equal(n, 4 + 3 * 12);
	assert_int_equal(rpcrdma__props_decode(buf, (size_t)n, &out), 0);
	assert_int_equal(out.present, in.present);
	assert_int_equal(out.recv_size, 65536);
	assert_int_equal(out.credits, 128);
	assert_int_equal(out.reverse, 1);
	assert_int_equal(out.send_size, 0);
	assert_int_equal(rpcrdma__props_encode(&in, buf, (size_t)n - 1), -ENOSPC);

	/* Empty list. */
	memset(&in, 0, sizeof(in));
	n = rpcrdma__props_encode(&in, buf, sizeof(buf));
	assert_int_equal(n, 4);
	assert_int_equal(rpcrdma__props_decode(buf, 4, &out), 0);
	assert_int_equal(out.present, 0);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void test_props_unknown_skipped(void **state)
{
	uint8_t buf[64] = {0};
	struct rpcrdma__props out;

	(void)state;
	/* Two properties: id 77 with 5 bytes (padded to 8), then RECV_SIZE. */
	put32(buf, 2);
	put32(buf + 4, 77);
	put32(buf + 8, 5);
	memset(buf + 12, 0xee, 5);
	put32(buf + 20, RPCRDMA_PROP_RECV_SIZE);
	put32(buf + 24, 4);
	put32(buf + 28, 8192);
	assert_int_equal(rpcrdma__props_decode(buf, 32, &out), 0);
	assert_int_equal(out.present, 1u << RPCRDMA_PROP_RECV_SIZE);
	assert_int_equal(out.recv_size, 8192);
}

static void test_props_hostile(void **state)
{
	uint8_t buf[64] = {0};
	struct rpcrdma__props out;

	(void)state;
	/* Count larger than the input can back. */
	put32(buf, 1000);
	assert_int_equal(rpcrdma__props_decode(buf, 12, &out), -EBADMSG);
	/* Count above the maximum. */
	put32(buf, RPCRDMA_PROPS_MAX + 1);
	assert_int_equal(rpcrdma__props_decode(buf, sizeof(buf), &out), -EBADMSG);
	/* A known property of the wrong size. */
	put32(buf, 1);
	put32(buf + 4, RPCRDMA_PROP_CREDITS);
	put32(buf + 8, 8);
	assert_int_equal(rpcrdma__props_decode(buf, 20, &out), -EBADMSG);
	/* A value length running past the end. */
	put32(buf + 4, 99);
	put32(buf + 8, 0xfffffff0u);
	assert_int_equal(rpcrdma__props_decode(buf, 20, &out), -EBADMSG);
	/* Trailing bytes. */
	put32(buf, 0);
	assert_int_equal(rpcrdma__props_decode(buf, 8, &out), -EBADMSG);
	/* Truncated. */
	assert_int_equal(rpcrdma__props_decode(buf, 2, &out), -EBADMSG);
	/* Every truncation of a valid encoding fails cleanly. */
	{
		struct rpcrdma__props in = {
		    .present = 0x1e, .recv_size = 1, .send_size = 2, .credits = 3, .reverse = 1};
		int n = rpcrdma__props_encode(&in, buf, sizeof(buf));

		assert_true(n > 0);
		for (int k = 0; k < n; k++)
			assert_int_equal(rpcrdma__props_decode(buf, (size_t)k, &out), -EBADMSG);
		assert_int_equal(rpcrdma__props_decode(buf, (size_t)n, &out), 0);
	}
}

static void test_props_send_max(void **state)
{
	struct rpcrdma__props p = {0};

	(void)state;
	assert_int_equal(rpcrdma__props_send_max(&p, 65536, 4096), 4096);
	p.present = 1u << RPCRDMA_PROP_RECV_SIZE;
	p.recv_size = 16384;
	assert_int_equal(rpcrdma__props_send_max(&p, 65536, 4096), 16384);
	assert_int_equal(rpcrdma__props_send_max(&p, 8192, 4096), 8192);
	/* Below the Version Two floor: the floor. */
	p.recv_size = 100;
	assert_int_equal(rpcrdma__props_send_max(&p, 65536, 4096), 4096);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_registry),         cmocka_unit_test(test_registry_full),
	    cmocka_unit_test(test_props_round_trip), cmocka_unit_test(test_props_unknown_skipped),
	    cmocka_unit_test(test_props_hostile),    cmocka_unit_test(test_props_send_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
