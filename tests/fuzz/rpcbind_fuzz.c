/*
 * Fuzz what the library reads from rpcbind (src/rpc/rpcbind.c): the
 * results of GETADDR and DUMP, and the universal addresses (RFC 5665) in
 * them that the client turns into a port to connect to.
 *
 * Input: a byte choosing what the rest is:
 *   0  a GETADDR result (XDR)
 *   1  a DUMP result (XDR), searched for 100003/3 over the netid the
 *      next byte picks
 *   2  a universal address (the bytes up to the first NUL)
 *   3  a socket address: a family byte (even: IPv4), 2 port bytes, 16
 *      address bytes, formatted as a universal address and parsed back
 *
 * Checks: a decoded address is a C string of the length reported, at
 * most RPCRDMA_RPCBIND_STRING_MAX bytes, and the decoder never reads past
 * the bytes received.  Every address the parser accepts is IPv4 or IPv6
 * with the matching length; formatted again it parses to the same family,
 * address and port, and formatting that gives the same string (so one
 * mapping has one spelling).  Every socket address formats to a string
 * that parses back to it.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/core.h"
#include "rpcrdma/rpcbind.h"
#include "rpcrdma/xdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const netids[] = {"rdma", "rdma6", "tcp", "tcp6"};

/* Family, address and port of @ss; false for any other family. */
static bool same_endpoint(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port &&
		       memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0;
	}
	return false;
}

static void check_formats_back(const struct sockaddr_storage *ss)
{
	char s[RPCRDMA_RPCBIND_UADDR_SIZE], again[RPCRDMA_RPCBIND_UADDR_SIZE];
	struct sockaddr_storage back;
	socklen_t len;
	int n;

	n = rpcrdma_rpcbind_uaddr((const struct sockaddr *)ss, s, sizeof(s));
	if (n < 0 || (size_t)n != strlen(s))
		abort();
	if (rpcrdma_rpcbind_uaddr_parse(s, &back, &len) != 0 || !same_endpoint(ss, &back))
		abort();
	n = rpcrdma_rpcbind_uaddr((const struct sockaddr *)&back, again, sizeof(again));
	if (n < 0 || strcmp(s, again) != 0)
		abort();
}

static void check_parse(const char *uaddr)
{
	struct sockaddr_storage ss;
	socklen_t len = 0;

	if (rpcrdma_rpcbind_uaddr_parse(uaddr, &ss, &len) != 0)
		return;
	if (!(ss.ss_family == AF_INET && len == sizeof(struct sockaddr_in)) &&
	    !(ss.ss_family == AF_INET6 && len == sizeof(struct sockaddr_in6)))
		abort();
	check_formats_back(&ss);
}

static void check_decoded(int rc, const struct rpcrdma_xdr_stream *xdr, size_t size,
			  const char *uaddr, uint32_t len)
{
	if (rc)
		return;
	if (rpcrdma_xdr_pos(xdr) > size || len > RPCRDMA_RPCBIND_STRING_MAX || strlen(uaddr) != len)
		abort();
	check_parse(uaddr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char uaddr[RPCRDMA_RPCBIND_STRING_MAX + 1];
	struct rpcrdma_xdr_stream xdr;
	uint32_t len = 0;
	int rc;

	if (size < 1)
		return 0;
	switch (data[0] & 3) {
	case 0:
		rpcrdma_xdr_init_const(&xdr, data + 1, size - 1);
		rc = rpcrdma__rpcbind_decode_getaddr(&xdr, uaddr, &len);
		check_decoded(rc, &xdr, size - 1, uaddr, len);
		break;
	case 1:
		if (size < 2)
			return 0;
		rpcrdma_xdr_init_const(&xdr, data + 2, size - 2);
		rc =
		    rpcrdma__rpcbind_decode_dump(&xdr, 100003, 3, netids[data[1] & 3], uaddr, &len);
		check_decoded(rc, &xdr, size - 2, uaddr, len);
		break;
	case 2: {
		char *s = malloc(size);

		if (!s)
			return 0;
		memcpy(s, data + 1, size - 1);
		s[size - 1] = '\0';
		check_parse(s);
		free(s);
		break;
	}
	case 3: {
		struct sockaddr_storage ss;

		if (size < 1 + 1 + 2 + 16)
			return 0;
		memset(&ss, 0, sizeof(ss));
		if (data[1] & 1) {
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

			sin6->sin6_family = AF_INET6;
			memcpy(&sin6->sin6_port, data + 2, 2);
			memcpy(&sin6->sin6_addr, data + 4, 16);
		} else {
			struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

			sin->sin_family = AF_INET;
			memcpy(&sin->sin_port, data + 2, 2);
			memcpy(&sin->sin_addr, data + 4, 4);
		}
		check_formats_back(&ss);
		break;
	}
	}
	return 0;
}
