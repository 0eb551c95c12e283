/*
 * Trace points inside the library (the public side is rpcrdma/trace.h).
 *
 * RPCRDMA__TRACE() tests one global mask before it evaluates any argument,
 * so a trace point costs one predictable branch while tracing is off.  The
 * mask starts with every bit set so that the first event of each category
 * reaches rpcrdma__trace_emit(), which reads RPCRDMA_TRACE once and then
 * leaves only the bits some sink wants.
 */
#ifndef RPCRDMA_COMMON_TRACE_H
#define RPCRDMA_COMMON_TRACE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "rpcrdma/trace.h"

extern _Atomic uint32_t rpcrdma__trace_mask;

#define RPCRDMA__TRACE_ON(cat)                                                             \
	__builtin_expect(                                                                  \
	    (atomic_load_explicit(&rpcrdma__trace_mask, memory_order_relaxed) & (cat)) != 0, 0)

#define RPCRDMA__TRACE(cat, kind, conn, xid, a, b, ...)                                    \
	do {                                                                               \
		if (RPCRDMA__TRACE_ON(cat))                                                \
			rpcrdma__trace_emit((cat), (kind), (conn), (xid), (int64_t)(a),    \
					    (int64_t)(b), __VA_ARGS__);                    \
	} while (0)

/* An API call refused an argument: name it, its value and its bound, as
 * its return code alone cannot; @rc is what the call returns. */
#define RPCRDMA__TRACE_BAD_ARG(rc, ...)                                                    \
	RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_ARG, 0, 0, (rc), 0, __VA_ARGS__)

void rpcrdma__trace_emit(uint32_t cat, enum rpcrdma_trace_kind kind, uint32_t conn_id,
			 uint32_t xid, int64_t a, int64_t b, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* A new connection id: small, process-wide unique, never 0. */
uint32_t rpcrdma__trace_conn_id(void);

/* Read RPCRDMA_TRACE and RPCRDMA_TRACE_RATE again (tests: the first event
 * reads them once per process). */
void rpcrdma__trace_read_env(void);

/* The XID of a received message whose header did not decode (0: none). */
static inline uint32_t rpcrdma__trace_xid_of(const void *buf, size_t len)
{
	const uint8_t *p = buf;

	return len >= 4 ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
			: 0;
}

/* Monotonic time in ns, for fence durations and call ages. */
uint64_t rpcrdma__trace_now_ns(void);
/* The same clock at the kernel tick's resolution, read without touching
 * the time counter: for ages shown in milliseconds (the in-flight lists),
 * taken at every call. */
uint64_t rpcrdma__coarse_now_ns(void);

#endif /* RPCRDMA_COMMON_TRACE_H */
