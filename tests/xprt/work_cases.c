/*
 * Work per RPC (issue 18, bench/README.md "Work per RPC"): N calls of each
 * message form add exactly N times the form's minimum of every provider
 * operation on each side.  Counts are deterministic where timings are not,
 * so these are exact assertions.  Included by e2e_test.c.
 *
 * The minimum, per RPC (Version One):
 *  - both sides: one Send and one receive;
 *  - the requester: one grant per chunk it offers, and one revoke per
 *    grant, except the one handle a responder may invalidate with Send
 *    With Invalidate (RFC 8797; counted by remote_invalidations, never on
 *    ofi);
 *  - the responder: one RDMA Read per Read chunk or Position-Zero chunk
 *    segment, one RDMA Write per Write chunk or Reply chunk it uses.
 *  - registrations and deregistrations: none in steady state, wherever
 *    the registration cache keeps what it registered (see below).
 */
#include "provider/regcache.h"

/* READ: a length in, a DDP-eligible result of that length out. */
static uint8_t *work_source;

/* work_source for a case: BIG bytes of pattern 7. */
static int work_source_make(void)
{
	work_source = malloc(BIG);
	if (!work_source)
		return -ENOMEM;
	for (uint32_t i = 0; i < BIG; i++)
		work_source[i] = pat(7, i);
	return 0;
}

static void work_source_free(void)
{
	free(work_source);
	work_source = NULL;
}

static int proc_read(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct echo *out = res;

	(void)req;
	executions++;
	out->len = *(uint32_t *)args;
	if (out->len > BIG)
		return -RPCRDMA_RPC_GARBAGE_ARGS;
	out->data = work_source;
	return 0;
}

/* WRITE: a DDP-eligible argument in, its length out. */
static int proc_write(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct echo *in = args;

	(void)req;
	executions++;
	for (uint32_t i = 0; i < in->len; i++) {
		if (in->data[i] != pat(in->len, i))
			return -RPCRDMA_RPC_GARBAGE_ARGS;
	}
	*(uint32_t *)res = in->len;
	free(in->data); /* echo_dec's */
	in->data = NULL;
	return 0;
}

static int pair_enc(struct rpcrdma_xdr_stream *x, void *o)
{
	struct pair_args *a = o;
	int rc = rpcrdma_xdr_encode_u32(x, a->tag);

	if (!rc)
		rc = rpcrdma_xdr_encode_ddp(x, a->data[0], a->len[0]);
	if (!rc)
		rc = rpcrdma_xdr_encode_u32(x, a->mid);
	if (!rc)
		rc = rpcrdma_xdr_encode_ddp(x, a->data[1], a->len[1]);
	return rc ? rc : rpcrdma_xdr_encode_u32(x, a->tail);
}

static int pair_dec(struct rpcrdma_xdr_stream *x, void *o)
{
	struct pair_args *a = o;
	int rc = rpcrdma_xdr_decode_u32(x, &a->tag);

	for (int i = 0; i < 2 && !rc; i++) {
		if (!a->data[i] && !(a->data[i] = malloc(BIG)))
			return -ENOMEM;
		rc = rpcrdma_xdr_decode_ddp(x, a->data[i], BIG, &a->len[i]);
		if (!rc && i == 0)
			rc = rpcrdma_xdr_decode_u32(x, &a->mid);
	}
	return rc ? rc : rpcrdma_xdr_decode_u32(x, &a->tail);
}

/* Answers the bytes of both items when every word and byte is what
 * pair_call sent; GARBAGE_ARGS otherwise. */
static int proc_pair(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct pair_args *a = args;
	bool good = a->mid == ~a->tag && a->tail == a->tag + 1;

	(void)req;
	executions++;
	for (int k = 0; k < 2; k++) {
		for (uint32_t i = 0; good && i < a->len[k]; i++)
			good = a->data[k][i] == pat(a->tag + (uint32_t)k, i);
		free(a->data[k]);
		a->data[k] = NULL;
	}
	if (!good)
		return -RPCRDMA_RPC_GARBAGE_ARGS;
	*(uint32_t *)res = a->len[0] + a->len[1];
	return 0;
}

struct work_form {
	const char *name;
	uint32_t proc;
	uint32_t arg_len; /* READ: the length asked; WRITE, ECHO, BLOB: sent */
	uint32_t res_len; /* BLOB: the reply's length */
	size_t max_reply; /* the call's max_reply */
	size_t ddp_len;   /* the call's ddp_buf room (0: none) */
	/* The minimum per call. */
	unsigned int grants, reads, writes;
	/* The form counter of the client's that must grow by one per call. */
	size_t form_field;
};

#define XS_OFF(f) offsetof(struct rpcrdma_xprt_stats, f)

static const struct work_form work_forms[] = {
    {"NULL", P_NULL, 0, 0, 0, 0, 0, 0, 0, XS_OFF(inline_msgs)},
    /* 4 KiB each way fits the 8 KiB default thresholds: no chunk at all. */
    {"inline 4 KiB READ", P_READ, 4096, 0, 4096 + 128, 4096, 0, 0, 0, XS_OFF(inline_msgs)},
    {"inline 4 KiB WRITE", P_WRITE, 4096, 0, 128, 0, 0, 0, 0, XS_OFF(inline_msgs)},
    {"Write chunk (READ 64 KiB)", P_READ, 65536, 0, 65536 + 128, 65536, 1, 0, 1,
     XS_OFF(write_chunk_msgs)},
    {"Read chunk (WRITE 64 KiB)", P_WRITE, 65536, 0, 128, 0, 1, 1, 0, XS_OFF(read_chunk_msgs)},
    {"Read and Write chunks (ECHO 64 KiB)", P_ECHO, 65536, 0, 65536 + 128, 65536, 2, 1, 1,
     XS_OFF(read_chunk_msgs)},
    {"Long Call (BLOB 20000 in)", P_BLOB, 20000, 5, 128 + 5, 0, 1, 1, 0, XS_OFF(long_calls)},
    {"Long Reply (BLOB 20000 out)", P_BLOB, 5, 20000, 128 + 20000, 0, 1, 0, 1,
     XS_OFF(long_replies)},
    {"Reply chunk offered, reply inline", P_BLOB, 5, 5, 20000, 0, 1, 0, 0,
     XS_OFF(reply_chunk_msgs)},
};

static uint64_t xs_field(const struct rpcrdma_xprt_stats *s, size_t off)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)s + off, sizeof(v));
	return v;
}

static int work_call(struct env *e, const struct work_form *f, uint8_t *buf, uint8_t *back)
{
	struct rpcrdma_call call;
	struct echo ein = {.len = f->arg_len, .data = buf}, eout = {.data = back};
	struct blob bin = {.want = f->res_len, .len = f->arg_len, .data = buf};
	struct blob bout = {.want = f->res_len, .data = back};
	uint32_t len = f->arg_len, got = 0;

	switch (f->proc) {
	case P_NULL:
		call_init(&call, P_NULL, NULL, NULL, NULL, NULL);
		break;
	case P_READ:
		call_init(&call, P_READ, u32_enc, &len, echo_dec, &eout);
		break;
	case P_WRITE:
		for (uint32_t i = 0; i < len; i++)
			buf[i] = pat(len, i);
		call_init(&call, P_WRITE, echo_enc, &ein, u32_dec, &got);
		break;
	case P_ECHO:
		call_init(&call, P_ECHO, echo_enc, &ein, echo_dec, &eout);
		break;
	default:
		for (uint32_t i = 0; i < len; i++)
			buf[i] = pat(len, i);
		call_init(&call, P_BLOB, blob_enc, &bin, res_blob_dec, &bout);
		break;
	}
	call.max_reply = f->max_reply;
	if (f->ddp_len) {
		call.ddp_buf = back;
		call.ddp_len = f->ddp_len;
	}
	CHECK_RC(rpcrdma_client_call(e->clnt, &call), 0);
	if (f->proc == P_READ || f->proc == P_ECHO)
		CHECK_RC(eout.len, f->arg_len);
	if (f->proc == P_READ)
		CHECK(memcmp(back, work_source, f->arg_len) == 0);
	if (f->proc == P_WRITE)
		CHECK_RC(got, f->arg_len);
	if (f->proc == P_BLOB)
		CHECK_RC(bout.len, f->res_len);
	return 0;
}

/* Whether the provider's registrations pin memory (regcache.c). */
static bool work_pins(struct env *e)
{
	struct rpcrdma_provider *p = rpcrdma__xprt_clnt_provider(rpcrdma__client_transport(e->clnt));

	return p && !(p->caps.flags & RPCRDMA_PCAP_REG_BY_ADDRESS);
}

static int case_work_per_form(void)
{
	enum { N = 16 };
	uint8_t *buf = malloc(BIG), *back = malloc(BIG);
	struct env e;

	CHECK(buf && back);
	CHECK_RC(work_source_make(), 0);
	CHECK_RC(env_up(&e, 0, 0), 0);
	for (size_t k = 0; k < sizeof(work_forms) / sizeof(work_forms[0]); k++) {
		const struct work_form *f = &work_forms[k];
		struct rpcrdma_xprt_stats c0, c1, s0, s1;
		uint64_t remote_inv, grants;

		/* Warm-up: buffers grown, receives posted, and what the
		 * first call registered and its procedure freed
		 * deregistered (at the next call). */
		CHECK_RC(work_call(&e, f, buf, back), 0);
		CHECK_RC(work_call(&e, f, buf, back), 0);
		CHECK_RC(rpcrdma_client_stats(e.clnt, &c0), 0);
		CHECK_RC(rpcrdma_server_stats(e.srv, &s0), 0);
		for (int i = 0; i < N; i++)
			CHECK_RC(work_call(&e, f, buf, back), 0);
		CHECK_RC(rpcrdma_client_stats(e.clnt, &c1), 0);
		CHECK_RC(rpcrdma_server_stats(e.srv, &s1), 0);

		fprintf(stderr,
			"%s: client S %llu R %llu G %llu V %llu reg %llu; server S %llu R %llu "
			"Rd %llu Wr %llu reg %llu\n",
			f->name, (unsigned long long)(c1.prov_sends - c0.prov_sends),
			(unsigned long long)(c1.prov_recvs - c0.prov_recvs),
			(unsigned long long)(c1.prov_grants - c0.prov_grants),
			(unsigned long long)(c1.prov_revokes - c0.prov_revokes),
			(unsigned long long)(c1.prov_reg_mrs - c0.prov_reg_mrs),
			(unsigned long long)(s1.prov_sends - s0.prov_sends),
			(unsigned long long)(s1.prov_recvs - s0.prov_recvs),
			(unsigned long long)(s1.prov_reads - s0.prov_reads),
			(unsigned long long)(s1.prov_writes - s0.prov_writes),
			(unsigned long long)(s1.prov_reg_mrs - s0.prov_reg_mrs));
		CHECK_RC(xs_field(&c1, f->form_field) - xs_field(&c0, f->form_field), N);
		grants = (uint64_t)N * f->grants;
		remote_inv = c1.remote_invalidations - c0.remote_invalidations;
		CHECK(remote_inv <= (f->grants ? (uint64_t)N : 0));
		/* The requester. */
		CHECK_RC(c1.prov_sends - c0.prov_sends, N);
		CHECK_RC(c1.prov_recvs - c0.prov_recvs, N);
		CHECK_RC(c1.prov_reads - c0.prov_reads, 0);
		CHECK_RC(c1.prov_writes - c0.prov_writes, 0);
		CHECK_RC(c1.prov_grants - c0.prov_grants, grants);
		CHECK_RC(c1.prov_revokes - c0.prov_revokes, grants - remote_inv);
		/* The responder. */
		CHECK_RC(s1.prov_sends - s0.prov_sends, N);
		CHECK_RC(s1.prov_recvs - s0.prov_recvs, N);
		CHECK_RC(s1.prov_reads - s0.prov_reads, (uint64_t)N * f->reads);
		CHECK_RC(s1.prov_writes - s0.prov_writes, (uint64_t)N * f->writes);
		CHECK_RC(s1.prov_grants - s0.prov_grants, 0);
		CHECK_RC(s1.prov_revokes - s0.prov_revokes, 0);
		/* No registration in steady state (issue 18), wherever the
		 * registration cache may keep what it made: on ofi always, on
		 * verbs when the memory hooks are active (not under ASan or
		 * valgrind, where it counts what it could not keep).  The
		 * server's ECHO results are memory its procedure allocates
		 * for each call: the same addresses again only from an
		 * allocator that reuses freed blocks at once (glibc's, which
		 * the hooks being active says is there; ASan's and valgrind's
		 * hold them back). */
		if (c1.prov_regcache_uncached == c0.prov_regcache_uncached &&
		    s1.prov_regcache_uncached == s0.prov_regcache_uncached) {
			CHECK_RC(c1.prov_reg_mrs - c0.prov_reg_mrs, 0);
			CHECK_RC(c1.prov_dereg_mrs - c0.prov_dereg_mrs, 0);
			/* ECHO's results are memory its procedure allocates
			 * and frees at each call: on a pinning provider
			 * (verbs) the first call's registration goes with the
			 * free, and from then on they are copied into the
			 * server's registered buffers, not registered. */
			if (rpcrdma__memhooks_active()) {
				CHECK_RC(s1.prov_reg_mrs - s0.prov_reg_mrs, 0);
				CHECK_RC(s1.prov_dereg_mrs - s0.prov_dereg_mrs, 0);
			}
		}
	}
	CHECK_RC(env_down(&e), 0);
	free(buf);
	free(back);
	work_source_free();
	return 0;
}

/*
 * A client that allocates its buffers for each call and frees them after
 * (what most applications do): on a pinning provider the hooks drop each
 * registration at the free, so the requester copies churning memory of up
 * to 256 KiB through pooled registered buffers instead (clnt_marshal.c
 * own_reg): no registration per call, the data still right.  On ofi the
 * cache keeps registrations across frees and nothing is copied.
 */
static int case_work_client_churn(void)
{
	/* Warm-up: each request slot the calls rotate through has made its
	 * copy buffers (from the registered pool), and both blocks the
	 * allocator alternates between have churned once. */
	enum { N = 16, WARM = 8 };
	static const size_t forms[] = {3, 4, 5}; /* READ, WRITE and ECHO of 64 KiB */
	struct env e;

	CHECK_RC(work_source_make(), 0);
	CHECK_RC(env_up(&e, 0, 0), 0);
	for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); k++) {
		const struct work_form *f = &work_forms[forms[k]];
		struct rpcrdma_xprt_stats c0, c1;
		uint64_t per_call = (uint64_t)(f->reads + f->writes) * f->arg_len;

		CHECK(f->grants >= 1 && f->arg_len == 65536);
		for (int i = 0; i < N + WARM; i++) {
			uint8_t *buf = malloc(f->arg_len), *back = malloc(f->arg_len);

			CHECK(buf && back);
			for (uint32_t j = 0; j < f->arg_len; j++)
				buf[j] = pat((uint32_t)i, j); /* ECHO's; WRITE fills its own */
			if (i == WARM) {
				CHECK_RC(rpcrdma_client_stats(e.clnt, &c0), 0);
			}
			CHECK_RC(work_call(&e, f, buf, back), 0);
			if (f->proc == P_ECHO)
				CHECK(memcmp(buf, back, f->arg_len) == 0);
			free(buf);
			free(back);
		}
		CHECK_RC(rpcrdma_client_stats(e.clnt, &c1), 0);
		fprintf(stderr, "%s, fresh buffers: client reg %llu dereg %llu copied %llu\n",
			f->name, (unsigned long long)(c1.prov_reg_mrs - c0.prov_reg_mrs),
			(unsigned long long)(c1.prov_dereg_mrs - c0.prov_dereg_mrs),
			(unsigned long long)(c1.churn_copy_bytes - c0.churn_copy_bytes));
		/* Only glibc's allocator (which the hooks being active says
		 * is there) hands the same blocks out again at once;
		 * valgrind's and ASan's hold them back, so every call's
		 * memory is new there. */
		if (!work_pins(&e)) {
			/* Registrations are kept across frees; the allocator
			 * may still hand out an address not seen before. */
			CHECK_RC(c1.churn_copy_bytes - c0.churn_copy_bytes, 0);
			if (rpcrdma__memhooks_active())
				CHECK(c1.prov_reg_mrs - c0.prov_reg_mrs <= 2);
		} else if (rpcrdma__memhooks_active() &&
			   c1.prov_regcache_uncached == c0.prov_regcache_uncached) {
			CHECK_RC(c1.prov_reg_mrs - c0.prov_reg_mrs, 0);
			CHECK_RC(c1.prov_dereg_mrs - c0.prov_dereg_mrs, 0);
			CHECK_RC(c1.churn_copy_bytes - c0.churn_copy_bytes, (uint64_t)N * per_call);
		}
	}
	CHECK_RC(env_down(&e), 0);
	work_source_free();
	return 0;
}

/*
 * Our default (8 KiB on verbs, 68 KiB on ofi) meets a server that
 * advertises the kernel's 4 KiB in its private data: a 4 KiB WRITE then
 * goes as a Read chunk (our Send never exceeds the 4 KiB it receives), and
 * a 4 KiB READ offers a Write chunk (its reply would not fit the 4 KiB the
 * server sends).  Against our default both go inline.
 */
static int case_inline_interop(void)
{
	static const struct work_form wr = {"WRITE 4 KiB", P_WRITE, 4096, 0, 128, 0, 0, 0, 0, 0};
	static const struct work_form rd = {"READ 4 KiB", P_READ, 4096, 0, 4096 + 128,
					    4096,         0,      0,    0, 0};
	uint8_t *buf = malloc(BIG), *back = malloc(BIG);
	struct rpcrdma_server_opts so;
	struct rpcrdma_client_opts co;
	struct rpcrdma_xprt_stats c0, c1;
	struct env e;
	char port[16];

	CHECK(buf && back);
	CHECK_RC(work_source_make(), 0);
	for (int kernel_like = 0; kernel_like < 2; kernel_like++) {
		memset(&e, 0, sizeof(e));
		CHECK_RC(rpcrdma_loop_create(&e.loop), 0);
		rpcrdma_server_opts_default(&so);
		so.transport = RPCRDMA_TRANSPORT_RDMA;
		so.provider = test_provider;
		if (kernel_like)
			so.inline_send = so.inline_recv = 4096;
		CHECK_RC(rpcrdma_server_create(e.loop, test_addr, "0", &so, &e.srv), 0);
		CHECK_RC(rpcrdma_server_register(e.srv, PROG, VERS, procs, P_NPROCS), 0);
		snprintf(port, sizeof(port), "%d", rpcrdma_server_port(e.srv));
		rpcrdma_client_opts_default(&co);
		co.transport = RPCRDMA_TRANSPORT_RDMA;
		co.provider = test_provider;
		co.timeout_ms = 20000;
		CHECK_RC(rpcrdma_client_create(e.loop, test_addr, port, PROG, VERS, &co, &e.clnt),
			 0);
		CHECK_RC(rpcrdma_client_connect(e.clnt), 0);

		CHECK_RC(rpcrdma_client_stats(e.clnt, &c0), 0);
		CHECK_RC(work_call(&e, &wr, buf, back), 0);
		CHECK_RC(rpcrdma_client_stats(e.clnt, &c1), 0);
		CHECK_RC(c1.read_chunk_msgs - c0.read_chunk_msgs, kernel_like ? 1 : 0);
		CHECK_RC(c1.inline_msgs - c0.inline_msgs, kernel_like ? 0 : 1);
		CHECK_RC(c1.prov_grants - c0.prov_grants, kernel_like ? 1 : 0);

		CHECK_RC(rpcrdma_client_stats(e.clnt, &c0), 0);
		CHECK_RC(work_call(&e, &rd, buf, back), 0);
		CHECK_RC(rpcrdma_client_stats(e.clnt, &c1), 0);
		CHECK_RC(c1.write_chunk_msgs - c0.write_chunk_msgs, kernel_like ? 1 : 0);
		CHECK_RC(c1.inline_msgs - c0.inline_msgs, 1);
		CHECK_RC(c1.prov_grants - c0.prov_grants, kernel_like ? 1 : 0);
		CHECK_RC(env_down(&e), 0);
	}
	free(buf);
	free(back);
	work_source_free();
	return 0;
}

/*
 * The library's own thresholds (options left 0).  On a provider that
 * places RDMA data with the CPU (ofi) both sides send and receive 68 KiB
 * inline: a READ or a WRITE of 64 KiB travels in one Send each way, with
 * no grant and no RDMA Write or Read; at 128 KiB they take their chunks.
 * On verbs every direction is 8 KiB and all four take chunks.
 */
/* An environment with the library's default inline sizes (not the
 * tests' TEST_INLINE), and its client's provider. */
static int env_up_default_inline(struct env *e, struct rpcrdma_provider **p)
{
	int rc;

	env_inline = 0;
	rc = env_up(e, 0, 0);
	env_inline = TEST_INLINE;
	CHECK_RC(rc, 0);
	*p = rpcrdma__xprt_clnt_provider(rpcrdma__client_transport(e->clnt));
	CHECK(*p);
	return 0;
}

/* PAIR with items of @l0 and @l1 bytes from @mem (patterns of @tag and
 * @tag + 1); checks the server saw them intact. */
static int pair_call(struct env *e, uint8_t *mem, uint32_t tag, uint32_t l0, uint32_t l1)
{
	struct pair_args a = {.tag = tag, .mid = ~tag, .tail = tag + 1, .len = {l0, l1},
			      .data = {mem, mem + BIG}};
	struct rpcrdma_call call;
	uint32_t got = 0;

	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < a.len[k]; i++)
			a.data[k][i] = pat(tag + (uint32_t)k, i);
	call_init(&call, P_PAIR, pair_enc, &a, u32_dec, &got);
	CHECK_RC(rpcrdma_client_call(e->clnt, &call), 0);
	CHECK_RC(got, l0 + l1);
	return 0;
}

/*
 * Inline calls send their larger DDP items from the caller's memory
 * (clnt_marshal.c, "Inline from the caller's memory"): on a provider whose
 * Sends need no registration (ofi) any memory, elsewhere memory declared
 * with rpcrdma_mem_register, which this case declares.  Items before,
 * between and after plain words, odd lengths, one too small to lend, and
 * more items than the provider's Send entries allow: the server checks
 * every byte, the counters say which items were lent, and nothing is
 * registered per call.
 */
static int case_inline_lend(void)
{
	static const uint32_t shapes[][2] = {
	    {4096, 2000}, {4097, 3}, {5, 6000}, {4096, 4096}, {0, 4100}, {4095, 4095},
	};
	struct rpcrdma_xprt_stats c0, c1;
	struct rpcrdma_mem_region *region = NULL;
	struct rpcrdma_provider *p;
	uint8_t *mem = malloc(2 * BIG);
	uint32_t send, recv, max_sge;
	struct env e;

	CHECK(mem != NULL);
	CHECK_RC(rpcrdma_mem_register(mem, 2 * BIG, &region), 0);
	CHECK_RC(env_up_default_inline(&e, &p), 0);
	max_sge = p->caps.max_send_sge < RPCRDMA__XPRT_SEND_SGES ? p->caps.max_send_sge
								 : RPCRDMA__XPRT_SEND_SGES;
	rpcrdma__xclnt_inline(rpcrdma__client_transport(e.clnt), &send, &recv);
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		uint32_t l0 = shapes[i][0], l1 = shapes[i][1];
		uint64_t want = 0, lent, inl;
		unsigned int used = 1;

		/* Steady state: a shape too large to go inline takes Read
		 * chunks, whose first use may register (rxe binds windows
		 * over registrations of exactly the granted range). */
		CHECK_RC(pair_call(&e, mem, (uint32_t)(7 * i + 1), l0, l1), 0);
		CHECK_RC(rpcrdma_client_stats(e.clnt, &c0), 0);
		CHECK_RC(pair_call(&e, mem, (uint32_t)(7 * i + 2), l0, l1), 0);
		CHECK_RC(rpcrdma_client_stats(e.clnt, &c1), 0);
		inl = c1.inline_msgs - c0.inline_msgs;
		lent = c1.inline_zero_copy_bytes - c0.inline_zero_copy_bytes;
		/* The rule: an item of 4 KiB or more, while an entry for it
		 * and one for what follows are left. */
		for (int k = 0; k < 2 && inl; k++) {
			uint32_t l = k ? l1 : l0;

			if (l >= RPCRDMA__XPRT_LEND_MIN && used + 2 <= max_sge) {
				want += l;
				used += 2;
			}
		}
		fprintf(stderr, "PAIR %u + %u: inline %llu, lent %llu (want %llu), registrations %llu\n",
			l0, l1, (unsigned long long)inl, (unsigned long long)lent,
			(unsigned long long)want,
			(unsigned long long)(c1.prov_reg_mrs - c0.prov_reg_mrs));
		CHECK_RC(inl, (uint64_t)l0 + l1 + 64 <= send ? 1 : inl);
		CHECK_RC(lent, want);
		CHECK_RC(c1.prov_reg_mrs - c0.prov_reg_mrs, 0);
	}
	CHECK_RC(env_down(&e), 0);
	CHECK_RC(rpcrdma_mem_deregister(region), 0);
	free(mem);
	return 0;
}

static int case_inline_default(void)
{
	static const struct work_form rd64 = {"READ 64 KiB",   P_READ, 65536, 0, 65536 + 128,
					      65536,           0,      0,     0, 0};
	static const struct work_form rd128 = {"READ 128 KiB", P_READ, 131072, 0, 131072 + 128,
					       131072,         0,      0,      0, 0};
	static const struct work_form wr64 = {"WRITE 64 KiB", P_WRITE, 65536, 0, 128, 0, 0, 0, 0, 0};
	static const struct work_form wr128 = {"WRITE 128 KiB", P_WRITE, 131072, 0, 128, 0,
					       0,               0,       0,      0};
	static const struct work_form *const forms[] = {&rd64, &rd64, &rd128, &wr64, &wr64, &wr128};
	uint8_t *buf = malloc(BIG), *back = malloc(BIG);
	struct rpcrdma_xprt_stats c0, c1, s0, s1;
	struct rpcrdma_provider *p;
	uint32_t send, recv, want;
	bool soft;
	struct env e;

	CHECK(buf && back);
	CHECK_RC(work_source_make(), 0);
	CHECK_RC(env_up_default_inline(&e, &p), 0);
	soft = (p->caps.flags & RPCRDMA_PCAP_CPU_PLACEMENT) != 0;
	want = soft ? 69632 : 8192;
	rpcrdma__xclnt_inline(rpcrdma__client_transport(e.clnt), &send, &recv);
	CHECK_RC(send, want);
	CHECK_RC(recv, want);
	rpcrdma__xsvc_inline(rpcrdma__server_transport(e.srv), &send, &recv);
	CHECK_RC(send, want);
	CHECK_RC(recv, want);

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const struct work_form *f = forms[i];
		bool inl = soft && f->arg_len == 65536;
		uint64_t chunks;

		memset(back, 0, f->arg_len);
		CHECK_RC(rpcrdma_client_stats(e.clnt, &c0), 0);
		CHECK_RC(rpcrdma_server_stats(e.srv, &s0), 0);
		CHECK_RC(work_call(&e, f, buf, back), 0);
		CHECK_RC(rpcrdma_client_stats(e.clnt, &c1), 0);
		CHECK_RC(rpcrdma_server_stats(e.srv, &s1), 0);
		chunks = f->proc == P_READ ? c1.write_chunk_msgs - c0.write_chunk_msgs
					   : c1.read_chunk_msgs - c0.read_chunk_msgs;
		fprintf(stderr, "%s: client chunk messages %llu grants %llu\n", f->name,
			(unsigned long long)chunks,
			(unsigned long long)(c1.prov_grants - c0.prov_grants));
		CHECK_RC(chunks, inl ? 0 : 1);
		CHECK_RC(c1.prov_grants - c0.prov_grants, inl ? 0 : 1);
		CHECK_RC(s1.prov_writes - s0.prov_writes, f->proc == P_READ && !inl ? 1 : 0);
		CHECK_RC(s1.prov_reads - s0.prov_reads, f->proc == P_WRITE && !inl ? 1 : 0);
		CHECK_RC(s1.prov_sends - s0.prov_sends, 1);
	}
	CHECK_RC(env_down(&e), 0);
	free(buf);
	free(back);
	work_source_free();
	return 0;
}

/*
 * Inline replies lend their DDP results to the Send (ddp.c, lend_inline):
 * the server sends the READ result from the procedure's memory, however
 * it is padded, and counts it in inline_zero_copy_bytes; a smaller one is
 * copied.  Results lent in a reply that turns out too large to go inline
 * are put back into the message, which goes as a Long Reply, intact.
 * work_source is declared, so that verbs lends from it too; TRIO's results
 * are allocated at each call, which verbs copies.
 */
static int case_reply_lend(void)
{
	static const uint32_t sizes[] = {4096, 6001, 4095, 7000, 4097};
	static const uint32_t fit[TRIO_N] = {5000, 5001, 5002};
	static const uint32_t spill[TRIO_N] = {4096, 9000, 4099};
	static const size_t no_chunk[TRIO_N] = {0, 0, 0};
	uint8_t *buf = malloc(BIG), *back = malloc(BIG);
	struct rpcrdma_mem_region *region = NULL;
	struct rpcrdma_xprt_stats s0, s1;
	struct rpcrdma_provider *p;
	uint32_t send, recv, lend_max;
	uint64_t placed, want;
	bool unregistered;
	struct env e;

	CHECK(buf && back);
	CHECK_RC(work_source_make(), 0);
	CHECK_RC(rpcrdma_mem_register(work_source, BIG, &region), 0);
	CHECK_RC(env_up(&e, 0, 0), 0);
	p = rpcrdma__xprt_svc_provider(rpcrdma__server_transport(e.srv));
	CHECK(p);
	unregistered = (p->caps.flags & RPCRDMA_PCAP_SEND_UNREGISTERED) != 0;
	lend_max = (p->caps.max_send_sge < RPCRDMA__XPRT_SEND_SGES ? p->caps.max_send_sge
								  : RPCRDMA__XPRT_SEND_SGES);
	lend_max = lend_max >= 4 ? (lend_max - 2) / 2 : 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		const struct work_form f = {"READ", P_READ, sizes[i], 0, sizes[i] + 128,
					    sizes[i], 0, 0, 0, 0};

		/* The first call of a size may grow the server's buffers. */
		CHECK_RC(work_call(&e, &f, buf, back), 0);
		memset(back, 0, sizes[i] + 8);
		CHECK_RC(rpcrdma_server_stats(e.srv, &s0), 0);
		CHECK_RC(work_call(&e, &f, buf, back), 0);
		CHECK_RC(rpcrdma_server_stats(e.srv, &s1), 0);
		want = sizes[i] >= RPCRDMA__XPRT_LEND_MIN && lend_max ? sizes[i] : 0;
		fprintf(stderr, "READ %u: inline %llu, lent %llu (want %llu), registrations %llu\n",
			sizes[i], (unsigned long long)(s1.inline_msgs - s0.inline_msgs),
			(unsigned long long)(s1.inline_zero_copy_bytes - s0.inline_zero_copy_bytes),
			(unsigned long long)want,
			(unsigned long long)(s1.prov_reg_mrs - s0.prov_reg_mrs));
		CHECK_RC(s1.write_chunk_msgs - s0.write_chunk_msgs, 0);
		CHECK_RC(s1.inline_zero_copy_bytes - s0.inline_zero_copy_bytes, want);
		CHECK_RC(s1.prov_reg_mrs - s0.prov_reg_mrs, 0);
	}
	CHECK_RC(env_down(&e), 0);

	/* Three results inline: two lent (the Send's entries allow no
	 * more), the third copied after them. */
	CHECK_RC(env_up_default_inline(&e, &p), 0);
	rpcrdma__xsvc_inline(rpcrdma__server_transport(e.srv), &send, &recv);
	CHECK_RC(rpcrdma_server_stats(e.srv, &s0), 0);
	CHECK_RC(trio_call(e.clnt, fit, no_chunk, 0, &placed), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &s1), 0);
	want = 0;
	if (unregistered && send >= 16384)
		for (uint32_t k = 0; k < TRIO_N && k < lend_max; k++)
			want += fit[k];
	CHECK_RC(s1.inline_zero_copy_bytes - s0.inline_zero_copy_bytes, want);
	CHECK_RC(env_down(&e), 0);

	/* Too large for inline with both first results lent: a Long Reply,
	 * every byte in place. */
	CHECK_RC(env_up(&e, 0, 0), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &s0), 0);
	CHECK_RC(trio_call(e.clnt, spill, no_chunk, 0, &placed), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &s1), 0);
	CHECK_RC(s1.long_replies - s0.long_replies, 1);
	CHECK_RC(s1.inline_zero_copy_bytes - s0.inline_zero_copy_bytes, 0);
	CHECK_RC(env_down(&e), 0);

	CHECK_RC(rpcrdma_mem_deregister(region), 0);
	work_source_free();
	free(buf);
	free(back);
	return 0;
}
