// SPDX-License-Identifier: MIT
/*
 * Fence-signalling sections (ttm_fence_begin_signalling() in
 * ttmsim/fence.h): the annotations themselves. The checker's reports of
 * blocking calls inside a section (rule 13) are cases of test_ww_debug.c.
 *
 *  - with the checker off (or not built in), the calls work and nest,
 *    count nothing and check nothing: blocking calls inside go through;
 *  - with it on, cookies are depths; a section begun while it was on
 *    still closes once it is off;
 *  - the library's own sections: fence callbacks (signal and last put),
 *    the GPU's retire hook and the job fence's callbacks, on both clocks
 *    (the real-time ones on the engine's worker thread);
 *  - what a section may do is not reported: trylocks, no_wait
 *    reservations, zero-timeout tests, signalling, callbacks, submits.
 */
#include <stdlib.h>

#include "lib/helpers.h"
#include "ttmsim/bo.h"
#include "ttmsim/gpu.h"
#include "util/compiler.h"

static DEFINE_WD_CLASS(signalling_test_class);

static unsigned int reports;

static void count_report(const struct ww_debug_report *r, void *data)
{
	(void)data;
	__atomic_fetch_add(&reports, 1, __ATOMIC_RELAXED);
	ww_debug_print_report(r, STDERR_FILENO);
}

static int setup(void **state)
{
	(void)state;
	reports = 0;
	ww_debug_set_handler(count_report, NULL);
	return checks_reset(NULL);
}

static int teardown(void **state)
{
	(void)state;
	ww_debug_set_handler(NULL, NULL);
	ww_debug_set_enabled(true);
	return 0;
}

static bool checker_built(void)
{
	return ww_debug_set_enabled(true) != -EOPNOTSUPP;
}

static struct ttm_fence *new_fence(void)
{
	struct ttm_fence *f = NULL;

	CHECK_INT(ttm_fence_create(ttm_fence_context_alloc(1), 1, &f), 0);
	return f;
}

/*
 * Off: cookies are 0 at any depth, and what rule 13 forbids goes through
 * unchecked (here without harm: nobody waits for anything).
 */
static void test_off_nest(void **state)
{
	struct ttm_fence *f = new_fence();
	unsigned int outer, inner;
	struct ww_mutex m;

	(void)state;
	ww_debug_set_enabled(false);
	ww_mutex_init(&m, &signalling_test_class);
	outer = ttm_fence_begin_signalling();
	inner = ttm_fence_begin_signalling();
	CHECK_INT(outer, 0);
	CHECK_INT(inner, 0);
	CHECK_INT(ww_mutex_lock(&m, NULL), 0);
	ww_mutex_unlock(&m);
	CHECK_INT(ttm_fence_signal(f, 0), 0);
	CHECK_INT(ttm_fence_wait(f, false, -1), 0);
	ttm_fence_end_signalling(inner);
	ttm_fence_end_signalling(outer);
	/* Ended in the wrong order: nothing was counted, nothing to say. */
	outer = ttm_fence_begin_signalling();
	inner = ttm_fence_begin_signalling();
	ttm_fence_end_signalling(outer);
	ttm_fence_end_signalling(inner);
	ww_mutex_destroy(&m);
	ttm_fence_put(f);
	CHECK_INT(reports, 0);
	assert_checks_passed();
}

/* On: cookies are depths; switching off inside a section leaks nothing. */
static void test_on_nest(void **state)
{
	unsigned int a, b, c;

	(void)state;
	if (!checker_built())
		skip();
	a = ttm_fence_begin_signalling();
	b = ttm_fence_begin_signalling();
	CHECK_INT(a, 1);
	CHECK_INT(b, 2);
	ttm_fence_end_signalling(b);
	c = ttm_fence_begin_signalling();
	CHECK_INT(c, 2);
	ttm_fence_end_signalling(c);
	ww_debug_set_enabled(false);
	ttm_fence_end_signalling(a);
	ww_debug_set_enabled(true);
	a = ttm_fence_begin_signalling();
	CHECK_INT(a, 1);
	ttm_fence_end_signalling(a);
	CHECK_INT(reports, 0);
	assert_checks_passed();
}

/* The depth a callback or hook finds, from a cookie of its own. */
struct depth_cb {
	struct ttm_fence_cb cb;
	unsigned int depth; /* atomic */
};

static unsigned int depth_here(void)
{
	unsigned int cookie = ttm_fence_begin_signalling();

	ttm_fence_end_signalling(cookie);
	return cookie;
}

static void depth_cb_func(struct ttm_fence *fence, struct ttm_fence_cb *cb)
{
	struct depth_cb *d = container_of(cb, struct depth_cb, cb);

	(void)fence;
	__atomic_store_n(&d->depth, depth_here(), __ATOMIC_RELEASE);
}

static unsigned int depth_of(struct depth_cb *d)
{
	return __atomic_load_n(&d->depth, __ATOMIC_ACQUIRE);
}

/* Callbacks run in a section: on a signal, and on a last put. */
static void test_callbacks_annotated(void **state)
{
	struct ttm_fence *f = new_fence(), *g = new_fence();
	struct depth_cb a = { .depth = 0 }, b = { .depth = 0 };

	(void)state;
	if (!checker_built())
		skip();
	CHECK_INT(ttm_fence_add_callback(f, &a.cb, depth_cb_func), 0);
	CHECK_INT(ttm_fence_add_callback(g, &b.cb, depth_cb_func), 0);
	CHECK_INT(ttm_fence_signal(f, 0), 0);
	ttm_fence_put(g); /* unsignalled: the callback runs, -ECANCELED */
	CHECK_INT(depth_of(&a), 2);
	CHECK_INT(depth_of(&b), 2);
	CHECK_INT(depth_here(), 1); /* and every section closed */
	ttm_fence_put(f);
	CHECK_INT(reports, 0);
	assert_checks_passed();
}

static unsigned int hook_depth; /* atomic */

static void retire_hook(const struct ttm_gpu_job_info *info, void *data)
{
	(void)info;
	(void)data;
	__atomic_store_n(&hook_depth, depth_here(), __ATOMIC_RELEASE);
}

/*
 * The retire hook runs in a section, and the job fence's callbacks in a
 * nested one: on the virtual clock in this thread, in real time on the
 * engine's worker.
 */
static void retire_annotated(unsigned int flags)
{
	const struct ttm_gpu_options opts = { .flags = flags,
					      .on_retire = retire_hook };
	struct ttm_fence *gate, *fence;
	struct ttm_gpu_dep dep = { .fence = NULL };
	struct ttm_gpu_job job = { .engine = 0, .duration_us = 10,
				   .deps = &dep, .n_deps = 1 };
	struct depth_cb d = { .depth = 0 };
	struct ttm_gpu *gpu;

	if (!checker_built())
		skip();
	__atomic_store_n(&hook_depth, 0, __ATOMIC_RELAXED);
	if (!CHECK_INT(ttm_gpu_create(1, &opts, &gpu), 0))
		return;
	/* The job waits for the gate: the callback is in before it runs. */
	dep.fence = gate = new_fence();
	if (CHECK_INT(ttm_gpu_submit(gpu, &job, &fence), 0)) {
		CHECK_INT(ttm_fence_add_callback(fence, &d.cb, depth_cb_func),
			  0);
		CHECK_INT(ttm_fence_signal(gate, 0), 0);
		if (flags & TTM_GPU_DETERMINISTIC)
			CHECK_INT(ttm_gpu_advance(gpu, 10), 0);
		CHECK_INT(ttm_fence_wait(fence, false,
					 WAIT_LIMIT_S * 1000000000LL), 0);
		ttm_fence_put(fence);
	}
	ttm_fence_put(gate);
	ttm_gpu_destroy(gpu);
	CHECK_INT(__atomic_load_n(&hook_depth, __ATOMIC_ACQUIRE), 2);
	CHECK_INT(depth_of(&d), 3);
	CHECK_INT(depth_here(), 1);
	CHECK_INT(reports, 0);
	assert_checks_passed();
}

static void test_retire_annotated_virtual(void **state)
{
	(void)state;
	retire_annotated(TTM_GPU_DETERMINISTIC);
}

static void test_retire_annotated_real_time(void **state)
{
	(void)state;
	retire_annotated(0);
}

/* What a section may do is never reported. */
static void test_allowed_inside(void **state)
{
	static const struct ttm_placement sys = TTM_PLACEMENT_SYSTEM_INIT;
	struct ttm_fence *f = new_fence(), *g = new_fence(), *out = NULL;
	struct ttm_gpu_job job = { .engine = 0 };
	struct depth_cb d = { .depth = 0 };
	struct ttm_device *dev;
	struct ttm_gpu *gpu;
	struct ttm_bo *bo;
	struct ww_mutex m;
	unsigned int cookie;
	void *p;

	(void)state;
	if (!CHECK_INT(ttm_device_create(NULL, &dev), 0))
		return;
	if (!CHECK_INT(ttm_bo_create(dev, 4096, &sys, 0, &bo), 0) ||
	    !CHECK_INT(ttm_gpu_create(1, NULL, &gpu), 0)) {
		ttm_device_destroy(dev);
		return;
	}
	ww_mutex_init(&m, &signalling_test_class);

	cookie = ttm_fence_begin_signalling();
	CHECK_INT(ww_mutex_trylock(&m, NULL), 1);
	ww_mutex_unlock(&m);
	CHECK_INT(ttm_bo_reserve(bo, false, true, NULL), 0);
	ttm_bo_unreserve(bo);
	CHECK_INT(ttm_fence_wait(f, false, 0), -ETIME);
	CHECK_INT(ttm_resv_wait(ttm_bo_resv(bo), TTM_RESV_USAGE_BOOKKEEP,
				false, 0), 0);
	CHECK_INT(ttm_fence_add_callback(g, &d.cb, depth_cb_func), 0);
	CHECK_INT(ttm_fence_signal(g, 0), 0);
	/* Ours, the signal's, the callback's own; 0 without the checker. */
	CHECK_INT(depth_of(&d), checker_built() ? 3 : 0);
	CHECK_INT(ttm_gpu_submit(gpu, &job, &out), 0);
	p = malloc(64);
	CHECK(p != NULL);
	free(p);
	ttm_fence_end_signalling(cookie);

	CHECK_INT(ttm_fence_wait(out, false, WAIT_LIMIT_S * 1000000000LL),
		  0);
	ttm_fence_put(out);
	ttm_gpu_destroy(gpu);
	ttm_bo_put(bo);
	CHECK_INT(ttm_device_destroy(dev), 0);
	ww_mutex_destroy(&m);
	ttm_fence_put(f);
	ttm_fence_put(g);
	CHECK_INT(reports, 0);
	assert_checks_passed();
}

#define CASE(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		CASE(test_off_nest),
		CASE(test_on_nest),
		CASE(test_callbacks_annotated),
		CASE(test_retire_annotated_virtual),
		CASE(test_retire_annotated_real_time),
		CASE(test_allowed_inside),
	};

	return cmocka_run_group_tests_name("fence-signalling", tests, NULL,
					   NULL);
}
