/*
 * librpcrdma: XDR (RFC 4506) encoding and decoding.
 *
 * One stream type serves both directions.  A stream covers either one
 * contiguous buffer or a scatter list of buffers (struct iovec); items may
 * straddle the boundary between two list elements.  The stream's position is
 * the XDR position: the number of bytes decoded or encoded since the start,
 * which is what RPC-over-RDMA Read chunk positions are measured in.
 *
 * Every call is all-or-nothing: when it fails, the stream is exactly as it
 * was before the call, so a caller can report where decoding stopped.
 *
 * Decoders never read past the end of their input and refuse any length or
 * count above the bound the caller passes.  Failures:
 *   RPCRDMA_ERR_TRUNCATED  the input ends inside the item;
 *   RPCRDMA_ERR_TOO_LONG   a length or count is above the caller's bound;
 *   RPCRDMA_ERR_BAD_VALUE  a boolean that is neither 0 nor 1, a string
 *                          holding a NUL byte;
 *   RPCRDMA_ERR_NOSPACE    (encoders) the item does not fit;
 *   -EINVAL                a required pointer is NULL: the stream, a
 *                          decoder's result (@v, @lenp, @countp, @datap),
 *                          the destination of a decoder that may copy
 *                          bytes (@dst, @buf; NULL is allowed only with
 *                          a @max or @len of 0), or the source of an
 *                          encoder with a non-zero @len.  Nothing is read
 *                          or written then.  Functions that return no
 *                          error do nothing on a NULL stream; those that
 *                          return a size or a pointer return 0 or NULL.
 */
#ifndef RPCRDMA_XDR_H
#define RPCRDMA_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "rpcrdma/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** XDR's basic block: every item occupies a multiple of four bytes. */
#define RPCRDMA_XDR_UNIT 4u

/**
 * Bytes an item of @n bytes takes on the wire, with its padding.
 *
 * WARNING: wraps to a small number for @n above SIZE_MAX - 3, which a
 * uint32_t length from the wire reaches where size_t has 32 bits.  Compare
 * such a length with the room left before aligning it (the decoders here
 * do).
 */
static inline size_t rpcrdma_xdr_align(size_t n)
{
	return (n + (RPCRDMA_XDR_UNIT - 1)) & ~(size_t)(RPCRDMA_XDR_UNIT - 1);
}

struct rpcrdma_xdr_ddp;

/**
 * struct rpcrdma_xdr_ddp_ops - how a transport places DDP-eligible items
 *
 * A transport that can move bulk data by direct data placement (RPC-over-
 * RDMA Read and Write chunks) attaches a struct rpcrdma_xdr_ddp to the stream
 * it hands to the upper layer's XDR functions.  Without one, DDP-eligible
 * items are ordinary variable-length opaques.
 */
struct rpcrdma_xdr_ddp_ops {
	/*
	 * Called by rpcrdma_xdr_encode_ddp() after the length word, at XDR
	 * position @pos.  Return 1 when the transport takes the @len bytes at
	 * @data (they then leave the stream, padding included: rfc5666bis
	 * 4.4.5.1; a transport that sends them inline from @data puts the
	 * padding in the stream itself), 0 to encode them inline, or a
	 * negative error.
	 */
	int (*encode)(struct rpcrdma_xdr_ddp *ddp, size_t pos, const void *data, uint32_t len);
	/*
	 * Called by rpcrdma_xdr_decode_ddp() after the length word @len, at
	 * XDR position @pos.  Return 1 when the item's bytes were already
	 * placed in @buf (they are then absent from the stream), 0 when they
	 * follow inline, or a negative error (the item cannot be matched with
	 * what the peer placed).
	 */
	int (*decode)(struct rpcrdma_xdr_ddp *ddp, size_t pos, void *buf, uint32_t len);
};

struct rpcrdma_xdr_ddp {
	const struct rpcrdma_xdr_ddp_ops *ops;
};

/**
 * struct rpcrdma_xdr_stream - a cursor over one buffer or a scatter list
 *
 * Treat the fields as private; use the functions below.  The stream does not
 * own its buffers, which must outlive it.
 */
struct rpcrdma_xdr_stream {
	const struct iovec *iov;
	unsigned int iovcnt;
	unsigned int seg;  /* element holding the next byte */
	size_t seg_off;    /* offset of the next byte inside that element */
	size_t pos;        /* XDR position: bytes consumed or produced */
	size_t len;        /* bytes in all elements together */
	struct iovec single;
	struct rpcrdma_xdr_ddp *ddp; /* NULL: DDP-eligible items go inline */
};

/** Start a stream over @len bytes at @buf (encode or decode). */
RPCRDMA_EXTERN void rpcrdma_xdr_init(struct rpcrdma_xdr_stream *xdr, void *buf, size_t len);

/** Start a decode-only stream over read-only memory.  Never encode into it. */
RPCRDMA_EXTERN void rpcrdma_xdr_init_const(struct rpcrdma_xdr_stream *xdr, const void *buf,
					   size_t len);

/**
 * rpcrdma_xdr_init_iov - start a stream over a scatter list
 *
 * The list itself is not copied and must outlive the stream.  Elements of
 * length zero are allowed.  Returns 0, -EINVAL when @xdr is NULL or @iov is
 * NULL with a non-zero @iovcnt, or RPCRDMA_ERR_OVERFLOW when the lengths add up past
 * SIZE_MAX.
 */
RPCRDMA_EXTERN int rpcrdma_xdr_init_iov(struct rpcrdma_xdr_stream *xdr, const struct iovec *iov,
					unsigned int iovcnt);

/** XDR position: bytes decoded or encoded since the stream started. */
static inline size_t rpcrdma_xdr_pos(const struct rpcrdma_xdr_stream *xdr)
{
	if (!xdr)
		return 0;
	return xdr->pos;
}

/** Bytes left between the position and the end of the stream. */
static inline size_t rpcrdma_xdr_remaining(const struct rpcrdma_xdr_stream *xdr)
{
	if (!xdr)
		return 0;
	return xdr->len - xdr->pos;
}

/**
 * rpcrdma_xdr_inline - direct access to the next @n bytes
 *
 * Returns a pointer to the next @n bytes and advances past them when they
 * lie in one element of the stream; returns NULL, leaving the stream as it
 * was, when fewer than @n bytes remain or they straddle two elements.  No
 * padding is skipped or added.
 */
RPCRDMA_EXTERN void *rpcrdma_xdr_inline(struct rpcrdma_xdr_stream *xdr, size_t n);

/** Move forward @n bytes without looking at them (no padding added). */
RPCRDMA_EXTERN int rpcrdma_xdr_skip(struct rpcrdma_xdr_stream *xdr, size_t n);

/* Decoding. */
RPCRDMA_EXTERN int rpcrdma_xdr_decode_u32(struct rpcrdma_xdr_stream *xdr, uint32_t *v);
RPCRDMA_EXTERN int rpcrdma_xdr_decode_i32(struct rpcrdma_xdr_stream *xdr, int32_t *v);
RPCRDMA_EXTERN int rpcrdma_xdr_decode_u64(struct rpcrdma_xdr_stream *xdr, uint64_t *v);
RPCRDMA_EXTERN int rpcrdma_xdr_decode_i64(struct rpcrdma_xdr_stream *xdr, int64_t *v);
/** XDR bool: 0 or 1, anything else is RPCRDMA_ERR_BAD_VALUE. */
RPCRDMA_EXTERN int rpcrdma_xdr_decode_bool(struct rpcrdma_xdr_stream *xdr, bool *v);
/** XDR enum: a signed 32-bit value; the caller checks it is a known one. */
RPCRDMA_EXTERN int rpcrdma_xdr_decode_enum(struct rpcrdma_xdr_stream *xdr, int32_t *v);
/** XDR optional-data discriminator (RFC 4506 section 4.19): a bool. */
RPCRDMA_EXTERN int rpcrdma_xdr_decode_optional(struct rpcrdma_xdr_stream *xdr, bool *present);

/** Fixed-length opaque: copies @len bytes to @dst and skips the padding. */
RPCRDMA_EXTERN int rpcrdma_xdr_decode_fixed_opaque(struct rpcrdma_xdr_stream *xdr, void *dst,
						   size_t len);

/**
 * rpcrdma_xdr_decode_opaque - variable-length opaque, copied
 * @dst: room for @max bytes
 * @max: largest length accepted (RPCRDMA_ERR_TOO_LONG above it)
 * @lenp: set to the decoded length
 */
RPCRDMA_EXTERN int rpcrdma_xdr_decode_opaque(struct rpcrdma_xdr_stream *xdr, void *dst,
					     uint32_t max, uint32_t *lenp);

/**
 * rpcrdma_xdr_decode_opaque_len - the length word of a variable-length opaque
 *
 * Checks @max and that the body with its padding is present in the stream,
 * then leaves the stream at the first byte of the body: follow with
 * rpcrdma_xdr_decode_fixed_opaque(), or rpcrdma_xdr_inline() plus
 * rpcrdma_xdr_skip() of the padding.
 */
RPCRDMA_EXTERN int rpcrdma_xdr_decode_opaque_len(struct rpcrdma_xdr_stream *xdr, uint32_t max,
						 uint32_t *lenp);

/**
 * rpcrdma_xdr_decode_opaque_ref - variable-length opaque, not copied
 *
 * Sets *@datap to the body inside the stream's buffer.  Fails with -ERANGE,
 * leaving the stream as it was, when the body straddles two elements of a
 * scatter list: decode it with rpcrdma_xdr_decode_opaque() instead.
 */
RPCRDMA_EXTERN int rpcrdma_xdr_decode_opaque_ref(struct rpcrdma_xdr_stream *xdr, uint32_t max,
						 const void **datap, uint32_t *lenp);

/**
 * rpcrdma_xdr_decode_string - XDR string into a NUL-terminated C string
 * @dst: room for @dstsize bytes; the longest string accepted is @dstsize - 1
 *	(-EINVAL for a NULL @dst, a @dstsize of 0 or a NULL @lenp)
 *
 * A string holding a NUL byte is RPCRDMA_ERR_BAD_VALUE: it cannot be
 * represented as a C string without silently losing its tail.
 */
RPCRDMA_EXTERN int rpcrdma_xdr_decode_string(struct rpcrdma_xdr_stream *xdr, char *dst,
					     size_t dstsize, uint32_t *lenp);

/**
 * rpcrdma_xdr_decode_array_len - element count of a counted array
 * @max: largest count accepted
 * @min_elem_size: smallest encoded size of one element, in bytes; a count
 *	whose elements cannot fit in what remains is refused at once, so no
 *	caller allocates for a count the input cannot back.  Pass 0 for
 *	elements that may be empty.
 */
RPCRDMA_EXTERN int rpcrdma_xdr_decode_array_len(struct rpcrdma_xdr_stream *xdr, uint32_t max,
						size_t min_elem_size, uint32_t *countp);

/* Encoding. */
RPCRDMA_EXTERN int rpcrdma_xdr_encode_u32(struct rpcrdma_xdr_stream *xdr, uint32_t v);
RPCRDMA_EXTERN int rpcrdma_xdr_encode_i32(struct rpcrdma_xdr_stream *xdr, int32_t v);
RPCRDMA_EXTERN int rpcrdma_xdr_encode_u64(struct rpcrdma_xdr_stream *xdr, uint64_t v);
RPCRDMA_EXTERN int rpcrdma_xdr_encode_i64(struct rpcrdma_xdr_stream *xdr, int64_t v);
RPCRDMA_EXTERN int rpcrdma_xdr_encode_bool(struct rpcrdma_xdr_stream *xdr, bool v);
RPCRDMA_EXTERN int rpcrdma_xdr_encode_enum(struct rpcrdma_xdr_stream *xdr, int32_t v);
RPCRDMA_EXTERN int rpcrdma_xdr_encode_optional(struct rpcrdma_xdr_stream *xdr, bool present);
/** Fixed-length opaque: @len bytes, then zero padding to a multiple of 4. */
RPCRDMA_EXTERN int rpcrdma_xdr_encode_fixed_opaque(struct rpcrdma_xdr_stream *xdr,
						   const void *src, size_t len);
/** Variable-length opaque: length word, bytes, zero padding. */
RPCRDMA_EXTERN int rpcrdma_xdr_encode_opaque(struct rpcrdma_xdr_stream *xdr, const void *src,
					     uint32_t len);
/** XDR string from @len bytes at @s (no terminator needed). */
RPCRDMA_EXTERN int rpcrdma_xdr_encode_string(struct rpcrdma_xdr_stream *xdr, const char *s,
					     uint32_t len);
RPCRDMA_EXTERN int rpcrdma_xdr_encode_array_len(struct rpcrdma_xdr_stream *xdr, uint32_t count);

/* Direct data placement. */

/** Attach a transport's DDP context (NULL detaches). */
static inline void rpcrdma_xdr_set_ddp(struct rpcrdma_xdr_stream *xdr, struct rpcrdma_xdr_ddp *ddp)
{
	if (xdr)
		xdr->ddp = ddp;
}

/**
 * rpcrdma_xdr_encode_ddp - a DDP-eligible variable-length opaque
 *
 * Encodes like rpcrdma_xdr_encode_opaque(), except that a transport with a
 * DDP context may take the bytes out of the stream and move them by RDMA
 * straight from @data, which must then stay untouched until the call
 * completes.  The transport has recorded the item by then: an encoder must
 * not restore a copy of the stream saved before a successful call (the
 * message is then refused as inconsistent).
 */
RPCRDMA_EXTERN int rpcrdma_xdr_encode_ddp(struct rpcrdma_xdr_stream *xdr, const void *data,
					  uint32_t len);

/**
 * rpcrdma_xdr_decode_ddp - a DDP-eligible variable-length opaque into @buf
 *
 * Decodes like rpcrdma_xdr_decode_opaque(); when the transport placed the
 * bytes by RDMA (into @buf, which the caller offered for that), nothing is
 * copied.
 */
RPCRDMA_EXTERN int rpcrdma_xdr_decode_ddp(struct rpcrdma_xdr_stream *xdr, void *buf,
					  uint32_t max, uint32_t *lenp);

/**
 * rpcrdma_xdr_decode_ddp_ref - a DDP-eligible opaque, not copied
 *
 * On a stream whose DDP-eligible items sit in its own buffers (a server's
 * call: the Read chunks' data was fetched into the call's buffers, where
 * the position says), sets *@datap to the item's body there, valid as long
 * as the stream's buffers (for a server procedure's arguments: until the
 * reply is sent).  Fails with -ERANGE, leaving the stream as it was, when
 * the body straddles two of the stream's buffers or the transport places
 * such items elsewhere (a client decoding a reply, an RDMA_MSGP call):
 * decode it with rpcrdma_xdr_decode_ddp() then.
 */
RPCRDMA_EXTERN int rpcrdma_xdr_decode_ddp_ref(struct rpcrdma_xdr_stream *xdr, uint32_t max,
					      const void **datap, uint32_t *lenp);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_XDR_H */
