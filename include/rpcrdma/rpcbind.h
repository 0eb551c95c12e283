/*
 * librpcrdma: optional registration of servers with the local rpcbind, and
 * look-ups of a server's address (RPCBPROC_GETADDR).
 *
 * rpcbind (RFC 1833) maps an RPC program and version to the transport and
 * address that serve it.  These calls speak RPCBIND version 4 (falling
 * back to version 3 when rpcbind answers PROG_MISMATCH) over TCP to
 * 127.0.0.1 port 111, or to the host and port given in the options.  Each
 * call waits for the answer by running the loop, like rpcrdma_client_call(),
 * and gives up after a time-out (2 s by default); when nothing listens on
 * the rpcbind port it fails with -ECONNREFUSED at once.
 *
 * A registration names the transport by netid (RFC 5665): "rdma" and
 * "rdma6" for RPC-over-RDMA on IPv4 and IPv6, "tcp" and "tcp6" for TCP.
 * The address is a universal address (RFC 5665 section 5.2.3): the host in
 * its usual text form followed by the port as two decimal bytes, high
 * first, e.g. "0.0.0.0.8.1" for any IPv4 address, port 2049.
 *
 * NFS servers.  An NFS server over RDMA listens on port 20049 (the IANA
 * "nfsrdma" port of RFC 5666 and RFC 8267) and registers program 100003, each
 * version it serves, under netid "rdma" with uaddr "0.0.0.0.78.81" and,
 * when it listens on IPv6 too, under "rdma6" with "::.78.81", so that
 * clients asking rpcbind for NFS over RDMA (RPCBPROC_GETADDR with netid
 * "rdma") find it:
 *
 *	rpcrdma_server_create(loop, NULL, "20049", &opts, &srv);   (RDMA)
 *	rpcrdma_server_register(srv, 100003, 3, nfs3_procs, n);
 *	rpcrdma_server_rpcbind_register(loop, srv, 100003, 3,
 *					RPCRDMA_TRANSPORT_RDMA, AF_INET, NULL);
 *	...
 *	rpcrdma_server_rpcbind_unregister(loop, srv, 100003, 3,
 *					  RPCRDMA_TRANSPORT_RDMA, AF_INET, NULL);
 *
 * or, with the address spelled out:
 *
 *	rpcrdma_rpcbind_set(loop, 100003, 3, "rdma", "0.0.0.0.78.81", NULL, NULL);
 *
 * rpcbind accepts SET and UNSET only from the local host, and refuses to
 * replace a mapping another owner made; unregister before registering
 * again with different values.
 */
#ifndef RPCRDMA_RPCBIND_H
#define RPCRDMA_RPCBIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rpcrdma/common.h"
#include "rpcrdma/loop.h"
#include "rpcrdma/rpc.h"

#ifdef __cplusplus
extern "C" {
#endif

/** RFC 1833: the rpcbind program, its versions, and the procedures used. */
#define RPCRDMA_RPCBIND_PROG 100000u
#define RPCRDMA_RPCBIND_VERS3 3u
#define RPCRDMA_RPCBIND_VERS4 4u
#define RPCRDMA_RPCBPROC_SET 1u
#define RPCRDMA_RPCBPROC_UNSET 2u
#define RPCRDMA_RPCBPROC_GETADDR 3u
#define RPCRDMA_RPCBPROC_DUMP 4u
/** Where rpcbind listens. */
#define RPCRDMA_RPCBIND_PORT 111
/** The port NFS over RDMA listens on (IANA "nfsrdma"). */
#define RPCRDMA_NFS_RDMA_PORT 20049
/** Default time-out of one registration, in milliseconds. */
#define RPCRDMA_RPCBIND_TIMEOUT_MS 2000

/**
 * Longest netid, uaddr or owner accepted, in bytes.  Real values are far
 * shorter (an IPv6 uaddr takes at most 53); the bound keeps every rpcb
 * argument well inside one inline message.
 */
#define RPCRDMA_RPCBIND_STRING_MAX 255u

/** Room for any universal address rpcrdma_rpcbind_uaddr() produces, NUL included. */
#define RPCRDMA_RPCBIND_UADDR_SIZE 64u

/** Where rpcbind is and how long to wait for it; NULL or zeroes: defaults. */
struct rpcrdma_rpcbind_opts {
	const char *host;    /* NULL: "127.0.0.1" */
	const char *service; /* port number or service name; NULL: "111" */
	int timeout_ms;      /* whole call, fallback included; 0: 2000; no "none" */
};

/**
 * rpcrdma_rpcbind_set - register @prog/@vers at @uaddr over @netid
 * @loop: the loop to run while waiting (nested when called from one of
 *	its callbacks, as rpcrdma_client_call() does)
 * @netid: "rdma", "rdma6", "tcp", "tcp6", ...; not empty
 * @uaddr: the universal address, see rpcrdma_rpcbind_uaddr(); not empty
 * @owner: the owner rpcbind records; NULL: the effective uid in decimal
 * @opts: NULL for the local rpcbind with the default time-out
 *
 * Returns 0 when rpcbind accepted the mapping, or:
 *   -EINVAL        an argument is NULL or empty, a string is longer than
 *                  RPCRDMA_RPCBIND_STRING_MAX, or @opts->timeout_ms is
 *                  negative;
 *   -EEXIST        rpcbind answered FALSE: the program and version are
 *                  already registered for @netid (by anyone), or rpcbind
 *                  refused the caller;
 *   -ECONNREFUSED  nothing listens on the rpcbind port;
 *   -ETIMEDOUT     no answer within the time-out;
 *   -EPROTONOSUPPORT  rpcbind serves neither version 4 nor 3 (PROG_UNAVAIL,
 *                  or PROG_MISMATCH for both);
 *   -EHOSTUNREACH  the host in @opts does not resolve;
 *   RPCRDMA_ERR_NO_SERVICE  the service in @opts is neither a port (1 to
 *                  65535) nor a name this machine knows;
 *   RPCRDMA_ERR_RPC_REJECTED  any other rejection (MSG_DENIED,
 *                  PROC_UNAVAIL, GARBAGE_ARGS, SYSTEM_ERR);
 *   RPCRDMA_ERR_BAD_RPC  the reply is malformed: its header, or a result
 *                  that is not an XDR bool;
 *   -ENOMEM, or another -errno from the connection.
 * Nothing is retried after an answer, so a failure can be reported as is.
 */
RPCRDMA_EXTERN int rpcrdma_rpcbind_set(struct rpcrdma_loop *loop, uint32_t prog, uint32_t vers,
				       const char *netid, const char *uaddr, const char *owner,
				       const struct rpcrdma_rpcbind_opts *opts);

/**
 * rpcrdma_rpcbind_unset - remove the registration of @prog/@vers
 * @netid: the netid to remove; NULL or "": every netid
 * @uaddr: ignored by rpcbind, sent as given; NULL: ""
 * @owner: must be the owner that registered (rpcbind checks it unless the
 *	caller is privileged); NULL: the effective uid in decimal
 *
 * Returns 0 when rpcbind removed at least one mapping; -ENOENT when it
 * answered FALSE (nothing registered, or owned by someone else); otherwise
 * the errors of rpcrdma_rpcbind_set(), except -EEXIST.
 */
RPCRDMA_EXTERN int rpcrdma_rpcbind_unset(struct rpcrdma_loop *loop, uint32_t prog, uint32_t vers,
					 const char *netid, const char *uaddr, const char *owner,
					 const struct rpcrdma_rpcbind_opts *opts);

/**
 * rpcrdma_rpcbind_getaddr - ask rpcbind where @prog/@vers is served over @netid
 * @netid: "rdma", "rdma6", "tcp", "tcp6", ...; not empty
 * @uaddr: receives the universal address, NUL-terminated
 * @size: room at @uaddr; RPCRDMA_RPCBIND_STRING_MAX + 1 always suffices
 * @opts: which rpcbind to ask (@opts->host: the server's host) and how long
 *	to wait; NULL: the local one
 *
 * Sends RPCBPROC_GETADDR (version 4, or 3 on PROG_MISMATCH) for "tcp" and
 * other netids.  For "rdma" and "rdma6" it sends RPCBPROC_DUMP and picks the
 * mapping: rpcbind answers GETADDR for the netid of the transport the
 * request came on (RFC 1833 ignores r_netid there), so a GETADDR over TCP
 * gives the TCP port, and rpcbind leaves netids outside its netconfig out
 * of GETADDRLIST.  At most 4096 mappings are read.  A server
 * registered on the wildcard address answers "0.0.0.0.p1.p2" or "::.p1.p2":
 * connect to the host you asked, on the port (rpcrdma_rpcbind_uaddr_parse()).
 *
 * Returns the length of the address, or -ENOENT when rpcbind knows no such
 * mapping, -ENOSPC when @size is too small, -EINVAL for a NULL or empty
 * argument, otherwise the errors of rpcrdma_rpcbind_set() except -EEXIST
 * (RPCRDMA_ERR_BAD_RPC: a result that is not a string of at most
 * RPCRDMA_RPCBIND_STRING_MAX bytes).
 */
RPCRDMA_EXTERN int rpcrdma_rpcbind_getaddr(struct rpcrdma_loop *loop, uint32_t prog,
					   uint32_t vers, const char *netid, char *uaddr,
					   size_t size, const struct rpcrdma_rpcbind_opts *opts);

/**
 * rpcrdma_rpcbind_uaddr_parse - a universal address as a socket address
 * @ss: receives a struct sockaddr_in or sockaddr_in6 with the port set
 * @lenp: receives its length
 *
 * The inverse of rpcrdma_rpcbind_uaddr(): "h1.h2.h3.h4.p1.p2" or an IPv6
 * address followed by ".p1.p2".  Returns 0, or -EINVAL for anything else
 * (a field above 255, a missing port, a host inet_pton() refuses).
 */
RPCRDMA_EXTERN int rpcrdma_rpcbind_uaddr_parse(const char *uaddr, struct sockaddr_storage *ss,
					       socklen_t *lenp);

/**
 * rpcrdma_rpcbind_uaddr - format @sa as a universal address (RFC 5665
 * section 5.2.3.3)
 * @sa: a struct sockaddr_in or sockaddr_in6
 * @buf: room for @size bytes; RPCRDMA_RPCBIND_UADDR_SIZE always suffices
 *
 * IPv4 gives "h1.h2.h3.h4.p1.p2"; IPv6 gives the address in the form of
 * inet_ntop() (RFC 5952, "::" for zeroes, "::ffff:a.b.c.d" for a mapped
 * IPv4 address) then ".p1.p2".  p1 and p2 are the port's high and low
 * bytes in decimal: port 20049 ends in ".78.81".  An IPv6 scope id has no
 * place in a universal address and is left out.
 *
 * Returns the length written (without the NUL), -EINVAL when @sa or @buf
 * is NULL or @sa is neither AF_INET nor AF_INET6, or -ENOSPC when @size is
 * too small (@buf then holds an empty string if @size is not zero).
 */
RPCRDMA_EXTERN int rpcrdma_rpcbind_uaddr(const struct sockaddr *sa, char *buf, size_t size);

/**
 * rpcrdma_rpcbind_netid - the netid of @transport over @family
 *
 * Returns "rdma" or "rdma6" for RPCRDMA_TRANSPORT_RDMA, "tcp" or "tcp6"
 * for RPCRDMA_TRANSPORT_TCP, for AF_INET and AF_INET6 respectively; NULL
 * for any other combination.
 */
RPCRDMA_EXTERN const char *rpcrdma_rpcbind_netid(enum rpcrdma_transport transport, int family);

/**
 * rpcrdma_server_rpcbind_register - register @srv's port for @prog/@vers
 * @loop: the loop @srv runs on
 * @transport: the transport @srv was created with
 * @family: AF_INET or AF_INET6, the family @srv listens on
 *
 * The server does not expose its transport or address family, so the
 * caller states them; the port is rpcrdma_server_port(@srv).  Registers
 * the wildcard address of @family ("0.0.0.0.p1.p2" or "::.p1.p2") under
 * rpcrdma_rpcbind_netid(@transport, @family), owned by the effective uid.
 * Call it once per family the server listens on.
 *
 * Returns the values of rpcrdma_rpcbind_set(); -EINVAL also for a NULL
 * @srv or an unknown @transport or @family.
 */
RPCRDMA_EXTERN int rpcrdma_server_rpcbind_register(struct rpcrdma_loop *loop,
						   struct rpcrdma_server *srv, uint32_t prog,
						   uint32_t vers, enum rpcrdma_transport transport,
						   int family,
						   const struct rpcrdma_rpcbind_opts *opts);

/**
 * rpcrdma_server_rpcbind_unregister - undo rpcrdma_server_rpcbind_register()
 *
 * Removes the mapping of @prog/@vers under the netid of @transport and
 * @family only.  Returns the values of rpcrdma_rpcbind_unset(); -EINVAL
 * also for a NULL @srv or an unknown @transport or @family.
 */
RPCRDMA_EXTERN int rpcrdma_server_rpcbind_unregister(struct rpcrdma_loop *loop,
						     struct rpcrdma_server *srv, uint32_t prog,
						     uint32_t vers,
						     enum rpcrdma_transport transport, int family,
						     const struct rpcrdma_rpcbind_opts *opts);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_RPCBIND_H */
