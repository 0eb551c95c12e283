/*
 * librpcrdma: ONC RPC version 2 messages (RFC 5531) and their credentials.
 *
 * The call header (xid, rpcvers, prog, vers, proc, cred, verf) and every
 * form of reply: MSG_ACCEPTED with SUCCESS, PROG_UNAVAIL, PROG_MISMATCH,
 * PROC_UNAVAIL, GARBAGE_ARGS or SYSTEM_ERR; MSG_DENIED with RPC_MISMATCH or
 * AUTH_ERROR.  Decoding stops where the procedure's arguments or results
 * begin, so the stream's position tells the caller where they are.
 *
 * AUTH_NONE and AUTH_SYS (RFC 5531 appendix A) are understood; other
 * flavors pass through as opaque bodies of at most 400 bytes.
 */
#ifndef RPCRDMA_RPC_MSG_H
#define RPCRDMA_RPC_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/common.h"
#include "rpcrdma/xdr.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RPCRDMA_RPC_VERSION 2u

enum rpcrdma_rpc_msg_type {
	RPCRDMA_RPC_CALL = 0,
	RPCRDMA_RPC_REPLY = 1,
};

enum rpcrdma_rpc_reply_stat {
	RPCRDMA_RPC_MSG_ACCEPTED = 0,
	RPCRDMA_RPC_MSG_DENIED = 1,
};

enum rpcrdma_rpc_accept_stat {
	RPCRDMA_RPC_SUCCESS = 0,
	RPCRDMA_RPC_PROG_UNAVAIL = 1,
	RPCRDMA_RPC_PROG_MISMATCH = 2,
	RPCRDMA_RPC_PROC_UNAVAIL = 3,
	RPCRDMA_RPC_GARBAGE_ARGS = 4,
	RPCRDMA_RPC_SYSTEM_ERR = 5,
};

enum rpcrdma_rpc_reject_stat {
	RPCRDMA_RPC_MISMATCH = 0,
	RPCRDMA_RPC_AUTH_ERROR = 1,
};

enum rpcrdma_rpc_auth_stat {
	RPCRDMA_AUTH_OK = 0,
	RPCRDMA_AUTH_BADCRED = 1,
	RPCRDMA_AUTH_REJECTEDCRED = 2,
	RPCRDMA_AUTH_BADVERF = 3,
	RPCRDMA_AUTH_REJECTEDVERF = 4,
	RPCRDMA_AUTH_TOOWEAK = 5,
	RPCRDMA_AUTH_INVALIDRESP = 6,
	RPCRDMA_AUTH_FAILED = 7,
	RPCRDMA_AUTH_KERB_GENERIC = 8,
	RPCRDMA_AUTH_TIMEEXPIRE = 9,
	RPCRDMA_AUTH_TKT_FILE = 10,
	RPCRDMA_AUTH_DECODE = 11,
	RPCRDMA_AUTH_NET_ADDR = 12,
	RPCRDMA_RPCSEC_GSS_CREDPROBLEM = 13,
	RPCRDMA_RPCSEC_GSS_CTXPROBLEM = 14,
};

enum rpcrdma_auth_flavor {
	RPCRDMA_AUTH_NONE = 0,
	RPCRDMA_AUTH_SYS = 1,
	RPCRDMA_AUTH_SHORT = 2,
	RPCRDMA_AUTH_DH = 3,
	RPCRDMA_RPCSEC_GSS = 6,
};

/** RFC 5531 section 8.2: an opaque_auth body holds at most 400 bytes. */
#define RPCRDMA_AUTH_BODY_MAX 400u
/** RFC 5531 appendix A: AUTH_SYS limits. */
#define RPCRDMA_AUTH_SYS_MACHINENAME_MAX 255u
#define RPCRDMA_AUTH_SYS_NGIDS_MAX 16u

struct rpcrdma_opaque_auth {
	uint32_t flavor;
	uint32_t len;
	uint8_t body[RPCRDMA_AUTH_BODY_MAX];
};

struct rpcrdma_auth_sys {
	uint32_t stamp;
	char machinename[RPCRDMA_AUTH_SYS_MACHINENAME_MAX + 1]; /* NUL-terminated */
	uint32_t uid;
	uint32_t gid;
	uint32_t ngids;
	uint32_t gids[RPCRDMA_AUTH_SYS_NGIDS_MAX];
};

struct rpcrdma_rpc_call {
	uint32_t rpcvers; /* decode reports what arrived; encode writes 2 */
	uint32_t prog;
	uint32_t vers;
	uint32_t proc;
	struct rpcrdma_opaque_auth cred;
	struct rpcrdma_opaque_auth verf;
};

struct rpcrdma_rpc_reply {
	uint32_t stat;                   /* enum rpcrdma_rpc_reply_stat */
	/* MSG_ACCEPTED */
	struct rpcrdma_opaque_auth verf;
	uint32_t accept_stat;            /* enum rpcrdma_rpc_accept_stat */
	/* PROG_MISMATCH and RPC_MISMATCH */
	uint32_t mismatch_low;
	uint32_t mismatch_high;
	/* MSG_DENIED */
	uint32_t reject_stat;            /* enum rpcrdma_rpc_reject_stat */
	uint32_t auth_stat;              /* AUTH_ERROR only */
};

struct rpcrdma_rpc_msg {
	uint32_t xid;
	uint32_t type; /* enum rpcrdma_rpc_msg_type */
	union {
		struct rpcrdma_rpc_call call;
		struct rpcrdma_rpc_reply reply;
	} u;
};

/**
 * rpcrdma_rpc_decode_msg - decode an RPC call or reply header
 *
 * On success the stream is at the first byte of the call's arguments or
 * the SUCCESS reply's results (or at the end of any other reply), and the
 * fields the message does not carry are zero.  Returns 0, -EINVAL when an
 * argument is NULL, RPCRDMA_ERR_TRUNCATED when the input ends early,
 * RPCRDMA_ERR_TOO_LONG for an auth body over 400 bytes, RPCRDMA_ERR_BAD_RPC
 * for an unknown msg_type, reply_stat, accept_stat or reject_stat.  On
 * failure neither the stream nor @msg has changed; do not retry, the message
 * is malformed.  Auth flavors and auth_stat are not checked: both are IANA
 * registries that grow without changing the layout.
 *
 * A call whose rpcvers is not 2 decodes (the server must answer
 * RPC_MISMATCH, so it needs the XID) but stops right after rpcvers, since
 * the rest belongs to another version's layout: prog, vers, proc, cred and
 * verf are zero (AUTH_NONE, empty).  Check msg->u.call.rpcvers.
 */
RPCRDMA_EXTERN int rpcrdma_rpc_decode_msg(struct rpcrdma_xdr_stream *xdr,
					  struct rpcrdma_rpc_msg *msg);

/**
 * rpcrdma_rpc_encode_call - encode a call header, rpcvers 2
 *
 * Returns 0, -EINVAL for an auth body over 400 bytes, or
 * RPCRDMA_ERR_NOSPACE (nothing written).
 */
RPCRDMA_EXTERN int rpcrdma_rpc_encode_call(struct rpcrdma_xdr_stream *xdr, uint32_t xid,
					   const struct rpcrdma_rpc_call *call);

/**
 * rpcrdma_rpc_encode_reply - encode a reply header
 *
 * Writes the fields @reply->stat and its sub-status call for; for SUCCESS
 * the results follow.  auth_stat is written as given, unchecked.  Returns 0,
 * -EINVAL for an unknown reply_stat, accept_stat or reject_stat or a verf
 * body over 400 bytes, or RPCRDMA_ERR_NOSPACE (nothing written).
 */
RPCRDMA_EXTERN int rpcrdma_rpc_encode_reply(struct rpcrdma_xdr_stream *xdr, uint32_t xid,
					    const struct rpcrdma_rpc_reply *reply);

/** Set @auth to AUTH_NONE with an empty body. */
RPCRDMA_EXTERN void rpcrdma_auth_none(struct rpcrdma_opaque_auth *auth);

/**
 * rpcrdma_auth_sys_encode - build an AUTH_SYS credential
 *
 * Returns 0, or -EINVAL when the machine name exceeds 255 bytes or ngids
 * exceeds 16.
 */
RPCRDMA_EXTERN int rpcrdma_auth_sys_encode(const struct rpcrdma_auth_sys *sys,
					   struct rpcrdma_opaque_auth *auth);

/**
 * rpcrdma_auth_sys_decode - read an AUTH_SYS credential body
 *
 * Returns 0, -EINVAL when @auth is not AUTH_SYS (or its len is over 400), or,
 * when the body is malformed: RPCRDMA_ERR_TRUNCATED if it is too short,
 * RPCRDMA_ERR_TOO_LONG for a machine name over 255 bytes or more than 16
 * gids, RPCRDMA_ERR_BAD_VALUE for a machine name holding a NUL,
 * RPCRDMA_ERR_BAD_RPC for bytes left over after the last gid.  @sys is
 * untouched on failure; a server answers AUTH_ERROR / AUTH_BADCRED.
 */
RPCRDMA_EXTERN int rpcrdma_auth_sys_decode(const struct rpcrdma_opaque_auth *auth,
					   struct rpcrdma_auth_sys *sys);

/** Names for logs and rpcrdma-dump ("SUCCESS", "MSG_DENIED", ...); NULL if unknown. */
RPCRDMA_EXTERN const char *rpcrdma_rpc_reply_stat_name(uint32_t stat);
RPCRDMA_EXTERN const char *rpcrdma_rpc_accept_stat_name(uint32_t stat);
RPCRDMA_EXTERN const char *rpcrdma_rpc_reject_stat_name(uint32_t stat);
RPCRDMA_EXTERN const char *rpcrdma_rpc_auth_stat_name(uint32_t stat);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_RPC_MSG_H */
