/*
 * SipHash-2-4 (Aumasson and Bernstein): a keyed 64-bit MAC, short and fast
 * for short inputs.  rpcrdma-nfsd signs its file handles with it.
 */
#ifndef RPCRDMA_NFSD_SIPHASH_H
#define RPCRDMA_NFSD_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t nfsd_siphash24(const uint8_t key[16], const void *data, size_t len);

#endif /* RPCRDMA_NFSD_SIPHASH_H */
