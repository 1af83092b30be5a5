// SPDX-License-Identifier: MIT
/*
 * A buffer's CPU address (ttm_bo_vmap(), ttm_bo_vunmap()) and the device
 * memory query ttm_device_mem_overlaps(): the address holds the buffer's
 * bytes in VRAM, GTT and SYSTEM, follows a move, is refused without the
 * reservation, and a stale one is caught; the query answers for the
 * arenas' edges, not for SYSTEM buffers, and for ranges at the ends of
 * the address space.
 */
#include <pthread.h>
#include <string.h>

#include "lib/bo_helpers.h"

#include "ttmsim/bo.h"
#include "ttmsim/resv.h"
#include "ttmsim/ww_debug.h"

#define SIZE (16 * KiB)

static struct ttm_device *new_device(void)
{
	struct ttm_device_options opts = {
		.vram_size = SIZE, .gtt_size = SIZE,
	};
	struct ttm_device *dev;

	assert_int_equal(ttm_device_create(&opts, &dev), 0);
	return dev;
}

static void reserve(struct ttm_bo *bo)
{
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
}

/* The address is the bytes: both ways, in each domain. */
static void test_vmap_contents(void **state)
{
	const struct ttm_placement *places[] = {
		&vram_only, &gtt_only, &system_only,
	};
	struct ttm_device *dev = new_device();

	(void)state;
	for (unsigned int i = 0; i < 3; i++) {
		struct ttm_bo *bo = create_bo(dev, 4 * KiB, places[i]);
		char buf[64], back[64];
		void *addr = NULL;

		memset(buf, 0xa0 + i, sizeof(buf));
		reserve(bo);
		assert_int_equal(ttm_bo_write(bo, 100, buf, sizeof(buf)), 0);
		assert_int_equal(ttm_bo_vmap(bo, &addr), 0);
		assert_non_null(addr);
		assert_memory_equal((char *)addr + 100, buf, sizeof(buf));
		memset(addr, 0x5c, sizeof(back));
		assert_int_equal(ttm_bo_read(bo, 0, back, sizeof(back)), 0);
		memset(buf, 0x5c, sizeof(buf));
		assert_memory_equal(back, buf, sizeof(buf));
		assert_int_equal(ttm_bo_vunmap(bo, addr), 0);
		ttm_bo_unreserve(bo);
		ttm_bo_put(bo);
	}
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* Without the reservation: -EPERM, the out-parameter untouched. */
static void test_vmap_unreserved(void **state)
{
	struct ttm_device *dev = new_device();
	struct ttm_bo *bo = create_bo(dev, 4 * KiB, &vram_only);
	void *addr = &addr, *mapped;

	(void)state;
	assert_int_equal(ttm_bo_vmap(bo, &addr), -EPERM);
	assert_ptr_equal(addr, &addr);
	reserve(bo);
	assert_int_equal(ttm_bo_vmap(bo, &mapped), 0);
	ttm_bo_unreserve(bo);
	assert_int_equal(ttm_bo_vunmap(bo, mapped), -EPERM);
	reserve(bo);
	assert_int_equal(ttm_bo_vunmap(bo, mapped), 0);
	ttm_bo_unreserve(bo);
	ttm_bo_put(bo);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

struct holder {
	struct ttm_bo *bo;
	pthread_barrier_t locked, done;
};

static void *hold_reservation(void *arg)
{
	struct holder *h = arg;

	reserve(h->bo);
	pthread_barrier_wait(&h->locked);
	pthread_barrier_wait(&h->done);
	ttm_bo_unreserve(h->bo);
	return NULL;
}

/*
 * Reserved by another thread is not reserved by the caller: with the
 * checker on (it knows each thread's locks), -EPERM too.
 */
static void test_vmap_other_owner(void **state)
{
	struct ttm_device *dev = new_device();
	struct holder h = { .bo = create_bo(dev, 4 * KiB, &vram_only) };
	void *addr = &addr;
	char byte;
	pthread_t t;

	(void)state;
	if (!ww_debug_enabled())
		skip();   /* -Dww_debug=false or TTMSIM_WW_DEBUG=0 */
	pthread_barrier_init(&h.locked, NULL, 2);
	pthread_barrier_init(&h.done, NULL, 2);
	assert_int_equal(pthread_create(&t, NULL, hold_reservation, &h), 0);
	pthread_barrier_wait(&h.locked);
	assert_int_equal(ttm_bo_vmap(h.bo, &addr), -EPERM);
	assert_ptr_equal(addr, &addr);
	assert_int_equal(ttm_bo_read(h.bo, 0, &byte, 1), -EPERM);
	assert_int_equal(ttm_bo_write(h.bo, 0, &byte, 1), -EPERM);
	pthread_barrier_wait(&h.done);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&h.locked);
	pthread_barrier_destroy(&h.done);
	ttm_bo_put(h.bo);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * A move gives the buffer new bytes: the old address is refused by
 * ttm_bo_vunmap(), a new ttm_bo_vmap() gives the new one, contents kept.
 */
static void test_vunmap_after_move(void **state)
{
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_device *dev = new_device();
	struct ttm_bo *bo = create_bo(dev, 4 * KiB, &vram_gtt);
	void *old, *now;

	(void)state;
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	fill_bo_words(bo, 0x1234abcd);
	reserve(bo);
	assert_int_equal(ttm_bo_vmap(bo, &old), 0);
	assert_int_equal(ttm_bo_validate(bo, &gtt_only, &ctx), 0);
	assert_int_equal(ttm_resv_wait(ttm_bo_resv(bo), TTM_RESV_USAGE_KERNEL,
				       false, -1), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_GTT);
	assert_int_equal(ttm_bo_vunmap(bo, old), -EINVAL);
	assert_int_equal(ttm_bo_vmap(bo, &now), 0);
	assert_ptr_not_equal(now, old);
	assert_int_equal(*(uint32_t *)now, 0x1234abcd);
	assert_int_equal(ttm_bo_vunmap(bo, now), 0);
	ttm_bo_unreserve(bo);
	ttm_bo_put(bo);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* The address of a buffer at the start of @placement's (empty) domain. */
static uintptr_t arena_start(struct ttm_device *dev,
			     const struct ttm_placement *placement,
			     struct ttm_bo **ret_bo)
{
	struct ttm_bo *bo = create_bo(dev, 4 * KiB, placement);
	void *addr;

	assert_int_equal(ttm_bo_offset(bo), 0);
	reserve(bo);
	assert_int_equal(ttm_bo_vmap(bo, &addr), 0);
	ttm_bo_unreserve(bo);
	*ret_bo = bo;
	return (uintptr_t)addr;
}

/* What the query must answer, from the two arenas found. */
static bool expected(const uintptr_t lo[2], uintptr_t a, size_t len)
{
	uintptr_t end = len > UINTPTR_MAX - a ? UINTPTR_MAX : a + len;

	for (int i = 0; i < 2; i++) {
		if (len && a < lo[i] + SIZE && lo[i] < end)
			return true;
	}
	return false;
}

static void check(struct ttm_device *dev, const uintptr_t lo[2],
		  uintptr_t a, size_t len)
{
	bool got = ttm_device_mem_overlaps(dev, (const void *)a, len);

	if (got != expected(lo, a, len))
		fail_msg("ttm_device_mem_overlaps(%#jx, %zu) = %d, arenas at "
			 "%#jx and %#jx of %u bytes", (uintmax_t)a, len, got,
			 (uintmax_t)lo[0], (uintmax_t)lo[1], SIZE);
}

/* Each arena's edges, one byte either side; empty and huge ranges. */
static void test_mem_overlaps(void **state)
{
	struct ttm_device *dev = new_device();
	struct ttm_bo *vram, *gtt, *sys;
	uintptr_t lo[2];
	void *saddr;

	(void)state;
	lo[0] = arena_start(dev, &vram_only, &vram);
	lo[1] = arena_start(dev, &gtt_only, &gtt);
	for (int i = 0; i < 2; i++) {
		uintptr_t edges[] = { lo[i], lo[i] + SIZE };

		for (int e = 0; e < 2; e++) {
			for (uintptr_t a = edges[e] - 2; a <= edges[e] + 1; a++) {
				for (size_t len = 0; len <= 3; len++)
					check(dev, lo, a, len);
			}
		}
		/* Inside, and the whole arena exactly. */
		assert_true(ttm_device_mem_overlaps(dev,
			(const void *)(lo[i] + SIZE / 2), 1));
		assert_true(ttm_device_mem_overlaps(dev, (const void *)lo[i],
						    SIZE));
		/* An empty range overlaps nothing, even inside. */
		assert_false(ttm_device_mem_overlaps(dev,
			(const void *)(lo[i] + SIZE / 2), 0));
	}
	/* Everything, and a range running past the end of the space. */
	assert_true(ttm_device_mem_overlaps(dev, NULL, SIZE_MAX));
	check(dev, lo, UINTPTR_MAX - 16, SIZE_MAX);
	check(dev, lo, lo[0], SIZE_MAX);

	/* SYSTEM buffers are not the device's arenas. */
	sys = create_bo(dev, 4 * KiB, &system_only);
	reserve(sys);
	assert_int_equal(ttm_bo_vmap(sys, &saddr), 0);
	ttm_bo_unreserve(sys);
	assert_false(ttm_device_mem_overlaps(dev, saddr, 4 * KiB));

	ttm_bo_put(sys);
	ttm_bo_put(gtt);
	ttm_bo_put(vram);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_vmap_contents, checks_reset),
		cmocka_unit_test_setup(test_vmap_unreserved, checks_reset),
		cmocka_unit_test_setup(test_vmap_other_owner, checks_reset),
		cmocka_unit_test_setup(test_vunmap_after_move, checks_reset),
		cmocka_unit_test_setup(test_mem_overlaps, checks_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
