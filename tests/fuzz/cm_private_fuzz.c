/*
 * Fuzz the RFC 8797 private data decoder: it must accept any bytes, and what
 * it reports as present must re-encode to the same first eight bytes (less
 * undefined flag bits).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/cm_private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma_cm_private pd;
	uint8_t out[RPCRDMA_CM_PRIVATE_SIZE];

	rpcrdma_cm_private_decode(data, size, &pd);
	if (pd.send_size < 1024 || pd.send_size > RPCRDMA_CM_MAX_INLINE ||
	    pd.recv_size < 1024 || pd.recv_size > RPCRDMA_CM_MAX_INLINE)
		abort();
	if (!pd.present)
		return 0;
	if (rpcrdma_cm_private_encode(&pd, out, sizeof(out)) != RPCRDMA_CM_PRIVATE_SIZE)
		abort();
	if (memcmp(out, data, 5) != 0 || memcmp(out + 6, data + 6, 2) != 0 ||
	    out[5] != (data[5] & RPCRDMA_CM_FLAG_REMOTE_INVALIDATE))
		abort();
	return 0;
}
