/*
 * rpcrdma-dump: print every RPC-over-RDMA message of a capture as one JSON
 * object per line.  This file owns the command line, the two inputs (a
 * libpcap/pcapng capture, whose RoCEv2 Sends roce.c reassembles, or a text
 * file of hex-encoded messages) and the mapping of a decoded transport
 * header and RPC header onto JSON keys.
 *
 * The tool is meant to be pointed at hostile or broken traffic, so it decodes
 * with the library's own validating decoder under limits as wide as struct
 * rpcrdma_hdr can hold, and a message that fails validation is still
 * printed: what could be decoded, plus "invalid" with the decoder's reason
 * and the byte offset where it stopped.  In such a record the chunk lists
 * show what was decoded before the failure; a list the decoder never reached
 * appears empty.  Sends the reassembler had to discard (see roce.c) print as
 * {"frame":N,"invalid":"..."} so a lost message never passes unnoticed.
 *
 * Exit status: 0 when the whole input was read, 1 when it could not be
 * opened or read to its end (or the output could not be written), 2 for a
 * bad command line.
 */
#include <errno.h>
#include <stddef.h>
#include <getopt.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/options.h"
#include "rpcrdma/header.h"
#include "rpcrdma/rpc_msg.h"
#include "rpcrdma/xdr.h"

#include "json.h"
#include "roce.h"

struct dump {
	struct json json;
	struct rpcrdma_hdr_limits lim;
	bool rpc;               /* decode the RPC header after the transport header */
	struct rpcrdma_hdr hdr; /* large: one per run, not one per message */
	struct rpcrdma_rpc_msg msg;
};

static void usage(FILE *out, const char *prog)
{
	fprintf(out,
	        "usage: %s [-x] [--no-rpc] FILE\n"
	        "\n"
	        "Print each RPC-over-RDMA message in FILE as one JSON object per line.\n"
	        "FILE is a pcap or pcapng capture of RoCEv2 traffic (UDP port 4791),\n"
	        "or with -x a text file holding one hex-encoded message per line\n"
	        "(blank lines and lines starting with '#' are skipped).  \"-\" reads\n"
	        "standard input.\n"
	        "\n"
	        "  -x, --hex     FILE holds hex-encoded messages, not a capture\n"
	        "      --no-rpc  do not decode the RPC message after the header\n"
	        "  -h, --help    show this text\n",
	        prog);
}

static void put_segment(struct json *j, const struct rpcrdma_segment *seg)
{
	json_hex32(j, "handle", seg->handle);
	json_uint(j, "length", seg->length);
	json_hex64(j, "offset", seg->offset);
}

static void put_chunk(struct json *j, const char *key, const struct rpcrdma_hdr *hdr,
                      const struct rpcrdma_chunk *chunk)
{
	const struct rpcrdma_segment *seg;

	json_array_begin(j, key);
	for (uint32_t i = 0; (seg = rpcrdma_hdr_chunk_seg(hdr, chunk, i)); i++) {
		json_object_begin(j, NULL);
		put_segment(j, seg);
		json_object_end(j);
	}
	json_array_end(j);
}

static void put_chunk_lists(struct json *j, const struct rpcrdma_hdr *hdr)
{
	uint32_t nreads = hdr->nreads < RPCRDMA_HDR_MAX_READS ? hdr->nreads : RPCRDMA_HDR_MAX_READS;
	uint32_t nwrites = hdr->nwrites < RPCRDMA_HDR_MAX_WRITE_CHUNKS
	                       ? hdr->nwrites
	                       : RPCRDMA_HDR_MAX_WRITE_CHUNKS;

	json_array_begin(j, "reads");
	for (uint32_t i = 0; i < nreads; i++) {
		json_object_begin(j, NULL);
		json_uint(j, "position", hdr->reads[i].position);
		put_segment(j, &hdr->reads[i].target);
		json_object_end(j);
	}
	json_array_end(j);
	json_array_begin(j, "writes");
	for (uint32_t i = 0; i < nwrites; i++)
		put_chunk(j, NULL, hdr, &hdr->writes[i]);
	json_array_end(j);
	if (hdr->has_reply)
		put_chunk(j, "reply", hdr, &hdr->reply);
	else
		json_null(j, "reply");
}

static void put_name_or_number(struct json *j, const char *key, const char *name, uint32_t v)
{
	if (name)
		json_string(j, key, name);
	else
		json_uint(j, key, v);
}

static void put_error(struct json *j, const struct rpcrdma_hdr *hdr, bool complete,
                      size_t stopped_at)
{
	static const char *const names[] = {
	    [RPCRDMA_ERR_VERS] = "ERR_VERS",
	    [RPCRDMA_ERR_CHUNK] = "ERR_CHUNK",
	    [RPCRDMA_ERR_INVAL_OPTION] = "ERR_INVAL_OPTION",
	};
	const char *name = hdr->err < sizeof(names) / sizeof(names[0]) ? names[hdr->err] : NULL;

	/* The error code is the word after the four fixed ones. */
	if (!complete && stopped_at < RPCRDMA_HDR_PREFIX_SIZE + 4)
		return;
	json_object_begin(j, "error");
	put_name_or_number(j, "code", name, hdr->err);
	if (hdr->err == RPCRDMA_ERR_VERS &&
	    (complete || stopped_at >= RPCRDMA_HDR_PREFIX_SIZE + 12)) {
		json_uint(j, "low", hdr->vers_low);
		json_uint(j, "high", hdr->vers_high);
	}
	json_object_end(j);
}

/* The one optional feature we know (docs/rpcrdma-v2-properties.md):
 * its properties by name, or why they do not decode. */
static void put_properties(struct json *j, const struct rpcrdma_hdr *hdr)
{
	static const struct {
		enum rpcrdma__propid id;
		const char *name;
		size_t offset;
	} props[] = {
	    {RPCRDMA_PROP_RECV_SIZE, "recv_size", offsetof(struct rpcrdma__props, recv_size)},
	    {RPCRDMA_PROP_SEND_SIZE, "send_size", offsetof(struct rpcrdma__props, send_size)},
	    {RPCRDMA_PROP_CREDITS, "credits", offsetof(struct rpcrdma__props, credits)},
	    {RPCRDMA_PROP_REVERSE, "reverse", offsetof(struct rpcrdma__props, reverse)},
	};
	struct rpcrdma__props p;

	if (rpcrdma__props_decode(hdr->optinfo, hdr->optinfo_len, &p)) {
		json_string(j, "properties_error", "malformed rpcrdma2_props");
		return;
	}
	json_object_begin(j, "properties");
	for (size_t i = 0; i < sizeof(props) / sizeof(props[0]); i++) {
		uint32_t v;

		if (!RPCRDMA__PROPS_HAS(&p, props[i].id))
			continue;
		memcpy(&v, (const char *)&p + props[i].offset, sizeof(v));
		json_uint(j, props[i].name, v);
	}
	json_object_end(j);
}

static void put_optional(struct json *j, const struct rpcrdma_hdr *hdr, bool complete,
                         size_t stopped_at)
{
	if (!complete && stopped_at < RPCRDMA_HDR_PREFIX_SIZE + 4)
		return;
	json_object_begin(j, "optional");
	json_uint(j, "type", hdr->opttype);
	if (hdr->opttype == RPCRDMA_OPT_PROPERTIES)
		json_string(j, "name", "transport-properties");
	if (complete) {
		json_hexbytes(j, "info", hdr->optinfo, hdr->optinfo_len);
		if (hdr->opttype == RPCRDMA_OPT_PROPERTIES)
			put_properties(j, hdr);
	}
	json_object_end(j);
}

/* Returns 0, or the decoder's error when the RPC header is malformed. */
static int put_rpc(struct dump *d, const uint8_t *buf, size_t len)
{
	struct rpcrdma_xdr_stream xdr;
	struct rpcrdma_rpc_msg *msg = &d->msg;
	struct json *j = &d->json;
	int rc;

	rpcrdma_xdr_init_const(&xdr, buf, len);
	rc = rpcrdma_rpc_decode_msg(&xdr, msg);
	if (rc)
		return rc;
	json_object_begin(j, "rpc");
	if (msg->type == RPCRDMA_RPC_CALL) {
		json_string(j, "msg_type", "CALL");
		json_hex32(j, "xid", msg->xid);
		/* Another RPC version's call stops after rpcvers. */
		if (msg->u.call.rpcvers != RPCRDMA_RPC_VERSION) {
			json_uint(j, "rpcvers", msg->u.call.rpcvers);
		} else {
			json_uint(j, "prog", msg->u.call.prog);
			json_uint(j, "vers", msg->u.call.vers);
			json_uint(j, "proc", msg->u.call.proc);
		}
	} else {
		const struct rpcrdma_rpc_reply *reply = &msg->u.reply;

		json_string(j, "msg_type", "REPLY");
		json_hex32(j, "xid", msg->xid);
		put_name_or_number(j, "reply_stat", rpcrdma_rpc_reply_stat_name(reply->stat),
		                   reply->stat);
		if (reply->stat == RPCRDMA_RPC_MSG_ACCEPTED) {
			put_name_or_number(j, "accept_stat",
			                   rpcrdma_rpc_accept_stat_name(reply->accept_stat),
			                   reply->accept_stat);
		} else {
			put_name_or_number(j, "reject_stat",
			                   rpcrdma_rpc_reject_stat_name(reply->reject_stat),
			                   reply->reject_stat);
			if (reply->reject_stat == RPCRDMA_RPC_AUTH_ERROR)
				put_name_or_number(j, "auth_stat",
				                   rpcrdma_rpc_auth_stat_name(reply->auth_stat),
				                   reply->auth_stat);
		}
	}
	json_object_end(j);
	return 0;
}

/*
 * Decode and print one message.  @problem, when set, says why the bytes are
 * not the whole Send (the capture cut it short); it leads the "invalid" text.
 */
static void dump_message(struct dump *d, bool has_frame, uint64_t frame, const uint8_t *buf,
                         size_t len, const char *problem)
{
	static const uint8_t empty[1];
	struct rpcrdma_hdr *hdr = &d->hdr;
	struct json *j = &d->json;
	struct rpcrdma_hdr_fault fault;
	char invalid[256] = "";
	bool complete, body;
	int rc;

	if (!buf)
		buf = empty; /* a Send with no payload is still a message */
	/* The decoder leaves chunk descriptors it never reached alone; start
	 * from zero so a failed decode cannot show another message's chunks. */
	memset(hdr, 0, sizeof(*hdr));
	rc = rpcrdma_hdr_decode(buf, len, &d->lim, hdr, &fault);
	complete = rc == 0;
	if (problem)
		snprintf(invalid, sizeof(invalid), "%s", problem);
	if (!complete) {
		size_t n = strlen(invalid);

		snprintf(invalid + n, sizeof(invalid) - n, "%s%s at byte %zu", n ? "; " : "",
		         fault.reason ? fault.reason : rpcrdma_strerror(rc), fault.offset);
	}

	json_object_begin(j, NULL);
	if (has_frame)
		json_uint(j, "frame", frame);
	if (len < RPCRDMA_HDR_PREFIX_SIZE)
		goto out;
	json_hex32(j, "xid", hdr->xid);
	json_uint(j, "vers", hdr->vers);
	json_uint(j, "credit", hdr->credit);
	put_name_or_number(j, "proc", rpcrdma_proc_name(hdr->proc), hdr->proc);

	/* The body was decoded for a supported version, and for an error of
	 * any version (its ERR_VERS form is the same in all). */
	body = (hdr->vers >= d->lim.vers_low && hdr->vers <= d->lim.vers_high) ||
	       hdr->proc == RPCRDMA_PROC_ERROR;
	if (!body)
		goto out;
	switch (hdr->proc) {
	case RPCRDMA_PROC_MSGP:
		if (hdr->vers != RPCRDMA_VERSION_ONE)
			break; /* reserved, with a void body, in Version Two */
		if (complete || fault.offset >= RPCRDMA_HDR_PREFIX_SIZE + 8) {
			json_uint(j, "align", hdr->align);
			json_uint(j, "thresh", hdr->thresh);
		}
		/* fall through */
	case RPCRDMA_PROC_MSG:
	case RPCRDMA_PROC_NOMSG:
		put_chunk_lists(j, hdr);
		break;
	case RPCRDMA_PROC_ERROR:
		put_error(j, hdr, complete, fault.offset);
		break;
	case RPCRDMA_PROC_OPTIONAL:
		if (hdr->vers == RPCRDMA_VERSION_TWO)
			put_optional(j, hdr, complete, fault.offset);
		break;
	}

	/* Only RDMA_MSG and RDMA_MSGP carry the RPC message inline; for
	 * RDMA_NOMSG it is in a chunk, which the capture does not tie to the
	 * Send. */
	if (complete && d->rpc && hdr->payload_len > 0 &&
	    (hdr->proc == RPCRDMA_PROC_MSG ||
	     (hdr->proc == RPCRDMA_PROC_MSGP && hdr->vers == RPCRDMA_VERSION_ONE))) {
		rc = put_rpc(d, buf + hdr->hdr_len, hdr->payload_len);
		if (rc) {
			size_t n = strlen(invalid);

			snprintf(invalid + n, sizeof(invalid) - n, "%sRPC message: %s",
			         n ? "; " : "", rpcrdma_strerror(rc));
		}
	}
out:
	if (invalid[0])
		json_string(j, "invalid", invalid);
	json_object_end(j);
	json_end_line(j);
}

static void dump_lost(struct dump *d, uint64_t frame, const char *problem)
{
	struct json *j = &d->json;

	json_object_begin(j, NULL);
	json_uint(j, "frame", frame);
	json_string(j, "invalid", problem);
	json_object_end(j);
	json_end_line(j);
}

static void on_send(void *ctx, const struct roce_send *send)
{
	struct dump *d = ctx;

	if (send->lost)
		dump_lost(d, send->frame, send->problem);
	else
		dump_message(d, true, send->frame, send->data, send->len,
		             send->truncated ? "Send truncated by the capture" : NULL);
}

static int link_of(int dlt, enum roce_link *link)
{
	switch (dlt) {
	case DLT_EN10MB:
		*link = ROCE_LINK_ETHERNET;
		return 0;
	case DLT_LINUX_SLL:
		*link = ROCE_LINK_SLL;
		return 0;
#ifdef DLT_LINUX_SLL2
	case DLT_LINUX_SLL2:
		*link = ROCE_LINK_SLL2;
		return 0;
#endif
	case DLT_RAW:
#ifdef DLT_IPV4
	case DLT_IPV4:
	case DLT_IPV6:
#endif
		*link = ROCE_LINK_RAW;
		return 0;
	}
	return -1;
}

static int dump_pcap(struct dump *d, const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	struct roce_reasm *r;
	struct pcap_pkthdr *ph;
	const u_char *data;
	enum roce_link link;
	uint64_t frame = 0;
	pcap_t *p;
	int rc;

	p = pcap_open_offline(path, errbuf);
	if (!p) {
		fprintf(stderr, "rpcrdma-dump: %s: %s\n", path, errbuf);
		return 1;
	}
	if (link_of(pcap_datalink(p), &link)) {
		fprintf(stderr, "rpcrdma-dump: %s: unsupported link type %s\n", path,
		        pcap_datalink_val_to_name(pcap_datalink(p))
		            ? pcap_datalink_val_to_name(pcap_datalink(p))
		            : "(unknown)");
		pcap_close(p);
		return 1;
	}
	/* About 260 KiB of flow table: keep it off the stack. */
	r = malloc(sizeof(*r));
	if (!r) {
		fprintf(stderr, "rpcrdma-dump: out of memory\n");
		pcap_close(p);
		return 1;
	}
	roce_init(r, link, on_send, d);
	while ((rc = pcap_next_ex(p, &ph, &data)) == 1) {
		frame++;
		/* A reassembly buffer that could not grow is already reported
		 * as a lost Send; later messages may still fit. */
		(void)roce_input(r, frame, data, ph->caplen);
	}
	roce_finish(r);
	free(r);
	if (rc != PCAP_ERROR_BREAK) { /* -2: the end of the file */
		fprintf(stderr, "rpcrdma-dump: %s: after frame %llu: %s\n", path,
		        (unsigned long long)frame, pcap_geterr(p));
		pcap_close(p);
		return 1;
	}
	pcap_close(p);
	return 0;
}

static int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Turn one line into bytes in place (the bytes never outrun the digits).
 * Spaces and tabs between digits are allowed, so a dump can be grouped.
 * Returns the byte count, or -1 with *@why set.
 */
static long parse_hex_line(char *line, size_t n, const char **why)
{
	uint8_t *out = (uint8_t *)line;
	size_t nout = 0;
	int hi = -1;

	for (size_t i = 0; i < n; i++) {
		int v;

		if (line[i] == ' ' || line[i] == '\t')
			continue;
		v = hex_digit((unsigned char)line[i]);
		if (v < 0) {
			*why = "not a hex string";
			return -1;
		}
		if (hi < 0) {
			hi = v;
			continue;
		}
		if (nout == ROCE_MAX_SEND) {
			*why = "message larger than 16 MiB";
			return -1;
		}
		out[nout++] = (uint8_t)(hi << 4 | v);
		hi = -1;
	}
	if (hi >= 0) {
		*why = "odd number of hex digits";
		return -1;
	}
	return (long)nout;
}

static int dump_hex(struct dump *d, const char *path)
{
	FILE *in = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned long lineno = 0;
	ssize_t n;
	int status = 0;

	if (!in) {
		fprintf(stderr, "rpcrdma-dump: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while ((n = getline(&line, &cap, in)) >= 0) {
		size_t len = (size_t)n;
		size_t first = 0;
		const char *why = NULL;
		long nbytes;

		lineno++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		while (first < len && (line[first] == ' ' || line[first] == '\t'))
			first++;
		if (first == len || line[first] == '#')
			continue;
		nbytes = parse_hex_line(line + first, len - first, &why);
		if (nbytes < 0) {
			char msg[96];

			snprintf(msg, sizeof(msg), "line %lu: %s", lineno, why);
			json_object_begin(&d->json, NULL);
			json_string(&d->json, "invalid", msg);
			json_object_end(&d->json);
			json_end_line(&d->json);
			continue;
		}
		dump_message(d, false, 0, (const uint8_t *)line + first, (size_t)nbytes, NULL);
	}
	if (ferror(in)) {
		fprintf(stderr, "rpcrdma-dump: %s: %s\n", path, strerror(errno));
		status = 1;
	}
	free(line);
	if (in != stdin)
		fclose(in);
	return status;
}

int main(int argc, char **argv)
{
	enum { OPT_NO_RPC = 256 };
	static const struct option longopts[] = {
	    {"hex", no_argument, NULL, 'x'},
	    {"no-rpc", no_argument, NULL, OPT_NO_RPC},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *prog = argc > 0 ? argv[0] : "rpcrdma-dump";
	bool hex = false;
	struct dump *d;
	int c, status;

	d = calloc(1, sizeof(*d));
	if (!d) {
		fprintf(stderr, "rpcrdma-dump: out of memory\n");
		return 1;
	}
	d->rpc = true;
	while ((c = getopt_long(argc, argv, "xh", longopts, NULL)) != -1) {
		switch (c) {
		case 'x':
			hex = true;
			break;
		case OPT_NO_RPC:
			d->rpc = false;
			break;
		case 'h':
			usage(stdout, prog);
			free(d);
			return 0;
		default:
			usage(stderr, prog);
			free(d);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr, prog);
		free(d);
		return 2;
	}

	/* As wide as struct rpcrdma_hdr allows: a dump shows what a stricter
	 * receiver would refuse, and says why in "invalid". */
	rpcrdma_hdr_limits_default(&d->lim);
	d->lim.vers_low = RPCRDMA_VERSION_ONE;
	d->lim.vers_high = RPCRDMA_VERSION_TWO;
	d->lim.max_reads = RPCRDMA_HDR_MAX_READS;
	d->lim.max_write_chunks = RPCRDMA_HDR_MAX_WRITE_CHUNKS;
	d->lim.max_chunk_segs = RPCRDMA_HDR_MAX_SEGS;
	d->lim.max_hdr_size = 1u << 20;
	d->lim.max_optinfo = 1u << 20;

	json_init(&d->json, stdout);
	status = hex ? dump_hex(d, argv[optind]) : dump_pcap(d, argv[optind]);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "rpcrdma-dump: writing the output: %s\n", strerror(errno));
		status = 1;
	}
	free(d);
	return status;
}
