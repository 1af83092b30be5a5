// SPDX-License-Identifier: MIT
/*
 * ww_thread_wake_commit() issues a futex wake only when
 * ww_thread_wake_claim() (include/ww/thread.h) says it is needed:
 *
 *  - a thread that is not parked gets no system call (it re-reads its
 *    sequence before it sleeps);
 *  - a parked thread gets one, from its first waker only, who clears its
 *    parked flag; a second waker before it runs gets none;
 *  - a waker whose increment the sleeper saw before it parked again (the
 *    waker was delayed between its increment and its claim) leaves the
 *    flag to the waker that park waits for: were the flag its, its futex
 *    wake could come before the sleeper is queued, and the next waker
 *    would skip its wake: a lost wake-up, a hang;
 *  - the shared out-of-memory fallback is always woken (one flag for
 *    several sleepers).
 *
 * White-box: each drives a struct ww_thread that no thread sleeps on, so
 * what the waker decides is deterministic. That no wake-up is lost is
 * what every test that waits checks (test-ww-stress above all).
 */
#include "lib/helpers.h"
#include "ww/thread.h"

static void test_unparked_needs_no_syscall(void **state)
{
	static struct ww_thread t;

	(void)state;
	t = (struct ww_thread){ .parked = 0 };
	assert_false(ww_thread_wake_claim(&t, ww_thread_wake_prepare(&t)));
	assert_checks_passed();
}

static void test_first_waker_only(void **state)
{
	static struct ww_thread t;

	(void)state;
	t = (struct ww_thread){ .parked = 0 };
	ww_thread_park_arm(&t, ww_thread_seq(&t));
	assert_true(ww_thread_wake_claim(&t, ww_thread_wake_prepare(&t)));
	assert_int_equal(__atomic_load_n(&t.parked, __ATOMIC_RELAXED), 0);
	assert_false(ww_thread_wake_claim(&t, ww_thread_wake_prepare(&t)));
	assert_int_equal(t.wake_seq, 2);
	assert_checks_passed();
}

static void test_shared_always_woken(void **state)
{
	static struct ww_thread t;

	(void)state;
	t = (struct ww_thread){ .shared = true };
	assert_true(ww_thread_wake_claim(&t, ww_thread_wake_prepare(&t)));
	assert_true(ww_thread_wake_claim(&t, ww_thread_wake_prepare(&t)));
	assert_checks_passed();
}

/*
 * ww_unlock_slowpath() claims after its bucket unlock: the waiter it woke
 * may have run, found the lock stolen and parked again on the new
 * sequence before that claim. The claim must leave that park to the
 * stealer's unlock.
 */
static void test_stale_waker_leaves_the_park(void **state)
{
	static struct ww_thread t;
	uint32_t first, second;

	(void)state;
	for (uint32_t start = 0; start != 4; start++) {
		/* Also across the wrap-around of the sequence. */
		t = (struct ww_thread){ .wake_seq = start - 2 };
		first = ww_thread_wake_prepare(&t); /* delayed before claim */
		ww_thread_park_arm(&t, ww_thread_seq(&t)); /* saw it */
		assert_false(ww_thread_wake_claim(&t, first));
		assert_true(__atomic_load_n(&t.parked, __ATOMIC_RELAXED));
		second = ww_thread_wake_prepare(&t);
		assert_true(ww_thread_wake_claim(&t, second));
		assert_false(__atomic_load_n(&t.parked, __ATOMIC_RELAXED));
	}
	assert_checks_passed();
}

/* Two wakers the sleeper never saw: whichever claims first wakes it. */
static void test_unseen_wakers_either_claims(void **state)
{
	static struct ww_thread t;
	uint32_t first, second;

	(void)state;
	t = (struct ww_thread){ .wake_seq = UINT32_MAX };
	ww_thread_park_arm(&t, ww_thread_seq(&t));
	first = ww_thread_wake_prepare(&t);
	second = ww_thread_wake_prepare(&t);
	assert_true(ww_thread_wake_claim(&t, second));
	assert_false(ww_thread_wake_claim(&t, first));
	assert_checks_passed();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_unparked_needs_no_syscall,
				       checks_reset),
		cmocka_unit_test_setup(test_first_waker_only, checks_reset),
		cmocka_unit_test_setup(test_shared_always_woken, checks_reset),
		cmocka_unit_test_setup(test_stale_waker_leaves_the_park,
				       checks_reset),
		cmocka_unit_test_setup(test_unseen_wakers_either_claims,
				       checks_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
