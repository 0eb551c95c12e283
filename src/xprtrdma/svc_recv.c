/*
 * The responder's receive side (svc.h): a receive completes, the call's
 * header is checked and sorted, its Read chunks are pulled with RDMA Reads
 * within the budgets, and the core gets the call; RDMA_OPTIONAL and
 * reverse-direction replies are routed here too.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace.h"
#include "rpcrdma/rpc_msg.h"
#include "xprtrdma/svc.h"

/*
 * RDMA_OPTIONAL (Version Two, draft section 3): dispatched through the
 * registry; an opttype nobody registered gets ERR_INVAL_OPTION with the
 * same XID (3.1), and a feature's answer goes back as an RDMA_OPTIONAL of
 * the same opttype and XID.  Like a call, the message held a credit until
 * answered.
 */
static void handle_optional(struct rpcrdma__xsreq *s)
{
	struct rpcrdma__xsconn *sc = s->conn;
	struct rpcrdma__xsvc *v = sc->svc;
	struct rpcrdma__xopt_ctx *o = &v->opt_ctx;
	struct rpcrdma_hdr *h = &v->hdr;
	enum rpcrdma_hdr_action action;

	o->conn = &sc->c;
	o->our_send = v->inline_send;
	o->our_recv = v->inline_recv;
	o->credits = sc->credits;
	o->answer_len = 0;
	action = rpcrdma__opt_dispatch(&v->opts, &s->hdr, s->r->buf + s->hdr.hdr_len,
				       s->hdr.payload_len);
	o->conn = NULL;
	if (action == RPCRDMA_HDR_REPLY_ERR_CHUNK || action == RPCRDMA_HDR_REPLY_INVAL_OPTION) {
		v->st.bad_msgs++;
		rpcrdma__xsvc_send_error(s, action);
		return;
	}
	if (action != RPCRDMA_HDR_ACCEPT || !o->answer_len) {
		rpcrdma__xsvc_sreq_release(s);
		return;
	}
	s->grant = rpcrdma__credits_grant(sc->credits, s->hdr.credit);
	rpcrdma_hdr_init(h, s->hdr.xid, s->hdr.vers, s->grant, RPCRDMA_PROC_OPTIONAL);
	h->opttype = s->hdr.opttype;
	h->optinfo = o->answer;
	h->optinfo_len = o->answer_len;
	(void)rpcrdma__xsvc_send_header_only(s, h);
}

/* The first message a responder accepts fixes the connection's version
 * and with it the default thresholds (draft 5.3: the requester chose). */
static void learn_version(struct rpcrdma__xsconn *sc, uint32_t vers)
{
	struct rpcrdma__xsvc *v = sc->svc;

	if (sc->c.vers_known || v->partner)
		return;
	sc->c.vers_known = true;
	rpcrdma__xconn_set_version(&sc->c, vers, v->inline_send, v->inline_recv);
}

/*
 * The first message fixed the connection's version for its lifetime
 * (draft 5.2; a partner speaks its owner's).  A message in the other
 * version is refused as a responder of the connection's one version
 * refuses it, ERR_VERS naming that version: answered in its own, its reply
 * would be sized to that version's threshold, which the requester's
 * receives on this connection were not posted for.
 */
static bool version_fits(struct rpcrdma__xsconn *sc, struct rpcrdma__xsreq *s,
			 const char *what)
{
	struct rpcrdma__xsvc *v = sc->svc;

	if (!(sc->c.vers_known || v->partner) || s->hdr.vers == sc->c.vers)
		return true;
	RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, sc->c.id, s->hdr.xid,
		       RPCRDMA_ERR_VERS, 0, "Version %u %s refused: the connection speaks Version %u",
		       s->hdr.vers, what, sc->c.vers);
	v->st.bad_msgs++;
	rpcrdma__xsvc_send_vers_error(s, sc->c.vers);
	return false;
}

/*
 * Calls: reading and delivering.
 */

/*
 * Whether the call's RPC message, as rebuilt, starts with the transport
 * header's XID.  RFC 8166 5.2.1: rdma_xid "MUST be the same as the XID in
 * the RPC message"; 5.5.2 counts a mismatch among the XDR errors: "the
 * contents of the rdma_xid field might not match the contents of the XID
 * field in the accompanying RPC message.  If the rdma_vers field contains
 * a recognized value, but an XDR parsing error occurs, the responder MUST
 * reply with an RDMA_ERROR procedure and set the rdma_err value to
 * RDMA_ERR_BADHEADER" (ERR_CHUNK).  RFC 8167 5.1 asks the same of a
 * reverse call, "whether presented inline or as a separate chunk".  The
 * header decoder checks an RDMA_MSG's inline payload; a Long Call's
 * message exists only once its Position-Zero chunk is read, so every
 * rebuilt call is checked here, whatever its form.
 */
static bool call_xid_matches(const struct rpcrdma__xsreq *s)
{
	struct rpcrdma_xdr_stream peek = s->call_xdr; /* the core gets it from its start */
	uint32_t xid;

	return !rpcrdma_xdr_decode_u32(&peek, &xid) && xid == s->hdr.xid;
}

static void deliver(struct rpcrdma__xsreq *s)
{
	static const uint8_t zero[4];
	struct rpcrdma__xsconn *sc = s->conn;
	struct rpcrdma__xsvc *v = sc->svc;
	unsigned int n = 0;
	size_t rd_off = 0;
	const uint8_t *payload = s->r->buf + s->hdr.hdr_len;

	rpcrdma__xsvc_read_phase_end(s);
	/* Taken in now: off the eviction list.  Chosen meanwhile, the
	 * connection is being closed for a newcomer (rpcrdma__svc_cb
	 * conn_busy), and the call goes with it: its requester sends it
	 * again. */
	if (sc->lru.listed && !v->cb->conn_busy(v->cb_ctx, &sc->lru)) {
		rpcrdma__xsvc_sreq_release(s);
		rpcrdma__xsvc_conn_close(sc);
		return;
	}
	for (unsigned int i = 0; i < s->npieces; i++) {
		const struct rpcrdma_rebuild_piece *p = &s->pieces[i];

		if (!p->chunk) {
			s->iov[n].iov_base = (void *)(uintptr_t)(payload + p->inline_off);
			s->iov[n++].iov_len = p->len;
			continue;
		}
		s->iov[n].iov_base = s->rdbuf.addr + rd_off;
		s->iov[n++].iov_len = p->len;
		rd_off += p->len;
		if (p->pad) {
			s->iov[n].iov_base = (void *)(uintptr_t)zero;
			s->iov[n++].iov_len = p->pad;
		}
	}
	if (rpcrdma_xdr_init_iov(&s->call_xdr, s->iov, n)) {
		rpcrdma__xsvc_send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return;
	}
	if (!call_xid_matches(s)) {
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, sc->c.id, s->hdr.xid,
			       RPCRDMA_ERR_BAD_HEADER, 0,
			       "call refused: its RPC message does not start with the header's "
			       "XID (RFC 8166 5.5.2)");
		v->st.bad_msgs++;
		rpcrdma__xsvc_send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return;
	}
	if (s->msgp) {
		rpcrdma__ddp_msgp_init(&s->msgp_ddp, &s->call_xdr, s->hdr.hdr_len, s->hdr.align,
				       s->hdr.thresh);
		rpcrdma_xdr_set_ddp(&s->call_xdr, &s->msgp_ddp.base);
	}
	s->state = SREQ_CORE;
	sc->told_core = true;
	v->st.calls_received++;
	v->cb->call(v->cb_ctx, &s->sreq, &s->call_xdr);
}

static void on_read(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev)
{
	struct rpcrdma__xsvc_read *ro = (struct rpcrdma__xsvc_read *)op;
	struct rpcrdma__xsreq *s = ro->s;
	struct rpcrdma__xsconn *sc = s->conn;

	if (sc->c.ops_out)
		sc->c.ops_out--;
	if (sc->c.sq_used)
		sc->c.sq_used--;
	if (sc->c.rd_used)
		sc->c.rd_used--;
	if (s->reads_left)
		s->reads_left--;
	if (ev->status == RPCRDMA_PST_SUCCESS) {
		sc->svc->st.rdma_read_bytes += ev->byte_len;
	} else {
		s->read_err = true;
		/* RFC 8166 5.5.3: a Read the requester's memory refused is
		 * fatal to the connection. */
		if (ev->status != RPCRDMA_PST_FLUSHED)
			rpcrdma__xsvc_conn_close(sc);
	}
	sc->sreqs++;
	if (!s->reads_left && s->rop_next == s->nrops) {
		rpcrdma__xsvc_rl_remove(sc, s);
		if (s->read_err || sc->c.state != RPCRDMA__XCONN_UP || sc->svc->destroying)
			rpcrdma__xsvc_sreq_release(s);
		else
			deliver(s);
	}
	sc->sreqs--;
	rpcrdma__xsvc_after_sq(sc);
}

void rpcrdma__xsvc_pump_reads(struct rpcrdma__xsconn *sc)
{
	struct rpcrdma__xsreq *s;

	while ((s = sc->rd_head)) {
		if (sc->c.state != RPCRDMA__XCONN_UP) {
			/* Nothing more will be posted: the call ends when the
			 * reads already out complete, or now. */
			sc->rd_head = s->next;
			if (!sc->rd_head)
				sc->rd_tail = NULL;
			s->next = NULL;
			s->nrops = s->rop_next;
			s->read_err = true;
			if (!s->reads_left)
				rpcrdma__xsvc_sreq_release(s);
			continue;
		}
		if (!s->rd_charged) {
			struct rpcrdma__xsvc *v = sc->svc, *a = v->acct;

			/* Its buffer, within the connection's budget and the
			 * transport's (FIFO: later calls wait behind it). */
			if (sc->rd_bytes && sc->rd_bytes + s->rd_total > v->conn_read_budget) {
				v->st.read_budget_waits += !s->rd_waited;
				s->rd_waited = true;
				return;
			}
			if (a->rd_bytes && a->rd_bytes + s->rd_total > a->b.max_read_bytes) {
				v->st.read_budget_waits += !s->rd_waited;
				s->rd_waited = true;
				if (!sc->rd_blocked) {
					sc->rd_blocked = true;
					a->rd_blocked++;
				}
				return;
			}
			if (rpcrdma__xbuf_take(&v->rd_spares, v->dev.prov, &s->rdbuf,
					       s->rd_total)) {
				/* No landing buffer: the call cannot be read. */
				rpcrdma__xsvc_call_lost(sc, s->hdr.xid, -ENOMEM);
				s->nrops = s->rop_next;
				s->read_err = true;
			} else {
				s->rd_charged = true;
				s->rd_start = rpcrdma_loop_now(v->dev.loop);
				rpcrdma__xsvc_rl_add(sc, s);
				sc->rd_bytes += s->rd_total;
				a->rd_bytes += s->rd_total;
				if (a->rd_bytes > v->st.read_bytes_max)
					v->st.read_bytes_max = a->rd_bytes;
			}
		}
		while (s->rop_next < s->nrops && sc->c.rd_used < sc->c.rd_depth &&
		       sc->c.sq_used < sc->c.sq_depth) {
			struct rpcrdma__xsvc_read *ro = &s->rops[s->rop_next];
			struct rpcrdma_prov_sge sge = {
			    .addr = s->rdbuf.addr + ro->local_off,
			    .length = ro->len,
			    .mr = s->rdbuf.mr,
			};
			struct rpcrdma_prov_rseg rs = {
			    .handle = ro->handle,
			    .length = ro->len,
			    .offset = ro->offset,
			};
			int rc;

			ro->op.done = on_read;
			ro->s = s;
			rc = rpcrdma__provider_post_read(sc->c.pc, &sge, 1, &rs, 1, &ro->op);
			if (rc) {
				/* The call cannot be read: drop it and close
				 * (the requester retransmits after reconnecting). */
				rpcrdma__xsvc_conn_close(sc);
				s->nrops = s->rop_next;
				s->read_err = true;
				break;
			}
			s->rop_next++;
			s->reads_left++;
			sc->c.ops_out++;
			sc->c.sq_used++;
			sc->c.rd_used++;
		}
		if (s->rop_next < s->nrops)
			return;
		sc->rd_head = s->next;
		if (!sc->rd_head)
			sc->rd_tail = NULL;
		s->next = NULL;
		if (!s->reads_left)
			rpcrdma__xsvc_sreq_release(s); /* only after a failed post */
	}
}

/* Lays out the RDMA Reads of the call's chunk pieces (plan.h: a piece is
 * @len bytes of its chunk from @chunk_off, across the chunk's segments). */
static int plan_reads(struct rpcrdma__xsreq *s, unsigned int npieces)
{
	size_t total = 0, off = 0;

	for (unsigned int i = 0; i < npieces; i++) {
		if (s->pieces[i].chunk)
			total += s->pieces[i].len;
	}
	s->rd_total = total;
	if (!total)
		return 0;
	for (unsigned int i = 0; i < npieces; i++) {
		const struct rpcrdma_rebuild_piece *p = &s->pieces[i];
		size_t skip = p->chunk_off, want = p->len;

		if (!p->chunk)
			continue;
		if (p->first > s->hdr.nreads || p->nsegs > s->hdr.nreads - p->first)
			return RPCRDMA_ERR_BAD_HEADER;
		for (uint32_t k = 0; k < p->nsegs && want; k++) {
			const struct rpcrdma_segment *seg = &s->hdr.reads[p->first + k].target;
			size_t take;

			if (skip >= seg->length) {
				skip -= seg->length;
				continue;
			}
			take = seg->length - skip;
			if (take > want)
				take = want;
			if (s->nrops >= XSREQ_MAX_ROPS)
				return RPCRDMA_ERR_BAD_HEADER;
			s->rops[s->nrops].handle = seg->handle;
			s->rops[s->nrops].len = (uint32_t)take;
			s->rops[s->nrops].offset = seg->offset + skip;
			s->rops[s->nrops].local_off = off;
			s->nrops++;
			off += take;
			want -= take;
			skip = 0;
		}
		if (want)
			return RPCRDMA_ERR_BAD_HEADER;
	}
	return 0;
}

/* Whether the call, its inline part and every Read segment, is within
 * @max bytes (segments counted once each, as they are pulled). */
static bool call_fits(const struct rpcrdma__xsreq *s, size_t max)
{
	uint64_t total = s->hdr.payload_len;

	for (uint32_t i = 0; i < s->hdr.nreads; i++) {
		total += s->hdr.reads[i].target.length;
		if (total > max)
			return false;
	}
	return total <= max;
}

/*
 * Whether a message taken as a call is a reply (RFC 8167 5.2): a Long
 * Reply (RDMA_NOMSG carrying a Reply chunk and no Read chunk) or an
 * RDMA_MSG whose RPC message is a REPLY.  It reaches here only with no
 * backchannel bound (route_reverse), so it answers no call of ours.  An
 * RDMA_ERROR would carry its XID back to a requester that reads every
 * RDMA_ERROR as the answer to its own forward call of that XID (RFC 8167
 * 2.4: both directions may use one XID at once), failing that call;
 * RFC 8167 section 6 leaves the endpoint free to drop what it is not
 * prepared to receive.
 */
static bool reply_shaped(const struct rpcrdma__xsreq *s)
{
	uint32_t mtype;

	if (s->hdr.proc == RPCRDMA_PROC_NOMSG)
		return !s->hdr.nreads && s->hdr.has_reply;
	if (s->hdr.proc != RPCRDMA_PROC_MSG || s->hdr.payload_len < 8)
		return false;
	memcpy(&mtype, s->r->buf + s->hdr.hdr_len + 4, sizeof(mtype));
	return be32toh(mtype) == RPCRDMA_RPC_REPLY;
}

/* Decodes the call's transport header and sorts it by procedure: true
 * when it is a call to serve (RDMA_MSG, RDMA_NOMSG, or RDMA_MSGP taken as
 * RDMA_MSG); otherwise it has been answered, dropped or handed on. */
static bool screen_call(struct rpcrdma__xsconn *sc, struct rpcrdma__xsreq *s)
{
	struct rpcrdma__xsvc *v = sc->svc;
	struct rpcrdma__xrecv *r = s->r;
	struct rpcrdma_hdr_fault fault;
	int rc;

	rc = rpcrdma_hdr_decode(r->buf, r->len, &v->lim, &s->hdr, &fault);
	if (rc) {
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, sc->c.id,
			       rpcrdma__trace_xid_of(r->buf, r->len), rc, fault.offset,
			       "call header refused at byte %zu: %s", fault.offset,
			       fault.reason ? fault.reason : "malformed");
		v->st.bad_msgs++;
		if (fault.action == RPCRDMA_HDR_REPLY_ERR_VERS ||
		    fault.action == RPCRDMA_HDR_REPLY_ERR_CHUNK ||
		    fault.action == RPCRDMA_HDR_REPLY_INVAL_OPTION)
			rpcrdma__xsvc_send_error(s, fault.action);
		else
			rpcrdma__xsvc_sreq_release(s);
		return false;
	}
	switch (s->hdr.proc) {
	case RPCRDMA_PROC_MSG:
	case RPCRDMA_PROC_NOMSG:
		if (reply_shaped(s)) {
			RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, sc->c.id,
				       s->hdr.xid, 0, 0,
				       "reply dropped: no backchannel, no reverse call out");
			v->st.bad_msgs++;
			rpcrdma__xsvc_sreq_release(s);
			return false;
		}
		break;
	case RPCRDMA_PROC_MSGP:
		/*
		 * RFC 8166 5.6.1: receivers SHOULD answer RDMA_MSGP with
		 * ERR_CHUNK.  With accept_msgp, an RFC 5666-era requester's
		 * padded call is served (draft-ietf-nfsv4-rpcrdma-01 3.5), as
		 * long as it is the plain form those peers sent: no Read
		 * chunks, and an alignment that keeps XDR's.
		 */
		if (!v->accept_msgp || s->hdr.nreads || !s->hdr.align ||
		    s->hdr.align % RPCRDMA_XDR_UNIT || s->hdr.align > v->inline_recv) {
			RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, sc->c.id,
				       s->hdr.xid, RPCRDMA_ERR_BAD_HEADER, 0,
				       "RDMA_MSGP refused (RFC 8166 5.6.1)");
			v->st.bad_msgs++;
			rpcrdma__xsvc_send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
			return false;
		}
		/* From here on it is an RDMA_MSG whose payload carries
		 * padding: the reply is planned and sent as for RDMA_MSG. */
		s->msgp = true;
		s->hdr.proc = RPCRDMA_PROC_MSG;
		break;
	case RPCRDMA_PROC_DONE:
		/* RFC 5666 Read-Read completion: nothing we use; dropped
		 * without an answer. */
		v->st.bad_msgs++;
		rpcrdma__xsvc_sreq_release(s);
		return false;
	case RPCRDMA_PROC_ERROR:
		/* Never answer an error with an error. */
		v->st.rdma_errors_received++;
		rpcrdma__xsvc_sreq_release(s);
		return false;
	case RPCRDMA_PROC_OPTIONAL:
		/* The decoder takes it in Version Two only. */
		v->st.optional_msgs++;
		/* The transport properties among them: taken from a
		 * Version One connection, they would change its thresholds. */
		if (!version_fits(sc, s, "RDMA_OPTIONAL"))
			return false;
		learn_version(sc, s->hdr.vers);
		handle_optional(s);
		return false;
	default:
		v->st.bad_msgs++;
		rpcrdma__xsvc_send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return false;
	}
	return version_fits(sc, s, "call");
}

/* Refuses what the call's chunks ask beyond our bounds (ERR_CHUNK), and
 * lays out its Read chunks (the pieces and the RDMA Reads).  False when an
 * RDMA_ERROR went instead. */
static bool plan_call_reads(struct rpcrdma__xsconn *sc, struct rpcrdma__xsreq *s)
{
	struct rpcrdma__xsvc *v = sc->svc;
	int n, rc;

	if (v->refuse_chunks && (s->hdr.nreads || s->hdr.nwrites || s->hdr.has_reply)) {
		/* RFC 8167 5.3: a responder that takes no chunks in the
		 * reverse direction MUST answer ERR_CHUNK. */
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, sc->c.id, s->hdr.xid,
			       RPCRDMA_ERR_BAD_HEADER, 0,
			       "reverse call with chunks refused (RFC 8167 5.3)");
		rpcrdma__xsvc_send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return false;
	}

	if (!call_fits(s, v->max_call)) {
		/* max_record: refused before a byte is read or reserved. */
		v->st.records_too_large++;
		v->st.bad_msgs++;
		rpcrdma__xsvc_send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return false;
	}
	n = rpcrdma__plan_rebuild(&s->hdr, s->hdr.payload_len, s->pieces, v->max_call);
	if (n <= 0 || n > (int)RPCRDMA_REBUILD_MAX_PIECES) {
		/* Chunks that do not fit the message, or a call too large:
		 * the header is what is wrong (RFC 8166 5.5.2). */
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, sc->c.id, s->hdr.xid,
			       RPCRDMA_ERR_BAD_HEADER, 0,
			       "Read chunks do not fit the message, or the call is too large");
		v->st.bad_msgs++;
		rpcrdma__xsvc_send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return false;
	}
	s->npieces = (unsigned int)n;
	rc = plan_reads(s, (unsigned int)n);
	if (rc) {
		RPCRDMA__TRACE(RPCRDMA_TRACE_ERROR, RPCRDMA_TEV_BAD_MSG, sc->c.id, s->hdr.xid, rc,
			       0, "Read chunks refused: %s", rpcrdma_strerror(rc));
		v->st.bad_msgs++;
		rpcrdma__xsvc_send_error(s, RPCRDMA_HDR_REPLY_ERR_CHUNK);
		return false;
	}
	return true;
}

/* A call accepted: the counters. */
static void count_call(struct rpcrdma__xsconn *sc, struct rpcrdma__xsreq *s)
{
	struct rpcrdma__xsvc *v = sc->svc;

	if (s->hdr.proc == RPCRDMA_PROC_NOMSG)
		v->st.long_calls++;
	else if (s->hdr.nreads)
		v->st.read_chunk_msgs++;
	else
		v->st.inline_msgs++;
	if (s->hdr.nwrites)
		v->st.write_chunk_msgs++;
	if (s->hdr.has_reply)
		v->st.reply_chunk_msgs++;
	s->sreq.conn_id = sc->c.id;
	s->sreq.read_segs = s->hdr.nreads;
	s->sreq.write_chunks = s->hdr.nwrites;
	s->sreq.reply_chunk = s->hdr.has_reply;
	if (s->hdr.proc == RPCRDMA_PROC_NOMSG)
		RPCRDMA__TRACE(RPCRDMA_TRACE_CHUNK, RPCRDMA_TEV_LONG_CALL, sc->c.id, s->hdr.xid,
			       s->hdr.payload_len, 0, "Long Call received: %u Read segments",
			       s->hdr.nreads);
}

void rpcrdma__xsvc_handle_call(struct rpcrdma__xsconn *sc, struct rpcrdma__xrecv *r)
{
	struct rpcrdma__xsvc *v = sc->svc;
	struct rpcrdma__xsreq *s;

	s = rpcrdma__xsvc_sreq_get(v, sc);
	if (!s) {
		rpcrdma__xsvc_call_lost(sc, rpcrdma__trace_xid_of(r->buf, r->len), -ENOMEM);
		rpcrdma__xrecv_put(&v->pool, r);
		return;
	}
	s->r = r;
	sc->held++;
	/* Every message the requester counts against its credits is in
	 * progress until answered. */
	s->counted = true;
	sc->in_progress++;
	if (sc->in_progress > v->st.credits_in_use_max)
		v->st.credits_in_use_max = sc->in_progress;
	if (!screen_call(sc, s))
		return;
	learn_version(sc, s->hdr.vers);
	if (!plan_call_reads(sc, s))
		return;
	count_call(sc, s);
	if (!s->nrops) {
		deliver(s);
		return;
	}
	s->state = SREQ_READING;
	sc->reading++;
	s->next = NULL;
	if (sc->rd_tail)
		sc->rd_tail->next = s;
	else
		sc->rd_head = s;
	sc->rd_tail = s;
	rpcrdma__xsvc_after_sq(sc);
}

/* RFC 8167: a reply-direction message answers one of our reverse calls
 * (handed to the requester bound to the connection), never a call; its
 * XID may equal a forward call's.  Returns true when it was taken. */
static bool route_reverse(struct rpcrdma__xsconn *sc, const struct rpcrdma__xrecv *r,
			  const struct rpcrdma_prov_event *ev)
{
	struct rpcrdma__xsvc *v = sc->svc;

	/* Without a backchannel bound no reply can be due: everything is
	 * taken as a call, as on a forward-only connection. */
	if (!sc->bc_req ||
	    rpcrdma__bc_direction(r->buf, r->len, &v->lim, &v->hdr) != RPCRDMA__DIR_REPLY)
		return false;
	sc->bc_req->ops->recv(sc->bc_req, r->buf, r->len, ev->flags);
	return true;
}

void rpcrdma__xsvc_on_recv(struct rpcrdma__xop *op, const struct rpcrdma_prov_event *ev)
{
	struct rpcrdma__xrecv *r = (struct rpcrdma__xrecv *)op;
	struct rpcrdma__xsconn *sc = xsconn_of(r->conn);
	struct rpcrdma__xsvc *v = sc->svc;
	enum rpcrdma__xsvc_full full = XSVC_NOT_FULL;

	if (!rpcrdma__xconn_recv_completed(&sc->c, r, ev)) {
		rpcrdma__xsvc_conn_try_free(sc);
		return;
	}
	if (ev->status != RPCRDMA_PST_SUCCESS || v->destroying ||
	    sc->c.state != RPCRDMA__XCONN_UP) {
		rpcrdma__xrecv_put(&v->pool, r);
		if (ev->status != RPCRDMA_PST_SUCCESS && ev->status != RPCRDMA_PST_FLUSHED)
			rpcrdma__xsvc_conn_close(sc);
		rpcrdma__xsvc_conn_try_free(sc);
		return;
	}
	v->st.inline_recv_bytes += r->len;
	sc->last_rx = rpcrdma__loop_recent_ms(v->dev.loop);
	/* Off the idle list while this is handled; back, as the most
	 * recent, when nothing is left in progress (conn_try_free). */
	if (sc->lru.listed && !v->cb->conn_busy(v->cb_ctx, &sc->lru)) {
		/* Closed for a newcomer at max_conns while it had nothing in
		 * progress; what came since goes with it. */
		rpcrdma__xrecv_put(&v->pool, r);
		rpcrdma__xsvc_conn_close(sc);
		rpcrdma__xsvc_conn_try_free(sc);
		return;
	}
	sc->sreqs++;
	/* ORDER: replace the receive before serving the call, so the
	 * requester's credits stay backed meanwhile. */
	sc->held++;
	rpcrdma__xsvc_refill(sc);
	sc->held--;
	if (route_reverse(sc, r, ev)) {
		rpcrdma__xrecv_put(&v->pool, r);
		/* A reverse reply is no call: while the connection takes none
		 * (the refill above held back), its receive is still replaced,
		 * or the backchannel's further replies, and the requester's
		 * calls within its credits, would find none posted, and a
		 * call of ours waiting on a callback would stall the pause. */
		if (sc->paused && sc->held + sc->c.recv_posted <
				      XSVC_RECVS_FOR(sc->credits) + sc->bc_recvs)
			(void)rpcrdma__xconn_fill_recvs(&sc->c, sc->c.recv_posted + 1);
	} else if (sc->hold_head || (full = rpcrdma__xsvc_queue_full(sc))) {
		/* max_conn_queued, max_queued_total: the call waits in its
		 * receive buffer (the receives are bounded) rather than adding
		 * a reply now. */
		if (!sc->hold_head)
			rpcrdma__xsvc_count_pause(v, full);
		r->next = NULL;
		if (sc->hold_tail)
			sc->hold_tail->next = r;
		else
			sc->hold_head = r;
		sc->hold_tail = r;
		sc->held++;
	} else {
		rpcrdma__xsvc_handle_call(sc, r);
	}
	sc->sreqs--;
	rpcrdma__xsvc_conn_try_free(sc);
}
