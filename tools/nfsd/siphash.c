/* SipHash-2-4: two compression rounds per word, four to finish. */
#include "siphash.h"

static uint64_t rotl(uint64_t x, unsigned int b)
{
	return (x << b) | (x >> (64 - b));
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

struct sip {
	uint64_t v0, v1, v2, v3;
};

static void rounds(struct sip *s, int n)
{
	while (n--) {
		s->v0 += s->v1;
		s->v1 = rotl(s->v1, 13) ^ s->v0;
		s->v0 = rotl(s->v0, 32);
		s->v2 += s->v3;
		s->v3 = rotl(s->v3, 16) ^ s->v2;
		s->v0 += s->v3;
		s->v3 = rotl(s->v3, 21) ^ s->v0;
		s->v2 += s->v1;
		s->v1 = rotl(s->v1, 17) ^ s->v2;
		s->v2 = rotl(s->v2, 32);
	}
}

static void absorb(struct sip *s, uint64_t m)
{
	s->v3 ^= m;
	rounds(s, 2);
	s->v0 ^= m;
}

uint64_t nfsd_siphash24(const uint8_t key[16], const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t k0 = le64(key), k1 = le64(key + 8), last;
	struct sip s = {
	    k0 ^ 0x736f6d6570736575ull,
	    k1 ^ 0x646f72616e646f6dull,
	    k0 ^ 0x6c7967656e657261ull,
	    k1 ^ 0x7465646279746573ull,
	};
	size_t i;

	for (i = 0; i + 8 <= len; i += 8)
		absorb(&s, le64(p + i));
	last = (uint64_t)(len & 0xff) << 56;
	for (size_t j = 0; i + j < len; j++)
		last |= (uint64_t)p[i + j] << (8 * j);
	absorb(&s, last);
	s.v2 ^= 0xff;
	rounds(&s, 4);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}
