/*
 * Test harness for the RPC-over-RDMA connection engine (src/xprtrdma/): a
 * small fake RPC core on each side (the callbacks of transport.h) and a
 * raw peer that speaks to the provider directly, to send what no correct
 * peer would (bad headers, legacy messages, RDMA aimed at revoked
 * handles).  Everything runs in one process over one provider ("ofi"
 * on 127.0.0.1 unless --provider/--addr say otherwise, as in the lab),
 * driven by one event loop; the raw peers are polled by the same waiting
 * loop.
 *
 * The fake cores' messages: a call is
 *   xid, 'TEST', seed, reply_ddp_len, reply_plain_len,
 *   opaque pre<>, DDP opaque arg<>, opaque post<>
 * and its reply
 *   xid, status (mismatches the server found), DDP opaque result<>,
 *   opaque plain<>
 * with every byte of every opaque drawn from pattern(seed ^ k, index), so
 * both sides verify each other byte for byte.
 */
#ifndef RPCRDMA_TESTS_XPRT_HARNESS_H
#define RPCRDMA_TESTS_XPRT_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <netinet/in.h>

#include "provider/provider.h"
#include "rpc/loop_internal.h"
#include "rpc/transport.h"
#include "rpcrdma/header.h"
#include "rpcrdma/loop.h"
#include "xprtrdma/xprt.h"

#define WAIT_MS 8000

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

#define CHECK_RC(expr, want)                                                                       \
	do {                                                                                       \
		long rc_ = (long)(expr);                                                           \
		if (rc_ != (long)(want)) {                                                         \
			fprintf(stderr, "%s:%d: %s = %ld, want %ld\n", __FILE__, __LINE__, #expr,  \
				rc_, (long)(want));                                                \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

#define CHECK_OK(expr) CHECK_RC(expr, 0)

/* Pump until @cond holds or WAIT_MS pass. */
#define WAIT(env, cond)                                                                            \
	do {                                                                                       \
		int64_t dl_ = now_ms() + WAIT_MS;                                                  \
		while (!(cond) && now_ms() < dl_)                                                  \
			pump(env);                                                                 \
	} while (0)

#define TEST_MAGIC 0x54455354u

/* --provider and --addr (defaults "ofi", 127.0.0.1): servers listen on
 * and clients connect to test_addr; a raw peer that connects does so from
 * --peer-addr (default: test_addr).  The engine's client picks its local
 * address by route, so in the lab (--addr 10.77.0.1 --peer-addr
 * 10.77.0.2) every client sits on rxe1 and every server on rxe0. */
extern const char *test_provider;

/* The inline thresholds, both ways, of a fixture opened without options
 * (tclient_open, tserver_open, the e2e environments): the message-form
 * boundaries the cases test sit at it on every provider, whatever the
 * provider's own default (xprt.h: larger for replies on ofi). */
#define TEST_INLINE 8192u
extern const char *test_addr;
extern const char *test_peer_addr;

int64_t now_ms(void);
uint8_t pattern(uint32_t seed, size_t i);
void fill(uint8_t *p, size_t n, uint32_t seed);
size_t mismatches(const uint8_t *p, size_t n, uint32_t seed);
uint32_t rnd(void);
/* test_addr with @port: where servers listen and clients connect. */
struct sockaddr_in loopback(int port);

/*
 * The fake client core.
 */
struct tcall {
	struct rpcrdma__creq req;
	uint32_t seed;
	uint32_t pre_len, arg_len, post_len;
	uint32_t rddp_len, rplain_len;
	uint8_t *pre, *arg, *post;
	uint8_t *ddp_buf; /* the Write chunk target (NULL: none offered) */
	size_t ddp_cap;
	size_t max_reply;
	enum { TC_NEW, TC_SENT, TC_DONE } state;
	int status;     /* 0: reply verified; else why not */
	int failed_err; /* cb->failed */
	uint64_t grants_live_at_done;
	struct tcall *next;
};

struct tclient {
	struct env *env;
	struct rpcrdma__clnt_transport *t;
	bool up;
	int connects, disconnects, last_err;
	int writables;
	uint64_t grants_live_at_disconnect;
	uint32_t next_xid;
	struct tcall *calls;
	unsigned int done, failed, bad;
};

/*
 * The fake server core.
 */
struct theld {
	struct rpcrdma__sreq *sreq;
	uint32_t xid, seed, rddp_len, rplain_len;
	uint32_t errors;
};

/* The largest reply part the fake core makes; larger asks are refused. */
#define TSERVER_REPLY_MAX (64u << 20)

struct tserver {
	struct env *env;
	struct rpcrdma__svc_transport *t;
	int port;
	bool hold; /* keep calls instead of answering */
	struct theld held[512];
	unsigned int nheld;
	unsigned int calls, bad, closed;
	uint32_t verify_errors;
};

/*
 * A raw peer on the provider API.
 */
#define RAW_RBUFS 16
#define RAW_RSIZE 8192
#define RAW_MSGS 64

struct raw_msg {
	uint8_t data[RAW_RSIZE];
	uint32_t len;
	uint32_t flags, inv;
};

struct raw {
	struct env *env;
	struct rpcrdma_provider *p;
	struct rpcrdma_prov_listener *lst;
	struct rpcrdma_prov_conn *c;
	uint8_t *rmem, *smem;
	struct rpcrdma_prov_mr *rmr, *smr;
	unsigned int snext;
	bool up, down;
	int down_err;
	const void *accept_pd; /* server mode: private data to accept with */
	size_t accept_pdlen;
	bool no_pd;
	uint8_t peer_pd[RPCRDMA_PROV_PRIVATE_MAX];
	uint32_t peer_pdlen;
	struct raw_msg msgs[RAW_MSGS];
	unsigned int nmsgs, taken;
	unsigned int sends_done, rma_done, rma_errors, revokes_done;
	int last_rma_status;
};

struct env {
	struct rpcrdma_loop *loop;
	struct raw *raws[2];
};

void pump(struct env *e);

/* Client */
int tclient_open(struct env *e, struct tclient *tc, int port,
		 const struct rpcrdma_client_opts *opts);
void tclient_close(struct tclient *tc);
struct tcall *tcall_new(struct tclient *tc, uint32_t pre, uint32_t arg, uint32_t post,
			uint32_t rddp, uint32_t rplain, size_t ddp_cap, size_t max_reply);
void tcall_free(struct tcall *call);
/* call_begin, encode, call_send.  Returns call_send's (or begin's) code. */
int tcall_send(struct tclient *tc, struct tcall *call);
/* Send, wait for the answer, check it.  Returns 0 when verified. */
int tcall_roundtrip(struct tclient *tc, struct tcall *call);
uint64_t grants_live(struct rpcrdma_provider *p);

/* Server */
int tserver_open(struct env *e, struct tserver *ts, const struct rpcrdma_server_opts *opts);
void tserver_close(struct tserver *ts);
/* Answers held call @i. */
int tserver_answer(struct tserver *ts, unsigned int i);

/* Raw peer */
int raw_open(struct env *e, struct raw *r, int slot);
void raw_close(struct raw *r);
int raw_connect(struct raw *r, int port, const void *pd, size_t pdlen);
int raw_listen(struct raw *r, int *port);
void raw_poll(struct raw *r);
int raw_send(struct raw *r, const void *msg, size_t len);
/* The next message received, or NULL after WAIT_MS. */
struct raw_msg *raw_wait_msg(struct raw *r);
/* Grant the peer access to @buf; the registration is returned too. */
int raw_grant(struct raw *r, void *buf, size_t len, unsigned int access,
	      struct rpcrdma_prov_mr **mr, struct rpcrdma_prov_grant **g,
	      struct rpcrdma_segment *seg);

/* Encode a test call message into @xdr (no DDP context: all inline). */
int encode_test_call(struct rpcrdma_xdr_stream *xdr, uint32_t xid, uint32_t seed, uint32_t pre,
		     uint32_t arg, uint32_t post, uint32_t rddp, uint32_t rplain);

#endif
