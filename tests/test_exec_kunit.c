// SPDX-License-Identifier: MIT
/*
 * The kernel's KUnit suite for drm_exec (drivers/gpu/drm/tests/
 * drm_exec_test.c) as cmocka cases on ttmsim's helper: one case for each
 * of the kernel's (sanitycheck, lock, lock then unlock, duplicates,
 * prepare, prepare an array, two loops in a row), written for ttmsim, in
 * both classes (the kernel has only its Wait-Die reservation class).
 *
 * Where the kernel checks only a return value, these cases also check what
 * ttmsim can see: who holds each reservation, the helper's list, the fence
 * slots (a fence added without one is reported by the checker, counted
 * here), and that nothing is left held.
 *
 * The kernel's suite initialises a DRM device for its GEM objects; here
 * setup() creates a device and two buffers for each case.
 */
#include "lib/helpers.h"

#include "ttmsim/bo.h"
#include "ttmsim/exec.h"
#include "ttmsim/fence.h"

static const bool wound_wait_true = true, wound_wait_false = false;

#define KUNIT_CASES(fn)                                                 \
	{ .name = #fn "(wound-wait)", .test_func = fn,                  \
	  .setup_func = setup, .teardown_func = teardown,               \
	  .initial_state = (void *)&wound_wait_true },                  \
	{ .name = #fn "(wait-die)", .test_func = fn,                    \
	  .setup_func = setup, .teardown_func = teardown,               \
	  .initial_state = (void *)&wound_wait_false }

struct kfix {
	struct ttm_device *dev;
	struct ttm_bo *bo[2];
};

static int setup(void **state)
{
	static const struct ttm_placement sys = TTM_PLACEMENT_SYSTEM_INIT;
	struct ttm_device_options opts = {
		.wound_wait = *(const bool *)*state,
	};
	struct kfix *k = calloc(1, sizeof(*k));

	checks_reset(state);
	if (!k || ttm_device_create(&opts, &k->dev))
		return -1;
	for (int i = 0; i < 2; i++)
		if (ttm_bo_create(k->dev, 4096, &sys, 0, &k->bo[i]))
			return -1;
	*state = k;
	return 0;
}

static struct ww_mutex *lock_of(struct ttm_bo *bo)
{
	return &ttm_bo_resv(bo)->lock;
}

/* Every case ends with nothing held and the checker silent. */
static int teardown(void **state)
{
	struct kfix *k = *state;

	for (int i = 0; i < 2; i++) {
		assert_false(ww_mutex_is_locked(lock_of(k->bo[i])));
		ttm_bo_put(k->bo[i]);
	}
	assert_int_equal(ttm_device_destroy(k->dev), 0);
	free(k);
	assert_checks_passed();
	return 0;
}

static void count_report(const struct ww_debug_report *report, void *data)
{
	(void)report;
	(*(int *)data)++;
}

/* Add a new fence to @bo; the checker's reports (0: a slot was there). */
static int add_fence_reports(struct ttm_bo *bo)
{
	struct ttm_fence *fence;
	int reports = 0;

	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1,
					  &fence), 0);
	ww_debug_set_handler(count_report, &reports);
	ttm_resv_add_fence(ttm_bo_resv(bo), fence, TTM_RESV_USAGE_WRITE);
	ww_debug_set_handler(NULL, NULL);
	ttm_fence_signal(fence, 0);
	ttm_fence_put(fence);
	return reports;
}

/* kernel: sanitycheck. An interruptible helper opened and closed. */
static void sanitycheck(void **state)
{
	struct kfix *k = *state;
	struct ttm_exec exec;

	ttm_exec_init(&exec, k->dev, TTM_EXEC_INTERRUPTIBLE);
	assert_int_equal(ttm_exec_count(&exec), 0);
	assert_false(ttm_exec_is_contended(&exec));
	ttm_exec_fini(&exec);
}

/* kernel: test_lock. One buffer locked in the loop. */
static void test_lock(void **state)
{
	struct kfix *k = *state;
	struct ttm_exec exec;
	int ret = -1;

	ttm_exec_init(&exec, k->dev, TTM_EXEC_INTERRUPTIBLE);
	ttm_exec_until_all_locked(&exec) {
		ret = ttm_exec_lock_bo(&exec, k->bo[0]);
		ttm_exec_retry_on_contention(&exec);
		if (ret)
			break;
	}
	assert_int_equal(ret, 0);
	assert_ptr_equal(ww_mutex_owner_ctx(lock_of(k->bo[0])),
			 ttm_exec_ticket(&exec));
	assert_ptr_equal(ttm_exec_locked_bo(&exec, 0), k->bo[0]);
	ttm_exec_fini(&exec);
}

/* kernel: test_lock_unlock. Locked, unlocked and locked again in a pass. */
static void test_lock_unlock(void **state)
{
	struct kfix *k = *state;
	struct ttm_exec exec;
	int first = -1, again = -1;
	bool free_between = false;

	ttm_exec_init(&exec, k->dev, TTM_EXEC_INTERRUPTIBLE);
	ttm_exec_until_all_locked(&exec) {
		first = ttm_exec_lock_bo(&exec, k->bo[0]);
		ttm_exec_retry_on_contention(&exec);
		if (first)
			break;
		ttm_exec_unlock_bo(&exec, k->bo[0]);
		free_between = !ww_mutex_is_locked(lock_of(k->bo[0])) &&
			       ttm_exec_count(&exec) == 0;
		again = ttm_exec_lock_bo(&exec, k->bo[0]);
		ttm_exec_retry_on_contention(&exec);
		if (again)
			break;
	}
	assert_int_equal(first, 0);
	assert_true(free_between);
	assert_int_equal(again, 0);
	assert_int_equal(ttm_exec_count(&exec), 1);
	assert_true(ww_mutex_is_locked(lock_of(k->bo[0])));
	ttm_exec_fini(&exec);
}

/*
 * kernel: test_duplicates. With TTM_EXEC_IGNORE_DUPLICATES the second lock
 * of a buffer succeeds without listing it twice, so that one unlock after
 * the loop releases it.
 */
static void test_duplicates(void **state)
{
	struct kfix *k = *state;
	struct ttm_exec exec;
	int first = -1, second = -1;

	ttm_exec_init(&exec, k->dev, TTM_EXEC_IGNORE_DUPLICATES);
	ttm_exec_until_all_locked(&exec) {
		first = ttm_exec_lock_bo(&exec, k->bo[0]);
		ttm_exec_retry_on_contention(&exec);
		if (first)
			break;
		second = ttm_exec_lock_bo(&exec, k->bo[0]);
		ttm_exec_retry_on_contention(&exec);
		if (second)
			break;
	}
	assert_int_equal(first, 0);
	assert_int_equal(second, 0);
	assert_int_equal(ttm_exec_count(&exec), 1);
	ttm_exec_unlock_bo(&exec, k->bo[0]);
	assert_false(ww_mutex_is_locked(lock_of(k->bo[0])));
	ttm_exec_fini(&exec);
}

/* kernel: test_prepare. Locked with one fence slot, which is there. */
static void test_prepare(void **state)
{
	struct kfix *k = *state;
	struct ttm_exec exec;
	int ret = -1;

	ttm_exec_init(&exec, k->dev, TTM_EXEC_INTERRUPTIBLE);
	ttm_exec_until_all_locked(&exec) {
		ret = ttm_exec_prepare_bo(&exec, k->bo[0], 1);
		ttm_exec_retry_on_contention(&exec);
		if (ret)
			break;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(add_fence_reports(k->bo[0]), 0);
	ttm_exec_fini(&exec);
}

/*
 * kernel: test_prepare_array. Two buffers from an array, one slot each.
 * The loop's body is the one statement, as in the kernel's case: a pass
 * that backed off is followed by another without the retry macro.
 */
static void test_prepare_array(void **state)
{
	struct kfix *k = *state;
	struct ttm_exec exec;
	struct ttm_bo *bo;
	unsigned int i;
	int ret = -1;

	ttm_exec_init(&exec, k->dev, TTM_EXEC_INTERRUPTIBLE);
	ttm_exec_until_all_locked(&exec)
		ret = ttm_exec_prepare_array(&exec, k->bo, 2, 1);
	assert_int_equal(ret, 0);
	assert_int_equal(ttm_exec_count(&exec), 2);
	ttm_exec_for_each_locked_bo(&exec, i, bo) {
		assert_ptr_equal(bo, k->bo[i]);
		assert_int_equal(add_fence_reports(bo), 0);
	}
	ttm_exec_fini(&exec);
}

/*
 * kernel: test_multiple_loops. Two helpers one after the other on one
 * stack slot, each loop left by break: the second must start afresh.
 */
static void test_multiple_loops(void **state)
{
	struct kfix *k = *state;
	struct ttm_exec exec;
	int passes = 0;

	for (int round = 0; round < 2; round++) {
		ttm_exec_init(&exec, k->dev, TTM_EXEC_INTERRUPTIBLE);
		ttm_exec_until_all_locked(&exec) {
			passes++;
			break;
		}
		ttm_exec_fini(&exec);
	}
	assert_int_equal(passes, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		KUNIT_CASES(sanitycheck),
		KUNIT_CASES(test_lock),
		KUNIT_CASES(test_lock_unlock),
		KUNIT_CASES(test_duplicates),
		KUNIT_CASES(test_prepare),
		KUNIT_CASES(test_prepare_array),
		KUNIT_CASES(test_multiple_loops),
	};

	return cmocka_run_group_tests_name("drm_exec", tests, NULL, NULL);
}
