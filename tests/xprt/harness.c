/*
 * The test harness of harness.h: fake cores on both sides of the engine,
 * and a raw provider-level peer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint8_t pattern(uint32_t seed, size_t i)
{
	uint32_t x = seed * 2654435761u + (uint32_t)i * 40503u + (uint32_t)(i >> 11);

	return (uint8_t)(x ^ (x >> 13) ^ (x >> 24));
}

void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pattern(seed, i);
}

size_t mismatches(const uint8_t *p, size_t n, uint32_t seed)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++)
		bad += p[i] != pattern(seed, i);
	return bad;
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state >> 16);
}

void pump(struct env *e)
{
	(void)rpcrdma_loop_run_once(e->loop, 2);
	for (int i = 0; i < 2; i++) {
		if (e->raws[i])
			raw_poll(e->raws[i]);
	}
}

uint64_t grants_live(struct rpcrdma_provider *p)
{
	struct rpcrdma_prov_stats st;

	rpcrdma__provider_stats(p, &st);
	return st.grants_live;
}

const char *test_provider = "ofi";
const char *test_addr = "127.0.0.1";
const char *test_peer_addr; /* NULL: test_addr */

static struct sockaddr_in sockaddr_of(const char *addr, int port)
{
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sin;
}

/* The address servers listen on and clients connect to (IPv4). */
struct sockaddr_in loopback(int port)
{
	return sockaddr_of(test_addr, port);
}

/*
 * Messages.
 */
int encode_test_call(struct rpcrdma_xdr_stream *xdr, uint32_t xid, uint32_t seed, uint32_t pre,
		     uint32_t arg, uint32_t post, uint32_t rddp, uint32_t rplain)
{
	uint8_t *a = malloc(pre + 1), *b = malloc(arg + 1), *c = malloc(post + 1);
	int rc = -ENOMEM;

	if (a && b && c) {
		fill(a, pre, seed ^ 1);
		fill(b, arg, seed ^ 2);
		fill(c, post, seed ^ 3);
		rc = rpcrdma_xdr_encode_u32(xdr, xid);
		rc = rc ? rc : rpcrdma_xdr_encode_u32(xdr, TEST_MAGIC);
		rc = rc ? rc : rpcrdma_xdr_encode_u32(xdr, seed);
		rc = rc ? rc : rpcrdma_xdr_encode_u32(xdr, rddp);
		rc = rc ? rc : rpcrdma_xdr_encode_u32(xdr, rplain);
		rc = rc ? rc : rpcrdma_xdr_encode_opaque(xdr, a, pre);
		rc = rc ? rc : rpcrdma_xdr_encode_opaque(xdr, b, arg);
		rc = rc ? rc : rpcrdma_xdr_encode_opaque(xdr, c, post);
	}
	free(a);
	free(b);
	free(c);
	return rc;
}

/*
 * The fake client core.
 */
static struct rpcrdma__creq *c_find(void *ctx, uint32_t xid)
{
	struct tclient *tc = ctx;

	for (struct tcall *c = tc->calls; c; c = c->next) {
		if (c->req.xid == xid && c->state == TC_SENT)
			return &c->req;
	}
	return NULL;
}

static void c_reply(void *ctx, struct rpcrdma__creq *req, struct rpcrdma_xdr_stream *msg)
{
	struct tclient *tc = ctx;
	struct tcall *call = req->core;
	uint32_t xid, status, len;
	uint8_t *plain;
	int rc;

	call->grants_live_at_done = grants_live(rpcrdma__xprt_clnt_provider(tc->t));
	call->state = TC_DONE;
	tc->done++;
	rc = rpcrdma_xdr_decode_u32(msg, &xid);
	rc = rc ? rc : rpcrdma_xdr_decode_u32(msg, &status);
	if (rc || xid != req->xid) {
		call->status = rc ? rc : -EBADMSG;
		tc->bad++;
		return;
	}
	if (status) {
		call->status = -EILSEQ; /* the server saw bad bytes */
		tc->bad++;
		return;
	}
	if (call->ddp_buf) {
		rc = rpcrdma_xdr_decode_ddp(msg, call->ddp_buf, (uint32_t)call->ddp_cap, &len);
		if (rc || len != call->rddp_len || mismatches(call->ddp_buf, len, call->seed ^ 4)) {
			call->status = rc ? rc : -EILSEQ;
			tc->bad++;
			return;
		}
	} else {
		uint8_t *tmp = malloc(call->rddp_len + 1);

		rc = tmp ? rpcrdma_xdr_decode_ddp(msg, tmp, call->rddp_len, &len) : -ENOMEM;
		if (!rc && (len != call->rddp_len || mismatches(tmp, len, call->seed ^ 4)))
			rc = -EILSEQ;
		free(tmp);
		if (rc) {
			call->status = rc;
			tc->bad++;
			return;
		}
	}
	plain = malloc(call->rplain_len + 1);
	rc = plain ? rpcrdma_xdr_decode_opaque(msg, plain, call->rplain_len, &len) : -ENOMEM;
	if (!rc && (len != call->rplain_len || mismatches(plain, len, call->seed ^ 5)))
		rc = -EILSEQ;
	free(plain);
	if (!rc && rpcrdma_xdr_remaining(msg))
		rc = -EMSGSIZE;
	if (rc)
		tc->bad++;
	call->status = rc;
}

static void c_failed(void *ctx, struct rpcrdma__creq *req, int err)
{
	struct tclient *tc = ctx;
	struct tcall *call = req->core;

	call->grants_live_at_done = grants_live(rpcrdma__xprt_clnt_provider(tc->t));
	call->state = TC_DONE;
	call->failed_err = err;
	call->status = err;
	tc->failed++;
}

static void c_connected(void *ctx)
{
	struct tclient *tc = ctx;

	tc->up = true;
	tc->connects++;
}

static void c_disconnected(void *ctx, int err)
{
	struct tclient *tc = ctx;

	tc->up = false;
	tc->disconnects++;
	tc->last_err = err;
	tc->grants_live_at_disconnect = grants_live(rpcrdma__xprt_clnt_provider(tc->t));
	/* The core forgets its calls in flight: they are no longer "sent". */
	for (struct tcall *c = tc->calls; c; c = c->next) {
		if (c->state == TC_SENT)
			c->state = TC_NEW;
	}
}

static void c_writable(void *ctx)
{
	struct tclient *tc = ctx;

	tc->writables++;
}

static const struct rpcrdma__clnt_cb client_cb = {
    .find = c_find,
    .reply = c_reply,
    .failed = c_failed,
    .connected = c_connected,
    .disconnected = c_disconnected,
    .writable = c_writable,
};

int tclient_open(struct env *e, struct tclient *tc, int port,
		 const struct rpcrdma_client_opts *opts)
{
	struct rpcrdma_client_opts o;
	struct sockaddr_in sin = loopback(port);
	int rc;

	memset(tc, 0, sizeof(*tc));
	tc->env = e;
	tc->next_xid = rnd();
	memset(&o, 0, sizeof(o));
	if (opts)
		o = *opts;
	else
		o.inline_send = o.inline_recv = TEST_INLINE;
	if (!o.provider)
		o.provider = test_provider;
	rc = rpcrdma__rdma_clnt_ops.create(e->loop, (struct sockaddr *)&sin, sizeof(sin), &o,
					   &client_cb, tc, &tc->t);
	if (rc)
		return rc;
	rc = rpcrdma__rdma_clnt_ops.connect(tc->t);
	if (rc)
		return rc;
	WAIT(e, tc->up || tc->disconnects);
	return tc->up ? 0 : (tc->last_err ? tc->last_err : -ETIMEDOUT);
}

void tclient_close(struct tclient *tc)
{
	struct tcall *c;

	if (tc->t)
		rpcrdma__rdma_clnt_ops.destroy(tc->t);
	tc->t = NULL;
	while ((c = tc->calls)) {
		tc->calls = c->next;
		c->next = NULL;
		tcall_free(c);
	}
}

struct tcall *tcall_new(struct tclient *tc, uint32_t pre, uint32_t arg, uint32_t post,
			uint32_t rddp, uint32_t rplain, size_t ddp_cap, size_t max_reply)
{
	struct tcall *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->seed = rnd();
	c->pre_len = pre;
	c->arg_len = arg;
	c->post_len = post;
	c->rddp_len = rddp;
	c->rplain_len = rplain;
	c->pre = malloc(pre + 1);
	c->arg = malloc(arg + 1);
	c->post = malloc(post + 1);
	fill(c->pre, pre, c->seed ^ 1);
	fill(c->arg, arg, c->seed ^ 2);
	fill(c->post, post, c->seed ^ 3);
	if (ddp_cap) {
		c->ddp_buf = malloc(ddp_cap);
		memset(c->ddp_buf, 0xee, ddp_cap);
		c->ddp_cap = ddp_cap;
	}
	c->max_reply = max_reply;
	c->req.xid = tc->next_xid++;
	c->req.core = c;
	c->next = tc->calls;
	tc->calls = c;
	return c;
}

void tcall_free(struct tcall *c)
{
	free(c->pre);
	free(c->arg);
	free(c->post);
	free(c->ddp_buf);
	free(c);
}

int tcall_send(struct tclient *tc, struct tcall *call)
{
	struct rpcrdma_xdr_stream *x = &call->req.send;
	int rc;

	call->req.ddp_buf = call->ddp_buf;
	call->req.ddp_len = call->ddp_cap;
	call->req.max_reply = call->max_reply;
	call->req.send_hint = 0;
	for (;;) {
		size_t room;

		rc = rpcrdma__rdma_clnt_ops.call_begin(tc->t, &call->req);
		if (rc)
			return rc;
		room = x->len;
		rc = rpcrdma_xdr_encode_u32(x, call->req.xid);
		rc = rc ? rc : rpcrdma_xdr_encode_u32(x, TEST_MAGIC);
		rc = rc ? rc : rpcrdma_xdr_encode_u32(x, call->seed);
		rc = rc ? rc : rpcrdma_xdr_encode_u32(x, call->rddp_len);
		rc = rc ? rc : rpcrdma_xdr_encode_u32(x, call->rplain_len);
		rc = rc ? rc : rpcrdma_xdr_encode_opaque(x, call->pre, call->pre_len);
		rc = rc ? rc : rpcrdma_xdr_encode_ddp(x, call->arg, call->arg_len);
		rc = rc ? rc : rpcrdma_xdr_encode_opaque(x, call->post, call->post_len);
		if (rc == RPCRDMA_ERR_NOSPACE && call->req.send_hint < room * 4) {
			rpcrdma__rdma_clnt_ops.call_abort(tc->t, &call->req);
			call->req.send_hint = room * 4;
			continue;
		}
		if (rc) {
			rpcrdma__rdma_clnt_ops.call_abort(tc->t, &call->req);
			return rc;
		}
		break;
	}
	call->state = TC_SENT;
	rc = rpcrdma__rdma_clnt_ops.call_send(tc->t, &call->req);
	if (rc)
		call->state = TC_NEW;
	return rc;
}

int tcall_roundtrip(struct tclient *tc, struct tcall *call)
{
	int rc = tcall_send(tc, call);

	if (rc) {
		fprintf(stderr, "call_send: %d\n", rc);
		return rc;
	}
	WAIT(tc->env, call->state == TC_DONE);
	if (call->state != TC_DONE) {
		fprintf(stderr, "call %08x: no answer\n", call->req.xid);
		return -ETIMEDOUT;
	}
	if (call->status)
		fprintf(stderr,
			"call %08x (pre %u arg %u post %u rddp %u rplain %u cap %zu max %zu): "
			"status %d\n",
			call->req.xid, call->pre_len, call->arg_len, call->post_len, call->rddp_len,
			call->rplain_len, call->ddp_cap, call->max_reply, call->status);
	return call->status;
}

/*
 * The fake server core.
 */
static uint32_t check_opaque(struct rpcrdma_xdr_stream *x, uint32_t seed, bool ddp)
{
	uint32_t len;
	uint8_t *buf = malloc(RPCRDMA__XPRT_MAX_MSG);
	uint32_t bad;
	int rc;

	if (!buf)
		return 1;
	if (ddp)
		rc = rpcrdma_xdr_decode_ddp(x, buf, RPCRDMA__XPRT_MAX_MSG, &len);
	else
		rc = rpcrdma_xdr_decode_opaque(x, buf, RPCRDMA__XPRT_MAX_MSG, &len);
	bad = rc ? 1000000 : (uint32_t)mismatches(buf, len, seed);
	free(buf);
	return bad;
}

int tserver_answer(struct tserver *ts, unsigned int i)
{
	struct theld *h = &ts->held[i];
	struct rpcrdma__sreq *sreq = h->sreq;
	uint8_t *d = malloc((size_t)h->rddp_len + 1), *p = malloc((size_t)h->rplain_len + 1);
	int rc;

	h->sreq = NULL;
	if (!d || !p) {
		rpcrdma__rdma_svc_ops.reply_drop(sreq);
		free(d);
		free(p);
		return -ENOMEM;
	}
	fill(d, h->rddp_len, h->seed ^ 4);
	fill(p, h->rplain_len, h->seed ^ 5);
	sreq->reply_hint = 0;
	for (;;) {
		struct rpcrdma_xdr_stream *x = &sreq->reply;
		size_t room;

		rc = rpcrdma__rdma_svc_ops.reply_begin(sreq);
		if (rc) {
			rpcrdma__rdma_svc_ops.reply_drop(sreq);
			goto out;
		}
		room = x->len;
		rc = rpcrdma_xdr_encode_u32(x, h->xid);
		rc = rc ? rc : rpcrdma_xdr_encode_u32(x, h->errors);
		rc = rc ? rc : rpcrdma_xdr_encode_ddp(x, d, h->rddp_len);
		rc = rc ? rc : rpcrdma_xdr_encode_opaque(x, p, h->rplain_len);
		if (rc == RPCRDMA_ERR_NOSPACE && sreq->reply_hint < room * 4) {
			sreq->reply_hint = room * 4;
			continue;
		}
		break;
	}
	if (rc)
		rpcrdma__rdma_svc_ops.reply_drop(sreq);
	else
		rc = rpcrdma__rdma_svc_ops.reply_send(sreq);
out:
	/* The transport copied what it needed: the buffers go now, as the
	 * real core frees results right after reply_send. */
	memset(d, 0x5a, h->rddp_len);
	free(d);
	free(p);
	return rc;
}

static void s_call(void *ctx, struct rpcrdma__sreq *sreq, struct rpcrdma_xdr_stream *msg)
{
	struct tserver *ts = ctx;
	struct theld *h;
	uint32_t magic;
	int rc;

	ts->calls++;
	if (ts->nheld >= sizeof(ts->held) / sizeof(ts->held[0])) {
		ts->bad++;
		rpcrdma__rdma_svc_ops.reply_drop(sreq);
		return;
	}
	h = &ts->held[ts->nheld];
	memset(h, 0, sizeof(*h));
	rc = rpcrdma_xdr_decode_u32(msg, &h->xid);
	rc = rc ? rc : rpcrdma_xdr_decode_u32(msg, &magic);
	rc = rc ? rc : rpcrdma_xdr_decode_u32(msg, &h->seed);
	rc = rc ? rc : rpcrdma_xdr_decode_u32(msg, &h->rddp_len);
	rc = rc ? rc : rpcrdma_xdr_decode_u32(msg, &h->rplain_len);
	/* The core fills the reply sizes the call asks for: a mangled call
	 * from a hostile peer (xprt chaos) may ask up to 4 GiB, for which
	 * tserver_answer()'s len + 1 wraps to an empty buffer it then
	 * fills. */
	if (rc || magic != TEST_MAGIC || h->rddp_len > TSERVER_REPLY_MAX ||
	    h->rplain_len > TSERVER_REPLY_MAX) {
		ts->bad++;
		rpcrdma__rdma_svc_ops.reply_drop(sreq);
		return;
	}
	h->errors += check_opaque(msg, h->seed ^ 1, false);
	h->errors += check_opaque(msg, h->seed ^ 2, true);
	h->errors += check_opaque(msg, h->seed ^ 3, false);
	if (rpcrdma_xdr_remaining(msg))
		h->errors++;
	ts->verify_errors += h->errors;
	h->sreq = sreq;
	ts->nheld++;
	if (!ts->hold) {
		(void)tserver_answer(ts, ts->nheld - 1);
		ts->nheld--;
	}
}

static void s_closed(void *ctx, void *conn)
{
	struct tserver *ts = ctx;

	(void)conn;
	ts->closed++;
}

static const struct rpcrdma__svc_cb server_cb = {
    .call = s_call,
    .conn_closed = s_closed,
};

int tserver_open(struct env *e, struct tserver *ts, const struct rpcrdma_server_opts *opts)
{
	struct rpcrdma_server_opts o;
	struct sockaddr_in sin = loopback(0);
	int rc;

	memset(ts, 0, sizeof(*ts));
	ts->env = e;
	memset(&o, 0, sizeof(o));
	if (opts)
		o = *opts;
	else
		o.inline_send = o.inline_recv = TEST_INLINE;
	if (!o.provider)
		o.provider = test_provider;
	rc = rpcrdma__rdma_svc_ops.listen(e->loop, (struct sockaddr *)&sin, sizeof(sin), &o,
					  &server_cb, ts, &ts->t);
	if (rc)
		return rc;
	ts->port = rpcrdma__rdma_svc_ops.port(ts->t);
	return ts->port > 0 ? 0 : -EIO;
}

void tserver_close(struct tserver *ts)
{
	for (unsigned int i = 0; i < ts->nheld; i++) {
		if (ts->held[i].sreq)
			rpcrdma__rdma_svc_ops.reply_drop(ts->held[i].sreq);
	}
	ts->nheld = 0;
	if (ts->t)
		rpcrdma__rdma_svc_ops.destroy(ts->t);
	ts->t = NULL;
}

/*
 * Raw peer.
 */
int raw_open(struct env *e, struct raw *r, int slot)
{
	memset(r, 0, sizeof(*r));
	r->env = e;
	r->rmem = calloc(RAW_RBUFS, RAW_RSIZE);
	r->smem = calloc(RAW_RBUFS, RAW_RSIZE);
	if (!r->rmem || !r->smem)
		return -ENOMEM;
	e->raws[slot] = r;
	return 0;
}

/*
 * The provider instance is opened when the raw peer's role is known: a
 * listening raw peer on the server address, a connecting one on the
 * client's (--peer-addr; in the lab the other rxe device, so that its
 * traffic crosses the wire as the engine client's does).
 */
static int raw_start(struct raw *r, const char *addr)
{
	struct sockaddr_in sin = sockaddr_of(addr, 0);
	struct rpcrdma_prov_open_attr attr = {.addr = (struct sockaddr *)&sin,
					      .addrlen = sizeof(sin)};
	int rc;

	if (r->p)
		return 0;
	rc = rpcrdma__provider_open(test_provider, &attr, &r->p);
	if (rc)
		return rc;
	rc = rpcrdma__provider_reg_mr(r->p, r->rmem, RAW_RBUFS * RAW_RSIZE, &r->rmr);
	rc = rc ? rc : rpcrdma__provider_reg_mr(r->p, r->smem, RAW_RBUFS * RAW_RSIZE, &r->smr);
	return rc;
}

void raw_close(struct raw *r)
{
	if (r->env) {
		for (int i = 0; i < 2; i++) {
			if (r->env->raws[i] == r)
				r->env->raws[i] = NULL;
		}
	}
	if (r->p)
		rpcrdma__provider_close(r->p);
	free(r->rmem);
	free(r->smem);
	memset(r, 0, sizeof(*r));
}

static int raw_post_recvs(struct raw *r)
{
	for (unsigned int i = 0; i < RAW_RBUFS; i++) {
		struct rpcrdma_prov_sge sge = {
		    .addr = r->rmem + (size_t)i * RAW_RSIZE, .length = RAW_RSIZE, .mr = r->rmr};
		int rc = rpcrdma__provider_post_recv(r->c, &sge, 1, (void *)(uintptr_t)(i + 1));

		if (rc)
			return rc;
	}
	return 0;
}

int raw_connect(struct raw *r, int port, const void *pd, size_t pdlen)
{
	struct sockaddr_in sin = loopback(port);
	int rc;

	rc = raw_start(r, test_peer_addr ? test_peer_addr : test_addr);
	rc = rc ? rc : rpcrdma__provider_conn_create(r->p, NULL, r, &r->c);
	rc = rc ? rc : raw_post_recvs(r);
	rc = rc ? rc
		: rpcrdma__provider_connect(r->c, (struct sockaddr *)&sin, sizeof(sin), pd, pdlen);
	if (rc)
		return rc;
	WAIT(r->env, r->up || r->down);
	return r->up ? 0 : -ECONNREFUSED;
}

int raw_listen(struct raw *r, int *port)
{
	struct sockaddr_in sin = loopback(0);
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int rc;

	rc = raw_start(r, test_addr);
	rc = rc ? rc : rpcrdma__provider_listen(r->p, (struct sockaddr *)&sin, sizeof(sin), 8, NULL, r,
				      &r->lst);
	rc = rc ? rc : rpcrdma__provider_listener_addr(r->lst, &ss, &len);
	if (rc)
		return rc;
	*port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return 0;
}

/* Receive contexts are 1..RAW_RBUFS; sends, RMA and revocations use tags. */
#define RAW_CTX_SEND ((void *)(uintptr_t)0x1000)
#define RAW_CTX_RMA ((void *)(uintptr_t)0x2000)
#define RAW_CTX_REVOKE ((void *)(uintptr_t)0x3000)

void raw_poll(struct raw *r)
{
	struct rpcrdma_prov_event ev;

	while (r->p && rpcrdma__provider_poll(r->p, &ev, 1) == 1) {
		switch (ev.type) {
		case RPCRDMA_PEV_CONNECT_REQUEST:
			if (r->c) {
				(void)rpcrdma__provider_reject(ev.conn, NULL, 0);
				rpcrdma__provider_conn_destroy(ev.conn);
				break;
			}
			r->c = ev.conn;
			r->peer_pdlen = ev.private_len;
			memcpy(r->peer_pd, ev.private_data, ev.private_len);
			if (raw_post_recvs(r) ||
			    rpcrdma__provider_accept(r->c, r->no_pd ? NULL : r->accept_pd,
						     r->no_pd ? 0 : r->accept_pdlen))
				r->down = true;
			break;
		case RPCRDMA_PEV_ESTABLISHED:
			r->up = true;
			r->peer_pdlen = ev.private_len ? ev.private_len : r->peer_pdlen;
			break;
		case RPCRDMA_PEV_REJECTED:
		case RPCRDMA_PEV_CONNECT_ERROR:
		case RPCRDMA_PEV_DISCONNECTED:
			r->up = false;
			r->down = true;
			r->down_err = ev.error;
			break;
		case RPCRDMA_PEV_COMPLETION:
			if (ev.op == RPCRDMA_POP_RECV) {
				uintptr_t i = (uintptr_t)ev.ctx - 1;

				if (ev.status != RPCRDMA_PST_SUCCESS || i >= RAW_RBUFS)
					break;
				if (r->nmsgs < RAW_MSGS) {
					struct raw_msg *m = &r->msgs[r->nmsgs++];

					memcpy(m->data, r->rmem + i * RAW_RSIZE, ev.byte_len);
					m->len = ev.byte_len;
					m->flags = ev.flags;
					m->inv = ev.invalidated_handle;
				}
				{
					struct rpcrdma_prov_sge sge = {.addr =
									   r->rmem + i * RAW_RSIZE,
								       .length = RAW_RSIZE,
								       .mr = r->rmr};

					if (ev.conn)
						(void)rpcrdma__provider_post_recv(ev.conn, &sge, 1,
										  ev.ctx);
				}
			} else if (ev.op == RPCRDMA_POP_SEND) {
				r->sends_done++;
			} else if (ev.op == RPCRDMA_POP_REVOKE) {
				r->revokes_done++;
			} else {
				r->rma_done++;
				r->last_rma_status = ev.status;
				if (ev.status != RPCRDMA_PST_SUCCESS)
					r->rma_errors++;
			}
			break;
		default:
			break;
		}
	}
}

int raw_send(struct raw *r, const void *msg, size_t len)
{
	uint8_t *slot = r->smem + (size_t)(r->snext++ % RAW_RBUFS) * RAW_RSIZE;
	struct rpcrdma_prov_sge sge = {.addr = slot, .length = (uint32_t)len, .mr = r->smr};

	if (len > RAW_RSIZE)
		return -EMSGSIZE;
	memcpy(slot, msg, len);
	return rpcrdma__provider_post_send(r->c, &sge, 1, 0, 0, RAW_CTX_SEND);
}

struct raw_msg *raw_wait_msg(struct raw *r)
{
	WAIT(r->env, r->nmsgs > r->taken);
	if (r->nmsgs > r->taken)
		return &r->msgs[r->taken++];
	return NULL;
}

int raw_grant(struct raw *r, void *buf, size_t len, unsigned int access,
	      struct rpcrdma_prov_mr **mr, struct rpcrdma_prov_grant **g,
	      struct rpcrdma_segment *seg)
{
	struct rpcrdma_prov_rseg rs;
	int rc = rpcrdma__provider_reg_mr(r->p, buf, len, mr);

	rc = rc ? rc : rpcrdma__provider_grant(r->c, *mr, buf, (uint32_t)len, access, g, &rs);
	if (rc)
		return rc;
	seg->handle = rs.handle;
	seg->length = rs.length;
	seg->offset = rs.offset;
	return 0;
}
