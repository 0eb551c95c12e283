/*
 * service_port.h - the check the core's resolver and librpcrdma-tirpc
 * both make of a service string before getaddrinfo() sees it.
 */
#ifndef RPCRDMA_RPC_SERVICE_PORT_H
#define RPCRDMA_RPC_SERVICE_PORT_H

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

/*
 * Whether @service is a port getaddrinfo() would take as a number but
 * cannot represent: glibc reads it with strtoul() and keeps the low 16
 * bits, so "65536" became port 0 (any port, for a server) and "99999"
 * port 34463.  An empty string is port 0 to it as well.
 */
static inline bool rpcrdma__service_out_of_range(const char *service)
{
	const char *p = service;
	unsigned long v;
	bool minus;
	char *end;

	if (!*service)
		return true;
	while (isspace((unsigned char)*p))
		p++;
	minus = *p == '-';
	if (*p == '+' || *p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return false;
	errno = 0;
	v = strtoul(p, &end, 10);
	if (*end)
		return false; /* a name that begins with digits */
	return minus || errno == ERANGE || v > 65535;
}

#endif /* RPCRDMA_RPC_SERVICE_PORT_H */
