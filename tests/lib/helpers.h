/* SPDX-License-Identifier: MIT */
/*
 * The helpers every test suite links (tests/lib/, built once as a static
 * library): cmocka cases for each ww class, soft checks that any thread may
 * use, threads and bounded waits, actors, watchdogs, the back-off loop of
 * a ww transaction, and the stress suites' command line. The buffer suites
 * add bo_helpers.h.
 *
 * No helper sleeps to let another thread get somewhere: every wait is for a
 * condition, and its time limit only turns a hang into a failure.
 *
 * The C library and cmocka headers the suites are written against come
 * with this one.
 */
#ifndef TTMSIM_TEST_HELPERS_H
#define TTMSIM_TEST_HELPERS_H

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
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "ttmsim/interrupt.h"
#include "ttmsim/ww_debug.h"
#include "ttmsim/ww_mutex.h"

/* How long a thread may take to do what a test waits for before it fails. */
#define WAIT_LIMIT_S 10

/* ---- cmocka cases ----------------------------------------------------- */

/*
 * One test per class (the suite's own wound_wait and wait_die); the class
 * name shows in cmocka's output.
 */
#define CLASS_TEST(fn, cls)                                             \
	{ .name = #fn "(" #cls ")", .test_func = fn,                    \
	  .setup_func = checks_reset, .initial_state = &cls }
#define BOTH_CLASSES(fn) CLASS_TEST(fn, wound_wait), CLASS_TEST(fn, wait_die)

/* ---- soft checks (check.c) -------------------------------------------- */

/*
 * cmocka's assert_*() longjmp to the main thread's test frame: they are
 * only safe there, and only while no worker can still touch the test's
 * stack. A CHECK records a failure, from any thread, and goes on;
 * assert_checks_passed() fails the test on the main thread afterwards.
 */
void check_failed(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

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

/* A cmocka setup function: forget the failures of earlier tests. */
int checks_reset(void **state);

/* Main thread, once every worker is joined: fail the test on any check. */
void assert_checks_passed(void);
/* How many checks failed since checks_reset(). */
unsigned int checks_failed_count(void);

/* ---- threads and the clock (thread.c) --------------------------------- */

pthread_t start_thread(void *(*fn)(void *), void *arg);
void join_thread(pthread_t t);
pid_t test_gettid(void);
/*
 * Whether thread @tid of this process is blocked in futex() (read from
 * /proc: its current system call): the word's address and the value it
 * waits for while it stays, in *@ret_addr and *@ret_val.
 */
bool thread_futex_wait(pid_t tid, uintptr_t *ret_addr, unsigned long *ret_val);
long now_ns(void);

/* ---- one-shot events (event.c) ---------------------------------------- */

struct event {
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	bool set;
};

void event_init(struct event *e);
void event_destroy(struct event *e);
void event_set(struct event *e);
/* Wait for @e for at most @seconds; false if it was not set by then. */
bool event_wait_for(struct event *e, int seconds);

/* ---- polled waits (wait.c) -------------------------------------------- */

/* Poll @cond(@arg), yielding, for WAIT_LIMIT_S; false if it never held. */
bool wait_until(bool (*cond)(void *arg), void *arg);
/* Until at least @n threads are queued on @lock (committed to sleeping). */
bool wait_for_waiters(struct ww_mutex *lock, unsigned int n);
/* Until an int that another thread updates reaches @n. */
bool wait_for_int(int *value, int n);

struct actor;
/*
 * Until @a's step has ended or a thread is queued on @lock, whichever
 * comes first: a step that either returns at once or waits on @lock.
 */
bool wait_for_step_or_waiter(struct actor *a, struct ww_mutex *lock);

struct ttm_fence;
/* Threads asleep in ttm_fence_wait() on @f (read from its waiter list). */
unsigned int fence_waiters(struct ttm_fence *f);
/* Until at least @n threads are asleep in ttm_fence_wait() on @f. */
bool wait_for_fence_waiters(struct ttm_fence *f, unsigned int n);

/* ---- watchdogs (watchdog.c) ------------------------------------------- */

/*
 * Interrupts the thread that started it (through its interrupt token) if
 * not stopped within WAIT_LIMIT_S: a test whose thread might deadlock in
 * an interruptible lock call gets -EINTR back and fails instead of
 * hanging.
 */
struct watchdog {
	pthread_t thread;
	struct ttm_interrupt_token *target;
	struct event stop;
	bool fired;
};

void watchdog_start(struct watchdog *w);
/* Stop the watchdog; return true if it fired (its interrupt is dropped). */
bool watchdog_stop(struct watchdog *w);

/*
 * For runs whose threads cannot be interrupted: calls @stalled(@arg) to
 * report what it knows and aborts if *@progress (which the workers bump
 * atomically) stands still for @limit_s seconds; calls @tick(@arg), unless
 * NULL, once a second meanwhile. The caller sets the first five members.
 */
struct progress_watchdog {
	const unsigned long *progress;
	int limit_s;
	void (*tick)(void *arg);
	void (*stalled)(void *arg);
	void *arg;
	pthread_t thread;
	struct event stop;
};

void progress_watchdog_start(struct progress_watchdog *wd);
void progress_watchdog_stop(struct progress_watchdog *wd);

/* ---- actors (actor.c) ------------------------------------------------- */

/*
 * An actor is a thread that runs one step at a time for the main thread,
 * with an acquire context of its own (only the thread that initialised a
 * context may use it). actor_post() hands it a step and returns at once;
 * actor_wait() waits, bounded, for the step's result. A scenario reads as a
 * sequence of steps in the test function. An actor has an interrupt token
 * from its start: ttm_interrupt(a->token) or ttm_interrupt_thread() reach
 * it before its first ttmsim call too.
 */
struct actor;
typedef int (*actor_fn)(struct actor *a, void *arg);

struct actor {
	pthread_t thread;
	pid_t tid;
	struct ttm_interrupt_token *token; /* ttm_interrupt() reaches it */
	struct ww_class *cls;
	struct ww_acquire_ctx ctx;  /* used by the actor's thread only */
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	actor_fn fn;                /* step running or to run; NULL: idle */
	void *arg;
	int ret;                    /* result of the last finished step */
	bool quit;
};

void actor_start(struct actor *a, struct ww_class *cls);
/* Aborts if @a is stuck in a step: its stack points into the test's. */
void actor_stop(struct actor *a);
/* Hand @fn(@arg) to @a; false (and a failed check) if it is still busy. */
bool actor_post(struct actor *a, actor_fn fn, void *arg);
/* Wait up to WAIT_LIMIT_S for @a's step to finish; false if it has not. */
bool actor_wait(struct actor *a);
/* True while @a still runs its step (a snapshot). */
bool actor_busy(struct actor *a);
/* The result of @a's last step, once actor_wait() said it finished. */
int actor_ret(struct actor *a);
/* Run a step that must not block; -ETIMEDOUT (a failed check) if it did. */
int actor_run(struct actor *a, actor_fn fn, void *arg);

/* Steps for actor_post() and actor_run(); @lock is a struct ww_mutex. */
int act_init(struct actor *a, void *arg);
int act_fini(struct actor *a, void *arg);
int act_lock(struct actor *a, void *lock);
int act_lock_slow(struct actor *a, void *lock);
int act_lock_slow_intr(struct actor *a, void *lock);
int act_trylock(struct actor *a, void *lock);
int act_lock_noctx(struct actor *a, void *lock);
int act_unlock(struct actor *a, void *lock);
int act_interrupt_clear(struct actor *a, void *arg);

/* ---- ww transactions (ww.c) ------------------------------------------- */

bool is_wait_die(const struct ww_class *cls);
void unlock_list(struct ww_mutex **locks, unsigned int n);
/*
 * Take locks[start..n-1], the others being held, backing off on -EDEADLK
 * the documented way; the number of back-offs, or a negative errno with
 * nothing held.
 */
int lock_list(struct ww_mutex **locks, unsigned int n, unsigned int start,
	      struct ww_acquire_ctx *ctx, bool interruptible);

/*
 * For the few tests that step outside the API's rules on purpose (the
 * debug checker would stop them), while no thread holds anything.
 */
bool checker_off(void);
void checker_restore(bool was);

/* ---- stress suites (stress.c) ----------------------------------------- */

/* One case of a randomized stress suite: @fn's state. */
struct stress_variant {
	bool wound_wait;
	unsigned int inject;	/* ww_debug_inject()'s n; 0: none */
};

#define STRESS_CASE(nm, fn, ww, inj)                                    \
	{ .name = nm, .test_func = fn, .setup_func = checks_reset,      \
	  .initial_state = &(struct stress_variant){ ww, inj } }

/*
 * [--short | --long], from *@long_run on; false, usage printed with
 * @long_doc, on anything else.
 */
bool stress_args(int argc, char **argv, bool *long_run,
		 const char *long_doc);
/* TTMSIM_SEED if set, so that a run can be replayed; else the clock. */
unsigned int stress_seed(void);
/* The next number of a xorshift32 sequence; *@state must not be 0. */
uint32_t xorshift32(uint32_t *state);

#endif /* TTMSIM_TEST_HELPERS_H */
