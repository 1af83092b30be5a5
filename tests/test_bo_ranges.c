// SPDX-License-Identifier: MIT
/*
 * Range-managed memory: buffers at offsets in VRAM and GTT, placements
 * with page ranges and flags, visible VRAM, and eviction that opens a
 * hole rather than freeing bytes: the right neighbours go, contents stay
 * intact across every move, and a buffer that no hole could ever hold
 * gets -ENOSPC at once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/bo_helpers.h"

#include "ttmsim/bo.h"
#include "ttmsim/exec.h"
#include "ttmsim/interrupt.h"

#define PAGE 4096u

/* VRAM of @vram_pages pages (@visible of them CPU-visible), GTT 64. */
static struct ttm_device *device(unsigned int vram_pages,
				 unsigned int visible)
{
	struct ttm_device_options opts = {
		.vram_size = (uint64_t)vram_pages * PAGE,
		.gtt_size = 64 * PAGE,
		.visible_vram = (uint64_t)visible * PAGE,
	};
	struct ttm_device *dev;

	assert_int_equal(ttm_device_create(&opts, &dev), 0);
	return dev;
}

static struct ttm_placement one_place(enum ttm_domain d, uint32_t fpfn,
				      uint32_t lpfn, uint32_t flags)
{
	struct ttm_placement pl = { .count = 1 };

	pl.places[0] = (struct ttm_place){ d, fpfn, lpfn, flags };
	return pl;
}

/* Every word of @bo is @seed + its index: who it is, and where. */
static void fill(struct ttm_bo *bo, uint32_t seed)
{
	size_t i, n = ttm_bo_size(bo) / 4;
	uint32_t *w = malloc(n * 4);

	assert_non_null(w);
	for (i = 0; i < n; i++)
		w[i] = seed + (uint32_t)i;
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_bo_write(bo, 0, w, n * 4), 0);
	ttm_bo_unreserve(bo);
	free(w);
}

static void expect_fill(struct ttm_bo *bo, uint32_t seed)
{
	size_t i, n = ttm_bo_size(bo) / 4;
	uint32_t *w = malloc(n * 4);

	assert_non_null(w);
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_bo_read(bo, 0, w, n * 4), 0);
	ttm_bo_unreserve(bo);
	for (i = 0; i < n; i++)
		if (w[i] != seed + (uint32_t)i)
			fail_msg("buffer %#x, word %zu: %#x", seed, i, w[i]);
	free(w);
}

static struct ttm_bo *new_bo(struct ttm_device *dev, unsigned int pages,
			     const struct ttm_placement *pl)
{
	struct ttm_bo *bo;

	assert_int_equal(ttm_bo_create(dev, (uint64_t)pages * PAGE, pl, 0,
				       &bo), 0);
	assert_dev_ok(dev);
	return bo;
}

static uint64_t page_of(struct ttm_bo *bo)
{
	return ttm_bo_offset(bo) / PAGE;
}

/* Validate @bo into @pl under its own reservation. */
static int validate(struct ttm_bo *bo, const struct ttm_placement *pl)
{
	struct ttm_operation_ctx ctx = { 0 };
	int ret;

	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	ret = ttm_bo_validate(bo, pl, &ctx);
	ttm_bo_unreserve(bo);
	assert_dev_ok(ttm_bo_device(bo));
	return ret;
}

/*
 * Free pages but no hole: pages 1, 3 and 5 of 8 are free. A buffer of two
 * pages needs a neighbour of a free page to go, the first such on the
 * LRU: not page 7's buffer at its head (its going opens one page only),
 * but page 0's, whose going joins page 1. Nobody else moves, and every
 * buffer keeps its contents.
 */
static void test_fragmentation(void **state)
{
	struct ttm_placement vram = one_place(TTM_DOMAIN_VRAM, 0, 0, 0);
	struct ttm_device *dev = device(8, 2);
	struct ttm_device_stats st;
	struct ttm_bo *bos[8], *x;
	unsigned int i;

	(void)state;
	for (i = 0; i < 8; i++) {
		bos[i] = new_bo(dev, 1, &vram_gtt);
		assert_int_equal(page_of(bos[i]), i);
		fill(bos[i], 0x1000 * (i + 1));
	}
	for (i = 1; i < 8; i += 2)
		if (i != 7) {
			ttm_bo_put(bos[i]);
			bos[i] = NULL;
		}
	/* LRU: 7, then 0, 2, 4, 6. */
	for (i = 0; i < 8; i += 2)
		expect_fill(bos[i], 0x1000 * (i + 1));
	ttm_device_get_stats(dev, &st);
	assert_int_equal(st.domain[TTM_DOMAIN_VRAM].used, 5 * PAGE);

	x = new_bo(dev, 2, &vram_only);
	assert_int_equal(ttm_bo_domain(x), TTM_DOMAIN_VRAM);
	assert_int_equal(page_of(x), 0);
	assert_int_equal(ttm_bo_domain(bos[0]), TTM_DOMAIN_GTT);
	for (i = 2; i < 8; i += 2)
		assert_int_equal(ttm_bo_domain(bos[i]), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(bos[7]), TTM_DOMAIN_VRAM);
	ttm_device_get_stats(dev, &st);
	assert_int_equal(st.evictions, 1);
	fill(x, 0xabc000);
	for (i = 0; i < 8; i++)
		if (bos[i])
			expect_fill(bos[i], 0x1000 * (i + 1));
	expect_fill(x, 0xabc000);

	/* Back into VRAM: the first free page, nothing evicted. */
	assert_int_equal(validate(bos[0], &vram), 0);
	assert_int_equal(ttm_bo_domain(bos[0]), TTM_DOMAIN_VRAM);
	assert_int_equal(page_of(bos[0]), 3);
	ttm_device_get_stats(dev, &st);
	assert_int_equal(st.evictions, 1);
	for (i = 0; i < 8; i++)
		if (bos[i])
			expect_fill(bos[i], 0x1000 * (i + 1));
	expect_fill(x, 0xabc000);
	for (i = 0; i < 8; i++)
		ttm_bo_put(bos[i]);
	ttm_bo_put(x);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* A range: the buffer lands inside it, and eviction frees it there. */
static void test_range_placement(void **state)
{
	struct ttm_placement high = one_place(TTM_DOMAIN_VRAM, 6, 8, 0);
	struct ttm_device *dev = device(8, 2);
	struct ttm_bo *bos[8], *x;
	unsigned int i;

	(void)state;
	x = new_bo(dev, 1, &high);
	assert_int_equal(page_of(x), 6);
	ttm_bo_put(x);
	for (i = 0; i < 8; i++) {
		bos[i] = new_bo(dev, 1, &vram_gtt);
		fill(bos[i], 0x100 * (i + 1));
	}
	/* The LRU's head is page 0, but only pages 6 and 7 will do. */
	x = new_bo(dev, 1, &high);
	assert_int_equal(page_of(x), 6);
	assert_int_equal(ttm_bo_domain(bos[6]), TTM_DOMAIN_GTT);
	for (i = 0; i < 8; i++) {
		if (i != 6)
			assert_int_equal(ttm_bo_domain(bos[i]),
					 TTM_DOMAIN_VRAM);
		expect_fill(bos[i], 0x100 * (i + 1));
	}
	/* Already inside: validating to the range moves nothing. */
	assert_int_equal(validate(x, &high), 0);
	assert_int_equal(page_of(x), 6);
	/* Outside the new range: it moves, within VRAM. */
	fill(x, 0x77);
	{
		struct ttm_placement low = one_place(TTM_DOMAIN_VRAM, 0, 1, 0);

		assert_int_equal(validate(x, &low), 0);
		assert_int_equal(page_of(x), 0);
		assert_int_equal(ttm_bo_domain(bos[0]), TTM_DOMAIN_GTT);
		expect_fill(x, 0x77);
	}
	for (i = 0; i < 8; i++)
		ttm_bo_put(bos[i]);
	ttm_bo_put(x);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * CONTIGUOUS, as a scanout asks: every range is one span, so the flag
 * changes nothing but must be taken. A buffer of three pages with pages
 * 1, 3 and 4 free out of 6 lands in one run of pages, found by evicting
 * page 2's buffer (the span 1..4), and satisfies the place afterwards:
 * validating again moves nothing. Its words all read back, as do the
 * neighbours'.
 */
static void test_contiguous(void **state)
{
	struct ttm_placement contig = one_place(TTM_DOMAIN_VRAM, 0, 0,
						TTM_PLACE_CONTIGUOUS);
	struct ttm_device *dev = device(6, 2);
	struct ttm_device_stats st;
	struct ttm_bo *bos[6], *x;
	uint64_t moved;
	unsigned int i;

	(void)state;
	for (i = 0; i < 6; i++) {
		bos[i] = new_bo(dev, 1, &vram_gtt);
		fill(bos[i], 0x1000 * (i + 1));
	}
	for (i = 1; i < 5; i++)
		if (i != 2) {
			ttm_bo_put(bos[i]);
			bos[i] = NULL;
		}
	/* Used (unreserved) last: page 2's buffer is the LRU's head. */
	assert_int_equal(validate(bos[0], &vram_only), 0);
	assert_int_equal(validate(bos[5], &vram_only), 0);
	x = new_bo(dev, 3, &contig);
	assert_int_equal(ttm_bo_domain(x), TTM_DOMAIN_VRAM);
	assert_int_equal(page_of(x), 1);
	assert_int_equal(ttm_bo_domain(bos[2]), TTM_DOMAIN_GTT);
	assert_int_equal(ttm_bo_domain(bos[0]), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(bos[5]), TTM_DOMAIN_VRAM);
	fill(x, 0xc0000);
	ttm_device_get_stats(dev, &st);
	moved = st.bytes_moved;
	assert_int_equal(validate(x, &contig), 0);
	ttm_device_get_stats(dev, &st);
	assert_int_equal(st.bytes_moved, moved);
	expect_fill(x, 0xc0000);
	for (i = 0; i < 6; i++)
		if (bos[i])
			expect_fill(bos[i], 0x1000 * (i + 1));
	for (i = 0; i < 6; i++)
		ttm_bo_put(bos[i]);
	ttm_bo_put(x);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* TOPDOWN takes the highest hole; the default the lowest. */
static void test_topdown(void **state)
{
	struct ttm_placement top = one_place(TTM_DOMAIN_VRAM, 0, 0,
					     TTM_PLACE_TOPDOWN);
	struct ttm_placement top_low = one_place(TTM_DOMAIN_VRAM, 0, 4,
						 TTM_PLACE_TOPDOWN);
	struct ttm_device *dev = device(8, 2);
	struct ttm_bo *a, *b, *c, *d;

	(void)state;
	a = new_bo(dev, 2, &top);
	assert_int_equal(page_of(a), 6);
	b = new_bo(dev, 1, &vram_only);
	assert_int_equal(page_of(b), 0);
	c = new_bo(dev, 1, &top);
	assert_int_equal(page_of(c), 5);
	/* Top of a window. */
	d = new_bo(dev, 1, &top_low);
	assert_int_equal(page_of(d), 3);
	ttm_bo_put(a);
	ttm_bo_put(b);
	ttm_bo_put(c);
	ttm_bo_put(d);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * Visible VRAM: CPU_VISIBLE keeps a buffer below it; listed first and
 * again without the flag, VRAM is used past it once the visible part is
 * full, before GTT and without evicting anything.
 */
static void test_visible_vram(void **state)
{
	struct ttm_placement vis = one_place(TTM_DOMAIN_VRAM, 0, 0,
					     TTM_PLACE_CPU_VISIBLE);
	struct ttm_placement vis_any_gtt = {
		.count = 3,
		.places = {
			{ TTM_DOMAIN_VRAM, 0, 0, TTM_PLACE_CPU_VISIBLE },
			{ TTM_DOMAIN_VRAM, 0, 0, 0 },
			{ TTM_DOMAIN_GTT, 0, 0, 0 },
		},
	};
	struct ttm_device *dev = device(8, 2);
	struct ttm_device_stats st;
	struct ttm_bo *hi, *bos[8];
	unsigned int i;

	(void)state;
	assert_int_equal(ttm_device_visible_vram(dev), 2 * PAGE);
	/* Something high, so that the visible part is what is left low. */
	hi = new_bo(dev, 1, &(struct ttm_placement){ 1, {
		{ TTM_DOMAIN_VRAM, 0, 0, TTM_PLACE_TOPDOWN } } });
	for (i = 0; i < 8; i++) {
		bos[i] = new_bo(dev, 1, &vis_any_gtt);
		assert_int_equal(ttm_bo_domain(bos[i]),
				 i < 7 ? TTM_DOMAIN_VRAM : TTM_DOMAIN_GTT);
		if (i < 2)
			assert_true(page_of(bos[i]) < 2);
	}
	ttm_device_get_stats(dev, &st);
	assert_int_equal(st.evictions, 0);
	/* Only the visible part will do: one of its two buffers goes. */
	ttm_bo_put(hi);
	hi = new_bo(dev, 1, &vis);
	assert_true(page_of(hi) < 2);
	ttm_device_get_stats(dev, &st);
	assert_int_equal(st.evictions, 1);
	/* Larger than the visible part: never, at once. */
	assert_int_equal(ttm_bo_create(dev, 3 * PAGE, &vis, 0,
				       &(struct ttm_bo *){ NULL }), -ENOSPC);
	for (i = 0; i < 8; i++)
		ttm_bo_put(bos[i]);
	ttm_bo_put(hi);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * VRAM of two pages has no CPU-visible page by default (a quarter,
 * rounded down): a CPU_VISIBLE place is an empty window, which nothing
 * matches and nothing can be taken in, not the whole of VRAM.
 */
static void test_visible_vram_empty(void **state)
{
	struct ttm_placement vis = one_place(TTM_DOMAIN_VRAM, 0, 0,
					     TTM_PLACE_CPU_VISIBLE);
	struct ttm_placement vram = one_place(TTM_DOMAIN_VRAM, 0, 0, 0);
	struct ttm_device *dev = device(2, 0);
	struct ttm_bo *a, *b;

	(void)state;
	assert_int_equal(ttm_device_visible_vram(dev), 0);
	a = new_bo(dev, 1, &vram);
	b = new_bo(dev, 1, &gtt_only);
	/* Resident in VRAM, but not where the CPU sees it. */
	assert_int_equal(validate(a, &vis), -ENOSPC);
	assert_int_equal(ttm_bo_domain(a), TTM_DOMAIN_VRAM);
	/* Room in VRAM, none of it visible. */
	assert_int_equal(validate(b, &vis), -ENOSPC);
	assert_int_equal(ttm_bo_domain(b), TTM_DOMAIN_GTT);
	ttm_bo_put(a);
	ttm_bo_put(b);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* Init @exec on @dev and lock @bo with its ticket. */
static void lock_one(struct ttm_exec *exec, struct ttm_device *dev,
		     struct ttm_bo *bo)
{
	int ret = 0;

	ttm_exec_init(exec, dev, 0);
	ttm_exec_until_all_locked(exec) {
		ret = ttm_exec_lock_bo(exec, bo);
		ttm_exec_retry_on_contention(exec);
		if (ret)
			break;
	}
	assert_int_equal(ret, 0);
}

struct late_interrupt {
	struct ttm_interrupt_token *token;
	unsigned int ms;
};

/* Interrupt the token's thread after a while: the end of a long wait. */
static void *interrupt_later(void *arg)
{
	struct late_interrupt *li = arg;
	struct timespec ts = {
		.tv_sec = li->ms / 1000,
		.tv_nsec = (long)(li->ms % 1000) * 1000000,
	};

	nanosleep(&ts, NULL);
	ttm_interrupt(li->token);
	return NULL;
}

/*
 * A buffer of the caller's own reservation (allow_res_evict), resident
 * across the edge of the visible VRAM it now needs: only its own range
 * is in the way, and a buffer is never its own victim. No wait can
 * change that: -ENOSPC at once, not room waits until interrupted.
 */
static void test_own_range_in_the_way(void **state)
{
	struct ttm_placement vis = one_place(TTM_DOMAIN_VRAM, 0, 0,
					     TTM_PLACE_CPU_VISIBLE);
	struct ttm_device *dev = device(4, 2);
	struct ttm_operation_ctx ctx = { .interruptible = true };
	struct late_interrupt li = { .ms = 300 };
	struct ttm_bo *x, *a;
	struct ttm_exec exec;
	pthread_t thread;
	int ret = 0;

	(void)state;
	x = new_bo(dev, 1, &vram_only);
	a = new_bo(dev, 2, &vram_only);
	assert_int_equal(page_of(a), 1);
	ttm_bo_put(x);

	ctx.exec = &exec;
	ctx.allow_res_evict = true;
	ctx.resv = ttm_bo_resv(a);
	ttm_exec_init(&exec, dev, 0);
	ttm_exec_until_all_locked(&exec) {
		ret = ttm_exec_lock_bo(&exec, a);
		ttm_exec_retry_on_contention(&exec);
		if (ret)
			break;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(ttm_interrupt_self(&li.token), 0);
	assert_int_equal(pthread_create(&thread, NULL, interrupt_later, &li),
			 0);
	ret = ttm_bo_validate(a, &vis, &ctx);
	ttm_exec_fini(&exec);
	pthread_join(thread, NULL);
	ttm_interrupt_clear();
	ttm_interrupt_token_put(li.token);
	assert_int_equal(ret, -ENOSPC);
	assert_int_equal(page_of(a), 1);
	assert_dev_ok(dev);
	ttm_bo_put(a);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* The driver of test_vetoed_then_pinned(): vetoes @victim once, pinning it. */
struct veto_pin {
	struct ttm_bo *victim;
	unsigned int vetoes;
};

static bool veto_and_pin(struct ttm_bo *bo, enum ttm_domain domain,
			 struct ttm_bo *for_bo, void *data)
{
	struct veto_pin *vp = data;

	(void)domain;
	(void)for_bo;
	if (bo != vp->victim || vp->vetoes)
		return true;
	vp->vetoes++;
	/* As another thread pinning it the moment the veto let it go. */
	assert_int_equal(ttm_bo_pin(bo), 0);
	return false;
}

struct hold_for {
	struct ttm_bo *bo;
	unsigned int ms;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool held;
};

/* Reserve @bo without a ticket, signal, keep it a while, let it go. */
static void *hold_then_release(void *arg)
{
	struct hold_for *h = arg;
	struct timespec ts = {
		.tv_sec = h->ms / 1000,
		.tv_nsec = (long)(h->ms % 1000) * 1000000,
	};

	assert_int_equal(ttm_bo_reserve(h->bo, false, false, NULL), 0);
	pthread_mutex_lock(&h->lock);
	h->held = true;
	pthread_cond_signal(&h->cond);
	pthread_mutex_unlock(&h->lock);
	nanosleep(&ts, NULL);
	ttm_bo_unreserve(h->bo);
	return NULL;
}

/*
 * A vetoed candidate that is pinned before the room wait judges is in
 * the way once, not twice: with it pinned on pages 0-1 and the other
 * buffer only held for a moment on pages 2-3, a job of two pages fits
 * once that one is let go; it must wait, not get -ENOSPC.
 */
static void test_vetoed_then_pinned(void **state)
{
	struct veto_pin vp = { 0 };
	const struct ttm_device_funcs funcs = {
		.eviction_valuable = veto_and_pin,
	};
	struct ttm_device_options opts = {
		.vram_size = 4 * PAGE,
		.gtt_size = 64 * PAGE,
		.funcs = &funcs,
		.funcs_data = &vp,
	};
	struct hold_for h = { .ms = 100 };
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_device *dev;
	struct ttm_bo *v, *w, *x;
	struct ttm_exec exec;
	pthread_t thread;
	int ret = 0;

	(void)state;
	assert_int_equal(ttm_device_create(&opts, &dev), 0);
	v = new_bo(dev, 2, &vram_only);
	w = new_bo(dev, 2, &vram_only);
	x = new_bo(dev, 2, &system_only);
	assert_int_equal(page_of(w), 2);
	vp.victim = v;

	h.bo = w;
	pthread_mutex_init(&h.lock, NULL);
	pthread_cond_init(&h.cond, NULL);
	assert_int_equal(pthread_create(&thread, NULL, hold_then_release, &h),
			 0);
	pthread_mutex_lock(&h.lock);
	while (!h.held)
		pthread_cond_wait(&h.cond, &h.lock);
	pthread_mutex_unlock(&h.lock);

	ctx.exec = &exec;
	lock_one(&exec, dev, x);
	ret = ttm_bo_validate(x, &vram_only, &ctx);
	ttm_exec_fini(&exec);
	pthread_join(thread, NULL);
	pthread_cond_destroy(&h.cond);
	pthread_mutex_destroy(&h.lock);
	assert_int_equal(vp.vetoes, 1);
	assert_int_equal(ret, 0);
	assert_int_equal(page_of(x), 2);
	assert_int_equal(ttm_bo_domain(w), TTM_DOMAIN_GTT);
	assert_dev_ok(dev);

	unpin_bo(v);
	ttm_bo_put(v);
	ttm_bo_put(w);
	ttm_bo_put(x);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * Pinned buffers on pages 1 and 3 of 4 leave two free pages but never a
 * hole of two: a ticketed job gets -ENOSPC at once, counted, rather than
 * waiting for room that cannot come; once unpinned, the same job fits.
 */
static void test_never_fits_by_holes(void **state)
{
	struct ttm_device *dev = device(4, 1);
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_device_stats st;
	struct ttm_bo *bos[4], *x;
	struct ttm_exec exec;
	unsigned int i;

	(void)state;
	for (i = 0; i < 4; i++)
		bos[i] = new_bo(dev, 1, &vram_only);
	pin_bo(bos[1]);
	pin_bo(bos[3]);
	ttm_bo_put(bos[0]);
	ttm_bo_put(bos[2]);
	x = new_bo(dev, 2, &system_only);

	ctx.exec = &exec;
	lock_one(&exec, dev, x);
	assert_int_equal(ttm_bo_validate(x, &vram_only, &ctx), -ENOSPC);
	ttm_exec_fini(&exec);
	ttm_device_get_stats(dev, &st);
	assert_int_equal(st.enospc, 1);
	assert_int_equal(st.room_waits, 0);

	unpin_bo(bos[3]);
	assert_int_equal(validate(x, &vram_only), 0);
	assert_int_equal(page_of(x), 2);
	assert_int_equal(ttm_bo_domain(bos[3]), TTM_DOMAIN_GTT);
	unpin_bo(bos[1]);
	ttm_bo_put(bos[1]);
	ttm_bo_put(bos[3]);
	ttm_bo_put(x);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * Lock the job @e[0..@n) under a ticket and validate it with the entries
 * helper; first, if @alone, check that it alone gets -ENOSPC.
 */
static int validate_job(struct ttm_device *dev, struct ttm_exec_entry *e,
			unsigned int n, struct ttm_bo *alone,
			unsigned int *ret_failed)
{
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_exec exec;
	unsigned int i;
	int ret = 0;

	ctx.exec = &exec;
	ttm_exec_init(&exec, dev, 0);
	ttm_exec_until_all_locked(&exec) {
		for (i = 0; i < n; i++) {
			ret = ttm_exec_lock_bo(&exec, e[i].bo);
			ttm_exec_retry_on_contention(&exec);
			if (ret)
				break;
		}
		if (ret)
			break;
		if (alone)
			assert_int_equal(ttm_bo_validate(alone, &vram_only,
							 &ctx), -ENOSPC);
		ret = ttm_exec_entries_validate(e, n, &ctx, ret_failed);
		ttm_exec_retry_on_contention(&exec);
	}
	ttm_exec_fini(&exec);
	return ret;
}

/*
 * A job's own VRAM-only buffers on pages 1 and 3 of 5, the rest free:
 * five free pages in all, but no hole of three for its third buffer
 * between them, and they can go nowhere else. ttm_bo_validate() says
 * -ENOSPC (the job's buffers stay); the entries helper packs the job
 * again, the largest first, and it fits, contents intact.
 */
static void test_job_repacked(void **state)
{
	struct ttm_device *dev = device(5, 1);
	struct ttm_exec_entry e[3];
	struct ttm_bo *bos[5], *c;
	unsigned int i, failed = 99;
	int ret = 0;

	(void)state;
	for (i = 0; i < 5; i++)
		bos[i] = new_bo(dev, 1, &vram_only);
	for (i = 0; i < 5; i += 2)
		ttm_bo_put(bos[i]);
	c = new_bo(dev, 3, &system_only);
	fill(bos[1], 0x1000);
	fill(bos[3], 0x3000);
	fill(c, 0xc000);
	e[0] = (struct ttm_exec_entry){ .bo = bos[1], .index = 0 };
	e[1] = (struct ttm_exec_entry){ .bo = bos[3], .index = 1 };
	e[2] = (struct ttm_exec_entry){ .bo = c, .placement = &vram_only,
					.index = 2 };

	/* Alone, the validation finds no hole beside the job's. */
	ret = validate_job(dev, e, 3, c, &failed);
	assert_int_equal(ret, 0);
	assert_int_equal(failed, 99);
	for (i = 0; i < 3; i++)
		assert_int_equal(ttm_bo_domain(e[i].bo), TTM_DOMAIN_VRAM);
	assert_int_equal(page_of(c), 0);
	assert_dev_ok(dev);
	expect_fill(bos[1], 0x1000);
	expect_fill(bos[3], 0x3000);
	expect_fill(c, 0xc000);
	ttm_bo_put(bos[1]);
	ttm_bo_put(bos[3]);
	ttm_bo_put(c);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * A job of two buffers of two pages in VRAM of four, two of them
 * visible: A anywhere, B visible only. A, validated first, takes the
 * visible pages (first fit), so B finds no hole beside the job's own.
 * The job fits (A high, B low): the repack must find it, not -ENOSPC.
 */
static void test_repack_windows(void **state)
{
	struct ttm_placement vis = one_place(TTM_DOMAIN_VRAM, 0, 0,
					     TTM_PLACE_CPU_VISIBLE);
	struct ttm_device *dev = device(4, 2);
	struct ttm_exec_entry e[2];
	struct ttm_bo *a, *b;
	unsigned int failed = 99;
	int ret;

	(void)state;
	a = new_bo(dev, 2, &system_only);
	b = new_bo(dev, 2, &system_only);
	fill(a, 0xa000);
	fill(b, 0xb000);
	e[0] = (struct ttm_exec_entry){ .bo = a, .placement = &vram_only,
					.index = 0 };
	e[1] = (struct ttm_exec_entry){ .bo = b, .placement = &vis,
					.index = 1 };

	ret = validate_job(dev, e, 2, NULL, &failed);
	assert_int_equal(ret, 0);
	assert_int_equal(failed, 99);
	assert_int_equal(ttm_bo_domain(a), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(b), TTM_DOMAIN_VRAM);
	assert_int_equal(page_of(b), 0);
	assert_int_equal(page_of(a), 2);
	assert_dev_ok(dev);
	expect_fill(a, 0xa000);
	expect_fill(b, 0xb000);
	ttm_bo_put(a);
	ttm_bo_put(b);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * A buffer whose own range is in the way of its window: pinned page 0,
 * page 1 free, the buffer on pages 2-3, its window [0, 3). The only hole
 * it could take overlaps where it is now: the helper takes it out and
 * back, to pages 1-2.
 */
static void test_repack_self(void **state)
{
	struct ttm_placement low3 = one_place(TTM_DOMAIN_VRAM, 0, 3, 0);
	struct ttm_device *dev = device(4, 1);
	struct ttm_bo *p, *x, *b;
	struct ttm_exec_entry e;
	unsigned int failed = 99;

	(void)state;
	p = new_bo(dev, 1, &vram_only);
	x = new_bo(dev, 1, &vram_only);
	b = new_bo(dev, 2, &vram_only);
	assert_int_equal(page_of(b), 2);
	pin_bo(p);
	ttm_bo_put(x);
	fill(b, 0xb000);
	e = (struct ttm_exec_entry){ .bo = b, .placement = &low3 };
	assert_int_equal(validate_job(dev, &e, 1, NULL, &failed), 0);
	assert_int_equal(failed, 99);
	assert_int_equal(ttm_bo_domain(b), TTM_DOMAIN_VRAM);
	assert_int_equal(page_of(b), 1);
	assert_dev_ok(dev);
	expect_fill(b, 0xb000);
	unpin_bo(p);
	ttm_bo_put(p);
	ttm_bo_put(b);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * The arena is real memory: buffers at neighbouring offsets written to
 * the last byte keep each other's contents, across creation, eviction
 * and coming back.
 */
static void test_neighbours_intact(void **state)
{
	struct ttm_device *dev = device(16, 4);
	struct ttm_bo *bos[16];
	unsigned int i, round;

	(void)state;
	for (i = 0; i < 16; i++) {
		bos[i] = new_bo(dev, 1 + i % 3, &vram_gtt);
		fill(bos[i], 0x10000 * (i + 1));
	}
	for (round = 0; round < 8; round++) {
		struct ttm_bo *bo = bos[(round * 5) % 16];

		assert_int_equal(validate(bo, &vram_only), 0);
		for (i = 0; i < 16; i++)
			expect_fill(bos[i], 0x10000 * (i + 1));
	}
	for (i = 0; i < 16; i++)
		ttm_bo_put(bos[i]);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fragmentation),
		cmocka_unit_test(test_range_placement),
		cmocka_unit_test(test_contiguous),
		cmocka_unit_test(test_topdown),
		cmocka_unit_test(test_visible_vram),
		cmocka_unit_test(test_visible_vram_empty),
		cmocka_unit_test(test_own_range_in_the_way),
		cmocka_unit_test(test_vetoed_then_pinned),
		cmocka_unit_test(test_never_fits_by_holes),
		cmocka_unit_test(test_job_repacked),
		cmocka_unit_test(test_repack_windows),
		cmocka_unit_test(test_repack_self),
		cmocka_unit_test(test_neighbours_intact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
