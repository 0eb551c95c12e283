/*
 * RPC-over-RDMA transport header codec: Version One (RFC 8166), the legacy
 * RDMA_MSGP/RDMA_DONE forms, and Version Two (draft-cel-...-version-two-00).
 *
 * Decoding walks the header once with a cursor over the received bytes,
 * bounded by both the received length and the configured header size,
 * checking each count before the items it announces.  The header always
 * arrives in one buffer, so a word is a bounds check and a load: no XDR
 * stream, whose every word would ask which element it lies in.  A failed
 * read never moves the cursor, so a refusal's offset is the word it
 * refused.  Each refusal names the answer the
 * specifications require:
 *   - fewer than the four fixed words: drop (there is nothing to answer);
 *   - an unsupported version: ERR_VERS (RFC 8166 section 4.5 / 5.5.1);
 *   - any other malformation: ERR_CHUNK (RDMA_ERR_BADHEADER in the drafts);
 *   - an RDMA_ERROR that cannot be decoded: drop (section 5.5), so two peers
 *     never trade errors about errors.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/header.h"
#include "xdr/xdr_word.h"

void rpcrdma_hdr_limits_default(struct rpcrdma_hdr_limits *lim)
{
	if (!lim)
		return;
	lim->vers_low = RPCRDMA_VERSION_ONE;
	lim->vers_high = RPCRDMA_VERSION_TWO;
	lim->max_reads = RPCRDMA_HDR_MAX_READS;
	lim->max_write_chunks = RPCRDMA_HDR_MAX_WRITE_CHUNKS;
	lim->max_chunk_segs = 16;
	lim->max_optinfo = 1024;
	lim->max_hdr_size = 4096;
}

const char *rpcrdma_proc_name(uint32_t proc)
{
	switch (proc) {
	case RPCRDMA_PROC_MSG:
		return "RDMA_MSG";
	case RPCRDMA_PROC_NOMSG:
		return "RDMA_NOMSG";
	case RPCRDMA_PROC_MSGP:
		return "RDMA_MSGP";
	case RPCRDMA_PROC_DONE:
		return "RDMA_DONE";
	case RPCRDMA_PROC_ERROR:
		return "RDMA_ERROR";
	case RPCRDMA_PROC_OPTIONAL:
		return "RDMA_OPTIONAL";
	}
	return NULL;
}

/* Decoding state: the cursor plus the limits in force. */
struct decoder {
	const uint8_t *p;   /* the next header byte */
	const uint8_t *end; /* the header bound: min(received, max_hdr_size) */
	const struct rpcrdma_hdr_limits *lim;
	struct rpcrdma_hdr *hdr;
	struct rpcrdma_hdr_fault *fault;
	bool clipped; /* the message is longer than max_hdr_size */
	const uint8_t *msg; /* the whole message, where the cursor started */
	size_t msg_len;
};

static size_t header_pos(const struct decoder *d)
{
	return (size_t)(d->p - d->msg);
}

static size_t header_left(const struct decoder *d)
{
	return (size_t)(d->end - d->p);
}

static uint32_t peek_u32(const struct decoder *d)
{
	uint32_t be;

	memcpy(&be, d->p, 4);
	return be32toh(be);
}

/* false, the cursor unmoved, when the header has no word left. */
static bool get_u32(struct decoder *d, uint32_t *v)
{
	if (header_left(d) < 4)
		return false;
	*v = peek_u32(d);
	d->p += 4;
	return true;
}

static bool get_u64(struct decoder *d, uint64_t *v)
{
	uint64_t be;

	if (header_left(d) < 8)
		return false;
	memcpy(&be, d->p, 8);
	*v = be64toh(be);
	d->p += 8;
	return true;
}

static int refuse(struct decoder *d, enum rpcrdma_hdr_action action, const char *reason)
{
	d->fault->action = action;
	d->fault->reason = reason;
	d->fault->offset = header_pos(d);
	switch (action) {
	case RPCRDMA_HDR_REPLY_ERR_VERS:
		return RPCRDMA_ERR_VERSION;
	case RPCRDMA_HDR_REPLY_ERR_CHUNK:
		return RPCRDMA_ERR_BAD_HEADER;
	case RPCRDMA_HDR_REPLY_INVAL_OPTION:
		return RPCRDMA_ERR_BAD_OPTION;
	case RPCRDMA_HDR_DROP:
	case RPCRDMA_HDR_ACCEPT:
		break;
	}
	return RPCRDMA_ERR_DROP;
}

static int bad_chunk(struct decoder *d, const char *reason)
{
	return refuse(d, RPCRDMA_HDR_REPLY_ERR_CHUNK, reason);
}

/* The header ran out: either the message is short, or the header is longer
 * than this end accepts. */
static int truncated(struct decoder *d, const char *reason)
{
	return bad_chunk(d, d->clipped ? "header larger than the configured limit" : reason);
}

/* A list discriminator: XDR optional-data, so exactly 0 or 1. */
static int decode_more(struct decoder *d, bool *more)
{
	uint32_t v;

	if (header_left(d) < 4)
		return truncated(d, "header truncated in a chunk list");
	v = peek_u32(d);
	if (v > 1)
		return bad_chunk(d, "list discriminator is neither 0 nor 1");
	d->p += 4;
	*more = v == 1;
	return 0;
}

static int decode_segment(struct decoder *d, struct rpcrdma_segment *seg)
{
	uint64_t end;

	if (!get_u32(d, &seg->handle) || !get_u32(d, &seg->length) || !get_u64(d, &seg->offset))
		return truncated(d, "header truncated in a segment");
	if (__builtin_add_overflow(seg->offset, (uint64_t)seg->length, &end))
		return bad_chunk(d, "segment offset + length overflows");
	return 0;
}

static int decode_read_list(struct decoder *d)
{
	struct rpcrdma_hdr *hdr = d->hdr;
	bool more;
	int rc;

	for (;;) {
		struct rpcrdma_read_segment *rs;

		rc = decode_more(d, &more);
		if (rc || !more)
			return rc;
		/* The limit, and never past the array whatever it says. */
		if (hdr->nreads >= d->lim->max_reads || hdr->nreads >= RPCRDMA_HDR_MAX_READS)
			return bad_chunk(d, "too many Read list entries");
		rs = &hdr->reads[hdr->nreads];
		if (!get_u32(d, &rs->position))
			return truncated(d, "header truncated in a read segment");
		rc = decode_segment(d, &rs->target);
		if (rc)
			return rc;
		hdr->nreads++;
		if (rs->position % RPCRDMA_XDR_UNIT)
			return bad_chunk(d, "read position not a multiple of 4");
		/* Segments of one chunk share a position and chunks follow the
		 * XDR stream's order, so positions never go backwards. */
		if (hdr->nreads > 1 && rs->position < hdr->reads[hdr->nreads - 2].position)
			return bad_chunk(d, "read positions out of order");
	}
}

/* A counted array of segments, appended to hdr->segs. */
static int decode_chunk(struct decoder *d, struct rpcrdma_chunk *chunk)
{
	struct rpcrdma_hdr *hdr = d->hdr;
	uint32_t count;
	int rc;

	/* Valid even when the count below is refused. */
	chunk->first = hdr->nsegs;
	chunk->nsegs = 0;
	if (header_left(d) < 4)
		return truncated(d, "header truncated in a chunk");
	count = peek_u32(d);
	if (count > d->lim->max_chunk_segs)
		return bad_chunk(d, "too many segments in a chunk");
	/* Divided, not multiplied: no product to overflow where size_t is
	 * 32 bits. */
	if (count > (header_left(d) - 4) / RPCRDMA_SEGMENT_SIZE)
		return truncated(d, "header truncated in a chunk");
	d->p += 4;
	if (count > RPCRDMA_HDR_MAX_SEGS - hdr->nsegs)
		return bad_chunk(d, "too many segments in the header");
	for (uint32_t i = 0; i < count; i++) {
		rc = decode_segment(d, &hdr->segs[hdr->nsegs]);
		if (rc)
			return rc;
		hdr->nsegs++;
		chunk->nsegs++;
	}
	return 0;
}

static int decode_write_list(struct decoder *d)
{
	struct rpcrdma_hdr *hdr = d->hdr;
	bool more;
	int rc;

	for (;;) {
		rc = decode_more(d, &more);
		if (rc || !more)
			return rc;
		if (hdr->nwrites >= d->lim->max_write_chunks ||
		    hdr->nwrites >= RPCRDMA_HDR_MAX_WRITE_CHUNKS)
			return bad_chunk(d, "too many Write list entries");
		rc = decode_chunk(d, &hdr->writes[hdr->nwrites]);
		hdr->nwrites++;
		if (rc)
			return rc;
	}
}

static int decode_reply_chunk(struct decoder *d)
{
	bool present;
	int rc = decode_more(d, &present);

	if (rc || !present)
		return rc;
	d->hdr->has_reply = true;
	return decode_chunk(d, &d->hdr->reply);
}

static int decode_chunk_lists(struct decoder *d)
{
	int rc = decode_read_list(d);

	if (!rc)
		rc = decode_write_list(d);
	if (!rc)
		rc = decode_reply_chunk(d);
	return rc;
}

/* RDMA_MSG and RDMA_MSGP: the payload is an RPC message with our XID. */
static int check_payload_xid(struct decoder *d)
{
	uint32_t be;

	/* Read from the whole message: the payload may lie past the header
	 * bound. */
	if (d->msg_len - header_pos(d) < 4)
		return bad_chunk(d, "RDMA_MSG carries no RPC message");
	memcpy(&be, d->p, 4);
	if (be32toh(be) != d->hdr->xid)
		return bad_chunk(d, "RPC message XID differs from header XID");
	return 0;
}

static int decode_error(struct decoder *d)
{
	struct rpcrdma_hdr *hdr = d->hdr;

	/* Section 5.5: an RDMA_ERROR that cannot be decoded is dropped. */
	if (!get_u32(d, &hdr->err))
		return refuse(d, RPCRDMA_HDR_DROP, "RDMA_ERROR truncated");
	switch (hdr->err) {
	case RPCRDMA_ERR_VERS:
		if (!get_u32(d, &hdr->vers_low) || !get_u32(d, &hdr->vers_high))
			return refuse(d, RPCRDMA_HDR_DROP, "ERR_VERS truncated");
		if (hdr->vers_low > hdr->vers_high)
			return refuse(d, RPCRDMA_HDR_DROP, "ERR_VERS range is empty");
		return 0;
	case RPCRDMA_ERR_CHUNK:
		return 0;
	case RPCRDMA_ERR_INVAL_OPTION:
		if (hdr->vers == RPCRDMA_VERSION_TWO)
			return 0;
		break;
	}
	return refuse(d, RPCRDMA_HDR_DROP, "unknown RDMA_ERROR code");
}

static int decode_optional(struct decoder *d)
{
	struct rpcrdma_hdr *hdr = d->hdr;
	uint32_t len;

	if (!get_u32(d, &hdr->opttype) || header_left(d) < 4)
		return truncated(d, "RDMA_OPTIONAL truncated");
	len = peek_u32(d);
	if (len > d->lim->max_optinfo)
		return bad_chunk(d, "rdma_optinfo too long");
	/* len first: aligning a length near UINT32_MAX wraps a 32-bit size_t. */
	if (len > header_left(d) - 4 || rpcrdma_xdr_align(len) > header_left(d) - 4)
		return truncated(d, "RDMA_OPTIONAL truncated");
	d->p += 4;
	hdr->optinfo = d->p;
	hdr->optinfo_len = len;
	d->p += rpcrdma_xdr_align(len);
	return 0;
}

static int decode_body(struct decoder *d)
{
	struct rpcrdma_hdr *hdr = d->hdr;
	int rc;

	switch (hdr->proc) {
	case RPCRDMA_PROC_MSG:
		rc = decode_chunk_lists(d);
		return rc ? rc : check_payload_xid(d);
	case RPCRDMA_PROC_NOMSG:
		rc = decode_chunk_lists(d);
		if (rc)
			return rc;
		/* The message travels in a chunk: a Position-Zero Read chunk
		 * (a call) or the Reply chunk (a reply). */
		if (hdr->nreads == 0 && !hdr->has_reply)
			return bad_chunk(d, "RDMA_NOMSG without a Read list or Reply chunk");
		return 0;
	case RPCRDMA_PROC_MSGP:
		if (hdr->vers != RPCRDMA_VERSION_ONE)
			return 0; /* reserved, void body in Version Two */
		if (!get_u32(d, &hdr->align) || !get_u32(d, &hdr->thresh))
			return truncated(d, "RDMA_MSGP truncated");
		rc = decode_chunk_lists(d);
		return rc ? rc : check_payload_xid(d);
	case RPCRDMA_PROC_DONE:
		return 0;
	case RPCRDMA_PROC_ERROR:
		return decode_error(d);
	case RPCRDMA_PROC_OPTIONAL:
		if (hdr->vers == RPCRDMA_VERSION_TWO)
			return decode_optional(d);
		break;
	}
	return bad_chunk(d, "unknown rdma_proc");
}

/* Every field but the arrays, which the counts guard: the arrays are 6 KiB
 * that every call would otherwise clear. */
static void clear_scalars(struct rpcrdma_hdr *hdr)
{
	memset(hdr, 0, offsetof(struct rpcrdma_hdr, reads));
	hdr->nwrites = 0;
	hdr->has_reply = false;
	hdr->reply.first = hdr->reply.nsegs = 0;
	hdr->nsegs = 0;
	hdr->err = hdr->vers_low = hdr->vers_high = 0;
	hdr->opttype = hdr->optinfo_len = 0;
	hdr->optinfo = NULL;
	hdr->hdr_len = hdr->payload_len = 0;
}

int rpcrdma_hdr_decode(const void *buf, size_t len, const struct rpcrdma_hdr_limits *lim,
		       struct rpcrdma_hdr *hdr, struct rpcrdma_hdr_fault *fault)
{
	static const uint8_t nothing[4];
	struct rpcrdma_hdr_limits defaults;
	struct decoder d;
	size_t bound;
	int rc;

	/* Nowhere to say what was decoded or why it was refused: no answer
	 * the caller could act on, so not a protocol verdict either. */
	if (!hdr || !fault)
		return -EINVAL;
	/* No buffer reads as no bytes (and never as a null cursor). */
	if (!buf) {
		buf = nothing;
		len = 0;
	}
	if (!lim) {
		rpcrdma_hdr_limits_default(&defaults);
		lim = &defaults;
	}
	clear_scalars(hdr);

	/* The header may not run past max_hdr_size; the payload may. */
	bound = len < lim->max_hdr_size ? len : lim->max_hdr_size;
	d.p = buf;
	d.end = d.p + bound;
	d.lim = lim;
	d.hdr = hdr;
	d.fault = fault;
	d.clipped = len > bound;
	d.msg = buf;
	d.msg_len = len;
	fault->action = RPCRDMA_HDR_ACCEPT;
	fault->reason = NULL;
	fault->offset = 0;

	if (!get_u32(&d, &hdr->xid) || !get_u32(&d, &hdr->vers) || !get_u32(&d, &hdr->credit) ||
	    !get_u32(&d, &hdr->proc))
		return refuse(&d, RPCRDMA_HDR_DROP, "shorter than the fixed header");

	if (hdr->vers < lim->vers_low || hdr->vers > lim->vers_high) {
		/* Never answer an error with an error; an ERR_VERS body is
		 * the same in every version, so read it if it is one. */
		if (hdr->proc == RPCRDMA_PROC_ERROR) {
			rc = decode_error(&d);
			if (rc)
				return rc;
			if (hdr->err != RPCRDMA_ERR_VERS)
				return refuse(&d, RPCRDMA_HDR_DROP,
					      "RDMA_ERROR of unknown version");
			goto out_ok;
		}
		return refuse(&d, RPCRDMA_HDR_REPLY_ERR_VERS, "unsupported version");
	}

	rc = decode_body(&d);
	if (rc)
		return rc;

out_ok:
	/* The payload is everything after the header, in the full message. */
	hdr->hdr_len = header_pos(&d);
	hdr->payload_len = len - hdr->hdr_len;
	return 0;
}

/* Encoding. */

/* nsegs is checked too: a struct filled by hand may count past segs[]. */
static bool chunk_valid(const struct rpcrdma_hdr *hdr, const struct rpcrdma_chunk *c)
{
	return hdr->nsegs <= RPCRDMA_HDR_MAX_SEGS && c->first <= hdr->nsegs &&
	       c->nsegs <= hdr->nsegs - c->first;
}

static bool lists_valid(const struct rpcrdma_hdr *hdr)
{
	if (hdr->nreads > RPCRDMA_HDR_MAX_READS || hdr->nwrites > RPCRDMA_HDR_MAX_WRITE_CHUNKS ||
	    hdr->nsegs > RPCRDMA_HDR_MAX_SEGS)
		return false;
	for (uint32_t i = 0; i < hdr->nwrites; i++) {
		if (!chunk_valid(hdr, &hdr->writes[i]))
			return false;
	}
	return !hdr->has_reply || chunk_valid(hdr, &hdr->reply);
}

static size_t chunk_lists_size(const struct rpcrdma_hdr *hdr)
{
	size_t n = 4 + (size_t)hdr->nreads * (4 + RPCRDMA_READ_SEGMENT_SIZE);

	n += 4;
	for (uint32_t i = 0; i < hdr->nwrites; i++)
		n += 4 + 4 + (size_t)hdr->writes[i].nsegs * RPCRDMA_SEGMENT_SIZE;
	n += 4;
	if (hdr->has_reply)
		n += 4 + (size_t)hdr->reply.nsegs * RPCRDMA_SEGMENT_SIZE;
	return n;
}

size_t rpcrdma_hdr_encoded_size(const struct rpcrdma_hdr *hdr)
{
	size_t n = RPCRDMA_HDR_PREFIX_SIZE;

	if (!hdr)
		return 0;
	switch (hdr->proc) {
	case RPCRDMA_PROC_MSG:
	case RPCRDMA_PROC_NOMSG:
		return lists_valid(hdr) ? n + chunk_lists_size(hdr) : 0;
	case RPCRDMA_PROC_MSGP:
		if (hdr->vers != RPCRDMA_VERSION_ONE)
			return n;
		return lists_valid(hdr) ? n + 8 + chunk_lists_size(hdr) : 0;
	case RPCRDMA_PROC_DONE:
		return n;
	case RPCRDMA_PROC_ERROR:
		switch (hdr->err) {
		case RPCRDMA_ERR_VERS:
			return n + 12;
		case RPCRDMA_ERR_CHUNK:
		case RPCRDMA_ERR_INVAL_OPTION:
			return n + 4;
		}
		return 0;
	case RPCRDMA_PROC_OPTIONAL:
		if (hdr->optinfo_len && !hdr->optinfo)
			return 0;
		return n + 8 + rpcrdma_xdr_align(hdr->optinfo_len);
	}
	return 0;
}

/*
 * The encoder writes through a plain pointer into room it sized first: the
 * header lands straight in the stream's element when it fits there whole
 * (always, for the library's own send buffers), else in a scratch buffer
 * copied in after.
 */
static uint8_t *put_u32(uint8_t *p, uint32_t v)
{
	uint32_t be = htobe32(v);

	memcpy(p, &be, 4);
	return p + 4;
}

static uint8_t *put_segment(uint8_t *p, const struct rpcrdma_segment *seg)
{
	uint64_t be = htobe64(seg->offset);

	p = put_u32(p, seg->handle);
	p = put_u32(p, seg->length);
	memcpy(p, &be, 8);
	return p + 8;
}

static uint8_t *put_chunk(uint8_t *p, const struct rpcrdma_hdr *hdr, const struct rpcrdma_chunk *c)
{
	p = put_u32(p, c->nsegs);
	for (uint32_t i = 0; i < c->nsegs; i++)
		p = put_segment(p, &hdr->segs[c->first + i]);
	return p;
}

static uint8_t *put_chunk_lists(uint8_t *p, const struct rpcrdma_hdr *hdr)
{
	for (uint32_t i = 0; i < hdr->nreads; i++) {
		p = put_u32(p, 1);
		p = put_u32(p, hdr->reads[i].position);
		p = put_segment(p, &hdr->reads[i].target);
	}
	p = put_u32(p, 0);
	for (uint32_t i = 0; i < hdr->nwrites; i++) {
		p = put_u32(p, 1);
		p = put_chunk(p, hdr, &hdr->writes[i]);
	}
	p = put_u32(p, 0);
	p = put_u32(p, hdr->has_reply);
	if (hdr->has_reply)
		p = put_chunk(p, hdr, &hdr->reply);
	return p;
}

/* Writes exactly rpcrdma_hdr_encoded_size(hdr) bytes at @p. */
static void encode_flat(const struct rpcrdma_hdr *hdr, uint8_t *p)
{
	size_t pad;

	p = put_u32(p, hdr->xid);
	p = put_u32(p, hdr->vers);
	p = put_u32(p, hdr->credit);
	p = put_u32(p, hdr->proc);
	switch (hdr->proc) {
	case RPCRDMA_PROC_MSGP:
		if (hdr->vers != RPCRDMA_VERSION_ONE)
			break;
		p = put_u32(p, hdr->align);
		p = put_u32(p, hdr->thresh);
		/* fall through */
	case RPCRDMA_PROC_MSG:
	case RPCRDMA_PROC_NOMSG:
		put_chunk_lists(p, hdr);
		break;
	case RPCRDMA_PROC_ERROR:
		p = put_u32(p, hdr->err);
		if (hdr->err == RPCRDMA_ERR_VERS) {
			p = put_u32(p, hdr->vers_low);
			put_u32(p, hdr->vers_high);
		}
		break;
	case RPCRDMA_PROC_OPTIONAL:
		p = put_u32(p, hdr->opttype);
		p = put_u32(p, hdr->optinfo_len);
		if (hdr->optinfo_len)
			memcpy(p, hdr->optinfo, hdr->optinfo_len);
		pad = rpcrdma_xdr_align(hdr->optinfo_len) - hdr->optinfo_len;
		memset(p + hdr->optinfo_len, 0, pad);
		break;
	default:
		break;
	}
}

int rpcrdma_hdr_encode_xdr(const struct rpcrdma_hdr *hdr, struct rpcrdma_xdr_stream *xdr)
{
	size_t size = rpcrdma_hdr_encoded_size(hdr);
	uint8_t *p, *scratch;
	int rc;

	if (size == 0 || !xdr)
		return -EINVAL;
	if (size > INT32_MAX)
		return -EINVAL;
	/* Sized first, so nothing below can run out of room. */
	if (size > rpcrdma_xdr_remaining(xdr))
		return RPCRDMA_ERR_NOSPACE;
	p = rpcrdma_xdr_inline(xdr, size);
	if (p) {
		encode_flat(hdr, p);
		return (int)size;
	}
	/* The room spans elements. */
	scratch = malloc(size);
	if (!scratch)
		return -ENOMEM;
	encode_flat(hdr, scratch);
	rc = rpcrdma_xdr_encode_fixed_opaque(xdr, scratch, size);
	free(scratch);
	return rc ? rc : (int)size;
}

int rpcrdma_hdr_encode(const struct rpcrdma_hdr *hdr, void *buf, size_t cap)
{
	struct rpcrdma_xdr_stream xdr;

	if (!buf && cap)
		return -EINVAL;
	rpcrdma_xdr_init(&xdr, buf, cap);
	return rpcrdma_hdr_encode_xdr(hdr, &xdr);
}

/* Builders. */

void rpcrdma_hdr_init(struct rpcrdma_hdr *hdr, uint32_t xid, uint32_t vers, uint32_t credit,
		      uint32_t proc)
{
	if (!hdr)
		return;
	clear_scalars(hdr);
	hdr->xid = xid;
	hdr->vers = vers;
	hdr->credit = credit;
	hdr->proc = proc;
}

int rpcrdma_hdr_add_read(struct rpcrdma_hdr *hdr, uint32_t position,
			 const struct rpcrdma_segment *seg)
{
	if (!hdr || !seg)
		return -EINVAL;
	if (hdr->nreads >= RPCRDMA_HDR_MAX_READS)
		return -ENOSPC;
	hdr->reads[hdr->nreads].position = position;
	hdr->reads[hdr->nreads].target = *seg;
	hdr->nreads++;
	return 0;
}

static int append_segs(struct rpcrdma_hdr *hdr, const struct rpcrdma_segment *segs, uint32_t n,
		       struct rpcrdma_chunk *chunk)
{
	if ((n && !segs) || hdr->nsegs > RPCRDMA_HDR_MAX_SEGS)
		return -EINVAL;
	if (n > RPCRDMA_HDR_MAX_SEGS - hdr->nsegs)
		return -ENOSPC;
	chunk->first = hdr->nsegs;
	chunk->nsegs = n;
	if (n)
		memcpy(&hdr->segs[hdr->nsegs], segs, n * sizeof(*segs));
	hdr->nsegs += n;
	return 0;
}

int rpcrdma_hdr_add_write(struct rpcrdma_hdr *hdr, const struct rpcrdma_segment *segs, uint32_t n)
{
	int rc;

	if (!hdr)
		return -EINVAL;
	if (hdr->nwrites >= RPCRDMA_HDR_MAX_WRITE_CHUNKS)
		return -ENOSPC;
	rc = append_segs(hdr, segs, n, &hdr->writes[hdr->nwrites]);
	if (rc == 0)
		hdr->nwrites++;
	return rc;
}

int rpcrdma_hdr_set_reply(struct rpcrdma_hdr *hdr, const struct rpcrdma_segment *segs, uint32_t n)
{
	int rc;

	if (!hdr || hdr->has_reply)
		return -EINVAL;
	rc = append_segs(hdr, segs, n, &hdr->reply);
	if (rc == 0)
		hdr->has_reply = true;
	return rc;
}

const struct rpcrdma_segment *rpcrdma_hdr_chunk_seg(const struct rpcrdma_hdr *hdr,
						    const struct rpcrdma_chunk *chunk, uint32_t i)
{
	if (!hdr || !chunk || !chunk_valid(hdr, chunk) || i >= chunk->nsegs)
		return NULL;
	return &hdr->segs[chunk->first + i];
}

int rpcrdma_hdr_init_error(struct rpcrdma_hdr *hdr, const struct rpcrdma_hdr *bad,
			   enum rpcrdma_hdr_action action, uint32_t vers_low, uint32_t vers_high,
			   uint32_t credit)
{
	uint32_t err;

	if (!hdr || !bad)
		return -EINVAL;
	switch (action) {
	case RPCRDMA_HDR_REPLY_ERR_VERS:
		err = RPCRDMA_ERR_VERS;
		break;
	case RPCRDMA_HDR_REPLY_ERR_CHUNK:
		err = RPCRDMA_ERR_CHUNK;
		break;
	case RPCRDMA_HDR_REPLY_INVAL_OPTION:
		err = RPCRDMA_ERR_INVAL_OPTION;
		break;
	default:
		return -EINVAL;
	}
	/* Section 5.5: the error echoes the failing message's XID and
	 * version. */
	rpcrdma_hdr_init(hdr, bad->xid, bad->vers, credit, RPCRDMA_PROC_ERROR);
	hdr->err = err;
	hdr->vers_low = vers_low;
	hdr->vers_high = vers_high;
	return 0;
}
