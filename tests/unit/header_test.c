/*
 * Transport header codec tests: the XDR examples of rfc5666bis-04 section
 * 5.7 byte for byte, every validation failure with the answer it demands,
 * the legacy and Version Two forms, and round trips over random headers.
 */
#include <endian.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rpcrdma/header.h"

#define XID 0xdc4ddae4u
#define H(i) (0x1000u + (i))
#define L(i) (0x2000u + (i))
#define OHI(i) (0xea4ddae4u + (i))
#define OLO(i) (0xd0942000u + (i))
#define OO(i) OHI(i), OLO(i)
#define O64(i) (((uint64_t)OHI(i) << 32) | OLO(i))

/* Header storage is large; keep it off the stack. */
static struct rpcrdma_hdr hdr, hdr2;

static size_t put_words(uint8_t *buf, const uint32_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t be = htobe32(w[i]);

		memcpy(buf + 4 * i, &be, 4);
	}
	return 4 * n;
}

#define WORDS(buf, ...)                                                                    \
	put_words(buf, (const uint32_t[]){__VA_ARGS__},                                   \
		  sizeof((const uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t))

static int decode(const uint8_t *buf, size_t len, struct rpcrdma_hdr_fault *f)
{
	return rpcrdma_hdr_decode(buf, len, NULL, &hdr, f);
}

static void expect_refusal(const uint8_t *buf, size_t len, int rc_want,
			   enum rpcrdma_hdr_action action)
{
	struct rpcrdma_hdr_fault f;

	assert_int_equal(decode(buf, len, &f), rc_want);
	assert_int_equal(f.action, action);
	assert_non_null(f.reason);
}

/* Section 5.7: "Frequently a requester does not provide any chunks.  In that
 * case, after the four fixed fields ... three 32-bit fields that contain
 * zero." */
static void test_no_chunks(void **state)
{
	uint8_t buf[64];
	struct rpcrdma_hdr_fault f;
	size_t n = WORDS(buf, XID, 1, 32, RPCRDMA_PROC_MSG, 0, 0, 0, XID, 0, 2);

	(void)state;
	assert_int_equal(decode(buf, n, &f), 0);
	assert_int_equal(f.action, RPCRDMA_HDR_ACCEPT);
	assert_int_equal(hdr.xid, XID);
	assert_int_equal(hdr.vers, 1);
	assert_int_equal(hdr.credit, 32);
	assert_int_equal(hdr.proc, RPCRDMA_PROC_MSG);
	assert_int_equal(hdr.nreads, 0);
	assert_int_equal(hdr.nwrites, 0);
	assert_false(hdr.has_reply);
	assert_int_equal(hdr.hdr_len, RPCRDMA_HDR_MIN_SIZE);
	assert_int_equal(hdr.payload_len, 12);
}

/* Section 5.7's three examples in one header: a Read chunk of three
 * segments ("1 PHLOO 1 PHLOO 1 PHLOO 0"), a Write list of a 3-segment and a
 * 2-segment chunk ("1 3 HLOO HLOO HLOO 1 2 HLOO HLOO 0") and a 2-segment
 * Reply chunk ("1 2 HLOO HLOO"). */
static void test_section_5_7_examples(void **state)
{
	uint8_t buf[512], out[512];
	struct rpcrdma_segment segs[3];
	struct rpcrdma_hdr_fault f;
	size_t n = WORDS(buf, XID, 1, 128, RPCRDMA_PROC_NOMSG,
			 /* read list */
			 1, 0, H(0), L(0), OO(0), 1, 0, H(1), L(1), OO(1), 1, 0, H(2), L(2), OO(2), 0,
			 /* write list */
			 1, 3, H(3), L(3), OO(3), H(4), L(4), OO(4), H(5), L(5), OO(5),
			 1, 2, H(6), L(6), OO(6), H(7), L(7), OO(7), 0,
			 /* reply chunk */
			 1, 2, H(8), L(8), OO(8), H(9), L(9), OO(9));

	(void)state;
	assert_int_equal(decode(buf, n, &f), 0);
	assert_int_equal(hdr.hdr_len, n);
	assert_int_equal(hdr.payload_len, 0);
	assert_int_equal(hdr.nreads, 3);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(hdr.reads[i].position, 0);
		assert_int_equal(hdr.reads[i].target.handle, H(i));
		assert_int_equal(hdr.reads[i].target.length, L(i));
		assert_true(hdr.reads[i].target.offset == O64(i));
	}
	assert_int_equal(hdr.nwrites, 2);
	assert_int_equal(hdr.writes[0].nsegs, 3);
	assert_int_equal(hdr.writes[1].nsegs, 2);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(rpcrdma_hdr_chunk_seg(&hdr, &hdr.writes[0], i)->handle, H(3 + i));
	for (uint32_t i = 0; i < 2; i++)
		assert_true(rpcrdma_hdr_chunk_seg(&hdr, &hdr.writes[1], i)->offset == O64(6 + i));
	assert_null(rpcrdma_hdr_chunk_seg(&hdr, &hdr.writes[1], 2));
	assert_true(hdr.has_reply);
	assert_int_equal(hdr.reply.nsegs, 2);
	assert_int_equal(rpcrdma_hdr_chunk_seg(&hdr, &hdr.reply, 1)->length, L(9));

	/* The builders produce the same bytes. */
	rpcrdma_hdr_init(&hdr2, XID, 1, 128, RPCRDMA_PROC_NOMSG);
	for (uint32_t i = 0; i < 3; i++) {
		struct rpcrdma_segment s = {H(i), L(i), O64(i)};

		assert_int_equal(rpcrdma_hdr_add_read(&hdr2, 0, &s), 0);
	}
	for (uint32_t i = 0; i < 3; i++)
		segs[i] = (struct rpcrdma_segment){H(3 + i), L(3 + i), O64(3 + i)};
	assert_int_equal(rpcrdma_hdr_add_write(&hdr2, segs, 3), 0);
	for (uint32_t i = 0; i < 2; i++)
		segs[i] = (struct rpcrdma_segment){H(6 + i), L(6 + i), O64(6 + i)};
	assert_int_equal(rpcrdma_hdr_add_write(&hdr2, segs, 2), 0);
	for (uint32_t i = 0; i < 2; i++)
		segs[i] = (struct rpcrdma_segment){H(8 + i), L(8 + i), O64(8 + i)};
	assert_int_equal(rpcrdma_hdr_set_reply(&hdr2, segs, 2), 0);
	assert_int_equal(rpcrdma_hdr_set_reply(&hdr2, segs, 2), -EINVAL);
	assert_int_equal(rpcrdma_hdr_encoded_size(&hdr2), n);
	assert_int_equal(rpcrdma_hdr_encode(&hdr2, out, sizeof(out)), (int)n);
	assert_memory_equal(out, buf, n);
}

static void test_short_header_dropped(void **state)
{
	uint8_t buf[16];

	(void)state;
	WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG);
	for (size_t len = 0; len < 16; len++)
		expect_refusal(buf, len, RPCRDMA_ERR_DROP, RPCRDMA_HDR_DROP);
}

static void test_version_mismatch(void **state)
{
	uint8_t buf[64];
	struct rpcrdma_hdr_limits lim;
	struct rpcrdma_hdr_fault f;
	struct rpcrdma_hdr err;
	uint8_t out[32];
	size_t n = WORDS(buf, XID, 7, 1, RPCRDMA_PROC_MSG, 0, 0, 0, XID);

	(void)state;
	expect_refusal(buf, n, RPCRDMA_ERR_VERSION, RPCRDMA_HDR_REPLY_ERR_VERS);
	assert_int_equal(hdr.xid, XID);
	assert_int_equal(hdr.vers, 7);

	/* A Version One-only end refuses Version Two the same way. */
	rpcrdma_hdr_limits_default(&lim);
	lim.vers_high = 1;
	n = WORDS(buf, XID, 2, 1, RPCRDMA_PROC_MSG, 0, 0, 0, XID);
	assert_int_equal(rpcrdma_hdr_decode(buf, n, &lim, &hdr, &f), RPCRDMA_ERR_VERSION);

	/* The answer: RDMA_ERROR, same XID and version, ERR_VERS 1..1. */
	assert_int_equal(rpcrdma_hdr_init_error(&err, &hdr, f.action, 1, 1, 8), 0);
	assert_int_equal(rpcrdma_hdr_encode(&err, out, sizeof(out)), 28);
	n = WORDS(buf, XID, 2, 8, RPCRDMA_PROC_ERROR, RPCRDMA_ERR_VERS, 1, 1);
	assert_memory_equal(out, buf, n);
	assert_int_equal(rpcrdma_hdr_init_error(&err, &hdr, RPCRDMA_HDR_DROP, 1, 1, 8), -EINVAL);
}

static void test_unknown_proc(void **state)
{
	uint8_t buf[64];
	size_t n;

	(void)state;
	n = WORDS(buf, XID, 1, 1, 6, 0, 0, 0);
	expect_refusal(buf, n, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);
	/* RDMA_OPTIONAL does not exist in Version One. */
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_OPTIONAL, 1, 0);
	expect_refusal(buf, n, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);
	n = WORDS(buf, XID, 1, 1, 0xffffffffu);
	expect_refusal(buf, n, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);
}

static void test_read_position_checks(void **state)
{
	uint8_t buf[128];
	size_t n;

	(void)state;
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 1, 6, H(0), L(0), OO(0), 0, 0, 0, XID);
	expect_refusal(buf, n, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 1, 8, H(0), L(0), OO(0), 1, 4, H(1), L(1),
		  OO(1), 0, 0, 0, XID);
	expect_refusal(buf, n, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);
	/* Two chunks at rising positions are fine. */
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 1, 4, H(0), L(0), OO(0), 1, 8, H(1), L(1),
		  OO(1), 0, 0, 0, XID);
	assert_int_equal(decode(buf, n, &(struct rpcrdma_hdr_fault){0}), 0);
	assert_int_equal(hdr.nreads, 2);
}

static void test_segment_overflow(void **state)
{
	uint8_t buf[128];
	size_t n;

	(void)state;
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 0, 1, 1, H(0), 2, 0xffffffffu, 0xffffffffu,
		  0, 0, XID);
	expect_refusal(buf, n, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);
	/* The last byte that can be addressed is fine. */
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 0, 1, 1, H(0), 1, 0xffffffffu, 0xfffffffeu,
		  0, 0, XID);
	assert_int_equal(decode(buf, n, &(struct rpcrdma_hdr_fault){0}), 0);
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_NOMSG, 1, 0, H(0), 0x10, 0xffffffffu, 0xfffffff8u,
		  0, 0);
	expect_refusal(buf, n, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);
}

static void test_nomsg_needs_chunks(void **state)
{
	uint8_t buf[128];
	size_t n;

	(void)state;
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_NOMSG, 0, 0, 0);
	expect_refusal(buf, n, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);
	/* A Write list cannot carry the message. */
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_NOMSG, 0, 1, 1, H(0), L(0), OO(0), 0, 0);
	expect_refusal(buf, n, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_NOMSG, 0, 0, 1, 1, H(0), L(0), OO(0));
	assert_int_equal(decode(buf, n, &(struct rpcrdma_hdr_fault){0}), 0);
}

static void test_msg_payload_xid(void **state)
{
	uint8_t buf[64];
	size_t n;

	(void)state;
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 0, 0, 0);
	expect_refusal(buf, n, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 0, 0, 0, XID + 1, 0);
	expect_refusal(buf, n, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);
	/* Three bytes of payload are not an XID either. */
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 0, 0, 0, XID);
	expect_refusal(buf, n - 1, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);
}

static void test_bad_discriminators(void **state)
{
	uint8_t buf[128];
	size_t n;

	(void)state;
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 2, 0, 0, XID);
	expect_refusal(buf, n, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 0, 0x100, 0, XID);
	expect_refusal(buf, n, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 0, 0, 0xffffffffu, XID);
	expect_refusal(buf, n, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);
	/* Inside a list, after a first entry. */
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 0, 1, 0, 3, 0, XID);
	expect_refusal(buf, n, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);
}

static void test_limits(void **state)
{
	static uint8_t buf[8192];
	struct rpcrdma_hdr_limits lim;
	struct rpcrdma_hdr_fault f;
	size_t n;

	(void)state;
	rpcrdma_hdr_limits_default(&lim);
	lim.max_reads = 2;
	lim.max_write_chunks = 1;
	lim.max_chunk_segs = 2;

	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 1, 0, H(0), L(0), OO(0), 1, 0, H(1), L(1),
		  OO(1), 1, 0, H(2), L(2), OO(2), 0, 0, 0, XID);
	assert_int_equal(rpcrdma_hdr_decode(buf, n, &lim, &hdr, &f), RPCRDMA_ERR_BAD_HEADER);
	assert_string_equal(f.reason, "too many Read list entries");

	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 0, 1, 0, 1, 0, 0, 0, XID);
	assert_int_equal(rpcrdma_hdr_decode(buf, n, &lim, &hdr, &f), RPCRDMA_ERR_BAD_HEADER);
	assert_string_equal(f.reason, "too many Write list entries");

	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 0, 0, 1, 3, H(0), L(0), OO(0), H(1), L(1),
		  OO(1), H(2), L(2), OO(2), XID);
	assert_int_equal(rpcrdma_hdr_decode(buf, n, &lim, &hdr, &f), RPCRDMA_ERR_BAD_HEADER);
	assert_string_equal(f.reason, "too many segments in a chunk");

	/* A count far beyond what the message holds is refused before any
	 * segment is read. */
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 0, 1, 0xffffffffu);
	expect_refusal(buf, n, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);

	/* A header longer than max_hdr_size, though the message holds it all. */
	rpcrdma_hdr_limits_default(&lim);
	lim.max_hdr_size = 64;
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 0, 1, 3, H(0), L(0), OO(0), H(1), L(1), OO(1),
		  H(2), L(2), OO(2), 0, 0, XID);
	assert_int_equal(rpcrdma_hdr_decode(buf, n, &lim, &hdr, &f), RPCRDMA_ERR_BAD_HEADER);
	assert_string_equal(f.reason, "header larger than the configured limit");
	lim.max_hdr_size = n - 4;
	assert_int_equal(rpcrdma_hdr_decode(buf, n, &lim, &hdr, &f), 0);
	assert_int_equal(hdr.payload_len, 4);

	/* The total segment capacity holds even with generous limits. */
	rpcrdma_hdr_limits_default(&lim);
	lim.max_chunk_segs = UINT32_MAX;
	lim.max_hdr_size = sizeof(buf);
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 0, 0, 1, RPCRDMA_HDR_MAX_SEGS + 1);
	memset(buf + n, 0, (RPCRDMA_HDR_MAX_SEGS + 1) * RPCRDMA_SEGMENT_SIZE);
	n += (RPCRDMA_HDR_MAX_SEGS + 1) * RPCRDMA_SEGMENT_SIZE;
	n += WORDS(buf + n, XID);
	assert_int_equal(rpcrdma_hdr_decode(buf, n, &lim, &hdr, &f), RPCRDMA_ERR_BAD_HEADER);
	assert_string_equal(f.reason, "too many segments in the header");

	/* Limits above the arrays' capacities act as the capacities: one Read
	 * entry and one Write chunk more than struct rpcrdma_hdr holds are
	 * refused, not stored past the arrays. */
	lim.max_reads = UINT32_MAX;
	lim.max_write_chunks = UINT32_MAX;
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG);
	for (int i = 0; i <= RPCRDMA_HDR_MAX_READS; i++)
		n += WORDS(buf + n, 1, 0, H(i), L(i), OO(i));
	n += WORDS(buf + n, 0, 0, 0, XID);
	assert_int_equal(rpcrdma_hdr_decode(buf, n, &lim, &hdr, &f), RPCRDMA_ERR_BAD_HEADER);
	assert_string_equal(f.reason, "too many Read list entries");
	assert_int_equal(hdr.nreads, RPCRDMA_HDR_MAX_READS);
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 0);
	for (int i = 0; i <= RPCRDMA_HDR_MAX_WRITE_CHUNKS; i++)
		n += WORDS(buf + n, 1, 0);
	n += WORDS(buf + n, 0, 0, XID);
	assert_int_equal(rpcrdma_hdr_decode(buf, n, &lim, &hdr, &f), RPCRDMA_ERR_BAD_HEADER);
	assert_string_equal(f.reason, "too many Write list entries");
	assert_int_equal(hdr.nwrites, RPCRDMA_HDR_MAX_WRITE_CHUNKS);
}

/* Cutting a valid header anywhere never crashes and never accepts. */
static void test_truncation_everywhere(void **state)
{
	uint8_t buf[512];
	size_t n = WORDS(buf, XID, 1, 128, RPCRDMA_PROC_NOMSG, 1, 0, H(0), L(0), OO(0), 0, 1, 2,
			 H(3), L(3), OO(3), H(4), L(4), OO(4), 0, 1, 1, H(8), L(8), OO(8));

	(void)state;
	for (size_t len = 0; len < n; len++) {
		struct rpcrdma_hdr_fault f;
		int rc = decode(buf, len, &f);

		assert_true(rc < 0);
		assert_int_equal(f.action, len < 16 ? RPCRDMA_HDR_DROP : RPCRDMA_HDR_REPLY_ERR_CHUNK);
		assert_true(f.offset <= len);
	}
	assert_int_equal(decode(buf, n, &(struct rpcrdma_hdr_fault){0}), 0);
}

static void test_rdma_error_forms(void **state)
{
	uint8_t buf[64];
	struct rpcrdma_hdr_fault f;
	size_t n;

	(void)state;
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_ERROR, RPCRDMA_ERR_VERS, 1, 2);
	assert_int_equal(decode(buf, n, &f), 0);
	assert_int_equal(hdr.err, RPCRDMA_ERR_VERS);
	assert_int_equal(hdr.vers_low, 1);
	assert_int_equal(hdr.vers_high, 2);
	assert_int_equal(hdr.payload_len, 0);

	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_ERROR, RPCRDMA_ERR_CHUNK);
	assert_int_equal(decode(buf, n, &f), 0);
	assert_int_equal(hdr.err, RPCRDMA_ERR_CHUNK);

	/* Errors that cannot be decoded are dropped, never answered. */
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_ERROR, RPCRDMA_ERR_VERS, 1, 2);
	for (size_t len = 16; len < n; len++)
		expect_refusal(buf, len, RPCRDMA_ERR_DROP, RPCRDMA_HDR_DROP);
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_ERROR, 9);
	expect_refusal(buf, n, RPCRDMA_ERR_DROP, RPCRDMA_HDR_DROP);
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_ERROR, RPCRDMA_ERR_INVAL_OPTION);
	expect_refusal(buf, n, RPCRDMA_ERR_DROP, RPCRDMA_HDR_DROP);
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_ERROR, RPCRDMA_ERR_VERS, 3, 2);
	expect_refusal(buf, n, RPCRDMA_ERR_DROP, RPCRDMA_HDR_DROP);

	/* An ERR_VERS from a peer of another version is still understood. */
	n = WORDS(buf, XID, 9, 1, RPCRDMA_PROC_ERROR, RPCRDMA_ERR_VERS, 9, 9);
	assert_int_equal(decode(buf, n, &f), 0);
	assert_int_equal(hdr.vers_low, 9);
	n = WORDS(buf, XID, 9, 1, RPCRDMA_PROC_ERROR, RPCRDMA_ERR_CHUNK);
	expect_refusal(buf, n, RPCRDMA_ERR_DROP, RPCRDMA_HDR_DROP);
}

static void test_legacy_forms(void **state)
{
	uint8_t buf[128], out[128];
	struct rpcrdma_hdr_fault f;
	size_t n;

	(void)state;
	/* RFC 5666 RDMA_MSGP: align and thresh, then the chunk lists. */
	n = WORDS(buf, XID, 1, 4, RPCRDMA_PROC_MSGP, 4096, 1024, 0, 0, 0, XID, 0);
	assert_int_equal(decode(buf, n, &f), 0);
	assert_int_equal(hdr.align, 4096);
	assert_int_equal(hdr.thresh, 1024);
	assert_int_equal(hdr.hdr_len, 36);
	assert_int_equal(rpcrdma_hdr_encode(&hdr, out, sizeof(out)), 36);
	assert_memory_equal(out, buf, 36);
	expect_refusal(buf, 20, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);

	n = WORDS(buf, XID, 1, 4, RPCRDMA_PROC_DONE);
	assert_int_equal(decode(buf, n, &f), 0);
	assert_int_equal(hdr.proc, RPCRDMA_PROC_DONE);
	assert_int_equal(hdr.hdr_len, 16);
	assert_string_equal(rpcrdma_proc_name(hdr.proc), "RDMA_DONE");
	assert_null(rpcrdma_proc_name(77));
}

static void test_version_two(void **state)
{
	uint8_t buf[128], out[128];
	struct rpcrdma_hdr_limits lim;
	struct rpcrdma_hdr_fault f;
	size_t n;

	(void)state;
	/* RDMA_OPTIONAL {opttype, optinfo<>}, then an RPC message may follow. */
	n = WORDS(buf, XID, 2, 8, RPCRDMA_PROC_OPTIONAL, 0x1234, 5, 0x01020304, 0x05000000, XID);
	assert_int_equal(decode(buf, n, &f), 0);
	assert_int_equal(hdr.opttype, 0x1234);
	assert_int_equal(hdr.optinfo_len, 5);
	assert_int_equal(hdr.optinfo[4], 5);
	assert_int_equal(hdr.hdr_len, 32);
	assert_int_equal(hdr.payload_len, 4);
	assert_int_equal(rpcrdma_hdr_encoded_size(&hdr), 32);
	assert_int_equal(rpcrdma_hdr_encode(&hdr, out, sizeof(out)), 32);
	assert_memory_equal(out, buf, 32);

	rpcrdma_hdr_limits_default(&lim);
	lim.max_optinfo = 4;
	assert_int_equal(rpcrdma_hdr_decode(buf, n, &lim, &hdr, &f), RPCRDMA_ERR_BAD_HEADER);
	expect_refusal(buf, 26, RPCRDMA_ERR_BAD_HEADER, RPCRDMA_HDR_REPLY_ERR_CHUNK);

	/* RDMA_ERR_INVAL_OPTION exists in Version Two. */
	n = WORDS(buf, XID, 2, 8, RPCRDMA_PROC_ERROR, RPCRDMA_ERR_INVAL_OPTION);
	assert_int_equal(decode(buf, n, &f), 0);
	assert_int_equal(hdr.err, RPCRDMA_ERR_INVAL_OPTION);

	/* Chunked messages are unchanged. */
	n = WORDS(buf, XID, 2, 8, RPCRDMA_PROC_MSG, 0, 0, 0, XID);
	assert_int_equal(decode(buf, n, &f), 0);
	/* MSGP is reserved with no body in Version Two. */
	n = WORDS(buf, XID, 2, 8, RPCRDMA_PROC_MSGP);
	assert_int_equal(decode(buf, n, &f), 0);
	assert_int_equal(hdr.hdr_len, 16);
}

/*
 * A struct rpcrdma_hdr whose segment count was set past segs[] by hand
 * (the decoder never does): rpcrdma_hdr_chunk_seg() finds nothing there,
 * and the builders refuse to append, rather than reach or write past the
 * array.  On the heap, alone, for ASan and UBSan.
 */
static void test_counts_past_capacity(void **state)
{
	struct rpcrdma_hdr *h = calloc(1, sizeof(*h));
	struct rpcrdma_chunk c = {RPCRDMA_HDR_MAX_SEGS + 10, 1};
	struct rpcrdma_segment seg = {1, 2, 3};

	(void)state;
	assert_non_null(h);
	rpcrdma_hdr_init(h, XID, 1, 1, RPCRDMA_PROC_MSG);
	h->nsegs = RPCRDMA_HDR_MAX_SEGS + 100;
	assert_null(rpcrdma_hdr_chunk_seg(h, &c, 0));
	assert_int_equal(rpcrdma_hdr_add_write(h, &seg, 1), -EINVAL);
	assert_int_equal(rpcrdma_hdr_set_reply(h, &seg, 1), -EINVAL);
	assert_int_equal(h->nwrites, 0);
	assert_false(h->has_reply);
	free(h);
}

static void test_encode_errors(void **state)
{
	uint8_t buf[256], before[256];
	struct rpcrdma_segment seg = {1, 2, 3};
	size_t size;

	(void)state;
	rpcrdma_hdr_init(&hdr2, XID, 1, 1, RPCRDMA_PROC_MSG);
	assert_int_equal(rpcrdma_hdr_add_read(&hdr2, 0, &seg), 0);
	assert_int_equal(rpcrdma_hdr_add_write(&hdr2, &seg, 1), 0);
	assert_int_equal(rpcrdma_hdr_set_reply(&hdr2, &seg, 1), 0);
	size = rpcrdma_hdr_encoded_size(&hdr2);
	assert_int_equal(size, 16 + (4 + 20) + 4 + (4 + 4 + 16) + 4 + (4 + 4 + 16));

	memset(buf, 0xa5, sizeof(buf));
	memcpy(before, buf, sizeof(buf));
	for (size_t cap = 0; cap < size; cap++) {
		assert_int_equal(rpcrdma_hdr_encode(&hdr2, buf, cap), RPCRDMA_ERR_NOSPACE);
		assert_memory_equal(buf, before, sizeof(buf));
	}
	assert_int_equal(rpcrdma_hdr_encode(&hdr2, buf, size), (int)size);

	hdr2.writes[0].first = 5;
	assert_int_equal(rpcrdma_hdr_encoded_size(&hdr2), 0);
	assert_int_equal(rpcrdma_hdr_encode(&hdr2, buf, sizeof(buf)), -EINVAL);
	hdr2.writes[0].first = 0;
	hdr2.proc = 9;
	assert_int_equal(rpcrdma_hdr_encode(&hdr2, buf, sizeof(buf)), -EINVAL);
	hdr2.proc = RPCRDMA_PROC_ERROR;
	hdr2.err = 7;
	assert_int_equal(rpcrdma_hdr_encode(&hdr2, buf, sizeof(buf)), -EINVAL);
	hdr2.proc = RPCRDMA_PROC_OPTIONAL;
	hdr2.optinfo = NULL;
	hdr2.optinfo_len = 3;
	assert_int_equal(rpcrdma_hdr_encode(&hdr2, buf, sizeof(buf)), -EINVAL);

	rpcrdma_hdr_init(&hdr2, XID, 1, 1, RPCRDMA_PROC_MSG);
	for (int i = 0; i < RPCRDMA_HDR_MAX_READS; i++)
		assert_int_equal(rpcrdma_hdr_add_read(&hdr2, 0, &seg), 0);
	assert_int_equal(rpcrdma_hdr_add_read(&hdr2, 0, &seg), -ENOSPC);
	assert_int_equal(rpcrdma_hdr_add_read(&hdr2, 0, NULL), -EINVAL);
	assert_int_equal(rpcrdma_hdr_add_write(&hdr2, NULL, 1), -EINVAL);
}

/* Encoding into a scatter list gives the same bytes as into one buffer. */
static void test_encode_scatter(void **state)
{
	uint8_t flat[128], a[7], b[13], c[128];
	struct iovec iov[3] = {{a, sizeof(a)}, {b, sizeof(b)}, {c, sizeof(c)}};
	struct rpcrdma_segment seg = {0xabcdef01, 4096, 0x1122334455667788ull};
	struct rpcrdma_xdr_stream x;
	int n;

	(void)state;
	rpcrdma_hdr_init(&hdr2, XID, 1, 64, RPCRDMA_PROC_MSG);
	assert_int_equal(rpcrdma_hdr_add_write(&hdr2, &seg, 1), 0);
	n = rpcrdma_hdr_encode(&hdr2, flat, sizeof(flat));
	assert_true(n > 0);
	assert_int_equal(rpcrdma_xdr_init_iov(&x, iov, 3), 0);
	assert_int_equal(rpcrdma_hdr_encode_xdr(&hdr2, &x), n);
	assert_memory_equal(a, flat, sizeof(a));
	assert_memory_equal(b, flat + sizeof(a), sizeof(b));
	assert_memory_equal(c, flat + sizeof(a) + sizeof(b), (size_t)n - sizeof(a) - sizeof(b));
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, so a failure can be replayed. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static struct rpcrdma_segment rnd_seg(void)
{
	struct rpcrdma_segment s;

	s.handle = (uint32_t)rnd();
	s.length = (uint32_t)rnd();
	s.offset = rnd();
	if (s.offset > UINT64_MAX - s.length)
		s.offset = UINT64_MAX - s.length;
	return s;
}

static void random_header(struct rpcrdma_hdr *h)
{
	static const uint32_t procs[] = {RPCRDMA_PROC_MSG, RPCRDMA_PROC_NOMSG, RPCRDMA_PROC_MSGP,
					 RPCRDMA_PROC_DONE, RPCRDMA_PROC_ERROR,
					 RPCRDMA_PROC_OPTIONAL};
	static uint8_t info[64];
	uint32_t proc = procs[rnd() % 6];
	uint32_t vers = proc == RPCRDMA_PROC_OPTIONAL ? 2 : 1 + (uint32_t)(rnd() % 2);
	struct rpcrdma_segment segs[16];
	uint32_t pos = 0;

	rpcrdma_hdr_init(h, (uint32_t)rnd(), vers, (uint32_t)rnd(), proc);
	switch (proc) {
	case RPCRDMA_PROC_MSGP:
		if (vers != 1)
			return;
		h->align = (uint32_t)rnd();
		h->thresh = (uint32_t)rnd();
		/* fall through */
	case RPCRDMA_PROC_MSG:
	case RPCRDMA_PROC_NOMSG:
		for (uint32_t i = rnd() % 10; i; i--) {
			struct rpcrdma_segment s = rnd_seg();

			pos += (uint32_t)(rnd() % 3) * 4;
			assert_int_equal(rpcrdma_hdr_add_read(h, pos, &s), 0);
		}
		for (uint32_t i = rnd() % 5; i; i--) {
			uint32_t n = (uint32_t)(rnd() % 17);

			for (uint32_t j = 0; j < n; j++)
				segs[j] = rnd_seg();
			assert_int_equal(rpcrdma_hdr_add_write(h, segs, n), 0);
		}
		if (rnd() % 2 || (proc == RPCRDMA_PROC_NOMSG && h->nreads == 0)) {
			uint32_t n = (uint32_t)(rnd() % 17);

			for (uint32_t j = 0; j < n; j++)
				segs[j] = rnd_seg();
			assert_int_equal(rpcrdma_hdr_set_reply(h, segs, n), 0);
		}
		break;
	case RPCRDMA_PROC_ERROR:
		h->err = 1 + (uint32_t)(rnd() % (vers == 2 ? 3 : 2));
		if (h->err == RPCRDMA_ERR_VERS) {
			h->vers_low = (uint32_t)(rnd() % 4);
			h->vers_high = h->vers_low + (uint32_t)(rnd() % 4);
		}
		break;
	case RPCRDMA_PROC_OPTIONAL:
		h->opttype = (uint32_t)rnd();
		h->optinfo_len = (uint32_t)(rnd() % sizeof(info));
		for (size_t i = 0; i < sizeof(info); i++)
			info[i] = (uint8_t)rnd();
		h->optinfo = info;
		break;
	}
}

static void test_round_trip_random(void **state)
{
	static uint8_t buf[16384];
	struct rpcrdma_hdr_limits lim;

	(void)state;
	rpcrdma_hdr_limits_default(&lim);
	lim.max_hdr_size = sizeof(buf);
	for (int iter = 0; iter < 20000; iter++) {
		struct rpcrdma_hdr_fault f;
		size_t len;
		int n;

		random_header(&hdr2);
		n = rpcrdma_hdr_encode(&hdr2, buf, sizeof(buf));
		assert_true(n > 0);
		assert_int_equal((size_t)n, rpcrdma_hdr_encoded_size(&hdr2));
		len = (size_t)n;
		if (hdr2.proc == RPCRDMA_PROC_MSG ||
		    (hdr2.proc == RPCRDMA_PROC_MSGP && hdr2.vers == 1)) {
			uint32_t be = htobe32(hdr2.xid);

			memcpy(buf + len, &be, 4);
			len += 4;
		}
		assert_int_equal(rpcrdma_hdr_decode(buf, len, &lim, &hdr, &f), 0);
		assert_int_equal(hdr.hdr_len, (size_t)n);
		assert_int_equal(hdr.xid, hdr2.xid);
		assert_int_equal(hdr.vers, hdr2.vers);
		assert_int_equal(hdr.credit, hdr2.credit);
		assert_int_equal(hdr.proc, hdr2.proc);
		assert_int_equal(hdr.align, hdr2.align);
		assert_int_equal(hdr.thresh, hdr2.thresh);
		assert_int_equal(hdr.nreads, hdr2.nreads);
		assert_memory_equal(hdr.reads, hdr2.reads, hdr.nreads * sizeof(hdr.reads[0]));
		assert_int_equal(hdr.nwrites, hdr2.nwrites);
		assert_memory_equal(hdr.writes, hdr2.writes, hdr.nwrites * sizeof(hdr.writes[0]));
		assert_int_equal(hdr.has_reply, hdr2.has_reply);
		if (hdr.has_reply)
			assert_memory_equal(&hdr.reply, &hdr2.reply, sizeof(hdr.reply));
		assert_int_equal(hdr.nsegs, hdr2.nsegs);
		assert_memory_equal(hdr.segs, hdr2.segs, hdr.nsegs * sizeof(hdr.segs[0]));
		assert_int_equal(hdr.err, hdr2.err);
		assert_int_equal(hdr.vers_low, hdr2.vers_low);
		assert_int_equal(hdr.vers_high, hdr2.vers_high);
		assert_int_equal(hdr.opttype, hdr2.opttype);
		assert_int_equal(hdr.optinfo_len, hdr2.optinfo_len);
		if (hdr.optinfo_len)
			assert_memory_equal(hdr.optinfo, hdr2.optinfo, hdr.optinfo_len);
	}
}

/* A failed decode leaves no descriptor from an earlier message behind. */
static void test_failed_decode_leaves_no_stale_chunks(void **state)
{
	uint8_t buf[128];
	struct rpcrdma_hdr_fault f;
	size_t n;

	(void)state;
	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 0, 1, 2, H(0), L(0), OO(0), H(1), L(1), OO(1),
		  0, 1, 1, H(2), L(2), OO(2), XID);
	assert_int_equal(decode(buf, n, &f), 0);
	assert_int_equal(hdr.reply.first, 2);

	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 0, 1);
	assert_int_equal(decode(buf, n, &f), RPCRDMA_ERR_BAD_HEADER);
	assert_int_equal(hdr.nwrites, 1);
	assert_int_equal(hdr.writes[0].first, 0);
	assert_int_equal(hdr.writes[0].nsegs, 0);
	assert_false(hdr.has_reply);
	assert_int_equal(hdr.reply.nsegs, 0);

	n = WORDS(buf, XID, 1, 1, RPCRDMA_PROC_MSG, 0, 0, 1);
	assert_int_equal(decode(buf, n, &f), RPCRDMA_ERR_BAD_HEADER);
	assert_true(hdr.has_reply);
	assert_int_equal(hdr.reply.first, 0);
	assert_int_equal(hdr.reply.nsegs, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_chunks),
		cmocka_unit_test(test_section_5_7_examples),
		cmocka_unit_test(test_short_header_dropped),
		cmocka_unit_test(test_version_mismatch),
		cmocka_unit_test(test_unknown_proc),
		cmocka_unit_test(test_read_position_checks),
		cmocka_unit_test(test_segment_overflow),
		cmocka_unit_test(test_nomsg_needs_chunks),
		cmocka_unit_test(test_msg_payload_xid),
		cmocka_unit_test(test_bad_discriminators),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_truncation_everywhere),
		cmocka_unit_test(test_rdma_error_forms),
		cmocka_unit_test(test_legacy_forms),
		cmocka_unit_test(test_version_two),
		cmocka_unit_test(test_encode_errors),
		cmocka_unit_test(test_counts_past_capacity),
		cmocka_unit_test(test_encode_scatter),
		cmocka_unit_test(test_round_trip_random),
		cmocka_unit_test(test_failed_decode_leaves_no_stale_chunks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
