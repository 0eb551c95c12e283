/*
 * Fuzz rpcrdma-nfsd's client lists (tools/nfsd/access.c): --client SPEC
 * and exports(5) files.  Local input, but an administrator's typo must
 * get a message, never a crash; and what it admits must be what the
 * entries say.
 *
 * Input: a byte choosing what the rest is.
 *   even  client specs, one a line, each given as --client would be,
 *         then a peer: the last 17 bytes (a family byte, even: IPv4, and
 *         the address)
 *   odd   an exports file for the directory "/", then the same peer
 *
 * Checks: every entry added is "*" or an address of its family with a
 * prefix no longer than the address, and no IPv6 one takes in an
 * IPv4-mapped address; its text is a C string; and the
 * entry nfsd_access_find() picks for the peer is the one exports(5)
 * ranks first (a host before a network before "*", then the first
 * written), by a plain reading of the entries.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "access.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PEER_BYTES 17u

static struct nfsd_access acc;
static FILE *quiet;

static bool bit_set(const uint8_t *a, unsigned int bit)
{
	return (a[bit / 8] >> (7 - bit % 8)) & 1;
}

static bool covers(const struct nfsd_client *c, int family, const uint8_t *addr)
{
	if (c->any)
		return true;
	if (c->family != family)
		return false;
	for (unsigned int b = 0; b < c->prefix; b++)
		if (bit_set(c->addr, b) != bit_set(addr, b))
			return false;
	return true;
}

static int rank(const struct nfsd_client *c)
{
	return c->any ? 2 : c->network ? 1 : 0;
}

static void check_entries(void)
{
	if (acc.n > NFSD_CLIENTS_MAX)
		abort();
	for (size_t i = 0; i < acc.n; i++) {
		const struct nfsd_client *c = &acc.c[i];

		if (!memchr(c->text, '\0', sizeof(c->text)))
			abort();
		if (c->any)
			continue;
		if (!(c->family == AF_INET && c->prefix <= 32) &&
		    !(c->family == AF_INET6 && c->prefix <= 128))
			abort();
		if (!c->network && c->prefix != (c->family == AF_INET ? 32u : 128u))
			abort();
		/* No IPv6 entry takes in an IPv4-mapped address: those are
		 * IPv4 entries (a mapped peer is matched as IPv4). */
		if (c->family == AF_INET6) {
			unsigned int b, n = c->prefix < 96 ? c->prefix : 96;

			for (b = 0; b < n; b++)
				if (bit_set(c->addr, b) != (b >= 80))
					break;
			if (b == n)
				abort();
		}
	}
}

static void check_find(const uint8_t *peer)
{
	struct sockaddr_storage ss;
	const struct nfsd_client *got, *want = NULL;
	uint8_t addr[16];
	int family;

	memset(&ss, 0, sizeof(ss));
	if (peer[0] & 1) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, peer + 1, 16);
		/* An IPv4-mapped address is the IPv4 one. */
		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			family = AF_INET;
			memcpy(addr, peer + 13, 4);
		} else {
			family = AF_INET6;
			memcpy(addr, peer + 1, 16);
		}
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, peer + 1, 4);
		family = AF_INET;
		memcpy(addr, peer + 1, 4);
	}
	for (size_t i = 0; i < acc.n; i++) {
		const struct nfsd_client *c = &acc.c[i];

		if (covers(c, family, addr) && (!want || rank(c) < rank(want)))
			want = c;
	}
	got = nfsd_access_find(&acc, (const struct sockaddr *)&ss);
	if (got != want)
		abort();
}

static void add_specs(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *line, *save = NULL;

	if (!text)
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (nfsd_access_add(&acc, line) == -ENOSPC)
			break;
	free(text);
}

static void load_file(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = memfd_create("exports", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	if (write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	(void)nfsd_access_load(&acc, path, "/");
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *saved = stderr;

	if (size < 1 + PEER_BYTES)
		return 0;
	if (!quiet) {
		quiet = fopen("/dev/null", "w");
		if (!quiet)
			abort();
	}
	memset(&acc, 0, sizeof(acc));
	acc.default_flags = data[0] & 0x0e;
	acc.anon_uid = acc.anon_gid = 65534;
	/* The parsers explain each mistake on stderr: not millions of times. */
	stderr = quiet;
	if (data[0] & 1)
		load_file(data + 1, size - 1 - PEER_BYTES);
	else
		add_specs(data + 1, size - 1 - PEER_BYTES);
	stderr = saved;
	check_entries();
	check_find(data + size - PEER_BYTES);
	return 0;
}
