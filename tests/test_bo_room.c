// SPDX-License-Identifier: MIT
/*
 * The room wait is an event, not a timer (bo/bo_room.c): a validation
 * that found nothing to evict but a buffer another thread holds sleeps
 * until that buffer is unreserved, or until an interrupt. The test hook
 * ttmsim_test_bo_room_sleep() (include/bo/bo.h) makes the wait's safety
 * timeout practically infinite and says when the waiter is about to
 * sleep: a lost wake-up then hangs the waiter, and the test fails after
 * WAIT_LIMIT_S instead of passing on the timeout. No sleeps: events.
 */
#include <errno.h>
#include <pthread.h>

#include "lib/bo_helpers.h"

#include "bo/bo.h" /* the hook: white-box */
#include "ttmsim/exec.h"
#include "ttmsim/interrupt.h"

#define PAGE (4 * KiB)

static struct {
	struct event sleeping; /* a room waiter is about to sleep */
} hook;

void ttmsim_test_bo_room_sleep(struct ttm_device *dev, uint64_t *timeout_ns)
{
	(void)dev;
	/* Only an event can end the wait now. */
	*timeout_ns = UINT64_MAX;
	event_set(&hook.sleeping);
}

struct waiter {
	struct ttm_bo *bo;
	bool interruptible;
	struct ttm_interrupt_token *token;
	struct event ready;  /* token set */
	struct event done;
	int ret;
};

/* Validate w->bo into VRAM under a ticket, as a submission does. */
static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct ttm_exec exec;
	struct ttm_operation_ctx ctx = {
		.interruptible = w->interruptible,
		.exec = &exec,
	};
	int ret = 0;

	if (ttm_interrupt_self(&w->token))
		w->token = NULL;
	event_set(&w->ready);
	ttm_exec_init(&exec, w->bo->dev,
		      w->interruptible ? TTM_EXEC_INTERRUPTIBLE : 0);
	ttm_exec_until_all_locked(&exec) {
		ret = ttm_exec_prepare_bo(&exec, w->bo, 0);
		ttm_exec_retry_on_contention(&exec);
		if (ret)
			break;
		ret = ttm_bo_validate(w->bo, &vram_only, &ctx);
		ttm_exec_retry_on_contention(&exec);
		if (ret)
			break;
	}
	ttm_exec_fini(&exec);
	w->ret = ret;
	event_set(&w->done);
	return NULL;
}

struct fixture {
	struct ttm_device *dev;
	struct ttm_bo *held;  /* fills VRAM, reserved by the test */
	struct waiter w;
	pthread_t thread;
};

/*
 * One page of VRAM, filled by a buffer the test reserves without a
 * ticket (so eviction cannot take it, only wait); a waiter validates
 * another buffer into VRAM and goes to sleep.
 */
static void start(struct fixture *f, bool interruptible)
{
	struct ttm_device_options opts = {
		.vram_size = PAGE, .gtt_size = 4 * PAGE,
	};

	event_init(&hook.sleeping);
	assert_int_equal(ttm_device_create(&opts, &f->dev), 0);
	f->held = create_bo(f->dev, PAGE, &vram_only);
	assert_int_equal(ttm_bo_reserve(f->held, false, false, NULL), 0);
	f->w = (struct waiter){
		.bo = create_bo(f->dev, PAGE, &system_only),
		.interruptible = interruptible,
	};
	event_init(&f->w.ready);
	event_init(&f->w.done);
	assert_int_equal(pthread_create(&f->thread, NULL, waiter_main, &f->w),
			 0);
	assert_true(event_wait_for(&f->w.ready, WAIT_LIMIT_S));
	assert_true(event_wait_for(&hook.sleeping, WAIT_LIMIT_S));
}

static void finish(struct fixture *f)
{
	struct ttm_device_stats st;

	ttm_device_get_stats(f->dev, &st);
	assert_true(st.room_waits >= 1);
	/* The wait ended on its event every time. */
	assert_int_equal(st.room_wait_timeouts, 0);
	pthread_join(f->thread, NULL);
	ttm_interrupt_token_put(f->w.token);
	ttm_bo_put(f->w.bo);
	ttm_bo_put(f->held);
	assert_dev_ok(f->dev);
	assert_int_equal(ttm_device_destroy(f->dev), 0);
	event_destroy(&f->w.ready);
	event_destroy(&f->w.done);
	event_destroy(&hook.sleeping);
}

/* The unreserve of the buffer in the way wakes the waiter. */
static void test_unreserve_wakes(void **state)
{
	struct fixture f;

	(void)state;
	start(&f, false);
	assert_false(event_wait_for(&f.w.done, 0));
	ttm_bo_unreserve(f.held);
	assert_true(event_wait_for(&f.w.done, WAIT_LIMIT_S));
	assert_int_equal(f.w.ret, 0);
	assert_int_equal(ttm_bo_domain(f.w.bo), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(f.held), TTM_DOMAIN_GTT);
	finish(&f);
}

/*
 * A driver's own unlock of the reservation, ttm_resv_unlock(), wakes the
 * waiter too (a bare ww_mutex_unlock() would leave it to the timeout,
 * infinite here).
 */
static void test_resv_unlock_wakes(void **state)
{
	struct fixture f;

	(void)state;
	start(&f, false);
	assert_false(event_wait_for(&f.w.done, 0));
	ttm_resv_unlock(ttm_bo_resv(f.held));
	assert_true(event_wait_for(&f.w.done, WAIT_LIMIT_S));
	assert_int_equal(f.w.ret, 0);
	assert_int_equal(ttm_bo_domain(f.w.bo), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(f.held), TTM_DOMAIN_GTT);
	finish(&f);
}

/*
 * A buffer waiting for its delayed destroy fills VRAM: the waiter's own
 * attempts must not bump the generation (they did, trylocking and
 * unlocking it), or it never sleeps: it spun until the fence signalled.
 * Now it sleeps, and the destroy after the signal wakes it.
 */
static void test_zombie_sleeps(void **state)
{
	struct ttm_device_options opts = {
		.vram_size = PAGE, .gtt_size = 4 * PAGE,
	};
	struct ttm_device_stats st;
	struct ttm_device *dev;
	struct ttm_bo *zombie;
	struct ttm_fence *fence;
	struct waiter w;
	pthread_t thread;
	bool slept;

	(void)state;
	event_init(&hook.sleeping);
	assert_int_equal(ttm_device_create(&opts, &dev), 0);
	zombie = create_bo(dev, PAGE, &vram_only);
	fence = busy_fence(zombie);
	ttm_bo_put(zombie);
	w = (struct waiter){ .bo = create_bo(dev, PAGE, &system_only) };
	event_init(&w.ready);
	event_init(&w.done);
	assert_int_equal(pthread_create(&thread, NULL, waiter_main, &w), 0);
	slept = event_wait_for(&hook.sleeping, WAIT_LIMIT_S);
	/* Let it finish either way, then judge. */
	assert_int_equal(ttm_fence_signal(fence, 0), 0);
	ttm_fence_put(fence);
	assert_true(event_wait_for(&w.done, WAIT_LIMIT_S));
	pthread_join(thread, NULL);
	assert_true(slept);
	assert_int_equal(w.ret, 0);
	assert_int_equal(ttm_bo_domain(w.bo), TTM_DOMAIN_VRAM);
	ttm_device_get_stats(dev, &st);
	assert_int_equal(st.room_wait_timeouts, 0);
	ttm_interrupt_token_put(w.token);
	ttm_bo_put(w.bo);
	assert_dev_ok(dev);
	assert_int_equal(ttm_device_destroy(dev), 0);
	event_destroy(&w.ready);
	event_destroy(&w.done);
	event_destroy(&hook.sleeping);
}

/* An interrupt ends an interruptible wait at once, the buffer still held. */
static void test_interrupt_wakes(void **state)
{
	struct fixture f;

	(void)state;
	start(&f, true);
	assert_non_null(f.w.token);
	assert_int_equal(ttm_interrupt(f.w.token), 0);
	assert_true(event_wait_for(&f.w.done, WAIT_LIMIT_S));
	assert_int_equal(f.w.ret, -EINTR);
	assert_int_equal(ttm_bo_domain(f.w.bo), TTM_DOMAIN_SYSTEM);
	ttm_bo_unreserve(f.held);
	finish(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_unreserve_wakes, checks_reset),
		cmocka_unit_test_setup(test_interrupt_wakes, checks_reset),
		cmocka_unit_test_setup(test_resv_unlock_wakes, checks_reset),
		cmocka_unit_test_setup(test_zombie_sleeps, checks_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
