/*
 * librpcrdma: ONC RPC clients and servers over RDMA or TCP.
 *
 * The same API runs over RPC-over-RDMA (providers "ofi" and "verbs") and
 * over TCP with record marking (RFC 5531 section 11), chosen by
 * rpcrdma_transport in the options.
 *
 * Arguments and results are described by XDR functions (rpcrdma_xdr_fn)
 * that both encode and decode through struct rpcrdma_xdr_stream.  Bulk data
 * goes through rpcrdma_xdr_encode_ddp() / rpcrdma_xdr_decode_ddp(): over
 * RDMA such an item travels in a Read chunk (arguments) or a Write chunk
 * (results), placed straight from / into the caller's buffer; over TCP it is
 * an ordinary opaque.  Upper layers never see chunks.
 */
#ifndef RPCRDMA_RPC_H
#define RPCRDMA_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rpcrdma/common.h"
#include "rpcrdma/loop.h"
#include "rpcrdma/rpc_msg.h"
#include "rpcrdma/xdr.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * rpcrdma_xdr_fn - encode or decode one procedure's arguments or results
 * @xdr: the stream, positioned at the item
 * @obj: the caller's structure
 *
 * Returns 0 or an XDR error.  On the server, a decode error answers
 * GARBAGE_ARGS.
 */
typedef int (*rpcrdma_xdr_fn)(struct rpcrdma_xdr_stream *xdr, void *obj);

enum rpcrdma_transport {
	RPCRDMA_TRANSPORT_RDMA = 0, /* RPC-over-RDMA through a provider */
	RPCRDMA_TRANSPORT_TCP = 1,  /* ONC RPC record marking on TCP */
};

/** Library-level call failures (besides -errno and enum rpcrdma_errcode). */
enum rpcrdma_call_errcode {
	/** The server answered with a non-SUCCESS accept_stat or MSG_DENIED;
	 *  the reply is in the call's reply field.  Do not retry. */
	RPCRDMA_ERR_RPC_REJECTED = -5100,
	/** The peer answered with RDMA_ERROR (ERR_CHUNK, or ERR_VERS that
	 *  could not be resolved; Version Two: ERR_BAD_HEADER,
	 *  ERR_INVAL_OPTION).  rpcrdma_call_strerror() names the code, and
	 *  ERR_VERS's range.  Do not retry the same call. */
	RPCRDMA_ERR_TRANSPORT_ERROR = -5101,
	/** No reply before the call's time-out. */
	RPCRDMA_ERR_TIMEDOUT = -5102,
	/** The client was destroyed or the call cancelled. */
	RPCRDMA_ERR_CANCELLED = -5103,
	/** A reverse-direction call before the peer said it takes them
	 *  (RFC 8167 section 6; rpcrdma_backchannel_enable()).  Nothing was
	 *  sent; call again once the upper layer enabled the backchannel. */
	RPCRDMA_ERR_BACKCHANNEL_OFF = -5104,
	/** rpcrdma_client_opts.nconnect is above RPCRDMA_NCONNECT_MAX. */
	RPCRDMA_ERR_NCONNECT = -5105,
};

struct rpcrdma_client_opts {
	enum rpcrdma_transport transport;
	const char *provider;          /* "ofi" (default) or "verbs" */
	/*
	 * Our largest inline Send, and our receive buffers (so the largest
	 * reply that comes inline).  0: 8192 on verbs; 69632 on ofi, where a
	 * READ or WRITE of up to 64 KiB then travels in one Send each way
	 * rather than with an RDMA Write or Read (which costs a message
	 * there, as a Send does).  What is used is the smaller of ours and
	 * the peer's (RFC 8797).
	 */
	uint32_t inline_send;
	uint32_t inline_recv;
	uint32_t credits;              /* credits to request; 0: 128 */
	/*
	 * Highest RPC-over-RDMA version to offer: 1 (the default; 0 means
	 * 1) or 2 (a larger value means 2).  With 2 the first message of each connection is a
	 * Version Two probe of at most 1024 bytes, sent alone; a responder
	 * that answers RDMA_ERROR/ERR_VERS gets the call again in Version
	 * One, and its address is remembered (process-wide) so that later
	 * connections start in Version One.  Once Version Two is agreed the
	 * inline thresholds move to its 4096-byte defaults (or the RFC 8797
	 * private data), on the same connection.
	 */
	uint32_t max_vers;
	/*
	 * Per call; 0: 30000, -1: none.  Over TCP it also bounds what a
	 * server can make the connection hold: a reply record begun and not
	 * whole after this long (from its first byte; it does not restart
	 * with each byte), or calls queued for sending of which not one byte
	 * has been written for this long, close the connection (with -1: 30
	 * s, the server's record_timeout_ms default), and its calls go again
	 * on the next connection as after any lost connection
	 * (reply_record_timeouts, send_stall_timeouts).  A call sent with a
	 * longer timeout_ms of its own lengthens it to that for the rest of
	 * the connection, and one sent with -1 turns it off until the next
	 * connection: the clock never cuts a call before its own time-out.
	 */
	int timeout_ms;
	unsigned int retries;          /* retransmissions after reconnect; 0: 3 */
	const struct rpcrdma_opaque_auth *cred; /* NULL: AUTH_NONE */
	/* TCP: largest reply record; 0: 1 MiB + 64 KiB.  Below
	 * RPCRDMA_CLIENT_MAX_RECORD_MIN no reply fits: refused (-EINVAL),
	 * over RDMA too, which ignores it otherwise. */
	uint32_t max_record;
	/*
	 * Connections to the server (as NFS's nconnect): 0 or 1 is one;
	 * up to RPCRDMA_NCONNECT_MAX, more is refused with
	 * RPCRDMA_ERR_NCONNECT.  Calls go to the live connection with the
	 * fewest calls out (ties in turn); each connection has its own
	 * credits and its own reconnection.  A call whose connection is lost
	 * goes again, same XID, on another live one over RDMA; over TCP on
	 * its own connection once it is back (from the same port), because
	 * servers key their duplicate request cache by port over TCP.
	 * Callbacks (backchannel.h, NFSv4.1) are served on the first
	 * connection only.
	 */
	unsigned int nconnect;
};

#define RPCRDMA_NCONNECT_MAX 16u

/* The smallest reply record: a NULL reply (accepted, AUTH_NONE verifier,
 * no results), 6 XDR words; the record mark is not counted. */
#define RPCRDMA_CLIENT_MAX_RECORD_MIN 24u
/* The smallest call: a NULL call with AUTH_NONE credential and verifier,
 * 10 XDR words; neither the record mark nor the RPC-over-RDMA header is
 * counted. */
#define RPCRDMA_SERVER_MAX_RECORD_MIN 40u

/** Fill @opts with the defaults documented above. */
RPCRDMA_EXTERN void rpcrdma_client_opts_default(struct rpcrdma_client_opts *opts);

struct rpcrdma_client;

/**
 * rpcrdma_client_create - a client for one program/version on one server
 * @host, @service: numeric address or name, and port number or service
 *	name; only loopback and lab addresses are used by the tests.
 *	@service NULL: ask rpcbind on @host for @prog/@vers under the netid
 *	of the transport and @host's family ("rdma", "rdma6", "tcp",
 *	"tcp6"; RPCBPROC_GETADDR, include/rpcrdma/rpcbind.h) and use the
 *	port it gives; this waits for rpcbind (at most its 2 s time-out),
 *	running @loop.
 *
 * The connection is made on the first call (or now: see
 * rpcrdma_client_connect()).  Returns 0, -EINVAL, -ENOMEM,
 * RPCRDMA_ERR_NO_PROVIDER for an unknown provider (before: -ENOENT), a
 * host that does not resolve as -EHOSTUNREACH, RPCRDMA_ERR_NO_SERVICE for
 * an unknown @service name, a port above 65535 or port 0 (where no
 * server listens), -EAGAIN when the name server failed for now
 * (try again later), or with @service NULL -ENOENT
 * for a program rpcbind does not know and the errors of
 * rpcrdma_rpcbind_getaddr().
 */
RPCRDMA_EXTERN int rpcrdma_client_create(struct rpcrdma_loop *loop, const char *host,
					 const char *service, uint32_t prog, uint32_t vers,
					 const struct rpcrdma_client_opts *opts,
					 struct rpcrdma_client **out);

/** Connect now and wait for it.  Returns 0 or -errno (-ECONNREFUSED, ...). */
RPCRDMA_EXTERN int rpcrdma_client_connect(struct rpcrdma_client *clnt);

/**
 * rpcrdma_client_destroy - fail every outstanding call with
 * RPCRDMA_ERR_CANCELLED and free
 *
 * The completions run before it returns (a call that had already failed,
 * its done() not yet run, completes with its own error); calls they start on this client
 * fail with -ESHUTDOWN.  Called from inside one of this client's own
 * callbacks, the memory is released at the loop's next iteration (until
 * then rpcrdma_loop_destroy() returns -EBUSY), and over RDMA a call whose
 * memory the server may still reach (one that timed out, or was being
 * given up on, with Read or Write chunks or a Reply chunk granted)
 * completes only once that access is revoked: after this returns, at the
 * latest at that next iteration.  Keep such calls' struct rpcrdma_call
 * and buffers until their done has run.  In a process forked after its
 * loop was made it does nothing (rpcrdma_loop_destroy() says why).
 */
RPCRDMA_EXTERN void rpcrdma_client_destroy(struct rpcrdma_client *clnt);

/** One Write chunk offered for a DDP-eligible result (struct rpcrdma_call). */
struct rpcrdma_ddp_buf {
	void *buf;  /* where the result is placed; may be NULL when len is 0 */
	size_t len; /* its room; 0: return that result inline */
};

#define RPCRDMA_CALL_MAX_WRITE_CHUNKS 4u

/**
 * struct rpcrdma_call - one RPC, owned by the caller until it completes
 *
 * Set the inputs; the library fills the outputs before the completion
 * callback (or before rpcrdma_client_call() returns).
 */
struct rpcrdma_call {
	/* Inputs. */
	uint32_t proc;
	rpcrdma_xdr_fn encode_args; /* NULL: no arguments */
	void *args;
	rpcrdma_xdr_fn decode_res;  /* NULL: no results */
	void *res;
	/*
	 * Largest reply this procedure can produce, in bytes, or 0 when
	 * unknown: the whole RPC reply message (header, verifier, results
	 * with their XDR padding), so it includes the largest DDP-eligible
	 * result ddp_buf may receive.  Over RDMA, when ddp_buf is set and
	 * max_reply >= ddp_len, ddp_len is subtracted first (that result
	 * travels in the Write chunk); a max_reply below ddp_len is taken to
	 * leave the DDP result out already.  A Reply chunk of what remains
	 * (capped at 16 MiB) is offered exactly when that, with the reply's
	 * transport header, exceeds the inline receive size.  With 0 none is
	 * offered, and a reply that does not fit inline then fails the call
	 * with RPCRDMA_ERR_TRANSPORT_ERROR (the server's ERR_CHUNK, which
	 * rpcrdma_call_strerror() says came with no Reply chunk).  TCP
	 * ignores it (opts.max_record bounds replies there).
	 */
	size_t max_reply;
	/*
	 * Where a DDP-eligible result (rpcrdma_xdr_decode_ddp) is to land, and
	 * its room: over RDMA a Write chunk of ddp_len bytes is offered for
	 * the first such result, placed without a copy; a later one, or one
	 * longer than ddp_len, comes inline (or in the Reply chunk).  TCP
	 * ignores both.
	 */
	void *ddp_buf;
	size_t ddp_len;
	/*
	 * Several DDP-eligible results in one reply, as an NFSv4 COMPOUND
	 * with READ and READLINK operations has (draft-callaghan-nfsdirect-00
	 * section 4): over RDMA one Write chunk per entry, in this order, and
	 * the n-th rpcrdma_xdr_decode_ddp() of the results resolves the n-th
	 * chunk.  An entry of len 0 offers a zero-length chunk (a segment of
	 * zeros): that result comes inline (or in the Reply chunk), and the
	 * next result takes the next chunk.  Results beyond the list come
	 * inline.  At most RPCRDMA_CALL_MAX_WRITE_CHUNKS entries; with
	 * ddp_count non-zero, ddp_buf must be NULL.  max_reply is reduced by
	 * the sum of the lengths, as for ddp_len.  TCP ignores the list.
	 */
	const struct rpcrdma_ddp_buf *ddp_list;
	unsigned int ddp_count;
	int timeout_ms; /* 0: the client's */

	/* Outputs. */
	int status;                     /* 0 or a negative error */
	struct rpcrdma_rpc_reply reply; /* the reply header, when one came */
	uint32_t xid;

	/* Completion for rpcrdma_client_call_async(). */
	void (*done)(struct rpcrdma_call *call, void *ctx);
	void *ctx;

	/* Library-private: while the call runs, and after it completed (the
	 * detail of its failure, rpcrdma_call_strerror()). */
	void *priv[8];
};

/**
 * rpcrdma_client_call - make a call and wait for it (runs the loop)
 *
 * Returns @call->status: 0 when the results decoded, RPCRDMA_ERR_RPC_REJECTED
 * (see @call->reply), RPCRDMA_ERR_TIMEDOUT, RPCRDMA_ERR_TRANSPORT_ERROR,
 * a decode error for results that do not parse, or -errno.  When the loop
 * fails (rpcrdma_loop_run_once() < 0) the call fails with that error, except
 * a call already given up on whose memory the peer may still reach: that
 * one returns only once the access is revoked, with its own status.
 */
RPCRDMA_EXTERN int rpcrdma_client_call(struct rpcrdma_client *clnt, struct rpcrdma_call *call);

/**
 * rpcrdma_call_strerror - why a completed call failed, in words
 *
 * As rpcrdma_strerror(@call->status), with what the status code alone
 * cannot say, which the library leaves in the call's private slots:
 *   - RPCRDMA_ERR_RPC_REJECTED: the server's answer by name
 *     (PROG_UNAVAIL, PROC_UNAVAIL, AUTH_ERROR AUTH_TOOWEAK...) and what it
 *     means;
 *   - RPCRDMA_ERR_TRANSPORT_ERROR: the RDMA_ERROR's code: ERR_CHUNK (with
 *     the Reply chunk offered, or that none was), ERR_VERS with the
 *     server's version range, Version Two's ERR_BAD_HEADER or
 *     ERR_INVAL_OPTION;
 *   - RPCRDMA_ERR_BAD_HEADER: which rule the reply's chunks broke;
 *   - a reply that does not decode: the header or the results, and at
 *     which byte;
 *   - a connection lost (or never made) more than opts.retries times:
 *     how many times, whether the call was ever sent, and the last
 *     reason;
 *   - RPCRDMA_ERR_TIMEDOUT: the time-out, and whether the call was sent;
 *   - a call that does not encode: the header or the arguments, and the
 *     largest call the transport sends when it did not fit.
 * Pass the call unchanged since it completed: the detail applies only to
 * the status it was recorded with.  Returns a static string, or for those
 * with detail a string in a buffer of the calling thread that stays valid
 * until its fourth next call of this function.
 */
RPCRDMA_EXTERN const char *rpcrdma_call_strerror(const struct rpcrdma_call *call);

/**
 * rpcrdma_client_call_async - start a call; @call->done runs on the loop
 *
 * Returns 0 (done will run exactly once, never from inside this call) or a
 * negative error (done will not run): -EINVAL, -ENOMEM, or -ESHUTDOWN when
 * the client is being destroyed.
 */
RPCRDMA_EXTERN int rpcrdma_client_call_async(struct rpcrdma_client *clnt,
					     struct rpcrdma_call *call);

/*
 * Counters of one connection (a client's, or all of a server's), in the
 * spirit of the kernel's mountstats "xprt: rdma" line.  Listed once; a
 * test checks the X-macro covers every field.
 */
#define RPCRDMA_XPRT_STATS(X)                                                                  \
	X(calls_sent)          /* calls (client) or replies (server) sent */                  \
	X(calls_received)      /* calls (server) or replies (client) received */              \
	X(inline_msgs)         /* RDMA_MSG with no chunks */                                  \
	X(read_chunk_msgs)     /* calls with Read chunks for DDP items */                     \
	X(long_calls)          /* RDMA_NOMSG calls through a Position-Zero Read chunk */      \
	X(write_chunk_msgs)    /* calls offering, or replies using, a Write list */           \
	X(reply_chunk_msgs)    /* calls offering, or replies using, the Reply chunk */        \
	X(long_replies)        /* RDMA_NOMSG replies through the Reply chunk */               \
	X(rdma_read_bytes)                                                                     \
	X(rdma_write_bytes)                                                                    \
	X(inline_send_bytes)                                                                   \
	X(inline_recv_bytes)                                                                   \
	X(bad_msgs)            /* headers refused or replies matching no call */              \
	X(credits_granted)     /* last credit value granted by the server */                  \
	X(credits_in_use_max)  /* most calls outstanding at once */                           \
	X(reconnects)                                                                          \
	X(retransmits)                                                                         \
	X(timeouts)                                                                            \
	X(rdma_errors_sent)                                                                    \
	X(rdma_errors_received)                                                                \
	X(remote_invalidations) /* handles the peer invalidated with Send With Invalidate */ \
	X(write_zero_copy_bytes) /* server: Write chunk bytes sent from the results' memory */ \
	X(conns_handed_off)    /* server: connections given to worker loops */                 \
	X(vers_two_msgs)       /* calls (client) or replies (server) sent in Version Two */   \
	X(vers_fallbacks)      /* client: connections moved to Version One (ERR_VERS, or     */ \
			       /* the Version Two probe lost with its connection)           */ \
	X(optional_msgs)       /* server: RDMA_OPTIONAL received (Version Two features)      */ \
	X(inval_option_dropped) /* client: a server's RDMA_OPTIONALs of an unsupported type   */ \
			       /* left unanswered beyond the bounds on ERR_INVAL_OPTION     */ \
			       /* answers (docs/security.md)                              */ \
	/* Reverse direction (RFC 8167, backchannel.h); the fields above count   */            \
	/* the forward direction only.                                            */           \
	X(rev_calls)           /* reverse calls sent (server) or served (client) */            \
	X(rev_replies)         /* reverse replies (RDMA_ERROR too) received or sent */         \
	X(rev_chunk_msgs)      /* reverse calls with Read chunks or Long Calls */              \
	X(rev_long_msgs)       /* reverse Long Calls and Long Replies */                       \
	X(rev_rdma_bytes)      /* bytes moved by RDMA Read or Write for reverse calls */       \
	X(rev_errors)          /* RDMA_ERROR: sent (client, ERR_CHUNK) or received (server) */ \
	X(rev_credits_granted) /* last reverse credit grant sent (client) or received */       \
	X(rev_credits_in_use_max) /* most reverse calls outstanding at once */                 \
	X(rev_timeouts)        /* server: reverse calls that timed out */                      \
	X(rev_retransmits)     /* server: reverse calls sent again after a reconnect */        \
	X(rev_dropped)         /* reverse-direction messages with no one to take them */       \
	X(rev_bad_msgs)        /* reverse-direction headers refused or unmatched */           \
	X(rev_record_timeouts) /* client: connections closed because the server left a       */ \
			       /* reverse call's Read chunks unread for 30 s (security.md) */ \
	/* Resource bounds (server; rpcrdma_server_opts, docs/security.md).      */           \
	X(conns_refused)       /* connections refused beyond max_conns */                      \
	X(idle_closes)         /* connections closed after idle_timeout_ms */                  \
	X(record_timeouts)     /* closed: a call partly received after record_timeout_ms */    \
	X(records_too_large)   /* calls larger than max_record (closed on TCP, ERR_CHUNK on RDMA) */ \
	X(queue_pauses)        /* times a connection's queued replies stopped new calls */     \
	X(drain_timeouts)      /* closed: queued replies not drained in drain_timeout_ms */    \
	X(read_budget_waits)   /* calls that waited for max_read_bytes (RDMA: Read-chunk */     \
			       /* buffers; TCP: a connection not read while calls in  */ \
			       /* progress held it)                                   */ \
	X(abort_waits)         /* client: calls timed out or cancelled whose memory went     */ \
			       /* back only after a revocation still under way completed  */ \
	/* Work the provider did for this transport (RDMA only; bench/README.md  */            \
	/* has the minimum each message form needs).                             */            \
	X(prov_sends)          /* Sends posted */                                              \
	X(prov_recvs)          /* receives posted */                                           \
	X(recvs_posted_now)    /* receives posted and not yet completed, now: a level, */     \
			       /* each holding a buffer of the inline receive size       */ \
	X(prov_reads)          /* RDMA Reads posted */                                         \
	X(prov_writes)         /* RDMA Writes posted */                                        \
	X(prov_grants)         /* remote access granted: a window bound (verbs) or a key   */ \
			       /* registered for exactly the chunk (ofi; not counted in   */ \
			       /* prov_reg_mrs: it pins nothing)                          */ \
	X(prov_revokes)        /* grants this side withdrew (not those the peer invalidated) */ \
	X(prov_reg_mrs)        /* memory registrations (pinning, on verbs) */                  \
	X(prov_dereg_mrs)      /* deregistrations */                                          \
	X(prov_regcache_hits)  /* caller memory found registered: no registration */          \
	X(prov_regcache_misses) /* caller memory registered, then kept */                     \
	X(prov_regcache_uncached) /* registered for one call only (see rpcrdma_mem(7)) */    \
	X(prov_regcache_evictions) /* kept registrations dropped for the cache's bounds */   \
	X(prov_regcache_invalidations) /* dropped: the memory was freed or unmapped */ \
	X(devices_opened)      /* server, verbs on a wildcard address: RDMA devices opened  */ \
			       /* as their first connection came (one per device and worker */ \
			       /* loop)                                                    */ \
	X(churn_copy_bytes)    /* client: chunk data copied through a pooled buffer, not   */ \
			       /* registered, because the caller's memory churns           */ \
			       /* (rpcrdma_mem(7))                                         */ \
	X(inline_zero_copy_bytes) /* DDP items of inline calls (client) or results of     */ \
			       /* inline replies (server) sent from the application's     */ \
			       /* memory, not copied into the Send (when that needs no    */ \
			       /* registration: ofi, or memory registered before)         */ \
	X(prov_regcache_dead_now) /* kept registrations of memory freed or unmapped, no   */ \
			       /* longer used, not yet deregistered, now: a level (each */ \
			       /* pins its pages on verbs until the loop next runs)     */ \
	X(prov_regcache_dead_reaped) /* of them, deregistered by the loop between calls */ \
	X(handshake_timeouts)  /* server, RDMA (ofi): connections cut that had not sent */ \
			       /* their connection request in record_timeout_ms, or   */ \
			       /* beyond max_conns of them (docs/security.md)          */ \
	X(drc_evictions)       /* server: answered replies the duplicate request cache */ \
			       /* dropped for its bounds (drc_entries, 32 MiB)         */ \
	X(drc_uncached)        /* server: calls run uncached, the cache full of calls  */ \
			       /* in progress                                          */ \
	X(drc_bytes_now)       /* server: bytes of replies the cache holds, now        */ \
	X(conns_evicted)       /* server: connections closed to admit a new one at     */ \
			       /* max_conns: idle ones, the least recently active first */ \
			       /* (conns_evicted_stalled: when none is idle)           */ \
	X(reply_record_timeouts) /* client, TCP: closed: a reply record begun and not */ \
			       /* whole within the call time-out (docs/security.md)    */ \
	X(send_stall_timeouts) /* client, TCP: closed: queued calls not one byte      */ \
			       /* written for the call time-out                        */ \
	X(send_queue_full)     /* client, TCP: calls that waited for the 8 MiB send    */ \
			       /* queue to drain (the transport's -EAGAIN)             */ \
	X(replies_lost)        /* server: calls left unanswered, no memory to take in, */ \
			       /* read or answer them; each closes its connection (if */ \
			       /* still up) so the client sends again (RFC 8166 5.5.4) */ \
	X(queued_bytes_now)    /* server: bytes of replies queued over all its         */ \
			       /* connections and workers, now (max_queued_total)      */ \
	X(queued_total_pauses) /* server: times a connection stopped taking calls      */ \
			       /* because the replies queued over all connections     */ \
			       /* reached max_queued_total                             */ \
	X(recv_bytes_now)      /* server, RDMA: receive-buffer bytes reserved over all */ \
			       /* its connections and workers, now (max_recv_total)   */ \
	X(recv_credits_cut)    /* server, RDMA: connections granted fewer credits than */ \
			       /* configured, to stay within max_recv_total            */ \
	X(recv_budget_refused) /* server, RDMA: connections refused: max_recv_total    */ \
			       /* could not hold even their fewest credits (also in    */ \
			       /* conns_refused)                                       */ \
	X(read_bytes_max)      /* server: most bytes of Read-chunk landing buffers     */ \
			       /* (RDMA) or records of calls in progress (TCP) one    */ \
			       /* transport (the server's loop or a worker) held at   */ \
			       /* once (max_read_bytes)                               */ \
	X(reply_bytes_kept)    /* server, RDMA: bytes of grown reply buffers and      */ \
			       /* result copies answered requests keep for the next   */ \
			       /* calls, now (16 MiB over the server, its loop and    */ \
			       /* workers sharing it)                                 */ \
	X(pool_bytes_now)      /* RDMA: bytes of registered buffers idle in the        */ \
			       /* library's pools, now (64 MiB and 1024 a size class */ \
			       /* per provider instance: a client transport, a       */ \
			       /* server's loop, each worker; half of what stayed    */ \
			       /* idle goes every 30 s)                               */ \
	X(recv_pool_bytes_now) /* server, RDMA: bytes of receive buffers registered   */ \
			       /* over its loop and workers, now; beyond each one's  */ \
			       /* connections' reservations and one newcomer's, they */ \
			       /* count in recv_bytes_now (max_recv_total)            */ \
	X(send_room_trimmed)   /* TCP: records whose room, sized before they were     */ \
			       /* encoded, was cut to fit as they stayed queued: one  */ \
			       /* holds at most twice its length plus 4 KiB.  RDMA    */ \
			       /* server: replies moved out of the room reserved for  */ \
			       /* a Reply chunk far larger than they needed           */ \
	X(conns_evicted_stalled) /* server: of conns_evicted, connections with only  */ \
			       /* replies queued that had not moved for a second,    */ \
			       /* closed with them, none being idle                  */

struct rpcrdma_xprt_stats {
#define RPCRDMA_XPRT_STATS_FIELD(name) uint64_t name;
	RPCRDMA_XPRT_STATS(RPCRDMA_XPRT_STATS_FIELD)
#undef RPCRDMA_XPRT_STATS_FIELD
};

/** Counters of the client's transport, summed over its connections
 * (credits_granted and the *_max fields: the largest).  Returns 0 or
 * -EINVAL. */
RPCRDMA_EXTERN int rpcrdma_client_stats(struct rpcrdma_client *clnt,
					struct rpcrdma_xprt_stats *out);

/**
 * rpcrdma_client_conn_stats - the counters of one of @clnt's connections
 * @conn: 0 .. opts.nconnect - 1
 *
 * As rpcrdma_client_stats() for that connection alone (reconnects are
 * its own; retransmits and timeouts, which belong to calls, are 0).
 * Returns 0, -EINVAL, or -ENOENT for a @conn the client does not have.
 */
RPCRDMA_EXTERN int rpcrdma_client_conn_stats(struct rpcrdma_client *clnt, unsigned int conn,
					     struct rpcrdma_xprt_stats *out);

/* Servers. */

struct rpcrdma_server;
struct rpcrdma_svc_req;

/**
 * rpcrdma_svc_fn - a procedure's implementation
 *
 * Called on the loop with decoded arguments.  Return 0 to send @res encoded
 * by the procedure's encode_res, or a negative accept_stat
 * (-RPCRDMA_RPC_SYSTEM_ERR, -RPCRDMA_RPC_GARBAGE_ARGS) to send that instead.
 * Return RPCRDMA_SVC_DEFERRED to answer later with rpcrdma_svc_reply().
 */
typedef int (*rpcrdma_svc_fn)(struct rpcrdma_svc_req *req, void *args, void *res);
#define RPCRDMA_SVC_DEFERRED 1

struct rpcrdma_svc_proc {
	rpcrdma_svc_fn fn;
	/* The stream it decodes from holds the call until the reply is sent
	 * (or the call dropped): what it decodes by reference
	 * (rpcrdma_xdr_decode_ddp_ref, rpcrdma_xdr_decode_opaque_ref), a
	 * WRITE's data say, stays valid for the procedure that long, deferred
	 * or not. */
	rpcrdma_xdr_fn decode_args;
	size_t args_size; /* bytes the library allocates for args */
	rpcrdma_xdr_fn encode_res;
	size_t res_size;
	/* Runs once the library no longer reads @res or what it points to
	 * (may be NULL).  Over RDMA a large DDP-eligible result (32 KiB or
	 * more, rpcrdma_xdr_encode_ddp) is not copied: it is RDMA Written into
	 * the client's Write chunk from the memory encode_res gave, and
	 * free_res runs after that Write completed.  Keep that memory
	 * unchanged until then.  (Exception, on a provider whose
	 * registrations pin memory, verbs: a result of at most 256 KiB in
	 * memory that earlier results occupied and free_res freed is copied,
	 * which costs less than registering it at each call.) */
	void (*free_res)(void *res);
};

struct rpcrdma_server_opts {
	enum rpcrdma_transport transport;
	const char *provider;      /* "ofi" (default) or "verbs" */
	/* 0: 8192 on verbs, 69632 on ofi, as for the client.  Receive
	 * buffers are posted per connection: at most 2 x credits + 4 of
	 * inline_recv bytes each (docs/security.md). */
	uint32_t inline_send;
	uint32_t inline_recv;
	uint32_t credits;          /* credits granted; 0: 32 (fewer: max_recv_total) */
	/* RPC-over-RDMA versions served: default 1..2 (0: 1 and 2); others
	 * get ERR_VERS with this range.  A connection's first call fixes its
	 * version: a later call in the other one gets ERR_VERS naming it.  Version Two connections take RDMA_OPTIONAL (the transport
	 * properties feature; others get ERR_INVAL_OPTION).  A range this
	 * library cannot serve (max_vers above 2, min_vers above max_vers)
	 * fails rpcrdma_server_create() with -EPROTONOSUPPORT over RDMA; TCP
	 * ignores both. */
	uint32_t min_vers, max_vers;
	bool accept_msgp;          /* honour RFC 5666 RDMA_MSGP padding */
	unsigned int drc_entries;  /* duplicate request cache size; 0: 512 (and 32 MiB
				    * of replies: drc_evictions, drc_bytes_now); at
				    * most 1 << 24 (-EINVAL above); allocated as
				    * calls arrive, 256 entries at a time, some 152
				    * bytes each plus at most 16 of hash table (some
				    * 2.5 GiB at 1 << 24, reached only after that
				    * many distinct calls), beside the replies */
	uint32_t max_record;       /* largest call (TCP record, RDMA call rebuilt
				    * from its chunks); 0: 1 MiB + 64 KiB; below
				    * RPCRDMA_SERVER_MAX_RECORD_MIN no call fits:
				    * -EINVAL */
	/*
	 * Worker loops; 0: none, every call runs on the server's loop.  N (at
	 * most 256): N threads, each running a loop of its own.  The server's
	 * loop only accepts connections and hands each, round robin, to one
	 * worker, which serves it for its whole life: procedures run on that
	 * worker's thread (rpcrdma_svc_loop() names its loop), so they must
	 * be safe to run on several threads at once.  The duplicate request
	 * cache is shared, so a client that reconnects to another worker
	 * still gets its cached replies.
	 */
	unsigned int workers;
	/*
	 * Bounds on what one client can make the server hold (a zero means
	 * the default; docs/security.md has the whole table).  Each has a
	 * counter in struct rpcrdma_xprt_stats.
	 *
	 * max_conns: connections at once, over all workers; 0: 1024.  A new
	 * connection beyond it makes room: the least recently active
	 * connection with nothing in progress (no call taken in, served or
	 * deferred, no reply queued, no backchannel bound to it: backchannel.h)
	 * is closed for it, as the Linux NFS server closes its oldest;
	 * conns_evicted.  A TCP call whose record has not all arrived, or an
	 * RDMA call whose Read chunks are still being read, is not taken in:
	 * its connection may be closed, and its client sends the call again.
	 * When none is idle, a connection whose only business is replies
	 * queued (no call in progress or deferred) that have not moved for a
	 * second (no TCP reply record left the queue, no RDMA Send or Write
	 * completed) is closed with them, the longest stalled first, so that
	 * clients that take their replies a byte now and then cannot lock
	 * later ones out; its client sends its calls again (a non-idempotent
	 * one finds its reply in the duplicate request cache);
	 * conns_evicted_stalled.  A connection with a call in progress is
	 * never closed for this.  When every connection has one (or replies
	 * that move), or with refuse_at_max_conns, the new connection is closed at
	 * accept (TCP) or rejected by the connection manager (RDMA);
	 * conns_refused.  A closed connection still counts until every call
	 * read from it is answered or dropped (so does one being closed for a
	 * newcomer, until it is gone: the count may pass max_conns by those
	 * meanwhile).
	 *
	 * idle_timeout_ms: a connection with no call in progress, no reply
	 * queued and nothing received for this long is closed; 0: 360000
	 * (six minutes, as the Linux NFS server); idle_closes.
	 *
	 * record_timeout_ms: a call begun and not complete after this long
	 * closes its connection: a TCP record whose fragments stop or trickle
	 * (timed from its own first byte, not while the server is not
	 * reading), RDMA Read chunks the client never lets us finish reading;
	 * 0: 30000; record_timeouts.  Over RDMA (ofi) it also bounds a TCP
	 * connection to the port that never sends its connection request, as
	 * max_conns bounds how many at once; handshake_timeouts.
	 *
	 * max_conn_queued: bytes of replies queued on one connection (TCP:
	 * not yet written to the socket; RDMA: Sends and Writes posted and
	 * not complete) at which the server stops taking new calls from it
	 * (TCP stops reading; RDMA posts no new receives); 0: 8 MiB.  Calls
	 * already in progress still answer, so the queue may exceed it by
	 * their replies (at most 64 calls per TCP connection, the credits
	 * on RDMA); queue_pauses.
	 *
	 * drain_timeout_ms: a connection whose queued replies make no
	 * progress for this long is closed; 0: 30000; drain_timeouts.
	 *
	 * max_read_bytes: RDMA: bytes of Read-chunk landing buffers all the
	 * server's connections may hold at once, shared equally by the
	 * server's loop and its workers (each of N workers, and the server,
	 * gets 1/(N+1) of it); one connection may hold four of its largest
	 * calls (max_record) within that share.  Calls beyond wait their
	 * turn (a call alone larger than a share still goes alone).  TCP:
	 * the same share bounds the records that calls in progress (a
	 * deferred procedure not yet answered) hold: while they fill it, a
	 * connection with a call of its own in progress is not read, and one
	 * with none still takes a call, so what they hold stays within the
	 * share plus one call per connection.  0: 256 MiB;
	 * read_budget_waits, read_bytes_max.  max_record (above) also bounds
	 * the call an RDMA server rebuilds from its Read chunks.
	 */
	unsigned int max_conns;
	uint32_t idle_timeout_ms;
	uint32_t record_timeout_ms;
	size_t max_conn_queued;
	uint32_t drain_timeout_ms;
	size_t max_read_bytes;
	/*
	 * At max_conns, refuse new connections (conns_refused) rather than
	 * close the least recently active idle one for them: a server whose
	 * clients must never lose an idle connection to newcomers.  Off by
	 * default: connections opened and left silent would otherwise lock
	 * every later client out until idle_timeout_ms.
	 */
	bool refuse_at_max_conns;
	/*
	 * max_queued_total: bytes of replies queued over all the server's
	 * connections (and workers), as max_conn_queued counts them, at which
	 * a connection that has a reply queued or a call in progress takes
	 * no new call until its own are done (TCP stops reading it; RDMA
	 * holds its calls in their receive buffers), so that many clients
	 * that stop reading cannot make the server hold max_conns times
	 * max_conn_queued.  A connection with nothing queued and nothing in
	 * progress still takes a call: clients that read their replies keep
	 * being served, one call at a time per connection while the total
	 * stays over it.  0: 256 MiB; queued_total_pauses, queued_bytes_now.
	 */
	size_t max_queued_total;
	/*
	 * max_recv_total: RDMA: bytes of receive buffers over all the
	 * server's connections (and workers).  Each connection reserves what
	 * its credits let it hold (2 x credits + 4 buffers of inline_recv
	 * bytes) when it is accepted, and gives it back when it is gone.
	 * Once the rest could not also give every further connection up to
	 * max_conns its fewest credits (4), a connection is granted fewer
	 * credits than configured (recv_credits_cut), as RFC 8166 lets a
	 * responder grant what its resources allow; one the rest cannot
	 * give even 4 is refused at the connection manager
	 * (recv_budget_refused, conns_refused).  What the receive pool of
	 * the server's loop or a worker keeps registered beyond its
	 * connections' reservations and one connection's worth (buffers
	 * that connections gone left behind, until they drain) counts in
	 * the budget too.  0: 1 GiB; recv_bytes_now, recv_pool_bytes_now.
	 * A budget below what one connection's fewest credits hold,
	 * (2 x min(credits, 4) + 4) x inline_recv (835584 bytes with ofi's
	 * defaults), would refuse every connection: rpcrdma_server_create()
	 * refuses it (-EINVAL) over RDMA; TCP ignores max_recv_total.
	 * On ofi, where a buffer is 68 KiB, the default keeps full credits
	 * for the first 55 or so connections and 4 for the rest up to 1024.
	 */
	size_t max_recv_total;
};

RPCRDMA_EXTERN void rpcrdma_server_opts_default(struct rpcrdma_server_opts *opts);

/**
 * Create a server listening on @host:@service ("0" for any free port; @host
 * NULL for every local address).  Returns 0, -EINVAL, -ENOMEM,
 * -EHOSTUNREACH when @host does not resolve, RPCRDMA_ERR_NO_SERVICE when
 * @service is neither a number up to 65535 nor a known service name, -EAGAIN when the
 * name server failed for now, -EPROTONOSUPPORT for a
 * transport this build lacks (or a version range it cannot serve, see
 * min_vers), RPCRDMA_ERR_NO_PROVIDER for a provider it
 * lacks, RPCRDMA_ERR_NO_RDMA_DEVICE when the verbs provider finds no RDMA
 * device at all, or none with @host's address (a loopback @host has none),
 * or -errno from the socket (-EADDRINUSE, ...).  Over verbs a wildcard
 * @host (NULL, 0.0.0.0, ::) serves every RDMA device: one listener, and
 * each device's resources (per worker loop) made when its first connection
 * arrives (devices_opened counts them); an address narrows it to its
 * device.
 */
RPCRDMA_EXTERN int rpcrdma_server_create(struct rpcrdma_loop *loop, const char *host,
					 const char *service,
					 const struct rpcrdma_server_opts *opts,
					 struct rpcrdma_server **out);

/**
 * rpcrdma_server_register - serve @prog/@vers with @nprocs procedures
 * (@procs[i] serves procedure i; a NULL fn answers PROC_UNAVAIL)
 */
RPCRDMA_EXTERN int rpcrdma_server_register(struct rpcrdma_server *srv, uint32_t prog,
					   uint32_t vers, const struct rpcrdma_svc_proc *procs,
					   uint32_t nprocs);

/**
 * rpcrdma_server_register2 - rpcrdma_server_register() with a context of
 * the registration
 * @ctx: what rpcrdma_svc_prog_ctx() returns for each request of
 *	@prog/@vers on this server (procedures shared by several programs
 *	or servers tell them apart by it)
 * @release: NULL, or called once with @ctx when the registration ends:
 *	as rpcrdma_server_destroy() frees the server, after its last
 *	request was answered and, with worker loops, every worker ended
 *
 * Returns 0, -EINVAL, -ENOMEM, or -EEXIST when @prog/@vers is registered
 * on this server already; on any error @release is not called (@ctx stays
 * the caller's).
 */
RPCRDMA_EXTERN int rpcrdma_server_register2(struct rpcrdma_server *srv, uint32_t prog,
					    uint32_t vers, const struct rpcrdma_svc_proc *procs,
					    uint32_t nprocs, void *ctx, void (*release)(void *ctx));

/**
 * rpcrdma_server_set_idempotent - say whether procedure @proc of
 * @prog/@vers may run twice for one call without harm (a read, a lookup)
 *
 * Replies of idempotent procedures bypass the duplicate request cache,
 * which otherwise keeps a copy of every reply, bulk results included: a
 * retransmitted call simply runs again.  Leave procedures that change
 * state as they are (not idempotent, the default).  May be called while
 * the server runs.  Returns 0, -EINVAL, or -ENOENT when @prog/@vers is
 * not registered or has no procedure @proc.
 */
RPCRDMA_EXTERN int rpcrdma_server_set_idempotent(struct rpcrdma_server *srv, uint32_t prog,
						 uint32_t vers, uint32_t proc, bool idempotent);

/** The port the server listens on (for service "0"). */
RPCRDMA_EXTERN int rpcrdma_server_port(struct rpcrdma_server *srv);

/**
 * Counters summed over the server's connections, closed ones included;
 * retransmits counts duplicate calls the duplicate request cache caught.
 * With worker loops it asks each worker and waits for the answers: call it
 * on the server's loop's thread (from a worker's thread it returns
 * -EDEADLK).  Returns 0, -EINVAL or -ENOMEM.
 */
RPCRDMA_EXTERN int rpcrdma_server_stats(struct rpcrdma_server *srv, struct rpcrdma_xprt_stats *out);

/**
 * rpcrdma_server_destroy - stop accepting, finish calls in progress, close
 * connections, free
 *
 * Calls still outstanding on its backchannels complete first, with
 * RPCRDMA_ERR_CANCELLED, while the requests deferred until they come back
 * still wait: such a completion may answer its request.  Then deferred
 * requests not yet answered are answered with SYSTEM_ERR (their free_res
 * runs); their struct rpcrdma_svc_req must not be used afterwards.
 * Called from inside one of the server's procedures or free_res, or from
 * the completion of a call on one of its backchannels (backchannel.h), all
 * this happens at the loop's next iteration: the backchannels' calls
 * complete, the deferred requests are answered and the memory is released
 * then.  With worker
 * loops, the listener closes first, then each worker finishes and closes
 * its connections, and the call returns once every worker thread has
 * ended; called on a worker's thread, the destruction is queued to the
 * server's loop instead, once: further calls from procedures on any
 * worker, until it has run or while it runs, do nothing.
 *
 * What the application put on a worker's loop (a client or a server
 * created on rpcrdma_svc_loop() from a procedure) is its own to destroy,
 * before this.  A worker's loop that still has one when its worker ends
 * is not freed: it is the application's from then on, which destroys
 * what is on it (running the loop itself, on one thread, if calls are
 * out) and then the loop, with rpcrdma_loop_destroy().
 *
 * Returns 0; -EINVAL for a NULL @srv; -EBUSY when the server is gone but
 * a worker's loop was left to the application so; -EPERM, doing nothing,
 * in a process forked after its loop was made (rpcrdma_loop_destroy()).  A destruction queued
 * or finished later (from inside a callback, on a worker's thread)
 * returns 0 and tells nothing: loops are left all the same.
 */
RPCRDMA_EXTERN int rpcrdma_server_destroy(struct rpcrdma_server *srv);

/** The credential of a request, as the client sent it. */
RPCRDMA_EXTERN const struct rpcrdma_opaque_auth *
rpcrdma_svc_cred(const struct rpcrdma_svc_req *req);

/**
 * The address of the client that sent @req (a struct sockaddr_in or
 * sockaddr_in6; sa_family tells which), valid until @req is answered; NULL
 * when the transport does not know it.
 */
RPCRDMA_EXTERN const struct sockaddr *rpcrdma_svc_peer(const struct rpcrdma_svc_req *req);

/** The @ctx given to rpcrdma_server_register2() for @req's program and
 * version (NULL for one registered by rpcrdma_server_register()). */
RPCRDMA_EXTERN void *rpcrdma_svc_prog_ctx(const struct rpcrdma_svc_req *req);

/** XID, program, version and procedure of a request. */
RPCRDMA_EXTERN const struct rpcrdma_rpc_msg *rpcrdma_svc_msg(const struct rpcrdma_svc_req *req);

/**
 * The loop @req runs on: the server's, or its worker's.  Deferred answers
 * (rpcrdma_svc_reply) must be given on that loop's thread; from elsewhere,
 * queue them there with rpcrdma_loop_wake().
 */
RPCRDMA_EXTERN struct rpcrdma_loop *rpcrdma_svc_loop(const struct rpcrdma_svc_req *req);

/**
 * Answer a deferred request: @status as the fn's return value.  Returns 0,
 * or -EINVAL when @req is not waiting for a deferred answer (answer only
 * after the procedure returned RPCRDMA_SVC_DEFERRED; @req is gone once
 * answered).
 */
RPCRDMA_EXTERN int rpcrdma_svc_reply(struct rpcrdma_svc_req *req, int status);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_RPC_H */
