/* The key-value store's Upper-Layer Binding (kv_proc.c). */
#ifndef KV_BINDING_H
#define KV_BINDING_H

#include <rpcrdma/tirpc.h>

extern const struct rpcrdma_tirpc_binding kv_binding;

/* The generated dispatch of kv_svc.c (rpcgen -m). */
void kv_prog_1(struct svc_req *rqstp, SVCXPRT *transp);

#endif
