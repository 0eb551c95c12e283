/*
 * rpcrdma-nfsd: an NFSv3 server exporting one local directory over
 * RPC-over-RDMA and TCP, with MOUNT v3 over TCP.  main.c runs the servers;
 * nfs3_proc.c holds the procedures; export.c the filesystem side.
 */
#ifndef RPCRDMA_NFSD_H
#define RPCRDMA_NFSD_H

#include "export.h"
#include "rpcrdma/nfs3.h"
#include "rpcrdma/rpc.h"

/* The export the procedures serve, and the write verifier of this run. */
void nfsd_procs_init(const struct nfsd_export *ex, const uint8_t verf[8]);
void nfsd_nfs3_procs(struct rpcrdma_svc_proc procs[RPCRDMA_NFS3_NPROCS]);
void nfsd_mount3_procs(struct rpcrdma_svc_proc procs[RPCRDMA_MOUNT3_NPROCS]);
/* Log every NFS call (--trace). */
extern bool nfsd_trace;

#endif /* RPCRDMA_NFSD_H */
