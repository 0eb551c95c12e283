/*
 * The registration cache (src/provider/regcache.c, memhooks.c) end to end:
 * after a warm-up, calls of every form register nothing on either side; and
 * memory freed, unmapped, discarded or moved after a call is registered
 * anew for the next one, which carries the new data.  Included by
 * e2e_test.c.  On ofi/tcp a stale registration would still reach the new
 * data (it names addresses), so there the invalidation counter is the
 * proof; on verbs (the lab) a stale one pins the old pages and the data
 * check fails too.
 */
#include <malloc.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>

#include "provider/regcache.h"
#include "rpcrdma/mem.h"
#include "../unseen_munmap.h"

#define RC_PROG 0x20000778u
#define RC_SIZE (256u << 10)

enum { RC_ECHO, RC_BLOB, RC_NPROCS };

/* The server's arguments and results live in memory that stays put, as an
 * application's I/O buffers do: its zero-copy results then hit the cache. */
static uint8_t rc_srv_in[RC_SIZE], rc_srv_out[RC_SIZE];

struct rc_msg {
	uint32_t len;
	uint32_t want; /* BLOB: bytes asked back */
	uint8_t *data;
	size_t room;
};

static int rc_echo_args_enc(struct rpcrdma_xdr_stream *x, void *o)
{
	struct rc_msg *m = o;

	return rpcrdma_xdr_encode_ddp(x, m->data, m->len);
}

static int rc_echo_args_dec(struct rpcrdma_xdr_stream *x, void *o)
{
	struct rc_msg *m = o;

	return rpcrdma_xdr_decode_ddp(x, rc_srv_in, RC_SIZE, &m->len);
}

static int rc_echo_res_enc(struct rpcrdma_xdr_stream *x, void *o)
{
	struct rc_msg *m = o;

	return rpcrdma_xdr_encode_ddp(x, rc_srv_out, m->len);
}

static int rc_echo_res_dec(struct rpcrdma_xdr_stream *x, void *o)
{
	struct rc_msg *m = o;

	return rpcrdma_xdr_decode_ddp(x, m->data, (uint32_t)m->room, &m->len);
}

static int rc_blob_args_enc(struct rpcrdma_xdr_stream *x, void *o)
{
	struct rc_msg *m = o;
	int rc = rpcrdma_xdr_encode_u32(x, m->want);

	return rc ? rc : rpcrdma_xdr_encode_opaque(x, m->data, m->len);
}

static int rc_blob_args_dec(struct rpcrdma_xdr_stream *x, void *o)
{
	struct rc_msg *m = o;
	int rc = rpcrdma_xdr_decode_u32(x, &m->want);

	return rc ? rc : rpcrdma_xdr_decode_opaque(x, rc_srv_in, RC_SIZE, &m->len);
}

static int rc_blob_res_enc(struct rpcrdma_xdr_stream *x, void *o)
{
	struct rc_msg *m = o;

	return rpcrdma_xdr_encode_opaque(x, rc_srv_out, m->len);
}

static int rc_blob_res_dec(struct rpcrdma_xdr_stream *x, void *o)
{
	struct rc_msg *m = o;

	return rpcrdma_xdr_decode_opaque(x, m->data, (uint32_t)m->room, &m->len);
}

static int rc_proc_echo(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct rc_msg *in = args, *out = res;

	(void)req;
	memcpy(rc_srv_out, rc_srv_in, in->len);
	out->len = in->len;
	return 0;
}

/* @want bytes back: the first min(len, want) bytes of the arguments, then
 * the pattern. */
static int rc_proc_blob(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct rc_msg *in = args, *out = res;
	uint32_t n = in->len < in->want ? in->len : in->want;

	(void)req;
	if (in->want > RC_SIZE)
		return -RPCRDMA_RPC_GARBAGE_ARGS;
	memcpy(rc_srv_out, rc_srv_in, n);
	for (uint32_t i = n; i < in->want; i++)
		rc_srv_out[i] = pat(in->want, i);
	out->len = in->want;
	return 0;
}

static const struct rpcrdma_svc_proc rc_procs[RC_NPROCS] = {
    [RC_ECHO] = {rc_proc_echo, rc_echo_args_dec, sizeof(struct rc_msg), rc_echo_res_enc,
		 sizeof(struct rc_msg), NULL},
    [RC_BLOB] = {rc_proc_blob, rc_blob_args_dec, sizeof(struct rc_msg), rc_blob_res_enc,
		 sizeof(struct rc_msg), NULL},
};

static int rc_env_up(struct env *e)
{
	return env_up_prog(e, RC_PROG, rc_procs, RC_NPROCS, 0, 0);
}

/* ECHO of @len bytes of pattern @seed from @src, the result straight into
 * @dst (a Write chunk of @room bytes); checks it came back. */
static int rc_echo(struct env *e, uint8_t *src, uint8_t *dst, size_t room, uint32_t len,
		   uint32_t seed)
{
	struct rc_msg in = {.len = len, .data = src}, out = {.data = dst, .room = room};
	struct rpcrdma_call call;

	for (uint32_t i = 0; i < len; i++)
		src[i] = pat(seed, i);
	memset(dst, 0, len);
	call_init(&call, RC_ECHO, rc_echo_args_enc, &in, rc_echo_res_dec, &out);
	call.ddp_buf = dst;
	call.ddp_len = room;
	call.max_reply = 1024 + room;
	CHECK_RC(rpcrdma_client_call(e->clnt, &call), 0);
	CHECK_RC(out.len, len);
	for (uint32_t i = 0; i < len; i++) {
		if (dst[i] != pat(seed, i)) {
			fprintf(stderr, "echo of pattern %u: byte %u is %u, want %u\n", seed, i,
				dst[i], pat(seed, i));
			return 1;
		}
	}
	return 0;
}

/* BLOB: @len plain bytes in, @want back (no DDP: inline, Long Call, Reply
 * chunk, by size). */
static int rc_blob(struct env *e, uint8_t *src, uint8_t *dst, uint32_t len, uint32_t want)
{
	struct rc_msg in = {.len = len, .want = want, .data = src},
		      out = {.data = dst, .room = RC_SIZE};
	struct rpcrdma_call call;
	uint32_t n = len < want ? len : want;

	for (uint32_t i = 0; i < len; i++)
		src[i] = pat(len + 7, i);
	call_init(&call, RC_BLOB, rc_blob_args_enc, &in, rc_blob_res_dec, &out);
	call.max_reply = 1024 + want;
	CHECK_RC(rpcrdma_client_call(e->clnt, &call), 0);
	CHECK_RC(out.len, want);
	for (uint32_t i = 0; i < want; i++)
		CHECK(dst[i] == (i < n ? pat(len + 7, i) : pat(want, i)));
	return 0;
}

/* One round of every form. */
static int rc_round(struct env *e, uint8_t *src, uint8_t *dst, uint32_t seed)
{
	CHECK_RC(rc_echo(e, src, dst, RC_SIZE, 100, seed), 0);        /* inline both ways */
	CHECK_RC(rc_echo(e, src, dst, RC_SIZE, 64u << 10, seed), 0);  /* Read + Write chunk */
	CHECK_RC(rc_echo(e, src, dst, RC_SIZE, 200000, seed + 1), 0); /* larger, same buffers */
	CHECK_RC(rc_blob(e, src, dst, 200000, 16), 0);                /* Long Call */
	CHECK_RC(rc_blob(e, src, dst, 16, 200000), 0);                /* Reply chunk, Long Reply */
	CHECK_RC(rc_blob(e, src, dst, 100000, 150000), 0);            /* both */
	return 0;
}

/* Whether the cache may keep registrations here (regcache.c). */
static bool rc_keeps(struct env *e)
{
	return !work_pins(e) || rpcrdma__memhooks_active();
}

/* Registrations the client's grants made for themselves: on rxe, windows
 * over part of a registration (verbs_mem.c), and every grant of a device
 * without windows. */
static uint64_t rc_grant_regs(struct env *e)
{
	struct rpcrdma_provider *p =
	    rpcrdma__xprt_clnt_provider(rpcrdma__client_transport(e->clnt));
	struct rpcrdma_prov_stats st;

	if (!p)
		return 0;
	rpcrdma__provider_stats(p, &st);
	return st.grant_regs;
}

static int case_regcache_steady(void)
{
	uint8_t *src = malloc(RC_SIZE), *dst = malloc(RC_SIZE);
	struct rpcrdma_xprt_stats c0, s0, c1, s1;
	uint64_t g0, g;
	struct env e;

	CHECK(src && dst);
	CHECK_RC(rc_env_up(&e), 0);
	for (uint32_t r = 0; r < 3; r++)
		CHECK_RC(rc_round(&e, src, dst, r), 0);
	CHECK_RC(rpcrdma_client_stats(e.clnt, &c0), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &s0), 0);
	g0 = rc_grant_regs(&e);
	for (uint32_t r = 0; r < 20; r++)
		CHECK_RC(rc_round(&e, src, dst, 100 + r), 0);
	CHECK_RC(rpcrdma_client_stats(e.clnt, &c1), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &s1), 0);
	g = rc_grant_regs(&e) - g0;
	fprintf(stderr,
		"20 rounds of 6 calls: client reg %llu (by grants %llu) dereg %llu hits %llu "
		"uncached %llu; server reg %llu dereg %llu hits %llu uncached %llu; hooks %s\n",
		(unsigned long long)(c1.prov_reg_mrs - c0.prov_reg_mrs), (unsigned long long)g,
		(unsigned long long)(c1.prov_dereg_mrs - c0.prov_dereg_mrs),
		(unsigned long long)(c1.prov_regcache_hits - c0.prov_regcache_hits),
		(unsigned long long)(c1.prov_regcache_uncached - c0.prov_regcache_uncached),
		(unsigned long long)(s1.prov_reg_mrs - s0.prov_reg_mrs),
		(unsigned long long)(s1.prov_dereg_mrs - s0.prov_dereg_mrs),
		(unsigned long long)(s1.prov_regcache_hits - s0.prov_regcache_hits),
		(unsigned long long)(s1.prov_regcache_uncached - s0.prov_regcache_uncached),
		rpcrdma__memhooks_active() ? "active" : "inactive");
	/* Every form went in the measured rounds. */
	CHECK(c1.inline_msgs > c0.inline_msgs && c1.read_chunk_msgs > c0.read_chunk_msgs &&
	      c1.write_chunk_msgs > c0.write_chunk_msgs && c1.long_calls > c0.long_calls &&
	      c1.reply_chunk_msgs > c0.reply_chunk_msgs && c1.long_replies > c0.long_replies);
	CHECK(s1.read_chunk_msgs > s0.read_chunk_msgs && s1.long_calls > s0.long_calls &&
	      s1.long_replies > s0.long_replies &&
	      s1.write_zero_copy_bytes > s0.write_zero_copy_bytes);
	if (rc_keeps(&e)) {
		/* None but those a grant makes for itself where the device
		 * needs them (0 on ofi and on windows other than rxe's). */
		CHECK_RC(c1.prov_reg_mrs - c0.prov_reg_mrs, g);
		CHECK_RC(c1.prov_dereg_mrs - c0.prov_dereg_mrs, g);
		CHECK_RC(s1.prov_reg_mrs - s0.prov_reg_mrs, 0);
		CHECK_RC(s1.prov_dereg_mrs - s0.prov_dereg_mrs, 0);
		/* Read chunk, Write chunk each echo of a chunk; the server's
		 * zero-copy results. */
		CHECK(c1.prov_regcache_hits - c0.prov_regcache_hits >= 20 * 4);
		CHECK(s1.prov_regcache_hits - s0.prov_regcache_hits >= 20 * 2);
	} else {
		/* Pinning and no hooks: every use registers, nothing is kept. */
		CHECK(c1.prov_regcache_uncached - c0.prov_regcache_uncached >= 20 * 4);
		CHECK_RC(c1.prov_regcache_misses, 0);
	}
	CHECK_RC(env_down(&e), 0);
	free(src);
	free(dst);
	return 0;
}

/* Registrations the client's cache dropped for freed or unmapped memory. */
static uint64_t rc_invalidations(struct env *e)
{
	struct rpcrdma_xprt_stats st;

	if (rpcrdma_client_stats(e->clnt, &st))
		return 0;
	return st.prov_regcache_invalidations;
}

/* Two calls over @buf (the second a hit, where the cache keeps), then
 * @change, then a call over the (new) buffer with new data.  RC_SHMDT
 * detaches a System V segment and attaches another at the same address;
 * RC_UNSEEN unmaps with a system call instruction of its own, which no
 * hook sees, and maps new memory at the same address. */
enum rc_change { RC_FREE, RC_MUNMAP, RC_MADVISE, RC_REALLOC, RC_SHMDT, RC_UNSEEN };

/* rc_invalidation(): the released addresses were taken before the test
 * could map them again. */
#define RC_TAKEN 2

/* A new System V segment of @len bytes attached at @at (NULL: anywhere)
 * into *@out (NULL if it could not be attached), and already removed, so
 * that it goes at its last detach whatever the test does next.  -ENOSPC
 * when no segment can be made here. */
static int rc_shm_attach(void *at, size_t len, uint8_t **out)
{
	int id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);
	void *m;

	*out = NULL;
	if (id < 0)
		return -ENOSPC;
	m = shmat(id, at, 0);
	if (shmctl(id, IPC_RMID, NULL))
		return -errno;
	*out = m == (void *)-1 ? NULL : m;
	return 0;
}

static int rc_invalidation(enum rc_change how)
{
	const size_t len = 64u << 10, big = 1u << 20;
	uint8_t *dst = malloc(RC_SIZE), *buf, *nbuf;
	struct rpcrdma_xprt_stats st0, st1;
	uint64_t inv0;
	struct env e;

	CHECK(dst);
	CHECK_RC(rc_env_up(&e), 0);
	if (how == RC_MUNMAP || how == RC_MADVISE || how == RC_UNSEEN) {
		buf = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(buf != MAP_FAILED);
	} else if (how == RC_SHMDT) {
		if (rc_shm_attach(NULL, big, &buf) == -ENOSPC) {
			fprintf(stderr, "no System V shared memory here: skipped\n");
			CHECK_RC(env_down(&e), 0);
			free(dst);
			return E2E_SKIP;
		}
		CHECK(buf);
	} else {
		buf = malloc(len);
		CHECK(buf);
	}
	CHECK_RC(rc_echo(&e, buf, dst, RC_SIZE, (uint32_t)len, 1), 0);
	CHECK_RC(rpcrdma_client_stats(e.clnt, &st0), 0);
	CHECK_RC(rc_echo(&e, buf, dst, RC_SIZE, (uint32_t)len, 2), 0);
	CHECK_RC(rpcrdma_client_stats(e.clnt, &st1), 0);
	if (rc_keeps(&e))
		CHECK_RC(st1.prov_regcache_hits - st0.prov_regcache_hits, 2); /* source, sink */
	inv0 = rc_invalidations(&e);
	switch (how) {
	case RC_FREE:
		free(buf);
		nbuf = malloc(len);
		CHECK(nbuf);
		/* glibc hands the block just freed out again.  The
		 * allocators that take free from our hook (ASan's,
		 * valgrind's) hold freed blocks back to catch their use. */
		CHECK(nbuf == buf || !rpcrdma__memhooks_active());
		break;
	case RC_MUNMAP:
		CHECK_RC(munmap(buf, big), 0);
		nbuf = mmap(buf, big, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		CHECK(nbuf == buf);
		break;
	case RC_MADVISE:
		CHECK_RC(madvise(buf, big, MADV_DONTNEED), 0);
		nbuf = buf;
		CHECK(nbuf[0] == 0); /* new pages */
		break;
	case RC_SHMDT:
		CHECK_RC(shmdt(buf), 0);
		CHECK_RC(rc_shm_attach(buf, big, &nbuf), 0);
		break;
	case RC_UNSEEN:
		CHECK_RC(unseen_munmap(buf, big), 0);
		nbuf = mmap(buf, big, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (nbuf == MAP_FAILED)
			nbuf = NULL;
		break;
	case RC_REALLOC:
	default:
		nbuf = realloc(buf, 4 * len);
		CHECK(nbuf);
		break;
	}
	if ((how == RC_SHMDT || how == RC_UNSEEN) && nbuf != buf) {
		/* Another thread's mapping took the addresses in between
		 * (nothing of ours to release there). */
		fprintf(stderr, "the released addresses were taken meanwhile\n");
		CHECK_RC(env_down(&e), 0);
		free(dst);
		return RC_TAKEN;
	}
	/* Without the full set of hooks (a sanitizer's or valgrind's
	 * allocator owns free) some of them may still be reached: only the
	 * data is checked then, and the cache keeps nothing on verbs. */
	/* A provider that finds memory by address at each access keeps its
	 * entries (regcache.c): only the data is checked there. */
	if (rpcrdma__memhooks_active() && work_pins(&e))
		CHECK(rc_invalidations(&e) > inv0);
	/* New data from the new memory: a stale registration would send the
	 * old pages' (pattern 2) on a pinning provider. */
	CHECK_RC(rc_echo(&e, nbuf, dst, RC_SIZE, (uint32_t)len, 3), 0);
	/* And the result lands in new memory too. */
	CHECK_RC(rc_echo(&e, dst, nbuf, len, (uint32_t)len, 4), 0);
	if (how == RC_MUNMAP || how == RC_MADVISE || how == RC_UNSEEN)
		CHECK_RC(munmap(nbuf, big), 0);
	else if (how == RC_SHMDT)
		CHECK_RC(shmdt(nbuf), 0);
	else
		free(nbuf);
	CHECK_RC(env_down(&e), 0);
	free(dst);
	return 0;
}

static int case_regcache_free(void)
{
	return rc_invalidation(RC_FREE);
}

static int case_regcache_munmap(void)
{
	return rc_invalidation(RC_MUNMAP);
}

static int case_regcache_madvise(void)
{
	return rc_invalidation(RC_MADVISE);
}

static int case_regcache_realloc(void)
{
	return rc_invalidation(RC_REALLOC);
}

/* A release whose addresses another thread's mapping took before ours
 * could: tried again, a few times, then a failure. */
static int rc_invalidation_retried(enum rc_change how)
{
	int rc = RC_TAKEN;

	for (int i = 0; i < 3 && rc == RC_TAKEN; i++)
		rc = rc_invalidation(how);
	return rc == RC_TAKEN ? 1 : rc;
}

static int case_regcache_shmdt(void)
{
	return rc_invalidation_retried(RC_SHMDT);
}

static int case_regcache_unseen_unmap(void)
{
#if !defined(__x86_64__)
	fprintf(stderr, "no system call instruction of the test's own here: skipped\n");
	return E2E_SKIP;
#else
	return rc_invalidation_retried(RC_UNSEEN);
#endif
}

/* More distinct buffers than the cache keeps: the coldest go, the counts
 * stay within the bound, and every call still carries its data. */
static int case_regcache_bounds(void)
{
	const uint32_t n = RPCRDMA__REGCACHE_MAX_ENTRIES + 40, len = 8u << 10;
	uint8_t *area = malloc((size_t)n * len), *dst = malloc(RC_SIZE);
	struct rpcrdma_xprt_stats st;
	struct env e;

	CHECK(area && dst);
	CHECK_RC(rc_env_up(&e), 0);
	for (uint32_t i = 0; i < n; i++)
		CHECK_RC(rc_echo(&e, area + (size_t)i * len, dst, RC_SIZE, len, i), 0);
	CHECK_RC(rpcrdma_client_stats(e.clnt, &st), 0);
	if (rc_keeps(&e)) {
		/* Each source a miss, the sink a hit after its first use. */
		CHECK(st.prov_regcache_misses >= n);
		CHECK(st.prov_regcache_evictions >= n + 1 - RPCRDMA__REGCACHE_MAX_ENTRIES);
		CHECK(st.prov_regcache_misses - st.prov_regcache_evictions -
			  st.prov_regcache_invalidations <=
		      RPCRDMA__REGCACHE_MAX_ENTRIES);
	}
	CHECK_RC(env_down(&e), 0);
	free(area);
	free(dst);
	return 0;
}

struct rc_async {
	struct rc_msg in, out;
	struct rpcrdma_call call;
	uint32_t seed;
	int done;
};

static void rc_async_done(struct rpcrdma_call *call, void *ctx)
{
	struct rc_async *a = ctx;

	a->done = 1;
	if (call->status == 0 && a->out.len != a->in.len)
		call->status = -EMSGSIZE;
	for (uint32_t i = 0; call->status == 0 && i < a->in.len; i++) {
		if (a->out.data[i] != pat(a->seed, i))
			call->status = -EILSEQ;
	}
}

/* rpcrdma_mem_register: arguments, one registration of the whole region
 * per instance at its first use and none after, deregistration while a
 * call is in flight, buffers that leave the region. */
static int case_regcache_declared(void)
{
	const size_t size = 4u << 20, len = 64u << 10;
	uint8_t *area = malloc(size), *outside = malloc(2 * RC_SIZE);
	struct rpcrdma_mem_region *r, *r2;
	struct rpcrdma_xprt_stats a, b;
	struct rc_async as;
	uint64_t g0;
	struct env e;

	CHECK(area && outside);
	CHECK_RC(rpcrdma_mem_register(NULL, len, &r), -EINVAL);
	CHECK_RC(rpcrdma_mem_register(area, 0, &r), -EINVAL);
	CHECK_RC(rpcrdma_mem_register(area, len, NULL), -EINVAL);
	CHECK_RC(rpcrdma_mem_register((void *)(UINTPTR_MAX - 100), 200, &r), -EINVAL);
	CHECK_RC(rpcrdma_mem_deregister(NULL), -EINVAL);
	CHECK_RC(rpcrdma_mem_register(area, size, &r), 0);
	CHECK_RC(rpcrdma_mem_register(area + size - 1, 10, &r2), -EEXIST);
	CHECK_RC(rpcrdma_mem_register(area + size, 10, &r2), 0); /* adjacent is fine */
	CHECK_RC(rpcrdma_mem_deregister(r2), 0);

	CHECK_RC(rc_env_up(&e), 0);
	CHECK_RC(rc_echo(&e, outside, outside + RC_SIZE, RC_SIZE, 100, 1), 0); /* connected, warm */
	CHECK_RC(rpcrdma_client_stats(e.clnt, &a), 0);
	g0 = rc_grant_regs(&e);
	/* Sources and sinks at many places in the region: it is registered
	 * once, at the first call, and then never again. */
	for (uint32_t i = 0; i < 16; i++) {
		uint8_t *src = area + (size_t)i * 2 * len,
			*dst = area + size - (size_t)(i + 1) * len;

		CHECK_RC(rc_echo(&e, src, dst, len, (uint32_t)len, 10 + i), 0);
	}
	CHECK_RC(rpcrdma_client_stats(e.clnt, &b), 0);
	CHECK_RC(b.prov_reg_mrs - a.prov_reg_mrs - (rc_grant_regs(&e) - g0), 1);
	CHECK_RC(b.prov_regcache_misses - a.prov_regcache_misses, 1);
	CHECK(b.prov_regcache_hits - a.prov_regcache_hits >= 31);

	/* A buffer that runs past the region's end is not in it: the cache
	 * registers it on its own. */
	CHECK_RC(rc_echo(&e, area + size - len / 2, outside, RC_SIZE, (uint32_t)len / 4, 40), 0);

	/* Deregistered while a call over it is in flight: the call keeps the
	 * registration, which goes once it completes. */
	memset(&as, 0, sizeof(as));
	as.seed = 50;
	as.in.len = (uint32_t)len;
	as.in.data = area;
	as.out.data = area + len;
	as.out.room = len;
	for (uint32_t i = 0; i < len; i++)
		area[i] = pat(as.seed, i);
	call_init(&as.call, RC_ECHO, rc_echo_args_enc, &as.in, rc_echo_res_dec, &as.out);
	as.call.ddp_buf = as.out.data;
	as.call.ddp_len = len;
	as.call.max_reply = 1024 + len;
	as.call.done = rc_async_done;
	as.call.ctx = &as;
	CHECK_RC(rpcrdma_client_stats(e.clnt, &a), 0);
	CHECK_RC(rpcrdma_client_call_async(e.clnt, &as.call), 0);
	CHECK_RC(rpcrdma_mem_deregister(r), 0);
	CHECK(!as.done);
	while (!as.done)
		CHECK(rpcrdma_loop_run_once(e.loop, 1000) >= 0);
	CHECK_RC(as.call.status, 0);
	/* The next call reaps it; its own buffers are outside any region. */
	CHECK_RC(rc_echo(&e, outside, outside + RC_SIZE, RC_SIZE, 100, 60), 0);
	CHECK_RC(rpcrdma_client_stats(e.clnt, &b), 0);
	CHECK(b.prov_dereg_mrs - a.prov_dereg_mrs >= 1);
	/* Memory no longer declared goes through the cache again. */
	CHECK_RC(rc_echo(&e, area, area + len, len, (uint32_t)len, 70), 0);
	CHECK_RC(rpcrdma_mem_deregister(r), -EINVAL); /* not declared any more */
	CHECK_RC(env_down(&e), 0);
	free(area);
	free(outside);
	return 0;
}
