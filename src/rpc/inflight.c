/*
 * inflight.c - what a client or server has in flight (rpcrdma/debug.h):
 * the client's records of rpcrdma_client_inflight(), read from its lists
 * (every connection's, opts.nconnect), and rpcrdma_client_inflight_write()
 * and rpcrdma_server_inflight_write(), the in-flight tables as text built
 * on the stack with a hand-made number formatter and written with
 * write(2), so that they stay async-signal-safe.
 */
#include <errno.h>
#include <unistd.h>

#include "common/trace.h"
#include "rpc/clnt_internal.h"
#include "rpcrdma/debug.h"

/* Debugging (rpcrdma/debug.h): reads the lists without changing anything,
 * and calls nothing but clock_gettime, so a signal handler may use it. */
static unsigned int inflight_list(const struct rpcrdma__list *l, enum rpcrdma_call_state st,
				  uint64_t now, struct rpcrdma_call_info *out, unsigned int max,
				  unsigned int n)
{
	for (const struct rpcrdma__list *it = l->next; it != l; it = it->next, n++) {
		const struct rpcrdma__client_call *cc =
		    rpcrdma__container_of(it, const struct rpcrdma__client_call, node);

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
	uint64_t now = rpcrdma__coarse_now_ns();
	unsigned int n;

	if (!c || (!out && max))
		return -EINVAL;
	/* Every connection's calls are on the one sent list (conn_id says
	 * which); those lost with a TCP connection wait on it, in front of
	 * the shared queue. */
	n = inflight_list(&c->sent, RPCRDMA_CALL_SENT, now, out, max, 0);
	for (unsigned int i = 0; i < c->nconn && i < RPCRDMA_NCONNECT_MAX; i++)
		n = inflight_list(&c->conns[i].pinned, RPCRDMA_CALL_QUEUED, now, out, max, n);
	n = inflight_list(&c->queued, RPCRDMA_CALL_QUEUED, now, out, max, n);
	return n > INT32_MAX ? INT32_MAX : (int)n;
}


#define SHOWN 64

struct line {
	char buf[160];
	size_t len;
};

static void put_str(struct line *l, const char *s)
{
	while (*s && l->len < sizeof(l->buf))
		l->buf[l->len++] = *s++;
}

/* @v in @base, right-aligned in @width columns, then a space. */
static void put_num(struct line *l, uint64_t v, unsigned int base, unsigned int width)
{
	char tmp[24];
	unsigned int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v && n < sizeof(tmp));
	if (base == 16)
		for (; n < 8; n++)
			tmp[n] = '0';
	for (unsigned int pad = n; pad < width && l->len < sizeof(l->buf); pad++)
		l->buf[l->len++] = ' ';
	while (n && l->len < sizeof(l->buf))
		l->buf[l->len++] = tmp[--n];
	put_str(l, " ");
}

static int put_line(int fd, struct line *l)
{
	const char *p = l->buf;
	size_t left;

	if (l->len < sizeof(l->buf))
		l->buf[l->len++] = '\n';
	left = l->len;
	while (left) {
		ssize_t n = write(fd, p, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		left -= (size_t)n;
	}
	l->len = 0;
	return 0;
}

/* The line for the calls beyond the SHOWN listed, if any. */
static int put_more(int fd, struct line *l, int total)
{
	if (total <= SHOWN)
		return 0;
	put_str(l, "... and ");
	put_num(l, (uint64_t)(total - SHOWN), 10, 0);
	put_str(l, "more");
	return put_line(fd, l);
}

int rpcrdma_client_inflight_write(struct rpcrdma_client *clnt, int fd)
{
	struct rpcrdma_call_info info[SHOWN];
	struct line l = {.len = 0};
	int saved = errno; /* a signal handler must leave errno as it was */
	int total, rc;

	total = rpcrdma_client_inflight(clnt, info, SHOWN);
	if (total < 0 || fd < 0)
		return -EINVAL;
	put_str(&l, "rpcrdma: ");
	put_num(&l, (uint64_t)total, 10, 0);
	put_str(&l, "calls in flight\n");
	put_str(&l, "       xid   proc     age_ms  state  losses wchunks   conn");
	rc = put_line(fd, &l);
	for (int i = 0; !rc && i < total && i < SHOWN; i++) {
		const struct rpcrdma_call_info *c = &info[i];

		put_str(&l, "0x");
		put_num(&l, c->xid, 16, 8);
		put_num(&l, c->proc, 10, 6);
		put_num(&l, c->age_ms, 10, 10);
		put_str(&l, c->state == RPCRDMA_CALL_SENT ? "  sent " : "queued ");
		put_num(&l, c->losses, 10, 6);
		put_num(&l, c->write_chunks, 10, 7);
		put_num(&l, c->conn_id, 10, 6);
		rc = put_line(fd, &l);
	}
	if (!rc)
		rc = put_more(fd, &l, total);
	errno = saved;
	return rc ? rc : total;
}

static const char *svc_state_name(enum rpcrdma_svc_call_state st)
{
	switch (st) {
	case RPCRDMA_SVC_CALL_DEFERRED:
		return "deferred ";
	case RPCRDMA_SVC_CALL_PARKED:
		return "  parked ";
	case RPCRDMA_SVC_CALL_WATCHING:
		return "watching ";
	case RPCRDMA_SVC_CALL_RUNNING:
	default:
		return " running ";
	}
}

int rpcrdma_server_inflight_write(struct rpcrdma_server *srv, int fd)
{
	struct rpcrdma_svc_call_info info[SHOWN];
	struct line l = {.len = 0};
	int saved = errno;
	unsigned int busy = 0;
	int total, rc;

	total = rpcrdma_server_inflight(srv, info, SHOWN, &busy);
	if (total < 0 || fd < 0)
		return -EINVAL;
	put_str(&l, "rpcrdma server: ");
	put_num(&l, (uint64_t)total, 10, 0);
	put_str(&l, "calls in flight\n");
	put_str(&l, "       xid       prog  vers   proc     age_ms    state worker   conn "
		    "rsegs wchunks rchunk");
	rc = put_line(fd, &l);
	for (int i = 0; !rc && i < total && i < SHOWN; i++) {
		const struct rpcrdma_svc_call_info *c = &info[i];

		put_str(&l, "0x");
		put_num(&l, c->xid, 16, 8);
		put_num(&l, c->prog, 10, 10);
		put_num(&l, c->vers, 10, 5);
		put_num(&l, c->proc, 10, 6);
		put_num(&l, c->age_ms, 10, 10);
		put_str(&l, svc_state_name(c->state));
		put_num(&l, c->worker, 10, 6);
		put_num(&l, c->conn_id, 10, 6);
		put_num(&l, c->read_segs, 10, 5);
		put_num(&l, c->write_chunks, 10, 7);
		put_num(&l, c->reply_chunk, 10, 6);
		rc = put_line(fd, &l);
	}
	if (!rc)
		rc = put_more(fd, &l, total);
	if (!rc && busy) {
		put_str(&l, "(");
		put_num(&l, busy, 10, 0);
		put_str(&l, "cores busy: their calls are not listed)");
		rc = put_line(fd, &l);
	}
	errno = saved;
	return rc ? rc : total;
}
