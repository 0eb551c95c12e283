/*
 * Output of rpcrdma-bench: one table line per result on stdout, in the
 * spirit of perftest's tables, and one JSON object per result (a JSON Lines
 * file, appended to) for scripts.  Units: latency in microseconds,
 * bandwidth in GB/s of payload (10^9 bytes per second), CPU cost in
 * microseconds of user + system time per call, per side.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "rpcrdma/common.h"

const char *bench_stack_name(enum bench_stack s)
{
	static const char *const names[STACK_COUNT] = {"ours", "raw", "tirpc"};

	return s < STACK_COUNT ? names[s] : "?";
}

const char *bench_workload_name(enum bench_workload w)
{
	static const char *const names[WL_COUNT] = {"lat",   "rate",     "read",
						    "write", "longcall", "longreply"};

	return w < WL_COUNT ? names[w] : "?";
}

static const char *const work_names[BW_COUNT] = {
#define BENCH_WORK_NAME(n) #n,
	BENCH_WORK_FIELDS(BENCH_WORK_NAME)
#undef BENCH_WORK_NAME
};

static double per_call(uint64_t n, uint64_t calls)
{
	return calls ? (double)n / (double)calls : 0;
}

static double per_call_us(double cpu_s, uint64_t calls)
{
	return calls ? cpu_s * 1e6 / (double)calls : 0;
}

static double gbytes_per_s(const struct bench_result *r)
{
	if (r->seconds <= 0)
		return 0;
	return (double)r->p.size * (double)r->calls / r->seconds / 1e9;
}

void bench_print_header(void)
{
	printf("%-6s %-9s %8s %5s %5s %10s %8s %8s %8s %8s %8s %8s %9s %9s\n", "stack",
	       "workload", "bytes", "depth", "conns", "calls/s", "GB/s", "min_us", "p50_us",
	       "p99_us", "p999_us", "max_us", "cpu_cli", "cpu_srv");
}

void bench_print_result(const struct bench_result *r)
{
	const struct bench_params *p = &r->p;

	printf("%-6s %-9s %8u %5u %5u ", bench_stack_name(p->stack), bench_workload_name(p->wl),
	       p->size, p->depth, p->conns);
	if (r->error || r->note) {
		if (r->note)
			printf("%s\n", r->note);
		else
			printf("FAILED (%s)\n", rpcrdma_strerror(r->error));
		fflush(stdout);
		return;
	}
	printf("%10.0f %8.3f ", r->seconds > 0 ? (double)r->calls / r->seconds : 0,
	       gbytes_per_s(r));
	if (r->has_lat)
		printf("%8.1f %8.1f %8.1f %8.1f %8.1f ", r->lat_us[0], r->lat_us[1], r->lat_us[2],
		       r->lat_us[3], r->lat_us[4]);
	else
		printf("%8s %8s %8s %8s %8s ", "-", "-", "-", "-", "-");
	printf("%9.2f %9.2f", per_call_us(r->client_cpu_s, r->calls),
	       per_call_us(r->server_cpu_s, r->calls));
	if (r->repeats > 1)
		printf("  (median of %u: %.1f..%.1f)", r->repeats, r->spread_lo, r->spread_hi);
	printf("\n");
	for (int side = 0; side < 2; side++) {
		const struct bench_work *w = &r->work[side];

		if (!w->ops_valid && !w->sys_valid)
			continue;
		printf("       per call, %s:", side ? "server" : "client");
		for (int i = 0; w->ops_valid && i < BW_syscalls; i++)
			printf(" %s %.2f", work_names[i], per_call(w->v[i], r->calls));
		if (w->sys_valid)
			printf(" syscalls %.2f", per_call(w->v[BW_syscalls], r->calls));
		else
			printf(" syscalls n/a (%s)", bench_syscount_why());
		for (int i = BW_syscalls + 1; w->ops_valid && i < BW_COUNT; i++) {
			if (w->v[i])
				printf(" %s %.2f", work_names[i], per_call(w->v[i], r->calls));
		}
		printf("\n");
	}
	fflush(stdout);
}

/* Provider operations and system calls per call, per side. */
static void json_work(FILE *f, const struct bench_result *r)
{
	if (!r->work[0].ops_valid && !r->work[1].ops_valid && !r->work[0].sys_valid &&
	    !r->work[1].sys_valid)
		return;
	fprintf(f, "\"work_per_call\":{");
	for (int side = 0; side < 2; side++) {
		const struct bench_work *w = &r->work[side];

		fprintf(f, "%s\"%s\":", side ? "," : "", side ? "server" : "client");
		if (!w->ops_valid && !w->sys_valid) {
			fprintf(f, "null"); /* this stack's server does not report its work */
			continue;
		}
		fprintf(f, "{");
		for (int i = 0; w->ops_valid && i < BW_COUNT; i++) {
			if (i != BW_syscalls)
				fprintf(f, "\"%s\":%.4f,", work_names[i], per_call(w->v[i], r->calls));
		}
		if (w->sys_valid)
			fprintf(f, "\"syscalls\":%.3f}", per_call(w->v[BW_syscalls], r->calls));
		else
			fprintf(f, "\"syscalls\":null,\"syscalls_na\":\"%s\"}", bench_syscount_why());
	}
	fprintf(f, "},");
}

int bench_json_result(const char *path, const struct bench_config *cfg,
		      const struct bench_result *r)
{
	const struct bench_params *p = &r->p;
	double total_cpu = r->client_cpu_s + r->server_cpu_s;
	double bytes = (double)p->size * (double)r->calls;
	FILE *f = fopen(path, "a");

	if (!f)
		return -errno;
	fprintf(f,
		"{\"stack\":\"%s\",\"provider\":\"%s\",\"transport\":\"%s\",\"workload\":\"%s\","
		"\"size\":%u,\"depth\":%u,\"conns\":%u,\"threads\":%u,",
		bench_stack_name(p->stack), p->stack == STACK_TIRPC ? "none" : cfg->provider,
		p->stack == STACK_TIRPC || cfg->transport == RPCRDMA_TRANSPORT_TCP ? "tcp" : "rdma",
		bench_workload_name(p->wl), p->size, p->depth, p->conns, p->threads);
	if (p->stack == STACK_OURS && cfg->busy_poll_us)
		fprintf(f, "\"busy_poll_us\":%u,", cfg->busy_poll_us);
	if (r->error || r->note) {
		fprintf(f, "\"error\":%d,\"note\":\"%s\"}\n", r->error,
			r->note ? r->note : rpcrdma_strerror(r->error));
		fclose(f);
		return 0;
	}
	fprintf(f,
		"\"error\":0,\"calls\":%llu,\"seconds\":%.6f,\"calls_per_s\":%.1f,"
		"\"gbytes_per_s\":%.4f,",
		(unsigned long long)r->calls, r->seconds,
		r->seconds > 0 ? (double)r->calls / r->seconds : 0.0, gbytes_per_s(r));
	if (r->repeats > 1) {
		fprintf(f, "\"repeats\":%u,\"spread\":[%.2f,%.2f],\"turns\":[", r->repeats,
			r->spread_lo, r->spread_hi);
		for (unsigned int i = 0; i < r->nturns && i < BENCH_MAX_REPEAT; i++)
			fprintf(f, "%s%.2f", i ? "," : "", r->turns[i]);
		fprintf(f, "],");
	}
	if (r->has_lat)
		fprintf(f,
			"\"lat_us\":{\"min\":%.2f,\"p50\":%.2f,\"p99\":%.2f,\"p999\":%.2f,"
			"\"max\":%.2f},",
			r->lat_us[0], r->lat_us[1], r->lat_us[2], r->lat_us[3], r->lat_us[4]);
	json_work(f, r);
	fprintf(f,
		"\"cpu_s\":{\"client\":%.6f,\"server\":%.6f},"
		"\"cpu_us_per_call\":{\"client\":%.3f,\"server\":%.3f,\"total\":%.3f},"
		"\"cpu_ns_per_byte\":%.4f}\n",
		r->client_cpu_s, r->server_cpu_s, per_call_us(r->client_cpu_s, r->calls),
		per_call_us(r->server_cpu_s, r->calls), per_call_us(total_cpu, r->calls),
		bytes > 0 ? total_cpu * 1e9 / bytes : 0.0);
	fclose(f);
	return 0;
}
