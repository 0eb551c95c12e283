/*
 * The client half of the TI-RPC layer: a libtirpc CLIENT whose clnt_ops
 * make each clnt_call() an rpcrdma_client_call() on a loop the CLIENT
 * owns.  The arguments and results are encoded and decoded by the
 * caller's xdrproc_t routines on the call's own streams (tirpc_xdr.c);
 * a binding's DDP-eligible result lands in a Write chunk of the CLIENT's
 * landing buffer and is moved into the caller's result by the library's
 * decode (ddp.c), since rpcgen's routines allocate the result only while
 * decoding, after the chunk had to be offered.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/call_cause.h"
#include "rpc/service_port.h"
#include "rpcrdma/header.h"
#include "tirpc/tirpc_xdr.h"

/* As TCP's largest record by default (rpc.h): 1 MiB of data and its headers. */
#define DEFAULT_MAX_REPLY ((1u << 20) + (64u << 10))

struct tclnt {
	CLIENT cl;
	struct rpcrdma_loop *loop;
	struct rpcrdma_client *c;
	enum rpcrdma_transport transport;
	struct rpcrdma_tirpc_binding *binding;
	size_t max_reply;
	struct timeval timeout;
	bool timeout_set;
	struct rpc_err err;
	uint32_t prog, vers, xid;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	void *land; /* the Write chunk for a DDP-eligible result */
	size_t land_len;
	/* What remakes the client when the caller sets another cl_auth. */
	struct rpcrdma_client_opts co;
	char *provider;
	char host[INET6_ADDRSTRLEN], port[8];
	struct rpcrdma_opaque_auth cred_sent; /* what t->c sends */
	/* Why the last clnt_call() failed, in words ("" after a success):
	 * what rpc_err cannot carry (rpcrdma_tirpc_clnt_strerror()). */
	char why[320];
};

/* One direction of one call: the caller's routine and object. */
struct txdr_obj {
	xdrproc_t proc;
	void *where;
	uint32_t ddp_items;
	int err;
};

static int run_xdr(struct rpcrdma_xdr_stream *s, struct txdr_obj *o, enum xdr_op op)
{
	struct rpcrdma__txdr t;
	XDR x;

	/* The core encodes again into more room after RPCRDMA_ERR_NOSPACE:
	 * only the last attempt's failure is the call's. */
	o->err = 0;
	if (!o->proc)
		return 0;
	rpcrdma__txdr_init(&x, &t, s, op, o->ddp_items);
	if ((*o->proc)(&x, o->where))
		return 0;
	o->err = t.err ? t.err : RPCRDMA_ERR_BAD_VALUE;
	/*
	 * Results that fail to decode part-way: free what the items before
	 * the failure allocated, since a caller seeing RPC_CANTDECODERES
	 * (rpcgen's stubs) does not call clnt_freeres().  XDR_FREE leaves the
	 * pointers NULL, so one that does frees nothing twice.  Arguments
	 * that fail to encode are the caller's own.
	 */
	if (op == XDR_DECODE)
		xdr_free(o->proc, o->where);
	return o->err;
}

static int enc_args(struct rpcrdma_xdr_stream *s, void *obj)
{
	return run_xdr(s, obj, XDR_ENCODE);
}

static int dec_res(struct rpcrdma_xdr_stream *s, void *obj)
{
	return run_xdr(s, obj, XDR_DECODE);
}

static void set_err_from_reply(struct rpc_err *e, const struct rpcrdma_rpc_reply *r)
{
	if (r->stat == RPCRDMA_RPC_MSG_ACCEPTED) {
		switch (r->accept_stat) {
		case RPCRDMA_RPC_PROG_UNAVAIL:
			e->re_status = RPC_PROGUNAVAIL;
			return;
		case RPCRDMA_RPC_PROG_MISMATCH:
			e->re_status = RPC_PROGVERSMISMATCH;
			e->re_vers.low = r->mismatch_low;
			e->re_vers.high = r->mismatch_high;
			return;
		case RPCRDMA_RPC_PROC_UNAVAIL:
			e->re_status = RPC_PROCUNAVAIL;
			return;
		case RPCRDMA_RPC_GARBAGE_ARGS:
			e->re_status = RPC_CANTDECODEARGS;
			return;
		default:
			e->re_status = RPC_SYSTEMERROR;
			return;
		}
	}
	if (r->reject_stat == RPCRDMA_RPC_AUTH_ERROR) {
		e->re_status = RPC_AUTHERROR;
		e->re_why = (enum auth_stat)r->auth_stat;
		return;
	}
	e->re_status = RPC_VERSMISMATCH;
	e->re_vers.low = r->mismatch_low;
	e->re_vers.high = r->mismatch_high;
}

/*
 * The errno nearest to an error of this library, for the rpc_err of a
 * failed call or creation: libtirpc's clnt_sperror() and
 * clnt_spcreateerror() print an errno and nothing of ours, and "Failed
 * (unspecified error)" would not tell an RDMA client at a TCP port (or
 * the other way round) what to fix.
 */
static int errno_of(int rc)
{
	if (rc == RPCRDMA_ERR_BAD_HEADER)
		return EBADMSG;
	if (rc > -4096)
		return -rc;
	switch (rc) {
	case RPCRDMA_ERR_NOT_RDMA_PEER:
	case RPCRDMA_ERR_NOT_TCP_PEER:
		return EPROTONOSUPPORT;
	case RPCRDMA_ERR_NO_PROVIDER:
		return ENOPROTOOPT;
	case RPCRDMA_ERR_NO_RDMA_DEVICE:
		return ENODEV;
	case RPCRDMA_ERR_NO_SERVICE:
		return EINVAL;
	case RPCRDMA_ERR_TIMEDOUT:
		return ETIMEDOUT;
	default:
		return EPROTO;
	}
}

/*
 * The errno for a call the server answered with RDMA_ERROR, by its code:
 * clnt_sperror() prints only an errno beside "Can't receive", so pick the
 * one that reads nearest to the cause.
 */
static int errno_of_rdma_error(const struct rpcrdma_call *call)
{
	struct rpcrdma__call_cause k;

	if (!rpcrdma__call_cause_load(call, &k) || k.kind != RPCRDMA__CAUSE_RDMA_ERROR)
		return EPROTO;
	switch (k.code) {
	case RPCRDMA_ERR_VERS:
		return EPROTONOSUPPORT;
	case RPCRDMA_ERR_CHUNK:
		return EMSGSIZE; /* a reply or call beyond what the chunks allow */
	default:
		return EPROTO;
	}
}

/* A cl_auth the core cannot send, @t->why saying why.  Returns -EINVAL. */
static int auth_refused(struct tclnt *t, const AUTH *auth)
{
	if (!auth)
		snprintf(t->why, sizeof(t->why),
			 "the CLIENT has no cl_auth (set AUTH_NONE: "
			 "authnone_create())");
	else if (auth->ah_cred.oa_flavor != AUTH_NONE && auth->ah_cred.oa_flavor != AUTH_SYS)
		snprintf(t->why, sizeof(t->why),
			 "cl_auth's flavor %d cannot be sent over this library: AUTH_NONE and "
			 "AUTH_SYS only",
			 (int)auth->ah_cred.oa_flavor);
	else if (auth->ah_cred.oa_length > RPCRDMA_AUTH_BODY_MAX)
		snprintf(t->why, sizeof(t->why),
			 "cl_auth's credential is %u bytes: ONC RPC allows at most %u "
			 "(RFC 5531 8.2, RPCRDMA_AUTH_BODY_MAX)",
			 (unsigned int)auth->ah_cred.oa_length, RPCRDMA_AUTH_BODY_MAX);
	else
		snprintf(t->why, sizeof(t->why),
			 "cl_auth's credential is %u bytes long but has no body (oa_base NULL)",
			 (unsigned int)auth->ah_cred.oa_length);
	return -EINVAL;
}

static int land_room(struct tclnt *t, size_t len)
{
	void *p;

	if (t->land_len >= len)
		return 0;
	p = realloc(t->land, len);
	if (!p)
		return -ENOMEM;
	t->land = p;
	t->land_len = len;
	return 0;
}

static int timeout_ms(struct timeval tv)
{
	long long ms;

	if (tv.tv_sec < 0 || tv.tv_usec < 0)
		return 1;
	/* Checked before multiplying: {LONG_MAX, 0} ("for ever") wrapped
	 * negative and became 1 ms. */
	if (tv.tv_sec > 0x7fffffff / 1000 || tv.tv_usec / 1000 > 0x7fffffff)
		return 0x7fffffff;
	ms = (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
	if (ms < 1)
		return 1; /* libtirpc's "do not wait"; we wait the least we can */
	return ms > 0x7fffffff ? 0x7fffffff : (int)ms;
}

/*
 * The core sends one credential, fixed when its client is made, so a
 * cl_auth with another credential (rpcgen clients set
 * authunix_create_default() after creating the CLIENT) makes a new client
 * that sends it; the connection is made again at the next call.  Compared
 * by content, not by pointer: a new AUTH may take a destroyed one's
 * address.  AUTH_NONE and AUTH_SYS only: their credential is the same on
 * every call and their verifier empty.
 */
static int use_auth(struct tclnt *t, const AUTH *auth)
{
	struct rpcrdma_opaque_auth cred;
	struct rpcrdma_client *c;
	int rc;

	if (!auth ||
	    (auth->ah_cred.oa_flavor != AUTH_NONE && auth->ah_cred.oa_flavor != AUTH_SYS) ||
	    auth->ah_cred.oa_length > RPCRDMA_AUTH_BODY_MAX ||
	    (auth->ah_cred.oa_length && !auth->ah_cred.oa_base))
		return auth_refused(t, auth);
	memset(&cred, 0, sizeof(cred));
	cred.flavor = (uint32_t)auth->ah_cred.oa_flavor;
	cred.len = auth->ah_cred.oa_length;
	if (cred.len)
		memcpy(cred.body, auth->ah_cred.oa_base, cred.len);
	if (memcmp(&cred, &t->cred_sent, sizeof(cred)) == 0)
		return 0;
	t->co.cred = &cred;
	rc = rpcrdma_client_create(t->loop, t->host, t->port, t->prog, t->vers, &t->co, &c);
	t->co.cred = NULL;
	if (rc)
		return rc;
	rpcrdma_client_destroy(t->c);
	t->c = c;
	t->cred_sent = cred;
	return 0;
}

static enum clnt_stat tc_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs, void *argsp,
			      xdrproc_t xres, void *resp, struct timeval tout)
{
	struct tclnt *t = cl->cl_private;
	const struct rpcrdma_tirpc_proc *b = rpcrdma__tirpc_proc_for(t->binding, proc);
	struct txdr_obj a = {xargs, argsp, b ? b->args_items : 0, 0};
	struct txdr_obj r = {xres, resp, b ? b->res_items : 0, 0};
	struct rpcrdma_call call;
	int rc;

	memset(&t->err, 0, sizeof(t->err));
	t->why[0] = '\0';
	rc = use_auth(t, cl->cl_auth);
	if (rc == -EINVAL) {
		/* A flavor the core cannot send: never AUTH_NONE instead. */
		t->err.re_status = RPC_AUTHERROR;
		t->err.re_why = AUTH_BADCRED;
		return RPC_AUTHERROR;
	}
	if (rc) {
		snprintf(t->why, sizeof(t->why), "a client for the new cl_auth: %s",
			 rpcrdma_strerror(rc));
		t->err.re_status = RPC_SYSTEMERROR;
		t->err.re_errno = errno_of(rc);
		return RPC_SYSTEMERROR;
	}
	memset(&call, 0, sizeof(call));
	call.proc = proc;
	call.encode_args = enc_args;
	call.args = &a;
	call.decode_res = dec_res;
	call.res = &r;
	call.max_reply = t->max_reply;
	call.timeout_ms = timeout_ms(t->timeout_set ? t->timeout : tout);
	if (b && b->res_items && b->res_max && t->transport == RPCRDMA_TRANSPORT_RDMA) {
		if (land_room(t, b->res_max)) {
			t->err.re_status = RPC_SYSTEMERROR;
			t->err.re_errno = ENOMEM;
			return RPC_SYSTEMERROR;
		}
		call.ddp_buf = t->land;
		call.ddp_len = b->res_max;
		/* Saturating: SIZE_MAX wrapped to res_max - 1, which the core
		 * takes for a reply without its DDP item. */
		if (__builtin_add_overflow(call.max_reply, b->res_max, &call.max_reply))
			call.max_reply = SIZE_MAX;
	}
	rc = rpcrdma_client_call(t->c, &call);
	t->xid = call.xid;
	if (rc == 0) {
		t->err.re_status = RPC_SUCCESS;
	} else if (a.err) {
		t->err.re_status = RPC_CANTENCODEARGS;
	} else if (r.err) {
		t->err.re_status = RPC_CANTDECODERES;
	} else if (rc == RPCRDMA_ERR_RPC_REJECTED) {
		set_err_from_reply(&t->err, &call.reply);
	} else if (rc == RPCRDMA_ERR_TIMEDOUT) {
		t->err.re_status = RPC_TIMEDOUT;
	} else if (rc == RPCRDMA_ERR_TRANSPORT_ERROR) {
		t->err.re_status = RPC_CANTRECV;
		t->err.re_errno = errno_of_rdma_error(&call);
	} else if (rc == RPCRDMA_ERR_BAD_HEADER) {
		/* A reply whose chunks are not those the call offered. */
		t->err.re_status = RPC_CANTRECV;
		t->err.re_errno = EBADMSG;
	} else {
		/* Refused connections, and a peer of the other transport. */
		t->err.re_status = RPC_CANTSEND;
		t->err.re_errno = errno_of(rc);
	}
	if (rc)
		snprintf(t->why, sizeof(t->why), "%s", rpcrdma_call_strerror(&call));
	return t->err.re_status;
}

static void tc_abort(CLIENT *cl)
{
	(void)cl;
}

static void tc_geterr(CLIENT *cl, struct rpc_err *e)
{
	*e = ((struct tclnt *)cl->cl_private)->err;
}

static bool_t tc_freeres(CLIENT *cl, xdrproc_t xres, void *resp)
{
	(void)cl;
	xdr_free(xres, resp);
	return TRUE;
}

static void tc_destroy(CLIENT *cl)
{
	struct tclnt *t = cl->cl_private;

	/*
	 * cl_auth is not ours to destroy, as with libtirpc's own CLIENTs:
	 * callers do auth_destroy(cl->cl_auth) before clnt_destroy(cl), and
	 * ours, authnone_create()'s, is a shared one whose destroy does
	 * nothing.
	 */
	if (t->c)
		rpcrdma_client_destroy(t->c);
	if (t->loop)
		rpcrdma_loop_destroy(t->loop);
	free(t->binding);
	free(t->land);
	free(t->provider);
	free(t);
}

static bool_t tc_control(CLIENT *cl, u_int req, void *info)
{
	struct tclnt *t = cl->cl_private;

	if (!info)
		return FALSE;
	switch (req) {
	case CLSET_TIMEOUT: {
		const struct timeval *tv = info;

		if (tv->tv_sec < 0 || tv->tv_usec < 0 || tv->tv_usec >= 1000000)
			return FALSE;
		t->timeout = *tv;
		t->timeout_set = true;
		return TRUE;
	}
	case CLGET_TIMEOUT:
		*(struct timeval *)info = t->timeout;
		return TRUE;
	case CLGET_XID:
		*(uint32_t *)info = t->xid;
		return TRUE;
	case CLGET_PROG:
		*(uint32_t *)info = t->prog;
		return TRUE;
	case CLGET_VERS:
		*(uint32_t *)info = t->vers;
		return TRUE;
	case CLGET_SERVER_ADDR:
		memcpy(info, &t->addr, t->addrlen);
		return TRUE;
	case CLGET_SVC_ADDR: {
		struct netbuf *nb = info;

		nb->buf = &t->addr;
		nb->len = nb->maxlen = t->addrlen;
		return TRUE;
	}
	default:
		return FALSE;
	}
}

static struct clnt_ops tc_ops = {
	.cl_call = tc_call,
	.cl_abort = tc_abort,
	.cl_geterr = tc_geterr,
	.cl_freeres = tc_freeres,
	.cl_destroy = tc_destroy,
	.cl_control = tc_control,
};

static CLIENT *create_failed(struct tclnt *t, enum clnt_stat stat, int rc)
{
	/* rpc_createerr is a macro for the thread's own (libtirpc's). */
	memset(&rpc_createerr, 0, sizeof(rpc_createerr));
	rpc_createerr.cf_stat = stat;
	rpc_createerr.cf_error.re_status = stat;
	if (rc < 0)
		rpc_createerr.cf_error.re_errno = errno_of(rc);
	/*
	 * clnt_spcreateerror() prints a port mapper failure's cause from
	 * cf_error.re_status, as libtirpc's rpcb_getaddr() leaves it: "Port
	 * mapper failure - Unable to send: errno 111 (Connection refused)"
	 * when rpcbind does not listen, rather than the failure twice.
	 */
	if (stat == RPC_PMAPFAILURE)
		rpc_createerr.cf_error.re_status = rc == RPCRDMA_ERR_TIMEDOUT ? RPC_TIMEDOUT
						   : rc > -4096               ? RPC_CANTSEND
									      : RPC_CANTDECODERES;
	if (t)
		tc_destroy(&t->cl);
	return NULL;
}

CLIENT *rpcrdma_tirpc_clnt_create(const char *host, rpcprog_t prog, rpcvers_t vers,
				  const struct rpcrdma_tirpc_opts *opts)
{
	struct rpcrdma_tirpc_opts o = {0};
	struct addrinfo hints, *ai = NULL;
	char numeric[INET6_ADDRSTRLEN], port[8];
	struct tclnt *t;
	int rc;

	if (opts)
		o = *opts;
	if (!host)
		return create_failed(NULL, RPC_UNKNOWNHOST, -EINVAL);
	t = calloc(1, sizeof(*t));
	if (!t)
		return create_failed(NULL, RPC_SYSTEMERROR, -ENOMEM);
	t->cl.cl_private = t;
	t->cl.cl_ops = &tc_ops;
	t->prog = (uint32_t)prog;
	t->vers = (uint32_t)vers;
	t->transport = o.transport;
	t->max_reply = o.max_reply ? o.max_reply : DEFAULT_MAX_REPLY;
	t->timeout.tv_sec = 25;
	if (rpcrdma__tirpc_binding_copy(o.binding, &t->binding))
		return create_failed(t, RPC_SYSTEMERROR, -EINVAL);
	if (rpcrdma_loop_create(&t->loop))
		return create_failed(t, RPC_SYSTEMERROR, -ENOMEM);

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_family = o.family;
	if (o.service && rpcrdma__service_out_of_range(o.service))
		return create_failed(t, RPC_UNKNOWNHOST, RPCRDMA_ERR_NO_SERVICE);
	if (getaddrinfo(host, o.service ? o.service : "0", &hints, &ai) || !ai)
		return create_failed(t, RPC_UNKNOWNHOST, -EHOSTUNREACH);
	memcpy(&t->addr, ai->ai_addr, ai->ai_addrlen);
	t->addrlen = ai->ai_addrlen;
	freeaddrinfo(ai);
	if (t->addr.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&t->addr)->sin_addr, numeric,
			  sizeof(numeric));
	else
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&t->addr)->sin6_addr, numeric,
			  sizeof(numeric));

	if (!o.service) {
		/* RFC 8166 section 12: the port comes from rpcbind, under "rdma". */
		struct rpcrdma_rpcbind_opts ro = {numeric, NULL, 0};
		const char *netid = rpcrdma_rpcbind_netid(o.transport, t->addr.ss_family);
		char uaddr[RPCRDMA_RPCBIND_STRING_MAX + 1];
		struct sockaddr_storage found;
		socklen_t flen;

		if (!netid)
			return create_failed(t, RPC_UNKNOWNPROTO, -EINVAL);
		rc = rpcrdma_rpcbind_getaddr(t->loop, t->prog, t->vers, netid, uaddr, sizeof(uaddr),
					     &ro);
		if (rc == -ENOENT)
			return create_failed(t, RPC_PROGNOTREGISTERED, 0);
		if (rc < 0)
			return create_failed(t, RPC_PMAPFAILURE, rc);
		in_port_t port_found;

		if (rpcrdma_rpcbind_uaddr_parse(uaddr, &found, &flen))
			return create_failed(t, RPC_PMAPFAILURE, RPCRDMA_ERR_BAD_RPC);
		port_found = found.ss_family == AF_INET ? ((struct sockaddr_in *)&found)->sin_port
							: ((struct sockaddr_in6 *)&found)->sin6_port;
		/* No server listens on port 0: an rpcbind that says so answered
		 * nothing usable (the core's own look-up refuses it too). */
		if (port_found == 0)
			return create_failed(t, RPC_PMAPFAILURE, RPCRDMA_ERR_BAD_RPC);
		if (t->addr.ss_family == AF_INET)
			((struct sockaddr_in *)&t->addr)->sin_port = port_found;
		else
			((struct sockaddr_in6 *)&t->addr)->sin6_port = port_found;
	}
	snprintf(port, sizeof(port), "%u",
		 (unsigned int)ntohs(t->addr.ss_family == AF_INET
					 ? ((struct sockaddr_in *)&t->addr)->sin_port
					 : ((struct sockaddr_in6 *)&t->addr)->sin6_port));

	rpcrdma_client_opts_default(&t->co);
	t->co.transport = o.transport;
	if (o.provider) {
		t->provider = strdup(o.provider);
		if (!t->provider)
			return create_failed(t, RPC_SYSTEMERROR, -ENOMEM);
		t->co.provider = t->provider;
	}
	if (o.max_vers)
		t->co.max_vers = o.max_vers;
	memcpy(t->host, numeric, sizeof(t->host));
	memcpy(t->port, port, sizeof(t->port));
	rc = rpcrdma_client_create(t->loop, t->host, t->port, t->prog, t->vers, &t->co, &t->c);
	if (rc)
		return create_failed(t, rc == -ENOENT ? RPC_UNKNOWNPROTO : RPC_SYSTEMERROR, rc);
	t->cl.cl_auth = authnone_create();
	if (!t->cl.cl_auth)
		return create_failed(t, RPC_SYSTEMERROR, -ENOMEM);
	rpcrdma_auth_none(&t->cred_sent);
	t->cl.cl_netid = (char *)rpcrdma_rpcbind_netid(o.transport, t->addr.ss_family);
	return &t->cl;
}

CLIENT *rpcrdma_clnt_create(const char *host, rpcprog_t prog, rpcvers_t vers, const char *nettype)
{
	struct rpcrdma_tirpc_opts o = {0};

	if (!nettype || (strcmp(nettype, "rdma") != 0 && strcmp(nettype, "rdma6") != 0))
		return clnt_create(host, prog, vers, nettype);
	o.transport = RPCRDMA_TRANSPORT_RDMA;
	o.family = strcmp(nettype, "rdma6") == 0 ? AF_INET6 : AF_INET;
	return rpcrdma_tirpc_clnt_create(host, prog, vers, &o);
}

int rpcrdma_tirpc_clnt_stats(CLIENT *cl, struct rpcrdma_xprt_stats *out)
{
	if (!cl || !out || cl->cl_ops != &tc_ops)
		return -EINVAL;
	return rpcrdma_client_stats(((struct tclnt *)cl->cl_private)->c, out);
}

const char *rpcrdma_tirpc_clnt_strerror(CLIENT *cl)
{
	const struct tclnt *t;

	if (!cl || cl->cl_ops != &tc_ops)
		return NULL;
	t = cl->cl_private;
	if (t->why[0])
		return t->why;
	return t->err.re_status == RPC_SUCCESS ? "success" : clnt_sperrno(t->err.re_status);
}
