/*
 * Error descriptions for the library's own codes and for negated errno
 * values, so a caller needs one function whatever the layer that failed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "rpc/call_cause.h"
#include "rpcrdma/common.h"
#include "rpcrdma/header.h"
#include "rpcrdma/nfs4.h"
#include "rpcrdma/rpc.h"
#include "rpcrdma/rpc_msg.h"
#ifdef RPCRDMA_HAVE_RDMA_XPRT
#include "provider/provider.h"
#endif

/* "unknown RDMA provider (built in: ofi, verbs)", made once. */
static char no_provider_msg[160];
static pthread_once_t no_provider_once = PTHREAD_ONCE_INIT;

static void no_provider_init(void)
{
	size_t n = (size_t)snprintf(no_provider_msg, sizeof(no_provider_msg),
				    "unknown RDMA provider (built into this library:");
	const char *sep = " ";

#ifdef RPCRDMA_HAVE_RDMA_XPRT
	for (const char *const *p = rpcrdma__provider_names(); *p && n < sizeof(no_provider_msg);
	     p++) {
		n += (size_t)snprintf(no_provider_msg + n, sizeof(no_provider_msg) - n, "%s%s", sep,
				      *p);
		sep = ", ";
	}
#endif
	if (n < sizeof(no_provider_msg))
		snprintf(no_provider_msg + n, sizeof(no_provider_msg) - n, "%s)",
			 *sep == ' ' ? " none" : "");
}

const char *rpcrdma_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case RPCRDMA_ERR_TRUNCATED:
		return "input ends before the item";
	case RPCRDMA_ERR_TOO_LONG:
		return "length or count over the allowed bound";
	case RPCRDMA_ERR_BAD_VALUE:
		return "value not allowed by the protocol";
	case RPCRDMA_ERR_NOSPACE:
		return "encode buffer too small";
	case RPCRDMA_ERR_OVERFLOW:
		return "wire values overflow";
	case RPCRDMA_ERR_VERSION:
		return "unsupported RPC-over-RDMA version";
	case RPCRDMA_ERR_BAD_HEADER:
		return "malformed RPC-over-RDMA header";
	case RPCRDMA_ERR_DROP:
		return "message dropped";
	case RPCRDMA_ERR_BAD_OPTION:
		return "unknown RPC-over-RDMA optional feature";
	case RPCRDMA_ERR_BAD_RPC:
		return "malformed RPC message";
	case RPCRDMA_ERR_NOT_RDMA_PEER:
		return "the peer is not an RPC-over-RDMA server: the RDMA handshake failed or never "
		       "finished (is this a TCP port? use the TCP transport or the server's RDMA "
		       "port)";
	case RPCRDMA_ERR_NOT_TCP_PEER:
		return "the server reset the TCP connection at the first call, before any reply: "
		       "is this an RPC-over-RDMA port? (use the RDMA transport or the server's TCP "
		       "port; else the server was at its connection limit, or the call exceeded "
		       "its record size)";
	case RPCRDMA_ERR_NO_PROVIDER:
		pthread_once(&no_provider_once, no_provider_init);
		return no_provider_msg;
	case RPCRDMA_ERR_NO_RDMA_DEVICE:
		return "no RDMA device on this machine, or none has this address (a loopback or "
		       "other interface's address): the verbs provider needs an RDMA device, and "
		       "the address of its interface (--addr, or the host argument) except for a "
		       "server on a wildcard address, which serves every device";
	case RPCRDMA_ERR_NO_SERVICE:
		return "unknown service: neither a port number (1 to 65535, or 0 for a server's "
		       "any free port) nor a name in /etc/services (pass the port number)";
	case RPCRDMA_ERR_RPC_REJECTED:
		return "the server refused the call (rpcrdma_call_strerror() names its reply status)";
	case RPCRDMA_ERR_TRANSPORT_ERROR:
		return "the peer answered with RDMA_ERROR (rpcrdma_call_strerror() names its code)";
	case RPCRDMA_ERR_TIMEDOUT:
		return "no reply before the time-out";
	case RPCRDMA_ERR_CANCELLED:
		return "call cancelled";
	case RPCRDMA_ERR_BACKCHANNEL_OFF:
		return "the peer has not enabled reverse-direction calls";
	case RPCRDMA_ERR_NCONNECT:
		return "too many connections asked for (opts.nconnect): at most "
		       "RPCRDMA_NCONNECT_MAX (16)";
	/* Their texts live with the session code; a program that prints
	 * every failure through this function must not get "unknown error". */
	case RPCRDMA_ERR_NFS41_NO_BACKCHANNEL:
	case RPCRDMA_ERR_NFS41_NO_DELEGATION:
	case RPCRDMA_ERR_NFS41_NO_SLOT:
	case RPCRDMA_ERR_NFS41_SESSION:
		return rpcrdma_nfs41_strerror(err);
	}
	if (err < 0 && err > -4096)
		return strerror(-err);
	return "unknown error";
}

/* Why the server refused a call, by its reply status (RFC 5531 9). */
static const char *rejected_msg(const struct rpcrdma_rpc_reply *r)
{
	if (r->stat == RPCRDMA_RPC_MSG_DENIED) {
		if (r->reject_stat == RPCRDMA_RPC_MISMATCH)
			return "the server refused the call: RPC_MISMATCH (it does not speak RPC "
			       "version 2)";
		if (r->reject_stat != RPCRDMA_RPC_AUTH_ERROR)
			return "the server refused the call (MSG_DENIED, unknown reject_stat)";
		switch (r->auth_stat) {
		case RPCRDMA_AUTH_BADCRED:
			return "the server refused the call: AUTH_ERROR AUTH_BADCRED (bad "
			       "credentials: seal broken)";
		case RPCRDMA_AUTH_REJECTEDCRED:
			return "the server refused the call: AUTH_ERROR AUTH_REJECTEDCRED (the "
			       "client must begin a new session)";
		case RPCRDMA_AUTH_BADVERF:
			return "the server refused the call: AUTH_ERROR AUTH_BADVERF (bad verifier)";
		case RPCRDMA_AUTH_REJECTEDVERF:
			return "the server refused the call: AUTH_ERROR AUTH_REJECTEDVERF (verifier "
			       "expired or replayed)";
		case RPCRDMA_AUTH_TOOWEAK:
			return "the server refused the call: AUTH_ERROR AUTH_TOOWEAK (this flavor, "
			       "e.g. AUTH_NONE, is not accepted: use AUTH_SYS or stronger)";
		case RPCRDMA_AUTH_INVALIDRESP:
			return "the server refused the call: AUTH_ERROR AUTH_INVALIDRESP";
		case RPCRDMA_AUTH_FAILED:
			return "the server refused the call: AUTH_ERROR AUTH_FAILED (reason unknown)";
		default:
			return "the server refused the call: AUTH_ERROR (see reply.auth_stat, "
			       "rpcrdma_auth_stat_name())";
		}
	}
	switch (r->accept_stat) {
	case RPCRDMA_RPC_PROG_UNAVAIL:
		return "the server answered PROG_UNAVAIL: it does not serve this program number";
	case RPCRDMA_RPC_PROG_MISMATCH:
		return "the server answered PROG_MISMATCH: it does not serve this version of the "
		       "program (reply.mismatch_low..high are the versions it serves)";
	case RPCRDMA_RPC_PROC_UNAVAIL:
		return "the server answered PROC_UNAVAIL: the program has no such procedure";
	case RPCRDMA_RPC_GARBAGE_ARGS:
		return "the server answered GARBAGE_ARGS: it could not decode the arguments";
	case RPCRDMA_RPC_SYSTEM_ERR:
		return "the server answered SYSTEM_ERR: it failed to run the procedure (memory, "
		       "...)";
	default:
		return "the server refused the call with an unknown accept_stat";
	}
}

/*
 * The text of a call's detailed cause is made at each call into one of a
 * few buffers of the calling thread, taken in turn, so that two calls'
 * texts can sit in one printf().
 */
#define CAUSE_BUFS 4
#define CAUSE_LEN 512

static _Thread_local char cause_buf[CAUSE_BUFS][CAUSE_LEN];
static _Thread_local unsigned int cause_next;

/* What the server's RDMA_ERROR said (RFC 8166 5.3.4; Version Two draft 4.2). */
static void rdma_error_msg(char *b, size_t n, const struct rpcrdma__call_cause *k)
{
	switch (k->code) {
	case RPCRDMA_ERR_VERS:
		snprintf(b, n,
			 "the server speaks RPC-over-RDMA versions %u to %u only (RDMA_ERROR "
			 "ERR_VERS) and refused the version this call was sent in",
			 k->a, k->b);
		return;
	case RPCRDMA_ERR_CHUNK:
		if (k->vers == RPCRDMA_VERSION_TWO)
			snprintf(b, n,
				 "the server refused the call's transport header (RDMA_ERROR "
				 "ERR_BAD_HEADER, Version Two): ");
		else
			snprintf(b, n,
				 "the server refused the call's chunks (RDMA_ERROR "
				 "ERR_CHUNK): ");
		if (k->offered)
			snprintf(b + strlen(b), n - strlen(b),
				 "a reply larger than the %u-byte Reply chunk offered (raise "
				 "call->max_reply), or a call over its limits",
				 k->offered);
		else
			snprintf(
			    b + strlen(b), n - strlen(b),
			    "a reply too large to come inline and no Reply chunk offered (set "
			    "call->max_reply to the largest reply), or a call over its limits");
		return;
	case RPCRDMA_ERR_INVAL_OPTION:
		snprintf(b, n,
			 "the server answered the call with RDMA_ERROR ERR_INVAL_OPTION "
			 "(Version Two), which only an RDMA_OPTIONAL may get: a server fault");
		return;
	default:
		snprintf(b, n, "the server answered with RDMA_ERROR code %u", k->code);
	}
}

static const char *cause_msg(const struct rpcrdma_call *call, const struct rpcrdma__call_cause *k)
{
	char *b = cause_buf[cause_next++ % CAUSE_BUFS];
	const size_t n = CAUSE_LEN;

	switch (k->kind) {
	case RPCRDMA__CAUSE_RDMA_ERROR:
		rdma_error_msg(b, n, k);
		break;
	case RPCRDMA__CAUSE_REPLY_CHUNKS:
		snprintf(b, n, "the server's reply does not match the chunks the call offered: %s",
			 k->what ? k->what : "(no detail)");
		break;
	case RPCRDMA__CAUSE_BAD_REPLY:
		/* The header decoder takes all or nothing: no byte to name. */
		if (k->code == RPCRDMA__CAUSE_AT_RESULTS)
			snprintf(b, n,
				 "the reply's results do not decode (decode_res): they stop at "
				 "byte %u of the %u-byte RPC reply: %s",
				 k->a, k->b, rpcrdma_strerror(call->status));
		else if (k->code == RPCRDMA__CAUSE_AT_NOT_REPLY)
			snprintf(b, n,
				 "the server answered with an RPC CALL, not a REPLY (%u bytes)",
				 k->b);
		else
			snprintf(b, n,
				 "the RPC reply header does not decode (a %u-byte RPC reply): %s",
				 k->b, rpcrdma_strerror(call->status));
		break;
	case RPCRDMA__CAUSE_CONN_LOST:
		/* A peer of the other kind: its own text says what to fix. */
		if (call->status == RPCRDMA_ERR_NOT_RDMA_PEER ||
		    call->status == RPCRDMA_ERR_NOT_TCP_PEER)
			return rpcrdma_strerror(call->status);
		snprintf(b, n,
			 k->b ? "the connection was lost %u times while the call waited for its "
				"reply (opts.retries ran out); the last time: %s"
			      : "the call was never sent: connecting failed %u times (opts.retries "
				"ran out); the last time: %s",
			 k->a, rpcrdma_strerror(call->status));
		/* The same again would fail the same way: name the limit. */
		if (call->status == -EMSGSIZE)
			snprintf(b + strlen(b), n - strlen(b),
				 " (over TCP: a reply record larger than the client's "
				 "opts.max_record; over RDMA: a message larger than its receive "
				 "buffers, opts.inline_recv)");
		break;
	case RPCRDMA__CAUSE_TIMEDOUT:
		if (k->b)
			snprintf(b, n, "no reply within the call's time-out (%u ms)", k->a);
		else if (k->code)
			snprintf(
			    b, n,
			    "the call was never sent within its time-out (%u ms): no connection "
			    "(the last attempt: %s)",
			    k->a, rpcrdma_strerror(-(int)k->code));
		else
			snprintf(b, n, "the call was never sent within its time-out (%u ms)", k->a);
		break;
	case RPCRDMA__CAUSE_ENCODE:
		if (call->status == RPCRDMA_ERR_NOSPACE)
			snprintf(b, n,
				 "the call does not fit in the largest call this transport sends "
				 "(%u bytes): %s ran out of room",
				 k->b,
				 k->code == RPCRDMA__CAUSE_IN_ARGS ? "the arguments"
								   : "the header");
		else
			snprintf(b, n, "the call did not encode: %s stopped at byte %u: %s",
				 k->code == RPCRDMA__CAUSE_IN_ARGS ? "the arguments (encode_args)"
								   : "the RPC call header",
				 k->a, rpcrdma_strerror(call->status));
		break;
	default:
		return rpcrdma_strerror(call->status);
	}
	return b;
}

const char *rpcrdma_call_strerror(const struct rpcrdma_call *call)
{
	struct rpcrdma__call_cause k;

	if (!call)
		return "no call";
	if (call->status == RPCRDMA_ERR_RPC_REJECTED)
		return rejected_msg(&call->reply);
	if (rpcrdma__call_cause_load(call, &k))
		return cause_msg(call, &k);
	return rpcrdma_strerror(call->status);
}
