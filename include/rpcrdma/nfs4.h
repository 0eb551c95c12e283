/*
 * librpcrdma: a small NFS version 4 COMPOUND client (RFC 7530 for
 * NFSv4.0), enough to read files and symbolic links by path, with the
 * NFSv4 upper-layer binding for RPC-over-RDMA (draft-callaghan-nfsdirect-00
 * section 4, RFC 8267 section 4.2): READ data and READLINK link text are
 * DDP-eligible results, and a COMPOUND offers one Write chunk per such
 * operation, in the order the operations appear.
 *
 * Operations: PUTROOTFH, PUTFH, LOOKUP, GETFH, GETATTR, READ, READLINK.
 * Minor version 0 only (no SEQUENCE, so no session is needed); READ uses a
 * stateid the caller gives, the anonymous one (all zeros) for reading
 * without OPEN.
 */
#ifndef RPCRDMA_NFS4_H
#define RPCRDMA_NFS4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/common.h"
#include "rpcrdma/rpc.h"
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
	} res;
};

struct rpcrdma_nfs4_compound {
	uint32_t minorversion; /* 0 */
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
	uint32_t nres;   /* operations the server evaluated (results decoded) */
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
 * -EINVAL for an empty or malformed @c.  The NFS status is in @c->status
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
 * servers and tests) sends them through rpcrdma_xdr_encode_ddp().
 */
RPCRDMA_EXTERN int rpcrdma_nfs4_compound_args_enc(struct rpcrdma_xdr_stream *x, void *c);
RPCRDMA_EXTERN int rpcrdma_nfs4_compound_args_dec(struct rpcrdma_xdr_stream *x, void *c);
RPCRDMA_EXTERN int rpcrdma_nfs4_compound_res_enc(struct rpcrdma_xdr_stream *x, void *c);
RPCRDMA_EXTERN int rpcrdma_nfs4_compound_res_dec(struct rpcrdma_xdr_stream *x, void *c);

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
 * parse.
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
