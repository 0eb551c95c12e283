/*
 * The public API against a careless application: option values out of
 * range and addresses that cannot be, each refused at create time with
 * the error rpc.h documents rather than taken for something else.  Only
 * 127.0.0.1 and TCP are used: nothing here needs the RDMA engine.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rpcrdma/rpc.h"

#define TEST_PROG 400123u

static struct rpcrdma_loop *new_loop(void)
{
	struct rpcrdma_loop *loop = NULL;

	assert_int_equal(rpcrdma_loop_create(&loop), 0);
	return loop;
}

/* Ports getaddrinfo() reads as numbers but keeps only 16 bits of. */
static const char *const bad_ports[] = {
    "65536", "99999", "4294967296", "18446744073709551616", "+70000", " 65600", "",
};

static void test_service_out_of_range(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	struct rpcrdma_client_opts co;
	struct rpcrdma_server_opts so;

	(void)state;
	rpcrdma_client_opts_default(&co);
	co.transport = RPCRDMA_TRANSPORT_TCP;
	rpcrdma_server_opts_default(&so);
	so.transport = RPCRDMA_TRANSPORT_TCP;
	for (size_t i = 0; i < sizeof(bad_ports) / sizeof(bad_ports[0]); i++) {
		struct rpcrdma_client *c = NULL;
		struct rpcrdma_server *s = NULL;
		int rc;

		rc = rpcrdma_client_create(loop, "127.0.0.1", bad_ports[i], TEST_PROG, 1, &co, &c);
		if (rc != RPCRDMA_ERR_NO_SERVICE)
			fail_msg("client service \"%s\": %d, not RPCRDMA_ERR_NO_SERVICE",
				 bad_ports[i], rc);
		rc = rpcrdma_server_create(loop, "127.0.0.1", bad_ports[i], &so, &s);
		if (rc != RPCRDMA_ERR_NO_SERVICE)
			fail_msg("server service \"%s\": %d (port %d), not "
				 "RPCRDMA_ERR_NO_SERVICE",
				 bad_ports[i], rc, rc ? -1 : rpcrdma_server_port(s));
	}
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/* The edges that are ports still are, and a name is still a name. */
static void test_service_in_range(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	struct rpcrdma_client_opts co;
	struct rpcrdma_client *c = NULL;

	(void)state;
	rpcrdma_client_opts_default(&co);
	co.transport = RPCRDMA_TRANSPORT_TCP;
	assert_int_equal(rpcrdma_client_create(loop, "127.0.0.1", "65535", TEST_PROG, 1, &co, &c),
			 0);
	rpcrdma_client_destroy(c);
	assert_int_equal(rpcrdma_client_create(loop, "127.0.0.1", "1", TEST_PROG, 1, &co, &c), 0);
	rpcrdma_client_destroy(c);
	assert_int_equal(
	    rpcrdma_client_create(loop, "127.0.0.1", "no-such-service", TEST_PROG, 1, &co, &c),
	    RPCRDMA_ERR_NO_SERVICE);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_service_out_of_range),
	    cmocka_unit_test(test_service_in_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
