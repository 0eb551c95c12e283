/*
 * A stateful randomized attack on rpcrdma-nfsd ("chaos"): after building a
 * small tree in the export (files, directories, symbolic links, a FIFO, a
 * hard link, objects removed again for stale handles), it sends random
 * NFSv3 calls of every procedure, MOUNT calls and calls of procedures and
 * versions that do not exist, for --seconds, from connections with various
 * credentials (root, nobody, a user with groups, random ids, AUTH_NONE,
 * malformed AUTH_SYS bodies, flavors the server does not know), with
 * arguments drawn from the handles it was given, stale and mangled
 * handles, hostile offsets, counts, cookies, verifiers, names, modes and
 * times, sometimes with garbage after them or cut short.  Calls go one at
 * a time or many at once; sometimes a connection is cut with calls in
 * flight and made again; over TCP, raw records with lying lengths.
 *
 * Every call must be answered within its time-out with a reply that
 * decodes: the procedure's results for a call that is well formed
 * (GARBAGE_ARGS for one that is not, PROC_UNAVAIL or PROG_MISMATCH where
 * those apply, an AUTH_ERROR only for a credential that is not AUTH_SYS or
 * AUTH_NONE, or does not decode), with an NFS status RFC 1813 defines,
 * attributes of the export's filesystem only and of no object outside the
 * export (--outside: the directory holding it), READ and READDIR replies
 * within the count asked, a WRITE's committed level at least the one asked,
 * one write verifier for the whole run, and no handle the server gave out
 * refused as a bad handle.  At the end, a plain GETATTR, WRITE and READ
 * as root must still work.  nfsd-chaos.sh (sourced by nfsd-attack) checks
 * what only the outside sees: the objects outside the export unchanged,
 * the server's descriptors and memory bounded, a clean stop.
 *
 * --regress NAME runs one deterministic sub-case instead (see regress()).
 *
 * Usage: nfsd_chaos --transport rdma|tcp --export PATH --outside DIR
 *        --port P --tcp-port T --mount-port M [--seconds N] [--seed S]
 *        [--regress NAME] [--cut-pct P] [--raw-pct P]
 * --cut-pct: the chance, in percent, that a burst ends with a connection
 * cut while its calls are in flight (5); --raw-pct: the share of turns,
 * in percent, that are raw TCP episodes instead of a burst (3).
 * Prints the seed first; exits 1 after the first run with a violation
 * (each printed with the call that caused it), 0 otherwise.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../nfs/check.h"
#include "rpcrdma/debug.h"
#include "rpcrdma/loop.h"
#include "rpcrdma/nfs3.h"
#include "rpcrdma/rpc_msg.h"

#define HOST "127.0.0.1"
#define SLOTS 32
#define POOL_MAX 256
#define COOKIES_MAX 64
#define CALL_TIMEOUT_MS 20000

static struct rpcrdma_loop *loop;
static enum rpcrdma_transport tr = RPCRDMA_TRANSPORT_RDMA;
static const char *export_path, *outside_path;
static char port[16], tport[16], mport[16];
static unsigned long violations, calls_made;
/* Per NFS procedure: NFS3_OK, another NFS status, refused by RPC. */
static unsigned long tally[RPCRDMA_NFS3_NPROCS][3];
static uint64_t seed;
static unsigned int cut_pct = 5, raw_pct = 3;

/* Random numbers (xorshift64*): one seed reproduces a run's calls. */
static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1Dull;
}

static uint32_t below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static bool chance(unsigned int pct)
{
	return below(100) < pct;
}

#define PICK(arr) ((arr)[below((uint32_t)(sizeof(arr) / sizeof((arr)[0])))])

/* Raw XDR, so that any length, count or discriminant can be sent. */
struct wb {
	uint8_t *p;
	size_t len, cap;
};

static void wb_put(struct wb *b, const void *d, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		CHECK(b->p);
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void put32(struct wb *b, uint32_t v)
{
	uint32_t n = htonl(v);

	wb_put(b, &n, 4);
}

static void put64(struct wb *b, uint64_t v)
{
	put32(b, (uint32_t)(v >> 32));
	put32(b, (uint32_t)v);
}

/* A variable-length opaque: @n bytes of @d, padded. */
static void put_opaque(struct wb *b, const void *d, uint32_t n)
{
	static const uint8_t zero[4];

	put32(b, n);
	wb_put(b, d, n);
	wb_put(b, zero, (4 - (n & 3)) & 3);
}

/* The pool: handles the server gave out, and of objects since removed. */
struct obj {
	struct rpcrdma_nfs3_fh fh;
	uint32_t type;
};
static struct obj live[POOL_MAX], stale[POOL_MAX];
static unsigned int nlive, nstale;
static struct rpcrdma_nfs3_fh root_fh;
static uint64_t cookies[COOKIES_MAX];
static unsigned int ncookies;
static uint8_t cookieverf[8];
static uint64_t export_dev;
static uint64_t forbidden[64]; /* inodes outside the export */
static unsigned int nforbidden;
static uint32_t rtmax = RPCRDMA_NFS3_MAXDATA, wtmax = RPCRDMA_NFS3_MAXDATA;
static uint8_t write_verf[8];
static bool have_write_verf;

static bool fh_eq(const struct rpcrdma_nfs3_fh *a, const struct rpcrdma_nfs3_fh *b)
{
	return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

static void pool_add(const struct rpcrdma_nfs3_fh *fh, uint32_t type)
{
	if (fh->len == 0 || fh->len > RPCRDMA_NFS3_FHSIZE)
		return;
	for (unsigned int i = 0; i < nlive; i++)
		if (fh_eq(&live[i].fh, fh))
			return;
	if (nlive < POOL_MAX) {
		live[nlive].fh = *fh;
		live[nlive++].type = type;
	} else {
		unsigned int i = 1 + below(POOL_MAX - 1); /* keep the root first */

		live[i].fh = *fh;
		live[i].type = type;
	}
}

static void pool_stale(const struct rpcrdma_nfs3_fh *fh)
{
	for (unsigned int i = 1; i < nlive; i++) {
		if (!fh_eq(&live[i].fh, fh))
			continue;
		if (nstale < POOL_MAX)
			stale[nstale++] = live[i];
		live[i] = live[--nlive];
		return;
	}
}

static void cookie_add(uint64_t c)
{
	if (ncookies < COOKIES_MAX)
		cookies[ncookies++] = c;
	else
		cookies[below(COOKIES_MAX)] = c;
}

/* What a call's handle was: exact ones the server gave out must never be
 * answered NFS3ERR_BADHANDLE. */
enum fh_kind { FH_LIVE, FH_STALE, FH_MANGLED, FH_OVERSIZED };

/* Of a call's two handles, the one that says most about the answer. */
static enum fh_kind worse(enum fh_kind a, enum fh_kind b)
{
	return a > b ? a : b;
}

static const struct obj *pick_live_type(uint32_t type)
{
	unsigned int start = below(nlive);

	for (unsigned int i = 0; i < nlive; i++) {
		const struct obj *o = &live[(start + i) % nlive];

		if (!type || o->type == type)
			return o;
	}
	return &live[0];
}

/* A handle for an argument; @type prefers live objects of that type. */
static enum fh_kind put_fh(struct wb *b, uint32_t type, struct rpcrdma_nfs3_fh *used)
{
	struct rpcrdma_nfs3_fh fh;
	uint32_t r = below(100);

	if (r < 75 || (r < 82 && !nstale)) {
		fh = chance(15) ? root_fh : pick_live_type(chance(70) ? type : 0)->fh;
		*used = fh;
		put_opaque(b, fh.data, fh.len);
		return FH_LIVE;
	}
	if (r < 82) {
		fh = stale[below(nstale)].fh;
		*used = fh;
		put_opaque(b, fh.data, fh.len);
		return FH_STALE;
	}
	fh = live[below(nlive)].fh;
	if (r < 97) {
		switch (below(6)) {
		case 0: /* one bit flipped */
			fh.data[below(fh.len)] ^= (uint8_t)(1u << below(8));
			break;
		case 1: /* cut short */
			fh.len = below(fh.len);
			break;
		case 2: /* longer, the MAC no longer at the end */
			while (fh.len < RPCRDMA_NFS3_FHSIZE && chance(80))
				fh.data[fh.len++] = (uint8_t)rnd();
			break;
		case 3: /* the kernel handle's length byte lies */
			fh.data[1] = (uint8_t)rnd();
			break;
		case 4: /* random bytes */
			fh.len = below(RPCRDMA_NFS3_FHSIZE + 1);
			for (uint32_t i = 0; i < fh.len; i++)
				fh.data[i] = (uint8_t)rnd();
			break;
		default: /* another version */
			if (fh.len)
				fh.data[0] = (uint8_t)rnd();
		}
		*used = fh;
		put_opaque(b, fh.data, fh.len);
		return FH_MANGLED;
	}
	/* Longer than FHSIZE: the decoder refuses it. */
	{
		uint8_t junk[200];
		uint32_t n = RPCRDMA_NFS3_FHSIZE + 1 + below(100);

		for (uint32_t i = 0; i < n; i++)
			junk[i] = (uint8_t)rnd();
		if (chance(20)) {
			put32(b, chance(50) ? 0xffffffffu : 0x7fffffffu); /* and no bytes */
		} else {
			put_opaque(b, junk, n);
		}
		used->len = 0;
		return FH_OVERSIZED;
	}
}

static const char *const names[] = {"f0", "f1", "f2", "d0", "d1", "d2", "l0", "l1", "p0",
				    "h0", "n0", "n1", "n2", "n3", "n4", "n5"};

/* A name; returns false when the decoder must refuse it. */
static bool put_name(struct wb *b)
{
	char s[1100];
	uint32_t r = below(100), n;

	if (r < 75) {
		const char *nm = PICK(names);

		put_opaque(b, nm, (uint32_t)strlen(nm));
		return true;
	}
	switch (r % 12) {
	case 0:
		put_opaque(b, ".", 1);
		return true;
	case 1:
		put_opaque(b, "..", 2);
		return true;
	case 2:
		put_opaque(b, "", 0);
		return false;
	case 3:
		if (chance(50))
			put_opaque(b, "a/b", 3);
		else
			put_opaque(b, "/", 1);
		return false;
	case 4:
		put_opaque(b, "n0\0x", 4);
		return false;
	case 5:
	case 6:
		n = chance(50) ? 255 : 1 + below(255);
		memset(s, 'x' + (int)below(3), n);
		put_opaque(b, s, n);
		return true;
	case 7:
		n = 256 + below(800);
		memset(s, 'y', n);
		put_opaque(b, s, n);
		return false;
	case 8:
		put_opaque(b, "\xff\xfe\x80n", 4); /* not UTF-8 */
		return true;
	case 9:
		put32(b, 0xffffffffu); /* a length with nothing after it */
		return false;
	case 10:
		put_opaque(b, "...", 3);
		return true;
	default:
		put_opaque(b, "n0\n", 3);
		return true;
	}
}

/* A sattr3; returns false when it cannot decode. */
static bool put_sattr(struct wb *b)
{
	static const uint32_t modes[] = {0,	 0644,	 0777,	 04755,	     02755, 01777,
					 07777, 0170777, 0xffffffffu, 0600, 0};
	static const uint32_t ids[] = {0, 65534, 1000, 4242, 0xffffffffu, 0x80000000u};
	static const uint64_t sizes[] = {0,
					 1,
					 4096,
					 (1ull << 31),
					 (1ull << 32),
					 (uint64_t)INT64_MAX,
					 (uint64_t)INT64_MAX + 1,
					 UINT64_MAX,
					 12345};
	static const uint32_t secs[] = {0, 1, 0x7fffffffu, 0x80000000u, 0xffffffffu, 1700000000u};
	static const uint32_t nsecs[] = {0, 999999999u, 1000000000u, 0xffffffffu};
	bool ok = true;

	if (chance(3)) { /* a boolean that is neither */
		put32(b, 2 + below(10));
		return false;
	}
	if (chance(30)) {
		put32(b, 1);
		put32(b, chance(50) ? PICK(modes) : (uint32_t)rnd());
	} else {
		put32(b, 0);
	}
	for (int i = 0; i < 2; i++) {
		if (chance(15)) {
			put32(b, 1);
			put32(b, chance(70) ? PICK(ids) : (uint32_t)rnd());
		} else {
			put32(b, 0);
		}
	}
	if (chance(15)) {
		put32(b, 1);
		put64(b, chance(80) ? PICK(sizes) : rnd() % (1u << 24));
	} else {
		put32(b, 0);
	}
	for (int i = 0; i < 2; i++) {
		uint32_t how = chance(60) ? 0 : chance(95) ? 1 + below(2) : 3 + below(5);

		put32(b, how);
		if (how == RPCRDMA_SET_TO_CLIENT_TIME) {
			put32(b, PICK(secs));
			put32(b, PICK(nsecs));
		}
		if (how > RPCRDMA_SET_TO_CLIENT_TIME)
			ok = false;
	}
	return ok;
}

static uint64_t pick_offset(void)
{
	static const uint64_t offs[] = {0,
					1,
					4095,
					4096,
					65536,
					(1ull << 31) - 1,
					(1ull << 31),
					(1ull << 32),
					(uint64_t)INT64_MAX - 4096,
					(uint64_t)INT64_MAX - 1,
					(uint64_t)INT64_MAX,
					(uint64_t)INT64_MAX + 1,
					UINT64_MAX - 1,
					UINT64_MAX};

	return chance(40) ? rnd() % 200000 : PICK(offs);
}

static uint32_t pick_count(uint32_t max)
{
	uint32_t cs[] = {0, 1, 4096, max, max + 1, 0xffffffffu, 0x80000000u, 100};

	return chance(40) ? below(9000) : PICK(cs);
}

static uint64_t pick_cookie(void)
{
	static const uint64_t cs[] = {0, 1, 2, 3, (1ull << 31), (1ull << 32), (uint64_t)INT64_MAX,
				      UINT64_MAX, UINT64_MAX - 1};

	if (ncookies && chance(50))
		return cookies[below(ncookies)];
	return chance(80) ? PICK(cs) : rnd();
}

/*
 * Connections, each with its own credential: the server sees all of them
 * at once, and calls pick one at random.
 */
enum cred_kind {
	CRED_ROOT,
	CRED_NOBODY,
	CRED_USER,
	CRED_RANDOM,
	CRED_NONE,
	CRED_MANY_GROUPS,
	CRED_BAD_SYS, /* an AUTH_SYS body that does not decode */
	CRED_ODD,     /* a flavor the server does not take */
	CRED_KINDS,
};

struct peer {
	struct rpcrdma_client *c;
	struct rpcrdma_opaque_auth cred;
	enum cred_kind kind;
	uint32_t prog, vers; /* NFS v3, or a version or program not served */
	bool mount;
	unsigned int inflight;
};

#define NPEERS (CRED_KINDS + 3) /* + NFS v2, v4, the MOUNT program on the NFS port */
static struct peer peers[NPEERS + 1];   /* + MOUNT on its port */
#define MOUNT_PEER NPEERS

static void make_cred(struct peer *p)
{
	struct rpcrdma_auth_sys sys;

	memset(&sys, 0, sizeof(sys));
	sys.stamp = (uint32_t)rnd();
	strcpy(sys.machinename, "chaos");
	switch (p->kind) {
	case CRED_ROOT:
		break;
	case CRED_NOBODY:
		sys.uid = sys.gid = 65534;
		break;
	case CRED_USER:
		sys.uid = sys.gid = 1000;
		sys.ngids = 3;
		sys.gids[0] = 1000;
		sys.gids[1] = 0;
		sys.gids[2] = 4242;
		break;
	case CRED_RANDOM:
		sys.uid = chance(20) ? 0xffffffffu : (uint32_t)rnd();
		sys.gid = chance(20) ? 0xffffffffu : (uint32_t)rnd();
		sys.ngids = below(RPCRDMA_AUTH_SYS_NGIDS_MAX + 1);
		for (uint32_t i = 0; i < sys.ngids; i++)
			sys.gids[i] = (uint32_t)rnd();
		break;
	case CRED_NONE:
		rpcrdma_auth_none(&p->cred);
		return;
	case CRED_MANY_GROUPS:
		sys.uid = 2000;
		sys.gid = 0xffffffffu;
		sys.ngids = RPCRDMA_AUTH_SYS_NGIDS_MAX;
		for (uint32_t i = 0; i < sys.ngids; i++)
			sys.gids[i] = i == 3 ? 0xffffffffu : i;
		break;
	case CRED_BAD_SYS: {
		struct wb b = {0};

		/* stamp, a machine name longer than the body, or 17 groups,
		 * or the body cut short */
		put32(&b, 1);
		switch (below(3)) {
		case 0:
			put32(&b, 300);
			put32(&b, 0);
			break;
		case 1:
			put_opaque(&b, "m", 1);
			put32(&b, 1000);
			put32(&b, 1000);
			put32(&b, 17);
			for (int i = 0; i < 17 && b.len < RPCRDMA_AUTH_BODY_MAX - 4; i++)
				put32(&b, (uint32_t)i);
			break;
		default:
			put_opaque(&b, "m", 1);
			put32(&b, 1000);
		}
		p->cred.flavor = RPCRDMA_AUTH_SYS;
		p->cred.len = (uint32_t)b.len;
		memcpy(p->cred.body, b.p, b.len);
		free(b.p);
		return;
	}
	default:
		p->cred.flavor = chance(50) ? RPCRDMA_AUTH_DH : 0x7fffffffu;
		p->cred.len = below(64) & ~3u;
		for (uint32_t i = 0; i < p->cred.len; i++)
			p->cred.body[i] = (uint8_t)rnd();
		return;
	}
	CHECK_RC(rpcrdma_auth_sys_encode(&sys, &p->cred), 0);
}

static void peer_open(unsigned int i)
{
	struct peer *p = &peers[i];
	struct rpcrdma_client_opts co;

	p->mount = i == MOUNT_PEER;
	p->prog = RPCRDMA_NFS_PROGRAM;
	p->vers = RPCRDMA_NFS_V3;
	p->kind = i < CRED_KINDS ? (enum cred_kind)i : CRED_ROOT;
	if (i == CRED_KINDS)
		p->vers = 2;
	if (i == CRED_KINDS + 1)
		p->vers = 4;
	if (i == CRED_KINDS + 2)
		p->prog = RPCRDMA_MOUNT_PROGRAM;
	if (p->mount)
		p->prog = RPCRDMA_MOUNT_PROGRAM;
	make_cred(p);
	rpcrdma_client_opts_default(&co);
	co.transport = p->mount ? RPCRDMA_TRANSPORT_TCP : tr;
	co.provider = "ofi";
	co.cred = &p->cred;
	co.timeout_ms = CALL_TIMEOUT_MS;
	co.retries = 1;
	CHECK_RC(rpcrdma_client_create(loop, HOST, p->mount ? mport : port, p->prog, p->vers, &co,
				       &p->c),
		 0);
	p->inflight = 0;
}

/* What a call's reply may be. */
enum expect {
	EXP_OK,      /* the procedure's results */
	EXP_GARBAGE, /* GARBAGE_ARGS */
	EXP_ANY,     /* either (garbage after good arguments: servers differ) */
};

/* The results of every procedure fit in this. */
union res {
	struct rpcrdma_nfs3_attr_res attr;
	struct rpcrdma_nfs3_wcc_res wcc;
	struct rpcrdma_nfs3_lookup_res lookup;
	struct rpcrdma_nfs3_access_res access;
	struct rpcrdma_nfs3_readlink_res readlink;
	struct rpcrdma_nfs3_read_res read;
	struct rpcrdma_nfs3_write_res write;
	struct rpcrdma_nfs3_create_res create;
	struct rpcrdma_nfs3_rename_res rename;
	struct rpcrdma_nfs3_link_res link;
	struct rpcrdma_nfs3_readdir_res readdir;
	struct rpcrdma_nfs3_fsstat_res fsstat;
	struct rpcrdma_nfs3_fsinfo_res fsinfo;
	struct rpcrdma_nfs3_pathconf_res pathconf;
	struct rpcrdma_nfs3_commit_res commit;
	struct rpcrdma_mount3_mnt_res mnt;
	uint32_t mount_list; /* entries counted by the decoders below */
};

struct slot {
	struct rpcrdma_call call;
	bool busy, done, cut;
	unsigned int peer;
	uint32_t proc;
	enum expect exp;
	struct wb head, tail;
	const uint8_t *ddp;
	uint32_t ddp_len;
	bool has_ddp;
	union res res;
	uint8_t *rbuf;
	struct rpcrdma_nfs3_entry *ents;
	/* for the checks */
	enum fh_kind fh_kind;
	struct rpcrdma_nfs3_fh fh;
	uint32_t count, stable;
	bool short_chunk; /* RDMA: a Write or Reply chunk smaller than the reply */
	unsigned long n;
};
static struct slot slots[SLOTS];
static uint8_t wdata[RPCRDMA_NFS3_MAXDATA + 8192];

static int enc_raw(struct rpcrdma_xdr_stream *x, void *o)
{
	struct slot *s = o;
	void *p;
	int rc;

	if (s->head.len) {
		if (!(p = rpcrdma_xdr_inline(x, s->head.len)))
			return RPCRDMA_ERR_NOSPACE;
		memcpy(p, s->head.p, s->head.len);
	}
	if (s->has_ddp && (rc = rpcrdma_xdr_encode_ddp(x, s->ddp, s->ddp_len)) != 0)
		return rc;
	if (s->tail.len) {
		if (!(p = rpcrdma_xdr_inline(x, s->tail.len)))
			return RPCRDMA_ERR_NOSPACE;
		memcpy(p, s->tail.p, s->tail.len);
	}
	return 0;
}

/* MOUNT's DUMP and EXPORT results: lists that must decode to their end. */
static int dec_string(struct rpcrdma_xdr_stream *x, uint32_t max)
{
	char s[RPCRDMA_NFS3_PATH_MAX + 1];
	uint32_t len;

	return rpcrdma_xdr_decode_string(x, s, (size_t)max + 1, &len);
}

static int dec_mountlist(struct rpcrdma_xdr_stream *x, void *o)
{
	uint32_t *n = o;
	bool more;
	int rc;

	for (*n = 0;; (*n)++) {
		if ((rc = rpcrdma_xdr_decode_bool(x, &more)) != 0)
			return rc;
		if (!more)
			return 0;
		if ((rc = dec_string(x, 255)) || (rc = dec_string(x, RPCRDMA_NFS3_PATH_MAX)))
			return rc;
	}
}

static int dec_exports(struct rpcrdma_xdr_stream *x, void *o)
{
	uint32_t *n = o;
	bool more, g;
	int rc;

	for (*n = 0;; (*n)++) {
		if ((rc = rpcrdma_xdr_decode_bool(x, &more)) != 0)
			return rc;
		if (!more)
			return 0;
		if ((rc = dec_string(x, RPCRDMA_NFS3_PATH_MAX)) != 0)
			return rc;
		for (;;) {
			if ((rc = rpcrdma_xdr_decode_bool(x, &g)) != 0)
				return rc;
			if (!g)
				break;
			if ((rc = dec_string(x, 255)) != 0)
				return rc;
		}
	}
}

static void slot_done(struct rpcrdma_call *call, void *ctx)
{
	struct slot *s = ctx;

	(void)call;
	s->done = true;
	peers[s->peer].inflight--;
}

static void hexdump(const struct wb *b)
{
	for (size_t i = 0; i < b->len && i < 160; i++)
		fprintf(stderr, "%02x%s", b->p[i], (i & 3) == 3 ? " " : "");
	fprintf(stderr, "%s\n", b->len > 160 ? "..." : "");
}

static void violation(const struct slot *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void violation(const struct slot *s, const char *fmt, ...)
{
	va_list ap;

	violations++;
	fprintf(stderr, "VIOLATION (seed %" PRIu64 ", call %lu", seed, s ? s->n : 0);
	if (s)
		fprintf(stderr, ", %s proc %u, peer %u cred %d%s", s->peer == MOUNT_PEER ? "MOUNT" : "NFS",
			s->proc, s->peer, (int)peers[s->peer].kind, s->cut ? ", cut" : "");
	fprintf(stderr, "): ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	if (s && s->head.len) {
		fprintf(stderr, "  args: ");
		hexdump(&s->head);
	}
	if (violations > 20) {
		fprintf(stderr, "too many violations\n");
		exit(1);
	}
}

static bool known_stat(uint32_t st)
{
	static const uint32_t ok[] = {0,  1,  2,  5,  6,  13, 17, 18, 19, 20, 21, 22,
				      27, 28, 30, 31, 63, 66, 69, 70, 71, 10001, 10002, 10003,
				      10004, 10005, 10006, 10007, 10008};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (ok[i] == st)
			return true;
	return false;
}

static void check_attr(const struct slot *s, const struct rpcrdma_nfs3_post_attr *pa,
		       const char *what)
{
	const struct rpcrdma_nfs3_fattr *a = &pa->attr;

	if (!pa->present)
		return;
	if (a->type < RPCRDMA_NF3REG || a->type > RPCRDMA_NF3FIFO)
		violation(s, "%s: type %u", what, a->type);
	if (a->fsid != export_dev)
		violation(s, "%s: fsid %" PRIu64 ", not the export's %" PRIu64, what, a->fsid,
			  export_dev);
	for (unsigned int i = 0; i < nforbidden; i++)
		if (a->fileid == forbidden[i])
			violation(s, "%s: attributes of inode %" PRIu64 ", outside the export",
				  what, a->fileid);
}

static void check_wcc(const struct slot *s, const struct rpcrdma_nfs3_wcc *w, const char *what)
{
	check_attr(s, &w->after, what);
}

/* The bytes of a READDIR(PLUS)3resok (RFC 1813 3.3.16-17). */
static uint64_t readdir_size(const struct rpcrdma_nfs3_readdir_res *r)
{
	uint64_t n = 4 + (r->dir_attr.present ? 84 : 0) + 8 + 4 + 4;

	for (uint32_t i = 0; i < r->n; i++) {
		const struct rpcrdma_nfs3_entry *e = &r->entries[i];

		n += 4 + 8 + 4 + ((e->name.len + 3) & ~3u) + 8;
		if (r->plus)
			n += 4 + (e->attr.present ? 84 : 0) + 4 +
			     (e->has_fh ? 4 + ((e->fh.len + 3) & ~3u) : 0);
	}
	return n;
}

static void check_nfs_results(struct slot *s)
{
	union res *r = &s->res;
	uint32_t st = r->attr.status;

	if (!known_stat(st))
		violation(s, "NFS status %u is not one RFC 1813 defines", st);
	if (st == RPCRDMA_NFS3ERR_BADHANDLE && s->fh_kind == FH_LIVE)
		violation(s, "a handle the server gave out answered NFS3ERR_BADHANDLE");
	if (st == RPCRDMA_NFS3ERR_SERVERFAULT)
		violation(s, "NFS3ERR_SERVERFAULT");
	if (st == RPCRDMA_NFS3ERR_STALE && s->fh_kind == FH_LIVE)
		pool_stale(&s->fh);
	switch (s->proc) {
	case RPCRDMA_NFS3_GETATTR:
		if (st == 0) {
			struct rpcrdma_nfs3_post_attr pa = {true, r->attr.attr};

			check_attr(s, &pa, "GETATTR");
		}
		break;
	case RPCRDMA_NFS3_SETATTR:
	case RPCRDMA_NFS3_REMOVE:
	case RPCRDMA_NFS3_RMDIR:
		check_wcc(s, &r->wcc.wcc, "wcc");
		break;
	case RPCRDMA_NFS3_LOOKUP:
		check_attr(s, &r->lookup.dir_attr, "LOOKUP dir");
		if (st == 0) {
			check_attr(s, &r->lookup.obj_attr, "LOOKUP obj");
			pool_add(&r->lookup.obj,
				 r->lookup.obj_attr.present ? r->lookup.obj_attr.attr.type : 0);
		}
		break;
	case RPCRDMA_NFS3_ACCESS:
		check_attr(s, &r->access.attr, "ACCESS");
		if (st == 0 && (r->access.access & ~0x3fu))
			violation(s, "ACCESS granted bits 0x%x nobody asks", r->access.access);
		break;
	case RPCRDMA_NFS3_READLINK:
		check_attr(s, &r->readlink.attr, "READLINK");
		break;
	case RPCRDMA_NFS3_READ:
		check_attr(s, &r->read.attr, "READ");
		if (st == 0 && (r->read.len != r->read.count || r->read.count > s->count ||
				r->read.count > RPCRDMA_NFS3_MAXDATA))
			violation(s, "READ of %u answered count %u, %u bytes", s->count,
				  r->read.count, r->read.len);
		break;
	case RPCRDMA_NFS3_WRITE:
		check_wcc(s, &r->write.wcc, "WRITE");
		if (st != 0)
			break;
		if (r->write.count > s->count)
			violation(s, "WRITE of %u answered count %u", s->count, r->write.count);
		if (r->write.committed < s->stable || r->write.committed > RPCRDMA_FILE_SYNC)
			violation(s, "WRITE asked stable %u, answered committed %u", s->stable,
				  r->write.committed);
		if (have_write_verf && memcmp(write_verf, r->write.verf, 8) != 0)
			violation(s, "the write verifier changed");
		memcpy(write_verf, r->write.verf, 8);
		have_write_verf = true;
		break;
	case RPCRDMA_NFS3_CREATE:
	case RPCRDMA_NFS3_MKDIR:
	case RPCRDMA_NFS3_SYMLINK:
	case RPCRDMA_NFS3_MKNOD:
		check_wcc(s, &r->create.dir_wcc, "dir_wcc");
		if (st == 0) {
			check_attr(s, &r->create.obj_attr, "new object");
			if (r->create.has_obj)
				pool_add(&r->create.obj, r->create.obj_attr.present
							     ? r->create.obj_attr.attr.type
							     : 0);
		}
		break;
	case RPCRDMA_NFS3_RENAME:
		check_wcc(s, &r->rename.from_wcc, "from_wcc");
		check_wcc(s, &r->rename.to_wcc, "to_wcc");
		break;
	case RPCRDMA_NFS3_LINK:
		check_attr(s, &r->link.file_attr, "LINK file");
		check_wcc(s, &r->link.dir_wcc, "LINK dir");
		break;
	case RPCRDMA_NFS3_READDIR:
	case RPCRDMA_NFS3_READDIRPLUS: {
		struct rpcrdma_nfs3_readdir_res *d = &r->readdir;
		uint32_t count = s->count < RPCRDMA_NFS3_MAXDATA ? s->count : RPCRDMA_NFS3_MAXDATA;

		check_attr(s, &d->dir_attr, "READDIR dir");
		if (st != 0)
			break;
		if (readdir_size(d) > count)
			violation(s, "READDIR of count %u answered %" PRIu64 " bytes", s->count,
				  readdir_size(d));
		memcpy(cookieverf, d->verf, 8);
		for (uint32_t i = 0; i < d->n; i++) {
			const struct rpcrdma_nfs3_entry *e = &d->entries[i];

			if (e->name.len == 0 || memchr(e->name.s, '/', e->name.len))
				violation(s, "READDIR entry named \"%s\"", e->name.s);
			cookie_add(e->cookie);
			if (strcmp(e->name.s, "..") != 0) {
				for (unsigned int k = 0; k < nforbidden; k++)
					if (e->fileid == forbidden[k])
						violation(s, "READDIR entry %s is inode %" PRIu64
							     ", outside the export",
							  e->name.s, e->fileid);
			}
			if (d->plus) {
				check_attr(s, &e->attr, e->name.s);
				if (e->has_fh)
					pool_add(&e->fh, e->attr.present ? e->attr.attr.type : 0);
			}
		}
		break;
	}
	case RPCRDMA_NFS3_FSSTAT:
		check_attr(s, &r->fsstat.attr, "FSSTAT");
		break;
	case RPCRDMA_NFS3_FSINFO:
		check_attr(s, &r->fsinfo.attr, "FSINFO");
		break;
	case RPCRDMA_NFS3_PATHCONF:
		check_attr(s, &r->pathconf.attr, "PATHCONF");
		break;
	case RPCRDMA_NFS3_COMMIT:
		check_wcc(s, &r->commit.wcc, "COMMIT");
		if (st == 0) {
			if (have_write_verf && memcmp(write_verf, r->commit.verf, 8) != 0)
				violation(s, "the write verifier changed (COMMIT)");
			memcpy(write_verf, r->commit.verf, 8);
			have_write_verf = true;
		}
		break;
	}
}

static void check_reply(struct slot *s)
{
	const struct peer *p = &peers[s->peer];
	const struct rpcrdma_rpc_reply *rep = &s->call.reply;
	bool odd_cred = p->kind == CRED_BAD_SYS || p->kind == CRED_ODD;
	bool unavail = p->mount ? s->proc >= RPCRDMA_MOUNT3_NPROCS
				: s->proc >= RPCRDMA_NFS3_NPROCS;
	int st = s->call.status;

	if (s->cut && st != 0)
		return; /* cancelled with its connection: any end will do */
	if (st == RPCRDMA_ERR_RPC_REJECTED) {
		if (!p->mount && s->proc < RPCRDMA_NFS3_NPROCS)
			tally[s->proc][2]++;
		if (rep->stat == RPCRDMA_RPC_MSG_DENIED) {
			if (rep->reject_stat != RPCRDMA_RPC_AUTH_ERROR || !odd_cred)
				violation(s, "denied: %s", rpcrdma_call_strerror(&s->call));
			return;
		}
		switch (rep->accept_stat) {
		case RPCRDMA_RPC_PROG_MISMATCH:
			if (p->vers != RPCRDMA_NFS_V3 && p->prog == RPCRDMA_NFS_PROGRAM)
				return;
			break;
		case RPCRDMA_RPC_PROG_UNAVAIL:
			if (p->prog != RPCRDMA_NFS_PROGRAM && !p->mount)
				return;
			break;
		case RPCRDMA_RPC_PROC_UNAVAIL:
			if (unavail)
				return;
			break;
		case RPCRDMA_RPC_GARBAGE_ARGS:
			if (s->exp != EXP_OK && !unavail)
				return;
			break;
		}
		violation(s, "rejected (expected %s): %s",
			  s->exp == EXP_OK ? "success" : s->exp == EXP_ANY ? "success or garbage"
									  : "GARBAGE_ARGS",
			  rpcrdma_call_strerror(&s->call));
		return;
	}
	/* RFC 8166 section 4.5.2: a reply that does not fit the chunks the
	 * requester offered is RDMA_ERROR ERR_CHUNK. */
	if (st == RPCRDMA_ERR_TRANSPORT_ERROR && s->short_chunk)
		return;
	if (st != 0) {
		violation(s, "no good reply: %s", rpcrdma_call_strerror(&s->call));
		return;
	}
	if (p->kind == CRED_BAD_SYS && s->proc != 0)
		violation(s, "an AUTH_SYS credential that does not decode was accepted");
	if (unavail || p->prog != (p->mount ? RPCRDMA_MOUNT_PROGRAM : RPCRDMA_NFS_PROGRAM) ||
	    (!p->mount && p->vers != RPCRDMA_NFS_V3)) {
		violation(s, "a procedure or program not served answered SUCCESS");
		return;
	}
	if (s->exp == EXP_GARBAGE && s->proc != 0) {
		violation(s, "malformed arguments answered SUCCESS");
		return;
	}
	if (p->mount) {
		if (s->proc == RPCRDMA_MOUNT3_MNT && s->res.mnt.status == 0 &&
		    !fh_eq(&s->res.mnt.fh, &root_fh))
			violation(s, "MNT answered a handle other than the export's root");
		return;
	}
	if (s->proc != 0)
		check_nfs_results(s);
	tally[s->proc][s->res.attr.status != 0]++;
}

/* Builds the arguments of NFS procedure @proc into @s. */
static void build_nfs(struct slot *s, uint32_t proc)
{
	struct wb *b = &s->head;
	bool ok = true;

	s->fh_kind = FH_LIVE;
	switch (proc) {
	case RPCRDMA_NFS3_NULL:
		break;
	case RPCRDMA_NFS3_GETATTR:
	case RPCRDMA_NFS3_READLINK:
	case RPCRDMA_NFS3_FSSTAT:
	case RPCRDMA_NFS3_FSINFO:
	case RPCRDMA_NFS3_PATHCONF:
		s->fh_kind = put_fh(b, proc == RPCRDMA_NFS3_READLINK ? RPCRDMA_NF3LNK : 0, &s->fh);
		break;
	case RPCRDMA_NFS3_SETATTR:
		s->fh_kind = put_fh(b, 0, &s->fh);
		ok = put_sattr(b);
		if (chance(20)) {
			put32(b, 1);
			put32(b, (uint32_t)time(NULL) - below(3));
			put32(b, below(1000000000));
		} else {
			put32(b, 0);
		}
		break;
	case RPCRDMA_NFS3_LOOKUP:
	case RPCRDMA_NFS3_REMOVE:
	case RPCRDMA_NFS3_RMDIR:
		s->fh_kind = put_fh(b, RPCRDMA_NF3DIR, &s->fh);
		ok = put_name(b);
		break;
	case RPCRDMA_NFS3_ACCESS:
		s->fh_kind = put_fh(b, 0, &s->fh);
		put32(b, chance(70) ? below(0x40) : (uint32_t)rnd());
		break;
	case RPCRDMA_NFS3_READ:
		s->fh_kind = put_fh(b, RPCRDMA_NF3REG, &s->fh);
		put64(b, pick_offset());
		put32(b, s->count = pick_count(rtmax));
		break;
	case RPCRDMA_NFS3_WRITE: {
		uint32_t count = pick_count(wtmax), len = count, stable = below(3);

		/* Large writes are rare: the export is memory. */
		if (count > 65536 && chance(80))
			count = len = below(65536);
		/* A count that is not the data's length is GARBAGE_ARGS, as
		 * from knfsd's decoder (nfs3svc_decode_writeargs). */
		if (chance(10)) {
			len = chance(50) ? below(count + 1) : count + below(100);
			if (len != count)
				ok = false;
		}
		if (chance(5))
			stable = chance(50) ? 3 : (uint32_t)rnd();
		s->fh_kind = put_fh(b, RPCRDMA_NF3REG, &s->fh);
		put64(b, pick_offset());
		put32(b, s->count = count);
		put32(b, s->stable = stable);
		if (stable > RPCRDMA_FILE_SYNC)
			ok = false;
		if (len > RPCRDMA_NFS3_MAXDATA) {
			/* The decoder refuses it; send a lie, not a megabyte. */
			put32(b, len);
			put32(b, 0);
			ok = false;
		} else {
			for (uint32_t i = 0; i < 16; i++)
				wdata[below(sizeof(wdata))] = (uint8_t)rnd();
			s->ddp = wdata;
			s->ddp_len = len;
			s->has_ddp = true;
		}
		break;
	}
	case RPCRDMA_NFS3_CREATE: {
		uint32_t how = chance(95) ? below(3) : 3 + below(10);

		s->fh_kind = put_fh(b, RPCRDMA_NF3DIR, &s->fh);
		ok = put_name(b);
		put32(b, how);
		if (how < RPCRDMA_EXCLUSIVE) {
			ok &= put_sattr(b);
		} else if (how == RPCRDMA_EXCLUSIVE) {
			static const uint64_t verfs[] = {0, UINT64_MAX, 0x8000000080000000ull,
							 0x7fffffff7fffffffull, 42};

			put64(b, chance(60) ? PICK(verfs) : rnd());
		} else {
			ok = false;
		}
		break;
	}
	case RPCRDMA_NFS3_MKDIR:
		s->fh_kind = put_fh(b, RPCRDMA_NF3DIR, &s->fh);
		ok = put_name(b);
		ok &= put_sattr(b);
		break;
	case RPCRDMA_NFS3_SYMLINK: {
		static const char *const targets[] = {"f0", "../../..", "/etc/passwd", "d0/../..",
						      "..", "/", "n0"};
		char t[1100];
		uint32_t n;

		s->fh_kind = put_fh(b, RPCRDMA_NF3DIR, &s->fh);
		ok = put_name(b);
		ok &= put_sattr(b);
		switch (below(6)) {
		case 0:
			put_opaque(b, "", 0);
			break;
		case 1:
			n = chance(50) ? RPCRDMA_NFS3_PATH_MAX : RPCRDMA_NFS3_PATH_MAX + 1 + below(50);
			memset(t, 'z', n);
			put_opaque(b, t, n);
			ok &= n <= RPCRDMA_NFS3_PATH_MAX;
			break;
		case 2:
			put_opaque(b, "a\0b", 3);
			ok = false;
			break;
		default: {
			const char *tg = PICK(targets);

			put_opaque(b, tg, (uint32_t)strlen(tg));
		}
		}
		break;
	}
	case RPCRDMA_NFS3_MKNOD: {
		uint32_t type = chance(90) ? 1 + below(7) : chance(50) ? 0 : 8 + below(100);

		s->fh_kind = put_fh(b, RPCRDMA_NF3DIR, &s->fh);
		ok = put_name(b);
		put32(b, type);
		switch (type) {
		case RPCRDMA_NF3CHR:
		case RPCRDMA_NF3BLK:
			ok &= put_sattr(b);
			put32(b, chance(50) ? 1 : (uint32_t)rnd());
			put32(b, chance(50) ? 3 : (uint32_t)rnd());
			break;
		case RPCRDMA_NF3SOCK:
		case RPCRDMA_NF3FIFO:
			ok &= put_sattr(b);
			break;
		case RPCRDMA_NF3REG:
		case RPCRDMA_NF3DIR:
		case RPCRDMA_NF3LNK:
			break;
		default:
			ok = false;
		}
		break;
	}
	case RPCRDMA_NFS3_RENAME: {
		struct rpcrdma_nfs3_fh other;
		enum fh_kind k;

		s->fh_kind = put_fh(b, RPCRDMA_NF3DIR, &s->fh);
		ok = put_name(b);
		k = put_fh(b, RPCRDMA_NF3DIR, &other);
		ok &= put_name(b);
		s->fh_kind = worse(s->fh_kind, k);
		break;
	}
	case RPCRDMA_NFS3_LINK: {
		struct rpcrdma_nfs3_fh other;
		enum fh_kind k;

		s->fh_kind = put_fh(b, 0, &s->fh);
		k = put_fh(b, RPCRDMA_NF3DIR, &other);
		ok = put_name(b);
		s->fh_kind = worse(s->fh_kind, k);
		break;
	}
	case RPCRDMA_NFS3_READDIR:
	case RPCRDMA_NFS3_READDIRPLUS:
		s->fh_kind = put_fh(b, RPCRDMA_NF3DIR, &s->fh);
		put64(b, pick_cookie());
		if (chance(70)) {
			wb_put(b, cookieverf, 8);
		} else {
			put64(b, rnd());
		}
		if (proc == RPCRDMA_NFS3_READDIRPLUS)
			put32(b, pick_count(65536));
		put32(b, s->count = chance(50) ? 200 + below(70000) : pick_count(rtmax));
		break;
	case RPCRDMA_NFS3_COMMIT:
		s->fh_kind = put_fh(b, RPCRDMA_NF3REG, &s->fh);
		put64(b, pick_offset());
		put32(b, pick_count(wtmax));
		break;
	}
	if (s->fh_kind == FH_OVERSIZED)
		ok = false;
	s->exp = ok ? EXP_OK : EXP_GARBAGE;
}

static void build_mount(struct slot *s, uint32_t proc)
{
	struct wb *b = &s->head;
	char p[1100];
	uint32_t n;

	s->exp = EXP_OK;
	if (proc != RPCRDMA_MOUNT3_MNT && proc != RPCRDMA_MOUNT3_UMNT)
		return;
	switch (below(8)) {
	case 0:
		put_opaque(b, "", 0);
		break;
	case 1:
		put_opaque(b, "/", 1);
		break;
	case 2:
		n = (uint32_t)snprintf(p, sizeof(p), "%s/../%s", export_path, "x");
		put_opaque(b, p, n);
		break;
	case 3:
		n = RPCRDMA_NFS3_PATH_MAX + 1 + below(60);
		memset(p, '/', n);
		put_opaque(b, p, n);
		s->exp = EXP_GARBAGE;
		break;
	case 4:
		n = (uint32_t)snprintf(p, sizeof(p), "%s", export_path);
		p[n / 2] = '\0';
		put_opaque(b, p, n);
		s->exp = EXP_GARBAGE;
		break;
	case 5:
		n = (uint32_t)snprintf(p, sizeof(p), "%s/d0", export_path);
		put_opaque(b, p, n);
		break;
	default:
		n = (uint32_t)snprintf(p, sizeof(p), "%s%s", export_path, chance(50) ? "/" : "");
		put_opaque(b, p, n);
	}
}

static void slot_reset(struct slot *s)
{
	memset(&s->call, 0, sizeof(s->call));
	memset(&s->res, 0, sizeof(s->res));
	s->head.len = s->tail.len = 0;
	s->has_ddp = false;
	s->ddp = NULL;
	s->ddp_len = 0;
	s->cut = s->done = s->short_chunk = false;
	s->count = s->stable = 0;
	s->fh.len = 0;
	s->fh_kind = FH_LIVE;
}

/* Starts one random call on slot @s. */
static void start_call(struct slot *s)
{
	/* mostly NFSv3 with the credentials; NFS v2, v4 and the MOUNT
	 * program on the NFS port now and then; MOUNT on its port */
	unsigned int pi = chance(6) ? CRED_KINDS + below(3) : below(CRED_BAD_SYS);
	struct peer *p;
	uint32_t proc;

	if (chance(6))
		pi = CRED_BAD_SYS + below(2);
	if (chance(4))
		pi = MOUNT_PEER;
	p = &peers[pi];
	slot_reset(s);
	s->peer = pi;
	s->n = ++calls_made;
	if (p->mount) {
		proc = chance(95) ? below(RPCRDMA_MOUNT3_NPROCS) : RPCRDMA_MOUNT3_NPROCS + below(100);
		build_mount(s, proc);
	} else {
		proc = chance(97) ? below(RPCRDMA_NFS3_NPROCS)
				  : chance(50) ? RPCRDMA_NFS3_NPROCS + below(10) : (uint32_t)rnd();
		if (proc < RPCRDMA_NFS3_NPROCS)
			build_nfs(s, proc);
		else
			s->exp = EXP_ANY;
	}
	s->proc = proc;
	/* Garbage after the arguments, or the arguments cut short. */
	if (chance(4)) {
		uint32_t n = below(64) * 4;

		for (uint32_t i = 0; i < n; i += 4)
			put32(&s->tail, (uint32_t)rnd());
		if (n && s->exp == EXP_OK)
			s->exp = EXP_ANY;
	} else if (chance(4) && s->head.len >= 4 && !s->has_ddp) {
		s->head.len = below((uint32_t)s->head.len / 4) * 4;
		if (s->exp == EXP_OK)
			s->exp = s->proc == 0 ? EXP_OK : EXP_ANY;
	}
	s->call.proc = proc;
	s->call.encode_args = enc_raw;
	s->call.args = s;
	s->call.res = &s->res;
	s->call.timeout_ms = CALL_TIMEOUT_MS;
	if (p->mount) {
		if (proc == RPCRDMA_MOUNT3_MNT)
			s->call.decode_res = rpcrdma_mount3_xdr_mnt_res_dec;
		else if (proc == RPCRDMA_MOUNT3_DUMP)
			s->call.decode_res = dec_mountlist;
		else if (proc == RPCRDMA_MOUNT3_EXPORT)
			s->call.decode_res = dec_exports;
	} else if (proc < RPCRDMA_NFS3_NPROCS && p->prog == RPCRDMA_NFS_PROGRAM &&
		   p->vers == RPCRDMA_NFS_V3) {
		uint32_t count = 0;

		s->call.decode_res = rpcrdma_nfs3_decode_res(proc);
		switch (proc) {
		case RPCRDMA_NFS3_READ:
			s->res.read.data = s->rbuf;
			s->res.read.data_max = RPCRDMA_NFS3_MAXDATA;
			s->call.ddp_buf = s->rbuf;
			s->call.ddp_len = RPCRDMA_NFS3_MAXDATA;
			count = RPCRDMA_NFS3_MAXDATA;
			if (tr == RPCRDMA_TRANSPORT_RDMA && chance(5)) {
				/* a Write chunk shorter than the READ asks */
				s->call.ddp_len = below(8192);
				count = (uint32_t)s->call.ddp_len;
				s->short_chunk = true;
			}
			break;
		case RPCRDMA_NFS3_READLINK:
			s->call.ddp_buf = s->res.readlink.path.s;
			s->call.ddp_len = RPCRDMA_NFS3_PATH_MAX;
			break;
		case RPCRDMA_NFS3_READDIR:
		case RPCRDMA_NFS3_READDIRPLUS:
			s->res.readdir.entries = s->ents;
			s->res.readdir.max = RPCRDMA_NFS3_DIR_MAX;
			s->res.readdir.plus = proc == RPCRDMA_NFS3_READDIRPLUS;
			count = s->count < RPCRDMA_NFS3_MAXDATA ? s->count : RPCRDMA_NFS3_MAXDATA;
			break;
		}
		s->call.max_reply = rpcrdma_nfs3_max_reply(proc, count);
		if (tr == RPCRDMA_TRANSPORT_RDMA && chance(3)) {
			/* no Reply chunk, whatever the reply needs */
			s->call.max_reply = 0;
			s->short_chunk = true;
		}
	}
	s->call.done = slot_done;
	s->call.ctx = s;
	if (rpcrdma_client_call_async(p->c, &s->call) != 0) {
		violation(s, "the call could not start");
		return;
	}
	s->busy = true;
	p->inflight++;
}

/*
 * A call still out STALL_REPORT_S after its burst began is far beyond
 * anything a healthy run shows (no call took 3 s in 60 runs of 60 s): the
 * state of its client is printed then, once, while the call is still in
 * its tables, so that a time-out that follows can be explained (a call
 * never sent, or sent on a connection no reply comes on).
 */
#define STALL_REPORT_S 5

static void stall_report(const struct slot *s)
{
	struct rpcrdma_xprt_stats xs;

	fprintf(stderr, "# stalled %d s: call %lu, xid 0x%08x, peer %u, proc %u; its client:\n",
		STALL_REPORT_S, s->n, s->call.xid, s->peer, s->proc);
	(void)rpcrdma_client_inflight_write(peers[s->peer].c, 2);
	if (rpcrdma_client_stats(peers[s->peer].c, &xs) == 0)
		fprintf(stderr,
			"#   sent %llu received %llu granted %llu in use max %llu provider sends "
			"%llu recvs %llu posted now %llu bad %llu reconnects %llu rdma errors %llu\n",
			(unsigned long long)xs.calls_sent, (unsigned long long)xs.calls_received,
			(unsigned long long)xs.credits_granted,
			(unsigned long long)xs.credits_in_use_max, (unsigned long long)xs.prov_sends,
			(unsigned long long)xs.prov_recvs, (unsigned long long)xs.recvs_posted_now,
			(unsigned long long)xs.bad_msgs, (unsigned long long)xs.reconnects,
			(unsigned long long)xs.rdma_errors_received);
}

/* Runs the loop until every busy slot completed and checks each. */
static void finish_all(void)
{
	struct timespec t0, t;
	bool reported = false;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		bool left = false;

		for (int i = 0; i < SLOTS; i++) {
			if (slots[i].busy && slots[i].done) {
				slots[i].busy = false;
				check_reply(&slots[i]);
			}
			left |= slots[i].busy;
		}
		if (!left)
			return;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (!reported && t.tv_sec - t0.tv_sec >= STALL_REPORT_S) {
			reported = true;
			for (int i = 0; i < SLOTS; i++)
				if (slots[i].busy && !slots[i].done)
					stall_report(&slots[i]);
		}
		if (t.tv_sec - t0.tv_sec > 2 * CALL_TIMEOUT_MS / 1000 + 10) {
			for (int i = 0; i < SLOTS; i++)
				if (slots[i].busy)
					violation(&slots[i], "no completion at all within %d s",
						  2 * CALL_TIMEOUT_MS / 1000 + 10);
			fprintf(stderr, "hung: giving up\n");
			exit(1);
		}
		CHECK(rpcrdma_loop_run_once(loop, 200) >= 0);
	}
}

/* Cuts the connection of a peer with calls in flight, and makes it again. */
static void cut_one(void)
{
	unsigned int start = below(NPEERS + 1);

	for (unsigned int k = 0; k <= NPEERS; k++) {
		unsigned int i = (start + k) % (NPEERS + 1);

		if (!peers[i].inflight && k < NPEERS)
			continue;
		for (int j = 0; j < SLOTS; j++)
			if (slots[j].busy && !slots[j].done && slots[j].peer == i)
				slots[j].cut = true;
		rpcrdma_client_destroy(peers[i].c);
		peers[i].c = NULL;
		peer_open(i);
		return;
	}
}

/*
 * Raw TCP: records whose lengths lie.  Each connection is closed by us or
 * by the server within the time-out; where the record is whole, a reply
 * must come.
 */
static size_t rpc_header(uint32_t *w, uint32_t xid, uint32_t proc)
{
	uint32_t *s = w;

	*w++ = htonl(xid);
	*w++ = htonl(0);
	*w++ = htonl(2);
	*w++ = htonl(RPCRDMA_NFS_PROGRAM);
	*w++ = htonl(3);
	*w++ = htonl(proc);
	*w++ = htonl(RPCRDMA_AUTH_SYS);
	*w++ = htonl(20);
	*w++ = 0;
	*w++ = 0;
	*w++ = 0;
	*w++ = 0;
	*w++ = 0;
	*w++ = htonl(RPCRDMA_AUTH_NONE);
	*w++ = 0;
	return (size_t)(w - s);
}

static int raw_connect(bool nfs)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0);
	sin.sin_port = htons((uint16_t)atoi(!nfs && chance(25) ? mport : tport));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
		violation(NULL, "raw TCP: connect: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Waits for a reply record to @xid: 1, 0 when the server closed, -1 on
 * a time-out. */
static int raw_reply(int fd, uint32_t xid, int ms)
{
	uint32_t buf[64];
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	ssize_t got;

	if (poll(&pf, 1, ms) != 1)
		return -1;
	got = recv(fd, buf, sizeof(buf), 0);
	if (got <= 0)
		return 0;
	if (got < 12 || ntohl(buf[1]) != xid || ntohl(buf[2]) != 1) {
		violation(NULL, "raw TCP: a reply that is not one (%zd bytes)", got);
		return 1;
	}
	return 1;
}

/*
 * A raw connection to the NFS port from local port @lport (0: any), so
 * that a call sent again comes from the same address and port, as a
 * client that reconnects sends it; the server's duplicate request cache
 * counts the port over TCP.
 */
static int raw_connect_from(uint16_t lport, uint16_t *got)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t len = sizeof(sin);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0);
	CHECK(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(lport);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
		close(fd); /* the port is still held: not the server's fault */
		return -1;
	}
	sin.sin_port = htons((uint16_t)atoi(tport));
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
		close(fd);
		return -1;
	}
	CHECK(getsockname(fd, (struct sockaddr *)&sin, &len) == 0);
	*got = ntohs(sin.sin_port);
	return fd;
}

/* Closes with a reset, so that the local port is free again at once. */
static void raw_reset(int fd)
{
	struct linger l = {.l_onoff = 1, .l_linger = 0};

	(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fd);
}

/*
 * Retransmissions across connections: one call (one XID, one address and
 * port) sent on two to four connections made one after the other from
 * the same port, each but the last reset right after sending or after its
 * reply; a server with worker threads places them on different loops,
 * which share one duplicate request cache, so the copies meet the
 * original still running on another worker, answered, or gone with its
 * connection.  The last connection must get its reply.
 */
static void raw_retransmit(void)
{
	uint32_t msg[600];
	uint32_t xid = (uint32_t)rnd();
	uint32_t proc = chance(50) ? 1 + below(4) : 1 + below(21);
	size_t n = 1 + rpc_header(msg + 1, xid, proc);
	unsigned int copies = 2 + below(3);
	uint16_t lport = 0;

	if (chance(80)) { /* a handle that works, so the call does real work */
		msg[n++] = htonl(root_fh.len);
		memcpy(&msg[n], root_fh.data, root_fh.len);
		n += (root_fh.len + 3) / 4;
		if (proc == 3) { /* LOOKUP: a name */
			msg[n++] = htonl(1);
			msg[n++] = htonl(0x61000000u);
		}
		if (proc == 4) /* ACCESS: the bits */
			msg[n++] = htonl(0x3f);
	}
	for (uint32_t i = chance(60) ? 0 : below(20); i > 0; i--)
		msg[n++] = (uint32_t)rnd();
	msg[0] = htonl(0x80000000u | (uint32_t)((n - 1) * 4));
	for (unsigned int i = 0; i < copies; i++) {
		bool last = i + 1 == copies;
		int fd = -1;

		for (int try = 0; try < 50 && fd < 0; try++) {
			fd = raw_connect_from(lport, &lport);
			if (fd < 0)
				usleep(1000);
		}
		if (fd < 0)
			return; /* the port stayed taken; nothing learnt */
		CHECK(send(fd, msg, n * 4, MSG_NOSIGNAL) == (ssize_t)(n * 4));
		if (!last && chance(50)) {
			raw_reset(fd);
			continue;
		}
		if (raw_reply(fd, xid, CALL_TIMEOUT_MS) != 1)
			violation(NULL, "raw TCP: call 0x%08x (procedure %u), copy %u of %u from port "
					"%u: no reply within %d ms",
				  xid, proc, i + 1, copies, lport, CALL_TIMEOUT_MS);
		raw_reset(fd);
	}
}

static void raw_episode(void)
{
	uint32_t msg[600];
	uint32_t xid = (uint32_t)rnd();
	size_t n = 1 + rpc_header(msg + 1, xid, 1 + below(21));
	int kind = (int)below(6), fd, rc;

	if (kind == 5) {
		raw_retransmit();
		return;
	}
	fd = raw_connect(false);
	if (fd < 0)
		return;
	/* the arguments: random words */
	for (uint32_t i = below(80); i > 0; i--)
		msg[n++] = (uint32_t)rnd();
	switch (kind) {
	case 0: /* a whole record of garbage arguments: answered */
		msg[0] = htonl(0x80000000u | (uint32_t)((n - 1) * 4));
		CHECK(send(fd, msg, n * 4, MSG_NOSIGNAL) == (ssize_t)(n * 4));
		rc = raw_reply(fd, xid, CALL_TIMEOUT_MS);
		if (rc < 0)
			violation(NULL, "raw TCP: no reply to a whole record within %d ms",
				  CALL_TIMEOUT_MS);
		break;
	case 1: /* the same in fragments of one word */
		for (size_t i = 1; i < n; i++) {
			uint32_t f[2] = {htonl((i == n - 1 ? 0x80000000u : 0) | 4), msg[i]};

			CHECK(send(fd, f, 8, MSG_NOSIGNAL) == 8);
		}
		if (raw_reply(fd, xid, CALL_TIMEOUT_MS) < 0)
			violation(NULL, "raw TCP: no reply to a fragmented record within %d ms",
				  CALL_TIMEOUT_MS);
		break;
	case 2: /* the mark promises more than comes, then we hang up */
		msg[0] = htonl(0x80000000u | (uint32_t)((n - 1) * 4 + 4096));
		(void)send(fd, msg, n * 4, MSG_NOSIGNAL);
		break;
	case 3: /* a record above any limit: the server must drop us */
		msg[0] = htonl(0x80000000u | 0x7ffffff0u);
		(void)send(fd, msg, n * 4, MSG_NOSIGNAL);
		rc = raw_reply(fd, xid, CALL_TIMEOUT_MS);
		if (rc == 1)
			violation(NULL, "raw TCP: a reply to a call it cannot have read");
		if (rc < 0)
			violation(NULL, "raw TCP: a record above the limit kept open %d ms",
				  CALL_TIMEOUT_MS);
		break;
	default: /* a record shorter than an RPC header */
		msg[0] = htonl(0x80000000u | 8);
		(void)send(fd, msg, 12, MSG_NOSIGNAL);
		/* dropped (knfsd drops what has no header), or answered */
		(void)raw_reply(fd, xid, 100);
	}
	close(fd);
}

/* Synchronous helpers for the setup and the final check, as root. */
static int call_sync(unsigned int pi, uint32_t proc, void *args, void *res)
{
	return rpcrdma_nfs3_call(peers[pi].c, proc, args, res);
}

static void name_set(struct rpcrdma_nfs3_name *n, const char *s)
{
	n->len = (uint32_t)strlen(s);
	memcpy(n->s, s, n->len + 1);
}

static struct rpcrdma_nfs3_fh make(uint32_t proc, const struct rpcrdma_nfs3_fh *dir,
				   const char *name, const char *target)
{
	union {
		struct rpcrdma_nfs3_create_args c;
		struct rpcrdma_nfs3_mkdir_args m;
		struct rpcrdma_nfs3_symlink_args s;
		struct rpcrdma_nfs3_mknod_args n;
	} a;
	struct rpcrdma_nfs3_create_res r;
	struct rpcrdma_nfs3_diropargs *w = &a.c.where;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	switch (proc) {
	case RPCRDMA_NFS3_CREATE:
		a.c.mode = RPCRDMA_GUARDED;
		a.c.attr.set_mode = true;
		a.c.attr.mode = 0666;
		break;
	case RPCRDMA_NFS3_MKDIR:
		w = &a.m.where;
		a.m.attr.set_mode = true;
		a.m.attr.mode = 0777;
		break;
	case RPCRDMA_NFS3_SYMLINK:
		w = &a.s.where;
		a.s.target.len = (uint32_t)strlen(target);
		memcpy(a.s.target.s, target, a.s.target.len + 1);
		break;
	default:
		w = &a.n.where;
		a.n.type = RPCRDMA_NF3FIFO;
		a.n.attr.set_mode = true;
		a.n.attr.mode = 0666;
	}
	w->dir = *dir;
	name_set(&w->name, name);
	CHECK_RC(call_sync(CRED_ROOT, proc, &a, &r), 0);
	CHECK_RC(r.status, 0);
	CHECK(r.has_obj);
	pool_add(&r.obj, r.obj_attr.attr.type);
	return r.obj;
}

static uint32_t write_sync(const struct rpcrdma_nfs3_fh *fh, uint64_t off, const void *d,
			   uint32_t n)
{
	struct rpcrdma_nfs3_write_args a;
	struct rpcrdma_nfs3_write_res r;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.file = *fh;
	a.offset = off;
	a.count = a.len = n;
	a.data = (uint8_t *)(uintptr_t)d;
	a.stable = RPCRDMA_FILE_SYNC;
	CHECK_RC(call_sync(CRED_ROOT, RPCRDMA_NFS3_WRITE, &a, &r), 0);
	return r.status;
}

static uint32_t remove_sync(uint32_t proc, const struct rpcrdma_nfs3_fh *dir, const char *name)
{
	struct rpcrdma_nfs3_diropargs a;
	struct rpcrdma_nfs3_wcc_res r;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.dir = *dir;
	name_set(&a.name, name);
	CHECK_RC(call_sync(CRED_ROOT, proc, &a, &r), 0);
	return r.status;
}

/* Inodes of what lies outside the export, which no reply may describe. */
static void outside_inodes(void)
{
	struct stat st;
	DIR *d;
	struct dirent *e;

	CHECK(stat(outside_path, &st) == 0);
	forbidden[nforbidden++] = st.st_ino;
	CHECK(stat(export_path, &st) == 0);
	export_dev = (uint64_t)st.st_dev;
	CHECK((d = opendir(outside_path)) != NULL);
	while ((e = readdir(d)) && nforbidden < 64) {
		char p[4096];

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", outside_path, e->d_name);
		if (lstat(p, &st) == 0 && strcmp(p, export_path) != 0 &&
		    (uint64_t)st.st_dev == export_dev)
			forbidden[nforbidden++] = st.st_ino;
	}
	closedir(d);
}

static void setup(void)
{
	struct rpcrdma_opaque_auth cred;
	struct rpcrdma_auth_sys sys;
	struct rpcrdma_nfs3_fh d0, d1, d2, f0, gone;
	struct rpcrdma_nfs3_fsinfo_res fi;
	static uint8_t data[8192];

	memset(&sys, 0, sizeof(sys));
	strcpy(sys.machinename, "chaos");
	CHECK_RC(rpcrdma_auth_sys_encode(&sys, &cred), 0);
	CHECK_RC(rpcrdma_mount3_mnt(loop, HOST, mport, export_path, &cred, &root_fh), 0);
	live[0].fh = root_fh;
	live[0].type = RPCRDMA_NF3DIR;
	nlive = 1;
	for (unsigned int i = 0; i <= NPEERS; i++)
		peer_open(i);
	for (int i = 0; i < SLOTS; i++) {
		CHECK((slots[i].rbuf = malloc(RPCRDMA_NFS3_MAXDATA)) != NULL);
		CHECK((slots[i].ents = calloc(RPCRDMA_NFS3_DIR_MAX, sizeof(*slots[i].ents))) != NULL);
	}
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	d0 = make(RPCRDMA_NFS3_MKDIR, &root_fh, "d0", NULL);
	d1 = make(RPCRDMA_NFS3_MKDIR, &d0, "d1", NULL);
	d2 = make(RPCRDMA_NFS3_MKDIR, &root_fh, "d2", NULL);
	f0 = make(RPCRDMA_NFS3_CREATE, &root_fh, "f0", NULL);
	CHECK_RC(write_sync(&f0, 0, data, sizeof(data)), 0);
	(void)make(RPCRDMA_NFS3_CREATE, &root_fh, "f1", NULL);
	(void)make(RPCRDMA_NFS3_CREATE, &d0, "f2", NULL);
	(void)make(RPCRDMA_NFS3_CREATE, &d1, "n0", NULL);
	(void)make(RPCRDMA_NFS3_SYMLINK, &root_fh, "l0", "f0");
	(void)make(RPCRDMA_NFS3_SYMLINK, &d2, "l1", "../../sentinel");
	(void)make(RPCRDMA_NFS3_MKNOD, &root_fh, "p0", NULL);
	{
		struct rpcrdma_nfs3_link_args a;
		struct rpcrdma_nfs3_link_res r;

		memset(&a, 0, sizeof(a));
		memset(&r, 0, sizeof(r));
		a.file = f0;
		a.link.dir = d2;
		name_set(&a.link.name, "h0");
		CHECK_RC(call_sync(CRED_ROOT, RPCRDMA_NFS3_LINK, &a, &r), 0);
		CHECK_RC(r.status, 0);
	}
	/* stale handles: a file and a directory made and removed */
	gone = make(RPCRDMA_NFS3_CREATE, &d2, "gone", NULL);
	CHECK_RC(remove_sync(RPCRDMA_NFS3_REMOVE, &d2, "gone"), 0);
	pool_stale(&gone);
	gone = make(RPCRDMA_NFS3_MKDIR, &d1, "gonedir", NULL);
	CHECK_RC(remove_sync(RPCRDMA_NFS3_RMDIR, &d1, "gonedir"), 0);
	pool_stale(&gone);
	CHECK(nstale == 2);
	memset(&fi, 0, sizeof(fi));
	CHECK_RC(call_sync(CRED_ROOT, RPCRDMA_NFS3_FSINFO, &root_fh, &fi), 0);
	CHECK_RC(fi.status, 0);
	rtmax = fi.rtmax;
	wtmax = fi.wtmax;
	printf("ok - chaos: tree built, %u handles, %u stale; rtmax %u wtmax %u\n", nlive, nstale,
	       rtmax, wtmax);
	fflush(stdout);
}

/* After the chaos: a fresh connection as root is served normally. */
static void health(void)
{
	static uint8_t data[4096], back[4096];
	struct rpcrdma_nfs3_create_args ca;
	struct rpcrdma_nfs3_create_res cr;
	struct rpcrdma_nfs3_read_args ra;
	struct rpcrdma_nfs3_read_res rr;
	struct rpcrdma_nfs3_attr_res ar;
	uint32_t st = RPCRDMA_NFS3ERR_JUKEBOX;

	for (unsigned int i = 0; i <= NPEERS; i++) {
		rpcrdma_client_destroy(peers[i].c);
		peers[i].c = NULL;
	}
	peer_open(CRED_ROOT);
	for (int i = 0; i < 50 && st == RPCRDMA_NFS3ERR_JUKEBOX; i++) {
		memset(&ar, 0, sizeof(ar));
		CHECK_RC(call_sync(CRED_ROOT, RPCRDMA_NFS3_GETATTR, &root_fh, &ar), 0);
		st = ar.status;
	}
	CHECK_RC(st, 0);
	memset(&ca, 0, sizeof(ca));
	memset(&cr, 0, sizeof(cr));
	ca.where.dir = root_fh;
	name_set(&ca.where.name, "health-check");
	ca.mode = RPCRDMA_GUARDED;
	ca.attr.set_mode = true;
	ca.attr.mode = 0644;
	CHECK_RC(call_sync(CRED_ROOT, RPCRDMA_NFS3_CREATE, &ca, &cr), 0);
	if (cr.status == RPCRDMA_NFS3ERR_NOTDIR || cr.status == RPCRDMA_NFS3ERR_ACCES)
		printf("# health: CREATE in the root answered %u (the chaos changed it)\n",
		       cr.status);
	CHECK_RC(cr.status, 0);
	CHECK(cr.has_obj);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	CHECK_RC(write_sync(&cr.obj, 0, data, sizeof(data)), 0);
	memset(&ra, 0, sizeof(ra));
	memset(&rr, 0, sizeof(rr));
	ra.file = cr.obj;
	ra.count = sizeof(back);
	rr.data = back;
	rr.data_max = sizeof(back);
	CHECK_RC(call_sync(CRED_ROOT, RPCRDMA_NFS3_READ, &ra, &rr), 0);
	CHECK_RC(rr.status, 0);
	CHECK_RC(rr.len, sizeof(data));
	CHECK(memcmp(back, data, sizeof(data)) == 0);
	rpcrdma_client_destroy(peers[CRED_ROOT].c);
	peers[CRED_ROOT].c = NULL;
	printf("ok - chaos: after the run, GETATTR, CREATE, WRITE and READ served normally\n");
}

static void chaos(int seconds)
{
	time_t end = time(NULL) + seconds;
	unsigned long bursts = 0, cuts = 0, raws = 0;

	while (time(NULL) < end) {
		uint32_t r = below(100);

		if (r < raw_pct && tr == RPCRDMA_TRANSPORT_TCP) {
			raw_episode();
			raws++;
			continue;
		}
		{
			unsigned int n = chance(25) ? 1 + below(SLOTS) : 1 + below(3);

			for (unsigned int i = 0; i < n; i++)
				start_call(&slots[i]);
			if (chance(cut_pct)) {
				/* let some of them reach the server first */
				for (uint32_t k = below(4); k > 0; k--)
					(void)rpcrdma_loop_run_once(loop, (int)below(3));
				cut_one();
				cuts++;
			}
			finish_all();
			bursts++;
		}
	}
	printf("# chaos: %lu calls in %lu bursts, %lu connections cut, %lu raw TCP episodes; "
	       "pool %u live %u stale\n",
	       calls_made, bursts, cuts, raws, nlive, nstale);
	for (uint32_t i = 0; i < RPCRDMA_NFS3_NPROCS; i++)
		printf("#   %-11s %6lu NFS3_OK %6lu errors %6lu refused\n", rpcrdma_nfs3_proc_name(i),
		       tally[i][0], tally[i][1], tally[i][2]);
}

/*
 * Deterministic sub-cases for what the chaos found (regressions), each
 * against the tree setup() builds.
 */

/* A READDIR(PLUS) count below the reply's fixed part (directory
 * attributes, verifier, end of list and eof: 104 bytes), at the end of the
 * directory, is NFS3ERR_TOOSMALL: RFC 1813 counts the whole READDIR3resok.
 * It was an empty NFS3_OK of 104 bytes, more than the client asked. */
static void regress_readdir_small(void)
{
	static struct rpcrdma_nfs3_entry ents[64];
	struct rpcrdma_nfs3_readdir_args a;
	struct rpcrdma_nfs3_readdir_res r;
	uint64_t last = 0;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.dir = root_fh;
	a.count = 65536;
	r.entries = ents;
	r.max = 64;
	CHECK_RC(call_sync(CRED_ROOT, RPCRDMA_NFS3_READDIR, &a, &r), 0);
	CHECK_RC(r.status, 0);
	CHECK(r.eof && r.n > 0);
	last = ents[r.n - 1].cookie;
	for (uint32_t proc = RPCRDMA_NFS3_READDIR; proc <= RPCRDMA_NFS3_READDIRPLUS; proc++) {
		for (uint32_t count = 0; count < 104; count += 25) {
			for (int end = 0; end < 2; end++) {
				memset(&r, 0, sizeof(r));
				r.entries = ents;
				r.max = 64;
				r.plus = proc == RPCRDMA_NFS3_READDIRPLUS;
				a.cookie = end ? last : 0;
				memcpy(a.verf, r.verf, 8);
				a.count = count;
				a.dircount = count;
				CHECK_RC(call_sync(CRED_ROOT, proc, &a, &r), 0);
				CHECK_RC(r.status, RPCRDMA_NFS3ERR_TOOSMALL);
			}
		}
	}
	printf("ok - regress: READDIR and READDIRPLUS with a count below 104 bytes answer "
	       "NFS3ERR_TOOSMALL, at the end of the directory too\n");
}

static const struct {
	const char *name;
	void (*fn)(void);
} regressions[] = {
    {"readdir-small", regress_readdir_small},
};

static int regress(const char *name)
{
	bool any = false;

	setup();
	for (size_t i = 0; i < sizeof(regressions) / sizeof(regressions[0]); i++) {
		if (strcmp(name, "all") == 0 || strcmp(name, regressions[i].name) == 0) {
			regressions[i].fn();
			any = true;
		}
	}
	if (!any && strcmp(name, "all") != 0) {
		fprintf(stderr, "unknown regression %s\n", name);
		return 2;
	}
	return violations ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
	    {"transport", required_argument, NULL, 't'},
	    {"export", required_argument, NULL, 'e'},
	    {"outside", required_argument, NULL, 'o'},
	    {"port", required_argument, NULL, 'p'},
	    {"tcp-port", required_argument, NULL, 'T'},
	    {"mount-port", required_argument, NULL, 'm'},
	    {"seconds", required_argument, NULL, 'S'},
	    {"seed", required_argument, NULL, 's'},
	    {"regress", required_argument, NULL, 'r'},
	    {"cut-pct", required_argument, NULL, 'c'},
	    {"raw-pct", required_argument, NULL, 'w'},
	    {NULL, 0, NULL, 0},
	};
	const char *reg = NULL;
	int c, seconds = 15;
	bool seeded = false;

	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 't':
			tr = strcmp(optarg, "tcp") == 0 ? RPCRDMA_TRANSPORT_TCP
							: RPCRDMA_TRANSPORT_RDMA;
			break;
		case 'e':
			export_path = optarg;
			break;
		case 'o':
			outside_path = optarg;
			break;
		case 'p':
			snprintf(port, sizeof(port), "%s", optarg);
			break;
		case 'T':
			snprintf(tport, sizeof(tport), "%s", optarg);
			break;
		case 'm':
			snprintf(mport, sizeof(mport), "%s", optarg);
			break;
		case 'S':
			seconds = atoi(optarg);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			seeded = true;
			break;
		case 'r':
			reg = optarg;
			break;
		case 'c':
			cut_pct = (unsigned int)atoi(optarg);
			break;
		case 'w':
			raw_pct = (unsigned int)atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	if (optind != argc || !export_path || !outside_path || !*port || !*tport || !*mport) {
		fprintf(stderr, "usage: nfsd_chaos --transport rdma|tcp --export PATH --outside DIR "
				"--port P --tcp-port T --mount-port M [--seconds N] [--seed S] "
				"[--regress NAME] [--cut-pct P] [--raw-pct P]\n");
		return 2;
	}
	if (!seeded) {
		struct timespec t;

		clock_gettime(CLOCK_REALTIME, &t);
		seed = (uint64_t)t.tv_nsec ^ ((uint64_t)t.tv_sec << 20) ^ (uint64_t)getpid();
	}
	rng = seed ? seed : 1;
	printf("# chaos: seed %" PRIu64 " (reproduce with --seed %" PRIu64 "), %d s over %s\n",
	       seed, seed, seconds, tr == RPCRDMA_TRANSPORT_TCP ? "tcp" : "rdma");
	fflush(stdout);
	CHECK_RC(rpcrdma_loop_create(&loop), 0);
	outside_inodes();
	if (reg)
		return regress(reg);
	setup();
	chaos(seconds);
	health();
	for (int i = 0; i < SLOTS; i++) {
		free(slots[i].rbuf);
		free(slots[i].ents);
		free(slots[i].head.p);
		free(slots[i].tail.p);
	}
	CHECK_RC(rpcrdma_loop_destroy(loop), 0);
	if (violations) {
		printf("not ok - chaos: %lu violations (seed %" PRIu64 ")\n", violations, seed);
		return 1;
	}
	printf("ok - chaos: every reply as specified (seed %" PRIu64 ")\n", seed);
	return 0;
}
