/*
 * Fuzz the NFSv3 and MOUNT v3 decoders (rpcrdma/nfs3.h): the first byte
 * picks a procedure and a direction, the rest is its XDR.  Any bytes are
 * decoded or refused cleanly; what decodes re-encodes, and the encoding
 * decodes to the same values.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma/nfs3.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Big enough for any structure; READ and WRITE data and READDIR entries
 * get room of their own. */
union any {
	struct rpcrdma_nfs3_write_args w;
	struct rpcrdma_nfs3_read_res r;
	struct rpcrdma_nfs3_readdir_res d;
	struct rpcrdma_nfs3_create_res c;
	struct rpcrdma_nfs3_symlink_args s;
	struct rpcrdma_nfs3_rename_args rn;
	struct rpcrdma_nfs3_fsinfo_res fi;
	struct rpcrdma_nfs3_wcc_res wc;
	struct rpcrdma_mount3_mnt_res m;
	uint8_t bytes[8192];
};

static uint8_t bulk[2][1 << 16];
static struct rpcrdma_nfs3_entry ents[2][64];

static void give_room(uint32_t proc, bool res, union any *u, int k)
{
	if (!res && proc == RPCRDMA_NFS3_WRITE) {
		u->w.data = bulk[k];
		u->w.data_max = sizeof(bulk[k]);
	} else if (res && proc == RPCRDMA_NFS3_READ) {
		u->r.data = bulk[k];
		u->r.data_max = sizeof(bulk[k]);
	} else if (res && (proc == RPCRDMA_NFS3_READDIR || proc == RPCRDMA_NFS3_READDIRPLUS)) {
		u->d.entries = ents[k];
		u->d.max = 64;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static union any a, b;
	static uint8_t out[1 << 17];
	struct rpcrdma_xdr_stream x;
	rpcrdma_xdr_fn dec, enc;
	uint32_t proc;
	bool res, mount;
	size_t len;

	if (size < 1)
		return 0;
	proc = data[0] % RPCRDMA_NFS3_NPROCS;
	res = data[0] & 0x40;
	mount = data[0] & 0x80;
	if (mount) {
		dec = res ? rpcrdma_mount3_xdr_mnt_res_dec : rpcrdma_mount3_xdr_path_dec;
		enc = res ? rpcrdma_mount3_xdr_mnt_res_enc : rpcrdma_mount3_xdr_path_enc;
	} else {
		dec = res ? rpcrdma_nfs3_decode_res(proc) : rpcrdma_nfs3_decode_args(proc);
		enc = res ? rpcrdma_nfs3_encode_res(proc) : rpcrdma_nfs3_encode_args(proc);
	}
	memset(&a, 0, sizeof(a));
	if (!mount)
		give_room(proc, res, &a, 0);
	rpcrdma_xdr_init(&x, (void *)(uintptr_t)(data + 1), size - 1);
	if (dec(&x, &a))
		return 0;
	rpcrdma_xdr_init(&x, out, sizeof(out));
	if (enc(&x, &a))
		abort();
	len = rpcrdma_xdr_pos(&x);
	if (len > size - 1)
		abort(); /* never more than what was decoded */
	memset(&b, 0, sizeof(b));
	if (!mount)
		give_room(proc, res, &b, 1);
	rpcrdma_xdr_init(&x, out, len);
	if (dec(&x, &b) || rpcrdma_xdr_pos(&x) != len)
		abort();
	/* The same bytes again: a second encoding equals the first. */
	{
		static uint8_t out2[1 << 17];

		rpcrdma_xdr_init(&x, out2, sizeof(out2));
		if (enc(&x, &b) || rpcrdma_xdr_pos(&x) != len || memcmp(out, out2, len))
			abort();
	}
	return 0;
}
