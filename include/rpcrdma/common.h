/*
 * librpcrdma: symbols shared by every public header: the export macro and the
 * library's error codes.
 *
 * Every function that can fail returns 0 (or a non-negative count) on success
 * and a negative value on failure: either -errno for a system failure, or one
 * of enum rpcrdma_errcode below for a protocol or encoding failure.
 * rpcrdma_strerror() describes both.
 */
#ifndef RPCRDMA_COMMON_H
#define RPCRDMA_COMMON_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(RPCRDMA_BUILDING)
#define RPCRDMA_EXTERN __attribute__((visibility("default")))
#else
#define RPCRDMA_EXTERN
#endif

/*
 * Library error codes.  They sit below -4095 so they never collide with a
 * negated errno value.
 */
enum rpcrdma_errcode {
	/** Input ended before the item being decoded.  Do not retry: the
	 *  message is malformed. */
	RPCRDMA_ERR_TRUNCATED = -5000,
	/** A length or count exceeds the bound the caller allowed. */
	RPCRDMA_ERR_TOO_LONG = -5001,
	/** A value is outside what the protocol allows (a boolean that is not
	 *  0 or 1, an unknown discriminant, an unaligned position...). */
	RPCRDMA_ERR_BAD_VALUE = -5002,
	/** The encoder's buffer is too small for the item.  Nothing after the
	 *  last successful item was written; retry with a larger buffer. */
	RPCRDMA_ERR_NOSPACE = -5003,
	/** Arithmetic on wire values (offset + length, ...) would overflow. */
	RPCRDMA_ERR_OVERFLOW = -5004,
	/** A transport header carries a version this end does not support. */
	RPCRDMA_ERR_VERSION = -5005,
	/** A transport header is malformed (the peer gets ERR_CHUNK). */
	RPCRDMA_ERR_BAD_HEADER = -5006,
	/** A message was decoded but must be dropped without any answer. */
	RPCRDMA_ERR_DROP = -5007,
	/** An RDMA_OPTIONAL message names an option this end does not know. */
	RPCRDMA_ERR_BAD_OPTION = -5008,
	/** An RPC message is malformed. */
	RPCRDMA_ERR_BAD_RPC = -5009,
	/** An RDMA connection failed during its handshake: the peer accepted
	 *  the TCP connection the software provider rides on but never
	 *  answered as an RDMA endpoint.  Most likely the port is an RPC over
	 *  TCP server's: use opts.transport = RPCRDMA_TRANSPORT_TCP, or the
	 *  server's RDMA port. */
	RPCRDMA_ERR_NOT_RDMA_PEER = -5010,
	/** A TCP connection was reset by the peer after our first call, before
	 *  any reply came: most likely the port is an RPC-over-RDMA server's
	 *  (use opts.transport = RPCRDMA_TRANSPORT_RDMA, or the server's TCP
	 *  port); the other causes are a server at its connection limit
	 *  (max_conns with none it may close, or refuse_at_max_conns: it
	 *  closes a new connection at once) and a call larger than the
	 *  server's record limit.  (Before this code such calls failed with
	 *  -ECONNRESET.) */
	RPCRDMA_ERR_NOT_TCP_PEER = -5011,
	/** The provider named in the options is not built into this library
	 *  (rpcrdma_strerror() lists those that are). */
	RPCRDMA_ERR_NO_PROVIDER = -5012,
	/** The verbs provider found no RDMA device for the address: there is
	 *  none on this machine, or the address is not an RDMA device's (a
	 *  wildcard or loopback address never is).  Pass the address of an
	 *  RDMA device's interface, or use the software provider (ofi). */
	RPCRDMA_ERR_NO_RDMA_DEVICE = -5013,
	/** The service (port) given to rpcrdma_client_create() or
	 *  rpcrdma_server_create() is neither a number nor a service name this
	 *  machine knows (/etc/services), or is a number above 65535, or
	 *  empty (getaddrinfo() would keep only its low 16 bits: "65536" was
	 *  port 0), or for a client port 0, where no server listens.  Pass
	 *  the port number.  (Before this code it failed with
	 *  -EHOSTUNREACH, as an unknown host does.) */
	RPCRDMA_ERR_NO_SERVICE = -5014,
};

/**
 * rpcrdma_strerror - describe an error code returned by this library
 * @err: a negative errno or an enum rpcrdma_errcode value
 *
 * Returns a static string; never NULL.
 */
RPCRDMA_EXTERN const char *rpcrdma_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_COMMON_H */
