/*
 * Fuzz the Version Two transport properties decoder (rdma_optinfo of
 * RPCRDMA_OPT_PROPERTIES): any bytes are accepted or refused cleanly, and
 * what it accepts re-encodes to an encoding that decodes to the same values.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma__props p, q;
	uint8_t out[4 + RPCRDMA_PROPS_MAX * 12];
	int n;

	if (rpcrdma__props_decode(data, size, &p))
		return 0;
	n = rpcrdma__props_encode(&p, out, sizeof(out));
	if (n < 0 || (size_t)n > size)
		abort();
	if (rpcrdma__props_decode(out, (size_t)n, &q) || memcmp(&p, &q, sizeof(p)))
		abort();
	return 0;
}
