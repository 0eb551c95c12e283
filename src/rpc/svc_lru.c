/*
 * svc_lru.c - which connection goes when a new one arrives at max_conns.
 *
 * As the Linux server does (svc_check_conn_limits), a server at its limit
 * closes its least recently active connection rather than refuse the new
 * one, so that connections left open and silent cannot lock every later
 * client out until the idle time-out; unlike it, a connection with a call
 * in progress (taken in, served, deferred, or its reply queued) is never
 * the one: its calls hold their resources and would lose their replies.
 * A TCP record that has begun arriving and is not whole is no call taken
 * in: were it one, a peer keeping a record always begun on each of
 * max_conns connections would lock every later client out.
 *
 * Each core (the server's, and each worker's) keeps the admitted
 * connections of its loop that have nothing in progress on lru_idle, in
 * the order they last became idle or received (the transports report
 * both, cb->conn_idle and cb->conn_busy), so the list is sorted by last
 * activity and its head is its oldest.  The listener's thread, at the
 * limit, compares the heads of every core's list (one for the server and
 * one per worker: O(workers) per refused-or-evicting accept, nothing per
 * accept below the limit), moves the oldest onto that core's lru_evict
 * and has the core's loop close it.  A connection that receives a call
 * meanwhile finds itself chosen in cb->conn_busy and closes at once,
 * dropping the call: at the moment it was chosen it had nothing in
 * progress.
 *
 * When no connection is idle, a connection whose only business is
 * replies queued that its client does not take (a TCP reply record that
 * has not left for RPCRDMA__SVC_STALL_EVICT_MS, RDMA Sends and Writes
 * none of which completed for as long) goes instead, the longest stalled
 * first: each core keeps those on lru_stalled (cb->conn_stalled).  Its
 * calls are served and their replies made (a non-idempotent one is in
 * the duplicate request cache), so its client, sending them again on a
 * new connection, loses nothing but the time; without it, max_conns
 * clients that take just enough of a large reply now and then to keep
 * drain_timeout_ms from running out would lock every later client out
 * for as long as they keep at it.  A reply that moves at any useful speed keeps its
 * connection: only one left unmoved a whole second is chosen.
 *
 * The newcomer is admitted at once, beyond max_conns, and the evicted
 * connection gives its place back when it is gone (cb->conn_release), so
 * the count never hides a connection that still holds resources.
 */
#include <stdbool.h>
#include <stdint.h>

#include "rpc/svc_internal.h"

enum lru_state {
	LRU_OFF,      /* on no list */
	LRU_IDLE,     /* on its core's lru_idle */
	LRU_STALLED,  /* on its core's lru_stalled */
	LRU_EVICTING, /* on its core's lru_evict */
};

/* Takes @e off the list it is on, if any (under lru_lock). */
static void lru_unlink(struct rpcrdma__svc_lru_entry *e)
{
	if (e->state == LRU_OFF)
		rpcrdma__list_init(&e->node);
	else
		rpcrdma__list_del(&e->node);
}

/* Lists @e last on @list of @s as @state, from @since; one chosen already
 * goes, and being listed again does not save it. */
static void lru_put(struct rpcrdma_server *s, struct rpcrdma__svc_lru_entry *e,
		    struct rpcrdma__list *list, enum lru_state state, uint64_t since)
{
	pthread_mutex_lock(&s->lru_lock);
	if (e->state != LRU_EVICTING) {
		lru_unlink(e);
		e->since = since;
		e->state = state;
		rpcrdma__list_add_tail(list, &e->node);
	}
	pthread_mutex_unlock(&s->lru_lock);
	e->listed = true;
}

void rpcrdma__svc_lru_idle(void *ctx, struct rpcrdma__svc_lru_entry *e)
{
	struct rpcrdma_server *s = ctx;

	lru_put(s, e, &s->lru_idle, LRU_IDLE, rpcrdma__loop_recent_ms(s->loop));
}

void rpcrdma__svc_lru_stalled(void *ctx, struct rpcrdma__svc_lru_entry *e, uint64_t since)
{
	struct rpcrdma_server *s = ctx;

	lru_put(s, e, &s->lru_stalled, LRU_STALLED, since);
}

bool rpcrdma__svc_lru_busy(void *ctx, struct rpcrdma__svc_lru_entry *e)
{
	struct rpcrdma_server *s = ctx;
	bool chosen;

	if (!e->listed)
		return true;
	pthread_mutex_lock(&s->lru_lock);
	chosen = e->state == LRU_EVICTING;
	if (e->state != LRU_OFF)
		rpcrdma__list_del(&e->node);
	e->state = LRU_OFF;
	pthread_mutex_unlock(&s->lru_lock);
	e->listed = false;
	return !chosen;
}

/* On @s's loop: close what the listener chose. */
static void evict_chosen(struct rpcrdma_server *s)
{
	for (;;) {
		struct rpcrdma__svc_lru_entry *e;
		struct rpcrdma__list *n;

		pthread_mutex_lock(&s->lru_lock);
		n = rpcrdma__list_first(&s->lru_evict);
		if (n) {
			rpcrdma__list_del(n);
			e = rpcrdma__container_of(n, struct rpcrdma__svc_lru_entry, node);
			e->state = LRU_OFF;
		}
		pthread_mutex_unlock(&s->lru_lock);
		if (!n)
			return;
		/* Connections are freed on this loop only: @e is alive. */
		e->listed = false;
		e->evict(e);
	}
}

static void evict_on_timer(struct rpcrdma__timer *tm)
{
	evict_chosen(tm->ctx);
}

static void evict_on_wake(void *arg)
{
	evict_chosen(arg);
}

/* The core at index @i: the server's own (0), then each worker's. */
static struct rpcrdma_server *core_at(struct rpcrdma_server *root, unsigned int i)
{
	return i ? root->workers[i - 1].srv : root;
}

/*
 * Under @c's lru_lock: the entry of @c to go first from @tier's list, or
 * NULL: the head of lru_idle (its least recently active), or on
 * lru_stalled (in no order: a connection's stall began when its reply
 * last moved, not when it was listed) the longest stalled that has been
 * so for RPCRDMA__SVC_STALL_EVICT_MS at @now.
 */
static struct rpcrdma__svc_lru_entry *first_of(struct rpcrdma_server *c, enum lru_state tier,
					       uint64_t now)
{
	struct rpcrdma__svc_lru_entry *best = NULL;
	struct rpcrdma__list *n;

	if (tier == LRU_IDLE) {
		n = rpcrdma__list_first(&c->lru_idle);
		return n ? rpcrdma__container_of(n, struct rpcrdma__svc_lru_entry, node) : NULL;
	}
	rpcrdma__list_foreach(n, &c->lru_stalled) {
		struct rpcrdma__svc_lru_entry *e =
		    rpcrdma__container_of(n, struct rpcrdma__svc_lru_entry, node);

		if (e->since <= now && now - e->since >= RPCRDMA__SVC_STALL_EVICT_MS &&
		    (!best || e->since < best->since))
			best = e;
	}
	return best;
}

/* The core whose first to go from @tier's list is the oldest of all, or NULL. */
static struct rpcrdma_server *oldest_core(struct rpcrdma_server *root, enum lru_state tier,
					  uint64_t now)
{
	struct rpcrdma_server *best = NULL;
	uint64_t best_since = 0;

	for (unsigned int i = 0; i <= root->nworkers; i++) {
		struct rpcrdma_server *c = core_at(root, i);
		struct rpcrdma__svc_lru_entry *e;

		if (!c)
			continue;
		pthread_mutex_lock(&c->lru_lock);
		e = first_of(c, tier, now);
		if (e && (!best || e->since < best_since)) {
			best = c;
			best_since = e->since;
		}
		pthread_mutex_unlock(&c->lru_lock);
	}
	return best;
}

/* Has the connection @e of core @c (taken off its @tier list, onto
 * lru_evict) closed on @c's loop; false when it could not be told, with
 * @e back on its list. */
static bool evict_on_loop(struct rpcrdma_server *root, struct rpcrdma_server *c,
			  struct rpcrdma__svc_lru_entry *e, enum lru_state tier)
{
	if (c == root) {
		/* Our own loop: not from inside the accept that asked. */
		if (!c->evict_timer.armed)
			rpcrdma__timer_start(c->loop, &c->evict_timer, 0, evict_on_timer, c);
		return true;
	}
	if (!rpcrdma_loop_wake(c->loop, evict_on_wake, c))
		return true;
	/* No memory to tell the worker: it stays, the newcomer is refused.
	 * Unless a call took it off meanwhile (and it may be freed: looked
	 * for among those still listed, not touched), it goes back, and
	 * an idle one as the oldest, first. */
	pthread_mutex_lock(&c->lru_lock);
	for (struct rpcrdma__list *it = c->lru_evict.next; it != &c->lru_evict; it = it->next) {
		if (it != &e->node)
			continue;
		rpcrdma__list_del(it);
		if (tier == LRU_IDLE)
			rpcrdma__list_add_head(&c->lru_idle, it);
		else
			rpcrdma__list_add_tail(&c->lru_stalled, it);
		e->state = tier;
		break;
	}
	pthread_mutex_unlock(&c->lru_lock);
	return false;
}

bool rpcrdma__svc_lru_evict_one(struct rpcrdma_server *root)
{
	static const enum lru_state tiers[] = {LRU_IDLE, LRU_STALLED};
	uint64_t now = rpcrdma__loop_recent_ms(root->loop);

	for (size_t t = 0; t < sizeof(tiers) / sizeof(tiers[0]); t++) {
		/* A list looked at may empty before we take from it (its
		 * connections got calls): look again, once. */
		for (int attempt = 0; attempt < 2; attempt++) {
			struct rpcrdma_server *c = oldest_core(root, tiers[t], now);
			struct rpcrdma__svc_lru_entry *e;

			if (!c)
				break;
			pthread_mutex_lock(&c->lru_lock);
			e = first_of(c, tiers[t], now);
			if (e) {
				rpcrdma__list_del(&e->node);
				rpcrdma__list_add_tail(&c->lru_evict, &e->node);
				e->state = LRU_EVICTING;
				e->chosen_stalled = tiers[t] == LRU_STALLED;
			}
			pthread_mutex_unlock(&c->lru_lock);
			if (e)
				return evict_on_loop(root, c, e, tiers[t]);
		}
	}
	return false;
}
