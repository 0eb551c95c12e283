/* The exported directory: handles, credentials, attributes (export.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "export.h"
#include "siphash.h"

/*
 * Handle layout (at most 64 bytes):
 *   [0]      format version (2)
 *   [1]      n, the kernel handle's length
 *   [2..5]   the kernel handle's type, little-endian
 *   [6..6+n) the kernel handle
 *   then 8 bytes of SipHash-2-4, little-endian, over the export's identity
 *   (its device and root inode, 16 bytes, not sent) followed by
 *   everything before: a handle is good for the export that made it only
 */
#define FH_VERSION 2u
#define FH_EXPORT_ID 16u
#define FH_HEAD 6u
#define FH_MAC 8u
#define FH_KERNEL_MAX (RPCRDMA_NFS3_FHSIZE - FH_HEAD - FH_MAC)
_Static_assert(FH_KERNEL_MAX == NFSD_FH_KERNEL_MAX, "export.h's NFSD_FH_KERNEL_MAX");

static int open_by_handle(const struct nfsd_export *ex, struct file_handle *h, int flags);

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (uint8_t *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		got += (size_t)n;
	}
	return 0;
}

static int load_key(uint8_t key[16], const char *keyfile)
{
	int fd, rc;

	if (!keyfile)
		return getrandom(key, 16, 0) == 16 ? 0 : -EIO;
	fd = open(keyfile, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		struct stat st;

		if (fstat(fd, &st) < 0) {
			rc = -errno;
			close(fd);
			return rc;
		}
		if (!S_ISREG(st.st_mode) || (st.st_mode & 077) || st.st_uid != geteuid()) {
			fprintf(stderr,
				"rpcrdma-nfsd: the key file %s must be a regular file owned by "
				"uid %u that only its owner may read or write (it is mode %04o, "
				"uid %u): whoever reads it can forge file handles; chmod 600 it\n",
				keyfile, (unsigned int)geteuid(), (unsigned int)(st.st_mode & 07777),
				(unsigned int)st.st_uid);
			close(fd);
			return -EPERM;
		}
		rc = read_full(fd, key, 16);
		close(fd);
		return rc;
	}
	if (errno != ENOENT)
		return -errno;
	if (getrandom(key, 16, 0) != 16)
		return -EIO;
	fd = open(keyfile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	rc = write(fd, key, 16) == 16 && fsync(fd) == 0 ? 0 : -EIO;
	close(fd);
	return rc;
}

/*
 * A bind mount of the export's own filesystem inside the export has the
 * same st_dev; a handle made there would, once opened on the export's
 * mount, name a directory outside the export, and ".." from it would climb
 * to the filesystem's root.  knfsd does not cross into such a mount
 * without crossmnt or nohide, which this server does not offer.
 */
static int mount_id_of(int fd, uint64_t *id)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) < 0)
		return -errno;
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -ENOSYS;
	*id = stx.stx_mnt_id;
	return 0;
}

bool nfsd_on_export_mount(const struct nfsd_export *ex, int fd)
{
	uint64_t id;

	return mount_id_of(fd, &id) == 0 && id == ex->mnt_id;
}

int nfsd_export_open(struct nfsd_export *ex, const char *dir, const char *keyfile)
{
	char real[PATH_MAX];
	struct stat st;
	int rc;

	memset(ex, 0, sizeof(*ex));
	ex->root_fd = ex->mount_fd = -1;
	if (!realpath(dir, real))
		return -errno;
	if (strlen(real) > RPCRDMA_NFS3_PATH_MAX)
		return -ENAMETOOLONG;
	strcpy(ex->path, real);
	ex->root_fd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ex->root_fd < 0 || fstat(ex->root_fd, &st) < 0)
		return -errno;
	ex->mount_fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ex->mount_fd < 0)
		return -errno;
	ex->dev = st.st_dev;
	ex->root_ino = st.st_ino;
	rc = mount_id_of(ex->root_fd, &ex->mnt_id);
	if (rc) {
		fprintf(stderr,
			"rpcrdma-nfsd: %s: cannot tell its mount (statx STATX_MNT_ID, "
			"Linux 5.8 or later): %s\n",
			real, strerror(-rc));
		return rc;
	}
	/* Every request acts as its caller, as knfsd's threads do; a server
	 * that cannot switch would act as itself for everyone, and with
	 * CAP_DAC_READ_SEARCH (all open_by_handle_at needs) read any file
	 * for any client. */
	if (geteuid() != 0) {
		fprintf(stderr, "rpcrdma-nfsd: must run as root: each request acts as its "
				"caller's identity (setfsuid, setfsgid, setgroups)\n");
		return -EPERM;
	}
	rc = load_key(ex->key, keyfile);
	if (rc)
		return rc;
	/* Fail now, with a clear error, where handles cannot work. */
	{
		struct rpcrdma_nfs3_fh fh;
		uint32_t status = nfsd_fh_make(ex, ex->root_fd, &fh);
		int fd;

		if (status != RPCRDMA_NFS3_OK)
			return -EOPNOTSUPP;
		fd = nfsd_fh_open(ex, &fh, &status);
		if (fd < 0)
			return status == RPCRDMA_NFS3ERR_PERM ? -EACCES : -EOPNOTSUPP;
		close(fd);
	}
	return 0;
}

void nfsd_export_close(struct nfsd_export *ex)
{
	if (ex->root_fd >= 0)
		close(ex->root_fd);
	if (ex->mount_fd >= 0)
		close(ex->mount_fd);
	ex->root_fd = ex->mount_fd = -1;
	explicit_bzero(ex->key, sizeof(ex->key));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The MAC of a handle's first @len bytes, bound to this export. */
static uint64_t fh_mac(const struct nfsd_export *ex, const uint8_t *data, size_t len)
{
	uint8_t buf[FH_EXPORT_ID + RPCRDMA_NFS3_FHSIZE];

	put_le64(buf, (uint64_t)ex->dev);
	put_le64(buf + 8, (uint64_t)ex->root_ino);
	memcpy(buf + FH_EXPORT_ID, data, len);
	return nfsd_siphash24(ex->key, buf, FH_EXPORT_ID + len);
}

uint32_t nfsd_fh_pack(const struct nfsd_export *ex, const struct nfsd_kernel_fh *kfh,
		      struct rpcrdma_nfs3_fh *fh)
{
	uint32_t type = (uint32_t)kfh->type;

	if (kfh->len > FH_KERNEL_MAX)
		return RPCRDMA_NFS3ERR_NOTSUPP;
	fh->data[0] = FH_VERSION;
	fh->data[1] = (uint8_t)kfh->len;
	for (int i = 0; i < 4; i++)
		fh->data[2 + i] = (uint8_t)(type >> (8 * i));
	memcpy(fh->data + FH_HEAD, kfh->bytes, kfh->len);
	fh->len = FH_HEAD + kfh->len + FH_MAC;
	put_le64(fh->data + FH_HEAD + kfh->len, fh_mac(ex, fh->data, FH_HEAD + kfh->len));
	return RPCRDMA_NFS3_OK;
}

bool nfsd_fh_unpack(const struct nfsd_export *ex, const struct rpcrdma_nfs3_fh *fh,
		    struct nfsd_kernel_fh *kfh)
{
	uint8_t mac[FH_MAC], diff = 0;
	uint32_t n, type = 0;

	if (fh->len < FH_HEAD + FH_MAC || fh->len > RPCRDMA_NFS3_FHSIZE ||
	    fh->data[0] != FH_VERSION || (n = fh->data[1]) != fh->len - FH_HEAD - FH_MAC)
		return false;
	put_le64(mac, fh_mac(ex, fh->data, FH_HEAD + n));
	/* Every byte compared, whatever differs first: no timing to learn from. */
	for (unsigned int i = 0; i < FH_MAC; i++)
		diff |= (uint8_t)(mac[i] ^ fh->data[FH_HEAD + n + i]);
	if (diff)
		return false;
	for (int i = 3; i >= 0; i--)
		type = (type << 8) | fh->data[2 + i];
	kfh->type = (int)type;
	kfh->len = n;
	memcpy(kfh->bytes, fh->data + FH_HEAD, n);
	return true;
}

uint32_t nfsd_fh_make(const struct nfsd_export *ex, int fd, struct rpcrdma_nfs3_fh *fh)
{
	union {
		struct file_handle h;
		uint8_t room[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	struct nfsd_kernel_fh kfh;
	int mount_id;

	u.h.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(fd, "", &u.h, &mount_id, AT_EMPTY_PATH) < 0)
		return nfsd_errno_stat(errno);
	if (mount_id < 0 || (uint64_t)mount_id != ex->mnt_id)
		return RPCRDMA_NFS3ERR_ACCES; /* see mount_id_of */
	if (u.h.handle_bytes > FH_KERNEL_MAX)
		return RPCRDMA_NFS3ERR_NOTSUPP;
	kfh.type = u.h.handle_type;
	kfh.len = u.h.handle_bytes;
	memcpy(kfh.bytes, u.h.f_handle, u.h.handle_bytes);
	return nfsd_fh_pack(ex, &kfh, fh);
}

int nfsd_fh_open(const struct nfsd_export *ex, const struct rpcrdma_nfs3_fh *fh, uint32_t *status)
{
	union {
		struct file_handle h;
		uint8_t room[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	struct nfsd_kernel_fh kfh;
	struct stat st;
	int fd;

	if (!nfsd_fh_unpack(ex, fh, &kfh)) {
		*status = RPCRDMA_NFS3ERR_BADHANDLE;
		return -1;
	}
	u.h.handle_bytes = kfh.len;
	u.h.handle_type = kfh.type;
	memcpy(u.h.f_handle, kfh.bytes, kfh.len);
	fd = open_by_handle(ex, &u.h, O_PATH | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		/* A handle that names nothing is stale; one that could not be
		 * opened for want of memory or descriptors is not (before, a
		 * server out of descriptors told every client its handles
		 * were stale). */
		if (errno == ENOMEM || errno == EMFILE || errno == ENFILE)
			*status = RPCRDMA_NFS3ERR_JUKEBOX;
		else
			*status = errno == EPERM ? RPCRDMA_NFS3ERR_PERM : RPCRDMA_NFS3ERR_STALE;
		return -1;
	}
	/* Another filesystem's file cannot come from a handle we signed, but
	 * a file can outlive its place: never serve one that left the
	 * export's filesystem. */
	if (fstat(fd, &st) < 0 || st.st_dev != ex->dev) {
		close(fd);
		*status = RPCRDMA_NFS3ERR_STALE;
		return -1;
	}
	*status = RPCRDMA_NFS3_OK;
	return fd;
}

/* An id the kernel can act as: (uint32_t)-1 is "no id" to it (setfsuid
 * would leave the thread as it was, root). */
static uint32_t valid_or(uint32_t id, uint32_t anon)
{
	return id == 0xffffffffu ? anon : id;
}

void nfsd_cred_of(const struct nfsd_client *cl, const struct rpcrdma_svc_req *req,
		  struct nfsd_cred *cred)
{
	const struct rpcrdma_opaque_auth *a = rpcrdma_svc_cred(req);
	bool squash_root = !(cl->flags & NFSD_NO_ROOT_SQUASH);
	struct rpcrdma_auth_sys sys;

	memset(cred, 0, sizeof(*cred));
	cred->uid = cl->anon_uid;
	cred->gid = cl->anon_gid;
	if (!a || a->flavor != RPCRDMA_AUTH_SYS || rpcrdma_auth_sys_decode(a, &sys) != 0 ||
	    (cl->flags & NFSD_ALL_SQUASH))
		return;
	cred->uid = valid_or(sys.uid, cl->anon_uid);
	cred->gid = valid_or(sys.gid, cl->anon_gid);
	if (squash_root && cred->uid == 0)
		cred->uid = cl->anon_uid;
	if (squash_root && cred->gid == 0)
		cred->gid = cl->anon_gid;
	cred->ngids = sys.ngids < 16 ? sys.ngids : 16;
	for (uint32_t i = 0; i < cred->ngids; i++) {
		uint32_t g = valid_or(sys.gids[i], cl->anon_gid);

		cred->gids[i] = squash_root && g == 0 ? cl->anon_gid : g;
	}
}

/*
 * Capabilities, by raw system call: capset with pid 0 changes this thread
 * only.  The server keeps its permitted set; while acting as a user its
 * effective set is empty, so CAP_SYS_RESOURCE (quotas, the blocks kept for
 * root), CAP_FOWNER, CAP_FSETID and the rest do not apply to the caller's
 * requests.
 */
static int caps_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};

	return syscall(SYS_capget, &h, d) < 0 ? -errno : 0;
}

static int caps_set_effective(const struct __user_cap_data_struct *perm, bool on)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];

	for (int i = 0; i < 2; i++) {
		d[i] = perm[i];
		d[i].effective = on ? perm[i].permitted : 0;
	}
	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The raw system calls act on this thread only (glibc's setgroups and
 * friends would change every thread of the process). */
int nfsd_cred_enter(const struct nfsd_export *ex, const struct nfsd_cred *cred)
{
	struct __user_cap_data_struct caps[2];
	uint32_t want[16], got[16];
	gid_t gids[16];
	long n;

	(void)ex;
	if (cred->uid == 0xffffffffu || cred->gid == 0xffffffffu || cred->ngids > 16)
		return -EPERM;
	for (uint32_t i = 0; i < cred->ngids; i++) {
		if (cred->gids[i] == 0xffffffffu)
			return -EPERM;
		gids[i] = cred->gids[i];
		want[i] = cred->gids[i];
	}
	if (syscall(SYS_setgroups, (size_t)cred->ngids, gids) < 0)
		return -EPERM;
	(void)syscall(SYS_setfsgid, cred->gid);
	(void)syscall(SYS_setfsuid, cred->uid);
	/* setfsuid and setfsgid answer the previous id and never fail
	 * visibly: ask again with an invalid id, which changes nothing. */
	if ((uint32_t)syscall(SYS_setfsuid, -1) != cred->uid ||
	    (uint32_t)syscall(SYS_setfsgid, -1) != cred->gid)
		return -EPERM;
	n = syscall(SYS_getgroups, 16, got);
	if (n != (long)cred->ngids)
		return -EPERM;
	qsort(want, cred->ngids, sizeof(want[0]), cmp_u32);
	qsort(got, cred->ngids, sizeof(got[0]), cmp_u32);
	if (memcmp(want, got, cred->ngids * sizeof(want[0])) != 0)
		return -EPERM;
	if (caps_get(caps) || caps_set_effective(caps, cred->uid == 0) || caps_get(caps))
		return -EPERM;
	if (cred->uid != 0 && (caps[0].effective || caps[1].effective))
		return -EPERM;
	return 0;
}

void nfsd_cred_leave(const struct nfsd_export *ex)
{
	struct __user_cap_data_struct caps[2];

	(void)ex;
	/* ORDER: the capabilities first: setgroups needs CAP_SETGID, which
	 * setfsuid(0) does not bring back (only the filesystem ones). */
	if (caps_get(caps) || caps_set_effective(caps, true) ||
	    syscall(SYS_setgroups, (size_t)0, NULL) < 0) {
		/* WARNING: the thread would keep the last caller's groups. */
		fprintf(stderr, "rpcrdma-nfsd: cannot return a thread to the server's identity\n");
		abort();
	}
	(void)syscall(SYS_setfsuid, 0);
	(void)syscall(SYS_setfsgid, 0);
}

/*
 * Raise @cap in this thread's effective set for one call: *@saved keeps
 * the set before.  Returns whether anything was raised (nothing is when
 * the thread has it already, as when acting as root).
 */
static bool cap_raise(int cap, struct __user_cap_data_struct saved[2])
{
	struct __user_cap_header_struct hd = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];

	if (caps_get(saved) || (saved[0].effective & (1u << cap)))
		return false;
	d[0] = saved[0];
	d[1] = saved[1];
	d[0].effective |= (1u << cap) & saved[0].permitted;
	return syscall(SYS_capset, &hd, d) == 0;
}

static void cap_restore(const struct __user_cap_data_struct saved[2], bool raised)
{
	struct __user_cap_header_struct hd = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {saved[0], saved[1]};

	/* WARNING: if the drop failed the request would run with the
	 * capability: never go on then. */
	if (raised && syscall(SYS_capset, &hd, d) < 0) {
		fprintf(stderr, "rpcrdma-nfsd: cannot drop a capability again\n");
		abort();
	}
}

static int open_by_handle(const struct nfsd_export *ex, struct file_handle *h, int flags)
{
	struct __user_cap_data_struct caps[2];
	bool raised;
	int fd, err;

	/* The server resolves the handle it signed, whoever the caller is:
	 * for that one call the thread gets back CAP_DAC_READ_SEARCH, which
	 * open_by_handle_at requires, and nothing else. */
	raised = cap_raise(CAP_DAC_READ_SEARCH, caps);
	fd = open_by_handle_at(ex->mount_fd, h, flags);
	err = errno;
	cap_restore(caps, raised);
	errno = err;
	return fd;
}

/*
 * A handle names a file, not a place: a directory a local user moved out
 * of the export keeps its handle, and ".." from it would climb to the
 * filesystem's root (knfsd without subtree_check serves such a handle too,
 * but its ".." from there is no reason to serve the rest of the host).
 * So the way up is walked, as knfsd's nfsd_acceptable walks d_parent, until
 * the export's root (inside) or a directory that is its own parent or on
 * another device (outside).  The walk looks up ".." only, as the server:
 * the caller's search rights on the ancestors are not the question here
 * (knfsd walks as the kernel), and a caller who may not search one would
 * else lose a ".." it is entitled to.
 */
#define WALK_MAX (PATH_MAX / 2) /* the most "../" a path can hold */

bool nfsd_in_export(const struct nfsd_export *ex, int fd)
{
	struct __user_cap_data_struct caps[2];
	struct stat st, up;
	bool raised, inside = false;
	int cur = -1;

	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
		return false;
	raised = cap_raise(CAP_DAC_READ_SEARCH, caps);
	for (int depth = 0; depth <= WALK_MAX && st.st_dev == ex->dev; depth++) {
		int next;

		if (st.st_ino == ex->root_ino) {
			inside = true;
			break;
		}
		next = openat(cur >= 0 ? cur : fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (next < 0)
			break;
		if (cur >= 0)
			close(cur);
		cur = next;
		if (fstat(cur, &up) < 0 || (up.st_dev == st.st_dev && up.st_ino == st.st_ino))
			break;
		st = up;
	}
	if (cur >= 0)
		close(cur);
	cap_restore(caps, raised);
	return inside;
}

uint32_t nfsd_errno_stat(int err)
{
	switch (err) {
	case 0:
		return RPCRDMA_NFS3_OK;
	case EPERM:
		return RPCRDMA_NFS3ERR_PERM;
	case ENOENT:
		return RPCRDMA_NFS3ERR_NOENT;
	case ENXIO:
		return RPCRDMA_NFS3ERR_NXIO;
	case EACCES:
		return RPCRDMA_NFS3ERR_ACCES;
	case EEXIST:
		return RPCRDMA_NFS3ERR_EXIST;
	case EXDEV:
		return RPCRDMA_NFS3ERR_XDEV;
	case ENODEV:
		return RPCRDMA_NFS3ERR_NODEV;
	case ENOTDIR:
		return RPCRDMA_NFS3ERR_NOTDIR;
	case EISDIR:
		return RPCRDMA_NFS3ERR_ISDIR;
	case EINVAL:
		return RPCRDMA_NFS3ERR_INVAL;
	case EFBIG:
		return RPCRDMA_NFS3ERR_FBIG;
	case ENOSPC:
		return RPCRDMA_NFS3ERR_NOSPC;
	case EROFS:
		return RPCRDMA_NFS3ERR_ROFS;
	case EMLINK:
		return RPCRDMA_NFS3ERR_MLINK;
	case ENAMETOOLONG:
		return RPCRDMA_NFS3ERR_NAMETOOLONG;
	case ENOTEMPTY:
		return RPCRDMA_NFS3ERR_NOTEMPTY;
	case EDQUOT:
		return RPCRDMA_NFS3ERR_DQUOT;
	case ESTALE:
		return RPCRDMA_NFS3ERR_STALE;
	case EOPNOTSUPP:
		return RPCRDMA_NFS3ERR_NOTSUPP;
	case ELOOP:
		return RPCRDMA_NFS3ERR_ACCES;
	case EAGAIN:
		/* A lease another holder must give up first (opens never wait
		 * here, O_NONBLOCK): try again later, as knfsd answers. */
		return RPCRDMA_NFS3ERR_JUKEBOX;
	case ENOMEM:
	case EMFILE:
	case ENFILE:
		/* Memory or descriptors short for now: the client waits and
		 * sends again, as knfsd has it, rather than failing the
		 * application's I/O. */
		return RPCRDMA_NFS3ERR_JUKEBOX;
	default:
		return RPCRDMA_NFS3ERR_IO;
	}
}

static uint32_t ftype(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFDIR:
		return RPCRDMA_NF3DIR;
	case S_IFBLK:
		return RPCRDMA_NF3BLK;
	case S_IFCHR:
		return RPCRDMA_NF3CHR;
	case S_IFLNK:
		return RPCRDMA_NF3LNK;
	case S_IFSOCK:
		return RPCRDMA_NF3SOCK;
	case S_IFIFO:
		return RPCRDMA_NF3FIFO;
	default:
		return RPCRDMA_NF3REG;
	}
}

static struct rpcrdma_nfs3_time ts(struct timespec t)
{
	struct rpcrdma_nfs3_time r = {(uint32_t)t.tv_sec, (uint32_t)t.tv_nsec};

	return r;
}

void nfsd_fattr(const struct nfsd_export *ex, const struct stat *st, struct rpcrdma_nfs3_fattr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = ftype(st->st_mode);
	a->mode = st->st_mode & 07777;
	a->nlink = (uint32_t)st->st_nlink;
	a->uid = st->st_uid;
	a->gid = st->st_gid;
	a->size = (uint64_t)st->st_size;
	a->used = (uint64_t)st->st_blocks * 512u;
	a->rdev_major = major(st->st_rdev);
	a->rdev_minor = minor(st->st_rdev);
	a->fsid = (uint64_t)ex->dev;
	a->fileid = (uint64_t)st->st_ino;
	a->atime = ts(st->st_atim);
	a->mtime = ts(st->st_mtim);
	a->ctime = ts(st->st_ctim);
}

int nfsd_stat_fd(int fd, struct stat *st)
{
	return fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

void nfsd_post_attr(const struct nfsd_export *ex, int fd, struct rpcrdma_nfs3_post_attr *pa)
{
	struct stat st;

	pa->present = fd >= 0 && nfsd_stat_fd(fd, &st) == 0;
	if (pa->present)
		nfsd_fattr(ex, &st, &pa->attr);
}

void nfsd_wcc(const struct nfsd_export *ex, const struct stat *before, int fd,
	      struct rpcrdma_nfs3_wcc *w)
{
	memset(w, 0, sizeof(*w));
	if (before) {
		w->before_present = true;
		w->before_size = (uint64_t)before->st_size;
		w->before_mtime = ts(before->st_mtim);
		w->before_ctime = ts(before->st_ctim);
	}
	nfsd_post_attr(ex, fd, &w->after);
}

int nfsd_reopen(int fd, int flags)
{
	char path[64];
	struct stat st;
	int nfd;

	/* Only regular files are opened for data: opening a FIFO or a device
	 * may block a filesystem thread for ever, or act on hardware.  The
	 * callers check the type first; this is the last guard, and
	 * O_NONBLOCK keeps even a FIFO that got here from blocking. */
	if (nfsd_stat_fd(fd, &st) || !S_ISREG(st.st_mode))
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	nfd = open(path, flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (nfd < 0)
		return -errno;
	if (fstat(nfd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(nfd);
		return -EINVAL;
	}
	return nfd;
}

/* Whether @fd's file carries a POSIX ACL, or may (it cannot be told). */
static bool may_have_acl(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return getxattr(path, "system.posix_acl_access", NULL, 0) >= 0 || errno != ENODATA;
}

/*
 * knfsd's two exceptions to the mode for data (nfsd_permission,
 * fs/nfsd/vfs.c): READ, WRITE, COMMIT and a SETATTR of the size ask with
 * NFSD_MAY_OWNER_OVERRIDE, so the file's owner passes whatever the mode
 * (a client checks permission at open and then expects I/O on the open
 * file to work: a file made 0444 by cp and then written, a fchmod(fd, 0));
 * and a READ refused by the mode is let through when the caller may
 * execute the file (so a binary of mode 0711 runs).  The execute right is
 * read from the mode bits, as ACCESS reads it: with a POSIX ACL, which
 * could deny what the bits give, the exception is not made (less than
 * knfsd, never more).
 */
static bool data_override(int fd, const struct nfsd_cred *cred, int flags)
{
	struct stat st;

	if (nfsd_stat_fd(fd, &st) || !S_ISREG(st.st_mode))
		return false;
	if (cred->uid == st.st_uid)
		return true;
	return (flags & O_ACCMODE) == O_RDONLY &&
	       nfsd_access(cred, -1, &st, RPCRDMA_ACCESS3_EXECUTE) && !may_have_acl(fd);
}

int nfsd_open_data(int fd, const struct nfsd_cred *cred, int flags)
{
	struct __user_cap_data_struct caps[2];
	bool raised;
	int nfd = nfsd_reopen(fd, flags);

	if (nfd != -EACCES || !data_override(fd, cred, flags))
		return nfd;
	/* The override is decided above, not by keeping a capability for
	 * the request: only this open passes the mode, and the kernel still
	 * refuses what no capability passes (an immutable or append-only
	 * file, a read-only mount). */
	raised = cap_raise(CAP_DAC_OVERRIDE, caps);
	nfd = nfsd_reopen(fd, flags);
	cap_restore(caps, raised);
	return nfd;
}

/* The rights @cred has on @st by its mode bits alone: 4 read, 2 write,
 * 1 execute or search. */
static uint32_t mode_rights(const struct nfsd_cred *cred, const struct stat *st)
{
	bool in_group = cred->gid == st->st_gid;

	if (cred->uid == 0)
		/* root executes what anyone may, as the kernel */
		return 6u | (S_ISDIR(st->st_mode) || (st->st_mode & 0111) ? 1u : 0u);
	for (uint32_t i = 0; i < cred->ngids && !in_group; i++)
		in_group = cred->gids[i] == st->st_gid;
	if (cred->uid == st->st_uid)
		return (st->st_mode >> 6) & 7;
	if (in_group)
		return (st->st_mode >> 3) & 7;
	return st->st_mode & 7;
}

/*
 * The rights the kernel gives this thread's identity, the caller's since
 * nfsd_cred_enter(), on @fd's file: faccessat2 with AT_EACCESS checks as
 * the filesystem ids, groups and capabilities, so that a POSIX ACL, an
 * immutable file and a read-only filesystem or mount count as they do in
 * knfsd's nfsd_permission (inode_permission, fs/nfsd/vfs.c).  -1 on a
 * kernel without faccessat2 (before 5.8), or for a symbolic link, which
 * the descriptor's /proc link cannot name without following it.
 */
static int kernel_rights(int fd, const struct stat *st)
{
	static const int modes[3] = {R_OK, W_OK, X_OK};
	char path[64];
	int got = 0;

	if (S_ISLNK(st->st_mode))
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (int i = 0; i < 3; i++) {
		if (syscall(SYS_faccessat2, AT_FDCWD, path, modes[i], AT_EACCESS) == 0)
			got |= 4 >> i;
		else if (errno == ENOSYS)
			return -1;
	}
	return got;
}

/* The ACCESS3 bits that ask to change the object or a directory's names. */
#define ACCESS3_CHANGES (RPCRDMA_ACCESS3_MODIFY | RPCRDMA_ACCESS3_EXTEND | RPCRDMA_ACCESS3_DELETE)

/*
 * What no identity may do to @fd's file, as nfsd_permission has it: write
 * to an immutable file or on a read-only mount (faccessat2 leaves special
 * files out of the latter), truncate an append-only one (ACCESS3 MODIFY
 * asks NFSD_MAY_TRUNC, and so do a directory's MODIFY and DELETE).
 */
static uint32_t access_forbidden(int fd)
{
	struct statx stx;
	struct statvfs vfs;
	uint32_t no = 0;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, 0, &stx) == 0) {
		if (stx.stx_attributes & stx.stx_attributes_mask & STATX_ATTR_IMMUTABLE)
			no |= ACCESS3_CHANGES;
		if (stx.stx_attributes & stx.stx_attributes_mask & STATX_ATTR_APPEND)
			no |= RPCRDMA_ACCESS3_MODIFY | RPCRDMA_ACCESS3_DELETE;
	}
	if (fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
		no |= ACCESS3_CHANGES;
	return no;
}

/*
 * ACCESS as knfsd maps it (nfs3_diraccess, nfs3_regaccess, nfs3_anyaccess
 * in fs/nfsd/vfs.c): in a directory, MODIFY, EXTEND and DELETE need the
 * search right as well as the write right (a name is changed through the
 * directory), LOOKUP is the search right and EXECUTE is never granted; a
 * file that is no directory has no LOOKUP and no DELETE (removing it is
 * its directory's business).  Before, the write bit alone granted MODIFY,
 * EXTEND and DELETE on anything.  The rights come from the kernel where
 * it can tell (kernel_rights); before, the mode bits alone gave them, so
 * a user an ACL denied was told it could read, and the Linux client let
 * it read what another user had in its page cache.
 */
uint32_t nfsd_access(const struct nfsd_cred *cred, int fd, const struct stat *st, uint32_t asked)
{
	bool dir = S_ISDIR(st->st_mode);
	int kbits = fd >= 0 ? kernel_rights(fd, st) : -1;
	uint32_t bits = kbits >= 0 ? (uint32_t)kbits : mode_rights(cred, st), got = 0;

	if (bits & 4)
		got |= RPCRDMA_ACCESS3_READ;
	if (dir) {
		if (bits & 1)
			got |= RPCRDMA_ACCESS3_LOOKUP;
		if ((bits & 3) == 3)
			got |= RPCRDMA_ACCESS3_MODIFY | RPCRDMA_ACCESS3_EXTEND |
			       RPCRDMA_ACCESS3_DELETE;
	} else {
		if (bits & 1)
			got |= RPCRDMA_ACCESS3_EXECUTE;
		if (bits & 2)
			got |= RPCRDMA_ACCESS3_MODIFY | RPCRDMA_ACCESS3_EXTEND;
	}
	got &= asked;
	if (fd >= 0 && (got & ACCESS3_CHANGES))
		got &= ~access_forbidden(fd);
	return got;
}
