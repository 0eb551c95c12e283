/*
 * The "raw" baseline: the provider alone (src/provider/provider.h), no
 * RPC, no RPC-over-RDMA.  What the RPC stack is measured against:
 *
 *   lat, rate  Send/Receive echo of the same payload: the client Sends a
 *              message, the server Sends the same bytes back; depth
 *              messages in flight per connection.
 *   read       RDMA Write of the payload size from the client into memory
 *              the server granted (the same data movement as a Write
 *              chunk, whose data an NFS server RDMA Writes), depth in flight.
 *   write      RDMA Read of that size from the server's memory (a Read
 *              chunk's movement), depth in flight.
 *
 * Both ends wait the way the library does: poll the instance until it is
 * empty, trywait, then sleep on its fd; no busy polling.
 *
 * Wire format of the echo messages (host byte order: both ends are this
 * program on the same architecture): struct raw_hdr, then the payload.
 * After ESTABLISHED the server grants the client read and write access to
 * one region of BENCH_SERVER_BUFS buffers of BENCH_MAX_SIZE bytes and tells
 * it where in a HELLO message; the client's RMA slot i reads or writes
 * buffer i % BENCH_SERVER_BUFS.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "bench.h"
#include "provider/provider.h"

enum raw_op {
	RAW_ECHO = 1,
	RAW_HELLO = 2, /* server -> client: the granted region */
	RAW_CPU = 3,   /* client -> server and back: the server's CPU time */
	RAW_STOP = 4,
	RAW_WORK = 5,  /* client -> server and back: the server's system calls */
};

struct raw_hdr {
	uint32_t op;
	uint32_t len; /* payload bytes after the header */
	uint32_t handle, rlen;
	uint64_t value; /* HELLO: offset; CPU: microseconds; WORK: system
			 * calls, or UINT64_MAX when not counted */
};

/* Room for a header and the largest small payload, rounded to a page. */
#define RAW_SLOT 8192u
#define RAW_MSG_MAX ((uint32_t)sizeof(struct raw_hdr) + BENCH_MAX_SMALL)
#define RAW_SRV_RECVS (BENCH_MAX_DEPTH + 16u)
#define RAW_SRV_SENDS (BENCH_MAX_DEPTH + 16u)
#define RAW_WAIT_MS 100
#define RAW_REGION_BYTES ((size_t)BENCH_SERVER_BUFS * BENCH_MAX_SIZE)

enum ctx_kind { CTX_RECV = 1, CTX_SEND, CTX_RMA };

/* What a posted operation's ctx points at. */
struct op_ctx {
	void *owner; /* struct sconn or struct cconn */
	uint8_t kind;
	uint32_t idx;
	double t0;
};

static int addr_of(const char *host, int port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints, *ai = NULL;
	char svc[16];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICSERV;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(svc, sizeof(svc), "%d", port);
	rc = getaddrinfo(host, svc, &hints, &ai);
	if (rc || !ai)
		return -EHOSTUNREACH;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

static int sock_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

/* Polls, then sleeps on @epfd at most @ms when nothing came.  Returns the
 * events in @ev (0 after a quiet wait) or a negative error. */
static int wait_events(struct rpcrdma_provider *p, int epfd, struct rpcrdma_prov_event *ev,
		       unsigned int max, int ms, bool *other_fd)
{
	struct epoll_event ee[4];
	int n = rpcrdma__provider_poll(p, ev, max);

	if (n)
		return n;
	if (rpcrdma__provider_trywait(p))
		return rpcrdma__provider_poll(p, ev, max);
	n = epoll_wait(epfd, ee, 4, ms);
	if (other_fd) {
		for (int i = 0; i < n; i++)
			if (ee[i].data.u32 == 1)
				*other_fd = true;
	}
	return rpcrdma__provider_poll(p, ev, max);
}

/*
 * Server.
 */
struct sconn {
	struct rpcrdma_prov_conn *c;
	struct rpcrdma_prov_grant *grant;
	struct rpcrdma_prov_mr *mr;
	uint8_t *mem; /* receive slots, then send slots */
	struct op_ctx recv_ctx[RAW_SRV_RECVS], send_ctx[RAW_SRV_SENDS];
	uint32_t free_sends[RAW_SRV_SENDS], nfree;
	struct sconn *prev, *next; /* live connections, freed at stop */
};

static struct {
	pthread_t tid;
	struct rpcrdma_provider *p;
	struct rpcrdma_prov_listener *lst;
	struct rpcrdma_prov_mr *region_mr;
	uint8_t *region;
	int epfd, stop_fd;
	int sys_fd; /* the serving thread's syscall counter, or -1 */
	bool running;
	struct sconn *live;
} rsrv = {.epfd = -1, .stop_fd = -1, .sys_fd = -1};

static uint8_t *slot_addr(struct sconn *sc, bool send, uint32_t i)
{
	return sc->mem + ((size_t)(send ? RAW_SRV_RECVS : 0) + i) * RAW_SLOT;
}

static int srv_post_recv(struct sconn *sc, uint32_t i)
{
	struct rpcrdma_prov_sge sge = {slot_addr(sc, false, i), RAW_SLOT, sc->mr};

	return rpcrdma__provider_post_recv(sc->c, &sge, 1, &sc->recv_ctx[i]);
}

static int srv_send(struct sconn *sc, const struct raw_hdr *h, const void *payload)
{
	struct rpcrdma_prov_sge sge;
	uint32_t i;
	uint8_t *buf;

	if (!sc->nfree)
		return -EAGAIN;
	i = sc->free_sends[--sc->nfree];
	buf = slot_addr(sc, true, i);
	memcpy(buf, h, sizeof(*h));
	if (h->len)
		memcpy(buf + sizeof(*h), payload, h->len);
	sge.addr = buf;
	sge.length = (uint32_t)sizeof(*h) + h->len;
	sge.mr = sc->mr;
	return rpcrdma__provider_post_send(sc->c, &sge, 1, 0, 0, &sc->send_ctx[i]);
}

static void sconn_free(struct sconn *sc)
{
	if (sc->prev)
		sc->prev->next = sc->next;
	else if (rsrv.live == sc)
		rsrv.live = sc->next;
	if (sc->next)
		sc->next->prev = sc->prev;
	if (sc->grant)
		rpcrdma__provider_revoke(sc->grant, NULL);
	if (sc->c)
		rpcrdma__provider_conn_destroy(sc->c);
	if (sc->mr)
		rpcrdma__provider_dereg_mr(sc->mr);
	free(sc->mem);
	free(sc);
}

static void srv_connect_request(struct rpcrdma_prov_conn *c)
{
	struct sconn *sc = calloc(1, sizeof(*sc));
	size_t bytes = (size_t)(RAW_SRV_RECVS + RAW_SRV_SENDS) * RAW_SLOT;

	if (!sc)
		goto out_reject;
	sc->c = c;
	c->ctx = sc;
	sc->next = rsrv.live;
	if (sc->next)
		sc->next->prev = sc;
	rsrv.live = sc;
	sc->mem = bench_alloc(bytes);
	if (!sc->mem || rpcrdma__provider_reg_mr(rsrv.p, sc->mem, bytes, &sc->mr))
		goto out_free;
	for (uint32_t i = 0; i < RAW_SRV_RECVS; i++)
		sc->recv_ctx[i] = (struct op_ctx){sc, CTX_RECV, i, 0};
	for (uint32_t i = 0; i < RAW_SRV_SENDS; i++) {
		sc->send_ctx[i] = (struct op_ctx){sc, CTX_SEND, i, 0};
		sc->free_sends[sc->nfree++] = RAW_SRV_SENDS - 1 - i;
	}
	for (uint32_t i = 0; i < RAW_SRV_RECVS && i < c->attr.recv_depth; i++)
		if (srv_post_recv(sc, i))
			goto out_free;
	if (rpcrdma__provider_accept(c, NULL, 0)) {
		/* accept failed: the request is rejected already. */
		sc->c = NULL;
		rpcrdma__provider_conn_destroy(c);
		sconn_free(sc);
	}
	return;

out_free:
	sc->c = NULL;
	sconn_free(sc);
out_reject:
	rpcrdma__provider_reject(c, NULL, 0);
	rpcrdma__provider_conn_destroy(c);
}

static void srv_established(struct sconn *sc)
{
	struct rpcrdma_prov_rseg seg;
	struct raw_hdr h;

	memset(&h, 0, sizeof(h));
	if (rpcrdma__provider_grant(sc->c, rsrv.region_mr, rsrv.region, RAW_REGION_BYTES,
				    RPCRDMA_PACCESS_REMOTE_READ | RPCRDMA_PACCESS_REMOTE_WRITE,
				    &sc->grant, &seg)) {
		rpcrdma__provider_disconnect(sc->c);
		return;
	}
	h.op = RAW_HELLO;
	h.handle = seg.handle;
	h.rlen = seg.length;
	h.value = seg.offset;
	if (srv_send(sc, &h, NULL))
		rpcrdma__provider_disconnect(sc->c);
}

static void srv_recv(struct sconn *sc, struct op_ctx *oc, uint32_t byte_len)
{
	const uint8_t *buf = slot_addr(sc, false, oc->idx);
	struct raw_hdr h;

	if (byte_len < sizeof(h))
		goto repost;
	memcpy(&h, buf, sizeof(h));
	switch (h.op) {
	case RAW_ECHO:
		if (h.len > byte_len - sizeof(h))
			break;
		if (srv_send(sc, &h, buf + sizeof(h)))
			rpcrdma__provider_disconnect(sc->c);
		break;
	case RAW_CPU:
		h.len = 0;
		h.value = (uint64_t)(bench_server_cpu() * 1e6);
		if (srv_send(sc, &h, NULL))
			rpcrdma__provider_disconnect(sc->c);
		break;
	case RAW_WORK:
		h.len = 0;
		h.value = rsrv.sys_fd >= 0 ? bench_syscount_read(rsrv.sys_fd) : UINT64_MAX;
		if (srv_send(sc, &h, NULL))
			rpcrdma__provider_disconnect(sc->c);
		break;
	case RAW_STOP:
		atomic_store(&bench_stop_requested, true);
		break;
	default:
		break;
	}
repost:
	if (srv_post_recv(sc, oc->idx))
		rpcrdma__provider_disconnect(sc->c);
}

static void srv_event(const struct rpcrdma_prov_event *ev)
{
	struct op_ctx *oc;
	struct sconn *sc;

	switch (ev->type) {
	case RPCRDMA_PEV_CONNECT_REQUEST:
		srv_connect_request(ev->conn);
		return;
	case RPCRDMA_PEV_ESTABLISHED:
		if (ev->conn && ev->conn->ctx)
			srv_established(ev->conn->ctx);
		return;
	case RPCRDMA_PEV_DISCONNECTED:
	case RPCRDMA_PEV_CONNECT_ERROR:
	case RPCRDMA_PEV_REJECTED:
		/* The connection's last event: nothing of it is posted any
		 * more, so its memory can go. */
		if (ev->conn && ev->conn->ctx)
			sconn_free(ev->conn->ctx);
		return;
	case RPCRDMA_PEV_COMPLETION:
		oc = ev->ctx;
		if (!oc || !ev->conn || ev->op == RPCRDMA_POP_REVOKE)
			return;
		sc = oc->owner;
		if (oc->kind == CTX_SEND) {
			sc->free_sends[sc->nfree++] = oc->idx;
			return;
		}
		if (oc->kind == CTX_RECV && ev->status == RPCRDMA_PST_SUCCESS)
			srv_recv(sc, oc, ev->byte_len);
		return;
	default:
		return;
	}
}

static void *raw_server_thread(void *arg)
{
	struct rpcrdma_prov_event ev[32];
	bool stop = false;

	(void)arg;
	/* Counted like ours's serving thread: the counter's cost per system
	 * call then falls on both stacks' servers alike. */
	rsrv.sys_fd = bench_syscount_open();
	while (!stop) {
		int n = wait_events(rsrv.p, rsrv.epfd, ev, 32, RAW_WAIT_MS, &stop);

		if (n < 0) {
			fprintf(stderr, "rpcrdma-bench: raw server: poll: %s\n", strerror(-n));
			break;
		}
		for (int i = 0; i < n; i++)
			srv_event(&ev[i]);
	}
	if (rsrv.sys_fd >= 0)
		close(rsrv.sys_fd);
	rsrv.sys_fd = -1;
	return NULL;
}

int bench_raw_server_start(const struct bench_config *cfg, int port, int *bound_port)
{
	struct rpcrdma_prov_conn_attr attr = {
	    .send_depth = 2 * RAW_SRV_SENDS, .recv_depth = RAW_SRV_RECVS, .read_depth = 16};
	struct sockaddr_storage ss, bound;
	struct rpcrdma_prov_open_attr oa;
	struct epoll_event ee;
	socklen_t len, blen;
	int rc;

	rc = addr_of(cfg->host, port, &ss, &len);
	if (rc)
		return rc;
	oa.addr = (struct sockaddr *)&ss;
	oa.addrlen = len;
	rc = rpcrdma__provider_open(cfg->provider, &oa, &rsrv.p);
	if (rc)
		return rc;
	rsrv.region = bench_alloc(RAW_REGION_BYTES);
	if (!rsrv.region)
		return -ENOMEM;
	bench_fill(rsrv.region, RAW_REGION_BYTES);
	rc = rpcrdma__provider_reg_mr(rsrv.p, rsrv.region, RAW_REGION_BYTES, &rsrv.region_mr);
	if (rc)
		return rc;
	rc = rpcrdma__provider_listen(rsrv.p, (struct sockaddr *)&ss, len, 64, &attr, NULL,
				      &rsrv.lst);
	if (rc)
		return rc;
	blen = sizeof(bound);
	rc = rpcrdma__provider_listener_addr(rsrv.lst, &bound, &blen);
	if (rc)
		return rc;
	*bound_port = sock_port(&bound);
	rsrv.epfd = epoll_create1(EPOLL_CLOEXEC);
	rsrv.stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rsrv.epfd < 0 || rsrv.stop_fd < 0)
		return -errno;
	memset(&ee, 0, sizeof(ee));
	ee.events = EPOLLIN;
	ee.data.u32 = 0;
	if (epoll_ctl(rsrv.epfd, EPOLL_CTL_ADD, rpcrdma__provider_fd(rsrv.p), &ee))
		return -errno;
	ee.data.u32 = 1;
	if (epoll_ctl(rsrv.epfd, EPOLL_CTL_ADD, rsrv.stop_fd, &ee))
		return -errno;
	if (pthread_create(&rsrv.tid, NULL, raw_server_thread, NULL))
		return -EAGAIN;
	rsrv.running = true;
	return 0;
}

void bench_raw_server_stop(void)
{
	uint64_t one = 1;

	if (rsrv.running) {
		if (write(rsrv.stop_fd, &one, sizeof(one)) != sizeof(one))
			perror("rpcrdma-bench: raw server stop");
		pthread_join(rsrv.tid, NULL);
		rsrv.running = false;
	}
	while (rsrv.live)
		sconn_free(rsrv.live);
	/* close frees connections, grants and registrations still made from
	 * the instance (no events). */
	if (rsrv.p)
		rpcrdma__provider_close(rsrv.p);
	rsrv.p = NULL;
	free(rsrv.region);
	rsrv.region = NULL;
	if (rsrv.epfd >= 0)
		close(rsrv.epfd);
	if (rsrv.stop_fd >= 0)
		close(rsrv.stop_fd);
	rsrv.epfd = rsrv.stop_fd = -1;
}

/*
 * Client.
 */
struct cconn {
	struct rthread *rt;
	struct rpcrdma_prov_conn *c;
	bool up, hello, answered, dead;
	uint64_t answer; /* the value of the latest RAW_CPU or RAW_WORK answer */
	struct rpcrdma_prov_rseg remote; /* the server's region */
	struct rpcrdma_prov_mr *mr;
	uint8_t *mem; /* receive slots, send slots, then RMA buffers */
	uint32_t nrecv, nsend, nrma;
	struct op_ctx *ctx; /* nrecv + nsend + nrma */
	uint32_t *free_sends, nfree;
	uint32_t echo_out;  /* echo messages sent whose answer is pending */
	uint32_t rma_out;   /* RDMA operations in flight */
	uint32_t want_sends; /* echo messages waiting for a free send slot */
	double last_sent;    /* when the latest Send was posted */
	size_t rma_size;    /* bytes of each RMA buffer */
};

struct rthread {
	struct bench_thread *t;
	struct rpcrdma_provider *p;
	int epfd;
	struct cconn *conns;
	/* The current run. */
	double deadline;
	uint64_t budget, issued, done;
	bool record;
	int error;
};

static uint8_t *cslot(struct cconn *cc, uint32_t i)
{
	return cc->mem + (size_t)i * RAW_SLOT;
}

static uint8_t *rma_buf(struct cconn *cc, uint32_t i)
{
	return cc->mem + (size_t)(cc->nrecv + cc->nsend) * RAW_SLOT + (size_t)i * cc->rma_size;
}

static int cli_post_recv(struct cconn *cc, uint32_t i)
{
	struct rpcrdma_prov_sge sge = {cslot(cc, i), RAW_SLOT, cc->mr};

	return rpcrdma__provider_post_recv(cc->c, &sge, 1, &cc->ctx[i]);
}

static int cli_send(struct cconn *cc, uint32_t op, uint32_t len)
{
	struct rpcrdma_prov_sge sge;
	struct raw_hdr h;
	uint32_t i;
	uint8_t *buf;
	int rc;

	if (!cc->nfree)
		return -EAGAIN;
	i = cc->free_sends[--cc->nfree];
	buf = cslot(cc, cc->nrecv + i);
	memset(&h, 0, sizeof(h));
	h.op = op;
	h.len = len;
	memcpy(buf, &h, sizeof(h));
	sge.addr = buf;
	sge.length = (uint32_t)sizeof(h) + len;
	sge.mr = cc->mr;
	cc->last_sent = bench_now();
	rc = rpcrdma__provider_post_send(cc->c, &sge, 1, 0, 0, &cc->ctx[cc->nrecv + i]);
	if (rc)
		cc->free_sends[cc->nfree++] = i;
	return rc;
}

static bool raw_keep_going(const struct rthread *rt)
{
	if (rt->error)
		return false;
	if (rt->budget && rt->issued >= rt->budget)
		return false;
	return bench_now() < rt->deadline;
}

static bool is_rma(const struct bench_params *p)
{
	return p->wl == WL_READ || p->wl == WL_WRITE;
}

/* read: the client RDMA Writes (the Write chunk's data movement);
 * write: it RDMA Reads (the Read chunk's). */
static int post_rma(struct cconn *cc, uint32_t i)
{
	const struct bench_params *p = cc->rt->t->p;
	struct op_ctx *oc = &cc->ctx[cc->nrecv + cc->nsend + i];
	struct rpcrdma_prov_sge sge = {rma_buf(cc, i), p->size, cc->mr};
	uint64_t buf_off = (uint64_t)(i % BENCH_SERVER_BUFS) * BENCH_MAX_SIZE;
	struct rpcrdma_prov_rseg seg;
	int rc;

	if (buf_off + p->size > cc->remote.length)
		buf_off = 0; /* a server with one buffer */
	seg = (struct rpcrdma_prov_rseg){cc->remote.handle, p->size, cc->remote.offset + buf_off};
	oc->t0 = bench_now();
	if (p->wl == WL_READ)
		rc = rpcrdma__provider_post_write(cc->c, &sge, 1, &seg, 1, oc);
	else
		rc = rpcrdma__provider_post_read(cc->c, &sge, 1, &seg, 1, oc);
	if (rc)
		return rc;
	cc->rma_out++;
	cc->rt->issued++;
	return 0;
}

static int start_echo(struct cconn *cc)
{
	int rc = cli_send(cc, RAW_ECHO, cc->rt->t->p->size);

	if (rc == -EAGAIN) {
		cc->want_sends++;
		rc = 0;
	} else if (rc) {
		return rc;
	}
	cc->echo_out++;
	cc->rt->issued++;
	return 0;
}

static void cli_event(struct rthread *rt, const struct rpcrdma_prov_event *ev)
{
	struct op_ctx *oc = ev->ctx;
	struct cconn *cc;
	int rc = 0;

	switch (ev->type) {
	case RPCRDMA_PEV_ESTABLISHED:
		if (ev->conn && ev->conn->ctx)
			((struct cconn *)ev->conn->ctx)->up = true;
		return;
	case RPCRDMA_PEV_DISCONNECTED:
	case RPCRDMA_PEV_CONNECT_ERROR:
	case RPCRDMA_PEV_REJECTED:
		if (ev->conn && ev->conn->ctx)
			((struct cconn *)ev->conn->ctx)->dead = true;
		if (!rt->error)
			rt->error = ev->error ? ev->error : -ECONNRESET;
		return;
	case RPCRDMA_PEV_COMPLETION:
		break;
	default:
		return;
	}
	if (!oc || !ev->conn)
		return;
	cc = oc->owner;
	if (ev->status != RPCRDMA_PST_SUCCESS) {
		if (!rt->error) {
			fprintf(stderr, "rpcrdma-bench: raw: %s failed: %s\n",
				rpcrdma__provider_op_str(ev->op),
				rpcrdma__provider_status_str(ev->status));
			rt->error = -EIO;
		}
		return;
	}
	if (oc->kind == CTX_SEND) {
		cc->free_sends[cc->nfree++] = oc->idx;
		/* An echo already counted as started waits for this slot. */
		if (cc->want_sends) {
			cc->want_sends--;
			rc = cli_send(cc, RAW_ECHO, rt->t->p->size);
		}
	} else if (oc->kind == CTX_RMA) {
		cc->rma_out--;
		rt->done++;
		if (rt->record && rt->t->lat_us && rt->t->lat_n < rt->t->lat_cap)
			rt->t->lat_us[rt->t->lat_n++] = (bench_now() - oc->t0) * 1e6;
		if (raw_keep_going(rt))
			rc = post_rma(cc, oc->idx);
	} else {
		struct raw_hdr h;
		double sent_at = cc->last_sent;

		memcpy(&h, cslot(cc, oc->idx), sizeof(h));
		rc = cli_post_recv(cc, oc->idx);
		if (h.op == RAW_HELLO) {
			cc->remote.handle = h.handle;
			cc->remote.length = h.rlen;
			cc->remote.offset = h.value;
			cc->hello = true;
		} else if (h.op == RAW_CPU || h.op == RAW_WORK) {
			cc->answer = h.value;
			cc->answered = true;
		} else if (h.op == RAW_ECHO && cc->echo_out) {
			cc->echo_out--;
			rt->done++;
			/* Depth 1 (the latency run): the latest Send is the
			 * one this answers. */
			if (rt->record && rt->t->lat_us && rt->t->lat_n < rt->t->lat_cap)
				rt->t->lat_us[rt->t->lat_n++] = (bench_now() - sent_at) * 1e6;
			if (!rc && raw_keep_going(rt))
				rc = start_echo(cc);
		}
	}
	if (rc && !rt->error)
		rt->error = rc;
}

static int pump(struct rthread *rt)
{
	struct rpcrdma_prov_event ev[32];
	int n = wait_events(rt->p, rt->epfd, ev, 32, RAW_WAIT_MS, NULL);

	for (int i = 0; i < n; i++)
		cli_event(rt, &ev[i]);
	return n < 0 ? n : 0;
}

static int cconn_init(struct rthread *rt, struct cconn *cc, const struct sockaddr *dst,
		      socklen_t dlen)
{
	const struct bench_params *p = rt->t->p;
	struct rpcrdma_prov_conn_attr attr;
	size_t bytes;
	uint32_t n;
	int rc;

	cc->rt = rt;
	cc->nrecv = p->depth + 8;
	/* Twice the depth: an echo's answer can arrive before its Send's
	 * own completion. */
	cc->nsend = 2 * p->depth + 4;
	cc->nrma = is_rma(p) ? p->depth : 0;
	cc->rma_size = is_rma(p) ? ((size_t)p->size + 4095) & ~4095ul : 0;
	n = cc->nrecv + cc->nsend + cc->nrma;
	cc->ctx = calloc(n, sizeof(*cc->ctx));
	cc->free_sends = calloc(cc->nsend, sizeof(*cc->free_sends));
	if (!cc->ctx || !cc->free_sends)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t kind = i < cc->nrecv ? CTX_RECV
			       : i < cc->nrecv + cc->nsend ? CTX_SEND
							    : CTX_RMA;
		uint32_t idx = kind == CTX_RECV ? i
			       : kind == CTX_SEND ? i - cc->nrecv
						   : i - cc->nrecv - cc->nsend;

		cc->ctx[i] = (struct op_ctx){cc, kind, kind == CTX_RECV ? i : idx, 0};
	}
	for (uint32_t i = 0; i < cc->nsend; i++)
		cc->free_sends[cc->nfree++] = cc->nsend - 1 - i;
	bytes = (size_t)(cc->nrecv + cc->nsend) * RAW_SLOT + cc->nrma * cc->rma_size;
	cc->mem = bench_alloc(bytes);
	if (!cc->mem)
		return -ENOMEM;
	bench_fill(cc->mem, bytes);
	rc = rpcrdma__provider_reg_mr(rt->p, cc->mem, bytes, &cc->mr);
	if (rc)
		return rc;
	attr.send_depth = cc->nsend + cc->nrma + 8;
	attr.recv_depth = cc->nrecv;
	attr.read_depth = p->wl == WL_WRITE ? p->depth : 16;
	rc = rpcrdma__provider_conn_create(rt->p, &attr, cc, &cc->c);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < cc->nrecv && i < cc->c->attr.recv_depth; i++) {
		rc = cli_post_recv(cc, i);
		if (rc)
			return rc;
	}
	return rpcrdma__provider_connect(cc->c, dst, dlen, NULL, 0);
}

static int raw_setup(struct bench_thread *t)
{
	struct rthread *rt = calloc(1, sizeof(*rt));
	struct rpcrdma_prov_open_attr oa;
	struct sockaddr_storage dst, local;
	struct epoll_event ee;
	socklen_t dlen, llen;
	double give_up;
	int rc;

	if (!rt)
		return -ENOMEM;
	t->stack = rt;
	rt->t = t;
	rt->epfd = -1;
	rc = addr_of(t->cfg->host, bench_ports.port[STACK_RAW], &dst, &dlen);
	if (rc)
		return rc;
	/* The client's device: --local, else the server's own (loopback). */
	if (t->cfg->local) {
		rc = addr_of(t->cfg->local, 0, &local, &llen);
		if (rc)
			return rc;
	} else {
		local = dst;
		llen = dlen;
	}
	oa.addr = (struct sockaddr *)&local;
	oa.addrlen = llen;
	rc = rpcrdma__provider_open(t->cfg->provider, &oa, &rt->p);
	if (rc)
		return rc;
	rt->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (rt->epfd < 0)
		return -errno;
	memset(&ee, 0, sizeof(ee));
	ee.events = EPOLLIN;
	if (epoll_ctl(rt->epfd, EPOLL_CTL_ADD, rpcrdma__provider_fd(rt->p), &ee))
		return -errno;
	rt->conns = calloc(t->nconns, sizeof(*rt->conns));
	if (!rt->conns)
		return -ENOMEM;
	for (unsigned int i = 0; i < t->nconns; i++) {
		rc = cconn_init(rt, &rt->conns[i], (struct sockaddr *)&dst, dlen);
		if (rc)
			return rc;
	}
	give_up = bench_now() + 10;
	for (unsigned int i = 0; i < t->nconns; i++) {
		struct cconn *cc = &rt->conns[i];

		while (!(cc->up && cc->hello) && !rt->error && bench_now() < give_up) {
			rc = pump(rt);
			if (rc)
				return rc;
		}
		if (rt->error)
			return rt->error;
		if (!cc->hello)
			return -ETIMEDOUT;
	}
	return 0;
}

static int raw_run(struct bench_thread *t, double deadline, uint64_t max_calls, bool record)
{
	struct rthread *rt = t->stack;
	const struct bench_params *p = t->p;
	unsigned int depth = p->wl == WL_LAT ? 1 : p->depth;
	double give_up = deadline + 30;
	int rc = 0;

	rt->deadline = deadline;
	rt->budget = max_calls;
	rt->issued = rt->done = 0;
	rt->record = record;
	rt->error = 0;
	for (unsigned int i = 0; i < t->nconns && !rc; i++) {
		struct cconn *cc = &rt->conns[i];

		for (unsigned int d = 0; d < depth && raw_keep_going(rt) && !rc; d++)
			rc = is_rma(p) ? post_rma(cc, d) : start_echo(cc);
	}
	if (rc)
		rt->error = rc;
	for (;;) {
		bool busy = false;

		for (unsigned int i = 0; i < t->nconns; i++)
			busy |= rt->conns[i].echo_out || rt->conns[i].rma_out;
		if (!busy || rt->error)
			break;
		if (record && p->wl == WL_LAT && t->lat_n >= t->lat_cap)
			rt->budget = rt->issued; /* samples full: stop here */
		rc = pump(rt);
		if (rc)
			break;
		if (bench_now() > give_up) {
			rc = -ETIMEDOUT;
			break;
		}
	}
	t->calls += rt->done;
	return rc ? rc : rt->error;
}

/* One question to the server (RAW_CPU or RAW_WORK) and its answer. */
static int ask_server(struct bench_thread *t, enum raw_op op, uint64_t *value)
{
	struct rthread *rt = t->stack;
	struct cconn *cc = &rt->conns[0];
	double give_up = bench_now() + 10;
	int rc;

	cc->answered = false;
	rc = cli_send(cc, op, 0);
	while (!rc && !cc->answered && !rt->error && bench_now() < give_up)
		rc = pump(rt);
	if (!rc && !cc->answered)
		rc = rt->error ? rt->error : -ETIMEDOUT;
	*value = cc->answer;
	return rc;
}

static int raw_server_cpu(struct bench_thread *t, double *cpu_s)
{
	uint64_t us = 0;
	int rc = ask_server(t, RAW_CPU, &us);

	*cpu_s = (double)us / 1e6;
	return rc;
}

static int raw_server_work(struct bench_thread *t, struct bench_work *w)
{
	uint64_t syscalls = UINT64_MAX;
	int rc = ask_server(t, RAW_WORK, &syscalls);

	memset(w, 0, sizeof(*w));
	if (!rc && syscalls != UINT64_MAX) {
		w->v[BW_syscalls] = syscalls;
		w->sys_valid = true;
	}
	return rc;
}

static void raw_teardown(struct bench_thread *t)
{
	struct rthread *rt = t->stack;

	if (!rt)
		return;
	/* close frees connections and registrations without events. */
	if (rt->p)
		rpcrdma__provider_close(rt->p);
	for (unsigned int i = 0; rt->conns && i < t->nconns; i++) {
		free(rt->conns[i].mem);
		free(rt->conns[i].ctx);
		free(rt->conns[i].free_sends);
	}
	free(rt->conns);
	if (rt->epfd >= 0)
		close(rt->epfd);
	free(rt);
	t->stack = NULL;
}

const struct bench_stack_ops bench_raw_ops = {
	.name = "raw",
	.setup = raw_setup,
	.run = raw_run,
	.server_cpu = raw_server_cpu,
	.teardown = raw_teardown,
	.threads_for = NULL,
	.server_work = raw_server_work,
};
