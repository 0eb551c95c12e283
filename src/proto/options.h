/*
 * RPC-over-RDMA Version Two optional features, without I/O
 * (draft-cel-nfsv4-rpcrdma-version-two-00 section 3).
 *
 * A registry maps rdma_opttype to a feature: its name, whether an RPC
 * Payload Stream must, may or must not follow its transport header, and a
 * handler.  A received RDMA_OPTIONAL whose opttype nobody registered gets
 * RDMA_ERROR/RDMA_ERR_INVAL_OPTION with the same XID (section 3.1).
 *
 * One feature ships with the library so the path is used:
 * RPCRDMA_OPT_PROPERTIES, an exchange of transport properties (inline
 * sizes, credit limit, reverse-direction support) that lets both ends move
 * off the 4096-byte default thresholds without reconnecting.  Its
 * specification, in the form section 3.2 asks for, is
 * docs/rpcrdma-v2-properties.md.
 */
#ifndef RPCRDMA_PROTO_OPTIONS_H
#define RPCRDMA_PROTO_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/header.h"

/* Whether an RPC Payload Stream follows an optional message's header. */
enum rpcrdma__opt_payload {
	RPCRDMA__OPT_PAYLOAD_NEVER,  /* MUST NOT follow */
	RPCRDMA__OPT_PAYLOAD_ALWAYS, /* MUST follow */
	RPCRDMA__OPT_PAYLOAD_MAY,
};

/*
 * A feature's handler: @hdr is the decoded RDMA_OPTIONAL (opttype, optinfo),
 * @payload what followed it.  Returns RPCRDMA_HDR_ACCEPT when handled, or
 * the RDMA_ERROR to answer (RPCRDMA_HDR_REPLY_ERR_CHUNK for malformed
 * optinfo) or RPCRDMA_HDR_DROP.
 */
typedef enum rpcrdma_hdr_action (*rpcrdma__opt_fn)(void *ctx, const struct rpcrdma_hdr *hdr,
						   const uint8_t *payload, size_t payload_len);

struct rpcrdma__opt_feature {
	uint32_t opttype;
	const char *name;
	enum rpcrdma__opt_payload payload;
	rpcrdma__opt_fn handle;
};

#define RPCRDMA__OPT_MAX_FEATURES 16u

struct rpcrdma__opt_registry {
	const struct rpcrdma__opt_feature *features[RPCRDMA__OPT_MAX_FEATURES];
	void *ctx[RPCRDMA__OPT_MAX_FEATURES];
	unsigned int n;
};

void rpcrdma__opt_registry_init(struct rpcrdma__opt_registry *r);
/* Returns 0, -EEXIST for an opttype already there, -ENOSPC, or -EINVAL. */
int rpcrdma__opt_register(struct rpcrdma__opt_registry *r, const struct rpcrdma__opt_feature *f,
			  void *ctx);
const struct rpcrdma__opt_feature *rpcrdma__opt_lookup(const struct rpcrdma__opt_registry *r,
						       uint32_t opttype);

/**
 * rpcrdma__opt_dispatch - act on a received, already decoded RDMA_OPTIONAL
 *
 * An unknown opttype: RPCRDMA_HDR_REPLY_INVAL_OPTION.  A payload present
 * where the feature forbids one, or missing where it needs one:
 * RPCRDMA_HDR_REPLY_ERR_CHUNK (the header does not describe the message).
 * Otherwise what the feature's handler returns.
 */
enum rpcrdma_hdr_action rpcrdma__opt_dispatch(const struct rpcrdma__opt_registry *r,
					      const struct rpcrdma_hdr *hdr, const uint8_t *payload,
					      size_t payload_len);

/*
 * The transport properties feature.  rdma_optinfo carries
 *
 *	struct rpcrdma2_prop { uint32 rdma_propid; opaque rdma_propval<>; };
 *	typedef rpcrdma2_prop rpcrdma2_props<RPCRDMA_PROPS_MAX>;
 *
 * The properties below each carry one uint32 in rdma_propval; a receiver
 * skips properties it does not know.
 */
#define RPCRDMA_OPT_PROPERTIES 0xf6ab0001u
#define RPCRDMA_PROPS_MAX 16u

enum rpcrdma__propid {
	RPCRDMA_PROP_RECV_SIZE = 1, /* largest message the sender can receive */
	RPCRDMA_PROP_SEND_SIZE = 2, /* largest message the sender will send */
	RPCRDMA_PROP_CREDITS = 3,   /* credits the sender grants (responder) or asks */
	RPCRDMA_PROP_REVERSE = 4,   /* 1: the sender takes reverse-direction calls */
};

struct rpcrdma__props {
	uint32_t present; /* bit (1 << propid) for each property carried */
	uint32_t recv_size;
	uint32_t send_size;
	uint32_t credits;
	uint32_t reverse;
};

#define RPCRDMA__PROPS_HAS(p, id) (((p)->present >> (id)) & 1u)

/* Bytes rpcrdma__props_encode() writes for @p. */
size_t rpcrdma__props_size(const struct rpcrdma__props *p);
/* Encodes @p as rdma_optinfo.  Returns the length or -ENOSPC. */
int rpcrdma__props_encode(const struct rpcrdma__props *p, void *buf, size_t cap);
/*
 * Decodes rdma_optinfo.  Returns 0 or -EBADMSG (a length that lies, more
 * than RPCRDMA_PROPS_MAX properties, a known property whose value is not
 * exactly 4 bytes, or bytes left over).
 */
int rpcrdma__props_decode(const void *buf, size_t len, struct rpcrdma__props *p);

/**
 * rpcrdma__props_send_max - our inline send threshold after the exchange
 * @peer: the peer's properties
 * @our_send: the largest Send we are configured for
 * @current: the threshold in force before the exchange
 *
 * min(@our_send, the peer's RECV_SIZE); a RECV_SIZE below the Version Two
 * floor (4096) counts as 4096, which every Version Two receiver must
 * take; without RECV_SIZE, @current stays.
 */
uint32_t rpcrdma__props_send_max(const struct rpcrdma__props *peer, uint32_t our_send,
				 uint32_t current);

#endif /* RPCRDMA_PROTO_OPTIONS_H */
