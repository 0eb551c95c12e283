/* Client lists and exports files (access.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"

static int parse_id(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	/* (uid_t)-1 is "no id" to the kernel: never an identity to act as. */
	if (errno || *end || v >= 0xffffffffu)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_opt(struct nfsd_client *c, const char *o)
{
	static const struct {
		const char *name;
		unsigned int set, clear;
	} words[] = {
	    {"rw", 0, NFSD_RO},
	    {"ro", NFSD_RO, 0},
	    {"root_squash", 0, NFSD_NO_ROOT_SQUASH},
	    {"no_root_squash", NFSD_NO_ROOT_SQUASH, 0},
	    {"all_squash", NFSD_ALL_SQUASH, 0},
	    {"no_all_squash", 0, NFSD_ALL_SQUASH},
	    {"secure", 0, NFSD_INSECURE},
	    {"insecure", NFSD_INSECURE, 0},
	    /* knfsd's walk up from a directory handle (nfs3_proc.c's
	     * dir_open); not its check of a file's parent, which needs the
	     * parent in the handle, and ours carry none.  The handle's MAC
	     * binds it to the export, not to a place in the tree. */
	    {"subtree_check", NFSD_SUBTREE_CHECK, 0},
	    {"no_subtree_check", 0, NFSD_SUBTREE_CHECK},
	    /* Accepted for exports files written for knfsd; they change
	     * nothing here (writes are synchronous as the client asks). */
	    {"sync", 0, 0},
	    {"async", 0, 0},
	    {"wdelay", 0, 0},
	    {"no_wdelay", 0, 0},
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strcmp(o, words[i].name) == 0) {
			c->flags = (c->flags | words[i].set) & ~words[i].clear;
			return 0;
		}
	}
	if (strncmp(o, "anonuid=", 8) == 0)
		return parse_id(o + 8, &c->anon_uid);
	if (strncmp(o, "anongid=", 8) == 0)
		return parse_id(o + 8, &c->anon_gid);
	return -1;
}

static int netmask_bits(int family, const char *s, unsigned int *bits)
{
	uint8_t m[16];
	size_t len = family == AF_INET ? 4 : 16;
	unsigned int n = 0;
	bool ended = false;

	if (inet_pton(family, s, m) != 1)
		return -1;
	for (size_t i = 0; i < len; i++) {
		for (int b = 7; b >= 0; b--) {
			bool one = (m[i] >> b) & 1;

			if (one && ended)
				return -1; /* not contiguous */
			if (one)
				n++;
			else
				ended = true;
		}
	}
	*bits = n;
	return 0;
}

static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned int bits);

/*
 * An entry of IPv4-mapped IPv6 addresses as the IPv4 entry it means:
 * peer_bytes makes a mapped peer IPv4, so an IPv6 entry for it never
 * matched, and its host fell through to a broader entry (with
 * "*(rw) ::ffff:10.1.2.3(ro)", 10.1.2.3 got rw).  A prefix below 96 that
 * takes in the whole mapped range and more would be an IPv4 entry and an
 * IPv6 one at once, which one entry cannot be: refused, with the way to
 * write it.  Returns 0 or -EINVAL.
 */
static int mapped_as_ipv4(struct nfsd_client *c, const char *spec)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (c->family != AF_INET6 || !prefix_match(c->addr, mapped, c->prefix < 96 ? c->prefix : 96))
		return 0;
	if (c->prefix < 96) {
		fprintf(stderr,
			"rpcrdma-nfsd: client '%s' takes in every IPv4-mapped address "
			"(::ffff:0:0/96) and more, and mapped peers are matched as IPv4: write "
			"their part as an IPv4 entry (0.0.0.0/0 for all) and the rest as IPv6 "
			"networks that leave ::ffff:0:0/96 out, or use *\n",
			spec);
		return -EINVAL;
	}
	memmove(c->addr, c->addr + 12, 4);
	memset(c->addr + 4, 0, 12);
	c->family = AF_INET;
	c->prefix -= 96;
	return 0;
}

int nfsd_access_add(struct nfsd_access *acc, const char *spec)
{
	struct nfsd_client c;
	char host[128], *slash, *open_p;
	const char *opts = NULL;
	size_t hlen;

	if (acc->n == NFSD_CLIENTS_MAX) {
		fprintf(stderr, "rpcrdma-nfsd: more than %u clients\n", NFSD_CLIENTS_MAX);
		return -ENOSPC;
	}
	memset(&c, 0, sizeof(c));
	c.flags = acc->default_flags;
	c.anon_uid = acc->anon_uid;
	c.anon_gid = acc->anon_gid;
	open_p = strchr(spec, '(');
	hlen = open_p ? (size_t)(open_p - spec) : strlen(spec);
	if (hlen == 0 || hlen >= sizeof(host))
		goto bad;
	memcpy(host, spec, hlen);
	host[hlen] = '\0';
	if (open_p) {
		size_t olen = strlen(open_p);

		if (olen < 2 || open_p[olen - 1] != ')')
			goto bad;
		opts = open_p + 1;
	}
	snprintf(c.text, sizeof(c.text), "%s", host);
	slash = strchr(host, '/');
	if (slash)
		*slash++ = '\0';
	if (strcmp(host, "*") == 0) {
		if (slash)
			goto bad;
		c.any = true;
	} else {
		size_t bits;

		c.family = strchr(host, ':') ? AF_INET6 : AF_INET;
		bits = c.family == AF_INET ? 32 : 128;
		if (inet_pton(c.family, host, c.addr) != 1)
			goto bad;
		c.prefix = (unsigned int)bits;
		c.network = slash != NULL;
		if (slash) {
			char *end;
			unsigned long v = strtoul(slash, &end, 10);

			if (*slash && !*end) {
				if (v > bits)
					goto bad;
				c.prefix = (unsigned int)v;
			} else if (netmask_bits(c.family, slash, &c.prefix)) {
				goto bad;
			}
		}
		if (mapped_as_ipv4(&c, spec))
			return -EINVAL;
	}
	if (opts) {
		char buf[512], *save = NULL, *o;
		size_t olen = strlen(opts) - 1; /* without ')' */

		if (olen >= sizeof(buf))
			goto bad;
		memcpy(buf, opts, olen);
		buf[olen] = '\0';
		for (o = strtok_r(buf, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
			if (parse_opt(&c, o)) {
				fprintf(stderr, "rpcrdma-nfsd: unknown export option '%s' in %s\n", o,
					spec);
				return -EINVAL;
			}
		}
	}
	acc->c[acc->n++] = c;
	return 0;
bad:
	fprintf(stderr,
		"rpcrdma-nfsd: bad client '%s' (want ADDRESS[/PREFIX][(OPTIONS)] or "
		"*[(OPTIONS)])\n",
		spec);
	return -EINVAL;
}

int nfsd_access_load(struct nfsd_access *acc, const char *file, const char *exported)
{
	FILE *f = fopen(file, "re");
	char line[4096], logical[16384];
	size_t have = 0;
	unsigned int lineno = 0;
	int rc = 0;

	if (!f) {
		rc = -errno;
		fprintf(stderr, "rpcrdma-nfsd: %s: %s\n", file, strerror(errno));
		return rc;
	}
	logical[0] = '\0';
	while (!rc && fgets(line, sizeof(line), f)) {
		char *hash = strchr(line, '#'), *save = NULL, *w, real[PATH_MAX];
		size_t len;

		lineno++;
		if (hash)
			*hash = '\0';
		len = strcspn(line, "\n");
		line[len] = '\0';
		if (len && line[len - 1] == '\\') {
			line[len - 1] = ' ';
			if (have + len >= sizeof(logical)) {
				rc = -E2BIG;
				break;
			}
			memcpy(logical + have, line, len + 1);
			have += len;
			continue;
		}
		if (have + len >= sizeof(logical)) {
			rc = -E2BIG;
			break;
		}
		memcpy(logical + have, line, len + 1);
		have = 0;
		w = strtok_r(logical, " \t", &save);
		if (!w)
			continue;
		if (!realpath(w, real) || strcmp(real, exported) != 0) {
			fprintf(stderr,
				"rpcrdma-nfsd: %s:%u: %s is not the directory served (%s): "
				"one directory per server\n",
				file, lineno, w, exported);
			rc = -EINVAL;
			break;
		}
		while (!rc && (w = strtok_r(NULL, " \t", &save)))
			rc = nfsd_access_add(acc, w);
	}
	if (rc == -E2BIG)
		fprintf(stderr, "rpcrdma-nfsd: %s:%u: line too long\n", file, lineno);
	fclose(f);
	return rc;
}

/* The peer as an address of its own family: an IPv4-mapped IPv6 address is
 * the IPv4 one, so "10.0.0.0/8" covers clients of a dual-stack listener. */
static int peer_bytes(const struct sockaddr *sa, uint8_t out[16])
{
	if (sa->sa_family == AF_INET) {
		memcpy(out, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
		return AF_INET;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			memcpy(out, a->s6_addr + 12, 4);
			return AF_INET;
		}
		memcpy(out, a->s6_addr, 16);
		return AF_INET6;
	}
	return -1;
}

/* The kinds of entry in the order exports(5) ranks them. */
enum entry_kind { KIND_HOST, KIND_NETWORK, KIND_ANY };

static enum entry_kind kind_of(const struct nfsd_client *c)
{
	if (c->any)
		return KIND_ANY;
	return c->network ? KIND_NETWORK : KIND_HOST;
}

static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int full = bits / 8, rest = bits % 8;

	if (memcmp(a, b, full) != 0)
		return false;
	if (!rest)
		return true;
	return ((a[full] ^ b[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

const struct nfsd_client *nfsd_access_find(const struct nfsd_access *acc,
					   const struct sockaddr *peer)
{
	uint8_t addr[16];
	int family;

	if (!peer)
		return NULL;
	family = peer_bytes(peer, addr);
	if (family < 0)
		return NULL;
	/* An entry for the host itself must not be shadowed by a broader
	 * one written before it: "NET(rw,no_root_squash) HOST(ro)" gives
	 * HOST ro, as from knfsd's mountd. */
	for (enum entry_kind kind = KIND_HOST; kind <= KIND_ANY; kind++) {
		for (size_t i = 0; i < acc->n; i++) {
			const struct nfsd_client *c = &acc->c[i];

			if (kind_of(c) != kind)
				continue;
			if (c->any ||
			    (c->family == family && prefix_match(addr, c->addr, c->prefix)))
				return c;
		}
	}
	return NULL;
}

int nfsd_peer_port(const struct sockaddr *peer)
{
	if (!peer)
		return -1;
	if (peer->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)(const void *)peer)->sin_port);
	if (peer->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)(const void *)peer)->sin6_port);
	return -1;
}
