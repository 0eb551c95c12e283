/*
 * rpcrdma-nfsd [options] DIRECTORY: serve DIRECTORY over NFSv3, on
 * RPC-over-RDMA (port 20049) and TCP (2049), with MOUNT v3 on TCP (20048).
 * Runs in the foreground until SIGINT or SIGTERM.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fs_pool.h"
#include "nfsd.h"
#include "rpcrdma/loop.h"
#include "rpcrdma/rpcbind.h"

struct opts {
	const char *provider, *addr, *keyfile, *dir;
	unsigned int port, tcp_port, mount_port, workers, fs_threads;
	bool rpcbind, root_squash, verbose;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: rpcrdma-nfsd [options] DIRECTORY\n"
		   "Serve DIRECTORY over NFS version 3: RPC-over-RDMA and TCP, MOUNT v3 on TCP.\n"
		   "\n"
		   "  --provider NAME    RDMA provider: ofi (software RDMA, default) or verbs\n"
		   "  --addr ADDRESS     address to listen on (default: every local address;\n"
		   "                     an RDMA device's address for verbs)\n"
		   "  --port N           NFS over RDMA port (default 20049; 0: no RDMA)\n"
		   "  --tcp-port N       NFS over TCP port (default 2049; 0: no TCP)\n"
		   "  --mount-port N     MOUNT v3 over TCP port (default 20048)\n"
		   "  --workers N        worker threads serving NFS connections (default 0:\n"
		   "                     everything on the main thread)\n"
		   "  --fs-threads N     threads doing the filesystem work (default 8)\n"
		   "  --key FILE         where the file-handle key is kept, so handles survive\n"
		   "                     a restart (created if missing; default: a new key\n"
		   "                     each run)\n"
		   "  --no-root-squash   let uid 0 act as root (default: uid 0 and AUTH_NONE\n"
		   "                     act as 65534)\n"
		   "  --no-rpcbind       do not register with rpcbind\n"
		   "  --verbose          say what is served\n"
		   "  --trace            log every NFS call on stderr\n"
		   "  --help             this text\n"
		   "\n"
		   "Needs root: file handles are the kernel's (open_by_handle_at), and each\n"
		   "request runs with the client's AUTH_SYS identity.  Mount with e.g.\n"
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
	o->rpcbind = true;
	o->root_squash = true;
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
		case 'R':
			o->root_squash = false;
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
	/* The largest READ or WRITE, its record and header. */
	so.max_record = RPCRDMA_NFS3_MAXDATA + 4096;
	snprintf(service, sizeof(service), "%u", port);
	rc = rpcrdma_server_create(loop, o->addr, service, &so, &out->srv);
	if (rc) {
		fprintf(stderr, "rpcrdma-nfsd: %s on port %u: %s\n", what, port,
			rpcrdma_strerror(rc));
		return rc;
	}
	rc = rpcrdma_server_register(out->srv, prog, vers, procs, nprocs);
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
		rc = rpcrdma_server_rpcbind_register(loop, out->srv, prog, vers, tr, AF_INET, NULL);
		if (rc && o->verbose)
			fprintf(stderr, "rpcrdma-nfsd: %s not registered with rpcbind: %s\n", what,
				rpcrdma_strerror(rc));
	}
	if (o->verbose)
		fprintf(stderr, "rpcrdma-nfsd: %s on port %d\n", what,
			rpcrdma_server_port(out->srv));
	return 0;
}

int main(int argc, char **argv)
{
	struct rpcrdma_svc_proc nfs[RPCRDMA_NFS3_NPROCS], mnt[RPCRDMA_MOUNT3_NPROCS];
	struct epoll_event ev = {.events = EPOLLIN};
	struct served sv[3];
	struct nfsd_export ex;
	struct rpcrdma_loop *loop;
	struct opts o;
	uint8_t verf[8];
	sigset_t sigs;
	int rc, ep, sfd, n = 0;
	bool stop = false;

	signal(SIGPIPE, SIG_IGN);
	if (parse(argc, argv, &o))
		return 2;
	rc = nfsd_export_open(&ex, o.dir, o.keyfile);
	if (rc) {
		fprintf(stderr, "rpcrdma-nfsd: cannot export %s: %s%s\n", o.dir,
			rpcrdma_strerror(rc),
			rc == -EPERM        ? " (opening files by handle needs root)"
			: rc == -EOPNOTSUPP ? " (its filesystem has no file handles)"
					    : "");
		return 1;
	}
	ex.root_squash = o.root_squash;
	if (getrandom(verf, sizeof(verf), 0) != sizeof(verf))
		return 1;
	nfsd_procs_init(&ex, verf);
	nfsd_nfs3_procs(nfs);
	nfsd_mount3_procs(mnt);
	rc = nfsd_pool_start(o.fs_threads);
	if (rc) {
		fprintf(stderr, "rpcrdma-nfsd: %s\n", rpcrdma_strerror(rc));
		return 1;
	}

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || ep < 0 || rpcrdma_loop_create(&loop)) {
		perror("rpcrdma-nfsd");
		return 1;
	}
	memset(sv, 0, sizeof(sv));
	rc = serve(loop, &o, RPCRDMA_TRANSPORT_TCP, o.mount_port, RPCRDMA_MOUNT_PROGRAM,
		   RPCRDMA_MOUNT_V3, mnt, RPCRDMA_MOUNT3_NPROCS, 0, &sv[n++], "MOUNT v3 over TCP");
	if (!rc && o.port)
		rc = serve(loop, &o, RPCRDMA_TRANSPORT_RDMA, o.port, RPCRDMA_NFS_PROGRAM,
			   RPCRDMA_NFS_V3, nfs, RPCRDMA_NFS3_NPROCS, o.workers, &sv[n++],
			   "NFSv3 over RDMA");
	if (!rc && o.tcp_port)
		rc = serve(loop, &o, RPCRDMA_TRANSPORT_TCP, o.tcp_port, RPCRDMA_NFS_PROGRAM,
			   RPCRDMA_NFS_V3, nfs, RPCRDMA_NFS3_NPROCS, o.workers, &sv[n++],
			   "NFSv3 over TCP");
	if (!rc) {
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
			if (got[i].data.fd == sfd)
				stop = true;
			else
				(void)rpcrdma_loop_run_once(loop, 0);
		}
	}
	/* Calls in the filesystem threads finish and are answered first. */
	nfsd_pool_drain();
	for (int i = 0; i < 4; i++)
		(void)rpcrdma_loop_run_once(loop, 0);
	for (int i = n - 1; i >= 0; i--) {
		if (!sv[i].srv)
			continue;
		if (o.rpcbind && sv[i].what)
			(void)rpcrdma_server_rpcbind_unregister(loop, sv[i].srv, sv[i].prog,
								sv[i].vers, sv[i].transport,
								AF_INET, NULL);
		rpcrdma_server_destroy(sv[i].srv);
	}
	nfsd_pool_stop();
	(void)rpcrdma_loop_destroy(loop);
	nfsd_export_close(&ex);
	close(ep);
	close(sfd);
	return rc ? 1 : 0;
}
