/*
 * Fuzz the NFSv4.1 callback service across messages: a series of
 * CB_COMPOUND calls from a hostile server, each decoded as the service
 * decodes it and evaluated against one session whose back-channel slots,
 * reply cache and delegations carry over from call to call (nfs41_fuzz
 * only round-trips the codec, one message at a time).
 *
 * Input: a byte for the session (back-channel slots, the server's
 * ca_maxoperations, OPENs in flight), then calls, each a 2-byte length and
 * that many bytes of CB_COMPOUND4args.  What every answer must be:
 *   - encodable (rpcrdma_nfs41_cb_res_enc), or the server would get
 *     SYSTEM_ERR where RFC 8881 has a CB_COMPOUND4res;
 *   - of at most one result per operation decoded, none for another minor
 *     version, and one for each when it says NFS4_OK (16.2.3);
 *   - never NFS4_OK for more operations than the session allows;
 *   - a slot moves on by one sequence id at most per call.
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

static void session_init(struct rpcrdma_nfs41_session *s, struct s41_deleg *delegs, uint8_t b)
{
	memset(s, 0, sizeof(*s));
	memset(delegs, 0, NDELEGS * sizeof(*delegs));
	s->loop = loop;
	s->established = true;
	memcpy(s->info.sessionid, sessionid, sizeof(sessionid));
	s->ncb_slots = (b & 0x0f) % (RPCRDMA_NFS41_MAX_CB_SLOTS + 1);
	s->info.back.maxoperations = (b >> 4) & 7; /* 0: the server said none */
	s->opens_in_flight = b >> 7;
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
}

static void check_answer(const struct rpcrdma_nfs41_session *s,
			 const struct rpcrdma_nfs41_cb_compound *args,
			 const struct rpcrdma_nfs41_cb_compound *c, const uint32_t *seq_before)
{
	static uint8_t out[1 << 13];
	struct rpcrdma_nfs41_cb_compound copy = *c;
	struct rpcrdma_xdr_stream x;

	rpcrdma_xdr_init(&x, out, sizeof(out));
	if (rpcrdma_nfs41_cb_res_enc(&x, &copy))
		abort();
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

	if (!loop && rpcrdma_loop_create(&loop))
		abort();
	if (size < 1)
		return 0;
	session_init(&s, delegs, data[0]);
	data++;
	size--;
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
		rpcrdma__nfs41_cb_eval(&s, &c);
		check_answer(&s, &args, &c, seq_before);
	}
	return 0;
}
