/*
 * xprt chaos: a stateful randomized hostile peer at the transport level,
 * part of xprt_test.c (whose raw helpers it reuses).  The decoders are
 * fuzzed alone (tests/fuzz); these cases drive the engine's state: many
 * messages on one connection, chunks aimed at memory the peer granted,
 * revoked or never had, credits overrun, connections cut mid-RDMA.
 *
 *   chaos_server: the raw peer as a requester against our responder.
 *   chaos_client: the raw peer as a responder against our requester.
 *
 * Each runs --seconds (default 15) from --seed (default: the clock; the
 * seed is printed, and --seed replays the choices, not the timing).  The
 * invariants: nothing crashes (run it under ASan too); every call ends
 * (reply, error, abort at its time-out, or its connection lost); our
 * server serves a well-behaved client byte for byte afterwards; grants and
 * connections return to zero; and no RDMA reaches a call's memory after
 * the call completed.
 */
#include <dirent.h>

#include "rpc/core.h"

static unsigned int chaos_seconds = 15;
static uint64_t chaos_seed;
static bool chaos_seed_set;
static uint64_t chaos_state;

static uint32_t crnd(void)
{
	chaos_state ^= chaos_state << 13;
	chaos_state ^= chaos_state >> 7;
	chaos_state ^= chaos_state << 17;
	return (uint32_t)(chaos_state >> 16);
}

/* True with probability @pct percent. */
static bool chance(unsigned int pct)
{
	return crnd() % 100 < pct;
}

static uint32_t pick(const uint32_t *v, size_t n)
{
	return v[crnd() % n];
}

#define PICK(...) pick((const uint32_t[]){__VA_ARGS__}, sizeof((uint32_t[]){__VA_ARGS__}) / 4)

static void chaos_start(const char *name)
{
	if (!chaos_seed_set)
		chaos_seed = (uint64_t)now_ms() ^ ((uint64_t)getpid() << 32);
	chaos_state = chaos_seed ? chaos_seed : 1;
	fprintf(stderr, "%s: seed %llu, %u s\n", name, (unsigned long long)chaos_seed,
		chaos_seconds);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* What is open, for the report when descriptors were left. */
static void dump_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char path[300], to[256];
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		n = readlink(path, to, sizeof(to) - 1);
		to[n > 0 ? n : 0] = 0;
		fprintf(stderr, "  fd %s -> %s\n", de->d_name, to);
	}
	if (d)
		closedir(d);
	if (getenv("CHAOS_SS")) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "ss -tanpe | grep pid=%d, >&2", (int)getpid());
		(void)!system(cmd);
	}
}

#define CHECK_FDS(fds0)                                                                            \
	do {                                                                                       \
		if (open_fds() != (fds0))                                                          \
			dump_fds();                                                                \
		CHECK_RC(open_fds(), fds0);                                                        \
	} while (0)

/* An XDR writer that counts past its room, so truncation is a choice. */
struct cw {
	uint8_t *b;
	size_t n, cap;
};

static void cw_u32(struct cw *w, uint32_t v)
{
	v = htobe32(v);
	if (w->n + 4 <= w->cap)
		memcpy(w->b + w->n, &v, 4);
	w->n += 4;
}

static void cw_seg(struct cw *w, const struct rpcrdma_segment *s)
{
	cw_u32(w, s->handle);
	cw_u32(w, s->length);
	cw_u32(w, (uint32_t)(s->offset >> 32));
	cw_u32(w, (uint32_t)s->offset);
}

static void cw_bytes(struct cw *w, const void *p, size_t n)
{
	if (w->n + n <= w->cap)
		memcpy(w->b + w->n, p, n);
	w->n += n;
}

/* Truncate, pad or flip a finished message, now and then. */
static size_t mangle(uint8_t *b, size_t n, size_t cap)
{
	unsigned int k = crnd() % 100;

	if (n > cap)
		n = cap;
	if (k < 6 && n)
		return crnd() % n;
	if (k < 10) {
		size_t pad = crnd() % 64;

		for (size_t i = 0; i < pad && n < cap; i++)
			b[n++] = (uint8_t)crnd();
	} else if (k < 15 && n >= 4) {
		size_t w = (crnd() % (n / 4)) * 4;
		uint32_t v = htobe32(PICK(0, 1, 2, 5, 0xffffffffu, 0x7fffffffu, crnd()));

		memcpy(b + w, &v, 4);
	}
	return n;
}

/*
 * The raw peer's own memory: grants it made (live or revoked), and a send
 * ring of its own, so that messages can exceed RAW_RSIZE.
 */
#define CH_MEM (256u << 10)
#define CH_GRANTS 24
#define CH_SLOT (32u << 10)
#define CH_SLOTS 16

struct chaos_peer {
	struct raw r;
	uint8_t *mem, *ring;
	struct rpcrdma_prov_mr *mr, *ring_mr;
	struct rpcrdma_prov_grant *g[CH_GRANTS];
	struct rpcrdma_segment seg[CH_GRANTS];
	bool live[CH_GRANTS];
	unsigned int ngrants, slot;
	unsigned int rma_posted;
};

static int peer_mem(struct chaos_peer *cp)
{
	if (!cp->mem) {
		cp->mem = malloc(CH_MEM);
		cp->ring = malloc((size_t)CH_SLOT * CH_SLOTS);
		if (!cp->mem || !cp->ring)
			return -ENOMEM;
		for (size_t i = 0; i < CH_MEM; i++)
			cp->mem[i] = (uint8_t)(i * 7);
	}
	CHECK_OK(rpcrdma__provider_reg_mr(cp->r.p, cp->mem, CH_MEM, &cp->mr));
	CHECK_OK(rpcrdma__provider_reg_mr(cp->r.p, cp->ring, (size_t)CH_SLOT * CH_SLOTS,
					  &cp->ring_mr));
	return 0;
}

/* The connection's memory goes with its provider instance (raw_close). */
static void peer_down(struct chaos_peer *cp)
{
	raw_close(&cp->r);
	cp->mr = cp->ring_mr = NULL;
	cp->ngrants = 0;
	cp->rma_posted = 0;
	memset(cp->live, 0, sizeof(cp->live));
}

static void peer_free(struct chaos_peer *cp)
{
	peer_down(cp);
	free(cp->mem);
	free(cp->ring);
	cp->mem = cp->ring = NULL;
}

static void peer_grant(struct chaos_peer *cp)
{
	unsigned int i = cp->ngrants < CH_GRANTS ? cp->ngrants++ : crnd() % CH_GRANTS;
	uint32_t len = PICK(1, 4, 100, 1000, 4096, 9000, 30000, 65536);
	uint32_t off = crnd() % (CH_MEM - len);
	struct rpcrdma_prov_rseg rs;

	if (cp->live[i])
		(void)rpcrdma__provider_revoke(cp->g[i], NULL);
	cp->live[i] = false;
	if (rpcrdma__provider_grant(cp->r.c, cp->mr, cp->mem + off, len,
				    RPCRDMA_PACCESS_REMOTE_READ | RPCRDMA_PACCESS_REMOTE_WRITE,
				    &cp->g[i], &rs))
		return;
	cp->seg[i] = (struct rpcrdma_segment){rs.handle, rs.length, rs.offset};
	cp->live[i] = true;
}

static void peer_revoke(struct chaos_peer *cp)
{
	unsigned int i;

	if (!cp->ngrants)
		return;
	i = crnd() % cp->ngrants;
	if (cp->live[i])
		(void)rpcrdma__provider_revoke(cp->g[i], NULL);
	cp->live[i] = false;
}

/* A segment for a chunk: granted memory, in bounds or not, revoked, never
 * granted, empty, huge, or wrapping 2^64. */
static struct rpcrdma_segment peer_seg(struct chaos_peer *cp, bool valid)
{
	struct rpcrdma_segment s = {crnd(), crnd() % 20000, (uint64_t)crnd() << 20};
	unsigned int k = valid ? 0 : crnd() % 10;

	if (cp->ngrants)
		s = cp->seg[crnd() % cp->ngrants];
	switch (k) {
	case 0: /* as granted (possibly revoked by now) */
		break;
	case 1:
		s.length = s.length / 2 + 1;
		s.offset += s.length / 4;
		break;
	case 2:
		s.length += PICK(1, 4, 4096, 1u << 20);
		break;
	case 3:
		s.offset = UINT64_MAX - crnd() % 64;
		break;
	case 4:
		s.handle = crnd();
		break;
	case 5:
		s.length = 0;
		break;
	case 6:
		s.length = PICK(0xffffffffu, 0x80000000u, 1u << 30, 1u << 24);
		break;
	case 7:
		s.offset += (uint64_t)s.length + PICK(0, 1, 4096);
		break;
	default: /* revoked or never granted: whatever this one is */
		break;
	}
	return s;
}

static int peer_send(struct chaos_peer *cp, const uint8_t *msg, size_t len)
{
	uint8_t *slot = cp->ring + (size_t)(cp->slot++ % CH_SLOTS) * CH_SLOT;
	struct rpcrdma_prov_sge sge = {.addr = slot, .length = (uint32_t)len, .mr = cp->ring_mr};

	if (!cp->r.c || !cp->r.up || !cp->ring_mr)
		return -ENOTCONN;
	if (len > CH_SLOT)
		len = CH_SLOT;
	memcpy(slot, msg, len);
	sge.length = (uint32_t)len;
	return rpcrdma__provider_post_send(cp->r.c, &sge, 1, 0, 0, (void *)(uintptr_t)0x1000);
}

/* Pumps for @ms, forgetting what the raw peer received (not looked at). */
static void chaos_pump(struct env *e, struct chaos_peer *cp, int ms, bool drain)
{
	int64_t until = now_ms() + ms;

	do {
		pump(e);
		if (drain && cp)
			cp->r.nmsgs = cp->r.taken = 0;
	} while (now_ms() < until);
}

/*
 * chaos_server: a requester that means harm.  The RPC message it carries
 * is the fake core's test call, or (chaos_core) a real ONC RPC call.
 */
static int (*chaos_body)(struct rpcrdma_xdr_stream *x, uint32_t xid, uint32_t pre, uint32_t arg,
			 uint32_t rddp, uint32_t rplain);

static int test_body(struct rpcrdma_xdr_stream *x, uint32_t xid, uint32_t pre, uint32_t arg,
		     uint32_t rddp, uint32_t rplain)
{
	return encode_test_call(x, xid, xid * 7, pre, arg, 0, rddp, rplain);
}
static void gen_chunk_lists(struct chaos_peer *cp, struct cw *w, bool valid, uint32_t body_len,
			    bool *want_reply_chunk)
{
	uint32_t nreads = valid ? (chance(30) ? 1 : 0) : PICK(0, 0, 1, 2, 3, 70);
	uint32_t nwrites = valid ? (chance(30) ? 1 : 0) : PICK(0, 0, 1, 2, 40);
	bool reply = valid ? *want_reply_chunk : chance(30);

	for (uint32_t i = 0; i < nreads; i++) {
		struct rpcrdma_segment s = peer_seg(cp, valid);
		uint32_t pos = valid ? 0 : PICK(0, 4, 24, 28, body_len, body_len + 4, 0xfffffffcu, crnd());

		if (valid && body_len >= 24)
			pos = 24;
		cw_u32(w, 1);
		cw_u32(w, pos);
		cw_seg(w, &s);
	}
	if (!valid && chance(3))
		return; /* the list never ends */
	cw_u32(w, 0);
	for (uint32_t i = 0; i < nwrites; i++) {
		uint32_t nsegs = valid ? 1 : PICK(0, 1, 2, 3, 17, 300, 0x10000000u);

		cw_u32(w, 1);
		cw_u32(w, nsegs);
		for (uint32_t k = 0; k < nsegs && k < 20; k++) {
			struct rpcrdma_segment s = peer_seg(cp, valid);

			cw_seg(w, &s);
		}
		if (nsegs > 20)
			break; /* a count the message does not hold */
	}
	cw_u32(w, 0);
	if (reply) {
		uint32_t nsegs = valid ? 1 : PICK(0, 1, 2, 5, 0xffffu);

		cw_u32(w, 1);
		cw_u32(w, nsegs);
		for (uint32_t k = 0; k < nsegs && k < 8; k++) {
			struct rpcrdma_segment s = peer_seg(cp, valid);

			cw_seg(w, &s);
		}
	} else {
		cw_u32(w, 0);
	}
	*want_reply_chunk = reply;
}

/* One message from a requester: valid now and then, mostly not. */
static size_t gen_call(struct chaos_peer *cp, uint8_t *buf, size_t cap, uint32_t xid)
{
	struct cw w = {buf, 0, cap};
	bool valid = chance(35);
	uint32_t vers = valid || chance(80) ? 1 : PICK(0, 2, 2, 3, 0xffffffffu);
	uint32_t credit = valid ? PICK(1, 8, 32) : PICK(0, 1, 2, 128, 0xffffffffu, crnd());
	uint32_t proc = valid ? RPCRDMA_PROC_MSG
			      : PICK(0, 0, 0, 0, 1, 1, 1, 2, 3, 4, 5, 6, 0xffffffffu);
	uint32_t pre = PICK(0, 4, 100, 2000), arg = PICK(0, 8, 500, 3000);
	uint32_t rddp = PICK(0, 0, 16, 5000, 20000, 1u << 20, 3u << 20); /* the fake core fills them */
	uint32_t rplain = PICK(0, 0, 8, 3000, 12000, 1u << 20);
	bool reply_chunk = rplain > 4000 || rddp > 4000;
	uint8_t body[8192];
	struct rpcrdma_xdr_stream x;
	uint32_t body_len = 0;

	if (valid && (rddp > 20000 || rplain > 12000))
		rddp = rplain = 100;
	if (!valid && chance(20))
		pre = PICK(6000, 9000, 20000); /* beyond the inline threshold */
	if (pre > 7000)
		pre = 7000; /* what body[] holds; the header pushes it over */
	rpcrdma_xdr_init(&x, body, sizeof(body));
	if (!chaos_body(&x, xid, pre, arg, rddp, rplain))
		body_len = (uint32_t)rpcrdma_xdr_pos(&x);
	if (!valid && chance(5) && body_len >= 8) {
		/* A reverse-direction reply (msg_type REPLY) with an XID no
		 * one sent. */
		uint32_t one = htobe32(1);

		memcpy(body + 4, &one, 4);
	}
	cw_u32(&w, xid);
	cw_u32(&w, vers);
	cw_u32(&w, credit);
	cw_u32(&w, proc);
	switch (proc) {
	case RPCRDMA_PROC_MSGP:
		cw_u32(&w, PICK(0, 4, 1024, 0xffffffffu));
		cw_u32(&w, PICK(0, 4, 1024, 0xffffffffu));
		/* fallthrough */
	case RPCRDMA_PROC_MSG:
	case RPCRDMA_PROC_NOMSG:
		gen_chunk_lists(cp, &w, valid, body_len, &reply_chunk);
		if (proc != RPCRDMA_PROC_NOMSG || chance(20))
			cw_bytes(&w, body, body_len);
		break;
	case RPCRDMA_PROC_DONE:
		break;
	case RPCRDMA_PROC_ERROR:
		cw_u32(&w, PICK(1, 2, 3, 0, 99));
		cw_u32(&w, PICK(1, 2, 0));
		cw_u32(&w, PICK(1, 2, 0xffffffffu));
		break;
	case RPCRDMA_PROC_OPTIONAL: {
		uint32_t len = PICK(0, 4, 8, 100, 0xffffffffu, 9000);

		cw_u32(&w, PICK(0, 1, 2, 0x100, 0xffffffffu, crnd()));
		cw_u32(&w, len);
		for (uint32_t i = 0; i < len / 4 && i < 64; i++)
			cw_u32(&w, PICK(0, 1, 2, 4096, 0xffffffffu, crnd()));
		break;
	}
	default:
		for (unsigned int i = crnd() % 8; i; i--)
			cw_u32(&w, crnd());
		break;
	}
	return valid ? (w.n < cap ? w.n : cap) : mangle(buf, w.n, cap);
}

/* RFC 8797 private data: ours, random bytes, none, or odd sizes. */
static size_t gen_pd(uint8_t *pd, size_t cap)
{
	unsigned int k = crnd() % 10;

	if (k < 6)
		return rpcrdma__xconn_private(PICK(1024, 4096, 8192), PICK(1024, 4096, 8192),
					      chance(50), pd, cap);
	if (k < 7)
		return 0;
	if (k < 9)
		return rpcrdma__xconn_private(PICK(0, 1, 3, 0xffffffffu, 256), PICK(0, 1, 1u << 31, 64),
					      chance(50), pd, cap);
	for (size_t i = 0; i < cap; i++)
		pd[i] = (uint8_t)crnd();
	return crnd() % (cap + 1);
}

/* A well-behaved client, byte for byte, across every message form. */
static int chaos_good_client(struct env *e, struct tserver *ts)
{
	struct tclient tc;
	static const uint32_t forms[][7] = {
	    {4, 0, 0, 0, 0, 0, 0},         {4, 9000, 0, 0, 0, 0, 0},
	    {20000, 0, 0, 0, 0, 0, 0},     {4, 0, 0, 20000, 0, 20000, 0},
	    {4, 100, 4, 0, 20000, 0, 40000}, {4, 9000, 4, 9000, 9000, 9000, 40000},
	};

	CHECK_OK(tclient_open(e, &tc, ts->port, NULL));
	ts->hold = false;
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
			const uint32_t *f = forms[i];
			struct tcall *c = tcall_new(&tc, f[0], f[1], f[2], f[3], f[4], f[5], f[6]);

			CHECK(c);
			CHECK_OK(tcall_roundtrip(&tc, c));
			CHECK_RC(c->grants_live_at_done, 0);
		}
	}
	tclient_close(&tc);
	return 0;
}

struct chaos_tally {
	unsigned int conns, refused, msgs, cuts;
};

/* Hostile connections to @port until the time is up; @ts (the fake core,
 * or NULL for the real one) holds and answers calls at random. */
static int chaos_requester(struct env *e, struct chaos_peer *cp, int port, struct tserver *ts,
			   struct chaos_tally *t)
{
	int64_t end = now_ms() + (int64_t)chaos_seconds * 1000;
	uint32_t xid = 1;
	static uint8_t msg[CH_SLOT];

	while (now_ms() < end) {
		uint8_t pd[RPCRDMA_CM_PRIVATE_SIZE + 8];
		size_t pdlen = gen_pd(pd, sizeof(pd));
		unsigned int bursts = 1 + crnd() % 6;

		CHECK_OK(raw_open(e, &cp->r, 0));
		if (raw_connect(&cp->r, port, pdlen ? pd : NULL, pdlen)) {
			t->refused++;
			peer_down(cp);
			continue;
		}
		t->conns++;
		CHECK_OK(peer_mem(cp));
		if (ts)
			ts->hold = chance(30);
		for (unsigned int i = 0; i < 4; i++)
			peer_grant(cp);
		for (unsigned int b = 0; b < bursts && cp->r.up && now_ms() < end; b++) {
			unsigned int n = 1 + crnd() % (chance(20) ? 60 : 12);

			for (unsigned int i = 0; i < n && cp->r.up; i++) {
				size_t len = gen_call(cp, msg, PICK(RAW_RSIZE, RAW_RSIZE, CH_SLOT),
						      xid++);

				(void)peer_send(cp, msg, len);
				t->msgs++;
				if (chance(15))
					peer_grant(cp);
				if (chance(10))
					peer_revoke(cp);
				if (chance(30))
					pump(e);
				if (chance(2)) {
					t->cuts++; /* mid-burst, its Reads in progress */
					break;
				}
			}
			chaos_pump(e, cp, (int)(crnd() % 30), true);
			/* The core answers (some of) what it held. */
			while (ts && ts->nheld && chance(70)) {
				unsigned int i = crnd() % ts->nheld;

				if (ts->held[i].sreq)
					(void)tserver_answer(ts, i);
				ts->held[i] = ts->held[--ts->nheld];
			}
			if (ts && ts->nheld > 400) {
				for (unsigned int i = 0; i < ts->nheld; i++)
					if (ts->held[i].sreq)
						(void)tserver_answer(ts, i);
				ts->nheld = 0;
			}
		}
		peer_down(cp);
		chaos_pump(e, NULL, 2, false);
		/* Answers to a connection that is gone go nowhere. */
		if (ts && chance(50)) {
			for (unsigned int i = 0; i < ts->nheld; i++)
				if (ts->held[i].sreq)
					(void)tserver_answer(ts, i);
			ts->nheld = 0;
		}
	}
	return 0;
}

/* Every hostile connection gone: none left, nothing granted. */
static int chaos_server_clean(struct env *e, struct rpcrdma_provider *sp)
{
	struct rpcrdma_prov_stats ps;
	int64_t dl = now_ms() + WAIT_MS;

	do {
		pump(e);
		rpcrdma__provider_stats(sp, &ps);
	} while ((ps.conns_live || ps.grants_live) && now_ms() < dl);
	if (ps.conns_live || ps.grants_live)
		fprintf(stderr, "chaos: seed %llu: %llu connections, %llu grants live\n",
			(unsigned long long)chaos_seed, (unsigned long long)ps.conns_live,
			(unsigned long long)ps.grants_live);
	CHECK_RC(ps.conns_live, 0);
	CHECK_RC(ps.grants_live, 0);
	return 0;
}

static int test_chaos_server(struct env *e)
{
	struct tserver ts;
	struct chaos_peer cp;
	struct rpcrdma_provider *sp;
	struct chaos_tally t = {0};
	int fds0 = open_fds();

	chaos_start("chaos_server");
	chaos_body = test_body;
	memset(&cp, 0, sizeof(cp));
	CHECK_OK(tserver_open(e, &ts, NULL));
	sp = rpcrdma__xprt_svc_provider(ts.t);
	CHECK_OK(chaos_requester(e, &cp, ts.port, &ts, &t));
	for (unsigned int i = 0; i < ts.nheld; i++)
		if (ts.held[i].sreq)
			(void)tserver_answer(&ts, i);
	ts.nheld = 0;
	fprintf(stderr, "chaos_server: %u connections (%u refused), %u messages, %u cut; "
			"server: %u calls, %llu bad msgs, %llu RDMA_ERRORs\n",
		t.conns, t.refused, t.msgs, t.cuts, ts.calls,
		(unsigned long long)sstats(&ts).bad_msgs,
		(unsigned long long)sstats(&ts).rdma_errors_sent);
	CHECK_OK(chaos_server_clean(e, sp));
	CHECK_OK(chaos_good_client(e, &ts));
	CHECK_OK(chaos_server_clean(e, sp));
	tserver_close(&ts);
	peer_free(&cp);
	chaos_pump(e, NULL, 20, false);
	CHECK_FDS(fds0);
	return 0;
}

/*
 * chaos_core: the same requester against the real RPC server core
 * (src/rpc), whose procedures decode DDP arguments and return results
 * by reference, released by the transport after their Writes.
 */
#define CORE_PROG 0x20000777u
#define CORE_VERS 1u
#define CORE_MAX (1u << 20)

struct core_blob {
	uint32_t len;
	uint8_t *data;
};

static int core_dec(struct rpcrdma_xdr_stream *x, void *o)
{
	struct core_blob *b = o;

	int rc;

	if (!b->data && !(b->data = malloc(CORE_MAX)))
		return -ENOMEM;
	rc = rpcrdma_xdr_decode_ddp(x, b->data, CORE_MAX, &b->len);
	if (rc) {
		/* GARBAGE_ARGS: the library frees no argument's memory. */
		free(b->data);
		b->data = NULL;
	}
	return rc;
}

static int core_enc(struct rpcrdma_xdr_stream *x, void *o)
{
	struct core_blob *b = o;

	return rpcrdma_xdr_encode_ddp(x, b->data, b->len);
}

static int core_echo(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct core_blob *in = args, *out = res;

	(void)req;
	*out = *in;
	in->data = NULL;
	return 0;
}

static void core_free(void *res)
{
	struct core_blob *b = res;

	free(b->data);
	b->data = NULL;
}

static int core_null(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return 0;
}

static const struct rpcrdma_svc_proc core_procs[] = {
    {core_null, NULL, 0, NULL, 0, NULL},
    {core_echo, core_dec, sizeof(struct core_blob), core_enc, sizeof(struct core_blob),
     core_free},
};

/* A real call: ECHO of @arg bytes mostly, NULL, a procedure or program
 * the server does not have. */
static int core_body(struct rpcrdma_xdr_stream *x, uint32_t xid, uint32_t pre, uint32_t arg,
		     uint32_t rddp, uint32_t rplain)
{
	uint8_t *a = malloc(arg + 1);
	int rc;

	(void)pre;
	(void)rddp;
	(void)rplain;
	if (!a)
		return -ENOMEM;
	fill(a, arg, xid);
	rc = rpcrdma_xdr_encode_u32(x, xid);
	rc = rc ? rc : rpcrdma_xdr_encode_u32(x, 0);
	rc = rc ? rc : rpcrdma_xdr_encode_u32(x, 2);
	rc = rc ? rc : rpcrdma_xdr_encode_u32(x, chance(95) ? CORE_PROG : crnd());
	rc = rc ? rc : rpcrdma_xdr_encode_u32(x, chance(95) ? CORE_VERS : 7);
	rc = rc ? rc : rpcrdma_xdr_encode_u32(x, PICK(1, 1, 1, 0, 9));
	for (int i = 0; i < 4; i++)
		rc = rc ? rc : rpcrdma_xdr_encode_u32(x, 0); /* AUTH_NONE, twice */
	rc = rc ? rc : rpcrdma_xdr_encode_opaque(x, a, arg);
	free(a);
	return rc;
}

static int core_good_client(struct env *e, int port)
{
	struct rpcrdma_client_opts co;
	struct rpcrdma_client *clnt;
	char ports[16];
	static const uint32_t sizes[] = {0, 4, 1000, 9000, 100000, CORE_MAX};

	snprintf(ports, sizeof(ports), "%d", port);
	rpcrdma_client_opts_default(&co);
	co.transport = RPCRDMA_TRANSPORT_RDMA;
	co.provider = test_provider;
	co.inline_send = co.inline_recv = TEST_INLINE;
	co.timeout_ms = 20000;
	CHECK_OK(rpcrdma_client_create(e->loop, test_addr, ports, CORE_PROG, CORE_VERS, &co,
				       &clnt));
	CHECK_OK(rpcrdma_client_connect(clnt));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (int ddp = 0; ddp < 2; ddp++) {
			struct core_blob in = {sizes[i], malloc(sizes[i] + 1)}, out = {0, NULL};
			struct rpcrdma_call call;
			uint8_t *land = ddp ? malloc(CORE_MAX) : NULL;

			CHECK(in.data && (!ddp || land));
			fill(in.data, in.len, (uint32_t)i + 99);
			memset(&call, 0, sizeof(call));
			call.proc = 1;
			call.encode_args = core_enc;
			call.args = &in;
			call.decode_res = core_dec;
			call.res = &out;
			call.max_reply = CORE_MAX + 1024;
			call.ddp_buf = land;
			call.ddp_len = ddp ? CORE_MAX : 0;
			if (rpcrdma_client_call(clnt, &call)) {
				fprintf(stderr, "chaos_core: ECHO %u: %s\n", sizes[i],
					rpcrdma_call_strerror(&call));
				return 1;
			}
			CHECK_RC(out.len, sizes[i]);
			CHECK_RC(mismatches(out.data, out.len, (uint32_t)i + 99), 0);
			free(in.data);
			free(out.data);
			free(land);
		}
	}
	rpcrdma_client_destroy(clnt);
	return 0;
}

static int test_chaos_core(struct env *e)
{
	struct rpcrdma_server_opts so;
	struct rpcrdma_server *srv;
	struct chaos_peer cp;
	struct rpcrdma_provider *sp;
	struct rpcrdma_xprt_stats st;
	struct chaos_tally t = {0};
	int fds0 = open_fds();

	chaos_start("chaos_core");
	chaos_body = core_body;
	memset(&cp, 0, sizeof(cp));
	rpcrdma_server_opts_default(&so);
	so.transport = RPCRDMA_TRANSPORT_RDMA;
	so.provider = test_provider;
	so.inline_send = so.inline_recv = TEST_INLINE;
	CHECK_OK(rpcrdma_server_create(e->loop, test_addr, "0", &so, &srv));
	CHECK_OK(rpcrdma_server_register(srv, CORE_PROG, CORE_VERS, core_procs, 2));
	sp = rpcrdma__xprt_svc_provider(rpcrdma__server_transport(srv));
	CHECK_OK(chaos_requester(e, &cp, rpcrdma_server_port(srv), NULL, &t));
	CHECK_OK(rpcrdma_server_stats(srv, &st));
	fprintf(stderr, "chaos_core: %u connections (%u refused), %u messages, %u cut; "
			"server: %llu calls, %llu bad msgs, %llu RDMA_ERRORs\n",
		t.conns, t.refused, t.msgs, t.cuts, (unsigned long long)st.calls_received,
		(unsigned long long)st.bad_msgs, (unsigned long long)st.rdma_errors_sent);
	CHECK_OK(chaos_server_clean(e, sp));
	CHECK_OK(core_good_client(e, rpcrdma_server_port(srv)));
	CHECK_OK(chaos_server_clean(e, sp));
	rpcrdma_server_destroy(srv);
	peer_free(&cp);
	chaos_pump(e, NULL, 20, false);
	CHECK_FDS(fds0);
	return 0;
}

/*
 * chaos_client: a responder that means harm.
 */
#define CH_CALL_MS 400

/* The responder answers real ONC RPC calls (chaos_rclient), not the fake
 * core's test calls. */
static bool chaos_rpc_replies;

struct chaos_call {
	struct tcall *c;
	int64_t deadline;
	bool aborted;
	struct rpcrdma_hdr h; /* as sent, for the probe after completion */
	bool have_h;
	uint8_t *snap;
};

struct chaos_client {
	struct env *e;
	struct chaos_peer cp;
	struct tclient tc;
	struct chaos_call calls[64];
	unsigned int ncalls;
	uint8_t *scratch;
	struct rpcrdma_prov_mr *scratch_mr;
	unsigned int replies, errors, silent, probes, probe_fails, cuts, timeouts, sent;
	unsigned int violations;
};

static struct chaos_call *cc_find(struct chaos_client *cc, uint32_t xid)
{
	for (unsigned int i = 0; i < cc->ncalls; i++) {
		if (cc->calls[i].c && cc->calls[i].c->req.xid == xid)
			return &cc->calls[i];
	}
	return NULL;
}

/* Waits for the raw peer's RMA to settle; false if the connection died. */
static bool rma_settle(struct chaos_client *cc)
{
	struct raw *r = &cc->cp.r;
	int64_t dl = now_ms() + 2000;

	while (r->rma_done < cc->cp.rma_posted && !r->down && now_ms() < dl)
		pump(cc->e);
	return r->rma_done >= cc->cp.rma_posted && !r->down;
}

static void rma(struct chaos_client *cc, bool write, const struct rpcrdma_segment *s, uint32_t len,
		uint32_t seed)
{
	struct rpcrdma_prov_sge sge = {.addr = cc->scratch, .length = len, .mr = cc->scratch_mr};
	struct rpcrdma_prov_rseg rs = {s->handle, len, s->offset};
	int rc;

	if (!len || len > CH_MEM || !cc->cp.r.up || !cc->scratch_mr)
		return;
	if (write)
		fill(cc->scratch, len, seed);
	rc = write ? rpcrdma__provider_post_write(cc->cp.r.c, &sge, 1, &rs, 1, (void *)0x2000)
		   : rpcrdma__provider_post_read(cc->cp.r.c, &sge, 1, &rs, 1, (void *)0x2000);
	if (!rc)
		cc->cp.rma_posted++;
}

static void send_hdr(struct chaos_client *cc, struct rpcrdma_hdr *h, const uint8_t *body,
		     size_t blen, bool mangled)
{
	static uint8_t buf[CH_SLOT];
	int n = rpcrdma_hdr_encode(h, buf, sizeof(buf));
	size_t len;

	if (n < 0 || (size_t)n + blen > sizeof(buf))
		return;
	if (blen)
		memcpy(buf + n, body, blen);
	len = (size_t)n + blen;
	if (mangled)
		len = mangle(buf, len, sizeof(buf));
	(void)peer_send(&cc->cp, buf, len);
}

/* The reply to @h, in some shape. */
static void respond(struct chaos_client *cc, const struct rpcrdma_hdr *call,
		    const uint8_t *payload, size_t plen)
{
	struct rpcrdma_hdr h;
	uint32_t xid = call->xid, seed = 0, rddp = 0, rplain = 0, magic = 0;
	uint8_t body[CH_SLOT / 2];
	struct rpcrdma_xdr_stream x;
	unsigned int k = crnd() % 100;
	bool early = false, wrote = false;
	uint32_t credit = PICK(1, 4, 8, 16, 32);

	/* What the call asks for: its seed and result sizes. */
	if (plen >= 20) {
		uint32_t w[5];

		memcpy(w, payload, 20);
		magic = be32toh(w[1]);
		seed = be32toh(w[2]);
		rddp = be32toh(w[3]);
		rplain = be32toh(w[4]);
	} else {
		struct chaos_call *ch = cc_find(cc, xid);

		if (ch) {
			seed = ch->c->seed;
			rddp = ch->c->rddp_len;
			rplain = ch->c->rplain_len;
			magic = TEST_MAGIC;
		}
	}
	(void)magic;
	if (chaos_rpc_replies) {
		/* An ECHO (chaos_rclient): its result is as long as its
		 * argument, read through a chunk or found inline. */
		uint32_t len = 0;

		if (call->nreads)
			len = call->reads[call->nreads - 1].target.length;
		else if (plen >= 44)
			memcpy(&len, payload + 40, 4), len = be32toh(len);
		rddp = len > 65536 ? 65536 : len;
		rplain = 0;
	}
	if (k < 6) { /* silence: the call times out */
		cc->silent++;
		return;
	}
	if (k < 9) { /* cut, with the call's memory granted */
		cc->cuts++;
		peer_down(&cc->cp);
		return;
	}
	if (k < 20) {
		rpcrdma_hdr_init(&h, chance(50) ? xid : crnd(), PICK(1, 1, 2, 3), credit,
				 RPCRDMA_PROC_ERROR);
		h.err = PICK(1, 2, 3);
		h.vers_low = PICK(1, 2, 0);
		h.vers_high = PICK(1, 2, 0xffffffffu);
		send_hdr(cc, &h, NULL, 0, chance(20));
		cc->errors++;
		return;
	}
	/* Pull the call's Read chunks, as a responder would (or not wait). */
	early = chance(15);
	for (uint32_t i = 0; i < call->nreads; i++) {
		if (chance(90))
			rma(cc, false, &call->reads[i].target, call->reads[i].target.length, 0);
	}
	if (!early)
		(void)rma_settle(cc);
	/* Push the result into the Write chunk: right, or with a length or
	 * an offset of its own. */
	if (call->nwrites && rddp && chance(90)) {
		struct rpcrdma_segment s = call->segs[call->writes[0].first];
		uint32_t len = rddp < s.length ? rddp : s.length;

		if (chance(10))
			len = s.length + PICK(1, 4, 4096);
		if (chance(5))
			s.offset += PICK(1, 4096, 0x100000);
		rma(cc, true, &s, len, seed ^ 4);
		wrote = true;
		if (!early)
			(void)rma_settle(cc);
	}
	rpcrdma_hdr_init(&h, xid, 1, credit, RPCRDMA_PROC_MSG);
	if (k < 25)
		h.xid = crnd(); /* unknown */
	if (k >= 25 && k < 30)
		h.proc = PICK(2, 3, 5, 1);
	if (k >= 30 && k < 35)
		h.credit = PICK(0, 0xffffffffu, 1u << 20);
	if (k >= 35 && k < 38)
		h.vers = 2;
	for (uint32_t i = 0; i < call->nwrites && h.proc != 2 && h.proc != 5; i++) {
		struct rpcrdma_segment segs[16];
		uint32_t n = call->writes[i].nsegs < 16 ? call->writes[i].nsegs : 16;
		uint64_t left = i == 0 && wrote ? rddp : 0;

		for (uint32_t s = 0; s < n; s++) {
			segs[s] = call->segs[call->writes[i].first + s];
			segs[s].length = left < segs[s].length ? (uint32_t)left : segs[s].length;
			left -= segs[s].length;
		}
		if (chance(8))
			segs[0].length += PICK(1, 4096, 0x7fffffffu); /* more than granted */
		if (chance(3))
			segs[0].handle ^= 1;
		(void)rpcrdma_hdr_add_write(&h, segs, n);
	}
	if (h.proc == 5) {
		h.vers = 2;
		h.opttype = crnd();
		h.optinfo = body;
		h.optinfo_len = 0;
	}
	rpcrdma_xdr_init(&x, body, sizeof(body));
	(void)rpcrdma_xdr_encode_u32(&x, xid);
	(void)rpcrdma_xdr_encode_u32(&x, chaos_rpc_replies ? 1 : 0);
	if (chaos_rpc_replies) {
		/* MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS */
		for (int i = 0; i < 4; i++)
			(void)rpcrdma_xdr_encode_u32(&x, 0);
	}
	if (wrote || rddp > 4000) {
		(void)rpcrdma_xdr_encode_u32(&x, rddp);
	} else {
		uint8_t *d = malloc(rddp + 1);

		if (d) {
			fill(d, rddp, seed ^ 4);
			(void)rpcrdma_xdr_encode_opaque(&x, d, rddp);
			free(d);
		}
	}
	if (chaos_rpc_replies) {
		/* the ECHO has no plain part */
	} else if (rplain <= 2000) {
		uint8_t *p = malloc(rplain + 1);

		if (p) {
			fill(p, rplain, seed ^ 5);
			(void)rpcrdma_xdr_encode_opaque(&x, p, rplain);
			free(p);
		}
	} else {
		(void)rpcrdma_xdr_encode_u32(&x, rplain); /* claims more than it has */
	}
	if (call->has_reply && chance(50) && h.proc == RPCRDMA_PROC_MSG) {
		/* A Long Reply through the Reply chunk: written right, or
		 * beyond it. */
		struct rpcrdma_segment s = call->segs[call->reply.first];
		uint32_t len = (uint32_t)rpcrdma_xdr_pos(&x);

		if (chance(15))
			len = s.length + PICK(1, 100);
		if (len <= s.length || chance(30)) {
			memcpy(cc->scratch, body, rpcrdma_xdr_pos(&x));
			if (len <= CH_MEM && cc->cp.r.up && cc->scratch_mr) {
				struct rpcrdma_prov_sge sge = {
				    .addr = cc->scratch, .length = len, .mr = cc->scratch_mr};
				struct rpcrdma_prov_rseg rs = {s.handle, len, s.offset};

				if (!rpcrdma__provider_post_write(cc->cp.r.c, &sge, 1, &rs, 1,
								  (void *)0x2000))
					cc->cp.rma_posted++;
			}
			h.proc = RPCRDMA_PROC_NOMSG;
			s.length = len;
			(void)rpcrdma_hdr_set_reply(&h, &s, 1);
			if (!early)
				(void)rma_settle(cc);
			send_hdr(cc, &h, NULL, 0, chance(5));
			cc->replies++;
			return;
		}
	}
	send_hdr(cc, &h, body, rpcrdma_xdr_pos(&x), chance(10));
	if (chance(5))
		send_hdr(cc, &h, body, rpcrdma_xdr_pos(&x), false); /* duplicate */
	if (chance(3)) {
		/* A reverse-direction call with an XID of its own. */
		rpcrdma_hdr_init(&h, crnd(), 1, 1, RPCRDMA_PROC_MSG);
		rpcrdma_xdr_init(&x, body, sizeof(body));
		(void)rpcrdma_xdr_encode_u32(&x, h.xid);
		(void)rpcrdma_xdr_encode_u32(&x, 0);
		(void)rpcrdma_xdr_encode_u32(&x, 2);
		(void)rpcrdma_xdr_encode_u32(&x, crnd());
		(void)rpcrdma_xdr_encode_u32(&x, 1);
		(void)rpcrdma_xdr_encode_u32(&x, 0);
		send_hdr(cc, &h, body, rpcrdma_xdr_pos(&x), chance(30));
	}
	cc->replies++;
}

/*
 * After a call completed, reach for its memory: every attempt must fail
 * (an RMA error, or the connection cut), and nothing may land.
 */
static int probe(struct chaos_client *cc, struct chaos_call *ch)
{
	struct raw *r = &cc->cp.r;
	const struct rpcrdma_segment *s = NULL;
	bool write = false;
	unsigned int errs0 = r->rma_errors, done0;

	if (!ch->have_h || !r->up || !rma_settle(cc))
		return 0;
	if (ch->h.nwrites && ch->c->ddp_buf && chance(60)) {
		s = &ch->h.segs[ch->h.writes[0].first];
		write = true;
	} else if (ch->h.nreads) {
		s = &ch->h.reads[0].target;
	} else if (ch->h.has_reply) {
		s = &ch->h.segs[ch->h.reply.first];
		write = chance(50);
	}
	if (!s || !s->length)
		return 0;
	if (write && ch->c->ddp_buf)
		memcpy(ch->snap, ch->c->ddp_buf, ch->c->ddp_cap);
	done0 = r->rma_done;
	errs0 = r->rma_errors;
	cc->probes++;
	rma(cc, write, s, s->length < 64 ? s->length : 64, 0xabcd);
	{
		int64_t dl = now_ms() + 2000;

		while (r->rma_done == done0 && !r->down && now_ms() < dl)
			pump(cc->e);
		/* A Write completes when sent: its target's answer may come
		 * after. */
		for (dl = now_ms() + 100; !r->down && now_ms() < dl;)
			pump(cc->e);
	}
	if (r->rma_done > done0 && r->rma_errors == errs0 && !r->down) {
		fprintf(stderr, "chaos_client: seed %llu: an RDMA %s of call %08x's memory "
				"succeeded after the call completed\n",
			(unsigned long long)chaos_seed, write ? "Write" : "Read", ch->c->req.xid);
		cc->violations++;
	}
	cc->probe_fails++;
	if (write && ch->c->ddp_buf && memcmp(ch->snap, ch->c->ddp_buf, ch->c->ddp_cap)) {
		fprintf(stderr, "chaos_client: seed %llu: call %08x's buffer changed after it "
				"completed\n",
			(unsigned long long)chaos_seed, ch->c->req.xid);
		cc->violations++;
	}
	return 0;
}

static void new_call(struct chaos_client *cc)
{
	struct chaos_call *ch;
	uint32_t arg = PICK(0, 8, 100, 9000, 30000), pre = PICK(0, 4, 1000, 3000, 12000);
	uint32_t rddp = PICK(0, 0, 100, 10000), rplain = PICK(0, 16, 1500, 12000);
	size_t cap = rddp && chance(70) ? PICK(rddp, rddp, rddp / 2 + 1, 65536) : 0;
	size_t max_reply = chance(50) ? 0 : PICK(4096, 40000, 100000);
	int rc;

	if (cc->ncalls >= sizeof(cc->calls) / sizeof(cc->calls[0]))
		return;
	ch = &cc->calls[cc->ncalls];
	memset(ch, 0, sizeof(*ch));
	ch->c = tcall_new(&cc->tc, pre, arg, 0, rddp, rplain, cap, max_reply);
	if (!ch->c)
		return;
	ch->snap = malloc(cap + 1);
	cc->ncalls++;
	rc = tcall_send(&cc->tc, ch->c);
	ch->deadline = now_ms() + CH_CALL_MS;
	if (rc) {
		ch->c->state = TC_DONE; /* refused at once (no credit, no room) */
		ch->aborted = true;
	} else {
		cc->sent++;
	}
}

/* The core's clock: a call past its time-out is aborted. */
static void expire(struct chaos_client *cc)
{
	int64_t now = now_ms();

	for (unsigned int i = 0; i < cc->ncalls; i++) {
		struct chaos_call *ch = &cc->calls[i];

		if (ch->c->state == TC_SENT && now >= ch->deadline) {
			(void)rpcrdma__rdma_clnt_ops.call_abort(cc->tc.t, &ch->c->req);
			ch->c->state = TC_DONE;
			ch->aborted = true;
			cc->timeouts++;
		} else if (ch->c->state == TC_NEW && !ch->aborted) {
			/* Its connection went; the core would send it again. */
			ch->c->state = TC_DONE;
			ch->aborted = true;
		}
	}
}

/* Takes the calls the raw responder received, and answers each somehow. */
static void serve(struct chaos_client *cc)
{
	struct raw *r = &cc->cp.r;

	while (r->up && r->taken < r->nmsgs) {
		struct raw_msg *m = &r->msgs[r->taken++];
		struct rpcrdma_hdr_fault f;
		struct rpcrdma_hdr *h = malloc(sizeof(*h));
		struct chaos_call *ch;

		if (!h)
			return;
		if (rpcrdma_hdr_decode(m->data, m->len, NULL, h, &f) == 0) {
			ch = cc_find(cc, h->xid);
			if (ch && !ch->have_h) {
				ch->h = *h;
				ch->have_h = true;
			}
			respond(cc, h, m->data + h->hdr_len, h->payload_len);
		}
		free(h);
	}
	if (r->taken == r->nmsgs)
		r->taken = r->nmsgs = 0;
}

static int chaos_client_round(struct chaos_client *cc)
{
	struct env *e = cc->e;
	struct rpcrdma_client_opts co;
	uint8_t pd[RPCRDMA_CM_PRIVATE_SIZE + 8];
	int port, rc;
	int64_t until = now_ms() + 200 + crnd() % 1500;

	CHECK_OK(raw_open(e, &cc->cp.r, 0));
	if (chance(5)) {
		cc->cp.r.no_pd = true;
	} else {
		size_t n = gen_pd(pd, sizeof(pd));

		cc->cp.r.accept_pd = pd;
		cc->cp.r.accept_pdlen = n;
		cc->cp.r.no_pd = n == 0;
	}
	CHECK_OK(raw_listen(&cc->cp.r, &port));
	memset(&co, 0, sizeof(co));
	co.inline_send = co.inline_recv = TEST_INLINE;
	co.max_vers = chance(20) ? 2 : 1;
	rc = tclient_open(e, &cc->tc, port, &co);
	if (rc || !cc->cp.r.c) {
		tclient_close(&cc->tc);
		peer_down(&cc->cp);
		return 0;
	}
	WAIT(e, cc->cp.r.up || cc->cp.r.down);
	if (cc->cp.r.up) {
		CHECK_OK(peer_mem(&cc->cp));
		CHECK_OK(rpcrdma__provider_reg_mr(cc->cp.r.p, cc->scratch, CH_MEM, &cc->scratch_mr));
	}
	cc->ncalls = 0;
	while (now_ms() < until) {
		unsigned int outstanding = 0;

		for (unsigned int i = 0; i < cc->ncalls; i++)
			outstanding += cc->calls[i].c->state == TC_SENT;
		if (cc->tc.up && outstanding < 1 + crnd() % 8 && chance(40))
			new_call(cc);
		pump(e);
		if (cc->cp.r.up)
			serve(cc);
		expire(cc);
		for (unsigned int i = 0; i < cc->ncalls && cc->cp.r.up; i++) {
			struct chaos_call *ch = &cc->calls[i];

			if (ch->c->state == TC_DONE && !ch->aborted && ch->have_h && chance(10)) {
				CHECK_OK(probe(cc, ch));
				ch->have_h = false;
			}
		}
		if (!cc->tc.up)
			break;
	}
	/* The rest time out. */
	{
		int64_t dl = now_ms() + CH_CALL_MS + 500;
		bool open = true;

		while (open && now_ms() < dl) {
			pump(e);
			if (cc->cp.r.up)
				serve(cc);
			expire(cc);
			open = false;
			for (unsigned int i = 0; i < cc->ncalls; i++)
				open |= cc->calls[i].c->state == TC_SENT;
		}
		for (unsigned int i = 0; i < cc->ncalls; i++) {
			if (cc->calls[i].c->state == TC_SENT) {
				fprintf(stderr, "chaos_client: seed %llu: call %08x still out\n",
					(unsigned long long)chaos_seed, cc->calls[i].c->req.xid);
				cc->violations++;
			}
		}
	}
	/* Nothing in flight: nothing of ours may stay granted. */
	if (cc->tc.t) {
		struct rpcrdma_provider *p = rpcrdma__xprt_clnt_provider(cc->tc.t);
		int64_t dl = now_ms() + 3000;

		while (grants_live(p) && now_ms() < dl)
			chaos_pump(e, &cc->cp, 1, true);
		if (grants_live(p)) {
			fprintf(stderr, "chaos_client: seed %llu: %llu grants live, no call out\n",
				(unsigned long long)chaos_seed, (unsigned long long)grants_live(p));
			cc->violations++;
		}
	}
	if (cc->tc.disconnects && cc->tc.grants_live_at_disconnect) {
		fprintf(stderr, "chaos_client: seed %llu: %llu grants live at disconnect\n",
			(unsigned long long)chaos_seed,
			(unsigned long long)cc->tc.grants_live_at_disconnect);
		cc->violations++;
	}
	for (unsigned int i = 0; i < cc->ncalls; i++)
		free(cc->calls[i].snap);
	cc->ncalls = 0;
	tclient_close(&cc->tc);
	cc->scratch_mr = NULL;
	peer_down(&cc->cp);
	return 0;
}

static int test_chaos_client(struct env *e)
{
	struct chaos_client *cc = calloc(1, sizeof(*cc));
	struct tserver ts;
	int64_t end;
	unsigned int rounds = 0;
	int fds0 = open_fds();

	CHECK(cc);
	chaos_start("chaos_client");
	cc->e = e;
	/* Zeroed: a Long Reply written past its body sends what lies beyond. */
	cc->scratch = calloc(1, CH_MEM);
	CHECK(cc->scratch);
	end = now_ms() + (int64_t)chaos_seconds * 1000;
	while (now_ms() < end) {
		CHECK_OK(chaos_client_round(cc));
		rounds++;
	}
	fprintf(stderr, "chaos_client: %u rounds, %u calls sent, %u replies, %u errors, "
			"%u silent, %u cut, %u timed out, %u probes\n",
		rounds, cc->sent, cc->replies, cc->errors, cc->silent, cc->cuts, cc->timeouts,
		cc->probes);
	CHECK_RC(cc->violations, 0);

	/* A correct server, afterwards, for the same kind of client. */
	CHECK_OK(tserver_open(e, &ts, NULL));
	CHECK_OK(chaos_good_client(e, &ts));
	tserver_close(&ts);
	peer_free(&cc->cp);
	free(cc->scratch);
	free(cc);
	chaos_pump(e, NULL, 20, false);
	CHECK_FDS(fds0);
	return 0;
}

/*
 * chaos_rclient: the hostile responder against the real client core
 * (public API): every call completes, by its reply, an error or its own
 * time-out, and none later than that time-out allows.
 */
struct rcall {
	struct rpcrdma_call call;
	struct core_blob in, out;
	uint8_t *land;
	int64_t started, limit, ended;
	bool done;
};

static void rcall_done(struct rpcrdma_call *call, void *ctx)
{
	struct rcall *rc = ctx;

	(void)call;
	rc->done = true;
	rc->ended = now_ms();
}

static int test_chaos_rclient(struct env *e)
{
	struct chaos_client *cc = calloc(1, sizeof(*cc));
	int64_t end;
	unsigned int rounds = 0, calls = 0, ok = 0, late = 0;
	int fds0 = open_fds();

	CHECK(cc);
	chaos_start("chaos_rclient");
	chaos_rpc_replies = true;
	cc->e = e;
	/* Zeroed: a Long Reply written past its body sends what lies beyond. */
	cc->scratch = calloc(1, CH_MEM);
	CHECK(cc->scratch);
	end = now_ms() + (int64_t)chaos_seconds * 1000;
	while (now_ms() < end) {
		struct rpcrdma_client_opts co;
		struct rpcrdma_client *clnt;
		struct rcall rcs[24];
		unsigned int n = 1 + crnd() % 24;
		uint8_t pd[RPCRDMA_CM_PRIVATE_SIZE + 8];
		char ports[16];
		int port;
		int64_t dl;
		bool open;

		rounds++;
		CHECK_OK(raw_open(e, &cc->cp.r, 0));
		{
			size_t pn = gen_pd(pd, sizeof(pd));

			cc->cp.r.accept_pd = pd;
			cc->cp.r.accept_pdlen = pn;
			cc->cp.r.no_pd = pn == 0;
		}
		CHECK_OK(raw_listen(&cc->cp.r, &port));
		snprintf(ports, sizeof(ports), "%d", port);
		rpcrdma_client_opts_default(&co);
		co.transport = RPCRDMA_TRANSPORT_RDMA;
		co.provider = test_provider;
		co.inline_send = co.inline_recv = TEST_INLINE;
		co.timeout_ms = (int)PICK(200, 400, 800);
		co.retries = PICK(0, 1, 2);
		co.max_vers = chance(20) ? 2 : 1;
		CHECK_OK(rpcrdma_client_create(e->loop, test_addr, ports, CORE_PROG, CORE_VERS, &co,
					       &clnt));
		memset(rcs, 0, sizeof(rcs));
		for (unsigned int i = 0; i < n; i++) {
			struct rcall *r = &rcs[i];
			uint32_t len = PICK(0, 4, 1000, 9000, 40000);

			r->in.len = len;
			r->in.data = malloc(len + 1);
			CHECK(r->in.data);
			fill(r->in.data, len, i);
			if (chance(50)) {
				r->land = malloc(65536);
				r->call.ddp_buf = r->land;
				r->call.ddp_len = 65536;
			}
			r->call.proc = 1;
			r->call.encode_args = core_enc;
			r->call.args = &r->in;
			r->call.decode_res = core_dec;
			r->call.res = &r->out;
			r->call.max_reply = chance(50) ? 0 : 100000;
			r->call.timeout_ms = chance(30) ? (int)PICK(100, 300) : 0;
			r->call.done = rcall_done;
			r->call.ctx = r;
			r->started = now_ms();
			/* Its time-out for each try, a try per connection lost. */
			r->limit = r->started +
				   (int64_t)(r->call.timeout_ms ? r->call.timeout_ms : co.timeout_ms) *
				       (co.retries + 1) +
				   1500;
			if (rpcrdma_client_call_async(clnt, &r->call)) {
				r->done = true;
				r->ended = r->started;
			}
			calls++;
		}
		dl = now_ms() + 6000 + (int64_t)co.timeout_ms * (co.retries + 1);
		do {
			pump(e);
			if (cc->cp.r.up && !cc->scratch_mr) {
				CHECK_OK(peer_mem(&cc->cp));
				CHECK_OK(rpcrdma__provider_reg_mr(cc->cp.r.p, cc->scratch, CH_MEM,
								  &cc->scratch_mr));
			}
			if (cc->cp.r.up && cc->scratch_mr)
				serve(cc);
			else if (cc->cp.r.p)
				cc->cp.r.nmsgs = cc->cp.r.taken = 0;
			open = false;
			for (unsigned int i = 0; i < n; i++)
				open |= !rcs[i].done;
		} while (open && now_ms() < dl);
		for (unsigned int i = 0; i < n; i++) {
			struct rcall *r = &rcs[i];

			if (!r->done) {
				fprintf(stderr, "chaos_rclient: seed %llu: call %u of round %u "
						"never completed\n",
					(unsigned long long)chaos_seed, i, rounds);
				cc->violations++;
			} else if (r->ended > r->limit) {
				fprintf(stderr, "chaos_rclient: seed %llu: call %u of round %u "
						"completed %lld ms after its limit\n",
					(unsigned long long)chaos_seed, i, rounds,
					(long long)(r->ended - r->limit));
				late++;
			}
			ok += r->done && r->call.status == 0;
		}
		if (!open) {
			struct rpcrdma_provider *p =
			    rpcrdma__xprt_clnt_provider(rpcrdma__client_transport(clnt));
			int64_t gdl = now_ms() + 3000;

			while (p && grants_live(p) && now_ms() < gdl)
				chaos_pump(e, &cc->cp, 1, true);
			if (p && grants_live(p)) {
				fprintf(stderr, "chaos_rclient: seed %llu: %llu grants live, "
						"every call done\n",
					(unsigned long long)chaos_seed,
					(unsigned long long)grants_live(p));
				cc->violations++;
			}
		}
		rpcrdma_client_destroy(clnt);
		chaos_pump(e, &cc->cp, 5, true);
		for (unsigned int i = 0; i < n; i++) {
			free(rcs[i].in.data);
			free(rcs[i].out.data);
			free(rcs[i].land);
		}
		cc->scratch_mr = NULL;
		peer_down(&cc->cp);
		if (cc->violations)
			break;
	}
	fprintf(stderr, "chaos_rclient: %u rounds, %u calls, %u succeeded, %u late; "
			"raw: %u replies, %u errors, %u silent, %u cut\n",
		rounds, calls, ok, late, cc->replies, cc->errors, cc->silent, cc->cuts);
	CHECK_RC(cc->violations, 0);
	CHECK_RC(late, 0);
	peer_free(&cc->cp);
	free(cc->scratch);
	free(cc);
	chaos_pump(e, NULL, 20, false);
	/* A raw listener closed while libfabric tcp held a connection whose
	 * request it had not read used to leave that socket open (CLOSE-WAIT
	 * on the listener's port, the request unread); the listener's close
	 * now shuts them down first (rpc/rdma/bound_handshake_destroy). */
	if (open_fds() != fds0) {
		fprintf(stderr, "chaos_rclient: %d descriptors more than before\n",
			open_fds() - fds0);
		dump_fds();
	}
	CHECK_RC(open_fds(), fds0);
	return 0;
}

