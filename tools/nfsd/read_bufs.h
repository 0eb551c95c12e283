/*
 * Buffers for READ results (read_bufs.c): kept for the server's lifetime
 * and declared for RDMA once, so that a READ's data goes to the client's
 * Write chunk (or inline Send) from where pread() put it, with no copy and
 * no memory registration per call, whatever its size.
 */
#ifndef RPCRDMA_NFSD_READ_BUFS_H
#define RPCRDMA_NFSD_READ_BUFS_H

#include <stdbool.h>

/* At most this many (each RPCRDMA_NFS3_MAXDATA bytes). */
#define NFSD_READ_BUFS_MAX 1024u

/**
 * nfsd_read_bufs_start - set aside @n buffers of RPCRDMA_NFS3_MAXDATA bytes
 *
 * Their memory is reserved now and touched as READs use it (pinned
 * whole, on verbs, by the first RDMA use).  At most NFSD_READ_BUFS_MAX are
 * kept.  0 when the buffers are there, else a negative errno (the server
 * then allocates each READ's buffer).
 */
int nfsd_read_bufs_start(unsigned int n);
/** nfsd_read_bufs_stop - give everything back, unless a buffer is still in use */
void nfsd_read_bufs_stop(void);
/**
 * nfsd_read_buf_get - a buffer of RPCRDMA_NFS3_MAXDATA bytes, or NULL when
 * all are in use (counted in nfsd_read_buf_misses).  Any thread.
 */
void *nfsd_read_buf_get(void);
/**
 * nfsd_read_buf_put - give back @p if it is one of the buffers; false when
 * it is not (the caller frees it then).  Any thread.
 */
bool nfsd_read_buf_put(void *p);
/** nfsd_read_buf_misses - READs that found every buffer in use */
unsigned long long nfsd_read_buf_misses(void);

#endif /* RPCRDMA_NFSD_READ_BUFS_H */
