// SPDX-License-Identifier: MIT
/*
 * The locking helper (ttmsim/exec.h): lists in user order with duplicates,
 * references, the back-off protocol under real contention in both classes
 * (same stamp across retries, contended buffer slow-locked first), a stress
 * run with injected back-offs, the eviction back-off of
 * ttm_exec_set_contended() and the buffer it holds for eviction only (never
 * listed with the body's, so that the job's fence can go into each of
 * those), drm_exec's unlock of one buffer, arrays and reverse order, a
 * job's buffer list folded and validated as a whole, interrupts, fence
 * slots.
 *
 * The ww debug checker is on and aborts on any misuse of the ww API, so a
 * passing run also shows that the helper follows the back-off rules.
 * Threads meet through actors (lib/helpers.h), never by sleeping.
 */
#include "lib/bo_helpers.h"

#include "bo/bo.h"  /* struct ttm_bo's refcount: TTM_EXEC_CALLER_REFS */
#include "ttmsim/bo.h"
#include "ttmsim/exec.h"
#include "ttmsim/fence.h"
#include "ttmsim/gpu.h"

#define NUM_BOS 8
#define BO_SIZE 4096

static const struct ttm_placement sys_place = TTM_PLACEMENT_SYSTEM_INIT;

static const bool wound_wait_true = true, wound_wait_false = false;

#define CLASS_TESTS(fn)                                                 \
	{ .name = #fn "(wound-wait)", .test_func = fn,                  \
	  .setup_func = checks_reset,                                   \
	  .initial_state = (void *)&wound_wait_true },                  \
	{ .name = #fn "(wait-die)", .test_func = fn,                    \
	  .setup_func = checks_reset,                                   \
	  .initial_state = (void *)&wound_wait_false }

/*
 * A device of the state's class with NUM_BOS buffers in SYSTEM; or, from
 * fixture_init_vram(), one with a real-time GPU and a 16 KiB VRAM that
 * bos[0] fills (it may go to GTT).
 */
struct fixture {
	struct ttm_gpu *gpu;
	struct ttm_device *dev;
	struct ttm_bo *bos[NUM_BOS];
};

static void fixture_init(struct fixture *f, void **state)
{
	struct ttm_device_options opts = {
		.wound_wait = *state && *(const bool *)*state,
	};

	f->gpu = NULL;
	assert_int_equal(ttm_device_create(&opts, &f->dev), 0);
	for (int i = 0; i < NUM_BOS; i++)
		assert_int_equal(ttm_bo_create(f->dev, BO_SIZE, &sys_place, 0,
					       &f->bos[i]), 0);
}

static void fixture_init_vram(struct fixture *f, void **state)
{
	struct ttm_device_options opts = {
		.vram_size = 4 * BO_SIZE,
		.wound_wait = *state && *(const bool *)*state,
	};

	assert_int_equal(ttm_gpu_create(1, NULL, &f->gpu), 0);
	opts.gpu = f->gpu;
	assert_int_equal(ttm_device_create(&opts, &f->dev), 0);
	assert_int_equal(ttm_bo_create(f->dev, 4 * BO_SIZE, &vram_gtt, 0,
				       &f->bos[0]), 0);
	assert_int_equal(ttm_bo_domain(f->bos[0]), TTM_DOMAIN_VRAM);
	for (int i = 1; i < NUM_BOS; i++)
		assert_int_equal(ttm_bo_create(f->dev, BO_SIZE, &sys_place, 0,
					       &f->bos[i]), 0);
}

static void fixture_fini(struct fixture *f)
{
	for (int i = 0; i < NUM_BOS; i++) {
		assert_false(ww_mutex_is_locked(&ttm_bo_resv(f->bos[i])->lock));
		ttm_bo_put(f->bos[i]);
	}
	assert_int_equal(ttm_device_destroy(f->dev), 0);
	ttm_gpu_destroy(f->gpu);
}

static struct ww_mutex *lock_of(struct ttm_bo *bo)
{
	return &ttm_bo_resv(bo)->lock;
}

static uint64_t live_buffers(struct ttm_device *dev)
{
	struct ttm_device_stats s;

	ttm_device_get_stats(dev, &s);
	return s.buffers;
}

static void count_report(const struct ww_debug_report *report, void *data)
{
	(void)report;
	(*(int *)data)++;
}

/* ---- lists and duplicates ------------------------------------------- */

/* Lock @order (indices into @f->bos) in one loop; the results in @rets. */
static int lock_order(struct ttm_exec *exec, struct fixture *f,
		      const int *order, int n, int *rets)
{
	int passes = 0;

	ttm_exec_until_all_locked(exec) {
		passes++;
		for (int i = 0; i < n; i++) {
			rets[i] = ttm_exec_lock_bo(exec, f->bos[order[i]]);
			ttm_exec_retry_on_contention(exec);
		}
	}
	return passes;
}

static void check_list(struct ttm_exec *exec, struct fixture *f,
		       const int *expect, unsigned int n)
{
	struct ttm_bo *bo;
	unsigned int i;

	assert_int_equal(ttm_exec_count(exec), n);
	ttm_exec_for_each_locked_bo(exec, i, bo) {
		assert_ptr_equal(bo, f->bos[expect[i]]);
		assert_ptr_equal(ww_mutex_owner_ctx(lock_of(bo)),
				 ttm_exec_ticket(exec));
		assert_false(ttm_exec_is_evictable(exec, bo));
	}
	assert_int_equal(i, n);
	assert_null(ttm_exec_locked_bo(exec, n));
}

static void test_duplicates(void **state)
{
	static const int order[] = { 3, 0, 5, 0, 3, 1 };
	static const int expect[] = { 3, 0, 5, 1 };
	struct fixture f;
	struct ttm_exec exec;
	int rets[6];

	fixture_init(&f, state);

	ttm_exec_init(&exec, f.dev, TTM_EXEC_IGNORE_DUPLICATES);
	assert_int_equal(lock_order(&exec, &f, order, 6, rets), 1);
	for (int i = 0; i < 6; i++)
		assert_int_equal(rets[i], 0);
	check_list(&exec, &f, expect, 4);
	ttm_exec_done(&exec);
	ttm_exec_fini(&exec);
	for (int i = 0; i < NUM_BOS; i++)
		assert_false(ww_mutex_is_locked(lock_of(f.bos[i])));

	/* Without the flag the duplicates are reported, not listed twice. */
	ttm_exec_init(&exec, f.dev, 0);
	assert_int_equal(lock_order(&exec, &f, order, 6, rets), 1);
	assert_int_equal(rets[0], 0);
	assert_int_equal(rets[1], 0);
	assert_int_equal(rets[2], 0);
	assert_int_equal(rets[3], -EALREADY);
	assert_int_equal(rets[4], -EALREADY);
	assert_int_equal(rets[5], 0);
	check_list(&exec, &f, expect, 4);
	ttm_exec_fini(&exec);

	fixture_fini(&f);
}

/* The helper keeps its buffers alive while it holds them. */
static void test_references(void **state)
{
	struct fixture f;
	struct ttm_exec exec;
	struct ttm_bo *extra;
	int ret = 0;

	fixture_init(&f, state);
	assert_int_equal(ttm_bo_create(f.dev, BO_SIZE, &sys_place, 0, &extra),
			 0);
	assert_int_equal(live_buffers(f.dev), NUM_BOS + 1);

	ttm_exec_init(&exec, f.dev, 0);
	ttm_exec_until_all_locked(&exec) {
		ret = ttm_exec_lock_bo(&exec, extra);
		ttm_exec_retry_on_contention(&exec);
	}
	assert_int_equal(ret, 0);
	ttm_bo_put(extra);
	assert_int_equal(live_buffers(f.dev), NUM_BOS + 1);
	ttm_exec_fini(&exec);
	assert_int_equal(live_buffers(f.dev), NUM_BOS);

	/* An empty transaction, a loop left by break, and a second loop. */
	ttm_exec_init(&exec, f.dev, 0);
	ttm_exec_fini(&exec);
	ttm_exec_init(&exec, f.dev, 0);
	ttm_exec_until_all_locked(&exec) {
		break;
	}
	ttm_exec_until_all_locked(&exec) {
		ret = ttm_exec_lock_bo(&exec, f.bos[0]);
		ttm_exec_retry_on_contention(&exec);
	}
	assert_int_equal(ret, 0);
	assert_int_equal(ttm_exec_count(&exec), 1);
	ttm_exec_fini(&exec);

	fixture_fini(&f);
}

/* ---- two-thread contention ---------------------------------------------- */

/* One transaction run by an actor, step by step. */
struct exec_job {
	struct fixture *f;
	struct ttm_exec exec;
	uint32_t flags;
	const int *order;
	int n;
	int passes;
	unsigned long stamps[4];  /* the ticket's stamp in each pass */
	int first_locked[4];      /* count held at the start of each pass */
	bool inject;              /* force a back-off at the second lock */
};

static int act_exec_init(struct actor *a, void *arg)
{
	struct exec_job *job = arg;

	(void)a;
	ttm_exec_init(&job->exec, job->f->dev, job->flags);
	return 0;
}

static int act_exec_fini(struct actor *a, void *arg)
{
	struct exec_job *job = arg;

	(void)a;
	ttm_exec_fini(&job->exec);
	return 0;
}

/* Lock job->order; the first error other than a back-off ends the step. */
static int act_exec_lock(struct actor *a, void *arg)
{
	struct exec_job *job = arg;
	struct ttm_exec *exec = &job->exec;
	struct ttm_bo **bos = job->f->bos;
	int ret = 0;

	(void)a;
	ttm_exec_until_all_locked(exec) {
		if (job->passes < 4) {
			job->stamps[job->passes] = ttm_exec_ticket(exec)->stamp;
			job->first_locked[job->passes] =
				(int)ttm_exec_count(exec);
		}
		job->passes++;
		for (int i = 0; i < job->n; i++) {
			if (job->inject && job->passes == 1 && i == 1)
				ww_debug_inject(1, 1);
			ret = ttm_exec_lock_bo(exec, bos[job->order[i]]);
			if (job->inject)
				ww_debug_inject(0, 0);
			ttm_exec_retry_on_contention(exec);
			if (ret)
				goto out;
		}
	}
out:
	return ret;
}

/*
 * The older transaction holds Y; the younger takes X and asks for Y, then
 * the older asks for X. Wait-Die: the younger dies at Y. Wound-Wait: it
 * waits at Y and is wounded there. Either way it backs off with -EDEADLK
 * on Y, sleeps on Y in the slow path, and completes with its first stamp
 * once the older finishes.
 */
static void test_contention(void **state)
{
	static const int old_order[] = { 1 }, old_more[] = { 0 };
	static const int young_order[] = { 0, 1 };
	struct exec_job old = { .order = old_order, .n = 1 };
	struct exec_job young = { .order = young_order, .n = 2 };
	struct actor a, b;
	struct fixture f;
	struct ttm_bo *bo;
	unsigned int i;

	fixture_init(&f, state);
	old.f = young.f = &f;
	actor_start(&a, NULL);
	actor_start(&b, NULL);

	assert_int_equal(actor_run(&a, act_exec_init, &old), 0);
	assert_int_equal(actor_run(&b, act_exec_init, &young), 0);
	assert_true(ttm_exec_ticket(&old.exec)->stamp <
		    ttm_exec_ticket(&young.exec)->stamp);
	assert_int_equal(actor_run(&a, act_exec_lock, &old), 0);

	assert_true(actor_post(&b, act_exec_lock, &young));
	/* Blocked on Y: in the slow path (Wait-Die) or holding X (W-W). */
	assert_true(wait_for_waiters(lock_of(f.bos[1]), 1));

	old.order = old_more;
	old.passes = 0;
	assert_int_equal(actor_run(&a, act_exec_lock, &old), 0);
	assert_int_equal(old.passes, 1);
	assert_true(actor_busy(&b));
	assert_int_equal(actor_run(&a, act_exec_fini, &old), 0);

	assert_true(actor_wait(&b));
	assert_int_equal(actor_ret(&b), 0);
	assert_int_equal(young.passes, 2);
	assert_true(young.stamps[0] == young.stamps[1]);
	assert_true(young.stamps[1] == ttm_exec_ticket(&young.exec)->stamp);
	/* The second pass started holding the contended Y, slow-locked. */
	assert_int_equal(young.first_locked[0], 0);
	assert_int_equal(young.first_locked[1], 1);
	assert_int_equal(ttm_exec_count(&young.exec), 2);
	ttm_exec_for_each_locked_bo(&young.exec, i, bo)
		assert_ptr_equal(bo, f.bos[i == 0 ? 1 : 0]);
	assert_int_equal(actor_run(&b, act_exec_fini, &young), 0);

	actor_stop(&a);
	actor_stop(&b);
	assert_checks_passed();
	fixture_fini(&f);
}

/* ---- drm_exec parity: unlock one, arrays, reverse order -------------- */

/*
 * An "eviction" with @exec's ticket backs off on @bo (an injected
 * -EDEADLK) and hands it to the helper, as bo_evict_one() does.
 */
static void evict_backoff(struct ttm_exec *exec, struct ttm_bo *bo)
{
	int ret;

	ww_debug_inject(7, 1);
	ret = ttm_bo_reserve(bo, false, false, ttm_exec_ticket(exec));
	ww_debug_inject(0, 0);
	assert_int_equal(ret, -EDEADLK);
	ttm_exec_set_contended(exec, bo);
}

/* Run one loop that only locks @bo; its result. */
static int lock_one(struct ttm_exec *exec, struct ttm_bo *bo)
{
	int ret = 0;

	ttm_exec_until_all_locked(exec) {
		ret = ttm_exec_lock_bo(exec, bo);
		ttm_exec_retry_on_contention(exec);
	}
	return ret;
}

/*
 * Unlocking one buffer: it leaves the list, the others keep their order,
 * its reference goes, and locking it again is an ordinary lock. A buffer
 * the helper does not hold is left alone.
 */
static void test_unlock_bo(void **state)
{
	static const int order[] = { 0, 1, 2, 3 };
	static const int after[] = { 0, 2, 3 }, again[] = { 0, 2, 3, 1 };
	struct ttm_exec exec;
	struct ttm_bo *extra;
	struct fixture f;
	int rets[4];

	fixture_init(&f, state);
	assert_int_equal(ttm_bo_create(f.dev, BO_SIZE, &sys_place, 0, &extra),
			 0);
	ttm_exec_init(&exec, f.dev, 0);
	assert_int_equal(lock_order(&exec, &f, order, 4, rets), 1);
	ttm_exec_unlock_bo(&exec, f.bos[1]);
	assert_false(ww_mutex_is_locked(lock_of(f.bos[1])));
	check_list(&exec, &f, after, 3);

	ttm_exec_unlock_bo(&exec, f.bos[1]);
	ttm_exec_unlock_bo(&exec, f.bos[5]);
	ttm_exec_unlock_bo(&exec, NULL);
	assert_false(ww_mutex_is_locked(lock_of(f.bos[5])));
	check_list(&exec, &f, after, 3);

	assert_int_equal(lock_one(&exec, f.bos[1]), 0);
	check_list(&exec, &f, again, 4);

	/* The helper's reference goes with the buffer. */
	assert_int_equal(lock_one(&exec, extra), 0);
	ttm_bo_put(extra);
	assert_int_equal(live_buffers(f.dev), NUM_BOS + 1);
	ttm_exec_unlock_bo(&exec, extra);
	assert_int_equal(live_buffers(f.dev), NUM_BOS);
	check_list(&exec, &f, again, 4);
	ttm_exec_done(&exec);
	ttm_exec_unlock_bo(&exec, f.bos[0]);
	ttm_exec_fini(&exec);
	assert_checks_passed();
	fixture_fini(&f);
}

/*
 * Unlocking the buffer a pass started with, slow-locked, before the body
 * claimed it: the body's lock then takes it for real. The same for the
 * buffer held for eviction only, which is then held no more.
 */
static void test_unlock_prelocked(void **state)
{
	struct ttm_exec exec;
	struct fixture f;
	int passes = 0, ret = 0;

	fixture_init(&f, state);
	ttm_exec_init(&exec, f.dev, 0);
	ttm_exec_until_all_locked(&exec) {
		passes++;
		if (passes == 2) {
			assert_ptr_equal(ttm_exec_locked_bo(&exec, 0),
					 f.bos[1]);
			ttm_exec_unlock_bo(&exec, f.bos[1]);
			assert_false(ww_mutex_is_locked(lock_of(f.bos[1])));
			assert_int_equal(ttm_exec_count(&exec), 0);
		}
		ret = ttm_exec_lock_bo(&exec, f.bos[0]);
		ttm_exec_retry_on_contention(&exec);
		assert_int_equal(ret, 0);
		if (passes == 1)
			ww_debug_inject(3, 1);
		ret = ttm_exec_lock_bo(&exec, f.bos[1]);
		ww_debug_inject(0, 0);
		ttm_exec_retry_on_contention(&exec);
		assert_int_equal(ret, 0);
	}
	assert_int_equal(passes, 2);
	assert_ptr_equal(ww_mutex_owner_ctx(lock_of(f.bos[1])),
			 ttm_exec_ticket(&exec));
	assert_ptr_equal(ttm_exec_locked_bo(&exec, 1), f.bos[1]);
	ttm_exec_fini(&exec);

	passes = 0;
	ttm_exec_init(&exec, f.dev, 0);
	ttm_exec_until_all_locked(&exec) {
		passes++;
		if (passes == 2) {
			assert_true(ttm_exec_is_evictable(&exec, f.bos[2]));
			ttm_exec_unlock_bo(&exec, f.bos[2]);
			assert_false(ttm_exec_is_evictable(&exec, f.bos[2]));
			assert_null(ttm_exec_evictable_bo(&exec, 0));
			assert_false(ww_mutex_is_locked(lock_of(f.bos[2])));
		}
		ret = ttm_exec_lock_bo(&exec, f.bos[0]);
		ttm_exec_retry_on_contention(&exec);
		assert_int_equal(ret, 0);
		if (passes == 1)
			evict_backoff(&exec, f.bos[2]);
		ttm_exec_retry_on_contention(&exec);
	}
	assert_int_equal(passes, 2);
	assert_int_equal(ttm_exec_count(&exec), 1);
	/* Unlocked, it is an ordinary buffer to lock. */
	assert_int_equal(lock_one(&exec, f.bos[2]), 0);
	assert_int_equal(ttm_exec_count(&exec), 2);
	ttm_exec_fini(&exec);
	assert_checks_passed();
	fixture_fini(&f);
}

/* Newest first; an empty helper runs no iteration. */
static void test_reverse(void **state)
{
	static const int order[] = { 3, 0, 5, 1 };
	struct ttm_exec exec;
	struct ttm_bo *bo;
	struct fixture f;
	unsigned int i, seen = 0;
	int rets[4];

	fixture_init(&f, state);
	ttm_exec_init(&exec, f.dev, 0);
	ttm_exec_for_each_locked_bo_reverse(&exec, i, bo)
		seen++;
	assert_int_equal(seen, 0);
	assert_int_equal(lock_order(&exec, &f, order, 4, rets), 1);
	ttm_exec_for_each_locked_bo_reverse(&exec, i, bo) {
		assert_int_equal(i, 3 - seen);
		assert_ptr_equal(bo, f.bos[order[3 - seen]]);
		seen++;
	}
	assert_int_equal(seen, 4);
	ttm_exec_fini(&exec);
	fixture_fini(&f);
}

/* Add @fence to every listed buffer; the checker's reports. */
static int add_to_each(struct ttm_exec *exec, struct ttm_fence *fence)
{
	struct ttm_bo *bo;
	unsigned int i;
	int reports = 0;

	ww_debug_set_handler(count_report, &reports);
	ttm_exec_for_each_locked_bo(exec, i, bo)
		ttm_resv_add_fence(ttm_bo_resv(bo), fence,
				   TTM_RESV_USAGE_WRITE);
	ww_debug_set_handler(NULL, NULL);
	return reports;
}

/*
 * An array is prepared in order and stops at the first error; a back-off
 * inside it restarts the loop, which prepares the whole array again.
 */
static void test_prepare_array(void **state)
{
	struct ttm_fence *fence;
	struct ttm_exec exec;
	struct ttm_bo *arr[3];
	struct fixture f;
	int passes = 0, ret = 0, ignore = 0;

	fixture_init(&f, state);
	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1,
					  &fence), 0);

	/* Each with a slot: the job's fence goes into every one. */
	arr[0] = f.bos[0];
	arr[1] = f.bos[1];
	ttm_exec_init(&exec, f.dev, 0);
	ttm_exec_until_all_locked(&exec) {
		ret = ttm_exec_prepare_array(&exec, arr, 2, 1);
		ttm_exec_retry_on_contention(&exec);
	}
	assert_int_equal(ret, 0);
	assert_int_equal(ttm_exec_count(&exec), 2);
	assert_int_equal(add_to_each(&exec, fence), 0);
	ttm_exec_fini(&exec);

	/* A repeat stops it; with TTM_EXEC_IGNORE_DUPLICATES it does not. */
	arr[0] = f.bos[2];
	arr[1] = f.bos[2];
	arr[2] = f.bos[3];
	for (ignore = 0; ignore < 2; ignore++) {
		ttm_exec_init(&exec, f.dev,
			      ignore ? TTM_EXEC_IGNORE_DUPLICATES : 0);
		ttm_exec_until_all_locked(&exec) {
			ret = ttm_exec_prepare_array(&exec, arr, 3, 1);
			ttm_exec_retry_on_contention(&exec);
		}
		assert_int_equal(ret, ignore ? 0 : -EALREADY);
		assert_int_equal(ttm_exec_count(&exec), ignore ? 2 : 1);
		assert_true(ww_mutex_is_locked(lock_of(f.bos[3])) == ignore);
		ttm_exec_fini(&exec);
	}

	/* A back-off at the second buffer: the array again, whole. */
	arr[0] = f.bos[4];
	arr[1] = f.bos[5];
	arr[2] = f.bos[6];
	ttm_exec_init(&exec, f.dev, 0);
	ttm_exec_until_all_locked(&exec) {
		passes++;
		if (passes == 1)
			ww_debug_inject(3, 1);
		ret = ttm_exec_prepare_array(&exec, arr, 3, 1);
		ww_debug_inject(0, 0);
		if (passes == 1) {
			assert_int_equal(ret, -EDEADLK);
			assert_int_equal(ttm_exec_count(&exec), 0);
		}
		ttm_exec_retry_on_contention(&exec);
	}
	assert_int_equal(ret, 0);
	assert_int_equal(passes, 2);
	assert_int_equal(ttm_exec_count(&exec), 3);
	assert_int_equal(add_to_each(&exec, fence), 0);
	ttm_exec_fini(&exec);

	ttm_fence_signal(fence, 0);
	ttm_fence_put(fence);
	assert_checks_passed();
	fixture_fini(&f);
}

/* ---- stress ----------------------------------------------------------- */

#define STRESS_BOS 32
#define STRESS_THREADS 4
#define STRESS_ITERS 4000
#define STRESS_MAX_SET 10

struct stress {
	struct ttm_device *dev;
	struct ttm_bo *bos[STRESS_BOS];
	unsigned long counter[STRESS_BOS];  /* under the buffer's lock */
	unsigned long expect[STRESS_THREADS][STRESS_BOS];
	unsigned long retries[STRESS_THREADS];
};

struct stress_thread {
	struct stress *s;
	int id;
};

static void *stress_main(void *arg)
{
	struct stress_thread *t = arg;
	struct stress *s = t->s;
	unsigned int seed = 0x5eed + (unsigned int)t->id, i;
	int order[STRESS_MAX_SET], n, passes, ret = 0;
	struct ttm_exec exec;
	struct ttm_bo *bo;

	for (int it = 0; it < STRESS_ITERS; it++) {
		/* A random set in random order; duplicates are allowed. */
		n = 1 + rand_r(&seed) % STRESS_MAX_SET;
		for (int k = 0; k < n; k++)
			order[k] = rand_r(&seed) % STRESS_BOS;

		ttm_exec_init(&exec, s->dev, TTM_EXEC_IGNORE_DUPLICATES);
		passes = 0;
		ttm_exec_until_all_locked(&exec) {
			passes++;
			for (int k = 0; k < n; k++) {
				ret = k & 1 ? ttm_exec_prepare_bo(&exec,
							s->bos[order[k]], 1)
					    : ttm_exec_lock_bo(&exec,
							s->bos[order[k]]);
				ttm_exec_retry_on_contention(&exec);
				if (!CHECK_INT(ret, 0))
					goto out;
			}
		}
		ttm_exec_done(&exec);
		s->retries[t->id] += (unsigned long)(passes - 1);
		ttm_exec_for_each_locked_bo(&exec, i, bo) {
			int b;

			for (b = 0; s->bos[b] != bo; b++)
				;
			s->counter[b]++;
			s->expect[t->id][b]++;
		}
out:
		ttm_exec_fini(&exec);
		if (ret)
			break;
	}
	return NULL;
}

static void test_stress(void **state)
{
	struct ttm_device_options opts = {
		.wound_wait = *(const bool *)*state,
	};
	struct stress_thread threads[STRESS_THREADS];
	pthread_t tids[STRESS_THREADS];
	unsigned long retries = 0;
	struct stress *s;

	s = calloc(1, sizeof(*s));
	assert_non_null(s);
	assert_int_equal(ttm_device_create(&opts, &s->dev), 0);
	for (int b = 0; b < STRESS_BOS; b++)
		assert_int_equal(ttm_bo_create(s->dev, BO_SIZE, &sys_place, 0,
					       &s->bos[b]), 0);

	ww_debug_inject(42, 8);
	for (int t = 0; t < STRESS_THREADS; t++) {
		threads[t] = (struct stress_thread){ s, t };
		tids[t] = start_thread(stress_main, &threads[t]);
	}
	for (int t = 0; t < STRESS_THREADS; t++)
		join_thread(tids[t]);
	ww_debug_inject(0, 0);
	assert_checks_passed();

	for (int b = 0; b < STRESS_BOS; b++) {
		unsigned long sum = 0;

		for (int t = 0; t < STRESS_THREADS; t++)
			sum += s->expect[t][b];
		assert_int_equal(s->counter[b], sum);
		assert_false(ww_mutex_is_locked(lock_of(s->bos[b])));
		ttm_bo_put(s->bos[b]);
	}
	for (int t = 0; t < STRESS_THREADS; t++)
		retries += s->retries[t];
	print_message("%lu retries\n", retries);
	assert_true(retries > 0);
	assert_int_equal(ttm_device_destroy(s->dev), 0);
	free(s);
}

/* ---- eviction back-off ------------------------------------------------ */

/*
 * Validation contends on a buffer nobody holds (an injected back-off):
 * ttm_exec_set_contended() drops everything, the next pass starts with
 * that buffer slow-locked and evictable, listed apart from the body's
 * buffers, and fini unlocks it. Locking it in the body makes it one of
 * the caller's: listed, after those the body locked before it.
 */
static void test_set_contended(void **state)
{
	struct fixture f;
	struct ttm_exec exec;
	struct ww_acquire_ctx *ticket;
	int passes = 0, ret = 0;
	bool claim;

	fixture_init(&f, state);
	for (int round = 0; round < 2; round++) {
		claim = round == 1;
		passes = 0;
		ttm_exec_init(&exec, f.dev, 0);
		ticket = ttm_exec_ticket(&exec);
		ttm_exec_until_all_locked(&exec) {
			passes++;
			if (passes == 2) {
				/* Slow-locked first, before the body asks. */
				assert_int_equal(ttm_exec_count(&exec), 0);
				assert_null(ttm_exec_locked_bo(&exec, 0));
				assert_ptr_equal(ttm_exec_evictable_bo(&exec,
								       0),
						 f.bos[2]);
				assert_null(ttm_exec_evictable_bo(&exec, 1));
				assert_ptr_equal(ww_mutex_owner_ctx(
						lock_of(f.bos[2])), ticket);
				assert_true(ttm_exec_is_evictable(&exec,
								  f.bos[2]));
				assert_false(ttm_exec_is_evictable(&exec,
								   f.bos[0]));
			}
			ret = ttm_exec_lock_bo(&exec, f.bos[0]);
			ttm_exec_retry_on_contention(&exec);
			assert_int_equal(ret, 0);
			ret = ttm_exec_lock_bo(&exec, f.bos[1]);
			ttm_exec_retry_on_contention(&exec);
			assert_int_equal(ret, 0);
			if (claim && passes == 2) {
				assert_int_equal(
					ttm_exec_lock_bo(&exec, f.bos[2]), 0);
				assert_false(ttm_exec_is_evictable(&exec,
								   f.bos[2]));
				assert_null(ttm_exec_evictable_bo(&exec, 0));
				assert_ptr_equal(ttm_exec_locked_bo(&exec, 2),
						 f.bos[2]);
			}
			if (passes == 1) {
				evict_backoff(&exec, f.bos[2]);
				assert_true(ttm_exec_is_contended(&exec));
				assert_int_equal(ttm_exec_count(&exec), 0);
				assert_false(ww_mutex_is_locked(
						lock_of(f.bos[0])));
			}
			ttm_exec_retry_on_contention(&exec);
		}
		assert_int_equal(passes, 2);
		/* Counted only once the body locked it. */
		assert_int_equal(ttm_exec_count(&exec), claim ? 3 : 2);
		assert_true(ttm_exec_is_evictable(&exec, f.bos[2]) == !claim);
		ttm_exec_done(&exec);
		ttm_exec_fini(&exec);
		assert_false(ww_mutex_is_locked(lock_of(f.bos[2])));
	}
	fixture_fini(&f);
}

/* The same, contending for real on a buffer an older ticket holds. */
static int act_lock_then_fini(struct actor *a, void *arg)
{
	int ret = act_exec_lock(a, arg);

	if (!ret)
		ret = act_exec_fini(a, arg);
	return ret;
}

static void test_set_contended_held(void **state)
{
	static const int hold[] = { 2 }, want[] = { 0 };
	struct exec_job old = { .order = hold, .n = 1 };
	struct ww_acquire_ctx *ticket;
	struct ttm_exec exec;
	struct fixture f;
	struct actor a;
	int passes = 0, ret;

	fixture_init(&f, state);
	old.f = &f;
	actor_start(&a, NULL);
	assert_int_equal(actor_run(&a, act_exec_init, &old), 0);
	assert_int_equal(actor_run(&a, act_exec_lock, &old), 0);

	ttm_exec_init(&exec, f.dev, 0);
	ticket = ttm_exec_ticket(&exec);
	ttm_exec_until_all_locked(&exec) {
		passes++;
		ret = ttm_exec_lock_bo(&exec, f.bos[0]);
		ttm_exec_retry_on_contention(&exec);
		assert_int_equal(ret, 0);
		if (passes == 1) {
			/* The older asks for ours: it waits, or wounds us. */
			old.order = want;
			assert_true(actor_post(&a, act_lock_then_fini, &old));
			assert_true(wait_for_waiters(lock_of(f.bos[0]), 1));
			ret = ttm_bo_reserve(f.bos[2], false, false, ticket);
			assert_int_equal(ret, -EDEADLK);
			ttm_exec_set_contended(&exec, f.bos[2]);
			/* Our buffer is free: the older finishes. */
			assert_true(actor_wait(&a));
			assert_int_equal(actor_ret(&a), 0);
		}
		ttm_exec_retry_on_contention(&exec);
	}
	assert_int_equal(passes, 2);
	/* Held for eviction only: not among the body's buffers. */
	assert_int_equal(ttm_exec_count(&exec), 1);
	assert_ptr_equal(ttm_exec_locked_bo(&exec, 0), f.bos[0]);
	assert_ptr_equal(ttm_exec_evictable_bo(&exec, 0), f.bos[2]);
	assert_true(ttm_exec_is_evictable(&exec, f.bos[2]));
	ttm_exec_fini(&exec);
	assert_false(ww_mutex_is_locked(lock_of(f.bos[2])));

	actor_stop(&a);
	assert_checks_passed();
	fixture_fini(&f);
}

/*
 * The kernel's idiom once everything is locked and validated: the job's
 * fence goes into every buffer the helper lists. Under memory pressure
 * plus contention, the eviction backs off on a buffer an older ticket
 * holds; the next pass slow-locks it for eviction only, with no fence
 * slot reserved by anyone. It must not be listed: the idiom would add a
 * fence without a slot (reported, and refused, by the checker). Both
 * classes: the older asks for our buffer, so that Wait-Die kills our
 * eviction's reservation and Wound-Wait wounds it.
 */
static void test_job_fence_after_evict_backoff(void **state)
{
	static const int hold[] = { 0 }, want[] = { 1 };
	struct exec_job old = { .order = hold, .n = 1 };
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_bo *victim, *mine, *bo;
	struct ttm_fence *job;
	struct ttm_exec exec;
	struct fixture f;
	struct actor a;
	int passes = 0, reports = 0, ret = 0;
	unsigned int i, listed = 0, held = 0, count;

	fixture_init_vram(&f, state);
	victim = f.bos[0];
	mine = f.bos[1];
	old.f = &f;
	actor_start(&a, NULL);
	assert_int_equal(actor_run(&a, act_exec_init, &old), 0);
	assert_int_equal(actor_run(&a, act_exec_lock, &old), 0);

	ttm_exec_init(&exec, f.dev, 0);
	ctx.exec = &exec;
	ttm_exec_until_all_locked(&exec) {
		passes++;
		ret = ttm_exec_prepare_bo(&exec, mine, 1);
		ttm_exec_retry_on_contention(&exec);
		assert_int_equal(ret, 0);
		if (passes == 1) {
			old.order = want;
			assert_true(actor_post(&a, act_lock_then_fini, &old));
			assert_true(wait_for_waiters(lock_of(mine), 1));
		}
		ret = ttm_bo_validate(mine, &vram_only, &ctx);
		if (passes == 1)
			assert_int_equal(ret, -EDEADLK);
		ttm_exec_retry_on_contention(&exec);
		assert_int_equal(ret, 0);
	}
	assert_int_equal(passes, 2);
	ttm_exec_done(&exec);
	/* The victim is held, for eviction only, and went to GTT. */
	assert_ptr_equal(ww_mutex_owner_ctx(lock_of(victim)),
			 ttm_exec_ticket(&exec));
	assert_true(ttm_exec_is_evictable(&exec, victim));
	assert_int_equal(ttm_bo_domain(victim), TTM_DOMAIN_GTT);
	assert_int_equal(ttm_bo_domain(mine), TTM_DOMAIN_VRAM);

	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1, &job),
			 0);
	ww_debug_set_handler(count_report, &reports);
	ttm_exec_for_each_locked_bo(&exec, i, bo) {
		ttm_resv_add_fence(ttm_bo_resv(bo), job,
				   TTM_RESV_USAGE_WRITE);
		listed++;
	}
	ww_debug_set_handler(NULL, NULL);
	count = ttm_exec_count(&exec);
	ttm_exec_for_each_evictable_bo(&exec, i, bo) {
		assert_ptr_equal(bo, victim);
		held++;
	}
	assert_int_equal(held, 1);
	ttm_exec_fini(&exec);
	assert_false(ww_mutex_is_locked(lock_of(victim)));

	assert_true(actor_wait(&a));
	assert_int_equal(actor_ret(&a), 0);
	actor_stop(&a);
	ttm_fence_signal(job, 0);
	ttm_fence_put(job);
	assert_checks_passed();
	fixture_fini(&f);
	/* Checked last: a failure here leaves nothing behind. */
	assert_int_equal(reports, 0);
	assert_int_equal(listed, 1);
	assert_int_equal(count, 1);
}

/* ---- a job's buffer list --------------------------------------------- */

/*
 * Folding: the distinct buffers first, in list order, each from its first
 * entry (placement) and written if any entry writes; the repeats after
 * them, in list order; the first repeat's position.
 */
static void test_entries_fold(void **state)
{
	static const struct ttm_placement other = TTM_PLACEMENT_GTT_INIT;
	static const int order[] = { 3, 0, 5, 0, 3, 1 };
	static const bool write[] = { false, false, true, true, false, false };
	static const unsigned int kept[] = { 0, 1, 2, 5 }, folded[] = { 3, 4 };
	struct ttm_exec_entry e[6];
	unsigned int i, n, dup = 0;
	struct fixture f;

	fixture_init(&f, state);
	for (i = 0; i < 6; i++)
		e[i] = (struct ttm_exec_entry){
			.bo = f.bos[order[i]],
			.placement = i == 4 ? &other : NULL,
			.index = 99,
			.write = write[i],
		};
	n = ttm_exec_entries_fold(e, 6, &dup);
	assert_int_equal(n, 4);
	assert_int_equal(dup, 3);
	for (i = 0; i < 4; i++) {
		assert_int_equal(e[i].index, kept[i]);
		assert_ptr_equal(e[i].bo, f.bos[order[kept[i]]]);
		assert_null(e[i].placement);
	}
	assert_false(e[0].write);
	assert_true(e[1].write);   /* its repeat writes */
	assert_true(e[2].write);
	assert_false(e[3].write);
	for (i = 0; i < 2; i++) {
		assert_int_equal(e[4 + i].index, folded[i]);
		assert_ptr_equal(e[4 + i].bo, f.bos[order[folded[i]]]);
	}
	assert_ptr_equal(e[5].placement, &other);

	/* No repeat: the list as it was, each at its place. */
	for (i = 0; i < 4; i++)
		e[i] = (struct ttm_exec_entry){ .bo = f.bos[7 - i] };
	assert_int_equal(ttm_exec_entries_fold(e, 4, &dup), 4);
	assert_int_equal(dup, 4);
	for (i = 0; i < 4; i++) {
		assert_ptr_equal(e[i].bo, f.bos[7 - i]);
		assert_int_equal(e[i].index, i);
	}
	/* Short lists are checked pairwise first: a repeat at the ends. */
	for (i = 0; i < 5; i++)
		e[i] = (struct ttm_exec_entry){ .bo = f.bos[i == 4 ? 0 : i] };
	assert_int_equal(ttm_exec_entries_fold(e, 5, &dup), 4);
	assert_int_equal(dup, 4);
	assert_int_equal(e[4].index, 4);
	assert_ptr_equal(e[4].bo, f.bos[0]);
	assert_int_equal(ttm_exec_entries_fold(e, 1, NULL), 1);
	assert_int_equal(ttm_exec_entries_fold(e, 0, &dup), 0);
	assert_int_equal(dup, 0);
	fixture_fini(&f);
}

/*
 * Lock @e with a slot each, then validate them one by one with
 * ttm_bo_validate(), or @whole with ttm_exec_entries_validate().
 */
static int validate_job(struct fixture *f, struct ttm_exec_entry *e,
			unsigned int n, bool whole, unsigned int *ret_failed)
{
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_exec exec;
	unsigned int i;
	int ret = 0;

	ttm_exec_init(&exec, f->dev, 0);
	ctx.exec = &exec;
	ttm_exec_until_all_locked(&exec) {
		for (i = 0; i < n; i++) {
			ret = ttm_exec_prepare_bo(&exec, e[i].bo, 1);
			ttm_exec_retry_on_contention(&exec);
			assert_int_equal(ret, 0);
		}
		for (i = 0; i < n && !whole && !ret; i++) {
			ret = ttm_bo_validate(e[i].bo, e[i].placement, &ctx);
			ttm_exec_retry_on_contention(&exec);
		}
		if (whole) {
			ret = ttm_exec_entries_validate(e, n, &ctx,
							ret_failed);
			ttm_exec_retry_on_contention(&exec);
		}
	}
	ttm_exec_done(&exec);
	ttm_exec_fini(&exec);
	assert_dev_ok(f->dev);
	return ret;
}

/*
 * VRAM is full of the job's own VRAM-or-GTT buffer when its VRAM-only
 * buffer comes: ttm_bo_validate() alone says -ENOSPC (eviction never takes
 * the job's buffers), the job's list validated as a whole moves the first
 * to GTT. A job that can never fit, or names a bad placement, fails at
 * the entry concerned.
 */
static void test_entries_validate(void **state)
{
	static const struct ttm_placement none = { 0 };
	struct ttm_exec_entry e[2];
	unsigned int failed = 99;
	struct fixture f;

	fixture_init_vram(&f, state);
	e[0] = (struct ttm_exec_entry){ f.bos[0], &vram_gtt, 0, false };
	e[1] = (struct ttm_exec_entry){ f.bos[1], &vram_only, 0, false };
	assert_int_equal(validate_job(&f, e, 2, false, NULL), -ENOSPC);
	assert_int_equal(ttm_bo_domain(f.bos[1]), TTM_DOMAIN_SYSTEM);

	assert_int_equal(validate_job(&f, e, 2, true, &failed), 0);
	assert_int_equal(failed, 99);
	assert_int_equal(ttm_bo_domain(f.bos[0]), TTM_DOMAIN_GTT);
	assert_int_equal(ttm_bo_domain(f.bos[1]), TTM_DOMAIN_VRAM);

	/* Both VRAM-only: 20 KiB into 16 can never fit. */
	e[0].placement = &vram_only;
	assert_int_equal(validate_job(&f, e, 2, true, &failed), -ENOSPC);
	assert_int_equal(failed, 0);

	e[0].placement = &vram_gtt;
	e[1].placement = &none;
	assert_int_equal(validate_job(&f, e, 2, true, &failed), -EINVAL);
	assert_int_equal(failed, 1);
	assert_checks_passed();
	fixture_fini(&f);
}

/* ---- interrupts ------------------------------------------------------- */

/* Blocked in an ordinary lock: -EINTR only with TTM_EXEC_INTERRUPTIBLE. */
static void test_interrupt_lock(void **state)
{
	static const int order[] = { 0, 1 };
	struct exec_job job = { .order = order, .n = 2 };
	struct fixture f;
	struct actor b;

	fixture_init(&f, state);
	job.f = &f;
	actor_start(&b, NULL);
	for (int intr = 1; intr >= 0; intr--) {
		job.flags = intr ? TTM_EXEC_INTERRUPTIBLE : 0;
		job.passes = 0;
		assert_int_equal(ttm_bo_reserve(f.bos[1], false, false, NULL),
				 0);
		assert_int_equal(actor_run(&b, act_exec_init, &job), 0);
		assert_true(actor_post(&b, act_exec_lock, &job));
		assert_true(wait_for_waiters(lock_of(f.bos[1]), 1));
		assert_int_equal(ttm_interrupt_thread(b.thread), 0);
		if (intr) {
			assert_true(actor_wait(&b));
			assert_int_equal(actor_ret(&b), -EINTR);
			assert_int_equal(ttm_exec_count(&job.exec), 1);
			ttm_bo_unreserve(f.bos[1]);
		} else {
			/* Ignored: the lock comes once we let it go. */
			ttm_bo_unreserve(f.bos[1]);
			assert_true(actor_wait(&b));
			assert_int_equal(actor_ret(&b), 0);
			assert_int_equal(ttm_exec_count(&job.exec), 2);
			assert_int_equal(actor_run(&b, act_interrupt_clear,
						   NULL), 1);
		}
		assert_int_equal(job.passes, 1);
		assert_int_equal(actor_run(&b, act_exec_fini, &job), 0);
	}
	actor_stop(&b);
	assert_checks_passed();
	fixture_fini(&f);
}

/*
 * Blocked in the slow path at the start of the second pass: the next lock
 * call reports -EINTR and nothing is held.
 */
static void test_interrupt_slowpath(void **state)
{
	static const int order[] = { 0, 1, 2 };
	struct exec_job job = {
		.order = order, .n = 3, .inject = true,
		.flags = TTM_EXEC_INTERRUPTIBLE,
	};
	struct fixture f;
	struct actor b;

	fixture_init(&f, state);
	job.f = &f;
	actor_start(&b, NULL);
	assert_int_equal(ttm_bo_reserve(f.bos[1], false, false, NULL), 0);
	assert_int_equal(actor_run(&b, act_exec_init, &job), 0);
	assert_true(actor_post(&b, act_exec_lock, &job));
	assert_true(wait_for_waiters(lock_of(f.bos[1]), 1));
	assert_int_equal(ttm_interrupt_thread(b.thread), 0);
	assert_true(actor_wait(&b));
	assert_int_equal(actor_ret(&b), -EINTR);
	assert_int_equal(job.passes, 2);
	/* What every lock of the pass returns, readable without a lock. */
	assert_int_equal(ttm_exec_error(&job.exec), -EINTR);
	assert_int_equal(ttm_exec_count(&job.exec), 0);
	assert_false(ww_mutex_is_locked(lock_of(f.bos[0])));
	assert_int_equal(actor_run(&b, act_exec_fini, &job), 0);
	ttm_bo_unreserve(f.bos[1]);
	actor_stop(&b);
	assert_checks_passed();
	fixture_fini(&f);
}

/* ---- fence slots ------------------------------------------------------ */

static void test_prepare(void **state)
{
	struct ttm_fence *fence[3];
	struct ttm_fence **got;
	struct ttm_exec exec;
	unsigned int count;
	struct fixture f;
	uint64_t ctx = ttm_fence_context_alloc(3);
	int reports = 0, ret0 = 0, ret1 = 0;

	fixture_init(&f, state);
	for (int i = 0; i < 3; i++)
		assert_int_equal(ttm_fence_create(ctx + i, 1, &fence[i]), 0);

	ttm_exec_init(&exec, f.dev, 0);
	ttm_exec_until_all_locked(&exec) {
		ret0 = ttm_exec_prepare_bo(&exec, f.bos[0], 2);
		ttm_exec_retry_on_contention(&exec);
		ret1 = ttm_exec_lock_bo(&exec, f.bos[1]);
		ttm_exec_retry_on_contention(&exec);
	}
	assert_int_equal(ret0, 0);
	assert_int_equal(ret1, 0);
	ttm_exec_done(&exec);

	ww_debug_set_handler(count_report, &reports);
	ttm_resv_add_fence(ttm_bo_resv(f.bos[0]), fence[0],
			   TTM_RESV_USAGE_WRITE);
	ttm_resv_add_fence(ttm_bo_resv(f.bos[0]), fence[1],
			   TTM_RESV_USAGE_READ);
	assert_int_equal(reports, 0);
	/* Only locked, no slot: the add is reported and refused. */
	ttm_resv_add_fence(ttm_bo_resv(f.bos[1]), fence[2],
			   TTM_RESV_USAGE_WRITE);
	assert_int_equal(reports, 1);
	ww_debug_set_handler(NULL, NULL);

	assert_int_equal(ttm_resv_get_fences(ttm_bo_resv(f.bos[0]),
					     TTM_RESV_USAGE_BOOKKEEP, &got,
					     &count), 0);
	assert_int_equal(count, 2);
	for (unsigned int i = 0; i < count; i++)
		ttm_fence_put(got[i]);
	free(got);
	ttm_exec_fini(&exec);

	for (int i = 0; i < 3; i++) {
		ttm_fence_signal(fence[i], 0);
		ttm_fence_put(fence[i]);
	}
	fixture_fini(&f);
}

/* Locking on after -EDEADLK without the retry is refused, not a ww bug. */
static void test_lock_after_contention(void **state)
{
	struct fixture f;
	struct ttm_exec exec;
	int passes = 0, ret = 0, again = 0;

	fixture_init(&f, state);
	ttm_exec_init(&exec, f.dev, 0);
	ttm_exec_until_all_locked(&exec) {
		passes++;
		ret = ttm_exec_lock_bo(&exec, f.bos[0]);
		ttm_exec_retry_on_contention(&exec);
		if (passes == 1)
			ww_debug_inject(3, 1);
		ret = ttm_exec_lock_bo(&exec, f.bos[1]);
		ww_debug_inject(0, 0);
		if (passes == 1) {
			assert_int_equal(ret, -EDEADLK);
			again = ttm_exec_lock_bo(&exec, f.bos[2]);
		}
		ttm_exec_retry_on_contention(&exec);
	}
	assert_int_equal(again, -EDEADLK);
	assert_int_equal(ret, 0);
	assert_int_equal(passes, 2);
	assert_ptr_equal(ttm_exec_locked_bo(&exec, 0), f.bos[1]);
	assert_int_equal(ttm_exec_count(&exec), 2);
	ttm_exec_fini(&exec);
	fixture_fini(&f);
}

/* ---- fini: the LRU, and the references the caller lends -------------- */

/* The last @n buffers of @dev's SYSTEM LRU, tail last, into @tail. */
static void lru_tail(struct ttm_device *dev, struct ttm_bo **tail, int n)
{
	struct ttm_bo *all[2 * NUM_BOS];
	long len = lru_order(dev, TTM_DOMAIN_SYSTEM, all, 2 * NUM_BOS);

	assert_true(len >= n);
	for (int i = 0; i < n; i++)
		tail[i] = all[len - n + i];
}

/*
 * ttm_exec_fini() moves every buffer to its LRU's tail in one device
 * lock round trip (bo_unreserve_list_at()): in the order one unreserve
 * per buffer, newest first, gave, so the first one locked ends at the
 * tail; and a buffer unlocked alone before fini (ttm_exec_unlock_bo())
 * went to the tail then, ahead of the others.
 */
static void test_fini_lru_order(void **state)
{
	static const int order[] = { 3, 0, 5, 1, 6 };
	static const int expect[] = { 6, 1, 5, 0, 3 };
	struct ttm_bo *tail[5];
	struct ttm_exec exec;
	struct fixture f;
	int rets[5];

	fixture_init(&f, state);
	ttm_exec_init(&exec, f.dev, 0);
	assert_int_equal(lock_order(&exec, &f, order, 5, rets), 1);
	/* Unlocked alone: to the tail at once, passed by the others. */
	ttm_exec_unlock_bo(&exec, f.bos[6]);
	ttm_exec_fini(&exec);
	lru_tail(f.dev, tail, 5);
	for (int i = 0; i < 5; i++)
		assert_ptr_equal(tail[i], f.bos[expect[i]]);
	fixture_fini(&f);
}

/*
 * One ticket over the buffers of two devices of the shared Wait-Die
 * class, interleaved: fini unlocks each device's run under that device's
 * lock, and each LRU gets its own buffers in single-unreserve order.
 */
static void test_fini_two_devices(void **state)
{
	struct ttm_bo *tail[3];
	struct fixture f, g;
	struct ttm_exec exec;
	int ret = 0;

	fixture_init(&f, state);
	fixture_init(&g, state);
	ttm_exec_init(&exec, f.dev, 0);
	ttm_exec_until_all_locked(&exec) {
		struct ttm_bo *bos[] = { f.bos[0], g.bos[2], g.bos[1],
					 f.bos[2], f.bos[1], g.bos[0] };

		for (int i = 0; i < 6; i++) {
			ret = ttm_exec_lock_bo(&exec, bos[i]);
			ttm_exec_retry_on_contention(&exec);
			assert_int_equal(ret, 0);
		}
	}
	ttm_exec_fini(&exec);
	lru_tail(f.dev, tail, 3);
	assert_ptr_equal(tail[0], f.bos[1]);
	assert_ptr_equal(tail[1], f.bos[2]);
	assert_ptr_equal(tail[2], f.bos[0]);
	lru_tail(g.dev, tail, 3);
	assert_ptr_equal(tail[0], g.bos[0]);
	assert_ptr_equal(tail[1], g.bos[1]);
	assert_ptr_equal(tail[2], g.bos[2]);
	fixture_fini(&g);  /* each checks its buffers unlocked */
	fixture_fini(&f);
}

static int refs(struct ttm_bo *bo)
{
	return __atomic_load_n(&bo->refcount, __ATOMIC_RELAXED);
}

/*
 * TTM_EXEC_CALLER_REFS: the helper takes no reference on the buffers it
 * lists, whichever way they got there (a lock, the slow lock after a
 * back-off, the claim of an evictable buffer); a contended or evictable
 * buffer keeps one while it is that (an eviction victim is nobody's), and
 * nothing is left over at fini. Without the flag each listed buffer has
 * one more.
 */
static void test_caller_refs(void **state)
{
	struct fixture f;
	struct ttm_exec exec;
	int base, passes, ret = 0;

	fixture_init(&f, state);
	base = refs(f.bos[0]);
	for (int flag = 0; flag < 2; flag++) {
		int listed = base + (flag ? 0 : 1);

		passes = 0;
		ttm_exec_init(&exec, f.dev, flag ? TTM_EXEC_CALLER_REFS : 0);
		ttm_exec_until_all_locked(&exec) {
			passes++;
			if (passes == 2) {
				/* Slow-locked: listed; its back-off's gone. */
				assert_int_equal(refs(f.bos[1]), listed);
			} else if (passes == 3) {
				/* Evictable: @exec's own reference. */
				assert_int_equal(refs(f.bos[2]), base + 1);
			}
			ret = ttm_exec_lock_bo(&exec, f.bos[0]);
			ttm_exec_retry_on_contention(&exec);
			assert_int_equal(ret, 0);
			assert_int_equal(refs(f.bos[0]), listed);
			if (passes == 1)
				ww_debug_inject(1, 1);
			ret = ttm_exec_lock_bo(&exec, f.bos[1]);
			ww_debug_inject(0, 0);
			if (passes == 1) {
				assert_int_equal(ret, -EDEADLK);
				/* Contended: @exec's own reference. */
				assert_int_equal(refs(f.bos[1]), base + 1);
				assert_int_equal(refs(f.bos[0]), base);
			}
			ttm_exec_retry_on_contention(&exec);
			assert_int_equal(ret, 0);
			assert_int_equal(refs(f.bos[1]), listed);
			if (passes == 2) {
				evict_backoff(&exec, f.bos[2]);
				assert_int_equal(refs(f.bos[2]), base + 1);
				assert_int_equal(refs(f.bos[0]), base);
				assert_int_equal(refs(f.bos[1]), base);
				ttm_exec_retry_on_contention(&exec);
			}
			/* The evictable one claimed: the body's now. */
			assert_int_equal(ttm_exec_lock_bo(&exec, f.bos[2]), 0);
			assert_int_equal(refs(f.bos[2]), listed);
		}
		assert_int_equal(passes, 3);
		assert_int_equal(ttm_exec_count(&exec), 3);
		ttm_exec_unlock_bo(&exec, f.bos[0]);
		assert_int_equal(refs(f.bos[0]), base);
		assert_int_equal(refs(f.bos[1]), listed);
		ttm_exec_fini(&exec);
		for (int i = 0; i < NUM_BOS; i++)
			assert_int_equal(refs(f.bos[i]), base);
	}
	fixture_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		CLASS_TESTS(test_duplicates),
		CLASS_TESTS(test_references),
		CLASS_TESTS(test_contention),
		CLASS_TESTS(test_unlock_bo),
		CLASS_TESTS(test_unlock_prelocked),
		CLASS_TESTS(test_reverse),
		CLASS_TESTS(test_prepare_array),
		CLASS_TESTS(test_entries_fold),
		CLASS_TESTS(test_entries_validate),
		CLASS_TESTS(test_stress),
		CLASS_TESTS(test_set_contended),
		CLASS_TESTS(test_set_contended_held),
		CLASS_TESTS(test_job_fence_after_evict_backoff),
		CLASS_TESTS(test_interrupt_lock),
		CLASS_TESTS(test_interrupt_slowpath),
		CLASS_TESTS(test_prepare),
		CLASS_TESTS(test_lock_after_contention),
		CLASS_TESTS(test_fini_lru_order),
		cmocka_unit_test_prestate_setup_teardown(
			test_fini_two_devices, checks_reset, NULL,
			(void *)&wound_wait_false),
		CLASS_TESTS(test_caller_refs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
