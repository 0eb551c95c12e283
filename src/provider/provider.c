/*
 * The provider registry and what every provider shares.  The registry maps
 * a provider name to its vtable and opens instances; which providers exist
 * is decided at build time (each builds only where its library is found),
 * so its table is constant.  The shared part is the bookkeeping that the
 * interface's guarantees need in any implementation: a queue of events
 * not yet delivered, handle choice and quarantine, argument checks, and
 * the splitting of an RDMA Read or Write into work requests.  None of it
 * holds state: callers own the memory.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/epoll.h>
#include <sys/random.h>

#include "provider/provider.h"

static const struct rpcrdma_provider_ops *const builtin[] = {
#ifdef RPCRDMA_HAVE_OFI
    &rpcrdma__provider_ofi_ops,
#endif
#ifdef RPCRDMA_HAVE_VERBS
    &rpcrdma__provider_verbs_ops,
#endif
    NULL,
};

static const char *const builtin_names[] = {
#ifdef RPCRDMA_HAVE_OFI
    "ofi",
#endif
#ifdef RPCRDMA_HAVE_VERBS
    "verbs",
#endif
    NULL,
};

const struct rpcrdma_provider_ops *rpcrdma__provider_lookup(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; builtin[i]; i++)
		if (strcmp(builtin[i]->name, name) == 0)
			return builtin[i];
	return NULL;
}

const char *const *rpcrdma__provider_names(void)
{
	return builtin_names;
}

int rpcrdma__provider_open(const char *name, const struct rpcrdma_prov_open_attr *attr,
			   struct rpcrdma_provider **out)
{
	const struct rpcrdma_provider_ops *ops;

	if (!attr || !attr->addr || !out)
		return -EINVAL;
	ops = rpcrdma__provider_lookup(name);
	if (!ops)
		return -ENOENT;
	return ops->open(attr, out);
}

const char *rpcrdma__provider_status_str(enum rpcrdma_prov_status st)
{
	switch (st) {
	case RPCRDMA_PST_SUCCESS:
		return "success";
	case RPCRDMA_PST_FLUSHED:
		return "flushed";
	case RPCRDMA_PST_REMOTE_ACCESS:
		return "remote access error";
	case RPCRDMA_PST_REMOTE_OP:
		return "remote operation error";
	case RPCRDMA_PST_LOCAL_LENGTH:
		return "local length error";
	case RPCRDMA_PST_LOCAL_PROTECTION:
		return "local protection error";
	case RPCRDMA_PST_RNR_RETRY:
		return "RNR retry exceeded";
	case RPCRDMA_PST_TRANSPORT:
		return "transport error";
	case RPCRDMA_PST_OTHER:
		break;
	}
	return "other error";
}

const char *rpcrdma__provider_event_str(enum rpcrdma_prov_event_type t)
{
	switch (t) {
	case RPCRDMA_PEV_COMPLETION:
		return "COMPLETION";
	case RPCRDMA_PEV_CONNECT_REQUEST:
		return "CONNECT_REQUEST";
	case RPCRDMA_PEV_ESTABLISHED:
		return "ESTABLISHED";
	case RPCRDMA_PEV_REJECTED:
		return "REJECTED";
	case RPCRDMA_PEV_CONNECT_ERROR:
		return "CONNECT_ERROR";
	case RPCRDMA_PEV_DISCONNECTED:
		return "DISCONNECTED";
	case RPCRDMA_PEV_DEVICE_ERROR:
		return "DEVICE_ERROR";
	}
	return "?";
}

const char *rpcrdma__provider_op_str(enum rpcrdma_prov_op op)
{
	switch (op) {
	case RPCRDMA_POP_SEND:
		return "send";
	case RPCRDMA_POP_RECV:
		return "recv";
	case RPCRDMA_POP_READ:
		return "read";
	case RPCRDMA_POP_WRITE:
		return "write";
	case RPCRDMA_POP_REVOKE:
		return "revoke";
	}
	return "?";
}

/*
 * Event queue.
 */
/* The capacity is a power of two (RPCRDMA__EVQ_INITIAL, then doubled), so that a position
 * wraps with a mask: a division per event was a measurable part of the
 * provider's per-completion work. */
static size_t evq_at(const struct rpcrdma_prov_evq *q, size_t i)
{
	return (q->head + i) & (q->cap - 1);
}

static int evq_grow(struct rpcrdma_prov_evq *q)
{
	size_t ncap = q->cap ? q->cap * 2 : RPCRDMA__EVQ_INITIAL;
	struct rpcrdma_prov_event *nv;

	if (ncap < q->cap)
		return -ENOMEM;
	nv = calloc(ncap, sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	for (size_t i = 0; i < q->count; i++)
		nv[i] = q->v[evq_at(q, i)];
	free(q->v);
	q->v = nv;
	q->cap = ncap;
	q->head = 0;
	return 0;
}

int rpcrdma__provider_evq_init(struct rpcrdma_prov_evq *q)
{
	memset(q, 0, sizeof(*q));
	return evq_grow(q);
}

int rpcrdma__provider_evq_push(struct rpcrdma_prov_evq *q, const struct rpcrdma_prov_event *ev)
{
	if (q->count == q->cap && evq_grow(q))
		return -ENOMEM;
	q->v[evq_at(q, q->count)] = *ev;
	q->count++;
	/*
	 * Grown while half the room is left, so that an allocation failing
	 * now and then loses nothing: a push fails only when the queue is
	 * full and memory has stayed short since it was half full.
	 */
	if (q->count > q->cap / 2)
		(void)evq_grow(q);
	return 0;
}

bool rpcrdma__provider_evq_pop(struct rpcrdma_prov_evq *q, struct rpcrdma_prov_event *ev)
{
	if (!q->count)
		return false;
	*ev = q->v[q->head];
	q->head = evq_at(q, 1);
	q->count--;
	return true;
}

void rpcrdma__provider_evq_scrub(struct rpcrdma_prov_evq *q, const struct rpcrdma_prov_conn *c,
				 const struct rpcrdma_prov_listener *l)
{
	for (size_t i = 0; i < q->count; i++) {
		struct rpcrdma_prov_event *ev = &q->v[evq_at(q, i)];

		if (c && ev->conn == c) {
			if (ev->type == RPCRDMA_PEV_COMPLETION)
				ev->conn = NULL;
			else
				ev->type = 0;
		}
		if (l && ev->listener == l)
			ev->listener = NULL;
	}
}

void rpcrdma__provider_evq_free(struct rpcrdma_prov_evq *q)
{
	free(q->v);
	memset(q, 0, sizeof(*q));
}

int rpcrdma__provider_inbox_init(struct rpcrdma_prov_inbox *ib, int epfd)
{
	struct epoll_event ee = {.events = EPOLLIN};

	ib->head = NULL;
	ib->tail = &ib->head;
	atomic_init(&ib->signaled, false);
	ib->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ib->efd < 0)
		return -errno;
	ee.data.fd = ib->efd;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, ib->efd, &ee)) {
		int err = -errno;

		close(ib->efd);
		ib->efd = -1;
		return err;
	}
	pthread_mutex_init(&ib->lock, NULL);
	return 0;
}

int rpcrdma__provider_inbox_push(struct rpcrdma_prov_inbox *ib, struct rpcrdma_prov_inbox_item *it)
{
	return rpcrdma__provider_inbox_push_with(ib, it, NULL, NULL);
}

int rpcrdma__provider_inbox_push_with(struct rpcrdma_prov_inbox *ib,
				      struct rpcrdma_prov_inbox_item *it, int (*prep)(void *),
				      void *arg)
{
	uint64_t one = 1;
	int ret = 0;

	it->next = NULL;
	pthread_mutex_lock(&ib->lock);
	if (prep)
		ret = prep(arg);
	if (!ret) {
		*ib->tail = it;
		ib->tail = &it->next;
		if (!atomic_load_explicit(&ib->signaled, memory_order_relaxed)) {
			/* Only an overflowing counter fails, and then it is
			 * readable anyway. */
			(void)!write(ib->efd, &one, sizeof(one));
			atomic_store_explicit(&ib->signaled, true, memory_order_release);
		}
	}
	pthread_mutex_unlock(&ib->lock);
	return ret;
}

struct rpcrdma_prov_inbox_item *rpcrdma__provider_inbox_take(struct rpcrdma_prov_inbox *ib)
{
	struct rpcrdma_prov_inbox_item *all;
	uint64_t n;

	/* Nothing pushed since the last take: the eventfd is clear too.  A
	 * push racing with this look writes the eventfd, which wakes the
	 * owner to look again. */
	if (ib->efd < 0 || !atomic_load_explicit(&ib->signaled, memory_order_acquire))
		return NULL;
	pthread_mutex_lock(&ib->lock);
	(void)!read(ib->efd, &n, sizeof(n));
	atomic_store_explicit(&ib->signaled, false, memory_order_relaxed);
	all = ib->head;
	ib->head = NULL;
	ib->tail = &ib->head;
	pthread_mutex_unlock(&ib->lock);
	return all;
}

void rpcrdma__provider_inbox_destroy(struct rpcrdma_prov_inbox *ib)
{
	if (ib->efd < 0)
		return;
	close(ib->efd);
	ib->efd = -1;
	pthread_mutex_destroy(&ib->lock);
}

bool rpcrdma__provider_inbox_fd(const struct rpcrdma_prov_inbox *ib, int fd)
{
	return ib->efd >= 0 && ib->efd == fd;
}

int rpcrdma__provider_poll_loop(const struct rpcrdma_prov_poll_state *ps,
				struct rpcrdma_prov_event *ev, unsigned int max)
{
	unsigned int n = 0;

	if (!ev && max)
		return -EINVAL;
	ps->st->polls++;
	while (n < max) {
		struct rpcrdma_prov_event *e = &ev[n];

		if (rpcrdma__provider_evq_pop(ps->q, e)) {
			/* Type 0: scrubbed when its connection was destroyed. */
			if (!e->type)
				continue;
			if (e->type == RPCRDMA_PEV_CONNECT_REQUEST && e->conn && ps->announce)
				ps->announce(ps->ctx, e->conn);
			n++;
			continue;
		}
		if (*ps->failed) {
			if (*ps->failed_reported)
				return n ? (int)n : -EIO;
			memset(e, 0, sizeof(*e));
			e->type = RPCRDMA_PEV_DEVICE_ERROR;
			e->error = *ps->failed;
			*ps->failed_reported = true;
			n++;
			continue;
		}
		if (ps->fill(ps->ctx))
			continue;
		if (!ps->q->count && !*ps->failed)
			break;
	}
	if (!n)
		ps->st->empty_polls++;
	return (int)n;
}

/* A well-formed IPv4 or IPv6 address into @dst, else *@dstlen = 0. */
static void copy_addr(struct sockaddr_storage *dst, socklen_t *dstlen, const struct sockaddr *sa,
		      size_t len)
{
	size_t need;

	*dstlen = 0;
	if (!sa)
		return;
	if (sa->sa_family == AF_INET)
		need = sizeof(struct sockaddr_in);
	else if (sa->sa_family == AF_INET6)
		need = sizeof(struct sockaddr_in6);
	else
		return;
	if (len < need)
		return;
	memcpy(dst, sa, need);
	*dstlen = (socklen_t)need;
}

void rpcrdma__provider_set_peer(struct rpcrdma_prov_conn *c, const struct sockaddr *sa, size_t len)
{
	copy_addr(&c->peer_addr, &c->peer_addrlen, sa, len);
}

void rpcrdma__provider_set_local(struct rpcrdma_prov_conn *c, const struct sockaddr *sa, size_t len)
{
	copy_addr(&c->local_addr, &c->local_addrlen, sa, len);
}

void rpcrdma__provider_copy_private(struct rpcrdma_prov_event *ev, const void *data, size_t len)
{
	if (!data)
		len = 0;
	if (len > RPCRDMA_PROV_PRIVATE_MAX) {
		ev->flags |= RPCRDMA_PEVF_PRIVATE_TRUNCATED;
		len = RPCRDMA_PROV_PRIVATE_MAX;
	}
	if (len)
		memcpy(ev->private_data, data, len);
	ev->private_len = (uint32_t)len;
}

/*
 * Handles.  Retired handles sit in a FIFO ring, mirrored in a
 * linear-probing table for look-up; handles are uniformly random, so the
 * handle itself is a good hash.
 */
#define QTABLE (2u * RPCRDMA_PROV_QUARANTINE)
#define QTRIES 64

static size_t qslot(uint32_t key)
{
	return key & (QTABLE - 1);
}

bool rpcrdma__provider_key_quarantined(const struct rpcrdma_prov_keys *k, uint32_t key)
{
	for (size_t i = qslot(key);; i = (i + 1) & (QTABLE - 1)) {
		if (k->table[i] == key)
			return true;
		if (!k->table[i])
			return false;
	}
}

static void qtable_del(struct rpcrdma_prov_keys *k, uint32_t key)
{
	size_t i = qslot(key), j;

	while (k->table[i] != key) {
		if (!k->table[i])
			return;
		i = (i + 1) & (QTABLE - 1);
	}
	k->table[i] = 0;
	/* Backward-shift deletion: pull later members of the probe run into
	 * the hole unless their home slot lies cyclically in (i, j]. */
	for (j = (i + 1) & (QTABLE - 1); k->table[j]; j = (j + 1) & (QTABLE - 1)) {
		size_t h = qslot(k->table[j]);
		bool stays = i < j ? (h > i && h <= j) : (h > i || h <= j);

		if (!stays) {
			k->table[i] = k->table[j];
			k->table[j] = 0;
			i = j;
		}
	}
}

void rpcrdma__provider_key_retire(struct rpcrdma_prov_keys *k, uint32_t key)
{
	size_t i;

	if (!key || rpcrdma__provider_key_quarantined(k, key))
		return;
	if (k->ring_count == RPCRDMA_PROV_QUARANTINE) {
		qtable_del(k, k->ring[k->ring_head]);
		k->ring_head = (k->ring_head + 1) % RPCRDMA_PROV_QUARANTINE;
		k->ring_count--;
	}
	k->ring[(k->ring_head + k->ring_count) % RPCRDMA_PROV_QUARANTINE] = key;
	k->ring_count++;
	for (i = qslot(key); k->table[i]; i = (i + 1) & (QTABLE - 1))
		;
	k->table[i] = key;
}

int rpcrdma__provider_key_draw(struct rpcrdma_prov_keys *k, uint32_t *key)
{
	const size_t npool = sizeof(k->pool) / sizeof(k->pool[0]);

	for (int tries = 0; tries < QTRIES; tries++) {
		uint32_t v;

		if (!k->pool_left) {
			size_t got = 0;

			while (got < sizeof(k->pool)) {
				ssize_t n =
				    getrandom((char *)k->pool + got, sizeof(k->pool) - got, 0);

				if (n < 0 && errno == EINTR)
					continue;
				if (n <= 0)
					return n < 0 ? -errno : -EIO;
				got += (size_t)n;
			}
			k->pool_left = (unsigned int)npool;
		}
		v = k->pool[--k->pool_left];
		k->pool[k->pool_left] = 0; /* drawn keys do not linger */
		if (!v || rpcrdma__provider_key_quarantined(k, v)) {
			k->redraws++;
			continue;
		}
		*key = v;
		return 0;
	}
	return -EAGAIN;
}

/*
 * Argument checks.
 */
bool rpcrdma__provider_range_in(const void *addr, size_t len, const void *base, size_t blen)
{
	uintptr_t a = (uintptr_t)addr, s = (uintptr_t)base;

	return a >= s && a - s <= blen && len <= blen - (a - s);
}

int64_t rpcrdma__provider_sgl_check(const struct rpcrdma_provider *p,
				    const struct rpcrdma_prov_sge *sgl, unsigned int nsge,
				    unsigned int max, bool mr_optional)
{
	int64_t total = 0;

	if (nsge > max || nsge > RPCRDMA_PROV_MAX_SGE || (nsge && !sgl))
		return -EINVAL;
	for (unsigned int i = 0; i < nsge; i++) {
		const struct rpcrdma_prov_sge *s = &sgl[i];

		if (!s->addr && s->length)
			return -EINVAL;
		if (!s->mr) {
			if (!mr_optional)
				return -EINVAL;
		} else if (s->mr->prov != p ||
			   !rpcrdma__provider_range_in(s->addr, s->length, s->mr->addr,
						       s->mr->length)) {
			return -EINVAL;
		}
		total += s->length;
	}
	return total;
}

int64_t rpcrdma__provider_rma_check(const struct rpcrdma_provider *p,
				    const struct rpcrdma_prov_sge *sgl, unsigned int nsge,
				    const struct rpcrdma_prov_rseg *segs, unsigned int nseg)
{
	const struct rpcrdma_prov_caps *caps = &p->caps;
	uint64_t rtotal = 0;
	int64_t total;

	if (!nsge || !nseg || !segs || nseg > caps->max_rdma_segs || nseg > RPCRDMA_PROV_MAX_RSEGS)
		return -EINVAL;
	total = rpcrdma__provider_sgl_check(p, sgl, nsge, caps->max_rdma_sge, false);
	if (total < 0)
		return total;
	for (unsigned int i = 0; i < nseg; i++) {
		if (segs[i].length > caps->max_msg_size ||
		    segs[i].offset + segs[i].length < segs[i].offset)
			return -EINVAL;
		rtotal += segs[i].length;
	}
	if (!total || (uint64_t)total != rtotal || total > UINT32_MAX)
		return -EINVAL;
	return total;
}

bool rpcrdma__provider_rma_next(struct rpcrdma_prov_rma_cursor *cur,
				const struct rpcrdma_prov_sge *sgl, unsigned int nsge,
				const struct rpcrdma_prov_rseg *segs, unsigned int nseg,
				unsigned int lmax, unsigned int rmax,
				struct rpcrdma_prov_rma_piece *out)
{
	unsigned int last_l = UINT_MAX, last_r = UINT_MAX;

	if (lmax > RPCRDMA_PROV_MAX_SGE)
		lmax = RPCRDMA_PROV_MAX_SGE;
	if (rmax > RPCRDMA_PROV_MAX_RSEGS)
		rmax = RPCRDMA_PROV_MAX_RSEGS;
	out->nlocal = out->nremote = 0;
	while (cur->li < nsge && cur->ri < nseg) {
		const struct rpcrdma_prov_sge *s = &sgl[cur->li];
		const struct rpcrdma_prov_rseg *r = &segs[cur->ri];
		uint64_t take;

		if (cur->loff == s->length) {
			cur->li++;
			cur->loff = 0;
			continue;
		}
		if (cur->roff == r->length) {
			cur->ri++;
			cur->roff = 0;
			continue;
		}
		if ((last_l != cur->li && out->nlocal == lmax) ||
		    (last_r != cur->ri && out->nremote == rmax))
			break;
		take = s->length - cur->loff;
		if (r->length - cur->roff < take)
			take = r->length - cur->roff;
		/* Consecutive pieces of one entry merge into one element. */
		if (last_l != cur->li) {
			out->local[out->nlocal].iov_base = (char *)s->addr + cur->loff;
			out->local[out->nlocal].iov_len = 0;
			out->local_sge[out->nlocal] = s;
			out->nlocal++;
			last_l = cur->li;
		}
		if (last_r != cur->ri) {
			out->remote[out->nremote].handle = r->handle;
			out->remote[out->nremote].offset = r->offset + cur->roff;
			out->remote[out->nremote].length = 0;
			out->nremote++;
			last_r = cur->ri;
		}
		out->local[out->nlocal - 1].iov_len += take;
		out->remote[out->nremote - 1].length += (uint32_t)take;
		cur->loff += take;
		cur->roff += take;
	}
	return out->nlocal > 0;
}
