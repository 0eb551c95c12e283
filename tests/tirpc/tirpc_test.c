/*
 * The TI-RPC layer: libtirpc's XDR routines on our streams (item counting
 * for DDP, padding, truncated input at every length), and a CLIENT against
 * a dispatch on our server over TCP: results, the svcerr_*() answers as
 * clnt_call() statuses, svc_getcaller(), clnt_control(), time-outs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tirpc/tirpc_xdr.h"

/* A message of three opaques and an int: (string, opaque, int, opaque). */
struct msg {
	char *name;
	u_int alen;
	char *a;
	int n;
	u_int blen;
	char *b;
};

static bool_t xdr_msg(XDR *x, struct msg *m)
{
	return xdr_string(x, &m->name, 64) && xdr_bytes(x, &m->a, &m->alen, 1 << 20) &&
	       xdr_int(x, &m->n) && xdr_bytes(x, &m->b, &m->blen, 1 << 20);
}

/* A DDP context that takes every item it is offered and records it. */
struct rec {
	struct rpcrdma_xdr_ddp base;
	unsigned int n;
	size_t pos[4];
	uint32_t len[4];
	const void *data[4];
};

static int rec_encode(struct rpcrdma_xdr_ddp *d, size_t pos, const void *data, uint32_t len)
{
	struct rec *r = (struct rec *)d;

	if (r->n == 4)
		return 0;
	r->pos[r->n] = pos;
	r->len[r->n] = len;
	r->data[r->n++] = data;
	return 1;
}

/* Decoding: the item at the recorded position was "placed": copy it. */
static int rec_decode(struct rpcrdma_xdr_ddp *d, size_t pos, void *buf, uint32_t len)
{
	struct rec *r = (struct rec *)d;

	for (unsigned int i = 0; i < r->n; i++)
		if (r->pos[i] == pos) {
			if (r->len[i] != len)
				return RPCRDMA_ERR_BAD_VALUE;
			memcpy(buf, r->data[i], len);
			return 1;
		}
	return 0;
}

static const struct rpcrdma_xdr_ddp_ops rec_ops = {rec_encode, rec_decode};

static void encode_msg(struct msg *m, uint32_t items, uint8_t *buf, size_t size, size_t *len,
		       struct rec *r)
{
	struct rpcrdma_xdr_stream s;
	struct rpcrdma__txdr t;
	XDR x;

	rpcrdma_xdr_init(&s, buf, size);
	rpcrdma_xdr_set_ddp(&s, &r->base);
	rpcrdma__txdr_init(&x, &t, &s, XDR_ENCODE, items);
	assert_true(xdr_msg(&x, m));
	*len = rpcrdma_xdr_pos(&s);
}

static void test_items_and_padding(void **state)
{
	char a[7] = "abcdefg", b[5] = "vwxyz";
	uint8_t buf[256];
	(void)state;

	/* Every odd length, every mask: the bytes equal libtirpc's own
	 * xdrmem encoding outside the items taken, and decode back. */
	for (u_int alen = 1; alen <= 7; alen++) {
		for (uint32_t items = 0; items < 8; items++) {
			struct msg m = {"key", alen, a, -5, 5, b}, out;
			struct rec r = {{&rec_ops}, 0, {0}, {0}, {0}};
			uint8_t ref[256];
			size_t len, rlen;
			XDR mx;

			encode_msg(&m, items, buf, sizeof(buf), &len, &r);
			xdrmem_create(&mx, (char *)ref, sizeof(ref), XDR_ENCODE);
			assert_true(xdr_msg(&mx, &m));
			rlen = xdr_getpos(&mx);
			/* Items taken leave the stream, padding included. */
			size_t taken = 0;
			for (unsigned int i = 0; i < r.n; i++)
				taken += rpcrdma_xdr_align(r.len[i]);
			assert_int_equal(len + taken, rlen);
			assert_int_equal(r.n, __builtin_popcount(items & 7));
			if (items == 0)
				assert_memory_equal(buf, ref, rlen);
			if (items & 2) /* item 1 is a: its length word stays */
				assert_int_equal(r.len[(items & 1) ? 1 : 0], alen);

			struct rpcrdma_xdr_stream s;
			struct rpcrdma__txdr t;
			XDR x;

			memset(&out, 0, sizeof(out));
			rpcrdma_xdr_init(&s, buf, len);
			rpcrdma_xdr_set_ddp(&s, &r.base);
			rpcrdma__txdr_init(&x, &t, &s, XDR_DECODE, items);
			assert_true(xdr_msg(&x, &out));
			assert_int_equal(rpcrdma_xdr_remaining(&s), 0);
			assert_string_equal(out.name, "key");
			assert_int_equal(out.alen, alen);
			assert_memory_equal(out.a, a, alen);
			assert_int_equal(out.n, -5);
			assert_int_equal(out.blen, 5);
			assert_memory_equal(out.b, b, 5);
			xdr_free((xdrproc_t)xdr_msg, (char *)&out);
		}
	}
}

static void test_truncated_everywhere(void **state)
{
	char a[3] = "abc", b[9] = "123456789";
	struct msg m = {"name", 3, a, 1, 9, b};
	struct rec r = {{&rec_ops}, 0, {0}, {0}, {0}};
	uint8_t buf[256];
	size_t len;
	(void)state;

	encode_msg(&m, 0, buf, sizeof(buf), &len, &r);
	for (size_t cut = 0; cut < len; cut++) {
		struct rpcrdma_xdr_stream s;
		struct rpcrdma__txdr t;
		struct msg out;
		XDR x;

		memset(&out, 0, sizeof(out));
		rpcrdma_xdr_init_const(&s, buf, cut);
		rpcrdma__txdr_init(&x, &t, &s, XDR_DECODE, 0);
		assert_false(xdr_msg(&x, &out));
		assert_int_not_equal(t.err, 0);
		xdr_free((xdrproc_t)xdr_msg, (char *)&out);
	}
	/* A length word beyond the routine's bound is refused before any allocation. */
	{
		uint8_t big[] = {0, 0, 0, 1, 'x', 0, 0, 0, 0x7f, 0xff, 0xff, 0xff};
		struct rpcrdma_xdr_stream s;
		struct rpcrdma__txdr t;
		struct msg out;
		XDR x;

		memset(&out, 0, sizeof(out));
		rpcrdma_xdr_init_const(&s, big, sizeof(big));
		rpcrdma__txdr_init(&x, &t, &s, XDR_DECODE, 0);
		assert_false(xdr_msg(&x, &out));
		xdr_free((xdrproc_t)xdr_msg, (char *)&out);
	}
}

static void test_encode_nospace(void **state)
{
	char a[40] = {0}, b[1] = {1};
	struct msg m = {"k", 40, a, 2, 1, b};
	uint8_t buf[64];
	struct rpcrdma_xdr_stream s;
	struct rpcrdma__txdr t;
	XDR x;
	(void)state;

	rpcrdma_xdr_init(&s, buf, 32);
	rpcrdma__txdr_init(&x, &t, &s, XDR_ENCODE, 0);
	assert_false(xdr_msg(&x, &m));
	assert_int_equal(t.err, RPCRDMA_ERR_NOSPACE);
	assert_int_equal(xdr_getpos(&x), rpcrdma_xdr_pos(&s));
	assert_false(xdr_setpos(&x, 0));
	assert_null(xdr_inline(&x, 4));
}

/*
 * An int that decoding allocates and XDR_FREE frees, counting how many
 * are live (the dispatch runs on the server's thread): what a failed
 * decode leaves behind shows in the count.
 */
static atomic_int tracked_live;

static bool_t xdr_tracked(XDR *x, int **p)
{
	if (x->x_op == XDR_FREE) {
		if (*p) {
			free(*p);
			*p = NULL;
			tracked_live--;
		}
		return TRUE;
	}
	if (x->x_op == XDR_DECODE && !*p) {
		*p = malloc(sizeof(**p));
		if (!*p)
			return FALSE;
		tracked_live++;
	}
	return xdr_int(x, *p);
}

/* Two tracked ints, then libtirpc's own allocations: a string and bytes. */
struct tracked_args {
	int *first, *second;
	char *name;
	u_int blen;
	char *b;
};

static bool_t xdr_tracked_args(XDR *x, struct tracked_args *a)
{
	return xdr_tracked(x, &a->first) && xdr_tracked(x, &a->second) &&
	       xdr_string(x, &a->name, 64) && xdr_bytes(x, &a->b, &a->blen, 1 << 20);
}

/* What a hostile client sends for tracked_args: valid leading items, then
 * bytes whose length promises 1000 and which carry 8. */
static bool_t xdr_truncated_args(XDR *x, void *unused)
{
	int v = 7;
	char *name = "leading";
	u_int promised = 1000;
	char part[8] = {0};
	(void)unused;

	return xdr_int(x, &v) && xdr_int(x, &v) && xdr_string(x, &name, 64) &&
	       xdr_u_int(x, &promised) && xdr_opaque(x, part, sizeof(part));
}

/* Three tracked ints, as a client expects results that bring two. */
struct tracked_trio {
	int *a, *b, *c;
};

static bool_t xdr_tracked_trio(XDR *x, struct tracked_trio *t)
{
	return xdr_tracked(x, &t->a) && xdr_tracked(x, &t->b) && xdr_tracked(x, &t->c);
}

static bool_t xdr_int_pair(XDR *x, int *pair)
{
	return xdr_int(x, &pair[0]) && xdr_int(x, &pair[1]);
}

/* The dispatch: procedure numbers pick an answer. */
enum {
	P_NULL,
	P_ECHO,
	P_NOPROC,
	P_DECODE,
	P_SYSERR,
	P_PEER,
	P_NOPROG,
	P_SILENT,
	P_TRACKED,          /* tracked_args, as rpcgen's dispatch decodes them */
	P_TRACKED_FREEARGS, /* the same, with svc_freeargs() after a failure too */
	P_PAIR,             /* results: two ints */
	P_WHOAMI,           /* results: the AUTH_SYS uid and first gid, or -1 */
	P_ECHO_STRING,      /* arguments and results: a string */
};

/* A string of any length (xdr_wrapstring() stops at RPC_MAXDATASIZE). */
static bool_t xdr_bigstring(XDR *x, char **p)
{
	return xdr_string(x, p, ~0u);
}

static void dispatch(struct svc_req *rq, SVCXPRT *xp)
{
	struct tracked_args ta;
	struct msg in;
	int port, pair[2] = {1, 2};

	switch (rq->rq_proc) {
	case P_TRACKED:
	case P_TRACKED_FREEARGS:
		memset(&ta, 0, sizeof(ta));
		if (!svc_getargs(xp, (xdrproc_t)xdr_tracked_args, (caddr_t)&ta)) {
			if (rq->rq_proc == P_TRACKED_FREEARGS)
				svc_freeargs(xp, (xdrproc_t)xdr_tracked_args, (caddr_t)&ta);
			svcerr_decode(xp);
			return;
		}
		svc_sendreply(xp, (xdrproc_t)xdr_void, NULL);
		svc_freeargs(xp, (xdrproc_t)xdr_tracked_args, (caddr_t)&ta);
		return;
	case P_PAIR:
		svc_sendreply(xp, (xdrproc_t)xdr_int_pair, (caddr_t)pair);
		return;
	case P_WHOAMI: {
		const struct authunix_parms *aup = (const void *)rq->rq_clntcred;

		pair[0] = pair[1] = -1;
		if (rq->rq_cred.oa_flavor == AUTH_SYS && aup) {
			pair[0] = (int)aup->aup_uid;
			if (aup->aup_len > 0)
				pair[1] = (int)aup->aup_gids[0];
		}
		svc_sendreply(xp, (xdrproc_t)xdr_int_pair, (caddr_t)pair);
		return;
	}
	case P_NULL:
		svc_sendreply(xp, (xdrproc_t)xdr_void, NULL);
		return;
	case P_ECHO_STRING: {
		char *str = NULL;

		if (!svc_getargs(xp, (xdrproc_t)xdr_bigstring, (caddr_t)&str)) {
			svcerr_decode(xp);
			return;
		}
		svc_sendreply(xp, (xdrproc_t)xdr_bigstring, (caddr_t)&str);
		svc_freeargs(xp, (xdrproc_t)xdr_bigstring, (caddr_t)&str);
		return;
	}
	case P_ECHO:
		memset(&in, 0, sizeof(in));
		if (!svc_getargs(xp, (xdrproc_t)xdr_msg, (caddr_t)&in)) {
			svcerr_decode(xp);
			return;
		}
		in.n++;
		svc_sendreply(xp, (xdrproc_t)xdr_msg, (caddr_t)&in);
		svc_freeargs(xp, (xdrproc_t)xdr_msg, (caddr_t)&in);
		return;
	case P_NOPROC:
		svcerr_noproc(xp);
		return;
	case P_DECODE:
		svcerr_decode(xp);
		return;
	case P_SYSERR:
		svcerr_systemerr(xp);
		return;
	case P_PEER: {
		struct sockaddr_in6 *ca = svc_getcaller(xp);
		struct netbuf *nb = svc_getrpccaller(xp);
		struct sockaddr_in *sin = (struct sockaddr_in *)ca;

		port = sin->sin_family == AF_INET && sin->sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
			       nb->len == sizeof(*sin) && nb->buf
			   ? ntohs(sin->sin_port)
			   : -1;
		svc_sendreply(xp, (xdrproc_t)xdr_int, (caddr_t)&port);
		return;
	}
	case P_NOPROG:
		svcerr_noprog(xp);
		return;
	default:
		return; /* no reply at all */
	}
}

#define PROG 0x20000fffu

static void other_dispatch(struct svc_req *rq, SVCXPRT *xp)
{
	(void)rq;
	svcerr_systemerr(xp);
}

struct server {
	struct rpcrdma_loop *loop;
	struct rpcrdma_server *srv;
	pthread_t th;
	char port[16];
};

static void stop_cb(void *arg)
{
	rpcrdma_loop_stop(arg);
}

static void *serve(void *arg)
{
	struct server *s = arg;

	rpcrdma_loop_run(s->loop);
	return NULL;
}

static void server_start(struct server *s)
{
	struct rpcrdma_server_opts so;

	assert_int_equal(rpcrdma_loop_create(&s->loop), 0);
	rpcrdma_server_opts_default(&so);
	so.transport = RPCRDMA_TRANSPORT_TCP;
	assert_int_equal(rpcrdma_server_create(s->loop, "127.0.0.1", "0", &so, &s->srv), 0);
	assert_int_equal(rpcrdma_tirpc_svc_reg(s->srv, PROG, 1, dispatch, NULL), 0);
	/* One dispatch per program and version in a process. */
	assert_int_equal(rpcrdma_tirpc_svc_reg(s->srv, PROG, 1, other_dispatch, NULL), -EEXIST);
	assert_int_equal(rpcrdma_tirpc_svc_reg(NULL, PROG, 1, dispatch, NULL), -EINVAL);
	snprintf(s->port, sizeof(s->port), "%d", rpcrdma_server_port(s->srv));
	assert_int_equal(pthread_create(&s->th, NULL, serve, s), 0);
}

static void server_stop(struct server *s)
{
	assert_int_equal(rpcrdma_loop_wake(s->loop, stop_cb, s->loop), 0);
	pthread_join(s->th, NULL);
	rpcrdma_server_destroy(s->srv);
	assert_int_equal(rpcrdma_loop_destroy(s->loop), 0);
}

static void test_client_against_dispatch(void **state)
{
	struct timeval tv = {5, 0}, got;
	struct rpcrdma_tirpc_opts o = {0};
	struct server s;
	struct rpc_err err;
	char a[5] = "hello", b[3] = "abc";
	struct msg m = {"k", 5, a, 41, 3, b}, out;
	uint32_t v;
	int port = 0;
	CLIENT *cl;
	(void)state;

	server_start(&s);
	o.transport = RPCRDMA_TRANSPORT_TCP;
	o.service = s.port;
	cl = rpcrdma_tirpc_clnt_create("127.0.0.1", PROG, 1, &o);
	assert_non_null(cl);

	assert_int_equal(clnt_call(cl, P_NULL, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void,
				   NULL, tv),
			 RPC_SUCCESS);
	memset(&out, 0, sizeof(out));
	assert_int_equal(clnt_call(cl, P_ECHO, (xdrproc_t)xdr_msg, (caddr_t)&m,
				   (xdrproc_t)xdr_msg, (caddr_t)&out, tv),
			 RPC_SUCCESS);
	assert_int_equal(out.n, 42);
	assert_memory_equal(out.a, "hello", 5);
	assert_memory_equal(out.b, "abc", 3);
	assert_true(clnt_freeres(cl, (xdrproc_t)xdr_msg, (caddr_t)&out));

	assert_int_equal(clnt_call(cl, P_NOPROC, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void,
				   NULL, tv),
			 RPC_PROCUNAVAIL);
	clnt_geterr(cl, &err);
	assert_int_equal(err.re_status, RPC_PROCUNAVAIL);
	assert_int_equal(clnt_call(cl, P_DECODE, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void,
				   NULL, tv),
			 RPC_CANTDECODEARGS);
	assert_int_equal(clnt_call(cl, P_SYSERR, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void,
				   NULL, tv),
			 RPC_SYSTEMERROR);
	assert_int_equal(clnt_call(cl, P_NOPROG, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void,
				   NULL, tv),
			 RPC_PROGUNAVAIL);
	/* A dispatch that sends nothing: the core answers SYSTEM_ERR. */
	assert_int_equal(clnt_call(cl, P_SILENT, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void,
				   NULL, tv),
			 RPC_SYSTEMERROR);
	/* Beyond the procedures registered. */
	assert_int_equal(clnt_call(cl, RPCRDMA_TIRPC_MAX_PROCS, (xdrproc_t)xdr_void, NULL,
				   (xdrproc_t)xdr_void, NULL, tv),
			 RPC_PROCUNAVAIL);
	/* Results that do not decode as asked. */
	assert_int_equal(clnt_call(cl, P_NULL, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_int,
				   (caddr_t)&port, tv),
			 RPC_CANTDECODERES);

	assert_int_equal(clnt_call(cl, P_PEER, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_int,
				   (caddr_t)&port, tv),
			 RPC_SUCCESS);
	assert_true(port > 0);

	assert_true(clnt_control(cl, CLSET_TIMEOUT, (char *)&tv));
	assert_true(clnt_control(cl, CLGET_TIMEOUT, (char *)&got));
	assert_int_equal(got.tv_sec, 5);
	assert_true(clnt_control(cl, CLGET_XID, (char *)&v));
	assert_true(clnt_control(cl, CLGET_PROG, (char *)&v));
	assert_int_equal(v, PROG);
	assert_false(clnt_control(cl, 9999, (char *)&v));
	clnt_destroy(cl);

	/* Nobody registered there: PROG_UNAVAIL from the core. */
	cl = rpcrdma_tirpc_clnt_create("127.0.0.1", PROG + 1, 1, &o);
	assert_non_null(cl);
	assert_int_equal(clnt_call(cl, P_NULL, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void,
				   NULL, tv),
			 RPC_PROGUNAVAIL);
	clnt_destroy(cl);
	server_stop(&s);
}

/*
 * Arguments or results that fail to decode part-way leave nothing
 * allocated: a server whose client sends valid leading items and a
 * truncated one, 200 times, holds none of them afterwards (rpcgen's
 * dispatch never calls svc_freeargs() after a failed svc_getargs()), and
 * one that does call it frees nothing twice; a client whose results lack
 * their last item holds none either (and clnt_freeres() stays harmless).
 * In the ASan build LeakSanitizer also sees libtirpc's own string.
 */
static void test_decode_failure_frees(void **state)
{
	struct timeval tv = {5, 0};
	struct rpcrdma_tirpc_opts o = {0};
	struct server s;
	CLIENT *cl;
	(void)state;

	server_start(&s);
	o.transport = RPCRDMA_TRANSPORT_TCP;
	o.service = s.port;
	cl = rpcrdma_tirpc_clnt_create("127.0.0.1", PROG, 1, &o);
	assert_non_null(cl);
	for (int i = 0; i < 200; i++) {
		rpcproc_t proc = i % 2 ? P_TRACKED_FREEARGS : P_TRACKED;

		assert_int_equal(clnt_call(cl, proc, (xdrproc_t)xdr_truncated_args, NULL,
					   (xdrproc_t)xdr_void, NULL, tv),
				 RPC_CANTDECODEARGS);
	}
	assert_int_equal(tracked_live, 0);

	for (int i = 0; i < 200; i++) {
		struct tracked_trio t;

		memset(&t, 0, sizeof(t));
		assert_int_equal(clnt_call(cl, P_PAIR, (xdrproc_t)xdr_void, NULL,
					   (xdrproc_t)xdr_tracked_trio, (caddr_t)&t, tv),
				 RPC_CANTDECODERES);
		assert_null(t.a);
		assert_null(t.b);
		assert_true(clnt_freeres(cl, (xdrproc_t)xdr_tracked_trio, (caddr_t)&t));
	}
	assert_int_equal(tracked_live, 0);
	clnt_destroy(cl);
	server_stop(&s);
}

/* A listener that never answers: CLSET_TIMEOUT bounds the call. */
static void test_timeout(void **state)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct timeval tv = {0, 300000}, call_tv = {60, 0};
	struct rpcrdma_tirpc_opts o = {0};
	socklen_t len = sizeof(sin);
	char port[16];
	CLIENT *cl;
	int fd;
	(void)state;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	snprintf(port, sizeof(port), "%u", ntohs(sin.sin_port));
	o.transport = RPCRDMA_TRANSPORT_TCP;
	o.service = port;
	cl = rpcrdma_tirpc_clnt_create("127.0.0.1", PROG, 1, &o);
	assert_non_null(cl);
	assert_true(clnt_control(cl, CLSET_TIMEOUT, (char *)&tv));
	assert_int_equal(clnt_call(cl, P_NULL, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void,
				   NULL, call_tv),
			 RPC_TIMEDOUT);
	clnt_destroy(cl);
	close(fd);
}

/*
 * A time-out too long for an int of milliseconds ({LONG_MAX, 0}, "for
 * ever") waits as long as one can, not 1 ms: the multiplication by 1000
 * wrapped, negative, into the "do not wait" case.  The listener never
 * answers; a thread closes it after 300 ms, which resets the connection
 * and ends the call with another error than a time-out.
 */
struct close_later {
	int fd;
};

static void *close_after_300ms(void *arg)
{
	struct close_later *c = arg;

	usleep(300 * 1000);
	close(c->fd);
	return NULL;
}

static void huge_timeout_case(bool with_clset)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct timeval huge = {LONG_MAX, 0}, call_tv = with_clset ? (struct timeval){1, 0} : huge;
	struct rpcrdma_tirpc_opts o = {0};
	socklen_t len = sizeof(sin);
	struct close_later cl_arg;
	struct timespec t0, t1;
	enum clnt_stat st;
	pthread_t th;
	char port[16];
	CLIENT *cl;
	long ms;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cl_arg.fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(cl_arg.fd >= 0);
	assert_int_equal(bind(cl_arg.fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(cl_arg.fd, 4), 0);
	assert_int_equal(getsockname(cl_arg.fd, (struct sockaddr *)&sin, &len), 0);
	snprintf(port, sizeof(port), "%u", ntohs(sin.sin_port));
	o.transport = RPCRDMA_TRANSPORT_TCP;
	o.service = port;
	cl = rpcrdma_tirpc_clnt_create("127.0.0.1", PROG, 1, &o);
	assert_non_null(cl);
	if (with_clset)
		assert_true(clnt_control(cl, CLSET_TIMEOUT, (char *)&huge));
	assert_int_equal(pthread_create(&th, NULL, close_after_300ms, &cl_arg), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	st = clnt_call(cl, P_NULL, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void, NULL, call_tv);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(th, NULL);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	if (st == RPC_TIMEDOUT || ms < 250)
		fail_msg("%s {LONG_MAX, 0}: %s after %ld ms", with_clset ? "CLSET_TIMEOUT" : "clnt_call",
			 clnt_sperrno(st), ms);
	clnt_destroy(cl);
}

static void test_timeout_huge(void **state)
{
	(void)state;
	huge_timeout_case(false);
	huge_timeout_case(true);
}

/*
 * opts.max_reply = SIZE_MAX ("no limit of mine") with a binding that
 * offers a Write chunk: the chunk's room was added to it and wrapped to
 * res_max - 1, which the core took for the reply without its DDP item, so
 * no Reply chunk was offered for a reply whose inline part is 200 KB (the
 * default max_reply gets one).  Over RDMA (ofi).
 */
static void test_max_reply_huge_with_binding(void **state)
{
	static const struct rpcrdma_tirpc_proc procs[] = {{P_ECHO, 0, 1u << 1, 1024, false}};
	static const struct rpcrdma_tirpc_binding binding = {procs, 1};
	struct rpcrdma_tirpc_opts o = {0};
	struct rpcrdma_server_opts so;
	struct timeval tv = {10, 0};
	struct server s;
	char a[1024];
	size_t blen = 200 * 1000;
	char *b = malloc(blen);
	struct msg m = {"k", sizeof(a), a, 1, (u_int)blen, b}, out;
	CLIENT *cl;
	(void)state;

	assert_non_null(b);
	memset(a, 'a', sizeof(a));
	memset(b, 'b', blen);
	assert_int_equal(rpcrdma_loop_create(&s.loop), 0);
	rpcrdma_server_opts_default(&so);
	assert_int_equal(rpcrdma_server_create(s.loop, "127.0.0.1", "0", &so, &s.srv), 0);
	assert_int_equal(rpcrdma_tirpc_svc_reg(s.srv, PROG, 1, dispatch, &binding), 0);
	snprintf(s.port, sizeof(s.port), "%d", rpcrdma_server_port(s.srv));
	assert_int_equal(pthread_create(&s.th, NULL, serve, &s), 0);

	o.transport = RPCRDMA_TRANSPORT_RDMA;
	o.service = s.port;
	o.binding = &binding;
	o.max_reply = SIZE_MAX;
	cl = rpcrdma_tirpc_clnt_create("127.0.0.1", PROG, 1, &o);
	assert_non_null(cl);
	memset(&out, 0, sizeof(out));
	if (clnt_call(cl, P_ECHO, (xdrproc_t)xdr_msg, (caddr_t)&m, (xdrproc_t)xdr_msg,
		      (caddr_t)&out, tv) != RPC_SUCCESS)
		fail_msg("max_reply SIZE_MAX: %s", rpcrdma_tirpc_clnt_strerror(cl));
	assert_int_equal(out.n, 2);
	assert_int_equal(out.blen, blen);
	clnt_freeres(cl, (xdrproc_t)xdr_msg, (caddr_t)&out);
	clnt_destroy(cl);
	server_stop(&s);
	free(b);
}

/*
 * A client of the other transport at a server's port: clnt_sperror() says
 * the protocol is wrong, not "Failed (unspecified error)".
 */
static void test_wrong_transport_said(void **state)
{
	struct timeval tv = {5, 0};
	struct rpcrdma_tirpc_opts o = {0};
	struct server s;
	struct rpc_err err;
	CLIENT *cl;
	(void)state;

	server_start(&s);
	o.transport = RPCRDMA_TRANSPORT_RDMA;
	o.service = s.port;
	cl = rpcrdma_tirpc_clnt_create("127.0.0.1", PROG, 1, &o);
	assert_non_null(cl);
	assert_int_equal(
	    clnt_call(cl, P_NULL, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void, NULL, tv),
	    RPC_CANTSEND);
	clnt_geterr(cl, &err);
	assert_int_equal(err.re_errno, EPROTONOSUPPORT);
	assert_non_null(strstr(clnt_sperror(cl, "rdma at tcp"), strerror(EPROTONOSUPPORT)));
	clnt_destroy(cl);
	server_stop(&s);
}

/*
 * No rpcbind on the host: clnt_spcreateerror() names the cause, as
 * libtirpc's does, not the port mapper failure twice.  Skipped where an
 * rpcbind listens on 127.0.0.1.
 */
static void test_rpcbind_unreachable_said(void **state)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(111)};
	const char *text;
	int fd, rc;
	(void)state;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	rc = connect(fd, (struct sockaddr *)&sin, sizeof(sin));
	close(fd);
	if (rc == 0)
		skip();
	assert_null(rpcrdma_tirpc_clnt_create("127.0.0.1", PROG, 1, NULL));
	assert_int_equal(rpc_createerr.cf_stat, RPC_PMAPFAILURE);
	assert_int_equal(rpc_createerr.cf_error.re_status, RPC_CANTSEND);
	assert_int_equal(rpc_createerr.cf_error.re_errno, ECONNREFUSED);
	text = clnt_spcreateerror("create");
	assert_non_null(strstr(text, strerror(ECONNREFUSED)));
}

/*
 * An rpcgen client sets cl_auth (authunix_create(), or
 * authunix_create_default()) and the server sees that credential on
 * every call after; back to authnone_create(), AUTH_NONE again.
 */
static void test_authunix_credential_sent(void **state)
{
	struct timeval tv = {5, 0};
	struct rpcrdma_tirpc_opts o = {0};
	struct server s;
	gid_t gids[2] = {4242, 77};
	int who[2];
	CLIENT *cl;
	(void)state;

	server_start(&s);
	o.transport = RPCRDMA_TRANSPORT_TCP;
	o.service = s.port;
	cl = rpcrdma_tirpc_clnt_create("127.0.0.1", PROG, 1, &o);
	assert_non_null(cl);
	assert_int_equal(clnt_call(cl, P_WHOAMI, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_int_pair,
				   (caddr_t)who, tv),
			 RPC_SUCCESS);
	assert_int_equal(who[0], -1);

	auth_destroy(cl->cl_auth);
	cl->cl_auth = authunix_create("client.example", 1234, 4321, 2, gids);
	assert_non_null(cl->cl_auth);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(clnt_call(cl, P_WHOAMI, (xdrproc_t)xdr_void, NULL,
					   (xdrproc_t)xdr_int_pair, (caddr_t)who, tv),
				 RPC_SUCCESS);
		assert_int_equal(who[0], 1234);
		assert_int_equal(who[1], 4242);
	}

	/* A flavor whose credential changes per call (RPCSEC_GSS) is refused,
	 * never sent as AUTH_NONE. */
	AUTH gss = *cl->cl_auth, *sys = cl->cl_auth;
	gss.ah_cred.oa_flavor = 6;
	cl->cl_auth = &gss;
	assert_int_equal(clnt_call(cl, P_WHOAMI, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_int_pair,
				   (caddr_t)who, tv),
			 RPC_AUTHERROR);
	cl->cl_auth = sys;

	auth_destroy(cl->cl_auth);
	cl->cl_auth = authnone_create();
	assert_int_equal(clnt_call(cl, P_WHOAMI, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_int_pair,
				   (caddr_t)who, tv),
			 RPC_SUCCESS);
	assert_int_equal(who[0], -1);

	/* The caller's AUTH is the caller's to destroy, as with libtirpc's
	 * CLIENTs: the usual auth_destroy(cl->cl_auth); clnt_destroy(cl);
	 * frees it once. */
	cl->cl_auth = authunix_create_default();
	assert_non_null(cl->cl_auth);
	assert_int_equal(clnt_call(cl, P_WHOAMI, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_int_pair,
				   (caddr_t)who, tv),
			 RPC_SUCCESS);
	assert_int_equal(who[0], (int)geteuid());
	auth_destroy(cl->cl_auth);
	clnt_destroy(cl);
	server_stop(&s);
}

/* A server of its own thread with nothing registered yet. */
static void bare_server_start(struct server *s, enum rpcrdma_transport tr)
{
	struct rpcrdma_server_opts so;

	assert_int_equal(rpcrdma_loop_create(&s->loop), 0);
	rpcrdma_server_opts_default(&so);
	so.transport = tr;
	assert_int_equal(rpcrdma_server_create(s->loop, "127.0.0.1", "0", &so, &s->srv), 0);
	snprintf(s->port, sizeof(s->port), "%d", rpcrdma_server_port(s->srv));
}

static void bare_server_run(struct server *s)
{
	assert_int_equal(pthread_create(&s->th, NULL, serve, s), 0);
}

/* P_NULL on @port's server, over TCP. */
static enum clnt_stat null_call(const char *port, rpcprog_t prog)
{
	struct timeval tv = {5, 0};
	struct rpcrdma_tirpc_opts o = {0};
	enum clnt_stat st;
	CLIENT *cl;

	o.transport = RPCRDMA_TRANSPORT_TCP;
	o.service = port;
	cl = rpcrdma_tirpc_clnt_create("127.0.0.1", prog, 1, &o);
	assert_non_null(cl);
	st = clnt_call(cl, P_NULL, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void, NULL, tv);
	clnt_destroy(cl);
	return st;
}

/*
 * Registrations behave as libtirpc's svc_reg(), which keys them by
 * program, version and netid: the same dispatch again on a server is
 * accepted, another one refused; another server (transport) may take
 * another dispatch for the same program, and each serves its own; and a
 * registration ends with its server, so the program can be registered
 * anew with another dispatch afterwards.  Before, the first dispatch was
 * kept for the whole process: the second server's calls went to it, and
 * the registration after the server's end failed with -EEXIST.
 */
#define PROG_REG 0x20000ff0u
static void test_svc_reg_like_libtirpc(void **state)
{
	struct server a, b, c;
	(void)state;

	bare_server_start(&a, RPCRDMA_TRANSPORT_TCP);
	assert_int_equal(rpcrdma_tirpc_svc_reg(a.srv, PROG_REG, 1, dispatch, NULL), 0);
	assert_int_equal(rpcrdma_tirpc_svc_reg(a.srv, PROG_REG, 1, dispatch, NULL), 0);
	assert_int_equal(rpcrdma_tirpc_svc_reg(a.srv, PROG_REG, 1, other_dispatch, NULL), -EEXIST);
	bare_server_start(&b, RPCRDMA_TRANSPORT_TCP);
	assert_int_equal(rpcrdma_tirpc_svc_reg(b.srv, PROG_REG, 1, other_dispatch, NULL), 0);
	bare_server_run(&a);
	bare_server_run(&b);
	assert_int_equal(null_call(a.port, PROG_REG), RPC_SUCCESS);
	assert_int_equal(null_call(b.port, PROG_REG), RPC_SYSTEMERROR); /* other_dispatch's */
	server_stop(&a);
	server_stop(&b);

	bare_server_start(&c, RPCRDMA_TRANSPORT_TCP);
	assert_int_equal(rpcrdma_tirpc_svc_reg(c.srv, PROG_REG, 1, other_dispatch, NULL), 0);
	bare_server_run(&c);
	assert_int_equal(null_call(c.port, PROG_REG), RPC_SYSTEMERROR);
	server_stop(&c);
}

/*
 * The same registration from two threads at once is, as svc_reg() again,
 * no error for either: one registers, the other finds it.  Before, both
 * looked, found nothing, and the one whose core registration came second
 * failed with -EEXIST.
 */
#define PROG_RACE 0x20100000u
#define RACE_ROUNDS 1000

struct reg_racer {
	struct rpcrdma_server *srv;
	_Atomic unsigned int *ready; /* both threads at round i: 2 * i + 2 */
	int rc[RACE_ROUNDS];
};

static void *reg_race(void *arg)
{
	struct reg_racer *r = arg;

	for (unsigned int i = 0; i < RACE_ROUNDS; i++) {
		/* A spin rather than a barrier: both start within
		 * nanoseconds, as two threads of an application would. */
		atomic_fetch_add(r->ready, 1);
		while (atomic_load(r->ready) < 2 * i + 2)
			;
		r->rc[i] = rpcrdma_tirpc_svc_reg(r->srv, PROG_RACE + i, 1, dispatch, NULL);
	}
	return NULL;
}

static void test_svc_reg_same_concurrent(void **state)
{
	struct reg_racer racer[2];
	_Atomic unsigned int ready = 0;
	pthread_t th[2];
	struct server s;
	int failed = 0;
	(void)state;

	bare_server_start(&s, RPCRDMA_TRANSPORT_TCP);
	for (int t = 0; t < 2; t++) {
		racer[t].srv = s.srv;
		racer[t].ready = &ready;
		assert_int_equal(pthread_create(&th[t], NULL, reg_race, &racer[t]), 0);
	}
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	for (int t = 0; t < 2; t++)
		for (unsigned int i = 0; i < RACE_ROUNDS; i++)
			failed += racer[t].rc[i] != 0;
	if (failed)
		fprintf(stderr, "%d of %u concurrent registrations failed\n", failed,
			2 * RACE_ROUNDS);
	assert_int_equal(failed, 0);
	bare_server_run(&s);
	assert_int_equal(null_call(s.port, PROG_RACE), RPC_SUCCESS);
	server_stop(&s);
}

/*
 * What clnt_perror() cannot say, rpcrdma_tirpc_clnt_strerror() does: a
 * cl_auth whose credential is over RPC's limit names the limit; a reply
 * too large for the chunks offered names the server's RDMA_ERROR
 * ERR_CHUNK (and its errno reads so: EMSGSIZE, not EPROTO).
 */
static void test_causes_said(void **state)
{
	struct timeval tv = {10, 0};
	struct rpcrdma_tirpc_opts o = {0};
	struct rpc_err err;
	char big[100000], *bigp = big;
	struct server s;
	CLIENT *cl;
	(void)state;

	bare_server_start(&s, RPCRDMA_TRANSPORT_RDMA);
	assert_int_equal(rpcrdma_tirpc_svc_reg(s.srv, PROG, 1, dispatch, NULL), 0);
	bare_server_run(&s);
	o.transport = RPCRDMA_TRANSPORT_RDMA;
	o.service = s.port;
	o.max_reply = 1024; /* no Reply chunk for the echo below */
	cl = rpcrdma_tirpc_clnt_create("127.0.0.1", PROG, 1, &o);
	assert_non_null(cl);
	assert_null(rpcrdma_tirpc_clnt_strerror(NULL));

	AUTH fat = *cl->cl_auth, *none = cl->cl_auth;
	fat.ah_cred.oa_flavor = AUTH_SYS;
	fat.ah_cred.oa_length = 520;
	fat.ah_cred.oa_base = big;
	cl->cl_auth = &fat;
	assert_int_equal(
	    clnt_call(cl, P_NULL, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void, NULL, tv),
	    RPC_AUTHERROR);
	fprintf(stderr, "  %s\n", rpcrdma_tirpc_clnt_strerror(cl));
	assert_non_null(strstr(rpcrdma_tirpc_clnt_strerror(cl), "520 bytes"));
	assert_non_null(strstr(rpcrdma_tirpc_clnt_strerror(cl), "at most 400"));
	cl->cl_auth = none;

	/* An echo of 100000 bytes: beyond the inline size, no Reply chunk. */
	memset(big, 'x', sizeof(big));
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(clnt_call(cl, P_ECHO_STRING, (xdrproc_t)xdr_bigstring, (caddr_t)&bigp,
				   (xdrproc_t)xdr_void, NULL, tv),
			 RPC_CANTRECV);
	clnt_geterr(cl, &err);
	assert_int_equal(err.re_errno, EMSGSIZE);
	fprintf(stderr, "  %s\n  %s\n", clnt_sperror(cl, "echo"), rpcrdma_tirpc_clnt_strerror(cl));
	assert_non_null(strstr(rpcrdma_tirpc_clnt_strerror(cl), "ERR_CHUNK"));
	assert_int_equal(
	    clnt_call(cl, P_NULL, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void, NULL, tv),
	    RPC_SUCCESS);
	assert_string_equal(rpcrdma_tirpc_clnt_strerror(cl), "success");
	clnt_destroy(cl);
	server_stop(&s);
}

static void test_create_errors(void **state)
{
	struct rpcrdma_xprt_stats st;
	(void)state;

	assert_null(rpcrdma_tirpc_clnt_create(NULL, PROG, 1, NULL));
	assert_int_equal(rpc_createerr.cf_stat, RPC_UNKNOWNHOST);
	assert_null(rpcrdma_tirpc_clnt_create("no-such-host.invalid", PROG, 1, NULL));
	assert_int_equal(rpc_createerr.cf_stat, RPC_UNKNOWNHOST);
	assert_int_equal(rpcrdma_tirpc_clnt_stats(NULL, &st), -EINVAL);
}

/* A port getaddrinfo() would keep 16 bits of is no port: no CLIENT aimed
 * at 0 ("65536") or at 34463 ("99999"). */
static void test_create_port_out_of_range(void **state)
{
	static const char *const bad[] = {"65536", "99999", "4294967296", ""};
	struct rpcrdma_tirpc_opts o = {0};
	(void)state;

	o.transport = RPCRDMA_TRANSPORT_TCP;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CLIENT *cl;

		o.service = bad[i];
		cl = rpcrdma_tirpc_clnt_create("127.0.0.1", PROG, 1, &o);
		if (cl) {
			struct netbuf nb;
			char addr[64] = "?";

			if (clnt_control(cl, CLGET_SVC_ADDR, (char *)&nb) &&
			    nb.len >= sizeof(struct sockaddr_in))
				snprintf(addr, sizeof(addr), "port %u",
					 ntohs(((struct sockaddr_in *)nb.buf)->sin_port));
			clnt_destroy(cl);
			fail_msg("service \"%s\" made a CLIENT (%s)", bad[i], addr);
		}
		assert_int_equal(rpc_createerr.cf_stat, RPC_UNKNOWNHOST);
		assert_int_equal(rpc_createerr.cf_error.re_errno, EINVAL);
	}
}

/*
 * A hostile rpcbind, on 127.0.0.1:111 of a network namespace of the test's
 * own: GETADDR (and DUMP, for "rdma") answer port 0.  No server listens
 * there, so the look-up failed: RPC_PMAPFAILURE at creation, as the core's
 * own look-up refuses port 0, not a CLIENT aimed at port 0.  Skipped where
 * no namespace can be made (not root).
 */
static const char *fake_uaddr;

static int fake_dec_rpcb(struct rpcrdma_xdr_stream *x, void *obj)
{
	uint32_t v, len;
	char str[256];
	int rc;

	(void)obj;
	rc = rpcrdma_xdr_decode_u32(x, &v);
	if (!rc)
		rc = rpcrdma_xdr_decode_u32(x, &v);
	for (int i = 0; !rc && i < 3; i++)
		rc = rpcrdma_xdr_decode_string(x, str, sizeof(str), &len);
	return rc;
}

static int fake_enc_uaddr(struct rpcrdma_xdr_stream *x, void *obj)
{
	(void)obj;
	return rpcrdma_xdr_encode_string(x, fake_uaddr, (uint32_t)strlen(fake_uaddr));
}

static int fake_enc_dump(struct rpcrdma_xdr_stream *x, void *obj)
{
	int rc;

	(void)obj;
	rc = rpcrdma_xdr_encode_bool(x, true);
	if (!rc)
		rc = rpcrdma_xdr_encode_u32(x, PROG);
	if (!rc)
		rc = rpcrdma_xdr_encode_u32(x, 1);
	if (!rc)
		rc = rpcrdma_xdr_encode_string(x, "rdma", 4);
	if (!rc)
		rc = rpcrdma_xdr_encode_string(x, fake_uaddr, (uint32_t)strlen(fake_uaddr));
	if (!rc)
		rc = rpcrdma_xdr_encode_string(x, "0", 1);
	return rc ? rc : rpcrdma_xdr_encode_bool(x, false);
}

static int fake_ok(struct rpcrdma_svc_req *r, void *a, void *res)
{
	(void)r;
	(void)a;
	(void)res;
	return 0;
}

static const struct rpcrdma_svc_proc fake_rpcbind_procs[] = {
    {NULL, NULL, 0, NULL, 0, NULL},
    {NULL, NULL, 0, NULL, 0, NULL},
    {NULL, NULL, 0, NULL, 0, NULL},
    {fake_ok, fake_dec_rpcb, 1, fake_enc_uaddr, 1, NULL},
    {fake_ok, NULL, 0, fake_enc_dump, 1, NULL},
};

/* In the child: 0 when both look-ups fail as a port mapper failure. */
static int port_zero_child(void)
{
	struct rpcrdma_tirpc_opts o = {0};
	struct rpcrdma_server_opts so;
	struct ifreq ifr;
	struct server s;
	int fd, bad = 0;

	if (unshare(CLONE_NEWNET) != 0)
		return 77;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) != 0)
		return 77;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) != 0)
		return 77;
	close(fd);
	if (rpcrdma_loop_create(&s.loop))
		return 10;
	rpcrdma_server_opts_default(&so);
	so.transport = RPCRDMA_TRANSPORT_TCP;
	if (rpcrdma_server_create(s.loop, "127.0.0.1", "111", &so, &s.srv) ||
	    rpcrdma_server_register(s.srv, RPCRDMA_RPCBIND_PROG, 4, fake_rpcbind_procs, 5) ||
	    pthread_create(&s.th, NULL, serve, &s))
		return 11;
	fake_uaddr = "127.0.0.1.0.0";
	for (int k = 0; k < 2; k++) {
		CLIENT *cl;

		o.transport = k ? RPCRDMA_TRANSPORT_RDMA : RPCRDMA_TRANSPORT_TCP;
		cl = rpcrdma_tirpc_clnt_create("127.0.0.1", PROG, 1, &o);
		if (cl) {
			fprintf(stderr, "  %s: a CLIENT for port 0\n", k ? "rdma" : "tcp");
			clnt_destroy(cl);
			bad |= 1 << k;
		} else if (rpc_createerr.cf_stat != RPC_PMAPFAILURE) {
			fprintf(stderr, "  %s: cf_stat %d\n", k ? "rdma" : "tcp",
				(int)rpc_createerr.cf_stat);
			bad |= 1 << k;
		}
	}
	return bad;
}

static void test_rpcbind_port_zero(void **state)
{
	int st;
	pid_t pid;
	(void)state;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(port_zero_child());
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		skip();
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_items_and_padding),
	    cmocka_unit_test(test_truncated_everywhere),
	    cmocka_unit_test(test_encode_nospace),
	    cmocka_unit_test(test_client_against_dispatch),
	    cmocka_unit_test(test_decode_failure_frees),
	    cmocka_unit_test(test_timeout),
	    cmocka_unit_test(test_timeout_huge),
	    cmocka_unit_test(test_max_reply_huge_with_binding),
	    cmocka_unit_test(test_create_errors),
	    cmocka_unit_test(test_create_port_out_of_range),
	    cmocka_unit_test(test_wrong_transport_said),
	    cmocka_unit_test(test_authunix_credential_sent),
	    cmocka_unit_test(test_rpcbind_unreachable_said),
	    cmocka_unit_test(test_svc_reg_like_libtirpc),
	    cmocka_unit_test(test_svc_reg_same_concurrent),
	    cmocka_unit_test(test_causes_said),
	    cmocka_unit_test(test_rpcbind_port_zero),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
