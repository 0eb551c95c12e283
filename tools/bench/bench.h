/*
 * rpcrdma-bench: the pieces the benchmark's files share.
 *
 * Three stacks serve the same procedures and are driven by the same runner:
 *   ours   librpcrdma (RPC-over-RDMA through a provider, or its TCP transport)
 *   raw    the provider alone: Send/Receive echo, RDMA Write and Read
 *   tirpc  libtirpc over TCP
 * Each stack has a server half (started in a thread of this process or in
 * another process) and a client half that the runner (runner.c) calls from
 * one or more client threads.
 */
#ifndef RPCRDMA_BENCH_H
#define RPCRDMA_BENCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/rpc.h"

/* The benchmark's ONC RPC program, served by ours and by tirpc. */
#define BENCH_PROG 0x20000202u
#define BENCH_VERS 1u

enum bench_proc {
	BENCH_NULL = 0,    /* nothing in, nothing out */
	BENCH_ECHO = 1,    /* an opaque in, the same opaque out (rate with payload) */
	BENCH_READ = 2,    /* a length in, a DDP-eligible opaque out (Write chunk) */
	BENCH_WRITE = 3,   /* a DDP-eligible opaque in (Read chunk), its length out */
	BENCH_SUM = 4,     /* a plain opaque in (Long Call when large), its length out */
	BENCH_LIST = 5,    /* a length in, a plain opaque out (Long Reply when large) */
	BENCH_CPU = 6,     /* the server's CPU microseconds so far out */
	BENCH_STOP = 7,    /* ask a separate server process to exit */
	BENCH_WORK = 8,    /* the server's work counters so far out (struct bench_work) */
	BENCH_NPROCS
};

/* Largest payload of any workload; servers allocate this much once. */
#define BENCH_MAX_SIZE (4u << 20)
/*
 * Server buffers of BENCH_MAX_SIZE that bulk data comes from (ours's and
 * libtirpc's READ source; raw's region, read and written by its client),
 * taken in turn: one per call in flight at the bulk workloads' default
 * depth, as each client call has its own buffer, so that no stack's server
 * side works from one buffer the cache keeps warm.
 */
#define BENCH_SERVER_BUFS 8u
/* Largest small-call payload (rate, lat): with the library's 8 KiB inline
 * buffers every size up to it travels inline; with --inline 4096 those
 * above about 4000 bytes become Long Calls, as they would for any
 * application. */
#define BENCH_MAX_SMALL (4u << 10)
#define BENCH_MAX_DEPTH 256u
#define BENCH_MAX_CONNS 64u
#define BENCH_MAX_THREADS 64u
/* --repeat: runs of each point at most. */
#define BENCH_MAX_REPEAT 15u

enum bench_stack { STACK_OURS, STACK_RAW, STACK_TIRPC, STACK_COUNT };

enum bench_workload {
	WL_LAT,       /* NULL (or small echo) round trips, one at a time */
	WL_RATE,      /* small calls with depth in flight */
	WL_READ,      /* bulk server -> client: Write chunks (NFS READ) */
	WL_WRITE,     /* bulk client -> server: Read chunks (NFS WRITE) */
	WL_LONGCALL,  /* a plain opaque argument: RDMA_NOMSG Long Call */
	WL_LONGREPLY, /* a plain opaque result: RDMA_NOMSG Long Reply */
	WL_COUNT
};

/* How the whole run is set up (command line). */
struct bench_config {
	const char *provider;  /* "ofi" or "verbs" */
	enum rpcrdma_transport transport;
	const char *host;      /* server address (client and server modes) */
	const char *local;     /* raw client's device address; NULL: host's */
	int port;              /* ours; raw listens on port + 1, tirpc on port + 2 */
	bool same_process;     /* servers are threads of this process */
	uint32_t credits;      /* server credits (ours) */
	uint32_t inline_size;  /* ours: both sides' inline sizes; 0: the default */
	unsigned int busy_poll_us; /* ours: both sides' rpcrdma_loop_set_busy_poll() */
};

/*
 * The work one side did: provider operations and system calls, counted
 * over the measured interval and divided by the calls for the tables.  The
 * provider counters are the prov_* fields of struct rpcrdma_xprt_stats;
 * syscalls come from the raw_syscalls:sys_enter tracepoint (syscount.c);
 * the message form counters that follow it (valid with the provider's) say
 * which form the calls took, for the minimum they are compared with.
 */
#define BENCH_WORK_FIELDS(X) X(sends) X(recvs) X(reads) X(writes) X(grants) X(revokes) \
	X(regs) X(deregs) X(syscalls) X(inline_msgs) X(read_chunk_msgs) X(long_calls)  \
	X(write_chunk_msgs) X(reply_chunk_msgs) X(long_replies)
enum bench_work_field {
#define BENCH_WORK_ENUM(n) BW_##n,
	BENCH_WORK_FIELDS(BENCH_WORK_ENUM)
#undef BENCH_WORK_ENUM
	BW_COUNT
};
struct bench_work {
	uint64_t v[BW_COUNT];
	bool ops_valid; /* the provider fields were read */
	bool sys_valid; /* syscalls was counted */
};

/* One measurement. */
struct bench_params {
	enum bench_stack stack;
	enum bench_workload wl;
	uint32_t size;      /* payload bytes per call */
	unsigned int depth; /* calls in flight per connection */
	unsigned int conns;
	unsigned int threads;
	double warmup_s;
	double duration_s;
	uint64_t max_calls; /* 0: bounded by duration only */
};

struct bench_result {
	struct bench_params p;
	int error;           /* 0 or the first negative error */
	const char *note;    /* why a result is missing, or NULL */
	uint64_t calls;
	double seconds;
	double client_cpu_s; /* user + system, all client threads */
	double server_cpu_s; /* user + system of the serving thread(s) */
	bool has_lat;
	double lat_us[5];    /* min, median, p99, p99.9, max */
	/* With --repeat: the result is the median run by its headline figure
	 * (median latency, or calls/s), over @repeats runs whose figures
	 * spread from spread_lo to spread_hi. */
	unsigned int repeats;
	double spread_lo, spread_hi;
	/* Each turn's headline figure in order (0: the run failed), so that
	 * stacks can be compared turn by turn (bench/summarize.py). */
	double turns[BENCH_MAX_REPEAT];
	unsigned int nturns;
	/* Work per side over the measured interval (ours and raw). */
	struct bench_work work[2]; /* [0] client, [1] server */
};

/* A client thread of one measurement: what a stack's client half works on. */
struct bench_thread {
	unsigned int index;
	const struct bench_config *cfg;
	const struct bench_params *p;
	unsigned int first_conn, nconns; /* this thread's share of p->conns */
	void *stack;                     /* the stack's per-thread state */
	/* Filled by the stack's run(): */
	uint64_t calls;
	double *lat_us;  /* WL_LAT, thread 0: room for lat_cap samples */
	uint64_t lat_cap, lat_n;
	int error;
	int sys_fd; /* this thread's syscall counter, or -1 */
};

/*
 * A stack's client half.  setup connects this thread's connections;
 * run performs the workload until @deadline (CLOCK_MONOTONIC seconds) or
 * until @max_calls calls were made (0: no bound), waits for what is in
 * flight, and adds the calls that completed to t->calls; server_cpu asks
 * the server for its CPU seconds so far (thread 0, nothing in flight).
 */
struct bench_stack_ops {
	const char *name;
	int (*setup)(struct bench_thread *t);
	int (*run)(struct bench_thread *t, double deadline, uint64_t max_calls, bool record);
	int (*server_cpu)(struct bench_thread *t, double *cpu_s);
	void (*teardown)(struct bench_thread *t);
	/* Client threads the stack needs for @p (tirpc: one per call in
	 * flight, its clients being synchronous). */
	unsigned int (*threads_for)(const struct bench_params *p);
	/* Optional: the provider counters of this thread's connections
	 * (client_work, on the thread itself) and the server's work counters
	 * so far (server_work, thread 0, nothing in flight). */
	void (*client_work)(struct bench_thread *t, struct bench_work *w);
	int (*server_work)(struct bench_thread *t, struct bench_work *w);
};

extern const struct bench_stack_ops bench_ours_ops;
extern const struct bench_stack_ops bench_raw_ops;
extern const struct bench_stack_ops bench_tirpc_ops;

/* Servers (one of each per process at most). */
int bench_ours_server_start(const struct bench_config *cfg, int port, int *bound_port);
void bench_ours_server_stop(void);
int bench_raw_server_start(const struct bench_config *cfg, int port, int *bound_port);
void bench_raw_server_stop(void);
int bench_tirpc_server_start(const struct bench_config *cfg, int port, int *bound_port);
void bench_tirpc_server_stop(void);

/* Client mode: ask a separate server process to exit. */
int bench_ours_stop_remote(const struct bench_config *cfg);
int bench_tirpc_stop_remote(const struct bench_config *cfg);

/* Set by a client's BENCH_STOP (or the raw STOP message): a separate server
 * process exits when it sees it. */
extern atomic_bool bench_stop_requested;

/* The ports the client halves connect to (set by main). */
struct bench_ports {
	int port[STACK_COUNT];
};
extern struct bench_ports bench_ports;

/* runner.c */
int bench_measure(const struct bench_config *cfg, const struct bench_params *p,
		  struct bench_result *r);
double bench_now(void);
/* CPU seconds (user + system) of the calling thread, or of the whole
 * process when the servers run in a process of their own. */
double bench_thread_cpu(void);
double bench_server_cpu(void);
/* Servers in a process of their own count the whole process's CPU. */
void bench_set_server_process(bool own_process);
/* The pattern servers return and clients send (any bytes would do; a fixed
 * one makes a stray copy visible in a debugger). */
void bench_fill(uint8_t *p, size_t n);
/* Page-aligned allocation, so registrations cover whole pages. */
void *bench_alloc(size_t n);

/* syscount.c: system calls of the calling thread (and threads it starts
 * afterwards), or why they cannot be counted. */
int bench_syscount_open(void);
uint64_t bench_syscount_read(int fd);
const char *bench_syscount_why(void);

/* nfs_bench.c: `rpcrdma-bench nfs ...` */
int bench_nfs_main(int argc, char **argv);
/* scale.c: `rpcrdma-bench scale ...` */
int bench_scale_main(int argc, char **argv);

/* report.c */
const char *bench_stack_name(enum bench_stack s);
const char *bench_workload_name(enum bench_workload w);
void bench_print_header(void);
void bench_print_result(const struct bench_result *r);
int bench_json_result(const char *path, const struct bench_config *cfg,
		      const struct bench_result *r);

#endif /* RPCRDMA_BENCH_H */
