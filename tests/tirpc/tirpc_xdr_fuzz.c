/*
 * libFuzzer: libtirpc's XDR routines decoding hostile bytes through our
 * XDR (src/tirpc/tirpc_xdr.c), as a server's svc_getargs() and a client's
 * results do.  The first byte picks the DDP-eligible items; a fake DDP
 * context claims to have placed every other item it is asked about.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tirpc/tirpc_xdr.h"

struct msg {
	char *name;
	u_int alen;
	char *a;
	int n;
	u_int cnt;
	int *ints;
	u_int blen;
	char *b;
	bool_t more;
	char fixed[6];
};

static bool_t xdr_msg(XDR *x, struct msg *m)
{
	return xdr_string(x, &m->name, 300) && xdr_bytes(x, &m->a, &m->alen, 1 << 16) &&
	       xdr_int(x, &m->n) &&
	       xdr_array(x, (char **)&m->ints, &m->cnt, 64, sizeof(int), (xdrproc_t)xdr_int) &&
	       xdr_bytes(x, &m->b, &m->blen, 1 << 16) && xdr_bool(x, &m->more) &&
	       xdr_opaque(x, m->fixed, sizeof(m->fixed));
}

struct placed {
	struct rpcrdma_xdr_ddp base;
	unsigned int calls;
};

static int placed_decode(struct rpcrdma_xdr_ddp *d, size_t pos, void *buf, uint32_t len)
{
	struct placed *p = (struct placed *)d;

	(void)pos;
	if (p->calls++ & 1)
		return 0;
	memset(buf, 0x5a, len);
	return 1;
}

static const struct rpcrdma_xdr_ddp_ops placed_ops = {NULL, placed_decode};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct placed p = {{&placed_ops}, 0};
	struct rpcrdma_xdr_stream s;
	struct rpcrdma__txdr t;
	struct msg m;
	XDR x;

	if (size < 1)
		return 0;
	memset(&m, 0, sizeof(m));
	rpcrdma_xdr_init_const(&s, data + 1, size - 1);
	if (data[0] & 0x80)
		rpcrdma_xdr_set_ddp(&s, &p.base);
	rpcrdma__txdr_init(&x, &t, &s, XDR_DECODE, data[0] & 0x7f);
	(void)xdr_msg(&x, &m);
	xdr_free((xdrproc_t)xdr_msg, (char *)&m);
	return 0;
}
