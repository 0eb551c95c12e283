/*
 * Registration with rpcbind (RFC 1833): RPCBPROC_SET, RPCBPROC_UNSET and
 * RPCBPROC_GETADDR of version 4, or of version 3 when rpcbind answers
 * PROG_MISMATCH (both versions share the rpcb argument and the results and
 * number these procedures alike), made with the
 * library's own TCP client, and the universal address format of RFC 5665.
 *
 * Each request uses a short-lived client: registrations are rare, and a
 * client is bound to one program version, so the fallback needs a second
 * one anyway.  The time-out covers the whole request, fallback included,
 * so a caller never waits much longer than it asked.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/trace.h"
#include "rpc/core.h"
#include "rpcrdma/rpcbind.h"

/* The most mappings a DUMP may list, and the bytes they may take. */
#define DUMP_MAX_ENTRIES 4096u
#define DUMP_MAX_RECORD (512u << 10)

/* struct rpcb of RFC 1833 section 2.2, as sent. */
struct rpcb_args {
	uint32_t prog;
	uint32_t vers;
	const char *netid;
	const char *addr;
	const char *owner;
};

static int encode_rpcb(struct rpcrdma_xdr_stream *xdr, void *obj)
{
	const struct rpcb_args *a = obj;
	int rc;

	if (!a)
		return 0; /* RPCBPROC_DUMP: no arguments */
	rc = rpcrdma_xdr_encode_u32(xdr, a->prog);
	if (!rc)
		rc = rpcrdma_xdr_encode_u32(xdr, a->vers);
	if (!rc)
		rc = rpcrdma_xdr_encode_string(xdr, a->netid, (uint32_t)strlen(a->netid));
	if (!rc)
		rc = rpcrdma_xdr_encode_string(xdr, a->addr, (uint32_t)strlen(a->addr));
	if (!rc)
		rc = rpcrdma_xdr_encode_string(xdr, a->owner, (uint32_t)strlen(a->owner));
	return rc;
}

static int decode_bool(struct rpcrdma_xdr_stream *xdr, void *obj)
{
	return rpcrdma_xdr_decode_bool(xdr, obj);
}

/* RPCBPROC_GETADDR's result: a universal address, "" when nothing is registered. */
struct uaddr_res {
	char s[RPCRDMA_RPCBIND_STRING_MAX + 1];
	uint32_t len;
};

static int decode_uaddr(struct rpcrdma_xdr_stream *xdr, void *obj)
{
	struct uaddr_res *r = obj;

	return rpcrdma_xdr_decode_string(xdr, r->s, sizeof(r->s), &r->len);
}

/*
 * RPCBPROC_DUMP's result, searched for one mapping: rpcbind answers
 * GETADDR for the netid of the transport the request came on (RFC 1833:
 * r_netid is ignored), and leaves netids it has no netconfig entry for,
 * "rdma" among them, out of GETADDRLIST; DUMP lists every mapping.
 */

struct dump_res {
	uint32_t prog, vers;
	const char *netid;
	struct uaddr_res hit;
	bool found;
};

static int decode_dump(struct rpcrdma_xdr_stream *xdr, void *obj)
{
	struct dump_res *d = obj;
	char netid[RPCRDMA_RPCBIND_STRING_MAX + 1], owner[RPCRDMA_RPCBIND_STRING_MAX + 1];
	struct uaddr_res addr;
	uint32_t prog, vers, len;
	bool more;
	int rc;

	for (unsigned int n = 0;; n++) {
		rc = rpcrdma_xdr_decode_bool(xdr, &more);
		if (rc || !more)
			return rc;
		if (n >= DUMP_MAX_ENTRIES)
			return RPCRDMA_ERR_TOO_LONG;
		rc = rpcrdma_xdr_decode_u32(xdr, &prog);
		if (!rc)
			rc = rpcrdma_xdr_decode_u32(xdr, &vers);
		if (!rc)
			rc = rpcrdma_xdr_decode_string(xdr, netid, sizeof(netid), &len);
		if (!rc)
			rc = rpcrdma_xdr_decode_string(xdr, addr.s, sizeof(addr.s), &addr.len);
		if (!rc)
			rc = rpcrdma_xdr_decode_string(xdr, owner, sizeof(owner), &len);
		if (rc)
			return rc;
		if (!d->found && prog == d->prog && vers == d->vers && strcmp(netid, d->netid) == 0) {
			d->hit = addr;
			d->found = true;
		}
	}
}

int rpcrdma__rpcbind_decode_getaddr(struct rpcrdma_xdr_stream *xdr, char *uaddr, uint32_t *len)
{
	struct uaddr_res res;
	int rc = decode_uaddr(xdr, &res);

	if (rc)
		return rc;
	memcpy(uaddr, res.s, (size_t)res.len + 1);
	*len = res.len;
	return 0;
}

int rpcrdma__rpcbind_decode_dump(struct rpcrdma_xdr_stream *xdr, uint32_t prog, uint32_t vers,
				 const char *netid, char *uaddr, uint32_t *len)
{
	struct dump_res d = {prog, vers, netid, {{0}, 0}, false};
	int rc = decode_dump(xdr, &d);

	if (rc)
		return rc;
	memcpy(uaddr, d.hit.s, (size_t)d.hit.len + 1);
	*len = d.hit.len;
	return 0;
}

static bool string_ok(const char *s, bool may_be_empty)
{
	size_t n;

	if (!s)
		return false;
	n = strnlen(s, RPCRDMA_RPCBIND_STRING_MAX + 1);
	return n <= RPCRDMA_RPCBIND_STRING_MAX && (may_be_empty || n > 0);
}

/*
 * One call to rpcbind version @vers.  Returns 0 with *@result set, or the
 * client's error; *@mismatch tells the caller a PROG_MISMATCH came back,
 * the one answer that makes trying another version worthwhile.
 */
static int rpcb_call_vers(struct rpcrdma_loop *loop, uint32_t vers, uint32_t proc,
			  struct rpcb_args *args, const char *host, const char *service,
			  int timeout_ms, rpcrdma_xdr_fn decode, void *result, bool *mismatch)
{
	struct rpcrdma_client_opts co;
	struct rpcrdma_client *clnt = NULL;
	struct rpcrdma_call call;
	int rc;

	*mismatch = false;
	rpcrdma_client_opts_default(&co);
	co.transport = RPCRDMA_TRANSPORT_TCP;
	co.timeout_ms = timeout_ms;
	/*
	 * One reconnection at most (0 would mean the default, 3): a refused
	 * connection is then reported after one short back-off instead of a
	 * series of growing ones, and a SET sent twice is harmless anyway.
	 */
	co.retries = 1;
	/*
	 * A bool or a uaddr is tiny; do not let a confused peer make us
	 * buffer 1 MiB.  A DUMP lists every mapping: room for 4096 of them.
	 */
	co.max_record = proc == RPCRDMA_RPCBPROC_DUMP ? DUMP_MAX_RECORD : 4096;
	rc = rpcrdma_client_create(loop, host, service, RPCRDMA_RPCBIND_PROG, vers, &co, &clnt);
	if (rc)
		return rc;

	memset(&call, 0, sizeof(call));
	call.proc = proc;
	call.encode_args = encode_rpcb;
	call.args = args;
	call.decode_res = decode;
	call.res = result;
	call.max_reply = proc == RPCRDMA_RPCBPROC_DUMP ? DUMP_MAX_RECORD
						      : 128 + RPCRDMA_RPCBIND_STRING_MAX;
	rc = rpcrdma_client_call(clnt, &call);
	rpcrdma_client_destroy(clnt);

	switch (rc) {
	case 0:
		return 0;
	case RPCRDMA_ERR_TIMEDOUT:
		return -ETIMEDOUT;
	case RPCRDMA_ERR_RPC_REJECTED:
		if (call.reply.stat != RPCRDMA_RPC_MSG_ACCEPTED)
			return rc;
		if (call.reply.accept_stat == RPCRDMA_RPC_PROG_MISMATCH) {
			*mismatch = true;
			return -EPROTONOSUPPORT;
		}
		if (call.reply.accept_stat == RPCRDMA_RPC_PROG_UNAVAIL)
			return -EPROTONOSUPPORT;
		return rc;
	case RPCRDMA_ERR_TRUNCATED:
	case RPCRDMA_ERR_TOO_LONG:
	case RPCRDMA_ERR_BAD_VALUE:
		/* The results did not decode as a bool or a uaddr. */
		return RPCRDMA_ERR_BAD_RPC;
	default:
		return rc;
	}
}

/* Version 4, then version 3 if rpcbind says it only knows other versions. */
static int rpcb_request(struct rpcrdma_loop *loop, uint32_t proc, struct rpcb_args *args,
			const struct rpcrdma_rpcbind_opts *opts, rpcrdma_xdr_fn decode,
			void *result)
{
	const char *host = opts && opts->host ? opts->host : "127.0.0.1";
	const char *service = opts && opts->service ? opts->service : "111";
	int timeout_ms = opts && opts->timeout_ms ? opts->timeout_ms : RPCRDMA_RPCBIND_TIMEOUT_MS;
	uint64_t start, spent;
	bool mismatch;
	int rc;

	if (timeout_ms < 0) {
		RPCRDMA__TRACE_BAD_ARG(-EINVAL,
				       "rpcrdma_rpcbind_opts.timeout_ms = %d: below 0 (0: %d; there "
				       "is no \"none\")",
				       timeout_ms, RPCRDMA_RPCBIND_TIMEOUT_MS);
		return -EINVAL;
	}
	start = rpcrdma_loop_now(loop);
	rc = rpcb_call_vers(loop, RPCRDMA_RPCBIND_VERS4, proc, args, host, service, timeout_ms,
			    decode, result, &mismatch);
	if (!mismatch)
		return rc;
	spent = rpcrdma_loop_now(loop) - start;
	if (spent >= (uint64_t)timeout_ms)
		return -ETIMEDOUT;
	return rpcb_call_vers(loop, RPCRDMA_RPCBIND_VERS3, proc, args, host, service,
			      timeout_ms - (int)spent, decode, result, &mismatch);
}

/* rpcbind records the owner as the uid in decimal; so do we by default. */
static const char *default_owner(const char *owner, char *buf, size_t size)
{
	if (owner)
		return owner;
	snprintf(buf, size, "%u", (unsigned int)geteuid());
	return buf;
}

int rpcrdma_rpcbind_set(struct rpcrdma_loop *loop, uint32_t prog, uint32_t vers, const char *netid,
			const char *uaddr, const char *owner,
			const struct rpcrdma_rpcbind_opts *opts)
{
	char owner_buf[16];
	struct rpcb_args args;
	bool ok = false;
	int rc;

	if (!loop || !string_ok(netid, false) || !string_ok(uaddr, false) ||
	    (owner && !string_ok(owner, true)))
		return -EINVAL;
	args.prog = prog;
	args.vers = vers;
	args.netid = netid;
	args.addr = uaddr;
	args.owner = default_owner(owner, owner_buf, sizeof(owner_buf));
	rc = rpcb_request(loop, RPCRDMA_RPCBPROC_SET, &args, opts, decode_bool, &ok);
	if (rc)
		return rc;
	return ok ? 0 : -EEXIST;
}

int rpcrdma_rpcbind_unset(struct rpcrdma_loop *loop, uint32_t prog, uint32_t vers,
			  const char *netid, const char *uaddr, const char *owner,
			  const struct rpcrdma_rpcbind_opts *opts)
{
	char owner_buf[16];
	struct rpcb_args args;
	bool ok = false;
	int rc;

	if (!netid)
		netid = "";
	if (!uaddr)
		uaddr = "";
	if (!loop || !string_ok(netid, true) || !string_ok(uaddr, true) ||
	    (owner && !string_ok(owner, true)))
		return -EINVAL;
	args.prog = prog;
	args.vers = vers;
	args.netid = netid;
	args.addr = uaddr;
	args.owner = default_owner(owner, owner_buf, sizeof(owner_buf));
	rc = rpcb_request(loop, RPCRDMA_RPCBPROC_UNSET, &args, opts, decode_bool, &ok);
	if (rc)
		return rc;
	return ok ? 0 : -ENOENT;
}

int rpcrdma_rpcbind_getaddr(struct rpcrdma_loop *loop, uint32_t prog, uint32_t vers,
			    const char *netid, char *uaddr, size_t size,
			    const struct rpcrdma_rpcbind_opts *opts)
{
	struct uaddr_res res;
	struct rpcb_args args;
	int rc;

	if (!loop || !string_ok(netid, false) || !uaddr || !size)
		return -EINVAL;
	uaddr[0] = '\0';
	/* RFC 1833: r_addr and r_owner are ignored in a GETADDR. */
	args.prog = prog;
	args.vers = vers;
	args.netid = netid;
	args.addr = "";
	args.owner = "";
	memset(&res, 0, sizeof(res));
	if (strncmp(netid, "rdma", 4) == 0) {
		struct dump_res d = {prog, vers, netid, {{0}, 0}, false};

		rc = rpcb_request(loop, RPCRDMA_RPCBPROC_DUMP, NULL, opts, decode_dump, &d);
		if (rc)
			return rc;
		res = d.hit;
	} else {
		rc = rpcb_request(loop, RPCRDMA_RPCBPROC_GETADDR, &args, opts, decode_uaddr, &res);
		if (rc)
			return rc;
	}
	if (res.len == 0)
		return -ENOENT;
	if ((size_t)res.len >= size)
		return -ENOSPC;
	memcpy(uaddr, res.s, (size_t)res.len + 1);
	return (int)res.len;
}

int rpcrdma_rpcbind_uaddr_parse(const char *uaddr, struct sockaddr_storage *ss, socklen_t *lenp)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *lo, *hi;
	unsigned int p1, p2;
	size_t hlen;
	char tail;

	if (!uaddr || !ss || !lenp)
		return -EINVAL;
	/* The port is the last two dot-separated fields; the host is the rest. */
	lo = strrchr(uaddr, '.');
	if (!lo || lo == uaddr)
		return -EINVAL;
	hi = lo - 1;
	while (hi > uaddr && *hi != '.')
		hi--;
	if (*hi != '.' || hi == uaddr)
		return -EINVAL;
	if (sscanf(hi, ".%3u.%3u%c", &p1, &p2, &tail) != 2 || p1 > 255 || p2 > 255)
		return -EINVAL;
	if (!isdigit((unsigned char)hi[1]) || !isdigit((unsigned char)lo[1]))
		return -EINVAL;
	hlen = (size_t)(hi - uaddr);
	if (hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, uaddr, hlen);
	host[hlen] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (strchr(host, ':')) {
		struct sockaddr_in6 sin6;

		memset(&sin6, 0, sizeof(sin6));
		sin6.sin6_family = AF_INET6;
		sin6.sin6_port = htons((uint16_t)(p1 << 8 | p2));
		if (inet_pton(AF_INET6, host, &sin6.sin6_addr) != 1)
			return -EINVAL;
		memcpy(ss, &sin6, sizeof(sin6));
		*lenp = sizeof(sin6);
	} else {
		struct sockaddr_in sin;

		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons((uint16_t)(p1 << 8 | p2));
		if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
			return -EINVAL;
		memcpy(ss, &sin, sizeof(sin));
		*lenp = sizeof(sin);
	}
	return 0;
}

int rpcrdma__rpcbind_port(struct rpcrdma_loop *loop, uint32_t prog, uint32_t vers,
			  enum rpcrdma_transport transport, struct sockaddr_storage *ss)
{
	char host[INET6_ADDRSTRLEN], uaddr[RPCRDMA_RPCBIND_STRING_MAX + 1];
	struct rpcrdma_rpcbind_opts ro = { 0 };
	struct sockaddr_storage found;
	const char *netid;
	socklen_t flen;
	uint16_t port;
	int rc;

	netid = rpcrdma_rpcbind_netid(transport, ss->ss_family);
	if (!netid)
		return -EINVAL;
	/* Ask the rpcbind of the very address we will connect to. */
	if (ss->ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)ss)->sin_addr, host, sizeof(host));
	else
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)ss)->sin6_addr, host, sizeof(host));
	ro.host = host;
	rc = rpcrdma_rpcbind_getaddr(loop, prog, vers, netid, uaddr, sizeof(uaddr), &ro);
	if (rc < 0)
		return rc;
	rc = rpcrdma_rpcbind_uaddr_parse(uaddr, &found, &flen);
	if (rc)
		return RPCRDMA_ERR_BAD_RPC;
	/*
	 * Only the port is taken: servers register the wildcard address, and
	 * one that registered a specific address still answers on the one
	 * we reached its rpcbind on.
	 */
	port = found.ss_family == AF_INET ? ((struct sockaddr_in *)&found)->sin_port
					  : ((struct sockaddr_in6 *)&found)->sin6_port;
	if (port == 0)
		return RPCRDMA_ERR_BAD_RPC;
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = port;
	else
		((struct sockaddr_in6 *)ss)->sin6_port = port;
	return 0;
}

int rpcrdma_rpcbind_uaddr(const struct sockaddr *sa, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN];
	uint16_t port;
	int n;

	if (!sa || !buf)
		return -EINVAL;
	/* Copy out of *sa: the caller's storage need not be aligned for the cast. */
	if (sa->sa_family == AF_INET) {
		struct sockaddr_in sin;

		memcpy(&sin, sa, sizeof(sin));
		if (!inet_ntop(AF_INET, &sin.sin_addr, host, sizeof(host)))
			return -EINVAL;
		port = ntohs(sin.sin_port);
	} else if (sa->sa_family == AF_INET6) {
		struct sockaddr_in6 sin6;

		memcpy(&sin6, sa, sizeof(sin6));
		if (!inet_ntop(AF_INET6, &sin6.sin6_addr, host, sizeof(host)))
			return -EINVAL;
		port = ntohs(sin6.sin6_port);
	} else {
		return -EINVAL;
	}
	n = snprintf(buf, size, "%s.%u.%u", host, (unsigned int)(port >> 8),
		     (unsigned int)(port & 0xff));
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= size) {
		/* Never leave a truncated address that looks like a valid one. */
		if (size)
			buf[0] = '\0';
		return -ENOSPC;
	}
	return n;
}

const char *rpcrdma_rpcbind_netid(enum rpcrdma_transport transport, int family)
{
	bool v6;

	if (family == AF_INET)
		v6 = false;
	else if (family == AF_INET6)
		v6 = true;
	else
		return NULL;
	switch (transport) {
	case RPCRDMA_TRANSPORT_RDMA:
		return v6 ? "rdma6" : "rdma";
	case RPCRDMA_TRANSPORT_TCP:
		return v6 ? "tcp6" : "tcp";
	}
	return NULL;
}

/* The netid and wildcard uaddr under which @srv is (to be) registered. */
static int server_mapping(struct rpcrdma_server *srv, enum rpcrdma_transport transport, int family,
			  const char **netid, char *uaddr, size_t size)
{
	struct sockaddr_storage ss;
	int port, rc;

	if (!srv)
		return -EINVAL;
	*netid = rpcrdma_rpcbind_netid(transport, family);
	if (!*netid)
		return -EINVAL;
	port = rpcrdma_server_port(srv);
	if (port < 0)
		return port;
	if (port == 0 || port > 65535)
		return -EINVAL;
	/*
	 * The wildcard address, as rpc.nfsd and the kernel register: clients
	 * reach the server on whichever local address they asked rpcbind on.
	 */
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_ANY);
		sin->sin_port = htons((uint16_t)port);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_any;
		sin6->sin6_port = htons((uint16_t)port);
	}
	rc = rpcrdma_rpcbind_uaddr((const struct sockaddr *)&ss, uaddr, size);
	return rc < 0 ? rc : 0;
}

int rpcrdma_server_rpcbind_register(struct rpcrdma_loop *loop, struct rpcrdma_server *srv,
				    uint32_t prog, uint32_t vers, enum rpcrdma_transport transport,
				    int family, const struct rpcrdma_rpcbind_opts *opts)
{
	char uaddr[RPCRDMA_RPCBIND_UADDR_SIZE];
	const char *netid;
	int rc;

	rc = server_mapping(srv, transport, family, &netid, uaddr, sizeof(uaddr));
	if (rc)
		return rc;
	return rpcrdma_rpcbind_set(loop, prog, vers, netid, uaddr, NULL, opts);
}

int rpcrdma_server_rpcbind_unregister(struct rpcrdma_loop *loop, struct rpcrdma_server *srv,
				      uint32_t prog, uint32_t vers,
				      enum rpcrdma_transport transport, int family,
				      const struct rpcrdma_rpcbind_opts *opts)
{
	char uaddr[RPCRDMA_RPCBIND_UADDR_SIZE];
	const char *netid;
	int rc;

	rc = server_mapping(srv, transport, family, &netid, uaddr, sizeof(uaddr));
	if (rc)
		return rc;
	return rpcrdma_rpcbind_unset(loop, prog, vers, netid, uaddr, NULL, opts);
}
