/*
 * Message direction on a bidirectional connection (RFC 8167): calls and
 * replies told apart by msg_type, XID mismatch and garbage refused, Long
 * Calls and Long Replies told apart by the Position-Zero Read chunk, and
 * messages with no direction left unknown (their credit is then ignored).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "proto/direction.h"

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void test_msg(void **state)
{
	struct rpcrdma_hdr hdr;
	uint8_t rpc[12];

	(void)state;
	rpcrdma_hdr_init(&hdr, 0xabcd0001, 1, 8, RPCRDMA_PROC_MSG);
	put32(rpc, 0xabcd0001);
	put32(rpc + 4, 0);
	assert_int_equal(rpcrdma__msg_direction(&hdr, rpc, sizeof(rpc)), RPCRDMA__DIR_CALL);
	put32(rpc + 4, 1);
	assert_int_equal(rpcrdma__msg_direction(&hdr, rpc, sizeof(rpc)), RPCRDMA__DIR_REPLY);
	put32(rpc + 4, 2);
	assert_int_equal(rpcrdma__msg_direction(&hdr, rpc, sizeof(rpc)), RPCRDMA__DIR_INVALID);
	/* The RPC XID must be the transport header's. */
	put32(rpc, 0xabcd0002);
	put32(rpc + 4, 0);
	assert_int_equal(rpcrdma__msg_direction(&hdr, rpc, sizeof(rpc)), RPCRDMA__DIR_INVALID);
	/* Too short to say. */
	put32(rpc, 0xabcd0001);
	assert_int_equal(rpcrdma__msg_direction(&hdr, rpc, 7), RPCRDMA__DIR_INVALID);
	assert_int_equal(rpcrdma__msg_direction(&hdr, NULL, 0), RPCRDMA__DIR_INVALID);
	hdr.proc = RPCRDMA_PROC_MSGP;
	assert_int_equal(rpcrdma__msg_direction(&hdr, rpc, 8), RPCRDMA__DIR_CALL);
}

static void test_nomsg(void **state)
{
	struct rpcrdma_hdr hdr;
	struct rpcrdma_segment seg = {0x1234, 4096, 0x10000};

	(void)state;
	rpcrdma_hdr_init(&hdr, 7, 1, 8, RPCRDMA_PROC_NOMSG);
	assert_int_equal(rpcrdma__msg_direction(&hdr, NULL, 0), RPCRDMA__DIR_REPLY);
	/* A Read chunk at a non-zero position does not make a Long Call. */
	assert_int_equal(rpcrdma_hdr_add_read(&hdr, 64, &seg), 0);
	assert_int_equal(rpcrdma__msg_direction(&hdr, NULL, 0), RPCRDMA__DIR_REPLY);
	assert_int_equal(rpcrdma_hdr_add_read(&hdr, 0, &seg), 0);
	assert_int_equal(rpcrdma__msg_direction(&hdr, NULL, 0), RPCRDMA__DIR_CALL);
}

static void test_others(void **state)
{
	struct rpcrdma_hdr hdr;

	(void)state;
	rpcrdma_hdr_init(&hdr, 7, 1, 8, RPCRDMA_PROC_ERROR);
	assert_int_equal(rpcrdma__msg_direction(&hdr, NULL, 0), RPCRDMA__DIR_REPLY);
	rpcrdma_hdr_init(&hdr, 7, 1, 8, RPCRDMA_PROC_DONE);
	assert_int_equal(rpcrdma__msg_direction(&hdr, NULL, 0), RPCRDMA__DIR_UNKNOWN);
	rpcrdma_hdr_init(&hdr, 7, 2, 8, RPCRDMA_PROC_OPTIONAL);
	assert_int_equal(rpcrdma__msg_direction(&hdr, NULL, 0), RPCRDMA__DIR_UNKNOWN);
	rpcrdma_hdr_init(&hdr, 7, 1, 8, 99);
	assert_int_equal(rpcrdma__msg_direction(&hdr, NULL, 0), RPCRDMA__DIR_UNKNOWN);
	assert_string_equal(rpcrdma__direction_str(RPCRDMA__DIR_CALL), "call");
	assert_string_equal(rpcrdma__direction_str(RPCRDMA__DIR_UNKNOWN), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_msg),
	    cmocka_unit_test(test_nomsg),
	    cmocka_unit_test(test_others),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
