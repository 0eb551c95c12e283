/*
 * Fuzz the NFSv4 COMPOUND decoders (rpcrdma/nfs4.h).  The first byte picks
 * the direction: arguments (what a server decodes) or results (what our
 * client decodes, against a fixed request of every operation the codec
 * knows, so each result arm is reachable).  What decodes re-encodes and
 * decodes again to the same bytes; decoded attribute values are walked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/nfs4.h"

#include "nfs4_requests.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t bulk[2][3][FUZZ_BULK];

static void request(struct rpcrdma_nfs4_compound *c, int k)
{
	fuzz_nfs40_request(c, bulk[k]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rpcrdma_nfs4_compound a, b;
	static uint8_t out[2][1 << 15];
	struct rpcrdma_xdr_stream x;
	struct rpcrdma_nfs4_fattr fa;
	size_t len, len2;
	bool res;

	if (size < 1)
		return 0;
	res = data[0] & 1;
	request(&a, 0);
	rpcrdma_xdr_init_const(&x, data + 1, size - 1);
	if (res ? rpcrdma_nfs4_compound_res_dec(&x, &a) : rpcrdma_nfs4_compound_args_dec(&x, &a))
		return 0;
	if (res) {
		for (uint32_t i = 0; i < a.nres; i++)
			(void)rpcrdma_nfs4_fattr_decode(&a.ops[i], &fa);
	}
	rpcrdma_xdr_init(&x, out[0], sizeof(out[0]));
	if (res ? rpcrdma_nfs4_compound_res_enc(&x, &a) : rpcrdma_nfs4_compound_args_enc(&x, &a))
		return 0; /* decodable but not encodable: a zero-length LOOKUP, say */
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
