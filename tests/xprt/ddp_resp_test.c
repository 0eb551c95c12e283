/*
 * The responder's DDP context lending inline results (src/xprtrdma/ddp.c,
 * lend_inline), on a provider whose Sends need no registration: which
 * results are lent, that a Long Reply made whole again is byte for byte
 * the reply the plain encoder writes, and that a stream restored past a
 * lent result is caught rather than trusted.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "provider/provider.h"
#include "xprtrdma/ddp.h"

#define ROOM (64u << 10)

struct fixture {
	struct rpcrdma_provider prov;
	struct rpcrdma_hdr call; /* no Write list: every result goes inline */
	struct rpcrdma__ddp_resp d;
	struct rpcrdma_xdr_stream xdr;
	uint8_t buf[ROOM];
	uint8_t plain[ROOM];
	uint8_t data[3][8192];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->prov.caps.flags = RPCRDMA_PCAP_SEND_UNREGISTERED;
	f->prov.caps.max_send_sge = 16;
	for (int k = 0; k < 3; k++)
		for (size_t i = 0; i < sizeof(f->data[k]); i++)
			f->data[k][i] = (uint8_t)(i * 7u + (unsigned int)k * 31u + (i >> 8));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

/* A stream of @room bytes over f->buf with the lending context on it. */
static void begin(struct fixture *f, size_t room, bool lend)
{
	memset(f->buf, 0xa5, sizeof(f->buf));
	rpcrdma_xdr_init(&f->xdr, f->buf, room);
	rpcrdma__ddp_resp_init(&f->d, &f->prov, &f->call, &f->xdr, true, lend);
	rpcrdma_xdr_set_ddp(&f->xdr, &f->d.base);
}

/* tag, item, mid, item, tail, item: results among plain words. */
static int encode_three(struct rpcrdma_xdr_stream *x, struct fixture *f, const uint32_t len[3])
{
	int rc = rpcrdma_xdr_encode_u32(x, 0x11111111u);

	for (int k = 0; k < 3 && !rc; k++) {
		rc = rpcrdma_xdr_encode_ddp(x, f->data[k], len[k]);
		if (!rc)
			rc = rpcrdma_xdr_encode_u32(x, 0x22222222u + (uint32_t)k);
	}
	return rc;
}

/* What the same results encode to with no transport at all. */
static size_t encode_plain(struct fixture *f, const uint32_t len[3])
{
	struct rpcrdma_xdr_stream x;

	rpcrdma_xdr_init(&x, f->plain, sizeof(f->plain));
	assert_int_equal(encode_three(&x, f, len), 0);
	return rpcrdma_xdr_pos(&x);
}

static void test_lent_and_made_whole(void **state)
{
	static const uint32_t shapes[][3] = {
	    {5001, 4096, 4100}, /* two lent (the most), the third copied */
	    {4095, 4097, 8192}, /* the first too small to lend */
	    {4099, 0, 4098},    /* padding after both lent results */
	};
	struct fixture *f = *state;

	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		const uint32_t *len = shapes[s];
		size_t plain = encode_plain(f, len), whole;
		uint64_t want = 0;
		uint32_t lent = 0;

		begin(f, ROOM, true);
		assert_int_equal(encode_three(&f->xdr, f, len), 0);
		for (int k = 0; k < 3; k++) {
			if (len[k] >= RPCRDMA__XPRT_LEND_MIN && lent < RPCRDMA__DDP_MAX_LENT) {
				want += len[k];
				lent++;
			}
		}
		assert_int_equal(f->d.nlent, lent);
		assert_int_equal(f->d.lent_bytes, want);
		assert_int_equal(rpcrdma_xdr_pos(&f->xdr) + want, plain);
		assert_true(rpcrdma__ddp_resp_lent_valid(&f->d));
		/* The Send's gather, in order, is the plain reply. */
		{
			size_t from = 0, at = 0;

			for (uint32_t i = 0; i < f->d.nlent; i++) {
				const struct rpcrdma__ddp_lent *l = &f->d.lent[i];

				assert_memory_equal(f->plain + at, f->buf + from, l->pos - from);
				at += l->pos - from;
				assert_memory_equal(f->plain + at, l->data, l->len);
				at += l->len;
				from = l->pos;
			}
			assert_memory_equal(f->plain + at, f->buf + from,
					    rpcrdma_xdr_pos(&f->xdr) - from);
		}
		/* As a Long Reply: made whole in the buffer. */
		whole = rpcrdma__ddp_resp_unlend(&f->d, f->buf, ROOM, rpcrdma_xdr_pos(&f->xdr));
		assert_int_equal(whole, plain);
		assert_memory_equal(f->buf, f->plain, plain);
		assert_int_equal(f->d.nlent, 0);
		assert_int_equal(f->d.lent_bytes, 0);
		rpcrdma__ddp_resp_release(&f->d);
	}
}

/* Each lent result keeps its room: a stream that the copy would fill up
 * is full with lending too, at the same place. */
static void test_room_kept(void **state)
{
	static const uint32_t len[3] = {8192, 8192, 8192};
	struct fixture *f = *state;
	size_t plain = encode_plain(f, len);

	begin(f, plain - 1, true);
	assert_int_not_equal(encode_three(&f->xdr, f, len), 0);
	begin(f, plain, true);
	assert_int_equal(encode_three(&f->xdr, f, len), 0);
	assert_int_equal(rpcrdma_xdr_remaining(&f->xdr), 0);
	rpcrdma__ddp_resp_release(&f->d);
}

/* An encoder that restores a stream saved before a lent result, then
 * writes over its place: refused, and the buffer never overrun. */
static void test_restored_stream_refused(void **state)
{
	struct fixture *f = *state;
	struct rpcrdma_xdr_stream saved;
	static uint8_t filler[ROOM];

	begin(f, 16384, true);
	saved = f->xdr;
	assert_int_equal(rpcrdma_xdr_encode_ddp(&f->xdr, f->data[0], 8192), 0);
	assert_int_equal(f->d.nlent, 1);
	f->xdr = saved;
	assert_int_equal(rpcrdma_xdr_encode_fixed_opaque(&f->xdr, filler, 12000), 0);
	assert_false(rpcrdma__ddp_resp_lent_valid(&f->d));
	assert_int_equal(rpcrdma__ddp_resp_unlend(&f->d, f->buf, 16384, rpcrdma_xdr_pos(&f->xdr)),
			 0);
	assert_int_equal(f->d.nlent, 0);

	/* Restored, then lent again: the room is held twice over. */
	begin(f, 16384, true);
	saved = f->xdr;
	assert_int_equal(rpcrdma_xdr_encode_ddp(&f->xdr, f->data[0], 4096), 0);
	f->xdr = saved;
	assert_int_equal(rpcrdma_xdr_encode_ddp(&f->xdr, f->data[1], 4096), 0);
	assert_int_equal(f->d.nlent, 2);
	assert_false(rpcrdma__ddp_resp_lent_valid(&f->d));
	rpcrdma__ddp_resp_release(&f->d);
}

/* Lending off (a backchannel's responder), or the memory not kept: every
 * result is copied into the stream. */
static void test_not_lent(void **state)
{
	static const uint32_t len[3] = {8192, 5000, 4096};
	struct fixture *f = *state;
	size_t plain = encode_plain(f, len);

	begin(f, ROOM, false);
	assert_int_equal(encode_three(&f->xdr, f, len), 0);
	assert_int_equal(f->d.nlent, 0);
	assert_int_equal(rpcrdma_xdr_pos(&f->xdr), plain);
	assert_memory_equal(f->buf, f->plain, plain);
	rpcrdma__ddp_resp_release(&f->d);

	memset(f->buf, 0, sizeof(f->buf));
	rpcrdma_xdr_init(&f->xdr, f->buf, ROOM);
	rpcrdma__ddp_resp_init(&f->d, &f->prov, &f->call, &f->xdr, false, true);
	rpcrdma_xdr_set_ddp(&f->xdr, &f->d.base);
	assert_int_equal(encode_three(&f->xdr, f, len), 0);
	assert_int_equal(f->d.nlent, 0);
	assert_memory_equal(f->buf, f->plain, plain);
	rpcrdma__ddp_resp_release(&f->d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_lent_and_made_whole, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_room_kept, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_restored_stream_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_lent, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
