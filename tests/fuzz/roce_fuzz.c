/*
 * Fuzz rpcrdma-dump's RoCEv2 parser and RC Send reassembler (tools/roce.c)
 * with sequences of captured frames.
 *
 * Input: a byte picking the link type, then frames, each a control byte
 * and a length byte.  With the control byte's low bit clear, the next
 * length bytes are a whole frame, for the header parsers.  With it set, a
 * second control byte follows, and the bytes are the payload of an RC Send
 * this target frames with correct link, IP, UDP and BTH headers, so that
 * FIRST, MIDDLE and LAST on a few flows, in sequence or with PSN gaps,
 * padded, cut short by the capture, reach the reassembler:
 *   control:  bit 0 built; bits 1-3 the Send opcode; bits 4-5 the QP;
 *             bit 6 IPv6; bit 7 a VLAN tag (Ethernet)
 *   control2: bits 0-1 the pad count; bit 2 skip a PSN; bit 3 cut the
 *             capture by 1 + bits 4-7 bytes
 *
 * Whatever the frames: each report is well formed (a lost Send names its
 * QP, a complete one holds at most ROCE_MAX_SEND bytes, all readable), the
 * Sends never hold more bytes than the frames carried, and roce_finish()
 * leaves no flow and no buffer behind.  For the built frames this target
 * also knows what must come out: a whole SEND ONLY is its payload, and a
 * LAST completing a FIRST and MIDDLEs in sequence, none cut, on a flow no
 * raw frame may have touched, is their payloads joined.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roce.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define QPS 4u
#define FLOWS (2 * QPS) /* each QP over IPv4 and over IPv6 */
#define PSN_MASK 0xffffffu
#define PSN_START 0xfffffeu /* the first Sends cross the PSN wrap */
#define JOINED_MAX (1u << 16)
#define FRAME_MAX 512u

enum part { FIRST, MIDDLE, LAST, ONLY };

/* RC Send opcodes (IBA 9.2), the control byte's bits 1-3 in order. */
static const struct {
	uint8_t opcode;
	enum part part;
	bool ext; /* an ImmDt or IETH follows the BTH */
} sends[8] = {
    {0x00, FIRST, false}, {0x01, MIDDLE, false}, {0x02, LAST, false}, {0x03, LAST, true},
    {0x04, ONLY, false},  {0x05, ONLY, true},    {0x16, LAST, true},  {0x17, ONLY, true},
};

/* What the next complete Send of a flow must hold, while this target
 * knows it. */
struct expect {
	bool known;
	uint32_t next_psn;
	size_t len;
	uint8_t joined[JOINED_MAX];
};

static struct {
	struct roce_reasm r;
	uint64_t frame; /* being fed; 0 inside roce_finish() */
	uint64_t last_frame;
	size_t bytes_in, bytes_out;
	const uint8_t *want; /* the Send this frame must complete, or NULL */
	size_t want_len;
	unsigned int complete; /* complete Sends reported for this frame */
	uint32_t psn[FLOWS];   /* the next PSN each built flow sends */
	struct expect expect[FLOWS];
	volatile uint8_t sink;
} t;

static void on_send(void *ctx, const struct roce_send *s)
{
	(void)ctx;
	if (s->frame == 0 || s->frame > t.last_frame || (t.frame && s->frame != t.frame))
		abort();
	if (s->lost) {
		if (!s->problem || strncmp(s->problem, "QP 0x", 5) != 0 || s->len)
			abort();
		return;
	}
	/* roce_finish() reports only what it throws away. */
	if (!t.frame || s->len > ROCE_MAX_SEND || (s->len && !s->data))
		abort();
	for (size_t i = 0; i < s->len; i++)
		t.sink ^= s->data[i];
	t.bytes_out += s->len;
	if (t.bytes_out > t.bytes_in)
		abort();
	t.complete++;
	if (t.want && (s->truncated || s->len != t.want_len ||
		       (s->len && memcmp(s->data, t.want, s->len) != 0)))
		abort();
}

static void feed(const uint8_t *pkt, size_t caplen)
{
	t.frame = ++t.last_frame;
	t.bytes_in += caplen;
	t.complete = 0;
	/* -ENOMEM only when an allocation fails: nothing to check. */
	(void)roce_input(&t.r, t.frame, pkt, caplen);
	if (t.want && t.complete != 1)
		abort();
	t.want = NULL;
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

/* The link header; returns its length. */
static size_t put_link(uint8_t *f, enum roce_link link, bool ipv6, bool vlan)
{
	uint32_t type = ipv6 ? 0x86dd : 0x0800;

	switch (link) {
	case ROCE_LINK_ETHERNET:
		memset(f, 0x02, 12); /* destination and source MACs */
		if (vlan) {
			put16(f + 12, 0x8100);
			put16(f + 14, 7); /* TCI: VLAN 7 */
			put16(f + 16, type);
			return 18;
		}
		put16(f + 12, type);
		return 14;
	case ROCE_LINK_SLL:
		memset(f, 0, 14);
		put16(f + 2, 1); /* ARPHRD_ETHER */
		put16(f + 4, 6);
		put16(f + 14, type);
		return 16;
	case ROCE_LINK_SLL2:
		memset(f, 0, 20);
		put16(f, type);
		put16(f + 8, 1);
		f[11] = 6;
		return 20;
	default:
		return 0; /* the IP version nibble says which */
	}
}

/*
 * An RC Send on QP @qp carrying @len bytes of @payload, padded with @pad
 * bytes and followed by an ICRC; returns the frame's length as sent.
 */
static size_t build(uint8_t *f, enum roce_link link, uint8_t ctl, uint8_t ctl2, uint32_t psn,
		    const uint8_t *payload, size_t len)
{
	bool ipv6 = ctl & 0x40;
	size_t pad = ctl2 & 3, ext = sends[(ctl >> 1) & 7].ext ? 4 : 0;
	size_t ip = put_link(f, link, ipv6, ctl & 0x80);
	size_t udp = ip + (ipv6 ? 40 : 20), bth = udp + 8, body = bth + 12 + ext;
	size_t end = body + len + pad + 4;

	if (ipv6) {
		memset(f + ip, 0, 40);
		f[ip] = 0x60;
		put16(f + ip + 4, (uint32_t)(end - udp));
		f[ip + 6] = 17; /* UDP */
		f[ip + 7] = 64;
		f[ip + 8] = 0xfd;
		f[ip + 23] = 1;
		f[ip + 24] = 0xfd;
		f[ip + 39] = 2;
	} else {
		memset(f + ip, 0, 20);
		f[ip] = 0x45;
		put16(f + ip + 2, (uint32_t)(end - ip));
		f[ip + 6] = 0x40; /* DF */
		f[ip + 8] = 64;
		f[ip + 9] = 17;
		f[ip + 12] = 10;
		f[ip + 15] = 1;
		f[ip + 16] = 10;
		f[ip + 19] = 2;
	}
	put16(f + udp, 0xc000);
	put16(f + udp + 2, ROCE_UDP_PORT);
	put16(f + udp + 4, (uint32_t)(end - udp));
	put16(f + udp + 6, 0);
	memset(f + bth, 0, 12 + ext);
	f[bth] = sends[(ctl >> 1) & 7].opcode;
	f[bth + 1] = (uint8_t)(pad << 4);
	put16(f + bth + 2, 0xffff);
	put24(f + bth + 5, 0x11 + ((ctl >> 4) & 3u));
	put24(f + bth + 9, psn);
	memcpy(f + body, payload, len);
	memset(f + body + len, 0, pad + 4);
	return end;
}

/* What the built frame must produce, and what its flow must hold next. */
static void expect_built(struct expect *e, enum part part, bool cut, uint32_t psn,
			 const uint8_t *payload, size_t len)
{
	bool in_sequence = e->known && psn == e->next_psn && len <= JOINED_MAX - e->len;

	if (cut) {
		e->known = false;
		return;
	}
	switch (part) {
	case FIRST:
		e->known = true;
		memcpy(e->joined, payload, len);
		e->len = len;
		e->next_psn = (psn + 1) & PSN_MASK;
		return;
	case MIDDLE:
	case LAST:
		e->known = in_sequence && part == MIDDLE;
		if (!in_sequence)
			return;
		memcpy(e->joined + e->len, payload, len);
		e->len += len;
		e->next_psn = (psn + 1) & PSN_MASK;
		if (part == LAST) {
			t.want = e->joined;
			t.want_len = e->len;
		}
		return;
	case ONLY:
		e->known = false;
		t.want = payload;
		t.want_len = len;
		return;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frame[FRAME_MAX];
	enum roce_link link;
	size_t o = 1;

	if (size < 1)
		return 0;
	t.frame = t.last_frame = 0;
	t.bytes_in = t.bytes_out = 0;
	t.want = NULL;
	for (unsigned int i = 0; i < FLOWS; i++) {
		t.psn[i] = PSN_START;
		t.expect[i].known = false;
		t.expect[i].len = 0;
	}
	link = (enum roce_link)(data[0] & 3);
	roce_init(&t.r, link, on_send, NULL);
	while (size - o >= 2) {
		uint8_t ctl = data[o], ctl2 = 0;
		size_t len = data[o + 1];

		o += 2;
		if (ctl & 1) {
			if (o == size)
				break;
			ctl2 = data[o++];
		}
		if (len > size - o)
			len = size - o;
		if (!(ctl & 1)) {
			/* It may parse as a Send of a built flow: what those
			 * hold is no longer known. */
			for (unsigned int i = 0; i < FLOWS; i++)
				t.expect[i].known = false;
			feed(data + o, len);
		} else {
			unsigned int flow = ((ctl >> 4) & 3u) + (ctl & 0x40 ? QPS : 0);
			uint32_t psn = (t.psn[flow] + ((ctl2 & 4) ? 1 : 0)) & PSN_MASK;
			size_t full = build(frame, link, ctl, ctl2, psn, data + o, len);
			size_t cut = (ctl2 & 8) ? 1 + (ctl2 >> 4) : 0;

			t.psn[flow] = (psn + 1) & PSN_MASK;
			expect_built(&t.expect[flow], sends[(ctl >> 1) & 7].part, cut != 0, psn,
				     data + o, len);
			feed(frame, cut < full ? full - cut : 0);
		}
		o += len;
	}
	t.frame = 0;
	roce_finish(&t.r);
	if (t.r.nflows || t.r.buffered)
		abort();
	return 0;
}
