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
#include <unistd.h>

#include <cmocka.h>

#include "rpcrdma/nfs4.h"
#include "rpcrdma/rpc.h"
#include "rpcrdma/mem.h"
#include "rpcrdma/rpcbind.h"
#include "rpcrdma/trace.h"

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
		/* rpcbind's port too: nothing is sent to a wrapped one. */
		{
			struct rpcrdma_rpcbind_opts ro = {"127.0.0.1", bad_ports[i], 0};
			char uaddr[RPCRDMA_RPCBIND_STRING_MAX + 1];

			rc = rpcrdma_rpcbind_getaddr(loop, TEST_PROG, 1, "tcp", uaddr,
						     sizeof(uaddr), &ro);
			if (rc != RPCRDMA_ERR_NO_SERVICE)
				fail_msg("rpcbind service \"%s\": %d, not RPCRDMA_ERR_NO_SERVICE",
					 bad_ports[i], rc);
		}
	}
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/* Port 0 is where no server listens: a client refuses it at creation
 * rather than failing each call with ECONNREFUSED after its retries (a
 * server takes "0" as any free port). */
static void test_client_port_zero(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	struct rpcrdma_client_opts co;

	(void)state;
	rpcrdma_client_opts_default(&co);
	for (size_t t = 0; t < 2; t++) {
		static const char *const zeros[] = {"0", "00", "+0"};

		co.transport = t ? RPCRDMA_TRANSPORT_TCP : RPCRDMA_TRANSPORT_RDMA;
		for (size_t i = 0; i < sizeof(zeros) / sizeof(zeros[0]); i++) {
			struct rpcrdma_client *c = NULL;
			int rc = rpcrdma_client_create(loop, "127.0.0.1", zeros[i], TEST_PROG, 1,
						       &co, &c);

			if (rc != RPCRDMA_ERR_NO_SERVICE) {
				if (!rc)
					rpcrdma_client_destroy(c);
				fail_msg("client service \"%s\": %d, not RPCRDMA_ERR_NO_SERVICE",
					 zeros[i], rc);
			}
		}
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
 * Option values, one at a time over each transport, against what rpc.h
 * says of them: refused at creation with the documented code, or taken
 * (a zero as the default, a huge size or count as "no limit that matters
 * here", clamped where the header says so) and then serving a NULL call
 * on 127.0.0.1.  A server's zero-filled options (not opts_default) are
 * all defaults too.
 */
static int null_proc(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return 0;
}

static const struct rpcrdma_svc_proc null_procs[] = {{null_proc, NULL, 0, NULL, 0, NULL}};

enum sfield {
	S_ZEROED, S_TRANSPORT, S_PROVIDER, S_INLINE_SEND, S_INLINE_RECV, S_CREDITS, S_MIN_VERS,
	S_MAX_VERS, S_VERS_INVERTED, S_DRC_ENTRIES, S_MAX_RECORD, S_WORKERS, S_MAX_CONNS,
	S_IDLE_MS, S_RECORD_MS, S_MAX_CONN_QUEUED, S_DRAIN_MS, S_MAX_READ_BYTES,
	S_MAX_QUEUED_TOTAL, S_MAX_RECV_TOTAL,
};

struct srow {
	const char *what;
	enum sfield f;
	uint64_t v;
	int want_rdma, want_tcp; /* rpcrdma_server_create()'s return */
};

static const struct srow srows[] = {
    {"all zero", S_ZEROED, 0, 0, 0},
    {"transport 7", S_TRANSPORT, 7, -EINVAL, -EINVAL},
    {"provider unknown", S_PROVIDER, 0, RPCRDMA_ERR_NO_PROVIDER, 0},
    {"inline_send 1", S_INLINE_SEND, 1, 0, 0},
    {"inline_send UINT32_MAX", S_INLINE_SEND, UINT32_MAX, 0, 0},
    {"inline_recv 1", S_INLINE_RECV, 1, 0, 0},
    {"inline_recv UINT32_MAX", S_INLINE_RECV, UINT32_MAX, 0, 0},
    {"credits 1", S_CREDITS, 1, 0, 0},
    {"credits UINT32_MAX", S_CREDITS, UINT32_MAX, 0, 0},
    {"min_vers 3", S_MIN_VERS, 3, -EPROTONOSUPPORT, 0},
    {"max_vers 3", S_MAX_VERS, 3, -EPROTONOSUPPORT, 0},
    {"max_vers UINT32_MAX", S_MAX_VERS, UINT32_MAX, -EPROTONOSUPPORT, 0},
    {"min_vers 2 max_vers 1", S_VERS_INVERTED, 0, -EPROTONOSUPPORT, 0},
    {"drc_entries 1 << 24 + 1", S_DRC_ENTRIES, (1u << 24) + 1, -EINVAL, -EINVAL},
    {"drc_entries UINT_MAX", S_DRC_ENTRIES, UINT32_MAX, -EINVAL, -EINVAL},
    {"drc_entries 1", S_DRC_ENTRIES, 1, 0, 0},
    {"drc_entries 1 << 24", S_DRC_ENTRIES, 1u << 24, 0, 0},
    {"max_record UINT32_MAX", S_MAX_RECORD, UINT32_MAX, 0, 0},
    {"max_record 1", S_MAX_RECORD, 1, -EINVAL, -EINVAL},
    {"max_record 16", S_MAX_RECORD, 16, -EINVAL, -EINVAL},
    {"max_record 39", S_MAX_RECORD, RPCRDMA_SERVER_MAX_RECORD_MIN - 1, -EINVAL, -EINVAL},
    {"max_record 40", S_MAX_RECORD, RPCRDMA_SERVER_MAX_RECORD_MIN, 0, 0},
    {"workers 257", S_WORKERS, 257, -EINVAL, -EINVAL},
    {"workers UINT_MAX", S_WORKERS, UINT32_MAX, -EINVAL, -EINVAL},
    {"workers 2", S_WORKERS, 2, 0, 0},
    {"max_conns 1", S_MAX_CONNS, 1, 0, 0},
    {"max_conns UINT_MAX", S_MAX_CONNS, UINT32_MAX, 0, 0},
    {"idle_timeout_ms 1", S_IDLE_MS, 1, 0, 0},
    {"idle_timeout_ms UINT32_MAX", S_IDLE_MS, UINT32_MAX, 0, 0},
    {"record_timeout_ms UINT32_MAX", S_RECORD_MS, UINT32_MAX, 0, 0},
    {"max_conn_queued 1", S_MAX_CONN_QUEUED, 1, 0, 0},
    {"max_conn_queued SIZE_MAX", S_MAX_CONN_QUEUED, SIZE_MAX, 0, 0},
    {"drain_timeout_ms UINT32_MAX", S_DRAIN_MS, UINT32_MAX, 0, 0},
    {"max_read_bytes 1", S_MAX_READ_BYTES, 1, 0, 0},
    {"max_read_bytes SIZE_MAX", S_MAX_READ_BYTES, SIZE_MAX, 0, 0},
    {"max_queued_total 1", S_MAX_QUEUED_TOTAL, 1, 0, 0},
    {"max_queued_total SIZE_MAX", S_MAX_QUEUED_TOTAL, SIZE_MAX, 0, 0},
    {"max_recv_total SIZE_MAX", S_MAX_RECV_TOTAL, SIZE_MAX, 0, 0},
    /* ofi's defaults: 12 receives (4 credits) of 69632 bytes. */
    {"max_recv_total 1", S_MAX_RECV_TOTAL, 1, -EINVAL, 0},
    {"max_recv_total 12 x 69632 - 1", S_MAX_RECV_TOTAL, 12 * 69632 - 1, -EINVAL, 0},
    {"max_recv_total 12 x 69632", S_MAX_RECV_TOTAL, 12 * 69632, 0, 0},
};

static void srow_apply(const struct srow *r, struct rpcrdma_server_opts *o)
{
	switch (r->f) {
	case S_ZEROED: {
		enum rpcrdma_transport t = o->transport;

		memset(o, 0, sizeof(*o));
		o->transport = t;
		break;
	}
	case S_TRANSPORT: o->transport = (enum rpcrdma_transport)r->v; break;
	case S_PROVIDER: o->provider = "no-such-provider"; break;
	case S_INLINE_SEND: o->inline_send = (uint32_t)r->v; break;
	case S_INLINE_RECV: o->inline_recv = (uint32_t)r->v; break;
	case S_CREDITS: o->credits = (uint32_t)r->v; break;
	case S_MIN_VERS: o->min_vers = (uint32_t)r->v; break;
	case S_MAX_VERS: o->max_vers = (uint32_t)r->v; break;
	case S_VERS_INVERTED: o->min_vers = 2; o->max_vers = 1; break;
	case S_DRC_ENTRIES: o->drc_entries = (unsigned int)r->v; break;
	case S_MAX_RECORD: o->max_record = (uint32_t)r->v; break;
	case S_WORKERS: o->workers = (unsigned int)r->v; break;
	case S_MAX_CONNS: o->max_conns = (unsigned int)r->v; break;
	case S_IDLE_MS: o->idle_timeout_ms = (uint32_t)r->v; break;
	case S_RECORD_MS: o->record_timeout_ms = (uint32_t)r->v; break;
	case S_MAX_CONN_QUEUED: o->max_conn_queued = (size_t)r->v; break;
	case S_DRAIN_MS: o->drain_timeout_ms = (uint32_t)r->v; break;
	case S_MAX_READ_BYTES: o->max_read_bytes = (size_t)r->v; break;
	case S_MAX_QUEUED_TOTAL: o->max_queued_total = (size_t)r->v; break;
	case S_MAX_RECV_TOTAL: o->max_recv_total = (size_t)r->v; break;
	}
}

/* A NULL call from a client of the defaults to @srv; returns its status. */
static int null_call(struct rpcrdma_loop *loop, struct rpcrdma_server *srv,
		     const struct rpcrdma_client_opts *co)
{
	struct rpcrdma_call call;
	struct rpcrdma_client *c = NULL;
	char port[16];
	int rc;

	snprintf(port, sizeof(port), "%d", rpcrdma_server_port(srv));
	rc = rpcrdma_client_create(loop, "127.0.0.1", port, TEST_PROG, 1, co, &c);
	if (rc)
		return rc;
	memset(&call, 0, sizeof(call));
	rc = rpcrdma_client_call(c, &call);
	rpcrdma_client_destroy(c);
	return rc;
}

static const enum rpcrdma_transport transports[] = {RPCRDMA_TRANSPORT_RDMA,
						   RPCRDMA_TRANSPORT_TCP};

static void test_server_opts_table(void **state)
{
	struct rpcrdma_loop *loop = new_loop();

	(void)state;
	for (size_t t = 0; t < 2; t++) {
		for (size_t i = 0; i < sizeof(srows) / sizeof(srows[0]); i++) {
			const struct srow *r = &srows[i];
			int want = transports[t] == RPCRDMA_TRANSPORT_RDMA ? r->want_rdma : r->want_tcp;
			struct rpcrdma_server_opts so;
			struct rpcrdma_client_opts co;
			struct rpcrdma_server *srv = NULL;
			int rc;

			rpcrdma_server_opts_default(&so);
			so.transport = transports[t];
			srow_apply(r, &so);
			rc = rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &srv);
			if (rc != want)
				fail_msg("%s server, %s: create %d (%s), want %d", t ? "TCP" : "RDMA",
					 r->what, rc, rpcrdma_strerror(rc), want);
			if (rc)
				continue;
			assert_int_equal(rpcrdma_server_register(srv, TEST_PROG, 1, null_procs, 1), 0);
			rpcrdma_client_opts_default(&co);
			co.transport = transports[t];
			rc = null_call(loop, srv, &co);
			if (rc)
				fail_msg("%s server, %s: NULL call %d (%s)", t ? "TCP" : "RDMA", r->what,
					 rc, rpcrdma_strerror(rc));
			rpcrdma_server_destroy(srv);
		}
	}
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

enum cfield {
	C_ZEROED, C_TRANSPORT, C_PROVIDER, C_INLINE_SEND, C_INLINE_RECV, C_CREDITS, C_MAX_VERS,
	C_TIMEOUT, C_RETRIES, C_CRED_LEN, C_MAX_RECORD, C_NCONNECT,
};

struct crow {
	const char *what;
	enum cfield f;
	int64_t v;
	int want_rdma, want_tcp; /* rpcrdma_client_create()'s return */
};

static const struct crow crows[] = {
    {"all zero", C_ZEROED, 0, 0, 0},
    {"transport 7", C_TRANSPORT, 7, -EINVAL, -EINVAL},
    {"provider unknown", C_PROVIDER, 0, RPCRDMA_ERR_NO_PROVIDER, 0},
    {"inline_send 1", C_INLINE_SEND, 1, 0, 0},
    {"inline_send UINT32_MAX", C_INLINE_SEND, UINT32_MAX, 0, 0},
    {"inline_recv 1", C_INLINE_RECV, 1, 0, 0},
    {"inline_recv UINT32_MAX", C_INLINE_RECV, UINT32_MAX, 0, 0},
    {"credits 1", C_CREDITS, 1, 0, 0},
    {"credits UINT32_MAX", C_CREDITS, UINT32_MAX, 0, 0},
    {"max_vers 2", C_MAX_VERS, 2, 0, 0},
    {"max_vers UINT32_MAX", C_MAX_VERS, UINT32_MAX, 0, 0},
    {"timeout_ms -1", C_TIMEOUT, -1, 0, 0},
    {"timeout_ms -2", C_TIMEOUT, -2, -EINVAL, -EINVAL},
    {"timeout_ms INT_MIN", C_TIMEOUT, INT32_MIN, -EINVAL, -EINVAL},
    {"timeout_ms INT_MAX", C_TIMEOUT, INT32_MAX, 0, 0},
    {"retries UINT_MAX", C_RETRIES, UINT32_MAX, 0, 0},
    {"cred body 401 bytes", C_CRED_LEN, RPCRDMA_AUTH_BODY_MAX + 1, -EINVAL, -EINVAL},
    {"cred body UINT32_MAX bytes", C_CRED_LEN, UINT32_MAX, -EINVAL, -EINVAL},
    {"max_record UINT32_MAX", C_MAX_RECORD, UINT32_MAX, 0, 0},
    {"max_record 1", C_MAX_RECORD, 1, -EINVAL, -EINVAL},
    {"max_record 16", C_MAX_RECORD, 16, -EINVAL, -EINVAL},
    {"max_record 23", C_MAX_RECORD, RPCRDMA_CLIENT_MAX_RECORD_MIN - 1, -EINVAL, -EINVAL},
    {"max_record 24", C_MAX_RECORD, RPCRDMA_CLIENT_MAX_RECORD_MIN, 0, 0},
    {"nconnect 16", C_NCONNECT, RPCRDMA_NCONNECT_MAX, 0, 0},
    {"nconnect 17", C_NCONNECT, RPCRDMA_NCONNECT_MAX + 1, RPCRDMA_ERR_NCONNECT,
     RPCRDMA_ERR_NCONNECT},
    {"nconnect UINT_MAX", C_NCONNECT, UINT32_MAX, RPCRDMA_ERR_NCONNECT, RPCRDMA_ERR_NCONNECT},
};

static void test_client_opts_table(void **state)
{
	static struct rpcrdma_opaque_auth cred;
	struct rpcrdma_loop *loop = new_loop();

	(void)state;
	for (size_t t = 0; t < 2; t++) {
		struct rpcrdma_server_opts so;
		struct rpcrdma_server *srv = NULL;

		rpcrdma_server_opts_default(&so);
		so.transport = transports[t];
		assert_int_equal(rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &srv), 0);
		assert_int_equal(rpcrdma_server_register(srv, TEST_PROG, 1, null_procs, 1), 0);
		for (size_t i = 0; i < sizeof(crows) / sizeof(crows[0]); i++) {
			const struct crow *r = &crows[i];
			int want = transports[t] == RPCRDMA_TRANSPORT_RDMA ? r->want_rdma : r->want_tcp;
			struct rpcrdma_client_opts co;
			int rc;

			rpcrdma_client_opts_default(&co);
			switch (r->f) {
			case C_ZEROED: memset(&co, 0, sizeof(co)); break;
			case C_TRANSPORT: co.transport = (enum rpcrdma_transport)r->v; break;
			case C_PROVIDER: co.provider = "no-such-provider"; break;
			case C_INLINE_SEND: co.inline_send = (uint32_t)r->v; break;
			case C_INLINE_RECV: co.inline_recv = (uint32_t)r->v; break;
			case C_CREDITS: co.credits = (uint32_t)r->v; break;
			case C_MAX_VERS: co.max_vers = (uint32_t)r->v; break;
			case C_TIMEOUT: co.timeout_ms = (int)r->v; break;
			case C_RETRIES: co.retries = (unsigned int)r->v; break;
			case C_CRED_LEN:
				rpcrdma_auth_none(&cred);
				cred.len = (uint32_t)r->v;
				co.cred = &cred;
				break;
			case C_MAX_RECORD: co.max_record = (uint32_t)r->v; break;
			case C_NCONNECT: co.nconnect = (unsigned int)r->v; break;
			}
			if (r->f != C_TRANSPORT)
				co.transport = transports[t];
			rc = null_call(loop, srv, &co);
			if (rc != want)
				fail_msg("%s client, %s: %d (%s), want %d", t ? "TCP" : "RDMA", r->what,
					 rc, rpcrdma_strerror(rc), want);
		}
		rpcrdma_server_destroy(srv);
	}
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/* Procedure 0 answers one word of results: a 28-byte reply. */
static int word_proc(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	*(uint32_t *)res = 7;
	return 0;
}

static int word_enc(struct rpcrdma_xdr_stream *x, void *obj)
{
	return rpcrdma_xdr_encode_u32(x, *(uint32_t *)obj);
}

static int word_dec(struct rpcrdma_xdr_stream *x, void *obj)
{
	return rpcrdma_xdr_decode_u32(x, obj);
}

static const struct rpcrdma_svc_proc word_procs[] = {
    {word_proc, NULL, 0, word_enc, sizeof(uint32_t), NULL}};

/* Resident bytes of this process now (not its peak: earlier tests'). */
static long resident_kib(void)
{
	long size, res;
	FILE *f = fopen("/proc/self/statm", "r");

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld %ld", &size, &res), 2);
	fclose(f);
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

/*
 * The largest duplicate request cache is not allocated at creation (it
 * was: 2.5 GiB of entries, every one touched): a server with it grows the
 * process by less than 64 MiB.
 */
static void test_drc_max_lazy(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	struct rpcrdma_server *srv = NULL;
	struct rpcrdma_server_opts so;
	long before, grown;

	(void)state;
	rpcrdma_server_opts_default(&so);
	so.transport = RPCRDMA_TRANSPORT_TCP;
	so.drc_entries = 1u << 24;
	before = resident_kib();
	assert_int_equal(rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &srv), 0);
	grown = resident_kib() - before;
	rpcrdma_server_destroy(srv);
	if (grown >= 64 * 1024)
		fail_msg("a server of drc_entries 1 << 24 took %ld KiB", grown);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/*
 * A TCP client whose max_record is below its replies loses its connection
 * at each reply (-EMSGSIZE) until its retries run out: the text names the
 * limit, not only "Message too long".  (A limit below every reply is
 * refused at creation: the table above.)
 */
static void test_max_record_named(void **state)
{
	uint32_t word = 0;
	struct rpcrdma_loop *loop = new_loop();
	struct rpcrdma_server_opts so;
	struct rpcrdma_client_opts co;
	struct rpcrdma_server *srv = NULL;
	struct rpcrdma_client *c = NULL;
	struct rpcrdma_call call;
	char port[16];
	const char *why;

	(void)state;
	rpcrdma_server_opts_default(&so);
	so.transport = RPCRDMA_TRANSPORT_TCP;
	assert_int_equal(rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &srv), 0);
	assert_int_equal(rpcrdma_server_register(srv, TEST_PROG, 1, word_procs, 1), 0);
	snprintf(port, sizeof(port), "%d", rpcrdma_server_port(srv));
	rpcrdma_client_opts_default(&co);
	co.transport = RPCRDMA_TRANSPORT_TCP;
	co.max_record = RPCRDMA_CLIENT_MAX_RECORD_MIN; /* the reply is 28 bytes */
	co.retries = 1;
	assert_int_equal(rpcrdma_client_create(loop, "127.0.0.1", port, TEST_PROG, 1, &co, &c), 0);
	memset(&call, 0, sizeof(call));
	call.decode_res = word_dec;
	call.res = &word;
	assert_int_equal(rpcrdma_client_call(c, &call), -EMSGSIZE);
	why = rpcrdma_call_strerror(&call);
	if (!strstr(why, "opts.max_record"))
		fail_msg("does not name max_record: %s", why);
	rpcrdma_client_destroy(c);
	rpcrdma_server_destroy(srv);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/*
 * A refused option names itself: the return stays the documented code,
 * and a bad_arg trace event (category error, RPCRDMA_TRACE=error) says
 * which field, with what value, broke which bound.
 */
static char bad_arg_msg[512];
static uint8_t room_of_test[64];
static unsigned int bad_arg_events;

static void bad_arg_fn(const struct rpcrdma_trace_event *ev, void *arg)
{
	(void)arg;
	if (ev->kind != RPCRDMA_TEV_BAD_ARG)
		return;
	bad_arg_events++;
	snprintf(bad_arg_msg, sizeof(bad_arg_msg), "%s", ev->msg ? ev->msg : "");
}

static void expect_named(const char *what, int rc, int want, const char *needle)
{
	if (rc != want)
		fail_msg("%s: %d, want %d", what, rc, want);
	if (!bad_arg_events || !strstr(bad_arg_msg, needle))
		fail_msg("%s: no bad_arg event naming \"%s\" (%u events, last \"%s\")", what,
			 needle, bad_arg_events, bad_arg_msg);
	bad_arg_events = 0;
	bad_arg_msg[0] = '\0';
}

static void test_refusals_named(void **state)
{
	static struct rpcrdma_opaque_auth cred;
	struct rpcrdma_loop *loop = new_loop();
	struct rpcrdma_server_opts so;
	struct rpcrdma_client_opts co;
	struct rpcrdma_server *srv = NULL;
	struct rpcrdma_client *c = NULL;
	struct rpcrdma_nfs4_compound cpd;
	struct rpcrdma_nfs4_op *op;
	uint8_t room[16];

	(void)state;
	assert_int_equal(rpcrdma_trace_set(RPCRDMA_TRACE_ERROR, bad_arg_fn, NULL), 0);

	rpcrdma_server_opts_default(&so);
	so.transport = RPCRDMA_TRANSPORT_TCP;
	so.workers = 300;
	expect_named("workers 300", rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &srv),
		     -EINVAL, "workers");
	so.workers = 0;
	so.drc_entries = UINT32_MAX;
	expect_named("drc_entries", rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &srv),
		     -EINVAL, "drc_entries");
	so.drc_entries = 0;
	so.max_record = 16;
	expect_named("server max_record 16",
		     rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &srv), -EINVAL,
		     "max_record = 16: below 40");
	so.max_record = 0;
	rpcrdma_server_opts_default(&so);
	so.transport = (enum rpcrdma_transport)7;
	expect_named("server transport 7",
		     rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &srv), -EINVAL,
		     "transport");
	so.transport = RPCRDMA_TRANSPORT_TCP;
	expect_named("server service 99999",
		     rpcrdma_server_create(loop, "127.0.0.1", "99999", &so, &srv),
		     RPCRDMA_ERR_NO_SERVICE, "99999");
	so.transport = RPCRDMA_TRANSPORT_RDMA;
	so.min_vers = 2;
	so.max_vers = 1;
	expect_named("RDMA versions 2..1",
		     rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &srv), -EPROTONOSUPPORT,
		     "2..1");
	so.min_vers = 0;
	so.max_vers = 3;
	expect_named("RDMA max_vers 3", rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &srv),
		     -EPROTONOSUPPORT, "1..3");
	so.max_vers = 0;
	so.max_recv_total = 4096;
	expect_named("RDMA max_recv_total 4096",
		     rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &srv), -EINVAL,
		     "max_recv_total = 4096: below 835584");
	so.max_recv_total = 0;
	rpcrdma_server_opts_default(&so);
	so.transport = RPCRDMA_TRANSPORT_TCP;
	assert_int_equal(rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &srv), 0);
	expect_named("register without procs", rpcrdma_server_register(srv, TEST_PROG, 1, NULL, 3),
		     -EINVAL, "NULL procs");
	rpcrdma_server_destroy(srv);
	{
		struct rpcrdma_mem_region *region;

		expect_named("mem_register len 0", rpcrdma_mem_register(room_of_test, 0, &region),
			     -EINVAL, "len 0");
		expect_named("mem_register wraps",
			     rpcrdma_mem_register((void *)(uintptr_t)(UINTPTR_MAX - 8), 64,
						  &region),
			     -EINVAL, "wraps");
	}

	rpcrdma_client_opts_default(&co);
	co.transport = RPCRDMA_TRANSPORT_TCP;
	co.timeout_ms = -2;
	expect_named("timeout_ms -2",
		     rpcrdma_client_create(loop, "127.0.0.1", "1", TEST_PROG, 1, &co, &c), -EINVAL,
		     "timeout_ms");
	co.timeout_ms = 0;
	co.max_record = 16;
	expect_named("client max_record 16",
		     rpcrdma_client_create(loop, "127.0.0.1", "1", TEST_PROG, 1, &co, &c), -EINVAL,
		     "max_record = 16: below 24");
	co.max_record = 0;
	co.nconnect = 17;
	expect_named("nconnect 17",
		     rpcrdma_client_create(loop, "127.0.0.1", "1", TEST_PROG, 1, &co, &c),
		     RPCRDMA_ERR_NCONNECT, "nconnect");
	co.nconnect = 0;
	rpcrdma_auth_none(&cred);
	cred.len = RPCRDMA_AUTH_BODY_MAX + 1;
	co.cred = &cred;
	expect_named("cred 401 bytes",
		     rpcrdma_client_create(loop, "127.0.0.1", "1", TEST_PROG, 1, &co, &c), -EINVAL,
		     "cred");
	co.cred = NULL;
	co.transport = (enum rpcrdma_transport)7;
	expect_named("client transport 7",
		     rpcrdma_client_create(loop, "127.0.0.1", "1", TEST_PROG, 1, &co, &c), -EINVAL,
		     "transport");
	co.transport = RPCRDMA_TRANSPORT_TCP;
	expect_named("client service 0",
		     rpcrdma_client_create(loop, "127.0.0.1", "0", TEST_PROG, 1, &co, &c),
		     RPCRDMA_ERR_NO_SERVICE, "port 0");

	/* A call's own fields. */
	{
		struct rpcrdma_ddp_buf list[5] = {{NULL, 0}};
		struct rpcrdma_call call;

		assert_int_equal(rpcrdma_client_create(loop, "127.0.0.1", "1", TEST_PROG, 1, &co,
						       &c),
				 0);
		memset(&call, 0, sizeof(call));
		call.timeout_ms = -5;
		expect_named("call timeout_ms -5", rpcrdma_client_call(c, &call), -EINVAL,
			     "timeout_ms");
		memset(&call, 0, sizeof(call));
		call.ddp_len = 100;
		expect_named("call ddp_len without buf", rpcrdma_client_call(c, &call), -EINVAL,
			     "ddp_buf");
		memset(&call, 0, sizeof(call));
		call.ddp_list = list;
		call.ddp_count = 5;
		expect_named("call ddp_count 5", rpcrdma_client_call(c, &call), -EINVAL,
			     "ddp_count");
		call.ddp_count = 2;
		list[1].len = 8;
		expect_named("call ddp_list[1] NULL", rpcrdma_client_call(c, &call), -EINVAL,
			     "ddp_list[1]");
		rpcrdma_client_destroy(c);
	}

	/* rpcbind's time-out has no "none" (nothing is sent). */
	{
		struct rpcrdma_rpcbind_opts ro = {"127.0.0.1", "1", -1};
		char uaddr[RPCRDMA_RPCBIND_STRING_MAX + 1];

		expect_named("rpcbind timeout_ms -1",
			     rpcrdma_rpcbind_getaddr(loop, TEST_PROG, 1, "tcp", uaddr,
						     sizeof(uaddr), &ro),
			     -EINVAL, "timeout_ms = -1");
	}

	/* NFSv4.1 session slots past what it keeps (nothing is sent). */
	{
		struct rpcrdma_client_opts rco;
		struct rpcrdma_nfs41_session_opts sop;
		struct rpcrdma_nfs41_session *sess = NULL;

		rpcrdma_client_opts_default(&rco);
		rco.transport = RPCRDMA_TRANSPORT_RDMA;
		assert_int_equal(rpcrdma_client_create(loop, "127.0.0.1", "1", RPCRDMA_NFS_PROGRAM,
						       RPCRDMA_NFS_V4, &rco, &c),
				 0);
		rpcrdma_nfs41_session_opts_default(&sop);
		sop.fore_slots = RPCRDMA_NFS41_MAX_SLOTS + 1;
		expect_named("fore_slots 65", rpcrdma_nfs41_session_create(c, loop, &sop, &sess),
			     -EINVAL, "fore_slots = 65: above 64");
		rpcrdma_nfs41_session_opts_default(&sop);
		sop.back_slots = RPCRDMA_NFS41_MAX_CB_SLOTS + 1;
		expect_named("back_slots 17", rpcrdma_nfs41_session_create(c, loop, &sop, &sess),
			     -EINVAL, "back_slots = 17: above 16");
		rpcrdma_nfs41_session_opts_default(&sop);
		sop.owner = "";
		expect_named("owner empty", rpcrdma_nfs41_session_create(c, loop, &sop, &sess),
			     -EINVAL, "owner: 0 bytes");
		rpcrdma_client_destroy(c);
	}

	/* A READ whose count was raised past its room (nothing is sent). */
	assert_int_equal(rpcrdma_client_create(loop, "127.0.0.1", "1", RPCRDMA_NFS_PROGRAM,
					       RPCRDMA_NFS_V4, &co, &c),
			 0);
	rpcrdma_nfs4_compound_init(&cpd);
	assert_non_null(rpcrdma_nfs4_putrootfh(&cpd));
	op = rpcrdma_nfs4_read(&cpd, NULL, 0, sizeof(room), room, sizeof(room));
	assert_non_null(op);
	op->arg.read.count = 4096;
	expect_named("READ over room", rpcrdma_nfs4_compound_call(c, &cpd), -EINVAL, "room");
	rpcrdma_client_destroy(c);

	assert_int_equal(rpcrdma_trace_set(0, NULL, NULL), 0);
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
	    cmocka_unit_test(test_client_port_zero),
	    cmocka_unit_test(test_strerror_every_code),
	    cmocka_unit_test(test_server_opts_table),
	    cmocka_unit_test(test_client_opts_table),
	    cmocka_unit_test(test_max_record_named),
	    cmocka_unit_test(test_drc_max_lazy),
	    cmocka_unit_test(test_refusals_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
