/*
 * Buffers for READ results over RDMA (read_bufs.c): kept for the server's
 * lifetime and declared for RDMA once, so that a READ's data goes to the
 * client's Write chunk (or inline Send) from where pread() put it, with no
 * copy and no memory registration per call, whatever its size.
 */
#ifndef RPCRDMA_NFSD_READ_BUFS_H
#define RPCRDMA_NFSD_READ_BUFS_H

#include <stdbool.h>
#include <stddef.h>

/* At most this many buffers (each RPCRDMA_NFS3_MAXDATA bytes), made this
 * many at a time as READs in flight need them. */
#define NFSD_READ_BUFS_MAX 1024u
#define NFSD_READ_BUFS_STEP 8u
/* Smaller READs do without: the library copies results this small
 * rather than send them from the application's memory. */
#define NFSD_READ_BUF_MIN (32u << 10)

/**
 * nfsd_read_bufs_start - keep up to @max buffers, made as needed
 * @declare: declare each batch with rpcrdma_mem_register (registered
 *	whole, and so pinned, by each provider instance at its first use);
 *	else the registration cache registers what READs use
 *
 * Returns 0, -EINVAL above NFSD_READ_BUFS_MAX or -ENOMEM.
 */
int nfsd_read_bufs_start(unsigned int max, bool declare);
/** nfsd_read_bufs_stop - give everything back, unless a buffer is still in use */
void nfsd_read_bufs_stop(void);
/**
 * nfsd_read_buf_get - a buffer of RPCRDMA_NFS3_MAXDATA bytes, or NULL when
 * all @max are in use (counted in nfsd_read_buf_misses).  Any thread.
 */
void *nfsd_read_buf_get(void);
/**
 * nfsd_read_buf_put - give back @p if it is one of the buffers; false when
 * it is not (the caller frees it then).  Any thread.
 */
bool nfsd_read_buf_put(void *p);
/** nfsd_read_buf_misses - READs that found every buffer in use */
unsigned long long nfsd_read_buf_misses(void);
/** nfsd_read_bufs_made - buffers made so far */
unsigned int nfsd_read_bufs_made(void);

#endif /* RPCRDMA_NFSD_READ_BUFS_H */
