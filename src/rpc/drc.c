/*
 * The duplicate request cache (drc.h): a pool of entries, a hash table
 * over their keys, and a least-recently-used list of answered entries
 * with a byte budget for their replies.
 *
 * The pool and the table grow with use, up to the configured entries: a
 * server configured for millions of entries (rpc.h allows 1 << 24, some
 * 2.5 GiB at 152 bytes each) pays for the calls it has seen, not for the
 * bound.  Entries come in slabs that never move, since the server keeps
 * pointers to entries in progress; the table doubles while it has fewer
 * buckets than entries.  Either allocation failing only means fewer
 * entries (the oldest answered one is reused, or the call goes uncached)
 * or longer chains, as a smaller cache would have.
 *
 * Entries move free -> in progress -> done -> free.  Only done entries are
 * on the LRU list, so eviction can never take a call that is executing:
 * losing that entry would let its retransmission run it a second time.
 * When the pool is exhausted by calls in progress, a new call is simply not
 * cached (it still executes); refusing it instead would let a client with
 * many slow calls shut everyone else out.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "common/list.h"
#include "rpc/args_hash.h"
#include "rpc/drc.h"
#include "xdr/xdr_len.h"

enum entry_state {
	E_FREE,
	E_IN_PROGRESS,
	E_DONE,
};

struct rpcrdma__drc_entry {
	struct rpcrdma__drc_key key;
	enum entry_state state;
	struct rpcrdma__drc_entry *hnext; /* hash chain */
	struct rpcrdma__list lnode;       /* the LRU (done) or the free list */
	void *mem;                        /* one allocation: ddp[], then reply */
	struct rpcrdma__drc_ddp *ddp;     /* DDP-eligible items of the reply */
	unsigned int nddp;
	void *reply;
	size_t reply_len;
	size_t cost; /* what it counts against max_bytes */
	void *owner;
};

/* Entries are allocated this many at a time (some 40 KiB). */
#define SLAB_ENTRIES 256u
/* The table's first size, and where it would stop doubling. */
#define BUCKETS_MIN 16u

struct drc_slab {
	struct drc_slab *next;
	unsigned int n;
	struct rpcrdma__drc_entry e[];
};

struct rpcrdma__drc {
	struct drc_slab *slabs;
	unsigned int nentries;  /* the bound */
	unsigned int allocated; /* entries in the slabs */
	struct rpcrdma__drc_entry **buckets;
	unsigned int nbuckets; /* a power of two */
	unsigned int max_buckets;
	struct rpcrdma__list free_list;
	struct rpcrdma__list lru; /* oldest first */
	size_t max_bytes;
	struct rpcrdma__drc_counts n;
};

int rpcrdma__drc_create(unsigned int entries, size_t max_bytes, struct rpcrdma__drc **out)
{
	struct rpcrdma__drc *drc;

	if (!out)
		return -EINVAL;
	if (entries == 0)
		entries = RPCRDMA__DRC_DEFAULT_ENTRIES;
	if (entries > RPCRDMA__DRC_MAX_ENTRIES)
		return -EINVAL;
	drc = calloc(1, sizeof(*drc));
	if (!drc)
		return -ENOMEM;
	drc->nentries = entries;
	drc->max_bytes = max_bytes ? max_bytes : RPCRDMA__DRC_DEFAULT_BYTES;
	for (drc->max_buckets = BUCKETS_MIN; drc->max_buckets < entries; drc->max_buckets <<= 1)
		;
	drc->nbuckets = BUCKETS_MIN;
	drc->buckets = calloc(drc->nbuckets, sizeof(*drc->buckets));
	if (!drc->buckets) {
		free(drc);
		return -ENOMEM;
	}
	rpcrdma__list_init(&drc->free_list);
	rpcrdma__list_init(&drc->lru);
	*out = drc;
	return 0;
}

void rpcrdma__drc_destroy(struct rpcrdma__drc *drc)
{
	struct drc_slab *sl, *next;

	if (!drc)
		return;
	for (sl = drc->slabs; sl; sl = next) {
		next = sl->next;
		for (unsigned int i = 0; i < sl->n; i++)
			free(sl->e[i].mem);
		free(sl);
	}
	free(drc->buckets);
	free(drc);
}

/* FNV-1a: cheap, for the bucket index only (the table is private and
 * chains are short; an attacker colliding buckets only slows itself). */
static uint32_t fnv1a(uint32_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 16777619u;
	}
	return h;
}

uint64_t rpcrdma__drc_hash(const void *p, size_t len)
{
	struct rpcrdma__args_hash h;

	rpcrdma__args_hash_init(&h);
	rpcrdma__args_hash_update(&h, p, len);
	return rpcrdma__args_hash_final(&h);
}

/* Every byte from the stream's position to its end, without moving it. */
static uint64_t hash_stream(const struct rpcrdma_xdr_stream *xdr)
{
	size_t left = rpcrdma_xdr_remaining(xdr);
	size_t off = xdr->seg_off;
	struct rpcrdma__args_hash h;

	rpcrdma__args_hash_init(&h);
	for (unsigned int i = xdr->seg; i < xdr->iovcnt && left; i++, off = 0) {
		const struct iovec *v = &xdr->iov[i];
		size_t n;

		if (off >= v->iov_len)
			continue;
		n = v->iov_len - off;
		if (n > left)
			n = left;
		rpcrdma__args_hash_update(&h, (const uint8_t *)v->iov_base + off, n);
		left -= n;
	}
	return rpcrdma__args_hash_final(&h);
}

void rpcrdma__drc_key_init(struct rpcrdma__drc_key *key, uint32_t xid, uint32_t prog, uint32_t vers,
			   uint32_t proc, const struct sockaddr *peer,
			   const struct rpcrdma_xdr_stream *args)
{
	memset(key, 0, sizeof(*key));
	key->xid = xid;
	key->prog = prog;
	key->vers = vers;
	key->proc = proc;
	if (args) {
		key->args_len = rpcrdma_xdr_remaining(args);
		key->args_hash = hash_stream(args);
	} else {
		key->args_hash = rpcrdma__drc_hash(NULL, 0);
	}
	key->cred_hash = rpcrdma__drc_hash(NULL, 0);
	if (peer && peer->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)peer;

		key->family = AF_INET;
		memcpy(key->addr, &sin->sin_addr, 4);
	} else if (peer && peer->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)peer;

		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			key->family = AF_INET;
			memcpy(key->addr, &sin6->sin6_addr.s6_addr[12], 4);
		} else {
			key->family = AF_INET6;
			memcpy(key->addr, &sin6->sin6_addr, 16);
		}
	}
}

void rpcrdma__drc_key_bind(struct rpcrdma__drc_key *key, const struct sockaddr *peer,
			   bool with_port, uint32_t cred_flavor, const void *cred_body,
			   uint32_t cred_len)
{
	struct rpcrdma__args_hash h;
	uint8_t w[8];

	rpcrdma__args_hash_init(&h);
	memcpy(w, &cred_flavor, 4);
	memcpy(w + 4, &cred_len, 4);
	rpcrdma__args_hash_update(&h, w, sizeof(w));
	if (cred_body && cred_len)
		rpcrdma__args_hash_update(&h, cred_body, cred_len);
	key->cred_hash = rpcrdma__args_hash_final(&h);
	key->port = 0;
	if (with_port && peer && peer->sa_family == AF_INET)
		key->port = ((const struct sockaddr_in *)peer)->sin_port;
	else if (with_port && peer && peer->sa_family == AF_INET6)
		key->port = ((const struct sockaddr_in6 *)peer)->sin6_port;
}

static bool key_equal(const struct rpcrdma__drc_key *a, const struct rpcrdma__drc_key *b)
{
	return a->xid == b->xid && a->prog == b->prog && a->vers == b->vers && a->proc == b->proc &&
	       a->args_hash == b->args_hash && a->args_len == b->args_len &&
	       a->cred_hash == b->cred_hash && a->family == b->family && a->port == b->port &&
	       memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

static unsigned int bucket_of(const struct rpcrdma__drc *drc, const struct rpcrdma__drc_key *k)
{
	uint32_t h = fnv1a(2166136261u, &k->xid, sizeof(k->xid));

	h = fnv1a(h, k->addr, sizeof(k->addr));
	return h & (drc->nbuckets - 1);
}

static struct rpcrdma__drc_entry *entry_of(struct rpcrdma__list *n)
{
	return n ? rpcrdma__container_of(n, struct rpcrdma__drc_entry, lnode) : NULL;
}

/* Twice the buckets, every chained entry moved; false leaves the table
 * as it was. */
static bool grow_table(struct rpcrdma__drc *drc)
{
	unsigned int old_n = drc->nbuckets;
	struct rpcrdma__drc_entry **old = drc->buckets, **nb;

	nb = calloc((size_t)old_n * 2, sizeof(*nb));
	if (!nb)
		return false;
	drc->buckets = nb;
	drc->nbuckets = old_n * 2;
	for (unsigned int i = 0; i < old_n; i++) {
		struct rpcrdma__drc_entry *e = old[i], *next;

		for (; e; e = next) {
			unsigned int b = bucket_of(drc, &e->key);

			next = e->hnext;
			e->hnext = nb[b];
			nb[b] = e;
		}
	}
	free(old);
	return true;
}

/* More free entries, while the bound allows; false when none came. */
static bool grow_pool(struct rpcrdma__drc *drc)
{
	unsigned int n = drc->nentries - drc->allocated;
	struct drc_slab *sl;

	if (n == 0)
		return false;
	if (n > SLAB_ENTRIES)
		n = SLAB_ENTRIES;
	sl = calloc(1, sizeof(*sl) + (size_t)n * sizeof(sl->e[0]));
	if (!sl)
		return false;
	sl->n = n;
	sl->next = drc->slabs;
	drc->slabs = sl;
	drc->allocated += n;
	for (unsigned int i = 0; i < n; i++)
		rpcrdma__list_add_tail(&drc->free_list, &sl->e[i].lnode);
	/* Chains stay about one entry long; a failure keeps them longer. */
	while (drc->nbuckets < drc->max_buckets && drc->nbuckets < drc->allocated &&
	       grow_table(drc))
		;
	return true;
}

/* Back to the free list, whatever the state. */
static void release(struct rpcrdma__drc *drc, struct rpcrdma__drc_entry *e)
{
	struct rpcrdma__drc_entry **pp = &drc->buckets[bucket_of(drc, &e->key)];

	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == e) {
			*pp = e->hnext;
			break;
		}
	}
	e->hnext = NULL;
	if (e->state == E_DONE) {
		rpcrdma__list_del(&e->lnode);
		drc->n.done--;
		drc->n.bytes -= e->cost;
	} else if (e->state == E_IN_PROGRESS) {
		drc->n.in_progress--;
	}
	free(e->mem);
	e->mem = NULL;
	e->ddp = NULL;
	e->nddp = 0;
	e->reply = NULL;
	e->reply_len = 0;
	e->cost = 0;
	e->owner = NULL;
	e->state = E_FREE;
	rpcrdma__list_add_head(&drc->free_list, &e->lnode);
}

enum rpcrdma__drc_verdict rpcrdma__drc_lookup(struct rpcrdma__drc *drc,
					      const struct rpcrdma__drc_key *key,
					      struct rpcrdma__drc_entry **entry)
{
	unsigned int b = bucket_of(drc, key);
	struct rpcrdma__drc_entry *e;

	for (e = drc->buckets[b]; e; e = e->hnext) {
		if (!key_equal(&e->key, key))
			continue;
		*entry = e;
		if (e->state == E_IN_PROGRESS) {
			drc->n.hits_in_progress++;
			return RPCRDMA__DRC_IN_PROGRESS;
		}
		drc->n.hits_done++;
		rpcrdma__list_del(&e->lnode);
		rpcrdma__list_add_tail(&drc->lru, &e->lnode);
		return RPCRDMA__DRC_DONE;
	}
	if (rpcrdma__list_empty(&drc->free_list))
		(void)grow_pool(drc);
	if (rpcrdma__list_empty(&drc->free_list) && !rpcrdma__list_empty(&drc->lru)) {
		drc->n.evictions++;
		release(drc, entry_of(rpcrdma__list_first(&drc->lru)));
	}
	e = entry_of(rpcrdma__list_first(&drc->free_list));
	if (!e) {
		drc->n.uncached++;
		*entry = NULL;
		return RPCRDMA__DRC_NEW;
	}
	rpcrdma__list_del(&e->lnode);
	e->key = *key;
	e->state = E_IN_PROGRESS;
	b = bucket_of(drc, key); /* grow_pool() may have doubled the table */
	e->hnext = drc->buckets[b];
	drc->buckets[b] = e;
	drc->n.in_progress++;
	*entry = e;
	return RPCRDMA__DRC_NEW;
}

bool rpcrdma__drc_ddp_valid(const void *reply, size_t len, const struct rpcrdma__drc_ddp *d,
			    size_t *end)
{
	const uint8_t *w;

	if (d->off % RPCRDMA_XDR_UNIT || d->off < *end + RPCRDMA_XDR_UNIT || d->off > len ||
	    !rpcrdma__xdr_fits_padded(d->len, len - d->off))
		return false;
	w = (const uint8_t *)reply + d->off - RPCRDMA_XDR_UNIT;
	if (((uint32_t)w[0] << 24 | (uint32_t)w[1] << 16 | (uint32_t)w[2] << 8 | w[3]) != d->len)
		return false;
	*end = d->off + rpcrdma_xdr_align(d->len);
	return true;
}

int rpcrdma__drc_complete_ddp(struct rpcrdma__drc *drc, struct rpcrdma__drc_entry *e,
			      const void *reply, size_t len, const struct rpcrdma__drc_ddp *ddp,
			      unsigned int nddp)
{
	unsigned int keep = 0;
	size_t end = 0, cost;
	uint8_t *mem;

	if (e->state != E_IN_PROGRESS || (len && !reply) || (nddp && !ddp))
		return -EINVAL;
	/* Count first: the items kept are part of what the entry costs. */
	for (unsigned int i = 0; i < nddp; i++)
		keep += rpcrdma__drc_ddp_valid(reply, len, &ddp[i], &end);
	if (len > drc->max_bytes || keep > (drc->max_bytes - len) / sizeof(*ddp)) {
		release(drc, e);
		return -EMSGSIZE;
	}
	cost = len + keep * sizeof(*ddp);
	mem = malloc(cost ? cost : 1);
	if (!mem) {
		release(drc, e);
		return -ENOMEM;
	}
	e->mem = mem;
	e->ddp = (struct rpcrdma__drc_ddp *)(void *)mem;
	e->nddp = 0;
	end = 0;
	for (unsigned int i = 0; i < nddp; i++) {
		if (rpcrdma__drc_ddp_valid(reply, len, &ddp[i], &end))
			e->ddp[e->nddp++] = ddp[i];
	}
	e->reply = mem + keep * sizeof(*ddp);
	if (len)
		memcpy(e->reply, reply, len);
	while (drc->n.bytes + cost > drc->max_bytes && !rpcrdma__list_empty(&drc->lru)) {
		drc->n.evictions++;
		release(drc, entry_of(rpcrdma__list_first(&drc->lru)));
	}
	e->reply_len = len;
	e->cost = cost;
	e->state = E_DONE;
	e->owner = NULL;
	drc->n.in_progress--;
	drc->n.done++;
	drc->n.bytes += cost;
	rpcrdma__list_add_tail(&drc->lru, &e->lnode);
	return 0;
}

int rpcrdma__drc_complete(struct rpcrdma__drc *drc, struct rpcrdma__drc_entry *e, const void *reply,
			  size_t len)
{
	return rpcrdma__drc_complete_ddp(drc, e, reply, len, NULL, 0);
}

void rpcrdma__drc_forget(struct rpcrdma__drc *drc, struct rpcrdma__drc_entry *e)
{
	if (e && e->state != E_FREE)
		release(drc, e);
}

void rpcrdma__drc_reply(struct rpcrdma__drc *drc, struct rpcrdma__drc_entry *e, const void **reply,
			size_t *len)
{
	(void)drc;
	*reply = e->reply;
	*len = e->reply_len;
}

void rpcrdma__drc_reply_ddp(const struct rpcrdma__drc_entry *e, const struct rpcrdma__drc_ddp **ddp,
			    unsigned int *nddp)
{
	*ddp = e->ddp;
	*nddp = e->nddp;
}

void **rpcrdma__drc_owner(struct rpcrdma__drc_entry *e)
{
	return &e->owner;
}

void rpcrdma__drc_counts(const struct rpcrdma__drc *drc, struct rpcrdma__drc_counts *out)
{
	*out = drc->n;
	out->allocated = drc->allocated;
	out->buckets = drc->nbuckets;
}
