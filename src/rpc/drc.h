/*
 * drc.h - the server's duplicate request cache: a call the server already
 * executed is answered from the reply it produced, and a call still being
 * executed is not started again.
 *
 * A call is known by XID, program, version, procedure, client address (and
 * port over TCP only), the whole credential, and the length and a 64-bit
 * hash of its arguments.  A cached reply keeps where its DDP-eligible
 * results sit, so a replay over RDMA places them in the new call's Write
 * chunk.  Bounded by entries and bytes; answered entries go least recently
 * used first, entries in progress never.  No I/O: the server core drives it.
 */
#ifndef RPCRDMA_RPC_DRC_H
#define RPCRDMA_RPC_DRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rpcrdma/xdr.h"

#define RPCRDMA__DRC_DEFAULT_ENTRIES 512u
#define RPCRDMA__DRC_MAX_ENTRIES (1u << 24) /* rpc.h, drc_entries */
#define RPCRDMA__DRC_DEFAULT_BYTES (32u << 20)

struct rpcrdma__drc;
struct rpcrdma__drc_entry;

struct rpcrdma__drc_key {
	uint32_t xid;
	uint32_t prog, vers, proc;
	uint64_t args_hash; /* every byte of the arguments (args_hash.h) */
	uint64_t args_len;
	uint64_t cred_hash; /* flavor, length and body of the credential */
	uint16_t family;    /* AF_INET or AF_INET6 (v4-mapped addresses are AF_INET) */
	uint16_t port;      /* network order; 0 unless rpcrdma__drc_key_bind() set it */
	uint8_t addr[16];
};

/*
 * A DDP-eligible item inside a cached reply: @off is the offset of its first
 * data byte (its length word is the four bytes before), @len its length
 * without XDR padding.
 */
struct rpcrdma__drc_ddp {
	size_t off;
	uint32_t len;
};

enum rpcrdma__drc_verdict {
	RPCRDMA__DRC_NEW,         /* not seen: execute (entry in progress, or NULL: uncached) */
	RPCRDMA__DRC_IN_PROGRESS, /* executing now: do not execute again */
	RPCRDMA__DRC_DONE,        /* answered: send the cached reply */
};

/**
 * rpcrdma__drc_create - a cache of @entries calls holding at most
 * @max_bytes of replies (0: the defaults above)
 *
 * Entries and the table over them are allocated as calls arrive, not here.
 */
int rpcrdma__drc_create(unsigned int entries, size_t max_bytes, struct rpcrdma__drc **out);
/** Free the cache.  Whatever the entries' owner slots point to is the caller's. */
void rpcrdma__drc_destroy(struct rpcrdma__drc *drc);

/**
 * rpcrdma__drc_key_init - the key of a call
 * @args: the stream positioned at the arguments; it does not move
 */
void rpcrdma__drc_key_init(struct rpcrdma__drc_key *key, uint32_t xid, uint32_t prog, uint32_t vers,
			   uint32_t proc, const struct sockaddr *peer,
			   const struct rpcrdma_xdr_stream *args);

/**
 * rpcrdma__drc_key_bind - tie @key to the caller's credential @cred (may be
 * NULL: AUTH_NONE with no body) and, with @with_port, to @peer's port
 */
void rpcrdma__drc_key_bind(struct rpcrdma__drc_key *key, const struct sockaddr *peer,
			   bool with_port, uint32_t cred_flavor, const void *cred_body,
			   uint32_t cred_len);

/** The hash the key keeps of @len bytes at @p (tests). */
uint64_t rpcrdma__drc_hash(const void *p, size_t len);

/**
 * rpcrdma__drc_lookup - look a call up, adding it when new
 *
 * NEW: *@entry is a fresh entry in progress (complete or forget it), or NULL
 * when no entry could be taken.  IN_PROGRESS and DONE: *@entry is the
 * existing entry; for DONE read it with rpcrdma__drc_reply().
 */
enum rpcrdma__drc_verdict rpcrdma__drc_lookup(struct rpcrdma__drc *drc,
					      const struct rpcrdma__drc_key *key,
					      struct rpcrdma__drc_entry **entry);

/**
 * rpcrdma__drc_complete - the call of @e was answered with @len bytes
 *
 * Copies the reply.  Returns 0, or -ENOMEM / -EMSGSIZE (larger than the
 * whole budget) after which the entry is gone, as after forget.
 */
int rpcrdma__drc_complete(struct rpcrdma__drc *drc, struct rpcrdma__drc_entry *e, const void *reply,
			  size_t len);

/**
 * rpcrdma__drc_ddp_valid - whether @d is what it claims in @reply
 * @end: where the previous item ended (0 before the first); moved past @d
 *	when it is valid
 *
 * True when @d->off is on an XDR unit at least one word past @end, the word
 * before it holds @d->len, and the bytes with their padding lie inside the
 * @len bytes of @reply.  Anything else would have a replay hand the
 * transport bytes that are not the item the reply carried.
 */
bool rpcrdma__drc_ddp_valid(const void *reply, size_t len, const struct rpcrdma__drc_ddp *d,
			    size_t *end);

/**
 * rpcrdma__drc_complete_ddp - as rpcrdma__drc_complete(), with the @nddp
 * DDP-eligible items of the reply (in stream order)
 *
 * Items that are not valid (rpcrdma__drc_ddp_valid) are left out: their
 * bytes are in the reply all the same and replay as plain bytes.  The items count in the
 * byte budget.
 */
int rpcrdma__drc_complete_ddp(struct rpcrdma__drc *drc, struct rpcrdma__drc_entry *e,
			      const void *reply, size_t len, const struct rpcrdma__drc_ddp *ddp,
			      unsigned int nddp);

/** Drop an entry in progress whose call produced no reply. */
void rpcrdma__drc_forget(struct rpcrdma__drc *drc, struct rpcrdma__drc_entry *e);

/** The cached reply of a DONE entry; marks the entry recently used. */
void rpcrdma__drc_reply(struct rpcrdma__drc *drc, struct rpcrdma__drc_entry *e, const void **reply,
			size_t *len);

/** The DDP-eligible items of a DONE entry's reply (valid as rpcrdma__drc_reply's bytes). */
void rpcrdma__drc_reply_ddp(const struct rpcrdma__drc_entry *e, const struct rpcrdma__drc_ddp **ddp,
			    unsigned int *nddp);

/** One pointer the owner may keep with an entry in progress (NULL at first). */
void **rpcrdma__drc_owner(struct rpcrdma__drc_entry *e);

/** Counts, for tests and stats. */
struct rpcrdma__drc_counts {
	unsigned int in_progress, done;
	size_t bytes;
	uint64_t hits_in_progress, hits_done, evictions, uncached;
	unsigned int allocated; /* entries allocated so far (at most the bound) */
	unsigned int buckets;   /* the hash table's size now */
};
void rpcrdma__drc_counts(const struct rpcrdma__drc *drc, struct rpcrdma__drc_counts *out);

#endif /* RPCRDMA_RPC_DRC_H */
