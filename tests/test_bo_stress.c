// SPDX-License-Identifier: MIT
/*
 * A randomized multi-threaded run of the whole buffer layer:
 * threads lock random sets of buffers with the locking helper (random
 * order, duplicates with and without TTM_EXEC_IGNORE_DUPLICATES), validate
 * them into a small VRAM inside the helper's loop (evicting under its
 * ticket, backing off on -EDEADLK), and submit an add job per set on a
 * real-time fake GPU of three engines, ordered after the buffers' fences,
 * through entities of the device's schedulers (ttm_device_sched()).
 *
 * After every operation the device's accounting invariant must hold
 * (ttm_device_check()), while moves and jobs are in flight. At the end
 * every buffer must hold, in each 32-bit word, the sum of the values the
 * jobs added to it: no move lost or reordered an add. Eviction and moves
 * must have happened; -ENOSPC cannot, since any set fits in VRAM beside
 * the pinned buffer. Both classes, with and without injected back-offs.
 *
 * A case runs for a time or an iteration budget: about 0.5 s with --short
 * (the default), about 15 s with --long. TTMSIM_SEED=n replays a seed (as
 * far as threads and real time allow).
 *
 * It found two library bugs, both fixed: ttm_device_check() failed while
 * a move was being set up (the room was taken before the buffer was
 * switched), and a move during validation used up the fence slot of
 * ttm_exec_prepare_bo() (the add below then broke rule 11).
 */
#include <inttypes.h>
#include <stdlib.h>

#include "lib/bo_helpers.h"

#include "ttmsim/bo.h"
#include "ttmsim/exec.h"
#include "ttmsim/gpu.h"
#include "ttmsim/resv.h"
#include "ttmsim/sched.h"

#define NUM_BOS 36
#define NUM_THREADS 4
#define MAX_SET 6
#define MAX_BO_SIZE (12 * KiB)
#define ENGINES 3
#define MAX_DURATION_US 50

static long run_ns = 500 * 1000000L;
static unsigned long max_iterations = 20000;
static unsigned int seed;

struct stress {
	struct ttm_gpu *gpu;
	struct ttm_device *dev;
	struct ttm_bo *bos[NUM_BOS];
	const struct ttm_placement *place[NUM_BOS];
	long end_ns;
};

struct worker {
	struct stress *s;
	unsigned int id;
	uint32_t rng;
	uint32_t expect[NUM_BOS];	/* sums this worker's jobs added */
	/* Its queues on the device's rings, as a driver's context. */
	struct ttm_sched_entity *entity[ENGINES];
	unsigned long jobs, backoffs, enospc, dups;
};

static uint32_t rnd(struct worker *w)
{
	return xorshift32(&w->rng);
}

/*
 * Submit one add of @value on the buffers @bos, each locked by the caller
 * and validated, after every fence of theirs.
 */
static bool submit_add(struct worker *w, struct ttm_bo **bos, unsigned int n,
		       uint32_t value)
{
	struct ttm_gpu_range ranges[MAX_SET];
	struct ttm_gpu_dep *deps = NULL;
	struct ttm_fence **fences[MAX_SET] = { NULL };
	unsigned int counts[MAX_SET] = { 0 }, n_deps = 0, i, j;
	struct ttm_gpu_job job = {
		.engine = rnd(w) % ENGINES,
		.duration_us = rnd(w) % (MAX_DURATION_US + 1),
		.op = TTM_GPU_OP_ADD,
		.add_value = value,
		.ranges = ranges,
		.n_ranges = n,
		.tag = w->id,
	};
	struct ttm_fence *fence = NULL;
	bool ok = true;
	int ret;

	for (i = 0; i < n; i++) {
		/* The slot of ttm_exec_prepare_bo() is still ours. */
		ret = ttm_resv_get_fences(ttm_bo_resv(bos[i]),
					  TTM_RESV_USAGE_BOOKKEEP,
					  &fences[i], &counts[i]);
		if (!CHECK_INT(ret, 0))
			goto out;
		n_deps += counts[i];
		ttm_bo_gpu_range(bos[i], &ranges[i]);
	}
	if (n_deps) {
		deps = calloc(n_deps, sizeof(*deps));
		if (!CHECK(deps))
			goto out;
	}
	n_deps = 0;
	for (i = 0; i < n; i++)
		for (j = 0; j < counts[i]; j++)
			deps[n_deps++] = (struct ttm_gpu_dep){ fences[i][j],
							       false };
	job.deps = deps;
	job.n_deps = n_deps;
	/*
	 * Through the device's scheduler: the moves' fences are among the
	 * deps, and a direct ttm_gpu_submit() waiting for a move that has
	 * not reached the engine yet would stop the engine ahead of it.
	 */
	ret = ttm_sched_gpu_submit(w->entity[job.engine], &job, &fence);
	if (!CHECK_INT(ret, 0))
		goto out;
	for (i = 0; i < n; i++)
		ttm_resv_add_fence(ttm_bo_resv(bos[i]), fence,
				   TTM_RESV_USAGE_WRITE);
	ttm_fence_put(fence);
	ok = check_dev_ok(w->s->dev, "after submit");
out:
	for (i = 0; i < n; i++) {
		for (j = 0; j < counts[i]; j++)
			ttm_fence_put(fences[i][j]);
		free(fences[i]);
	}
	free(deps);
	return ok && fence;
}

static unsigned int index_of(struct stress *s, struct ttm_bo *bo)
{
	unsigned int b;

	for (b = 0; s->bos[b] != bo; b++)
		;
	return b;
}

static bool in_placement(struct ttm_bo *bo,
			 const struct ttm_placement *placement)
{
	unsigned int i;

	for (i = 0; i < placement->count; i++)
		if (ttm_bo_domain(bo) == placement->places[i].domain)
			return true;
	return false;
}

/* One transaction; false to stop the worker (a failed check). */
static bool one_job(struct worker *w)
{
	struct stress *s = w->s;
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_bo *set[MAX_SET], *uniq[MAX_SET];
	unsigned int order[MAX_SET], n, n_uniq = 0, i, k, b, passes = 0;
	bool ignore_dups = rnd(w) & 1, dup, ok = true;
	uint32_t value = rnd(w) | 1;
	struct ttm_exec exec;
	struct ttm_bo *bo;
	int ret = 0;

	/* 2..MAX_SET buffers in random order, a duplicate now and then. */
	n = 2 + rnd(w) % (MAX_SET - 1);
	for (i = 0; i < n; i++) {
		order[i] = rnd(w) % NUM_BOS;
		if (i && rnd(w) % 4 == 0)
			order[i] = order[rnd(w) % i];
		set[i] = s->bos[order[i]];
	}

	ttm_exec_init(&exec, s->dev, ignore_dups ? TTM_EXEC_IGNORE_DUPLICATES
						 : 0);
	ctx.exec = &exec;
	ttm_exec_until_all_locked(&exec) {
		passes++;
		n_uniq = 0;
		for (i = 0; i < n; i++) {
			for (dup = false, k = 0; k < i; k++)
				dup |= set[k] == set[i];
			ret = ttm_exec_prepare_bo(&exec, set[i], 1);
			ttm_exec_retry_on_contention(&exec);
			if (dup && !ignore_dups && ret == -EALREADY)
				ret = 0;
			if (!CHECK_MSG(ret == 0, "prepare_bo: %d (dup %d)",
				       ret, dup)) {
				ok = false;
				goto out;
			}
			if (!dup)
				uniq[n_uniq++] = set[i];
		}
		for (i = 0; i < n_uniq; i++) {
			b = index_of(s, uniq[i]);
			ret = ttm_bo_validate(uniq[i], s->place[b], &ctx);
			ttm_exec_retry_on_contention(&exec);
			ok = check_dev_ok(s->dev, "after validate");
			if (ret == -ENOSPC) {
				w->enospc++;
				goto out;
			}
			if (!CHECK_MSG(ret == 0, "validate: %d", ret) || !ok) {
				ok = false;
				goto out;
			}
		}
	}
	ttm_exec_done(&exec);
	w->backoffs += passes - 1;
	w->dups += n - n_uniq;
	/* Each buffer once, plus perhaps one held only for eviction. */
	k = 0;
	ttm_exec_for_each_locked_bo(&exec, i, bo)
		k += !ttm_exec_is_evictable(&exec, bo);
	if (!CHECK_INT(k, n_uniq)) {
		ok = false;
		goto out;
	}
	for (i = 0; i < n_uniq; i++) {
		b = index_of(s, uniq[i]);
		ok &= CHECK_MSG(in_placement(uniq[i], s->place[b]),
				"buffer %u in domain %d", b,
				ttm_bo_domain(uniq[i]));
	}
	if (!ok || !submit_add(w, uniq, n_uniq, value)) {
		ok = false;
		goto out;
	}
	for (i = 0; i < n_uniq; i++)
		w->expect[index_of(s, uniq[i])] += value;
	w->jobs++;
out:
	ttm_exec_fini(&exec);
	return check_dev_ok(s->dev, "after fini") && ok;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned long it;
	unsigned int e;

	for (e = 0; e < ENGINES; e++)
		if (!CHECK_INT(ttm_sched_entity_create(
				ttm_device_sched(w->s->dev, e),
				TTM_SCHED_PRIORITY_NORMAL, &w->entity[e]), 0))
			return NULL;
	for (it = 0; it < max_iterations && now_ns() < w->s->end_ns; it++)
		if (!one_job(w))
			break;
	/* Every job queued reaches the GPU: nothing is killed. */
	for (e = 0; e < ENGINES; e++)
		ttm_sched_entity_destroy(w->entity[e], UINT64_MAX);
	return NULL;
}

/* ---- the cases -------------------------------------------------------- */

static void run_case(void **state)
{
	const struct stress_variant *c = *state;
	struct ttm_device_options opts = { .wound_wait = c->wound_wait };
	struct worker workers[NUM_THREADS];
	pthread_t threads[NUM_THREADS];
	uint64_t sizes[NUM_BOS], total = 0;
	unsigned long jobs = 0, backoffs = 0, enospc = 0, dups = 0;
	struct ttm_device_stats st;
	struct stress *s;
	uint32_t words[MAX_BO_SIZE / 4], rng = seed | 1;
	unsigned int b, t, i;
	char msg[256];

	s = calloc(1, sizeof(*s));
	assert_non_null(s);
	assert_int_equal(ttm_gpu_create(ENGINES, NULL, &s->gpu), 0);

	/*
	 * 4, 8 or 12 KiB each. VRAM holds 8 of the largest: any set of
	 * MAX_SET fits beside the pinned buffer. GTT holds about half.
	 */
	for (b = 0; b < NUM_BOS; b++) {
		sizes[b] = (4 + 4 * (b % 3)) * KiB;
		total += sizes[b];
	}
	opts.gpu = s->gpu;
	opts.copy_engine = 0;
	opts.vram_size = 8 * MAX_BO_SIZE;
	opts.gtt_size = total / 2;
	assert_int_equal(ttm_device_create(&opts, &s->dev), 0);

	/*
	 * Buffer 0 is pinned in VRAM; the others VRAM+GTT, VRAM only or
	 * GTT only, created where there is room and validated into their
	 * placement by the jobs.
	 */
	for (b = 0; b < NUM_BOS; b++) {
		struct ttm_placement create;

		s->place[b] = b == 0 || b % 3 == 1 ? &vram_only :
			      b % 3 == 2 ? &gtt_only : &vram_gtt;
		create = *s->place[b];
		if (b)
			create.places[create.count++] =
				ttm_place_domain(TTM_DOMAIN_SYSTEM);
		assert_int_equal(ttm_bo_create(s->dev, sizes[b], &create, 0,
					       &s->bos[b]), 0);
		assert_true(check_dev_ok(s->dev, "after create"));
	}
	assert_int_equal(ttm_bo_domain(s->bos[0]), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_reserve(s->bos[0], false, false, NULL), 0);
	assert_int_equal(ttm_bo_pin(s->bos[0]), 0);
	ttm_bo_unreserve(s->bos[0]);

	if (c->inject)
		ww_debug_inject(seed, c->inject);
	s->end_ns = now_ns() + run_ns;
	for (t = 0; t < NUM_THREADS; t++) {
		xorshift32(&rng);
		workers[t] = (struct worker){ .s = s, .id = t,
					      .rng = rng | 1 };
		threads[t] = start_thread(worker_main, &workers[t]);
	}
	for (t = 0; t < NUM_THREADS; t++)
		join_thread(threads[t]);
	ww_debug_inject(0, 0);
	assert_checks_passed();

	/* Every word of every buffer holds the sum of its adds. */
	for (b = 0; b < NUM_BOS; b++) {
		uint32_t expect = 0;

		for (t = 0; t < NUM_THREADS; t++)
			expect += workers[t].expect[b];
		assert_int_equal(ttm_resv_wait(ttm_bo_resv(s->bos[b]),
					       TTM_RESV_USAGE_BOOKKEEP, false,
					       -1), 0);
		assert_int_equal(ttm_bo_reserve(s->bos[b], false, false, NULL),
				 0);
		assert_int_equal(ttm_bo_read(s->bos[b], 0, words, sizes[b]),
				 0);
		if (b == 0) {
			assert_int_equal(ttm_bo_domain(s->bos[0]),
					 TTM_DOMAIN_VRAM);
			assert_int_equal(ttm_bo_unpin(s->bos[0]), 0);
		}
		ttm_bo_unreserve(s->bos[b]);
		for (i = 0; i < sizes[b] / 4; i++)
			if (words[i] != expect)
				fail_msg("buffer %u word %u: %#x, not %#x", b,
					 i, words[i], expect);
		assert_true(check_dev_ok(s->dev, "after read"));
	}

	for (t = 0; t < NUM_THREADS; t++) {
		jobs += workers[t].jobs;
		backoffs += workers[t].backoffs;
		enospc += workers[t].enospc;
		dups += workers[t].dups;
	}
	ttm_device_get_stats(s->dev, &st);
	print_message("%lu jobs, %lu back-offs, %lu duplicates, %" PRIu64
		      " evictions, %" PRIu64 " moves (%" PRIu64 " KiB), %lu "
		      "-ENOSPC\n", jobs, backoffs, dups, st.evictions,
		      st.moves, st.bytes_moved / KiB, enospc);
	assert_true(jobs > 0);
	assert_true(st.evictions > 0);
	assert_true(st.moves > 0);
	assert_int_equal(enospc, 0);
	assert_int_equal(st.enospc, 0);
	/* Every room wait ended on an event (bo/bo_room.c). */
	assert_int_equal(st.room_wait_timeouts, 0);
	if (c->inject)
		assert_true(backoffs > 0);
	assert_int_equal(ttm_device_check(s->dev, msg, sizeof(msg)), 0);

	for (b = 0; b < NUM_BOS; b++)
		ttm_bo_put(s->bos[b]);
	ttm_device_get_stats(s->dev, &st);
	assert_int_equal(st.buffers, 0);
	assert_int_equal(ttm_device_destroy(s->dev), 0);
	ttm_gpu_destroy(s->gpu);
	free(s);
}

#define CASE(nm, ww, inj) STRESS_CASE(nm, run_case, ww, inj)

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		CASE("bo_stress(wait-die)", false, 0),
		CASE("bo_stress(wound-wait)", true, 0),
		CASE("bo_stress(wait-die, injected)", false, 8),
		CASE("bo_stress(wound-wait, injected)", true, 8),
	};
	bool long_run = false;

	if (!stress_args(argc, argv, &long_run,
			 "--long: ~15 s a case (else ~0.5 s)"))
		return 2;
	if (long_run) {
		run_ns = 15 * 1000000000L;
		max_iterations = 100000000;
	}
	seed = stress_seed();
	printf("bo_stress: %s run, TTMSIM_SEED=%u\n",
	       long_run ? "long" : "short", seed);
	return cmocka_run_group_tests_name("bo_stress", tests, NULL, NULL);
}
