/*
 * RPC-over-RDMA credit accounting (RFC 8166 section 3.3.1 / rfc5666bis
 * 4.3.1): the requester's view of one direction's credit limit, and the
 * grant a responder puts in its replies.  RFC 8167 section 4 keeps forward
 * and backward credits apart, so a bidirectional connection holds two
 * struct rpcrdma_credits, one per direction in which it sends calls.
 *
 * The limit in force is min(requested, granted); calls in flight count
 * against it.  Every credit value comes from the peer and is clamped:
 * 0 would stop the connection for good, and more than we asked for is
 * more than we can take replies for.
 */
#include "proto/plan.h"

static uint32_t clamp_grant(uint32_t v, uint32_t max)
{
	if (v == 0)
		return 1;
	return v < max ? v : max;
}

void rpcrdma__credits_init(struct rpcrdma_credits *c, uint32_t requested)
{
	c->requested = requested ? requested : 1;
	/* 4.3.3: "a requester MUST NOT assume more than one credit" until a
	 * reply says otherwise. */
	c->granted = 1;
	c->in_flight = 0;
	c->max_in_flight_seen = 0;
}

bool rpcrdma__credits_available(const struct rpcrdma_credits *c)
{
	uint32_t limit = c->granted < c->requested ? c->granted : c->requested;

	return c->in_flight < limit;
}

void rpcrdma__credits_sent(struct rpcrdma_credits *c)
{
	/* The engine asks rpcrdma__credits_available() first; saturate
	 * rather than wrap if it did not. */
	if (c->in_flight < UINT32_MAX)
		c->in_flight++;
	if (c->in_flight > c->max_in_flight_seen)
		c->max_in_flight_seen = c->in_flight;
}

void rpcrdma__credits_reply(struct rpcrdma_credits *c, uint32_t credit_field)
{
	if (c->in_flight)
		c->in_flight--;
	c->granted = clamp_grant(credit_field, c->requested);
}

void rpcrdma__credits_returned(struct rpcrdma_credits *c)
{
	/* No answer carries a grant for it: the last one stays in force. */
	if (c->in_flight)
		c->in_flight--;
}

void rpcrdma__credits_reset(struct rpcrdma_credits *c)
{
	/* The lost connection's receives are gone with it; the next one
	 * starts from the initial state (4.3.3). */
	c->in_flight = 0;
	c->granted = 1;
}

uint32_t rpcrdma__credits_grant(uint32_t configured, uint32_t requested)
{
	uint32_t g = requested < configured ? requested : configured;

	return g ? g : 1;
}
