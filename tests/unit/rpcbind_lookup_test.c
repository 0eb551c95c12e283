/*
 * rpcbind look-ups: universal addresses parsed (and refused), GETADDR for
 * TCP netids and DUMP for "rdma" against a fake rpcbind made of our own
 * server, the DUMP decoder's bounds, and rpcrdma_client_create() with no
 * port over a real one is in examples/kvstore/check-rpcbind.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rpcrdma/rpcbind.h"

static void expect_parse(const char *uaddr, int family, const char *host, int port)
{
	struct sockaddr_storage ss;
	char text[INET6_ADDRSTRLEN];
	socklen_t len;

	assert_int_equal(rpcrdma_rpcbind_uaddr_parse(uaddr, &ss, &len), 0);
	assert_int_equal(ss.ss_family, family);
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		assert_int_equal(len, sizeof(*sin));
		inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text));
		assert_int_equal(ntohs(sin->sin_port), port);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		assert_int_equal(len, sizeof(*sin6));
		inet_ntop(AF_INET6, &sin6->sin6_addr, text, sizeof(text));
		assert_int_equal(ntohs(sin6->sin6_port), port);
	}
	assert_string_equal(text, host);
}

static void test_parse(void **state)
{
	static const char *bad[] = {
	    "", "1.2.3.4", "1.2.3.4.5", "0.0.0.0.256.1", "0.0.0.0.1.256", "0.0.0.0.-1.1",
	    "0.0.0.0.1.1x", "0.0.0.0..1", ".1.1", "::.1", "host.name.1.1", "1.2.3.4.1.1.",
	    "0.0.0.0. 1.1", "0.0.0.0.+1.1", "1.2.3.4.0001.1",
	};
	struct sockaddr_storage ss;
	socklen_t len;
	(void)state;

	expect_parse("0.0.0.0.78.81", AF_INET, "0.0.0.0", 20049);
	expect_parse("127.0.0.1.0.111", AF_INET, "127.0.0.1", 111);
	expect_parse("::.78.81", AF_INET6, "::", 20049);
	expect_parse("fe80::1.255.255", AF_INET6, "fe80::1", 65535);
	expect_parse("::ffff:10.0.0.1.8.1", AF_INET6, "::ffff:10.0.0.1", 2049);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (rpcrdma_rpcbind_uaddr_parse(bad[i], &ss, &len) != -EINVAL)
			fail_msg("accepted \"%s\"", bad[i]);
	}
	assert_int_equal(rpcrdma_rpcbind_uaddr_parse(NULL, &ss, &len), -EINVAL);

	/* The inverse of rpcrdma_rpcbind_uaddr() for every port. */
	for (unsigned int port = 0; port < 65536; port += 257) {
		struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
		char u[RPCRDMA_RPCBIND_UADDR_SIZE];

		sin.sin_addr.s_addr = htonl(0x7f000001);
		assert_true(rpcrdma_rpcbind_uaddr((struct sockaddr *)&sin, u, sizeof(u)) > 0);
		expect_parse(u, AF_INET, "127.0.0.1", (int)port);
	}
}

/* A fake rpcbind: GETADDR answers fake.uaddr; DUMP lists fake.entries. */
#define MAX_ENTRIES 8

struct entry {
	uint32_t prog, vers;
	const char *netid, *addr, *owner;
};

static struct {
	struct rpcrdma_loop *loop;
	struct rpcrdma_server *srv;
	char port[8];
	const char *uaddr;
	struct entry entries[MAX_ENTRIES];
	unsigned int n;
	uint32_t claimed; /* DUMP: entries claimed, above n for a lying rpcbind */
	unsigned int getaddr_calls, dump_calls;
	char last_netid[32];
} fake;

static int dec_rpcb(struct rpcrdma_xdr_stream *x, void *obj)
{
	uint32_t v, len;
	char s[256];
	int rc;

	(void)obj;
	rc = rpcrdma_xdr_decode_u32(x, &v);
	if (!rc)
		rc = rpcrdma_xdr_decode_u32(x, &v);
	if (!rc)
		rc = rpcrdma_xdr_decode_string(x, fake.last_netid, sizeof(fake.last_netid), &len);
	if (!rc)
		rc = rpcrdma_xdr_decode_string(x, s, sizeof(s), &len);
	if (!rc)
		rc = rpcrdma_xdr_decode_string(x, s, sizeof(s), &len);
	return rc;
}

static int enc_uaddr(struct rpcrdma_xdr_stream *x, void *obj)
{
	(void)obj;
	return rpcrdma_xdr_encode_string(x, fake.uaddr, (uint32_t)strlen(fake.uaddr));
}

static int enc_dump(struct rpcrdma_xdr_stream *x, void *obj)
{
	int rc = 0;

	(void)obj;
	for (uint32_t i = 0; !rc && i < fake.claimed; i++) {
		const struct entry *e = &fake.entries[i % (fake.n ? fake.n : 1)];

		rc = rpcrdma_xdr_encode_bool(x, true);
		if (!rc)
			rc = rpcrdma_xdr_encode_u32(x, e->prog);
		if (!rc)
			rc = rpcrdma_xdr_encode_u32(x, e->vers);
		if (!rc)
			rc = rpcrdma_xdr_encode_string(x, e->netid, (uint32_t)strlen(e->netid));
		if (!rc)
			rc = rpcrdma_xdr_encode_string(x, e->addr, (uint32_t)strlen(e->addr));
		if (!rc)
			rc = rpcrdma_xdr_encode_string(x, e->owner, (uint32_t)strlen(e->owner));
	}
	return rc ? rc : rpcrdma_xdr_encode_bool(x, false);
}

static int do_getaddr(struct rpcrdma_svc_req *r, void *a, void *res)
{
	(void)r;
	(void)a;
	(void)res;
	fake.getaddr_calls++;
	return 0;
}

static int do_dump(struct rpcrdma_svc_req *r, void *a, void *res)
{
	(void)r;
	(void)a;
	(void)res;
	fake.dump_calls++;
	return 0;
}

static const struct rpcrdma_svc_proc procs[] = {
    {NULL, NULL, 0, NULL, 0, NULL},
    {NULL, NULL, 0, NULL, 0, NULL},
    {NULL, NULL, 0, NULL, 0, NULL},
    {do_getaddr, dec_rpcb, 1, enc_uaddr, 1, NULL},
    {do_dump, NULL, 0, enc_dump, 1, NULL},
};

static int setup(void **state)
{
	struct rpcrdma_server_opts so;

	(void)state;
	memset(&fake, 0, sizeof(fake));
	assert_int_equal(rpcrdma_loop_create(&fake.loop), 0);
	rpcrdma_server_opts_default(&so);
	so.transport = RPCRDMA_TRANSPORT_TCP;
	assert_int_equal(rpcrdma_server_create(fake.loop, "127.0.0.1", "0", &so, &fake.srv), 0);
	assert_int_equal(rpcrdma_server_register(fake.srv, RPCRDMA_RPCBIND_PROG, 4, procs, 5), 0);
	snprintf(fake.port, sizeof(fake.port), "%d", rpcrdma_server_port(fake.srv));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rpcrdma_server_destroy(fake.srv);
	assert_int_equal(rpcrdma_loop_destroy(fake.loop), 0);
	return 0;
}

static void test_getaddr_tcp(void **state)
{
	struct rpcrdma_rpcbind_opts o = {"127.0.0.1", fake.port, 2000};
	char u[64];
	(void)state;

	fake.uaddr = "127.0.0.1.8.1";
	assert_int_equal(rpcrdma_rpcbind_getaddr(fake.loop, 100003, 3, "tcp", u, sizeof(u), &o),
			 13);
	assert_string_equal(u, "127.0.0.1.8.1");
	assert_string_equal(fake.last_netid, "tcp");
	assert_int_equal(fake.getaddr_calls, 1);
	assert_int_equal(rpcrdma_rpcbind_getaddr(fake.loop, 100003, 3, "tcp", u, 13, &o), -ENOSPC);
	fake.uaddr = "";
	assert_int_equal(rpcrdma_rpcbind_getaddr(fake.loop, 100003, 3, "tcp", u, sizeof(u), &o),
			 -ENOENT);
	assert_int_equal(rpcrdma_rpcbind_getaddr(fake.loop, 100003, 3, "", u, sizeof(u), &o),
			 -EINVAL);
	assert_int_equal(rpcrdma_rpcbind_getaddr(fake.loop, 100003, 3, "tcp", NULL, 8, &o),
			 -EINVAL);
	assert_int_equal(fake.dump_calls, 0);
}

static void test_dump_rdma(void **state)
{
	struct rpcrdma_rpcbind_opts o = {"127.0.0.1", fake.port, 2000};
	char u[64];
	(void)state;

	fake.entries[0] = (struct entry){100003, 3, "tcp", "0.0.0.0.8.1", "0"};
	fake.entries[1] = (struct entry){100003, 3, "rdma6", "::.78.81", "0"};
	fake.entries[2] = (struct entry){100003, 4, "rdma", "0.0.0.0.78.82", "0"};
	fake.entries[3] = (struct entry){100003, 3, "rdma", "0.0.0.0.78.81", "0"};
	fake.n = fake.claimed = 4;
	assert_int_equal(rpcrdma_rpcbind_getaddr(fake.loop, 100003, 3, "rdma", u, sizeof(u), &o),
			 13);
	assert_string_equal(u, "0.0.0.0.78.81");
	assert_int_equal(rpcrdma_rpcbind_getaddr(fake.loop, 100003, 3, "rdma6", u, sizeof(u), &o),
			 8);
	assert_string_equal(u, "::.78.81");
	assert_int_equal(rpcrdma_rpcbind_getaddr(fake.loop, 100005, 3, "rdma", u, sizeof(u), &o),
			 -ENOENT);
	assert_int_equal(fake.dump_calls, 3);
	assert_int_equal(fake.getaddr_calls, 0);

	/* An rpcbind listing more mappings than the bound. */
	fake.claimed = 5000;
	assert_int_equal(rpcrdma_rpcbind_getaddr(fake.loop, 100005, 3, "rdma", u, sizeof(u), &o),
			 RPCRDMA_ERR_BAD_RPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test_setup_teardown(test_getaddr_tcp, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_dump_rdma, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
