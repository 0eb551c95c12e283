/*
 * gen_roce_pcap: RPC-over-RDMA messages made by librpcrdma's own encoders,
 * framed as RoCEv2 and written to a classic pcap file, with a JSON manifest
 * of what every message says.  check_tshark.py holds Wireshark's independent
 * dissector against the manifest, so a mistake shared by our encoder and our
 * decoder (which a round trip alone cannot see) still shows up.
 *
 * Usage: gen_roce_pcap OUT.pcap OUT.json [SEED [NRANDOM]]
 *
 * The capture holds a fixed set of shapes (each chunk list alone and
 * combined, RDMA_NOMSG both ways, both RDMA_ERROR forms, extreme xids,
 * credits, handles, lengths and offsets, messages spread over several
 * SENDs) and NRANDOM seeded random ones.  Every header is decoded again with
 * rpcrdma_hdr_decode() and the program aborts on any difference.
 *
 * Framing: Ethernet, IPv4, UDP to port 4791, an InfiniBand BTH (RC SEND,
 * one QP per direction, PSNs counting up) and a zero ICRC, which Wireshark
 * shows but does not check.  Messages longer than the 1024-byte path MTU go
 * as SEND_FIRST/MIDDLE/LAST so that Wireshark's reassembly is exercised.
 *
 * Only Version One is generated: Wireshark 4.0 dissects nothing else.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/header.h"
#include "rpcrdma/rpc_msg.h"
#include "rpcrdma/xdr.h"

#define ROCE_UDP_PORT 4791
#define PMTU 1024
#define ETH_HLEN 14
#define IP_HLEN 20
#define UDP_HLEN 8
#define BTH_LEN 12
#define ICRC_LEN 4
#define FRAME_MAX (ETH_HLEN + IP_HLEN + UDP_HLEN + BTH_LEN + PMTU + 3 + ICRC_LEN)
#define BODY_MAX 8192
#define MAX_PACKETS 64

enum ib_opcode {
	RC_SEND_FIRST = 0x00,
	RC_SEND_MIDDLE = 0x01,
	RC_SEND_LAST = 0x02,
	RC_SEND_ONLY = 0x04,
};

#define NFS_PROG 100003u
#define NFS_V3 3u
#define NFSPROC3_NULL 0u
#define NFSPROC3_GETATTR 1u
#define NFSPROC3_READ 6u
#define NFSPROC3_WRITE 7u
#define NFSPROC3_READDIR 16u
#define NFS3_FHSIZE 64u
/* RFC 5531 section 8.3 leaves 0x20000000-0x3fffffff to users: a made-up
 * program whose arguments hold several opaques, one per Read chunk. */
#define TEST_PROG 0x20000777u

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("gen_roce_pcap: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* splitmix64: the same seed gives the same capture on every platform. */
static uint64_t rng_state;

static uint64_t rnd64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd32(void)
{
	return (uint32_t)(rnd64() >> 32);
}

/* Inclusive range. */
static uint32_t rnd_range(uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(rnd64() % ((uint64_t)hi - lo + 1));
}

static bool chance(uint32_t percent)
{
	return rnd_range(0, 99) < percent;
}

struct endpoint {
	uint8_t mac[6];
	uint8_t ip[4];
	uint16_t port; /* UDP source port: RoCEv2 uses it only for entropy */
	uint32_t qpn;  /* this end's QP, the destination of what the peer sends */
	uint32_t psn;  /* next PSN this end sends */
};

/* Addresses from RFC 5737 TEST-NET-1.  The two PSN spaces are far apart:
 * Wireshark finds a multi-SEND message's first packet by PSN alone. */
static struct endpoint client = {
    {0x02, 0x00, 0x00, 0x00, 0x00, 0x01}, {192, 0, 2, 1}, 0xc001, 0x000011, 0x000100};
static struct endpoint server = {
    {0x02, 0x00, 0x00, 0x00, 0x00, 0x02}, {192, 0, 2, 2}, 0xc002, 0x000022, 0x400000};

struct packet {
	uint32_t frame;
	uint8_t opcode;
	uint32_t psn;
	uint32_t qpn;
	uint32_t len; /* RPC-over-RDMA bytes in this packet */
};

static struct {
	FILE *pcap;
	FILE *json;
	uint32_t frames;
	uint32_t msgs;
	uint64_t usec;
	uint16_t ip_id;
	uint32_t handle_ctr;
	uint32_t *handles;
	size_t nhandles;
	size_t handles_cap;
} out;

/* The RPC message behind an RDMA_MSG, for the fields Wireshark's RPC
 * dissector should report. */
struct rpc_expect {
	bool present;
	uint32_t xid;
	uint32_t type;
	/* RPCRDMA_RPC_CALL */
	struct rpcrdma_rpc_call call;
	bool auth_sys;
	struct rpcrdma_auth_sys sys;
	/* RPCRDMA_RPC_REPLY */
	struct rpcrdma_rpc_reply reply;
};

static void put16(uint8_t *p, uint16_t v)
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

static void put_le16(FILE *f, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};

	fwrite(b, 1, sizeof(b), f);
}

static void put_le32(FILE *f, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};

	fwrite(b, 1, sizeof(b), f);
}

static void pcap_begin(FILE *f)
{
	put_le32(f, 0xa1b2c3d4); /* microsecond timestamps */
	put_le16(f, 2);
	put_le16(f, 4);
	put_le32(f, 0);     /* thiszone */
	put_le32(f, 0);     /* sigfigs */
	put_le32(f, 65535); /* snaplen */
	put_le32(f, 1);     /* LINKTYPE_ETHERNET */
}

static uint16_t ip_checksum(const uint8_t *p, size_t n)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void write_frame(struct endpoint *src, const struct endpoint *dst, uint8_t opcode,
                        const uint8_t *data, size_t len, struct packet *pkt)
{
	uint8_t f[FRAME_MAX];
	size_t pad = (RPCRDMA_XDR_UNIT - len % RPCRDMA_XDR_UNIT) % RPCRDMA_XDR_UNIT;
	size_t udp_len = UDP_HLEN + BTH_LEN + len + pad + ICRC_LEN;
	size_t ip_len = IP_HLEN + udp_len;
	size_t total = ETH_HLEN + ip_len;
	bool last = opcode == RC_SEND_LAST || opcode == RC_SEND_ONLY;
	uint8_t *ip = f + ETH_HLEN;
	uint8_t *udp = ip + IP_HLEN;
	uint8_t *bth = udp + UDP_HLEN;

	if (len > PMTU)
		die("internal: packet of %zu bytes exceeds the PMTU", len);
	memset(f, 0, total);
	memcpy(f, dst->mac, 6);
	memcpy(f + 6, src->mac, 6);
	put16(f + 12, 0x0800);

	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)ip_len);
	put16(ip + 4, out.ip_id++);
	put16(ip + 6, 0x4000); /* DF: RoCE never fragments */
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, src->ip, 4);
	memcpy(ip + 16, dst->ip, 4);
	put16(ip + 10, ip_checksum(ip, IP_HLEN));

	put16(udp, src->port);
	put16(udp + 2, ROCE_UDP_PORT);
	put16(udp + 4, (uint16_t)udp_len);
	/* UDP checksum 0: RoCEv2 leaves it unused over IPv4. */

	bth[0] = opcode;
	bth[1] = (uint8_t)(0x40 | pad << 4); /* MigReq set, pad count, TVer 0 */
	put16(bth + 2, 0xffff);              /* default P_Key */
	put24(bth + 5, dst->qpn);
	bth[8] = last ? 0x80 : 0; /* AckReq on a message's last packet */
	put24(bth + 9, src->psn);
	memcpy(bth + BTH_LEN, data, len);
	/* Padding and ICRC stay zero. */

	pkt->frame = ++out.frames;
	pkt->opcode = opcode;
	pkt->psn = src->psn;
	pkt->qpn = dst->qpn;
	pkt->len = (uint32_t)len;
	src->psn = (src->psn + 1) & 0xffffff;

	out.usec += 137;
	put_le32(out.pcap, (uint32_t)(1700000000u + out.usec / 1000000));
	put_le32(out.pcap, (uint32_t)(out.usec % 1000000));
	put_le32(out.pcap, (uint32_t)total);
	put_le32(out.pcap, (uint32_t)total);
	fwrite(f, 1, total, out.pcap);
}

/* Handles are never reused: Wireshark files chunk segments by handle per
 * connection, and a repeated handle makes it treat a message as the answer
 * to an earlier one and try to reassemble data that is not in the capture. */
static bool handle_used(uint32_t h)
{
	for (size_t i = 0; i < out.nhandles; i++) {
		if (out.handles[i] == h)
			return true;
	}
	return false;
}

static uint32_t claim_handle(uint32_t h)
{
	if (handle_used(h))
		die("internal: handle 0x%08" PRIx32 " used twice", h);
	if (out.nhandles == out.handles_cap) {
		out.handles_cap = out.handles_cap ? 2 * out.handles_cap : 256;
		out.handles = realloc(out.handles, out.handles_cap * sizeof(*out.handles));
		if (!out.handles)
			die("out of memory");
	}
	out.handles[out.nhandles++] = h;
	return h;
}

static uint32_t new_handle(void)
{
	uint32_t h;

	/* An odd multiplier permutes 32-bit values: spread-out, all bits used. */
	do
		h = ++out.handle_ctr * 0x9e3779b1u ^ 0xa5a5a5a5u;
	while (handle_used(h));
	return claim_handle(h);
}

/* Offsets as registrations really look (page-aligned virtual addresses) and
 * as the wire allows (any 64-bit value the length does not overflow). */
static uint64_t rnd_offset(uint32_t len)
{
	uint64_t o;

	switch (rnd_range(0, 2)) {
	case 0:
		o = rnd64() & 0x00007ffffffff000ull;
		break;
	case 1:
		o = rnd64() & 0xffffull;
		break;
	default:
		o = rnd64();
		break;
	}
	if (o > UINT64_MAX - len)
		o -= len;
	return o;
}

static uint32_t rnd_seg_length(void)
{
	switch (rnd_range(0, 3)) {
	case 0:
		return rnd32();
	case 1:
		return rnd_range(1, 4096);
	default:
		return 4096u * rnd_range(1, 256);
	}
}

static void rnd_segments(struct rpcrdma_segment *segs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		segs[i].handle = new_handle();
		segs[i].length = rnd_seg_length();
		segs[i].offset = rnd_offset(segs[i].length);
	}
}

static void add_write(struct rpcrdma_hdr *hdr, const struct rpcrdma_segment *segs, uint32_t n)
{
	int rc = rpcrdma_hdr_add_write(hdr, segs, n);

	if (rc)
		die("rpcrdma_hdr_add_write: %s", rpcrdma_strerror(rc));
}

static void set_reply(struct rpcrdma_hdr *hdr, const struct rpcrdma_segment *segs, uint32_t n)
{
	int rc = rpcrdma_hdr_set_reply(hdr, segs, n);

	if (rc)
		die("rpcrdma_hdr_set_reply: %s", rpcrdma_strerror(rc));
}

static void add_read(struct rpcrdma_hdr *hdr, uint32_t position, const struct rpcrdma_segment *seg)
{
	int rc = rpcrdma_hdr_add_read(hdr, position, seg);

	if (rc)
		die("rpcrdma_hdr_add_read: %s", rpcrdma_strerror(rc));
}

static void add_rnd_write(struct rpcrdma_hdr *hdr, uint32_t n)
{
	struct rpcrdma_segment segs[RPCRDMA_HDR_MAX_SEGS];

	rnd_segments(segs, n);
	add_write(hdr, segs, n);
}

static void set_rnd_reply(struct rpcrdma_hdr *hdr, uint32_t n)
{
	struct rpcrdma_segment segs[RPCRDMA_HDR_MAX_SEGS];

	rnd_segments(segs, n);
	set_reply(hdr, segs, n);
}

/*
 * An RPC message under construction.  Bytes moved into Read chunks are not
 * in buf; moved counts them, so that the XDR position of the next item (what
 * a Read chunk's position is measured in) is the inline length plus moved.
 */
struct body {
	uint8_t buf[BODY_MAX];
	struct rpcrdma_xdr_stream xdr;
	size_t moved;
	struct rpc_expect rpc;
};

static void body_init(struct body *b)
{
	memset(b, 0, sizeof(*b));
	rpcrdma_xdr_init(&b->xdr, b->buf, sizeof(b->buf));
}

static size_t body_len(const struct body *b)
{
	return rpcrdma_xdr_pos(&b->xdr);
}

static void check_xdr(int rc, const char *what)
{
	if (rc)
		die("encoding %s: %s", what, rpcrdma_strerror(rc));
}

static void xu32(struct body *b, uint32_t v)
{
	check_xdr(rpcrdma_xdr_encode_u32(&b->xdr, v), "u32");
}

static void xu64(struct body *b, uint64_t v)
{
	check_xdr(rpcrdma_xdr_encode_u64(&b->xdr, v), "u64");
}

static void xrnd_opaque(struct body *b, uint32_t len)
{
	uint8_t data[BODY_MAX];

	if (len > sizeof(data))
		die("internal: opaque of %" PRIu32 " bytes", len);
	for (uint32_t i = 0; i < len; i++)
		data[i] = (uint8_t)rnd32();
	check_xdr(rpcrdma_xdr_encode_opaque(&b->xdr, data, len), "opaque");
}

static void rpc_call(struct body *b, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc)
{
	struct rpc_expect *e = &b->rpc;
	int rc;

	memset(e, 0, sizeof(*e));
	e->present = true;
	e->xid = xid;
	e->type = RPCRDMA_RPC_CALL;
	e->call.rpcvers = RPCRDMA_RPC_VERSION;
	e->call.prog = prog;
	e->call.vers = vers;
	e->call.proc = proc;
	if (chance(50)) {
		struct rpcrdma_auth_sys *sys = &e->sys;

		e->auth_sys = true;
		sys->stamp = rnd32();
		snprintf(sys->machinename, sizeof(sys->machinename), "client-%" PRIu32,
		         rnd_range(0, 99999));
		sys->uid = rnd_range(0, 65535);
		sys->gid = rnd_range(0, 65535);
		sys->ngids = rnd_range(0, RPCRDMA_AUTH_SYS_NGIDS_MAX);
		for (uint32_t i = 0; i < sys->ngids; i++)
			sys->gids[i] = rnd_range(0, 65535);
		rc = rpcrdma_auth_sys_encode(sys, &e->call.cred);
		if (rc)
			die("rpcrdma_auth_sys_encode: %s", rpcrdma_strerror(rc));
	} else {
		rpcrdma_auth_none(&e->call.cred);
	}
	rpcrdma_auth_none(&e->call.verf);
	check_xdr(rpcrdma_rpc_encode_call(&b->xdr, xid, &e->call), "RPC call");
}

static void rpc_reply(struct body *b, uint32_t xid, const struct rpcrdma_rpc_reply *reply)
{
	struct rpc_expect *e = &b->rpc;

	memset(e, 0, sizeof(*e));
	e->present = true;
	e->xid = xid;
	e->type = RPCRDMA_RPC_REPLY;
	e->reply = *reply;
	check_xdr(rpcrdma_rpc_encode_reply(&b->xdr, xid, reply), "RPC reply");
}

static void rpc_reply_success(struct body *b, uint32_t xid)
{
	struct rpcrdma_rpc_reply reply;

	memset(&reply, 0, sizeof(reply));
	reply.stat = RPCRDMA_RPC_MSG_ACCEPTED;
	reply.accept_stat = RPCRDMA_RPC_SUCCESS;
	rpcrdma_auth_none(&reply.verf);
	rpc_reply(b, xid, &reply);
}

/* Every reply form other than SUCCESS; @form picks one. */
static void rpc_reply_failure(struct body *b, uint32_t xid, uint32_t form)
{
	static const uint32_t auth_stats[] = {
	    RPCRDMA_AUTH_BADCRED,      RPCRDMA_AUTH_REJECTEDCRED, RPCRDMA_AUTH_BADVERF,
	    RPCRDMA_AUTH_REJECTEDVERF, RPCRDMA_AUTH_TOOWEAK,      RPCRDMA_AUTH_INVALIDRESP,
	    RPCRDMA_AUTH_FAILED,
	};
	struct rpcrdma_rpc_reply reply;

	memset(&reply, 0, sizeof(reply));
	rpcrdma_auth_none(&reply.verf);
	switch (form % 7) {
	case 0:
		reply.stat = RPCRDMA_RPC_MSG_ACCEPTED;
		reply.accept_stat = RPCRDMA_RPC_PROG_UNAVAIL;
		break;
	case 1:
		reply.stat = RPCRDMA_RPC_MSG_ACCEPTED;
		reply.accept_stat = RPCRDMA_RPC_PROG_MISMATCH;
		reply.mismatch_low = rnd_range(2, 3);
		reply.mismatch_high = reply.mismatch_low + rnd_range(0, 2);
		break;
	case 2:
		reply.stat = RPCRDMA_RPC_MSG_ACCEPTED;
		reply.accept_stat = RPCRDMA_RPC_PROC_UNAVAIL;
		break;
	case 3:
		reply.stat = RPCRDMA_RPC_MSG_ACCEPTED;
		reply.accept_stat = RPCRDMA_RPC_GARBAGE_ARGS;
		break;
	case 4:
		reply.stat = RPCRDMA_RPC_MSG_ACCEPTED;
		reply.accept_stat = RPCRDMA_RPC_SYSTEM_ERR;
		break;
	case 5:
		reply.stat = RPCRDMA_RPC_MSG_DENIED;
		reply.reject_stat = RPCRDMA_RPC_MISMATCH;
		reply.mismatch_low = 2;
		reply.mismatch_high = 2;
		break;
	default:
		reply.stat = RPCRDMA_RPC_MSG_DENIED;
		reply.reject_stat = RPCRDMA_RPC_AUTH_ERROR;
		reply.auth_stat = auth_stats[rnd_range(0, 6)];
		break;
	}
	rpc_reply(b, xid, &reply);
}

static void nfs_fh(struct body *b)
{
	xrnd_opaque(b, rnd_range(1, NFS3_FHSIZE));
}

static void nfs_fattr3(struct body *b)
{
	xu32(b, 1);    /* NF3REG */
	xu32(b, 0644); /* mode */
	xu32(b, 1);    /* nlink */
	xu32(b, rnd_range(0, 65535));
	xu32(b, rnd_range(0, 65535));
	xu64(b, rnd32()); /* size */
	xu64(b, rnd32()); /* used */
	xu32(b, 0);       /* rdev */
	xu32(b, 0);
	xu64(b, rnd64()); /* fsid */
	xu64(b, rnd64()); /* fileid */
	for (int i = 0; i < 3; i++) {
		xu32(b, rnd32());
		xu32(b, rnd_range(0, 999999999));
	}
}

/*
 * An opaque whose bytes travel in a Read chunk of @nsegs segments: only the
 * length word stays inline, and the chunk's position is where the bytes
 * would have been.  @len is a multiple of four so that no XDR padding is
 * left for the reader to account for.
 */
static void read_chunk_opaque(struct body *b, struct rpcrdma_hdr *hdr, uint32_t len, uint32_t nsegs)
{
	uint32_t pos, left = len;

	if (len % RPCRDMA_XDR_UNIT || len < RPCRDMA_XDR_UNIT * nsegs)
		die("internal: read chunk of %" PRIu32 " bytes in %" PRIu32 " segments", len,
		    nsegs);
	xu32(b, len);
	pos = (uint32_t)(body_len(b) + b->moved);
	for (uint32_t i = 0; i < nsegs; i++) {
		struct rpcrdma_segment seg;
		uint32_t rest = nsegs - 1 - i;

		seg.length =
		    rest ? RPCRDMA_XDR_UNIT * rnd_range(1, left / RPCRDMA_XDR_UNIT - rest) : left;
		left -= seg.length;
		seg.handle = new_handle();
		seg.offset = rnd_offset(seg.length);
		add_read(hdr, pos, &seg);
	}
	b->moved += len;
}

/* A Position-Zero Read chunk carrying a whole message of @len bytes. */
static void pzrc(struct rpcrdma_hdr *hdr, uint32_t len, uint32_t nsegs)
{
	uint32_t left = len;

	for (uint32_t i = 0; i < nsegs; i++) {
		struct rpcrdma_segment seg;
		uint32_t rest = nsegs - 1 - i;

		seg.length =
		    rest ? RPCRDMA_XDR_UNIT * rnd_range(1, left / RPCRDMA_XDR_UNIT - rest) : left;
		left -= seg.length;
		seg.handle = new_handle();
		seg.offset = rnd_offset(seg.length);
		add_read(hdr, 0, &seg);
	}
}

/* NFSv3 calls whose arguments are all inline. */
static void nfs_call_null(struct body *b, uint32_t xid)
{
	rpc_call(b, xid, NFS_PROG, NFS_V3, NFSPROC3_NULL);
}

static void nfs_call_getattr(struct body *b, uint32_t xid)
{
	rpc_call(b, xid, NFS_PROG, NFS_V3, NFSPROC3_GETATTR);
	nfs_fh(b);
}

static void nfs_call_read(struct body *b, uint32_t xid)
{
	rpc_call(b, xid, NFS_PROG, NFS_V3, NFSPROC3_READ);
	nfs_fh(b);
	xu64(b, 4096ull * rnd32());
	xu32(b, 4096u * rnd_range(1, 256));
}

static void nfs_call_readdir(struct body *b, uint32_t xid)
{
	rpc_call(b, xid, NFS_PROG, NFS_V3, NFSPROC3_READDIR);
	nfs_fh(b);
	xu64(b, 0);     /* cookie */
	xu64(b, 0);     /* cookieverf */
	xu32(b, 65536); /* count */
}

static void nfs_call_write_inline(struct body *b, uint32_t xid, uint32_t len)
{
	rpc_call(b, xid, NFS_PROG, NFS_V3, NFSPROC3_WRITE);
	nfs_fh(b);
	xu64(b, 4096ull * rnd32());
	xu32(b, len);
	xu32(b, rnd_range(0, 2)); /* stable_how */
	xrnd_opaque(b, len);
}

/* NFSv3 WRITE whose data goes in one Read chunk, as clients send large
 * writes. */
static void nfs_call_write_chunked(struct body *b, struct rpcrdma_hdr *hdr, uint32_t xid,
                                   uint32_t len, uint32_t nsegs)
{
	rpc_call(b, xid, NFS_PROG, NFS_V3, NFSPROC3_WRITE);
	nfs_fh(b);
	xu64(b, 4096ull * rnd32());
	xu32(b, len);
	xu32(b, 2); /* FILE_SYNC */
	read_chunk_opaque(b, hdr, len, nsegs);
}

/* A TEST_PROG call of @nchunks opaques, opaque i in a Read chunk of
 * nsegs[i] segments, with an inline word after each so that no two chunks
 * share a position. */
static void test_call_chunked(struct body *b, struct rpcrdma_hdr *hdr, uint32_t xid,
                              const uint32_t *nsegs, uint32_t nchunks)
{
	rpc_call(b, xid, TEST_PROG, 1, 1);
	xu32(b, nchunks);
	for (uint32_t i = 0; i < nchunks; i++) {
		uint32_t len = RPCRDMA_XDR_UNIT * rnd_range(nsegs[i], 4096);

		read_chunk_opaque(b, hdr, len, nsegs[i]);
		xu32(b, rnd32()); /* a tag after every opaque */
	}
}

static void nfs_reply_null(struct body *b, uint32_t xid)
{
	rpc_reply_success(b, xid);
}

static void nfs_reply_getattr(struct body *b, uint32_t xid)
{
	rpc_reply_success(b, xid);
	xu32(b, 0); /* NFS3_OK */
	nfs_fattr3(b);
}

/* Round trip: what our decoder reads back must be what was encoded. */
static void check_same(const char *label, const struct rpcrdma_hdr *want,
                       const struct rpcrdma_hdr *got)
{
	if (got->xid != want->xid || got->vers != want->vers || got->credit != want->credit ||
	    got->proc != want->proc)
		die("%s: round trip changed the fixed words", label);
	if (want->proc == RPCRDMA_PROC_ERROR) {
		if (got->err != want->err)
			die("%s: round trip changed the error code", label);
		if (want->err == RPCRDMA_ERR_VERS &&
		    (got->vers_low != want->vers_low || got->vers_high != want->vers_high))
			die("%s: round trip changed the version range", label);
		return;
	}
	if (want->proc == RPCRDMA_PROC_MSGP &&
	    (got->align != want->align || got->thresh != want->thresh))
		die("%s: round trip changed align/thresh", label);
	if (want->proc != RPCRDMA_PROC_MSG && want->proc != RPCRDMA_PROC_NOMSG &&
	    want->proc != RPCRDMA_PROC_MSGP)
		return;
	if (got->nreads != want->nreads)
		die("%s: round trip changed the Read list length", label);
	for (uint32_t i = 0; i < want->nreads; i++) {
		const struct rpcrdma_read_segment *a = &want->reads[i], *b = &got->reads[i];

		if (a->position != b->position || a->target.handle != b->target.handle ||
		    a->target.length != b->target.length || a->target.offset != b->target.offset)
			die("%s: round trip changed read segment %" PRIu32, label, i);
	}
	if (got->nwrites != want->nwrites || got->has_reply != want->has_reply)
		die("%s: round trip changed the Write list or Reply chunk presence", label);
	for (uint32_t c = 0; c <= want->nwrites; c++) {
		const struct rpcrdma_chunk *ca, *cb;

		if (c == want->nwrites) {
			if (!want->has_reply)
				break;
			ca = &want->reply;
			cb = &got->reply;
		} else {
			ca = &want->writes[c];
			cb = &got->writes[c];
		}
		if (ca->nsegs != cb->nsegs)
			die("%s: round trip changed the segment count of chunk %" PRIu32, label, c);
		for (uint32_t i = 0; i < ca->nsegs; i++) {
			const struct rpcrdma_segment *a = rpcrdma_hdr_chunk_seg(want, ca, i);
			const struct rpcrdma_segment *b = rpcrdma_hdr_chunk_seg(got, cb, i);

			if (!a || !b || a->handle != b->handle || a->length != b->length ||
			    a->offset != b->offset)
				die("%s: round trip changed segment %" PRIu32 " of chunk %" PRIu32,
				    label, i, c);
		}
	}
}

/* The RPC header behind the transport header must read back as sent. */
static void check_rpc_same(const char *label, const struct body *b)
{
	const struct rpc_expect *e = &b->rpc;
	struct rpcrdma_xdr_stream xdr;
	struct rpcrdma_rpc_msg msg;
	int rc;

	rpcrdma_xdr_init_const(&xdr, b->buf, body_len(b));
	rc = rpcrdma_rpc_decode_msg(&xdr, &msg);
	if (rc)
		die("%s: rpcrdma_rpc_decode_msg refused our own message: %s", label,
		    rpcrdma_strerror(rc));
	if (msg.xid != e->xid || msg.type != e->type)
		die("%s: RPC round trip changed the xid or message type", label);
	if (e->type == RPCRDMA_RPC_CALL) {
		const struct rpcrdma_rpc_call *a = &e->call, *c = &msg.u.call;

		if (c->rpcvers != RPCRDMA_RPC_VERSION || c->prog != a->prog || c->vers != a->vers ||
		    c->proc != a->proc || c->cred.flavor != a->cred.flavor ||
		    c->cred.len != a->cred.len || memcmp(c->cred.body, a->cred.body, a->cred.len) ||
		    c->verf.flavor != a->verf.flavor || c->verf.len != a->verf.len)
			die("%s: RPC round trip changed the call header", label);
	} else {
		const struct rpcrdma_rpc_reply *a = &e->reply, *r = &msg.u.reply;

		if (r->stat != a->stat || r->accept_stat != a->accept_stat ||
		    r->reject_stat != a->reject_stat || r->auth_stat != a->auth_stat ||
		    r->mismatch_low != a->mismatch_low || r->mismatch_high != a->mismatch_high)
			die("%s: RPC round trip changed the reply header", label);
	}
}

static void json_segment(const struct rpcrdma_segment *s)
{
	fprintf(out.json,
	        "{\"handle\": %" PRIu32 ", \"length\": %" PRIu32 ", \"offset\": %" PRIu64 "}",
	        s->handle, s->length, s->offset);
}

static void json_chunk(const struct rpcrdma_hdr *hdr, const struct rpcrdma_chunk *c)
{
	fputc('[', out.json);
	for (uint32_t i = 0; i < c->nsegs; i++) {
		if (i)
			fputs(", ", out.json);
		json_segment(rpcrdma_hdr_chunk_seg(hdr, c, i));
	}
	fputc(']', out.json);
}

static void json_u32s(const char *field, const uint32_t *v, uint32_t n, bool *first)
{
	fprintf(out.json, "%s\"%s\": [", *first ? "" : ", ", field);
	for (uint32_t i = 0; i < n; i++)
		fprintf(out.json, "%s%" PRIu32, i ? ", " : "", v[i]);
	fputc(']', out.json);
	*first = false;
}

static void json_u32(const char *field, uint32_t v, bool *first)
{
	json_u32s(field, &v, 1, first);
}

/*
 * The RPC fields, as tshark names them: "exact" lists every occurrence in
 * order; "every" gives the one value of a field that tshark may repeat (the
 * NFS dissector shows the program version and procedure again).
 */
static void json_rpc(const struct rpc_expect *rpc)
{
	FILE *j = out.json;
	bool first = true;

	if (!rpc->present) {
		fputs("null", j);
		return;
	}
	fputs("{\"exact\": {", j);
	json_u32("rpc.xid", rpc->xid, &first);
	json_u32("rpc.msgtyp", rpc->type, &first);
	if (rpc->type == RPCRDMA_RPC_CALL) {
		const struct rpcrdma_rpc_call *c = &rpc->call;
		uint32_t flavors[2] = {c->cred.flavor, c->verf.flavor};
		uint32_t lens[2] = {c->cred.len, c->verf.len};

		json_u32("rpc.version", c->rpcvers, &first);
		json_u32("rpc.program", c->prog, &first);
		json_u32s("rpc.auth.flavor", flavors, 2, &first);
		json_u32s("rpc.auth.length", lens, 2, &first);
		if (rpc->auth_sys) {
			uint32_t gids[1 + RPCRDMA_AUTH_SYS_NGIDS_MAX];

			gids[0] = rpc->sys.gid;
			memcpy(gids + 1, rpc->sys.gids, rpc->sys.ngids * sizeof(gids[0]));
			json_u32("rpc.auth.stamp", rpc->sys.stamp, &first);
			json_u32("rpc.auth.uid", rpc->sys.uid, &first);
			json_u32s("rpc.auth.gid", gids, 1 + rpc->sys.ngids, &first);
		}
		fprintf(j,
		        "}, \"every\": {\"rpc.programversion\": %" PRIu32
		        ", \"rpc.procedure\": %" PRIu32 "}",
		        c->vers, c->proc);
		fputs(", \"strings\": {", j);
		if (rpc->auth_sys)
			fprintf(j, "\"rpc.auth.machinename\": [\"%s\"]", rpc->sys.machinename);
		fputs("}}", j);
		return;
	}
	json_u32("rpc.replystat", rpc->reply.stat, &first);
	if (rpc->reply.stat == RPCRDMA_RPC_MSG_ACCEPTED) {
		json_u32("rpc.auth.flavor", rpc->reply.verf.flavor, &first);
		json_u32("rpc.auth.length", rpc->reply.verf.len, &first);
		json_u32("rpc.state_accept", rpc->reply.accept_stat, &first);
		if (rpc->reply.accept_stat == RPCRDMA_RPC_PROG_MISMATCH) {
			json_u32("rpc.programversion.min", rpc->reply.mismatch_low, &first);
			json_u32("rpc.programversion.max", rpc->reply.mismatch_high, &first);
		}
	} else {
		json_u32("rpc.state_reject", rpc->reply.reject_stat, &first);
		if (rpc->reply.reject_stat == RPCRDMA_RPC_MISMATCH) {
			json_u32("rpc.version.min", rpc->reply.mismatch_low, &first);
			json_u32("rpc.version.max", rpc->reply.mismatch_high, &first);
		} else {
			json_u32("rpc.state_auth", rpc->reply.auth_stat, &first);
		}
	}
	fputs("}, \"every\": {}, \"strings\": {}}", j);
}

static void json_message(const char *label, const struct rpcrdma_hdr *hdr, const uint8_t *wire,
                         size_t hdr_len, size_t total, const struct packet *pkts, unsigned npkts,
                         const struct rpc_expect *rpc)
{
	FILE *j = out.json;

	fprintf(j, "%s\n  {\"label\": \"%s\", \"frame\": %" PRIu32 ", \"length\": %zu,",
	        out.msgs ? "," : "", label, pkts[npkts - 1].frame, total);
	fputs("\n   \"packets\": [", j);
	for (unsigned i = 0; i < npkts; i++)
		fprintf(j,
		        "%s{\"frame\": %" PRIu32 ", \"opcode\": %u, \"psn\": %" PRIu32
		        ", \"qpn\": %" PRIu32 ", \"len\": %" PRIu32 "}",
		        i ? ", " : "", pkts[i].frame, pkts[i].opcode, pkts[i].psn, pkts[i].qpn,
		        pkts[i].len);
	fputs("],\n   \"hdr_hex\": \"", j);
	for (size_t i = 0; i < hdr_len; i++)
		fprintf(j, "%02x", wire[i]);
	fprintf(j,
	        "\",\n   \"xid\": %" PRIu32 ", \"vers\": %" PRIu32 ", \"credit\": %" PRIu32
	        ", \"proc\": %" PRIu32,
	        hdr->xid, hdr->vers, hdr->credit, hdr->proc);
	switch (hdr->proc) {
	case RPCRDMA_PROC_MSGP:
		fprintf(j, ", \"align\": %" PRIu32 ", \"thresh\": %" PRIu32, hdr->align,
		        hdr->thresh);
		/* fall through */
	case RPCRDMA_PROC_MSG:
	case RPCRDMA_PROC_NOMSG:
		fputs(",\n   \"reads\": [", j);
		for (uint32_t i = 0; i < hdr->nreads; i++) {
			fprintf(j, "%s{\"position\": %" PRIu32 ", \"segment\": ", i ? ", " : "",
			        hdr->reads[i].position);
			json_segment(&hdr->reads[i].target);
			fputc('}', j);
		}
		fputs("],\n   \"writes\": [", j);
		for (uint32_t i = 0; i < hdr->nwrites; i++) {
			if (i)
				fputs(", ", j);
			json_chunk(hdr, &hdr->writes[i]);
		}
		fputs("],\n   \"reply\": ", j);
		if (hdr->has_reply)
			json_chunk(hdr, &hdr->reply);
		else
			fputs("null", j);
		break;
	case RPCRDMA_PROC_ERROR:
		fprintf(j, ", \"err\": %" PRIu32, hdr->err);
		if (hdr->err == RPCRDMA_ERR_VERS)
			fprintf(j, ", \"vers_low\": %" PRIu32 ", \"vers_high\": %" PRIu32,
			        hdr->vers_low, hdr->vers_high);
		break;
	default:
		break;
	}
	fputs(",\n   \"rpc\": ", j);
	json_rpc(rpc);
	fputc('}', j);
}

/*
 * Encode @hdr, append the RPC message of @b (if any), check the round trip,
 * send it from @src to @dst and describe it in the manifest.
 */
static void emit(const char *label, struct endpoint *src, const struct endpoint *dst,
                 const struct rpcrdma_hdr *hdr, const struct body *b)
{
	static struct rpcrdma_hdr got;
	struct rpcrdma_hdr_limits lim;
	struct rpcrdma_hdr_fault fault;
	struct packet pkts[MAX_PACKETS];
	struct rpc_expect rpc = {0};
	size_t size = rpcrdma_hdr_encoded_size(hdr);
	size_t plen = b ? body_len(b) : 0;
	size_t total = size + plen, sent = 0;
	unsigned npkts = 0;
	uint8_t *wire;
	int rc;

	if (size == 0)
		die("%s: rpcrdma_hdr_encoded_size says the header cannot be encoded", label);
	wire = malloc(total);
	if (!wire)
		die("out of memory");
	rc = rpcrdma_hdr_encode(hdr, wire, size);
	if (rc < 0 || (size_t)rc != size)
		die("%s: rpcrdma_hdr_encode returned %d for %zu bytes (%s)", label, rc, size,
		    rc < 0 ? rpcrdma_strerror(rc) : "size mismatch");
	if (plen)
		memcpy(wire + size, b->buf, plen);

	/* Our limits are policy, not wire format: lift them so that every
	 * shape the encoder accepts can be read back. */
	rpcrdma_hdr_limits_default(&lim);
	lim.vers_low = lim.vers_high = RPCRDMA_VERSION_ONE;
	lim.max_chunk_segs = RPCRDMA_HDR_MAX_SEGS;
	lim.max_hdr_size = total;
	rc = rpcrdma_hdr_decode(wire, total, &lim, &got, &fault);
	if (rc)
		die("%s: rpcrdma_hdr_decode refused our own header: %s at byte %zu", label,
		    fault.reason ? fault.reason : rpcrdma_strerror(rc), fault.offset);
	check_same(label, hdr, &got);
	if (b && b->rpc.present)
		check_rpc_same(label, b);
	if (got.hdr_len != size || got.payload_len != plen)
		die("%s: decoder puts the payload at %zu+%zu, encoder at %zu+%zu", label,
		    got.hdr_len, got.payload_len, size, plen);

	/* Wireshark passes an RDMA_MSG with a Read list to the data dissector:
	 * the full call exists only once the chunk has been read, and these
	 * captures hold no RDMA Read traffic. */
	if (b && !(hdr->proc == RPCRDMA_PROC_MSG && hdr->nreads))
		rpc = b->rpc;

	do {
		size_t n = total - sent < PMTU ? total - sent : PMTU;
		uint8_t op;

		if (npkts == MAX_PACKETS)
			die("%s: message of %zu bytes needs too many packets", label, total);
		if (sent == 0)
			op = n == total ? RC_SEND_ONLY : RC_SEND_FIRST;
		else
			op = sent + n == total ? RC_SEND_LAST : RC_SEND_MIDDLE;
		write_frame(src, dst, op, wire + sent, n, &pkts[npkts++]);
		sent += n;
	} while (sent < total);

	json_message(label, hdr, wire, size, total, pkts, npkts, &rpc);
	out.msgs++;
	free(wire);
}

static void call(const char *label, const struct rpcrdma_hdr *hdr, const struct body *b)
{
	emit(label, &client, &server, hdr, b);
}

static void answer(const char *label, const struct rpcrdma_hdr *hdr, const struct body *b)
{
	emit(label, &server, &client, hdr, b);
}

static uint32_t rnd_credit(void)
{
	switch (rnd_range(0, 3)) {
	case 0:
		return rnd32();
	case 1:
		return rnd_range(0, 1);
	default:
		return rnd_range(1, 512);
	}
}

static struct rpcrdma_hdr hdr;
static struct body body;

static void fixed_cases(void)
{
	static const uint32_t three_chunks[] = {1, 2, 3};
	static const uint32_t two_chunks[] = {2, 1};
	struct rpcrdma_segment segs[16];
	uint32_t xid;

	/* Plain inline calls and the replies Wireshark pairs with them. */
	xid = 0x00000001;
	rpcrdma_hdr_init(&hdr, xid, 1, 32, RPCRDMA_PROC_MSG);
	body_init(&body);
	nfs_call_null(&body, xid);
	call("msg-null-call", &hdr, &body);
	rpcrdma_hdr_init(&hdr, xid, 1, 32, RPCRDMA_PROC_MSG);
	body_init(&body);
	nfs_reply_null(&body, xid);
	answer("msg-null-reply", &hdr, &body);

	xid = 0x80000001; /* high bit set */
	rpcrdma_hdr_init(&hdr, xid, 1, 128, RPCRDMA_PROC_MSG);
	body_init(&body);
	nfs_call_getattr(&body, xid);
	call("msg-getattr-call-xid-high-bit", &hdr, &body);
	rpcrdma_hdr_init(&hdr, xid, 1, 128, RPCRDMA_PROC_MSG);
	body_init(&body);
	nfs_reply_getattr(&body, xid);
	answer("msg-getattr-reply", &hdr, &body);

	/* Every other reply form of the RPC encoder. */
	for (uint32_t form = 0; form < 7; form++) {
		char label[48];

		xid = 0x52504300u + form;
		rpcrdma_hdr_init(&hdr, xid, 1, 8, RPCRDMA_PROC_MSG);
		body_init(&body);
		rpc_reply_failure(&body, xid, form);
		snprintf(label, sizeof(label), "msg-reply-form-%" PRIu32, form);
		answer(label, &hdr, &body);
	}

	/* Read chunks: one segment, several segments at one position, and
	 * several chunks at different positions. */
	xid = 0xc0ffee01;
	rpcrdma_hdr_init(&hdr, xid, 1, 64, RPCRDMA_PROC_MSG);
	body_init(&body);
	nfs_call_write_chunked(&body, &hdr, xid, 65536, 1);
	call("msg-read-1seg", &hdr, &body);

	xid = 0xc0ffee02;
	rpcrdma_hdr_init(&hdr, xid, 1, 64, RPCRDMA_PROC_MSG);
	body_init(&body);
	nfs_call_write_chunked(&body, &hdr, xid, 1048576, 4);
	call("msg-read-4seg-one-position", &hdr, &body);

	xid = 0xc0ffee03;
	rpcrdma_hdr_init(&hdr, xid, 1, 64, RPCRDMA_PROC_MSG);
	body_init(&body);
	test_call_chunked(&body, &hdr, xid, three_chunks, 3);
	call("msg-read-3-positions", &hdr, &body);

	/* Write list: several chunks of several segments. */
	xid = 0xc0ffee04;
	rpcrdma_hdr_init(&hdr, xid, 1, 64, RPCRDMA_PROC_MSG);
	add_rnd_write(&hdr, 1);
	add_rnd_write(&hdr, 3);
	add_rnd_write(&hdr, 5);
	body_init(&body);
	nfs_call_read(&body, xid);
	call("msg-write-list-3-chunks", &hdr, &body);

	xid = 0xc0ffee05;
	rpcrdma_hdr_init(&hdr, xid, 1, 64, RPCRDMA_PROC_MSG);
	set_rnd_reply(&hdr, 2);
	body_init(&body);
	nfs_call_readdir(&body, xid);
	call("msg-reply-chunk", &hdr, &body);

	xid = 0xc0ffee06;
	rpcrdma_hdr_init(&hdr, xid, 1, 64, RPCRDMA_PROC_MSG);
	body_init(&body);
	test_call_chunked(&body, &hdr, xid, two_chunks, 2);
	add_rnd_write(&hdr, 2);
	add_rnd_write(&hdr, 1);
	set_rnd_reply(&hdr, 3);
	call("msg-reads-writes-reply", &hdr, &body);

	/* RDMA_NOMSG: the call in a Position-Zero Read chunk, with and without
	 * a Reply chunk; the reply in the Reply chunk. */
	xid = 0xc0ffee07;
	rpcrdma_hdr_init(&hdr, xid, 1, 16, RPCRDMA_PROC_NOMSG);
	pzrc(&hdr, 6000, 2);
	call("nomsg-pzrc", &hdr, NULL);

	xid = 0xc0ffee08;
	rpcrdma_hdr_init(&hdr, xid, 1, 16, RPCRDMA_PROC_NOMSG);
	pzrc(&hdr, 2048, 1);
	set_rnd_reply(&hdr, 4);
	call("nomsg-pzrc-reply-chunk", &hdr, NULL);

	rpcrdma_hdr_init(&hdr, xid, 1, 16, RPCRDMA_PROC_NOMSG);
	set_rnd_reply(&hdr, 3);
	answer("nomsg-reply-chunk", &hdr, NULL);

	/* RDMA_ERROR, both forms. */
	rpcrdma_hdr_init(&hdr, 0xdeadbeef, 1, 1, RPCRDMA_PROC_ERROR);
	hdr.err = RPCRDMA_ERR_VERS;
	hdr.vers_low = 1;
	hdr.vers_high = 1;
	answer("error-vers", &hdr, NULL);

	rpcrdma_hdr_init(&hdr, 0xfeedface, 1, 7, RPCRDMA_PROC_ERROR);
	hdr.err = RPCRDMA_ERR_CHUNK;
	answer("error-chunk", &hdr, NULL);

	/* Extreme fixed words. */
	xid = 0xffffffff;
	rpcrdma_hdr_init(&hdr, xid, 1, 0xffffffff, RPCRDMA_PROC_MSG);
	body_init(&body);
	nfs_call_null(&body, xid);
	call("msg-xid-max-credit-max", &hdr, &body);

	xid = 0x00000000;
	rpcrdma_hdr_init(&hdr, xid, 1, 0, RPCRDMA_PROC_MSG);
	body_init(&body);
	nfs_call_null(&body, xid);
	call("msg-xid-zero-credit-zero", &hdr, &body);

	xid = 0x7fffffff;
	rpcrdma_hdr_init(&hdr, xid, 1, 0x80000000, RPCRDMA_PROC_MSG);
	body_init(&body);
	nfs_call_getattr(&body, xid);
	call("msg-credit-high-bit", &hdr, &body);

	/* Extreme segments: all 64 offset bits, the largest length, handles
	 * 0 and all-ones. */
	xid = 0xc0ffee09;
	rpcrdma_hdr_init(&hdr, xid, 1, 64, RPCRDMA_PROC_MSG);
	segs[0] = (struct rpcrdma_segment){claim_handle(0xffffffff), 0xff, 0xffffffffffffff00ull};
	segs[1] = (struct rpcrdma_segment){claim_handle(0x00000000), 0, 0xffffffffffffffffull};
	segs[2] = (struct rpcrdma_segment){new_handle(), 0xffffffff, 0};
	segs[3] = (struct rpcrdma_segment){new_handle(), 4096, 0x8000000000000000ull};
	add_write(&hdr, segs, 4);
	segs[0] = (struct rpcrdma_segment){new_handle(), 0x10, 0x0123456789abcdefull};
	segs[1] = (struct rpcrdma_segment){new_handle(), 0x7fffffff, 0xfedcba9876543210ull};
	set_reply(&hdr, segs, 2);
	body_init(&body);
	nfs_call_read(&body, xid);
	call("msg-extreme-segments", &hdr, &body);

	/* Messages longer than the PMTU: a large inline payload, then a large
	 * header. */
	xid = 0xc0ffee0a;
	rpcrdma_hdr_init(&hdr, xid, 1, 64, RPCRDMA_PROC_MSG);
	body_init(&body);
	nfs_call_write_inline(&body, xid, 3000);
	call("msg-inline-write-3000", &hdr, &body);

	xid = 0xc0ffee0b;
	rpcrdma_hdr_init(&hdr, xid, 1, 64, RPCRDMA_PROC_MSG);
	for (int i = 0; i < 4; i++)
		add_rnd_write(&hdr, 16);
	set_rnd_reply(&hdr, 16);
	body_init(&body);
	nfs_call_read(&body, xid);
	call("msg-large-header", &hdr, &body);

	xid = 0xc0ffee0c;
	rpcrdma_hdr_init(&hdr, xid, 1, 64, RPCRDMA_PROC_MSG);
	body_init(&body);
	nfs_call_write_inline(&body, xid, 4 * PMTU - 200);
	call("msg-inline-write-5-packets", &hdr, &body);

	/* The RFC 5666 forms Wireshark still knows. */
	xid = 0xc0ffee0d;
	rpcrdma_hdr_init(&hdr, xid, 1, 64, RPCRDMA_PROC_MSGP);
	hdr.align = 4096;
	hdr.thresh = 1024;
	body_init(&body);
	nfs_call_null(&body, xid);
	call("msgp-null-call", &hdr, &body);

	rpcrdma_hdr_init(&hdr, 0xc0ffee0e, 1, 64, RPCRDMA_PROC_DONE);
	call("done", &hdr, NULL);
}

/* A call as a client might send it, with random chunk lists. */
static void random_call(const char *label, uint32_t xid)
{
	uint32_t nwrites = 0;

	rpcrdma_hdr_init(&hdr, xid, 1, rnd_credit(), RPCRDMA_PROC_MSG);
	body_init(&body);
	if (chance(30)) {
		uint32_t nsegs[4], nchunks = rnd_range(1, 4);

		for (uint32_t i = 0; i < nchunks; i++)
			nsegs[i] = rnd_range(1, 3);
		test_call_chunked(&body, &hdr, xid, nsegs, nchunks);
	} else {
		switch (rnd_range(0, 4)) {
		case 0:
			nfs_call_null(&body, xid);
			break;
		case 1:
			nfs_call_getattr(&body, xid);
			break;
		case 2:
			nfs_call_read(&body, xid);
			nwrites = 1;
			break;
		case 3:
			nfs_call_readdir(&body, xid);
			break;
		default:
			nfs_call_write_inline(&body, xid, rnd_range(0, 4000));
			break;
		}
	}
	if (chance(40))
		nwrites = rnd_range(1, 3);
	for (uint32_t i = 0; i < nwrites; i++)
		add_rnd_write(&hdr, chance(10) ? rnd_range(1, 16) : rnd_range(1, 4));
	if (chance(40))
		set_rnd_reply(&hdr, rnd_range(1, 4));
	call(label, &hdr, &body);
}

static void random_case(unsigned i)
{
	char label[64];
	uint32_t xid = rnd32();
	uint32_t kind = rnd_range(0, 99);

	if (kind < 50) {
		snprintf(label, sizeof(label), "random-%u-call", i);
		random_call(label, xid);
	} else if (kind < 70) {
		/* A call Wireshark can pair the reply with, then the reply. */
		bool getattr;

		snprintf(label, sizeof(label), "random-%u-call", i);
		rpcrdma_hdr_init(&hdr, xid, 1, rnd_credit(), RPCRDMA_PROC_MSG);
		body_init(&body);
		getattr = chance(50);
		if (getattr)
			nfs_call_getattr(&body, xid);
		else
			nfs_call_null(&body, xid);
		call(label, &hdr, &body);

		snprintf(label, sizeof(label), "random-%u-reply", i);
		rpcrdma_hdr_init(&hdr, xid, 1, rnd_credit(), RPCRDMA_PROC_MSG);
		body_init(&body);
		if (chance(20))
			rpc_reply_failure(&body, xid, rnd32());
		else if (getattr)
			nfs_reply_getattr(&body, xid);
		else
			nfs_reply_null(&body, xid);
		/* A Write list in a reply says how much of each chunk was
		 * used: none of it here. */
		for (uint32_t n = chance(30) ? rnd_range(1, 2) : 0; n; n--)
			add_rnd_write(&hdr, rnd_range(1, 3));
		answer(label, &hdr, &body);
	} else if (kind < 80) {
		snprintf(label, sizeof(label), "random-%u-nomsg-call", i);
		rpcrdma_hdr_init(&hdr, xid, 1, rnd_credit(), RPCRDMA_PROC_NOMSG);
		pzrc(&hdr, RPCRDMA_XDR_UNIT * rnd_range(64, 16384), rnd_range(1, 4));
		if (chance(30))
			add_rnd_write(&hdr, rnd_range(1, 4));
		if (chance(50))
			set_rnd_reply(&hdr, rnd_range(1, 8));
		call(label, &hdr, NULL);
	} else if (kind < 90) {
		snprintf(label, sizeof(label), "random-%u-nomsg-reply", i);
		rpcrdma_hdr_init(&hdr, xid, 1, rnd_credit(), RPCRDMA_PROC_NOMSG);
		set_rnd_reply(&hdr, rnd_range(1, 16));
		answer(label, &hdr, NULL);
	} else {
		snprintf(label, sizeof(label), "random-%u-error", i);
		rpcrdma_hdr_init(&hdr, xid, 1, rnd_credit(), RPCRDMA_PROC_ERROR);
		if (chance(50)) {
			hdr.err = RPCRDMA_ERR_VERS;
			hdr.vers_low = rnd_range(1, 4);
			hdr.vers_high = hdr.vers_low + rnd_range(0, 4);
		} else {
			hdr.err = RPCRDMA_ERR_CHUNK;
		}
		answer(label, &hdr, NULL);
	}
}

static unsigned long parse_ulong(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || !*s || *end)
		die("bad %s: %s", what, s);
	return v;
}

int main(int argc, char **argv)
{
	unsigned long seed = 20240607, nrandom = 50;

	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: %s OUT.pcap OUT.json [SEED [NRANDOM]]\n", argv[0]);
		return 2;
	}
	if (argc > 3)
		seed = parse_ulong(argv[3], "seed");
	if (argc > 4)
		nrandom = parse_ulong(argv[4], "count");
	rng_state = seed;

	out.pcap = fopen(argv[1], "wb");
	if (!out.pcap)
		die("%s: %s", argv[1], strerror(errno));
	out.json = fopen(argv[2], "w");
	if (!out.json)
		die("%s: %s", argv[2], strerror(errno));
	pcap_begin(out.pcap);
	fprintf(out.json, "{\"seed\": %lu, \"pmtu\": %d, \"messages\": [", seed, PMTU);

	fixed_cases();
	for (unsigned long i = 0; i < nrandom; i++)
		random_case((unsigned)i);

	fprintf(out.json, "\n ],\n \"frames\": %" PRIu32 "}\n", out.frames);
	if (fclose(out.pcap) || fclose(out.json))
		die("writing the output: %s", strerror(errno));
	printf("gen_roce_pcap: %" PRIu32 " messages in %" PRIu32 " frames (seed %lu)\n", out.msgs,
	       out.frames, seed);
	free(out.handles);
	return 0;
}
