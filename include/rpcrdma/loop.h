/*
 * librpcrdma: the event loop.
 *
 * One loop per thread, shared-nothing: every client, server connection and
 * provider instance belongs to exactly one loop and is touched only from
 * that loop's thread.  The only thread-safe calls are rpcrdma_loop_wake()
 * and rpcrdma_loop_stop().
 *
 * A loop is driven either by rpcrdma_loop_run() / rpcrdma_loop_run_once(),
 * or by the application's own epoll: put rpcrdma_loop_fd() in it, and call
 * rpcrdma_loop_run_once(loop, 0) whenever it is readable.
 */
#ifndef RPCRDMA_LOOP_H
#define RPCRDMA_LOOP_H

#include <stdint.h>

#include "rpcrdma/common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rpcrdma_loop;

/** Create a loop.  Returns 0, -ENOMEM, or -errno from epoll/eventfd. */
RPCRDMA_EXTERN int rpcrdma_loop_create(struct rpcrdma_loop **out);

/**
 * rpcrdma_loop_destroy - free a loop
 *
 * Every client and server on the loop must have been destroyed first;
 * returns -EBUSY (and frees nothing) otherwise.
 *
 * In a process forked after the loop was made, the destroys of
 * rpcrdma_loop_destroy(), rpcrdma_server_destroy(), rpcrdma_client_destroy()
 * and rpcrdma_nfs41_session_destroy() do nothing and return -EPERM (the
 * client's returns nothing): the sockets, QPs and registrations they would
 * close are the parent's too, and shutting them down from the child would
 * end them there.  Such a child (one that runs atexit handlers, say) just
 * exits; what it inherited is not its to use.
 */
RPCRDMA_EXTERN int rpcrdma_loop_destroy(struct rpcrdma_loop *loop);

/** A file descriptor that is readable whenever the loop has work to do. */
RPCRDMA_EXTERN int rpcrdma_loop_fd(struct rpcrdma_loop *loop);

/**
 * rpcrdma_loop_run_once - process what is ready, waiting at most @timeout_ms
 * (-1: without limit; 0: do not wait)
 *
 * Returns the number of events handled (0 on time-out) or -errno.
 */
RPCRDMA_EXTERN int rpcrdma_loop_run_once(struct rpcrdma_loop *loop, int timeout_ms);

/** Run until rpcrdma_loop_stop() is called.  Returns 0 or -errno. */
RPCRDMA_EXTERN int rpcrdma_loop_run(struct rpcrdma_loop *loop);

/**
 * rpcrdma_loop_stop - make rpcrdma_loop_run() return
 *
 * The run under way returns after its current iteration, without waiting
 * for another event; called while no run is under way, the next
 * rpcrdma_loop_run() returns after one iteration that does not wait.
 * Safe from any thread and async-signal-safe, so a SIGTERM handler may
 * call it.
 */
RPCRDMA_EXTERN void rpcrdma_loop_stop(struct rpcrdma_loop *loop);

/**
 * rpcrdma_loop_wake - wake the loop from another thread
 *
 * The one call that is safe from any thread.  @cb, when not NULL, runs on
 * the loop's thread during its next iteration.  Returns 0 or -ENOMEM.
 */
RPCRDMA_EXTERN int rpcrdma_loop_wake(struct rpcrdma_loop *loop, void (*cb)(void *arg),
				     void *arg);

/** The longest busy poll rpcrdma_loop_set_busy_poll() takes, in µs. */
#define RPCRDMA_LOOP_BUSY_POLL_MAX_US 100000u

/**
 * rpcrdma_loop_set_busy_poll - look for events for @usec before sleeping
 *
 * An iteration that would wait first asks the kernel, without sleeping,
 * whether anything is ready, again and again for up to @usec (and never
 * past the wait it was given or the next timer), and sleeps only if
 * nothing came by then.  A reply that arrives within the window is then
 * handled without the thread going to sleep and being woken: on RDMA
 * hardware, where a round trip takes microseconds, the wake-up can cost
 * more than the round trip.  The price is a core spinning in the window.
 * 0 (the default) turns it off.  The worker loops of a server take the
 * setting of the loop the server is made on, as it is at
 * rpcrdma_server_create().  Call it on the loop's own thread, or before
 * the loop runs.
 *
 * Returns 0, or -EINVAL for a NULL @loop or @usec above
 * RPCRDMA_LOOP_BUSY_POLL_MAX_US.
 */
RPCRDMA_EXTERN int rpcrdma_loop_set_busy_poll(struct rpcrdma_loop *loop, unsigned int usec);

/** Monotonic time in milliseconds, as the loop sees it. */
RPCRDMA_EXTERN uint64_t rpcrdma_loop_now(struct rpcrdma_loop *loop);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_LOOP_H */
