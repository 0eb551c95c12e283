/*
 * Allocation failures in rpcrdma-nfsd, one at a time: round n starts the
 * server with alloc_fail_preload.so, which fails the n-th allocation the
 * server's own code makes while a fixed NFSv3 workload runs against it
 * (MNT, FSINFO, GETATTR, CREATE, LOOKUP, WRITE small and 256 KiB, READ the
 * same, READDIR, READDIRPLUS of a few entries and of 400, which takes the
 * Reply chunk over RDMA, REMOVE), for n = 1, 2, ... until a round's
 * workload no longer reaches the n-th allocation.  Each round checks:
 *   - the server neither dies nor hangs: every call gets an answer (a
 *     reply, an error, or its connection closed) within its time-out, and
 *     a reply of NFS3_OK carries the right results, never garbage;
 *   - once memory is back, a new client runs the whole workload with
 *     every call succeeding: one failure does not break the server;
 *   - with the clients gone, the server holds as many descriptors as
 *     before the workload;
 *   - SIGTERM stops it with status 0, and by then it has given back every
 *     block its own code allocated (the preload keeps count).
 *
 * With --startup the allocation failed is one of the server's start
 * instead: it may refuse to start (status 1, its reason said), or start
 * and then serve the whole workload as well as ever (it checks as above).
 *
 * With --shutdown it is one of the server's stop: the workload runs with
 * memory there, its client stays connected, and SIGTERM comes with the
 * failure armed.  The server must still end within 20 s with status 0,
 * having given back every block its own code allocated: a stop that
 * cannot allocate may do less on the way out, never leak or hang.
 *
 * Usage: nfsd_alloc_fail --transport tcp|rdma [--workers N] [--nconnect N]
 *        [--v2] [--startup|--shutdown] NFSD PRELOAD
 * (--workers: the server's, which then serves NFS on worker loops;
 * --nconnect, --v2: the client's connections, and RPC-over-RDMA Version
 * Two offered)
 * NFSD_ALLOC_FAIL_ROUND=n runs round n only (with ALLOC_FAIL_TRACE set,
 * the server prints where that allocation was made).  Exits 77 without
 * root: rpcrdma-nfsd needs it (open_by_handle_at).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rpcrdma/loop.h"
#include "rpcrdma/nfs3.h"
#include "rpcrdma/rpc_msg.h"

#define SKIP_EXIT 77
#define ROUNDS_MAX 3000
#define HOST "127.0.0.1"
/* Far above what any call takes on a loaded machine: a call that reaches
 * it was never going to be answered. */
#define CALL_TIMEOUT_MS 20000
#define SMALL_LEN 100u
#define BIG_LEN (256u << 10)
#define FILE_LEN (SMALL_LEN + BIG_LEN)
#define DIR_ENTRIES 1024u
/* A directory whose READDIRPLUS reply (some 90 KB) is beyond every inline
 * size: over RDMA it comes through the Reply chunk. */
#define MANY 400
#define MANY_NAME "entry-%04d-with-a-long-name-for-a-large-reply"

extern char **environ;

static enum rpcrdma_transport tr;
static const char *workers = "0"; /* --workers: the server's worker loops */
static uint32_t max_vers;         /* --v2: the client offers RPC-over-RDMA Version Two */
static unsigned int nconnect;     /* --nconnect N: the client's connections */
/* --startup: the allocation failed is of the server's own start, not of
 * the workload (which then runs with memory back). */
static bool startup;
/* --shutdown: the allocation failed is of the server's stop. */
static bool shutdown_mode;
static long refused_starts;
static const char *nfsd_path, *preload_path;
static struct rpcrdma_loop *loop;
static char work[256];    /* this run's directory: exports, logs, reports */
static uint8_t *pattern;  /* FILE_LEN bytes, what the file holds once written */
static uint8_t *readback; /* room for a READ of BIG_LEN */
static struct rpcrdma_nfs3_entry *entries;
static long baseline_tracked;
static bool show_log; /* one round only: its server's log, where it failed */

/* ------------------------------------------------------------ the server */

struct server {
	pid_t pid;
	char dir[300], log[300], report[300];
	unsigned int port, mport; /* NFS on the transport under test; MOUNT */
	bool exited;
	int status; /* waitpid's, once exited */
	/* What the server's code still held once it had exited. */
	long live_blocks, live_bytes, tracked;
	long exit_counted, exit_failed; /* since last armed, at exit */
};

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static bool server_alive(struct server *s);

static void fail(struct server *s, long round, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

static void fail(struct server *s, long round, const char *fmt, ...)
{
	va_list ap;
	char cmd[400];

	fprintf(stderr, "FAIL round %ld: ", round);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	/* A server that died shows first as calls without an answer. */
	if (s && !server_alive(s))
		fprintf(stderr, "the server has ended: %s %d\n",
			WIFSIGNALED(s->status) ? "killed by signal" : "exit status",
			WIFSIGNALED(s->status) ? WTERMSIG(s->status) : WEXITSTATUS(s->status));
	if (s) {
		fprintf(stderr, "--- the server's log (%s), its end:\n", s->log);
		snprintf(cmd, sizeof(cmd), "tail -n 40 '%s' >&2", s->log);
		if (system(cmd) != 0)
			fprintf(stderr, "(no log)\n");
		if (!s->exited) {
			kill(s->pid, SIGKILL);
			waitpid(s->pid, NULL, 0);
		}
	}
	if (work[0])
		nftw(work, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	fprintf(stderr, "again with: NFSD_ALLOC_FAIL_ROUND=%ld ALLOC_FAIL_TRACE=1\n", round);
	exit(1);
}

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* Whether it is still running; if it has ended, why. */
static bool server_alive(struct server *s)
{
	if (s->exited)
		return false;
	if (waitpid(s->pid, &s->status, WNOHANG) == s->pid)
		s->exited = true;
	return !s->exited;
}

static bool file_has(const char *path, const char *what)
{
	char buf[8192];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, what) != NULL;
}

/* The server of round @round on a fresh export; @fail_at 0 only counts.
 * Whether it started: with --startup it may refuse to, with status 1 and
 * the reason on stderr; else it must. */
static bool server_start(struct server *s, long round, long fail_at)
{
	static unsigned int base;
	char n_env[64], report_env[320], preload_env[320];
	char port_s[16], tcp_s[16], mport_s[16];
	char *envp[256];
	size_t ne = 0;

	if (!base)
		base = 20000u + ((unsigned int)getpid() * 7u % 3000u) * 4u;
	memset(s, 0, sizeof(*s));
	snprintf(s->dir, sizeof(s->dir), "%s/export-%ld", work, round);
	snprintf(s->log, sizeof(s->log), "%s/nfsd-%ld.log", work, round);
	snprintf(s->report, sizeof(s->report), "%s/report-%ld", work, round);
	if (mkdir(s->dir, 0777) || chmod(s->dir, 0777))
		fail(NULL, round, "mkdir %s: %s", s->dir, strerror(errno));
	{
		char path[400];
		int dfd;

		snprintf(path, sizeof(path), "%s/many", s->dir);
		if (mkdir(path, 0755) || (dfd = open(path, O_DIRECTORY | O_RDONLY)) < 0)
			fail(NULL, round, "mkdir %s: %s", path, strerror(errno));
		for (int i = 0; i < MANY; i++) {
			char name[64];
			int fd;

			snprintf(name, sizeof(name), MANY_NAME, i);
			fd = openat(dfd, name, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
			if (fd < 0)
				fail(NULL, round, "creating %s/%s: %s", path, name, strerror(errno));
			close(fd);
		}
		close(dfd);
	}
	snprintf(n_env, sizeof(n_env), "ALLOC_FAIL_N=%ld", fail_at);
	snprintf(report_env, sizeof(report_env), "ALLOC_FAIL_REPORT=%s", s->report);
	snprintf(preload_env, sizeof(preload_env), "LD_PRELOAD=%s", preload_path);
	for (char **e = environ; *e && ne < sizeof(envp) / sizeof(envp[0]) - 4; e++)
		if (strncmp(*e, "ALLOC_FAIL_N=", 13) && strncmp(*e, "ALLOC_FAIL_REPORT=", 18) &&
		    strncmp(*e, "LD_PRELOAD=", 11) && strncmp(*e, "ALLOC_FAIL_FROM_START=", 22))
			envp[ne++] = *e;
	envp[ne++] = n_env;
	envp[ne++] = report_env;
	envp[ne++] = preload_env;
	if (startup)
		envp[ne++] = "ALLOC_FAIL_FROM_START=1";
	envp[ne] = NULL;

	for (int attempt = 0; attempt < 20; attempt++) {
		/* Three ports below the kernel's ephemeral range, taken in
		 * turn: a port some other test holds is skipped. */
		unsigned int p = base;
		long deadline;

		base = base + 3 >= 32000 ? 20000 : base + 3;
		snprintf(port_s, sizeof(port_s), "%u", tr == RPCRDMA_TRANSPORT_RDMA ? p : 0);
		snprintf(tcp_s, sizeof(tcp_s), "%u", tr == RPCRDMA_TRANSPORT_TCP ? p + 1 : 0);
		snprintf(mport_s, sizeof(mport_s), "%u", p + 2);
		s->port = tr == RPCRDMA_TRANSPORT_RDMA ? p : p + 1;
		s->mport = p + 2;
		s->exited = false;
		s->pid = fork();
		if (s->pid < 0)
			fail(NULL, round, "fork: %s", strerror(errno));
		if (s->pid == 0) {
			int fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
			char *argv[] = {(char *)nfsd_path, "--addr", HOST, "--port", port_s,
					"--tcp-port", tcp_s, "--mount-port", mport_s,
					"--no-rpcbind", "--insecure", "--fs-threads", "2",
					"--workers", (char *)workers, "--verbose", s->dir,
					NULL};

			if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
				_exit(127);
			execve(nfsd_path, argv, envp);
			_exit(127);
		}
		deadline = now_ms() + 20000;
		while (now_ms() < deadline && server_alive(s) &&
		       !file_has(s->log, "rpcrdma-nfsd: exporting"))
			usleep(10000);
		if (file_has(s->log, "rpcrdma-nfsd: exporting") && server_alive(s))
			return true;
		if (server_alive(s))
			fail(s, round, "the server did not start within 20 s");
		if (file_has(s->log, "Address already in use"))
			continue;
		if (startup && WIFEXITED(s->status) && WEXITSTATUS(s->status) == 1)
			return false;
		fail(s, round, "the server did not start (status 0x%x)", s->status);
	}
	fail(s, round, "no free ports for the server");
}

static unsigned int server_fds(const struct server *s)
{
	char path[64];
	unsigned int n = 0;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)s->pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* SIGUSR2 to the preload, then its report: "armed", or "counted C failed F". */
static void preload_toggle(struct server *s, long round, long *counted, long *failed)
{
	long deadline = now_ms() + 10000;
	const char *want = counted ? "counted" : "armed";

	unlink(s->report);
	kill(s->pid, SIGUSR2);
	while (!file_has(s->report, want)) {
		if (!server_alive(s))
			fail(s, round, "the server ended (status 0x%x%s)", s->status,
			     WIFSIGNALED(s->status) && WTERMSIG(s->status) == SIGUSR2
				 ? ": SIGUSR2 killed it, the preload is not loaded"
				 : "");
		if (now_ms() > deadline)
			fail(s, round, "the preload did not report \"%s\" (not loaded?)", want);
		usleep(2000);
	}
	if (counted) {
		FILE *f = fopen(s->report, "r");

		if (!f || fscanf(f, "counted %ld failed %ld", counted, failed) != 2)
			fail(s, round, "an unreadable report %s", s->report);
		fclose(f);
	}
}

/* What the preload wrote as the server exited. */
static void read_exit_report(struct server *s, long round)
{
	char path[320];
	FILE *f;

	snprintf(path, sizeof(path), "%s.exit", s->report);
	f = fopen(path, "r");
	if (!f || fscanf(f, "exit live %ld bytes %ld of %ld counted %ld failed %ld",
			 &s->live_blocks, &s->live_bytes, &s->tracked, &s->exit_counted,
			 &s->exit_failed) != 5)
		fail(s, round, "the preload did not report at exit (%s)", path);
	fclose(f);
	unlink(path);
}

/* SIGTERM: it must end within 20 s with status 0. */
static void server_stop(struct server *s, long round)
{
	long deadline = now_ms() + 20000;

	if (!server_alive(s))
		fail(s, round, "the server ended before SIGTERM (status 0x%x%s%s)", s->status,
		     WIFSIGNALED(s->status) ? ", signal " : "",
		     WIFSIGNALED(s->status) ? strsignal(WTERMSIG(s->status)) : "");
	kill(s->pid, SIGTERM);
	while (server_alive(s) && now_ms() < deadline)
		usleep(5000);
	if (!s->exited)
		fail(s, round, "the server did not stop within 20 s of SIGTERM");
	if (!WIFEXITED(s->status) || WEXITSTATUS(s->status) != 0)
		fail(s, round, "the server's status after SIGTERM is 0x%x%s%s, not exit 0",
		     s->status, WIFSIGNALED(s->status) ? ", signal " : "",
		     WIFSIGNALED(s->status) ? strsignal(WTERMSIG(s->status)) : "");
	read_exit_report(s, round);
	nftw(s->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	if (show_log) {
		char cmd[400];

		snprintf(cmd, sizeof(cmd), "cat '%s' >&2", s->log);
		if (system(cmd) != 0)
			fprintf(stderr, "(no log)\n");
	}
	unlink(s->log);
	unlink(s->report);
}

/* ------------------------------------------------------------ the workload */

/*
 * One run of the workload.  @strict: memory is there, every call must
 * succeed; else the failure is armed, and a call may fail in any way
 * but a time-out (no answer) or a success with wrong results.
 */
struct run {
	struct server *s;
	long round;
	bool strict;
	const char *what;
	int errors; /* calls that got an error (not strict) */
	/* Set: the workload's client is left here, still connected,
	 * instead of destroyed. */
	struct rpcrdma_client **keep;
};

static void name_set(struct rpcrdma_nfs3_name *n, const char *s)
{
	n->len = (uint32_t)strlen(s);
	memcpy(n->s, s, n->len + 1);
}

/* The answers other than success the failures brought, over the sweep. */
static struct {
	char what[112];
	long n;
} seen[48];

static void tally(const char *proc, int rc, uint32_t status)
{
	char what[112];
	size_t i;

	if (rc)
		snprintf(what, sizeof(what), "%s: %s", proc, rpcrdma_strerror(rc));
	else
		snprintf(what, sizeof(what), "%s: NFS status %u", proc, status);
	for (i = 0; i < sizeof(seen) / sizeof(seen[0]) && seen[i].n; i++)
		if (strcmp(seen[i].what, what) == 0)
			break;
	if (i == sizeof(seen) / sizeof(seen[0]))
		return;
	if (!seen[i].n)
		memcpy(seen[i].what, what, sizeof(what));
	seen[i].n++;
}

/* Whether the call may go on to check its results: 0 and NFS3_OK (or the
 * status @want). */
static bool answered(struct run *r, const char *proc, int rc, uint32_t status, uint32_t want)
{
	if (rc == RPCRDMA_ERR_TIMEDOUT)
		fail(r->s, r->round, "%s %s: no answer in %d ms", r->what, proc, CALL_TIMEOUT_MS);
	if (rc == 0 && status == want)
		return true;
	if (r->strict) {
		if (rc)
			fail(r->s, r->round, "%s %s: %s (%d)", r->what, proc, rpcrdma_strerror(rc),
			     rc);
		fail(r->s, r->round, "%s %s: NFS status %u, want %u", r->what, proc, status,
		     want);
	}
	tally(proc, rc, status);
	r->errors++;
	return false;
}

#define WRONG(r, ...) fail((r)->s, (r)->round, __VA_ARGS__)

static int mnt(struct server *s, const struct rpcrdma_opaque_auth *cred,
	       struct rpcrdma_mount3_mnt_res *res)
{
	struct rpcrdma_client_opts co;
	struct rpcrdma_client *c;
	struct rpcrdma_call call;
	struct rpcrdma_nfs3_path p;
	char service[16];
	int rc;

	snprintf(service, sizeof(service), "%u", s->mport);
	p.len = (uint32_t)strlen(s->dir);
	memcpy(p.s, s->dir, p.len + 1);
	rpcrdma_client_opts_default(&co);
	co.transport = RPCRDMA_TRANSPORT_TCP;
	co.cred = cred;
	co.timeout_ms = CALL_TIMEOUT_MS;
	rc = rpcrdma_client_create(loop, HOST, service, RPCRDMA_MOUNT_PROGRAM, RPCRDMA_MOUNT_V3,
				   &co, &c);
	if (rc)
		return rc;
	memset(&call, 0, sizeof(call));
	memset(res, 0, sizeof(*res));
	call.proc = RPCRDMA_MOUNT3_MNT;
	call.encode_args = rpcrdma_mount3_xdr_path_enc;
	call.args = &p;
	call.decode_res = rpcrdma_mount3_xdr_mnt_res_dec;
	call.res = res;
	rc = rpcrdma_client_call(c, &call);
	rpcrdma_client_destroy(c);
	return rc;
}

static bool is_dot_name(const char *s)
{
	return strcmp(s, ".") == 0 || strcmp(s, "..") == 0;
}

static bool fh_eq(const struct rpcrdma_nfs3_fh *a, const struct rpcrdma_nfs3_fh *b)
{
	return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* READDIR or READDIRPLUS of @root: "." and @name (with @fh, if known) there. */
static void list_dir(struct run *r, struct rpcrdma_client *c, const struct rpcrdma_nfs3_fh *root,
		     bool plus, const char *name, const struct rpcrdma_nfs3_fh *fh)
{
	const char *proc = plus ? "READDIRPLUS" : "READDIR";
	struct rpcrdma_nfs3_readdir_args a;
	struct rpcrdma_nfs3_readdir_res res;
	bool dot = false, found = false;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&res, 0, sizeof(res));
	a.dir = *root;
	a.dircount = 4096;
	a.count = 8192;
	res.entries = entries;
	res.max = DIR_ENTRIES;
	rc = rpcrdma_nfs3_call(c, plus ? RPCRDMA_NFS3_READDIRPLUS : RPCRDMA_NFS3_READDIR, &a, &res);
	if (!answered(r, proc, rc, res.status, RPCRDMA_NFS3_OK))
		return;
	if (!res.eof)
		WRONG(r, "%s %s: NFS3_OK without eof in a directory of 3 entries", r->what, proc);
	for (uint32_t i = 0; i < res.n; i++) {
		const struct rpcrdma_nfs3_entry *e = &entries[i];

		dot |= strcmp(e->name.s, ".") == 0;
		if (strcmp(e->name.s, name) != 0)
			continue;
		found = true;
		if (plus && fh && (!e->has_fh || !fh_eq(&e->fh, fh)))
			WRONG(r, "%s %s: NFS3_OK with another handle for %s", r->what, proc, name);
		if (plus && e->attr.present && e->attr.attr.type != RPCRDMA_NF3REG)
			WRONG(r, "%s %s: NFS3_OK with %s of type %u", r->what, proc, name,
			      e->attr.attr.type);
	}
	if (!dot)
		WRONG(r, "%s %s: NFS3_OK without \".\"", r->what, proc);
	if (fh && !found)
		WRONG(r, "%s %s: NFS3_OK without %s, which CREATE made", r->what, proc, name);
}

/* READDIRPLUS of "many", whole in one reply (through the Reply chunk over
 * RDMA): every entry, each with its attributes and handle. */
static void list_many(struct run *r, struct rpcrdma_client *c, const struct rpcrdma_nfs3_fh *root)
{
	static bool seen_entry[MANY];
	struct rpcrdma_nfs3_diropargs la;
	struct rpcrdma_nfs3_lookup_res lr;
	struct rpcrdma_nfs3_readdir_args a;
	struct rpcrdma_nfs3_readdir_res res;
	int rc, found = 0;

	memset(&lr, 0, sizeof(lr));
	la.dir = *root;
	name_set(&la.name, "many");
	rc = rpcrdma_nfs3_call(c, RPCRDMA_NFS3_LOOKUP, &la, &lr);
	if (!answered(r, "LOOKUP", rc, lr.status, RPCRDMA_NFS3_OK))
		return;
	memset(&a, 0, sizeof(a));
	memset(&res, 0, sizeof(res));
	a.dir = lr.obj;
	a.dircount = 65536;
	a.count = 131072;
	res.entries = entries;
	res.max = DIR_ENTRIES;
	rc = rpcrdma_nfs3_call(c, RPCRDMA_NFS3_READDIRPLUS, &a, &res);
	if (!answered(r, "READDIRPLUS (large)", rc, res.status, RPCRDMA_NFS3_OK))
		return;
	memset(seen_entry, 0, sizeof(seen_entry));
	for (uint32_t i = 0; i < res.n; i++) {
		const struct rpcrdma_nfs3_entry *e = &entries[i];
		char want[64];
		int k;

		if (is_dot_name(e->name.s))
			continue;
		if (sscanf(e->name.s, "entry-%04d-", &k) != 1 || k < 0 || k >= MANY ||
		    (snprintf(want, sizeof(want), MANY_NAME, k), strcmp(want, e->name.s)) ||
		    seen_entry[k])
			WRONG(r, "%s READDIRPLUS (large): NFS3_OK with an entry \"%s\"", r->what,
			      e->name.s);
		if (!e->has_fh || !e->attr.present || e->attr.attr.type != RPCRDMA_NF3REG)
			WRONG(r, "%s READDIRPLUS (large): NFS3_OK with %s lacking its handle or "
				 "attributes",
			      r->what, e->name.s);
		seen_entry[k] = true;
		found++;
	}
	if (!res.eof || found != MANY)
		WRONG(r, "%s READDIRPLUS (large): NFS3_OK with %d of %d entries, eof %d", r->what,
		      found, MANY, res.eof);
}

static void write_at(struct run *r, struct rpcrdma_client *c, const struct rpcrdma_nfs3_fh *fh,
		     uint32_t off, uint32_t len, bool *written)
{
	struct rpcrdma_nfs3_write_args a;
	struct rpcrdma_nfs3_write_res res;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&res, 0, sizeof(res));
	a.file = *fh;
	a.offset = off;
	a.count = a.len = len;
	a.stable = RPCRDMA_FILE_SYNC;
	a.data = pattern + off;
	rc = rpcrdma_nfs3_call(c, RPCRDMA_NFS3_WRITE, &a, &res);
	if (!answered(r, "WRITE", rc, res.status, RPCRDMA_NFS3_OK)) {
		*written = false;
		return;
	}
	if (res.count != len || res.committed != RPCRDMA_FILE_SYNC)
		WRONG(r, "%s WRITE of %u: NFS3_OK with count %u, committed %u", r->what, len,
		      res.count, res.committed);
}

static void read_at(struct run *r, struct rpcrdma_client *c, const struct rpcrdma_nfs3_fh *fh,
		    uint32_t off, uint32_t len, bool written)
{
	struct rpcrdma_nfs3_read_args a = {.file = *fh, .offset = off, .count = len};
	struct rpcrdma_nfs3_read_res res;
	int rc;

	memset(&res, 0, sizeof(res));
	res.data = readback;
	res.data_max = BIG_LEN;
	rc = rpcrdma_nfs3_call(c, RPCRDMA_NFS3_READ, &a, &res);
	if (!answered(r, "READ", rc, res.status, RPCRDMA_NFS3_OK))
		return;
	if (res.count > len)
		WRONG(r, "%s READ of %u: NFS3_OK with count %u", r->what, len, res.count);
	/* What an earlier failed WRITE left is unknown; else it is the file. */
	if (written && (res.count != len || memcmp(readback, pattern + off, len) != 0 ||
			res.eof != (off + len == FILE_LEN)))
		WRONG(r, "%s READ of %u at %u: NFS3_OK with %u bytes%s, eof %d", r->what, len, off,
		      res.count,
		      res.count == len && memcmp(readback, pattern + off, len) ? " not written" : "",
		      res.eof);
}

static void workload(struct run *r, const char *name)
{
	struct rpcrdma_auth_sys sys;
	struct rpcrdma_opaque_auth cred;
	struct rpcrdma_mount3_mnt_res m;
	struct rpcrdma_client_opts co;
	struct rpcrdma_client *c;
	struct rpcrdma_nfs3_fh root, fh;
	bool have_fh = false, written = true;
	char service[16];
	int rc;

	memset(&sys, 0, sizeof(sys));
	sys.stamp = (uint32_t)getpid();
	strcpy(sys.machinename, "alloc-fail");
	sys.uid = sys.gid = 1000;
	if (rpcrdma_auth_sys_encode(&sys, &cred))
		fail(NULL, r->round, "auth_sys_encode");

	rc = mnt(r->s, &cred, &m);
	if (!answered(r, "MNT", rc, m.status, RPCRDMA_NFS3_OK))
		return;
	if (m.fh.len == 0 || m.nflavors == 0)
		WRONG(r, "%s MNT: OK with a handle of %u bytes, %u flavors", r->what, m.fh.len,
		      m.nflavors);
	root = m.fh;

	snprintf(service, sizeof(service), "%u", r->s->port);
	rpcrdma_client_opts_default(&co);
	co.transport = tr;
	co.provider = "ofi";
	co.cred = &cred;
	co.timeout_ms = CALL_TIMEOUT_MS;
	co.max_vers = max_vers;
	co.nconnect = nconnect;
	rc = rpcrdma_client_create(loop, HOST, service, RPCRDMA_NFS_PROGRAM, RPCRDMA_NFS_V3, &co,
				   &c);
	if (rc)
		fail(r->s, r->round, "%s: rpcrdma_client_create: %s", r->what,
		     rpcrdma_strerror(rc));

	{
		struct rpcrdma_nfs3_fsinfo_res fi;

		memset(&fi, 0, sizeof(fi));
		rc = rpcrdma_nfs3_call(c, RPCRDMA_NFS3_FSINFO, &root, &fi);
		if (answered(r, "FSINFO", rc, fi.status, RPCRDMA_NFS3_OK) &&
		    (fi.rtmax < BIG_LEN || fi.wtmax < BIG_LEN))
			WRONG(r, "%s FSINFO: NFS3_OK with rtmax %u, wtmax %u", r->what, fi.rtmax,
			      fi.wtmax);
	}
	{
		struct rpcrdma_nfs3_attr_res ar;

		memset(&ar, 0, sizeof(ar));
		rc = rpcrdma_nfs3_call(c, RPCRDMA_NFS3_GETATTR, &root, &ar);
		if (answered(r, "GETATTR", rc, ar.status, RPCRDMA_NFS3_OK) &&
		    ar.attr.type != RPCRDMA_NF3DIR)
			WRONG(r, "%s GETATTR of the root: NFS3_OK with type %u", r->what,
			      ar.attr.type);
	}
	{
		struct rpcrdma_nfs3_create_args a;
		struct rpcrdma_nfs3_create_res cr;

		memset(&a, 0, sizeof(a));
		memset(&cr, 0, sizeof(cr));
		a.where.dir = root;
		name_set(&a.where.name, name);
		a.mode = RPCRDMA_UNCHECKED;
		a.attr.set_mode = true;
		a.attr.mode = 0644;
		rc = rpcrdma_nfs3_call(c, RPCRDMA_NFS3_CREATE, &a, &cr);
		if (answered(r, "CREATE", rc, cr.status, RPCRDMA_NFS3_OK)) {
			if (!cr.has_obj || (cr.obj_attr.present &&
					    cr.obj_attr.attr.type != RPCRDMA_NF3REG))
				WRONG(r, "%s CREATE: NFS3_OK without a file's handle", r->what);
			fh = cr.obj;
			have_fh = true;
		}
	}
	{
		struct rpcrdma_nfs3_diropargs a;
		struct rpcrdma_nfs3_lookup_res lr;

		memset(&lr, 0, sizeof(lr));
		a.dir = root;
		name_set(&a.name, name);
		rc = rpcrdma_nfs3_call(c, RPCRDMA_NFS3_LOOKUP, &a, &lr);
		/* A CREATE that failed may still have made the file. */
		if (rc == 0 && lr.status == RPCRDMA_NFS3ERR_NOENT && !have_fh && !r->strict) {
			tally("LOOKUP", rc, lr.status);
			r->errors++;
		} else if (answered(r, "LOOKUP", rc, lr.status, RPCRDMA_NFS3_OK)) {
			if (have_fh && !fh_eq(&lr.obj, &fh))
				WRONG(r, "%s LOOKUP: NFS3_OK with another handle than CREATE's",
				      r->what);
			fh = lr.obj;
			have_fh = true;
		}
	}
	if (have_fh) {
		write_at(r, c, &fh, 0, SMALL_LEN, &written);
		write_at(r, c, &fh, SMALL_LEN, BIG_LEN, &written);
		read_at(r, c, &fh, 0, SMALL_LEN, written);
		read_at(r, c, &fh, SMALL_LEN, BIG_LEN, written);
		{
			struct rpcrdma_nfs3_attr_res ar;

			memset(&ar, 0, sizeof(ar));
			rc = rpcrdma_nfs3_call(c, RPCRDMA_NFS3_GETATTR, &fh, &ar);
			if (answered(r, "GETATTR", rc, ar.status, RPCRDMA_NFS3_OK) &&
			    (ar.attr.type != RPCRDMA_NF3REG || (written && ar.attr.size != FILE_LEN)))
				WRONG(r, "%s GETATTR of the file: NFS3_OK with type %u, size %llu",
				      r->what, ar.attr.type, (unsigned long long)ar.attr.size);
		}
	}
	list_dir(r, c, &root, false, name, have_fh ? &fh : NULL);
	list_dir(r, c, &root, true, name, have_fh ? &fh : NULL);
	list_many(r, c, &root);
	if (r->strict && tr == RPCRDMA_TRANSPORT_RDMA) {
		/* The workload does take the chunks it is meant to: a Read
		 * chunk for the large WRITE, a Write chunk for the large READ,
		 * the Reply chunk for the large READDIRPLUS. */
		struct rpcrdma_xprt_stats st;

		if (rpcrdma_client_stats(c, &st) || !st.read_chunk_msgs || !st.write_chunk_msgs ||
		    !st.reply_chunk_msgs)
			WRONG(r, "%s: read-chunk %llu, write-chunk %llu, reply-chunk %llu calls",
			      r->what, (unsigned long long)st.read_chunk_msgs,
			      (unsigned long long)st.write_chunk_msgs,
			      (unsigned long long)st.reply_chunk_msgs);
	}
	if (have_fh) {
		struct rpcrdma_nfs3_diropargs a;
		struct rpcrdma_nfs3_wcc_res wr;
		struct rpcrdma_nfs3_lookup_res lr;
		bool removed;

		memset(&wr, 0, sizeof(wr));
		a.dir = root;
		name_set(&a.name, name);
		rc = rpcrdma_nfs3_call(c, RPCRDMA_NFS3_REMOVE, &a, &wr);
		removed = answered(r, "REMOVE", rc, wr.status, RPCRDMA_NFS3_OK);
		memset(&lr, 0, sizeof(lr));
		rc = rpcrdma_nfs3_call(c, RPCRDMA_NFS3_LOOKUP, &a, &lr);
		if (rc == RPCRDMA_ERR_TIMEDOUT || (r->strict && rc))
			(void)answered(r, "LOOKUP", rc, 0, 0);
		else if (rc == 0 && removed && lr.status != RPCRDMA_NFS3ERR_NOENT &&
			 (r->strict || lr.status != RPCRDMA_NFS3ERR_JUKEBOX))
			WRONG(r, "%s LOOKUP after REMOVE: status %u, not NOENT", r->what,
			      lr.status);
	}
	if (r->keep)
		*r->keep = c;
	else
		rpcrdma_client_destroy(c);
}

/* ------------------------------------------------------------ the sweep */

/* Round @round: the @fail_at-th allocation fails (0: none).  Returns
 * how many the workload made, and in *@failed how many failed. */
static long round_run(long round, long fail_at, long *failed, int *errors)
{
	struct server s;
	struct run r = {.s = &s, .round = round};
	unsigned int fds_before, fds_after = 0;
	long counted, deadline;
	char name[64];

	*errors = 0;
	if (!server_start(&s, round, fail_at)) {
		/* It refused to start, for the failure and nothing else; it
		 * need not free what it had made before exiting. */
		read_exit_report(&s, round);
		if (s.exit_failed != 1)
			fail(&s, round, "the server did not start, and not for the failure");
		nftw(s.dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
		unlink(s.log);
		*failed = 1;
		refused_starts++;
		return s.exit_counted;
	}
	fds_before = server_fds(&s);

	if (shutdown_mode) {
		struct rpcrdma_client *held = NULL;

		snprintf(name, sizeof(name), "before-%ld", round);
		r.what = "before the stop";
		r.strict = true;
		r.keep = &held;
		workload(&r, name);
		preload_toggle(&s, round, NULL, NULL);
		/* Status 0 within 20 s, and what the preload counted from
		 * arming to the exit. */
		server_stop(&s, round);
		rpcrdma_client_destroy(held);
		if (s.live_blocks || s.live_bytes)
			fail(NULL, round, "the server stopped holding %ld blocks of its own (%ld "
					  "bytes), of the %ld it allocated",
			     s.live_blocks, s.live_bytes, s.tracked);
		*failed = s.exit_failed;
		if (round == 0)
			baseline_tracked = s.tracked;
		return s.exit_counted;
	}
	if (startup) {
		/* Armed since the start: this disarms. */
		preload_toggle(&s, round, &counted, failed);
	} else {
		preload_toggle(&s, round, NULL, NULL);
		snprintf(name, sizeof(name), "armed-%ld", round);
		r.what = "with the failure";
		r.strict = false;
		workload(&r, name);
		preload_toggle(&s, round, &counted, failed);
		if (!server_alive(&s))
			fail(&s, round, "the server ended (status 0x%x)", s.status);
		*errors = r.errors;
	}

	snprintf(name, sizeof(name), "after-%ld", round);
	r.what = "after the failure";
	r.strict = true;
	workload(&r, name);

	/* The server closes its side of the connections on its own time. */
	deadline = now_ms() + 20000;
	while (now_ms() < deadline && (fds_after = server_fds(&s)) != fds_before)
		usleep(10000);
	if (fds_after != fds_before) {
		char cmd[96];

		snprintf(cmd, sizeof(cmd), "ls -l /proc/%d/fd >&2", (int)s.pid);
		if (system(cmd) != 0)
			fprintf(stderr, "(cannot list the descriptors)\n");
		fail(&s, round, "%u descriptors open once the clients left, %u before", fds_after,
		     fds_before);
	}
	server_stop(&s, round);
	/* Whatever happened, by the time it exits the server has given back
	 * every block its own code allocated. */
	if (s.live_blocks || s.live_bytes)
		fail(NULL, round, "the server exited holding %ld blocks of its own (%ld bytes), of "
				  "the %ld it allocated",
		     s.live_blocks, s.live_bytes, s.tracked);
	if (round == 0)
		baseline_tracked = s.tracked;
	return counted;
}

int main(int argc, char **argv)
{
	const char *only_s = getenv("NFSD_ALLOC_FAIL_ROUND");
	long only = only_s ? atol(only_s) : 0, total, rounds = 0, with_errors = 0, failed;
	long started = now_ms();
	int errors, argi = 1;
	bool tr_given = false;

	for (; argi < argc && strncmp(argv[argi], "--", 2) == 0; argi++) {
		if (strcmp(argv[argi], "--transport") == 0 && argi + 1 < argc) {
			argi++;
			tr_given = true;
			if (strcmp(argv[argi], "tcp") == 0)
				tr = RPCRDMA_TRANSPORT_TCP;
			else if (strcmp(argv[argi], "rdma") == 0)
				tr = RPCRDMA_TRANSPORT_RDMA;
			else
				tr_given = false;
		} else if (strcmp(argv[argi], "--workers") == 0 && argi + 1 < argc) {
			workers = argv[++argi];
		} else if (strcmp(argv[argi], "--nconnect") == 0 && argi + 1 < argc) {
			nconnect = (unsigned int)atoi(argv[++argi]);
		} else if (strcmp(argv[argi], "--v2") == 0) {
			max_vers = 2;
		} else if (strcmp(argv[argi], "--startup") == 0) {
			startup = true;
		} else if (strcmp(argv[argi], "--shutdown") == 0) {
			shutdown_mode = true;
		} else {
			break;
		}
	}
	if (argc - argi != 2 || !tr_given || (startup && shutdown_mode)) {
		fprintf(stderr, "usage: nfsd_alloc_fail --transport tcp|rdma [--workers N] "
				"[--nconnect N] [--v2] [--startup|--shutdown] NFSD PRELOAD\n");
		return 2;
	}
	nfsd_path = argv[argi];
	preload_path = argv[argi + 1];
	if (geteuid() != 0) {
		printf("# skipped: rpcrdma-nfsd needs root (open_by_handle_at)\n");
		return SKIP_EXIT;
	}
	signal(SIGPIPE, SIG_IGN);
	snprintf(work, sizeof(work), "%s/rpcrdma-nfsd-alloc-fail.XXXXXX",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (!mkdtemp(work) || chmod(work, 0755)) {
		perror("mkdtemp");
		return 1;
	}
	pattern = malloc(FILE_LEN);
	readback = malloc(BIG_LEN);
	entries = calloc(DIR_ENTRIES, sizeof(*entries));
	if (!pattern || !readback || !entries || rpcrdma_loop_create(&loop)) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	for (uint32_t i = 0; i < FILE_LEN; i++)
		pattern[i] = (uint8_t)(i * 13u + (i >> 9) + 1u);

	/* Round 0 fails nothing: what the workload allocates, and that
	 * the harness itself passes. */
	total = round_run(0, 0, &failed, &errors);
	if (failed || errors)
		fail(NULL, 0, "%ld allocations failed, %d calls failed, with no failure armed",
		     failed, errors);
	printf("# %s: %s makes %ld allocations in rpcrdma-nfsd, %ld from its start to its exit\n",
	       tr == RPCRDMA_TRANSPORT_TCP ? "tcp" : "rdma",
	       startup ? "its start" : shutdown_mode ? "its stop" : "the workload", total,
	       baseline_tracked);
	fflush(stdout);
	show_log = only != 0;
	for (long n = only ? only : 1; n <= ROUNDS_MAX; n++) {
		round_run(n, n, &failed, &errors);
		rounds++;
		with_errors += errors > 0;
		/* Which allocations a round makes varies a little with timing:
		 * up to round 0's count, a round that did not reach its
		 * allocation does not end the sweep. */
		if ((!failed && n > total) || only)
			break;
		if (n % 50 == 0) {
			printf("# round %ld, %ld s\n", n, (now_ms() - started) / 1000);
			fflush(stdout);
		}
	}
	printf("# %s, %s worker(s)%s: %ld rounds, each failing one more of rpcrdma-nfsd's "
	       "allocations; %ld saw a call fail, %ld a refused start; %ld s\n",
	       tr == RPCRDMA_TRANSPORT_TCP ? "tcp" : "rdma", workers,
	       startup ? ", at its start" : shutdown_mode ? ", at its stop" : "", rounds,
	       with_errors, refused_starts,
	       (now_ms() - started) / 1000);
	for (size_t i = 0; i < sizeof(seen) / sizeof(seen[0]) && seen[i].n; i++)
		printf("#   %ld x %s\n", seen[i].n, seen[i].what);
	/* A stop makes few allocations: each must have had its round. */
	if (!only && (shutdown_mode ? rounds < total : rounds < 10)) {
		fprintf(stderr, "FAIL: only %ld rounds: the sweep did not sweep\n", rounds);
		return 1;
	}
	free(entries);
	free(readback);
	free(pattern);
	(void)rpcrdma_loop_destroy(loop);
	rmdir(work);
	return 0;
}
