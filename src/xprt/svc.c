/*
 * The responder side of RPC-over-RDMA Versions One and Two (rpcrdma__rdma_svc_ops):
 * a listener, the connections it accepts, the calls received on them, the
 * RDMA Reads that pull their Read chunks, and the replies with their RDMA
 * Writes.
 *
 * Normal operation.  Each receive completion is a call (struct xsreq).  Its
 * receive is replaced at once, so the requester's credits stay backed while
 * the call is served, and the call keeps its buffer until it is answered.
 * The transport header is validated (rpcrdma_hdr_decode); a refused header
 * gets the RDMA_ERROR the decoder names, or nothing.  The Read list is laid
 * out by rpcrdma__plan_rebuild(); Read chunks are pulled with RDMA Reads,
 * at most the peer's IRD at a time per connection, into one registered
 * buffer; then the core gets the call as one XDR stream over the receive
 * buffer, the read buffer and the round-up.  The core answers through
 * reply_begin/reply_send: DDP-eligible results land in the call's Write
 * chunks (ddp.c), rpcrdma__plan_reply() picks inline, Long (through the
 * Reply chunk) or ERR_CHUNK, and the Writes are posted before the Send.
 *
 * Versions.  The decoder takes min_vers..max_vers (default 1..2) and
 * answers others with ERR_VERS; each call is answered in its own version,
 * and the first accepted message fixes the connection's default thresholds
 * (draft-cel-nfsv4-rpcrdma-version-two-00 section 5).  A Version Two
 * RDMA_OPTIONAL goes through the registry of optional features: unknown
 * ones get ERR_INVAL_OPTION, the transport properties are answered.
 *
 * Credits (RFC 8166 4.3.1).  The grant in each reply is
 * rpcrdma__credits_grant(configured, requested): at least 1, never more
 * than we keep receives posted.  Receives for a grant are posted before the
 * reply that announces it goes out.  Calls beyond the grant are served
 * (RFC 8166 allows it) but the buffers a connection may hold are bounded,
 * so a requester that ignores its credits only stalls itself.
 *
 * Bounds (rpcrdma_server_opts, docs/security.md).  Connection requests
 * beyond max_conns are rejected; a call larger than max_record gets
 * ERR_CHUNK before any Read; Read-chunk buffers are held within a budget
 * per connection and per transport (later calls wait); calls received
 * while a connection's replies in flight reach max_conn_queued wait in
 * their receive buffers; a tick per connection closes it when its replies
 * do not move (drain), its Read chunks are not read (record), or it does
 * nothing (idle).
 *
 * Recovery.  An RDMA Read or Write that fails closes the connection (RFC
 * 8166 5.5.3; 5.5.4: a responder that cannot send a reply MUST close the
 * connection).  When a connection ends, calls still reading are dropped,
 * queued replies are discarded, and the core is told (cb->conn_closed); a
 * call it still holds stays valid until reply_send or reply_drop, which
 * then only release it.
 *
 * Chunk combinations taken: any the decoder accepts.  Read chunks at any
 * positions (each followed by its round-up), a Position-Zero chunk alone
 * or split by other Read chunks, chunks of many segments, any number of
 * Write chunks (filled in order, unused ones returned with zero lengths),
 * a Reply chunk; RDMA_MSGP only with accept_msgp and no Read chunks.
 * Legacy RDMA_DONE is dropped; an RDMA_ERROR from a requester is dropped.
 *
 * DDP results are copied into registered buffers when encoded, not written
 * from the upper layer's memory: transport.h gives the responder no
 * moment at which the core may free its results after the RDMA Writes are
 * done, so referring to them after reply_send returns would be unsafe.
 */
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace.h"
#include "xprt/svc.h"

enum xsreq_state {
	SREQ_IDLE,
	SREQ_READING, /* pulling Read chunks */
	SREQ_CORE,    /* handed to the core */
	SREQ_QUEUED,  /* reply waiting for send-queue room */
	SREQ_POSTED,  /* reply Writes and Send posted */
};

enum xsreq_form {
	SFORM_INLINE,
	SFORM_LONG,
	SFORM_ERROR, /* an RDMA_ERROR already encoded in sbuf */
};

struct xsvc;
struct xsconn;

/* One RDMA Read of a call: one remote segment into the read buffer. */
struct xrop {
	struct rpcrdma__xop op;
	struct xsreq *s;
	uint32_t handle;
	uint32_t len;
	uint64_t offset;
	size_t local_off;
};

#define XSREQ_MAX_ROPS (RPCRDMA_HDR_MAX_READS + RPCRDMA_REBUILD_MAX_PIECES)

struct xsreq {
	struct rpcrdma__sreq sreq; /* the core's view; tpriv points back */
	/* The client's address for sreq.peer, copied: a request may outlive
	 * its connection (transport.h). */
	struct sockaddr_storage peer;
	struct xsconn *conn;
	enum xsreq_state state;
	struct xsreq *next; /* free list, read or send queue */
	struct xsreq *all_prev, *all_next;
	bool counted; /* counted in conn->in_progress */
	struct rpcrdma__xrecv *r;
	struct rpcrdma_hdr hdr; /* the call's transport header */
	bool msgp;

	/* Read chunks. */
	struct rpcrdma__xbuf rdbuf;
	size_t rd_total; /* bytes its Read chunks bring (charged to the conn) */
	bool rd_charged;
	bool rd_waited;    /* counted once in read_budget_waits */
	uint64_t rd_start; /* when its Reads began: record_timeout_ms */
	struct xsreq *rl_prev, *rl_next; /* conn's calls with Reads out, oldest first */
	bool rl_linked;
	struct xrop rops[XSREQ_MAX_ROPS];
	uint32_t nrops, rop_next, reads_left;
	bool read_err;
	struct rpcrdma_rebuild_piece pieces[RPCRDMA_REBUILD_MAX_PIECES];
	unsigned int npieces;
	struct iovec iov[2 * RPCRDMA_REBUILD_MAX_PIECES];
	struct rpcrdma_xdr_stream call_xdr;
	struct rpcrdma__ddp_msgp msgp_ddp;

	/* The reply. */
	bool begun;
	struct rpcrdma__xbuf sbuf; /* transport header */
	struct rpcrdma__xbuf rbuf; /* the reply message */
	struct rpcrdma__ddp_resp rddp;
	enum xsreq_form form;
	size_t reply_len, hdr_len;
	uint32_t grant;
	uint32_t ops_needed;
	struct rpcrdma__xop write_op;
	uint32_t writes_left;
	struct rpcrdma__xop send_op;
	bool send_busy;
	size_t tx_cost; /* counted in conn->tx_bytes while queued or posted */
	bool tx_counted;
};

struct xsconn {
	struct rpcrdma__xconn c;
	struct xsvc *svc;
	struct xsconn *prev, *next;
	unsigned int sreqs;   /* calls of this connection alive, any state */
	uint32_t in_progress; /* calls received and not yet answered */
	uint32_t held;        /* receive buffers held by calls */
	uint32_t grant;       /* last grant announced */
	size_t rd_bytes;      /* read buffers held by its calls */
	struct xsreq *rd_head, *rd_tail;
	struct xsreq *tx_head, *tx_tail;
	bool told_core;
	/* RFC 8167: the reverse-direction requester bound to this connection
	 * (bidir.c), and the receives kept posted for its replies; @bc_down
	 * tells the backchannel @bc when the connection goes. */
	struct rpcrdma__xpartner *bc_req;
	void (*bc_down)(void *bc);
	void *bc;
	uint32_t bc_recvs;
	/* Bounds (rpcrdma_server_opts): replies queued or posted, their
	 * bytes, and since when they have not moved; the last receive; the
	 * tick that looks at these clocks. */
	bool admitted; /* counts against max_conns (cb->conn_admit) */
	bool rd_blocked; /* waits for the transport's Read-chunk budget */
	bool paused;     /* receives held back: tx_bytes at max_conn_queued */
	uint32_t tx_pending;
	size_t tx_bytes;
	uint64_t tx_since, last_rx;
	struct rpcrdma__timer tick;
	/* Calls received while tx_bytes is at max_conn_queued: kept in their
	 * receive buffers (counted in held), taken in order once the replies
	 * drain, from hold_kick. */
	struct rpcrdma__xrecv *hold_head, *hold_tail;
	struct rpcrdma__timer hold_kick;
	struct xsreq *rl_head, *rl_tail; /* calls whose Reads are out, oldest first */
};

struct xsvc {
	struct rpcrdma__xdev dev;
	struct rpcrdma_prov_listener *lst;
	const struct rpcrdma__svc_cb *cb;
	void *cb_ctx;
	uint32_t inline_send, inline_recv, credits;
	uint32_t vers_low, vers_high;
	bool accept_msgp;
	bool destroying;
	struct rpcrdma_hdr_limits lim;
	/* Version Two optional features (draft section 3) and the context
	 * their handlers see (set per message). */
	struct rpcrdma__opt_registry opts;
	struct rpcrdma__xopt_ctx opt_ctx;
	struct rpcrdma__xrecv_pool pool;
	struct rpcrdma__xbuf_spares rd_spares; /* Read-chunk landing buffers */
	struct xsconn *conns;
	struct xsreq *free;
	unsigned int nfree;
	struct xsreq *all;
	struct rpcrdma_hdr hdr; /* scratch: reply headers */
	struct rpcrdma_segment segs[RPCRDMA_HDR_MAX_SEGS];
	struct rpcrdma_xprt_stats st;
	/* A client's callback responder (RFC 8167; xprt.h): it serves the
	 * connection of its owner (the requester) and posts no receives. */
	bool partner;
	bool refuse_chunks; /* reverse calls with chunks get ERR_CHUNK (5.3) */
	struct xsconn *partner_sc;
	struct rpcrdma__xpartner self; /* what the owner sees of us */
	/* Bounds: the largest call rebuilt (max_record), the Read-chunk
	 * bytes one connection and all of them may hold, and the
	 * connections waiting for the latter (woken from rd_kick). */
	struct rpcrdma__svc_bounds b;
	size_t max_call, conn_read_budget, rd_bytes;
	unsigned int rd_blocked;
	struct rpcrdma__timer rd_kick;
};

#define XSREQ_FREE_MAX 64u
/* Read-chunk bytes one connection's calls may hold at once: four of its
 * largest calls (max_record), within the transport's max_read_bytes; a
 * requester cannot make us allocate more by sending many large calls. */
#define XSCONN_READ_CALLS 4u
/* Read-chunk landing buffers kept for the next calls, per transport (a
 * worker's): enough for a pipeline of bulk WRITEs. */
#define XSVC_RD_SPARES_MAX (32u << 20)

static struct xsvc *xsvc_of(struct rpcrdma__svc_transport *t)
{
	return (struct xsvc *)(void *)t;
}

static struct xsconn *xsconn_of(struct rpcrdma__xconn *c)
{
	return (struct xsconn *)(void *)((char *)c - offsetof(struct xsconn, c));
}

/*
 * Objects.
 */
static void conn_try_free(struct xsconn *sc)
{
	struct xsvc *v = sc->svc;

	if (sc->c.pc || sc->sreqs || sc->c.ops_out)
		return;
	rpcrdma__timer_stop(&sc->tick);
	rpcrdma__timer_stop(&sc->hold_kick);
	if (sc->rd_blocked && v->rd_blocked)
		v->rd_blocked--;
	if (sc->admitted && v->cb->conn_release)
		v->cb->conn_release(v->cb_ctx);
	if (sc->prev)
		sc->prev->next = sc->next;
	else
		v->conns = sc->next;
	if (sc->next)
		sc->next->prev = sc->prev;
	free(sc);
}

static void sreq_unlink_all(struct xsvc *v, struct xsreq *s)
{
	if (s->all_prev)
		s->all_prev->all_next = s->all_next;
	else
		v->all = s->all_next;
	if (s->all_next)
		s->all_next->all_prev = s->all_prev;
	s->all_prev = s->all_next = NULL;
}

static void sreq_free_bufs(struct xsreq *s)
{
	rpcrdma__ddp_resp_free(&s->rddp);
	rpcrdma__xbuf_free(&s->rdbuf);
	rpcrdma__xbuf_free(&s->sbuf);
	rpcrdma__xbuf_free(&s->rbuf);
}

static struct xsreq *sreq_get(struct xsvc *v, struct xsconn *sc)
{
	struct xsreq *s = v->free;

	if (s) {
		v->free = s->next;
		v->nfree--;
	} else {
		s = calloc(1, sizeof(*s));
		if (!s)
			return NULL;
		s->all_next = v->all;
		if (v->all)
			v->all->all_prev = s;
		v->all = s;
	}
	s->next = NULL;
	s->conn = sc;
	s->state = SREQ_IDLE;
	s->counted = false;
	s->r = NULL;
	s->msgp = false;
	s->nrops = s->rop_next = s->reads_left = 0;
	s->rd_total = 0;
	s->rd_charged = false;
	s->rd_waited = false;
	s->rl_linked = false;
	s->rl_prev = s->rl_next = NULL;
	s->tx_counted = false;
	s->tx_cost = 0;
	s->read_err = false;
	s->begun = false;
	s->writes_left = 0;
	s->send_busy = false;
	s->rddp.nresults = 0;
	memset(&s->sreq, 0, sizeof(s->sreq));
	s->sreq.tpriv = s;
	if (sc->c.pc && sc->c.pc->peer_addrlen) {
		memcpy(&s->peer, &sc->c.pc->peer_addr, sc->c.pc->peer_addrlen);
		s->sreq.peer = (const struct sockaddr *)&s->peer;
	}
	sc->sreqs++;
	return s;
}

static void refill(struct xsconn *sc);
static void after_sq(struct xsconn *sc);
static void hold_release(struct rpcrdma__timer *tm);

/* The calls of a connection whose Reads are out (record_timeout_ms). */
static void rl_add(struct xsconn *sc, struct xsreq *s)
{
	s->rl_next = NULL;
	s->rl_prev = sc->rl_tail;
	if (sc->rl_tail)
		sc->rl_tail->rl_next = s;
	else
		sc->rl_head = s;
	sc->rl_tail = s;
	s->rl_linked = true;
}

static void rl_remove(struct xsconn *sc, struct xsreq *s)
{
	if (!s->rl_linked)
		return;
	if (s->rl_prev)
		s->rl_prev->rl_next = s->rl_next;
	else
		sc->rl_head = s->rl_next;
	if (s->rl_next)
		s->rl_next->rl_prev = s->rl_prev;
	else
		sc->rl_tail = s->rl_prev;
	s->rl_prev = s->rl_next = NULL;
	s->rl_linked = false;
}

/* Connections that waited for the transport's Read-chunk budget try again. */
static void rd_kick(struct rpcrdma__timer *tm)
{
	struct xsvc *v = tm->ctx;

	for (struct xsconn *sc = v->conns, *next; sc && v->rd_blocked; sc = next) {
		next = sc->next;
		if (!sc->rd_blocked)
			continue;
		sc->rd_blocked = false;
		v->rd_blocked--;
		after_sq(sc); /* may block it again */
	}
}

/* Ends a call: every buffer back, the connection maybe freed. */
static void sreq_release(struct xsreq *s)
{
	struct xsconn *sc = s->conn;
	struct xsvc *v = sc->svc;
	void (*done)(void *) = s->sreq.done;
	void *done_ctx = s->sreq.done_ctx;

	s->sreq.done = NULL;

	if (s->counted && sc->in_progress)
		sc->in_progress--;
	s->counted = false;
	if (s->r) {
		rpcrdma__xrecv_put(&v->pool, s->r);
		s->r = NULL;
		if (sc->held)
			sc->held--;
	}
	rpcrdma__ddp_resp_release(&s->rddp);
	rl_remove(sc, s);
	rpcrdma__xbuf_give(&v->rd_spares, &s->rdbuf);
	if (s->rd_charged) {
		sc->rd_bytes -= s->rd_total;
		v->rd_bytes -= s->rd_total;
		/* Connections waiting for the budget go again, from a timer:
		 * not inside whatever released this call. */
		if (v->rd_blocked && !v->rd_kick.armed)
			rpcrdma__timer_start(v->dev.loop, &v->rd_kick, 0, rd_kick, v);
	}
	s->rd_charged = false;
	if (s->tx_counted) {
		sc->tx_bytes -= s->tx_cost;
		sc->tx_pending--;
		sc->tx_since = rpcrdma_loop_now(v->dev.loop);
		if (sc->hold_head && sc->tx_bytes < v->b.max_queued && !sc->hold_kick.armed)
			rpcrdma__timer_start(v->dev.loop, &sc->hold_kick, 0, hold_release, sc);
	}
	s->tx_counted = false;
	if (s->rbuf.len > 4u * v->inline_send)
		rpcrdma__xbuf_free(&s->rbuf);
	s->sreq.tpriv = NULL;
	s->state = SREQ_IDLE;
	s->conn = NULL;
	/* A buffer came back: receives held back by the cap may go now. */
	refill(sc);
	sc->sreqs--;
	if (v->nfree < XSREQ_FREE_MAX) {
		s->next = v->free;
		v->free = s;
		v->nfree++;
	} else {
		sreq_unlink_all(v, s);
		sreq_free_bufs(s);
		free(s);
	}
	conn_try_free(sc);
	/* Nothing posted reads the results any more: the core may free them. */
	if (done)
		done(done_ctx);
}

/* RFC 8166 5.5.3 / 5.5.4: failed RDMA, or a reply we could not send. */
static void conn_close(struct xsconn *sc)
{
	if (sc->c.pc &&
	    (sc->c.state == RPCRDMA__XCONN_UP || sc->c.state == RPCRDMA__XCONN_CONNECTING))
		(void)rpcrdma__provider_disconnect(sc->c.pc);
}

/* Keep the receives the grant needs posted, within what one connection
 * may hold. */
static void refill(struct xsconn *sc)
{
	struct xsvc *v = sc->svc;
	uint32_t target = (sc->grant > v->credits ? sc->grant : v->credits) + sc->bc_recvs;
	uint32_t cap = 2 * v->credits + 4 + sc->bc_recvs;

	if (v->partner)
		return; /* the owner posts every receive */
	if (sc->c.state != RPCRDMA__XCONN_UP && sc->c.state != RPCRDMA__XCONN_CONNECTING)
		return;
	if (sc->held >= cap)
		return;
	/* max_conn_queued: no new call is taken while the requester leaves
	 * our replies unfinished (the receives return as replies complete). */
	if (sc->tx_bytes >= v->b.max_queued) {
		if (!sc->paused)
			v->st.queue_pauses++;
		sc->paused = true;
		return;
	}
	sc->paused = false;
	if (target > cap - sc->held)
		target = cap - sc->held;
	(void)rpcrdma__xconn_fill_recvs(&sc->c, target);
}

/*
 * Replies: posting.
 */
static void pump_tx(struct xsconn *sc);
static void pump_reads(struct xsconn *sc);

/* The reply's Writes and Send are all done (or never went): release.
 * WARNING: the connection may be freed on return. */
static void sreq_tx_done(struct xsreq *s)
{
	if (s->send_busy || s->writes_left)
		return;
	sreq_release(s);
}

static void after_sq(struct xsconn *sc)
{
	/* Hold the connection while the queues are pumped. */
	sc->sreqs++;
	pump_reads(sc);
	pump_tx(sc);
	sc->sreqs--;
	conn_try_free(sc);
}

static void on_write(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev)
{
	struct xsreq *s = (struct xsreq *)((char *)op - offsetof(struct xsreq, write_op));
	struct xsconn *sc = s->conn;

	if (sc->c.ops_out)
		sc->c.ops_out--;
	if (sc->c.sq_used)
		sc->c.sq_used--;
	if (s->writes_left)
		s->writes_left--;
	if (ev->status == RPCRDMA_PST_SUCCESS) {
		sc->svc->st.rdma_write_bytes += ev->byte_len;
		sc->tx_since = rpcrdma_loop_now(sc->svc->dev.loop);
	}
	else if (ev->status != RPCRDMA_PST_FLUSHED)
		conn_close(sc);
	sc->sreqs++;
	sreq_tx_done(s);
	sc->sreqs--;
	after_sq(sc);
}

static void on_send(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev)
{
	struct xsreq *s = (struct xsreq *)((char *)op - offsetof(struct xsreq, send_op));
	struct xsconn *sc = s->conn;

	if (sc->c.ops_out)
		sc->c.ops_out--;
	if (sc->c.sq_used)
		sc->c.sq_used--;
	s->send_busy = false;
	if (ev->status == RPCRDMA_PST_SUCCESS)
		sc->tx_since = rpcrdma_loop_now(sc->svc->dev.loop);
	if (ev->status != RPCRDMA_PST_SUCCESS && ev->status != RPCRDMA_PST_FLUSHED)
		conn_close(sc);
	sc->sreqs++;
	sreq_tx_done(s);
	sc->sreqs--;
	after_sq(sc);
}

/* The remote segments of @chunk that carry @len bytes, lengths rewritten
 * (RFC 8166 4.4.6); unused segments get 0.  Returns the count of segments
 * in @out (all of the chunk's), or a negative error. */
static int fill_chunk(const struct rpcrdma_hdr *call, const struct rpcrdma_chunk *c, uint64_t len,
		      struct rpcrdma_segment *out)
{
	uint32_t lens[RPCRDMA_HDR_MAX_SEGS];
	const struct rpcrdma_segment *first = rpcrdma_hdr_chunk_seg(call, c, 0);
	int rc;

	if (!c->nsegs)
		return len ? -EMSGSIZE : 0;
	if (!first || c->nsegs > RPCRDMA_HDR_MAX_SEGS)
		return -EINVAL;
	rc = rpcrdma__write_chunk_fill(first, c->nsegs, len, lens);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < c->nsegs; i++) {
		out[i] = first[i];
		out[i].length = lens[i];
	}
	return (int)c->nsegs;
}

/* RDMA Write of @len bytes at @src into the segments @segs (zero-length
 * ones skipped). */
static int post_chunk_write(struct xsreq *s, const struct rpcrdma__xbuf *src, size_t len,
			    const struct rpcrdma_segment *segs, uint32_t nsegs)
{
	struct xsconn *sc = s->conn;
	struct rpcrdma_prov_rseg rs[RPCRDMA_PROV_MAX_RSEGS];
	struct rpcrdma_prov_sge sge = {.addr = src->addr, .length = (uint32_t)len, .mr = src->mr};
	uint32_t n = 0;
	size_t done = 0;
	int rc;

	/* Split by RPCRDMA_PROV_MAX_RSEGS remote segments per operation. */
	for (uint32_t i = 0; i <= nsegs; i++) {
		if (i < nsegs && segs[i].length) {
			rs[n].handle = segs[i].handle;
			rs[n].length = segs[i].length;
			rs[n].offset = segs[i].offset;
			n++;
		}
		if (n && (n == RPCRDMA_PROV_MAX_RSEGS || i == nsegs)) {
			uint64_t bytes = 0;

			for (uint32_t k = 0; k < n; k++)
				bytes += rs[k].length;
			sge.addr = src->addr + done;
			sge.length = (uint32_t)bytes;
			s->write_op.done = on_write;
			rc = rpcrdma__provider_post_write(sc->c.pc, &sge, 1, rs, n, &s->write_op);
			if (rc)
				return rc;
			s->writes_left++;
			sc->c.ops_out++;
			sc->c.sq_used++;
			done += bytes;
			n = 0;
		}
	}
	return done == len ? 0 : -EINVAL;
}

/* The one handle Send With Invalidate may name: the call's chunks must
 * all use the same one (else 0). */
static uint32_t single_handle(const struct rpcrdma_hdr *h)
{
	uint32_t handle = 0;

	for (uint32_t i = 0; i < h->nreads; i++) {
		if (handle && h->reads[i].target.handle != handle)
			return 0;
		handle = h->reads[i].target.handle;
	}
	for (uint32_t i = 0; i < h->nsegs; i++) {
		if (handle && h->segs[i].handle != handle)
			return 0;
		handle = h->segs[i].handle;
	}
	return handle;
}

static void post_tx(struct xsreq *s)
{
	struct xsconn *sc = s->conn;
	struct xsvc *v = sc->svc;
	struct rpcrdma_prov_sge sge[2];
	unsigned int nsge = 0, flags = 0;
	uint32_t inv = 0;
	int rc = 0;

	s->state = SREQ_POSTED;
	/* ORDER: the receives a raised grant promises are posted before the
	 * reply announcing it can reach the requester (RFC 8166 4.3.1). */
	if (s->grant > sc->grant)
		sc->grant = s->grant;
	refill(sc);

	if (s->form != SFORM_ERROR) {
		for (uint32_t i = 0; i < s->rddp.nresults && !rc; i++) {
			const struct rpcrdma__ddp_result *res = &s->rddp.results[i];
			const struct rpcrdma__xbuf src = {(uint8_t *)(uintptr_t)res->src, res->len,
							  res->mr};
			int n;

			if (!res->len)
				continue;
			if (res->own)
				v->st.write_zero_copy_bytes += res->len;
			n = fill_chunk(&s->hdr, &s->hdr.writes[res->chunk], res->len, v->segs);
			rc = n < 0 ? n : post_chunk_write(s, &src, res->len, v->segs, (uint32_t)n);
		}
		if (!rc && s->form == SFORM_LONG) {
			int n = fill_chunk(&s->hdr, &s->hdr.reply, s->reply_len, v->segs);

			rc = n < 0 ? n
				   : post_chunk_write(s, &s->rbuf, s->reply_len, v->segs,
						      (uint32_t)n);
		}
	}
	if (rc)
		goto out_lost;

	sge[nsge].addr = s->sbuf.addr;
	sge[nsge].length = (uint32_t)s->hdr_len;
	sge[nsge++].mr = s->sbuf.mr;
	if (s->form == SFORM_INLINE && s->reply_len) {
		sge[nsge].addr = s->rbuf.addr;
		sge[nsge].length = (uint32_t)s->reply_len;
		sge[nsge++].mr = s->rbuf.mr;
	}
	/* Send With Invalidate when the requester said it takes it (RFC
	 * 8797) and one handle covers every chunk of the call: it then need
	 * not invalidate that one itself. */
	if (s->form != SFORM_ERROR && sc->c.peer_invalidate &&
	    (v->dev.prov->caps.flags & RPCRDMA_PCAP_SEND_INVALIDATE)) {
		inv = single_handle(&s->hdr);
		if (inv)
			flags |= RPCRDMA_PSEND_INVALIDATE;
	}
	/* ORDER: the Send is posted after the Writes on the same connection;
	 * the provider delivers it only once their data is placed, so the
	 * requester never sees a reply before its data. */
	s->send_op.done = on_send;
	rc = rpcrdma__provider_post_send(sc->c.pc, sge, nsge, flags, inv, &s->send_op);
	if (rc)
		goto out_lost;
	s->send_busy = true;
	sc->c.ops_out++;
	sc->c.sq_used++;
	if (s->counted && sc->in_progress)
		sc->in_progress--;
	s->counted = false;
	v->st.calls_sent++;
	/* Every answer is in its call's version (draft 5.3). */
	if (s->hdr.vers == RPCRDMA_VERSION_TWO)
		v->st.vers_two_msgs++;
	v->st.inline_send_bytes += sge[0].length + (nsge > 1 ? sge[1].length : 0);
	v->st.credits_granted = s->grant;
	return;

out_lost:
	/* RFC 8166 5.5.4: a responder that cannot send a reply MUST close
	 * the connection.  Writes already posted complete (flushed) first. */
	conn_close(sc);
	sc->sreqs++;
	sreq_tx_done(s);
	sc->sreqs--;
}

static void pump_tx(struct xsconn *sc)
{
	struct xsreq *s;

	while ((s = sc->tx_head)) {
		if (sc->c.state != RPCRDMA__XCONN_UP) {
			sc->tx_head = s->next;
			if (!sc->tx_head)
				sc->tx_tail = NULL;
			s->next = NULL;
			sreq_release(s);
			continue;
		}
		/* A reply needing more than the whole queue goes alone. */
		if (sc->c.sq_used + s->ops_needed > sc->c.sq_depth && sc->c.sq_used)
			return;
		sc->tx_head = s->next;
		if (!sc->tx_head)
			sc->tx_tail = NULL;
		s->next = NULL;
		post_tx(s);
	}
}

static void queue_tx(struct xsreq *s)
{
	struct xsconn *sc = s->conn;

	s->state = SREQ_QUEUED;
	s->next = NULL;
	if (!s->tx_counted) {
		/* What the reply holds until its Writes and Send complete. */
		s->tx_cost = s->hdr_len + s->reply_len;
		for (uint32_t i = 0; i < s->rddp.nresults; i++)
			s->tx_cost += s->rddp.results[i].len;
		if (!sc->tx_pending)
			sc->tx_since = rpcrdma_loop_now(sc->svc->dev.loop);
		sc->tx_pending++;
		sc->tx_bytes += s->tx_cost;
		s->tx_counted = true;
	}
	if (sc->tx_tail)
		sc->tx_tail->next = s;
	else
		sc->tx_head = s;
	sc->tx_tail = s;
	sc->sreqs++;
	pump_tx(sc);
	sc->sreqs--;
	conn_try_free(sc);
}

/*
 * Sends @h alone as the answer to @s (an RDMA_ERROR, or an RDMA_OPTIONAL's
 * answer): no message follows the header.  Returns 0 once queued; else
 * @s is released and the answer lost (-ENOMEM, or the encoder's error).
 */
static int send_header_only(struct xsreq *s, const struct rpcrdma_hdr *h)
{
	struct xsvc *v = s->conn->svc;
	int n;

	n = rpcrdma__xbuf_reserve(v->dev.prov, &s->sbuf, rpcrdma_hdr_encoded_size(h));
	if (!n)
		n = rpcrdma_hdr_encode(h, s->sbuf.addr, s->sbuf.len);
	if (n < 0) {
		sreq_release(s);
		return n;
	}
	s->hdr_len = (size_t)n;
	s->reply_len = 0;
	s->form = SFORM_ERROR;
	s->ops_needed = 1;
	s->rddp.nresults = 0;
	queue_tx(s);
	return 0;
}

/* Answers the call in @s with RDMA_ERROR (@action from the decoder). */
static void send_error(struct xsreq *s, enum rpcrdma_hdr_action action)
{
	struct xsconn *sc = s->conn;
	struct xsvc *v = sc->svc;
	struct rpcrdma_hdr *h = &v->hdr;

	s->grant = rpcrdma__credits_grant(v->credits, s->hdr.credit);
	if (rpcrdma_hdr_init_error(h, &s->hdr, action, v->vers_low, v->vers_high, s->grant)) {
		sreq_release(s);
		return;
	}
	if (send_header_only(s, h) == 0) {
		v->st.rdma_errors_sent++;
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_ERR_SENT, sc->c.id, s->hdr.xid,
			       action == RPCRDMA_HDR_REPLY_ERR_VERS	   ? RPCRDMA_ERR_VERS
			       : action == RPCRDMA_HDR_REPLY_ERR_CHUNK ? RPCRDMA_ERR_CHUNK
								       : 0,
			       0, "RDMA_ERROR %s sent",
			       action == RPCRDMA_HDR_REPLY_ERR_VERS	   ? "ERR_VERS"
			       : action == RPCRDMA_HDR_REPLY_ERR_CHUNK ? "ERR_CHUNK"
								       : "ERR_INVAL_OPTION");
	}
}

/*
 * RDMA_OPTIONAL (Version Two, draft section 3): dispatched through the
 * registry; an opttype nobody registered gets ERR_INVAL_OPTION with the
 * same XID (3.1), and a feature's answer goes back as an RDMA_OPTIONAL of
 * the same opttype and XID.  Like a call, the message held a credit until
 * answered.
 */
static void handle_optional(struct xsreq *s)
{
	struct xsconn *sc = s->conn;
	struct xsvc *v = sc->svc;
	struct rpcrdma__xopt_ctx *o = &v->opt_ctx;
	struct rpcrdma_hdr *h = &v->hdr;
	enum rpcrdma_hdr_action action;

	o->conn = &sc->c;
	o->our_send = v->inline_send;
	o->our_recv = v->inline_recv;
	o->credits = v->credits;
	o->answer_len = 0;
	action = rpcrdma__opt_dispatch(&v->opts, &s->hdr, s->r->buf + s->hdr.hdr_len,
				       s->hdr.payload_len);
	o->conn = NULL;
	if (action == RPCRDMA_HDR_REPLY_ERR_CHUNK || action == RPCRDMA_HDR_REPLY_INVAL_OPTION) {
		v->st.bad_msgs++;
		send_error(s, action);
		return;
	}
	if (action != RPCRDMA_HDR_ACCEPT || !o->answer_len) {
		sreq_release(s);
		return;
	}
	s->grant = rpcrdma__credits_grant(v->credits, s->hdr.credit);
	rpcrdma_hdr_init(h, s->hdr.xid, s->hdr.vers, s->grant, RPCRDMA_PROC_OPTIONAL);
	h->opttype = s->hdr.opttype;
	h->optinfo = o->answer;
	h->optinfo_len = o->answer_len;
	(void)send_header_only(s, h);
}

/* The first message a responder accepts fixes the connection's version
 * and with it the default thresholds (draft 5.3: the requester chose). */
static void learn_version(struct xsconn *sc, uint32_t vers)
{
	struct xsvc *v = sc->svc;

	if (sc->c.vers_known || v->partner)
		return;
	sc->c.vers_known = true;
	rpcrdma__xconn_set_version(&sc->c, vers, v->inline_send, v->inline_recv);
}

/*
 * Calls: reading and delivering.
 */
static void deliver(struct xsreq *s)
{
	static const uint8_t zero[4];
	struct xsconn *sc = s->conn;
	struct xsvc *v = sc->svc;
	unsigned int n = 0;
	size_t rd_off = 0;
	const uint8_t *payload = s->r->buf + s->hdr.hdr_len;

	for (unsigned int i = 0; i < s->npieces; i++) {
		const struct rpcrdma_rebuild_piece *p = &s->pieces[i];

		if (!p->chunk) {
			s->iov[n].iov_base = (void *)(uintptr_t)(payload + p->inline_off);
			s->iov[n++].iov_len = p->len;
			continue;
		}
		s->iov[n].iov_base = s->rdbuf.addr + rd_off;
		s->iov[n++].iov_len = p->len;
		rd_off += p->len;
		if (p->pad) {
			s->iov[n].iov_base = (void *)(uintptr_t)zero;
			s->iov[n++].iov_len = p->pad;
		}
	}
	if (rpcrdma_xdr_init_iov(&s->call_xdr, s->iov, n)) {
		send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return;
	}
	if (s->msgp) {
		rpcrdma__ddp_msgp_init(&s->msgp_ddp, &s->call_xdr, s->hdr.hdr_len, s->hdr.align,
				       s->hdr.thresh);
		rpcrdma_xdr_set_ddp(&s->call_xdr, &s->msgp_ddp.base);
	}
	s->state = SREQ_CORE;
	sc->told_core = true;
	v->st.calls_received++;
	v->cb->call(v->cb_ctx, &s->sreq, &s->call_xdr);
}

static void on_read(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev)
{
	struct xrop *ro = (struct xrop *)op;
	struct xsreq *s = ro->s;
	struct xsconn *sc = s->conn;

	if (sc->c.ops_out)
		sc->c.ops_out--;
	if (sc->c.sq_used)
		sc->c.sq_used--;
	if (sc->c.rd_used)
		sc->c.rd_used--;
	if (s->reads_left)
		s->reads_left--;
	if (ev->status == RPCRDMA_PST_SUCCESS) {
		sc->svc->st.rdma_read_bytes += ev->byte_len;
	} else {
		s->read_err = true;
		/* RFC 8166 5.5.3: a Read the requester's memory refused is
		 * fatal to the connection. */
		if (ev->status != RPCRDMA_PST_FLUSHED)
			conn_close(sc);
	}
	sc->sreqs++;
	if (!s->reads_left && s->rop_next == s->nrops) {
		rl_remove(sc, s);
		if (s->read_err || sc->c.state != RPCRDMA__XCONN_UP || sc->svc->destroying)
			sreq_release(s);
		else
			deliver(s);
	}
	sc->sreqs--;
	after_sq(sc);
}

static void pump_reads(struct xsconn *sc)
{
	struct xsreq *s;

	while ((s = sc->rd_head)) {
		if (sc->c.state != RPCRDMA__XCONN_UP) {
			/* Nothing more will be posted: the call ends when the
			 * reads already out complete, or now. */
			sc->rd_head = s->next;
			if (!sc->rd_head)
				sc->rd_tail = NULL;
			s->next = NULL;
			s->nrops = s->rop_next;
			s->read_err = true;
			if (!s->reads_left)
				sreq_release(s);
			continue;
		}
		if (!s->rd_charged) {
			struct xsvc *v = sc->svc;

			/* Its buffer, within the connection's budget and the
			 * transport's (FIFO: later calls wait behind it). */
			if (sc->rd_bytes && sc->rd_bytes + s->rd_total > v->conn_read_budget) {
				v->st.read_budget_waits += !s->rd_waited;
				s->rd_waited = true;
				return;
			}
			if (v->rd_bytes && v->rd_bytes + s->rd_total > v->b.max_read_bytes) {
				v->st.read_budget_waits += !s->rd_waited;
				s->rd_waited = true;
				if (!sc->rd_blocked) {
					sc->rd_blocked = true;
					v->rd_blocked++;
				}
				return;
			}
			if (rpcrdma__xbuf_take(&v->rd_spares, v->dev.prov, &s->rdbuf, s->rd_total)) {
				s->nrops = s->rop_next;
				s->read_err = true;
			} else {
				s->rd_charged = true;
				s->rd_start = rpcrdma_loop_now(v->dev.loop);
				rl_add(sc, s);
				sc->rd_bytes += s->rd_total;
				v->rd_bytes += s->rd_total;
			}
		}
		while (s->rop_next < s->nrops && sc->c.rd_used < sc->c.rd_depth &&
		       sc->c.sq_used < sc->c.sq_depth) {
			struct xrop *ro = &s->rops[s->rop_next];
			struct rpcrdma_prov_sge sge = {
			    .addr = s->rdbuf.addr + ro->local_off,
			    .length = ro->len,
			    .mr = s->rdbuf.mr,
			};
			struct rpcrdma_prov_rseg rs = {
			    .handle = ro->handle,
			    .length = ro->len,
			    .offset = ro->offset,
			};
			int rc;

			ro->op.done = on_read;
			ro->s = s;
			rc = rpcrdma__provider_post_read(sc->c.pc, &sge, 1, &rs, 1, &ro->op);
			if (rc) {
				/* The call cannot be read: drop it and close
				 * (the requester retransmits after reconnecting). */
				conn_close(sc);
				s->nrops = s->rop_next;
				s->read_err = true;
				break;
			}
			s->rop_next++;
			s->reads_left++;
			sc->c.ops_out++;
			sc->c.sq_used++;
			sc->c.rd_used++;
		}
		if (s->rop_next < s->nrops)
			return;
		sc->rd_head = s->next;
		if (!sc->rd_head)
			sc->rd_tail = NULL;
		s->next = NULL;
		if (!s->reads_left)
			sreq_release(s); /* only after a failed post */
	}
}

/* Lays out the RDMA Reads of the call's chunk pieces (plan.h: a piece is
 * @len bytes of its chunk from @chunk_off, across the chunk's segments). */
static int plan_reads(struct xsreq *s, unsigned int npieces)
{
	size_t total = 0, off = 0;

	for (unsigned int i = 0; i < npieces; i++) {
		if (s->pieces[i].chunk)
			total += s->pieces[i].len;
	}
	s->rd_total = total;
	if (!total)
		return 0;
	for (unsigned int i = 0; i < npieces; i++) {
		const struct rpcrdma_rebuild_piece *p = &s->pieces[i];
		size_t skip = p->chunk_off, want = p->len;

		if (!p->chunk)
			continue;
		if (p->first > s->hdr.nreads || p->nsegs > s->hdr.nreads - p->first)
			return RPCRDMA_ERR_BAD_HEADER;
		for (uint32_t k = 0; k < p->nsegs && want; k++) {
			const struct rpcrdma_segment *seg = &s->hdr.reads[p->first + k].target;
			size_t take;

			if (skip >= seg->length) {
				skip -= seg->length;
				continue;
			}
			take = seg->length - skip;
			if (take > want)
				take = want;
			if (s->nrops >= XSREQ_MAX_ROPS)
				return RPCRDMA_ERR_BAD_HEADER;
			s->rops[s->nrops].handle = seg->handle;
			s->rops[s->nrops].len = (uint32_t)take;
			s->rops[s->nrops].offset = seg->offset + skip;
			s->rops[s->nrops].local_off = off;
			s->nrops++;
			off += take;
			want -= take;
			skip = 0;
		}
		if (want)
			return RPCRDMA_ERR_BAD_HEADER;
	}
	return 0;
}

/* Whether the call, its inline part and every Read segment, is within
 * @max bytes (segments counted once each, as they are pulled). */
static bool call_fits(const struct xsreq *s, size_t max)
{
	uint64_t total = s->hdr.payload_len;

	for (uint32_t i = 0; i < s->hdr.nreads; i++) {
		total += s->hdr.reads[i].target.length;
		if (total > max)
			return false;
	}
	return total <= max;
}

/* Decodes the call's transport header and sorts it by procedure: true
 * when it is a call to serve (RDMA_MSG, RDMA_NOMSG, or RDMA_MSGP taken as
 * RDMA_MSG); otherwise it has been answered, dropped or handed on. */
static bool screen_call(struct xsconn *sc, struct xsreq *s)
{
	struct xsvc *v = sc->svc;
	struct rpcrdma__xrecv *r = s->r;
	struct rpcrdma_hdr_fault fault;
	int rc;

	rc = rpcrdma_hdr_decode(r->buf, r->len, &v->lim, &s->hdr, &fault);
	if (rc) {
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, sc->c.id,
			       rpcrdma__trace_xid_of(r->buf, r->len), rc, fault.offset,
			       "call header refused at byte %zu: %s", fault.offset,
			       fault.reason ? fault.reason : "malformed");
		v->st.bad_msgs++;
		if (fault.action == RPCRDMA_HDR_REPLY_ERR_VERS ||
		    fault.action == RPCRDMA_HDR_REPLY_ERR_CHUNK ||
		    fault.action == RPCRDMA_HDR_REPLY_INVAL_OPTION)
			send_error(s, fault.action);
		else
			sreq_release(s);
		return false;
	}
	switch (s->hdr.proc) {
	case RPCRDMA_PROC_MSG:
	case RPCRDMA_PROC_NOMSG:
		break;
	case RPCRDMA_PROC_MSGP:
		/*
		 * RFC 8166 5.6.1: receivers SHOULD answer RDMA_MSGP with
		 * ERR_CHUNK.  With accept_msgp, an RFC 5666-era requester's
		 * padded call is served (draft-ietf-nfsv4-rpcrdma-01 3.5), as
		 * long as it is the plain form those peers sent: no Read
		 * chunks, and an alignment that keeps XDR's.
		 */
		if (!v->accept_msgp || s->hdr.nreads || !s->hdr.align ||
		    s->hdr.align % RPCRDMA_XDR_UNIT || s->hdr.align > v->inline_recv) {
			RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, sc->c.id,
				       s->hdr.xid, RPCRDMA_ERR_BAD_HEADER, 0,
				       "RDMA_MSGP refused (RFC 8166 5.6.1)");
			v->st.bad_msgs++;
			send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
			return false;
		}
		/* From here on it is an RDMA_MSG whose payload carries
		 * padding: the reply is planned and sent as for RDMA_MSG. */
		s->msgp = true;
		s->hdr.proc = RPCRDMA_PROC_MSG;
		break;
	case RPCRDMA_PROC_DONE:
		/* RFC 5666 Read-Read completion: nothing we use; dropped
		 * without an answer. */
		v->st.bad_msgs++;
		sreq_release(s);
		return false;
	case RPCRDMA_PROC_ERROR:
		/* Never answer an error with an error. */
		v->st.rdma_errors_received++;
		sreq_release(s);
		return false;
	case RPCRDMA_PROC_OPTIONAL:
		/* The decoder takes it in Version Two only. */
		v->st.optional_msgs++;
		learn_version(sc, s->hdr.vers);
		handle_optional(s);
		return false;
	default:
		v->st.bad_msgs++;
		send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return false;
	}
	return true;
}

/* Refuses what the call's chunks ask beyond our bounds (ERR_CHUNK), and
 * lays out its Read chunks (the pieces and the RDMA Reads).  False when an
 * RDMA_ERROR went instead. */
static bool plan_call_reads(struct xsconn *sc, struct xsreq *s)
{
	struct xsvc *v = sc->svc;
	int n, rc;

	if (v->refuse_chunks && (s->hdr.nreads || s->hdr.nwrites || s->hdr.has_reply)) {
		/* RFC 8167 5.3: a responder that takes no chunks in the
		 * reverse direction MUST answer ERR_CHUNK. */
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, sc->c.id, s->hdr.xid,
			       RPCRDMA_ERR_BAD_HEADER, 0,
			       "reverse call with chunks refused (RFC 8167 5.3)");
		send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return false;
	}

	if (!call_fits(s, v->max_call)) {
		/* max_record: refused before a byte is read or reserved. */
		v->st.records_too_large++;
		v->st.bad_msgs++;
		send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return false;
	}
	n = rpcrdma__plan_rebuild(&s->hdr, s->hdr.payload_len, s->pieces, v->max_call);
	if (n <= 0 || n > (int)RPCRDMA_REBUILD_MAX_PIECES) {
		/* Chunks that do not fit the message, or a call too large:
		 * the header is what is wrong (RFC 8166 5.5.2). */
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, sc->c.id, s->hdr.xid,
			       RPCRDMA_ERR_BAD_HEADER, 0,
			       "Read chunks do not fit the message, or the call is too large");
		v->st.bad_msgs++;
		send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return false;
	}
	s->npieces = (unsigned int)n;
	rc = plan_reads(s, (unsigned int)n);
	if (rc) {
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, sc->c.id, s->hdr.xid, rc, 0,
			       "Read chunks refused: %s", rpcrdma_strerror(rc));
		v->st.bad_msgs++;
		send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return false;
	}
	return true;
}

/* A call accepted: the counters. */
static void count_call(struct xsconn *sc, struct xsreq *s)
{
	struct xsvc *v = sc->svc;

	if (s->hdr.proc == RPCRDMA_PROC_NOMSG)
		v->st.long_calls++;
	else if (s->hdr.nreads)
		v->st.read_chunk_msgs++;
	else
		v->st.inline_msgs++;
	if (s->hdr.nwrites)
		v->st.write_chunk_msgs++;
	if (s->hdr.has_reply)
		v->st.reply_chunk_msgs++;
	if (s->hdr.proc == RPCRDMA_PROC_NOMSG)
		RPCRDMA__TRACE(RPCRDMA_TRACE_CHUNK, RPCRDMA_TEV_LONG_CALL, sc->c.id, s->hdr.xid,
			       s->hdr.payload_len, 0, "Long Call received: %u Read segments",
			       s->hdr.nreads);
}

static void handle_call(struct xsconn *sc, struct rpcrdma__xrecv *r)
{
	struct xsvc *v = sc->svc;
	struct xsreq *s;

	s = sreq_get(v, sc);
	if (!s) {
		rpcrdma__xrecv_put(&v->pool, r);
		return;
	}
	s->r = r;
	sc->held++;
	/* Every message the requester counts against its credits is in
	 * progress until answered. */
	s->counted = true;
	sc->in_progress++;
	if (sc->in_progress > v->st.credits_in_use_max)
		v->st.credits_in_use_max = sc->in_progress;
	if (!screen_call(sc, s))
		return;
	learn_version(sc, s->hdr.vers);
	if (!plan_call_reads(sc, s))
		return;
	count_call(sc, s);
	if (!s->nrops) {
		deliver(s);
		return;
	}
	s->state = SREQ_READING;
	s->next = NULL;
	if (sc->rd_tail)
		sc->rd_tail->next = s;
	else
		sc->rd_head = s;
	sc->rd_tail = s;
	after_sq(sc);
}

/* RFC 8167: a reply-direction message answers one of our reverse calls
 * (handed to the requester bound to the connection), never a call; its
 * XID may equal a forward call's.  Returns true when it was taken. */
static bool route_reverse(struct xsconn *sc, const struct rpcrdma__xrecv *r,
			  const struct rpcrdma_prov_event *ev)
{
	struct xsvc *v = sc->svc;

	/* Without a backchannel bound no reply can be due: everything is
	 * taken as a call, as on a forward-only connection. */
	if (!sc->bc_req ||
	    rpcrdma__bc_direction(r->buf, r->len, &v->lim, &v->hdr) != RPCRDMA__DIR_REPLY)
		return false;
	sc->bc_req->ops->recv(sc->bc_req, r->buf, r->len, ev->flags);
	return true;
}

static void on_recv(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev)
{
	struct rpcrdma__xrecv *r = (struct rpcrdma__xrecv *)op;
	struct xsconn *sc = xsconn_of(r->conn);
	struct xsvc *v = sc->svc;

	if (!rpcrdma__xconn_recv_completed(&sc->c, r, ev)) {
		conn_try_free(sc);
		return;
	}
	if (ev->status != RPCRDMA_PST_SUCCESS || v->destroying ||
	    sc->c.state != RPCRDMA__XCONN_UP) {
		rpcrdma__xrecv_put(&v->pool, r);
		if (ev->status != RPCRDMA_PST_SUCCESS && ev->status != RPCRDMA_PST_FLUSHED)
			conn_close(sc);
		conn_try_free(sc);
		return;
	}
	v->st.inline_recv_bytes += r->len;
	sc->last_rx = rpcrdma_loop_now(v->dev.loop);
	sc->sreqs++;
	/* ORDER: replace the receive before serving the call, so the
	 * requester's credits stay backed meanwhile. */
	sc->held++;
	refill(sc);
	sc->held--;
	if (route_reverse(sc, r, ev)) {
		rpcrdma__xrecv_put(&v->pool, r);
	} else if (sc->hold_head || sc->tx_bytes >= v->b.max_queued) {
		/* max_conn_queued: the call waits in its receive buffer (the
		 * receives are bounded) rather than adding a reply now. */
		if (!sc->hold_head)
			v->st.queue_pauses++;
		r->next = NULL;
		if (sc->hold_tail)
			sc->hold_tail->next = r;
		else
			sc->hold_head = r;
		sc->hold_tail = r;
		sc->held++;
	} else {
		handle_call(sc, r);
	}
	sc->sreqs--;
	conn_try_free(sc);
}

/* The calls held for max_conn_queued, taken in order while there is room. */
static void hold_release(struct rpcrdma__timer *tm)
{
	struct xsconn *sc = tm->ctx;
	struct xsvc *v = sc->svc;
	struct rpcrdma__xrecv *r;

	sc->sreqs++;
	while ((r = sc->hold_head) && sc->tx_bytes < v->b.max_queued &&
	       sc->c.state == RPCRDMA__XCONN_UP && !v->destroying) {
		sc->hold_head = r->next;
		if (!sc->hold_head)
			sc->hold_tail = NULL;
		r->next = NULL;
		sc->held--;
		handle_call(sc, r);
	}
	sc->sreqs--;
	conn_try_free(sc);
}

/* Calls held when the connection ends go with it. */
static void hold_drop(struct xsconn *sc)
{
	struct rpcrdma__xrecv *r;

	while ((r = sc->hold_head)) {
		sc->hold_head = r->next;
		r->next = NULL;
		if (sc->held)
			sc->held--;
		rpcrdma__xrecv_put(&sc->svc->pool, r);
	}
	sc->hold_tail = NULL;
	rpcrdma__timer_stop(&sc->hold_kick);
}

/*
 * Connections.
 */
static void conn_down(struct xsconn *sc)
{
	struct xsvc *v = sc->svc;

	if (sc->c.state == RPCRDMA__XCONN_DOWN)
		return;
	sc->c.state = RPCRDMA__XCONN_DOWN;
	rpcrdma__timer_stop(&sc->tick);
	hold_drop(sc);
	sc->sreqs++;
	/* ORDER: the reverse calls are fenced while the connection exists. */
	if (sc->bc)
		sc->bc_down(sc->bc);
	pump_reads(sc);
	pump_tx(sc);
	if (sc->c.pc && !v->partner) /* a partner's is its owner's */
		rpcrdma__provider_conn_destroy(sc->c.pc);
	sc->c.pc = NULL;
	if (sc->told_core && !v->destroying && v->cb->conn_closed)
		v->cb->conn_closed(v->cb_ctx, sc);
	if (v->dev.buried)
		rpcrdma__xdev_reap(&v->dev, false);
	sc->sreqs--;
	conn_try_free(sc);
}

/*
 * The time-outs of one connection, looked at every tick: replies the
 * requester does not let finish (drain), Read chunks it does not let us
 * read (record), a connection that does nothing (idle).  Closing is all we
 * can do: a posted operation cannot be taken back otherwise.
 */
static void conn_tick(struct rpcrdma__timer *tm)
{
	struct xsconn *sc = tm->ctx;
	struct xsvc *v = sc->svc;
	uint64_t now = rpcrdma_loop_now(v->dev.loop);
	const struct xsreq *rd = sc->rl_head;

	if (sc->c.state == RPCRDMA__XCONN_CONNECTING) {
		/* Accepted, never established (the requester did not finish
		 * the handshake): it holds receives and a place in max_conns. */
		if (now - sc->last_rx >= v->b.record_ms) {
			v->st.record_timeouts++;
			conn_close(sc);
			return;
		}
		rpcrdma__timer_start(v->dev.loop, &sc->tick, v->b.tick_ms, conn_tick, sc);
		return;
	}
	if (sc->c.state != RPCRDMA__XCONN_UP)
		return;
	if (sc->tx_pending && now - sc->tx_since >= v->b.drain_ms) {
		v->st.drain_timeouts++;
		conn_close(sc);
		return;
	}
	if (rd && now - rd->rd_start >= v->b.record_ms) {
		v->st.record_timeouts++;
		conn_close(sc);
		return;
	}
	/* Idle since the last message either way (a long call's reply
	 * counts: tx_since moves when it completes). */
	if (!sc->in_progress && !sc->tx_pending && !rd && !sc->rd_head && !sc->hold_head &&
	    now - (sc->last_rx > sc->tx_since ? sc->last_rx : sc->tx_since) >= v->b.idle_ms) {
		v->st.idle_closes++;
		conn_close(sc);
		return;
	}
	rpcrdma__timer_start(v->dev.loop, &sc->tick, v->b.tick_ms, conn_tick, sc);
}

static void on_connect_request(struct xsvc *v, const struct rpcrdma_prov_event *ev)
{
	struct rpcrdma_prov_conn *pc = ev->conn;
	uint8_t pd[RPCRDMA_CM_PRIVATE_SIZE];
	struct xsconn *sc;
	bool admitted;
	size_t pdlen;
	int rc;

	/*
	 * max_conns: the listener admits (a request handed to a worker,
	 * listener NULL, was admitted there); refused at the connection
	 * manager, before anything is allocated for it.
	 */
	if (ev->listener) {
		admitted = v->cb->conn_admit != NULL;
		if (admitted && (v->destroying || !v->cb->conn_admit(v->cb_ctx))) {
			v->st.conns_refused += !v->destroying;
			(void)rpcrdma__provider_reject(pc, NULL, 0);
			rpcrdma__provider_conn_destroy(pc);
			return;
		}
	} else {
		admitted = v->cb->conn_release != NULL;
	}
	if (!v->destroying && ev->listener && v->cb->place) {
		struct rpcrdma__svc_transport *to = v->cb->place(v->cb_ctx);

		/* A worker's instance takes the request over; it accepts it
		 * there (this function, on the worker's loop). */
		if (to && xsvc_of(to) != v &&
		    !rpcrdma__provider_conn_handoff(pc, xsvc_of(to)->dev.prov, to)) {
			v->st.conns_handed_off++;
			return;
		}
	}
	if (v->destroying || !(sc = calloc(1, sizeof(*sc)))) {
		(void)rpcrdma__provider_reject(pc, NULL, 0);
		rpcrdma__provider_conn_destroy(pc);
		if (admitted && v->cb->conn_release)
			v->cb->conn_release(v->cb_ctx);
		return;
	}
	sc->admitted = admitted;
	sc->svc = v;
	sc->c.dev = &v->dev;
	sc->c.pc = pc;
	sc->c.gen = 1;
	sc->c.id = rpcrdma__trace_conn_id();
	sc->c.vers = RPCRDMA_VERSION_ONE;
	sc->c.pool = &v->pool;
	sc->c.on_recv = on_recv;
	sc->c.st = &v->st;
	sc->c.owner = sc;
	sc->c.sq_depth = pc->attr.send_depth;
	sc->c.rd_depth = pc->attr.read_depth ? pc->attr.read_depth : 1;
	sc->c.state = RPCRDMA__XCONN_CONNECTING;
	sc->next = v->conns;
	if (v->conns)
		v->conns->prev = sc;
	v->conns = sc;
	pc->ctx = sc;
	/* RFC 8797: the requester's receive size bounds our replies; none
	 * sent means 1024 (RFC 8166 3.3.3). */
	rpcrdma__xconn_negotiate(&sc->c, ev->private_len ? ev->private_data : NULL, ev->private_len,
				 v->inline_send, v->inline_recv);
	/* ORDER: receives before accept: the requester may send the moment
	 * it sees the connection (provider.h). */
	rc = rpcrdma__xconn_fill_recvs(&sc->c, v->credits);
	if (!rc) {
		/* We never take Send With Invalidate as a responder. */
		pdlen =
		    rpcrdma__xconn_private(v->inline_send, v->inline_recv, false, pd, sizeof(pd));
		rc = rpcrdma__provider_accept(pc, pd, pdlen);
	} else {
		(void)rpcrdma__provider_reject(pc, NULL, 0);
	}
	if (rc) {
		/* Rejected; receives come back flushed, no terminal event. */
		sc->c.state = RPCRDMA__XCONN_DOWN;
		rpcrdma__provider_conn_destroy(pc);
		sc->c.pc = NULL;
		conn_try_free(sc);
		return;
	}
	/* The handshake, too, must finish within record_timeout_ms. */
	sc->last_rx = rpcrdma_loop_now(v->dev.loop);
	rpcrdma__timer_start(v->dev.loop, &sc->tick, v->b.tick_ms, conn_tick, sc);
}

static void on_event(struct rpcrdma__xdev *dev, const struct rpcrdma_prov_event *ev)
{
	struct xsvc *v = dev->ctx;
	struct xsconn *sc;

	switch (ev->type) {
	case RPCRDMA_PEV_CONNECT_REQUEST:
		if (ev->conn)
			on_connect_request(v, ev);
		return;
	case RPCRDMA_PEV_ESTABLISHED:
		sc = ev->conn ? ev->conn->ctx : NULL;
		if (!sc || sc->c.state != RPCRDMA__XCONN_CONNECTING)
			return;
		sc->c.state = RPCRDMA__XCONN_UP;
		sc->c.sq_depth = ev->conn->attr.send_depth;
		/* A share of the send queue for reverse calls (RFC 8167). */
		sc->c.bc_sq_share = sc->c.sq_depth > 2 * RPCRDMA__BC_SQ_SHARE ? RPCRDMA__BC_SQ_SHARE
									      : sc->c.sq_depth / 2;
		sc->c.sq_depth -= sc->c.bc_sq_share;
		/* The peer's IRD, as the provider agreed it. */
		sc->c.rd_depth = ev->conn->attr.read_depth ? ev->conn->attr.read_depth : 1;
		if (!v->partner) {
			sc->last_rx = rpcrdma_loop_now(v->dev.loop);
			rpcrdma__timer_start(v->dev.loop, &sc->tick, v->b.tick_ms, conn_tick, sc);
		}
		RPCRDMA__TRACE(RPCRDMA_TRACE_CONN, RPCRDMA_TEV_ACCEPT, sc->c.id, 0, 0, 0,
			       "accepted, inline send %u recv %u", sc->c.thr.send_max,
			       sc->c.thr.recv_max);
		return;
	case RPCRDMA_PEV_DISCONNECTED:
	case RPCRDMA_PEV_CONNECT_ERROR:
	case RPCRDMA_PEV_REJECTED:
		sc = ev->conn ? ev->conn->ctx : NULL;
		if (sc && sc->c.state != RPCRDMA__XCONN_DOWN)
			RPCRDMA__TRACE(RPCRDMA_TRACE_CONN, RPCRDMA_TEV_DISCONNECT, sc->c.id, 0,
				       ev->error, 0, "connection lost: %s (%d)",
				       rpcrdma_strerror(ev->error ? ev->error : -ECONNRESET), ev->error);
		if (sc)
			conn_down(sc);
		return;
	case RPCRDMA_PEV_DEVICE_ERROR:
		if (ev->listener)
			return;
		/* The instance is dead: every connection with it. */
		for (sc = v->conns; sc;) {
			struct xsconn *next = sc->next;

			conn_down(sc);
			sc = next;
		}
		return;
	default:
		return;
	}
}

/*
 * The transport ops.
 */
/* The transport without a listener: its own provider instance on @addr's device. */
static int svc_open(struct rpcrdma_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		    const struct rpcrdma_server_opts *opts, const struct rpcrdma__svc_cb *cb,
		    void *cb_ctx, struct xsvc **out)
{
	uint32_t vers_low, vers_high;
	struct xsvc *v;
	int rc;

	if (!loop || !addr || !opts || !cb || !cb->call || !out)
		return -EINVAL;
	vers_low = opts->min_vers ? opts->min_vers : RPCRDMA_VERSION_ONE;
	vers_high = opts->max_vers ? opts->max_vers : RPCRDMA_VERSION_TWO;
	if (vers_low > vers_high || vers_high > RPCRDMA_VERSION_TWO)
		return -EPROTONOSUPPORT;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->cb = cb;
	v->cb_ctx = cb_ctx;
	v->inline_send = rpcrdma__xprt_inline_size(opts->inline_send);
	v->inline_recv = rpcrdma__xprt_inline_size(opts->inline_recv);
	v->credits = opts->credits ? opts->credits : RPCRDMA__XPRT_SVC_CREDITS_DEFAULT;
	v->vers_low = vers_low;
	v->vers_high = vers_high;
	v->accept_msgp = opts->accept_msgp;
	rpcrdma__opt_registry_init(&v->opts);
	(void)rpcrdma__opt_register(&v->opts, &rpcrdma__xprops_feature, &v->opt_ctx);

	rc = rpcrdma__xdev_open(&v->dev, loop,
				opts->provider ? opts->provider : RPCRDMA__XPRT_PROVIDER_DEFAULT,
				addr, addrlen, on_event, v);
	if (rc) {
		free(v);
		return rc;
	}
	/* Room for the receives of reverse replies too (RFC 8167 4.3.2). */
	if (v->dev.prov->caps.max_recv_depth > 4 + 2 * RPCRDMA__BC_CREDITS_MAX &&
	    v->credits > v->dev.prov->caps.max_recv_depth - 4 - RPCRDMA__BC_CREDITS_MAX)
		v->credits = v->dev.prov->caps.max_recv_depth - 4 - RPCRDMA__BC_CREDITS_MAX;
	else if (v->dev.prov->caps.max_recv_depth > 4 &&
		 v->credits > v->dev.prov->caps.max_recv_depth - 4)
		v->credits = v->dev.prov->caps.max_recv_depth - 4;
	rpcrdma_hdr_limits_default(&v->lim);
	v->lim.vers_low = v->vers_low;
	v->lim.vers_high = v->vers_high;
	v->lim.max_hdr_size = v->inline_recv;
	rpcrdma__xrecv_pool_init(&v->pool, v->dev.prov, v->inline_recv, UINT32_MAX);
	v->rd_spares.max_bytes = XSVC_RD_SPARES_MAX;
	rpcrdma__svc_bounds_of(opts, &v->b);
	v->max_call = opts->max_record ? opts->max_record : RPCRDMA__SVC_MAX_RECORD_DEFAULT;
	if (v->max_call > RPCRDMA__XPRT_MAX_MSG)
		v->max_call = RPCRDMA__XPRT_MAX_MSG;
	v->conn_read_budget = XSCONN_READ_CALLS * v->max_call;
	if (v->conn_read_budget > v->b.max_read_bytes)
		v->conn_read_budget = v->b.max_read_bytes;
	*out = v;
	return 0;
}

static void svc_close(struct xsvc *v)
{
	rpcrdma__timer_stop(&v->rd_kick);
	rpcrdma__xbuf_spares_free(&v->rd_spares);
	rpcrdma__xrecv_pool_destroy(&v->pool);
	if (!v->partner) /* a partner borrows its owner's */
		rpcrdma__xdev_close(&v->dev);
	free(v);
}

static int s_listen(struct rpcrdma_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		    const struct rpcrdma_server_opts *opts, const struct rpcrdma__svc_cb *cb,
		    void *cb_ctx, struct rpcrdma__svc_transport **out)
{
	struct rpcrdma_prov_conn_attr attr = {0};
	struct xsvc *v;
	int rc = svc_open(loop, addr, addrlen, opts, cb, cb_ctx, &v);

	if (rc)
		return rc;
	/* A call needs a Send and a few Writes; its Reads go one by one.
	 * Reverse calls (RFC 8167) get a share of the send queue and
	 * receives for their replies (4.3.2). */
	attr.send_depth = 4 * v->credits + 16 + RPCRDMA__BC_SQ_SHARE;
	attr.recv_depth = v->credits + 4 + RPCRDMA__BC_CREDITS_MAX;
	rc = rpcrdma__provider_listen(v->dev.prov, addr, addrlen, 64, &attr, v, &v->lst);
	if (rc) {
		svc_close(v);
		return rc;
	}
	*out = (struct rpcrdma__svc_transport *)(void *)v;
	return 0;
}

static int s_worker(struct rpcrdma_loop *loop, const struct sockaddr *addr, socklen_t addrlen,
		    const struct rpcrdma_server_opts *opts, const struct rpcrdma__svc_cb *cb,
		    void *cb_ctx, struct rpcrdma__svc_transport **out)
{
	struct xsvc *v;
	int rc = svc_open(loop, addr, addrlen, opts, cb, cb_ctx, &v);

	if (!rc)
		*out = (struct rpcrdma__svc_transport *)(void *)v;
	return rc;
}

static int s_port(struct rpcrdma__svc_transport *t)
{
	struct xsvc *v = xsvc_of(t);
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int rc;

	if (!v->lst)
		return -ENOTCONN;
	rc = rpcrdma__provider_listener_addr(v->lst, &ss, &len);
	if (rc)
		return rc;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static int s_reply_begin(struct rpcrdma__sreq *sreq)
{
	struct xsreq *s = sreq ? sreq->tpriv : NULL;
	struct xsconn *sc;
	struct xsvc *v;
	uint64_t rc_cap = 0;
	size_t room;
	int rc;

	if (!s || s->state != SREQ_CORE)
		return -EINVAL;
	sc = s->conn;
	v = sc->svc;
	if (sc->c.state != RPCRDMA__XCONN_UP)
		return -ENOTCONN;
	/* Room for the largest reply we could send: inline, or as large as
	 * the Reply chunk, or what the core asks for (it then may learn
	 * it fits neither: ERR_CHUNK). */
	if (s->hdr.has_reply) {
		for (uint32_t i = 0; i < s->hdr.reply.nsegs; i++) {
			const struct rpcrdma_segment *seg =
			    rpcrdma_hdr_chunk_seg(&s->hdr, &s->hdr.reply, i);

			if (seg)
				rc_cap += seg->length;
		}
	}
	room = sc->c.thr.send_max;
	/* A Reply chunk is only an offer: what we reserve for it up front is
	 * capped by max_record, so a requester offering huge ones cannot
	 * make each call cost that much (a larger reply asks again). */
	if (rc_cap > v->max_call)
		rc_cap = v->max_call;
	if (rc_cap > room)
		room = rc_cap > RPCRDMA__XPRT_MAX_MSG ? RPCRDMA__XPRT_MAX_MSG : (size_t)rc_cap;
	if (sreq->reply_hint > room)
		room = sreq->reply_hint;
	if (room > RPCRDMA__XPRT_MAX_MSG)
		room = RPCRDMA__XPRT_MAX_MSG;
	rc = rpcrdma__xbuf_reserve(v->dev.prov, &s->rbuf, room);
	if (!rc)
		rc = rpcrdma__xbuf_reserve(v->dev.prov, &s->sbuf, v->inline_send);
	if (rc)
		return rc;
	/* A second reply_begin starts over. */
	rpcrdma__ddp_resp_release(&s->rddp);
	rpcrdma__ddp_resp_init(&s->rddp, v->dev.prov, &s->hdr, sreq->done != NULL);
	rpcrdma_xdr_init(&sreq->reply, s->rbuf.addr, room);
	rpcrdma_xdr_set_ddp(&sreq->reply, &s->rddp.base);
	s->begun = true;
	return 0;
}

/* Builds the reply header for @form in sbuf.  Returns 0 or an error. */
static int encode_reply_hdr(struct xsreq *s, enum rpcrdma_reply_form form)
{
	struct xsvc *v = s->conn->svc;
	struct rpcrdma_hdr *h = &v->hdr;
	const struct rpcrdma_hdr *call = &s->hdr;
	int n;

	/* Draft 5.3: the answer is in the version of the call. */
	rpcrdma_hdr_init(h, call->xid, call->vers, s->grant,
			 form == RPCRDMA_REPLY_LONG ? RPCRDMA_PROC_NOMSG : RPCRDMA_PROC_MSG);
	/* Every Write chunk of the call goes back, used or not; an unused
	 * one with zero lengths (RFC 8166 4.4.6.2). */
	for (uint32_t i = 0; i < call->nwrites; i++) {
		uint64_t len = 0;

		for (uint32_t k = 0; k < s->rddp.nresults; k++) {
			if (s->rddp.results[k].chunk == i)
				len = s->rddp.results[k].len;
		}
		n = fill_chunk(call, &call->writes[i], len, v->segs);
		if (n < 0)
			return n;
		n = rpcrdma_hdr_add_write(h, v->segs, (uint32_t)n);
		if (n)
			return n;
	}
	if (form == RPCRDMA_REPLY_LONG) {
		n = fill_chunk(call, &call->reply, s->reply_len, v->segs);
		if (n < 0)
			return n;
		n = rpcrdma_hdr_set_reply(h, v->segs, (uint32_t)n);
		if (n)
			return n;
	}
	n = rpcrdma_hdr_encode(h, s->sbuf.addr, s->sbuf.len);
	if (n < 0)
		return n;
	s->hdr_len = (size_t)n;
	return 0;
}

static int s_reply_send(struct rpcrdma__sreq *sreq)
{
	struct xsreq *s = sreq ? sreq->tpriv : NULL;
	enum rpcrdma_reply_form form;
	struct xsconn *sc;
	struct xsvc *v;
	size_t hdr_len = 0;
	int rc;

	if (!s || s->state != SREQ_CORE)
		return -EINVAL;
	sc = s->conn;
	v = sc->svc;
	if (sc->c.state != RPCRDMA__XCONN_UP) {
		sreq_release(s);
		return -ENOTCONN;
	}
	if (!s->begun || s->rddp.error) {
		/* No reply to send: the requester would wait for ever. */
		conn_close(sc);
		sreq_release(s);
		return -EINVAL;
	}
	s->reply_len = rpcrdma_xdr_pos(&sreq->reply);
	s->grant = rpcrdma__credits_grant(v->credits, s->hdr.credit);
	form = rpcrdma__plan_reply(&s->hdr, s->reply_len, &sc->c.thr, &hdr_len);
	switch (form) {
	case RPCRDMA_REPLY_INLINE:
		/*
		 * RDMA_MSG:
		 *  - the reply, DDP results taken out into the Write chunks,
		 *    fits the requester's receive buffer with its header.
		 */
		s->form = SFORM_INLINE;
		break;
	case RPCRDMA_REPLY_LONG:
		/*
		 * Long Reply, RDMA_NOMSG:
		 *  - too large to go inline, and the call offered a Reply
		 *    chunk that holds it (RFC 8166 4.5.3: MUST use it).
		 */
		s->form = SFORM_LONG;
		v->st.long_replies++;
		break;
	case RPCRDMA_REPLY_ERR_CHUNK:
	default:
		/*
		 * ERR_CHUNK:
		 *  - the reply fits neither inline nor the Reply chunk (or no
		 *    Reply chunk was offered): no RPC reply is possible for
		 *    this XID (RFC 8166 5.5.3).
		 */
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, sc->c.id, s->hdr.xid,
			       RPCRDMA_ERR_NOSPACE, s->reply_len,
			       "reply of %zu bytes fits neither inline nor a Reply chunk",
			       (size_t)s->reply_len);
		rpcrdma__ddp_resp_release(&s->rddp);
		s->state = SREQ_IDLE;
		send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return 0;
	}
	rc = encode_reply_hdr(s, form);
	if (rc || s->hdr_len + (s->form == SFORM_INLINE ? s->reply_len : 0) > sc->c.thr.send_max) {
		rpcrdma__ddp_resp_release(&s->rddp);
		s->state = SREQ_IDLE;
		send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return 0;
	}
	s->ops_needed = 1 + (s->form == SFORM_LONG ? 1 : 0);
	for (uint32_t i = 0; i < s->rddp.nresults; i++) {
		if (s->rddp.results[i].len)
			s->ops_needed++;
	}
	if (s->rddp.nresults)
		v->st.write_chunk_msgs++;
	if (s->rddp.nresults && RPCRDMA__TRACE_ON(RPCRDMA_TRACE_CHUNK)) {
		uint64_t n = 0;

		for (uint32_t i = 0; i < s->rddp.nresults; i++)
			n += s->rddp.results[i].len;
		rpcrdma__trace_emit(RPCRDMA_TRACE_CHUNK, RPCRDMA_TEV_WRITE_CHUNK, sc->c.id,
				    s->hdr.xid, s->rddp.nresults, (int64_t)n,
				    "reply fills %u Write chunks, %llu bytes", s->rddp.nresults,
				    (unsigned long long)n);
	}
	queue_tx(s);
	return 0;
}

static void s_reply_drop(struct rpcrdma__sreq *sreq)
{
	struct xsreq *s = sreq ? sreq->tpriv : NULL;
	struct xsconn *sc;

	if (!s || s->state != SREQ_CORE)
		return;
	sc = s->conn;
	sc->sreqs++;
	sreq_release(s);
	sc->sreqs--;
	/* Its read buffer went back: calls waiting for room may read. */
	after_sq(sc);
}

/* destroy: finish replies in progress, for at most this long. */
#define XSVC_FINISH_MS 1000

static bool replies_in_flight(const struct xsvc *v)
{
	for (const struct xsconn *sc = v->conns; sc; sc = sc->next) {
		if (sc->c.pc && sc->c.state == RPCRDMA__XCONN_UP && (sc->tx_head || sc->c.sq_used))
			return true;
	}
	return false;
}

static void s_destroy(struct rpcrdma__svc_transport *t)
{
	struct xsvc *v = xsvc_of(t);
	struct xsreq *s;
	struct xsconn *sc;

	if (!v)
		return;
	v->destroying = true;
	if (v->lst) {
		rpcrdma__provider_listener_close(v->lst);
		v->lst = NULL;
	}
	/* Replies already handed to the provider get their chance to leave;
	 * no callback reaches the core meanwhile (destroying). */
	for (int i = 0;
	     !v->partner && i < XSVC_FINISH_MS / 5 && replies_in_flight(v) && !v->dev.failed; i++) {
		struct pollfd pfd = {.fd = rpcrdma__provider_fd(v->dev.prov), .events = POLLIN};

		if (!rpcrdma__xdev_drain(&v->dev, 256))
			(void)poll(&pfd, 1, 5);
	}
	for (sc = v->conns; sc; sc = sc->next) {
		if (sc->bc)
			sc->bc_down(sc->bc);
		if (sc->c.pc && !v->partner)
			rpcrdma__provider_conn_destroy(sc->c.pc);
		sc->c.pc = NULL;
	}
	while ((s = v->all)) {
		void (*done)(void *) = s->sreq.done;

		sreq_unlink_all(v, s);
		if (s->r)
			rpcrdma__xrecv_put(&v->pool, s->r);
		sreq_free_bufs(s);
		/* The connections are gone, so nothing reads the results: the
		 * core may free them (transport.h: done exactly once). */
		if (done)
			done(s->sreq.done_ctx);
		free(s);
	}
	while ((sc = v->conns)) {
		v->conns = sc->next;
		rpcrdma__timer_stop(&sc->tick);
		hold_drop(sc);
		if (sc->admitted && v->cb->conn_release)
			v->cb->conn_release(v->cb_ctx);
		free(sc);
	}
	/* ORDER: after the last poll, before the instance closes (they
	 * deregister their memory). */
	rpcrdma__xdev_reap(&v->dev, true);
	svc_close(v);
}

static void s_stats(struct rpcrdma__svc_transport *t, struct rpcrdma_xprt_stats *out)
{
	*out = xsvc_of(t)->st;
}

struct rpcrdma_provider *rpcrdma__xprt_svc_provider(struct rpcrdma__svc_transport *t)
{
	return t ? xsvc_of(t)->dev.prov : NULL;
}

const struct rpcrdma__svc_transport_ops rpcrdma__rdma_svc_ops = {
    .name = "rdma",
    .listen = s_listen,
    .worker = s_worker,
    .port = s_port,
    .reply_begin = s_reply_begin,
    .reply_send = s_reply_send,
    .reply_drop = s_reply_drop,
    .destroy = s_destroy,
    .stats = s_stats,
};

/*
 * A client's callback responder (RFC 8167; backchannel.c): this engine on
 * the connection its owner, the client's requester (clnt.c), opened.  It
 * never posts receives: the owner keeps its reverse credits' worth posted
 * and copies each call-direction message here (rpcrdma__xsvc_partner_recv).
 * Its connection object lives from the owner's ESTABLISHED to the owner's
 * teardown (attach, detach); the provider connection stays the owner's.
 * Calls beyond the credits we grant are bounded by the pool's limit: a
 * server that ignores them loses the excess, not our memory.
 */
static const struct rpcrdma__xpartner_ops partner_ops;

int rpcrdma__xsvc_partner_create(struct rpcrdma__xdev *dev, uint32_t inline_send,
				 uint32_t inline_recv, uint32_t credits, bool refuse_chunks,
				 const struct rpcrdma__svc_cb *cb, void *cb_ctx,
				 struct rpcrdma__svc_transport **out)
{
	struct xsvc *v;

	if (!dev || !dev->prov || !cb || !cb->call || !out)
		return -EINVAL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->partner = true;
	v->self.ops = &partner_ops;
	v->refuse_chunks = refuse_chunks;
	v->cb = cb;
	v->cb_ctx = cb_ctx;
	/* The owner's instance, borrowed: never watched or closed here. */
	v->dev.loop = dev->loop;
	v->dev.prov = dev->prov;
	v->inline_send = inline_send;
	v->inline_recv = inline_recv;
	v->credits = credits ? credits : RPCRDMA__BC_CREDITS_DEFAULT;
	if (v->credits > RPCRDMA__BC_CREDITS_MAX)
		v->credits = RPCRDMA__BC_CREDITS_MAX;
	/* Reverse calls come in the forward direction's version (RFC 8167
	 * 5.1): One, or Two after negotiation. */
	v->vers_low = RPCRDMA_VERSION_ONE;
	v->vers_high = RPCRDMA_VERSION_TWO;
	rpcrdma__opt_registry_init(&v->opts);
	rpcrdma_hdr_limits_default(&v->lim);
	v->lim.vers_low = v->vers_low;
	v->lim.vers_high = v->vers_high;
	v->lim.max_hdr_size = v->inline_recv;
	rpcrdma__xrecv_pool_init(&v->pool, dev->prov, inline_recv, 2 * v->credits + 32);
	v->rd_spares.max_bytes = XSVC_RD_SPARES_MAX;
	{
		/* Reverse calls: the defaults, and the engine's largest message
		 * (a callback's size is the client's own business). */
		struct rpcrdma_server_opts dflt;

		memset(&dflt, 0, sizeof(dflt));
		rpcrdma__svc_bounds_of(&dflt, &v->b);
		v->max_call = RPCRDMA__XPRT_MAX_MSG;
		v->conn_read_budget = XSCONN_READ_CALLS * v->max_call;
		v->b.max_read_bytes = v->conn_read_budget;
	}
	*out = (struct rpcrdma__svc_transport *)(void *)v;
	return 0;
}

static struct xsvc *xsvc_of_partner(struct rpcrdma__xpartner *p)
{
	return (struct xsvc *)(void *)((char *)p - offsetof(struct xsvc, self));
}

static void partner_attach(struct rpcrdma__xpartner *p, const struct rpcrdma__xconn *owner)
{
	struct xsvc *v = xsvc_of_partner(p);
	struct xsconn *sc;

	if (v->partner_sc || v->destroying || !owner->pc)
		return;
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return; /* reverse calls are then dropped: rev_dropped */
	sc->svc = v;
	sc->c.dev = owner->dev;
	sc->c.pc = owner->pc;
	sc->c.gen = 1;
	sc->c.id = owner->id;
	sc->c.vers = owner->vers;
	sc->c.pool = &v->pool;
	sc->c.on_recv = on_recv;
	sc->c.st = &v->st;
	sc->c.owner = sc;
	sc->c.peer = owner->peer;
	sc->c.thr = owner->thr; /* RFC 8167 4.2 */
	/* The server, as reverse requester, announced no Send With
	 * Invalidate (it does not take it as a responder either). */
	sc->c.peer_invalidate = false;
	sc->c.sq_depth = owner->bc_sq_share ? owner->bc_sq_share : 1;
	sc->c.rd_depth = owner->pc->attr.read_depth ? owner->pc->attr.read_depth : 1;
	sc->c.state = RPCRDMA__XCONN_UP;
	sc->next = v->conns;
	if (v->conns)
		v->conns->prev = sc;
	v->conns = sc;
	v->partner_sc = sc;
}

static void partner_update(struct rpcrdma__xpartner *p, const struct rpcrdma__xconn *owner)
{
	struct xsvc *v = xsvc_of_partner(p);

	if (!v->partner_sc)
		return;
	v->partner_sc->c.vers = owner->vers;
	v->partner_sc->c.thr = owner->thr;
}

static void partner_detach(struct rpcrdma__xpartner *p, int err)
{
	struct xsvc *v = xsvc_of_partner(p);
	struct xsconn *sc = v->partner_sc;

	if (!sc)
		return;
	(void)err;
	v->partner_sc = NULL;
	conn_down(sc);
}

static void partner_recv(struct rpcrdma__xpartner *p, const uint8_t *buf, uint32_t len,
			 unsigned int flags)
{
	struct xsvc *v = xsvc_of_partner(p);
	struct xsconn *sc = v->partner_sc;
	struct rpcrdma__xrecv *r;

	if (!sc || sc->c.state != RPCRDMA__XCONN_UP || v->destroying || len > v->pool.size) {
		v->st.rev_dropped++;
		return;
	}
	r = rpcrdma__xrecv_get(&v->pool);
	if (!r) {
		v->st.rev_dropped++;
		return;
	}
	memcpy(r->buf, buf, len);
	r->len = len;
	r->conn = &sc->c;
	v->st.inline_recv_bytes += len;
	(void)flags;
	sc->sreqs++;
	handle_call(sc, r);
	sc->sreqs--;
	conn_try_free(sc);
}

static void partner_stats(struct rpcrdma__xpartner *p, struct rpcrdma_xprt_stats *out)
{
	rpcrdma__bc_fold_stats(out, &xsvc_of_partner(p)->st, false);
}

/* The client's callback responder as its owner (the requester) sees it. */
static const struct rpcrdma__xpartner_ops partner_ops = {
    .recv = partner_recv,
    .attach = partner_attach,
    .update = partner_update,
    .detach = partner_detach,
    .stats = partner_stats,
};

struct rpcrdma__xpartner *rpcrdma__xsvc_partner(struct rpcrdma__svc_transport *t)
{
	return &xsvc_of(t)->self;
}

void *rpcrdma__xsvc_req_conn(struct rpcrdma__sreq *sreq)
{
	struct xsreq *s = sreq ? sreq->tpriv : NULL;

	if (!s || !s->conn || s->conn->svc->partner || s->conn->c.state != RPCRDMA__XCONN_UP)
		return NULL;
	return s->conn;
}

void *rpcrdma__xsvc_conn_bc(void *conn)
{
	return conn ? ((struct xsconn *)conn)->bc : NULL;
}

int rpcrdma__xsvc_conn_bind(void *conn, struct rpcrdma__xpartner *partner, void (*down)(void *bc),
			    void *bc)
{
	struct xsconn *sc = conn;

	if (!partner) {
		sc->bc_req = NULL;
		sc->bc_down = NULL;
		sc->bc = NULL;
		sc->bc_recvs = 0;
		return 0;
	}
	if (sc->bc && sc->bc != bc)
		return -EBUSY;
	if (sc->c.state != RPCRDMA__XCONN_UP || !sc->c.pc)
		return -ENOTCONN;
	sc->bc = bc;
	sc->bc_down = down;
	sc->bc_req = partner;
	sc->bc_recvs = partner->ops->credits(partner);
	/* ORDER: the receives for the replies are posted before the first
	 * reverse call can leave (RFC 8167 4.3.2). */
	refill(sc);
	partner->ops->attach(partner, &sc->c);
	return 0;
}

struct rpcrdma__xdev *rpcrdma__xsvc_dev(struct rpcrdma__svc_transport *t)
{
	return &xsvc_of(t)->dev;
}

void rpcrdma__xsvc_inline(struct rpcrdma__svc_transport *t, uint32_t *send, uint32_t *recv)
{
	*send = xsvc_of(t)->inline_send;
	*recv = xsvc_of(t)->inline_recv;
}
