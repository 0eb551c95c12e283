/*
 * librpcrdma: trace events a user can read when a connection misbehaves.
 *
 * The library reports what happens on its connections as events: connect,
 * accept and disconnect (with the reason), calls sent, retransmitted and
 * timed out, chunks, credit stalls and grants, each RDMA_ERROR sent or
 * received with its cause, version negotiation and fallback, memory grants
 * and their revocation (with how long the fence took), the decode failure
 * that made a message invalid, and the option or argument an API call
 * refused (which field, which bound: a bare -EINVAL cannot say).  Each event carries the id of its
 * connection (small, process-wide unique, a new one per connection) and
 * the XID of the call it concerns (0 when none).
 *
 * Two sinks, process-wide:
 *   - the environment: RPCRDMA_TRACE=conn,call,... (or "all") writes one
 *     line per event on stderr.  It is read once, at the first event; an
 *     unknown word is reported once on stderr and ignored;
 *   - an application callback: rpcrdma_trace_set().
 *
 * Tracing off costs one test of a global mask at each trace point.
 */
#ifndef RPCRDMA_TRACE_H
#define RPCRDMA_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Event categories, a bit mask.  The words RPCRDMA_TRACE accepts are the
 * lower-case names after RPCRDMA_TRACE_. */
#define RPCRDMA_TRACE_CONN   0x01u /* connect, accept, disconnect */
#define RPCRDMA_TRACE_CALL   0x02u /* retransmissions, time-outs */
#define RPCRDMA_TRACE_CHUNK  0x04u /* chunks, memory grants and fences */
#define RPCRDMA_TRACE_CREDIT 0x08u /* credit stalls and grants */
#define RPCRDMA_TRACE_ERROR  0x10u /* RDMA_ERROR sent and received, decode failures */
#define RPCRDMA_TRACE_VERS   0x20u /* version negotiation and fallback */
#define RPCRDMA_TRACE_ALL    0x3fu

enum rpcrdma_trace_kind {
	RPCRDMA_TEV_CONNECT = 1,   /* CONN: requester connected; a = RPC-over-RDMA version (0: TCP) */
	RPCRDMA_TEV_ACCEPT,        /* CONN: responder accepted a connection */
	RPCRDMA_TEV_DISCONNECT,    /* CONN: connection gone; a = reason, b = the provider's */
	RPCRDMA_TEV_CONNECT_FAIL,  /* CONN: connecting failed; a = reason, b = the provider's */
	RPCRDMA_TEV_RETRANSMIT,    /* CALL: a call sent again; a = connections it lost */
	RPCRDMA_TEV_TIMEOUT,       /* CALL: a call timed out; a = its time-out in ms */
	RPCRDMA_TEV_LONG_CALL,     /* CHUNK: a Long Call sent or received; a = bytes */
	RPCRDMA_TEV_READ_CHUNK,    /* CHUNK: a call carries Read chunks; a = bytes */
	/* CHUNK: requester offers / responder fills a Write list; a = chunks, b = bytes */
	RPCRDMA_TEV_WRITE_CHUNK,
	RPCRDMA_TEV_REPLY_CHUNK,   /* CHUNK: requester offers a Reply chunk; a = bytes */
	RPCRDMA_TEV_GRANT,         /* CHUNK: remote access granted for a call; a = grants */
	RPCRDMA_TEV_REVOKE,        /* CHUNK: a call's grants fenced; a = grants, b = fence time in us */
	RPCRDMA_TEV_CREDIT_STALL,  /* CREDIT: a call waits for a credit; a = credits in use, b = granted */
	RPCRDMA_TEV_CREDIT_GRANT,  /* CREDIT: the grant changed; a = new grant, b = old grant */
	RPCRDMA_TEV_ERR_SENT,      /* ERROR: RDMA_ERROR sent; a = ERR_VERS (1) or ERR_CHUNK (2)... */
	RPCRDMA_TEV_ERR_RECEIVED,  /* ERROR: RDMA_ERROR received; a = its code */
	RPCRDMA_TEV_BAD_MSG,       /* ERROR: a message refused; a = library error, b = byte offset */
	RPCRDMA_TEV_VERS_PROBE,    /* VERS: a Version Two probe sent */
	RPCRDMA_TEV_VERS_SETTLED,  /* VERS: the connection's version settled; a = version */
	RPCRDMA_TEV_VERS_FALLBACK, /* VERS: moved to Version One; a = 1 for ERR_VERS, 0 probe lost */
	/* ERROR: a call of the API refused an argument or option (conn and
	 * xid 0); a = the error it returned; msg names the field, its value
	 * and the bound it broke */
	RPCRDMA_TEV_BAD_ARG,
};

/** One event.  Valid for the duration of the callback only. */
struct rpcrdma_trace_event {
	uint32_t category;  /* one RPCRDMA_TRACE_* bit */
	enum rpcrdma_trace_kind kind;
	uint32_t conn_id;   /* 0: no connection */
	uint32_t xid;       /* 0: no call */
	int64_t a, b;       /* per kind, above */
	uint64_t time_ns;   /* CLOCK_MONOTONIC */
	const char *msg;    /* the event in words, without the fields above */
};

/**
 * rpcrdma_trace_fn - receives the events of the categories asked for
 *
 * Runs on the thread (the loop) that produced the event, possibly several
 * threads at once with worker loops; it must not call back into the
 * library object that produced it.
 */
typedef void (*rpcrdma_trace_fn)(const struct rpcrdma_trace_event *ev, void *arg);

/**
 * rpcrdma_trace_set - install the process-wide trace callback
 * @mask: RPCRDMA_TRACE_* bits to deliver; 0 turns the callback off
 * @fn: NULL turns it off
 *
 * Thread-safe.  A call racing with an event on another thread may see the
 * previous callback run once more after it returns.  The RPCRDMA_TRACE
 * sink on stderr is independent.  Returns 0, or -EINVAL for unknown bits.
 */
RPCRDMA_EXTERN int rpcrdma_trace_set(uint32_t mask, rpcrdma_trace_fn fn, void *arg);

/**
 * rpcrdma_trace_parse - categories from words as RPCRDMA_TRACE takes them
 * @words: comma- or space-separated category names, or "all"
 * @mask: set to the bits of the known words
 *
 * Returns 0, or -EINVAL when a word is unknown (@mask still holds the
 * known ones).
 */
RPCRDMA_EXTERN int rpcrdma_trace_parse(const char *words, uint32_t *mask);

/** The event kind's name ("connect", "err_received"...); never NULL. */
RPCRDMA_EXTERN const char *rpcrdma_trace_kind_name(enum rpcrdma_trace_kind kind);

/**
 * rpcrdma_trace_format - the line RPCRDMA_TRACE would print for @ev
 *
 * Writes at most @len bytes with a terminating NUL, no newline.  Returns
 * what snprintf returns.
 */
RPCRDMA_EXTERN int rpcrdma_trace_format(const struct rpcrdma_trace_event *ev, char *buf,
					size_t len);

/**
 * rpcrdma_trace_suppressed - lines the RPCRDMA_TRACE sink on stderr left
 * out since the process started
 *
 * A peer can cause events at will (each bad message it sends is an
 * "error" event), so the stderr sink prints at most RPCRDMA_TRACE_RATE
 * lines a second (default 200; 0: no limit), and just before the next
 * line it prints, in a later second, one line saying how many it left out
 * (none is printed while no further event comes: read this count for
 * them).  The callback of
 * rpcrdma_trace_set() is not limited: it gets every event.  Thread-safe.
 */
RPCRDMA_EXTERN uint64_t rpcrdma_trace_suppressed(void);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_TRACE_H */
