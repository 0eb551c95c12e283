/*
 * RPC-over-RDMA Version Two negotiation end to end through the public API
 * (draft-cel-nfsv4-rpcrdma-version-two-00 section 5): part of e2e_test.c,
 * whose procedures and helpers it reuses.  Each case builds its own server
 * with a version range and a client with a highest version to offer, and
 * reads the outcome from the counters (vers_two_msgs, vers_fallbacks,
 * rdma_errors_*) and the message forms.  The memory of Version One peers is
 * process-wide and keyed by address and port; every case starts by
 * forgetting it, and servers listen on fresh ports.
 */
#include "proto/version.h"

/* Credits the next env_up_vers() server grants (0: the default). */
static uint32_t vers_srv_credits;

/* A server serving @srv_min..@srv_max and a client offering @clnt_max. */
static int env_up_vers(struct env *e, uint32_t srv_min, uint32_t srv_max, uint32_t clnt_max,
		       char *port, size_t port_len)
{
	struct rpcrdma_server_opts so;
	struct rpcrdma_client_opts co;

	memset(e, 0, sizeof(*e));
	rpcrdma__vmemo_forget(NULL, 0);
	CHECK_RC(rpcrdma_loop_create(&e->loop), 0);
	rpcrdma_server_opts_default(&so);
	so.provider = test_provider;
	so.min_vers = srv_min;
	so.max_vers = srv_max;
	so.credits = vers_srv_credits;
	CHECK_RC(rpcrdma_server_create(e->loop, test_addr, "0", &so, &e->srv), 0);
	CHECK_RC(rpcrdma_server_register(e->srv, PROG, VERS, procs, P_NPROCS), 0);
	snprintf(port, port_len, "%d", rpcrdma_server_port(e->srv));
	rpcrdma_client_opts_default(&co);
	co.provider = test_provider;
	co.max_vers = clnt_max;
	co.timeout_ms = 20000;
	CHECK_RC(rpcrdma_client_create(e->loop, test_addr, port, PROG, VERS, &co, &e->clnt), 0);
	CHECK_RC(rpcrdma_client_connect(e->clnt), 0);
	return 0;
}

/* Every message form once: inline, Read chunks, Long Call, Write chunk,
 * Reply chunk, Long Reply. */
static int all_forms(struct rpcrdma_client *clnt)
{
	static const uint32_t sizes[] = {0, 5, 1000, 4001, 65537, 500000};
	struct echo in = {.data = malloc(BIG)}, out = {.data = malloc(BIG)};

	CHECK(in.data && out.data);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		CHECK_RC(echo_call(clnt, &in, &out, sizes[i]), 0);
	CHECK_RC(blob_call(clnt, 300000, 5), 0);
	CHECK_RC(blob_call(clnt, 5, 300000), 0);
	CHECK_RC(blob_call(clnt, 3000, 3000), 0);
	free(in.data);
	free(out.data);
	return 0;
}

/* Version Two both ends: every call and reply in Version Two. */
static int case_v2_both(void)
{
	struct rpcrdma_xprt_stats cs, ss;
	char port[16];
	struct env e;

	CHECK_RC(env_up_vers(&e, 1, 2, 2, port, sizeof(port)), 0);
	CHECK_RC(all_forms(e.clnt), 0);
	CHECK_RC(rpcrdma_client_stats(e.clnt, &cs), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK(cs.calls_sent > 8);
	CHECK_RC(cs.vers_two_msgs, cs.calls_sent);
	CHECK_RC(ss.vers_two_msgs, ss.calls_sent);
	CHECK_RC(cs.vers_fallbacks, 0);
	CHECK_RC(cs.rdma_errors_received, 0);
	CHECK_RC(ss.rdma_errors_sent, 0);
	CHECK(cs.long_calls && cs.read_chunk_msgs && cs.write_chunk_msgs && cs.long_replies);
	/* The transport properties exchange went once, after the probe. */
	CHECK_RC(ss.optional_msgs, 1);
	CHECK_RC(cs.bad_msgs, 0);
	CHECK_RC(ss.bad_msgs, 0);
	CHECK_RC(env_down(&e), 0);
	return 0;
}

/*
 * A Version Two client against a server configured for Version One only:
 * the probe is refused with ERR_VERS, sent again in Version One, and every
 * call of a burst started before the answer completes.
 */
static int case_v2_to_v1_server(void)
{
	enum { N = 48 };
	struct async_echo *a = calloc(N, sizeof(*a));
	struct rpcrdma_xprt_stats cs, ss;
	char port[16];
	struct env e;

	CHECK(a);
	CHECK_RC(env_up_vers(&e, 1, 1, 2, port, sizeof(port)), 0);
	for (int i = 0; i < N; i++) {
		CHECK_RC(prep_echo(&a[i], (uint32_t)i * 911u % 9000u, (uint32_t)i, 9000), 0);
		CHECK_RC(rpcrdma_client_call_async(e.clnt, &a[i].call), 0);
	}
	CHECK_RC(pump_until(&e, a, N), 0);
	for (int i = 0; i < N; i++)
		CHECK_RC(a[i].call.status, 0);
	CHECK_RC(all_forms(e.clnt), 0);
	CHECK_RC(rpcrdma_client_stats(e.clnt, &cs), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK_RC(cs.vers_fallbacks, 1);
	CHECK_RC(cs.rdma_errors_received, 1);
	CHECK_RC(ss.rdma_errors_sent, 1);
	CHECK_RC(cs.vers_two_msgs, 1);                  /* the probe only */
	CHECK_RC(ss.vers_two_msgs, 1);                  /* ERR_VERS, echoing the probe's version */
	CHECK_RC(cs.calls_sent, cs.calls_received + 1); /* the refused probe */
	CHECK_RC(ss.optional_msgs, 0);
	CHECK_RC(cs.bad_msgs, 0);
	free_echoes(a, N);
	CHECK_RC(env_down(&e), 0);
	return 0;
}

/* A Version One client against the default (1..2) server: Version One
 * throughout, nothing refused. */
static int case_v1_to_v2_server(void)
{
	struct rpcrdma_xprt_stats cs, ss;
	char port[16];
	struct env e;

	CHECK_RC(env_up_vers(&e, 0, 0, 0, port, sizeof(port)), 0);
	CHECK_RC(all_forms(e.clnt), 0);
	CHECK_RC(rpcrdma_client_stats(e.clnt, &cs), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK_RC(cs.vers_two_msgs, 0);
	CHECK_RC(ss.vers_two_msgs, 0);
	CHECK_RC(cs.rdma_errors_received, 0);
	CHECK_RC(ss.rdma_errors_sent, 0);
	CHECK_RC(env_down(&e), 0);
	return 0;
}

/*
 * Inline thresholds after negotiation, with no RFC 8797 private data on
 * either side so that the versions' defaults apply: a 3 KiB call goes
 * inline once Version Two is agreed (4096), and as a Long Call after the
 * fall back to Version One (1024).  The probe itself is a 3 KiB call too:
 * it may not exceed 1024 bytes, so it is a Long Call in both runs.
 */
static int inline_run(uint32_t srv_max, uint64_t *long_calls, uint64_t *inline_msgs)
{
	struct rpcrdma_xprt_stats before, after;
	char port[16];
	struct env e;

	CHECK_RC(env_up_vers(&e, 1, srv_max, 2, port, sizeof(port)), 0);
	CHECK_RC(blob_call(e.clnt, 3072, 16), 0); /* the probe */
	CHECK_RC(rpcrdma_client_stats(e.clnt, &before), 0);
	CHECK_RC(before.long_calls, 1);
	for (int i = 0; i < 4; i++)
		CHECK_RC(blob_call(e.clnt, 3072, 16), 0);
	CHECK_RC(rpcrdma_client_stats(e.clnt, &after), 0);
	*long_calls = after.long_calls - before.long_calls;
	*inline_msgs = after.inline_msgs - before.inline_msgs;
	CHECK_RC(env_down(&e), 0);
	return 0;
}

static int case_v2_inline_threshold(void)
{
	uint64_t long_calls, inline_msgs;
	int rc;

	rpcrdma__xprt_omit_private = true;
	rc = inline_run(2, &long_calls, &inline_msgs);
	if (!rc && (long_calls != 0 || inline_msgs != 4)) {
		fprintf(stderr, "v2: long %llu inline %llu\n", (unsigned long long)long_calls,
			(unsigned long long)inline_msgs);
		rc = 1;
	}
	if (!rc)
		rc = inline_run(1, &long_calls, &inline_msgs);
	if (!rc && (long_calls != 4 || inline_msgs != 0)) {
		fprintf(stderr, "v1: long %llu inline %llu\n", (unsigned long long)long_calls,
			(unsigned long long)inline_msgs);
		rc = 1;
	}
	rpcrdma__xprt_omit_private = false;
	return rc;
}

/*
 * The transport properties exchange end to end, with no RFC 8797 private
 * data and 8 KiB inline sizes at both ends: Version Two's default is 4096,
 * and only the exchange tells each end that the other takes 8 KiB.  After
 * the probe and one more call, a 6 KiB call and a 6 KiB reply go inline;
 * before, the call was a Long Call.
 */
static int case_v2_properties(void)
{
	struct rpcrdma_xprt_stats before, after, ss;
	struct rpcrdma_server_opts so;
	struct rpcrdma_client_opts co;
	struct rpcrdma_call call;
	char port[16];
	struct env e;
	int rc = 1;

	memset(&e, 0, sizeof(e));
	rpcrdma__vmemo_forget(NULL, 0);
	rpcrdma__xprt_omit_private = true;
	CHECK_RC(rpcrdma_loop_create(&e.loop), 0);
	rpcrdma_server_opts_default(&so);
	so.provider = test_provider;
	so.inline_send = so.inline_recv = 8192;
	CHECK_RC(rpcrdma_server_create(e.loop, test_addr, "0", &so, &e.srv), 0);
	CHECK_RC(rpcrdma_server_register(e.srv, PROG, VERS, procs, P_NPROCS), 0);
	snprintf(port, sizeof(port), "%d", rpcrdma_server_port(e.srv));
	rpcrdma_client_opts_default(&co);
	co.provider = test_provider;
	co.max_vers = 2;
	co.inline_send = co.inline_recv = 8192;
	co.timeout_ms = 20000;
	CHECK_RC(rpcrdma_client_create(e.loop, test_addr, port, PROG, VERS, &co, &e.clnt), 0);
	/* The probe, as a 6 KiB call: a Long Call (at most 1024 bytes). */
	if (blob_call(e.clnt, 6000, 16))
		goto out;
	/* One more: the exchange's answer arrives before its reply. */
	call_init(&call, P_NULL, NULL, NULL, NULL, NULL);
	CHECK_RC(rpcrdma_client_call(e.clnt, &call), 0);
	CHECK_RC(rpcrdma_client_stats(e.clnt, &before), 0);
	CHECK_RC(before.long_calls, 1);
	for (int i = 0; i < 4; i++) {
		if (blob_call(e.clnt, 6000, 6000))
			goto out;
	}
	CHECK_RC(rpcrdma_client_stats(e.clnt, &after), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK_RC(after.long_calls - before.long_calls, 0);
	CHECK_RC(after.inline_msgs - before.inline_msgs, 4);
	CHECK_RC(after.long_replies, 0);
	CHECK_RC(after.reply_chunk_msgs, 0);
	CHECK_RC(ss.optional_msgs, 1);
	CHECK_RC(ss.rdma_errors_sent, 0);
	CHECK_RC(after.bad_msgs, 0);
	rc = 0;
out:
	rpcrdma__xprt_omit_private = false;
	CHECK_RC(env_down(&e), 0);
	return rc;
}

/*
 * A pipeline whose every done() makes the next call, against a server
 * granting @credits: the properties exchange still goes once Version Two
 * is settled, though the next call comes from the very reply that settles
 * it and, sent at once (rpcrdma__clnt_send_now), would take the only
 * credit each time; and no done() runs inside call_async.
 */
struct chain {
	struct rpcrdma_client *clnt;
	struct rpcrdma_call calls[16];
	int next, finished, failed, inside;
};

static void chain_done(struct rpcrdma_call *call, void *ctx)
{
	struct chain *ch = ctx;

	ch->failed += ch->inside || call->status;
	ch->finished++;
	if (ch->next < 16) {
		struct rpcrdma_call *c = &ch->calls[ch->next++];

		call_init(c, P_NULL, NULL, NULL, NULL, NULL);
		c->done = chain_done;
		c->ctx = ch;
		ch->inside++;
		ch->failed += rpcrdma_client_call_async(ch->clnt, c) != 0;
		ch->inside--;
	}
}

static int props_in_pipeline(uint32_t credits)
{
	struct rpcrdma_xprt_stats ss;
	static struct chain ch;
	char port[16];
	struct env e;
	int rc;

	memset(&ch, 0, sizeof(ch));
	vers_srv_credits = credits;
	rc = env_up_vers(&e, 1, 2, 2, port, sizeof(port));
	vers_srv_credits = 0;
	CHECK_RC(rc, 0);
	ch.clnt = e.clnt;
	call_init(&ch.calls[0], P_NULL, NULL, NULL, NULL, NULL);
	ch.calls[0].done = chain_done;
	ch.calls[0].ctx = &ch;
	ch.next = 1;
	CHECK_RC(rpcrdma_client_call_async(e.clnt, &ch.calls[0]), 0);
	while (ch.finished < 16)
		CHECK(rpcrdma_loop_run_once(e.loop, 1000) >= 0);
	/* The exchange's answer may still be on its way. */
	for (int i = 0; i < 100; i++) {
		CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
		if (ss.optional_msgs)
			break;
		(void)rpcrdma_loop_run_once(e.loop, 10);
	}
	CHECK_RC(ch.failed, 0);
	CHECK_RC(ss.optional_msgs, 1);
	CHECK_RC(ss.rdma_errors_sent, 0);
	CHECK_RC(env_down(&e), 0);
	return 0;
}

static int case_v2_props_pipeline(void)
{
	CHECK_RC(props_in_pipeline(1), 0);
	CHECK_RC(props_in_pipeline(2), 0);
	CHECK_RC(props_in_pipeline(32), 0);
	return 0;
}

/*
 * The memory of a Version One peer: after the fall back, a reconnection
 * and a second client to the same address start in Version One (no second
 * ERR_VERS); once forgotten, the next connection probes again.
 */
static int case_v2_peer_memory(void)
{
	struct rpcrdma_xprt_stats cs, ss;
	struct rpcrdma_client_opts co;
	struct rpcrdma_client *second;
	struct rpcrdma_call call;
	char port[16];
	struct env e;

	CHECK_RC(env_up_vers(&e, 1, 1, 2, port, sizeof(port)), 0);
	call_init(&call, P_NULL, NULL, NULL, NULL, NULL);
	CHECK_RC(rpcrdma_client_call(e.clnt, &call), 0);
	for (int i = 0; i < 3; i++) {
		rpcrdma__client_disconnect(e.clnt);
		CHECK_RC(blob_call(e.clnt, 100, 100), 0);
	}
	rpcrdma_client_opts_default(&co);
	co.provider = test_provider;
	co.max_vers = 2;
	CHECK_RC(rpcrdma_client_create(e.loop, test_addr, port, PROG, VERS, &co, &second), 0);
	CHECK_RC(rpcrdma_client_call(second, &call), 0);
	CHECK_RC(rpcrdma_client_stats(e.clnt, &cs), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK(cs.reconnects >= 3);
	CHECK_RC(cs.vers_fallbacks, 1);
	CHECK_RC(cs.vers_two_msgs, 1);
	CHECK_RC(ss.rdma_errors_sent, 1);
	CHECK_RC(rpcrdma_client_stats(second, &cs), 0);
	CHECK_RC(cs.vers_two_msgs, 0);
	CHECK_RC(cs.vers_fallbacks, 0);
	/* An administrator's "the peer was upgraded": probe again. */
	rpcrdma__vmemo_forget(NULL, 0);
	rpcrdma__client_disconnect(second);
	CHECK_RC(rpcrdma_client_call(second, &call), 0);
	CHECK_RC(rpcrdma_client_stats(second, &cs), 0);
	CHECK_RC(cs.vers_two_msgs, 1);
	CHECK_RC(cs.vers_fallbacks, 1);
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK_RC(ss.rdma_errors_sent, 2);
	rpcrdma_client_destroy(second);
	CHECK_RC(env_down(&e), 0);
	return 0;
}

/* Version Two requires bidirectional operation (draft 4.2): forward and
 * reverse calls interleaved on a Version Two connection. */
static int case_v2_bidir(void)
{
	int rc;

	rpcrdma__vmemo_forget(NULL, 0);
	g_clnt_max_vers = 2;
	rc = case_bidir_interleave();
	g_clnt_max_vers = 0;
	if (!rc && g_v2_checked != 1)
		rc = 1;
	return rc;
}

/*
 * Reverse replies on a Version Two connection use its thresholds: the
 * client's callback responder took the probe's 1024-byte cap when it was
 * attached, and must move to Version Two's 4096 with its owner.  A reverse
 * call whose 3000-byte reply fits 4096, with no Reply chunk offered, is
 * answered inline; with the cap left in place it would get ERR_CHUNK.
 */
static int case_v2_bidir_inline(void)
{
	struct rpcrdma_xprt_stats cs, ss;
	struct blob in = {.want = 3000, .len = 3000};
	struct blob out = {.want = 3000};
	struct rpcrdma_call call;
	struct env e;

	rpcrdma__vmemo_forget(NULL, 0);
	g_clnt_max_vers = 2;
	if (bidir_up(&e, true, false)) {
		g_clnt_max_vers = 0;
		return 1;
	}
	g_clnt_max_vers = 0;
	CHECK_RC(setup_call(&e, SETUP_ENABLE), 0);
	in.data = malloc(in.len);
	out.data = malloc(out.want + 1);
	CHECK(in.data && out.data);
	for (uint32_t k = 0; k < in.len; k++)
		in.data[k] = pat(in.len, k);
	for (int i = 0; i < 3; i++) {
		call_init(&call, CB_BLOB, blob_enc, &in, res_blob_dec, &out);
		call.max_reply = 128 + out.want;
		CHECK_RC(rpcrdma_backchannel_call(g_bc, &call), 0);
		CHECK_RC(out.len, 3000);
		for (uint32_t k = 0; k < out.len; k++)
			CHECK(out.data[k] == pat(out.len + 1, k));
	}
	free(in.data);
	free(out.data);
	CHECK_RC(rpcrdma_client_stats(e.clnt, &cs), 0);
	CHECK_RC(rpcrdma_server_stats(e.srv, &ss), 0);
	CHECK_RC(cs.vers_two_msgs, cs.calls_sent);
	CHECK_RC(ss.rev_calls, 3);
	CHECK_RC(cs.rev_errors + ss.rev_errors, 0);
	CHECK_RC(cs.rev_long_msgs + ss.rev_long_msgs, 0);
	CHECK_RC(env_down(&e), 0);
	return 0;
}
