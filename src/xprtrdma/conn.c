/*
 * The connection engine's common ground: a provider instance driven by the
 * event loop, registered buffers and receive pools, the per-connection
 * accounting both roles share (thresholds, send queue, posted receives),
 * the fencing of remote access, and RFC 8797 private data.
 *
 * Normal operation.  The provider's fd sits in the loop.  Whenever it is
 * readable, and whenever the before-sleep hook finds that the provider is
 * not ready to sleep (trywait), events are polled one at a time and
 * dispatched: completions to the operation that posted them (every context
 * we hand the provider is a struct rpcrdma__xop), everything else to the
 * owner's on_event.  One at a time because a handler may call into the
 * core, which may run the loop again (a synchronous call from a callback):
 * the nested run then simply continues where the outer one stopped.  The
 * hook itself never dispatches (hooks must not run the loop): it arms a
 * 0 ms timer that does.
 *
 * Receive buffers are all of our advertised inline receive size, carved
 * from registered slabs; registrations are local-only and live as long as
 * the transport, so a peer can never reach them (RFC 8166 5.4).
 *
 * Fencing.  Every remote grant of an RPC is revoked before the RPC
 * completes; the RPC waits for the REVOKE completions (provider.h: reuse
 * the memory only after them).  A revocation the provider refuses cannot
 * be waited for: it is counted, and the owner closes the connection
 * (RFC 8166 5.5.4), which is all that is left to do.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "proto/version.h"
#include "xprtrdma/xprt.h"

/* Events handled per drain before yielding to the rest of the loop. */
#define XDEV_BATCH 256u

static bool retry_deferred(struct rpcrdma__xdev *dev);

static void dispatch(struct rpcrdma__xdev *dev, const struct rpcrdma_prov_event *ev)
{
	if (ev->type == RPCRDMA_PEV_COMPLETION) {
		struct rpcrdma__xop *op = ev->ctx;

		if (op && op->done)
			op->done(op, ev);
		return;
	}
	if (ev->type == RPCRDMA_PEV_DEVICE_ERROR && !ev->listener)
		dev->failed = ev->error ? ev->error : -EIO;
	if (dev->on_event)
		dev->on_event(dev, ev);
}

unsigned int rpcrdma__xdev_drain(struct rpcrdma__xdev *dev, unsigned int max)
{
	struct rpcrdma_prov_event ev;
	unsigned int n = 0;

	while (dev->prov && n < max) {
		int rc = rpcrdma__provider_poll(dev->prov, &ev, 1);

		if (rc <= 0) {
			if (rc < 0) {
				/* The instance is dead and said so: its fd may
				 * stay readable for ever, so stop watching. */
				if (!dev->failed)
					dev->failed = rc;
				rpcrdma__timer_stop(&dev->kick);
				rpcrdma__timer_stop(&dev->pool_trim);
				rpcrdma__hook_stop(&dev->hook);
				rpcrdma__watch_stop(&dev->watch);
				rpcrdma__watch_stop(&dev->cm_watch);
			}
			break;
		}
		n++;
		dispatch(dev, &ev);
		if (dev->deferred)
			(void)retry_deferred(dev);
	}
	return n;
}

static void on_kick(struct rpcrdma__timer *t)
{
	struct rpcrdma__xdev *dev = t->ctx;

	if (dev->deferred)
		(void)retry_deferred(dev);
	if (rpcrdma__xdev_drain(dev, XDEV_BATCH) == XDEV_BATCH && dev->prov)
		rpcrdma__timer_start(dev->loop, &dev->kick, 0, on_kick, dev);
}

static void on_watch(struct rpcrdma__watch *w, uint32_t events)
{
	struct rpcrdma__xdev *dev = w->ctx;

	(void)events;
	/* WARNING: manual progress (libfabric tcp): nothing moves, not even
	 * the peer's RDMA aimed at us, except inside poll.  Read on every
	 * wakeup, even one that turns out empty. */
	if (rpcrdma__xdev_drain(dev, XDEV_BATCH) == XDEV_BATCH && dev->prov)
		rpcrdma__timer_start(dev->loop, &dev->kick, 0, on_kick, dev);
}

/* Connection events may be waiting (rpcrdma__provider_cm_fd). */
static void on_cm_watch(struct rpcrdma__watch *w, uint32_t events)
{
	struct rpcrdma__xdev *dev = w->ctx;

	if (dev->prov)
		rpcrdma__provider_cm_ready(dev->prov);
	on_watch(&dev->watch, events);
}

static int on_hook(struct rpcrdma__hook *h)
{
	struct rpcrdma__xdev *dev = h->ctx;
	int rc;

	if (!dev->prov)
		return 0;
	if (dev->deferred && !dev->failed) {
		/* Revocations wait for the provider's queue: keep polling
		 * (and retrying, from the timer: a completed fence may reach
		 * the core, which must not happen inside a hook). */
		rpcrdma__timer_start(dev->loop, &dev->kick, 0, on_kick, dev);
		return 1;
	}
	rc = rpcrdma__provider_trywait(dev->prov);
	if (rc == 0)
		return 0;
	if (rc == -EIO && dev->failed)
		return 0; /* dead instance: nothing will come */
	/* ORDER: poll until empty before sleeping on the fd; done by the
	 * timer, at the end of this loop iteration. */
	rpcrdma__timer_start(dev->loop, &dev->kick, 0, on_kick, dev);
	return 1;
}

static void on_pool_trim(struct rpcrdma__timer *t)
{
	struct rpcrdma__xdev *dev = t->ctx;

	if (!dev->prov)
		return;
	(void)rpcrdma__bufpool_trim(dev->prov);
	rpcrdma__timer_start(dev->loop, &dev->pool_trim, rpcrdma__bufpool_trim_ms, on_pool_trim,
			     dev);
}

int rpcrdma__xdev_open(struct rpcrdma__xdev *dev, struct rpcrdma_loop *loop, const char *name,
		       const struct sockaddr *local, socklen_t locallen,
		       void (*on_event)(struct rpcrdma__xdev *, const struct rpcrdma_prov_event *),
		       void *ctx)
{
	struct rpcrdma_prov_open_attr attr = {.addr = local, .addrlen = locallen};
	int fd, rc;

	memset(dev, 0, sizeof(*dev));
	dev->loop = loop;
	dev->on_event = on_event;
	dev->ctx = ctx;
	rc = rpcrdma__provider_open(name, &attr, &dev->prov);
	if (rc == -ENOENT && !rpcrdma__provider_lookup(name))
		return RPCRDMA_ERR_NO_PROVIDER; /* its text lists those built in */
	if (rc == -ENODEV)
		return RPCRDMA_ERR_NO_RDMA_DEVICE; /* none, or none with this address */
	if (rc)
		return rc;
	fd = rpcrdma__provider_fd(dev->prov);
	if (fd < 0) {
		rc = fd;
		goto out_close;
	}
	rc = rpcrdma__watch_start(loop, &dev->watch, fd, EPOLLIN, on_watch, dev);
	if (rc)
		goto out_close;
	fd = rpcrdma__provider_cm_fd(dev->prov);
	if (fd >= 0) {
		rc = rpcrdma__watch_start(loop, &dev->cm_watch, fd, EPOLLIN, on_cm_watch, dev);
		if (rc) {
			rpcrdma__watch_stop(&dev->watch);
			goto out_close;
		}
	}
	rpcrdma__hook_start(loop, &dev->hook, on_hook, dev);
	rpcrdma__timer_start(loop, &dev->pool_trim, rpcrdma__bufpool_trim_ms, on_pool_trim, dev);
	return 0;

out_close:
	rpcrdma__provider_close(dev->prov);
	dev->prov = NULL;
	return rc;
}

void rpcrdma__xdev_add_stats(const struct rpcrdma__xdev *dev, struct rpcrdma_xprt_stats *out)
{
	struct rpcrdma__regcache_stats rs;
	struct rpcrdma_prov_stats ps;

	if (!dev->prov)
		return;
	rpcrdma__provider_stats(dev->prov, &ps);
	out->prov_sends += ps.sends;
	out->prov_recvs += ps.recvs;
	out->prov_reads += ps.reads;
	out->prov_writes += ps.writes;
	out->prov_grants += ps.grants;
	out->prov_revokes += ps.revokes;
	out->prov_reg_mrs += ps.reg_mrs;
	out->prov_dereg_mrs += ps.dereg_mrs;
	out->pool_bytes_now += rpcrdma__bufpool_bytes(dev->prov);
	rpcrdma__regcache_stats(dev->prov, &rs);
	out->prov_regcache_hits += rs.hits;
	out->prov_regcache_misses += rs.misses;
	out->prov_regcache_uncached += rs.uncached;
	out->prov_regcache_evictions += rs.evictions;
	out->prov_regcache_invalidations += rs.invalidations;
	out->prov_regcache_dead_now += rs.dead_now;
	out->prov_regcache_dead_reaped += rs.dead_reaped;
}

void rpcrdma__xdev_close(struct rpcrdma__xdev *dev)
{
	if (!dev->prov)
		return;
	rpcrdma__timer_stop(&dev->kick);
	rpcrdma__timer_stop(&dev->pool_trim);
	rpcrdma__hook_stop(&dev->hook);
	rpcrdma__watch_stop(&dev->watch);
	rpcrdma__watch_stop(&dev->cm_watch);
	rpcrdma__provider_close(dev->prov);
	dev->prov = NULL;
	dev->deferred = NULL; /* their grants went with the instance */
}

int rpcrdma__xprt_local_addr(const struct sockaddr *dst, socklen_t dstlen,
			     struct sockaddr_storage *out, socklen_t *outlen)
{
	socklen_t len = sizeof(*out);
	int fd, rc = 0;

	if (!dst || (dst->sa_family != AF_INET && dst->sa_family != AF_INET6))
		return -EAFNOSUPPORT;
	/* A connected UDP socket sends nothing; it only asks the routing
	 * table which local address would be the source. */
	fd = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, dst, dstlen) || getsockname(fd, (struct sockaddr *)out, &len))
		rc = -errno;
	close(fd);
	if (rc)
		return rc;
	if (out->ss_family == AF_INET6)
		((struct sockaddr_in6 *)out)->sin6_port = 0;
	else
		((struct sockaddr_in *)out)->sin_port = 0;
	*outlen = len;
	return 0;
}

/*
 * Registered buffers.
 */
/* From the instance's pool (bufpool.c): a size seen before registers
 * nothing, and a buffer given back is kept for the next call. */
int rpcrdma__xbuf_reserve(struct rpcrdma_provider *p, struct rpcrdma__xbuf *b, size_t len)
{
	struct rpcrdma_prov_mr *mr;
	uint8_t *addr;
	size_t cap;
	int rc;

	if (b->addr && b->len >= len)
		return 0;
	rc = rpcrdma__bufpool_get(p, len, &addr, &cap, &mr);
	if (rc)
		return rc;
	rpcrdma__xbuf_free(b);
	b->addr = addr;
	b->len = cap;
	b->mr = mr;
	return 0;
}

void rpcrdma__xbuf_free(struct rpcrdma__xbuf *b)
{
	if (b->mr)
		rpcrdma__bufpool_put(b->mr->prov, b->addr, b->mr);
	else
		free(b->addr);
	b->addr = NULL;
	b->len = 0;
	b->mr = NULL;
}

int rpcrdma__xbuf_take(struct rpcrdma__xbuf_spares *sp, struct rpcrdma_provider *p,
		       struct rpcrdma__xbuf *b, size_t len)
{
	unsigned int best = sp->n;
	struct rpcrdma__xbuf got;

	if (b->addr && b->len >= len)
		return 0;
	for (unsigned int i = 0; i < sp->n; i++) {
		if (sp->bufs[i].len >= len && (best == sp->n || sp->bufs[i].len < sp->bufs[best].len))
			best = i;
	}
	if (best == sp->n)
		return rpcrdma__xbuf_reserve(p, b, len);
	/* ORDER: the spare out first; giving @b's old buffer back may
	 * evict or move spares. */
	got = sp->bufs[best];
	sp->bytes -= got.len;
	sp->bufs[best] = sp->bufs[--sp->n];
	rpcrdma__xbuf_give(sp, b);
	*b = got;
	return 0;
}

void rpcrdma__xbuf_give(struct rpcrdma__xbuf_spares *sp, struct rpcrdma__xbuf *b)
{
	if (!b->addr)
		return;
	if (b->len > sp->max_bytes) {
		rpcrdma__xbuf_free(b);
		return;
	}
	/*
	 * When full, the smallest spares make room for a larger buffer: the
	 * sizes in demand change (a run of small calls, then bulk), and a
	 * spare too small for the calls that come is as good as none.
	 */
	while (sp->n == RPCRDMA__XBUF_SPARES || sp->bytes + b->len > sp->max_bytes) {
		unsigned int small = 0;

		for (unsigned int i = 1; i < sp->n; i++) {
			if (sp->bufs[i].len < sp->bufs[small].len)
				small = i;
		}
		if (sp->bufs[small].len >= b->len) {
			rpcrdma__xbuf_free(b);
			return;
		}
		sp->bytes -= sp->bufs[small].len;
		rpcrdma__xbuf_free(&sp->bufs[small]);
		sp->bufs[small] = sp->bufs[--sp->n];
	}
	sp->bufs[sp->n++] = *b;
	sp->bytes += b->len;
	b->addr = NULL;
	b->len = 0;
	b->mr = NULL;
}

void rpcrdma__xbuf_spares_free(struct rpcrdma__xbuf_spares *sp)
{
	while (sp->n)
		rpcrdma__xbuf_free(&sp->bufs[--sp->n]);
	sp->bytes = 0;
}

/*
 * Receive pools.
 *
 * A slab is freed only once none of its buffers is taken, and the
 * receives a connection keeps posted may be spread over many slabs.  So
 * trimming also marks slabs to drain: their free buffers leave the free
 * list, each one given back is kept out of it, and the slab goes with
 * its last.  A live connection moves off them as its receives complete
 * and are replaced from the other slabs; an idle one keeps them until
 * then, and the owner sees the memory (resized) and counts it.
 */
struct rpcrdma__xrecv_slab {
	struct rpcrdma__xrecv_slab *next;
	uint8_t *mem;
	struct rpcrdma_prov_mr *mr;
	uint32_t in_use; /* buffers taken and not yet put back */
	bool draining;   /* freed with its last buffer put back */
	struct rpcrdma__xrecv r[RPCRDMA__XRECV_SLAB];
};

void rpcrdma__xrecv_pool_init(struct rpcrdma__xrecv_pool *pool, struct rpcrdma_provider *prov,
			      uint32_t size, uint32_t max)
{
	memset(pool, 0, sizeof(*pool));
	pool->prov = prov;
	pool->size = size;
	pool->max = max;
}

static void slab_free(struct rpcrdma__xrecv_pool *pool, struct rpcrdma__xrecv_slab *s)
{
	if (s->mr && pool->prov)
		rpcrdma__provider_dereg_mr(s->mr);
	free(s->mem);
	free(s);
}

void rpcrdma__xrecv_pool_destroy(struct rpcrdma__xrecv_pool *pool)
{
	struct rpcrdma__xrecv_slab *s;

	while ((s = pool->slabs)) {
		pool->slabs = s->next;
		slab_free(pool, s);
	}
	pool->free = NULL;
	pool->total = 0;
	pool->draining = 0;
}

static void resized(struct rpcrdma__xrecv_pool *pool)
{
	if (pool->resized)
		pool->resized(pool);
}

/* A draining slab with a free buffer taken back into use, rather than a
 * new registration: of those, the one with the most buffers taken, which
 * would drain last. */
static bool pool_revive(struct rpcrdma__xrecv_pool *pool)
{
	struct rpcrdma__xrecv_slab *best = NULL;

	for (struct rpcrdma__xrecv_slab *s = pool->slabs; s; s = s->next)
		if (s->draining && s->in_use < RPCRDMA__XRECV_SLAB &&
		    (!best || s->in_use > best->in_use))
			best = s;
	if (!best)
		return false;
	best->draining = false;
	pool->draining -= RPCRDMA__XRECV_SLAB;
	for (unsigned int i = 0; i < RPCRDMA__XRECV_SLAB; i++) {
		struct rpcrdma__xrecv *r = &best->r[i];

		if (!r->taken) {
			r->next = pool->free;
			pool->free = r;
		}
	}
	return true;
}

static int pool_grow(struct rpcrdma__xrecv_pool *pool)
{
	struct rpcrdma__xrecv_slab *s;
	size_t bytes = (size_t)pool->size * RPCRDMA__XRECV_SLAB;
	int rc;

	if (pool_revive(pool))
		return 0;
	if (pool->total >= pool->max)
		return -ENOBUFS;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->mem = malloc(bytes);
	if (!s->mem) {
		free(s);
		return -ENOMEM;
	}
	rc = rpcrdma__provider_reg_mr(pool->prov, s->mem, bytes, &s->mr);
	if (rc) {
		free(s->mem);
		free(s);
		return rc;
	}
	for (unsigned int i = 0; i < RPCRDMA__XRECV_SLAB; i++) {
		struct rpcrdma__xrecv *r = &s->r[i];

		r->buf = s->mem + (size_t)i * pool->size;
		r->mr = s->mr;
		r->slab = s;
		r->next = pool->free;
		pool->free = r;
	}
	s->next = pool->slabs;
	pool->slabs = s;
	pool->total += RPCRDMA__XRECV_SLAB;
	resized(pool);
	return 0;
}

struct rpcrdma__xrecv *rpcrdma__xrecv_get(struct rpcrdma__xrecv_pool *pool)
{
	struct rpcrdma__xrecv *r;

	if (!pool->free && pool_grow(pool))
		return NULL;
	r = pool->free;
	pool->free = r->next;
	r->next = NULL;
	r->conn = NULL;
	r->len = 0;
	r->taken = true;
	r->slab->in_use++;
	return r;
}

void rpcrdma__xrecv_put(struct rpcrdma__xrecv_pool *pool, struct rpcrdma__xrecv *r)
{
	struct rpcrdma__xrecv_slab *s = r->slab, **sp;

	r->conn = NULL;
	r->taken = false;
	s->in_use--;
	if (!s->draining) {
		r->next = pool->free;
		pool->free = r;
		return;
	}
	r->next = NULL;
	if (s->in_use)
		return;
	for (sp = &pool->slabs; *sp != s; sp = &(*sp)->next)
		;
	*sp = s->next;
	pool->total -= RPCRDMA__XRECV_SLAB;
	pool->draining -= RPCRDMA__XRECV_SLAB;
	slab_free(pool, s);
	resized(pool);
}

/* The slab not draining with the fewest buffers taken, NULL if none. */
static struct rpcrdma__xrecv_slab *emptiest(struct rpcrdma__xrecv_pool *pool)
{
	struct rpcrdma__xrecv_slab *best = NULL;

	for (struct rpcrdma__xrecv_slab *s = pool->slabs; s; s = s->next)
		if (!s->draining && (!best || s->in_use < best->in_use))
			best = s;
	return best;
}

void rpcrdma__xrecv_pool_trim(struct rpcrdma__xrecv_pool *pool, uint32_t keep)
{
	struct rpcrdma__xrecv_slab **sp, *s, *gone = NULL;
	struct rpcrdma__xrecv **rp;
	bool marked = false;

	/* Slabs no buffer uses go now. */
	for (sp = &pool->slabs; (s = *sp) && pool->total - pool->draining > keep;) {
		if (s->in_use || s->draining) {
			sp = &s->next;
			continue;
		}
		*sp = s->next;
		s->next = gone;
		gone = s;
		pool->total -= RPCRDMA__XRECV_SLAB;
	}
	/* Slabs some buffers still use go with the last of them, as long as
	 * the others keep at least @keep. */
	while (pool->total - pool->draining >= (uint64_t)keep + RPCRDMA__XRECV_SLAB &&
	       (s = emptiest(pool))) {
		s->draining = true;
		pool->draining += RPCRDMA__XRECV_SLAB;
		marked = true;
	}
	if (!gone && !marked)
		return;
	/* The free list loses the buffers of the slabs freed or draining;
	 * those freed are not reached again below. */
	for (s = gone; s; s = s->next)
		s->draining = true;
	for (rp = &pool->free; *rp;) {
		struct rpcrdma__xrecv *r = *rp;

		if (r->slab->draining)
			*rp = r->next;
		else
			rp = &r->next;
	}
	while ((s = gone)) {
		gone = s->next;
		slab_free(pool, s);
	}
	resized(pool);
}

/*
 * Connections.
 */
int rpcrdma__xconn_repost(struct rpcrdma__xconn *c, struct rpcrdma__xrecv *r)
{
	struct rpcrdma_prov_sge sge = {.addr = r->buf, .length = c->pool->size, .mr = r->mr};
	int rc;

	if (!c->pc || c->state == RPCRDMA__XCONN_DOWN) {
		rpcrdma__xrecv_put(c->pool, r);
		return -ENOTCONN;
	}
	r->op.done = c->on_recv;
	r->conn = c;
	r->conn_gen = c->gen;
	r->len = 0;
	rc = rpcrdma__provider_post_recv(c->pc, &sge, 1, &r->op);
	if (rc) {
		rpcrdma__xrecv_put(c->pool, r);
		return rc;
	}
	c->recv_posted++;
	c->ops_out++;
	return 0;
}

int rpcrdma__xconn_fill_recvs(struct rpcrdma__xconn *c, uint32_t target)
{
	while (c->recv_posted < target) {
		struct rpcrdma__xrecv *r = rpcrdma__xrecv_get(c->pool);
		int rc;

		if (!r)
			return -ENOBUFS;
		rc = rpcrdma__xconn_repost(c, r);
		if (rc)
			return rc;
	}
	return 0;
}

bool rpcrdma__xconn_recv_completed(struct rpcrdma__xconn *c, struct rpcrdma__xrecv *r,
				   const struct rpcrdma_prov_event *ev)
{
	if (c->ops_out)
		c->ops_out--;
	/* A destroyed provider connection (ev->conn NULL) or an older one:
	 * nothing of ours to account. */
	if (!ev->conn || r->conn != c || r->conn_gen != c->gen || ev->conn != c->pc) {
		rpcrdma__xrecv_put(c->pool, r);
		return false;
	}
	if (c->recv_posted)
		c->recv_posted--;
	r->len = ev->status == RPCRDMA_PST_SUCCESS ? ev->byte_len : 0;
	if (r->len > c->pool->size)
		r->len = c->pool->size; /* a provider bug must not become an overread */
	return true;
}

uint32_t rpcrdma__xprt_inline_default(const struct rpcrdma_provider *prov)
{
	if (prov && (prov->caps.flags & RPCRDMA_PCAP_CPU_PLACEMENT))
		return RPCRDMA__XPRT_INLINE_SOFT;
	return RPCRDMA__XPRT_INLINE_DEFAULT;
}

uint32_t rpcrdma__xprt_inline_size(uint32_t configured, uint32_t dflt)
{
	uint32_t v = configured ? configured : dflt;

	if (v < RPCRDMA_CM_DEFAULT_INLINE)
		v = RPCRDMA_CM_DEFAULT_INLINE;
	if (v > RPCRDMA_CM_MAX_INLINE)
		v = RPCRDMA_CM_MAX_INLINE;
	return v & ~1023u;
}

bool rpcrdma__xprt_omit_private;

size_t rpcrdma__xconn_private(uint32_t inline_send, uint32_t inline_recv, bool invalidate,
			      uint8_t *buf, size_t cap)
{
	struct rpcrdma_cm_private pd = {
	    .present = true,
	    .version = RPCRDMA_CM_PRIVATE_VERSION,
	    .flags = invalidate ? RPCRDMA_CM_FLAG_REMOTE_INVALIDATE : 0,
	    .send_size = inline_send,
	    .recv_size = inline_recv,
	};
	int n;

	if (rpcrdma__xprt_omit_private)
		return 0;
	n = rpcrdma_cm_private_encode(&pd, buf, cap);
	return n > 0 ? (size_t)n : 0;
}

void rpcrdma__xconn_negotiate(struct rpcrdma__xconn *c, const void *pdata, size_t len,
			      uint32_t our_send, uint32_t our_recv)
{
	/* Absent or foreign private data decodes to the RFC 8166 defaults
	 * (1024 both ways, no Send With Invalidate). */
	rpcrdma_cm_private_decode(pdata, len, &c->peer);
	rpcrdma__inline_negotiate(&c->peer, our_send, our_recv, &c->thr);
	c->peer_invalidate = c->peer.present && (c->peer.flags & RPCRDMA_CM_FLAG_REMOTE_INVALIDATE);
}

void rpcrdma__xconn_set_version(struct rpcrdma__xconn *c, uint32_t vers, uint32_t our_send,
				uint32_t our_recv)
{
	struct rpcrdma_cm_private peer = c->peer;

	/* A peer that sent no private data takes the default of the version
	 * spoken: 1024 in Version One, 4096 in Version Two (draft 2.3). */
	if (!peer.present)
		peer.recv_size = peer.send_size = rpcrdma__vneg_default_inline(vers);
	c->vers = vers;
	rpcrdma__inline_negotiate(&peer, our_send, our_recv, &c->thr);
}

/*
 * Fencing.
 */
static void fence_revoked(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev)
{
	struct rpcrdma__xfence *f = (struct rpcrdma__xfence *)op;

	(void)ev;
	if (!f->pending)
		return;
	if (--f->pending == 0 && f->done)
		f->done(f);
}

/* One pass over @f's grants.  Returns how many the provider deferred. */
static unsigned int fence_pass(struct rpcrdma__xfence *f, unsigned int *started,
			       unsigned int *refused)
{
	unsigned int deferred = 0;

	for (unsigned int i = 0; i < f->n; i++) {
		int rc;

		if (!f->g[i].g)
			continue;
		rc = rpcrdma__provider_revoke(f->g[i].g, &f->op);
		if (rc == -EAGAIN) {
			/* Untouched (provider.h): again after some events. */
			deferred++;
			continue;
		}
		if (rc == 0) {
			f->pending++;
			(*started)++;
		} else {
			/* Only the connection's end can fence it now: the
			 * owner sees it in f->refused before the fence ends,
			 * and the provider keeps the grant unreachable. */
			(*refused)++;
			f->refused++;
		}
		f->g[i].g = NULL;
	}
	return deferred;
}

static void fence_unqueue(struct rpcrdma__xfence *f)
{
	struct rpcrdma__xfence **pp;

	if (!f->deferred)
		return;
	for (pp = &f->dev->deferred; *pp; pp = &(*pp)->next_deferred) {
		if (*pp == f) {
			*pp = f->next_deferred;
			break;
		}
	}
	f->next_deferred = NULL;
	f->deferred = false;
}

unsigned int rpcrdma__xfence_start(struct rpcrdma__xfence *f, struct rpcrdma__xdev *dev,
				   struct rpcrdma__xgrant *g, unsigned int n,
				   void (*done)(struct rpcrdma__xfence *), unsigned int *failed)
{
	unsigned int started = 0, refused = 0;

	f->op.done = fence_revoked;
	f->done = done;
	f->dev = dev;
	/* Counted from one so that completions delivered meanwhile cannot
	 * end the fence early. */
	f->pending++;
	if (!f->deferred) {
		f->g = g;
		f->n = n;
		if (fence_pass(f, &started, &refused)) {
			/* The deferral holds one count until the last grant
			 * is revoked. */
			f->pending++;
			f->deferred = true;
			f->next_deferred = dev->deferred;
			dev->deferred = f;
		}
	}
	if (failed)
		*failed = refused;
	/* WARNING: @done may free the object holding @f: nothing of it may
	 * be touched after this. */
	fence_revoked(&f->op, NULL);
	return started;
}

/* Retries the revocations the provider deferred.  Returns true while some
 * are still waiting. */
static bool retry_deferred(struct rpcrdma__xdev *dev)
{
	struct rpcrdma__xfence *f = dev->deferred, *next;

	for (; f; f = next) {
		unsigned int started = 0, refused = 0;

		next = f->next_deferred;
		if (fence_pass(f, &started, &refused))
			continue;
		fence_unqueue(f);
		fence_revoked(&f->op, NULL); /* the deferral's count */
	}
	return dev->deferred != NULL;
}

void rpcrdma__xfence_cancel(struct rpcrdma__xfence *f)
{
	fence_unqueue(f);
}
