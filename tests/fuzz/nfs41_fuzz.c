/*
 * Fuzz the NFSv4.1 decoders (rpcrdma/nfs4.h).  The first byte picks one:
 * COMPOUND arguments with NFSv4.1 operations (what a server decodes);
 * COMPOUND results (what our session decodes) against a fixed request of
 * every NFSv4.1 operation, so each result arm is reachable; CB_COMPOUND
 * arguments (what our callback service decodes from the server, the
 * hostile direction for a client); CB_COMPOUND results against a fixed
 * CB_SEQUENCE + CB_RECALL + unknown operation.  What decodes re-encodes
 * and decodes again to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/nfs4.h"

#include "nfs4_requests.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t bulk[2][FUZZ_BULK];

static void request(struct rpcrdma_nfs4_compound *c, int k)
{
	fuzz_nfs41_request(c, bulk[k]);
}

static void cb_request(struct rpcrdma_nfs41_cb_compound *c)
{
	fuzz_cb_request(c);
}

static int fore(const uint8_t *data, size_t size, bool res)
{
	static struct rpcrdma_nfs4_compound a, b;
	static uint8_t out[2][1 << 15];
	struct rpcrdma_xdr_stream x;
	size_t len, len2;

	request(&a, 0);
	rpcrdma_xdr_init_const(&x, data, size);
	if (res ? rpcrdma_nfs4_compound_res_dec(&x, &a) : rpcrdma_nfs4_compound_args_dec(&x, &a))
		return 0;
	rpcrdma_xdr_init(&x, out[0], sizeof(out[0]));
	if (res ? rpcrdma_nfs4_compound_res_enc(&x, &a) : rpcrdma_nfs4_compound_args_enc(&x, &a))
		return 0;
	len = rpcrdma_xdr_pos(&x);
	request(&b, 1);
	rpcrdma_xdr_init_const(&x, out[0], len);
	if (res ? rpcrdma_nfs4_compound_res_dec(&x, &b) : rpcrdma_nfs4_compound_args_dec(&x, &b))
		abort();
	rpcrdma_xdr_init(&x, out[1], sizeof(out[1]));
	if (res ? rpcrdma_nfs4_compound_res_enc(&x, &b) : rpcrdma_nfs4_compound_args_enc(&x, &b))
		abort();
	len2 = rpcrdma_xdr_pos(&x);
	if (len2 != len || memcmp(out[0], out[1], len) != 0)
		abort();
	return 0;
}

static int cb(const uint8_t *data, size_t size, bool res)
{
	static struct rpcrdma_nfs41_cb_compound a, b;
	static uint8_t out[2][1 << 14];
	struct rpcrdma_xdr_stream x;
	size_t len, len2;

	cb_request(&a);
	rpcrdma_xdr_init_const(&x, data, size);
	if (res ? rpcrdma_nfs41_cb_res_dec(&x, &a) : rpcrdma_nfs41_cb_args_dec(&x, &a))
		return 0;
	if (a.nops > RPCRDMA_NFS41_CB_MAX_OPS || (!res && a.nops > a.count))
		abort();
	rpcrdma_xdr_init(&x, out[0], sizeof(out[0]));
	if (res ? rpcrdma_nfs41_cb_res_enc(&x, &a) : rpcrdma_nfs41_cb_args_enc(&x, &a))
		return 0;
	len = rpcrdma_xdr_pos(&x);
	cb_request(&b);
	rpcrdma_xdr_init_const(&x, out[0], len);
	if (res ? rpcrdma_nfs41_cb_res_dec(&x, &b) : rpcrdma_nfs41_cb_args_dec(&x, &b))
		abort();
	rpcrdma_xdr_init(&x, out[1], sizeof(out[1]));
	if (res ? rpcrdma_nfs41_cb_res_enc(&x, &b) : rpcrdma_nfs41_cb_args_enc(&x, &b))
		abort();
	len2 = rpcrdma_xdr_pos(&x);
	if (len2 != len || memcmp(out[0], out[1], len) != 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] & 3) {
	case 0:
		return fore(data + 1, size - 1, false);
	case 1:
		return fore(data + 1, size - 1, true);
	case 2:
		return cb(data + 1, size - 1, false);
	default:
		return cb(data + 1, size - 1, true);
	}
}
