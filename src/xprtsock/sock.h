/*
 * sock.h - what the TCP transport's client (clnt.c) and server (svc.c) share:
 * a connected stream socket with its send queue and record reassembly
 * (record.c).  The transport's contract with the core is src/rpc/transport.h.
 */
#ifndef RPCRDMA_XPRTSOCK_SOCK_H
#define RPCRDMA_XPRTSOCK_SOCK_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rpc/core.h"
#include "rpc/loop_internal.h"

/* One outgoing record: the mark, then the message. */
struct rpcrdma__sock_buf {
	struct rpcrdma__sock_buf *next;
	struct rpcrdma__creq *creq; /* client: the call it carries; NULL once detached */
	bool queued;
	size_t cap; /* room for the message, after the mark */
	size_t len; /* bytes to write, mark included */
	size_t off; /* bytes written */
	uint8_t data[];
};

struct rpcrdma__sock_sendq {
	struct rpcrdma__sock_buf *head, *tail;
	size_t bytes; /* not yet written */
};

/* Record reassembly. */
struct rpcrdma__sock_rx {
	uint8_t mark[4];
	unsigned int mark_have;
	bool in_frag;
	bool last;
	uint32_t frag_left;
	unsigned int frags;
	uint8_t *rec;
	size_t rec_len, rec_cap;
	uint8_t *stage;
	size_t st_off, st_len;
	/* When the record being reassembled had its first mark byte parsed
	 * (rpcrdma_loop_now()); meaningful while rpcrdma__sock_rx_in_record().
	 * Bytes are parsed as soon as they are read, except while the server
	 * has stopped reading, so this is when the peer began the record or,
	 * if later, when the server got to it. */
	uint64_t rec_began;
};

/* What the client and server connections share. */
struct rpcrdma__sock_conn {
	int fd;
	struct rpcrdma__watch watch;
	struct rpcrdma_loop *loop;
	struct rpcrdma__sock_rx rx;
	struct rpcrdma__sock_sendq q;
	size_t max_record;
	struct rpcrdma_xprt_stats *st;
	bool paused;      /* server: not reading */
	uint64_t last_tx; /* when the queue last moved, or last became non-empty */
	/* When the record now first in the queue got there: a byte now and
	 * then moves last_tx, only a record sent whole moves this. */
	uint64_t head_since;
};

/* Delivers a complete record (ownership passes); non-zero stops reading. */
typedef int (*rpcrdma__sock_deliver_fn)(void *arg, uint8_t *rec, size_t len);

/* The host-order value of the big-endian 32-bit word at @p. */
static inline uint32_t rpcrdma__sock_get_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

/**
 * rpcrdma__sock_max_record - the largest record a connection accepts
 * @opt: the max_record option (0: RPCRDMA__TCP_MAX_RECORD_DEFAULT)
 *
 * Return: @opt or the default, at most what a record mark can say.
 */
size_t rpcrdma__sock_max_record(uint32_t opt);

/**
 * rpcrdma__sock_buf_new - an empty outgoing record
 * @hint: the expected message size (0: a default); capped at what one
 *        fragment carries
 *
 * The message is encoded at data + 4, into at most cap bytes.
 *
 * Return: the record, or NULL when out of memory.
 */
struct rpcrdma__sock_buf *rpcrdma__sock_buf_new(size_t hint);

/**
 * rpcrdma__sock_buf_seal - write the record mark in front of the message
 * @b: the record
 * @msglen: bytes encoded after the mark (at most @b->cap)
 */
void rpcrdma__sock_buf_seal(struct rpcrdma__sock_buf *b, size_t msglen);

/**
 * rpcrdma__sock_queue_send - queue the sealed record @b last on @c and write
 * @c: the connection
 * @b: a sealed record on no queue
 *
 * Written at once when the queue was empty (else the watch writes it
 * after those before it).  A record left queued keeps no more than twice
 * its message plus 4 KiB of room (send_room_trimmed), so what the queue
 * holds stays near what it counts; it may move, and a client call's
 * tpriv follows it.
 *
 * Return: 0, or rpcrdma__sock_flush()'s -errno: close.
 */
int rpcrdma__sock_queue_send(struct rpcrdma__sock_conn *c, struct rpcrdma__sock_buf *b);

/**
 * rpcrdma__sock_queue_unlink - take @b off @q unwritten; the caller frees it
 * @q: the queue
 * @b: a record queued on @q
 */
void rpcrdma__sock_queue_unlink(struct rpcrdma__sock_sendq *q, struct rpcrdma__sock_buf *b);

/**
 * rpcrdma__sock_conn_init - prepare @c, without a socket, for @loop
 * @c: the connection
 * @loop: the loop its socket will be watched on
 * @max_record: the largest record accepted (rpcrdma__sock_max_record())
 * @st: the counters it adds to
 *
 * Return: 0, or -ENOMEM (@c may then be freed with rpcrdma__sock_conn_free()).
 */
int rpcrdma__sock_conn_init(struct rpcrdma__sock_conn *c, struct rpcrdma_loop *loop,
			    size_t max_record, struct rpcrdma_xprt_stats *st);

/**
 * rpcrdma__sock_conn_teardown - close @c's socket, drop what was queued or half read
 * @c: the connection; it may be given a new socket afterwards
 *
 * The client calls that queued records carry lose their tpriv.
 */
void rpcrdma__sock_conn_teardown(struct rpcrdma__sock_conn *c);

/**
 * rpcrdma__sock_conn_free - tear @c down and free what it holds (not @c itself)
 * @c: the connection
 */
void rpcrdma__sock_conn_free(struct rpcrdma__sock_conn *c);

/**
 * rpcrdma__sock_conn_update - watch for what @c now waits on
 * @c: the connection: reading unless paused, writing while records are queued
 */
void rpcrdma__sock_conn_update(struct rpcrdma__sock_conn *c);

/**
 * rpcrdma__sock_deliver_staged - deliver the complete records already read
 * @c: the connection
 * @deliver: called with each record
 * @arg: @deliver's argument
 *
 * Return: 0 (more input is needed), 1 (@deliver asked to stop, or reading
 * is paused), or a framing error (-EPROTO, -EMSGSIZE, -ENOMEM): close.
 */
int rpcrdma__sock_deliver_staged(struct rpcrdma__sock_conn *c, rpcrdma__sock_deliver_fn deliver,
				 void *arg);

/**
 * rpcrdma__sock_read - read a bounded burst from @c and deliver its records
 * @c: the connection
 * @deliver: called with each record
 * @arg: @deliver's argument
 *
 * Return: 0 (would block, or the burst is used up: the level-triggered
 * watch comes back), 1 (stopped by @deliver, or paused with records still
 * staged), or a negative error to close on: a framing violation,
 * -ECONNRESET for the end of the stream, or the read's -errno.
 */
int rpcrdma__sock_read(struct rpcrdma__sock_conn *c, rpcrdma__sock_deliver_fn deliver, void *arg);

/**
 * rpcrdma__sock_flush - write what is queued on @c
 * @c: the connection
 *
 * Records fully written are freed; the client calls they carried lose
 * their tpriv.  The watch follows what is left.
 *
 * Return: 0 (all written, or the rest waits for EPOLLOUT) or -errno.
 */
int rpcrdma__sock_flush(struct rpcrdma__sock_conn *c);

/**
 * rpcrdma__sock_set_nodelay - turn Nagle's algorithm off on @fd
 * @fd: a TCP socket
 *
 * Return: setsockopt()'s result.
 */
int rpcrdma__sock_set_nodelay(int fd);

/**
 * rpcrdma__sock_rx_in_record - whether a record is begun and not yet whole
 * @rx: the connection's reassembly state
 *
 * Bytes read but not parsed yet (left staged while reading is paused) do
 * not count: no record of theirs has begun.  @rx->rec_began says since when.
 */
bool rpcrdma__sock_rx_in_record(const struct rpcrdma__sock_rx *rx);

#endif
