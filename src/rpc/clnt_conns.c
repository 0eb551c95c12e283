/*
 * clnt_conns.c - the RPC client's connections: opts.nconnect transports to
 * one server, which one each call leaves on, connecting, and what a lost
 * connection does to the calls it carried (reconnect, send again).
 *
 * A call goes to the live connection with the fewest calls out, ties taken
 * in turn: round robin alone would keep feeding a connection that is out
 * of credits or slow to answer, while the queue is shared so that a call
 * never waits behind one connection when another has room.  Calls lost
 * with a connection keep their XID and go again in front of the queue:
 * over RDMA on any live connection (servers key their duplicate request
 * cache without the port there), over TCP on their own connection once it
 * is back, which binds the same local port (drc.h; the kernel's nfsd keys
 * by port too).  docs/architecture.md ("The RPC client") tells the story.
 */
#include <errno.h>
#include <string.h>

#include "common/trace.h"
#include "rpc/clnt_internal.h"
#include "rpc/rpc_msg_internal.h"

#define RECONNECT_MIN_MS 100u
#define RECONNECT_MAX_MS 3000u
/* A connection lost sooner than this after it came up, with no reply on
 * it, counts as a failed attempt for the back-off: a server that accepts
 * and closes at once must not be reconnected to in a tight loop, while one
 * that answered and then cut the connection is reconnected to at once. */
#define STABLE_CONN_MS 1000u

static struct rpcrdma__clnt_conn *conn_of(void *ctx)
{
	return ctx;
}

static bool usable(const struct rpcrdma__clnt_conn *k)
{
	return k->state == RPCRDMA__CONN_UP && !k->blocked && !k->disc_pending;
}

/* Over TCP a lost call must go again from the same port (see above). */
static bool pin_to_conn(const struct rpcrdma_client *c)
{
	return c->opts.transport == RPCRDMA_TRANSPORT_TCP;
}

/* The usable connection with the fewest calls out, from c->turn on. */
static struct rpcrdma__clnt_conn *pick(struct rpcrdma_client *c)
{
	struct rpcrdma__clnt_conn *best = NULL;

	for (unsigned int i = 0; i < c->nconn; i++) {
		struct rpcrdma__clnt_conn *k = &c->conns[(c->turn + i) % c->nconn];

		if (usable(k) && (!best || k->nsent < best->nsent))
			best = k;
	}
	if (best)
		c->turn = (best->idx + 1) % c->nconn;
	return best;
}

/* Sending. */

static int encode_call(struct rpcrdma_client *c, struct rpcrdma__client_call *cc)
{
	struct rpcrdma_call *call = cc->call;
	int rc;

	rc = rpcrdma__rpc_encode_call_parts(&cc->req.send, cc->req.xid, c->prog, c->vers,
					    call->proc, &c->cred, &c->verf);
	if (rc == 0 && call->encode_args) {
		rc = call->encode_args(&cc->req.send, call->args);
		if (rc)
			cc->req.cause.code = RPCRDMA__CAUSE_IN_ARGS;
	}
	return rc;
}

/* call_begin and encode, growing the room as the encoder asks. */
static int begin_and_encode(struct rpcrdma_client *c, struct rpcrdma__clnt_conn *k,
			    struct rpcrdma__client_call *cc)
{
	uint32_t slot = cc->call->proc % RPCRDMA__CLNT_HINT_SLOTS;
	size_t prev_room = 0;
	int rc;

	for (;;) {
		size_t room;

		cc->req.send_hint = cc->hint;
		rc = c->ops->call_begin(k->t, &cc->req);
		if (rc)
			return rc;
		room = cc->req.send.len;
		cc->req.cause.code = RPCRDMA__CAUSE_IN_HEADER;
		rc = encode_call(c, cc);
		if (rc == RPCRDMA_ERR_NOSPACE && room > prev_room) {
			/* Ask for four times the room; the transport caps it. */
			c->ops->call_abort(k->t, &cc->req);
			prev_room = room;
			cc->hint = room > SIZE_MAX / 4 ? SIZE_MAX : room * 4;
			continue;
		}
		if (rc) {
			/* Say where it stopped: the arguments' own encoder, or
			 * a call larger than the transport can send. */
			cc->req.cause.kind = RPCRDMA__CAUSE_ENCODE;
			cc->req.cause.a = (uint32_t)rpcrdma_xdr_pos(&cc->req.send);
			cc->req.cause.b = (uint32_t)room;
			c->ops->call_abort(k->t, &cc->req);
			return rc == -EAGAIN || rc == -ENOTCONN ? -EINVAL : rc;
		}
		break;
	}
	/* Remember a room that had to grow; forget it once calls are small again. */
	if (prev_room)
		c->proc_hint[slot] = cc->req.send.len;
	else if (cc->hint && rpcrdma_xdr_pos(&cc->req.send) < cc->hint / 8)
		c->proc_hint[slot] = 0;
	return 0;
}

/*
 * Hand @cc (at the head of its queue) to connection @k.  Returns 0 when it
 * left or failed, -EAGAIN / -ENOTCONN when it stays queued and @k takes no
 * more for now.  A call that fails is taken out of the client onto @failed,
 * its error in send_err, for the caller to complete once c->flushing is
 * clear: its done() may run the loop (a synchronous call), and a call made
 * or a loss reported there must not find the client still flushing.  With
 * @failed NULL (inside call_async, whose caller must not see a done() run)
 * a call that fails stays queued with its error, which is returned: the
 * kick's transmit then fails it from the loop, without encoding it again.
 */
static int transmit(struct rpcrdma_client *c, struct rpcrdma__clnt_conn *k,
		    struct rpcrdma__client_call *cc, struct rpcrdma__list *failed)
{
	int rc = cc->send_err;

	if (rc == 0)
		rc = begin_and_encode(c, k, cc);
	if (rc == 0)
		rc = c->ops->call_send(k->t, &cc->req);
	if (rc == -EAGAIN || rc == -ENOTCONN) {
		/* -ENOTCONN: the loss is on its way (cb->disconnected). */
		k->blocked = true;
		return rc;
	}
	if (rc) {
		cc->send_err = rc; /* the transport keeps nothing of a failed call_send */
		if (!failed)
			return rc;
		/* Never sent, so nothing to revoke: out of the client, done() later. */
		rpcrdma__clnt_forget(c, cc);
		rpcrdma__list_add_tail(failed, &cc->node);
		return 0;
	}
	rpcrdma__list_del(&cc->node);
	rpcrdma__list_add_tail(&c->sent, &cc->node);
	cc->state = RPCRDMA__CC_SENT;
	cc->conn = k;
	k->nsent++;
	if (cc->sent_once) {
		c->retransmits++;
		RPCRDMA__TRACE(RPCRDMA_TRACE_CALL, RPCRDMA_TEV_RETRANSMIT, cc->req.conn_id,
			       cc->req.xid, cc->losses, k->idx,
			       "call sent again after %u lost connections (client connection %u)",
			       cc->losses, k->idx);
	}
	cc->sent_once = true;
	if (++c->nsent > c->nsent_max)
		c->nsent_max = c->nsent;
	return 0;
}

static void disconnected_later(struct rpcrdma__timer *tm);

/*
 * c->flushing is clear again: what was put off while it was set goes now.
 * A flush asked for meanwhile gets the kick; a loss reported meanwhile gets
 * its timer back if that timer already ran and found the client flushing.
 */
static void end_flush(struct rpcrdma_client *c)
{
	c->flushing = false;
	if (c->destroying)
		return;
	for (unsigned int i = 0; i < c->nconn; i++) {
		struct rpcrdma__clnt_conn *k = &c->conns[i];

		if (k->disc_pending && !k->disc_timer.armed)
			rpcrdma__timer_start(c->loop, &k->disc_timer, 0, disconnected_later, k);
	}
	if (c->flush_again) {
		c->flush_again = false;
		rpcrdma__clnt_kick(c);
	}
}

/* Complete the calls transmit() failed, now that c->flushing is clear.  A
 * done() that destroys the client completes the rest itself (c->failed). */
static void finish_failed(struct rpcrdma_client *c)
{
	struct rpcrdma__client_call *cc;
	bool any = false;

	while ((cc = rpcrdma__clnt_call_at(rpcrdma__list_first(&c->failed)))) {
		rpcrdma__list_del(&cc->node);
		rpcrdma__clnt_finish(cc, cc->send_err);
		any = true;
	}
	/* A done() may have queued calls without sending them (they were not
	 * alone in the queue): they must not wait for an unrelated event. */
	if (any && !c->destroying && !rpcrdma__list_empty(&c->queued))
		rpcrdma__clnt_kick(c);
}

/* Caller holds a reference on @c (rpcrdma__clnt_enter): done() may destroy it. */
static void flush_queue(struct rpcrdma_client *c)
{
	struct rpcrdma__list *failed = &c->failed;

	if (c->flushing) {
		/* Not reached while a done() runs (finish_failed); should a
		 * loop iteration ever come from inside a flush, the flush it
		 * asked for happens once that one ends. */
		c->flush_again = true;
		return;
	}
	c->flushing = true;
	/* Calls pinned to a connection first: they were sent before the queue's. */
	for (unsigned int i = 0; i < c->nconn; i++) {
		struct rpcrdma__clnt_conn *k = &c->conns[i];

		while (!c->destroying && usable(k) && !rpcrdma__list_empty(&k->pinned))
			transmit(c, k, rpcrdma__clnt_call_at(rpcrdma__list_first(&k->pinned)),
				 failed);
	}
	/* Each refusal blocks its connection, so this ends. */
	while (!c->destroying && !rpcrdma__list_empty(&c->queued)) {
		struct rpcrdma__clnt_conn *k = pick(c);

		if (!k)
			break;
		transmit(c, k, rpcrdma__clnt_call_at(rpcrdma__list_first(&c->queued)), failed);
	}
	end_flush(c);
	finish_failed(c);
}

/* Connecting. */

static void on_disconnected(void *ctx, int err);

static void begin_connect(struct rpcrdma__clnt_conn *k)
{
	struct rpcrdma_client *c = k->clnt;
	int rc;

	if (k->state != RPCRDMA__CONN_DOWN)
		return;
	rpcrdma__timer_stop(&k->reconnect_timer);
	if (k->ever_up)
		k->reconnects++;
	k->state = RPCRDMA__CONN_CONNECTING;
	rc = c->ops->connect(k->t);
	if (rc)
		on_disconnected(k, rc);
}

/* Whether @k has calls to carry, or (the first) callbacks to serve. */
static bool wanted(const struct rpcrdma__clnt_conn *k)
{
	const struct rpcrdma_client *c = k->clnt;

	return !rpcrdma__list_empty(&c->queued) || !rpcrdma__list_empty(&k->pinned) ||
	       (c->cb_srv && k->idx == 0);
}

static void kick_cb(struct rpcrdma__timer *tm)
{
	struct rpcrdma_client *c = tm->ctx;

	rpcrdma__clnt_enter(c);
	for (unsigned int i = 0; i < c->nconn && !c->destroying; i++) {
		struct rpcrdma__clnt_conn *k = &c->conns[i];

		if (k->state == RPCRDMA__CONN_DOWN && !k->reconnect_timer.armed && wanted(k))
			begin_connect(k);
	}
	flush_queue(c);
	rpcrdma__clnt_leave(c);
}

/*
 * A new call goes out at once when it is alone in the queue and a
 * connection can take it, rather than at the end of the loop's turn: a
 * reply's callback that makes the next call (a pipeline) then keeps the
 * server busy while the other replies of its batch are handled, instead of
 * leaving it idle until all are.  Everything else (calls waiting already,
 * no connection able, a connection to make, a call that fails) waits for
 * the kick, as before.
 */
void rpcrdma__clnt_send_now(struct rpcrdma_client *c, struct rpcrdma__client_call *cc)
{
	struct rpcrdma__clnt_conn *k = NULL;
	int rc = -EAGAIN;

	if (c->flushing || rpcrdma__list_first(&c->queued) != &cc->node ||
	    rpcrdma__list_last(&c->queued) != &cc->node)
		goto kick;
	for (unsigned int i = 0; i < c->nconn; i++) {
		const struct rpcrdma__clnt_conn *d = &c->conns[i];

		if (d->state == RPCRDMA__CONN_DOWN && !d->reconnect_timer.armed)
			goto kick; /* kick_cb connects it, then flushes */
		/* Calls lost with a connection go first, once requeued. */
		if (!rpcrdma__list_empty(&d->pinned) || d->disc_pending)
			goto kick;
	}
	k = pick(c);
	if (!k)
		goto kick;
	rpcrdma__clnt_enter(c);
	c->flushing = true;
	rc = transmit(c, k, cc, NULL);
	end_flush(c);
	rpcrdma__clnt_leave(c);
	if (rc == 0)
		return;
kick:
	rpcrdma__clnt_kick(c);
}

void rpcrdma__clnt_kick(struct rpcrdma_client *c)
{
	if (!c->kick_timer.armed)
		rpcrdma__timer_start(c->loop, &c->kick_timer, 0, kick_cb, c);
}

static void reconnect_cb(struct rpcrdma__timer *tm)
{
	struct rpcrdma__clnt_conn *k = tm->ctx;

	rpcrdma__clnt_enter(k->clnt);
	if (wanted(k))
		begin_connect(k);
	rpcrdma__clnt_leave(k->clnt);
}

static void on_connected(void *ctx)
{
	struct rpcrdma__clnt_conn *k = conn_of(ctx);
	struct rpcrdma_client *c = k->clnt;

	rpcrdma__clnt_enter(c);
	k->state = RPCRDMA__CONN_UP;
	k->ever_up = true;
	/* The back-off is reset only once it stayed up (on_disconnected). */
	k->up_since_ms = rpcrdma_loop_now(c->loop);
	k->answered = false;
	k->blocked = false;
	c->last_err = 0;
	c->conn_events++;
	flush_queue(c);
	rpcrdma__clnt_leave(c);
}

static void disconnected_later(struct rpcrdma__timer *tm)
{
	struct rpcrdma__clnt_conn *k = tm->ctx;

	/* Still flushing (a loop iteration from inside a flush): end_flush
	 * starts this timer again, rather than it spinning at 0 ms. */
	if (k->clnt->flushing)
		return;
	k->disc_pending = false;
	on_disconnected(k, k->disc_err);
}

/* Whether a connection other than @k is up or on its way. */
static bool others_alive(const struct rpcrdma__clnt_conn *k)
{
	const struct rpcrdma_client *c = k->clnt;

	for (unsigned int i = 0; i < c->nconn; i++) {
		if (&c->conns[i] != k && c->conns[i].state != RPCRDMA__CONN_DOWN)
			return true;
	}
	return false;
}

/* One more loss for @cc; past opts.retries it moves to @doomed. */
static void count_loss(struct rpcrdma_client *c, struct rpcrdma__client_call *cc,
		       struct rpcrdma__list *doomed)
{
	if (++cc->losses > c->opts.retries) {
		rpcrdma__clnt_forget(c, cc);
		rpcrdma__list_add_tail(doomed, &cc->node);
	}
}

/*
 * The calls @k carried go back in front of the queue they go again from
 * (@k's pinned list over TCP), in order.  Each has lost a connection, as
 * has every call waiting when no other connection can take it.
 */
static void requeue_lost(struct rpcrdma__clnt_conn *k, struct rpcrdma__list *doomed)
{
	struct rpcrdma_client *c = k->clnt;
	struct rpcrdma__list *home = pin_to_conn(c) ? &k->pinned : &c->queued;
	struct rpcrdma__list lost, *it, *next;
	struct rpcrdma__client_call *cc;

	rpcrdma__list_init(&lost);
	rpcrdma__list_foreach_safe(it, next, &c->sent)
	{
		cc = rpcrdma__clnt_call_at(it);
		if (cc->conn != k)
			continue;
		rpcrdma__list_del(&cc->node);
		rpcrdma__list_add_tail(&lost, &cc->node);
		c->nsent--;
		k->nsent--;
		cc->state = RPCRDMA__CC_QUEUED;
		cc->conn = home == &k->pinned ? k : NULL;
	}
	rpcrdma__list_foreach_safe(it, next, &lost)
		count_loss(c, rpcrdma__clnt_call_at(it), doomed);
	rpcrdma__list_foreach_safe(it, next, &k->pinned)
		count_loss(c, rpcrdma__clnt_call_at(it), doomed);
	if (!others_alive(k)) {
		rpcrdma__list_foreach_safe(it, next, &c->queued)
			count_loss(c, rpcrdma__clnt_call_at(it), doomed);
	}
	while ((cc = rpcrdma__clnt_call_at(rpcrdma__list_last(&lost)))) {
		rpcrdma__list_del(&cc->node);
		rpcrdma__list_add_head(home, &cc->node);
	}
}

static void on_disconnected(void *ctx, int err)
{
	struct rpcrdma__clnt_conn *k = conn_of(ctx);
	struct rpcrdma_client *c = k->clnt;
	bool was_up = k->state == RPCRDMA__CONN_UP;
	struct rpcrdma__client_call *cc;
	struct rpcrdma__list doomed;
	unsigned int delay;

	if (c->flushing) {
		/*
		 * Reported from inside call_begin/call_send: transmit() still
		 * holds the call at the head of the queue, so handle it once
		 * that call is back in our hands.  The timer runs it from the
		 * loop: inside call_async no done() may run.
		 */
		k->disc_pending = true;
		k->disc_err = err;
		if (!k->disc_timer.armed)
			rpcrdma__timer_start(c->loop, &k->disc_timer, 0, disconnected_later, k);
		return;
	}
	rpcrdma__clnt_enter(c);
	k->state = RPCRDMA__CONN_DOWN;
	k->blocked = false;
	c->last_err = err ? err : -ECONNRESET;
	c->conn_events++;
	rpcrdma__list_init(&doomed);
	requeue_lost(k, &doomed);
	while ((cc = rpcrdma__clnt_call_at(rpcrdma__list_first(&doomed)))) {
		rpcrdma__list_del(&cc->node);
		/* The last loss's reason alone would read as if one reset
		 * ended the call: say it is the retries that ran out. */
		cc->req.cause = (struct rpcrdma__call_cause){
		    .kind = RPCRDMA__CAUSE_CONN_LOST,
		    .a = cc->losses,
		    .b = cc->sent_once,
		};
		cc->send_err = c->last_err;
		rpcrdma__list_add_tail(&c->failed, &cc->node);
	}
	/* Complete them only now: done() may start calls or destroy us
	 * (which completes those still on c->failed before it returns). */
	while ((cc = rpcrdma__clnt_call_at(rpcrdma__list_first(&c->failed)))) {
		rpcrdma__list_del(&cc->node);
		rpcrdma__clnt_finish(cc, cc->send_err);
	}
	/* A client hosting callbacks keeps its first connection up even with
	 * none of its own calls to send (RFC 8167 5.4). */
	if (!c->destroying && wanted(k) && !k->reconnect_timer.armed) {
		if (was_up &&
		    (k->answered || rpcrdma_loop_now(c->loop) - k->up_since_ms >= STABLE_CONN_MS)) {
			delay = 0;
			k->backoff_ms = 0;
		} else if (was_up) {
			/* Up only briefly: at once the first time (a cut while
			 * calls run), then backing off as after failed attempts. */
			delay = k->backoff_ms;
			k->backoff_ms = delay * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS
					: delay                      ? delay * 2
								     : RECONNECT_MIN_MS;
		} else {
			delay = k->backoff_ms ? k->backoff_ms : RECONNECT_MIN_MS;
			k->backoff_ms = delay * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS : delay * 2;
		}
		rpcrdma__timer_start(c->loop, &k->reconnect_timer, delay, reconnect_cb, k);
	}
	/* The others take what this one carried. */
	if (!c->destroying && !rpcrdma__list_empty(&c->queued))
		rpcrdma__clnt_kick(c);
	rpcrdma__clnt_leave(c);
}

static void on_writable(void *ctx)
{
	struct rpcrdma__clnt_conn *k = conn_of(ctx);

	rpcrdma__clnt_enter(k->clnt);
	k->blocked = false;
	flush_queue(k->clnt);
	rpcrdma__clnt_leave(k->clnt);
}

/* The transports' callbacks: clnt.c's for calls, ours for connections. */
const struct rpcrdma__clnt_cb rpcrdma__clnt_callbacks = {
    .aborted = rpcrdma__clnt_on_aborted,
    .find = rpcrdma__clnt_on_find,
    .reply = rpcrdma__clnt_on_reply,
    .failed = rpcrdma__clnt_on_failed,
    .connected = on_connected,
    .disconnected = on_disconnected,
    .writable = on_writable,
};

/* Life cycle. */

void rpcrdma__clnt_conn_init(struct rpcrdma_client *c, unsigned int idx)
{
	struct rpcrdma__clnt_conn *k = &c->conns[idx];

	memset(k, 0, sizeof(*k));
	k->clnt = c;
	k->idx = idx;
	rpcrdma__list_init(&k->pinned);
}

int rpcrdma__clnt_conns_create(struct rpcrdma_client *c, const struct sockaddr *addr,
			       socklen_t addrlen)
{
	unsigned int n = c->opts.nconnect ? c->opts.nconnect : 1;
	int rc = 0;

	for (c->nconn = 0; c->nconn < n; c->nconn++) {
		struct rpcrdma__clnt_conn *k = &c->conns[c->nconn];

		rpcrdma__clnt_conn_init(c, c->nconn);
		rc = c->ops->create(c->loop, addr, addrlen, &c->opts, &rpcrdma__clnt_callbacks, k,
				    &k->t);
		if (rc)
			break;
	}
	if (rc)
		rpcrdma__clnt_conns_stop(c, true);
	return rc;
}

void rpcrdma__clnt_conns_stop(struct rpcrdma_client *c, bool destroy)
{
	rpcrdma__timer_stop(&c->kick_timer);
	for (unsigned int i = 0; i < c->nconn; i++) {
		rpcrdma__timer_stop(&c->conns[i].reconnect_timer);
		rpcrdma__timer_stop(&c->conns[i].disc_timer);
		if (destroy) {
			c->ops->destroy(c->conns[i].t);
			c->conns[i].t = NULL;
		}
	}
}

/* Public API. */

static bool any_connecting(const struct rpcrdma_client *c)
{
	for (unsigned int i = 0; i < c->nconn; i++) {
		if (c->conns[i].state == RPCRDMA__CONN_CONNECTING)
			return true;
	}
	return false;
}

static bool any_up(const struct rpcrdma_client *c)
{
	for (unsigned int i = 0; i < c->nconn; i++) {
		if (c->conns[i].state == RPCRDMA__CONN_UP)
			return true;
	}
	return false;
}

/* Every connection is started; 0 once at least one is up and none is
 * still on its way (the others retry as calls need them). */
int rpcrdma_client_connect(struct rpcrdma_client *c)
{
	int rc = 0;

	if (!c)
		return -EINVAL;
	if (c->destroying)
		return -ESHUTDOWN;
	rpcrdma__clnt_enter(c);
	for (unsigned int i = 0; i < c->nconn; i++)
		begin_connect(&c->conns[i]);
	while (rc >= 0 && any_connecting(c) && !c->destroying)
		rc = rpcrdma_loop_run_once(c->loop, -1);
	if (rc >= 0)
		rc = c->destroying ? -ESHUTDOWN : any_up(c) ? 0 : c->last_err;
	rpcrdma__clnt_leave(c);
	return rc;
}

/* Counters that are a level or a high-water mark, not a count. */
static bool stat_is_level(const char *name)
{
	return strstr(name, "_max") || strstr(name, "credits_granted");
}

static void stats_merge(struct rpcrdma_xprt_stats *acc, const struct rpcrdma_xprt_stats *one)
{
#define MERGE(name)                                                                                \
	acc->name = stat_is_level(#name) ? (acc->name > one->name ? acc->name : one->name)        \
					 : acc->name + one->name;
	RPCRDMA_XPRT_STATS(MERGE)
#undef MERGE
}

int rpcrdma_client_stats(struct rpcrdma_client *c, struct rpcrdma_xprt_stats *out)
{
	if (!c || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	for (unsigned int i = 0; i < c->nconn; i++) {
		struct rpcrdma_xprt_stats one;

		memset(&one, 0, sizeof(one));
		c->ops->stats(c->conns[i].t, &one);
		one.reconnects = c->conns[i].reconnects;
		one.retransmits = one.timeouts = 0;
		stats_merge(out, &one);
	}
	/* The core owns retransmission and time-outs. */
	out->retransmits = c->retransmits;
	out->timeouts = c->timeouts;
	/* Without credits of its own, a transport leaves this to us. */
	if (out->credits_in_use_max == 0)
		out->credits_in_use_max = c->nsent_max;
	return 0;
}

int rpcrdma_client_conn_stats(struct rpcrdma_client *c, unsigned int conn,
			      struct rpcrdma_xprt_stats *out)
{
	if (!c || !out)
		return -EINVAL;
	if (conn >= c->nconn)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	c->ops->stats(c->conns[conn].t, out);
	out->reconnects = c->conns[conn].reconnects;
	out->retransmits = out->timeouts = 0;
	return 0;
}

/* Test hooks and the backchannel (core.h). */

void rpcrdma__client_disconnect(struct rpcrdma_client *c)
{
	for (unsigned int i = 0; c && !c->destroying && i < c->nconn; i++)
		c->ops->disconnect(c->conns[i].t);
}

void rpcrdma__client_disconnect_conn(struct rpcrdma_client *c, unsigned int conn)
{
	if (c && !c->destroying && conn < c->nconn)
		c->ops->disconnect(c->conns[conn].t);
}

struct rpcrdma__clnt_transport *rpcrdma__client_transport(struct rpcrdma_client *c)
{
	return c ? c->conns[0].t : NULL;
}

bool rpcrdma__client_connected(struct rpcrdma_client *c)
{
	return c && (c->conns[0].state != RPCRDMA__CONN_DOWN || c->conns[0].ever_up);
}
