/*
 * loop_internal.h - what the library's own layers need from the event loop:
 * fd watches, timers, and hooks that run before the loop sleeps (for
 * libfabric's manual progress).  Everything here runs on the loop's thread.
 *
 * ORDER of one iteration: expired timers; before-sleep hooks (non-zero: do
 * not block); epoll_wait bounded by the next timer; ready fds; callbacks
 * from rpcrdma_loop_wake(); timers that came due meanwhile.  Callbacks may
 * start and stop any watch, timer or hook and run the loop again; hooks may
 * not run the loop.  A watch stopped while its event is pending in the
 * current batch does not get that event.
 */
#ifndef RPCRDMA_RPC_LOOP_INTERNAL_H
#define RPCRDMA_RPC_LOOP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "common/list.h"
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
	struct rpcrdma__list node; /* on the loop's timers while armed */
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

/**
 * rpcrdma__loop_recent_ms - rpcrdma_loop_now() as of the loop's last wake-up
 * or timer pass (three times an iteration): for time stamps that only
 * ever measure seconds (idle and drain time-outs), taken at every message
 * without a clock read.  Never ahead of the clock; inside an iteration
 * behind it by at most the work done since the wait returned.
 */
uint64_t rpcrdma__loop_recent_ms(struct rpcrdma_loop *loop);

/**
 * rpcrdma__loop_inherited - whether @loop was made by another process
 * (this one is a child forked after it)
 *
 * The descriptors and provider objects hung on the loop are the parent's
 * too: a socket shut down or a QP destroyed through the shared verbs file
 * would end in the parent.  The public destroys refuse such objects (and
 * emit a bad_arg trace event naming @what); the child leaves them to exit.
 */
bool rpcrdma__loop_inherited(struct rpcrdma_loop *loop, const char *what);

/** rpcrdma_loop_set_busy_poll()'s setting of @loop. */
unsigned int rpcrdma__loop_busy_poll(const struct rpcrdma_loop *loop);
/** Busy polls that found an event, and those that ended in a sleep. */
void rpcrdma__loop_busy_poll_stats(const struct rpcrdma_loop *loop, uint64_t *found,
				   uint64_t *slept);

/** Count of clients/servers alive on the loop, for rpcrdma_loop_destroy(). */
void rpcrdma__loop_ref(struct rpcrdma_loop *loop);
void rpcrdma__loop_unref(struct rpcrdma_loop *loop);

#endif /* RPCRDMA_RPC_LOOP_INTERNAL_H */
