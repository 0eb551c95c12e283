/*
 * Provider conformance suite: one program, run against every provider
 * (src/provider/provider.h) and parameterised by provider name and
 * addresses, so the same binary runs on ofi over loopback in ctest and on
 * verbs in the lab.  It owns the contract tests: connection set-up with
 * private data, rejection, Sends and receives in both directions, RDMA
 * Read and Write with scatter lists, remote-access revocation and what a
 * protection error does to the connection, Send With Invalidate, handle
 * scope, Read depth (IRD/ORD), flushes, wakeups through the pollable fd,
 * and a connection churn that must not leak descriptors or registrations.
 * With --expect-no-device it checks only that a provider fails cleanly
 * (-ENODEV) on a machine without RDMA hardware.
 *
 * Both ends live in this process: a "client" and a "server" provider
 * instance on the given addresses, driven by one loop that sleeps on both
 * instances' fds.  Events are collected per instance and tests wait for the
 * ones they expect, so nothing depends on how two instances interleave.
 * Where providers may legitimately differ (what a protection error does to
 * the connection, for instance), the expectation comes from the provider's
 * caps flags or from the table `expectations` below, never from a guess.
 *
 * Usage: provider_suite [--provider NAME] [--server ADDR] [--client ADDR]
 *                       [--timeout SECONDS] [--list] [--expect-no-device]
 *                       [CASE...]
 * PROVIDER_SUITE_TRACE=1 in the environment prints every event.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <stdatomic.h>
#include <pthread.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "provider/provider.h"

#define DEFAULT_WAIT_MS 5000
#define MAX_STEP_MS 100

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

#define CHECK_RC(expr, want)                                                                       \
	do {                                                                                       \
		int rc_ = (expr);                                                                  \
		if (rc_ != (want)) {                                                               \
			fprintf(stderr, "%s:%d: %s returned %d (%s), want %d\n", __FILE__,         \
			        __LINE__, #expr, rc_, strerror(rc_ < 0 ? -rc_ : rc_), (want));     \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

#define CHECK_OK(expr) CHECK_RC(expr, 0)

/* Distinct, non-NULL contexts. */
#define CTX(tag, n) ((void *)(uintptr_t)(((uintptr_t)(tag) << 24) | (uintptr_t)(n)))
#define CTX_TAG(ctx) ((unsigned int)((uintptr_t)(ctx) >> 24))
#define CTX_N(ctx) ((unsigned int)((uintptr_t)(ctx)&0xffffffu))

enum ctx_tag {
	T_CONN_CLIENT = 1,
	T_CONN_SERVER,
	T_LISTENER,
	T_RECV,
	T_SEND,
	T_READ,
	T_WRITE,
	T_REVOKE,
};

/*
 * What a provider does where the interface lets providers differ.
 */
struct expect {
	const char *provider;
	/* A Read or Write aimed at a bad handle ends the connection on both
	 * sides (ofi/tcp: FI_SHUTDOWN; verbs: the RC QPs go to error). */
	bool protection_error_disconnects;
	/* An initiator's RDMA Read from a bad handle completes in error. */
	bool read_error_reported;
	/* A message longer than the posted receive ends the connection. */
	bool truncation_disconnects;
	/* ... and the receive completes with LOCAL_LENGTH (not just FLUSHED). */
	bool truncation_reported;
	/* The accepting side's ESTABLISHED needs the connecting side to poll
	 * (librdmacm sends the RTU from the active side's event processing),
	 * so no test may run the accepting side alone until it is up. */
	bool accept_needs_peer_poll;
	/* conn->attr.read_depth is negotiated with the peer (IRD/ORD) rather
	 * than informational. */
	bool read_depth_negotiated;
	/* An instance on a wildcard address has no device: it listens on
	 * every device and hands each request to an instance on the
	 * request's device (RPCRDMA_PCAP_LISTEN_ONLY). */
	bool wildcard_listen_only;
};

static const struct expect expectations[] = {
    /* Measured on libfabric 1.17 (LIBFABRIC.md and this suite). */
    {"ofi", true, true, true, true, false, false, false},
    /* Measured on Soft-RoCE (rdma_rxe, Linux 6.1) in the lab, see
     * tests/lab/README.md.  RC semantics: a bad handle or a too-long
     * message moves both QPs to the error state, which ends both sides.
     * truncation_reported: rxe completes the too-short receive with
     * IBV_WC_LOC_QP_OP_ERR (OTHER), not IBV_WC_LOC_LEN_ERR, and the
     * sender's Send with IBV_WC_REM_OP_ERR.  The accepting side is up
     * only once the connecting side's librdmacm has sent the RTU, from
     * its event processing; Read depths are negotiated in the CM. */
    {"verbs", true, true, true, false, true, true, true},
};

struct side {
	const char *name;
	struct rpcrdma_provider *p;
	struct rpcrdma_prov_event *ev;
	size_t n, cap;
	int poll_err;
	/* Connections reported ESTABLISHED and not yet ended, to check that
	 * no operation completes successfully on a connection before its
	 * ESTABLISHED event (provider.h), in every case of the suite. */
	const struct rpcrdma_prov_conn **up;
	size_t nup, capup;
	unsigned int order_errors;
};

struct env {
	const char *prov;
	const struct expect *ex;
	struct sockaddr_storage srv_addr, cli_addr;
	socklen_t srv_len, cli_len;
	struct side cli, srv;
	int epfd;
	struct rpcrdma_prov_listener *lst;
	struct sockaddr_storage lst_addr;
	socklen_t lst_len;
	unsigned long wakeups, timeouts;
};

struct pair {
	struct rpcrdma_prov_conn *c, *s;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/*
 * Event collection.
 */
static int append(struct side *s, const struct rpcrdma_prov_event *ev)
{
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 64;
		struct rpcrdma_prov_event *nv = realloc(s->ev, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		s->ev = nv;
		s->cap = ncap;
	}
	s->ev[s->n++] = *ev;
	return 0;
}

static void track_order(struct side *s, const struct rpcrdma_prov_event *ev)
{
	size_t i;

	for (i = 0; i < s->nup; i++)
		if (s->up[i] == ev->conn)
			break;
	switch (ev->type) {
	case RPCRDMA_PEV_ESTABLISHED:
		if (i < s->nup)
			return;
		if (s->nup == s->capup) {
			size_t ncap = s->capup ? 2 * s->capup : 64;
			const struct rpcrdma_prov_conn **nv = realloc(s->up, ncap * sizeof(*nv));

			if (!nv) {
				s->poll_err = -ENOMEM;
				return;
			}
			s->up = nv;
			s->capup = ncap;
		}
		s->up[s->nup++] = ev->conn;
		return;
	case RPCRDMA_PEV_DISCONNECTED:
	case RPCRDMA_PEV_REJECTED:
	case RPCRDMA_PEV_CONNECT_ERROR:
		if (i < s->nup)
			s->up[i] = s->up[--s->nup];
		return;
	case RPCRDMA_PEV_COMPLETION:
		if (ev->conn && ev->status == RPCRDMA_PST_SUCCESS && i == s->nup) {
			fprintf(stderr, "%s: %s completed before ESTABLISHED\n", s->name,
			        rpcrdma__provider_op_str(ev->op));
			s->order_errors++;
		}
		return;
	default:
		return;
	}
}

static size_t drain(struct side *s)
{
	struct rpcrdma_prov_event buf[32];
	size_t got = 0;
	int n;

	while ((n = rpcrdma__provider_poll(s->p, buf, 32)) > 0) {
		for (int i = 0; i < n; i++) {
			if (buf[i].type == RPCRDMA_PEV_DEVICE_ERROR)
				fprintf(stderr, "%s: DEVICE_ERROR %d\n", s->name, buf[i].error);
			if (getenv("PROVIDER_SUITE_TRACE"))
				fprintf(stderr, "%s: %s conn %p op %d st %d ctx %p\n", s->name,
				        rpcrdma__provider_event_str(buf[i].type),
				        (void *)buf[i].conn, buf[i].op, buf[i].status, buf[i].ctx);
			track_order(s, &buf[i]);
			if (append(s, &buf[i]))
				s->poll_err = -ENOMEM;
		}
		got += (size_t)n;
	}
	if (n < 0 && !s->poll_err)
		s->poll_err = n;
	return got;
}

/* Collects what both instances have; sleeps on their fds for up to
 * timeout_ms when neither has anything. */
static size_t pump(struct env *e, int timeout_ms)
{
	struct epoll_event ee[2];
	size_t got = drain(&e->cli) + drain(&e->srv);
	int n;

	if (got || timeout_ms <= 0)
		return got;
	if (rpcrdma__provider_trywait(e->cli.p) || rpcrdma__provider_trywait(e->srv.p))
		return drain(&e->cli) + drain(&e->srv);
	n = epoll_wait(e->epfd, ee, 2, timeout_ms);
	if (n > 0)
		e->wakeups++;
	else if (n == 0)
		e->timeouts++;
	return drain(&e->cli) + drain(&e->srv);
}

static void settle(struct env *e, int ms)
{
	int64_t end = now_ms() + ms;

	while (now_ms() < end)
		pump(e, (int)(end - now_ms()) > MAX_STEP_MS ? MAX_STEP_MS : (int)(end - now_ms()));
}

static bool ev_matches(const struct rpcrdma_prov_event *ev, int type,
                       const struct rpcrdma_prov_conn *conn, bool any_conn, const void *ctx,
                       bool any_ctx)
{
	return (int)ev->type == type && (any_conn || ev->conn == conn) &&
	       (any_ctx || ev->ctx == ctx);
}

static ssize_t find_ev(const struct side *s, int type, const struct rpcrdma_prov_conn *conn,
                       bool any_conn, const void *ctx, bool any_ctx)
{
	for (size_t i = 0; i < s->n; i++)
		if (ev_matches(&s->ev[i], type, conn, any_conn, ctx, any_ctx))
			return (ssize_t)i;
	return -1;
}

static void take(struct side *s, size_t i, struct rpcrdma_prov_event *out)
{
	if (out)
		*out = s->ev[i];
	memmove(&s->ev[i], &s->ev[i + 1], (s->n - i - 1) * sizeof(s->ev[0]));
	s->n--;
}

/* Index of the first matching event, waiting up to timeout_ms; -1 if none. */
static ssize_t wait_idx(struct env *e, struct side *s, int type,
                        const struct rpcrdma_prov_conn *conn, bool any_conn, const void *ctx,
                        bool any_ctx, int timeout_ms)
{
	int64_t end = now_ms() + timeout_ms;

	for (;;) {
		ssize_t i = find_ev(s, type, conn, any_conn, ctx, any_ctx);
		int64_t left = end - now_ms();

		if (i >= 0)
			return i;
		if (left <= 0)
			return -1;
		pump(e, left > MAX_STEP_MS ? MAX_STEP_MS : (int)left);
	}
}

static bool wait_conn_ev(struct env *e, struct side *s, int type, const struct rpcrdma_prov_conn *c,
                         struct rpcrdma_prov_event *out)
{
	ssize_t i = wait_idx(e, s, type, c, c == NULL, NULL, true, DEFAULT_WAIT_MS);

	if (i < 0) {
		fprintf(stderr, "%s: no %s event within %d ms\n", s->name,
		        rpcrdma__provider_event_str(type), DEFAULT_WAIT_MS);
		return false;
	}
	take(s, (size_t)i, out);
	return true;
}

static bool wait_comp(struct env *e, struct side *s, const void *ctx,
                      struct rpcrdma_prov_event *out)
{
	ssize_t i = wait_idx(e, s, RPCRDMA_PEV_COMPLETION, NULL, true, ctx, false, DEFAULT_WAIT_MS);

	if (i < 0) {
		fprintf(stderr, "%s: no completion for ctx %#lx within %d ms\n", s->name,
		        (unsigned long)(uintptr_t)ctx, DEFAULT_WAIT_MS);
		return false;
	}
	take(s, (size_t)i, out);
	return true;
}

static const char *st_str(enum rpcrdma_prov_status st)
{
	return rpcrdma__provider_status_str(st);
}

/*
 * Set-up.
 */
static int env_open(struct env *e)
{
	struct rpcrdma_prov_open_attr ca = {(struct sockaddr *)&e->cli_addr, e->cli_len};
	struct rpcrdma_prov_open_attr sa = {(struct sockaddr *)&e->srv_addr, e->srv_len};
	struct rpcrdma_prov_conn_attr la = {.send_depth = 32, .recv_depth = 64, .read_depth = 8};
	struct sockaddr_storage bind_addr = e->srv_addr;
	struct epoll_event ee;

	e->cli.name = "client";
	e->srv.name = "server";
	CHECK_OK(rpcrdma__provider_open(e->prov, &ca, &e->cli.p));
	CHECK_OK(rpcrdma__provider_open(e->prov, &sa, &e->srv.p));
	e->epfd = epoll_create1(EPOLL_CLOEXEC);
	CHECK(e->epfd >= 0);
	memset(&ee, 0, sizeof(ee));
	ee.events = EPOLLIN;
	ee.data.ptr = &e->cli;
	CHECK(epoll_ctl(e->epfd, EPOLL_CTL_ADD, rpcrdma__provider_fd(e->cli.p), &ee) == 0);
	ee.data.ptr = &e->srv;
	CHECK(epoll_ctl(e->epfd, EPOLL_CTL_ADD, rpcrdma__provider_fd(e->srv.p), &ee) == 0);
	/* Port 0: the kernel picks a free one; listener_addr tells which. */
	if (bind_addr.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&bind_addr)->sin6_port = 0;
	else
		((struct sockaddr_in *)&bind_addr)->sin_port = 0;
	CHECK_OK(rpcrdma__provider_listen(e->srv.p, (struct sockaddr *)&bind_addr, e->srv_len, 64,
	                                  &la, CTX(T_LISTENER, 0), &e->lst));
	CHECK_OK(rpcrdma__provider_listener_addr(e->lst, &e->lst_addr, &e->lst_len));
	return 0;
}

static void env_close(struct env *e)
{
	if (e->lst)
		rpcrdma__provider_listener_close(e->lst);
	if (e->epfd >= 0)
		close(e->epfd);
	if (e->cli.p)
		rpcrdma__provider_close(e->cli.p);
	if (e->srv.p)
		rpcrdma__provider_close(e->srv.p);
	free(e->cli.ev);
	free(e->srv.ev);
	free(e->cli.up);
	free(e->srv.up);
}

/* Whether @ev carries @want, as a provider with @caps delivers it. */
static bool private_matches(const struct rpcrdma_prov_caps *caps,
			    const struct rpcrdma_prov_event *ev, const void *want, size_t len)
{
	bool exact = caps->flags & RPCRDMA_PCAP_EXACT_PRIVATE_LEN;

	if (exact && ev->private_len != len)
		return false;
	if (ev->private_len < len || (len && memcmp(ev->private_data, want, len)))
		return false;
	/* Padding, where a provider pads, is zeros. */
	for (size_t i = len; i < ev->private_len; i++)
		if (ev->private_data[i])
			return false;
	return true;
}

static bool private_ok(const struct env *e, const struct rpcrdma_prov_event *ev, const void *want,
		       size_t len)
{
	return private_matches(&e->srv.p->caps, ev, want, len);
}

typedef int (*prep_fn)(struct rpcrdma_prov_conn *conn, bool server, void *arg);

/*
 * Connects a client to the listener.  prep runs on each connection before
 * the connection request and the accept (the place to post receives).
 */
static int establish(struct env *e, const struct rpcrdma_prov_conn_attr *attr, const void *cpd,
                     size_t cplen, const void *spd, size_t splen, prep_fn prep, void *arg,
                     struct pair *out)
{
	struct rpcrdma_prov_event ev;

	CHECK_OK(rpcrdma__provider_conn_create(e->cli.p, attr, CTX(T_CONN_CLIENT, 0), &out->c));
	CHECK(out->c->state == RPCRDMA_PCONN_IDLE);
	if (prep)
		CHECK_OK(prep(out->c, false, arg));
	CHECK_OK(rpcrdma__provider_connect(out->c, (struct sockaddr *)&e->lst_addr, e->lst_len, cpd,
	                                   cplen));
	CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_CONNECT_REQUEST, NULL, &ev));
	CHECK(ev.listener == e->lst);
	CHECK(ev.ctx == CTX(T_LISTENER, 0));
	CHECK(private_ok(e, &ev, cpd, cplen));
	out->s = ev.conn;
	CHECK(out->s && out->s->state == RPCRDMA_PCONN_REQUESTED);
	out->s->ctx = CTX(T_CONN_SERVER, 0);
	if (prep)
		CHECK_OK(prep(out->s, true, arg));
	CHECK_OK(rpcrdma__provider_accept(out->s, spd, splen));
	CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_ESTABLISHED, out->s, &ev));
	CHECK(ev.private_len == 0 || !(e->srv.p->caps.flags & RPCRDMA_PCAP_EXACT_PRIVATE_LEN));
	CHECK(ev.ctx == CTX(T_CONN_SERVER, 0));
	CHECK(wait_conn_ev(e, &e->cli, RPCRDMA_PEV_ESTABLISHED, out->c, &ev));
	CHECK(ev.ctx == CTX(T_CONN_CLIENT, 0));
	CHECK(private_ok(e, &ev, spd, splen));
	CHECK(out->c->state == RPCRDMA_PCONN_ESTABLISHED);
	CHECK(out->s->state == RPCRDMA_PCONN_ESTABLISHED);
	return 0;
}

/* Disconnects from the client side and waits for both terminal events. */
static int teardown_pair(struct env *e, struct pair *pp)
{
	struct rpcrdma_prov_event ev;

	CHECK_OK(rpcrdma__provider_disconnect(pp->c));
	CHECK(wait_conn_ev(e, &e->cli, RPCRDMA_PEV_DISCONNECTED, pp->c, &ev));
	CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_DISCONNECTED, pp->s, &ev));
	rpcrdma__provider_conn_destroy(pp->c);
	rpcrdma__provider_conn_destroy(pp->s);
	pp->c = pp->s = NULL;
	return 0;
}

/* Removes every completion (flushes included) from an inbox. */
static void forget_completions(struct side *s)
{
	size_t j = 0;

	for (size_t i = 0; i < s->n; i++)
		if (s->ev[i].type != RPCRDMA_PEV_COMPLETION)
			s->ev[j++] = s->ev[i];
	s->n = j;
}

/* A registered buffer. */
struct rbuf {
	uint8_t *mem;
	size_t len;
	struct rpcrdma_prov_mr *mr;
};

static int rbuf_init(struct side *s, struct rbuf *b, size_t len)
{
	b->len = len;
	b->mem = calloc(1, len);
	CHECK(b->mem);
	CHECK_OK(rpcrdma__provider_reg_mr(s->p, b->mem, len, &b->mr));
	return 0;
}

static void rbuf_free(struct rbuf *b)
{
	if (b->mr)
		rpcrdma__provider_dereg_mr(b->mr);
	free(b->mem);
	b->mem = NULL;
	b->mr = NULL;
}

static uint8_t pat(unsigned int seed, size_t j)
{
	uint32_t x = seed * 2654435761u + (uint32_t)j * 40503u;

	return (uint8_t)(x ^ (x >> 13) ^ (uint32_t)(j >> 8));
}

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	for (size_t j = 0; j < len; j++)
		p[j] = pat(seed, j);
}

static ssize_t first_mismatch(const uint8_t *p, size_t len, unsigned int seed)
{
	for (size_t j = 0; j < len; j++)
		if (p[j] != pat(seed, j))
			return (ssize_t)j;
	return -1;
}

static int post_recv1(struct rpcrdma_prov_conn *c, struct rbuf *b, size_t off, uint32_t len,
                      void *ctx)
{
	struct rpcrdma_prov_sge sge = {b->mem + off, len, b->mr};

	return rpcrdma__provider_post_recv(c, &sge, 1, ctx);
}

static int post_send1(struct rpcrdma_prov_conn *c, struct rbuf *b, size_t off, uint32_t len,
                      void *ctx)
{
	struct rpcrdma_prov_sge sge = {b->mem + off, len, b->mr};

	return rpcrdma__provider_post_send(c, &sge, 1, 0, 0, ctx);
}

/*
 * Grants and revocations may say -EAGAIN (a provider's queue for memory
 * operations is full until completions are reaped, verbs): poll and retry,
 * as an owner would.  Events collected meanwhile stay in the inboxes.
 */
static int grant_retry(struct env *e, struct rpcrdma_prov_conn *c, struct rpcrdma_prov_mr *mr,
                       void *addr, uint32_t len, unsigned int access,
                       struct rpcrdma_prov_grant **g, struct rpcrdma_prov_rseg *seg)
{
	int64_t end = now_ms() + DEFAULT_WAIT_MS;
	int rc;

	while ((rc = rpcrdma__provider_grant(c, mr, addr, len, access, g, seg)) == -EAGAIN &&
	       now_ms() < end)
		pump(e, 1);
	return rc;
}

static int revoke_retry(struct env *e, struct rpcrdma_prov_grant *g, void *ctx)
{
	int64_t end = now_ms() + DEFAULT_WAIT_MS;
	int rc;

	while ((rc = rpcrdma__provider_revoke(g, ctx)) == -EAGAIN && now_ms() < end)
		pump(e, 1);
	return rc;
}

/*
 * The cases.
 */
static int test_open_caps(struct env *e)
{
	const struct rpcrdma_prov_caps *caps = &e->cli.p->caps;
	struct rpcrdma_prov_open_attr oa = {(struct sockaddr *)&e->cli_addr, e->cli_len};
	struct rpcrdma_prov_stats st;
	struct rpcrdma_provider *p = NULL;
	const char *const *names = rpcrdma__provider_names();
	bool listed = false;
	size_t fields = 0;

	for (size_t i = 0; names[i]; i++)
		listed |= strcmp(names[i], e->prov) == 0;
	CHECK(listed);
	CHECK(rpcrdma__provider_lookup(e->prov) == e->cli.p->ops);
	CHECK_RC(rpcrdma__provider_open("no-such-provider", &oa, &p), -ENOENT);
	CHECK_RC(rpcrdma__provider_open(e->prov, NULL, &p), -EINVAL);
	CHECK(p == NULL);

	printf("  caps: flags %#x send_sge %u recv_sge %u rdma_sge %u rdma_segs %u inline %u\n"
	       "        send_depth %u recv_depth %u read_depth %u max_msg %u private %u\n",
	       caps->flags, caps->max_send_sge, caps->max_recv_sge, caps->max_rdma_sge,
	       caps->max_rdma_segs, caps->max_inline, caps->max_send_depth, caps->max_recv_depth,
	       caps->max_read_depth, caps->max_msg_size, caps->max_private_data);
	CHECK(caps->max_send_sge >= 1 && caps->max_recv_sge >= 1 && caps->max_rdma_sge >= 1);
	CHECK(caps->max_rdma_segs >= 1 && caps->max_rdma_segs <= RPCRDMA_PROV_MAX_RSEGS);
	CHECK(caps->max_send_depth >= 1 && caps->max_recv_depth >= 1 && caps->max_read_depth >= 1);
	CHECK(caps->max_msg_size >= 4096);
	CHECK(caps->max_private_data >= RPCRDMA_PROV_PRIVATE_MAX);
	if (strcmp(e->prov, "ofi") == 0) {
		/* tcp: no Send With Invalidate; revocation is per grant. */
		CHECK(!(caps->flags & RPCRDMA_PCAP_SEND_INVALIDATE));
		CHECK(caps->flags & RPCRDMA_PCAP_PER_OP_REVOKE);
		CHECK(!(caps->flags & RPCRDMA_PCAP_CONN_SCOPED_HANDLES));
		/* tcp checks a key once per RDMA request: revoking stops no
		 * transfer under way. */
		CHECK(!(caps->flags & RPCRDMA_PCAP_REVOKE_FENCES_INFLIGHT));
		/* libfabric's tcp asks no FI_MR_LOCAL. */
		CHECK(caps->flags & RPCRDMA_PCAP_SEND_UNREGISTERED);
	}
	if (strcmp(e->prov, "verbs") == 0) {
		/* InfiniBand CM pads private data; RC reports Write errors. */
		CHECK(!(caps->flags & RPCRDMA_PCAP_EXACT_PRIVATE_LEN));
		CHECK(caps->flags & RPCRDMA_PCAP_WRITE_ERRORS_REPORTED);
		CHECK(!(caps->flags & RPCRDMA_PCAP_SEND_UNREGISTERED));
		CHECK(caps->flags & RPCRDMA_PCAP_PER_OP_REVOKE);
		CHECK(caps->flags & RPCRDMA_PCAP_REVOKE_FENCES_INFLIGHT);
		/* Memory windows give both, per-RPC registrations neither. */
		CHECK(!(caps->flags & RPCRDMA_PCAP_SEND_INVALIDATE) ==
		      !(caps->flags & RPCRDMA_PCAP_CONN_SCOPED_HANDLES));
		printf("  remote access through %s\n",
		       caps->flags & RPCRDMA_PCAP_CONN_SCOPED_HANDLES ? "memory windows"
		                                                      : "per-grant registrations");
	}
	if (strcmp(e->prov, "ofi") == 0) {
		/* The PSM libraries under Debian's libfabric install handlers
		 * that exit() inside the handler (LIBFABRIC.md); an open ofi
		 * instance has put the defaults back (this program sets none). */
		static const int sigs[] = {SIGINT, SIGTERM, SIGQUIT, SIGHUP};

		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
			struct sigaction sa;

			CHECK(sigaction(sigs[i], NULL, &sa) == 0);
			CHECK(sa.sa_handler == SIG_DFL);
		}
	}

	/* The X-macro lists every field of the stats struct. */
#define COUNT_FIELD(name) fields++;
	RPCRDMA_PROV_STATS(COUNT_FIELD)
#undef COUNT_FIELD
	CHECK(fields * sizeof(uint64_t) == sizeof(struct rpcrdma_prov_stats));
	rpcrdma__provider_stats(e->srv.p, &st);
	CHECK(st.listeners_live == 1 && st.conns_live == 0 && st.grants_live == 0);
	return 0;
}

static int test_connect_private_data(struct env *e)
{
	static const size_t lens[] = {0, 1, 8, 31, RPCRDMA_PROV_PRIVATE_MAX};
	uint8_t cpd[RPCRDMA_PROV_PRIVATE_MAX + 1], spd[RPCRDMA_PROV_PRIVATE_MAX + 1];
	struct rpcrdma_prov_conn *c;

	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		struct pair pp;

		/* Every byte value, including zeros at the end. */
		for (size_t i = 0; i < sizeof(cpd); i++) {
			cpd[i] = (uint8_t)(0xff - i * 3 - k);
			spd[i] = (uint8_t)(i * 5 + k);
		}
		if (lens[k])
			cpd[lens[k] - 1] = 0;
		CHECK_OK(establish(e, NULL, cpd, lens[k], spd,
		                   lens[sizeof(lens) / sizeof(lens[0]) - 1 - k], NULL, NULL, &pp));
		CHECK_OK(teardown_pair(e, &pp));
	}

	/* More than the interface allows is refused before anything moves. */
	CHECK_OK(rpcrdma__provider_conn_create(e->cli.p, NULL, NULL, &c));
	CHECK_RC(rpcrdma__provider_connect(c, (struct sockaddr *)&e->lst_addr, e->lst_len, cpd,
	                                   RPCRDMA_PROV_PRIVATE_MAX + 1),
	         -EINVAL);
	CHECK_RC(rpcrdma__provider_connect(c, (struct sockaddr *)&e->lst_addr, e->lst_len, NULL, 4),
	         -EINVAL);
	CHECK(c->state == RPCRDMA_PCONN_IDLE);
	rpcrdma__provider_conn_destroy(c);
	return 0;
}

/* Compares the address part (not the port) of two IPv4/IPv6 addresses. */
static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return !memcmp(&((const struct sockaddr_in *)a)->sin_addr,
		               &((const struct sockaddr_in *)b)->sin_addr, sizeof(struct in_addr));
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		               &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
	return false;
}

static uint16_t port_of(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)a)->sin_port);
	if (a->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
	return 0;
}

/* Each end knows the other's address: the server to key per-client state
 * (a duplicate request cache), the client for its logs. */
static int test_peer_address(struct env *e)
{
	struct rpcrdma_prov_conn *c;
	struct pair pp;

	CHECK_OK(rpcrdma__provider_conn_create(e->cli.p, NULL, NULL, &c));
	CHECK(c->peer_addrlen == 0);
	rpcrdma__provider_conn_destroy(c);

	CHECK_OK(establish(e, NULL, NULL, 0, NULL, 0, NULL, NULL, &pp));
	/* The client's view: exactly where it connected to. */
	CHECK(pp.c->peer_addrlen == e->lst_len);
	CHECK(same_host(&pp.c->peer_addr, &e->lst_addr));
	CHECK(port_of(&pp.c->peer_addr) == port_of(&e->lst_addr));
	/* The server's view: the client's address and some source port. */
	CHECK(pp.s->peer_addrlen == e->cli_len);
	CHECK(same_host(&pp.s->peer_addr, &e->cli_addr));
	CHECK(port_of(&pp.s->peer_addr) != 0);
	CHECK_OK(teardown_pair(e, &pp));
	return 0;
}

static int test_reject_private_data(struct env *e)
{
	static const size_t lens[] = {RPCRDMA_PROV_PRIVATE_MAX, 0, 5};
	uint8_t rej[RPCRDMA_PROV_PRIVATE_MAX];
	struct rpcrdma_prov_event ev;
	struct rpcrdma_prov_stats st;

	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		struct rpcrdma_prov_conn *c, *s;
		struct rbuf b;

		CHECK_OK(rbuf_init(&e->srv, &b, 256));
		for (size_t i = 0; i < sizeof(rej); i++)
			rej[i] = (uint8_t)(0xa5 ^ (i * 11) ^ k);
		CHECK_OK(rpcrdma__provider_conn_create(e->cli.p, NULL, CTX(T_CONN_CLIENT, k), &c));
		CHECK_OK(rpcrdma__provider_connect(c, (struct sockaddr *)&e->lst_addr, e->lst_len,
		                                   "hello", 5));
		CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_CONNECT_REQUEST, NULL, &ev));
		s = ev.conn;
		/* A receive posted on a request is flushed when it is refused. */
		CHECK_OK(post_recv1(s, &b, 0, 256, CTX(T_RECV, 1)));
		CHECK_OK(rpcrdma__provider_reject(s, rej, lens[k]));
		CHECK(s->state == RPCRDMA_PCONN_CLOSED);
		CHECK(wait_comp(e, &e->srv, CTX(T_RECV, 1), &ev));
		CHECK(ev.status == RPCRDMA_PST_FLUSHED && ev.op == RPCRDMA_POP_RECV);
		CHECK_RC(rpcrdma__provider_accept(s, NULL, 0), -ENOTCONN);
		rpcrdma__provider_conn_destroy(s);
		rbuf_free(&b);

		CHECK(wait_conn_ev(e, &e->cli, RPCRDMA_PEV_REJECTED, c, &ev));
		CHECK(ev.ctx == CTX(T_CONN_CLIENT, k));
		CHECK(ev.error == -ECONNREFUSED);
		CHECK(private_ok(e, &ev, rej, lens[k]));
		CHECK(c->state == RPCRDMA_PCONN_CLOSED);
		/* Nothing follows a terminal event. */
		settle(e, 20);
		CHECK(find_ev(&e->cli, RPCRDMA_PEV_DISCONNECTED, c, false, NULL, true) < 0);
		rpcrdma__provider_conn_destroy(c);
	}
	rpcrdma__provider_stats(e->srv.p, &st);
	CHECK(st.conns_live == 0);
	return 0;
}

static int test_connect_refused(struct env *e)
{
	struct rpcrdma_prov_listener *l;
	struct sockaddr_storage addr = e->srv_addr;
	socklen_t len;
	struct rpcrdma_prov_conn *c;
	struct rpcrdma_prov_event ev;
	ssize_t i;

	/* A port that was just free: listen on it, then stop. */
	if (addr.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&addr)->sin6_port = 0;
	else
		((struct sockaddr_in *)&addr)->sin_port = 0;
	CHECK_OK(rpcrdma__provider_listen(e->srv.p, (struct sockaddr *)&addr, e->srv_len, 1, NULL,
	                                  NULL, &l));
	CHECK_OK(rpcrdma__provider_listener_addr(l, &addr, &len));
	rpcrdma__provider_listener_close(l);

	CHECK_OK(rpcrdma__provider_conn_create(e->cli.p, NULL, CTX(T_CONN_CLIENT, 7), &c));
	CHECK_OK(rpcrdma__provider_connect(c, (struct sockaddr *)&addr, len, NULL, 0));
	i = wait_idx(e, &e->cli, RPCRDMA_PEV_REJECTED, c, false, NULL, true, DEFAULT_WAIT_MS);
	if (i < 0)
		i = wait_idx(e, &e->cli, RPCRDMA_PEV_CONNECT_ERROR, c, false, NULL, true, 10);
	CHECK(i >= 0);
	take(&e->cli, (size_t)i, &ev);
	printf("  nobody listening: %s, error %d\n", rpcrdma__provider_event_str(ev.type),
	       ev.error);
	CHECK(ev.error == -ECONNREFUSED);
	CHECK(ev.private_len == 0);
	rpcrdma__provider_conn_destroy(c);
	return 0;
}

/*
 * Sends and receives in both directions.
 */
#define SR_MSGS 2000u
#define SR_DEPTH 32u
#define SR_SENDS 16u
#define SR_MAX 4096u

struct sr_dir {
	struct rpcrdma_prov_conn *tx, *rx;
	struct rbuf txb, rxb;
	unsigned int dir;
	unsigned int sent, send_done, recvd;
	unsigned int free_slots[SR_SENDS];
	unsigned int nfree;
};

static uint32_t sr_size(unsigned int i)
{
	if (i % 97 == 0)
		return 0;
	return (uint32_t)(((i * 2654435761u) >> 7) % SR_MAX) + 1;
}

static int sr_prep(struct rpcrdma_prov_conn *conn, bool server, void *arg)
{
	struct sr_dir *d = arg;
	/* dir 0: client -> server; dir 1: server -> client. */
	struct sr_dir *rxd = server ? &d[0] : &d[1];

	rxd->rx = conn;
	for (unsigned int k = 0; k < SR_DEPTH; k++) {
		/* Two entries per receive: messages straddle them. */
		struct rpcrdma_prov_sge sge[2] = {
		    {rxd->rxb.mem + (size_t)k * SR_MAX, SR_MAX / 2, rxd->rxb.mr},
		    {rxd->rxb.mem + (size_t)k * SR_MAX + SR_MAX / 2, SR_MAX / 2, rxd->rxb.mr},
		};
		unsigned int n = conn->prov->caps.max_recv_sge >= 2 ? 2 : 1;

		if (n == 1)
			sge[0].length = SR_MAX;
		CHECK_OK(rpcrdma__provider_post_recv(conn, sge, n, CTX(T_RECV + 8 * rxd->dir, k)));
	}
	return 0;
}

static int sr_send(struct sr_dir *d)
{
	const struct rpcrdma_prov_caps *caps = &d->tx->prov->caps;
	unsigned int i = d->sent, slot;
	uint32_t len = sr_size(i), head;
	struct rpcrdma_prov_sge sge[2];
	uint8_t stackbuf[512];
	unsigned int n = 1;

	if (i % 5 == 0 && len <= caps->max_inline && len <= sizeof(stackbuf)) {
		/* Inline: an unregistered buffer, scribbled on right after the
		 * post to prove the payload was copied. */
		fill(stackbuf, len, i * 2 + d->dir);
		sge[0] = (struct rpcrdma_prov_sge){stackbuf, len, NULL};
		CHECK_OK(rpcrdma__provider_post_send(d->tx, sge, len ? 1 : 0, RPCRDMA_PSEND_INLINE,
		                                     0, CTX(T_SEND + 8 * d->dir, SR_SENDS + i)));
		memset(stackbuf, 0xee, sizeof(stackbuf));
		d->sent++;
		return 0;
	}
	slot = d->free_slots[--d->nfree];
	fill(d->txb.mem + (size_t)slot * SR_MAX, len, i * 2 + d->dir);
	head = len / 3 + 1 < len ? len / 3 + 1 : len;
	sge[0] = (struct rpcrdma_prov_sge){d->txb.mem + (size_t)slot * SR_MAX, head, d->txb.mr};
	if (len > head && caps->max_send_sge >= 2) {
		sge[1] =
		    (struct rpcrdma_prov_sge){(uint8_t *)sge[0].addr + head, len - head, d->txb.mr};
		n = 2;
	} else {
		sge[0].length = len;
	}
	CHECK_OK(rpcrdma__provider_post_send(d->tx, sge, len ? n : 0, 0, 0,
	                                     CTX(T_SEND + 8 * d->dir, slot)));
	d->sent++;
	return 0;
}

static int sr_event(struct sr_dir *dirs, const struct rpcrdma_prov_event *ev)
{
	unsigned int tag = CTX_TAG(ev->ctx), n = CTX_N(ev->ctx);
	struct sr_dir *d;

	CHECK(ev->type == RPCRDMA_PEV_COMPLETION);
	if (ev->status != RPCRDMA_PST_SUCCESS)
		fprintf(stderr, "completion %s: %s (%d)\n", rpcrdma__provider_op_str(ev->op),
		        st_str(ev->status), ev->error);
	CHECK(ev->status == RPCRDMA_PST_SUCCESS);
	if (tag == T_SEND || tag == T_SEND + 8) {
		d = &dirs[tag == T_SEND ? 0 : 1];
		CHECK(ev->op == RPCRDMA_POP_SEND);
		CHECK(ev->conn == d->tx);
		if (n < SR_SENDS)
			d->free_slots[d->nfree++] = n;
		d->send_done++;
		return 0;
	}
	CHECK(tag == T_RECV || tag == T_RECV + 8);
	d = &dirs[tag == T_RECV ? 0 : 1];
	CHECK(ev->op == RPCRDMA_POP_RECV);
	CHECK(ev->conn == d->rx);
	CHECK(n < SR_DEPTH);
	/* Messages arrive in order, each in the next posted receive. */
	CHECK(ev->byte_len == sr_size(d->recvd));
	if (first_mismatch(d->rxb.mem + (size_t)n * SR_MAX, ev->byte_len, d->recvd * 2 + d->dir) >=
	    0) {
		fprintf(stderr, "dir %u message %u: content differs at byte %zd\n", d->dir,
		        d->recvd,
		        first_mismatch(d->rxb.mem + (size_t)n * SR_MAX, ev->byte_len,
		                       d->recvd * 2 + d->dir));
		return 1;
	}
	memset(d->rxb.mem + (size_t)n * SR_MAX, 0, SR_MAX);
	d->recvd++;
	{
		struct rpcrdma_prov_sge sge[2] = {
		    {d->rxb.mem + (size_t)n * SR_MAX, SR_MAX / 2, d->rxb.mr},
		    {d->rxb.mem + (size_t)n * SR_MAX + SR_MAX / 2, SR_MAX / 2, d->rxb.mr},
		};
		unsigned int k = d->rx->prov->caps.max_recv_sge >= 2 ? 2 : 1;

		if (k == 1)
			sge[0].length = SR_MAX;
		CHECK_OK(rpcrdma__provider_post_recv(d->rx, sge, k, ev->ctx));
	}
	return 0;
}

static int test_send_recv(struct env *e)
{
	struct rpcrdma_prov_conn_attr attr = {.send_depth = SR_DEPTH, .recv_depth = SR_DEPTH};
	struct sr_dir d[2];
	struct pair pp;
	int64_t end, t0 = now_ms();

	memset(d, 0, sizeof(d));
	d[1].dir = 1;
	/* dir 0 sends from the client and receives on the server. */
	CHECK_OK(rbuf_init(&e->cli, &d[0].txb, SR_SENDS * SR_MAX));
	CHECK_OK(rbuf_init(&e->srv, &d[0].rxb, SR_DEPTH * SR_MAX));
	CHECK_OK(rbuf_init(&e->srv, &d[1].txb, SR_SENDS * SR_MAX));
	CHECK_OK(rbuf_init(&e->cli, &d[1].rxb, SR_DEPTH * SR_MAX));
	for (unsigned int k = 0; k < 2; k++)
		for (unsigned int s = 0; s < SR_SENDS; s++)
			d[k].free_slots[d[k].nfree++] = s;
	CHECK_OK(establish(e, &attr, NULL, 0, NULL, 0, sr_prep, d, &pp));
	d[0].tx = pp.c;
	d[1].tx = pp.s;

	end = now_ms() + 30000;
	while (d[0].recvd < SR_MSGS || d[1].recvd < SR_MSGS || d[0].send_done < SR_MSGS ||
	       d[1].send_done < SR_MSGS) {
		CHECK(now_ms() < end);
		for (unsigned int k = 0; k < 2; k++) {
			/* Never more in flight than the peer has receives. */
			while (d[k].sent < SR_MSGS && d[k].sent < d[k].recvd + SR_DEPTH &&
			       d[k].sent - d[k].send_done < SR_SENDS && d[k].nfree)
				CHECK_OK(sr_send(&d[k]));
		}
		pump(e, MAX_STEP_MS);
		for (size_t i = 0; i < e->cli.n; i++)
			CHECK_OK(sr_event(d, &e->cli.ev[i]));
		e->cli.n = 0;
		for (size_t i = 0; i < e->srv.n; i++)
			CHECK_OK(sr_event(d, &e->srv.ev[i]));
		e->srv.n = 0;
	}
	printf("  %u messages each way in %" PRId64 " ms\n", SR_MSGS, now_ms() - t0);
	CHECK_OK(teardown_pair(e, &pp));
	for (unsigned int k = 0; k < 2; k++) {
		rbuf_free(&d[k].txb);
		rbuf_free(&d[k].rxb);
	}
	return 0;
}

/*
 * RDMA Write and Read with scatter lists.  The server exposes regions of
 * one buffer; the client moves data between them and a local scatter list.
 * Segments start inside their regions (offset semantics) and there are more
 * of them than one work request takes on ofi (the provider must split).
 */
struct region {
	size_t off;      /* in the server buffer */
	uint32_t len;    /* granted */
	uint32_t skip;   /* the segment starts this far in */
	uint32_t seglen; /* and is this long */
};

static const struct region regions3[] = {
    {100, 1000, 0, 1000},
    {4096, 5000, 123, 4000},
    {12000, 333, 33, 300},
};

static const struct region regions12[] = {
    {0, 64, 0, 64},         {200, 1, 0, 1},       {300, 4096, 7, 4089},     {8192, 100, 50, 50},
    {9000, 3000, 1, 2998},  {13000, 17, 0, 17},   {14000, 8000, 100, 7000}, {23000, 2, 1, 1},
    {24000, 1500, 0, 1500}, {26000, 999, 998, 1}, {28000, 4000, 0, 4000},   {33000, 10, 5, 5},
};

static const uint32_t local_cuts[] = {1, 2047, 3000}; /* then the rest */

static int rma_case(struct env *e, struct pair *pp, const struct region *rg, size_t nrg, bool write,
                    unsigned int seed)
{
	struct rpcrdma_prov_grant *g[16];
	struct rpcrdma_prov_rseg seg[16];
	struct rpcrdma_prov_sge sge[8];
	struct rbuf sb, cb;
	struct rpcrdma_prov_event ev;
	unsigned int nsge = 0;
	uint32_t total = 0, done = 0;
	size_t guard = 64, pos;
	unsigned int maxsge = pp->c->prov->caps.max_rdma_sge;
	unsigned int access = write ? RPCRDMA_PACCESS_REMOTE_WRITE : RPCRDMA_PACCESS_REMOTE_READ;

	CHECK(nrg <= 16 && nrg <= pp->c->prov->caps.max_rdma_segs);
	CHECK_OK(rbuf_init(&e->srv, &sb, 48 * 1024));
	for (size_t i = 0; i < nrg; i++)
		total += rg[i].seglen;
	CHECK_OK(rbuf_init(&e->cli, &cb, total + 2 * guard));
	memset(sb.mem, 0x5c, sb.len);
	memset(cb.mem, 0xc5, cb.len);
	for (size_t i = 0; i < nrg; i++) {
		CHECK_OK(rpcrdma__provider_grant(pp->s, sb.mr, sb.mem + rg[i].off, rg[i].len,
		                                 access, &g[i], &seg[i]));
		CHECK(seg[i].handle == g[i]->handle && seg[i].length == rg[i].len);
		seg[i].offset += rg[i].skip;
		seg[i].length = rg[i].seglen;
	}
	/* The local scatter list: odd cuts, at most max_rdma_sge entries. */
	pos = guard;
	for (size_t k = 0; k < sizeof(local_cuts) / sizeof(local_cuts[0]) && nsge + 1 < maxsge;
	     k++) {
		uint32_t cut = local_cuts[k] < total - done ? local_cuts[k] : 0;

		if (!cut)
			break;
		sge[nsge++] = (struct rpcrdma_prov_sge){cb.mem + pos, cut, cb.mr};
		pos += cut;
		done += cut;
	}
	sge[nsge++] = (struct rpcrdma_prov_sge){cb.mem + pos, total - done, cb.mr};

	if (write) {
		fill(cb.mem + guard, total, seed);
		CHECK_OK(rpcrdma__provider_post_recv(
		    pp->s, &(struct rpcrdma_prov_sge){sb.mem + 46 * 1024, 64, sb.mr}, 1,
		    CTX(T_RECV, seed)));
		CHECK_OK(rpcrdma__provider_post_write(pp->c, sge, nsge, seg, (unsigned int)nrg,
		                                      CTX(T_WRITE, seed)));
		/* ORDER: a Send posted after the Writes lands after their data. */
		CHECK_OK(post_send1(pp->c, &cb, 0, 8, CTX(T_SEND, seed)));
		CHECK(wait_comp(e, &e->srv, CTX(T_RECV, seed), &ev));
		CHECK(ev.status == RPCRDMA_PST_SUCCESS && ev.byte_len == 8);
		/* Check now, before the Write's own completion is looked at. */
		done = 0;
		for (size_t i = 0; i < nrg; i++) {
			const uint8_t *r = sb.mem + rg[i].off;

			for (uint32_t j = 0; j < rg[i].len; j++) {
				bool inside = j >= rg[i].skip && j < rg[i].skip + rg[i].seglen;
				uint8_t want = inside ? pat(seed, done + j - rg[i].skip) : 0x5c;

				if (r[j] != want) {
					fprintf(stderr, "region %zu byte %u: %#x, want %#x\n", i, j,
					        r[j], want);
					return 1;
				}
			}
			done += rg[i].seglen;
		}
		CHECK(wait_comp(e, &e->cli, CTX(T_WRITE, seed), &ev));
		CHECK(ev.status == RPCRDMA_PST_SUCCESS && ev.op == RPCRDMA_POP_WRITE);
		CHECK(ev.byte_len == total);
		CHECK(wait_comp(e, &e->cli, CTX(T_SEND, seed), &ev));
		CHECK(ev.status == RPCRDMA_PST_SUCCESS);
		/* Bytes outside the regions were not touched. */
		for (size_t j = 0; j < 46 * 1024; j++) {
			bool in_region = false;

			for (size_t i = 0; i < nrg; i++)
				in_region |= j >= rg[i].off && j < rg[i].off + rg[i].len;
			CHECK(in_region || sb.mem[j] == 0x5c);
		}
	} else {
		done = 0;
		for (size_t i = 0; i < nrg; i++) {
			for (uint32_t j = 0; j < rg[i].seglen; j++)
				sb.mem[rg[i].off + rg[i].skip + j] = pat(seed, done + j);
			done += rg[i].seglen;
		}
		CHECK_OK(rpcrdma__provider_post_read(pp->c, sge, nsge, seg, (unsigned int)nrg,
		                                     CTX(T_READ, seed)));
		CHECK(wait_comp(e, &e->cli, CTX(T_READ, seed), &ev));
		CHECK(ev.status == RPCRDMA_PST_SUCCESS && ev.op == RPCRDMA_POP_READ);
		CHECK(ev.byte_len == total);
		if (first_mismatch(cb.mem + guard, total, seed) >= 0) {
			fprintf(stderr, "read: byte %zd differs\n",
			        first_mismatch(cb.mem + guard, total, seed));
			return 1;
		}
		for (size_t j = 0; j < guard; j++)
			CHECK(cb.mem[j] == 0xc5 && cb.mem[guard + total + j] == 0xc5);
	}
	for (size_t i = 0; i < nrg; i++) {
		CHECK_OK(rpcrdma__provider_revoke(g[i], CTX(T_REVOKE, i)));
		CHECK(wait_comp(e, &e->srv, CTX(T_REVOKE, i), &ev));
		CHECK(ev.op == RPCRDMA_POP_REVOKE && ev.status == RPCRDMA_PST_SUCCESS);
	}
	rbuf_free(&sb);
	rbuf_free(&cb);
	return 0;
}

static int test_rdma_write(struct env *e)
{
	struct pair pp;

	CHECK_OK(establish(e, NULL, NULL, 0, NULL, 0, NULL, NULL, &pp));
	CHECK_OK(rma_case(e, &pp, regions3, 3, true, 11));
	CHECK_OK(rma_case(e, &pp, regions12, 12, true, 12));
	CHECK_OK(teardown_pair(e, &pp));
	return 0;
}

static int test_rdma_read(struct env *e)
{
	struct pair pp;

	CHECK_OK(establish(e, NULL, NULL, 0, NULL, 0, NULL, NULL, &pp));
	CHECK_OK(rma_case(e, &pp, regions3, 3, false, 21));
	CHECK_OK(rma_case(e, &pp, regions12, 12, false, 22));
	CHECK_OK(teardown_pair(e, &pp));
	return 0;
}

/*
 * Access through a handle the peer may no longer use.  The target's memory
 * must not change; what the connection does then is provider behaviour,
 * asserted from `expectations`.
 */
enum bad_access {
	BAD_REVOKED_WRITE,
	BAD_REVOKED_READ,
	BAD_READONLY_WRITE,
	BAD_OUT_OF_BOUNDS,
};

static int bad_access_case(struct env *e, enum bad_access kind)
{
	struct pair pp;
	struct rbuf sb, cb;
	struct rpcrdma_prov_grant *g;
	struct rpcrdma_prov_rseg seg;
	struct rpcrdma_prov_event ev;
	struct rpcrdma_prov_sge sge;
	bool write = kind != BAD_REVOKED_READ;
	unsigned int access = RPCRDMA_PACCESS_REMOTE_WRITE;
	ssize_t term;
	int flushed = 0;

	if (kind == BAD_REVOKED_READ || kind == BAD_READONLY_WRITE)
		access = RPCRDMA_PACCESS_REMOTE_READ;
	CHECK_OK(establish(e, NULL, NULL, 0, NULL, 0, NULL, NULL, &pp));
	CHECK_OK(rbuf_init(&e->srv, &sb, 8192));
	CHECK_OK(rbuf_init(&e->cli, &cb, 8192));
	memset(sb.mem, 0x11, sb.len);
	memset(cb.mem, 0x22, cb.len);
	/* Receives on both sides, to watch them being flushed. */
	for (unsigned int k = 0; k < 4; k++) {
		CHECK_OK(post_recv1(pp.s, &sb, 4096 + k * 256, 256, CTX(T_RECV, k)));
		CHECK_OK(post_recv1(pp.c, &cb, 4096 + k * 256, 256, CTX(T_RECV, k)));
	}
	CHECK_OK(rpcrdma__provider_grant(pp.s, sb.mr, sb.mem + 1024, 1024, access, &g, &seg));
	if (kind == BAD_REVOKED_WRITE || kind == BAD_REVOKED_READ) {
		CHECK_OK(rpcrdma__provider_revoke(g, CTX(T_REVOKE, 0)));
		g = NULL;
		CHECK(wait_comp(e, &e->srv, CTX(T_REVOKE, 0), &ev));
	}
	if (kind == BAD_OUT_OF_BOUNDS) {
		seg.offset += 1000; /* 1000 + 100 > 1024 */
		seg.length = 100;
	} else {
		seg.length = 512;
	}
	sge = (struct rpcrdma_prov_sge){cb.mem, seg.length, cb.mr};
	if (write)
		CHECK_OK(rpcrdma__provider_post_write(pp.c, &sge, 1, &seg, 1, CTX(T_WRITE, 0)));
	else
		CHECK_OK(rpcrdma__provider_post_read(pp.c, &sge, 1, &seg, 1, CTX(T_READ, 0)));

	CHECK(wait_comp(e, &e->cli, write ? CTX(T_WRITE, 0) : CTX(T_READ, 0), &ev));
	printf("  initiator: %s completed with %s (%d)\n", write ? "write" : "read",
	       st_str(ev.status), ev.error);
	if (!write && e->ex->read_error_reported)
		CHECK(ev.status != RPCRDMA_PST_SUCCESS);
	if (write && (e->cli.p->caps.flags & RPCRDMA_PCAP_WRITE_ERRORS_REPORTED))
		CHECK(ev.status != RPCRDMA_PST_SUCCESS);
	if (ev.status != RPCRDMA_PST_SUCCESS)
		CHECK(ev.status == RPCRDMA_PST_REMOTE_ACCESS || ev.status == RPCRDMA_PST_FLUSHED ||
		      ev.status == RPCRDMA_PST_TRANSPORT);

	if (e->ex->protection_error_disconnects) {
		/* Both sides: the receives are flushed, then DISCONNECTED. */
		term = wait_idx(e, &e->srv, RPCRDMA_PEV_DISCONNECTED, pp.s, false, NULL, true,
		                DEFAULT_WAIT_MS);
		CHECK(term >= 0);
		for (ssize_t i = 0; i < term; i++)
			if (e->srv.ev[i].type == RPCRDMA_PEV_COMPLETION &&
			    e->srv.ev[i].op == RPCRDMA_POP_RECV) {
				CHECK(e->srv.ev[i].status == RPCRDMA_PST_FLUSHED);
				flushed++;
			}
		CHECK(flushed == 4);
		printf("  target: DISCONNECTED (error %d) after %d flushed receives\n",
		       e->srv.ev[term].error, flushed);
		term = wait_idx(e, &e->cli, RPCRDMA_PEV_DISCONNECTED, pp.c, false, NULL, true,
		                DEFAULT_WAIT_MS);
		CHECK(term >= 0);
		flushed = 0;
		for (ssize_t i = 0; i < term; i++)
			if (e->cli.ev[i].type == RPCRDMA_PEV_COMPLETION &&
			    e->cli.ev[i].op == RPCRDMA_POP_RECV)
				flushed++;
		CHECK(flushed == 4);
		CHECK(pp.c->state == RPCRDMA_PCONN_CLOSED && pp.s->state == RPCRDMA_PCONN_CLOSED);
		/* A dead connection takes no more work. */
		CHECK_RC(post_send1(pp.c, &cb, 0, 8, CTX(T_SEND, 0)), -ENOTCONN);
		CHECK_RC(post_recv1(pp.c, &cb, 0, 8, CTX(T_RECV, 9)), -ENOTCONN);
		CHECK_OK(rpcrdma__provider_disconnect(pp.c));
	}
	/* The target's memory is as it was. */
	for (size_t j = 0; j < 4096; j++)
		CHECK(sb.mem[j] == 0x11);
	if (!write)
		for (size_t j = 0; j < 4096; j++)
			CHECK(cb.mem[j] == 0x22);
	if (g) {
		CHECK_OK(rpcrdma__provider_revoke(g, CTX(T_REVOKE, 1)));
		CHECK(wait_comp(e, &e->srv, CTX(T_REVOKE, 1), &ev));
	}
	if (!e->ex->protection_error_disconnects)
		CHECK_OK(teardown_pair(e, &pp));
	else {
		rpcrdma__provider_conn_destroy(pp.c);
		rpcrdma__provider_conn_destroy(pp.s);
	}
	forget_completions(&e->cli);
	forget_completions(&e->srv);
	rbuf_free(&sb);
	rbuf_free(&cb);
	return 0;
}

static int test_revoked_write(struct env *e)
{
	return bad_access_case(e, BAD_REVOKED_WRITE);
}

static int test_revoked_read(struct env *e)
{
	return bad_access_case(e, BAD_REVOKED_READ);
}

static int test_readonly_write(struct env *e)
{
	return bad_access_case(e, BAD_READONLY_WRITE);
}

static int test_out_of_bounds(struct env *e)
{
	return bad_access_case(e, BAD_OUT_OF_BOUNDS);
}

/*
 * Disconnect flushes posted receives on both sides, before DISCONNECTED.
 */
static int flush_case(struct env *e, bool client_disconnects)
{
	struct pair pp;
	struct rbuf cb, sb;
	struct side *sides[2] = {&e->cli, &e->srv};
	const unsigned int nrecv = 8;

	CHECK_OK(rbuf_init(&e->cli, &cb, 4096));
	CHECK_OK(rbuf_init(&e->srv, &sb, 4096));
	CHECK_OK(establish(e, NULL, NULL, 0, NULL, 0, NULL, NULL, &pp));
	for (unsigned int k = 0; k < nrecv; k++) {
		CHECK_OK(post_recv1(pp.c, &cb, k * 256, 256, CTX(T_RECV, k)));
		CHECK_OK(post_recv1(pp.s, &sb, k * 256, 256, CTX(T_RECV, k)));
	}
	settle(e, 10);
	CHECK_OK(rpcrdma__provider_disconnect(client_disconnects ? pp.c : pp.s));
	/* Disconnecting twice is harmless and adds no event. */
	CHECK_OK(rpcrdma__provider_disconnect(client_disconnects ? pp.c : pp.s));
	for (int k = 0; k < 2; k++) {
		struct side *s = sides[k];
		struct rpcrdma_prov_conn *c = k ? pp.s : pp.c;
		ssize_t term =
		    wait_idx(e, s, RPCRDMA_PEV_DISCONNECTED, c, false, NULL, true, DEFAULT_WAIT_MS);
		unsigned int seen = 0;

		CHECK(term >= 0);
		CHECK(s->ev[term].error == 0);
		for (ssize_t i = 0; i < term; i++) {
			const struct rpcrdma_prov_event *ev = &s->ev[i];

			if (ev->type != RPCRDMA_PEV_COMPLETION || ev->conn != c)
				continue;
			CHECK(ev->op == RPCRDMA_POP_RECV && ev->status == RPCRDMA_PST_FLUSHED);
			CHECK(CTX_TAG(ev->ctx) == T_RECV && CTX_N(ev->ctx) < nrecv);
			seen |= 1u << CTX_N(ev->ctx);
		}
		CHECK(seen == (1u << nrecv) - 1);
		/* Nothing after the terminal event. */
		settle(e, 20);
		for (size_t i = (size_t)term + 1; i < s->n; i++)
			CHECK(s->ev[i].conn != c);
		s->n = 0;
	}
	rpcrdma__provider_conn_destroy(pp.c);
	rpcrdma__provider_conn_destroy(pp.s);
	rbuf_free(&cb);
	rbuf_free(&sb);
	return 0;
}

static int test_recv_flush_on_disconnect(struct env *e)
{
	CHECK_OK(flush_case(e, true));
	CHECK_OK(flush_case(e, false));
	return 0;
}

/*
 * Destroying a connection in any state flushes what it holds, with conn ==
 * NULL, and no terminal event follows.
 */
static int test_destroy_outstanding(struct env *e)
{
	struct rbuf cb, sb;
	struct pair pp;
	struct rpcrdma_prov_conn *c;
	struct rpcrdma_prov_event ev;

	CHECK_OK(rbuf_init(&e->cli, &cb, 4096));
	CHECK_OK(rbuf_init(&e->srv, &sb, 4096));

	/* Never connected. */
	CHECK_OK(rpcrdma__provider_conn_create(e->cli.p, NULL, NULL, &c));
	CHECK_OK(post_recv1(c, &cb, 0, 128, CTX(T_RECV, 1)));
	CHECK_OK(post_recv1(c, &cb, 128, 128, CTX(T_RECV, 2)));
	rpcrdma__provider_conn_destroy(c);
	for (unsigned int k = 1; k <= 2; k++) {
		CHECK(wait_comp(e, &e->cli, CTX(T_RECV, k), &ev));
		CHECK(ev.conn == NULL && ev.status == RPCRDMA_PST_FLUSHED);
	}

	/* Established, destroyed without a disconnect. */
	CHECK_OK(establish(e, NULL, NULL, 0, NULL, 0, NULL, NULL, &pp));
	for (unsigned int k = 0; k < 4; k++) {
		CHECK_OK(post_recv1(pp.c, &cb, k * 256, 256, CTX(T_RECV, 10 + k)));
		CHECK_OK(post_recv1(pp.s, &sb, k * 256, 256, CTX(T_RECV, 10 + k)));
	}
	rpcrdma__provider_conn_destroy(pp.c);
	for (unsigned int k = 0; k < 4; k++) {
		CHECK(wait_comp(e, &e->cli, CTX(T_RECV, 10 + k), &ev));
		CHECK(ev.conn == NULL && ev.status == RPCRDMA_PST_FLUSHED);
	}
	CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_DISCONNECTED, pp.s, &ev));
	for (unsigned int k = 0; k < 4; k++) {
		CHECK(wait_comp(e, &e->srv, CTX(T_RECV, 10 + k), &ev));
		CHECK(ev.conn == pp.s && ev.status == RPCRDMA_PST_FLUSHED);
	}
	settle(e, 20);
	CHECK(e->cli.n == 0);
	rpcrdma__provider_conn_destroy(pp.s);

	/* A request destroyed before accept or reject: the peer is refused. */
	CHECK_OK(rpcrdma__provider_conn_create(e->cli.p, NULL, NULL, &c));
	CHECK_OK(
	    rpcrdma__provider_connect(c, (struct sockaddr *)&e->lst_addr, e->lst_len, NULL, 0));
	CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_CONNECT_REQUEST, NULL, &ev));
	CHECK_OK(post_recv1(ev.conn, &sb, 0, 64, CTX(T_RECV, 30)));
	rpcrdma__provider_conn_destroy(ev.conn);
	CHECK(wait_comp(e, &e->srv, CTX(T_RECV, 30), &ev));
	CHECK(ev.conn == NULL && ev.status == RPCRDMA_PST_FLUSHED);
	CHECK(wait_idx(e, &e->cli, RPCRDMA_PEV_REJECTED, c, false, NULL, true, DEFAULT_WAIT_MS) >=
	          0 ||
	      wait_idx(e, &e->cli, RPCRDMA_PEV_CONNECT_ERROR, c, false, NULL, true, 10) >= 0 ||
	      wait_idx(e, &e->cli, RPCRDMA_PEV_DISCONNECTED, c, false, NULL, true, 10) >= 0);
	rpcrdma__provider_conn_destroy(c);
	settle(e, 10);
	rbuf_free(&cb);
	rbuf_free(&sb);
	return 0;
}

/*
 * Wakeups: with nothing to do, the fd stays quiet; a message from the peer
 * wakes it; trywait refuses to let the owner sleep on pending events.
 */
static int fd_wait(struct rpcrdma_provider *p, int ms)
{
	struct epoll_event ee;
	int epfd = epoll_create1(EPOLL_CLOEXEC), n;

	if (epfd < 0)
		return -errno;
	memset(&ee, 0, sizeof(ee));
	ee.events = EPOLLIN;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, rpcrdma__provider_fd(p), &ee)) {
		close(epfd);
		return -errno;
	}
	n = epoll_wait(epfd, &ee, 1, ms);
	close(epfd);
	return n;
}

/* Polls until empty and trywait agrees: the owner may now sleep. */
static int arm(struct side *s)
{
	for (int k = 0; k < 1000; k++) {
		drain(s);
		if (rpcrdma__provider_trywait(s->p) == 0)
			return 0;
	}
	return -EAGAIN;
}

static int wake_one_way(struct env *e, struct side *tx, struct side *rx,
                        struct rpcrdma_prov_conn *txc, struct rpcrdma_prov_conn *rxc,
                        struct rbuf *tb, struct rbuf *rb, unsigned int round, unsigned int *wakeups)
{
	int64_t end = now_ms() + DEFAULT_WAIT_MS;
	ssize_t i;

	CHECK_OK(post_recv1(rxc, rb, 0, 256, CTX(T_RECV, round)));
	/* The receiver goes to sleep first... */
	CHECK_OK(arm(rx));
	CHECK(find_ev(rx, RPCRDMA_PEV_COMPLETION, rxc, false, CTX(T_RECV, round), false) < 0);
	/* ...then the peer sends, and its loop runs once, as after a post. */
	fill(tb->mem, 64, round);
	CHECK_OK(post_send1(txc, tb, 0, 64, CTX(T_SEND, round)));
	drain(tx);
	for (;;) {
		/* Asleep on the receiver's fd alone: only a wakeup gets us out. */
		CHECK(fd_wait(rx->p, (int)(end - now_ms())) == 1);
		(*wakeups)++;
		drain(rx);
		i = find_ev(rx, RPCRDMA_PEV_COMPLETION, rxc, false, CTX(T_RECV, round), false);
		if (i >= 0)
			break;
		CHECK(now_ms() < end);
		CHECK_OK(arm(rx));
		i = find_ev(rx, RPCRDMA_PEV_COMPLETION, rxc, false, CTX(T_RECV, round), false);
		if (i >= 0)
			break;
	}
	CHECK(rx->ev[i].status == RPCRDMA_PST_SUCCESS && rx->ev[i].byte_len == 64);
	CHECK(first_mismatch(rb->mem, 64, round) < 0);
	take(rx, (size_t)i, NULL);
	CHECK(wait_comp(e, tx, CTX(T_SEND, round), NULL));
	return 0;
}

static int test_fd_wakeup(struct env *e)
{
	struct pair pp;
	struct rbuf cb, sb;
	struct rpcrdma_prov_grant *g;
	struct rpcrdma_prov_rseg seg;
	unsigned int wakeups = 0, idle_wakeups = 0;
	const unsigned int rounds = 20;

	CHECK_OK(rbuf_init(&e->cli, &cb, 4096));
	CHECK_OK(rbuf_init(&e->srv, &sb, 4096));
	CHECK_OK(establish(e, NULL, NULL, 0, NULL, 0, NULL, NULL, &pp));
	settle(e, 20);

	/* Idle: after poll-until-empty and trywait, nothing wakes us. */
	for (int k = 0; k < 5; k++) {
		CHECK_OK(arm(&e->srv));
		if (fd_wait(e->srv.p, 40) > 0)
			idle_wakeups++;
	}
	CHECK(e->srv.n == 0);
	CHECK(idle_wakeups < 5); /* not stuck readable */

	for (unsigned int r = 0; r < rounds; r++) {
		CHECK_OK(wake_one_way(e, &e->cli, &e->srv, pp.c, pp.s, &cb, &sb, 2 * r, &wakeups));
		CHECK_OK(
		    wake_one_way(e, &e->srv, &e->cli, pp.s, pp.c, &sb, &cb, 2 * r + 1, &wakeups));
	}
	printf("  %u messages needed %u fd wakeups; %u of 5 idle waits woke\n", 2 * rounds, wakeups,
	       idle_wakeups);
	CHECK(wakeups >= 2 * rounds);

	/* A revoke completion is never lost to a sleeping owner: either the
	 * provider holds it and trywait refuses (ofi), or it comes from the
	 * device and wakes the fd (verbs: the Local Invalidate's completion). */
	CHECK_OK(arm(&e->srv));
	CHECK_OK(rpcrdma__provider_grant(pp.s, sb.mr, sb.mem, 64, RPCRDMA_PACCESS_REMOTE_READ, &g,
	                                 &seg));
	CHECK_OK(rpcrdma__provider_revoke(g, CTX(T_REVOKE, 0)));
	if (rpcrdma__provider_trywait(e->srv.p) == 0)
		CHECK(fd_wait(e->srv.p, DEFAULT_WAIT_MS) == 1);
	CHECK(wait_comp(e, &e->srv, CTX(T_REVOKE, 0), NULL));
	CHECK_OK(teardown_pair(e, &pp));
	rbuf_free(&cb);
	rbuf_free(&sb);
	return 0;
}

/* A Send that finds no receive posted waits for one (no error, no loss). */
static int test_send_before_recv(struct env *e)
{
	struct pair pp;
	struct rbuf cb, sb;
	struct rpcrdma_prov_event ev;

	CHECK_OK(rbuf_init(&e->cli, &cb, 4096));
	CHECK_OK(rbuf_init(&e->srv, &sb, 4096));
	CHECK_OK(establish(e, NULL, NULL, 0, NULL, 0, NULL, NULL, &pp));
	fill(cb.mem, 1000, 77);
	CHECK_OK(post_send1(pp.c, &cb, 0, 1000, CTX(T_SEND, 1)));
	settle(e, 200);
	CHECK(find_ev(&e->srv, RPCRDMA_PEV_DISCONNECTED, pp.s, false, NULL, true) < 0);
	CHECK(find_ev(&e->cli, RPCRDMA_PEV_DISCONNECTED, pp.c, false, NULL, true) < 0);
	CHECK_OK(post_recv1(pp.s, &sb, 0, 2048, CTX(T_RECV, 1)));
	CHECK(wait_comp(e, &e->srv, CTX(T_RECV, 1), &ev));
	CHECK(ev.status == RPCRDMA_PST_SUCCESS && ev.byte_len == 1000);
	CHECK(first_mismatch(sb.mem, 1000, 77) < 0);
	CHECK(wait_comp(e, &e->cli, CTX(T_SEND, 1), &ev));
	CHECK(ev.status == RPCRDMA_PST_SUCCESS);
	CHECK_OK(teardown_pair(e, &pp));
	rbuf_free(&cb);
	rbuf_free(&sb);
	return 0;
}

/*
 * A Send gathering registered and unregistered memory, where the provider
 * says Sends need no registration (RPCRDMA_PCAP_SEND_UNREGISTERED): the
 * receiver gets the entries in order.  Elsewhere the same Send is refused.
 */
static int test_send_unregistered(struct env *e)
{
	struct rpcrdma_prov_sge sge[3];
	struct rpcrdma_prov_event ev;
	struct pair pp;
	struct rbuf cb, sb;
	uint8_t *plain = malloc(20000);
	uint8_t want[20000 + 200];

	CHECK(plain != NULL);
	CHECK_OK(rbuf_init(&e->cli, &cb, 4096));
	CHECK_OK(rbuf_init(&e->srv, &sb, 32768));
	CHECK_OK(establish(e, NULL, NULL, 0, NULL, 0, NULL, NULL, &pp));
	fill(cb.mem, 200, 5);
	fill(plain, 20000, 6);
	sge[0] = (struct rpcrdma_prov_sge){cb.mem, 100, cb.mr};
	sge[1] = (struct rpcrdma_prov_sge){plain, 20000, NULL};
	sge[2] = (struct rpcrdma_prov_sge){cb.mem + 100, 100, cb.mr};
	if (!(e->cli.p->caps.flags & RPCRDMA_PCAP_SEND_UNREGISTERED) ||
	    e->cli.p->caps.max_send_sge < 3) {
		CHECK_RC(rpcrdma__provider_post_send(pp.c, sge, 2, 0, 0, NULL), -EINVAL);
		goto out;
	}
	CHECK_OK(post_recv1(pp.s, &sb, 0, 32768, CTX(T_RECV, 1)));
	CHECK_OK(rpcrdma__provider_post_send(pp.c, sge, 3, 0, 0, CTX(T_SEND, 1)));
	CHECK(wait_comp(e, &e->srv, CTX(T_RECV, 1), &ev));
	CHECK(ev.status == RPCRDMA_PST_SUCCESS && ev.byte_len == 20200);
	memcpy(want, cb.mem, 100);
	memcpy(want + 100, plain, 20000);
	memcpy(want + 20100, cb.mem + 100, 100);
	CHECK(memcmp(sb.mem, want, sizeof(want)) == 0);
	CHECK(wait_comp(e, &e->cli, CTX(T_SEND, 1), &ev));
	CHECK(ev.status == RPCRDMA_PST_SUCCESS);
out:
	CHECK_OK(teardown_pair(e, &pp));
	rbuf_free(&cb);
	rbuf_free(&sb);
	free(plain);
	return 0;
}

/*
 * Data right behind the handshake: the accepting side sends as soon as its
 * own ESTABLISHED is out, before the client has polled at all, so the
 * client may get the handshake's end and the data in one progress call.
 * It must still see ESTABLISHED before the receive completes (track_order
 * checks the same everywhere).  Before its ESTABLISHED, the accepting side
 * may not send.
 */
static int test_send_on_accept(struct env *e)
{
	struct rpcrdma_prov_stats st;
	struct rpcrdma_prov_conn *c, *s;
	struct rpcrdma_prov_event ev;
	struct rbuf cb, sb;
	ssize_t up, got;

	CHECK_OK(rbuf_init(&e->cli, &cb, 4096));
	CHECK_OK(rbuf_init(&e->srv, &sb, 4096));
	for (unsigned int round = 0; round < 20; round++) {
		int64_t end = now_ms() + DEFAULT_WAIT_MS;

		CHECK_OK(rpcrdma__provider_conn_create(e->cli.p, NULL, NULL, &c));
		CHECK_OK(post_recv1(c, &cb, 0, 512, CTX(T_RECV, round)));
		CHECK_OK(rpcrdma__provider_connect(c, (struct sockaddr *)&e->lst_addr, e->lst_len,
		                                   NULL, 0));
		CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_CONNECT_REQUEST, NULL, &ev));
		s = ev.conn;
		CHECK_OK(rpcrdma__provider_accept(s, NULL, 0));
		fill(sb.mem, 300, round);
		CHECK_RC(post_send1(s, &sb, 0, 300, CTX(T_SEND, round)), -ENOTCONN);
		/* The server alone runs until it is up; the client sleeps,
		 * unless the handshake needs it (verbs: the RTU comes from the
		 * client's event processing, which also reports its own
		 * ESTABLISHED, so the race below is narrower there). */
		while (find_ev(&e->srv, RPCRDMA_PEV_ESTABLISHED, s, false, NULL, true) < 0) {
			CHECK(now_ms() < end);
			drain(&e->srv);
			if (e->ex->accept_needs_peer_poll)
				drain(&e->cli);
		}
		CHECK_OK(post_send1(s, &sb, 0, 300, CTX(T_SEND, round)));
		got = wait_idx(e, &e->cli, RPCRDMA_PEV_COMPLETION, c, false, CTX(T_RECV, round),
		               false, DEFAULT_WAIT_MS);
		CHECK(got >= 0);
		up = find_ev(&e->cli, RPCRDMA_PEV_ESTABLISHED, c, false, NULL, true);
		CHECK(up >= 0 && up < got);
		CHECK(e->cli.ev[got].status == RPCRDMA_PST_SUCCESS &&
		      e->cli.ev[got].byte_len == 300);
		CHECK(first_mismatch(cb.mem, 300, round) < 0);
		e->cli.n = 0;
		CHECK(wait_comp(e, &e->srv, CTX(T_SEND, round), &ev));
		CHECK(ev.status == RPCRDMA_PST_SUCCESS);
		e->srv.n = 0;
		CHECK_OK(teardown_pair(e, &(struct pair){c, s}));
	}
	rpcrdma__provider_stats(e->cli.p, &st);
	printf("  completions held back until ESTABLISHED: %" PRIu64 "\n", st.parked);
	rbuf_free(&cb);
	rbuf_free(&sb);
	return 0;
}

/* A message longer than the receive posted for it. */
static int test_local_length(struct env *e)
{
	struct pair pp;
	struct rbuf cb, sb;
	struct rpcrdma_prov_event ev;

	CHECK_OK(rbuf_init(&e->cli, &cb, 4096));
	CHECK_OK(rbuf_init(&e->srv, &sb, 4096));
	CHECK_OK(establish(e, NULL, NULL, 0, NULL, 0, NULL, NULL, &pp));
	memset(sb.mem, 0x33, sb.len);
	CHECK_OK(post_recv1(pp.s, &sb, 0, 100, CTX(T_RECV, 1)));
	CHECK_OK(post_recv1(pp.s, &sb, 1024, 100, CTX(T_RECV, 2)));
	fill(cb.mem, 200, 5);
	CHECK_OK(post_send1(pp.c, &cb, 0, 200, CTX(T_SEND, 1)));
	CHECK(wait_comp(e, &e->srv, CTX(T_RECV, 1), &ev));
	printf("  receiver: %s (%d)\n", st_str(ev.status), ev.error);
	CHECK(ev.status != RPCRDMA_PST_SUCCESS);
	if (e->ex->truncation_reported)
		CHECK(ev.status == RPCRDMA_PST_LOCAL_LENGTH);
	/* Never a byte past the posted buffer. */
	for (size_t j = 100; j < 1024; j++)
		CHECK(sb.mem[j] == 0x33);
	if (e->ex->truncation_disconnects) {
		CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_DISCONNECTED, pp.s, &ev));
		CHECK(wait_conn_ev(e, &e->cli, RPCRDMA_PEV_DISCONNECTED, pp.c, &ev));
		rpcrdma__provider_conn_destroy(pp.c);
		rpcrdma__provider_conn_destroy(pp.s);
	} else {
		CHECK_OK(teardown_pair(e, &pp));
	}
	forget_completions(&e->cli);
	forget_completions(&e->srv);
	rbuf_free(&cb);
	rbuf_free(&sb);
	return 0;
}

/*
 * Handles: unique while live, not reused soon after revocation, and with no
 * visible order (rfc5666bis 10.1.2).
 */
static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The pool of the library's own registered buffers (bufpool.c) keeps at
 * most 1024 idle buffers a size class and 64 MiB an instance: what a
 * burst gives back beyond is deregistered and freed, and a second burst
 * registers again only what the pool could not keep.  The byte bound
 * takes 68 MiB of buffers at once, so only where registering pins
 * nothing (ofi): on verbs it would need that much locked memory.
 */
static int test_bufpool_bounds(struct env *e)
{
	enum { SMALL = RPCRDMA__BUFPOOL_MAX_PER_CLASS + 76, BIG = 17 };
	const size_t big = (size_t)4 << 20;
	struct rpcrdma_provider *p = e->cli.p;
	uint8_t **addr = calloc(SMALL, sizeof(*addr));
	struct rpcrdma_prov_mr **mr = calloc(SMALL, sizeof(*mr));
	struct rpcrdma_prov_stats s0, s1;
	size_t cap;

	CHECK(addr && mr);
	for (int round = 0; round < 2; round++) {
		rpcrdma__provider_stats(p, &s0);
		for (int i = 0; i < SMALL; i++) {
			CHECK_OK(rpcrdma__bufpool_get(p, 1000, &addr[i], &cap, &mr[i]));
			CHECK(cap == 1024);
		}
		for (int i = 0; i < SMALL; i++)
			rpcrdma__bufpool_put(p, addr[i], mr[i]);
		rpcrdma__provider_stats(p, &s1);
		CHECK(rpcrdma__bufpool_bytes(p) == (size_t)RPCRDMA__BUFPOOL_MAX_PER_CLASS * 1024);
		CHECK(s1.dereg_mrs - s0.dereg_mrs == SMALL - RPCRDMA__BUFPOOL_MAX_PER_CLASS);
		CHECK(s1.reg_mrs - s0.reg_mrs ==
		      (round ? SMALL - RPCRDMA__BUFPOOL_MAX_PER_CLASS : SMALL));
	}
	if (strcmp(e->prov, "ofi") == 0) {
		size_t before = rpcrdma__bufpool_bytes(p);

		rpcrdma__provider_stats(p, &s0);
		for (int i = 0; i < BIG; i++)
			CHECK_OK(rpcrdma__bufpool_get(p, big, &addr[i], &cap, &mr[i]));
		for (int i = 0; i < BIG; i++)
			rpcrdma__bufpool_put(p, addr[i], mr[i]);
		rpcrdma__provider_stats(p, &s1);
		CHECK(rpcrdma__bufpool_bytes(p) <= RPCRDMA__BUFPOOL_MAX_BYTES);
		CHECK(rpcrdma__bufpool_bytes(p) > RPCRDMA__BUFPOOL_MAX_BYTES - big);
		CHECK(s1.dereg_mrs - s0.dereg_mrs ==
		      BIG - (rpcrdma__bufpool_bytes(p) - before) / big);
	}
	free(addr);
	free(mr);
	return 0;
}

static int test_handles(struct env *e)
{
	enum { LIVE = 1000, CHURN = 20000, WINDOW = 4096 };
	struct rpcrdma_prov_grant **live = calloc(LIVE, sizeof(*live));
	uint32_t *h = calloc(CHURN, sizeof(*h)), *sorted = calloc(CHURN, sizeof(*sorted));
	struct rpcrdma_prov_rseg seg;
	struct rpcrdma_prov_stats st;
	struct pair pp;
	struct rbuf sb;
	unsigned int steps = 0, dups = 0;

	CHECK(live && h && sorted);
	CHECK_OK(rbuf_init(&e->srv, &sb, 1 << 20));
	CHECK_OK(establish(e, NULL, NULL, 0, NULL, 0, NULL, NULL, &pp));

	/* A thousand live grants over overlapping regions: all distinct. */
	for (unsigned int i = 0; i < LIVE; i++) {
		CHECK_OK(grant_retry(e, pp.s, sb.mr, sb.mem + i * 512, 4096,
		                     RPCRDMA_PACCESS_REMOTE_READ, &live[i], &seg));
		CHECK(seg.handle != 0);
		sorted[i] = seg.handle;
	}
	qsort(sorted, LIVE, sizeof(*sorted), cmp_u32);
	for (unsigned int i = 1; i < LIVE; i++)
		CHECK(sorted[i] != sorted[i - 1]);
	for (unsigned int i = 0; i < LIVE; i++)
		CHECK_OK(revoke_retry(e, live[i], CTX(T_REVOKE, i)));
	settle(e, 10);
	forget_completions(&e->srv);

	/* Grant, revoke, grant again... */
	for (unsigned int i = 0; i < CHURN; i++) {
		struct rpcrdma_prov_grant *g;

		CHECK_OK(grant_retry(e, pp.s, sb.mr, sb.mem, 64, RPCRDMA_PACCESS_REMOTE_WRITE, &g,
		                     &seg));
		h[i] = seg.handle;
		CHECK(h[i] != 0);
		CHECK_OK(revoke_retry(e, g, CTX(T_REVOKE, 0)));
		if (i % 1024 == 0) {
			drain(&e->srv);
			forget_completions(&e->srv);
		}
	}
	drain(&e->srv);
	forget_completions(&e->srv);
	for (unsigned int i = 1; i < CHURN; i++) {
		int64_t d = (int64_t)h[i] - (int64_t)h[i - 1];

		if (d >= -16 && d <= 16)
			steps++;
	}
	memcpy(sorted, h, CHURN * sizeof(*h));
	qsort(sorted, CHURN, sizeof(*sorted), cmp_u32);
	for (unsigned int i = 1; i < CHURN; i++)
		dups += sorted[i] == sorted[i - 1];
	printf("  %d handles: %u near-sequential steps, %u values seen twice\n", CHURN, steps,
	       dups);
	/* Random 32-bit values: a small step is a 1-in-10^8 event. */
	CHECK(steps <= 2);
	/* Within the quarantine window a revoked handle never comes back
	 * (ofi and verbs both check their keys against the quarantine, verbs
	 * also where the device picks them). */
	for (unsigned int i = 0; i < CHURN; i++)
		for (unsigned int j = i + 1; j < CHURN && j <= i + WINDOW; j++)
			CHECK(h[i] != h[j]);
	rpcrdma__provider_stats(e->srv.p, &st);
	CHECK(st.grants_live == 0);
	CHECK(st.revokes == st.grants);
	CHECK_OK(teardown_pair(e, &pp));
	rbuf_free(&sb);
	free(live);
	free(h);
	free(sorted);
	return 0;
}

/* Calls the interface refuses, and that nothing happens when it does. */
static int test_invalid_args(struct env *e)
{
	const struct rpcrdma_prov_caps *caps = &e->cli.p->caps;
	struct rpcrdma_prov_conn_attr attr = {.send_depth = 4, .recv_depth = 4};
	struct rpcrdma_prov_sge sge[RPCRDMA_PROV_MAX_RSEGS + 2];
	struct rpcrdma_prov_rseg seg[RPCRDMA_PROV_MAX_RSEGS + 2];
	struct rpcrdma_prov_grant *g;
	struct rpcrdma_prov_mr *mr;
	struct rbuf cb, sb;
	struct pair pp;
	uint8_t unreg[64];

	CHECK_OK(rbuf_init(&e->cli, &cb, 4096));
	CHECK_OK(rbuf_init(&e->srv, &sb, 4096));
	CHECK_RC(rpcrdma__provider_reg_mr(e->cli.p, NULL, 10, &mr), -EINVAL);
	CHECK_RC(rpcrdma__provider_reg_mr(e->cli.p, cb.mem, 0, &mr), -EINVAL);
	CHECK_OK(establish(e, &attr, NULL, 0, NULL, 0, NULL, NULL, &pp));
	CHECK(pp.c->attr.send_depth == 4 && pp.c->attr.recv_depth == 4);

	for (unsigned int i = 0; i < RPCRDMA_PROV_MAX_RSEGS + 2; i++) {
		sge[i] = (struct rpcrdma_prov_sge){cb.mem + i * 8, 8, cb.mr};
		seg[i] = (struct rpcrdma_prov_rseg){1, 8, 0};
	}
	/* Too many entries. */
	CHECK_RC(rpcrdma__provider_post_send(pp.c, sge, caps->max_send_sge + 1, 0, 0, NULL),
	         -EINVAL);
	CHECK_RC(rpcrdma__provider_post_recv(pp.c, sge, caps->max_recv_sge + 1, NULL), -EINVAL);
	CHECK_RC(rpcrdma__provider_post_write(pp.c, sge, 1, seg, caps->max_rdma_segs + 1, NULL),
	         -EINVAL);
	/* An entry outside its registration; no registration at all. */
	sge[0] = (struct rpcrdma_prov_sge){cb.mem + 4090, 8, cb.mr};
	CHECK_RC(rpcrdma__provider_post_send(pp.c, sge, 1, 0, 0, NULL), -EINVAL);
	sge[0] = (struct rpcrdma_prov_sge){unreg, 8, NULL};
	/* (A provider whose Sends need no registration would send it.) */
	if (!(caps->flags & RPCRDMA_PCAP_SEND_UNREGISTERED))
		CHECK_RC(rpcrdma__provider_post_send(pp.c, sge, 1, 0, 0, NULL), -EINVAL);
	CHECK_RC(rpcrdma__provider_post_recv(pp.c, sge, 1, NULL), -EINVAL);
	/* Inline beyond max_inline. */
	sge[0] = (struct rpcrdma_prov_sge){cb.mem, caps->max_inline + 1, NULL};
	CHECK_RC(rpcrdma__provider_post_send(pp.c, sge, 1, RPCRDMA_PSEND_INLINE, 0, NULL), -EINVAL);
	/* Unknown flags; Send With Invalidate where it does not exist. */
	sge[0] = (struct rpcrdma_prov_sge){cb.mem, 8, cb.mr};
	CHECK_RC(rpcrdma__provider_post_send(pp.c, sge, 1, 1u << 7, 0, NULL), -EINVAL);
	if (!(caps->flags & RPCRDMA_PCAP_SEND_INVALIDATE))
		CHECK_RC(
		    rpcrdma__provider_post_send(pp.c, sge, 1, RPCRDMA_PSEND_INVALIDATE, 1, NULL),
		    -EOPNOTSUPP);
	/* Lengths that do not add up; an empty transfer; a wrapping segment. */
	seg[0] = (struct rpcrdma_prov_rseg){1, 16, 0};
	CHECK_RC(rpcrdma__provider_post_read(pp.c, sge, 1, seg, 1, NULL), -EINVAL);
	sge[0].length = 0;
	seg[0].length = 0;
	CHECK_RC(rpcrdma__provider_post_read(pp.c, sge, 1, seg, 1, NULL), -EINVAL);
	sge[0].length = 8;
	seg[0] = (struct rpcrdma_prov_rseg){1, 8, UINT64_MAX - 3};
	CHECK_RC(rpcrdma__provider_post_write(pp.c, sge, 1, seg, 1, NULL), -EINVAL);
	/* Grants: outside the registration, no access, unknown access. */
	CHECK_RC(rpcrdma__provider_grant(pp.s, sb.mr, sb.mem + 4000, 200,
	                                 RPCRDMA_PACCESS_REMOTE_READ, &g, seg),
	         -EINVAL);
	CHECK_RC(rpcrdma__provider_grant(pp.s, sb.mr, sb.mem, 200, 0, &g, seg), -EINVAL);
	CHECK_RC(rpcrdma__provider_grant(pp.s, sb.mr, sb.mem, 200, 1u << 5, &g, seg), -EINVAL);
	CHECK_RC(
	    rpcrdma__provider_grant(pp.s, sb.mr, sb.mem, 0, RPCRDMA_PACCESS_REMOTE_READ, &g, seg),
	    -EINVAL);
	/* Queues: recv_depth receives, then -EAGAIN. */
	for (unsigned int k = 0; k < 4; k++)
		CHECK_OK(post_recv1(pp.c, &cb, k * 64, 64, CTX(T_RECV, k)));
	CHECK_RC(post_recv1(pp.c, &cb, 512, 64, CTX(T_RECV, 9)), -EAGAIN);
	/* Calls in the wrong state. */
	CHECK_RC(rpcrdma__provider_accept(pp.c, NULL, 0), -ENOTCONN);
	CHECK_RC(rpcrdma__provider_reject(pp.c, NULL, 0), -ENOTCONN);
	CHECK_RC(
	    rpcrdma__provider_connect(pp.c, (struct sockaddr *)&e->lst_addr, e->lst_len, NULL, 0),
	    -ENOTCONN);
	settle(e, 20);
	CHECK(e->cli.n == 0 && e->srv.n == 0); /* the refusals did nothing */
	CHECK_OK(teardown_pair(e, &pp));
	forget_completions(&e->cli);
	rbuf_free(&cb);
	rbuf_free(&sb);
	return 0;
}

/* Closing a listener with a request the owner has not answered. */
static int test_listener_close(struct env *e)
{
	struct rpcrdma_prov_conn *c, *s;
	struct rpcrdma_prov_event ev;
	ssize_t i;

	CHECK_OK(rpcrdma__provider_conn_create(e->cli.p, NULL, NULL, &c));
	CHECK_OK(
	    rpcrdma__provider_connect(c, (struct sockaddr *)&e->lst_addr, e->lst_len, NULL, 0));
	CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_CONNECT_REQUEST, NULL, &ev));
	s = ev.conn;
	rpcrdma__provider_listener_close(e->lst);
	e->lst = NULL;
	CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_DISCONNECTED, s, &ev));
	CHECK(ev.error == -ECONNABORTED);
	CHECK(s->state == RPCRDMA_PCONN_CLOSED);
	rpcrdma__provider_conn_destroy(s);
	i = wait_idx(e, &e->cli, RPCRDMA_PEV_REJECTED, c, false, NULL, true, DEFAULT_WAIT_MS);
	if (i < 0)
		i = wait_idx(e, &e->cli, RPCRDMA_PEV_CONNECT_ERROR, c, false, NULL, true, 10);
	CHECK(i >= 0);
	rpcrdma__provider_conn_destroy(c);
	return 0;
}

/*
 * A thousand connections come and go, fifty at a time, each with a
 * message, a grant and its revocation; descriptors and registrations end
 * where they started.
 */
#define CHURN_ROUNDS 20
#define CHURN_BATCH 50

static int test_churn(struct env *e)
{
	struct rpcrdma_prov_conn_attr attr = {.send_depth = 4, .recv_depth = 4};
	struct pair pp[CHURN_BATCH];
	struct rbuf cb, sb;
	struct rpcrdma_prov_stats cs0, ss0, cs, ss;
	int fds0 = -1, fds;
	int64_t t0 = now_ms();

	CHECK_OK(rbuf_init(&e->cli, &cb, CHURN_BATCH * 128));
	CHECK_OK(rbuf_init(&e->srv, &sb, CHURN_BATCH * 128));
	for (int r = 0; r < CHURN_ROUNDS; r++) {
		struct rpcrdma_prov_event ev;
		unsigned int up = 0, req = 0;

		if (r == 1) {
			/* After one round, so libfabric's one-time set-up is not
			 * counted as a leak. */
			fds0 = count_fds();
			rpcrdma__provider_stats(e->cli.p, &cs0);
			rpcrdma__provider_stats(e->srv.p, &ss0);
		}
		for (int k = 0; k < CHURN_BATCH; k++) {
			uint32_t tag = (uint32_t)(r * CHURN_BATCH + k);

			CHECK_OK(rpcrdma__provider_conn_create(e->cli.p, &attr,
			                                       CTX(T_CONN_CLIENT, k), &pp[k].c));
			pp[k].s = NULL;
			CHECK_OK(post_recv1(pp[k].c, &cb, (size_t)k * 128, 64, CTX(T_RECV, k)));
			CHECK_OK(rpcrdma__provider_connect(pp[k].c, (struct sockaddr *)&e->lst_addr,
			                                   e->lst_len, &tag, sizeof(tag)));
		}
		/* Accept each request; its private data says which client. */
		while (req < CHURN_BATCH) {
			uint32_t tag;

			CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_CONNECT_REQUEST, NULL, &ev));
			CHECK(ev.private_len >= sizeof(tag));
			memcpy(&tag, ev.private_data, sizeof(tag));
			CHECK(tag >= (uint32_t)(r * CHURN_BATCH) &&
			      tag < (uint32_t)((r + 1) * CHURN_BATCH));
			tag -= (uint32_t)(r * CHURN_BATCH);
			CHECK(pp[tag].s == NULL);
			pp[tag].s = ev.conn;
			ev.conn->ctx = CTX(T_CONN_SERVER, tag);
			CHECK_OK(post_recv1(ev.conn, &sb, (size_t)tag * 128, 64, CTX(T_RECV, tag)));
			CHECK_OK(rpcrdma__provider_accept(ev.conn, NULL, 0));
			req++;
		}
		/* Both sides' ESTABLISHED events, in whatever order they come. */
		for (int64_t end = now_ms() + DEFAULT_WAIT_MS; up < 2 * CHURN_BATCH;) {
			ssize_t i =
			    find_ev(&e->cli, RPCRDMA_PEV_ESTABLISHED, NULL, true, NULL, true);
			struct side *s = &e->cli;

			if (i < 0) {
				s = &e->srv;
				i = find_ev(s, RPCRDMA_PEV_ESTABLISHED, NULL, true, NULL, true);
			}
			if (i >= 0) {
				take(s, (size_t)i, NULL);
				up++;
				continue;
			}
			CHECK(now_ms() < end);
			pump(e, MAX_STEP_MS);
		}
		for (int k = 0; k < CHURN_BATCH; k++) {
			struct rpcrdma_prov_grant *g;
			struct rpcrdma_prov_rseg seg;

			CHECK_OK(
			    post_send1(pp[k].c, &cb, (size_t)k * 128 + 64, 16, CTX(T_SEND, k)));
			CHECK_OK(grant_retry(e, pp[k].s, sb.mr, sb.mem + k * 128 + 64, 64,
			                     RPCRDMA_PACCESS_REMOTE_WRITE, &g, &seg));
			CHECK_OK(revoke_retry(e, g, CTX(T_REVOKE, k)));
		}
		for (int k = 0; k < CHURN_BATCH; k++) {
			CHECK(wait_comp(e, &e->srv, CTX(T_RECV, k), &ev));
			CHECK(ev.status == RPCRDMA_PST_SUCCESS && ev.byte_len == 16);
			CHECK(wait_comp(e, &e->cli, CTX(T_SEND, k), &ev));
			CHECK(ev.status == RPCRDMA_PST_SUCCESS);
			CHECK(wait_comp(e, &e->srv, CTX(T_REVOKE, k), &ev));
		}
		/* Half end from each side. */
		for (int k = 0; k < CHURN_BATCH; k++)
			CHECK_OK(rpcrdma__provider_disconnect(k % 2 ? pp[k].c : pp[k].s));
		for (int k = 0; k < CHURN_BATCH; k++) {
			CHECK(wait_conn_ev(e, &e->cli, RPCRDMA_PEV_DISCONNECTED, pp[k].c, &ev));
			CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_DISCONNECTED, pp[k].s, &ev));
			/* The client's unused receive was flushed before. */
			CHECK(wait_comp(e, &e->cli, CTX(T_RECV, k), &ev));
			CHECK(ev.status == RPCRDMA_PST_FLUSHED);
			rpcrdma__provider_conn_destroy(pp[k].c);
			rpcrdma__provider_conn_destroy(pp[k].s);
		}
		CHECK(e->cli.n == 0 && e->srv.n == 0);
	}
	/* The provider lets go of a connection's sockets as it progresses:
	 * up to 5 s of it on a loaded machine. */
	settle(e, 50);
	for (int i = 0; i < 100 && count_fds() != fds0; i++)
		settle(e, 50);
	fds = count_fds();
	rpcrdma__provider_stats(e->cli.p, &cs);
	rpcrdma__provider_stats(e->srv.p, &ss);
	printf("  %d connections in %" PRId64 " ms; fds %d -> %d; client conns %" PRIu64
	       " established, server %" PRIu64 "\n",
	       CHURN_ROUNDS * CHURN_BATCH, now_ms() - t0, fds0, fds, cs.conns_established,
	       ss.conns_established);
	CHECK(fds == fds0);
	CHECK(cs.conns_live == 0 && ss.conns_live == 0);
	CHECK(cs.grants_live == 0 && ss.grants_live == 0);
	CHECK(cs.mrs_live == cs0.mrs_live && ss.mrs_live == ss0.mrs_live);
	CHECK(ss.grants - ss0.grants == (CHURN_ROUNDS - 1) * CHURN_BATCH);
	CHECK(cs.conns_established - cs0.conns_established == (CHURN_ROUNDS - 1) * CHURN_BATCH);
	rbuf_free(&cb);
	rbuf_free(&sb);
	return 0;
}

/*
 * Send With Invalidate: the peer's Send invalidates one of our handles; our
 * receive says which, the memory is closed to it, and revoke completes.
 * Windows are reused round after round.  Without the capability the flag
 * is refused.
 */
#define SI_ROUNDS 40

static int test_send_invalidate(struct env *e)
{
	struct pair pp;
	struct rbuf cb, sb;
	struct rpcrdma_prov_grant *g;
	struct rpcrdma_prov_rseg seg;
	struct rpcrdma_prov_event ev;
	struct rpcrdma_prov_sge sge;
	uint32_t stale = 0;

	CHECK_OK(rbuf_init(&e->cli, &cb, 8192));
	CHECK_OK(rbuf_init(&e->srv, &sb, 8192));
	CHECK_OK(establish(e, NULL, NULL, 0, NULL, 0, NULL, NULL, &pp));
	if (!(e->cli.p->caps.flags & RPCRDMA_PCAP_SEND_INVALIDATE)) {
		sge = (struct rpcrdma_prov_sge){cb.mem, 8, cb.mr};
		CHECK_RC(rpcrdma__provider_post_send(pp.c, &sge, 1, RPCRDMA_PSEND_INVALIDATE, 1, NULL),
		         -EOPNOTSUPP);
		printf("  no Send With Invalidate: refused\n");
		CHECK_OK(teardown_pair(e, &pp));
		rbuf_free(&cb);
		rbuf_free(&sb);
		return 0;
	}
	for (unsigned int r = 0; r < SI_ROUNDS; r++) {
		uint8_t *dst = sb.mem + 1024 + (r % 4) * 512;

		CHECK_OK(post_recv1(pp.s, &sb, 0, 256, CTX(T_RECV, r)));
		CHECK_OK(grant_retry(e, pp.s, sb.mr, dst, 512, RPCRDMA_PACCESS_REMOTE_WRITE, &g,
		                     &seg));
		/* The client writes into the handle, then invalidates it with
		 * the Send that says so. */
		fill(cb.mem + 512, 512, r);
		sge = (struct rpcrdma_prov_sge){cb.mem + 512, 512, cb.mr};
		CHECK_OK(rpcrdma__provider_post_write(pp.c, &sge, 1, &seg, 1, CTX(T_WRITE, r)));
		sge = (struct rpcrdma_prov_sge){cb.mem, 16, cb.mr};
		CHECK_OK(rpcrdma__provider_post_send(pp.c, &sge, 1, RPCRDMA_PSEND_INVALIDATE,
		                                     seg.handle, CTX(T_SEND, r)));
		CHECK(wait_comp(e, &e->srv, CTX(T_RECV, r), &ev));
		CHECK(ev.status == RPCRDMA_PST_SUCCESS && ev.byte_len == 16);
		if (!(ev.flags & RPCRDMA_PEVF_INVALIDATED))
			fprintf(stderr, "round %u: receive flags %#x, handle %#x, want %#x\n", r,
			        ev.flags, ev.invalidated_handle, seg.handle);
		CHECK(ev.flags & RPCRDMA_PEVF_INVALIDATED);
		CHECK(ev.invalidated_handle == seg.handle);
		CHECK(first_mismatch(dst, 512, r) < 0);
		CHECK(wait_comp(e, &e->cli, CTX(T_WRITE, r), &ev));
		CHECK(ev.status == RPCRDMA_PST_SUCCESS);
		CHECK(wait_comp(e, &e->cli, CTX(T_SEND, r), &ev));
		CHECK(ev.status == RPCRDMA_PST_SUCCESS);
		/* revoke after the peer's invalidation: nothing left to fence. */
		CHECK_OK(rpcrdma__provider_revoke(g, CTX(T_REVOKE, r)));
		CHECK(wait_comp(e, &e->srv, CTX(T_REVOKE, r), &ev));
		CHECK(ev.status == RPCRDMA_PST_SUCCESS);
		stale = seg.handle;
	}
	printf("  %u handles invalidated by the peer's Sends\n", SI_ROUNDS);
	/* The last one is dead: a Write through it fails and, with RC, ends
	 * the connection; the memory is untouched. */
	memset(sb.mem + 1024, 0x77, 2048);
	seg.handle = stale;
	seg.length = 64;
	sge = (struct rpcrdma_prov_sge){cb.mem, 64, cb.mr};
	CHECK_OK(rpcrdma__provider_post_write(pp.c, &sge, 1, &seg, 1, CTX(T_WRITE, 99)));
	CHECK(wait_comp(e, &e->cli, CTX(T_WRITE, 99), &ev));
	printf("  write through the invalidated handle: %s\n", st_str(ev.status));
	CHECK(ev.status != RPCRDMA_PST_SUCCESS);
	CHECK(wait_conn_ev(e, &e->cli, RPCRDMA_PEV_DISCONNECTED, pp.c, &ev));
	CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_DISCONNECTED, pp.s, &ev));
	for (size_t j = 1024; j < 3072; j++)
		CHECK(sb.mem[j] == 0x77);
	rpcrdma__provider_conn_destroy(pp.c);
	rpcrdma__provider_conn_destroy(pp.s);
	forget_completions(&e->cli);
	forget_completions(&e->srv);
	rbuf_free(&cb);
	rbuf_free(&sb);
	return 0;
}

/*
 * Read depth (IRD/ORD).  Where it is negotiated, each side's attr says the
 * Reads it may have in flight: no more than the peer accepts.  More Reads
 * posted than that wait their turn; none fails.
 */
static int read_depth_case(struct env *e, uint32_t want, uint32_t lst)
{
	struct rpcrdma_prov_conn_attr attr = {.send_depth = 32, .read_depth = want};
	struct rpcrdma_prov_grant *g;
	struct rpcrdma_prov_rseg seg;
	struct rpcrdma_prov_event ev;
	struct rbuf cb, sb;
	struct pair pp;
	uint32_t agreed = want < lst ? want : lst, n;

	CHECK_OK(rbuf_init(&e->cli, &cb, 32 * 256));
	CHECK_OK(rbuf_init(&e->srv, &sb, 32 * 256));
	CHECK_OK(establish(e, &attr, NULL, 0, NULL, 0, NULL, NULL, &pp));
	printf("  asked %u (listener %u): client %u, server %u\n", want, lst,
	       pp.c->attr.read_depth, pp.s->attr.read_depth);
	if (e->ex->read_depth_negotiated) {
		CHECK(pp.c->attr.read_depth == agreed);
		CHECK(pp.s->attr.read_depth == agreed);
	} else {
		CHECK(pp.c->attr.read_depth == want && pp.s->attr.read_depth == lst);
	}
	fill(sb.mem, sb.len, 3);
	CHECK_OK(rpcrdma__provider_grant(pp.s, sb.mr, sb.mem, (uint32_t)sb.len,
	                                 RPCRDMA_PACCESS_REMOTE_READ, &g, &seg));
	n = 2 * pp.c->attr.read_depth + 1;
	if (n > 32)
		n = 32;
	for (uint32_t i = 0; i < n; i++) {
		struct rpcrdma_prov_sge sge = {cb.mem + i * 256, 256, cb.mr};
		struct rpcrdma_prov_rseg s1 = {seg.handle, 256, seg.offset + i * 256};

		CHECK_OK(rpcrdma__provider_post_read(pp.c, &sge, 1, &s1, 1, CTX(T_READ, i)));
	}
	for (uint32_t i = 0; i < n; i++) {
		CHECK(wait_comp(e, &e->cli, CTX(T_READ, i), &ev));
		CHECK(ev.status == RPCRDMA_PST_SUCCESS);
	}
	CHECK(memcmp(cb.mem, sb.mem, n * 256) == 0);
	CHECK_OK(rpcrdma__provider_revoke(g, CTX(T_REVOKE, 0)));
	CHECK(wait_comp(e, &e->srv, CTX(T_REVOKE, 0), &ev));
	CHECK_OK(teardown_pair(e, &pp));
	rbuf_free(&cb);
	rbuf_free(&sb);
	return 0;
}

static int test_read_depth(struct env *e)
{
	/* env_open's listener asks for 8. */
	CHECK_OK(read_depth_case(e, 4, 8));
	CHECK_OK(read_depth_case(e, 16, 8));
	return 0;
}

/*
 * Handle scope: a handle granted on one connection, used from another
 * connection to the same instance.  With RPCRDMA_PCAP_CONN_SCOPED_HANDLES
 * (verbs windows) that fails and ends the intruding connection only;
 * without it (ofi) it works, which is why handles must be unpredictable.
 */
static int test_handle_scope(struct env *e)
{
	bool scoped = e->srv.p->caps.flags & RPCRDMA_PCAP_CONN_SCOPED_HANDLES;
	struct rpcrdma_prov_grant *g;
	struct rpcrdma_prov_rseg seg;
	struct rpcrdma_prov_event ev;
	struct rpcrdma_prov_sge sge;
	struct rbuf cb, sb;
	struct pair p1, p2;

	CHECK_OK(rbuf_init(&e->cli, &cb, 4096));
	CHECK_OK(rbuf_init(&e->srv, &sb, 4096));
	fill(sb.mem, 4096, 9);
	CHECK_OK(establish(e, NULL, NULL, 0, NULL, 0, NULL, NULL, &p1));
	CHECK_OK(establish(e, NULL, NULL, 0, NULL, 0, NULL, NULL, &p2));
	CHECK_OK(rpcrdma__provider_grant(p1.s, sb.mr, sb.mem, 1024, RPCRDMA_PACCESS_REMOTE_READ,
	                                 &g, &seg));
	sge = (struct rpcrdma_prov_sge){cb.mem, 1024, cb.mr};
	CHECK_OK(rpcrdma__provider_post_read(p2.c, &sge, 1, &seg, 1, CTX(T_READ, 2)));
	CHECK(wait_comp(e, &e->cli, CTX(T_READ, 2), &ev));
	printf("  read through another connection's handle: %s (%s)\n", st_str(ev.status),
	       scoped ? "connection-scoped handles" : "instance-wide handles");
	if (scoped) {
		CHECK(ev.status != RPCRDMA_PST_SUCCESS);
		CHECK(wait_conn_ev(e, &e->cli, RPCRDMA_PEV_DISCONNECTED, p2.c, &ev));
		CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_DISCONNECTED, p2.s, &ev));
		rpcrdma__provider_conn_destroy(p2.c);
		rpcrdma__provider_conn_destroy(p2.s);
	} else {
		CHECK(ev.status == RPCRDMA_PST_SUCCESS);
		CHECK(memcmp(cb.mem, sb.mem, 1024) == 0);
		CHECK_OK(teardown_pair(e, &p2));
	}
	/* The connection it belongs to still reads it. */
	memset(cb.mem, 0, 1024);
	CHECK_OK(rpcrdma__provider_post_read(p1.c, &sge, 1, &seg, 1, CTX(T_READ, 1)));
	CHECK(wait_comp(e, &e->cli, CTX(T_READ, 1), &ev));
	CHECK(ev.status == RPCRDMA_PST_SUCCESS);
	CHECK(memcmp(cb.mem, sb.mem, 1024) == 0);
	CHECK_OK(rpcrdma__provider_revoke(g, CTX(T_REVOKE, 0)));
	CHECK(wait_comp(e, &e->srv, CTX(T_REVOKE, 0), &ev));
	CHECK_OK(teardown_pair(e, &p1));
	forget_completions(&e->cli);
	forget_completions(&e->srv);
	rbuf_free(&cb);
	rbuf_free(&sb);
	return 0;
}

/*
 * conn_handoff: connections arrive on the listener's instance and are
 * handed to "worker" instances, each polled by its own thread, as a server
 * with worker loops does.  A worker accepts with private data, grants
 * remote write access on its own instance, and the client RDMA Writes
 * there and Sends; the worker checks both.  Then bad targets are refused
 * and leave the request usable where it was.
 */
/*
 * Listening on the wildcard address (what a server without --addr does).
 * Waits drain the wildcard instance too, which the env's pump does not
 * know: on ofi it is a whole instance, and its peer makes progress only
 * while it is polled.
 */
static bool wait_wild(struct env *e, struct side *w, struct side *s, int type,
		      const struct rpcrdma_prov_conn *c, const void *ctx, bool any_ctx,
		      struct rpcrdma_prov_event *out)
{
	int64_t end = now_ms() + DEFAULT_WAIT_MS;

	for (;;) {
		ssize_t i;

		drain(w);
		i = find_ev(s, type, c, c == NULL, ctx, any_ctx);
		if (i >= 0) {
			take(s, (size_t)i, out);
			return true;
		}
		if (now_ms() >= end) {
			fprintf(stderr, "%s: no %s event within %d ms\n", s->name,
				rpcrdma__provider_event_str(type), DEFAULT_WAIT_MS);
			return false;
		}
		pump(e, 10);
	}
}

static int wildcard_case(struct env *e, struct side *w)
{
	struct rpcrdma_prov_conn_attr la = {.send_depth = 32, .recv_depth = 64, .read_depth = 8};
	struct sockaddr_storage any, la_addr, dst;
	struct rpcrdma_prov_open_attr oa = {(struct sockaddr *)&any, e->srv_len};
	struct rpcrdma_prov_listener *wl = NULL;
	struct rpcrdma_prov_conn *c, *s, *wc;
	struct rpcrdma_prov_event ev;
	struct rpcrdma_prov_stats st;
	struct rbuf sb = {0}, rb = {0};
	struct side *owner;
	socklen_t la_len;
	bool lonly;

	memset(&any, 0, sizeof(any));
	any.ss_family = e->srv_addr.ss_family; /* 0.0.0.0 or :: */
	CHECK_OK(rpcrdma__provider_open(e->prov, &oa, &w->p));
	lonly = (w->p->caps.flags & RPCRDMA_PCAP_LISTEN_ONLY) != 0;
	CHECK(lonly == e->ex->wildcard_listen_only);
	CHECK_OK(rpcrdma__provider_listen(w->p, (struct sockaddr *)&any, e->srv_len, 64, &la,
					  CTX(T_LISTENER, 7), &wl));
	CHECK_OK(rpcrdma__provider_listener_addr(wl, &la_addr, &la_len));
	CHECK(port_of(&la_addr) != 0);
	/* Reached on the server's address, through the wildcard's port. */
	dst = e->srv_addr;
	if (dst.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&dst)->sin6_port = htons(port_of(&la_addr));
	else
		((struct sockaddr_in *)&dst)->sin_port = htons(port_of(&la_addr));
	CHECK_OK(rpcrdma__provider_conn_create(e->cli.p, NULL, CTX(T_CONN_CLIENT, 7), &c));
	CHECK_OK(rbuf_init(&e->cli, &sb, 4096));
	CHECK_OK(rpcrdma__provider_connect(c, (struct sockaddr *)&dst, e->srv_len, "wild", 4));
	CHECK(wait_wild(e, w, w, RPCRDMA_PEV_CONNECT_REQUEST, NULL, NULL, true, &ev));
	CHECK(ev.listener == wl && ev.ctx == CTX(T_LISTENER, 7));
	wc = ev.conn;
	CHECK(wc && wc->state == RPCRDMA_PCONN_REQUESTED);
	CHECK(same_host(&wc->peer_addr, &e->cli_addr));
	if (lonly) {
		void *scratch = malloc(64);
		struct rpcrdma_prov_mr *mr;
		struct rpcrdma_prov_conn *nc;

		/* It names the address the client reached, which picks the
		 * device; it has no device to accept on. */
		CHECK(wc->local_addrlen == e->srv_len && same_host(&wc->local_addr, &e->srv_addr));
		CHECK(port_of(&wc->local_addr) == port_of(&la_addr));
		CHECK_RC(rpcrdma__provider_accept(wc, NULL, 0), -EOPNOTSUPP);
		CHECK(scratch);
		CHECK_RC(rpcrdma__provider_reg_mr(w->p, scratch, 64, &mr), -EOPNOTSUPP);
		free(scratch);
		CHECK_RC(rpcrdma__provider_conn_create(w->p, NULL, NULL, &nc), -EOPNOTSUPP);
		CHECK(wc->state == RPCRDMA_PCONN_REQUESTED);
		/* The server's instance is on that device: it takes it. */
		CHECK_OK(rpcrdma__provider_conn_handoff(wc, e->srv.p, CTX(T_CONN_SERVER, 7)));
		CHECK(wait_wild(e, w, &e->srv, RPCRDMA_PEV_CONNECT_REQUEST, NULL,
				CTX(T_CONN_SERVER, 7), false, &ev));
		CHECK(ev.listener == NULL);
		CHECK(private_ok(e, &ev, "wild", 4));
		s = ev.conn;
		CHECK(s && s->state == RPCRDMA_PCONN_REQUESTED);
		CHECK(same_host(&s->local_addr, &e->srv_addr));
		rpcrdma__provider_stats(w->p, &st);
		CHECK_RC(st.conns_handed_off, 1);
		CHECK_RC(st.conns_live, 0);
		owner = &e->srv;
	} else {
		/* One instance serves every address: it accepts itself. */
		CHECK(private_matches(&w->p->caps, &ev, "wild", 4));
		s = wc;
		owner = w;
	}
	s->ctx = CTX(T_CONN_SERVER, 7);
	CHECK_OK(rbuf_init(owner, &rb, 4096));
	CHECK_OK(post_recv1(s, &rb, 0, 4096, CTX(T_RECV, 7)));
	CHECK_OK(rpcrdma__provider_accept(s, NULL, 0));
	CHECK(wait_wild(e, w, owner, RPCRDMA_PEV_ESTABLISHED, s, NULL, true, &ev));
	CHECK(wait_wild(e, w, &e->cli, RPCRDMA_PEV_ESTABLISHED, c, NULL, true, &ev));
	fill(sb.mem, 3000, 77);
	CHECK_OK(post_send1(c, &sb, 0, 3000, CTX(T_SEND, 7)));
	CHECK(wait_wild(e, w, &e->cli, RPCRDMA_PEV_COMPLETION, NULL, CTX(T_SEND, 7), false, &ev));
	CHECK(ev.status == RPCRDMA_PST_SUCCESS);
	CHECK(wait_wild(e, w, owner, RPCRDMA_PEV_COMPLETION, NULL, CTX(T_RECV, 7), false, &ev));
	CHECK(ev.status == RPCRDMA_PST_SUCCESS && ev.byte_len == 3000 && ev.conn == s);
	CHECK(first_mismatch(rb.mem, 3000, 77) < 0);
	CHECK_OK(rpcrdma__provider_disconnect(c));
	CHECK(wait_wild(e, w, &e->cli, RPCRDMA_PEV_DISCONNECTED, c, NULL, true, &ev));
	CHECK(wait_wild(e, w, owner, RPCRDMA_PEV_DISCONNECTED, s, NULL, true, &ev));
	rpcrdma__provider_conn_destroy(c);
	rpcrdma__provider_conn_destroy(s);
	rbuf_free(&rb);
	rbuf_free(&sb);
	rpcrdma__provider_listener_close(wl);
	return 0;
}

static int test_wildcard_listen(struct env *e)
{
	struct side w = {.name = "wildcard"};
	int rc = wildcard_case(e, &w);

	if (!rc && (w.poll_err || w.order_errors)) {
		fprintf(stderr, "wildcard instance: poll %d, order errors %u\n", w.poll_err,
			w.order_errors);
		rc = 1;
	}
	/* Closing frees what a failed check left (listener, requests). */
	if (w.p)
		rpcrdma__provider_close(w.p);
	free(w.ev);
	free(w.up);
	return rc;
}

#define HO_WORKERS 3
#define HO_CONNS 12
#define HO_BYTES 4096

struct ho_worker {
	struct rpcrdma_provider *p;
	pthread_t th;
	atomic_bool stop;
	/* Written by the worker thread, read after join (verified also
	 * before, atomically). */
	unsigned int accepted, verified, bad, disconnected;
	struct ho_slot {
		struct rpcrdma_prov_conn *c;
		struct rpcrdma_prov_mr *mr;
		struct rpcrdma_prov_grant *g;
		uint8_t *mem; /* [0, HO_BYTES): the Write target; then receive and send areas */
		unsigned int n;
	} slot[HO_CONNS];
	unsigned int nslots;
};

static void *ho_worker_main(void *arg)
{
	struct ho_worker *w = arg;
	struct rpcrdma_prov_event ev[16];

	while (!atomic_load(&w->stop)) {
		struct pollfd pfd = {.fd = rpcrdma__provider_fd(w->p), .events = POLLIN};
		int n = rpcrdma__provider_poll(w->p, ev, 16);

		if (n < 0) {
			w->bad++;
			break;
		}
		if (n == 0) {
			if (rpcrdma__provider_trywait(w->p) == 0)
				(void)poll(&pfd, 1, 20);
			continue;
		}
		for (int i = 0; i < n; i++) {
			struct ho_slot *sl;
			struct rpcrdma_prov_sge sge;
			struct rpcrdma_prov_rseg seg;

			switch (ev[i].type) {
			case RPCRDMA_PEV_CONNECT_REQUEST:
				if (ev[i].listener || CTX_TAG(ev[i].ctx) != T_CONN_SERVER ||
				    !private_matches(&w->p->caps, &ev[i], "cli", 3) ||
				    !ev[i].conn->peer_addrlen || w->nslots >= HO_CONNS) {
					w->bad++;
					break;
				}
				sl = &w->slot[w->nslots];
				sl->n = w->nslots++;
				sl->c = ev[i].conn;
				sl->c->ctx = sl;
				sl->mem = calloc(1, 3 * HO_BYTES);
				if (!sl->mem || rpcrdma__provider_reg_mr(w->p, sl->mem,
									 3 * HO_BYTES, &sl->mr)) {
					w->bad++;
					break;
				}
				sge =
				    (struct rpcrdma_prov_sge){sl->mem + HO_BYTES, HO_BYTES, sl->mr};
				if (rpcrdma__provider_post_recv(sl->c, &sge, 1,
								CTX(T_RECV, sl->n)) ||
				    rpcrdma__provider_accept(sl->c, "srv", 3))
					w->bad++;
				break;
			case RPCRDMA_PEV_ESTABLISHED:
				sl = ev[i].ctx;
				w->accepted++;
				/* Tell the client where to write: a grant on this instance. */
				if (rpcrdma__provider_grant(sl->c, sl->mr, sl->mem, HO_BYTES,
							    RPCRDMA_PACCESS_REMOTE_WRITE, &sl->g,
							    &seg)) {
					w->bad++;
					break;
				}
				memcpy(sl->mem + 2 * HO_BYTES, &seg, sizeof(seg));
				sge = (struct rpcrdma_prov_sge){sl->mem + 2 * HO_BYTES, sizeof(seg),
								sl->mr};
				if (rpcrdma__provider_post_send(sl->c, &sge, 1, 0, 0,
								CTX(T_SEND, sl->n)))
					w->bad++;
				break;
			case RPCRDMA_PEV_COMPLETION:
				if (ev[i].status != RPCRDMA_PST_SUCCESS) {
					if (ev[i].status != RPCRDMA_PST_FLUSHED)
						w->bad++;
					break;
				}
				if (ev[i].op == RPCRDMA_POP_RECV) {
					sl = &w->slot[CTX_N(ev[i].ctx)];
					/* The Send follows the Write: the data is in place. */
					for (unsigned int k = 0; k < HO_BYTES; k++) {
						if (sl->mem[k] !=
						    (uint8_t)(k * 7 + sl->mem[HO_BYTES])) {
							w->bad++;
							break;
						}
					}
					/* The main thread polls this one. */
					__atomic_add_fetch(&w->verified, 1, __ATOMIC_RELEASE);
				}
				break;
			case RPCRDMA_PEV_DISCONNECTED:
				w->disconnected++;
				break;
			default:
				w->bad++;
				break;
			}
		}
	}
	return NULL;
}

static void ho_worker_free(struct ho_worker *w)
{
	for (unsigned int i = 0; i < w->nslots; i++) {
		struct ho_slot *sl = &w->slot[i];

		if (sl->g)
			(void)rpcrdma__provider_revoke(sl->g, NULL);
		if (sl->c)
			rpcrdma__provider_conn_destroy(sl->c);
		if (sl->mr)
			rpcrdma__provider_dereg_mr(sl->mr);
		free(sl->mem);
	}
	if (w->p)
		rpcrdma__provider_close(w->p);
}

static int test_handoff(struct env *e)
{
	struct rpcrdma_prov_open_attr sa = {(struct sockaddr *)&e->srv_addr, e->srv_len};
	static struct ho_worker w[HO_WORKERS];
	struct rpcrdma_prov_conn *c[HO_CONNS];
	struct rpcrdma_prov_event ev;
	struct rbuf cb;
	unsigned int got = 0, written = 0, accepted = 0, verified = 0, bad = 0;
	int64_t end;

	memset(w, 0, sizeof(w));
	for (int i = 0; i < HO_WORKERS; i++) {
		CHECK_OK(rpcrdma__provider_open(e->prov, &sa, &w[i].p));
		atomic_init(&w[i].stop, false);
	}

	/* Bad targets: the request stays where it is, still usable. */
	CHECK_OK(rbuf_init(&e->cli, &cb, HO_CONNS * 2 * HO_BYTES));
	CHECK_OK(rpcrdma__provider_conn_create(e->cli.p, NULL, CTX(T_CONN_CLIENT, 99), &c[0]));
	CHECK_OK(
	    rpcrdma__provider_connect(c[0], (struct sockaddr *)&e->lst_addr, e->lst_len, "cli", 3));
	CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_CONNECT_REQUEST, NULL, &ev));
	CHECK_RC(rpcrdma__provider_conn_handoff(ev.conn, NULL, NULL), -EINVAL);
	CHECK_RC(rpcrdma__provider_conn_handoff(ev.conn, e->srv.p, NULL), -EINVAL);
	CHECK(ev.conn->state == RPCRDMA_PCONN_REQUESTED);
	CHECK_OK(rpcrdma__provider_reject(ev.conn, NULL, 0));
	rpcrdma__provider_conn_destroy(ev.conn);
	CHECK(wait_conn_ev(e, &e->cli, RPCRDMA_PEV_REJECTED, c[0], NULL));
	rpcrdma__provider_conn_destroy(c[0]);

	for (int i = 0; i < HO_WORKERS; i++)
		CHECK(pthread_create(&w[i].th, NULL, ho_worker_main, &w[i]) == 0);
	for (unsigned int k = 0; k < HO_CONNS; k++) {
		CHECK_OK(
		    rpcrdma__provider_conn_create(e->cli.p, NULL, CTX(T_CONN_CLIENT, k), &c[k]));
		CHECK_OK(rpcrdma__provider_post_recv(
		    c[k], &(struct rpcrdma_prov_sge){cb.mem + 2 * k * HO_BYTES, HO_BYTES, cb.mr}, 1,
		    CTX(T_RECV, k)));
		CHECK_OK(rpcrdma__provider_connect(c[k], (struct sockaddr *)&e->lst_addr,
						   e->lst_len, "cli", 3));
	}
	/* Each request goes to a worker, round robin; the rest happens there. */
	for (unsigned int k = 0; k < HO_CONNS; k++) {
		CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_CONNECT_REQUEST, NULL, &ev));
		CHECK(ev.listener == e->lst);
		CHECK_OK(rpcrdma__provider_conn_handoff(ev.conn, w[k % HO_WORKERS].p,
							CTX(T_CONN_SERVER, k)));
	}
	/* The client: on each worker's grant, Write a pattern there, then Send. */
	end = now_ms() + 20000;
	while (written < HO_CONNS) {
		ssize_t i;

		CHECK(now_ms() < end);
		i = wait_idx(e, &e->cli, RPCRDMA_PEV_COMPLETION, NULL, true, NULL, true, 100);
		if (i < 0)
			continue;
		take(&e->cli, (size_t)i, &ev);
		if (ev.op == RPCRDMA_POP_RECV) {
			unsigned int k = CTX_N(ev.ctx);
			struct rpcrdma_prov_rseg seg;
			uint8_t *src = cb.mem + (2 * k + 1) * HO_BYTES;

			CHECK(ev.status == RPCRDMA_PST_SUCCESS && ev.byte_len == sizeof(seg));
			memcpy(&seg, cb.mem + 2 * k * HO_BYTES, sizeof(seg));
			CHECK(seg.length == HO_BYTES);
			for (unsigned int b = 0; b < HO_BYTES; b++)
				src[b] = (uint8_t)(b * 7 + k);
			/* The worker reads byte HO_BYTES (its receive) as the seed. */
			src[0] = (uint8_t)k;
			CHECK_OK(rpcrdma__provider_post_write(
			    c[k], &(struct rpcrdma_prov_sge){src, HO_BYTES, cb.mr}, 1, &seg, 1,
			    CTX(T_WRITE, k)));
			CHECK_OK(rpcrdma__provider_post_send(
			    c[k], &(struct rpcrdma_prov_sge){src, 1, cb.mr}, 1, 0, 0,
			    CTX(T_SEND, k)));
			got++;
		} else if (ev.op == RPCRDMA_POP_SEND) {
			CHECK(ev.status == RPCRDMA_PST_SUCCESS);
			written++;
		} else {
			CHECK(ev.status == RPCRDMA_PST_SUCCESS);
		}
	}
	/* Every worker verified what landed in its memory. */
	end = now_ms() + 10000;
	for (;;) {
		verified = 0;
		for (int i = 0; i < HO_WORKERS; i++)
			verified += __atomic_load_n(&w[i].verified, __ATOMIC_ACQUIRE);
		if (verified == HO_CONNS || now_ms() > end)
			break;
		pump(e, 20);
	}
	for (unsigned int k = 0; k < HO_CONNS; k++)
		(void)rpcrdma__provider_disconnect(c[k]);
	settle(e, 200);
	for (int i = 0; i < HO_WORKERS; i++) {
		atomic_store(&w[i].stop, true);
		pthread_join(w[i].th, NULL);
		accepted += w[i].accepted;
		bad += w[i].bad;
		/* Handed out evenly. */
		CHECK(w[i].nslots == HO_CONNS / HO_WORKERS);
	}
	printf("  %u handed over, %u established on workers, %u verified, %u bad\n", HO_CONNS,
	       accepted, verified, bad);
	CHECK(got == HO_CONNS && accepted == HO_CONNS && verified == HO_CONNS && bad == 0);
	for (unsigned int k = 0; k < HO_CONNS; k++)
		rpcrdma__provider_conn_destroy(c[k]);
	for (int i = 0; i < HO_WORKERS; i++)
		ho_worker_free(&w[i]);
	rbuf_free(&cb);
	e->cli.n = 0;
	return 0;
}

/*
 * A request handed over and refused there: by its new owner, with private
 * data, or by the new owner's close before it even looked.  The peer is
 * told each time, and nothing of the request stays behind: no descriptor
 * (ofi: its socket is libfabric's until refused through libfabric) and,
 * under ASan, no memory.
 */
static int test_handoff_refused(struct env *e)
{
	struct rpcrdma_prov_open_attr sa = {(struct sockaddr *)&e->srv_addr, e->srv_len};
	struct side w = {.name = "worker"};
	struct rpcrdma_prov_conn *c;
	struct rpcrdma_prov_event ev;
	int fds0 = count_fds(), fds = -1;
	ssize_t i;

	CHECK_OK(rpcrdma__provider_open(e->prov, &sa, &w.p));
	/* Refused by its new owner. */
	CHECK_OK(rpcrdma__provider_conn_create(e->cli.p, NULL, CTX(T_CONN_CLIENT, 1), &c));
	CHECK_OK(rpcrdma__provider_connect(c, (struct sockaddr *)&e->lst_addr, e->lst_len, "cli", 3));
	CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_CONNECT_REQUEST, NULL, &ev));
	CHECK_OK(rpcrdma__provider_conn_handoff(ev.conn, w.p, CTX(T_CONN_SERVER, 1)));
	CHECK(wait_wild(e, &w, &w, RPCRDMA_PEV_CONNECT_REQUEST, NULL, CTX(T_CONN_SERVER, 1), false,
			&ev));
	CHECK(ev.listener == NULL);
	CHECK_OK(rpcrdma__provider_reject(ev.conn, "busy", 4));
	rpcrdma__provider_conn_destroy(ev.conn);
	CHECK(wait_wild(e, &w, &e->cli, RPCRDMA_PEV_REJECTED, c, NULL, true, &ev));
	CHECK(ev.error == -ECONNREFUSED);
	CHECK(private_ok(e, &ev, "busy", 4));
	rpcrdma__provider_conn_destroy(c);

	/* Still in the new owner's inbox when it closes. */
	CHECK_OK(rpcrdma__provider_conn_create(e->cli.p, NULL, CTX(T_CONN_CLIENT, 2), &c));
	CHECK_OK(rpcrdma__provider_connect(c, (struct sockaddr *)&e->lst_addr, e->lst_len, "cli", 3));
	CHECK(wait_conn_ev(e, &e->srv, RPCRDMA_PEV_CONNECT_REQUEST, NULL, &ev));
	CHECK_OK(rpcrdma__provider_conn_handoff(ev.conn, w.p, CTX(T_CONN_SERVER, 2)));
	rpcrdma__provider_close(w.p);
	w.p = NULL;
	i = wait_idx(e, &e->cli, RPCRDMA_PEV_REJECTED, c, false, NULL, true, DEFAULT_WAIT_MS);
	if (i < 0)
		i = wait_idx(e, &e->cli, RPCRDMA_PEV_CONNECT_ERROR, c, false, NULL, true, 10);
	CHECK(i >= 0);
	take(&e->cli, (size_t)i, &ev);
	rpcrdma__provider_conn_destroy(c);
	free(w.ev);
	free(w.up);
	for (int k = 0; k < 100 && (fds = count_fds()) > fds0; k++)
		settle(e, 10);
	printf("  fds %d -> %d\n", fds0, fds);
	CHECK(fds <= fds0);
	return 0;
}

/*
 * The runner.
 */
struct test_case {
	const char *name;
	int (*fn)(struct env *e);
};

static const struct test_case cases[] = {
    {"open_caps", test_open_caps},
    {"connect_private_data", test_connect_private_data},
    {"peer_address", test_peer_address},
    {"handoff", test_handoff},
    {"handoff_refused", test_handoff_refused},
    {"wildcard_listen", test_wildcard_listen},
    {"reject_private_data", test_reject_private_data},
    {"connect_refused", test_connect_refused},
    {"send_recv", test_send_recv},
    {"rdma_write", test_rdma_write},
    {"rdma_read", test_rdma_read},
    {"revoked_write", test_revoked_write},
    {"revoked_read", test_revoked_read},
    {"readonly_write", test_readonly_write},
    {"out_of_bounds", test_out_of_bounds},
    {"recv_flush_on_disconnect", test_recv_flush_on_disconnect},
    {"destroy_outstanding", test_destroy_outstanding},
    {"fd_wakeup", test_fd_wakeup},
    {"send_before_recv", test_send_before_recv},
    {"send_unregistered", test_send_unregistered},
    {"send_on_accept", test_send_on_accept},
    {"local_length", test_local_length},
    {"handles", test_handles},
    {"send_invalidate", test_send_invalidate},
    {"read_depth", test_read_depth},
    {"handle_scope", test_handle_scope},
    {"invalid_args", test_invalid_args},
    {"listener_close", test_listener_close},
    {"churn", test_churn},
    {"bufpool_bounds", test_bufpool_bounds},
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

static int parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		*len = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, s, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		*len = sizeof(*sin6);
		return 0;
	}
	return -EINVAL;
}

static int run_case(const struct test_case *tc, const char *prov, const struct expect *ex,
                    const char *srv, const char *cli)
{
	struct env e;
	int64_t t0 = now_ms();
	int rc;

	memset(&e, 0, sizeof(e));
	e.epfd = -1;
	e.prov = prov;
	e.ex = ex;
	parse_addr(srv, &e.srv_addr, &e.srv_len);
	parse_addr(cli, &e.cli_addr, &e.cli_len);
	printf("[ RUN      ] %s\n", tc->name);
	fflush(stdout);
	rc = env_open(&e);
	if (rc && !e.cli.p)
		fprintf(stderr,
		        "provider %s could not open on %s: no RDMA device serves it here "
		        "(run the verbs cases in the lab: make lab-check)\n",
		        prov, cli);
	if (!rc)
		rc = tc->fn(&e);
	if (!rc && (e.cli.poll_err || e.srv.poll_err)) {
		fprintf(stderr, "poll failed: client %d, server %d\n", e.cli.poll_err,
		        e.srv.poll_err);
		rc = 1;
	}
	if (!rc && (e.cli.order_errors || e.srv.order_errors))
		rc = 1;
	env_close(&e);
	printf("[ %s ] %s (%" PRId64 " ms)\n", rc ? " FAILED " : "      OK", tc->name,
	       now_ms() - t0);
	fflush(stdout);
	return rc;
}

static void usage(void)
{
	fprintf(stderr, "usage: provider_suite [--provider NAME] [--server ADDR] [--client ADDR]\n"
	                "                      [--timeout SECONDS] [--list] [--expect-no-device]\n"
	                "                      [CASE...]\n");
}

/*
 * --expect-no-device: on a machine without RDMA hardware (the build hosts),
 * opening the provider must fail cleanly with -ENODEV.  Exit 0 when it does,
 * 77 (ctest's skip) when the machine does have a device for the address.
 */
static int expect_no_device(const char *prov, const char *addr)
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct rpcrdma_prov_open_attr oa = {(struct sockaddr *)&ss, 0};
	struct rpcrdma_provider *p = NULL;
	int rc;

	if (parse_addr(addr, &ss, &len))
		return 2;
	oa.addrlen = len;
	rc = rpcrdma__provider_open(prov, &oa, &p);
	if (rc == -ENODEV) {
		printf("provider %s on %s: open returned -ENODEV (%s): no RDMA device here, "
		       "as expected; its conformance cases run in the lab (make lab-check)\n",
		       prov, addr, strerror(ENODEV));
		return 0;
	}
	if (rc == 0) {
		rpcrdma__provider_close(p);
		printf("provider %s on %s: this machine has an RDMA device for the address; "
		       "the no-device check does not apply (run the suite itself)\n",
		       prov, addr);
		return 77;
	}
	fprintf(stderr, "provider %s on %s: open returned %d (%s), want -ENODEV\n", prov, addr, rc,
	        strerror(rc < 0 ? -rc : rc));
	return 1;
}

int main(int argc, char **argv)
{
	const char *prov = "ofi", *srv = "127.0.0.1", *cli = NULL;
	const struct expect *ex = NULL;
	struct sockaddr_storage ss;
	socklen_t len;
	unsigned int timeout = 120, passed = 0, failed = 0;
	bool selected[NCASES], any = false, no_device = false;

	memset(selected, 0, sizeof(selected));
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--provider") == 0 && i + 1 < argc) {
			prov = argv[++i];
		} else if (strcmp(argv[i], "--server") == 0 && i + 1 < argc) {
			srv = argv[++i];
		} else if (strcmp(argv[i], "--client") == 0 && i + 1 < argc) {
			cli = argv[++i];
		} else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
			timeout = (unsigned int)strtoul(argv[++i], NULL, 10);
		} else if (strcmp(argv[i], "--expect-no-device") == 0) {
			no_device = true;
		} else if (strcmp(argv[i], "--list") == 0) {
			for (size_t k = 0; k < NCASES; k++)
				printf("%s\n", cases[k].name);
			return 0;
		} else if (argv[i][0] == '-') {
			usage();
			return 2;
		} else {
			size_t k;

			for (k = 0; k < NCASES; k++)
				if (strcmp(argv[i], cases[k].name) == 0)
					break;
			if (k == NCASES) {
				fprintf(stderr, "unknown case %s\n", argv[i]);
				return 2;
			}
			selected[k] = any = true;
		}
	}
	if (!cli)
		cli = srv;
	if (parse_addr(srv, &ss, &len) || parse_addr(cli, &ss, &len)) {
		fprintf(stderr, "bad address\n");
		return 2;
	}
	if (no_device)
		return expect_no_device(prov, cli);
	for (size_t k = 0; k < sizeof(expectations) / sizeof(expectations[0]); k++)
		if (strcmp(expectations[k].provider, prov) == 0)
			ex = &expectations[k];
	if (!ex) {
		fprintf(stderr, "no expectations recorded for provider %s\n", prov);
		return 2;
	}
	/* A hung case must not hang the run: SIGALRM's default action ends
	 * the process, which ctest reports as a failure. */
	alarm(timeout);
	printf("provider %s, server %s, client %s\n", prov, srv, cli);
	for (size_t k = 0; k < NCASES; k++) {
		if (any && !selected[k])
			continue;
		if (run_case(&cases[k], prov, ex, srv, cli))
			failed++;
		else
			passed++;
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
