/*
 * args_hash.h - the duplicate request cache's hash of a call's arguments
 * and credential: 64 bits, the same however the bytes are split (a
 * retransmission may travel inline, in Read chunks or as a Long Call), and
 * cheap enough to run over every byte of a 1 MiB WRITE.
 *
 * The first RPCRDMA__ARGS_HASH_HEAD bytes (where XDR puts handles, offsets
 * and counts) go through a 64-bit multiply-rotate hash; the bytes after them
 * through NH (the inner hash of UMAC: sums of 32x32-bit products of words
 * plus a key), keyed with a per-process random key, folded per 4 KiB.  Two
 * different byte strings of the same length collide with probability about
 * 2^-32 when they differ only past the head, and a client cannot aim at a
 * collision since it does not know the key.  Values are only meaningful
 * inside one process.
 */
#ifndef RPCRDMA_RPC_ARGS_HASH_H
#define RPCRDMA_RPC_ARGS_HASH_H

#include <stddef.h>
#include <stdint.h>

#define RPCRDMA__ARGS_HASH_HEAD 256u

struct rpcrdma__args_hash {
	uint64_t head_lane[4];
	uint64_t nh_acc[8];
	uint64_t nh_fold;
	uint64_t total;
	unsigned int nh_block; /* blocks into the current KiB */
	unsigned int ncarry;   /* bytes waiting in carry[] */
	uint8_t carry[64];
};

void rpcrdma__args_hash_init(struct rpcrdma__args_hash *h);
void rpcrdma__args_hash_update(struct rpcrdma__args_hash *h, const void *p, size_t n);
uint64_t rpcrdma__args_hash_final(struct rpcrdma__args_hash *h);

/*
 * For tests and measurements: run NH's sums with the named code ("avx512",
 * "avx2", "sse2", "portable") from now on, in the whole process; the value
 * is the same whichever runs.  -ENOENT if not built, -ENOTSUP if this CPU
 * cannot run it.  Not for use while another thread hashes.
 */
int rpcrdma__args_hash_use(const char *name);

#endif
