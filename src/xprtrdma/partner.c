/*
 * The connection layer's part of bidirectional RPC-over-RDMA (RFC 8167):
 * which way a received message goes, a partner's counters as the owner's
 * reverse-direction ones, and the partners kept on a provider instance
 * until their last operation completed.  Role-neutral: the owner and its
 * partner meet through struct rpcrdma__xpartner (xprt.h).
 */
#include <errno.h> /* provider.h's inline functions */

#include "proto/direction.h"
#include "xprtrdma/xprt.h"

int rpcrdma__bc_direction(const uint8_t *buf, uint32_t len, const struct rpcrdma_hdr_limits *lim,
			  struct rpcrdma_hdr *scratch)
{
	struct rpcrdma_hdr_fault fault;

	if (rpcrdma_hdr_decode(buf, len, lim, scratch, &fault))
		return RPCRDMA__DIR_UNKNOWN;
	if (scratch->hdr_len > len || scratch->payload_len > len - scratch->hdr_len)
		return RPCRDMA__DIR_INVALID;
	return (int)rpcrdma__msg_direction(scratch, buf + scratch->hdr_len, scratch->payload_len);
}

void rpcrdma__bc_fold_stats(struct rpcrdma_xprt_stats *out, const struct rpcrdma_xprt_stats *p,
			    bool requester)
{
	/* A requester partner (server) sends calls and receives replies; a
	 * responder partner (client) the other way round. */
	out->rev_calls += requester ? p->calls_sent : p->calls_received;
	out->rev_replies += requester ? p->calls_received : p->calls_sent;
	/* Both ends count a reverse call once when its arguments move by
	 * RDMA Read (Read chunks or a Long Call). */
	out->rev_chunk_msgs += p->read_chunk_msgs + p->long_calls;
	out->rev_long_msgs += p->long_calls + p->long_replies;
	out->rev_rdma_bytes += p->rdma_read_bytes + p->rdma_write_bytes;
	out->rev_errors += requester ? p->rdma_errors_received : p->rdma_errors_sent;
	if (p->credits_granted)
		out->rev_credits_granted = p->credits_granted;
	if (p->credits_in_use_max > out->rev_credits_in_use_max)
		out->rev_credits_in_use_max = p->credits_in_use_max;
	out->rev_timeouts += p->timeouts;
	out->rev_retransmits += p->retransmits;
	out->rev_dropped += p->rev_dropped;
	out->rev_bad_msgs += p->bad_msgs;
	/* A responder partner (client) closes the connection when the
	 * server leaves a reverse call's Read chunks unread. */
	out->rev_record_timeouts += p->record_timeouts;
}

void rpcrdma__xdev_bury(struct rpcrdma__xdev *dev, struct rpcrdma__xpartner *p)
{
	p->buried_next = dev->buried;
	dev->buried = p;
}

void rpcrdma__xdev_reap(struct rpcrdma__xdev *dev, bool all)
{
	struct rpcrdma__xpartner **pp = &dev->buried, *p;

	while ((p = *pp)) {
		if (all || p->ops->idle(p)) {
			*pp = p->buried_next;
			p->ops->free(p);
		} else {
			pp = &p->buried_next;
		}
	}
}
