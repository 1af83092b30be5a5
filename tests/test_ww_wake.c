// SPDX-License-Identifier: MIT
/*
 * ww_thread_wake_commit() issues a futex wake only when
 * ww_thread_wake_claim() (include/ww/thread.h) says it is needed:
 *
 *  - a thread that is not parked gets no system call (it re-reads its
 *    sequence before it sleeps);
 *  - a parked thread gets one, from its first waker only, who clears its
 *    parked flag; a second waker before it runs gets none;
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
	ww_thread_wake_prepare(&t);
	assert_false(ww_thread_wake_claim(&t));
	assert_checks_passed();
}

static void test_first_waker_only(void **state)
{
	static struct ww_thread t;

	(void)state;
	t = (struct ww_thread){ .parked = 1 };
	ww_thread_wake_prepare(&t);
	assert_true(ww_thread_wake_claim(&t));
	assert_int_equal(__atomic_load_n(&t.parked, __ATOMIC_RELAXED), 0);
	ww_thread_wake_prepare(&t);
	assert_false(ww_thread_wake_claim(&t));
	assert_int_equal(t.wake_seq, 2);
	assert_checks_passed();
}

static void test_shared_always_woken(void **state)
{
	static struct ww_thread t;

	(void)state;
	t = (struct ww_thread){ .shared = true };
	ww_thread_wake_prepare(&t);
	assert_true(ww_thread_wake_claim(&t));
	ww_thread_wake_prepare(&t);
	assert_true(ww_thread_wake_claim(&t));
	assert_checks_passed();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_unparked_needs_no_syscall,
				       checks_reset),
		cmocka_unit_test_setup(test_first_waker_only, checks_reset),
		cmocka_unit_test_setup(test_shared_always_woken, checks_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
