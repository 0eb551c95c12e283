/*
 * Attacks on rpcrdma-nfsd, one class per case, each a raw client with a
 * crafted AUTH_SYS credential (or none) over RDMA (ofi) or TCP.  Every
 * case checks that the server refused as specified, then that a
 * well-behaved client is still served within a few seconds.  The server(s)
 * and the files the cases expect are set up by nfsd-attack (same folder).
 *
 *   identity  uid 0, gid 0, (uid_t)-1, (gid_t)-1 and gid 0 among the
 *             groups, and AUTH_NONE: none reads a root-only 0600 file or a
 *             0640 root:root one; what they create is owned by the
 *             anonymous ids (by the client's ids where those are not
 *             squashed); no chmod or chown of another's file, no chown of
 *             one's own to a group one is not in, no setgid bit for a
 *             group one is not in, no device node
 *   squash    --all-squash --anonuid 4321 --anongid 4322: every user
 *             creates as 4321:4322
 *   modes     a server under umask 027: CREATE, MKDIR and MKNOD give the
 *             mode asked (knfsd runs with umask 0); another's WRITE or
 *             truncation, and a change of group, take the set-id bits off;
 *             SETATTR sets a symbolic link's own times
 *   perms     knfsd's rules for data (nfsd_permission): a file's owner
 *             reads, writes, truncates and commits it whatever its mode (a
 *             file created 0444 and then written); a READ the mode refuses
 *             passes when the caller may execute the file (0711), unless
 *             a POSIX ACL could deny that; nobody else gets more: another's
 *             0444 file cannot be written, truncated or committed, nor
 *             another's 0700 file read
 *   errors    the answers knfsd gives: a name that is empty or holds a '/'
 *             is GARBAGE_ARGS in every procedure that takes one; REMOVE and
 *             RMDIR of "." or ".." NFS3ERR_ACCES, RENAME to or from them
 *             NFS3ERR_PERM, COMMIT and LINK of a directory NFS3ERR_ISDIR,
 *             MKNOD of a device number that does not fit NFS3ERR_INVAL
 *   sizes     READDIR and READDIRPLUS with a count of 0xffffffff answer at
 *             most rtmax bytes; READs at offsets up to 2^64 - 1 answer no
 *             data and end of file
 *   swaps     CREATE, MKDIR, SYMLINK and MKNOD of names a local helper
 *             exchanges with another user's objects as they appear: no
 *             answer carries the handle of the other user's object
 *   special   a FIFO made by MKNOD, and a FIFO, a character device and a
 *             socket made on the server (by this program, on its host): concurrent CREATEs of each
 * name (more than the filesystem threads) answer NFS3ERR_EXIST, and READ, WRITE, COMMIT and SETATTR
 * of the size are refused, all at once, never hanging a thread access    servers sharing one key
 * file: a host no entry admits gets MNT3ERR_ACCES and NFS3ERR_ACCES (handle from another server); a
 * secure entry refuses TCP from an unprivileged port and serves the same call from a port below
 * 1024 (a raw socket), and ofi (a TCP connection) from an unprivileged port too; a read-only entry
 * answers NFS3ERR_ROFS to every change and grants no MODIFY in ACCESS; another export's handle is
 * refused mounts    a bind mount inside the export of a directory outside it, on the same
 * filesystem: LOOKUP refuses it, READDIRPLUS gives no handle for it, and ".." stops at the export's
 * root escape    a directory moved out of the export by a local user: ".." from it or below it
 * answers NFS3ERR_STALE, its own handle still works; with subtree_check LOOKUP and READDIR in it
 * answer NFS3ERR_STALE too creates   CREATE, MKDIR, MKNOD as knfsd: no mode asked is mode 0, a
 * foreign owner or group or a directory's size is dropped, not an error after the object is made;
 * EXCLUSIVE matches only an empty file of the caller's; WRITE's count must be its data's length
 * served    (for nofile) MNT and a GETATTR are answered within 10 s
 * accessbits ACCESS as knfsd maps the mode: a directory needs write and search for MODIFY, EXTEND
 * and DELETE, a file never gets DELETE; and as the kernel judges it: a POSIX ACL that denies
 * the caller denies ACCESS, an immutable file grants no MODIFY or EXTEND, an append-only one no
 * MODIFY, whatever the mode
 * queue     more READDIRPLUS calls at once than one filesystem thread and its queue take: some
 * get NFS3ERR_JUKEBOX, none is lost caps      on an ext4 whose free blocks are all reserved for
 * root: a user, and root squashed, get NFS3ERR_NOSPC (the server's CAP_SYS_RESOURCE does not lend
 * them root's blocks), while root on a no_root_squash server writes the same megabyte.  Where the
 * test's root lacks CAP_SYS_RESOURCE (a container's default) only the identity half of that is
 * proved; the server's own check that the set is empty covers the rest load      (for the stop
 * test) calls until the server goes reads     (not an attack) READs of 4 KiB to 1 MiB of the file
 * "data", 24 at a time, --seconds N rounds, each checked against the file on disk; with --pause
 * FILE, halfway through (see pause_at), so that nfsd-attack can check the server registered no
 * memory for the second half
 *
 * Usage: nfsd_attack CASE --transport rdma|tcp --export PATH --port P
 *        --mount-port M [--other PATH:P:M] [--deny P:M] [--secure P:M]
 *        [--ro P:M] [--root P:M] [--subtree P:M] [--seconds N] [--pause FILE]
 * Prints "ok - CASE: what" per check; exits 1 on the first failure.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <linux/fs.h>

#include "../nfs/check.h"
#include "rpcrdma/loop.h"
#include "rpcrdma/nfs3.h"
#include "rpcrdma/rpc_msg.h"

#define HOST "127.0.0.1"
#define NOBODY 65534u
#define NONE 0xffffffffu

static struct rpcrdma_loop *loop;
static enum rpcrdma_transport tr = RPCRDMA_TRANSPORT_RDMA;
static const char *export_path;
static char port[16], mport[16];

struct who {
	bool none; /* AUTH_NONE */
	uint32_t uid, gid, ngids, gids[4];
};

static void cred_of(const struct who *w, struct rpcrdma_opaque_auth *cred)
{
	struct rpcrdma_auth_sys sys;

	if (w->none) {
		rpcrdma_auth_none(cred);
		return;
	}
	memset(&sys, 0, sizeof(sys));
	sys.stamp = (uint32_t)getpid();
	strcpy(sys.machinename, "attacker");
	sys.uid = w->uid;
	sys.gid = w->gid;
	sys.ngids = w->ngids;
	memcpy(sys.gids, w->gids, w->ngids * sizeof(w->gids[0]));
	CHECK_RC(rpcrdma_auth_sys_encode(&sys, cred), 0);
}

struct conn {
	struct rpcrdma_client *c;
	struct rpcrdma_opaque_auth cred;
};

static void conn_open(struct conn *k, const struct who *w, const char *p, enum rpcrdma_transport t)
{
	struct rpcrdma_client_opts co;

	cred_of(w, &k->cred);
	rpcrdma_client_opts_default(&co);
	co.transport = t;
	co.provider = "ofi";
	co.cred = &k->cred;
	co.timeout_ms = 20000; /* a hung server fails the check, late but surely */
	co.retries = 1;
	CHECK_RC(rpcrdma_client_create(loop, HOST, p, RPCRDMA_NFS_PROGRAM, RPCRDMA_NFS_V3, &co,
				       &k->c),
		 0);
}

static uint32_t mnt(const char *mp, const char *path, struct rpcrdma_nfs3_fh *fh)
{
	struct rpcrdma_opaque_auth cred;
	struct who root = {0};
	int rc;

	cred_of(&root, &cred);
	rc = rpcrdma_mount3_mnt(loop, HOST, mp, path, &cred, fh);
	CHECK(rc >= 0);
	return (uint32_t)rc;
}

static void name_set(struct rpcrdma_nfs3_name *n, const char *s)
{
	n->len = (uint32_t)strlen(s);
	memcpy(n->s, s, n->len + 1);
}

static uint32_t lookup(struct conn *k, const struct rpcrdma_nfs3_fh *dir, const char *name,
		       struct rpcrdma_nfs3_fh *out)
{
	struct rpcrdma_nfs3_diropargs a;
	struct rpcrdma_nfs3_lookup_res r;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.dir = *dir;
	name_set(&a.name, name);
	CHECK_RC(rpcrdma_nfs3_call(k->c, RPCRDMA_NFS3_LOOKUP, &a, &r), 0);
	if (out)
		*out = r.obj;
	return r.status;
}

static uint32_t getattr(struct conn *k, const struct rpcrdma_nfs3_fh *fh,
			struct rpcrdma_nfs3_fattr *attr)
{
	struct rpcrdma_nfs3_attr_res r;

	memset(&r, 0, sizeof(r));
	CHECK_RC(rpcrdma_nfs3_call(k->c, RPCRDMA_NFS3_GETATTR, (void *)fh, &r), 0);
	if (attr)
		*attr = r.attr;
	return r.status;
}

static uint32_t read_fh(struct conn *k, const struct rpcrdma_nfs3_fh *fh)
{
	static uint8_t buf[4096];
	struct rpcrdma_nfs3_read_args a;
	struct rpcrdma_nfs3_read_res r;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.file = *fh;
	a.count = sizeof(buf);
	r.data = buf;
	r.data_max = sizeof(buf);
	CHECK_RC(rpcrdma_nfs3_call(k->c, RPCRDMA_NFS3_READ, &a, &r), 0);
	return r.status;
}

static uint32_t write_fh(struct conn *k, const struct rpcrdma_nfs3_fh *fh)
{
	static uint8_t data[16] = "attack";
	struct rpcrdma_nfs3_write_args a;
	struct rpcrdma_nfs3_write_res r;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.file = *fh;
	a.count = a.len = sizeof(data);
	a.data = data;
	a.stable = RPCRDMA_FILE_SYNC;
	CHECK_RC(rpcrdma_nfs3_call(k->c, RPCRDMA_NFS3_WRITE, &a, &r), 0);
	return r.status;
}

static uint32_t commit_fh(struct conn *k, const struct rpcrdma_nfs3_fh *fh)
{
	struct rpcrdma_nfs3_commit_args a;
	struct rpcrdma_nfs3_commit_res r;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.file = *fh;
	CHECK_RC(rpcrdma_nfs3_call(k->c, RPCRDMA_NFS3_COMMIT, &a, &r), 0);
	return r.status;
}

static uint32_t setattr(struct conn *k, const struct rpcrdma_nfs3_fh *fh,
			const struct rpcrdma_nfs3_sattr *sa)
{
	struct rpcrdma_nfs3_setattr_args a;
	struct rpcrdma_nfs3_wcc_res r;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.obj = *fh;
	a.attr = *sa;
	CHECK_RC(rpcrdma_nfs3_call(k->c, RPCRDMA_NFS3_SETATTR, &a, &r), 0);
	return r.status;
}

static uint32_t create(struct conn *k, const struct rpcrdma_nfs3_fh *dir, const char *name,
		       uint32_t how, uint32_t mode, struct rpcrdma_nfs3_create_res *r)
{
	struct rpcrdma_nfs3_create_args a;

	memset(&a, 0, sizeof(a));
	memset(r, 0, sizeof(*r));
	a.where.dir = *dir;
	name_set(&a.where.name, name);
	a.mode = how;
	a.attr.set_mode = true;
	a.attr.mode = mode;
	CHECK_RC(rpcrdma_nfs3_call(k->c, RPCRDMA_NFS3_CREATE, &a, r), 0);
	return r->status;
}

static uint32_t nfs_mknod(struct conn *k, const struct rpcrdma_nfs3_fh *dir, const char *name,
		      uint32_t type)
{
	struct rpcrdma_nfs3_mknod_args a;
	struct rpcrdma_nfs3_create_res r;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.where.dir = *dir;
	name_set(&a.where.name, name);
	a.type = type;
	a.attr.set_mode = true;
	a.attr.mode = 0666;
	a.major = 1;
	a.minor = 3; /* /dev/null's numbers */
	CHECK_RC(rpcrdma_nfs3_call(k->c, RPCRDMA_NFS3_MKNOD, &a, &r), 0);
	return r.status;
}

/* A fresh, ordinary client (uid 1000) is served within a few seconds. */
static void well_behaved(const char *p, const struct rpcrdma_nfs3_fh *root, const char *why)
{
	struct who user = {.uid = 1000, .gid = 1000};
	struct timespec t0, t1;
	struct conn k;
	uint32_t st;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	conn_open(&k, &user, p, tr);
	for (int i = 0; (st = getattr(&k, root, NULL)) == RPCRDMA_NFS3ERR_JUKEBOX && i < 50; i++)
		usleep(100000);
	CHECK_RC(st, RPCRDMA_NFS3_OK);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(t1.tv_sec - t0.tv_sec < 10);
	rpcrdma_client_destroy(k.c);
	printf("ok - still serves a well-behaved client after %s\n", why);
	fflush(stdout);
}

/* Identity. */

static void identity(void)
{
	static const struct {
		struct who w;
		uint32_t uid, gid; /* what the created file must be owned by */
		const char *what;
	} cases[] = {
	    {{.uid = 0, .gid = 0}, NOBODY, NOBODY, "uid 0 gid 0"},
	    {{.uid = NONE, .gid = NONE}, NOBODY, NOBODY, "uid -1 gid -1"},
	    {{.uid = 0, .gid = NONE}, NOBODY, NOBODY, "uid 0 gid -1"},
	    {{.uid = NONE, .gid = 0}, NOBODY, NOBODY, "uid -1 gid 0"},
	    {{.uid = 1000, .gid = 0, .ngids = 1, .gids = {0}}, 1000, NOBODY, "gid 0 twice"},
	    {{.uid = 1000, .gid = 1000, .ngids = 2, .gids = {NONE, 0}}, 1000, 1000,
	     "groups -1 and 0"},
	    {{.uid = 0, .gid = 1000, .ngids = 1, .gids = {0}}, NOBODY, 1000, "uid 0 group 0"},
	    {{.none = true}, NOBODY, NOBODY, "AUTH_NONE"},
	};
	struct rpcrdma_nfs3_fh root, secret, grp, pub, other;
	struct rpcrdma_nfs3_create_res cr;
	struct rpcrdma_nfs3_sattr sa;
	struct who user = {.uid = 1000, .gid = 1000};
	struct conn k;
	char name[64];

	CHECK_RC(mnt(mport, export_path, &root), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		conn_open(&k, &cases[i].w, port, tr);
		CHECK_RC(lookup(&k, &root, "secret", &secret), 0);
		CHECK_RC(lookup(&k, &root, "rootgroup", &grp), 0);
		CHECK_RC(lookup(&k, &root, "pub", &pub), 0);
		CHECK_RC(read_fh(&k, &secret), RPCRDMA_NFS3ERR_ACCES);
		CHECK_RC(read_fh(&k, &grp), RPCRDMA_NFS3ERR_ACCES);
		CHECK_RC(read_fh(&k, &pub), RPCRDMA_NFS3_OK);
		CHECK_RC(write_fh(&k, &secret), RPCRDMA_NFS3ERR_ACCES);
		snprintf(name, sizeof(name), "made-%zu-%d", i, (int)tr);
		CHECK_RC(create(&k, &root, name, RPCRDMA_GUARDED, 0644, &cr), 0);
		CHECK(cr.obj_attr.present);
		CHECK_RC(cr.obj_attr.attr.uid, cases[i].uid);
		CHECK_RC(cr.obj_attr.attr.gid, cases[i].gid);
		/* No owner's rights over root's file. */
		memset(&sa, 0, sizeof(sa));
		sa.set_mode = true;
		sa.mode = 0666;
		CHECK(setattr(&k, &secret, &sa) != RPCRDMA_NFS3_OK);
		memset(&sa, 0, sizeof(sa));
		sa.set_uid = true;
		sa.uid = 0;
		CHECK(setattr(&k, &cr.obj, &sa) != RPCRDMA_NFS3_OK);
		/* No device node. */
		snprintf(name, sizeof(name), "dev-%zu-%d", i, (int)tr);
		CHECK(nfs_mknod(&k, &root, name, RPCRDMA_NF3CHR) != RPCRDMA_NFS3_OK);
		rpcrdma_client_destroy(k.c);
		printf("ok - identity: %s acts as %u:%u, not root\n", cases[i].what, cases[i].uid,
		       cases[i].gid);
	}
	/* Setuid and setgid bits: only what the kernel lets the user set. */
	conn_open(&k, &user, port, tr);
	CHECK_RC(lookup(&k, &root, "g2000", &other), 0);
	memset(&sa, 0, sizeof(sa));
	sa.set_mode = true;
	sa.mode = 02755; /* the file's group, 2000, is not the user's */
	CHECK_RC(setattr(&k, &other, &sa), 0);
	{
		struct rpcrdma_nfs3_fattr at;

		CHECK_RC(getattr(&k, &other, &at), 0);
		CHECK_RC(at.mode & 07000, 0);
	}
	memset(&sa, 0, sizeof(sa));
	sa.set_gid = true;
	sa.gid = 3000; /* not the user's either */
	CHECK(setattr(&k, &other, &sa) != RPCRDMA_NFS3_OK);
	snprintf(name, sizeof(name), "suid-%d", (int)tr);
	CHECK_RC(create(&k, &root, name, RPCRDMA_GUARDED, 0644, &cr), 0);
	memset(&sa, 0, sizeof(sa));
	sa.set_mode = true;
	sa.mode = 04755; /* the owner may */
	CHECK_RC(setattr(&k, &cr.obj, &sa), 0);
	rpcrdma_client_destroy(k.c);
	printf("ok - identity: setgid for a foreign group dropped, chown refused\n");
	well_behaved(port, &root, "identity attacks");

	/* Last, callers with groups, enough for every filesystem thread:
	 * nfsd-attack then checks that no thread kept them. */
	{
		struct who grouped = {.uid = 1000, .gid = 1000, .ngids = 2, .gids = {4242, 4243}};

		conn_open(&k, &grouped, port, tr);
		for (int i = 0; i < 16; i++)
			CHECK_RC(getattr(&k, &root, NULL), RPCRDMA_NFS3_OK);
		rpcrdma_client_destroy(k.c);
	}
}

static void squash(void)
{
	static const struct who ws[] = {
	    {.uid = 1000, .gid = 1000, .ngids = 1, .gids = {1000}},
	    {.uid = 0, .gid = 0},
	    {.uid = NONE, .gid = NONE},
	};
	struct rpcrdma_nfs3_fh root, secret;
	struct rpcrdma_nfs3_create_res cr;
	struct conn k;
	char name[64];

	CHECK_RC(mnt(mport, export_path, &root), 0);
	for (size_t i = 0; i < sizeof(ws) / sizeof(ws[0]); i++) {
		conn_open(&k, &ws[i], port, tr);
		snprintf(name, sizeof(name), "squashed-%zu-%d", i, (int)tr);
		CHECK_RC(create(&k, &root, name, RPCRDMA_GUARDED, 0644, &cr), 0);
		CHECK_RC(cr.obj_attr.attr.uid, 4321);
		CHECK_RC(cr.obj_attr.attr.gid, 4322);
		CHECK_RC(lookup(&k, &root, "secret", &secret), 0);
		CHECK_RC(read_fh(&k, &secret), RPCRDMA_NFS3ERR_ACCES);
		rpcrdma_client_destroy(k.c);
	}
	printf("ok - squash: everyone acts as anonuid 4321, anongid 4322\n");
	well_behaved(port, &root, "all_squash");
}

/* Special files. */

struct pending {
	struct rpcrdma_call call;
	struct rpcrdma_nfs3_create_args a;
	struct rpcrdma_nfs3_create_res r;
	bool done;
};

static void pending_done(struct rpcrdma_call *call, void *ctx)
{
	(void)call;
	((struct pending *)ctx)->done = true;
}

#define CONCURRENT 24 /* three times the server's filesystem threads */

static void special(void)
{
	static const char *names[] = {"nfifo", "fifo", "chr", "sock"};
	static struct pending p[CONCURRENT];
	struct who user = {.uid = 1000, .gid = 1000};
	struct rpcrdma_nfs3_fh root, fh;
	struct rpcrdma_nfs3_sattr sa;
	struct conn k;

	/* The server's own special files, made here: we run on its host. */
	{
		struct sockaddr_un sun = {.sun_family = AF_UNIX};
		char path[4096];
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);

		snprintf(path, sizeof(path), "%s/fifo", export_path);
		CHECK(mkfifo(path, 0666) == 0);
		snprintf(path, sizeof(path), "%s/chr", export_path);
		CHECK(mknod(path, S_IFCHR | 0666, makedev(1, 3)) == 0);
		CHECK(fd >= 0 && strlen(export_path) + 6 < sizeof(sun.sun_path));
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/sock", export_path);
		CHECK(bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0);
		close(fd);
	}
	CHECK_RC(mnt(mport, export_path, &root), 0);
	conn_open(&k, &user, port, tr);
	CHECK_RC(nfs_mknod(&k, &root, "nfifo", RPCRDMA_NF3FIFO), 0);
	for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
		unsigned int left = CONCURRENT;

		for (int i = 0; i < CONCURRENT; i++) {
			memset(&p[i], 0, sizeof(p[i]));
			p[i].a.where.dir = root;
			name_set(&p[i].a.where.name, names[n]);
			p[i].a.mode = RPCRDMA_UNCHECKED;
			p[i].a.attr.set_mode = true;
			p[i].a.attr.mode = 0644;
			p[i].call.proc = RPCRDMA_NFS3_CREATE;
			p[i].call.encode_args = rpcrdma_nfs3_encode_args(RPCRDMA_NFS3_CREATE);
			p[i].call.args = &p[i].a;
			p[i].call.decode_res = rpcrdma_nfs3_decode_res(RPCRDMA_NFS3_CREATE);
			p[i].call.res = &p[i].r;
			p[i].call.max_reply = rpcrdma_nfs3_max_reply(RPCRDMA_NFS3_CREATE, 0);
			p[i].call.done = pending_done;
			p[i].call.ctx = &p[i];
			CHECK_RC(rpcrdma_client_call_async(k.c, &p[i].call), 0);
		}
		while (left) {
			CHECK(rpcrdma_loop_run_once(loop, 1000) >= 0);
			left = 0;
			for (int i = 0; i < CONCURRENT; i++)
				left += !p[i].done;
		}
		for (int i = 0; i < CONCURRENT; i++) {
			CHECK_RC(p[i].call.status, 0);
			CHECK_RC(p[i].r.status, RPCRDMA_NFS3ERR_EXIST);
		}
		CHECK_RC(lookup(&k, &root, names[n], &fh), 0);
		CHECK(read_fh(&k, &fh) != RPCRDMA_NFS3_OK);
		CHECK(write_fh(&k, &fh) != RPCRDMA_NFS3_OK);
		CHECK(commit_fh(&k, &fh) != RPCRDMA_NFS3_OK);
		memset(&sa, 0, sizeof(sa));
		sa.set_size = true;
		CHECK(setattr(&k, &fh, &sa) != RPCRDMA_NFS3_OK);
		printf("ok - special: %d CREATEs of %s answer EXIST; READ, WRITE, COMMIT, "
		       "SETATTR size refused\n",
		       CONCURRENT, names[n]);
		fflush(stdout);
	}
	rpcrdma_client_destroy(k.c);
	well_behaved(port, &root, "special-file attacks");
}

/* Modes: what a new file gets, and what a change by another takes off. */

static uint32_t new_mode(struct conn *k, const struct rpcrdma_nfs3_fh *dir, uint32_t proc,
			 const char *name, uint32_t mode)
{
	union {
		struct rpcrdma_nfs3_create_args create;
		struct rpcrdma_nfs3_mkdir_args mkdir;
		struct rpcrdma_nfs3_mknod_args mknod;
	} a;
	struct rpcrdma_nfs3_create_res r;
	struct rpcrdma_nfs3_diropargs *where = &a.create.where;
	struct rpcrdma_nfs3_sattr *sa = &a.create.attr;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	if (proc == RPCRDMA_NFS3_MKDIR) {
		where = &a.mkdir.where;
		sa = &a.mkdir.attr;
	} else if (proc == RPCRDMA_NFS3_MKNOD) {
		where = &a.mknod.where;
		sa = &a.mknod.attr;
		a.mknod.type = RPCRDMA_NF3FIFO;
	} else {
		a.create.mode = RPCRDMA_GUARDED;
	}
	where->dir = *dir;
	name_set(&where->name, name);
	sa->set_mode = true;
	sa->mode = mode;
	CHECK_RC(rpcrdma_nfs3_call(k->c, proc, &a, &r), 0);
	CHECK_RC(r.status, 0);
	CHECK(r.obj_attr.present);
	return r.obj_attr.attr.mode;
}

static uint32_t mode_of(struct conn *k, const struct rpcrdma_nfs3_fh *fh)
{
	struct rpcrdma_nfs3_fattr attr;

	CHECK_RC(getattr(k, fh, &attr), 0);
	return attr.mode;
}

/*
 * The server runs under umask 027 (nfsd-attack): new files, directories
 * and FIFOs still get exactly the mode the client sent, as from knfsd,
 * whose threads run with umask 0 (the client applied its own).  And the
 * kernel's rules on set-id bits hold for a caller who does not own the
 * file: a WRITE or a truncation by another takes the setuid and setgid
 * bits off, and so does a change of group by the owner.
 */
static void modes(void)
{
	static const struct {
		uint32_t proc, mode;
		const char *name;
	} made[] = {
	    {RPCRDMA_NFS3_CREATE, 0666, "m-file"}, {RPCRDMA_NFS3_CREATE, 0660, "m-file-g"},
	    {RPCRDMA_NFS3_MKDIR, 0777, "m-dir"},   {RPCRDMA_NFS3_MKDIR, 0775, "m-dir-g"},
	    {RPCRDMA_NFS3_MKNOD, 0666, "m-fifo"},
	};
	struct who user = {.uid = 1000, .gid = 1000};
	struct rpcrdma_nfs3_fh root, fh;
	struct rpcrdma_nfs3_sattr sa;
	struct conn k;

	CHECK_RC(mnt(mport, export_path, &root), 0);
	conn_open(&k, &user, port, tr);
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		CHECK_RC(new_mode(&k, &root, made[i].proc, made[i].name, made[i].mode),
			 made[i].mode);
		CHECK_RC(lookup(&k, &root, made[i].name, &fh), 0);
		CHECK_RC(mode_of(&k, &fh), made[i].mode);
	}
	printf("ok - modes: CREATE, MKDIR and MKNOD give the mode asked, not the server's "
	       "umask\n");

	/* A symbolic link's times are set, as knfsd sets them; its mode is
	 * not (Linux has none to change), and the call still succeeds. */
	{
		struct rpcrdma_nfs3_symlink_args a;
		struct rpcrdma_nfs3_create_res r;
		struct rpcrdma_nfs3_fattr attr;

		memset(&a, 0, sizeof(a));
		memset(&r, 0, sizeof(r));
		a.where.dir = root;
		name_set(&a.where.name, "m-link");
		a.target.len = 6;
		memcpy(a.target.s, "m-file", 7);
		CHECK_RC(rpcrdma_nfs3_call(k.c, RPCRDMA_NFS3_SYMLINK, &a, &r), 0);
		CHECK_RC(r.status, 0);
		memset(&sa, 0, sizeof(sa));
		sa.atime_how = sa.mtime_how = RPCRDMA_SET_TO_CLIENT_TIME;
		sa.atime.seconds = 1000000000u;
		sa.mtime.seconds = 1000000001u;
		sa.set_mode = true;
		sa.mode = 0600;
		CHECK_RC(setattr(&k, &r.obj, &sa), 0);
		CHECK_RC(getattr(&k, &r.obj, &attr), 0);
		CHECK_RC(attr.mtime.seconds, 1000000001u);
		CHECK_RC(attr.atime.seconds, 1000000000u);
		CHECK_RC(lookup(&k, &root, "m-file", &fh), 0);
		CHECK_RC(mode_of(&k, &fh), 0666);
	}
	printf("ok - modes: SETATTR sets a symbolic link's times, not its target's\n");

	/* 2000:2000, mode 06777: anyone may write it. */
	CHECK_RC(lookup(&k, &root, "suid-write", &fh), 0);
	CHECK_RC(write_fh(&k, &fh), 0);
	CHECK_RC(mode_of(&k, &fh), 0777);
	CHECK_RC(lookup(&k, &root, "suid-trunc", &fh), 0);
	memset(&sa, 0, sizeof(sa));
	sa.set_size = true;
	sa.size = 1;
	CHECK_RC(setattr(&k, &fh, &sa), 0);
	CHECK_RC(mode_of(&k, &fh), 0777);
	/* 1000:2000, mode 06755: its owner gives it to its own group. */
	CHECK_RC(lookup(&k, &root, "suid-chgrp", &fh), 0);
	memset(&sa, 0, sizeof(sa));
	sa.set_gid = true;
	sa.gid = 1000;
	CHECK_RC(setattr(&k, &fh, &sa), 0);
	CHECK_RC(mode_of(&k, &fh), 0755);
	printf("ok - modes: another's WRITE or truncation, and a change of group, take the "
	       "set-id bits off\n");
	/* A mode sent with the change of group loses setuid, and setgid
	 * where group execute is set (knfsd's nfsd_sanitize_attrs); before,
	 * the chmod after the chown kept both. */
	CHECK_RC(lookup(&k, &root, "suid-chgrp-mode", &fh), 0);
	memset(&sa, 0, sizeof(sa));
	sa.set_gid = true;
	sa.gid = 1000;
	sa.set_mode = true;
	sa.mode = 06755;
	CHECK_RC(setattr(&k, &fh, &sa), 0);
	CHECK_RC(mode_of(&k, &fh), 0755);
	CHECK_RC(lookup(&k, &root, "suid-chgrp-nox", &fh), 0);
	sa.mode = 06745;
	CHECK_RC(setattr(&k, &fh, &sa), 0);
	CHECK_RC(mode_of(&k, &fh), 02745);
	printf("ok - modes: a mode sent with a change of group loses setuid, and setgid "
	       "unless group execute is off\n");
	rpcrdma_client_destroy(k.c);
	well_behaved(port, &root, "mode checks");
}

/*
 * Permissions for data, as knfsd's nfsd_permission gives them (fs/nfsd/
 * vfs.c): READ, WRITE, COMMIT and a SETATTR of the size ask with
 * NFSD_MAY_OWNER_OVERRIDE, and a READ may fall back on the execute right.
 * nfsd-attack made, as 2000:2000 unless said: x711 (0711), p700 (0700),
 * ro1000 (1000:1000, 0444), own000 (1000:1000, 0000) and ro2000 (0444).
 */
static uint32_t truncate_fh(struct conn *k, const struct rpcrdma_nfs3_fh *fh)
{
	struct rpcrdma_nfs3_sattr sa;

	memset(&sa, 0, sizeof(sa));
	sa.set_size = true;
	sa.size = 1;
	return setattr(k, fh, &sa);
}

/*
 * On @path, a POSIX ACL that gives user 1000 nothing: the owner @owner,
 * the group, the mask and others @rest.  False where the filesystem
 * takes no ACL.
 */
static bool acl_deny_1000(const char *path, uint16_t owner, uint16_t rest)
{
	/* The kernel's xattr form of an ACL: a version, then entries of
	 * tag, permission and id, little-endian. */
	struct {
		uint32_t version;
		struct {
			uint16_t tag, perm;
			uint32_t id;
		} e[5];
	} acl = {2,
		 {{0x01, owner, NONE},
		  {0x02, 0, 1000},
		  {0x04, rest, NONE},
		  {0x10, rest, NONE},
		  {0x20, rest, NONE}}};

	if (setxattr(path, "system.posix_acl_access", &acl, sizeof(acl), 0) == 0)
		return true;
	CHECK(errno == EOPNOTSUPP);
	return false;
}

/* xacl, 2000:2000, mode 0711 with a POSIX ACL that denies user 1000
 * everything, made here (we run on the server's host); false where the
 * filesystem takes no ACL. */
static bool make_acl_file(void)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/xacl", export_path);
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0711);
	CHECK(fd >= 0);
	CHECK(write(fd, "xacl\n", 5) == 5);
	CHECK(fchown(fd, 2000, 2000) == 0);
	close(fd);
	return acl_deny_1000(path, 7, 1);
}

static void perms(void)
{
	struct who user = {.uid = 1000, .gid = 1000};
	struct rpcrdma_nfs3_fh root, fh;
	struct rpcrdma_nfs3_create_res cr;
	struct conn k;
	char name[64];

	CHECK_RC(mnt(mport, export_path, &root), 0);
	conn_open(&k, &user, port, tr);

	CHECK_RC(lookup(&k, &root, "x711", &fh), 0);
	CHECK_RC(read_fh(&k, &fh), RPCRDMA_NFS3_OK);
	CHECK_RC(write_fh(&k, &fh), RPCRDMA_NFS3ERR_ACCES);
	printf("ok - perms: another's 0711 file is read (run), not written\n");
	if (make_acl_file()) {
		CHECK_RC(lookup(&k, &root, "xacl", &fh), 0);
		CHECK_RC(read_fh(&k, &fh), RPCRDMA_NFS3ERR_ACCES);
		printf("ok - perms: no read by execute right where an ACL may deny it\n");
	} else {
		printf("# not checked: the export's filesystem takes no POSIX ACL\n");
	}

	CHECK_RC(lookup(&k, &root, "ro1000", &fh), 0);
	CHECK_RC(write_fh(&k, &fh), RPCRDMA_NFS3_OK);
	CHECK_RC(commit_fh(&k, &fh), RPCRDMA_NFS3_OK);
	CHECK_RC(truncate_fh(&k, &fh), RPCRDMA_NFS3_OK);
	CHECK_RC(mode_of(&k, &fh), 0444);
	CHECK_RC(lookup(&k, &root, "own000", &fh), 0);
	CHECK_RC(read_fh(&k, &fh), RPCRDMA_NFS3_OK);
	/* As cp does: create read-only, then write the data. */
	snprintf(name, sizeof(name), "cp-%d", (int)tr);
	CHECK_RC(create(&k, &root, name, RPCRDMA_GUARDED, 0444, &cr), 0);
	CHECK_RC(write_fh(&k, &cr.obj), RPCRDMA_NFS3_OK);
	printf("ok - perms: the owner writes, commits and truncates its 0444 file, reads "
	       "its 0000 one\n");

	CHECK_RC(lookup(&k, &root, "ro2000", &fh), 0);
	CHECK_RC(read_fh(&k, &fh), RPCRDMA_NFS3_OK);
	CHECK_RC(write_fh(&k, &fh), RPCRDMA_NFS3ERR_ACCES);
	CHECK_RC(truncate_fh(&k, &fh), RPCRDMA_NFS3ERR_ACCES);
	CHECK_RC(commit_fh(&k, &fh), RPCRDMA_NFS3ERR_ACCES);
	CHECK_RC(lookup(&k, &root, "p700", &fh), 0);
	CHECK_RC(read_fh(&k, &fh), RPCRDMA_NFS3ERR_ACCES);
	CHECK_RC(write_fh(&k, &fh), RPCRDMA_NFS3ERR_ACCES);
	printf("ok - perms: another's 0444 file is not written, truncated or committed, "
	       "another's 0700 file not read\n");
	rpcrdma_client_destroy(k.c);
	well_behaved(port, &root, "permission checks");
}

/*
 * Errors as knfsd answers them (fs/nfsd/nfs3xdr.c, nfs3proc.c, vfs.c).
 * nfsd-attack made a file "f" and a directory "d", both the user's.
 */
static void named_call(struct conn *k, uint32_t proc, const struct rpcrdma_nfs3_fh *dir,
		       const char *name, const char *second)
{
	union {
		struct rpcrdma_nfs3_diropargs d;
		struct rpcrdma_nfs3_create_args c;
		struct rpcrdma_nfs3_mkdir_args m;
		struct rpcrdma_nfs3_symlink_args s;
		struct rpcrdma_nfs3_mknod_args n;
		struct rpcrdma_nfs3_rename_args r;
		struct rpcrdma_nfs3_link_args l;
	} a;
	union {
		struct rpcrdma_nfs3_lookup_res lookup;
		struct rpcrdma_nfs3_create_res create;
		struct rpcrdma_nfs3_wcc_res wcc;
		struct rpcrdma_nfs3_rename_res rename;
		struct rpcrdma_nfs3_link_res link;
	} r;
	struct rpcrdma_nfs3_diropargs *where = &a.d;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	switch (proc) {
	case RPCRDMA_NFS3_CREATE:
		where = &a.c.where;
		break;
	case RPCRDMA_NFS3_MKDIR:
		where = &a.m.where;
		break;
	case RPCRDMA_NFS3_SYMLINK:
		where = &a.s.where;
		a.s.target.len = 1;
		memcpy(a.s.target.s, "f", 2);
		break;
	case RPCRDMA_NFS3_MKNOD:
		where = &a.n.where;
		a.n.type = RPCRDMA_NF3FIFO;
		break;
	case RPCRDMA_NFS3_RENAME:
		where = &a.r.from;
		a.r.to.dir = *dir;
		name_set(&a.r.to.name, second);
		break;
	case RPCRDMA_NFS3_LINK:
		where = &a.l.link;
		CHECK_RC(lookup(k, dir, "f", &a.l.file), 0);
		break;
	}
	where->dir = *dir;
	name_set(&where->name, name);
	CHECK_RC(rpcrdma_nfs3_call(k->c, proc, &a, &r), RPCRDMA_ERR_RPC_REJECTED);
}

static void errors(void)
{
	static const char *bad[] = {"", "a/b", "/"};
	static const uint32_t named[] = {
	    RPCRDMA_NFS3_LOOKUP,  RPCRDMA_NFS3_CREATE, RPCRDMA_NFS3_MKDIR,
	    RPCRDMA_NFS3_SYMLINK, RPCRDMA_NFS3_MKNOD,  RPCRDMA_NFS3_REMOVE,
	    RPCRDMA_NFS3_RMDIR,   RPCRDMA_NFS3_RENAME, RPCRDMA_NFS3_LINK,
	};
	struct who user = {.uid = 1000, .gid = 1000};
	struct rpcrdma_nfs3_fh root, d, f;
	struct conn k;

	CHECK_RC(mnt(mport, export_path, &root), 0);
	conn_open(&k, &user, port, tr);
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
			named_call(&k, named[i], &root, bad[b], "g");
			if (named[i] == RPCRDMA_NFS3_RENAME)
				named_call(&k, named[i], &root, "f", bad[b]);
		}
	}
	CHECK_RC(getattr(&k, &root, NULL), RPCRDMA_NFS3_OK);
	printf("ok - errors: an empty name or one with '/' is GARBAGE_ARGS\n");

	CHECK_RC(lookup(&k, &root, "d", &d), 0);
	CHECK_RC(lookup(&k, &root, "f", &f), 0);
	{
		struct rpcrdma_nfs3_diropargs a;
		struct rpcrdma_nfs3_wcc_res r;
		static const char *dots[] = {".", ".."};

		for (size_t i = 0; i < 2; i++) {
			for (uint32_t proc = RPCRDMA_NFS3_REMOVE; proc <= RPCRDMA_NFS3_RMDIR;
			     proc++) {
				memset(&a, 0, sizeof(a));
				memset(&r, 0, sizeof(r));
				a.dir = d;
				name_set(&a.name, dots[i]);
				CHECK_RC(rpcrdma_nfs3_call(k.c, proc, &a, &r), 0);
				CHECK_RC(r.status, RPCRDMA_NFS3ERR_ACCES);
			}
		}
	}
	{
		struct rpcrdma_nfs3_rename_args a;
		struct rpcrdma_nfs3_rename_res r;

		memset(&a, 0, sizeof(a));
		memset(&r, 0, sizeof(r));
		a.from.dir = a.to.dir = root;
		name_set(&a.from.name, "f");
		name_set(&a.to.name, ".");
		CHECK_RC(rpcrdma_nfs3_call(k.c, RPCRDMA_NFS3_RENAME, &a, &r), 0);
		CHECK_RC(r.status, RPCRDMA_NFS3ERR_PERM);
		CHECK_RC(lookup(&k, &root, "f", NULL), 0);
	}
	printf("ok - errors: REMOVE, RMDIR of \".\" or \"..\" NFS3ERR_ACCES, RENAME to "
	       "\".\" NFS3ERR_PERM\n");

	CHECK_RC(commit_fh(&k, &d), RPCRDMA_NFS3ERR_ISDIR);
	{
		struct rpcrdma_nfs3_link_args a;
		struct rpcrdma_nfs3_link_res r;

		memset(&a, 0, sizeof(a));
		memset(&r, 0, sizeof(r));
		a.file = d;
		a.link.dir = root;
		name_set(&a.link.name, "d-link");
		CHECK_RC(rpcrdma_nfs3_call(k.c, RPCRDMA_NFS3_LINK, &a, &r), 0);
		CHECK_RC(r.status, RPCRDMA_NFS3ERR_ISDIR);
	}
	printf("ok - errors: COMMIT and LINK of a directory NFS3ERR_ISDIR\n");

	{
		struct rpcrdma_nfs3_mknod_args a;
		struct rpcrdma_nfs3_create_res r;

		memset(&a, 0, sizeof(a));
		memset(&r, 0, sizeof(r));
		a.where.dir = root;
		name_set(&a.where.name, "big-major");
		a.type = RPCRDMA_NF3CHR;
		a.major = 0x1001; /* would be major 1 if cut to 12 bits */
		a.minor = 3;
		CHECK_RC(rpcrdma_nfs3_call(k.c, RPCRDMA_NFS3_MKNOD, &a, &r), 0);
		CHECK_RC(r.status, RPCRDMA_NFS3ERR_INVAL);
	}
	printf("ok - errors: MKNOD of a device number that does not fit NFS3ERR_INVAL\n");
	rpcrdma_client_destroy(k.c);
	well_behaved(port, &root, "calls answered with errors");
}

/* Sizes: counts and offsets at and beyond what a reply or a file holds. */

static uint32_t xdr_size(uint32_t n)
{
	return 4 + ((n + 3) & ~3u);
}

/* The bytes of a READDIR(PLUS)3resok that carries @r (RFC 1813 3.3.16-17). */
static uint64_t readdir_resok_size(const struct rpcrdma_nfs3_readdir_res *r)
{
	uint64_t n = 4 + (r->dir_attr.present ? 84 : 0) + 8 + 4 + 4;

	for (uint32_t i = 0; i < r->n; i++) {
		const struct rpcrdma_nfs3_entry *e = &r->entries[i];

		n += 4 + 8 + xdr_size(e->name.len) + 8;
		if (r->plus)
			n += 4 + (e->attr.present ? 84 : 0) + 4 +
			     (e->has_fh ? xdr_size(e->fh.len) : 0);
	}
	return n;
}

/*
 * "big" holds 4200 entries with names of 240 bytes: a READDIRPLUS
 * that took them all would need 1.8 MiB.  Asked with a count of
 * 0xffffffff, both READDIR and READDIRPLUS answer at most what FSINFO's
 * rtmax says (1 MiB), as knfsd clamps the count to its largest payload;
 * before, READDIRPLUS answered 4096 entries, which our own client (its
 * record limit) refused over TCP.  READs at offsets up to and beyond
 * 2^63 - 1 answer NFS3_OK, no data and end of file, as knfsd's do (the
 * largest offset a file has); before, one whose end passed 2^63 - 1
 * answered NFS3ERR_INVAL.
 */
static void sizes(void)
{
	static const uint64_t offsets[] = {
	    (uint64_t)INT64_MAX - 100, (uint64_t)INT64_MAX, (uint64_t)INT64_MAX + 1,
	    UINT64_MAX - 4096,         UINT64_MAX,
	};
	static struct rpcrdma_nfs3_entry e[RPCRDMA_NFS3_DIR_MAX];
	static uint8_t data[4096];
	struct who user = {.uid = 1000, .gid = 1000};
	struct rpcrdma_nfs3_fh root, big, fh;
	struct rpcrdma_nfs3_fsinfo_res fi;
	struct conn k;

	CHECK_RC(mnt(mport, export_path, &root), 0);
	conn_open(&k, &user, port, tr);
	memset(&fi, 0, sizeof(fi));
	CHECK_RC(rpcrdma_nfs3_call(k.c, RPCRDMA_NFS3_FSINFO, &root, &fi), 0);
	CHECK_RC(fi.status, 0);
	CHECK_RC(lookup(&k, &root, "big", &big), 0);
	for (int plus = 0; plus < 2; plus++) {
		struct rpcrdma_nfs3_readdir_args a;
		struct rpcrdma_nfs3_readdir_res r;
		uint64_t bytes;

		memset(&a, 0, sizeof(a));
		memset(&r, 0, sizeof(r));
		a.dir = big;
		a.count = a.dircount = 0xffffffffu;
		r.entries = e;
		r.max = RPCRDMA_NFS3_DIR_MAX;
		CHECK_RC(rpcrdma_nfs3_call(
			     k.c, plus ? RPCRDMA_NFS3_READDIRPLUS : RPCRDMA_NFS3_READDIR, &a, &r),
			 0);
		CHECK_RC(r.status, 0);
		bytes = readdir_resok_size(&r);
		CHECK(r.n > 0 && !r.eof);
		CHECK(bytes <= fi.rtmax);
		printf("ok - sizes: %s with count 0xffffffff answers %u entries, %llu bytes "
		       "(rtmax %u)\n",
		       plus ? "READDIRPLUS" : "READDIR", r.n, (unsigned long long)bytes, fi.rtmax);
	}
	CHECK_RC(lookup(&k, &root, "pub", &fh), 0);
	for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		struct rpcrdma_nfs3_read_args a;
		struct rpcrdma_nfs3_read_res r;

		memset(&a, 0, sizeof(a));
		memset(&r, 0, sizeof(r));
		a.file = fh;
		a.offset = offsets[i];
		a.count = sizeof(data);
		r.data = data;
		r.data_max = sizeof(data);
		CHECK_RC(rpcrdma_nfs3_call(k.c, RPCRDMA_NFS3_READ, &a, &r), 0);
		CHECK_RC(r.status, 0);
		CHECK_RC(r.count, 0);
		CHECK(r.eof);
	}
	printf("ok - sizes: READs at offsets from 2^63 - 101 to 2^64 - 1 answer no data and end "
	       "of file\n");
	rpcrdma_client_destroy(k.c);
	well_behaved(port, &root, "size checks");
}

/* Swaps: the name just made exchanged at once with another's object. */

#define SWAP_OWNER 2000u /* the other user */
#define SWAP_ROUNDS 100

/* One bait of the type of @name, owned by SWAP_OWNER, exchanged with it. */
static void swap_one(int dfd, const char *name)
{
	char bait[NAME_MAX + 1];
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	snprintf(bait, sizeof(bait), "bait-%s", name);
	switch (st.st_mode & S_IFMT) {
	case S_IFREG:
		close(openat(dfd, bait, O_CREAT | O_EXCL | O_WRONLY, 0644));
		break;
	case S_IFDIR:
		mkdirat(dfd, bait, 0755);
		break;
	case S_IFLNK:
		symlinkat("elsewhere", dfd, bait);
		break;
	case S_IFIFO:
		mkfifoat(dfd, bait, 0644);
		break;
	default:
		return;
	}
	(void)fchownat(dfd, bait, SWAP_OWNER, SWAP_OWNER, AT_SYMLINK_NOFOLLOW);
	(void)renameat2(dfd, bait, dfd, name, RENAME_EXCHANGE);
}

/*
 * A child that stands in for a second client racing the first: every name
 * "v-*" made in @dir is exchanged (RENAME_EXCHANGE) with a bait of its
 * own as soon as inotify reports it.  A client cannot time a RENAME that
 * closely over the wire, but one that sends them without pause wins
 * sometimes, and one win is enough.  Returns once the watch is in place.
 */
static pid_t swapper_start(const char *dir)
{
	int ready[2];
	pid_t pid;
	char c;

	CHECK(pipe(ready) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		static char buf[16384];
		int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC),
		    in = inotify_init1(IN_CLOEXEC);

		/* Gone with this process, even when a check fails. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
			_exit(1);
		if (dfd < 0 || in < 0 || inotify_add_watch(in, dir, IN_CREATE) < 0)
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;) {
			ssize_t n = read(in, buf, sizeof(buf));

			if (n <= 0)
				_exit(n < 0 ? 1 : 0);
			for (char *p = buf; p < buf + n;) {
				struct inotify_event *e = (struct inotify_event *)(void *)p;

				if (e->len && strncmp(e->name, "v-", 2) == 0)
					swap_one(dfd, e->name);
				p += sizeof(*e) + e->len;
			}
		}
	}
	close(ready[1]);
	CHECK(read(ready[0], &c, 1) == 1);
	close(ready[0]);
	return pid;
}

/* Makes @name in @dir with procedure @proc (CREATE GUARDED, MKDIR,
 * SYMLINK or MKNOD of a FIFO) as the caller of @k. */
static void make_named(struct conn *k, const struct rpcrdma_nfs3_fh *dir, uint32_t proc,
		       const char *name, struct rpcrdma_nfs3_create_res *r)
{
	union {
		struct rpcrdma_nfs3_create_args create;
		struct rpcrdma_nfs3_mkdir_args mkdir;
		struct rpcrdma_nfs3_symlink_args symlink;
		struct rpcrdma_nfs3_mknod_args mknod;
	} a;
	struct rpcrdma_nfs3_diropargs *where = &a.create.where;

	memset(&a, 0, sizeof(a));
	memset(r, 0, sizeof(*r));
	if (proc == RPCRDMA_NFS3_MKDIR) {
		where = &a.mkdir.where;
	} else if (proc == RPCRDMA_NFS3_SYMLINK) {
		where = &a.symlink.where;
		a.symlink.target.len = 4;
		memcpy(a.symlink.target.s, "mine", 5);
	} else if (proc == RPCRDMA_NFS3_MKNOD) {
		where = &a.mknod.where;
		a.mknod.type = RPCRDMA_NF3FIFO;
	} else {
		a.create.mode = RPCRDMA_GUARDED;
	}
	where->dir = *dir;
	name_set(&where->name, name);
	CHECK_RC(rpcrdma_nfs3_call(k->c, proc, &a, r), 0);
}

/*
 * CREATE, MKDIR, SYMLINK and MKNOD of names that the swapper exchanges
 * with objects of user 2000 as soon as they appear: the handle and
 * attributes in the answer are always those of the object the call made
 * (owned by the caller), never the bait.  Before, the server looked the
 * name up again after making it, and 141 of 300 CREATEs answered the
 * bait's handle: the client would have written its data into a file of
 * the other user's.
 */
static void swaps(void)
{
	static const struct {
		uint32_t proc;
		const char *what;
	} procs[] = {
	    {RPCRDMA_NFS3_CREATE, "CREATE"},
	    {RPCRDMA_NFS3_MKDIR, "MKDIR"},
	    {RPCRDMA_NFS3_SYMLINK, "SYMLINK"},
	    {RPCRDMA_NFS3_MKNOD, "MKNOD"},
	};
	struct who user = {.uid = 1000, .gid = 1000};
	struct rpcrdma_nfs3_create_res r;
	struct rpcrdma_nfs3_fh root, dir;
	char racedir[4096];
	struct conn k;
	pid_t swapper;
	int status;

	snprintf(racedir, sizeof(racedir), "%s/race", export_path);
	CHECK_RC(mnt(mport, export_path, &root), 0);
	conn_open(&k, &user, port, tr);
	CHECK_RC(lookup(&k, &root, "race", &dir), 0);
	swapper = swapper_start(racedir);
	for (size_t p = 0; p < sizeof(procs) / sizeof(procs[0]); p++) {
		unsigned int raced = 0, handles = 0;

		for (int i = 0; i < SWAP_ROUNDS; i++) {
			char name[64], bait[sizeof(racedir) + 80];
			struct stat st;

			snprintf(name, sizeof(name), "v-%zu-%d", p, i);
			make_named(&k, &dir, procs[p].proc, name, &r);
			CHECK_RC(r.status, 0);
			if (r.has_obj) {
				handles++;
				CHECK(r.obj_attr.present);
				CHECK_RC(r.obj_attr.attr.uid, user.uid);
			}
			snprintf(bait, sizeof(bait), "%s/bait-%s", racedir, name);
			for (int wait = 0; wait < 100 && lstat(bait, &st) < 0; wait++)
				usleep(1000);
			raced += lstat(bait, &st) == 0;
		}
		printf("ok - swaps: %u %ss raced by an exchange; %u answered a handle, each of "
		       "the caller's own object\n",
		       raced, procs[p].what, handles);
		fflush(stdout);
	}
	CHECK(kill(swapper, SIGTERM) == 0);
	CHECK(waitpid(swapper, &status, 0) == swapper);
	rpcrdma_client_destroy(k.c);
	well_behaved(port, &root, "swapped names");
}

/* Who may connect. */

static void split(const char *arg, char *p, char *m)
{
	const char *colon = strchr(arg, ':');

	CHECK(colon && (size_t)(colon - arg) < 16 && strlen(colon + 1) < 16);
	memcpy(p, arg, (size_t)(colon - arg));
	p[colon - arg] = '\0';
	strcpy(m, colon + 1);
}

/* GETATTR over TCP from a socket bound to a privileged port (the library's
 * client binds none): the reply's nfsstat3, or -1. */
static long getattr_from_reserved_port(const char *p, const struct rpcrdma_nfs3_fh *fh)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	uint32_t msg[64], *w = msg, reply[64];
	int fd = -1;
	long st = -1;
	ssize_t got;

	for (int lport = 1023; lport > 600 && fd < 0; lport--) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		CHECK(fd >= 0);
		sin.sin_port = htons((uint16_t)lport);
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0)
			break;
		close(fd);
		fd = -1;
	}
	CHECK(fd >= 0);
	sin.sin_port = htons((uint16_t)atoi(p));
	CHECK(connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	w++; /* the record mark */
	*w++ = htonl(0x5eed);                /* xid */
	*w++ = htonl(0);                     /* CALL */
	*w++ = htonl(2);                     /* rpcvers */
	*w++ = htonl(RPCRDMA_NFS_PROGRAM);
	*w++ = htonl(3);
	*w++ = htonl(RPCRDMA_NFS3_GETATTR);
	*w++ = htonl(RPCRDMA_AUTH_SYS);
	*w++ = htonl(20);                    /* stamp, empty name, uid, gid, no groups */
	*w++ = 0;
	*w++ = 0;
	*w++ = htonl(1000);
	*w++ = htonl(1000);
	*w++ = 0;
	*w++ = htonl(RPCRDMA_AUTH_NONE);
	*w++ = 0;
	*w++ = htonl(fh->len);
	memset(w, 0, (fh->len + 3) & ~3u);
	memcpy(w, fh->data, fh->len);
	w += (fh->len + 3) / 4;
	msg[0] = htonl(0x80000000u | (uint32_t)((w - msg - 1) * 4));
	CHECK(write(fd, msg, (size_t)(w - msg) * 4) == (ssize_t)((w - msg) * 4));
	{
		struct pollfd pf = {.fd = fd, .events = POLLIN};

		CHECK(poll(&pf, 1, 20000) == 1);
	}
	got = read(fd, reply, sizeof(reply));
	/* mark, xid, REPLY, MSG_ACCEPTED, verf (flavor, len 0), SUCCESS, status */
	if (got >= 32 && ntohl(reply[1]) == 0x5eed && ntohl(reply[3]) == 0 &&
	    ntohl(reply[6]) == 0)
		st = (long)ntohl(reply[7]);
	close(fd);
	return st;
}

static void access_case(const char *deny, const char *secure, const char *ro, const char *other)
{
	struct rpcrdma_nfs3_fh root, pub, fh;
	struct rpcrdma_nfs3_create_res cr;
	struct who user = {.uid = 1000, .gid = 1000};
	char p[16], m[16], opath[4096];
	struct conn k;

	CHECK_RC(mnt(mport, export_path, &root), 0);
	conn_open(&k, &user, port, tr);
	CHECK_RC(lookup(&k, &root, "pub", &pub), 0);
	rpcrdma_client_destroy(k.c);

	/* A host no entry admits. */
	split(deny, p, m);
	CHECK_RC(mnt(m, export_path, &fh), RPCRDMA_NFS3ERR_ACCES);
	conn_open(&k, &user, p, tr);
	CHECK_RC(getattr(&k, &root, NULL), RPCRDMA_NFS3ERR_ACCES);
	CHECK_RC(read_fh(&k, &pub), RPCRDMA_NFS3ERR_ACCES);
	CHECK_RC(create(&k, &root, "denied", RPCRDMA_GUARDED, 0644, &cr), RPCRDMA_NFS3ERR_ACCES);
	rpcrdma_client_destroy(k.c);
	printf("ok - access: a host not in the list gets MNT3ERR_ACCES and NFS3ERR_ACCES\n");

	/* secure: a privileged source port over TCP, and over software RDMA,
	 * which is a TCP connection any local user can open (verbs, where
	 * knfsd checks no port, is the lab's). */
	split(secure, p, m);
	CHECK_RC(mnt(m, export_path, &fh), RPCRDMA_NFS3ERR_ACCES);
	conn_open(&k, &user, p, tr);
	CHECK_RC(getattr(&k, &root, NULL), RPCRDMA_NFS3ERR_ACCES);
	CHECK_RC(read_fh(&k, &pub), RPCRDMA_NFS3ERR_ACCES);
	if (tr == RPCRDMA_TRANSPORT_TCP) {
		CHECK_RC(getattr_from_reserved_port(p, &root), RPCRDMA_NFS3_OK);
		printf("ok - access: secure refuses an unprivileged TCP port, serves port < 1024\n");
	} else {
		printf("ok - access: secure refuses software RDMA (ofi) from an unprivileged "
		       "port, and MOUNT over TCP from one\n");
	}
	rpcrdma_client_destroy(k.c);

	/* A read-only entry. */
	split(ro, p, m);
	conn_open(&k, &user, p, tr);
	CHECK_RC(read_fh(&k, &pub), RPCRDMA_NFS3_OK);
	CHECK_RC(create(&k, &root, "ro-made", RPCRDMA_GUARDED, 0644, &cr), RPCRDMA_NFS3ERR_ROFS);
	CHECK_RC(write_fh(&k, &pub), RPCRDMA_NFS3ERR_ROFS);
	CHECK_RC(nfs_mknod(&k, &root, "ro-fifo", RPCRDMA_NF3FIFO), RPCRDMA_NFS3ERR_ROFS);
	/* COMMIT asks for write access (knfsd's nfsd_commit, NFSD_MAY_WRITE),
	 * which a read-only export refuses with NFS3ERR_ROFS before any mode
	 * or owner is looked at: the owner of a 0444 file, and a reader. */
	{
		struct rpcrdma_nfs3_fh mine;

		CHECK_RC(lookup(&k, &root, "mine", &mine), 0);
		CHECK_RC(commit_fh(&k, &mine), RPCRDMA_NFS3ERR_ROFS);
		CHECK_RC(commit_fh(&k, &pub), RPCRDMA_NFS3ERR_ROFS);
	}
	{
		struct rpcrdma_nfs3_access_args a = {.obj = root, .access = 0x3f};
		struct rpcrdma_nfs3_access_res r;

		memset(&r, 0, sizeof(r));
		CHECK_RC(rpcrdma_nfs3_call(k.c, RPCRDMA_NFS3_ACCESS, &a, &r), 0);
		CHECK_RC(r.status, 0);
		CHECK_RC(r.access & (RPCRDMA_ACCESS3_MODIFY | RPCRDMA_ACCESS3_EXTEND |
				     RPCRDMA_ACCESS3_DELETE),
			 0);
	}
	rpcrdma_client_destroy(k.c);
	printf("ok - access: ro answers NFS3ERR_ROFS to changes, ACCESS grants none\n");

	/* Another export with the same key: our handles are not its. */
	{
		const char *c1 = strchr(other, ':');

		CHECK(c1 && (size_t)(c1 - other) < sizeof(opath));
		memcpy(opath, other, (size_t)(c1 - other));
		opath[c1 - other] = '\0';
		split(c1 + 1, p, m);
	}
	CHECK_RC(mnt(m, opath, &fh), 0);
	conn_open(&k, &user, p, tr);
	CHECK_RC(getattr(&k, &fh, NULL), RPCRDMA_NFS3_OK);
	{
		uint32_t st = getattr(&k, &root, NULL);

		CHECK(st == RPCRDMA_NFS3ERR_BADHANDLE || st == RPCRDMA_NFS3ERR_STALE);
		st = read_fh(&k, &pub);
		CHECK(st == RPCRDMA_NFS3ERR_BADHANDLE || st == RPCRDMA_NFS3ERR_STALE);
	}
	rpcrdma_client_destroy(k.c);
	printf("ok - access: another export refuses this export's handles\n");
	well_behaved(port, &root, "access attacks");
}

/* Mounts inside the export: "data" is a bind mount of a directory
 * outside it, on the same filesystem (so the same st_dev). */

static void mounts(void)
{
	static struct rpcrdma_nfs3_entry e[64];
	struct who user = {.uid = 1000, .gid = 1000};
	struct rpcrdma_nfs3_fh root, fh, sub, up;
	struct rpcrdma_nfs3_fattr root_attr, attr;
	struct rpcrdma_nfs3_readdir_args a;
	struct rpcrdma_nfs3_readdir_res r;
	bool seen = false;
	struct conn k;

	CHECK_RC(mnt(mport, export_path, &root), 0);
	conn_open(&k, &user, port, tr);
	CHECK_RC(getattr(&k, &root, &root_attr), 0);
	CHECK_RC(lookup(&k, &root, "data", &fh), RPCRDMA_NFS3ERR_ACCES);
	printf("ok - mounts: LOOKUP of a bind mount inside the export is refused\n");

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.dir = root;
	a.dircount = 8192;
	a.count = 32768;
	r.entries = e;
	r.max = 64;
	CHECK_RC(rpcrdma_nfs3_call(k.c, RPCRDMA_NFS3_READDIRPLUS, &a, &r), 0);
	CHECK_RC(r.status, 0);
	for (uint32_t i = 0; i < r.n; i++) {
		if (strcmp(e[i].name.s, "data") == 0) {
			seen = true;
			CHECK(!e[i].has_fh);
		}
	}
	CHECK(seen);
	printf("ok - mounts: READDIRPLUS lists the mount point without a handle\n");

	/* ".." stops at the export's root, from a subdirectory and from the
	 * root itself. */
	CHECK_RC(lookup(&k, &root, "sub", &sub), 0);
	CHECK_RC(lookup(&k, &sub, "..", &up), 0);
	CHECK_RC(getattr(&k, &up, &attr), 0);
	CHECK(attr.fileid == root_attr.fileid);
	CHECK_RC(lookup(&k, &root, "..", &up), 0);
	CHECK_RC(getattr(&k, &up, &attr), 0);
	CHECK(attr.fileid == root_attr.fileid);
	printf("ok - mounts: \"..\" never leaves the export's root\n");
	rpcrdma_client_destroy(k.c);
	well_behaved(port, &root, "mount point lookups");
}

/*
 * A directory a local user moves out of the export: its handle still
 * works (knfsd without subtree_check serves it too), but ".." from it, or
 * from anything below it, never answers a directory outside the export;
 * moved back, ".." works again.  With subtree_check (the server given by
 * @subtree), the moved directory's handle answers NFS3ERR_STALE for
 * LOOKUP and READDIR.  nfsd-attack made mv1/inner, and outside/, which
 * holds a file, next to the export.
 */
static void escape(const char *subtree)
{
	struct who user = {.uid = 1000, .gid = 1000};
	struct rpcrdma_nfs3_fh root, d, inner, up, fh;
	struct rpcrdma_nfs3_fattr root_attr, attr;
	struct rpcrdma_nfs3_readdir_args ra;
	struct rpcrdma_nfs3_readdir_res rr;
	static struct rpcrdma_nfs3_entry e[16];
	char from[PATH_MAX], to[PATH_MAX], sp[16], sm[16];
	struct stat out;
	struct conn k, ks;

	snprintf(from, sizeof(from), "%s/mv1", export_path);
	snprintf(to, sizeof(to), "%s/../outside/mv1", export_path);
	CHECK(stat(to, &out) != 0);
	snprintf(to, sizeof(to), "%s/../outside", export_path);
	CHECK(stat(to, &out) == 0);
	snprintf(to, sizeof(to), "%s/../outside/mv1", export_path);
	CHECK_RC(mnt(mport, export_path, &root), 0);
	conn_open(&k, &user, port, tr);
	CHECK_RC(getattr(&k, &root, &root_attr), 0);
	CHECK_RC(lookup(&k, &root, "mv1", &d), 0);
	CHECK_RC(lookup(&k, &d, "inner", &inner), 0);
	CHECK_RC(lookup(&k, &d, "..", &up), 0);
	CHECK_RC(getattr(&k, &up, &attr), 0);
	CHECK(attr.fileid == root_attr.fileid);
	split(subtree, sp, sm);
	conn_open(&ks, &user, sp, tr);
	{
		struct rpcrdma_nfs3_fh sroot, sd;

		CHECK_RC(mnt(sm, export_path, &sroot), 0);
		CHECK_RC(lookup(&ks, &sroot, "mv1", &sd), 0);
		CHECK_RC(lookup(&ks, &sd, "inner", NULL), 0);
		printf("ok - escape: inside the export, \"..\" and subtree_check answer as ever\n");

		CHECK_RC(rename(from, to), 0);
		CHECK_RC(lookup(&k, &d, "..", &up), RPCRDMA_NFS3ERR_STALE);
		CHECK_RC(lookup(&k, &inner, "..", &up), RPCRDMA_NFS3ERR_STALE);
		/* Up by the handle of the parent found outside, had one been
		 * given, is not possible: none was. */
		CHECK_RC(getattr(&k, &d, &attr), 0);
		CHECK_RC(lookup(&k, &d, "inner", &fh), 0);
		printf("ok - escape: \"..\" of a directory moved out of the export, and of one "
		       "below it, is NFS3ERR_STALE; its own handle still works (no_subtree_check)\n");

		CHECK_RC(lookup(&ks, &sd, "inner", NULL), RPCRDMA_NFS3ERR_STALE);
		CHECK_RC(lookup(&ks, &sd, "..", NULL), RPCRDMA_NFS3ERR_STALE);
		memset(&ra, 0, sizeof(ra));
		memset(&rr, 0, sizeof(rr));
		ra.dir = sd;
		ra.count = 8192;
		rr.entries = e;
		rr.max = 16;
		CHECK_RC(rpcrdma_nfs3_call(ks.c, RPCRDMA_NFS3_READDIR, &ra, &rr), 0);
		CHECK_RC(rr.status, RPCRDMA_NFS3ERR_STALE);
		CHECK_RC(getattr(&ks, &sd, NULL), 0);
		printf("ok - escape: with subtree_check, LOOKUP and READDIR in the moved "
		       "directory are NFS3ERR_STALE\n");

		CHECK_RC(rename(to, from), 0);
		CHECK_RC(lookup(&k, &inner, "..", &up), 0);
		CHECK_RC(lookup(&k, &up, "..", &fh), 0);
		CHECK_RC(getattr(&k, &fh, &attr), 0);
		CHECK(attr.fileid == root_attr.fileid);
		CHECK_RC(lookup(&ks, &sd, "inner", NULL), 0);
		printf("ok - escape: moved back, \"..\" climbs to the export's root again\n");
	}
	rpcrdma_client_destroy(ks.c);
	rpcrdma_client_destroy(k.c);
	well_behaved(port, &root, "a directory moved out and back");
}

/*
 * Creating calls as knfsd answers them (fs/nfsd/nfs3proc.c, vfs.c), each
 * as uid 1000: no mode asked is mode 0; an owner or group asked by a
 * caller other than root, and a size for a directory, are dropped rather
 * than made an error after the object exists; an EXCLUSIVE CREATE counts
 * as a retransmission only on an empty file of the caller's with the
 * verifier's times; and a WRITE whose count is not its data's length is
 * GARBAGE_ARGS.
 */
static void put_file(const char *name, uid_t uid, const char *data, const uint32_t times[2])
{
	char path[PATH_MAX];
	struct timespec t[2] = {{times[0], 0}, {times[1], 0}};
	int fd;

	snprintf(path, sizeof(path), "%s/%s", export_path, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	CHECK(fd >= 0);
	CHECK(write(fd, data, strlen(data)) == (ssize_t)strlen(data));
	CHECK_RC(fchown(fd, uid, uid), 0);
	CHECK_RC(fchmod(fd, 0666), 0);
	CHECK_RC(futimens(fd, t), 0);
	close(fd);
}

static uint32_t excl_create(struct conn *k, const struct rpcrdma_nfs3_fh *dir, const char *name,
			    const uint32_t v[2], struct rpcrdma_nfs3_create_res *r)
{
	struct rpcrdma_nfs3_create_args a;

	memset(&a, 0, sizeof(a));
	memset(r, 0, sizeof(*r));
	a.where.dir = *dir;
	name_set(&a.where.name, name);
	a.mode = RPCRDMA_EXCLUSIVE;
	memcpy(a.verf, &v[0], 4); /* the server keeps them as atime, mtime */
	memcpy(a.verf + 4, &v[1], 4);
	CHECK_RC(rpcrdma_nfs3_call(k->c, RPCRDMA_NFS3_CREATE, &a, r), 0);
	return r->status;
}

static uint32_t write_n(struct conn *k, const struct rpcrdma_nfs3_fh *fh, uint32_t count,
			uint32_t len)
{
	static uint8_t data[16] = "0123456789abcdef";
	struct rpcrdma_nfs3_write_args a;
	struct rpcrdma_nfs3_write_res r;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.file = *fh;
	a.count = count;
	a.len = len;
	a.data = data;
	a.stable = RPCRDMA_FILE_SYNC;
	rc = rpcrdma_nfs3_call(k->c, RPCRDMA_NFS3_WRITE, &a, &r);
	return rc ? (uint32_t)rc : r.status;
}

static void creates(void)
{
	static const uint32_t v[2] = {0x12345678u, 0x2468ace0u}, other[2] = {1, 2};
	struct who user = {.uid = 1000, .gid = 1000};
	struct rpcrdma_nfs3_fh root, fh;
	struct rpcrdma_nfs3_create_res cr, cr2;
	struct rpcrdma_nfs3_fattr attr;
	char path[PATH_MAX];
	struct stat st;
	struct conn k;

	CHECK_RC(mnt(mport, export_path, &root), 0);
	conn_open(&k, &user, port, tr);

	/* No mode asked: mode 0, for a file, a directory and a FIFO. */
	{
		struct rpcrdma_nfs3_create_args ca;
		struct rpcrdma_nfs3_mkdir_args ma;
		struct rpcrdma_nfs3_mknod_args na;

		memset(&ca, 0, sizeof(ca));
		ca.where.dir = root;
		name_set(&ca.where.name, "c-nomode");
		ca.mode = RPCRDMA_GUARDED;
		memset(&cr, 0, sizeof(cr));
		CHECK_RC(rpcrdma_nfs3_call(k.c, RPCRDMA_NFS3_CREATE, &ca, &cr), 0);
		CHECK_RC(cr.status, 0);
		CHECK_RC(cr.obj_attr.attr.mode, 0);
		memset(&ma, 0, sizeof(ma));
		ma.where.dir = root;
		name_set(&ma.where.name, "c-nomode-dir");
		memset(&cr, 0, sizeof(cr));
		CHECK_RC(rpcrdma_nfs3_call(k.c, RPCRDMA_NFS3_MKDIR, &ma, &cr), 0);
		CHECK_RC(cr.status, 0);
		CHECK_RC(cr.obj_attr.attr.mode, 0);
		memset(&na, 0, sizeof(na));
		na.where.dir = root;
		name_set(&na.where.name, "c-nomode-fifo");
		na.type = RPCRDMA_NF3FIFO;
		memset(&cr, 0, sizeof(cr));
		CHECK_RC(rpcrdma_nfs3_call(k.c, RPCRDMA_NFS3_MKNOD, &na, &cr), 0);
		CHECK_RC(cr.status, 0);
		CHECK_RC(cr.obj_attr.attr.mode, 0);
	}
	printf("ok - creates: CREATE, MKDIR and MKNOD without a mode make mode 0\n");

	/* A foreign group or owner on CREATE, a size on MKDIR: dropped. */
	{
		struct rpcrdma_nfs3_create_args ca;
		struct rpcrdma_nfs3_mkdir_args ma;

		memset(&ca, 0, sizeof(ca));
		ca.where.dir = root;
		name_set(&ca.where.name, "c-gid");
		ca.mode = RPCRDMA_GUARDED;
		ca.attr.set_mode = true;
		ca.attr.mode = 0644;
		ca.attr.set_gid = true;
		ca.attr.gid = 4242;
		ca.attr.set_uid = true;
		ca.attr.uid = 2000;
		memset(&cr, 0, sizeof(cr));
		CHECK_RC(rpcrdma_nfs3_call(k.c, RPCRDMA_NFS3_CREATE, &ca, &cr), 0);
		CHECK_RC(cr.status, 0);
		CHECK(cr.has_obj && cr.obj_attr.present);
		CHECK_RC(cr.obj_attr.attr.uid, 1000);
		CHECK_RC(cr.obj_attr.attr.gid, 1000);
		memset(&ma, 0, sizeof(ma));
		ma.where.dir = root;
		name_set(&ma.where.name, "c-size-dir");
		ma.attr.set_mode = true;
		ma.attr.mode = 0755;
		ma.attr.set_size = true;
		ma.attr.size = 5;
		memset(&cr, 0, sizeof(cr));
		CHECK_RC(rpcrdma_nfs3_call(k.c, RPCRDMA_NFS3_MKDIR, &ma, &cr), 0);
		CHECK_RC(cr.status, 0);
		CHECK(cr.has_obj);
		CHECK_RC(cr.obj_attr.attr.type, RPCRDMA_NF3DIR);
	}
	printf("ok - creates: a foreign owner or group on CREATE and a size on MKDIR are "
	       "dropped, the call answers NFS3_OK\n");

	/* EXCLUSIVE: our own retransmission matches, nothing else does. */
	CHECK_RC(excl_create(&k, &root, "c-excl", v, &cr), 0);
	CHECK(cr.has_obj && cr.obj_attr.present);
	CHECK_RC(excl_create(&k, &root, "c-excl", v, &cr2), 0);
	CHECK(cr2.obj_attr.present && cr2.obj_attr.attr.fileid == cr.obj_attr.attr.fileid);
	CHECK_RC(excl_create(&k, &root, "c-excl", other, &cr2), RPCRDMA_NFS3ERR_EXIST);
	/* Mode 0 as knfsd makes it (until the client's SETATTR), written
	 * by its owner all the same. */
	CHECK_RC(cr.obj_attr.attr.mode & 07777, 0);
	CHECK_RC(write_n(&k, &cr.obj, 16, 16), 0);
	put_file("c-excl-theirs", 2000, "other's data\n", v);
	CHECK_RC(excl_create(&k, &root, "c-excl-theirs", v, &cr2), RPCRDMA_NFS3ERR_EXIST);
	CHECK(!cr2.has_obj);
	put_file("c-excl-theirs-empty", 2000, "", v);
	CHECK_RC(excl_create(&k, &root, "c-excl-theirs-empty", v, &cr2), RPCRDMA_NFS3ERR_EXIST);
	put_file("c-excl-full", 1000, "written data\n", v);
	CHECK_RC(excl_create(&k, &root, "c-excl-full", v, &cr2), RPCRDMA_NFS3ERR_EXIST);
	snprintf(path, sizeof(path), "%s/c-excl-theirs", export_path);
	CHECK(stat(path, &st) == 0 && st.st_size == 13 && st.st_uid == 2000);
	printf("ok - creates: EXCLUSIVE makes mode 0 that its owner writes, and matches an "
	       "empty file of the caller's with the verifier, not another's file or a "
	       "written one\n");

	/* WRITE's count must be its data's length. */
	CHECK_RC(lookup(&k, &root, "c-gid", &fh), 0);
	CHECK_RC(write_n(&k, &fh, 4, 16), (uint32_t)RPCRDMA_ERR_RPC_REJECTED);
	CHECK_RC(write_n(&k, &fh, 16, 4), (uint32_t)RPCRDMA_ERR_RPC_REJECTED);
	CHECK_RC(getattr(&k, &fh, &attr), 0);
	CHECK_RC(attr.size, 0);
	CHECK_RC(write_n(&k, &fh, 16, 16), 0);
	CHECK_RC(getattr(&k, &fh, &attr), 0);
	CHECK_RC(attr.size, 16);
	printf("ok - creates: a WRITE whose count is not its data's length is GARBAGE_ARGS\n");
	rpcrdma_client_destroy(k.c);
	well_behaved(port, &root, "creating calls");
}

/*
 * ACCESS as knfsd maps the mode (nfs3_diraccess, nfs3_regaccess): in a
 * directory MODIFY, EXTEND and DELETE need write and search, LOOKUP is
 * search, EXECUTE never; a file has no DELETE and no LOOKUP.  Root, not
 * squashed, passes the mode for reading and writing and executes what
 * anyone may (a directory always), as the kernel lets it.  The objects,
 * all uid 1000's, are made here (as root, on this host).
 */
static uint32_t access_of(struct conn *k, const struct rpcrdma_nfs3_fh *dir, const char *name)
{
	struct rpcrdma_nfs3_access_args a;
	struct rpcrdma_nfs3_access_res r;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	CHECK_RC(lookup(k, dir, name, &a.obj), 0);
	a.access = 0x3f;
	CHECK_RC(rpcrdma_nfs3_call(k->c, RPCRDMA_NFS3_ACCESS, &a, &r), 0);
	CHECK_RC(r.status, 0);
	return r.access;
}

enum {
	DIR_ALL = RPCRDMA_ACCESS3_READ | RPCRDMA_ACCESS3_LOOKUP | RPCRDMA_ACCESS3_MODIFY |
		  RPCRDMA_ACCESS3_EXTEND | RPCRDMA_ACCESS3_DELETE,
	FILE_RW = RPCRDMA_ACCESS3_READ | RPCRDMA_ACCESS3_MODIFY | RPCRDMA_ACCESS3_EXTEND,
};

/* What ACCESS grants on each object: its owner (uid 1000), anyone else
 * (squashed root among them), and root not squashed. */
enum access_who { AS_OWNER, AS_OTHER, AS_ROOT };

static const struct {
	const char *name;
	bool dir;
	mode_t mode;
	uint32_t want[3]; /* by enum access_who */
} access_objs[] = {
    {"a-dir-rw", true, 0600, {RPCRDMA_ACCESS3_READ, 0, DIR_ALL}},
    {"a-dir-wx",
     true,
     0300,
     {RPCRDMA_ACCESS3_LOOKUP | RPCRDMA_ACCESS3_MODIFY | RPCRDMA_ACCESS3_EXTEND |
	  RPCRDMA_ACCESS3_DELETE,
      0, DIR_ALL}},
    {"a-dir-rx", true, 0500, {RPCRDMA_ACCESS3_READ | RPCRDMA_ACCESS3_LOOKUP, 0, DIR_ALL}},
    {"a-dir-none", true, 0000, {0, 0, DIR_ALL}},
    {"a-file-rw", false, 0600, {FILE_RW, 0, FILE_RW}},
    {"a-file-x", false, 0100, {RPCRDMA_ACCESS3_EXECUTE, 0, FILE_RW | RPCRDMA_ACCESS3_EXECUTE}},
    {"a-file-ox", false, 0001, {0, RPCRDMA_ACCESS3_EXECUTE, FILE_RW | RPCRDMA_ACCESS3_EXECUTE}},
    {"a-file-none", false, 0000, {0, 0, FILE_RW}},
};

/* ACCESS of every object in the export @dir, as @w on the server at @p. */
static void access_all(const struct who *w, const char *p, const struct rpcrdma_nfs3_fh *dir,
		       enum access_who as)
{
	struct conn k;

	conn_open(&k, w, p, tr);
	for (size_t i = 0; i < sizeof(access_objs) / sizeof(access_objs[0]); i++)
		CHECK_RC(access_of(&k, dir, access_objs[i].name), access_objs[i].want[as]);
	rpcrdma_client_destroy(k.c);
}

/* FS_IOC_SETFLAGS on @path: 0 or -errno. */
static int inode_flags_set(const char *path, int flags)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = ioctl(fd, FS_IOC_SETFLAGS, &flags) ? -errno : 0;
	close(fd);
	return rc;
}

/* A file of 1000's, mode 0666, made here (we run on the server's host). */
static void make_0666(const char *path, uid_t owner)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	CHECK(fd >= 0);
	close(fd);
	CHECK_RC(chown(path, owner, owner), 0);
	CHECK_RC(chmod(path, 0666), 0);
}

/*
 * What the mode bits do not show, as knfsd's nfsd_permission sees it: a
 * file anyone may read and write by its mode, with a POSIX ACL that gives
 * user 1000 nothing (ACCESS 0 for 1000, all for root); an immutable file
 * (READ alone, for its owner and for root); an append-only one (no
 * MODIFY, since that includes truncating).  Before, ACCESS read the mode
 * bits alone and granted all three.  Each is checked where the export's
 * filesystem takes it; the flags are taken off again so that the export
 * can be removed.
 */
static void access_beyond_mode(const struct who *user, const struct who *rootwho,
			       const char *rootport, const struct rpcrdma_nfs3_fh *root,
			       const struct rpcrdma_nfs3_fh *rroot)
{
	static const struct {
		const char *name;
		int flag;
		uint32_t want;
	} flagged[] = {
	    {"a-file-immutable", FS_IMMUTABLE_FL, RPCRDMA_ACCESS3_READ},
	    {"a-file-append", FS_APPEND_FL, RPCRDMA_ACCESS3_READ | RPCRDMA_ACCESS3_EXTEND},
	};
	char path[PATH_MAX];
	struct conn k, rk;

	conn_open(&k, user, port, tr);
	conn_open(&rk, rootwho, rootport, tr);
	snprintf(path, sizeof(path), "%s/a-file-acl", export_path);
	make_0666(path, 2000);
	if (acl_deny_1000(path, 6, 6)) {
		CHECK_RC(access_of(&k, root, "a-file-acl"), 0);
		CHECK_RC(access_of(&rk, rroot, "a-file-acl"), FILE_RW);
		printf("ok - accessbits: a POSIX ACL that gives the caller nothing denies it "
		       "ACCESS, whatever the mode\n");
	} else {
		printf("# not checked: the export's filesystem takes no POSIX ACL\n");
	}
	for (size_t i = 0; i < sizeof(flagged) / sizeof(flagged[0]); i++) {
		int rc;

		snprintf(path, sizeof(path), "%s/%s", export_path, flagged[i].name);
		make_0666(path, 1000);
		rc = inode_flags_set(path, flagged[i].flag);
		if (rc) {
			CHECK(rc == -EOPNOTSUPP || rc == -ENOTTY || rc == -EPERM);
			printf("# not checked: %s (FS_IOC_SETFLAGS: %s)\n", flagged[i].name,
			       strerror(-rc));
			continue;
		}
		CHECK_RC(access_of(&k, root, flagged[i].name), flagged[i].want);
		CHECK_RC(access_of(&rk, rroot, flagged[i].name), flagged[i].want);
		CHECK_RC(inode_flags_set(path, 0), 0);
		printf("ok - accessbits: %s of mode 0666 grants its owner and root %s\n",
		       flagged[i].name, i == 0 ? "READ alone" : "READ and EXTEND, no MODIFY");
	}
	rpcrdma_client_destroy(rk.c);
	rpcrdma_client_destroy(k.c);
}

static void accessbits(const char *rootsrv)
{
	static const struct who user = {.uid = 1000, .gid = 1000}, rootwho = {.uid = 0, .gid = 0};
	struct rpcrdma_nfs3_fh root, rroot;
	char path[PATH_MAX], p[16], m[16];

	for (size_t i = 0; i < sizeof(access_objs) / sizeof(access_objs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", export_path, access_objs[i].name);
		if (access_objs[i].dir) {
			CHECK_RC(mkdir(path, 0700), 0);
		} else {
			int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

			CHECK(fd >= 0);
			close(fd);
		}
		CHECK_RC(chown(path, 1000, 1000), 0);
		CHECK_RC(chmod(path, access_objs[i].mode), 0);
	}
	CHECK_RC(mnt(mport, export_path, &root), 0);
	access_all(&user, port, &root, AS_OWNER);
	printf("ok - accessbits: a directory needs write and search for MODIFY, EXTEND and "
	       "DELETE; a file never gets DELETE\n");
	access_all(&rootwho, port, &root, AS_OTHER);
	split(rootsrv, p, m);
	CHECK_RC(mnt(m, export_path, &rroot), 0);
	access_all(&rootwho, p, &rroot, AS_ROOT);
	printf("ok - accessbits: root squashed gets what anyone gets; not squashed, it reads "
	       "and writes any mode and executes a file only if anyone may\n");
	access_beyond_mode(&user, &rootwho, p, &root, &rroot);
	well_behaved(port, &root, "ACCESS calls");
}

/* Capabilities: the blocks ext4 keeps for root. */

/* Writes up to 1 MiB to a new file @name in 64 KiB FILE_SYNC pieces; the
 * bytes written, and the status that stopped it in *@st. */
static uint32_t fill(struct conn *k, const struct rpcrdma_nfs3_fh *root, const char *name,
		     uint32_t *st)
{
	static uint8_t data[65536];
	struct rpcrdma_nfs3_create_res cr;
	uint32_t done = 0;

	memset(data, 0x5a, sizeof(data));
	CHECK_RC(create(k, root, name, RPCRDMA_GUARDED, 0644, &cr), 0);
	*st = RPCRDMA_NFS3_OK;
	while (done < (1u << 20) && *st == RPCRDMA_NFS3_OK) {
		struct rpcrdma_nfs3_write_args a;
		struct rpcrdma_nfs3_write_res r;

		memset(&a, 0, sizeof(a));
		memset(&r, 0, sizeof(r));
		a.file = cr.obj;
		a.offset = done;
		a.count = a.len = sizeof(data);
		a.data = data;
		a.stable = RPCRDMA_FILE_SYNC;
		CHECK_RC(rpcrdma_nfs3_call(k->c, RPCRDMA_NFS3_WRITE, &a, &r), 0);
		*st = r.status;
		if (r.status == RPCRDMA_NFS3_OK)
			done += r.count;
	}
	return done;
}

static void caps(const char *rootsrv)
{
	static const struct who ws[] = {{.uid = 1000, .gid = 1000}, {.uid = 0, .gid = 0}};
	struct rpcrdma_nfs3_fh root, rroot;
	char p[16], m[16], name[32];
	struct conn k;
	uint32_t st, n;

	CHECK_RC(mnt(mport, export_path, &root), 0);
	for (size_t i = 0; i < 2; i++) {
		conn_open(&k, &ws[i], port, tr);
		snprintf(name, sizeof(name), "fill-%zu", i);
		n = fill(&k, &root, name, &st);
		printf("# caps: uid %u wrote %u bytes, then status %u\n", ws[i].uid, n, st);
		CHECK_RC(st, RPCRDMA_NFS3ERR_NOSPC);
		CHECK(n < (1u << 20));
		rpcrdma_client_destroy(k.c);
	}
	printf("ok - caps: a user and squashed root cannot use root's reserved blocks\n");
	/* The control: the same writes as real root do use them. */
	split(rootsrv, p, m);
	CHECK_RC(mnt(m, export_path, &rroot), 0);
	conn_open(&k, &ws[1], p, tr);
	n = fill(&k, &rroot, "fill-root", &st);
	printf("# caps: root (no_root_squash) wrote %u bytes, status %u\n", n, st);
	CHECK_RC(st, RPCRDMA_NFS3_OK);
	CHECK_RC(n, 1u << 20);
	rpcrdma_client_destroy(k.c);
	printf("ok - caps: root with no_root_squash can (the test tells the two apart)\n");
	well_behaved(port, &root, "filling the disk");
}

/* The work queue. */

#define FLOOD_CONNS 4
#define FLOOD_CALLS 32

struct rd {
	struct rpcrdma_call call;
	struct rpcrdma_nfs3_readdir_args a;
	struct rpcrdma_nfs3_readdir_res r;
	struct rpcrdma_nfs3_entry *e;
	bool done;
};

static void rd_done(struct rpcrdma_call *call, void *ctx)
{
	(void)call;
	((struct rd *)ctx)->done = true;
}

static void queue(void)
{
	static struct rd q[FLOOD_CONNS][FLOOD_CALLS];
	struct who user = {.uid = 1000, .gid = 1000};
	struct rpcrdma_nfs3_fh root, big;
	struct conn k[FLOOD_CONNS];
	unsigned int jukebox = 0, ok = 0, left;

	CHECK_RC(mnt(mport, export_path, &root), 0);
	for (int c = 0; c < FLOOD_CONNS; c++) {
		conn_open(&k[c], &user, port, tr);
		CHECK_RC(rpcrdma_client_connect(k[c].c), 0);
	}
	CHECK_RC(lookup(&k[0], &root, "big", &big), 0);
	for (int c = 0; c < FLOOD_CONNS; c++) {
		for (int i = 0; i < FLOOD_CALLS; i++) {
			struct rd *d = &q[c][i];

			memset(d, 0, sizeof(*d));
			d->e = calloc(RPCRDMA_NFS3_DIR_MAX, sizeof(*d->e));
			CHECK(d->e);
			d->a.dir = big;
			d->a.dircount = 65536;
			d->a.count = 65536;
			d->r.entries = d->e;
			d->r.max = RPCRDMA_NFS3_DIR_MAX;
			d->r.plus = true;
			d->call.proc = RPCRDMA_NFS3_READDIRPLUS;
			d->call.encode_args = rpcrdma_nfs3_encode_args(RPCRDMA_NFS3_READDIRPLUS);
			d->call.args = &d->a;
			d->call.decode_res = rpcrdma_nfs3_decode_res(RPCRDMA_NFS3_READDIRPLUS);
			d->call.res = &d->r;
			d->call.max_reply = rpcrdma_nfs3_max_reply(RPCRDMA_NFS3_READDIRPLUS, 65536);
			d->call.done = rd_done;
			d->call.ctx = d;
			CHECK_RC(rpcrdma_client_call_async(k[c].c, &d->call), 0);
		}
	}
	do {
		CHECK(rpcrdma_loop_run_once(loop, 1000) >= 0);
		left = 0;
		for (int c = 0; c < FLOOD_CONNS; c++)
			for (int i = 0; i < FLOOD_CALLS; i++)
				left += !q[c][i].done;
	} while (left);
	for (int c = 0; c < FLOOD_CONNS; c++) {
		for (int i = 0; i < FLOOD_CALLS; i++) {
			CHECK_RC(q[c][i].call.status, 0);
			if (q[c][i].r.status == RPCRDMA_NFS3ERR_JUKEBOX)
				jukebox++;
			else if (q[c][i].r.status == RPCRDMA_NFS3_OK)
				ok++;
			free(q[c][i].e);
		}
		rpcrdma_client_destroy(k[c].c);
	}
	printf("# queue: %u answered, %u NFS3ERR_JUKEBOX\n", ok, jukebox);
	CHECK(jukebox > 0);
	CHECK(ok > 0);
	CHECK_RC(ok + jukebox, FLOOD_CONNS * FLOOD_CALLS);
	printf("ok - queue: a full queue answers NFS3ERR_JUKEBOX, every call answered\n");
	well_behaved(port, &root, "a flood");
}

/* Calls, several at a time, until the server goes away (the stop test). */
static void load(int seconds)
{
	struct who user = {.uid = 1000, .gid = 1000};
	struct rpcrdma_nfs3_fh root;
	struct pending p[8];
	struct conn k;
	time_t end = time(NULL) + seconds;
	unsigned long n = 0;

	CHECK_RC(mnt(mport, export_path, &root), 0);
	conn_open(&k, &user, port, tr);
	printf("loading\n");
	fflush(stdout);
	while (time(NULL) < end) {
		unsigned int left = 8;

		for (int i = 0; i < 8; i++) {
			memset(&p[i], 0, sizeof(p[i]));
			p[i].a.where.dir = root;
			name_set(&p[i].a.where.name, "load");
			p[i].a.mode = RPCRDMA_UNCHECKED;
			p[i].call.proc = RPCRDMA_NFS3_CREATE;
			p[i].call.encode_args = rpcrdma_nfs3_encode_args(RPCRDMA_NFS3_CREATE);
			p[i].call.args = &p[i].a;
			p[i].call.decode_res = rpcrdma_nfs3_decode_res(RPCRDMA_NFS3_CREATE);
			p[i].call.res = &p[i].r;
			p[i].call.max_reply = rpcrdma_nfs3_max_reply(RPCRDMA_NFS3_CREATE, 0);
			p[i].call.done = pending_done;
			p[i].call.ctx = &p[i];
			if (rpcrdma_client_call_async(k.c, &p[i].call)) {
				p[i].done = true;
				left--;
			}
		}
		while (left) {
			if (rpcrdma_loop_run_once(loop, 1000) < 0)
				break;
			left = 0;
			for (int i = 0; i < 8; i++)
				left += !p[i].done;
		}
		for (int i = 0; i < 8; i++)
			n += p[i].call.status == 0;
	}
	printf("# load: %lu calls answered\n", n);
	rpcrdma_client_destroy(k.c);
}

#define READS_AT_ONCE 24 /* more than one batch of the server's READ buffers */

struct rd_call {
	struct rpcrdma_call call;
	struct rpcrdma_nfs3_read_args a;
	struct rpcrdma_nfs3_read_res r;
	uint8_t *buf;
	bool done;
};

static void rd_call_done(struct rpcrdma_call *call, void *ctx)
{
	(void)call;
	((struct rd_call *)ctx)->done = true;
}

/* READs of sizes[i % n] bytes, READS_AT_ONCE at a time, each checked
 * against the file's bytes in @want. */
static void read_round(struct conn *k, const struct rpcrdma_nfs3_fh *fh, unsigned int round,
		       const uint32_t *sizes, size_t nsizes, const uint8_t *want, size_t have)
{
	static struct rd_call q[READS_AT_ONCE];
	unsigned int left = READS_AT_ONCE;

	for (unsigned int i = 0; i < READS_AT_ONCE; i++) {
		struct rd_call *d = &q[i];
		uint32_t size = sizes[i % nsizes];

		if (!d->buf)
			CHECK((d->buf = malloc(RPCRDMA_NFS3_MAXDATA)) != NULL);
		memset(&d->call, 0, sizeof(d->call));
		memset(&d->a, 0, sizeof(d->a));
		memset(&d->r, 0, sizeof(d->r));
		d->done = false;
		d->a.file = *fh;
		d->a.offset = ((uint64_t)round * 4096u + (uint64_t)i * 65536u) % have;
		d->a.count = size;
		d->r.data = d->buf;
		d->r.data_max = RPCRDMA_NFS3_MAXDATA;
		d->call.proc = RPCRDMA_NFS3_READ;
		d->call.encode_args = rpcrdma_nfs3_encode_args(RPCRDMA_NFS3_READ);
		d->call.args = &d->a;
		d->call.decode_res = rpcrdma_nfs3_decode_res(RPCRDMA_NFS3_READ);
		d->call.res = &d->r;
		d->call.ddp_buf = d->buf;
		d->call.ddp_len = size;
		d->call.max_reply = rpcrdma_nfs3_max_reply(RPCRDMA_NFS3_READ, size);
		d->call.done = rd_call_done;
		d->call.ctx = d;
		CHECK_RC(rpcrdma_client_call_async(k->c, &d->call), 0);
	}
	while (left) {
		CHECK(rpcrdma_loop_run_once(loop, 1000) >= 0);
		left = 0;
		for (unsigned int i = 0; i < READS_AT_ONCE; i++)
			left += !q[i].done;
	}
	for (unsigned int i = 0; i < READS_AT_ONCE; i++) {
		const struct rd_call *d = &q[i];
		uint64_t off = d->a.offset;
		size_t expect = have - off < d->a.count ? have - off : d->a.count;

		CHECK_RC(d->call.status, 0);
		CHECK_RC(d->r.status, 0);
		CHECK_RC(d->r.len, expect);
		CHECK(memcmp(d->buf, want + off, expect) == 0);
	}
}

/* With --pause FILE: FILE is made after @at rounds, and the next round
 * starts once it is gone (nfsd-attack reads the server's counters then,
 * on the same connection). */
static void pause_at(const char *file)
{
	FILE *f = fopen(file, "w");

	CHECK(f != NULL);
	fclose(f);
	for (int i = 0; i < 3000 && access(file, F_OK) == 0; i++)
		usleep(10000);
	CHECK(access(file, F_OK) != 0);
}

static void reads(int rounds, const char *pause)
{
	static const uint32_t sizes[] = {4096, 65536, 262144, 1048576, 1000000, 40000};
	struct who user = {.uid = 1000, .gid = 1000};
	struct rpcrdma_nfs3_fh root, fh;
	char path[4096];
	uint8_t *want;
	struct stat st;
	struct conn k;
	FILE *f;

	snprintf(path, sizeof(path), "%s/data", export_path);
	f = fopen(path, "rb");
	CHECK(f && fstat(fileno(f), &st) == 0 && st.st_size > 0);
	want = malloc((size_t)st.st_size);
	CHECK(want && fread(want, 1, (size_t)st.st_size, f) == (size_t)st.st_size);
	fclose(f);
	CHECK_RC(mnt(mport, export_path, &root), 0);
	conn_open(&k, &user, port, tr);
	CHECK_RC(lookup(&k, &root, "data", &fh), 0);
	for (int n = 0; n < rounds; n++) {
		if (pause && n == rounds / 2)
			pause_at(pause);
		read_round(&k, &fh, (unsigned int)n, sizes, sizeof(sizes) / sizeof(sizes[0]), want,
			   (size_t)st.st_size);
	}
	printf("ok - reads: %d rounds of %d READs at once, data as on disk\n", rounds,
	       READS_AT_ONCE);
	rpcrdma_client_destroy(k.c);
	free(want);
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
	    {"transport", required_argument, NULL, 't'},
	    {"export", required_argument, NULL, 'e'},
	    {"port", required_argument, NULL, 'p'},
	    {"mount-port", required_argument, NULL, 'm'},
	    {"deny", required_argument, NULL, 'd'},
	    {"secure", required_argument, NULL, 's'},
	    {"ro", required_argument, NULL, 'r'},
	    {"other", required_argument, NULL, 'o'},
	    {"root", required_argument, NULL, 'R'},
	    {"seconds", required_argument, NULL, 'S'},
	    {"pause", required_argument, NULL, 'X'},
	    {"subtree", required_argument, NULL, 'T'},
	    {NULL, 0, NULL, 0},
	};
	const char *deny = NULL, *secure = NULL, *ro = NULL, *other = NULL, *rootsrv = NULL, *what;
	const char *pause = NULL, *subtree = NULL;
	int c, seconds = 10;

	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 't':
			tr = strcmp(optarg, "tcp") == 0 ? RPCRDMA_TRANSPORT_TCP
							: RPCRDMA_TRANSPORT_RDMA;
			break;
		case 'e':
			export_path = optarg;
			break;
		case 'p':
			snprintf(port, sizeof(port), "%s", optarg);
			break;
		case 'm':
			snprintf(mport, sizeof(mport), "%s", optarg);
			break;
		case 'd':
			deny = optarg;
			break;
		case 's':
			secure = optarg;
			break;
		case 'r':
			ro = optarg;
			break;
		case 'o':
			other = optarg;
			break;
		case 'R':
			rootsrv = optarg;
			break;
		case 'S':
			seconds = atoi(optarg);
			break;
		case 'X':
			pause = optarg;
			break;
		case 'T':
			subtree = optarg;
			break;
		default:
			return 2;
		}
	}
	if (optind != argc - 1 || !export_path || !*port || !*mport) {
		fprintf(stderr, "usage: nfsd_attack CASE --transport rdma|tcp --export PATH "
				"--port P --mount-port M [...]\n");
		return 2;
	}
	what = argv[optind];
	CHECK_RC(rpcrdma_loop_create(&loop), 0);
	if (strcmp(what, "served") == 0) {
		struct rpcrdma_nfs3_fh root;

		CHECK_RC(mnt(mport, export_path, &root), 0);
		well_behaved(port, &root, "its descriptors were taken");
	} else if (strcmp(what, "identity") == 0) {
		identity();
	} else if (strcmp(what, "squash") == 0) {
		squash();
	} else if (strcmp(what, "special") == 0) {
		special();
	} else if (strcmp(what, "modes") == 0) {
		modes();
	} else if (strcmp(what, "errors") == 0) {
		errors();
	} else if (strcmp(what, "perms") == 0) {
		perms();
	} else if (strcmp(what, "sizes") == 0) {
		sizes();
	} else if (strcmp(what, "swaps") == 0) {
		swaps();
	} else if (strcmp(what, "access") == 0) {
		CHECK(deny && secure && ro && other);
		access_case(deny, secure, ro, other);
	} else if (strcmp(what, "caps") == 0) {
		CHECK(rootsrv);
		caps(rootsrv);
	} else if (strcmp(what, "mounts") == 0) {
		mounts();
	} else if (strcmp(what, "accessbits") == 0) {
		CHECK(rootsrv);
		accessbits(rootsrv);
	} else if (strcmp(what, "creates") == 0) {
		creates();
	} else if (strcmp(what, "escape") == 0) {
		CHECK(subtree);
		escape(subtree);
	} else if (strcmp(what, "queue") == 0) {
		queue();
	} else if (strcmp(what, "load") == 0) {
		load(seconds);
	} else if (strcmp(what, "reads") == 0) {
		reads(seconds, pause);
	} else {
		fprintf(stderr, "unknown case %s\n", what);
		return 2;
	}
	CHECK_RC(rpcrdma_loop_destroy(loop), 0);
	return 0;
}
