/*
 * librpcrdma-tirpc: rpcgen programs over RPC-over-RDMA, unmodified.
 *
 * The output of rpcgen (the *_clnt.c stubs, the *_xdr.c routines and the
 * dispatch function of *_svc.c, or rpcgen -m) runs over this library
 * without an edit: a client gets a libtirpc CLIENT * whose clnt_call(),
 * clnt_freeres(), clnt_geterr(), clnt_control() and clnt_destroy() work as
 * libtirpc documents them; a server registers the generated dispatch
 * function with a struct rpcrdma_server, and svc_getargs(),
 * svc_sendreply(), svc_freeargs(), svc_getcaller(), svc_getrpccaller() and
 * the svcerr_*() calls work inside it.  The XDR routines are libtirpc's
 * xdrproc_t, run on an XDR whose operations encode into and decode from
 * this library's streams.  Link with -lrpcrdma-tirpc (pkg-config
 * librpcrdma-tirpc), which brings libtirpc.
 *
 * Client:
 *
 *	CLIENT *cl = rpcrdma_clnt_create(host, KV_PROG, KV_VERS, "rdma");
 *	res = kv_get_1(&key, cl);            (the generated stub)
 *	clnt_destroy(cl);
 *
 * Server (the loop is ours; the same dispatch can serve TCP too):
 *
 *	rpcrdma_server_create(loop, NULL, "0", &opts, &srv);
 *	rpcrdma_tirpc_svc_reg(srv, KV_PROG, KV_VERS, kv_prog_1, &binding);
 *	rpcrdma_loop_run(loop);
 *
 * Data placement.  RFC 8166 section 6 lets only an Upper-Layer Binding
 * name the DDP-eligible items of a program.  Without one (binding NULL)
 * everything travels inline, or as a Long Call or Long Reply when it does
 * not fit.  A program declares its binding with struct
 * rpcrdma_tirpc_binding, the same on both sides: for each procedure, which
 * of its argument and result opaques are DDP-eligible, by item order.
 * The rule:
 *
 *   - The items counted are the variable-length opaques and strings of
 *     the arguments (or results) that carry at least one byte
 *     (xdr_bytes(), xdr_string(), opaque<> and string<> in rpcgen), in the
 *     order the XDR routine encodes them; bit k of args_items (res_items)
 *     makes the k-th such item, from 0, DDP-eligible.  An empty item is
 *     not counted because it carries nothing to place.
 *   - A DDP-eligible argument travels in a Read chunk, placed straight
 *     from the caller's memory.  The first DDP-eligible result of a reply
 *     travels in the Write chunk the client offers, of res_max bytes; a
 *     larger one, or a later one, comes inline or in the Reply chunk.
 *   - Fixed-length opaques (opaque[n]) are never DDP-eligible here.
 *   - The items are recognised by their shape on the stream: a word
 *     followed at once by exactly that many bytes, as xdr_bytes() and
 *     xdr_string() encode them (libtirpc's routines reach the stream
 *     through the same word and bytes operations, so nothing else tells
 *     them apart).  A 32-bit field followed at once by a fixed-length
 *     opaque whose size its value happens to equal (int n; opaque t[4];
 *     with n == 4) has that shape too, and then counts as an item, which
 *     moves the numbers of the items after it.  Both ends count alike, so
 *     two programs built on this layer still agree, but a peer that
 *     numbers the items from the .x file does not.  In a procedure that
 *     has a binding, put no DDP-eligible item after such a pair (reorder
 *     the fields, or put another field between them).
 *
 * Hostile input.  rpcgen's routines (xdr_bytes(), xdr_string(),
 * xdr_array()) allocate the length the peer sends before its bytes are
 * read, up to the bound the .x file gives: bound every variable-length item
 * in the .x (opaque<N>, string<N>), as with libtirpc itself.  Everything
 * else is checked by this library's streams: a short or malformed message
 * makes the routine fail (GARBAGE_ARGS, or RPC_CANTDECODERES), and what it
 * allocated for the items before the failure is freed there and then
 * (xdr_free(), which leaves the pointers NULL): rpcgen's code calls
 * neither svc_freeargs() after a failed svc_getargs() nor clnt_freeres()
 * after a failed clnt_call(); calling them anyway is harmless.  So a
 * pointer in the arguments or results given to such a routine must be NULL
 * or point to memory free() may take: unlike libtirpc, which leaves it to
 * the caller, a caller's own buffer (on the stack, static) preset into a
 * result would be freed when a reply fails to decode.
 *
 * Inside a dispatch, rq_cred is the credential as sent and rq_clntcred the
 * decoded struct authunix_parms for AUTH_SYS (NULL otherwise); the
 * SVCXPRT's xp_raddr, xp_rtaddr and xp_addrlen hold the client's address,
 * xp_fd is -1 and xp_netid NULL.
 *
 * Credentials: a client sends AUTH_NONE, or what cl_auth holds once the
 * caller sets it (authunix_create(), authunix_create_default(); the next
 * call connects again with it).  As with libtirpc, the caller destroys
 * an AUTH it made (auth_destroy(), before or after clnt_destroy()).
 *
 * What is not supported: AUTH other than AUTH_NONE and AUTH_SYS on the
 * client (a call with another fails with RPC_AUTHERROR, AUTH_BADCRED);
 * svcerr_auth(), svcerr_weakauth() and svcerr_progvers() inside a dispatch
 * answer SYSTEM_ERR (the server core does not let a procedure deny a
 * call; it checks credentials and versions itself before dispatch); a
 * dispatch that sends no reply gets SYSTEM_ERR sent; XDR_SETPOS and
 * XDR_INLINE (the routines fall back to single items, as they do on any
 * stream without a buffer).
 */
#ifndef RPCRDMA_TIRPC_H
#define RPCRDMA_TIRPC_H

#include <rpc/rpc.h>

#include "rpcrdma/common.h"
#include "rpcrdma/rpc.h"
#include "rpcrdma/rpcbind.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One procedure's DDP-eligible items (see the rule above). */
struct rpcrdma_tirpc_proc {
	uint32_t proc;
	uint32_t args_items; /* bit k: the k-th non-empty argument opaque */
	uint32_t res_items;  /* bit k: the k-th non-empty result opaque */
	uint32_t res_max;    /* room of the Write chunk offered for the first */
	/*
	 * Server only: the procedure may run twice for one call without harm
	 * (rpcrdma_server_set_idempotent()): its replies, bulk results
	 * included, are not kept in the duplicate request cache.
	 */
	bool idempotent;
};

/**
 * A program's Upper-Layer Binding: procedures not listed have no
 * DDP-eligible items.  At most RPCRDMA_TIRPC_MAX_PROCS entries.
 */
struct rpcrdma_tirpc_binding {
	const struct rpcrdma_tirpc_proc *procs;
	unsigned int nprocs;
};

struct rpcrdma_tirpc_opts {
	enum rpcrdma_transport transport; /* default RDMA */
	const char *provider;             /* NULL: "ofi" */
	/* The server's port; NULL: ask rpcbind on the host (RPCBPROC_GETADDR
	 * with the netid of the transport and the host's family). */
	const char *service;
	int family; /* AF_INET or AF_INET6 for a host name; 0: its first address */
	const struct rpcrdma_tirpc_binding *binding; /* NULL: no DDP */
	/* Largest reply, in bytes, that may need the Reply chunk; 0: 1 MiB +
	 * 64 KiB (as rpcrdma_client_opts.max_record over TCP).
	 * Replies above the inline receive size need it (RFC 8166 3.5.3). */
	size_t max_reply;
	uint32_t max_vers; /* RPC-over-RDMA version to offer; 0: 1 */
};

/**
 * rpcrdma_tirpc_clnt_create - a libtirpc CLIENT over this library
 * @host: the server's address or name
 * @opts: NULL for RPC-over-RDMA through "ofi", the port from rpcbind
 *
 * The CLIENT owns a loop of its own; clnt_call() runs it until the reply,
 * so use one CLIENT per thread.  clnt_control() knows CLSET_TIMEOUT,
 * CLGET_TIMEOUT (a time-out set there overrides clnt_call()'s, as in
 * libtirpc; either is at most 2^31 - 1 ms, some 24 days, which a longer
 * one such as {LONG_MAX, 0} means), CLGET_XID, CLGET_PROG, CLGET_VERS, CLGET_SERVER_ADDR and
 * CLGET_SVC_ADDR, and answers FALSE to the others.  cl_auth starts as
 * AUTH_NONE; set it to an AUTH_SYS one to send that (see above).
 *
 * Returns the CLIENT, or NULL with rpc_createerr set (cf_stat
 * RPC_UNKNOWNHOST, also for an unknown @opts->service, or one above
 * 65535 with re_errno EINVAL; RPC_PROGNOTREGISTERED when rpcbind knows no such
 * program, RPC_PMAPFAILURE when rpcbind could not be asked, with the cause
 * in cf_error as libtirpc leaves it, RPC_SYSTEMERROR with
 * cf_error.re_errno).  The connection is made by the first call: a call
 * that cannot reach the server fails with RPC_CANTSEND and re_errno
 * (ECONNREFUSED; EPROTONOSUPPORT for a server of the other transport
 * at that port), which clnt_perror() prints.
 */
RPCRDMA_EXTERN CLIENT *rpcrdma_tirpc_clnt_create(const char *host, rpcprog_t prog,
						 rpcvers_t vers,
						 const struct rpcrdma_tirpc_opts *opts);

/**
 * rpcrdma_tirpc_clnt_stats - the transport counters of a CLIENT made by
 * rpcrdma_tirpc_clnt_create() or rpcrdma_clnt_create() with "rdma"
 *
 * Returns 0, or -EINVAL for NULL arguments or a CLIENT this library did
 * not make (libtirpc's own).
 */
RPCRDMA_EXTERN int rpcrdma_tirpc_clnt_stats(CLIENT *cl, struct rpcrdma_xprt_stats *out);

/**
 * rpcrdma_tirpc_clnt_strerror - why the last clnt_call() on @cl failed, in
 * words
 *
 * clnt_perror() and clnt_sperror() are libtirpc's: they print the
 * rpc_err, whose errno is the nearest one (a server's RDMA_ERROR
 * ERR_CHUNK is EMSGSIZE, ERR_VERS EPROTONOSUPPORT, a reply whose chunks
 * are not those offered EBADMSG).  This says what the rpc_err cannot, as
 * rpcrdma_call_strerror() does ("the server refused the call's chunks
 * (RDMA_ERROR ERR_CHUNK): ...", "cl_auth's credential is 520 bytes: ONC
 * RPC allows at most 400 ..."); "success" after a call that succeeded.
 * Returns a string that stays valid until the next clnt_call() or
 * clnt_destroy() of @cl, or NULL when @cl is not a CLIENT this library
 * made (libtirpc's own).
 */
RPCRDMA_EXTERN const char *rpcrdma_tirpc_clnt_strerror(CLIENT *cl);

/**
 * rpcrdma_clnt_create - clnt_create() with the netids of RFC 8166
 * section 12
 *
 * "rdma" and "rdma6" make an RPC-over-RDMA client through
 * rpcrdma_tirpc_clnt_create() (the port from rpcbind); any other @nettype
 * goes to libtirpc's clnt_create() as it is.  libtirpc itself cannot learn
 * the "rdma" netid: its netconfig database is the fixed file
 * /etc/netconfig, and its transports are chosen from the netconfig
 * semantics, so this is a function of ours with clnt_create()'s signature.
 */
RPCRDMA_EXTERN CLIENT *rpcrdma_clnt_create(const char *host, rpcprog_t prog, rpcvers_t vers,
					   const char *nettype);

/**
 * rpcrdma_tirpc_svc_reg - serve @prog/@vers with an rpcgen dispatch function
 * @dispatch: the generated prog_vers() of *_svc.c (or rpcgen -m)
 * @binding: the program's DDP-eligible items; NULL: none
 *
 * Procedures 0 to RPCRDMA_TIRPC_MAX_PROCS - 1 go to @dispatch, which runs
 * on the loop (or the worker) that received the call.  svc_sendreply()
 * encodes the results at once, so the dispatch may free them right after.
 *
 * As libtirpc's svc_reg(), which keys registrations by program, version
 * and netid: on one server, registering the same dispatch (and binding)
 * again is no error, another one is refused with -EEXIST; each server
 * (an RDMA one and a TCP one, say) may serve @prog/@vers with a dispatch
 * of its own.  A registration ends with its server
 * (rpcrdma_server_destroy()): a server made afterwards may register the
 * program with any dispatch.  svc_unreg() has no counterpart: a program
 * stays on its server until the server is destroyed.
 *
 * Returns 0, -EINVAL, -ENOMEM, -EEXIST when another dispatch or binding
 * serves @prog/@vers on @srv (also one registered there with
 * rpcrdma_server_register()), or the errors of rpcrdma_server_register2().
 */
#define RPCRDMA_TIRPC_MAX_PROCS 256u
RPCRDMA_EXTERN int rpcrdma_tirpc_svc_reg(struct rpcrdma_server *srv, rpcprog_t prog,
					 rpcvers_t vers,
					 void (*dispatch)(struct svc_req *, SVCXPRT *),
					 const struct rpcrdma_tirpc_binding *binding);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_TIRPC_H */
