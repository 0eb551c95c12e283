/*
 * rpcrdma-dump's per-message half: the mapping of a decoded transport header
 * and RPC header onto JSON keys, and the parsing of one line of hex into a
 * message.  rpcrdma-dump.c owns the command line and the inputs.
 *
 * A message that fails validation is still printed: what could be decoded,
 * plus "invalid" with the decoder's reason and the byte offset where it
 * stopped.  In such a record the chunk lists show what was decoded before
 * the failure; a list the decoder never reached appears empty.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "proto/options.h"
#include "rpcrdma/header.h"
#include "rpcrdma/rpc_msg.h"
#include "rpcrdma/xdr.h"

#include "dump_message.h"
#include "json.h"
#include "roce.h"

void dump_init(struct dump *d, FILE *out, bool rpc)
{
	d->rpc = rpc;
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
	json_init(&d->json, out);
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

void dump_message(struct dump *d, bool has_frame, uint64_t frame, const uint8_t *buf, size_t len,
		  const char *problem)
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

void dump_lost(struct dump *d, uint64_t frame, const char *problem)
{
	struct json *j = &d->json;

	json_object_begin(j, NULL);
	json_uint(j, "frame", frame);
	json_string(j, "invalid", problem);
	json_object_end(j);
	json_end_line(j);
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

void dump_hex_line(struct dump *d, char *line, size_t len, unsigned long lineno)
{
	size_t first = 0;
	const char *why = NULL;
	long nbytes;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	while (first < len && (line[first] == ' ' || line[first] == '\t'))
		first++;
	if (first == len || line[first] == '#')
		return;
	nbytes = parse_hex_line(line + first, len - first, &why);
	if (nbytes < 0) {
		char msg[96];

		snprintf(msg, sizeof(msg), "line %lu: %s", lineno, why);
		json_object_begin(&d->json, NULL);
		json_string(&d->json, "invalid", msg);
		json_object_end(&d->json);
		json_end_line(&d->json);
		return;
	}
	dump_message(d, false, 0, (const uint8_t *)line + first, (size_t)nbytes, NULL);
}
