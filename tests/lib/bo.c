// SPDX-License-Identifier: MIT
/* Placements and the accounting check of the buffer-object suites. */
#include "bo_helpers.h"

#include "ttmsim/fence.h"
#include "ttmsim/resv.h"

const struct ttm_placement vram_gtt = TTM_PLACEMENT_VRAM_GTT_INIT;
const struct ttm_placement vram_only = TTM_PLACEMENT_VRAM_INIT;
const struct ttm_placement gtt_only = TTM_PLACEMENT_GTT_INIT;
const struct ttm_placement system_only = TTM_PLACEMENT_SYSTEM_INIT;

bool check_dev_ok(struct ttm_device *dev, const char *when)
{
	char msg[256];

	return CHECK_MSG(ttm_device_check(dev, msg, sizeof(msg)) == 0,
			 "ttm_device_check %s: %s", when, msg);
}

long lru_order(struct ttm_device *dev, enum ttm_domain domain,
	       struct ttm_bo **ret_bos, size_t max)
{
	long i, count = ttm_device_lru_snapshot(dev, domain, ret_bos, max);

	/* The caller holds references of its own: these are never last. */
	for (i = 0; i < count && (size_t)i < max; i++)
		ttm_bo_put(ret_bos[i]);
	return count;
}

struct ttm_bo *create_bo(struct ttm_device *dev, uint64_t size,
			 const struct ttm_placement *placement)
{
	struct ttm_bo *bo = NULL;

	assert_int_equal(ttm_bo_create(dev, size, placement, 0, &bo), 0);
	assert_non_null(bo);
	assert_dev_ok(dev);
	return bo;
}

void pin_bo(struct ttm_bo *bo)
{
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_bo_pin(bo), 0);
	ttm_bo_unreserve(bo);
}

void unpin_bo(struct ttm_bo *bo)
{
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_bo_unpin(bo), 0);
	ttm_bo_unreserve(bo);
}

struct ttm_fence *busy_fence(struct ttm_bo *bo)
{
	struct ttm_fence *f;

	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1, &f),
			 0);
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_resv_reserve_fences(ttm_bo_resv(bo), 1), 0);
	ttm_resv_add_fence(ttm_bo_resv(bo), f, TTM_RESV_USAGE_WRITE);
	ttm_bo_unreserve(bo);
	return f;
}

void expect_bo_words(struct ttm_bo *bo, uint32_t want)
{
	size_t i, n = ttm_bo_size(bo) / 4;
	uint32_t *words = malloc(n * 4);

	assert_non_null(words);
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_bo_read(bo, 0, words, n * 4), 0);
	ttm_bo_unreserve(bo);
	for (i = 0; i < n; i++)
		if (words[i] != want)
			fail_msg("word %zu: %#x, not %#x", i, words[i], want);
	free(words);
}

void fill_bo_words(struct ttm_bo *bo, uint32_t value)
{
	size_t i, n = ttm_bo_size(bo) / 4;
	uint32_t *words = malloc(n * 4);

	assert_non_null(words);
	for (i = 0; i < n; i++)
		words[i] = value;
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_bo_write(bo, 0, words, n * 4), 0);
	ttm_bo_unreserve(bo);
	free(words);
}
