/*
 * The blocks a server core and a client keep for reuse: answered requests
 * and finished calls go back to a bounded list instead of free(), the next
 * request or call takes one from it, and no more than the bound is ever
 * kept, however many were out at once.  In AddressSanitizer builds the
 * bound is 0 and every block is freed, so that a use after free is seen.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rpc/clnt_internal.h"
#include "rpc/svc_internal.h"
#include "rpc/transport.h"

#define BURST 200u /* well past either bound */

static bool on_spares(const struct rpcrdma_server *s, const struct rpcrdma_svc_req *r)
{
	for (const struct rpcrdma_svc_req *q = s->spare_reqs; q; q = q->spare_next)
		if (q == r)
			return true;
	return false;
}

static void test_server_requests(void **state)
{
	static struct rpcrdma__sreq t[BURST];
	static struct rpcrdma_svc_req *r[BURST];
	struct rpcrdma_server s;
	unsigned int kept;

	(void)state;
	memset(&s, 0, sizeof(s));
	rpcrdma__svc_core_init(&s);
	for (unsigned int i = 0; i < BURST; i++) {
		r[i] = rpcrdma__svc_req_new(&s, &t[i]);
		assert_non_null(r[i]);
		assert_ptr_equal(t[i].core, r[i]);
		rpcrdma__svc_req_publish(r[i]);
	}
	for (unsigned int i = 0; i < BURST; i++)
		rpcrdma__svc_req_free(r[i]);
	kept = s.nspare_reqs;
	assert_int_equal(kept, RPCRDMA__SVC_SPARE_REQS);

	/* The next requests come from the spares, cleared as new ones are. */
	for (unsigned int i = 0; i < kept; i++) {
		struct rpcrdma_svc_req *q = s.spare_reqs;

		r[i] = rpcrdma__svc_req_new(&s, &t[i]);
		assert_ptr_equal(r[i], q);
		assert_ptr_equal(r[i]->t, &t[i]);
		assert_null(r[i]->args);
		assert_null(r[i]->drc);
		assert_false(r[i]->ran);
	}
	assert_int_equal(s.nspare_reqs, 0);
	assert_null(s.spare_reqs);

	/* A core being destroyed keeps nothing more. */
	if (kept) {
		rpcrdma__svc_req_free(r[0]);
		assert_int_equal(s.nspare_reqs, 1);
		s.destroying = true;
		rpcrdma__svc_req_free(r[1]);
		assert_int_equal(s.nspare_reqs, 1);
		assert_false(on_spares(&s, r[1]));
		for (unsigned int i = 2; i < kept; i++)
			rpcrdma__svc_req_free(r[i]);
		assert_int_equal(s.nspare_reqs, 1);
	}
	rpcrdma__svc_core_fini(&s); /* frees the spares */
	assert_int_equal(s.nspare_reqs, 0);
	assert_null(s.spare_reqs);
}

/* An application that answers a deferred request twice (the second time
 * through a stale handle) is told -EINVAL, as the API says, while the
 * block sits on the spares: it is not answered again, nor kept twice. */
static void test_answered_request_refuses_a_second_answer(void **state)
{
	struct rpcrdma__sreq t;
	struct rpcrdma_svc_req *r;
	struct rpcrdma_server s;

	(void)state;
	if (!RPCRDMA__SVC_SPARE_REQS)
		skip(); /* ASan builds free the block: the stale call would be a use after free */
	memset(&s, 0, sizeof(s));
	rpcrdma__svc_core_init(&s);
	r = rpcrdma__svc_req_new(&s, &t);
	assert_non_null(r);
	rpcrdma__svc_req_publish(r);
	atomic_store(&r->state, RPCRDMA__SVC_DEFERRED);
	rpcrdma__svc_req_free(r); /* what answering it ends with */
	assert_true(on_spares(&s, r));
	assert_int_equal(rpcrdma_svc_reply(r, 0), -EINVAL);
	assert_int_equal(s.nspare_reqs, 1);
	assert_null(r->spare_next);
	rpcrdma__svc_core_fini(&s);
}

static unsigned int done_calls;
static int done_status;

static void call_done(struct rpcrdma_call *call, void *ctx)
{
	(void)ctx;
	done_calls++;
	done_status = call->status;
}

static void test_client_calls(void **state)
{
	static struct rpcrdma_call calls[BURST];
	struct rpcrdma_client *c = calloc(1, sizeof(*c));

	(void)state;
	assert_non_null(c);
	for (unsigned int i = 0; i < BURST; i++) {
		struct rpcrdma__client_call *cc = calloc(1, sizeof(*cc));

		assert_non_null(cc);
		calls[i].done = call_done;
		calls[i].priv[0] = cc;
		cc->call = &calls[i];
		cc->clnt = c;
		cc->req.xid = 1000 + i;
		rpcrdma__clnt_finish(cc, -5);
		assert_int_equal(calls[i].xid, 1000 + i);
		assert_null(calls[i].priv[0]);
	}
	assert_int_equal(done_calls, BURST);
	assert_int_equal(done_status, -5);
	assert_int_equal(c->nspare_calls, RPCRDMA__CLNT_SPARE_CALLS);
	while (c->spare_calls) {
		struct rpcrdma__client_call *cc = c->spare_calls;

		c->spare_calls = cc->table_next;
		c->nspare_calls--;
		free(cc);
	}
	assert_int_equal(c->nspare_calls, 0);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_server_requests),
	    cmocka_unit_test(test_answered_request_refuses_a_second_answer),
	    cmocka_unit_test(test_client_calls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
