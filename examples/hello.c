/*
 * hello: the smallest librpcrdma program, built outside the tree by
 * tests/install (with pkg-config, and with CMake's find_package).
 *
 * One process runs a server and a client of program 0x20000201 on
 * 127.0.0.1: ECHO sends a string and gets it back; FILL asks for N bytes
 * that come back as a DDP-eligible result, in a Write chunk over RDMA.
 *
 *   hello [rdma|tcp]     (default rdma, over the ofi provider)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpcrdma/rpc.h>

#define HELLO_PROG 0x20000201u
#define HELLO_VERS 1u
#define MAX_STR 256u
#define MAX_FILL (1u << 20)

enum { HELLO_NULL, HELLO_ECHO, HELLO_FILL, HELLO_NPROCS };

struct str {
	char s[MAX_STR + 1];
	uint32_t len;
};

struct fill_res {
	uint8_t *data;
	uint32_t len;
};

/* The library's XDR functions: one to encode and one to decode each type. */
static int enc_str(struct rpcrdma_xdr_stream *x, void *o)
{
	struct str *s = o;

	return rpcrdma_xdr_encode_string(x, s->s, s->len);
}

static int dec_str(struct rpcrdma_xdr_stream *x, void *o)
{
	struct str *s = o;

	return rpcrdma_xdr_decode_string(x, s->s, sizeof(s->s), &s->len);
}

static int enc_u32(struct rpcrdma_xdr_stream *x, void *o)
{
	return rpcrdma_xdr_encode_u32(x, *(uint32_t *)o);
}

static int dec_u32(struct rpcrdma_xdr_stream *x, void *o)
{
	return rpcrdma_xdr_decode_u32(x, o);
}

/* DDP-eligible: over RDMA the bytes travel in a Write chunk. */
static int enc_fill_res(struct rpcrdma_xdr_stream *x, void *o)
{
	struct fill_res *r = o;

	return rpcrdma_xdr_encode_ddp(x, r->data, r->len);
}

static int dec_fill_res(struct rpcrdma_xdr_stream *x, void *o)
{
	struct fill_res *r = o;

	return rpcrdma_xdr_decode_ddp(x, r->data, MAX_FILL, &r->len);
}

static int do_echo(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	memcpy(res, args, sizeof(struct str));
	return 0;
}

static int do_fill(struct rpcrdma_svc_req *req, void *args, void *res)
{
	uint32_t n = *(uint32_t *)args;
	struct fill_res *r = res;

	(void)req;
	if (n > MAX_FILL)
		return -RPCRDMA_RPC_GARBAGE_ARGS;
	r->data = malloc(n ? n : 1);
	if (!r->data)
		return -RPCRDMA_RPC_SYSTEM_ERR;
	for (uint32_t i = 0; i < n; i++)
		r->data[i] = (uint8_t)(i * 7u);
	r->len = n;
	return 0;
}

static void free_fill(void *res)
{
	free(((struct fill_res *)res)->data);
}

static const struct rpcrdma_svc_proc procs[HELLO_NPROCS] = {
	[HELLO_ECHO] = { do_echo, dec_str, sizeof(struct str), enc_str, sizeof(struct str), NULL },
	[HELLO_FILL] = { do_fill, dec_u32, sizeof(uint32_t), enc_fill_res,
			 sizeof(struct fill_res), free_fill },
};

int main(int argc, char **argv)
{
	enum rpcrdma_transport t = RPCRDMA_TRANSPORT_RDMA;
	struct rpcrdma_server_opts so;
	struct rpcrdma_client_opts co;
	struct rpcrdma_server *srv = NULL;
	struct rpcrdma_client *clnt = NULL;
	struct rpcrdma_loop *loop = NULL;
	struct str in = { .s = "hello over RPC", .len = 14 }, out;
	struct fill_res got = { 0 };
	uint32_t want = 300000;
	char port[16];
	const char *why = NULL; /* a failed call's cause, in words */
	int rc;

	if (argc > 1 && strcmp(argv[1], "tcp") == 0)
		t = RPCRDMA_TRANSPORT_TCP;
	rc = rpcrdma_loop_create(&loop);
	if (rc)
		goto out;
	rpcrdma_server_opts_default(&so);
	so.transport = t;
	rc = rpcrdma_server_create(loop, "127.0.0.1", "0", &so, &srv);
	if (!rc)
		rc = rpcrdma_server_register(srv, HELLO_PROG, HELLO_VERS, procs, HELLO_NPROCS);
	if (rc)
		goto out;
	snprintf(port, sizeof(port), "%d", rpcrdma_server_port(srv));

	rpcrdma_client_opts_default(&co);
	co.transport = t;
	rc = rpcrdma_client_create(loop, "127.0.0.1", port, HELLO_PROG, HELLO_VERS, &co, &clnt);
	if (rc)
		goto out;

	struct rpcrdma_call echo = { .proc = HELLO_ECHO, .encode_args = enc_str, .args = &in,
				     .decode_res = dec_str, .res = &out };
	rc = rpcrdma_client_call(clnt, &echo);
	if (rc) {
		why = rpcrdma_call_strerror(&echo); /* the cause, beyond the code */
		goto out;
	}
	if (out.len != in.len || memcmp(out.s, in.s, in.len) != 0) {
		rc = -EBADMSG;
		goto out;
	}

	got.data = malloc(MAX_FILL);
	if (!got.data) {
		rc = -ENOMEM;
		goto out;
	}
	struct rpcrdma_call fill = { .proc = HELLO_FILL, .encode_args = enc_u32, .args = &want,
				     .decode_res = dec_fill_res, .res = &got,
				     .ddp_buf = got.data, .ddp_len = MAX_FILL };
	rc = rpcrdma_client_call(clnt, &fill);
	if (rc) {
		why = rpcrdma_call_strerror(&fill);
		goto out;
	}
	for (uint32_t i = 0; i < want; i++)
		if (got.len != want || got.data[i] != (uint8_t)(i * 7u)) {
			rc = -EBADMSG;
			goto out;
		}
	printf("hello (%s): echo \"%s\", %u bytes placed by %s\n",
	       t == RPCRDMA_TRANSPORT_TCP ? "tcp" : "rdma", out.s, got.len,
	       t == RPCRDMA_TRANSPORT_TCP ? "the TCP stream" : "an RDMA Write");
out:
	free(got.data);
	if (clnt)
		rpcrdma_client_destroy(clnt);
	if (srv)
		rpcrdma_server_destroy(srv);
	if (loop)
		rpcrdma_loop_destroy(loop);
	if (rc)
		fprintf(stderr, "hello: %s\n", why ? why : rpcrdma_strerror(rc));
	return rc ? 1 : 0;
}
