/*
 * clnt.c - the RPC client, transport-neutral: its calls.  XIDs, the table of
 * calls in flight, credentials, time-outs, completion, and decoding of reply
 * headers and results.  Its connections, and which one a call leaves on, are
 * clnt_conns.c's; a transport (transport.h) moves the bytes.
 *
 * A call leaves from call_async itself when it is alone in the queue and a
 * connection can take it, else from a zero-delay "kick" timer; either way
 * no completion runs inside the call that started it (a send that fails at
 * once is completed by the kick).  A time-out is final.  Destroyed from inside one
 * of its own callbacks, the client is freed from a timer.  The whole story
 * is in docs/architecture.md ("The RPC client").
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/trace.h"
#include "rpc/clnt_internal.h"
#include "rpc/rpc_msg_internal.h"

#define TABLE_SIZE RPCRDMA__CLNT_TABLE_SIZE
#define HINT_SLOTS RPCRDMA__CLNT_HINT_SLOTS
#define DEFAULT_TIMEOUT_MS 30000
#define DEFAULT_RETRIES 3u

#define client_call rpcrdma__client_call
#define CC_QUEUED RPCRDMA__CC_QUEUED
#define CC_SENT RPCRDMA__CC_SENT
#define CC_FENCING RPCRDMA__CC_FENCING

void rpcrdma_client_opts_default(struct rpcrdma_client_opts *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->transport = RPCRDMA_TRANSPORT_RDMA;
	opts->provider = "ofi";
	opts->inline_send = 0; /* the transport's default for its provider */
	opts->inline_recv = 0;
	opts->credits = 128;
	opts->max_vers = 1;
	opts->timeout_ms = DEFAULT_TIMEOUT_MS;
	opts->retries = DEFAULT_RETRIES;
	opts->cred = NULL;
	opts->max_record = 0;
}

/* Lists and the table. */

/* The call linked at @n, or NULL. */
struct client_call *rpcrdma__clnt_call_at(struct rpcrdma__list *n)
{
	return n ? rpcrdma__container_of(n, struct client_call, node) : NULL;
}

#define call_at rpcrdma__clnt_call_at

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
#define finish rpcrdma__clnt_finish

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
	rpcrdma__clnt_conns_stop(c, true);
	/* The instance is closed: every grant went with it. */
	while (!rpcrdma__list_empty(&c->fencing)) {
		struct client_call *cc = first_call(&c->fencing);

		call_list_remove(cc);
		finish(cc, cc->fence_status);
	}
	while (c->spare_calls) {
		struct client_call *cc = c->spare_calls;

		c->spare_calls = cc->table_next;
		free(cc);
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

void rpcrdma__clnt_enter(struct rpcrdma_client *c)
{
	c->busy++;
}

void rpcrdma__clnt_leave(struct rpcrdma_client *c)
{
	if (--c->busy == 0 && c->destroying)
		rpcrdma__timer_start(c->loop, &c->free_timer, 0, free_cb, c);
}

#define enter rpcrdma__clnt_enter
#define leave rpcrdma__clnt_leave

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
		cc->conn->nsent--;
		if (abort)
			fencing = c->ops->call_abort(cc->conn->t, &cc->req) > 0;
	} else {
		call_list_remove(cc);
	}
	cc->conn = NULL;
	rpcrdma__timer_stop(&cc->timer);
	return fencing;
}

void rpcrdma__clnt_forget(struct rpcrdma_client *c, struct client_call *cc)
{
	detach(c, cc, false);
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

/* Whether @cc, finished, was kept for the next call (RPCRDMA__CLNT_SPARE_CALLS). */
static bool keep_spare(struct rpcrdma_client *c, struct client_call *cc)
{
#if RPCRDMA__CLNT_SPARE_CALLS
	if (c->nspare_calls < RPCRDMA__CLNT_SPARE_CALLS) {
		cc->table_next = c->spare_calls;
		c->spare_calls = cc;
		c->nspare_calls++;
		return true;
	}
#else
	(void)c;
	(void)cc;
#endif
	return false;
}

/* Fill the outputs, free our state, run done().  @cc is detached. */
void rpcrdma__clnt_finish(struct client_call *cc, int status)
{
	struct rpcrdma_call *call = cc->call;

	call->status = status;
	call->xid = cc->req.xid;
	call->priv[0] = NULL;
	/* The detail goes with the status it explains; rpcrdma_call_strerror()
	 * ignores it under any other. */
	cc->req.cause.status = status;
	rpcrdma__call_cause_store(call, cc->req.cause.kind ? &cc->req.cause : NULL);
	if (!keep_spare(cc->clnt, cc))
		free(cc);
	call->done(call, call->ctx);
}

void rpcrdma__clnt_fail_call(struct rpcrdma_client *c, struct client_call *cc, int status)
{
	if (park_fencing(c, cc, detach(c, cc, true), status))
		return;
	finish(cc, status);
}

#define fail_call rpcrdma__clnt_fail_call

/* Time-outs and the transports' callbacks about calls. */

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
	    (c->last_err == RPCRDMA_ERR_NOT_RDMA_PEER || c->last_err == RPCRDMA_ERR_NOT_TCP_PEER)) {
		fail_call(c, cc, c->last_err);
	} else {
		cc->req.cause = (struct rpcrdma__call_cause){
		    .kind = RPCRDMA__CAUSE_TIMEDOUT,
		    .a = (uint32_t)(cc->call->timeout_ms ? cc->call->timeout_ms
							 : c->opts.timeout_ms),
		    .b = cc->sent_once,
		    .code = (uint32_t)(c->last_err < 0 ? -c->last_err : 0),
		};
		fail_call(c, cc, RPCRDMA_ERR_TIMEDOUT);
	}
	leave(c);
}

/* Only the connection a call is out on may answer it: req->tpriv is that
 * transport's. */
struct rpcrdma__creq *rpcrdma__clnt_on_find(void *ctx, uint32_t xid)
{
	struct rpcrdma__clnt_conn *k = ctx;
	struct client_call *cc = table_find(k->clnt, xid);

	return cc && cc->state == CC_SENT && cc->conn == k ? &cc->req : NULL;
}

void rpcrdma__clnt_on_reply(void *ctx, struct rpcrdma__creq *req, struct rpcrdma_xdr_stream *msg)
{
	struct rpcrdma__clnt_conn *k = ctx;
	struct rpcrdma_client *c = k->clnt;
	struct client_call *cc = req->core;
	struct rpcrdma_call *call = cc->call;
	uint32_t where = RPCRDMA__CAUSE_AT_HEADER;
	bool not_reply;
	int rc;

	k->answered = true; /* the server is serving: a cut now reconnects at once */
	enter(c);
	detach(c, cc, false);
	/* Straight into call->reply, zeroed when the call began. */
	rc = rpcrdma__rpc_decode_reply(msg, &call->reply, &not_reply);
	if (not_reply)
		where = RPCRDMA__CAUSE_AT_NOT_REPLY;
	if (rc == 0) {
		if (call->reply.stat != RPCRDMA_RPC_MSG_ACCEPTED ||
		    call->reply.accept_stat != RPCRDMA_RPC_SUCCESS) {
			rc = RPCRDMA_ERR_RPC_REJECTED;
		} else if (call->decode_res) {
			where = RPCRDMA__CAUSE_AT_RESULTS;
			rc = call->decode_res(msg, call->res);
		}
	}
	if (rc && rc != RPCRDMA_ERR_RPC_REJECTED)
		cc->req.cause = (struct rpcrdma__call_cause){
		    .kind = RPCRDMA__CAUSE_BAD_REPLY,
		    .code = where,
		    .a = (uint32_t)rpcrdma_xdr_pos(msg),
		    .b = (uint32_t)msg->len,
		};
	call->status = rc; /* finish() sets it too; rpcrdma_call_strerror() reads it */
	if (rc == RPCRDMA_ERR_RPC_REJECTED)
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, cc->req.conn_id, cc->req.xid,
			       rc, call->reply.stat, "call refused: %s",
			       rpcrdma_call_strerror(call));
	else if (rc)
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, cc->req.conn_id, cc->req.xid,
			       rc, rpcrdma_xdr_pos(msg), "reply refused at byte %zu of the RPC message: %s",
			       rpcrdma_xdr_pos(msg), rpcrdma_strerror(rc));
	finish(cc, rc);
	leave(c);
}

void rpcrdma__clnt_on_failed(void *ctx, struct rpcrdma__creq *req, int err)
{
	struct rpcrdma_client *c = ((struct rpcrdma__clnt_conn *)ctx)->clnt;

	enter(c);
	detach(c, req->core, false);
	finish(req->core, err);
	leave(c);
}

void rpcrdma__clnt_on_aborted(void *ctx, struct rpcrdma__creq *req)
{
	struct rpcrdma_client *c = ((struct rpcrdma__clnt_conn *)ctx)->clnt;
	struct client_call *cc = req->core;

	if (!cc || cc->state != CC_FENCING)
		return;
	call_list_remove(cc);
	enter(c);
	finish(cc, cc->fence_status);
	leave(c);
}

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

static in_port_t sockaddr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_port;
	if (ss->ss_family == AF_INET6)
		return ((const struct sockaddr_in6 *)ss)->sin6_port;
	return 0;
}

/* Takes @opts (NULL: the defaults) with its zeros replaced by defaults;
 * -EINVAL for values no transport accepts. */
static int opts_take(const struct rpcrdma_client_opts *opts, struct rpcrdma_client_opts *o,
		     const char *what)
{
	if (opts)
		*o = *opts;
	else
		rpcrdma_client_opts_default(o);
	if (o->cred && o->cred->len > RPCRDMA_AUTH_BODY_MAX) {
		RPCRDMA__TRACE_BAD_ARG(-EINVAL, "%s.cred: a body of %u bytes, above %u", what,
				       o->cred->len, RPCRDMA_AUTH_BODY_MAX);
		return -EINVAL;
	}
	if (o->timeout_ms < -1) {
		RPCRDMA__TRACE_BAD_ARG(-EINVAL, "%s.timeout_ms = %d: below -1 (-1: none, 0: %d)",
				       what, o->timeout_ms, DEFAULT_TIMEOUT_MS);
		return -EINVAL;
	}
	/* Every reply would close the connection, until the retries ran out. */
	if (o->max_record && o->max_record < RPCRDMA_CLIENT_MAX_RECORD_MIN) {
		RPCRDMA__TRACE_BAD_ARG(-EINVAL,
				       "%s.max_record = %u: below %u (the smallest reply; 0: "
				       "the default)",
				       what, o->max_record, RPCRDMA_CLIENT_MAX_RECORD_MIN);
		return -EINVAL;
	}
	if (o->nconnect > RPCRDMA_NCONNECT_MAX) {
		RPCRDMA__TRACE_BAD_ARG(RPCRDMA_ERR_NCONNECT, "%s.nconnect = %u: above %u", what,
				       o->nconnect, RPCRDMA_NCONNECT_MAX);
		return RPCRDMA_ERR_NCONNECT;
	}
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
	rpcrdma__list_init(&c->failed);
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
	rc = opts_take(opts, &o, "rpcrdma_client_opts");
	if (rc)
		return rc;
	rc = rpcrdma__clnt_ops_for(o.transport, &ops);
	if (rc == -EINVAL)
		RPCRDMA__TRACE_BAD_ARG(rc, "rpcrdma_client_opts.transport = %d: not a transport",
				       (int)o.transport);
	if (rc)
		return rc;
	rc = rpcrdma__resolve(host, service ? service : "0", false, &ss, &sslen);
	if (!rc && !service)
		rc = rpcrdma__rpcbind_port(loop, prog, vers, o.transport, &ss);
	/* No server listens there: each call would only fail with
	 * ECONNREFUSED, after its retries. */
	if (!rc && service && sockaddr_port(&ss) == 0) {
		RPCRDMA__TRACE_BAD_ARG(RPCRDMA_ERR_NO_SERVICE,
				       "client service \"%s\": port 0, where no server listens",
				       service);
		rc = RPCRDMA_ERR_NO_SERVICE;
	}
	if (rc)
		return rc;
	c = client_alloc(loop, ops, prog, vers, &o);
	if (!c)
		return -ENOMEM;
	rc = rpcrdma__clnt_conns_create(c, (struct sockaddr *)&ss, sslen);
	if (rc) {
		free(c);
		return rc;
	}
	rpcrdma__loop_ref(loop);
	*out = c;
	return 0;
}

/* A call not completed: sent, queued, or pinned to a connection. */
static struct client_call *first_waiting(struct rpcrdma_client *c)
{
	if (!rpcrdma__list_empty(&c->sent))
		return first_call(&c->sent);
	if (!rpcrdma__list_empty(&c->queued))
		return first_call(&c->queued);
	for (unsigned int i = 0; i < c->nconn; i++) {
		if (!rpcrdma__list_empty(&c->conns[i].pinned))
			return first_call(&c->conns[i].pinned);
	}
	return NULL;
}

void rpcrdma_client_destroy(struct rpcrdma_client *c)
{
	struct rpcrdma__list doomed;
	struct client_call *cc;

	if (!c || c->destroying || rpcrdma__loop_inherited(c->loop, "rpcrdma_client_destroy"))
		return;
	rpcrdma__list_init(&doomed);
	c->destroying = true;
	enter(c);
	rpcrdma__clnt_conns_stop(c, false);
	while ((cc = first_waiting(c))) {
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
	/* Destroyed from the done() of a call that failed (its send, or its
	 * retries with a lost connection): the others that failed with it
	 * are out of the client already, and complete here with their own
	 * error rather than after we return. */
	while ((cc = first_call(&c->failed))) {
		call_list_remove(cc);
		finish(cc, cc->send_err);
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
	if (call->ddp_buf || !call->ddp_list || call->ddp_count > RPCRDMA_CALL_MAX_WRITE_CHUNKS) {
		RPCRDMA__TRACE_BAD_ARG(-EINVAL,
				       "rpcrdma_call.ddp_count = %u: needs ddp_list, no ddp_buf, "
				       "and at most %u",
				       call->ddp_count, RPCRDMA_CALL_MAX_WRITE_CHUNKS);
		return false;
	}
	for (unsigned int i = 0; i < call->ddp_count; i++) {
		if (call->ddp_list[i].len && !call->ddp_list[i].buf) {
			RPCRDMA__TRACE_BAD_ARG(-EINVAL,
					       "rpcrdma_call.ddp_list[%u]: %zu bytes at a NULL buf", i,
					       call->ddp_list[i].len);
			return false;
		}
	}
	return true;
}

/* Why rpcrdma_client_call_async() refuses @call, for the trace. */
static void call_refused(const struct rpcrdma_call *call)
{
	if (!call->done)
		RPCRDMA__TRACE_BAD_ARG(-EINVAL, "rpcrdma_call.done: NULL");
	else if (call->timeout_ms < -1)
		RPCRDMA__TRACE_BAD_ARG(-EINVAL, "rpcrdma_call.timeout_ms = %d: below -1",
				       call->timeout_ms);
	else if (call->ddp_len && !call->ddp_buf)
		RPCRDMA__TRACE_BAD_ARG(-EINVAL, "rpcrdma_call.ddp_len = %zu with a NULL ddp_buf",
				       call->ddp_len);
}

int rpcrdma_client_call_async(struct rpcrdma_client *c, struct rpcrdma_call *call)
{
	struct client_call *cc;
	int timeout;

	if (!c || !call)
		return -EINVAL;
	if (!call->done || call->timeout_ms < -1 || (call->ddp_len && !call->ddp_buf) ||
	    !ddp_list_valid(call)) {
		call_refused(call);
		return -EINVAL;
	}
	if (c->destroying)
		return -ESHUTDOWN;
	if (c->refusal)
		return c->refusal;
	cc = c->spare_calls;
	if (cc) {
		c->spare_calls = cc->table_next;
		c->nspare_calls--;
		memset(cc, 0, sizeof(*cc));
	} else {
		cc = calloc(1, sizeof(*cc));
		if (!cc)
			return -ENOMEM;
	}
	rpcrdma__list_init(&cc->node);
	cc->call = call;
	cc->clnt = c;
	cc->start_ns = rpcrdma__coarse_now_ns();
	cc->req.xid = new_xid(c);
	cc->req.ddp_buf = call->ddp_buf;
	cc->req.ddp_len = call->ddp_buf ? call->ddp_len : 0;
	cc->req.ddp_list = call->ddp_count ? call->ddp_list : NULL;
	cc->req.ddp_count = call->ddp_count;
	cc->req.max_reply = call->max_reply;
	cc->req.timeout_ms = call->timeout_ms ? call->timeout_ms : c->opts.timeout_ms;
	cc->req.core = cc;
	cc->hint = c->proc_hint[call->proc % HINT_SLOTS];
	cc->state = CC_QUEUED;
	call->status = -EINPROGRESS;
	call->xid = cc->req.xid;
	memset(&call->reply, 0, sizeof(call->reply));
	rpcrdma__call_cause_store(call, NULL); /* an earlier call's detail */
	call->priv[0] = cc;

	cc->table_next = c->table[cc->req.xid & (TABLE_SIZE - 1)];
	c->table[cc->req.xid & (TABLE_SIZE - 1)] = cc;
	call_list_append(&c->queued, cc);
	timeout = call->timeout_ms ? call->timeout_ms : c->opts.timeout_ms;
	if (timeout > 0)
		rpcrdma__timer_start(c->loop, &cc->timer, (uint64_t)timeout, on_timeout, cc);
	rpcrdma__clnt_send_now(c, cc);
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
	unsigned int fence_backoff_ms = 0;
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
	 * have completed the call with RPCRDMA_ERR_CANCELLED.  A loop that
	 * fails gives the call up, unless it is given up on already and its
	 * memory still being revoked (CC_FENCING): that one completes from
	 * on_aborted only, so the loop keeps running for the revocation to
	 * finish (the peer could otherwise still reach the caller's buffers,
	 * and the transport would report on a call that is gone).
	 */
	while (!w.done) {
		rc = rpcrdma_loop_run_once(c->loop, -1);
		if (rc >= 0)
			fence_backoff_ms = 0;
		if (rc < 0 && !w.done) {
			struct client_call *cc = call->priv[0];

			if (cc->state == CC_FENCING) {
				/* A loop that fails at once would spin a core
				 * until the fence completes: wait a little
				 * longer each time, at most 100 ms. */
				fence_backoff_ms = fence_backoff_ms ? fence_backoff_ms * 2 : 1;
				if (fence_backoff_ms > 100)
					fence_backoff_ms = 100;
				nanosleep(
				    &(struct timespec){.tv_sec = 0,
						       .tv_nsec = fence_backoff_ms * 1000000L},
				    NULL);
				continue;
			}
			enter(c);
			fail_call(c, cc, rc);
			leave(c);
		}
	}
	call->done = user_done;
	call->ctx = user_ctx;
	return call->status;
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
	rc = opts_take(opts, &o, "rpcrdma_backchannel_opts");
	if (rc)
		return rc;
	c = client_alloc(loop, ops, prog, vers, &o);
	if (!c)
		return -ENOMEM;
	/* One connection: the one a backchannel is bound to. */
	c->nconn = 1;
	rpcrdma__clnt_conn_init(c, 0);
	rc = make(arg, &rpcrdma__clnt_callbacks, &c->conns[0], &c->conns[0].t);
	if (rc) {
		free(c);
		return rc;
	}
	rpcrdma__loop_ref(loop);
	*out = c;
	return 0;
}

bool rpcrdma__client_busy(struct rpcrdma_client *c)
{
	return c && c->busy;
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

void rpcrdma__client_set_next_xid(struct rpcrdma_client *c, uint32_t xid)
{
	if (c)
		c->next_xid = xid;
}
