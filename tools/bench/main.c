/*
 * rpcrdma-bench: how fast librpcrdma is, measured next to what it is built
 * on (the raw provider) and what it replaces (libtirpc over TCP), in the
 * same run.  This file owns the command line and the order of the
 * measurements; runner.c measures one point, the stack_*.c files speak to
 * each stack, report.c prints.
 *
 * Modes:
 *   single  (default) servers in threads of this process, clients in
 *           others, on --host (127.0.0.1) and ports the kernel picks
 *   server  serve ours on --port, raw on --port + 1 and tirpc on --port + 2
 *           until a client's --stop-server or --server-time seconds
 *   client  measure against such a server
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MAX_LIST 32

struct list {
	uint32_t v[MAX_LIST];
	unsigned int n;
};

struct options {
	struct bench_config cfg;
	enum { MODE_SINGLE, MODE_SERVER, MODE_CLIENT } mode;
	bool want[STACK_COUNT];
	bool wl[WL_COUNT];
	struct list sizes, depths;
	unsigned int conns, threads;
	double duration, warmup, server_time;
	uint64_t iters;
	unsigned int repeat;
	const char *json;
	bool stop_server;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rpcrdma-bench [single|server|client] [options]\n"
		"       rpcrdma-bench nfs --help    (NFSv3 against an NFS server)\n"
		"       rpcrdma-bench scale --help  (calls/s against connections and workers)\n"
		"  -p, --provider ofi|verbs     RDMA provider (default ofi)\n"
		"  -T, --transport rdma|tcp     ours over RPC-over-RDMA (default) or TCP\n"
		"  -H, --host ADDR              address to serve on / connect to (127.0.0.1)\n"
		"  -L, --local ADDR             raw client: the local device's address\n"
		"  -P, --port N                 ours on N, raw on N+1, tirpc on N+2\n"
		"                               (single: 0 = any free; else 20100)\n"
		"  -b, --baseline LIST          raw,tirpc | all | none (default none)\n"
		"  -w, --workload LIST          lat,rate,read,write,long (default lat)\n"
		"  -s, --size LIST              payload bytes, k/m suffixes (lat/rate 0,\n"
		"                               read/write 64k, long 96k)\n"
		"  -a, --all-sizes              read/write/long: 4k..4m in powers of two\n"
		"  -d, --depth LIST             calls in flight per connection (rate 32,\n"
		"                               read/write/long 8; lat always 1)\n"
		"  -c, --conns N                connections (default 1)\n"
		"  -t, --threads N              client threads (default 1)\n"
		"  -D, --duration SEC           seconds per measurement (default 1)\n"
		"      --warmup SEC             unmeasured seconds first (default 0.2)\n"
		"  -n, --iters N                at most N calls per measurement\n"
		"  -r, --repeat N               measure each point N times, stacks taking\n"
		"                               turns; report each stack's median run\n"
		"      --json FILE              append one JSON object per result\n"
		"      --credits N              server credits (default 128)\n"
		"      --inline N               ours: inline send and receive size of\n"
		"                               both sides (default: the library's)\n"
		"      --busy-poll US           ours: both sides' loops look for events\n"
		"                               for US µs before sleeping (default 0)\n"
		"      --server-time SEC        server mode: exit after SEC (default 600)\n"
		"      --stop-server            client mode: stop the server at the end\n");
}

static int parse_size(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s)
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end || v > BENCH_MAX_SIZE)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int parse_list(const char *arg, struct list *l)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int rc = 0;

	if (!copy)
		return -ENOMEM;
	l->n = 0;
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		if (l->n == MAX_LIST)
			rc = -E2BIG;
		else
			rc = parse_size(tok, &l->v[l->n++]);
	}
	free(copy);
	return rc || !l->n ? -EINVAL : 0;
}

static int parse_names(const char *arg, const char *const *names, unsigned int n, bool *set)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int rc = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		unsigned int i;

		for (i = 0; i < n; i++)
			if (names[i] && !strcmp(tok, names[i]))
				break;
		if (i == n)
			rc = -EINVAL;
		else
			set[i] = true;
	}
	free(copy);
	return rc;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{"provider", required_argument, NULL, 'p'},
		{"transport", required_argument, NULL, 'T'},
		{"host", required_argument, NULL, 'H'},
		{"local", required_argument, NULL, 'L'},
		{"port", required_argument, NULL, 'P'},
		{"baseline", required_argument, NULL, 'b'},
		{"workload", required_argument, NULL, 'w'},
		{"size", required_argument, NULL, 's'},
		{"all-sizes", no_argument, NULL, 'a'},
		{"depth", required_argument, NULL, 'd'},
		{"conns", required_argument, NULL, 'c'},
		{"threads", required_argument, NULL, 't'},
		{"duration", required_argument, NULL, 'D'},
		{"warmup", required_argument, NULL, 'W'},
		{"iters", required_argument, NULL, 'n'},
		{"repeat", required_argument, NULL, 'r'},
		{"json", required_argument, NULL, 'J'},
		{"credits", required_argument, NULL, 'C'},
		{"inline", required_argument, NULL, 'I'},
		{"busy-poll", required_argument, NULL, 'B'},
		{"server-time", required_argument, NULL, 'S'},
		{"stop-server", no_argument, NULL, 'X'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	/* Workload names as the command line spells them: "long" is both. */
	static const char *const wl_names[] = {"lat", "rate", "read", "write", "long"};
	bool wl_set[5] = {false, false, false, false, false};
	bool all_sizes = false, port_set = false;
	int opt;

	memset(o, 0, sizeof(*o));
	o->cfg.provider = "ofi";
	o->cfg.transport = RPCRDMA_TRANSPORT_RDMA;
	o->cfg.host = "127.0.0.1";
	o->cfg.credits = 128;
	o->want[STACK_OURS] = true;
	o->conns = 1;
	o->threads = 1;
	o->duration = 1.0;
	o->warmup = 0.2;
	o->server_time = 600;
	o->repeat = 1;

	if (argc > 1 && argv[1][0] != '-') {
		if (!strcmp(argv[1], "server"))
			o->mode = MODE_SERVER;
		else if (!strcmp(argv[1], "client"))
			o->mode = MODE_CLIENT;
		else if (strcmp(argv[1], "single"))
			return -EINVAL;
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	while ((opt = getopt_long(argc, argv, "p:T:H:L:P:b:w:s:ad:c:t:D:n:r:h", longopts, NULL)) !=
	       -1) {
		switch (opt) {
		case 'p':
			o->cfg.provider = optarg;
			break;
		case 'T':
			if (!strcmp(optarg, "tcp"))
				o->cfg.transport = RPCRDMA_TRANSPORT_TCP;
			else if (strcmp(optarg, "rdma"))
				return -EINVAL;
			break;
		case 'H':
			o->cfg.host = optarg;
			break;
		case 'L':
			o->cfg.local = optarg;
			break;
		case 'P':
			o->cfg.port = atoi(optarg);
			port_set = true;
			break;
		case 'b':
			if (!strcmp(optarg, "all")) {
				o->want[STACK_RAW] = o->want[STACK_TIRPC] = true;
			} else if (strcmp(optarg, "none")) {
				static const char *const names[] = {NULL, "raw", "tirpc"};

				if (parse_names(optarg, names, 3, o->want))
					return -EINVAL;
			}
			break;
		case 'w':
			if (parse_names(optarg, wl_names, 5, wl_set))
				return -EINVAL;
			break;
		case 's':
			if (parse_list(optarg, &o->sizes))
				return -EINVAL;
			break;
		case 'a':
			all_sizes = true;
			break;
		case 'd':
			if (parse_list(optarg, &o->depths))
				return -EINVAL;
			break;
		case 'c':
			o->conns = (unsigned int)atoi(optarg);
			break;
		case 't':
			o->threads = (unsigned int)atoi(optarg);
			break;
		case 'D':
			o->duration = atof(optarg);
			break;
		case 'W':
			o->warmup = atof(optarg);
			break;
		case 'n':
			o->iters = strtoull(optarg, NULL, 10);
			break;
		case 'r':
			o->repeat = (unsigned int)atoi(optarg);
			break;
		case 'J':
			o->json = optarg;
			break;
		case 'C':
			o->cfg.credits = (uint32_t)atoi(optarg);
			break;
		case 'I':
			if (parse_size(optarg, &o->cfg.inline_size))
				return -EINVAL;
			break;
		case 'B': {
			char *end;
			unsigned long us = strtoul(optarg, &end, 10);

			if (end == optarg || *end || us > RPCRDMA_LOOP_BUSY_POLL_MAX_US) {
				fprintf(stderr, "rpcrdma-bench: --busy-poll %s: 0..%u µs\n", optarg,
					RPCRDMA_LOOP_BUSY_POLL_MAX_US);
				return -EINVAL;
			}
			o->cfg.busy_poll_us = (unsigned int)us;
			break;
		}
		case 'S':
			o->server_time = atof(optarg);
			break;
		case 'X':
			o->stop_server = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	if (optind != argc)
		return -EINVAL;
	if (o->conns < 1 || o->conns > BENCH_MAX_CONNS || o->threads < 1 ||
	    o->threads > BENCH_MAX_THREADS || o->duration <= 0 || o->duration > 600 ||
	    o->warmup < 0 || o->warmup > 60 || o->repeat < 1 || o->repeat > BENCH_MAX_REPEAT)
		return -EINVAL;
	for (unsigned int i = 0; i < o->depths.n; i++)
		if (o->depths.v[i] < 1 || o->depths.v[i] > BENCH_MAX_DEPTH)
			return -EINVAL;
	if (!port_set && o->mode != MODE_SINGLE)
		o->cfg.port = 20100;
	if (o->cfg.port < 0 || o->cfg.port > 65533)
		return -EINVAL;
	o->wl[WL_LAT] = wl_set[0];
	o->wl[WL_RATE] = wl_set[1];
	o->wl[WL_READ] = wl_set[2];
	o->wl[WL_WRITE] = wl_set[3];
	o->wl[WL_LONGCALL] = o->wl[WL_LONGREPLY] = wl_set[4];
	if (!wl_set[0] && !wl_set[1] && !wl_set[2] && !wl_set[3] && !wl_set[4])
		o->wl[WL_LAT] = true;
	if (all_sizes) {
		o->sizes.n = 0;
		for (uint32_t s = 4096; s <= BENCH_MAX_SIZE; s <<= 1)
			o->sizes.v[o->sizes.n++] = s;
	}
	return 0;
}

static bool small_workload(enum bench_workload w)
{
	return w == WL_LAT || w == WL_RATE;
}

/* Why a stack cannot measure a workload here, or NULL. */
static const char *not_applicable(const struct options *o, enum bench_stack s,
				  enum bench_workload w)
{
	if (s == STACK_RAW && o->cfg.transport != RPCRDMA_TRANSPORT_RDMA)
		return "n/a: raw needs --transport rdma";
	if (s == STACK_RAW && (w == WL_LONGCALL || w == WL_LONGREPLY))
		return "n/a: no RPC message to compare";
	return NULL;
}

static int start_servers(struct options *o, bool all)
{
	int base = o->cfg.port, rc;

	rc = bench_ours_server_start(&o->cfg, base, &bench_ports.port[STACK_OURS]);
	if (rc) {
		fprintf(stderr, "rpcrdma-bench: ours server: %s\n", rpcrdma_strerror(rc));
		return rc;
	}
	if ((all || o->want[STACK_RAW]) && o->cfg.transport == RPCRDMA_TRANSPORT_RDMA) {
		rc = bench_raw_server_start(&o->cfg, base ? base + 1 : 0,
					    &bench_ports.port[STACK_RAW]);
		if (rc) {
			fprintf(stderr, "rpcrdma-bench: raw server: %s\n", strerror(-rc));
			return rc;
		}
	}
	if (all || o->want[STACK_TIRPC]) {
		rc = bench_tirpc_server_start(&o->cfg, base ? base + 2 : 0,
					      &bench_ports.port[STACK_TIRPC]);
		if (rc) {
			fprintf(stderr, "rpcrdma-bench: tirpc server: %s\n", strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static void stop_servers(void)
{
	bench_tirpc_server_stop();
	bench_raw_server_stop();
	bench_ours_server_stop();
}

/* Runs are ranked by their headline figure: median latency, or calls/s. */
static double headline(const struct bench_result *r)
{
	return r->has_lat ? r->lat_us[1] : r->seconds > 0 ? (double)r->calls / r->seconds : 0;
}

static int cmp_headline(const void *a, const void *b)
{
	double x = headline(a), y = headline(b);

	return (x > y) - (x < y);
}

/*
 * One point for every stack wanted.  With --repeat the stacks take turns
 * (ours, raw, tirpc, ours, ...), so that a burst of load from elsewhere on
 * the machine hits them alike, and each stack's median run is reported.
 */
static int measure_point(const struct options *o, const struct bench_params *base,
			 int *failures)
{
	static struct bench_result runs[STACK_COUNT][BENCH_MAX_REPEAT];
	unsigned int ok[STACK_COUNT] = {0, 0, 0};
	struct bench_result shown[STACK_COUNT];

	double turns[STACK_COUNT][BENCH_MAX_REPEAT] = {{0}};

	memset(shown, 0, sizeof(shown));
	for (unsigned int rep = 0; rep < o->repeat; rep++) {
		for (int s = 0; s < STACK_COUNT; s++) {
			struct bench_params p = *base;
			struct bench_result r;

			if (!o->want[s])
				continue;
			p.stack = (enum bench_stack)s;
			memset(&r, 0, sizeof(r));
			r.p = p;
			r.note = not_applicable(o, p.stack, p.wl);
			if (r.note || bench_measure(&o->cfg, &p, &r)) {
				/* Not applicable, or failed: reported as such. */
				shown[s] = r;
				continue;
			}
			turns[s][rep] = headline(&r);
			runs[s][ok[s]++] = r;
		}
	}
	for (int s = 0; s < STACK_COUNT; s++) {
		if (!o->want[s])
			continue;
		if (ok[s]) {
			qsort(runs[s], ok[s], sizeof(runs[s][0]), cmp_headline);
			shown[s] = runs[s][(ok[s] - 1) / 2];
			shown[s].repeats = ok[s];
			shown[s].spread_lo = headline(&runs[s][0]);
			shown[s].spread_hi = headline(&runs[s][ok[s] - 1]);
			memcpy(shown[s].turns, turns[s], sizeof(turns[s]));
			shown[s].nturns = o->repeat;
			if (ok[s] < o->repeat)
				(*failures)++;
		} else if (!shown[s].note) {
			(*failures)++;
		}
		bench_print_result(&shown[s]);
		if (o->json && bench_json_result(o->json, &o->cfg, &shown[s])) {
			fprintf(stderr, "rpcrdma-bench: cannot write %s\n", o->json);
			return -EIO;
		}
	}
	return 0;
}

static int measure_all(struct options *o)
{
	int failures = 0;

	printf("# rpcrdma-bench: provider %s, transport %s, host %s, %u conn(s), %u thread(s), "
	       "%.1f s per point\n",
	       o->cfg.provider, o->cfg.transport == RPCRDMA_TRANSPORT_TCP ? "tcp" : "rdma",
	       o->cfg.host, o->conns, o->threads, o->duration);
	bench_print_header();
	for (int w = 0; w < WL_COUNT; w++) {
		struct list sizes = o->sizes, depths = o->depths;

		if (!o->wl[w])
			continue;
		if (!sizes.n) {
			sizes.n = 1;
			/* long: past every default inline size (68 KiB, the
			 * ofi client's receive), or no Long Reply happens. */
			sizes.v[0] = small_workload(w) ? 0 : w == WL_READ || w == WL_WRITE ? 65536
											   : 98304;
		}
		if (!depths.n || w == WL_LAT) {
			depths.n = 1;
			depths.v[0] = w == WL_LAT ? 1 : w == WL_RATE ? 32 : 8;
		}
		for (unsigned int si = 0; si < sizes.n; si++) {
			for (unsigned int di = 0; di < depths.n; di++) {
				struct bench_params p = {
					.wl = (enum bench_workload)w,
					.size = sizes.v[si],
					.depth = depths.v[di],
					.conns = w == WL_LAT ? 1 : o->conns,
					.threads = w == WL_LAT ? 1 : o->threads,
					.warmup_s = o->warmup,
					.duration_s = o->duration,
					.max_calls = o->iters,
				};

				if (small_workload(p.wl) && p.size > BENCH_MAX_SMALL) {
					fprintf(stderr,
						"rpcrdma-bench: lat/rate payloads are at most %u "
						"bytes\n",
						BENCH_MAX_SMALL);
					return 1;
				}
				if (measure_point(o, &p, &failures))
					return 1;
			}
		}
	}
	return failures ? 1 : 0;
}

static int serve(struct options *o)
{
	double end = bench_now() + o->server_time;
	struct timespec tick = {0, 100 * 1000 * 1000};
	sigset_t stop_sigs;
	int rc, sig = 0;

	/*
	 * ORDER: blocked before the server threads exist, which inherit the
	 * mask: SIGTERM and SIGINT are then only taken below, by this
	 * thread, and the servers stop as after a client's --stop-server
	 * (exit status 0) rather than the process dying with them.
	 */
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGTERM);
	sigaddset(&stop_sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop_sigs, NULL);
	rc = start_servers(o, true);
	if (rc) {
		stop_servers();
		return 1;
	}
	printf("# rpcrdma-bench server: ours %d, raw %d, tirpc %d on %s (up to %.0f s)\n",
	       bench_ports.port[STACK_OURS], bench_ports.port[STACK_RAW],
	       bench_ports.port[STACK_TIRPC], o->cfg.host, o->server_time);
	fflush(stdout);
	while (!atomic_load(&bench_stop_requested) && bench_now() < end && sig <= 0)
		sig = sigtimedwait(&stop_sigs, NULL, &tick);
	if (sig > 0)
		fprintf(stderr, "rpcrdma-bench server: stopping (%s)\n", strsignal(sig));
	stop_servers();
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	int rc;

	if (argc > 1 && !strcmp(argv[1], "nfs"))
		return bench_nfs_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "scale"))
		return bench_scale_main(argc - 1, argv + 1);
	if (parse_args(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	/* A peer that goes away mid-reply must not kill the benchmark. */
	signal(SIGPIPE, SIG_IGN);
	bench_set_server_process(o.mode == MODE_SERVER);
	switch (o.mode) {
	case MODE_SERVER:
		o.cfg.same_process = false;
		return serve(&o);
	case MODE_CLIENT:
		o.cfg.same_process = false;
		bench_ports.port[STACK_OURS] = o.cfg.port;
		bench_ports.port[STACK_RAW] = o.cfg.port + 1;
		bench_ports.port[STACK_TIRPC] = o.cfg.port + 2;
		rc = measure_all(&o);
		if (o.stop_server && bench_ours_stop_remote(&o.cfg) &&
		    bench_tirpc_stop_remote(&o.cfg))
			fprintf(stderr, "rpcrdma-bench: could not stop the server\n");
		return rc;
	default:
		o.cfg.same_process = true;
		if (start_servers(&o, false)) {
			stop_servers();
			return 1;
		}
		rc = measure_all(&o);
		stop_servers();
		return rc;
	}
}
