/*
 * rpcrdma-demo: a server and a client in one process, talking ONC RPC over
 * RPC-over-RDMA, that walk through every way a message can travel (inline,
 * Read chunk, Long Call, Write chunk, Long Reply), verify every byte that
 * comes back, and print what each form cost: round-trip time and the bytes
 * moved by RDMA Read and Write.  It is what `make demo` runs, on the
 * software provider (libfabric tcp) over 127.0.0.1 by default.
 *
 * The demo service (program 0x20000101, version 1):
 *   NULL  nothing in, nothing out
 *   PUT   a DDP-eligible opaque in; its length and checksum out
 *   GET   a length and seed in; a DDP-eligible opaque of that many bytes out
 *   SUM   a plain (not DDP-eligible) opaque in; its length and checksum out
 *   LIST  a length and seed in; a plain opaque of that many bytes out
 * Plain opaques larger than the inline threshold force the Long Call and
 * Long Reply forms; DDP-eligible ones ride in Read and Write chunks.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpcrdma/debug.h"
#include "rpcrdma/loop.h"
#include "rpcrdma/rpc.h"

#define DEMO_PROG 0x20000101u
#define DEMO_VERS 1u
#define MAX_PAYLOAD (4u << 20)
#define ROUNDS 25

enum { P_NULL, P_PUT, P_GET, P_SUM, P_LIST, P_NPROCS };

/*
 * The same pattern on both sides, so either can check the other's bytes.
 * Made and checked eight bytes at a time, and the checksum keeps four
 * lanes: done a byte at a time, the demo's own work on a 1 MiB payload
 * took ten times the round trip it was there to show.
 */
static uint64_t pattern_word(uint32_t seed, size_t j)
{
	uint64_t x = ((uint64_t)seed << 32 | seed) ^ ((uint64_t)j * 0x9E3779B97F4A7C15ull);

	return x ^ (x >> 29);
}

static void pattern_fill(uint32_t seed, uint8_t *p, size_t n)
{
	size_t j = 0;

	for (; (j + 1) * 8 <= n; j++) {
		uint64_t w = htole64(pattern_word(seed, j));

		memcpy(p + j * 8, &w, 8);
	}
	for (size_t i = j * 8; i < n; i++)
		p[i] = (uint8_t)(pattern_word(seed, j) >> (8 * (i % 8)));
}

static bool pattern_matches(uint32_t seed, const uint8_t *p, size_t n)
{
	size_t j = 0;

	for (; (j + 1) * 8 <= n; j++) {
		uint64_t w = htole64(pattern_word(seed, j));

		if (memcmp(p + j * 8, &w, 8) != 0)
			return false;
	}
	for (size_t i = j * 8; i < n; i++) {
		if (p[i] != (uint8_t)(pattern_word(seed, j) >> (8 * (i % 8))))
			return false;
	}
	return true;
}

static uint64_t checksum(const uint8_t *p, size_t n)
{
	const uint64_t prime = 1099511628211ull; /* FNV's, over words */
	uint64_t h[4] = {1469598103934665603ull, 1, 2, 3}, w, tail = 0;
	size_t i = 0;

	for (; i + 32 <= n; i += 32) {
		for (int l = 0; l < 4; l++) {
			memcpy(&w, p + i + 8 * (size_t)l, 8);
			h[l] = (h[l] ^ le64toh(w)) * prime;
		}
	}
	for (; i < n; i++)
		tail = (tail ^ p[i]) * prime;
	return ((h[0] * prime ^ h[1]) * prime ^ h[2]) * prime ^ h[3] ^ tail ^ (uint64_t)n;
}

struct bytes {
	uint32_t len;
	uint8_t *data; /* MAX_PAYLOAD bytes, or borrowed */
};

struct digest {
	uint32_t len;
	uint64_t sum;
};

struct want {
	uint32_t len;
	uint32_t seed;
};

static int bytes_room(struct bytes *b)
{
	if (!b->data)
		b->data = malloc(MAX_PAYLOAD);
	return b->data ? 0 : -ENOMEM;
}

static int enc_ddp(struct rpcrdma_xdr_stream *x, void *o)
{
	struct bytes *b = o;

	return rpcrdma_xdr_encode_ddp(x, b->data, b->len);
}

/*
 * The server learns the size from the length word first and allocates just
 * that; the client decodes into the buffer it offered as the Write chunk.
 */
static int dec_ddp(struct rpcrdma_xdr_stream *x, void *o)
{
	struct bytes *b = o;
	struct rpcrdma_xdr_stream peek = *x;
	uint32_t len;
	int rc;

	if (!b->data) {
		rc = rpcrdma_xdr_decode_u32(&peek, &len);
		if (rc)
			return rc;
		if (len > MAX_PAYLOAD)
			return RPCRDMA_ERR_TOO_LONG;
		b->data = malloc(len ? len : 1);
		if (!b->data)
			return -ENOMEM;
		rc = rpcrdma_xdr_decode_ddp(x, b->data, len, &b->len);
		if (rc) {
			/* The library frees args but knows nothing of ours. */
			free(b->data);
			b->data = NULL;
		}
		return rc;
	}
	return rpcrdma_xdr_decode_ddp(x, b->data, MAX_PAYLOAD, &b->len);
}

static int enc_plain(struct rpcrdma_xdr_stream *x, void *o)
{
	struct bytes *b = o;

	return rpcrdma_xdr_encode_opaque(x, b->data, b->len);
}

static int dec_plain(struct rpcrdma_xdr_stream *x, void *o)
{
	struct bytes *b = o;
	uint32_t len;
	int rc;

	if (b->data)
		return rpcrdma_xdr_decode_opaque(x, b->data, MAX_PAYLOAD, &b->len);
	rc = rpcrdma_xdr_decode_opaque_len(x, MAX_PAYLOAD, &len);
	if (rc)
		return rc;
	b->data = malloc(len ? len : 1);
	if (!b->data)
		return -ENOMEM;
	b->len = len;
	rc = rpcrdma_xdr_decode_fixed_opaque(x, b->data, len);
	if (rc) {
		free(b->data);
		b->data = NULL;
	}
	return rc;
}

static int enc_digest(struct rpcrdma_xdr_stream *x, void *o)
{
	struct digest *d = o;
	int rc = rpcrdma_xdr_encode_u32(x, d->len);

	return rc ? rc : rpcrdma_xdr_encode_u64(x, d->sum);
}

static int dec_digest(struct rpcrdma_xdr_stream *x, void *o)
{
	struct digest *d = o;
	int rc = rpcrdma_xdr_decode_u32(x, &d->len);

	return rc ? rc : rpcrdma_xdr_decode_u64(x, &d->sum);
}

static int enc_want(struct rpcrdma_xdr_stream *x, void *o)
{
	struct want *w = o;
	int rc = rpcrdma_xdr_encode_u32(x, w->len);

	return rc ? rc : rpcrdma_xdr_encode_u32(x, w->seed);
}

static int dec_want(struct rpcrdma_xdr_stream *x, void *o)
{
	struct want *w = o;
	int rc = rpcrdma_xdr_decode_u32(x, &w->len);

	if (rc == 0)
		rc = rpcrdma_xdr_decode_u32(x, &w->seed);
	if (rc == 0 && w->len > MAX_PAYLOAD)
		rc = RPCRDMA_ERR_TOO_LONG;
	return rc;
}

/* Server side. */

static int svc_null(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return 0;
}

static int svc_digest(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct bytes *in = args;
	struct digest *out = res;

	(void)req;
	out->len = in->len;
	out->sum = checksum(in->data, in->len);
	free(in->data);
	in->data = NULL;
	return 0;
}

static int svc_make(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct want *w = args;
	struct bytes *out = res;

	(void)req;
	out->data = malloc(w->len ? w->len : 1);
	if (!out->data)
		return -RPCRDMA_RPC_SYSTEM_ERR;
	out->len = w->len;
	pattern_fill(w->seed, out->data, w->len);
	return 0;
}

static void free_bytes(void *res)
{
	struct bytes *b = res;

	free(b->data);
	b->data = NULL;
}

static const struct rpcrdma_svc_proc demo_procs[P_NPROCS] = {
	[P_NULL] = {svc_null, NULL, 0, NULL, 0, NULL},
	[P_PUT] = {svc_digest, dec_ddp, sizeof(struct bytes), enc_digest, sizeof(struct digest),
		   NULL},
	[P_GET] = {svc_make, dec_want, sizeof(struct want), enc_ddp, sizeof(struct bytes),
		   free_bytes},
	[P_SUM] = {svc_digest, dec_plain, sizeof(struct bytes), enc_digest,
		   sizeof(struct digest), NULL},
	[P_LIST] = {svc_make, dec_want, sizeof(struct want), enc_plain, sizeof(struct bytes),
		    free_bytes},
};

/* Client side: one scripted step per message form. */

struct step {
	const char *form;
	unsigned int proc;
	uint32_t size;
	/* The counter that proves the form was used. */
	size_t counter;
};

#define STAT(f) offsetof(struct rpcrdma_xprt_stats, f)

/* Sizes past the largest default inline size (68 KiB on ofi, 8 KiB on
 * verbs), or a PUT, SUM or LIST would travel inline. */
static const struct step script[] = {
	{"inline", P_SUM, 1000, STAT(inline_msgs)},
	{"read chunk", P_PUT, 128 * 1024, STAT(read_chunk_msgs)},
	{"read chunk", P_PUT, 1024 * 1024, STAT(read_chunk_msgs)},
	{"long call", P_SUM, 96 * 1024, STAT(long_calls)},
	{"write chunk", P_GET, 128 * 1024, STAT(write_chunk_msgs)},
	{"write chunk", P_GET, 1024 * 1024, STAT(write_chunk_msgs)},
	{"long reply", P_LIST, 96 * 1024, STAT(long_replies)},
};

static uint64_t stat_at(const struct rpcrdma_xprt_stats *s, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)s + off, sizeof(v));
	return v;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Why the last call failed, in the library's words (rpcrdma_call_strerror
 * says more than the status code: the RDMA_ERROR's code, the time-out...). */
static char call_why[512];

static int call_failed(const struct rpcrdma_call *call)
{
	snprintf(call_why, sizeof(call_why), "%s", rpcrdma_call_strerror(call));
	return call->status;
}

static const char *failure_text(int rc)
{
	if (rc == -EBADMSG)
		return "data differs";
	return call_why[0] ? call_why : rpcrdma_strerror(rc);
}

/* One call of @st, data checked; returns 0 or a negative error.  *@rtt_us:
 * the call alone, from the request to its decoded reply, not the making
 * and checking of the data around it. */
static int run_once(struct rpcrdma_client *clnt, const struct step *st, uint32_t seed,
		    struct bytes *buf, struct bytes *back, double *rtt_us)
{
	double t0;
	struct rpcrdma_call call;
	struct digest dg = {0, 0};
	struct want w = {st->size, seed};
	int rc;

	memset(&call, 0, sizeof(call));
	call.proc = st->proc;
	switch (st->proc) {
	case P_PUT:
	case P_SUM:
		buf->len = st->size;
		pattern_fill(seed, buf->data, buf->len);
		call.encode_args = st->proc == P_PUT ? enc_ddp : enc_plain;
		call.args = buf;
		call.decode_res = dec_digest;
		call.res = &dg;
		break;
	case P_GET:
	case P_LIST:
		call.encode_args = enc_want;
		call.args = &w;
		call.decode_res = st->proc == P_GET ? dec_ddp : dec_plain;
		call.res = back;
		/* The largest reply: the opaque, its length word, the RPC
		 * reply header (verifier included) with room to spare. */
		call.max_reply = st->size + 512;
		if (st->proc == P_GET) {
			call.ddp_buf = back->data;
			call.ddp_len = MAX_PAYLOAD;
		}
		break;
	}
	t0 = now_us();
	rc = rpcrdma_client_call(clnt, &call);
	*rtt_us = now_us() - t0;
	if (rc)
		return call_failed(&call);

	if (st->proc == P_PUT || st->proc == P_SUM) {
		if (dg.len != st->size || dg.sum != checksum(buf->data, buf->len))
			return -EBADMSG;
		return 0;
	}
	if (back->len != st->size)
		return -EBADMSG;
	return pattern_matches(seed, back->data, back->len) ? 0 : -EBADMSG;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rpcrdma-demo [--provider ofi|verbs] [--addr ADDRESS] [--port PORT]\n"
		   "  Runs an RPC-over-RDMA server and client in one process and walks\n"
		   "  through every message form with verified data.\n"
		   "  --provider  RDMA provider (default ofi: libfabric tcp, no RDMA hardware)\n"
		   "  --addr      address to listen on and connect to (default 127.0.0.1;\n"
		   "              for verbs, an address of an RDMA device)\n"
		   "  --port      port (default: any free one)\n"
		   "  --inflight  at the end, show the client's and the server's calls in\n"
		   "              flight during a burst (SIGUSR1 shows them at any time, on\n"
		   "              stderr)\n");
}

/* SIGUSR1: the client's and the server's calls in flight, on stderr
 * (rpcrdma/debug.h). */
static struct rpcrdma_client *volatile shown_client;
static struct rpcrdma_server *volatile shown_server;

static void on_sigusr1(int sig)
{
	(void)sig;
	if (shown_client)
		(void)rpcrdma_client_inflight_write(shown_client, 2);
	if (shown_server)
		(void)rpcrdma_server_inflight_write(shown_server, 2);
}

/* Both tables on stdout. */
static void show_tables(struct rpcrdma_client *clnt, struct rpcrdma_server *srv)
{
	fflush(stdout);
	(void)rpcrdma_client_inflight_write(clnt, 1);
	(void)rpcrdma_server_inflight_write(srv, 1);
}

static void burst_done(struct rpcrdma_call *call, void *ctx)
{
	(void)call;
	++*(int *)ctx;
}

/* --inflight: a burst of calls, the table before they leave, once some
 * are out, and after. */
static int show_inflight(struct rpcrdma_loop *loop, struct rpcrdma_client *clnt,
			 struct rpcrdma_server *srv)
{
	enum { N = 12 };
	struct rpcrdma_call calls[N];
	int done = 0, rc;

	memset(calls, 0, sizeof(calls));
	for (int i = 0; i < N; i++) {
		calls[i].proc = P_NULL;
		calls[i].done = burst_done;
		calls[i].ctx = &done;
		rc = rpcrdma_client_call_async(clnt, &calls[i]);
		if (rc)
			return rc;
	}
	printf("\n%d calls started (sent at once while credits allow, the rest queued):\n", N);
	show_tables(clnt, srv);
	rc = rpcrdma_loop_run_once(loop, 0);
	printf("one loop iteration later:\n");
	show_tables(clnt, srv);
	while (rc >= 0 && done < N)
		rc = rpcrdma_loop_run_once(loop, 1000);
	printf("all answered:\n");
	show_tables(clnt, srv);
	return rc < 0 ? rc : 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"provider", required_argument, NULL, 'p'},
		{"addr", required_argument, NULL, 'a'},
		{"port", required_argument, NULL, 'P'},
		{"inflight", no_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *provider = "ofi", *addr = "127.0.0.1", *port = "0";
	struct rpcrdma_loop *loop = NULL;
	struct rpcrdma_server *srv = NULL;
	struct rpcrdma_client *clnt = NULL;
	struct rpcrdma_server_opts so;
	struct rpcrdma_client_opts co;
	struct bytes buf = {0, NULL}, back = {0, NULL};
	struct rpcrdma_xprt_stats before, after;
	char portbuf[16];
	int opt, rc, failures = 0, inflight = 0;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			provider = optarg;
			break;
		case 'a':
			addr = optarg;
			break;
		case 'P':
			port = optarg;
			break;
		case 'i':
			inflight = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}

	if (bytes_room(&buf) || bytes_room(&back)) {
		fprintf(stderr, "rpcrdma-demo: out of memory\n");
		return 1;
	}
	rc = rpcrdma_loop_create(&loop);
	if (rc)
		goto out_err;

	rpcrdma_server_opts_default(&so);
	so.transport = RPCRDMA_TRANSPORT_RDMA;
	so.provider = provider;
	/* The largest call the server rebuilds (Read chunks included). */
	so.max_record = MAX_PAYLOAD + 65536;
	rc = rpcrdma_server_create(loop, addr, port, &so, &srv);
	if (rc)
		goto out_err;
	rc = rpcrdma_server_register(srv, DEMO_PROG, DEMO_VERS, demo_procs, P_NPROCS);
	/* GET and LIST make their bytes from the seed and change nothing, as
	 * an NFS READ: their replies skip the duplicate request cache, which
	 * would otherwise keep a copy of each (a 1 MiB GET paid a fresh 1 MiB
	 * copy per call).  PUT and SUM keep theirs, as an NFS WRITE would. */
	for (uint32_t p = P_NULL; !rc && p < P_NPROCS; p++) {
		if (p == P_NULL || p == P_GET || p == P_LIST)
			rc = rpcrdma_server_set_idempotent(srv, DEMO_PROG, DEMO_VERS, p, true);
	}
	if (rc)
		goto out_err;
	snprintf(portbuf, sizeof(portbuf), "%d", rpcrdma_server_port(srv));

	rpcrdma_client_opts_default(&co);
	co.transport = RPCRDMA_TRANSPORT_RDMA;
	co.provider = provider;
	rc = rpcrdma_client_create(loop, addr, portbuf, DEMO_PROG, DEMO_VERS, &co, &clnt);
	if (rc)
		goto out_err;
	rc = rpcrdma_client_connect(clnt);
	if (rc)
		goto out_err;
	shown_client = clnt;
	shown_server = srv;
	signal(SIGUSR1, on_sigusr1);

	/* The first reply tells the client its real credit grant. */
	{
		struct rpcrdma_call call;

		memset(&call, 0, sizeof(call));
		call.proc = P_NULL;
		rc = rpcrdma_client_call(clnt, &call);
		if (rc) {
			call_failed(&call);
			goto out_err;
		}
	}

	printf("librpcrdma demo: provider %s, server %s:%s, %d rounds per form\n\n", provider,
	       addr, portbuf, ROUNDS);
	printf("%-12s %10s %12s %12s %14s  %s\n", "form", "payload", "rtt median", "rtt min",
	       "RDMA bytes", "data");
	for (size_t s = 0; s < sizeof(script) / sizeof(script[0]); s++) {
		const struct step *st = &script[s];
		double rtt[ROUNDS];
		uint64_t rdma_bytes, used;
		int bad = 0;

		rpcrdma_client_stats(clnt, &before);
		for (int r = 0; r < ROUNDS; r++) {
			rc = run_once(clnt, st, (uint32_t)(s * 1000 + (size_t)r), &buf, &back,
				      &rtt[r]);
			if (rc) {
				fprintf(stderr, "rpcrdma-demo: %s %u B: %s\n", st->form, st->size,
					failure_text(rc));
				bad = 1;
				break;
			}
		}
		rpcrdma_client_stats(clnt, &after);
		used = stat_at(&after, st->counter) - stat_at(&before, st->counter);
		rdma_bytes = (after.rdma_read_bytes - before.rdma_read_bytes) +
			     (after.rdma_write_bytes - before.rdma_write_bytes);
		if (!bad && used < ROUNDS) {
			fprintf(stderr, "rpcrdma-demo: %s %u B: the form was used %llu times, not %d\n",
				st->form, st->size, (unsigned long long)used, ROUNDS);
			bad = 1;
		}
		if (bad) {
			failures++;
			printf("%-12s %9u B %12s %12s %14s  FAILED\n", st->form, st->size, "-", "-",
			       "-");
			continue;
		}
		qsort(rtt, ROUNDS, sizeof(rtt[0]), cmp_double);
		printf("%-12s %9u B %9.1f us %9.1f us %12llu B  verified\n", st->form, st->size,
		       rtt[ROUNDS / 2], rtt[0], (unsigned long long)(rdma_bytes / ROUNDS));
	}

	rpcrdma_client_stats(clnt, &after);
	printf("\nclient counters: calls %llu, inline %llu, read-chunk %llu, long calls %llu, "
	       "write-chunk %llu, reply-chunk %llu, long replies %llu,\n"
	       "  RDMA read %llu B, RDMA write %llu B, inline sent %llu B, received %llu B, "
	       "most calls in flight %llu\n",
	       (unsigned long long)after.calls_sent, (unsigned long long)after.inline_msgs,
	       (unsigned long long)after.read_chunk_msgs, (unsigned long long)after.long_calls,
	       (unsigned long long)after.write_chunk_msgs,
	       (unsigned long long)after.reply_chunk_msgs, (unsigned long long)after.long_replies,
	       (unsigned long long)after.rdma_read_bytes, (unsigned long long)after.rdma_write_bytes,
	       (unsigned long long)after.inline_send_bytes,
	       (unsigned long long)after.inline_recv_bytes,
	       (unsigned long long)after.credits_in_use_max);
	if (inflight) {
		rc = show_inflight(loop, clnt, srv);
		if (rc)
			goto out_err;
	}
	rc = 0;
	goto out;

out_err:
	fprintf(stderr, "rpcrdma-demo: %s\n", failure_text(rc));
	failures++;
out:
	signal(SIGUSR1, SIG_IGN);
	shown_client = NULL;
	shown_server = NULL;
	if (clnt)
		rpcrdma_client_destroy(clnt);
	if (srv)
		rpcrdma_server_destroy(srv);
	if (loop)
		rpcrdma_loop_destroy(loop);
	free(buf.data);
	free(back.data);
	if (failures)
		printf("\nrpcrdma-demo: %d form(s) FAILED\n", failures);
	return failures ? 1 : 0;
}
