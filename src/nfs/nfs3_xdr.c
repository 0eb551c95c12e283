/*
 * NFS version 3 and MOUNT version 3 XDR (RFC 1813).  Each type is written
 * once, as a codec that either encodes or decodes (struct nx), so that the
 * two directions cannot drift apart; the public functions are thin
 * wrappers.  Decoders bound every length by the structure's room and the
 * RFC's limits, and give up at the first fault.
 */
#include <errno.h>
#include <string.h>

#include "rpcrdma/nfs3.h"

#include "codec.h"

static int x_verf(struct nx *n, uint8_t *v)
{
	return n->enc ? rpcrdma_xdr_encode_fixed_opaque(n->x, v, RPCRDMA_NFS3_VERF_SIZE)
		      : rpcrdma_xdr_decode_fixed_opaque(n->x, v, RPCRDMA_NFS3_VERF_SIZE);
}

static int x_fh(struct nx *n, struct rpcrdma_nfs3_fh *fh)
{
	if (n->enc) {
		if (fh->len > RPCRDMA_NFS3_FHSIZE)
			return RPCRDMA_ERR_TOO_LONG;
		return rpcrdma_xdr_encode_opaque(n->x, fh->data, fh->len);
	}
	return rpcrdma_xdr_decode_opaque(n->x, fh->data, RPCRDMA_NFS3_FHSIZE, &fh->len);
}

static int x_name(struct nx *n, struct rpcrdma_nfs3_name *nm)
{
	return x_str(n, nm->s, &nm->len, RPCRDMA_NFS3_NAME_MAX);
}

static int x_path(struct nx *n, struct rpcrdma_nfs3_path *p)
{
	return x_str(n, p->s, &p->len, RPCRDMA_NFS3_PATH_MAX);
}

/*
 * A DDP-eligible path (READLINK's result, SYMLINK's target): decoded
 * through the DDP hook, which copies it out of a chunk when the peer sent
 * it in one; encoded inline, it is short.
 */
static int x_path_ddp(struct nx *n, struct rpcrdma_nfs3_path *p)
{
	if (n->enc)
		return x_path(n, p);
	TRY(rpcrdma_xdr_decode_ddp(n->x, p->s, RPCRDMA_NFS3_PATH_MAX, &p->len));
	if (memchr(p->s, 0, p->len))
		return RPCRDMA_ERR_BAD_VALUE;
	p->s[p->len] = '\0';
	return 0;
}

static int x_time(struct nx *n, struct rpcrdma_nfs3_time *t)
{
	TRY(x_u32(n, &t->seconds));
	return x_u32(n, &t->nseconds);
}

static int x_fattr(struct nx *n, struct rpcrdma_nfs3_fattr *a)
{
	TRY(x_u32(n, &a->type));
	TRY(x_u32(n, &a->mode));
	TRY(x_u32(n, &a->nlink));
	TRY(x_u32(n, &a->uid));
	TRY(x_u32(n, &a->gid));
	TRY(x_u64(n, &a->size));
	TRY(x_u64(n, &a->used));
	TRY(x_u32(n, &a->rdev_major));
	TRY(x_u32(n, &a->rdev_minor));
	TRY(x_u64(n, &a->fsid));
	TRY(x_u64(n, &a->fileid));
	TRY(x_time(n, &a->atime));
	TRY(x_time(n, &a->mtime));
	return x_time(n, &a->ctime);
}

static int x_post_attr(struct nx *n, struct rpcrdma_nfs3_post_attr *p)
{
	TRY(x_bool(n, &p->present));
	return p->present ? x_fattr(n, &p->attr) : 0;
}

static int x_wcc(struct nx *n, struct rpcrdma_nfs3_wcc *w)
{
	TRY(x_bool(n, &w->before_present));
	if (w->before_present) {
		TRY(x_u64(n, &w->before_size));
		TRY(x_time(n, &w->before_mtime));
		TRY(x_time(n, &w->before_ctime));
	}
	return x_post_attr(n, &w->after);
}

static int x_set_time(struct nx *n, uint32_t *how, struct rpcrdma_nfs3_time *t)
{
	TRY(x_u32(n, how));
	if (*how > RPCRDMA_SET_TO_CLIENT_TIME)
		return RPCRDMA_ERR_BAD_VALUE;
	return *how == RPCRDMA_SET_TO_CLIENT_TIME ? x_time(n, t) : 0;
}

static int x_sattr(struct nx *n, struct rpcrdma_nfs3_sattr *s)
{
	TRY(x_bool(n, &s->set_mode));
	if (s->set_mode)
		TRY(x_u32(n, &s->mode));
	TRY(x_bool(n, &s->set_uid));
	if (s->set_uid)
		TRY(x_u32(n, &s->uid));
	TRY(x_bool(n, &s->set_gid));
	if (s->set_gid)
		TRY(x_u32(n, &s->gid));
	TRY(x_bool(n, &s->set_size));
	if (s->set_size)
		TRY(x_u64(n, &s->size));
	TRY(x_set_time(n, &s->atime_how, &s->atime));
	return x_set_time(n, &s->mtime_how, &s->mtime);
}

static int x_diropargs(struct nx *n, struct rpcrdma_nfs3_diropargs *d)
{
	TRY(x_fh(n, &d->dir));
	return x_name(n, &d->name);
}

/* Arguments. */

static int a_fh(struct nx *n, void *o)
{
	return x_fh(n, o);
}

static int a_diropargs(struct nx *n, void *o)
{
	return x_diropargs(n, o);
}

static int a_setattr(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_setattr_args *a = o;

	TRY(x_fh(n, &a->obj));
	TRY(x_sattr(n, &a->attr));
	TRY(x_bool(n, &a->check));
	return a->check ? x_time(n, &a->guard_ctime) : 0;
}

static int a_access(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_access_args *a = o;

	TRY(x_fh(n, &a->obj));
	return x_u32(n, &a->access);
}

static int a_read(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_read_args *a = o;

	TRY(x_fh(n, &a->file));
	TRY(x_u64(n, &a->offset));
	return x_u32(n, &a->count);
}

/* RFC 1813: count is the number of bytes of data; knfsd's decoder
 * (nfs3svc_decode_writeargs) refuses a WRITE whose data is any other
 * length, more or less, and so do we (GARBAGE_ARGS at the server). */
static int write_count_ok(const struct rpcrdma_nfs3_write_args *a)
{
	return a->count == a->len ? 0 : RPCRDMA_ERR_BAD_VALUE;
}

static int a_write(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_write_args *a = o;

	TRY(x_fh(n, &a->file));
	TRY(x_u64(n, &a->offset));
	TRY(x_u32(n, &a->count));
	TRY(x_u32(n, &a->stable));
	if (a->stable > RPCRDMA_FILE_SYNC)
		return RPCRDMA_ERR_BAD_VALUE;
	if (n->enc)
		return rpcrdma_xdr_encode_ddp(n->x, a->data, a->len);
	if (!a->data && a->data_max) {
		const void *lent;
		int rc = rpcrdma_xdr_decode_ddp_ref(n->x, a->data_max, &lent, &a->len);

		if (!rc)
			a->data = (uint8_t *)(uintptr_t)lent;
		return rc ? rc : write_count_ok(a);
	}
	if (!a->data)
		a->data_max = 0;
	TRY(rpcrdma_xdr_decode_ddp(n->x, a->data, a->data_max, &a->len));
	return write_count_ok(a);
}

static int a_create(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_create_args *a = o;

	TRY(x_diropargs(n, &a->where));
	TRY(x_u32(n, &a->mode));
	switch (a->mode) {
	case RPCRDMA_UNCHECKED:
	case RPCRDMA_GUARDED:
		return x_sattr(n, &a->attr);
	case RPCRDMA_EXCLUSIVE:
		return x_verf(n, a->verf);
	default:
		return RPCRDMA_ERR_BAD_VALUE;
	}
}

static int a_mkdir(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_mkdir_args *a = o;

	TRY(x_diropargs(n, &a->where));
	return x_sattr(n, &a->attr);
}

static int a_symlink(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_symlink_args *a = o;

	TRY(x_diropargs(n, &a->where));
	TRY(x_sattr(n, &a->attr));
	return x_path_ddp(n, &a->target);
}

static int a_mknod(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_mknod_args *a = o;

	TRY(x_diropargs(n, &a->where));
	TRY(x_u32(n, &a->type));
	switch (a->type) {
	case RPCRDMA_NF3CHR:
	case RPCRDMA_NF3BLK:
		TRY(x_sattr(n, &a->attr));
		TRY(x_u32(n, &a->major));
		return x_u32(n, &a->minor);
	case RPCRDMA_NF3SOCK:
	case RPCRDMA_NF3FIFO:
		return x_sattr(n, &a->attr);
	case RPCRDMA_NF3REG:
	case RPCRDMA_NF3DIR:
	case RPCRDMA_NF3LNK:
		return 0; /* void arm: the server answers BADTYPE */
	default:
		return RPCRDMA_ERR_BAD_VALUE;
	}
}

static int a_rename(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_rename_args *a = o;

	TRY(x_diropargs(n, &a->from));
	return x_diropargs(n, &a->to);
}

static int a_link(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_link_args *a = o;

	TRY(x_fh(n, &a->file));
	return x_diropargs(n, &a->link);
}

static int a_readdir(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_readdir_args *a = o;

	TRY(x_fh(n, &a->dir));
	TRY(x_u64(n, &a->cookie));
	TRY(x_verf(n, a->verf));
	return x_u32(n, &a->count);
}

static int a_readdirplus(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_readdir_args *a = o;

	TRY(x_fh(n, &a->dir));
	TRY(x_u64(n, &a->cookie));
	TRY(x_verf(n, a->verf));
	TRY(x_u32(n, &a->dircount));
	return x_u32(n, &a->count);
}

static int a_commit(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_commit_args *a = o;

	TRY(x_fh(n, &a->file));
	TRY(x_u64(n, &a->offset));
	return x_u32(n, &a->count);
}

/* Results: the status, then what the RFC sends for it. */

static int r_attr(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_attr_res *r = o;

	TRY(x_u32(n, &r->status));
	return r->status == RPCRDMA_NFS3_OK ? x_fattr(n, &r->attr) : 0;
}

static int r_wcc(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_wcc_res *r = o;

	TRY(x_u32(n, &r->status));
	return x_wcc(n, &r->wcc);
}

static int r_lookup(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_lookup_res *r = o;

	TRY(x_u32(n, &r->status));
	if (r->status == RPCRDMA_NFS3_OK) {
		TRY(x_fh(n, &r->obj));
		TRY(x_post_attr(n, &r->obj_attr));
	}
	return x_post_attr(n, &r->dir_attr);
}

static int r_access(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_access_res *r = o;

	TRY(x_u32(n, &r->status));
	TRY(x_post_attr(n, &r->attr));
	return r->status == RPCRDMA_NFS3_OK ? x_u32(n, &r->access) : 0;
}

static int r_readlink(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_readlink_res *r = o;

	TRY(x_u32(n, &r->status));
	TRY(x_post_attr(n, &r->attr));
	return r->status == RPCRDMA_NFS3_OK ? x_path_ddp(n, &r->path) : 0;
}

static int r_read(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_read_res *r = o;

	TRY(x_u32(n, &r->status));
	TRY(x_post_attr(n, &r->attr));
	if (r->status != RPCRDMA_NFS3_OK)
		return 0;
	TRY(x_u32(n, &r->count));
	TRY(x_bool(n, &r->eof));
	if (n->enc) {
		if (r->count != r->len)
			return RPCRDMA_ERR_BAD_VALUE;
		return rpcrdma_xdr_encode_ddp(n->x, r->data, r->len);
	}
	if (!r->data)
		r->data_max = 0;
	TRY(rpcrdma_xdr_decode_ddp(n->x, r->data, r->data_max, &r->len));
	/* RFC 1813: count is the number of bytes of data returned. */
	return r->count == r->len ? 0 : RPCRDMA_ERR_BAD_VALUE;
}

static int r_write(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_write_res *r = o;

	TRY(x_u32(n, &r->status));
	TRY(x_wcc(n, &r->wcc));
	if (r->status != RPCRDMA_NFS3_OK)
		return 0;
	TRY(x_u32(n, &r->count));
	TRY(x_u32(n, &r->committed));
	return x_verf(n, r->verf);
}

static int r_create(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_create_res *r = o;

	TRY(x_u32(n, &r->status));
	if (r->status == RPCRDMA_NFS3_OK) {
		TRY(x_bool(n, &r->has_obj));
		if (r->has_obj)
			TRY(x_fh(n, &r->obj));
		TRY(x_post_attr(n, &r->obj_attr));
	}
	return x_wcc(n, &r->dir_wcc);
}

static int r_rename(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_rename_res *r = o;

	TRY(x_u32(n, &r->status));
	TRY(x_wcc(n, &r->from_wcc));
	return x_wcc(n, &r->to_wcc);
}

static int r_link(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_link_res *r = o;

	TRY(x_u32(n, &r->status));
	TRY(x_post_attr(n, &r->file_attr));
	return x_wcc(n, &r->dir_wcc);
}

static int x_entry(struct nx *n, struct rpcrdma_nfs3_entry *e, bool plus)
{
	TRY(x_u64(n, &e->fileid));
	TRY(x_name(n, &e->name));
	TRY(x_u64(n, &e->cookie));
	if (!plus)
		return 0;
	TRY(x_post_attr(n, &e->attr));
	TRY(x_bool(n, &e->has_fh));
	return e->has_fh ? x_fh(n, &e->fh) : 0;
}

static int r_readdir_common(struct nx *n, struct rpcrdma_nfs3_readdir_res *r)
{
	bool more;

	TRY(x_u32(n, &r->status));
	TRY(x_post_attr(n, &r->dir_attr));
	if (r->status != RPCRDMA_NFS3_OK)
		return 0;
	TRY(x_verf(n, r->verf));
	if (n->enc) {
		for (uint32_t i = 0; i < r->n; i++) {
			TRY(rpcrdma_xdr_encode_bool(n->x, true));
			TRY(x_entry(n, &r->entries[i], r->plus));
		}
		TRY(rpcrdma_xdr_encode_bool(n->x, false));
	} else {
		r->n = 0;
		for (;;) {
			TRY(rpcrdma_xdr_decode_bool(n->x, &more));
			if (!more)
				break;
			if (!r->entries || r->n >= r->max)
				return RPCRDMA_ERR_TOO_LONG;
			TRY(x_entry(n, &r->entries[r->n], r->plus));
			r->n++;
		}
	}
	return x_bool(n, &r->eof);
}

static int r_readdir(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_readdir_res *r = o;

	if (!n->enc)
		r->plus = false;
	return r_readdir_common(n, r);
}

static int r_readdirplus(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_readdir_res *r = o;

	if (!n->enc)
		r->plus = true;
	return r_readdir_common(n, r);
}

static int r_fsstat(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_fsstat_res *r = o;

	TRY(x_u32(n, &r->status));
	TRY(x_post_attr(n, &r->attr));
	if (r->status != RPCRDMA_NFS3_OK)
		return 0;
	TRY(x_u64(n, &r->tbytes));
	TRY(x_u64(n, &r->fbytes));
	TRY(x_u64(n, &r->abytes));
	TRY(x_u64(n, &r->tfiles));
	TRY(x_u64(n, &r->ffiles));
	TRY(x_u64(n, &r->afiles));
	return x_u32(n, &r->invarsec);
}

static int r_fsinfo(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_fsinfo_res *r = o;

	TRY(x_u32(n, &r->status));
	TRY(x_post_attr(n, &r->attr));
	if (r->status != RPCRDMA_NFS3_OK)
		return 0;
	TRY(x_u32(n, &r->rtmax));
	TRY(x_u32(n, &r->rtpref));
	TRY(x_u32(n, &r->rtmult));
	TRY(x_u32(n, &r->wtmax));
	TRY(x_u32(n, &r->wtpref));
	TRY(x_u32(n, &r->wtmult));
	TRY(x_u32(n, &r->dtpref));
	TRY(x_u64(n, &r->maxfilesize));
	TRY(x_time(n, &r->time_delta));
	return x_u32(n, &r->properties);
}

static int r_pathconf(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_pathconf_res *r = o;

	TRY(x_u32(n, &r->status));
	TRY(x_post_attr(n, &r->attr));
	if (r->status != RPCRDMA_NFS3_OK)
		return 0;
	TRY(x_u32(n, &r->linkmax));
	TRY(x_u32(n, &r->name_max));
	TRY(x_bool(n, &r->no_trunc));
	TRY(x_bool(n, &r->chown_restricted));
	TRY(x_bool(n, &r->case_insensitive));
	return x_bool(n, &r->case_preserving);
}

static int r_commit(struct nx *n, void *o)
{
	struct rpcrdma_nfs3_commit_res *r = o;

	TRY(x_u32(n, &r->status));
	TRY(x_wcc(n, &r->wcc));
	return r->status == RPCRDMA_NFS3_OK ? x_verf(n, r->verf) : 0;
}

/* The wrappers, one pair per codec. */

/* Public through rpcrdma_nfs3_encode_args() and the rest: a NULL stream
 * or object is the caller's mistake, refused before a field is touched. */
#define CODEC(fn)                                                                                  \
	static int fn##_enc(struct rpcrdma_xdr_stream *x, void *o)                                 \
	{                                                                                          \
		struct nx n = {x, true};                                                           \
		if (!x || !o)                                                                      \
			return -EINVAL;                                                            \
		return fn(&n, o);                                                                  \
	}                                                                                          \
	static int fn##_dec(struct rpcrdma_xdr_stream *x, void *o)                                 \
	{                                                                                          \
		struct nx n = {x, false};                                                          \
		if (!x || !o)                                                                      \
			return -EINVAL;                                                            \
		return fn(&n, o);                                                                  \
	}

/* NULL's arguments and results are void: no object to need. */
static int a_void_enc(struct rpcrdma_xdr_stream *x, void *o)
{
	(void)o;
	return x ? 0 : -EINVAL;
}

static int a_void_dec(struct rpcrdma_xdr_stream *x, void *o)
{
	(void)o;
	return x ? 0 : -EINVAL;
}

CODEC(a_fh)
CODEC(a_diropargs)
CODEC(a_setattr)
CODEC(a_access)
CODEC(a_read)
CODEC(a_write)
CODEC(a_create)
CODEC(a_mkdir)
CODEC(a_symlink)
CODEC(a_mknod)
CODEC(a_rename)
CODEC(a_link)
CODEC(a_readdir)
CODEC(a_readdirplus)
CODEC(a_commit)
CODEC(r_attr)
CODEC(r_wcc)
CODEC(r_lookup)
CODEC(r_access)
CODEC(r_readlink)
CODEC(r_read)
CODEC(r_write)
CODEC(r_create)
CODEC(r_rename)
CODEC(r_link)
CODEC(r_readdir)
CODEC(r_readdirplus)
CODEC(r_fsstat)
CODEC(r_fsinfo)
CODEC(r_pathconf)
CODEC(r_commit)

/* Largest encoded sizes of the pieces, for max_reply. */
#define FATTR_MAX 84u
#define POST_ATTR_MAX (4u + FATTR_MAX)
#define WCC_MAX (4u + 24u + POST_ATTR_MAX)
#define FH_MAX (4u + RPCRDMA_NFS3_FHSIZE)
/* xid, msg type, reply stat, verifier (flavor, length, 400 bytes), accept stat */
#define RPC_REPLY_HDR_MAX (4u * 5u + 400u)

struct proc_desc {
	const char *name;
	rpcrdma_xdr_fn args_enc, args_dec, res_enc, res_dec;
	size_t args_size, res_size;
	size_t res_max; /* without the RPC header; READ and READDIR add count */
};

#define PROC(nm, a, asz, r, rsz, rmax)                                                             \
	{                                                                                          \
		nm, a##_enc, a##_dec, r##_enc, r##_dec, asz, rsz, rmax                             \
	}

static const struct proc_desc procs[RPCRDMA_NFS3_NPROCS] = {
    [RPCRDMA_NFS3_NULL] = PROC("NULL", a_void, 0, a_void, 0, 0),
    [RPCRDMA_NFS3_GETATTR] = PROC("GETATTR", a_fh, sizeof(struct rpcrdma_nfs3_fh), r_attr,
				  sizeof(struct rpcrdma_nfs3_attr_res), 4 + FATTR_MAX),
    [RPCRDMA_NFS3_SETATTR] = PROC("SETATTR", a_setattr, sizeof(struct rpcrdma_nfs3_setattr_args),
				  r_wcc, sizeof(struct rpcrdma_nfs3_wcc_res), 4 + WCC_MAX),
    [RPCRDMA_NFS3_LOOKUP] =
	PROC("LOOKUP", a_diropargs, sizeof(struct rpcrdma_nfs3_diropargs), r_lookup,
	     sizeof(struct rpcrdma_nfs3_lookup_res), 4 + FH_MAX + 2 * POST_ATTR_MAX),
    [RPCRDMA_NFS3_ACCESS] =
	PROC("ACCESS", a_access, sizeof(struct rpcrdma_nfs3_access_args), r_access,
	     sizeof(struct rpcrdma_nfs3_access_res), 4 + POST_ATTR_MAX + 4),
    [RPCRDMA_NFS3_READLINK] = PROC("READLINK", a_fh, sizeof(struct rpcrdma_nfs3_fh), r_readlink,
				   sizeof(struct rpcrdma_nfs3_readlink_res),
				   4 + POST_ATTR_MAX + 4 + RPCRDMA_NFS3_PATH_MAX),
    [RPCRDMA_NFS3_READ] = PROC("READ", a_read, sizeof(struct rpcrdma_nfs3_read_args), r_read,
			       sizeof(struct rpcrdma_nfs3_read_res), 4 + POST_ATTR_MAX + 12 + 3),
    [RPCRDMA_NFS3_WRITE] = PROC("WRITE", a_write, sizeof(struct rpcrdma_nfs3_write_args), r_write,
				sizeof(struct rpcrdma_nfs3_write_res), 4 + WCC_MAX + 16),
    [RPCRDMA_NFS3_CREATE] =
	PROC("CREATE", a_create, sizeof(struct rpcrdma_nfs3_create_args), r_create,
	     sizeof(struct rpcrdma_nfs3_create_res), 4 + 4 + FH_MAX + POST_ATTR_MAX + WCC_MAX),
    [RPCRDMA_NFS3_MKDIR] =
	PROC("MKDIR", a_mkdir, sizeof(struct rpcrdma_nfs3_mkdir_args), r_create,
	     sizeof(struct rpcrdma_nfs3_create_res), 4 + 4 + FH_MAX + POST_ATTR_MAX + WCC_MAX),
    [RPCRDMA_NFS3_SYMLINK] =
	PROC("SYMLINK", a_symlink, sizeof(struct rpcrdma_nfs3_symlink_args), r_create,
	     sizeof(struct rpcrdma_nfs3_create_res), 4 + 4 + FH_MAX + POST_ATTR_MAX + WCC_MAX),
    [RPCRDMA_NFS3_MKNOD] =
	PROC("MKNOD", a_mknod, sizeof(struct rpcrdma_nfs3_mknod_args), r_create,
	     sizeof(struct rpcrdma_nfs3_create_res), 4 + 4 + FH_MAX + POST_ATTR_MAX + WCC_MAX),
    [RPCRDMA_NFS3_REMOVE] = PROC("REMOVE", a_diropargs, sizeof(struct rpcrdma_nfs3_diropargs),
				 r_wcc, sizeof(struct rpcrdma_nfs3_wcc_res), 4 + WCC_MAX),
    [RPCRDMA_NFS3_RMDIR] = PROC("RMDIR", a_diropargs, sizeof(struct rpcrdma_nfs3_diropargs), r_wcc,
				sizeof(struct rpcrdma_nfs3_wcc_res), 4 + WCC_MAX),
    [RPCRDMA_NFS3_RENAME] = PROC("RENAME", a_rename, sizeof(struct rpcrdma_nfs3_rename_args),
				 r_rename, sizeof(struct rpcrdma_nfs3_rename_res), 4 + 2 * WCC_MAX),
    [RPCRDMA_NFS3_LINK] = PROC("LINK", a_link, sizeof(struct rpcrdma_nfs3_link_args), r_link,
			       sizeof(struct rpcrdma_nfs3_link_res), 4 + POST_ATTR_MAX + WCC_MAX),
    [RPCRDMA_NFS3_READDIR] = PROC("READDIR", a_readdir, sizeof(struct rpcrdma_nfs3_readdir_args),
				  r_readdir, sizeof(struct rpcrdma_nfs3_readdir_res), 4),
    [RPCRDMA_NFS3_READDIRPLUS] =
	PROC("READDIRPLUS", a_readdirplus, sizeof(struct rpcrdma_nfs3_readdir_args), r_readdirplus,
	     sizeof(struct rpcrdma_nfs3_readdir_res), 4),
    [RPCRDMA_NFS3_FSSTAT] = PROC("FSSTAT", a_fh, sizeof(struct rpcrdma_nfs3_fh), r_fsstat,
				 sizeof(struct rpcrdma_nfs3_fsstat_res), 4 + POST_ATTR_MAX + 52),
    [RPCRDMA_NFS3_FSINFO] = PROC("FSINFO", a_fh, sizeof(struct rpcrdma_nfs3_fh), r_fsinfo,
				 sizeof(struct rpcrdma_nfs3_fsinfo_res), 4 + POST_ATTR_MAX + 48),
    [RPCRDMA_NFS3_PATHCONF] =
	PROC("PATHCONF", a_fh, sizeof(struct rpcrdma_nfs3_fh), r_pathconf,
	     sizeof(struct rpcrdma_nfs3_pathconf_res), 4 + POST_ATTR_MAX + 24),
    [RPCRDMA_NFS3_COMMIT] = PROC("COMMIT", a_commit, sizeof(struct rpcrdma_nfs3_commit_args),
				 r_commit, sizeof(struct rpcrdma_nfs3_commit_res), 4 + WCC_MAX + 8),
};

static const struct proc_desc *desc(uint32_t proc)
{
	return proc < RPCRDMA_NFS3_NPROCS ? &procs[proc] : NULL;
}

rpcrdma_xdr_fn rpcrdma_nfs3_encode_args(uint32_t proc)
{
	return desc(proc) ? desc(proc)->args_enc : NULL;
}

rpcrdma_xdr_fn rpcrdma_nfs3_decode_args(uint32_t proc)
{
	return desc(proc) ? desc(proc)->args_dec : NULL;
}

rpcrdma_xdr_fn rpcrdma_nfs3_encode_res(uint32_t proc)
{
	return desc(proc) ? desc(proc)->res_enc : NULL;
}

rpcrdma_xdr_fn rpcrdma_nfs3_decode_res(uint32_t proc)
{
	return desc(proc) ? desc(proc)->res_dec : NULL;
}

size_t rpcrdma_nfs3_args_size(uint32_t proc)
{
	return desc(proc) ? desc(proc)->args_size : 0;
}

size_t rpcrdma_nfs3_res_size(uint32_t proc)
{
	return desc(proc) ? desc(proc)->res_size : 0;
}

const char *rpcrdma_nfs3_proc_name(uint32_t proc)
{
	return desc(proc) ? desc(proc)->name : "?";
}

bool rpcrdma_nfs3_idempotent(uint32_t proc)
{
	switch (proc) {
	case RPCRDMA_NFS3_NULL:
	case RPCRDMA_NFS3_GETATTR:
	case RPCRDMA_NFS3_LOOKUP:
	case RPCRDMA_NFS3_ACCESS:
	case RPCRDMA_NFS3_READLINK:
	case RPCRDMA_NFS3_READ:
	case RPCRDMA_NFS3_READDIR:
	case RPCRDMA_NFS3_READDIRPLUS:
	case RPCRDMA_NFS3_FSSTAT:
	case RPCRDMA_NFS3_FSINFO:
	case RPCRDMA_NFS3_PATHCONF:
	case RPCRDMA_NFS3_COMMIT:
		return true;
	default:
		return false;
	}
}

bool rpcrdma_nfs3_result_ddp(uint32_t proc)
{
	return proc == RPCRDMA_NFS3_READ || proc == RPCRDMA_NFS3_READLINK;
}

bool rpcrdma_nfs3_args_ddp(uint32_t proc)
{
	return proc == RPCRDMA_NFS3_WRITE || proc == RPCRDMA_NFS3_SYMLINK;
}

size_t rpcrdma_nfs3_max_reply(uint32_t proc, uint32_t count)
{
	const struct proc_desc *d = desc(proc);
	size_t n;

	if (!d)
		return 0;
	n = RPC_REPLY_HDR_MAX + d->res_max;
	if (proc == RPCRDMA_NFS3_READ || proc == RPCRDMA_NFS3_READDIR ||
	    proc == RPCRDMA_NFS3_READDIRPLUS)
		n += count;
	return n;
}

/* MOUNT v3. */

int rpcrdma_mount3_xdr_path_enc(struct rpcrdma_xdr_stream *x, void *path)
{
	struct nx n = {x, true};

	if (!x || !path)
		return -EINVAL;
	return x_path(&n, path);
}

int rpcrdma_mount3_xdr_path_dec(struct rpcrdma_xdr_stream *x, void *path)
{
	struct nx n = {x, false};

	if (!x || !path)
		return -EINVAL;
	return x_path(&n, path);
}

/*
 * mountres3_ok's auth_flavors<> has no bound in RFC 1813, and an export
 * with more sec= flavors than the structure keeps must still mount: the
 * decoder keeps the first RPCRDMA_MOUNT3_MAX_FLAVORS and skips the rest,
 * whose count decode_array_len has checked against the reply's length.
 */
static int mnt_res(struct nx *n, struct rpcrdma_mount3_mnt_res *r)
{
	uint32_t count = r->nflavors;

	TRY(x_u32(n, &r->status));
	if (r->status != RPCRDMA_NFS3_OK)
		return 0;
	TRY(x_fh(n, &r->fh));
	if (n->enc) {
		if (count > RPCRDMA_MOUNT3_MAX_FLAVORS)
			return RPCRDMA_ERR_TOO_LONG;
		TRY(rpcrdma_xdr_encode_array_len(n->x, count));
	} else {
		TRY(rpcrdma_xdr_decode_array_len(n->x, UINT32_MAX, 4, &count));
		r->nflavors =
		    count < RPCRDMA_MOUNT3_MAX_FLAVORS ? count : RPCRDMA_MOUNT3_MAX_FLAVORS;
	}
	for (uint32_t i = 0; i < r->nflavors; i++)
		TRY(x_u32(n, &r->flavors[i]));
	if (!n->enc && count > r->nflavors)
		return rpcrdma_xdr_skip(n->x, (size_t)(count - r->nflavors) * 4);
	return 0;
}

int rpcrdma_mount3_xdr_mnt_res_enc(struct rpcrdma_xdr_stream *x, void *res)
{
	struct nx n = {x, true};

	if (!x || !res)
		return -EINVAL;
	return mnt_res(&n, res);
}

int rpcrdma_mount3_xdr_mnt_res_dec(struct rpcrdma_xdr_stream *x, void *res)
{
	struct nx n = {x, false};

	if (!x || !res)
		return -EINVAL;
	return mnt_res(&n, res);
}

/* exports: a list of (directory, groups); we export to everyone: no groups. */
int rpcrdma_mount3_xdr_export_res_enc(struct rpcrdma_xdr_stream *x, void *res)
{
	struct rpcrdma_mount3_export_res *r = res;
	struct nx n = {x, true};

	if (!x || !r)
		return -EINVAL;
	for (uint32_t i = 0; i < r->n && i < 1; i++) {
		TRY(rpcrdma_xdr_encode_bool(x, true));
		TRY(x_path(&n, &r->dir));
		TRY(rpcrdma_xdr_encode_bool(x, false)); /* no groups */
	}
	return rpcrdma_xdr_encode_bool(x, false);
}

int rpcrdma_mount3_xdr_empty_list_enc(struct rpcrdma_xdr_stream *x, void *res)
{
	(void)res;
	return rpcrdma_xdr_encode_bool(x, false);
}
