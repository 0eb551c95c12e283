/*
 * Fuzz the transport header decoder with default and tight limits.  Whatever
 * it accepts must re-encode to the same size, decode again to the same
 * fields, and (but for opaque padding) the same bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/header.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rpcrdma_hdr hdr, again;
static uint8_t out[1 << 16];

static void check_round_trip(const uint8_t *data)
{
	struct rpcrdma_hdr_limits lim;
	struct rpcrdma_hdr_fault fault;
	int n = rpcrdma_hdr_encode(&hdr, out, sizeof(out));

	if (n < 0 || (size_t)n != hdr.hdr_len)
		abort();
	if (hdr.proc != RPCRDMA_PROC_OPTIONAL && memcmp(out, data, hdr.hdr_len) != 0)
		abort();
	/* The payload is not re-encoded; give the decoder the original's. */
	if (hdr.payload_len >= 4)
		memcpy(out + n, data + n, 4);
	rpcrdma_hdr_limits_default(&lim);
	lim.vers_low = 0;
	lim.vers_high = UINT32_MAX;
	lim.max_hdr_size = sizeof(out);
	lim.max_chunk_segs = UINT32_MAX;
	lim.max_optinfo = UINT32_MAX;
	if (rpcrdma_hdr_decode(out, (size_t)n + (hdr.payload_len >= 4 ? 4 : 0), &lim, &again,
			       &fault) != 0)
		abort();
	if (again.xid != hdr.xid || again.proc != hdr.proc || again.nreads != hdr.nreads ||
	    again.nwrites != hdr.nwrites || again.nsegs != hdr.nsegs ||
	    again.has_reply != hdr.has_reply || again.err != hdr.err ||
	    again.optinfo_len != hdr.optinfo_len)
		abort();
	if (memcmp(again.segs, hdr.segs, hdr.nsegs * sizeof(hdr.segs[0])) != 0 ||
	    memcmp(again.reads, hdr.reads, hdr.nreads * sizeof(hdr.reads[0])) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma_hdr_limits lim;
	struct rpcrdma_hdr_fault fault;

	if (size > sizeof(out) - 4)
		return 0;
	if (rpcrdma_hdr_decode(data, size, NULL, &hdr, &fault) == 0)
		check_round_trip(data);
	else if (fault.action == RPCRDMA_HDR_ACCEPT || !fault.reason || fault.offset > size)
		abort();

	rpcrdma_hdr_limits_default(&lim);
	lim.vers_high = 1;
	lim.max_reads = 2;
	lim.max_write_chunks = 1;
	lim.max_chunk_segs = 2;
	lim.max_hdr_size = 96;
	lim.max_optinfo = 8;
	if (rpcrdma_hdr_decode(data, size, &lim, &hdr, &fault) == 0) {
		if (hdr.nreads > 2 || hdr.nwrites > 1 || hdr.hdr_len > 96)
			abort();
	}
	return 0;
}
