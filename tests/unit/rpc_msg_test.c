/*
 * RPC message and credential tests: RFC 5531 headers byte for byte (every
 * reply form, AUTH_NONE and AUTH_SYS calls), truncation at every offset,
 * unknown discriminants, auth and AUTH_SYS bounds, scatter lists split at
 * every offset, encoders refusing every too-small buffer without writing,
 * and a seeded random round trip.  The client's reply decoder
 * (rpcrdma__rpc_decode_reply) is held to the same vectors and truncations.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rpc/rpc_msg_internal.h"
#include "rpcrdma/rpc_msg.h"

/*
 * Vectors, written out from RFC 5531 sections 9 and 8.2 and appendix A.
 * Each is a header, sometimes followed by arguments or results that the
 * decoder must leave in the stream.
 */

/* NFSv3 GETATTR, AUTH_NONE both ways, then a 12-byte argument. */
static const uint8_t call_none[] = {
	0x8f, 0x1a, 0x2b, 0x3c, /* xid */
	0x00, 0x00, 0x00, 0x00, /* msg_type CALL */
	0x00, 0x00, 0x00, 0x02, /* rpcvers 2 */
	0x00, 0x01, 0x86, 0xa3, /* prog 100003 (NFS) */
	0x00, 0x00, 0x00, 0x03, /* vers 3 */
	0x00, 0x00, 0x00, 0x01, /* proc 1 (GETATTR) */
	0x00, 0x00, 0x00, 0x00, /* cred flavor AUTH_NONE */
	0x00, 0x00, 0x00, 0x00, /* cred body length 0 */
	0x00, 0x00, 0x00, 0x00, /* verf flavor AUTH_NONE */
	0x00, 0x00, 0x00, 0x00, /* verf body length 0 */
	0x00, 0x00, 0x00, 0x08, /* args: nfs_fh3 length 8 */
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
};

/* MOUNT MNT with an AUTH_SYS credential, then a 8-byte argument. */
static const uint8_t call_sys[] = {
	0x00, 0x00, 0x04, 0xd2, /* xid 1234 */
	0x00, 0x00, 0x00, 0x00, /* msg_type CALL */
	0x00, 0x00, 0x00, 0x02, /* rpcvers 2 */
	0x00, 0x01, 0x86, 0xa5, /* prog 100005 (MOUNT) */
	0x00, 0x00, 0x00, 0x03, /* vers 3 */
	0x00, 0x00, 0x00, 0x01, /* proc 1 (MNT) */
	0x00, 0x00, 0x00, 0x01, /* cred flavor AUTH_SYS */
	0x00, 0x00, 0x00, 0x28, /* cred body length 40 */
	0x65, 0x4a, 0x3b, 0x2c, /*   stamp */
	0x00, 0x00, 0x00, 0x07, /*   machinename length 7 */
	'n', 'f', 's', 'c',     /*   "nfscli1" */
	'l', 'i', '1', 0x00,    /*   ... and one byte of padding */
	0x00, 0x00, 0x03, 0xe8, /*   uid 1000 */
	0x00, 0x00, 0x00, 0x64, /*   gid 100 */
	0x00, 0x00, 0x00, 0x03, /*   3 gids */
	0x00, 0x00, 0x00, 0x64, /*   100 */
	0x00, 0x00, 0x00, 0x0a, /*   10 */
	0x00, 0x00, 0x03, 0xe8, /*   1000 */
	0x00, 0x00, 0x00, 0x00, /* verf flavor AUTH_NONE */
	0x00, 0x00, 0x00, 0x00, /* verf body length 0 */
	0x00, 0x00, 0x00, 0x04, /* args: dirpath "/exp" */
	'/', 'e', 'x', 'p',
};

/* MSG_ACCEPTED / SUCCESS, then results (nfsstat3 NFS3_OK and more). */
static const uint8_t reply_success[] = {
	0x8f, 0x1a, 0x2b, 0x3c, /* xid */
	0x00, 0x00, 0x00, 0x01, /* msg_type REPLY */
	0x00, 0x00, 0x00, 0x00, /* reply_stat MSG_ACCEPTED */
	0x00, 0x00, 0x00, 0x00, /* verf flavor AUTH_NONE */
	0x00, 0x00, 0x00, 0x00, /* verf body length 0 */
	0x00, 0x00, 0x00, 0x00, /* accept_stat SUCCESS */
	0x00, 0x00, 0x00, 0x00, /* results: NFS3_OK */
	0xca, 0xfe, 0xf0, 0x0d,
};

/* SUCCESS with a 5-byte RPCSEC_GSS verifier: padding inside the header. */
static const uint8_t reply_success_gss[] = {
	0x00, 0x00, 0x00, 0x07, /* xid */
	0x00, 0x00, 0x00, 0x01, /* msg_type REPLY */
	0x00, 0x00, 0x00, 0x00, /* reply_stat MSG_ACCEPTED */
	0x00, 0x00, 0x00, 0x06, /* verf flavor RPCSEC_GSS */
	0x00, 0x00, 0x00, 0x05, /* verf body length 5 */
	0xde, 0xad, 0xbe, 0xef, 0x01, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, /* accept_stat SUCCESS */
	0x00, 0x00, 0x00, 0x2a, /* results */
};

static const uint8_t reply_prog_unavail[] = {
	0x8f, 0x1a, 0x2b, 0x3c, /* xid */
	0x00, 0x00, 0x00, 0x01, /* msg_type REPLY */
	0x00, 0x00, 0x00, 0x00, /* reply_stat MSG_ACCEPTED */
	0x00, 0x00, 0x00, 0x00, /* verf flavor AUTH_NONE */
	0x00, 0x00, 0x00, 0x00, /* verf body length 0 */
	0x00, 0x00, 0x00, 0x01, /* accept_stat PROG_UNAVAIL */
};

static const uint8_t reply_prog_mismatch[] = {
	0x8f, 0x1a, 0x2b, 0x3c, /* xid */
	0x00, 0x00, 0x00, 0x01, /* msg_type REPLY */
	0x00, 0x00, 0x00, 0x00, /* reply_stat MSG_ACCEPTED */
	0x00, 0x00, 0x00, 0x00, /* verf flavor AUTH_NONE */
	0x00, 0x00, 0x00, 0x00, /* verf body length 0 */
	0x00, 0x00, 0x00, 0x02, /* accept_stat PROG_MISMATCH */
	0x00, 0x00, 0x00, 0x02, /* low 2 */
	0x00, 0x00, 0x00, 0x04, /* high 4 */
};

static const uint8_t reply_proc_unavail[] = {
	0x8f, 0x1a, 0x2b, 0x3c, /* xid */
	0x00, 0x00, 0x00, 0x01, /* msg_type REPLY */
	0x00, 0x00, 0x00, 0x00, /* reply_stat MSG_ACCEPTED */
	0x00, 0x00, 0x00, 0x00, /* verf flavor AUTH_NONE */
	0x00, 0x00, 0x00, 0x00, /* verf body length 0 */
	0x00, 0x00, 0x00, 0x03, /* accept_stat PROC_UNAVAIL */
};

static const uint8_t reply_garbage_args[] = {
	0x8f, 0x1a, 0x2b, 0x3c, /* xid */
	0x00, 0x00, 0x00, 0x01, /* msg_type REPLY */
	0x00, 0x00, 0x00, 0x00, /* reply_stat MSG_ACCEPTED */
	0x00, 0x00, 0x00, 0x00, /* verf flavor AUTH_NONE */
	0x00, 0x00, 0x00, 0x00, /* verf body length 0 */
	0x00, 0x00, 0x00, 0x04, /* accept_stat GARBAGE_ARGS */
};

static const uint8_t reply_system_err[] = {
	0x8f, 0x1a, 0x2b, 0x3c, /* xid */
	0x00, 0x00, 0x00, 0x01, /* msg_type REPLY */
	0x00, 0x00, 0x00, 0x00, /* reply_stat MSG_ACCEPTED */
	0x00, 0x00, 0x00, 0x00, /* verf flavor AUTH_NONE */
	0x00, 0x00, 0x00, 0x00, /* verf body length 0 */
	0x00, 0x00, 0x00, 0x05, /* accept_stat SYSTEM_ERR */
};

static const uint8_t reply_rpc_mismatch[] = {
	0x8f, 0x1a, 0x2b, 0x3c, /* xid */
	0x00, 0x00, 0x00, 0x01, /* msg_type REPLY */
	0x00, 0x00, 0x00, 0x01, /* reply_stat MSG_DENIED */
	0x00, 0x00, 0x00, 0x00, /* reject_stat RPC_MISMATCH */
	0x00, 0x00, 0x00, 0x02, /* low 2 */
	0x00, 0x00, 0x00, 0x02, /* high 2 */
};

static const uint8_t reply_auth_error[] = {
	0x8f, 0x1a, 0x2b, 0x3c, /* xid */
	0x00, 0x00, 0x00, 0x01, /* msg_type REPLY */
	0x00, 0x00, 0x00, 0x01, /* reply_stat MSG_DENIED */
	0x00, 0x00, 0x00, 0x01, /* reject_stat AUTH_ERROR */
	0x00, 0x00, 0x00, 0x05, /* auth_stat AUTH_TOOWEAK */
};

struct vector {
	const char *name;
	const uint8_t *bytes;
	size_t len;     /* the whole vector */
	size_t hdr_len; /* where the header ends and decoding stops */
	struct rpcrdma_rpc_msg want;
};

#define BYTES(a) a, sizeof(a)

static const struct vector vectors[] = {
	{"call AUTH_NONE", BYTES(call_none), 40,
	 {.xid = 0x8f1a2b3c,
	  .type = RPCRDMA_RPC_CALL,
	  .u.call = {.rpcvers = 2, .prog = 100003, .vers = 3, .proc = 1}}},
	{"call AUTH_SYS", BYTES(call_sys), 80,
	 {.xid = 1234,
	  .type = RPCRDMA_RPC_CALL,
	  .u.call = {.rpcvers = 2,
		     .prog = 100005,
		     .vers = 3,
		     .proc = 1,
		     .cred = {.flavor = RPCRDMA_AUTH_SYS,
			      .len = 40,
			      .body = {0x65, 0x4a, 0x3b, 0x2c, 0, 0, 0, 7,
				       'n', 'f', 's', 'c', 'l', 'i', '1', 0,
				       0, 0, 0x03, 0xe8, 0, 0, 0, 0x64,
				       0, 0, 0, 3, 0, 0, 0, 0x64,
				       0, 0, 0, 0x0a, 0, 0, 0x03, 0xe8}}}}},
	{"SUCCESS", BYTES(reply_success), 24,
	 {.xid = 0x8f1a2b3c,
	  .type = RPCRDMA_RPC_REPLY,
	  .u.reply = {.stat = RPCRDMA_RPC_MSG_ACCEPTED, .accept_stat = RPCRDMA_RPC_SUCCESS}}},
	{"SUCCESS RPCSEC_GSS verf", BYTES(reply_success_gss), 32,
	 {.xid = 7,
	  .type = RPCRDMA_RPC_REPLY,
	  .u.reply = {.stat = RPCRDMA_RPC_MSG_ACCEPTED,
		      .verf = {.flavor = RPCRDMA_RPCSEC_GSS,
			       .len = 5,
			       .body = {0xde, 0xad, 0xbe, 0xef, 0x01}},
		      .accept_stat = RPCRDMA_RPC_SUCCESS}}},
	{"PROG_UNAVAIL", BYTES(reply_prog_unavail), 24,
	 {.xid = 0x8f1a2b3c,
	  .type = RPCRDMA_RPC_REPLY,
	  .u.reply = {.stat = RPCRDMA_RPC_MSG_ACCEPTED, .accept_stat = RPCRDMA_RPC_PROG_UNAVAIL}}},
	{"PROG_MISMATCH", BYTES(reply_prog_mismatch), 32,
	 {.xid = 0x8f1a2b3c,
	  .type = RPCRDMA_RPC_REPLY,
	  .u.reply = {.stat = RPCRDMA_RPC_MSG_ACCEPTED,
		      .accept_stat = RPCRDMA_RPC_PROG_MISMATCH,
		      .mismatch_low = 2,
		      .mismatch_high = 4}}},
	{"PROC_UNAVAIL", BYTES(reply_proc_unavail), 24,
	 {.xid = 0x8f1a2b3c,
	  .type = RPCRDMA_RPC_REPLY,
	  .u.reply = {.stat = RPCRDMA_RPC_MSG_ACCEPTED, .accept_stat = RPCRDMA_RPC_PROC_UNAVAIL}}},
	{"GARBAGE_ARGS", BYTES(reply_garbage_args), 24,
	 {.xid = 0x8f1a2b3c,
	  .type = RPCRDMA_RPC_REPLY,
	  .u.reply = {.stat = RPCRDMA_RPC_MSG_ACCEPTED, .accept_stat = RPCRDMA_RPC_GARBAGE_ARGS}}},
	{"SYSTEM_ERR", BYTES(reply_system_err), 24,
	 {.xid = 0x8f1a2b3c,
	  .type = RPCRDMA_RPC_REPLY,
	  .u.reply = {.stat = RPCRDMA_RPC_MSG_ACCEPTED, .accept_stat = RPCRDMA_RPC_SYSTEM_ERR}}},
	{"RPC_MISMATCH", BYTES(reply_rpc_mismatch), 24,
	 {.xid = 0x8f1a2b3c,
	  .type = RPCRDMA_RPC_REPLY,
	  .u.reply = {.stat = RPCRDMA_RPC_MSG_DENIED,
		      .reject_stat = RPCRDMA_RPC_MISMATCH,
		      .mismatch_low = 2,
		      .mismatch_high = 2}}},
	{"AUTH_ERROR", BYTES(reply_auth_error), 20,
	 {.xid = 0x8f1a2b3c,
	  .type = RPCRDMA_RPC_REPLY,
	  .u.reply = {.stat = RPCRDMA_RPC_MSG_DENIED,
		      .reject_stat = RPCRDMA_RPC_AUTH_ERROR,
		      .auth_stat = RPCRDMA_AUTH_TOOWEAK}}},
};

#define NVECTORS (sizeof(vectors) / sizeof(vectors[0]))

static void assert_auth_equal(const struct rpcrdma_opaque_auth *a,
			      const struct rpcrdma_opaque_auth *b)
{
	assert_int_equal(a->flavor, b->flavor);
	assert_int_equal(a->len, b->len);
	assert_true(a->len <= RPCRDMA_AUTH_BODY_MAX);
	assert_memory_equal(a->body, b->body, a->len);
}

/*
 * Field by field rather than memcmp: the wanted messages are initialisers,
 * and the bytes of a union beyond its initialised member are unspecified.
 */
static void assert_msg_equal(const struct rpcrdma_rpc_msg *a, const struct rpcrdma_rpc_msg *b)
{
	assert_int_equal(a->xid, b->xid);
	assert_int_equal(a->type, b->type);
	if (a->type == RPCRDMA_RPC_CALL) {
		assert_int_equal(a->u.call.rpcvers, b->u.call.rpcvers);
		assert_int_equal(a->u.call.prog, b->u.call.prog);
		assert_int_equal(a->u.call.vers, b->u.call.vers);
		assert_int_equal(a->u.call.proc, b->u.call.proc);
		assert_auth_equal(&a->u.call.cred, &b->u.call.cred);
		assert_auth_equal(&a->u.call.verf, &b->u.call.verf);
		return;
	}
	assert_int_equal(a->u.reply.stat, b->u.reply.stat);
	assert_auth_equal(&a->u.reply.verf, &b->u.reply.verf);
	assert_int_equal(a->u.reply.accept_stat, b->u.reply.accept_stat);
	assert_int_equal(a->u.reply.mismatch_low, b->u.reply.mismatch_low);
	assert_int_equal(a->u.reply.mismatch_high, b->u.reply.mismatch_high);
	assert_int_equal(a->u.reply.reject_stat, b->u.reply.reject_stat);
	assert_int_equal(a->u.reply.auth_stat, b->u.reply.auth_stat);
}

static int encode_msg(struct rpcrdma_xdr_stream *x, const struct rpcrdma_rpc_msg *m)
{
	if (m->type == RPCRDMA_RPC_CALL)
		return rpcrdma_rpc_encode_call(x, m->xid, &m->u.call);
	return rpcrdma_rpc_encode_reply(x, m->xid, &m->u.reply);
}

/* Decode @len bytes at @buf, expecting failure @want_rc with nothing changed. */
static void assert_decode_fails(const void *buf, size_t len, int want_rc)
{
	struct rpcrdma_xdr_stream x;
	struct rpcrdma_rpc_msg m, before;

	memset(&m, 0xa5, sizeof(m));
	before = m;
	rpcrdma_xdr_init_const(&x, buf, len);
	assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), want_rc);
	assert_int_equal(rpcrdma_xdr_pos(&x), 0);
	assert_memory_equal(&m, &before, sizeof(m));
}

static void test_vectors_decode(void **state)
{
	(void)state;
	for (size_t i = 0; i < NVECTORS; i++) {
		const struct vector *v = &vectors[i];
		struct rpcrdma_xdr_stream x;
		struct rpcrdma_rpc_msg m;

		rpcrdma_xdr_init_const(&x, v->bytes, v->len);
		assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), 0);
		assert_msg_equal(&m, &v->want);
		assert_int_equal(rpcrdma_xdr_pos(&x), v->hdr_len);
	}
}

static void test_vectors_encode(void **state)
{
	(void)state;
	for (size_t i = 0; i < NVECTORS; i++) {
		const struct vector *v = &vectors[i];
		struct rpcrdma_xdr_stream x;
		uint8_t buf[128];

		memset(buf, 0xee, sizeof(buf));
		rpcrdma_xdr_init(&x, buf, sizeof(buf));
		assert_int_equal(encode_msg(&x, &v->want), 0);
		assert_int_equal(rpcrdma_xdr_pos(&x), v->hdr_len);
		assert_memory_equal(buf, v->bytes, v->hdr_len);
		assert_int_equal(buf[v->hdr_len], 0xee);
	}
}

/*
 * The reply decoder gives what rpcrdma_rpc_decode_msg() gives for every
 * reply vector, refuses a call as not a reply, and at every truncation
 * refuses with the same error, consuming and writing nothing.
 */
static void test_reply_decoder(void **state)
{
	(void)state;
	for (size_t i = 0; i < NVECTORS; i++) {
		const struct vector *v = &vectors[i];
		struct rpcrdma_rpc_reply r, before;
		struct rpcrdma_xdr_stream x;
		struct rpcrdma_rpc_msg m;
		bool not_reply = true;

		memset(&r, 0, sizeof(r));
		rpcrdma_xdr_init_const(&x, v->bytes, v->len);
		if (v->want.type == RPCRDMA_RPC_CALL) {
			assert_int_equal(rpcrdma__rpc_decode_reply(&x, &r, &not_reply),
					 RPCRDMA_ERR_BAD_RPC);
			assert_true(not_reply);
			assert_int_equal(rpcrdma_xdr_pos(&x), 0);
			continue;
		}
		assert_int_equal(rpcrdma__rpc_decode_reply(&x, &r, &not_reply), 0);
		assert_false(not_reply);
		assert_memory_equal(&r, &v->want.u.reply, sizeof(r));
		assert_int_equal(rpcrdma_xdr_pos(&x), v->hdr_len);

		for (size_t len = 0; len < v->hdr_len; len++) {
			int want;

			rpcrdma_xdr_init_const(&x, v->bytes, len);
			want = rpcrdma_rpc_decode_msg(&x, &m);
			assert_int_not_equal(want, 0);
			memset(&r, 0xa5, sizeof(r));
			before = r;
			rpcrdma_xdr_init_const(&x, v->bytes, len);
			assert_int_equal(rpcrdma__rpc_decode_reply(&x, &r, &not_reply), want);
			assert_int_equal(rpcrdma_xdr_pos(&x), 0);
			assert_memory_equal(&r, &before, sizeof(r));
		}
	}
}

/* The stream stops exactly where the arguments or results begin. */
static void test_stream_left_at_body(void **state)
{
	struct rpcrdma_xdr_stream x;
	struct rpcrdma_rpc_msg m;
	uint32_t w;

	(void)state;
	rpcrdma_xdr_init_const(&x, call_none, sizeof(call_none));
	assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), 0);
	assert_int_equal(rpcrdma_xdr_decode_u32(&x, &w), 0);
	assert_int_equal(w, 8);

	rpcrdma_xdr_init_const(&x, reply_success, sizeof(reply_success));
	assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), 0);
	assert_int_equal(rpcrdma_xdr_decode_u32(&x, &w), 0);
	assert_int_equal(w, 0);
	assert_int_equal(rpcrdma_xdr_decode_u32(&x, &w), 0);
	assert_int_equal(w, 0xcafef00d);

	rpcrdma_xdr_init_const(&x, reply_success_gss, sizeof(reply_success_gss));
	assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), 0);
	assert_int_equal(rpcrdma_xdr_decode_u32(&x, &w), 0);
	assert_int_equal(w, 42);
}

/* Decoding starts wherever the stream is, and positions count from its start. */
static void test_decode_mid_stream(void **state)
{
	uint8_t buf[8 + sizeof(reply_prog_mismatch)];
	struct rpcrdma_xdr_stream x;
	struct rpcrdma_rpc_msg m;

	(void)state;
	memset(buf, 0x77, 8);
	memcpy(buf + 8, reply_prog_mismatch, sizeof(reply_prog_mismatch));
	rpcrdma_xdr_init_const(&x, buf, sizeof(buf));
	assert_int_equal(rpcrdma_xdr_skip(&x, 8), 0);
	assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), 0);
	assert_int_equal(rpcrdma_xdr_pos(&x), sizeof(buf));
	assert_int_equal(m.u.reply.mismatch_high, 4);

	/* A failure rewinds to where decoding began, not to the start. */
	rpcrdma_xdr_init_const(&x, buf, sizeof(buf) - 1);
	assert_int_equal(rpcrdma_xdr_skip(&x, 8), 0);
	assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), RPCRDMA_ERR_TRUNCATED);
	assert_int_equal(rpcrdma_xdr_pos(&x), 8);
}

static void test_truncation_every_offset(void **state)
{
	(void)state;
	for (size_t i = 0; i < NVECTORS; i++) {
		const struct vector *v = &vectors[i];

		for (size_t n = 0; n < v->hdr_len; n++) {
			/* A heap copy of exactly n bytes, so ASan sees any over-read. */
			uint8_t *copy = malloc(n ? n : 1);

			assert_non_null(copy);
			memcpy(copy, v->bytes, n);
			assert_decode_fails(copy, n, RPCRDMA_ERR_TRUNCATED);
			free(copy);
		}
		/* Cutting into the arguments or results is not the header's business. */
		for (size_t n = v->hdr_len; n <= v->len; n++) {
			struct rpcrdma_xdr_stream x;
			struct rpcrdma_rpc_msg m;

			rpcrdma_xdr_init_const(&x, v->bytes, n);
			assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), 0);
			assert_int_equal(rpcrdma_xdr_pos(&x), v->hdr_len);
		}
	}
}

/* Copy @src (which may be @dst) and overwrite the word at byte @off with @val. */
static void patch_word(uint8_t *dst, const uint8_t *src, size_t len, size_t off, uint32_t val)
{
	memmove(dst, src, len);
	dst[off] = (uint8_t)(val >> 24);
	dst[off + 1] = (uint8_t)(val >> 16);
	dst[off + 2] = (uint8_t)(val >> 8);
	dst[off + 3] = (uint8_t)val;
}

static void test_unknown_discriminants(void **state)
{
	static const uint32_t garbage[] = {2, 6, 0x100, 0x7fffffff, 0x80000000, 0xffffffff};
	uint8_t buf[128];

	(void)state;
	for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
		uint32_t g = garbage[i];

		/* msg_type */
		patch_word(buf, call_none, sizeof(call_none), 4, g);
		assert_decode_fails(buf, sizeof(call_none), RPCRDMA_ERR_BAD_RPC);
		/* reply_stat */
		patch_word(buf, reply_success, sizeof(reply_success), 8, g);
		assert_decode_fails(buf, sizeof(reply_success), RPCRDMA_ERR_BAD_RPC);
		/* accept_stat: 2 is PROG_MISMATCH, not garbage */
		if (g != 2) {
			patch_word(buf, reply_prog_unavail, sizeof(reply_prog_unavail), 20, g);
			assert_decode_fails(buf, sizeof(reply_prog_unavail), RPCRDMA_ERR_BAD_RPC);
		}
		/* reject_stat */
		patch_word(buf, reply_auth_error, sizeof(reply_auth_error), 12, g);
		assert_decode_fails(buf, sizeof(reply_auth_error), RPCRDMA_ERR_BAD_RPC);
	}
}

/* Flavors and auth_stat are open-ended lists: unknown values pass through. */
static void test_open_enums_pass_through(void **state)
{
	static const uint32_t values[] = {15, 18, 0x7fffffff, 0x80000000, 0xffffffff};
	struct rpcrdma_xdr_stream x;
	struct rpcrdma_rpc_msg m;
	uint8_t buf[128], out[128];

	(void)state;
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		patch_word(buf, reply_auth_error, sizeof(reply_auth_error), 16, values[i]);
		rpcrdma_xdr_init_const(&x, buf, sizeof(reply_auth_error));
		assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), 0);
		assert_int_equal(m.u.reply.auth_stat, values[i]);
		assert_null(rpcrdma_rpc_auth_stat_name(m.u.reply.auth_stat));
		rpcrdma_xdr_init(&x, out, sizeof(out));
		assert_int_equal(encode_msg(&x, &m), 0);
		assert_memory_equal(out, buf, sizeof(reply_auth_error));

		/* cred flavor of a call */
		patch_word(buf, call_none, sizeof(call_none), 24, values[i]);
		rpcrdma_xdr_init_const(&x, buf, sizeof(call_none));
		assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), 0);
		assert_int_equal(m.u.call.cred.flavor, values[i]);
		rpcrdma_xdr_init(&x, out, sizeof(out));
		assert_int_equal(encode_msg(&x, &m), 0);
		assert_memory_equal(out, buf, 40);
	}
}

/* A call of another RPC version yields its XID and nothing past rpcvers. */
static void test_other_rpcvers(void **state)
{
	static const uint8_t v3[] = {
		0x00, 0x00, 0x00, 0x63, /* xid */
		0x00, 0x00, 0x00, 0x00, /* CALL */
		0x00, 0x00, 0x00, 0x03, /* rpcvers 3 */
		0xff, 0xff, 0xff,       /* whatever version 3 puts here */
	};
	struct rpcrdma_xdr_stream x;
	struct rpcrdma_rpc_msg m;

	(void)state;
	for (size_t n = 12; n <= sizeof(v3); n++) {
		memset(&m, 0xa5, sizeof(m));
		rpcrdma_xdr_init_const(&x, v3, n);
		assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), 0);
		assert_int_equal(rpcrdma_xdr_pos(&x), 12);
		assert_int_equal(m.xid, 0x63);
		assert_int_equal(m.type, RPCRDMA_RPC_CALL);
		assert_int_equal(m.u.call.rpcvers, 3);
		assert_int_equal(m.u.call.prog, 0);
		assert_int_equal(m.u.call.vers, 0);
		assert_int_equal(m.u.call.proc, 0);
		assert_int_equal(m.u.call.cred.flavor, RPCRDMA_AUTH_NONE);
		assert_int_equal(m.u.call.cred.len, 0);
		assert_int_equal(m.u.call.verf.flavor, RPCRDMA_AUTH_NONE);
		assert_int_equal(m.u.call.verf.len, 0);
	}
	for (size_t n = 0; n < 12; n++)
		assert_decode_fails(v3, n, RPCRDMA_ERR_TRUNCATED);

	/* rpcvers 0 and 0xffffffff are other versions too. */
	uint8_t buf[sizeof(call_none)];

	patch_word(buf, call_none, sizeof(call_none), 8, 0xffffffff);
	rpcrdma_xdr_init_const(&x, buf, sizeof(buf));
	assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), 0);
	assert_int_equal(m.u.call.rpcvers, 0xffffffff);
	assert_int_equal(rpcrdma_xdr_pos(&x), 12);
}

/*
 * Build a call whose cred (which == 0) or verf (which == 1) body is @len
 * bytes long, and return the message length.  Written with the XDR
 * encoders: the point is the length word, not the layout around it.
 */
static size_t build_call_auth_len(uint8_t *buf, size_t size, int which, uint32_t len)
{
	struct rpcrdma_xdr_stream x;
	size_t body = len <= RPCRDMA_AUTH_BODY_MAX + 4 ? rpcrdma_xdr_align(len) : 0;

	rpcrdma_xdr_init(&x, buf, size);
	assert_int_equal(rpcrdma_xdr_encode_u32(&x, 9), 0);
	assert_int_equal(rpcrdma_xdr_encode_enum(&x, RPCRDMA_RPC_CALL), 0);
	assert_int_equal(rpcrdma_xdr_encode_u32(&x, 2), 0);
	assert_int_equal(rpcrdma_xdr_encode_u32(&x, 100003), 0);
	assert_int_equal(rpcrdma_xdr_encode_u32(&x, 3), 0);
	assert_int_equal(rpcrdma_xdr_encode_u32(&x, 0), 0);
	for (int i = 0; i < 2; i++) {
		uint32_t l = i == which ? len : 0;

		assert_int_equal(rpcrdma_xdr_encode_enum(&x, 390004), 0);
		assert_int_equal(rpcrdma_xdr_encode_u32(&x, l), 0);
		for (size_t k = 0; i == which && k < body; k += 4)
			assert_int_equal(rpcrdma_xdr_encode_u32(&x, 0x5a5a5a5a), 0);
	}
	return rpcrdma_xdr_pos(&x);
}

static void test_auth_body_bound(void **state)
{
	uint8_t buf[1024];
	struct rpcrdma_xdr_stream x;
	struct rpcrdma_rpc_msg m;
	size_t n;

	(void)state;
	for (int which = 0; which < 2; which++) {
		n = build_call_auth_len(buf, sizeof(buf), which, 400);
		assert_int_equal(n, 24 + 8 + 400 + 8);
		rpcrdma_xdr_init_const(&x, buf, n);
		assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), 0);
		assert_int_equal(rpcrdma_xdr_pos(&x), n);
		assert_int_equal(which ? m.u.call.verf.len : m.u.call.cred.len, 400);

		n = build_call_auth_len(buf, sizeof(buf), which, 401);
		assert_int_equal(n, 24 + 8 + 404 + 8);
		assert_decode_fails(buf, n, RPCRDMA_ERR_TOO_LONG);
		/* The bound is checked before the body's presence. */
		assert_decode_fails(buf, 24 + 8 + (which ? 8 : 0), RPCRDMA_ERR_TOO_LONG);

		n = build_call_auth_len(buf, sizeof(buf), which, 0xffffffff);
		assert_decode_fails(buf, n, RPCRDMA_ERR_TOO_LONG);
		n = build_call_auth_len(buf, sizeof(buf), which, 0x80000000);
		assert_decode_fails(buf, n, RPCRDMA_ERR_TOO_LONG);
	}

	/* The reply verifier has the same bound. */
	patch_word(buf, reply_success_gss, sizeof(reply_success_gss), 16, 401);
	assert_decode_fails(buf, sizeof(reply_success_gss), RPCRDMA_ERR_TOO_LONG);
	/* A length that overruns the message is a truncation. */
	patch_word(buf, reply_success_gss, sizeof(reply_success_gss), 16, 400);
	assert_decode_fails(buf, sizeof(reply_success_gss), RPCRDMA_ERR_TRUNCATED);
}

/* Every way of splitting a vector over two or three elements decodes alike. */
static void test_scatter_every_split(void **state)
{
	(void)state;
	for (size_t i = 0; i < NVECTORS; i++) {
		const struct vector *v = &vectors[i];
		uint8_t *copy = malloc(v->len);
		struct rpcrdma_xdr_stream x;
		struct rpcrdma_rpc_msg flat, m;

		assert_non_null(copy);
		memcpy(copy, v->bytes, v->len);
		rpcrdma_xdr_init_const(&x, copy, v->len);
		assert_int_equal(rpcrdma_rpc_decode_msg(&x, &flat), 0);

		for (size_t a = 0; a <= v->len; a++) {
			for (size_t b = a; b <= v->len; b++) {
				struct iovec iov[3] = {
					{copy, a},
					{copy + a, b - a},
					{copy + b, v->len - b},
				};

				assert_int_equal(rpcrdma_xdr_init_iov(&x, iov, 3), 0);
				assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), 0);
				assert_memory_equal(&m, &flat, sizeof(m));
				assert_int_equal(rpcrdma_xdr_pos(&x), v->hdr_len);
			}
		}

		/* One byte per element, and a truncated list of them. */
		struct iovec *bytes = calloc(v->len, sizeof(*bytes));

		assert_non_null(bytes);
		for (size_t k = 0; k < v->len; k++) {
			bytes[k].iov_base = copy + k;
			bytes[k].iov_len = 1;
		}
		assert_int_equal(rpcrdma_xdr_init_iov(&x, bytes, (unsigned int)v->len), 0);
		assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), 0);
		assert_memory_equal(&m, &flat, sizeof(m));
		assert_int_equal(rpcrdma_xdr_init_iov(&x, bytes, (unsigned int)v->hdr_len - 1), 0);
		assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), RPCRDMA_ERR_TRUNCATED);
		assert_int_equal(rpcrdma_xdr_pos(&x), 0);
		free(bytes);
		free(copy);
	}
}

/* Too small by any amount: NOSPACE, and not one byte written. */
static void test_encode_nospace_every_capacity(void **state)
{
	(void)state;
	for (size_t i = 0; i < NVECTORS; i++) {
		const struct vector *v = &vectors[i];
		uint8_t buf[128];
		struct rpcrdma_xdr_stream x;

		for (size_t cap = 0; cap < v->hdr_len; cap++) {
			memset(buf, 0xee, sizeof(buf));
			rpcrdma_xdr_init(&x, buf, cap);
			assert_int_equal(encode_msg(&x, &v->want), RPCRDMA_ERR_NOSPACE);
			assert_int_equal(rpcrdma_xdr_pos(&x), 0);
			for (size_t k = 0; k < sizeof(buf); k++)
				assert_int_equal(buf[k], 0xee);
		}
		rpcrdma_xdr_init(&x, buf, v->hdr_len);
		assert_int_equal(encode_msg(&x, &v->want), 0);
		assert_int_equal(rpcrdma_xdr_remaining(&x), 0);
		assert_memory_equal(buf, v->bytes, v->hdr_len);

		/* Encoding over a split list lays down the same bytes. */
		for (size_t a = 0; a <= v->hdr_len; a++) {
			struct iovec iov[2] = {{buf, a}, {buf + a + 4, v->hdr_len - a}};
			uint8_t joined[128];

			memset(buf, 0xee, sizeof(buf));
			assert_int_equal(rpcrdma_xdr_init_iov(&x, iov, 2), 0);
			assert_int_equal(encode_msg(&x, &v->want), 0);
			memcpy(joined, buf, a);
			memcpy(joined + a, buf + a + 4, v->hdr_len - a);
			assert_memory_equal(joined, v->bytes, v->hdr_len);
			/* The gap between the elements stays untouched. */
			for (size_t k = a; k < a + 4; k++)
				assert_int_equal(buf[k], 0xee);
		}
	}
}

static void test_encode_rejects_invalid(void **state)
{
	struct rpcrdma_rpc_call call;
	struct rpcrdma_rpc_reply reply;
	struct rpcrdma_xdr_stream x;
	uint8_t buf[1024];

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	rpcrdma_xdr_init(&x, buf, sizeof(buf));

	memset(&call, 0, sizeof(call));
	call.cred.len = 401;
	assert_int_equal(rpcrdma_rpc_encode_call(&x, 1, &call), -EINVAL);
	call.cred.len = 0;
	call.verf.len = 0xffffffff;
	assert_int_equal(rpcrdma_rpc_encode_call(&x, 1, &call), -EINVAL);
	call.verf.len = 0;
	assert_int_equal(rpcrdma_rpc_encode_call(NULL, 1, &call), -EINVAL);
	assert_int_equal(rpcrdma_rpc_encode_call(&x, 1, NULL), -EINVAL);

	memset(&reply, 0, sizeof(reply));
	reply.stat = 2;
	assert_int_equal(rpcrdma_rpc_encode_reply(&x, 1, &reply), -EINVAL);
	reply.stat = RPCRDMA_RPC_MSG_ACCEPTED;
	reply.accept_stat = 6;
	assert_int_equal(rpcrdma_rpc_encode_reply(&x, 1, &reply), -EINVAL);
	reply.accept_stat = RPCRDMA_RPC_SUCCESS;
	reply.verf.len = 401;
	assert_int_equal(rpcrdma_rpc_encode_reply(&x, 1, &reply), -EINVAL);
	reply.stat = RPCRDMA_RPC_MSG_DENIED;
	reply.reject_stat = 2;
	assert_int_equal(rpcrdma_rpc_encode_reply(&x, 1, &reply), -EINVAL);
	/* A denial carries no verifier, so its length does not matter. */
	reply.reject_stat = RPCRDMA_RPC_AUTH_ERROR;
	assert_int_equal(rpcrdma_rpc_encode_reply(NULL, 1, &reply), -EINVAL);
	assert_int_equal(rpcrdma_rpc_encode_reply(&x, 1, NULL), -EINVAL);
	assert_int_equal(rpcrdma_xdr_pos(&x), 0);
	assert_int_equal(buf[0], 0xee);
	assert_int_equal(rpcrdma_rpc_encode_reply(&x, 1, &reply), 0);
	assert_int_equal(rpcrdma_xdr_pos(&x), 20);

	/* A full-size body is fine, and rpcvers is always written as 2. */
	memset(&call, 0, sizeof(call));
	call.rpcvers = 7;
	call.cred.len = 400;
	call.verf.len = 400;
	rpcrdma_xdr_init(&x, buf, sizeof(buf));
	assert_int_equal(rpcrdma_rpc_encode_call(&x, 1, &call), 0);
	assert_int_equal(rpcrdma_xdr_pos(&x), 24 + 2 * 408);
	assert_int_equal(buf[11], 2);

	struct rpcrdma_rpc_msg m;

	rpcrdma_xdr_init_const(&x, buf, 24 + 2 * 408);
	assert_int_equal(rpcrdma_rpc_decode_msg(NULL, &m), -EINVAL);
	assert_int_equal(rpcrdma_rpc_decode_msg(&x, NULL), -EINVAL);
	assert_int_equal(rpcrdma_xdr_pos(&x), 0);
}

static const struct rpcrdma_auth_sys sys_vector = {
	.stamp = 0x654a3b2c,
	.machinename = "nfscli1",
	.uid = 1000,
	.gid = 100,
	.ngids = 3,
	.gids = {100, 10, 1000},
};

static void test_auth_sys_vector(void **state)
{
	struct rpcrdma_xdr_stream x;
	struct rpcrdma_rpc_msg m;
	struct rpcrdma_auth_sys sys;
	struct rpcrdma_opaque_auth auth;

	(void)state;
	rpcrdma_xdr_init_const(&x, call_sys, sizeof(call_sys));
	assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), 0);
	assert_int_equal(rpcrdma_auth_sys_decode(&m.u.call.cred, &sys), 0);
	assert_int_equal(sys.stamp, sys_vector.stamp);
	assert_string_equal(sys.machinename, "nfscli1");
	assert_int_equal(sys.uid, 1000);
	assert_int_equal(sys.gid, 100);
	assert_int_equal(sys.ngids, 3);
	assert_memory_equal(sys.gids, sys_vector.gids, 3 * sizeof(uint32_t));

	memset(&auth, 0xa5, sizeof(auth));
	assert_int_equal(rpcrdma_auth_sys_encode(&sys_vector, &auth), 0);
	assert_int_equal(auth.flavor, RPCRDMA_AUTH_SYS);
	assert_int_equal(auth.len, 40);
	assert_memory_equal(auth.body, call_sys + 32, 40);
}

/* Decode @len bytes at @body as an AUTH_SYS body, expecting @want_rc. */
static void assert_sys_decode(const void *body, size_t len, int want_rc)
{
	struct rpcrdma_opaque_auth auth;
	struct rpcrdma_auth_sys sys, before;

	assert_true(len <= RPCRDMA_AUTH_BODY_MAX);
	memset(&auth, 0, sizeof(auth));
	auth.flavor = RPCRDMA_AUTH_SYS;
	auth.len = (uint32_t)len;
	memcpy(auth.body, body, len);
	memset(&sys, 0xa5, sizeof(sys));
	before = sys;
	assert_int_equal(rpcrdma_auth_sys_decode(&auth, &sys), want_rc);
	if (want_rc)
		assert_memory_equal(&sys, &before, sizeof(sys));
}

/* An AUTH_SYS body with a name of @namelen bytes of @fill and @ngids gids. */
static size_t build_sys_body(uint8_t *buf, size_t size, uint32_t namelen, char fill,
			     uint32_t ngids, size_t trailing)
{
	struct rpcrdma_xdr_stream x;
	char name[300];

	assert_true(namelen <= sizeof(name));
	memset(name, fill, namelen);
	rpcrdma_xdr_init(&x, buf, size);
	assert_int_equal(rpcrdma_xdr_encode_u32(&x, 1), 0);
	assert_int_equal(rpcrdma_xdr_encode_string(&x, name, namelen), 0);
	assert_int_equal(rpcrdma_xdr_encode_u32(&x, 0), 0);
	assert_int_equal(rpcrdma_xdr_encode_u32(&x, 0), 0);
	assert_int_equal(rpcrdma_xdr_encode_array_len(&x, ngids), 0);
	for (uint32_t i = 0; i < ngids; i++)
		assert_int_equal(rpcrdma_xdr_encode_u32(&x, i), 0);
	if (trailing)
		assert_int_equal(rpcrdma_xdr_encode_fixed_opaque(&x, "\0\0\0", trailing), 0);
	return rpcrdma_xdr_pos(&x);
}

static void test_auth_sys_malformed(void **state)
{
	uint8_t body[1024];
	struct rpcrdma_opaque_auth auth;
	struct rpcrdma_auth_sys sys;
	size_t n;

	(void)state;
	/* Too short, at every length. */
	for (size_t len = 0; len < 40; len++)
		assert_sys_decode(call_sys + 32, len, RPCRDMA_ERR_TRUNCATED);
	assert_sys_decode(call_sys + 32, 40, 0);

	/* Machine name: 255 bytes is the limit. */
	n = build_sys_body(body, sizeof(body), 255, 'm', 0, 0);
	assert_int_equal(n, 4 + 4 + 256 + 12);
	assert_sys_decode(body, n, 0);
	n = build_sys_body(body, sizeof(body), 256, 'm', 0, 0);
	assert_sys_decode(body, n, RPCRDMA_ERR_TOO_LONG);
	patch_word(body, body, n, 4, 0xffffffff);
	assert_sys_decode(body, n, RPCRDMA_ERR_TOO_LONG);

	/* A NUL anywhere in the name, including its last byte. */
	n = build_sys_body(body, sizeof(body), 8, 'm', 0, 0);
	for (size_t k = 0; k < 8; k++) {
		uint8_t bad[64];

		memcpy(bad, body, n);
		bad[8 + k] = 0;
		assert_sys_decode(bad, n, RPCRDMA_ERR_BAD_VALUE);
	}

	/* Gids: 16 is the limit; a count the body cannot back is short. */
	n = build_sys_body(body, sizeof(body), 3, 'h', 16, 0);
	assert_sys_decode(body, n, 0);
	n = build_sys_body(body, sizeof(body), 3, 'h', 17, 0);
	assert_sys_decode(body, n, RPCRDMA_ERR_TOO_LONG);
	n = build_sys_body(body, sizeof(body), 3, 'h', 2, 0);
	patch_word(body, body, n, 20, 3);
	assert_sys_decode(body, n, RPCRDMA_ERR_TRUNCATED);
	patch_word(body, body, n, 20, 0xffffffff);
	assert_sys_decode(body, n, RPCRDMA_ERR_TOO_LONG);

	/* Bytes after the last gid: a whole word, or a ragged tail. */
	n = build_sys_body(body, sizeof(body), 3, 'h', 2, 4);
	assert_sys_decode(body, n, RPCRDMA_ERR_BAD_RPC);
	for (size_t extra = 1; extra < 4; extra++)
		assert_sys_decode(body, n - 4 + extra, RPCRDMA_ERR_BAD_RPC);

	/* Not AUTH_SYS, or a body length no decode could have produced. */
	assert_int_equal(rpcrdma_auth_sys_encode(&sys_vector, &auth), 0);
	auth.flavor = RPCRDMA_AUTH_NONE;
	assert_int_equal(rpcrdma_auth_sys_decode(&auth, &sys), -EINVAL);
	auth.flavor = RPCRDMA_AUTH_SYS;
	auth.len = 401;
	assert_int_equal(rpcrdma_auth_sys_decode(&auth, &sys), -EINVAL);
	assert_int_equal(rpcrdma_auth_sys_decode(NULL, &sys), -EINVAL);
	assert_int_equal(rpcrdma_auth_sys_decode(&auth, NULL), -EINVAL);
}

static void test_auth_sys_encode_limits(void **state)
{
	struct rpcrdma_auth_sys sys, back;
	struct rpcrdma_opaque_auth auth, before;

	(void)state;
	memset(&auth, 0xa5, sizeof(auth));
	before = auth;

	/* No terminator within machinename[]: a name of 256 bytes or more. */
	memset(&sys, 0, sizeof(sys));
	memset(sys.machinename, 'x', sizeof(sys.machinename));
	assert_int_equal(rpcrdma_auth_sys_encode(&sys, &auth), -EINVAL);
	assert_memory_equal(&auth, &before, sizeof(auth));

	memset(&sys, 0, sizeof(sys));
	sys.ngids = 17;
	assert_int_equal(rpcrdma_auth_sys_encode(&sys, &auth), -EINVAL);
	sys.ngids = 0xffffffff;
	assert_int_equal(rpcrdma_auth_sys_encode(&sys, &auth), -EINVAL);
	assert_memory_equal(&auth, &before, sizeof(auth));
	assert_int_equal(rpcrdma_auth_sys_encode(NULL, &auth), -EINVAL);
	assert_int_equal(rpcrdma_auth_sys_encode(&sys, NULL), -EINVAL);

	/* The largest credential: 340 bytes, well inside 400. */
	memset(&sys, 0, sizeof(sys));
	memset(sys.machinename, 'x', RPCRDMA_AUTH_SYS_MACHINENAME_MAX);
	sys.ngids = RPCRDMA_AUTH_SYS_NGIDS_MAX;
	for (uint32_t i = 0; i < sys.ngids; i++)
		sys.gids[i] = 0xffffff00 + i;
	assert_int_equal(rpcrdma_auth_sys_encode(&sys, &auth), 0);
	assert_int_equal(auth.len, 340);
	assert_int_equal(rpcrdma_auth_sys_decode(&auth, &back), 0);
	assert_memory_equal(&back, &sys, sizeof(sys));

	/* The smallest: empty name, no gids. */
	memset(&sys, 0, sizeof(sys));
	assert_int_equal(rpcrdma_auth_sys_encode(&sys, &auth), 0);
	assert_int_equal(auth.len, 20);
	assert_int_equal(rpcrdma_auth_sys_decode(&auth, &back), 0);
	assert_memory_equal(&back, &sys, sizeof(sys));
}

static void test_auth_none(void **state)
{
	struct rpcrdma_opaque_auth auth;

	(void)state;
	memset(&auth, 0xa5, sizeof(auth));
	rpcrdma_auth_none(&auth);
	assert_int_equal(auth.flavor, RPCRDMA_AUTH_NONE);
	assert_int_equal(auth.len, 0);
	rpcrdma_auth_none(NULL);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(rpcrdma_rpc_reply_stat_name(0), "MSG_ACCEPTED");
	assert_string_equal(rpcrdma_rpc_reply_stat_name(1), "MSG_DENIED");
	assert_null(rpcrdma_rpc_reply_stat_name(2));

	static const char *const accept[] = {
		"SUCCESS",      "PROG_UNAVAIL", "PROG_MISMATCH",
		"PROC_UNAVAIL", "GARBAGE_ARGS", "SYSTEM_ERR",
	};
	for (uint32_t i = 0; i < 6; i++)
		assert_string_equal(rpcrdma_rpc_accept_stat_name(i), accept[i]);
	assert_null(rpcrdma_rpc_accept_stat_name(6));
	assert_null(rpcrdma_rpc_accept_stat_name(0xffffffff));

	assert_string_equal(rpcrdma_rpc_reject_stat_name(0), "RPC_MISMATCH");
	assert_string_equal(rpcrdma_rpc_reject_stat_name(1), "AUTH_ERROR");
	assert_null(rpcrdma_rpc_reject_stat_name(2));

	static const char *const auth[] = {
		"AUTH_OK",          "AUTH_BADCRED",      "AUTH_REJECTEDCRED",
		"AUTH_BADVERF",     "AUTH_REJECTEDVERF", "AUTH_TOOWEAK",
		"AUTH_INVALIDRESP", "AUTH_FAILED",       "AUTH_KERB_GENERIC",
		"AUTH_TIMEEXPIRE",  "AUTH_TKT_FILE",     "AUTH_DECODE",
		"AUTH_NET_ADDR",    "RPCSEC_GSS_CREDPROBLEM",
		"RPCSEC_GSS_CTXPROBLEM",
	};
	for (uint32_t i = 0; i < 15; i++)
		assert_string_equal(rpcrdma_rpc_auth_stat_name(i), auth[i]);
	assert_null(rpcrdma_rpc_auth_stat_name(15));
	assert_null(rpcrdma_rpc_auth_stat_name(0xffffffff));
}

/* splitmix64: small, seedable, and the same sequence everywhere. */
static uint64_t rng_state;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rng32(void)
{
	return (uint32_t)(rng() >> 32);
}

static uint32_t rng_below(uint32_t n)
{
	return (uint32_t)(rng() % n);
}

static void random_sys(struct rpcrdma_auth_sys *sys)
{
	uint32_t namelen = rng_below(RPCRDMA_AUTH_SYS_MACHINENAME_MAX + 1);

	memset(sys, 0, sizeof(*sys));
	sys->stamp = rng32();
	for (uint32_t i = 0; i < namelen; i++)
		sys->machinename[i] = (char)(1 + rng_below(255));
	sys->uid = rng32();
	sys->gid = rng32();
	sys->ngids = rng_below(RPCRDMA_AUTH_SYS_NGIDS_MAX + 1);
	for (uint32_t i = 0; i < sys->ngids; i++)
		sys->gids[i] = rng32();
}

/* A random credential; *@is_sys tells whether it came from @sys. */
static void random_auth(struct rpcrdma_opaque_auth *auth, struct rpcrdma_auth_sys *sys,
			bool *is_sys)
{
	*is_sys = false;
	switch (rng_below(4)) {
	case 0:
		rpcrdma_auth_none(auth);
		return;
	case 1:
		random_sys(sys);
		assert_int_equal(rpcrdma_auth_sys_encode(sys, auth), 0);
		*is_sys = true;
		return;
	}
	memset(auth, 0, sizeof(*auth));
	auth->flavor = rng_below(2) ? RPCRDMA_RPCSEC_GSS : rng32();
	/* Favour the edges of the bound. */
	auth->len = rng_below(4) ? rng_below(RPCRDMA_AUTH_BODY_MAX + 1)
				 : RPCRDMA_AUTH_BODY_MAX - rng_below(4);
	for (uint32_t i = 0; i < auth->len; i++)
		auth->body[i] = (uint8_t)rng();
}

/* The header size, worked out from RFC 5531 apart from the encoder's own sums. */
static size_t expected_size(const struct rpcrdma_rpc_msg *m)
{
	const struct rpcrdma_rpc_reply *r = &m->u.reply;

	if (m->type == RPCRDMA_RPC_CALL)
		return 24 + 8 + (m->u.call.cred.len + 3) / 4 * 4 + 8 +
		       (m->u.call.verf.len + 3) / 4 * 4;
	if (r->stat == RPCRDMA_RPC_MSG_DENIED)
		return r->reject_stat == RPCRDMA_RPC_MISMATCH ? 24 : 20;
	return 12 + 8 + (r->verf.len + 3) / 4 * 4 + 4 +
	       (r->accept_stat == RPCRDMA_RPC_PROG_MISMATCH ? 8 : 0);
}

static void test_random_round_trip(void **state)
{
	static uint8_t buf[2048];
	struct rpcrdma_auth_sys sys, sys_back;
	struct rpcrdma_rpc_msg m, back, split;
	struct rpcrdma_xdr_stream x;
	bool is_sys;

	(void)state;
	rng_state = 0x5eedc0de;
	for (int iter = 0; iter < 5000; iter++) {
		memset(&m, 0, sizeof(m));
		is_sys = false;
		m.xid = rng32();
		if (rng_below(2) == 0) {
			struct rpcrdma_auth_sys unused;
			bool unused_sys;

			m.type = RPCRDMA_RPC_CALL;
			m.u.call.rpcvers = RPCRDMA_RPC_VERSION;
			m.u.call.prog = rng32();
			m.u.call.vers = rng32();
			m.u.call.proc = rng32();
			random_auth(&m.u.call.cred, &sys, &is_sys);
			random_auth(&m.u.call.verf, &unused, &unused_sys);
		} else {
			struct rpcrdma_rpc_reply *r = &m.u.reply;

			m.type = RPCRDMA_RPC_REPLY;
			r->stat = rng_below(2);
			if (r->stat == RPCRDMA_RPC_MSG_ACCEPTED) {
				random_auth(&r->verf, &sys, &is_sys);
				r->accept_stat = rng_below(6);
				if (r->accept_stat == RPCRDMA_RPC_PROG_MISMATCH) {
					r->mismatch_low = rng32();
					r->mismatch_high = rng32();
				}
			} else {
				r->reject_stat = rng_below(2);
				if (r->reject_stat == RPCRDMA_RPC_MISMATCH) {
					r->mismatch_low = rng32();
					r->mismatch_high = rng32();
				} else {
					r->auth_stat = rng_below(3) ? rng_below(15) : rng32();
				}
			}
		}

		size_t size = expected_size(&m);
		size_t tail = rng_below(16);

		rpcrdma_xdr_init(&x, buf, size + tail);
		assert_int_equal(encode_msg(&x, &m), 0);
		assert_int_equal(rpcrdma_xdr_pos(&x), size);
		for (size_t k = 0; k < tail; k++)
			buf[size + k] = (uint8_t)rng();

		rpcrdma_xdr_init_const(&x, buf, size + tail);
		assert_int_equal(rpcrdma_rpc_decode_msg(&x, &back), 0);
		assert_int_equal(rpcrdma_xdr_pos(&x), size);
		/* Both sides were zeroed first, so the whole struct must match. */
		assert_memory_equal(&back, &m, sizeof(m));
		if (is_sys) {
			const struct rpcrdma_opaque_auth *a =
				m.type == RPCRDMA_RPC_CALL ? &back.u.call.cred : &back.u.reply.verf;

			assert_int_equal(rpcrdma_auth_sys_decode(a, &sys_back), 0);
			assert_memory_equal(&sys_back, &sys, sizeof(sys));
		}

		/* The same bytes over a random three-way split. */
		size_t a = rng_below((uint32_t)size + 1);
		size_t b = a + rng_below((uint32_t)(size - a) + 1);
		struct iovec iov[3] = {{buf, a}, {buf + a, b - a}, {buf + b, size - b}};

		assert_int_equal(rpcrdma_xdr_init_iov(&x, iov, 3), 0);
		assert_int_equal(rpcrdma_rpc_decode_msg(&x, &split), 0);
		assert_memory_equal(&split, &m, sizeof(m));

		/* And one byte short anywhere in the header is a clean failure. */
		assert_decode_fails(buf, rng_below((uint32_t)size), RPCRDMA_ERR_TRUNCATED);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_decode),
		cmocka_unit_test(test_vectors_encode),
		cmocka_unit_test(test_reply_decoder),
		cmocka_unit_test(test_stream_left_at_body),
		cmocka_unit_test(test_decode_mid_stream),
		cmocka_unit_test(test_truncation_every_offset),
		cmocka_unit_test(test_unknown_discriminants),
		cmocka_unit_test(test_open_enums_pass_through),
		cmocka_unit_test(test_other_rpcvers),
		cmocka_unit_test(test_auth_body_bound),
		cmocka_unit_test(test_scatter_every_split),
		cmocka_unit_test(test_encode_nospace_every_capacity),
		cmocka_unit_test(test_encode_rejects_invalid),
		cmocka_unit_test(test_auth_sys_vector),
		cmocka_unit_test(test_auth_sys_malformed),
		cmocka_unit_test(test_auth_sys_encode_limits),
		cmocka_unit_test(test_auth_none),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_random_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
