/*
 * RPC-over-RDMA protocol version negotiation, without I/O
 * (draft-cel-nfsv4-rpcrdma-version-two-00 section 5; RFC 8166 section 4.2.4
 * for the responder's ERR_VERS).
 *
 * A requester that offers Version Two sends its first message on a
 * connection with vers 2, no larger than the Version One default inline
 * threshold (1024), and only that one message until an answer comes:
 *   - a non-error reply in Version Two settles the connection on Version
 *     Two, with Version Two's 4096-byte default thresholds;
 *   - RDMA_ERROR/ERR_VERS settles it on the highest version in both
 *     ranges; the peer is remembered as Version One only, per address, so
 *     that a reconnect does not probe again (section 5.2);
 *   - a connection lost with the probe unanswered counts the same (5.2:
 *     "if the initial negotiation message is lost or dropped").
 * A responder always answers in the version of the call it answers
 * (section 5.3); versions outside its range get ERR_VERS from the header
 * decoder (struct rpcrdma_hdr_limits).
 */
#ifndef RPCRDMA_PROTO_VERSION_H
#define RPCRDMA_PROTO_VERSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* Default inline thresholds when the peer advertised none (RFC 8166 4.3.2;
 * version-two-00 2.3). */
#define RPCRDMA__V1_INLINE_DEFAULT 1024u
#define RPCRDMA__V2_INLINE_DEFAULT 4096u

/* The requester's negotiation state on one connection. */
struct rpcrdma__vneg {
	uint32_t max_vers; /* highest version we offer (1 or 2) */
	uint32_t vers;     /* version our messages carry now */
	bool probing;      /* vers 2 offered, no answer yet */
	bool probe_sent;   /* the first message has left */
};

/**
 * rpcrdma__vneg_start - a new connection
 * @max_vers: highest version to offer; 0 or 1 means Version One only, more
 *	than 2 counts as 2
 * @peer_is_v1: the peer was found to be Version One only before
 */
void rpcrdma__vneg_start(struct rpcrdma__vneg *v, uint32_t max_vers, bool peer_is_v1);

/**
 * rpcrdma__vneg_send_max - the largest message the requester may Send now
 * @negotiated: the inline send threshold of the connection for the version
 *	in use (rpcrdma__vneg_default_inline() or RFC 8797 private data)
 *
 * While probing, at most RPCRDMA__V1_INLINE_DEFAULT: the peer may be a
 * Version One receiver.
 */
uint32_t rpcrdma__vneg_send_max(const struct rpcrdma__vneg *v, uint32_t negotiated);

/**
 * rpcrdma__vneg_may_send - whether another message may go now
 * @in_flight: messages sent and not yet answered
 *
 * While probing only the first message may be outstanding.
 */
bool rpcrdma__vneg_may_send(const struct rpcrdma__vneg *v, uint32_t in_flight);

/* Record that a message left (the first one is the probe). */
void rpcrdma__vneg_sent(struct rpcrdma__vneg *v);

/* What a received answer means for the requester. */
enum rpcrdma__vneg_verdict {
	RPCRDMA__VNEG_OK,          /* process the answer */
	RPCRDMA__VNEG_SETTLED,     /* process it: the version is now fixed */
	RPCRDMA__VNEG_RETRY,       /* ERR_VERS: resend the call in v->vers */
	RPCRDMA__VNEG_MISMATCH,    /* an answer in a version we did not send:
				      a bad reply (drop it, count it) */
	RPCRDMA__VNEG_UNSUPPORTED, /* ERR_VERS with no common version: fail
				      the call, close the connection */
};

/**
 * rpcrdma__vneg_on_reply - a non-error answer in version @reply_vers
 */
enum rpcrdma__vneg_verdict rpcrdma__vneg_on_reply(struct rpcrdma__vneg *v, uint32_t reply_vers);

/**
 * rpcrdma__vneg_on_err_vers - RDMA_ERROR/ERR_VERS with the peer's range
 * @peer_is_v1: set when the peer turned out to support no Version Two
 *	(remember it for the peer's address)
 *
 * A range that is empty or excludes every version we speak gives
 * RPCRDMA__VNEG_UNSUPPORTED.  ERR_VERS for a version we had already
 * settled on (not probing) is a peer bug; it is treated the same way.
 */
enum rpcrdma__vneg_verdict rpcrdma__vneg_on_err_vers(struct rpcrdma__vneg *v, uint32_t low,
						     uint32_t high, bool *peer_is_v1);

/**
 * rpcrdma__vneg_on_lost - the connection went down
 *
 * Returns true when the probe had left and no answer came: the peer is then
 * to be remembered as Version One.
 */
bool rpcrdma__vneg_on_lost(const struct rpcrdma__vneg *v);

/* The default inline threshold of @vers when no private data says more. */
uint32_t rpcrdma__vneg_default_inline(uint32_t vers);

/*
 * The process-wide memory of peers found to be Version One only, keyed by
 * address family, address and port.  Bounded: the least recently marked
 * entry goes when it is full.  Thread-safe.
 */
#define RPCRDMA__VMEMO_ENTRIES 64u

void rpcrdma__vmemo_mark_v1(const struct sockaddr *addr, socklen_t len);
bool rpcrdma__vmemo_is_v1(const struct sockaddr *addr, socklen_t len);
/* Forget @addr (NULL: everything), e.g. after an administrator upgraded it. */
void rpcrdma__vmemo_forget(const struct sockaddr *addr, socklen_t len);

#endif /* RPCRDMA_PROTO_VERSION_H */
