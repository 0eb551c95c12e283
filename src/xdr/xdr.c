/*
 * XDR streams (RFC 4506) over one buffer or a scatter list.
 *
 * The cursor is (element, offset inside it, XDR position).  Every item is
 * checked against the bytes remaining before anything is read or written, so
 * a failed call leaves the stream untouched.  Items that fit inside the
 * current element take a direct path; the rest are gathered or scattered a
 * piece at a time.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "rpcrdma/xdr.h"
#include "xdr/xdr_len.h"
#include "xdr/xdr_room.h"
#include "xdr/xdr_word.h"

static const uint8_t zero_pad[RPCRDMA_XDR_UNIT];

/* Step over exhausted and empty elements so seg names the next byte. */
static void settle(struct rpcrdma_xdr_stream *xdr)
{
	while (xdr->seg < xdr->iovcnt && xdr->seg_off == xdr->iov[xdr->seg].iov_len) {
		xdr->seg++;
		xdr->seg_off = 0;
	}
}

void rpcrdma_xdr_init(struct rpcrdma_xdr_stream *xdr, void *buf, size_t len)
{
	if (!xdr)
		return;
	xdr->single.iov_base = buf;
	xdr->single.iov_len = buf ? len : 0;
	xdr->iov = &xdr->single;
	xdr->iovcnt = 1;
	xdr->seg = 0;
	xdr->seg_off = 0;
	xdr->pos = 0;
	xdr->len = xdr->single.iov_len;
	xdr->ddp = NULL;
	settle(xdr);
}

void rpcrdma_xdr_init_const(struct rpcrdma_xdr_stream *xdr, const void *buf, size_t len)
{
	/* Decoders only read through iov_base; the cast never leads to a write. */
	rpcrdma_xdr_init(xdr, (void *)(uintptr_t)buf, len);
}

int rpcrdma_xdr_init_iov(struct rpcrdma_xdr_stream *xdr, const struct iovec *iov,
			 unsigned int iovcnt)
{
	size_t total = 0;

	if (!xdr || (!iov && iovcnt))
		return -EINVAL;
	for (unsigned int i = 0; i < iovcnt; i++) {
		if (__builtin_add_overflow(total, iov[i].iov_len, &total))
			return RPCRDMA_ERR_OVERFLOW;
	}
	xdr->iov = iov;
	xdr->iovcnt = iovcnt;
	xdr->seg = 0;
	xdr->seg_off = 0;
	xdr->pos = 0;
	xdr->len = total;
	xdr->ddp = NULL;
	settle(xdr);
	return 0;
}

/* copy_out's and copy_in's general case: the bytes span elements. */
static void copy_out_split(struct rpcrdma_xdr_stream *xdr, uint8_t *d, size_t n)
{
	while (n) {
		const struct iovec *v = &xdr->iov[xdr->seg];
		size_t take = v->iov_len - xdr->seg_off;

		if (take > n)
			take = n;
		if (d) {
			memcpy(d, (const uint8_t *)v->iov_base + xdr->seg_off, take);
			d += take;
		}
		xdr->seg_off += take;
		xdr->pos += take;
		n -= take;
		settle(xdr);
	}
}

static void copy_in_split(struct rpcrdma_xdr_stream *xdr, const uint8_t *s, size_t n)
{
	while (n) {
		const struct iovec *v = &xdr->iov[xdr->seg];
		size_t put = v->iov_len - xdr->seg_off;

		if (put > n)
			put = n;
		memcpy((uint8_t *)v->iov_base + xdr->seg_off, s, put);
		s += put;
		xdr->seg_off += put;
		xdr->pos += put;
		n -= put;
		settle(xdr);
	}
}

/* Copy @n bytes out of the stream; the caller checked they are there.
 * Inline, so that a word's copy is a load where it fits the element. */
static inline void copy_out(struct rpcrdma_xdr_stream *xdr, void *dst, size_t n)
{
	const struct iovec *v;

	if (!n)
		return;
	/* n bytes remain, so settle() left seg on an element. */
	v = &xdr->iov[xdr->seg];
	if (v->iov_len - xdr->seg_off < n) {
		copy_out_split(xdr, dst, n);
		return;
	}
	if (dst)
		memcpy(dst, (const uint8_t *)v->iov_base + xdr->seg_off, n);
	xdr->seg_off += n;
	xdr->pos += n;
	if (xdr->seg_off == v->iov_len)
		settle(xdr);
}

/* Copy @n bytes into the stream; the caller checked there is room. */
static inline void copy_in(struct rpcrdma_xdr_stream *xdr, const void *src, size_t n)
{
	const struct iovec *v;

	if (!n)
		return;
	v = &xdr->iov[xdr->seg];
	if (v->iov_len - xdr->seg_off < n) {
		copy_in_split(xdr, src, n);
		return;
	}
	memcpy((uint8_t *)v->iov_base + xdr->seg_off, src, n);
	xdr->seg_off += n;
	xdr->pos += n;
	if (xdr->seg_off == v->iov_len)
		settle(xdr);
}

void *rpcrdma_xdr_inline(struct rpcrdma_xdr_stream *xdr, size_t n)
{
	void *p;

	if (!xdr || n > rpcrdma_xdr_remaining(xdr))
		return NULL;
	if (n == 0)
		return xdr->seg < xdr->iovcnt
			   ? (uint8_t *)xdr->iov[xdr->seg].iov_base + xdr->seg_off
			   : (void *)zero_pad;
	if (xdr->iov[xdr->seg].iov_len - xdr->seg_off < n)
		return NULL;
	p = (uint8_t *)xdr->iov[xdr->seg].iov_base + xdr->seg_off;
	xdr->seg_off += n;
	xdr->pos += n;
	settle(xdr);
	return p;
}

int rpcrdma__xdr_hold_back(struct rpcrdma_xdr_stream *xdr, size_t n)
{
	if (xdr->iov != &xdr->single || n > rpcrdma_xdr_remaining(xdr))
		return -ERANGE;
	xdr->single.iov_len -= n;
	xdr->len -= n;
	settle(xdr);
	return 0;
}

int rpcrdma_xdr_skip(struct rpcrdma_xdr_stream *xdr, size_t n)
{
	if (!xdr)
		return -EINVAL;
	if (n > rpcrdma_xdr_remaining(xdr))
		return RPCRDMA_ERR_TRUNCATED;
	copy_out(xdr, NULL, n);
	return 0;
}

int rpcrdma_xdr_decode_u32(struct rpcrdma_xdr_stream *xdr, uint32_t *v)
{
	uint32_t be;

	if (!xdr || !v)
		return -EINVAL;
	if (rpcrdma_xdr_remaining(xdr) < 4)
		return RPCRDMA_ERR_TRUNCATED;
	copy_out(xdr, &be, 4);
	*v = be32toh(be);
	return 0;
}

int rpcrdma_xdr_decode_i32(struct rpcrdma_xdr_stream *xdr, int32_t *v)
{
	uint32_t u;
	int rc;

	if (!xdr || !v)
		return -EINVAL;
	rc = rpcrdma__xdr_get_u32(xdr, &u);
	if (rc == 0)
		*v = (int32_t)u;
	return rc;
}

int rpcrdma_xdr_decode_u64(struct rpcrdma_xdr_stream *xdr, uint64_t *v)
{
	uint64_t be;

	if (!xdr || !v)
		return -EINVAL;
	if (rpcrdma_xdr_remaining(xdr) < 8)
		return RPCRDMA_ERR_TRUNCATED;
	copy_out(xdr, &be, 8);
	*v = be64toh(be);
	return 0;
}

int rpcrdma_xdr_decode_i64(struct rpcrdma_xdr_stream *xdr, int64_t *v)
{
	uint64_t u;
	int rc;

	if (!v)
		return -EINVAL;
	rc = rpcrdma_xdr_decode_u64(xdr, &u);

	if (rc == 0)
		*v = (int64_t)u;
	return rc;
}

int rpcrdma_xdr_decode_bool(struct rpcrdma_xdr_stream *xdr, bool *v)
{
	struct rpcrdma_xdr_stream save;
	uint32_t u;
	int rc;

	if (!xdr || !v)
		return -EINVAL;
	save = *xdr;
	rc = rpcrdma__xdr_get_u32(xdr, &u);
	if (rc)
		return rc;
	if (u > 1) {
		*xdr = save;
		return RPCRDMA_ERR_BAD_VALUE;
	}
	*v = u == 1;
	return 0;
}

int rpcrdma_xdr_decode_enum(struct rpcrdma_xdr_stream *xdr, int32_t *v)
{
	return rpcrdma_xdr_decode_i32(xdr, v);
}

int rpcrdma_xdr_decode_optional(struct rpcrdma_xdr_stream *xdr, bool *present)
{
	return rpcrdma_xdr_decode_bool(xdr, present);
}

int rpcrdma_xdr_decode_fixed_opaque(struct rpcrdma_xdr_stream *xdr, void *dst, size_t len)
{
	size_t padded;

	if (!xdr || (len && !dst))
		return -EINVAL;
	if (len > SIZE_MAX - RPCRDMA_XDR_UNIT)
		return RPCRDMA_ERR_TOO_LONG;
	padded = rpcrdma_xdr_align(len);
	if (padded > rpcrdma_xdr_remaining(xdr))
		return RPCRDMA_ERR_TRUNCATED;
	copy_out(xdr, dst, len);
	/* RFC 4506 asks senders for zero padding; receivers ignore it. */
	copy_out(xdr, NULL, padded - len);
	return 0;
}

int rpcrdma_xdr_decode_opaque_len(struct rpcrdma_xdr_stream *xdr, uint32_t max, uint32_t *lenp)
{
	struct rpcrdma_xdr_stream save;
	uint32_t len;
	int rc;

	if (!xdr || !lenp)
		return -EINVAL;
	save = *xdr;
	rc = rpcrdma__xdr_get_u32(xdr, &len);
	if (rc)
		return rc;
	if (len > max) {
		rc = RPCRDMA_ERR_TOO_LONG;
		goto out_restore;
	}
	/* Not rpcrdma_xdr_align(len) > remaining: see xdr_len.h. */
	if (!rpcrdma__xdr_fits_padded(len, rpcrdma_xdr_remaining(xdr))) {
		rc = RPCRDMA_ERR_TRUNCATED;
		goto out_restore;
	}
	*lenp = len;
	return 0;

out_restore:
	*xdr = save;
	return rc;
}

int rpcrdma_xdr_decode_opaque(struct rpcrdma_xdr_stream *xdr, void *dst, uint32_t max,
			      uint32_t *lenp)
{
	struct rpcrdma_xdr_stream save;
	uint32_t len;
	int rc;

	/* Refused before anything is read, even an empty body: whether
	 * @dst is needed must not depend on what the peer sent. */
	if (!xdr || (max && !dst) || !lenp)
		return -EINVAL;
	save = *xdr;
	rc = rpcrdma_xdr_decode_opaque_len(xdr, max, &len);

	if (rc)
		return rc;
	/* decode_opaque_len found the padded body present, so this should
	 * not fail; if it ever does, say so rather than report a body that
	 * was never copied. */
	rc = rpcrdma_xdr_decode_fixed_opaque(xdr, dst, len);
	if (rc) {
		*xdr = save;
		return rc;
	}
	*lenp = len;
	return 0;
}

int rpcrdma_xdr_decode_opaque_ref(struct rpcrdma_xdr_stream *xdr, uint32_t max, const void **datap,
				  uint32_t *lenp)
{
	struct rpcrdma_xdr_stream save;
	uint32_t len;
	const void *p;
	int rc;

	if (!xdr || !datap || !lenp)
		return -EINVAL;
	save = *xdr;
	rc = rpcrdma_xdr_decode_opaque_len(xdr, max, &len);

	if (rc)
		return rc;
	p = rpcrdma_xdr_inline(xdr, len);
	if (!p) {
		*xdr = save;
		return -ERANGE;
	}
	copy_out(xdr, NULL, rpcrdma_xdr_align(len) - len);
	*datap = p;
	*lenp = len;
	return 0;
}

int rpcrdma_xdr_decode_string(struct rpcrdma_xdr_stream *xdr, char *dst, size_t dstsize,
			      uint32_t *lenp)
{
	struct rpcrdma_xdr_stream save;
	uint32_t max, len;
	int rc;

	if (!xdr || !dst || dstsize == 0 || !lenp)
		return -EINVAL;
	save = *xdr;
	max = dstsize - 1 > UINT32_MAX ? UINT32_MAX : (uint32_t)(dstsize - 1);
	rc = rpcrdma_xdr_decode_opaque(xdr, dst, max, &len);
	if (rc)
		return rc;
	if (memchr(dst, '\0', len)) {
		*xdr = save;
		return RPCRDMA_ERR_BAD_VALUE;
	}
	dst[len] = '\0';
	*lenp = len;
	return 0;
}

int rpcrdma_xdr_decode_array_len(struct rpcrdma_xdr_stream *xdr, uint32_t max, size_t min_elem_size,
				 uint32_t *countp)
{
	struct rpcrdma_xdr_stream save;
	uint32_t count;
	size_t need;
	int rc;

	if (!xdr || !countp)
		return -EINVAL;
	save = *xdr;
	rc = rpcrdma__xdr_get_u32(xdr, &count);
	if (rc)
		return rc;
	if (count > max) {
		rc = RPCRDMA_ERR_TOO_LONG;
		goto out_restore;
	}
	if (__builtin_mul_overflow((size_t)count, min_elem_size, &need) ||
	    need > rpcrdma_xdr_remaining(xdr)) {
		rc = RPCRDMA_ERR_TRUNCATED;
		goto out_restore;
	}
	*countp = count;
	return 0;

out_restore:
	*xdr = save;
	return rc;
}

int rpcrdma_xdr_encode_u32(struct rpcrdma_xdr_stream *xdr, uint32_t v)
{
	uint32_t be = htobe32(v);

	if (!xdr)
		return -EINVAL;
	if (rpcrdma_xdr_remaining(xdr) < 4)
		return RPCRDMA_ERR_NOSPACE;
	copy_in(xdr, &be, 4);
	return 0;
}

int rpcrdma_xdr_encode_i32(struct rpcrdma_xdr_stream *xdr, int32_t v)
{
	if (!xdr)
		return -EINVAL;
	return rpcrdma__xdr_put_u32(xdr, (uint32_t)v);
}

int rpcrdma_xdr_encode_u64(struct rpcrdma_xdr_stream *xdr, uint64_t v)
{
	uint64_t be = htobe64(v);

	if (!xdr)
		return -EINVAL;
	if (rpcrdma_xdr_remaining(xdr) < 8)
		return RPCRDMA_ERR_NOSPACE;
	copy_in(xdr, &be, 8);
	return 0;
}

int rpcrdma_xdr_encode_i64(struct rpcrdma_xdr_stream *xdr, int64_t v)
{
	return rpcrdma_xdr_encode_u64(xdr, (uint64_t)v);
}

int rpcrdma_xdr_encode_bool(struct rpcrdma_xdr_stream *xdr, bool v)
{
	if (!xdr)
		return -EINVAL;
	return rpcrdma__xdr_put_u32(xdr, v ? 1 : 0);
}

int rpcrdma_xdr_encode_enum(struct rpcrdma_xdr_stream *xdr, int32_t v)
{
	return rpcrdma_xdr_encode_i32(xdr, v);
}

int rpcrdma_xdr_encode_optional(struct rpcrdma_xdr_stream *xdr, bool present)
{
	return rpcrdma_xdr_encode_bool(xdr, present);
}

int rpcrdma_xdr_encode_fixed_opaque(struct rpcrdma_xdr_stream *xdr, const void *src, size_t len)
{
	size_t padded;

	if (!xdr)
		return -EINVAL;
	if (len > SIZE_MAX - RPCRDMA_XDR_UNIT)
		return RPCRDMA_ERR_NOSPACE;
	padded = rpcrdma_xdr_align(len);
	if (padded > rpcrdma_xdr_remaining(xdr))
		return RPCRDMA_ERR_NOSPACE;
	if (len && !src)
		return -EINVAL;
	copy_in(xdr, src, len);
	copy_in(xdr, zero_pad, padded - len);
	return 0;
}

int rpcrdma_xdr_encode_opaque(struct rpcrdma_xdr_stream *xdr, const void *src, uint32_t len)
{
	size_t room;

	if (!xdr)
		return -EINVAL;
	room = rpcrdma_xdr_remaining(xdr);
	/* Checked whole before the length word goes out, so that a failure
	 * leaves the stream as it was (4 + aligned len wraps: xdr_len.h). */
	if (room < 4 || !rpcrdma__xdr_fits_padded(len, room - 4))
		return RPCRDMA_ERR_NOSPACE;
	if (len && !src)
		return -EINVAL;
	rpcrdma__xdr_put_u32(xdr, len);
	return rpcrdma_xdr_encode_fixed_opaque(xdr, src, len);
}

int rpcrdma_xdr_encode_string(struct rpcrdma_xdr_stream *xdr, const char *s, uint32_t len)
{
	return rpcrdma_xdr_encode_opaque(xdr, s, len);
}

int rpcrdma_xdr_encode_array_len(struct rpcrdma_xdr_stream *xdr, uint32_t count)
{
	if (!xdr)
		return -EINVAL;
	return rpcrdma__xdr_put_u32(xdr, count);
}

int rpcrdma_xdr_encode_ddp(struct rpcrdma_xdr_stream *xdr, const void *data, uint32_t len)
{
	struct rpcrdma_xdr_stream save;
	int rc;

	if (!xdr)
		return -EINVAL;
	save = *xdr;
	if (!xdr->ddp)
		return rpcrdma_xdr_encode_opaque(xdr, data, len);
	if (len && !data)
		return -EINVAL;
	rc = rpcrdma__xdr_put_u32(xdr, len);
	if (rc)
		return rc;
	rc = xdr->ddp->ops->encode(xdr->ddp, rpcrdma_xdr_pos(xdr), data, len);
	if (rc == 1)
		return 0;
	if (rc == 0)
		rc = rpcrdma_xdr_encode_fixed_opaque(xdr, data, len);
	if (rc)
		*xdr = save;
	return rc;
}

int rpcrdma_xdr_decode_ddp_ref(struct rpcrdma_xdr_stream *xdr, uint32_t max, const void **datap,
			       uint32_t *lenp)
{
	/* A transport hook may place the bytes somewhere else, or need to
	 * skip padding before them: only a plain stream can lend them. */
	if (!xdr)
		return -EINVAL;
	if (xdr->ddp)
		return -ERANGE;
	return rpcrdma_xdr_decode_opaque_ref(xdr, max, datap, lenp);
}

int rpcrdma_xdr_decode_ddp(struct rpcrdma_xdr_stream *xdr, void *buf, uint32_t max, uint32_t *lenp)
{
	struct rpcrdma_xdr_stream save;
	uint32_t len;
	int rc;

	if (!xdr || (max && !buf) || !lenp)
		return -EINVAL;
	save = *xdr;
	if (!xdr->ddp)
		return rpcrdma_xdr_decode_opaque(xdr, buf, max, lenp);
	rc = rpcrdma__xdr_get_u32(xdr, &len);
	if (rc)
		return rc;
	if (len > max) {
		rc = RPCRDMA_ERR_TOO_LONG;
		goto out_restore;
	}
	rc = xdr->ddp->ops->decode(xdr->ddp, rpcrdma_xdr_pos(xdr), buf, len);
	if (rc == 0)
		rc = rpcrdma_xdr_decode_fixed_opaque(xdr, buf, len);
	else if (rc == 1)
		rc = 0;
	if (rc)
		goto out_restore;
	*lenp = len;
	return 0;

out_restore:
	*xdr = save;
	return rc;
}
