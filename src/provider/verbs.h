/*
 * Internals of the verbs provider, shared by its three files: verbs.c (the
 * instance, connections' QPs and completions, posting), verbs_cm.c
 * (connection management over RDMA CM) and verbs_mem.c (registrations and
 * remote-access grants).  The objects and the calls between those files;
 * nothing here is part of the provider interface (provider.h).
 */
#ifndef RPCRDMA_PROVIDER_VERBS_H
#define RPCRDMA_PROVIDER_VERBS_H

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "common/list.h"
#include "provider/provider.h"

/* Verbs has no remote scatter list: one work request per remote segment. */
#define VB_WR_PER_OP RPCRDMA_PROV_MAX_RSEGS
/* Window binds and invalidations in flight on one connection. */
#define VB_MEM_OPS 128u
/* A slot that is not one of the owner's operations. */
#define VB_OP_BIND 0x100u

/* How a grant opens memory to the peer (verbs_mem.c). */
enum vb_grant_mode {
	VB_GRANT_WINDOW,        /* a window over the owner's registration */
	VB_GRANT_WINDOW_OWN_MR, /* a window over a registration of the range */
	VB_GRANT_REGISTRATION,  /* a registration with remote access */
};

/* The first member of objects that are RDMA CM id contexts. */
enum vb_kind {
	VB_KIND_CONN = 0x636f6e6e,
	VB_KIND_LISTENER = 0x6c697374,
	/* A connection request between two instances (conn_handoff): its id
	 * is on the target's channel, the target has not adopted it yet. */
	VB_KIND_HANDOFF = 0x68616e64,
};

struct vb_prov {
	struct rpcrdma_provider base;
	struct rdma_event_channel *ec;
	/* Bound to the instance's address for the instance's life: it pins
	 * the device in librdmacm and names it. */
	struct rdma_cm_id *anchor;
	/* NULL, as are anchor, ctx, pd and cch, on a listen-only instance
	 * (a wildcard address: RPCRDMA_PCAP_LISTEN_ONLY). */
	struct ibv_device *dev;
	struct ibv_context *ctx; /* ours, not librdmacm's */
	struct ibv_pd *pd;
	struct ibv_comp_channel *cch;
	int epfd;
	struct sockaddr_storage addr; /* port 0 */
	enum vb_grant_mode mode;
	bool use_mw;          /* mode is one of the window modes */
	bool inv_as_csum;     /* rxe: IBV_WC_IP_CSUM_OK means invalidated */
	bool mw_no_reuse;     /* rxe: an invalidated window is deallocated */
	uint32_t nmw, max_mw; /* windows allocated, allowed */
	int failed;
	bool failed_reported;
	struct rpcrdma_prov_evq q;
	struct rpcrdma__list conns, listeners, mrs, grants, hot;
	struct ibv_mw **mw_free; /* oldest first */
	size_t nfree, capfree;
	struct rpcrdma_prov_keys keys;
	struct rpcrdma_prov_stats st;
	struct rpcrdma_prov_inbox inbox; /* connection requests handed to us */
	/* Which of the epoll set's fds to read (vb_fill).  Reading the CM
	 * channel, the completion channel or the async fd costs a system call
	 * even when empty; one zero-time epoll_wait on the set says which are
	 * ready, when the sources are due: at each wake-up (trywait set it
	 * before the sleep; the completion channel is read first then, and
	 * the set asked only if it was empty) and every VB_SOURCES_EVERY
	 * fills, so that a busy CQ starves none of them. */
	bool sources_due;
	bool cm_ready, cch_ready, async_ready;
	unsigned int fills_since_sources;
};

/* A connection request on its way to another instance (conn_handoff). */
struct vb_handoff {
	enum vb_kind kind; /* VB_KIND_HANDOFF: the id's context meanwhile */
	struct rpcrdma_prov_inbox_item item;
	struct rdma_cm_id *id;
	struct vb_prov *to;
	struct rpcrdma_prov_conn_attr attr;
	void *ctx;
	struct sockaddr_storage peer, local;
	socklen_t peerlen, locallen;
	uint8_t peer_ird, peer_ord;
	uint8_t pdata[RPCRDMA_PROV_PRIVATE_MAX], pdlen;
};

struct vb_listener {
	enum vb_kind kind;
	struct rpcrdma_prov_listener base;
	struct vb_prov *p;
	struct rpcrdma__list node;
	struct rdma_cm_id *id;
	struct rpcrdma_prov_conn_attr attr;
};

enum vb_pool { VB_POOL_SEND, VB_POOL_RECV, VB_POOL_MEM, VB_NPOOLS };

struct vb_conn;

struct vb_op {
	struct vb_conn *conn;
	void *ctx;
	struct vb_op *next;
	struct ibv_mw *mw; /* REVOKE: the window being invalidated */
	struct ibv_mr *mr; /* REVOKE: its own registration, dropped after */
	unsigned int op;   /* enum rpcrdma_prov_op, or VB_OP_BIND */
	enum vb_pool pool;
	bool in_use;
	unsigned int pending; /* work requests not completed */
	enum rpcrdma_prov_status status;
	int error;
	uint32_t byte_len, flags, inv_handle;
};

struct vb_conn {
	enum vb_kind kind;
	struct rpcrdma_prov_conn base;
	struct vb_prov *p;
	struct rpcrdma__list node, hot_node;
	struct rpcrdma__list grants; /* window grants bound on this QP */
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct vb_listener *listener; /* REQUESTED: where it arrived */
	bool passive, announced, destroyed, closing, was_up;
	bool armed, hot, qp_failed;
	int fail_err;
	uint8_t peer_ird, peer_ord; /* the REQ's, for accept */
	/* Active: what the REQ carries.  Passive: what it carried (handoff). */
	uint8_t pdata[RPCRDMA_PROV_PRIVATE_MAX], pdlen;
	struct vb_op *ops;
	unsigned int nops;
	struct vb_op *free[VB_NPOOLS];
};

struct vb_mr {
	struct rpcrdma_prov_mr base;
	struct rpcrdma__list node;
	struct ibv_mr *mr;
	/* rxe: registrations of exact parts of it that grants bound windows
	 * over, kept for the next grant of the same part (verbs_mem.c). */
	struct vb_sub *subs;
	unsigned int nsubs;
};

struct vb_grant {
	struct rpcrdma_prov_grant base;
	struct rpcrdma__list node;  /* p->grants */
	struct rpcrdma__list cnode; /* conn->grants, window grants while bound */
	struct vb_conn *conn;
	struct vb_mr *mr;
	struct ibv_mw *mw;  /* NULL once deallocated (its QP is gone) */
	struct ibv_mr *own; /* the grant's own registration, if it has one */
	bool invalidated;   /* by the peer's Send With Invalidate */
};

static inline struct vb_prov *prov_of(struct rpcrdma_provider *b)
{
	return rpcrdma__container_of(b, struct vb_prov, base);
}

static inline struct vb_conn *conn_of(struct rpcrdma_prov_conn *b)
{
	return rpcrdma__container_of(b, struct vb_conn, base);
}

static inline int errno_neg(void)
{
	return errno > 0 ? -errno : -EIO;
}

/* libibverbs' calls return a positive errno. */
static inline int ret_neg(int ret)
{
	return ret > 0 ? -ret : (ret < 0 ? ret : 0);
}

static inline size_t sockaddr_size(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* 0.0.0.0 or ::, which RDMA CM binds to no device. */
static inline bool is_wildcard(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
}

/* A listen-only instance: no device of its own (is_wildcard at open). */
static inline bool listen_only(const struct vb_prov *p)
{
	return p->dev == NULL;
}

static inline int check_addr(const struct sockaddr *sa, socklen_t len)
{
	if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
		return -EINVAL;
	return len >= (socklen_t)sockaddr_size(sa) ? 0 : -EINVAL;
}

/* verbs.c */
void rpcrdma__vb_fail(struct vb_prov *p, int err);
void rpcrdma__vb_emit(struct vb_prov *p, const struct rpcrdma_prov_event *ev);
void rpcrdma__vb_copy_private(struct rpcrdma_prov_event *ev, const uint8_t *data, size_t len);
struct vb_op *rpcrdma__vb_op_get(struct vb_conn *c, enum vb_pool pool);
void rpcrdma__vb_op_put(struct vb_conn *c, struct vb_op *o);
void rpcrdma__vb_conn_retire(struct vb_conn *c);
void rpcrdma__vb_conn_end(struct vb_conn *c, enum rpcrdma_prov_event_type type, int error,
			  const uint8_t *data, size_t len);
void rpcrdma__vb_reap(struct vb_conn *c);
struct rpcrdma_prov_conn_attr rpcrdma__vb_clamp_attr(const struct vb_prov *p,
						     const struct rpcrdma_prov_conn_attr *in);
struct vb_conn *rpcrdma__vb_conn_alloc(struct vb_prov *p, const struct rpcrdma_prov_conn_attr *attr,
				       void *ctx);
int rpcrdma__vb_qp_create(struct vb_conn *c);
int rpcrdma__vb_qp_ready(struct vb_conn *c, int ird, int ord);
void rpcrdma__vb_conn_free(struct vb_conn *c);
void rpcrdma__vb_on_established(struct vb_conn *c, const uint8_t *data, size_t len);

/* verbs_cm.c */
int rpcrdma__vb_cm_read_one(struct vb_prov *p);
int rpcrdma__vb_listen(struct rpcrdma_provider *b, const struct sockaddr *addr, socklen_t addrlen,
		       int backlog, const struct rpcrdma_prov_conn_attr *attr, void *ctx,
		       struct rpcrdma_prov_listener **out);
int rpcrdma__vb_listener_addr(struct rpcrdma_prov_listener *bl, struct sockaddr_storage *ss,
			      socklen_t *len);
void rpcrdma__vb_listener_close(struct rpcrdma_prov_listener *bl);
int rpcrdma__vb_conn_create(struct rpcrdma_provider *b, const struct rpcrdma_prov_conn_attr *attr,
			    void *ctx, struct rpcrdma_prov_conn **out);
int rpcrdma__vb_connect(struct rpcrdma_prov_conn *bc, const struct sockaddr *dst, socklen_t dstlen,
			const void *pdata, size_t pdlen);
int rpcrdma__vb_accept(struct rpcrdma_prov_conn *bc, const void *pdata, size_t pdlen);
int rpcrdma__vb_reject(struct rpcrdma_prov_conn *bc, const void *pdata, size_t pdlen);
int rpcrdma__vb_disconnect(struct rpcrdma_prov_conn *bc);
int rpcrdma__vb_conn_handoff(struct rpcrdma_prov_conn *bc, struct rpcrdma_provider *to, void *ctx);
/* Adopts what other instances handed over.  Returns whether there was any. */
bool rpcrdma__vb_inbox_drain(struct vb_prov *p);
/* Refuses what is still in the inbox (close). */
void rpcrdma__vb_inbox_close(struct vb_prov *p);

/* verbs_mem.c */
void rpcrdma__vb_remote_invalidated(struct vb_conn *c, uint32_t rkey);
void rpcrdma__vb_drop_windows(struct vb_conn *c);
int rpcrdma__vb_reg_mr(struct rpcrdma_provider *b, void *addr, size_t length,
		       struct rpcrdma_prov_mr **out);
void rpcrdma__vb_dereg_mr(struct rpcrdma_prov_mr *bm);
int rpcrdma__vb_grant(struct rpcrdma_prov_conn *bc, struct rpcrdma_prov_mr *mr, void *addr,
		      uint32_t length, unsigned int access, struct rpcrdma_prov_grant **out,
		      struct rpcrdma_prov_rseg *seg);
int rpcrdma__vb_revoke(struct rpcrdma_prov_grant *bg, void *ctx);
int rpcrdma__vb_pick_mode(struct vb_prov *p, const struct ibv_device_attr *da);
void rpcrdma__vb_revoke_done(struct vb_prov *p, struct vb_op *o);
void rpcrdma__vb_mem_close(struct vb_prov *p);

#endif /* RPCRDMA_PROVIDER_VERBS_H */
