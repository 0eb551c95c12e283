/*
 * The key-value store's procedures, written as for any rpcgen server
 * (kv_*_1_svc of the generated kv.h), and its Upper-Layer Binding for
 * RPC-over-RDMA: which items may move by direct data placement.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kv.h"
#include "kv_binding.h"

#define KV_SLOTS 1024

static struct {
	char *key;
	char *val;
	u_int len;
} slots[KV_SLOTS];
static pthread_mutex_t kv_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * PUT's value is the second non-empty opaque of its arguments (after the
 * key); GET's value the first of its results.  Both sides use this table.
 * GET only reads, so its replies need no place in the duplicate request
 * cache (a copy of each 1 MiB value otherwise).
 */
static const struct rpcrdma_tirpc_proc kv_ddp[] = {
	{KV_PUT, 1u << 1, 0, 0, false},
	{KV_GET, 0, 1u << 0, KV_MAXVAL, true},
};
const struct rpcrdma_tirpc_binding kv_binding = {kv_ddp, 2};

static int find(const char *key)
{
	for (int i = 0; i < KV_SLOTS; i++)
		if (slots[i].key && strcmp(slots[i].key, key) == 0)
			return i;
	return -1;
}

void *kv_null_1_svc(void *argp, struct svc_req *rq)
{
	static char nothing;

	(void)argp;
	(void)rq;
	return &nothing;
}

int *kv_put_1_svc(kv_put_args *a, struct svc_req *rq)
{
	static int res;
	char *copy;
	int i;

	(void)rq;
	copy = malloc(a->val.kv_val_len ? a->val.kv_val_len : 1);
	if (!copy) {
		res = ENOMEM;
		return &res;
	}
	memcpy(copy, a->val.kv_val_val, a->val.kv_val_len);
	pthread_mutex_lock(&kv_lock);
	i = find(a->key);
	if (i < 0)
		for (i = 0; i < KV_SLOTS && slots[i].key; i++)
			;
	if (i == KV_SLOTS) {
		pthread_mutex_unlock(&kv_lock);
		free(copy);
		res = ENOSPC;
		return &res;
	}
	if (!slots[i].key)
		slots[i].key = strdup(a->key);
	free(slots[i].val);
	slots[i].val = copy;
	slots[i].len = a->val.kv_val_len;
	pthread_mutex_unlock(&kv_lock);
	res = slots[i].key ? 0 : ENOMEM;
	return &res;
}

/* The value is not copied: svc_sendreply() encodes it before we return. */
kv_get_res *kv_get_1_svc(kv_key *k, struct svc_req *rq)
{
	static kv_get_res res;
	int i;

	(void)rq;
	memset(&res, 0, sizeof(res));
	pthread_mutex_lock(&kv_lock);
	i = find(*k);
	if (i < 0) {
		res.status = ENOENT;
	} else {
		res.val.kv_val_val = slots[i].val;
		res.val.kv_val_len = slots[i].len;
	}
	pthread_mutex_unlock(&kv_lock);
	return &res;
}

int *kv_del_1_svc(kv_key *k, struct svc_req *rq)
{
	static int res;
	int i;

	(void)rq;
	pthread_mutex_lock(&kv_lock);
	i = find(*k);
	if (i < 0) {
		res = ENOENT;
	} else {
		free(slots[i].key);
		free(slots[i].val);
		memset(&slots[i], 0, sizeof(slots[i]));
		res = 0;
	}
	pthread_mutex_unlock(&kv_lock);
	return &res;
}

int kv_prog_1_freeresult(SVCXPRT *xp, xdrproc_t proc, caddr_t res)
{
	(void)xp;
	xdr_free(proc, res);
	return 1;
}
