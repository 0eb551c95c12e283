/*
 * XDR stream tests: RFC 4506 encodings byte for byte, bounds on every
 * decoder, all-or-nothing failure, and scatter lists split at every offset.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rpcrdma/xdr.h"
#include "xdr/xdr_len.h"

static void test_integers_big_endian(void **state)
{
	uint8_t buf[32];
	static const uint8_t want[] = {
		0x12, 0x34, 0x56, 0x78,                         /* u32 */
		0xff, 0xff, 0xff, 0xfe,                         /* i32 -2 */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* u64 */
		0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* i64 min */
		0x00, 0x00, 0x00, 0x01,                         /* bool true */
		0xff, 0xff, 0xff, 0xff,                         /* enum -1 */
	};
	struct rpcrdma_xdr_stream x;
	uint32_t u32;
	int32_t i32;
	uint64_t u64;
	int64_t i64;
	bool b;

	(void)state;
	rpcrdma_xdr_init(&x, buf, sizeof(buf));
	assert_int_equal(rpcrdma_xdr_encode_u32(&x, 0x12345678), 0);
	assert_int_equal(rpcrdma_xdr_encode_i32(&x, -2), 0);
	assert_int_equal(rpcrdma_xdr_encode_u64(&x, 0x0102030405060708ull), 0);
	assert_int_equal(rpcrdma_xdr_encode_i64(&x, INT64_MIN), 0);
	assert_int_equal(rpcrdma_xdr_encode_bool(&x, true), 0);
	assert_int_equal(rpcrdma_xdr_encode_enum(&x, -1), 0);
	assert_int_equal(rpcrdma_xdr_pos(&x), sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(rpcrdma_xdr_encode_u32(&x, 1), RPCRDMA_ERR_NOSPACE);

	rpcrdma_xdr_init_const(&x, want, sizeof(want));
	assert_int_equal(rpcrdma_xdr_decode_u32(&x, &u32), 0);
	assert_int_equal(u32, 0x12345678);
	assert_int_equal(rpcrdma_xdr_decode_i32(&x, &i32), 0);
	assert_int_equal(i32, -2);
	assert_int_equal(rpcrdma_xdr_decode_u64(&x, &u64), 0);
	assert_true(u64 == 0x0102030405060708ull);
	assert_int_equal(rpcrdma_xdr_decode_i64(&x, &i64), 0);
	assert_true(i64 == INT64_MIN);
	assert_int_equal(rpcrdma_xdr_decode_bool(&x, &b), 0);
	assert_true(b);
	assert_int_equal(rpcrdma_xdr_decode_enum(&x, &i32), 0);
	assert_int_equal(i32, -1);
	assert_int_equal(rpcrdma_xdr_remaining(&x), 0);
	assert_int_equal(rpcrdma_xdr_decode_u32(&x, &u32), RPCRDMA_ERR_TRUNCATED);
}

static void test_bool_rejects_other_values(void **state)
{
	static const uint8_t two[] = {0, 0, 0, 2};
	struct rpcrdma_xdr_stream x;
	bool b;

	(void)state;
	rpcrdma_xdr_init_const(&x, two, sizeof(two));
	assert_int_equal(rpcrdma_xdr_decode_bool(&x, &b), RPCRDMA_ERR_BAD_VALUE);
	assert_int_equal(rpcrdma_xdr_pos(&x), 0);
	assert_int_equal(rpcrdma_xdr_decode_optional(&x, &b), RPCRDMA_ERR_BAD_VALUE);
}

/* RFC 4506 section 4.10: "sillyprog" as a string is 9 bytes + 3 pad. */
static void test_opaque_padding(void **state)
{
	static const uint8_t want[] = {0, 0, 0, 9, 's', 'i', 'l', 'l', 'y', 'p',
				       'r', 'o', 'g', 0, 0, 0, 0xaa, 0xbb, 0, 0};
	uint8_t buf[sizeof(want)];
	struct rpcrdma_xdr_stream x;
	char s[16];
	uint8_t fixed[2];
	uint32_t len;

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	rpcrdma_xdr_init(&x, buf, sizeof(buf));
	assert_int_equal(rpcrdma_xdr_encode_string(&x, "sillyprog", 9), 0);
	assert_int_equal(rpcrdma_xdr_encode_fixed_opaque(&x, "\xaa\xbb", 2), 0);
	assert_memory_equal(buf, want, sizeof(want));

	rpcrdma_xdr_init_const(&x, want, sizeof(want));
	assert_int_equal(rpcrdma_xdr_decode_string(&x, s, sizeof(s), &len), 0);
	assert_int_equal(len, 9);
	assert_string_equal(s, "sillyprog");
	assert_int_equal(rpcrdma_xdr_pos(&x), 16);
	assert_int_equal(rpcrdma_xdr_decode_fixed_opaque(&x, fixed, 2), 0);
	assert_int_equal(fixed[0], 0xaa);
	assert_int_equal(rpcrdma_xdr_remaining(&x), 0);
}

static void test_opaque_bounds(void **state)
{
	static const uint8_t five[] = {0, 0, 0, 5, 1, 2, 3, 4, 5, 0, 0, 0};
	static const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4};
	struct rpcrdma_xdr_stream x;
	uint8_t out[8];
	const void *ref;
	uint32_t len;

	(void)state;
	/* Over the caller's bound: refused, stream untouched. */
	rpcrdma_xdr_init_const(&x, five, sizeof(five));
	assert_int_equal(rpcrdma_xdr_decode_opaque(&x, out, 4, &len), RPCRDMA_ERR_TOO_LONG);
	assert_int_equal(rpcrdma_xdr_pos(&x), 0);
	assert_int_equal(rpcrdma_xdr_decode_opaque(&x, out, 5, &len), 0);
	assert_int_equal(len, 5);
	assert_int_equal(rpcrdma_xdr_pos(&x), 12);

	/* Body (with padding) missing: truncated, stream untouched. */
	rpcrdma_xdr_init_const(&x, five, sizeof(five) - 1);
	assert_int_equal(rpcrdma_xdr_decode_opaque(&x, out, 8, &len), RPCRDMA_ERR_TRUNCATED);
	assert_int_equal(rpcrdma_xdr_pos(&x), 0);

	/* A 4 GiB length never allocates or reads: truncated or too long. */
	rpcrdma_xdr_init_const(&x, huge, sizeof(huge));
	assert_int_equal(rpcrdma_xdr_decode_opaque_len(&x, UINT32_MAX, &len),
			 RPCRDMA_ERR_TRUNCATED);
	assert_int_equal(rpcrdma_xdr_decode_opaque_ref(&x, 100, &ref, &len), RPCRDMA_ERR_TOO_LONG);
	assert_int_equal(rpcrdma_xdr_pos(&x), 0);

	rpcrdma_xdr_init_const(&x, five, sizeof(five));
	assert_int_equal(rpcrdma_xdr_decode_opaque_ref(&x, 5, &ref, &len), 0);
	assert_ptr_equal(ref, five + 4);
	assert_int_equal(rpcrdma_xdr_pos(&x), 12);
}

/*
 * A length near the top of size_t plus its padding wraps if aligned
 * first.  Where size_t has 32 bits a length from the wire gets there; on
 * 64 bits the same arithmetic is checked with lengths near SIZE_MAX.
 */
static void test_padded_length_never_wraps(void **state)
{
	static const uint8_t small[] = {1, 2, 3, 4, 5, 6, 7, 8};

	(void)state;
	for (size_t len = SIZE_MAX - 3; len != 0; len++) {
		assert_false(rpcrdma__xdr_fits_padded(len, 0));
		assert_false(rpcrdma__xdr_fits_padded(len, 8));
		assert_false(rpcrdma__xdr_fits_padded(len, SIZE_MAX - 4));
	}
	assert_true(rpcrdma__xdr_fits_padded(SIZE_MAX - 3, SIZE_MAX - 3));
	assert_false(rpcrdma__xdr_fits_padded(SIZE_MAX - 4, SIZE_MAX - 4)); /* 3 of pad missing */
	for (uint32_t len = UINT32_MAX - 2; len != 0; len++)
		assert_false(rpcrdma__xdr_fits_padded(len, sizeof(small)));
	assert_true(rpcrdma__xdr_fits_padded(0, 0));
	assert_true(rpcrdma__xdr_fits_padded(5, 8));
	assert_false(rpcrdma__xdr_fits_padded(5, 7));
	assert_true(rpcrdma__xdr_fits_padded(8, 8));
	assert_false(rpcrdma__xdr_fits_padded(9, 8));

	/* Through the decoders: each such length is refused, stream untouched. */
	for (uint32_t len = UINT32_MAX - 2; len != 0; len++) {
		uint8_t msg[4 + sizeof(small)], out[sizeof(small)];
		struct rpcrdma_xdr_stream x;
		const void *ref;
		uint32_t got = 0;

		msg[0] = (uint8_t)(len >> 24);
		msg[1] = (uint8_t)(len >> 16);
		msg[2] = (uint8_t)(len >> 8);
		msg[3] = (uint8_t)len;
		memcpy(msg + 4, small, sizeof(small));
		rpcrdma_xdr_init_const(&x, msg, sizeof(msg));
		assert_int_equal(rpcrdma_xdr_decode_opaque_len(&x, UINT32_MAX, &got),
				 RPCRDMA_ERR_TRUNCATED);
		assert_int_equal(rpcrdma_xdr_decode_opaque(&x, out, UINT32_MAX, &got),
				 RPCRDMA_ERR_TRUNCATED);
		assert_int_equal(rpcrdma_xdr_decode_opaque_ref(&x, UINT32_MAX, &ref, &got),
				 RPCRDMA_ERR_TRUNCATED);
		assert_int_equal(rpcrdma_xdr_pos(&x), 0);
		assert_int_equal(got, 0);
	}
}

static void test_string_rejects_nul(void **state)
{
	static const uint8_t s[] = {0, 0, 0, 3, 'a', 0, 'b', 0};
	struct rpcrdma_xdr_stream x;
	char out[8];
	uint32_t len;

	(void)state;
	rpcrdma_xdr_init_const(&x, s, sizeof(s));
	assert_int_equal(rpcrdma_xdr_decode_string(&x, out, sizeof(out), &len),
			 RPCRDMA_ERR_BAD_VALUE);
	assert_int_equal(rpcrdma_xdr_pos(&x), 0);
	/* Room for 2 characters and the NUL: a 3-byte string is too long. */
	assert_int_equal(rpcrdma_xdr_decode_string(&x, out, 3, &len), RPCRDMA_ERR_TOO_LONG);
	assert_int_equal(rpcrdma_xdr_decode_string(&x, out, 0, &len), -EINVAL);
}

static void test_array_len_bounds(void **state)
{
	static const uint8_t three[] = {0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3};
	static const uint8_t lying[] = {0x40, 0, 0, 0, 0, 0, 0, 1};
	struct rpcrdma_xdr_stream x;
	uint32_t n;

	(void)state;
	rpcrdma_xdr_init_const(&x, three, sizeof(three));
	assert_int_equal(rpcrdma_xdr_decode_array_len(&x, 2, 4, &n), RPCRDMA_ERR_TOO_LONG);
	assert_int_equal(rpcrdma_xdr_decode_array_len(&x, 3, 8, &n), RPCRDMA_ERR_TRUNCATED);
	assert_int_equal(rpcrdma_xdr_pos(&x), 0);
	assert_int_equal(rpcrdma_xdr_decode_array_len(&x, 3, 4, &n), 0);
	assert_int_equal(n, 3);

	/* A count whose elements cannot be present is refused at once, even
	 * when count * size overflows. */
	rpcrdma_xdr_init_const(&x, lying, sizeof(lying));
	assert_int_equal(rpcrdma_xdr_decode_array_len(&x, UINT32_MAX, SIZE_MAX / 2, &n),
			 RPCRDMA_ERR_TRUNCATED);
	assert_int_equal(rpcrdma_xdr_decode_array_len(&x, UINT32_MAX, 0, &n), 0);
	assert_int_equal(n, 0x40000000);
}

static void test_encoder_all_or_nothing(void **state)
{
	uint8_t buf[8];
	struct rpcrdma_xdr_stream x;

	(void)state;
	memset(buf, 0x55, sizeof(buf));
	rpcrdma_xdr_init(&x, buf, sizeof(buf));
	assert_int_equal(rpcrdma_xdr_encode_opaque(&x, "abcde", 5), RPCRDMA_ERR_NOSPACE);
	assert_int_equal(rpcrdma_xdr_pos(&x), 0);
	assert_int_equal(buf[0], 0x55);
	assert_int_equal(rpcrdma_xdr_encode_opaque(&x, "abc", 3), 0);
	assert_int_equal(rpcrdma_xdr_pos(&x), 8);
	assert_int_equal(buf[7], 0);
	assert_int_equal(rpcrdma_xdr_encode_fixed_opaque(&x, NULL, 0), 0);
	assert_int_equal(rpcrdma_xdr_encode_opaque(&x, NULL, 1), RPCRDMA_ERR_NOSPACE);
}

/* The same items through a scatter list cut at every possible point,
 * including empty elements, give the same bytes and values. */
static void test_scatter_list_every_split(void **state)
{
	uint8_t flat[64], pieces[64];
	struct rpcrdma_xdr_stream x;
	size_t n;

	(void)state;
	rpcrdma_xdr_init(&x, flat, sizeof(flat));
	assert_int_equal(rpcrdma_xdr_encode_u32(&x, 0xdeadbeef), 0);
	assert_int_equal(rpcrdma_xdr_encode_u64(&x, 0x1122334455667788ull), 0);
	assert_int_equal(rpcrdma_xdr_encode_opaque(&x, "hello, world", 12), 0);
	assert_int_equal(rpcrdma_xdr_encode_string(&x, "xdr", 3), 0);
	n = rpcrdma_xdr_pos(&x);

	for (size_t a = 0; a <= n; a++) {
		for (size_t b = a; b <= n; b++) {
			struct iovec iov[4] = {
				{pieces, a},
				{pieces + a, 0},
				{pieces + a, b - a},
				{pieces + b, n - b},
			};
			uint32_t u32, len;
			uint64_t u64;
			char s[16];
			uint8_t o[16];

			memset(pieces, 0, sizeof(pieces));
			assert_int_equal(rpcrdma_xdr_init_iov(&x, iov, 4), 0);
			assert_int_equal(rpcrdma_xdr_encode_u32(&x, 0xdeadbeef), 0);
			assert_int_equal(rpcrdma_xdr_encode_u64(&x, 0x1122334455667788ull), 0);
			assert_int_equal(rpcrdma_xdr_encode_opaque(&x, "hello, world", 12), 0);
			assert_int_equal(rpcrdma_xdr_encode_string(&x, "xdr", 3), 0);
			assert_int_equal(rpcrdma_xdr_remaining(&x), 0);
			assert_memory_equal(pieces, flat, n);

			assert_int_equal(rpcrdma_xdr_init_iov(&x, iov, 4), 0);
			assert_int_equal(rpcrdma_xdr_decode_u32(&x, &u32), 0);
			assert_int_equal(u32, 0xdeadbeef);
			assert_int_equal(rpcrdma_xdr_decode_u64(&x, &u64), 0);
			assert_true(u64 == 0x1122334455667788ull);
			assert_int_equal(rpcrdma_xdr_decode_opaque(&x, o, sizeof(o), &len), 0);
			assert_int_equal(len, 12);
			assert_memory_equal(o, "hello, world", 12);
			assert_int_equal(rpcrdma_xdr_decode_string(&x, s, sizeof(s), &len), 0);
			assert_string_equal(s, "xdr");
			assert_int_equal(rpcrdma_xdr_pos(&x), n);
		}
	}
}

static void test_inline_and_ref_across_elements(void **state)
{
	uint8_t a[6] = {0, 0, 0, 4, 'a', 'b'};
	uint8_t b[2] = {'c', 'd'};
	struct iovec iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};
	struct rpcrdma_xdr_stream x;
	const void *ref;
	uint8_t out[4];
	uint32_t len;

	(void)state;
	assert_int_equal(rpcrdma_xdr_init_iov(&x, iov, 2), 0);
	assert_int_equal(rpcrdma_xdr_decode_opaque_ref(&x, 8, &ref, &len), -ERANGE);
	assert_int_equal(rpcrdma_xdr_pos(&x), 0);
	assert_non_null(rpcrdma_xdr_inline(&x, 4));
	assert_null(rpcrdma_xdr_inline(&x, 4)); /* straddles a and b */
	assert_int_equal(rpcrdma_xdr_pos(&x), 4);
	assert_int_equal(rpcrdma_xdr_decode_fixed_opaque(&x, out, 4), 0);
	assert_memory_equal(out, "abcd", 4);
	assert_null(rpcrdma_xdr_inline(&x, 1));
	assert_int_equal(rpcrdma_xdr_skip(&x, 1), RPCRDMA_ERR_TRUNCATED);
}

/* A transport hook that places items itself: nothing can be lent. */
static int placing_decode(struct rpcrdma_xdr_ddp *ddp, size_t pos, void *buf, uint32_t len)
{
	(void)ddp;
	(void)pos;
	(void)buf;
	(void)len;
	return 1;
}

static int no_encode(struct rpcrdma_xdr_ddp *ddp, size_t pos, const void *data, uint32_t len)
{
	(void)ddp;
	(void)pos;
	(void)data;
	(void)len;
	return 0;
}

/* rpcrdma_xdr_decode_ddp_ref lends an item of a plain stream (the server's
 * call, Read chunk data in place) and refuses, the stream untouched, when
 * a hook places items elsewhere, the item straddles two buffers, or it is
 * longer than allowed. */
static void test_ddp_ref(void **state)
{
	static const uint8_t five[] = {0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o', 0, 0, 0, 0, 0, 0, 7};
	static const struct rpcrdma_xdr_ddp_ops placing = {no_encode, placing_decode};
	struct rpcrdma_xdr_ddp hook = {&placing};
	uint8_t a[6] = {0, 0, 0, 4, 'a', 'b'}, b[2] = {'c', 'd'};
	struct iovec iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};
	struct rpcrdma_xdr_stream x;
	const void *ref = NULL;
	uint32_t len = 0, tail;

	(void)state;
	rpcrdma_xdr_init_const(&x, five, sizeof(five));
	assert_int_equal(rpcrdma_xdr_decode_ddp_ref(&x, 4, &ref, &len), RPCRDMA_ERR_TOO_LONG);
	assert_int_equal(rpcrdma_xdr_pos(&x), 0);
	assert_int_equal(rpcrdma_xdr_decode_ddp_ref(&x, 5, &ref, &len), 0);
	assert_ptr_equal(ref, five + 4);
	assert_int_equal(len, 5);
	assert_int_equal(rpcrdma_xdr_decode_u32(&x, &tail), 0); /* past the padding */
	assert_int_equal(tail, 7);

	rpcrdma_xdr_init_const(&x, five, sizeof(five));
	rpcrdma_xdr_set_ddp(&x, &hook);
	assert_int_equal(rpcrdma_xdr_decode_ddp_ref(&x, 5, &ref, &len), -ERANGE);
	assert_int_equal(rpcrdma_xdr_pos(&x), 0);

	assert_int_equal(rpcrdma_xdr_init_iov(&x, iov, 2), 0);
	assert_int_equal(rpcrdma_xdr_decode_ddp_ref(&x, 8, &ref, &len), -ERANGE);
	assert_int_equal(rpcrdma_xdr_pos(&x), 0);
}

static void test_init_iov_overflow(void **state)
{
	uint8_t byte;
	struct iovec iov[2] = {{&byte, SIZE_MAX}, {&byte, 2}};
	struct rpcrdma_xdr_stream x;

	(void)state;
	assert_int_equal(rpcrdma_xdr_init_iov(&x, iov, 2), RPCRDMA_ERR_OVERFLOW);
	assert_int_equal(rpcrdma_xdr_init_iov(&x, NULL, 1), -EINVAL);
	assert_int_equal(rpcrdma_xdr_init_iov(&x, NULL, 0), 0);
	assert_int_equal(rpcrdma_xdr_remaining(&x), 0);
	assert_int_equal(rpcrdma_xdr_decode_u32(&x, &(uint32_t){0}), RPCRDMA_ERR_TRUNCATED);
}

/* A fake transport: takes items of 8 bytes or more, remembering where. */
struct fake_ddp {
	struct rpcrdma_xdr_ddp base;
	size_t pos;
	const void *data;
	uint32_t len;
	const char *placed; /* decode: what the "RDMA Write" delivered */
};

static int fake_encode(struct rpcrdma_xdr_ddp *ddp, size_t pos, const void *data, uint32_t len)
{
	struct fake_ddp *f = (struct fake_ddp *)ddp;

	if (len < 8)
		return 0;
	f->pos = pos;
	f->data = data;
	f->len = len;
	return 1;
}

static int fake_decode(struct rpcrdma_xdr_ddp *ddp, size_t pos, void *buf, uint32_t len)
{
	struct fake_ddp *f = (struct fake_ddp *)ddp;

	if (!f->placed)
		return 0;
	if (len != strlen(f->placed))
		return RPCRDMA_ERR_BAD_VALUE;
	f->pos = pos;
	memcpy(buf, f->placed, len);
	return 1;
}

static const struct rpcrdma_xdr_ddp_ops fake_ops = {fake_encode, fake_decode};

static void test_ddp_items(void **state)
{
	uint8_t buf[64];
	char out[16];
	struct fake_ddp f = {.base = {&fake_ops}};
	struct rpcrdma_xdr_stream x;
	uint32_t len;

	(void)state;
	/* Without a context a DDP item is a plain opaque. */
	rpcrdma_xdr_init(&x, buf, sizeof(buf));
	assert_int_equal(rpcrdma_xdr_encode_ddp(&x, "0123456789", 10), 0);
	assert_int_equal(rpcrdma_xdr_pos(&x), 16);

	/* With one, a large item leaves the stream (padding too) and the
	 * position after its length word is reported; a small one stays. */
	rpcrdma_xdr_init(&x, buf, sizeof(buf));
	rpcrdma_xdr_set_ddp(&x, &f.base);
	assert_int_equal(rpcrdma_xdr_encode_u32(&x, 7), 0);
	assert_int_equal(rpcrdma_xdr_encode_ddp(&x, "0123456789", 10), 0);
	assert_int_equal(f.pos, 8);
	assert_int_equal(f.len, 10);
	assert_int_equal(rpcrdma_xdr_pos(&x), 8);
	assert_int_equal(rpcrdma_xdr_encode_ddp(&x, "abc", 3), 0);
	assert_int_equal(rpcrdma_xdr_pos(&x), 16);
	assert_int_equal(rpcrdma_xdr_encode_ddp(&x, NULL, 9), -EINVAL);

	/* Decoding: placed bytes are not in the stream; inline ones are. */
	rpcrdma_xdr_init(&x, buf, 16);
	f.placed = "0123456789";
	rpcrdma_xdr_set_ddp(&x, &f.base);
	assert_int_equal(rpcrdma_xdr_decode_u32(&x, &len), 0);
	assert_int_equal(rpcrdma_xdr_decode_ddp(&x, out, sizeof(out), &len), 0);
	assert_int_equal(len, 10);
	assert_memory_equal(out, "0123456789", 10);
	assert_int_equal(rpcrdma_xdr_pos(&x), 8);
	f.placed = NULL;
	assert_int_equal(rpcrdma_xdr_decode_ddp(&x, out, sizeof(out), &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(out, "abc", 3);
	/* A length the transport cannot match, or over the bound, fails and
	 * leaves the stream as it was. */
	rpcrdma_xdr_init(&x, buf, 16);
	rpcrdma_xdr_set_ddp(&x, &f.base);
	f.placed = "short";
	assert_int_equal(rpcrdma_xdr_skip(&x, 4), 0);
	assert_int_equal(rpcrdma_xdr_decode_ddp(&x, out, sizeof(out), &len), RPCRDMA_ERR_BAD_VALUE);
	assert_int_equal(rpcrdma_xdr_pos(&x), 4);
	assert_int_equal(rpcrdma_xdr_decode_ddp(&x, out, 9, &len), RPCRDMA_ERR_TOO_LONG);
	assert_int_equal(rpcrdma_xdr_pos(&x), 4);
}

static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(rpcrdma_strerror(RPCRDMA_ERR_TRUNCATED), "input ends before the item");
	assert_string_equal(rpcrdma_strerror(-ENOMEM), strerror(ENOMEM));
	assert_string_equal(rpcrdma_strerror(-999999), "unknown error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_integers_big_endian),
	    cmocka_unit_test(test_bool_rejects_other_values),
	    cmocka_unit_test(test_opaque_padding),
	    cmocka_unit_test(test_ddp_ref),
	    cmocka_unit_test(test_opaque_bounds),
	    cmocka_unit_test(test_padded_length_never_wraps),
	    cmocka_unit_test(test_string_rejects_nul),
	    cmocka_unit_test(test_array_len_bounds),
	    cmocka_unit_test(test_encoder_all_or_nothing),
	    cmocka_unit_test(test_scatter_list_every_split),
	    cmocka_unit_test(test_inline_and_ref_across_elements),
	    cmocka_unit_test(test_init_iov_overflow),
	    cmocka_unit_test(test_ddp_items),
	    cmocka_unit_test(test_strerror),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
