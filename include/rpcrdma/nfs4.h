/*
 * librpcrdma: a small NFS version 4 COMPOUND client (RFC 7530 for
 * NFSv4.0), enough to read files and symbolic links by path, with the
 * NFSv4 upper-layer binding for RPC-over-RDMA (draft-callaghan-nfsdirect-00
 * section 4, RFC 8267 section 4.2): READ data and READLINK link text are
 * DDP-eligible results, and a COMPOUND offers one Write chunk per such
 * operation, in the order the operations appear.
 *
 * Operations: PUTROOTFH, PUTFH, LOOKUP, GETFH, GETATTR, READ, READLINK.
 * In minor version 0 (no SEQUENCE, so no session is needed) READ uses a
 * stateid the caller gives, the anonymous one (all zeros) for reading
 * without OPEN.
 *
 * NFSv4.1 (RFC 8881), further down: minor version 1's session operations,
 * OPEN with delegation wishes, CLOSE and DELEGRETURN in the same COMPOUND
 * builder, a session object with its slot table, and the callback service
 * (CB_NULL, CB_COMPOUND with CB_SEQUENCE and CB_RECALL) on the client's
 * own RDMA connection (RFC 8167).
 */
#ifndef RPCRDMA_NFS4_H
#define RPCRDMA_NFS4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/backchannel.h"
#include "rpcrdma/common.h"
#include "rpcrdma/rpc.h"
#include "rpcrdma/loop.h"
#include "rpcrdma/xdr.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef RPCRDMA_NFS_PROGRAM
#define RPCRDMA_NFS_PROGRAM 100003u /* also in nfs3.h */
#endif
#define RPCRDMA_NFS_V4 4u
#define RPCRDMA_NFS4_PROC_NULL 0u
#define RPCRDMA_NFS4_PROC_COMPOUND 1u

#define RPCRDMA_NFS4_FHSIZE 128u      /* NFS4_FHSIZE */
#define RPCRDMA_NFS4_NAME_MAX 255u    /* our limit on a LOOKUP component */
#define RPCRDMA_NFS4_TAG_MAX 64u      /* COMPOUND tags we send or keep */
#define RPCRDMA_NFS4_MAX_OPS 16u      /* operations in one COMPOUND */
#define RPCRDMA_NFS4_BITMAP_WORDS 3u  /* attribute bitmaps we send or keep */
#define RPCRDMA_NFS4_ATTR_MAX 1024u   /* attribute values we keep */
#define RPCRDMA_NFS4_LINK_MAX 4096u   /* link text we accept (one page, as Linux) */
#define RPCRDMA_NFS4_MAXREAD (1u << 20) /* largest READ count we send */

#define RPCRDMA_NFS4_OK 0u

/* Operation numbers (RFC 7530 section 16). */
enum rpcrdma_nfs4_opnum {
	RPCRDMA_NFS4_OP_GETATTR = 9,
	RPCRDMA_NFS4_OP_GETFH = 10,
	RPCRDMA_NFS4_OP_LOOKUP = 15,
	RPCRDMA_NFS4_OP_PUTFH = 22,
	RPCRDMA_NFS4_OP_PUTROOTFH = 24,
	RPCRDMA_NFS4_OP_READ = 25,
	RPCRDMA_NFS4_OP_READLINK = 27,
	/* NFSv4.1 (RFC 8881 section 18); minorversion 1 only. */
	RPCRDMA_NFS4_OP_CLOSE = 4,
	RPCRDMA_NFS4_OP_DELEGRETURN = 8,
	RPCRDMA_NFS4_OP_OPEN = 18,
	RPCRDMA_NFS4_OP_BIND_CONN_TO_SESSION = 41,
	RPCRDMA_NFS4_OP_EXCHANGE_ID = 42,
	RPCRDMA_NFS4_OP_CREATE_SESSION = 43,
	RPCRDMA_NFS4_OP_DESTROY_SESSION = 44,
	RPCRDMA_NFS4_OP_SEQUENCE = 53,
	RPCRDMA_NFS4_OP_DESTROY_CLIENTID = 57,
	RPCRDMA_NFS4_OP_RECLAIM_COMPLETE = 58,
};

/* Attribute numbers the decoder of attribute values understands. */
enum rpcrdma_nfs4_attr {
	RPCRDMA_NFS4_ATTR_TYPE = 1,
	RPCRDMA_NFS4_ATTR_CHANGE = 3,
	RPCRDMA_NFS4_ATTR_SIZE = 4,
	RPCRDMA_NFS4_ATTR_FSID = 8,
	RPCRDMA_NFS4_ATTR_FILEID = 20,
	RPCRDMA_NFS4_ATTR_MODE = 33,
	RPCRDMA_NFS4_ATTR_NUMLINKS = 35,
	RPCRDMA_NFS4_ATTR_SPACE_USED = 45,
	RPCRDMA_NFS4_ATTR_TIME_MODIFY = 53,
};

struct rpcrdma_nfs4_fh {
	uint32_t len;
	uint8_t data[RPCRDMA_NFS4_FHSIZE];
};

struct rpcrdma_nfs4_stateid {
	uint32_t seqid;
	uint8_t other[12];
};

struct rpcrdma_nfs4_bitmap {
	uint32_t n; /* words used */
	uint32_t w[RPCRDMA_NFS4_BITMAP_WORDS];
};

/*
 * NFSv4.1 (RFC 8881): sessions.  The types the COMPOUND codec needs; the
 * session object that uses them is further down.
 */
#define RPCRDMA_NFS4_SESSIONID_SIZE 16u
#define RPCRDMA_NFS41_OWNER_MAX 128u  /* client and open owners we send or keep */
#define RPCRDMA_NFS4_OPAQUE_LIMIT 1024u /* NFS4_OPAQUE_LIMIT: server owner, scope */

/* EXCHANGE_ID flags (RFC 8881 18.35.3). */
#define RPCRDMA_EXCHGID4_FLAG_SUPP_MOVED_REFER 0x00000001u
#define RPCRDMA_EXCHGID4_FLAG_BIND_PRINC_STATEID 0x00000100u
#define RPCRDMA_EXCHGID4_FLAG_USE_NON_PNFS 0x00010000u
#define RPCRDMA_EXCHGID4_FLAG_CONFIRMED_R 0x80000000u
/* CREATE_SESSION flags (18.36.3). */
#define RPCRDMA_CREATE_SESSION4_FLAG_PERSIST 0x1u
#define RPCRDMA_CREATE_SESSION4_FLAG_CONN_BACK_CHAN 0x2u
#define RPCRDMA_CREATE_SESSION4_FLAG_CONN_RDMA 0x4u
/* BIND_CONN_TO_SESSION directions (18.34). */
#define RPCRDMA_CDFC4_FORE 1u
#define RPCRDMA_CDFC4_BACK 2u
#define RPCRDMA_CDFC4_FORE_OR_BOTH 3u
#define RPCRDMA_CDFC4_BACK_OR_BOTH 7u
#define RPCRDMA_CDFS4_FORE 1u
#define RPCRDMA_CDFS4_BACK 2u
#define RPCRDMA_CDFS4_BOTH 3u
/* OPEN share_access, with the NFSv4.1 wishes (18.16.3). */
#define RPCRDMA_OPEN4_SHARE_ACCESS_READ 0x1u
#define RPCRDMA_OPEN4_SHARE_ACCESS_WRITE 0x2u
#define RPCRDMA_OPEN4_SHARE_ACCESS_BOTH 0x3u
#define RPCRDMA_OPEN4_SHARE_ACCESS_WANT_READ_DELEG 0x0100u
#define RPCRDMA_OPEN4_SHARE_ACCESS_WANT_WRITE_DELEG 0x0200u
#define RPCRDMA_OPEN4_SHARE_ACCESS_WANT_NO_DELEG 0x0400u
/* open_claim_type4 */
#define RPCRDMA_CLAIM_NULL 0u
#define RPCRDMA_CLAIM_FH 4u
/* open_delegation_type4 */
#define RPCRDMA_OPEN_DELEGATE_NONE 0u
#define RPCRDMA_OPEN_DELEGATE_READ 1u
#define RPCRDMA_OPEN_DELEGATE_WRITE 2u
#define RPCRDMA_OPEN_DELEGATE_NONE_EXT 3u
/* SEQUENCE status flags we act on (18.46.3). */
#define RPCRDMA_SEQ4_STATUS_CB_PATH_DOWN 0x00000002u
#define RPCRDMA_SEQ4_STATUS_BACKCHANNEL_FAULT 0x00000400u
#define RPCRDMA_SEQ4_STATUS_CB_PATH_DOWN_SESSION 0x00000200u

/* nfsstat4 values the NFSv4.1 code reads or sends. */
enum rpcrdma_nfs4_stat {
	RPCRDMA_NFS4ERR_NOENT = 2,
	RPCRDMA_NFS4ERR_INVAL = 22,
	RPCRDMA_NFS4ERR_BADHANDLE = 10001,
	RPCRDMA_NFS4ERR_NOTSUPP = 10004,
	RPCRDMA_NFS4ERR_SERVERFAULT = 10006,
	RPCRDMA_NFS4ERR_DELAY = 10008,
	RPCRDMA_NFS4ERR_GRACE = 10013,
	RPCRDMA_NFS4ERR_MINOR_VERS_MISMATCH = 10021,
	RPCRDMA_NFS4ERR_STALE_CLIENTID = 10022,
	RPCRDMA_NFS4ERR_BAD_STATEID = 10025,
	RPCRDMA_NFS4ERR_BADXDR = 10036,
	RPCRDMA_NFS4ERR_OP_ILLEGAL = 10044,
	RPCRDMA_NFS4ERR_BADSESSION = 10052,
	RPCRDMA_NFS4ERR_BADSLOT = 10053,
	RPCRDMA_NFS4ERR_CONN_NOT_BOUND_TO_SESSION = 10055,
	RPCRDMA_NFS4ERR_SEQ_MISORDERED = 10063,
	RPCRDMA_NFS4ERR_SEQUENCE_POS = 10064,
	RPCRDMA_NFS4ERR_REQ_TOO_BIG = 10065,
	RPCRDMA_NFS4ERR_REP_TOO_BIG = 10066,
	RPCRDMA_NFS4ERR_REP_TOO_BIG_TO_CACHE = 10067,
	RPCRDMA_NFS4ERR_RETRY_UNCACHED_REP = 10068,
	RPCRDMA_NFS4ERR_TOO_MANY_OPS = 10070,
	RPCRDMA_NFS4ERR_OP_NOT_IN_SESSION = 10071,
	RPCRDMA_NFS4ERR_SEQ_FALSE_RETRY = 10076,
	RPCRDMA_NFS4ERR_DEADSESSION = 10078,
};

/* channel_attrs4 (RFC 8881 18.36). */
struct rpcrdma_nfs41_chan_attrs {
	uint32_t headerpadsize;
	uint32_t maxrequestsize;
	uint32_t maxresponsesize;
	uint32_t maxresponsesize_cached;
	uint32_t maxoperations;
	uint32_t maxrequests;
	uint32_t nrdma_ird; /* 0 or 1 */
	uint32_t rdma_ird;
};

/*
 * How a DDP-eligible operation's result is to come back over RDMA.
 *
 * AUTO, the default: READ data in a Write chunk; at the first READLINK the
 * Write list ends, so the link text, and every result after it, comes
 * inline or in the Reply chunk.  Why READLINK never gets a chunk by
 * default: the Linux server (seen in the lab on 6.1; the code is the same
 * from 5.10 on) cannot answer either form.
 *  - A Write chunk: fs/nfsd/nfs4xdr.c marks the result's start 4 bytes
 *    early, at its length word, so the chunk gets the length word and the
 *    head of the text, the inline reply keeps the tail where the length
 *    word belongs, and up to three bytes are lost.  This client refuses
 *    such a reply (the length is beyond the room: RPCRDMA_ERR_TOO_LONG)
 *    and never returns it.
 *  - A zero-length Write chunk (nfsdirect-00: "return its result
 *    in-line"): the server fails to build the reply (-E2BIG in its trace)
 *    and closes the connection, on every retransmission.
 * A link is at most a page, so inline costs little.  CHUNK and INLINE ask
 * for those forms anyway, for servers that follow the binding.
 *
 * A third Linux fault to plan COMPOUNDs around: a call that offers a
 * Reply chunk beside Write chunks the server uses fails the same way as
 * the zero-length chunk (Linux always uses a Reply chunk it is given, and
 * checks the whole reply, Write chunk data included, against the Reply
 * chunk's size).  The client offers a Reply chunk when the largest reply
 * without the Write chunks' data can exceed the inline size
 * (rpcrdma_nfs4_compound_max_reply): keep READLINK's room and GETATTR's
 * requests small in COMPOUNDs that READ.  tests/nfs/nfs4_interop.c shows
 * all three.
 */
enum rpcrdma_nfs4_ddp {
	RPCRDMA_NFS4_DDP_AUTO = 0,   /* see above */
	RPCRDMA_NFS4_DDP_CHUNK = 1,  /* a Write chunk of room bytes at buf */
	RPCRDMA_NFS4_DDP_INLINE = 2, /* a zero-length Write chunk: inline */
};

/**
 * struct rpcrdma_nfs4_op - one operation of a COMPOUND, with its result
 *
 * Set op and its arguments; READ and READLINK also need buf and room,
 * where their data or link text is decoded (over RDMA, placed there by
 * the server through this operation's Write chunk).
 */
struct rpcrdma_nfs4_op {
	uint32_t op; /* enum rpcrdma_nfs4_opnum */
	union {
		struct rpcrdma_nfs4_fh putfh;
		struct {
			uint32_t len;
			char name[RPCRDMA_NFS4_NAME_MAX + 1];
		} lookup;
		struct rpcrdma_nfs4_bitmap getattr;
		struct {
			struct rpcrdma_nfs4_stateid stateid;
			uint64_t offset;
			uint32_t count;
		} read;
		/* NFSv4.1 */
		struct {
			uint8_t sessionid[RPCRDMA_NFS4_SESSIONID_SIZE];
			uint32_t seqid, slotid, highest_slotid;
			bool cachethis;
		} sequence;
		struct {
			uint8_t verifier[8];
			uint32_t owner_len;
			uint8_t owner[RPCRDMA_NFS41_OWNER_MAX];
			uint32_t flags; /* sent with SP4_NONE and no implementation id */
		} exchange_id;
		struct {
			uint64_t clientid;
			uint32_t seqid, flags;
			struct rpcrdma_nfs41_chan_attrs fore, back;
			uint32_t cb_program;
			uint32_t cb_secflavor; /* 0 AUTH_NONE or 1 AUTH_SYS (sent empty) */
		} create_session;
		struct {
			uint8_t sessionid[RPCRDMA_NFS4_SESSIONID_SIZE];
			uint32_t dir; /* RPCRDMA_CDFC4_* */
			bool rdma_mode;
		} bind_conn;
		uint8_t destroy_session[RPCRDMA_NFS4_SESSIONID_SIZE];
		uint64_t destroy_clientid;
		bool reclaim_complete_one_fs;
		struct {
			uint32_t share_access, share_deny;
			uint64_t clientid;
			uint32_t owner_len;
			uint8_t owner[RPCRDMA_NFS41_OWNER_MAX];
			uint32_t claim; /* RPCRDMA_CLAIM_NULL (of name) or _FH */
			uint32_t name_len;
			char name[RPCRDMA_NFS4_NAME_MAX + 1];
		} open; /* OPEN4_NOCREATE: opens existing files only */
		struct rpcrdma_nfs4_stateid close;       /* seqid 0 (RFC 8881 18.2.3) */
		struct rpcrdma_nfs4_stateid delegreturn;
	} arg;
	void *buf;
	uint32_t room;
	enum rpcrdma_nfs4_ddp ddp;

	/* Results: status, and the rest when it is RPCRDMA_NFS4_OK. */
	uint32_t status;
	union {
		struct rpcrdma_nfs4_fh getfh;
		struct {
			struct rpcrdma_nfs4_bitmap mask;
			uint32_t len;
			uint8_t vals[RPCRDMA_NFS4_ATTR_MAX];
		} getattr;
		struct {
			bool eof;
			uint32_t len; /* bytes at buf */
		} read;
		struct {
			uint32_t len; /* bytes at buf */
		} readlink;
		/* NFSv4.1 */
		struct {
			uint8_t sessionid[RPCRDMA_NFS4_SESSIONID_SIZE];
			uint32_t seqid, slotid, highest_slotid, target_highest_slotid;
			uint32_t status_flags;
		} sequence;
		struct {
			uint64_t clientid;
			uint32_t seqid, flags;
			uint64_t so_minor_id;
			uint32_t so_major_len, scope_len; /* contents not kept */
		} exchange_id;
		struct {
			uint8_t sessionid[RPCRDMA_NFS4_SESSIONID_SIZE];
			uint32_t seqid, flags;
			struct rpcrdma_nfs41_chan_attrs fore, back;
		} create_session;
		struct {
			uint8_t sessionid[RPCRDMA_NFS4_SESSIONID_SIZE];
			uint32_t dir; /* RPCRDMA_CDFS4_* */
			bool rdma_mode;
		} bind_conn;
		struct {
			struct rpcrdma_nfs4_stateid stateid;
			bool cinfo_atomic;
			uint64_t cinfo_before, cinfo_after;
			uint32_t rflags;
			struct rpcrdma_nfs4_bitmap attrset;
			uint32_t deleg_type; /* RPCRDMA_OPEN_DELEGATE_* */
			struct rpcrdma_nfs4_stateid deleg_stateid; /* READ or WRITE */
			bool deleg_recall;
			uint32_t ace_type, ace_flag, ace_mask; /* the permissions' ACE (who not kept) */
			uint32_t limitby, limit_a, limit_b;    /* WRITE's space limit */
			uint64_t limit_size;
			uint32_t why_none; /* NONE_EXT: WND4_* */
			bool why_flag;     /* NONE_EXT, CONTENTION or RESOURCE: will push/signal */
		} open;
		struct rpcrdma_nfs4_stateid close;
	} res;
};

struct rpcrdma_nfs4_compound {
	uint32_t minorversion; /* 0, or 1 for NFSv4.1's operations */
	uint32_t tag_len;
	char tag[RPCRDMA_NFS4_TAG_MAX + 1];
	/*
	 * Write chunks to offer over RDMA at most, one per READ or READLINK
	 * in order (each op's ddp decides where the list ends); -1
	 * (rpcrdma_nfs4_compound_init's default): no limit of its own.  The
	 * operations past the end of the list get their results inline (or
	 * in the Reply chunk).
	 */
	int write_chunks;
	uint32_t nops;
	struct rpcrdma_nfs4_op ops[RPCRDMA_NFS4_MAX_OPS];

	/* Results. */
	uint32_t status; /* the COMPOUND's nfsstat4: that of the last op evaluated */
	uint32_t nres;   /* operations the server evaluated (results decoded);
			    nops whenever status is NFS4_OK */
};

/** Empty @c with write_chunks = -1. */
RPCRDMA_EXTERN void rpcrdma_nfs4_compound_init(struct rpcrdma_nfs4_compound *c);

/*
 * Appending operations.  Each returns a pointer to the new operation, or
 * NULL when the COMPOUND is full or an argument is out of range (a name
 * longer than RPCRDMA_NFS4_NAME_MAX, a handle longer than
 * RPCRDMA_NFS4_FHSIZE, a READ count over RPCRDMA_NFS4_MAXREAD or over room).
 */
RPCRDMA_EXTERN struct rpcrdma_nfs4_op *rpcrdma_nfs4_putrootfh(struct rpcrdma_nfs4_compound *c);
RPCRDMA_EXTERN struct rpcrdma_nfs4_op *rpcrdma_nfs4_putfh(struct rpcrdma_nfs4_compound *c,
							  const struct rpcrdma_nfs4_fh *fh);
RPCRDMA_EXTERN struct rpcrdma_nfs4_op *rpcrdma_nfs4_lookup(struct rpcrdma_nfs4_compound *c,
							   const char *name);
RPCRDMA_EXTERN struct rpcrdma_nfs4_op *rpcrdma_nfs4_getfh(struct rpcrdma_nfs4_compound *c);
/* @attrs: attribute numbers, @n of them (each below 32 * RPCRDMA_NFS4_BITMAP_WORDS). */
RPCRDMA_EXTERN struct rpcrdma_nfs4_op *rpcrdma_nfs4_getattr(struct rpcrdma_nfs4_compound *c,
							    const uint32_t *attrs, unsigned int n);
/* @stateid NULL: the anonymous stateid. */
RPCRDMA_EXTERN struct rpcrdma_nfs4_op *
rpcrdma_nfs4_read(struct rpcrdma_nfs4_compound *c, const struct rpcrdma_nfs4_stateid *stateid,
		  uint64_t offset, uint32_t count, void *buf, uint32_t room);
RPCRDMA_EXTERN struct rpcrdma_nfs4_op *rpcrdma_nfs4_readlink(struct rpcrdma_nfs4_compound *c,
							     void *buf, uint32_t room);

/**
 * rpcrdma_nfs4_compound_call - send @c as COMPOUND on @clnt (a client of
 * RPCRDMA_NFS_PROGRAM version 4) and wait for it
 *
 * Over RDMA it offers a Write list of one chunk per READ and READLINK (as
 * @c->write_chunks and each op's ddp say) and a Reply chunk when the reply
 * may exceed the inline size.  Returns rpcrdma_client_call()'s value;
 * -EINVAL for an empty or malformed @c (nothing sent), which includes an
 * operation the builders above would have refused: a READ whose count is
 * above its room or RPCRDMA_NFS4_MAXREAD, or a READ or READLINK with room
 * and no buf.  The NFS status is in @c->status
 * and each evaluated operation's in its status.
 */
RPCRDMA_EXTERN int rpcrdma_nfs4_compound_call(struct rpcrdma_client *clnt,
					      struct rpcrdma_nfs4_compound *c);

/**
 * The largest RPC reply @c can produce (struct rpcrdma_call.max_reply),
 * DDP-eligible results included, with a verifier of up to 400 bytes.
 */
RPCRDMA_EXTERN size_t rpcrdma_nfs4_compound_max_reply(const struct rpcrdma_nfs4_compound *c);

/*
 * XDR for struct rpcrdma_nfs4_compound, as rpcrdma_xdr_fn: COMPOUND4args
 * and COMPOUND4res.  The result decoder checks each result's operation
 * against the request's and decodes READ data and READLINK text into the
 * op's buf through rpcrdma_xdr_decode_ddp(); the result encoder (for
 * servers and tests) sends them through rpcrdma_xdr_encode_ddp().  A reply
 * whose status is NFS4_OK with fewer results than operations is
 * RPCRDMA_ERR_BAD_VALUE (RFC 8881 16.2.3): after a successful decode, each
 * of the nres first operations has its result, and nres is nops when the
 * status is NFS4_OK.  The encoder sends what it is given, so that tests
 * can play a server that breaks the rule.  A @c whose nops is above
 * RPCRDMA_NFS4_MAX_OPS is RPCRDMA_ERR_TOO_LONG to all four.
 */
RPCRDMA_EXTERN int rpcrdma_nfs4_compound_args_enc(struct rpcrdma_xdr_stream *x, void *c);
RPCRDMA_EXTERN int rpcrdma_nfs4_compound_args_dec(struct rpcrdma_xdr_stream *x, void *c);
RPCRDMA_EXTERN int rpcrdma_nfs4_compound_res_enc(struct rpcrdma_xdr_stream *x, void *c);
RPCRDMA_EXTERN int rpcrdma_nfs4_compound_res_dec(struct rpcrdma_xdr_stream *x, void *c);

/*
 * NFSv4.1 operations (RFC 8881), appended as the minor version 0 ones are;
 * set @c->minorversion to 1 (rpcrdma_nfs41_compound_init() does, and puts
 * SEQUENCE first).  Each returns the new operation or NULL (COMPOUND full,
 * an argument out of range).
 */
/* SEQUENCE with its fields to fill (the session does, at call time). */
RPCRDMA_EXTERN struct rpcrdma_nfs4_op *rpcrdma_nfs4_sequence(struct rpcrdma_nfs4_compound *c);
/* SP4_NONE, no implementation id; @owner_len at most RPCRDMA_NFS41_OWNER_MAX. */
RPCRDMA_EXTERN struct rpcrdma_nfs4_op *
rpcrdma_nfs4_exchange_id(struct rpcrdma_nfs4_compound *c, const uint8_t verifier[8],
			 const void *owner, uint32_t owner_len, uint32_t flags);
/* One callback security flavor, AUTH_NONE. */
RPCRDMA_EXTERN struct rpcrdma_nfs4_op *
rpcrdma_nfs4_create_session(struct rpcrdma_nfs4_compound *c, uint64_t clientid, uint32_t seqid,
			    uint32_t flags, const struct rpcrdma_nfs41_chan_attrs *fore,
			    const struct rpcrdma_nfs41_chan_attrs *back, uint32_t cb_program);
RPCRDMA_EXTERN struct rpcrdma_nfs4_op *
rpcrdma_nfs4_bind_conn_to_session(struct rpcrdma_nfs4_compound *c,
				  const uint8_t sessionid[RPCRDMA_NFS4_SESSIONID_SIZE],
				  uint32_t dir, bool rdma_mode);
RPCRDMA_EXTERN struct rpcrdma_nfs4_op *
rpcrdma_nfs4_destroy_session(struct rpcrdma_nfs4_compound *c,
			     const uint8_t sessionid[RPCRDMA_NFS4_SESSIONID_SIZE]);
RPCRDMA_EXTERN struct rpcrdma_nfs4_op *rpcrdma_nfs4_destroy_clientid(struct rpcrdma_nfs4_compound *c,
								     uint64_t clientid);
RPCRDMA_EXTERN struct rpcrdma_nfs4_op *rpcrdma_nfs4_reclaim_complete(struct rpcrdma_nfs4_compound *c,
								     bool one_fs);
/*
 * OPEN4_NOCREATE of @name in the current directory (CLAIM_NULL), or of the
 * current file when @name is NULL (CLAIM_FH).  @share_access: READ, WRITE
 * or BOTH, with at most one WANT_* wish.
 */
RPCRDMA_EXTERN struct rpcrdma_nfs4_op *
rpcrdma_nfs4_open(struct rpcrdma_nfs4_compound *c, uint32_t share_access, uint64_t clientid,
		  const void *owner, uint32_t owner_len, const char *name);
RPCRDMA_EXTERN struct rpcrdma_nfs4_op *rpcrdma_nfs4_close(struct rpcrdma_nfs4_compound *c,
							  const struct rpcrdma_nfs4_stateid *stateid);
RPCRDMA_EXTERN struct rpcrdma_nfs4_op *
rpcrdma_nfs4_delegreturn(struct rpcrdma_nfs4_compound *c, const struct rpcrdma_nfs4_stateid *stateid);

/*
 * The NFSv4.1 callback program (RFC 8881 section 20): CB_COMPOUND, which
 * the server sends on the client's own connection (RFC 8167 over RDMA).
 * The codec decodes CB_SEQUENCE and CB_RECALL; decoding stops at the
 * first operation it cannot frame, which is kept (op, with stopped set)
 * so that the answer can say NFS4ERR_NOTSUPP, or OP_CB_ILLEGAL for a
 * number outside the protocol (RFC 8881 20.1 and 16.2.3).
 */
#define RPCRDMA_NFS4_CALLBACK_PROGRAM 0x40000000u /* the usual first cb_program */
#define RPCRDMA_NFS4_CB_VERS 1u
#define RPCRDMA_NFS4_CB_PROC_NULL 0u
#define RPCRDMA_NFS4_CB_PROC_COMPOUND 1u
#define RPCRDMA_NFS41_CB_MAX_OPS 8u /* operations of one CB_COMPOUND we evaluate */
/* The back channel's ca_maxrequestsize, ca_maxresponsesize and
 * ca_maxresponsesize_cached a session offers (every answer is cached). */
#define RPCRDMA_NFS41_CB_MAX_MSG 4096u
/* CB_COMPOUND tags kept and echoed: any a call within those sizes can
 * carry (a longer one decodes as empty, and its call is too big). */
#define RPCRDMA_NFS41_CB_TAG_MAX RPCRDMA_NFS41_CB_MAX_MSG

enum rpcrdma_nfs4_cb_opnum {
	RPCRDMA_NFS4_OP_CB_GETATTR = 3,
	RPCRDMA_NFS4_OP_CB_RECALL = 4,
	RPCRDMA_NFS4_OP_CB_SEQUENCE = 11,
	RPCRDMA_NFS4_OP_CB_OFFLOAD = 15, /* the highest in RFC 7862 */
	RPCRDMA_NFS4_OP_CB_ILLEGAL = 10044,
};

struct rpcrdma_nfs41_cb_op {
	uint32_t op;
	union {
		struct {
			uint8_t sessionid[RPCRDMA_NFS4_SESSIONID_SIZE];
			uint32_t seqid, slotid, highest_slotid;
			bool cachethis;
			uint32_t nreferring; /* referring-call lists (walked, not kept) */
		} sequence;
		struct {
			struct rpcrdma_nfs4_stateid stateid;
			bool truncate;
			struct rpcrdma_nfs4_fh fh;
		} recall;
	} arg;
	uint32_t status;
	struct {
		uint8_t sessionid[RPCRDMA_NFS4_SESSIONID_SIZE];
		uint32_t seqid, slotid, highest_slotid, target_highest_slotid;
	} res; /* CB_SEQUENCE's */
};

struct rpcrdma_nfs41_cb_compound {
	uint32_t tag_len;
	char tag[RPCRDMA_NFS41_CB_TAG_MAX + 1];
	uint32_t minorversion;
	uint32_t callback_ident;
	uint32_t nops;         /* decoded operations, the one it stopped at included */
	uint32_t count;        /* the operations the call said it had */
	bool stopped;          /* ops[nops - 1] is one the codec cannot frame */
	/* Decoded: the bytes of the stream it was decoded from (the service's
	 * holds the RPC message, its header included, as ca_maxrequestsize
	 * counts them), UINT32_MAX at most.  Not encoded. */
	uint32_t call_len;
	struct rpcrdma_nfs41_cb_op ops[RPCRDMA_NFS41_CB_MAX_OPS];
	/* Results: status (that of the last result), and nres results (nops
	 * of them when status is NFS4_OK: the decoder refuses fewer). */
	uint32_t status;
	uint32_t nres;
};

/* XDR for CB_COMPOUND4args and CB_COMPOUND4res, as rpcrdma_xdr_fn. */
RPCRDMA_EXTERN int rpcrdma_nfs41_cb_args_enc(struct rpcrdma_xdr_stream *x, void *c);
RPCRDMA_EXTERN int rpcrdma_nfs41_cb_args_dec(struct rpcrdma_xdr_stream *x, void *c);
RPCRDMA_EXTERN int rpcrdma_nfs41_cb_res_enc(struct rpcrdma_xdr_stream *x, void *c);
RPCRDMA_EXTERN int rpcrdma_nfs41_cb_res_dec(struct rpcrdma_xdr_stream *x, void *c);

/*
 * The NFSv4.1 session (nfs41_session.c, nfs41_cb.c).
 *
 * A session belongs to one RDMA client of RPCRDMA_NFS_PROGRAM version 4,
 * created before the client first connects (the callback service must be
 * registered first: its receives are posted with the connection), and to
 * its loop.  It runs EXCHANGE_ID, CREATE_SESSION (asking for the
 * connection's backchannel, CREATE_SESSION4_FLAG_CONN_BACK_CHAN) and
 * RECLAIM_COMPLETE, then puts SEQUENCE first in every COMPOUND, over a
 * slot table (sequence ids, NFS4ERR_DELAY and NFS4ERR_GRACE retried).
 *
 * Callbacks: the client's callback program answers CB_NULL and CB_COMPOUND
 * with CB_SEQUENCE and CB_RECALL (one back-channel slot table, replays
 * answered from its cache; calls beyond the back channel's sizes, offered
 * as RPCRDMA_NFS41_CB_MAX_MSG, or the server's smaller grant, answered
 * NFS4ERR_REQ_TOO_BIG, NFS4ERR_REP_TOO_BIG or NFS4ERR_REP_TOO_BIG_TO_CACHE
 * on CB_SEQUENCE); any other operation gets NFS4ERR_NOTSUPP, and
 * numbers outside the protocol OP_CB_ILLEGAL.  A CB_RECALL of a delegation
 * this session holds is answered NFS4_OK, and the delegation then returned
 * (DELEGRETURN) on the fore channel; after the server reported a
 * backchannel fault, when no return can be sent any more, it is answered
 * NFS4ERR_SERVERFAULT, which ends the recall on the server (RFC 8881
 * 20.2.4), and the delegation is left RECALLED.
 *
 * Background work (returning recalled delegations, binding a new
 * connection with BIND_CONN_TO_SESSION when the client reconnected or the
 * server reports the callback path down, retries after NFS4ERR_DELAY) is
 * started on the loop, and advances while the loop runs: inside the
 * session's calls, or rpcrdma_nfs41_session_run().
 *
 * Return values of the functions below: 0; a negative library error
 * (rpcrdma_nfs41_strerror()); or, positive, the nfsstat4 the server
 * answered.
 */
enum {
	/** The server did not bind the connection as a backchannel (no
	 *  CREATE_SESSION4_FLAG_CONN_BACK_CHAN in its answer): no callback,
	 *  so no delegation could ever be recalled.  Run without delegations
	 *  (opts.no_backchannel), or check the server's RDMA backchannel
	 *  support. */
	RPCRDMA_ERR_NFS41_NO_BACKCHANNEL = -5300,
	/** The server gave no delegation: see the file's why_none. */
	RPCRDMA_ERR_NFS41_NO_DELEGATION = -5301,
	/** Every slot the server takes is out of use (a call on it failed
	 *  without an answer, so its sequence is unknown) and no call is out
	 *  that could change that: destroy the session and create another. */
	RPCRDMA_ERR_NFS41_NO_SLOT = -5302,
	/** The session's state does not allow the call (being destroyed, its
	 *  creation failed, or the server reported a backchannel fault,
	 *  SEQ4_STATUS_BACKCHANNEL_FAULT, after which RFC 8881 has the client
	 *  destroy the session and create another). */
	RPCRDMA_ERR_NFS41_SESSION = -5303,
};

#define RPCRDMA_NFS41_MAX_SLOTS 64u   /* fore-channel slots we use at most */
#define RPCRDMA_NFS41_MAX_CB_SLOTS 16u
#define RPCRDMA_NFS41_MAX_DELEGS 1024u /* delegations a session tracks */

struct rpcrdma_nfs41_session_opts {
	const char *owner;    /* client owner id; NULL: "librpcrdma/<host>/<pid>/<n>" */
	uint32_t fore_slots;  /* asked for; 0: 16, at most RPCRDMA_NFS41_MAX_SLOTS */
	uint32_t back_slots;  /* offered; 0: 1 (Linux uses one), at most 16 */
	uint32_t max_request, max_response; /* fore channel; 0: 1 MiB + 8 KiB */
	uint32_t cb_program;  /* 0: a free one from RPCRDMA_NFS4_CALLBACK_PROGRAM */
	bool no_backchannel;  /* do not ask for one (no delegations then) */
	int grace_wait_ms;    /* how long NFS4ERR_GRACE/DELAY are retried; 0: 90000 */
	struct rpcrdma_callback_opts *cb; /* reverse credits; NULL: defaults */
};

RPCRDMA_EXTERN void rpcrdma_nfs41_session_opts_default(struct rpcrdma_nfs41_session_opts *opts);

struct rpcrdma_nfs41_session;

/**
 * rpcrdma_nfs41_session_create - register the callback service on @clnt,
 * then EXCHANGE_ID, CREATE_SESSION and RECLAIM_COMPLETE (runs @loop)
 *
 * @clnt must not have connected yet and must be an RDMA client of
 * RPCRDMA_NFS_PROGRAM version 4 on @loop.  Returns 0 and *@out; -EINVAL;
 * -EISCONN (the client has connected: create the session first);
 * RPCRDMA_ERR_NFS41_NO_BACKCHANNEL (see above; nothing is left behind: the
 * session was destroyed); a call's error; or the nfsstat4 of the operation
 * that failed.
 */
RPCRDMA_EXTERN int rpcrdma_nfs41_session_create(struct rpcrdma_client *clnt,
						struct rpcrdma_loop *loop,
						const struct rpcrdma_nfs41_session_opts *opts,
						struct rpcrdma_nfs41_session **out);

/**
 * rpcrdma_nfs41_session_destroy - DESTROY_SESSION and DESTROY_CLIENTID,
 * then free (the client stays; its callback program answers
 * NFS4ERR_BADSESSION from then on).  Returns 0, or the first error of the
 * two operations (the session is freed anyway); -EPERM, doing nothing, in
 * a process forked after its loop was made (rpcrdma_loop_destroy()).
 */
RPCRDMA_EXTERN int rpcrdma_nfs41_session_destroy(struct rpcrdma_nfs41_session *s);

/** Empty @c for @s: minor version 1, SEQUENCE first. */
RPCRDMA_EXTERN void rpcrdma_nfs41_compound_init(struct rpcrdma_nfs41_session *s,
						struct rpcrdma_nfs4_compound *c);

/**
 * rpcrdma_nfs41_compound_call - @c (made by rpcrdma_nfs41_compound_init())
 * on a free slot, waiting for it (runs the loop)
 *
 * SEQUENCE's fields are filled here.  NFS4ERR_DELAY (any operation) and
 * NFS4ERR_GRACE are retried with a new sequence id for up to
 * opts.grace_wait_ms.  Returns rpcrdma_client_call()'s value, or
 * RPCRDMA_ERR_BAD_VALUE when SEQUENCE succeeded but its result names
 * another session, slot or sequence id than were sent (RFC 8881 18.46.3;
 * counted in seq_errors, the slot not moved on); the NFS status is
 * @c->status.  Not from inside a callback.
 */
RPCRDMA_EXTERN int rpcrdma_nfs41_compound_call(struct rpcrdma_nfs41_session *s,
					       struct rpcrdma_nfs4_compound *c);

/* An open file, and the delegation the OPEN gave. */
struct rpcrdma_nfs41_file {
	struct rpcrdma_nfs4_fh fh;
	struct rpcrdma_nfs4_stateid open_stateid;
	uint32_t deleg_type; /* RPCRDMA_OPEN_DELEGATE_NONE, _READ or _WRITE */
	struct rpcrdma_nfs4_stateid deleg_stateid;
	uint32_t why_none;   /* no delegation and one was wished: WND4_* */
};

/**
 * rpcrdma_nfs41_open - PUTFH @dir, OPEN @name (OPEN4_NOCREATE), GETFH
 *
 * @share_access as rpcrdma_nfs4_open(), e.g. READ | WANT_READ_DELEG.  A
 * delegation granted is tracked by the session (recalls return it).
 * Returns 0 with @f filled; the nfsstat4; a call's error.  When a
 * delegation was wished and none came, the file is open all the same and
 * the return is RPCRDMA_ERR_NFS41_NO_DELEGATION (@f->why_none says why,
 * rpcrdma_nfs41_why_str()): close it as any other.
 */
RPCRDMA_EXTERN int rpcrdma_nfs41_open(struct rpcrdma_nfs41_session *s,
				      const struct rpcrdma_nfs4_fh *dir, const char *name,
				      uint32_t share_access, struct rpcrdma_nfs41_file *f);

/**
 * rpcrdma_nfs41_read - PUTFH, READ of @count bytes at @off into @buf (a
 * Write chunk over RDMA), under the delegation's stateid while it is held,
 * the open's otherwise.  *@len: bytes read; *@eof may be NULL.
 */
RPCRDMA_EXTERN int rpcrdma_nfs41_read(struct rpcrdma_nfs41_session *s,
				      const struct rpcrdma_nfs41_file *f, uint64_t off,
				      uint32_t count, void *buf, uint32_t *len, bool *eof);

/**
 * DELEGRETURN of @f's delegation, unless a recall returned it already.
 * RPCRDMA_ERR_NFS41_SESSION when the session can send no more (a
 * backchannel fault), a recalled delegation included.
 */
RPCRDMA_EXTERN int rpcrdma_nfs41_delegreturn(struct rpcrdma_nfs41_session *s,
					     struct rpcrdma_nfs41_file *f);

/** CLOSE of @f (its delegation, if still held, stays until returned). */
RPCRDMA_EXTERN int rpcrdma_nfs41_close(struct rpcrdma_nfs41_session *s,
				       struct rpcrdma_nfs41_file *f);

enum rpcrdma_nfs41_deleg_state {
	RPCRDMA_NFS41_DELEG_NONE = 0,  /* none held (never, or forgotten) */
	RPCRDMA_NFS41_DELEG_HELD,
	/* CB_RECALL answered, DELEGRETURN on its way; after a backchannel
	 * fault none is (the recall answered NFS4ERR_SERVERFAULT) */
	RPCRDMA_NFS41_DELEG_RECALLED,
	RPCRDMA_NFS41_DELEG_RETURNED,
};

/** Where @f's delegation stands. */
RPCRDMA_EXTERN enum rpcrdma_nfs41_deleg_state
rpcrdma_nfs41_deleg_state(struct rpcrdma_nfs41_session *s, const struct rpcrdma_nfs41_file *f);

/**
 * rpcrdma_nfs41_session_run - run the loop once (at most @timeout_ms) and
 * the session's background work.  Returns rpcrdma_loop_run_once()'s value.
 */
RPCRDMA_EXTERN int rpcrdma_nfs41_session_run(struct rpcrdma_nfs41_session *s, int timeout_ms);

/**
 * rpcrdma_nfs41_session_bind - BIND_CONN_TO_SESSION of the client's
 * current connection, CDFC4_FORE_OR_BOTH (or FORE without a backchannel),
 * now.  The session does this by itself after a reconnection; this is
 * for programs that know better.  Returns 0, the nfsstat4, a call's error,
 * or RPCRDMA_ERR_NFS41_NO_BACKCHANNEL when the server bound the fore
 * channel only.
 */
RPCRDMA_EXTERN int rpcrdma_nfs41_session_bind(struct rpcrdma_nfs41_session *s);

/* The session's counters; a test checks the X-macro covers the struct. */
#define RPCRDMA_NFS41_STATS(X)                                                                 \
	X(compounds)          /* fore COMPOUNDs answered */                                   \
	X(retries)            /* sent again after NFS4ERR_DELAY or NFS4ERR_GRACE */            \
	X(seq_errors)         /* SEQUENCE refused (bad session, slot, misordered) */          \
	X(slots_lost)         /* slots retired: a call on them failed unanswered */           \
	X(slot_waits)         /* calls that waited for a free slot */                         \
	X(cb_path_down)       /* SEQUENCE replies reporting the callback path down */         \
	X(binds)              /* BIND_CONN_TO_SESSION answered NFS4_OK */                     \
	X(cb_null)            /* CB_NULL served */                                            \
	X(cb_compounds)       /* CB_COMPOUND served */                                        \
	X(cb_recalls)         /* CB_RECALL answered NFS4_OK */                                \
	X(cb_recall_unknown)  /* CB_RECALL of a stateid we do not hold */                     \
	X(cb_recalls_faulted) /* CB_RECALL after a backchannel fault: NFS4ERR_SERVERFAULT */  \
	X(cb_replays)         /* CB_COMPOUND answered from a back-channel slot's cache */     \
	X(cb_seq_errors)      /* CB_SEQUENCE refused */                                       \
	X(cb_notsupp)         /* operations answered NFS4ERR_NOTSUPP */                       \
	X(cb_illegal)         /* operations answered OP_CB_ILLEGAL */                         \
	X(cb_bad)             /* CB_COMPOUND refused whole (minor version, no session) */     \
	X(delegs_granted)                                                                      \
	X(delegs_returned)    /* DELEGRETURN answered NFS4_OK */                              \
	X(deleg_return_errors)                                                                 \
	X(deleg_table_full)   /* delegations we could not track (returned at once) */         \
	X(backchannel_faults) /* SEQ4_STATUS_BACKCHANNEL_FAULT seen: session unusable */

struct rpcrdma_nfs41_stats {
#define RPCRDMA_NFS41_STATS_FIELD(name) uint64_t name;
	RPCRDMA_NFS41_STATS(RPCRDMA_NFS41_STATS_FIELD)
#undef RPCRDMA_NFS41_STATS_FIELD
};

/* What the session is, as the server granted it. */
struct rpcrdma_nfs41_session_info {
	uint64_t clientid;
	uint8_t sessionid[RPCRDMA_NFS4_SESSIONID_SIZE];
	uint32_t exchange_flags;  /* EXCHANGE_ID's answer */
	uint32_t session_flags;   /* CREATE_SESSION's answer */
	struct rpcrdma_nfs41_chan_attrs fore, back; /* as granted */
	uint32_t cb_program;
	uint32_t slots;           /* fore slots in use */
	bool backchannel;         /* the server bound our connection for callbacks */
	uint32_t last_bind_dir;   /* BIND_CONN_TO_SESSION's last answer (CDFS4_*), 0: none */
	struct rpcrdma_nfs41_stats stats;
};

/** Fill @out.  Returns 0 or -EINVAL. */
RPCRDMA_EXTERN int rpcrdma_nfs41_session_info(struct rpcrdma_nfs41_session *s,
					      struct rpcrdma_nfs41_session_info *out);

/** Describe @err: this header's codes, then rpcrdma_strerror()'s (which
 * gives the same texts for this header's codes). */
RPCRDMA_EXTERN const char *rpcrdma_nfs41_strerror(int err);
/** Describe a why_no_delegation4 value ("contention", ...). */
RPCRDMA_EXTERN const char *rpcrdma_nfs41_why_str(uint32_t why);

/* Attribute values of a GETATTR result, those this decoder knows. */
struct rpcrdma_nfs4_fattr {
	struct rpcrdma_nfs4_bitmap present; /* which of the fields below were sent */
	uint32_t type;                      /* nfs_ftype4: 1 regular, 2 directory, 5 link */
	uint64_t change;
	uint64_t size;
	uint64_t fsid_major, fsid_minor;
	uint64_t fileid;
	uint32_t mode;
	uint32_t numlinks;
	uint64_t space_used;
	int64_t mtime_sec;
	uint32_t mtime_nsec;
};

/**
 * rpcrdma_nfs4_fattr_decode - the values of a GETATTR result @op
 *
 * Attributes are decoded in bitmap order while their encoding is known
 * (every fixed-size attribute of RFC 7530 section 5); an attribute of
 * variable or unknown size ends the walk.  Returns 0 when every attribute
 * in the mask was decoded, -ENOTSUP when the walk ended early (the fields
 * decoded before it are set), or an XDR error for values that do not
 * parse: RPCRDMA_ERR_BAD_VALUE among others when the values are longer
 * than the mask describes (bytes left after the last attribute).
 */
RPCRDMA_EXTERN int rpcrdma_nfs4_fattr_decode(const struct rpcrdma_nfs4_op *op,
					     struct rpcrdma_nfs4_fattr *out);

/** Whether attribute @attr is set in @b. */
RPCRDMA_EXTERN bool rpcrdma_nfs4_bitmap_isset(const struct rpcrdma_nfs4_bitmap *b, uint32_t attr);

/** The name of operation @op ("READ"), or "?" */
RPCRDMA_EXTERN const char *rpcrdma_nfs4_op_name(uint32_t op);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_NFS4_H */
