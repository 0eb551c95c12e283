/*
 * rpcbind registration: universal addresses (RFC 5665) for IPv4 and IPv6,
 * netids, and RPCBPROC_SET / RPCBPROC_UNSET against fake rpcbinds built
 * with the library's own server on 127.0.0.1 (a random port): one serving
 * versions 3 and 4, one serving only version 3 (so version 4 gets
 * PROG_MISMATCH and the client must fall back), one serving neither.  The
 * fake records the raw argument bytes so the rpcb encoding is checked
 * byte for byte.  Also: connection refused, a silent rpcbind (time-out),
 * replies whose result is not a bool, and a raw peer answering garbage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "rpcrdma/rpc.h"
#include "rpcrdma/rpcbind.h"

/* Universal addresses. */

static int fmt4(const char *ip, uint16_t port, char *buf, size_t size)
{
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
	return rpcrdma_rpcbind_uaddr((const struct sockaddr *)&sin, buf, size);
}

static int fmt6(const char *ip, uint16_t port, char *buf, size_t size)
{
	struct sockaddr_in6 sin6;

	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = htons(port);
	sin6.sin6_scope_id = 3; /* must not appear */
	assert_int_equal(inet_pton(AF_INET6, ip, &sin6.sin6_addr), 1);
	return rpcrdma_rpcbind_uaddr((const struct sockaddr *)&sin6, buf, size);
}

static void expect_uaddr4(const char *ip, uint16_t port, const char *want)
{
	char buf[RPCRDMA_RPCBIND_UADDR_SIZE];

	assert_int_equal(fmt4(ip, port, buf, sizeof(buf)), (int)strlen(want));
	assert_string_equal(buf, want);
}

static void expect_uaddr6(const char *ip, uint16_t port, const char *want)
{
	char buf[RPCRDMA_RPCBIND_UADDR_SIZE];

	assert_int_equal(fmt6(ip, port, buf, sizeof(buf)), (int)strlen(want));
	assert_string_equal(buf, want);
}

static void test_uaddr_ipv4(void **state)
{
	(void)state;
	expect_uaddr4("0.0.0.0", 20049, "0.0.0.0.78.81");
	expect_uaddr4("127.0.0.1", 111, "127.0.0.1.0.111");
	expect_uaddr4("192.168.10.1", 2049, "192.168.10.1.8.1");
	expect_uaddr4("255.255.255.255", 65535, "255.255.255.255.255.255");
	expect_uaddr4("10.0.0.1", 0, "10.0.0.1.0.0");
	expect_uaddr4("10.0.0.1", 256, "10.0.0.1.1.0");
}

static void test_uaddr_ipv6(void **state)
{
	(void)state;
	expect_uaddr6("::1", 20049, "::1.78.81");
	expect_uaddr6("::", 20049, "::.78.81");
	expect_uaddr6("fe80::1:2", 2049, "fe80::1:2.8.1");
	expect_uaddr6("2001:db8:1:2:3:4:5:6", 65535, "2001:db8:1:2:3:4:5:6.255.255");
	expect_uaddr6("::ffff:192.0.2.7", 111, "::ffff:192.0.2.7.0.111");
	/* Eight full groups, the longest inet_ntop() writes for an address
	 * that is not IPv4-mapped. */
	expect_uaddr6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 65535,
		      "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff.255.255");
}

static void test_uaddr_errors(void **state)
{
	char buf[RPCRDMA_RPCBIND_UADDR_SIZE];
	struct sockaddr_storage ss;

	(void)state;
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = AF_UNIX;
	assert_int_equal(rpcrdma_rpcbind_uaddr((const struct sockaddr *)&ss, buf, sizeof(buf)),
			 -EINVAL);
	assert_int_equal(rpcrdma_rpcbind_uaddr(NULL, buf, sizeof(buf)), -EINVAL);
	ss.ss_family = AF_INET;
	assert_int_equal(rpcrdma_rpcbind_uaddr((const struct sockaddr *)&ss, NULL, 10), -EINVAL);

	/* "0.0.0.0.78.81" is 13 bytes: 14 fit, 13 do not, and nothing half-written stays. */
	assert_int_equal(fmt4("0.0.0.0", 20049, buf, 14), 13);
	assert_string_equal(buf, "0.0.0.0.78.81");
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(fmt4("0.0.0.0", 20049, buf, 13), -ENOSPC);
	assert_string_equal(buf, "");
	assert_int_equal(fmt6("::1", 20049, buf, 4), -ENOSPC);
	assert_string_equal(buf, "");
	assert_int_equal(fmt6("::1", 20049, buf, 0), -ENOSPC);
}

static void test_netid(void **state)
{
	(void)state;
	assert_string_equal(rpcrdma_rpcbind_netid(RPCRDMA_TRANSPORT_RDMA, AF_INET), "rdma");
	assert_string_equal(rpcrdma_rpcbind_netid(RPCRDMA_TRANSPORT_RDMA, AF_INET6), "rdma6");
	assert_string_equal(rpcrdma_rpcbind_netid(RPCRDMA_TRANSPORT_TCP, AF_INET), "tcp");
	assert_string_equal(rpcrdma_rpcbind_netid(RPCRDMA_TRANSPORT_TCP, AF_INET6), "tcp6");
	assert_null(rpcrdma_rpcbind_netid(RPCRDMA_TRANSPORT_TCP, AF_UNIX));
	assert_null(rpcrdma_rpcbind_netid((enum rpcrdma_transport)7, AF_INET));
}

/* The fake rpcbind. */

#define RAW_MAX 2048u
#define STR_MAX 256u

enum answer {
	ANSWER_TRUE,
	ANSWER_FALSE,
	ANSWER_NOT_BOOL, /* the result is the word 7 */
	ANSWER_EMPTY,    /* no result at all */
};

struct rpcb_seen {
	uint32_t prog, vers;
	char netid[STR_MAX], addr[STR_MAX], owner[STR_MAX];
};

static struct fake {
	struct rpcrdma_loop *loop;
	struct rpcrdma_server *srv;
	char port[8];
	enum answer answer;
	unsigned int calls;
	uint32_t last_vers, last_proc;
	uint8_t raw[RAW_MAX];
	size_t raw_len;
	struct rpcb_seen seen;
} fake;

static int decode_str(struct rpcrdma_xdr_stream *x, char *dst)
{
	uint32_t len;

	return rpcrdma_xdr_decode_string(x, dst, STR_MAX, &len);
}

/* Keep the exact bytes, then decode them as struct rpcb. */
static int fake_decode(struct rpcrdma_xdr_stream *x, void *obj)
{
	struct rpcb_seen *s = obj;
	struct rpcrdma_xdr_stream copy;
	size_t n = rpcrdma_xdr_remaining(x);
	int rc;

	if (n > RAW_MAX)
		return RPCRDMA_ERR_TOO_LONG;
	rc = rpcrdma_xdr_decode_fixed_opaque(x, fake.raw, n);
	if (rc)
		return rc;
	fake.raw_len = n;
	rpcrdma_xdr_init_const(&copy, fake.raw, n);
	rc = rpcrdma_xdr_decode_u32(&copy, &s->prog);
	if (!rc)
		rc = rpcrdma_xdr_decode_u32(&copy, &s->vers);
	if (!rc)
		rc = decode_str(&copy, s->netid);
	if (!rc)
		rc = decode_str(&copy, s->addr);
	if (!rc)
		rc = decode_str(&copy, s->owner);
	if (!rc && rpcrdma_xdr_remaining(&copy))
		rc = RPCRDMA_ERR_BAD_RPC;
	return rc;
}

static int fake_encode(struct rpcrdma_xdr_stream *x, void *obj)
{
	switch (fake.answer) {
	case ANSWER_TRUE:
	case ANSWER_FALSE:
		return rpcrdma_xdr_encode_bool(x, *(bool *)obj);
	case ANSWER_NOT_BOOL:
		return rpcrdma_xdr_encode_u32(x, 7);
	case ANSWER_EMPTY:
		return 0;
	}
	return 0;
}

static int fake_proc(struct rpcrdma_svc_req *req, void *args, void *res)
{
	const struct rpcrdma_rpc_msg *msg = rpcrdma_svc_msg(req);

	fake.calls++;
	fake.last_vers = msg->u.call.vers;
	fake.last_proc = msg->u.call.proc;
	fake.seen = *(struct rpcb_seen *)args;
	*(bool *)res = fake.answer == ANSWER_TRUE;
	return 0;
}

static const struct rpcrdma_svc_proc fake_procs[] = {
    {NULL, NULL, 0, NULL, 0, NULL}, /* NULLPROC: not needed */
    {fake_proc, fake_decode, sizeof(struct rpcb_seen), fake_encode, sizeof(bool), NULL},
    {fake_proc, fake_decode, sizeof(struct rpcb_seen), fake_encode, sizeof(bool), NULL},
};

/* A fake rpcbind for program @prog serving versions @vers[0..n). */
static void fake_start(uint32_t prog, const uint32_t *vers, unsigned int n)
{
	struct rpcrdma_server_opts so;
	int port;

	memset(&fake, 0, sizeof(fake));
	assert_int_equal(rpcrdma_loop_create(&fake.loop), 0);
	rpcrdma_server_opts_default(&so);
	so.transport = RPCRDMA_TRANSPORT_TCP;
	assert_int_equal(rpcrdma_server_create(fake.loop, "127.0.0.1", "0", &so, &fake.srv), 0);
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(rpcrdma_server_register(fake.srv, prog, vers[i], fake_procs, 3),
				 0);
	port = rpcrdma_server_port(fake.srv);
	assert_true(port > 0 && port < 65536);
	snprintf(fake.port, sizeof(fake.port), "%d", port);
}

static void fake_stop(void)
{
	rpcrdma_server_destroy(fake.srv);
	assert_int_equal(rpcrdma_loop_destroy(fake.loop), 0);
	fake.srv = NULL;
	fake.loop = NULL;
}

static struct rpcrdma_rpcbind_opts fake_opts(void)
{
	struct rpcrdma_rpcbind_opts o = {"127.0.0.1", fake.port, 2000};

	return o;
}

static const uint32_t v3_v4[] = {3, 4};
static const uint32_t v3_only[] = {3};
static const uint32_t v2_only[] = {2};

static void test_set_unset_v4(void **state)
{
	struct rpcrdma_rpcbind_opts o;
	char uid[16];
	/* struct rpcb {100003, 3, "rdma", "0.0.0.0.78.81", "0"}, as XDR. */
	static const uint8_t want[] = {
	    0x00, 0x01, 0x86, 0xa3, 0x00, 0x00, 0x00, 0x03,             /* prog, vers */
	    0x00, 0x00, 0x00, 0x04, 'r',  'd',  'm',  'a',              /* netid */
	    0x00, 0x00, 0x00, 0x0d, '0',  '.',  '0',  '.',  '0',  '.',  /* addr */
	    '0',  '.',  '7',  '8',  '.',  '8',  '1',  0x00, 0x00, 0x00, /* (pad 3) */
	    0x00, 0x00, 0x00, 0x01, '0',  0x00, 0x00, 0x00,             /* owner */
	};

	(void)state;
	fake_start(RPCRDMA_RPCBIND_PROG, v3_v4, 2);
	o = fake_opts();

	fake.answer = ANSWER_TRUE;
	assert_int_equal(
	    rpcrdma_rpcbind_set(fake.loop, 100003, 3, "rdma", "0.0.0.0.78.81", "0", &o), 0);
	assert_int_equal(fake.calls, 1);
	assert_int_equal(fake.last_vers, RPCRDMA_RPCBIND_VERS4);
	assert_int_equal(fake.last_proc, RPCRDMA_RPCBPROC_SET);
	assert_int_equal(fake.raw_len, sizeof(want));
	assert_memory_equal(fake.raw, want, sizeof(want));
	assert_int_equal(fake.seen.prog, 100003);
	assert_int_equal(fake.seen.vers, 3);
	assert_string_equal(fake.seen.netid, "rdma");
	assert_string_equal(fake.seen.addr, "0.0.0.0.78.81");
	assert_string_equal(fake.seen.owner, "0");

	/* IPv6, owner defaulting to the effective uid. */
	snprintf(uid, sizeof(uid), "%u", (unsigned int)geteuid());
	assert_int_equal(rpcrdma_rpcbind_set(fake.loop, 100003, 4, "rdma6", "::.78.81", NULL, &o),
			 0);
	assert_int_equal(fake.last_vers, 4);
	assert_int_equal(fake.seen.vers, 4);
	assert_string_equal(fake.seen.netid, "rdma6");
	assert_string_equal(fake.seen.addr, "::.78.81");
	assert_string_equal(fake.seen.owner, uid);

	/* Unset of one netid, and of every netid (NULLs sent as ""). */
	assert_int_equal(
	    rpcrdma_rpcbind_unset(fake.loop, 100003, 3, "rdma", "0.0.0.0.78.81", "0", &o), 0);
	assert_int_equal(fake.last_proc, RPCRDMA_RPCBPROC_UNSET);
	assert_int_equal(fake.last_vers, 4);
	assert_int_equal(fake.raw_len, sizeof(want));
	assert_memory_equal(fake.raw, want, sizeof(want));
	assert_int_equal(rpcrdma_rpcbind_unset(fake.loop, 100003, 4, NULL, NULL, NULL, &o), 0);
	assert_int_equal(fake.seen.prog, 100003);
	assert_int_equal(fake.seen.vers, 4);
	assert_string_equal(fake.seen.netid, "");
	assert_string_equal(fake.seen.addr, "");
	assert_string_equal(fake.seen.owner, uid);
	assert_int_equal(fake.calls, 4);

	/* rpcbind answering FALSE. */
	fake.answer = ANSWER_FALSE;
	assert_int_equal(
	    rpcrdma_rpcbind_set(fake.loop, 100003, 3, "rdma", "0.0.0.0.78.81", NULL, &o), -EEXIST);
	assert_int_equal(rpcrdma_rpcbind_unset(fake.loop, 100003, 3, "rdma", NULL, NULL, &o),
			 -ENOENT);
	assert_int_equal(fake.calls, 6);
	fake_stop();
}

static void test_fallback_v3(void **state)
{
	struct rpcrdma_rpcbind_opts o;

	(void)state;
	fake_start(RPCRDMA_RPCBIND_PROG, v3_only, 1);
	o = fake_opts();
	fake.answer = ANSWER_TRUE;
	assert_int_equal(
	    rpcrdma_rpcbind_set(fake.loop, 100003, 3, "rdma", "0.0.0.0.78.81", "0", &o), 0);
	/* Version 4 never reached the procedure: PROG_MISMATCH, then version 3. */
	assert_int_equal(fake.calls, 1);
	assert_int_equal(fake.last_vers, RPCRDMA_RPCBIND_VERS3);
	assert_int_equal(fake.last_proc, RPCRDMA_RPCBPROC_SET);
	assert_int_equal(fake.seen.prog, 100003);
	assert_int_equal(fake.seen.vers, 3);
	assert_string_equal(fake.seen.netid, "rdma");
	assert_string_equal(fake.seen.addr, "0.0.0.0.78.81");
	assert_string_equal(fake.seen.owner, "0");

	assert_int_equal(rpcrdma_rpcbind_unset(fake.loop, 100003, 3, "rdma", "", "0", &o), 0);
	assert_int_equal(fake.calls, 2);
	assert_int_equal(fake.last_vers, RPCRDMA_RPCBIND_VERS3);
	assert_int_equal(fake.last_proc, RPCRDMA_RPCBPROC_UNSET);
	fake_stop();
}

static void test_no_usable_version(void **state)
{
	struct rpcrdma_rpcbind_opts o;

	(void)state;
	/* A portmapper with only version 2: PROG_MISMATCH for 4 and for 3. */
	fake_start(RPCRDMA_RPCBIND_PROG, v2_only, 1);
	o = fake_opts();
	assert_int_equal(rpcrdma_rpcbind_set(fake.loop, 1, 1, "tcp", "127.0.0.1.0.1", NULL, &o),
			 -EPROTONOSUPPORT);
	assert_int_equal(fake.calls, 0);
	fake_stop();

	/* Something else entirely on the port: PROG_UNAVAIL. */
	fake_start(0x20000123u, v3_v4, 2);
	o = fake_opts();
	assert_int_equal(rpcrdma_rpcbind_unset(fake.loop, 1, 1, "tcp", NULL, NULL, &o),
			 -EPROTONOSUPPORT);
	assert_int_equal(fake.calls, 0);
	fake_stop();
}

static void test_malformed_result(void **state)
{
	struct rpcrdma_rpcbind_opts o;

	(void)state;
	fake_start(RPCRDMA_RPCBIND_PROG, v3_v4, 2);
	o = fake_opts();
	fake.answer = ANSWER_NOT_BOOL;
	assert_int_equal(rpcrdma_rpcbind_set(fake.loop, 7, 1, "tcp", "127.0.0.1.0.7", NULL, &o),
			 RPCRDMA_ERR_BAD_RPC);
	fake.answer = ANSWER_EMPTY;
	assert_int_equal(rpcrdma_rpcbind_unset(fake.loop, 7, 1, "tcp", NULL, NULL, &o),
			 RPCRDMA_ERR_BAD_RPC);
	assert_int_equal(fake.calls, 2);
	/* And the next well-formed answer is understood. */
	fake.answer = ANSWER_TRUE;
	assert_int_equal(rpcrdma_rpcbind_set(fake.loop, 7, 1, "tcp", "127.0.0.1.0.7", NULL, &o), 0);
	fake_stop();
}

static void test_bad_arguments(void **state)
{
	struct rpcrdma_rpcbind_opts o;
	char long_str[RPCRDMA_RPCBIND_STRING_MAX + 2];

	(void)state;
	fake_start(RPCRDMA_RPCBIND_PROG, v3_v4, 2);
	o = fake_opts();
	memset(long_str, 'a', sizeof(long_str) - 1);
	long_str[sizeof(long_str) - 1] = '\0';

	assert_int_equal(rpcrdma_rpcbind_set(NULL, 1, 1, "tcp", "1.2.3.4.0.1", NULL, &o), -EINVAL);
	assert_int_equal(rpcrdma_rpcbind_set(fake.loop, 1, 1, NULL, "1.2.3.4.0.1", NULL, &o),
			 -EINVAL);
	assert_int_equal(rpcrdma_rpcbind_set(fake.loop, 1, 1, "", "1.2.3.4.0.1", NULL, &o),
			 -EINVAL);
	assert_int_equal(rpcrdma_rpcbind_set(fake.loop, 1, 1, "tcp", "", NULL, &o), -EINVAL);
	assert_int_equal(rpcrdma_rpcbind_set(fake.loop, 1, 1, "tcp", NULL, NULL, &o), -EINVAL);
	assert_int_equal(rpcrdma_rpcbind_set(fake.loop, 1, 1, long_str, "1.2.3.4.0.1", NULL, &o),
			 -EINVAL);
	assert_int_equal(rpcrdma_rpcbind_unset(fake.loop, 1, 1, "tcp", NULL, long_str, &o),
			 -EINVAL);
	assert_int_equal(rpcrdma_rpcbind_unset(NULL, 1, 1, NULL, NULL, NULL, &o), -EINVAL);
	o.timeout_ms = -1;
	assert_int_equal(rpcrdma_rpcbind_set(fake.loop, 1, 1, "tcp", "1.2.3.4.0.1", NULL, &o),
			 -EINVAL);
	assert_int_equal(fake.calls, 0);

	/* The longest string allowed goes through. */
	o = fake_opts();
	long_str[RPCRDMA_RPCBIND_STRING_MAX] = '\0';
	fake.answer = ANSWER_TRUE;
	assert_int_equal(rpcrdma_rpcbind_set(fake.loop, 1, 1, "tcp", "1.2.3.4.0.1", long_str, &o),
			 0);
	assert_string_equal(fake.seen.owner, long_str);
	fake_stop();
}

/* The server convenience: netid from transport and family, port from the server. */
static void test_server_register(void **state)
{
	struct rpcrdma_rpcbind_opts o;
	struct rpcrdma_server_opts so;
	struct rpcrdma_server *srv = NULL;
	char want[RPCRDMA_RPCBIND_UADDR_SIZE];
	int port;

	(void)state;
	fake_start(RPCRDMA_RPCBIND_PROG, v3_v4, 2);
	o = fake_opts();
	fake.answer = ANSWER_TRUE;
	rpcrdma_server_opts_default(&so);
	so.transport = RPCRDMA_TRANSPORT_TCP;
	assert_int_equal(rpcrdma_server_create(fake.loop, "127.0.0.1", "0", &so, &srv), 0);
	port = rpcrdma_server_port(srv);
	assert_true(port > 0);

	assert_int_equal(rpcrdma_server_rpcbind_register(fake.loop, srv, 0x20000200u, 1,
							 RPCRDMA_TRANSPORT_TCP, AF_INET, &o),
			 0);
	snprintf(want, sizeof(want), "0.0.0.0.%d.%d", port >> 8, port & 0xff);
	assert_int_equal(fake.last_proc, RPCRDMA_RPCBPROC_SET);
	assert_int_equal(fake.seen.prog, 0x20000200u);
	assert_int_equal(fake.seen.vers, 1);
	assert_string_equal(fake.seen.netid, "tcp");
	assert_string_equal(fake.seen.addr, want);

	/* What an RDMA server on IPv6 registers (the family and transport are
	 * the caller's word; the port is the server's). */
	assert_int_equal(rpcrdma_server_rpcbind_register(fake.loop, srv, 0x20000200u, 2,
							 RPCRDMA_TRANSPORT_RDMA, AF_INET6, &o),
			 0);
	snprintf(want, sizeof(want), "::.%d.%d", port >> 8, port & 0xff);
	assert_string_equal(fake.seen.netid, "rdma6");
	assert_string_equal(fake.seen.addr, want);

	assert_int_equal(rpcrdma_server_rpcbind_unregister(fake.loop, srv, 0x20000200u, 2,
							   RPCRDMA_TRANSPORT_RDMA, AF_INET6, &o),
			 0);
	assert_int_equal(fake.last_proc, RPCRDMA_RPCBPROC_UNSET);
	assert_string_equal(fake.seen.netid, "rdma6");
	assert_int_equal(fake.calls, 3);

	assert_int_equal(rpcrdma_server_rpcbind_register(fake.loop, NULL, 1, 1,
							 RPCRDMA_TRANSPORT_TCP, AF_INET, &o),
			 -EINVAL);
	assert_int_equal(rpcrdma_server_rpcbind_register(fake.loop, srv, 1, 1,
							 RPCRDMA_TRANSPORT_TCP, AF_UNIX, &o),
			 -EINVAL);
	assert_int_equal(rpcrdma_server_rpcbind_unregister(fake.loop, srv, 1, 1,
							   (enum rpcrdma_transport)9, AF_INET, &o),
			 -EINVAL);
	assert_int_equal(fake.calls, 3);
	rpcrdma_server_destroy(srv);
	fake_stop();
}

/* A loopback TCP socket bound to a free port; listening or not. */
static int bound_socket(bool listening, char *port, size_t size)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	if (listening)
		assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	snprintf(port, size, "%u", (unsigned int)ntohs(sin.sin_port));
	return fd;
}

static void test_connection_refused(void **state)
{
	struct rpcrdma_loop *loop = NULL;
	struct rpcrdma_rpcbind_opts o = {"127.0.0.1", NULL, 0};
	char port[8];
	uint64_t t0;
	/* Bound but not listening: the port stays ours, and connecting is refused. */
	int fd = bound_socket(false, port, sizeof(port));

	(void)state;
	o.service = port;
	assert_int_equal(rpcrdma_loop_create(&loop), 0);
	t0 = rpcrdma_loop_now(loop);
	assert_int_equal(rpcrdma_rpcbind_set(loop, 100003, 3, "rdma", "0.0.0.0.78.81", NULL, &o),
			 -ECONNREFUSED);
	assert_int_equal(rpcrdma_rpcbind_unset(loop, 100003, 3, "rdma", NULL, NULL, &o),
			 -ECONNREFUSED);
	/* Promptly: well inside the default 2 s time-out. */
	assert_true(rpcrdma_loop_now(loop) - t0 < 1500);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
	close(fd);
}

static void test_silent_rpcbind_times_out(void **state)
{
	struct rpcrdma_loop *loop = NULL;
	struct rpcrdma_rpcbind_opts o = {"127.0.0.1", NULL, 300};
	char port[8];
	uint64_t t0, spent;
	/* Listening, never accepting: the connection completes, no answer comes. */
	int fd = bound_socket(true, port, sizeof(port));

	(void)state;
	o.service = port;
	assert_int_equal(rpcrdma_loop_create(&loop), 0);
	t0 = rpcrdma_loop_now(loop);
	assert_int_equal(rpcrdma_rpcbind_set(loop, 100003, 3, "rdma", "0.0.0.0.78.81", NULL, &o),
			 -ETIMEDOUT);
	spent = rpcrdma_loop_now(loop) - t0;
	assert_true(spent >= 250 && spent < 1500);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
	close(fd);
}

/*
 * A raw peer that answers the first call with a malformed reply carrying
 * the call's own XID (REPLY, then reply_stat 9), and keeps the connection
 * open until the client goes away.
 */
struct garbage_peer {
	int lfd;
	pthread_t thread;
};

static void *garbage_main(void *arg)
{
	struct garbage_peer *g = arg;
	uint8_t in[512];
	/* Record mark (last fragment, 12 bytes), XID, REPLY, reply_stat 9. */
	uint8_t junk[16] = {0x80, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 9};
	int fd = accept(g->lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	/* The call's record mark, then its XID, arrive in the first 8 bytes. */
	if (read(fd, in, sizeof(in)) >= 8) {
		memcpy(junk + 4, in + 4, 4);
		if (write(fd, junk, sizeof(junk)) < 0)
			perror("write");
		while (read(fd, in, sizeof(in)) > 0)
			;
	}
	close(fd);
	return NULL;
}

static void test_garbage_reply(void **state)
{
	struct rpcrdma_loop *loop = NULL;
	struct rpcrdma_rpcbind_opts o = {"127.0.0.1", NULL, 1000};
	struct garbage_peer g;
	char port[8];
	uint64_t t0;
	int rc;

	(void)state;
	g.lfd = bound_socket(true, port, sizeof(port));
	o.service = port;
	assert_int_equal(pthread_create(&g.thread, NULL, garbage_main, &g), 0);
	assert_int_equal(rpcrdma_loop_create(&loop), 0);
	t0 = rpcrdma_loop_now(loop);
	rc = rpcrdma_rpcbind_set(loop, 100003, 3, "rdma", "0.0.0.0.78.81", NULL, &o);
	/* A failure (the client reports RPCRDMA_ERR_BAD_RPC), and a prompt one. */
	assert_true(rc < 0);
	assert_int_not_equal(rc, -EEXIST);
	assert_true(rpcrdma_loop_now(loop) - t0 < 2000);
	shutdown(g.lfd, SHUT_RDWR);
	assert_int_equal(pthread_join(g.thread, NULL), 0);
	close(g.lfd);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_uaddr_ipv4),
	    cmocka_unit_test(test_uaddr_ipv6),
	    cmocka_unit_test(test_uaddr_errors),
	    cmocka_unit_test(test_netid),
	    cmocka_unit_test(test_set_unset_v4),
	    cmocka_unit_test(test_fallback_v3),
	    cmocka_unit_test(test_no_usable_version),
	    cmocka_unit_test(test_malformed_result),
	    cmocka_unit_test(test_bad_arguments),
	    cmocka_unit_test(test_server_register),
	    cmocka_unit_test(test_connection_refused),
	    cmocka_unit_test(test_silent_rpcbind_times_out),
	    cmocka_unit_test(test_garbage_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
