/*
 * Fuzz the RPC message decoder and the AUTH_SYS credential decoder.
 *
 * Whatever the message decoder accepts must decode identically over a
 * scatter list, re-encode to exactly the bytes it consumed (but for opaque
 * padding, which receivers ignore), and decode again to the same fields.
 * Whatever it refuses must leave the stream where it started, with one of
 * the documented error codes.  AUTH_SYS credentials get the same treatment.
 * The client's reply decoder (rpcrdma__rpc_decode_reply) must agree with
 * the message decoder on every input, whole or split.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "rpc/rpc_msg_internal.h"
#include "rpcrdma/rpc_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The largest header: six words and two opaque_auths with 400-byte bodies. */
#define MAX_HDR (6 * 4 + 2 * (8 + RPCRDMA_AUTH_BODY_MAX))

static void check_auth_sys(const struct rpcrdma_opaque_auth *auth)
{
	struct rpcrdma_auth_sys sys, again;
	struct rpcrdma_opaque_auth out;
	int rc;

	if (auth->flavor != RPCRDMA_AUTH_SYS)
		return;
	rc = rpcrdma_auth_sys_decode(auth, &sys);
	if (rc) {
		if (rc != RPCRDMA_ERR_TRUNCATED && rc != RPCRDMA_ERR_TOO_LONG &&
		    rc != RPCRDMA_ERR_BAD_VALUE && rc != RPCRDMA_ERR_BAD_RPC)
			abort();
		return;
	}
	if (sys.ngids > RPCRDMA_AUTH_SYS_NGIDS_MAX ||
	    strlen(sys.machinename) > RPCRDMA_AUTH_SYS_MACHINENAME_MAX)
		abort();
	/* No trailing bytes are accepted, so the re-encoding is the same length. */
	if (rpcrdma_auth_sys_encode(&sys, &out) != 0 || out.len != auth->len)
		abort();
	if (rpcrdma_auth_sys_decode(&out, &again) != 0 || memcmp(&again, &sys, sizeof(sys)) != 0)
		abort();
}

/*
 * Zero the padding after an opaque_auth body that starts at @off in @buf,
 * and return the offset just past it.
 */
static size_t zero_auth_pad(uint8_t *buf, size_t off, const struct rpcrdma_opaque_auth *auth)
{
	size_t body = off + 8;
	size_t end = body + rpcrdma_xdr_align(auth->len);

	memset(buf + body + auth->len, 0, end - body - auth->len);
	return end;
}

/* The input's header as a correct encoder would have written it. */
static void normalise(uint8_t *buf, const struct rpcrdma_rpc_msg *msg)
{
	if (msg->type == RPCRDMA_RPC_CALL) {
		size_t off = zero_auth_pad(buf, 24, &msg->u.call.cred);

		zero_auth_pad(buf, off, &msg->u.call.verf);
	} else if (msg->u.reply.stat == RPCRDMA_RPC_MSG_ACCEPTED) {
		zero_auth_pad(buf, 12, &msg->u.reply.verf);
	}
}

static int encode_msg(struct rpcrdma_xdr_stream *xdr, const struct rpcrdma_rpc_msg *msg)
{
	if (msg->type == RPCRDMA_RPC_CALL)
		return rpcrdma_rpc_encode_call(xdr, msg->xid, &msg->u.call);
	return rpcrdma_rpc_encode_reply(xdr, msg->xid, &msg->u.reply);
}

static void check_round_trip(const uint8_t *data, size_t used, const struct rpcrdma_rpc_msg *msg)
{
	static uint8_t out[MAX_HDR], want[MAX_HDR];
	struct rpcrdma_xdr_stream xdr;
	struct rpcrdma_rpc_msg again;

	if (used > MAX_HDR)
		abort();
	/* One byte short is refused without a write; the exact size fits. */
	if (used) {
		rpcrdma_xdr_init(&xdr, out, used - 1);
		if (encode_msg(&xdr, msg) != RPCRDMA_ERR_NOSPACE || rpcrdma_xdr_pos(&xdr) != 0)
			abort();
	}
	rpcrdma_xdr_init(&xdr, out, used);
	if (encode_msg(&xdr, msg) != 0 || rpcrdma_xdr_pos(&xdr) != used)
		abort();

	memcpy(want, data, used);
	normalise(want, msg);
	if (memcmp(out, want, used) != 0)
		abort();

	rpcrdma_xdr_init_const(&xdr, out, used);
	if (rpcrdma_rpc_decode_msg(&xdr, &again) != 0 || rpcrdma_xdr_pos(&xdr) != used)
		abort();
	if (memcmp(&again, msg, sizeof(again)) != 0)
		abort();
}

/* A call of another RPC version stops after rpcvers with the rest zero. */
static void check_other_version(size_t used, const struct rpcrdma_rpc_msg *msg)
{
	static const struct rpcrdma_rpc_call zero;
	struct rpcrdma_rpc_call call = msg->u.call;

	call.rpcvers = 0;
	if (used != 12 || memcmp(&call, &zero, sizeof(call)) != 0)
		abort();
}

/* The reply decoder on @xdr: what decode_msg gave (@rc, @used, @msg). */
static void check_reply_decoder(struct rpcrdma_xdr_stream *xdr, int rc, size_t used,
				const struct rpcrdma_rpc_msg *msg)
{
	struct rpcrdma_rpc_reply reply, zero;
	bool not_reply = false;
	int rc_reply;

	memset(&reply, 0, sizeof(reply));
	memset(&zero, 0, sizeof(zero));
	rc_reply = rpcrdma__rpc_decode_reply(xdr, &reply, &not_reply);
	if (rc == 0 && msg->type == RPCRDMA_RPC_CALL) {
		/* A call is not a reply: refused, nothing consumed or written. */
		if (rc_reply != RPCRDMA_ERR_BAD_RPC || !not_reply || rpcrdma_xdr_pos(xdr) != 0 ||
		    memcmp(&reply, &zero, sizeof(reply)) != 0)
			abort();
		return;
	}
	if (rc_reply != rc || not_reply)
		abort();
	if (rc) {
		if (rpcrdma_xdr_pos(xdr) != 0 || memcmp(&reply, &zero, sizeof(reply)) != 0)
			abort();
		return;
	}
	if (rpcrdma_xdr_pos(xdr) != used || memcmp(&reply, &msg->u.reply, sizeof(reply)) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma_xdr_stream xdr;
	struct rpcrdma_rpc_msg msg, split;
	struct iovec iov[3];
	size_t used, a, b;
	int rc, rc_split;

	rpcrdma_xdr_init_const(&xdr, data, size);
	rc = rpcrdma_rpc_decode_msg(&xdr, &msg);
	used = rpcrdma_xdr_pos(&xdr);
	rpcrdma_xdr_init_const(&xdr, data, size);
	check_reply_decoder(&xdr, rc, used, &msg);

	/* The same bytes over three elements, split where the input says. */
	a = size ? data[0] % (size + 1) : 0;
	b = a + (size - a) / 2;
	iov[0] = (struct iovec){(void *)(uintptr_t)data, a};
	iov[1] = (struct iovec){(void *)(uintptr_t)(data + a), b - a};
	iov[2] = (struct iovec){(void *)(uintptr_t)(data + b), size - b};
	if (rpcrdma_xdr_init_iov(&xdr, iov, 3) != 0)
		abort();
	rc_split = rpcrdma_rpc_decode_msg(&xdr, &split);
	if (rc_split != rc || rpcrdma_xdr_pos(&xdr) != used)
		abort();
	if (rpcrdma_xdr_init_iov(&xdr, iov, 3) != 0)
		abort();
	check_reply_decoder(&xdr, rc, used, &msg);

	if (rc) {
		if (used != 0)
			abort();
		if (rc != RPCRDMA_ERR_TRUNCATED && rc != RPCRDMA_ERR_TOO_LONG &&
		    rc != RPCRDMA_ERR_BAD_RPC)
			abort();
		return 0;
	}
	if (memcmp(&split, &msg, sizeof(msg)) != 0)
		abort();

	if (msg.type == RPCRDMA_RPC_CALL) {
		if (msg.u.call.rpcvers != RPCRDMA_RPC_VERSION) {
			/* encode_call always writes version 2: nothing to compare. */
			check_other_version(used, &msg);
			return 0;
		}
		check_auth_sys(&msg.u.call.cred);
		check_auth_sys(&msg.u.call.verf);
	} else if (msg.u.reply.stat == RPCRDMA_RPC_MSG_ACCEPTED) {
		check_auth_sys(&msg.u.reply.verf);
	}
	check_round_trip(data, used, &msg);
	return 0;
}
