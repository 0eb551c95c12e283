/*
 * The end-to-end RPC suite's shared parts: the test program's XDR types and
 * procedures (service.c), set-up helpers, raw sockets that speak record
 * marking by hand, and the CHECK macros.  Cases live in rpc_suite.c (API)
 * and tcp_cases.c (raw TCP and hostile input).
 */
#ifndef RPCRDMA_TESTS_RPC_SUITE_H
#define RPCRDMA_TESTS_RPC_SUITE_H

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rpc/core.h"
#include "rpc/loop_internal.h"
#include "rpcrdma/rpc.h"

#define TEST_PROG 0x20000099u
#define ECHO_MAX (1u << 20)
/*
 * The largest ECHO reply, as a caller puts it in rpcrdma_call.max_reply:
 * the accepted reply header with an AUTH_NONE verifier (24 bytes), the
 * result's length word and ECHO_MAX bytes of data, rounded up.
 */
#define ECHO_REPLY_MAX (ECHO_MAX + 64u)
#define ECHO_LATER_MS 300u /* ECHO_LATER answers this long after it ran */

enum {
	P_NULL,
	P_ECHO,
	P_ADD,
	P_SYSERR,
	P_DEFER,
	P_WHOAMI,
	P_NEVER,
	P_COUNT,
	P_EMPTY,
	P_BADRES,
	P_ECHO_LATER,
	P_COUNT_IDEMPOTENT, /* COUNT, set idempotent in version 1: no duplicate request cache */
	P_FILL,             /* u32 n -> n bytes (DDP-eligible) of fill_byte(i): small call, big reply */
	P_NPROCS,
};

extern enum rpcrdma_transport transport;
/* --transport's argument ("tcp" or "rdma") into transport; false if neither. */
bool transport_from_arg(const char *name);
extern _Atomic int checks; /* CHECK runs in server threads too */

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		checks++;                                                                          \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		long long a_ = (long long)(a), b_ = (long long)(b);                                \
		checks++;                                                                          \
		if (a_ != b_) {                                                                    \
			fprintf(stderr, "%s:%d: CHECK_EQ failed: %s = %lld, %s = %lld (%s)\n",     \
				__FILE__, __LINE__, #a, a_, #b, b_, rpcrdma_strerror((int)a_));    \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

/* ------------------------------------------------------------ XDR types */

struct echo {
	uint32_t len;
	uint8_t data[ECHO_MAX];
};

struct add_args {
	int32_t a, b;
};

struct defer_args {
	uint32_t delay_ms;
	uint32_t value;
};

struct whoami {
	uint32_t flavor;
	uint32_t uid;
	uint32_t gid;
};

struct deferred {
	struct rpcrdma__timer timer;
	struct rpcrdma_svc_req *req;
	uint32_t *res; /* NULL: the results are ready already (ECHO_LATER) */
	uint32_t value;
	struct deferred *next, **pprev;
};

/* Touched only by the thread running the server's loop. */
struct svc_state {
	struct rpcrdma_loop *loop;
	unsigned int count_execs;
	unsigned int echo_execs;
	unsigned int defer_execs;
	unsigned int never_execs;
	unsigned int free_res_calls;
	/* ECHO's and FILL's free_res, which poisons the result: on worker
	 * threads too (bound_queued_total), hence atomic. */
	atomic_uint echo_frees;
	struct rpcrdma_client *cut;    /* COUNT or ECHO drops this client's connection */
	struct rpcrdma_server *doomed; /* COUNT destroys this server */
	struct deferred *pending;
	uint32_t echo_later_ms; /* ECHO_LATER's delay when not 0, else ECHO_LATER_MS */
};

extern struct svc_state svc;
extern const struct rpcrdma_svc_proc procs[P_NPROCS];

struct env {
	struct rpcrdma_loop *loop;
	struct rpcrdma_server *srv;
	struct rpcrdma_client *clnt;
	char port[16];
};

struct raw {
	int fd;
	struct rpcrdma_loop *loop; /* pumped while we wait on the socket */
	uint8_t *buf;
	size_t cap;
	size_t have; /* bytes in buf */
	size_t used; /* of which the record last returned */
};

struct async_ctx {
	int done;
	int fails;
};

struct add_call {
	struct rpcrdma_call call;
	struct add_args args;
	int32_t sum;
	int completions;
	struct async_ctx *ctx;
};

struct defer_call {
	struct rpcrdma_call call;
	struct defer_args args;
	uint32_t res;
	int completions;
	int status;
};

struct server_thread {
	struct rpcrdma_loop *loop;
	struct rpcrdma_server *srv;
	char port[16];
	pthread_t th;
};

/* service.c */
static inline uint8_t fill_byte(size_t i)
{
	return (uint8_t)(i * 7u + 1u);
}
int xdr_echo_enc(struct rpcrdma_xdr_stream *x, void *o);
int xdr_echo_dec(struct rpcrdma_xdr_stream *x, void *o);
int xdr_add_enc(struct rpcrdma_xdr_stream *x, void *o);
int xdr_add_dec(struct rpcrdma_xdr_stream *x, void *o);
int xdr_i32_enc(struct rpcrdma_xdr_stream *x, void *o);
int xdr_i32_dec(struct rpcrdma_xdr_stream *x, void *o);
int xdr_u32_enc(struct rpcrdma_xdr_stream *x, void *o);
int xdr_u32_dec(struct rpcrdma_xdr_stream *x, void *o);
int xdr_defer_enc(struct rpcrdma_xdr_stream *x, void *o);
int xdr_defer_dec(struct rpcrdma_xdr_stream *x, void *o);
int xdr_whoami_enc(struct rpcrdma_xdr_stream *x, void *o);
int xdr_whoami_dec(struct rpcrdma_xdr_stream *x, void *o);
int xdr_fail_enc(struct rpcrdma_xdr_stream *x, void *o);
void svc_forget_pending(void);
void svc_answer_pending(void);
void svc_hold_pending(void);
struct rpcrdma_server *server_on(struct rpcrdma_loop *loop, uint32_t max_record, char *port);
struct rpcrdma_client *client_for(struct rpcrdma_loop *loop, const char *port, uint32_t prog,
				  uint32_t vers, const struct rpcrdma_client_opts *opts);
void env_up(struct env *e, uint32_t max_record);
void env_down(struct env *e);
void call_init(struct rpcrdma_call *c, uint32_t proc, rpcrdma_xdr_fn enc, void *args,
	       rpcrdma_xdr_fn dec, void *res);
int add(struct rpcrdma_client *c, int32_t a, int32_t b, int32_t *sum);
void echo_offer_ddp(struct rpcrdma_call *c, struct echo *out);
void open_credits(struct rpcrdma_client *c, uint64_t n);
void pump_until(struct rpcrdma_loop *loop, const bool *flag);
void pump_ms(struct rpcrdma_loop *loop, int ms);
void raw_adopt(struct raw *r, struct rpcrdma_loop *loop, int fd);
void raw_open(struct raw *r, struct rpcrdma_loop *loop, const char *port);
void raw_close(struct raw *r);
void raw_reconnect(struct raw *r, struct raw *old, struct rpcrdma_loop *loop, const char *port);
uint16_t raw_local_port(const struct raw *r);
void raw_abort(struct raw *r);
void raw_send(struct raw *r, const void *p, size_t n);
void put32(uint8_t *p, uint32_t v);
uint32_t get32(const uint8_t *p);
void raw_send_record(struct raw *r, const void *msg, size_t n);
ssize_t raw_recv_record(struct raw *r, struct rpcrdma_loop *loop, int ms);
size_t build_call(uint8_t *p, uint32_t xid, uint32_t rpcvers, uint32_t proc);
const uint8_t *reply_body(struct raw *r, ssize_t len, uint32_t xid, uint32_t stat);
bool raw_closed_by_server(struct raw *r, struct rpcrdma_loop *loop);
void expect_rejected(struct rpcrdma_client *c, uint32_t proc, rpcrdma_xdr_fn enc, void *args,
		     uint32_t accept_stat);
void add_done(struct rpcrdma_call *call, void *ctx);
void start_adds(struct rpcrdma_client *c, struct add_call *calls, int n, struct async_ctx *ctx,
		int timeout_ms);
void defer_done(struct rpcrdma_call *call, void *ctx);
void start_defer(struct rpcrdma_client *c, struct defer_call *d, uint32_t delay, uint32_t value);
int accept_one(struct rpcrdma_loop *loop, int lfd);
size_t build_reply(uint8_t *p, uint32_t xid, int32_t result);
void server_thread_start(struct server_thread *st);
void server_thread_stop(struct server_thread *st);

/* tcp_cases.c */
void case_rpc_mismatch_raw(void);
void case_auth(void);
void case_drc_replay_raw(void);
void case_reconnect_backoff_brief(void);
void case_hostile_fragments(void);
void case_hostile_lengths(void);
void case_max_record(void);
void case_server_backpressure(void);
void case_drc_parked(void);
void case_client_hostile_server(void);
void case_conn_cut_port_churn(void);

/* bounds_cases.c */
void case_bound_conns(void);
void case_bound_conns_evict(void);
void case_bound_conns_evict_workers(void);
void case_bound_conns_evict_reading(void);
void case_bound_conns_evict_trickle(void);
void case_bound_conns_evict_reads(void);
void case_bound_conns_evict_stalled(void);
void case_bound_idle(void);
void case_bound_partial(void);
void case_bound_drain(void);
void case_bound_queued_total(void);
void case_bound_queued_room(void);
void case_bound_recv_total(void);
void case_bound_recv_drain(void);
void case_bound_too_large(void);
void case_bound_too_large_staged(void);
void case_bound_read_budget(void);
void case_bound_held_calls(void);
void case_bound_kept_replies(void);
void case_bound_pool_idle(void);
void case_bound_drc_key(void);
void case_bound_inflight(void);
void case_bound_record_pipelined(void);
void case_bound_record_paused(void);
void case_bound_conns_closed_calls(void);
void case_bound_handshake(void);
void case_bound_handshake_nofile(void);
void case_bound_nofile_evicts(void);
void case_bound_handshake_destroy(void);
void case_bound_drc(void);

/* client_bounds_cases.c */
void case_client_bound_reply_record(void);
void case_client_bound_slow_reply(void);
void case_client_bound_send_stall(void);
void case_client_bound_call_timeout(void);

/* workers_cases.c */
void case_workers(void);
void case_workers_inflight(void);

/* nconnect_cases.c */
void case_nconnect_spread(void);
void case_nconnect_lost(void);
void case_nconnect_bound(void);

/* teardown_cases.c */
void case_teardown_workers_deferred(void);
void case_teardown_deferred_after_close(void);
void case_teardown_workers_replies_unread(void);
void case_teardown_workers_reads_inflight(void);
void case_teardown_nconnect_in_done(void);
void case_teardown_nconnect_reconnecting(void);
void case_teardown_workers_destroy_twice(void);
void case_teardown_nconnect_lost_in_done(void);
void case_teardown_nconnect_connecting(void);
void case_teardown_fencing_in_done(void);
void case_teardown_workers_create_fails(void);
void case_teardown_send_failed_in_done(void);
void case_teardown_destroy_in_free_res(void);
void case_teardown_workers_connect_storm(void);
void case_teardown_worker_loop_kept(void);
void case_teardown_forked_child(void);
void case_workers_busy_poll(void);

#endif /* RPCRDMA_TESTS_RPC_SUITE_H */
