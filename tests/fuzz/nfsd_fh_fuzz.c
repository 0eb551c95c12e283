/*
 * Fuzz rpcrdma-nfsd's file handles (tools/nfsd/export.c): the bytes a
 * client sends as a handle, checked with a fixed key before anything is
 * opened.  A handle the server did not sign must never unpack to a kernel
 * handle it would then open.
 *
 * Input: a byte choosing what the rest is.
 *   even  a handle as a client sends it: a length byte (bit 1 of the
 *         first byte adds 256, past any handle), then its bytes.  If it
 *         unpacks (only a handle signed with the key can), packing what
 *         came out must give back exactly those bytes.
 *   odd   a kernel handle: a 4-byte type, then its bytes.  Packed for the
 *         export, it must unpack to the same type and bytes (or be
 *         refused as too long, past NFSD_FH_KERNEL_MAX); it must not
 *         unpack for another export sharing the key (another device or
 *         root inode) nor under another key; and no change the next
 *         input bytes pick (a flipped bit anywhere in it, a length one or
 *         a few bytes off) may unpack.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "export.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct nfsd_export export_of(dev_t dev, ino_t root_ino, uint8_t key_salt)
{
	struct nfsd_export ex;

	memset(&ex, 0, sizeof(ex));
	ex.root_fd = ex.mount_fd = -1;
	ex.dev = dev;
	ex.root_ino = root_ino;
	for (unsigned int i = 0; i < sizeof(ex.key); i++)
		ex.key[i] = (uint8_t)(0x5a ^ (i * 17u) ^ key_salt);
	return ex;
}

static bool same_kernel_fh(const struct nfsd_kernel_fh *a, const struct nfsd_kernel_fh *b)
{
	return a->type == b->type && a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

static void check_client_handle(const struct nfsd_export *ex, const uint8_t *data, size_t size,
				bool long_len)
{
	struct rpcrdma_nfs3_fh fh, again;
	struct nfsd_kernel_fh kfh;

	if (size < 1)
		return;
	memset(&fh, 0, sizeof(fh));
	fh.len = data[0] + (long_len ? 256u : 0u);
	memcpy(fh.data, data + 1, size - 1 < sizeof(fh.data) ? size - 1 : sizeof(fh.data));
	if (!nfsd_fh_unpack(ex, &fh, &kfh))
		return;
	if (kfh.len > NFSD_FH_KERNEL_MAX || nfsd_fh_pack(ex, &kfh, &again) != RPCRDMA_NFS3_OK ||
	    again.len != fh.len || memcmp(again.data, fh.data, fh.len) != 0)
		abort();
}

static void check_signed_handle(const struct nfsd_export *ex, const uint8_t *data, size_t size)
{
	const struct nfsd_export other_dev = export_of(ex->dev + 1, ex->root_ino, 0);
	const struct nfsd_export other_root = export_of(ex->dev, ex->root_ino + 1, 0);
	const struct nfsd_export other_key = export_of(ex->dev, ex->root_ino, 1);
	struct nfsd_kernel_fh kfh, out;
	struct rpcrdma_nfs3_fh fh, bad;
	size_t n;

	if (size < 4)
		return;
	memset(&kfh, 0, sizeof(kfh));
	kfh.type = (int)((uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
			 (uint32_t)data[3] << 24);
	data += 4;
	size -= 4;
	/* The bytes after the kernel handle pick the changes. */
	n = size & 0x3f;
	if (n > size)
		n = size;
	kfh.len = (uint32_t)n;
	if (n > NFSD_FH_KERNEL_MAX) {
		if (nfsd_fh_pack(ex, &kfh, &fh) != RPCRDMA_NFS3ERR_NOTSUPP)
			abort();
		return;
	}
	memcpy(kfh.bytes, data, n);
	data += n;
	size -= n;
	if (nfsd_fh_pack(ex, &kfh, &fh) != RPCRDMA_NFS3_OK || fh.len > RPCRDMA_NFS3_FHSIZE)
		abort();
	memset(&out, 0, sizeof(out));
	if (!nfsd_fh_unpack(ex, &fh, &out) || !same_kernel_fh(&kfh, &out))
		abort();
	if (nfsd_fh_unpack(&other_dev, &fh, &out) || nfsd_fh_unpack(&other_root, &fh, &out) ||
	    nfsd_fh_unpack(&other_key, &fh, &out))
		abort();
	for (size_t i = 0; i + 1 < size; i += 2) {
		bad = fh;
		if (data[i] & 0x80) {
			/* A length off by 1 to 8 either way, bytes past it zero. */
			uint32_t delta = 1u + (data[i + 1] & 7u);

			bad.len = data[i] & 1 ? fh.len + delta : fh.len - delta;
			if (bad.len > fh.len && bad.len <= RPCRDMA_NFS3_FHSIZE)
				memset(bad.data + fh.len, 0, bad.len - fh.len);
		} else {
			size_t at = data[i + 1] % fh.len;

			bad.data[at] ^= (uint8_t)(1u << (data[i] & 7u));
		}
		if (nfsd_fh_unpack(ex, &bad, &out))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct nfsd_export ex = export_of(makedev(8, 1), 2, 0);

	if (size < 1)
		return 0;
	if (data[0] & 1)
		check_signed_handle(&ex, data + 1, size - 1);
	else
		check_client_handle(&ex, data + 1, size - 1, (data[0] & 2) != 0);
	return 0;
}
