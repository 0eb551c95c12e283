/*
 * Version Two optional features (options.h): the registry and the
 * transport properties codec.
 */
#include <errno.h>
#include <string.h>

#include "proto/options.h"
#include "proto/version.h"

void rpcrdma__opt_registry_init(struct rpcrdma__opt_registry *r)
{
	memset(r, 0, sizeof(*r));
}

const struct rpcrdma__opt_feature *rpcrdma__opt_lookup(const struct rpcrdma__opt_registry *r,
						       uint32_t opttype)
{
	for (unsigned int i = 0; i < r->n; i++) {
		if (r->features[i]->opttype == opttype)
			return r->features[i];
	}
	return NULL;
}

int rpcrdma__opt_register(struct rpcrdma__opt_registry *r, const struct rpcrdma__opt_feature *f,
			  void *ctx)
{
	if (!f || !f->handle || f->payload > RPCRDMA__OPT_PAYLOAD_MAY)
		return -EINVAL;
	if (rpcrdma__opt_lookup(r, f->opttype))
		return -EEXIST;
	if (r->n >= RPCRDMA__OPT_MAX_FEATURES)
		return -ENOSPC;
	r->features[r->n] = f;
	r->ctx[r->n] = ctx;
	r->n++;
	return 0;
}

enum rpcrdma_hdr_action rpcrdma__opt_dispatch(const struct rpcrdma__opt_registry *r,
					      const struct rpcrdma_hdr *hdr, const uint8_t *payload,
					      size_t payload_len)
{
	for (unsigned int i = 0; i < r->n; i++) {
		const struct rpcrdma__opt_feature *f = r->features[i];

		if (f->opttype != hdr->opttype)
			continue;
		if ((f->payload == RPCRDMA__OPT_PAYLOAD_NEVER && payload_len) ||
		    (f->payload == RPCRDMA__OPT_PAYLOAD_ALWAYS && !payload_len))
			return RPCRDMA_HDR_REPLY_ERR_CHUNK;
		return f->handle(r->ctx[i], hdr, payload, payload_len);
	}
	return RPCRDMA_HDR_REPLY_INVAL_OPTION;
}

/* Properties, in propid order; the table drives both directions. */
static const struct {
	enum rpcrdma__propid id;
	size_t offset;
} prop_fields[] = {
    {RPCRDMA_PROP_RECV_SIZE, offsetof(struct rpcrdma__props, recv_size)},
    {RPCRDMA_PROP_SEND_SIZE, offsetof(struct rpcrdma__props, send_size)},
    {RPCRDMA_PROP_CREDITS, offsetof(struct rpcrdma__props, credits)},
    {RPCRDMA_PROP_REVERSE, offsetof(struct rpcrdma__props, reverse)},
};
#define NPROP_FIELDS (sizeof(prop_fields) / sizeof(prop_fields[0]))

static uint32_t *prop_field(struct rpcrdma__props *p, size_t i)
{
	return (uint32_t *)((char *)p + prop_fields[i].offset);
}

static int prop_index(uint32_t id)
{
	for (size_t i = 0; i < NPROP_FIELDS; i++) {
		if (prop_fields[i].id == id)
			return (int)i;
	}
	return -1;
}

size_t rpcrdma__props_size(const struct rpcrdma__props *p)
{
	size_t n = 4;

	for (size_t i = 0; i < NPROP_FIELDS; i++) {
		if (RPCRDMA__PROPS_HAS(p, prop_fields[i].id))
			n += 12; /* propid, value length, value */
	}
	return n;
}

int rpcrdma__props_encode(const struct rpcrdma__props *p, void *buf, size_t cap)
{
	struct rpcrdma_xdr_stream xdr;
	struct rpcrdma__props copy = *p;
	uint32_t count = 0;
	uint8_t word[4];

	if (rpcrdma__props_size(p) > cap)
		return -ENOSPC;
	for (size_t i = 0; i < NPROP_FIELDS; i++)
		count += RPCRDMA__PROPS_HAS(p, prop_fields[i].id);
	rpcrdma_xdr_init(&xdr, buf, cap);
	rpcrdma_xdr_encode_array_len(&xdr, count);
	for (size_t i = 0; i < NPROP_FIELDS; i++) {
		uint32_t v;

		if (!RPCRDMA__PROPS_HAS(p, prop_fields[i].id))
			continue;
		v = *prop_field(&copy, i);
		word[0] = (uint8_t)(v >> 24);
		word[1] = (uint8_t)(v >> 16);
		word[2] = (uint8_t)(v >> 8);
		word[3] = (uint8_t)v;
		rpcrdma_xdr_encode_u32(&xdr, prop_fields[i].id);
		rpcrdma_xdr_encode_opaque(&xdr, word, sizeof(word));
	}
	return (int)rpcrdma_xdr_pos(&xdr);
}

int rpcrdma__props_decode(const void *buf, size_t len, struct rpcrdma__props *p)
{
	struct rpcrdma_xdr_stream xdr;
	uint32_t count;

	memset(p, 0, sizeof(*p));
	rpcrdma_xdr_init_const(&xdr, buf, len);
	/* Each property takes at least 8 bytes: its id and an empty value. */
	if (rpcrdma_xdr_decode_array_len(&xdr, RPCRDMA_PROPS_MAX, 8, &count))
		return -EBADMSG;
	for (uint32_t k = 0; k < count; k++) {
		uint32_t id, vlen;
		uint8_t word[4];
		int i;

		if (rpcrdma_xdr_decode_u32(&xdr, &id) ||
		    rpcrdma_xdr_decode_opaque_len(&xdr, 1024, &vlen))
			return -EBADMSG;
		i = prop_index(id);
		if (i < 0) {
			/* Unknown: skip the value and its padding. */
			if (rpcrdma_xdr_skip(&xdr, rpcrdma_xdr_align(vlen)))
				return -EBADMSG;
			continue;
		}
		if (vlen != sizeof(word) ||
		    rpcrdma_xdr_decode_fixed_opaque(&xdr, word, sizeof(word)))
			return -EBADMSG;
		*prop_field(p, (size_t)i) = (uint32_t)word[0] << 24 | (uint32_t)word[1] << 16 |
					    (uint32_t)word[2] << 8 | word[3];
		p->present |= 1u << id;
	}
	if (rpcrdma_xdr_remaining(&xdr))
		return -EBADMSG;
	return 0;
}

uint32_t rpcrdma__props_send_max(const struct rpcrdma__props *peer, uint32_t our_send,
				 uint32_t current)
{
	uint32_t peer_recv;

	if (!RPCRDMA__PROPS_HAS(peer, RPCRDMA_PROP_RECV_SIZE))
		return current;
	peer_recv = peer->recv_size < RPCRDMA__V2_INLINE_DEFAULT ? RPCRDMA__V2_INLINE_DEFAULT
								 : peer->recv_size;
	return our_send < peer_recv ? our_send : peer_recv;
}
