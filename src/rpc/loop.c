/*
 * loop.c - the event loop: one epoll set, an eventfd for cross-thread
 * wake-ups (the only lock guards the wake queue), one-shot timers in a list
 * sorted by due time (inserted from the tail: nearly every timer is "now +
 * a fixed time-out"), and before-sleep hooks (loop_internal.h gives the
 * order of one iteration).  With an external epoll (rpcrdma_loop_fd()) a
 * timerfd armed at the next timer and the eventfd make the epoll fd
 * readable whenever the loop has work.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "common/trace.h"
#include "rpc/loop_internal.h"

#define EVENT_BATCH 64

struct wake_item {
	struct wake_item *next;
	void (*cb)(void *arg);
	void *arg;
};

/*
 * The events of one epoll_wait() still being dispatched.  Iterations nest
 * (a synchronous call made from a callback runs the loop), so each keeps its
 * own batch and rpcrdma__watch_stop() clears a stopped watch from all.
 */
struct batch {
	struct epoll_event *ev;
	int n;
	struct batch *up;
};

struct rpcrdma_loop {
	int epfd;
	int evfd;
	int tfd;
	struct rpcrdma__watch ev_watch;
	struct rpcrdma__watch tfd_watch;

	struct rpcrdma__list timers; /* soonest first */
	uint64_t recent_ms;          /* now_ms() at the top of the iteration or after its wait, or 0 */

	struct rpcrdma__hook *hooks;
	struct rpcrdma__hook *hook_cursor; /* next hook to run; fixed up by hook_stop */

	struct batch *batches;
	int depth;   /* iterations in progress (nesting) */
	bool in_run; /* inside rpcrdma_loop_run() */
	/* Set by rpcrdma_loop_stop() from any thread or a signal handler. */
	atomic_bool stop;
	bool external;    /* rpcrdma_loop_fd() was asked for */
	uint64_t tfd_due; /* what the timerfd is armed at; 0: disarmed */
	int refs;
	pid_t owner; /* the process that made it (rpcrdma__loop_inherited) */
	unsigned int busy_poll_us; /* rpcrdma_loop_set_busy_poll() */
	uint64_t busy_found, busy_slept; /* rpcrdma__loop_busy_poll_stats() */

	pthread_mutex_t wake_lock;
	struct wake_item *wake_head, *wake_tail; /* wake_lock */
	bool wake_pending;                       /* wake_lock */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t rpcrdma_loop_now(struct rpcrdma_loop *loop)
{
	(void)loop;
	return now_ms();
}

uint64_t rpcrdma__loop_recent_ms(struct rpcrdma_loop *loop)
{
	return loop && loop->depth && loop->recent_ms ? loop->recent_ms : now_ms();
}

static void arm_timerfd(struct rpcrdma_loop *loop);
static void kick(struct rpcrdma_loop *loop);

/* Watches. */

int rpcrdma__watch_start(struct rpcrdma_loop *loop, struct rpcrdma__watch *w, int fd,
			 uint32_t events, rpcrdma__watch_fn fn, void *ctx)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};

	if (!loop || !w || fd < 0 || !fn)
		return -EINVAL;
	if (w->active && w->loop == loop && w->fd == fd) {
		w->fn = fn;
		w->ctx = ctx;
		return rpcrdma__watch_modify(w, events);
	}
	if (w->active)
		return -EBUSY;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	w->fd = fd;
	w->events = events;
	w->fn = fn;
	w->ctx = ctx;
	w->loop = loop;
	w->active = true;
	return 0;
}

int rpcrdma__watch_modify(struct rpcrdma__watch *w, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};

	if (!w || !w->active)
		return -EINVAL;
	if (w->events == events)
		return 0;
	if (epoll_ctl(w->loop->epfd, EPOLL_CTL_MOD, w->fd, &ev) < 0)
		return -errno;
	w->events = events;
	return 0;
}

void rpcrdma__watch_stop(struct rpcrdma__watch *w)
{
	struct epoll_event dummy;

	if (!w || !w->active)
		return;
	/* EBADF/ENOENT: the fd was closed first; the kernel dropped it then. */
	(void)epoll_ctl(w->loop->epfd, EPOLL_CTL_DEL, w->fd, &dummy);
	for (struct batch *b = w->loop->batches; b; b = b->up) {
		for (int i = 0; i < b->n; i++) {
			if (b->ev[i].data.ptr == w)
				b->ev[i].data.ptr = NULL;
		}
	}
	w->active = false;
}

/* Timers. */

static struct rpcrdma__timer *timer_of(struct rpcrdma__list *n)
{
	return n ? rpcrdma__container_of(n, struct rpcrdma__timer, node) : NULL;
}

/* The soonest timer, or NULL. */
static struct rpcrdma__timer *first_timer(const struct rpcrdma_loop *loop)
{
	return timer_of(rpcrdma__list_first(&loop->timers));
}

static void timer_unlink(struct rpcrdma__timer *t)
{
	rpcrdma__list_del(&t->node);
	t->armed = false;
}

void rpcrdma__timer_start(struct rpcrdma_loop *loop, struct rpcrdma__timer *t, uint64_t after_ms,
			  rpcrdma__timer_fn fn, void *ctx)
{
	struct rpcrdma__list *at;
	uint64_t now;

	if (!loop || !t || !fn)
		return;
	/* "At once" needs no clock read inside an iteration: any time
	 * already passed will do.  Any other timer is placed by the exact
	 * clock: the coarse one lags it by a tick plus however late that
	 * tick's interrupt came (5 ms seen at HZ=250 on a busy guest), which
	 * no fixed slack covers, and a timer never runs early. */
	now = after_ms ? now_ms() : rpcrdma__loop_recent_ms(loop);
	if (t->armed)
		timer_unlink(t);
	t->due_ms = after_ms > UINT64_MAX - now ? UINT64_MAX : now + after_ms;
	t->fn = fn;
	t->ctx = ctx;
	t->loop = loop;
	/*
	 * Behind every timer due at the same time or sooner: FIFO among
	 * equals.  Walked from the nearer end: a call's timeout goes last, and
	 * an "at once" timer goes ahead of every call's timeout (a client has
	 * one per call in flight), so neither walks past them.
	 */
	if (rpcrdma__list_empty(&loop->timers) || timer_of(loop->timers.prev)->due_ms <= t->due_ms) {
		at = loop->timers.prev;
	} else {
		for (at = &loop->timers; at->next != &loop->timers &&
					 timer_of(at->next)->due_ms <= t->due_ms;
		     at = at->next)
			;
	}
	rpcrdma__list_add_head(at, &t->node); /* right after @at (or first) */
	t->armed = true;
	/* Armed from outside an iteration: the application's epoll must see it. */
	if (loop->external && loop->depth == 0 && first_timer(loop) == t)
		arm_timerfd(loop);
}

void rpcrdma__timer_stop(struct rpcrdma__timer *t)
{
	if (t && t->armed)
		timer_unlink(t);
}

/*
 * Run the timers due by the loop's clock (recent_ms).  Only as many as were
 * due on entry: a callback that re-arms itself with 0 runs again next
 * iteration, not in an endless loop here.
 */
static int run_timers(struct rpcrdma_loop *loop)
{
	uint64_t now = loop->recent_ms;
	unsigned int due = 0;
	int ran = 0;

	struct rpcrdma__list *it;
	struct rpcrdma__timer *t;

	rpcrdma__list_foreach(it, &loop->timers)
	{
		if (timer_of(it)->due_ms > now)
			break;
		due++;
	}
	while (due-- > 0 && (t = first_timer(loop)) && t->due_ms <= now) {
		timer_unlink(t);
		t->fn(t);
		ran++;
	}
	return ran;
}

/* Hooks. */

void rpcrdma__hook_start(struct rpcrdma_loop *loop, struct rpcrdma__hook *h, rpcrdma__hook_fn fn,
			 void *ctx)
{
	if (!loop || !h || !fn)
		return;
	h->fn = fn;
	h->ctx = ctx;
	if (h->active)
		return;
	h->loop = loop;
	h->next = loop->hooks;
	loop->hooks = h;
	h->active = true;
	if (loop->external && loop->depth == 0)
		kick(loop);
}

void rpcrdma__hook_stop(struct rpcrdma__hook *h)
{
	struct rpcrdma__hook **pp;

	if (!h || !h->active)
		return;
	for (pp = &h->loop->hooks; *pp; pp = &(*pp)->next) {
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	}
	if (h->loop->hook_cursor == h)
		h->loop->hook_cursor = h->next;
	h->next = NULL;
	h->active = false;
}

static bool run_hooks(struct rpcrdma_loop *loop)
{
	bool busy = false;

	for (struct rpcrdma__hook *h = loop->hooks; h; h = loop->hook_cursor) {
		loop->hook_cursor = h->next;
		if (h->fn(h))
			busy = true;
	}
	loop->hook_cursor = NULL;
	return busy;
}

/* Wake-ups. */

static void kick(struct rpcrdma_loop *loop)
{
	uint64_t one = 1;

	/* EAGAIN: the counter is saturated, so the fd is readable anyway. */
	(void)!write(loop->evfd, &one, sizeof(one));
}

int rpcrdma_loop_wake(struct rpcrdma_loop *loop, void (*cb)(void *arg), void *arg)
{
	struct wake_item *it = NULL;

	if (!loop)
		return -EINVAL;
	if (cb) {
		it = malloc(sizeof(*it));
		if (!it)
			return -ENOMEM;
		it->next = NULL;
		it->cb = cb;
		it->arg = arg;
	}
	pthread_mutex_lock(&loop->wake_lock);
	if (it) {
		if (loop->wake_tail)
			loop->wake_tail->next = it;
		else
			loop->wake_head = it;
		loop->wake_tail = it;
	}
	loop->wake_pending = true;
	pthread_mutex_unlock(&loop->wake_lock);
	kick(loop);
	return 0;
}

static int run_wakes(struct rpcrdma_loop *loop)
{
	struct wake_item *list;
	int ran = 0;

	pthread_mutex_lock(&loop->wake_lock);
	list = loop->wake_head;
	loop->wake_head = loop->wake_tail = NULL;
	loop->wake_pending = false;
	pthread_mutex_unlock(&loop->wake_lock);
	while (list) {
		struct wake_item *it = list;

		list = it->next;
		it->cb(it->arg);
		free(it);
		ran++;
	}
	return ran;
}

static bool wakes_queued(struct rpcrdma_loop *loop)
{
	bool q;

	pthread_mutex_lock(&loop->wake_lock);
	q = loop->wake_head != NULL;
	pthread_mutex_unlock(&loop->wake_lock);
	return q;
}

static void on_eventfd(struct rpcrdma__watch *w, uint32_t events)
{
	uint64_t v;

	(void)events;
	(void)!read(w->fd, &v, sizeof(v));
}

static void on_timerfd(struct rpcrdma__watch *w, uint32_t events)
{
	struct rpcrdma_loop *loop = w->ctx;
	uint64_t v;

	(void)events;
	(void)!read(w->fd, &v, sizeof(v));
	loop->tfd_due = 0;
}

/* External mode: make the epoll fd readable when the next timer is due. */
static void arm_timerfd(struct rpcrdma_loop *loop)
{
	struct itimerspec its;
	uint64_t due = first_timer(loop) ? first_timer(loop)->due_ms : 0;

	if (due == loop->tfd_due)
		return;
	memset(&its, 0, sizeof(its));
	if (due) {
		its.it_value.tv_sec = (time_t)(due / 1000u);
		its.it_value.tv_nsec = (long)(due % 1000u) * 1000000L;
	}
	if (timerfd_settime(loop->tfd, due ? TFD_TIMER_ABSTIME : 0, &its, NULL) == 0)
		loop->tfd_due = due;
}

/* Loop life cycle. */

int rpcrdma_loop_create(struct rpcrdma_loop **out)
{
	struct rpcrdma_loop *loop;
	int rc;

	if (!out)
		return -EINVAL;
	loop = calloc(1, sizeof(*loop));
	if (!loop)
		return -ENOMEM;
	loop->evfd = loop->tfd = -1;
	loop->owner = getpid();
	rpcrdma__list_init(&loop->timers);
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (loop->epfd < 0)
		goto out_errno;
	loop->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (loop->evfd < 0)
		goto out_errno;
	loop->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (loop->tfd < 0)
		goto out_errno;
	rc = pthread_mutex_init(&loop->wake_lock, NULL);
	if (rc) {
		rc = -rc;
		goto out_close;
	}
	rc = rpcrdma__watch_start(loop, &loop->ev_watch, loop->evfd, EPOLLIN, on_eventfd, loop);
	if (!rc)
		rc = rpcrdma__watch_start(loop, &loop->tfd_watch, loop->tfd, EPOLLIN, on_timerfd,
					  loop);
	if (rc) {
		pthread_mutex_destroy(&loop->wake_lock);
		goto out_close;
	}
	*out = loop;
	return 0;

out_errno:
	rc = -errno;
out_close:
	if (loop->tfd >= 0)
		close(loop->tfd);
	if (loop->evfd >= 0)
		close(loop->evfd);
	if (loop->epfd >= 0)
		close(loop->epfd);
	free(loop);
	return rc;
}

bool rpcrdma__loop_inherited(struct rpcrdma_loop *loop, const char *what)
{
	pid_t me = getpid();

	if (!loop || loop->owner == me)
		return false;
	RPCRDMA__TRACE_BAD_ARG(-EPERM, "%s: made by process %ld, not this one (%ld, forked from it)",
			       what, (long)loop->owner, (long)me);
	return true;
}

int rpcrdma_loop_destroy(struct rpcrdma_loop *loop)
{
	struct wake_item *it;

	if (!loop)
		return -EINVAL;
	if (rpcrdma__loop_inherited(loop, "rpcrdma_loop_destroy"))
		return -EPERM;
	if (loop->refs > 0 || loop->depth > 0)
		return -EBUSY;
	/* Queued wake callbacks never run: their owners are gone with the loop. */
	while ((it = loop->wake_head)) {
		loop->wake_head = it->next;
		free(it);
	}
	pthread_mutex_destroy(&loop->wake_lock);
	close(loop->tfd);
	close(loop->evfd);
	close(loop->epfd);
	free(loop);
	return 0;
}

int rpcrdma_loop_fd(struct rpcrdma_loop *loop)
{
	if (!loop)
		return -EINVAL;
	if (!loop->external) {
		loop->external = true;
		arm_timerfd(loop);
		if (loop->hooks)
			kick(loop);
	}
	return loop->epfd;
}

void rpcrdma__loop_ref(struct rpcrdma_loop *loop)
{
	loop->refs++;
}

void rpcrdma__loop_unref(struct rpcrdma_loop *loop)
{
	loop->refs--;
}

/* Wait at most @timeout_ms, but no longer than until the next timer (by the
 * loop's clock, read at the top of this iteration). */
static int wait_time(struct rpcrdma_loop *loop, int timeout_ms)
{
	struct rpcrdma__timer *t = first_timer(loop);
	uint64_t now = loop->recent_ms, left;

	if (!t)
		return timeout_ms;
	left = t->due_ms > now ? t->due_ms - now : 0;
	if (left > INT_MAX)
		left = INT_MAX;
	if (timeout_ms < 0 || (uint64_t)timeout_ms > left)
		return (int)left;
	return timeout_ms;
}

int rpcrdma_loop_set_busy_poll(struct rpcrdma_loop *loop, unsigned int usec)
{
	if (!loop || usec > RPCRDMA_LOOP_BUSY_POLL_MAX_US) {
		RPCRDMA__TRACE_BAD_ARG(-EINVAL, "rpcrdma_loop_set_busy_poll: %s",
				       !loop ? "a NULL loop" : "usec above RPCRDMA_LOOP_BUSY_POLL_MAX_US");
		return -EINVAL;
	}
	loop->busy_poll_us = usec;
	return 0;
}

unsigned int rpcrdma__loop_busy_poll(const struct rpcrdma_loop *loop)
{
	return loop->busy_poll_us;
}

void rpcrdma__loop_busy_poll_stats(const struct rpcrdma_loop *loop, uint64_t *found,
				   uint64_t *slept)
{
	*found = loop->busy_found;
	*slept = loop->busy_slept;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/*
 * epoll_wait() for at most @wait_ms, asking without sleeping first for as
 * long as the loop's busy poll says (but not past @wait_ms).  A stop or a
 * wake from another thread kicks the eventfd, which is in the set, so
 * the spin sees them as any other event.
 */
static int wait_events(struct rpcrdma_loop *loop, struct epoll_event *ev, int wait_ms)
{
	uint64_t start, spin_us, spent_us;
	int n;

	if (wait_ms == 0 || !loop->busy_poll_us)
		return epoll_wait(loop->epfd, ev, EVENT_BATCH, wait_ms);
	spin_us = loop->busy_poll_us;
	if (wait_ms > 0 && (uint64_t)wait_ms * 1000u < spin_us)
		spin_us = (uint64_t)wait_ms * 1000u;
	start = now_us();
	do {
		n = epoll_wait(loop->epfd, ev, EVENT_BATCH, 0);
		spent_us = now_us() - start;
	} while (n == 0 && spent_us < spin_us);
	if (n > 0)
		loop->busy_found++;
	if (n != 0)
		return n;
	if (wait_ms > 0) {
		/* What is left of the wait, whole milliseconds rounded down
		 * (a timer then runs by the loop's clock, never early). */
		uint64_t left_ms = (uint64_t)wait_ms - spent_us / 1000u;

		if (spent_us / 1000u >= (uint64_t)wait_ms)
			return 0;
		wait_ms = (int)left_ms;
	}
	loop->busy_slept++;
	return epoll_wait(loop->epfd, ev, EVENT_BATCH, wait_ms);
}

static int iterate(struct rpcrdma_loop *loop, int timeout_ms)
{
	struct epoll_event ev[EVENT_BATCH];
	struct batch b = {.ev = ev};
	bool busy, wakes;
	int handled, n, wait_ms;

	/*
	 * The clock is read here and after a wait that may have slept, not
	 * by each timer pass: timers run by this time, at most as late as
	 * the callbacks since took (due times themselves come from a fresh
	 * read, so no timer runs early).  Where clock_gettime is a system
	 * call (a guest without a vDSO clock source) that was four per
	 * wake-up.
	 */
	loop->recent_ms = now_ms();
	handled = run_timers(loop);
	busy = run_hooks(loop);
	pthread_mutex_lock(&loop->wake_lock);
	wakes = loop->wake_pending;
	pthread_mutex_unlock(&loop->wake_lock);
	if (busy || wakes || handled)
		timeout_ms = 0;

	wait_ms = wait_time(loop, timeout_ms);
	n = wait_events(loop, ev, wait_ms);
	if (wait_ms != 0)
		loop->recent_ms = now_ms(); /* the wait may have been long */
	if (n < 0) {
		if (errno != EINTR)
			return -errno;
		n = 0;
	}
	b.n = n;
	b.up = loop->batches;
	loop->batches = &b;
	for (int i = 0; i < n; i++) {
		struct rpcrdma__watch *w = ev[i].data.ptr;

		/* NULL: stopped by an earlier callback of this batch. */
		if (!w)
			continue;
		w->fn(w, ev[i].events);
		if (w != &loop->tfd_watch && w != &loop->ev_watch)
			handled++;
	}
	loop->batches = b.up;
	handled += run_wakes(loop);
	handled += run_timers(loop);

	/* Only the application's own epoll needs the fd to stay readable. */
	if (loop->external && !loop->in_run && loop->depth == 1) {
		if (busy || wakes_queued(loop))
			kick(loop);
		arm_timerfd(loop);
	}
	return handled;
}

int rpcrdma_loop_run_once(struct rpcrdma_loop *loop, int timeout_ms)
{
	int rc;

	if (!loop)
		return -EINVAL;
	loop->depth++;
	rc = iterate(loop, timeout_ms < 0 ? -1 : timeout_ms);
	loop->depth--;
	return rc;
}

int rpcrdma_loop_run(struct rpcrdma_loop *loop)
{
	bool outer;
	int rc = 0;

	if (!loop)
		return -EINVAL;
	outer = !loop->in_run;
	loop->in_run = true;
	loop->depth++;
	while (rc >= 0) {
		/* A stop from before the run (its kick maybe eaten by a
		 * rpcrdma_loop_run_once() since) must not wait either. */
		rc = iterate(loop, atomic_load(&loop->stop) ? 0 : -1);
		if (atomic_load(&loop->stop))
			break;
	}
	loop->depth--;
	atomic_store(&loop->stop, false);
	if (outer)
		loop->in_run = false;
	return rc < 0 ? rc : 0;
}

void rpcrdma_loop_stop(struct rpcrdma_loop *loop)
{
	if (!loop)
		return;
	/*
	 * ORDER: the flag before the kick.  The kick makes an epoll_wait()
	 * under way, or the next one, return at once: without it a stop
	 * from another thread, from a signal handler between two
	 * iterations, or before rpcrdma_loop_run() was called, waited for
	 * some unrelated event to end the iteration.  Both are
	 * async-signal-safe: a lock-free store and write(2).
	 */
	atomic_store(&loop->stop, true);
	kick(loop);
}
