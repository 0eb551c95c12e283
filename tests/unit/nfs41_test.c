/*
 * NFSv4.1 codec tests (RFC 8881): COMPOUND arguments byte for byte as the
 * RFC frames them, every NFSv4.1 result round-tripped and refused at every
 * truncation, hostile results refused; CB_COMPOUND both ways, its decoder's
 * stops (an operation it cannot frame, too many operations) and bounds;
 * the callback service's answers to calls beyond the back channel's
 * attributes.
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

#include "nfs/nfs41_session.h"

static const uint8_t sid[RPCRDMA_NFS4_SESSIONID_SIZE] = {1, 2,  3,  4,  5,  6,  7,  8,
							 9, 10, 11, 12, 13, 14, 15, 16};

static size_t enc(int (*fn)(struct rpcrdma_xdr_stream *, void *), void *c, uint8_t *buf,
		  size_t room)
{
	struct rpcrdma_xdr_stream x;

	rpcrdma_xdr_init(&x, buf, room);
	assert_int_equal(fn(&x, c), 0);
	return rpcrdma_xdr_pos(&x);
}

static int dec(int (*fn)(struct rpcrdma_xdr_stream *, void *), void *c, const uint8_t *buf,
	       size_t len)
{
	struct rpcrdma_xdr_stream x;

	rpcrdma_xdr_init_const(&x, buf, len);
	return fn(&x, c);
}

static void test_args_bytes(void **state)
{
	static const uint8_t want[] = {
	    0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 3, /* tag, minor version 1, 3 ops */
	    0, 0, 0, 53,                        /* SEQUENCE */
	    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
	    0, 0, 0, 7, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 1, /* seq 7, slot 2, highest 3, cachethis */
	    0, 0, 0, 58, 0, 0, 0, 0,            /* RECLAIM_COMPLETE, one_fs false */
	    0, 0, 0, 18,                        /* OPEN */
	    0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, /* seqid 0, READ | WANT_READ_DELEG, deny 0 */
	    0, 0, 0, 0, 0, 0, 0x12, 0x34, 0, 0, 0, 2, 'o', 'w', 0, 0, /* owner */
	    0, 0, 0, 0,                         /* OPEN4_NOCREATE */
	    0, 0, 0, 0, 0, 0, 0, 2, 'f', '0', 0, 0, /* CLAIM_NULL "f0" */
	};
	struct rpcrdma_nfs4_compound c, d;
	struct rpcrdma_nfs4_op *seq;
	uint8_t buf[512];
	size_t len;

	(void)state;
	rpcrdma_nfs4_compound_init(&c);
	c.minorversion = 1;
	assert_non_null(seq = rpcrdma_nfs4_sequence(&c));
	memcpy(seq->arg.sequence.sessionid, sid, sizeof(sid));
	seq->arg.sequence.seqid = 7;
	seq->arg.sequence.slotid = 2;
	seq->arg.sequence.highest_slotid = 3;
	seq->arg.sequence.cachethis = true;
	assert_non_null(rpcrdma_nfs4_reclaim_complete(&c, false));
	assert_non_null(rpcrdma_nfs4_open(&c,
					  RPCRDMA_OPEN4_SHARE_ACCESS_READ |
					      RPCRDMA_OPEN4_SHARE_ACCESS_WANT_READ_DELEG,
					  0x1234, "ow", 2, "f0"));
	len = enc(rpcrdma_nfs4_compound_args_enc, &c, buf, sizeof(buf));
	assert_int_equal(len, sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	rpcrdma_nfs4_compound_init(&d);
	assert_int_equal(dec(rpcrdma_nfs4_compound_args_dec, &d, buf, len), 0);
	assert_int_equal(d.nops, 3);
	assert_int_equal(d.ops[2].arg.open.claim, RPCRDMA_CLAIM_NULL);
	assert_string_equal(d.ops[2].arg.open.name, "f0");
	assert_int_equal(d.ops[0].arg.sequence.seqid, 7);
}

/* Every session operation's arguments survive the round trip. */
static void test_session_args_round_trip(void **state)
{
	struct rpcrdma_nfs41_chan_attrs fore = {0, 1 << 20, 1 << 20, 4096, 16, 8, 1, 32};
	struct rpcrdma_nfs41_chan_attrs back = {0, 4096, 4096, 0, 8, 1, 0, 0};
	struct rpcrdma_nfs4_stateid st = {3, {'s', 't', 'a', 't', 'e'}};
	static struct rpcrdma_nfs4_compound c, d;
	uint8_t verf[8] = {8, 7, 6, 5, 4, 3, 2, 1}, buf[2048], buf2[2048];
	struct rpcrdma_nfs4_fh fh = {.len = 4, .data = {1, 2, 3, 4}};
	size_t len;

	(void)state;
	rpcrdma_nfs4_compound_init(&c);
	c.minorversion = 1;
	assert_non_null(rpcrdma_nfs4_exchange_id(&c, verf, "librpcrdma", 10, 0));
	assert_non_null(rpcrdma_nfs4_create_session(&c, 99, 1, 2, &fore, &back, 0x40000001));
	assert_non_null(rpcrdma_nfs4_bind_conn_to_session(&c, sid, RPCRDMA_CDFC4_FORE_OR_BOTH, 0));
	assert_non_null(rpcrdma_nfs4_destroy_session(&c, sid));
	assert_non_null(rpcrdma_nfs4_destroy_clientid(&c, 99));
	assert_non_null(rpcrdma_nfs4_putfh(&c, &fh));
	assert_non_null(rpcrdma_nfs4_open(&c, RPCRDMA_OPEN4_SHARE_ACCESS_READ, 99, "o", 1, NULL));
	assert_non_null(rpcrdma_nfs4_close(&c, &st));
	assert_non_null(rpcrdma_nfs4_delegreturn(&c, &st));
	len = enc(rpcrdma_nfs4_compound_args_enc, &c, buf, sizeof(buf));
	rpcrdma_nfs4_compound_init(&d);
	assert_int_equal(dec(rpcrdma_nfs4_compound_args_dec, &d, buf, len), 0);
	assert_int_equal(enc(rpcrdma_nfs4_compound_args_enc, &d, buf2, sizeof(buf2)), len);
	assert_memory_equal(buf, buf2, len);
	assert_int_equal(d.ops[1].arg.create_session.fore.rdma_ird, 32);
	assert_int_equal(d.ops[1].arg.create_session.cb_program, 0x40000001);
	assert_int_equal(d.ops[6].arg.open.claim, RPCRDMA_CLAIM_FH);
	/* every truncation of the arguments is refused */
	for (size_t n = 0; n < len; n++) {
		rpcrdma_nfs4_compound_init(&d);
		assert_int_not_equal(dec(rpcrdma_nfs4_compound_args_dec, &d, buf, n), 0);
	}
}

static void test_builders_refuse(void **state)
{
	struct rpcrdma_nfs4_compound c;
	struct rpcrdma_nfs41_chan_attrs a = {0};
	uint8_t verf[8] = {0};
	char big[RPCRDMA_NFS41_OWNER_MAX + 2];

	(void)state;
	memset(big, 'x', sizeof(big));
	rpcrdma_nfs4_compound_init(&c);
	assert_null(rpcrdma_nfs4_exchange_id(&c, verf, big, RPCRDMA_NFS41_OWNER_MAX + 1, 0));
	assert_null(rpcrdma_nfs4_exchange_id(&c, verf, "x", 0, 0));
	/* access must be READ, WRITE or BOTH; wishes as RFC 8881 18.16.3 */
	assert_null(rpcrdma_nfs4_open(&c, 0, 1, "o", 1, "f"));
	assert_null(rpcrdma_nfs4_open(&c, 4, 1, "o", 1, "f"));
	assert_null(rpcrdma_nfs4_open(&c, 1 | 0x0600, 1, "o", 1, "f"));
	assert_null(rpcrdma_nfs4_open(&c, 1 | 0x10000, 1, "o", 1, "f"));
	assert_null(rpcrdma_nfs4_open(&c, 1, 1, "o", 1, ""));
	a.nrdma_ird = 2;
	assert_null(rpcrdma_nfs4_create_session(&c, 1, 1, 0, &a, &a, 1));
	assert_null(rpcrdma_nfs4_close(&c, NULL));
	assert_int_equal(c.nops, 0);
}

/* A reply to SEQUENCE, EXCHANGE_ID, CREATE_SESSION, BIND_CONN, OPEN (READ
 * delegation), CLOSE, DELEGRETURN, RECLAIM_COMPLETE. */
static void results(struct rpcrdma_nfs4_compound *c, uint32_t deleg)
{
	struct rpcrdma_nfs41_chan_attrs a = {0, 4096, 4096, 0, 8, 1, 0, 0};
	struct rpcrdma_nfs4_stateid st = {1, {0}};
	uint8_t verf[8] = {0};
	struct rpcrdma_nfs4_op *op;

	rpcrdma_nfs4_compound_init(c);
	c->minorversion = 1;
	op = rpcrdma_nfs4_sequence(c);
	memcpy(op->res.sequence.sessionid, sid, sizeof(sid));
	op->res.sequence.seqid = 9;
	op->res.sequence.target_highest_slotid = 7;
	op->res.sequence.status_flags = RPCRDMA_SEQ4_STATUS_CB_PATH_DOWN;
	op = rpcrdma_nfs4_exchange_id(c, verf, "o", 1, 0);
	op->res.exchange_id.clientid = 0xabcdef;
	op->res.exchange_id.flags = RPCRDMA_EXCHGID4_FLAG_CONFIRMED_R;
	op->res.exchange_id.so_major_len = 12;
	op->res.exchange_id.scope_len = 3;
	op = rpcrdma_nfs4_create_session(c, 1, 1, 2, &a, &a, 7);
	memcpy(op->res.create_session.sessionid, sid, sizeof(sid));
	op->res.create_session.flags = 2;
	op->res.create_session.back = a;
	op->res.create_session.fore = a;
	op->res.create_session.fore.nrdma_ird = 1;
	op->res.create_session.fore.rdma_ird = 4;
	op = rpcrdma_nfs4_bind_conn_to_session(c, sid, 3, false);
	op->res.bind_conn.dir = RPCRDMA_CDFS4_BOTH;
	op = rpcrdma_nfs4_open(c, 1 | 0x100, 1, "o", 1, "f");
	op->res.open.stateid.seqid = 1;
	op->res.open.deleg_type = deleg;
	op->res.open.deleg_stateid.other[0] = 'D';
	op->res.open.limitby = 1;
	op->res.open.limit_size = 1 << 20;
	op->res.open.why_none = 1;
	op->res.open.why_flag = true;
	op->res.open.attrset.n = 1;
	op = rpcrdma_nfs4_close(c, &st);
	op->res.close = st;
	rpcrdma_nfs4_delegreturn(c, &st);
	rpcrdma_nfs4_reclaim_complete(c, false);
	c->nres = c->nops;
}

static void test_results_round_trip(void **state)
{
	static const uint32_t delegs[] = {RPCRDMA_OPEN_DELEGATE_NONE, RPCRDMA_OPEN_DELEGATE_READ,
					  RPCRDMA_OPEN_DELEGATE_WRITE,
					  RPCRDMA_OPEN_DELEGATE_NONE_EXT};
	static struct rpcrdma_nfs4_compound c, d;
	static uint8_t buf[8192], buf2[8192];

	(void)state;
	for (size_t k = 0; k < sizeof(delegs) / sizeof(delegs[0]); k++) {
		size_t len;

		results(&c, delegs[k]);
		len = enc(rpcrdma_nfs4_compound_res_enc, &c, buf, sizeof(buf));
		results(&d, RPCRDMA_OPEN_DELEGATE_NONE);
		memset(&d.ops[4].res, 0, sizeof(d.ops[4].res));
		assert_int_equal(dec(rpcrdma_nfs4_compound_res_dec, &d, buf, len), 0);
		assert_int_equal(d.nres, 8);
		assert_int_equal(d.ops[0].res.sequence.seqid, 9);
		assert_int_equal(d.ops[0].res.sequence.status_flags, RPCRDMA_SEQ4_STATUS_CB_PATH_DOWN);
		assert_int_equal(d.ops[1].res.exchange_id.clientid, 0xabcdef);
		assert_int_equal(d.ops[1].res.exchange_id.so_major_len, 12);
		assert_memory_equal(d.ops[2].res.create_session.sessionid, sid, sizeof(sid));
		assert_int_equal(d.ops[2].res.create_session.fore.rdma_ird, 4);
		assert_int_equal(d.ops[3].res.bind_conn.dir, RPCRDMA_CDFS4_BOTH);
		assert_int_equal(d.ops[4].res.open.deleg_type, delegs[k]);
		if (delegs[k] == RPCRDMA_OPEN_DELEGATE_READ || delegs[k] == RPCRDMA_OPEN_DELEGATE_WRITE)
			assert_int_equal(d.ops[4].res.open.deleg_stateid.other[0], 'D');
		if (delegs[k] == RPCRDMA_OPEN_DELEGATE_WRITE)
			assert_int_equal(d.ops[4].res.open.limit_size, 1 << 20);
		if (delegs[k] == RPCRDMA_OPEN_DELEGATE_NONE_EXT) {
			assert_int_equal(d.ops[4].res.open.why_none, 1);
			assert_true(d.ops[4].res.open.why_flag);
		}
		assert_int_equal(enc(rpcrdma_nfs4_compound_res_enc, &d, buf2, sizeof(buf2)), len);
		assert_memory_equal(buf, buf2, len);
		/* every truncation of the reply is refused */
		for (size_t n = 0; n < len; n++) {
			results(&d, RPCRDMA_OPEN_DELEGATE_NONE);
			assert_int_not_equal(dec(rpcrdma_nfs4_compound_res_dec, &d, buf, n), 0);
		}
	}
}

/* Patch the 32-bit word at @off of @buf. */
static void put32(uint8_t *buf, size_t off, uint32_t v)
{
	v = htonl(v);
	memcpy(buf + off, &v, 4);
}

static void test_results_hostile(void **state)
{
	static struct rpcrdma_nfs4_compound c, d;
	static uint8_t buf[8192];
	size_t len, exid, open;

	(void)state;
	results(&c, RPCRDMA_OPEN_DELEGATE_READ);
	len = enc(rpcrdma_nfs4_compound_res_enc, &c, buf, sizeof(buf));
	/* status, tag, count, SEQUENCE (8 + 36): EXCHANGE_ID's result starts here */
	exid = 12 + 8 + 36;
	put32(buf, exid + 8 + 16, 1); /* spr_how SP4_MACH_CRED: we asked for SP4_NONE */
	results(&d, 0);
	assert_int_equal(dec(rpcrdma_nfs4_compound_res_dec, &d, buf, len),
			 RPCRDMA_ERR_BAD_VALUE);
	put32(buf, exid + 8 + 16, 0);
	put32(buf, exid + 8 + 20 + 8, RPCRDMA_NFS4_OPAQUE_LIMIT + 1); /* so_major_id too long */
	results(&d, 0);
	assert_int_not_equal(dec(rpcrdma_nfs4_compound_res_dec, &d, buf, len), 0);
	len = enc(rpcrdma_nfs4_compound_res_enc, &c, buf, sizeof(buf));
	/* OPEN's result starts where a reply of the four results before it ends */
	c.nres = 4;
	open = enc(rpcrdma_nfs4_compound_res_enc, &c, buf, sizeof(buf));
	c.nres = c.nops;
	len = enc(rpcrdma_nfs4_compound_res_enc, &c, buf, sizeof(buf));
	assert_int_equal(ntohl(*(uint32_t *)(buf + open)), RPCRDMA_NFS4_OP_OPEN);
	put32(buf, open + 8 + 16 + 20 + 4 + 8, 9); /* after stateid, cinfo, rflags, attrset: type 9 */
	results(&d, 0);
	assert_int_equal(dec(rpcrdma_nfs4_compound_res_dec, &d, buf, len), RPCRDMA_ERR_BAD_VALUE);
}

/*
 * NFS4_OK says the server evaluated every operation (RFC 8881 16.2.3): a
 * reply that says so with fewer results is refused, so that no caller
 * reads a result the server never sent.  Fewer results ending in an error
 * are the normal case and decode.
 */
static void test_results_fewer_than_ops(void **state)
{
	static const uint8_t ok_no_results[12] = {0}; /* NFS4_OK, tag "", resarray<0> */
	static struct rpcrdma_nfs4_compound c, d;
	static uint8_t buf[8192];
	struct rpcrdma_nfs4_fh fh = {.len = 4};
	size_t len;

	(void)state;
	/* What rpcrdma_nfs41_open() sends: SEQUENCE, PUTFH, OPEN, GETFH. */
	rpcrdma_nfs4_compound_init(&c);
	c.minorversion = 1;
	assert_non_null(rpcrdma_nfs4_sequence(&c));
	assert_non_null(rpcrdma_nfs4_putfh(&c, &fh));
	assert_non_null(rpcrdma_nfs4_open(&c, 1, 1, "o", 1, "f"));
	assert_non_null(rpcrdma_nfs4_getfh(&c));
	d = c;
	assert_int_equal(
	    dec(rpcrdma_nfs4_compound_res_dec, &d, ok_no_results, sizeof(ok_no_results)),
	    RPCRDMA_ERR_BAD_VALUE);

	/* SEQUENCE and PUTFH answered, and NFS4_OK: refused. */
	c.nres = 2;
	c.status = RPCRDMA_NFS4_OK;
	len = enc(rpcrdma_nfs4_compound_res_enc, &c, buf, sizeof(buf));
	d = c;
	assert_int_equal(dec(rpcrdma_nfs4_compound_res_dec, &d, buf, len), RPCRDMA_ERR_BAD_VALUE);

	/* The same two with PUTFH failing: the server stopped there. */
	c.ops[1].status = RPCRDMA_NFS4ERR_BADHANDLE;
	c.status = RPCRDMA_NFS4ERR_BADHANDLE;
	len = enc(rpcrdma_nfs4_compound_res_enc, &c, buf, sizeof(buf));
	d = c;
	assert_int_equal(dec(rpcrdma_nfs4_compound_res_dec, &d, buf, len), 0);
	assert_int_equal(d.nres, 2);
	assert_int_equal(d.status, RPCRDMA_NFS4ERR_BADHANDLE);

	/* No result at all with an error (a minor version the server does
	 * not speak): decodes. */
	c.nres = 0;
	c.status = RPCRDMA_NFS4ERR_MINOR_VERS_MISMATCH;
	len = enc(rpcrdma_nfs4_compound_res_enc, &c, buf, sizeof(buf));
	d = c;
	assert_int_equal(dec(rpcrdma_nfs4_compound_res_dec, &d, buf, len), 0);
	assert_int_equal(d.nres, 0);

	/* Every result and NFS4_OK: decodes. */
	c.nres = 4;
	c.status = RPCRDMA_NFS4_OK;
	c.ops[1].status = RPCRDMA_NFS4_OK;
	len = enc(rpcrdma_nfs4_compound_res_enc, &c, buf, sizeof(buf));
	d = c;
	assert_int_equal(dec(rpcrdma_nfs4_compound_res_dec, &d, buf, len), 0);
	assert_int_equal(d.nres, 4);
}

/* CB_COMPOUND: CB_SEQUENCE, CB_RECALL. */
static void cb_call(struct rpcrdma_nfs41_cb_compound *c)
{
	memset(c, 0, sizeof(*c));
	c->minorversion = 1;
	c->callback_ident = 5;
	c->nops = c->count = 2;
	c->ops[0].op = RPCRDMA_NFS4_OP_CB_SEQUENCE;
	memcpy(c->ops[0].arg.sequence.sessionid, sid, sizeof(sid));
	c->ops[0].arg.sequence.seqid = 4;
	c->ops[1].op = RPCRDMA_NFS4_OP_CB_RECALL;
	c->ops[1].arg.recall.stateid.other[0] = 'D';
	c->ops[1].arg.recall.truncate = true;
	c->ops[1].arg.recall.fh.len = 3;
}

static void test_cb_args(void **state)
{
	static struct rpcrdma_nfs41_cb_compound c, d;
	uint8_t buf[1024], buf2[1024];
	size_t len;

	(void)state;
	cb_call(&c);
	len = enc(rpcrdma_nfs41_cb_args_enc, &c, buf, sizeof(buf));
	/* tag, minor, ident, count, CB_SEQUENCE (4+16+16+4), CB_RECALL (4+16+4+4+4) */
	assert_int_equal(len, 16 + 40 + 32);
	assert_int_equal(dec(rpcrdma_nfs41_cb_args_dec, &d, buf, len), 0);
	assert_int_equal(d.nops, 2);
	assert_false(d.stopped);
	assert_int_equal(d.callback_ident, 5);
	assert_true(d.ops[1].arg.recall.truncate);
	assert_int_equal(d.ops[1].arg.recall.fh.len, 3);
	assert_int_equal(enc(rpcrdma_nfs41_cb_args_enc, &d, buf2, sizeof(buf2)), len);
	assert_memory_equal(buf, buf2, len);
	for (size_t n = 0; n < len; n++)
		assert_int_not_equal(dec(rpcrdma_nfs41_cb_args_dec, &d, buf, n), 0);

	/* an operation the codec cannot frame: decoding stops there, kept */
	c.ops[1].op = RPCRDMA_NFS4_OP_CB_GETATTR;
	len = enc(rpcrdma_nfs41_cb_args_enc, &c, buf, sizeof(buf));
	assert_int_equal(dec(rpcrdma_nfs41_cb_args_dec, &d, buf, len), 0);
	assert_true(d.stopped);
	assert_int_equal(d.nops, 2);
	assert_int_equal(d.ops[1].op, RPCRDMA_NFS4_OP_CB_GETATTR);

	/* more than we evaluate: only the first operation is read */
	cb_call(&c);
	c.count = 1000;
	len = enc(rpcrdma_nfs41_cb_args_enc, &c, buf, sizeof(buf));
	assert_int_equal(dec(rpcrdma_nfs41_cb_args_dec, &d, buf, len), 0);
	assert_int_equal(d.count, 1000);
	assert_int_equal(d.nops, 1);

	/* another minor version: its operations are not read (a CB_SEQUENCE
	 * cut short here), so the service can answer MINOR_VERS_MISMATCH */
	cb_call(&c);
	c.minorversion = 2;
	c.nops = c.count = 1;
	len = enc(rpcrdma_nfs41_cb_args_enc, &c, buf, sizeof(buf));
	assert_int_equal(dec(rpcrdma_nfs41_cb_args_dec, &d, buf, 16 + 4 + 8), 0);
	assert_int_equal(d.minorversion, 2);
	assert_int_equal(d.count, 1);
	assert_int_equal(d.nops, 0);
	c.minorversion = 0;
	len = enc(rpcrdma_nfs41_cb_args_enc, &c, buf, sizeof(buf));
	assert_int_equal(dec(rpcrdma_nfs41_cb_args_dec, &d, buf, 16), 0);
	assert_int_equal(d.nops, 0);

	/* referring-call lists: walked within bounds */
	cb_call(&c);
	c.nops = c.count = 1;
	len = enc(rpcrdma_nfs41_cb_args_enc, &c, buf, sizeof(buf));
	put32(buf, len - 4, 17); /* 17 lists, all missing */
	assert_int_not_equal(dec(rpcrdma_nfs41_cb_args_dec, &d, buf, len), 0);
	put32(buf, len - 4, 1); /* one list, its session id and calls missing */
	assert_int_not_equal(dec(rpcrdma_nfs41_cb_args_dec, &d, buf, len), 0);
	memset(buf + len, 0, 16);
	put32(buf, len + 16, 2); /* two referring calls of 8 bytes */
	memset(buf + len + 20, 0, 16);
	assert_int_equal(dec(rpcrdma_nfs41_cb_args_dec, &d, buf, len + 36), 0);
	assert_int_equal(d.ops[0].arg.sequence.nreferring, 1);
}

static void test_cb_res(void **state)
{
	static struct rpcrdma_nfs41_cb_compound c, d;
	uint8_t buf[1024];
	size_t len;

	(void)state;
	cb_call(&c);
	c.ops[1].op = 99; /* outside the protocol: answered as OP_CB_ILLEGAL */
	c.ops[0].status = 0;
	c.ops[0].res.seqid = 4;
	c.ops[1].status = RPCRDMA_NFS4ERR_OP_ILLEGAL;
	c.nres = 2;
	c.status = RPCRDMA_NFS4ERR_OP_ILLEGAL;
	len = enc(rpcrdma_nfs41_cb_res_enc, &c, buf, sizeof(buf));
	assert_int_equal(ntohl(*(uint32_t *)(buf + 12 + 8 + 36)), RPCRDMA_NFS4_OP_CB_ILLEGAL);
	cb_call(&d);
	d.ops[1].op = 99;
	assert_int_equal(dec(rpcrdma_nfs41_cb_res_dec, &d, buf, len), 0);
	assert_int_equal(d.nres, 2);
	assert_int_equal(d.ops[0].res.seqid, 4);
	for (size_t n = 0; n < len; n++) {
		cb_call(&d);
		d.ops[1].op = 99;
		assert_int_not_equal(dec(rpcrdma_nfs41_cb_res_dec, &d, buf, n), 0);
	}
	/* more results than operations */
	cb_call(&d);
	d.nops = 1;
	assert_int_not_equal(dec(rpcrdma_nfs41_cb_res_dec, &d, buf, len), 0);

	/* NFS4_OK with a result for CB_SEQUENCE only: refused (RFC 8881
	 * 16.2.3); the same result ending in an error decodes. */
	cb_call(&c);
	c.nres = 1;
	c.status = RPCRDMA_NFS4_OK;
	len = enc(rpcrdma_nfs41_cb_res_enc, &c, buf, sizeof(buf));
	cb_call(&d);
	assert_int_equal(dec(rpcrdma_nfs41_cb_res_dec, &d, buf, len), RPCRDMA_ERR_BAD_VALUE);
	c.ops[0].status = RPCRDMA_NFS4ERR_BADSESSION;
	c.status = RPCRDMA_NFS4ERR_BADSESSION;
	len = enc(rpcrdma_nfs41_cb_res_enc, &c, buf, sizeof(buf));
	cb_call(&d);
	assert_int_equal(dec(rpcrdma_nfs41_cb_res_dec, &d, buf, len), 0);
	assert_int_equal(d.nres, 1);
}

/*
 * A session as CREATE_SESSION leaves it, for the callback service alone:
 * one back-channel slot at sequence id 3, the attributes we offer granted,
 * one delegation, the one cb_call() recalls.  No loop runs: wake_pending
 * keeps a recall's kick from reaching one.
 */
static void cb_session(struct rpcrdma_nfs41_session *s, struct s41_deleg *d)
{
	memset(s, 0, sizeof(*s));
	memset(d, 0, sizeof(*d));
	s->established = true;
	memcpy(s->info.sessionid, sid, sizeof(sid));
	s->ncb_slots = 1;
	s->cb_slots[0].seqid = 3;
	s->info.back.maxrequestsize = 4096;
	s->info.back.maxresponsesize = 4096;
	s->info.back.maxresponsesize_cached = 4096;
	s->info.back.maxoperations = RPCRDMA_NFS41_CB_MAX_OPS;
	s->wake_pending = true;
	s->delegs = d;
	s->ndelegs = 1;
	d->state = RPCRDMA_NFS41_DELEG_HELD;
	d->stateid.other[0] = 'D';
	d->fh.len = 3;
}

/* @c as the service gets it (encoded, decoded), evaluated for @s. */
static uint32_t cb_serve(struct rpcrdma_nfs41_session *s, struct rpcrdma_nfs41_cb_compound *c)
{
	static uint8_t buf[8192];
	size_t len = enc(rpcrdma_nfs41_cb_args_enc, c, buf, sizeof(buf));

	assert_int_equal(dec(rpcrdma_nfs41_cb_args_dec, c, buf, len), 0);
	rpcrdma__nfs41_cb_eval(s, c);
	return c->status;
}

/* What the callback service's decoder counts of a call: its stream. */
static size_t cb_len(struct rpcrdma_nfs41_cb_compound *c)
{
	static uint8_t buf[8192];

	return enc(rpcrdma_nfs41_cb_args_enc, c, buf, sizeof(buf));
}

/* Refused on CB_SEQUENCE: nothing ran, the slot did not move. */
static void assert_refused(const struct rpcrdma_nfs41_session *s,
			   const struct rpcrdma_nfs41_cb_compound *c, uint32_t status)
{
	assert_int_equal(c->status, status);
	assert_int_equal(c->nres, 1);
	assert_int_equal(c->ops[0].status, status);
	assert_int_equal(s->cb_slots[0].seqid, 3);
	assert_int_equal(s->delegs[0].state, RPCRDMA_NFS41_DELEG_HELD);
}

/*
 * RFC 8881 2.10.6.4 and 18.36.3: a call larger than ca_maxrequestsize
 * gets NFS4ERR_REQ_TOO_BIG, one whose reply would be larger than
 * ca_maxresponsesize NFS4ERR_REP_TOO_BIG, and, with csa_cachethis, one
 * whose reply would be larger than ca_maxresponsesize_cached
 * NFS4ERR_REP_TOO_BIG_TO_CACHE; each on CB_SEQUENCE, before anything
 * runs.  The limits are those granted; a request is held to what we
 * offered (4096 bytes) even when the server granted more.
 */
static void test_cb_sizes(void **state)
{
	static struct rpcrdma_nfs41_session s;
	static struct s41_deleg d;
	static struct rpcrdma_nfs41_cb_compound c;
	static uint8_t out[8192];
	size_t len, reply;

	(void)state;
	/* within every limit: the recall runs; its reply's size, with the
	 * 24 bytes of an accepted RPC reply's header before it */
	cb_session(&s, &d);
	cb_call(&c);
	assert_int_equal(cb_serve(&s, &c), RPCRDMA_NFS4_OK);
	assert_int_equal(c.nres, 2);
	assert_int_equal(d.state, RPCRDMA_NFS41_DELEG_RECALLED);
	reply = 24 + enc(rpcrdma_nfs41_cb_res_enc, &c, out, sizeof(out));

	/* the request one byte over the granted size */
	cb_session(&s, &d);
	cb_call(&c);
	len = cb_len(&c);
	s.info.back.maxrequestsize = (uint32_t)len - 1;
	cb_serve(&s, &c);
	assert_refused(&s, &c, RPCRDMA_NFS4ERR_REQ_TOO_BIG);
	cb_session(&s, &d);
	cb_call(&c);
	s.info.back.maxrequestsize = (uint32_t)len;
	assert_int_equal(cb_serve(&s, &c), RPCRDMA_NFS4_OK);

	/* over what we offered, a server granting more notwithstanding: a
	 * tag of 4096 bytes (more than the decoder keeps) */
	cb_session(&s, &d);
	s.info.back.maxrequestsize = 1u << 20;
	cb_call(&c);
	{
		static uint8_t big[8192];
		struct rpcrdma_xdr_stream x;

		len = enc(rpcrdma_nfs41_cb_args_enc, &c, out, sizeof(out));
		rpcrdma_xdr_init(&x, big, sizeof(big));
		assert_int_equal(rpcrdma_xdr_encode_u32(&x, 4096), 0);
		memset(big + 4, 't', 4096);
		memcpy(big + 4 + 4096, out + 4, len - 4); /* after the empty tag */
		assert_int_equal(dec(rpcrdma_nfs41_cb_args_dec, &c, big, len + 4096), 0);
		rpcrdma__nfs41_cb_eval(&s, &c);
		assert_refused(&s, &c, RPCRDMA_NFS4ERR_REQ_TOO_BIG);
	}

	/* the reply one byte over the granted size */
	cb_session(&s, &d);
	s.info.back.maxresponsesize = (uint32_t)reply - 1;
	cb_call(&c);
	cb_serve(&s, &c);
	assert_refused(&s, &c, RPCRDMA_NFS4ERR_REP_TOO_BIG);
	cb_session(&s, &d);
	s.info.back.maxresponsesize = (uint32_t)reply;
	cb_call(&c);
	assert_int_equal(cb_serve(&s, &c), RPCRDMA_NFS4_OK);

	/* too big to cache: only when the server asks for it to be cached */
	cb_session(&s, &d);
	s.info.back.maxresponsesize_cached = (uint32_t)reply - 1;
	cb_call(&c);
	c.ops[0].arg.sequence.cachethis = true;
	cb_serve(&s, &c);
	assert_refused(&s, &c, RPCRDMA_NFS4ERR_REP_TOO_BIG_TO_CACHE);
	cb_session(&s, &d);
	s.info.back.maxresponsesize_cached = 0; /* as knfsd grants */
	cb_call(&c);
	assert_int_equal(cb_serve(&s, &c), RPCRDMA_NFS4_OK);
	cb_session(&s, &d);
	s.info.back.maxresponsesize_cached = (uint32_t)reply;
	cb_call(&c);
	c.ops[0].arg.sequence.cachethis = true;
	assert_int_equal(cb_serve(&s, &c), RPCRDMA_NFS4_OK);
}

/*
 * RFC 8881 16.2.3: the reply's tag SHOULD be the call's, for CB_COMPOUND
 * too.  A tag of 300 bytes (any a call within the sizes we offer can
 * carry) comes back whole, answer and replay alike.
 */
static void test_cb_tag_echo(void **state)
{
	static struct rpcrdma_nfs41_session s;
	static struct s41_deleg d;
	static struct rpcrdma_nfs41_cb_compound c, r;
	static uint8_t in[2048], call[2048], out[2048];
	char tag[301];
	size_t len, n;

	(void)state;
	memset(tag, 0, sizeof(tag));
	for (size_t i = 0; i < 300; i++)
		tag[i] = (char)('a' + i % 26);
	cb_call(&c);
	len = enc(rpcrdma_nfs41_cb_args_enc, &c, in, sizeof(in));
	/* the same call with the tag in place of the empty one */
	put32(call, 0, 300);
	memcpy(call + 4, tag, 300);
	memcpy(call + 304, in + 4, len - 4);
	cb_session(&s, &d);
	for (int replay = 0; replay < 2; replay++) {
		memset(&c, 0, sizeof(c));
		assert_int_equal(dec(rpcrdma_nfs41_cb_args_dec, &c, call, len + 300), 0);
		rpcrdma__nfs41_cb_eval(&s, &c);
		assert_int_equal(c.status, RPCRDMA_NFS4_OK);
		n = enc(rpcrdma_nfs41_cb_res_enc, &c, out, sizeof(out));
		cb_call(&r);
		assert_int_equal(dec(rpcrdma_nfs41_cb_res_dec, &r, out, n), 0);
		assert_int_equal(r.tag_len, 300);
		assert_memory_equal(r.tag, tag, 300);
	}
	assert_int_equal(s.info.stats.cb_replays, 1);
}

/*
 * A CB_SEQUENCE (slot 0, sequence id 4) with @nlists referring-call
 * lists of @ncalls calls each, into @buf; its length.
 */
static size_t cb_referring(uint8_t *buf, size_t room, uint32_t nlists, uint32_t ncalls)
{
	static struct rpcrdma_nfs41_cb_compound c;
	size_t len, need;

	cb_call(&c);
	c.nops = c.count = 1;
	len = enc(rpcrdma_nfs41_cb_args_enc, &c, buf, room);
	need = len + (size_t)nlists * (20 + (size_t)ncalls * 8);
	assert_true(need <= room);
	put32(buf, len - 4, nlists);
	for (uint32_t i = 0; i < nlists; i++) {
		memcpy(buf + len, sid, sizeof(sid));
		put32(buf, len + 16, ncalls);
		len += 20;
		for (uint32_t k = 0; k < ncalls; k++, len += 8) {
			put32(buf, len, k + 1); /* rc_sequenceid */
			put32(buf, len + 4, k); /* rc_slotid */
		}
	}
	return len;
}

/*
 * Referring-call lists (RFC 8881 20.9.3): as many as a call within the
 * sizes we offer carries are walked and the call answered, 17 lists or a
 * list of 65 calls not refused as garbage; lists that make the call larger
 * than that get NFS4ERR_REQ_TOO_BIG (2.10.6.4), the slot unmoved.
 */
static void test_cb_referring(void **state)
{
	static struct rpcrdma_nfs41_session s;
	static struct s41_deleg d;
	static struct rpcrdma_nfs41_cb_compound c;
	static uint8_t buf[16384];
	static const uint32_t shapes[][2] = {{17, 0}, {1, 65}, {40, 2}};
	size_t len;

	(void)state;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		len = cb_referring(buf, sizeof(buf), shapes[i][0], shapes[i][1]);
		assert_true(len <= RPCRDMA_NFS41_CB_MAX_MSG - 100);
		memset(&c, 0, sizeof(c));
		assert_int_equal(dec(rpcrdma_nfs41_cb_args_dec, &c, buf, len), 0);
		assert_int_equal(c.ops[0].arg.sequence.nreferring, shapes[i][0]);
		cb_session(&s, &d);
		rpcrdma__nfs41_cb_eval(&s, &c);
		assert_int_equal(c.status, RPCRDMA_NFS4_OK);
		assert_int_equal(s.cb_slots[0].seqid, 4);
	}
	/* 600 calls: more than 4096 bytes */
	len = cb_referring(buf, sizeof(buf), 1, 600);
	assert_true(len > RPCRDMA_NFS41_CB_MAX_MSG);
	memset(&c, 0, sizeof(c));
	assert_int_equal(dec(rpcrdma_nfs41_cb_args_dec, &c, buf, len), 0);
	cb_session(&s, &d);
	rpcrdma__nfs41_cb_eval(&s, &c);
	assert_int_equal(c.status, RPCRDMA_NFS4ERR_REQ_TOO_BIG);
	assert_int_equal(c.nres, 1);
	assert_int_equal(s.cb_slots[0].seqid, 3);
	/* lists cut short are still garbage */
	for (size_t n = len - 8; n < len; n++)
		assert_int_not_equal(dec(rpcrdma_nfs41_cb_args_dec, &c, buf, n), 0);
}

/*
 * RFC 8881 18.36.3: a slot starts at sequence id 0, as if it held an
 * answer of NFS4ERR_SEQ_MISORDERED, and the first CB_SEQUENCE on it MUST
 * have sequence id 1, any other getting NFS4ERR_SEQ_MISORDERED: 0 too,
 * which is no retry of anything (not NFS4ERR_RETRY_UNCACHED_REP).
 */
static void test_cb_first_seqid(void **state)
{
	static struct rpcrdma_nfs41_session s;
	static struct s41_deleg d;
	static struct rpcrdma_nfs41_cb_compound c;

	(void)state;
	for (uint32_t seq = 0; seq < 3; seq++) {
		cb_session(&s, &d);
		s.cb_slots[0].seqid = 0;
		cb_call(&c);
		c.ops[0].arg.sequence.seqid = seq;
		cb_serve(&s, &c);
		if (seq == 1) {
			assert_int_equal(c.status, RPCRDMA_NFS4_OK);
			assert_int_equal(s.cb_slots[0].seqid, 1);
			continue;
		}
		assert_int_equal(c.status, RPCRDMA_NFS4ERR_SEQ_MISORDERED);
		assert_int_equal(c.nres, 1);
		assert_int_equal(s.cb_slots[0].seqid, 0);
		assert_int_equal(d.state, RPCRDMA_NFS41_DELEG_HELD);
	}
}

static void test_stats_cover(void **state)
{
	size_t n = 0;

	(void)state;
#define COUNT(name) n++;
	RPCRDMA_NFS41_STATS(COUNT)
#undef COUNT
	assert_int_equal(n * sizeof(uint64_t), sizeof(struct rpcrdma_nfs41_stats));
	assert_string_not_equal(rpcrdma_nfs41_strerror(RPCRDMA_ERR_NFS41_NO_BACKCHANNEL),
				rpcrdma_strerror(-99999));
	assert_string_equal(rpcrdma_nfs41_strerror(RPCRDMA_ERR_NFS41_NO_BACKCHANNEL),
			    rpcrdma_strerror(RPCRDMA_ERR_NFS41_NO_BACKCHANNEL));
	assert_string_equal(rpcrdma_nfs41_why_str(1), "contention");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_args_bytes),      cmocka_unit_test(test_session_args_round_trip),
	    cmocka_unit_test(test_builders_refuse), cmocka_unit_test(test_results_round_trip),
	    cmocka_unit_test(test_results_hostile), cmocka_unit_test(test_results_fewer_than_ops),
	    cmocka_unit_test(test_cb_args),         cmocka_unit_test(test_cb_res),
	    cmocka_unit_test(test_cb_sizes),        cmocka_unit_test(test_cb_tag_echo),
	    cmocka_unit_test(test_cb_referring),    cmocka_unit_test(test_cb_first_seqid),
	    cmocka_unit_test(test_stats_cover),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
