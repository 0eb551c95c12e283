/*
 * NFSv4 COMPOUND codec tests: the arguments byte for byte as RFC 7530
 * frames them, results round-tripped, hostile results refused, and the
 * attribute walker.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <cmocka.h>

#include "rpcrdma/nfs4.h"

static uint8_t data_a[64], data_b[64], text[64];

/* PUTROOTFH, LOOKUP "export", GETFH, GETATTR {type, size}, READ, READLINK */
static void build(struct rpcrdma_nfs4_compound *c)
{
	static const uint32_t attrs[] = {RPCRDMA_NFS4_ATTR_TYPE, RPCRDMA_NFS4_ATTR_SIZE};

	rpcrdma_nfs4_compound_init(c);
	assert_non_null(rpcrdma_nfs4_putrootfh(c));
	assert_non_null(rpcrdma_nfs4_lookup(c, "export"));
	assert_non_null(rpcrdma_nfs4_getfh(c));
	assert_non_null(rpcrdma_nfs4_getattr(c, attrs, 2));
	assert_non_null(rpcrdma_nfs4_read(c, NULL, 4096, 10, data_a, sizeof(data_a)));
	assert_non_null(rpcrdma_nfs4_readlink(c, text, sizeof(text)));
}

static void test_args_bytes(void **state)
{
	static const uint8_t want[] = {
	    0, 0, 0, 0,                    /* tag: empty */
	    0, 0, 0, 0,                    /* minorversion 0 */
	    0, 0, 0, 6,                    /* six operations */
	    0, 0, 0, 24,                   /* PUTROOTFH */
	    0, 0, 0, 15, 0, 0, 0, 6, 'e', 'x', 'p', 'o', 'r', 't', 0, 0, /* LOOKUP */
	    0, 0, 0, 10,                   /* GETFH */
	    0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 0x12, /* GETATTR bits 1 and 4 */
	    0, 0, 0, 25, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* READ, stateid */
	    0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 10, /* offset 4096, count 10 */
	    0, 0, 0, 27,                   /* READLINK */
	};
	struct rpcrdma_nfs4_compound c, d;
	struct rpcrdma_xdr_stream x;
	uint8_t buf[512];

	(void)state;
	build(&c);
	rpcrdma_xdr_init(&x, buf, sizeof(buf));
	assert_int_equal(rpcrdma_nfs4_compound_args_enc(&x, &c), 0);
	assert_int_equal(rpcrdma_xdr_pos(&x), sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));

	rpcrdma_nfs4_compound_init(&d);
	rpcrdma_xdr_init_const(&x, buf, sizeof(want));
	assert_int_equal(rpcrdma_nfs4_compound_args_dec(&x, &d), 0);
	assert_int_equal(d.nops, 6);
	assert_string_equal(d.ops[1].arg.lookup.name, "export");
	assert_int_equal(d.ops[3].arg.getattr.w[0], 0x12);
	assert_int_equal(d.ops[4].arg.read.offset, 4096);
	assert_int_equal(d.ops[4].arg.read.count, 10);
}

static void test_builders_refuse(void **state)
{
	struct rpcrdma_nfs4_compound c;
	struct rpcrdma_nfs4_fh fh = {.len = RPCRDMA_NFS4_FHSIZE + 1};
	char name[RPCRDMA_NFS4_NAME_MAX + 2];
	uint32_t attr = 32 * RPCRDMA_NFS4_BITMAP_WORDS;

	(void)state;
	rpcrdma_nfs4_compound_init(&c);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_null(rpcrdma_nfs4_lookup(&c, name));
	assert_null(rpcrdma_nfs4_lookup(&c, ""));
	assert_null(rpcrdma_nfs4_putfh(&c, &fh));
	assert_null(rpcrdma_nfs4_getattr(&c, &attr, 1));
	assert_null(rpcrdma_nfs4_read(&c, NULL, 0, 100, data_a, 10));
	assert_null(rpcrdma_nfs4_readlink(&c, NULL, 10));
	assert_int_equal(c.nops, 0);
	for (unsigned int i = 0; i < RPCRDMA_NFS4_MAX_OPS; i++)
		assert_non_null(rpcrdma_nfs4_putrootfh(&c));
	assert_null(rpcrdma_nfs4_putrootfh(&c));
}

/* The server's side of build(): every operation succeeded. */
static size_t encode_results(struct rpcrdma_nfs4_compound *c, uint8_t *buf, size_t room)
{
	struct rpcrdma_xdr_stream x;
	struct rpcrdma_xdr_stream v;

	c->nres = c->nops;
	c->status = 0;
	c->ops[2].res.getfh.len = 3;
	memcpy(c->ops[2].res.getfh.data, "\1\2\3", 3);
	c->ops[3].res.getattr.mask = c->ops[3].arg.getattr;
	rpcrdma_xdr_init(&v, c->ops[3].res.getattr.vals, RPCRDMA_NFS4_ATTR_MAX);
	assert_int_equal(rpcrdma_xdr_encode_u32(&v, 1), 0);        /* NF4REG */
	assert_int_equal(rpcrdma_xdr_encode_u64(&v, 123456), 0);   /* size */
	c->ops[3].res.getattr.len = (uint32_t)rpcrdma_xdr_pos(&v);
	c->ops[4].res.read.eof = true;
	c->ops[4].res.read.len = 10;
	memcpy(data_a, "0123456789", 10);
	c->ops[5].res.readlink.len = 5;
	memcpy(text, "../up", 5);
	rpcrdma_xdr_init(&x, buf, room);
	assert_int_equal(rpcrdma_nfs4_compound_res_enc(&x, c), 0);
	return rpcrdma_xdr_pos(&x);
}

static void test_results_round_trip(void **state)
{
	struct rpcrdma_nfs4_compound c, d;
	struct rpcrdma_nfs4_fattr fa;
	struct rpcrdma_xdr_stream x;
	uint8_t buf[1024];
	size_t n;

	(void)state;
	build(&c);
	n = encode_results(&c, buf, sizeof(buf));
	build(&d);
	d.ops[4].buf = data_b;
	memset(text, 0, sizeof(text));
	rpcrdma_xdr_init_const(&x, buf, n);
	assert_int_equal(rpcrdma_nfs4_compound_res_dec(&x, &d), 0);
	assert_int_equal(d.nres, 6);
	assert_int_equal(d.status, 0);
	assert_int_equal(d.ops[2].res.getfh.len, 3);
	assert_true(d.ops[4].res.read.eof);
	assert_int_equal(d.ops[4].res.read.len, 10);
	assert_memory_equal(data_b, "0123456789", 10);
	assert_int_equal(d.ops[5].res.readlink.len, 5);
	assert_memory_equal(text, "../up", 5);
	assert_int_equal(rpcrdma_nfs4_fattr_decode(&d.ops[3], &fa), 0);
	assert_int_equal(fa.type, 1);
	assert_int_equal(fa.size, 123456);
	assert_true(rpcrdma_nfs4_bitmap_isset(&fa.present, RPCRDMA_NFS4_ATTR_SIZE));
	assert_false(rpcrdma_nfs4_bitmap_isset(&fa.present, RPCRDMA_NFS4_ATTR_MODE));
}

/* A failing operation ends the results; its status is the COMPOUND's. */
static void test_results_stop_at_failure(void **state)
{
	struct rpcrdma_nfs4_compound c, d;
	struct rpcrdma_xdr_stream x;
	uint8_t buf[1024];

	(void)state;
	build(&c);
	c.nres = 2;
	c.status = 2; /* NFS4ERR_NOENT */
	c.ops[1].status = 2;
	rpcrdma_xdr_init(&x, buf, sizeof(buf));
	assert_int_equal(rpcrdma_nfs4_compound_res_enc(&x, &c), 0);
	build(&d);
	rpcrdma_xdr_init_const(&x, buf, rpcrdma_xdr_pos(&x));
	assert_int_equal(rpcrdma_nfs4_compound_res_dec(&x, &d), 0);
	assert_int_equal(d.nres, 2);
	assert_int_equal(d.status, 2);
	assert_int_equal(d.ops[1].status, 2);
}

/*
 * A COMPOUND whose nops was set past RPCRDMA_NFS4_MAX_OPS by hand: its
 * results are refused both ways (as its arguments are), rather than
 * encoded from, or decoded into, operations beyond ops[].  The struct is
 * on the heap, alone, so that ASan sees any access past it.
 */
static void test_results_nops_over_max(void **state)
{
	const uint32_t n = RPCRDMA_NFS4_MAX_OPS + 1;
	struct rpcrdma_nfs4_compound *c = calloc(1, sizeof(*c));
	struct rpcrdma_xdr_stream x;
	uint32_t *wire = calloc(3 + 2 * n, 4);

	(void)state;
	assert_non_null(c);
	assert_non_null(wire);
	rpcrdma_nfs4_compound_init(c);
	for (uint32_t i = 0; i < RPCRDMA_NFS4_MAX_OPS; i++)
		assert_non_null(rpcrdma_nfs4_putrootfh(c));
	c->nops = n;
	c->nres = n;
	rpcrdma_xdr_init(&x, wire, (3 + 2 * n) * 4);
	assert_int_equal(rpcrdma_nfs4_compound_res_enc(&x, c), RPCRDMA_ERR_TOO_LONG);
	/* NFS4_OK, no tag, n results of PUTROOTFH, each NFS4_OK. */
	wire[2] = htonl(n);
	for (uint32_t i = 0; i < n; i++)
		wire[3 + 2 * i] = htonl(RPCRDMA_NFS4_OP_PUTROOTFH);
	c->nres = 0;
	rpcrdma_xdr_init_const(&x, wire, (3 + 2 * n) * 4);
	assert_int_equal(rpcrdma_nfs4_compound_res_dec(&x, c), RPCRDMA_ERR_TOO_LONG);
	free(wire);
	free(c);
}

/* Results a server must not send: each is refused, never trusted. */
static void test_results_hostile(void **state)
{
	struct rpcrdma_nfs4_compound c, d;
	struct rpcrdma_xdr_stream x;
	uint8_t buf[1024];
	size_t n;
	uint32_t w;

	(void)state;
	build(&c);
	n = encode_results(&c, buf, sizeof(buf));

	/* Every truncation fails cleanly. */
	for (size_t cut = 0; cut < n; cut++) {
		build(&d);
		rpcrdma_xdr_init_const(&x, buf, cut);
		assert_int_not_equal(rpcrdma_nfs4_compound_res_dec(&x, &d), 0);
	}
	/* More results than operations: the count word is at offset 8. */
	w = htonl(7);
	memcpy(buf + 8, &w, 4);
	build(&d);
	rpcrdma_xdr_init_const(&x, buf, n);
	assert_int_not_equal(rpcrdma_nfs4_compound_res_dec(&x, &d), 0);
	/* Fewer results than operations with NFS4_OK (RFC 8881 16.2.3): the
	 * reply is refused, whether it ends after three results or at once. */
	w = htonl(3);
	memcpy(buf + 8, &w, 4);
	build(&d);
	rpcrdma_xdr_init_const(&x, buf, n);
	assert_int_equal(rpcrdma_nfs4_compound_res_dec(&x, &d), RPCRDMA_ERR_BAD_VALUE);
	w = 0;
	memcpy(buf + 8, &w, 4);
	build(&d);
	rpcrdma_xdr_init_const(&x, buf, 12);
	assert_int_equal(rpcrdma_nfs4_compound_res_dec(&x, &d), RPCRDMA_ERR_BAD_VALUE);
	w = htonl(6);
	memcpy(buf + 8, &w, 4);
	/* A result for another operation than asked: PUTROOTFH's resop. */
	w = htonl(RPCRDMA_NFS4_OP_PUTFH);
	memcpy(buf + 12, &w, 4);
	build(&d);
	rpcrdma_xdr_init_const(&x, buf, n);
	assert_int_equal(rpcrdma_nfs4_compound_res_dec(&x, &d), RPCRDMA_ERR_BAD_VALUE);
	w = htonl(RPCRDMA_NFS4_OP_PUTROOTFH);
	memcpy(buf + 12, &w, 4);
	/* A failure in the middle with results after it. */
	w = htonl(5);
	memcpy(buf + 16, &w, 4);
	build(&d);
	rpcrdma_xdr_init_const(&x, buf, n);
	assert_int_not_equal(rpcrdma_nfs4_compound_res_dec(&x, &d), 0);
	w = 0;
	memcpy(buf + 16, &w, 4);

	/* READ data longer than the room offered. */
	build(&c);
	c.ops[4].room = 8;
	c.ops[4].arg.read.count = 8;
	n = encode_results(&c, buf, sizeof(buf));
	build(&d);
	d.ops[4].room = 8;
	rpcrdma_xdr_init_const(&x, buf, n);
	assert_int_equal(rpcrdma_nfs4_compound_res_dec(&x, &d), RPCRDMA_ERR_TOO_LONG);

	/* Link text with a NUL inside: encode_results() sets "../up", then
	 * the text is spoiled and the results encoded again. */
	build(&c);
	(void)encode_results(&c, buf, sizeof(buf));
	text[2] = 0;
	rpcrdma_xdr_init(&x, buf, sizeof(buf));
	assert_int_equal(rpcrdma_nfs4_compound_res_enc(&x, &c), 0);
	n = rpcrdma_xdr_pos(&x);
	build(&d);
	rpcrdma_xdr_init_const(&x, buf, n);
	assert_int_equal(rpcrdma_nfs4_compound_res_dec(&x, &d), RPCRDMA_ERR_BAD_VALUE);
}

static void test_fattr_walk(void **state)
{
	struct rpcrdma_nfs4_op op;
	struct rpcrdma_nfs4_fattr fa;
	struct rpcrdma_xdr_stream v;

	(void)state;
	memset(&op, 0, sizeof(op));
	op.op = RPCRDMA_NFS4_OP_GETATTR;
	/* type, fsid, fileid, mode, time_modify; then owner (variable). */
	op.res.getattr.mask.n = 2;
	op.res.getattr.mask.w[0] = (1u << 1) | (1u << 8) | (1u << 20);
	op.res.getattr.mask.w[1] = (1u << (33 - 32)) | (1u << (53 - 32));
	rpcrdma_xdr_init(&v, op.res.getattr.vals, RPCRDMA_NFS4_ATTR_MAX);
	assert_int_equal(rpcrdma_xdr_encode_u32(&v, 2), 0);
	assert_int_equal(rpcrdma_xdr_encode_u64(&v, 7), 0);
	assert_int_equal(rpcrdma_xdr_encode_u64(&v, 8), 0);
	assert_int_equal(rpcrdma_xdr_encode_u64(&v, 99), 0);
	assert_int_equal(rpcrdma_xdr_encode_u32(&v, 0755), 0);
	assert_int_equal(rpcrdma_xdr_encode_i64(&v, 1000000000), 0);
	assert_int_equal(rpcrdma_xdr_encode_u32(&v, 5), 0);
	op.res.getattr.len = (uint32_t)rpcrdma_xdr_pos(&v);
	assert_int_equal(rpcrdma_nfs4_fattr_decode(&op, &fa), 0);
	assert_int_equal(fa.type, 2);
	assert_int_equal(fa.fsid_major, 7);
	assert_int_equal(fa.fsid_minor, 8);
	assert_int_equal(fa.fileid, 99);
	assert_int_equal(fa.mode, 0755);
	assert_int_equal(fa.mtime_sec, 1000000000);
	assert_int_equal(fa.mtime_nsec, 5);

	/* Values shorter than the mask says. */
	op.res.getattr.len -= 4;
	assert_int_not_equal(rpcrdma_nfs4_fattr_decode(&op, &fa), 0);
	op.res.getattr.len += 4;
	/* Longer: a word, or two, after the last attribute the mask names. */
	assert_int_equal(rpcrdma_xdr_encode_u32(&v, 0), 0);
	op.res.getattr.len = (uint32_t)rpcrdma_xdr_pos(&v);
	assert_int_equal(rpcrdma_nfs4_fattr_decode(&op, &fa), RPCRDMA_ERR_BAD_VALUE);
	assert_int_equal(rpcrdma_xdr_encode_u32(&v, 0), 0);
	op.res.getattr.len = (uint32_t)rpcrdma_xdr_pos(&v);
	assert_int_equal(rpcrdma_nfs4_fattr_decode(&op, &fa), RPCRDMA_ERR_BAD_VALUE);
	op.res.getattr.len -= 8;
	assert_int_equal(rpcrdma_nfs4_fattr_decode(&op, &fa), 0);
	/* owner (36) is of variable size: the walk stops there. */
	op.res.getattr.mask.w[1] |= 1u << (36 - 32);
	assert_int_equal(rpcrdma_nfs4_fattr_decode(&op, &fa), -ENOTSUP);
	assert_int_equal(fa.mode, 0755);
}

static void test_max_reply(void **state)
{
	struct rpcrdma_nfs4_compound c;
	size_t base;

	(void)state;
	rpcrdma_nfs4_compound_init(&c);
	assert_non_null(rpcrdma_nfs4_putrootfh(&c));
	base = rpcrdma_nfs4_compound_max_reply(&c);
	assert_non_null(rpcrdma_nfs4_read(&c, NULL, 0, 10, data_a, sizeof(data_a)));
	/* resop, status, eof, length, data padded to 12 */
	assert_int_equal(rpcrdma_nfs4_compound_max_reply(&c), base + 8 + 8 + 12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args_bytes),
		cmocka_unit_test(test_builders_refuse),
		cmocka_unit_test(test_results_round_trip),
		cmocka_unit_test(test_results_stop_at_failure),
		cmocka_unit_test(test_results_hostile),
		cmocka_unit_test(test_results_nops_over_max),
		cmocka_unit_test(test_fattr_walk),
		cmocka_unit_test(test_max_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
