/*
 * The NFSv4.1 callback service on the client's own connection (RFC 8881
 * section 20, carried by RFC 8167 over RDMA): CB_NULL, and CB_COMPOUND
 * with CB_SEQUENCE and CB_RECALL.
 *
 * Normal operation: CB_SEQUENCE comes first and names our session, a
 * back-channel slot we offered, and that slot's next sequence id; the
 * CB_RECALLs after it name delegations this session holds.  Each is
 * answered NFS4_OK, marked recalled, and the session is kicked to return
 * it with DELEGRETURN on the fore channel once the answer has gone (the
 * kick runs on the loop's next iteration, after this procedure returns
 * and its reply is sent).
 *
 * Everything else is answered, never dropped:
 *  - a minor version other than 1: NFS4ERR_MINOR_VERS_MISMATCH, no
 *    results (RFC 8881 16.2.3);
 *  - a first operation other than CB_SEQUENCE: NFS4ERR_OP_NOT_IN_SESSION;
 *    CB_SEQUENCE later: NFS4ERR_SEQUENCE_POS;
 *  - an unknown session: NFS4ERR_BADSESSION; a slot beyond those offered:
 *    NFS4ERR_BADSLOT; more operations than we evaluate:
 *    NFS4ERR_TOO_MANY_OPS; a call larger than the back channel's granted
 *    ca_maxrequestsize (or the RPCRDMA_NFS41_CB_MAX_MSG we offered):
 *    NFS4ERR_REQ_TOO_BIG; one whose answer could be larger than its
 *    ca_maxresponsesize: NFS4ERR_REP_TOO_BIG, or, asked to be cached,
 *    than its ca_maxresponsesize_cached: NFS4ERR_REP_TOO_BIG_TO_CACHE (RFC
 *    8881 2.10.6.4; all on CB_SEQUENCE, the slot unmoved); the slot's
 *    current sequence id again: the cached answer (a replay), or
 *    NFS4ERR_SEQ_FALSE_RETRY when the call is not the one it answered,
 *    or NFS4ERR_SEQ_MISORDERED for 0 on a slot not used yet (18.36.3);
 *    any other: NFS4ERR_SEQ_MISORDERED;
 *  - an operation of the protocol we do not implement: NFS4ERR_NOTSUPP;
 *    a number outside it: OP_CB_ILLEGAL with NFS4ERR_OP_ILLEGAL (20.13);
 *  - CB_RECALL of a stateid we do not hold: NFS4ERR_BAD_STATEID, or
 *    NFS4ERR_DELAY while an OPEN is in flight (its answer, carrying that
 *    delegation, may still be on its way: RFC 8881 2.10.6.3);
 *  - CB_RECALL after the server reported a backchannel fault, when no
 *    DELEGRETURN of the delegation is out: NFS4ERR_SERVERFAULT, since none
 *    can be sent any more (the recall is then over for the server, 20.2.4).
 */
#include <errno.h>
#include <string.h>

#include "rpcrdma/nfs4.h"
#include "rpcrdma/rpc_msg.h"

#include "nfs41_session.h"

static bool in_protocol(uint32_t op)
{
	return op >= RPCRDMA_NFS4_OP_CB_GETATTR && op <= RPCRDMA_NFS4_OP_CB_OFFLOAD;
}

static struct s41_deleg *find_deleg(struct rpcrdma_nfs41_session *s,
				    const struct rpcrdma_nfs4_stateid *sid)
{
	for (uint32_t i = 0; i < s->ndelegs; i++) {
		struct s41_deleg *d = &s->delegs[i];

		if (d->state != RPCRDMA_NFS41_DELEG_NONE &&
		    memcmp(d->stateid.other, sid->other, sizeof(sid->other)) == 0)
			return d;
	}
	return NULL;
}

static uint32_t recall(struct rpcrdma_nfs41_session *s, struct rpcrdma_nfs41_cb_op *op)
{
	struct s41_deleg *d = find_deleg(s, &op->arg.recall.stateid);

	if (!d || d->state == RPCRDMA_NFS41_DELEG_RETURNED) {
		s->info.stats.cb_recall_unknown++;
		return !d && s->opens_in_flight ? RPCRDMA_NFS4ERR_DELAY
						: RPCRDMA_NFS4ERR_BAD_STATEID;
	}
	if (d->fh.len != op->arg.recall.fh.len ||
	    memcmp(d->fh.data, op->arg.recall.fh.data, d->fh.len) != 0) {
		s->info.stats.cb_recall_unknown++;
		return RPCRDMA_NFS4ERR_BAD_STATEID;
	}
	/*
	 * After a backchannel fault no DELEGRETURN can go (the session is to
	 * be destroyed), unless one is already out.  NFS4_OK, or DELAY, would
	 * keep the recall in progress on the server, waiting for a return
	 * that cannot come; any other answer ends it (RFC 8881 20.2.4), and
	 * SERVERFAULT, one CB_RECALL may give (15.3), says the fault is ours.
	 * The delegation counts as recalled all the same: the server wants it
	 * back and may revoke it.
	 */
	if (s->faulted && !d->returning) {
		if (d->state == RPCRDMA_NFS41_DELEG_HELD)
			d->state = RPCRDMA_NFS41_DELEG_RECALLED;
		s->info.stats.cb_recalls_faulted++;
		return RPCRDMA_NFS4ERR_SERVERFAULT;
	}
	if (d->state == RPCRDMA_NFS41_DELEG_HELD) {
		d->state = RPCRDMA_NFS41_DELEG_RECALLED;
		rpcrdma__nfs41_kick(s);
	}
	s->info.stats.cb_recalls++;
	return RPCRDMA_NFS4_OK;
}

/*
 * Whether @c asks what @was (the call the slot's cached answer is for)
 * asked: a retry must be the same request (RFC 8881 2.10.6.1.3.1).  Field
 * by field: a struct copy need not keep padding.
 */
static bool same_request(const struct rpcrdma_nfs41_cb_compound *c,
			 const struct rpcrdma_nfs41_cb_compound *was)
{
	if (c->nops != was->nops || c->count != was->count || c->stopped != was->stopped)
		return false;
	for (uint32_t i = 0; i < c->nops; i++) {
		const struct rpcrdma_nfs41_cb_op *a = &c->ops[i], *b = &was->ops[i];

		if (a->op != b->op)
			return false;
		if (a->op == RPCRDMA_NFS4_OP_CB_SEQUENCE &&
		    (a->arg.sequence.highest_slotid != b->arg.sequence.highest_slotid ||
		     a->arg.sequence.cachethis != b->arg.sequence.cachethis ||
		     a->arg.sequence.nreferring != b->arg.sequence.nreferring))
			return false;
		if (a->op == RPCRDMA_NFS4_OP_CB_RECALL &&
		    (a->arg.recall.stateid.seqid != b->arg.recall.stateid.seqid ||
		     memcmp(a->arg.recall.stateid.other, b->arg.recall.stateid.other,
			    sizeof(a->arg.recall.stateid.other)) != 0 ||
		     a->arg.recall.truncate != b->arg.recall.truncate ||
		     a->arg.recall.fh.len != b->arg.recall.fh.len ||
		     memcmp(a->arg.recall.fh.data, b->arg.recall.fh.data, a->arg.recall.fh.len) != 0))
			return false;
	}
	return true;
}

/* A granted size, held to what we offered; 0, granting nothing, is taken
 * as ours, as the operations are below. */
static uint32_t granted(uint32_t v)
{
	return v && v < RPCRDMA_NFS41_CB_MAX_MSG ? v : RPCRDMA_NFS41_CB_MAX_MSG;
}

/*
 * The size of @c's answer, its accepted RPC reply header (24 bytes with
 * the AUTH_NONE verifier) included, should every operation decoded
 * succeed: what evaluating it could send at most.
 */
static uint64_t reply_size(const struct rpcrdma_nfs41_cb_compound *c)
{
	uint64_t n = 24 + 4 + 4 + rpcrdma_xdr_align(c->tag_len) + 4;

	for (uint32_t i = 0; i < c->nops; i++)
		n += 8 + (c->ops[i].op == RPCRDMA_NFS4_OP_CB_SEQUENCE ? 32 : 0);
	return n;
}

/* CB_SEQUENCE: 0 to go on, or the status that ends the compound; *replay
 * when the slot's cached answer is the answer. */
static uint32_t sequence(struct rpcrdma_nfs41_session *s, struct rpcrdma_nfs41_cb_compound *c,
			 bool *replay)
{
	struct rpcrdma_nfs41_cb_op *op = &c->ops[0];
	struct s41_cb_slot *slot;
	uint32_t seq = op->arg.sequence.seqid;

	*replay = false;
	if (!s || !s->established ||
	    memcmp(op->arg.sequence.sessionid, s->info.sessionid, RPCRDMA_NFS4_SESSIONID_SIZE))
		return RPCRDMA_NFS4ERR_BADSESSION;
	if (op->arg.sequence.slotid >= s->ncb_slots)
		return RPCRDMA_NFS4ERR_BADSLOT;
	slot = &s->cb_slots[op->arg.sequence.slotid];
	if (seq == slot->seqid) {
		/* Every answer is cached: only a slot not used yet has none,
		 * and its sequence id 0 stands for an answer of SEQ_MISORDERED
		 * (RFC 8881 18.36.3), not for a call we did not keep. */
		if (!slot->cached)
			return RPCRDMA_NFS4ERR_SEQ_MISORDERED;
		/*
		 * The cached answer is for the operations it was given for:
		 * for others it could say NFS4_OK with fewer results than
		 * operations, which RFC 8881 16.2.3 rules out.
		 */
		if (!same_request(c, &slot->reply))
			return RPCRDMA_NFS4ERR_SEQ_FALSE_RETRY;
		*replay = true;
		return 0;
	}
	if (seq != slot->seqid + 1)
		return RPCRDMA_NFS4ERR_SEQ_MISORDERED;
	/* a server that granted no operations at all has our own limit */
	if (c->count > RPCRDMA_NFS41_CB_MAX_OPS ||
	    (s->info.back.maxoperations && c->count > s->info.back.maxoperations))
		return RPCRDMA_NFS4ERR_TOO_MANY_OPS;
	/*
	 * The back channel's sizes (RFC 8881 2.10.6.4, 18.36.3), checked
	 * here, before anything runs, so that the slot does not move.  The
	 * reply's is its largest: finding out its real size would take
	 * running the recalls.  A server granting no cache (knfsd) does not
	 * ask for one.
	 */
	if (c->call_len > granted(s->info.back.maxrequestsize))
		return RPCRDMA_NFS4ERR_REQ_TOO_BIG;
	if (reply_size(c) > granted(s->info.back.maxresponsesize))
		return RPCRDMA_NFS4ERR_REP_TOO_BIG;
	if (op->arg.sequence.cachethis &&
	    reply_size(c) > (s->info.back.maxresponsesize_cached < RPCRDMA_NFS41_CB_MAX_MSG
				 ? s->info.back.maxresponsesize_cached
				 : RPCRDMA_NFS41_CB_MAX_MSG))
		return RPCRDMA_NFS4ERR_REP_TOO_BIG_TO_CACHE;
	memcpy(op->res.sessionid, s->info.sessionid, RPCRDMA_NFS4_SESSIONID_SIZE);
	op->res.seqid = seq;
	op->res.slotid = op->arg.sequence.slotid;
	op->res.highest_slotid = s->ncb_slots - 1;
	op->res.target_highest_slotid = s->ncb_slots - 1;
	return 0;
}

static void set_result(struct rpcrdma_nfs41_cb_compound *c, uint32_t i, uint32_t status)
{
	c->ops[i].status = status;
	c->nres = i + 1;
	c->status = status;
}

void rpcrdma__nfs41_cb_eval(struct rpcrdma_nfs41_session *s, struct rpcrdma_nfs41_cb_compound *c)
{
	struct s41_cb_slot *slot;
	uint32_t st;
	bool replay;

	c->nres = 0;
	c->status = RPCRDMA_NFS4_OK;
	if (s)
		s->info.stats.cb_compounds++;
	if (c->minorversion != 1) {
		c->status = RPCRDMA_NFS4ERR_MINOR_VERS_MISMATCH;
		if (s)
			s->info.stats.cb_bad++;
		return;
	}
	if (!c->nops)
		return;
	if (c->ops[0].op != RPCRDMA_NFS4_OP_CB_SEQUENCE) {
		bool illegal = !in_protocol(c->ops[0].op);

		if (s)
			s->info.stats.cb_bad++;
		set_result(c, 0, illegal ? RPCRDMA_NFS4ERR_OP_ILLEGAL
					  : RPCRDMA_NFS4ERR_OP_NOT_IN_SESSION);
		return;
	}
	st = sequence(s, c, &replay);
	if (st) {
		if (s)
			s->info.stats.cb_seq_errors++;
		set_result(c, 0, st);
		return;
	}
	slot = &s->cb_slots[c->ops[0].arg.sequence.slotid];
	if (replay) {
		/* The answer we gave, for the operations we gave it for. */
		s->info.stats.cb_replays++;
		c->nres = slot->reply.nres < c->nops ? slot->reply.nres : c->nops;
		for (uint32_t i = 0; i < c->nres; i++) {
			c->ops[i].op = slot->reply.ops[i].op;
			c->ops[i].status = slot->reply.ops[i].status;
			c->ops[i].res = slot->reply.ops[i].res;
		}
		c->status = c->nres ? c->ops[c->nres - 1].status : RPCRDMA_NFS4_OK;
		return;
	}
	set_result(c, 0, RPCRDMA_NFS4_OK);
	for (uint32_t i = 1; i < c->nops; i++) {
		struct rpcrdma_nfs41_cb_op *op = &c->ops[i];

		if (op->op == RPCRDMA_NFS4_OP_CB_RECALL) {
			st = recall(s, op);
		} else if (op->op == RPCRDMA_NFS4_OP_CB_SEQUENCE) {
			st = RPCRDMA_NFS4ERR_SEQUENCE_POS;
		} else if (in_protocol(op->op)) {
			s->info.stats.cb_notsupp++;
			st = RPCRDMA_NFS4ERR_NOTSUPP;
		} else {
			s->info.stats.cb_illegal++;
			st = RPCRDMA_NFS4ERR_OP_ILLEGAL;
		}
		set_result(c, i, st);
		if (st)
			break;
	}
	slot->seqid = c->ops[0].arg.sequence.seqid;
	slot->reply = *c;
	slot->cached = true;
}

static struct rpcrdma_nfs41_session *session_of(struct rpcrdma_svc_req *req)
{
	const struct rpcrdma_rpc_msg *m = rpcrdma_svc_msg(req);

	return m ? rpcrdma__nfs41_session_of(m->u.call.prog) : NULL;
}

static int cb_null(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct rpcrdma_nfs41_session *s = session_of(req);

	(void)args;
	(void)res;
	if (s)
		s->info.stats.cb_null++;
	return 0;
}

static int cb_compound(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct rpcrdma_nfs41_cb_compound *c = res;

	memcpy(c, args, sizeof(*c));
	rpcrdma__nfs41_cb_eval(session_of(req), c);
	return 0;
}

const struct rpcrdma_svc_proc rpcrdma__nfs41_cb_procs[2] = {
    {cb_null, NULL, 0, NULL, 0, NULL},
    {cb_compound, rpcrdma_nfs41_cb_args_dec, sizeof(struct rpcrdma_nfs41_cb_compound),
     rpcrdma_nfs41_cb_res_enc, sizeof(struct rpcrdma_nfs41_cb_compound), NULL},
};
