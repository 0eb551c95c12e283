/*
 * rpcrdma-nfsd [options] DIRECTORY: serve DIRECTORY over NFSv3, on
 * RPC-over-RDMA (port 20049) and TCP (2049), with MOUNT v3 on TCP (20048),
 * to the clients the access list admits (access.h).  Runs in the
 * foreground until SIGINT or SIGTERM, then answers what it is doing,
 * removes its rpcbind registrations and exits 0; SIGUSR1 prints the
 * counters on stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs_pool.h"
#include "nfsd.h"
#include "read_bufs.h"
#include "rpcrdma/loop.h"
#include "rpcrdma/rpcbind.h"

#define CLIENT_ARGS_MAX 256

struct opts {
	const char *provider, *addr, *keyfile, *dir, *exports;
	unsigned int port, tcp_port, mount_port, workers, fs_threads, max_queued, read_bufs;
	bool rpcbind, verbose;
	unsigned int default_flags; /* enum nfsd_client_flag */
	uint32_t anon_uid, anon_gid;
	const char *clients[CLIENT_ARGS_MAX];
	unsigned int nclients;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: rpcrdma-nfsd [options] DIRECTORY\n"
		   "Serve DIRECTORY over NFS version 3: RPC-over-RDMA and TCP, MOUNT v3 on TCP.\n"
		   "\n"
		   "  --provider NAME    RDMA provider: ofi (software RDMA, default) or verbs\n"
		   "  --addr ADDRESS     address to listen on (default: every local IPv4\n"
		   "                     address, 0.0.0.0; with verbs every RDMA device,\n"
		   "                     each opened when its first client connects)\n"
		   "  --port N           NFS over RDMA port (default 20049; 0: no RDMA)\n"
		   "  --tcp-port N       NFS over TCP port (default 2049; 0: no TCP)\n"
		   "  --mount-port N     MOUNT v3 over TCP port (default 20048)\n"
		   "  --workers N        worker threads serving NFS connections (default 0:\n"
		   "                     everything on the main thread)\n"
		   "  --fs-threads N     threads doing the filesystem work (default 8)\n"
		   "  --max-queued N     requests that may wait for a filesystem thread\n"
		   "                     (default 128); beyond, NFS3ERR_JUKEBOX (try later)\n"
		   "  --read-buffers N   READ buffers of 1 MiB kept for RDMA, made 8 at a time as\n"
		   "                     READs in flight need them (default 64, at most 1024;\n"
		   "                     0: none): READs of 32 KiB or more are sent from them\n"
		   "                     and register nothing per call\n"
		   "  --key FILE         where the file-handle key is kept, so handles survive\n"
		   "                     a restart (created mode 0600 if missing; refused if\n"
		   "                     others may read it; default: a new key each run)\n"
		   "\n"
		   "Who may connect (exports(5) style: an entry for the client's own address\n"
		   "applies first, then one for its network, then \"*\"; among entries of\n"
		   "one kind, the first; a client no entry matches is refused):\n"
		   "  --client SPEC      admit ADDRESS, ADDRESS/PREFIX, ADDRESS/NETMASK or *,\n"
		   "                     optionally with (OPTIONS): rw, ro, root_squash,\n"
		   "                     no_root_squash, all_squash, secure, insecure,\n"
		   "                     subtree_check, anonuid=N, anongid=N.  Repeatable.\n"
		   "                     Addresses are numeric, never resolved.\n"
		   "  --exports FILE     read entries from an exports(5)-style FILE: lines\n"
		   "                     \"DIRECTORY CLIENT(OPTIONS) ...\" naming DIRECTORY\n"
		   "                     ('#' comments).  Both may be given: the file's\n"
		   "                     entries come first.  Without either, every host\n"
		   "                     is admitted, as \"*\" with the defaults below.\n"
		   "  Defaults every entry starts from (its OPTIONS override them):\n"
		   "  --no-root-squash   let uid 0 and gid 0 act as root (default: they act as\n"
		   "                     the anonymous ids, as do AUTH_NONE and uid -1)\n"
		   "  --all-squash       every user acts as the anonymous ids\n"
		   "  --anonuid N        the anonymous uid (default 65534)\n"
		   "  --anongid N        the anonymous gid (default 65534)\n"
		   "  --insecure         accept requests from any source port (default\n"
		   "                     secure: over TCP and over ofi, which is TCP too,\n"
		   "                     from ports below 1024 only; verbs requests are\n"
		   "                     never held to that, as in knfsd)\n"
		   "  --read-only        refuse every change (NFS3ERR_ROFS)\n"
		   "\n"
		   "  --no-rpcbind       do not register with rpcbind\n"
		   "  --rpcbind-port N   the local rpcbind's port (default 111)\n"
		   "  --verbose          say what is served\n"
		   "  --trace            log every NFS call on stderr\n"
		   "  --help             this text\n"
		   "\n"
		   "Needs root: file handles are the kernel's (open_by_handle_at), and each\n"
		   "request runs with the client's AUTH_SYS identity.  SIGTERM or SIGINT stop\n"
		   "it cleanly (rpcbind entries removed, exit 0); SIGUSR1 prints its counters\n"
		   "on stderr.  Mount with e.g.\n"
		   "  mount -t nfs -o vers=3,proto=rdma,port=20049,nolock HOST:DIRECTORY /mnt\n");
}

static int parse_port(const char *s, unsigned int *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || v > 65535)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

static int parse_uint(const char *s, unsigned long lo, unsigned long hi, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static unsigned int rpcbind_port = 111;

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
	    {"provider", required_argument, NULL, 'P'},
	    {"addr", required_argument, NULL, 'a'},
	    {"port", required_argument, NULL, 'p'},
	    {"tcp-port", required_argument, NULL, 't'},
	    {"mount-port", required_argument, NULL, 'm'},
	    {"workers", required_argument, NULL, 'w'},
	    {"key", required_argument, NULL, 'k'},
	    {"no-root-squash", no_argument, NULL, 'R'},
	    {"no-rpcbind", no_argument, NULL, 'B'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"trace", no_argument, NULL, 'T'},
	    {"fs-threads", required_argument, NULL, 'f'},
	    {"max-queued", required_argument, NULL, 'q'},
	    {"read-buffers", required_argument, NULL, 'D'},
	    {"client", required_argument, NULL, 'c'},
	    {"exports", required_argument, NULL, 'e'},
	    {"all-squash", no_argument, NULL, 'A'},
	    {"anonuid", required_argument, NULL, 'U'},
	    {"anongid", required_argument, NULL, 'G'},
	    {"insecure", no_argument, NULL, 'I'},
	    {"read-only", no_argument, NULL, 'r'},
	    {"rpcbind-port", required_argument, NULL, 'b'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->provider = "ofi";
	o->port = RPCRDMA_NFS_RDMA_PORT;
	o->tcp_port = 2049;
	o->mount_port = 20048;
	o->fs_threads = 8;
	o->max_queued = 128;
	o->read_bufs = 64;
	o->rpcbind = true;
	o->anon_uid = o->anon_gid = 65534;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 'P':
			o->provider = optarg;
			break;
		case 'a':
			o->addr = optarg;
			break;
		case 'p':
			if (parse_port(optarg, &o->port))
				goto bad;
			break;
		case 't':
			if (parse_port(optarg, &o->tcp_port))
				goto bad;
			break;
		case 'm':
			if (parse_port(optarg, &o->mount_port) || o->mount_port == 0)
				goto bad;
			break;
		case 'w': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (!*optarg || *end || v > 256)
				goto bad;
			o->workers = (unsigned int)v;
			break;
		}
		case 'k':
			o->keyfile = optarg;
			break;
		case 'f': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (!*optarg || *end || v == 0 || v > 1024)
				goto bad;
			o->fs_threads = (unsigned int)v;
			break;
		}
		case 'q':
			if (parse_uint(optarg, 1, 1u << 20, &o->max_queued))
				goto bad;
			break;
		case 'D':
			if (parse_uint(optarg, 0, NFSD_READ_BUFS_MAX, &o->read_bufs))
				goto bad;
			break;
		case 'c':
			if (o->nclients == CLIENT_ARGS_MAX)
				goto bad;
			o->clients[o->nclients++] = optarg;
			break;
		case 'e':
			o->exports = optarg;
			break;
		case 'A':
			o->default_flags |= NFSD_ALL_SQUASH;
			break;
		case 'U':
			/* (uid_t)-1 is no identity: refused. */
			if (parse_uint(optarg, 0, 0xfffffffeu, &o->anon_uid))
				goto bad;
			break;
		case 'G':
			if (parse_uint(optarg, 0, 0xfffffffeu, &o->anon_gid))
				goto bad;
			break;
		case 'I':
			o->default_flags |= NFSD_INSECURE;
			break;
		case 'r':
			o->default_flags |= NFSD_RO;
			break;
		case 'b':
			if (parse_port(optarg, &rpcbind_port) || rpcbind_port == 0)
				goto bad;
			break;
		case 'R':
			o->default_flags |= NFSD_NO_ROOT_SQUASH;
			break;
		case 'B':
			o->rpcbind = false;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'T':
			nfsd_trace = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "rpcrdma-nfsd: give exactly one DIRECTORY\n");
		usage(stderr);
		return -1;
	}
	o->dir = argv[optind];
	return 0;
bad:
	fprintf(stderr, "rpcrdma-nfsd: bad value for an option: %s\n", optarg);
	return -1;
}

static const struct rpcrdma_rpcbind_opts *rpcbind_opts(void)
{
	static struct rpcrdma_rpcbind_opts ro;
	static char service[16];

	snprintf(service, sizeof(service), "%u", rpcbind_port);
	ro.service = service;
	return &ro;
}

/*
 * What the three servers may hold, so that together they fit the
 * descriptors the process may open.  A peer's silent connections then
 * meet max_conns, which closes the least recently active idle one for
 * each newcomer, before they meet RLIMIT_NOFILE, which left every new
 * peer waiting in the backlog.  MOUNT's calls are small and rare: a
 * path of at most 1024 bytes and its credential.
 */
#define MOUNT_MAX_CONNS 64u
#define MOUNT_MAX_RECORD 8192u
/* The descriptors of all else: the loops, the filesystem threads' open
 * files, the READ buffers, libfabric's own. */
#define FD_RESERVE 128u
#define NFS_MAX_CONNS 1024u /* the library's default */
static unsigned int nfs_max_conns = NFS_MAX_CONNS;

/* The soft RLIMIT_NOFILE raised to the hard one; the connections each
 * NFS server may hold within it (an RDMA connection counted as two
 * descriptors: its socket or CM id, and its completion channel). */
static void fd_budget(const struct opts *o)
{
	unsigned int weight = (o->port ? 2u : 0u) + (o->tcp_port ? 1u : 0u);
	struct rlimit rl;
	rlim_t room;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		struct rlimit up = {rl.rlim_max, rl.rlim_max};

		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl = up;
	}
	if (!weight || rl.rlim_cur == RLIM_INFINITY)
		return;
	room = rl.rlim_cur > FD_RESERVE + MOUNT_MAX_CONNS
		   ? rl.rlim_cur - FD_RESERVE - MOUNT_MAX_CONNS
		   : 0;
	if (room / weight < NFS_MAX_CONNS) {
		nfs_max_conns = room / weight ? (unsigned int)(room / weight) : 1u;
		fprintf(stderr,
			"rpcrdma-nfsd: RLIMIT_NOFILE %llu: at most %u connections per NFS "
			"transport\n",
			(unsigned long long)rl.rlim_cur, nfs_max_conns);
	}
}

struct served {
	struct rpcrdma_server *srv;
	enum rpcrdma_transport transport;
	uint32_t prog, vers;
	const char *what;
};

static int serve(struct rpcrdma_loop *loop, const struct opts *o, enum rpcrdma_transport tr,
		 unsigned int port, uint32_t prog, uint32_t vers,
		 const struct rpcrdma_svc_proc *procs, uint32_t nprocs, unsigned int workers,
		 struct served *out, const char *what)
{
	struct rpcrdma_server_opts so;
	char service[16];
	int rc;

	rpcrdma_server_opts_default(&so);
	so.transport = tr;
	so.provider = o->provider;
	so.workers = workers;
	if (prog == RPCRDMA_MOUNT_PROGRAM) {
		so.max_conns = MOUNT_MAX_CONNS;
		so.max_record = MOUNT_MAX_RECORD;
	} else {
		so.max_conns = nfs_max_conns;
		/* The largest READ or WRITE, its record and header. */
		so.max_record = RPCRDMA_NFS3_MAXDATA + 4096;
	}
	snprintf(service, sizeof(service), "%u", port);
	rc = rpcrdma_server_create(loop, o->addr, service, &so, &out->srv);
	if (rc) {
		fprintf(stderr, "rpcrdma-nfsd: %s on port %u: %s\n", what, port,
			rpcrdma_strerror(rc));
		return rc;
	}
	rc = rpcrdma_server_register(out->srv, prog, vers, procs, nprocs);
	/* Every connection may hold many requests deferred to the pool: the
	 * pool's queue bounds them all (--max-queued). */
	/* NFSv3's reads need no duplicate request cache (nfs3.h). */
	for (uint32_t i = 0; !rc && prog == RPCRDMA_NFS_PROGRAM && i < nprocs; i++)
		rc = rpcrdma_server_set_idempotent(out->srv, prog, vers, i,
						   rpcrdma_nfs3_idempotent(i));
	if (rc) {
		fprintf(stderr, "rpcrdma-nfsd: %s: %s\n", what, rpcrdma_strerror(rc));
		return rc;
	}
	out->transport = tr;
	out->prog = prog;
	out->vers = vers;
	out->what = what;
	if (o->rpcbind) {
		rc = rpcrdma_server_rpcbind_register(loop, out->srv, prog, vers, tr, AF_INET,
						     rpcbind_opts());
		if (rc && o->verbose)
			fprintf(stderr, "rpcrdma-nfsd: %s not registered with rpcbind: %s\n", what,
				rpcrdma_strerror(rc));
	}
	if (o->verbose)
		fprintf(stderr, "rpcrdma-nfsd: %s on port %d\n", what,
			rpcrdma_server_port(out->srv));
	return 0;
}

/*
 * Whether to declare the READ buffers for RDMA (read_bufs.h): each provider
 * instance (the listener and each worker) then registers, and so pins, all
 * of them, which RLIMIT_MEMLOCK may not allow; undeclared, the library
 * registers the ranges READs use, which the limit allows further.
 */
static bool read_bufs_declare(const struct opts *o)
{
	uint64_t need = (uint64_t)o->read_bufs * RPCRDMA_NFS3_MAXDATA * (o->workers + 1u);
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct caps[2];
	struct rlimit rl;

	if (!o->port || getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= need)
		return true;
	/* CAP_IPC_LOCK (root's, outside a container that drops it) pins
	 * beyond the limit. */
	if (syscall(SYS_capget, &h, caps) == 0 &&
	    (caps[CAP_IPC_LOCK / 32].effective & (1u << (CAP_IPC_LOCK % 32))))
		return true;
	fprintf(stderr,
		"rpcrdma-nfsd: RLIMIT_MEMLOCK %llu KiB is below the %llu KiB the READ buffers "
		"would pin: not declared for RDMA\n",
		(unsigned long long)rl.rlim_cur >> 10, (unsigned long long)need >> 10);
	return false;
}

static void print_stats(struct served *sv, int n)
{
	struct nfsd_stats st;

	nfsd_stats_get(&st);
	fprintf(stderr, "rpcrdma-nfsd: stats");
#define X(name) fprintf(stderr, " " #name "=%llu", st.name);
	NFSD_STATS(X)
#undef X
	fprintf(stderr, " queue_full=%llu queued_max=%llu read_bufs=%u read_buf_misses=%llu\n",
		st.queue_full, st.queued_max, nfsd_read_bufs_made(), nfsd_read_buf_misses());
	for (int i = 0; i < n; i++) {
		struct rpcrdma_xprt_stats xs;

		if (sv[i].srv && rpcrdma_server_stats(sv[i].srv, &xs) == 0)
			fprintf(stderr,
				"rpcrdma-nfsd: stats %s: calls %llu replies %llu devices %llu "
				"registrations %llu write_zero_copy_bytes %llu retransmits %llu "
				"replies_lost %llu queued_bytes %llu queue_pauses %llu "
				"queued_total_pauses %llu recv_bytes %llu recv_credits_cut %llu "
				"recv_budget_refused %llu read_budget_waits %llu read_bytes_max %llu "
				"reply_bytes_kept %llu\n",
				sv[i].what, (unsigned long long)xs.calls_received,
				(unsigned long long)xs.calls_sent,
				(unsigned long long)xs.devices_opened,
				(unsigned long long)xs.prov_reg_mrs,
				(unsigned long long)xs.write_zero_copy_bytes,
				(unsigned long long)xs.retransmits,
				(unsigned long long)xs.replies_lost,
				(unsigned long long)xs.queued_bytes_now,
				(unsigned long long)xs.queue_pauses,
				(unsigned long long)xs.queued_total_pauses,
				(unsigned long long)xs.recv_bytes_now,
				(unsigned long long)xs.recv_credits_cut,
				(unsigned long long)xs.recv_budget_refused,
				(unsigned long long)xs.read_budget_waits,
				(unsigned long long)xs.read_bytes_max,
				(unsigned long long)xs.reply_bytes_kept);
	}
}

static int access_setup(struct nfsd_access *acc, const struct opts *o, const char *exported)
{
	int rc = 0;

	memset(acc, 0, sizeof(*acc));
	acc->default_flags = o->default_flags;
	acc->anon_uid = o->anon_uid;
	acc->anon_gid = o->anon_gid;
	if (o->exports)
		rc = nfsd_access_load(acc, o->exports, exported);
	for (unsigned int i = 0; !rc && i < o->nclients; i++)
		rc = nfsd_access_add(acc, o->clients[i]);
	if (!rc && !o->exports && !o->nclients)
		rc = nfsd_access_add(acc, "*");
	if (!rc && o->exports && !acc->n) {
		fprintf(stderr, "rpcrdma-nfsd: %s admits no client\n", o->exports);
		rc = -EINVAL;
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct rpcrdma_svc_proc nfs_rdma[RPCRDMA_NFS3_NPROCS], nfs_tcp[RPCRDMA_NFS3_NPROCS];
	struct rpcrdma_svc_proc mnt[RPCRDMA_MOUNT3_NPROCS];
	struct epoll_event ev = {.events = EPOLLIN};
	static struct nfsd_access acc;
	struct served sv[3];
	struct nfsd_export ex;
	struct rpcrdma_loop *loop;
	struct opts o;
	uint8_t verf[8];
	sigset_t sigs;
	int rc, ep, sfd, n = 0;
	bool stop = false;

	signal(SIGPIPE, SIG_IGN);
	/*
	 * ORDER: block the signals before any thread exists (the filesystem
	 * threads, the library's worker loops): threads inherit the mask, so
	 * SIGTERM and SIGINT reach only the signalfd below and the shutdown
	 * path, never the default action that would kill the process with
	 * its rpcbind registrations left behind.
	 */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGUSR1);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	if (parse(argc, argv, &o))
		return 2;
	rc = nfsd_export_open(&ex, o.dir, o.keyfile);
	if (rc) {
		fprintf(stderr, "rpcrdma-nfsd: cannot export %s: %s%s\n", o.dir,
			rpcrdma_strerror(rc),
			rc == -EACCES       ? " (opening files by handle needs root)"
			: rc == -EOPNOTSUPP ? " (its filesystem has no file handles)"
					    : "");
		return 1;
	}
	if (access_setup(&acc, &o, ex.path))
		return 2;
	if (getrandom(verf, sizeof(verf), 0) != sizeof(verf))
		return 1;
	/*
	 * The client applied its user's umask already: CREATE, MKDIR, MKNOD
	 * and SYMLINK carry the mode the file must get, and knfsd's threads
	 * run with a umask of 0 for that reason.  Ours would take the bits it
	 * masks (022 from most shells and service managers) off every new
	 * file, so a group-writable file or directory came out read-only for
	 * its group.  The key file, the one file the server makes for
	 * itself, is created with mode 0600 and is not affected.
	 */
	umask(0);
	nfsd_procs_init(&ex, &acc, verf, strcmp(o.provider, "verbs") != 0);
	nfsd_nfs3_procs(nfs_rdma, true);
	nfsd_nfs3_procs(nfs_tcp, false);
	nfsd_mount3_procs(mnt);
	rc = nfsd_pool_start(o.fs_threads, o.max_queued);
	if (rc) {
		fprintf(stderr, "rpcrdma-nfsd: %s\n", rpcrdma_strerror(rc));
		return 1;
	}
	if (nfsd_read_bufs_start(o.read_bufs, read_bufs_declare(&o)))
		fprintf(stderr, "rpcrdma-nfsd: no READ buffers kept (out of memory): "
				"a buffer per READ\n");
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || ep < 0 || rpcrdma_loop_create(&loop)) {
		perror("rpcrdma-nfsd");
		return 1;
	}
	memset(sv, 0, sizeof(sv));
	fd_budget(&o);
	rc = serve(loop, &o, RPCRDMA_TRANSPORT_TCP, o.mount_port, RPCRDMA_MOUNT_PROGRAM,
		   RPCRDMA_MOUNT_V3, mnt, RPCRDMA_MOUNT3_NPROCS, 0, &sv[n++], "MOUNT v3 over TCP");
	if (!rc && o.port)
		rc = serve(loop, &o, RPCRDMA_TRANSPORT_RDMA, o.port, RPCRDMA_NFS_PROGRAM,
			   RPCRDMA_NFS_V3, nfs_rdma, RPCRDMA_NFS3_NPROCS, o.workers, &sv[n++],
			   "NFSv3 over RDMA");
	if (!rc && o.tcp_port)
		rc = serve(loop, &o, RPCRDMA_TRANSPORT_TCP, o.tcp_port, RPCRDMA_NFS_PROGRAM,
			   RPCRDMA_NFS_V3, nfs_tcp, RPCRDMA_NFS3_NPROCS, o.workers, &sv[n++],
			   "NFSv3 over TCP");
	if (!rc) {
		if (o.verbose)
			for (size_t i = 0; i < acc.n; i++)
				fprintf(stderr, "rpcrdma-nfsd: client %s:%s%s%s%s anon %u:%u\n",
					acc.c[i].text, acc.c[i].flags & NFSD_RO ? " ro" : " rw",
					acc.c[i].flags & NFSD_NO_ROOT_SQUASH ? " no_root_squash"
									     : " root_squash",
					acc.c[i].flags & NFSD_ALL_SQUASH ? " all_squash" : "",
					acc.c[i].flags & NFSD_INSECURE ? " insecure" : " secure",
					acc.c[i].anon_uid, acc.c[i].anon_gid);
		printf("rpcrdma-nfsd: exporting %s\n", ex.path);
		fflush(stdout);
		ev.data.fd = rpcrdma_loop_fd(loop);
		epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev);
		ev.data.fd = sfd;
		epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
	}
	while (!rc && !stop) {
		struct epoll_event got[2];
		int k = epoll_wait(ep, got, 2, -1);

		if (k < 0 && errno != EINTR) {
			rc = -errno;
			break;
		}
		for (int i = 0; i < k; i++) {
			if (got[i].data.fd == sfd) {
				struct signalfd_siginfo si;

				if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si) &&
				    si.ssi_signo == SIGUSR1)
					print_stats(sv, n);
				else
					stop = true;
			} else {
				(void)rpcrdma_loop_run_once(loop, 0);
			}
		}
	}
	if (stop)
		fprintf(stderr, "rpcrdma-nfsd: stopping\n");
	/*
	 * Stopping: requests arriving from now on get NFS3ERR_JUKEBOX (the
	 * client tries again, later or elsewhere); those in the filesystem
	 * threads finish and are answered; what the library still holds is
	 * answered SYSTEM_ERR by rpcrdma_server_destroy.  Then the rpcbind
	 * registrations go, so no stale entry misleads the next server.
	 */
	nfsd_pool_close();
	nfsd_pool_drain();
	for (int i = 0; i < 4; i++)
		(void)rpcrdma_loop_run_once(loop, 0);
	print_stats(sv, n);
	for (int i = n - 1; i >= 0; i--) {
		if (!sv[i].srv)
			continue;
		if (o.rpcbind && sv[i].what) {
			int urc = rpcrdma_server_rpcbind_unregister(loop, sv[i].srv, sv[i].prog,
								    sv[i].vers, sv[i].transport,
								    AF_INET, rpcbind_opts());

			if (urc && o.verbose)
				fprintf(stderr, "rpcrdma-nfsd: %s not unregistered: %s\n",
					sv[i].what, rpcrdma_strerror(urc));
		}
		rpcrdma_server_destroy(sv[i].srv);
	}
	nfsd_pool_stop();
	(void)rpcrdma_loop_destroy(loop);
	nfsd_read_bufs_stop();
	nfsd_export_close(&ex);
	close(ep);
	close(sfd);
	return rc ? 1 : 0;
}
