/*
 * Our NFSv4.1 session client and its callback service against an NFSv4.1
 * server: the kernel's nfsd in the lab (an independent peer sending
 * reverse-direction calls, RFC 8167, to our code); in `make check` (--self)
 * a small in-process NFSv4.1 responder on loopback, built on the library's
 * server and backchannel, that recalls delegations as nfsd does (one
 * back-channel slot, CB_NULL first, CB_SEQUENCE + CB_RECALL), and also
 * sends what nfsd would not (operations we do not support, replays,
 * misordered sequence ids), so that the session, slot and callback logic
 * runs on every machine.
 *
 *   session   EXCHANGE_ID, CREATE_SESSION with a backchannel, RECLAIM_COMPLETE;
 *             what the server granted is printed ("# session: ...")
 *   recall    OPEN f0 for reading with a read-delegation wish; READ under it;
 *             a write on the server side breaks it (lab: a local process
 *             opens the file for writing, and blocks until the delegation
 *             is returned); CB_RECALL must arrive on our connection (the
 *             reverse counters move), be answered, and the delegation be
 *             returned; the writer completes, promptly (its time is
 *             printed and must be well under the lease-break time); we
 *             READ the new data; CLOSE
 *   many      N files open with read delegations, written at once: N
 *             recalls, more than the reverse credits we grant
 *             (--cb-credits) and than the back-channel slots, all answered
 *             and returned
 *   relink    (lab) the RDMA link goes down and up, the client reconnects,
 *             binds the new connection to the session for both directions
 *             (BIND_CONN_TO_SESSION, CDFC4_FORE_OR_BOTH; the answer must be
 *             CDFS4_BOTH), and a recall then arrives there
 *   cb_errors (--self) what nfsd never sends: NOTSUPP, OP_CB_ILLEGAL,
 *             replays, misordered and bad slots, a wrong minor version, an
 *             unknown stateid, long tags (echoed), a call over the
 *             back channel's ca_maxrequestsize (NFS4ERR_REQ_TOO_BIG)
 *   short_results (--self) a server that stops before OPEN or READ and
 *             still says NFS4_OK: both calls fail, and no result the
 *             server never sent reaches the caller
 *   foreign_sequence (--self) SEQUENCE results naming another session,
 *             sequence id or slot than sent: each call fails, counted in
 *             seq_errors, and the slot is not moved on
 *
 * Usage: nfs41_interop --server HOST --path /EXPORT --local DIR
 *                      [--provider NAME] [--port N] [--max-vers 2]
 *                      [--cb-credits N] [--netdev DEV] [--down-cmd CMD]
 *                      [--up-cmd CMD] [--dir NAME] [CASE...]
 * relink takes the path down with the down command (default `ip link set
 * DEV down`) and brings it back with the up command (default `ip link set
 * DEV up`).
 *        nfs41_interop --self [--provider NAME] [--max-vers 2] [CASE...]
 * With --server, DIR is the export's directory on this machine (the lab
 * runs client and server in one guest): the files are made and written
 * there, in DIR/NAME (default nfs41-interop).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rpcrdma/backchannel.h"
#include "rpcrdma/loop.h"
#include "rpcrdma/nfs4.h"
#include "rpcrdma/rpc_msg.h"

#include "check.h"

#define NFILES 8u
#define FILE_LEN 6000u

static struct rpcrdma_loop *loop;
static struct rpcrdma_client *clnt;
static struct rpcrdma_nfs41_session *sess;
static struct rpcrdma_nfs4_fh dir_fh;
static const char *export_path = "/export", *local_dir, *netdev, *dir_name = "nfs41-interop",
		  *up_cmd, *down_cmd;
static bool self;
static uint32_t max_vers = 1, cb_credits = 4;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* File i's content in generation g. */
static void content(unsigned int i, unsigned int g, uint8_t *buf)
{
	for (uint32_t k = 0; k < FILE_LEN; k++)
		buf[k] = (uint8_t)(k * 7u + i * 31u + g * 101u + (k >> 8));
}

static void stats(struct rpcrdma_xprt_stats *st)
{
	CHECK_RC(rpcrdma_client_stats(clnt, st), 0);
}

static void info(struct rpcrdma_nfs41_session_info *in)
{
	CHECK_RC(rpcrdma_nfs41_session_info(sess, in), 0);
}

#define CHECK_OK(expr)                                                                             \
	do {                                                                                       \
		int r_ = (expr);                                                                   \
		if (r_) {                                                                          \
			fprintf(stderr, "%s:%d: %s = %d (%s)\n", __FILE__, __LINE__, #expr, r_,    \
				r_ < 0 ? rpcrdma_nfs41_strerror(r_) : "NFS status");               \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

/*
 * --self: the responder.  Handles are one byte: 1 the root, 2 the export,
 * 3 our directory, 10 + i file i ("f<i>").
 */
#define SELF_SLOTS 8u

/* What the responder does wrong on purpose, for the hostile cases. */
enum self_fault {
	SELF_FAULT_NONE,
	SELF_FAULT_SHORT_RESULTS, /* stop before OPEN or READ, yet say NFS4_OK */
	/* SEQUENCE answers for another call (and leaves the slot alone): */
	SELF_FAULT_OTHER_SESSION,
	SELF_FAULT_OTHER_SEQID,
	SELF_FAULT_OTHER_SLOT,
};

static struct {
	enum self_fault fault;
	unsigned int faults_sent;
	struct rpcrdma_server *srv;
	struct rpcrdma_backchannel *bc;
	uint8_t sessionid[RPCRDMA_NFS4_SESSIONID_SIZE];
	uint32_t cb_prog, slot_seq[SELF_SLOTS], cb_seq;
	bool session, grace_given;
	unsigned int gen[NFILES];
	bool deleg[NFILES], recalled[NFILES];
	unsigned int recalls_sent, recalls_ok, cb_nulls_ok, binds;
	/* one CB_COMPOUND at a time on the one back-channel slot, as nfsd */
	struct rpcrdma_nfs41_cb_compound cb;
	struct rpcrdma_call cbcall;
	bool cb_busy;
	unsigned int pending[NFILES * 4], npending;
	/* Slot limits SEQUENCE announces beyond SELF_SLOTS - 1 (slot_limits):
	 * the target highest slot, and the highest it takes. */
	bool limited;
	uint32_t target_hs, highest_hs, highest_told;
	uint32_t seq_flags; /* sr_status_flags of SEQUENCE results */
	/* return_race: the next DELEGRETURN recalls what it returns and
	 * answers NFS4ERR_DELAY, so that the recall arrives while the
	 * client's own DELEGRETURN waits to be sent again */
	bool recall_on_return;
	unsigned int delegreturns;
} sv;

static uint8_t file_data[NFILES][FILE_LEN];

static void deleg_stateid(unsigned int i, struct rpcrdma_nfs4_stateid *sid)
{
	memset(sid, 0, sizeof(*sid));
	sid->seqid = 1;
	sid->other[0] = 'D';
	sid->other[1] = (uint8_t)i;
	sid->other[2] = (uint8_t)sv.gen[i];
}

static void cb_send_next(void);

static void cb_done(struct rpcrdma_call *call, void *ctx)
{
	(void)ctx;
	sv.cb_busy = false;
	if (call->status == 0 && sv.cb.status == RPCRDMA_NFS4_OK && sv.cb.nres == 2)
		sv.recalls_ok++;
	else
		fprintf(stderr, "self: CB_COMPOUND failed: %d (%s), nfs %u\n", call->status,
			rpcrdma_strerror(call->status), sv.cb.status);
	cb_send_next();
}

static void cb_build(struct rpcrdma_nfs41_cb_compound *c, uint32_t seq)
{
	memset(c, 0, sizeof(*c));
	c->minorversion = 1;
	c->nops = c->count = 1;
	c->ops[0].op = RPCRDMA_NFS4_OP_CB_SEQUENCE;
	memcpy(c->ops[0].arg.sequence.sessionid, sv.sessionid, RPCRDMA_NFS4_SESSIONID_SIZE);
	c->ops[0].arg.sequence.seqid = seq;
}

static void cb_recall_op(struct rpcrdma_nfs41_cb_op *op, unsigned int i)
{
	op->op = RPCRDMA_NFS4_OP_CB_RECALL;
	deleg_stateid(i, &op->arg.recall.stateid);
	op->arg.recall.fh.len = 1;
	op->arg.recall.fh.data[0] = (uint8_t)(10 + i);
}

static void cb_send_next(void)
{
	unsigned int i;

	if (sv.cb_busy || !sv.npending)
		return;
	i = sv.pending[0];
	memmove(sv.pending, sv.pending + 1, --sv.npending * sizeof(sv.pending[0]));
	cb_build(&sv.cb, ++sv.cb_seq);
	cb_recall_op(&sv.cb.ops[1], i);
	sv.cb.nops = sv.cb.count = 2;
	memset(&sv.cbcall, 0, sizeof(sv.cbcall));
	sv.cbcall.proc = RPCRDMA_NFS4_CB_PROC_COMPOUND;
	sv.cbcall.encode_args = rpcrdma_nfs41_cb_args_enc;
	sv.cbcall.args = &sv.cb;
	sv.cbcall.decode_res = rpcrdma_nfs41_cb_res_dec;
	sv.cbcall.res = &sv.cb;
	sv.cbcall.done = cb_done;
	sv.cb_busy = true;
	sv.recalls_sent++;
	CHECK_RC(rpcrdma_backchannel_call_async(sv.bc, &sv.cbcall), 0);
}

/* A write on the server side: recall file i's delegation first. */
static void self_break(unsigned int i)
{
	CHECK(sv.deleg[i]);
	sv.recalled[i] = true;
	sv.pending[sv.npending++] = i;
	cb_send_next();
}

static void cb_null_done(struct rpcrdma_call *call, void *ctx)
{
	(void)ctx;
	if (call->status == 0)
		sv.cb_nulls_ok++;
	free(call);
}

static uint32_t self_op(struct rpcrdma_svc_req *req, struct rpcrdma_nfs4_compound *c, uint32_t k,
			uint8_t *cur)
{
	struct rpcrdma_nfs4_op *op = &c->ops[k];

	switch (op->op) {
	case RPCRDMA_NFS4_OP_SEQUENCE: {
		uint32_t slot = op->arg.sequence.slotid;

		if (k != 0)
			return RPCRDMA_NFS4ERR_SEQUENCE_POS;
		if (!sv.session || memcmp(op->arg.sequence.sessionid, sv.sessionid, 16))
			return RPCRDMA_NFS4ERR_BADSESSION;
		if (slot >= SELF_SLOTS || (sv.limited && slot > sv.highest_told))
			return RPCRDMA_NFS4ERR_BADSLOT;
		sv.highest_told = sv.limited ? sv.highest_hs : SELF_SLOTS - 1;
		if (op->arg.sequence.seqid != sv.slot_seq[slot] + 1)
			return RPCRDMA_NFS4ERR_SEQ_MISORDERED;
		memcpy(op->res.sequence.sessionid, sv.sessionid, 16);
		op->res.sequence.seqid = op->arg.sequence.seqid;
		op->res.sequence.slotid = slot;
		op->res.sequence.highest_slotid = sv.limited ? sv.highest_hs : SELF_SLOTS - 1;
		op->res.sequence.target_highest_slotid = sv.limited ? sv.target_hs : SELF_SLOTS - 1;
		op->res.sequence.status_flags = sv.seq_flags;
		switch (sv.fault) {
		case SELF_FAULT_OTHER_SESSION:
			op->res.sequence.sessionid[15] ^= 0xff;
			break;
		case SELF_FAULT_OTHER_SEQID:
			op->res.sequence.seqid++;
			break;
		case SELF_FAULT_OTHER_SLOT:
			op->res.sequence.slotid = (slot + 1) % SELF_SLOTS;
			break;
		default:
			sv.slot_seq[slot]++;
			return 0;
		}
		sv.faults_sent++;
		return 0;
	}
	case RPCRDMA_NFS4_OP_EXCHANGE_ID:
		op->res.exchange_id.clientid = 0x1234;
		op->res.exchange_id.seqid = 1;
		op->res.exchange_id.flags =
		    RPCRDMA_EXCHGID4_FLAG_CONFIRMED_R | RPCRDMA_EXCHGID4_FLAG_USE_NON_PNFS;
		op->res.exchange_id.so_major_len = 5;
		return 0;
	case RPCRDMA_NFS4_OP_CREATE_SESSION: {
		struct rpcrdma_backchannel_opts bo;
		struct rpcrdma_call *null;

		if (op->arg.create_session.clientid != 0x1234 || op->arg.create_session.seqid != 1)
			return RPCRDMA_NFS4ERR_STALE_CLIENTID;
		memset(sv.sessionid, 0x5e, sizeof(sv.sessionid));
		memset(sv.slot_seq, 0, sizeof(sv.slot_seq));
		sv.session = true;
		sv.cb_seq = 0;
		sv.cb_prog = op->arg.create_session.cb_program;
		memcpy(op->res.create_session.sessionid, sv.sessionid, 16);
		op->res.create_session.seqid = 1;
		op->res.create_session.flags =
		    op->arg.create_session.flags & RPCRDMA_CREATE_SESSION4_FLAG_CONN_BACK_CHAN;
		op->res.create_session.fore = op->arg.create_session.fore;
		if (op->res.create_session.fore.maxrequests > SELF_SLOTS)
			op->res.create_session.fore.maxrequests = SELF_SLOTS;
		op->res.create_session.back = op->arg.create_session.back;
		op->res.create_session.back.maxrequests = 1;
		if (!op->res.create_session.flags)
			return 0;
		memset(&bo, 0, sizeof(bo));
		bo.prog = sv.cb_prog;
		bo.vers = RPCRDMA_NFS4_CB_VERS;
		CHECK_RC(rpcrdma_svc_backchannel(req, &bo, &sv.bc), 0);
		CHECK_RC(rpcrdma_backchannel_enable(sv.bc, true), 0);
		/* as nfsd: a CB_NULL probe of the new backchannel */
		CHECK(null = calloc(1, sizeof(*null)));
		null->proc = RPCRDMA_NFS4_CB_PROC_NULL;
		null->done = cb_null_done;
		CHECK_RC(rpcrdma_backchannel_call_async(sv.bc, null), 0);
		return 0;
	}
	case RPCRDMA_NFS4_OP_BIND_CONN_TO_SESSION:
		if (!sv.session || memcmp(op->arg.bind_conn.sessionid, sv.sessionid, 16))
			return RPCRDMA_NFS4ERR_BADSESSION;
		memcpy(op->res.bind_conn.sessionid, sv.sessionid, 16);
		op->res.bind_conn.dir = op->arg.bind_conn.dir == RPCRDMA_CDFC4_FORE_OR_BOTH
					    ? RPCRDMA_CDFS4_BOTH
					    : RPCRDMA_CDFS4_FORE;
		if (sv.bc && op->res.bind_conn.dir == RPCRDMA_CDFS4_BOTH)
			CHECK_RC(rpcrdma_backchannel_bind(sv.bc, req), 0);
		sv.binds++;
		return 0;
	case RPCRDMA_NFS4_OP_RECLAIM_COMPLETE:
	case RPCRDMA_NFS4_OP_DESTROY_CLIENTID:
		return 0;
	case RPCRDMA_NFS4_OP_DESTROY_SESSION:
		sv.session = false;
		return 0;
	case RPCRDMA_NFS4_OP_PUTROOTFH:
		*cur = 1;
		return 0;
	case RPCRDMA_NFS4_OP_PUTFH:
		if (op->arg.putfh.len != 1)
			return RPCRDMA_NFS4ERR_BADHANDLE;
		*cur = op->arg.putfh.data[0];
		return 0;
	case RPCRDMA_NFS4_OP_LOOKUP:
		if (*cur == 1 && strcmp(op->arg.lookup.name, "export") == 0)
			*cur = 2;
		else if (*cur == 2 && strcmp(op->arg.lookup.name, dir_name) == 0)
			*cur = 3;
		else
			return RPCRDMA_NFS4ERR_NOENT;
		return 0;
	case RPCRDMA_NFS4_OP_GETFH:
		op->res.getfh.len = 1;
		op->res.getfh.data[0] = *cur;
		return 0;
	case RPCRDMA_NFS4_OP_OPEN: {
		unsigned int i;

		/* the first OPEN meets the grace period, as after a reboot */
		if (!sv.grace_given) {
			sv.grace_given = true;
			return RPCRDMA_NFS4ERR_GRACE;
		}
		if (*cur != 3 || op->arg.open.claim != RPCRDMA_CLAIM_NULL ||
		    op->arg.open.name[0] != 'f' || op->arg.open.name_len != 2)
			return RPCRDMA_NFS4ERR_NOENT;
		i = (unsigned int)(op->arg.open.name[1] - '0');
		if (i >= NFILES)
			return RPCRDMA_NFS4ERR_NOENT;
		*cur = (uint8_t)(10 + i);
		memset(&op->res.open, 0, sizeof(op->res.open));
		op->res.open.stateid.seqid = 1;
		op->res.open.stateid.other[0] = 'O';
		op->res.open.stateid.other[1] = (uint8_t)i;
		if ((op->arg.open.share_access & 0xff00u) ==
			RPCRDMA_OPEN4_SHARE_ACCESS_WANT_READ_DELEG &&
		    sv.bc && !sv.deleg[i]) {
			sv.deleg[i] = true;
			sv.recalled[i] = false;
			sv.gen[i]++;
			op->res.open.deleg_type = RPCRDMA_OPEN_DELEGATE_READ;
			deleg_stateid(i, &op->res.open.deleg_stateid);
		} else {
			op->res.open.deleg_type = RPCRDMA_OPEN_DELEGATE_NONE_EXT;
			op->res.open.why_none = 1; /* WND4_CONTENTION */
		}
		return 0;
	}
	case RPCRDMA_NFS4_OP_READ: {
		unsigned int i = (unsigned int)(*cur - 10);
		uint64_t off = op->arg.read.offset;

		if (*cur < 10 || i >= NFILES)
			return RPCRDMA_NFS4ERR_INVAL;
		if (op->arg.read.stateid.other[0] == 'D' && !sv.deleg[i])
			return RPCRDMA_NFS4ERR_BAD_STATEID;
		if (off > FILE_LEN)
			off = FILE_LEN;
		op->res.read.len = (uint32_t)(FILE_LEN - off < op->arg.read.count ? FILE_LEN - off
										  : op->arg.read.count);
		op->res.read.eof = off + op->res.read.len == FILE_LEN;
		op->buf = file_data[i] + off;
		return 0;
	}
	case RPCRDMA_NFS4_OP_CLOSE:
		op->res.close = op->arg.close;
		op->res.close.seqid++;
		return 0;
	case RPCRDMA_NFS4_OP_DELEGRETURN: {
		unsigned int i = (unsigned int)(*cur - 10);

		sv.delegreturns++;
		if (*cur < 10 || i >= NFILES || !sv.deleg[i] ||
		    op->arg.delegreturn.other[0] != 'D' || op->arg.delegreturn.other[1] != i)
			return RPCRDMA_NFS4ERR_BAD_STATEID;
		if (sv.recall_on_return) {
			sv.recall_on_return = false;
			self_break(i);
			return RPCRDMA_NFS4ERR_DELAY;
		}
		sv.deleg[i] = false;
		if (sv.recalled[i]) {
			/* the conflicting write goes through now */
			content(i, sv.gen[i], file_data[i]);
			sv.recalled[i] = false;
		}
		return 0;
	}
	default:
		return RPCRDMA_NFS4ERR_NOTSUPP;
	}
}

static int self_compound(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct rpcrdma_nfs4_compound *c = res;
	uint8_t cur = 0;

	memcpy(c, args, sizeof(*c));
	c->nres = 0;
	c->status = 0;
	for (uint32_t i = 0; i < c->nops; i++) {
		if (sv.fault == SELF_FAULT_SHORT_RESULTS &&
		    (c->ops[i].op == RPCRDMA_NFS4_OP_OPEN ||
		     c->ops[i].op == RPCRDMA_NFS4_OP_READ)) {
			sv.faults_sent++;
			break; /* c->status is still that of the last result: NFS4_OK */
		}
		c->ops[i].status = self_op(req, c, i, &cur);
		c->nres = i + 1;
		c->status = c->ops[i].status;
		if (c->status)
			break;
	}
	return 0;
}

static int self_null(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return 0;
}

static const struct rpcrdma_svc_proc self_procs[] = {
    {self_null, NULL, 0, NULL, 0, NULL},
    {self_compound, rpcrdma_nfs4_compound_args_dec, sizeof(struct rpcrdma_nfs4_compound),
     rpcrdma_nfs4_compound_res_enc, sizeof(struct rpcrdma_nfs4_compound), NULL},
};

/*
 * Lab: the server side's write is a local process opening the file for
 * writing; nfsd breaks its lease (the delegation) and the open blocks
 * until the delegation is returned or the lease-break time passes.
 */
static void local_path(unsigned int i, char *p, size_t n)
{
	snprintf(p, n, "%s/%s/f%u", local_dir, dir_name, i);
}

static void write_local(unsigned int i, unsigned int g)
{
	static uint8_t buf[FILE_LEN];
	char p[4096];
	int fd;

	local_path(i, p, sizeof(p));
	content(i, g, buf);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, buf, FILE_LEN) == (ssize_t)FILE_LEN);
	CHECK(close(fd) == 0);
}

static pid_t start_writer(unsigned int i, unsigned int g)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		write_local(i, g);
		_exit(0);
	}
	return pid;
}

static unsigned int gen[NFILES];

/* Break file i's delegation; returns when the break is under way (lab) or
 * done (self).  *@writer: the writer process (lab). */
static void break_deleg(unsigned int i, pid_t *writer)
{
	gen[i]++;
	if (self) {
		sv.gen[i] = gen[i];
		self_break(i);
		*writer = 0;
	} else {
		*writer = start_writer(i, gen[i]);
	}
}

/* Runs the session until every writer exited and every file's delegation
 * is returned; returns the time it took. */
static double wait_returns(struct rpcrdma_nfs41_file *f, const unsigned int *idx, unsigned int n,
			   pid_t *writers)
{
	double t0 = now_ms();
	unsigned int left;

	do {
		CHECK(now_ms() - t0 < 120000);
		CHECK(rpcrdma_nfs41_session_run(sess, 20) >= 0);
		left = 0;
		for (unsigned int k = 0; k < n; k++) {
			if (writers[k] > 0) {
				int st;
				pid_t r = waitpid(writers[k], &st, WNOHANG);

				CHECK(r >= 0);
				if (r == writers[k]) {
					CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
					writers[k] = 0;
				}
			}
			left += writers[k] > 0 ||
				rpcrdma_nfs41_deleg_state(sess, &f[idx[k]]) !=
				    RPCRDMA_NFS41_DELEG_RETURNED ||
				(self && sv.recalled[idx[k]]);
		}
	} while (left);
	return now_ms() - t0;
}

static unsigned int lease_break_ms(void)
{
	unsigned int s = 45;
	FILE *fp = fopen("/proc/sys/fs/lease-break-time", "r");

	if (fp) {
		if (fscanf(fp, "%u", &s) != 1)
			s = 45;
		fclose(fp);
	}
	return s * 1000;
}

/*
 * OPEN for reading with a read-delegation wish.  Linux gives none while
 * any grace period runs (lockd's included, after nfsd's own ended:
 * WND4_RESOURCE), so "resource" is waited out, as a program would.
 */
static void open_deleg(unsigned int i, struct rpcrdma_nfs41_file *f)
{
	double t0 = now_ms();
	unsigned int tries = 0;
	char name[8];
	int rc;

	snprintf(name, sizeof(name), "f%u", i);
	for (;;) {
		rc = rpcrdma_nfs41_open(sess, &dir_fh, name,
					RPCRDMA_OPEN4_SHARE_ACCESS_READ |
					    RPCRDMA_OPEN4_SHARE_ACCESS_WANT_READ_DELEG,
					f);
		if (rc != RPCRDMA_ERR_NFS41_NO_DELEGATION || self || f->why_none != 2 ||
		    now_ms() - t0 > 120000)
			break;
		/* the file is open: close it, and ask again in a while */
		CHECK_OK(rpcrdma_nfs41_close(sess, f));
		tries++;
		for (double t1 = now_ms(); now_ms() - t1 < 1000;)
			(void)rpcrdma_nfs41_session_run(sess, 100);
	}
	if (rc == RPCRDMA_ERR_NFS41_NO_DELEGATION)
		fprintf(stderr, "f%u: %s: %s\n", i, rpcrdma_nfs41_strerror(rc),
			rpcrdma_nfs41_why_str(f->why_none));
	CHECK_OK(rc);
	if (tries)
		printf("# f%u: no delegation (resource: a grace period) for %.0f ms, %u OPENs\n", i,
		       now_ms() - t0, tries);
	CHECK_RC(f->deleg_type, RPCRDMA_OPEN_DELEGATE_READ);
	CHECK_RC(rpcrdma_nfs41_deleg_state(sess, f), RPCRDMA_NFS41_DELEG_HELD);
}

static void check_read(unsigned int i, const struct rpcrdma_nfs41_file *f)
{
	static uint8_t got[FILE_LEN], want[FILE_LEN];
	uint32_t len = 0;
	bool eof = false;

	CHECK_OK(rpcrdma_nfs41_read(sess, f, 0, FILE_LEN, got, &len, &eof));
	CHECK_RC(len, FILE_LEN);
	content(i, gen[i], want);
	CHECK(memcmp(got, want, FILE_LEN) == 0);
}

static void case_session(void)
{
	struct rpcrdma_nfs41_session_info in;

	info(&in);
	CHECK(in.backchannel);
	CHECK(in.slots > 0);
	printf("# session: clientid %016llx, exchange flags 0x%x, session flags 0x%x, fore "
	       "slots %u (maxrequests %u, maxops %u, req %u, resp %u, cached %u), back channel: "
	       "maxrequests %u, maxops %u, req %u, resp %u, cached %u, cb_program 0x%x\n",
	       (unsigned long long)in.clientid, in.exchange_flags, in.session_flags, in.slots,
	       in.fore.maxrequests, in.fore.maxoperations, in.fore.maxrequestsize,
	       in.fore.maxresponsesize, in.fore.maxresponsesize_cached, in.back.maxrequests,
	       in.back.maxoperations, in.back.maxrequestsize, in.back.maxresponsesize,
	       in.back.maxresponsesize_cached, in.cb_program);
}

static void recall_one(unsigned int i, const char *name)
{
	struct rpcrdma_nfs41_file f[NFILES];
	struct rpcrdma_nfs41_session_info before, after;
	struct rpcrdma_xprt_stats st0, st1;
	unsigned int idx[1] = {i};
	pid_t writer;
	double ms;

	open_deleg(i, &f[i]);
	check_read(i, &f[i]);
	info(&before);
	stats(&st0);
	break_deleg(i, &writer);
	ms = wait_returns(f, idx, 1, &writer);
	info(&after);
	stats(&st1);
	CHECK(after.stats.cb_recalls > before.stats.cb_recalls);
	CHECK(after.stats.delegs_returned > before.stats.delegs_returned);
	CHECK(st1.rev_calls > st0.rev_calls);
	CHECK(st1.rev_replies > st0.rev_replies);
	CHECK(ms < lease_break_ms() / 2);
	check_read(i, &f[i]);
	CHECK_OK(rpcrdma_nfs41_close(sess, &f[i]));
	printf("# %s: f%u recalled and returned; the server-side write completed in %.0f ms "
	       "(lease-break time %u ms); reverse calls %llu -> %llu, replies %llu -> %llu, "
	       "reverse credits granted %llu\n",
	       name, i, ms, lease_break_ms(), (unsigned long long)st0.rev_calls,
	       (unsigned long long)st1.rev_calls, (unsigned long long)st0.rev_replies,
	       (unsigned long long)st1.rev_replies, (unsigned long long)st1.rev_credits_granted);
}

static void case_recall(void)
{
	recall_one(0, "recall");
}

static void case_many(void)
{
	struct rpcrdma_nfs41_file f[NFILES];
	struct rpcrdma_nfs41_session_info before, after;
	struct rpcrdma_xprt_stats st0, st1;
	unsigned int idx[NFILES - 1];
	pid_t writers[NFILES - 1];
	double ms;

	for (unsigned int k = 0; k < NFILES - 1; k++) {
		idx[k] = k + 1;
		open_deleg(idx[k], &f[idx[k]]);
	}
	info(&before);
	stats(&st0);
	for (unsigned int k = 0; k < NFILES - 1; k++)
		break_deleg(idx[k], &writers[k]);
	ms = wait_returns(f, idx, NFILES - 1, writers);
	info(&after);
	stats(&st1);
	CHECK_RC(after.stats.cb_recalls - before.stats.cb_recalls, NFILES - 1);
	CHECK_RC(after.stats.delegs_returned - before.stats.delegs_returned, NFILES - 1);
	CHECK(NFILES - 1 > cb_credits);
	CHECK(NFILES - 1 > st1.rev_credits_granted);
	CHECK(st1.rev_calls - st0.rev_calls >= NFILES - 1);
	CHECK(st1.rev_credits_in_use_max <= cb_credits);
	for (unsigned int k = 0; k < NFILES - 1; k++) {
		check_read(idx[k], &f[idx[k]]);
		CHECK_OK(rpcrdma_nfs41_close(sess, &f[idx[k]]));
	}
	printf("# many: %u recalls (CB_COMPOUNDs %llu) against %llu reverse credits (the "
	       "server's ask; we offer %u) and %u back-channel slot(s), all answered and returned "
	       "in %.0f ms; most reverse calls at once %llu\n",
	       NFILES - 1, (unsigned long long)(after.stats.cb_compounds - before.stats.cb_compounds),
	       (unsigned long long)st1.rev_credits_granted, cb_credits, after.back.maxrequests, ms,
	       (unsigned long long)st1.rev_credits_in_use_max);
}

/*
 * Lab: the link goes down under a READ (which fails: the connection is lost
 * and reconnecting fails while the link is down) and comes back; the next
 * READ reconnects, the session binds the new connection for both
 * directions, and the recall that follows arrives there.
 */
static void case_relink(void)
{
	struct rpcrdma_nfs41_session_info before, after;
	struct rpcrdma_xprt_stats st0, st1, st2;
	struct rpcrdma_nfs41_file f;
	unsigned int idx[1] = {0};
	char cmd[4096];
	pid_t writer, up;
	double t0, ms;
	int st;

	if (self) {
		/* no link to take down: an explicit bind must give BOTH, and
		 * callbacks go on */
		CHECK_OK(rpcrdma_nfs41_session_bind(sess));
		info(&after);
		CHECK_RC(after.last_bind_dir, RPCRDMA_CDFS4_BOTH);
		CHECK_RC(sv.binds, 1);
		recall_one(0, "relink");
		return;
	}
	CHECK(netdev);
	open_deleg(0, &f);
	info(&before);
	stats(&st0);
	/* the path back in a while, from another process: the READ below is
	 * in flight, its connection lost, the client reconnecting meanwhile */
	if (up_cmd)
		CHECK((size_t)snprintf(cmd, sizeof(cmd), "%s", up_cmd) < sizeof(cmd));
	else
		snprintf(cmd, sizeof(cmd), "ip link set %s up", netdev);
	up = fork();
	CHECK(up >= 0);
	if (up == 0) {
		sleep(8);
		_exit(system(cmd) == 0 ? 0 : 1);
	}
	if (down_cmd)
		CHECK((size_t)snprintf(cmd, sizeof(cmd), "%s", down_cmd) < sizeof(cmd));
	else
		snprintf(cmd, sizeof(cmd), "ip link set %s down", netdev);
	CHECK(system(cmd) == 0);
	t0 = now_ms();
	{
		static uint8_t buf[FILE_LEN];
		uint32_t len;
		int rc = rpcrdma_nfs41_read(sess, &f, 0, FILE_LEN, buf, &len, NULL);

		printf("# relink: READ across the loss: %s after %.0f ms\n",
		       rc ? rpcrdma_nfs41_strerror(rc) : "answered", now_ms() - t0);
	}
	CHECK(waitpid(up, &st, 0) == up && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* READs until one is answered: on a new connection */
	for (;;) {
		static uint8_t buf[FILE_LEN];
		uint32_t len;
		int rc = rpcrdma_nfs41_read(sess, &f, 0, FILE_LEN, buf, &len, NULL);

		if (!rc)
			break;
		stats(&st1);
		printf("# relink: READ after the link came back: %s (%.0f ms, %llu reconnects)\n",
		       rpcrdma_nfs41_strerror(rc), now_ms() - t0, (unsigned long long)st1.reconnects);
		fflush(stdout);
		if (now_ms() - t0 > 180000) {
			(void)system("ip -4 addr; ip route show table 101; ip route get 10.77.0.2; "
				     "ip neigh; ip rule; rdma link");
			CHECK(now_ms() - t0 < 180000);
		}
		for (double t1 = now_ms(); now_ms() - t1 < 1000;)
			(void)rpcrdma_nfs41_session_run(sess, 100);
	}
	stats(&st1);
	CHECK(st1.reconnects > st0.reconnects);
	do {
		CHECK(now_ms() - t0 < 60000);
		(void)rpcrdma_nfs41_session_run(sess, 50);
		info(&after);
	} while (after.stats.binds == before.stats.binds);
	CHECK_RC(after.last_bind_dir, RPCRDMA_CDFS4_BOTH);
	printf("# relink: READ across the link's absence in %.0f ms, reconnects %llu -> %llu, "
	       "BIND_CONN_TO_SESSION(CDFC4_FORE_OR_BOTH) answered CDFS4_BOTH\n",
	       now_ms() - t0, (unsigned long long)st0.reconnects,
	       (unsigned long long)st1.reconnects);
	/* the delegation from before the loss is recalled on the new connection */
	CHECK_RC(rpcrdma_nfs41_deleg_state(sess, &f), RPCRDMA_NFS41_DELEG_HELD);
	break_deleg(0, &writer);
	ms = wait_returns(&f, idx, 1, &writer);
	stats(&st2);
	CHECK(st2.rev_calls > st1.rev_calls);
	CHECK_RC(st2.reconnects, st1.reconnects);
	CHECK(ms < lease_break_ms() / 2);
	check_read(0, &f);
	CHECK_OK(rpcrdma_nfs41_close(sess, &f));
	printf("# relink: f0 recalled on the new connection (reverse calls %llu -> %llu), "
	       "returned; the server-side write completed in %.0f ms\n",
	       (unsigned long long)st1.rev_calls, (unsigned long long)st2.rev_calls, ms);
}

/* --self: what nfsd never sends, each answered as RFC 8881 says. */
static uint32_t cb_send(struct rpcrdma_nfs41_cb_compound *c)
{
	struct rpcrdma_call call;

	memset(&call, 0, sizeof(call));
	call.proc = RPCRDMA_NFS4_CB_PROC_COMPOUND;
	call.encode_args = rpcrdma_nfs41_cb_args_enc;
	call.args = c;
	call.decode_res = rpcrdma_nfs41_cb_res_dec;
	call.res = c;
	if (rpcrdma_backchannel_call(sv.bc, &call))
		fprintf(stderr, "CB: reply stat %u, accept_stat %u\n", call.reply.stat,
			call.reply.accept_stat);
	CHECK_RC(call.status, 0);
	return c->status;
}

static void case_cb_errors(void)
{
	struct rpcrdma_nfs41_cb_compound c;
	struct rpcrdma_nfs41_session_info before, after;
	struct rpcrdma_call call;
	uint32_t seq;

	CHECK(self);
	info(&before);
	memset(&call, 0, sizeof(call));
	call.proc = RPCRDMA_NFS4_CB_PROC_NULL;
	if (rpcrdma_backchannel_call(sv.bc, &call))
		fprintf(stderr, "CB: reply stat %u, accept_stat %u\n", call.reply.stat,
			call.reply.accept_stat);
	CHECK_RC(call.status, 0);
	/* a tag longer than COMPOUND's, echoed whole (RFC 8881 16.2.3) */
	seq = ++sv.cb_seq;
	cb_build(&c, seq);
	for (uint32_t i = 0; i < 200; i++)
		c.tag[i] = (char)('A' + i % 26);
	c.tag_len = 200;
	CHECK_RC(cb_send(&c), RPCRDMA_NFS4_OK);
	CHECK_RC(c.tag_len, 200);
	for (uint32_t i = 0; i < 200; i++)
		CHECK_RC(c.tag[i], 'A' + i % 26);
	/*
	 * ca_maxrequestsize counts the whole RPC message (RFC 8881 18.36.3):
	 * a tag of 3900 bytes leaves the call within the 4096 we offered, one
	 * of 4012 does not once the call's RPC header (40 bytes here) is
	 * counted, though its arguments alone, and its answer, would fit:
	 * NFS4ERR_REQ_TOO_BIG, the slot unmoved.
	 */
	seq = ++sv.cb_seq;
	cb_build(&c, seq);
	memset(c.tag, 'T', 3900);
	c.tag_len = 3900;
	CHECK_RC(cb_send(&c), RPCRDMA_NFS4_OK);
	CHECK_RC(c.tag_len, 3900);
	seq = ++sv.cb_seq;
	cb_build(&c, seq);
	memset(c.tag, 'T', 4012);
	c.tag_len = 4012;
	CHECK_RC(cb_send(&c), RPCRDMA_NFS4ERR_REQ_TOO_BIG);
	CHECK_RC(c.nres, 1);
	cb_build(&c, seq); /* the same sequence id, now new */
	CHECK_RC(cb_send(&c), RPCRDMA_NFS4_OK);
	/* CB_GETATTR: of the protocol, not ours */
	seq = ++sv.cb_seq;
	cb_build(&c, seq);
	c.ops[1].op = RPCRDMA_NFS4_OP_CB_GETATTR;
	c.nops = c.count = 2;
	CHECK_RC(cb_send(&c), RPCRDMA_NFS4ERR_NOTSUPP);
	CHECK_RC(c.nres, 2);
	CHECK_RC(c.ops[0].status, 0);
	CHECK_RC(c.ops[0].res.seqid, seq);
	/* operation 99: OP_CB_ILLEGAL (the decoder checked the resop) */
	seq = ++sv.cb_seq;
	cb_build(&c, seq);
	c.ops[1].op = 99;
	c.nops = c.count = 2;
	CHECK_RC(cb_send(&c), RPCRDMA_NFS4ERR_OP_ILLEGAL);
	CHECK_RC(c.nres, 2);
	/* the same sequence id again: the cached answer */
	cb_build(&c, seq);
	c.ops[1].op = 99;
	c.nops = c.count = 2;
	CHECK_RC(cb_send(&c), RPCRDMA_NFS4ERR_OP_ILLEGAL);
	/* the same sequence id with other operations: a false retry (RFC 8881
	 * 2.10.6.1.3.1), not the cached NFS4_OK of one result for two */
	seq = ++sv.cb_seq;
	cb_build(&c, seq);
	CHECK_RC(cb_send(&c), RPCRDMA_NFS4_OK);
	CHECK_RC(c.nres, 1);
	cb_build(&c, seq);
	cb_recall_op(&c.ops[1], 0);
	c.ops[1].arg.recall.stateid.other[5] = 0x77;
	c.nops = c.count = 2;
	CHECK_RC(cb_send(&c), RPCRDMA_NFS4ERR_SEQ_FALSE_RETRY);
	CHECK_RC(c.nres, 1);
	/* ahead of the slot */
	cb_build(&c, seq + 5);
	CHECK_RC(cb_send(&c), RPCRDMA_NFS4ERR_SEQ_MISORDERED);
	/* a slot we did not offer */
	cb_build(&c, seq + 1);
	c.ops[0].arg.sequence.slotid = 3;
	CHECK_RC(cb_send(&c), RPCRDMA_NFS4ERR_BADSLOT);
	/* another session */
	cb_build(&c, seq + 1);
	c.ops[0].arg.sequence.sessionid[0] ^= 1;
	CHECK_RC(cb_send(&c), RPCRDMA_NFS4ERR_BADSESSION);
	/* minor version 0 */
	cb_build(&c, seq + 1);
	c.minorversion = 0;
	CHECK_RC(cb_send(&c), RPCRDMA_NFS4ERR_MINOR_VERS_MISMATCH);
	CHECK_RC(c.nres, 0);
	/* CB_RECALL without CB_SEQUENCE */
	memset(&c, 0, sizeof(c));
	c.minorversion = 1;
	cb_recall_op(&c.ops[0], 0);
	c.nops = c.count = 1;
	CHECK_RC(cb_send(&c), RPCRDMA_NFS4ERR_OP_NOT_IN_SESSION);
	/* a stateid we do not hold */
	seq = ++sv.cb_seq;
	cb_build(&c, seq);
	cb_recall_op(&c.ops[1], 0);
	c.ops[1].arg.recall.stateid.other[5] = 0x77;
	c.nops = c.count = 2;
	CHECK_RC(cb_send(&c), RPCRDMA_NFS4ERR_BAD_STATEID);
	/* more operations than we evaluate */
	seq = ++sv.cb_seq;
	cb_build(&c, seq);
	c.count = RPCRDMA_NFS41_CB_MAX_OPS + 1;
	CHECK_RC(cb_send(&c), RPCRDMA_NFS4ERR_TOO_MANY_OPS);
	sv.cb_seq--; /* that one did not move the slot */
	info(&after);
	CHECK_RC(after.stats.cb_null - before.stats.cb_null, 1);
	CHECK_RC(after.stats.cb_notsupp - before.stats.cb_notsupp, 1);
	CHECK_RC(after.stats.cb_illegal - before.stats.cb_illegal, 1);
	CHECK_RC(after.stats.cb_replays - before.stats.cb_replays, 1);
	CHECK_RC(after.stats.cb_seq_errors - before.stats.cb_seq_errors, 6);
	CHECK_RC(after.stats.cb_bad - before.stats.cb_bad, 2);
	CHECK_RC(after.stats.cb_recall_unknown - before.stats.cb_recall_unknown, 1);
}

/*
 * --self: a CB_RECALL of a delegation whose DELEGRETURN the program sent
 * itself and which waits to go again (the server said NFS4ERR_DELAY).
 * The recall is answered, and no second DELEGRETURN is sent for it: the
 * one under way returns the delegation, and the program hears success,
 * not the NFS4ERR_BAD_STATEID that the later of two returns would get.
 */
static void case_return_race(void)
{
	struct rpcrdma_nfs41_session_info before, after;
	struct rpcrdma_nfs41_file f0;
	unsigned int returns0;
	double t0;

	CHECK(self);
	open_deleg(0, &f0);
	info(&before);
	returns0 = sv.delegreturns;
	/* the recall is a server-side write's, as in break_deleg() */
	gen[0]++;
	sv.gen[0] = gen[0];
	sv.recall_on_return = true;
	CHECK_OK(rpcrdma_nfs41_delegreturn(sess, &f0));
	for (t0 = now_ms(); sv.cb_busy || sv.npending;) {
		CHECK(now_ms() - t0 < 10000);
		CHECK(rpcrdma_nfs41_session_run(sess, 20) >= 0);
	}
	for (int i = 0; i < 10; i++) /* a second return would go now */
		CHECK(rpcrdma_nfs41_session_run(sess, 20) >= 0);
	info(&after);
	CHECK_RC(rpcrdma_nfs41_deleg_state(sess, &f0), RPCRDMA_NFS41_DELEG_RETURNED);
	CHECK_RC(after.stats.cb_recalls - before.stats.cb_recalls, 1);
	CHECK_RC(after.stats.deleg_return_errors, before.stats.deleg_return_errors);
	CHECK_RC(after.stats.delegs_returned - before.stats.delegs_returned, 1);
	CHECK_RC(sv.delegreturns - returns0, 2); /* the DELAY, and the same call again */
	CHECK(!sv.recalled[0]);
	check_read(0, &f0);
	CHECK_OK(rpcrdma_nfs41_close(sess, &f0));
}

/*
 * --self: NFS4_OK with fewer results than operations, which RFC 8881
 * 16.2.3 rules out.  The reply is refused as a whole: the OPEN and the
 * READ fail, leaving the file and the read's outputs as they were, and
 * the session serves the next calls.
 */
static void case_short_results(void)
{
	static uint8_t buf[FILE_LEN];
	struct rpcrdma_nfs41_file f0, f1;
	uint32_t len = 0xaaaa;
	bool eof = true;

	CHECK(self);
	CHECK_OK(rpcrdma_nfs41_open(sess, &dir_fh, "f0", RPCRDMA_OPEN4_SHARE_ACCESS_READ, &f0));
	sv.fault = SELF_FAULT_SHORT_RESULTS;
	CHECK_RC(rpcrdma_nfs41_open(sess, &dir_fh, "f1", RPCRDMA_OPEN4_SHARE_ACCESS_READ, &f1),
		 RPCRDMA_ERR_BAD_VALUE);
	CHECK_RC(f1.fh.len, 0);
	CHECK_RC(f1.open_stateid.seqid, 0);
	CHECK_RC(rpcrdma_nfs41_read(sess, &f0, 0, FILE_LEN, buf, &len, &eof),
		 RPCRDMA_ERR_BAD_VALUE);
	CHECK_RC(len, 0xaaaa);
	CHECK(eof);
	CHECK_RC(sv.faults_sent, 2);
	sv.fault = SELF_FAULT_NONE;
	sv.faults_sent = 0;
	check_read(0, &f0);
	CHECK_OK(rpcrdma_nfs41_close(sess, &f0));
}

/*
 * --self: SEQUENCE results that answer another call than ours (RFC 8881
 * 18.46.3 has the server echo the session, sequence and slot ids).  Each
 * READ fails and counts in seq_errors; the responder did not move its
 * slot either, so the READ after them is in sequence only if our slot
 * was not moved on (SEQ_MISORDERED otherwise).
 */
static void case_foreign_sequence(void)
{
	static const enum self_fault faults[] = {
	    SELF_FAULT_OTHER_SESSION,
	    SELF_FAULT_OTHER_SEQID,
	    SELF_FAULT_OTHER_SLOT,
	};
	static uint8_t buf[FILE_LEN];
	struct rpcrdma_nfs41_session_info before, after;
	struct rpcrdma_nfs41_file f0;

	CHECK(self);
	CHECK_OK(rpcrdma_nfs41_open(sess, &dir_fh, "f0", RPCRDMA_OPEN4_SHARE_ACCESS_READ, &f0));
	info(&before);
	for (size_t k = 0; k < sizeof(faults) / sizeof(faults[0]); k++) {
		uint32_t len = 0xaaaa;

		sv.fault = faults[k];
		CHECK_RC(rpcrdma_nfs41_read(sess, &f0, 0, FILE_LEN, buf, &len, NULL),
			 RPCRDMA_ERR_BAD_VALUE);
		CHECK_RC(len, 0xaaaa);
	}
	sv.fault = SELF_FAULT_NONE;
	CHECK_RC(sv.faults_sent, 3);
	sv.faults_sent = 0;
	info(&after);
	CHECK_RC(after.stats.seq_errors - before.stats.seq_errors, 3);
	CHECK_RC(after.stats.slots_lost, before.stats.slots_lost);
	CHECK_RC(after.stats.retries, before.stats.retries);
	check_read(0, &f0);
	CHECK_OK(rpcrdma_nfs41_close(sess, &f0));
}

/*
 * --self: slots the server's SEQUENCE results leave us (RFC 8881
 * 18.46.3: the target highest slot is what it would have the client use,
 * the highest slot what it takes).  With a target of slot 0, a reply the
 * client cannot decode loses slot 0; the next call goes on slot 1, below
 * the highest slot, where it waited before for a reply that nothing
 * could bring.  Once the highest slot is 0 too, a call fails at once with
 * NO_SLOT.  Leaves the session unusable: the last case.
 */
static void case_slot_limits(void)
{
	static uint8_t buf[FILE_LEN];
	struct rpcrdma_nfs41_session_info before, after;
	struct rpcrdma_nfs41_file f0;
	uint32_t len = 0;

	CHECK(self);
	CHECK_OK(rpcrdma_nfs41_open(sess, &dir_fh, "f0", RPCRDMA_OPEN4_SHARE_ACCESS_READ, &f0));
	sv.limited = true;
	sv.target_hs = 0;
	sv.highest_hs = SELF_SLOTS - 1;
	check_read(0, &f0); /* its reply sets the target */
	info(&before);
	sv.fault = SELF_FAULT_SHORT_RESULTS;
	CHECK_RC(rpcrdma_nfs41_read(sess, &f0, 0, FILE_LEN, buf, &len, NULL),
		 RPCRDMA_ERR_BAD_VALUE);
	sv.fault = SELF_FAULT_NONE;
	sv.faults_sent = 0;
	info(&after);
	CHECK_RC(after.stats.slots_lost - before.stats.slots_lost, 1);
	check_read(0, &f0);
	check_read(0, &f0);
	info(&after);
	CHECK_RC(after.stats.slots_lost - before.stats.slots_lost, 1);
	/* Now only slot 0, which is lost: no wait, an error. */
	sv.highest_hs = 0;
	check_read(0, &f0); /* on slot 1, whose reply says so */
	CHECK_RC(rpcrdma_nfs41_read(sess, &f0, 0, FILE_LEN, buf, &len, NULL),
		 RPCRDMA_ERR_NFS41_NO_SLOT);
	sv.limited = false;
}

/*
 * --self, alone (it ends the session's use): a SEQUENCE reply with
 * SEQ4_STATUS_BACKCHANNEL_FAULT.  RFC 8881 18.46.3: the client sends
 * nothing more on the fore channel and destroys the session; no
 * BIND_CONN_TO_SESSION, which a CB_PATH_DOWN would get.  The destroy at
 * the end of the run reaches the responder (its session is gone).
 */
static void case_backchannel_fault(void)
{
	struct rpcrdma_nfs41_session_info before, after;
	struct rpcrdma_nfs41_file f0;
	static uint8_t buf[FILE_LEN];
	uint32_t len = 0;

	CHECK(self);
	CHECK_OK(rpcrdma_nfs41_open(sess, &dir_fh, "f0", RPCRDMA_OPEN4_SHARE_ACCESS_READ, &f0));
	info(&before);
	sv.seq_flags = RPCRDMA_SEQ4_STATUS_BACKCHANNEL_FAULT;
	check_read(0, &f0); /* answered; its reply carries the fault */
	sv.seq_flags = 0;
	CHECK_RC(rpcrdma_nfs41_read(sess, &f0, 0, FILE_LEN, buf, &len, NULL),
		 RPCRDMA_ERR_NFS41_SESSION);
	CHECK_RC(rpcrdma_nfs41_close(sess, &f0), RPCRDMA_ERR_NFS41_SESSION);
	info(&after);
	CHECK_RC(after.stats.backchannel_faults - before.stats.backchannel_faults, 1);
	CHECK_RC(after.stats.binds, before.stats.binds);
	CHECK_RC(after.stats.cb_path_down, before.stats.cb_path_down);
	CHECK_RC(after.stats.compounds - before.stats.compounds, 1);
}

/*
 * --self, alone (it ends the session's use): a CB_RECALL that comes after
 * SEQ4_STATUS_BACKCHANNEL_FAULT.  The session sends nothing sequenced any
 * more, so the recalled delegation can never be returned.  The recall is
 * answered NFS4ERR_SERVERFAULT, not NFS4_OK: RFC 8881 20.2.4 has a reply
 * of NFS4_OK or NFS4ERR_DELAY leave the recall in progress, awaiting a
 * DELEGRETURN, and any other end it, so the server need not wait for a
 * return that will not come.  rpcrdma_nfs41_delegreturn() must say so
 * too (RPCRDMA_ERR_NFS41_SESSION), not wait for ever for a return that
 * will not start.  An alarm turns a hang into a failure.
 */
static void on_alarm(int sig)
{
	static const char msg[] = "fault_recall: rpcrdma_nfs41_delegreturn() hung\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

static void case_fault_recall(void)
{
	struct rpcrdma_nfs41_cb_compound c;
	struct rpcrdma_nfs41_session_info before, after;
	struct rpcrdma_nfs41_file f0;

	CHECK(self);
	open_deleg(0, &f0);
	info(&before);
	sv.seq_flags = RPCRDMA_SEQ4_STATUS_BACKCHANNEL_FAULT;
	check_read(0, &f0); /* answered; its reply carries the fault */
	sv.seq_flags = 0;
	cb_build(&c, ++sv.cb_seq);
	cb_recall_op(&c.ops[1], 0);
	c.nops = c.count = 2;
	CHECK_RC(cb_send(&c), RPCRDMA_NFS4ERR_SERVERFAULT);
	CHECK_RC(c.nres, 2);
	CHECK_RC(c.ops[0].status, RPCRDMA_NFS4_OK);
	/* let the session's background work run: it cannot send the return */
	for (int i = 0; i < 5; i++)
		CHECK(rpcrdma_nfs41_session_run(sess, 20) >= 0);
	signal(SIGALRM, on_alarm);
	alarm(20);
	CHECK_RC(rpcrdma_nfs41_delegreturn(sess, &f0), RPCRDMA_ERR_NFS41_SESSION);
	alarm(0);
	info(&after);
	CHECK_RC(after.stats.backchannel_faults - before.stats.backchannel_faults, 1);
	CHECK_RC(after.stats.cb_recalls, before.stats.cb_recalls);
	CHECK_RC(after.stats.cb_recalls_faulted - before.stats.cb_recalls_faulted, 1);
	CHECK_RC(after.stats.compounds - before.stats.compounds, 1);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
    {"session", case_session},
    {"recall", case_recall},
    {"many", case_many},
    {"relink", case_relink},
    {"cb_errors", case_cb_errors},
    {"return_race", case_return_race},
    {"short_results", case_short_results},
    {"foreign_sequence", case_foreign_sequence},
    {"slot_limits", case_slot_limits},
    {"backchannel_fault", case_backchannel_fault}, /* only when named */
    {"fault_recall", case_fault_recall},           /* only when named */
};

/* PUTROOTFH, LOOKUP each component and our directory, GETFH. */
static void find_dir(void)
{
	struct rpcrdma_nfs4_compound c;
	struct rpcrdma_nfs4_op *getfh;
	char path[256], *save = NULL;

	rpcrdma_nfs41_compound_init(sess, &c);
	CHECK(rpcrdma_nfs4_putrootfh(&c));
	snprintf(path, sizeof(path), "%s", export_path);
	for (char *p = strtok_r(path, "/", &save); p; p = strtok_r(NULL, "/", &save))
		CHECK(rpcrdma_nfs4_lookup(&c, p));
	CHECK(rpcrdma_nfs4_lookup(&c, dir_name));
	CHECK(getfh = rpcrdma_nfs4_getfh(&c));
	CHECK_RC(rpcrdma_nfs41_compound_call(sess, &c), 0);
	CHECK_RC(c.status, RPCRDMA_NFS4_OK);
	dir_fh = getfh->res.getfh;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
	    {"server", required_argument, NULL, 's'},   {"path", required_argument, NULL, 'e'},
	    {"local", required_argument, NULL, 'l'},    {"provider", required_argument, NULL, 'p'},
	    {"port", required_argument, NULL, 'P'},     {"self", no_argument, NULL, 'S'},
	    {"max-vers", required_argument, NULL, 'v'}, {"cb-credits", required_argument, NULL, 'c'},
	    {"netdev", required_argument, NULL, 'n'},   {"dir", required_argument, NULL, 'd'},
	    {"up-cmd", required_argument, NULL, 'u'},   {"down-cmd", required_argument, NULL, 'D'},
	    {NULL, 0, NULL, 0},
	};
	const char *server = NULL, *provider = "ofi", *port = "20049";
	struct rpcrdma_nfs41_session_opts so;
	struct rpcrdma_callback_opts cbo;
	struct rpcrdma_client_opts co;
	struct rpcrdma_auth_sys sys;
	struct rpcrdma_opaque_auth cred;
	struct rpcrdma_xprt_stats st;
	struct rpcrdma_nfs41_session_info in;
	char self_port[16];
	int c;

	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 's': server = optarg; break;
		case 'e': export_path = optarg; break;
		case 'l': local_dir = optarg; break;
		case 'p': provider = optarg; break;
		case 'P': port = optarg; break;
		case 'S': self = true; break;
		case 'v': max_vers = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'c': cb_credits = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'n': netdev = optarg; break;
		case 'd': dir_name = optarg; break;
		case 'u': up_cmd = optarg; break;
		case 'D': down_cmd = optarg; break;
		default: return 2;
		}
	}
	if ((!self && (!server || !local_dir)) || max_vers < 1 || max_vers > 2 || !cb_credits) {
		fprintf(stderr, "usage: nfs41_interop --server HOST --path /EXPORT --local DIR "
				"[--provider NAME] [--port N] [--max-vers 2] [--cb-credits N] "
				"[--netdev DEV] [CASE...]\n"
				"       nfs41_interop --self [--provider NAME] [--max-vers 2] "
				"[CASE...]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	CHECK_RC(rpcrdma_loop_create(&loop), 0);
	for (unsigned int i = 0; i < NFILES; i++)
		gen[i] = 1;
	if (self) {
		struct rpcrdma_server_opts sopts;

		for (unsigned int i = 0; i < NFILES; i++) {
			sv.gen[i] = 1;
			content(i, 1, file_data[i]);
		}
		rpcrdma_server_opts_default(&sopts);
		sopts.provider = provider;
		CHECK_RC(rpcrdma_server_create(loop, "127.0.0.1", "0", &sopts, &sv.srv), 0);
		CHECK_RC(rpcrdma_server_register(sv.srv, RPCRDMA_NFS_PROGRAM, RPCRDMA_NFS_V4,
						 self_procs, 2),
			 0);
		snprintf(self_port, sizeof(self_port), "%d", rpcrdma_server_port(sv.srv));
		server = "127.0.0.1";
		port = self_port;
		export_path = "/export";
	} else {
		char p[4096];

		snprintf(p, sizeof(p), "%s/%s", local_dir, dir_name);
		(void)mkdir(p, 0755);
		for (unsigned int i = 0; i < NFILES; i++)
			write_local(i, 1);
		/* nfsd gives no delegation on a file written within the last
		 * moments (its recent-write check): let the writes age */
		sleep(2);
	}
	memset(&sys, 0, sizeof(sys));
	sys.stamp = (uint32_t)getpid();
	strcpy(sys.machinename, "librpcrdma-nfs41");
	sys.uid = (uint32_t)geteuid();
	sys.gid = (uint32_t)getegid();
	CHECK_RC(rpcrdma_auth_sys_encode(&sys, &cred), 0);
	rpcrdma_client_opts_default(&co);
	co.provider = provider;
	co.cred = &cred;
	co.timeout_ms = 60000;
	co.max_vers = max_vers;
	CHECK_RC(rpcrdma_client_create(loop, server, port, RPCRDMA_NFS_PROGRAM, RPCRDMA_NFS_V4, &co,
				       &clnt),
		 0);
	rpcrdma_callback_opts_default(&cbo);
	cbo.credits = cb_credits;
	rpcrdma_nfs41_session_opts_default(&so);
	so.cb = &cbo;
	CHECK_OK(rpcrdma_nfs41_session_create(clnt, loop, &so, &sess));
	find_dir();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool run = optind == argc ? (strcmp(cases[i].name, "relink") != 0 || self) &&
						strcmp(cases[i].name, "backchannel_fault") != 0 &&
						strcmp(cases[i].name, "fault_recall") != 0
					  : false;

		if ((strcmp(cases[i].name, "cb_errors") == 0 ||
		     strcmp(cases[i].name, "return_race") == 0 ||
		     strcmp(cases[i].name, "short_results") == 0 ||
		     strcmp(cases[i].name, "foreign_sequence") == 0) &&
		    !self)
			run = false;
		for (int k = optind; k < argc; k++)
			run |= strcmp(argv[k], cases[i].name) == 0;
		if (!run)
			continue;
		cases[i].fn();
		printf("ok - %s\n", cases[i].name);
		fflush(stdout);
	}
	CHECK_RC(rpcrdma_client_stats(clnt, &st), 0);
	info(&in);
	if (max_vers == 2) {
		printf("# version two: %llu fall-back(s) to Version One, %llu calls in Version Two\n",
		       (unsigned long long)st.vers_fallbacks, (unsigned long long)st.vers_two_msgs);
		if (!self)
			CHECK_RC(st.vers_fallbacks, 1);
	}
	printf("# client: %llu calls, %llu reconnects; reverse: %llu calls served, %llu replies, "
	       "credits granted %llu, most at once %llu; session: %llu compounds, %llu retries, "
	       "%llu CB_NULL, %llu CB_COMPOUND, %llu recalls, %llu returned, %llu binds\n",
	       (unsigned long long)st.calls_sent, (unsigned long long)st.reconnects,
	       (unsigned long long)st.rev_calls, (unsigned long long)st.rev_replies,
	       (unsigned long long)st.rev_credits_granted,
	       (unsigned long long)st.rev_credits_in_use_max, (unsigned long long)in.stats.compounds,
	       (unsigned long long)in.stats.retries, (unsigned long long)in.stats.cb_null,
	       (unsigned long long)in.stats.cb_compounds, (unsigned long long)in.stats.cb_recalls,
	       (unsigned long long)in.stats.delegs_returned, (unsigned long long)in.stats.binds);
	if (self) {
		CHECK(sv.cb_nulls_ok == 1);
		CHECK(sv.recalls_ok == sv.recalls_sent);
		CHECK(in.stats.retries >= 1); /* the GRACE */
	}
	CHECK_OK(rpcrdma_nfs41_session_destroy(sess));
	if (self)
		CHECK(!sv.session);
	rpcrdma_client_destroy(clnt);
	if (sv.srv)
		rpcrdma_server_destroy(sv.srv);
	for (int i = 0; i < 5; i++)
		(void)rpcrdma_loop_run_once(loop, 0);
	CHECK_RC(rpcrdma_loop_destroy(loop), 0);
	return 0;
}
