/*
 * What the library's own layers (transports, providers' owners) need from
 * the event loop: file descriptor watches, timers, and a hook that runs
 * before the loop sleeps.  Everything here runs on the loop's thread.
 *
 * ORDER: in each iteration the loop (1) runs expired timers, (2) runs every
 * before-sleep hook; a hook that returns non-zero means "I still have work,
 * do not block", and the loop then polls its fds without waiting, (3) waits
 * on epoll (bounded by the next timer), (4) runs the callbacks of ready fds,
 * (5) runs the callbacks queued by rpcrdma_loop_wake(), (6) runs the timers
 * that came due while it waited, so that rpcrdma_loop_run_once(loop, -1)
 * never returns having only slept until a timer without running it.
 *
 * Callbacks may start and stop any watch, timer or hook, including their
 * own, and may run the loop again (a synchronous call made from a
 * callback); hooks must not run the loop.  A watch stopped while its event
 * is pending in the current batch does not get that event.
 *
 * The hook exists for libfabric's manual progress: a provider must be
 * polled until empty and fi_trywait() must succeed before the thread may
 * sleep on the provider's fd.
 */
#ifndef RPCRDMA_RPC_LOOP_INTERNAL_H
#define RPCRDMA_RPC_LOOP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "rpcrdma/loop.h"

struct rpcrdma__watch;

/* Called with the epoll events (EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP). */
typedef void (*rpcrdma__watch_fn)(struct rpcrdma__watch *w, uint32_t events);

struct rpcrdma__watch {
	int fd;
	uint32_t events;
	rpcrdma__watch_fn fn;
	void *ctx;
	/* loop-private */
	struct rpcrdma_loop *loop;
	bool active;
};

/** Watch @w->fd for @events (EPOLLIN/EPOLLOUT).  Returns 0 or -errno. */
int rpcrdma__watch_start(struct rpcrdma_loop *loop, struct rpcrdma__watch *w, int fd,
			 uint32_t events, rpcrdma__watch_fn fn, void *ctx);
/** Change the events watched.  Returns 0 or -errno. */
int rpcrdma__watch_modify(struct rpcrdma__watch *w, uint32_t events);
/** Stop watching; safe to call twice and from the watch's own callback. */
void rpcrdma__watch_stop(struct rpcrdma__watch *w);

struct rpcrdma__timer;
typedef void (*rpcrdma__timer_fn)(struct rpcrdma__timer *t);

struct rpcrdma__timer {
	uint64_t due_ms; /* loop-private */
	rpcrdma__timer_fn fn;
	void *ctx;
	/* loop-private */
	struct rpcrdma_loop *loop;
	struct rpcrdma__timer *next;
	struct rpcrdma__timer *prev; /* loop-private: O(1) stop */
	bool armed;
};

/** (Re)arm @t to fire once, @after_ms from now. */
void rpcrdma__timer_start(struct rpcrdma_loop *loop, struct rpcrdma__timer *t, uint64_t after_ms,
			  rpcrdma__timer_fn fn, void *ctx);
/** Disarm; safe when not armed and from the timer's own callback. */
void rpcrdma__timer_stop(struct rpcrdma__timer *t);

struct rpcrdma__hook;
/* Return non-zero when there is still work: the loop will not block. */
typedef int (*rpcrdma__hook_fn)(struct rpcrdma__hook *h);

struct rpcrdma__hook {
	rpcrdma__hook_fn fn;
	void *ctx;
	/* loop-private */
	struct rpcrdma_loop *loop;
	struct rpcrdma__hook *next;
	bool active;
};

void rpcrdma__hook_start(struct rpcrdma_loop *loop, struct rpcrdma__hook *h, rpcrdma__hook_fn fn,
			 void *ctx);
void rpcrdma__hook_stop(struct rpcrdma__hook *h);

/** Count of clients/servers alive on the loop, for rpcrdma_loop_destroy(). */
void rpcrdma__loop_ref(struct rpcrdma_loop *loop);
void rpcrdma__loop_unref(struct rpcrdma_loop *loop);

#endif /* RPCRDMA_RPC_LOOP_INTERNAL_H */
