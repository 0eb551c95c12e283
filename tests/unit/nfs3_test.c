/*
 * NFSv3 and MOUNT v3 codec tests: MNT's result with lists of flavors of
 * every length the RFC allows, bounded by the reply.
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

#include "rpcrdma/nfs3.h"

#define AUTH_NONE 0u
#define AUTH_SYS 1u
#define RPCSEC_GSS_KRB5 390003u
#define RPCSEC_GSS_KRB5I 390004u
#define RPCSEC_GSS_KRB5P 390005u

/* MNT3_OK, a 4-byte handle, then @n flavors from @flavors; returns the
 * reply's length. */
static size_t mnt_reply(uint8_t *buf, const uint32_t *flavors, uint32_t n)
{
	uint32_t w[3 + 1 + 1 + 8];
	size_t k = 0;

	assert_true(n <= 8);
	w[k++] = htonl(0);          /* MNT3_OK */
	w[k++] = htonl(4);          /* fhandle3 length */
	w[k++] = htonl(0x01020304); /* its bytes */
	w[k++] = htonl(n);
	for (uint32_t i = 0; i < n; i++)
		w[k++] = htonl(flavors[i]);
	memcpy(buf, w, k * 4);
	return k * 4;
}

static int decode(const uint8_t *buf, size_t len, struct rpcrdma_mount3_mnt_res *r, size_t *pos)
{
	struct rpcrdma_xdr_stream x;
	int rc;

	memset(r, 0x55, sizeof(*r));
	rpcrdma_xdr_init_const(&x, buf, len);
	rc = rpcrdma_mount3_xdr_mnt_res_dec(&x, r);
	*pos = rpcrdma_xdr_pos(&x);
	return rc;
}

/*
 * An export with five sec= flavors (Linux allows more) answers MNT with a
 * list longer than the structure keeps: the first four are kept, the rest
 * skipped, and the whole reply is consumed.
 */
static void test_mnt_more_flavors_than_kept(void **state)
{
	static const uint32_t five[] = {RPCSEC_GSS_KRB5P, RPCSEC_GSS_KRB5I, RPCSEC_GSS_KRB5,
					AUTH_SYS, AUTH_NONE};
	struct rpcrdma_mount3_mnt_res r;
	uint8_t buf[64], out[64];
	struct rpcrdma_xdr_stream x;
	size_t len, pos;

	(void)state;
	len = mnt_reply(buf, five, 5);
	assert_int_equal(decode(buf, len, &r, &pos), 0);
	assert_int_equal(pos, len);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.fh.len, 4);
	assert_int_equal(r.nflavors, RPCRDMA_MOUNT3_MAX_FLAVORS);
	assert_memory_equal(r.flavors, five, sizeof(r.flavors));

	/* What was kept encodes as a list of four. */
	rpcrdma_xdr_init(&x, out, sizeof(out));
	assert_int_equal(rpcrdma_mount3_xdr_mnt_res_enc(&x, &r), 0);
	assert_int_equal(rpcrdma_xdr_pos(&x), mnt_reply(buf, five, 4));
	assert_memory_equal(out, buf, rpcrdma_xdr_pos(&x));

	/* Exactly four, and none, decode as sent. */
	len = mnt_reply(buf, five, 4);
	assert_int_equal(decode(buf, len, &r, &pos), 0);
	assert_int_equal(pos, len);
	assert_int_equal(r.nflavors, 4);
	len = mnt_reply(buf, five, 0);
	assert_int_equal(decode(buf, len, &r, &pos), 0);
	assert_int_equal(r.nflavors, 0);
}

/* The skipped flavors are still bounded by the reply: a count its bytes
 * cannot back, or a list cut short, is refused. */
static void test_mnt_flavors_bounded_by_reply(void **state)
{
	static const uint32_t six[] = {1, 2, 3, 4, 5, 6};
	struct rpcrdma_mount3_mnt_res r;
	uint8_t buf[64];
	uint32_t w;
	size_t len, pos;

	(void)state;
	len = mnt_reply(buf, six, 6);
	for (size_t cut = 0; cut < len; cut++)
		assert_int_not_equal(decode(buf, cut, &r, &pos), 0);
	w = htonl(UINT32_MAX);
	memcpy(buf + 12, &w, 4);
	assert_int_equal(decode(buf, len, &r, &pos), RPCRDMA_ERR_TRUNCATED);
	w = htonl(7);
	memcpy(buf + 12, &w, 4);
	assert_int_equal(decode(buf, len, &r, &pos), RPCRDMA_ERR_TRUNCATED);

	/* The encoder sends no more than the structure holds. */
	{
		struct rpcrdma_xdr_stream x;

		memset(&r, 0, sizeof(r));
		r.nflavors = RPCRDMA_MOUNT3_MAX_FLAVORS + 1;
		rpcrdma_xdr_init(&x, buf, sizeof(buf));
		assert_int_equal(rpcrdma_mount3_xdr_mnt_res_enc(&x, &r), RPCRDMA_ERR_TOO_LONG);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mnt_more_flavors_than_kept),
	    cmocka_unit_test(test_mnt_flavors_bounded_by_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
