/*
 * clnt.c - the RPC client, transport-neutral: XIDs, the table of calls in
 * flight, credentials, time-outs, reconnection and retransmission, and
 * decoding of reply headers and results.  A transport (transport.h) moves
 * the bytes.
 *
 * Calls leave from a zero-delay "kick" timer, so no completion runs inside
 * the call that started it; a lost connection puts the calls in flight back
 * in front of the queue, to go again with their XIDs, until opts.retries
 * losses; a time-out is final.  Destroyed from inside one of its own
 * callbacks, the client is freed from a timer.  The whole story is in
 * docs/architecture.md ("The RPC client").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/list.h"
#include "common/trace.h"
#include "rpcrdma/debug.h"
#include "rpc/core.h"
#include "rpc/loop_internal.h"

#define TABLE_SIZE 1024u /* XIDs are sequential: xid & mask spreads evenly */
#define RECONNECT_MIN_MS 100u
#define RECONNECT_MAX_MS 3000u
#define DEFAULT_TIMEOUT_MS 30000
#define DEFAULT_RETRIES 3u
#define HINT_SLOTS 64u /* procedures whose large calls we remember */

enum conn_state {
	CONN_DOWN,
	CONN_CONNECTING,
	CONN_UP,
};

enum client_call_state {
	CC_QUEUED,  /* waiting to be sent (again) */
	CC_SENT,    /* the transport has it; a reply may come */
	CC_FENCING, /* given up on; the peer's access to its memory being revoked */
};

struct client_call {
	struct rpcrdma__creq req;
	struct rpcrdma_call *call;
	struct rpcrdma_client *clnt;
	struct rpcrdma__timer timer;
	struct client_call *table_next; /* table chain */
	struct rpcrdma__list node;      /* on queued, sent, fencing (or a local list) */
	enum client_call_state state;
	unsigned int losses; /* connections lost while in flight */
	bool sent_once;
	uint64_t start_ns; /* for rpcrdma_client_inflight() */
	size_t hint; /* room the last encode needed */
	int fence_status; /* CC_FENCING: what the caller gets once revoked */
};

struct rpcrdma_client {
	struct rpcrdma_loop *loop;
	const struct rpcrdma__clnt_transport_ops *ops;
	struct rpcrdma__clnt_transport *t;
	uint32_t prog, vers;
	struct rpcrdma_client_opts opts;
	struct rpcrdma_opaque_auth cred, verf;
	uint32_t next_xid;
	/* Room the last large call of procedure p needed (slot p % HINT_SLOTS),
	 * so a stream of large writes does not rediscover it each time. */
	size_t proc_hint[HINT_SLOTS];
	struct client_call *table[TABLE_SIZE];
	struct rpcrdma__list queued, sent;
	struct rpcrdma__list fencing; /* CC_FENCING calls, completed from on_aborted */
	unsigned int nsent, nsent_max;

	enum conn_state conn;
	bool blocked;  /* the transport said -EAGAIN: wait for writable */
	bool flushing; /* flush_queue() is on the stack */
	bool ever_up;
	unsigned int backoff_ms;
	unsigned int conn_events; /* connected + disconnected, for client_connect */
	int last_err;
	struct rpcrdma__timer kick_timer;
	struct rpcrdma__timer reconnect_timer;
	struct rpcrdma__timer disc_timer; /* a loss reported while flushing */
	bool disc_pending;
	int disc_err;

	uint64_t reconnects, retransmits, timeouts;

	unsigned int busy; /* client code on the stack */
	bool destroying;
	struct rpcrdma__timer free_timer;

	int refusal;                   /* calls fail with it before queueing (0: none) */
	struct rpcrdma_server *cb_srv; /* callback programs hosted (backchannel.h) */
};

void rpcrdma_client_opts_default(struct rpcrdma_client_opts *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->transport = RPCRDMA_TRANSPORT_RDMA;
	opts->provider = "ofi";
	opts->inline_send = 8192;
	opts->inline_recv = 8192;
	opts->credits = 128;
	opts->max_vers = 1;
	opts->timeout_ms = DEFAULT_TIMEOUT_MS;
	opts->retries = DEFAULT_RETRIES;
	opts->cred = NULL;
	opts->max_record = 0;
}

/* Lists and the table. */

/* The call linked at @n, or NULL. */
static struct client_call *call_at(struct rpcrdma__list *n)
{
	return n ? rpcrdma__container_of(n, struct client_call, node) : NULL;
}

static struct client_call *first_call(const struct rpcrdma__list *l)
{
	return call_at(rpcrdma__list_first(l));
}

static void call_list_append(struct rpcrdma__list *l, struct client_call *cc)
{
	rpcrdma__list_add_tail(l, &cc->node);
}

static void call_list_remove(struct client_call *cc)
{
	rpcrdma__list_del(&cc->node);
}

static struct client_call *table_find(struct rpcrdma_client *c, uint32_t xid)
{
	struct client_call *cc;

	for (cc = c->table[xid & (TABLE_SIZE - 1)]; cc; cc = cc->table_next) {
		if (cc->req.xid == xid)
			return cc;
	}
	return NULL;
}

static void table_remove(struct rpcrdma_client *c, struct client_call *cc)
{
	struct client_call **pp = &c->table[cc->req.xid & (TABLE_SIZE - 1)];

	for (; *pp; pp = &(*pp)->table_next) {
		if (*pp == cc) {
			*pp = cc->table_next;
			break;
		}
	}
	cc->table_next = NULL;
}

static uint32_t new_xid(struct rpcrdma_client *c)
{
	/* After 2^32 calls an XID may come round while still in flight. */
	while (table_find(c, c->next_xid))
		c->next_xid++;
	return c->next_xid++;
}

/* Life cycle helpers. */

static void free_cb(struct rpcrdma__timer *tm);
static void finish(struct client_call *cc, int status);

static void finalize(struct rpcrdma_client *c)
{
	if (c->cb_srv) {
		/* The callback server serves our connection: it goes first,
		 * once none of its procedures is on the stack. */
		if (rpcrdma__server_busy(c->cb_srv)) {
			rpcrdma__timer_start(c->loop, &c->free_timer, 1, free_cb, c);
			return;
		}
		rpcrdma_server_destroy(c->cb_srv);
		c->cb_srv = NULL;
	}
	rpcrdma__timer_stop(&c->free_timer);
	rpcrdma__timer_stop(&c->kick_timer);
	rpcrdma__timer_stop(&c->reconnect_timer);
	rpcrdma__timer_stop(&c->disc_timer);
	c->ops->destroy(c->t);
	/* The instance is closed: every grant went with it. */
	while (!rpcrdma__list_empty(&c->fencing)) {
		struct client_call *cc = first_call(&c->fencing);

		call_list_remove(cc);
		finish(cc, cc->fence_status);
	}
	rpcrdma__loop_unref(c->loop);
	free(c);
}

static void free_cb(struct rpcrdma__timer *tm)
{
	struct rpcrdma_client *c = tm->ctx;

	if (c->busy == 0)
		finalize(c);
}

static void enter(struct rpcrdma_client *c)
{
	c->busy++;
}

static void leave(struct rpcrdma_client *c)
{
	if (--c->busy == 0 && c->destroying)
		rpcrdma__timer_start(c->loop, &c->free_timer, 0, free_cb, c);
}

/*
 * Take @cc out of the client: table, lists, timer, and (@abort) the
 * transport, which already forgot it when it reported a reply or a failure.
 * The caller then completes it with finish().
 */
static bool detach(struct rpcrdma_client *c, struct client_call *cc, bool abort)
{
	bool fencing = false;

	table_remove(c, cc);
	if (cc->state == CC_SENT) {
		call_list_remove(cc);
		c->nsent--;
		if (abort)
			fencing = c->ops->call_abort(c->t, &cc->req) > 0;
	} else {
		call_list_remove(cc);
	}
	rpcrdma__timer_stop(&cc->timer);
	return fencing;
}

/*
 * RFC 8166 5.4.1: the memory of a call given up on goes back to its caller
 * only once the peer can no longer reach it.  When the transport is still
 * revoking, the call waits (on_aborted) with the @status it will get.
 */
static bool park_fencing(struct rpcrdma_client *c, struct client_call *cc, bool fencing, int status)
{
	if (!fencing)
		return false;
	cc->state = CC_FENCING;
	cc->fence_status = status;
	call_list_append(&c->fencing, cc);
	return true;
}

/* Fill the outputs, free our state, run done().  @cc is detached. */
static void finish(struct client_call *cc, int status)
{
	struct rpcrdma_call *call = cc->call;

	call->status = status;
	call->xid = cc->req.xid;
	call->priv[0] = NULL;
	free(cc);
	call->done(call, call->ctx);
}

static void fail_call(struct rpcrdma_client *c, struct client_call *cc, int status)
{
	if (park_fencing(c, cc, detach(c, cc, true), status))
		return;
	finish(cc, status);
}

/* Sending. */

static int encode_call(struct rpcrdma_client *c, struct client_call *cc)
{
	struct rpcrdma_call *call = cc->call;
	struct rpcrdma_rpc_call hdr;
	int rc;

	hdr.rpcvers = RPCRDMA_RPC_VERSION;
	hdr.prog = c->prog;
	hdr.vers = c->vers;
	hdr.proc = call->proc;
	hdr.cred = c->cred;
	hdr.verf = c->verf;
	rc = rpcrdma_rpc_encode_call(&cc->req.send, cc->req.xid, &hdr);
	if (rc == 0 && call->encode_args)
		rc = call->encode_args(&cc->req.send, call->args);
	return rc;
}

/*
 * Hand @cc (at the head of the queue) to the transport.  Returns 0 when it
 * left or failed (completed), -EAGAIN / -ENOTCONN when it stays queued.
 */
static int transmit(struct rpcrdma_client *c, struct client_call *cc)
{
	size_t prev_room = 0;
	int rc;

	for (;;) {
		size_t room;

		cc->req.send_hint = cc->hint;
		rc = c->ops->call_begin(c->t, &cc->req);
		if (rc == -EAGAIN || rc == -ENOTCONN)
			goto out_wait;
		if (rc)
			goto out_fail;
		room = cc->req.send.len;
		rc = encode_call(c, cc);
		if (rc == RPCRDMA_ERR_NOSPACE && room > prev_room) {
			/* Ask for four times the room; the transport caps it. */
			c->ops->call_abort(c->t, &cc->req);
			prev_room = room;
			cc->hint = room > SIZE_MAX / 4 ? SIZE_MAX : room * 4;
			continue;
		}
		if (rc) {
			c->ops->call_abort(c->t, &cc->req);
			goto out_fail;
		}
		break;
	}
	/* Remember a room that had to grow; forget it once calls are small again. */
	if (prev_room)
		c->proc_hint[cc->call->proc % HINT_SLOTS] = cc->req.send.len;
	else if (cc->hint && rpcrdma_xdr_pos(&cc->req.send) < cc->hint / 8)
		c->proc_hint[cc->call->proc % HINT_SLOTS] = 0;
	rc = c->ops->call_send(c->t, &cc->req);
	if (rc == -EAGAIN || rc == -ENOTCONN)
		goto out_wait;
	if (rc)
		goto out_fail;
	call_list_remove(cc);
	call_list_append(&c->sent, cc);
	cc->state = CC_SENT;
	if (cc->sent_once) {
		c->retransmits++;
		RPCRDMA__TRACE(RPCRDMA_TRACE_CALL, RPCRDMA_TEV_RETRANSMIT, cc->req.conn_id,
			       cc->req.xid, cc->losses, 0,
			       "call sent again after %u lost connections", cc->losses);
	}
	cc->sent_once = true;
	if (++c->nsent > c->nsent_max)
		c->nsent_max = c->nsent;
	return 0;

out_wait:
	if (rc == -EAGAIN)
		c->blocked = true;
	return rc;
out_fail:
	fail_call(c, cc, rc);
	return 0;
}

static void flush_queue(struct rpcrdma_client *c)
{
	if (c->flushing)
		return;
	c->flushing = true;
	while (!c->destroying && c->conn == CONN_UP && !c->blocked && !c->disc_pending &&
	       !rpcrdma__list_empty(&c->queued)) {
		if (transmit(c, first_call(&c->queued)))
			break;
	}
	c->flushing = false;
}

static void on_disconnected(void *ctx, int err);

static void begin_connect(struct rpcrdma_client *c)
{
	int rc;

	if (c->conn != CONN_DOWN)
		return;
	rpcrdma__timer_stop(&c->reconnect_timer);
	if (c->ever_up)
		c->reconnects++;
	c->conn = CONN_CONNECTING;
	rc = c->ops->connect(c->t);
	if (rc)
		on_disconnected(c, rc);
}

static void kick_cb(struct rpcrdma__timer *tm)
{
	struct rpcrdma_client *c = tm->ctx;

	enter(c);
	if (c->conn == CONN_UP)
		flush_queue(c);
	else if (c->conn == CONN_DOWN && !c->reconnect_timer.armed &&
		 !rpcrdma__list_empty(&c->queued))
		begin_connect(c);
	leave(c);
}

static void kick(struct rpcrdma_client *c)
{
	if (!c->kick_timer.armed)
		rpcrdma__timer_start(c->loop, &c->kick_timer, 0, kick_cb, c);
}

static void reconnect_cb(struct rpcrdma__timer *tm)
{
	struct rpcrdma_client *c = tm->ctx;

	enter(c);
	if (!rpcrdma__list_empty(&c->queued) || c->cb_srv)
		begin_connect(c);
	leave(c);
}

static void on_timeout(struct rpcrdma__timer *tm)
{
	struct client_call *cc = tm->ctx;
	struct rpcrdma_client *c = cc->clnt;

	enter(c);
	c->timeouts++;
	RPCRDMA__TRACE(RPCRDMA_TRACE_CALL, RPCRDMA_TEV_TIMEOUT, cc->req.conn_id, cc->req.xid,
		       cc->call->timeout_ms ? cc->call->timeout_ms : c->opts.timeout_ms, 0,
		       "call timed out (procedure %u, %s)", cc->call->proc,
		       cc->state == CC_SENT ? "sent, no reply" : "never sent");
	/* Never sent because the peer is not the kind of server this client
	 * speaks to: that is the cause to report, not the time. */
	if (!cc->sent_once &&
	    (c->last_err == RPCRDMA_ERR_NOT_RDMA_PEER || c->last_err == RPCRDMA_ERR_NOT_TCP_PEER))
		fail_call(c, cc, c->last_err);
	else
		fail_call(c, cc, RPCRDMA_ERR_TIMEDOUT);
	leave(c);
}

/* Transport callbacks. */

static struct rpcrdma__creq *on_find(void *ctx, uint32_t xid)
{
	struct client_call *cc = table_find(ctx, xid);

	return cc && cc->state == CC_SENT ? &cc->req : NULL;
}

static void on_reply(void *ctx, struct rpcrdma__creq *req, struct rpcrdma_xdr_stream *msg)
{
	struct rpcrdma_client *c = ctx;
	struct client_call *cc = req->core;
	struct rpcrdma_call *call = cc->call;
	struct rpcrdma_rpc_msg m;
	int rc;

	enter(c);
	detach(c, cc, false);
	rc = rpcrdma_rpc_decode_msg(msg, &m);
	if (rc == 0 && m.type != RPCRDMA_RPC_REPLY)
		rc = RPCRDMA_ERR_BAD_RPC;
	if (rc == 0) {
		call->reply = m.u.reply;
		if (m.u.reply.stat != RPCRDMA_RPC_MSG_ACCEPTED ||
		    m.u.reply.accept_stat != RPCRDMA_RPC_SUCCESS)
			rc = RPCRDMA_ERR_RPC_REJECTED;
		else if (call->decode_res)
			rc = call->decode_res(msg, call->res);
	}
	call->status = rc; /* finish() sets it too; rpcrdma_call_strerror() reads it */
	if (rc == RPCRDMA_ERR_RPC_REJECTED)
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, cc->req.conn_id, cc->req.xid,
			       rc, m.u.reply.stat, "call refused: %s",
			       rpcrdma_call_strerror(call));
	else if (rc)
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, cc->req.conn_id, cc->req.xid,
			       rc, rpcrdma_xdr_pos(msg), "reply refused at byte %zu of the RPC message: %s",
			       rpcrdma_xdr_pos(msg), rpcrdma_strerror(rc));
	finish(cc, rc);
	leave(c);
}

static void on_failed(void *ctx, struct rpcrdma__creq *req, int err)
{
	struct rpcrdma_client *c = ctx;

	enter(c);
	detach(c, req->core, false);
	finish(req->core, err);
	leave(c);
}

static void on_connected(void *ctx)
{
	struct rpcrdma_client *c = ctx;

	enter(c);
	c->conn = CONN_UP;
	c->ever_up = true;
	c->backoff_ms = 0;
	c->blocked = false;
	c->last_err = 0;
	c->conn_events++;
	flush_queue(c);
	leave(c);
}

static void disconnected_later(struct rpcrdma__timer *tm)
{
	struct rpcrdma_client *c = tm->ctx;

	c->disc_pending = false;
	on_disconnected(c, c->disc_err);
}

static void on_disconnected(void *ctx, int err)
{
	struct rpcrdma_client *c = ctx;
	bool was_up = c->conn == CONN_UP;
	struct rpcrdma__list doomed, *it, *next;
	struct client_call *cc;
	unsigned int delay;

	if (c->flushing) {
		/*
		 * Reported from inside call_begin/call_send: transmit() still
		 * holds the call at the head of the queue, so handle it once
		 * that call is back in our hands.
		 */
		c->disc_pending = true;
		c->disc_err = err;
		rpcrdma__timer_start(c->loop, &c->disc_timer, 0, disconnected_later, c);
		return;
	}
	enter(c);
	c->conn = CONN_DOWN;
	c->blocked = false;
	c->last_err = err ? err : -ECONNRESET;
	c->conn_events++;

	/* Calls in flight go back in front of those never sent, in order. */
	while ((cc = call_at(rpcrdma__list_last(&c->sent)))) {
		call_list_remove(cc);
		c->nsent--;
		cc->state = CC_QUEUED;
		rpcrdma__list_add_head(&c->queued, &cc->node);
	}
	/* Every call waiting on this connection has lost one. */
	rpcrdma__list_init(&doomed);
	rpcrdma__list_foreach_safe(it, next, &c->queued)
	{
		cc = call_at(it);
		if (++cc->losses > c->opts.retries) {
			detach(c, cc, false);
			call_list_append(&doomed, cc);
		}
	}
	/* Complete them only now: done() may start calls or destroy us. */
	while ((cc = first_call(&doomed))) {
		call_list_remove(cc);
		finish(cc, c->last_err);
	}
	/* A client hosting callbacks keeps a connection for the server's
	 * calls even with none of its own to send (RFC 8167 5.4). */
	if (!c->destroying && (!rpcrdma__list_empty(&c->queued) || c->cb_srv) &&
	    !c->reconnect_timer.armed) {
		if (was_up) {
			delay = 0;
		} else {
			delay = c->backoff_ms ? c->backoff_ms : RECONNECT_MIN_MS;
			c->backoff_ms = delay * 2 > RECONNECT_MAX_MS ? RECONNECT_MAX_MS : delay * 2;
		}
		rpcrdma__timer_start(c->loop, &c->reconnect_timer, delay, reconnect_cb, c);
	}
	leave(c);
}

static void on_writable(void *ctx)
{
	struct rpcrdma_client *c = ctx;

	enter(c);
	c->blocked = false;
	flush_queue(c);
	leave(c);
}

static void on_aborted(void *ctx, struct rpcrdma__creq *req)
{
	struct rpcrdma_client *c = ctx;
	struct client_call *cc = req->core;

	if (!cc || cc->state != CC_FENCING)
		return;
	call_list_remove(cc);
	enter(c);
	finish(cc, cc->fence_status);
	leave(c);
}

static const struct rpcrdma__clnt_cb clnt_cb = {
    .aborted = on_aborted,
    .find = on_find,
    .reply = on_reply,
    .failed = on_failed,
    .connected = on_connected,
    .disconnected = on_disconnected,
    .writable = on_writable,
};

/* Public API. */

static uint32_t random_xid(const void *salt)
{
	struct timespec ts;
	uint32_t x;

	if (getrandom(&x, sizeof(x), GRND_NONBLOCK) == (ssize_t)sizeof(x))
		return x;
	/* No entropy yet (early boot): still differ between clients. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint32_t)ts.tv_nsec * 2654435761u) ^ (uint32_t)getpid() ^
	       (uint32_t)(uintptr_t)salt;
}

/* Takes @opts (NULL: the defaults) with its zeros replaced by defaults;
 * -EINVAL for values no transport accepts. */
static int opts_take(const struct rpcrdma_client_opts *opts, struct rpcrdma_client_opts *o)
{
	if (opts)
		*o = *opts;
	else
		rpcrdma_client_opts_default(o);
	if ((o->cred && o->cred->len > RPCRDMA_AUTH_BODY_MAX) || o->timeout_ms < -1)
		return -EINVAL;
	if (o->timeout_ms == 0)
		o->timeout_ms = DEFAULT_TIMEOUT_MS;
	if (o->retries == 0)
		o->retries = DEFAULT_RETRIES;
	return 0;
}

/* A client with no transport yet: the caller makes it, or frees @c. */
static struct rpcrdma_client *client_alloc(struct rpcrdma_loop *loop,
					   const struct rpcrdma__clnt_transport_ops *ops,
					   uint32_t prog, uint32_t vers, struct rpcrdma_client_opts *o)
{
	struct rpcrdma_client *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->loop = loop;
	c->ops = ops;
	rpcrdma__list_init(&c->queued);
	rpcrdma__list_init(&c->sent);
	rpcrdma__list_init(&c->fencing);
	c->prog = prog;
	c->vers = vers;
	if (o->cred)
		c->cred = *o->cred;
	else
		rpcrdma_auth_none(&c->cred);
	rpcrdma_auth_none(&c->verf);
	o->cred = NULL; /* ours is c->cred; the caller's may go away */
	c->opts = *o;
	c->next_xid = random_xid(c);
	return c;
}

int rpcrdma_client_create(struct rpcrdma_loop *loop, const char *host, const char *service,
			  uint32_t prog, uint32_t vers, const struct rpcrdma_client_opts *opts,
			  struct rpcrdma_client **out)
{
	const struct rpcrdma__clnt_transport_ops *ops;
	struct rpcrdma_client_opts o;
	struct sockaddr_storage ss;
	struct rpcrdma_client *c;
	socklen_t sslen;
	int rc;

	if (!loop || !host || !out)
		return -EINVAL;
	rc = opts_take(opts, &o);
	if (rc)
		return rc;
	rc = rpcrdma__clnt_ops_for(o.transport, &ops);
	if (rc)
		return rc;
	rc = rpcrdma__resolve(host, service ? service : "0", false, &ss, &sslen);
	if (!rc && !service)
		rc = rpcrdma__rpcbind_port(loop, prog, vers, o.transport, &ss);
	if (rc)
		return rc;
	c = client_alloc(loop, ops, prog, vers, &o);
	if (!c)
		return -ENOMEM;
	rc = ops->create(loop, (struct sockaddr *)&ss, sslen, &c->opts, &clnt_cb, c, &c->t);
	if (rc) {
		free(c);
		return rc;
	}
	rpcrdma__loop_ref(loop);
	*out = c;
	return 0;
}

int rpcrdma_client_connect(struct rpcrdma_client *c)
{
	unsigned int seen;
	int rc = 0;

	if (!c)
		return -EINVAL;
	if (c->destroying)
		return -ESHUTDOWN;
	if (c->conn == CONN_UP)
		return 0;
	enter(c);
	seen = c->conn_events;
	if (c->conn == CONN_DOWN)
		begin_connect(c);
	while (rc >= 0 && c->conn_events == seen && !c->destroying)
		rc = rpcrdma_loop_run_once(c->loop, -1);
	if (rc >= 0)
		rc = c->destroying ? -ESHUTDOWN : c->conn == CONN_UP ? 0 : c->last_err;
	leave(c);
	return rc;
}

void rpcrdma_client_destroy(struct rpcrdma_client *c)
{
	struct rpcrdma__list doomed;
	struct client_call *cc;

	if (!c || c->destroying)
		return;
	rpcrdma__list_init(&doomed);
	c->destroying = true;
	enter(c);
	rpcrdma__timer_stop(&c->kick_timer);
	rpcrdma__timer_stop(&c->reconnect_timer);
	rpcrdma__timer_stop(&c->disc_timer);
	while (
	    (cc = rpcrdma__list_empty(&c->sent) ? first_call(&c->queued) : first_call(&c->sent))) {
		/* Those still being revoked complete when that is done, or
		 * when the transport is destroyed (finalize). */
		if (park_fencing(c, cc, detach(c, cc, true), RPCRDMA_ERR_CANCELLED))
			continue;
		call_list_append(&doomed, cc);
	}
	while ((cc = first_call(&doomed))) {
		call_list_remove(cc);
		finish(cc, RPCRDMA_ERR_CANCELLED);
	}
	if (c->busy == 1) {
		/* Nothing of ours below us on the stack: free now. */
		finalize(c);
		return;
	}
	leave(c);
}

/* A Write chunk list is either absent or well formed, never mixed with the
 * single ddp_buf. */
static bool ddp_list_valid(const struct rpcrdma_call *call)
{
	if (!call->ddp_count)
		return true;
	if (call->ddp_buf || !call->ddp_list || call->ddp_count > RPCRDMA_CALL_MAX_WRITE_CHUNKS)
		return false;
	for (unsigned int i = 0; i < call->ddp_count; i++) {
		if (call->ddp_list[i].len && !call->ddp_list[i].buf)
			return false;
	}
	return true;
}

int rpcrdma_client_call_async(struct rpcrdma_client *c, struct rpcrdma_call *call)
{
	struct client_call *cc;
	int timeout;

	if (!c || !call || !call->done || call->timeout_ms < -1 ||
	    (call->ddp_len && !call->ddp_buf) || !ddp_list_valid(call))
		return -EINVAL;
	if (c->destroying)
		return -ESHUTDOWN;
	if (c->refusal)
		return c->refusal;
	cc = calloc(1, sizeof(*cc));
	if (!cc)
		return -ENOMEM;
	rpcrdma__list_init(&cc->node);
	cc->call = call;
	cc->clnt = c;
	cc->start_ns = rpcrdma__trace_now_ns();
	cc->req.xid = new_xid(c);
	cc->req.ddp_buf = call->ddp_buf;
	cc->req.ddp_len = call->ddp_buf ? call->ddp_len : 0;
	cc->req.ddp_list = call->ddp_count ? call->ddp_list : NULL;
	cc->req.ddp_count = call->ddp_count;
	cc->req.max_reply = call->max_reply;
	cc->req.core = cc;
	cc->hint = c->proc_hint[call->proc % HINT_SLOTS];
	cc->state = CC_QUEUED;
	call->status = -EINPROGRESS;
	call->xid = cc->req.xid;
	memset(&call->reply, 0, sizeof(call->reply));
	call->priv[0] = cc;

	cc->table_next = c->table[cc->req.xid & (TABLE_SIZE - 1)];
	c->table[cc->req.xid & (TABLE_SIZE - 1)] = cc;
	call_list_append(&c->queued, cc);
	timeout = call->timeout_ms ? call->timeout_ms : c->opts.timeout_ms;
	if (timeout > 0)
		rpcrdma__timer_start(c->loop, &cc->timer, (uint64_t)timeout, on_timeout, cc);
	kick(c);
	return 0;
}

struct sync_wait {
	bool done;
};

static void sync_done(struct rpcrdma_call *call, void *ctx)
{
	struct sync_wait *w = ctx;

	(void)call;
	w->done = true;
}

int rpcrdma_client_call(struct rpcrdma_client *c, struct rpcrdma_call *call)
{
	void (*user_done)(struct rpcrdma_call *, void *);
	struct sync_wait w = {false};
	void *user_ctx;
	int rc;

	if (!c || !call)
		return -EINVAL;
	user_done = call->done;
	user_ctx = call->ctx;
	call->done = sync_done;
	call->ctx = &w;
	rc = rpcrdma_client_call_async(c, call);
	if (rc) {
		call->done = user_done;
		call->ctx = user_ctx;
		call->status = rc;
		return rc;
	}
	/*
	 * Until our call completes the client exists: destroying it would
	 * have completed the call with RPCRDMA_ERR_CANCELLED.
	 */
	while (!w.done) {
		rc = rpcrdma_loop_run_once(c->loop, -1);
		if (rc < 0 && !w.done) {
			struct client_call *cc = call->priv[0];

			enter(c);
			fail_call(c, cc, rc);
			leave(c);
		}
	}
	call->done = user_done;
	call->ctx = user_ctx;
	return call->status;
}

int rpcrdma_client_stats(struct rpcrdma_client *c, struct rpcrdma_xprt_stats *out)
{
	if (!c || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	c->ops->stats(c->t, out);
	/* The core owns reconnection, retransmission and time-outs. */
	out->reconnects = c->reconnects;
	out->retransmits = c->retransmits;
	out->timeouts = c->timeouts;
	/* Without credits of its own, a transport leaves this to us. */
	if (out->credits_in_use_max == 0)
		out->credits_in_use_max = c->nsent_max;
	return 0;
}

void rpcrdma__client_disconnect(struct rpcrdma_client *c)
{
	if (c && !c->destroying)
		c->ops->disconnect(c->t);
}

struct rpcrdma__clnt_transport *rpcrdma__client_transport(struct rpcrdma_client *c)
{
	return c ? c->t : NULL;
}

/* Bidirectional RPC (core.h). */

int rpcrdma__client_create_on(struct rpcrdma_loop *loop, uint32_t prog, uint32_t vers,
			      const struct rpcrdma_client_opts *opts,
			      const struct rpcrdma__clnt_transport_ops *ops,
			      rpcrdma__clnt_make_fn make, void *arg, struct rpcrdma_client **out)
{
	struct rpcrdma_client_opts o;
	struct rpcrdma_client *c;
	int rc;

	if (!loop || !ops || !make || !out)
		return -EINVAL;
	rc = opts_take(opts, &o);
	if (rc)
		return rc;
	c = client_alloc(loop, ops, prog, vers, &o);
	if (!c)
		return -ENOMEM;
	rc = make(arg, &clnt_cb, c, &c->t);
	if (rc) {
		free(c);
		return rc;
	}
	rpcrdma__loop_ref(loop);
	*out = c;
	return 0;
}

void rpcrdma__client_set_refusal(struct rpcrdma_client *c, int err)
{
	if (c)
		c->refusal = err;
}

void rpcrdma__client_set_callbacks(struct rpcrdma_client *c, struct rpcrdma_server *cb_srv)
{
	if (c)
		c->cb_srv = cb_srv;
}

struct rpcrdma_server *rpcrdma__client_callbacks(struct rpcrdma_client *c)
{
	return c ? c->cb_srv : NULL;
}

const struct rpcrdma__clnt_transport_ops *rpcrdma__client_ops(struct rpcrdma_client *c)
{
	return c ? c->ops : NULL;
}

struct rpcrdma_loop *rpcrdma__client_loop(struct rpcrdma_client *c)
{
	return c ? c->loop : NULL;
}

bool rpcrdma__client_connected(struct rpcrdma_client *c)
{
	return c && (c->conn != CONN_DOWN || c->ever_up);
}

void rpcrdma__client_set_next_xid(struct rpcrdma_client *c, uint32_t xid)
{
	if (c)
		c->next_xid = xid;
}

/* Debugging (rpcrdma/debug.h): reads the lists without changing anything,
 * and calls nothing but clock_gettime, so a signal handler may use it. */
static unsigned int inflight_list(const struct rpcrdma__list *l, enum rpcrdma_call_state st,
				  uint64_t now, struct rpcrdma_call_info *out, unsigned int max,
				  unsigned int n)
{
	for (const struct rpcrdma__list *it = l->next; it != l; it = it->next, n++) {
		const struct client_call *cc =
		    rpcrdma__container_of(it, const struct client_call, node);

		if (n >= max)
			continue;
		out[n] = (struct rpcrdma_call_info){
		    .xid = cc->req.xid,
		    .proc = cc->call ? cc->call->proc : 0,
		    .age_ms = now > cc->start_ns ? (now - cc->start_ns) / 1000000u : 0,
		    .state = st,
		    .losses = cc->losses,
		    .write_chunks = cc->req.ddp_count ? cc->req.ddp_count : cc->req.ddp_buf != NULL,
		    .conn_id = cc->sent_once ? cc->req.conn_id : 0,
		};
	}
	return n;
}

int rpcrdma_client_inflight(struct rpcrdma_client *c, struct rpcrdma_call_info *out,
			    unsigned int max)
{
	uint64_t now = rpcrdma__trace_now_ns();
	unsigned int n;

	if (!c || (!out && max))
		return -EINVAL;
	n = inflight_list(&c->sent, RPCRDMA_CALL_SENT, now, out, max, 0);
	n = inflight_list(&c->queued, RPCRDMA_CALL_QUEUED, now, out, max, n);
	return n > INT32_MAX ? INT32_MAX : (int)n;
}
