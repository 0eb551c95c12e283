/*
 * `rpcrdma-bench nfs`: sequential NFSv3 WRITE and READ of one file through
 * our NFSv3 client (rpcrdma_nfs3_call) against an NFSv3 server, the Linux
 * kernel's in the lab, to set beside the kernel's own NFS client moving the
 * same file (tests/lab/bench-payload/run).
 *
 * MOUNT over TCP gives the export's root handle; CREATE (UNCHECKED) the
 * file; then --depth threads, each with a connection of its own, WRITE
 * their share of the file in --io pieces (UNSTABLE; one COMMIT at the end,
 * inside the timed interval), and READ it back the same way.  With
 * --nconnect N instead, one thread keeps --depth calls in flight
 * (rpcrdma_client_call_async) on one client of N connections
 * (rpcrdma_client_opts.nconnect), as a client with NFS's nconnect does;
 * the calls each connection carried are reported.  The data moves in Read
 * chunks (WRITE) and Write chunks (READ) as RFC 8267 maps them.  The READ
 * data is checked against what was written.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "rpcrdma/nfs3.h"

struct nfs_opts {
	const char *host, *export, *port, *mount_port, *provider, *name, *json;
	uint32_t file_size, io;
	unsigned int depth;
	unsigned int nconnect; /* 0: a thread and a connection per call in flight */
};

struct nfs_worker {
	pthread_t tid;
	const struct nfs_opts *o;
	const struct rpcrdma_opaque_auth *cred;
	const struct rpcrdma_nfs3_fh *fh;
	bool reading;
	uint64_t start, end; /* this thread's share of the file */
	uint8_t *buf;
	uint64_t calls;
	double cpu;
	int rc;
};

static int client_open(const struct nfs_opts *o, const struct rpcrdma_opaque_auth *cred,
		       struct rpcrdma_loop **loop, struct rpcrdma_client **clnt)
{
	struct rpcrdma_client_opts co;
	int rc;

	rpcrdma_client_opts_default(&co);
	co.transport = RPCRDMA_TRANSPORT_RDMA;
	co.provider = o->provider;
	co.cred = cred;
	co.timeout_ms = 60000;
	co.nconnect = o->nconnect;
	rc = rpcrdma_loop_create(loop);
	if (!rc)
		rc = rpcrdma_client_create(*loop, o->host, o->port, RPCRDMA_NFS_PROGRAM,
					   RPCRDMA_NFS_V3, &co, clnt);
	if (!rc)
		rc = rpcrdma_client_connect(*clnt);
	return rc;
}

static void client_close(struct rpcrdma_loop *loop, struct rpcrdma_client *clnt)
{
	if (clnt)
		rpcrdma_client_destroy(clnt);
	if (loop)
		rpcrdma_loop_destroy(loop);
}

/* The pattern of byte @i of the file, so READ can be checked. */
static uint8_t file_byte(uint64_t i)
{
	return (uint8_t)(i * 7u ^ i >> 13);
}

static int move_share(struct nfs_worker *w, struct rpcrdma_client *clnt)
{
	for (uint64_t off = w->start; off < w->end;) {
		uint32_t n = w->end - off < w->o->io ? (uint32_t)(w->end - off) : w->o->io;
		uint32_t done;
		int rc;

		if (w->reading) {
			struct rpcrdma_nfs3_read_args a = {.file = *w->fh, .offset = off, .count = n};
			struct rpcrdma_nfs3_read_res r;

			memset(&r, 0, sizeof(r));
			r.data = w->buf;
			r.data_max = n;
			rc = rpcrdma_nfs3_call(clnt, RPCRDMA_NFS3_READ, &a, &r);
			if (!rc && r.status)
				rc = (int)r.status;
			done = r.count;
			for (uint32_t i = 0; !rc && i < done; i += 4096)
				if (w->buf[i] != file_byte(off + i))
					rc = -EBADMSG;
		} else {
			struct rpcrdma_nfs3_write_args a;
			struct rpcrdma_nfs3_write_res r;

			memset(&a, 0, sizeof(a));
			memset(&r, 0, sizeof(r));
			a.file = *w->fh;
			a.offset = off;
			a.count = a.len = n;
			a.stable = RPCRDMA_UNSTABLE;
			for (uint32_t i = 0; i < n; i += 4096)
				w->buf[i] = file_byte(off + i);
			a.data = w->buf;
			rc = rpcrdma_nfs3_call(clnt, RPCRDMA_NFS3_WRITE, &a, &r);
			if (!rc && r.status)
				rc = (int)r.status;
			done = r.count;
		}
		if (rc)
			return rc;
		if (!done)
			return -EIO;
		w->calls++;
		off += done;
	}
	return 0;
}

static void *worker(void *arg)
{
	struct nfs_worker *w = arg;
	struct rpcrdma_loop *loop = NULL;
	struct rpcrdma_client *clnt = NULL;
	double cpu0;

	w->rc = client_open(w->o, w->cred, &loop, &clnt);
	cpu0 = bench_thread_cpu();
	if (!w->rc)
		w->rc = move_share(w, clnt);
	w->cpu = bench_thread_cpu() - cpu0;
	client_close(loop, clnt);
	return NULL;
}

static int nfs_commit(struct rpcrdma_client *clnt, const struct rpcrdma_nfs3_fh *fh)
{
	struct rpcrdma_nfs3_commit_args a = {.file = *fh};
	struct rpcrdma_nfs3_commit_res r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = rpcrdma_nfs3_call(clnt, RPCRDMA_NFS3_COMMIT, &a, &r);
	return rc ? rc : (int)r.status;
}

/* --nconnect: the calls in flight of one thread, on one client. */
struct nfs_stream;

struct nfs_slot {
	struct rpcrdma_call call;
	struct nfs_stream *st;
	uint64_t off;
	uint8_t *buf;
	union {
		struct rpcrdma_nfs3_read_args read;
		struct rpcrdma_nfs3_write_args write;
	} args;
	union {
		struct rpcrdma_nfs3_read_res read;
		struct rpcrdma_nfs3_write_res write;
	} res;
};

struct nfs_stream {
	const struct nfs_opts *o;
	const struct rpcrdma_nfs3_fh *fh;
	struct rpcrdma_client *clnt;
	bool reading;
	uint64_t next; /* the offset of the next piece to start */
	uint64_t calls;
	unsigned int inflight;
	int rc;
};

static void slot_done(struct rpcrdma_call *call, void *ctx);

/* Start the next piece on @s, if any is left and nothing failed. */
static void slot_start(struct nfs_slot *s)
{
	struct nfs_stream *st = s->st;
	uint32_t n;
	int rc;

	if (st->rc || st->next >= st->o->file_size)
		return;
	s->off = st->next;
	n = st->o->file_size - s->off < st->o->io ? (uint32_t)(st->o->file_size - s->off)
						  : st->o->io;
	st->next += n;
	memset(&s->call, 0, sizeof(s->call));
	memset(&s->args, 0, sizeof(s->args));
	memset(&s->res, 0, sizeof(s->res));
	s->call.done = slot_done;
	s->call.ctx = s;
	if (st->reading) {
		s->args.read.file = *st->fh;
		s->args.read.offset = s->off;
		s->args.read.count = n;
		s->res.read.data = s->buf;
		s->res.read.data_max = n;
		s->call.proc = RPCRDMA_NFS3_READ;
		s->call.args = &s->args.read;
		s->call.res = &s->res.read;
		/* As rpcrdma_nfs3_call() offers it: the data straight into buf. */
		s->call.ddp_buf = s->buf;
		s->call.ddp_len = n;
	} else {
		for (uint32_t i = 0; i < n; i += 4096)
			s->buf[i] = file_byte(s->off + i);
		s->args.write.file = *st->fh;
		s->args.write.offset = s->off;
		s->args.write.count = s->args.write.len = n;
		s->args.write.stable = RPCRDMA_UNSTABLE;
		s->args.write.data = s->buf;
		s->call.proc = RPCRDMA_NFS3_WRITE;
		s->call.args = &s->args.write;
		s->call.res = &s->res.write;
	}
	s->call.encode_args = rpcrdma_nfs3_encode_args(s->call.proc);
	s->call.decode_res = rpcrdma_nfs3_decode_res(s->call.proc);
	s->call.max_reply = rpcrdma_nfs3_max_reply(s->call.proc, st->reading ? n : 0);
	rc = rpcrdma_client_call_async(st->clnt, &s->call);
	if (rc)
		st->rc = rc;
	else
		st->inflight++;
}

static void slot_done(struct rpcrdma_call *call, void *ctx)
{
	struct nfs_slot *s = ctx;
	struct nfs_stream *st = s->st;
	uint32_t status = st->reading ? s->res.read.status : s->res.write.status;
	uint32_t done = st->reading ? s->res.read.count : s->res.write.count;
	uint32_t want = st->reading ? s->args.read.count : s->args.write.count;
	int rc = call->status ? call->status : (int)status;

	st->inflight--;
	/* Sequential pieces: a short one would leave a hole the bench does not refill. */
	if (!rc && done != want)
		rc = -EIO;
	for (uint32_t i = 0; !rc && st->reading && i < done; i += 4096)
		if (s->buf[i] != file_byte(s->off + i))
			rc = -EBADMSG;
	if (rc && !st->rc)
		st->rc = rc;
	if (!rc)
		st->calls++;
	slot_start(s);
}

/* One pass of --depth calls in flight on @clnt's connections, from this thread. */
static int stream_pass(const struct nfs_opts *o, const struct rpcrdma_nfs3_fh *fh,
		       struct rpcrdma_client *clnt, struct rpcrdma_loop *loop, bool reading,
		       uint64_t *calls)
{
	struct nfs_stream st = {.o = o, .fh = fh, .clnt = clnt, .reading = reading};
	struct nfs_slot *slots = calloc(o->depth, sizeof(*slots));
	int rc;

	if (!slots)
		return -ENOMEM;
	for (unsigned int i = 0; i < o->depth; i++) {
		slots[i].st = &st;
		slots[i].buf = bench_alloc(o->io);
		if (!slots[i].buf) {
			fprintf(stderr, "rpcrdma-bench nfs: out of memory\n");
			exit(1);
		}
	}
	for (unsigned int i = 0; i < o->depth; i++)
		slot_start(&slots[i]);
	while (st.inflight) {
		rc = rpcrdma_loop_run_once(loop, 1000);
		if (rc < 0 && !st.rc)
			st.rc = rc;
		if (rc < 0)
			break; /* the completions cannot come: leave the slots to the exit */
	}
	rc = st.rc;
	*calls = st.calls;
	if (!st.inflight)
		for (unsigned int i = 0; i < o->depth; i++)
			free(slots[i].buf);
	if (!st.inflight)
		free(slots);
	return rc;
}

/* One timed pass (WRITE + COMMIT, or READ) over the whole file. */
static int pass(const struct nfs_opts *o, const struct rpcrdma_opaque_auth *cred,
		const struct rpcrdma_nfs3_fh *fh, struct rpcrdma_client *ctl,
		struct rpcrdma_loop *loop, bool reading)
{
	struct nfs_worker *w = calloc(o->depth, sizeof(*w));
	uint64_t calls = 0, conn_calls[RPCRDMA_NCONNECT_MAX] = {0};
	double t0, secs, cpu = 0;
	char spread[RPCRDMA_NCONNECT_MAX * 22] = "";
	int rc = 0;
	FILE *f;

	if (!w)
		return -ENOMEM;
	t0 = bench_now();
	if (o->nconnect) {
		struct rpcrdma_xprt_stats xs;
		double cpu0 = bench_thread_cpu();

		for (unsigned int i = 0; i < o->nconnect; i++)
			if (!rpcrdma_client_conn_stats(ctl, i, &xs))
				conn_calls[i] = xs.calls_sent;
		rc = stream_pass(o, fh, ctl, loop, reading, &calls);
		cpu = bench_thread_cpu() - cpu0;
		for (unsigned int i = 0; i < o->nconnect; i++) {
			size_t at = strlen(spread);

			conn_calls[i] = rpcrdma_client_conn_stats(ctl, i, &xs)
					    ? 0
					    : xs.calls_sent - conn_calls[i];
			snprintf(spread + at, sizeof(spread) - at, "%s%llu", i ? "," : "",
				 (unsigned long long)conn_calls[i]);
		}
	}
	for (unsigned int i = 0; !o->nconnect && i < o->depth; i++) {
		w[i].o = o;
		w[i].cred = cred;
		w[i].fh = fh;
		w[i].reading = reading;
		/* Shares in whole --io pieces, so no piece straddles two. */
		w[i].start = (uint64_t)o->file_size / o->io * i / o->depth * o->io;
		w[i].end = i + 1 == o->depth ? o->file_size
					     : (uint64_t)o->file_size / o->io * (i + 1) / o->depth * o->io;
		w[i].buf = bench_alloc(o->io);
		if (!w[i].buf || pthread_create(&w[i].tid, NULL, worker, &w[i])) {
			fprintf(stderr, "rpcrdma-bench nfs: cannot start worker %u\n", i);
			exit(1);
		}
	}
	for (unsigned int i = 0; !o->nconnect && i < o->depth; i++) {
		pthread_join(w[i].tid, NULL);
		if (w[i].rc && !rc)
			rc = w[i].rc;
		calls += w[i].calls;
		cpu += w[i].cpu;
		free(w[i].buf);
	}
	if (!rc && !reading)
		rc = nfs_commit(ctl, fh);
	secs = bench_now() - t0;
	free(w);
	if (rc) {
		fprintf(stderr, "rpcrdma-bench nfs: %s failed: %d (%s)\n", reading ? "READ" : "WRITE",
			rc, rc < 0 ? rpcrdma_strerror(rc) : "nfsstat3");
		return rc;
	}
	printf("%-9s %-9s %8u %5u %10.0f %8.3f %10u %9.2f %s\n", "ours-nfs",
	       reading ? "read" : "write", o->io, o->depth, (double)calls / secs,
	       (double)o->file_size / secs / 1e9, o->file_size, cpu * 1e6 / (double)calls,
	       o->nconnect ? spread : "-");
	fflush(stdout);
	if (o->json && (f = fopen(o->json, "a"))) {
		fprintf(f,
			"{\"stack\":\"ours-nfs\",\"provider\":\"%s\",\"transport\":\"rdma\","
			"\"workload\":\"nfs-%s\",\"size\":%u,\"depth\":%u,\"file_size\":%u,"
			"\"error\":0,\"calls\":%llu,\"seconds\":%.6f,\"calls_per_s\":%.1f,"
			"\"gbytes_per_s\":%.4f,\"cpu_us_per_call\":{\"client\":%.3f},"
			"\"nconnect\":%u,\"conn_calls\":[%s]}\n",
			o->provider, reading ? "read" : "write", o->io, o->depth, o->file_size,
			(unsigned long long)calls, secs, (double)calls / secs,
			(double)o->file_size / secs / 1e9, cpu * 1e6 / (double)calls, o->nconnect,
			spread);
		fclose(f);
	}
	return 0;
}

static void nfs_usage(FILE *f)
{
	fprintf(f, "usage: rpcrdma-bench nfs --host SERVER --export PATH [--port 20049]\n"
		   "         [--mount-port 20048] [--provider verbs|ofi] [--file NAME]\n"
		   "         [--file-size 64m] [--io 512k] [--depth N] [--nconnect N]\n"
		   "         [--json FILE]\n");
}

int bench_nfs_main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"host", required_argument, NULL, 'H'},
	    {"export", required_argument, NULL, 'e'},
	    {"port", required_argument, NULL, 'P'},
	    {"mount-port", required_argument, NULL, 'm'},
	    {"provider", required_argument, NULL, 'p'},
	    {"file", required_argument, NULL, 'f'},
	    {"file-size", required_argument, NULL, 'F'},
	    {"io", required_argument, NULL, 'i'},
	    {"depth", required_argument, NULL, 'd'},
	    {"nconnect", required_argument, NULL, 'n'},
	    {"json", required_argument, NULL, 'J'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct nfs_opts o = {.port = "20049", .mount_port = "20048", .provider = "verbs",
			     .name = "rpcrdma-bench.dat", .file_size = 64u << 20,
			     .io = 512u << 10, .depth = 1};
	struct rpcrdma_opaque_auth cred;
	struct rpcrdma_auth_sys sys;
	struct rpcrdma_nfs3_fh root, fh;
	struct rpcrdma_loop *loop = NULL;
	struct rpcrdma_client *ctl = NULL;
	unsigned long long v;
	char *end;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "H:e:P:m:p:f:F:i:d:n:J:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'H':
			o.host = optarg;
			break;
		case 'e':
			o.export = optarg;
			break;
		case 'P':
			o.port = optarg;
			break;
		case 'm':
			o.mount_port = optarg;
			break;
		case 'p':
			o.provider = optarg;
			break;
		case 'f':
			o.name = optarg;
			break;
		case 'J':
			o.json = optarg;
			break;
		case 'F':
		case 'i':
			v = strtoull(optarg, &end, 10);
			if (*end == 'k' || *end == 'K')
				v <<= 10;
			else if (*end == 'm' || *end == 'M')
				v <<= 20;
			if (!v || v > (1ull << 30))
				goto out_usage;
			if (opt == 'F')
				o.file_size = (uint32_t)v;
			else
				o.io = (uint32_t)v;
			break;
		case 'd':
			o.depth = (unsigned int)atoi(optarg);
			break;
		case 'n':
			o.nconnect = (unsigned int)atoi(optarg);
			if (o.nconnect < 1 || o.nconnect > RPCRDMA_NCONNECT_MAX)
				goto out_usage;
			break;
		case 'h':
			nfs_usage(stdout);
			return 0;
		default:
			goto out_usage;
		}
	}
	if (!o.host || !o.export || optind != argc || o.depth < 1 || o.depth > BENCH_MAX_THREADS ||
	    strlen(o.name) > RPCRDMA_NFS3_NAME_MAX)
		goto out_usage;

	memset(&sys, 0, sizeof(sys));
	sys.stamp = (uint32_t)getpid();
	strcpy(sys.machinename, "rpcrdma-bench");
	sys.uid = (uint32_t)geteuid();
	sys.gid = (uint32_t)getegid();
	rc = rpcrdma_auth_sys_encode(&sys, &cred);
	if (!rc)
		rc = rpcrdma_loop_create(&loop);
	if (!rc)
		rc = rpcrdma_mount3_mnt(loop, o.host, o.mount_port, o.export, &cred, &root);
	if (loop)
		rpcrdma_loop_destroy(loop);
	loop = NULL;
	if (rc) {
		fprintf(stderr, "rpcrdma-bench nfs: MNT %s:%s: %d\n", o.host, o.export, rc);
		return 1;
	}
	rc = client_open(&o, &cred, &loop, &ctl);
	if (!rc) {
		struct rpcrdma_nfs3_fsinfo_res fi;

		memset(&fi, 0, sizeof(fi));
		rc = rpcrdma_nfs3_call(ctl, RPCRDMA_NFS3_FSINFO, &root, &fi);
		if (!rc && !fi.status) {
			/* The kernel's nfsd takes less than 1 MiB per call on a
			 * small machine: stay within what it says. */
			if (fi.rtmax && o.io > fi.rtmax)
				o.io = fi.rtmax;
			if (fi.wtmax && o.io > fi.wtmax)
				o.io = fi.wtmax;
		}
	}
	if (o.io > RPCRDMA_NFS3_MAXDATA)
		o.io = RPCRDMA_NFS3_MAXDATA;
	if (!rc) {
		struct rpcrdma_nfs3_create_args a;
		struct rpcrdma_nfs3_create_res r;

		memset(&a, 0, sizeof(a));
		memset(&r, 0, sizeof(r));
		a.where.dir = root;
		a.where.name.len = (uint32_t)strlen(o.name);
		memcpy(a.where.name.s, o.name, a.where.name.len + 1);
		a.mode = RPCRDMA_UNCHECKED;
		a.attr.set_mode = true;
		a.attr.mode = 0666;
		rc = rpcrdma_nfs3_call(ctl, RPCRDMA_NFS3_CREATE, &a, &r);
		if (!rc && (r.status || !r.has_obj))
			rc = r.status ? (int)r.status : -EIO;
		fh = r.obj;
	}
	if (rc) {
		fprintf(stderr, "rpcrdma-bench nfs: %s:%s (port %s): %d (%s)\n", o.host, o.export,
			o.port, rc, rc < 0 ? rpcrdma_strerror(rc) : "nfsstat3");
		client_close(loop, ctl);
		return 1;
	}
	printf("# rpcrdma-bench nfs: %s:%s/%s, %u bytes, provider %s\n", o.host, o.export, o.name,
	       o.file_size, o.provider);
	printf("%-9s %-9s %8s %5s %10s %8s %10s %9s %s\n", "stack", "workload", "io", "depth",
	       "calls/s", "GB/s", "file", "cpu_cli", "calls per connection");
	/* The file stays: the kernel's client moves the same one next. */
	rc = pass(&o, &cred, &fh, ctl, loop, false);
	if (!rc)
		rc = pass(&o, &cred, &fh, ctl, loop, true);
	client_close(loop, ctl);
	return rc ? 1 : 0;

out_usage:
	nfs_usage(stderr);
	return 2;
}
