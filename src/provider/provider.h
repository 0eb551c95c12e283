/*
 * The RDMA provider interface: one small vtable between the connection
 * engine (src/xprtrdma/) and an RDMA stack.  It knows nothing of RPC-over-RDMA;
 * it moves bytes, grants and revokes remote access, and manages connections.
 *
 * Implementations: "ofi" (libfabric, provider tcp, FI_EP_MSG; ofi.c) and
 * "verbs" (librdmacm + libibverbs; verbs.c, verbs_cm.c, verbs_mem.c).  The
 * shape follows verbs, so that provider maps onto it directly:
 * receive-before-accept, Send With Invalidate, per-RPC remote access (memory
 * windows or per-RPC registrations), IRD/ORD.
 *
 * Objects.  A provider instance (struct rpcrdma_provider) is one event loop's
 * view of one device: its protection domain, completion queue, event channel
 * and one pollable file descriptor.  Listeners, connections, local memory
 * registrations and remote-access grants hang off it.  Nothing is
 * thread-safe: an instance and everything made from it belong to one thread.
 *
 * Every device.  A provider whose devices are chosen by address (verbs) may
 * open an instance on a wildcard address (0.0.0.0, ::) as a listen-only
 * instance (RPCRDMA_PCAP_LISTEN_ONLY): an event channel and listeners, no
 * device.  Its listeners take connection requests on every device; each
 * CONNECT_REQUEST names, in conn->local_addr, the address the peer reached.
 * Such a request can only be handed over (conn_handoff) to an instance on
 * its device, which the owner opens on conn->local_addr the first time that
 * device shows up and reuses afterwards (conn_handoff says -EOPNOTSUPP when
 * an instance serves another device), or to another listen-only instance;
 * or rejected.  Providers without the flag (ofi) open a wildcard address
 * as any other: one instance serves every request.
 *
 * Normal operation.  The owner's loop sleeps on rpcrdma__provider_fd(); on
 * every wakeup it calls rpcrdma__provider_poll() until it returns 0, then
 * rpcrdma__provider_trywait(), and sleeps again only when trywait returns 0.
 * WARNING: some providers (libfabric tcp) make no progress at all, not even
 * on RDMA aimed at this process by its peers, except inside poll; a process
 * that stops polling stalls its peers.
 *
 * Events and ordering guarantees (every provider must keep them):
 *   - Every operation successfully posted produces exactly one completion,
 *     whatever happens to the connection (status FLUSHED if it never ran).
 *   - A connection's completions are never reported before its ESTABLISHED
 *     event.
 *   - A connection that was started (connect or accept returned 0) ends
 *     with exactly one terminal event: REJECTED, CONNECT_ERROR or
 *     DISCONNECTED.  It is the connection's last event: every operation
 *     posted on it has completed before it, so on receiving it the owner may
 *     reclaim all buffers posted there.  The owner then calls conn_destroy.
 *   - conn_destroy may be called in any state.  Operations still
 *     outstanding are then reported FLUSHED by later polls with conn == NULL
 *     (their ctx still names them), no terminal event follows, and no event
 *     already queued refers to the destroyed connection.
 *   - A Send is delivered to the peer only after the data of RDMA Writes
 *     posted before it on the same connection has been placed.
 *   - Receives may be posted from the connection's creation (or its
 *     CONNECT_REQUEST) on; Sends, Reads and Writes only once the state is
 *     ESTABLISHED (-ENOTCONN before), on the accepting side too.
 *
 * Memory.  Local buffers are registered once (reg_mr) and referenced by
 * scatter-gather entries.  Remote access is granted per RPC (grant): the
 * result is a (32-bit handle, offset) pair to put in a chunk segment.
 * Handles are unpredictable and are never reused while a peer may still hold
 * them (rfc5666bis section 10.1.2).  revoke() withdraws access; its REVOKE
 * completion says that the peer can no longer touch the memory (10.1.3:
 * "complete before the Upper Layer is allowed to ... use or alter" it).
 * revoke is also the call after the peer invalidated the handle itself
 * (a receive completion with RPCRDMA_PEVF_INVALIDATED).
 *
 * Errors: 0 or a negative errno.  -EINVAL: bad arguments (nothing was done);
 * -ENOTCONN: the connection is not in a state that allows the call;
 * -EAGAIN: a queue is full, retry after reaping completions;
 * -EOPNOTSUPP: the provider cannot do it (see the caps flags);
 * -ENOMEM; -EIO: the provider instance failed (only close is legal).
 */
#ifndef RPCRDMA_PROVIDER_H
#define RPCRDMA_PROVIDER_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "provider/bufpool.h"
#include "provider/regcache.h"

/* Connection private data both ways: the InfiniBand REQ limit, the
 * smallest any RDMA CM transport offers. */
#define RPCRDMA_PROV_PRIVATE_MAX 56u

/* Remote segments in one RDMA Read or Write: providers split the operation
 * into as many work requests as their hardware needs. */
#define RPCRDMA_PROV_MAX_RSEGS 16u

/* Local scatter-gather entries in one operation, for any provider: the
 * caps may say fewer, never more. */
#define RPCRDMA_PROV_MAX_SGE 16u

struct rpcrdma_provider_ops;

/* Capability flags (struct rpcrdma_prov_caps.flags). */
enum rpcrdma_prov_cap_flag {
	/* post_send can carry RPCRDMA_PSEND_INVALIDATE, and receives report
	 * handles the peer invalidated (RPCRDMA_PEVF_INVALIDATED). */
	RPCRDMA_PCAP_SEND_INVALIDATE = 1u << 0,
	/* revoke fences exactly one grant, as rfc5666bis 10.1.3 wants. */
	RPCRDMA_PCAP_PER_OP_REVOKE = 1u << 1,
	/* Private data arrives with the length the peer sent; otherwise it
	 * may arrive zero-padded (InfiniBand CM fixed-size fields). */
	RPCRDMA_PCAP_EXACT_PRIVATE_LEN = 1u << 2,
	/* An RDMA Write aimed at a bad handle completes with an error at the
	 * initiator.  Without it the Write may report success; the failure
	 * shows only as the connection's death. */
	RPCRDMA_PCAP_WRITE_ERRORS_REPORTED = 1u << 3,
	/* A handle works only on the connection it was granted on.  Without
	 * it, any connection of the same provider instance could use a handle
	 * it learnt; only unpredictability protects the memory. */
	RPCRDMA_PCAP_CONN_SCOPED_HANDLES = 1u << 4,
	/* A registration names addresses, resolved at each access, and pins
	 * nothing (ofi/tcp: a key table entry): one kept after the memory was
	 * freed and mapped again still reaches the new data.  Without it the
	 * registration cache keeps entries only while the memory hooks are
	 * active (regcache.h). */
	RPCRDMA_PCAP_REG_BY_ADDRESS = 1u << 5,
	/* The instance has no device (opened on a wildcard address): it only
	 * listens, and hands each request to an instance on the request's
	 * device (see "Every device" above).  accept, conn_create and reg_mr
	 * say -EOPNOTSUPP; the other caps are 0. */
	RPCRDMA_PCAP_LISTEN_ONLY = 1u << 6,
	/* RDMA Reads and Writes travel as messages that the CPU places
	 * (ofi/tcp): each costs about what a Send costs, so a result copied
	 * out of a larger receive buffer is cheaper than one more message.
	 * The inline defaults grow with it (xprt.h). */
	RPCRDMA_PCAP_CPU_PLACEMENT = 1u << 7,
	/* A Send's local entries need no registration (mr may be NULL): the
	 * provider reads them with the CPU while it posts or progresses
	 * (ofi/tcp: libfabric asks no FI_MR_LOCAL).  The memory must stay
	 * as it is until the Send completes, as with any entry. */
	RPCRDMA_PCAP_SEND_UNREGISTERED = 1u << 8,
	/* revoke's completion also fences the peer's RDMA Reads and Writes
	 * already under way on the grant (verbs: invalidation and
	 * deregistration stop the device's access mid-transfer).  Without
	 * it (ofi/tcp checks a key once, when an RDMA request arrives, and
	 * moves its data over many progress calls) only closing the
	 * connection's endpoint stops a transfer in progress: a call that
	 * ends with no answer while the peer may still be using its grants
	 * (time-out, cancel) completes only after that (clnt_calls.c). */
	RPCRDMA_PCAP_REVOKE_FENCES_INFLIGHT = 1u << 9,
};

struct rpcrdma_prov_caps {
	uint32_t flags;            /* enum rpcrdma_prov_cap_flag */
	uint32_t max_send_sge;     /* local entries of one Send */
	uint32_t max_recv_sge;     /* local entries of one receive */
	uint32_t max_rdma_sge;     /* local entries of one RDMA Read/Write */
	uint32_t max_rdma_segs;    /* remote segments of one Read/Write */
	uint32_t max_inline;       /* Send bytes that need no registration */
	uint32_t max_send_depth;   /* conn attr send_depth upper bound */
	uint32_t max_recv_depth;   /* conn attr recv_depth upper bound */
	uint32_t max_read_depth;   /* IRD/ORD: RDMA Reads in flight */
	uint32_t max_msg_size;     /* bytes of a Send or one RDMA segment */
	uint32_t max_private_data; /* RPCRDMA_PROV_PRIVATE_MAX or more */
};

/* Per-connection resources.  Zeros ask for the provider's defaults; values
 * above the caps are clamped, and the effective values are in
 * conn->attr once the connection object exists. */
struct rpcrdma_prov_conn_attr {
	uint32_t send_depth; /* Sends + RDMA Reads + Writes posted at once */
	uint32_t recv_depth; /* receives posted at once */
	/* RDMA Reads this side may have in flight as initiator (ORD) and
	 * accepts as responder (IRD).  Providers that negotiate it (verbs)
	 * report the agreed value in conn->attr when ESTABLISHED arrives; on
	 * ofi/tcp it is informational: nothing limits Reads on the wire. */
	uint32_t read_depth;
};

struct rpcrdma_prov_open_attr {
	/* Local address: selects the device (verbs) or interface (ofi) and is
	 * the source of outgoing connections.  The port is ignored.  A
	 * wildcard address may give a listen-only instance (verbs; see
	 * RPCRDMA_PCAP_LISTEN_ONLY). */
	const struct sockaddr *addr;
	socklen_t addrlen;
};

struct rpcrdma_provider {
	const struct rpcrdma_provider_ops *ops;
	struct rpcrdma_prov_caps caps;
	/* Registrations of caller memory kept between calls (regcache.c);
	 * created on first use, closed with the instance. */
	struct rpcrdma__regcache *regcache;
	/* Idle registered buffers, by size class (bufpool.c). */
	struct rpcrdma__bufpool *bufpool;
};

struct rpcrdma_prov_listener {
	struct rpcrdma_provider *prov;
	void *ctx; /* the owner's, reported with CONNECT_REQUEST */
};

enum rpcrdma_prov_conn_state {
	RPCRDMA_PCONN_IDLE,        /* created, not yet connecting */
	RPCRDMA_PCONN_REQUESTED,   /* incoming: awaiting accept or reject */
	RPCRDMA_PCONN_CONNECTING,  /* connect or accept called */
	RPCRDMA_PCONN_ESTABLISHED, /* ESTABLISHED reported */
	RPCRDMA_PCONN_CLOSED,      /* terminal event queued, or rejected */
};

struct rpcrdma_prov_conn {
	struct rpcrdma_provider *prov;
	void *ctx;                          /* the owner's; may be changed at any time */
	struct rpcrdma_prov_conn_attr attr; /* effective values */
	enum rpcrdma_prov_conn_state state; /* read-only for the owner */
	/* The peer's address, read-only for the owner: set when
	 * CONNECT_REQUEST is reported (incoming) or by connect (outgoing);
	 * peer_addrlen is 0 while unknown. */
	struct sockaddr_storage peer_addr;
	socklen_t peer_addrlen;
	/* The local address an incoming request reached (port included), set
	 * with CONNECT_REQUEST by providers that can tell (verbs); it picks
	 * the request's device.  local_addrlen is 0 while unknown. */
	struct sockaddr_storage local_addr;
	socklen_t local_addrlen;
};

/* A local registration.  Scatter-gather entries must lie inside one. */
struct rpcrdma_prov_mr {
	struct rpcrdma_provider *prov;
	void *addr;
	size_t length;
};

/* Remote access to one region for the life of one RPC. */
struct rpcrdma_prov_grant {
	struct rpcrdma_provider *prov;
	uint32_t handle;
};

enum rpcrdma_prov_access {
	RPCRDMA_PACCESS_REMOTE_READ = 1u << 0,  /* the peer may RDMA Read */
	RPCRDMA_PACCESS_REMOTE_WRITE = 1u << 1, /* the peer may RDMA Write */
};

/* A local scatter-gather entry.  mr may be NULL only for RPCRDMA_PSEND_INLINE
 * Sends. */
struct rpcrdma_prov_sge {
	void *addr;
	uint32_t length;
	struct rpcrdma_prov_mr *mr;
};

/* A remote segment, as in an RPC-over-RDMA chunk (host byte order). */
struct rpcrdma_prov_rseg {
	uint32_t handle;
	uint32_t length;
	uint64_t offset;
};

/* post_send flags */
enum rpcrdma_prov_send_flag {
	/* Invalidate the peer's handle inv_handle when the Send lands (needs
	 * RPCRDMA_PCAP_SEND_INVALIDATE, else -EOPNOTSUPP). */
	RPCRDMA_PSEND_INVALIDATE = 1u << 0,
	/* The payload (at most caps.max_inline bytes) is copied at post time:
	 * entries may use mr == NULL and may be reused on return. */
	RPCRDMA_PSEND_INLINE = 1u << 1,
};

enum rpcrdma_prov_event_type {
	/* A posted operation finished: op, ctx, status, byte_len. */
	RPCRDMA_PEV_COMPLETION = 1,
	/* A peer wants to connect: conn is new (state REQUESTED, resources as
	 * in the listener's attr, ctx NULL); post receives, then accept or
	 * reject it.  private_data: the peer's. */
	RPCRDMA_PEV_CONNECT_REQUEST,
	/* private_data: the peer's accept data (active side only). */
	RPCRDMA_PEV_ESTABLISHED,
	/* Terminal: the peer refused.  private_data: its reject data, if any;
	 * error: -ECONNREFUSED (also when nobody listens, on some providers). */
	RPCRDMA_PEV_REJECTED,
	/* Terminal: the attempt failed otherwise (unreachable, timed out,
	 * address error); error says why. */
	RPCRDMA_PEV_CONNECT_ERROR,
	/* Terminal: an established (or accepting) connection is gone.  error:
	 * 0 for an orderly disconnect by either side, else -errno. */
	RPCRDMA_PEV_DISCONNECTED,
	/* The provider instance (or a listener, when listener is set) failed;
	 * error says why.  For the instance, only close is legal afterwards. */
	RPCRDMA_PEV_DEVICE_ERROR,
};

enum rpcrdma_prov_op {
	RPCRDMA_POP_SEND = 1,
	RPCRDMA_POP_RECV,
	RPCRDMA_POP_READ,
	RPCRDMA_POP_WRITE,
	RPCRDMA_POP_REVOKE,
};

enum rpcrdma_prov_status {
	RPCRDMA_PST_SUCCESS = 0,
	/* The connection went down before the operation ran. */
	RPCRDMA_PST_FLUSHED,
	/* The peer refused a handle, offset, length or access right. */
	RPCRDMA_PST_REMOTE_ACCESS,
	/* The peer failed the operation otherwise (its receive was too short,
	 * ...). */
	RPCRDMA_PST_REMOTE_OP,
	/* The incoming message was longer than the posted receive. */
	RPCRDMA_PST_LOCAL_LENGTH,
	/* A local entry was outside its registration. */
	RPCRDMA_PST_LOCAL_PROTECTION,
	/* The peer had no receive posted and retries ran out (verbs). */
	RPCRDMA_PST_RNR_RETRY,
	/* The transport failed mid-operation (retries exceeded, reset). */
	RPCRDMA_PST_TRANSPORT,
	RPCRDMA_PST_OTHER,
};

enum rpcrdma_prov_event_flag {
	/* RECV: the peer invalidated invalidated_handle with this Send. */
	RPCRDMA_PEVF_INVALIDATED = 1u << 0,
	/* The peer sent more private data than RPCRDMA_PROV_PRIVATE_MAX; the
	 * rest was dropped. */
	RPCRDMA_PEVF_PRIVATE_TRUNCATED = 1u << 1,
};

struct rpcrdma_prov_event {
	enum rpcrdma_prov_event_type type;
	struct rpcrdma_prov_conn *conn;         /* NULL: destroyed, or none */
	struct rpcrdma_prov_listener *listener; /* CONNECT_REQUEST, DEVICE_ERROR */
	void *ctx;                       /* COMPLETION: the op's; otherwise conn's or listener's */
	enum rpcrdma_prov_op op;         /* COMPLETION */
	enum rpcrdma_prov_status status; /* COMPLETION */
	int error;                       /* negative errno detail, 0 if none */
	uint32_t byte_len;               /* COMPLETION: bytes received / moved */
	uint32_t flags;                  /* enum rpcrdma_prov_event_flag */
	uint32_t invalidated_handle;
	uint32_t private_len;
	uint8_t private_data[RPCRDMA_PROV_PRIVATE_MAX];
};

/*
 * Counters of one provider instance.  Listed once here; the conformance
 * suite checks the X-macro covers every field.
 */
#define RPCRDMA_PROV_STATS(X)                                                                      \
	X(conns_live)                                                                              \
	X(listeners_live)                                                                          \
	X(mrs_live)                                                                                \
	X(grants_live)                                                                             \
	X(conns_created)                                                                           \
	X(conns_established)                                                                       \
	X(conns_rejected)                                                                          \
	X(conns_handed_off)                                                                        \
	X(conns_failed)                                                                            \
	X(conns_disconnected)                                                                      \
	X(grants)                                                                                  \
	X(revokes)                                                                                 \
	X(key_redraws)                                                                             \
	X(reg_mrs)                                                                                 \
	X(dereg_mrs)                                                                               \
	/* Of reg_mrs: made by a grant for itself (verbs: rxe, no windows).  An */                 \
	/* ofi grant's key registration is counted in grants only (it pins   */                    \
	/* nothing: bench/README.md, "Work per RPC"). */                                           \
	X(grant_regs)                                                                              \
	X(sends)                                                                                   \
	X(recvs)                                                                                   \
	X(reads)                                                                                   \
	X(writes)                                                                                  \
	X(work_requests)                                                                           \
	X(flushed)                                                                                 \
	X(parked)                                                                                  \
	X(errors)                                                                                  \
	X(polls)                                                                                   \
	X(empty_polls)

struct rpcrdma_prov_stats {
#define RPCRDMA_PROV_STATS_FIELD(name) uint64_t name;
	RPCRDMA_PROV_STATS(RPCRDMA_PROV_STATS_FIELD)
#undef RPCRDMA_PROV_STATS_FIELD
};

/*
 * The vtable.  Arguments are checked by each implementation (these are
 * internal calls, but a bad SGE must never become a wild DMA).
 */
struct rpcrdma_provider_ops {
	const char *name;

	int (*open)(const struct rpcrdma_prov_open_attr *attr, struct rpcrdma_provider **out);
	/* Frees everything still made from the instance, without events. */
	void (*close)(struct rpcrdma_provider *p);
	int (*fd)(struct rpcrdma_provider *p);
	/* Up to max events; returns their count, 0 when none, -EIO once the
	 * instance has failed and its DEVICE_ERROR has been delivered. */
	int (*poll)(struct rpcrdma_provider *p, struct rpcrdma_prov_event *ev, unsigned int max);
	/* 0: safe to sleep on fd.  -EAGAIN: poll again first. */
	int (*trywait)(struct rpcrdma_provider *p);
	/* Optional: see rpcrdma__provider_cm_fd. */
	int (*cm_fd)(struct rpcrdma_provider *p);
	void (*cm_ready)(struct rpcrdma_provider *p);
	void (*stats)(struct rpcrdma_provider *p, struct rpcrdma_prov_stats *out);

	int (*reg_mr)(struct rpcrdma_provider *p, void *addr, size_t length,
	              struct rpcrdma_prov_mr **out);
	/* Only once no posted operation uses the registration. */
	void (*dereg_mr)(struct rpcrdma_prov_mr *mr);
	int (*grant)(struct rpcrdma_prov_conn *c, struct rpcrdma_prov_mr *mr, void *addr,
	             uint32_t length, unsigned int access, struct rpcrdma_prov_grant **out,
	             struct rpcrdma_prov_rseg *seg);
	int (*revoke)(struct rpcrdma_prov_grant *g, void *ctx);

	int (*listen)(struct rpcrdma_provider *p, const struct sockaddr *addr, socklen_t addrlen,
	              int backlog, const struct rpcrdma_prov_conn_attr *attr, void *ctx,
	              struct rpcrdma_prov_listener **out);
	int (*listener_addr)(struct rpcrdma_prov_listener *l, struct sockaddr_storage *ss,
	                     socklen_t *len);
	void (*listener_close)(struct rpcrdma_prov_listener *l);
	/*
	 * Optional: for a provider whose connection manager waits for ever on
	 * a peer that connects and never sends its request (ofi: tcp holds
	 * the connection, a descriptor, before any CONNECT_REQUEST).  Shuts
	 * down such connections of @l first seen by an earlier call at least
	 * @max_age_ms before @now_ms, and beyond @max_count of them the
	 * newest.  Returns how many it cut, or -errno.  Without it (verbs)
	 * the connection manager bounds them itself.
	 */
	int (*listener_cut_stale)(struct rpcrdma_prov_listener *l, uint64_t now_ms,
				  uint64_t max_age_ms, unsigned int max_count);

	int (*conn_create)(struct rpcrdma_provider *p, const struct rpcrdma_prov_conn_attr *attr,
	                   void *ctx, struct rpcrdma_prov_conn **out);
	int (*connect)(struct rpcrdma_prov_conn *c, const struct sockaddr *dst, socklen_t dstlen,
	               const void *pdata, size_t pdlen);
	int (*accept)(struct rpcrdma_prov_conn *c, const void *pdata, size_t pdlen);
	/*
	 * Hand an incoming connection over to another instance, so that a
	 * server can pin each connection to one of several worker threads.
	 * Called on the thread that owns c's instance, with c in state
	 * REQUESTED and nothing posted on it; @to is another open instance of
	 * the same provider on the same device, owned by another thread (this
	 * call is safe against that thread polling @to).  On 0, c no longer
	 * belongs to its old instance (no event of the old instance names it
	 * again) and @to's poll reports it as a new CONNECT_REQUEST (listener
	 * NULL, ctx @ctx, the peer's private data again), after which the
	 * owner of @to posts receives and accepts or rejects it as usual.  On
	 * error nothing changed.  -EOPNOTSUPP when @to is not compatible: of
	 * another provider, failed, or on another device than the request.
	 * A request of a listen-only instance (RPCRDMA_PCAP_LISTEN_ONLY) may
	 * go to an instance on its device, or to another listen-only one.
	 */
	int (*conn_handoff)(struct rpcrdma_prov_conn *c, struct rpcrdma_provider *to, void *ctx);
	int (*reject)(struct rpcrdma_prov_conn *c, const void *pdata, size_t pdlen);
	int (*disconnect)(struct rpcrdma_prov_conn *c);
	void (*conn_destroy)(struct rpcrdma_prov_conn *c);

	int (*post_recv)(struct rpcrdma_prov_conn *c, const struct rpcrdma_prov_sge *sgl,
	                 unsigned int nsge, void *ctx);
	int (*post_send)(struct rpcrdma_prov_conn *c, const struct rpcrdma_prov_sge *sgl,
	                 unsigned int nsge, unsigned int flags, uint32_t inv_handle, void *ctx);
	int (*post_read)(struct rpcrdma_prov_conn *c, const struct rpcrdma_prov_sge *sgl,
	                 unsigned int nsge, const struct rpcrdma_prov_rseg *segs, unsigned int nseg,
	                 void *ctx);
	int (*post_write)(struct rpcrdma_prov_conn *c, const struct rpcrdma_prov_sge *sgl,
	                  unsigned int nsge, const struct rpcrdma_prov_rseg *segs,
	                  unsigned int nseg, void *ctx);
};

/*
 * provider.c: look-up by name and small helpers.
 */

/**
 * rpcrdma__provider_open - open the provider called @name on a device
 * @name: "ofi" or "verbs"
 * @attr: the local address that picks the device or interface
 * @out: the instance, on success
 *
 * Returns 0; -ENOENT when no provider of that name is built in; -EINVAL for
 * a missing address; -ENODEV when the stack has no device for the address;
 * or the provider's error.
 */
int rpcrdma__provider_open(const char *name, const struct rpcrdma_prov_open_attr *attr,
                           struct rpcrdma_provider **out);

/**
 * rpcrdma__provider_lookup - a built-in provider's vtable
 * @name: "ofi" or "verbs"
 *
 * Return: its ops, or NULL when no provider of that name is built in.
 */
const struct rpcrdma_provider_ops *rpcrdma__provider_lookup(const char *name);

/**
 * rpcrdma__provider_names - the built-in providers
 *
 * Return: their names, NULL-terminated.
 */
const char *const *rpcrdma__provider_names(void);

/**
 * rpcrdma__provider_status_str - a completion status by name (traces, tests)
 * @st: the status
 */
const char *rpcrdma__provider_status_str(enum rpcrdma_prov_status st);
/**
 * rpcrdma__provider_event_str - an event type by name
 * @t: the type
 */
const char *rpcrdma__provider_event_str(enum rpcrdma_prov_event_type t);
/**
 * rpcrdma__provider_op_str - an operation by name
 * @op: the operation
 */
const char *rpcrdma__provider_op_str(enum rpcrdma_prov_op op);

/*
 * Helpers every implementation shares (provider.c).  They hold no state of
 * their own: each works on memory its caller owns.
 */

/* A queue of events not yet delivered; it grows as needed, ahead of need. */
#define RPCRDMA__EVQ_INITIAL 64u
struct rpcrdma_prov_evq {
	struct rpcrdma_prov_event *v;
	size_t cap, head, count;
};

/**
 * rpcrdma__provider_evq_init - an empty queue with room already allocated
 * @q: the queue, from the instance's open (its first events then allocate
 *	nothing: a failure there would fail the instance)
 *
 * Return: 0 or -ENOMEM.
 */
int rpcrdma__provider_evq_init(struct rpcrdma_prov_evq *q);
/**
 * rpcrdma__provider_evq_push - queue a copy of an event
 * @q: the queue
 * @ev: the event
 *
 * Return: 0, or -ENOMEM (the queue is left as it was): only when it is
 * full and the growth tried since it was half full has failed each time.
 */
int rpcrdma__provider_evq_push(struct rpcrdma_prov_evq *q, const struct rpcrdma_prov_event *ev);
/**
 * rpcrdma__provider_evq_pop - take the oldest queued event
 * @q: the queue
 * @ev: where it is copied
 *
 * Return: false when the queue is empty.
 */
bool rpcrdma__provider_evq_pop(struct rpcrdma_prov_evq *q, struct rpcrdma_prov_event *ev);
/**
 * rpcrdma__provider_evq_scrub - make queued events forget a connection or listener
 * @q: the queue
 * @c: completions lose their conn, connection events are dropped (type 0:
 *	skip it when popped); may be NULL
 * @l: events naming it get a NULL listener; may be NULL
 */
void rpcrdma__provider_evq_scrub(struct rpcrdma_prov_evq *q, const struct rpcrdma_prov_conn *c,
                                 const struct rpcrdma_prov_listener *l);
/**
 * rpcrdma__provider_evq_free - free a queue's storage
 * @q: the queue
 */
void rpcrdma__provider_evq_free(struct rpcrdma_prov_evq *q);

/**
 * rpcrdma__provider_copy_private - a peer's private data into an event
 * @ev: the event
 * @data: the data
 * @len: its length; beyond RPCRDMA_PROV_PRIVATE_MAX it is truncated (and
 *	the event flagged)
 */
void rpcrdma__provider_copy_private(struct rpcrdma_prov_event *ev, const void *data, size_t len);

/*
 * The inbox of an instance: the one piece of it other threads may touch.
 * conn_handoff pushes onto the target instance's inbox from the source's
 * thread; the target's poll takes everything on its own thread.  The
 * eventfd is in the instance's epoll set, so a push wakes its owner.
 */
struct rpcrdma_prov_inbox_item {
	struct rpcrdma_prov_inbox_item *next;
};

struct rpcrdma_prov_inbox {
	pthread_mutex_t lock;
	int efd;
	/* The eventfd has been written and not yet read: set and cleared
	 * under @lock, together with the write and the read, so the owner
	 * can skip the read (a system call per poll) while it is clear. */
	atomic_bool signaled;
	struct rpcrdma_prov_inbox_item *head, **tail;
};

/**
 * rpcrdma__provider_inbox_init - create an inbox's eventfd, watched by @epfd
 * @ib: the inbox
 * @epfd: the instance's epoll set
 *
 * Return: 0 or a negative errno.
 */
int rpcrdma__provider_inbox_init(struct rpcrdma_prov_inbox *ib, int epfd);
/**
 * rpcrdma__provider_inbox_push - queue an item for the owner (any thread)
 * @ib: the inbox
 * @it: the item
 *
 * Return: 0, or a negative errno (the item was not queued).
 */
int rpcrdma__provider_inbox_push(struct rpcrdma_prov_inbox *ib, struct rpcrdma_prov_inbox_item *it);
/**
 * rpcrdma__provider_inbox_push_with - queue an item after preparing under the lock
 * @ib: the inbox
 * @it: the item
 * @prep: run under the inbox's lock first; the item is queued only if it
 *	returns 0, and the owner's next take waits until both are done
 * @arg: its argument
 *
 * Lets a source finish moving a resource whose events the owner may see
 * before the item arrives.
 *
 * Return: 0, @prep's error, or a negative errno.
 */
int rpcrdma__provider_inbox_push_with(struct rpcrdma_prov_inbox *ib,
				      struct rpcrdma_prov_inbox_item *it, int (*prep)(void *),
				      void *arg);
/**
 * rpcrdma__provider_inbox_take - every item queued so far (owner's thread)
 * @ib: the inbox
 *
 * Return: the items, oldest first, or NULL.
 */
struct rpcrdma_prov_inbox_item *rpcrdma__provider_inbox_take(struct rpcrdma_prov_inbox *ib);
/**
 * rpcrdma__provider_inbox_destroy - close an inbox
 * @ib: the inbox; the caller frees what rpcrdma__provider_inbox_take()
 *	still returns
 */
void rpcrdma__provider_inbox_destroy(struct rpcrdma_prov_inbox *ib);
/**
 * rpcrdma__provider_inbox_fd - whether @fd is the inbox's eventfd (epoll dispatch)
 * @ib: the inbox
 * @fd: a ready descriptor
 */
bool rpcrdma__provider_inbox_fd(const struct rpcrdma_prov_inbox *ib, int fd);

/*
 * The poll loop every implementation runs: deliver queued events, then the
 * instance's failure once, then ask @fill to read more from the stack.
 * @fill returns true when it read something (which it queued on @q or
 * turned into nothing); @announce, when set, is told of each
 * CONNECT_REQUEST as it is delivered.  Returns as provider poll does.
 */
struct rpcrdma_prov_poll_state {
	struct rpcrdma_prov_evq *q;
	struct rpcrdma_prov_stats *st;
	const int *failed;
	bool *failed_reported;
	bool (*fill)(void *ctx);
	void (*announce)(void *ctx, struct rpcrdma_prov_conn *c);
	void *ctx;
};

/**
 * rpcrdma__provider_poll_loop - the poll every implementation runs
 * @ps: the instance's queue, counters, failure and @fill (see above)
 * @ev: where events are stored
 * @max: room in @ev
 *
 * Return: as the provider's poll does.
 */
int rpcrdma__provider_poll_loop(const struct rpcrdma_prov_poll_state *ps,
				struct rpcrdma_prov_event *ev, unsigned int max);

/**
 * rpcrdma__provider_set_peer - record a connection's peer address
 * @c: the connection
 * @sa: the address; taken only when a well-formed IPv4 or IPv6 address of
 *	at least its family's size (otherwise the peer stays unknown)
 * @len: its length
 */
void rpcrdma__provider_set_peer(struct rpcrdma_prov_conn *c, const struct sockaddr *sa,
				size_t len);
/**
 * rpcrdma__provider_set_local - record the local address a request reached
 * @c: the connection
 * @sa: the address; taken as rpcrdma__provider_set_peer() takes its own
 * @len: its length
 */
void rpcrdma__provider_set_local(struct rpcrdma_prov_conn *c, const struct sockaddr *sa,
				 size_t len);

/*
 * Handles a provider chooses itself.  Drawn from getrandom() (rfc5666bis
 * 10.1.2: unpredictable), never 0, and never one of the last
 * RPCRDMA_PROV_QUARANTINE retired handles, so a peer that still holds a
 * revoked handle cannot reach the next RPC's memory through it.  Keeping
 * live handles unique is the caller's job (the RDMA stack usually refuses
 * a duplicate).
 */
#define RPCRDMA_PROV_QUARANTINE 4096u

struct rpcrdma_prov_keys {
	uint32_t pool[64];
	unsigned int pool_left;
	uint64_t redraws;                       /* quarantined or 0 draws */
	uint32_t ring[RPCRDMA_PROV_QUARANTINE]; /* retired, oldest first */
	size_t ring_head, ring_count;
	uint32_t table[2 * RPCRDMA_PROV_QUARANTINE]; /* the same, 0 = empty */
};

/**
 * rpcrdma__provider_key_draw - a fresh handle
 * @k: the instance's keys
 * @key: the handle drawn
 *
 * Return: 0, -EAGAIN (no acceptable key in many draws), or getrandom()'s
 * negative errno.
 */
int rpcrdma__provider_key_draw(struct rpcrdma_prov_keys *k, uint32_t *key);
/**
 * rpcrdma__provider_key_quarantined - whether @key was retired recently
 * @k: the instance's keys
 * @key: a handle
 */
bool rpcrdma__provider_key_quarantined(const struct rpcrdma_prov_keys *k, uint32_t key);
/**
 * rpcrdma__provider_key_retire - put a revoked handle in quarantine
 * @k: the instance's keys
 * @key: the handle
 */
void rpcrdma__provider_key_retire(struct rpcrdma_prov_keys *k, uint32_t key);

/**
 * rpcrdma__provider_range_in - whether [addr, addr + len) lies inside [base, base + blen)
 * @addr: the range
 * @len: its length
 * @base: the enclosing range
 * @blen: its length
 */
bool rpcrdma__provider_range_in(const void *addr, size_t len, const void *base, size_t blen);

/**
 * rpcrdma__provider_sgl_check - check a local scatter list
 * @p: the instance whose registrations the entries must lie in
 * @sgl: the list
 * @nsge: its entries
 * @max: the most entries allowed
 * @mr_optional: an entry's mr may be NULL
 *
 * Return: the byte total, or -EINVAL.
 */
int64_t rpcrdma__provider_sgl_check(const struct rpcrdma_provider *p,
                                    const struct rpcrdma_prov_sge *sgl, unsigned int nsge,
                                    unsigned int max, bool mr_optional);

/**
 * rpcrdma__provider_rma_check - check an RDMA Read's or Write's arguments
 * @p: the instance (its caps and registrations)
 * @sgl: the local entries
 * @nsge: their number
 * @segs: the remote segments
 * @nseg: their number
 *
 * Entry counts, registrations, segment lengths, offsets that would wrap,
 * and equal non-zero totals.
 *
 * Return: the total, or -EINVAL.
 */
int64_t rpcrdma__provider_rma_check(const struct rpcrdma_provider *p,
                                    const struct rpcrdma_prov_sge *sgl, unsigned int nsge,
                                    const struct rpcrdma_prov_rseg *segs, unsigned int nseg);

/*
 * Splits a Read or Write into work requests of at most @lmax local and
 * @rmax remote entries.  The cursor walks both lists at once; a piece is the
 * overlap of the current local and remote entries, and a request ends when
 * the next piece would need one entry too many.  Start with a zeroed
 * cursor; each call fills @out and returns true until nothing is left.
 */
struct rpcrdma_prov_rma_cursor {
	unsigned int li, ri;
	uint64_t loff, roff;
};

struct rpcrdma_prov_rma_piece {
	unsigned int nlocal, nremote;
	struct iovec local[RPCRDMA_PROV_MAX_SGE];
	const struct rpcrdma_prov_sge *local_sge[RPCRDMA_PROV_MAX_SGE]; /* for its mr */
	struct rpcrdma_prov_rseg remote[RPCRDMA_PROV_MAX_RSEGS];
};

/**
 * rpcrdma__provider_rma_next - the next work request of a split Read or Write
 * @cur: the cursor (zeroed to start)
 * @sgl: the local entries
 * @nsge: their number
 * @segs: the remote segments
 * @nseg: their number
 * @lmax: local entries one request may take
 * @rmax: remote entries one request may take
 * @out: the request
 *
 * Return: true while a request was filled, false when nothing is left.
 */
bool rpcrdma__provider_rma_next(struct rpcrdma_prov_rma_cursor *cur,
                                const struct rpcrdma_prov_sge *sgl, unsigned int nsge,
                                const struct rpcrdma_prov_rseg *segs, unsigned int nseg,
                                unsigned int lmax, unsigned int rmax,
                                struct rpcrdma_prov_rma_piece *out);

/*
 * Calls through the vtable, so callers need not reach for ops themselves.
 */
static inline void rpcrdma__provider_close(struct rpcrdma_provider *p)
{
	rpcrdma__regcache_close(p);
	rpcrdma__bufpool_close(p);
	p->ops->close(p);
}

static inline int rpcrdma__provider_fd(struct rpcrdma_provider *p)
{
	return p->ops->fd(p);
}

static inline int rpcrdma__provider_poll(struct rpcrdma_provider *p, struct rpcrdma_prov_event *ev,
                                         unsigned int max)
{
	return p->ops->poll(p, ev, max);
}

/* The owner is about to sleep: on its thread, once per loop iteration,
 * the cached registrations of memory freed meanwhile that no call uses
 * are deregistered (regcache.c), so an idle owner pins none of it. */
static inline int rpcrdma__provider_trywait(struct rpcrdma_provider *p)
{
	rpcrdma__regcache_reap(p);
	return p->ops->trywait(p);
}

/**
 * rpcrdma__provider_cm_fd - take connection events off the instance's fd
 * @p: the instance
 *
 * For a provider whose connection events cost a system call to look for
 * even when there are none (ofi: each EQ read runs libfabric's progress),
 * the owner may watch them on a second fd and say when it is readable, so
 * that an ordinary wakeup does not look.  After this call the owner must
 * watch the returned fd and call rpcrdma__provider_cm_ready() each time it
 * is readable; poll and trywait keep their rules.
 *
 * Return: the fd, or -1 when connection events stay on the instance's fd.
 */
static inline int rpcrdma__provider_cm_fd(struct rpcrdma_provider *p)
{
	return p->ops->cm_fd ? p->ops->cm_fd(p) : -1;
}

/* The fd from rpcrdma__provider_cm_fd() is readable: poll looks next. */
static inline void rpcrdma__provider_cm_ready(struct rpcrdma_provider *p)
{
	if (p->ops->cm_ready)
		p->ops->cm_ready(p);
}

static inline void rpcrdma__provider_stats(struct rpcrdma_provider *p,
                                           struct rpcrdma_prov_stats *out)
{
	p->ops->stats(p, out);
}

static inline int rpcrdma__provider_reg_mr(struct rpcrdma_provider *p, void *addr, size_t length,
                                           struct rpcrdma_prov_mr **out)
{
	return p->ops->reg_mr(p, addr, length, out);
}

static inline void rpcrdma__provider_dereg_mr(struct rpcrdma_prov_mr *mr)
{
	mr->prov->ops->dereg_mr(mr);
}

/*
 * Grant the peer of @c @access to [addr, addr + length), which lies inside
 * @mr.  Fills @seg with the handle, length and offset to advertise.
 * -ENOTCONN: @c is closed or, with RPCRDMA_PCAP_CONN_SCOPED_HANDLES (memory
 * windows, bound on the connection's QP), not yet ESTABLISHED.  -EAGAIN: too
 * many grants and revocations are still in flight on @c (verbs): poll, then
 * call again.
 */
static inline int rpcrdma__provider_grant(struct rpcrdma_prov_conn *c, struct rpcrdma_prov_mr *mr,
                                          void *addr, uint32_t length, unsigned int access,
                                          struct rpcrdma_prov_grant **out,
                                          struct rpcrdma_prov_rseg *seg)
{
	return c->prov->ops->grant(c, mr, addr, length, access, out, seg);
}

/*
 * Withdraw a grant.  Returns 0 and later a REVOKE completion with @ctx (its
 * conn is NULL; it may come from the device, through the fd, or from the
 * provider itself); @g is gone on return.  On -EAGAIN (as for grant) @g is
 * untouched.  ORDER: reuse the memory only after that completion.
 */
static inline int rpcrdma__provider_revoke(struct rpcrdma_prov_grant *g, void *ctx)
{
	return g->prov->ops->revoke(g, ctx);
}

static inline int rpcrdma__provider_listen(struct rpcrdma_provider *p, const struct sockaddr *addr,
                                           socklen_t addrlen, int backlog,
                                           const struct rpcrdma_prov_conn_attr *attr, void *ctx,
                                           struct rpcrdma_prov_listener **out)
{
	return p->ops->listen(p, addr, addrlen, backlog, attr, ctx, out);
}

static inline int rpcrdma__provider_listener_addr(struct rpcrdma_prov_listener *l,
                                                  struct sockaddr_storage *ss, socklen_t *len)
{
	return l->prov->ops->listener_addr(l, ss, len);
}

static inline bool rpcrdma__provider_can_cut_stale(const struct rpcrdma_prov_listener *l)
{
	return l->prov->ops->listener_cut_stale != NULL;
}

static inline int rpcrdma__provider_listener_cut_stale(struct rpcrdma_prov_listener *l,
						       uint64_t now_ms, uint64_t max_age_ms,
						       unsigned int max_count)
{
	if (!l->prov->ops->listener_cut_stale)
		return -EOPNOTSUPP;
	return l->prov->ops->listener_cut_stale(l, now_ms, max_age_ms, max_count);
}

/* Requests not yet accepted or rejected are rejected: those already
 * reported get DISCONNECTED with -ECONNABORTED (destroy them as usual);
 * those not yet reported vanish with their CONNECT_REQUEST. */
static inline void rpcrdma__provider_listener_close(struct rpcrdma_prov_listener *l)
{
	l->prov->ops->listener_close(l);
}

/* An outgoing connection: post receives on it, then connect. */
static inline int rpcrdma__provider_conn_create(struct rpcrdma_provider *p,
                                                const struct rpcrdma_prov_conn_attr *attr,
                                                void *ctx, struct rpcrdma_prov_conn **out)
{
	return p->ops->conn_create(p, attr, ctx, out);
}

static inline int rpcrdma__provider_connect(struct rpcrdma_prov_conn *c, const struct sockaddr *dst,
                                            socklen_t dstlen, const void *pdata, size_t pdlen)
{
	return c->prov->ops->connect(c, dst, dstlen, pdata, pdlen);
}

/* On error the request is rejected and queued receives are flushed; no
 * terminal event follows. */
static inline int rpcrdma__provider_accept(struct rpcrdma_prov_conn *c, const void *pdata,
                                           size_t pdlen)
{
	return c->prov->ops->accept(c, pdata, pdlen);
}

/* -EOPNOTSUPP when the provider cannot hand connections over. */
static inline int rpcrdma__provider_conn_handoff(struct rpcrdma_prov_conn *c,
						 struct rpcrdma_provider *to, void *ctx)
{
	if (!c || !c->prov->ops->conn_handoff)
		return -EOPNOTSUPP;
	return c->prov->ops->conn_handoff(c, to, ctx);
}

/* The connection becomes CLOSED without a terminal event; receives posted
 * on it are flushed.  Destroy it afterwards. */
static inline int rpcrdma__provider_reject(struct rpcrdma_prov_conn *c, const void *pdata,
                                           size_t pdlen)
{
	return c->prov->ops->reject(c, pdata, pdlen);
}

/* Starts an orderly disconnect; DISCONNECTED follows.  0 if the connection
 * is already closed or closing. */
static inline int rpcrdma__provider_disconnect(struct rpcrdma_prov_conn *c)
{
	return c->prov->ops->disconnect(c);
}

static inline void rpcrdma__provider_conn_destroy(struct rpcrdma_prov_conn *c)
{
	c->prov->ops->conn_destroy(c);
}

/* Allowed from creation (or CONNECT_REQUEST) on, so that receives are in
 * place before the peer can send. */
static inline int rpcrdma__provider_post_recv(struct rpcrdma_prov_conn *c,
                                              const struct rpcrdma_prov_sge *sgl, unsigned int nsge,
                                              void *ctx)
{
	return c->prov->ops->post_recv(c, sgl, nsge, ctx);
}

static inline int rpcrdma__provider_post_send(struct rpcrdma_prov_conn *c,
                                              const struct rpcrdma_prov_sge *sgl, unsigned int nsge,
                                              unsigned int flags, uint32_t inv_handle, void *ctx)
{
	return c->prov->ops->post_send(c, sgl, nsge, flags, inv_handle, ctx);
}

/* Remote segments -> local scatter list; the lengths must add up equal. */
static inline int rpcrdma__provider_post_read(struct rpcrdma_prov_conn *c,
                                              const struct rpcrdma_prov_sge *sgl, unsigned int nsge,
                                              const struct rpcrdma_prov_rseg *segs,
                                              unsigned int nseg, void *ctx)
{
	return c->prov->ops->post_read(c, sgl, nsge, segs, nseg, ctx);
}

/* Local scatter list -> remote segments; the lengths must add up equal. */
static inline int rpcrdma__provider_post_write(struct rpcrdma_prov_conn *c,
                                               const struct rpcrdma_prov_sge *sgl,
                                               unsigned int nsge,
                                               const struct rpcrdma_prov_rseg *segs,
                                               unsigned int nseg, void *ctx)
{
	return c->prov->ops->post_write(c, sgl, nsge, segs, nseg, ctx);
}

#ifdef RPCRDMA_HAVE_OFI
extern const struct rpcrdma_provider_ops rpcrdma__provider_ofi_ops;
#endif
#ifdef RPCRDMA_HAVE_VERBS
extern const struct rpcrdma_provider_ops rpcrdma__provider_verbs_ops;
#endif

#endif /* RPCRDMA_PROVIDER_H */
