/*
 * RPC credentials this library understands: AUTH_NONE, and AUTH_SYS (RFC
 * 5531 appendix A) built into and read out of an opaque_auth body.  Other
 * flavors stay opaque bodies; rpc_msg.c carries them without looking inside.
 *
 * An AUTH_SYS body is a complete XDR structure of known shape, so reading it
 * is strict: every item must be present, within its RFC bound, and the body
 * must end exactly after the last gid.  Leftover bytes are refused rather
 * than ignored: a server that acted on a credential whose tail it skipped
 * would authorise a request on data nobody checked.  Both directions leave
 * their output untouched on failure.
 */
#include <errno.h>
#include <string.h>

#include "rpcrdma/rpc_msg.h"

void rpcrdma_auth_none(struct rpcrdma_opaque_auth *auth)
{
	if (!auth)
		return;
	/* Clear the body too, so no stale credential bytes linger. */
	memset(auth, 0, sizeof(*auth));
	auth->flavor = RPCRDMA_AUTH_NONE;
}

int rpcrdma_auth_sys_encode(const struct rpcrdma_auth_sys *sys, struct rpcrdma_opaque_auth *auth)
{
	struct rpcrdma_opaque_auth out;
	struct rpcrdma_xdr_stream xdr;
	size_t namelen;
	int rc;

	if (!sys || !auth)
		return -EINVAL;
	/* A name filling the whole array has no terminator: it is over 255. */
	namelen = strnlen(sys->machinename, sizeof(sys->machinename));
	if (namelen > RPCRDMA_AUTH_SYS_MACHINENAME_MAX || sys->ngids > RPCRDMA_AUTH_SYS_NGIDS_MAX)
		return -EINVAL;

	/*
	 * The largest body (4 + 4 + 256 + 4 + 4 + 4 + 16 * 4 = 340 bytes) fits
	 * in the 400 an opaque_auth holds, so within these limits nothing below
	 * can run out of room.
	 */
	memset(&out, 0, sizeof(out));
	out.flavor = RPCRDMA_AUTH_SYS;
	rpcrdma_xdr_init(&xdr, out.body, sizeof(out.body));
	if ((rc = rpcrdma_xdr_encode_u32(&xdr, sys->stamp)) ||
	    (rc = rpcrdma_xdr_encode_string(&xdr, sys->machinename, (uint32_t)namelen)) ||
	    (rc = rpcrdma_xdr_encode_u32(&xdr, sys->uid)) ||
	    (rc = rpcrdma_xdr_encode_u32(&xdr, sys->gid)) ||
	    (rc = rpcrdma_xdr_encode_array_len(&xdr, sys->ngids)))
		return rc;
	for (uint32_t i = 0; i < sys->ngids; i++) {
		rc = rpcrdma_xdr_encode_u32(&xdr, sys->gids[i]);
		if (rc)
			return rc;
	}
	out.len = (uint32_t)rpcrdma_xdr_pos(&xdr);
	*auth = out;
	return 0;
}

int rpcrdma_auth_sys_decode(const struct rpcrdma_opaque_auth *auth, struct rpcrdma_auth_sys *sys)
{
	struct rpcrdma_xdr_stream xdr;
	struct rpcrdma_auth_sys s;
	uint32_t namelen;
	int rc;

	/* len is checked too: the struct may come from anywhere, not only a decode. */
	if (!auth || !sys || auth->flavor != RPCRDMA_AUTH_SYS || auth->len > RPCRDMA_AUTH_BODY_MAX)
		return -EINVAL;

	memset(&s, 0, sizeof(s));
	rpcrdma_xdr_init_const(&xdr, auth->body, auth->len);
	/*
	 * The string decoder refuses a name over 255 bytes (TOO_LONG) or one
	 * holding a NUL (BAD_VALUE); the array decoder refuses more than 16
	 * gids (TOO_LONG) and a count the remaining bytes cannot back.
	 */
	if ((rc = rpcrdma_xdr_decode_u32(&xdr, &s.stamp)) ||
	    (rc = rpcrdma_xdr_decode_string(&xdr, s.machinename, sizeof(s.machinename),
					    &namelen)) ||
	    (rc = rpcrdma_xdr_decode_u32(&xdr, &s.uid)) ||
	    (rc = rpcrdma_xdr_decode_u32(&xdr, &s.gid)) ||
	    (rc = rpcrdma_xdr_decode_array_len(&xdr, RPCRDMA_AUTH_SYS_NGIDS_MAX, RPCRDMA_XDR_UNIT,
					       &s.ngids)))
		return rc;
	for (uint32_t i = 0; i < s.ngids; i++) {
		rc = rpcrdma_xdr_decode_u32(&xdr, &s.gids[i]);
		if (rc)
			return rc;
	}
	if (rpcrdma_xdr_remaining(&xdr) != 0)
		return RPCRDMA_ERR_BAD_RPC;
	*sys = s;
	return 0;
}
