// SPDX-License-Identifier: MIT
/*
 * The kernel's dma-resv self-tests (drivers/dma-buf/st-dma-resv.c) as
 * cmocka cases on ttmsim, written for ttmsim. Each case but the sanity
 * check runs once per usage, KERNEL, WRITE, READ and BOOKKEEP, as the
 * kernel's do: one fence added with that usage, then read back at that
 * usage. The kernel's selftest fence is a driver fence here
 * (tests/lib/mock_fence.h, with a release op that counts: every case
 * checks its fence is released once). The reservation lock is the ww_mutex of
 * struct ttm_resv, taken without a context as the kernel's
 * dma_resv_lock(resv, NULL).
 *
 * Kernel case                    -> cmocka case
 * sanitycheck                    -> test_sanitycheck
 * test_signaling_<usage>         -> test_signaling(<usage>)
 * test_for_each_<usage>          -> test_for_each(<usage>)
 * test_for_each_unlocked_<usage> -> test_for_each_unlocked(<usage>)
 * test_get_fences_<usage>        -> test_get_fences(<usage>)
 *
 * Beyond the kernel's checks, test_signaling, test_for_each and
 * test_get_fences also ask at the usage just below the fence's (which
 * must not see it), so that a reader ignoring the usage fails, and
 * test_for_each walks up to BOOKKEEP, where ttm_resv_iter_usage() must
 * still name the fence's own usage, not the walk's.
 *
 * test_for_each_unlocked forces the restart the kernel forces by
 * corrupting the cursor (cursor.fences = ~0): the test re-adds its fence
 * under the lock between two steps of the walk, a writer's change through
 * the public API (the fence replaces itself: the list keeps one entry),
 * and the walk must start over and hand the fence out again, restarted.
 *
 * No kernel case is left without an equivalent. The older form of the
 * file (excl and shared fences instead of usages) is the WRITE and READ
 * rows here.
 */
#include <stdlib.h>

#include "lib/helpers.h"
#include "lib/mock_fence.h"

#include "ttmsim/fence.h"
#include "ttmsim/resv.h"

static DEFINE_WD_CLASS(resv_kunit_class);

static struct ttm_fence *alloc_fence(void)
{
	return mock_fence_new("selftest");
}

static enum ttm_resv_usage case_usage(void **state)
{
	return *(const enum ttm_resv_usage *)*state;
}

/* A reservation object holding @f, added with @usage, left unlocked. */
static void resv_with(struct ttm_resv *resv, struct ttm_fence *f,
		      enum ttm_resv_usage usage)
{
	ttm_resv_init(resv, &resv_kunit_class);
	assert_int_equal(ww_mutex_lock(&resv->lock, NULL), 0);
	assert_int_equal(ttm_resv_reserve_fences(resv, 1), 0);
	ttm_resv_add_fence(resv, f, usage);
	ww_mutex_unlock(&resv->lock);
}

/* ---- the cases --------------------------------------------------------- */

static void test_sanitycheck(void **state)
{
	struct ttm_fence *f = alloc_fence();
	struct ttm_resv resv;

	(void)state;
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	ttm_fence_put(f);

	ttm_resv_init(&resv, &resv_kunit_class);
	assert_int_equal(ww_mutex_lock(&resv.lock, NULL), 0);
	ww_mutex_unlock(&resv.lock);
	ttm_resv_fini(&resv);
}

static void test_signaling(void **state)
{
	enum ttm_resv_usage usage = case_usage(state);
	struct ttm_fence *f = alloc_fence();
	struct ttm_resv resv;

	resv_with(&resv, f, usage);
	assert_false(ttm_resv_test_signaled(&resv, usage));
	/* Below the fence's usage there is nothing to wait for. */
	if (usage > TTM_RESV_USAGE_KERNEL)
		assert_true(ttm_resv_test_signaled(&resv, usage - 1));
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_true(ttm_resv_test_signaled(&resv, usage));
	ttm_resv_fini(&resv);
	ttm_fence_put(f);
}

static void test_for_each(void **state)
{
	enum ttm_resv_usage usage = case_usage(state);
	struct ttm_fence *f = alloc_fence(), *fence;
	struct ttm_resv_iter cursor;
	struct ttm_resv resv;
	unsigned int found = 0;

	resv_with(&resv, f, usage);
	assert_int_equal(ww_mutex_lock(&resv.lock, NULL), 0);
	ttm_resv_for_each_fence(&cursor, &resv, usage, fence) {
		assert_ptr_equal(fence, f);
		assert_int_equal(ttm_resv_iter_usage(&cursor), usage);
		found++;
	}
	assert_int_equal(found, 1);
	/* A wider walk still names the usage the fence was added with. */
	ttm_resv_for_each_fence(&cursor, &resv, TTM_RESV_USAGE_BOOKKEEP,
				fence)
		assert_int_equal(ttm_resv_iter_usage(&cursor), usage);
	/* A narrower one does not see it. */
	if (usage > TTM_RESV_USAGE_KERNEL) {
		ttm_resv_iter_begin(&cursor, &resv, usage - 1);
		assert_null(ttm_resv_iter_first(&cursor));
	}
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	ww_mutex_unlock(&resv.lock);
	ttm_resv_fini(&resv);
	ttm_fence_put(f);
}

static void test_for_each_unlocked(void **state)
{
	enum ttm_resv_usage usage = case_usage(state);
	struct ttm_fence *f = alloc_fence(), *fence;
	struct ttm_resv_iter cursor;
	struct ttm_resv resv;
	unsigned int steps = 0;

	resv_with(&resv, f, usage);
	ttm_resv_iter_begin(&cursor, &resv, usage);
	ttm_resv_for_each_fence_unlocked(&cursor, fence) {
		/* The first of a walk, then the first after the restart. */
		assert_true(ttm_resv_iter_is_restarted(&cursor));
		assert_ptr_equal(fence, f);
		assert_int_equal(ttm_resv_iter_usage(&cursor), usage);
		if (++steps == 1) {
			/* A writer's change: the walk must start over. */
			assert_int_equal(ww_mutex_lock(&resv.lock, NULL), 0);
			ttm_resv_add_fence(&resv, f, usage);
			ww_mutex_unlock(&resv.lock);
		}
		assert_in_range(steps, 1, 2);
	}
	assert_int_equal(steps, 2);
	ttm_resv_iter_end(&cursor);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	ttm_resv_fini(&resv);
	ttm_fence_put(f);
}

static void test_get_fences(void **state)
{
	enum ttm_resv_usage usage = case_usage(state);
	struct ttm_fence *f = alloc_fence(), **fences = NULL;
	struct ttm_resv resv;
	unsigned int i, count = 0;

	resv_with(&resv, f, usage);
	assert_int_equal(ttm_resv_get_fences(&resv, usage, &fences, &count),
			 0);
	assert_int_equal(count, 1);
	assert_ptr_equal(fences[0], f);
	for (i = 0; i < count; i++)
		ttm_fence_put(fences[i]);
	free(fences);
	/* Below the fence's usage: none, and no array. */
	if (usage > TTM_RESV_USAGE_KERNEL) {
		fences = NULL;
		assert_int_equal(ttm_resv_get_fences(&resv, usage - 1,
						     &fences, &count), 0);
		assert_int_equal(count, 0);
		assert_null(fences);
	}
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	ttm_resv_fini(&resv);
	ttm_fence_put(f);
}

static const enum ttm_resv_usage usage_kernel = TTM_RESV_USAGE_KERNEL,
	usage_write = TTM_RESV_USAGE_WRITE, usage_read = TTM_RESV_USAGE_READ,
	usage_bookkeep = TTM_RESV_USAGE_BOOKKEEP;

#define TEST(fn)                                                        \
	{ .name = #fn, .test_func = fn, .setup_func = mock_fence_setup, \
	  .teardown_func = mock_fence_teardown }
#define USAGE_TEST(fn, u, label)                                        \
	{ .name = #fn "(" label ")", .test_func = fn,                   \
	  .setup_func = mock_fence_setup,                               \
	  .teardown_func = mock_fence_teardown,                         \
	  .initial_state = (void *)&usage_##u }
#define EACH_USAGE(fn)                                                  \
	USAGE_TEST(fn, kernel, "KERNEL"), USAGE_TEST(fn, write, "WRITE"), \
	USAGE_TEST(fn, read, "READ"), USAGE_TEST(fn, bookkeep, "BOOKKEEP")

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(test_sanitycheck),
		EACH_USAGE(test_signaling),
		EACH_USAGE(test_for_each),
		EACH_USAGE(test_for_each_unlocked),
		EACH_USAGE(test_get_fences),
	};

	return cmocka_run_group_tests_name("resv-kunit", tests, NULL, NULL);
}
