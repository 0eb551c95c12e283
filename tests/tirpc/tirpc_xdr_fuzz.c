/*
 * Fuzz the TI-RPC bridge's XDR stream (src/tirpc/tirpc_xdr.c) as rpcgen's
 * routines drive it on received bytes: libtirpc's xdr_int, xdr_hyper,
 * xdr_bool, xdr_string, xdr_bytes, xdr_opaque, xdr_array, xdr_pointer and
 * xdr_union over one structure, with DDP-eligible opaques.
 *
 * Input: a byte of DDP-eligible items (bit k: the k-th non-empty opaque),
 * a byte whose low bit attaches a transport DDP context that claims to
 * have placed eligible items (as a Read chunk would; their bytes are then
 * not in the stream): all of them, or with bit 1 every other one, then
 * the stream.
 *
 * Whatever the bytes: decoding never reads past them, and succeeds only
 * with no stream error recorded.  What decodes encodes again through the
 * bridge without error, to no more bytes than were read when nothing was
 * placed (a string with a NUL inside comes back cut at it, as from
 * libtirpc's own streams), and that decodes (with no DDP context) to the
 * same values, which encode to the very same bytes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tirpc/tirpc_xdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME_MAX_LEN 64u
#define DATA_MAX 4096u
#define INTS_MAX 16u
#define TAG_MAX 16u
#define PLACED_BYTE 0xa5

/* What rpcgen makes of:
 *   union choice switch (int kind) { case 1: unsigned x; case 2: string tag<16>; default: void; };
 *   struct sample { int i; unsigned u; hyper h; bool flag; string name<64>; opaque data<4096>;
 *                   opaque fixed[5]; int ints<16>; int *opt; opaque more<4096>; choice c; };
 */
struct choice {
	int kind;
	union {
		u_int x;
		char *tag;
	} u;
};

struct sample {
	int i;
	u_int u;
	int64_t h;
	bool_t flag;
	char *name;
	struct {
		u_int data_len;
		char *data_val;
	} data;
	char fixed[5];
	struct {
		u_int ints_len;
		int *ints_val;
	} ints;
	int *opt;
	struct {
		u_int more_len;
		char *more_val;
	} more;
	struct choice c;
};

static bool_t xdr_tag(XDR *x, char **s)
{
	return xdr_string(x, s, TAG_MAX);
}

static const struct xdr_discrim choice_arms[] = {
    {1, (xdrproc_t)xdr_u_int},
    {2, (xdrproc_t)xdr_tag},
    {__dontcare__, NULL},
};

static bool_t xdr_sample(XDR *x, struct sample *s)
{
	return xdr_int(x, &s->i) && xdr_u_int(x, &s->u) && xdr_int64_t(x, &s->h) &&
	       xdr_bool(x, &s->flag) && xdr_string(x, &s->name, NAME_MAX_LEN) &&
	       xdr_bytes(x, &s->data.data_val, &s->data.data_len, DATA_MAX) &&
	       xdr_opaque(x, s->fixed, sizeof(s->fixed)) &&
	       xdr_array(x, (char **)&s->ints.ints_val, &s->ints.ints_len, INTS_MAX, sizeof(int),
			 (xdrproc_t)xdr_int) &&
	       xdr_pointer(x, (char **)&s->opt, sizeof(int), (xdrproc_t)xdr_int) &&
	       xdr_bytes(x, &s->more.more_val, &s->more.more_len, DATA_MAX) &&
	       xdr_union(x, &s->c.kind, (char *)&s->c.u, choice_arms, (xdrproc_t)xdr_void);
}

/* A transport that placed eligible items: fills them in, takes no bytes. */
struct placed {
	struct rpcrdma_xdr_ddp base;
	bool every_other;
	unsigned int calls, placed;
};

static int placed_decode(struct rpcrdma_xdr_ddp *ddp, size_t pos, void *buf, uint32_t len)
{
	struct placed *p = (struct placed *)ddp;

	(void)pos;
	if (p->every_other && (p->calls++ & 1))
		return 0;
	memset(buf, PLACED_BYTE, len);
	p->placed++;
	return 1;
}

static const struct rpcrdma_xdr_ddp_ops placed_ops = {.decode = placed_decode};

static bool same_bytes(const void *a, const void *b, size_t n)
{
	return n == 0 || memcmp(a, b, n) == 0;
}

static bool same_string(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static bool same_sample(const struct sample *a, const struct sample *b)
{
	if (a->i != b->i || a->u != b->u || a->h != b->h || !a->flag != !b->flag ||
	    !same_string(a->name, b->name) || a->data.data_len != b->data.data_len ||
	    !same_bytes(a->data.data_val, b->data.data_val, a->data.data_len) ||
	    memcmp(a->fixed, b->fixed, sizeof(a->fixed)) != 0 ||
	    a->ints.ints_len != b->ints.ints_len ||
	    !same_bytes(a->ints.ints_val, b->ints.ints_val, a->ints.ints_len * sizeof(int)) ||
	    !a->opt != !b->opt || (a->opt && *a->opt != *b->opt) ||
	    a->more.more_len != b->more.more_len ||
	    !same_bytes(a->more.more_val, b->more.more_val, a->more.more_len) ||
	    a->c.kind != b->c.kind)
		return false;
	if (a->c.kind == 1)
		return a->c.u.x == b->c.u.x;
	if (a->c.kind == 2)
		return same_string(a->c.u.tag, b->c.u.tag);
	return true;
}

static bool_t decode(const uint8_t *data, size_t size, uint32_t ddp_items,
		     struct rpcrdma_xdr_ddp *ddp, struct sample *s, size_t *used)
{
	struct rpcrdma_xdr_stream xs;
	struct rpcrdma__txdr t;
	XDR x;
	bool_t ok;

	rpcrdma_xdr_init_const(&xs, data, size);
	rpcrdma_xdr_set_ddp(&xs, ddp);
	rpcrdma__txdr_init(&x, &t, &xs, XDR_DECODE, ddp_items);
	memset(s, 0, sizeof(*s));
	ok = xdr_sample(&x, s);
	if (ok && t.err)
		abort(); /* a stream error must fail the routine that met it */
	*used = rpcrdma_xdr_pos(&xs);
	if (*used > size)
		abort();
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[4 * DATA_MAX + 1024], out2[sizeof(out)];
	struct placed placed = {{&placed_ops}, false, 0, 0};
	struct sample s, again;
	struct rpcrdma_xdr_stream xs;
	struct rpcrdma__txdr t;
	uint32_t ddp_items;
	bool with_placement;
	size_t used, encoded, reused;
	XDR x;

	if (size < 2)
		return 0;
	ddp_items = data[0];
	with_placement = data[1] & 1;
	placed.every_other = data[1] & 2;
	data += 2;
	size -= 2;
	if (!decode(data, size, ddp_items, with_placement ? &placed.base : NULL, &s, &used)) {
		xdr_free((xdrproc_t)xdr_sample, (char *)&s);
		return 0;
	}

	rpcrdma_xdr_init(&xs, out, sizeof(out));
	rpcrdma__txdr_init(&x, &t, &xs, XDR_ENCODE, ddp_items);
	if (!xdr_sample(&x, &s) || t.err)
		abort();
	encoded = rpcrdma_xdr_pos(&xs);
	/* A string sent with a NUL inside comes back shorter (libtirpc's
	 * xdr_string, on its own streams too), so no longer than it came. */
	if (placed.placed == 0 && encoded > used)
		abort();
	if (!decode(out, encoded, ddp_items, NULL, &again, &reused) || reused != encoded ||
	    !same_sample(&s, &again))
		abort();
	/* What the bridge wrote it reads back and writes again to the byte. */
	rpcrdma_xdr_init(&xs, out2, sizeof(out2));
	rpcrdma__txdr_init(&x, &t, &xs, XDR_ENCODE, ddp_items);
	if (!xdr_sample(&x, &again) || t.err || rpcrdma_xdr_pos(&xs) != encoded ||
	    memcmp(out, out2, encoded) != 0)
		abort();
	xdr_free((xdrproc_t)xdr_sample, (char *)&s);
	xdr_free((xdrproc_t)xdr_sample, (char *)&again);
	return 0;
}
