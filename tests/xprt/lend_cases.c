/*
 * Calls whose Send reads the caller's memory (DDP items lent, see
 * lend_items in clnt_marshal.c) or is still busy when the call's fate is
 * decided: part of xprt_test.c, whose raw responder helpers it reuses.
 * The cases hold back one chosen Send completion of a provider instance
 * (held_send below), so that an ERR_VERS, an abort or a destroy comes
 * while that Send is busy, every run, as a slow wire would make it now
 * and then.  Their checks read the requester's own state (clnt.h).
 */
#include "rpcrdma/mem.h"
#include "xprtrdma/bidir.h"
#include "xprtrdma/clnt.h"

/* A DDP argument large enough to be lent, small enough to go inline. */
#define LENT_ITEM 6000u

/*
 * One provider instance's ops, interposed: the completion of the Send whose
 * context is @ctx is kept back until held_send_release(), and post_send
 * refuses as many Sends as @refusals asks.
 */
static struct {
	struct rpcrdma_provider *p;
	const struct rpcrdma_provider_ops *real;
	struct rpcrdma_provider_ops ops;
	const void *ctx;
	bool held, released, delivered;
	struct rpcrdma_prov_event ev;
	unsigned int refusals;
	int refusal;
} held_send;

static int held_send_poll(struct rpcrdma_provider *p, struct rpcrdma_prov_event *ev,
			  unsigned int max)
{
	int n;

	(void)max;
	if (held_send.released) {
		held_send.released = false;
		held_send.delivered = true;
		*ev = held_send.ev;
		return 1;
	}
	for (;;) {
		/* One at a time, so that nothing is reordered but the Send. */
		n = held_send.real->poll(p, ev, 1);
		if (n != 1 || ev->type != RPCRDMA_PEV_COMPLETION || ev->op != RPCRDMA_POP_SEND ||
		    !held_send.ctx || ev->ctx != held_send.ctx)
			return n;
		held_send.ev = *ev;
		held_send.held = true;
		held_send.ctx = NULL;
	}
}

static int held_send_trywait(struct rpcrdma_provider *p)
{
	/* The loop must not sleep on the fd with a released event here. */
	if (held_send.released)
		return -EAGAIN;
	return held_send.real->trywait(p);
}

static int held_send_post(struct rpcrdma_prov_conn *c, const struct rpcrdma_prov_sge *sgl,
			  unsigned int nsge, unsigned int flags, uint32_t inv_handle, void *ctx)
{
	if (held_send.refusals) {
		held_send.refusals--;
		return held_send.refusal;
	}
	return held_send.real->post_send(c, sgl, nsge, flags, inv_handle, ctx);
}

static void held_send_install(struct rpcrdma_provider *p)
{
	memset(&held_send, 0, sizeof(held_send));
	held_send.p = p;
	held_send.real = p->ops;
	held_send.ops = *p->ops;
	held_send.ops.poll = held_send_poll;
	held_send.ops.trywait = held_send_trywait;
	held_send.ops.post_send = held_send_post;
	p->ops = &held_send.ops;
}

static void held_send_remove(void)
{
	if (held_send.p)
		held_send.p->ops = held_send.real;
	held_send.p = NULL;
}

/* Holds back the completion of @x's next Send, posted or about to be. */
static void held_send_target(const struct rpcrdma__xreq *x)
{
	held_send.ctx = &x->send_op;
	held_send.held = held_send.delivered = false;
}

static void held_send_release(void)
{
	held_send.released = held_send.held;
	held_send.held = false;
}

/*
 * A fake client core that, unlike harness.c's, can be told later that a
 * call it gave up on ended (cb->aborted): the engine lends only to such a
 * core.  The calls are harness tcalls, with the raw responder's replies
 * (raw_reply_vers) checked by XID and status only.
 */
struct lend_core {
	struct tclient tc;
	unsigned int aborted;
};

static struct rpcrdma__creq *lend_find(void *ctx, uint32_t xid)
{
	struct lend_core *lc = ctx;

	for (struct tcall *c = lc->tc.calls; c; c = c->next) {
		if (c->req.xid == xid && c->state == TC_SENT)
			return &c->req;
	}
	return NULL;
}

static void lend_reply(void *ctx, struct rpcrdma__creq *req, struct rpcrdma_xdr_stream *msg)
{
	struct lend_core *lc = ctx;
	struct tcall *call = req->core;
	uint32_t xid, status;
	int rc;

	call->state = TC_DONE;
	lc->tc.done++;
	rc = rpcrdma_xdr_decode_u32(msg, &xid);
	rc = rc ? rc : rpcrdma_xdr_decode_u32(msg, &status);
	if (!rc && (xid != req->xid || status))
		rc = -EBADMSG;
	call->status = rc;
	lc->tc.bad += rc != 0;
}

static void lend_failed(void *ctx, struct rpcrdma__creq *req, int err)
{
	struct lend_core *lc = ctx;
	struct tcall *call = req->core;

	call->state = TC_DONE;
	call->status = call->failed_err = err;
	lc->tc.failed++;
}

static void lend_connected(void *ctx)
{
	struct lend_core *lc = ctx;

	lc->tc.up = true;
	lc->tc.connects++;
}

static void lend_disconnected(void *ctx, int err)
{
	struct lend_core *lc = ctx;

	lc->tc.up = false;
	lc->tc.disconnects++;
	lc->tc.last_err = err;
	lc->tc.grants_live_at_disconnect = grants_live(rpcrdma__xprt_clnt_provider(lc->tc.t));
	for (struct tcall *c = lc->tc.calls; c; c = c->next) {
		if (c->state == TC_SENT)
			c->state = TC_NEW;
	}
}

static void lend_writable(void *ctx)
{
	struct lend_core *lc = ctx;

	lc->tc.writables++;
}

static void lend_aborted(void *ctx, struct rpcrdma__creq *req)
{
	struct lend_core *lc = ctx;

	(void)req;
	lc->aborted++;
}

static const struct rpcrdma__clnt_cb lend_cb = {
    .find = lend_find,
    .reply = lend_reply,
    .failed = lend_failed,
    .connected = lend_connected,
    .disconnected = lend_disconnected,
    .writable = lend_writable,
    .aborted = lend_aborted,
};

static int lend_core_open(struct env *e, struct lend_core *lc, int port, uint32_t max_vers)
{
	struct rpcrdma_client_opts o;
	struct sockaddr_in sin = loopback(port);

	memset(lc, 0, sizeof(*lc));
	lc->tc.env = e;
	lc->tc.next_xid = rnd();
	memset(&o, 0, sizeof(o));
	o.provider = test_provider;
	o.inline_send = o.inline_recv = TEST_INLINE;
	o.max_vers = max_vers;
	CHECK_OK(rpcrdma__rdma_clnt_ops.create(e->loop, (struct sockaddr *)&sin, sizeof(sin), &o,
					       &lend_cb, lc, &lc->tc.t));
	CHECK_OK(rpcrdma__rdma_clnt_ops.connect(lc->tc.t));
	WAIT(e, lc->tc.up || lc->tc.disconnects);
	CHECK(lc->tc.up);
	return 0;
}

/* A raw responder that takes TEST_INLINE both ways and speaks whatever
 * version it is sent (its answers are written by hand). */
static int lend_raw_server(struct env *e, struct raw *srv, int *port)
{
	size_t n = rpcrdma__xconn_private(TEST_INLINE, TEST_INLINE, false, raw_pd, sizeof(raw_pd));

	CHECK_OK(raw_open(e, srv, 0));
	srv->accept_pd = raw_pd;
	srv->accept_pdlen = n;
	CHECK_OK(raw_listen(srv, port));
	return 0;
}

/* The next message the raw responder got: a call with @xid in @vers. */
static int lend_expect_call(struct raw *srv, uint32_t xid, uint32_t vers)
{
	struct rpcrdma_hdr_fault f;
	struct rpcrdma_hdr h;
	struct raw_msg *m = raw_wait_msg(srv);

	CHECK(m);
	CHECK_OK(rpcrdma_hdr_decode(m->data, m->len, NULL, &h, &f));
	CHECK_RC(h.xid, xid);
	CHECK_RC(h.vers, vers);
	CHECK_RC(h.proc, RPCRDMA_PROC_MSG);
	return 0;
}

/* Each request on @t's free list is there once, and nfree counts them. */
static int free_list_sound(const struct rpcrdma__xclnt *t)
{
	const struct rpcrdma__xreq *x = t->free;
	unsigned int n;

	for (n = 0; x && n <= t->nfree; n++, x = x->next) {
		const struct rpcrdma__xreq *y = t->free;

		for (unsigned int i = 0; i < n; i++, y = y->next) {
			if (y == x) {
				fprintf(stderr, "request %p at %u and %u of the free list\n",
					(const void *)x, i, n);
				return 1;
			}
		}
	}
	CHECK_RC(n, t->nfree);
	return 0;
}

/* The Version Two probe @probe arrives at the hand-driven server, its
 * Send completion held back; the server answers ERR_VERS (1..1), so the
 * call is to go again in Version One once that Send completed. */
static int probe_held_then_refused(struct env *e, struct raw *srv, struct lend_core *lc,
				   struct tcall *probe)
{
	held_send_target(probe->req.tpriv);
	CHECK_OK(lend_expect_call(srv, probe->req.xid, 2));
	WAIT(e, held_send.held);
	CHECK(held_send.held);
	CHECK_OK(raw_err_vers(srv, probe->req.xid, 2, 1, 1));
	WAIT(e, cstats(&lc->tc).vers_fallbacks == 1);
	CHECK_RC(cstats(&lc->tc).vers_fallbacks, 1);
	return 0;
}

/* A hand-driven server and a requester offering Version Two, with no
 * version remembered for the address from an earlier case. */
static int lend_v2_pair(struct env *e, struct raw *srv, struct lend_core *lc)
{
	int port;

	rpcrdma__vmemo_forget(NULL, 0);
	CHECK_OK(lend_raw_server(e, srv, &port));
	return lend_core_open(e, lc, port, 2);
}

/*
 * Sends a call with one DDP-eligible item of LENT_ITEM bytes, declared with
 * rpcrdma_mem_register so that verbs may lend it too: the call in *callp,
 * the region (for the caller to deregister) in *region, its transport
 * request in *xp.
 */
static int send_declared_item(struct tclient *tc, struct tcall **callp,
			      struct rpcrdma_mem_region **region, struct rpcrdma__xreq **xp)
{
	struct tcall *call = tcall_new(tc, 4, LENT_ITEM, 4, 0, 0, 0, 0);

	CHECK(call);
	CHECK_OK(rpcrdma_mem_register(call->arg, LENT_ITEM, region));
	CHECK_OK(tcall_send(tc, call));
	*callp = call;
	*xp = call->req.tpriv;
	CHECK(*xp);
	return 0;
}

/*
 * The Version Two probe carries a lent item; ERR_VERS comes while its Send
 * is still busy (the call is to go again from the Send's completion), and
 * the core gives up on it before that completion.  The call ends when the
 * Send completes, told by cb->aborted, and its fence is counted once: the
 * next call, on the same request object, ends with no fence live and the
 * connection can still be torn down.  Before 1ee5458 the request went back
 * to the free list still marked to fence after its Send: the next call's
 * Send completion ran a fence nobody started, fences_live wrapped, and a
 * lost connection was never reported.
 */
static int test_lend_err_vers_abort(struct env *e)
{
	struct rpcrdma_mem_region *region = NULL;
	struct rpcrdma__xclnt *t;
	struct rpcrdma__xreq *x;
	struct tcall *probe, *next;
	struct lend_core lc;
	struct raw srv;

	CHECK_OK(lend_v2_pair(e, &srv, &lc));
	t = xclnt_of(lc.tc.t);
	CHECK(t->vneg.probing);
	/* A probe may not exceed 1024 bytes, too few for an item to be lent
	 * (4096 or more), so no probe lends as things stand: the cap is
	 * lifted so that the call ERR_VERS sends back lends all the same. */
	t->conn.thr.send_max = TEST_INLINE;
	held_send_install(rpcrdma__xprt_clnt_provider(lc.tc.t));

	CHECK_OK(send_declared_item(&lc.tc, &probe, &region, &x));
	CHECK(x->lent);
	CHECK_RC(cstats(&lc.tc).inline_zero_copy_bytes, LENT_ITEM);
	CHECK_OK(probe_held_then_refused(e, &srv, &lc, probe));
	CHECK(x->resend_pending && !x->in_table && x->send_busy);
	/* Given up on: the Send still reads the caller's memory. */
	CHECK_RC(rpcrdma__rdma_clnt_ops.call_abort(lc.tc.t, &probe->req), 1);
	probe->state = TC_NEW;
	held_send_release();
	WAIT(e, lc.aborted == 1);
	CHECK_RC(lc.aborted, 1);
	CHECK(held_send.delivered);
	CHECK_RC(t->fences_live, 0);
	CHECK_RC(t->norphans, 0);

	next = tcall_new(&lc.tc, 4, 0, 0, 0, 0, 0, 0);
	CHECK(next);
	CHECK_OK(tcall_send(&lc.tc, next));
	/* The free list gives back the probe's request: what it kept of the
	 * probe is what this call would trip over. */
	CHECK(next->req.tpriv == x);
	CHECK_OK(lend_expect_call(&srv, next->req.xid, 1));
	CHECK_OK(raw_reply_vers(&srv, next->req.xid, 1, 8));
	WAIT(e, next->state == TC_DONE && t->conn.sq_used == 0);
	CHECK_RC(next->state, TC_DONE);
	CHECK_OK(next->status);
	CHECK_RC(t->conn.sq_used, 0);
	CHECK_RC(t->fences_live, 0);
	CHECK(!x->fence_after_send);

	/* The core hears of a lost connection once every fence ended. */
	rpcrdma__rdma_clnt_ops.disconnect(lc.tc.t);
	WAIT(e, lc.tc.disconnects == 1);
	CHECK_RC(lc.tc.disconnects, 1);
	CHECK_RC(lc.tc.bad, 0);

	held_send_remove();
	CHECK_OK(rpcrdma_mem_deregister(region));
	tclient_close(&lc.tc);
	raw_close(&srv);
	rpcrdma__vmemo_forget(NULL, 0);
	return 0;
}

/*
 * ERR_VERS comes while the probe's Send is busy, and when that Send
 * completes the call cannot go again: the provider's send queue is full.
 * The call fails (cb->failed, with the provider's error) and its request
 * goes back to the free list once; two calls begun afterwards get two
 * requests and are both answered.  Before 1ee5458 the Send completion,
 * after the failed resend had freed the request, freed it again: it sat
 * on the free list twice (linked to itself), and the next two calls shared
 * it.
 */
static int test_err_vers_resend_refused(struct env *e)
{
	struct rpcrdma__xclnt *t;
	struct rpcrdma__xreq *x;
	struct tcall *probe, *c1, *c2;
	struct lend_core lc;
	struct raw srv;

	CHECK_OK(lend_v2_pair(e, &srv, &lc));
	t = xclnt_of(lc.tc.t);
	held_send_install(rpcrdma__xprt_clnt_provider(lc.tc.t));

	/* No chunks: nothing to revoke, so the fence of a failed resend
	 * ends, and frees the request, inside the Send's completion. */
	probe = tcall_new(&lc.tc, 4, 0, 0, 0, 0, 0, 0);
	CHECK(probe);
	CHECK_OK(tcall_send(&lc.tc, probe));
	x = probe->req.tpriv;
	CHECK(x);
	CHECK_RC(x->ngrants, 0);
	CHECK_OK(probe_held_then_refused(e, &srv, &lc, probe));
	CHECK(x->resend_pending);
	held_send.refusals = 1;
	held_send.refusal = -EAGAIN;
	held_send_release();
	WAIT(e, probe->state == TC_DONE);
	CHECK_RC(probe->state, TC_DONE);
	CHECK_RC(probe->failed_err, -EAGAIN);
	CHECK_RC(held_send.refusals, 0);
	CHECK_OK(free_list_sound(t));
	CHECK_RC(t->fences_live, 0);

	c1 = tcall_new(&lc.tc, 4, 0, 0, 0, 0, 0, 0);
	c2 = tcall_new(&lc.tc, 8, 0, 0, 0, 0, 0, 0);
	CHECK(c1 && c2);
	CHECK_OK(tcall_send(&lc.tc, c1));
	CHECK_OK(tcall_send(&lc.tc, c2));
	CHECK(c1->req.tpriv != c2->req.tpriv);
	CHECK_OK(lend_expect_call(&srv, c1->req.xid, 1));
	CHECK_OK(lend_expect_call(&srv, c2->req.xid, 1));
	CHECK_OK(raw_reply_vers(&srv, c2->req.xid, 1, 8));
	CHECK_OK(raw_reply_vers(&srv, c1->req.xid, 1, 8));
	WAIT(e, c1->state == TC_DONE && c2->state == TC_DONE && t->conn.sq_used == 0);
	CHECK_OK(c1->status);
	CHECK_OK(c2->status);
	CHECK_RC(lc.tc.failed, 1);
	CHECK_RC(lc.tc.disconnects, 0);
	CHECK_RC(t->fences_live, 0);
	CHECK_OK(free_list_sound(t));

	held_send_remove();
	tclient_close(&lc.tc);
	raw_close(&srv);
	rpcrdma__vmemo_forget(NULL, 0);
	return 0;
}

/*
 * ERR_VERS answers the Version Two probe while its Send is still busy, so
 * the call waits out of the table to go again in Version One from that
 * Send's completion; then the responder drops the connection before the
 * completion comes.  The waiting call is fenced and forgotten like those
 * in the table: when the core hears of the loss none of its grants (a
 * Write chunk) is live and the core's call is let go.  The late completion
 * then posts nothing and tells the core nothing, whether it comes while no
 * connection is up or, with @reconnect_first, once the next one is (the
 * old Send, and grants made for the old connection, must not go out on
 * it).  The core sends the call again, in Version One, and it is
 * answered.  Before the fix the lost connection fenced only the table:
 * the Write chunk's grant outlived the connection, and the completion
 * resent the old Send on the new connection, or failed it with
 * cb->failed, a call the core had already taken back.
 */
static int err_vers_resend_conn_lost(struct env *e, bool reconnect_first)
{
	struct rpcrdma__xclnt *t;
	struct rpcrdma__xreq *x;
	struct tcall *probe;
	struct lend_core lc;
	struct raw srv;

	CHECK_OK(lend_v2_pair(e, &srv, &lc));
	t = xclnt_of(lc.tc.t);
	held_send_install(rpcrdma__xprt_clnt_provider(lc.tc.t));
	probe = tcall_new(&lc.tc, 4, 0, 0, 0, 0, 64, 0);
	CHECK(probe);
	CHECK_OK(tcall_send(&lc.tc, probe));
	x = probe->req.tpriv;
	CHECK(x);
	CHECK(x->ngrants >= 1);
	CHECK_OK(probe_held_then_refused(e, &srv, &lc, probe));
	CHECK(x->resend_pending && !x->in_table && x->send_busy);

	(void)rpcrdma__provider_disconnect(srv.c);
	WAIT(e, lc.tc.disconnects == 1);
	CHECK_RC(lc.tc.disconnects, 1);
	CHECK_RC(lc.tc.grants_live_at_disconnect, 0);
	CHECK(!probe->req.tpriv);
	CHECK_RC(probe->state, TC_NEW);

	if (reconnect_first) {
		CHECK_OK(raw_server_reset(e, &srv, &lc.tc));
		CHECK_OK(rpcrdma__rdma_clnt_ops.connect(lc.tc.t));
		WAIT(e, lc.tc.up);
		CHECK(lc.tc.up);
	}
	held_send_release();
	WAIT(e, held_send.delivered);
	CHECK(held_send.delivered);
	for (int i = 0; i < 20; i++)
		pump(e);
	CHECK_RC(lc.tc.failed, 0);
	CHECK_RC(srv.nmsgs, srv.taken);
	CHECK_RC(t->conn.sq_used, 0);
	CHECK_RC(t->fences_live, 0);
	CHECK_OK(free_list_sound(t));
	if (!reconnect_first) {
		CHECK_OK(raw_server_reset(e, &srv, &lc.tc));
		CHECK_OK(rpcrdma__rdma_clnt_ops.connect(lc.tc.t));
		WAIT(e, lc.tc.up);
		CHECK(lc.tc.up);
	}

	/* The peer is remembered as Version One: the call goes in One. */
	CHECK_OK(tcall_send(&lc.tc, probe));
	CHECK_OK(lend_expect_call(&srv, probe->req.xid, 1));
	CHECK_OK(raw_reply_vers(&srv, probe->req.xid, 1, 8));
	WAIT(e, probe->state == TC_DONE && t->conn.sq_used == 0);
	CHECK_RC(probe->state, TC_DONE);
	CHECK_OK(probe->status);
	CHECK_RC(lc.tc.failed, 0);
	CHECK_RC(lc.tc.bad, 0);
	CHECK_RC(t->conn.sq_used, 0);
	CHECK_RC(grants_live(rpcrdma__xprt_clnt_provider(lc.tc.t)), 0);

	held_send_remove();
	tclient_close(&lc.tc);
	raw_close(&srv);
	rpcrdma__vmemo_forget(NULL, 0);
	return 0;
}

static int test_err_vers_resend_conn_lost(struct env *e)
{
	return err_vers_resend_conn_lost(e, false);
}

static int test_err_vers_resend_next_conn(struct env *e)
{
	return err_vers_resend_conn_lost(e, true);
}

/* The case unbinds the requester itself, before the connection goes. */
static void lend_bc_down(void *bc)
{
	(void)bc;
}

/*
 * The server's reverse requester (RFC 8167) never lends: the backchannel
 * lets go of its calls (unbind, destroy) while the owner's connection, and
 * a Send reading the caller's memory, would live on.  A reverse call with
 * an item in declared memory is copied; the core gives up on it while its
 * Send is busy and lets go of the requester as the backchannel's release
 * does; the Send completes after, and the requester tells nobody.  (With
 * lending, before 1ee5458, this called the cb->aborted of the callbacks a
 * destroyed requester gets, which had none: a jump to address 0.)
 */
static int test_partner_never_lends(struct env *e)
{
	struct rpcrdma_mem_region *region = NULL;
	struct rpcrdma__xreq *x;
	struct tcall *fwd_call, *rev;
	struct lend_core lc;
	struct tserver ts;
	struct tclient fwd;
	void *conn;

	CHECK_OK(tserver_open(e, &ts, NULL));
	ts.hold = true;
	CHECK_OK(tclient_open(e, &fwd, ts.port, NULL));
	fwd_call = tcall_new(&fwd, 4, 0, 0, 0, 0, 0, 0);
	CHECK(fwd_call);
	CHECK_OK(tcall_send(&fwd, fwd_call));
	WAIT(e, ts.nheld == 1);
	CHECK_RC(ts.nheld, 1);
	conn = rpcrdma__bc_req_conn(ts.held[0].sreq);
	CHECK(conn);

	memset(&lc, 0, sizeof(lc));
	lc.tc.env = e;
	lc.tc.next_xid = rnd();
	CHECK_OK(rpcrdma__bc_req_create(rpcrdma__bc_conn_home(conn), 0, &lend_cb, &lc, &lc.tc.t));
	CHECK_OK(rpcrdma__bc_bind(conn, lc.tc.t, lend_bc_down, &lc));
	CHECK_OK(rpcrdma__rdma_bc_clnt_ops.connect(lc.tc.t));
	WAIT(e, lc.tc.up);
	CHECK(lc.tc.up);
	CHECK(xclnt_of(lc.tc.t)->dev.prov == rpcrdma__xprt_svc_provider(ts.t));
	held_send_install(rpcrdma__xprt_svc_provider(ts.t));

	CHECK_OK(send_declared_item(&lc.tc, &rev, &region, &x));
	CHECK(!x->lent);
	CHECK_RC(cstats(&lc.tc).inline_zero_copy_bytes, 0);
	held_send_target(x);
	WAIT(e, held_send.held);
	CHECK(held_send.held);

	/* Nothing of the caller's is read any more: given back at once. */
	CHECK_RC(rpcrdma__rdma_bc_clnt_ops.call_abort(lc.tc.t, &rev->req), 0);
	rev->state = TC_NEW;
	rpcrdma__bc_unbind(conn, lc.tc.t);
	rpcrdma__rdma_bc_clnt_ops.destroy(lc.tc.t);
	lc.tc.t = NULL;
	held_send_release();
	WAIT(e, held_send.delivered);
	CHECK(held_send.delivered);
	/* The requester's teardown, which waited for that Send, runs from
	 * a timer: give it its turns. */
	for (int i = 0; i < 20; i++)
		pump(e);
	/* The core that let go hears nothing more. */
	CHECK_RC(lc.aborted, 0);

	held_send_remove();
	CHECK_OK(rpcrdma_mem_deregister(region));
	tclient_close(&lc.tc);
	tclient_close(&fwd);
	tserver_close(&ts);
	return 0;
}
