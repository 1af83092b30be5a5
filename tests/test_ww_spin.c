// SPDX-License-Identifier: MIT
/*
 * Spinning in the ww_mutex slow path (ww/lock_slow.c, ww/spin.h):
 *
 *  - the adaptive budget: spins that run out of budget halve the thread's
 *    budget down to a floor, spins that take the lock double it back up,
 *    the other endings leave it alone, and the shared out-of-memory
 *    thread struct never adapts (pure logic, no threads);
 *  - no spinning on an owner that is itself waiting for a ww lock: run
 *    with TTMSIM_WW_SPIN_NS=1000000000 (tests/meson.build), so that a
 *    spin lasts up to 1 s. A holds l1 and spins on l2, which we hold; B
 *    then locks l1. B must queue on l1 at once: spinning on A cannot end
 *    before A gets l2. Were B to spin its full budget, A (which started
 *    spinning first) would give up and queue on l2 before B queued on
 *    l1: the order of the two queueings tells, without any timing.
 */
#include "lib/helpers.h"
#include "ww/spin.h" /* white-box: the budget */

static DEFINE_WW_CLASS(wound_wait);
static DEFINE_WD_CLASS(wait_die);

static void test_budget_adapts(void **state)
{
	struct ww_thread t = { 0 }, shared = { .shared = true };
	const uint64_t max = 20000;
	int i;

	(void)state;
	CHECK(ww_spin_budget(&t, max) == max);
	ww_spin_adapt(&t, WW_SPIN_TIMEOUT);
	CHECK(ww_spin_budget(&t, max) == max / 2);
	for (i = 0; i < 10; i++)
		ww_spin_adapt(&t, WW_SPIN_TIMEOUT);
	CHECK_MSG(ww_spin_budget(&t, max) == max >> WW_SPIN_SHIFT_MAX,
		  "the budget did not stop at its floor");
	ww_spin_adapt(&t, WW_SPIN_STOPPED);
	CHECK_MSG(ww_spin_budget(&t, max) == max >> WW_SPIN_SHIFT_MAX,
		  "a spin stopped by the owner changed the budget");
	ww_spin_adapt(&t, WW_SPIN_TOOK);
	CHECK(ww_spin_budget(&t, max) == max >> (WW_SPIN_SHIFT_MAX - 1));
	for (i = 0; i < 10; i++)
		ww_spin_adapt(&t, WW_SPIN_TOOK);
	CHECK_MSG(ww_spin_budget(&t, max) == max,
		  "successful spins did not restore the full budget");

	ww_spin_adapt(&shared, WW_SPIN_TIMEOUT);
	CHECK_MSG(ww_spin_budget(&shared, max) == max,
		  "the shared fallback struct adapted");
	assert_checks_passed();
}

static bool thread_waiting(void *arg)
{
	struct ww_thread *t = arg;

	return __atomic_load_n(&t->waiting, __ATOMIC_RELAXED);
}

static void test_no_spin_on_waiting_owner(void **state)
{
	struct ww_class *cls = *state;
	struct ww_mutex l1, l2;
	struct actor a, b;

	ww_mutex_init(&l1, cls);
	ww_mutex_init(&l2, cls);
	actor_start(&a, cls);
	actor_start(&b, cls);
	actor_run(&a, act_init, NULL);
	actor_run(&b, act_init, NULL);
	CHECK_INT(ww_mutex_lock(&l2, NULL), 0);
	CHECK_INT(actor_run(&a, act_lock, &l1), 0);

	/* A spins on us (we run, we do not wait): up to 1 s. */
	actor_post(&a, act_lock, &l2);
	CHECK_MSG(wait_until(thread_waiting, a.ctx.task),
		  "A never entered the lock slow path");
	actor_post(&b, act_lock, &l1);
	CHECK(wait_for_waiters(&l1, 1));
	CHECK_MSG(ww_mutex_waiter_count(&l2) == 0,
		  "B spun on A, which waits for l2: A gave up spinning and "
		  "queued before B queued");

	ww_mutex_unlock(&l2);
	if (CHECK(actor_wait(&a)))
		CHECK_INT(actor_ret(&a), 0);
	actor_run(&a, act_unlock, &l2);
	actor_run(&a, act_unlock, &l1);
	if (CHECK(actor_wait(&b)))
		CHECK_INT(actor_ret(&b), 0);
	actor_run(&b, act_unlock, &l1);
	actor_run(&a, act_fini, NULL);
	actor_run(&b, act_fini, NULL);
	actor_stop(&a);
	actor_stop(&b);
	CHECK(!ww_mutex_is_locked(&l1) && !ww_mutex_is_locked(&l2));
	assert_checks_passed();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_budget_adapts, checks_reset),
		BOTH_CLASSES(test_no_spin_on_waiting_owner),
	};

	return cmocka_run_group_tests_name("ww_spin", tests, NULL, NULL);
}
