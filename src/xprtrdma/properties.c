/*
 * The engine's side of the transport-properties optional feature
 * (RPCRDMA_OPT_PROPERTIES; docs/rpcrdma-v2-properties.md), the one
 * RPC-over-RDMA Version Two optional feature this library ships.  The
 * registry and the codec are sans-I/O (src/proto/options.c); this file owns
 * what the exchange carries from this engine (our four properties, the same
 * from both roles) and what receiving it does to a connection at the
 * responder: the peer's receive size becomes our inline send threshold,
 * without a reconnection (draft 5.2), and the answer carries our own
 * properties back under the same XID.  The requester's half (sending the
 * exchange once Version Two is agreed, applying the answer) is in clnt_vers.c.
 */
#include <errno.h>
#include <string.h>

#include "proto/version.h"
#include "xprtrdma/xprt.h"

int rpcrdma__xprops_build(uint8_t *buf, size_t cap, uint32_t our_send, uint32_t our_recv,
			  uint32_t credits)
{
	struct rpcrdma__props ours;

	memset(&ours, 0, sizeof(ours));
	ours.present = 1u << RPCRDMA_PROP_RECV_SIZE | 1u << RPCRDMA_PROP_SEND_SIZE |
		       1u << RPCRDMA_PROP_CREDITS | 1u << RPCRDMA_PROP_REVERSE;
	ours.recv_size = our_recv;
	ours.send_size = our_send;
	ours.credits = credits;
	/* Both roles take reverse-direction traffic on every connection
	 * this engine runs; whether the upper layer uses it is still RFC
	 * 8167 section 6's business. */
	ours.reverse = 1;
	return rpcrdma__props_encode(&ours, buf, cap);
}

static enum rpcrdma_hdr_action props_handle(void *ctx, const struct rpcrdma_hdr *hdr,
					    const uint8_t *payload, size_t payload_len)
{
	struct rpcrdma__xopt_ctx *o = ctx;
	struct rpcrdma__props peer;
	int n;

	(void)payload;
	(void)payload_len; /* the registry refused any payload already */
	o->answer_len = 0;
	if (!o->conn || rpcrdma__props_decode(hdr->optinfo, hdr->optinfo_len, &peer))
		return RPCRDMA_HDR_REPLY_ERR_CHUNK;
	n = rpcrdma__xprops_build(o->answer, sizeof(o->answer), o->our_send, o->our_recv,
				  o->credits);
	if (n < 0)
		return RPCRDMA_HDR_DROP;
	o->conn->thr.send_max = rpcrdma__props_send_max(&peer, o->our_send, o->conn->thr.send_max);
	o->peer = peer;
	o->answer_len = (uint32_t)n;
	return RPCRDMA_HDR_ACCEPT;
}

const struct rpcrdma__opt_feature rpcrdma__xprops_feature = {
    .opttype = RPCRDMA_OPT_PROPERTIES,
    .name = "transport-properties",
    .payload = RPCRDMA__OPT_PAYLOAD_NEVER,
    .handle = props_handle,
};
