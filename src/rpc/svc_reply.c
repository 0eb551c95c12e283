/*
 * svc_reply.c - the server core's replies: encoding each RFC 5531 reply
 * form, keeping a copy for the duplicate request cache (with where its
 * DDP-eligible results sit), handing it to a duplicate parked on the call,
 * and sending cached replies to duplicates so their DDP items travel in
 * the new call's Write chunk as the original's did.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/svc_internal.h"

#define REPLY_MAX_HINT (64u << 20) /* largest plain buffer for a cached reply */

/* The transport no longer reads the results (transport.h, done). */
static void req_reply_done(void *ctx)
{
	rpcrdma__svc_reply_done(ctx);
}

/* Encoding replies. */

enum body {
	BODY_NONE,    /* the header says it all */
	BODY_RESULTS, /* SUCCESS: encode_res follows */
};

static int encode_reply(struct rpcrdma_svc_req *r, struct rpcrdma_xdr_stream *xdr,
			const struct rpcrdma_rpc_reply *hdr, enum body body)
{
	int rc = rpcrdma_rpc_encode_reply(xdr, r->msg.xid, hdr);

	if (rc == 0 && body == BODY_RESULTS && r->proc->encode_res)
		rc = r->proc->encode_res(xdr, r->res);
	return rc;
}

/* Copy the first @n bytes a stream produced (it may be a scatter list). */
static void gather(const struct rpcrdma_xdr_stream *xdr, uint8_t *dst, size_t n)
{
	for (unsigned int i = 0; i < xdr->iovcnt && n; i++) {
		size_t take = xdr->iov[i].iov_len < n ? xdr->iov[i].iov_len : n;

		memcpy(dst, xdr->iov[i].iov_base, take);
		dst += take;
		n -= take;
	}
}

/*
 * Where the DDP-eligible items of a reply encoded for the cache fall: a
 * DDP context that leaves every item inline (so the bytes are the whole
 * reply) and notes its position and length.  Growth that fails only stops
 * the notes: the bytes stay right, and a replay then sends the rest of the
 * items inline, which at worst gets ERR_CHUNK; failing the encode instead
 * would leave the call uncached and let a retransmission run it twice.
 */
struct ddp_notes {
	struct rpcrdma_xdr_ddp base;
	struct rpcrdma__drc_ddp *items;
	unsigned int n, cap;
	bool full;
};

static int notes_encode(struct rpcrdma_xdr_ddp *ddp, size_t pos, const void *data, uint32_t len)
{
	struct ddp_notes *dn = (struct ddp_notes *)ddp;

	(void)data;
	if (dn->full)
		return 0;
	if (dn->n == dn->cap) {
		unsigned int cap = dn->cap ? dn->cap * 2 : 4;
		struct rpcrdma__drc_ddp *items = NULL;

		if (cap > dn->cap)
			items = realloc(dn->items, (size_t)cap * sizeof(*items));
		if (!items) {
			dn->full = true;
			return 0;
		}
		dn->items = items;
		dn->cap = cap;
	}
	dn->items[dn->n].off = pos;
	dn->items[dn->n].len = len;
	dn->n++;
	return 0;
}

static int notes_decode(struct rpcrdma_xdr_ddp *ddp, size_t pos, void *buf, uint32_t len)
{
	(void)ddp;
	(void)pos;
	(void)buf;
	(void)len;
	return 0;
}

static const struct rpcrdma_xdr_ddp_ops notes_ops = {
    .encode = notes_encode,
    .decode = notes_decode,
};

static void notes_init(struct ddp_notes *dn)
{
	memset(dn, 0, sizeof(*dn));
	dn->base.ops = &notes_ops;
}

static void notes_release(struct ddp_notes *dn)
{
	free(dn->items);
	notes_init(dn);
}

/*
 * The reply's bytes in a buffer of ours, for the cache: encoded again
 * without DDP, since items a transport placed directly are not in its
 * stream; @dn notes where the DDP-eligible ones are.  Returns the buffer
 * (malloc) or NULL.
 */
static uint8_t *encode_plain(struct rpcrdma_svc_req *r, const struct rpcrdma_rpc_reply *hdr,
			     enum body body, size_t *len, struct ddp_notes *dn)
{
	for (size_t room = 8192; room <= REPLY_MAX_HINT; room *= 4) {
		struct rpcrdma_xdr_stream xdr;
		uint8_t *buf = malloc(room);
		int rc;

		if (!buf)
			return NULL;
		rpcrdma_xdr_init(&xdr, buf, room);
		/* Notes from an attempt that ran out of room are stale. */
		dn->n = 0;
		dn->full = false;
		rpcrdma_xdr_set_ddp(&xdr, &dn->base);
		rc = encode_reply(r, &xdr, hdr, body);
		if (rc == 0) {
			*len = rpcrdma_xdr_pos(&xdr);
			return buf;
		}
		free(buf);
		if (rc != RPCRDMA_ERR_NOSPACE)
			return NULL;
	}
	return NULL;
}

void rpcrdma__svc_drop_parked(struct rpcrdma_server *s, struct rpcrdma_svc_req *r)
{
	rpcrdma__timer_stop(&r->watch);
	if (r->orig) {
		struct rpcrdma_svc_req **pp = &r->orig->parked;

		while (*pp && *pp != r)
			pp = &(*pp)->older;
		if (*pp)
			*pp = r->older;
	}
	r->orig = NULL;
	r->older = NULL;
	rpcrdma__svc_waiting_remove(s, r);
	s->ops->reply_drop(r->t);
	rpcrdma__svc_req_free(r);
}

/*
 * Record the reply of @r in the cache, with the @nddp DDP-eligible items in
 * it, and hand it to every duplicate parked on @r.  @bytes NULL: no reply could be
 * produced; the entry is forgotten.
 */
static void cache_reply(struct rpcrdma_server *s, struct rpcrdma_svc_req *r, const void *bytes,
			size_t len, const struct rpcrdma__drc_ddp *ddp, unsigned int nddp)
{
	struct rpcrdma_server *root = s->root;
	struct rpcrdma_svc_req *parked;

	if (!r->drc)
		return;
	pthread_mutex_lock(&root->drc_lock);
	/* No other worker may find us through the entry once it is done. */
	*rpcrdma__drc_owner(r->drc) = NULL;
	if (bytes)
		(void)rpcrdma__drc_complete_ddp(root->drc, r->drc, bytes, len, ddp, nddp);
	else
		rpcrdma__drc_forget(root->drc, r->drc);
	pthread_mutex_unlock(&root->drc_lock);
	r->drc = NULL;
	parked = r->parked;
	r->parked = NULL;
	while (parked) {
		struct rpcrdma_svc_req *older = parked->older;

		rpcrdma__svc_waiting_remove(s, parked);
		parked->orig = NULL;
		parked->older = NULL;
		if (bytes)
			rpcrdma__svc_send_cached(s, parked, bytes, len, ddp, nddp);
		else
			s->ops->reply_lost(parked->t, -ENOMEM);
		rpcrdma__svc_req_free(parked);
		parked = older;
	}
}

/*
 * Encode and send a reply for @r, then free @r.  Results that cannot be
 * encoded become SYSTEM_ERR; a transport that cannot take the reply at all
 * loses it (the cache still gets it).
 */
static void send_reply(struct rpcrdma_server *s, struct rpcrdma_svc_req *r,
		       struct rpcrdma_rpc_reply *hdr, enum body body)
{
	struct rpcrdma__sreq *t = r->t;
	struct ddp_notes dn;
	size_t prev_room = 0;
	uint8_t *plain;
	size_t len;
	int rc;

	t->reply_hint = 0;
	/* DDP results may be sent from @r's memory: the transport frees @r
	 * through req_reply_done once it is done with them. */
	t->done = req_reply_done;
	t->done_ctx = r;
	for (;;) {
		size_t room;

		rc = s->ops->reply_begin(t);
		if (rc)
			goto out_no_stream;
		room = t->reply.len;
		rc = encode_reply(r, &t->reply, hdr, body);
		if (rc == 0)
			break;
		if (rc == RPCRDMA_ERR_NOSPACE && room > prev_room) {
			prev_room = room;
			t->reply_hint = room > SIZE_MAX / 4 ? SIZE_MAX : room * 4;
			continue;
		}
		if (body == BODY_NONE) {
			/* Even a bare header does not fit: nothing to send. */
			rc = -EMSGSIZE;
			goto out_no_stream;
		}
		hdr->accept_stat = RPCRDMA_RPC_SYSTEM_ERR;
		body = BODY_NONE;
		t->reply_hint = 0;
	}
	if (r->drc) {
		/* A transport without DDP placed nothing: its stream is the reply. */
		notes_init(&dn);
		if (!t->reply.ddp) {
			len = rpcrdma_xdr_pos(&t->reply);
			plain = malloc(len ? len : 1);
			if (plain)
				gather(&t->reply, plain, len);
		} else {
			plain = encode_plain(r, hdr, body, &len, &dn);
		}
		cache_reply(s, r, plain, len, dn.items, dn.n);
		notes_release(&dn);
		free(plain);
	}
	(void)s->ops->reply_send(t);
	return;

out_no_stream:
	if (r->drc) {
		notes_init(&dn);
		plain = encode_plain(r, hdr, body, &len, &dn);
		if (!plain && body == BODY_RESULTS) {
			/* Results that do not encode are SYSTEM_ERR, as above
			 * with a stream: the connection is gone, but a duplicate
			 * parked on us (the client's retransmission) waits for
			 * this answer, and no answer would drop it. */
			hdr->accept_stat = RPCRDMA_RPC_SYSTEM_ERR;
			plain = encode_plain(r, hdr, BODY_NONE, &len, &dn);
		}
		cache_reply(s, r, plain, len, dn.items, dn.n);
		notes_release(&dn);
		free(plain);
	}
	s->ops->reply_lost(t, rc < 0 ? rc : -ENOMEM);
}

/*
 * A cached reply into @xdr: the bytes as they are, except that each DDP
 * item goes through rpcrdma_xdr_encode_ddp() again, so the transport can
 * place it in this call's Write chunk as it did (or would have done) for
 * the original.  Items that are not what they claim (notes handed straight
 * to a parked duplicate have not been through the cache) stay plain bytes.
 * The transport copies what it takes (transport.h gives it no later moment
 * at which the bytes must still be there), so the entry may go afterwards.
 */
static int encode_cached(struct rpcrdma_xdr_stream *xdr, const uint8_t *bytes, size_t len,
			 const struct rpcrdma__drc_ddp *ddp, unsigned int nddp)
{
	size_t at = 0, end = 0;
	int rc;

	for (unsigned int i = 0; i < nddp; i++) {
		if (!rpcrdma__drc_ddp_valid(bytes, len, &ddp[i], &end))
			continue;
		rc = rpcrdma_xdr_encode_fixed_opaque(xdr, bytes + at,
						     ddp[i].off - RPCRDMA_XDR_UNIT - at);
		if (!rc)
			rc = rpcrdma_xdr_encode_ddp(xdr, bytes + ddp[i].off, ddp[i].len);
		if (rc)
			return rc;
		at = end;
	}
	return rpcrdma_xdr_encode_fixed_opaque(xdr, bytes + at, len - at);
}

void rpcrdma__svc_send_cached(struct rpcrdma_server *s, struct rpcrdma_svc_req *r,
			      const void *bytes, size_t len, const struct rpcrdma__drc_ddp *ddp,
			      unsigned int nddp)
{
	struct rpcrdma__sreq *t = r->t;
	int rc;

	t->reply_hint = len;
	rc = s->ops->reply_begin(t);
	/* The stream has room for @len: only a DDP item the transport cannot
	 * take fails the copy. */
	if (!rc && encode_cached(&t->reply, bytes, len, ddp, nddp))
		rc = -ENOMEM;
	if (rc) {
		s->ops->reply_lost(t, rc < 0 ? rc : -ENOMEM);
		return;
	}
	(void)s->ops->reply_send(t);
}

void rpcrdma__svc_reply_accepted(struct rpcrdma_server *s, struct rpcrdma_svc_req *r, uint32_t stat,
				 uint32_t low, uint32_t high)
{
	struct rpcrdma_rpc_reply hdr;

	/* Field by field: an empty AUTH_NONE verifier's 400-byte body is
	 * never read, so it is not zeroed on every reply. */
	hdr.stat = RPCRDMA_RPC_MSG_ACCEPTED;
	hdr.verf.flavor = RPCRDMA_AUTH_NONE;
	hdr.verf.len = 0;
	hdr.accept_stat = stat;
	hdr.mismatch_low = low;
	hdr.mismatch_high = high;
	hdr.reject_stat = 0;
	hdr.auth_stat = 0;
	send_reply(s, r, &hdr, stat == RPCRDMA_RPC_SUCCESS ? BODY_RESULTS : BODY_NONE);
}

void rpcrdma__svc_reply_denied(struct rpcrdma_server *s, struct rpcrdma_svc_req *r, uint32_t reject,
			       uint32_t auth_stat)
{
	struct rpcrdma_rpc_reply hdr;

	memset(&hdr, 0, sizeof(hdr));
	hdr.stat = RPCRDMA_RPC_MSG_DENIED;
	hdr.reject_stat = reject;
	hdr.auth_stat = auth_stat;
	hdr.mismatch_low = RPCRDMA_RPC_VERSION;
	hdr.mismatch_high = RPCRDMA_RPC_VERSION;
	send_reply(s, r, &hdr, BODY_NONE);
}

void rpcrdma__svc_answer(struct rpcrdma_server *s, struct rpcrdma_svc_req *r, int status)
{
	uint32_t stat = RPCRDMA_RPC_SYSTEM_ERR;

	if (status == 0)
		stat = RPCRDMA_RPC_SUCCESS;
	else if (status == -RPCRDMA_RPC_PROG_UNAVAIL || status == -RPCRDMA_RPC_PROC_UNAVAIL ||
		 status == -RPCRDMA_RPC_GARBAGE_ARGS)
		stat = (uint32_t)-status;
	rpcrdma__svc_reply_accepted(s, r, stat, 0, 0);
}

bool rpcrdma__svc_cached_copy(struct rpcrdma__drc *drc, struct rpcrdma__drc_entry *e,
			      struct rpcrdma__svc_cached *c)
{
	const struct rpcrdma__drc_ddp *ddp;
	const void *bytes;

	memset(c, 0, sizeof(*c));
	rpcrdma__drc_reply(drc, e, &bytes, &c->len);
	rpcrdma__drc_reply_ddp(e, &ddp, &c->nddp);
	c->bytes = malloc(c->len ? c->len : 1);
	c->ddp = malloc(c->nddp ? c->nddp * sizeof(*ddp) : 1);
	if (!c->bytes || !c->ddp)
		return false;
	memcpy(c->bytes, bytes, c->len);
	if (c->nddp)
		memcpy(c->ddp, ddp, c->nddp * sizeof(*ddp));
	return true;
}

void rpcrdma__svc_cached_free(struct rpcrdma__svc_cached *c)
{
	free(c->bytes);
	free(c->ddp);
}
