/*
 * Fuzz the NFS decoders (rpcrdma/nfs3.h, rpcrdma/nfs4.h) over scatter
 * lists.  A transport hands the upper layer its message as a list of
 * buffers cut wherever the receive buffers and chunks ended, so every item
 * may straddle two of them; the other NFS targets decode one buffer and
 * never reach the stream's gather paths with these decoders.  Here the
 * same bytes are decoded from one buffer and from a list cut where the
 * input says (empty elements included), and the two must agree: the same
 * return, the same position, and, when decoded, the same values (compared
 * by encoding both; decoded structures hold pointers of their own).
 *
 * Input: a byte picking the decoder, a byte picking the NFSv3 procedure, a
 * byte giving the number of cuts (0-7), one byte per cut giving the length
 * of the element before it (0-15), then the message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "rpcrdma/nfs3.h"
#include "rpcrdma/nfs4.h"

#include "nfs4_requests.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum decoder {
	DEC_NFS3_ARGS,
	DEC_NFS3_RES,
	DEC_MOUNT3_MNT_RES,
	DEC_NFS40_RES, /* against fuzz_nfs40_request() */
	DEC_NFS41_RES, /* against fuzz_nfs41_request() */
	DEC_NFS4_ARGS,
	DEC_CB_ARGS,
	DEC_CB_RES, /* against fuzz_cb_request() */
	DEC_COUNT,
};

#define MAX_CUTS 8u
#define MAX_ELEMENT 16u
#define MAX_ENTRIES 64u

union any {
	struct rpcrdma_nfs3_write_args w;
	struct rpcrdma_nfs3_read_res r;
	struct rpcrdma_nfs3_readdir_res d;
	struct rpcrdma_mount3_mnt_res m;
	struct rpcrdma_nfs4_compound c;
	struct rpcrdma_nfs41_cb_compound cb;
	uint8_t bytes[8192]; /* room for any NFSv3 structure, as in nfs3_fuzz.c */
};

/* Room of their own for each of the two decodings: [0] one buffer, [1]
 * the scatter list. */
static uint8_t bulk[2][3][FUZZ_BULK];
static struct rpcrdma_nfs3_entry entries[2][MAX_ENTRIES];

/* What a caller sets before decoding: where bulk data and entries go, and
 * for results the request they answer. */
static void prepare(enum decoder dec, uint32_t proc, union any *u, int k)
{
	memset(u, 0, sizeof(*u));
	switch (dec) {
	case DEC_NFS3_ARGS:
		if (proc == RPCRDMA_NFS3_WRITE) {
			/* a buffer to copy into: without one WRITE lends the
			 * stream's bytes, which a scatter list may not hold in
			 * one piece (-ERANGE by contract) */
			u->w.data = bulk[k][0];
			u->w.data_max = FUZZ_BULK;
		}
		break;
	case DEC_NFS3_RES:
		if (proc == RPCRDMA_NFS3_READ) {
			u->r.data = bulk[k][0];
			u->r.data_max = FUZZ_BULK;
		} else if (proc == RPCRDMA_NFS3_READDIR || proc == RPCRDMA_NFS3_READDIRPLUS) {
			u->d.entries = entries[k];
			u->d.max = MAX_ENTRIES;
		}
		break;
	case DEC_NFS40_RES:
		fuzz_nfs40_request(&u->c, bulk[k]);
		break;
	case DEC_NFS41_RES:
		fuzz_nfs41_request(&u->c, bulk[k][0]);
		break;
	case DEC_NFS4_ARGS:
		rpcrdma_nfs4_compound_init(&u->c);
		break;
	case DEC_CB_RES:
		fuzz_cb_request(&u->cb);
		break;
	default:
		break;
	}
}

static int code(enum decoder dec, uint32_t proc, bool enc, struct rpcrdma_xdr_stream *x,
		union any *u)
{
	switch (dec) {
	case DEC_NFS3_ARGS:
		return enc ? rpcrdma_nfs3_encode_args(proc)(x, u)
			   : rpcrdma_nfs3_decode_args(proc)(x, u);
	case DEC_NFS3_RES:
		return enc ? rpcrdma_nfs3_encode_res(proc)(x, u)
			   : rpcrdma_nfs3_decode_res(proc)(x, u);
	case DEC_MOUNT3_MNT_RES:
		return enc ? rpcrdma_mount3_xdr_mnt_res_enc(x, u)
			   : rpcrdma_mount3_xdr_mnt_res_dec(x, u);
	case DEC_NFS40_RES:
	case DEC_NFS41_RES:
		return enc ? rpcrdma_nfs4_compound_res_enc(x, u)
			   : rpcrdma_nfs4_compound_res_dec(x, u);
	case DEC_NFS4_ARGS:
		return enc ? rpcrdma_nfs4_compound_args_enc(x, u)
			   : rpcrdma_nfs4_compound_args_dec(x, u);
	case DEC_CB_ARGS:
		return enc ? rpcrdma_nfs41_cb_args_enc(x, u) : rpcrdma_nfs41_cb_args_dec(x, u);
	default:
		return enc ? rpcrdma_nfs41_cb_res_enc(x, u) : rpcrdma_nfs41_cb_res_dec(x, u);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static union any whole, split;
	static uint8_t out[2][1 << 16];
	struct iovec iov[MAX_CUTS + 1];
	struct rpcrdma_xdr_stream x;
	const uint8_t *msg;
	size_t len, off = 0, pos_whole, enc_len[2];
	unsigned int ncuts, n = 0;
	enum decoder dec;
	uint32_t proc;
	int rc_whole, rc_split, rc_enc[2];

	if (size < 3)
		return 0;
	dec = (enum decoder)(data[0] % DEC_COUNT);
	proc = data[1] % RPCRDMA_NFS3_NPROCS;
	ncuts = data[2] % MAX_CUTS;
	if (size - 3 < ncuts)
		return 0;
	msg = data + 3 + ncuts;
	len = size - 3 - ncuts;
	for (unsigned int i = 0; i < ncuts; i++) {
		size_t piece = data[3 + i] % MAX_ELEMENT;

		if (piece > len - off)
			piece = len - off;
		iov[n++] = (struct iovec){(void *)(uintptr_t)(msg + off), piece};
		off += piece;
	}
	iov[n++] = (struct iovec){(void *)(uintptr_t)(msg + off), len - off};

	prepare(dec, proc, &whole, 0);
	rpcrdma_xdr_init_const(&x, msg, len);
	rc_whole = code(dec, proc, false, &x, &whole);
	pos_whole = rpcrdma_xdr_pos(&x);

	prepare(dec, proc, &split, 1);
	if (rpcrdma_xdr_init_iov(&x, iov, n) != 0)
		abort();
	rc_split = code(dec, proc, false, &x, &split);
	if (rc_split != rc_whole || rpcrdma_xdr_pos(&x) != pos_whole)
		abort();
	if (rc_whole)
		return 0;

	/* The same values: the two encodings agree to the byte. */
	for (int k = 0; k < 2; k++) {
		rpcrdma_xdr_init(&x, out[k], sizeof(out[k]));
		rc_enc[k] = code(dec, proc, true, &x, k ? &split : &whole);
		enc_len[k] = rpcrdma_xdr_pos(&x);
	}
	if (rc_enc[0] != rc_enc[1] || enc_len[0] != enc_len[1] ||
	    memcmp(out[0], out[1], enc_len[0]) != 0)
		abort();
	return 0;
}
