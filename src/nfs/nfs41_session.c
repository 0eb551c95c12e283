/*
 * The NFSv4.1 session (RFC 8881 section 2.10): its creation, the fore
 * channel's slot table, and the work a session does by itself.
 *
 * Normal operation: every COMPOUND begins with SEQUENCE on a free slot
 * (below the server's target), with the slot's next sequence id; a reply
 * whose SEQUENCE succeeded, echoing the session, slot and sequence id
 * sent, moves the slot on (one that echoes others fails the call).
 * Calls that find no free slot wait in a queue, in order.  NFS4ERR_DELAY
 * and NFS4ERR_GRACE are retried after a pause (the slot has moved on
 * unless SEQUENCE itself said DELAY), until opts.grace_wait_ms.  OPEN,
 * CLOSE and DELEGRETURN ask the server to cache their reply
 * (sa_cachethis), so that a retransmission after a lost connection gets
 * the answer, not a second execution.
 *
 * Recovery:
 *  - A call that fails without an answer leaves its slot's sequence id
 *    unknown: the slot is retired (slots_lost).  Calls use a slot below
 *    the server's target, else below its highest slot; with none of those
 *    left and no call out the session is unusable
 *    (RPCRDMA_ERR_NFS41_NO_SLOT), and calls fail rather than wait.
 *  - A SEQUENCE reply with SEQ4_STATUS_BACKCHANNEL_FAULT ends the
 *    session's use (RFC 8881 18.46.3): calls out finish, later ones fail
 *    with RPCRDMA_ERR_NFS41_SESSION, and the application destroys it and
 *    creates another.
 *  - When the client has reconnected (its reconnects counter moved), or a
 *    SEQUENCE reply says the callback path is down, the session sends
 *    BIND_CONN_TO_SESSION (CDFC4_FORE_OR_BOTH) on the current connection,
 *    and holds calls not yet sent until it is answered, so that the
 *    server may call back on the new connection.  Calls that were in
 *    flight at the loss are retransmitted by the RPC client itself, with
 *    their XIDs, before the session gets to run: Linux binds a connection
 *    to the fore channel of a SP4_NONE session on its first SEQUENCE, so
 *    they are served.
 *  - A recalled delegation is returned by an asynchronous COMPOUND
 *    (SEQUENCE, PUTFH, DELEGRETURN) started from the loop.
 *
 * The session finds itself from a callback through a process-wide table
 * keyed by its callback program number (each session has its own).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rpcrdma/nfs4.h"

#include "common/trace.h"
#include "nfs41_session.h"
#include "rpc/loop_internal.h"
#include "nfs4_codec.h"

#define REGISTRY_MAX 64u
#define RETRY_MIN_MS 100u
#define RETRY_MAX_MS 2000u
#define WAIT_SLICE_MS 50
#define DESTROY_DRAIN_MS 30000u
#define NFS4ERR_COMPLETE_ALREADY 10054u

/* One fore-channel COMPOUND of the session. */
struct s41_call {
	struct rpcrdma_nfs41_session *s;
	struct rpcrdma_nfs4_compound *c;
	struct rpcrdma_call call;
	struct rpcrdma_ddp_buf chunks[RPCRDMA_CALL_MAX_WRITE_CHUNKS];
	bool sequenced; /* SEQUENCE first (BIND_CONN_TO_SESSION has none) */
	bool cachethis;
	bool is_open;
	int slot;
	uint64_t deadline, retry_at;
	unsigned int tries;
	bool done;
	int rc;
	void (*fin)(struct s41_call *sc);
	void *ctx;
	struct s41_call *next;
};

/*
 * The registry: cb_program -> session.
 */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint32_t prog;
	struct rpcrdma_nfs41_session *s;
} registry[REGISTRY_MAX];
static uint32_t next_prog = RPCRDMA_NFS4_CALLBACK_PROGRAM;
static unsigned int owner_seq;

struct rpcrdma_nfs41_session *rpcrdma__nfs41_session_of(uint32_t prog)
{
	struct rpcrdma_nfs41_session *s = NULL;

	pthread_mutex_lock(&reg_lock);
	for (uint32_t i = 0; i < REGISTRY_MAX; i++)
		if (registry[i].s && registry[i].prog == prog)
			s = registry[i].s;
	pthread_mutex_unlock(&reg_lock);
	return s;
}

static int reg_add(struct rpcrdma_nfs41_session *s, uint32_t want)
{
	int rc = -ENOSPC;

	pthread_mutex_lock(&reg_lock);
	if (!want) {
		/* the next number no live session uses */
		for (uint32_t tries = 0; tries < REGISTRY_MAX + 1 && !want; tries++) {
			uint32_t p = next_prog++;
			bool used = false;

			for (uint32_t i = 0; i < REGISTRY_MAX; i++)
				used |= registry[i].s && registry[i].prog == p;
			if (!used)
				want = p;
		}
	}
	for (uint32_t i = 0; i < REGISTRY_MAX && want; i++)
		if (registry[i].s && registry[i].prog == want) {
			want = 0;
			rc = -EEXIST;
		}
	for (uint32_t i = 0; i < REGISTRY_MAX && want; i++) {
		if (!registry[i].s) {
			registry[i].prog = want;
			registry[i].s = s;
			s->info.cb_program = want;
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	return rc;
}

static void reg_del(struct rpcrdma_nfs41_session *s)
{
	pthread_mutex_lock(&reg_lock);
	for (uint32_t i = 0; i < REGISTRY_MAX; i++)
		if (registry[i].s == s)
			registry[i].s = NULL;
	pthread_mutex_unlock(&reg_lock);
}

/*
 * The fore channel's engine.
 */
static void start(struct rpcrdma_nfs41_session *s, struct s41_call *sc);
static void background(struct rpcrdma_nfs41_session *s);

static void finish(struct s41_call *sc, int rc)
{
	struct rpcrdma_nfs41_session *s = sc->s;

	sc->done = true;
	sc->rc = rc;
	if (sc->is_open && s->opens_in_flight)
		s->opens_in_flight--;
	if (sc->fin) {
		s->in_flight--;
		sc->fin(sc);
	}
}

static void enqueue(struct rpcrdma_nfs41_session *s, struct s41_call *sc)
{
	sc->next = NULL;
	if (s->wait_tail)
		s->wait_tail->next = sc;
	else
		s->wait_head = sc;
	s->wait_tail = sc;
}

/* Start what waits and may go: in order, as long as slots are free. */
static void kick_waiting(struct rpcrdma_nfs41_session *s)
{
	uint64_t now = rpcrdma_loop_now(s->loop);
	struct s41_call *list = s->wait_head;

	s->wait_head = s->wait_tail = NULL;
	while (list) {
		struct s41_call *sc = list;

		list = sc->next;
		if (sc->retry_at > now || (s->binding && sc->sequenced))
			enqueue(s, sc);
		else
			start(s, sc);
	}
}

static unsigned int backoff_ms(unsigned int tries)
{
	unsigned int ms = RETRY_MIN_MS << (tries < 5 ? tries : 5);

	return ms < RETRY_MAX_MS ? ms : RETRY_MAX_MS;
}

/*
 * Whether SEQUENCE's result answers the arguments we sent: RFC 8881
 * 18.46.3 has the server echo the session, sequence and slot ids.  Any
 * other is the answer to some other call (a confused or hostile server,
 * a reply cache gone wrong), and moving our slot on by it would take the
 * slot out of step with the server's.
 */
static bool sequence_echoed(const struct rpcrdma_nfs4_op *seq)
{
	return memcmp(seq->res.sequence.sessionid, seq->arg.sequence.sessionid,
		      RPCRDMA_NFS4_SESSIONID_SIZE) == 0 &&
	       seq->res.sequence.seqid == seq->arg.sequence.seqid &&
	       seq->res.sequence.slotid == seq->arg.sequence.slotid;
}

static void on_done(struct rpcrdma_call *call, void *ctx)
{
	struct s41_call *sc = ctx;
	struct rpcrdma_nfs41_session *s = sc->s;
	struct rpcrdma_nfs4_compound *c = sc->c;
	uint64_t now = rpcrdma_loop_now(s->loop);
	bool retry = false;

	if (sc->slot >= 0)
		s->slots[sc->slot].busy = false;
	if (call->status) {
		if (sc->slot >= 0) {
			s->slots[sc->slot].lost = true;
			s->info.stats.slots_lost++;
		}
		finish(sc, call->status);
		kick_waiting(s);
		return;
	}
	s->info.stats.compounds++;
	if (sc->sequenced && c->nres >= 1) {
		struct rpcrdma_nfs4_op *seq = &c->ops[0];

		if (seq->status == RPCRDMA_NFS4_OK && !sequence_echoed(seq))
			goto out_bad_sequence;
		if (seq->status == RPCRDMA_NFS4_OK) {
			uint32_t flags = seq->res.sequence.status_flags;

			s->slots[sc->slot].seqid++;
			s->target = seq->res.sequence.target_highest_slotid + 1;
			if (s->target > s->nslots || s->target == 0)
				s->target = s->nslots;
			s->highest = seq->res.sequence.highest_slotid + 1;
			if (s->highest > s->nslots || s->highest == 0)
				s->highest = s->nslots;
			if (flags & RPCRDMA_SEQ4_STATUS_BACKCHANNEL_FAULT) {
				/* RFC 8881 18.46.3: the client stops sending on the
				 * fore channel, lets what is out finish, and
				 * destroys the session; a new bind would not do. */
				s->info.stats.backchannel_faults += !s->faulted;
				s->faulted = true;
			} else if ((flags & (RPCRDMA_SEQ4_STATUS_CB_PATH_DOWN |
					     RPCRDMA_SEQ4_STATUS_CB_PATH_DOWN_SESSION)) &&
				   !s->opts.no_backchannel) {
				s->info.stats.cb_path_down++;
				s->need_bind = true;
			}
		} else if (seq->status != RPCRDMA_NFS4ERR_DELAY) {
			s->info.stats.seq_errors++;
		}
	}
	if ((c->status == RPCRDMA_NFS4ERR_DELAY || c->status == RPCRDMA_NFS4ERR_GRACE) &&
	    now < sc->deadline)
		retry = true;
	if (retry) {
		s->info.stats.retries++;
		sc->retry_at = now + backoff_ms(sc->tries++);
		enqueue(s, sc);
	} else {
		finish(sc, 0);
	}
	kick_waiting(s);
	if (s->need_bind && !s->binding)
		rpcrdma__nfs41_kick(s);
	return;

out_bad_sequence:
	/* As Linux's decode_sequence (-EIO): the call fails without a
	 * retry, and the slot keeps the sequence id it had. */
	s->info.stats.seq_errors++;
	finish(sc, RPCRDMA_ERR_BAD_VALUE);
	kick_waiting(s);
}

/*
 * A slot for the next call: below the server's target if one is free,
 * else below its highest slot (the target is what it would prefer, the
 * highest what it takes).  -1 when none is: @stuck says whether nothing
 * can change that, no call being out whose reply (or time-out) would
 * free a slot or move the limits; the call then fails at once rather
 * than wait for a reply that will not come (slots lost below a target
 * of 1, say).
 */
static int free_slot(struct rpcrdma_nfs41_session *s, bool *stuck)
{
	uint32_t target = s->target < s->nslots ? s->target : s->nslots;
	uint32_t highest = s->highest < s->nslots ? s->highest : s->nslots;

	*stuck = false;
	if (highest < target)
		highest = target;
	for (uint32_t i = 0; i < highest; i++)
		if (!s->slots[i].busy && !s->slots[i].lost)
			return (int)i;
	*stuck = true;
	for (uint32_t i = 0; i < s->nslots; i++)
		*stuck &= !s->slots[i].busy;
	return -1;
}

static void start(struct rpcrdma_nfs41_session *s, struct s41_call *sc)
{
	struct rpcrdma_nfs4_compound *c = sc->c;
	int rc;

	sc->slot = -1;
	if (s->dead || (s->faulted && sc->sequenced)) {
		finish(sc, RPCRDMA_ERR_NFS41_SESSION);
		return;
	}
	if (sc->sequenced) {
		struct rpcrdma_nfs4_op *seq = &c->ops[0];
		bool stuck = false;
		int slot;

		if (s->binding) {
			enqueue(s, sc);
			return;
		}
		slot = free_slot(s, &stuck);
		if (slot < 0) {
			if (stuck) {
				finish(sc, RPCRDMA_ERR_NFS41_NO_SLOT);
			} else {
				s->info.stats.slot_waits++;
				enqueue(s, sc);
			}
			return;
		}
		sc->slot = slot;
		s->slots[slot].busy = true;
		memcpy(seq->arg.sequence.sessionid, s->info.sessionid, RPCRDMA_NFS4_SESSIONID_SIZE);
		seq->arg.sequence.seqid = s->slots[slot].seqid + 1;
		seq->arg.sequence.slotid = (uint32_t)slot;
		seq->arg.sequence.highest_slotid = 0;
		for (uint32_t i = 0; i < s->nslots; i++)
			if (s->slots[i].busy)
				seq->arg.sequence.highest_slotid = i;
		seq->arg.sequence.cachethis = sc->cachethis;
	}
	rc = rpcrdma__nfs4_compound_prepare(c, &sc->call, sc->chunks);
	if (!rc) {
		sc->call.done = on_done;
		sc->call.ctx = sc;
		rc = rpcrdma_client_call_async(s->clnt, &sc->call);
	}
	if (rc) {
		if (sc->slot >= 0)
			s->slots[sc->slot].busy = false;
		finish(sc, rc);
	}
}

static void submit(struct rpcrdma_nfs41_session *s, struct s41_call *sc)
{
	uint32_t ms = s->opts.grace_wait_ms > 0 ? (uint32_t)s->opts.grace_wait_ms : 90000u;

	sc->s = s;
	sc->done = false;
	sc->tries = 0;
	sc->retry_at = 0;
	sc->deadline = rpcrdma_loop_now(s->loop) + ms;
	sc->is_open = false;
	for (uint32_t i = 0; i < sc->c->nops; i++)
		sc->is_open |= sc->c->ops[i].op == RPCRDMA_NFS4_OP_OPEN;
	if (sc->is_open)
		s->opens_in_flight++;
	if (sc->fin)
		s->in_flight++;
	start(s, sc);
}

/* Takes @sc off the calls waiting for a slot or a retry; false when it
 * is not there (out on the client). */
static bool unqueue(struct rpcrdma_nfs41_session *s, struct s41_call *sc)
{
	struct s41_call *prev = NULL;

	for (struct s41_call *it = s->wait_head; it; prev = it, it = it->next) {
		if (it != sc)
			continue;
		if (prev)
			prev->next = it->next;
		else
			s->wait_head = it->next;
		if (s->wait_tail == it)
			s->wait_tail = prev;
		it->next = NULL;
		return true;
	}
	return false;
}

/*
 * Run the loop until @sc is done.  When the loop fails, a call still
 * waiting for a slot or its retry ends with the loop's error; one out on
 * the client cannot be taken back, and @sc (on the caller's stack) must
 * not be left behind with it, so the loop runs on, resting a little
 * longer each time it fails: its timers still run, and the client's call
 * time-out ends the call.
 */
static int wait_for(struct rpcrdma_nfs41_session *s, struct s41_call *sc)
{
	unsigned int rest_ms = 0;

	while (!sc->done) {
		int rc = rpcrdma_loop_run_once(s->loop, WAIT_SLICE_MS);

		if (rc < 0 && rc != -EINTR) {
			if (unqueue(s, sc)) {
				finish(sc, rc);
				break;
			}
			rest_ms = rest_ms ? (rest_ms < 50 ? rest_ms * 2 : 100) : 1;
			nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = rest_ms * 1000000L},
				  NULL);
			continue;
		}
		rest_ms = 0;
		background(s);
	}
	return sc->rc;
}

static bool cachethis_for(const struct rpcrdma_nfs4_compound *c)
{
	for (uint32_t i = 0; i < c->nops; i++) {
		uint32_t op = c->ops[i].op;

		if (op == RPCRDMA_NFS4_OP_OPEN || op == RPCRDMA_NFS4_OP_CLOSE ||
		    op == RPCRDMA_NFS4_OP_DELEGRETURN)
			return true;
	}
	return false;
}

static int call_sync(struct rpcrdma_nfs41_session *s, struct rpcrdma_nfs4_compound *c,
		     bool sequenced)
{
	struct s41_call sc;

	memset(&sc, 0, sizeof(sc));
	sc.c = c;
	sc.sequenced = sequenced;
	sc.cachethis = cachethis_for(c);
	submit(s, &sc);
	return wait_for(s, &sc);
}

/*
 * Background work: binding a new connection, returning recalled
 * delegations, retries whose time has come.
 */
static void bind_done(struct s41_call *sc)
{
	struct rpcrdma_nfs41_session *s = sc->s;
	struct rpcrdma_nfs4_compound *c = sc->c;

	s->binding = false;
	if (!sc->rc && c->status == RPCRDMA_NFS4_OK && c->nres == 1) {
		s->info.stats.binds++;
		s->info.last_bind_dir = c->ops[0].res.bind_conn.dir;
		s->need_bind = false;
	}
	free(sc);
	kick_waiting(s);
}

static void start_bind(struct rpcrdma_nfs41_session *s)
{
	struct s41_call *sc = calloc(1, sizeof(*sc) + sizeof(struct rpcrdma_nfs4_compound));
	struct rpcrdma_nfs4_compound *c;

	if (!sc)
		return; /* tried again on the next round */
	c = (struct rpcrdma_nfs4_compound *)(sc + 1);
	rpcrdma_nfs4_compound_init(c);
	c->minorversion = 1;
	(void)rpcrdma_nfs4_bind_conn_to_session(
	    c, s->info.sessionid,
	    s->opts.no_backchannel ? RPCRDMA_CDFC4_FORE : RPCRDMA_CDFC4_FORE_OR_BOTH, false);
	sc->c = c;
	sc->fin = bind_done;
	s->binding = true;
	s->need_bind = false;
	submit(s, sc);
}

static void return_done(struct s41_call *sc)
{
	struct rpcrdma_nfs41_session *s = sc->s;
	struct s41_deleg *d = sc->ctx;
	struct rpcrdma_nfs4_compound *c = sc->c;

	d->returning = false;
	if (!sc->rc && c->status == RPCRDMA_NFS4_OK) {
		s->info.stats.delegs_returned++;
		d->state = RPCRDMA_NFS41_DELEG_RETURNED;
	} else {
		/* Not ours any more either way (the server revokes what is not
		 * returned); the error is counted for the program to see. */
		s->info.stats.deleg_return_errors++;
		d->state = RPCRDMA_NFS41_DELEG_RETURNED;
	}
	free(sc);
}

static void start_return(struct rpcrdma_nfs41_session *s, struct s41_deleg *d)
{
	struct s41_call *sc = calloc(1, sizeof(*sc) + sizeof(struct rpcrdma_nfs4_compound));
	struct rpcrdma_nfs4_compound *c;

	if (!sc)
		return;
	c = (struct rpcrdma_nfs4_compound *)(sc + 1);
	rpcrdma_nfs41_compound_init(s, c);
	(void)rpcrdma_nfs4_putfh(c, &d->fh);
	(void)rpcrdma_nfs4_delegreturn(c, &d->stateid);
	sc->c = c;
	sc->sequenced = true;
	sc->cachethis = true;
	sc->fin = return_done;
	sc->ctx = d;
	d->returning = true;
	submit(s, sc);
}

static void background(struct rpcrdma_nfs41_session *s)
{
	struct rpcrdma_xprt_stats st;

	if (!s->established || s->dead || s->faulted)
		return;
	if (rpcrdma_client_stats(s->clnt, &st) == 0 && st.reconnects != s->reconnects_seen) {
		s->reconnects_seen = st.reconnects;
		s->need_bind = true;
	}
	if (s->need_bind && !s->binding)
		start_bind(s);
	for (uint32_t i = 0; i < s->ndelegs; i++) {
		struct s41_deleg *d = &s->delegs[i];

		if (d->state == RPCRDMA_NFS41_DELEG_RECALLED && !d->returning)
			start_return(s, d);
	}
	kick_waiting(s);
}

static void wake_cb(void *arg)
{
	struct rpcrdma_nfs41_session *s = arg;

	s->wake_pending = false;
	background(s);
}

void rpcrdma__nfs41_kick(struct rpcrdma_nfs41_session *s)
{
	/* Not now: from a callback procedure, its answer goes first. */
	if (!s->wake_pending && rpcrdma_loop_wake(s->loop, wake_cb, s) == 0)
		s->wake_pending = true;
}

int rpcrdma_nfs41_session_run(struct rpcrdma_nfs41_session *s, int timeout_ms)
{
	int rc;

	if (!s)
		return -EINVAL;
	rc = rpcrdma_loop_run_once(s->loop, timeout_ms);
	background(s);
	return rc;
}

/*
 * The public calls.
 */
void rpcrdma_nfs41_session_opts_default(struct rpcrdma_nfs41_session_opts *o)
{
	if (!o)
		return;
	memset(o, 0, sizeof(*o));
}

void rpcrdma_nfs41_compound_init(struct rpcrdma_nfs41_session *s, struct rpcrdma_nfs4_compound *c)
{
	(void)s;
	if (!c)
		return;
	rpcrdma_nfs4_compound_init(c);
	c->minorversion = 1;
	(void)rpcrdma_nfs4_sequence(c);
}

int rpcrdma_nfs41_compound_call(struct rpcrdma_nfs41_session *s, struct rpcrdma_nfs4_compound *c)
{
	if (!s || !c || c->minorversion != 1 || !c->nops ||
	    c->ops[0].op != RPCRDMA_NFS4_OP_SEQUENCE)
		return -EINVAL;
	if (!s->established || s->dead)
		return RPCRDMA_ERR_NFS41_SESSION;
	return call_sync(s, c, true);
}

/*
 * solo() and seq_call() return 0 only for NFS4_OK, which the decoder
 * accepts only with a result for every operation (RFC 8881 16.2.3): their
 * callers read the results of all the operations they added without
 * counting them.
 */

/* A sole operation without SEQUENCE (EXCHANGE_ID, CREATE_SESSION, ...). */
static int solo(struct rpcrdma_nfs41_session *s, struct rpcrdma_nfs4_compound *c)
{
	int rc = call_sync(s, c, false);

	if (rc)
		return rc;
	return c->status == RPCRDMA_NFS4_OK ? 0 : (int)c->status;
}

static int seq_call(struct rpcrdma_nfs41_session *s, struct rpcrdma_nfs4_compound *c)
{
	int rc = rpcrdma_nfs41_compound_call(s, c);

	if (rc)
		return rc;
	return c->status == RPCRDMA_NFS4_OK ? 0 : (int)c->status;
}

static void default_owner(struct rpcrdma_nfs41_session *s)
{
	char host[64] = "localhost";
	unsigned int n;

	(void)gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	pthread_mutex_lock(&reg_lock);
	n = owner_seq++;
	pthread_mutex_unlock(&reg_lock);
	s->owner_len = (uint32_t)snprintf((char *)s->owner, sizeof(s->owner),
					  "librpcrdma/%s/%ld/%u", host, (long)getpid(), n);
	if (s->owner_len >= sizeof(s->owner))
		s->owner_len = sizeof(s->owner) - 1;
}

static int establish(struct rpcrdma_nfs41_session *s)
{
	struct rpcrdma_nfs41_chan_attrs fore, back;
	struct rpcrdma_nfs4_compound *c;
	struct rpcrdma_nfs4_op *op;
	struct timespec ts;
	uint8_t verf[8];
	uint32_t seqid, flags;
	int rc;

	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	/* The verifier changes with each incarnation of the client (RFC 8881
	 * 18.35.4): a new process, or a new session object. */
	clock_gettime(CLOCK_REALTIME, &ts);
	for (int i = 0; i < 4; i++)
		verf[i] = (uint8_t)(ts.tv_sec >> (8 * i));
	verf[4] = (uint8_t)getpid();
	verf[5] = (uint8_t)(getpid() >> 8);
	verf[6] = (uint8_t)(ts.tv_nsec >> 10);
	verf[7] = (uint8_t)s->info.cb_program;

	rpcrdma_nfs4_compound_init(c);
	c->minorversion = 1;
	op = rpcrdma_nfs4_exchange_id(c, verf, s->owner, s->owner_len, 0);
	rc = op ? solo(s, c) : -EINVAL;
	if (rc)
		goto out;
	s->info.clientid = op->res.exchange_id.clientid;
	s->info.exchange_flags = op->res.exchange_id.flags;
	seqid = op->res.exchange_id.seqid;

	memset(&fore, 0, sizeof(fore));
	fore.maxrequestsize = s->opts.max_request ? s->opts.max_request : (1u << 20) + 8192u;
	fore.maxresponsesize = s->opts.max_response ? s->opts.max_response : (1u << 20) + 8192u;
	fore.maxresponsesize_cached = 4096;
	fore.maxoperations = RPCRDMA_NFS4_MAX_OPS;
	fore.maxrequests = s->opts.fore_slots;
	memset(&back, 0, sizeof(back));
	back.maxrequestsize = RPCRDMA_NFS41_CB_MAX_MSG;
	back.maxresponsesize = RPCRDMA_NFS41_CB_MAX_MSG;
	/* every answer is cached (s41_cb_slot): offering 0 would have a
	 * server that keeps it and sets csa_cachethis get only
	 * NFS4ERR_REP_TOO_BIG_TO_CACHE */
	back.maxresponsesize_cached = RPCRDMA_NFS41_CB_MAX_MSG;
	back.maxoperations = RPCRDMA_NFS41_CB_MAX_OPS;
	back.maxrequests = s->opts.back_slots;
	flags = s->opts.no_backchannel ? 0 : RPCRDMA_CREATE_SESSION4_FLAG_CONN_BACK_CHAN;

	rpcrdma_nfs4_compound_init(c);
	c->minorversion = 1;
	op = rpcrdma_nfs4_create_session(c, s->info.clientid, seqid, flags, &fore, &back,
					 s->info.cb_program);
	rc = op ? solo(s, c) : -EINVAL;
	if (rc)
		goto out;
	memcpy(s->info.sessionid, op->res.create_session.sessionid, RPCRDMA_NFS4_SESSIONID_SIZE);
	s->info.session_flags = op->res.create_session.flags;
	s->info.fore = op->res.create_session.fore;
	s->info.back = op->res.create_session.back;
	s->info.backchannel =
	    (op->res.create_session.flags & RPCRDMA_CREATE_SESSION4_FLAG_CONN_BACK_CHAN) != 0;
	s->nslots = s->info.fore.maxrequests < s->opts.fore_slots ? s->info.fore.maxrequests
								  : s->opts.fore_slots;
	s->ncb_slots = s->info.back.maxrequests < s->opts.back_slots ? s->info.back.maxrequests
								     : s->opts.back_slots;
	if (op->res.create_session.seqid != seqid || s->nslots == 0) {
		rc = RPCRDMA_ERR_BAD_VALUE; /* a session we cannot use */
		s->established = true;      /* so that it is destroyed */
		goto out;
	}
	s->target = s->highest = s->nslots;
	s->info.slots = s->nslots;
	s->established = true;
	if (!s->opts.no_backchannel && !s->info.backchannel) {
		rc = RPCRDMA_ERR_NFS41_NO_BACKCHANNEL;
		goto out;
	}
	{
		struct rpcrdma_xprt_stats st;

		if (rpcrdma_client_stats(s->clnt, &st) == 0)
			s->reconnects_seen = st.reconnects;
	}
	rpcrdma_nfs41_compound_init(s, c);
	(void)rpcrdma_nfs4_reclaim_complete(c, false);
	rc = seq_call(s, c);
	if (rc == (int)NFS4ERR_COMPLETE_ALREADY)
		rc = 0;
out:
	free(c);
	return rc;
}

int rpcrdma_nfs41_session_create(struct rpcrdma_client *clnt, struct rpcrdma_loop *loop,
				 const struct rpcrdma_nfs41_session_opts *opts,
				 struct rpcrdma_nfs41_session **out)
{
	struct rpcrdma_nfs41_session *s;
	size_t owner_len;
	int rc;

	if (!clnt || !loop || !out)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->delegs = calloc(RPCRDMA_NFS41_MAX_DELEGS, sizeof(*s->delegs));
	if (!s->delegs) {
		free(s);
		return -ENOMEM;
	}
	s->clnt = clnt;
	s->loop = loop;
	if (opts)
		s->opts = *opts;
	if (!s->opts.fore_slots)
		s->opts.fore_slots = 16;
	if (!s->opts.back_slots)
		s->opts.back_slots = 1;
	owner_len = s->opts.owner ? strlen(s->opts.owner) : 0;
	rc = 0;
	if (s->opts.fore_slots > RPCRDMA_NFS41_MAX_SLOTS) {
		rc = -EINVAL;
		RPCRDMA__TRACE_BAD_ARG(rc, "rpcrdma_nfs41_session_opts.fore_slots = %u: above %u",
				       s->opts.fore_slots, RPCRDMA_NFS41_MAX_SLOTS);
	} else if (s->opts.back_slots > RPCRDMA_NFS41_MAX_CB_SLOTS) {
		rc = -EINVAL;
		RPCRDMA__TRACE_BAD_ARG(rc, "rpcrdma_nfs41_session_opts.back_slots = %u: above %u",
				       s->opts.back_slots, RPCRDMA_NFS41_MAX_CB_SLOTS);
	} else if (owner_len > RPCRDMA_NFS41_OWNER_MAX || (s->opts.owner && !owner_len)) {
		rc = -EINVAL;
		RPCRDMA__TRACE_BAD_ARG(rc,
				       "rpcrdma_nfs41_session_opts.owner: %zu bytes, not 1 to %u",
				       owner_len, RPCRDMA_NFS41_OWNER_MAX);
	}
	if (rc)
		goto out_free;
	if (owner_len) {
		memcpy(s->owner, s->opts.owner, owner_len);
		s->owner_len = (uint32_t)owner_len;
	} else {
		default_owner(s);
	}
	s->opts.owner = NULL; /* not kept: the copy is */
	s->opts.cb = NULL;
	rc = reg_add(s, opts ? opts->cb_program : 0);
	if (rc)
		goto out_free;
	rc = rpcrdma_client_register_callback(clnt, s->info.cb_program, RPCRDMA_NFS4_CB_VERS,
					      rpcrdma__nfs41_cb_procs, 2, opts ? opts->cb : NULL);
	if (rc)
		goto out_unreg;
	rc = establish(s);
	if (rc) {
		if (s->established)
			(void)rpcrdma_nfs41_session_destroy(s);
		else
			goto out_unreg;
		return rc;
	}
	*out = s;
	return 0;
out_unreg:
	reg_del(s);
out_free:
	free(s->delegs);
	free(s);
	return rc;
}

int rpcrdma_nfs41_session_destroy(struct rpcrdma_nfs41_session *s)
{
	struct rpcrdma_nfs4_compound *c;
	uint64_t until;
	int rc = 0, rc2;

	if (!s)
		return -EINVAL;
	/* Its DESTROY_SESSION would go on the parent's connection. */
	if (rpcrdma__loop_inherited(s->loop, "rpcrdma_nfs41_session_destroy"))
		return -EPERM;
	/* Our own calls first (delegation returns, a bind): they point here. */
	until = rpcrdma_loop_now(s->loop) + DESTROY_DRAIN_MS;
	while ((s->in_flight || s->wake_pending) && rpcrdma_loop_now(s->loop) < until) {
		if (rpcrdma_loop_run_once(s->loop, WAIT_SLICE_MS) < 0)
			break;
		if (s->wake_pending)
			continue;
		kick_waiting(s);
	}
	reg_del(s);
	c = malloc(sizeof(*c));
	if (c && s->established) {
		rpcrdma_nfs4_compound_init(c);
		c->minorversion = 1;
		(void)rpcrdma_nfs4_destroy_session(c, s->info.sessionid);
		rc = solo(s, c);
		rpcrdma_nfs4_compound_init(c);
		c->minorversion = 1;
		(void)rpcrdma_nfs4_destroy_clientid(c, s->info.clientid);
		rc2 = solo(s, c);
		if (!rc)
			rc = rc2;
	} else if (!c) {
		rc = -ENOMEM;
	}
	s->dead = true;
	free(c);
	if (s->in_flight || s->wake_pending) {
		/* Still referenced by the loop (a peer that never answered):
		 * leak rather than leave a dangling pointer. */
		return rc ? rc : -EBUSY;
	}
	free(s->delegs);
	free(s);
	return rc;
}

static struct s41_deleg *track(struct rpcrdma_nfs41_session *s, const struct rpcrdma_nfs41_file *f)
{
	for (uint32_t i = 0; i < RPCRDMA_NFS41_MAX_DELEGS; i++) {
		struct s41_deleg *d = &s->delegs[i];

		if (d->state == RPCRDMA_NFS41_DELEG_NONE ||
		    (d->state == RPCRDMA_NFS41_DELEG_RETURNED && !d->returning)) {
			d->state = RPCRDMA_NFS41_DELEG_HELD;
			d->returning = false;
			d->stateid = f->deleg_stateid;
			d->fh = f->fh;
			if (s->ndelegs < i + 1)
				s->ndelegs = i + 1;
			return d;
		}
	}
	return NULL;
}

static struct s41_deleg *deleg_of(struct rpcrdma_nfs41_session *s,
				  const struct rpcrdma_nfs41_file *f)
{
	if (f->deleg_type == RPCRDMA_OPEN_DELEGATE_NONE)
		return NULL;
	for (uint32_t i = 0; i < s->ndelegs; i++) {
		struct s41_deleg *d = &s->delegs[i];

		if (d->state != RPCRDMA_NFS41_DELEG_NONE &&
		    memcmp(&d->stateid, &f->deleg_stateid, sizeof(d->stateid)) == 0)
			return d;
	}
	return NULL;
}

int rpcrdma_nfs41_open(struct rpcrdma_nfs41_session *s, const struct rpcrdma_nfs4_fh *dir,
		       const char *name, uint32_t share_access, struct rpcrdma_nfs41_file *f)
{
	struct rpcrdma_nfs4_compound *c;
	struct rpcrdma_nfs4_op *open, *getfh;
	uint32_t want = share_access & 0xff00u;
	int rc;

	if (!s || !dir || !name || !f)
		return -EINVAL;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	memset(f, 0, sizeof(*f));
	rpcrdma_nfs41_compound_init(s, c);
	(void)rpcrdma_nfs4_putfh(c, dir);
	open = rpcrdma_nfs4_open(c, share_access, s->info.clientid, s->owner, s->owner_len, name);
	getfh = rpcrdma_nfs4_getfh(c);
	if (!open || !getfh) {
		free(c);
		return -EINVAL;
	}
	rc = seq_call(s, c);
	if (rc)
		goto out;
	f->fh = getfh->res.getfh;
	f->open_stateid = open->res.open.stateid;
	f->deleg_type = open->res.open.deleg_type;
	if (f->deleg_type == RPCRDMA_OPEN_DELEGATE_READ ||
	    f->deleg_type == RPCRDMA_OPEN_DELEGATE_WRITE) {
		f->deleg_stateid = open->res.open.deleg_stateid;
		s->info.stats.delegs_granted++;
		if (!track(s, f)) {
			/* More than we can answer recalls for: give it back now. */
			s->info.stats.deleg_table_full++;
			rpcrdma_nfs41_compound_init(s, c);
			(void)rpcrdma_nfs4_putfh(c, &f->fh);
			(void)rpcrdma_nfs4_delegreturn(c, &f->deleg_stateid);
			(void)seq_call(s, c);
			f->deleg_type = RPCRDMA_OPEN_DELEGATE_NONE;
		}
	} else {
		f->deleg_type = RPCRDMA_OPEN_DELEGATE_NONE;
		f->why_none = open->res.open.deleg_type == RPCRDMA_OPEN_DELEGATE_NONE_EXT
				  ? open->res.open.why_none
				  : UINT32_MAX;
	}
	if (f->deleg_type == RPCRDMA_OPEN_DELEGATE_NONE && want &&
	    want != RPCRDMA_OPEN4_SHARE_ACCESS_WANT_NO_DELEG)
		rc = RPCRDMA_ERR_NFS41_NO_DELEGATION;
out:
	free(c);
	return rc;
}

int rpcrdma_nfs41_read(struct rpcrdma_nfs41_session *s, const struct rpcrdma_nfs41_file *f,
		       uint64_t off, uint32_t count, void *buf, uint32_t *len, bool *eof)
{
	struct rpcrdma_nfs4_compound *c;
	struct rpcrdma_nfs4_op *read;
	struct s41_deleg *d;
	const struct rpcrdma_nfs4_stateid *sid;
	int rc;

	if (!s || !f || !buf || !len)
		return -EINVAL;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	d = deleg_of(s, f);
	sid = d && d->state == RPCRDMA_NFS41_DELEG_HELD ? &d->stateid : &f->open_stateid;
	rpcrdma_nfs41_compound_init(s, c);
	(void)rpcrdma_nfs4_putfh(c, &f->fh);
	read = rpcrdma_nfs4_read(c, sid, off, count, buf, count);
	if (!read) {
		free(c);
		return -EINVAL;
	}
	rc = seq_call(s, c);
	if (!rc) {
		*len = read->res.read.len;
		if (eof)
			*eof = read->res.read.eof;
	}
	free(c);
	return rc;
}

int rpcrdma_nfs41_delegreturn(struct rpcrdma_nfs41_session *s, struct rpcrdma_nfs41_file *f)
{
	struct rpcrdma_nfs4_compound *c;
	struct s41_deleg *d;
	int rc;

	if (!s || !f)
		return -EINVAL;
	d = deleg_of(s, f);
	if (!d)
		return 0;
	while (d->returning || d->state == RPCRDMA_NFS41_DELEG_RECALLED) {
		/*
		 * background() starts no return on a faulted or dead session,
		 * and a server may recall after reporting the fault: nothing
		 * would ever end this wait.
		 */
		if (!d->returning && (s->dead || s->faulted))
			return RPCRDMA_ERR_NFS41_SESSION;
		/* a recall's return is on its way: wait for it */
		rc = rpcrdma_nfs41_session_run(s, WAIT_SLICE_MS);
		if (rc < 0 && rc != -EINTR)
			return rc;
	}
	if (d->state != RPCRDMA_NFS41_DELEG_HELD)
		return 0;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	rpcrdma_nfs41_compound_init(s, c);
	(void)rpcrdma_nfs4_putfh(c, &d->fh);
	(void)rpcrdma_nfs4_delegreturn(c, &d->stateid);
	/*
	 * A CB_RECALL may come while this call is out or waits to go again
	 * (NFS4ERR_DELAY): marked as under way, the delegation gets no second
	 * DELEGRETURN from background(), which would return it first and
	 * leave this one NFS4ERR_BAD_STATEID.  If this one fails, the recall
	 * (state RECALLED) still has background() return it.
	 */
	d->returning = true;
	rc = seq_call(s, c);
	d->returning = false;
	if (!rc) {
		s->info.stats.delegs_returned++;
		d->state = RPCRDMA_NFS41_DELEG_RETURNED;
	} else if (rc > 0) {
		s->info.stats.deleg_return_errors++;
	}
	free(c);
	return rc;
}

int rpcrdma_nfs41_close(struct rpcrdma_nfs41_session *s, struct rpcrdma_nfs41_file *f)
{
	struct rpcrdma_nfs4_compound *c;
	int rc;

	if (!s || !f)
		return -EINVAL;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	rpcrdma_nfs41_compound_init(s, c);
	(void)rpcrdma_nfs4_putfh(c, &f->fh);
	(void)rpcrdma_nfs4_close(c, &f->open_stateid);
	rc = seq_call(s, c);
	free(c);
	return rc;
}

enum rpcrdma_nfs41_deleg_state rpcrdma_nfs41_deleg_state(struct rpcrdma_nfs41_session *s,
							  const struct rpcrdma_nfs41_file *f)
{
	struct s41_deleg *d = s && f ? deleg_of(s, f) : NULL;

	return d ? d->state : RPCRDMA_NFS41_DELEG_NONE;
}

int rpcrdma_nfs41_session_bind(struct rpcrdma_nfs41_session *s)
{
	struct rpcrdma_nfs4_compound *c;
	int rc;

	if (!s)
		return -EINVAL;
	if (!s->established || s->dead)
		return RPCRDMA_ERR_NFS41_SESSION;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	rpcrdma_nfs4_compound_init(c);
	c->minorversion = 1;
	(void)rpcrdma_nfs4_bind_conn_to_session(
	    c, s->info.sessionid,
	    s->opts.no_backchannel ? RPCRDMA_CDFC4_FORE : RPCRDMA_CDFC4_FORE_OR_BOTH, false);
	s->binding = true;
	rc = solo(s, c);
	s->binding = false;
	if (!rc) {
		s->info.stats.binds++;
		s->info.last_bind_dir = c->ops[0].res.bind_conn.dir;
		s->need_bind = false;
		if (!s->opts.no_backchannel && c->ops[0].res.bind_conn.dir != RPCRDMA_CDFS4_BOTH)
			rc = RPCRDMA_ERR_NFS41_NO_BACKCHANNEL;
	}
	free(c);
	kick_waiting(s);
	return rc;
}

int rpcrdma_nfs41_session_info(struct rpcrdma_nfs41_session *s,
			       struct rpcrdma_nfs41_session_info *out)
{
	if (!s || !out)
		return -EINVAL;
	*out = s->info;
	return 0;
}

const char *rpcrdma_nfs41_strerror(int err)
{
	switch (err) {
	case RPCRDMA_ERR_NFS41_NO_BACKCHANNEL:
		return "the NFSv4.1 server did not bind our connection for callbacks (no "
		       "CONN_BACK_CHAN): no delegation could be recalled";
	case RPCRDMA_ERR_NFS41_NO_DELEGATION:
		return "the NFSv4.1 server granted no delegation (the file is open without one)";
	case RPCRDMA_ERR_NFS41_NO_SLOT:
		return "every slot the NFSv4.1 server takes was lost to unanswered calls: create "
		       "a new session";
	case RPCRDMA_ERR_NFS41_SESSION:
		return "the NFSv4.1 session is not usable (not established, being destroyed, or "
		       "faulted: the server reported a backchannel fault, so destroy it and create "
		       "another)";
	default:
		return rpcrdma_strerror(err);
	}
}

const char *rpcrdma_nfs41_why_str(uint32_t why)
{
	static const char *const names[] = {
	    "not wanted", "contention", "resource", "file type not supported",
	    "write delegation not supported for the file type", "upgrade not supported",
	    "downgrade not supported", "cancelled", "is a directory",
	};

	if (why == UINT32_MAX)
		return "none (the server gave no reason: OPEN_DELEGATE_NONE)";
	return why < sizeof(names) / sizeof(names[0]) ? names[why] : "unknown reason";
}
