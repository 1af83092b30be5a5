// SPDX-License-Identifier: MIT
/*
 * Ages across the wrap-around of a class's stamp counter. Stamps are
 * handed out by an unsigned counter that wraps, and compared the kernel's
 * way, (long)(a - b) > 0, so that a context that took its stamp just
 * before the wrap (ULONG_MAX) is older than one that took it just after
 * (0). Compared plainly (a > b), every decision across the wrap would be
 * reversed. Each case seeds the class's counter at ULONG_MAX - 1 (white
 * box: struct ww_class's private stamp), so the first context opened gets
 * ULONG_MAX and the second 0, and checks one decision:
 *
 *  - a younger context asking for a lock an older one holds: Wait-Die dies
 *    at once, Wound-Wait waits;
 *  - an older context asking for a lock a younger one holds: it waits,
 *    and under Wound-Wait it wounds the holder;
 *  - two waiters: the older one queues in front of the younger one, and
 *    gets the lock first.
 */
#include <limits.h>

#include "lib/helpers.h"

static DEFINE_WW_CLASS(wound_wait);
static DEFINE_WD_CLASS(wait_die);

/* The next two contexts of @cls get ULONG_MAX (older), then 0 (younger). */
static struct ww_class *seed_near_wrap(void **state)
{
	struct ww_class *cls = *state;

	__atomic_store_n(&cls->stamp, ULONG_MAX - 1, __ATOMIC_RELAXED);
	return cls;
}

/*
 * We open the older context (ULONG_MAX) and hold a; Y, younger (0) and
 * holding x, asks for a. Wait-Die: Y dies at once. Wound-Wait: Y waits,
 * then gets a when we let go of it.
 */
static void test_younger_asks(void **state)
{
	struct ww_class *cls = seed_near_wrap(state);
	struct ww_mutex a, x;
	struct ww_acquire_ctx old;
	struct actor y;

	ww_mutex_init(&a, cls);
	ww_mutex_init(&x, cls);
	actor_start(&y, cls);
	ww_acquire_init(&old, cls);
	actor_run(&y, act_init, NULL);
	CHECK(old.stamp == ULONG_MAX && y.ctx.stamp == 0);
	CHECK_INT(actor_run(&y, act_lock, &x), 0);
	CHECK_INT(ww_mutex_lock(&a, &old), 0);

	actor_post(&y, act_lock, &a);
	CHECK(wait_for_step_or_waiter(&y, &a));
	if (is_wait_die(cls)) {
		CHECK_MSG(!actor_busy(&y),
			  "Wait-Die: the younger context (stamp 0) waits for the older one (stamp ULONG_MAX)");
		ww_mutex_unlock(&a);
		if (CHECK(actor_wait(&y)))
			CHECK_INT(actor_ret(&y), -EDEADLK);
	} else {
		CHECK_MSG(actor_busy(&y),
			  "Wound-Wait: the younger context (stamp 0) backed off instead of waiting for the older one");
		ww_mutex_unlock(&a);
		if (CHECK(actor_wait(&y)))
			CHECK_INT(actor_ret(&y), 0);
	}
	if (ww_mutex_owner_ctx(&a) == &y.ctx)
		actor_run(&y, act_unlock, &a);
	ww_acquire_fini(&old);
	actor_run(&y, act_unlock, &x);
	actor_run(&y, act_fini, NULL);
	actor_stop(&y);
	CHECK(!ww_mutex_is_locked(&a) && !ww_mutex_is_locked(&x));
	assert_checks_passed();
}

/*
 * O, older (ULONG_MAX) and holding x, asks for a, which we hold with the
 * younger context (0). O waits in both algorithms; under Wound-Wait it
 * wounds us first (white box: the context's wounded flag).
 */
static void test_older_asks(void **state)
{
	struct ww_class *cls = seed_near_wrap(state);
	struct ww_mutex a, x;
	struct ww_acquire_ctx young;
	struct actor o;

	ww_mutex_init(&a, cls);
	ww_mutex_init(&x, cls);
	actor_start(&o, cls);
	actor_run(&o, act_init, NULL);
	ww_acquire_init(&young, cls);
	CHECK(o.ctx.stamp == ULONG_MAX && young.stamp == 0);
	CHECK_INT(actor_run(&o, act_lock, &x), 0);
	CHECK_INT(ww_mutex_lock(&a, &young), 0);

	actor_post(&o, act_lock, &a);
	CHECK(wait_for_step_or_waiter(&o, &a));
	CHECK_MSG(actor_busy(&o),
		  "the older context (stamp ULONG_MAX) backed off instead of waiting for the younger one (stamp 0)");
	if (!is_wait_die(cls))
		CHECK_MSG(__atomic_load_n(&young.wounded, __ATOMIC_ACQUIRE),
			  "Wound-Wait: the older waiter did not wound the younger holder");
	ww_mutex_unlock(&a);
	ww_acquire_fini(&young);
	if (CHECK(actor_wait(&o)))
		CHECK_INT(actor_ret(&o), 0);
	if (ww_mutex_owner_ctx(&a) == &o.ctx)
		actor_run(&o, act_unlock, &a);
	actor_run(&o, act_unlock, &x);
	actor_run(&o, act_fini, NULL);
	actor_stop(&o);
	CHECK(!ww_mutex_is_locked(&a) && !ww_mutex_is_locked(&x));
	assert_checks_passed();
}

/* Whoever got the lock, once the unlock's wake-up took effect. */
static bool taken(void *lock)
{
	return ww_mutex_owner_ctx(lock) != NULL;
}

/*
 * We hold l without a context. Y (0, younger) queues on it, then O
 * (ULONG_MAX, older); neither holds anything, so nobody backs off. O must
 * queue in front of Y, so our unlock wakes O, which takes l.
 */
static void test_queue_order(void **state)
{
	struct ww_class *cls = seed_near_wrap(state);
	struct ww_mutex l;
	struct actor o, y;
	struct actor *first, *second;

	ww_mutex_init(&l, cls);
	actor_start(&o, cls);
	actor_start(&y, cls);
	actor_run(&o, act_init, NULL);
	actor_run(&y, act_init, NULL);
	CHECK(o.ctx.stamp == ULONG_MAX && y.ctx.stamp == 0);
	CHECK_INT(ww_mutex_lock(&l, NULL), 0);

	actor_post(&y, act_lock, &l);
	CHECK(wait_for_waiters(&l, 1));
	actor_post(&o, act_lock, &l);
	CHECK(wait_for_waiters(&l, 2));
	ww_mutex_unlock(&l);
	CHECK(wait_until(taken, &l));
	CHECK_MSG(ww_mutex_owner_ctx(&l) == &o.ctx,
		  "the younger waiter (stamp 0) got the lock before the older one (stamp ULONG_MAX)");

	first = ww_mutex_owner_ctx(&l) == &y.ctx ? &y : &o;
	second = first == &o ? &y : &o;
	if (CHECK(actor_wait(first)))
		CHECK_INT(actor_ret(first), 0);
	actor_run(first, act_unlock, &l);
	if (CHECK(actor_wait(second)))
		CHECK_INT(actor_ret(second), 0);
	actor_run(second, act_unlock, &l);
	actor_run(&o, act_fini, NULL);
	actor_run(&y, act_fini, NULL);
	actor_stop(&o);
	actor_stop(&y);
	CHECK(!ww_mutex_is_locked(&l));
	assert_checks_passed();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH_CLASSES(test_younger_asks),
		BOTH_CLASSES(test_older_asks),
		BOTH_CLASSES(test_queue_order),
	};

	return cmocka_run_group_tests_name("ww_stamp", tests, NULL, NULL);
}
