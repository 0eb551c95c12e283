/*
 * rpcrdma-bench scale: NULL calls/s against client connections and server
 * workers (issue 18: "server workers scale with connections").
 *
 * For each worker count the server (ours, in a thread of this process)
 * starts afresh with that many worker loops (rpcrdma_server_opts.workers;
 * 0 workers would be the listener's loop alone, 1 is one worker beside it).
 * For each connection count one client thread opens that many connections
 * through opts.nconnect (clients of at most RPCRDMA_NCONNECT_MAX
 * connections each) and keeps --depth calls in flight per connection for
 * --duration seconds.  One line per point on stdout and, with --json, one
 * JSON object per point (workload "scale") for bench/summarize.py.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "rpcrdma/loop.h"
#include "rpcrdma/rpc.h"

#define SCALE_MAX_CONNS 256u
#define SCALE_MAX_CLIENTS ((SCALE_MAX_CONNS + RPCRDMA_NCONNECT_MAX - 1) / RPCRDMA_NCONNECT_MAX)
#define SCALE_MAX_POINTS 16u

struct scale_opts {
	const char *provider, *host, *json;
	enum rpcrdma_transport transport;
	unsigned int workers[SCALE_MAX_POINTS], nworkers;
	unsigned int conns[SCALE_MAX_POINTS], nconns;
	unsigned int depth;
	double duration, warmup;
};

/* The server: a thread running the listener's loop. */
struct scale_server {
	struct rpcrdma_loop *loop;
	struct rpcrdma_server *srv;
	pthread_t tid;
	char port[16];
};

static int svc_null(struct rpcrdma_svc_req *req, void *args, void *res)
{
	(void)req, (void)args, (void)res;
	return 0;
}

static const struct rpcrdma_svc_proc scale_procs[1] = {
    [BENCH_NULL] = {svc_null, NULL, 0, NULL, 0, NULL},
};

/* The server is destroyed on its own loop's thread, its workers with it. */
static void *server_run(void *arg)
{
	struct scale_server *s = arg;

	rpcrdma_loop_run(s->loop);
	rpcrdma_server_destroy(s->srv);
	rpcrdma_loop_destroy(s->loop);
	return NULL;
}

static void stop_loop(void *arg)
{
	rpcrdma_loop_stop(arg);
}

static int server_start(const struct scale_opts *o, unsigned int workers, struct scale_server *s)
{
	struct rpcrdma_server_opts so;
	int rc;

	memset(s, 0, sizeof(*s));
	rpcrdma_server_opts_default(&so);
	so.transport = o->transport;
	so.provider = o->provider;
	so.workers = workers;
	rc = rpcrdma_loop_create(&s->loop);
	if (!rc)
		rc = rpcrdma_server_create(s->loop, o->host, "0", &so, &s->srv);
	if (!rc)
		rc = rpcrdma_server_register(s->srv, BENCH_PROG, BENCH_VERS, scale_procs, 1);
	if (!rc)
		rc = rpcrdma_server_set_idempotent(s->srv, BENCH_PROG, BENCH_VERS, BENCH_NULL, true);
	if (!rc) {
		rc = rpcrdma_server_port(s->srv);
		if (rc > 0) {
			snprintf(s->port, sizeof(s->port), "%d", rc);
			rc = pthread_create(&s->tid, NULL, server_run, s) ? -EAGAIN : 0;
			if (!rc)
				return 0;
		}
	}
	if (s->srv)
		rpcrdma_server_destroy(s->srv);
	if (s->loop)
		rpcrdma_loop_destroy(s->loop);
	return rc < 0 ? rc : -EIO;
}

static void server_stop(struct scale_server *s)
{
	rpcrdma_loop_wake(s->loop, stop_loop, s->loop);
	pthread_join(s->tid, NULL);
}

/* The client: one thread, every call kept in flight by its completion. */
struct scale_run {
	double deadline;
	uint64_t done;
	unsigned int in_flight;
	int error;
};

struct scale_slot {
	struct rpcrdma_call call;
	struct rpcrdma_client *clnt;
	struct scale_run *run;
};

static void slot_done(struct rpcrdma_call *call, void *ctx);

static int slot_start(struct scale_slot *s)
{
	memset(&s->call, 0, sizeof(s->call));
	s->call.proc = BENCH_NULL;
	s->call.done = slot_done;
	s->call.ctx = s;
	s->run->in_flight++;
	return rpcrdma_client_call_async(s->clnt, &s->call);
}

static void slot_done(struct rpcrdma_call *call, void *ctx)
{
	struct scale_slot *s = ctx;
	struct scale_run *r = s->run;

	r->in_flight--;
	if (call->status) {
		if (!r->error)
			r->error = call->status;
		return;
	}
	r->done++;
	if (!r->error && bench_now() < r->deadline) {
		int rc = slot_start(s);

		if (rc) {
			r->in_flight--;
			r->error = rc;
		}
	}
}

/* Keep every slot busy until @seconds have passed; the calls completed. */
static int drive(struct rpcrdma_loop *loop, struct scale_slot *slots, unsigned int n,
		 struct scale_run *r, double seconds)
{
	memset(r, 0, sizeof(*r));
	r->deadline = bench_now() + seconds;
	for (unsigned int i = 0; i < n && !r->error; i++) {
		int rc = slot_start(&slots[i]);

		if (rc) {
			r->in_flight--;
			r->error = rc;
		}
	}
	while (r->in_flight) {
		int rc = rpcrdma_loop_run_once(loop, 1000);

		if (rc < 0)
			return rc;
		if (bench_now() > r->deadline + 60)
			return -ETIMEDOUT;
	}
	return r->error;
}

static int measure(const struct scale_opts *o, const char *port, unsigned int conns,
		   double *calls_per_s)
{
	struct rpcrdma_client *clnts[SCALE_MAX_CLIENTS] = {NULL};
	unsigned int nclnt = 0, nslots = conns * o->depth;
	struct rpcrdma_client_opts co;
	struct scale_slot *slots;
	struct rpcrdma_loop *loop;
	struct scale_run run;
	double t0;
	int rc;

	slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	rc = rpcrdma_loop_create(&loop);
	rpcrdma_client_opts_default(&co);
	co.transport = o->transport;
	co.provider = o->provider;
	co.credits = o->depth > 128 ? o->depth : 128;
	for (unsigned int left = conns; !rc && left; left -= co.nconnect) {
		co.nconnect = left < RPCRDMA_NCONNECT_MAX ? left : RPCRDMA_NCONNECT_MAX;
		rc = rpcrdma_client_create(loop, o->host, port, BENCH_PROG, BENCH_VERS, &co,
					   &clnts[nclnt]);
		if (!rc)
			rc = rpcrdma_client_connect(clnts[nclnt++]);
	}
	/* Slots in turn over the clients: each spreads its own over its
	 * connections, least busy first. */
	for (unsigned int i = 0; i < nslots; i++) {
		slots[i].clnt = clnts[i % (nclnt ? nclnt : 1)];
		slots[i].run = &run;
	}
	if (!rc)
		rc = drive(loop, slots, nslots, &run, o->warmup);
	if (!rc) {
		t0 = bench_now();
		rc = drive(loop, slots, nslots, &run, o->duration);
		*calls_per_s = (double)run.done / (bench_now() - t0);
	}
	for (unsigned int i = 0; i < nclnt; i++)
		rpcrdma_client_destroy(clnts[i]);
	if (loop)
		rpcrdma_loop_destroy(loop);
	free(slots);
	return rc;
}

static void json_point(const struct scale_opts *o, unsigned int workers, unsigned int conns,
		       double cps, int err)
{
	FILE *f;

	if (!o->json || !(f = fopen(o->json, "a")))
		return;
	fprintf(f,
		"{\"stack\": \"ours\", \"workload\": \"scale\", \"provider\": \"%s\", "
		"\"transport\": \"%s\", \"size\": 0, \"depth\": %u, \"conns\": %u, "
		"\"workers\": %u, \"calls_per_s\": %.1f, \"error\": %d}\n",
		o->provider, o->transport == RPCRDMA_TRANSPORT_TCP ? "tcp" : "rdma", o->depth,
		conns, workers, cps, err);
	fclose(f);
}

static int parse_counts(const char *arg, unsigned int *v, unsigned int *n, unsigned int max)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int rc = 0;

	if (!copy)
		return -ENOMEM;
	*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long x = strtoul(tok, &end, 10);

		if (*end || *n == SCALE_MAX_POINTS || x > max)
			rc = -EINVAL;
		else
			v[(*n)++] = (unsigned int)x;
	}
	free(copy);
	return rc || !*n ? -EINVAL : 0;
}

static void scale_usage(FILE *f)
{
	fprintf(f, "usage: rpcrdma-bench scale [options]\n"
		   "  -p, --provider ofi|verbs   (default ofi)\n"
		   "  -T, --transport rdma|tcp   (default rdma)\n"
		   "  -H, --host ADDR            (default 127.0.0.1)\n"
		   "  -w, --workers LIST         server worker loops (default 1,2,4)\n"
		   "  -c, --conns LIST           client connections, at most 256\n"
		   "                             (default 1,2,4,8,16,32,64,128,256)\n"
		   "  -d, --depth N              calls in flight per connection (default 4)\n"
		   "  -D, --duration SEC         per point (default 1)\n"
		   "      --json FILE            append one JSON object per point\n");
}

static int scale_args(int argc, char **argv, struct scale_opts *o)
{
	static const struct option longopts[] = {
	    {"provider", required_argument, NULL, 'p'}, {"transport", required_argument, NULL, 'T'},
	    {"host", required_argument, NULL, 'H'},     {"workers", required_argument, NULL, 'w'},
	    {"conns", required_argument, NULL, 'c'},    {"depth", required_argument, NULL, 'd'},
	    {"duration", required_argument, NULL, 'D'}, {"json", required_argument, NULL, 'J'},
	    {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
	};
	int opt, rc = 0;

	memset(o, 0, sizeof(*o));
	o->provider = "ofi";
	o->host = "127.0.0.1";
	o->transport = RPCRDMA_TRANSPORT_RDMA;
	o->depth = 4;
	o->duration = 1.0;
	o->warmup = 0.2;
	parse_counts("1,2,4", o->workers, &o->nworkers, 64);
	parse_counts("1,2,4,8,16,32,64,128,256", o->conns, &o->nconns, SCALE_MAX_CONNS);
	while (!rc && (opt = getopt_long(argc, argv, "p:T:H:w:c:d:D:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			o->provider = optarg;
			break;
		case 'T':
			o->transport = strcmp(optarg, "tcp") ? RPCRDMA_TRANSPORT_RDMA
							     : RPCRDMA_TRANSPORT_TCP;
			break;
		case 'H':
			o->host = optarg;
			break;
		case 'w':
			rc = parse_counts(optarg, o->workers, &o->nworkers, 64);
			break;
		case 'c':
			rc = parse_counts(optarg, o->conns, &o->nconns, SCALE_MAX_CONNS);
			for (unsigned int i = 0; !rc && i < o->nconns; i++)
				rc = o->conns[i] ? 0 : -EINVAL;
			break;
		case 'd':
			o->depth = (unsigned int)atoi(optarg);
			rc = o->depth >= 1 && o->depth <= BENCH_MAX_DEPTH ? 0 : -EINVAL;
			break;
		case 'D':
			o->duration = atof(optarg);
			rc = o->duration > 0 ? 0 : -EINVAL;
			break;
		case 'J':
			o->json = optarg;
			break;
		case 'h':
			scale_usage(stdout);
			exit(0);
		default:
			rc = -EINVAL;
		}
	}
	return rc || optind != argc ? -EINVAL : 0;
}

int bench_scale_main(int argc, char **argv)
{
	struct scale_opts o;
	int failed = 0;

	if (scale_args(argc, argv, &o)) {
		scale_usage(stderr);
		return 2;
	}
	printf("# scale: NULL calls/s, %u in flight per connection, %s over %s, %.1f s a point\n",
	       o.depth, o.transport == RPCRDMA_TRANSPORT_TCP ? "tcp" : "rdma", o.provider,
	       o.duration);
	printf("%-8s %-6s %12s\n", "workers", "conns", "calls/s");
	for (unsigned int w = 0; w < o.nworkers; w++) {
		struct scale_server srv;
		int rc = server_start(&o, o.workers[w], &srv);

		if (rc) {
			fprintf(stderr, "rpcrdma-bench scale: server: %s\n", rpcrdma_strerror(rc));
			return 1;
		}
		for (unsigned int c = 0; c < o.nconns; c++) {
			double cps = 0;

			rc = measure(&o, srv.port, o.conns[c], &cps);
			if (!rc && cps <= 0)
				rc = -EIO; /* every call failed to come back in time */
			if (rc) {
				fprintf(stderr, "rpcrdma-bench scale: %u workers, %u connections: %s\n",
					o.workers[w], o.conns[c], rpcrdma_strerror(rc));
				failed = 1;
			}
			printf("%-8u %-6u %12.0f\n", o.workers[w], o.conns[c], cps);
			fflush(stdout);
			json_point(&o, o.workers[w], o.conns[c], cps, rc);
		}
		server_stop(&srv);
	}
	return failed;
}
