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

/* The export the procedures serve, who may use it, and the write verifier
 * of this run. */
/* @rdma_on_sockets: the RDMA provider is software RDMA over TCP sockets
 * (ofi), whose source ports "secure" checks as TCP's. */
void nfsd_procs_init(const struct nfsd_export *ex, const struct nfsd_access *acc,
		     const uint8_t verf[8], bool rdma_on_sockets);
/* The NFSv3 procedures for the server on RDMA (@rdma) or TCP: the rules
 * for source ports differ. */
void nfsd_nfs3_procs(struct rpcrdma_svc_proc procs[RPCRDMA_NFS3_NPROCS], bool rdma);
void nfsd_mount3_procs(struct rpcrdma_svc_proc procs[RPCRDMA_MOUNT3_NPROCS]);
/* The client entry that admits @req, or NULL: refused (counted). */
const struct nfsd_client *nfsd_admit(const struct rpcrdma_svc_req *req, bool rdma);

/* What the server refused, each with its counter (printed on SIGUSR1 and
 * at exit). */
#define NFSD_STATS(X)                                                                              \
	X(refused_host)    /* a client address no entry admits (NFS3ERR_ACCES) */                  \
	X(refused_port)    /* TCP from an unprivileged port to a secure entry */                   \
	X(refused_cred)    /* the identity switch did not come out as asked */                     \
	X(refused_rofs)    /* a change asked of a read-only entry */                               \
	X(refused_special) /* a FIFO, device or socket where only a file may be */                 \
	X(refused_mount)   /* a name that is a mount point inside the export */                    \
	X(refused_swapped) /* a name made, then found to be another's object */                    \
	X(refused_outside) /* a directory no longer inside the export (NFS3ERR_STALE) */

struct nfsd_stats {
#define X(name) unsigned long long name;
	NFSD_STATS(X)
#undef X
	unsigned long long queue_full; /* NFS3ERR_JUKEBOX: the work queue was full */
	unsigned long long queued_max; /* the most requests that waited at once */
};

void nfsd_stats_get(struct nfsd_stats *out);
/* Log every NFS call (--trace). */
extern bool nfsd_trace;

#endif /* RPCRDMA_NFSD_H */
