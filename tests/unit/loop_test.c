/*
 * Event loop tests: timers (order, FIFO among equals, stop and re-arm from
 * callbacks, no endless re-arm at 0), fd watches (events, modify, a watch
 * stopped by an earlier callback of the same batch gets nothing), hooks
 * (a busy hook keeps the loop from blocking, hooks stopping themselves and
 * each other), wake-ups from another thread, stop, nesting, destroy with
 * references, and the loop driven from an application's own epoll.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cmocka.h>

#include "rpc/loop_internal.h"

static struct rpcrdma_loop *new_loop(void)
{
	struct rpcrdma_loop *loop = NULL;

	assert_int_equal(rpcrdma_loop_create(&loop), 0);
	assert_non_null(loop);
	return loop;
}

static void test_create_destroy(void **state)
{
	struct rpcrdma_loop *loop = new_loop();

	(void)state;
	assert_true(rpcrdma_loop_fd(loop) >= 0);
	assert_int_equal(rpcrdma_loop_run_once(loop, 0), 0);
	assert_int_equal(rpcrdma_loop_create(NULL), -EINVAL);
	assert_int_equal(rpcrdma_loop_destroy(NULL), -EINVAL);
	assert_int_equal(rpcrdma_loop_fd(NULL), -EINVAL);
	assert_int_equal(rpcrdma_loop_run_once(NULL, 0), -EINVAL);
	assert_int_equal(rpcrdma_loop_run(NULL), -EINVAL);
	assert_int_equal(rpcrdma_loop_wake(NULL, NULL, NULL), -EINVAL);
	rpcrdma__loop_ref(loop);
	assert_int_equal(rpcrdma_loop_destroy(loop), -EBUSY);
	rpcrdma__loop_unref(loop);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

static void test_run_once_timeout(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	uint64_t t0 = rpcrdma_loop_now(loop);

	(void)state;
	assert_int_equal(rpcrdma_loop_run_once(loop, 50), 0);
	assert_true(rpcrdma_loop_now(loop) - t0 >= 45);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/* Timers. */

static int order[16];
static int norder;

static void record_timer(struct rpcrdma__timer *t)
{
	order[norder++] = (int)(intptr_t)t->ctx;
}

static void test_timer_order(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	struct rpcrdma__timer t[5];
	uint64_t t0 = rpcrdma_loop_now(loop);

	(void)state;
	memset(t, 0, sizeof(t));
	norder = 0;
	rpcrdma__timer_start(loop, &t[0], 40, record_timer, (void *)(intptr_t)0);
	rpcrdma__timer_start(loop, &t[1], 10, record_timer, (void *)(intptr_t)1);
	rpcrdma__timer_start(loop, &t[2], 20, record_timer, (void *)(intptr_t)2);
	rpcrdma__timer_start(loop, &t[3], 20, record_timer, (void *)(intptr_t)3);
	rpcrdma__timer_start(loop, &t[4], 30, record_timer, (void *)(intptr_t)4);
	rpcrdma__timer_stop(&t[4]);
	rpcrdma__timer_stop(&t[4]); /* twice is fine */
	/* Re-arming moves it: now the first. */
	rpcrdma__timer_start(loop, &t[0], 5, record_timer, (void *)(intptr_t)0);
	while (norder < 4)
		assert_true(rpcrdma_loop_run_once(loop, -1) >= 0);
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 1);
	assert_int_equal(order[2], 2); /* FIFO among equal due times */
	assert_int_equal(order[3], 3);
	assert_true(rpcrdma_loop_now(loop) - t0 >= 19);
	assert_false(t[1].armed);
	assert_int_equal(rpcrdma_loop_run_once(loop, 60), 0);
	assert_int_equal(norder, 4);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/* Timers start at either end of the list's walk: "at once" ones ahead of
 * everything, long ones last, the rest in between; the order is by due
 * time, and by start among the same delay. */
static void test_timer_order_both_ends(void **state)
{
	static const struct {
		uint64_t after_ms;
		int id;
	} starts[] = {{200, 1}, {100, 2}, {0, 3}, {100, 4}, {300, 5}, {0, 6}};
	static const int want[] = {3, 6, 2, 4, 1, 5};
	struct rpcrdma_loop *loop = new_loop();
	struct rpcrdma__timer t[6];

	(void)state;
	memset(t, 0, sizeof(t));
	norder = 0;
	for (size_t i = 0; i < 6; i++)
		rpcrdma__timer_start(loop, &t[i], starts[i].after_ms, record_timer,
				     (void *)(intptr_t)starts[i].id);
	while (norder < 6)
		assert_true(rpcrdma_loop_run_once(loop, -1) >= 0);
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(order[i], want[i]);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

static int rearms;

static void rearm_zero(struct rpcrdma__timer *t)
{
	rearms++;
	rpcrdma__timer_start(t->loop, t, 0, rearm_zero, NULL);
}

static void test_timer_rearm_zero(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	struct rpcrdma__timer t;

	(void)state;
	memset(&t, 0, sizeof(t));
	rearms = 0;
	rpcrdma__timer_start(loop, &t, 0, rearm_zero, NULL);
	/* Each pass runs what was due on entry: bounded, not endless. */
	assert_true(rpcrdma_loop_run_once(loop, -1) >= 1);
	assert_true(rearms >= 1 && rearms <= 2);
	rpcrdma__timer_stop(&t);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

static struct rpcrdma__timer pair[2];
static int pair_fired;

static void stop_other(struct rpcrdma__timer *t)
{
	pair_fired++;
	rpcrdma__timer_stop(&pair[t == &pair[0] ? 1 : 0]);
	rpcrdma__timer_stop(t); /* own, already disarmed: no-op */
}

static void test_timer_stop_other_in_pass(void **state)
{
	struct rpcrdma_loop *loop = new_loop();

	(void)state;
	memset(pair, 0, sizeof(pair));
	pair_fired = 0;
	rpcrdma__timer_start(loop, &pair[0], 0, stop_other, NULL);
	rpcrdma__timer_start(loop, &pair[1], 0, stop_other, NULL);
	usleep(2000);
	assert_int_equal(rpcrdma_loop_run_once(loop, 0), 1);
	assert_int_equal(pair_fired, 1);
	assert_int_equal(rpcrdma_loop_run_once(loop, 20), 0);
	assert_int_equal(pair_fired, 1);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/* One call of run_once sleeps until a timer @after_ms away and runs it
 * before returning, never early by the exact clock, short or as long as
 * a call's time-out. */
static void check_one_timer(uint64_t after_ms)
{
	struct rpcrdma_loop *loop = new_loop();
	struct rpcrdma__timer t;
	uint64_t t0 = rpcrdma_loop_now(loop);

	memset(&t, 0, sizeof(t));
	norder = 0;
	rpcrdma__timer_start(loop, &t, after_ms, record_timer, NULL);
	assert_int_equal(rpcrdma_loop_run_once(loop, -1), 1);
	assert_int_equal(norder, 1);
	assert_true(rpcrdma_loop_now(loop) - t0 >= after_ms - 1);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

static void test_run_once_runs_due_timer(void **state)
{
	(void)state;
	check_one_timer(30);
	check_one_timer(1000);
}

/* Watches. */

struct pipe_watch {
	int fds[2];
	struct rpcrdma__watch w;
	int calls;
	uint32_t events;
	struct pipe_watch *other;
};

static void pipe_open(struct pipe_watch *p)
{
	memset(p, 0, sizeof(*p));
	assert_int_equal(pipe(p->fds), 0);
}

static void pipe_close(struct pipe_watch *p)
{
	rpcrdma__watch_stop(&p->w);
	close(p->fds[0]);
	close(p->fds[1]);
}

static void on_pipe(struct rpcrdma__watch *w, uint32_t events)
{
	struct pipe_watch *p = w->ctx;
	char c;

	p->calls++;
	p->events = events;
	if (events & EPOLLIN)
		assert_int_equal(read(p->fds[0], &c, 1), 1);
	if (p->other)
		rpcrdma__watch_stop(&p->other->w);
}

static void test_watch_events(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	struct pipe_watch p;

	(void)state;
	pipe_open(&p);
	assert_int_equal(rpcrdma__watch_start(loop, &p.w, p.fds[0], EPOLLIN, on_pipe, &p), 0);
	assert_int_equal(rpcrdma_loop_run_once(loop, 0), 0);
	assert_int_equal(write(p.fds[1], "x", 1), 1);
	assert_int_equal(rpcrdma_loop_run_once(loop, 1000), 1);
	assert_int_equal(p.calls, 1);
	assert_true(p.events & EPOLLIN);
	pipe_close(&p);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

static void test_watch_modify_stop(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	struct pipe_watch p;

	(void)state;
	pipe_open(&p);
	/* The write end is writable at once. */
	assert_int_equal(rpcrdma__watch_start(loop, &p.w, p.fds[1], EPOLLIN, on_pipe, &p), 0);
	assert_int_equal(rpcrdma_loop_run_once(loop, 0), 0);
	assert_int_equal(rpcrdma__watch_modify(&p.w, EPOLLOUT), 0);
	assert_int_equal(rpcrdma_loop_run_once(loop, 0), 1);
	assert_true(p.events & EPOLLOUT);
	rpcrdma__watch_stop(&p.w);
	rpcrdma__watch_stop(&p.w);
	assert_int_equal(rpcrdma_loop_run_once(loop, 0), 0);
	assert_int_equal(p.calls, 1);
	assert_int_equal(rpcrdma__watch_modify(&p.w, EPOLLIN), -EINVAL);
	assert_int_equal(rpcrdma__watch_start(loop, &p.w, -1, EPOLLIN, on_pipe, &p), -EINVAL);
	pipe_close(&p);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

static void test_watch_stopped_in_batch(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	struct pipe_watch a, b;

	(void)state;
	pipe_open(&a);
	pipe_open(&b);
	a.other = &b;
	b.other = &a;
	assert_int_equal(rpcrdma__watch_start(loop, &a.w, a.fds[0], EPOLLIN, on_pipe, &a), 0);
	assert_int_equal(rpcrdma__watch_start(loop, &b.w, b.fds[0], EPOLLIN, on_pipe, &b), 0);
	assert_int_equal(write(a.fds[1], "x", 1), 1);
	assert_int_equal(write(b.fds[1], "x", 1), 1);
	/* Both are ready in one batch; whichever runs first stops the other. */
	assert_int_equal(rpcrdma_loop_run_once(loop, 1000), 1);
	assert_int_equal(a.calls + b.calls, 1);
	pipe_close(&a);
	pipe_close(&b);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/* A callback that runs the loop again, as a synchronous call would. */
static struct pipe_watch nest_outer, nest_inner;

static void on_nest_outer(struct rpcrdma__watch *w, uint32_t events)
{
	char c;

	(void)events;
	assert_int_equal(read(nest_outer.fds[0], &c, 1), 1);
	nest_outer.calls++;
	assert_int_equal(write(nest_inner.fds[1], "y", 1), 1);
	while (nest_inner.calls == 0)
		assert_true(rpcrdma_loop_run_once(w->loop, 1000) >= 0);
}

static void test_nested_run(void **state)
{
	struct rpcrdma_loop *loop = new_loop();

	(void)state;
	pipe_open(&nest_outer);
	pipe_open(&nest_inner);
	assert_int_equal(rpcrdma__watch_start(loop, &nest_outer.w, nest_outer.fds[0], EPOLLIN,
					      on_nest_outer, &nest_outer),
			 0);
	assert_int_equal(rpcrdma__watch_start(loop, &nest_inner.w, nest_inner.fds[0], EPOLLIN,
					      on_pipe, &nest_inner),
			 0);
	assert_int_equal(write(nest_outer.fds[1], "x", 1), 1);
	assert_int_equal(rpcrdma_loop_run_once(loop, 1000), 1);
	assert_int_equal(nest_outer.calls, 1);
	assert_int_equal(nest_inner.calls, 1);
	pipe_close(&nest_outer);
	pipe_close(&nest_inner);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/* Hooks. */

static int hook_work;
static int hook_runs;
static struct rpcrdma__hook hooks[3];

static int busy_hook(struct rpcrdma__hook *h)
{
	(void)h;
	hook_runs++;
	if (hook_work > 0) {
		hook_work--;
		return 1;
	}
	return 0;
}

static void test_hook_busy_no_block(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	uint64_t t0;

	(void)state;
	memset(hooks, 0, sizeof(hooks));
	hook_runs = 0;
	hook_work = 3;
	rpcrdma__hook_start(loop, &hooks[0], busy_hook, NULL);
	t0 = rpcrdma_loop_now(loop);
	/* Busy: these must not sleep their 500 ms. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(rpcrdma_loop_run_once(loop, 500), 0);
	assert_true(rpcrdma_loop_now(loop) - t0 < 400);
	assert_int_equal(hook_runs, 3);
	/* Idle now: it sleeps. */
	assert_int_equal(rpcrdma_loop_run_once(loop, 30), 0);
	assert_true(rpcrdma_loop_now(loop) - t0 >= 29);
	rpcrdma__hook_stop(&hooks[0]);
	rpcrdma__hook_stop(&hooks[0]);
	assert_int_equal(rpcrdma_loop_run_once(loop, 0), 0);
	assert_int_equal(hook_runs, 4);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

static int stopper_runs[3];

static int stopper_hook(struct rpcrdma__hook *h)
{
	int i = (int)(h - hooks);

	stopper_runs[i]++;
	/* Each stops itself and the next one in the list. */
	rpcrdma__hook_stop(h);
	if (h->ctx)
		rpcrdma__hook_stop(h->ctx);
	return 0;
}

static void test_hook_stop_in_run(void **state)
{
	struct rpcrdma_loop *loop = new_loop();

	(void)state;
	memset(hooks, 0, sizeof(hooks));
	memset(stopper_runs, 0, sizeof(stopper_runs));
	/* Started in this order, they run newest first: 2, 1, 0. */
	rpcrdma__hook_start(loop, &hooks[0], stopper_hook, NULL);
	rpcrdma__hook_start(loop, &hooks[1], stopper_hook, &hooks[0]);
	rpcrdma__hook_start(loop, &hooks[2], stopper_hook, &hooks[1]);
	assert_int_equal(rpcrdma_loop_run_once(loop, 0), 0);
	assert_int_equal(stopper_runs[2], 1);
	assert_int_equal(stopper_runs[1], 0);
	assert_int_equal(stopper_runs[0], 1);
	assert_int_equal(rpcrdma_loop_run_once(loop, 0), 0);
	assert_int_equal(stopper_runs[0] + stopper_runs[1] + stopper_runs[2], 2);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/* Wake-ups and stop. */

struct waker {
	struct rpcrdma_loop *loop;
	pthread_t self;
	pthread_t ran_on;
	int ran;
};

static void wake_cb(void *arg)
{
	struct waker *w = arg;

	w->ran++;
	w->ran_on = pthread_self();
	rpcrdma_loop_stop(w->loop);
}

static void *wake_thread(void *arg)
{
	struct waker *w = arg;

	usleep(20000);
	assert_int_equal(rpcrdma_loop_wake(w->loop, wake_cb, w), 0);
	return NULL;
}

static void test_wake_from_thread(void **state)
{
	struct waker w;
	pthread_t th;

	(void)state;
	memset(&w, 0, sizeof(w));
	w.loop = new_loop();
	w.self = pthread_self();
	assert_int_equal(pthread_create(&th, NULL, wake_thread, &w), 0);
	/* Runs until the callback stops it. */
	assert_int_equal(rpcrdma_loop_run(w.loop), 0);
	pthread_join(th, NULL);
	assert_int_equal(w.ran, 1);
	assert_true(pthread_equal(w.ran_on, w.self));
	/* A bare wake makes run_once return at once. */
	assert_int_equal(rpcrdma_loop_wake(w.loop, NULL, NULL), 0);
	assert_true(rpcrdma_loop_run_once(w.loop, 5000) >= 0);
	/* Queued callbacks that never ran are freed by destroy. */
	assert_int_equal(rpcrdma_loop_wake(w.loop, wake_cb, &w), 0);
	assert_int_equal(rpcrdma_loop_destroy(w.loop), 0);
}

static void stop_timer(struct rpcrdma__timer *t)
{
	rpcrdma_loop_stop(t->loop);
}

static void test_stop_from_timer(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	struct rpcrdma__timer t;

	(void)state;
	memset(&t, 0, sizeof(t));
	rpcrdma__timer_start(loop, &t, 10, stop_timer, NULL);
	assert_int_equal(rpcrdma_loop_run(loop), 0);
	assert_false(t.armed);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/*
 * rpcrdma_loop_stop() from outside the running iteration: before the run,
 * from another thread, from a signal handler.  A watchdog timer ends a run
 * that failed to notice the stop, and says so.
 */
static bool watchdog_fired;

static void watchdog(struct rpcrdma__timer *t)
{
	watchdog_fired = true;
	rpcrdma_loop_stop(t->loop);
}

static void run_with_watchdog(struct rpcrdma_loop *loop)
{
	struct rpcrdma__timer dog;

	memset(&dog, 0, sizeof(dog));
	watchdog_fired = false;
	rpcrdma__timer_start(loop, &dog, 3000, watchdog, NULL);
	assert_int_equal(rpcrdma_loop_run(loop), 0);
	rpcrdma__timer_stop(&dog);
	assert_false(watchdog_fired);
}

static void test_stop_before_run(void **state)
{
	struct rpcrdma_loop *loop = new_loop();

	(void)state;
	rpcrdma_loop_stop(loop);
	run_with_watchdog(loop);
	/* Even when an iteration of run_once came in between. */
	rpcrdma_loop_stop(loop);
	assert_true(rpcrdma_loop_run_once(loop, 0) >= 0);
	run_with_watchdog(loop);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

static void *stop_thread(void *arg)
{
	usleep(50000);
	rpcrdma_loop_stop(arg);
	return NULL;
}

static void test_stop_from_thread(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	pthread_t th;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, stop_thread, loop), 0);
	run_with_watchdog(loop);
	pthread_join(th, NULL);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

static struct rpcrdma_loop *signalled_loop;

static void on_sigusr2(int sig)
{
	(void)sig;
	rpcrdma_loop_stop(signalled_loop);
}

/* The signal lands after the run's last look at the stop and before its
 * epoll_wait() (a before-sleep hook), so the wait itself must end. */
static int signal_before_sleep(struct rpcrdma__hook *h)
{
	rpcrdma__hook_stop(h);
	raise(SIGUSR2);
	return 0;
}

static void test_stop_from_signal_handler(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	struct sigaction sa, old;
	struct rpcrdma__hook h;

	(void)state;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr2;
	sa.sa_flags = SA_RESTART;
	assert_int_equal(sigaction(SIGUSR2, &sa, &old), 0);
	signalled_loop = loop;
	memset(&h, 0, sizeof(h));
	rpcrdma__hook_start(loop, &h, signal_before_sleep, NULL);
	run_with_watchdog(loop);
	assert_int_equal(sigaction(SIGUSR2, &old, NULL), 0);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/* External epoll. */

static int wait_external(int ep, int ms)
{
	struct epoll_event ev;

	return epoll_wait(ep, &ev, 1, ms);
}

static void test_external_epoll(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	struct epoll_event ev = {.events = EPOLLIN};
	struct rpcrdma__timer t;
	uint64_t t0;
	int ep, lfd;

	(void)state;
	memset(&t, 0, sizeof(t));
	memset(hooks, 0, sizeof(hooks));
	ep = epoll_create1(EPOLL_CLOEXEC);
	assert_true(ep >= 0);
	lfd = rpcrdma_loop_fd(loop);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev), 0);
	assert_int_equal(wait_external(ep, 0), 0);

	/* A timer armed from outside the loop makes the fd readable when due. */
	norder = 0;
	t0 = rpcrdma_loop_now(loop);
	rpcrdma__timer_start(loop, &t, 30, record_timer, NULL);
	assert_int_equal(wait_external(ep, 2000), 1);
	assert_true(rpcrdma_loop_now(loop) - t0 >= 29);
	assert_int_equal(rpcrdma_loop_run_once(loop, 0), 1);
	assert_int_equal(norder, 1);
	assert_int_equal(wait_external(ep, 0), 0);

	/* A wake-up does too. */
	assert_int_equal(rpcrdma_loop_wake(loop, NULL, NULL), 0);
	assert_int_equal(wait_external(ep, 2000), 1);
	assert_true(rpcrdma_loop_run_once(loop, 0) >= 0);
	assert_int_equal(wait_external(ep, 0), 0);

	/* A busy hook keeps it readable until the hook is done. */
	hook_work = 2;
	hook_runs = 0;
	rpcrdma__hook_start(loop, &hooks[0], busy_hook, NULL);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(wait_external(ep, 2000), 1);
		assert_true(rpcrdma_loop_run_once(loop, 0) >= 0);
	}
	assert_int_equal(hook_work, 0);
	assert_int_equal(wait_external(ep, 20), 0);
	rpcrdma__hook_stop(&hooks[0]);

	close(ep);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/* Busy polling (rpcrdma_loop_set_busy_poll). */

static void test_busy_poll_args(void **state)
{
	struct rpcrdma_loop *loop = new_loop();

	(void)state;
	assert_int_equal(rpcrdma_loop_set_busy_poll(NULL, 10), -EINVAL);
	assert_int_equal(rpcrdma_loop_set_busy_poll(loop, RPCRDMA_LOOP_BUSY_POLL_MAX_US + 1),
			 -EINVAL);
	assert_int_equal(rpcrdma__loop_busy_poll(loop), 0);
	assert_int_equal(rpcrdma_loop_set_busy_poll(loop, RPCRDMA_LOOP_BUSY_POLL_MAX_US), 0);
	assert_int_equal(rpcrdma__loop_busy_poll(loop), RPCRDMA_LOOP_BUSY_POLL_MAX_US);
	assert_int_equal(rpcrdma_loop_set_busy_poll(loop, 0), 0);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/* Nothing comes: the spin ends, the rest of the wait is slept, and the
 * wait is never cut short. */
static void test_busy_poll_then_sleep(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	uint64_t t0, found, slept;

	(void)state;
	assert_int_equal(rpcrdma_loop_set_busy_poll(loop, 2000), 0);
	t0 = rpcrdma_loop_now(loop);
	assert_int_equal(rpcrdma_loop_run_once(loop, 50), 0);
	assert_true(rpcrdma_loop_now(loop) - t0 >= 45);
	rpcrdma__loop_busy_poll_stats(loop, &found, &slept);
	assert_int_equal(found, 0);
	assert_int_equal(slept, 1);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/* A wait shorter than the spin is spun whole: no sleep, no early end. */
static void test_busy_poll_short_wait(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	uint64_t t0, found, slept;

	(void)state;
	assert_int_equal(rpcrdma_loop_set_busy_poll(loop, RPCRDMA_LOOP_BUSY_POLL_MAX_US), 0);
	t0 = rpcrdma_loop_now(loop);
	assert_int_equal(rpcrdma_loop_run_once(loop, 5), 0);
	assert_true(rpcrdma_loop_now(loop) - t0 >= 4);
	rpcrdma__loop_busy_poll_stats(loop, &found, &slept);
	assert_int_equal(found + slept, 0);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

static void *write_soon(void *arg)
{
	usleep(1000);
	assert_int_equal(write(*(int *)arg, "x", 1), 1);
	return NULL;
}

/* An event that comes within the spin is handled without a sleep. */
static void test_busy_poll_finds_event(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	struct pipe_watch p;
	uint64_t found, slept;
	pthread_t th;

	(void)state;
	pipe_open(&p);
	assert_int_equal(rpcrdma__watch_start(loop, &p.w, p.fds[0], EPOLLIN, on_pipe, &p), 0);
	assert_int_equal(rpcrdma_loop_set_busy_poll(loop, RPCRDMA_LOOP_BUSY_POLL_MAX_US), 0);
	assert_int_equal(pthread_create(&th, NULL, write_soon, &p.fds[1]), 0);
	assert_int_equal(rpcrdma_loop_run_once(loop, 10000), 1);
	pthread_join(th, NULL);
	assert_int_equal(p.calls, 1);
	rpcrdma__loop_busy_poll_stats(loop, &found, &slept);
	assert_int_equal(found, 1);
	assert_int_equal(slept, 0);
	pipe_close(&p);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

/* A stop from another thread ends a run that spins. */
static void test_busy_poll_stop_from_thread(void **state)
{
	struct rpcrdma_loop *loop = new_loop();
	pthread_t th;

	(void)state;
	assert_int_equal(rpcrdma_loop_set_busy_poll(loop, RPCRDMA_LOOP_BUSY_POLL_MAX_US), 0);
	assert_int_equal(pthread_create(&th, NULL, stop_thread, loop), 0);
	run_with_watchdog(loop);
	pthread_join(th, NULL);
	assert_int_equal(rpcrdma_loop_destroy(loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create_destroy),
	    cmocka_unit_test(test_run_once_timeout),
	    cmocka_unit_test(test_timer_order),
	    cmocka_unit_test(test_timer_order_both_ends),
	    cmocka_unit_test(test_timer_rearm_zero),
	    cmocka_unit_test(test_timer_stop_other_in_pass),
	    cmocka_unit_test(test_run_once_runs_due_timer),
	    cmocka_unit_test(test_watch_events),
	    cmocka_unit_test(test_watch_modify_stop),
	    cmocka_unit_test(test_watch_stopped_in_batch),
	    cmocka_unit_test(test_nested_run),
	    cmocka_unit_test(test_hook_busy_no_block),
	    cmocka_unit_test(test_hook_stop_in_run),
	    cmocka_unit_test(test_wake_from_thread),
	    cmocka_unit_test(test_stop_from_timer),
	    cmocka_unit_test(test_stop_before_run),
	    cmocka_unit_test(test_stop_from_thread),
	    cmocka_unit_test(test_stop_from_signal_handler),
	    cmocka_unit_test(test_external_epoll),
	    cmocka_unit_test(test_busy_poll_args),
	    cmocka_unit_test(test_busy_poll_then_sleep),
	    cmocka_unit_test(test_busy_poll_short_wait),
	    cmocka_unit_test(test_busy_poll_finds_event),
	    cmocka_unit_test(test_busy_poll_stop_from_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
