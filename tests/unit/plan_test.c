/*
 * Planning tests: inline thresholds, call and reply planning with header
 * sizes checked against the real encoder, Write chunk filling, and the
 * Read-chunk rebuild, by example (the calls the Linux NFS client sends,
 * inline limits to the byte, round-up for every length mod 4, every
 * refusal) and by seeded random properties: a call stream cut into chunks,
 * encoded, decoded and rebuilt must come back byte for byte, and a hostile
 * Read list must never yield pieces that break the layout's invariants.
 *
 * RPCRDMA_TEST_SEED overrides the seed of the random tests.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/plan.h"
#include "rpcrdma/header.h"

#define XID 0x4f6c6465u
#define CREDITS 128u
#define OFF_BASE 0x7f5a00000000ull

/* Header storage is large; keep it off the stack. */
static struct rpcrdma_hdr call, built, decoded;
static struct rpcrdma_rebuild_piece pieces[RPCRDMA_REBUILD_MAX_PIECES];

static struct rpcrdma_inline thr(uint32_t send_max, uint32_t recv_max)
{
	struct rpcrdma_inline t = {.send_max = send_max, .recv_max = recv_max};

	return t;
}

static struct rpcrdma_segment seg(uint32_t handle, uint32_t length)
{
	struct rpcrdma_segment s = {.handle = handle, .length = length,
				    .offset = OFF_BASE + ((uint64_t)handle << 20)};

	return s;
}

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

/* Deterministic random numbers: xorshift64*, seed from the environment. */
static uint64_t rng_state;
static uint64_t seed_used;

static void rng_seed(uint64_t dflt)
{
	const char *env = getenv("RPCRDMA_TEST_SEED");

	seed_used = env ? strtoull(env, NULL, 0) : dflt;
	rng_state = seed_used ? seed_used : 1;
}

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint32_t rng_below(uint32_t n)
{
	return n ? (uint32_t)(rng() % n) : 0;
}

#define CHECK(iter, cond)                                                                  \
	do {                                                                               \
		if (!(cond)) {                                                             \
			print_error("seed %" PRIu64 " iteration %d: %s\n", seed_used,     \
				    (int)(iter), #cond);                                   \
			fail();                                                            \
		}                                                                          \
	} while (0)

/*
 * The call header a plan describes, built with the header builders so its
 * size comes from the encoder: the size the plan claims must be this.
 * Reply chunk segments share @reply_len; Read segments get made-up sizes.
 */
static void build_call(struct rpcrdma_hdr *h, const struct rpcrdma_call_shape *s,
		       const struct rpcrdma_call_plan *p)
{
	struct rpcrdma_segment segs[RPCRDMA_HDR_MAX_SEGS];
	uint32_t reply_segs = s->reply_segs ? s->reply_segs : 1;

	rpcrdma_hdr_init(h, XID, RPCRDMA_VERSION_ONE, CREDITS,
			 p->form == RPCRDMA_CALL_LONG ? RPCRDMA_PROC_NOMSG : RPCRDMA_PROC_MSG);
	if (p->form == RPCRDMA_CALL_READ_CHUNKS) {
		for (uint32_t i = 0; i < s->ddp_segs; i++) {
			struct rpcrdma_segment rs = seg(i, 4096);

			assert_int_equal(rpcrdma_hdr_add_read(h, 100, &rs), 0);
		}
	} else if (p->form == RPCRDMA_CALL_LONG) {
		struct rpcrdma_segment rs = seg(0, (uint32_t)s->full_len);

		assert_int_equal(rpcrdma_hdr_add_read(h, 0, &rs), 0);
	}
	if (s->write_chunk) {
		uint32_t nchunks = s->write_chunks ? s->write_chunks : 1;

		/* One segment for each chunk but the last, which takes the rest. */
		for (uint32_t i = 0; i < s->write_segs; i++)
			segs[i] = seg(0x100 + i, 65536);
		for (uint32_t c = 0; c + 1 < nchunks; c++)
			assert_int_equal(rpcrdma_hdr_add_write(h, &segs[c], 1), 0);
		assert_int_equal(rpcrdma_hdr_add_write(h, &segs[nchunks - 1],
						       s->write_segs - (nchunks - 1)),
				 0);
	}
	if (p->reply_chunk) {
		uint64_t left = p->reply_chunk_len;

		for (uint32_t i = 0; i < reply_segs; i++) {
			uint64_t share = (left + (reply_segs - i) - 1) / (reply_segs - i);

			segs[i] = seg(0x200 + i, (uint32_t)share);
			left -= share;
		}
		assert_int_equal(rpcrdma_hdr_set_reply(h, segs, reply_segs), 0);
	}
}

static void expect_call(const struct rpcrdma_call_shape *s, const struct rpcrdma_inline *t,
			enum rpcrdma_call_form form, bool reply_chunk, size_t hdr_len)
{
	struct rpcrdma_call_plan p;

	assert_int_equal(rpcrdma__plan_call(s, t, &p), 0);
	assert_int_equal(p.form, form);
	assert_int_equal(p.reply_chunk, reply_chunk);
	assert_int_equal(p.reply_chunk_len, reply_chunk ? s->max_reply : 0);
	assert_int_equal(p.hdr_len, hdr_len);
	build_call(&built, s, &p);
	assert_int_equal(rpcrdma_hdr_encoded_size(&built), hdr_len);
}

/* Inline thresholds. */

static void test_inline_negotiate(void **state)
{
	struct rpcrdma_cm_private pd, none;
	struct rpcrdma_inline t;
	uint8_t buf[RPCRDMA_CM_PRIVATE_SIZE];

	(void)state;
	/* A peer that sent nothing: 1024 both ways (4.3.3). */
	rpcrdma_cm_private_decode(NULL, 0, &none);
	rpcrdma__inline_negotiate(&none, 4096, 4096, &t);
	assert_int_equal(t.send_max, 1024);
	assert_int_equal(t.recv_max, 4096);

	/* The peer's receive size bounds our sends; its send size does not
	 * matter to us. */
	pd = (struct rpcrdma_cm_private){.version = 1, .send_size = 1024, .recv_size = 8192};
	assert_int_equal(rpcrdma_cm_private_encode(&pd, buf, sizeof(buf)), 8);
	rpcrdma_cm_private_decode(buf, sizeof(buf), &pd);
	assert_true(pd.present);
	rpcrdma__inline_negotiate(&pd, 4096, 2048, &t);
	assert_int_equal(t.send_max, 4096);
	assert_int_equal(t.recv_max, 2048);
	rpcrdma__inline_negotiate(&pd, 65536, 2048, &t);
	assert_int_equal(t.send_max, 8192);
	rpcrdma__inline_negotiate(&pd, 8192, 1024, &t);
	assert_int_equal(t.send_max, 8192);

	/* No private data at all, or a size below the floor: 1024. */
	rpcrdma__inline_negotiate(NULL, 4096, 4096, &t);
	assert_int_equal(t.send_max, 1024);
	pd.recv_size = 0;
	rpcrdma__inline_negotiate(&pd, 4096, 4096, &t);
	assert_int_equal(t.send_max, 1024);
	pd.recv_size = RPCRDMA_CM_MAX_INLINE;
	rpcrdma__inline_negotiate(&pd, RPCRDMA_CM_MAX_INLINE, 1024, &t);
	assert_int_equal(t.send_max, RPCRDMA_CM_MAX_INLINE);
}

/*
 * Our 8 KiB default against the peers we meet: a kernel peer advertising
 * its 4 KiB default, one advertising nothing (Version One: 1024), and one
 * of ours or a larger one.  Our Sends never exceed what the peer
 * advertised; what we advertise is what we receive.
 */
static void test_inline_negotiate_default_8k(void **state)
{
	struct rpcrdma_cm_private ours, kernel, none, big;
	struct rpcrdma_inline t;
	uint8_t buf[RPCRDMA_CM_PRIVATE_SIZE];

	(void)state;
	/* What we put in our private data survives the wire. */
	ours = (struct rpcrdma_cm_private){.version = 1, .send_size = 8192, .recv_size = 8192};
	assert_int_equal(rpcrdma_cm_private_encode(&ours, buf, sizeof(buf)), 8);
	rpcrdma_cm_private_decode(buf, sizeof(buf), &ours);
	assert_true(ours.present);
	assert_int_equal(ours.send_size, 8192);
	assert_int_equal(ours.recv_size, 8192);
	assert_int_equal(buf[6], 7); /* RFC 8797: size / 1024 - 1 */
	assert_int_equal(buf[7], 7);

	/* Two of ours: 8 KiB each way, so 4 KiB I/O goes inline. */
	rpcrdma__inline_negotiate(&ours, 8192, 8192, &t);
	assert_int_equal(t.send_max, 8192);
	assert_int_equal(t.recv_max, 8192);

	/* The kernel's 4 KiB: we send at most 4 KiB, and still take 8. */
	kernel = (struct rpcrdma_cm_private){.version = 1, .send_size = 4096, .recv_size = 4096};
	assert_int_equal(rpcrdma_cm_private_encode(&kernel, buf, sizeof(buf)), 8);
	rpcrdma_cm_private_decode(buf, sizeof(buf), &kernel);
	rpcrdma__inline_negotiate(&kernel, 8192, 8192, &t);
	assert_int_equal(t.send_max, 4096);
	assert_int_equal(t.recv_max, 8192);

	/* Nothing advertised, or data that is not RFC 8797's: 1024. */
	rpcrdma_cm_private_decode(NULL, 0, &none);
	rpcrdma__inline_negotiate(&none, 8192, 8192, &t);
	assert_int_equal(t.send_max, 1024);
	memset(buf, 0xab, sizeof(buf));
	rpcrdma_cm_private_decode(buf, sizeof(buf), &none);
	assert_false(none.present);
	rpcrdma__inline_negotiate(&none, 8192, 8192, &t);
	assert_int_equal(t.send_max, 1024);

	/* A peer advertising more than our own send size: ours bounds it. */
	big = (struct rpcrdma_cm_private){.version = 1, .send_size = 65536, .recv_size = 65536};
	assert_int_equal(rpcrdma_cm_private_encode(&big, buf, sizeof(buf)), 8);
	rpcrdma_cm_private_decode(buf, sizeof(buf), &big);
	rpcrdma__inline_negotiate(&big, 8192, 8192, &t);
	assert_int_equal(t.send_max, 8192);
}

/* Results inline: the whole reply behind the 28-byte smallest header. */
static void test_results_inline(void **state)
{
	struct rpcrdma_inline t8 = thr(8192, 8192), t4 = thr(4096, 4096), t1 = thr(8192, 1024);

	(void)state;
	/* 4 KiB READ: reply header, length word and data. */
	assert_true(rpcrdma__plan_results_inline(4096 + 128, &t8, 65536));
	assert_false(rpcrdma__plan_results_inline(4096 + 128, &t4, 65536));
	/* The exact limit: 28 + max_reply <= recv_max. */
	assert_true(rpcrdma__plan_results_inline(8192 - 28, &t8, 65536));
	assert_false(rpcrdma__plan_results_inline(8192 - 27, &t8, 65536));
	assert_true(rpcrdma__plan_results_inline(1024 - 28, &t1, 65536));
	assert_false(rpcrdma__plan_results_inline(1024 - 27, &t1, 65536));
	/* Only our receive size counts, not what we may send. */
	assert_false(rpcrdma__plan_results_inline(2000, &t1, 65536));
	/* The responder's Send bounds it too: a kernel server sends 4 KiB,
	 * one with no private data 1024. */
	assert_false(rpcrdma__plan_results_inline(4096 + 128, &t8, 4096));
	assert_true(rpcrdma__plan_results_inline(4096 - 28, &t8, 4096));
	assert_false(rpcrdma__plan_results_inline(4096 - 27, &t8, 4096));
	assert_false(rpcrdma__plan_results_inline(1000, &t8, 1024));
	assert_true(rpcrdma__plan_results_inline(996, &t8, 1024));
	/* Unknown size, or none of the thresholds: never. */
	assert_false(rpcrdma__plan_results_inline(0, &t8, 65536));
	assert_false(rpcrdma__plan_results_inline(100, NULL, 65536));
	assert_false(rpcrdma__plan_results_inline(SIZE_MAX, &t8, 65536));
}

/* Call planning. */

/* NFSv3 GETATTR: 56 bytes of arguments after a ~64-byte RPC header. */
static void test_call_small_inline(void **state)
{
	struct rpcrdma_call_shape s = {.full_len = 120, .reduced_len = 120, .max_reply = 200};
	struct rpcrdma_inline t = thr(1024, 1024);

	(void)state;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, false, RPCRDMA_HDR_MIN_SIZE);
	s.max_reply = 0;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, false, 28);
}

/* Header + call == threshold goes inline; one byte more cannot. */
static void test_call_inline_limit(void **state)
{
	struct rpcrdma_call_shape s = {0};
	struct rpcrdma_inline t = thr(1024, 1024);

	(void)state;
	s.full_len = s.reduced_len = 1024 - 28;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, false, 28);
	s.full_len = s.reduced_len = 1024 - 28 + 1;
	/* No DDP item: straight to a Long Call, 16 + (24 + 4) + 4 + 4. */
	expect_call(&s, &t, RPCRDMA_CALL_LONG, false, 52);

	/* The same with a Reply chunk of one segment in the header. */
	s.max_reply = 4096;
	s.full_len = s.reduced_len = 1024 - 48;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, true, 48);
	s.full_len = s.reduced_len = 1024 - 48 + 1;
	expect_call(&s, &t, RPCRDMA_CALL_LONG, true, 72);
}

/*
 * NFSv3 WRITE of 131072 bytes as the Linux client sends it: RPC header,
 * AUTH_SYS credential, file handle, offset, count, stable and the opaque's
 * length inline (112 bytes), the data in one Read chunk at position 112,
 * no padding (the length is a multiple of 4).
 */
static void test_call_nfs_write(void **state)
{
	struct rpcrdma_call_shape s = {
		.full_len = 112 + 131072, .reduced_len = 112, .nddp = 1, .ddp_segs = 1,
		.max_reply = 136,
	};
	struct rpcrdma_inline t = thr(1024, 1024);
	struct rpcrdma_call_plan p;
	struct rpcrdma_segment rs = {.handle = 0x1a2b, .length = 131072,
				     .offset = 0xffff8800deadb000ull};
	static uint8_t wire[512 + 112];
	uint8_t want[52];
	size_t n;
	int hlen;

	(void)state;
	expect_call(&s, &t, RPCRDMA_CALL_READ_CHUNKS, false, 52);

	/* The header byte for byte. */
	assert_int_equal(rpcrdma__plan_call(&s, &t, &p), 0);
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	assert_int_equal(rpcrdma_hdr_add_read(&call, 112, &rs), 0);
	hlen = rpcrdma_hdr_encode(&call, wire, sizeof(wire));
	assert_int_equal(hlen, (int)p.hdr_len);
	n = WORDS(want, XID, 1, CREDITS, 0, /* fixed words, RDMA_MSG */
		  1, 112, 0x1a2b, 131072, 0xffff8800u, 0xdeadb000u, 0, /* Read list */
		  0, /* Write list */
		  0); /* Reply chunk */
	assert_int_equal(n, 52);
	assert_memory_equal(wire, want, n);

	/* Received and laid out again: 112 inline bytes, then the chunk. */
	WORDS(wire + hlen, XID, 0 /* CALL */);
	memset(wire + hlen + 8, 0xab, 104);
	{
		struct rpcrdma_hdr_fault f;

		assert_int_equal(rpcrdma_hdr_decode(wire, (size_t)hlen + 112, NULL, &decoded, &f),
				 0);
	}
	assert_int_equal(decoded.payload_len, 112);
	assert_int_equal(rpcrdma__plan_rebuild(&decoded, decoded.payload_len, pieces, 112 + 131072),
			 2);
	assert_false(pieces[0].chunk);
	assert_int_equal(pieces[0].inline_off, 0);
	assert_int_equal(pieces[0].len, 112);
	assert_true(pieces[1].chunk);
	assert_int_equal(pieces[1].first, 0);
	assert_int_equal(pieces[1].nsegs, 1);
	assert_int_equal(pieces[1].len, 131072);
	assert_int_equal(pieces[1].pad, 0);
	assert_int_equal(pieces[1].chunk_off, 0);
	/* One byte less room than the call needs. */
	assert_int_equal(rpcrdma__plan_rebuild(&decoded, decoded.payload_len, pieces,
					       112 + 131072 - 1),
			 -EMSGSIZE);

	/* The same data in 32 page-list segments: 16 + 32 * 24 + 4 + 4 + 4. */
	s.ddp_segs = 32;
	expect_call(&s, &t, RPCRDMA_CALL_READ_CHUNKS, false, 796);
}

/* The reduced call fitting exactly, and by one byte too many. */
static void test_call_read_chunks_limit(void **state)
{
	struct rpcrdma_call_shape s = {.full_len = 70000, .nddp = 2, .ddp_segs = 3};
	struct rpcrdma_inline t = thr(1024, 1024);
	size_t hdr = 16 + 3 * 24 + 4 + 4 + 4;

	(void)state;
	s.reduced_len = 1024 - hdr;
	expect_call(&s, &t, RPCRDMA_CALL_READ_CHUNKS, false, hdr);
	s.reduced_len++;
	expect_call(&s, &t, RPCRDMA_CALL_LONG, false, 52);

	/* More segments than a Read list may carry: Long, however small. */
	s.reduced_len = 100;
	s.ddp_segs = RPCRDMA_HDR_MAX_READS + 1;
	t = thr(65536, 1024);
	s.full_len = 70000;
	expect_call(&s, &t, RPCRDMA_CALL_LONG, false, 52);
	s.ddp_segs = RPCRDMA_HDR_MAX_READS;
	expect_call(&s, &t, RPCRDMA_CALL_READ_CHUNKS, false, 16 + 64 * 24 + 12);
}

/* A call with no DDP-eligible item that does not fit: a Long Call, e.g.
 * an NFSv4 SETATTR carrying a large ACL. */
static void test_call_long(void **state)
{
	struct rpcrdma_call_shape s = {.full_len = 6000, .reduced_len = 6000, .max_reply = 300};
	struct rpcrdma_inline t = thr(1024, 1024);

	(void)state;
	expect_call(&s, &t, RPCRDMA_CALL_LONG, false, 52);
	/* The same call under a 4096-byte peer (Version Two's default) and
	 * a 8192-byte one, where it fits. */
	t.send_max = 4096;
	expect_call(&s, &t, RPCRDMA_CALL_LONG, false, 52);
	t.send_max = 8192;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, false, 28);
	/* An inline call that is the full threshold leaves no room at all. */
	s.full_len = s.reduced_len = 8192;
	expect_call(&s, &t, RPCRDMA_CALL_LONG, false, 52);
}

/*
 * NFSv3 READDIR with a count of 8192: the reply can be 8192 bytes of
 * entries plus its RPC and NFS headers, more than the 1024 we receive, so
 * the call offers a Reply chunk sized for the whole reply.
 */
static void test_call_readdir_reply_chunk(void **state)
{
	struct rpcrdma_call_shape s = {.full_len = 148, .reduced_len = 148,
				       .max_reply = 8192 + 128};
	struct rpcrdma_inline t = thr(1024, 1024);

	(void)state;
	/* One segment: 16 + 4 + 4 + (4 + 4 + 16). */
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, true, 48);
	/* Two pages' worth registered as three segments: 16 + 4 + 4 + 4 + 4 + 48. */
	s.reply_segs = 3;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, true, 80);
	/* A receive size that takes the whole reply needs no Reply chunk. */
	t.recv_max = 8192 + 128 + 28;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, false, 28);
	t.recv_max--;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, true, 80);
}

/*
 * The reply header echoes the Write list: a reply that would fit alone
 * needs a Reply chunk once the echoed Write chunk takes its share.
 */
static void test_call_reply_accounts_write_echo(void **state)
{
	struct rpcrdma_call_shape s = {.full_len = 120, .reduced_len = 120};
	struct rpcrdma_inline t = thr(1024, 1024);

	(void)state;
	/* No Write chunk: the reply header is 28 bytes. */
	s.max_reply = 1024 - 28;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, false, 28);
	s.max_reply++;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, true, 48);

	/* A Write chunk of one segment adds 24 to both headers. */
	s.write_chunk = true;
	s.write_segs = 1;
	s.max_reply = 1024 - 28;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, true, 72);
	s.max_reply = 1024 - 52;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, false, 52);
	s.max_reply = 1024 - 52 + 1;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, true, 72);

	/* Four segments: 16 + 4 + (4 + 4 + 64 + 4) + 4 = 100. */
	s.write_segs = 4;
	s.max_reply = 1024 - 100;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, false, 100);
	s.max_reply++;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, true, 120);

	/* Three chunks (an NFSv4 COMPOUND's Write list) of 1, 1 and 2
	 * segments: 16 + 4 + (4 + 3 * 8 + 4 * 16) + 4 = 116. */
	s.write_chunks = 3;
	s.max_reply = 1024 - 116;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, false, 116);
	s.max_reply++;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, true, 136);
	/* More chunks than segments cannot be. */
	s.write_chunks = 5;
	assert_int_equal(rpcrdma__plan_call(&s, &t, &(struct rpcrdma_call_plan){0}), -EINVAL);
	s.write_chunks = 0;
}

/* NFSv3 READ of 131072 bytes: the data comes back in the Write chunk and
 * the rest of the reply (about 120 bytes) inline. */
static void test_call_nfs_read(void **state)
{
	struct rpcrdma_call_shape s = {.full_len = 128, .reduced_len = 128, .write_chunk = true,
				       .write_segs = 1, .max_reply = 120};
	struct rpcrdma_inline t = thr(1024, 1024);
	struct rpcrdma_call_plan p;
	uint8_t buf[64], want[64];
	size_t n;

	(void)state;
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, false, 52);
	assert_int_equal(rpcrdma__plan_call(&s, &t, &p), 0);
	build_call(&built, &s, &p);
	assert_int_equal(rpcrdma_hdr_encode(&built, buf, sizeof(buf)), 52);
	n = WORDS(want, XID, 1, CREDITS, 0, 0, /* no Read list */
		  1, 1, 0x100, 65536, (uint32_t)(OFF_BASE >> 32) + 0, 0x10000000u, 0, /* Write list */
		  0);
	assert_int_equal(n, 52);
	assert_memory_equal(buf, want, n);
}

static void test_call_emsgsize(void **state)
{
	struct rpcrdma_call_shape s = {.full_len = 2000, .reduced_len = 2000, .write_chunk = true};
	struct rpcrdma_call_plan p = {0};
	struct rpcrdma_inline t;

	(void)state;
	/* A Write chunk of 62 segments is a 1004-byte Write list: the reply
	 * header alone, 16 + 4 + 1004 + 4, cannot arrive in 1024 bytes. */
	s.write_segs = 62;
	t = thr(65536, 1024);
	assert_int_equal(rpcrdma__plan_call(&s, &t, &p), -EMSGSIZE);
	/* Nor can a Long Call's header, 16 + 28 + 1004 + 4, be sent. */
	t = thr(1024, 65536);
	assert_int_equal(rpcrdma__plan_call(&s, &t, &p), -EMSGSIZE);
	/* 61 segments: 1052 - 16 = 1036 is still over; 60 leaves 1020. */
	s.write_segs = 60;
	expect_call(&s, &t, RPCRDMA_CALL_LONG, false, 16 + 28 + (4 + 4 + 960 + 4) + 4);

	/* A Long reply's header must arrive too: a big Reply chunk. */
	s.write_segs = 1;
	s.max_reply = 100000;
	s.reply_segs = 62;
	t = thr(65536, 1024);
	assert_int_equal(rpcrdma__plan_call(&s, &t, &p), -EMSGSIZE);
	s.reply_segs = 59; /* 16 + 4 + 28 + 4 + 4 + 944 = 1000 */
	expect_call(&s, &t, RPCRDMA_CALL_INLINE, true, 1000);

	/* More segments than struct rpcrdma_hdr holds. */
	t = thr(1u << 20, 1u << 20);
	s.write_segs = 200;
	s.reply_segs = 57;
	assert_int_equal(rpcrdma__plan_call(&s, &t, &p), -EMSGSIZE);
	s.reply_segs = 56;
	assert_int_equal(rpcrdma__plan_call(&s, &t, &p), 0);
	s.write_segs = UINT32_MAX;
	assert_int_equal(rpcrdma__plan_call(&s, &t, &p), -EMSGSIZE);

	/* A tiny send threshold: not even the smallest Long header fits. */
	s = (struct rpcrdma_call_shape){.full_len = 100, .reduced_len = 100};
	t = thr(51, 1024);
	assert_int_equal(rpcrdma__plan_call(&s, &t, &p), -EMSGSIZE);
	t = thr(52, 1024);
	expect_call(&s, &t, RPCRDMA_CALL_LONG, false, 52);
}

static void test_call_invalid(void **state)
{
	struct rpcrdma_call_shape s = {.full_len = 100, .reduced_len = 100};
	struct rpcrdma_inline t = thr(1024, 1024);
	struct rpcrdma_call_plan p;

	(void)state;
	assert_int_equal(rpcrdma__plan_call(NULL, &t, &p), -EINVAL);
	assert_int_equal(rpcrdma__plan_call(&s, NULL, &p), -EINVAL);
	assert_int_equal(rpcrdma__plan_call(&s, &t, NULL), -EINVAL);
	s.reduced_len = 101;
	assert_int_equal(rpcrdma__plan_call(&s, &t, &p), -EINVAL);
	s.reduced_len = 50;
	s.nddp = 2;
	s.ddp_segs = 1;
	assert_int_equal(rpcrdma__plan_call(&s, &t, &p), -EINVAL);
	s.nddp = 0;
	assert_int_equal(rpcrdma__plan_call(&s, &t, &p), -EINVAL);
	s.ddp_segs = 0;
	s.write_chunk = true;
	assert_int_equal(rpcrdma__plan_call(&s, &t, &p), -EINVAL);
	s.write_chunk = false;
	s.write_segs = 1;
	assert_int_equal(rpcrdma__plan_call(&s, &t, &p), -EINVAL);
	s.write_segs = 0;
	assert_int_equal(rpcrdma__plan_call(&s, &t, &p), 0);
}

/* Reply planning. */

static size_t reply_hdr_size(const struct rpcrdma_hdr *c, enum rpcrdma_reply_form form)
{
	struct rpcrdma_segment segs[RPCRDMA_HDR_MAX_SEGS];

	if (form == RPCRDMA_REPLY_ERR_CHUNK) {
		assert_int_equal(rpcrdma_hdr_init_error(&built, c, RPCRDMA_HDR_REPLY_ERR_CHUNK, 1, 1,
							CREDITS),
				 0);
		return rpcrdma_hdr_encoded_size(&built);
	}
	rpcrdma_hdr_init(&built, c->xid, c->vers, CREDITS,
			 form == RPCRDMA_REPLY_LONG ? RPCRDMA_PROC_NOMSG : RPCRDMA_PROC_MSG);
	for (uint32_t i = 0; i < c->nwrites; i++) {
		for (uint32_t j = 0; j < c->writes[i].nsegs; j++)
			segs[j] = *rpcrdma_hdr_chunk_seg(c, &c->writes[i], j);
		assert_int_equal(rpcrdma_hdr_add_write(&built, segs, c->writes[i].nsegs), 0);
	}
	if (form == RPCRDMA_REPLY_LONG) {
		for (uint32_t j = 0; j < c->reply.nsegs; j++)
			segs[j] = *rpcrdma_hdr_chunk_seg(c, &c->reply, j);
		assert_int_equal(rpcrdma_hdr_set_reply(&built, segs, c->reply.nsegs), 0);
	}
	return rpcrdma_hdr_encoded_size(&built);
}

static void expect_reply(const struct rpcrdma_hdr *c, size_t reply_len, uint32_t send_max,
			 enum rpcrdma_reply_form form, size_t hdr_len)
{
	struct rpcrdma_inline t = thr(send_max, 1024);
	size_t got = 0;

	assert_int_equal(rpcrdma__plan_reply(c, reply_len, &t, &got), form);
	assert_int_equal(got, hdr_len);
	assert_int_equal(reply_hdr_size(c, form), hdr_len);
}

static void test_reply_plain(void **state)
{
	(void)state;
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	expect_reply(&call, 100, 1024, RPCRDMA_REPLY_INLINE, 28);
	expect_reply(&call, 1024 - 28, 1024, RPCRDMA_REPLY_INLINE, 28);
	/* No Reply chunk offered: a reply one byte too long is ERR_CHUNK. */
	expect_reply(&call, 1024 - 28 + 1, 1024, RPCRDMA_REPLY_ERR_CHUNK, 20);
	expect_reply(&call, SIZE_MAX, 1024, RPCRDMA_REPLY_ERR_CHUNK, 20);
	/* The out parameter is optional. */
	assert_int_equal(rpcrdma__plan_reply(&call, 100, &(struct rpcrdma_inline){1024, 1024}, NULL),
			 RPCRDMA_REPLY_INLINE);
}

static void test_reply_echoes_write_list(void **state)
{
	struct rpcrdma_segment w[3] = {seg(1, 65536), seg(2, 65536), seg(3, 4096)};
	/* 16 + 4 + (4 + 4 + 32) + (4 + 4 + 16) + 4 + 4 */
	size_t hdr = 92;

	(void)state;
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	assert_int_equal(rpcrdma_hdr_add_write(&call, w, 2), 0);
	assert_int_equal(rpcrdma_hdr_add_write(&call, w + 2, 1), 0);
	expect_reply(&call, 120, 1024, RPCRDMA_REPLY_INLINE, hdr);
	expect_reply(&call, 1024 - hdr, 1024, RPCRDMA_REPLY_INLINE, hdr);
	expect_reply(&call, 1024 - hdr + 1, 1024, RPCRDMA_REPLY_ERR_CHUNK, 20);
}

/* The READDIR reply of test_call_readdir_reply_chunk, from the responder. */
static void test_reply_readdir_long(void **state)
{
	struct rpcrdma_segment r[2] = {seg(7, 4096), seg(8, 4224)};

	(void)state;
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	assert_int_equal(rpcrdma_hdr_set_reply(&call, r, 1), 0);
	/* 16 + 4 + 4 + (4 + 4 + 16) */
	expect_reply(&call, 3000, 1024, RPCRDMA_REPLY_LONG, 48);
	expect_reply(&call, 4096, 1024, RPCRDMA_REPLY_LONG, 48);
	expect_reply(&call, 4097, 1024, RPCRDMA_REPLY_ERR_CHUNK, 20);
	/* Short enough for the Send: inline, the Reply chunk left out. */
	expect_reply(&call, 1024 - 28, 1024, RPCRDMA_REPLY_INLINE, 28);
	expect_reply(&call, 1024 - 28 + 1, 1024, RPCRDMA_REPLY_LONG, 48);

	/* Two segments: their lengths add up. */
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	assert_int_equal(rpcrdma_hdr_set_reply(&call, r, 2), 0);
	expect_reply(&call, 8192 + 128, 1024, RPCRDMA_REPLY_LONG, 64);
	expect_reply(&call, 8192 + 129, 1024, RPCRDMA_REPLY_ERR_CHUNK, 20);

	/* The Reply chunk of a Long Call (RDMA_NOMSG) works the same. */
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_NOMSG);
	{
		struct rpcrdma_segment pz = seg(9, 2000);

		assert_int_equal(rpcrdma_hdr_add_read(&call, 0, &pz), 0);
	}
	assert_int_equal(rpcrdma_hdr_set_reply(&call, r, 2), 0);
	expect_reply(&call, 5000, 1024, RPCRDMA_REPLY_LONG, 64);
	expect_reply(&call, 100, 1024, RPCRDMA_REPLY_INLINE, 28);

	/* An empty Reply chunk holds nothing. */
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	assert_int_equal(rpcrdma_hdr_set_reply(&call, NULL, 0), 0);
	expect_reply(&call, 2000, 1024, RPCRDMA_REPLY_ERR_CHUNK, 20);
}

/* A Long reply whose own header overflows the requester's receive. */
static void test_reply_long_header_too_big(void **state)
{
	struct rpcrdma_segment w[32], r[16];

	(void)state;
	for (uint32_t i = 0; i < 32; i++)
		w[i] = seg(i, 4096);
	for (uint32_t i = 0; i < 16; i++)
		r[i] = seg(0x40 + i, 65536);
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	/* Write list 4 + 2 * (8 + 16 * 16) = 532; Reply chunk 4 + 8 + 256. */
	assert_int_equal(rpcrdma_hdr_add_write(&call, w, 16), 0);
	assert_int_equal(rpcrdma_hdr_add_write(&call, w + 16, 16), 0);
	assert_int_equal(rpcrdma_hdr_set_reply(&call, r, 16), 0);
	/* Inline header 16 + 4 + 532 + 4 = 556, Long 16 + 4 + 532 + 264. */
	expect_reply(&call, 1024 - 556, 1024, RPCRDMA_REPLY_INLINE, 556);
	expect_reply(&call, 1024 - 556 + 1, 1024, RPCRDMA_REPLY_LONG, 816);
	expect_reply(&call, 5000, 816, RPCRDMA_REPLY_LONG, 816);
	expect_reply(&call, 5000, 815, RPCRDMA_REPLY_ERR_CHUNK, 20);
}

/* Headers the decoder would not accept get ERR_CHUNK, never a crash. */
static void test_reply_bad_call(void **state)
{
	struct rpcrdma_segment w = seg(1, 100);
	struct rpcrdma_inline t = thr(1024, 1024);
	size_t h = 0;

	(void)state;
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSGP);
	assert_int_equal(rpcrdma__plan_reply(&call, 10, &t, &h), RPCRDMA_REPLY_ERR_CHUNK);
	assert_int_equal(h, 20);
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_ERROR);
	assert_int_equal(rpcrdma__plan_reply(&call, 10, &t, &h), RPCRDMA_REPLY_ERR_CHUNK);
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, 77);
	assert_int_equal(rpcrdma__plan_reply(&call, 10, &t, &h), RPCRDMA_REPLY_ERR_CHUNK);

	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	assert_int_equal(rpcrdma_hdr_add_write(&call, &w, 1), 0);
	call.writes[0].nsegs = 2; /* past nsegs */
	assert_int_equal(rpcrdma__plan_reply(&call, 10, &t, &h), RPCRDMA_REPLY_ERR_CHUNK);
	call.writes[0] = (struct rpcrdma_chunk){.first = UINT32_MAX, .nsegs = 2};
	assert_int_equal(rpcrdma__plan_reply(&call, 10, &t, &h), RPCRDMA_REPLY_ERR_CHUNK);
	call.writes[0] = (struct rpcrdma_chunk){.first = 0, .nsegs = 1};
	call.nwrites = RPCRDMA_HDR_MAX_WRITE_CHUNKS + 1;
	assert_int_equal(rpcrdma__plan_reply(&call, 10, &t, &h), RPCRDMA_REPLY_ERR_CHUNK);
	call.nwrites = 1;
	call.has_reply = true;
	call.reply = (struct rpcrdma_chunk){.first = 1, .nsegs = 1};
	assert_int_equal(rpcrdma__plan_reply(&call, 10, &t, &h), RPCRDMA_REPLY_ERR_CHUNK);
	call.reply = (struct rpcrdma_chunk){.first = 1, .nsegs = 0};
	assert_int_equal(rpcrdma__plan_reply(&call, 10, &t, &h), RPCRDMA_REPLY_INLINE);
	call.nsegs = RPCRDMA_HDR_MAX_SEGS + 1;
	assert_int_equal(rpcrdma__plan_reply(&call, 10, &t, &h), RPCRDMA_REPLY_ERR_CHUNK);
	assert_int_equal(rpcrdma__plan_reply(NULL, 10, &t, &h), RPCRDMA_REPLY_ERR_CHUNK);
	assert_int_equal(h, 20);
}

/* Requester and responder agree: a call planned without a Reply chunk
 * gets its largest reply inline; with one, never ERR_CHUNK; every header
 * size is the encoder's. */
static void test_call_reply_random(void **state)
{
	(void)state;
	rng_seed(0x5eed0001);
	for (int iter = 0; iter < 20000; iter++) {
		struct rpcrdma_call_shape s = {0};
		struct rpcrdma_call_plan p;
		struct rpcrdma_inline t;
		enum rpcrdma_reply_form rf;
		size_t rh = 0, inline_hdr;
		int rc;

		t = thr(1024u << rng_below(4), 1024u << rng_below(4));
		if (rng_below(8) == 0)
			t.send_max = 28 + rng_below(100);
		s.full_len = rng_below(3) ? rng_below(2 * t.send_max) : rng_below(1u << 20);
		s.nddp = rng_below(3) ? rng_below(4) : 0;
		s.ddp_segs = s.nddp ? s.nddp + rng_below(rng_below(8) ? 4 : 70) : 0;
		s.reduced_len = s.nddp ? rng_below((uint32_t)s.full_len + 1) : s.full_len;
		s.write_chunk = rng_below(3) == 0;
		s.write_segs = s.write_chunk ? 1 + rng_below(rng_below(4) ? 4 : 80) : 0;
		s.max_reply = rng_below(4) ? rng_below(2 * t.recv_max) : rng_below(1u << 24);
		s.reply_segs = rng_below(rng_below(4) ? 4 : 80);

		rc = rpcrdma__plan_call(&s, &t, &p);
		CHECK(iter, rc == 0 || rc == -EMSGSIZE);
		if (rc)
			continue;
		build_call(&call, &s, &p);
		CHECK(iter, rpcrdma_hdr_encoded_size(&call) == p.hdr_len);
		CHECK(iter, p.hdr_len <= t.send_max);
		inline_hdr = 28 + (s.write_chunk ? 8 + 16 * (size_t)s.write_segs : 0) +
			     (p.reply_chunk ? 8 + 16 * (size_t)(s.reply_segs ? s.reply_segs : 1)
					    : 0);
		switch (p.form) {
		case RPCRDMA_CALL_INLINE:
			CHECK(iter, p.hdr_len + s.full_len <= t.send_max);
			break;
		case RPCRDMA_CALL_READ_CHUNKS:
			CHECK(iter, inline_hdr + s.full_len > t.send_max);
			CHECK(iter, p.hdr_len + s.reduced_len <= t.send_max);
			break;
		case RPCRDMA_CALL_LONG:
			CHECK(iter, inline_hdr + s.full_len > t.send_max);
			CHECK(iter, !s.nddp || s.ddp_segs > RPCRDMA_HDR_MAX_READS ||
					    inline_hdr + 24 * (size_t)s.ddp_segs + s.reduced_len >
						    t.send_max);
			break;
		}

		/* The responder's view: our receive is its send. */
		rf = rpcrdma__plan_reply(&call, s.max_reply,
					 &(struct rpcrdma_inline){t.recv_max, t.send_max}, &rh);
		CHECK(iter, rh == reply_hdr_size(&call, rf));
		CHECK(iter, rh <= t.recv_max);
		if (!p.reply_chunk)
			CHECK(iter, rf == RPCRDMA_REPLY_INLINE);
		else
			CHECK(iter, rf != RPCRDMA_REPLY_ERR_CHUNK);
	}
}

/* Write chunks. */

static void test_write_chunk_fill(void **state)
{
	struct rpcrdma_segment s[3] = {seg(1, 4096), seg(2, 4096), seg(3, 100)};
	uint32_t lens[3];

	(void)state;
	/* Exactly full. */
	assert_int_equal(rpcrdma__write_chunk_fill(s, 3, 8292, lens), 0);
	assert_int_equal(lens[0], 4096);
	assert_int_equal(lens[1], 4096);
	assert_int_equal(lens[2], 100);
	/* Partly: array order, the rest zero (4.4.6). */
	assert_int_equal(rpcrdma__write_chunk_fill(s, 3, 5000, lens), 0);
	assert_int_equal(lens[0], 4096);
	assert_int_equal(lens[1], 904);
	assert_int_equal(lens[2], 0);
	assert_int_equal(rpcrdma__write_chunk_fill(s, 3, 4096, lens), 0);
	assert_int_equal(lens[1], 0);
	/* An NFS READ at EOF of 13 bytes: no round-up is written. */
	assert_int_equal(rpcrdma__write_chunk_fill(s, 3, 13, lens), 0);
	assert_int_equal(lens[0], 13);
	/* Unused (4.4.6.2): every length zero. */
	memset(lens, 0xff, sizeof(lens));
	assert_int_equal(rpcrdma__write_chunk_fill(s, 3, 0, lens), 0);
	assert_int_equal(lens[0] | lens[1] | lens[2], 0);
	/* One byte too many. */
	assert_int_equal(rpcrdma__write_chunk_fill(s, 3, 8293, lens), -EMSGSIZE);
	assert_int_equal(rpcrdma__write_chunk_fill(s, 3, UINT64_MAX, lens), -EMSGSIZE);
	/* Zero-length segments are skipped over. */
	s[0].length = 0;
	assert_int_equal(rpcrdma__write_chunk_fill(s, 3, 4100, lens), 0);
	assert_int_equal(lens[0], 0);
	assert_int_equal(lens[1], 4096);
	assert_int_equal(lens[2], 4);
	/* No segments. */
	assert_int_equal(rpcrdma__write_chunk_fill(NULL, 0, 0, NULL), 0);
	assert_int_equal(rpcrdma__write_chunk_fill(NULL, 0, 1, NULL), -EMSGSIZE);
	assert_int_equal(rpcrdma__write_chunk_fill(NULL, 1, 0, lens), -EINVAL);
	assert_int_equal(rpcrdma__write_chunk_fill(s, 1, 0, NULL), -EINVAL);
	/* Beyond 32 bits in all. */
	s[0].length = s[1].length = UINT32_MAX;
	assert_int_equal(rpcrdma__write_chunk_fill(s, 2, 2ull * UINT32_MAX, lens), 0);
	assert_int_equal(lens[0], UINT32_MAX);
	assert_int_equal(lens[1], UINT32_MAX);
	assert_int_equal(rpcrdma__write_chunk_fill(s, 2, (uint64_t)UINT32_MAX + 5, lens), 0);
	assert_int_equal(lens[1], 5);
}

/* Rebuild. */

static void add_read(struct rpcrdma_hdr *h, uint32_t pos, uint32_t len)
{
	struct rpcrdma_segment s = seg(h->nreads, len);

	assert_int_equal(rpcrdma_hdr_add_read(h, pos, &s), 0);
}

static void expect_piece(int i, bool chunk, size_t off, size_t len, uint32_t first,
			 uint32_t nsegs, uint32_t pad)
{
	assert_int_equal(pieces[i].chunk, chunk);
	assert_int_equal(pieces[i].len, len);
	if (chunk) {
		assert_int_equal(pieces[i].chunk_off, off);
		assert_int_equal(pieces[i].first, first);
		assert_int_equal(pieces[i].nsegs, nsegs);
		assert_int_equal(pieces[i].pad, pad);
	} else {
		assert_int_equal(pieces[i].inline_off, off);
		assert_int_equal(pieces[i].pad, 0);
	}
}

/*
 * Round-up (4.4.5.1) for chunk lengths 0..3 mod 4, in an NFSv4 COMPOUND
 * with WRITE followed by GETATTR: 100 bytes before the data, 20 after.
 * The position of anything after the chunk counts the round-up.
 */
static void test_rebuild_roundup(void **state)
{
	(void)state;
	for (uint32_t len = 4096; len < 4096 + 8; len++) {
		uint32_t pad = (4 - len % 4) % 4;

		rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
		add_read(&call, 100, len);
		assert_int_equal(rpcrdma__plan_rebuild(&call, 120, pieces, SIZE_MAX), 3);
		expect_piece(0, false, 0, 100, 0, 0, 0);
		expect_piece(1, true, 0, len, 0, 1, pad);
		expect_piece(2, false, 100, 20, 0, 0, 0);
		/* max_total is the padded total, to the byte. */
		assert_int_equal(rpcrdma__plan_rebuild(&call, 120, pieces, 120 + len + pad), 3);
		assert_int_equal(rpcrdma__plan_rebuild(&call, 120, pieces, 120 + len + pad - 1),
				 -EMSGSIZE);

		/* A second chunk right after the GETATTR's first 8 bytes sits
		 * at 100 + len + pad + 8 in the rebuilt stream. */
		add_read(&call, 100 + len + pad + 8, 5);
		assert_int_equal(rpcrdma__plan_rebuild(&call, 120, pieces, SIZE_MAX), 5);
		expect_piece(2, false, 100, 8, 0, 0, 0);
		expect_piece(3, true, 0, 5, 1, 1, 3);
		expect_piece(4, false, 108, 12, 0, 0, 0);
		/* Placed as if the round-up were not in the stream: it
		 * overlaps the chunk. */
		if (pad) {
			call.reads[1].position = 100 + (len & ~3u);
			assert_int_equal(rpcrdma__plan_rebuild(&call, 120, pieces, SIZE_MAX),
					 RPCRDMA_ERR_BAD_HEADER);
		}
	}
}

/* Segments with one position are one chunk; chunks may touch. */
static void test_rebuild_grouping(void **state)
{
	(void)state;
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	add_read(&call, 112, 4096);
	add_read(&call, 112, 4096);
	add_read(&call, 112, 1000);
	add_read(&call, 112 + 9192, 7); /* right after: no inline between */
	add_read(&call, 112 + 9192, 2);
	add_read(&call, 112 + 9192 + 12 + 16, 4);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 112 + 16 + 40, pieces, SIZE_MAX), 6);
	expect_piece(0, false, 0, 112, 0, 0, 0);
	expect_piece(1, true, 0, 9192, 0, 3, 0);
	expect_piece(2, true, 0, 9, 3, 2, 3);
	expect_piece(3, false, 112, 16, 0, 0, 0);
	expect_piece(4, true, 0, 4, 5, 1, 0);
	expect_piece(5, false, 128, 40, 0, 0, 0);

	/* A chunk at the very end of the inline data (the Linux client's
	 * WRITE: its round-up tail is not sent). */
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	add_read(&call, 112, 131071);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 112, pieces, SIZE_MAX), 2);
	expect_piece(1, true, 0, 131071, 0, 1, 1);
	/* A zero-length chunk is laid out as one, with nothing to read. */
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	add_read(&call, 8, 0);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 16, pieces, 16), 3);
	expect_piece(1, true, 0, 0, 0, 1, 0);
	expect_piece(2, false, 8, 8, 0, 0, 0);

	/* No chunks: the payload, or nothing. */
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 100, pieces, 100), 1);
	expect_piece(0, false, 0, 100, 0, 0, 0);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 100, pieces, 99), -EMSGSIZE);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 0, pieces, 0), 0);
}

/* Long Calls: the Position-Zero chunk is the message. */
static void test_rebuild_long_call(void **state)
{
	(void)state;
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_NOMSG);
	add_read(&call, 0, 4096);
	add_read(&call, 0, 4096);
	add_read(&call, 0, 1808);
	/* Bytes after a NOMSG header are not part of the message. */
	assert_int_equal(rpcrdma__plan_rebuild(&call, 77, pieces, 10000), 1);
	expect_piece(0, true, 0, 10000, 0, 3, 0);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 0, pieces, 9999), -EMSGSIZE);

	/* An odd-length one gets no round-up: it is a whole RPC message. */
	call.reads[2].target.length = 1807;
	assert_int_equal(rpcrdma__plan_rebuild(&call, 0, pieces, SIZE_MAX), 1);
	expect_piece(0, true, 0, 9999, 0, 3, 0);

	/* Other chunks split it: a reduced call of 200 bytes with a 5000-byte
	 * item at 120 and a 3-byte one at 120 + 5000 + 40. */
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_NOMSG);
	add_read(&call, 0, 100);
	add_read(&call, 0, 100);
	add_read(&call, 120, 5000);
	add_read(&call, 5160, 3);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 0, pieces, 5204), 5);
	expect_piece(0, true, 0, 120, 0, 2, 0);
	expect_piece(1, true, 0, 5000, 2, 1, 0);
	expect_piece(2, true, 120, 40, 0, 2, 0);
	expect_piece(3, true, 0, 3, 3, 1, 1);
	expect_piece(4, true, 160, 40, 0, 2, 0);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 0, pieces, 5203), -EMSGSIZE);
	/* An item at the end of the reduced call, and one word past it. */
	call.reads[3].position = 5200;
	assert_int_equal(rpcrdma__plan_rebuild(&call, 0, pieces, SIZE_MAX), 4);
	expect_piece(2, true, 120, 80, 0, 2, 0);
	expect_piece(3, true, 0, 3, 3, 1, 1);
	call.reads[3].position = 5204;
	assert_int_equal(rpcrdma__plan_rebuild(&call, 0, pieces, SIZE_MAX),
			 RPCRDMA_ERR_BAD_HEADER);
}

static void test_rebuild_refusals(void **state)
{
	(void)state;
	/* Position Zero with RDMA_MSG. */
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	add_read(&call, 0, 100);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 100, pieces, SIZE_MAX),
			 RPCRDMA_ERR_BAD_HEADER);

	/* Past the end of the inline data, by one word. */
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	add_read(&call, 104, 100);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 100, pieces, SIZE_MAX),
			 RPCRDMA_ERR_BAD_HEADER);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 104, pieces, SIZE_MAX), 2);
	call.reads[0].position = UINT32_MAX & ~3u;
	assert_int_equal(rpcrdma__plan_rebuild(&call, 104, pieces, SIZE_MAX),
			 RPCRDMA_ERR_BAD_HEADER);

	/* Unaligned, backwards (the decoder refuses both; checked again). */
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	add_read(&call, 18, 100);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 100, pieces, SIZE_MAX),
			 RPCRDMA_ERR_BAD_HEADER);
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	add_read(&call, 40, 4);
	add_read(&call, 20, 4);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 100, pieces, SIZE_MAX),
			 RPCRDMA_ERR_BAD_HEADER);
	/* Overlap: the second starts inside the first. */
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	add_read(&call, 20, 16);
	add_read(&call, 32, 4);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 100, pieces, SIZE_MAX),
			 RPCRDMA_ERR_BAD_HEADER);
	call.reads[1].position = 36;
	assert_int_equal(rpcrdma__plan_rebuild(&call, 100, pieces, SIZE_MAX), 4);

	/* Going back far enough that the gap, wrapped, would fit in a huge
	 * payload. */
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	add_read(&call, 4, 64);
	add_read(&call, 8, 4);
	assert_int_equal(rpcrdma__plan_rebuild(&call, SIZE_MAX, pieces, SIZE_MAX),
			 RPCRDMA_ERR_BAD_HEADER);

	/* RDMA_NOMSG without a Position-Zero chunk, or with one too short. */
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_NOMSG);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 100, pieces, SIZE_MAX),
			 RPCRDMA_ERR_BAD_HEADER);
	add_read(&call, 8, 100);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 100, pieces, SIZE_MAX),
			 RPCRDMA_ERR_BAD_HEADER);
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_NOMSG);
	add_read(&call, 0, 2);
	add_read(&call, 0, 1);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 0, pieces, SIZE_MAX),
			 RPCRDMA_ERR_BAD_HEADER);
	add_read(&call, 0, 1);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 0, pieces, SIZE_MAX), 1);
	/* The PZ chunk's content is the source: a chunk past its end. */
	add_read(&call, 8, 1);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 1000, pieces, SIZE_MAX),
			 RPCRDMA_ERR_BAD_HEADER);

	/* Other procs. */
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSGP);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 100, pieces, SIZE_MAX),
			 RPCRDMA_ERR_BAD_HEADER);
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_ERROR);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 100, pieces, SIZE_MAX),
			 RPCRDMA_ERR_BAD_HEADER);

	/* More reads than the header holds. */
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	call.nreads = RPCRDMA_HDR_MAX_READS + 1;
	assert_int_equal(rpcrdma__plan_rebuild(&call, 100, pieces, SIZE_MAX),
			 RPCRDMA_ERR_BAD_HEADER);

	/* A malformed header is BAD_HEADER even when it is also too big. */
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	add_read(&call, 8, UINT32_MAX);
	add_read(&call, 12, 4);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 100, pieces, 64), RPCRDMA_ERR_BAD_HEADER);

	assert_int_equal(rpcrdma__plan_rebuild(NULL, 100, pieces, SIZE_MAX), -EINVAL);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 100, NULL, SIZE_MAX), -EINVAL);
}

/* The largest numbers a peer can send: sums beyond 32 bits, and a payload
 * length that would wrap the total. */
static void test_rebuild_overflow(void **state)
{
	uint64_t big = (uint64_t)RPCRDMA_HDR_MAX_READS * UINT32_MAX;

	(void)state;
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	for (int i = 0; i < RPCRDMA_HDR_MAX_READS; i++)
		add_read(&call, UINT32_MAX & ~3u, UINT32_MAX);
	assert_int_equal(rpcrdma__plan_rebuild(&call, UINT32_MAX & ~3u, pieces, SIZE_MAX), 2);
	if (sizeof(size_t) >= 8) {
		expect_piece(1, true, 0, (size_t)big, 0, RPCRDMA_HDR_MAX_READS,
			     (uint32_t)((4 - big % 4) % 4));
	}
	assert_int_equal(rpcrdma__plan_rebuild(&call, UINT32_MAX & ~3u, pieces, UINT32_MAX),
			 -EMSGSIZE);
	/* The trailing inline bytes would wrap the total. */
	assert_int_equal(rpcrdma__plan_rebuild(&call, SIZE_MAX, pieces, SIZE_MAX), -EMSGSIZE);
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	add_read(&call, 8, 4);
	assert_int_equal(rpcrdma__plan_rebuild(&call, SIZE_MAX, pieces, SIZE_MAX), -EMSGSIZE);
	assert_int_equal(rpcrdma__plan_rebuild(&call, SIZE_MAX - 4, pieces, SIZE_MAX), 3);

	/* 64 chunks, each with inline bytes between: the most pieces. */
	rpcrdma_hdr_init(&call, XID, 1, CREDITS, RPCRDMA_PROC_MSG);
	for (uint32_t i = 0; i < RPCRDMA_HDR_MAX_READS; i++)
		add_read(&call, 8 + i * 12, 5);
	assert_int_equal(rpcrdma__plan_rebuild(&call, 8 + 64 * 4 + 8, pieces, SIZE_MAX),
			 RPCRDMA_REBUILD_MAX_PIECES);
}

/*
 * The property: cut DDP items out of a random call at random places, split
 * each (and for a Long Call the reduced call) into random segments, encode
 * the header with the reduced call, decode it, plan the rebuild and carry
 * it out: the result must be the original call byte for byte.
 */
#define MAX_ITEMS 12
#define MEM_SIZE (1u << 19)
static uint8_t full[MEM_SIZE], reduced[MEM_SIZE], out[MEM_SIZE], msg[MEM_SIZE];
/* Registered memory by handle: the reduced call (0) and each item. */
static uint8_t mem[MAX_ITEMS + 1][1u << 15];

static void fill_random(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rng();
}

/* Read @len bytes at @off of the chunk reads[first..first+nsegs). */
static size_t read_chunk(const struct rpcrdma_hdr *h, const struct rpcrdma_rebuild_piece *p,
			 uint8_t *dst)
{
	size_t skip = p->chunk_off, left = p->len;

	for (uint32_t i = p->first; i < p->first + p->nsegs && left; i++) {
		const struct rpcrdma_segment *s = &h->reads[i].target;
		size_t n = s->length;
		const uint8_t *src = mem[s->handle >> 8] + (s->offset - OFF_BASE);

		if (skip >= n) {
			skip -= n;
			continue;
		}
		src += skip;
		n -= skip;
		skip = 0;
		if (n > left)
			n = left;
		memcpy(dst, src, n);
		dst += n;
		left -= n;
	}
	return p->len - left;
}

/* Split @len bytes of region @region into 1..@max segments, appended to
 * the Read list at @pos. */
static void add_split(struct rpcrdma_hdr *h, uint32_t region, uint32_t pos, uint32_t len,
		      uint32_t max)
{
	uint32_t n = 1 + rng_below(max), at = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t take = i == n - 1 ? len - at : rng_below(len - at + 1);
		struct rpcrdma_segment s = {.handle = (region << 8) | i, .length = take,
					    .offset = OFF_BASE + at};

		assert_int_equal(rpcrdma_hdr_add_read(h, pos, &s), 0);
		at += take;
	}
}

static void test_rebuild_random(void **state)
{
	(void)state;
	rng_seed(0x5eed0002);
	for (int iter = 0; iter < 3000; iter++) {
		bool nomsg = rng_below(3) == 0;
		uint32_t nitems = rng_below(MAX_ITEMS + 1), max_split = 1 + rng_below(4);
		size_t flen = 0, rlen = 0, total, hlen;
		struct rpcrdma_hdr_fault f;
		struct rpcrdma_hdr_limits lim;
		int n, rc;

		rpcrdma_hdr_init(&call, XID, 1, CREDITS,
				 nomsg ? RPCRDMA_PROC_NOMSG : RPCRDMA_PROC_MSG);
		/* A Long Call's own chunk comes first; a placeholder for now. */
		if (nomsg)
			assert_int_equal(rpcrdma_hdr_add_read(&call, 0, &(struct rpcrdma_segment){0}),
					 0);
		/* A run of inline words, then an item, nitems times, then a
		 * last run.  The first run holds at least the XID. */
		for (uint32_t k = 0; k <= nitems; k++) {
			uint32_t run = 4 * rng_below(rng_below(4) ? 16 : 200);
			uint32_t ilen, pad, alen;
			bool roundup_sent;

			if (k == 0)
				run += 4;
			fill_random(full + flen, run);
			if (k == 0) {
				uint32_t be = htobe32(XID);

				memcpy(full, &be, 4);
			}
			memcpy(reduced + rlen, full + flen, run);
			flen += run;
			rlen += run;
			if (k == nitems)
				break;
			/* The item: any length, sometimes 0 or huge-ish. */
			ilen = rng_below(4) ? rng_below(64) : rng_below(sizeof(mem[0]) - 4);
			pad = (4 - ilen % 4) % 4;
			/* The requester MAY send the round-up in the chunk. */
			roundup_sent = rng_below(4) == 0;
			alen = roundup_sent ? ilen + pad : ilen;
			fill_random(mem[k + 1], ilen);
			memset(mem[k + 1] + ilen, 0, pad);
			memcpy(full + flen, mem[k + 1], ilen + pad);
			add_split(&call, k + 1, (uint32_t)flen, alen, max_split);
			flen += ilen + pad;
		}
		if (nomsg) {
			/* Replace the placeholder with the reduced call's own
			 * segments, keeping the list in position order. */
			static struct rpcrdma_read_segment rest[RPCRDMA_HDR_MAX_READS];
			uint32_t nrest = call.nreads - 1;

			memcpy(rest, call.reads + 1, nrest * sizeof(rest[0]));
			call.nreads = 0;
			memcpy(mem[0], reduced, rlen);
			add_split(&call, 0, 0, (uint32_t)rlen, 4);
			for (uint32_t i = 0; i < nrest; i++)
				call.reads[call.nreads++] = rest[i];
		}

		hlen = (size_t)rpcrdma_hdr_encode(&call, msg, sizeof(msg));
		CHECK(iter, (int)hlen > 0);
		if (!nomsg) {
			memcpy(msg + hlen, reduced, rlen);
			total = hlen + rlen;
		} else {
			total = hlen;
		}
		rpcrdma_hdr_limits_default(&lim);
		lim.max_hdr_size = sizeof(msg);
		rc = rpcrdma_hdr_decode(msg, total, &lim, &decoded, &f);
		CHECK(iter, rc == 0);

		n = rpcrdma__plan_rebuild(&decoded, decoded.payload_len, pieces, flen);
		CHECK(iter, n > 0 && n <= RPCRDMA_REBUILD_MAX_PIECES);
		{
			size_t at = 0;

			for (int i = 0; i < n; i++) {
				const struct rpcrdma_rebuild_piece *p = &pieces[i];

				CHECK(iter, at + p->len + p->pad <= flen);
				if (p->chunk) {
					CHECK(iter, read_chunk(&decoded, p, out + at) == p->len);
				} else {
					CHECK(iter, p->inline_off + p->len <= decoded.payload_len);
					memcpy(out + at, msg + decoded.hdr_len + p->inline_off,
					       p->len);
				}
				at += p->len;
				memset(out + at, 0, p->pad);
				at += p->pad;
			}
			CHECK(iter, at == flen);
			CHECK(iter, memcmp(out, full, flen) == 0);
		}
		CHECK(iter, rpcrdma__plan_rebuild(&decoded, decoded.payload_len, pieces, flen - 1) ==
				    -EMSGSIZE);
	}
}

/*
 * Hostile Read lists, straight into the planner: whatever it accepts must
 * be a layout that covers the source once, in order, places every chunk
 * at its position, and stays within max_total.
 */
static void test_rebuild_hostile(void **state)
{
	static const uint32_t lens[] = {0, 1, 3, 4, 5, 100, 4096, UINT32_MAX - 1, UINT32_MAX};
	int accepted = 0;

	(void)state;
	rng_seed(0x5eed0003);
	for (int iter = 0; iter < 200000; iter++) {
		uint32_t nreads = rng_below(rng_below(4) ? 6 : RPCRDMA_HDR_MAX_READS + 2);
		size_t payload = rng_below(4) ? rng_below(256) : rng();
		size_t max_total = rng_below(2) ? SIZE_MAX : rng_below(1u << 16);
		uint32_t pos = 0;
		int n;

		rpcrdma_hdr_init(&call, XID, 1, CREDITS,
				 rng_below(8) ? (uint32_t)rng_below(2) : rng_below(6));
		call.nreads = nreads;
		for (uint32_t i = 0; i < nreads && i < RPCRDMA_HDR_MAX_READS; i++) {
			switch (rng_below(6)) {
			case 0:
				break; /* same chunk */
			case 1:
				pos = (uint32_t)rng(); /* anything */
				break;
			default:
				pos += 4 * rng_below(40);
			}
			call.reads[i].position = pos;
			call.reads[i].target.length =
				rng_below(2) ? lens[rng_below(9)] : rng_below(300);
		}

		n = rpcrdma__plan_rebuild(&call, payload, pieces, max_total);
		CHECK(iter, n == RPCRDMA_ERR_BAD_HEADER || n == -EMSGSIZE ||
				    (n >= 0 && n <= RPCRDMA_REBUILD_MAX_PIECES));
		if (n < 0)
			continue;
		accepted++;
		{
			bool nomsg = call.proc == RPCRDMA_PROC_NOMSG;
			uint64_t stream = 0, src = 0, src_len = payload;
			uint32_t next_read = 0, pz = 0;

			CHECK(iter, call.proc <= RPCRDMA_PROC_NOMSG);
			if (nomsg) {
				src_len = 0;
				while (pz < call.nreads && call.reads[pz].position == 0)
					src_len += call.reads[pz++].target.length;
				CHECK(iter, pz > 0);
				next_read = pz;
			}
			for (int i = 0; i < n; i++) {
				const struct rpcrdma_rebuild_piece *p = &pieces[i];
				bool source = nomsg ? p->chunk && p->first == 0 : !p->chunk;

				if (source) {
					CHECK(iter, (nomsg ? p->chunk_off : p->inline_off) == src);
					CHECK(iter, !nomsg || p->nsegs == pz);
					CHECK(iter, p->pad == 0 && p->len > 0);
					src += p->len;
				} else {
					uint64_t sum = 0;

					CHECK(iter, p->first == next_read && p->nsegs > 0);
					CHECK(iter, p->chunk_off == 0);
					CHECK(iter, call.reads[p->first].position == stream);
					for (uint32_t j = 0; j < p->nsegs; j++) {
						CHECK(iter, call.reads[p->first + j].position ==
								    call.reads[p->first].position);
						sum += call.reads[p->first + j].target.length;
					}
					CHECK(iter, p->first + p->nsegs == call.nreads ||
							    call.reads[p->first + p->nsegs].position !=
								    call.reads[p->first].position);
					CHECK(iter, sum == p->len && p->pad == (4 - sum % 4) % 4);
					next_read += p->nsegs;
				}
				stream += p->len + p->pad;
			}
			CHECK(iter, src == src_len);
			CHECK(iter, next_read == call.nreads);
			CHECK(iter, stream <= max_total);
		}
	}
	/* The generator must reach the accepting paths too. */
	assert_true(accepted > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inline_negotiate),
		cmocka_unit_test(test_inline_negotiate_default_8k),
		cmocka_unit_test(test_results_inline),
		cmocka_unit_test(test_call_small_inline),
		cmocka_unit_test(test_call_inline_limit),
		cmocka_unit_test(test_call_nfs_write),
		cmocka_unit_test(test_call_read_chunks_limit),
		cmocka_unit_test(test_call_long),
		cmocka_unit_test(test_call_readdir_reply_chunk),
		cmocka_unit_test(test_call_reply_accounts_write_echo),
		cmocka_unit_test(test_call_nfs_read),
		cmocka_unit_test(test_call_emsgsize),
		cmocka_unit_test(test_call_invalid),
		cmocka_unit_test(test_reply_plain),
		cmocka_unit_test(test_reply_echoes_write_list),
		cmocka_unit_test(test_reply_readdir_long),
		cmocka_unit_test(test_reply_long_header_too_big),
		cmocka_unit_test(test_reply_bad_call),
		cmocka_unit_test(test_call_reply_random),
		cmocka_unit_test(test_write_chunk_fill),
		cmocka_unit_test(test_rebuild_roundup),
		cmocka_unit_test(test_rebuild_grouping),
		cmocka_unit_test(test_rebuild_long_call),
		cmocka_unit_test(test_rebuild_refusals),
		cmocka_unit_test(test_rebuild_overflow),
		cmocka_unit_test(test_rebuild_random),
		cmocka_unit_test(test_rebuild_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
