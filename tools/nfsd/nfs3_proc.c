/*
 * rpcrdma-nfsd's NFSv3 and MOUNT v3 procedures.  Each resolves the file
 * handles it was given as the server (opening by handle needs privilege),
 * then acts as the caller (export.h) for the operation itself, so the
 * kernel checks permissions.  Names are looked up only inside directories
 * the export handed out, one component at a time, never following a
 * symbolic link, so no request reaches outside the export.
 *
 * Before any of that, on the RPC loop, a request is admitted or refused:
 * its client address must match an entry of the access list (access.h),
 * over TCP from a privileged port unless the entry says insecure, and a
 * read-only entry gets NFS3ERR_ROFS for every change.  The identity it
 * then acts as is worked out there too (nfsd_cred_of), and switched to
 * and checked on the filesystem thread before the procedure runs.
 */
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fs_pool.h"
#include "nfsd.h"
#include "read_bufs.h"

static const struct nfsd_export *ex;
static const struct nfsd_access *acc;
/* The RDMA provider runs over TCP sockets (ofi): its peers' source ports
 * are real, and "secure" holds them to the TCP rule. */
static bool rdma_source_ports;
static uint8_t write_verf[RPCRDMA_NFS3_VERF_SIZE];

static struct {
#define X(name) _Atomic unsigned long long name;
	NFSD_STATS(X)
#undef X
} counters;

void nfsd_procs_init(const struct nfsd_export *export, const struct nfsd_access *access,
		     const uint8_t verf[8], bool rdma_on_sockets)
{
	ex = export;
	acc = access;
	rdma_source_ports = rdma_on_sockets;
	memcpy(write_verf, verf, sizeof(write_verf));
}

void nfsd_stats_get(struct nfsd_stats *out)
{
	unsigned int queued_max;

#define X(name) out->name = atomic_load(&counters.name);
	NFSD_STATS(X)
#undef X
	nfsd_pool_counts(&out->queue_full, &queued_max);
	out->queued_max = queued_max;
}

/* One call: who it acts as, and what its client entry allows. */
struct call {
	struct nfsd_cred cred;
	unsigned int flags; /* enum nfsd_client_flag */
	bool rdma;          /* came over RPC-over-RDMA */
};

bool nfsd_trace;

/* --trace: one line per call, on stderr, with the thread that ran it. */
static void trace(const struct rpcrdma_svc_req *req, const char *name, const void *res)
{
	const struct rpcrdma_rpc_msg *m = rpcrdma_svc_msg(req);

	fprintf(stderr, "nfsd[%ld] xid 0x%08x %s -> %u\n", (long)syscall(SYS_gettid),
		m ? m->xid : 0, name, *(const uint32_t *)res);
}

/* A call on its way through the filesystem threads (fs_pool.h). */
struct proc_job {
	struct nfsd_job base;
	struct rpcrdma_svc_req *req;
	void *args, *res;
	void (*impl)(struct call *c, void *args, void *res);
	const char *name;
	struct call c;
};

static void job_run(struct nfsd_job *j)
{
	struct proc_job *p = (struct proc_job *)j;

	/* The whole procedure runs as the caller; only the handle lookups
	 * get back the one capability they need (export.c).  A switch that
	 * did not come out exactly as asked refuses the call. */
	if (nfsd_cred_enter(ex, &p->c.cred) == 0) {
		p->impl(&p->c, p->args, p->res);
	} else {
		atomic_fetch_add(&counters.refused_cred, 1);
		*(uint32_t *)p->res = RPCRDMA_NFS3ERR_ACCES;
	}
	nfsd_cred_leave(ex);
}

static void job_done(struct nfsd_job *j)
{
	struct proc_job *p = (struct proc_job *)j;

	if (nfsd_trace)
		trace(p->req, p->name, p->res);
	(void)rpcrdma_svc_reply(p->req, 0);
	free(p);
}

static bool changes(uint32_t proc)
{
	switch (proc) {
	case RPCRDMA_NFS3_SETATTR:
	case RPCRDMA_NFS3_WRITE:
	case RPCRDMA_NFS3_CREATE:
	case RPCRDMA_NFS3_MKDIR:
	case RPCRDMA_NFS3_SYMLINK:
	case RPCRDMA_NFS3_MKNOD:
	case RPCRDMA_NFS3_REMOVE:
	case RPCRDMA_NFS3_RMDIR:
	case RPCRDMA_NFS3_RENAME:
	case RPCRDMA_NFS3_LINK:
	/* It changes nothing, but opens for writing (knfsd's nfsd_commit
	 * asks for NFSD_MAY_WRITE, so a read-only export answers ROFS). */
	case RPCRDMA_NFS3_COMMIT:
		return true;
	default:
		return false;
	}
}

const struct nfsd_client *nfsd_admit(const struct rpcrdma_svc_req *req, bool rdma)
{
	const struct sockaddr *peer = rpcrdma_svc_peer(req);
	const struct nfsd_client *cl = nfsd_access_find(acc, peer);
	int port;

	if (!cl) {
		atomic_fetch_add(&counters.refused_host, 1);
		return NULL;
	}
	/*
	 * secure: a privileged source port, which only root on the client
	 * host can bind, as knfsd requires by default.  Over RDMA knfsd
	 * counts every request as secure (svc_rdma sets RQ_SECURE), since
	 * the kernel's NFS/RDMA client binds no reserved port; so do we on
	 * verbs.  Software RDMA (ofi's tcp provider) is a TCP connection that
	 * any local user can open: held to the rule as TCP is.
	 */
	port = nfsd_peer_port(peer);
	if ((!rdma || rdma_source_ports) && !(cl->flags & NFSD_INSECURE) &&
	    (port < 0 || port >= 1024)) {
		atomic_fetch_add(&counters.refused_port, 1);
		return NULL;
	}
	return cl;
}

/* On the loop: admit the client, work out the caller's identity, queue
 * the work to a pool thread; the answer comes back on this loop (the
 * request waits, deferred). */
static int submit(struct rpcrdma_svc_req *req, void *args, void *res,
		  void (*impl)(struct call *, void *, void *), const char *name, bool rdma)
{
	const struct rpcrdma_rpc_msg *m = rpcrdma_svc_msg(req);
	const struct nfsd_client *cl = nfsd_admit(req, rdma);
	uint32_t *status = res;
	struct proc_job *p;
	int rc;

	if (!cl) {
		*status = RPCRDMA_NFS3ERR_ACCES;
		goto answer_now;
	}
	if ((cl->flags & NFSD_RO) && m && changes(m->u.call.proc)) {
		atomic_fetch_add(&counters.refused_rofs, 1);
		*status = RPCRDMA_NFS3ERR_ROFS;
		goto answer_now;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		/* As a full queue: the client waits and sends again. */
		*status = nfsd_errno_stat(ENOMEM);
		goto answer_now;
	}
	p->req = req;
	p->args = args;
	p->res = res;
	p->impl = impl;
	p->name = name;
	p->c.flags = cl->flags;
	p->c.rdma = rdma;
	nfsd_cred_of(cl, req, &p->c.cred);
	p->base.loop = rpcrdma_svc_loop(req);
	p->base.run = job_run;
	p->base.done = job_done;
	rc = nfsd_pool_submit(&p->base);
	if (rc) {
		/* A full queue, or a server stopping: the client waits and
		 * sends again (RFC 1813: NFS3ERR_JUKEBOX). */
		free(p);
		*status = RPCRDMA_NFS3ERR_JUKEBOX;
		goto answer_now;
	}
	return RPCRDMA_SVC_DEFERRED;
answer_now:
	if (nfsd_trace)
		trace(req, name, res);
	return 0;
}

#define PROC(name, impl)                                                                           \
	static void impl##_job(struct call *c, void *args, void *res)                              \
	{                                                                                          \
		impl(c, args, res);                                                                \
	}                                                                                          \
	static int name(struct rpcrdma_svc_req *req, void *args, void *res)                        \
	{                                                                                          \
		return submit(req, args, res, impl##_job, #impl, false);                           \
	}                                                                                          \
	static int name##_rdma(struct rpcrdma_svc_req *req, void *args, void *res)                 \
	{                                                                                          \
		return submit(req, args, res, impl##_job, #impl, true);                            \
	}

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

static int fh_open(const struct rpcrdma_nfs3_fh *fh, uint32_t *status)
{
	return nfsd_fh_open(ex, fh, status);
}

static uint32_t err_stat(void);

/* @fh opened with its attributes now, or -1 with *@status set. */
static int fh_open_stat(const struct rpcrdma_nfs3_fh *fh, struct stat *st, uint32_t *status)
{
	int fd = fh_open(fh, status);

	if (fd >= 0 && nfsd_stat_fd(fd, st)) {
		*status = err_stat();
		close(fd);
		return -1;
	}
	return fd;
}

/* A directory's handle: the fd and its attributes before the operation.
 * With subtree_check, only while the directory still lies inside the
 * export, as knfsd's nfsd_acceptable has it (a walk up to the root per
 * call, which is why it is not the default, as in knfsd). */
static int dir_open(const struct call *c, const struct rpcrdma_nfs3_fh *fh, struct stat *st,
		    uint32_t *status)
{
	int fd = fh_open_stat(fh, st, status);

	if (fd >= 0 && !S_ISDIR(st->st_mode)) {
		*status = RPCRDMA_NFS3ERR_NOTDIR;
		close(fd);
		return -1;
	}
	if (fd >= 0 && (c->flags & NFSD_SUBTREE_CHECK) && !nfsd_in_export(ex, fd)) {
		atomic_fetch_add(&counters.refused_outside, 1);
		*status = RPCRDMA_NFS3ERR_STALE;
		close(fd);
		return -1;
	}
	return fd;
}

static bool is_dot(const struct rpcrdma_nfs3_name *n)
{
	return strcmp(n->s, ".") == 0 || strcmp(n->s, "..") == 0;
}

/* A name that may be created or removed: one plain component. */
static uint32_t name_ok(const struct rpcrdma_nfs3_name *n)
{
	if (n->len == 0 || strchr(n->s, '/'))
		return RPCRDMA_NFS3ERR_ACCES;
	if (is_dot(n))
		return RPCRDMA_NFS3ERR_EXIST;
	return RPCRDMA_NFS3_OK;
}

static uint32_t err_stat(void)
{
	return nfsd_errno_stat(errno);
}

/* The child @name of @dfd as an O_PATH fd, not following a symbolic link
 * and not leaving the export's filesystem or its mount (a mount point
 * inside the export answers NFS3ERR_ACCES), nor the export: ".." of a
 * directory moved out of it answers NFS3ERR_STALE (see nfsd_in_export). */
static int child_open(int dfd, const struct stat *dst, const char *name, uint32_t *status)
{
	bool up = strcmp(name, "..") == 0;
	struct stat st;
	int fd;

	if (up && dst->st_ino == ex->root_ino && dst->st_dev == ex->dev)
		name = "."; /* the export's root is its own parent */
	fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		*status = err_stat();
		return -1;
	}
	if (nfsd_stat_fd(fd, &st)) {
		*status = err_stat();
		close(fd);
		return -1;
	}
	if (st.st_dev != ex->dev || !nfsd_on_export_mount(ex, fd)) {
		close(fd);
		atomic_fetch_add(&counters.refused_mount, 1);
		*status = RPCRDMA_NFS3ERR_ACCES;
		return -1;
	}
	/* Checked on what ".." found, not on @dfd: the directory may move
	 * between a check and the lookup. */
	if (up && !nfsd_in_export(ex, fd)) {
		close(fd);
		atomic_fetch_add(&counters.refused_outside, 1);
		*status = RPCRDMA_NFS3ERR_STALE;
		return -1;
	}
	*status = RPCRDMA_NFS3_OK;
	return fd;
}

/* SETATTR's work, also after CREATE, MKDIR, SYMLINK, MKNOD (@skip_mode:
 * the mode was given at creation). */
static uint32_t set_attrs(const struct call *c, int fd, const struct stat *st,
			  const struct rpcrdma_nfs3_sattr *sa, bool skip_mode)
{
	char path[64];
	bool lnk = S_ISLNK(st->st_mode);
	mode_t mode = sa->mode & 07777;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (sa->set_uid || sa->set_gid) {
		if (fchownat(fd, "", sa->set_uid ? sa->uid : (uid_t)-1,
			     sa->set_gid ? sa->gid : (gid_t)-1, AT_EMPTY_PATH) < 0)
			return err_stat();
		/* The chown took the set-id bits off; a mode sent with it
		 * must not put them back (knfsd's nfsd_sanitize_attrs).
		 * Set-group-ID without group execute is not an identity. */
		if (!S_ISDIR(st->st_mode)) {
			mode &= ~(mode_t)S_ISUID;
			if (mode & S_IXGRP)
				mode &= ~(mode_t)S_ISGID;
		}
	}
	if (sa->set_mode && !skip_mode && !lnk && chmod(path, mode) < 0)
		return err_stat();
	if (sa->set_size) {
		int wfd;
		int rc;

		if (S_ISDIR(st->st_mode))
			return RPCRDMA_NFS3ERR_ISDIR;
		if (!S_ISREG(st->st_mode)) {
			atomic_fetch_add(&counters.refused_special, 1);
			return RPCRDMA_NFS3ERR_INVAL;
		}
		if (sa->size > (uint64_t)INT64_MAX)
			return RPCRDMA_NFS3ERR_FBIG;
		wfd = nfsd_open_data(fd, &c->cred, O_WRONLY);
		if (wfd < 0)
			return nfsd_errno_stat(-wfd);
		rc = ftruncate(wfd, (off_t)sa->size);
		close(wfd);
		if (rc < 0)
			return err_stat();
	}
	if (sa->atime_how != RPCRDMA_DONT_CHANGE || sa->mtime_how != RPCRDMA_DONT_CHANGE) {
		struct timespec t[2];
		const uint32_t how[2] = {sa->atime_how, sa->mtime_how};
		const struct rpcrdma_nfs3_time *given[2] = {&sa->atime, &sa->mtime};

		for (int i = 0; i < 2; i++) {
			if (how[i] == RPCRDMA_SET_TO_CLIENT_TIME) {
				t[i].tv_sec = given[i]->seconds;
				t[i].tv_nsec =
				    given[i]->nseconds < 1000000000u ? given[i]->nseconds : 0;
			} else {
				t[i].tv_sec = 0;
				t[i].tv_nsec =
				    how[i] == RPCRDMA_SET_TO_SERVER_TIME ? UTIME_NOW : UTIME_OMIT;
			}
		}
		/* On the object itself, a symbolic link's too, as knfsd sets
		 * them (before, a link's times were left alone and the call
		 * answered NFS3_OK).  A kernel that does not take AT_EMPTY_PATH
		 * here (EINVAL) gets the /proc path, which would follow a link:
		 * for one of those the EINVAL stands. */
		if (utimensat(fd, "", t, AT_EMPTY_PATH) < 0 &&
		    (errno != EINVAL || lnk || utimensat(AT_FDCWD, path, t, 0) < 0))
			return err_stat();
	}
	return RPCRDMA_NFS3_OK;
}

/* NFSv3 procedures. */

static int p_null(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return 0;
}

static void getattr(struct call *c, struct rpcrdma_nfs3_fh *fh, struct rpcrdma_nfs3_attr_res *r)
{
	struct stat st;
	int fd = fh_open_stat(fh, &st, &r->status);

	(void)c;
	if (fd < 0)
		return;
	nfsd_fattr(ex, &st, &r->attr);
	close(fd);
}
PROC(p_getattr, getattr)

static void setattr(struct call *c, struct rpcrdma_nfs3_setattr_args *a,
		    struct rpcrdma_nfs3_wcc_res *r)
{
	struct stat st;
	int fd = fh_open_stat(&a->obj, &st, &r->status);

	if (fd < 0)
		return;
	if (a->check && ((uint32_t)st.st_ctim.tv_sec != a->guard_ctime.seconds ||
			 (uint32_t)st.st_ctim.tv_nsec != a->guard_ctime.nseconds)) {
		r->status = RPCRDMA_NFS3ERR_NOT_SYNC;
	} else {
		r->status = set_attrs(c, fd, &st, &a->attr, false);
	}
	nfsd_wcc(ex, &st, fd, &r->wcc);
	close(fd);
}
PROC(p_setattr, setattr)

static void lookup(struct call *c, struct rpcrdma_nfs3_diropargs *a,
		   struct rpcrdma_nfs3_lookup_res *r)
{
	struct stat dst;
	int dfd = dir_open(c, &a->dir, &dst, &r->status), fd;

	if (dfd < 0)
		return;
	if (a->name.len == 0 || strchr(a->name.s, '/')) {
		r->status = RPCRDMA_NFS3ERR_ACCES;
	} else if ((fd = child_open(dfd, &dst, a->name.s, &r->status)) >= 0) {
		r->status = nfsd_fh_make(ex, fd, &r->obj);
		nfsd_post_attr(ex, fd, &r->obj_attr);
		close(fd);
	}
	nfsd_post_attr(ex, dfd, &r->dir_attr);
	close(dfd);
}
PROC(p_lookup, lookup)

static void access3(struct call *c, struct rpcrdma_nfs3_access_args *a,
		    struct rpcrdma_nfs3_access_res *r)
{
	struct stat st;
	int fd = fh_open_stat(&a->obj, &st, &r->status);

	if (fd < 0)
		return;
	r->access = nfsd_access(&c->cred, fd, &st, a->access);
	if (c->flags & NFSD_RO)
		r->access &= ~(uint32_t)(RPCRDMA_ACCESS3_MODIFY | RPCRDMA_ACCESS3_EXTEND |
					 RPCRDMA_ACCESS3_DELETE);
	nfsd_post_attr(ex, fd, &r->attr);
	close(fd);
}
PROC(p_access, access3)

static void readlink3(struct call *c, struct rpcrdma_nfs3_fh *fh,
		      struct rpcrdma_nfs3_readlink_res *r)
{
	struct stat st;
	ssize_t n;
	int fd = fh_open(fh, &r->status);
	(void)c;

	if (fd < 0)
		return;
	if (nfsd_stat_fd(fd, &st) || !S_ISLNK(st.st_mode)) {
		r->status = RPCRDMA_NFS3ERR_INVAL;
	} else {
		n = readlinkat(fd, "", r->path.s, RPCRDMA_NFS3_PATH_MAX + 1);
		if (n < 0)
			r->status = err_stat();
		else if (n > (ssize_t)RPCRDMA_NFS3_PATH_MAX)
			r->status = RPCRDMA_NFS3ERR_NAMETOOLONG;
		else
			r->path.len = (uint32_t)n;
	}
	nfsd_post_attr(ex, fd, &r->attr);
	close(fd);
}
PROC(p_readlink, readlink3)

static void read3(struct call *c, struct rpcrdma_nfs3_read_args *a, struct rpcrdma_nfs3_read_res *r)
{
	struct stat st;
	uint32_t count = a->count < RPCRDMA_NFS3_MAXDATA ? a->count : RPCRDMA_NFS3_MAXDATA;
	size_t got = 0;
	int fd = fh_open_stat(&a->file, &st, &r->status), rfd;

	if (fd < 0)
		return;
	/* No byte lies at or beyond 2^63 - 1 (the largest file offset): a
	 * READ reaching there reads up to it only, and one starting there
	 * reads nothing and is at the end of the file, as knfsd answers.
	 * Passed on, pread would refuse the whole READ (EINVAL) because its
	 * end overflows, and the client would see NFS3ERR_INVAL. */
	if (a->offset >= (uint64_t)INT64_MAX)
		count = 0;
	else if (count > (uint64_t)INT64_MAX - a->offset)
		count = (uint32_t)((uint64_t)INT64_MAX - a->offset);
	if (!S_ISREG(st.st_mode)) {
		atomic_fetch_add(&counters.refused_special, !S_ISDIR(st.st_mode));
		r->status = S_ISDIR(st.st_mode) ? RPCRDMA_NFS3ERR_ISDIR : RPCRDMA_NFS3ERR_INVAL;
		goto out;
	}
	rfd = nfsd_open_data(fd, &c->cred, O_RDONLY);
	if (rfd < 0) {
		r->status = nfsd_errno_stat(-rfd);
		goto out;
	}
	/* Given back by free_read, once the reply (over RDMA, the Write into
	 * the client's chunk) no longer needs it.  A kept buffer only where
	 * the data goes out from it (TCP copies it into its record, and the
	 * library copies smaller results), else one of its own. */
	r->data = c->rdma && count >= NFSD_READ_BUF_MIN ? nfsd_read_buf_get() : NULL;
	if (!r->data)
		r->data = malloc(count ? count : 1);
	if (!r->data) {
		r->status = nfsd_errno_stat(ENOMEM);
		close(rfd);
		goto out;
	}
	while (got < count) {
		ssize_t n = pread(rfd, r->data + got, count - got, (off_t)(a->offset + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r->status = err_stat();
			break;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(rfd);
	r->count = r->len = (uint32_t)got;
	if (nfsd_stat_fd(fd, &st) == 0)
		r->eof = a->offset + got >= (uint64_t)st.st_size;
out:
	nfsd_post_attr(ex, fd, &r->attr);
	close(fd);
}
PROC(p_read, read3)

static void free_read(void *res)
{
	struct rpcrdma_nfs3_read_res *r = res;

	if (!nfsd_read_buf_put(r->data))
		free(r->data);
	r->data = NULL;
}

/* WRITE's arguments with room for the data (the library allocates them),
 * used only when the call cannot lend them. */
struct write_args {
	struct rpcrdma_nfs3_write_args a;
	uint8_t buf[RPCRDMA_NFS3_MAXDATA];
};

static int write_args_dec(struct rpcrdma_xdr_stream *x, void *o)
{
	struct write_args *w = o;
	struct rpcrdma_xdr_stream start = *x;
	int rc;

	/* Written to the file from where the transport put them (a Read
	 * chunk's landing buffer): no copy. */
	w->a.data = NULL;
	w->a.data_max = sizeof(w->buf);
	rc = rpcrdma_nfs3_decode_args(RPCRDMA_NFS3_WRITE)(x, &w->a);
	if (rc != -ERANGE)
		return rc;
	*x = start;
	w->a.data = w->buf;
	w->a.data_max = sizeof(w->buf);
	return rpcrdma_nfs3_decode_args(RPCRDMA_NFS3_WRITE)(x, &w->a);
}

static void write3(struct call *c, struct write_args *w, struct rpcrdma_nfs3_write_res *r)
{
	struct rpcrdma_nfs3_write_args *a = &w->a;
	struct stat st;
	size_t done = 0;
	int fd = fh_open_stat(&a->file, &st, &r->status), wfd;

	if (fd < 0)
		return;
	if (a->count != a->len) {
		/* The decoder refuses these (GARBAGE_ARGS); never trusted. */
		r->status = RPCRDMA_NFS3ERR_INVAL;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		atomic_fetch_add(&counters.refused_special, !S_ISDIR(st.st_mode));
		r->status = S_ISDIR(st.st_mode) ? RPCRDMA_NFS3ERR_ISDIR : RPCRDMA_NFS3ERR_INVAL;
		goto out;
	}
	if (a->offset > (uint64_t)INT64_MAX - a->count) {
		r->status = RPCRDMA_NFS3ERR_FBIG;
		goto out;
	}
	wfd = nfsd_open_data(fd, &c->cred, O_WRONLY);
	if (wfd < 0) {
		r->status = nfsd_errno_stat(-wfd);
		goto out;
	}
	while (done < a->count) {
		ssize_t n = pwrite(wfd, a->data + done, a->count - done, (off_t)(a->offset + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r->status = n < 0 ? err_stat() : RPCRDMA_NFS3ERR_IO;
			break;
		}
		done += (size_t)n;
	}
	if (r->status == RPCRDMA_NFS3_OK) {
		r->committed = a->stable;
		if (a->stable == RPCRDMA_FILE_SYNC && fsync(wfd) < 0)
			r->status = err_stat();
		else if (a->stable == RPCRDMA_DATA_SYNC && fdatasync(wfd) < 0)
			r->status = err_stat();
	}
	close(wfd);
	r->count = (uint32_t)done;
	memcpy(r->verf, write_verf, sizeof(r->verf));
out:
	nfsd_wcc(ex, &st, fd, &r->wcc);
	close(fd);
}
PROC(p_write, write3)

/*
 * The end of every creating procedure: the attributes asked, then the
 * handle and attributes of @fd, the object itself (never looked up again
 * by name: by then the name may be another's file, swapped in by a
 * RENAME, and the client would write its data there).
 */
static void created(const struct call *c, int fd, const struct rpcrdma_nfs3_sattr *sa,
		    bool skip_mode, struct rpcrdma_nfs3_create_res *r)
{
	struct rpcrdma_nfs3_sattr keep;
	struct stat st;

	r->status = RPCRDMA_NFS3_OK;
	if (sa && nfsd_stat_fd(fd, &st) == 0) {
		/* What knfsd's nfsd_create_setattr drops, so that a call does
		 * not make its object and then answer an error: an owner or
		 * group from anyone but root (a client may send the
		 * directory's group, as IRIX did for setgid directories), and
		 * a size for anything but a regular file.  Before, CREATE with
		 * a foreign gid answered NFS3ERR_PERM and MKDIR with a size
		 * NFS3ERR_ISDIR, each leaving what it made behind. */
		keep = *sa;
		if (c->cred.uid != 0)
			keep.set_uid = keep.set_gid = false;
		if (!S_ISREG(st.st_mode))
			keep.set_size = false;
		r->status = set_attrs(c, fd, &st, &keep, skip_mode);
	}
	if (r->status == RPCRDMA_NFS3_OK) {
		r->has_obj = nfsd_fh_make(ex, fd, &r->obj) == RPCRDMA_NFS3_OK;
		nfsd_post_attr(ex, fd, &r->obj_attr);
	}
}

/*
 * MKDIR, SYMLINK and MKNOD return no descriptor: the object is opened by
 * its name, and is taken for the one just made only if it is of the type
 * made and owned by the caller (a new object is owned by the filesystem
 * uid that made it).  Otherwise someone renamed another object to the
 * name in between: the call succeeded, but the answer carries no handle
 * and no attributes are set, so the caller never acts on another's file
 * (counted, refused_swapped).  An object of the caller's own swapped in by
 * the caller's own uid is not told apart; nor, for root, another object
 * of root's.
 */
static void made_by_name(int dfd, const struct stat *dst, const char *name, mode_t type,
			 const struct call *c, const struct rpcrdma_nfs3_sattr *sa,
			 struct rpcrdma_nfs3_create_res *r)
{
	struct stat st;
	uint32_t status;
	int fd = child_open(dfd, dst, name, &status);

	r->status = RPCRDMA_NFS3_OK;
	if (fd < 0)
		return;
	if (nfsd_stat_fd(fd, &st) == 0 && (st.st_mode & S_IFMT) == type && st.st_uid == c->cred.uid)
		created(c, fd, sa, true, r);
	else
		atomic_fetch_add(&counters.refused_swapped, 1);
	close(fd);
}

static void create3(struct call *c, struct rpcrdma_nfs3_create_args *a,
		    struct rpcrdma_nfs3_create_res *r)
{
	struct stat dst;
	int dfd = dir_open(c, &a->where.dir, &dst, &r->status), fd;
	/* No mode asked is mode 0, as knfsd's nfsd_create_locked makes it
	 * (before, 0644 here, 0755 for MKDIR, 0644 for MKNOD). */
	mode_t mode = a->attr.set_mode ? a->attr.mode & 07777 : 0;
	/* Always O_EXCL: a name that exists is never opened here (it may be
	 * a FIFO, whose open blocks, or a device). */
	int flags = O_CREAT | O_EXCL | O_RDONLY | O_NOFOLLOW | O_CLOEXEC;
	struct rpcrdma_nfs3_sattr sa = a->attr;

	if (dfd < 0)
		return;
	r->status = name_ok(&a->where.name);
	if (r->status != RPCRDMA_NFS3_OK)
		goto out;
	if (a->mode == RPCRDMA_EXCLUSIVE) {
		/* The verifier lives in the times until the client's SETATTR
		 * (RFC 1813 section 3.3.8), so a retransmission succeeds. */
		memset(&sa, 0, sizeof(sa));
		sa.atime_how = sa.mtime_how = RPCRDMA_SET_TO_CLIENT_TIME;
		memcpy(&sa.atime.seconds, a->verf, 4);
		memcpy(&sa.mtime.seconds, a->verf + 4, 4);
		sa.atime.seconds &= 0x7fffffffu;
		sa.mtime.seconds &= 0x7fffffffu;
		/* No attributes come with EXCLUSIVE: mode 0, as knfsd, until
		 * the client's SETATTR; meanwhile its owner still reads and
		 * writes it (nfsd_open_data's override), no one else does. */
		mode = 0;
	}
	fd = openat(dfd, a->where.name.s, flags, mode);
	if (fd < 0 && errno == EEXIST && a->mode == RPCRDMA_EXCLUSIVE) {
		struct stat st;
		int efd = child_open(dfd, &dst, a->where.name.s, &r->status);

		/* The retransmission of our own CREATE only: knfsd also asks
		 * for an empty file, and the caller's (mapped) uid, which made
		 * it, keeps another's file with those times from matching
		 * (before, uid 1000 got a handle to uid 2000's 13-byte file). */
		if (efd >= 0 && nfsd_stat_fd(efd, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_size == 0 && st.st_uid == c->cred.uid &&
		    (uint32_t)st.st_atim.tv_sec == sa.atime.seconds &&
		    (uint32_t)st.st_mtim.tv_sec == sa.mtime.seconds) {
			created(c, efd, NULL, true, r);
			close(efd);
			goto out;
		}
		close_fd(efd);
		r->status = RPCRDMA_NFS3ERR_EXIST;
		goto out;
	}
	if (fd < 0 && errno == EEXIST && a->mode == RPCRDMA_UNCHECKED) {
		/* UNCHECKED on a name that exists: a regular file is used as it
		 * is, only its size set if asked (as knfsd); anything else is
		 * NFS3ERR_EXIST. */
		struct rpcrdma_nfs3_sattr size_only;
		struct stat st;
		int efd = child_open(dfd, &dst, a->where.name.s, &r->status);
		bool reg = efd >= 0 && nfsd_stat_fd(efd, &st) == 0 && S_ISREG(st.st_mode);

		if (efd < 0)
			goto out;
		if (!reg) {
			close(efd);
			atomic_fetch_add(&counters.refused_special, 1);
			r->status = RPCRDMA_NFS3ERR_EXIST;
			goto out;
		}
		memset(&size_only, 0, sizeof(size_only));
		size_only.set_size = sa.set_size;
		size_only.size = sa.size;
		created(c, efd, &size_only, true, r);
		close(efd);
		goto out;
	}
	if (fd < 0) {
		r->status = err_stat();
		goto out;
	}
	created(c, fd, &sa, a->mode != RPCRDMA_EXCLUSIVE, r);
	close(fd);
out:
	nfsd_wcc(ex, &dst, dfd, &r->dir_wcc);
	close(dfd);
}
PROC(p_create, create3)

static void mkdir3(struct call *c, struct rpcrdma_nfs3_mkdir_args *a,
		   struct rpcrdma_nfs3_create_res *r)
{
	struct stat dst;
	int dfd = dir_open(c, &a->where.dir, &dst, &r->status);

	if (dfd < 0)
		return;
	r->status = name_ok(&a->where.name);
	if (r->status == RPCRDMA_NFS3_OK) {
		if (mkdirat(dfd, a->where.name.s, a->attr.set_mode ? a->attr.mode & 07777 : 0) < 0)
			r->status = err_stat();
		else
			made_by_name(dfd, &dst, a->where.name.s, S_IFDIR, c, &a->attr, r);
	}
	nfsd_wcc(ex, &dst, dfd, &r->dir_wcc);
	close(dfd);
}
PROC(p_mkdir, mkdir3)

static void symlink3(struct call *c, struct rpcrdma_nfs3_symlink_args *a,
		     struct rpcrdma_nfs3_create_res *r)
{
	struct stat dst;
	int dfd = dir_open(c, &a->where.dir, &dst, &r->status);

	if (dfd < 0)
		return;
	r->status = name_ok(&a->where.name);
	if (r->status == RPCRDMA_NFS3_OK && a->target.len == 0)
		r->status = RPCRDMA_NFS3ERR_INVAL;
	if (r->status == RPCRDMA_NFS3_OK) {
		/* The target is only text: it is never followed here. */
		if (symlinkat(a->target.s, dfd, a->where.name.s) < 0)
			r->status = err_stat();
		else
			made_by_name(dfd, &dst, a->where.name.s, S_IFLNK, c, &a->attr, r);
	}
	nfsd_wcc(ex, &dst, dfd, &r->dir_wcc);
	close(dfd);
}
PROC(p_symlink, symlink3)

static void mknod3(struct call *c, struct rpcrdma_nfs3_mknod_args *a,
		   struct rpcrdma_nfs3_create_res *r)
{
	struct stat dst;
	mode_t mode = a->attr.set_mode ? a->attr.mode & 07777 : 0;
	dev_t dev = 0;
	int dfd = dir_open(c, &a->where.dir, &dst, &r->status);

	if (dfd < 0)
		return;
	r->status = name_ok(&a->where.name);
	switch (a->type) {
	case RPCRDMA_NF3CHR:
	case RPCRDMA_NF3BLK:
		mode |= a->type == RPCRDMA_NF3CHR ? S_IFCHR : S_IFBLK;
		dev = makedev(a->major, a->minor);
		/* The kernel's device numbers hold a 12-bit major and a
		 * 20-bit minor; knfsd answers NFS3ERR_INVAL to any that do
		 * not fit rather than make another device (mknod(2) would
		 * take the low bits). */
		if (r->status == RPCRDMA_NFS3_OK && (a->major > 0xfffu || a->minor > 0xfffffu))
			r->status = RPCRDMA_NFS3ERR_INVAL;
		break;
	case RPCRDMA_NF3SOCK:
		mode |= S_IFSOCK;
		break;
	case RPCRDMA_NF3FIFO:
		mode |= S_IFIFO;
		break;
	default:
		if (r->status == RPCRDMA_NFS3_OK)
			r->status = RPCRDMA_NFS3ERR_BADTYPE;
	}
	if (r->status == RPCRDMA_NFS3_OK) {
		if (mknodat(dfd, a->where.name.s, mode, dev) < 0)
			r->status = err_stat();
		else
			made_by_name(dfd, &dst, a->where.name.s, mode & S_IFMT, c, &a->attr, r);
	}
	nfsd_wcc(ex, &dst, dfd, &r->dir_wcc);
	close(dfd);
}
PROC(p_mknod, mknod3)

static void unlink_common(struct call *c, struct rpcrdma_nfs3_diropargs *a,
			  struct rpcrdma_nfs3_wcc_res *r, int flags)
{
	struct stat dst;
	int dfd = dir_open(c, &a->dir, &dst, &r->status);

	if (dfd < 0)
		return;
	/* As knfsd's nfsd_unlink answers (before, "." was NFS3ERR_INVAL
	 * and ".." NFS3ERR_NOTEMPTY, rmdir(2)'s errors). */
	if (a->name.len == 0 || strchr(a->name.s, '/') || is_dot(&a->name))
		r->status = RPCRDMA_NFS3ERR_ACCES;
	if (r->status == RPCRDMA_NFS3_OK) {
		if (unlinkat(dfd, a->name.s, flags) < 0)
			r->status = err_stat();
	}
	nfsd_wcc(ex, &dst, dfd, &r->wcc);
	close(dfd);
}

static void remove3(struct call *c, struct rpcrdma_nfs3_diropargs *a,
		    struct rpcrdma_nfs3_wcc_res *r)
{
	unlink_common(c, a, r, 0);
}
PROC(p_remove, remove3)

static void rmdir3(struct call *c, struct rpcrdma_nfs3_diropargs *a, struct rpcrdma_nfs3_wcc_res *r)
{
	unlink_common(c, a, r, AT_REMOVEDIR);
}
PROC(p_rmdir, rmdir3)

static void rename3(struct call *c, struct rpcrdma_nfs3_rename_args *a,
		    struct rpcrdma_nfs3_rename_res *r)
{
	struct stat fst, tst;
	int ffd = dir_open(c, &a->from.dir, &fst, &r->status), tfd = -1;

	if (ffd < 0)
		return;
	tfd = dir_open(c, &a->to.dir, &tst, &r->status);
	if (tfd < 0) {
		nfsd_wcc(ex, &fst, ffd, &r->from_wcc);
		close(ffd);
		return;
	}
	/* As knfsd's nfsd_rename answers "." or ".." on either side
	 * (before, NFS3ERR_EXIST). */
	r->status = name_ok(&a->from.name);
	if (r->status == RPCRDMA_NFS3_OK)
		r->status = name_ok(&a->to.name);
	if (r->status == RPCRDMA_NFS3ERR_EXIST)
		r->status = RPCRDMA_NFS3ERR_PERM;
	if (r->status == RPCRDMA_NFS3_OK) {
		if (renameat(ffd, a->from.name.s, tfd, a->to.name.s) < 0)
			r->status = err_stat();
	}
	nfsd_wcc(ex, &fst, ffd, &r->from_wcc);
	nfsd_wcc(ex, &tst, tfd, &r->to_wcc);
	close(ffd);
	close(tfd);
}
PROC(p_rename, rename3)

static void link3(struct call *c, struct rpcrdma_nfs3_link_args *a, struct rpcrdma_nfs3_link_res *r)
{
	struct stat dst, st;
	char path[64];
	int dfd = dir_open(c, &a->link.dir, &dst, &r->status), fd;

	/* knfsd's nfsd_link checks in this order: the directory, the file,
	 * that the file is no directory (NFS3ERR_ISDIR; before, linkat's
	 * EPERM made it NFS3ERR_PERM), then the name. */
	if (dfd < 0)
		return;
	fd = fh_open_stat(&a->file, &st, &r->status);
	if (fd < 0) {
		nfsd_wcc(ex, &dst, dfd, &r->dir_wcc);
		close(dfd);
		return;
	}
	r->status = S_ISDIR(st.st_mode) ? RPCRDMA_NFS3ERR_ISDIR : name_ok(&a->link.name);
	if (r->status == RPCRDMA_NFS3_OK) {
		/* Through /proc: linkat(AT_EMPTY_PATH) would need privilege,
		 * and we act as the caller. */
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (linkat(AT_FDCWD, path, dfd, a->link.name.s, AT_SYMLINK_FOLLOW) < 0)
			r->status = err_stat();
	}
	nfsd_post_attr(ex, fd, &r->file_attr);
	nfsd_wcc(ex, &dst, dfd, &r->dir_wcc);
	close(fd);
	close(dfd);
}
PROC(p_link, link3)

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static uint32_t xdr_len(uint32_t n)
{
	return 4 + ((n + 3) & ~3u);
}

/*
 * READDIR and READDIRPLUS.  Cookies are the directory's own offsets
 * (getdents64's d_off), so a listing resumes where it stopped; the reply
 * stays within the client's count (and READDIRPLUS's dircount).
 */
static void readdir_common(struct call *c, struct rpcrdma_nfs3_readdir_args *a,
			   struct rpcrdma_nfs3_readdir_res *r, bool plus)
{
	struct stat dst;
	uint8_t buf[16384];
	uint32_t used, dirbytes = 0;
	/* The reply is at most what FSINFO's rtmax promises and the server's
	 * records carry (max_record, main.c), whatever the client asks, as
	 * knfsd clamps it to its largest payload: a larger count made a reply
	 * of up to 1.8 MiB (4096 entries with long names), which no TCP
	 * client with the usual 1 MiB record limit could take. */
	uint32_t count = a->count < RPCRDMA_NFS3_MAXDATA ? a->count : RPCRDMA_NFS3_MAXDATA;
	bool full = false;
	int dfd = dir_open(c, &a->dir, &dst, &r->status), iofd;

	r->plus = plus;
	if (dfd < 0)
		return;
	/* dir attributes, verifier, end of list, eof */
	used = 4 + 84 + 8 + 4 + 4;
	/* RFC 1813: count bounds the whole READDIR3resok, its fixed part
	 * too.  Before, a count below that at the end of the directory (no
	 * entry to leave out) answered an empty NFS3_OK larger than the
	 * count, which a client sizing its buffer (or, over RDMA, its Reply
	 * chunk) by the count could not take. */
	if (used > count) {
		r->status = RPCRDMA_NFS3ERR_TOOSMALL;
		goto out;
	}
	iofd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (iofd < 0) {
		r->status = err_stat();
		goto out;
	}
	if (lseek(iofd, (off_t)a->cookie, SEEK_SET) < 0) {
		r->status = RPCRDMA_NFS3ERR_BAD_COOKIE;
		close(iofd);
		goto out;
	}
	/* Freed by free_readdir. */
	r->entries = calloc(RPCRDMA_NFS3_DIR_MAX, sizeof(*r->entries));
	if (!r->entries) {
		r->status = nfsd_errno_stat(ENOMEM);
		close(iofd);
		goto out;
	}
	while (!full) {
		long n = syscall(SYS_getdents64, iofd, buf, sizeof(buf));

		if (n < 0) {
			r->status = err_stat();
			break;
		}
		if (n == 0) {
			r->eof = true;
			break;
		}
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (struct linux_dirent64 *)(void *)(buf + off);
			struct rpcrdma_nfs3_entry *e = &r->entries[r->n];
			uint32_t nl = (uint32_t)strlen(d->d_name), esz, dsz;

			off += d->d_reclen;
			if (nl > RPCRDMA_NFS3_NAME_MAX)
				continue;
			dsz = 8 + xdr_len(nl) + 8;
			esz = 4 + dsz + (plus ? 4 + 84 + 4 + 4 + RPCRDMA_NFS3_FHSIZE : 0);
			if (r->n == RPCRDMA_NFS3_DIR_MAX || used + esz > count ||
			    (plus && a->dircount && dirbytes + dsz > a->dircount)) {
				full = true;
				break;
			}
			used += esz;
			dirbytes += dsz;
			e->fileid = d->d_ino;
			e->cookie = (uint64_t)d->d_off;
			e->name.len = nl;
			memcpy(e->name.s, d->d_name, nl + 1);
			if (plus && !is_dot(&e->name)) {
				uint32_t st;
				int fd = child_open(dfd, &dst, d->d_name, &st);

				if (fd >= 0) {
					nfsd_post_attr(ex, fd, &e->attr);
					e->has_fh = nfsd_fh_make(ex, fd, &e->fh) == RPCRDMA_NFS3_OK;
					close(fd);
				}
			}
			r->n++;
		}
	}
	close(iofd);
	if (r->status == RPCRDMA_NFS3_OK && r->n == 0 && !r->eof)
		r->status = RPCRDMA_NFS3ERR_TOOSMALL;
out:
	nfsd_post_attr(ex, dfd, &r->dir_attr);
	close(dfd);
}

static void readdir3(struct call *c, struct rpcrdma_nfs3_readdir_args *a,
		     struct rpcrdma_nfs3_readdir_res *r)
{
	readdir_common(c, a, r, false);
}
PROC(p_readdir, readdir3)

static void readdirplus3(struct call *c, struct rpcrdma_nfs3_readdir_args *a,
			 struct rpcrdma_nfs3_readdir_res *r)
{
	readdir_common(c, a, r, true);
}
PROC(p_readdirplus, readdirplus3)

static void free_readdir(void *res)
{
	struct rpcrdma_nfs3_readdir_res *r = res;

	free(r->entries);
	r->entries = NULL;
}

static void fsstat3(struct call *c, struct rpcrdma_nfs3_fh *fh, struct rpcrdma_nfs3_fsstat_res *r)
{
	struct statfs sf;
	int fd = fh_open(fh, &r->status);

	(void)c;
	if (fd < 0)
		return;
	if (fstatfs(fd, &sf) < 0) {
		r->status = err_stat();
	} else {
		r->tbytes = (uint64_t)sf.f_blocks * (uint64_t)sf.f_bsize;
		r->fbytes = (uint64_t)sf.f_bfree * (uint64_t)sf.f_bsize;
		r->abytes = (uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize;
		r->tfiles = sf.f_files;
		r->ffiles = sf.f_ffree;
		r->afiles = sf.f_ffree;
	}
	nfsd_post_attr(ex, fd, &r->attr);
	close(fd);
}
PROC(p_fsstat, fsstat3)

static void fsinfo3(struct call *c, struct rpcrdma_nfs3_fh *fh, struct rpcrdma_nfs3_fsinfo_res *r)
{
	int fd = fh_open(fh, &r->status);

	(void)c;
	if (fd < 0)
		return;
	r->rtmax = r->wtmax = RPCRDMA_NFS3_MAXDATA;
	r->rtpref = r->wtpref = RPCRDMA_NFS3_MAXDATA;
	r->rtmult = r->wtmult = 4096;
	r->dtpref = 65536;
	r->maxfilesize = (uint64_t)INT64_MAX;
	r->time_delta.nseconds = 1;
	r->properties = RPCRDMA_FSF3_LINK | RPCRDMA_FSF3_SYMLINK | RPCRDMA_FSF3_HOMOGENEOUS |
			RPCRDMA_FSF3_CANSETTIME;
	nfsd_post_attr(ex, fd, &r->attr);
	close(fd);
}
PROC(p_fsinfo, fsinfo3)

static void pathconf3(struct call *c, struct rpcrdma_nfs3_fh *fh,
		      struct rpcrdma_nfs3_pathconf_res *r)
{
	int fd = fh_open(fh, &r->status);

	(void)c;
	if (fd < 0)
		return;
	r->linkmax = 65000;
	r->name_max = RPCRDMA_NFS3_NAME_MAX;
	r->no_trunc = true;
	r->chown_restricted = true;
	r->case_insensitive = false;
	r->case_preserving = true;
	nfsd_post_attr(ex, fd, &r->attr);
	close(fd);
}
PROC(p_pathconf, pathconf3)

static void commit3(struct call *c, struct rpcrdma_nfs3_commit_args *a,
		    struct rpcrdma_nfs3_commit_res *r)
{
	struct stat st;
	int fd = fh_open_stat(&a->file, &st, &r->status), sfd;

	if (fd < 0)
		return;
	if (!S_ISREG(st.st_mode)) {
		/* As knfsd's fh_verify for a regular file answers. */
		atomic_fetch_add(&counters.refused_special, !S_ISDIR(st.st_mode));
		r->status = S_ISDIR(st.st_mode) ? RPCRDMA_NFS3ERR_ISDIR : RPCRDMA_NFS3ERR_INVAL;
	} else {
		/* As the caller, with write access or owning the file, as
		 * knfsd's nfsd_commit asks (NFSD_MAY_WRITE, with the owner
		 * override); before, a reader could COMMIT too. */
		sfd = nfsd_open_data(fd, &c->cred, O_WRONLY);
		if (sfd < 0 || fsync(sfd) < 0)
			r->status = sfd < 0 ? nfsd_errno_stat(-sfd) : err_stat();
		close_fd(sfd);
		memcpy(r->verf, write_verf, sizeof(r->verf));
	}
	nfsd_wcc(ex, &st, fd, &r->wcc);
	close(fd);
}
PROC(p_commit, commit3)

/*
 * Names in arguments: knfsd's decoder (svcxdr_decode_filename3,
 * fs/nfsd/nfs3xdr.c) takes none that is empty or holds a '/' (or a NUL,
 * which the library's string decoder refuses already), so such a call is
 * answered GARBAGE_ARGS and never runs.  Before, we answered
 * NFS3ERR_ACCES.
 */
static int name_arg(const struct rpcrdma_nfs3_diropargs *d)
{
	return d->name.len == 0 || memchr(d->name.s, '/', d->name.len) ? RPCRDMA_ERR_BAD_VALUE : 0;
}

#define NAMED_ARGS_DEC(fn, proc, type, ...)                                                        \
	static int fn(struct rpcrdma_xdr_stream *x, void *o)                                       \
	{                                                                                          \
		const type *a = o;                                                                 \
		const struct rpcrdma_nfs3_diropargs *names[] = {__VA_ARGS__};                      \
		int rc = rpcrdma_nfs3_decode_args(proc)(x, o);                                     \
                                                                                                   \
		for (size_t i = 0; rc == 0 && i < sizeof(names) / sizeof(names[0]); i++)           \
			rc = name_arg(names[i]);                                                   \
		return rc;                                                                         \
	}

NAMED_ARGS_DEC(lookup_args_dec, RPCRDMA_NFS3_LOOKUP, struct rpcrdma_nfs3_diropargs, a)
NAMED_ARGS_DEC(remove_args_dec, RPCRDMA_NFS3_REMOVE, struct rpcrdma_nfs3_diropargs, a)
NAMED_ARGS_DEC(rmdir_args_dec, RPCRDMA_NFS3_RMDIR, struct rpcrdma_nfs3_diropargs, a)
NAMED_ARGS_DEC(create_args_dec, RPCRDMA_NFS3_CREATE, struct rpcrdma_nfs3_create_args, &a->where)
NAMED_ARGS_DEC(mkdir_args_dec, RPCRDMA_NFS3_MKDIR, struct rpcrdma_nfs3_mkdir_args, &a->where)
NAMED_ARGS_DEC(symlink_args_dec, RPCRDMA_NFS3_SYMLINK, struct rpcrdma_nfs3_symlink_args, &a->where)
NAMED_ARGS_DEC(mknod_args_dec, RPCRDMA_NFS3_MKNOD, struct rpcrdma_nfs3_mknod_args, &a->where)
NAMED_ARGS_DEC(rename_args_dec, RPCRDMA_NFS3_RENAME, struct rpcrdma_nfs3_rename_args, &a->from,
	       &a->to)
NAMED_ARGS_DEC(link_args_dec, RPCRDMA_NFS3_LINK, struct rpcrdma_nfs3_link_args, &a->link)

void nfsd_nfs3_procs(struct rpcrdma_svc_proc procs[RPCRDMA_NFS3_NPROCS], bool rdma)
{
	static const rpcrdma_svc_fn fns[RPCRDMA_NFS3_NPROCS] = {
	    p_null,   p_getattr, p_setattr,  p_lookup, p_access,  p_readlink,
	    p_read,   p_write,   p_create,   p_mkdir,  p_symlink, p_mknod,
	    p_remove, p_rmdir,   p_rename,   p_link,   p_readdir, p_readdirplus,
	    p_fsstat, p_fsinfo,  p_pathconf, p_commit,
	};
	static const rpcrdma_svc_fn rdma_fns[RPCRDMA_NFS3_NPROCS] = {
	    p_null,	    p_getattr_rdma,  p_setattr_rdma,	 p_lookup_rdma,
	    p_access_rdma,  p_readlink_rdma, p_read_rdma,	 p_write_rdma,
	    p_create_rdma,  p_mkdir_rdma,    p_symlink_rdma,	 p_mknod_rdma,
	    p_remove_rdma,  p_rmdir_rdma,    p_rename_rdma,	 p_link_rdma,
	    p_readdir_rdma, p_readdirplus_rdma, p_fsstat_rdma,	 p_fsinfo_rdma,
	    p_pathconf_rdma, p_commit_rdma,
	};

	for (uint32_t i = 0; i < RPCRDMA_NFS3_NPROCS; i++) {
		procs[i].fn = rdma ? rdma_fns[i] : fns[i];
		procs[i].decode_args = rpcrdma_nfs3_decode_args(i);
		procs[i].args_size = rpcrdma_nfs3_args_size(i);
		procs[i].encode_res = rpcrdma_nfs3_encode_res(i);
		procs[i].res_size = rpcrdma_nfs3_res_size(i);
		procs[i].free_res = NULL;
	}
	procs[RPCRDMA_NFS3_WRITE].decode_args = write_args_dec;
	procs[RPCRDMA_NFS3_LOOKUP].decode_args = lookup_args_dec;
	procs[RPCRDMA_NFS3_REMOVE].decode_args = remove_args_dec;
	procs[RPCRDMA_NFS3_RMDIR].decode_args = rmdir_args_dec;
	procs[RPCRDMA_NFS3_CREATE].decode_args = create_args_dec;
	procs[RPCRDMA_NFS3_MKDIR].decode_args = mkdir_args_dec;
	procs[RPCRDMA_NFS3_SYMLINK].decode_args = symlink_args_dec;
	procs[RPCRDMA_NFS3_MKNOD].decode_args = mknod_args_dec;
	procs[RPCRDMA_NFS3_RENAME].decode_args = rename_args_dec;
	procs[RPCRDMA_NFS3_LINK].decode_args = link_args_dec;
	procs[RPCRDMA_NFS3_WRITE].args_size = sizeof(struct write_args);
	procs[RPCRDMA_NFS3_READ].free_res = free_read;
	procs[RPCRDMA_NFS3_READDIR].free_res = free_readdir;
	procs[RPCRDMA_NFS3_READDIRPLUS].free_res = free_readdir;
}

/* MOUNT v3. */

static bool same_path(const char *asked, const char *exported)
{
	size_t a = strlen(asked), e = strlen(exported);

	while (a > 1 && asked[a - 1] == '/')
		a--;
	return a == e && memcmp(asked, exported, a) == 0;
}

static int m_mnt(struct rpcrdma_svc_req *req, void *args, void *res)
{
	const struct rpcrdma_nfs3_path *p = args;
	struct rpcrdma_mount3_mnt_res *r = res;

	/* MOUNT runs over TCP only: a host the list refuses, or a secure
	 * entry's request from an unprivileged port, gets MNT3ERR_ACCES,
	 * as from knfsd's mountd. */
	if (!nfsd_admit(req, false)) {
		r->status = RPCRDMA_NFS3ERR_ACCES;
		return 0;
	}
	if (!same_path(p->s, ex->path)) {
		r->status = RPCRDMA_NFS3ERR_NOENT; /* MNT3ERR_NOENT */
		return 0;
	}
	r->status = nfsd_fh_make(ex, ex->root_fd, &r->fh);
	r->nflavors = 2;
	r->flavors[0] = RPCRDMA_AUTH_SYS;
	r->flavors[1] = RPCRDMA_AUTH_NONE;
	return 0;
}

static int m_void(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req;
	(void)args;
	(void)res;
	return 0;
}

static int m_export(struct rpcrdma_svc_req *req, void *args, void *res)
{
	struct rpcrdma_mount3_export_res *r = res;

	(void)req;
	(void)args;
	r->n = 1;
	r->dir.len = (uint32_t)strlen(ex->path);
	memcpy(r->dir.s, ex->path, r->dir.len + 1);
	return 0;
}

void nfsd_mount3_procs(struct rpcrdma_svc_proc procs[RPCRDMA_MOUNT3_NPROCS])
{
	const struct rpcrdma_svc_proc table[RPCRDMA_MOUNT3_NPROCS] = {
	    [RPCRDMA_MOUNT3_NULL] = {m_void, NULL, 0, NULL, 0, NULL},
	    [RPCRDMA_MOUNT3_MNT] = {m_mnt, rpcrdma_mount3_xdr_path_dec,
				    sizeof(struct rpcrdma_nfs3_path),
				    rpcrdma_mount3_xdr_mnt_res_enc,
				    sizeof(struct rpcrdma_mount3_mnt_res), NULL},
	    [RPCRDMA_MOUNT3_DUMP] = {m_void, NULL, 0, rpcrdma_mount3_xdr_empty_list_enc, 0, NULL},
	    [RPCRDMA_MOUNT3_UMNT] = {m_void, rpcrdma_mount3_xdr_path_dec,
				     sizeof(struct rpcrdma_nfs3_path), NULL, 0, NULL},
	    [RPCRDMA_MOUNT3_UMNTALL] = {m_void, NULL, 0, NULL, 0, NULL},
	    [RPCRDMA_MOUNT3_EXPORT] = {m_export, NULL, 0, rpcrdma_mount3_xdr_export_res_enc,
				       sizeof(struct rpcrdma_mount3_export_res), NULL},
	};

	memcpy(procs, table, sizeof(table));
}
