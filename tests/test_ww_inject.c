// SPDX-License-Identifier: MIT
/*
 * Back-off injection (ww_debug_inject, TTMSIM_WW_INJECT): what it injects,
 * that one seed gives one sequence, that a transaction of many more locks
 * than N completes (a context is exempt after an injected back-off until
 * it completed a pass), and that a threaded workload with
 * back-off handling still loses no update while backing off far more.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "ttmsim/ww_debug.h"
#include "ttmsim/ww_mutex.h"

static DEFINE_WW_CLASS(inject_ww);
static DEFINE_WD_CLASS(inject_wd);

#define CALLS 2000

/*
 * CALLS transactions of one context each: lock A, then B (the candidate);
 * record which B calls were injected. A fresh context for each call: a
 * context that was injected is exempt until it completed a pass.
 */
static void record(struct ww_class *cls, unsigned long seed, unsigned int n,
		   int *out)
{
	struct ww_mutex a, b;
	struct ww_acquire_ctx ctx;
	int i, ret;

	ww_mutex_init(&a, cls);
	ww_mutex_init(&b, cls);
	ww_debug_inject(seed, n);
	for (i = 0; i < CALLS; i++) {
		ww_acquire_init(&ctx, cls);
		assert_int_equal(ww_mutex_lock(&a, &ctx), 0);
		ret = ww_mutex_lock(&b, &ctx);
		out[i] = ret;
		if (ret == 0) {
			ww_mutex_unlock(&b);
		} else {
			assert_int_equal(ret, -EDEADLK);
			/* Injected: nothing taken, B is the contended lock. */
			assert_false(ww_mutex_is_locked(&b));
			assert_ptr_equal(ctx.contending_lock, &b);
			assert_int_equal(ctx.acquired, 1);
		}
		/* Given up after -EDEADLK: allowed, with nothing held. */
		ww_mutex_unlock(&a);
		ww_acquire_fini(&ctx);
	}
	ww_debug_inject(0, 0);
}

static int count_injected(const int *r)
{
	int i, n = 0;

	for (i = 0; i < CALLS; i++)
		n += r[i] == -EDEADLK;
	return n;
}

static void test_same_seed_same_sequence(void **state)
{
	struct ww_class *cls = *state;
	static int r1[CALLS], r2[CALLS], r3[CALLS];
	int n;

	record(cls, 42, 5, r1);
	record(cls, 42, 5, r2);
	record(cls, 43, 5, r3);
	assert_memory_equal(r1, r2, sizeof(r1));
	assert_memory_not_equal(r1, r3, sizeof(r1));
	n = count_injected(r1);
	/* About one in five: 400 expected. */
	assert_in_range(n, 300, 500);
}

static void test_off_and_nothing_held(void **state)
{
	struct ww_class *cls = *state;
	static int r[CALLS];
	struct ww_mutex m, c;
	struct ww_acquire_ctx ctx;
	int i;

	record(cls, 7, 0, r);
	assert_int_equal(count_injected(r), 0);

	/*
	 * A context holding nothing is never a candidate: not a first lock,
	 * and not the ww_mutex_lock_slow() of a back-off, even when every
	 * candidate is told to back off.
	 */
	ww_mutex_init(&m, cls);
	ww_mutex_init(&c, cls);
	ww_debug_inject(7, 1);
	ww_acquire_init(&ctx, cls);
	for (i = 0; i < 100; i++) {
		assert_int_equal(ww_mutex_lock(&m, &ctx), 0);
		assert_int_equal(ww_mutex_lock(&c, &ctx), -EDEADLK);
		ww_mutex_unlock(&m);
		ww_mutex_lock_slow(&c, &ctx);
		assert_ptr_equal(ww_mutex_owner_ctx(&c), &ctx);
		ww_mutex_unlock(&c);
	}
	ww_acquire_fini(&ctx);
	ww_debug_inject(0, 0);
}

static void test_already_held_is_ealready(void **state)
{
	struct ww_class *cls = *state;
	struct ww_mutex a, b;
	struct ww_acquire_ctx ctx;
	int i;

	ww_mutex_init(&a, cls);
	ww_mutex_init(&b, cls);
	ww_debug_inject(1, 1); /* every candidate call */
	ww_acquire_init(&ctx, cls);
	assert_int_equal(ww_mutex_lock(&a, &ctx), 0);
	for (i = 0; i < 10; i++) {
		assert_int_equal(ww_mutex_lock(&a, &ctx), -EALREADY);
		assert_int_equal(ww_mutex_lock_interruptible(&b, &ctx),
				 -EDEADLK);
	}
	/* The back-off path: unlock all, lock_slow the contended lock. */
	ww_mutex_unlock(&a);
	ww_mutex_lock_slow(&b, &ctx);
	ww_mutex_unlock(&b);
	ww_acquire_fini(&ctx);
	ww_debug_inject(0, 0);
}

/*
 * ww_debug_inject(s, 1) makes every candidate back off, also a context
 * an earlier N left exempt (in its back-off, still holding a lock).
 */
static void test_one_ignores_exemption(void **state)
{
	struct ww_class *cls = *state;
	struct ww_mutex a, b;
	struct ww_acquire_ctx ctx;
	int i, ret = 0;

	ww_mutex_init(&a, cls);
	ww_mutex_init(&b, cls);
	ww_debug_inject(3, 2);
	ww_acquire_init(&ctx, cls);
	assert_int_equal(ww_mutex_lock(&a, &ctx), 0);
	/* Nobody holds b: only an injection makes it -EDEADLK. */
	for (i = 0; i < 1000; i++) {
		ret = ww_mutex_lock(&b, &ctx);
		if (ret)
			break;
		ww_mutex_unlock(&b);
	}
	assert_int_equal(ret, -EDEADLK);
	/* Exempt now: with N = 2 b is taken. */
	assert_int_equal(ww_mutex_lock(&b, &ctx), 0);
	ww_mutex_unlock(&b);
	ww_debug_inject(3, 1);
	assert_int_equal(ww_mutex_lock(&b, &ctx), -EDEADLK);
	ww_debug_inject(0, 0);
	ww_mutex_unlock(&a);
	ww_acquire_fini(&ctx);
}

/* ---- progress: a transaction much bigger than N completes -------------- */

#define BIG 64

/*
 * One context locks BIG locks in order with the usual back-off loop;
 * returns the number of passes it took, or 0 if it did not complete
 * within @max_passes.
 */
static unsigned int big_transaction(struct ww_acquire_ctx *ctx,
				    struct ww_mutex *lock,
				    unsigned int max_passes)
{
	unsigned int passes = 1, i, j;
	int contended = -1;

	for (i = 0; i < BIG; i++) {
		int ret;

		if ((int)i == contended)
			continue;
		ret = ww_mutex_lock(&lock[i], ctx);
		if (ret == 0)
			continue;
		assert_int_equal(ret, -EDEADLK);
		for (j = 0; j < i; j++)
			if ((int)j != contended)
				ww_mutex_unlock(&lock[j]);
		if (contended >= 0)
			ww_mutex_unlock(&lock[contended]);
		if (++passes > max_passes)
			return 0;
		contended = (int)i;
		ww_mutex_lock_slow(&lock[i], ctx);
		i = (unsigned int)-1; /* start over */
	}
	for (i = 0; i < BIG; i++)
		ww_mutex_unlock(&lock[i]);
	return passes;
}

/*
 * With N = 4, a fixed 1-in-4 chance per lock would leave a 64-lock pass
 * a (3/4)^63 chance to complete: it never would. An injected back-off
 * exempts the context until it completed a pass, so every transaction
 * takes at most two passes; and the context is a candidate again once
 * the pass is over (injection goes on, transaction after transaction).
 */
static void test_progress(void **state)
{
	struct ww_class *cls = *state;
	static struct ww_mutex lock[BIG];
	struct ww_acquire_ctx ctx;
	unsigned int i, round, passes, injected = 0;

	for (i = 0; i < BIG; i++)
		ww_mutex_init(&lock[i], cls);
	for (round = 0; round < 20; round++) {
		ww_debug_inject(1000 + round, 4);
		ww_acquire_init(&ctx, cls);
		/* The same context, three transactions in a row. */
		for (i = 0; i < 3; i++) {
			passes = big_transaction(&ctx, lock, 100);
			assert_int_not_equal(passes, 0);
			assert_in_range(passes, 1, 2);
			injected += passes - 1;
		}
		ww_acquire_fini(&ctx);
	}
	ww_debug_inject(0, 0);
	/* (1 - (3/4)^63): nearly every transaction was injected once. */
	assert_in_range(injected, 55, 60);
}

/* ---- threaded: counters exact, many more back-offs --------------------- */

#define LOCKS 16
#define PER_TX 4
#define THREADS 4
#define TX 3000

struct shared {
	struct ww_class *cls;
	struct ww_mutex lock[LOCKS];
	unsigned long counter[LOCKS];
};

struct worker {
	struct shared *s;
	unsigned int seed;
	unsigned long done[LOCKS];
	unsigned long backoffs;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct shared *s = w->s;
	struct ww_acquire_ctx ctx;
	int idx[PER_TX], i, j, k, t;

	for (t = 0; t < TX; t++) {
		for (k = 0; k < PER_TX;) {
			int c = rand_r(&w->seed) % LOCKS;

			for (j = 0; j < k && idx[j] != c; j++)
				;
			if (j == k)
				idx[k++] = c;
		}
		ww_acquire_init(&ctx, s->cls);
		int contended = -1;
retry:
		for (i = 0; i < PER_TX; i++) {
			if (idx[i] == contended)
				continue;
			if (ww_mutex_lock(&s->lock[idx[i]], &ctx) == -EDEADLK) {
				w->backoffs++;
				for (j = 0; j < i; j++)
					if (idx[j] != contended)
						ww_mutex_unlock(&s->lock[idx[j]]);
				if (contended >= 0)
					ww_mutex_unlock(&s->lock[contended]);
				contended = idx[i];
				ww_mutex_lock_slow(&s->lock[contended], &ctx);
				goto retry;
			}
		}
		ww_acquire_done(&ctx);
		for (i = 0; i < PER_TX; i++) {
			s->counter[idx[i]]++;
			w->done[idx[i]]++;
		}
		for (i = 0; i < PER_TX; i++)
			ww_mutex_unlock(&s->lock[idx[i]]);
		ww_acquire_fini(&ctx);
	}
	return NULL;
}

static unsigned long run_workload(struct ww_class *cls)
{
	static struct shared s;
	struct worker w[THREADS] = { 0 };
	pthread_t th[THREADS];
	unsigned long backoffs = 0, sum;
	int i, l;

	s.cls = cls;
	for (l = 0; l < LOCKS; l++) {
		ww_mutex_init(&s.lock[l], cls);
		s.counter[l] = 0;
	}
	for (i = 0; i < THREADS; i++) {
		w[i].s = &s;
		w[i].seed = 1000 + i;
		assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		backoffs += w[i].backoffs;
	}
	for (l = 0; l < LOCKS; l++) {
		for (sum = 0, i = 0; i < THREADS; i++)
			sum += w[i].done[l];
		assert_int_equal(s.counter[l], sum);
	}
	return backoffs;
}

static void test_threaded_counters(void **state)
{
	struct ww_class *cls = *state;
	unsigned long plain, injected;

	plain = run_workload(cls);
	ww_debug_inject(99, 4);
	injected = run_workload(cls);
	ww_debug_inject(0, 0);
	print_message("%s: %lu back-offs without injection, %lu with 1:4\n",
		      cls->name, plain, injected);
	/*
	 * 3 candidate calls in a transaction's first pass, 1 in 4 injected,
	 * none in the pass after: 1 - (3/4)^3, ~58% of 12000 transactions,
	 * ~6940 injected back-offs (sd ~54) on top of the real ones. The
	 * real ones, from 0 to ~1100 on a loaded machine, are not subtracted:
	 * they happen in the injected run as well.
	 */
	assert_true(injected > THREADS * TX / 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate(test_same_seed_same_sequence, &inject_ww),
		cmocka_unit_test_prestate(test_same_seed_same_sequence, &inject_wd),
		cmocka_unit_test_prestate(test_off_and_nothing_held, &inject_ww),
		cmocka_unit_test_prestate(test_off_and_nothing_held, &inject_wd),
		cmocka_unit_test_prestate(test_already_held_is_ealready, &inject_ww),
		cmocka_unit_test_prestate(test_already_held_is_ealready, &inject_wd),
		cmocka_unit_test_prestate(test_one_ignores_exemption, &inject_ww),
		cmocka_unit_test_prestate(test_one_ignores_exemption, &inject_wd),
		cmocka_unit_test_prestate(test_progress, &inject_ww),
		cmocka_unit_test_prestate(test_progress, &inject_wd),
		cmocka_unit_test_prestate(test_threaded_counters, &inject_ww),
		cmocka_unit_test_prestate(test_threaded_counters, &inject_wd),
	};

	return cmocka_run_group_tests_name("ww_inject", tests, NULL, NULL);
}
