/*
 * Who may use rpcrdma-nfsd's export, in the spirit of exports(5): a list
 * of clients (an address, a network, or every host), each with its
 * options.  AUTH_SYS believes whatever identity a client host claims, so
 * the list of hosts is the real access control; the options say what an
 * admitted host's users become (root squash, all squash, the anonymous
 * ids), whether it may write, and whether its TCP requests must come from
 * a privileged port.
 *
 * Which entry applies, as exports(5) ranks them whatever their order: a
 * single host first, then networks, then "*"; among entries of one kind,
 * the first that matches.  A peer no entry matches is refused.
 */
#ifndef RPCRDMA_NFSD_ACCESS_H
#define RPCRDMA_NFSD_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

enum nfsd_client_flag {
	NFSD_RO = 1u << 0,             /* ro: every change refused (NFS3ERR_ROFS) */
	NFSD_NO_ROOT_SQUASH = 1u << 1, /* uid 0 and gid 0 stay root */
	NFSD_ALL_SQUASH = 1u << 2,     /* every user is the anonymous one */
	NFSD_INSECURE = 1u << 3,       /* TCP requests from any source port */
	NFSD_SUBTREE_CHECK = 1u << 4,  /* directory handles must still be inside */
};

struct nfsd_client {
	bool any;        /* "*": every host */
	bool network;    /* given with a prefix or netmask, even a full one */
	int family;      /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	unsigned int prefix; /* bits of addr that must match */
	unsigned int flags;  /* enum nfsd_client_flag */
	uint32_t anon_uid, anon_gid;
	char text[128];  /* as given, for messages */
};

#define NFSD_CLIENTS_MAX 256u

struct nfsd_access {
	struct nfsd_client c[NFSD_CLIENTS_MAX];
	size_t n;
	/* What an entry's options start from (--all-squash, --insecure, ...). */
	unsigned int default_flags;
	uint32_t anon_uid, anon_gid;
};

/*
 * One client: "HOST", "HOST/PREFIX", "HOST/NETMASK" or "*", optionally
 * followed by "(OPTIONS)" of exports(5): rw, ro, root_squash,
 * no_root_squash, all_squash, no_all_squash, secure, insecure,
 * subtree_check, no_subtree_check, anonuid=N, anongid=N.  HOST is a
 * numeric IPv4 or IPv6 address (names are not resolved).  Returns 0 or
 * -EINVAL (with a message on stderr), -ENOSPC past NFSD_CLIENTS_MAX.
 */
int nfsd_access_add(struct nfsd_access *acc, const char *spec);

/*
 * An exports file: lines "DIRECTORY CLIENT[(OPTIONS)] ...", '#' to the
 * end of a line is a comment, a trailing '\' continues a line.  Every
 * DIRECTORY must be @exported (after realpath): the server exports one
 * directory.  Returns 0 or -errno with a message on stderr.
 */
int nfsd_access_load(struct nfsd_access *acc, const char *file, const char *exported);

/* The entry for @peer, or NULL: refused.  A NULL @peer matches nothing. */
const struct nfsd_client *nfsd_access_find(const struct nfsd_access *acc,
					   const struct sockaddr *peer);

/* The peer's port (host order), or -1 when it has none. */
int nfsd_peer_port(const struct sockaddr *peer);

#endif /* RPCRDMA_NFSD_ACCESS_H */
