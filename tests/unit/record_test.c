/*
 * TCP record reassembly (src/xprtsock/record.c) over a socket pair: what
 * a record mark makes the receiver reserve before the bytes it announces
 * arrive, how the buffer grows as they do, and the record's clock.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "xprtsock/sock.h"

#define MAX_RECORD ((1u << 20) + (64u << 10))
#define BODY (1u << 20)
/* record.c's stage, the least a large fragment's body is read in. */
#define STAGE (64u << 10)

struct delivered {
	uint8_t *rec;
	size_t len;
	unsigned int count;
};

static int keep_record(void *arg, uint8_t *rec, size_t len)
{
	struct delivered *d = arg;

	free(d->rec);
	d->rec = rec;
	d->len = len;
	d->count++;
	return 0;
}

struct pair {
	struct rpcrdma_loop *loop;
	struct rpcrdma_xprt_stats st;
	struct rpcrdma__sock_conn c;
	int peer; /* the sending end */
};

static void pair_open(struct pair *p)
{
	int sv[2];

	memset(p, 0, sizeof(*p));
	assert_int_equal(rpcrdma_loop_create(&p->loop), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	assert_int_equal(rpcrdma__sock_conn_init(&p->c, p->loop, MAX_RECORD, &p->st), 0);
	p->c.fd = sv[0];
	p->peer = sv[1];
}

static void pair_close(struct pair *p)
{
	rpcrdma__sock_conn_free(&p->c); /* closes c.fd */
	close(p->peer);
	assert_int_equal(rpcrdma_loop_destroy(p->loop), 0);
}

static void send_all(int fd, const void *buf, size_t len)
{
	assert_int_equal(send(fd, buf, len, MSG_NOSIGNAL), (ssize_t)len);
}

static void send_mark(int fd, uint32_t mark)
{
	uint32_t be = htonl(mark);

	send_all(fd, &be, sizeof(be));
}

/*
 * A mark announcing 1 MiB and nothing after it: the receiver commits a
 * stage's worth, not the megabyte, though the fragment it waits for is
 * that long; the record has begun (its clock runs).
 */
static void test_mark_alone(void **state)
{
	struct delivered d = {0};
	struct pair p;
	uint64_t before;
	(void)state;

	pair_open(&p);
	assert_false(rpcrdma__sock_rx_in_record(&p.c.rx));
	before = rpcrdma_loop_now(p.loop);
	send_mark(p.peer, 0x80000000u | BODY);
	assert_int_equal(rpcrdma__sock_read(&p.c, keep_record, &d), 0);
	assert_int_equal(d.count, 0);
	assert_true(p.c.rx.in_frag);
	assert_int_equal(p.c.rx.frag_left, BODY);
	assert_true(p.c.rx.rec_cap <= STAGE);
	assert_true(rpcrdma__sock_rx_in_record(&p.c.rx));
	assert_true(p.c.rx.rec_began >= before);
	assert_true(p.c.rx.rec_began <= rpcrdma_loop_now(p.loop));
	pair_close(&p);
}

/*
 * The body of that fragment, arriving 48 KiB at a time: after each read
 * the buffer holds at most four times the bytes received plus a stage,
 * and the record comes out whole and intact; a second record reuses
 * nothing stale.  A smaller record is taken through the stage as before.
 */
static void test_growth_follows_bytes(void **state)
{
	const size_t piece = 48u << 10;
	uint8_t *body = malloc(BODY);
	struct delivered d = {0};
	struct pair p;
	(void)state;

	assert_non_null(body);
	for (size_t i = 0; i < BODY; i++)
		body[i] = (uint8_t)(i * 13u + 5u);
	pair_open(&p);
	for (int round = 0; round < 2; round++) {
		send_mark(p.peer, 0x80000000u | BODY);
		for (size_t sent = 0; sent < BODY; sent += piece) {
			size_t n = BODY - sent < piece ? BODY - sent : piece;

			send_all(p.peer, body + sent, n);
			assert_int_equal(rpcrdma__sock_read(&p.c, keep_record, &d), 0);
			if (d.count == (unsigned int)round + 1)
				break;
			assert_true(p.c.rx.rec_cap <= 4 * p.c.rx.rec_len + STAGE);
		}
		assert_int_equal(d.count, round + 1);
		assert_int_equal(d.len, BODY);
		assert_memory_equal(d.rec, body, BODY);
		assert_false(rpcrdma__sock_rx_in_record(&p.c.rx));
		assert_int_equal(p.c.rx.rec_cap, 0);
	}
	send_mark(p.peer, 0x80000000u | 100);
	send_all(p.peer, body, 100);
	assert_int_equal(rpcrdma__sock_read(&p.c, keep_record, &d), 0);
	assert_int_equal(d.count, 3);
	assert_int_equal(d.len, 100);
	assert_memory_equal(d.rec, body, 100);
	free(d.rec);
	pair_close(&p);
	free(body);
}

/* Bytes malloc gave @p beyond what a record of @msglen asks, at most
 * (glibc rounds a large chunk up to a page). */
#define MALLOC_ROUNDING 4096u
/* record.c's QUEUED_SLACK. */
#define QUEUED_SLACK 4096u

/* A sealed record of @msglen bytes of pattern @seed, in room for @hint. */
static struct rpcrdma__sock_buf *record_of(size_t hint, size_t msglen, uint8_t seed)
{
	struct rpcrdma__sock_buf *b = rpcrdma__sock_buf_new(hint);

	assert_non_null(b);
	assert_true(msglen <= b->cap);
	for (size_t i = 0; i < msglen; i++)
		b->data[4 + i] = (uint8_t)(i * 7u + seed);
	rpcrdma__sock_buf_seal(b, msglen);
	return b;
}

static void assert_holds_at_most_twice(const struct rpcrdma__sock_buf *b, size_t msglen)
{
	assert_true(malloc_usable_size((void *)b) <=
		    sizeof(*b) + 4 + 2 * msglen + QUEUED_SLACK + MALLOC_ROUNDING);
}

/*
 * A record that stays queued holds at most twice its message plus 4 KiB,
 * whatever room it was encoded in: a 530,000-byte reply encoded in the
 * 2 MiB its fourfold growth reached (8 KiB, 32, 128, 512 KiB, 2 MiB), held
 * whole while the queue counted a quarter of it; a 100-byte one in the
 * default 8 KiB.  One just within twice (3,000 bytes in 8 KiB) keeps its
 * room, and one written at once is not touched.  All arrive intact.
 */
static void test_queued_room(void **state)
{
	static const size_t lens[] = {530000, 100, 3000};
	static const size_t hints[] = {2u << 20, 0, 0};
	size_t junk = 0, total, got = 0, at;
	uint8_t *in, filler[4096] = {0};
	struct pair p;
	(void)state;

	pair_open(&p);
	/* Fill the socket, so that the records stay queued. */
	for (;;) {
		ssize_t n = send(p.c.fd, filler, sizeof(filler), MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
			break;
		}
		junk += (size_t)n;
	}
	for (int i = 0; i < 3; i++) {
		struct rpcrdma__sock_buf *b = record_of(hints[i], lens[i], (uint8_t)i);

		assert_int_equal(rpcrdma__sock_queue_send(&p.c, b), 0);
		assert_non_null(p.c.q.tail);
		assert_holds_at_most_twice(p.c.q.tail, lens[i]);
		assert_int_equal(p.st.send_room_trimmed, i < 2 ? i + 1 : 2);
	}
	assert_int_equal(p.c.q.bytes, 3 * 4 + lens[0] + lens[1] + lens[2]);
	/* The peer reads; the queue drains as the socket takes it. */
	total = junk + p.c.q.bytes;
	in = malloc(total);
	assert_non_null(in);
	while (got < total) {
		ssize_t n = recv(p.peer, in + got, total - got, MSG_DONTWAIT);

		if (n > 0)
			got += (size_t)n;
		assert_int_equal(rpcrdma__sock_flush(&p.c), 0);
	}
	assert_null(p.c.q.head);
	at = junk;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(rpcrdma__sock_get_be32(in + at), 0x80000000u | (uint32_t)lens[i]);
		for (size_t k = 0; k < lens[i]; k++)
			assert_int_equal(in[at + 4 + k], (uint8_t)(k * 7u + (unsigned int)i));
		at += 4 + lens[i];
	}
	/* The queue empty, the socket takes a record whole: nothing to fit. */
	assert_int_equal(rpcrdma__sock_queue_send(&p.c, record_of(0, 100, 9)), 0);
	assert_null(p.c.q.head);
	assert_int_equal(p.st.send_room_trimmed, 2);
	free(in);
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mark_alone),
	    cmocka_unit_test(test_growth_follows_bytes),
	    cmocka_unit_test(test_queued_room),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
