// SPDX-License-Identifier: MIT
/*
 * The kernel's dma-fence self-tests (drivers/dma-buf/st-dma-fence.c) as
 * cmocka cases on ttmsim, written for ttmsim. The kernel's mock fence, a
 * kmalloc()ed dma_fence with two name ops, is a driver fence here
 * (tests/lib/mock_fence.h: a struct ttm_fence embedded in a struct of the
 * tests', given name ops with ttm_fence_init(), plus a release op that
 * counts), so that every case also checks its fence is released exactly
 * once after its last put.
 *
 * Kernel case             -> cmocka case
 * test_sanitycheck        -> test_sanitycheck
 * test_signaling          -> test_signaling (dma_fence_check_and_signal()
 *                            and the signalled flag: ttm_fence_signal()
 *                            says 0, then -EINVAL once signalled)
 * test_add_callback       -> test_add_callback
 * test_late_add_callback  -> test_late_add_callback
 * test_rm_callback        -> test_rm_callback
 * test_late_rm_callback   -> test_late_rm_callback
 * test_status             -> test_status
 * test_error              -> test_error
 * test_wait               -> test_wait (a timeout of 0 says -ETIME, not 0,
 *                            while pending; 0, not 1, once signalled)
 * test_wait_timeout       -> test_wait_timeout (the kernel's timer is a
 *                            thread that signals once the test is asleep
 *                            in the wait: no sleep, no skip)
 * test_stub               -> test_stub
 * test_race_signal_callback -> tests/test_fence_ops.c test_callback_race
 *                            (with ttm_fence_cb_barrier() in place of the
 *                            kernel's lock/unlock of the fence); not
 *                            repeated here.
 *
 * No equivalent:
 * - test_signaling's "ops cleared on signal": the kernel drops a signalled
 *   fence's ops pointer so that a module can unload under it; ttmsim
 *   keeps the ops until the release op (its grace period covers the
 *   lockless readers instead). test_signaling checks the names still
 *   answer after the signal, the behaviour that replaces it.
 * - dma_fence_suite_init's sizeof(struct dma_fence) print: no case.
 */
#include "lib/helpers.h"
#include "lib/mock_fence.h"

#include "ttmsim/fence.h"
#include "util/compiler.h"

#define NS_PER_MS 1000000L

static struct ttm_fence *mock_fence(void)
{
	return mock_fence_new("mock");
}

/* ---- a callback that records ------------------------------------------- */

struct simple_cb {
	struct ttm_fence_cb cb;
	int seen;               /* atomic */
};

static void simple_callback(struct ttm_fence *f, struct ttm_fence_cb *cb)
{
	(void)f;
	__atomic_store_n(&container_of(cb, struct simple_cb, cb)->seen, 1,
			 __ATOMIC_RELEASE);
}

static bool seen(struct simple_cb *cb)
{
	return __atomic_load_n(&cb->seen, __ATOMIC_ACQUIRE);
}

/* ---- the cases --------------------------------------------------------- */

static void test_sanitycheck(void **state)
{
	struct ttm_fence *f = mock_fence();

	(void)state;
	ttm_fence_enable_sw_signaling(f);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	ttm_fence_put(f);
}

static void test_signaling(void **state)
{
	struct ttm_fence *f = mock_fence();

	(void)state;
	ttm_fence_enable_sw_signaling(f);
	assert_false(ttm_fence_is_signaled(f));
	/* The kernel's check_and_signal: not signalled before, so 0. */
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_true(ttm_fence_is_signaled(f));
	/* ...and now it reports the fence signalled already. */
	assert_int_equal(ttm_fence_signal(f, 0), -EINVAL);
	/* The ops stay until release, unlike the kernel's (see above). */
	assert_string_equal(ttm_fence_driver_name(f), "mock");
	assert_string_equal(ttm_fence_timeline_name(f), "mock");
	ttm_fence_put(f);
}

static void test_add_callback(void **state)
{
	struct simple_cb cb = { .seen = 0 };
	struct ttm_fence *f = mock_fence();

	(void)state;
	assert_int_equal(ttm_fence_add_callback(f, &cb.cb, simple_callback),
			 0);
	assert_false(seen(&cb));
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_true(seen(&cb));
	ttm_fence_put(f);
}

static void test_late_add_callback(void **state)
{
	struct simple_cb cb = { .seen = 0 };
	struct ttm_fence *f = mock_fence();

	(void)state;
	ttm_fence_enable_sw_signaling(f);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_int_equal(ttm_fence_add_callback(f, &cb.cb, simple_callback),
			 -ENOENT);
	/* A second signal must not run the callback refused above. */
	assert_int_equal(ttm_fence_signal(f, 0), -EINVAL);
	assert_false(seen(&cb));
	ttm_fence_put(f);
}

static void test_rm_callback(void **state)
{
	struct simple_cb cb = { .seen = 0 };
	struct ttm_fence *f = mock_fence();

	(void)state;
	assert_int_equal(ttm_fence_add_callback(f, &cb.cb, simple_callback),
			 0);
	assert_true(ttm_fence_remove_callback(f, &cb.cb));
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_false(seen(&cb));
	ttm_fence_put(f);
}

static void test_late_rm_callback(void **state)
{
	struct simple_cb cb = { .seen = 0 };
	struct ttm_fence *f = mock_fence();

	(void)state;
	assert_int_equal(ttm_fence_add_callback(f, &cb.cb, simple_callback),
			 0);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_true(seen(&cb));
	assert_false(ttm_fence_remove_callback(f, &cb.cb));
	ttm_fence_put(f);
}

static void test_status(void **state)
{
	struct ttm_fence *f = mock_fence();

	(void)state;
	ttm_fence_enable_sw_signaling(f);
	assert_int_equal(ttm_fence_get_status(f), 0);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_int_equal(ttm_fence_get_status(f), 1);
	ttm_fence_put(f);
}

static void test_error(void **state)
{
	struct ttm_fence *f = mock_fence();

	(void)state;
	ttm_fence_enable_sw_signaling(f);
	assert_int_equal(ttm_fence_set_error(f, -EIO), 0);
	/* The error shows only once the fence signals. */
	assert_int_equal(ttm_fence_get_status(f), 0);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_int_equal(ttm_fence_get_status(f), -EIO);
	ttm_fence_put(f);
}

static void test_wait(void **state)
{
	struct ttm_fence *f = mock_fence();

	(void)state;
	ttm_fence_enable_sw_signaling(f);
	assert_int_equal(ttm_fence_wait(f, false, 0), -ETIME);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_int_equal(ttm_fence_wait(f, false, 0), 0);
	ttm_fence_put(f);
}

/* The kernel's timer: signals @arg once the test sleeps in its wait. */
static void *signal_when_waited(void *arg)
{
	struct ttm_fence *f = arg;

	CHECK(wait_for_fence_waiters(f, 1));
	CHECK_INT(ttm_fence_signal(f, 0), 0);
	return NULL;
}

static void test_wait_timeout(void **state)
{
	struct ttm_fence *f = mock_fence();
	pthread_t t;

	(void)state;
	ttm_fence_enable_sw_signaling(f);
	/* The kernel waits one jiffy; a millisecond here. */
	assert_int_equal(ttm_fence_wait(f, false, NS_PER_MS), -ETIME);
	t = start_thread(signal_when_waited, f);
	assert_int_equal(ttm_fence_wait(f, false,
					WAIT_LIMIT_S * 1000 * NS_PER_MS), 0);
	join_thread(t);
	assert_int_equal(ttm_fence_get_status(f), 1);
	ttm_fence_put(f);
	assert_checks_passed();
}

static void test_stub(void **state)
{
	struct ttm_fence *f[64];
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(f); i++) {
		f[i] = ttm_fence_get_stub();
		assert_non_null(f[i]);
		assert_true(ttm_fence_is_signaled(f[i]));
	}
	while (i--)
		ttm_fence_put(f[i]);
}

#define TEST(fn)                                                        \
	{ .name = #fn, .test_func = fn, .setup_func = mock_fence_setup, \
	  .teardown_func = mock_fence_teardown }

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(test_sanitycheck),
		TEST(test_signaling),
		TEST(test_add_callback),
		TEST(test_late_add_callback),
		TEST(test_rm_callback),
		TEST(test_late_rm_callback),
		TEST(test_status),
		TEST(test_error),
		TEST(test_wait),
		TEST(test_wait_timeout),
		TEST(test_stub),
	};

	return cmocka_run_group_tests_name("fence-kunit", tests, NULL, NULL);
}
