/*
 * RoCEv2 parsing and RC Send reassembly for rpcrdma-dump.  This file owns
 * everything between a captured frame and the bytes of one Send: the link
 * header (Ethernet with VLAN tags, Linux cooked v1/v2, raw IP), IPv4 and
 * IPv6, UDP to port 4791, the InfiniBand BTH and its IETH/ImmDt extension,
 * the pad count and the trailing ICRC, and the per-flow state that glues
 * SEND FIRST/MIDDLE/LAST back together.
 *
 * Every length comes from the capture and is checked against both the
 * captured bytes and the enclosing header's length before use.  A frame
 * that cannot be parsed down to a BTH is silently not RoCE; a Send that
 * cannot be trusted is reported through the emit callback, never guessed at.
 *
 * Normal operation: a flow is keyed by source address, destination address
 * and destination QP.  The QP alone is not enough: both ends of one
 * connection often get the same QP number (the Linux capture has QP 0x17 on
 * either side), and their Sends interleave.  SEND ONLY needs no state; a
 * SEND FIRST opens a flow, each MIDDLE must carry the next PSN, and the LAST
 * completes the message and closes the flow.
 *
 * Recovery: a MIDDLE or LAST with no FIRST before it (the capture started
 * mid-message), a PSN gap (a lost or retransmitted packet), a FIRST or ONLY
 * arriving while a message is open, a Send over ROCE_MAX_SEND, a packet the
 * capture truncated, or running out of memory or flow slots all discard the
 * partial message with one "lost" report; the flow then skips packets up to
 * the next FIRST or ONLY without further reports.  PSN comparison is exact:
 * RC delivers in order, so anything else means the capture missed a packet
 * or shows a retransmission, and either way the bytes cannot be trusted.
 * IP fragments are not reassembled (RoCEv2 sets DF), so they are ignored.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce.h"

#define ETHERTYPE_IPV4 0x0800u
#define ETHERTYPE_IPV6 0x86ddu
#define ETHERTYPE_VLAN 0x8100u
#define ETHERTYPE_QINQ 0x88a8u
#define ETHERTYPE_QINQ_OLD 0x9100u
#define MAX_VLAN_TAGS 4
#define MAX_IPV6_EXT_HDRS 8

#define IPPROTO_HOPOPTS_ 0u
#define IPPROTO_UDP_ 17u
#define IPPROTO_ROUTING_ 43u
#define IPPROTO_FRAGMENT_ 44u
#define IPPROTO_AH_ 51u
#define IPPROTO_DSTOPTS_ 60u

#define UDP_HDR_SIZE 8u
#define BTH_SIZE 12u
#define ICRC_SIZE 4u
#define EXT_SIZE 4u /* IETH or ImmDt */
#define PSN_MASK 0xffffffu

/* RC opcodes (the transport bits, 000, are the top three). */
enum bth_opcode {
	RC_SEND_FIRST = 0x00,
	RC_SEND_MIDDLE = 0x01,
	RC_SEND_LAST = 0x02,
	RC_SEND_LAST_IMM = 0x03,
	RC_SEND_ONLY = 0x04,
	RC_SEND_ONLY_IMM = 0x05,
	RC_SEND_LAST_INV = 0x16,
	RC_SEND_ONLY_INV = 0x17,
};

enum send_part { PART_FIRST, PART_MIDDLE, PART_LAST, PART_ONLY };

struct flow_key {
	uint8_t src[16]; /* IPv4 addresses sit in the first four bytes */
	uint8_t dst[16];
	uint32_t qp;
	uint8_t family; /* 4 or 6 */
	uint8_t pad[3]; /* zeroed, so keys compare with memcmp() */
};

struct roce_flow {
	struct flow_key key;
	bool active;       /* collecting a message; otherwise skipping to the next one */
	uint32_t next_psn; /* when active */
	uint64_t last_frame;
	uint8_t *buf;
	size_t len;
	size_t cap;
};

/* One RoCE Send packet, as far as the capture shows it. */
struct send_pkt {
	struct flow_key key;
	enum send_part part;
	uint32_t psn;
	const uint8_t *payload;
	size_t len;     /* payload bytes present in the capture */
	bool truncated; /* the capture holds fewer than the packet carried */
	bool malformed; /* pad count or extension header beyond the packet */
};

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

void roce_init(struct roce_reasm *r, enum roce_link link, roce_emit_fn *emit, void *ctx)
{
	memset(r, 0, sizeof(*r));
	r->link = link;
	r->emit = emit;
	r->ctx = ctx;
}

/*
 * Find where the IP packet starts and which version it claims.  Returns
 * false for anything that is not IPv4 or IPv6.
 */
static bool strip_link(enum roce_link link, const uint8_t *pkt, size_t caplen, size_t *off,
                       unsigned int *ethertype)
{
	size_t o;
	unsigned int type;

	switch (link) {
	case ROCE_LINK_ETHERNET:
		if (caplen < 14)
			return false;
		type = be16(pkt + 12);
		o = 14;
		break;
	case ROCE_LINK_SLL:
		if (caplen < 16)
			return false;
		type = be16(pkt + 14);
		o = 16;
		break;
	case ROCE_LINK_SLL2:
		if (caplen < 20)
			return false;
		type = be16(pkt);
		o = 20;
		break;
	case ROCE_LINK_RAW:
		if (caplen < 1)
			return false;
		type = (pkt[0] >> 4) == 6 ? ETHERTYPE_IPV6 : ETHERTYPE_IPV4;
		*off = 0;
		*ethertype = type;
		return true;
	default:
		return false;
	}
	/* A tag is four bytes whose last two are the next type. */
	for (int tags = 0;
	     type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ || type == ETHERTYPE_QINQ_OLD;
	     tags++) {
		if (tags == MAX_VLAN_TAGS || caplen - o < 4)
			return false;
		type = be16(pkt + o + 2);
		o += 4;
	}
	if (type != ETHERTYPE_IPV4 && type != ETHERTYPE_IPV6)
		return false;
	*off = o;
	*ethertype = type;
	return true;
}

/*
 * The IP layer: fills the addresses of @key, and returns in *@udp the UDP
 * header's offset and in *@ip_end the end of the IP packet as sent (which
 * may lie beyond the captured bytes, or before them when the link padded
 * the frame).
 */
static bool strip_ip(const uint8_t *pkt, size_t caplen, size_t off, unsigned int ethertype,
                     struct flow_key *key, size_t *udp, size_t *ip_end)
{
	const uint8_t *ip = pkt + off;
	size_t avail = caplen - off;

	if (ethertype == ETHERTYPE_IPV4) {
		size_t ihl, total;

		if (avail < 20 || ip[0] >> 4 != 4)
			return false;
		ihl = (size_t)(ip[0] & 0xf) * 4;
		total = be16(ip + 2);
		if (ihl < 20 || ihl > avail || total < ihl)
			return false;
		/* More-fragments set or a non-zero offset: one piece of a
		 * datagram this tool does not reassemble. */
		if (be16(ip + 6) & 0x3fff)
			return false;
		if (ip[9] != IPPROTO_UDP_)
			return false;
		key->family = 4;
		memcpy(key->src, ip + 12, 4);
		memcpy(key->dst, ip + 16, 4);
		*udp = off + ihl;
		*ip_end = off + total;
		return true;
	}

	if (avail < 40 || ip[0] >> 4 != 6)
		return false;
	size_t plen = be16(ip + 4);
	unsigned int next = ip[6];
	size_t o = 40;

	/* Zero means a jumbogram (RFC 2675), which RoCE never sends. */
	if (plen == 0)
		return false;
	for (int n = 0; next != IPPROTO_UDP_; n++) {
		size_t hlen;

		if (n == MAX_IPV6_EXT_HDRS)
			return false;
		if (next != IPPROTO_HOPOPTS_ && next != IPPROTO_ROUTING_ &&
		    next != IPPROTO_DSTOPTS_ && next != IPPROTO_AH_)
			return false; /* a fragment, ESP, or not UDP at all */
		if (avail - o < 2 || 40 + plen - o < 2)
			return false;
		if (next == IPPROTO_AH_)
			hlen = ((size_t)ip[o + 1] + 2) * 4;
		else
			hlen = ((size_t)ip[o + 1] + 1) * 8;
		next = ip[o];
		if (hlen > avail - o || hlen > 40 + plen - o)
			return false;
		o += hlen;
	}
	key->family = 6;
	memcpy(key->src, ip + 8, 16);
	memcpy(key->dst, ip + 24, 16);
	*udp = off + o;
	*ip_end = off + 40 + plen;
	return true;
}

static bool classify(unsigned int opcode, enum send_part *part, size_t *ext)
{
	*ext = 0;
	switch (opcode) {
	case RC_SEND_FIRST:
		*part = PART_FIRST;
		return true;
	case RC_SEND_MIDDLE:
		*part = PART_MIDDLE;
		return true;
	case RC_SEND_LAST_IMM:
	case RC_SEND_LAST_INV:
		*ext = EXT_SIZE;
		/* fall through */
	case RC_SEND_LAST:
		*part = PART_LAST;
		return true;
	case RC_SEND_ONLY_IMM:
	case RC_SEND_ONLY_INV:
		*ext = EXT_SIZE;
		/* fall through */
	case RC_SEND_ONLY:
		*part = PART_ONLY;
		return true;
	}
	return false; /* RDMA Write/Read, Atomics, ACKs, other transports */
}

/* Parse a frame down to a Send's payload; false when it is not one. */
static bool parse_send(enum roce_link link, const uint8_t *pkt, size_t caplen, struct send_pkt *sp)
{
	unsigned int ethertype;
	size_t off, udp, ip_end, ulen, bth, start, end, cap_end, ext, pad;

	memset(sp, 0, sizeof(*sp));
	if (!strip_link(link, pkt, caplen, &off, &ethertype))
		return false;
	if (!strip_ip(pkt, caplen, off, ethertype, &sp->key, &udp, &ip_end))
		return false;
	if (udp > ip_end || caplen - udp < UDP_HDR_SIZE || ip_end - udp < UDP_HDR_SIZE)
		return false;
	if (be16(pkt + udp + 2) != ROCE_UDP_PORT)
		return false;
	ulen = be16(pkt + udp + 4);
	if (ulen < UDP_HDR_SIZE || ulen > ip_end - udp)
		return false;
	bth = udp + UDP_HDR_SIZE;
	if (caplen - bth < BTH_SIZE || ulen - UDP_HDR_SIZE < BTH_SIZE)
		return false;
	if (!classify(pkt[bth], &sp->part, &ext))
		return false;

	pad = (pkt[bth + 1] >> 4) & 0x3;
	sp->key.qp = be24(pkt + bth + 5);
	sp->psn = be24(pkt + bth + 9) & PSN_MASK;
	start = bth + BTH_SIZE + ext;
	end = udp + ulen; /* where the packet ends as sent */
	if (end - bth < BTH_SIZE + ext + ICRC_SIZE + pad) {
		sp->malformed = true;
		return true;
	}
	end -= ICRC_SIZE + pad;
	cap_end = caplen < end ? caplen : end;
	if (cap_end < end)
		sp->truncated = true;
	if (cap_end < start) {
		/* Not even the extension header was captured. */
		return true;
	}
	sp->payload = pkt + start;
	sp->len = cap_end - start;
	return true;
}

static void emit_lost(struct roce_reasm *r, uint64_t frame, const struct flow_key *key,
                      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void emit_lost(struct roce_reasm *r, uint64_t frame, const struct flow_key *key,
                      const char *fmt, ...)
{
	struct roce_send s = {.frame = frame, .lost = true, .problem = r->problem};
	va_list ap;
	int n;

	n = snprintf(r->problem, sizeof(r->problem), "QP 0x%06lx: ", (unsigned long)key->qp);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(r->problem))
		vsnprintf(r->problem + n, sizeof(r->problem) - (size_t)n, fmt, ap);
	va_end(ap);
	r->emit(r->ctx, &s);
}

static void emit_send(struct roce_reasm *r, uint64_t frame, const uint8_t *data, size_t len,
                      bool truncated)
{
	struct roce_send s = {.frame = frame, .data = data, .len = len, .truncated = truncated};

	r->emit(r->ctx, &s);
}

static struct roce_flow *flow_find(struct roce_reasm *r, const struct flow_key *key,
                                   unsigned int *idx)
{
	for (unsigned int i = 0; i < r->nflows; i++) {
		if (memcmp(&r->flows[i]->key, key, sizeof(*key)) == 0) {
			*idx = i;
			return r->flows[i];
		}
	}
	return NULL;
}

static void flow_reset(struct roce_reasm *r, struct roce_flow *f)
{
	r->buffered -= f->cap;
	free(f->buf);
	f->buf = NULL;
	f->len = f->cap = 0;
	f->active = false;
}

static void flow_remove(struct roce_reasm *r, unsigned int idx)
{
	struct roce_flow *f = r->flows[idx];

	flow_reset(r, f);
	free(f);
	r->flows[idx] = r->flows[--r->nflows];
}

/* A slot for a new flow, evicting the one idle the longest when full. */
static struct roce_flow *flow_add(struct roce_reasm *r, const struct flow_key *key, uint64_t frame)
{
	struct roce_flow *f;

	if (r->nflows == ROCE_MAX_FLOWS) {
		unsigned int oldest = 0;

		for (unsigned int i = 1; i < r->nflows; i++) {
			if (r->flows[i]->last_frame < r->flows[oldest]->last_frame)
				oldest = i;
		}
		if (r->flows[oldest]->active)
			emit_lost(r, frame, &r->flows[oldest]->key,
			          "partial Send discarded: more than %u QPs in flight",
			          ROCE_MAX_FLOWS);
		flow_remove(r, oldest);
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->key = *key;
	f->last_frame = frame;
	r->flows[r->nflows++] = f;
	return f;
}

/* Append to the flow's message; false (and nothing changed) when it may not grow. */
static int flow_append(struct roce_reasm *r, struct roce_flow *f, const uint8_t *p, size_t n,
                       const char **why)
{
	if (n > ROCE_MAX_SEND - f->len) {
		*why = "Send larger than 16 MiB";
		return -EFBIG;
	}
	if (n > f->cap - f->len) {
		size_t cap = f->cap ? f->cap : 4096;
		uint8_t *nb;

		while (cap - f->len < n)
			cap *= 2;
		if (cap > ROCE_MAX_SEND)
			cap = ROCE_MAX_SEND;
		if (cap - f->cap > ROCE_MAX_BUFFERED - r->buffered) {
			*why = "reassembly memory limit reached";
			return -ENOMEM;
		}
		nb = realloc(f->buf, cap);
		if (!nb) {
			*why = "out of memory";
			return -ENOMEM;
		}
		r->buffered += cap - f->cap;
		f->buf = nb;
		f->cap = cap;
	}
	if (n)
		memcpy(f->buf + f->len, p, n);
	f->len += n;
	return 0;
}

static const char *part_name(enum send_part part)
{
	switch (part) {
	case PART_FIRST:
		return "SEND FIRST";
	case PART_MIDDLE:
		return "SEND MIDDLE";
	case PART_LAST:
		return "SEND LAST";
	case PART_ONLY:
		return "SEND ONLY";
	}
	return "SEND";
}

/*
 * Give up on the flow's current message after reporting it: a LAST ends
 * the message anyway, anything else skips up to the next FIRST or ONLY.
 */
static void flow_abandon(struct roce_reasm *r, unsigned int idx, enum send_part part)
{
	if (part == PART_LAST)
		flow_remove(r, idx);
	else
		flow_reset(r, r->flows[idx]);
}

int roce_input(struct roce_reasm *r, uint64_t frame, const uint8_t *pkt, size_t caplen)
{
	struct send_pkt sp;
	struct roce_flow *f;
	unsigned int idx = 0;
	const char *why = NULL;
	int rc;

	if (!parse_send(r->link, pkt, caplen, &sp))
		return 0;
	f = flow_find(r, &sp.key, &idx);
	if (f)
		f->last_frame = frame;

	if (sp.malformed) {
		if (f && f->active)
			emit_lost(r, frame, &sp.key, "partial Send discarded: malformed %s",
			          part_name(sp.part));
		else
			emit_lost(r, frame, &sp.key, "malformed %s: pad count beyond the packet",
			          part_name(sp.part));
		if (f)
			flow_abandon(r, idx, sp.part);
		return 0;
	}

	if (sp.part == PART_FIRST || sp.part == PART_ONLY) {
		if (f && f->active)
			emit_lost(r, frame, &sp.key,
			          "partial Send discarded: %s before SEND LAST (PSN 0x%06lx)",
			          part_name(sp.part), (unsigned long)sp.psn);
		if (sp.part == PART_ONLY) {
			if (f)
				flow_remove(r, idx);
			emit_send(r, frame, sp.payload, sp.len, sp.truncated);
			return 0;
		}
		if (sp.truncated) {
			emit_lost(r, frame, &sp.key,
			          "Send discarded: SEND FIRST truncated by the capture");
			/* Keep a flow, so its MIDDLEs and LAST are skipped quietly. */
			if (f)
				flow_reset(r, f);
			else if (!flow_add(r, &sp.key, frame))
				return -ENOMEM;
			return 0;
		}
		if (f) {
			flow_reset(r, f);
		} else {
			f = flow_add(r, &sp.key, frame);
			if (!f) {
				emit_lost(r, frame, &sp.key, "Send discarded: out of memory");
				return -ENOMEM;
			}
			flow_find(r, &sp.key, &idx);
		}
		rc = flow_append(r, f, sp.payload, sp.len, &why);
		if (rc) {
			emit_lost(r, frame, &sp.key, "Send discarded: %s", why);
			flow_reset(r, f);
			return rc == -ENOMEM ? rc : 0;
		}
		f->active = true;
		f->next_psn = (sp.psn + 1) & PSN_MASK;
		return 0;
	}

	/* MIDDLE or LAST. */
	if (!f) {
		emit_lost(r, frame, &sp.key, "%s without SEND FIRST (PSN 0x%06lx)",
		          part_name(sp.part), (unsigned long)sp.psn);
		/* Remember to skip the rest of this message quietly. */
		if (sp.part == PART_MIDDLE && !flow_add(r, &sp.key, frame))
			return -ENOMEM;
		return 0;
	}
	if (!f->active) {
		if (sp.part == PART_LAST)
			flow_remove(r, idx);
		return 0;
	}
	if (sp.psn != f->next_psn) {
		emit_lost(r, frame, &sp.key,
		          "partial Send discarded: PSN gap, expected 0x%06lx, got 0x%06lx",
		          (unsigned long)f->next_psn, (unsigned long)sp.psn);
		flow_abandon(r, idx, sp.part);
		return 0;
	}
	if (sp.truncated) {
		emit_lost(r, frame, &sp.key, "partial Send discarded: %s truncated by the capture",
		          part_name(sp.part));
		flow_abandon(r, idx, sp.part);
		return 0;
	}
	rc = flow_append(r, f, sp.payload, sp.len, &why);
	if (rc) {
		emit_lost(r, frame, &sp.key, "partial Send discarded: %s", why);
		flow_abandon(r, idx, sp.part);
		return rc == -ENOMEM ? rc : 0;
	}
	f->next_psn = (sp.psn + 1) & PSN_MASK;
	if (sp.part == PART_LAST) {
		emit_send(r, frame, f->buf, f->len, false);
		flow_remove(r, idx);
	}
	return 0;
}

static int by_last_frame(const void *a, const void *b)
{
	const struct roce_flow *fa = *(struct roce_flow *const *)a;
	const struct roce_flow *fb = *(struct roce_flow *const *)b;

	return (fa->last_frame > fb->last_frame) - (fa->last_frame < fb->last_frame);
}

void roce_finish(struct roce_reasm *r)
{
	/* Report in capture order, as everything else is. */
	qsort(r->flows, r->nflows, sizeof(r->flows[0]), by_last_frame);
	for (unsigned int i = 0; i < r->nflows; i++) {
		if (r->flows[i]->active)
			emit_lost(r, r->flows[i]->last_frame, &r->flows[i]->key,
			          "partial Send discarded: the capture ends before SEND LAST");
	}
	while (r->nflows)
		flow_remove(r, r->nflows - 1);
}
