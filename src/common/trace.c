/*
 * The trace facility: the RPCRDMA_TRACE sink on stderr, the application's
 * callback (rpcrdma_trace_set), and the one global mask every trace point
 * tests (common/trace.h).  Events are rare next to the data path, so the
 * work done per event (a mutex, a vsnprintf) is only paid while some sink
 * wants the category.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "common/trace.h"

/* Every bit set until the first event has read the environment. */
_Atomic uint32_t rpcrdma__trace_mask = UINT32_MAX;

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t env_mask; /* stderr: from RPCRDMA_TRACE */
static uint32_t cb_mask;
static rpcrdma_trace_fn cb_fn;
static void *cb_arg;
static _Atomic uint32_t next_conn_id = 1;
static _Atomic uint64_t suppressed_total;

/*
 * The stderr sink's limit: a peer causes events at will (every bad message
 * it sends is one), and lines on stderr end in a journal or a terminal
 * that must not fill at its pace.  At most env_rate lines in each second
 * of the coarse clock; what is left out is counted and reported with the
 * next line printed.  Caller holds lock for all of these.
 */
#define TRACE_RATE_DEFAULT 200u
static uint32_t env_rate = TRACE_RATE_DEFAULT; /* lines a second; 0: no limit */
static uint64_t window_s;                      /* the second being counted */
static uint32_t window_lines;                  /* printed in it */
static uint64_t window_left_out;               /* left out since the last line printed */

static const struct {
	const char *word;
	uint32_t bit;
} categories[] = {
    {"conn", RPCRDMA_TRACE_CONN},   {"call", RPCRDMA_TRACE_CALL},
    {"chunk", RPCRDMA_TRACE_CHUNK}, {"credit", RPCRDMA_TRACE_CREDIT},
    {"error", RPCRDMA_TRACE_ERROR}, {"vers", RPCRDMA_TRACE_VERS},
    {"all", RPCRDMA_TRACE_ALL},
};

static const char *const kind_names[] = {
    [RPCRDMA_TEV_CONNECT] = "connect",
    [RPCRDMA_TEV_ACCEPT] = "accept",
    [RPCRDMA_TEV_DISCONNECT] = "disconnect",
    [RPCRDMA_TEV_CONNECT_FAIL] = "connect_fail",
    [RPCRDMA_TEV_RETRANSMIT] = "retransmit",
    [RPCRDMA_TEV_TIMEOUT] = "timeout",
    [RPCRDMA_TEV_LONG_CALL] = "long_call",
    [RPCRDMA_TEV_READ_CHUNK] = "read_chunk",
    [RPCRDMA_TEV_WRITE_CHUNK] = "write_chunk",
    [RPCRDMA_TEV_REPLY_CHUNK] = "reply_chunk",
    [RPCRDMA_TEV_GRANT] = "grant",
    [RPCRDMA_TEV_REVOKE] = "revoke",
    [RPCRDMA_TEV_CREDIT_STALL] = "credit_stall",
    [RPCRDMA_TEV_CREDIT_GRANT] = "credit_grant",
    [RPCRDMA_TEV_ERR_SENT] = "err_sent",
    [RPCRDMA_TEV_ERR_RECEIVED] = "err_received",
    [RPCRDMA_TEV_BAD_MSG] = "bad_msg",
    [RPCRDMA_TEV_VERS_PROBE] = "vers_probe",
    [RPCRDMA_TEV_VERS_SETTLED] = "vers_settled",
    [RPCRDMA_TEV_VERS_FALLBACK] = "vers_fallback",
    [RPCRDMA_TEV_BAD_ARG] = "bad_arg",
};

static const char *category_name(uint32_t bit)
{
	for (size_t i = 0; i < sizeof(categories) / sizeof(categories[0]); i++)
		if (categories[i].bit == bit)
			return categories[i].word;
	return "?";
}

int rpcrdma_trace_parse(const char *words, uint32_t *mask)
{
	int rc = 0;

	if (!words || !mask)
		return -EINVAL;
	*mask = 0;
	while (*words) {
		size_t n = strcspn(words, ", \t");
		bool known = false;

		for (size_t i = 0; n && i < sizeof(categories) / sizeof(categories[0]); i++) {
			if (strlen(categories[i].word) == n &&
			    !strncasecmp(words, categories[i].word, n)) {
				*mask |= categories[i].bit;
				known = true;
			}
		}
		if (n && !known)
			rc = -EINVAL;
		words += n;
		words += strspn(words, ", \t");
	}
	return rc;
}

/* Caller holds lock. */
static void publish_locked(void)
{
	atomic_store_explicit(&rpcrdma__trace_mask, env_mask | cb_mask, memory_order_relaxed);
}

static void read_env(void)
{
	const char *v = getenv("RPCRDMA_TRACE");
	const char *r = getenv("RPCRDMA_TRACE_RATE");
	uint32_t rate = TRACE_RATE_DEFAULT;
	uint32_t m = 0;

	if (v && rpcrdma_trace_parse(v, &m))
		fprintf(stderr, "rpcrdma: RPCRDMA_TRACE=\"%s\": unknown words ignored "
				"(known: conn,call,chunk,credit,error,vers,all)\n", v);
	if (r && *r) {
		char *end;
		unsigned long n = strtoul(r, &end, 10);

		if (*end || n > UINT32_MAX)
			fprintf(stderr,
				"rpcrdma: RPCRDMA_TRACE_RATE=\"%s\": not a number of "
				"lines a second, %u taken\n",
				r, rate);
		else
			rate = (uint32_t)n;
	}
	pthread_mutex_lock(&lock);
	env_rate = rate;
	env_mask = m;
	publish_locked();
	pthread_mutex_unlock(&lock);
}

void rpcrdma__trace_read_env(void)
{
	pthread_once(&env_once, read_env);
	read_env();
}

int rpcrdma_trace_set(uint32_t mask, rpcrdma_trace_fn fn, void *arg)
{
	if (mask & ~RPCRDMA_TRACE_ALL)
		return -EINVAL;
	pthread_once(&env_once, read_env);
	pthread_mutex_lock(&lock);
	cb_fn = mask ? fn : NULL;
	cb_arg = arg;
	cb_mask = fn ? mask : 0;
	publish_locked();
	pthread_mutex_unlock(&lock);
	return 0;
}

const char *rpcrdma_trace_kind_name(enum rpcrdma_trace_kind kind)
{
	if ((unsigned)kind < sizeof(kind_names) / sizeof(kind_names[0]) && kind_names[kind])
		return kind_names[kind];
	return "unknown";
}

int rpcrdma_trace_format(const struct rpcrdma_trace_event *ev, char *buf, size_t len)
{
	if (!ev || (!buf && len))
		return -EINVAL;
	return snprintf(buf, len, "rpcrdma: %s %s conn=%u xid=0x%08x %s",
			category_name(ev->category), rpcrdma_trace_kind_name(ev->kind),
			ev->conn_id, ev->xid, ev->msg ? ev->msg : "");
}

uint64_t rpcrdma__trace_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t rpcrdma__coarse_now_ns(void)
{
	struct timespec ts;

	/* A kernel or sandbox without the coarse clock gets the exact one,
	 * never an uninitialised time. */
	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts))
		return rpcrdma__trace_now_ns();
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t rpcrdma_trace_suppressed(void)
{
	return atomic_load_explicit(&suppressed_total, memory_order_relaxed);
}

uint32_t rpcrdma__trace_conn_id(void)
{
	uint32_t id = atomic_fetch_add_explicit(&next_conn_id, 1, memory_order_relaxed);

	/* After 2^32 connections: skip 0, which means "none". */
	return id ? id : atomic_fetch_add_explicit(&next_conn_id, 1, memory_order_relaxed);
}

/* Whether the stderr sink prints a line now; sets *@left_out to the lines
 * left out before it, to report first.  Caller holds lock. */
static bool stderr_admit_locked(uint64_t *left_out)
{
	uint64_t now_s = rpcrdma__coarse_now_ns() / 1000000000u;

	*left_out = 0;
	if (!env_rate)
		return true;
	if (now_s != window_s) {
		window_s = now_s;
		window_lines = 0;
	}
	if (window_lines >= env_rate) {
		window_left_out++;
		atomic_fetch_add_explicit(&suppressed_total, 1, memory_order_relaxed);
		return false;
	}
	window_lines++;
	*left_out = window_left_out;
	window_left_out = 0;
	return true;
}

void rpcrdma__trace_emit(uint32_t cat, enum rpcrdma_trace_kind kind, uint32_t conn_id,
			 uint32_t xid, int64_t a, int64_t b, const char *fmt, ...)
{
	struct rpcrdma_trace_event ev;
	rpcrdma_trace_fn fn;
	uint32_t to_cb, to_env;
	char msg[256], line[384];
	uint64_t left_out = 0;
	uint32_t rate;
	void *arg;
	va_list ap;
	int n;

	pthread_once(&env_once, read_env);
	pthread_mutex_lock(&lock);
	fn = cb_fn;
	arg = cb_arg;
	to_cb = cb_mask & cat;
	to_env = env_mask & cat;
	if (to_env && !stderr_admit_locked(&left_out))
		to_env = 0;
	rate = env_rate;
	pthread_mutex_unlock(&lock);
	if (!(to_cb && fn) && !to_env)
		return;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ev = (struct rpcrdma_trace_event){
	    .category = cat,
	    .kind = kind,
	    .conn_id = conn_id,
	    .xid = xid,
	    .a = a,
	    .b = b,
	    .time_ns = rpcrdma__trace_now_ns(),
	    .msg = msg,
	};
	if (to_cb && fn)
		fn(&ev, arg);
	if (to_env) {
		if (left_out) {
			n = snprintf(
			    line, sizeof(line),
			    "rpcrdma: trace: %llu lines suppressed (RPCRDMA_TRACE_RATE: %u a "
			    "second)\n",
			    (unsigned long long)left_out, rate);
			if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0)
				return;
		}
		n = rpcrdma_trace_format(&ev, line, sizeof(line) - 1);
		if (n < 0)
			return;
		if ((size_t)n > sizeof(line) - 2)
			n = (int)sizeof(line) - 2;
		line[n++] = '\n';
		/* One write(2) per line, so lines of several threads do not mix. */
		if (write(STDERR_FILENO, line, (size_t)n) < 0)
			return;
	}
}
