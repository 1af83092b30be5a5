// SPDX-License-Identifier: MIT
/*
 * Fuzz target: sequences of ww_mutex API calls by 2 or 3 transactions on
 * 3 locks of one class (ww/).
 *
 * Each transaction is a real thread (a context belongs to its thread, and
 * a thread may have only one context of a class open); a coordinator
 * hands each thread one call at a time and waits until the call returns
 * or the thread is seen asleep on its lock (ww_mutex_waiter_count()), so
 * calls are made in the order the input gives. The input only picks among
 * the calls that are valid in the transaction's state (a state machine
 * per context): init, lock, lock_interruptible, trylock, unlock, done,
 * fini, and after -EDEADLK the back-off: unlock everything, lock_slow on
 * the contended lock. At the end every transaction is driven to its fini.
 *
 * Byte 0: bit 0 the class (Wait-Die or Wound-Wait), bit 1 two or three
 * transactions. Then each byte is one step: the transaction (byte % n)
 * and what it does (byte / n). A step of a transaction asleep on a lock
 * is skipped.
 *
 * Asserted: no report of the debug checker (a handler aborts); mutual
 * exclusion (a counter per lock, raised by the thread that got it); each
 * lock held by an idle transaction is owned by its context
 * (ww_mutex_owner_ctx()); -EDEADLK never while the context holds nothing,
 * -EALREADY only on a lock it holds; and bounded steps: no transaction
 * sleeps for more than 5 s, and the final drive ends within a bounded
 * number of calls (a lost wake-up or a deadlock the algorithm did not
 * break is a hang).
 *
 * The waits on threads depend on timing, but not what is asserted: an
 * input that breaks a property breaks it on a replay too, up to which of
 * two waiters a wake-up picks.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "fuzz.h"
#include "ttmsim/ww_debug.h"
#include "ttmsim/ww_mutex.h"

#define N_LOCKS 3
#define MAX_CTX 3
#define MAX_STEPS 256              /* of an input */
#define HANG_NS (5ull * 1000000000) /* a thread asleep this long: a hang */

enum op {
	OP_NONE,
	OP_INIT,
	OP_LOCK,
	OP_LOCK_INTR,
	OP_TRYLOCK,
	OP_SLOW,
	OP_UNLOCK,
	OP_DONE,
	OP_FINI,
};

struct worker {
	pthread_t thread;
	pthread_cond_t wake;
	struct ww_acquire_ctx ctx;
	/* under g_lock: the call handed over, and whether it is running */
	enum op op;
	int lock;
	bool busy;
	/* the transaction's state, written by the worker under g_lock */
	bool open, done;
	unsigned int held;         /* bit i: lock i */
	int contended;             /* after -EDEADLK; else -1 */
	int blocked_on;            /* seen asleep on; -1: not (coordinator) */
};

static DEFINE_WD_CLASS(fuzz_wd_class);
static DEFINE_WW_CLASS(fuzz_ww_class);
static struct ww_mutex locks[2][N_LOCKS];
static int holders[2][N_LOCKS];    /* atomic: mutual exclusion */
static int cls;                    /* of the current input */
static struct worker workers[MAX_CTX];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_done = PTHREAD_COND_INITIALIZER;

static void report(const struct ww_debug_report *r, void *data)
{
	(void)data;
	ww_debug_print_report(r, 2);
	FUZZ_CHECK(false, "the checker reported %s in %s", r->name, r->call);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void got(int lock)
{
	FUZZ_CHECK(__atomic_fetch_add(&holders[cls][lock], 1,
				      __ATOMIC_SEQ_CST) == 0,
		   "lock %d held twice", lock);
}

/* Make @w's call; the result goes into @w's state. */
static void run_op(struct worker *w, enum op op, int i)
{
	struct ww_mutex *l = &locks[cls][i];
	struct ww_class *c = cls ? &fuzz_ww_class : &fuzz_wd_class;
	unsigned int before = w->held;
	int ret;

	switch (op) {
	case OP_INIT:
		ww_acquire_init(&w->ctx, c);
		w->open = true;
		w->done = false;
		w->contended = -1;
		break;
	case OP_LOCK:
	case OP_LOCK_INTR:
		ret = op == OP_LOCK ? ww_mutex_lock(l, &w->ctx)
				    : ww_mutex_lock_interruptible(l, &w->ctx);
		if (ret == 0) {
			got(i);
			w->held |= 1u << i;
		} else if (ret == -EALREADY) {
			FUZZ_CHECK(before & (1u << i), "-EALREADY, not held");
		} else {
			FUZZ_CHECK(ret == -EDEADLK, "lock returned %d", ret);
			FUZZ_CHECK(before, "-EDEADLK while holding nothing");
			w->contended = i;
		}
		break;
	case OP_TRYLOCK:
		ret = ww_mutex_trylock(l, &w->ctx);
		FUZZ_CHECK(ret == 0 || ret == 1, "trylock returned %d", ret);
		if (ret) {
			got(i);
			w->held |= 1u << i;
		}
		break;
	case OP_SLOW:
		ww_mutex_lock_slow(l, &w->ctx);
		got(i);
		w->held |= 1u << i;
		w->contended = -1;
		break;
	case OP_UNLOCK:
		__atomic_fetch_sub(&holders[cls][i], 1, __ATOMIC_SEQ_CST);
		w->held &= ~(1u << i);
		ww_mutex_unlock(l);
		break;
	case OP_DONE:
		ww_acquire_done(&w->ctx);
		w->done = true;
		break;
	case OP_FINI:
		ww_acquire_fini(&w->ctx);
		w->open = false;
		break;
	case OP_NONE:
		break;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_mutex_lock(&g_lock);
	for (;;) {
		enum op op;
		int i;

		while (w->op == OP_NONE) {
			pthread_cond_wait(&w->wake, &g_lock);
		}
		op = w->op;
		i = w->lock;
		pthread_mutex_unlock(&g_lock);
		/* Its state is only read while it is idle: no lock needed. */
		run_op(w, op, i);
		pthread_mutex_lock(&g_lock);
		w->op = OP_NONE;
		w->busy = false;
		pthread_cond_broadcast(&g_done);
	}
	return NULL;
}

static void start(void)
{
	int c, i;

	ww_debug_set_handler(report, NULL);
	for (c = 0; c < 2; c++) {
		for (i = 0; i < N_LOCKS; i++) {
			ww_mutex_init(&locks[c][i],
				      c ? &fuzz_ww_class : &fuzz_wd_class);
		}
	}
	for (c = 0; c < MAX_CTX; c++) {
		pthread_cond_init(&workers[c].wake, NULL);
		workers[c].blocked_on = -1;
		FUZZ_CHECK(pthread_create(&workers[c].thread, NULL,
					  worker_main, &workers[c]) == 0,
			   "pthread_create");
	}
}

/* Busy workers asleep on @lock, as the coordinator saw them. */
static unsigned int asleep_on(int lock)
{
	unsigned int n = 0;
	int c;

	for (c = 0; c < MAX_CTX; c++) {
		n += workers[c].busy && workers[c].blocked_on == lock;
	}
	return n;
}

/* Forget the sleep of workers that have returned. Under g_lock. */
static void reap(void)
{
	int c;

	for (c = 0; c < MAX_CTX; c++) {
		if (!workers[c].busy) {
			workers[c].blocked_on = -1;
		}
	}
}

/*
 * Under g_lock: wait for a change, at most 50 us (a sleeper is seen in
 * the wait queue, not by a signal); a hang after @start + HANG_NS.
 */
static void wait_a_little(uint64_t start_ns, const char *what)
{
	struct timespec ts;
	uint64_t t = now_ns();

	FUZZ_CHECK(t - start_ns < HANG_NS, "hang: %s", what);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 50000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&g_done, &g_lock, &ts);
	reap();
}

/*
 * Hand @op on @lock to @w; return once it returned or is seen asleep on
 * the lock (one more waiter than the workers known asleep there).
 */
static void call(struct worker *w, enum op op, int lock)
{
	bool may_sleep = op == OP_LOCK || op == OP_LOCK_INTR || op == OP_SLOW;
	uint64_t start_ns = now_ns();

	pthread_mutex_lock(&g_lock);
	w->op = op;
	w->lock = lock;
	w->busy = true;
	pthread_cond_signal(&w->wake);
	for (;;) {
		reap();
		if (!w->busy) {
			break;
		}
		if (may_sleep &&
		    ww_mutex_waiter_count(&locks[cls][lock]) > asleep_on(lock)) {
			w->blocked_on = lock;
			break;
		}
		wait_a_little(start_ns, "a call neither returns nor sleeps");
	}
	pthread_mutex_unlock(&g_lock);
}

/* Every lock an idle transaction holds is its context's. */
static void check_owners(void)
{
	int c, i;

	pthread_mutex_lock(&g_lock);
	for (c = 0; c < MAX_CTX; c++) {
		const struct worker *w = &workers[c];

		if (w->busy) {
			continue;
		}
		for (i = 0; i < N_LOCKS; i++) {
			if (w->held & (1u << i)) {
				FUZZ_CHECK(ww_mutex_owner_ctx(&locks[cls][i]) ==
					   &w->ctx, "lock %d: not its owner", i);
			}
		}
	}
	pthread_mutex_unlock(&g_lock);
}

static bool is_busy(struct worker *w)
{
	bool busy;

	pthread_mutex_lock(&g_lock);
	busy = w->busy;
	pthread_mutex_unlock(&g_lock);
	return busy;
}

static int lowest(unsigned int mask)
{
	return __builtin_ctz(mask);
}

/* One step of idle @w chosen by @b among its valid calls. */
static void step(struct worker *w, unsigned int b)
{
	int lock = (int)((b >> 3) % N_LOCKS);

	if (!w->open) {
		call(w, OP_INIT, 0);
	} else if (w->contended >= 0) {
		/* The back-off: unlock everything, then sleep on it. */
		if (w->held) {
			call(w, OP_UNLOCK, lowest(w->held));
		} else {
			call(w, OP_SLOW, w->contended);
		}
	} else {
		switch (b % 8) {
		case 0:
		case 1:
		case 2:
		case 3:
			if (w->done) {
				/* No lock after done: unlock instead. */
				if (w->held) {
					call(w, OP_UNLOCK, lowest(w->held));
				}
			} else if (b % 8 == 3 && !(w->held & (1u << lock))) {
				call(w, OP_TRYLOCK, lock);
			} else {
				call(w, b % 8 == 2 ? OP_LOCK_INTR : OP_LOCK,
				     lock);
			}
			break;
		case 4:
			if (w->held & (1u << lock)) {
				call(w, OP_UNLOCK, lock);
			} else if (w->held) {
				call(w, OP_UNLOCK, lowest(w->held));
			}
			break;
		case 5:
			if (!w->done) {
				call(w, OP_DONE, 0);
			}
			break;
		default:
			if (w->held) {
				call(w, OP_UNLOCK, lowest(w->held));
			} else {
				call(w, OP_FINI, 0);
			}
			break;
		}
	}
	check_owners();
}

/* Drive every transaction to its fini, backing off as the rules say. */
static void finish(int n)
{
	uint64_t start_ns = now_ns();
	unsigned int calls = 0;

	for (;;) {
		bool open = false;
		int c;

		for (c = 0; c < n; c++) {
			struct worker *w = &workers[c];

			if (is_busy(w)) {
				open = true;
				continue;
			}
			if (!w->open) {
				continue;
			}
			open = true;
			calls++;
			if (w->held) {
				call(w, OP_UNLOCK, lowest(w->held));
			} else if (w->contended >= 0) {
				call(w, OP_SLOW, w->contended);
			} else {
				call(w, OP_FINI, 0);
			}
		}
		if (!open) {
			break;
		}
		FUZZ_CHECK(calls < 64, "the final drive does not end");
		pthread_mutex_lock(&g_lock);
		wait_a_little(start_ns, "a transaction never wakes");
		pthread_mutex_unlock(&g_lock);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool started;
	int n, i;
	size_t pos;

	if (!started) {
		start();
		started = true;
	}
	if (size == 0) {
		return 0;
	}
	cls = data[0] & 1;
	n = data[0] & 2 ? 3 : 2;
	for (pos = 1; pos < size && pos <= MAX_STEPS; pos++) {
		struct worker *w = &workers[data[pos] % n];

		if (!is_busy(w)) {
			step(w, data[pos] / n);
		}
	}
	finish(n);
	for (i = 0; i < N_LOCKS; i++) {
		FUZZ_CHECK(!ww_mutex_is_locked(&locks[cls][i]),
			   "lock %d still locked after every fini", i);
		FUZZ_CHECK(ww_mutex_waiter_count(&locks[cls][i]) == 0,
			   "lock %d still has waiters", i);
		FUZZ_CHECK(holders[cls][i] == 0, "lock %d: %d holders", i,
			   holders[cls][i]);
	}
	return 0;
}
