/*
 * Our NFSv3 client against an NFSv3 server: the kernel's nfsd in the lab,
 * rpcrdma-nfsd on loopback in `make check`.  MOUNT over TCP for the root
 * handle, then NFSv3 over RDMA (or TCP) in a directory of its own, which it
 * removes at the end.
 *
 *   files     files of 0 B, 1 B, 1 KiB + 1, 4095 B, 4 KiB + 3, 1 MiB, 1 MiB + 1
 *             and 8 MiB written
 *             (WRITE, data in Read chunks; UNSTABLE, then COMMIT) and read
 *             back (READ, data placed by the server's RDMA Writes), compared
 *   symlink   SYMLINK, then READLINK (its result in a Write chunk)
 *   bigdir    2000 files listed with READDIRPLUS (Long Replies where a
 *             reply exceeds the inline size: the kernel's 4 KiB; on ofi,
 *             whose default is 68 KiB, they come inline)
 *   longcall  a WRITE of 80000 bytes whose data is not DDP-eligible, so
 *             the call exceeds every inline threshold: a Long Call
 *   errors    LOOKUP of a missing name, READ of a directory, a forged handle
 *
 * With --max-vers 2 the client offers RPC-over-RDMA Version Two
 * (draft-cel-nfsv4-rpcrdma-version-two-00): against a Version One server
 * such as the kernel's nfsd the first call is refused with ERR_VERS and
 * sent again in Version One; the run then also checks that exactly that
 * happened ("ok - v2-fallback"), or, against a Version Two server, that
 * every call went in Version Two ("ok - v2-spoken").
 *
 * With --nconnect N the client spreads its calls over N connections
 * (rpcrdma_client_opts.nconnect); the run then also checks that every
 * connection carried calls ("ok - nconnect"), and --linger SEC keeps them
 * open that long at the end, so that the lab can count them at the server.
 *
 * Usage: nfs3_interop --server HOST --export PATH [--transport rdma|tcp]
 *        [--provider NAME] [--port N] [--mount-port N] [--max-vers 1|2]
 *        [--nconnect N] [--linger SEC] [CASE...]
 * Prints one "ok - CASE" per case and the client's counters; exits 1 on
 * the first failure.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpcrdma/loop.h"
#include "rpcrdma/nfs3.h"
#include "rpcrdma/rpc_msg.h"

#include "check.h"

static struct rpcrdma_client *clnt;
static enum rpcrdma_transport tr = RPCRDMA_TRANSPORT_RDMA;
static struct rpcrdma_nfs3_fh top; /* our directory */
/* The server's largest READ and WRITE (FSINFO rtmax, wtmax): a kernel nfsd
 * with 2 GiB of memory takes 512 KiB, and refuses a larger Read chunk. */
static uint32_t rtmax = RPCRDMA_NFS3_MAXDATA, wtmax = RPCRDMA_NFS3_MAXDATA;
/* The highest RPC-over-RDMA version offered (--max-vers). */
static uint32_t max_vers = 1;

static uint8_t pat(uint32_t seed, size_t i)
{
	return (uint8_t)((seed * 2654435761u) >> 24 ^ (uint32_t)(i * 7 + (i >> 11)));
}

static void name_set(struct rpcrdma_nfs3_name *n, const char *s)
{
	n->len = (uint32_t)strlen(s);
	CHECK(n->len <= RPCRDMA_NFS3_NAME_MAX);
	memcpy(n->s, s, n->len + 1);
}

static void create_file(const struct rpcrdma_nfs3_fh *dir, const char *name,
			struct rpcrdma_nfs3_fh *out)
{
	struct rpcrdma_nfs3_create_args a;
	struct rpcrdma_nfs3_create_res r;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.where.dir = *dir;
	name_set(&a.where.name, name);
	a.mode = RPCRDMA_GUARDED;
	a.attr.set_mode = true;
	a.attr.mode = 0644;
	CHECK_RC(rpcrdma_nfs3_call(clnt, RPCRDMA_NFS3_CREATE, &a, &r), 0);
	CHECK_RC(r.status, RPCRDMA_NFS3_OK);
	CHECK(r.has_obj);
	if (out)
		*out = r.obj;
}

static void remove_name(const struct rpcrdma_nfs3_fh *dir, const char *name, uint32_t proc)
{
	struct rpcrdma_nfs3_diropargs a;
	struct rpcrdma_nfs3_wcc_res r;

	memset(&r, 0, sizeof(r));
	a.dir = *dir;
	name_set(&a.name, name);
	CHECK_RC(rpcrdma_nfs3_call(clnt, proc, &a, &r), 0);
	CHECK_RC(r.status, RPCRDMA_NFS3_OK);
}

static uint64_t getattr_size(const struct rpcrdma_nfs3_fh *fh)
{
	struct rpcrdma_nfs3_attr_res r;

	memset(&r, 0, sizeof(r));
	CHECK_RC(rpcrdma_nfs3_call(clnt, RPCRDMA_NFS3_GETATTR, (void *)fh, &r), 0);
	CHECK_RC(r.status, RPCRDMA_NFS3_OK);
	return r.attr.size;
}

static void write_all(const struct rpcrdma_nfs3_fh *fh, const uint8_t *data, size_t len)
{
	struct rpcrdma_nfs3_write_args a;
	struct rpcrdma_nfs3_write_res r;
	struct rpcrdma_nfs3_commit_args ca;
	struct rpcrdma_nfs3_commit_res cr;
	uint8_t verf[RPCRDMA_NFS3_VERF_SIZE];

	for (size_t off = 0; off < len;) {
		uint32_t n = len - off < wtmax ? (uint32_t)(len - off) : wtmax;

		memset(&a, 0, sizeof(a));
		memset(&r, 0, sizeof(r));
		a.file = *fh;
		a.offset = off;
		a.count = a.len = n;
		a.stable = RPCRDMA_UNSTABLE;
		a.data = (uint8_t *)(uintptr_t)(data + off);
		CHECK_RC(rpcrdma_nfs3_call(clnt, RPCRDMA_NFS3_WRITE, &a, &r), 0);
		CHECK_RC(r.status, RPCRDMA_NFS3_OK);
		CHECK(r.count > 0 && r.count <= n);
		if (off == 0)
			memcpy(verf, r.verf, sizeof(verf));
		off += r.count;
	}
	memset(&ca, 0, sizeof(ca));
	memset(&cr, 0, sizeof(cr));
	ca.file = *fh;
	CHECK_RC(rpcrdma_nfs3_call(clnt, RPCRDMA_NFS3_COMMIT, &ca, &cr), 0);
	CHECK_RC(cr.status, RPCRDMA_NFS3_OK);
	/* Same verifier: the server did not restart and lose unstable data. */
	CHECK(len == 0 || memcmp(verf, cr.verf, sizeof(verf)) == 0);
}

static void read_check(const struct rpcrdma_nfs3_fh *fh, const uint8_t *want, size_t len,
		       uint8_t *buf)
{
	size_t off = 0;

	for (;;) {
		struct rpcrdma_nfs3_read_args a = {.file = *fh, .offset = off};
		struct rpcrdma_nfs3_read_res r;

		memset(&r, 0, sizeof(r));
		a.count = rtmax;
		r.data = buf + off;
		r.data_max = rtmax;
		CHECK_RC(rpcrdma_nfs3_call(clnt, RPCRDMA_NFS3_READ, &a, &r), 0);
		CHECK_RC(r.status, RPCRDMA_NFS3_OK);
		CHECK(off + r.count <= len);
		off += r.count;
		if (r.eof || r.count == 0)
			break;
	}
	CHECK_RC(off, len);
	CHECK(memcmp(buf, want, len) == 0);
}

static void case_files(void)
{
	/* 1 KiB + 1: the server's RDMA Write of it ends in a one-byte packet. */
	static const size_t sizes[] = {0,         1,           1025,      4095,
				       4096 + 3, 1u << 20, (1u << 20) + 1, 8u << 20};
	uint8_t *data = malloc((8u << 20) + RPCRDMA_NFS3_MAXDATA);
	uint8_t *back = malloc((8u << 20) + RPCRDMA_NFS3_MAXDATA);

	CHECK(data && back);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct rpcrdma_nfs3_fh fh;
		char name[32];

		for (size_t i = 0; i < sizes[k]; i++)
			data[i] = pat((uint32_t)k + 1, i);
		snprintf(name, sizeof(name), "file-%zu", sizes[k]);
		create_file(&top, name, &fh);
		write_all(&fh, data, sizes[k]);
		CHECK_RC(getattr_size(&fh), sizes[k]);
		read_check(&fh, data, sizes[k], back);
		remove_name(&top, name, RPCRDMA_NFS3_REMOVE);
	}
	free(data);
	free(back);
}

static void case_symlink(void)
{
	struct rpcrdma_nfs3_symlink_args a;
	struct rpcrdma_nfs3_create_res r;
	struct rpcrdma_nfs3_readlink_res lr;
	char target[600];

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.where.dir = top;
	name_set(&a.where.name, "link");
	/* Long enough that nothing about it is trivially short. */
	for (size_t i = 0; i < sizeof(target) - 1; i++)
		target[i] = (char)('a' + i % 26);
	target[sizeof(target) - 1] = '\0';
	memcpy(target, "../some/where/", 14);
	a.target.len = (uint32_t)strlen(target);
	memcpy(a.target.s, target, a.target.len + 1);
	CHECK_RC(rpcrdma_nfs3_call(clnt, RPCRDMA_NFS3_SYMLINK, &a, &r), 0);
	CHECK_RC(r.status, RPCRDMA_NFS3_OK);
	CHECK(r.has_obj);
	memset(&lr, 0, sizeof(lr));
	CHECK_RC(rpcrdma_nfs3_call(clnt, RPCRDMA_NFS3_READLINK, &r.obj, &lr), 0);
	CHECK_RC(lr.status, RPCRDMA_NFS3_OK);
	CHECK_RC(lr.path.len, strlen(target));
	CHECK(strcmp(lr.path.s, target) == 0);
	remove_name(&top, "link", RPCRDMA_NFS3_REMOVE);
}

#define BIGDIR_N 2000

static void case_bigdir(void)
{
	struct rpcrdma_nfs3_mkdir_args ma;
	struct rpcrdma_nfs3_create_res mr;
	struct rpcrdma_nfs3_entry *ents = calloc(RPCRDMA_NFS3_DIR_MAX, sizeof(*ents));
	static bool seen[BIGDIR_N];
	struct rpcrdma_nfs3_fh dir;
	uint64_t cookie = 0;
	uint8_t verf[RPCRDMA_NFS3_VERF_SIZE] = {0};
	unsigned int found = 0, replies = 0;
	char name[64];

	CHECK(ents != NULL);
	memset(&ma, 0, sizeof(ma));
	memset(&mr, 0, sizeof(mr));
	ma.where.dir = top;
	name_set(&ma.where.name, "big");
	ma.attr.set_mode = true;
	ma.attr.mode = 0755;
	CHECK_RC(rpcrdma_nfs3_call(clnt, RPCRDMA_NFS3_MKDIR, &ma, &mr), 0);
	CHECK_RC(mr.status, RPCRDMA_NFS3_OK);
	dir = mr.obj;
	for (int i = 0; i < BIGDIR_N; i++) {
		snprintf(name, sizeof(name), "entry-with-a-longish-name-%05d", i);
		create_file(&dir, name, NULL);
	}
	memset(seen, 0, sizeof(seen));
	for (;;) {
		struct rpcrdma_nfs3_readdir_args a;
		struct rpcrdma_nfs3_readdir_res r;

		memset(&a, 0, sizeof(a));
		memset(&r, 0, sizeof(r));
		a.dir = dir;
		a.cookie = cookie;
		memcpy(a.verf, verf, sizeof(verf));
		a.dircount = 16384;
		a.count = 131072; /* past every inline size (68 KiB on ofi): a Reply chunk */
		r.entries = ents;
		r.max = RPCRDMA_NFS3_DIR_MAX;
		CHECK_RC(rpcrdma_nfs3_call(clnt, RPCRDMA_NFS3_READDIRPLUS, &a, &r), 0);
		CHECK_RC(r.status, RPCRDMA_NFS3_OK);
		replies++;
		memcpy(verf, r.verf, sizeof(verf));
		for (uint32_t i = 0; i < r.n; i++) {
			int k;

			cookie = ents[i].cookie;
			if (sscanf(ents[i].name.s, "entry-with-a-longish-name-%05d", &k) == 1 &&
			    k >= 0 && k < BIGDIR_N) {
				CHECK(!seen[k]);
				seen[k] = true;
				found++;
				CHECK(ents[i].attr.present && ents[i].has_fh);
			}
		}
		if (r.eof)
			break;
		CHECK(r.n > 0);
	}
	CHECK_RC(found, BIGDIR_N);
	printf("# bigdir: %u entries in %u READDIRPLUS replies\n", found, replies);
	for (int i = 0; i < BIGDIR_N; i++) {
		snprintf(name, sizeof(name), "entry-with-a-longish-name-%05d", i);
		remove_name(&dir, name, RPCRDMA_NFS3_REMOVE);
	}
	remove_name(&top, "big", RPCRDMA_NFS3_RMDIR);
	free(ents);
}

/* WRITE's arguments with the data as a plain opaque: not DDP-eligible. */
static int write_plain_enc(struct rpcrdma_xdr_stream *x, void *o)
{
	struct rpcrdma_nfs3_write_args *a = o;
	int rc = rpcrdma_xdr_encode_opaque(x, a->file.data, a->file.len);

	if (!rc)
		rc = rpcrdma_xdr_encode_u64(x, a->offset);
	if (!rc)
		rc = rpcrdma_xdr_encode_u32(x, a->count);
	if (!rc)
		rc = rpcrdma_xdr_encode_u32(x, a->stable);
	if (!rc)
		rc = rpcrdma_xdr_encode_opaque(x, a->data, a->len);
	return rc;
}

static void case_longcall(void)
{
	enum { N = 80000 }; /* past every inline size (68 KiB on ofi) */
	static uint8_t data[N], back[RPCRDMA_NFS3_MAXDATA];
	struct rpcrdma_nfs3_write_args a;
	struct rpcrdma_nfs3_write_res r;
	struct rpcrdma_xprt_stats before, after;
	struct rpcrdma_call call;
	struct rpcrdma_nfs3_fh fh;

	for (size_t i = 0; i < N; i++)
		data[i] = pat(77, i);
	create_file(&top, "longcall", &fh);
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.file = fh;
	a.count = a.len = N;
	a.stable = RPCRDMA_FILE_SYNC;
	a.data = data;
	memset(&call, 0, sizeof(call));
	call.proc = RPCRDMA_NFS3_WRITE;
	call.encode_args = write_plain_enc;
	call.args = &a;
	call.decode_res = rpcrdma_nfs3_decode_res(RPCRDMA_NFS3_WRITE);
	call.res = &r;
	call.max_reply = rpcrdma_nfs3_max_reply(RPCRDMA_NFS3_WRITE, 0);
	CHECK_RC(rpcrdma_client_stats(clnt, &before), 0);
	CHECK_RC(rpcrdma_client_call(clnt, &call), 0);
	CHECK_RC(r.status, RPCRDMA_NFS3_OK);
	CHECK_RC(r.count, N);
	CHECK_RC(rpcrdma_client_stats(clnt, &after), 0);
	/* Over RDMA the call went as a Long Call; TCP has none. */
	CHECK_RC(after.long_calls, before.long_calls + (tr == RPCRDMA_TRANSPORT_RDMA));
	read_check(&fh, data, N, back);
	remove_name(&top, "longcall", RPCRDMA_NFS3_REMOVE);
}

static void case_errors(void)
{
	struct rpcrdma_nfs3_diropargs la;
	struct rpcrdma_nfs3_lookup_res lr;
	struct rpcrdma_nfs3_read_args ra;
	struct rpcrdma_nfs3_read_res rr;
	struct rpcrdma_nfs3_attr_res ar;
	struct rpcrdma_nfs3_fh forged = top;
	static uint8_t buf[64];

	memset(&lr, 0, sizeof(lr));
	la.dir = top;
	name_set(&la.name, "no-such-name");
	CHECK_RC(rpcrdma_nfs3_call(clnt, RPCRDMA_NFS3_LOOKUP, &la, &lr), 0);
	CHECK_RC(lr.status, RPCRDMA_NFS3ERR_NOENT);
	memset(&ra, 0, sizeof(ra));
	memset(&rr, 0, sizeof(rr));
	ra.file = top;
	ra.count = sizeof(buf);
	rr.data = buf;
	rr.data_max = sizeof(buf);
	CHECK_RC(rpcrdma_nfs3_call(clnt, RPCRDMA_NFS3_READ, &ra, &rr), 0);
	CHECK(rr.status == RPCRDMA_NFS3ERR_ISDIR || rr.status == RPCRDMA_NFS3ERR_INVAL);
	/* A handle changed in its last byte is not one the server made. */
	forged.data[forged.len - 1] ^= 0x5a;
	memset(&ar, 0, sizeof(ar));
	CHECK_RC(rpcrdma_nfs3_call(clnt, RPCRDMA_NFS3_GETATTR, &forged, &ar), 0);
	CHECK(ar.status == RPCRDMA_NFS3ERR_BADHANDLE || ar.status == RPCRDMA_NFS3ERR_STALE);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
    {"files", case_files},       {"symlink", case_symlink}, {"bigdir", case_bigdir},
    {"longcall", case_longcall}, {"errors", case_errors},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void print_stats(void)
{
	struct rpcrdma_xprt_stats st;

	CHECK_RC(rpcrdma_client_stats(clnt, &st), 0);
	printf("# client: calls %llu, inline %llu, read-chunk %llu, long calls %llu, write-chunk "
	       "%llu, reply-chunk %llu, long replies %llu, RDMA read %llu B, RDMA write %llu B\n",
	       (unsigned long long)st.calls_sent, (unsigned long long)st.inline_msgs,
	       (unsigned long long)st.read_chunk_msgs, (unsigned long long)st.long_calls,
	       (unsigned long long)st.write_chunk_msgs, (unsigned long long)st.reply_chunk_msgs,
	       (unsigned long long)st.long_replies, (unsigned long long)st.rdma_read_bytes,
	       (unsigned long long)st.rdma_write_bytes);
}

/* Every connection carried calls; one line of counters each. */
static void check_nconnect(unsigned int n)
{
	struct rpcrdma_xprt_stats st;

	for (unsigned int i = 0; i < n; i++) {
		CHECK_RC(rpcrdma_client_conn_stats(clnt, i, &st), 0);
		printf("# connection %u: calls %llu, replies %llu, RDMA read %llu B, RDMA write "
		       "%llu B\n",
		       i, (unsigned long long)st.calls_sent, (unsigned long long)st.calls_received,
		       (unsigned long long)st.rdma_read_bytes, (unsigned long long)st.rdma_write_bytes);
		CHECK(st.calls_sent > 0);
	}
	CHECK_RC(rpcrdma_client_conn_stats(clnt, n, &st), -ENOENT);
	printf("ok - nconnect %u connections, each carried calls\n", n);
}

/* After a run offering Version Two: either the server spoke it on every
 * call, or it refused the first one once (ERR_VERS) and every call after
 * went in Version One. */
static void check_version_two(void)
{
	struct rpcrdma_xprt_stats st;

	CHECK_RC(rpcrdma_client_stats(clnt, &st), 0);
	printf("# version two: messages %llu of %llu, fall-backs %llu, RDMA_ERROR received "
	       "%llu\n",
	       (unsigned long long)st.vers_two_msgs, (unsigned long long)st.calls_sent,
	       (unsigned long long)st.vers_fallbacks, (unsigned long long)st.rdma_errors_received);
	if (st.vers_fallbacks) {
		CHECK_RC(st.vers_fallbacks, 1);
		CHECK_RC(st.vers_two_msgs, 1);
		CHECK_RC(st.rdma_errors_received, 1);
		printf("ok - v2-fallback\n");
	} else {
		CHECK_RC(st.vers_two_msgs, st.calls_sent);
		printf("ok - v2-spoken\n");
	}
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
	    {"server", required_argument, NULL, 's'},
	    {"export", required_argument, NULL, 'e'},
	    {"transport", required_argument, NULL, 't'},
	    {"provider", required_argument, NULL, 'p'},
	    {"port", required_argument, NULL, 'P'},
	    {"mount-port", required_argument, NULL, 'm'},
	    {"max-vers", required_argument, NULL, 'v'},
	    {"nconnect", required_argument, NULL, 'n'},
	    {"linger", required_argument, NULL, 'l'},
	    {NULL, 0, NULL, 0},
	};
	const char *server = NULL, *export = NULL, *provider = "ofi";
	const char *port = NULL, *mport = "20048";
	struct rpcrdma_client_opts co;
	struct rpcrdma_auth_sys sys;
	struct rpcrdma_opaque_auth cred;
	struct rpcrdma_loop *loop;
	struct rpcrdma_nfs3_mkdir_args ma;
	struct rpcrdma_nfs3_create_res mr;
	struct rpcrdma_nfs3_fh root;
	unsigned int nconnect = 0, linger = 0;
	char dirname[64];
	int c, rc;

	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 's':
			server = optarg;
			break;
		case 'e':
			export = optarg;
			break;
		case 't':
			tr = strcmp(optarg, "tcp") == 0 ? RPCRDMA_TRANSPORT_TCP
							: RPCRDMA_TRANSPORT_RDMA;
			break;
		case 'p':
			provider = optarg;
			break;
		case 'P':
			port = optarg;
			break;
		case 'm':
			mport = optarg;
			break;
		case 'v':
			max_vers = (uint32_t)strtoul(optarg, NULL, 10);
			if (max_vers < 1 || max_vers > 2) {
				fprintf(stderr, "--max-vers: 1 or 2\n");
				return 2;
			}
			break;
		case 'n':
			nconnect = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'l':
			linger = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		default:
			return 2;
		}
	}
	if (!server || !export) {
		fprintf(stderr,
			"usage: nfs3_interop --server HOST --export PATH [--transport rdma|tcp] "
			"[--provider NAME] [--port N] [--mount-port N] [--max-vers 1|2] "
			"[--nconnect N] [--linger SEC] [CASE...]\n");
		return 2;
	}
	if (!port)
		port = tr == RPCRDMA_TRANSPORT_RDMA ? "20049" : "2049";
	memset(&sys, 0, sizeof(sys));
	sys.stamp = (uint32_t)getpid();
	strcpy(sys.machinename, "librpcrdma-test");
	sys.uid = (uint32_t)geteuid();
	sys.gid = (uint32_t)getegid();
	CHECK_RC(rpcrdma_auth_sys_encode(&sys, &cred), 0);
	CHECK_RC(rpcrdma_loop_create(&loop), 0);
	rc = rpcrdma_mount3_mnt(loop, server, mport, export, &cred, &root);
	if (rc) {
		fprintf(stderr, "MNT %s:%s %s: %d (%s)\n", server, mport, export, rc,
			rc < 0 ? rpcrdma_strerror(rc) : "mountstat3");
		return 1;
	}
	rpcrdma_client_opts_default(&co);
	co.transport = tr;
	co.provider = provider;
	co.cred = &cred;
	co.timeout_ms = 60000;
	co.max_vers = max_vers;
	co.nconnect = nconnect;
	CHECK_RC(rpcrdma_client_create(loop, server, port, RPCRDMA_NFS_PROGRAM, RPCRDMA_NFS_V3, &co,
				       &clnt),
		 0);
	CHECK_RC(rpcrdma_client_connect(clnt), 0);

	/* A directory of our own for everything below. */
	snprintf(dirname, sizeof(dirname), "nfs3-interop-%d", (int)getpid());
	memset(&ma, 0, sizeof(ma));
	memset(&mr, 0, sizeof(mr));
	ma.where.dir = root;
	name_set(&ma.where.name, dirname);
	ma.attr.set_mode = true;
	ma.attr.mode = 0777;
	CHECK_RC(rpcrdma_nfs3_call(clnt, RPCRDMA_NFS3_MKDIR, &ma, &mr), 0);
	CHECK_RC(mr.status, RPCRDMA_NFS3_OK);
	CHECK(mr.has_obj);
	top = mr.obj;
	{
		struct rpcrdma_nfs3_fsinfo_res fi;

		memset(&fi, 0, sizeof(fi));
		CHECK_RC(rpcrdma_nfs3_call(clnt, RPCRDMA_NFS3_FSINFO, &root, &fi), 0);
		CHECK_RC(fi.status, RPCRDMA_NFS3_OK);
		if (fi.rtmax && fi.rtmax < rtmax)
			rtmax = fi.rtmax;
		if (fi.wtmax && fi.wtmax < wtmax)
			wtmax = fi.wtmax;
		printf("# server: rtmax %u, wtmax %u\n", fi.rtmax, fi.wtmax);
	}
	for (size_t i = 0; i < NCASES; i++) {
		bool run = optind == argc;

		for (int k = optind; k < argc; k++)
			run |= strcmp(argv[k], cases[i].name) == 0;
		if (!run)
			continue;
		cases[i].fn();
		printf("ok - %s\n", cases[i].name);
		fflush(stdout);
	}
	remove_name(&root, dirname, RPCRDMA_NFS3_RMDIR);
	print_stats();
	if (max_vers == 2 && tr == RPCRDMA_TRANSPORT_RDMA)
		check_version_two();
	if (nconnect > 1)
		check_nconnect(nconnect);
	if (linger) {
		printf("# lingering %u s with the connections open\n", linger);
		fflush(stdout);
		sleep(linger);
	}
	rpcrdma_client_destroy(clnt);
	CHECK_RC(rpcrdma_loop_destroy(loop), 0);
	return 0;
}
