/*
 * Registered buffers of one provider instance, kept for reuse in size
 * classes (bufpool.c), so that the engine's own buffers (messages, Long
 * Calls and Replies, Reply chunks, Read-chunk sinks) register nothing once
 * the sizes in use have been seen.
 */
#ifndef RPCRDMA_PROVIDER_BUFPOOL_H
#define RPCRDMA_PROVIDER_BUFPOOL_H

#include <stddef.h>
#include <stdint.h>

struct rpcrdma_provider;
struct rpcrdma_prov_mr;

/* Classes are powers of two from 1 KiB to 16 MiB; larger buffers are
 * registered and freed each time. */
#define RPCRDMA__BUFPOOL_MIN_SHIFT 10u
#define RPCRDMA__BUFPOOL_MAX_SHIFT 24u
/* Idle buffers kept per instance: at most this many bytes, and this many
 * per class.  A connection's calls in flight (credits, up to 1024) each
 * hold their message buffers: a class must keep as many, or a deep
 * pipeline registers and deregisters at every call. */
#define RPCRDMA__BUFPOOL_MAX_BYTES (64u << 20)
#define RPCRDMA__BUFPOOL_MAX_PER_CLASS 1024u

/**
 * rpcrdma__bufpool_get - a registered buffer of at least @len bytes
 * @p: the provider instance (caller is its thread)
 * @len: bytes wanted
 * @addr: its memory
 * @cap: its size, >= @len (the registration's length)
 * @mr: its registration
 *
 * Return: 0, -ENOMEM or the provider's error.
 */
int rpcrdma__bufpool_get(struct rpcrdma_provider *p, size_t len, uint8_t **addr, size_t *cap,
			 struct rpcrdma_prov_mr **mr);
/**
 * rpcrdma__bufpool_put - give a buffer from rpcrdma__bufpool_get back (kept
 * within the bounds, else deregistered and freed); only once nothing posted
 * uses it
 */
void rpcrdma__bufpool_put(struct rpcrdma_provider *p, uint8_t *addr, struct rpcrdma_prov_mr *mr);
/** rpcrdma__bufpool_cap - the size of the buffer a get of @len bytes gives */
size_t rpcrdma__bufpool_cap(size_t len);
/* How often a pool gives back what stayed idle: registered memory held
 * after a burst (up to RPCRDMA__BUFPOOL_MAX_BYTES per instance, a server's
 * loop and each worker) pins pages, which RLIMIT_MEMLOCK bounds on verbs.
 * A variable so that tests need not wait as long. */
#define RPCRDMA__BUFPOOL_TRIM_MS 30000u
extern uint64_t rpcrdma__bufpool_trim_ms;
/**
 * rpcrdma__bufpool_trim - deregister and free half (rounded up) of the buffers
 * of each class that stayed idle since the last call; every
 * rpcrdma__bufpool_trim_ms from the instance's loop (xprtrdma/conn.c)
 * @p: the provider instance (caller is its thread)
 *
 * Return: the bytes freed.
 */
size_t rpcrdma__bufpool_trim(struct rpcrdma_provider *p);
/** rpcrdma__bufpool_bytes - bytes of the idle buffers @p keeps now */
size_t rpcrdma__bufpool_bytes(const struct rpcrdma_provider *p);
/** rpcrdma__bufpool_close - free every idle buffer; from the instance's close */
void rpcrdma__bufpool_close(struct rpcrdma_provider *p);

#endif
