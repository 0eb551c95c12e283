/*
 * TCP record reassembly (src/xprtsock/record.c) over a socket pair: what
 * a record mark makes the receiver reserve before the bytes it announces
 * arrive, how the buffer grows as they do, and the record's clock.
 */
#include <arpa/inet.h>
#include <errno.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mark_alone),
	    cmocka_unit_test(test_growth_follows_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
