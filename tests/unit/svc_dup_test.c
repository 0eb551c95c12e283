/*
 * The server core's duplicate request cache seen from a transport: a fake
 * transport (rpcrdma__server_create_on) hands the core calls and records
 * what each one got, a reply or nothing.  A duplicate the core waits with
 * (parked on its original) must be answered whatever way the original
 * ends: over RDMA a client sends a call again only after its connection
 * was lost, so a duplicate dropped on a live connection is a reply lost
 * until the client's time-out.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/list.h"
#include "rpc/core.h"
#include "rpc/drc.h"
#include "rpc/svc_internal.h"
#include "rpc/transport.h"
#include "rpc/loop_internal.h"
#include "rpcrdma/loop.h"
#include "rpcrdma/rpc.h"
#include "rpcrdma/rpc_msg.h"

#define PROG 0x20000123u
#define VERS 1u
#define P_LATER 1u /* deferred; its results never encode */

/* One call handed to the core, and what became of it. */
struct fake_req {
	struct rpcrdma__sreq t;
	uint8_t call[256];
	size_t call_len;
	uint8_t reply[4096];
	bool closed; /* its connection is gone: reply_begin fails */
	bool nomem;  /* reply_begin fails for want of memory, connection up */
	bool sent, dropped, lost;
	int lost_err;
	size_t reply_len;
};

static struct rpcrdma_svc_req *deferred; /* the last call P_LATER kept */
static int fake_transport;               /* *out of make: any address will do */
static const struct rpcrdma__svc_cb *core_cb;
static void *core_ctx;

static int fake_reply_begin(struct rpcrdma__sreq *t)
{
	struct fake_req *f = rpcrdma__container_of(t, struct fake_req, t);

	if (f->closed)
		return -ENOTCONN;
	if (f->nomem)
		return -ENOMEM;
	rpcrdma_xdr_init(&t->reply, f->reply, sizeof(f->reply));
	return 0;
}

static int fake_reply_send(struct rpcrdma__sreq *t)
{
	struct fake_req *f = rpcrdma__container_of(t, struct fake_req, t);

	f->sent = true;
	f->reply_len = rpcrdma_xdr_pos(&t->reply);
	if (t->done)
		t->done(t->done_ctx);
	return 0;
}

static void fake_reply_drop(struct rpcrdma__sreq *t)
{
	struct fake_req *f = rpcrdma__container_of(t, struct fake_req, t);

	f->dropped = true;
	if (t->done)
		t->done(t->done_ctx);
}

static void fake_reply_lost(struct rpcrdma__sreq *t, int err)
{
	struct fake_req *f = rpcrdma__container_of(t, struct fake_req, t);

	f->lost = true;
	f->lost_err = err;
	if (t->done)
		t->done(t->done_ctx);
}

static int fake_port(struct rpcrdma__svc_transport *t)
{
	(void)t;
	return 0;
}

static void fake_destroy(struct rpcrdma__svc_transport *t)
{
	(void)t;
}

static void fake_stats(struct rpcrdma__svc_transport *t, struct rpcrdma_xprt_stats *out)
{
	(void)t;
	memset(out, 0, sizeof(*out));
}

static const struct rpcrdma__svc_transport_ops fake_ops = {
    .name = "fake",
    .port = fake_port,
    .reply_begin = fake_reply_begin,
    .reply_send = fake_reply_send,
    .reply_drop = fake_reply_drop,
    .reply_lost = fake_reply_lost,
    .destroy = fake_destroy,
    .stats = fake_stats,
};

static int fake_make(void *arg, const struct rpcrdma__svc_cb *cb, void *cb_ctx,
		     struct rpcrdma__svc_transport **out)
{
	(void)arg;
	core_cb = cb;
	core_ctx = cb_ctx;
	*out = (struct rpcrdma__svc_transport *)(void *)&fake_transport;
	return 0;
}

static int dec_u32(struct rpcrdma_xdr_stream *x, void *o)
{
	return rpcrdma_xdr_decode_u32(x, o);
}

/* Results no reply can carry: the encoder refuses them (not for lack of
 * room), as a procedure's own encoder may. */
static int enc_fail(struct rpcrdma_xdr_stream *x, void *o)
{
	(void)x;
	(void)o;
	return -EINVAL;
}

static int proc_later(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)args;
	(void)res;
	deferred = req;
	return RPCRDMA_SVC_DEFERRED;
}

static const struct rpcrdma_svc_proc procs[] = {
    [0] = {NULL, NULL, 0, NULL, 0, NULL},
    [P_LATER] = {proc_later, dec_u32, sizeof(uint32_t), enc_fail, sizeof(uint32_t), NULL},
};

static const struct sockaddr_in peer = {
    .sin_family = AF_INET,
    .sin_port = 0x1234,
    .sin_addr = {.s_addr = 0x0100007f}, /* 127.0.0.1, network order */
};

/* Hands the core call @proc with XID @xid and argument @arg on @f. */
static void send_call(struct fake_req *f, uint32_t xid, uint32_t proc, uint32_t arg)
{
	struct rpcrdma_rpc_call hdr;
	struct rpcrdma_xdr_stream x;

	memset(&hdr, 0, sizeof(hdr));
	hdr.prog = PROG;
	hdr.vers = VERS;
	hdr.proc = proc;
	rpcrdma_auth_none(&hdr.cred);
	rpcrdma_auth_none(&hdr.verf);
	rpcrdma_xdr_init(&x, f->call, sizeof(f->call));
	assert_int_equal(rpcrdma_rpc_encode_call(&x, xid, &hdr), 0);
	assert_int_equal(rpcrdma_xdr_encode_u32(&x, arg), 0);
	f->call_len = rpcrdma_xdr_pos(&x);
	f->t.peer = (const struct sockaddr *)&peer;
	rpcrdma_xdr_init(&x, f->call, f->call_len);
	core_cb->call(core_ctx, &f->t, &x);
}

/* The accept_stat of the reply @f got. */
static uint32_t accept_stat(const struct fake_req *f)
{
	struct rpcrdma_xdr_stream x;
	struct rpcrdma_rpc_msg m;

	assert_true(f->sent);
	rpcrdma_xdr_init(&x, (void *)f->reply, f->reply_len);
	assert_int_equal(rpcrdma_rpc_decode_msg(&x, &m), 0);
	assert_int_equal(m.type, RPCRDMA_RPC_REPLY);
	assert_int_equal(m.u.reply.stat, RPCRDMA_RPC_MSG_ACCEPTED);
	return m.u.reply.accept_stat;
}

static struct rpcrdma_server *server_up(struct rpcrdma_loop **loop)
{
	struct rpcrdma_server_opts so;
	struct rpcrdma_server *srv;

	assert_int_equal(rpcrdma_loop_create(loop), 0);
	rpcrdma_server_opts_default(&so);
	assert_int_equal(rpcrdma__server_create_on(*loop, &so, &fake_ops, fake_make, NULL, &srv),
			 0);
	assert_int_equal(rpcrdma_server_register(srv, PROG, VERS, procs, 2), 0);
	return srv;
}

/*
 * The original's connection closed while it ran, its retransmission waits
 * parked on it, and its results fail to encode.  Had its connection stayed
 * the client would have had SYSTEM_ERR (send_reply falls back to it); the
 * retransmission must get that answer too, not be dropped.
 */
static void test_parked_gets_system_err(void **state)
{
	static struct fake_req orig, dup;
	struct rpcrdma_server *srv;
	struct rpcrdma_loop *loop;

	(void)state;
	srv = server_up(&loop);
	send_call(&orig, 0x51, P_LATER, 7);
	assert_non_null(deferred);
	orig.closed = true;
	send_call(&dup, 0x51, P_LATER, 7); /* the same call again: parked */
	assert_false(dup.sent || dup.dropped);
	assert_int_equal(rpcrdma_svc_reply(deferred, 0), 0);
	assert_true(orig.lost); /* its connection is gone */
	assert_int_equal(orig.lost_err, -ENOTCONN);
	assert_false(dup.dropped || dup.lost);
	assert_int_equal(accept_stat(&dup), RPCRDMA_RPC_SYSTEM_ERR);
	rpcrdma_server_destroy(srv);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/*
 * Duplicates reach the server in the order their connections deliver
 * them, not the order the client sent them: a copy sent on a connection
 * the client has since lost may arrive after the copy on its new one.
 * Every duplicate parked on the original gets its reply; the one on the
 * live connection must not be dropped for a later-arriving older copy.
 */
static void test_every_parked_answered(void **state)
{
	static struct fake_req orig, newest, older;
	struct rpcrdma_server *srv;
	struct rpcrdma_loop *loop;

	(void)state;
	deferred = NULL;
	srv = server_up(&loop);
	send_call(&orig, 0x77, P_LATER, 9);
	assert_non_null(deferred);
	orig.closed = true;
	send_call(&newest, 0x77, P_LATER, 9); /* on the client's live connection */
	older.closed = true;
	send_call(&older, 0x77, P_LATER, 9); /* late, from a connection already lost */
	assert_false(newest.dropped || newest.lost);
	assert_int_equal(rpcrdma_svc_reply(deferred, 0), 0);
	assert_false(newest.dropped || newest.lost);
	assert_int_equal(accept_stat(&newest), RPCRDMA_RPC_SYSTEM_ERR);
	assert_true(older.lost || older.sent);
	rpcrdma_server_destroy(srv);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/*
 * With worker loops a retransmission that reaches another worker than its
 * original's watches the shared cache until the original's reply is there.
 * When the cache no longer has the entry by then (evicted for newer calls),
 * the duplicate must not be dropped: over a live connection the client
 * sends nothing again before its time-out.  It runs the call, as a
 * retransmission arriving after the eviction would be.
 */
#define W_LATER 1u /* deferred, answered LATER_MS later with its run count */
#define LATER_MS 300u

static struct {
	struct rpcrdma_loop *main_loop;
	struct rpcrdma_server *srv;
	struct rpcrdma_client *cut;
	atomic_uint execs;
	atomic_bool other_held, evicted;
} wk;

struct later {
	struct rpcrdma_svc_req *req;
	uint32_t *res;
	struct rpcrdma__timer timer;
};

/* On the other worker's thread: no look at the cache until the entry is
 * gone, so the watcher's timing cannot matter. */
static void hold_other(void *arg)
{
	(void)arg;
	atomic_store(&wk.other_held, true);
	while (!atomic_load(&wk.evicted))
		usleep(1000);
}

/* A call of no one's takes the cache's only entry, evicting the answered
 * one, as a stream of newer calls would. */
static void evict_all(void)
{
	struct rpcrdma__drc_entry *e;
	struct rpcrdma__drc_key key;

	rpcrdma__drc_key_init(&key, 0xdead, PROG, VERS, W_LATER, NULL, NULL);
	pthread_mutex_lock(&wk.srv->drc_lock);
	assert_int_equal(rpcrdma__drc_lookup(wk.srv->drc, &key, &e), RPCRDMA__DRC_NEW);
	rpcrdma__drc_forget(wk.srv->drc, e);
	pthread_mutex_unlock(&wk.srv->drc_lock);
}

static void later_answer(struct rpcrdma__timer *tm)
{
	struct later *l = tm->ctx;
	bool first = !atomic_load(&wk.evicted);
	struct rpcrdma_loop *other = NULL;

	if (first) {
		for (unsigned int i = 0; i < wk.srv->nworkers; i++) {
			if (wk.srv->workers[i].loop != rpcrdma_svc_loop(l->req))
				other = wk.srv->workers[i].loop;
		}
		assert_non_null(other);
		assert_int_equal(rpcrdma_loop_wake(other, hold_other, NULL), 0);
		while (!atomic_load(&wk.other_held))
			usleep(1000);
	}
	*l->res = atomic_load(&wk.execs);
	assert_int_equal(rpcrdma_svc_reply(l->req, 0), 0);
	free(l);
	if (first) {
		evict_all();
		atomic_store(&wk.evicted, true);
	}
}

/* On the client's (main) thread: the original's reply will be lost. */
static void cut_client(void *arg)
{
	(void)arg;
	rpcrdma__client_disconnect(wk.cut);
}

static int w_later(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct later *l = calloc(1, sizeof(*l));

	(void)args;
	assert_non_null(l);
	l->req = req;
	l->res = res;
	if (atomic_fetch_add(&wk.execs, 1) == 0)
		assert_int_equal(rpcrdma_loop_wake(wk.main_loop, cut_client, NULL), 0);
	rpcrdma__timer_start(rpcrdma_svc_loop(req), &l->timer, LATER_MS, later_answer, l);
	return RPCRDMA_SVC_DEFERRED;
}

static int enc_u32(struct rpcrdma_xdr_stream *x, void *o)
{
	return rpcrdma_xdr_encode_u32(x, *(uint32_t *)o);
}

static const struct rpcrdma_svc_proc wprocs[] = {
    [0] = {NULL, NULL, 0, NULL, 0, NULL},
    [W_LATER] = {w_later, dec_u32, sizeof(uint32_t), enc_u32, sizeof(uint32_t), NULL},
};

struct async_call {
	struct rpcrdma_call call;
	uint32_t arg, res;
	bool done;
};

static void async_done(struct rpcrdma_call *call, void *ctx)
{
	(void)call;
	((struct async_call *)ctx)->done = true;
}

static void test_watcher_runs_evicted(void **state)
{
	struct rpcrdma_client_opts co;
	struct rpcrdma_server_opts so;
	struct rpcrdma_xprt_stats st;
	struct async_call once;
	struct rpcrdma_client *c;
	char port[16];

	(void)state;
	assert_int_equal(rpcrdma_loop_create(&wk.main_loop), 0);
	rpcrdma_server_opts_default(&so);
	so.transport = RPCRDMA_TRANSPORT_TCP;
	so.workers = 2;      /* connections in turn: the reconnection goes to the other */
	so.drc_entries = 1; /* the next call's entry evicts an answered one */
	assert_int_equal(rpcrdma_server_create(wk.main_loop, "127.0.0.1", "0", &so, &wk.srv), 0);
	assert_int_equal(rpcrdma_server_register(wk.srv, PROG, VERS, wprocs, 2), 0);
	snprintf(port, sizeof(port), "%d", rpcrdma_server_port(wk.srv));
	rpcrdma_client_opts_default(&co);
	co.transport = RPCRDMA_TRANSPORT_TCP;
	assert_int_equal(rpcrdma_client_create(wk.main_loop, "127.0.0.1", port, PROG, VERS, &co, &c),
			 0);
	wk.cut = c;

	memset(&once, 0, sizeof(once));
	once.call.proc = W_LATER;
	once.call.encode_args = enc_u32;
	once.call.args = &once.arg;
	once.call.decode_res = dec_u32;
	once.call.res = &once.res;
	once.call.timeout_ms = 5000;
	once.call.done = async_done;
	once.call.ctx = &once;
	assert_int_equal(rpcrdma_client_call_async(c, &once.call), 0);
	/* The connection is cut at once; the retransmission reaches the other
	 * worker while the original runs, and watches.  The original is
	 * answered, its entry evicted, and only then may the watcher look. */
	while (!once.done)
		assert_true(rpcrdma_loop_run_once(wk.main_loop, 100) >= 0);
	assert_true(atomic_load(&wk.evicted));
	assert_int_equal(once.call.status, 0);
	assert_int_equal(once.res, 2); /* ran again: its first reply was gone */
	assert_int_equal(rpcrdma_server_stats(wk.srv, &st), 0);
	assert_true(st.retransmits >= 1);

	rpcrdma_server_destroy(wk.srv);
	rpcrdma_client_destroy(c);
	assert_int_equal(rpcrdma_loop_destroy(wk.main_loop), 0);
}

/*
 * A reply owed on a live connection that cannot be built (no memory for
 * it), fresh or from the cache, is reported lost, never merely dropped:
 * the transport then closes the connection (RFC 8166 5.5.4), without which
 * an RDMA client would wait out its time-out with a credit held.
 */
static void test_no_memory_is_lost(void **state)
{
	static struct fake_req fresh, cached, dup;
	struct rpcrdma_server *srv;
	struct rpcrdma_loop *loop;

	(void)state;
	deferred = NULL;
	srv = server_up(&loop);
	send_call(&fresh, 0x90, P_LATER, 1);
	assert_non_null(deferred);
	fresh.nomem = true;
	assert_int_equal(rpcrdma_svc_reply(deferred, 0), 0);
	assert_true(fresh.lost);
	assert_int_equal(fresh.lost_err, -ENOMEM);
	assert_false(fresh.dropped || fresh.sent);

	/* A call answered (SYSTEM_ERR, cached), then its retransmission on a
	 * connection with no memory for the cached copy. */
	deferred = NULL;
	send_call(&cached, 0x91, P_LATER, 2);
	assert_non_null(deferred);
	assert_int_equal(rpcrdma_svc_reply(deferred, 0), 0);
	assert_int_equal(accept_stat(&cached), RPCRDMA_RPC_SYSTEM_ERR);
	dup.nomem = true;
	send_call(&dup, 0x91, P_LATER, 2);
	assert_true(dup.lost);
	assert_int_equal(dup.lost_err, -ENOMEM);
	assert_false(dup.dropped || dup.sent);
	rpcrdma_server_destroy(srv);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parked_gets_system_err),
	    cmocka_unit_test(test_every_parked_answered),
	    cmocka_unit_test(test_watcher_runs_evicted),
	    cmocka_unit_test(test_no_memory_is_lost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
