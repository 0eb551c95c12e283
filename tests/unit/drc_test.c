/*
 * Duplicate request cache tests: the new / in progress / done life of an
 * entry, what is and is not part of the key (XID, program, version,
 * procedure, every byte of the arguments however split, the credential;
 * the port only when bound for TCP), v4-mapped
 * addresses, LRU eviction of answered entries only, calls in progress that
 * are never evicted (uncached instead), the byte budget, forget, the owner
 * slot, a key computed without moving the caller's stream, and the DDP
 * items of a cached reply (only those that are what they claim are kept).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rpc/drc.h"

static struct sockaddr_in v4(const char *ip, uint16_t port)
{
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, ip, &sin.sin_addr), 1);
	return sin;
}

static void make_key(struct rpcrdma__drc_key *k, uint32_t xid, uint32_t proc, const void *peer,
		     const void *args, size_t len)
{
	struct rpcrdma_xdr_stream xdr;

	rpcrdma_xdr_init_const(&xdr, args, len);
	rpcrdma__drc_key_init(k, xid, 0x20000099, 1, proc, peer, &xdr);
}

static const uint8_t args_a[8] = {0, 0, 0, 1, 0, 0, 0, 2};
static const uint8_t args_b[8] = {0, 0, 0, 1, 0, 0, 0, 3};

static void test_life_cycle(void **state)
{
	struct sockaddr_in peer = v4("127.0.0.1", 1000);
	struct rpcrdma__drc_entry *e, *e2;
	struct rpcrdma__drc_counts n;
	struct rpcrdma__drc_key k;
	struct rpcrdma__drc *drc;
	const void *reply;
	size_t len;

	(void)state;
	assert_int_equal(rpcrdma__drc_create(8, 0, &drc), 0);
	make_key(&k, 7, 2, &peer, args_a, sizeof(args_a));
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	assert_non_null(e);
	assert_null(*rpcrdma__drc_owner(e));
	*rpcrdma__drc_owner(e) = &peer;
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e2), RPCRDMA__DRC_IN_PROGRESS);
	assert_ptr_equal(e, e2);
	assert_ptr_equal(*rpcrdma__drc_owner(e2), &peer);
	assert_int_equal(rpcrdma__drc_complete(drc, e, "reply-bytes!", 12), 0);
	assert_int_equal(rpcrdma__drc_complete(drc, e, "x", 1), -EINVAL);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e2), RPCRDMA__DRC_DONE);
	assert_ptr_equal(e, e2);
	rpcrdma__drc_reply(drc, e2, &reply, &len);
	assert_int_equal(len, 12);
	assert_memory_equal(reply, "reply-bytes!", 12);
	rpcrdma__drc_counts(drc, &n);
	assert_int_equal(n.done, 1);
	assert_int_equal(n.in_progress, 0);
	assert_int_equal(n.bytes, 12);
	assert_int_equal(n.hits_in_progress, 1);
	assert_int_equal(n.hits_done, 1);
	rpcrdma__drc_destroy(drc);
	rpcrdma__drc_destroy(NULL);
}

static void test_key(void **state)
{
	struct sockaddr_in a1 = v4("127.0.0.1", 1000), a2 = v4("127.0.0.1", 2000);
	struct sockaddr_in other = v4("127.0.0.2", 1000);
	struct sockaddr_in6 mapped;
	struct rpcrdma__drc_entry *e;
	struct rpcrdma__drc_key k;
	struct rpcrdma__drc *drc;

	(void)state;
	memset(&mapped, 0, sizeof(mapped));
	mapped.sin6_family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, "::ffff:127.0.0.1", &mapped.sin6_addr), 1);

	assert_int_equal(rpcrdma__drc_create(16, 0, &drc), 0);
	make_key(&k, 1, 2, &a1, args_a, sizeof(args_a));
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	/* Another port of the same host, unbound (RDMA): the same call. */
	make_key(&k, 1, 2, &a2, args_a, sizeof(args_a));
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_IN_PROGRESS);
	make_key(&k, 1, 2, &mapped, args_a, sizeof(args_a));
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_IN_PROGRESS);
	/* Anything else differing: a new call. */
	make_key(&k, 1, 2, &other, args_a, sizeof(args_a));
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	make_key(&k, 2, 2, &a1, args_a, sizeof(args_a));
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	make_key(&k, 1, 3, &a1, args_a, sizeof(args_a));
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	make_key(&k, 1, 2, &a1, args_b, sizeof(args_b));
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	make_key(&k, 1, 2, &a1, args_a, 4);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	rpcrdma__drc_destroy(drc);
}

static void test_args_hash_whole(void **state)
{
	struct sockaddr_in a = v4("10.0.0.1", 1);
	struct rpcrdma__drc_key k1, k2;
	struct rpcrdma_xdr_stream xdr;
	static uint8_t big[70000];

	(void)state;
	memset(big, 0x5a, sizeof(big));
	make_key(&k1, 9, 1, &a, big, sizeof(big));
	/* A byte anywhere, the last one and one far past the first 256
	 * included, makes another call. */
	for (size_t at = 0; at < sizeof(big); at += at < 300 ? 1 : 997) {
		big[at] ^= 1;
		make_key(&k2, 9, 1, &a, big, sizeof(big));
		big[at] ^= 1;
		assert_true(k1.args_hash != k2.args_hash);
	}
	big[sizeof(big) - 1] ^= 0x80;
	make_key(&k2, 9, 1, &a, big, sizeof(big));
	big[sizeof(big) - 1] ^= 0x80;
	assert_true(k1.args_hash != k2.args_hash);
	make_key(&k2, 9, 1, &a, big, sizeof(big));
	assert_memory_equal(&k1, &k2, sizeof(k1));
	assert_int_equal(k1.args_len, sizeof(big));

	/* The same bytes split anywhere (Read chunks, a Long Call) hash the
	 * same: a retransmission may travel in another form. */
	for (size_t cut = 0; cut < 100; cut += 7) {
		struct iovec iov[4] = {
		    {big, cut}, {big + cut, 0}, {big + cut, 33}, {big + cut + 33, sizeof(big) - cut - 33}};

		assert_int_equal(rpcrdma_xdr_init_iov(&xdr, iov, 4), 0);
		rpcrdma__drc_key_init(&k2, 9, 0x20000099, 1, 1, (const struct sockaddr *)&a, &xdr);
		assert_memory_equal(&k1, &k2, sizeof(k1));
	}

	/* The caller's stream stays where it was. */
	rpcrdma_xdr_init_const(&xdr, big, sizeof(big));
	assert_int_equal(rpcrdma_xdr_skip(&xdr, 8), 0);
	rpcrdma__drc_key_init(&k1, 1, 1, 1, 1, (const struct sockaddr *)&a, &xdr);
	assert_int_equal(rpcrdma_xdr_pos(&xdr), 8);
	assert_int_equal(k1.args_len, sizeof(big) - 8);
	assert_true(k1.args_hash == rpcrdma__drc_hash(big + 8, sizeof(big) - 8));
}

/* The credential and (over TCP) the port tie a reply to its caller. */
static void test_key_bind(void **state)
{
	struct sockaddr_in a1 = v4("10.0.0.1", 700), a2 = v4("10.0.0.1", 701);
	static const uint8_t sys_a[8] = {0, 0, 0, 1, 0, 0, 0, 0};
	static const uint8_t sys_b[8] = {0, 0, 0, 2, 0, 0, 0, 0};
	struct rpcrdma__drc_key k1, k2;
	struct rpcrdma__drc_entry *e;
	struct rpcrdma__drc *drc;

	(void)state;
	assert_int_equal(rpcrdma__drc_create(8, 0, &drc), 0);
	make_key(&k1, 5, 1, &a1, args_a, 8);
	rpcrdma__drc_key_bind(&k1, (const struct sockaddr *)&a1, true, 1, sys_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k1, &e), RPCRDMA__DRC_NEW);
	assert_int_equal(rpcrdma__drc_complete(drc, e, "r", 1), 0);

	/* Another user's credential, same everything else: a new call. */
	make_key(&k2, 5, 1, &a1, args_a, 8);
	rpcrdma__drc_key_bind(&k2, (const struct sockaddr *)&a1, true, 1, sys_b, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k2, &e), RPCRDMA__DRC_NEW);
	rpcrdma__drc_forget(drc, e);
	/* Another flavor with the same body, or a shorter body. */
	rpcrdma__drc_key_bind(&k2, (const struct sockaddr *)&a1, true, 0, sys_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k2, &e), RPCRDMA__DRC_NEW);
	rpcrdma__drc_forget(drc, e);
	rpcrdma__drc_key_bind(&k2, (const struct sockaddr *)&a1, true, 1, sys_a, 4);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k2, &e), RPCRDMA__DRC_NEW);
	rpcrdma__drc_forget(drc, e);
	/* Another port over TCP: another client. */
	rpcrdma__drc_key_bind(&k2, (const struct sockaddr *)&a2, true, 1, sys_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k2, &e), RPCRDMA__DRC_NEW);
	rpcrdma__drc_forget(drc, e);
	/* The same caller: the retransmission is answered from the cache. */
	rpcrdma__drc_key_bind(&k2, (const struct sockaddr *)&a1, true, 1, sys_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k2, &e), RPCRDMA__DRC_DONE);

	/* Over RDMA the port is left out: a new connection's port matches. */
	make_key(&k1, 6, 1, &a1, args_a, 8);
	rpcrdma__drc_key_bind(&k1, (const struct sockaddr *)&a1, false, 1, sys_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k1, &e), RPCRDMA__DRC_NEW);
	assert_int_equal(rpcrdma__drc_complete(drc, e, "r", 1), 0);
	make_key(&k2, 6, 1, &a2, args_a, 8);
	rpcrdma__drc_key_bind(&k2, (const struct sockaddr *)&a2, false, 1, sys_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k2, &e), RPCRDMA__DRC_DONE);
	rpcrdma__drc_destroy(drc);
}

static void test_lru_eviction(void **state)
{
	struct sockaddr_in a = v4("127.0.0.1", 1);
	struct rpcrdma__drc_entry *e;
	struct rpcrdma__drc_counts n;
	struct rpcrdma__drc_key k;
	struct rpcrdma__drc *drc;

	(void)state;
	assert_int_equal(rpcrdma__drc_create(4, 0, &drc), 0);
	for (uint32_t xid = 1; xid <= 4; xid++) {
		make_key(&k, xid, 1, &a, args_a, 8);
		assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
		assert_int_equal(rpcrdma__drc_complete(drc, e, "r", 1), 0);
	}
	/* Touch 1: now 2 is the least recently used. */
	make_key(&k, 1, 1, &a, args_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_DONE);
	make_key(&k, 5, 1, &a, args_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	assert_non_null(e);
	make_key(&k, 2, 1, &a, args_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW); /* evicted */
	make_key(&k, 1, 1, &a, args_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_DONE);
	rpcrdma__drc_counts(drc, &n);
	assert_int_equal(n.evictions, 2);
	rpcrdma__drc_destroy(drc);
}

static void test_in_progress_never_evicted(void **state)
{
	struct sockaddr_in a = v4("127.0.0.1", 1);
	struct rpcrdma__drc_entry *e, *first;
	struct rpcrdma__drc_counts n;
	struct rpcrdma__drc_key k;
	struct rpcrdma__drc *drc;

	(void)state;
	assert_int_equal(rpcrdma__drc_create(2, 0, &drc), 0);
	make_key(&k, 1, 1, &a, args_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &first), RPCRDMA__DRC_NEW);
	make_key(&k, 2, 1, &a, args_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	make_key(&k, 3, 1, &a, args_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	assert_null(e); /* runs uncached */
	make_key(&k, 1, 1, &a, args_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_IN_PROGRESS);
	rpcrdma__drc_counts(drc, &n);
	assert_int_equal(n.uncached, 1);
	assert_int_equal(n.in_progress, 2);
	/* Forget frees the slot. */
	rpcrdma__drc_forget(drc, first);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	assert_non_null(e);
	rpcrdma__drc_forget(drc, NULL);
	rpcrdma__drc_destroy(drc);
}

static void test_byte_budget(void **state)
{
	struct sockaddr_in a = v4("127.0.0.1", 1);
	struct rpcrdma__drc_entry *e;
	struct rpcrdma__drc_counts n;
	struct rpcrdma__drc_key k;
	struct rpcrdma__drc *drc;
	uint8_t blob[200];

	(void)state;
	memset(blob, 7, sizeof(blob));
	assert_int_equal(rpcrdma__drc_create(8, 100, &drc), 0);
	make_key(&k, 1, 1, &a, args_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	assert_int_equal(rpcrdma__drc_complete(drc, e, blob, 60), 0);
	make_key(&k, 2, 1, &a, args_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	assert_int_equal(rpcrdma__drc_complete(drc, e, blob, 60), 0);
	rpcrdma__drc_counts(drc, &n);
	assert_int_equal(n.bytes, 60);
	assert_int_equal(n.done, 1);
	make_key(&k, 1, 1, &a, args_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	/* Larger than the whole budget: not cached at all. */
	assert_int_equal(rpcrdma__drc_complete(drc, e, blob, 150), -EMSGSIZE);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	rpcrdma__drc_forget(drc, e);
	make_key(&k, 2, 1, &a, args_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_DONE);
	rpcrdma__drc_destroy(drc);
}

/*
 * A reply with DDP-eligible items: "HDR0HDR1", a 5-byte item at 12 (its
 * length word at 8, padding to 20), an empty item at 24 (length word at
 * 20), and "TAIL" at 24.
 */
static const char ddp_reply[] = "HDR0HDR1"
				"\0\0\0\5"
				"abcde\0\0\0"
				"\0\0\0\0"
				"TAIL";
#define DDP_REPLY_LEN (sizeof(ddp_reply) - 1) /* without the literal's NUL */

static void test_ddp_items(void **state)
{
	const struct rpcrdma__drc_ddp claims[] = {
	    {12, 5}, /* kept */
	    {12, 5}, /* the same again: overlaps the one before */
	    {16, 1}, /* inside it */
	    {24, 0}, /* kept: the empty item */
	    {26, 0}, /* not on an XDR unit */
	    {28, 0}, /* its "length word" is TAIL */
	    {32, 0}, /* past the end */
	};
	const struct rpcrdma__drc_ddp wrong_len = {12, 6}, too_long = {12, 100};
	struct sockaddr_in a = v4("127.0.0.1", 1);
	const struct rpcrdma__drc_ddp *ddp;
	struct rpcrdma__drc_entry *e;
	struct rpcrdma__drc_counts n;
	struct rpcrdma__drc_key k;
	struct rpcrdma__drc *drc;
	unsigned int nddp;
	const void *reply;
	size_t len;

	(void)state;
	assert_int_equal(rpcrdma__drc_create(8, 0, &drc), 0);
	make_key(&k, 1, 1, &a, args_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	assert_int_equal(rpcrdma__drc_complete_ddp(drc, e, ddp_reply, DDP_REPLY_LEN, claims,
						   sizeof(claims) / sizeof(claims[0])),
			 0);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_DONE);
	rpcrdma__drc_reply(drc, e, &reply, &len);
	assert_int_equal(len, DDP_REPLY_LEN);
	assert_memory_equal(reply, ddp_reply, len);
	rpcrdma__drc_reply_ddp(e, &ddp, &nddp);
	assert_int_equal(nddp, 2);
	assert_int_equal(ddp[0].off, 12);
	assert_int_equal(ddp[0].len, 5);
	assert_int_equal(ddp[1].off, 24);
	assert_int_equal(ddp[1].len, 0);
	/* The items kept count against the budget with the bytes. */
	rpcrdma__drc_counts(drc, &n);
	assert_int_equal(n.bytes, DDP_REPLY_LEN + 2 * sizeof(*ddp));

	/* A length that is not the one in the reply, or runs past its end. */
	make_key(&k, 2, 1, &a, args_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	assert_int_equal(rpcrdma__drc_complete_ddp(drc, e, ddp_reply, DDP_REPLY_LEN, &wrong_len, 1),
			 0);
	rpcrdma__drc_reply_ddp(e, &ddp, &nddp);
	assert_int_equal(nddp, 0);
	make_key(&k, 3, 1, &a, args_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	assert_int_equal(rpcrdma__drc_complete_ddp(drc, e, ddp_reply, DDP_REPLY_LEN, &too_long, 1),
			 0);
	rpcrdma__drc_reply_ddp(e, &ddp, &nddp);
	assert_int_equal(nddp, 0);
	/* Plain completion: no items. */
	make_key(&k, 4, 1, &a, args_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	assert_int_equal(rpcrdma__drc_complete(drc, e, ddp_reply, DDP_REPLY_LEN), 0);
	rpcrdma__drc_reply_ddp(e, &ddp, &nddp);
	assert_int_equal(nddp, 0);
	rpcrdma__drc_destroy(drc);

	/* Bytes within the budget, items taking it over: not cached. */
	assert_int_equal(rpcrdma__drc_create(8, DDP_REPLY_LEN + 4, &drc), 0);
	make_key(&k, 1, 1, &a, args_a, 8);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	assert_int_equal(rpcrdma__drc_complete_ddp(drc, e, ddp_reply, DDP_REPLY_LEN, claims, 1),
			 -EMSGSIZE);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	assert_int_equal(rpcrdma__drc_complete_ddp(drc, e, NULL, 4, NULL, 0), -EINVAL);
	rpcrdma__drc_destroy(drc);
}

static void test_create_args(void **state)
{
	struct rpcrdma__drc *drc = NULL;

	(void)state;
	assert_int_equal(rpcrdma__drc_create(4, 0, NULL), -EINVAL);
	assert_int_equal(rpcrdma__drc_create(1u << 30, 0, &drc), -EINVAL);
	assert_int_equal(rpcrdma__drc_create(0, 0, &drc), 0); /* default size */
	rpcrdma__drc_destroy(drc);
}

/*
 * The largest cache costs nothing until calls come: entries and buckets
 * grow with them, every key stays findable across each doubling of the
 * table, and nothing is evicted while the bound is not reached.
 */
static void test_grows_on_demand(void **state)
{
	enum { CALLS = 5000 };
	struct sockaddr_in peer = v4("10.0.0.1", 1000);
	struct rpcrdma__drc_counts n;
	struct rpcrdma__drc_entry *e;
	struct rpcrdma__drc_key k;
	struct rpcrdma__drc *drc;
	const void *reply;
	size_t len;

	(void)state;
	assert_int_equal(rpcrdma__drc_create(RPCRDMA__DRC_MAX_ENTRIES, 0, &drc), 0);
	rpcrdma__drc_counts(drc, &n);
	assert_int_equal(n.allocated, 0);
	assert_true(n.buckets <= 16);
	for (uint32_t xid = 0; xid < CALLS; xid++) {
		make_key(&k, xid, 1, &peer, &xid, sizeof(xid));
		assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
		assert_non_null(e);
		assert_int_equal(rpcrdma__drc_complete(drc, e, &xid, sizeof(xid)), 0);
	}
	rpcrdma__drc_counts(drc, &n);
	assert_true(n.allocated >= CALLS && n.allocated < CALLS + 256);
	assert_true(n.buckets >= n.allocated / 2);
	assert_int_equal(n.done, CALLS);
	assert_int_equal(n.evictions, 0);
	assert_int_equal(n.uncached, 0);
	for (uint32_t xid = 0; xid < CALLS; xid++) {
		make_key(&k, xid, 1, &peer, &xid, sizeof(xid));
		assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_DONE);
		rpcrdma__drc_reply(drc, e, &reply, &len);
		assert_int_equal(len, sizeof(xid));
		assert_memory_equal(reply, &xid, sizeof(xid));
	}
	rpcrdma__drc_destroy(drc);
}

/* A bound that is not a whole number of slabs is still exact. */
static void test_grown_bound_exact(void **state)
{
	struct sockaddr_in peer = v4("10.0.0.2", 1000);
	struct rpcrdma__drc_counts n;
	struct rpcrdma__drc_entry *e;
	struct rpcrdma__drc_key k;
	struct rpcrdma__drc *drc;

	(void)state;
	assert_int_equal(rpcrdma__drc_create(300, 0, &drc), 0);
	/* 300 in progress fill it; the next is uncached, not evicted. */
	for (uint32_t xid = 0; xid < 300; xid++) {
		make_key(&k, xid, 1, &peer, NULL, 0);
		assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
		assert_non_null(e);
	}
	make_key(&k, 300, 1, &peer, NULL, 0);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	assert_null(e);
	rpcrdma__drc_counts(drc, &n);
	assert_int_equal(n.allocated, 300);
	assert_int_equal(n.in_progress, 300);
	assert_int_equal(n.uncached, 1);
	for (uint32_t xid = 0; xid < 300; xid++) {
		make_key(&k, xid, 1, &peer, NULL, 0);
		assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_IN_PROGRESS);
		assert_int_equal(rpcrdma__drc_complete(drc, e, "r", 1), 0);
	}
	/* Answered, the oldest gives way to each newcomer. */
	for (uint32_t xid = 1000; xid < 1100; xid++) {
		make_key(&k, xid, 1, &peer, NULL, 0);
		assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
		assert_non_null(e);
		assert_int_equal(rpcrdma__drc_complete(drc, e, "r", 1), 0);
	}
	rpcrdma__drc_counts(drc, &n);
	assert_int_equal(n.allocated, 300);
	assert_int_equal(n.done, 300);
	assert_int_equal(n.evictions, 100);
	make_key(&k, 99, 1, &peer, NULL, 0);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_NEW);
	make_key(&k, 1099, 1, &peer, NULL, 0);
	assert_int_equal(rpcrdma__drc_lookup(drc, &k, &e), RPCRDMA__DRC_DONE);
	rpcrdma__drc_destroy(drc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_life_cycle),
	    cmocka_unit_test(test_key),
	    cmocka_unit_test(test_args_hash_whole),
    cmocka_unit_test(test_key_bind),
	    cmocka_unit_test(test_lru_eviction),
	    cmocka_unit_test(test_in_progress_never_evicted),
	    cmocka_unit_test(test_byte_budget),
	    cmocka_unit_test(test_ddp_items),
	    cmocka_unit_test(test_create_args),
	    cmocka_unit_test(test_grows_on_demand),
	    cmocka_unit_test(test_grown_bound_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
