/*
 * The public API against a careless application: option values out of
 * range and addresses that cannot be, each refused at create time with
 * the error rpc.h documents rather than taken for something else.  Only
 * 127.0.0.1 and TCP are used: nothing here needs the RDMA engine.
 */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rpcrdma/nfs4.h"
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

/*
 * Every RPCRDMA_ERR_* code any public header declares, read from the
 * headers themselves so that a code added later without a text fails
 * here: rpcrdma_strerror() names each, none with the fallback, no two
 * alike.
 */
#define HEADERS_DIR_FROM_HERE "/../../include/rpcrdma/"

static const char *const public_headers[] = {
    "backchannel.h", "cm_private.h", "common.h", "debug.h",   "header.h",
    "loop.h",        "mem.h",        "nfs3.h",   "nfs4.h",    "rpc.h",
    "rpc_msg.h",     "rpcbind.h",    "tirpc.h",  "trace.h",   "xdr.h",
};

struct code {
	char name[64];
	int value;
};

static size_t read_codes(const char *path, struct code *codes, size_t n, size_t cap)
{
	char line[512];
	regmatch_t m[3];
	regex_t re;
	FILE *f = fopen(path, "r");

	if (!f)
		fail_msg("cannot open %s", path);
	assert_int_equal(regcomp(&re, "(RPCRDMA_ERR_[A-Z0-9_]+)[ \t]*=[ \t]*(-[0-9]+)",
				 REG_EXTENDED),
			 0);
	while (fgets(line, sizeof(line), f)) {
		if (regexec(&re, line, 3, m, 0))
			continue;
		assert_true(n < cap);
		snprintf(codes[n].name, sizeof(codes[n].name), "%.*s",
			 (int)(m[1].rm_eo - m[1].rm_so), line + m[1].rm_so);
		codes[n].value = atoi(line + m[2].rm_so);
		n++;
	}
	regfree(&re);
	fclose(f);
	return n;
}

static void test_strerror_every_code(void **state)
{
	static struct code codes[256];
	const char *fallback = rpcrdma_strerror(-99999);
	char dir[4096], path[4200];
	size_t n = 0;

	(void)state;
	snprintf(dir, sizeof(dir), "%s", __FILE__);
	*strrchr(dir, '/') = '\0';
	for (size_t i = 0; i < sizeof(public_headers) / sizeof(public_headers[0]); i++) {
		snprintf(path, sizeof(path), "%s%s%s", dir, HEADERS_DIR_FROM_HERE,
			 public_headers[i]);
		n = read_codes(path, codes, n, sizeof(codes) / sizeof(codes[0]));
	}
	/* common.h's 15 and rpc.h's 6 at least: the parse found them. */
	assert_true(n >= 21);
	for (size_t i = 0; i < n; i++) {
		const char *t = rpcrdma_strerror(codes[i].value);

		if (!strcmp(t, fallback) || !*t)
			fail_msg("rpcrdma_strerror(%s = %d) is the fallback \"%s\"", codes[i].name,
				 codes[i].value, t);
		for (size_t j = 0; j < i; j++) {
			if (codes[j].value != codes[i].value &&
			    !strcmp(t, rpcrdma_strerror(codes[j].value)))
				fail_msg("%s and %s have one text", codes[i].name, codes[j].name);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_service_out_of_range),
	    cmocka_unit_test(test_service_in_range),
	    cmocka_unit_test(test_strerror_every_code),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
