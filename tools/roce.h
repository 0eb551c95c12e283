/*
 * rpcrdma-dump: RoCEv2 frame parsing and reassembly of RC Sends.
 *
 * Feed every captured frame to roce_input(); each complete Send (one
 * SEND ONLY, or SEND FIRST .. MIDDLE .. LAST with consecutive PSNs) comes
 * back through the emit callback, as does every partial Send the reassembler
 * had to throw away, so the user sees that a message was lost.  Nothing here
 * knows about libpcap or RPC-over-RDMA.
 */
#ifndef RPCRDMA_TOOLS_ROCE_H
#define RPCRDMA_TOOLS_ROCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The UDP destination port of RoCEv2 (IANA). */
#define ROCE_UDP_PORT 4791u
/** Largest Send reassembled; anything longer is reported and dropped. */
#define ROCE_MAX_SEND (16u << 20)
/** Bytes held by all partial Sends together. */
#define ROCE_MAX_BUFFERED (256u << 20)
/** Flows (IP pair and destination QP) with a multi-packet Send in progress. */
#define ROCE_MAX_FLOWS 1024u

/** How a frame starts; the caller maps its capture format's link type. */
enum roce_link {
	ROCE_LINK_ETHERNET, /* Ethernet II, optionally VLAN / QinQ tagged */
	ROCE_LINK_SLL,      /* Linux cooked capture v1 */
	ROCE_LINK_SLL2,     /* Linux cooked capture v2 */
	ROCE_LINK_RAW,      /* a bare IPv4 or IPv6 packet */
};

/** What the reassembler reports. */
struct roce_send {
	uint64_t frame;      /* frame that completed the Send, or where it was lost */
	bool lost;           /* a partial Send was discarded: no data, see problem */
	bool truncated;      /* the capture's snap length cut this Send short */
	const uint8_t *data; /* the Send's bytes; valid during the callback only */
	size_t len;
	const char *problem; /* for @lost: why, naming the QP */
};

typedef void roce_emit_fn(void *ctx, const struct roce_send *send);

struct roce_flow;

struct roce_reasm {
	enum roce_link link;
	roce_emit_fn *emit;
	void *ctx;
	struct roce_flow *flows[ROCE_MAX_FLOWS];
	unsigned int nflows;
	size_t buffered; /* bytes in every flow's buffer */
	char problem[160];
};

void roce_init(struct roce_reasm *r, enum roce_link link, roce_emit_fn *emit, void *ctx);

/**
 * roce_input - take one captured frame
 * @frame: its number, 1-based, for the reports
 * @pkt, @caplen: the bytes the capture holds (possibly fewer than were sent)
 *
 * Frames that are not RoCEv2 RC Sends are ignored.  Returns 0, or -ENOMEM
 * when a buffer could not be allocated (the partial Send is then reported
 * lost and the caller may go on).
 */
int roce_input(struct roce_reasm *r, uint64_t frame, const uint8_t *pkt, size_t caplen);

/** Report the Sends still incomplete at the end of the capture, free all. */
void roce_finish(struct roce_reasm *r);

#endif /* RPCRDMA_TOOLS_ROCE_H */
