/*
 * The NFSv4.1 session's state, shared by the fore channel (nfs41_session.c)
 * and the callback service (nfs41_cb.c).  Internal to src/nfs.
 */
#ifndef RPCRDMA_NFS41_SESSION_H
#define RPCRDMA_NFS41_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "rpcrdma/nfs4.h"

struct s41_call;

struct s41_slot {
	uint32_t seqid; /* of the last call the server answered on it */
	bool busy;
	bool lost;      /* a call failed unanswered: its sequence is unknown */
};

struct s41_cb_slot {
	uint32_t seqid;
	bool cached;
	struct rpcrdma_nfs41_cb_compound reply; /* the last answer, for replays */
};

struct s41_deleg {
	enum rpcrdma_nfs41_deleg_state state;
	bool returning; /* DELEGRETURN in flight */
	struct rpcrdma_nfs4_stateid stateid;
	struct rpcrdma_nfs4_fh fh;
};

struct rpcrdma_nfs41_session {
	struct rpcrdma_client *clnt;
	struct rpcrdma_loop *loop;
	struct rpcrdma_nfs41_session_opts opts;
	uint8_t owner[RPCRDMA_NFS41_OWNER_MAX];
	uint32_t owner_len;
	struct rpcrdma_nfs41_session_info info;
	bool established, dead;
	/* The server reported SEQ4_STATUS_BACKCHANNEL_FAULT: no sequenced
	 * call goes out any more; the session is to be destroyed. */
	bool faulted;

	/* Fore channel. */
	struct s41_slot slots[RPCRDMA_NFS41_MAX_SLOTS];
	/* In use; the server's target highest slot + 1 (what it would have
	 * us use) and its highest slot + 1 (what it takes; RFC 8881 18.46.3) */
	uint32_t nslots, target, highest;
	struct s41_call *wait_head, *wait_tail; /* for a slot, a retry time, or a bind */
	unsigned int in_flight;           /* our async calls not yet finished */
	unsigned int opens_in_flight;
	uint64_t reconnects_seen;
	bool need_bind, binding;
	bool wake_pending;

	/* Back channel. */
	struct s41_cb_slot cb_slots[RPCRDMA_NFS41_MAX_CB_SLOTS];
	uint32_t ncb_slots;
	struct s41_deleg *delegs;         /* RPCRDMA_NFS41_MAX_DELEGS entries */
	uint32_t ndelegs;                 /* entries used (a high-water mark) */
};

/* nfs41_session.c, for the callback service. */
struct rpcrdma_nfs41_session *rpcrdma__nfs41_session_of(uint32_t cb_program);
/* A recalled delegation is to be returned: start it on the loop. */
void rpcrdma__nfs41_kick(struct rpcrdma_nfs41_session *s);

/* nfs41_cb.c */
extern const struct rpcrdma_svc_proc rpcrdma__nfs41_cb_procs[2];
/* Evaluate CB_COMPOUND @c (arguments decoded into it) for @s (NULL: no
 * such session), leaving the answer in @c. */
void rpcrdma__nfs41_cb_eval(struct rpcrdma_nfs41_session *s, struct rpcrdma_nfs41_cb_compound *c);

#endif /* RPCRDMA_NFS41_SESSION_H */
