/*
 * The "ours" stack: the benchmark program served and called through
 * librpcrdma's public API, over RPC-over-RDMA (any provider) or its TCP
 * transport.  The server runs on a loop of its own thread; each client
 * thread owns a loop with its share of the connections and keeps
 * p->depth asynchronous calls in flight on each.
 *
 * Bulk data goes the way an NFS implementation sends it: READ results with
 * rpcrdma_xdr_encode_ddp() from one server buffer (large results are RDMA
 * Written from it without a copy) into the call's ddp_buf (a Write chunk);
 * WRITE arguments with rpcrdma_xdr_encode_ddp() from the client's buffer
 * (a Read chunk), decoded by the server by reference where it landed
 * (rpcrdma_xdr_decode_ddp_ref()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* Arguments and results (both sides). */
struct small_msg {
	uint32_t len;
	uint8_t data[BENCH_MAX_SMALL];
};

struct bulk {
	uint32_t len;
	uint8_t *data; /* BENCH_MAX_SIZE room, or the server's buffers */
};

static int enc_small(struct rpcrdma_xdr_stream *x, void *o)
{
	struct small_msg *m = o;

	return rpcrdma_xdr_encode_opaque(x, m->data, m->len);
}

static int dec_small(struct rpcrdma_xdr_stream *x, void *o)
{
	struct small_msg *m = o;

	return rpcrdma_xdr_decode_opaque(x, m->data, BENCH_MAX_SMALL, &m->len);
}

static int enc_len(struct rpcrdma_xdr_stream *x, void *o)
{
	return rpcrdma_xdr_encode_u32(x, *(uint32_t *)o);
}

static int dec_len(struct rpcrdma_xdr_stream *x, void *o)
{
	uint32_t *len = o;
	int rc = rpcrdma_xdr_decode_u32(x, len);

	return rc ? rc : *len > BENCH_MAX_SIZE ? RPCRDMA_ERR_TOO_LONG : 0;
}

static int enc_ddp(struct rpcrdma_xdr_stream *x, void *o)
{
	struct bulk *b = o;

	return rpcrdma_xdr_encode_ddp(x, b->data, b->len);
}

static int dec_ddp(struct rpcrdma_xdr_stream *x, void *o)
{
	struct bulk *b = o;

	return rpcrdma_xdr_decode_ddp(x, b->data, BENCH_MAX_SIZE, &b->len);
}

static int enc_plain(struct rpcrdma_xdr_stream *x, void *o)
{
	struct bulk *b = o;

	return rpcrdma_xdr_encode_opaque(x, b->data, b->len);
}

static int dec_plain(struct rpcrdma_xdr_stream *x, void *o)
{
	struct bulk *b = o;

	return rpcrdma_xdr_decode_opaque(x, b->data, BENCH_MAX_SIZE, &b->len);
}

static int enc_u64(struct rpcrdma_xdr_stream *x, void *o)
{
	return rpcrdma_xdr_encode_u64(x, *(uint64_t *)o);
}

static int dec_u64(struct rpcrdma_xdr_stream *x, void *o)
{
	return rpcrdma_xdr_decode_u64(x, (uint64_t *)o);
}

/*
 * Server.  One loop thread serves every connection, so the one scratch
 * buffer that WRITE and SUM decode into is never used by two calls at once.
 */
static struct {
	pthread_t tid;
	struct rpcrdma_loop *loop;
	struct rpcrdma_server *srv;
	int sys_fd;      /* the serving thread's syscall counter, or -1 */
	uint8_t *source; /* what READ and LIST return: BENCH_SERVER_BUFS in turn */
	atomic_uint next_source;
	uint8_t *scratch; /* where WRITE and SUM land */
	int port;
	int rc;
	bool ready;
	pthread_mutex_t lock;
	pthread_cond_t cond;
} osrv = {.sys_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static int svc_null(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return 0;
}

static int svc_echo(struct rpcrdma_svc_req *req, void *args, void *res)
{
	const struct small_msg *in = args;
	struct small_msg *out = res;

	(void)req;
	out->len = in->len;
	memcpy(out->data, in->data, in->len);
	return 0;
}

static int svc_read(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct bulk *out = res;

	(void)req;
	unsigned int buf = atomic_fetch_add_explicit(&osrv.next_source, 1, memory_order_relaxed) %
			   BENCH_SERVER_BUFS;

	out->len = *(uint32_t *)args;
	out->data = osrv.source + (size_t)buf * BENCH_MAX_SIZE;
	return 0;
}

static int svc_consume(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	*(uint32_t *)res = ((struct bulk *)args)->len;
	return 0;
}

static int svc_cpu(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	*(uint64_t *)res = (uint64_t)(bench_server_cpu() * 1e6);
	return 0;
}

/* Copies out the provider counters of every connection the server has
 * (over RDMA; zero over TCP) and the serving thread's system calls. */
static int svc_work(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct bench_work *w = res;
	struct rpcrdma_xprt_stats st;

	(void)req;
	(void)args;
	memset(w, 0, sizeof(*w));
	if (rpcrdma_server_stats(osrv.srv, &st) == 0) {
		w->v[BW_sends] = st.prov_sends;
		w->v[BW_recvs] = st.prov_recvs;
		w->v[BW_reads] = st.prov_reads;
		w->v[BW_writes] = st.prov_writes;
		w->v[BW_grants] = st.prov_grants;
		w->v[BW_revokes] = st.prov_revokes;
		w->v[BW_regs] = st.prov_reg_mrs;
		w->v[BW_deregs] = st.prov_dereg_mrs;
		w->v[BW_inline_msgs] = st.inline_msgs;
		w->v[BW_read_chunk_msgs] = st.read_chunk_msgs;
		w->v[BW_long_calls] = st.long_calls;
		w->v[BW_write_chunk_msgs] = st.write_chunk_msgs;
		w->v[BW_reply_chunk_msgs] = st.reply_chunk_msgs;
		w->v[BW_long_replies] = st.long_replies;
		w->ops_valid = true;
	}
	if (osrv.sys_fd >= 0) {
		w->v[BW_syscalls] = bench_syscount_read(osrv.sys_fd);
		w->sys_valid = true;
	}
	return 0;
}

/* On the wire: the two flags, then every counter. */
static int xdr_work(struct rpcrdma_xdr_stream *x, struct bench_work *w, bool enc)
{
	uint32_t flags = (w->ops_valid ? 1u : 0u) | (w->sys_valid ? 2u : 0u);
	int rc = enc ? rpcrdma_xdr_encode_u32(x, flags) : rpcrdma_xdr_decode_u32(x, &flags);

	for (int i = 0; !rc && i < BW_COUNT; i++)
		rc = enc ? rpcrdma_xdr_encode_u64(x, w->v[i]) : rpcrdma_xdr_decode_u64(x, &w->v[i]);
	w->ops_valid = flags & 1u;
	w->sys_valid = flags & 2u;
	return rc;
}

static int enc_work(struct rpcrdma_xdr_stream *x, void *o)
{
	return xdr_work(x, o, true);
}

static int dec_work(struct rpcrdma_xdr_stream *x, void *o)
{
	return xdr_work(x, o, false);
}

static int svc_stop(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	atomic_store(&bench_stop_requested, true);
	return 0;
}

/* WRITE and SUM arguments are read where the transport put them (an NFS
 * server writes them to the file from there), or decoded into the scratch
 * buffer when the call cannot lend them. */
static int dec_ddp_scratch(struct rpcrdma_xdr_stream *x, void *o)
{
	struct bulk *b = o;
	const void *lent;
	int rc = rpcrdma_xdr_decode_ddp_ref(x, BENCH_MAX_SIZE, &lent, &b->len);

	if (rc != -ERANGE) {
		b->data = (uint8_t *)(uintptr_t)lent;
		return rc;
	}
	b->data = osrv.scratch;
	return dec_ddp(x, o);
}

static int dec_plain_scratch(struct rpcrdma_xdr_stream *x, void *o)
{
	((struct bulk *)o)->data = osrv.scratch;
	return dec_plain(x, o);
}

/* Reads (NULL, ECHO, READ, LIST) are idempotent, as NFS's are, so their
 * replies skip the duplicate request cache; the consuming procedures model
 * NFS WRITE and keep theirs (small) cached. */
static const struct rpcrdma_svc_proc ours_procs[BENCH_NPROCS] = {
	[BENCH_NULL] = {svc_null, NULL, 0, NULL, 0, NULL},
	[BENCH_ECHO] = {svc_echo, dec_small, sizeof(struct small_msg), enc_small,
			sizeof(struct small_msg), NULL},
	[BENCH_READ] = {svc_read, dec_len, sizeof(uint32_t), enc_ddp, sizeof(struct bulk),
			NULL},
	[BENCH_WRITE] = {svc_consume, dec_ddp_scratch, sizeof(struct bulk), enc_len,
			 sizeof(uint32_t), NULL},
	[BENCH_SUM] = {svc_consume, dec_plain_scratch, sizeof(struct bulk), enc_len,
		       sizeof(uint32_t), NULL},
	[BENCH_LIST] = {svc_read, dec_len, sizeof(uint32_t), enc_plain, sizeof(struct bulk),
			NULL},
	[BENCH_CPU] = {svc_cpu, NULL, 0, enc_u64, sizeof(uint64_t), NULL},
	[BENCH_STOP] = {svc_stop, NULL, 0, NULL, 0, NULL},
	[BENCH_WORK] = {svc_work, NULL, 0, enc_work, sizeof(struct bench_work), NULL},
};

static void server_ready(int rc)
{
	pthread_mutex_lock(&osrv.lock);
	osrv.rc = rc;
	osrv.ready = true;
	pthread_cond_signal(&osrv.cond);
	pthread_mutex_unlock(&osrv.lock);
}

struct server_start {
	const struct bench_config *cfg;
	char port[16];
};

static void *server_thread(void *arg)
{
	struct server_start *st = arg;
	struct rpcrdma_server_opts so;
	int rc;

	osrv.sys_fd = bench_syscount_open();
	rpcrdma_server_opts_default(&so);
	so.transport = st->cfg->transport;
	so.provider = st->cfg->provider;
	so.credits = st->cfg->credits;
	if (st->cfg->inline_size)
		so.inline_send = so.inline_recv = st->cfg->inline_size;
	so.max_record = BENCH_MAX_SIZE + 65536;
	rc = rpcrdma_loop_create(&osrv.loop);
	if (!rc)
		rc = rpcrdma_loop_set_busy_poll(osrv.loop, st->cfg->busy_poll_us);
	if (!rc)
		rc = rpcrdma_server_create(osrv.loop, st->cfg->host, st->port, &so, &osrv.srv);
	if (!rc)
		rc = rpcrdma_server_register(osrv.srv, BENCH_PROG, BENCH_VERS, ours_procs,
					     BENCH_NPROCS);
	for (uint32_t p = BENCH_NULL; !rc && p < BENCH_NPROCS; p++) {
		if (p == BENCH_NULL || p == BENCH_ECHO || p == BENCH_READ || p == BENCH_LIST)
			rc = rpcrdma_server_set_idempotent(osrv.srv, BENCH_PROG, BENCH_VERS, p, true);
	}
	if (!rc)
		osrv.port = rpcrdma_server_port(osrv.srv);
	server_ready(rc);
	if (!rc)
		rpcrdma_loop_run(osrv.loop);
	if (osrv.srv)
		rpcrdma_server_destroy(osrv.srv);
	if (osrv.loop)
		rpcrdma_loop_destroy(osrv.loop);
	if (osrv.sys_fd >= 0)
		close(osrv.sys_fd);
	osrv.sys_fd = -1;
	osrv.srv = NULL;
	osrv.loop = NULL;
	free(st);
	return NULL;
}

int bench_ours_server_start(const struct bench_config *cfg, int port, int *bound_port)
{
	struct server_start *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	osrv.source = bench_alloc((size_t)BENCH_SERVER_BUFS * BENCH_MAX_SIZE);
	osrv.scratch = bench_alloc(BENCH_MAX_SIZE);
	if (!osrv.source || !osrv.scratch) {
		free(st);
		return -ENOMEM;
	}
	bench_fill(osrv.source, (size_t)BENCH_SERVER_BUFS * BENCH_MAX_SIZE);
	st->cfg = cfg;
	snprintf(st->port, sizeof(st->port), "%d", port);
	osrv.ready = false;
	if (pthread_create(&osrv.tid, NULL, server_thread, st)) {
		free(st);
		return -EAGAIN;
	}
	pthread_mutex_lock(&osrv.lock);
	while (!osrv.ready)
		pthread_cond_wait(&osrv.cond, &osrv.lock);
	pthread_mutex_unlock(&osrv.lock);
	if (osrv.rc) {
		pthread_join(osrv.tid, NULL);
		return osrv.rc;
	}
	*bound_port = osrv.port;
	return 0;
}

static void stop_loop(void *arg)
{
	rpcrdma_loop_stop(arg);
}

void bench_ours_server_stop(void)
{
	if (!osrv.loop)
		return;
	rpcrdma_loop_wake(osrv.loop, stop_loop, osrv.loop);
	pthread_join(osrv.tid, NULL);
	free(osrv.source);
	free(osrv.scratch);
	osrv.source = osrv.scratch = NULL;
}

/*
 * Client.  A slot is one call kept in flight: when it completes it is
 * started again until the deadline or the call budget is reached.
 */
struct oslot {
	struct othread *ot;
	struct rpcrdma_client *clnt;
	struct rpcrdma_call call;
	struct small_msg msg, back;
	struct bulk buf;
	uint32_t want;
};

struct othread {
	struct bench_thread *t;
	struct rpcrdma_loop *loop;
	struct rpcrdma_client *clnts[BENCH_MAX_CONNS];
	unsigned int nclnts;
	struct oslot *slots;
	unsigned int nslots;
	uint8_t *mem;
	/* The current run. */
	double deadline;
	uint64_t budget, issued, done;
	unsigned int in_flight;
	bool record;
	int error;
};

static void prepare(struct oslot *s, const struct bench_params *p)
{
	struct rpcrdma_call *c = &s->call;

	memset(c, 0, sizeof(*c));
	switch (p->wl) {
	case WL_LAT:
	case WL_RATE:
		if (p->size == 0) {
			c->proc = BENCH_NULL;
			break;
		}
		c->proc = BENCH_ECHO;
		c->encode_args = enc_small;
		c->args = &s->msg;
		c->decode_res = dec_small;
		c->res = &s->back;
		c->max_reply = p->size + 512;
		break;
	case WL_READ:
	case WL_LONGREPLY:
		c->proc = p->wl == WL_READ ? BENCH_READ : BENCH_LIST;
		c->encode_args = enc_len;
		c->args = &s->want;
		c->decode_res = p->wl == WL_READ ? dec_ddp : dec_plain;
		c->res = &s->buf;
		/* The whole reply: header and verifier, length word, data. */
		c->max_reply = p->size + 512;
		if (p->wl == WL_READ) {
			c->ddp_buf = s->buf.data;
			c->ddp_len = p->size;
		}
		break;
	case WL_WRITE:
	case WL_LONGCALL:
		c->proc = p->wl == WL_WRITE ? BENCH_WRITE : BENCH_SUM;
		c->encode_args = p->wl == WL_WRITE ? enc_ddp : enc_plain;
		c->args = &s->buf;
		c->decode_res = dec_len;
		c->res = &s->want;
		break;
	default:
		break;
	}
}

static void slot_done(struct rpcrdma_call *call, void *ctx);

static int slot_start(struct oslot *s)
{
	const struct bench_params *p = s->ot->t->p;
	struct othread *ot = s->ot;
	int rc;

	prepare(s, p);
	s->want = p->size;
	s->buf.len = p->size;
	s->msg.len = p->size;
	s->call.done = slot_done;
	s->call.ctx = s;
	rc = rpcrdma_client_call_async(s->clnt, &s->call);
	if (rc)
		return rc;
	ot->issued++;
	ot->in_flight++;
	return 0;
}

static bool keep_going(const struct othread *ot)
{
	if (ot->error)
		return false;
	if (ot->budget && ot->issued >= ot->budget)
		return false;
	return bench_now() < ot->deadline;
}

static void slot_done(struct rpcrdma_call *call, void *ctx)
{
	struct oslot *s = ctx;
	struct othread *ot = s->ot;
	int rc;

	ot->in_flight--;
	if (call->status) {
		if (!ot->error) {
			fprintf(stderr, "rpcrdma-bench: ours: call failed: %s\n",
				rpcrdma_strerror(call->status));
			ot->error = call->status;
		}
		return;
	}
	ot->done++;
	if (keep_going(ot)) {
		rc = slot_start(s);
		if (rc && !ot->error)
			ot->error = rc;
	}
}

static int ours_setup(struct bench_thread *t)
{
	const struct bench_params *p = t->p;
	struct rpcrdma_client_opts co;
	struct othread *ot = calloc(1, sizeof(*ot));
	size_t per_slot;
	char port[16];
	int rc;

	if (!ot)
		return -ENOMEM;
	t->stack = ot;
	ot->t = t;
	rc = rpcrdma_loop_create(&ot->loop);
	if (!rc)
		rc = rpcrdma_loop_set_busy_poll(ot->loop, t->cfg->busy_poll_us);
	if (rc)
		return rc;
	rpcrdma_client_opts_default(&co);
	co.transport = t->cfg->transport;
	co.provider = t->cfg->provider;
	/* What the point keeps in flight, as an application sizes its
	 * client: the server then posts receives for that many calls, not for
	 * all it could grant. */
	co.credits = p->depth ? p->depth : 1;
	if (t->cfg->inline_size)
		co.inline_send = co.inline_recv = t->cfg->inline_size;
	co.max_record = BENCH_MAX_SIZE + 65536;
	snprintf(port, sizeof(port), "%d", bench_ports.port[STACK_OURS]);
	/* -c N: this thread's connections through opts.nconnect, in clients
	 * of at most RPCRDMA_NCONNECT_MAX connections. */
	for (unsigned int left = t->nconns; left; left -= co.nconnect) {
		unsigned int i = ot->nclnts++;

		co.nconnect = left < RPCRDMA_NCONNECT_MAX ? left : RPCRDMA_NCONNECT_MAX;
		rc = rpcrdma_client_create(ot->loop, t->cfg->host, port, BENCH_PROG, BENCH_VERS,
					   &co, &ot->clnts[i]);
		if (!rc)
			rc = rpcrdma_client_connect(ot->clnts[i]);
		if (rc) {
			fprintf(stderr, "rpcrdma-bench: ours: connect %s:%s: %s\n", t->cfg->host,
				port, rpcrdma_strerror(rc));
			return rc;
		}
	}
	ot->nslots = t->nconns * p->depth;
	ot->slots = calloc(ot->nslots, sizeof(*ot->slots));
	if (!ot->slots)
		return -ENOMEM;
	/* Each call in flight has a buffer of its own, as an application's
	 * would: sharing one would flatter the cache. */
	per_slot = p->wl == WL_LAT || p->wl == WL_RATE ? 0 : ((size_t)p->size + 4095) & ~4095ul;
	if (per_slot) {
		ot->mem = bench_alloc(per_slot * ot->nslots);
		if (!ot->mem)
			return -ENOMEM;
		bench_fill(ot->mem, per_slot * ot->nslots);
	}
	for (unsigned int i = 0; i < ot->nslots; i++) {
		struct oslot *s = &ot->slots[i];

		s->ot = ot;
		s->clnt = ot->clnts[i % ot->nclnts];
		s->buf.data = ot->mem ? ot->mem + per_slot * i : NULL;
		bench_fill(s->msg.data, sizeof(s->msg.data));
	}
	/* The first reply on each connection brings the server's real credit
	 * grant; one call at a time goes round a client's connections. */
	for (unsigned int i = 0; i < t->nconns; i++) {
		struct rpcrdma_call c;

		memset(&c, 0, sizeof(c));
		c.proc = BENCH_NULL;
		rc = rpcrdma_client_call(ot->clnts[i % ot->nclnts], &c);
		if (rc)
			return rc;
	}
	return 0;
}

/* One call at a time, each timed: the latency workload. */
static int run_sync(struct othread *ot, struct bench_thread *t)
{
	struct oslot *s = &ot->slots[0];
	int rc;

	while (keep_going(ot)) {
		double t0 = bench_now(), dt;

		prepare(s, t->p);
		s->want = t->p->size;
		s->buf.len = t->p->size;
		s->msg.len = t->p->size;
		ot->issued++;
		rc = rpcrdma_client_call(s->clnt, &s->call);
		dt = bench_now() - t0;
		if (rc) {
			fprintf(stderr, "rpcrdma-bench: ours: call failed: %s\n",
				rpcrdma_strerror(rc));
			return rc;
		}
		ot->done++;
		if (ot->record && t->lat_n < t->lat_cap)
			t->lat_us[t->lat_n++] = dt * 1e6;
		if (ot->record && t->lat_n >= t->lat_cap)
			break;
	}
	return 0;
}

static int ours_run(struct bench_thread *t, double deadline, uint64_t max_calls, bool record)
{
	struct othread *ot = t->stack;
	int rc = 0;

	ot->deadline = deadline;
	ot->budget = max_calls;
	ot->issued = ot->done = 0;
	ot->record = record;
	ot->error = 0;
	if (t->p->wl == WL_LAT) {
		rc = run_sync(ot, t);
	} else {
		for (unsigned int i = 0; i < ot->nslots && keep_going(ot); i++) {
			rc = slot_start(&ot->slots[i]);
			if (rc) {
				ot->error = rc;
				break;
			}
		}
		/* The deadline is checked as calls complete; the loop time-out
		 * only bounds a wait that should never come. */
		while (ot->in_flight) {
			int n = rpcrdma_loop_run_once(ot->loop, 1000);

			if (n < 0) {
				rc = n;
				break;
			}
			if (n == 0 && bench_now() > deadline + 30) {
				rc = -ETIMEDOUT;
				break;
			}
		}
		if (!rc)
			rc = ot->error;
	}
	t->calls += ot->done;
	return rc;
}

static int ours_server_cpu(struct bench_thread *t, double *cpu_s)
{
	struct othread *ot = t->stack;
	struct rpcrdma_call c;
	uint64_t us = 0;
	int rc;

	memset(&c, 0, sizeof(c));
	c.proc = BENCH_CPU;
	c.decode_res = dec_u64;
	c.res = &us;
	rc = rpcrdma_client_call(ot->clnts[0], &c);
	*cpu_s = (double)us / 1e6;
	return rc;
}

static void ours_client_work(struct bench_thread *t, struct bench_work *w)
{
	struct othread *ot = t->stack;

	w->ops_valid = true;
	for (unsigned int i = 0; i < t->nconns; i++) {
		struct rpcrdma_xprt_stats st;

		if (!ot->clnts[i] || rpcrdma_client_stats(ot->clnts[i], &st)) {
			w->ops_valid = false;
			continue;
		}
		w->v[BW_sends] += st.prov_sends;
		w->v[BW_recvs] += st.prov_recvs;
		w->v[BW_reads] += st.prov_reads;
		w->v[BW_writes] += st.prov_writes;
		w->v[BW_grants] += st.prov_grants;
		w->v[BW_revokes] += st.prov_revokes;
		w->v[BW_regs] += st.prov_reg_mrs;
		w->v[BW_deregs] += st.prov_dereg_mrs;
		w->v[BW_inline_msgs] += st.inline_msgs;
		w->v[BW_read_chunk_msgs] += st.read_chunk_msgs;
		w->v[BW_long_calls] += st.long_calls;
		w->v[BW_write_chunk_msgs] += st.write_chunk_msgs;
		w->v[BW_reply_chunk_msgs] += st.reply_chunk_msgs;
		w->v[BW_long_replies] += st.long_replies;
	}
}

static int ours_server_work(struct bench_thread *t, struct bench_work *w)
{
	struct othread *ot = t->stack;
	struct rpcrdma_call c;

	memset(&c, 0, sizeof(c));
	c.proc = BENCH_WORK;
	c.decode_res = dec_work;
	c.res = w;
	return rpcrdma_client_call(ot->clnts[0], &c);
}

static void ours_teardown(struct bench_thread *t)
{
	struct othread *ot = t->stack;

	if (!ot)
		return;
	for (unsigned int i = 0; i < BENCH_MAX_CONNS; i++) {
		if (ot->clnts[i])
			rpcrdma_client_destroy(ot->clnts[i]);
	}
	if (ot->loop)
		rpcrdma_loop_destroy(ot->loop);
	free(ot->slots);
	free(ot->mem);
	free(ot);
	t->stack = NULL;
}

const struct bench_stack_ops bench_ours_ops = {
	.name = "ours",
	.setup = ours_setup,
	.run = ours_run,
	.server_cpu = ours_server_cpu,
	.teardown = ours_teardown,
	.threads_for = NULL,
	.client_work = ours_client_work,
	.server_work = ours_server_work,
};

int bench_ours_stop_remote(const struct bench_config *cfg)
{
	struct rpcrdma_loop *loop = NULL;
	struct rpcrdma_client *clnt = NULL;
	struct rpcrdma_client_opts co;
	struct rpcrdma_call c;
	char port[16];
	int rc;

	rpcrdma_client_opts_default(&co);
	co.transport = cfg->transport;
	co.provider = cfg->provider;
	co.timeout_ms = 5000;
	snprintf(port, sizeof(port), "%d", bench_ports.port[STACK_OURS]);
	rc = rpcrdma_loop_create(&loop);
	if (!rc)
		rc = rpcrdma_client_create(loop, cfg->host, port, BENCH_PROG, BENCH_VERS, &co,
					   &clnt);
	if (!rc) {
		memset(&c, 0, sizeof(c));
		c.proc = BENCH_STOP;
		rc = rpcrdma_client_call(clnt, &c);
	}
	if (clnt)
		rpcrdma_client_destroy(clnt);
	if (loop)
		rpcrdma_loop_destroy(loop);
	return rc;
}
