/*
 * The duplicate request cache's argument hash (args_hash.h).
 *
 * Speed matters here: the server hashes every argument byte of every
 * cached call, so for a WRITE the hash runs over as many bytes as the RDMA
 * Read moved, on the core that also received them.  NH's inner step is a
 * 32-bit add and a 32x32->64 multiply per pair of words: four packed
 * multiplies per 64 bytes with SSE2, two with AVX2, one with AVX-512
 * (the fastest the CPU runs, chosen at run time), several times the speed
 * of a 64-bit multiply-rotate per word.  AVX-512 was no faster on the AMD
 * machine where AVX2 was measured first (past 64 KiB the hash waited on
 * the caches); on an Intel Xeon with AVX-512 it hashes 1 MiB in 19 us
 * where AVX2 takes 28-36 us, and in 116 us where AVX2 takes 155 us when
 * the data is no longer in the caches.
 * Every path gives the same value (rpcrdma__args_hash_use() lets the tests
 * check it).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "rpc/args_hash.h"

#if defined(__SSE2__) && !defined(RPCRDMA_ARGS_HASH_PORTABLE)
#include <immintrin.h>
#endif

#define H_P1 0x9E3779B185EBCA87ull
#define H_P2 0xC2B2AE3D27D4EB4Full
#define H_P3 0x165667B19E3779F9ull

#define HEAD_BLOCK 32u
#define NH_BLOCK 64u
#define NH_BLOCKS_PER_FOLD 64u /* 4 KiB: the fold is serial, the sums are not */
#define NH_WORDS (NH_BLOCK / 4)

/* One key per block position within a fold, so that moving data between
 * blocks changes the sum. */
static uint32_t nh_key[NH_BLOCKS_PER_FOLD * NH_WORDS];
static pthread_once_t nh_key_once = PTHREAD_ONCE_INIT;

static uint64_t rotl64(uint64_t v, unsigned int r)
{
	return (v << r) | (v >> (64 - r));
}

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void head_block(struct rpcrdma__args_hash *h, const uint8_t *p)
{
	for (unsigned int i = 0; i < 4; i++)
		h->head_lane[i] = rotl64(h->head_lane[i] + load64(p + 8 * i) * H_P2, 31) * H_P1;
}

static void nh_fold(struct rpcrdma__args_hash *h, uint64_t acc[8])
{
	/* Each step is a bijection of acc[l] for a given fold so far. */
	for (unsigned int l = 0; l < 8; l++) {
		h->nh_fold = rotl64(h->nh_fold ^ acc[l], 29) * H_P1 + H_P3;
		acc[l] = 0;
	}
}

#if defined(__SSE2__) && !defined(RPCRDMA_ARGS_HASH_PORTABLE)
/* Four 128-bit vectors of two 64-bit sums each; pmuludq multiplies the
 * even words of (m + k) by the odd ones, which is exactly one NH pair. */
static inline __m128i nh_pairs(const uint8_t *p, const uint32_t *k)
{
	__m128i t = _mm_add_epi32(_mm_loadu_si128((const __m128i *)(const void *)p),
				  _mm_loadu_si128((const __m128i *)(const void *)k));

	return _mm_mul_epu32(t, _mm_srli_epi64(t, 32));
}

static void nh_sum_sse2(uint64_t sums[8], const uint8_t *p, const uint32_t *k, size_t nblocks)
{
	/* Four named sums, so that they stay in registers. */
	__m128i a0 = _mm_loadu_si128((const __m128i *)(const void *)sums);
	__m128i a1 = _mm_loadu_si128((const __m128i *)(const void *)(sums + 2));
	__m128i a2 = _mm_loadu_si128((const __m128i *)(const void *)(sums + 4));
	__m128i a3 = _mm_loadu_si128((const __m128i *)(const void *)(sums + 6));

	for (size_t b = 0; b < nblocks; b++, p += NH_BLOCK, k += NH_WORDS) {
		a0 = _mm_add_epi64(a0, nh_pairs(p, k));
		a1 = _mm_add_epi64(a1, nh_pairs(p + 16, k + 4));
		a2 = _mm_add_epi64(a2, nh_pairs(p + 32, k + 8));
		a3 = _mm_add_epi64(a3, nh_pairs(p + 48, k + 12));
	}
	_mm_storeu_si128((__m128i *)(void *)sums, a0);
	_mm_storeu_si128((__m128i *)(void *)(sums + 2), a1);
	_mm_storeu_si128((__m128i *)(void *)(sums + 4), a2);
	_mm_storeu_si128((__m128i *)(void *)(sums + 6), a3);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NH_HAVE_AVX2 1
/* The same sums, two 256-bit vectors at a time, where the CPU has AVX2. */
__attribute__((target("avx2"))) static void nh_sum_avx2(uint64_t sums[8], const uint8_t *p,
							  const uint32_t *k, size_t nblocks)
{
	__m256i a0 = _mm256_loadu_si256((const __m256i *)(const void *)sums);
	__m256i a1 = _mm256_loadu_si256((const __m256i *)(const void *)(sums + 4));

	for (size_t b = 0; b < nblocks; b++, p += NH_BLOCK, k += NH_WORDS) {
		__m256i t0 = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(const void *)p),
					      _mm256_loadu_si256((const __m256i *)(const void *)k));
		__m256i t1 =
		    _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(p + 32)),
				     _mm256_loadu_si256((const __m256i *)(const void *)(k + 8)));

		a0 = _mm256_add_epi64(a0, _mm256_mul_epu32(t0, _mm256_srli_epi64(t0, 32)));
		a1 = _mm256_add_epi64(a1, _mm256_mul_epu32(t1, _mm256_srli_epi64(t1, 32)));
	}
	_mm256_storeu_si256((__m256i *)(void *)sums, a0);
	_mm256_storeu_si256((__m256i *)(void *)(sums + 4), a1);
}

/*
 * In a server the arguments were just copied in by the kernel (a socket's
 * receive, an RDMA Read) and have partly left the nearest caches: asking
 * for them this far ahead cut the AVX-512 path's time in a 1 MiB WRITE
 * from 17 % of the server's CPU to 14 % (perf, bench/README.md).  Through
 * an integer, since the hint may point past the buffer, which is harmless
 * (a prefetch never faults) but no pointer may do.
 */
#define NH_PREFETCH_AHEAD 2048u
#define NH_PREFETCH(p, off) \
	_mm_prefetch((const char *)((uintptr_t)(p) + NH_PREFETCH_AHEAD + (off)), _MM_HINT_T0)

#define NH_HAVE_AVX512 1
/* One 512-bit vector holds all eight sums.  Two blocks per turn, into two
 * sums added at the end, so that one block's adds need not wait for the
 * previous block's. */
__attribute__((target("avx512f"))) static void nh_sum_avx512(uint64_t sums[8], const uint8_t *p,
							      const uint32_t *k, size_t nblocks)
{
	__m512i a0 = _mm512_loadu_si512((const void *)sums);
	__m512i a1 = _mm512_setzero_si512();
	size_t b = 0;

	for (; b + 2 <= nblocks; b += 2, p += 2 * NH_BLOCK, k += 2 * NH_WORDS) {
		NH_PREFETCH(p, 0);
		NH_PREFETCH(p, NH_BLOCK);
		__m512i t0 = _mm512_add_epi32(_mm512_loadu_si512((const void *)p),
					      _mm512_loadu_si512((const void *)k));
		__m512i t1 = _mm512_add_epi32(_mm512_loadu_si512((const void *)(p + NH_BLOCK)),
					      _mm512_loadu_si512((const void *)(k + NH_WORDS)));

		a0 = _mm512_add_epi64(a0, _mm512_mul_epu32(t0, _mm512_srli_epi64(t0, 32)));
		a1 = _mm512_add_epi64(a1, _mm512_mul_epu32(t1, _mm512_srli_epi64(t1, 32)));
	}
	if (b < nblocks) {
		__m512i t0 = _mm512_add_epi32(_mm512_loadu_si512((const void *)p),
					      _mm512_loadu_si512((const void *)k));

		a0 = _mm512_add_epi64(a0, _mm512_mul_epu32(t0, _mm512_srli_epi64(t0, 32)));
	}
	_mm512_storeu_si512((void *)sums, _mm512_add_epi64(a0, a1));
}
#endif

#endif /* __SSE2__ */

static void nh_sum_portable(uint64_t sums[8], const uint8_t *p, const uint32_t *k,
			    size_t nblocks)
{
	uint64_t acc[8];

	memcpy(acc, sums, sizeof(acc)); /* in registers: p may alias sums */
	for (size_t b = 0; b < nblocks; b++, p += NH_BLOCK, k += NH_WORDS) {
		uint32_t m[NH_WORDS];

		memcpy(m, p, sizeof(m));
		for (unsigned int l = 0; l < 8; l++)
			acc[l] += (uint64_t)(uint32_t)(m[2 * l] + k[2 * l]) *
				  (uint32_t)(m[2 * l + 1] + k[2 * l + 1]);
	}
	memcpy(sums, acc, sizeof(acc));
}

typedef void nh_sum_fn(uint64_t sums[8], const uint8_t *p, const uint32_t *k, size_t nblocks);

static const struct {
	const char *name;
	nh_sum_fn *fn;
} nh_impls[] = {
#ifdef NH_HAVE_AVX512
    {"avx512", nh_sum_avx512},
#endif
#ifdef NH_HAVE_AVX2
    {"avx2", nh_sum_avx2},
#endif
#if defined(__SSE2__) && !defined(RPCRDMA_ARGS_HASH_PORTABLE)
    {"sse2", nh_sum_sse2},
#endif
    {"portable", nh_sum_portable},
};

static nh_sum_fn *nh_sum = nh_sum_portable; /* set once, with the key */

static bool nh_impl_runs(const char *name)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	__builtin_cpu_init();
	if (strcmp(name, "avx512") == 0)
		return __builtin_cpu_supports("avx512f");
	if (strcmp(name, "avx2") == 0)
		return __builtin_cpu_supports("avx2");
#endif
	return true;
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static void nh_key_init(void)
{
	uint64_t seed;
	struct timespec ts;

	/* The first that this CPU runs: the list goes fastest first. */
	for (size_t i = 0; i < sizeof(nh_impls) / sizeof(nh_impls[0]); i++) {
		if (nh_impl_runs(nh_impls[i].name)) {
			nh_sum = nh_impls[i].fn;
			break;
		}
	}
	if (getrandom(nh_key, sizeof(nh_key), GRND_NONBLOCK) == (ssize_t)sizeof(nh_key))
		return;
	/* No entropy yet (early boot): a key nobody outside can read still
	 * keeps collisions from being aimed. */
	clock_gettime(CLOCK_REALTIME, &ts);
	seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 40) ^
	       (uint64_t)(uintptr_t)&seed;
	for (size_t i = 0; i < NH_BLOCKS_PER_FOLD * NH_WORDS; i++)
		nh_key[i] = (uint32_t)splitmix64(&seed);
}

static void nh_blocks(struct rpcrdma__args_hash *h, const uint8_t *p, size_t nblocks)
{
	while (nblocks) {
		size_t run = NH_BLOCKS_PER_FOLD - h->nh_block;

		if (run > nblocks)
			run = nblocks;
		nh_sum(h->nh_acc, p, nh_key + h->nh_block * NH_WORDS, run);
		p += run * NH_BLOCK;
		nblocks -= run;
		h->nh_block += (unsigned int)run;
		if (h->nh_block == NH_BLOCKS_PER_FOLD) {
			nh_fold(h, h->nh_acc);
			h->nh_block = 0;
		}
	}
}

void rpcrdma__args_hash_init(struct rpcrdma__args_hash *h)
{
	pthread_once(&nh_key_once, nh_key_init);
	memset(h, 0, sizeof(*h));
	h->head_lane[0] = H_P1 + H_P2;
	h->head_lane[1] = H_P2;
	h->head_lane[3] = (uint64_t)0 - H_P1;
}

/* Bytes absorbed into whole blocks so far. */
static uint64_t absorbed(const struct rpcrdma__args_hash *h, size_t pending)
{
	return h->total - pending - h->ncarry;
}

void rpcrdma__args_hash_update(struct rpcrdma__args_hash *h, const void *data, size_t n)
{
	const uint8_t *p = data;

	h->total += n;
	while (n) {
		bool in_head = absorbed(h, n) < RPCRDMA__ARGS_HASH_HEAD;
		unsigned int bs = in_head ? HEAD_BLOCK : NH_BLOCK;

		if (h->ncarry || n < bs) {
			size_t take = bs - h->ncarry < n ? bs - h->ncarry : n;

			memcpy(h->carry + h->ncarry, p, take);
			h->ncarry += (unsigned int)take;
			p += take;
			n -= take;
			if (h->ncarry < bs)
				continue;
			if (in_head)
				head_block(h, h->carry);
			else
				nh_blocks(h, h->carry, 1);
			h->ncarry = 0;
		} else if (in_head) {
			head_block(h, p);
			p += HEAD_BLOCK;
			n -= HEAD_BLOCK;
		} else {
			size_t nb = n / NH_BLOCK;

			nh_blocks(h, p, nb);
			p += nb * NH_BLOCK;
			n -= nb * NH_BLOCK;
		}
	}
}

uint64_t rpcrdma__args_hash_final(struct rpcrdma__args_hash *h)
{
	uint64_t v = rotl64(h->head_lane[0], 1) + rotl64(h->head_lane[1], 7) +
		     rotl64(h->head_lane[2], 12) + rotl64(h->head_lane[3], 18);

	v ^= h->total * H_P3;
	if (h->total <= RPCRDMA__ARGS_HASH_HEAD) {
		for (unsigned int i = 0; i < h->ncarry; i++)
			v = rotl64(v ^ (h->carry[i] * H_P3), 11) * H_P1;
	} else {
		/* The total length is in v, so zero padding is unambiguous. */
		if (h->ncarry) {
			memset(h->carry + h->ncarry, 0, NH_BLOCK - h->ncarry);
			nh_blocks(h, h->carry, 1);
			h->ncarry = 0;
		}
		if (h->nh_block)
			nh_fold(h, h->nh_acc);
		v = rotl64(v ^ h->nh_fold, 27) * H_P1 + H_P2;
	}
	v ^= v >> 33;
	v *= H_P2;
	v ^= v >> 29;
	v *= H_P3;
	v ^= v >> 32;
	return v;
}

int rpcrdma__args_hash_use(const char *name)
{
	pthread_once(&nh_key_once, nh_key_init);
	for (size_t i = 0; i < sizeof(nh_impls) / sizeof(nh_impls[0]); i++) {
		if (strcmp(nh_impls[i].name, name) == 0) {
			if (!nh_impl_runs(name))
				return -ENOTSUP;
			nh_sum = nh_impls[i].fn;
			return 0;
		}
	}
	return -ENOENT;
}
