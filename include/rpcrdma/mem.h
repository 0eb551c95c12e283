/*
 * Memory an application declares up front, so that calls over it register
 * nothing at all (docs/architecture.md, "Memory registration";
 * librpcrdma(3), MEMORY REGISTRATION).
 */
#ifndef RPCRDMA_MEM_H
#define RPCRDMA_MEM_H

#include <stddef.h>

#include "rpcrdma/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A declared region (opaque). */
struct rpcrdma_mem_region;

/* At most this many regions are declared at once in a process. */
#define RPCRDMA_MEM_MAX_REGIONS 1024

/**
 * rpcrdma_mem_register - declare [@addr, @addr + @len) for RDMA use
 * @addr: first byte
 * @len: bytes, > 0
 * @out: the region, for rpcrdma_mem_deregister()
 *
 * Process-wide: each provider instance (a client's transport, a server's
 * worker) registers the whole region with its device the first time a call
 * uses memory inside it (a DDP-eligible argument, ddp_buf or ddp_list, a
 * server's DDP result) and keeps that registration until the region is
 * deregistered.  Buffers inside a region then cost no registration, even
 * where the library cannot watch frees and unmaps (librpcrdma(3)).  The
 * application promises that the memory stays mapped, with the same pages,
 * until rpcrdma_mem_deregister() returns.  Thread-safe.
 *
 * Return: 0; -EINVAL (NULL @addr or @out, @len 0, or a range that wraps);
 * -EEXIST (it overlaps a region already declared: deregister that one
 * first); -ENOSPC (RPCRDMA_MEM_MAX_REGIONS declared); -ENOMEM.
 */
RPCRDMA_EXTERN int rpcrdma_mem_register(void *addr, size_t len, struct rpcrdma_mem_region **out);

/**
 * rpcrdma_mem_deregister - withdraw a declared region
 * @region: from rpcrdma_mem_register(), not yet deregistered
 *
 * Returns at once.  Calls already using memory in the region keep their
 * registration until they complete; each provider instance deregisters it
 * afterwards, on its own thread, at its next call or when it closes (until
 * then the pages stay pinned on verbs).  New calls over the memory go
 * through the registration cache.  The memory may be freed or unmapped as
 * soon as the calls that used it have completed.  Thread-safe.
 *
 * Return: 0; -EINVAL (@region NULL or not a declared region).
 */
RPCRDMA_EXTERN int rpcrdma_mem_deregister(struct rpcrdma_mem_region *region);

#ifdef __cplusplus
}
#endif

#endif
