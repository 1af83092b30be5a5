// SPDX-License-Identifier: MIT
/*
 * The kernel's KUnit suite for ttm_bo_validate() (drivers/gpu/drm/ttm/
 * tests/ttm_bo_validate_test.c) as cmocka cases on ttmsim, written for
 * ttmsim, plus the cases of the range-manager suites (drivers/gpu/drm/ttm/
 * tests/ttm_resource_test.c, drivers/gpu/drm/tests/drm_mm_test.c) that
 * say something about the buffer layer: a range, TOPDOWN, eviction that
 * opens a hole. bo/range_mgr.c itself has its unit tests in
 * tests/test_range_mgr.c. Every case runs in both reservation classes
 * (the kernel has only Wait-Die); the class matters where eviction takes
 * a ticket (test_enospc_by_holes).
 *
 * The kernel's mock managers are ttmsim's VRAM and GTT domains, 1 MiB
 * each (its MANAGER_SIZE) in pages of 4 KiB; its ctx.bytes_moved is the
 * device's bytes_moved counter. Where ttmsim says -EINVAL or -ENOSPC the
 * kernel says -ENOMEM (an unknown memory type, no room): ttmsim's errors
 * tell a bad call from a full domain.
 *
 * drm_mm_test.c's cases at the buffer layer: insert and insert_range
 * (test_validate_range), topdown, bottomup, lowest and highest
 * (test_validate_topdown), frag and evict (test_evict_frag), evict_range
 * (test_evict_range, test_evict_range_edges). The issue's -ENOSPC judged
 * by holes has two cases of its own (test_enospc_by_holes*).
 *
 * Kernel cases with no equivalent here:
 * - ttm_bo_validate_failed_alloc (the "bad" manager whose allocation
 *   always fails): ttmsim's domains have no failing allocator to plug in;
 *   a move hook's veto is tested in tests/test_bo_hooks.c.
 * - ttm_bo_validate_no_placement_signaled, _not_signaled: an empty
 *   placement drops the buffer's resource (pipeline gutting); ttmsim has
 *   no buffer without memory, and refuses an empty placement (-EINVAL,
 *   checked in test_validate_invalid_placement).
 * - ttm_bo_validate_move_fence_signaled: a manager's pipelined move fence
 *   that has already signalled; ttmsim's nearest thing, a move source
 *   still in flight, is gone once its copy signals, so there is nothing
 *   left to observe (the unsignalled one is test_move_fence_not_signaled).
 * - The kernel's "sg" parameter of the init cases: ttmsim makes sg
 *   buffers only by import (ttm_bo_import()), and ttm_bo_init_reserved()
 *   refuses the type (checked).
 * - The bo_type parameter of ttm_bo_validate_basic and _multihop:
 *   ttmsim's validation does not look at the type; the init cases take
 *   each type.
 * - ttm_resource_test.c's cases on struct ttm_resource and its manager
 *   (init, fini, set_used, the system manager's alloc and free) test
 *   kernel objects that ttmsim keeps private; their visible effect, a
 *   domain's usage in whole pages, is test_resource_manager_usage;
 *   init_pinned's pinned list is tests/test_bo_kunit.c's pin cases.
 * - drm_mm_test.c's init, debug, align32/64, reserve, replace, color and
 *   color_evict: the allocator's own API (tests/test_range_mgr.c), or
 *   alignment and colouring, which ttmsim's places do not have.
 */
#include <string.h>
#include <time.h>

#include "lib/bo_helpers.h"

#include "ttmsim/exec.h"
#include "ttmsim/fence.h"
#include "ttmsim/gpu.h"
#include "ttmsim/lru.h"
#include "ttmsim/resv.h"
#include "util/compiler.h"

#define PAGE (4 * KiB)
#define MANAGER_SIZE (1024 * KiB)
#define BO_SIZE PAGE
#define WORDS (PAGE / 4)

static const bool wound_wait_true = true, wound_wait_false = false;

#define KUNIT_CASE_CLASS(fn, ww, cls)                                   \
	{ .name = #fn "(" cls ")", .test_func = fn,                     \
	  .setup_func = setup, .teardown_func = teardown,               \
	  .initial_state = (void *)&wound_wait_##ww }
#define KUNIT_CASES(fn)                                                 \
	KUNIT_CASE_CLASS(fn, true, "wound-wait"),                       \
	KUNIT_CASE_CLASS(fn, false, "wait-die")

/* A place: domain, pages [f, l), flags. */
#define PLACE(d, f, l, fl)                                              \
	{ .domain = TTM_DOMAIN_##d, .fpfn = (f), .lpfn = (l), .flags = (fl) }
#define PLACEMENT(...)                                                  \
	((const struct ttm_placement){                                  \
		sizeof((struct ttm_place[]){ __VA_ARGS__ }) /           \
			sizeof(struct ttm_place),                       \
		{ __VA_ARGS__ } })

/*
 * The device is made by each case (dev_init()), as the kernel's cases
 * set up their managers; teardown() checks it and destroys it, which
 * fails if a buffer was left behind.
 */
struct kfix {
	bool wound_wait;
	struct ttm_gpu *gpu;
	struct ttm_device *dev;
	struct watchdog wd;
};

static int setup(void **state)
{
	struct kfix *k = calloc(1, sizeof(*k));

	if (!k)
		return -1;
	k->wound_wait = *(const bool *)*state;
	checks_reset(state);
	/*
	 * Validations here are interruptible: a wait that should not be
	 * (a broken no_wait_gpu or -ENOSPC) ends with -EINTR, and the case
	 * fails, rather than hanging until the suite's timeout.
	 */
	watchdog_start(&k->wd);
	*state = k;
	return 0;
}

static struct ttm_device_stats stats(struct kfix *k);

static int teardown(void **state)
{
	struct kfix *k = *state;

	assert_false(watchdog_stop(&k->wd));
	if (k->dev) {
		if (k->gpu)
			assert_int_equal(ttm_gpu_advance(k->gpu, 1000000), 0);
		assert_dev_ok(k->dev);
		ttm_device_flush_destroys(k->dev);
		/*
		 * A failed case leaves its buffers: leak the device rather
		 * than have the checker abort on destroying it.
		 */
		if (stats(k).buffers)
			fail_msg("%llu buffers left",
				 (unsigned long long)stats(k).buffers);
		assert_int_equal(ttm_device_destroy(k->dev), 0);
	}
	ttm_gpu_destroy(k->gpu);
	free(k);
	assert_checks_passed();
	return 0;
}

/*
 * A device of @vram bytes of VRAM and MANAGER_SIZE of GTT (0: both
 * MANAGER_SIZE), in pages of 4 KiB, CPU moves; @opts (may be NULL) for
 * the rest.
 */
static struct ttm_device *dev_init(struct kfix *k, uint64_t vram,
				   struct ttm_device_options *opts)
{
	struct ttm_device_options o = { 0 };

	if (opts)
		o = *opts;
	o.vram_size = vram ? vram : MANAGER_SIZE;
	o.gtt_size = MANAGER_SIZE;
	o.page_size = PAGE;
	o.wound_wait = k->wound_wait;
	assert_int_equal(ttm_device_create(&o, &k->dev), 0);
	return k->dev;
}

static struct ttm_device_stats stats(struct kfix *k)
{
	struct ttm_device_stats s;

	ttm_device_get_stats(k->dev, &s);
	return s;
}

static uint64_t used(struct kfix *k, enum ttm_domain d)
{
	return stats(k).domain[d].used;
}

static struct ttm_bo *bo_new(struct kfix *k, uint64_t size,
			     const struct ttm_placement *placement)
{
	struct ttm_bo *bo = NULL;

	assert_int_equal(ttm_bo_create(k->dev, size, placement, 0, &bo), 0);
	assert_dev_ok(k->dev);
	return bo;
}

/* Reserve, validate, unreserve; the validation's return. */
static int validate_ctx(struct ttm_bo *bo, const struct ttm_placement *pl,
			struct ttm_operation_ctx *ctx)
{
	int ret;

	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	ret = ttm_bo_validate(bo, pl, ctx);
	ttm_bo_unreserve(bo);
	assert_dev_ok(ttm_bo_device(bo));
	return ret;
}

static int validate(struct ttm_bo *bo, const struct ttm_placement *pl)
{
	struct ttm_operation_ctx ctx = { .interruptible = true };

	return validate_ctx(bo, pl, &ctx);
}

/* Read under the reservation: a move changes the offset. */
static uint64_t offset_of(struct ttm_bo *bo)
{
	uint64_t off;

	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	off = ttm_bo_offset(bo);
	ttm_bo_unreserve(bo);
	return off;
}

/* Words seed << 16 | index, page after page; unreserving bumps the LRU. */
static void fill(struct ttm_bo *bo, uint32_t seed)
{
	uint32_t words[WORDS];
	uint64_t off;
	unsigned int i;

	for (i = 0; i < WORDS; i++)
		words[i] = seed << 16 | i;
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	for (off = 0; off < ttm_bo_size(bo); off += PAGE)
		assert_int_equal(ttm_bo_write(bo, off, words, PAGE), 0);
	ttm_bo_unreserve(bo);
}

/* Reads without unreserving: the LRU order stays as the test set it. */
static void expect_fill(struct ttm_bo *bo, uint32_t seed)
{
	uint32_t words[WORDS];
	uint64_t off;
	unsigned int i;

	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	for (off = 0; off < ttm_bo_size(bo); off += PAGE) {
		assert_int_equal(ttm_bo_read(bo, off, words, PAGE), 0);
		for (i = 0; i < WORDS; i++)
			if (words[i] != (seed << 16 | i))
				fail_msg("offset %llu word %u: %#x, not %#x",
					 (unsigned long long)off, i, words[i],
					 seed << 16 | i);
	}
	ww_mutex_unlock(&ttm_bo_resv(bo)->lock);
}

static struct ttm_fence *new_fence(void)
{
	struct ttm_fence *fence = NULL;

	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1,
					  &fence), 0);
	return fence;
}

/* @fence into @bo's reservation, WRITE usage, as a job writing it. */
static void make_busy(struct ttm_bo *bo, struct ttm_fence *fence)
{
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_resv_reserve_fences(ttm_bo_resv(bo), 1), 0);
	ttm_resv_add_fence(ttm_bo_resv(bo), fence, TTM_RESV_USAGE_WRITE);
	ww_mutex_unlock(&ttm_bo_resv(bo)->lock);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

/* The kernel's signalling kthread: signal after 20 ms. */
static void *signal_later(void *arg)
{
	sleep_ms(20);
	ttm_fence_signal(arg, 0);
	return NULL;
}

/* ---- init ------------------------------------------------------------ */

struct kobj {
	struct ttm_bo bo;
	int *destroyed;
};

static void kobj_destroy(struct ttm_bo *bo)
{
	struct kobj *o = container_of(bo, struct kobj, bo);

	(*o->destroyed)++;
	free(o);
}

/* ttm_bo_init_reserved() of a @type buffer in @domain, checked. */
static void init_reserved_in(struct kfix *k, enum ttm_bo_type type,
			     enum ttm_domain domain)
{
	const struct ttm_placement pl = { 1, { TTM_PLACE_INIT(domain) } };
	struct ttm_device_stats before = stats(k), after;
	struct kobj *o = calloc(1, sizeof(*o));
	int destroyed = 0;

	assert_non_null(o);
	o->destroyed = &destroyed;
	assert_int_equal(ttm_bo_init_reserved(k->dev, &o->bo, type, BO_SIZE,
					      &pl, NULL, NULL, NULL,
					      kobj_destroy), 0);
	/* Returned reserved, with no ticket, on its own reservation. */
	assert_true(ww_mutex_is_locked(&ttm_bo_resv(&o->bo)->lock));
	assert_null(ww_mutex_owner_ctx(&ttm_bo_resv(&o->bo)->lock));
	assert_ptr_equal(ttm_bo_resv(&o->bo), &o->bo.base);
	assert_ptr_equal(ttm_bo_device(&o->bo), k->dev);
	assert_int_equal(ttm_bo_type(&o->bo), type);
	assert_int_equal(ttm_bo_pin_count(&o->bo), 0);
	assert_int_equal(ttm_bo_domain(&o->bo), domain);
	/* First fit in an empty domain: page 0 (SYSTEM: no address). */
	assert_int_equal(ttm_bo_offset(&o->bo), 0);
	after = stats(k);
	assert_int_equal(after.domain[domain].used - before.domain[domain].used,
			 BO_SIZE);
	assert_int_equal(after.domain[domain].buffers,
			 before.domain[domain].buffers + 1);
	/* Created in place: nothing was moved. */
	assert_int_equal(after.moves, before.moves);
	ttm_bo_unreserve(&o->bo);
	assert_dev_ok(k->dev);
	ttm_bo_put(&o->bo);
	assert_int_equal(destroyed, 1);
	assert_int_equal(used(k, domain), before.domain[domain].used);
}

/*
 * kernel: ttm_bo_init_reserved_sys_man, device and kernel buffers (sg:
 * refused, ttmsim's sg buffers are imports).
 */
static void test_init_reserved_sys_man(void **state)
{
	const struct ttm_placement pl = TTM_PLACEMENT_SYSTEM_INIT;
	struct kfix *k = *state;
	struct kobj o;

	dev_init(k, 0, NULL);
	init_reserved_in(k, TTM_BO_TYPE_DEVICE, TTM_DOMAIN_SYSTEM);
	init_reserved_in(k, TTM_BO_TYPE_KERNEL, TTM_DOMAIN_SYSTEM);
	assert_int_equal(ttm_bo_init_reserved(k->dev, &o.bo, TTM_BO_TYPE_SG,
					      BO_SIZE, &pl, NULL, NULL, NULL,
					      kobj_destroy), -EINVAL);
}

/* kernel: ttm_bo_init_reserved_mock_man: in VRAM and in GTT. */
static void test_init_reserved_mock_man(void **state)
{
	struct kfix *k = *state;

	dev_init(k, 0, NULL);
	init_reserved_in(k, TTM_BO_TYPE_DEVICE, TTM_DOMAIN_VRAM);
	init_reserved_in(k, TTM_BO_TYPE_KERNEL, TTM_DOMAIN_VRAM);
	init_reserved_in(k, TTM_BO_TYPE_DEVICE, TTM_DOMAIN_GTT);
	init_reserved_in(k, TTM_BO_TYPE_KERNEL, TTM_DOMAIN_GTT);
}

/* kernel: ttm_bo_init_reserved_resv: the buffer takes the given one. */
static void test_init_reserved_resv(void **state)
{
	const struct ttm_placement pl = TTM_PLACEMENT_SYSTEM_INIT;
	struct kfix *k = *state;
	struct kobj *o = calloc(1, sizeof(*o));
	struct ttm_resv resv;
	int destroyed = 0;

	dev_init(k, 0, NULL);
	assert_non_null(o);
	o->destroyed = &destroyed;
	ttm_resv_init(&resv, ttm_device_ww_class(k->dev));
	assert_int_equal(ww_mutex_lock(&resv.lock, NULL), 0);
	assert_int_equal(ttm_bo_init_reserved(k->dev, &o->bo,
					      TTM_BO_TYPE_DEVICE, BO_SIZE,
					      &pl, NULL, NULL, &resv,
					      kobj_destroy), 0);
	assert_ptr_equal(ttm_bo_resv(&o->bo), &resv);
	ww_mutex_unlock(&resv.lock);
	ttm_bo_put(&o->bo);
	assert_int_equal(destroyed, 1);
	ttm_resv_fini(&resv);
}

/* ---- validate -------------------------------------------------------- */

/*
 * kernel: ttm_bo_validate_basic: SYSTEM to VRAM, TOPDOWN: the buffer
 * lands at the top of VRAM, contents intact, its bytes moved once.
 */
static void test_validate_basic(void **state)
{
	const struct ttm_placement top = PLACEMENT(
		PLACE(VRAM, 0, 0, TTM_PLACE_TOPDOWN));
	struct kfix *k = *state;
	struct ttm_bo *bo;

	dev_init(k, 0, NULL);
	bo = bo_new(k, 2 * PAGE, &system_only);
	fill(bo, 1);
	assert_int_equal(validate(bo, &top), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(offset_of(bo), MANAGER_SIZE - 2 * PAGE);
	assert_int_equal(stats(k).bytes_moved, 2 * PAGE);
	assert_int_equal(stats(k).moves, 1);
	assert_int_equal(used(k, TTM_DOMAIN_SYSTEM), 0);
	expect_fill(bo, 1);
	ttm_bo_put(bo);
}

/*
 * kernel: ttm_bo_validate_invalid_placement: an unknown domain (and an
 * empty placement, the kernel's no_placement cases): -EINVAL, the buffer
 * untouched.
 */
static void test_validate_invalid_placement(void **state)
{
	const struct ttm_placement unknown = { 1, {
		{ .domain = TTM_DOMAIN_COUNT } } };
	const struct ttm_placement empty = { 0 };
	struct kfix *k = *state;
	struct ttm_bo *bo;

	dev_init(k, 0, NULL);
	bo = bo_new(k, BO_SIZE, &vram_only);
	fill(bo, 2);
	assert_int_equal(validate(bo, &unknown), -EINVAL);
	assert_int_equal(validate(bo, &empty), -EINVAL);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(stats(k).moves, 0);
	expect_fill(bo, 2);
	ttm_bo_put(bo);
}

/*
 * kernel: ttm_bo_validate_pinned: a pinned buffer is not moved: -EINVAL,
 * in place, contents intact; validating it to where it is, is fine.
 */
static void test_validate_pinned(void **state)
{
	struct kfix *k = *state;
	struct ttm_bo *bo;

	dev_init(k, 0, NULL);
	bo = bo_new(k, BO_SIZE, &vram_only);
	fill(bo, 3);
	pin_bo(bo);
	assert_int_equal(validate(bo, &gtt_only), -EINVAL);
	assert_int_equal(validate(bo, &system_only), -EINVAL);
	/* Another range of its own domain is a move too. */
	assert_int_equal(validate(bo, &PLACEMENT(PLACE(VRAM, 8, 0, 0))),
			 -EINVAL);
	assert_int_equal(offset_of(bo), 0);
	assert_int_equal(validate(bo, &vram_gtt), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(stats(k).moves, 0);
	expect_fill(bo, 3);
	unpin_bo(bo);
	ttm_bo_put(bo);
}

/*
 * kernel: ttm_bo_validate_same_placement, SYSTEM and VRAM ("mock")
 * managers: already there, nothing moves.
 */
static void same_placement(struct kfix *k, const struct ttm_placement *pl)
{
	struct ttm_bo *bo;
	uint64_t off;

	bo = bo_new(k, BO_SIZE, &system_only);
	assert_int_equal(validate(bo, pl), 0);
	off = offset_of(bo);
	assert_int_equal(stats(k).bytes_moved, pl == &system_only ? 0 :
			 BO_SIZE);
	assert_int_equal(validate(bo, pl), 0);
	assert_int_equal(offset_of(bo), off);
	assert_int_equal(stats(k).bytes_moved, pl == &system_only ? 0 :
			 BO_SIZE);
	ttm_bo_put(bo);
}

static void test_validate_same_placement(void **state)
{
	struct kfix *k = *state;

	dev_init(k, 0, NULL);
	same_placement(k, &system_only);
	same_placement(k, &vram_only);
}

/*
 * kernel: ttm_bo_validate_busy_placement: the first place cannot take
 * the buffer (the kernel's "bad" manager; here VRAM full of a pinned
 * buffer), so it lands in the second, GTT, whose LRU is then just it.
 */
static void test_validate_busy_placement(void **state)
{
	struct kfix *k = *state;
	struct ttm_bo *full, *bo, *lru[2];

	dev_init(k, 0, NULL);
	full = bo_new(k, MANAGER_SIZE, &vram_only);
	pin_bo(full);
	bo = bo_new(k, BO_SIZE, &system_only);
	assert_int_equal(validate(bo, &vram_gtt), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_GTT);
	assert_int_equal(stats(k).bytes_moved, BO_SIZE);
	assert_int_equal(ttm_device_lru_snapshot(k->dev, TTM_DOMAIN_GTT, lru, 2),
			 1);
	assert_ptr_equal(lru[0], bo);
	ttm_bo_put(lru[0]);
	assert_int_equal(stats(k).enospc, 0);
	ttm_bo_put(bo);
	unpin_bo(full);
	ttm_bo_put(full);
}

/* A driver whose VRAM to SYSTEM moves bounce through GTT. */
static int hop_move(struct ttm_bo *bo, enum ttm_domain from,
		    enum ttm_domain to, const struct ttm_gpu_range *src,
		    const struct ttm_gpu_range *dst,
		    const struct ttm_operation_ctx *ctx, void *data,
		    struct ttm_fence **ret_fence, enum ttm_domain *ret_hop)
{
	int *calls = data;

	(void)bo;
	(void)src;
	(void)dst;
	(void)ctx;
	(void)ret_fence;
	(*calls)++;
	if (from == TTM_DOMAIN_VRAM && to == TTM_DOMAIN_SYSTEM) {
		*ret_hop = TTM_DOMAIN_GTT;
		return -EMULTIHOP;
	}
	return TTM_MOVE_DEFAULT;
}

/*
 * kernel: ttm_bo_validate_multihop: VRAM to SYSTEM through GTT: the
 * bytes move twice, the hop leaves nothing behind in GTT.
 */
static void test_validate_multihop(void **state)
{
	static const struct ttm_device_funcs funcs = { .move = hop_move };
	struct kfix *k = *state;
	int calls = 0;
	struct ttm_device_options o = { .funcs = &funcs,
					.funcs_data = &calls };
	struct ttm_bo *bo;

	dev_init(k, 0, &o);
	bo = bo_new(k, BO_SIZE, &vram_only);
	fill(bo, 4);
	assert_int_equal(validate(bo, &system_only), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_SYSTEM);
	assert_int_equal(stats(k).bytes_moved, 2 * BO_SIZE);
	/* Asked for VRAM->SYSTEM (a hop), then VRAM->GTT, GTT->SYSTEM. */
	assert_int_equal(calls, 3);
	assert_int_equal(used(k, TTM_DOMAIN_GTT), 0);
	assert_int_equal(used(k, TTM_DOMAIN_VRAM), 0);
	expect_fill(bo, 4);
	ttm_bo_put(bo);
}

/*
 * Not a kernel case: moves between every pair of domains, each with
 * its contents intact (the kernel checks only the resource's type).
 */
static void test_validate_domains_contents(void **state)
{
	static const enum ttm_domain order[] = {
		TTM_DOMAIN_VRAM, TTM_DOMAIN_GTT, TTM_DOMAIN_SYSTEM,
		TTM_DOMAIN_VRAM, TTM_DOMAIN_SYSTEM, TTM_DOMAIN_GTT,
		TTM_DOMAIN_VRAM,
	};
	struct kfix *k = *state;
	struct ttm_bo *bo, *other, *other_gtt;
	unsigned int i;

	dev_init(k, 0, NULL);
	/* Another buffer at page 0 of each, so that offsets are not 0. */
	other = bo_new(k, PAGE, &vram_only);
	other_gtt = bo_new(k, PAGE, &gtt_only);
	fill(other, 6);
	fill(other_gtt, 7);
	bo = bo_new(k, 3 * PAGE, &system_only);
	fill(bo, 5);
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		const struct ttm_placement pl = {
			1, { TTM_PLACE_INIT(order[i]) } };

		assert_int_equal(validate(bo, &pl), 0);
		assert_int_equal(ttm_bo_domain(bo), order[i]);
		expect_fill(bo, 5);
	}
	assert_int_equal(offset_of(bo), PAGE);
	expect_fill(other, 6);
	expect_fill(other_gtt, 7);
	assert_int_equal(stats(k).bytes_moved, ARRAY_SIZE(order) * 3 * PAGE);
	ttm_bo_put(bo);
	ttm_bo_put(other);
	ttm_bo_put(other_gtt);
}

/* ---- busy buffers and moves in flight ---------------------------------- */

/*
 * kernel: ttm_bo_validate_move_fence_not_signaled, "Waits for GPU" and
 * "Tries to lock straight away". VRAM's room was x's, the source of a
 * move whose copy has not run (the kernel's manager move fence); GTT is
 * full and pinned. The eviction is pipelined: the room is free at once.
 * Not waiting, the buffer gets VRAM at once, its own copy ordered after
 * x's (the fence in its reservation), and both contents survive; with
 * no_wait_gpu, using that room means waiting for the GPU: -EBUSY and
 * nothing changes. (The kernel's fallback place takes the buffer there;
 * ttmsim tries every place without evicting first, so a fallback with
 * room would take it in both cases and nothing would show the wait.)
 */
static void move_fence_not_signaled(struct kfix *k, bool no_wait)
{
	struct ttm_gpu_options go = { .flags = TTM_GPU_DETERMINISTIC };
	struct ttm_operation_ctx ctx = { .interruptible = true,
					 .no_wait_gpu = no_wait };
	struct ttm_device_options o = { 0 };
	struct ttm_bo *x, *z, *y;

	assert_int_equal(ttm_gpu_create(1, &go, &k->gpu), 0);
	o.gpu = k->gpu;
	dev_init(k, 0, &o);
	x = bo_new(k, MANAGER_SIZE, &vram_only);
	fill(x, 7);
	z = bo_new(k, MANAGER_SIZE, &gtt_only);
	pin_bo(z);
	y = bo_new(k, BO_SIZE, &system_only);
	fill(y, 8);
	assert_int_equal(validate(x, &system_only), 0);
	/* The copy has not run, but VRAM's room is free already. */
	assert_int_equal(used(k, TTM_DOMAIN_VRAM), 0);
	if (no_wait) {
		assert_int_equal(validate_ctx(y, &vram_gtt, &ctx), -EBUSY);
		assert_int_equal(ttm_bo_domain(y), TTM_DOMAIN_SYSTEM);
		assert_int_equal(used(k, TTM_DOMAIN_VRAM), 0);
		assert_int_equal(stats(k).enospc, 0);
	} else {
		assert_int_equal(validate_ctx(y, &vram_gtt, &ctx), 0);
		assert_int_equal(ttm_bo_domain(y), TTM_DOMAIN_VRAM);
		assert_int_equal(offset_of(y), 0);
		/* Nothing ran meanwhile: validation did not wait. */
		assert_false(ttm_resv_test_signaled(ttm_bo_resv(x),
						    TTM_RESV_USAGE_KERNEL));
	}
	assert_int_equal(ttm_gpu_advance(k->gpu, 1000000), 0);
	expect_fill(x, 7);
	expect_fill(y, 8);
	unpin_bo(z);
	ttm_bo_put(x);
	ttm_bo_put(y);
	ttm_bo_put(z);
}

static void test_move_fence_not_signaled_wait(void **state)
{
	move_fence_not_signaled(*state, false);
}

static void test_move_fence_not_signaled_no_wait(void **state)
{
	move_fence_not_signaled(*state, true);
}

/*
 * Not a kernel case (its no_gpu_wait flag, on the buffer's own fences):
 * CPU moves of a busy buffer, and of a busy victim, with no_wait_gpu:
 * -EBUSY, nothing moved or counted; idle again, the same call works.
 */
static void test_validate_no_wait_gpu(void **state)
{
	struct ttm_operation_ctx nowait = { .interruptible = true,
					   .no_wait_gpu = true };
	struct kfix *k = *state;
	struct ttm_fence *fence = new_fence(), *vfence = new_fence();
	struct ttm_bo *bo, *victim, *y;

	dev_init(k, 0, NULL);
	bo = bo_new(k, BO_SIZE, &system_only);
	fill(bo, 9);
	make_busy(bo, fence);
	assert_int_equal(validate_ctx(bo, &vram_only, &nowait), -EBUSY);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_SYSTEM);
	assert_int_equal(used(k, TTM_DOMAIN_VRAM), 0);
	assert_int_equal(stats(k).moves, 0);
	assert_int_equal(ttm_fence_signal(fence, 0), 0);
	assert_int_equal(validate_ctx(bo, &vram_only, &nowait), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	expect_fill(bo, 9);
	ttm_bo_put(bo);

	/* A busy victim: its eviction would wait for it. */
	victim = bo_new(k, MANAGER_SIZE, &vram_only);
	fill(victim, 10);
	make_busy(victim, vfence);
	y = bo_new(k, BO_SIZE, &system_only);
	assert_int_equal(validate_ctx(y, &vram_only, &nowait), -EBUSY);
	assert_int_equal(ttm_bo_domain(victim), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(y), TTM_DOMAIN_SYSTEM);
	/* The room taken in GTT for the victim went back. */
	assert_int_equal(used(k, TTM_DOMAIN_GTT), 0);
	assert_int_equal(stats(k).evictions, 0);
	assert_int_equal(stats(k).enospc, 0);
	assert_int_equal(ttm_fence_signal(vfence, 0), 0);
	assert_int_equal(validate_ctx(y, &vram_only, &nowait), 0);
	assert_int_equal(ttm_bo_domain(victim), TTM_DOMAIN_GTT);
	expect_fill(victim, 10);
	ttm_fence_put(fence);
	ttm_fence_put(vfence);
	ttm_bo_put(victim);
	ttm_bo_put(y);
}

/*
 * Not a kernel case (its threaded signaller of no_placement_not_signaled,
 * on a move): the buffer's fence signals 20 ms later; the validation
 * waits for it before copying.
 */
static void test_validate_busy_waited(void **state)
{
	struct kfix *k = *state;
	struct ttm_fence *fence = new_fence();
	struct ttm_bo *bo;
	pthread_t t;

	dev_init(k, 0, NULL);
	bo = bo_new(k, 2 * PAGE, &gtt_only);
	fill(bo, 11);
	make_busy(bo, fence);
	t = start_thread(signal_later, fence);
	assert_int_equal(validate(bo, &vram_only), 0);
	assert_true(ttm_fence_is_signaled(fence));
	join_thread(t);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(used(k, TTM_DOMAIN_GTT), 0);
	expect_fill(bo, 11);
	ttm_fence_put(fence);
	ttm_bo_put(bo);
}

/* ---- eviction -------------------------------------------------------- */

/*
 * kernel: ttm_bo_validate_happy_evict: VRAM holds small, medium and big
 * (LRU order); a page more evicts small only, whose hole it takes.
 * ttmsim's victims go to GTT (the kernel's mock setup sends them to
 * SYSTEM).
 */
static void test_validate_happy_evict(void **state)
{
	const uint64_t small = 8 * KiB, medium = 512 * KiB,
		       big = MANAGER_SIZE - small - medium;
	struct kfix *k = *state;
	struct ttm_bo *s, *m, *b, *bo;

	dev_init(k, 0, NULL);
	s = bo_new(k, small, &vram_only);
	m = bo_new(k, medium, &vram_only);
	b = bo_new(k, big, &vram_only);
	fill(s, 12);
	fill(m, 13);
	fill(b, 14);
	bo = bo_new(k, BO_SIZE, &system_only);
	assert_int_equal(validate(bo, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(offset_of(bo), 0);
	assert_int_equal(ttm_bo_domain(s), TTM_DOMAIN_GTT);
	assert_int_equal(ttm_bo_domain(m), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(b), TTM_DOMAIN_VRAM);
	assert_int_equal(stats(k).bytes_moved, small + BO_SIZE);
	assert_int_equal(stats(k).evictions, 1);
	expect_fill(s, 12);
	expect_fill(m, 13);
	expect_fill(b, 14);
	ttm_bo_put(s);
	ttm_bo_put(m);
	ttm_bo_put(b);
	ttm_bo_put(bo);
}

/* kernel: ttm_bo_validate_all_pinned_evict: -ENOSPC, counted. */
static void test_validate_all_pinned_evict(void **state)
{
	struct kfix *k = *state;
	struct ttm_bo *big, *small;

	dev_init(k, 0, NULL);
	big = bo_new(k, MANAGER_SIZE, &vram_only);
	pin_bo(big);
	small = bo_new(k, BO_SIZE, &system_only);
	assert_int_equal(validate(small, &vram_only), -ENOSPC);
	assert_int_equal(ttm_bo_domain(small), TTM_DOMAIN_SYSTEM);
	assert_int_equal(stats(k).enospc, 1);
	assert_int_equal(stats(k).moves, 0);
	ttm_bo_put(small);
	unpin_bo(big);
	ttm_bo_put(big);
}

/*
 * kernel: ttm_bo_validate_allowed_only_evict: of a pinned and an
 * evictable half of VRAM, only the evictable one goes.
 */
static void test_validate_allowed_only_evict(void **state)
{
	const uint64_t half = MANAGER_SIZE / 2;
	struct kfix *k = *state;
	struct ttm_bo *pinned, *evictable, *bo;

	dev_init(k, 0, NULL);
	pinned = bo_new(k, half, &vram_only);
	pin_bo(pinned);
	evictable = bo_new(k, half, &vram_only);
	fill(evictable, 15);
	bo = bo_new(k, BO_SIZE, &system_only);
	assert_int_equal(validate(bo, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(offset_of(bo), half);
	assert_int_equal(ttm_bo_domain(pinned), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(evictable), TTM_DOMAIN_GTT);
	assert_int_equal(stats(k).bytes_moved, half + BO_SIZE);
	expect_fill(evictable, 15);
	ttm_bo_put(bo);
	ttm_bo_put(evictable);
	unpin_bo(pinned);
	ttm_bo_put(pinned);
}

/*
 * kernel: ttm_bo_validate_deleted_evict: a buffer whose last reference
 * went while busy (ttmsim's zombie, the kernel's bo->deleted) is not
 * moved but freed: once its fence signalled, validation gets its room.
 */
static void test_validate_deleted_evict(void **state)
{
	const uint64_t small = 8 * KiB, big = MANAGER_SIZE - BO_SIZE;
	struct kfix *k = *state;
	struct ttm_fence *fence = new_fence();
	struct ttm_bo *b, *s;

	dev_init(k, 0, NULL);
	b = bo_new(k, big, &vram_only);
	make_busy(b, fence);
	ttm_bo_put(b);
	assert_int_equal(stats(k).zombies, 1);
	assert_int_equal(used(k, TTM_DOMAIN_VRAM), big);
	s = bo_new(k, small, &system_only);
	assert_int_equal(ttm_fence_signal(fence, 0), 0);
	assert_int_equal(validate(s, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(s), TTM_DOMAIN_VRAM);
	assert_int_equal(used(k, TTM_DOMAIN_VRAM), small);
	assert_int_equal(stats(k).zombies, 0);
	assert_int_equal(stats(k).evictions, 0);
	ttm_fence_put(fence);
	ttm_bo_put(s);
}

/* evict_flags: GTT only (busy_domain) or nothing at all (gutting). */
static void evict_flags_to(struct ttm_bo *bo, enum ttm_domain from,
			   struct ttm_placement *placement, void *data)
{
	(void)bo;
	(void)from;
	*placement = *(const struct ttm_placement *)data;
}

/*
 * kernel: ttm_bo_validate_busy_domain_evict: the domain eviction names
 * cannot take the victim (GTT full and pinned). The kernel fails with
 * -ENOMEM; ttmsim's victim goes to SYSTEM, which always has room, and
 * the validation succeeds.
 */
static void test_validate_busy_domain_evict(void **state)
{
	static const struct ttm_device_funcs funcs = {
		.evict_flags = evict_flags_to };
	struct ttm_device_options o = { .funcs = &funcs,
					.funcs_data = (void *)&gtt_only };
	struct kfix *k = *state;
	struct ttm_bo *gtt_full, *init, *bo;

	dev_init(k, 0, &o);
	gtt_full = bo_new(k, MANAGER_SIZE, &gtt_only);
	pin_bo(gtt_full);
	init = bo_new(k, MANAGER_SIZE, &vram_only);
	fill(init, 16);
	bo = bo_new(k, BO_SIZE, &system_only);
	assert_int_equal(validate(bo, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(init), TTM_DOMAIN_SYSTEM);
	assert_int_equal(ttm_bo_domain(gtt_full), TTM_DOMAIN_GTT);
	expect_fill(init, 16);
	ttm_bo_put(bo);
	ttm_bo_put(init);
	unpin_bo(gtt_full);
	ttm_bo_put(gtt_full);
}

/*
 * kernel: ttm_bo_validate_evict_gutting: eviction with no place to go
 * (an empty evict_flags placement). The kernel drops the victim's
 * resource; ttmsim has no buffer without memory and moves it to SYSTEM,
 * contents intact.
 */
static void test_validate_evict_gutting(void **state)
{
	static const struct ttm_placement none = { 0 };
	static const struct ttm_device_funcs funcs = {
		.evict_flags = evict_flags_to };
	struct ttm_device_options o = { .funcs = &funcs,
					.funcs_data = (void *)&none };
	struct kfix *k = *state;
	struct ttm_bo *evict, *bo;

	dev_init(k, 0, &o);
	evict = bo_new(k, MANAGER_SIZE, &gtt_only);
	fill(evict, 17);
	bo = bo_new(k, BO_SIZE, &system_only);
	assert_int_equal(validate(bo, &gtt_only), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_GTT);
	assert_int_equal(ttm_bo_domain(evict), TTM_DOMAIN_SYSTEM);
	expect_fill(evict, 17);
	ttm_bo_put(bo);
	ttm_bo_put(evict);
}

/*
 * kernel: ttm_bo_validate_recrusive_evict [sic]: VRAM and GTT both full.
 * The VRAM victim's default destination, GTT, has no room; it goes to
 * SYSTEM rather than evicting GTT in turn, and GTT's buffer stays.
 */
static void test_validate_recursive_evict(void **state)
{
	struct kfix *k = *state;
	struct ttm_bo *v, *g, *bo;

	dev_init(k, 0, NULL);
	v = bo_new(k, MANAGER_SIZE, &vram_only);
	g = bo_new(k, MANAGER_SIZE, &gtt_only);
	fill(v, 18);
	fill(g, 19);
	bo = bo_new(k, BO_SIZE, &system_only);
	assert_int_equal(validate(bo, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(v), TTM_DOMAIN_SYSTEM);
	assert_int_equal(ttm_bo_domain(g), TTM_DOMAIN_GTT);
	assert_int_equal(stats(k).evictions, 1);
	expect_fill(v, 18);
	expect_fill(g, 19);
	ttm_bo_put(bo);
	ttm_bo_put(v);
	ttm_bo_put(g);
}

/*
 * Not a kernel case: a busy victim is evicted once its fence signals
 * (20 ms later), its contents intact.
 */
static void test_validate_evict_fenced(void **state)
{
	struct kfix *k = *state;
	struct ttm_fence *fence = new_fence();
	struct ttm_bo *x, *y;
	pthread_t t;

	dev_init(k, 0, NULL);
	x = bo_new(k, MANAGER_SIZE, &vram_only);
	fill(x, 20);
	make_busy(x, fence);
	y = bo_new(k, BO_SIZE, &system_only);
	t = start_thread(signal_later, fence);
	assert_int_equal(validate(y, &vram_only), 0);
	assert_true(ttm_fence_is_signaled(fence));
	join_thread(t);
	assert_int_equal(ttm_bo_domain(y), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(x), TTM_DOMAIN_GTT);
	assert_int_equal(stats(k).evictions, 1);
	expect_fill(x, 20);
	ttm_fence_put(fence);
	ttm_bo_put(x);
	ttm_bo_put(y);
}

/* ---- ranges (drm_mm_test.c, ttm_resource_test.c) ------------------------ */

/* A device of 16 pages of VRAM. */
#define SMALL_VRAM (16 * PAGE)

/*
 * drm_mm: insert_range, at the buffer layer: buffers placed in pages
 * [8, 16) fill exactly that range, first fit; one more fits only outside
 * it; a buffer outside is moved in when a page there frees.
 */
static void test_validate_range(void **state)
{
	const struct ttm_placement range = PLACEMENT(PLACE(VRAM, 8, 16, 0));
	const struct ttm_placement range_then_any = PLACEMENT(
		PLACE(VRAM, 8, 16, 0), PLACE(VRAM, 0, 0, 0));
	struct kfix *k = *state;
	struct ttm_bo *bos[8], *extra, *two;
	unsigned int i;

	dev_init(k, SMALL_VRAM, NULL);
	for (i = 0; i < 8; i++) {
		bos[i] = bo_new(k, PAGE, &range);
		assert_int_equal(offset_of(bos[i]), (8 + i) * PAGE);
		pin_bo(bos[i]);
	}
	extra = bo_new(k, PAGE, &system_only);
	fill(extra, 21);
	assert_int_equal(validate(extra, &range), -ENOSPC);
	assert_int_equal(ttm_bo_domain(extra), TTM_DOMAIN_SYSTEM);
	assert_int_equal(validate(extra, &range_then_any), 0);
	assert_int_equal(offset_of(extra), 0);
	/* In VRAM but outside the range: not where it may be. */
	unpin_bo(bos[3]);
	ttm_bo_put(bos[3]);
	assert_int_equal(validate(extra, &range), 0);
	assert_int_equal(offset_of(extra), 11 * PAGE);
	assert_int_equal(used(k, TTM_DOMAIN_VRAM), 8 * PAGE);
	expect_fill(extra, 21);
	/* A range smaller than the buffer: never, at once. */
	two = bo_new(k, 2 * PAGE, &system_only);
	assert_int_equal(validate(two, &PLACEMENT(PLACE(VRAM, 14, 15, 0))),
			 -ENOSPC);
	assert_int_equal(stats(k).evictions, 0);
	ttm_bo_put(two);
	for (i = 0; i < 8; i++) {
		if (i == 3)
			continue;
		unpin_bo(bos[i]);
		ttm_bo_put(bos[i]);
	}
	ttm_bo_put(extra);
}

/*
 * drm_mm: topdown, bottomup, highest, lowest, at the buffer layer:
 * TOPDOWN buffers go down from the top of their range, the others up
 * from its bottom, each into the highest (lowest) hole that fits.
 */
static void test_validate_topdown(void **state)
{
	const struct ttm_placement top = PLACEMENT(
		PLACE(VRAM, 0, 0, TTM_PLACE_TOPDOWN));
	const struct ttm_placement top_range = PLACEMENT(
		PLACE(VRAM, 4, 8, TTM_PLACE_TOPDOWN));
	struct kfix *k = *state;
	struct ttm_bo *t[4], *b[4], *r[2], *hi, *lo;
	unsigned int i;

	dev_init(k, SMALL_VRAM, NULL);
	for (i = 0; i < 4; i++) {
		t[i] = bo_new(k, PAGE, &system_only);
		assert_int_equal(validate(t[i], &top), 0);
		assert_int_equal(offset_of(t[i]), (15 - i) * PAGE);
		b[i] = bo_new(k, PAGE, &vram_only);
		assert_int_equal(offset_of(b[i]), i * PAGE);
	}
	for (i = 0; i < 2; i++) {
		r[i] = bo_new(k, PAGE, &top_range);
		assert_int_equal(offset_of(r[i]), (7 - i) * PAGE);
	}
	/* Free: 4, 5, 8..11; then 14 too. */
	ttm_bo_put(t[1]);
	t[1] = bo_new(k, PAGE, &top);
	assert_int_equal(offset_of(t[1]), 14 * PAGE);
	hi = bo_new(k, 2 * PAGE, &top);
	assert_int_equal(offset_of(hi), 10 * PAGE);
	lo = bo_new(k, 2 * PAGE, &vram_only);
	assert_int_equal(offset_of(lo), 4 * PAGE);
	assert_int_equal(stats(k).evictions, 0);
	for (i = 0; i < 4; i++) {
		ttm_bo_put(t[i]);
		ttm_bo_put(b[i]);
	}
	ttm_bo_put(r[0]);
	ttm_bo_put(r[1]);
	ttm_bo_put(hi);
	ttm_bo_put(lo);
}

/*
 * ttm_place: one domain listed twice with different ranges. The first
 * range is full (pinned): the buffer lands in the second; a buffer that
 * lives in any listed range stays; the first range alone moves it there
 * once there is room. The same place twice is refused.
 */
static void test_validate_domain_twice(void **state)
{
	const struct ttm_placement twice = PLACEMENT(
		PLACE(VRAM, 0, 4, 0), PLACE(VRAM, 0, 0, 0));
	const struct ttm_placement first = PLACEMENT(PLACE(VRAM, 0, 4, 0));
	const struct ttm_placement same = PLACEMENT(
		PLACE(VRAM, 0, 4, 0), PLACE(VRAM, 0, 4, 0));
	struct kfix *k = *state;
	struct ttm_bo *p, *bo;

	dev_init(k, SMALL_VRAM, NULL);
	p = bo_new(k, 4 * PAGE, &first);
	pin_bo(p);
	bo = bo_new(k, PAGE, &system_only);
	fill(bo, 22);
	assert_int_equal(validate(bo, &twice), 0);
	assert_int_equal(offset_of(bo), 4 * PAGE);
	unpin_bo(p);
	ttm_bo_put(p);
	assert_int_equal(validate(bo, &twice), 0);
	assert_int_equal(offset_of(bo), 4 * PAGE);
	assert_int_equal(stats(k).moves, 1);
	assert_int_equal(validate(bo, &first), 0);
	assert_int_equal(offset_of(bo), 0);
	assert_int_equal(stats(k).moves, 2);
	assert_int_equal(validate(bo, &same), -EINVAL);
	expect_fill(bo, 22);
	ttm_bo_put(bo);
}

/*
 * drm_mm: evict_range, at the buffer layer: VRAM full of one-page
 * buffers, LRU order 0..15; room for two pages in [8, 12) evicts buffers
 * of that range only, although 0 and 1 were used longer ago.
 */
static void test_evict_range(void **state)
{
	const struct ttm_placement range = PLACEMENT(PLACE(VRAM, 8, 12, 0));
	struct kfix *k = *state;
	struct ttm_bo *bos[16], *bo;
	unsigned int i;

	dev_init(k, SMALL_VRAM, NULL);
	for (i = 0; i < 16; i++) {
		bos[i] = bo_new(k, PAGE, &vram_only);
		fill(bos[i], 30 + i);
	}
	bo = bo_new(k, 2 * PAGE, &system_only);
	assert_int_equal(validate(bo, &range), 0);
	assert_int_equal(offset_of(bo), 8 * PAGE);
	for (i = 0; i < 16; i++) {
		assert_int_equal(ttm_bo_domain(bos[i]), i == 8 || i == 9 ?
				 TTM_DOMAIN_GTT : TTM_DOMAIN_VRAM);
		expect_fill(bos[i], 30 + i);
	}
	assert_int_equal(stats(k).evictions, 2);
	for (i = 0; i < 16; i++)
		ttm_bo_put(bos[i]);
	ttm_bo_put(bo);
}

/*
 * drm_mm: evict_range, the range's edges: B straddles the start of
 * [8, 12), C lies inside, A and D (pinned) outside. Four pages there
 * need B and C gone; the range's ends clip what is searched, not which
 * buffers may go. An lpfn past the domain stops at its end; TOPDOWN in
 * visible VRAM starts at the top of the visible part.
 */
static void test_evict_range_edges(void **state)
{
	const struct ttm_placement range = PLACEMENT(PLACE(VRAM, 8, 12, 0));
	struct kfix *k = *state;
	struct ttm_bo *a, *b, *c, *d, *bo, *e;

	dev_init(k, SMALL_VRAM, NULL);
	a = bo_new(k, 6 * PAGE, &vram_only);
	b = bo_new(k, 4 * PAGE, &vram_only);
	c = bo_new(k, 2 * PAGE, &vram_only);
	d = bo_new(k, 4 * PAGE, &vram_only);
	assert_int_equal(offset_of(d), 12 * PAGE);
	pin_bo(a);
	pin_bo(d);
	fill(b, 27);
	fill(c, 28);
	bo = bo_new(k, 4 * PAGE, &system_only);
	assert_int_equal(validate(bo, &range), 0);
	assert_int_equal(offset_of(bo), 8 * PAGE);
	assert_int_equal(ttm_bo_domain(b), TTM_DOMAIN_GTT);
	assert_int_equal(ttm_bo_domain(c), TTM_DOMAIN_GTT);
	expect_fill(b, 27);
	expect_fill(c, 28);
	unpin_bo(d);
	ttm_bo_put(d);
	e = bo_new(k, 2 * PAGE, &system_only);
	assert_int_equal(validate(e, &PLACEMENT(PLACE(VRAM, 13, 1000, 0))),
			 0);
	assert_int_equal(offset_of(e), 13 * PAGE);
	assert_int_equal(validate(e, &PLACEMENT(PLACE(VRAM, 15, 1000, 0))),
			 -ENOSPC);
	ttm_bo_put(e);
	unpin_bo(a);
	ttm_bo_put(a);
	ttm_bo_put(b);
	ttm_bo_put(c);
	ttm_bo_put(bo);

	/* TOPDOWN in visible VRAM: 4 visible pages by default here. */
	e = bo_new(k, PAGE, &PLACEMENT(PLACE(VRAM, 0, 0,
		TTM_PLACE_TOPDOWN | TTM_PLACE_CPU_VISIBLE)));
	assert_int_equal(offset_of(e), ttm_device_visible_vram(k->dev) - PAGE);
	ttm_bo_put(e);
}

/*
 * drm_mm: frag and evict, at the buffer layer: three free pages (1, 5,
 * 9), but no two together. In LRU order 3, 12, 4, ...: 3 and 12 open
 * no hole alone (their neighbours stay); with 4 the scan finds the hole
 * [3, 6) and, as drm_mm's scan, places the buffer at its start: 3 and 4
 * go, 12, scanned too, stays (LRU order alone would evict it).
 */
static void test_evict_frag(void **state)
{
	static const unsigned int lru[] = { 3, 12, 4 };
	struct kfix *k = *state;
	struct ttm_bo *bos[16], *bo;
	unsigned int i;

	dev_init(k, SMALL_VRAM, NULL);
	for (i = 0; i < 16; i++)
		bos[i] = bo_new(k, PAGE, &vram_only);
	for (i = 0; i < ARRAY_SIZE(lru); i++)
		fill(bos[lru[i]], 50 + lru[i]);
	for (i = 0; i < 16; i++)
		if (i != 3 && i != 12 && i != 4)
			fill(bos[i], 50 + i);
	ttm_bo_put(bos[1]);
	ttm_bo_put(bos[5]);
	ttm_bo_put(bos[9]);
	bos[1] = bos[5] = bos[9] = NULL;
	bo = bo_new(k, 2 * PAGE, &system_only);
	assert_int_equal(validate(bo, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(offset_of(bo), 3 * PAGE);
	assert_int_equal(stats(k).evictions, 2);
	for (i = 0; i < 16; i++) {
		if (!bos[i])
			continue;
		assert_int_equal(ttm_bo_domain(bos[i]), i == 3 || i == 4 ?
				 TTM_DOMAIN_GTT : TTM_DOMAIN_VRAM);
		expect_fill(bos[i], 50 + i);
		ttm_bo_put(bos[i]);
	}
	ttm_bo_put(bo);
}

/*
 * Validate @bo into @pl under a locking helper's ticket, in a job that
 * also holds @own (may be NULL).
 */
static int validate_exec_with(struct kfix *k, struct ttm_bo *own,
			      struct ttm_bo *bo,
			      const struct ttm_placement *pl)
{
	struct ttm_operation_ctx ctx = { .interruptible = true };
	struct ttm_exec exec;
	int ret = 0;

	ttm_exec_init(&exec, k->dev, TTM_EXEC_INTERRUPTIBLE);
	ctx.exec = &exec;
	ttm_exec_until_all_locked(&exec) {
		if (own) {
			ret = ttm_exec_lock_bo(&exec, own);
			ttm_exec_retry_on_contention(&exec);
			assert_int_equal(ret, 0);
		}
		ret = ttm_exec_lock_bo(&exec, bo);
		ttm_exec_retry_on_contention(&exec);
		assert_int_equal(ret, 0);
		ret = ttm_bo_validate(bo, pl, &ctx);
		ttm_exec_retry_on_contention(&exec);
	}
	ttm_exec_done(&exec);
	ttm_exec_fini(&exec);
	assert_dev_ok(k->dev);
	return ret;
}

static int validate_exec(struct kfix *k, struct ttm_bo *bo,
			 const struct ttm_placement *pl)
{
	return validate_exec_with(k, NULL, bo, pl);
}

/*
 * kernel: all_pinned_evict, judged by holes (issue [ranges]): pinned
 * pages 3, 7, 11 and 15 leave nine free or evictable pages, but no four
 * together: a four-page buffer gets -ENOSPC at once, with or without a
 * ticket, and nothing is evicted for it. Unpinned, page 3 makes the hole.
 */
static void test_enospc_by_holes(void **state)
{
	struct kfix *k = *state;
	struct ttm_bo *p[4], *e, *bo;
	unsigned int i;

	dev_init(k, SMALL_VRAM, NULL);
	e = bo_new(k, 3 * PAGE, &vram_only);
	fill(e, 23);
	for (i = 0; i < 4; i++) {
		uint32_t pg = 4 * i + 3;

		p[i] = bo_new(k, PAGE, &PLACEMENT(PLACE(VRAM, pg, pg + 1, 0)));
		assert_int_equal(offset_of(p[i]), pg * PAGE);
		pin_bo(p[i]);
	}
	bo = bo_new(k, 4 * PAGE, &system_only);
	assert_int_equal(validate(bo, &vram_only), -ENOSPC);
	assert_int_equal(stats(k).enospc, 1);
	assert_int_equal(validate_exec(k, bo, &vram_only), -ENOSPC);
	assert_int_equal(stats(k).enospc, 2);
	assert_int_equal(stats(k).evictions, 0);
	assert_int_equal(stats(k).room_waits, 0);
	assert_int_equal(ttm_bo_domain(e), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_SYSTEM);

	unpin_bo(p[0]);
	assert_int_equal(validate_exec(k, bo, &vram_only), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(p[0]), TTM_DOMAIN_GTT);
	assert_true(offset_of(bo) + 4 * PAGE <= 7 * PAGE);
	expect_fill(e, 23);
	for (i = 1; i < 4; i++)
		unpin_bo(p[i]);
	for (i = 0; i < 4; i++)
		ttm_bo_put(p[i]);
	ttm_bo_put(e);
	ttm_bo_put(bo);
}

/*
 * -ENOSPC by holes, the job's own buffers (issue [ranges]): pinned pages
 * 3, 11 and 15; the job's buffer J on pages 4..7. Only J's going would
 * open a hole of five pages (4..10), and the job uses J: -ENOSPC at
 * once. Without J in the job, J is evicted and the buffer fits.
 */
static void test_enospc_by_holes_own_job(void **state)
{
	static const uint32_t pinned_at[] = { 3, 11, 15 };
	struct kfix *k = *state;
	struct ttm_bo *p[3], *j, *bo;
	unsigned int i;

	dev_init(k, SMALL_VRAM, NULL);
	for (i = 0; i < 3; i++) {
		uint32_t pg = pinned_at[i];

		p[i] = bo_new(k, PAGE, &PLACEMENT(PLACE(VRAM, pg, pg + 1, 0)));
		pin_bo(p[i]);
	}
	j = bo_new(k, 4 * PAGE, &PLACEMENT(PLACE(VRAM, 4, 8, 0)));
	fill(j, 26);
	bo = bo_new(k, 5 * PAGE, &system_only);
	assert_int_equal(validate_exec_with(k, j, bo, &vram_only), -ENOSPC);
	assert_int_equal(stats(k).enospc, 1);
	assert_int_equal(stats(k).evictions, 0);
	assert_int_equal(stats(k).room_waits, 0);
	assert_int_equal(ttm_bo_domain(j), TTM_DOMAIN_VRAM);
	assert_int_equal(validate_exec(k, bo, &vram_only), 0);
	assert_int_equal(offset_of(bo), 4 * PAGE);
	assert_int_equal(ttm_bo_domain(j), TTM_DOMAIN_GTT);
	expect_fill(j, 26);
	for (i = 0; i < 3; i++) {
		unpin_bo(p[i]);
		ttm_bo_put(p[i]);
	}
	ttm_bo_put(j);
	ttm_bo_put(bo);
}

/*
 * Visible VRAM (TTM_PLACE_CPU_VISIBLE, amdgpu's CPU_ACCESS_REQUIRED):
 * the first quarter of VRAM by default. A buffer at the top of VRAM is
 * moved into it; a buffer larger than it never fits; making room there
 * evicts a buffer inside it, not the least recently used one outside.
 */
static void test_validate_visible_vram(void **state)
{
	const uint64_t visible = MANAGER_SIZE / 4;
	const struct ttm_placement vis = PLACEMENT(
		PLACE(VRAM, 0, 0, TTM_PLACE_CPU_VISIBLE));
	const struct ttm_placement vis_then_any = PLACEMENT(
		PLACE(VRAM, 0, 0, TTM_PLACE_CPU_VISIBLE),
		PLACE(VRAM, 0, 0, 0));
	const struct ttm_placement top = PLACEMENT(
		PLACE(VRAM, 0, 0, TTM_PLACE_TOPDOWN));
	struct kfix *k = *state;
	struct ttm_bo *bo, *big, *inv, *vbuf, *c;

	dev_init(k, 0, NULL);
	assert_int_equal(ttm_device_visible_vram(k->dev), visible);
	bo = bo_new(k, 2 * PAGE, &top);
	fill(bo, 24);
	assert_int_equal(offset_of(bo), MANAGER_SIZE - 2 * PAGE);
	assert_int_equal(validate(bo, &vis), 0);
	assert_true(offset_of(bo) + 2 * PAGE <= visible);
	assert_int_equal(validate(bo, &vis), 0);
	assert_int_equal(stats(k).moves, 1);
	expect_fill(bo, 24);
	ttm_bo_put(bo);

	/* Larger than visible VRAM: never, at once. */
	big = bo_new(k, 2 * visible, &system_only);
	assert_int_equal(validate(big, &vis), -ENOSPC);
	assert_int_equal(validate(big, &vis_then_any), 0);
	assert_int_equal(ttm_bo_domain(big), TTM_DOMAIN_VRAM);
	ttm_bo_put(big);

	/*
	 * inv, outside and least recently used; vbuf fills visible VRAM:
	 * room in it can only come from vbuf.
	 */
	inv = bo_new(k, PAGE, &top);
	vbuf = bo_new(k, visible, &vis);
	fill(vbuf, 25);
	c = bo_new(k, PAGE, &system_only);
	assert_int_equal(validate(c, &vis_then_any), 0);
	assert_true(offset_of(c) >= visible);
	assert_int_equal(stats(k).evictions, 0);
	assert_int_equal(validate(c, &vis), 0);
	assert_true(offset_of(c) < visible);
	assert_int_equal(ttm_bo_domain(inv), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(vbuf), TTM_DOMAIN_GTT);
	assert_int_equal(stats(k).evictions, 1);
	expect_fill(vbuf, 25);
	ttm_bo_put(inv);
	ttm_bo_put(vbuf);
	ttm_bo_put(c);
}

/*
 * ttm_resource_test.c: ttm_resource_manager_usage_basic and
 * ttm_sys_man_alloc_basic/free_basic, at the buffer layer: a limited
 * domain's usage counts whole pages, SYSTEM's exact bytes; freeing gives
 * them back.
 */
static void test_resource_manager_usage(void **state)
{
	const uint64_t size = 6 * KiB;
	struct kfix *k = *state;
	struct ttm_bo *v, *g, *s;

	dev_init(k, 0, NULL);
	v = bo_new(k, size, &vram_only);
	g = bo_new(k, size, &gtt_only);
	s = bo_new(k, size, &system_only);
	assert_int_equal(used(k, TTM_DOMAIN_VRAM), 2 * PAGE);
	assert_int_equal(used(k, TTM_DOMAIN_GTT), 2 * PAGE);
	assert_int_equal(used(k, TTM_DOMAIN_SYSTEM), size);
	ttm_bo_put(v);
	ttm_bo_put(g);
	ttm_bo_put(s);
	assert_int_equal(used(k, TTM_DOMAIN_VRAM), 0);
	assert_int_equal(used(k, TTM_DOMAIN_GTT), 0);
	assert_int_equal(used(k, TTM_DOMAIN_SYSTEM), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		KUNIT_CASES(test_init_reserved_sys_man),
		KUNIT_CASES(test_init_reserved_mock_man),
		KUNIT_CASES(test_init_reserved_resv),
		KUNIT_CASES(test_validate_basic),
		KUNIT_CASES(test_validate_invalid_placement),
		KUNIT_CASES(test_validate_pinned),
		KUNIT_CASES(test_validate_same_placement),
		KUNIT_CASES(test_validate_busy_placement),
		KUNIT_CASES(test_validate_multihop),
		KUNIT_CASES(test_validate_domains_contents),
		KUNIT_CASES(test_move_fence_not_signaled_wait),
		KUNIT_CASES(test_move_fence_not_signaled_no_wait),
		KUNIT_CASES(test_validate_no_wait_gpu),
		KUNIT_CASES(test_validate_busy_waited),
		KUNIT_CASES(test_validate_happy_evict),
		KUNIT_CASES(test_validate_all_pinned_evict),
		KUNIT_CASES(test_validate_allowed_only_evict),
		KUNIT_CASES(test_validate_deleted_evict),
		KUNIT_CASES(test_validate_busy_domain_evict),
		KUNIT_CASES(test_validate_evict_gutting),
		KUNIT_CASES(test_validate_recursive_evict),
		KUNIT_CASES(test_validate_evict_fenced),
		KUNIT_CASES(test_validate_range),
		KUNIT_CASES(test_validate_topdown),
		KUNIT_CASES(test_validate_domain_twice),
		KUNIT_CASES(test_evict_range),
		KUNIT_CASES(test_evict_range_edges),
		KUNIT_CASES(test_evict_frag),
		KUNIT_CASES(test_enospc_by_holes),
		KUNIT_CASES(test_enospc_by_holes_own_job),
		KUNIT_CASES(test_validate_visible_vram),
		KUNIT_CASES(test_resource_manager_usage),
	};

	return cmocka_run_group_tests_name("ttm_bo_validate", tests, NULL,
					   NULL);
}
