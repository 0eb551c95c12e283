/*
 * The requests the NFSv4 fuzz targets decode results against, shared so
 * that one target's seeds serve another: a minor version 0 COMPOUND and a
 * minor version 1 COMPOUND with every operation the codec knows (so that
 * each result arm is reachable), and a CB_COMPOUND of CB_SEQUENCE,
 * CB_RECALL and an operation outside the protocol.
 */
#ifndef TESTS_FUZZ_NFS4_REQUESTS_H
#define TESTS_FUZZ_NFS4_REQUESTS_H

#include <string.h>

#include "rpcrdma/nfs4.h"

#define FUZZ_BULK 4096u

/* PUTROOTFH LOOKUP GETFH GETATTR READ PUTFH READLINK READ, the results of
 * the two READs and the READLINK into bulk[0], [2] and [1]. */
static inline void fuzz_nfs40_request(struct rpcrdma_nfs4_compound *c, uint8_t (*bulk)[FUZZ_BULK])
{
	static const uint32_t attrs[] = {RPCRDMA_NFS4_ATTR_TYPE, RPCRDMA_NFS4_ATTR_SIZE,
					 RPCRDMA_NFS4_ATTR_TIME_MODIFY};
	struct rpcrdma_nfs4_fh fh = {.len = 8};

	rpcrdma_nfs4_compound_init(c);
	(void)rpcrdma_nfs4_putrootfh(c);
	(void)rpcrdma_nfs4_lookup(c, "export");
	(void)rpcrdma_nfs4_getfh(c);
	(void)rpcrdma_nfs4_getattr(c, attrs, 3);
	(void)rpcrdma_nfs4_read(c, NULL, 0, FUZZ_BULK, bulk[0], FUZZ_BULK);
	(void)rpcrdma_nfs4_putfh(c, &fh);
	(void)rpcrdma_nfs4_readlink(c, bulk[1], FUZZ_BULK);
	(void)rpcrdma_nfs4_read(c, NULL, 0, 100, bulk[2], FUZZ_BULK);
}

/* SEQUENCE EXCHANGE_ID CREATE_SESSION BIND_CONN PUTFH OPEN GETFH READ CLOSE
 * DELEGRETURN RECLAIM_COMPLETE DESTROY_SESSION DESTROY_CLIENTID, READ's
 * result into @bulk. */
static inline void fuzz_nfs41_request(struct rpcrdma_nfs4_compound *c, uint8_t *bulk)
{
	static const uint8_t sid[RPCRDMA_NFS4_SESSIONID_SIZE], verf[8];
	struct rpcrdma_nfs41_chan_attrs a = {0, 4096, 4096, 0, 8, 1, 0, 0};
	struct rpcrdma_nfs4_stateid st = {0, {0}};
	struct rpcrdma_nfs4_fh fh = {.len = 8};

	rpcrdma_nfs4_compound_init(c);
	c->minorversion = 1;
	(void)rpcrdma_nfs4_sequence(c);
	(void)rpcrdma_nfs4_exchange_id(c, verf, "o", 1, 0);
	(void)rpcrdma_nfs4_create_session(c, 1, 1, 2, &a, &a, 0x40000000);
	(void)rpcrdma_nfs4_bind_conn_to_session(c, sid, 3, false);
	(void)rpcrdma_nfs4_putfh(c, &fh);
	(void)rpcrdma_nfs4_open(c, 0x101, 1, "o", 1, "f");
	(void)rpcrdma_nfs4_getfh(c);
	(void)rpcrdma_nfs4_read(c, &st, 0, FUZZ_BULK, bulk, FUZZ_BULK);
	(void)rpcrdma_nfs4_close(c, &st);
	(void)rpcrdma_nfs4_delegreturn(c, &st);
	(void)rpcrdma_nfs4_reclaim_complete(c, false);
	(void)rpcrdma_nfs4_destroy_session(c, sid);
	(void)rpcrdma_nfs4_destroy_clientid(c, 1);
}

static inline void fuzz_cb_request(struct rpcrdma_nfs41_cb_compound *c)
{
	memset(c, 0, sizeof(*c));
	c->minorversion = 1;
	c->nops = c->count = 3;
	c->ops[0].op = RPCRDMA_NFS4_OP_CB_SEQUENCE;
	c->ops[1].op = RPCRDMA_NFS4_OP_CB_RECALL;
	c->ops[2].op = 99;
}

#endif /* TESTS_FUZZ_NFS4_REQUESTS_H */
