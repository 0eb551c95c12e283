/*
 * Every public function that takes a pointer, given NULL where one is
 * required: it returns its header's error (-EINVAL, or 0 / NULL / nothing
 * for those that return a size, a pointer or void) rather than crash.
 * Each call runs in a child process, so a crash names the function
 * instead of ending the whole test.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "rpcrdma/backchannel.h"
#include "rpcrdma/cm_private.h"
#include "rpcrdma/debug.h"
#include "rpcrdma/header.h"
#include "rpcrdma/loop.h"
#include "rpcrdma/mem.h"
#include "rpcrdma/nfs3.h"
#include "rpcrdma/nfs4.h"
#include "rpcrdma/rpc.h"
#include "rpcrdma/rpc_msg.h"
#include "rpcrdma/rpcbind.h"
#include "rpcrdma/trace.h"
#include "rpcrdma/xdr.h"

static unsigned int failures;

/* cmocka's handlers would turn a crash in the child into a test failure
 * that runs the rest of the suite there. */
static void child_signals(void)
{
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
}

/* Run @expr in a child; it must not crash and must make @ok true. */
#define CHECK(ok_expr, call)                                                                       \
	do {                                                                                       \
		pid_t pid_ = fork();                                                               \
		int st_;                                                                           \
		assert_true(pid_ >= 0);                                                            \
		if (pid_ == 0) {                                                                   \
			long rc_;                                                                  \
			child_signals();                                                           \
			rc_ = (long)(call);                                                        \
			_exit((ok_expr) ? 0 : 1);                                                  \
		}                                                                                  \
		assert_int_equal(waitpid(pid_, &st_, 0), pid_);                                    \
		if (WIFSIGNALED(st_)) {                                                            \
			print_error("%s: killed by signal %d\n", #call, WTERMSIG(st_));            \
			failures++;                                                                \
		} else if (WEXITSTATUS(st_) != 0) {                                                \
			print_error("%s: wrong result (want %s)\n", #call, #ok_expr);              \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

#define EINVAL_OF(call) CHECK(rc_ == -EINVAL, call)
#define ZERO_OF(call) CHECK(rc_ == 0, call)
/* A void function: only that it returns. */
#define RETURNS(call) CHECK(rc_ == 0, ((call), 0))
#define NULL_OF(call) CHECK(rc_ == 0, (intptr_t)(call))

static void finish(void)
{
	unsigned int n = failures;

	failures = 0;
	if (n)
		fail_msg("%u call(s) mishandled a NULL pointer", n);
}

static void test_header_h(void **state)
{
	static struct rpcrdma_hdr hdr, bad;
	static struct rpcrdma_hdr_fault fault;
	static struct rpcrdma_segment seg;
	static struct rpcrdma_chunk chunk;
	static uint8_t buf[64];
	struct rpcrdma_xdr_stream x;

	(void)state;
	rpcrdma_xdr_init(&x, buf, sizeof(buf));
	RETURNS(rpcrdma_hdr_limits_default(NULL));
	EINVAL_OF(rpcrdma_hdr_decode(buf, sizeof(buf), NULL, NULL, &fault));
	EINVAL_OF(rpcrdma_hdr_decode(buf, sizeof(buf), NULL, &hdr, NULL));
	CHECK(rc_ == RPCRDMA_ERR_DROP, rpcrdma_hdr_decode(NULL, 100, NULL, &hdr, &fault));
	ZERO_OF(rpcrdma_hdr_encoded_size(NULL));
	EINVAL_OF(rpcrdma_hdr_encode(NULL, buf, sizeof(buf)));
	rpcrdma_hdr_init(&hdr, 1, 1, 1, RPCRDMA_PROC_MSG);
	EINVAL_OF(rpcrdma_hdr_encode(&hdr, NULL, sizeof(buf)));
	EINVAL_OF(rpcrdma_hdr_encode_xdr(NULL, &x));
	EINVAL_OF(rpcrdma_hdr_encode_xdr(&hdr, NULL));
	RETURNS(rpcrdma_hdr_init(NULL, 1, 1, 1, RPCRDMA_PROC_MSG));
	EINVAL_OF(rpcrdma_hdr_add_read(NULL, 0, &seg));
	EINVAL_OF(rpcrdma_hdr_add_read(&hdr, 0, NULL));
	EINVAL_OF(rpcrdma_hdr_add_write(NULL, &seg, 1));
	EINVAL_OF(rpcrdma_hdr_add_write(&hdr, NULL, 1));
	EINVAL_OF(rpcrdma_hdr_set_reply(NULL, &seg, 1));
	EINVAL_OF(rpcrdma_hdr_set_reply(&hdr, NULL, 1));
	NULL_OF(rpcrdma_hdr_chunk_seg(NULL, &chunk, 0));
	NULL_OF(rpcrdma_hdr_chunk_seg(&hdr, NULL, 0));
	EINVAL_OF(rpcrdma_hdr_init_error(NULL, &bad, RPCRDMA_HDR_REPLY_ERR_CHUNK, 1, 2, 1));
	EINVAL_OF(rpcrdma_hdr_init_error(&hdr, NULL, RPCRDMA_HDR_REPLY_ERR_CHUNK, 1, 2, 1));
	finish();
}

static void test_xdr_h(void **state)
{
	static uint8_t buf[64];
	static struct iovec iov = {buf, sizeof(buf)};
	struct rpcrdma_xdr_stream x;
	uint32_t u32 = 0;
	uint64_t u64 = 0;
	int32_t i32 = 0;
	int64_t i64 = 0;
	bool b = false;
	const void *ref = NULL;
	char s[16];

	(void)state;
	/* A stream whose bytes would decode: only the NULL can refuse. */
	memset(buf, 0, sizeof(buf));
	rpcrdma_xdr_init(&x, buf, sizeof(buf));
	RETURNS(rpcrdma_xdr_init(NULL, buf, sizeof(buf)));
	RETURNS(rpcrdma_xdr_init_const(NULL, buf, sizeof(buf)));
	EINVAL_OF(rpcrdma_xdr_init_iov(NULL, &iov, 1));
	ZERO_OF(rpcrdma_xdr_pos(NULL));
	ZERO_OF(rpcrdma_xdr_remaining(NULL));
	RETURNS(rpcrdma_xdr_set_ddp(NULL, NULL));
	NULL_OF(rpcrdma_xdr_inline(NULL, 4));
	EINVAL_OF(rpcrdma_xdr_skip(NULL, 4));

	EINVAL_OF(rpcrdma_xdr_decode_u32(NULL, &u32));
	EINVAL_OF(rpcrdma_xdr_decode_u32(&x, NULL));
	EINVAL_OF(rpcrdma_xdr_decode_i32(NULL, &i32));
	EINVAL_OF(rpcrdma_xdr_decode_i32(&x, NULL));
	EINVAL_OF(rpcrdma_xdr_decode_u64(NULL, &u64));
	EINVAL_OF(rpcrdma_xdr_decode_u64(&x, NULL));
	EINVAL_OF(rpcrdma_xdr_decode_i64(NULL, &i64));
	EINVAL_OF(rpcrdma_xdr_decode_i64(&x, NULL));
	EINVAL_OF(rpcrdma_xdr_decode_bool(NULL, &b));
	EINVAL_OF(rpcrdma_xdr_decode_bool(&x, NULL));
	EINVAL_OF(rpcrdma_xdr_decode_enum(NULL, &i32));
	EINVAL_OF(rpcrdma_xdr_decode_enum(&x, NULL));
	EINVAL_OF(rpcrdma_xdr_decode_optional(NULL, &b));
	EINVAL_OF(rpcrdma_xdr_decode_optional(&x, NULL));
	EINVAL_OF(rpcrdma_xdr_decode_fixed_opaque(NULL, s, 4));
	EINVAL_OF(rpcrdma_xdr_decode_fixed_opaque(&x, NULL, 4));
	EINVAL_OF(rpcrdma_xdr_decode_opaque(NULL, s, sizeof(s), &u32));
	EINVAL_OF(rpcrdma_xdr_decode_opaque(&x, NULL, sizeof(s), &u32));
	EINVAL_OF(rpcrdma_xdr_decode_opaque(&x, s, sizeof(s), NULL));
	EINVAL_OF(rpcrdma_xdr_decode_opaque_len(NULL, 16, &u32));
	EINVAL_OF(rpcrdma_xdr_decode_opaque_len(&x, 16, NULL));
	EINVAL_OF(rpcrdma_xdr_decode_opaque_ref(NULL, 16, &ref, &u32));
	EINVAL_OF(rpcrdma_xdr_decode_opaque_ref(&x, 16, NULL, &u32));
	EINVAL_OF(rpcrdma_xdr_decode_opaque_ref(&x, 16, &ref, NULL));
	EINVAL_OF(rpcrdma_xdr_decode_string(NULL, s, sizeof(s), &u32));
	EINVAL_OF(rpcrdma_xdr_decode_string(&x, NULL, sizeof(s), &u32));
	EINVAL_OF(rpcrdma_xdr_decode_string(&x, s, sizeof(s), NULL));
	EINVAL_OF(rpcrdma_xdr_decode_array_len(NULL, 16, 4, &u32));
	EINVAL_OF(rpcrdma_xdr_decode_array_len(&x, 16, 4, NULL));
	EINVAL_OF(rpcrdma_xdr_decode_ddp(NULL, s, sizeof(s), &u32));
	EINVAL_OF(rpcrdma_xdr_decode_ddp(&x, NULL, sizeof(s), &u32));
	EINVAL_OF(rpcrdma_xdr_decode_ddp(&x, s, sizeof(s), NULL));
	EINVAL_OF(rpcrdma_xdr_decode_ddp_ref(NULL, 16, &ref, &u32));
	EINVAL_OF(rpcrdma_xdr_decode_ddp_ref(&x, 16, NULL, &u32));
	EINVAL_OF(rpcrdma_xdr_decode_ddp_ref(&x, 16, &ref, NULL));

	EINVAL_OF(rpcrdma_xdr_encode_u32(NULL, 1));
	EINVAL_OF(rpcrdma_xdr_encode_i32(NULL, 1));
	EINVAL_OF(rpcrdma_xdr_encode_u64(NULL, 1));
	EINVAL_OF(rpcrdma_xdr_encode_i64(NULL, 1));
	EINVAL_OF(rpcrdma_xdr_encode_bool(NULL, true));
	EINVAL_OF(rpcrdma_xdr_encode_enum(NULL, 1));
	EINVAL_OF(rpcrdma_xdr_encode_optional(NULL, true));
	EINVAL_OF(rpcrdma_xdr_encode_fixed_opaque(NULL, s, 4));
	EINVAL_OF(rpcrdma_xdr_encode_fixed_opaque(&x, NULL, 4));
	EINVAL_OF(rpcrdma_xdr_encode_opaque(NULL, s, 4));
	EINVAL_OF(rpcrdma_xdr_encode_opaque(&x, NULL, 4));
	EINVAL_OF(rpcrdma_xdr_encode_string(NULL, "abc", 3));
	EINVAL_OF(rpcrdma_xdr_encode_string(&x, NULL, 3));
	EINVAL_OF(rpcrdma_xdr_encode_array_len(NULL, 1));
	EINVAL_OF(rpcrdma_xdr_encode_ddp(NULL, s, 4));
	EINVAL_OF(rpcrdma_xdr_encode_ddp(&x, NULL, 4));
	finish();
}

/* A failed call leaves the stream where it was: nothing was consumed. */
static void test_xdr_null_consumes_nothing(void **state)
{
	static uint8_t buf[16] = {0, 0, 0, 4, 'a', 'b', 'c', 'd'};
	struct rpcrdma_xdr_stream x;
	uint32_t len;

	(void)state;
	rpcrdma_xdr_init(&x, buf, sizeof(buf));
	assert_int_equal(rpcrdma_xdr_decode_opaque(&x, NULL, 8, &len), -EINVAL);
	assert_int_equal(rpcrdma_xdr_decode_string(&x, NULL, 8, &len), -EINVAL);
	assert_int_equal(rpcrdma_xdr_decode_u32(&x, NULL), -EINVAL);
	assert_int_equal(rpcrdma_xdr_pos(&x), 0);
	/* A zero-length item needs no buffer. */
	assert_int_equal(rpcrdma_xdr_encode_opaque(&x, NULL, 0), 0);
	assert_int_equal(rpcrdma_xdr_pos(&x), 4);
}

static void test_rpc_msg_h(void **state)
{
	static uint8_t buf[256];
	static struct rpcrdma_rpc_msg msg;
	static struct rpcrdma_rpc_call call;
	static struct rpcrdma_rpc_reply reply;
	static struct rpcrdma_opaque_auth auth;
	static struct rpcrdma_auth_sys sys;
	struct rpcrdma_xdr_stream x;

	(void)state;
	rpcrdma_xdr_init(&x, buf, sizeof(buf));
	rpcrdma_auth_none(&call.cred);
	rpcrdma_auth_none(&call.verf);
	EINVAL_OF(rpcrdma_rpc_decode_msg(NULL, &msg));
	EINVAL_OF(rpcrdma_rpc_decode_msg(&x, NULL));
	EINVAL_OF(rpcrdma_rpc_encode_call(NULL, 1, &call));
	EINVAL_OF(rpcrdma_rpc_encode_call(&x, 1, NULL));
	EINVAL_OF(rpcrdma_rpc_encode_reply(NULL, 1, &reply));
	EINVAL_OF(rpcrdma_rpc_encode_reply(&x, 1, NULL));
	RETURNS(rpcrdma_auth_none(NULL));
	EINVAL_OF(rpcrdma_auth_sys_encode(NULL, &auth));
	EINVAL_OF(rpcrdma_auth_sys_encode(&sys, NULL));
	EINVAL_OF(rpcrdma_auth_sys_decode(NULL, &sys));
	EINVAL_OF(rpcrdma_auth_sys_decode(&auth, NULL));
	finish();
}

static void test_cm_private_h(void **state)
{
	static struct rpcrdma_cm_private pd;
	static uint8_t buf[64];

	(void)state;
	EINVAL_OF(rpcrdma_cm_private_encode(NULL, buf, sizeof(buf)));
	EINVAL_OF(rpcrdma_cm_private_encode(&pd, NULL, sizeof(buf)));
	RETURNS(rpcrdma_cm_private_decode(buf, sizeof(buf), NULL));
	RETURNS(rpcrdma_cm_private_decode(NULL, sizeof(buf), &pd));
	finish();
}

static void test_loop_rpc_h(void **state)
{
	static struct rpcrdma_xprt_stats st;
	static struct rpcrdma_call call;
	static struct rpcrdma_call_info ci;
	static struct rpcrdma_svc_call_info si;
	unsigned int busy;

	(void)state;
	EINVAL_OF(rpcrdma_loop_create(NULL));
	EINVAL_OF(rpcrdma_loop_destroy(NULL));
	EINVAL_OF(rpcrdma_loop_fd(NULL));
	EINVAL_OF(rpcrdma_loop_run_once(NULL, 0));
	EINVAL_OF(rpcrdma_loop_run(NULL));
	RETURNS(rpcrdma_loop_stop(NULL));
	EINVAL_OF(rpcrdma_loop_wake(NULL, NULL, NULL));
	/* The clock needs no loop. */
	CHECK(rc_ != 0, rpcrdma_loop_now(NULL));

	RETURNS(rpcrdma_client_opts_default(NULL));
	RETURNS(rpcrdma_server_opts_default(NULL));
	EINVAL_OF(rpcrdma_client_create(NULL, "127.0.0.1", "1", 1, 1, NULL, NULL));
	EINVAL_OF(rpcrdma_client_connect(NULL));
	RETURNS(rpcrdma_client_destroy(NULL));
	EINVAL_OF(rpcrdma_client_call(NULL, &call));
	EINVAL_OF(rpcrdma_client_call_async(NULL, &call));
	CHECK(rc_ != 0, rpcrdma_call_strerror(NULL));
	EINVAL_OF(rpcrdma_client_stats(NULL, &st));
	EINVAL_OF(rpcrdma_client_conn_stats(NULL, 0, &st));
	EINVAL_OF(rpcrdma_server_create(NULL, "127.0.0.1", "0", NULL, NULL));
	EINVAL_OF(rpcrdma_server_register(NULL, 1, 1, NULL, 0));
	EINVAL_OF(rpcrdma_server_register2(NULL, 1, 1, NULL, 0, NULL, NULL));
	EINVAL_OF(rpcrdma_server_set_idempotent(NULL, 1, 1, 0, true));
	EINVAL_OF(rpcrdma_server_port(NULL));
	EINVAL_OF(rpcrdma_server_stats(NULL, &st));
	EINVAL_OF(rpcrdma_server_destroy(NULL));
	NULL_OF(rpcrdma_svc_cred(NULL));
	NULL_OF(rpcrdma_svc_peer(NULL));
	NULL_OF(rpcrdma_svc_prog_ctx(NULL));
	NULL_OF(rpcrdma_svc_msg(NULL));
	NULL_OF(rpcrdma_svc_loop(NULL));
	EINVAL_OF(rpcrdma_svc_reply(NULL, 0));

	EINVAL_OF(rpcrdma_client_inflight(NULL, &ci, 1));
	EINVAL_OF(rpcrdma_client_inflight_write(NULL, 2));
	EINVAL_OF(rpcrdma_server_inflight(NULL, &si, 1, &busy));
	EINVAL_OF(rpcrdma_server_inflight_write(NULL, 2));

	EINVAL_OF(rpcrdma_mem_register(NULL, 4096, NULL));
	EINVAL_OF(rpcrdma_mem_deregister(NULL));
	finish();
}

static void test_backchannel_h(void **state)
{
	static struct rpcrdma_call call;
	static struct rpcrdma_xprt_stats st;
	struct rpcrdma_backchannel *bc;

	(void)state;
	RETURNS(rpcrdma_callback_opts_default(NULL));
	EINVAL_OF(rpcrdma_client_register_callback(NULL, 1, 1, NULL, 0, NULL));
	EINVAL_OF(rpcrdma_svc_backchannel(NULL, NULL, &bc));
	EINVAL_OF(rpcrdma_backchannel_bind(NULL, NULL));
	EINVAL_OF(rpcrdma_backchannel_enable(NULL, true));
	EINVAL_OF(rpcrdma_backchannel_call(NULL, &call));
	EINVAL_OF(rpcrdma_backchannel_call_async(NULL, &call));
	EINVAL_OF(rpcrdma_backchannel_stats(NULL, &st));
	RETURNS(rpcrdma_backchannel_release(NULL));
	finish();
}

static void test_rpcbind_trace_h(void **state)
{
	static struct sockaddr_storage ss;
	socklen_t sl;
	char buf[64];
	uint32_t mask;

	(void)state;
	EINVAL_OF(rpcrdma_rpcbind_set(NULL, 1, 1, "tcp", "127.0.0.1.0.1", "", NULL));
	EINVAL_OF(rpcrdma_rpcbind_unset(NULL, 1, 1, "tcp", "127.0.0.1.0.1", "", NULL));
	EINVAL_OF(rpcrdma_rpcbind_getaddr(NULL, 1, 1, "tcp", buf, sizeof(buf), NULL));
	EINVAL_OF(rpcrdma_rpcbind_uaddr_parse(NULL, &ss, &sl));
	EINVAL_OF(rpcrdma_rpcbind_uaddr_parse("127.0.0.1.0.1", NULL, &sl));
	EINVAL_OF(rpcrdma_rpcbind_uaddr_parse("127.0.0.1.0.1", &ss, NULL));
	EINVAL_OF(rpcrdma_rpcbind_uaddr(NULL, buf, sizeof(buf)));
	EINVAL_OF(
	    rpcrdma_server_rpcbind_register(NULL, NULL, 1, 1, RPCRDMA_TRANSPORT_TCP, 2, NULL));
	EINVAL_OF(
	    rpcrdma_server_rpcbind_unregister(NULL, NULL, 1, 1, RPCRDMA_TRANSPORT_TCP, 2, NULL));
	EINVAL_OF(rpcrdma_trace_parse(NULL, &mask));
	EINVAL_OF(rpcrdma_trace_parse("error", NULL));
	EINVAL_OF(rpcrdma_trace_format(NULL, buf, sizeof(buf)));
	finish();
}

static void test_nfs_h(void **state)
{
	static struct rpcrdma_nfs4_compound c;
	static struct rpcrdma_nfs41_file f;
	static struct rpcrdma_nfs4_fattr fa;
	static struct rpcrdma_nfs41_session_info si;
	static uint8_t sid[RPCRDMA_NFS4_SESSIONID_SIZE];
	uint8_t buf[64];
	uint32_t len;
	bool eof;
	struct rpcrdma_xdr_stream x;

	(void)state;
	rpcrdma_xdr_init(&x, buf, sizeof(buf));
	EINVAL_OF(rpcrdma_nfs3_call(NULL, 0, NULL, NULL));
	EINVAL_OF(rpcrdma_mount3_mnt(NULL, "127.0.0.1", "1", "/", NULL, NULL));
	EINVAL_OF(rpcrdma_mount3_xdr_path_enc(NULL, NULL));
	EINVAL_OF(rpcrdma_mount3_xdr_path_dec(NULL, NULL));
	EINVAL_OF(rpcrdma_mount3_xdr_mnt_res_enc(NULL, NULL));
	EINVAL_OF(rpcrdma_mount3_xdr_mnt_res_dec(NULL, NULL));
	EINVAL_OF(rpcrdma_mount3_xdr_export_res_enc(NULL, NULL));
	EINVAL_OF(rpcrdma_mount3_xdr_empty_list_enc(NULL, NULL));
	EINVAL_OF(rpcrdma_mount3_xdr_path_enc(&x, NULL));
	EINVAL_OF(rpcrdma_mount3_xdr_mnt_res_enc(&x, NULL));

	/* Every procedure's codecs, both ways; NULL's void ones need no object. */
	for (uint32_t p = 0; p < RPCRDMA_NFS3_NPROCS; p++) {
		rpcrdma_xdr_fn fns[4] = {rpcrdma_nfs3_encode_args(p), rpcrdma_nfs3_decode_args(p),
					 rpcrdma_nfs3_encode_res(p), rpcrdma_nfs3_decode_res(p)};
		static uint8_t obj[8192];

		for (int i = 0; i < 4; i++) {
			assert_non_null(fns[i]);
			EINVAL_OF(fns[i](NULL, obj));
			if (p != RPCRDMA_NFS3_NULL)
				EINVAL_OF(fns[i](&x, NULL));
		}
	}

	RETURNS(rpcrdma_nfs4_compound_init(NULL));
	NULL_OF(rpcrdma_nfs4_putrootfh(NULL));
	NULL_OF(rpcrdma_nfs4_putfh(NULL, NULL));
	NULL_OF(rpcrdma_nfs4_lookup(NULL, "a"));
	NULL_OF(rpcrdma_nfs4_getfh(NULL));
	NULL_OF(rpcrdma_nfs4_getattr(NULL, NULL, 0));
	NULL_OF(rpcrdma_nfs4_read(NULL, NULL, 0, 1, buf, sizeof(buf)));
	NULL_OF(rpcrdma_nfs4_readlink(NULL, buf, sizeof(buf)));
	NULL_OF(rpcrdma_nfs4_sequence(NULL));
	NULL_OF(rpcrdma_nfs4_exchange_id(NULL, sid, "o", 1, 0));
	NULL_OF(rpcrdma_nfs4_create_session(NULL, 1, 1, 0, NULL, NULL, 0));
	NULL_OF(rpcrdma_nfs4_bind_conn_to_session(NULL, sid, 0, false));
	NULL_OF(rpcrdma_nfs4_destroy_session(NULL, sid));
	NULL_OF(rpcrdma_nfs4_destroy_clientid(NULL, 1));
	NULL_OF(rpcrdma_nfs4_reclaim_complete(NULL, false));
	NULL_OF(rpcrdma_nfs4_open(NULL, 1, 1, "o", 1, "n"));
	NULL_OF(rpcrdma_nfs4_close(NULL, NULL));
	NULL_OF(rpcrdma_nfs4_delegreturn(NULL, NULL));
	rpcrdma_nfs4_compound_init(&c);
	NULL_OF(rpcrdma_nfs4_putfh(&c, NULL));
	NULL_OF(rpcrdma_nfs4_lookup(&c, NULL));
	NULL_OF(rpcrdma_nfs4_getattr(&c, NULL, 1));
	NULL_OF(rpcrdma_nfs4_exchange_id(&c, NULL, "o", 1, 0));
	NULL_OF(rpcrdma_nfs4_exchange_id(&c, sid, NULL, 1, 0));
	NULL_OF(rpcrdma_nfs4_create_session(&c, 1, 1, 0, NULL, NULL, 0));
	NULL_OF(rpcrdma_nfs4_bind_conn_to_session(&c, NULL, 0, false));
	NULL_OF(rpcrdma_nfs4_destroy_session(&c, NULL));
	NULL_OF(rpcrdma_nfs4_open(&c, 1, 1, NULL, 1, "n"));
	NULL_OF(rpcrdma_nfs4_close(&c, NULL));
	NULL_OF(rpcrdma_nfs4_delegreturn(&c, NULL));
	EINVAL_OF(rpcrdma_nfs4_compound_call(NULL, &c));
	ZERO_OF(rpcrdma_nfs4_compound_max_reply(NULL));
	EINVAL_OF(rpcrdma_nfs4_compound_args_enc(NULL, &c));
	EINVAL_OF(rpcrdma_nfs4_compound_args_enc(&x, NULL));
	EINVAL_OF(rpcrdma_nfs4_compound_args_dec(NULL, &c));
	EINVAL_OF(rpcrdma_nfs4_compound_args_dec(&x, NULL));
	EINVAL_OF(rpcrdma_nfs4_compound_res_enc(NULL, &c));
	EINVAL_OF(rpcrdma_nfs4_compound_res_enc(&x, NULL));
	EINVAL_OF(rpcrdma_nfs4_compound_res_dec(NULL, &c));
	EINVAL_OF(rpcrdma_nfs4_compound_res_dec(&x, NULL));
	EINVAL_OF(rpcrdma_nfs41_cb_args_enc(NULL, &c));
	EINVAL_OF(rpcrdma_nfs41_cb_args_enc(&x, NULL));
	EINVAL_OF(rpcrdma_nfs41_cb_args_dec(NULL, &c));
	EINVAL_OF(rpcrdma_nfs41_cb_args_dec(&x, NULL));
	EINVAL_OF(rpcrdma_nfs41_cb_res_enc(NULL, &c));
	EINVAL_OF(rpcrdma_nfs41_cb_res_enc(&x, NULL));
	EINVAL_OF(rpcrdma_nfs41_cb_res_dec(NULL, &c));
	EINVAL_OF(rpcrdma_nfs41_cb_res_dec(&x, NULL));
	RETURNS(rpcrdma_nfs41_session_opts_default(NULL));
	EINVAL_OF(rpcrdma_nfs41_session_create(NULL, NULL, NULL, NULL));
	EINVAL_OF(rpcrdma_nfs41_session_destroy(NULL));
	RETURNS(rpcrdma_nfs41_compound_init(NULL, &c));
	RETURNS(rpcrdma_nfs41_compound_init(NULL, NULL));
	EINVAL_OF(rpcrdma_nfs41_compound_call(NULL, &c));
	EINVAL_OF(rpcrdma_nfs41_open(NULL, NULL, "n", 1, &f));
	EINVAL_OF(rpcrdma_nfs41_read(NULL, &f, 0, 1, buf, &len, &eof));
	EINVAL_OF(rpcrdma_nfs41_delegreturn(NULL, &f));
	EINVAL_OF(rpcrdma_nfs41_close(NULL, &f));
	RETURNS(rpcrdma_nfs41_deleg_state(NULL, &f));
	EINVAL_OF(rpcrdma_nfs41_session_run(NULL, 0));
	EINVAL_OF(rpcrdma_nfs41_session_bind(NULL));
	EINVAL_OF(rpcrdma_nfs41_session_info(NULL, &si));
	EINVAL_OF(rpcrdma_nfs4_fattr_decode(NULL, &fa));
	CHECK(rc_ == 0, rpcrdma_nfs4_bitmap_isset(NULL, 1));
	finish();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_header_h),
	    cmocka_unit_test(test_xdr_h),
	    cmocka_unit_test(test_xdr_null_consumes_nothing),
	    cmocka_unit_test(test_rpc_msg_h),
	    cmocka_unit_test(test_cm_private_h),
	    cmocka_unit_test(test_loop_rpc_h),
	    cmocka_unit_test(test_backchannel_h),
	    cmocka_unit_test(test_rpcbind_trace_h),
	    cmocka_unit_test(test_nfs_h),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
