/*
 * rpcrdma-nfsd's view of the exported directory: file handles, the caller's
 * credentials, attributes, and errno to nfsstat3.
 *
 * File handles are the kernel's own (name_to_handle_at), so they survive a
 * restart and a rename, as knfsd's do, wrapped with a keyed MAC so that a
 * client cannot forge a handle for a file the export never gave out (the
 * kernel would open any file of the filesystem by handle).  Opening by
 * handle needs CAP_DAC_READ_SEARCH, so the server runs as root; it then
 * does each operation with the caller's AUTH_SYS identity as its
 * filesystem identity (setfsuid/setfsgid and the thread's groups), so the
 * kernel checks permissions as it would for a local user.  The MAC also
 * covers the export's identity (its device and root inode), so a handle
 * one export gave out is refused by another sharing the key file.
 */
#ifndef RPCRDMA_NFSD_EXPORT_H
#define RPCRDMA_NFSD_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "access.h"
#include "rpcrdma/nfs3.h"
#include "rpcrdma/rpc.h"

struct nfsd_export {
	char path[RPCRDMA_NFS3_PATH_MAX + 1]; /* absolute, as MNT must name it */
	int root_fd;                          /* O_PATH: the root */
	int mount_fd;                         /* the root opened for reading: open_by_handle_at
					       * takes no O_PATH descriptor */
	dev_t dev;
	ino_t root_ino;
	uint64_t mnt_id; /* the root's mount: a mount inside the export, a bind
			  * mount of the same filesystem included, is not served */
	uint8_t key[16]; /* handle MAC key */
};

/* Opens @dir; reads or creates the handle key in @keyfile (NULL: a fresh
 * key, so handles die with the process).  A key file that anyone but its
 * owner may read or write is refused (-EPERM, with a message on stderr):
 * whoever reads the key can forge a handle to any file of the filesystem.
 * Returns 0 or -errno. */
int nfsd_export_open(struct nfsd_export *ex, const char *dir, const char *keyfile);
void nfsd_export_close(struct nfsd_export *ex);

/* A kernel file handle (name_to_handle_at) as our handles carry it: its
 * type and at most NFSD_FH_KERNEL_MAX bytes (the layout is in export.c). */
#define NFSD_FH_KERNEL_MAX (RPCRDMA_NFS3_FHSIZE - 14u)
struct nfsd_kernel_fh {
	int type;
	uint32_t len;
	uint8_t bytes[NFSD_FH_KERNEL_MAX];
};

/* Wrap @kfh into a handle signed for @ex.  Returns an nfsstat3:
 * NFS3ERR_NOTSUPP for a kernel handle too long to carry. */
uint32_t nfsd_fh_pack(const struct nfsd_export *ex, const struct nfsd_kernel_fh *kfh,
		      struct rpcrdma_nfs3_fh *fh);
/* The kernel handle inside @fh if @ex signed it, whatever bytes a client
 * sent: false for any other handle (to answer NFS3ERR_BADHANDLE).  Uses
 * only the key and the export's identity, opens nothing. */
bool nfsd_fh_unpack(const struct nfsd_export *ex, const struct rpcrdma_nfs3_fh *fh,
		    struct nfsd_kernel_fh *kfh);

/* The handle of the file @fd (O_PATH, inside the export).  Returns an
 * nfsstat3: NFS3ERR_ACCES for a file on another mount than the export's. */
uint32_t nfsd_fh_make(const struct nfsd_export *ex, int fd, struct rpcrdma_nfs3_fh *fh);
/* An O_PATH descriptor for @fh, or -1 with *@status set (BADHANDLE for a
 * handle we did not make, STALE for a file that is gone). */
int nfsd_fh_open(const struct nfsd_export *ex, const struct rpcrdma_nfs3_fh *fh, uint32_t *status);
/* Whether @fd lies on the export's mount (not on one mounted inside it). */
bool nfsd_on_export_mount(const struct nfsd_export *ex, int fd);
/* Whether the directory @fd still lies inside the export: its root is
 * found going up through "..", on the export's device. */
bool nfsd_in_export(const struct nfsd_export *ex, int fd);

/* The identity a request acts as: never (uid_t)-1 or (gid_t)-1. */
struct nfsd_cred {
	uint32_t uid, gid;
	uint32_t ngids;
	uint32_t gids[16];
};

/*
 * The identity of @req for client entry @cl, as knfsd maps it: AUTH_NONE,
 * ids the kernel cannot use ((uid_t)-1, (gid_t)-1) and, under
 * all_squash, everyone become the anonymous ids; under root_squash uid 0
 * becomes the anonymous uid and gid 0, as the primary group or in the
 * list, the anonymous gid.
 */
void nfsd_cred_of(const struct nfsd_client *cl, const struct rpcrdma_svc_req *req,
		  struct nfsd_cred *cred);
/*
 * Act as @cred on this thread: filesystem uid, gid and groups, and, unless
 * @cred is root, no effective capability at all.  Checks the result:
 * returns 0, or -EPERM when the thread did not end up exactly as @cred
 * (the request must then be refused, not run).  Always follow with
 * nfsd_cred_leave(), which restores the server's identity.
 */
int nfsd_cred_enter(const struct nfsd_export *ex, const struct nfsd_cred *cred);
void nfsd_cred_leave(const struct nfsd_export *ex);

uint32_t nfsd_errno_stat(int err);
void nfsd_fattr(const struct nfsd_export *ex, const struct stat *st, struct rpcrdma_nfs3_fattr *a);
/* Attributes of @fd, or "none" when it cannot be read. */
void nfsd_post_attr(const struct nfsd_export *ex, int fd, struct rpcrdma_nfs3_post_attr *pa);
/* wcc_data: the "before" part from @before (NULL: none), "after" from @fd. */
void nfsd_wcc(const struct nfsd_export *ex, const struct stat *before, int fd,
	      struct rpcrdma_nfs3_wcc *w);
int nfsd_stat_fd(int fd, struct stat *st);
/* Reopen an O_PATH descriptor for I/O with @flags, permission checked as
 * the current filesystem identity.  Returns the fd or -errno. */
int nfsd_reopen(int fd, int flags);
/* Reopen for data (READ, WRITE, COMMIT, a SETATTR of the size) as @cred
 * with knfsd's rules: the mode, but the owner always, and a reader who
 * may execute the file.  Returns the fd or -errno. */
int nfsd_open_data(int fd, const struct nfsd_cred *cred, int flags);
/* ACCESS3 bits @cred has on @st, of those asked: the file @fd (open, with
 * the thread acting as @cred) as the kernel judges it, or with @fd -1 its
 * mode bits alone. */
uint32_t nfsd_access(const struct nfsd_cred *cred, int fd, const struct stat *st, uint32_t asked);

#endif /* RPCRDMA_NFSD_EXPORT_H */
