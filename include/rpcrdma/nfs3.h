/*
 * librpcrdma: NFS version 3 (RFC 1813) and MOUNT version 3 in XDR, with the
 * NFS upper-layer binding for RPC-over-RDMA (RFC 8267, which refines
 * draft-callaghan-nfsdirect-00).
 *
 * Each procedure has an arguments and a results structure and one XDR
 * function per direction for each, of type rpcrdma_xdr_fn, ready for
 * struct rpcrdma_svc_proc and struct rpcrdma_call.  Decoders check every
 * length against the RFC's limits and the room the structure has, and copy
 * what they keep, except the bulk data of READ and WRITE: it is
 * DDP-eligible (RFC 8267 section 4.1) and goes through
 * rpcrdma_xdr_encode_ddp()/decode_ddp(), so over RDMA it is placed by the
 * hardware.  READLINK's path and SYMLINK's target are DDP-eligible too, as
 * RFC 8267 allows; this library encodes them inline (a path is at most
 * 1024 bytes) and accepts them either way.
 */
#ifndef RPCRDMA_NFS3_H
#define RPCRDMA_NFS3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/common.h"
#include "rpcrdma/rpc.h"
#include "rpcrdma/rpcbind.h"
#include "rpcrdma/xdr.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RPCRDMA_NFS_PROGRAM 100003u
#define RPCRDMA_NFS_V3 3u
#define RPCRDMA_MOUNT_PROGRAM 100005u
#define RPCRDMA_MOUNT_V3 3u
/* RPCRDMA_NFS_RDMA_PORT (20049, RFC 8267 section 8) is in rpcbind.h. */

#define RPCRDMA_NFS3_FHSIZE 64u
#define RPCRDMA_NFS3_NAME_MAX 255u      /* our limit on filename3 */
#define RPCRDMA_NFS3_PATH_MAX 1024u     /* nfspath3 and dirpath (MNTPATHLEN) */
#define RPCRDMA_NFS3_VERF_SIZE 8u       /* cookieverf3, createverf3, writeverf3 */
#define RPCRDMA_NFS3_MAXDATA (1u << 20) /* largest READ or WRITE we encode or accept */
#define RPCRDMA_NFS3_DIR_MAX 4096u      /* directory entries in one reply */

enum rpcrdma_nfs3_proc {
	RPCRDMA_NFS3_NULL,
	RPCRDMA_NFS3_GETATTR,
	RPCRDMA_NFS3_SETATTR,
	RPCRDMA_NFS3_LOOKUP,
	RPCRDMA_NFS3_ACCESS,
	RPCRDMA_NFS3_READLINK,
	RPCRDMA_NFS3_READ,
	RPCRDMA_NFS3_WRITE,
	RPCRDMA_NFS3_CREATE,
	RPCRDMA_NFS3_MKDIR,
	RPCRDMA_NFS3_SYMLINK,
	RPCRDMA_NFS3_MKNOD,
	RPCRDMA_NFS3_REMOVE,
	RPCRDMA_NFS3_RMDIR,
	RPCRDMA_NFS3_RENAME,
	RPCRDMA_NFS3_LINK,
	RPCRDMA_NFS3_READDIR,
	RPCRDMA_NFS3_READDIRPLUS,
	RPCRDMA_NFS3_FSSTAT,
	RPCRDMA_NFS3_FSINFO,
	RPCRDMA_NFS3_PATHCONF,
	RPCRDMA_NFS3_COMMIT,
	RPCRDMA_NFS3_NPROCS,
};

enum rpcrdma_mount3_proc {
	RPCRDMA_MOUNT3_NULL,
	RPCRDMA_MOUNT3_MNT,
	RPCRDMA_MOUNT3_DUMP,
	RPCRDMA_MOUNT3_UMNT,
	RPCRDMA_MOUNT3_UMNTALL,
	RPCRDMA_MOUNT3_EXPORT,
	RPCRDMA_MOUNT3_NPROCS,
};

enum rpcrdma_nfs3_stat {
	RPCRDMA_NFS3_OK = 0,
	RPCRDMA_NFS3ERR_PERM = 1,
	RPCRDMA_NFS3ERR_NOENT = 2,
	RPCRDMA_NFS3ERR_IO = 5,
	RPCRDMA_NFS3ERR_NXIO = 6,
	RPCRDMA_NFS3ERR_ACCES = 13,
	RPCRDMA_NFS3ERR_EXIST = 17,
	RPCRDMA_NFS3ERR_XDEV = 18,
	RPCRDMA_NFS3ERR_NODEV = 19,
	RPCRDMA_NFS3ERR_NOTDIR = 20,
	RPCRDMA_NFS3ERR_ISDIR = 21,
	RPCRDMA_NFS3ERR_INVAL = 22,
	RPCRDMA_NFS3ERR_FBIG = 27,
	RPCRDMA_NFS3ERR_NOSPC = 28,
	RPCRDMA_NFS3ERR_ROFS = 30,
	RPCRDMA_NFS3ERR_MLINK = 31,
	RPCRDMA_NFS3ERR_NAMETOOLONG = 63,
	RPCRDMA_NFS3ERR_NOTEMPTY = 66,
	RPCRDMA_NFS3ERR_DQUOT = 69,
	RPCRDMA_NFS3ERR_STALE = 70,
	RPCRDMA_NFS3ERR_REMOTE = 71,
	RPCRDMA_NFS3ERR_BADHANDLE = 10001,
	RPCRDMA_NFS3ERR_NOT_SYNC = 10002,
	RPCRDMA_NFS3ERR_BAD_COOKIE = 10003,
	RPCRDMA_NFS3ERR_NOTSUPP = 10004,
	RPCRDMA_NFS3ERR_TOOSMALL = 10005,
	RPCRDMA_NFS3ERR_SERVERFAULT = 10006,
	RPCRDMA_NFS3ERR_BADTYPE = 10007,
	RPCRDMA_NFS3ERR_JUKEBOX = 10008,
};

enum rpcrdma_nfs3_ftype {
	RPCRDMA_NF3REG = 1,
	RPCRDMA_NF3DIR = 2,
	RPCRDMA_NF3BLK = 3,
	RPCRDMA_NF3CHR = 4,
	RPCRDMA_NF3LNK = 5,
	RPCRDMA_NF3SOCK = 6,
	RPCRDMA_NF3FIFO = 7,
};

/* ACCESS bits */
#define RPCRDMA_ACCESS3_READ 0x01u
#define RPCRDMA_ACCESS3_LOOKUP 0x02u
#define RPCRDMA_ACCESS3_MODIFY 0x04u
#define RPCRDMA_ACCESS3_EXTEND 0x08u
#define RPCRDMA_ACCESS3_DELETE 0x10u
#define RPCRDMA_ACCESS3_EXECUTE 0x20u

enum rpcrdma_nfs3_stable { RPCRDMA_UNSTABLE, RPCRDMA_DATA_SYNC, RPCRDMA_FILE_SYNC };
enum rpcrdma_nfs3_createmode { RPCRDMA_UNCHECKED, RPCRDMA_GUARDED, RPCRDMA_EXCLUSIVE };
enum rpcrdma_nfs3_time_how {
	RPCRDMA_DONT_CHANGE,
	RPCRDMA_SET_TO_SERVER_TIME,
	RPCRDMA_SET_TO_CLIENT_TIME,
};

/* FSINFO properties */
#define RPCRDMA_FSF3_LINK 0x01u
#define RPCRDMA_FSF3_SYMLINK 0x02u
#define RPCRDMA_FSF3_HOMOGENEOUS 0x08u
#define RPCRDMA_FSF3_CANSETTIME 0x10u

struct rpcrdma_nfs3_fh {
	uint32_t len;
	uint8_t data[RPCRDMA_NFS3_FHSIZE];
};

struct rpcrdma_nfs3_time {
	uint32_t seconds, nseconds;
};

struct rpcrdma_nfs3_fattr {
	uint32_t type, mode, nlink, uid, gid;
	uint64_t size, used;
	uint32_t rdev_major, rdev_minor;
	uint64_t fsid, fileid;
	struct rpcrdma_nfs3_time atime, mtime, ctime;
};

struct rpcrdma_nfs3_post_attr {
	bool present;
	struct rpcrdma_nfs3_fattr attr;
};

struct rpcrdma_nfs3_wcc {
	bool before_present;
	uint64_t before_size;
	struct rpcrdma_nfs3_time before_mtime, before_ctime;
	struct rpcrdma_nfs3_post_attr after;
};

struct rpcrdma_nfs3_sattr {
	bool set_mode, set_uid, set_gid, set_size;
	uint32_t mode, uid, gid;
	uint64_t size;
	uint32_t atime_how, mtime_how; /* enum rpcrdma_nfs3_time_how */
	struct rpcrdma_nfs3_time atime, mtime;
};

struct rpcrdma_nfs3_name {
	uint32_t len;
	char s[RPCRDMA_NFS3_NAME_MAX + 1]; /* NUL-terminated after decoding */
};

struct rpcrdma_nfs3_path {
	uint32_t len;
	char s[RPCRDMA_NFS3_PATH_MAX + 1];
};

struct rpcrdma_nfs3_diropargs {
	struct rpcrdma_nfs3_fh dir;
	struct rpcrdma_nfs3_name name;
};

/*
 * Arguments.  Procedures whose argument is one file handle (GETATTR,
 * READLINK, FSSTAT, FSINFO, PATHCONF) use struct rpcrdma_nfs3_fh; LOOKUP,
 * REMOVE and RMDIR use struct rpcrdma_nfs3_diropargs.
 */
struct rpcrdma_nfs3_setattr_args {
	struct rpcrdma_nfs3_fh obj;
	struct rpcrdma_nfs3_sattr attr;
	bool check;
	struct rpcrdma_nfs3_time guard_ctime;
};

struct rpcrdma_nfs3_access_args {
	struct rpcrdma_nfs3_fh obj;
	uint32_t access;
};

struct rpcrdma_nfs3_read_args {
	struct rpcrdma_nfs3_fh file;
	uint64_t offset;
	uint32_t count;
};

/*
 * WRITE: on encode @data holds @len bytes (DDP-eligible: a Read chunk over
 * RDMA).  On decode the bytes land in @data, which must have room for
 * @data_max bytes (a decoder given none fails with RPCRDMA_ERR_TOO_LONG).
 * With @data NULL and @data_max nonzero the decoder lends them instead:
 * @data points where the call holds them (rpcrdma_xdr_decode_ddp_ref, so
 * valid until the reply), or decoding fails with -ERANGE, the stream
 * partly consumed, when they cannot be lent: decode again from a copy of
 * the stream taken before, with a buffer.
 */
struct rpcrdma_nfs3_write_args {
	struct rpcrdma_nfs3_fh file;
	uint64_t offset;
	uint32_t count;
	uint32_t stable; /* enum rpcrdma_nfs3_stable */
	uint32_t len;
	uint8_t *data;
	uint32_t data_max;
};

struct rpcrdma_nfs3_create_args {
	struct rpcrdma_nfs3_diropargs where;
	uint32_t mode;                        /* enum rpcrdma_nfs3_createmode */
	struct rpcrdma_nfs3_sattr attr;       /* UNCHECKED, GUARDED */
	uint8_t verf[RPCRDMA_NFS3_VERF_SIZE]; /* EXCLUSIVE */
};

struct rpcrdma_nfs3_mkdir_args {
	struct rpcrdma_nfs3_diropargs where;
	struct rpcrdma_nfs3_sattr attr;
};

struct rpcrdma_nfs3_symlink_args {
	struct rpcrdma_nfs3_diropargs where;
	struct rpcrdma_nfs3_sattr attr;
	struct rpcrdma_nfs3_path target;
};

struct rpcrdma_nfs3_mknod_args {
	struct rpcrdma_nfs3_diropargs where;
	uint32_t type;                  /* enum rpcrdma_nfs3_ftype */
	struct rpcrdma_nfs3_sattr attr; /* CHR, BLK, SOCK, FIFO */
	uint32_t major, minor;          /* CHR, BLK */
};

struct rpcrdma_nfs3_rename_args {
	struct rpcrdma_nfs3_diropargs from, to;
};

struct rpcrdma_nfs3_link_args {
	struct rpcrdma_nfs3_fh file;
	struct rpcrdma_nfs3_diropargs link;
};

struct rpcrdma_nfs3_readdir_args {
	struct rpcrdma_nfs3_fh dir;
	uint64_t cookie;
	uint8_t verf[RPCRDMA_NFS3_VERF_SIZE];
	uint32_t dircount; /* READDIRPLUS only */
	uint32_t count;    /* READDIR: count; READDIRPLUS: maxcount */
};

struct rpcrdma_nfs3_commit_args {
	struct rpcrdma_nfs3_fh file;
	uint64_t offset;
	uint32_t count;
};

/*
 * Results.  Every one starts with @status; the members after it that the
 * RFC sends for that status are encoded, the others ignored.
 */
struct rpcrdma_nfs3_attr_res { /* GETATTR */
	uint32_t status;
	struct rpcrdma_nfs3_fattr attr;
};

struct rpcrdma_nfs3_wcc_res { /* SETATTR, REMOVE, RMDIR */
	uint32_t status;
	struct rpcrdma_nfs3_wcc wcc;
};

struct rpcrdma_nfs3_lookup_res {
	uint32_t status;
	struct rpcrdma_nfs3_fh obj;
	struct rpcrdma_nfs3_post_attr obj_attr, dir_attr;
};

struct rpcrdma_nfs3_access_res {
	uint32_t status;
	struct rpcrdma_nfs3_post_attr attr;
	uint32_t access;
};

struct rpcrdma_nfs3_readlink_res {
	uint32_t status;
	struct rpcrdma_nfs3_post_attr attr;
	struct rpcrdma_nfs3_path path;
};

/*
 * READ: on encode @data holds @len bytes (DDP-eligible: the Write chunk
 * over RDMA; over RDMA it must stay put until the reply was sent, see
 * free_res).  On decode they land in @data, room @data_max.
 */
struct rpcrdma_nfs3_read_res {
	uint32_t status;
	struct rpcrdma_nfs3_post_attr attr;
	uint32_t count;
	bool eof;
	uint32_t len;
	uint8_t *data;
	uint32_t data_max;
};

struct rpcrdma_nfs3_write_res {
	uint32_t status;
	struct rpcrdma_nfs3_wcc wcc;
	uint32_t count;
	uint32_t committed;
	uint8_t verf[RPCRDMA_NFS3_VERF_SIZE];
};

struct rpcrdma_nfs3_create_res { /* CREATE, MKDIR, SYMLINK, MKNOD */
	uint32_t status;
	bool has_obj;
	struct rpcrdma_nfs3_fh obj;
	struct rpcrdma_nfs3_post_attr obj_attr;
	struct rpcrdma_nfs3_wcc dir_wcc;
};

struct rpcrdma_nfs3_rename_res {
	uint32_t status;
	struct rpcrdma_nfs3_wcc from_wcc, to_wcc;
};

struct rpcrdma_nfs3_link_res {
	uint32_t status;
	struct rpcrdma_nfs3_post_attr file_attr;
	struct rpcrdma_nfs3_wcc dir_wcc;
};

/* One directory entry; READDIRPLUS adds attributes and a handle. */
struct rpcrdma_nfs3_entry {
	uint64_t fileid, cookie;
	struct rpcrdma_nfs3_name name;
	struct rpcrdma_nfs3_post_attr attr; /* READDIRPLUS */
	bool has_fh;                        /* READDIRPLUS */
	struct rpcrdma_nfs3_fh fh;
};

/*
 * READDIR and READDIRPLUS: @entries points at @n entries (encode), or at
 * room for @max entries (decode; more in the reply is RPCRDMA_ERR_TOO_LONG).
 * @plus selects the READDIRPLUS form of the entries.
 */
struct rpcrdma_nfs3_readdir_res {
	uint32_t status;
	bool plus;
	struct rpcrdma_nfs3_post_attr dir_attr;
	uint8_t verf[RPCRDMA_NFS3_VERF_SIZE];
	struct rpcrdma_nfs3_entry *entries;
	uint32_t n, max;
	bool eof;
};

struct rpcrdma_nfs3_fsstat_res {
	uint32_t status;
	struct rpcrdma_nfs3_post_attr attr;
	uint64_t tbytes, fbytes, abytes, tfiles, ffiles, afiles;
	uint32_t invarsec;
};

struct rpcrdma_nfs3_fsinfo_res {
	uint32_t status;
	struct rpcrdma_nfs3_post_attr attr;
	uint32_t rtmax, rtpref, rtmult, wtmax, wtpref, wtmult, dtpref;
	uint64_t maxfilesize;
	struct rpcrdma_nfs3_time time_delta;
	uint32_t properties;
};

struct rpcrdma_nfs3_pathconf_res {
	uint32_t status;
	struct rpcrdma_nfs3_post_attr attr;
	uint32_t linkmax, name_max;
	bool no_trunc, chown_restricted, case_insensitive, case_preserving;
};

struct rpcrdma_nfs3_commit_res {
	uint32_t status;
	struct rpcrdma_nfs3_wcc wcc;
	uint8_t verf[RPCRDMA_NFS3_VERF_SIZE];
};

/*
 * MOUNT v3: MNT's result (fhstatus3); EXPORT lists one directory.  The
 * server's list of flavors may be of any length: the decoder keeps its
 * first RPCRDMA_MOUNT3_MAX_FLAVORS, in the server's order, and skips the
 * rest (nflavors counts those kept, not those sent); the encoder refuses
 * more than RPCRDMA_MOUNT3_MAX_FLAVORS.
 */
#define RPCRDMA_MOUNT3_MAX_FLAVORS 4u
struct rpcrdma_mount3_mnt_res {
	uint32_t status; /* mountstat3: the NFS3 values for the errors it has */
	struct rpcrdma_nfs3_fh fh;
	uint32_t nflavors;
	uint32_t flavors[RPCRDMA_MOUNT3_MAX_FLAVORS];
};

struct rpcrdma_mount3_export_res {
	uint32_t n; /* 0 or 1 */
	struct rpcrdma_nfs3_path dir;
};

/*
 * The XDR functions.  proc is an enum rpcrdma_nfs3_proc; args and res
 * point at the structures above (the one each procedure uses).  Each
 * returns -EINVAL for a NULL stream, or a NULL object (NULL's void ones
 * take any).
 */
RPCRDMA_EXTERN rpcrdma_xdr_fn rpcrdma_nfs3_encode_args(uint32_t proc);
RPCRDMA_EXTERN rpcrdma_xdr_fn rpcrdma_nfs3_decode_args(uint32_t proc);
RPCRDMA_EXTERN rpcrdma_xdr_fn rpcrdma_nfs3_encode_res(uint32_t proc);
RPCRDMA_EXTERN rpcrdma_xdr_fn rpcrdma_nfs3_decode_res(uint32_t proc);
/** Sizes of the structures a procedure's arguments and results use. */
RPCRDMA_EXTERN size_t rpcrdma_nfs3_args_size(uint32_t proc);
RPCRDMA_EXTERN size_t rpcrdma_nfs3_res_size(uint32_t proc);

/* MOUNT v3: MNT and UMNT take a path; MNT answers a mnt_res, EXPORT an export_res.
 * Each returns -EINVAL for a NULL stream or a NULL object (the empty list
 * has none to need). */
RPCRDMA_EXTERN int rpcrdma_mount3_xdr_path_enc(struct rpcrdma_xdr_stream *x, void *path);
RPCRDMA_EXTERN int rpcrdma_mount3_xdr_path_dec(struct rpcrdma_xdr_stream *x, void *path);
RPCRDMA_EXTERN int rpcrdma_mount3_xdr_mnt_res_enc(struct rpcrdma_xdr_stream *x, void *res);
RPCRDMA_EXTERN int rpcrdma_mount3_xdr_mnt_res_dec(struct rpcrdma_xdr_stream *x, void *res);
RPCRDMA_EXTERN int rpcrdma_mount3_xdr_export_res_enc(struct rpcrdma_xdr_stream *x, void *res);
RPCRDMA_EXTERN int rpcrdma_mount3_xdr_empty_list_enc(struct rpcrdma_xdr_stream *x, void *res);

/*
 * The upper-layer binding (RFC 8267 section 4): what a requester offers.
 */

/** Whether running @proc twice for one call does no harm: the procedures
 * that change nothing, and COMMIT (it only makes earlier WRITEs stable).
 * A server can mark them so (rpcrdma_server_set_idempotent()), and their
 * replies, READ data included, skip the duplicate request cache. */
RPCRDMA_EXTERN bool rpcrdma_nfs3_idempotent(uint32_t proc);

/** Whether @proc's reply carries a DDP-eligible result (READ, READLINK):
 * the Write list's first chunk is for it. */
RPCRDMA_EXTERN bool rpcrdma_nfs3_result_ddp(uint32_t proc);

/** Whether @proc's call carries a DDP-eligible argument (WRITE, SYMLINK). */
RPCRDMA_EXTERN bool rpcrdma_nfs3_args_ddp(uint32_t proc);

/**
 * rpcrdma_nfs3_max_reply - the largest RPC reply message @proc can produce,
 * for struct rpcrdma_call.max_reply
 * @count: READ's count, READDIR's count or READDIRPLUS's maxcount (the
 *	server keeps its reply within it); ignored by the others
 *
 * Includes the RPC reply header with a verifier of up to 400 bytes.  The
 * DDP-eligible result of READ is included; over RDMA it travels in the
 * Write chunk, which struct rpcrdma_call subtracts.
 */
RPCRDMA_EXTERN size_t rpcrdma_nfs3_max_reply(uint32_t proc, uint32_t count);

/*
 * Calling an NFSv3 server.
 */

/**
 * rpcrdma_nfs3_call - make NFSv3 procedure @proc on @clnt (a client of
 * RPCRDMA_NFS_PROGRAM version 3) and wait for it
 * @args, @res: the procedure's structures (see above); @res's data, path or
 *	entries room must be set for READ, READLINK, READDIR, READDIRPLUS
 *
 * Offers what RFC 8267 maps: a Write chunk for READ's data (placed straight
 * into @res->data) and READLINK's path, a Reply chunk when the reply may
 * exceed the inline size (READDIR, READDIRPLUS, ...), Read chunks for
 * WRITE's data.  Returns rpcrdma_client_call()'s value; the NFS status is
 * in @res.
 */
RPCRDMA_EXTERN int rpcrdma_nfs3_call(struct rpcrdma_client *clnt, uint32_t proc, void *args,
				     void *res);

/**
 * rpcrdma_mount3_mnt - MOUNT v3 MNT of @path over TCP at @host:@service,
 * as rpc.mountd serves it: the export's root handle in @fh
 * @cred: the credential to send (NULL: AUTH_NONE)
 *
 * Returns 0, a transport or RPC error, or the mountstat3 as a positive
 * number.
 */
RPCRDMA_EXTERN int rpcrdma_mount3_mnt(struct rpcrdma_loop *loop, const char *host,
				      const char *service, const char *path,
				      const struct rpcrdma_opaque_auth *cred,
				      struct rpcrdma_nfs3_fh *fh);

/** The name of @proc ("GETATTR"), or "?" */
RPCRDMA_EXTERN const char *rpcrdma_nfs3_proc_name(uint32_t proc);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_NFS3_H */
