/*
 * A completed call names why it failed: a raw RPC-over-RDMA responder
 * (harness.c) answers the public client's calls with each RDMA_ERROR a
 * server may send (ERR_CHUNK with and without a Reply chunk offered,
 * ERR_VERS and its range, Version Two's ERR_BAD_HEADER and
 * ERR_INVAL_OPTION), with chunks the call did not offer, and with an RPC
 * reply that does not decode; rpcrdma_call_strerror() says which, where
 * the status code alone (RPCRDMA_ERR_TRANSPORT_ERROR, ...) cannot.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "proto/version.h"
#include "rpcrdma/rpc.h"

#define PROG 0x20000779u

/* The text names the cause: each of @w1, @w2 appears in it. */
static int says(const char *text, const char *w1, const char *w2)
{
	fprintf(stderr, "  message: %s\n", text);
	CHECK(text && strstr(text, w1));
	CHECK(!w2 || strstr(text, w2));
	return 0;
}

struct fixture {
	struct env e;
	struct raw srv;
	struct rpcrdma_client *clnt;
	uint8_t pd[RPCRDMA_PROV_PRIVATE_MAX];
};

static int fixture_up(struct fixture *f, uint32_t max_vers)
{
	struct rpcrdma_client_opts co;
	char port_s[16];
	size_t n;
	int port;

	memset(f, 0, sizeof(*f));
	rpcrdma__vmemo_forget(NULL, 0);
	CHECK_OK(rpcrdma_loop_create(&f->e.loop));
	CHECK_OK(raw_open(&f->e, &f->srv, 0));
	n = rpcrdma__xconn_private(TEST_INLINE, TEST_INLINE, false, f->pd, sizeof(f->pd));
	f->srv.accept_pd = f->pd;
	f->srv.accept_pdlen = n;
	CHECK_OK(raw_listen(&f->srv, &port));
	rpcrdma_client_opts_default(&co);
	co.provider = test_provider;
	co.inline_send = co.inline_recv = TEST_INLINE;
	co.max_vers = max_vers;
	co.retries = 1;
	snprintf(port_s, sizeof(port_s), "%d", port);
	CHECK_OK(rpcrdma_client_create(f->e.loop, test_addr, port_s, PROG, 1, &co, &f->clnt));
	return 0;
}

static int fixture_down(struct fixture *f)
{
	rpcrdma_client_destroy(f->clnt);
	for (int i = 0; i < 5; i++)
		pump(&f->e);
	raw_close(&f->srv);
	for (int i = 0; i < 5; i++)
		(void)rpcrdma_loop_run_once(f->e.loop, 0);
	CHECK_OK(rpcrdma_loop_destroy(f->e.loop));
	rpcrdma__vmemo_forget(NULL, 0);
	return 0;
}

static void call_done(struct rpcrdma_call *call, void *ctx)
{
	(void)call;
	*(bool *)ctx = true;
}

/* Starts @call (no arguments, no results) and returns the header of the
 * message the responder got for it in *@h. */
static int call_arrives(struct fixture *f, struct rpcrdma_call *call, bool *done,
			struct rpcrdma_hdr *h)
{
	struct rpcrdma_hdr_fault fault;
	struct raw_msg *m;

	*done = false;
	call->done = call_done;
	call->ctx = done;
	CHECK_OK(rpcrdma_client_call_async(f->clnt, call));
	CHECK((m = raw_wait_msg(&f->srv)));
	CHECK_OK(rpcrdma_hdr_decode(m->data, m->len, NULL, h, &fault));
	CHECK_RC(h->xid, call->xid);
	return 0;
}

static int send_hdr(struct fixture *f, struct rpcrdma_hdr *r, const void *body, size_t len)
{
	uint8_t buf[512];
	int n = rpcrdma_hdr_encode(r, buf, sizeof(buf));

	CHECK(n > 0 && (size_t)n + len <= sizeof(buf));
	if (len)
		memcpy(buf + n, body, len);
	CHECK_OK(raw_send(&f->srv, buf, (size_t)n + len));
	return 0;
}

static int send_error(struct fixture *f, uint32_t xid, uint32_t vers, uint32_t err, uint32_t low,
		      uint32_t high)
{
	struct rpcrdma_hdr r;

	rpcrdma_hdr_init(&r, xid, vers, 8, RPCRDMA_PROC_ERROR);
	r.err = err;
	r.vers_low = low;
	r.vers_high = high;
	return send_hdr(f, &r, NULL, 0);
}

/* The call ends with @status; its text has @w1 and @w2. */
static int ends_with(struct fixture *f, struct rpcrdma_call *call, bool *done, int status,
		     const char *w1, const char *w2)
{
	WAIT(&f->e, *done);
	CHECK(*done);
	CHECK_RC(call->status, status);
	CHECK_OK(says(rpcrdma_call_strerror(call), w1, w2));
	return 0;
}

/* ERR_CHUNK: with no Reply chunk offered, the text says so and what to
 * set; with one, its size.  The status stays RPCRDMA_ERR_TRANSPORT_ERROR. */
static int case_err_chunk(void)
{
	struct rpcrdma_call call;
	struct rpcrdma_hdr h;
	struct fixture f;
	bool done;

	CHECK_OK(fixture_up(&f, 1));
	memset(&call, 0, sizeof(call));
	CHECK_OK(call_arrives(&f, &call, &done, &h));
	CHECK(!h.has_reply);
	CHECK_OK(send_error(&f, h.xid, 1, RPCRDMA_ERR_CHUNK, 0, 0));
	CHECK_OK(ends_with(&f, &call, &done, RPCRDMA_ERR_TRANSPORT_ERROR, "(RDMA_ERROR ERR_CHUNK)",
			   "no Reply chunk offered (set call->max_reply"));

	memset(&call, 0, sizeof(call));
	call.max_reply = 100000;
	CHECK_OK(call_arrives(&f, &call, &done, &h));
	CHECK(h.has_reply);
	CHECK_OK(send_error(&f, h.xid, 1, RPCRDMA_ERR_CHUNK, 0, 0));
	CHECK_OK(ends_with(&f, &call, &done, RPCRDMA_ERR_TRANSPORT_ERROR, "ERR_CHUNK",
			   "Reply chunk offered (raise call->max_reply)"));
	/* The detail belongs to the status it came with. */
	call.status = -ETIMEDOUT;
	CHECK(strcmp(rpcrdma_call_strerror(&call), rpcrdma_strerror(-ETIMEDOUT)) == 0);
	return fixture_down(&f);
}

/* ERR_VERS naming no version this client speaks: the server's range. */
static int case_err_vers(void)
{
	struct rpcrdma_call call;
	struct rpcrdma_hdr h;
	struct fixture f;
	bool done;

	CHECK_OK(fixture_up(&f, 1));
	memset(&call, 0, sizeof(call));
	CHECK_OK(call_arrives(&f, &call, &done, &h));
	CHECK_OK(send_error(&f, h.xid, 1, RPCRDMA_ERR_VERS, 3, 4));
	CHECK_OK(ends_with(&f, &call, &done, RPCRDMA_ERR_TRANSPORT_ERROR, "versions 3 to 4 only",
			   "ERR_VERS"));
	return fixture_down(&f);
}

/* Version Two: code 2 is ERR_BAD_HEADER there; ERR_INVAL_OPTION answers
 * only an RDMA_OPTIONAL, never a call. */
static int case_v2_errors(void)
{
	struct rpcrdma_call call;
	struct rpcrdma_hdr h;
	struct fixture f;
	bool done;

	CHECK_OK(fixture_up(&f, 2));
	memset(&call, 0, sizeof(call));
	CHECK_OK(call_arrives(&f, &call, &done, &h));
	CHECK_RC(h.vers, 2);
	CHECK_OK(send_error(&f, h.xid, 2, RPCRDMA_ERR_CHUNK, 0, 0));
	CHECK_OK(ends_with(&f, &call, &done, RPCRDMA_ERR_TRANSPORT_ERROR, "ERR_BAD_HEADER",
			   "Version Two"));
	/* Settled on Two: the properties exchange goes first; leave it. */
	memset(&call, 0, sizeof(call));
	call.done = call_done;
	call.ctx = &done;
	done = false;
	CHECK_OK(rpcrdma_client_call_async(f.clnt, &call));
	for (;;) {
		struct rpcrdma_hdr_fault fault;
		struct raw_msg *m = raw_wait_msg(&f.srv);

		CHECK(m);
		CHECK_OK(rpcrdma_hdr_decode(m->data, m->len, NULL, &h, &fault));
		if (h.xid == call.xid)
			break;
	}
	CHECK_OK(send_error(&f, h.xid, 2, RPCRDMA_ERR_INVAL_OPTION, 0, 0));
	CHECK_OK(ends_with(&f, &call, &done, RPCRDMA_ERR_TRANSPORT_ERROR, "ERR_INVAL_OPTION",
			   "Version Two"));
	return fixture_down(&f);
}

/* A reply whose chunks are not those offered: which rule it broke. */
static int case_reply_chunks(void)
{
	struct rpcrdma_call call;
	struct rpcrdma_hdr h, r;
	struct fixture f;
	bool done;

	CHECK_OK(fixture_up(&f, 1));
	memset(&call, 0, sizeof(call));
	CHECK_OK(call_arrives(&f, &call, &done, &h));
	CHECK_RC(h.nwrites, 0);
	/* A Write chunk the call never offered, on an otherwise good reply. */
	rpcrdma_hdr_init(&r, h.xid, 1, 8, RPCRDMA_PROC_MSG);
	r.nwrites = 1;
	r.writes[0] = (struct rpcrdma_chunk){.first = 0, .nsegs = 1};
	r.nsegs = 1;
	r.segs[0] = (struct rpcrdma_segment){.handle = 0x1234, .length = 0, .offset = 0};
	{
		uint32_t w[6] = {htobe32(h.xid), htobe32(1), 0, 0, 0, 0};

		CHECK_OK(send_hdr(&f, &r, w, sizeof(w)));
	}
	CHECK_OK(ends_with(&f, &call, &done, RPCRDMA_ERR_BAD_HEADER, "does not match the chunks",
			   "Write list has another number of chunks"));
	return fixture_down(&f);
}

/* An RPC reply that does not decode: where it stopped. */
static int case_bad_reply(void)
{
	struct rpcrdma_call call;
	struct rpcrdma_hdr h, r;
	struct fixture f;
	uint8_t body[12];
	bool done;

	CHECK_OK(fixture_up(&f, 1));
	memset(&call, 0, sizeof(call));
	CHECK_OK(call_arrives(&f, &call, &done, &h));
	rpcrdma_hdr_init(&r, h.xid, 1, 8, RPCRDMA_PROC_MSG);
	/* xid, REPLY, then reply_stat 7: no such status. */
	{
		uint32_t w[3] = {htobe32(h.xid), htobe32(1), htobe32(7)};

		memcpy(body, w, sizeof(w));
	}
	CHECK_OK(send_hdr(&f, &r, body, sizeof(body)));
	WAIT(&f.e, done);
	CHECK(done);
	CHECK(call.status < 0);
	CHECK_OK(says(rpcrdma_call_strerror(&call), "the RPC reply header does not decode",
		      "12-byte RPC reply"));
	return fixture_down(&f);
}

static const struct {
	const char *name;
	int (*fn)(void);
} cases[] = {
    {"rdma_error_err_chunk", case_err_chunk}, {"rdma_error_err_vers", case_err_vers},
    {"rdma_error_v2", case_v2_errors},        {"rdma_error_reply_chunks", case_reply_chunks},
    {"rdma_error_bad_reply", case_bad_reply},
};

int main(int argc, char **argv)
{
	int fails = 0;

	signal(SIGPIPE, SIG_IGN);
	alarm(120);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
			continue;
		if (cases[i].fn()) {
			fprintf(stderr, "%s: FAIL\n", cases[i].name);
			fails++;
		} else {
			fprintf(stderr, "%s: ok\n", cases[i].name);
		}
	}
	return fails ? 1 : 0;
}
