/*
 * libtirpc's XDR on this library's streams: the operations of a libtirpc
 * XDR (struct xdr_ops) implemented on a struct rpcrdma_xdr_stream, so that
 * rpcgen's xdrproc_t routines encode into and decode from the library's
 * call and reply streams.
 *
 * Items reach the operations one at a time: words through x_putlong and
 * x_getlong, bytes through x_putbytes and x_getbytes, with an opaque's
 * padding as a second x_putbytes/x_getbytes of 1 to 3 bytes.  An opaque
 * is therefore seen as a word followed by exactly that many bytes; when
 * the binding makes it DDP-eligible (the rule in rpcrdma/tirpc.h), the
 * stream is put back to before the word and the whole item goes through
 * rpcrdma_xdr_encode_ddp() or rpcrdma_xdr_decode_ddp(), which handle the
 * padding too, so the padding call that follows is swallowed.
 *
 * x_inline answers NULL (the routines then use single items) and
 * x_setpostn FALSE: a stream that may hold a chunk's hole has no byte
 * positions to jump to.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tirpc/tirpc_xdr.h"

static struct rpcrdma__txdr *priv(XDR *x)
{
	return (struct rpcrdma__txdr *)x->x_private;
}

static bool_t fail(struct rpcrdma__txdr *t, int rc)
{
	if (!t->err)
		t->err = rc;
	return FALSE;
}

static uint32_t pad_of(uint32_t n)
{
	return (uint32_t)(rpcrdma_xdr_align(n) - n);
}

static bool_t x_getlong(XDR *x, long *lp)
{
	struct rpcrdma__txdr *t = priv(x);
	uint32_t v;
	int rc;

	t->skip_pad = 0;
	t->before = *t->s;
	rc = rpcrdma_xdr_decode_u32(t->s, &v);
	if (rc)
		return fail(t, rc);
	/* As libtirpc's own streams: the word, not sign-extended. */
	*lp = (long)v;
	t->have_len = true;
	t->len = v;
	return TRUE;
}

static bool_t x_putlong(XDR *x, const long *lp)
{
	struct rpcrdma__txdr *t = priv(x);
	int rc;

	t->skip_pad = 0;
	t->before = *t->s;
	rc = rpcrdma_xdr_encode_u32(t->s, (uint32_t)*lp);
	if (rc)
		return fail(t, rc);
	t->have_len = true;
	t->len = (uint32_t)*lp;
	return TRUE;
}

/* Is a run of @cnt bytes right after a word of the same value a DDP-eligible opaque? */
static bool ddp_item(struct rpcrdma__txdr *t, u_int cnt)
{
	bool opaque = t->have_len && cnt == t->len && cnt > 0;
	unsigned int k;

	t->have_len = false;
	if (!opaque)
		return false;
	k = t->item++;
	return k < 32 && (t->ddp_items & (1u << k));
}

static bool_t x_getbytes(XDR *x, char *cp, u_int cnt)
{
	struct rpcrdma__txdr *t = priv(x);
	uint32_t got;
	int rc;

	if (t->skip_pad && cnt == t->skip_pad) {
		t->skip_pad = 0;
		t->have_len = false;
		memset(cp, 0, cnt);
		return TRUE;
	}
	t->skip_pad = 0;
	if (ddp_item(t, cnt)) {
		*t->s = t->before;
		rc = rpcrdma_xdr_decode_ddp(t->s, cp, cnt, &got);
		if (rc)
			return fail(t, rc);
		if (got != cnt)
			return fail(t, RPCRDMA_ERR_BAD_VALUE);
	} else {
		/* The padding comes with the bytes; the call for it is swallowed. */
		rc = rpcrdma_xdr_decode_fixed_opaque(t->s, cp, cnt);
		if (rc)
			return fail(t, rc);
	}
	t->skip_pad = pad_of(cnt);
	return TRUE;
}

static bool_t x_putbytes(XDR *x, const char *cp, u_int cnt)
{
	struct rpcrdma__txdr *t = priv(x);
	int rc;

	if (t->skip_pad && cnt == t->skip_pad) {
		t->skip_pad = 0;
		t->have_len = false;
		return TRUE;
	}
	t->skip_pad = 0;
	if (ddp_item(t, cnt)) {
		*t->s = t->before;
		rc = rpcrdma_xdr_encode_ddp(t->s, cp, cnt);
	} else {
		rc = rpcrdma_xdr_encode_fixed_opaque(t->s, cp, cnt);
	}
	if (rc)
		return fail(t, rc);
	t->skip_pad = pad_of(cnt);
	return TRUE;
}

static u_int x_getpostn(XDR *x)
{
	return (u_int)rpcrdma_xdr_pos(priv(x)->s);
}

static bool_t x_setpostn(XDR *x, u_int pos)
{
	(void)x;
	(void)pos;
	return FALSE;
}

static int32_t *x_inline(XDR *x, u_int len)
{
	(void)x;
	(void)len;
	return NULL;
}

static void x_destroy(XDR *x)
{
	(void)x;
}

static bool_t x_control(XDR *x, int req, void *info)
{
	(void)x;
	(void)req;
	(void)info;
	return FALSE;
}

static const struct xdr_ops txdr_ops = {
	.x_getlong = x_getlong,
	.x_putlong = x_putlong,
	.x_getbytes = x_getbytes,
	.x_putbytes = x_putbytes,
	.x_getpostn = x_getpostn,
	.x_setpostn = x_setpostn,
	.x_inline = x_inline,
	.x_destroy = x_destroy,
	.x_control = x_control,
};

void rpcrdma__txdr_init(XDR *x, struct rpcrdma__txdr *t, struct rpcrdma_xdr_stream *s,
			enum xdr_op op, uint32_t ddp_items)
{
	memset(t, 0, sizeof(*t));
	t->s = s;
	t->ddp_items = ddp_items;
	memset(x, 0, sizeof(*x));
	x->x_op = op;
	x->x_ops = &txdr_ops;
	x->x_private = (char *)t;
}

const struct rpcrdma_tirpc_proc *rpcrdma__tirpc_proc_for(const struct rpcrdma_tirpc_binding *b,
						       uint32_t proc)
{
	if (!b)
		return NULL;
	for (unsigned int i = 0; i < b->nprocs; i++)
		if (b->procs[i].proc == proc)
			return &b->procs[i];
	return NULL;
}

int rpcrdma__tirpc_binding_copy(const struct rpcrdma_tirpc_binding *b,
				struct rpcrdma_tirpc_binding **out)
{
	struct rpcrdma_tirpc_binding *c;
	size_t n;

	*out = NULL;
	if (!b)
		return 0;
	if (b->nprocs && !b->procs)
		return -EINVAL;
	if (b->nprocs > RPCRDMA_TIRPC_MAX_PROCS)
		return -EINVAL;
	n = (size_t)b->nprocs * sizeof(b->procs[0]);
	c = malloc(sizeof(*c) + (n ? n : 1));
	if (!c)
		return -ENOMEM;
	if (n)
		memcpy(c + 1, b->procs, n);
	c->procs = (const struct rpcrdma_tirpc_proc *)(c + 1);
	c->nprocs = b->nprocs;
	*out = c;
	return 0;
}
