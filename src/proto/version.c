/*
 * Version negotiation decisions (version.h) and the process-wide memory of
 * Version One peers.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>

#include "proto/version.h"

void rpcrdma__vneg_start(struct rpcrdma__vneg *v, uint32_t max_vers, bool peer_is_v1)
{
	if (max_vers < 1)
		max_vers = 1;
	if (max_vers > 2)
		max_vers = 2;
	v->max_vers = max_vers;
	v->vers = (max_vers == 2 && !peer_is_v1) ? 2 : 1;
	v->probing = v->vers == 2;
	v->probe_sent = false;
}

uint32_t rpcrdma__vneg_send_max(const struct rpcrdma__vneg *v, uint32_t negotiated)
{
	if (v->probing && negotiated > RPCRDMA__V1_INLINE_DEFAULT)
		return RPCRDMA__V1_INLINE_DEFAULT;
	return negotiated;
}

bool rpcrdma__vneg_may_send(const struct rpcrdma__vneg *v, uint32_t in_flight)
{
	return !v->probing || (!v->probe_sent && in_flight == 0);
}

void rpcrdma__vneg_sent(struct rpcrdma__vneg *v)
{
	if (v->probing)
		v->probe_sent = true;
}

enum rpcrdma__vneg_verdict rpcrdma__vneg_on_reply(struct rpcrdma__vneg *v, uint32_t reply_vers)
{
	/* 5.3 / RFC 8166 4.2.4: replies come in the version of the call. */
	if (reply_vers != v->vers)
		return RPCRDMA__VNEG_MISMATCH;
	if (v->probing) {
		v->probing = false;
		return RPCRDMA__VNEG_SETTLED;
	}
	return RPCRDMA__VNEG_OK;
}

enum rpcrdma__vneg_verdict rpcrdma__vneg_on_err_vers(struct rpcrdma__vneg *v, uint32_t low,
						     uint32_t high, bool *peer_is_v1)
{
	uint32_t pick;

	*peer_is_v1 = false;
	if (!v->probing)
		return RPCRDMA__VNEG_UNSUPPORTED;
	/* The highest version in both [low, high] and [1, vers - 1]: the peer
	 * refused the one we sent, whatever its range claims. */
	pick = high < v->vers - 1 ? high : v->vers - 1;
	if (low > high || pick < 1 || pick < low) {
		/* The probe was answered: the connection that now ends was
		 * not lost with it, and must not mark the peer Version One. */
		v->probing = false;
		return RPCRDMA__VNEG_UNSUPPORTED;
	}
	v->vers = pick;
	v->probing = false;
	*peer_is_v1 = pick == 1;
	return RPCRDMA__VNEG_RETRY;
}

bool rpcrdma__vneg_on_lost(const struct rpcrdma__vneg *v)
{
	return v->probing && v->probe_sent;
}

uint32_t rpcrdma__vneg_default_inline(uint32_t vers)
{
	return vers >= 2 ? RPCRDMA__V2_INLINE_DEFAULT : RPCRDMA__V1_INLINE_DEFAULT;
}

/* The memory of Version One peers. */

struct vmemo_key {
	sa_family_t family;
	uint16_t port; /* network order, as in the sockaddr */
	uint8_t addr[16];
};

static struct {
	pthread_mutex_t lock;
	struct vmemo_key keys[RPCRDMA__VMEMO_ENTRIES];
	uint64_t stamp[RPCRDMA__VMEMO_ENTRIES]; /* 0: free slot */
	uint64_t clock;
} vmemo = {.lock = PTHREAD_MUTEX_INITIALIZER};

static bool vmemo_key(const struct sockaddr *addr, socklen_t len, struct vmemo_key *k)
{
	memset(k, 0, sizeof(*k));
	if (!addr)
		return false;
	if (addr->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;

		k->family = AF_INET;
		k->port = sin->sin_port;
		memcpy(k->addr, &sin->sin_addr, sizeof(sin->sin_addr));
		return true;
	}
	if (addr->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)addr;

		k->family = AF_INET6;
		k->port = sin6->sin6_port;
		memcpy(k->addr, &sin6->sin6_addr, sizeof(sin6->sin6_addr));
		return true;
	}
	return false;
}

/* The slot holding @k, or -1.  Called with the lock held. */
static int vmemo_find(const struct vmemo_key *k)
{
	for (unsigned int i = 0; i < RPCRDMA__VMEMO_ENTRIES; i++) {
		if (vmemo.stamp[i] && !memcmp(&vmemo.keys[i], k, sizeof(*k)))
			return (int)i;
	}
	return -1;
}

void rpcrdma__vmemo_mark_v1(const struct sockaddr *addr, socklen_t len)
{
	struct vmemo_key k;
	unsigned int victim = 0;
	int slot;

	if (!vmemo_key(addr, len, &k))
		return;
	pthread_mutex_lock(&vmemo.lock);
	slot = vmemo_find(&k);
	if (slot < 0) {
		for (unsigned int i = 1; i < RPCRDMA__VMEMO_ENTRIES; i++) {
			if (vmemo.stamp[i] < vmemo.stamp[victim])
				victim = i;
		}
		slot = (int)victim;
		vmemo.keys[slot] = k;
	}
	vmemo.stamp[slot] = ++vmemo.clock;
	pthread_mutex_unlock(&vmemo.lock);
}

bool rpcrdma__vmemo_is_v1(const struct sockaddr *addr, socklen_t len)
{
	struct vmemo_key k;
	bool found;

	if (!vmemo_key(addr, len, &k))
		return false;
	pthread_mutex_lock(&vmemo.lock);
	found = vmemo_find(&k) >= 0;
	pthread_mutex_unlock(&vmemo.lock);
	return found;
}

void rpcrdma__vmemo_forget(const struct sockaddr *addr, socklen_t len)
{
	struct vmemo_key k;
	int slot;

	pthread_mutex_lock(&vmemo.lock);
	if (!addr) {
		memset(vmemo.stamp, 0, sizeof(vmemo.stamp));
	} else if (vmemo_key(addr, len, &k) && (slot = vmemo_find(&k)) >= 0) {
		vmemo.stamp[slot] = 0;
	}
	pthread_mutex_unlock(&vmemo.lock);
}
