/*
 * rpc_msg.c - ONC RPC version 2 message headers (RFC 5531 section 9): the
 * call header and every reply form, encoded and decoded through XDR
 * streams, and the names of the reply status codes.
 *
 * A decode either hands over the whole header with the stream at the body,
 * or changes nothing; an encode refuses with RPCRDMA_ERR_NOSPACE before
 * writing a byte.  The stat values that select a layout must be RFC 5531's
 * (else RPCRDMA_ERR_BAD_RPC); auth flavors and auth_stat pass unchecked
 * (open registries that do not change the layout); a call whose rpcvers is
 * not 2 stops after rpcvers, since the server needs only the XID to answer.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "rpc/rpc_msg_internal.h"
#include "rpcrdma/rpc_msg.h"
#include "xdr/xdr_word.h"

/* xid, msg_type, rpcvers, prog, vers, proc */
#define CALL_FIXED_SIZE (6 * RPCRDMA_XDR_UNIT)
/* xid, msg_type, reply_stat */
#define REPLY_FIXED_SIZE (3 * RPCRDMA_XDR_UNIT)

/*
 * Enums travel as signed 32-bit words.  Values this module checks go through
 * the signed decoder so a negative one is plainly out of range; the struct
 * fields are unsigned, and int32_t -> uint32_t is well defined.
 */
static int decode_enum_u32(struct rpcrdma_xdr_stream *xdr, uint32_t *v)
{
	int32_t e;
	int rc = rpcrdma_xdr_decode_enum(xdr, &e);

	if (rc == 0)
		*v = (uint32_t)e;
	return rc;
}

static int decode_auth(struct rpcrdma_xdr_stream *xdr, struct rpcrdma_opaque_auth *auth)
{
	int rc = decode_enum_u32(xdr, &auth->flavor);

	if (rc)
		return rc;
	return rpcrdma_xdr_decode_opaque(xdr, auth->body, RPCRDMA_AUTH_BODY_MAX, &auth->len);
}

static int decode_call(struct rpcrdma_xdr_stream *xdr, struct rpcrdma_rpc_call *call)
{
	int rc = rpcrdma__xdr_get_u32(xdr, &call->rpcvers);

	if (rc)
		return rc;
	if (call->rpcvers != RPCRDMA_RPC_VERSION)
		return 0;
	if ((rc = rpcrdma__xdr_get_u32(xdr, &call->prog)) ||
	    (rc = rpcrdma__xdr_get_u32(xdr, &call->vers)) ||
	    (rc = rpcrdma__xdr_get_u32(xdr, &call->proc)) || (rc = decode_auth(xdr, &call->cred)))
		return rc;
	return decode_auth(xdr, &call->verf);
}

static int decode_mismatch(struct rpcrdma_xdr_stream *xdr, struct rpcrdma_rpc_reply *reply)
{
	int rc = rpcrdma__xdr_get_u32(xdr, &reply->mismatch_low);

	if (rc)
		return rc;
	return rpcrdma__xdr_get_u32(xdr, &reply->mismatch_high);
}

static int decode_accepted(struct rpcrdma_xdr_stream *xdr, struct rpcrdma_rpc_reply *reply)
{
	int rc = decode_auth(xdr, &reply->verf);

	if (rc || (rc = decode_enum_u32(xdr, &reply->accept_stat)))
		return rc;
	switch (reply->accept_stat) {
	case RPCRDMA_RPC_SUCCESS:
	case RPCRDMA_RPC_PROG_UNAVAIL:
	case RPCRDMA_RPC_PROC_UNAVAIL:
	case RPCRDMA_RPC_GARBAGE_ARGS:
	case RPCRDMA_RPC_SYSTEM_ERR:
		return 0;
	case RPCRDMA_RPC_PROG_MISMATCH:
		return decode_mismatch(xdr, reply);
	}
	return RPCRDMA_ERR_BAD_RPC;
}

static int decode_denied(struct rpcrdma_xdr_stream *xdr, struct rpcrdma_rpc_reply *reply)
{
	int rc = decode_enum_u32(xdr, &reply->reject_stat);

	if (rc)
		return rc;
	switch (reply->reject_stat) {
	case RPCRDMA_RPC_MISMATCH:
		return decode_mismatch(xdr, reply);
	case RPCRDMA_RPC_AUTH_ERROR:
		return decode_enum_u32(xdr, &reply->auth_stat);
	}
	return RPCRDMA_ERR_BAD_RPC;
}

static int decode_reply(struct rpcrdma_xdr_stream *xdr, struct rpcrdma_rpc_reply *reply)
{
	int rc = decode_enum_u32(xdr, &reply->stat);

	if (rc)
		return rc;
	switch (reply->stat) {
	case RPCRDMA_RPC_MSG_ACCEPTED:
		return decode_accepted(xdr, reply);
	case RPCRDMA_RPC_MSG_DENIED:
		return decode_denied(xdr, reply);
	}
	return RPCRDMA_ERR_BAD_RPC;
}

/*
 * The common headers in one pass over contiguous bytes: a version 2 call,
 * or an accepted reply other than PROG_MISMATCH, lying whole in the
 * stream's current element.  Every check is made before @msg is written;
 * anything else (a header split across elements, a short or malformed one,
 * the rarer layouts) returns false with nothing changed, and the general
 * decoder below answers it, errors included.
 */
struct flat {
	const uint8_t *p, *end;
};

static bool flat_u32(struct flat *f, uint32_t *v)
{
	uint32_t be;

	if (f->end - f->p < 4)
		return false;
	memcpy(&be, f->p, 4);
	f->p += 4;
	*v = be32toh(be);
	return true;
}

/* The flavor and length of an auth; its body is left at *body. */
static bool flat_auth(struct flat *f, uint32_t *flavor, uint32_t *len, const uint8_t **body)
{
	if (!flat_u32(f, flavor) || !flat_u32(f, len) || *len > RPCRDMA_AUTH_BODY_MAX ||
	    rpcrdma_xdr_align(*len) > (size_t)(f->end - f->p))
		return false;
	*body = f->p;
	f->p += rpcrdma_xdr_align(*len);
	return true;
}

static void flat_auth_store(struct rpcrdma_opaque_auth *auth, uint32_t flavor, uint32_t len,
			    const uint8_t *body)
{
	auth->flavor = flavor;
	auth->len = len;
	if (len) /* most are AUTH_NONE: no call for nothing */
		memcpy(auth->body, body, len);
}

/* The current element's bytes from the stream's position on. */
static const uint8_t *flat_begin(const struct rpcrdma_xdr_stream *xdr, struct flat *f)
{
	const struct iovec *e;
	size_t avail;

	if (xdr->seg >= xdr->iovcnt)
		return NULL;
	e = &xdr->iov[xdr->seg];
	avail = e->iov_len - xdr->seg_off;
	if (avail > rpcrdma_xdr_remaining(xdr))
		avail = rpcrdma_xdr_remaining(xdr);
	f->p = (const uint8_t *)e->iov_base + xdr->seg_off;
	f->end = f->p + avail;
	return f->p;
}

/* An accepted reply's words after msg_type, in the flat form: reply_stat,
 * the verifier, and an accept_stat whose layout has nothing after it. */
struct flat_reply {
	uint32_t flavor, len, stat;
	const uint8_t *body;
};

static bool flat_reply_parse(struct flat *f, struct flat_reply *r)
{
	uint32_t reply_stat;

	if (!flat_u32(f, &reply_stat) || reply_stat != RPCRDMA_RPC_MSG_ACCEPTED ||
	    !flat_auth(f, &r->flavor, &r->len, &r->body) || !flat_u32(f, &r->stat))
		return false;
	switch (r->stat) {
	case RPCRDMA_RPC_SUCCESS:
	case RPCRDMA_RPC_PROG_UNAVAIL:
	case RPCRDMA_RPC_PROC_UNAVAIL:
	case RPCRDMA_RPC_GARBAGE_ARGS:
	case RPCRDMA_RPC_SYSTEM_ERR:
		return true;
	}
	return false;
}

static bool decode_flat(struct rpcrdma_xdr_stream *xdr, struct rpcrdma_rpc_msg *msg)
{
	uint32_t w[6], flavor[2], len[2];
	const uint8_t *body[2], *start;
	struct flat_reply fr;
	struct flat f;

	start = flat_begin(xdr, &f);
	if (!start || !flat_u32(&f, &w[0]) || !flat_u32(&f, &w[1]))
		return false;
	if (w[1] == RPCRDMA_RPC_CALL) {
		/* rpcvers, prog, vers, proc */
		for (int i = 2; i < 6; i++) {
			if (!flat_u32(&f, &w[i]))
				return false;
		}
		if (w[2] != RPCRDMA_RPC_VERSION ||
		    !flat_auth(&f, &flavor[0], &len[0], &body[0]) ||
		    !flat_auth(&f, &flavor[1], &len[1], &body[1]))
			return false;
		memset(msg, 0, sizeof(*msg));
		msg->u.call.rpcvers = w[2];
		msg->u.call.prog = w[3];
		msg->u.call.vers = w[4];
		msg->u.call.proc = w[5];
		flat_auth_store(&msg->u.call.cred, flavor[0], len[0], body[0]);
		flat_auth_store(&msg->u.call.verf, flavor[1], len[1], body[1]);
	} else if (w[1] == RPCRDMA_RPC_REPLY) {
		if (!flat_reply_parse(&f, &fr))
			return false;
		memset(msg, 0, sizeof(*msg));
		msg->u.reply.stat = RPCRDMA_RPC_MSG_ACCEPTED;
		flat_auth_store(&msg->u.reply.verf, fr.flavor, fr.len, fr.body);
		msg->u.reply.accept_stat = fr.stat;
	} else {
		return false;
	}
	msg->xid = w[0];
	msg->type = w[1];
	/* Inside the current element, so this cannot fail. */
	rpcrdma_xdr_inline(xdr, (size_t)(f.p - start));
	return true;
}

int rpcrdma__rpc_decode_reply(struct rpcrdma_xdr_stream *xdr, struct rpcrdma_rpc_reply *reply,
			      bool *not_reply)
{
	struct rpcrdma_xdr_stream save;
	const uint8_t *start;
	struct rpcrdma_rpc_msg m;
	struct flat_reply fr;
	uint32_t w[2];
	struct flat f;
	int rc;

	*not_reply = false;
	start = flat_begin(xdr, &f);
	if (start && flat_u32(&f, &w[0]) && flat_u32(&f, &w[1]) && w[1] == RPCRDMA_RPC_REPLY &&
	    flat_reply_parse(&f, &fr)) {
		reply->stat = RPCRDMA_RPC_MSG_ACCEPTED;
		flat_auth_store(&reply->verf, fr.flavor, fr.len, fr.body);
		reply->accept_stat = fr.stat;
		reply->mismatch_low = reply->mismatch_high = 0;
		reply->reject_stat = reply->auth_stat = 0;
		rpcrdma_xdr_inline(xdr, (size_t)(f.p - start));
		return 0;
	}
	/* Everything else, errors included, the general way. */
	save = *xdr;
	rc = rpcrdma_rpc_decode_msg(xdr, &m);
	if (rc)
		return rc;
	if (m.type != RPCRDMA_RPC_REPLY) {
		*xdr = save;
		*not_reply = true;
		return RPCRDMA_ERR_BAD_RPC;
	}
	*reply = m.u.reply;
	return 0;
}

int rpcrdma_rpc_decode_msg(struct rpcrdma_xdr_stream *xdr, struct rpcrdma_rpc_msg *msg)
{
	struct rpcrdma_xdr_stream save;
	struct rpcrdma_rpc_msg m;
	int rc;

	if (!xdr || !msg)
		return -EINVAL;
	if (decode_flat(xdr, msg))
		return 0;
	save = *xdr;
	/*
	 * Zero first: fields the message does not carry read as zero (AUTH_NONE
	 * with an empty body), and two decodes of one header compare equal
	 * byte for byte.
	 */
	memset(&m, 0, sizeof(m));
	rc = rpcrdma__xdr_get_u32(xdr, &m.xid);
	if (rc || (rc = decode_enum_u32(xdr, &m.type)))
		goto out_restore;
	switch (m.type) {
	case RPCRDMA_RPC_CALL:
		rc = decode_call(xdr, &m.u.call);
		break;
	case RPCRDMA_RPC_REPLY:
		rc = decode_reply(xdr, &m.u.reply);
		break;
	default:
		rc = RPCRDMA_ERR_BAD_RPC;
		break;
	}
	if (rc)
		goto out_restore;
	*msg = m;
	return 0;

out_restore:
	*xdr = save;
	return rc;
}

/*
 * The encoders size the header, then write it through a plain pointer:
 * straight into the stream when the room lies in one element, else into a
 * scratch buffer copied in after (a header is at most CALL_MAX bytes).
 * Every value goes out as its 32-bit pattern; enums the layout depends on
 * were checked to be known values, all small, so that is the enum's XDR.
 */
#define CALL_MAX (CALL_FIXED_SIZE + 2 * (2 * RPCRDMA_XDR_UNIT + RPCRDMA_AUTH_BODY_MAX))

static uint8_t *put_u32(uint8_t *p, uint32_t v)
{
	uint32_t be = htobe32(v);

	memcpy(p, &be, 4);
	return p + 4;
}

static uint8_t *put_auth(uint8_t *p, const struct rpcrdma_opaque_auth *auth)
{
	size_t pad = rpcrdma_xdr_align(auth->len) - auth->len;

	p = put_u32(p, auth->flavor);
	p = put_u32(p, auth->len);
	if (!auth->len) /* AUTH_NONE, mostly: no calls for nothing */
		return p;
	memcpy(p, auth->body, auth->len);
	memset(p + auth->len, 0, pad);
	return p + auth->len + pad;
}

static size_t auth_size(const struct rpcrdma_opaque_auth *auth)
{
	return 2 * RPCRDMA_XDR_UNIT + rpcrdma_xdr_align(auth->len);
}

/* The room for @size bytes of header: in the stream, or @scratch. */
static uint8_t *header_room(struct rpcrdma_xdr_stream *xdr, size_t size, uint8_t *scratch,
			    bool *staged)
{
	uint8_t *p = rpcrdma_xdr_inline(xdr, size);

	*staged = p == NULL;
	return p ? p : scratch;
}

static void header_done(struct rpcrdma_xdr_stream *xdr, const uint8_t *scratch, size_t size,
			bool staged)
{
	/* The room was checked, so the copy cannot fail. */
	if (staged)
		(void)rpcrdma_xdr_encode_fixed_opaque(xdr, scratch, size);
}

int rpcrdma__rpc_encode_call_parts(struct rpcrdma_xdr_stream *xdr, uint32_t xid, uint32_t prog,
				   uint32_t vers, uint32_t proc,
				   const struct rpcrdma_opaque_auth *cred,
				   const struct rpcrdma_opaque_auth *verf)
{
	uint8_t scratch[CALL_MAX], *p;
	size_t size;
	bool staged;

	if (!xdr || !cred || !verf || cred->len > RPCRDMA_AUTH_BODY_MAX ||
	    verf->len > RPCRDMA_AUTH_BODY_MAX)
		return -EINVAL;
	size = CALL_FIXED_SIZE + auth_size(cred) + auth_size(verf);
	if (size > rpcrdma_xdr_remaining(xdr))
		return RPCRDMA_ERR_NOSPACE;

	p = header_room(xdr, size, scratch, &staged);
	p = put_u32(p, xid);
	p = put_u32(p, RPCRDMA_RPC_CALL);
	p = put_u32(p, RPCRDMA_RPC_VERSION);
	p = put_u32(p, prog);
	p = put_u32(p, vers);
	p = put_u32(p, proc);
	p = put_auth(p, cred);
	put_auth(p, verf);
	header_done(xdr, scratch, size, staged);
	return 0;
}

int rpcrdma_rpc_encode_call(struct rpcrdma_xdr_stream *xdr, uint32_t xid,
			    const struct rpcrdma_rpc_call *call)
{
	if (!call)
		return -EINVAL;
	return rpcrdma__rpc_encode_call_parts(xdr, xid, call->prog, call->vers, call->proc,
					      &call->cred, &call->verf);
}

/* Size of what follows reply_stat, or 0 when @reply cannot be encoded. */
static size_t reply_body_size(const struct rpcrdma_rpc_reply *reply)
{
	switch (reply->stat) {
	case RPCRDMA_RPC_MSG_ACCEPTED:
		if (reply->verf.len > RPCRDMA_AUTH_BODY_MAX)
			return 0;
		switch (reply->accept_stat) {
		case RPCRDMA_RPC_SUCCESS:
		case RPCRDMA_RPC_PROG_UNAVAIL:
		case RPCRDMA_RPC_PROC_UNAVAIL:
		case RPCRDMA_RPC_GARBAGE_ARGS:
		case RPCRDMA_RPC_SYSTEM_ERR:
			return auth_size(&reply->verf) + RPCRDMA_XDR_UNIT;
		case RPCRDMA_RPC_PROG_MISMATCH:
			return auth_size(&reply->verf) + 3 * RPCRDMA_XDR_UNIT;
		}
		return 0;
	case RPCRDMA_RPC_MSG_DENIED:
		switch (reply->reject_stat) {
		case RPCRDMA_RPC_MISMATCH:
			return 3 * RPCRDMA_XDR_UNIT;
		case RPCRDMA_RPC_AUTH_ERROR:
			return 2 * RPCRDMA_XDR_UNIT;
		}
		return 0;
	}
	return 0;
}

int rpcrdma_rpc_encode_reply(struct rpcrdma_xdr_stream *xdr, uint32_t xid,
			     const struct rpcrdma_rpc_reply *reply)
{
	uint8_t scratch[CALL_MAX], *p;
	size_t body, size;
	bool staged;

	if (!xdr || !reply)
		return -EINVAL;
	body = reply_body_size(reply);
	if (body == 0)
		return -EINVAL;
	size = REPLY_FIXED_SIZE + body;
	if (size > rpcrdma_xdr_remaining(xdr))
		return RPCRDMA_ERR_NOSPACE;

	p = header_room(xdr, size, scratch, &staged);
	p = put_u32(p, xid);
	p = put_u32(p, RPCRDMA_RPC_REPLY);
	p = put_u32(p, reply->stat);
	if (reply->stat == RPCRDMA_RPC_MSG_ACCEPTED) {
		p = put_auth(p, &reply->verf);
		p = put_u32(p, reply->accept_stat);
		if (reply->accept_stat == RPCRDMA_RPC_PROG_MISMATCH) {
			p = put_u32(p, reply->mismatch_low);
			put_u32(p, reply->mismatch_high);
		}
	} else {
		p = put_u32(p, reply->reject_stat);
		if (reply->reject_stat == RPCRDMA_RPC_MISMATCH) {
			p = put_u32(p, reply->mismatch_low);
			put_u32(p, reply->mismatch_high);
		} else {
			/* auth_stat passes through unchecked, like the flavors. */
			put_u32(p, reply->auth_stat);
		}
	}
	header_done(xdr, scratch, size, staged);
	return 0;
}

const char *rpcrdma_rpc_reply_stat_name(uint32_t stat)
{
	switch (stat) {
	case RPCRDMA_RPC_MSG_ACCEPTED:
		return "MSG_ACCEPTED";
	case RPCRDMA_RPC_MSG_DENIED:
		return "MSG_DENIED";
	}
	return NULL;
}

const char *rpcrdma_rpc_accept_stat_name(uint32_t stat)
{
	switch (stat) {
	case RPCRDMA_RPC_SUCCESS:
		return "SUCCESS";
	case RPCRDMA_RPC_PROG_UNAVAIL:
		return "PROG_UNAVAIL";
	case RPCRDMA_RPC_PROG_MISMATCH:
		return "PROG_MISMATCH";
	case RPCRDMA_RPC_PROC_UNAVAIL:
		return "PROC_UNAVAIL";
	case RPCRDMA_RPC_GARBAGE_ARGS:
		return "GARBAGE_ARGS";
	case RPCRDMA_RPC_SYSTEM_ERR:
		return "SYSTEM_ERR";
	}
	return NULL;
}

const char *rpcrdma_rpc_reject_stat_name(uint32_t stat)
{
	switch (stat) {
	case RPCRDMA_RPC_MISMATCH:
		return "RPC_MISMATCH";
	case RPCRDMA_RPC_AUTH_ERROR:
		return "AUTH_ERROR";
	}
	return NULL;
}

const char *rpcrdma_rpc_auth_stat_name(uint32_t stat)
{
	/* Indexed by value: RFC 5531 numbers them densely from zero. */
	static const char *const names[] = {
		[RPCRDMA_AUTH_OK] = "AUTH_OK",
		[RPCRDMA_AUTH_BADCRED] = "AUTH_BADCRED",
		[RPCRDMA_AUTH_REJECTEDCRED] = "AUTH_REJECTEDCRED",
		[RPCRDMA_AUTH_BADVERF] = "AUTH_BADVERF",
		[RPCRDMA_AUTH_REJECTEDVERF] = "AUTH_REJECTEDVERF",
		[RPCRDMA_AUTH_TOOWEAK] = "AUTH_TOOWEAK",
		[RPCRDMA_AUTH_INVALIDRESP] = "AUTH_INVALIDRESP",
		[RPCRDMA_AUTH_FAILED] = "AUTH_FAILED",
		[RPCRDMA_AUTH_KERB_GENERIC] = "AUTH_KERB_GENERIC",
		[RPCRDMA_AUTH_TIMEEXPIRE] = "AUTH_TIMEEXPIRE",
		[RPCRDMA_AUTH_TKT_FILE] = "AUTH_TKT_FILE",
		[RPCRDMA_AUTH_DECODE] = "AUTH_DECODE",
		[RPCRDMA_AUTH_NET_ADDR] = "AUTH_NET_ADDR",
		[RPCRDMA_RPCSEC_GSS_CREDPROBLEM] = "RPCSEC_GSS_CREDPROBLEM",
		[RPCRDMA_RPCSEC_GSS_CTXPROBLEM] = "RPCSEC_GSS_CTXPROBLEM",
	};

	return stat < sizeof(names) / sizeof(names[0]) ? names[stat] : NULL;
}
