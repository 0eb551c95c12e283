/*
 * The registered-buffer pool of a provider instance (bufpool.h).  Each
 * class keeps a stack of idle buffers; the link lives in the idle buffer's
 * own first bytes, so keeping one allocates nothing.  A buffer is
 * registered once, when its class has none idle, and deregistered when the
 * bounds refuse to keep it, when it stayed idle through a trim period
 * (rpcrdma__bufpool_trim), or when the instance closes.  Only the
 * instance's thread uses it.
 */
#include <errno.h>
#include <stdlib.h>

#include "provider/provider.h"

#define NCLASSES (RPCRDMA__BUFPOOL_MAX_SHIFT - RPCRDMA__BUFPOOL_MIN_SHIFT + 1u)

struct idle {
	struct idle *next;
	struct rpcrdma_prov_mr *mr;
};

struct rpcrdma__bufpool {
	struct idle *idle[NCLASSES];
	unsigned int n[NCLASSES];
	/* The fewest idle in each class since the last trim: those were
	 * not needed at any moment of the period. */
	unsigned int low[NCLASSES];
	size_t bytes;
};

uint64_t rpcrdma__bufpool_trim_ms = RPCRDMA__BUFPOOL_TRIM_MS;

/* The class of @len, or NCLASSES when it is too large for one. */
static unsigned int class_of(size_t len)
{
	unsigned int c = 0;

	while (c < NCLASSES && ((size_t)1 << (c + RPCRDMA__BUFPOOL_MIN_SHIFT)) < len)
		c++;
	return c;
}

size_t rpcrdma__bufpool_cap(size_t len)
{
	unsigned int c = class_of(len ? len : 1);

	return c < NCLASSES ? (size_t)1 << (c + RPCRDMA__BUFPOOL_MIN_SHIFT) : len;
}

int rpcrdma__bufpool_get(struct rpcrdma_provider *p, size_t len, uint8_t **addr, size_t *cap,
			 struct rpcrdma_prov_mr **mr)
{
	struct rpcrdma__bufpool *bp = p->bufpool;
	unsigned int c = class_of(len ? len : 1);
	size_t size = rpcrdma__bufpool_cap(len);
	uint8_t *mem;
	int rc;

	if (!bp && c < NCLASSES) {
		bp = calloc(1, sizeof(*bp));
		if (!bp)
			return -ENOMEM;
		p->bufpool = bp;
	}
	if (c < NCLASSES && bp->idle[c]) {
		struct idle *it = bp->idle[c];

		bp->idle[c] = it->next;
		bp->n[c]--;
		if (bp->n[c] < bp->low[c])
			bp->low[c] = bp->n[c];
		bp->bytes -= size;
		*mr = it->mr;
		*addr = (uint8_t *)it;
		*cap = size;
		return 0;
	}
	mem = malloc(size);
	if (!mem)
		return -ENOMEM;
	rc = rpcrdma__provider_reg_mr(p, mem, size, mr);
	if (rc) {
		free(mem);
		return rc;
	}
	*addr = mem;
	*cap = size;
	return 0;
}

void rpcrdma__bufpool_put(struct rpcrdma_provider *p, uint8_t *addr, struct rpcrdma_prov_mr *mr)
{
	struct rpcrdma__bufpool *bp = p->bufpool;
	size_t size = mr->length;
	unsigned int c = class_of(size);

	if (bp && c < NCLASSES && size == ((size_t)1 << (c + RPCRDMA__BUFPOOL_MIN_SHIFT)) &&
	    bp->n[c] < RPCRDMA__BUFPOOL_MAX_PER_CLASS &&
	    bp->bytes + size <= RPCRDMA__BUFPOOL_MAX_BYTES) {
		struct idle *it = (struct idle *)(void *)addr;

		it->next = bp->idle[c];
		it->mr = mr;
		bp->idle[c] = it;
		bp->n[c]++;
		bp->bytes += size;
		return;
	}
	rpcrdma__provider_dereg_mr(mr);
	free(addr);
}

size_t rpcrdma__bufpool_trim(struct rpcrdma_provider *p)
{
	struct rpcrdma__bufpool *bp = p->bufpool;
	size_t freed = 0;

	if (!bp)
		return 0;
	for (unsigned int c = 0; c < NCLASSES; c++) {
		size_t size = (size_t)1 << (c + RPCRDMA__BUFPOOL_MIN_SHIFT);
		/* Half of those idle all along, rounded up: a burst's buffers
		 * go over a few periods, and a load that comes back each
		 * period keeps what it takes. */
		unsigned int k = (bp->low[c] + 1) / 2;

		while (k-- && bp->idle[c]) {
			struct idle *it = bp->idle[c];

			bp->idle[c] = it->next;
			bp->n[c]--;
			bp->bytes -= size;
			freed += size;
			rpcrdma__provider_dereg_mr(it->mr);
			free(it);
		}
		bp->low[c] = bp->n[c];
	}
	return freed;
}

size_t rpcrdma__bufpool_bytes(const struct rpcrdma_provider *p)
{
	return p->bufpool ? p->bufpool->bytes : 0;
}

void rpcrdma__bufpool_close(struct rpcrdma_provider *p)
{
	struct rpcrdma__bufpool *bp = p->bufpool;

	if (!bp)
		return;
	for (unsigned int c = 0; c < NCLASSES; c++) {
		while (bp->idle[c]) {
			struct idle *it = bp->idle[c];

			bp->idle[c] = it->next;
			rpcrdma__provider_dereg_mr(it->mr);
			free(it);
		}
	}
	p->bufpool = NULL;
	free(bp);
}
