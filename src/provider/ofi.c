/*
 * The "ofi" provider: the RDMA provider interface (provider.h) on libfabric's
 * tcp provider, FI_EP_MSG.  It owns one fabric, domain, event queue and
 * completion queue per instance, the endpoints of its connections, the
 * libfabric registrations behind local buffers and per-RPC grants, and the
 * choice of memory keys.  The facts it relies on were measured on libfabric
 * 1.17 (OFI_API_VERSION) and are stated where the code relies on them.
 *
 * Normal operation.  Each posted operation takes a slot (struct ofi_op) from
 * its connection; the slot is libfabric's op_context, and a Read or Write
 * that needs more than one libfabric call (rma_iov_limit) counts its pieces
 * down in the slot.  Completions and connection events are converted into
 * provider events and queued (struct rpcrdma_prov_evq), which poll()
 * drains; libfabric's EQ and CQ are read only when that queue is empty,
 * and no more often than ofi_fill needs (each read is a system call).
 * Sends, Reads and Writes wait for ESTABLISHED on both sides (see
 * can_send for what went wrong on tcp otherwise).  Completions of a
 * connection that has not yet been reported ESTABLISHED are parked on it
 * and released right after that event, because libfabric may hand us data
 * from the peer in the same progress call that completes the handshake.
 *
 * Recovery.  When a connection ends (FI_SHUTDOWN, a connection error, a
 * local disconnect or destroy) its endpoint is closed at once: libfabric
 * then reports every operation still queued on it as FI_ECANCELED and drops
 * its pending EQ events.  We drain the CQ right there, so all of the
 * connection's completions precede its terminal event and nothing in
 * libfabric refers to its slots any more; any slot still busy (an operation
 * libfabric did not report) is flushed by hand.
 *
 * Memory protection.  Remote access is one libfabric registration per
 * grant, with a key drawn from getrandom(); closing that registration is
 * the revocation.  The tcp provider shares one key space per domain, so a
 * handle is not tied to a connection: unpredictability is the protection,
 * and recently revoked keys stay in quarantine so a peer that still holds
 * one cannot land in the next RPC's memory.  Protection errors kill the
 * connection on tcp (both sides see FI_SHUTDOWN).  Send With Invalidate does
 * not exist on tcp.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "common/list.h"
#include "provider/provider.h"

/* The oldest libfabric whose tcp behaviour this provider was measured on. */
#define OFI_API_VERSION FI_VERSION(1, 17)
/* Local scatter entries we keep per slot (tcp offers 4). */
#define OFI_SGE_MAX 8u
/* Queue size we ask for first; tcp 1.17 accepts at most 1024. */
#define OFI_QUEUE_WANT 1024u
#define OFI_DEF_SEND_DEPTH 64u
#define OFI_DEF_RECV_DEPTH 64u
#define OFI_DEF_READ_DEPTH 16u
#define OFI_CQ_BATCH 16
#define OFI_CQ_SIZE 1024u
#define OFI_EQ_SIZE 256u
/* tcp carries up to 256 bytes of connection data; we read what comes. */
#define OFI_CM_DATA_MAX 256u
/* Registrations tried before giving up on finding a free key. */
#define OFI_KEY_TRIES 64

/* The first member of objects whose address is a libfabric fid context, so
 * an EQ entry tells which kind of object it concerns. */
enum ofi_kind {
	OFI_KIND_CONN = 0x636f6e6e,
	OFI_KIND_LISTENER = 0x6c697374,
};

struct ofi_prov {
	struct rpcrdma_provider base;
	struct fi_info *info;    /* what fi_getinfo chose: tcp, FI_EP_MSG */
	struct fi_info *ep_info; /* template for active endpoints */
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_cq *cq;
	int epfd;
	bool virt_addr;     /* FI_MR_VIRT_ADDR: offsets are virtual addresses */
	bool prov_key;      /* FI_MR_PROV_KEY: libfabric picks keys */
	unsigned int split; /* libfabric calls per Read/Write at most */
	size_t rma_iov_limit;
	int failed; /* 0, or why the instance is dead */
	bool failed_reported;
	struct rpcrdma_prov_evq q;
	struct rpcrdma__list conns, listeners, mrs, grants;
	struct rpcrdma_prov_keys keys;
	struct rpcrdma_prov_stats st;
	struct rpcrdma_prov_inbox inbox; /* connections handed over to us */
	struct fid_pep *refuser;         /* refuses those (req_refuse), once needed */
	/* Reading the EQ or the CQ costs a system call even when empty (each
	 * runs libfabric's progress: an epoll_wait).  See ofi_fill. */
	int eq_fd;            /* the EQ's wait fd */
	bool cm_split;        /* the owner watches eq_fd (ofi_cm_fd) */
	unsigned int eagains; /* trywaits in a row that said poll again */
	bool eq_due;          /* read the EQ at the next fill */
	uint64_t eq_next_ms;  /* read it anyway from then on (busy instance) */
	bool cq_probably_dry; /* the last CQ read came back short */
};

/* A connection request on its way to another instance (conn_handoff). */
struct ofi_handoff {
	struct rpcrdma_prov_inbox_item item;
	struct fi_info *info; /* libfabric's request: the new owner's now */
	struct rpcrdma_prov_conn_attr attr;
	void *ctx;
	struct sockaddr_storage peer;
	socklen_t peerlen;
	uint8_t pdlen;
	uint8_t pdata[RPCRDMA_PROV_PRIVATE_MAX];
};

struct ofi_listener {
	enum ofi_kind kind;
	struct rpcrdma_prov_listener base;
	struct ofi_prov *p;
	struct rpcrdma__list node;
	struct fid_pep *pep;
	struct rpcrdma_prov_conn_attr attr;
	/* Connections libfabric took on our port that have not sent their
	 * request yet, by socket inode, with when ofi_listener_cut_stale
	 * first saw each. */
	struct ofi_unrequested *unreq;
	size_t nunreq, capunreq;
	/* /proc/self/fd, kept open from the listen: the scan must run when
	 * those connections have taken every descriptor the process may
	 * have, when a new opendir() fails with EMFILE.  Opened by @fd_pid,
	 * since it names that process's table even in a forked child. */
	DIR *fd_dir;
	pid_t fd_pid;
};

struct ofi_unrequested {
	ino_t ino;
	uint64_t first_ms;
	int fd;    /* this scan's */
	bool seen; /* in this scan */
};

struct ofi_conn;

struct ofi_op {
	struct ofi_conn *conn;
	void *ctx;
	struct ofi_op *next; /* free list, or queue of receives before accept */
	enum rpcrdma_prov_op op;
	bool in_use;
	unsigned int pending; /* libfabric operations not yet completed */
	enum rpcrdma_prov_status status;
	int error;
	uint32_t byte_len;
	/* A receive posted before accept waits here for its endpoint. */
	size_t niov;
	struct iovec iov[OFI_SGE_MAX];
	void *desc[OFI_SGE_MAX];
};

struct ofi_conn {
	enum ofi_kind kind;
	struct rpcrdma_prov_conn base;
	struct ofi_prov *p;
	struct rpcrdma__list node;
	struct fid_ep *ep;
	struct fi_info *req_info;      /* REQUESTED: libfabric's request */
	struct ofi_listener *listener; /* REQUESTED: where it arrived */
	bool passive;
	bool announced; /* CONNECT_REQUEST delivered to the owner */
	uint8_t req_pdlen; /* REQUESTED: the peer's private data, for a handoff */
	uint8_t req_pdata[RPCRDMA_PROV_PRIVATE_MAX];
	bool closing;   /* in teardown: completions go straight out */
	bool destroyed; /* events name no connection any more */
	struct ofi_op *ops;
	unsigned int nops;
	struct ofi_op *free_send, *free_recv;
	struct ofi_op *queued, **queued_tail;
	unsigned int tx_credits;
	struct rpcrdma_prov_event *parked;
	size_t nparked, capparked;
};

struct ofi_mr {
	struct rpcrdma_prov_mr base;
	struct rpcrdma__list node;
	struct fid_mr *mr;
	void *desc;
};

struct ofi_grant {
	struct rpcrdma_prov_grant base;
	struct rpcrdma__list node;
	struct fid_mr *mr;
};

static struct ofi_prov *prov_of(struct rpcrdma_provider *b)
{
	return rpcrdma__container_of(b, struct ofi_prov, base);
}

static struct ofi_conn *conn_of(struct rpcrdma_prov_conn *b)
{
	return rpcrdma__container_of(b, struct ofi_conn, base);
}

/*
 * libfabric returns -errno for most failures and its own codes above 255
 * for the rest; callers get plain -errno.
 */
static int errmap(ssize_t ret)
{
	if (ret >= 0)
		return 0;
	switch (-ret) {
	case FI_ETOOSMALL:
	case FI_ETRUNC:
		return -EMSGSIZE;
	case FI_ENOKEY:
		return -EEXIST;
	case FI_EOPBADSTATE:
		return -ENOTCONN;
	case FI_EBADFLAGS:
		return -EINVAL;
	case FI_ENODATA:
		return -ENODEV;
	}
	if (-ret < FI_ERRNO_OFFSET)
		return (int)ret;
	return -EIO;
}

static enum rpcrdma_prov_status status_of(int err)
{
	switch (err) {
	case 0:
		return RPCRDMA_PST_SUCCESS;
	case FI_ECANCELED:
		return RPCRDMA_PST_FLUSHED;
	case FI_EACCES:
	case FI_EPERM:
	case FI_EFAULT:
	case FI_ENOKEY:
		return RPCRDMA_PST_REMOTE_ACCESS;
	case FI_ETRUNC:
	case FI_ETOOSMALL:
	case FI_EMSGSIZE:
		return RPCRDMA_PST_LOCAL_LENGTH;
	case FI_ENORX:
		return RPCRDMA_PST_RNR_RETRY;
	case FI_EREMOTEIO:
		return RPCRDMA_PST_REMOTE_OP;
	case FI_ECONNRESET:
	case FI_ECONNABORTED:
	case FI_ENOTCONN:
	case FI_ETIMEDOUT:
	case FI_EIO:
	case EPIPE:
	case ESHUTDOWN:
		return RPCRDMA_PST_TRANSPORT;
	}
	return RPCRDMA_PST_OTHER;
}

/*
 * The event queue grows instead of refusing: an event that cannot be
 * queued is a broken promise to the owner, so running out of memory there
 * fails the whole instance.
 */
static void fail(struct ofi_prov *p, int err)
{
	if (!p->failed)
		p->failed = err < 0 ? err : -EIO;
}

static void emit(struct ofi_prov *p, const struct rpcrdma_prov_event *ev)
{
	if (rpcrdma__provider_evq_push(&p->q, ev))
		fail(p, -ENOMEM);
}

/* Registers [addr, addr + len) with a fresh key. */
static int mr_register(struct ofi_prov *p, void *addr, size_t len, uint64_t access, uint32_t *key,
                       struct fid_mr **mr)
{
	struct iovec iov = {.iov_base = addr, .iov_len = len};

	for (int tries = 0; tries < OFI_KEY_TRIES; tries++) {
		struct fi_mr_attr attr = {
		    .mr_iov = &iov,
		    .iov_count = 1,
		    .access = access,
		    .iface = FI_HMEM_SYSTEM,
		};
		uint64_t got;
		int ret;

		if (!p->prov_key) {
			ret = rpcrdma__provider_key_draw(&p->keys, key);
			if (ret)
				return ret;
			attr.requested_key = *key;
		}
		ret = fi_mr_regattr(p->domain, &attr, 0, mr);
		if (ret == -FI_ENOKEY) {
			/* A live key: never hand out a duplicate. */
			p->st.key_redraws++;
			continue;
		}
		if (ret)
			return errmap(ret);
		got = fi_mr_key(*mr);
		/* Chunk segments carry 32-bit handles.  With FI_MR_PROV_KEY
		 * (not seen on tcp) the provider chooses, and we can only
		 * refuse what does not fit or sits in quarantine. */
		if (got > UINT32_MAX || got == 0 ||
		    (p->prov_key && rpcrdma__provider_key_quarantined(&p->keys, (uint32_t)got)) ||
		    (!p->prov_key && got != *key)) {
			fi_close(&(*mr)->fid);
			*mr = NULL;
			if (!p->prov_key)
				return -EIO;
			p->st.key_redraws++;
			continue;
		}
		*key = (uint32_t)got;
		return 0;
	}
	return -EAGAIN;
}

/*
 * WARNING: Debian's libfabric links the PSM libraries, and one of their
 * dependencies (libinfinipath, seen here) installs SIGINT/SIGTERM/SIGSEGV/...
 * handlers from its constructor that call exit() inside the handler; that
 * deadlocked test programs.  Put back the default for any handler that
 * lives in such a library; handlers the application installed itself are
 * left alone.
 */
static bool psm_library(const char *path)
{
	return strstr(path, "libpsm") || strstr(path, "libinfinipath");
}

static void psm_signals_reset(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGSEGV,
	                           SIGBUS, SIGILL,  SIGFPE,  SIGABRT};

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa;
		Dl_info di;
		void *h;

		if (sigaction(sigs[i], NULL, &sa))
			continue;
		h = (sa.sa_flags & SA_SIGINFO) ? (void *)sa.sa_sigaction : (void *)sa.sa_handler;
		if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN)
			continue;
		if (!dladdr(h, &di) || !di.dli_fname || !psm_library(di.dli_fname))
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigemptyset(&sa.sa_mask);
		(void)sigaction(sigs[i], &sa, NULL);
	}
}

/*
 * Slots.
 */
static struct ofi_op *op_get(struct ofi_conn *c, bool recv)
{
	struct ofi_op **head = recv ? &c->free_recv : &c->free_send;
	struct ofi_op *o = *head;

	if (!o)
		return NULL;
	*head = o->next;
	o->next = NULL;
	o->in_use = true;
	o->pending = 0;
	o->status = RPCRDMA_PST_SUCCESS;
	o->error = 0;
	o->byte_len = 0;
	o->niov = 0;
	return o;
}

static void op_put(struct ofi_conn *c, struct ofi_op *o)
{
	struct ofi_op **head = o->op == RPCRDMA_POP_RECV ? &c->free_recv : &c->free_send;

	o->in_use = false;
	o->ctx = NULL;
	o->next = *head;
	*head = o;
}

static void park(struct ofi_conn *c, const struct rpcrdma_prov_event *ev)
{
	c->p->st.parked++;
	if (c->nparked == c->capparked) {
		size_t ncap = c->capparked ? c->capparked * 2 : 8;
		struct rpcrdma_prov_event *nv = realloc(c->parked, ncap * sizeof(*nv));

		if (!nv) {
			fail(c->p, -ENOMEM);
			return;
		}
		c->parked = nv;
		c->capparked = ncap;
	}
	c->parked[c->nparked++] = *ev;
}

static void unpark(struct ofi_conn *c)
{
	for (size_t i = 0; i < c->nparked; i++) {
		if (c->destroyed)
			c->parked[i].conn = NULL;
		emit(c->p, &c->parked[i]);
	}
	c->nparked = 0;
}

/*
 * One libfabric operation of slot @o finished.  The slot completes when its
 * last piece does; the first failure decides its status.
 */
static void op_done(struct ofi_op *o, int err, size_t len)
{
	struct ofi_conn *c = o->conn;
	struct ofi_prov *p = c->p;
	struct rpcrdma_prov_event ev;
	enum rpcrdma_prov_status st = status_of(err);

	if (!o->in_use || !o->pending) {
		/* A completion for a slot we do not think is busy: libfabric
		 * and we disagree; say so rather than corrupt the slot. */
		p->st.errors++;
		return;
	}
	if (o->op != RPCRDMA_POP_RECV)
		c->tx_credits++;
	if (st != RPCRDMA_PST_SUCCESS && o->status == RPCRDMA_PST_SUCCESS) {
		o->status = st;
		o->error = err ? -err : 0;
		if (err >= FI_ERRNO_OFFSET)
			o->error = errmap(-err);
	}
	if (o->op == RPCRDMA_POP_RECV && st == RPCRDMA_PST_SUCCESS)
		o->byte_len = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
	if (--o->pending)
		return;

	memset(&ev, 0, sizeof(ev));
	ev.type = RPCRDMA_PEV_COMPLETION;
	ev.conn = c->destroyed ? NULL : &c->base;
	ev.ctx = o->ctx;
	ev.op = o->op;
	ev.status = o->status;
	ev.error = o->error;
	ev.byte_len = o->status == RPCRDMA_PST_SUCCESS ? o->byte_len : 0;
	if (o->status == RPCRDMA_PST_FLUSHED)
		p->st.flushed++;
	else if (o->status != RPCRDMA_PST_SUCCESS)
		p->st.errors++;
	op_put(c, o);
	if (c->base.state != RPCRDMA_PCONN_ESTABLISHED && !c->closing)
		park(c, &ev);
	else
		emit(p, &ev);
}

/* Reads one batch from the CQ.  Returns entries handled, 0 when empty. */
static int cq_read_batch(struct ofi_prov *p)
{
	struct fi_cq_data_entry e[OFI_CQ_BATCH];
	ssize_t n = fi_cq_read(p->cq, e, OFI_CQ_BATCH);

	if (n > 0) {
		for (ssize_t i = 0; i < n; i++)
			if (e[i].op_context)
				op_done(e[i].op_context, 0, e[i].len);
		return (int)n;
	}
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err;

		memset(&err, 0, sizeof(err));
		n = fi_cq_readerr(p->cq, &err, 0);
		if (n == -FI_EAGAIN)
			return 0;
		if (n < 0) {
			fail(p, errmap(n));
			return 0;
		}
		if (err.op_context)
			op_done(err.op_context, err.err ? err.err : FI_EOTHER, 0);
		return 1;
	}
	if (n != -FI_EAGAIN)
		fail(p, errmap(n));
	return 0;
}

static void cq_drain(struct ofi_prov *p)
{
	while (!p->failed && cq_read_batch(p) > 0)
		;
}

/*
 * Refuses a connection request (@pdata to the peer) and frees @info.
 * WARNING: libfabric frees a request's handle, and tcp closes the
 * socket it holds, only in fi_reject() or a successful fi_accept();
 * fi_freeinfo() frees the info alone, and a request dropped with it
 * kept a descriptor and libfabric's memory for good (handed to a worker
 * that refused it, or was closed with it in its inbox).  A request
 * handed over from another instance has no listener here: tcp's reject
 * acts on the handle alone, the passive endpoint only routes the call,
 * so one of our own serves, never bound (no socket) nor listening.
 */
static int req_refuse(struct ofi_prov *p, struct ofi_listener *l, struct fi_info *info,
		      const void *pdata, size_t pdlen)
{
	struct fid_pep *pep = l ? l->pep : p->refuser;
	int ret = 0;

	if (!pep) {
		struct fi_info *pi = fi_dupinfo(p->info);

		if (pi) {
			free(pi->src_addr);
			pi->src_addr = NULL;
			pi->src_addrlen = 0;
			ret = fi_passive_ep(p->fabric, pi, &p->refuser, NULL);
			fi_freeinfo(pi);
		} else {
			ret = -FI_ENOMEM;
		}
		if (ret)
			p->refuser = NULL;
		pep = p->refuser;
	}
	if (pep)
		ret = fi_reject(pep, info->handle, pdlen ? pdata : NULL, pdlen);
	else
		p->st.errors++; /* nothing to refuse it through: it stays */
	fi_freeinfo(info);
	return ret;
}

/*
 * Ends a connection: see "Recovery" at the top.  @terminal, if given, is
 * queued after the connection's last completion.
 */
static void conn_teardown(struct ofi_conn *c, const struct rpcrdma_prov_event *terminal)
{
	struct ofi_prov *p = c->p;

	c->closing = true;
	unpark(c);
	if (c->ep) {
		/* WARNING: closing the endpoint reports its queued operations
		 * as FI_ECANCELED on the CQ and removes its EQ events. */
		fi_close(&c->ep->fid);
		c->ep = NULL;
	}
	if (c->req_info) {
		(void)req_refuse(p, c->listener, c->req_info, NULL, 0);
		c->req_info = NULL;
	}
	c->listener = NULL;
	cq_drain(p);
	c->queued = NULL;
	c->queued_tail = &c->queued;
	for (unsigned int i = 0; i < c->nops; i++) {
		struct ofi_op *o = &c->ops[i];

		if (o->in_use) {
			o->pending = 1;
			op_done(o, FI_ECANCELED, 0);
		}
	}
	if (terminal && !c->destroyed)
		emit(p, terminal);
	c->base.state = RPCRDMA_PCONN_CLOSED;
	c->closing = false;
}

static void conn_end(struct ofi_conn *c, enum rpcrdma_prov_event_type type, int error,
                     const void *data, size_t len)
{
	struct rpcrdma_prov_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.conn = &c->base;
	ev.ctx = c->base.ctx;
	ev.error = error;
	rpcrdma__provider_copy_private(&ev, data, len);
	switch (type) {
	case RPCRDMA_PEV_REJECTED:
		c->p->st.conns_rejected++;
		break;
	case RPCRDMA_PEV_CONNECT_ERROR:
		c->p->st.conns_failed++;
		break;
	default:
		c->p->st.conns_disconnected++;
		break;
	}
	conn_teardown(c, &ev);
}

static struct rpcrdma_prov_conn_attr clamp_attr(const struct ofi_prov *p,
                                                const struct rpcrdma_prov_conn_attr *in)
{
	struct rpcrdma_prov_conn_attr a = {0};
	const struct rpcrdma_prov_caps *caps = &p->base.caps;

	if (in)
		a = *in;
	if (!a.send_depth)
		a.send_depth = OFI_DEF_SEND_DEPTH;
	if (!a.recv_depth)
		a.recv_depth = OFI_DEF_RECV_DEPTH;
	if (!a.read_depth)
		a.read_depth = OFI_DEF_READ_DEPTH;
	if (a.send_depth > caps->max_send_depth)
		a.send_depth = caps->max_send_depth;
	if (a.recv_depth > caps->max_recv_depth)
		a.recv_depth = caps->max_recv_depth;
	if (a.read_depth > caps->max_read_depth)
		a.read_depth = caps->max_read_depth;
	if (a.read_depth > a.send_depth)
		a.read_depth = a.send_depth;
	return a;
}

static struct ofi_conn *conn_alloc(struct ofi_prov *p, const struct rpcrdma_prov_conn_attr *attr,
                                   void *ctx)
{
	struct ofi_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->kind = OFI_KIND_CONN;
	c->p = p;
	c->base.prov = &p->base;
	c->base.ctx = ctx;
	c->base.attr = clamp_attr(p, attr);
	c->base.state = RPCRDMA_PCONN_IDLE;
	c->nops = c->base.attr.send_depth + c->base.attr.recv_depth;
	c->ops = calloc(c->nops, sizeof(*c->ops));
	if (!c->ops) {
		free(c);
		return NULL;
	}
	for (unsigned int i = 0; i < c->nops; i++) {
		struct ofi_op *o = &c->ops[i];

		o->conn = c;
		o->op = i < c->base.attr.send_depth ? RPCRDMA_POP_SEND : RPCRDMA_POP_RECV;
		op_put(c, o);
	}
	c->tx_credits = c->base.attr.send_depth * p->split;
	c->queued_tail = &c->queued;
	rpcrdma__list_init(&c->node);
	rpcrdma__list_add_head(&p->conns, &c->node);
	p->st.conns_live++;
	p->st.conns_created++;
	return c;
}

/* On failure after fi_endpoint, c->ep stays set: teardown closes it. */
static int ep_open(struct ofi_conn *c, struct fi_info *info)
{
	struct ofi_prov *p = c->p;
	int ret;

	info->tx_attr->size = (size_t)c->base.attr.send_depth * p->split;
	info->rx_attr->size = c->base.attr.recv_depth;
	ret = fi_endpoint(p->domain, info, &c->ep, &c->kind);
	if (ret) {
		c->ep = NULL;
		return errmap(ret);
	}
	ret = fi_ep_bind(c->ep, &p->eq->fid, 0);
	if (!ret)
		ret = fi_ep_bind(c->ep, &p->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_enable(c->ep);
	return errmap(ret);
}

static void conn_free(struct ofi_conn *c)
{
	struct ofi_prov *p = c->p;

	c->destroyed = true;
	/* No queued event may name it once it is freed (provider.h). */
	rpcrdma__provider_evq_scrub(&p->q, &c->base, NULL);
	if (c->base.state != RPCRDMA_PCONN_CLOSED)
		conn_teardown(c, NULL);
	else
		unpark(c);
	rpcrdma__list_del(&c->node);
	p->st.conns_live--;
	free(c->parked);
	free(c->ops);
	free(c);
}

/*
 * Connection events.
 */
/* A request the owner cannot be told of is refused, rather than the whole
 * instance failed: its peer sees the attempt fail and may try again. */
static void emit_request(struct ofi_conn *c, const struct rpcrdma_prov_event *ev)
{
	if (rpcrdma__provider_evq_push(&c->p->q, ev)) {
		c->p->st.errors++;
		conn_free(c);
	}
}

static void on_connreq(struct ofi_prov *p, struct ofi_listener *l, struct fi_info *info,
                       const void *data, size_t len)
{
	struct rpcrdma_prov_event ev;
	struct ofi_conn *c;

	c = conn_alloc(p, &l->attr, NULL);
	if (!c) {
		/* Refuse rather than lose track of the request. */
		(void)req_refuse(p, l, info, NULL, 0);
		p->st.errors++;
		return;
	}
	c->passive = true;
	c->req_info = info;
	c->listener = l;
	c->base.state = RPCRDMA_PCONN_REQUESTED;
	rpcrdma__provider_set_peer(&c->base, info->dest_addr, info->dest_addr ? info->dest_addrlen : 0);
	memset(&ev, 0, sizeof(ev));
	ev.type = RPCRDMA_PEV_CONNECT_REQUEST;
	ev.conn = &c->base;
	ev.listener = &l->base;
	ev.ctx = l->base.ctx;
	rpcrdma__provider_copy_private(&ev, data, len);
	c->req_pdlen = (uint8_t)ev.private_len;
	memcpy(c->req_pdata, ev.private_data, ev.private_len);
	emit_request(c, &ev);
}

static void on_connected(struct ofi_conn *c, const void *data, size_t len)
{
	struct rpcrdma_prov_event ev;

	if (c->base.state != RPCRDMA_PCONN_CONNECTING)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.type = RPCRDMA_PEV_ESTABLISHED;
	ev.conn = &c->base;
	ev.ctx = c->base.ctx;
	rpcrdma__provider_copy_private(&ev, c->passive ? NULL : data, len);
	c->base.state = RPCRDMA_PCONN_ESTABLISHED;
	c->p->st.conns_established++;
	emit(c->p, &ev);
	unpark(c);
}

static void on_conn_error(struct ofi_conn *c, int err, const void *data, size_t len)
{
	switch (c->base.state) {
	case RPCRDMA_PCONN_CONNECTING:
		if (!c->passive) {
			if (err == ECONNREFUSED)
				conn_end(c, RPCRDMA_PEV_REJECTED, -ECONNREFUSED, data, len);
			else
				conn_end(c, RPCRDMA_PEV_CONNECT_ERROR, err ? -err : -EIO, NULL, 0);
			return;
		}
		/* An accepted connection is as good as up. */
		conn_end(c, RPCRDMA_PEV_DISCONNECTED, err ? -err : 0, NULL, 0);
		return;
	case RPCRDMA_PCONN_ESTABLISHED:
		conn_end(c, RPCRDMA_PEV_DISCONNECTED, err ? -err : 0, NULL, 0);
		return;
	default:
		return;
	}
}

static void on_eq_error(struct ofi_prov *p)
{
	struct fi_eq_err_entry err;
	enum ofi_kind *kind;
	ssize_t n;

	memset(&err, 0, sizeof(err));
	n = fi_eq_readerr(p->eq, &err, 0);
	if (n == -FI_EAGAIN)
		return;
	if (n < 0) {
		fail(p, errmap(n));
		return;
	}
	kind = err.fid ? err.fid->context : NULL;
	if (kind && *kind == OFI_KIND_CONN) {
		struct ofi_conn *c = rpcrdma__container_of(kind, struct ofi_conn, kind);

		on_conn_error(c, err.err, err.err_data, err.err_data_size);
	} else if (kind && *kind == OFI_KIND_LISTENER) {
		struct ofi_listener *l = rpcrdma__container_of(kind, struct ofi_listener, kind);
		struct rpcrdma_prov_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.type = RPCRDMA_PEV_DEVICE_ERROR;
		ev.listener = &l->base;
		ev.ctx = l->base.ctx;
		ev.error = err.err ? -err.err : -EIO;
		p->st.errors++;
		emit(p, &ev);
	} else {
		p->st.errors++;
	}
}

/* Handles one EQ entry.  Returns 1 if there was one, 0 if none. */
static int eq_read_one(struct ofi_prov *p)
{
	_Alignas(struct fi_eq_cm_entry)
	    uint8_t raw[sizeof(struct fi_eq_cm_entry) + OFI_CM_DATA_MAX];
	struct fi_eq_cm_entry *cm = (struct fi_eq_cm_entry *)(void *)raw;
	enum ofi_kind *kind;
	uint32_t event;
	size_t dlen;
	ssize_t n;

	n = fi_eq_read(p->eq, &event, raw, sizeof(raw), 0);
	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		on_eq_error(p);
		return 1;
	}
	if (n < 0) {
		fail(p, errmap(n));
		return 0;
	}
	dlen = (size_t)n > sizeof(*cm) ? (size_t)n - sizeof(*cm) : 0;
	if (event != FI_CONNREQ && event != FI_CONNECTED && event != FI_SHUTDOWN)
		return 1;
	if ((size_t)n < sizeof(*cm) || !cm->fid)
		return 1;
	kind = cm->fid->context;
	if (!kind)
		return 1;
	if (event == FI_CONNREQ) {
		if (*kind == OFI_KIND_LISTENER && cm->info)
			on_connreq(p, rpcrdma__container_of(kind, struct ofi_listener, kind),
				   cm->info, cm->data, dlen);
		else if (cm->info)
			fi_freeinfo(cm->info);
		return 1;
	}
	if (*kind != OFI_KIND_CONN)
		return 1;
	if (event == FI_CONNECTED)
		on_connected(rpcrdma__container_of(kind, struct ofi_conn, kind), cm->data, dlen);
	else
		on_conn_error(rpcrdma__container_of(kind, struct ofi_conn, kind), 0, NULL, 0);
	return 1;
}

/*
 * The vtable.
 */
static int ofi_fd(struct rpcrdma_provider *b)
{
	return prov_of(b)->epfd;
}

/* Connections another instance handed over: each becomes a request here. */
static bool inbox_drain(struct ofi_prov *p)
{
	struct rpcrdma_prov_inbox_item *it = rpcrdma__provider_inbox_take(&p->inbox);
	bool any = it != NULL;

	while (it) {
		struct ofi_handoff *h = rpcrdma__container_of(it, struct ofi_handoff, item);
		struct rpcrdma_prov_event ev;
		struct ofi_conn *c;

		it = it->next;
		c = conn_alloc(p, &h->attr, h->ctx);
		if (!c) {
			(void)req_refuse(p, NULL, h->info, NULL, 0);
			p->st.errors++;
			free(h);
			continue;
		}
		c->passive = true;
		c->req_info = h->info;
		c->base.state = RPCRDMA_PCONN_REQUESTED;
		rpcrdma__provider_set_peer(&c->base, (struct sockaddr *)&h->peer, h->peerlen);
		c->req_pdlen = h->pdlen;
		memcpy(c->req_pdata, h->pdata, h->pdlen);
		memset(&ev, 0, sizeof(ev));
		ev.type = RPCRDMA_PEV_CONNECT_REQUEST;
		ev.conn = &c->base;
		ev.ctx = h->ctx;
		rpcrdma__provider_copy_private(&ev, h->pdata, h->pdlen);
		emit_request(c, &ev);
		free(h);
	}
	return any;
}

/* Milliseconds of a clock read without a system call (vDSO). */
static uint64_t coarse_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * Whether this fill reads the EQ.  Connection events are rare and late ones
 * only delay a handshake or a teardown, never lose them: the EQ is read
 * when its fd is readable (the owner's ofi_cm_ready; without ofi_cm_fd,
 * after every wait on our fd, which may have been the EQ's), after every
 * connection call we make, until it is empty once it gave something, when
 * trywait keeps saying poll again though poll finds nothing, and every
 * OFI_EQ_BUSY_MS when the instance is so busy that it never waits (with the
 * EQ's fd watched apart, only as a safety net: OFI_EQ_SPLIT_MS).
 */
#define OFI_EQ_BUSY_MS 4u
#define OFI_EQ_SPLIT_MS 100u

static bool eq_wanted(struct ofi_prov *p)
{
	uint64_t now;

	if (p->eq_due) {
		p->eq_due = false;
		return true;
	}
	now = coarse_ms();
	if (now < p->eq_next_ms)
		return false;
	p->eq_next_ms = now + (p->cm_split ? OFI_EQ_SPLIT_MS : OFI_EQ_BUSY_MS);
	return true;
}

/*
 * One step of poll: the CQ first (the traffic), then the EQ when it is due,
 * then connections handed over.  A CQ read that came back short is not
 * repeated right away: the owner's trywait, due before it sleeps, runs the
 * same progress and says whether more came (provider.h: poll until empty,
 * trywait, sleep), and any later poll reads it again.  This saves the
 * empty read that otherwise ends every wake-up.
 */
static bool ofi_fill(void *ctx)
{
	struct ofi_prov *p = ctx;
	int n;

	if (p->cq_probably_dry) {
		p->cq_probably_dry = false;
	} else {
		n = cq_read_batch(p);
		if (n > 0) {
			p->cq_probably_dry = n < OFI_CQ_BATCH;
			return true;
		}
	}
	if (eq_wanted(p) && eq_read_one(p) > 0) {
		p->eq_due = true; /* until it is empty */
		return true;
	}
	return inbox_drain(p);
}

static void ofi_announce(void *ctx, struct rpcrdma_prov_conn *c)
{
	(void)ctx;
	conn_of(c)->announced = true;
}

static int ofi_poll(struct rpcrdma_provider *b, struct rpcrdma_prov_event *ev, unsigned int max)
{
	struct ofi_prov *p = prov_of(b);
	const struct rpcrdma_prov_poll_state ps = {
	    &p->q, &p->st, &p->failed, &p->failed_reported, ofi_fill, ofi_announce, p,
	};
	int n = rpcrdma__provider_poll_loop(&ps, ev, max);

	if (n > 0)
		p->eagains = 0;
	return n;
}

static int ofi_cm_fd(struct rpcrdma_provider *b)
{
	struct ofi_prov *p = prov_of(b);

	if (!p->cm_split) {
		if (epoll_ctl(p->epfd, EPOLL_CTL_DEL, p->eq_fd, NULL))
			return -1;
		p->cm_split = true;
		p->eq_due = true;
	}
	return p->eq_fd;
}

static void ofi_cm_ready(struct rpcrdma_provider *b)
{
	prov_of(b)->eq_due = true;
}

static int ofi_trywait(struct rpcrdma_provider *b)
{
	struct ofi_prov *p = prov_of(b);
	struct fid *fids[2];
	int ret;

	if (!p->cm_split)
		p->eq_due = true; /* whatever wakes us next may be the EQ's */
	p->cq_probably_dry = false;
	if (p->failed)
		return p->failed_reported && !p->q.count ? -EIO : -EAGAIN;
	if (p->q.count)
		return -EAGAIN;
	fids[0] = &p->cq->fid;
	fids[1] = &p->eq->fid;
	ret = fi_trywait(p->fabric, fids, 2);
	if (ret == -FI_EAGAIN) {
		/* Twice in a row with nothing polled between: it may be the
		 * EQ that is not empty. */
		if (p->eagains++)
			p->eq_due = true;
		return -EAGAIN;
	}
	p->eagains = 0;
	return errmap(ret);
}

static void ofi_stats(struct rpcrdma_provider *b, struct rpcrdma_prov_stats *out)
{
	struct ofi_prov *p = prov_of(b);

	*out = p->st;
	out->key_redraws += p->keys.redraws;
}

static int ofi_reg_mr(struct rpcrdma_provider *b, void *addr, size_t length,
                      struct rpcrdma_prov_mr **out)
{
	struct ofi_prov *p = prov_of(b);
	struct ofi_mr *m;
	uint32_t key;
	int ret;

	if (!addr || !length || !out || (uintptr_t)addr + length < (uintptr_t)addr)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	/* Local access only: a peer that guesses this key is refused. */
	ret = mr_register(p, addr, length, FI_SEND | FI_RECV | FI_READ | FI_WRITE, &key, &m->mr);
	if (ret) {
		free(m);
		return ret;
	}
	m->desc = fi_mr_desc(m->mr);
	m->base.prov = b;
	m->base.addr = addr;
	m->base.length = length;
	rpcrdma__list_add_head(&p->mrs, &m->node);
	p->st.mrs_live++;
	p->st.reg_mrs++;
	*out = &m->base;
	return 0;
}

static void ofi_dereg_mr(struct rpcrdma_prov_mr *bm)
{
	struct ofi_mr *m = rpcrdma__container_of(bm, struct ofi_mr, base);
	struct ofi_prov *p = prov_of(bm->prov);

	fi_close(&m->mr->fid);
	rpcrdma__list_del(&m->node);
	p->st.mrs_live--;
	p->st.dereg_mrs++;
	free(m);
}

static int ofi_grant(struct rpcrdma_prov_conn *bc, struct rpcrdma_prov_mr *mr, void *addr,
                     uint32_t length, unsigned int access, struct rpcrdma_prov_grant **out,
                     struct rpcrdma_prov_rseg *seg)
{
	struct ofi_prov *p = prov_of(bc->prov);
	const unsigned int all = RPCRDMA_PACCESS_REMOTE_READ | RPCRDMA_PACCESS_REMOTE_WRITE;
	uint64_t fa = 0;
	struct ofi_grant *g;
	uint32_t key;
	int ret;

	if (!mr || mr->prov != bc->prov || !out || !seg || !length || !access || (access & ~all) ||
	    !rpcrdma__provider_range_in(addr, length, mr->addr, mr->length))
		return -EINVAL;
	if (bc->state == RPCRDMA_PCONN_CLOSED)
		return -ENOTCONN;
	if (access & RPCRDMA_PACCESS_REMOTE_READ)
		fa |= FI_REMOTE_READ;
	if (access & RPCRDMA_PACCESS_REMOTE_WRITE)
		fa |= FI_REMOTE_WRITE;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	ret = mr_register(p, addr, length, fa, &key, &g->mr);
	if (ret) {
		free(g);
		return ret;
	}
	g->base.prov = bc->prov;
	g->base.handle = key;
	rpcrdma__list_add_head(&p->grants, &g->node);
	p->st.grants++;
	p->st.grants_live++;
	seg->handle = key;
	seg->length = length;
	/* The region is its own registration, so without FI_MR_VIRT_ADDR its
	 * first byte is offset 0. */
	seg->offset = p->virt_addr ? (uint64_t)(uintptr_t)addr : 0;
	*out = &g->base;
	return 0;
}

static int ofi_revoke(struct rpcrdma_prov_grant *bg, void *ctx)
{
	struct ofi_grant *g = rpcrdma__container_of(bg, struct ofi_grant, base);
	struct ofi_prov *p = prov_of(bg->prov);
	struct rpcrdma_prov_event ev;
	int ret;

	/* Closing the registration fences new access: once fi_close returns,
	 * tcp refuses the key (and kills the connection that tries it).
	 * WARNING: not an RDMA Read or Write the peer already started; the
	 * requester closes the connection for those (no
	 * RPCRDMA_PCAP_REVOKE_FENCES_INFLIGHT). */
	ret = fi_close(&g->mr->fid);
	if (ret) {
		/* The key stays valid on the domain, and tcp keys are not tied
		 * to a connection: failing the instance makes its owner close
		 * every endpoint (which stops all access) and open no more. */
		fail(p, errmap(ret));
		return errmap(ret);
	}
	rpcrdma__provider_key_retire(&p->keys, bg->handle);
	rpcrdma__list_del(&g->node);
	p->st.grants_live--;
	p->st.revokes++;
	memset(&ev, 0, sizeof(ev));
	ev.type = RPCRDMA_PEV_COMPLETION;
	ev.op = RPCRDMA_POP_REVOKE;
	ev.ctx = ctx;
	free(g);
	emit(p, &ev);
	return 0;
}

static int check_addr(const struct ofi_prov *p, const struct sockaddr *sa, socklen_t len)
{
	if (!sa)
		return -EINVAL;
	if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in) &&
	    p->info->addr_format == FI_SOCKADDR_IN)
		return 0;
	if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6) &&
	    p->info->addr_format == FI_SOCKADDR_IN6)
		return 0;
	return sa->sa_family == AF_INET || sa->sa_family == AF_INET6 ? -EAFNOSUPPORT : -EINVAL;
}

static size_t sockaddr_size(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

static int ofi_listen(struct rpcrdma_provider *b, const struct sockaddr *addr, socklen_t addrlen,
                      int backlog, const struct rpcrdma_prov_conn_attr *attr, void *ctx,
                      struct rpcrdma_prov_listener **out)
{
	struct ofi_prov *p = prov_of(b);
	struct ofi_listener *l;
	struct fi_info *info;
	int ret;

	ret = check_addr(p, addr, addrlen);
	if (ret || !out)
		return ret ? ret : -EINVAL;
	l = calloc(1, sizeof(*l));
	info = fi_dupinfo(p->info);
	if (!l || !info) {
		free(l);
		fi_freeinfo(info);
		return -ENOMEM;
	}
	free(info->src_addr);
	info->src_addrlen = sockaddr_size(addr);
	info->src_addr = malloc(info->src_addrlen);
	free(info->dest_addr);
	info->dest_addr = NULL;
	info->dest_addrlen = 0;
	if (!info->src_addr) {
		fi_freeinfo(info);
		free(l);
		return -ENOMEM;
	}
	memcpy(info->src_addr, addr, info->src_addrlen);
	l->kind = OFI_KIND_LISTENER;
	l->p = p;
	l->base.prov = b;
	l->base.ctx = ctx;
	l->attr = clamp_attr(p, attr);
	ret = fi_passive_ep(p->fabric, info, &l->pep, &l->kind);
	fi_freeinfo(info);
	if (ret) {
		free(l);
		return errmap(ret);
	}
	ret = fi_pep_bind(l->pep, &p->eq->fid, 0);
	if (!ret && backlog > 0)
		(void)fi_control(&l->pep->fid, FI_BACKLOG, &backlog); /* a hint only */
	if (!ret)
		ret = fi_listen(l->pep);
	if (ret) {
		fi_close(&l->pep->fid);
		free(l);
		return errmap(ret);
	}
	rpcrdma__list_init(&l->node);
	rpcrdma__list_add_head(&p->listeners, &l->node);
	p->st.listeners_live++;
	p->eq_due = true;
	/* Failing here, the first scan tries again (ofi_listener_fd_dir). */
	l->fd_dir = opendir("/proc/self/fd");
	l->fd_pid = getpid();
	*out = &l->base;
	return 0;
}

static int ofi_listener_addr(struct rpcrdma_prov_listener *bl, struct sockaddr_storage *ss,
                             socklen_t *len)
{
	struct ofi_listener *l = rpcrdma__container_of(bl, struct ofi_listener, base);
	size_t sz = sizeof(*ss);
	int ret;

	if (!ss || !len)
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	ret = fi_getname(&l->pep->fid, ss, &sz);
	if (ret)
		return errmap(ret);
	*len = (socklen_t)sz;
	return 0;
}

/*
 * Reads every connection event libfabric holds, before a listener or the
 * instance goes.  WARNING: a connection request left in the EQ when its
 * listener closes is dropped by libfabric with its request handle and
 * info, which then leak (ASan, bidir_hostile); read here, it becomes a
 * connection of ours that the caller refuses and frees.  The EQ is no
 * longer read on every poll (eq_wanted), so one may well be waiting.
 */
static void eq_drain(struct ofi_prov *p)
{
	for (unsigned int i = 0; i < OFI_EQ_SIZE && !p->failed; i++) {
		if (eq_read_one(p) <= 0)
			break;
	}
}

static int ofi_listener_cut_stale(struct rpcrdma_prov_listener *bl, uint64_t now_ms,
				  uint64_t max_age_ms, unsigned int max_count);
static void ofi_listener_stop_accepting(struct ofi_listener *l);

static void ofi_listener_close(struct rpcrdma_prov_listener *bl)
{
	struct ofi_listener *l = rpcrdma__container_of(bl, struct ofi_listener, base);
	struct ofi_prov *p = l->p;
	struct rpcrdma__list *it, *next;

	/*
	 * Connections whose request libfabric has not read whole would
	 * outlive the listener: tcp frees them only when their request
	 * fails, and after fi_close(pep) nothing reads them (a destroyed
	 * server kept one descriptor per silent or half-sent peer).  Shut
	 * down, they fail at the progress eq_drain() makes.  That progress
	 * accepts whatever waits on the port, too, so the port is shut
	 * first: a connection taken after the scan would be left over.
	 */
	ofi_listener_stop_accepting(l);
	if (ofi_listener_cut_stale(bl, 0, 0, 0) > 0)
		eq_drain(p);
	eq_drain(p);
	rpcrdma__list_foreach_safe(it, next, &p->conns)
	{
		struct ofi_conn *c = rpcrdma__container_of(it, struct ofi_conn, node);

		if (c->listener != l)
			continue;
		if (!c->announced) {
			/* The owner never heard of it: it is ours to free. */
			conn_free(c);
			continue;
		}
		conn_end(c, RPCRDMA_PEV_DISCONNECTED, -ECONNABORTED, NULL, 0);
	}
	rpcrdma__provider_evq_scrub(&p->q, NULL, bl);
	fi_close(&l->pep->fid);
	rpcrdma__list_del(&l->node);
	p->st.listeners_live--;
	if (l->fd_dir)
		closedir(l->fd_dir);
	free(l->unreq);
	free(l);
}

/* tcp_info's state of a connection both ways open (netinet/tcp.h's
 * TCP_ESTABLISHED, which clashes with linux/tcp.h). */
#define OFI_TCP_ESTABLISHED 1

/* Whether @sa is the listener's local address @me: the same family and
 * port, and the same address unless @me is a wildcard. */
static bool same_local(const struct sockaddr_storage *sa, const struct sockaddr_storage *me)
{
	if (sa->ss_family != me->ss_family)
		return false;
	if (me->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)sa, *m = (const void *)me;

		return a->sin_port == m->sin_port && (m->sin_addr.s_addr == htonl(INADDR_ANY) ||
						      a->sin_addr.s_addr == m->sin_addr.s_addr);
	}
	if (me->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)sa, *m = (const void *)me;

		return a->sin6_port == m->sin6_port &&
		       (IN6_IS_ADDR_UNSPECIFIED(&m->sin6_addr) ||
			IN6_ARE_ADDR_EQUAL(&a->sin6_addr, &m->sin6_addr));
	}
	return false;
}

/*
 * Whether @fd is a TCP connection that reached the listener at @me and to
 * which we have sent nothing.  Every request libfabric reports to us is
 * answered at once (accepted or rejected: either sends tcp's response), so
 * a connection still without a byte from us is one whose request never
 * came.  A kernel older than 4.19 (no tcpi_bytes_sent) finds none.
 */
static bool unrequested_conn(int fd, const struct sockaddr_storage *me)
{
	struct sockaddr_storage sa, peer;
	socklen_t len = sizeof(sa), plen = sizeof(peer), tlen = sizeof(struct tcp_info);
	struct tcp_info ti;
	int type = 0;
	socklen_t typelen = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &typelen) || type != SOCK_STREAM)
		return false;
	if (getsockname(fd, (struct sockaddr *)&sa, &len) || !same_local(&sa, me))
		return false;
	/* The listening socket itself has no peer. */
	if (getpeername(fd, (struct sockaddr *)&peer, &plen))
		return false;
	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tlen) ||
	    tlen < offsetof(struct tcp_info, tcpi_bytes_sent) + sizeof(ti.tcpi_bytes_sent))
		return false;
	return ti.tcpi_state == OFI_TCP_ESTABLISHED && ti.tcpi_bytes_sent == 0;
}

/* Notes @fd (socket inode @ino) as unrequested in this scan.  Returns
 * -ENOMEM when it cannot be tracked. */
static int unreq_note(struct ofi_listener *l, ino_t ino, int fd, uint64_t now_ms)
{
	struct ofi_unrequested *u;

	for (size_t i = 0; i < l->nunreq; i++) {
		if (l->unreq[i].ino == ino) {
			l->unreq[i].seen = true;
			l->unreq[i].fd = fd;
			return 0;
		}
	}
	if (l->nunreq == l->capunreq) {
		size_t cap = l->capunreq ? 2 * l->capunreq : 16;

		u = realloc(l->unreq, cap * sizeof(*u));
		if (!u)
			return -ENOMEM;
		l->unreq = u;
		l->capunreq = cap;
	}
	l->unreq[l->nunreq++] = (struct ofi_unrequested){ino, now_ms, fd, true};
	return 0;
}

static int unreq_newest_first(const void *a, const void *b)
{
	const struct ofi_unrequested *x = a, *y = b;

	return x->first_ms < y->first_ms ? 1 : x->first_ms > y->first_ms ? -1 : 0;
}

/*
 * libfabric's tcp takes every TCP connection to a listener's port at once
 * and waits for ever for the peer's connection request: a peer that
 * connects and sends nothing, or a byte at a time, holds a descriptor of
 * our process before we hear of it, so neither max_conns nor any clock of
 * the owner covers it.  They are found here among the process's sockets
 * (unrequested_conn); one first seen by an earlier call at least
 * @max_age_ms before @now_ms, and beyond @max_count of them the newest, is
 * shut down.  Shut down, not closed: the descriptor stays libfabric's,
 * which sees the end at its next progress and frees it.  The cost is a few
 * system calls per descriptor of the process, once per call.
 */
/* @l's /proc/self/fd, from its start, or NULL with errno set. */
static DIR *ofi_listener_fd_dir(struct ofi_listener *l)
{
	pid_t me = getpid();

	if (l->fd_dir && l->fd_pid == me) {
		rewinddir(l->fd_dir); /* procfs lists the table as it is now */
		return l->fd_dir;
	}
	/* Never opened, or another process's (a fork): its numbers are not
	 * ours to shut down. */
	if (l->fd_dir)
		closedir(l->fd_dir);
	l->fd_dir = opendir("/proc/self/fd");
	l->fd_pid = me;
	return l->fd_dir;
}

static int ofi_listener_cut_stale(struct rpcrdma_prov_listener *bl, uint64_t now_ms,
				  uint64_t max_age_ms, unsigned int max_count)
{
	struct ofi_listener *l = rpcrdma__container_of(bl, struct ofi_listener, base);
	struct sockaddr_storage me;
	socklen_t melen = sizeof(me);
	struct dirent *de;
	size_t kept = 0;
	int cut = 0, ret;
	DIR *d;

	ret = ofi_listener_addr(bl, &me, &melen);
	if (ret)
		return ret;
	d = ofi_listener_fd_dir(l);
	if (!d)
		return -errno;
	for (size_t i = 0; i < l->nunreq; i++)
		l->unreq[i].seen = false;
	while ((de = readdir(d)) != NULL) {
		unsigned long long ino;
		char link[64], *end;
		long fd = strtol(de->d_name, &end, 10);
		ssize_t n;

		if (end == de->d_name || *end || fd < 0 || fd == dirfd(d))
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (sscanf(link, "socket:[%llu]", &ino) != 1 || !unrequested_conn((int)fd, &me))
			continue;
		if (unreq_note(l, (ino_t)ino, (int)fd, now_ms))
			break; /* the rest waits for the next call */
	}
	/* Those gone (their request came, or they closed) are forgotten. */
	for (size_t i = 0; i < l->nunreq; i++) {
		if (l->unreq[i].seen)
			l->unreq[kept++] = l->unreq[i];
	}
	l->nunreq = kept;
	if (l->nunreq > 1)
		qsort(l->unreq, l->nunreq, sizeof(*l->unreq), unreq_newest_first);
	for (size_t i = 0; i < l->nunreq; i++) {
		struct ofi_unrequested *u = &l->unreq[i];

		struct stat st;

		if (now_ms - u->first_ms < max_age_ms && l->nunreq - i <= max_count)
			continue;
		/* The descriptor is libfabric's: it may have closed it since
		 * the scan, and another thread reused the number.  Only the
		 * same socket, still unrequested, is shut down. */
		if (fstat(u->fd, &st) || st.st_ino != u->ino || !unrequested_conn(u->fd, &me))
			continue;
		if (shutdown(u->fd, SHUT_RDWR) == 0)
			cut++;
	}
	if (cut)
		l->p->eq_due = true; /* tcp frees them in its progress */
	return cut;
}

/*
 * Shuts down @l's listening socket, found among the process's sockets as
 * the one listening on its address: Linux then resets the connections
 * queued on it, and libfabric's progress, which accepts on every run,
 * accepts no more (accept fails).  Any connection it took before is
 * ofi_listener_cut_stale's.
 */
static void ofi_listener_stop_accepting(struct ofi_listener *l)
{
	struct sockaddr_storage me;
	socklen_t melen = sizeof(me);
	struct dirent *de;
	DIR *d;

	if (ofi_listener_addr(&l->base, &me, &melen) || !(d = ofi_listener_fd_dir(l)))
		return;
	while ((de = readdir(d)) != NULL) {
		struct sockaddr_storage sa;
		socklen_t len = sizeof(sa), optlen = sizeof(int);
		int listening = 0;
		char *end;
		long fd = strtol(de->d_name, &end, 10);

		if (end == de->d_name || *end || fd < 0 || fd == dirfd(d))
			continue;
		if (getsockopt((int)fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &optlen) ||
		    !listening)
			continue;
		/* Both ways: a wildcard matches only the wildcard. */
		if (getsockname((int)fd, (struct sockaddr *)&sa, &len) || !same_local(&sa, &me) ||
		    !same_local(&me, &sa))
			continue;
		(void)shutdown((int)fd, SHUT_RD);
		return;
	}
}

static int ofi_conn_create(struct rpcrdma_provider *b, const struct rpcrdma_prov_conn_attr *attr,
                           void *ctx, struct rpcrdma_prov_conn **out)
{
	struct ofi_prov *p = prov_of(b);
	struct ofi_conn *c;
	int ret;

	if (!out)
		return -EINVAL;
	if (p->failed)
		return -EIO;
	c = conn_alloc(p, attr, ctx);
	if (!c)
		return -ENOMEM;
	ret = ep_open(c, p->ep_info);
	if (ret) {
		conn_free(c);
		return ret;
	}
	*out = &c->base;
	return 0;
}

static int check_private(const void *pdata, size_t pdlen)
{
	if (pdlen > RPCRDMA_PROV_PRIVATE_MAX || (pdlen && !pdata))
		return -EINVAL;
	return 0;
}

static int ofi_connect(struct rpcrdma_prov_conn *bc, const struct sockaddr *dst, socklen_t dstlen,
                       const void *pdata, size_t pdlen)
{
	struct ofi_conn *c = conn_of(bc);
	int ret;

	ret = check_addr(c->p, dst, dstlen);
	if (!ret)
		ret = check_private(pdata, pdlen);
	if (ret)
		return ret;
	if (bc->state != RPCRDMA_PCONN_IDLE || !c->ep)
		return -ENOTCONN;
	c->p->eq_due = true; /* its answer comes on the EQ */
	ret = fi_connect(c->ep, dst, pdlen ? pdata : NULL, pdlen);
	if (ret)
		return errmap(ret);
	rpcrdma__provider_set_peer(bc, dst, dstlen);
	bc->state = RPCRDMA_PCONN_CONNECTING;
	return 0;
}

static int post_recv_now(struct ofi_conn *c, struct ofi_op *o)
{
	struct fi_msg msg = {
	    .msg_iov = o->iov,
	    .desc = o->desc,
	    .iov_count = o->niov,
	    .context = o,
	};

	return errmap(fi_recvmsg(c->ep, &msg, FI_COMPLETION));
}

static int ofi_accept(struct rpcrdma_prov_conn *bc, const void *pdata, size_t pdlen)
{
	struct ofi_conn *c = conn_of(bc);
	struct ofi_op *o;
	int ret;

	ret = check_private(pdata, pdlen);
	if (ret)
		return ret;
	if (bc->state != RPCRDMA_PCONN_REQUESTED || !c->req_info)
		return -ENOTCONN;
	ret = ep_open(c, c->req_info);
	if (c->ep) {
		/* The endpoint owns the request (its socket) now: it must
		 * not be rejected as well. */
		fi_freeinfo(c->req_info);
		c->req_info = NULL;
		c->listener = NULL;
	}
	if (ret)
		goto out_fail;
	/* ORDER: receives before accept, so the peer's first Send finds one. */
	while ((o = c->queued)) {
		c->queued = o->next;
		o->next = NULL;
		ret = post_recv_now(c, o);
		if (ret)
			goto out_fail;
	}
	c->queued_tail = &c->queued;
	c->p->eq_due = true; /* its answer comes on the EQ */
	ret = fi_accept(c->ep, pdlen ? pdata : NULL, pdlen);
	if (ret) {
		ret = errmap(ret);
		goto out_fail;
	}
	bc->state = RPCRDMA_PCONN_CONNECTING;
	return 0;

out_fail:
	/* Without an endpoint the request is rejected; with one, closing it
	 * closes the request's socket.  Either way the peer sees the attempt
	 * fail, and receives queued here are flushed. */
	conn_teardown(c, NULL);
	return ret;
}

static int ofi_reject(struct rpcrdma_prov_conn *bc, const void *pdata, size_t pdlen)
{
	struct ofi_conn *c = conn_of(bc);
	int ret;

	ret = check_private(pdata, pdlen);
	if (ret)
		return ret;
	if (bc->state != RPCRDMA_PCONN_REQUESTED || !c->req_info)
		return -ENOTCONN;
	/* Whatever fi_reject said, the request is finished with. */
	ret = req_refuse(c->p, c->listener, c->req_info, pdata, pdlen);
	c->req_info = NULL;
	c->p->st.conns_rejected++;
	conn_teardown(c, NULL);
	return errmap(ret);
}

static int ofi_conn_handoff(struct rpcrdma_prov_conn *bc, struct rpcrdma_provider *to, void *ctx)
{
	struct ofi_conn *c = conn_of(bc);
	struct ofi_prov *dst;
	struct ofi_handoff *h;

	if (!to || to == bc->prov)
		return -EINVAL;
	if (to->ops != bc->prov->ops)
		return -EOPNOTSUPP;
	dst = prov_of(to);
	if (dst->failed || dst->inbox.efd < 0)
		return -EOPNOTSUPP;
	if (bc->state != RPCRDMA_PCONN_REQUESTED || !c->req_info || c->ep || c->queued)
		return -ENOTCONN;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->info = c->req_info;
	h->attr = bc->attr;
	h->ctx = ctx;
	memcpy(&h->peer, &bc->peer_addr, sizeof(h->peer));
	h->peerlen = bc->peer_addrlen;
	h->pdlen = c->req_pdlen;
	memcpy(h->pdata, c->req_pdata, c->req_pdlen);
	/* The request is the new owner's: forget it here without refusing. */
	c->req_info = NULL;
	bc->state = RPCRDMA_PCONN_CLOSED;
	c->p->st.conns_handed_off++;
	conn_free(c);
	return rpcrdma__provider_inbox_push(&dst->inbox, &h->item);
}

static int ofi_disconnect(struct rpcrdma_prov_conn *bc)
{
	struct ofi_conn *c = conn_of(bc);

	switch (bc->state) {
	case RPCRDMA_PCONN_CLOSED:
		return 0;
	case RPCRDMA_PCONN_IDLE:
		return -ENOTCONN;
	case RPCRDMA_PCONN_REQUESTED:
		return -EINVAL; /* reject it instead */
	case RPCRDMA_PCONN_CONNECTING:
	case RPCRDMA_PCONN_ESTABLISHED:
		break;
	}
	/* fi_shutdown sends what is queued and a FIN, so the peer sees an
	 * orderly FI_SHUTDOWN; we end the connection here rather than wait
	 * for our own FI_SHUTDOWN event. */
	c->p->eq_due = true; /* its answer comes on the EQ */
	(void)fi_shutdown(c->ep, 0);
	if (bc->state == RPCRDMA_PCONN_CONNECTING && !c->passive)
		conn_end(c, RPCRDMA_PEV_CONNECT_ERROR, -ECONNABORTED, NULL, 0);
	else
		conn_end(c, RPCRDMA_PEV_DISCONNECTED, 0, NULL, 0);
	return 0;
}

static void ofi_conn_destroy(struct rpcrdma_prov_conn *bc)
{
	conn_free(conn_of(bc));
}

static void *sge_desc(const struct rpcrdma_prov_sge *s)
{
	return s->mr ? rpcrdma__container_of(s->mr, struct ofi_mr, base)->desc : NULL;
}

static bool can_send(const struct ofi_conn *c)
{
	/* WARNING: not before ESTABLISHED, even on the accepting side.  On
	 * tcp 1.17 the accept's reply leaves during the EQ progress that
	 * reports FI_CONNECTED; a Send posted after fi_accept but before that
	 * overtook it on the socket and the peer's handshake failed. */
	return c->ep && c->base.state == RPCRDMA_PCONN_ESTABLISHED && !c->closing;
}

static int ofi_post_recv(struct rpcrdma_prov_conn *bc, const struct rpcrdma_prov_sge *sgl,
                         unsigned int nsge, void *ctx)
{
	struct ofi_conn *c = conn_of(bc);
	int64_t total =
	    rpcrdma__provider_sgl_check(bc->prov, sgl, nsge, bc->prov->caps.max_recv_sge, false);
	struct ofi_op *o;
	int ret;

	if (total < 0)
		return (int)total;
	if (total > UINT32_MAX)
		return -EINVAL;
	if (bc->state == RPCRDMA_PCONN_CLOSED || c->closing)
		return -ENOTCONN;
	o = op_get(c, true);
	if (!o)
		return -EAGAIN;
	o->ctx = ctx;
	o->pending = 1;
	o->niov = nsge;
	for (unsigned int i = 0; i < nsge; i++) {
		o->iov[i].iov_base = sgl[i].addr;
		o->iov[i].iov_len = sgl[i].length;
		o->desc[i] = sge_desc(&sgl[i]);
	}
	if (bc->state == RPCRDMA_PCONN_REQUESTED) {
		/* No endpoint until accept: keep it until then. */
		*c->queued_tail = o;
		c->queued_tail = &o->next;
	} else {
		ret = post_recv_now(c, o);
		if (ret) {
			op_put(c, o);
			return ret == -FI_EAGAIN ? -EAGAIN : ret;
		}
	}
	c->p->st.recvs++;
	c->p->st.work_requests++;
	return 0;
}

static int ofi_post_send(struct rpcrdma_prov_conn *bc, const struct rpcrdma_prov_sge *sgl,
                         unsigned int nsge, unsigned int flags, uint32_t inv_handle, void *ctx)
{
	struct ofi_conn *c = conn_of(bc);
	const struct rpcrdma_prov_caps *caps = &bc->prov->caps;
	bool inl = flags & RPCRDMA_PSEND_INLINE;
	struct iovec iov[OFI_SGE_MAX];
	void *desc[OFI_SGE_MAX];
	struct fi_msg msg;
	struct ofi_op *o;
	int64_t total;
	ssize_t ret;

	(void)inv_handle;
	if (flags & ~(unsigned int)(RPCRDMA_PSEND_INVALIDATE | RPCRDMA_PSEND_INLINE))
		return -EINVAL;
	if (flags & RPCRDMA_PSEND_INVALIDATE)
		return -EOPNOTSUPP; /* tcp has no Send With Invalidate */
	total = rpcrdma__provider_sgl_check(bc->prov, sgl, nsge, caps->max_send_sge,
					    inl || (caps->flags & RPCRDMA_PCAP_SEND_UNREGISTERED));
	if (total < 0)
		return (int)total;
	if (total > caps->max_msg_size || (inl && total > caps->max_inline))
		return -EINVAL;
	if (!can_send(c))
		return -ENOTCONN;
	if (!c->tx_credits)
		return -EAGAIN;
	o = op_get(c, false);
	if (!o)
		return -EAGAIN;
	for (unsigned int i = 0; i < nsge; i++) {
		iov[i].iov_base = sgl[i].addr;
		iov[i].iov_len = sgl[i].length;
		desc[i] = sge_desc(&sgl[i]);
	}
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = iov;
	msg.desc = desc;
	msg.iov_count = nsge;
	msg.context = o;
	o->op = RPCRDMA_POP_SEND;
	o->ctx = ctx;
	o->pending = 1;
	o->byte_len = (uint32_t)total;
	/* FI_INJECT copies the payload now and still reports completion. */
	ret = fi_sendmsg(c->ep, &msg, FI_COMPLETION | (inl ? FI_INJECT : 0));
	if (ret) {
		op_put(c, o);
		return ret == -FI_EAGAIN ? -EAGAIN : errmap(ret);
	}
	c->tx_credits--;
	c->p->st.sends++;
	c->p->st.work_requests++;
	c->p->cq_probably_dry = false; /* see post_rma */
	return 0;
}

/*
 * RDMA Read and Write.  One caller operation may need several libfabric
 * calls, each of at most iov_limit local and rma_iov_limit remote entries
 * (rpcrdma__provider_rma_next cuts them).  The slot counts them down.
 */
static int rma_call(struct ofi_conn *c, const struct rpcrdma_prov_rma_piece *pc, struct ofi_op *o,
                    bool write)
{
	void *desc[RPCRDMA_PROV_MAX_SGE];
	struct fi_rma_iov rma[RPCRDMA_PROV_MAX_RSEGS];
	struct fi_msg_rma msg = {
	    .msg_iov = pc->local,
	    .desc = desc,
	    .iov_count = pc->nlocal,
	    .rma_iov = rma,
	    .rma_iov_count = pc->nremote,
	    .context = o,
	};
	ssize_t ret;

	for (unsigned int i = 0; i < pc->nlocal; i++)
		desc[i] = sge_desc(pc->local_sge[i]);
	for (unsigned int i = 0; i < pc->nremote; i++) {
		rma[i].addr = pc->remote[i].offset;
		rma[i].len = pc->remote[i].length;
		rma[i].key = pc->remote[i].handle;
	}
	ret = write ? fi_writemsg(c->ep, &msg, FI_COMPLETION)
	            : fi_readmsg(c->ep, &msg, FI_COMPLETION);
	return ret == -FI_EAGAIN ? -EAGAIN : errmap(ret);
}

static int post_rma(struct rpcrdma_prov_conn *bc, const struct rpcrdma_prov_sge *sgl,
                    unsigned int nsge, const struct rpcrdma_prov_rseg *segs, unsigned int nseg,
                    void *ctx, bool write)
{
	struct ofi_conn *c = conn_of(bc);
	struct ofi_prov *p = c->p;
	unsigned int lmax = bc->prov->caps.max_rdma_sge, rmax = (unsigned int)p->rma_iov_limit;
	struct rpcrdma_prov_rma_cursor cur;
	struct rpcrdma_prov_rma_piece piece;
	unsigned int calls = 0, posted = 0;
	struct ofi_op *o;
	int64_t total;
	int ret;

	total = rpcrdma__provider_rma_check(bc->prov, sgl, nsge, segs, nseg);
	if (total < 0)
		return (int)total;
	if (!can_send(c))
		return -ENOTCONN;

	memset(&cur, 0, sizeof(cur));
	while (rpcrdma__provider_rma_next(&cur, sgl, nsge, segs, nseg, lmax, rmax, &piece))
		calls++;
	if (calls > c->tx_credits)
		return -EAGAIN;
	o = op_get(c, false);
	if (!o)
		return -EAGAIN;
	o->op = write ? RPCRDMA_POP_WRITE : RPCRDMA_POP_READ;
	o->ctx = ctx;
	o->byte_len = (uint32_t)total;
	o->pending = calls;

	memset(&cur, 0, sizeof(cur));
	while (rpcrdma__provider_rma_next(&cur, sgl, nsge, segs, nseg, lmax, rmax, &piece)) {
		ret = rma_call(c, &piece, o, write);
		if (ret) {
			if (!posted) {
				op_put(c, o);
				return ret;
			}
			/* Some pieces are on the wire and cannot be taken
			 * back: the operation completes, failed, when they
			 * do. */
			o->status = RPCRDMA_PST_OTHER;
			o->error = ret;
			o->pending = posted;
			break;
		}
		c->tx_credits--;
		posted++;
	}
	if (write) {
		p->st.writes++;
		/* tcp completes a Send or RDMA Write that the socket took
		 * whole inside the post: read the CQ again before trywait,
		 * which would only say "poll again" and cost a loop turn. */
		p->cq_probably_dry = false;
	} else {
		p->st.reads++;
	}
	p->st.work_requests += posted;
	return 0;
}

static int ofi_post_read(struct rpcrdma_prov_conn *c, const struct rpcrdma_prov_sge *sgl,
                         unsigned int nsge, const struct rpcrdma_prov_rseg *segs, unsigned int nseg,
                         void *ctx)
{
	return post_rma(c, sgl, nsge, segs, nseg, ctx, false);
}

static int ofi_post_write(struct rpcrdma_prov_conn *c, const struct rpcrdma_prov_sge *sgl,
                          unsigned int nsge, const struct rpcrdma_prov_rseg *segs,
                          unsigned int nseg, void *ctx)
{
	return post_rma(c, sgl, nsge, segs, nseg, ctx, true);
}

/*
 * Open and close.
 */
static void ofi_close(struct rpcrdma_provider *b)
{
	struct ofi_prov *p = prov_of(b);

	if (p->eq)
		eq_drain(p);
	while (!rpcrdma__list_empty(&p->conns))
		conn_free(rpcrdma__container_of(p->conns.next, struct ofi_conn, node));
	while (!rpcrdma__list_empty(&p->listeners))
		ofi_listener_close(
		    &rpcrdma__container_of(p->listeners.next, struct ofi_listener, node)->base);
	while (!rpcrdma__list_empty(&p->grants)) {
		struct ofi_grant *g = rpcrdma__container_of(p->grants.next, struct ofi_grant, node);

		fi_close(&g->mr->fid);
		rpcrdma__list_del(&g->node);
		free(g);
	}
	while (!rpcrdma__list_empty(&p->mrs))
		ofi_dereg_mr(&rpcrdma__container_of(p->mrs.next, struct ofi_mr, node)->base);
	for (struct rpcrdma_prov_inbox_item *it = rpcrdma__provider_inbox_take(&p->inbox), *n; it;
	     it = n) {
		struct ofi_handoff *h = rpcrdma__container_of(it, struct ofi_handoff, item);

		n = it->next;
		(void)req_refuse(p, NULL, h->info, NULL, 0);
		free(h);
	}
	rpcrdma__provider_inbox_destroy(&p->inbox);
	if (p->refuser)
		fi_close(&p->refuser->fid);
	if (p->epfd >= 0)
		close(p->epfd);
	if (p->cq)
		fi_close(&p->cq->fid);
	if (p->eq)
		fi_close(&p->eq->fid);
	if (p->domain)
		fi_close(&p->domain->fid);
	if (p->fabric)
		fi_close(&p->fabric->fid);
	fi_freeinfo(p->ep_info);
	fi_freeinfo(p->info);
	rpcrdma__provider_evq_free(&p->q);
	explicit_bzero(&p->keys, sizeof(p->keys));
	free(p);
}

static struct fi_info *make_hints(const struct rpcrdma_prov_open_attr *attr, size_t queue)
{
	struct fi_info *h = fi_allocinfo();
	struct sockaddr_storage *src;

	if (!h)
		return NULL;
	h->ep_attr->type = FI_EP_MSG;
	h->caps = FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_SEND | FI_RECV | FI_REMOTE_READ |
	          FI_REMOTE_WRITE;
	h->mode = 0;
	/* Offer every mode bit we can live with, then adapt to the answer. */
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	h->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	/* One thread drives an instance (provider.h). */
	h->domain_attr->threading = FI_THREAD_DOMAIN;
	h->tx_attr->size = queue;
	h->rx_attr->size = queue;
	h->addr_format = attr->addr->sa_family == AF_INET6 ? FI_SOCKADDR_IN6 : FI_SOCKADDR_IN;
	/* Exactly tcp: never shm, whose fast path enforces no protection. */
	h->fabric_attr->prov_name = strdup("tcp");
	src = calloc(1, sizeof(*src));
	if (!h->fabric_attr->prov_name || !src) {
		free(src);
		fi_freeinfo(h);
		return NULL;
	}
	memcpy(src, attr->addr, sockaddr_size(attr->addr));
	if (attr->addr->sa_family == AF_INET6)
		((struct sockaddr_in6 *)(void *)src)->sin6_port = 0;
	else
		((struct sockaddr_in *)(void *)src)->sin_port = 0;
	h->src_addr = src;
	h->src_addrlen = sockaddr_size(attr->addr);
	return h;
}

static int pick_info(const struct rpcrdma_prov_open_attr *attr, struct fi_info **out)
{
	static const size_t queues[] = {OFI_QUEUE_WANT, 0};
	int ret = -ENODEV;

	for (size_t i = 0; i < sizeof(queues) / sizeof(queues[0]); i++) {
		struct fi_info *hints = make_hints(attr, queues[i]), *list = NULL, *it;

		if (!hints)
			return -ENOMEM;
		ret = fi_getinfo(OFI_API_VERSION, NULL, NULL, 0, hints, &list);
		fi_freeinfo(hints);
		if (ret == -FI_ENODATA) {
			ret = -ENODEV;
			continue; /* maybe the queue size: ask for the default */
		}
		if (ret)
			return errmap(ret);
		for (it = list; it; it = it->next)
			if (it->fabric_attr && it->fabric_attr->prov_name &&
			    strcmp(it->fabric_attr->prov_name, "tcp") == 0 && it->ep_attr &&
			    it->ep_attr->type == FI_EP_MSG)
				break;
		*out = it ? fi_dupinfo(it) : NULL;
		fi_freeinfo(list);
		if (!it)
			return -ENODEV;
		return *out ? 0 : -ENOMEM;
	}
	return ret;
}

static int ofi_open(const struct rpcrdma_prov_open_attr *attr, struct rpcrdma_provider **out)
{
	struct fi_eq_attr eq_attr = {.size = OFI_EQ_SIZE, .wait_obj = FI_WAIT_FD};
	struct fi_cq_attr cq_attr = {
	    .size = OFI_CQ_SIZE,
	    .format = FI_CQ_FORMAT_DATA,
	    .wait_obj = FI_WAIT_FD,
	};
	struct rpcrdma_prov_caps *caps;
	struct epoll_event ee;
	struct ofi_prov *p;
	uint64_t mm;
	int fds[2];
	int ret;

	if (!attr || !attr->addr || !out ||
	    (attr->addr->sa_family != AF_INET && attr->addr->sa_family != AF_INET6) ||
	    attr->addrlen < (socklen_t)sockaddr_size(attr->addr))
		return -EINVAL;
	psm_signals_reset();
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->base.ops = &rpcrdma__provider_ofi_ops;
	p->epfd = -1;
	p->inbox.efd = -1;
	rpcrdma__list_init(&p->conns);
	rpcrdma__list_init(&p->listeners);
	rpcrdma__list_init(&p->mrs);
	rpcrdma__list_init(&p->grants);
	ret = rpcrdma__provider_evq_init(&p->q);
	if (ret)
		goto out_close;

	ret = pick_info(attr, &p->info);
	psm_signals_reset(); /* fi_getinfo loads the providers' libraries */
	if (ret)
		goto out_close;
	mm = p->info->domain_attr->mr_mode;
	if (mm & (FI_MR_ENDPOINT | FI_MR_RAW | FI_MR_MMU_NOTIFY | FI_MR_RMA_EVENT | FI_MR_HMEM) ||
	    p->info->domain_attr->mr_key_size < sizeof(uint32_t)) {
		ret = -EOPNOTSUPP;
		goto out_close;
	}
	p->virt_addr = mm & FI_MR_VIRT_ADDR;
	p->prov_key = mm & FI_MR_PROV_KEY;
	p->ep_info = fi_dupinfo(p->info);
	if (!p->ep_info) {
		ret = -ENOMEM;
		goto out_close;
	}

	ret = fi_fabric(p->info->fabric_attr, &p->fabric, NULL);
	if (!ret)
		ret = fi_domain(p->fabric, p->info, &p->domain, NULL);
	if (!ret)
		ret = fi_eq_open(p->fabric, &eq_attr, &p->eq, NULL);
	if (!ret)
		ret = fi_cq_open(p->domain, &cq_attr, &p->cq, NULL);
	if (!ret)
		ret = fi_control(&p->cq->fid, FI_GETWAIT, &fds[0]);
	if (!ret)
		ret = fi_control(&p->eq->fid, FI_GETWAIT, &fds[1]);
	if (ret) {
		ret = errmap(ret);
		goto out_close;
	}
	/* One fd for the owner: an epoll set holding the CQ's and the EQ's
	 * wait fds (the EQ's leaves it for ofi_cm_fd). */
	p->eq_fd = fds[1];
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p->epfd < 0) {
		ret = -errno;
		goto out_close;
	}
	for (int i = 0; i < 2; i++) {
		memset(&ee, 0, sizeof(ee));
		ee.events = EPOLLIN;
		ee.data.fd = fds[i];
		if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, fds[i], &ee)) {
			ret = -errno;
			goto out_close;
		}
	}
	ret = rpcrdma__provider_inbox_init(&p->inbox, p->epfd);
	if (ret)
		goto out_close;

	p->rma_iov_limit = p->info->tx_attr->rma_iov_limit;
	if (p->rma_iov_limit > RPCRDMA_PROV_MAX_RSEGS)
		p->rma_iov_limit = RPCRDMA_PROV_MAX_RSEGS;
	if (!p->rma_iov_limit || !p->info->tx_attr->iov_limit || !p->info->rx_attr->iov_limit) {
		ret = -EOPNOTSUPP;
		goto out_close;
	}
	/* A Read/Write needs one call per rma_iov_limit segments (local
	 * entries never force a split: max_rdma_sge <= iov_limit). */
	p->split =
	    (unsigned int)((RPCRDMA_PROV_MAX_RSEGS + p->rma_iov_limit - 1) / p->rma_iov_limit);
	caps = &p->base.caps;
	/* Not RPCRDMA_PCAP_REVOKE_FENCES_INFLIGHT: tcp checks a key once, as
	 * an RDMA request arrives, and a transfer under way outlives the
	 * fi_close of its registration (ofi_revoke); only fi_close of the
	 * endpoint stops it. */
	caps->flags = RPCRDMA_PCAP_PER_OP_REVOKE | RPCRDMA_PCAP_EXACT_PRIVATE_LEN |
		      RPCRDMA_PCAP_REG_BY_ADDRESS | RPCRDMA_PCAP_CPU_PLACEMENT;
	if (!(mm & FI_MR_LOCAL))
		caps->flags |= RPCRDMA_PCAP_SEND_UNREGISTERED;
	caps->max_send_sge =
	    (uint32_t)(p->info->tx_attr->iov_limit < OFI_SGE_MAX ? p->info->tx_attr->iov_limit
	                                                         : OFI_SGE_MAX);
	caps->max_recv_sge =
	    (uint32_t)(p->info->rx_attr->iov_limit < OFI_SGE_MAX ? p->info->rx_attr->iov_limit
	                                                         : OFI_SGE_MAX);
	caps->max_rdma_sge = caps->max_send_sge;
	caps->max_rdma_segs = RPCRDMA_PROV_MAX_RSEGS;
	caps->max_inline =
	    (uint32_t)(p->info->tx_attr->inject_size < UINT32_MAX ? p->info->tx_attr->inject_size
	                                                          : UINT32_MAX);
	caps->max_send_depth = (uint32_t)(p->info->tx_attr->size / p->split);
	caps->max_recv_depth = (uint32_t)p->info->rx_attr->size;
	caps->max_read_depth = caps->max_send_depth;
	caps->max_msg_size =
	    (uint32_t)(p->info->ep_attr->max_msg_size < UINT32_MAX ? p->info->ep_attr->max_msg_size
	                                                           : UINT32_MAX);
	caps->max_private_data = RPCRDMA_PROV_PRIVATE_MAX;
	if (!caps->max_send_depth || !caps->max_recv_depth) {
		ret = -EOPNOTSUPP;
		goto out_close;
	}
	*out = &p->base;
	return 0;

out_close:
	ofi_close(&p->base);
	return ret;
}

const struct rpcrdma_provider_ops rpcrdma__provider_ofi_ops = {
    .name = "ofi",
    .open = ofi_open,
    .close = ofi_close,
    .fd = ofi_fd,
    .poll = ofi_poll,
    .trywait = ofi_trywait,
    .cm_fd = ofi_cm_fd,
    .cm_ready = ofi_cm_ready,
    .stats = ofi_stats,
    .reg_mr = ofi_reg_mr,
    .dereg_mr = ofi_dereg_mr,
    .grant = ofi_grant,
    .revoke = ofi_revoke,
    .listen = ofi_listen,
    .listener_addr = ofi_listener_addr,
    .listener_close = ofi_listener_close,
    .listener_cut_stale = ofi_listener_cut_stale,
    .conn_create = ofi_conn_create,
    .conn_handoff = ofi_conn_handoff,
    .connect = ofi_connect,
    .accept = ofi_accept,
    .reject = ofi_reject,
    .disconnect = ofi_disconnect,
    .conn_destroy = ofi_conn_destroy,
    .post_recv = ofi_post_recv,
    .post_send = ofi_post_send,
    .post_read = ofi_post_read,
    .post_write = ofi_post_write,
};
