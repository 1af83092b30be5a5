// SPDX-License-Identifier: MIT
/*
 * Validation, moves and eviction (ttm_bo_validate()): placements, copies
 * byte for byte on the GPU and the CPU, the KERNEL fence later jobs wait
 * for, move sources (ghosts) whose range is reused at once but written
 * only after their copy read it (pipelined eviction), LRU
 * order, pinned and in-use buffers never evicted, -ENOSPC, the
 * -EDEADLK of a contended eviction going back through the locking helper
 * (Wait-Die) or the eviction waiting and wounding instead (Wound-Wait),
 * -EINTR from every wait of validation, and no_wait_gpu's -EBUSY, which
 * does not stop the walk over the placement's domains.
 *
 * The GPU runs on its virtual clock: a copy happens only in
 * ttm_gpu_advance(), so a test sees the state before and after it. Every
 * step is followed by the device's accounting check.
 */
#include "lib/bo_helpers.h"

#include "ttmsim/bo.h"
#include "ttmsim/exec.h"
#include "ttmsim/gpu.h"
#include "ttmsim/resv.h"

#define BO_SIZE (4 * KiB)
#define WORDS (BO_SIZE / 4)
#define ADVANCE_US 1000000u

/*
 * A device of 16 KiB VRAM, with a GPU of @engines engines (none: CPU
 * copies). Eviction waits for its copies to free room, so tests that
 * evict run the GPU in real time; the others on the virtual clock.
 * WOUND_WAIT: reservations of the Wound-Wait class (default Wait-Die).
 */
struct fixture {
	struct ttm_gpu *gpu;
	struct ttm_device *dev;
	bool realtime;
};

#define REALTIME 0x100u   /* or-ed into @engines */
#define WOUND_WAIT 0x200u /* or-ed into @engines: Wound-Wait, not Wait-Die */

static void fixture_init(struct fixture *f, unsigned int engines,
			 uint64_t gtt_size)
{
	struct ttm_gpu_options gopts = { .flags = TTM_GPU_DETERMINISTIC };
	struct ttm_device_options opts = {
		.vram_size = 16 * KiB,
		.gtt_size = gtt_size,
		.wound_wait = engines & WOUND_WAIT,
	};

	f->realtime = engines & REALTIME;
	engines &= ~(REALTIME | WOUND_WAIT);
	if (f->realtime)
		gopts.flags = 0;

	f->gpu = NULL;
	if (engines) {
		assert_int_equal(ttm_gpu_create(engines, &gopts, &f->gpu), 0);
		opts.gpu = f->gpu;
	}
	assert_int_equal(ttm_device_create(&opts, &f->dev), 0);
	assert_dev_ok(f->dev);
}

static void advance(struct fixture *f)
{
	if (f->gpu && !f->realtime)
		assert_int_equal(ttm_gpu_advance(f->gpu, ADVANCE_US), 0);
	assert_dev_ok(f->dev);
}

static void fixture_fini(struct fixture *f)
{
	advance(f);
	assert_int_equal(ttm_device_destroy(f->dev), 0);
	ttm_gpu_destroy(f->gpu);
}

static struct ttm_bo *new_bo(struct fixture *f, uint64_t size,
			     const struct ttm_placement *placement)
{
	struct ttm_bo *bo = NULL;

	assert_int_equal(ttm_bo_create(f->dev, size, placement, 0, &bo), 0);
	assert_dev_ok(f->dev);
	return bo;
}

/* Fill @bo with words seed << 16 | index; unreserving bumps its LRU. */
static void fill(struct ttm_bo *bo, uint32_t seed)
{
	uint32_t words[WORDS];
	uint64_t off;
	unsigned int i;

	for (i = 0; i < WORDS; i++)
		words[i] = seed << 16 | i;
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	for (off = 0; off < ttm_bo_size(bo); off += BO_SIZE)
		assert_int_equal(ttm_bo_write(bo, off, words, BO_SIZE), 0);
	ttm_bo_unreserve(bo);
}

/* Fail unless @bo holds the pattern of fill(@bo, @seed), plus @add. */
static void expect_fill(struct ttm_bo *bo, uint32_t seed, uint32_t add)
{
	uint32_t words[WORDS];
	uint64_t off;
	unsigned int i;

	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	for (off = 0; off < ttm_bo_size(bo); off += BO_SIZE) {
		assert_int_equal(ttm_bo_read(bo, off, words, BO_SIZE), 0);
		for (i = 0; i < WORDS; i++)
			if (words[i] != (seed << 16 | i) + add)
				fail_msg("word %u: %#x, not %#x", i, words[i],
					 (seed << 16 | i) + add);
	}
	ttm_bo_unreserve(bo);
}

/* Reserve @bo alone, validate it, unreserve it. */
static int validate(struct fixture *f, struct ttm_bo *bo,
		    const struct ttm_placement *placement)
{
	struct ttm_operation_ctx ctx = { .interruptible = false };
	int ret;

	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	ret = ttm_bo_validate(bo, placement, &ctx);
	ttm_bo_unreserve(bo);
	assert_dev_ok(f->dev);
	return ret;
}

static struct ttm_device_stats stats(struct fixture *f)
{
	struct ttm_device_stats s;

	ttm_device_get_stats(f->dev, &s);
	return s;
}

static uint64_t used(struct fixture *f, enum ttm_domain d)
{
	return stats(f).domain[d].used;
}

/* ---- placements ------------------------------------------------------- */

/* CPU copies: the source goes at once, so eviction never waits. */
static void test_placements(void **state)
{
	struct ttm_placement bad = { 1, { TTM_PLACE_INIT(TTM_DOMAIN_COUNT) } };
	struct ttm_bo *bo, *fillers[4];
	struct fixture f;
	unsigned int i;

	(void)state;
	fixture_init(&f, 0, 16 * KiB);
	bo = new_bo(&f, BO_SIZE, &system_only);
	assert_int_equal(validate(&f, bo, &bad), -EINVAL);

	assert_int_equal(validate(&f, bo, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(stats(&f).moves, 1);
	/* Already allowed: nothing moves. */
	assert_int_equal(validate(&f, bo, &vram_gtt), 0);
	assert_int_equal(stats(&f).moves, 1);
	assert_int_equal(validate(&f, bo, &gtt_only), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_GTT);
	assert_int_equal(stats(&f).moves, 2);
	assert_int_equal(stats(&f).bytes_moved, 2 * BO_SIZE);
	advance(&f);

	/* VRAM full: VRAM+GTT takes GTT's room before evicting. */
	assert_int_equal(validate(&f, bo, &system_only), 0);
	for (i = 0; i < 4; i++)
		fillers[i] = new_bo(&f, BO_SIZE, &vram_only);
	assert_int_equal(validate(&f, bo, &vram_gtt), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_GTT);
	assert_int_equal(stats(&f).evictions, 0);
	/* VRAM only: one filler makes room. */
	assert_int_equal(validate(&f, bo, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(stats(&f).evictions, 1);
	advance(&f);

	ttm_bo_put(bo);
	for (i = 0; i < 4; i++)
		ttm_bo_put(fillers[i]);
	fixture_fini(&f);
}

/*
 * One domain twice: a place whose range can never hold the buffer is
 * passed over, without -ENOSPC, for the next, which evicts.
 */
static void test_place_twice(void **state)
{
	struct ttm_placement pl = {
		3, { { .domain = TTM_DOMAIN_VRAM, .lpfn = 1 },
		     { .domain = TTM_DOMAIN_VRAM,
		       .flags = TTM_PLACE_CPU_VISIBLE },
		     { .domain = TTM_DOMAIN_VRAM, .fpfn = 1 } },
	};
	struct ttm_bo *bo, *fillers[4];
	struct fixture f;
	unsigned int i;

	(void)state;
	fixture_init(&f, 0, 16 * KiB);
	/* 4 KiB of visible VRAM, one page: too small as well. */
	assert_int_equal(ttm_device_visible_vram(f.dev), 4 * KiB);
	bo = new_bo(&f, 2 * BO_SIZE, &system_only);
	for (i = 0; i < 4; i++)
		fillers[i] = new_bo(&f, BO_SIZE, &vram_only);
	assert_int_equal(validate(&f, bo, &pl), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(stats(&f).evictions, 2);
	assert_int_equal(stats(&f).enospc, 0);
	/* Every place too small: -ENOSPC at once, nothing evicted. */
	pl.places[2].lpfn = 2;
	ttm_bo_put(bo);
	bo = new_bo(&f, 2 * BO_SIZE, &system_only);
	assert_int_equal(validate(&f, bo, &pl), -ENOSPC);
	assert_int_equal(stats(&f).enospc, 1);
	assert_int_equal(stats(&f).evictions, 2);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_SYSTEM);
	advance(&f);

	ttm_bo_put(bo);
	for (i = 0; i < 4; i++)
		ttm_bo_put(fillers[i]);
	fixture_fini(&f);
}

/* ---- moves ------------------------------------------------------------ */

/* Contents survive a move; the source's room is free before the copy. */
static void test_move_copies(void **state)
{
	struct ttm_bo *bo;
	struct fixture f;

	(void)state;
	fixture_init(&f, 1, 16 * KiB);
	bo = new_bo(&f, 2 * BO_SIZE, &vram_only);
	fill(bo, 7);
	assert_int_equal(validate(&f, bo, &gtt_only), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_GTT);
	/*
	 * In flight: the source's range is free at once (pipelined, its
	 * next owner ordered after the copy), the KERNEL fence pending.
	 */
	assert_int_equal(used(&f, TTM_DOMAIN_VRAM), 0);
	assert_int_equal(used(&f, TTM_DOMAIN_GTT), 2 * BO_SIZE);
	assert_int_equal(stats(&f).domain[TTM_DOMAIN_VRAM].buffers, 0);
	assert_false(ttm_resv_test_signaled(ttm_bo_resv(bo),
					    TTM_RESV_USAGE_KERNEL));
	advance(&f);
	assert_int_equal(used(&f, TTM_DOMAIN_VRAM), 0);
	assert_int_equal(used(&f, TTM_DOMAIN_GTT), 2 * BO_SIZE);
	expect_fill(bo, 7, 0);
	ttm_bo_put(bo);
	fixture_fini(&f);
}

/* Without a GPU, the copy is done at once on the CPU. */
static void test_move_cpu(void **state)
{
	struct ttm_bo *bo;
	struct fixture f;

	(void)state;
	fixture_init(&f, 0, 16 * KiB);
	bo = new_bo(&f, BO_SIZE, &vram_only);
	fill(bo, 3);
	assert_int_equal(validate(&f, bo, &system_only), 0);
	assert_int_equal(used(&f, TTM_DOMAIN_VRAM), 0);
	assert_int_equal(used(&f, TTM_DOMAIN_SYSTEM), BO_SIZE);
	assert_int_equal(stats(&f).bytes_moved, BO_SIZE);
	expect_fill(bo, 3, 0);
	ttm_bo_put(bo);
	fixture_fini(&f);
}

/*
 * A move's source range is reused at once, but never written before its
 * copy read it: creating a buffer there (zeroed on the CPU) or moving one
 * in (a copy after the source's) waits for that copy, so with
 * no_wait_gpu both are -EBUSY while it is in flight; without, the move
 * in is ordered after it, and both buffers keep their contents.
 */
static void test_ghost_reused_in_order(void **state)
{
	struct ttm_operation_ctx nowait = { .no_wait_gpu = true };
	struct ttm_bo *big, *other, *tmp = NULL;
	struct fixture f;

	(void)state;
	fixture_init(&f, 1, 16 * KiB);
	big = new_bo(&f, 16 * KiB, &vram_only);
	other = new_bo(&f, 16 * KiB, &system_only);
	fill(big, 5);
	fill(other, 6);
	assert_int_equal(validate(&f, big, &gtt_only), 0);
	/* The copy has not run: the room is free, its bytes still read. */
	assert_int_equal(used(&f, TTM_DOMAIN_VRAM), 0);
	assert_int_equal(ttm_bo_create(f.dev, BO_SIZE, &vram_only,
				       TTM_BO_CREATE_NO_WAIT_GPU, &tmp),
			 -EBUSY);
	assert_null(tmp);
	assert_int_equal(ttm_bo_reserve(other, false, false, NULL), 0);
	assert_int_equal(ttm_bo_validate(other, &vram_only, &nowait),
			 -EBUSY);
	ttm_bo_unreserve(other);
	assert_int_equal(used(&f, TTM_DOMAIN_VRAM), 0);
	assert_int_equal(stats(&f).enospc, 0);
	/* Waiting allowed: taken at once, its copy queued after big's. */
	assert_int_equal(validate(&f, other, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(other), TTM_DOMAIN_VRAM);
	assert_false(ttm_resv_test_signaled(ttm_bo_resv(big),
					    TTM_RESV_USAGE_KERNEL));
	advance(&f);
	expect_fill(big, 5, 0);
	expect_fill(other, 6, 0);
	ttm_bo_put(big);
	ttm_bo_put(other);
	fixture_fini(&f);
}

/*
 * Creation zeroes its range on the CPU: it waits only for the copies
 * reading that range, not for every copy out of the domain (the move
 * fence). VRAM: a (4 KiB, evicted, its copy pending), x, and 8 KiB free
 * above: a new 8 KiB buffer fits only above, so it is created at once,
 * even with no_wait_gpu (and with the virtual clock stopped, a wait
 * would never end).
 */
static void test_create_beside_ghost(void **state)
{
	struct ttm_bo *a, *x, *c = NULL;
	struct fixture f;

	(void)state;
	fixture_init(&f, 1, 16 * KiB);
	a = new_bo(&f, BO_SIZE, &vram_only);
	x = new_bo(&f, BO_SIZE, &vram_only);
	fill(a, 3);
	assert_int_equal(validate(&f, a, &gtt_only), 0);
	assert_false(ttm_resv_test_signaled(ttm_bo_resv(a),
					    TTM_RESV_USAGE_KERNEL));
	assert_int_equal(ttm_bo_create(f.dev, 2 * BO_SIZE, &vram_only,
				       TTM_BO_CREATE_NO_WAIT_GPU, &c), 0);
	assert_int_equal(ttm_bo_offset(c), 2 * BO_SIZE);
	/* The copy is still pending: nothing waited for it. */
	assert_false(ttm_resv_test_signaled(ttm_bo_resv(a),
					    TTM_RESV_USAGE_KERNEL));
	advance(&f);
	expect_fill(a, 3, 0);
	ttm_bo_put(c);
	ttm_bo_put(x);
	ttm_bo_put(a);
	fixture_fini(&f);
}

/*
 * A job submitted after a move waits for it: an add on another engine,
 * ordered only by the fences of the buffer's reservation, must see the
 * copied data (else the copy overwrites its result).
 */
static void test_jobs_wait_for_move(void **state)
{
	struct ttm_fence **fences, *fence;
	struct ttm_gpu_dep deps[1];
	struct ttm_gpu_range range;
	struct ttm_gpu_job job = { .engine = 1, .op = TTM_GPU_OP_ADD,
				   .add_value = 5, .n_ranges = 1 };
	struct ttm_operation_ctx ctx = { 0 };
	unsigned int i, n;
	struct ttm_bo *bo;
	struct fixture f;

	(void)state;
	fixture_init(&f, 2, 16 * KiB);
	/* VRAM to GTT, then an add on engine 1. */
	bo = new_bo(&f, BO_SIZE, &vram_only);
	fill(bo, 9);
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_bo_validate(bo, &gtt_only, &ctx), 0);
	assert_int_equal(ttm_resv_get_fences(ttm_bo_resv(bo),
					     TTM_RESV_USAGE_READ, &fences,
					     &n), 0);
	assert_int_equal(n, 1);
	for (i = 0; i < n; i++)
		deps[i] = (struct ttm_gpu_dep){ fences[i], false };
	ttm_bo_gpu_range(bo, &range);
	job.ranges = &range;
	job.deps = deps;
	job.n_deps = n;
	assert_int_equal(ttm_gpu_submit(f.gpu, &job, &fence), 0);
	assert_int_equal(ttm_resv_reserve_fences(ttm_bo_resv(bo), 1), 0);
	ttm_resv_add_fence(ttm_bo_resv(bo), fence, TTM_RESV_USAGE_WRITE);
	ttm_fence_put(fence);
	for (i = 0; i < n; i++)
		ttm_fence_put(fences[i]);
	free(fences);
	ttm_bo_unreserve(bo);
	advance(&f);
	expect_fill(bo, 9, 5);
	ttm_bo_put(bo);
	fixture_fini(&f);
}

/* ---- eviction --------------------------------------------------------- */

/*
 * VRAM full of patterned buffers used in the order 2, 0, 3, 1: new
 * buffers evict them in that order, to GTT, contents intact.
 */
static void test_evict_lru(void **state)
{
	static const unsigned int order[] = { 2, 0, 3, 1 };
	struct ttm_bo *bos[4], *a, *b;
	struct fixture f;
	unsigned int i;

	(void)state;
	fixture_init(&f, 1 | REALTIME, 16 * KiB);
	for (i = 0; i < 4; i++)
		bos[i] = new_bo(&f, BO_SIZE, &vram_gtt);
	for (i = 0; i < 4; i++)
		fill(bos[order[i]], order[i] + 1);
	a = new_bo(&f, BO_SIZE, &system_only);
	b = new_bo(&f, 2 * BO_SIZE, &system_only);

	assert_int_equal(validate(&f, a, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(a), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(bos[2]), TTM_DOMAIN_GTT);
	for (i = 0; i < 4; i++)
		if (i != 2)
			assert_int_equal(ttm_bo_domain(bos[i]),
					 TTM_DOMAIN_VRAM);
	assert_int_equal(stats(&f).evictions, 1);

	/*
	 * Two pages, in one hole: the LRU would give 0 and 3, but a sits
	 * between 3 and the free pages, so 3 alone opens nothing; 0 and
	 * its neighbour 1 (used last, but needed) make the hole.
	 */
	assert_int_equal(validate(&f, b, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(bos[0]), TTM_DOMAIN_GTT);
	assert_int_equal(ttm_bo_domain(bos[1]), TTM_DOMAIN_GTT);
	assert_int_equal(ttm_bo_domain(bos[3]), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_offset(b), 0);
	assert_int_equal(stats(&f).evictions, 3);
	assert_int_equal(stats(&f).moves, 5);
	advance(&f);
	for (i = 0; i < 4; i++)
		expect_fill(bos[i], i + 1, 0);

	for (i = 0; i < 4; i++)
		ttm_bo_put(bos[i]);
	ttm_bo_put(a);
	ttm_bo_put(b);
	fixture_fini(&f);
}

/* GTT full: a VRAM victim goes to SYSTEM instead (no nested eviction). */
static void test_evict_to_system(void **state)
{
	struct ttm_bo *victim, *gtt, *bo;
	struct fixture f;

	(void)state;
	fixture_init(&f, 1 | REALTIME, 4 * KiB);
	victim = new_bo(&f, 16 * KiB, &vram_only);
	gtt = new_bo(&f, BO_SIZE, &gtt_only);
	bo = new_bo(&f, BO_SIZE, &system_only);
	fill(victim, 4);
	assert_int_equal(validate(&f, bo, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(victim), TTM_DOMAIN_SYSTEM);
	assert_int_equal(ttm_bo_domain(gtt), TTM_DOMAIN_GTT);
	advance(&f);
	expect_fill(victim, 4, 0);
	ttm_bo_put(victim);
	ttm_bo_put(gtt);
	ttm_bo_put(bo);
	fixture_fini(&f);
}

/* Pinned buffers are never evicted, nor moved; all pinned: -ENOSPC. */
static void test_evict_pinned(void **state)
{
	struct ttm_bo *bos[4], *bo;
	struct fixture f;
	unsigned int i;

	(void)state;
	fixture_init(&f, 1 | REALTIME, 16 * KiB);
	for (i = 0; i < 4; i++) {
		bos[i] = new_bo(&f, BO_SIZE, &vram_only);
		assert_int_equal(ttm_bo_reserve(bos[i], false, false, NULL),
				 0);
		assert_int_equal(ttm_bo_pin(bos[i]), 0);
		ttm_bo_unreserve(bos[i]);
	}
	/*
	 * A pinned buffer validates only where it is; anywhere else is the
	 * caller's mistake, -EINVAL as in TTM, and nothing moves.
	 */
	assert_int_equal(validate(&f, bos[0], &vram_gtt), 0);
	assert_int_equal(validate(&f, bos[0], &gtt_only), -EINVAL);
	assert_int_equal(ttm_bo_domain(bos[0]), TTM_DOMAIN_VRAM);
	assert_int_equal(stats(&f).moves, 0);

	bo = new_bo(&f, BO_SIZE, &system_only);
	assert_int_equal(validate(&f, bo, &vram_only), -ENOSPC);
	assert_int_equal(stats(&f).enospc, 1);
	assert_int_equal(stats(&f).evictions, 0);

	/* Unpin the last: only it can go. */
	assert_int_equal(ttm_bo_reserve(bos[3], false, false, NULL), 0);
	assert_int_equal(ttm_bo_unpin(bos[3]), 0);
	ttm_bo_unreserve(bos[3]);
	assert_int_equal(validate(&f, bo, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(bos[3]), TTM_DOMAIN_GTT);
	for (i = 0; i < 3; i++)
		assert_int_equal(ttm_bo_domain(bos[i]), TTM_DOMAIN_VRAM);
	advance(&f);

	for (i = 0; i < 3; i++) {
		assert_int_equal(ttm_bo_reserve(bos[i], false, false, NULL),
				 0);
		assert_int_equal(ttm_bo_unpin(bos[i]), 0);
		ttm_bo_unreserve(bos[i]);
	}
	for (i = 0; i < 4; i++)
		ttm_bo_put(bos[i]);
	ttm_bo_put(bo);
	fixture_fini(&f);
}

/*
 * Validate @bo under an exec helper that also locks @n_held of @bos:
 * those are in use. Returns validate's result.
 */
static int validate_with(struct fixture *f, struct ttm_bo *bo,
			 struct ttm_bo **bos, unsigned int n_held)
{
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_exec exec;
	unsigned int i;
	int ret = 0;

	ttm_exec_init(&exec, f->dev, 0);
	ctx.exec = &exec;
	ttm_exec_until_all_locked(&exec) {
		for (i = 0; i < n_held; i++) {
			ret = ttm_exec_lock_bo(&exec, bos[i]);
			ttm_exec_retry_on_contention(&exec);
			assert_int_equal(ret, 0);
		}
		ret = ttm_exec_lock_bo(&exec, bo);
		ttm_exec_retry_on_contention(&exec);
		assert_int_equal(ret, 0);
		ret = ttm_bo_validate(bo, &vram_only, &ctx);
		ttm_exec_retry_on_contention(&exec);
	}
	ttm_exec_done(&exec);
	ttm_exec_fini(&exec);
	assert_dev_ok(f->dev);
	return ret;
}

static int act_reserve(struct actor *a, void *bo)
{
	(void)a;
	return ttm_bo_reserve(bo, false, false, NULL);
}

static int act_unreserve(struct actor *a, void *bo)
{
	(void)a;
	ttm_bo_unreserve(bo);
	return 0;
}

/*
 * The caller's own buffers are in use, and a buffer reserved by a thread
 * without a ticket is busy: both skipped, never waited for.
 */
static void test_evict_skips_in_use(void **state)
{
	struct ttm_bo *bos[4], *bo;
	struct fixture f;
	struct actor a;
	unsigned int i;

	(void)state;
	fixture_init(&f, 1 | REALTIME, 16 * KiB);
	for (i = 0; i < 4; i++)
		bos[i] = new_bo(&f, BO_SIZE, &vram_only);
	bo = new_bo(&f, BO_SIZE, &system_only);

	assert_int_equal(validate_with(&f, bo, bos, 4), -ENOSPC);
	assert_int_equal(stats(&f).evictions, 0);

	/* bos[2] reserved elsewhere without a ticket: bos[3] goes. */
	actor_start(&a, NULL);
	assert_int_equal(actor_run(&a, act_reserve, bos[2]), 0);
	assert_int_equal(validate_with(&f, bo, bos, 2), 0);
	assert_int_equal(actor_run(&a, act_unreserve, bos[2]), 0);
	actor_stop(&a);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(bos[3]), TTM_DOMAIN_GTT);
	for (i = 0; i < 3; i++)
		assert_int_equal(ttm_bo_domain(bos[i]), TTM_DOMAIN_VRAM);
	assert_int_equal(stats(&f).evictions, 1);
	assert_checks_passed();

	for (i = 0; i < 4; i++)
		ttm_bo_put(bos[i]);
	ttm_bo_put(bo);
	fixture_fini(&f);
}

/* An older submission in another thread holding the only VRAM buffer. */
struct holder {
	struct fixture *f;
	struct ttm_bo *bo;
	struct ttm_bo *other; /* what it tries to lock next, if anything */
	struct ttm_exec exec;
};

static int act_hold(struct actor *a, void *arg)
{
	struct holder *h = arg;
	int ret = 0;

	(void)a;
	ttm_exec_init(&h->exec, h->f->dev, 0);
	ttm_exec_until_all_locked(&h->exec) {
		ret = ttm_exec_lock_bo(&h->exec, h->bo);
		ttm_exec_retry_on_contention(&h->exec);
	}
	return ret;
}

/* Release once the younger submission sleeps on the buffer. */
static int act_release_when_waited(struct actor *a, void *arg)
{
	struct holder *h = arg;
	bool waited = wait_for_waiters(&ttm_bo_resv(h->bo)->lock, 1);

	(void)a;
	ttm_exec_fini(&h->exec);
	return CHECK(waited) ? 0 : -ETIMEDOUT;
}

/*
 * Wait-Die: evicting a buffer an older ticket holds returns -EDEADLK
 * through the helper, never -ENOSPC; the next pass slow-locks the victim
 * (evictable) once the older releases it, and the eviction completes.
 */
static void test_evict_contended(void **state)
{
	struct ttm_operation_ctx ctx = { 0 };
	struct holder h;
	struct ttm_bo *bo;
	struct ttm_exec exec;
	struct fixture f;
	struct actor a;
	int passes = 0, ret = 0;

	(void)state;
	fixture_init(&f, 1 | REALTIME, 16 * KiB);
	h.f = &f;
	h.bo = new_bo(&f, 16 * KiB, &vram_gtt);
	fill(h.bo, 11);
	bo = new_bo(&f, BO_SIZE, &system_only);

	actor_start(&a, NULL);
	assert_int_equal(actor_run(&a, act_hold, &h), 0);
	ttm_exec_init(&exec, f.dev, 0);
	ctx.exec = &exec;
	ttm_exec_until_all_locked(&exec) {
		passes++;
		ret = ttm_exec_lock_bo(&exec, bo);
		ttm_exec_retry_on_contention(&exec);
		assert_int_equal(ret, 0);
		if (passes == 1)
			assert_true(actor_post(&a, act_release_when_waited,
					       &h));
		ret = ttm_bo_validate(bo, &vram_only, &ctx);
		if (passes == 1)
			assert_int_equal(ret, -EDEADLK);
		ttm_exec_retry_on_contention(&exec);
	}
	assert_int_equal(ret, 0);
	assert_int_equal(passes, 2);
	assert_true(ttm_exec_is_evictable(&exec, h.bo));
	ttm_exec_done(&exec);
	ttm_exec_fini(&exec);
	assert_true(actor_wait(&a));
	assert_int_equal(actor_ret(&a), 0);
	actor_stop(&a);
	assert_checks_passed();

	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(h.bo), TTM_DOMAIN_GTT);
	assert_int_equal(stats(&f).evictions, 1);
	assert_int_equal(stats(&f).enospc, 0);
	advance(&f);
	expect_fill(h.bo, 11, 0);
	ttm_bo_put(h.bo);
	ttm_bo_put(bo);
	fixture_fini(&f);
}

/* ---- interrupted and non-blocking validation -------------------------- */

/* A fence of its own timeline that only the test signals. */
static struct ttm_fence *new_fence(void)
{
	struct ttm_fence *fence = NULL;

	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1,
					  &fence), 0);
	return fence;
}

/*
 * Make @bo busy: @fence (the caller keeps its reference) goes into its
 * reservation with WRITE usage, as a job writing @bo would put it.
 */
static void make_busy(struct ttm_bo *bo, struct ttm_fence *fence)
{
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_resv_reserve_fences(ttm_bo_resv(bo), 1), 0);
	ttm_resv_add_fence(ttm_bo_resv(bo), fence, TTM_RESV_USAGE_WRITE);
	ttm_bo_unreserve(bo);
}

/*
 * Fail unless the bytes and buffers of every domain, and the counters,
 * are still @old's.
 */
static void expect_unchanged(struct fixture *f,
			     const struct ttm_device_stats *old)
{
	struct ttm_device_stats now = stats(f);
	int d;

	assert_dev_ok(f->dev);
	for (d = 0; d < TTM_DOMAIN_COUNT; d++) {
		assert_int_equal(now.domain[d].used, old->domain[d].used);
		assert_int_equal(now.domain[d].buffers,
				 old->domain[d].buffers);
	}
	assert_int_equal(now.moves, old->moves);
	assert_int_equal(now.evictions, old->evictions);
	assert_int_equal(now.enospc, old->enospc);
}

/* One validation run by an actor that interrupts itself first. */
struct vstep {
	struct ttm_bo *bo;
	const struct ttm_placement *placement;
	struct ttm_operation_ctx ctx;
	enum ttm_domain domain;  /* @bo's once validated, still reserved */
	bool pending;            /* an interrupt was still pending after */
};

static int act_validate(struct actor *a, void *arg)
{
	struct vstep *v = arg;
	int ret;

	(void)a;
	/* Not interruptible: the interrupt is posted after it anyway. */
	ret = ttm_bo_reserve(v->bo, false, false, NULL);
	if (!CHECK_INT(ret, 0))
		return ret;
	CHECK_INT(ttm_interrupt_thread(pthread_self()), 0);
	ret = ttm_bo_validate(v->bo, v->placement, &v->ctx);
	v->domain = ttm_bo_domain(v->bo);
	ttm_bo_unreserve(v->bo);
	v->pending = ttm_interrupt_clear();
	return ret;
}

/*
 * Run @v's validation, interrupted, on a thread of its own and return its
 * result. If it blocks despite the interrupt (the wait was not
 * interruptible), unblock it with @rescue so that the test fails instead
 * of hanging.
 */
static int validate_interrupted(struct vstep *v, void (*rescue)(void *),
				void *rescue_arg)
{
	struct actor a;
	bool done;
	int ret;

	v->ctx.interruptible = true;
	actor_start(&a, NULL);
	actor_post(&a, act_validate, v);
	done = actor_wait(&a);
	if (!done) {
		rescue(rescue_arg);
		actor_wait(&a);
	}
	ret = actor_ret(&a);
	/* Joined before any assert: a failed one leaves no thread behind. */
	actor_stop(&a);
	if (!done)
		fail_msg("validation ignored the pending interrupt (%d)", ret);
	assert_checks_passed();
	/* The wait consumed the interrupt. */
	assert_false(v->pending);
	return ret;
}

static void rescue_signal(void *fence)
{
	ttm_fence_signal(fence, 0);
}

/*
 * (a) VRAM's only content is the source of a move in flight: its room is
 * free at once (pipelined), so the validation has nothing to wait for
 * and leaves the interrupt pending; the data survives both copies.
 */
static void eintr_ghost_no_wait(void)
{
	struct ttm_operation_ctx ctx = { .interruptible = true };
	struct ttm_bo *big, *bo;
	struct fixture f;

	fixture_init(&f, 1, 16 * KiB);
	big = new_bo(&f, 16 * KiB, &vram_only);
	bo = new_bo(&f, BO_SIZE, &system_only);
	fill(big, 20);
	fill(bo, 21);
	assert_int_equal(validate(&f, big, &gtt_only), 0);
	assert_int_equal(used(&f, TTM_DOMAIN_VRAM), 0);

	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_interrupt_thread(pthread_self()), 0);
	assert_int_equal(ttm_bo_validate(bo, &vram_only, &ctx), 0);
	assert_true(ttm_interrupt_clear());
	ttm_bo_unreserve(bo);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(stats(&f).room_waits, 0);
	advance(&f);
	expect_fill(big, 20, 0);
	expect_fill(bo, 21, 0);
	ttm_bo_put(big);
	ttm_bo_put(bo);
	fixture_fini(&f);
}

/*
 * (b) CPU moves: the buffer to move is busy, so the copy waits for its
 * fences; interrupted: -EINTR; not waiting at all: -EBUSY.
 */
static void eintr_cpu_move(void)
{
	struct ttm_operation_ctx nowait = { .no_wait_gpu = true };
	struct ttm_device_stats before;
	struct ttm_fence *fence;
	struct ttm_bo *bo;
	struct fixture f;
	struct vstep v = { .placement = &vram_only };

	fixture_init(&f, 0, 16 * KiB);
	bo = new_bo(&f, BO_SIZE, &system_only);
	fill(bo, 22);
	fence = new_fence();
	make_busy(bo, fence);
	before = stats(&f);

	v.bo = bo;
	assert_int_equal(validate_interrupted(&v, rescue_signal, fence),
			 -EINTR);
	assert_int_equal(v.domain, TTM_DOMAIN_SYSTEM);
	expect_unchanged(&f, &before);

	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_bo_validate(bo, &vram_only, &nowait), -EBUSY);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_SYSTEM);
	ttm_bo_unreserve(bo);
	expect_unchanged(&f, &before);

	assert_int_equal(ttm_fence_signal(fence, 0), 0);
	assert_int_equal(validate(&f, bo, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(used(&f, TTM_DOMAIN_VRAM), BO_SIZE);
	assert_int_equal(used(&f, TTM_DOMAIN_SYSTEM), 0);
	expect_fill(bo, 22, 0);
	ttm_fence_put(fence);
	ttm_bo_put(bo);
	fixture_fini(&f);
}

/*
 * (c) CPU moves: the eviction victim is busy, and the wait for it is
 * interrupted; the room taken for it in GTT must be given back.
 */
static void eintr_cpu_evict(void)
{
	struct ttm_device_stats before;
	struct ttm_fence *fence;
	struct ttm_bo *victim, *bo;
	struct fixture f;
	struct vstep v = { .placement = &vram_only };

	fixture_init(&f, 0, 16 * KiB);
	victim = new_bo(&f, 16 * KiB, &vram_only);
	bo = new_bo(&f, BO_SIZE, &system_only);
	fill(victim, 23);
	fill(bo, 24);
	fence = new_fence();
	make_busy(victim, fence);
	before = stats(&f);

	v.bo = bo;
	assert_int_equal(validate_interrupted(&v, rescue_signal, fence),
			 -EINTR);
	assert_int_equal(v.domain, TTM_DOMAIN_SYSTEM);
	assert_int_equal(ttm_bo_domain(victim), TTM_DOMAIN_VRAM);
	expect_unchanged(&f, &before);
	assert_int_equal(used(&f, TTM_DOMAIN_GTT), 0);

	assert_int_equal(ttm_fence_signal(fence, 0), 0);
	assert_int_equal(validate(&f, bo, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(victim), TTM_DOMAIN_GTT);
	assert_int_equal(stats(&f).evictions, 1);
	expect_fill(victim, 23, 0);
	expect_fill(bo, 24, 0);
	ttm_fence_put(fence);
	ttm_bo_put(victim);
	ttm_bo_put(bo);
	fixture_fini(&f);
}

/*
 * -EINTR ends validation wherever it waits (a move source in flight frees
 * its room at once: nothing to wait for there), for a busy buffer's fences before a CPU copy, the
 * buffer's own or an eviction victim's. Each time the interrupt is
 * consumed, nothing moved, no byte is left taken, and validating again
 * once the wait would end works.
 */
static void test_validate_eintr(void **state)
{
	(void)state;
	eintr_ghost_no_wait();
	eintr_cpu_move();
	eintr_cpu_evict();
}

/*
 * CPU moves, no_wait_gpu: VRAM's only buffer is busy, so evicting it is
 * -EBUSY; the walk goes on to GTT, whose idle buffer is evicted to
 * SYSTEM, and the buffer lands in GTT. While GTT cannot make room (its
 * buffer pinned), the result is -EBUSY, not a counted -ENOSPC.
 */
static void test_evict_busy_cpu_no_wait_next_domain(void **state)
{
	struct ttm_operation_ctx nowait = { .no_wait_gpu = true };
	struct ttm_fence *fence;
	struct ttm_bo *a, *b, *c;
	struct fixture f;

	(void)state;
	fixture_init(&f, 0, 16 * KiB);
	a = new_bo(&f, 16 * KiB, &vram_only);
	b = new_bo(&f, 16 * KiB, &gtt_only);
	c = new_bo(&f, BO_SIZE, &system_only);
	fill(a, 31);
	fill(b, 32);
	fill(c, 33);
	fence = new_fence();
	make_busy(a, fence);

	/* B pinned: GTT cannot make room either; busy wins over -ENOSPC. */
	assert_int_equal(ttm_bo_reserve(b, false, false, NULL), 0);
	assert_int_equal(ttm_bo_pin(b), 0);
	ttm_bo_unreserve(b);
	assert_int_equal(ttm_bo_reserve(c, false, false, NULL), 0);
	assert_int_equal(ttm_bo_validate(c, &vram_gtt, &nowait), -EBUSY);
	assert_int_equal(ttm_bo_domain(c), TTM_DOMAIN_SYSTEM);
	ttm_bo_unreserve(c);
	assert_dev_ok(f.dev);
	assert_int_equal(stats(&f).enospc, 0);
	assert_int_equal(stats(&f).moves, 0);
	assert_int_equal(used(&f, TTM_DOMAIN_SYSTEM), BO_SIZE);
	assert_int_equal(ttm_bo_reserve(b, false, false, NULL), 0);
	assert_int_equal(ttm_bo_unpin(b), 0);
	ttm_bo_unreserve(b);

	/* B unpinned: it goes to SYSTEM and C takes its place. */
	assert_int_equal(ttm_bo_reserve(c, false, false, NULL), 0);
	assert_int_equal(ttm_bo_validate(c, &vram_gtt, &nowait), 0);
	assert_int_equal(ttm_bo_domain(c), TTM_DOMAIN_GTT);
	ttm_bo_unreserve(c);
	assert_dev_ok(f.dev);
	assert_int_equal(ttm_bo_domain(a), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(b), TTM_DOMAIN_SYSTEM);
	assert_false(ttm_fence_is_signaled(fence));
	assert_int_equal(stats(&f).evictions, 1);
	assert_int_equal(stats(&f).moves, 2);
	assert_int_equal(stats(&f).enospc, 0);
	/* The room taken for A's failed eviction went back. */
	assert_int_equal(used(&f, TTM_DOMAIN_VRAM), 16 * KiB);
	assert_int_equal(used(&f, TTM_DOMAIN_GTT), BO_SIZE);
	assert_int_equal(used(&f, TTM_DOMAIN_SYSTEM), 16 * KiB);

	assert_int_equal(ttm_fence_signal(fence, 0), 0);
	expect_fill(a, 31, 0);
	expect_fill(b, 32, 0);
	expect_fill(c, 33, 0);
	ttm_fence_put(fence);
	ttm_bo_put(a);
	ttm_bo_put(b);
	ttm_bo_put(c);
	fixture_fini(&f);
}

/* ---- Wound-Wait ------------------------------------------------------- */

/*
 * Once we wait for the holder's buffer, the holder locks @h->other, which
 * we hold, then releases everything. Younger, it was wounded and gets
 * -EDEADLK at once; older, it wounds us and waits until we back off.
 */
static int act_lock_other_when_waited(struct actor *a, void *arg)
{
	struct holder *h = arg;
	bool waited = wait_for_waiters(&ttm_bo_resv(h->bo)->lock, 1);
	int ret;

	(void)a;
	ret = ttm_exec_lock_bo(&h->exec, h->other);
	ttm_exec_fini(&h->exec);
	return CHECK(waited) ? ret : -ETIMEDOUT;
}

/* @h->bo alone in VRAM again, @bo in SYSTEM, GTT empty. */
static void wound_wait_reset(struct fixture *f, struct holder *h,
			     struct ttm_bo *bo)
{
	assert_int_equal(validate(f, bo, &system_only), 0);
	assert_int_equal(validate(f, h->bo, &vram_only), 0);
	assert_int_equal(used(f, TTM_DOMAIN_VRAM), 16 * KiB);
	assert_int_equal(used(f, TTM_DOMAIN_GTT), 0);
}

/*
 * Validate @bo to VRAM under @exec (already initialised, interruptibly)
 * while @a, an actor holding @h->bo under its own ticket, runs @step.
 * A watchdog interrupts us if the two deadlock. Stops @a (its last result
 * in *@holder_ret) before asserting anything. Return validate's result;
 * *@passes: the helper's passes.
 */
static int validate_against(struct fixture *f, struct ttm_bo *bo,
			    struct ttm_exec *exec, struct actor *a,
			    actor_fn step, struct holder *h, int *passes,
			    int *holder_ret)
{
	struct ttm_operation_ctx ctx = { .interruptible = true, .exec = exec };
	struct watchdog w;
	bool fired;
	int ret = 0;

	*passes = 0;
	watchdog_start(&w);
	ttm_exec_until_all_locked(exec) {
		++*passes;
		ret = ttm_exec_lock_bo(exec, bo);
		ttm_exec_retry_on_contention(exec);
		if (ret)
			break;
		if (*passes == 1 && !actor_post(a, step, h))
			break;
		ret = ttm_bo_validate(bo, &vram_only, &ctx);
		ttm_exec_retry_on_contention(exec);
		if (ret)
			break;
	}
	fired = watchdog_stop(&w);
	if (ret == 0)
		ttm_exec_done(exec);
	ttm_exec_fini(exec);
	actor_wait(a);
	*holder_ret = actor_ret(a);
	actor_stop(a); /* aborts if it is stuck */
	assert_false(fired);
	assert_checks_passed();
	assert_dev_ok(f->dev);
	return ret;
}

/*
 * Wound-Wait: the eviction never backs off for the holder of its victim.
 * (a) The holder is older: the younger eviction waits for it to release
 * the victim, and completes in one pass, without -EDEADLK. (b) The holder
 * is younger: it is wounded, gets -EDEADLK when it next waits (for a
 * buffer we hold), backs off, and the eviction proceeds. (c) The holder
 * is older and, while we wait for the victim, waits for a buffer we hold:
 * we are wounded, back off through the helper, and the second pass
 * evicts the victim it slow-locked.
 */
static void test_evict_contended_wound_wait(void **state)
{
	struct holder h;
	struct ttm_bo *bo;
	struct ttm_exec exec;
	struct fixture f;
	struct actor a;
	int passes, holder_ret;

	(void)state;
	/* CPU copies: an eviction frees its room at once. */
	fixture_init(&f, WOUND_WAIT, 16 * KiB);
	assert_false(is_wait_die(ttm_device_ww_class(f.dev)));
	h.f = &f;
	h.bo = new_bo(&f, 16 * KiB, &vram_gtt);
	fill(h.bo, 41);
	bo = new_bo(&f, BO_SIZE, &system_only);
	h.other = bo;

	/* (a) The holder's ticket is older. */
	actor_start(&a, NULL);
	assert_int_equal(actor_run(&a, act_hold, &h), 0);
	ttm_exec_init(&exec, f.dev, TTM_EXEC_INTERRUPTIBLE);
	assert_int_equal(validate_against(&f, bo, &exec, &a,
					  act_release_when_waited, &h,
					  &passes, &holder_ret), 0);
	assert_int_equal(holder_ret, 0);
	assert_int_equal(passes, 1);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(h.bo), TTM_DOMAIN_GTT);
	assert_int_equal(stats(&f).evictions, 1);
	assert_int_equal(stats(&f).enospc, 0);
	expect_fill(h.bo, 41, 0);

	/* (b) Our ticket is older: the holder is wounded. */
	wound_wait_reset(&f, &h, bo);
	ttm_exec_init(&exec, f.dev, TTM_EXEC_INTERRUPTIBLE);
	actor_start(&a, NULL);
	assert_int_equal(actor_run(&a, act_hold, &h), 0);
	assert_int_equal(validate_against(&f, bo, &exec, &a,
					  act_lock_other_when_waited, &h,
					  &passes, &holder_ret), 0);
	assert_int_equal(holder_ret, -EDEADLK);
	assert_int_equal(passes, 1);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(h.bo), TTM_DOMAIN_GTT);
	assert_int_equal(stats(&f).evictions, 2);
	assert_int_equal(stats(&f).enospc, 0);
	expect_fill(h.bo, 41, 0);

	/* (c) The older holder wounds us while we wait for its buffer. */
	wound_wait_reset(&f, &h, bo);
	actor_start(&a, NULL);
	assert_int_equal(actor_run(&a, act_hold, &h), 0);
	ttm_exec_init(&exec, f.dev, TTM_EXEC_INTERRUPTIBLE);
	assert_int_equal(validate_against(&f, bo, &exec, &a,
					  act_lock_other_when_waited, &h,
					  &passes, &holder_ret), 0);
	assert_int_equal(holder_ret, 0);
	assert_int_equal(passes, 2);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(h.bo), TTM_DOMAIN_GTT);
	assert_int_equal(stats(&f).evictions, 3);
	assert_int_equal(stats(&f).enospc, 0);
	expect_fill(h.bo, 41, 0);
	ttm_bo_put(h.bo);
	ttm_bo_put(bo);
	fixture_fini(&f);
}

#define TEST(fn) cmocka_unit_test_setup(fn, checks_reset)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(test_placements),
		TEST(test_place_twice),
		TEST(test_move_copies),
		TEST(test_move_cpu),
		TEST(test_ghost_reused_in_order),
		TEST(test_create_beside_ghost),
		TEST(test_jobs_wait_for_move),
		TEST(test_evict_lru),
		TEST(test_evict_to_system),
		TEST(test_evict_pinned),
		TEST(test_evict_skips_in_use),
		TEST(test_evict_contended),
		TEST(test_validate_eintr),
		TEST(test_evict_busy_cpu_no_wait_next_domain),
		TEST(test_evict_contended_wound_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
