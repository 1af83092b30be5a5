// SPDX-License-Identifier: MIT
/*
 * The kernel's KUnit suite for TTM buffer objects (drivers/gpu/drm/ttm/
 * tests/ttm_bo_test.c) as cmocka cases on ttmsim: one case for each of the
 * kernel's that the model can express, written for ttmsim, in both
 * classes (the kernel has only its Wait-Die reservation class).
 *
 * The kernel checks a resource's place on the LRU or the pinned list, or
 * on a bulk move's range; ttmsim has no resources apart from the buffer,
 * so these cases check the buffer's place on its domain's LRU
 * (ttm_device_lru_snapshot()) instead, and its pin count; for bulk LRU
 * moves (ttm_bo_unreserve_bulk), the group's place on that LRU.
 *
 * setup() creates a device and two buffers in SYSTEM (the kernel's
 * TTM_PL_SYSTEM), in LRU order a, b; teardown() checks that nothing is
 * left reserved and the accounting holds.
 */
#include "lib/bo_helpers.h"

#include "ttmsim/exec.h"
#include "ttmsim/fence.h"
#include "ttmsim/lru.h"
#include "util/compiler.h"

static const bool wound_wait_true = true, wound_wait_false = false;

/* The ww_mutex of @bo's reservation. */
#define lock_of(bo) (&ttm_bo_resv(bo)->lock)

#define KUNIT_CASE_CLASS(fn, ww, cls)                                   \
	{ .name = #fn "(" cls ")", .test_func = fn,                     \
	  .setup_func = setup, .teardown_func = teardown,               \
	  .initial_state = (void *)&wound_wait_##ww }
#define KUNIT_CASES(fn)                                                 \
	KUNIT_CASE_CLASS(fn, true, "wound-wait"),                       \
	KUNIT_CASE_CLASS(fn, false, "wait-die")

struct kfix {
	struct ttm_device *dev;
	struct ttm_bo *a, *b;
};

static int setup(void **state)
{
	struct ttm_device_options opts = {
		.wound_wait = *(const bool *)*state,
	};
	struct kfix *k = calloc(1, sizeof(*k));

	checks_reset(state);
	if (!k || ttm_device_create(&opts, &k->dev) ||
	    ttm_bo_create(k->dev, 8 * KiB, &system_only, 0, &k->a) ||
	    ttm_bo_create(k->dev, 8 * KiB, &system_only, 0, &k->b))
		return -1;
	*state = k;
	return 0;
}

static int teardown(void **state)
{
	struct kfix *k = *state;

	assert_false(ww_mutex_is_locked(lock_of(k->a)));
	assert_false(ww_mutex_is_locked(lock_of(k->b)));
	assert_dev_ok(k->dev);
	ttm_bo_put(k->a);
	ttm_bo_put(k->b);
	ttm_device_destroy(k->dev);
	free(k);
	assert_checks_passed();
	return 0;
}

/* The SYSTEM LRU is exactly @n buffers, @want[0] (the head) first. */
static void assert_lru(struct kfix *k, struct ttm_bo *const *want, long n)
{
	struct ttm_bo *lru[4];

	assert_int_equal(lru_order(k->dev, TTM_DOMAIN_SYSTEM, lru, 4),
			 n);
	for (long i = 0; i < n; i++)
		assert_ptr_equal(lru[i], want[i]);
}

static uint64_t buffers_of(struct ttm_device *dev)
{
	struct ttm_device_stats s;

	ttm_device_get_stats(dev, &s);
	assert_int_equal(s.zombies, 0);
	return s.buffers;
}

/* ---- reserve --------------------------------------------------------- */

/*
 * kernel: ttm_bo_reserve_optimistic_no_ticket, its three parameter sets
 * (interruptible, no_wait): a free buffer is reserved at once.
 */
static void reserve_optimistic_no_ticket(void **state, bool interruptible,
					 bool no_wait)
{
	struct kfix *k = *state;

	assert_int_equal(ttm_bo_reserve(k->a, interruptible, no_wait, NULL),
			 0);
	assert_true(ww_mutex_is_locked(lock_of(k->a)));
	assert_null(ww_mutex_owner_ctx(lock_of(k->a)));
	ttm_bo_unreserve(k->a);
}

/* "Cannot be interrupted and sleeps" */
static void test_reserve_optimistic_sleeps(void **state)
{
	reserve_optimistic_no_ticket(state, false, false);
}

/* "Cannot be interrupted, locks straight away" */
static void test_reserve_optimistic_no_wait(void **state)
{
	reserve_optimistic_no_ticket(state, false, true);
}

/* "Can be interrupted, sleeps" */
static void test_reserve_optimistic_interruptible(void **state)
{
	reserve_optimistic_no_ticket(state, true, false);
}

/*
 * kernel: ttm_bo_reserve_locked_no_sleep. The reservation is held already
 * (by this very thread, as in the kernel's case): a no-wait reserve says
 * -EBUSY rather than sleep.
 */
static void test_reserve_locked_no_sleep(void **state)
{
	struct kfix *k = *state;

	assert_int_equal(ww_mutex_lock(lock_of(k->a), NULL), 0);
	assert_int_equal(ttm_bo_reserve(k->a, false, true, NULL), -EBUSY);
	ww_mutex_unlock(lock_of(k->a));
}

/*
 * kernel: ttm_bo_reserve_no_wait_ticket. A ticketed transaction that may
 * not wait could never take the lock it backed off for: refused with
 * -EBUSY (the kernel also warns), and the buffer is left unlocked.
 */
static void test_reserve_no_wait_ticket(void **state)
{
	struct kfix *k = *state;
	struct ww_acquire_ctx ctx;

	ww_acquire_init(&ctx, ttm_device_ww_class(k->dev));
	assert_int_equal(ttm_bo_reserve(k->a, false, true, &ctx), -EBUSY);
	assert_false(ww_mutex_is_locked(lock_of(k->a)));
	ww_acquire_fini(&ctx);
}

/*
 * kernel: ttm_bo_reserve_double_resv. The same ticket reserving a buffer
 * it holds: -EALREADY, and the buffer stays held once.
 */
static void test_reserve_double_resv(void **state)
{
	struct kfix *k = *state;
	struct ww_acquire_ctx ticket;

	ww_acquire_init(&ticket, ttm_device_ww_class(k->dev));
	assert_int_equal(ttm_bo_reserve(k->a, false, false, &ticket), 0);
	assert_int_equal(ttm_bo_reserve(k->a, false, false, &ticket),
			 -EALREADY);
	assert_ptr_equal(ww_mutex_owner_ctx(lock_of(k->a)), &ticket);
	ttm_bo_unreserve(k->a);
	assert_false(ww_mutex_is_locked(lock_of(k->a)));
	ww_acquire_fini(&ticket);
}

static int act_reserve(struct actor *a, void *bo)
{
	return ttm_bo_reserve(bo, false, false, &a->ctx);
}

static int act_unreserve(struct actor *a, void *bo)
{
	(void)a;
	ttm_bo_unreserve(bo);
	return 0;
}

static int act_reserve_intr(struct actor *a, void *bo)
{
	return ttm_bo_reserve(bo, true, false, &a->ctx);
}

/*
 * kernel: ttm_bo_reserve_deadlock. The kernel forges an older context as
 * the holder of b; here another thread's ticket, opened first, holds b
 * for real and then sleeps on a, which ours, younger, holds: a real
 * deadlock. Ours asking for b gets -EDEADLK from ttm_bo_reserve() in both
 * classes (Wait-Die: the younger dies instead of waiting; Wound-Wait: the
 * older, waiting, wounded it). Then the back-off the error asks for:
 * unreserve a, which lets the older through, sleep on b with
 * ttm_bo_reserve_slowpath() until the older is done, take a again.
 */
static void test_reserve_deadlock(void **state)
{
	struct kfix *k = *state;
	struct ww_acquire_ctx ticket;
	struct actor older;

	actor_start(&older, ttm_device_ww_class(k->dev));
	assert_int_equal(actor_run(&older, act_init, NULL), 0);
	assert_int_equal(actor_run(&older, act_reserve, k->b), 0);

	ww_acquire_init(&ticket, ttm_device_ww_class(k->dev));
	assert_int_equal(ttm_bo_reserve(k->a, false, false, &ticket), 0);
	assert_true(actor_post(&older, act_reserve, k->a));
	assert_true(wait_for_waiters(lock_of(k->a), 1));
	assert_int_equal(ttm_bo_reserve(k->b, false, false, &ticket),
			 -EDEADLK);
	assert_ptr_equal(ww_mutex_owner_ctx(lock_of(k->b)), &older.ctx);

	ttm_bo_unreserve(k->a);
	assert_true(actor_wait(&older));
	assert_int_equal(actor_ret(&older), 0);
	assert_int_equal(actor_run(&older, act_unreserve, k->a), 0);
	assert_int_equal(actor_run(&older, act_unreserve, k->b), 0);
	assert_int_equal(ttm_bo_reserve_slowpath(k->b, false, &ticket), 0);
	assert_int_equal(ttm_bo_reserve(k->a, false, false, &ticket), 0);
	ttm_bo_unreserve(k->a);
	ttm_bo_unreserve(k->b);
	ww_acquire_fini(&ticket);

	assert_int_equal(actor_run(&older, act_fini, NULL), 0);
	actor_stop(&older);
	assert_checks_passed();
}

/*
 * kernel: ttm_bo_reserve_interrupted. Another thread's interruptible,
 * ticketed reserve sleeps on a buffer held here; interrupting the thread
 * (ttmsim's counterpart of the kernel's signal) ends the wait with -EINTR
 * (the kernel's -ERESTARTSYS), holding nothing.
 */
static void test_reserve_interrupted(void **state)
{
	struct kfix *k = *state;
	struct actor b;

	actor_start(&b, ttm_device_ww_class(k->dev));
	assert_int_equal(ttm_bo_reserve(k->a, false, false, NULL), 0);
	assert_int_equal(actor_run(&b, act_init, NULL), 0);
	assert_true(actor_post(&b, act_reserve_intr, k->a));
	assert_true(wait_for_waiters(lock_of(k->a), 1));
	assert_int_equal(ttm_interrupt_thread(b.thread), 0);
	assert_true(actor_wait(&b));
	assert_int_equal(actor_ret(&b), -EINTR);
	assert_null(ww_mutex_owner_ctx(lock_of(k->a)));
	ttm_bo_unreserve(k->a);
	assert_int_equal(actor_run(&b, act_fini, NULL), 0);
	actor_stop(&b);
	assert_checks_passed();
}

/* The SYSTEM LRU is exactly @x, @y, @z (the head first). */
static void assert_lru3(struct kfix *k, struct ttm_bo *x, struct ttm_bo *y,
			struct ttm_bo *z)
{
	assert_lru(k, (struct ttm_bo *[]){ x, y, z }, 3);
}

/* ---- unreserve ------------------------------------------------------- */

/*
 * kernel: ttm_bo_unreserve_basic. Locked straight through the
 * reservation, released with ttm_bo_unreserve(): the buffer moves to its
 * LRU's tail.
 */
static void test_unreserve_basic(void **state)
{
	struct kfix *k = *state;

	assert_lru(k, (struct ttm_bo *[]){ k->a, k->b }, 2);
	assert_int_equal(ww_mutex_lock(lock_of(k->a), NULL), 0);
	ttm_bo_unreserve(k->a);
	assert_lru(k, (struct ttm_bo *[]){ k->b, k->a }, 2);
}

/*
 * kernel: ttm_bo_unreserve_pinned. A buffer pinned while reserved stays
 * off the LRU when unreserved (the kernel keeps it last on the pinned
 * list, which ttmsim does not show), and the LRU is left as it was.
 */
static void test_unreserve_pinned(void **state)
{
	struct kfix *k = *state;

	assert_int_equal(ww_mutex_lock(lock_of(k->a), NULL), 0);
	assert_int_equal(ttm_bo_pin(k->a), 0);
	assert_lru(k, (struct ttm_bo *[]){ k->b }, 1);
	ttm_bo_unreserve(k->a);
	assert_lru(k, (struct ttm_bo *[]){ k->b }, 1);
	assert_int_equal(ttm_bo_pin_count(k->a), 1);

	assert_int_equal(ttm_bo_reserve(k->a, false, false, NULL), 0);
	assert_int_equal(ttm_bo_unpin(k->a), 0);
	ttm_bo_unreserve(k->a);
	assert_lru(k, (struct ttm_bo *[]){ k->b, k->a }, 2);
}

/* ---- put ------------------------------------------------------------- */

/* kernel: ttm_bo_put_basic. The last put of an idle buffer frees it. */
static void test_put_basic(void **state)
{
	struct kfix *k = *state;
	struct ttm_bo *bo;

	assert_int_equal(ttm_bo_create(k->dev, 8 * KiB, &system_only, 0, &bo),
			 0);
	assert_int_equal(buffers_of(k->dev), 3);
	ttm_bo_put(bo);
	assert_int_equal(buffers_of(k->dev), 2);
	assert_lru(k, (struct ttm_bo *[]){ k->a, k->b }, 2);
}

/*
 * kernel: ttm_bo_put_shared_resv, on the buffer's own reservation: it
 * holds a fence, signalled before the last put, which then frees the
 * buffer at once, with no delayed destroy.
 */
static void test_put_signalled_fence(void **state)
{
	struct kfix *k = *state;
	struct ttm_fence *fence;
	struct ttm_bo *bo;

	assert_int_equal(ttm_bo_create(k->dev, 8 * KiB, &system_only, 0, &bo),
			 0);
	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1,
					  &fence), 0);
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_resv_reserve_fences(ttm_bo_resv(bo), 1), 0);
	ttm_resv_add_fence(ttm_bo_resv(bo), fence, TTM_RESV_USAGE_BOOKKEEP);
	ttm_bo_unreserve(bo);
	assert_int_equal(ttm_fence_signal(fence, 0), 0);
	ttm_fence_put(fence);

	assert_int_equal(buffers_of(k->dev), 3);
	ttm_bo_put(bo);
	assert_int_equal(buffers_of(k->dev), 2);
}

/* A driver's object: a buffer and where its destroy counts. */
struct counted_bo {
	struct ttm_bo bo;
	unsigned int *destroyed;
};

static void count_destroy(struct ttm_bo *bo)
{
	struct counted_bo *obj = container_of(bo, struct counted_bo, bo);

	(*obj->destroyed)++;
	free(obj);
}

/*
 * kernel: ttm_bo_put_shared_resv. The buffer lives on a reservation of
 * the driver's, outside any buffer, which holds a signalled bookkeeping
 * fence: the last put frees the buffer at once, and leaves the
 * reservation to its owner, who can still lock it, then finish it.
 */
static void test_put_shared_resv(void **state)
{
	struct kfix *k = *state;
	struct ttm_resv external;
	struct ttm_fence *fence;
	unsigned int destroyed = 0;
	struct counted_bo *obj = calloc(1, sizeof(*obj));
	struct ttm_bo *bo;

	assert_non_null(obj);
	obj->destroyed = &destroyed;
	bo = &obj->bo;
	ttm_resv_init(&external, ttm_device_ww_class(k->dev));
	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1,
					  &fence), 0);
	assert_int_equal(ww_mutex_lock(&external.lock, NULL), 0);
	assert_int_equal(ttm_resv_reserve_fences(&external, 1), 0);
	ttm_resv_add_fence(&external, fence, TTM_RESV_USAGE_BOOKKEEP);
	assert_int_equal(ttm_fence_signal(fence, 0), 0);
	ttm_fence_put(fence);

	assert_int_equal(ttm_bo_init_reserved(k->dev, bo, TTM_BO_TYPE_DEVICE,
					      8 * KiB, &system_only, NULL, NULL,
					      &external, count_destroy), 0);
	assert_ptr_equal(ttm_bo_resv(bo), &external);
	ww_mutex_unlock(&external.lock);

	assert_int_equal(buffers_of(k->dev), 3);
	ttm_bo_put(bo);
	assert_int_equal(destroyed, 1);
	assert_int_equal(buffers_of(k->dev), 2);
	assert_int_equal(ww_mutex_lock(&external.lock, NULL), 0);
	ww_mutex_unlock(&external.lock);
	ttm_resv_fini(&external);
}

/* ---- pin ------------------------------------------------------------- */

/* kernel: ttm_bo_pin_basic. Three pins, each under its reservation. */
static void test_pin_basic(void **state)
{
	struct kfix *k = *state;

	for (int i = 0; i < 3; i++)
		pin_bo(k->a);
	assert_int_equal(ttm_bo_pin_count(k->a), 3);
	for (int i = 0; i < 3; i++)
		unpin_bo(k->a);
	assert_int_equal(ttm_bo_pin_count(k->a), 0);
}

/*
 * kernel: ttm_bo_pin_unpin_resource, on the LRU rather than a bulk move:
 * pinned, the buffer leaves it; unpinned, it comes back at the tail.
 */
static void test_pin_unpin_lru(void **state)
{
	struct kfix *k = *state;

	pin_bo(k->a);
	assert_int_equal(ttm_bo_pin_count(k->a), 1);
	assert_lru(k, (struct ttm_bo *[]){ k->b }, 1);
	unpin_bo(k->a);
	assert_int_equal(ttm_bo_pin_count(k->a), 0);
	assert_lru(k, (struct ttm_bo *[]){ k->b, k->a }, 2);
}

/*
 * kernel: ttm_bo_multiple_pin_one_unpin, on the LRU: two pins, one unpin,
 * and the buffer is still pinned and off the LRU.
 */
static void test_multiple_pin_one_unpin(void **state)
{
	struct kfix *k = *state;

	assert_int_equal(ttm_bo_reserve(k->a, false, false, NULL), 0);
	assert_int_equal(ttm_bo_pin(k->a), 0);
	assert_int_equal(ttm_bo_pin(k->a), 0);
	ttm_bo_unreserve(k->a);
	assert_int_equal(ttm_bo_pin_count(k->a), 2);
	assert_lru(k, (struct ttm_bo *[]){ k->b }, 1);

	unpin_bo(k->a);
	assert_int_equal(ttm_bo_pin_count(k->a), 1);
	assert_lru(k, (struct ttm_bo *[]){ k->b }, 1);

	unpin_bo(k->a);
	assert_lru(k, (struct ttm_bo *[]){ k->b, k->a }, 2);
}

/*
 * kernel: ttm_bo_unreserve_bulk. Two buffers reserved with one ticket
 * join a bulk move and are unreserved: they end up together, in the
 * order of their unreserves, as the group the bulk moves. Here a third
 * buffer outside the bulk shows the group is kept together and moved to
 * the LRU's tail as a whole.
 */
static void test_unreserve_bulk(void **state)
{
	struct kfix *k = *state;
	struct ttm_lru_bulk_move bulk;
	struct ww_acquire_ctx ticket;
	struct ttm_bo *c;

	assert_int_equal(ttm_bo_create(k->dev, 8 * KiB, &system_only, 0, &c),
			 0);
	ttm_lru_bulk_move_init(&bulk);
	ww_acquire_init(&ticket, ttm_device_ww_class(k->dev));
	assert_int_equal(ttm_bo_reserve(k->a, false, false, &ticket), 0);
	assert_int_equal(ttm_bo_reserve(k->b, false, false, &ticket), 0);
	ww_acquire_done(&ticket);
	assert_int_equal(ttm_bo_set_bulk_move(k->a, &bulk), 0);
	assert_int_equal(ttm_bo_set_bulk_move(k->b, &bulk), 0);
	assert_lru3(k, c, k->a, k->b);
	ttm_bo_unreserve(k->b);
	ttm_bo_unreserve(k->a);
	ww_acquire_fini(&ticket);
	/* Each unreserve moved its buffer to the group's tail only. */
	assert_lru3(k, c, k->b, k->a);
	assert_dev_ok(k->dev);

	assert_int_equal(ttm_bo_reserve(c, false, false, NULL), 0);
	ttm_bo_unreserve(c);
	assert_lru3(k, k->b, k->a, c);
	ttm_lru_bulk_move_tail(&bulk);
	assert_lru3(k, c, k->b, k->a);
	assert_dev_ok(k->dev);

	assert_int_equal(ttm_lru_bulk_move_fini(&bulk), -EBUSY);
	assert_int_equal(ttm_bo_reserve(k->a, false, false, NULL), 0);
	assert_int_equal(ttm_bo_set_bulk_move(k->a, NULL), 0);
	ttm_bo_unreserve(k->a);
	assert_int_equal(ttm_bo_reserve(k->b, false, false, NULL), 0);
	assert_int_equal(ttm_bo_set_bulk_move(k->b, NULL), 0);
	ttm_bo_unreserve(k->b);
	assert_int_equal(ttm_lru_bulk_move_fini(&bulk), 0);
	ttm_bo_put(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		KUNIT_CASES(test_reserve_optimistic_sleeps),
		KUNIT_CASES(test_reserve_optimistic_no_wait),
		KUNIT_CASES(test_reserve_optimistic_interruptible),
		KUNIT_CASES(test_reserve_locked_no_sleep),
		KUNIT_CASES(test_reserve_no_wait_ticket),
		KUNIT_CASES(test_reserve_double_resv),
		KUNIT_CASES(test_reserve_deadlock),
		KUNIT_CASES(test_reserve_interrupted),
		KUNIT_CASES(test_unreserve_basic),
		KUNIT_CASES(test_unreserve_pinned),
		KUNIT_CASES(test_unreserve_bulk),
		KUNIT_CASES(test_put_basic),
		KUNIT_CASES(test_put_signalled_fence),
		KUNIT_CASES(test_put_shared_resv),
		KUNIT_CASES(test_pin_basic),
		KUNIT_CASES(test_pin_unpin_lru),
		KUNIT_CASES(test_multiple_pin_one_unpin),
	};

	return cmocka_run_group_tests_name("ttm_bo", tests, NULL, NULL);
}
