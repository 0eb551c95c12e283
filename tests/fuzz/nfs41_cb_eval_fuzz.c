/*
 * Fuzz the NFSv4.1 callback service across messages: a series of
 * CB_COMPOUND calls from a hostile server, each decoded as the service
 * decodes it and evaluated against one session whose back-channel slots,
 * reply cache and delegations carry over from call to call (nfs41_fuzz
 * only round-trips the codec, one message at a time).
 *
 * Input: a byte for the session (back-channel slots, the server's
 * ca_maxoperations, OPENs in flight), a byte for the back channel's
 * granted sizes and a backchannel fault, then calls, each a 2-byte length
 * and that many bytes of CB_COMPOUND4args.  What every answer must be:
 *   - encodable (rpcrdma_nfs41_cb_res_enc), or the server would get
 *     SYSTEM_ERR where RFC 8881 has a CB_COMPOUND4res;
 *   - of at most one result per operation decoded, none for another minor
 *     version, and one for each when it says NFS4_OK (16.2.3);
 *   - never NFS4_OK for more operations than the session allows;
 *   - a slot moves on by one sequence id at most per call;
 *   - a new call's CB_SEQUENCE NFS4_OK only for a call within the
 *     granted ca_maxrequestsize, whose answer fits ca_maxresponsesize
 *     and, asked to be cached, ca_maxresponsesize_cached (each held to
 *     what we offer); NFS4ERR_REQ_TOO_BIG only for a call beyond it;
 *   - after a backchannel fault, CB_RECALL NFS4_OK only for a delegation
 *     whose DELEGRETURN is out (RFC 8881 20.2.4: none else can be).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/loop.h"
#include "rpcrdma/nfs4.h"

#include "nfs41_session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NDELEGS 4u

static const uint8_t sessionid[RPCRDMA_NFS4_SESSIONID_SIZE] = {
    0x5e, 0x5e, 0x5e, 0x5e, 0x5e, 0x5e, 0x5e, 0x5e, 0x5e, 0x5e, 0x5e, 0x5e, 0x5e, 0x5e, 0x5e, 0x5e,
};

static struct rpcrdma_loop *loop;

static const uint32_t sizes[4] = {RPCRDMA_NFS41_CB_MAX_MSG, 0, 70, 100};

static void session_init(struct rpcrdma_nfs41_session *s, struct s41_deleg *delegs, uint8_t b,
			 uint8_t b2)
{
	memset(s, 0, sizeof(*s));
	memset(delegs, 0, NDELEGS * sizeof(*delegs));
	s->loop = loop;
	s->established = true;
	memcpy(s->info.sessionid, sessionid, sizeof(sessionid));
	s->ncb_slots = (b & 0x0f) % (RPCRDMA_NFS41_MAX_CB_SLOTS + 1);
	s->info.back.maxoperations = (b >> 4) & 7; /* 0: the server said none */
	s->opens_in_flight = b >> 7;
	s->info.back.maxrequestsize = (b2 & 3) == 3 ? 8192 : sizes[b2 & 3];
	s->info.back.maxresponsesize = sizes[(b2 >> 2) & 3];
	s->info.back.maxresponsesize_cached = sizes[(b2 >> 4) & 3];
	s->faulted = (b2 >> 6) & 1;
	/* so that no kick reaches the loop, which never runs here */
	s->wake_pending = true;
	s->delegs = delegs;
	s->ndelegs = NDELEGS;
	for (uint32_t i = 0; i < NDELEGS; i++) {
		delegs[i].state = RPCRDMA_NFS41_DELEG_HELD;
		delegs[i].stateid.seqid = 1;
		delegs[i].stateid.other[0] = 'D';
		delegs[i].stateid.other[1] = (uint8_t)i;
		delegs[i].fh.len = 1;
		delegs[i].fh.data[0] = (uint8_t)(10 + i);
	}
	delegs[0].returning = b2 >> 7;
}

/* A granted size as the service holds it: to what we offered, 0 as ours
 * (the cache's 0 meaning none). */
static uint32_t limit(uint32_t v, bool cached)
{
	if (!v && !cached)
		return RPCRDMA_NFS41_CB_MAX_MSG;
	return v < RPCRDMA_NFS41_CB_MAX_MSG ? v : RPCRDMA_NFS41_CB_MAX_MSG;
}

static void check_answer(const struct rpcrdma_nfs41_session *s,
			 const struct rpcrdma_nfs41_cb_compound *args,
			 const struct rpcrdma_nfs41_cb_compound *c, const uint32_t *seq_before,
			 bool replay)
{
	static uint8_t out[1 << 14];
	static struct rpcrdma_nfs41_cb_compound copy;
	struct rpcrdma_xdr_stream x;
	size_t reply;

	copy = *c;
	rpcrdma_xdr_init(&x, out, sizeof(out));
	if (rpcrdma_nfs41_cb_res_enc(&x, &copy))
		abort();
	reply = 24 + rpcrdma_xdr_pos(&x); /* an accepted RPC reply's header first */
	if (c->nres && c->ops[0].op == RPCRDMA_NFS4_OP_CB_SEQUENCE) {
		uint32_t st = c->ops[0].status;

		if (st == RPCRDMA_NFS4_OK && !replay &&
		    (args->call_len > limit(s->info.back.maxrequestsize, false) ||
		     reply > limit(s->info.back.maxresponsesize, false) ||
		     (args->ops[0].arg.sequence.cachethis &&
		      reply > limit(s->info.back.maxresponsesize_cached, true))))
			abort();
		if (st == RPCRDMA_NFS4ERR_REQ_TOO_BIG &&
		    args->call_len <= limit(s->info.back.maxrequestsize, false))
			abort();
	}
	for (uint32_t i = 0; s->faulted && i < c->nres; i++) {
		const struct rpcrdma_nfs41_cb_op *op = &args->ops[i];

		if (c->ops[i].op == RPCRDMA_NFS4_OP_CB_RECALL &&
		    c->ops[i].status == RPCRDMA_NFS4_OK &&
		    !(op->arg.recall.stateid.other[0] == 'D' &&
		      op->arg.recall.stateid.other[1] < NDELEGS &&
		      s->delegs[op->arg.recall.stateid.other[1]].returning))
			abort();
	}
	if (c->nres > c->nops)
		abort();
	if (args->minorversion != 1 && c->nres != 0)
		abort();
	if (c->status == RPCRDMA_NFS4_OK && c->nres != c->nops)
		abort();
	if (c->status == RPCRDMA_NFS4_OK && c->nres &&
	    (args->count > RPCRDMA_NFS41_CB_MAX_OPS ||
	     (s->info.back.maxoperations && args->count > s->info.back.maxoperations)))
		abort();
	for (uint32_t i = 0; i < s->ncb_slots; i++)
		if (s->cb_slots[i].seqid != seq_before[i] && s->cb_slots[i].seqid != seq_before[i] + 1)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rpcrdma_nfs41_session s;
	static struct s41_deleg delegs[NDELEGS];
	static struct rpcrdma_nfs41_cb_compound args, c;
	uint32_t seq_before[RPCRDMA_NFS41_MAX_CB_SLOTS];
	uint64_t replays;

	if (!loop && rpcrdma_loop_create(&loop))
		abort();
	if (size < 2)
		return 0;
	session_init(&s, delegs, data[0], data[1]);
	data += 2;
	size -= 2;
	while (size >= 2) {
		size_t len = (size_t)data[0] << 8 | data[1];
		struct rpcrdma_xdr_stream x;

		data += 2;
		size -= 2;
		if (len > size)
			len = size;
		memset(&args, 0, sizeof(args));
		rpcrdma_xdr_init_const(&x, data, len);
		data += len;
		size -= len;
		if (rpcrdma_nfs41_cb_args_dec(&x, &args))
			continue; /* GARBAGE_ARGS: the session is not touched */
		for (uint32_t i = 0; i < RPCRDMA_NFS41_MAX_CB_SLOTS; i++)
			seq_before[i] = s.cb_slots[i].seqid;
		c = args; /* as cb_compound() */
		replays = s.info.stats.cb_replays;
		rpcrdma__nfs41_cb_eval(&s, &c);
		check_answer(&s, &args, &c, seq_before, s.info.stats.cb_replays != replays);
	}
	return 0;
}
