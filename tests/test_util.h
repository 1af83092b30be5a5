/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the ww_mutex test suites:
 *  - registering one cmocka test per ww class (Wound-Wait and Wait-Die);
 *  - soft checks that any thread may use (cmocka's assert_*() longjmp to the
 *    main thread's test frame, so they are only safe there, and only while
 *    no worker can still touch the test's stack);
 *  - bounded waits: one-shot events, and "until N threads are queued on a
 *    lock" by polling ww_mutex_waiter_count() with sched_yield();
 *  - actors: threads that run one step at a time for the main thread;
 *  - a watchdog that interrupts a thread stuck in an interruptible wait, so
 *    that a deadlock fails a test instead of hanging it;
 *  - the back-off loop of a transaction that takes a list of locks in order.
 *
 * No helper sleeps to let another thread get somewhere: every wait is for a
 * condition, and its time limit only turns a hang into a failure.
 */
#ifndef TTMSIM_TEST_UTIL_H
#define TTMSIM_TEST_UTIL_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "ttmsim/interrupt.h"
#include "ttmsim/ww_debug.h"
#include "ttmsim/ww_mutex.h"

/* How long a thread may take to do what a test waits for before it fails. */
#define WAIT_LIMIT_S 10

/* One test per class; the class name shows in cmocka's output. */
#define CLASS_TEST(fn, cls)                                             \
	{ .name = #fn "(" #cls ")", .test_func = fn,                    \
	  .setup_func = checks_reset, .initial_state = &cls }
#define BOTH_CLASSES(fn) CLASS_TEST(fn, wound_wait), CLASS_TEST(fn, wait_die)

/* A test with a class and flags, passed as struct variant. */
struct variant {
	struct ww_class *cls;
	unsigned int flags;
};

#define VARIANT_TEST_(fn, cls, fl, flname)                              \
	{ .name = #fn "(" #cls ", " flname ")", .test_func = fn,        \
	  .setup_func = checks_reset,                                   \
	  .initial_state = &(struct variant){ &cls, (fl) } }
#define VARIANT_TEST(fn, cls, fl) VARIANT_TEST_(fn, cls, fl, #fl)
#define VARIANT_BOTH(fn, fl)                                            \
	VARIANT_TEST_(fn, wound_wait, fl, #fl),                         \
	VARIANT_TEST_(fn, wait_die, fl, #fl)

static inline bool is_wait_die(const struct ww_class *cls)
{
	return cls->is_wait_die != 0;
}

static inline pid_t test_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static inline long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* ---- soft checks ------------------------------------------------------ */

static pthread_mutex_t checks_mutex = PTHREAD_MUTEX_INITIALIZER;
static unsigned int checks_failed;
static char checks_first[512];

static inline void check_failed(const char *file, int line,
				const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline void check_failed(const char *file, int line,
				const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s:%d: check failed (tid %d): %s\n", file, line,
		(int)test_gettid(), msg);
	pthread_mutex_lock(&checks_mutex);
	if (checks_failed++ == 0)
		snprintf(checks_first, sizeof(checks_first), "%s:%d: %s",
			 file, line, msg);
	pthread_mutex_unlock(&checks_mutex);
}

/* Record a failure and go on; true if @cond holds. */
#define CHECK(cond)                                                     \
	((cond) ? true                                                  \
		: (check_failed(__FILE__, __LINE__, "%s", #cond), false))

/* The same for two integers, printing both. */
#define CHECK_INT(a, b)                                                 \
	__extension__({                                                 \
		long long a_ = (long long)(a), b_ = (long long)(b);     \
		if (a_ != b_)                                           \
			check_failed(__FILE__, __LINE__,                \
				     "%s == %s (%lld != %lld)", #a, #b, \
				     a_, b_);                           \
		a_ == b_;                                               \
	})

#define CHECK_MSG(cond, ...)                                            \
	((cond) ? true : (check_failed(__FILE__, __LINE__, __VA_ARGS__), false))

static inline int checks_reset(void **state)
{
	(void)state;
	pthread_mutex_lock(&checks_mutex);
	checks_failed = 0;
	checks_first[0] = '\0';
	pthread_mutex_unlock(&checks_mutex);
	return 0;
}

/* Main thread, once every worker is joined: fail the test on any check. */
static inline void assert_checks_passed(void)
{
	unsigned int n;
	char first[sizeof(checks_first)];

	pthread_mutex_lock(&checks_mutex);
	n = checks_failed;
	memcpy(first, checks_first, sizeof(first));
	pthread_mutex_unlock(&checks_mutex);
	if (n)
		fail_msg("%u check(s) failed; first: %s", n, first);
}

/* ---- threads -------------------------------------------------------- */

static inline pthread_t start_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, fn, arg), 0);
	return t;
}

static inline void join_thread(pthread_t t)
{
	assert_int_equal(pthread_join(t, NULL), 0);
}

/* ---- one-shot events -------------------------------------------------- */

struct event {
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	bool set;
};

static inline void event_init(struct event *e)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_mutex_init(&e->mutex, NULL);
	pthread_cond_init(&e->cond, &attr);
	pthread_condattr_destroy(&attr);
	e->set = false;
}

static inline void event_destroy(struct event *e)
{
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->mutex);
}

static inline void event_set(struct event *e)
{
	pthread_mutex_lock(&e->mutex);
	e->set = true;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->mutex);
}

static inline bool event_is_set(struct event *e)
{
	bool set;

	pthread_mutex_lock(&e->mutex);
	set = e->set;
	pthread_mutex_unlock(&e->mutex);
	return set;
}

/* Wait for @e for at most @seconds; false if it was not set by then. */
static inline bool event_wait_for(struct event *e, int seconds)
{
	struct timespec limit;
	bool set;

	clock_gettime(CLOCK_MONOTONIC, &limit);
	limit.tv_sec += seconds;
	pthread_mutex_lock(&e->mutex);
	while (!e->set &&
	       pthread_cond_timedwait(&e->cond, &e->mutex, &limit) != ETIMEDOUT)
		;
	set = e->set;
	pthread_mutex_unlock(&e->mutex);
	return set;
}

static inline bool event_wait(struct event *e)
{
	return event_wait_for(e, WAIT_LIMIT_S);
}

/* ---- waiting for waiters ---------------------------------------------- */

/*
 * Wait until at least @n threads are queued on @lock (a queued thread has
 * committed to sleeping there). False if that did not happen in time.
 */
static inline bool wait_for_waiters(struct ww_mutex *lock, unsigned int n)
{
	long limit = now_ns() + WAIT_LIMIT_S * 1000000000L;

	while (ww_mutex_waiter_count(lock) < n) {
		if (now_ns() > limit)
			return false;
		sched_yield();
	}
	return true;
}

/* Wait until an int that another thread updates reaches @n. */
static inline bool wait_for_int(int *value, int n)
{
	long limit = now_ns() + WAIT_LIMIT_S * 1000000000L;

	while (__atomic_load_n(value, __ATOMIC_ACQUIRE) < n) {
		if (now_ns() > limit)
			return false;
		sched_yield();
	}
	return true;
}

/* ---- watchdog --------------------------------------------------------- */

/*
 * Interrupts @target if not stopped within WAIT_LIMIT_S: a test whose
 * thread might deadlock in an interruptible lock call gets -EINTR back and
 * fails instead of hanging.
 */
struct watchdog {
	pthread_t thread, target;
	struct event stop;
	bool fired;
};

static inline void *watchdog_main(void *arg)
{
	struct watchdog *w = arg;

	if (!event_wait(&w->stop)) {
		w->fired = true;
		ttm_interrupt_thread(w->target);
	}
	return NULL;
}

static inline void watchdog_start(struct watchdog *w, pthread_t target)
{
	w->target = target;
	w->fired = false;
	event_init(&w->stop);
	w->thread = start_thread(watchdog_main, w);
}

/* Stop the watchdog; return true if it fired (its interrupt is dropped). */
static inline bool watchdog_stop(struct watchdog *w)
{
	event_set(&w->stop);
	join_thread(w->thread);
	event_destroy(&w->stop);
	if (w->fired && pthread_equal(w->target, pthread_self()))
		ttm_interrupt_clear();
	return w->fired;
}

/* ---- actors ------------------------------------------------------------ */

/*
 * An actor is a thread that runs one step at a time for the main thread,
 * with an acquire context of its own (only the thread that initialised a
 * context may use it). actor_post() hands it a step and returns at once;
 * actor_wait() waits, bounded, for the step's result. A scenario reads as a
 * sequence of steps in the test function.
 */
struct actor;
typedef int (*actor_fn)(struct actor *a, void *arg);

struct actor {
	pthread_t thread;
	pid_t tid;
	struct ww_class *cls;
	struct ww_acquire_ctx ctx;  /* used by the actor's thread only */
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	actor_fn fn;                /* step running or to run; NULL: idle */
	void *arg;
	int ret;                    /* result of the last finished step */
	bool quit;
};

static inline void *actor_main(void *arg)
{
	struct actor *a = arg;
	actor_fn fn;
	void *fn_arg;
	int ret;

	pthread_mutex_lock(&a->mutex);
	for (;;) {
		while (!a->fn && !a->quit)
			pthread_cond_wait(&a->cond, &a->mutex);
		if (!a->fn)
			break;
		fn = a->fn;
		fn_arg = a->arg;
		pthread_mutex_unlock(&a->mutex);
		ret = fn(a, fn_arg);
		pthread_mutex_lock(&a->mutex);
		a->ret = ret;
		a->fn = NULL;
		pthread_cond_broadcast(&a->cond);
	}
	pthread_mutex_unlock(&a->mutex);
	return NULL;
}

/* Hand @fn(@arg) to @a; false (and a failed check) if it is still busy. */
static inline bool actor_post(struct actor *a, actor_fn fn, void *arg)
{
	bool idle;

	pthread_mutex_lock(&a->mutex);
	idle = !a->fn;
	if (idle) {
		a->fn = fn;
		a->arg = arg;
		pthread_cond_broadcast(&a->cond);
	}
	pthread_mutex_unlock(&a->mutex);
	return CHECK_MSG(idle, "actor %d still busy with an earlier step",
			 (int)a->tid);
}

/* Wait up to @seconds for @a's step to finish; false if it has not. */
static inline bool actor_wait_for(struct actor *a, int seconds)
{
	struct timespec limit;
	bool idle;

	clock_gettime(CLOCK_MONOTONIC, &limit);
	limit.tv_sec += seconds;
	pthread_mutex_lock(&a->mutex);
	while (a->fn &&
	       pthread_cond_timedwait(&a->cond, &a->mutex, &limit) != ETIMEDOUT)
		;
	idle = !a->fn;
	pthread_mutex_unlock(&a->mutex);
	return idle;
}

static inline bool actor_wait(struct actor *a)
{
	return actor_wait_for(a, WAIT_LIMIT_S);
}

/* True while @a still runs its step (a snapshot). */
static inline bool actor_busy(struct actor *a)
{
	bool busy;

	pthread_mutex_lock(&a->mutex);
	busy = a->fn != NULL;
	pthread_mutex_unlock(&a->mutex);
	return busy;
}

/* The result of @a's last step, once actor_wait() said it finished. */
static inline int actor_ret(struct actor *a)
{
	int ret;

	pthread_mutex_lock(&a->mutex);
	ret = a->ret;
	pthread_mutex_unlock(&a->mutex);
	return ret;
}

/* Run a step that must not block; -ETIMEDOUT (a failed check) if it did. */
static inline int actor_run(struct actor *a, actor_fn fn, void *arg)
{
	if (!actor_post(a, fn, arg))
		return -EBUSY;
	if (!CHECK_MSG(actor_wait(a), "actor %d: step did not finish",
		       (int)a->tid))
		return -ETIMEDOUT;
	return actor_ret(a);
}

static inline int act_gettid(struct actor *a, void *arg)
{
	(void)arg;
	a->tid = test_gettid();
	return 0;
}

static inline void actor_start(struct actor *a, struct ww_class *cls)
{
	pthread_condattr_t attr;

	memset(a, 0, sizeof(*a));
	a->cls = cls;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_mutex_init(&a->mutex, NULL);
	pthread_cond_init(&a->cond, &attr);
	pthread_condattr_destroy(&attr);
	a->thread = start_thread(actor_main, a);
	actor_run(a, act_gettid, NULL);
}

/*
 * Stop @a. An actor still stuck in a step (a lock that never came) cannot
 * be joined, and its stack still points into the test's frame: report it
 * and abort rather than hang until the harness' timeout.
 */
static inline void actor_stop(struct actor *a)
{
	if (!actor_wait(a)) {
		fprintf(stderr, "actor %d is stuck in a step: aborting\n",
			(int)a->tid);
		abort();
	}
	pthread_mutex_lock(&a->mutex);
	a->quit = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->mutex);
	join_thread(a->thread);
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->mutex);
}

/* Steps; @arg is the lock. */
static inline int act_init(struct actor *a, void *arg)
{
	(void)arg;
	ww_acquire_init(&a->ctx, a->cls);
	return 0;
}

static inline int act_fini(struct actor *a, void *arg)
{
	(void)arg;
	ww_acquire_fini(&a->ctx);
	return 0;
}

static inline int act_lock(struct actor *a, void *lock)
{
	return ww_mutex_lock(lock, &a->ctx);
}

static inline int act_lock_intr(struct actor *a, void *lock)
{
	return ww_mutex_lock_interruptible(lock, &a->ctx);
}

static inline int act_lock_slow(struct actor *a, void *lock)
{
	ww_mutex_lock_slow(lock, &a->ctx);
	return 0;
}

static inline int act_lock_slow_intr(struct actor *a, void *lock)
{
	return ww_mutex_lock_slow_interruptible(lock, &a->ctx);
}

static inline int act_trylock(struct actor *a, void *lock)
{
	return ww_mutex_trylock(lock, &a->ctx);
}

static inline int act_lock_noctx(struct actor *a, void *lock)
{
	(void)a;
	return ww_mutex_lock(lock, NULL);
}

static inline int act_lock_intr_noctx(struct actor *a, void *lock)
{
	(void)a;
	return ww_mutex_lock_interruptible(lock, NULL);
}

static inline int act_unlock(struct actor *a, void *lock)
{
	(void)a;
	ww_mutex_unlock(lock);
	return 0;
}

static inline int act_interrupt_clear(struct actor *a, void *arg)
{
	(void)a;
	(void)arg;
	return ttm_interrupt_clear();
}

/* ---- transactions ----------------------------------------------------- */

static inline void unlock_list(struct ww_mutex **locks, unsigned int n)
{
	while (n--)
		ww_mutex_unlock(locks[n]);
}

/*
 * Take locks[start..n-1] with @ctx, locks[0..start-1] being held already,
 * backing off on -EDEADLK the documented way: unlock everything, sleep on
 * the contended lock with ww_mutex_lock_slow() (or its interruptible form),
 * then take the others again in list order. Checks that -EDEADLK only comes
 * while something is held.
 *
 * Return: the number of back-offs with every lock held, or a negative errno
 * (-EINTR when @interruptible) with none held.
 */
static inline int lock_list(struct ww_mutex **locks, unsigned int n,
			    unsigned int start, struct ww_acquire_ctx *ctx,
			    bool interruptible)
{
	int contended = -1, backoffs = 0, ret;
	unsigned int i = start, j, held;

	for (; i < n; i++) {
		if ((int)i == contended)
			continue;
		ret = interruptible ? ww_mutex_lock_interruptible(locks[i], ctx)
				    : ww_mutex_lock(locks[i], ctx);
		if (ret == 0)
			continue;

		held = i + (contended > (int)i);
		for (j = 0; j < i; j++)
			ww_mutex_unlock(locks[j]);
		if (contended > (int)i)
			ww_mutex_unlock(locks[contended]);
		if (ret != -EDEADLK) {
			CHECK_MSG(ret == -EINTR && interruptible,
				  "lock returned %d", ret);
			return ret;
		}
		CHECK_MSG(held > 0, "-EDEADLK while holding nothing");

		backoffs++;
		if (interruptible) {
			ret = ww_mutex_lock_slow_interruptible(locks[i], ctx);
			if (ret) {
				CHECK_INT(ret, -EINTR);
				return ret;
			}
		} else {
			ww_mutex_lock_slow(locks[i], ctx);
		}
		contended = (int)i;
		i = (unsigned int)-1; /* start again from the first lock */
	}
	return backoffs;
}


/*
 * For the few core tests that step outside the API's rules on purpose
 * (the debug checker would stop them): switch the checker off while no
 * thread holds anything, and back on the same way.
 */
static inline bool checker_off(void)
{
	bool was = ww_debug_enabled();

	ww_debug_set_enabled(false);
	return was;
}

static inline void checker_restore(bool was)
{
	ww_debug_set_enabled(was);
}

/*
 * One case of a randomized stress suite (test_bo_stress.c,
 * test_execbuf_stress.c): its class and injected back-offs, handed to
 * @fn as its state.
 */
struct stress_variant {
	bool wound_wait;
	unsigned int inject;	/* ww_debug_inject()'s n; 0: none */
};

#define STRESS_CASE(nm, fn, ww, inj)                                    \
	{ .name = nm, .test_func = fn, .setup_func = checks_reset,      \
	  .initial_state = &(struct stress_variant){ ww, inj } }

/*
 * The command line of the stress suites: [--short | --long], starting
 * from @long_run. False (usage printed) on anything else.
 */
static inline bool stress_args(int argc, char **argv, bool *long_run,
			       const char *long_doc)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--long")) {
			*long_run = true;
		} else if (!strcmp(argv[i], "--short")) {
			*long_run = false;
		} else {
			fprintf(stderr, "usage: %s [--short | --long]\n"
				"  %s\n"
				"  TTMSIM_SEED=n: replay a run\n", argv[0],
				long_doc);
			return false;
		}
	}
	return true;
}

/* TTMSIM_SEED if set, so that a run can be replayed; else the clock. */
static inline unsigned int stress_seed(void)
{
	const char *env = getenv("TTMSIM_SEED");

	return env && *env ? (unsigned int)strtoul(env, NULL, 0)
			   : (unsigned int)now_ns();
}

#endif /* TTMSIM_TEST_UTIL_H */
