/*
 * Fuzz TCP record marking reassembly (src/xprtsock/record.c) over a socket
 * pair: arbitrary bytes from the peer, written in pieces of arbitrary
 * sizes, read by rpcrdma__sock_read() as a connection would.
 *
 * Input: a byte choosing the largest record (bit 7: 1 MiB, so that marks
 * announcing 64 KiB or more take the path that reads a fragment's body
 * straight into the record; otherwise 1 + 8 * bits 0-6 bytes), a byte
 * seeding the sizes of the pieces (0: the whole stream in one write), a
 * byte whose low bit makes the receiver stop reading after each record,
 * as a paused server does; then the stream.
 *
 * A model that reads the stream in one go says which records it holds and
 * whether, and how, it ends in a framing violation.  However the stream is
 * cut, the receiver must deliver exactly those records, in order, then
 * report that violation (or none); a record is never longer than the
 * limit; and the memory it holds for a record being reassembled stays
 * within the limit and within a few times the bytes received (a mark
 * alone commits at most one stage).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xprtsock/sock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MARK_LAST 0x80000000u
#define MARK_LEN 0x7fffffffu
#define MAX_FRAGS 65536u        /* record.c: fragments in one record */
#define STAGE_SIZE (64u << 10)  /* record.c: the stage */
#define LARGE_RECORD (1u << 20) /* lets marks of a stage or more through */
#define MODEL_RECORDS 4096u

/* What the model found: records as (offset, length) runs of the stream
 * joined, and how the stream ends. */
struct model_record {
	size_t len;
	size_t first; /* index of its first run in runs[] */
	size_t nruns;
};

struct run {
	size_t off, len;
};

static struct {
	struct model_record rec[MODEL_RECORDS];
	size_t nrec;
	struct run runs[1 << 16];
	size_t nruns;
	int end_rc; /* 0, -EMSGSIZE or -EPROTO */
} model;

static struct {
	const uint8_t *stream;
	size_t delivered;
	bool pause;
	bool fail;
	volatile uint8_t sink;
} t;

static struct rpcrdma_loop *loop;

/* Read the stream as record.c must: Returns false when the model runs out
 * of room (the input is then skipped). */
static bool model_run(const uint8_t *s, size_t n, size_t max_record)
{
	size_t off = 0, rec_len = 0, first = 0;
	unsigned int frags = 0;

	model.nrec = model.nruns = 0;
	model.end_rc = 0;
	while (n - off >= 4) {
		uint32_t mark = rpcrdma__sock_get_be32(s + off);
		size_t frag = mark & MARK_LEN;
		bool last = (mark & MARK_LAST) != 0;

		off += 4;
		if (++frags > MAX_FRAGS) {
			model.end_rc = -EPROTO;
			return true;
		}
		if (frag > max_record - rec_len) {
			model.end_rc = -EMSGSIZE;
			return true;
		}
		if (frag > n - off)
			return true; /* the fragment is still arriving */
		if (frag) {
			if (model.nruns == sizeof(model.runs) / sizeof(model.runs[0]))
				return false;
			model.runs[model.nruns++] = (struct run){off, frag};
		}
		off += frag;
		rec_len += frag;
		if (!last)
			continue;
		if (rec_len == 0) {
			model.end_rc = -EPROTO;
			return true;
		}
		if (model.nrec == MODEL_RECORDS)
			return false;
		model.rec[model.nrec++] =
		    (struct model_record){rec_len, first, model.nruns - first};
		first = model.nruns;
		rec_len = 0;
		frags = 0;
	}
	return true;
}

static bool record_matches(const struct model_record *m, const uint8_t *rec, size_t len)
{
	size_t at = 0;

	if (len != m->len)
		return false;
	for (size_t i = 0; i < m->nruns; i++) {
		const struct run *r = &model.runs[m->first + i];

		if (memcmp(rec + at, t.stream + r->off, r->len) != 0)
			return false;
		at += r->len;
	}
	return at == len;
}

static int deliver(void *arg, uint8_t *rec, size_t len)
{
	(void)arg;
	if (t.delivered >= model.nrec || !record_matches(&model.rec[t.delivered], rec, len))
		t.fail = true;
	/* Touch every byte: the record must be readable to its end. */
	for (size_t i = 0; i < len; i++)
		t.sink ^= rec[i];
	free(rec);
	t.delivered++;
	return t.pause;
}

static uint32_t next_random(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* What a record being reassembled may hold: within the limit, and at most
 * a few times the bytes it has plus a stage and what the socket holds. */
static bool room_ok(const struct rpcrdma__sock_conn *c, size_t max_record, size_t unread)
{
	const struct rpcrdma__sock_rx *rx = &c->rx;

	if (rx->rec_len > rx->rec_cap || rx->rec_cap > max_record)
		return false;
	return rx->rec_cap <= 4 * rx->rec_len + STAGE_SIZE + unread;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma_xprt_stats st;
	struct rpcrdma__sock_conn c;
	size_t max_record, sent = 0;
	uint32_t seed;
	int sv[2], rc = 0;

	if (size < 3)
		return 0;
	max_record = data[0] & 0x80 ? LARGE_RECORD : 1u + 8u * (data[0] & 0x7fu);
	seed = data[1];
	t.pause = data[2] & 1;
	data += 3;
	size -= 3;
	if (!model_run(data, size, max_record))
		return 0;
	if (!loop && rpcrdma_loop_create(&loop) != 0)
		abort();
	memset(&st, 0, sizeof(st));
	if (rpcrdma__sock_conn_init(&c, loop, max_record, &st) != 0)
		abort();
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) != 0)
		abort();
	c.fd = sv[0];
	t.stream = data;
	t.delivered = 0;
	t.fail = false;

	while (sent < size && rc >= 0) {
		size_t piece = size - sent;

		if (seed) {
			uint32_t r = next_random(&seed);

			/* Mostly small pieces, so that marks and bodies split anywhere. */
			piece = 1u + (r & 0xffu) % (r & 0x100u ? 300u : 7u);
			if (piece > size - sent)
				piece = size - sent;
		}
		if (send(sv[1], data + sent, piece, MSG_NOSIGNAL) != (ssize_t)piece)
			abort();
		sent += piece;
		/* Read until the socket is empty, as a level-triggered watch would. */
		do {
			rc = rpcrdma__sock_read(&c, deliver, NULL);
			if (rc >= 0 && !room_ok(&c, max_record, 0))
				abort();
		} while (rc == 1);
	}
	if (t.fail || t.delivered != model.nrec || rc != model.end_rc)
		abort();
	rpcrdma__sock_conn_free(&c); /* closes sv[0] */
	close(sv[1]);
	return 0;
}
