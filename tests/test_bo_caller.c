// SPDX-License-Identifier: MIT
/*
 * The ww debug checker's reports name the caller's line for misuse made
 * through the buffer and locking-helper calls (the caller-site macros of
 * ttmsim/bo.h and ttmsim/exec.h), not a file of libttmsim: each case
 * breaks one rule through one call, with a handler installed, and checks
 * that the one report names this file and the line of that call (taken
 * with __LINE__ next to it), the rule, and the ww_mutex call or ttm_bo_*()
 * check that caught it. The plain functions, called as (name), still work
 * and name no line, as the plain ww_mutex functions.
 */
#include "lib/helpers.h"

#include "ttmsim/bo.h"
#include "ttmsim/exec.h"

static const struct ttm_placement sys = TTM_PLACEMENT_SYSTEM_INIT;
static const struct ttm_placement gtt = TTM_PLACEMENT_GTT_INIT;

/* ---- reports -------------------------------------------------------- */

static struct {
	unsigned int count;
	struct ww_debug_report first; /* its strings are static or __FILE__ */
} seen;

/* Reports come from the test's own thread only: no lock needed. */
static void keep_report(const struct ww_debug_report *r, void *data)
{
	(void)data;
	if (seen.count++ == 0)
		seen.first = *r;
}

static void watch_start(void)
{
	memset(&seen, 0, sizeof(seen));
	ww_debug_set_handler(keep_report, NULL);
}

/*
 * Exactly one report since watch_start(), of @rule by @call, naming
 * @file (NULL: none) and @line.
 */
static void assert_report(enum ww_debug_rule rule, const char *call,
			  const char *file, int line)
{
	ww_debug_set_handler(NULL, NULL);
	assert_int_equal(seen.count, 1);
	assert_int_equal(seen.first.rule, rule);
	assert_string_equal(seen.first.call, call);
	if (!file) {
		assert_null(seen.first.file);
		return;
	}
	assert_non_null(seen.first.file);
	assert_string_equal(seen.first.file, file);
	assert_int_equal(seen.first.line, line);
}

/* ---- fixture: a device, two buffers; the checker on ----------------- */

struct fix {
	struct ttm_device *dev;
	struct ttm_bo *a, *b;
};

static int setup(void **state)
{
	struct fix *f;

	if (ww_debug_set_enabled(true) == -EOPNOTSUPP)
		return 0;  /* each case skips: *state stays NULL */
	f = calloc(1, sizeof(*f));
	if (!f || ttm_device_create(NULL, &f->dev) ||
	    ttm_bo_create(f->dev, 4096, &sys, 0, &f->a) ||
	    ttm_bo_create(f->dev, 4096, &sys, 0, &f->b))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	ww_debug_set_handler(NULL, NULL);
	if (!f)
		return 0;
	assert_false(ww_mutex_is_locked(&ttm_bo_resv(f->a)->lock));
	assert_false(ww_mutex_is_locked(&ttm_bo_resv(f->b)->lock));
	ttm_bo_put(f->a);
	ttm_bo_put(f->b);
	ttm_device_destroy(f->dev);
	free(f);
	return 0;
}

static struct fix *fix_of(void **state)
{
	if (!*state)
		skip();  /* the checker is not built in */
	return *state;
}

/* ---- ttm_bo_*() ------------------------------------------------------ */

/*
 * A blocking reserve without a ticket while holding another reservation
 * of the class (rule 1), on each of the two lock paths.
 */
static void test_reserve_null_ctx_nested(void **state)
{
	struct fix *f = fix_of(state);
	int line;

	assert_int_equal(ttm_bo_reserve(f->a, false, false, NULL), 0);

	watch_start();
	line = __LINE__ + 1;
	assert_int_equal(ttm_bo_reserve(f->b, false, false, NULL), -EINVAL);
	assert_report(WW_DEBUG_NULL_CTX_NESTED, "ww_mutex_lock", __FILE__,
		      line);

	watch_start();
	line = __LINE__ + 1;
	assert_int_equal(ttm_bo_reserve(f->b, true, false, NULL), -EINVAL);
	assert_report(WW_DEBUG_NULL_CTX_NESTED, "ww_mutex_lock_interruptible",
		      __FILE__, line);

	/* The function itself, not the macro: no line to name. */
	watch_start();
	assert_int_equal((ttm_bo_reserve)(f->b, false, false, NULL), -EINVAL);
	assert_report(WW_DEBUG_NULL_CTX_NESTED, "ww_mutex_lock", NULL, 0);

	ttm_bo_unreserve(f->a);
}

/* A ticket's reserve after ww_acquire_done() (rule 3). */
static void test_reserve_after_done(void **state)
{
	struct fix *f = fix_of(state);
	struct ww_acquire_ctx ticket;
	int line;

	ww_acquire_init(&ticket, ttm_device_ww_class(f->dev));
	ww_acquire_done(&ticket);
	watch_start();
	line = __LINE__ + 1;
	assert_int_equal(ttm_bo_reserve(f->a, false, false, &ticket), -EINVAL);
	assert_report(WW_DEBUG_LOCK_AFTER_DONE, "ww_mutex_lock", __FILE__,
		      line);
	ww_acquire_fini(&ticket);
}

/* The slow path without an -EDEADLK to back off from (rule 6). */
static void test_reserve_slowpath_no_deadlk(void **state)
{
	struct fix *f = fix_of(state);
	struct ww_acquire_ctx ticket;
	int line;

	ww_acquire_init(&ticket, ttm_device_ww_class(f->dev));
	watch_start();
	line = __LINE__ + 1;
	assert_int_equal(ttm_bo_reserve_slowpath(f->a, true, &ticket), -EINVAL);
	assert_report(WW_DEBUG_SLOW_NO_DEADLK,
		      "ww_mutex_lock_slow_interruptible", __FILE__, line);
	ww_acquire_fini(&ticket);
}

/* Unreserving a buffer nobody reserved (rule 8). */
static void test_unreserve_unlocked(void **state)
{
	struct fix *f = fix_of(state);
	int line;

	watch_start();
	line = __LINE__ + 1;
	ttm_bo_unreserve(f->a);
	assert_report(WW_DEBUG_UNLOCK_UNLOCKED, "ww_mutex_unlock", __FILE__,
		      line);
}

/* The calls that check the reservation themselves (rule 11). */
static void test_pin_validate_not_held(void **state)
{
	struct fix *f = fix_of(state);
	struct ttm_operation_ctx ctx = { 0 };
	int line;

	watch_start();
	line = __LINE__ + 1;
	assert_int_equal(ttm_bo_pin(f->a), -EINVAL);
	assert_report(WW_DEBUG_RESV_NOT_HELD, "ttm_bo_pin", __FILE__, line);
	assert_int_equal(ttm_bo_pin_count(f->a), 0);

	watch_start();
	line = __LINE__ + 1;
	assert_int_equal(ttm_bo_validate(f->a, &gtt, &ctx), -EINVAL);
	assert_report(WW_DEBUG_RESV_NOT_HELD, "ttm_bo_validate", __FILE__,
		      line);
	assert_int_equal(ttm_bo_domain(f->a), TTM_DOMAIN_SYSTEM);

	watch_start();
	assert_int_equal((ttm_bo_pin)(f->a), -EINVAL);
	assert_report(WW_DEBUG_RESV_NOT_HELD, "ttm_bo_pin", NULL, 0);
}

/* ---- ttm_exec_*() ---------------------------------------------------- */

/* Locking through the helper after ttm_exec_done() (rule 3). */
static void test_exec_lock_after_done(void **state)
{
	struct fix *f = fix_of(state);
	struct ttm_bo *both[2] = { f->a, f->b };
	struct ttm_exec exec;
	int line;

	ttm_exec_init(&exec, f->dev, 0);
	ttm_exec_done(&exec);

	watch_start();
	line = __LINE__ + 1;
	assert_int_equal(ttm_exec_lock_bo(&exec, f->a), -EINVAL);
	assert_report(WW_DEBUG_LOCK_AFTER_DONE, "ww_mutex_lock", __FILE__,
		      line);

	watch_start();
	line = __LINE__ + 1;
	assert_int_equal(ttm_exec_prepare_bo(&exec, f->a, 1), -EINVAL);
	assert_report(WW_DEBUG_LOCK_AFTER_DONE, "ww_mutex_lock", __FILE__,
		      line);

	watch_start();
	line = __LINE__ + 1;
	assert_int_equal(ttm_exec_prepare_array(&exec, both, 2, 1), -EINVAL);
	assert_report(WW_DEBUG_LOCK_AFTER_DONE, "ww_mutex_lock", __FILE__,
		      line);

	/* ... and ttm_exec_done() a second time. */
	watch_start();
	line = __LINE__ + 1;
	ttm_exec_done(&exec);
	assert_report(WW_DEBUG_DONE_TWICE, "ww_acquire_done", __FILE__, line);

	watch_start();
	assert_int_equal((ttm_exec_lock_bo)(&exec, f->a), -EINVAL);
	assert_report(WW_DEBUG_LOCK_AFTER_DONE, "ww_mutex_lock", NULL, 0);

	assert_int_equal(ttm_exec_count(&exec), 0);
	ttm_exec_fini(&exec);
}

/* A second transaction of the class while one is open (rule 2). */
static void test_exec_init_nested(void **state)
{
	struct fix *f = fix_of(state);
	struct ttm_exec exec, inner;
	int line;

	ttm_exec_init(&exec, f->dev, 0);
	watch_start();
	line = __LINE__ + 1;
	ttm_exec_init(&inner, f->dev, 0);
	assert_report(WW_DEBUG_CTX_NESTED, "ww_acquire_init", __FILE__, line);
	/* Refused: @inner's ticket was never opened, nothing to fini. */
	ttm_exec_fini(&exec);
}

/* ttm_exec_fini() twice (rule 4). */
static void test_exec_fini_twice(void **state)
{
	struct fix *f = fix_of(state);
	struct ttm_exec exec;
	int line;

	ttm_exec_init(&exec, f->dev, 0);
	ttm_exec_fini(&exec);
	watch_start();
	line = __LINE__ + 1;
	ttm_exec_fini(&exec);
	assert_report(WW_DEBUG_FINI_TWICE, "ww_acquire_fini", __FILE__, line);
}

/* Unlocking a buffer unlocked behind the helper's back (rule 8). */
static void test_exec_unlock_bo_unlocked(void **state)
{
	struct fix *f = fix_of(state);
	struct ttm_exec exec;
	int line;

	ttm_exec_init(&exec, f->dev, 0);
	assert_int_equal(ttm_exec_lock_bo(&exec, f->a), 0);
	ww_mutex_unlock(&ttm_bo_resv(f->a)->lock);
	watch_start();
	line = __LINE__ + 1;
	ttm_exec_unlock_bo(&exec, f->a);
	assert_report(WW_DEBUG_UNLOCK_UNLOCKED, "ww_mutex_unlock", __FILE__,
		      line);
	assert_int_equal(ttm_exec_count(&exec), 0);
	ttm_exec_fini(&exec);
}

/*
 * The slow lock that starts a pass names the line of
 * ttm_exec_until_all_locked(): here a back-off declared for a buffer
 * whose reservation never returned -EDEADLK (rule 6). Interruptible, so
 * that the refused slow lock fails the pass rather than hold nothing.
 */
static void test_exec_pass_slow_lock(void **state)
{
	struct fix *f = fix_of(state);
	struct ttm_exec exec;
	int line, ret = 0;

	ttm_exec_init(&exec, f->dev, TTM_EXEC_INTERRUPTIBLE);
	ttm_exec_set_contended(&exec, f->a);
	watch_start();
	line = __LINE__ + 1;
	ttm_exec_until_all_locked(&exec) {
		ret = ttm_exec_lock_bo(&exec, f->a);
		ttm_exec_retry_on_contention(&exec);
		break;
	}
	assert_report(WW_DEBUG_SLOW_NO_DEADLK,
		      "ww_mutex_lock_slow_interruptible", __FILE__, line);
	assert_int_equal(ret, -EINVAL);
	assert_int_equal(ttm_exec_error(&exec), -EINVAL);
	ttm_exec_fini(&exec);
}

/* A job's list validated without its reservations held (rule 11). */
static void test_exec_entries_validate_not_held(void **state)
{
	struct fix *f = fix_of(state);
	struct ttm_exec_entry e = { .bo = f->a, .placement = &gtt };
	struct ttm_operation_ctx ctx = { 0 };
	unsigned int failed = 9;
	int line;

	watch_start();
	line = __LINE__ + 1;
	assert_int_equal(ttm_exec_entries_validate(&e, 1, &ctx, &failed),
			 -EINVAL);
	assert_report(WW_DEBUG_RESV_NOT_HELD, "ttm_bo_validate", __FILE__,
		      line);
	assert_int_equal(failed, 0);
}

/* Correct use through the macros reports nothing. */
static void test_correct_use_silent(void **state)
{
	struct fix *f = fix_of(state);
	struct ttm_operation_ctx ctx = { .exec = NULL };
	struct ttm_gpu_range range;
	struct ttm_exec exec;
	int ret = 0;

	watch_start();
	assert_int_equal(ttm_bo_reserve(f->a, false, false, NULL), 0);
	assert_int_equal(ttm_bo_pin(f->a), 0);
	ttm_bo_gpu_range(f->a, &range);
	assert_int_equal(range.size, 4096);
	assert_int_equal(ttm_bo_unpin(f->a), 0);
	ttm_bo_unreserve(f->a);

	ttm_exec_init(&exec, f->dev, TTM_EXEC_INTERRUPTIBLE);
	ctx.exec = &exec;
	ttm_exec_until_all_locked(&exec) {
		ret = ttm_exec_prepare_bo(&exec, f->a, 1);
		ttm_exec_retry_on_contention(&exec);
		if (ret)
			break;
		ret = ttm_bo_validate(f->a, &gtt, &ctx);
		ttm_exec_retry_on_contention(&exec);
		if (ret)
			break;
	}
	assert_int_equal(ret, 0);
	ttm_exec_done(&exec);
	ttm_exec_unlock_bo(&exec, f->a);
	ttm_exec_fini(&exec);
	ww_debug_set_handler(NULL, NULL);
	assert_int_equal(seen.count, 0);
}

#define CASE(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		CASE(test_reserve_null_ctx_nested),
		CASE(test_reserve_after_done),
		CASE(test_reserve_slowpath_no_deadlk),
		CASE(test_unreserve_unlocked),
		CASE(test_pin_validate_not_held),
		CASE(test_exec_lock_after_done),
		CASE(test_exec_init_nested),
		CASE(test_exec_fini_twice),
		CASE(test_exec_unlock_bo_unlocked),
		CASE(test_exec_pass_slow_lock),
		CASE(test_exec_entries_validate_not_held),
		CASE(test_correct_use_silent),
	};

	return cmocka_run_group_tests_name("bo-caller", tests, NULL, NULL);
}
