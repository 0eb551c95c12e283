/*
 * The test program served by the suite (prog 0x20000099, versions 1 and 2;
 * procedures listed in rpc_suite.c), its XDR functions, and the helpers
 * every case uses: set-up and tear-down of a loop with a server and a
 * client, synchronous and asynchronous call helpers, a server on its own
 * thread, and raw sockets that speak record marking by hand.
 */
#include "suite.h"

enum rpcrdma_transport transport = RPCRDMA_TRANSPORT_TCP;

bool transport_from_arg(const char *name)
{
	if (strcmp(name, "tcp") == 0)
		transport = RPCRDMA_TRANSPORT_TCP;
	else if (strcmp(name, "rdma") == 0)
		transport = RPCRDMA_TRANSPORT_RDMA;
	else
		return false;
	return true;
}
_Atomic int checks;
struct svc_state svc;

int xdr_echo_enc(struct rpcrdma_xdr_stream *x, void *o)
{
	struct echo *e = o;

	return rpcrdma_xdr_encode_ddp(x, e->data, e->len);
}

int xdr_echo_dec(struct rpcrdma_xdr_stream *x, void *o)
{
	struct echo *e = o;

	return rpcrdma_xdr_decode_ddp(x, e->data, ECHO_MAX, &e->len);
}

int xdr_add_enc(struct rpcrdma_xdr_stream *x, void *o)
{
	struct add_args *a = o;
	int rc = rpcrdma_xdr_encode_i32(x, a->a);

	return rc ? rc : rpcrdma_xdr_encode_i32(x, a->b);
}

int xdr_add_dec(struct rpcrdma_xdr_stream *x, void *o)
{
	struct add_args *a = o;
	int rc = rpcrdma_xdr_decode_i32(x, &a->a);

	return rc ? rc : rpcrdma_xdr_decode_i32(x, &a->b);
}

int xdr_i32_enc(struct rpcrdma_xdr_stream *x, void *o)
{
	return rpcrdma_xdr_encode_i32(x, *(int32_t *)o);
}

int xdr_i32_dec(struct rpcrdma_xdr_stream *x, void *o)
{
	return rpcrdma_xdr_decode_i32(x, o);
}

int xdr_u32_enc(struct rpcrdma_xdr_stream *x, void *o)
{
	return rpcrdma_xdr_encode_u32(x, *(uint32_t *)o);
}

int xdr_u32_dec(struct rpcrdma_xdr_stream *x, void *o)
{
	return rpcrdma_xdr_decode_u32(x, o);
}

int xdr_defer_enc(struct rpcrdma_xdr_stream *x, void *o)
{
	struct defer_args *d = o;
	int rc = rpcrdma_xdr_encode_u32(x, d->delay_ms);

	return rc ? rc : rpcrdma_xdr_encode_u32(x, d->value);
}

int xdr_defer_dec(struct rpcrdma_xdr_stream *x, void *o)
{
	struct defer_args *d = o;
	int rc = rpcrdma_xdr_decode_u32(x, &d->delay_ms);

	return rc ? rc : rpcrdma_xdr_decode_u32(x, &d->value);
}

int xdr_whoami_enc(struct rpcrdma_xdr_stream *x, void *o)
{
	struct whoami *w = o;
	int rc;

	if ((rc = rpcrdma_xdr_encode_u32(x, w->flavor)) || (rc = rpcrdma_xdr_encode_u32(x, w->uid)))
		return rc;
	return rpcrdma_xdr_encode_u32(x, w->gid);
}

int xdr_whoami_dec(struct rpcrdma_xdr_stream *x, void *o)
{
	struct whoami *w = o;
	int rc;

	if ((rc = rpcrdma_xdr_decode_u32(x, &w->flavor)) ||
	    (rc = rpcrdma_xdr_decode_u32(x, &w->uid)))
		return rc;
	return rpcrdma_xdr_decode_u32(x, &w->gid);
}

int xdr_fail_enc(struct rpcrdma_xdr_stream *x, void *o)
{
	(void)x;
	(void)o;
	return RPCRDMA_ERR_BAD_VALUE;
}

static int proc_null(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return 0;
}

static int proc_echo(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct echo *in = args, *out = res;

	(void)req;
	svc.echo_execs++;
	out->len = in->len;
	memcpy(out->data, in->data, in->len);
	if (svc.cut) {
		/* As COUNT: the reply, DDP result and all, goes nowhere. */
		rpcrdma__client_disconnect(svc.cut);
		svc.cut = NULL;
	}
	return 0;
}

static int proc_add(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct add_args *a = args;

	(void)req;
	*(int32_t *)res = (int32_t)((uint32_t)a->a + (uint32_t)a->b);
	return 0;
}

static int proc_syserr(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return -RPCRDMA_RPC_SYSTEM_ERR;
}

static void deferred_fire(struct rpcrdma__timer *t)
{
	struct deferred *d = t->ctx;

	*d->pprev = d->next;
	if (d->next)
		d->next->pprev = d->pprev;
	if (d->res)
		*d->res = d->value + 1;
	CHECK_EQ(rpcrdma_svc_reply(d->req, 0), 0);
	free(d);
}

/* Answer @req in @delay_ms, setting *@res to @value + 1 first (if @res). */
static int answer_later(struct rpcrdma_svc_req *req, uint32_t *res, uint32_t value,
			uint32_t delay_ms)
{
	struct deferred *d = calloc(1, sizeof(*d));

	if (!d)
		return -RPCRDMA_RPC_SYSTEM_ERR;
	d->req = req;
	d->res = res;
	d->value = value;
	d->next = svc.pending;
	if (d->next)
		d->next->pprev = &d->next;
	d->pprev = &svc.pending;
	svc.pending = d;
	rpcrdma__timer_start(svc.loop, &d->timer, delay_ms, deferred_fire, d);
	return RPCRDMA_SVC_DEFERRED;
}

static int proc_defer(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct defer_args *a = args;

	svc.defer_execs++;
	return answer_later(req, res, a->value, a->delay_ms);
}

/* ECHO answered ECHO_LATER_MS later: its DDP result waits in the server. */
static int proc_echo_later(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct echo *in = args, *out = res;

	svc.echo_execs++;
	out->len = in->len;
	memcpy(out->data, in->data, in->len);
	return answer_later(req, NULL, 0, svc.echo_later_ms ? svc.echo_later_ms : ECHO_LATER_MS);
}

static int proc_fill(struct rpcrdma_svc_req *req, void *args, void *res)
{
	uint32_t n = *(uint32_t *)args;
	struct echo *out = res;

	(void)req;
	if (n > ECHO_MAX)
		return -RPCRDMA_RPC_GARBAGE_ARGS;
	out->len = n;
	for (uint32_t i = 0; i < n; i++)
		out->data[i] = fill_byte(i);
	return 0;
}

/* Answer every deferred request now, not when its delay is up. */
void svc_answer_pending(void)
{
	while (svc.pending) {
		rpcrdma__timer_stop(&svc.pending->timer);
		deferred_fire(&svc.pending->timer);
	}
}

/*
 * Keep every deferred request until svc_answer_pending(), whatever its
 * delay: for a case that needs the server to still hold it when something
 * else has happened, however slowly that came.
 */
void svc_hold_pending(void)
{
	for (struct deferred *d = svc.pending; d; d = d->next)
		rpcrdma__timer_stop(&d->timer);
}

/* Before destroying the server: its deferred requests are answered by it. */
void svc_forget_pending(void)
{
	while (svc.pending) {
		struct deferred *d = svc.pending;

		svc.pending = d->next;
		rpcrdma__timer_stop(&d->timer);
		free(d);
	}
}

static int proc_whoami(struct rpcrdma_svc_req *req, void *args, void *res)
{
	const struct rpcrdma_opaque_auth *cred = rpcrdma_svc_cred(req);
	const struct rpcrdma_rpc_msg *msg = rpcrdma_svc_msg(req);
	struct whoami *w = res;
	struct rpcrdma_auth_sys sys;

	(void)args;
	CHECK(msg->type == RPCRDMA_RPC_CALL && msg->u.call.prog == TEST_PROG);
	CHECK(msg->u.call.proc == P_WHOAMI);
	w->flavor = cred->flavor;
	w->uid = w->gid = UINT32_MAX;
	if (cred->flavor == RPCRDMA_AUTH_SYS && rpcrdma_auth_sys_decode(cred, &sys) == 0) {
		w->uid = sys.uid;
		w->gid = sys.gid;
	}
	return 0;
}

static int proc_never(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	svc.never_execs++;
	return RPCRDMA_SVC_DEFERRED;
}

static int proc_count(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	*(uint32_t *)res = ++svc.count_execs;
	if (svc.cut) {
		/* The reply we are about to send will find no one listening. */
		rpcrdma__client_disconnect(svc.cut);
		svc.cut = NULL;
	}
	if (svc.doomed) {
		/* From inside its own procedure: the reply still goes out. */
		rpcrdma_server_destroy(svc.doomed);
		svc.doomed = NULL;
	}
	return 0;
}

static void count_free_res(void *res)
{
	(void)res;
	svc.free_res_calls++;
}

/* Poisons the result, so that a transport still sending from it after
 * free_res (zero-copy DDP results) shows up as corrupt data at the client. */
static void echo_free_res(void *res)
{
	struct echo *out = res;

	memset(out->data, 0xa5, out->len <= ECHO_MAX ? out->len : ECHO_MAX);
	svc.echo_frees++;
}

const struct rpcrdma_svc_proc procs[P_NPROCS] = {
    [P_NULL] = {proc_null, NULL, 0, NULL, 0, NULL},
    [P_ECHO] = {proc_echo, xdr_echo_dec, sizeof(struct echo), xdr_echo_enc, sizeof(struct echo),
		echo_free_res},
    [P_ADD] = {proc_add, xdr_add_dec, sizeof(struct add_args), xdr_i32_enc, sizeof(int32_t), NULL},
    [P_SYSERR] = {proc_syserr, NULL, 0, NULL, 0, NULL},
    [P_DEFER] = {proc_defer, xdr_defer_dec, sizeof(struct defer_args), xdr_u32_enc,
		 sizeof(uint32_t), count_free_res},
    [P_WHOAMI] = {proc_whoami, NULL, 0, xdr_whoami_enc, sizeof(struct whoami), NULL},
    [P_NEVER] = {proc_never, NULL, 0, NULL, 0, count_free_res},
    [P_COUNT] = {proc_count, xdr_u32_dec, sizeof(uint32_t), xdr_u32_enc, sizeof(uint32_t), NULL},
    [P_EMPTY] = {NULL, NULL, 0, NULL, 0, NULL},
    [P_BADRES] = {proc_null, NULL, 0, xdr_fail_enc, 4, NULL},
    [P_FILL] = {proc_fill, xdr_u32_dec, sizeof(uint32_t), xdr_echo_enc, sizeof(struct echo),
		echo_free_res},
    [P_ECHO_LATER] = {proc_echo_later, xdr_echo_dec, sizeof(struct echo), xdr_echo_enc,
		      sizeof(struct echo), echo_free_res},
    [P_COUNT_IDEMPOTENT] = {proc_count, xdr_u32_dec, sizeof(uint32_t), xdr_u32_enc,
			    sizeof(uint32_t), NULL},
};

struct rpcrdma_server *server_on(struct rpcrdma_loop *loop, uint32_t max_record, char *port)
{
	struct rpcrdma_server_opts so;
	struct rpcrdma_server *srv = NULL;

	rpcrdma_server_opts_default(&so);
	so.transport = transport;
	so.max_record = max_record;
	CHECK_EQ(rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &srv), 0);
	CHECK_EQ(rpcrdma_server_register(srv, TEST_PROG, 1, procs, P_NPROCS), 0);
	CHECK_EQ(rpcrdma_server_register(srv, TEST_PROG, 2, procs, P_NPROCS), 0);
	CHECK_EQ(rpcrdma_server_set_idempotent(srv, TEST_PROG, 1, P_COUNT_IDEMPOTENT, true), 0);
	CHECK(rpcrdma_server_port(srv) > 0);
	snprintf(port, 16, "%d", rpcrdma_server_port(srv));
	memset(&svc, 0, sizeof(svc));
	svc.loop = loop;
	return srv;
}

struct rpcrdma_client *client_for(struct rpcrdma_loop *loop, const char *port, uint32_t prog,
				  uint32_t vers, const struct rpcrdma_client_opts *opts)
{
	struct rpcrdma_client_opts co;
	struct rpcrdma_client *c = NULL;

	if (opts) {
		co = *opts;
	} else {
		rpcrdma_client_opts_default(&co);
		/* Long enough for valgrind or a sanitizer build on a loaded
		 * machine; cases that want a time-out set their own. */
		co.timeout_ms = 60000;
	}
	co.transport = transport;
	CHECK_EQ(rpcrdma_client_create(loop, "127.0.0.1", port, prog, vers, &co, &c), 0);
	return c;
}

void env_up(struct env *e, uint32_t max_record)
{
	memset(e, 0, sizeof(*e));
	CHECK_EQ(rpcrdma_loop_create(&e->loop), 0);
	e->srv = server_on(e->loop, max_record, e->port);
	e->clnt = client_for(e->loop, e->port, TEST_PROG, 1, NULL);
}

void env_down(struct env *e)
{
	if (e->clnt)
		rpcrdma_client_destroy(e->clnt);
	svc_forget_pending();
	if (e->srv)
		rpcrdma_server_destroy(e->srv);
	CHECK_EQ(rpcrdma_loop_destroy(e->loop), 0);
}

void call_init(struct rpcrdma_call *c, uint32_t proc, rpcrdma_xdr_fn enc, void *args,
	       rpcrdma_xdr_fn dec, void *res)
{
	memset(c, 0, sizeof(*c));
	c->proc = proc;
	c->encode_args = enc;
	c->args = args;
	c->decode_res = dec;
	c->res = res;
}

int add(struct rpcrdma_client *c, int32_t a, int32_t b, int32_t *sum)
{
	struct add_args args = {a, b};
	struct rpcrdma_call call;

	call_init(&call, P_ADD, xdr_add_enc, &args, xdr_i32_dec, sum);
	return rpcrdma_client_call(c, &call);
}

/*
 * What a caller of ECHO must offer over RDMA for a result above the inline
 * size: a Write chunk for the DDP-eligible result, and max_reply for the
 * whole reply.  Without them the server can only answer ERR_CHUNK.  TCP
 * ignores both.
 */
void echo_offer_ddp(struct rpcrdma_call *c, struct echo *out)
{
	c->ddp_buf = out->data;
	c->ddp_len = sizeof(out->data);
	c->max_reply = ECHO_REPLY_MAX;
}

/*
 * A new RPC-over-RDMA connection has one credit until its first reply
 * (RFC 8166 4.3.3), so calls started together on it go one at a time.
 * Cases that need @n calls in flight at once make one round trip first
 * (over TCP there is nothing to wait for).
 */
void open_credits(struct rpcrdma_client *c, uint64_t n)
{
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_call call;

	if (transport != RPCRDMA_TRANSPORT_RDMA)
		return;
	call_init(&call, P_NULL, NULL, NULL, NULL, NULL);
	CHECK_EQ(rpcrdma_client_call(c, &call), 0);
	CHECK_EQ(rpcrdma_client_stats(c, &st), 0);
	CHECK(st.credits_granted >= n);
}

void pump_until(struct rpcrdma_loop *loop, const bool *flag)
{
	while (!*flag)
		CHECK(rpcrdma_loop_run_once(loop, 1000) >= 0);
}

void pump_ms(struct rpcrdma_loop *loop, int ms)
{
	uint64_t end = rpcrdma_loop_now(loop) + (uint64_t)ms;

	while (rpcrdma_loop_now(loop) < end)
		CHECK(rpcrdma_loop_run_once(loop, 5) >= 0);
}

void raw_adopt(struct raw *r, struct rpcrdma_loop *loop, int fd)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->loop = loop;
	r->cap = ECHO_MAX + 4096;
	r->buf = malloc(r->cap);
	CHECK(r->buf);
}

/* A socket with SO_REUSEADDR bound to 127.0.0.1:@local_port (0: a port of
 * its own, which no one else's connect() then shares). */
static int raw_bound_socket(uint16_t local_port)
{
	struct sockaddr_in me;
	int fd, one = 1;

	memset(&me, 0, sizeof(me));
	me.sin_family = AF_INET;
	me.sin_port = htons(local_port);
	me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	CHECK_EQ(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	CHECK_EQ(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	return fd;
}

static void raw_connect(struct raw *r, struct rpcrdma_loop *loop, const char *port, int fd)
{
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)atoi(port));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK_EQ(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	raw_adopt(r, loop, fd);
}

void raw_open(struct raw *r, struct rpcrdma_loop *loop, const char *port)
{
	raw_connect(r, loop, port, raw_bound_socket(0));
}

/* @old's client coming back on a new connection, @r, from the same address
 * and port (the server's duplicate request cache over TCP knows it by
 * them): the port is bound again before @old is reset, so that no one else
 * takes it meanwhile. */
void raw_reconnect(struct raw *r, struct raw *old, struct rpcrdma_loop *loop, const char *port)
{
	int fd = raw_bound_socket(raw_local_port(old));

	raw_abort(old);
	raw_connect(r, loop, port, fd);
}

uint16_t raw_local_port(const struct raw *r)
{
	struct sockaddr_in me;
	socklen_t len = sizeof(me);

	CHECK_EQ(getsockname(r->fd, (struct sockaddr *)&me, &len), 0);
	return ntohs(me.sin_port);
}

/* Close with a reset, as a client that gives up on a connection: its
 * port is free for the next one at once (no TIME_WAIT). */
void raw_abort(struct raw *r)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};

	CHECK_EQ(setsockopt(r->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	raw_close(r);
}

void raw_close(struct raw *r)
{
	close(r->fd);
	free(r->buf);
}

/* Send it all, running the loop whenever the socket is full. */
void raw_send(struct raw *r, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = send(r->fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && (errno == EPIPE || errno == ECONNRESET))
			return; /* the peer gave up on us: what some cases expect */
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			CHECK(rpcrdma_loop_run_once(r->loop, 1) >= 0);
			continue;
		}
		CHECK(w > 0);
		b += w;
		n -= (size_t)w;
	}
}

void put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

/* Send @n bytes of message as one last fragment. */
void raw_send_record(struct raw *r, const void *msg, size_t n)
{
	uint8_t mark[4];

	put32(mark, 0x80000000u | (uint32_t)n);
	raw_send(r, mark, 4);
	raw_send(r, msg, n);
}

/*
 * Pump @loop until a whole record arrives (returns its length; the record
 * is at r->buf, its message at r->buf + 4), the peer closes (0), or @ms
 * pass (-ETIMEDOUT).  Bytes of the next record stay for the next call.
 */
ssize_t raw_recv_record(struct raw *r, struct rpcrdma_loop *loop, int ms)
{
	uint64_t end = rpcrdma_loop_now(loop) + (uint64_t)ms;

	memmove(r->buf, r->buf + r->used, r->have - r->used);
	r->have -= r->used;
	r->used = 0;
	for (;;) {
		ssize_t n;

		if (r->have >= 4) {
			uint32_t mark = get32(r->buf);

			CHECK(mark & 0x80000000u);
			CHECK((mark & 0x7fffffffu) <= r->cap - 4);
			if (r->have >= 4 + (mark & 0x7fffffffu)) {
				r->used = 4 + (mark & 0x7fffffffu);
				return (ssize_t)(mark & 0x7fffffffu);
			}
		}
		if (rpcrdma_loop_now(loop) >= end)
			return -ETIMEDOUT;
		CHECK(rpcrdma_loop_run_once(loop, 2) >= 0);
		n = recv(r->fd, r->buf + r->have, r->cap - r->have, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return 0;
		if (n < 0) {
			CHECK(errno == EAGAIN || errno == EWOULDBLOCK);
			continue;
		}
		r->have += (size_t)n;
	}
}

/* A call header, rpcvers @rpcvers, AUTH_NONE both ways; returns its length. */
size_t build_call(uint8_t *p, uint32_t xid, uint32_t rpcvers, uint32_t proc)
{
	put32(p + 0, xid);
	put32(p + 4, RPCRDMA_RPC_CALL);
	put32(p + 8, rpcvers);
	put32(p + 12, TEST_PROG);
	put32(p + 16, 1);
	put32(p + 20, proc);
	put32(p + 24, RPCRDMA_AUTH_NONE);
	put32(p + 28, 0);
	put32(p + 32, RPCRDMA_AUTH_NONE);
	put32(p + 36, 0);
	return 40;
}

/* The reply in r->buf: check xid and reply_stat, return the word after it. */
const uint8_t *reply_body(struct raw *r, ssize_t len, uint32_t xid, uint32_t stat)
{
	CHECK(len >= 12);
	CHECK_EQ(get32(r->buf + 4), xid);
	CHECK_EQ(get32(r->buf + 8), RPCRDMA_RPC_REPLY);
	CHECK_EQ(get32(r->buf + 12), stat);
	return r->buf + 16;
}

bool raw_closed_by_server(struct raw *r, struct rpcrdma_loop *loop)
{
	return raw_recv_record(r, loop, 3000) == 0;
}

void expect_rejected(struct rpcrdma_client *c, uint32_t proc, rpcrdma_xdr_fn enc, void *args,
		     uint32_t accept_stat)
{
	struct rpcrdma_call call;
	int32_t res;

	call_init(&call, proc, enc, args, xdr_i32_dec, &res);
	CHECK_EQ(rpcrdma_client_call(c, &call), RPCRDMA_ERR_RPC_REJECTED);
	CHECK_EQ(call.status, RPCRDMA_ERR_RPC_REJECTED);
	CHECK_EQ(call.reply.stat, RPCRDMA_RPC_MSG_ACCEPTED);
	CHECK_EQ(call.reply.accept_stat, accept_stat);
}

void add_done(struct rpcrdma_call *call, void *ctx)
{
	struct add_call *a = ctx;

	a->completions++;
	a->ctx->done++;
	if (call->status != 0 || a->sum != a->args.a + a->args.b) {
		fprintf(stderr, "add %d + %d: status %d (%s), sum %d, xid %08x\n", a->args.a,
			a->args.b, call->status, rpcrdma_strerror(call->status), a->sum, call->xid);
		a->ctx->fails++;
	}
}

void start_adds(struct rpcrdma_client *c, struct add_call *calls, int n, struct async_ctx *ctx,
		int timeout_ms)
{
	for (int i = 0; i < n; i++) {
		struct add_call *a = &calls[i];

		memset(a, 0, sizeof(*a));
		a->args.a = i * 1000;
		a->args.b = i;
		a->ctx = ctx;
		call_init(&a->call, P_ADD, xdr_add_enc, &a->args, xdr_i32_dec, &a->sum);
		a->call.done = add_done;
		a->call.ctx = a;
		a->call.timeout_ms = timeout_ms;
		CHECK_EQ(rpcrdma_client_call_async(c, &a->call), 0);
	}
}

void defer_done(struct rpcrdma_call *call, void *ctx)
{
	struct defer_call *d = ctx;

	d->completions++;
	d->status = call->status;
}

void start_defer(struct rpcrdma_client *c, struct defer_call *d, uint32_t delay, uint32_t value)
{
	memset(d, 0, sizeof(*d));
	d->args.delay_ms = delay;
	d->args.value = value;
	d->status = 1;
	call_init(&d->call, P_DEFER, xdr_defer_enc, &d->args, xdr_u32_dec, &d->res);
	d->call.done = defer_done;
	d->call.ctx = d;
	CHECK_EQ(rpcrdma_client_call_async(c, &d->call), 0);
}

/* A server that answers badly: the client drops what matches nothing. */
int accept_one(struct rpcrdma_loop *loop, int lfd)
{
	uint64_t end = rpcrdma_loop_now(loop) + 3000;

	while (rpcrdma_loop_now(loop) < end) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd >= 0)
			return fd;
		CHECK(errno == EAGAIN || errno == EWOULDBLOCK);
		CHECK(rpcrdma_loop_run_once(loop, 2) >= 0);
	}
	CHECK(!"no connection");
	return -1;
}

size_t build_reply(uint8_t *p, uint32_t xid, int32_t result)
{
	put32(p, xid);
	put32(p + 4, RPCRDMA_RPC_REPLY);
	put32(p + 8, RPCRDMA_RPC_MSG_ACCEPTED);
	put32(p + 12, RPCRDMA_AUTH_NONE);
	put32(p + 16, 0);
	put32(p + 20, RPCRDMA_RPC_SUCCESS);
	put32(p + 24, (uint32_t)result);
	return 28;
}

static void *server_main(void *arg)
{
	struct server_thread *st = arg;

	CHECK_EQ(rpcrdma_loop_run(st->loop), 0);
	return NULL;
}

static void stop_cb(void *arg)
{
	rpcrdma_loop_stop(arg);
}

void server_thread_start(struct server_thread *st)
{
	CHECK_EQ(rpcrdma_loop_create(&st->loop), 0);
	st->srv = server_on(st->loop, 0, st->port);
	CHECK_EQ(pthread_create(&st->th, NULL, server_main, st), 0);
}

void server_thread_stop(struct server_thread *st)
{
	CHECK_EQ(rpcrdma_loop_wake(st->loop, stop_cb, st->loop), 0);
	CHECK_EQ(pthread_join(st->th, NULL), 0);
	/* The thread is gone: its loop and server are ours now. */
	svc_forget_pending();
	rpcrdma_server_destroy(st->srv);
	CHECK_EQ(rpcrdma_loop_destroy(st->loop), 0);
}
