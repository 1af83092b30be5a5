// SPDX-License-Identifier: MIT
/*
 * The sample driver's shrinker: under memory pressure the kernel's MM
 * calls a shrinker's scan_objects, and TTM's (ttm_global_swapout via
 * ttm_bo_swapout()) walks the LRUs with a struct ttm_lru_walk, least
 * recently used first, and swaps buffers out. This does the same on
 * ttmsim: GTT, then VRAM, into SYSTEM (ttmsim's "swap").
 */
#include <errno.h>

#include <ttmsim/lru.h>

#include "sdrv.h"

static long sdrv_shrink_bo(struct ttm_lru_walk *walk, struct ttm_bo *bo)
{
	int ret;

	/*
	 * Scanout and mapped buffers are pinned and on no LRU, so the walk
	 * never sees them; the check says the rule where it matters, as
	 * TTM's swapout checks pin_count too.
	 */
	if (ttm_bo_pin_count(bo))
		return 0;
	ret = ttm_bo_swapout(bo, walk->ctx);
	if (ret == -EBUSY)
		return 0;   /* pinned after all: try the next one */
	return ret ? ret : (long)ttm_bo_size(bo);
}

static const struct ttm_lru_walk_ops sdrv_shrink_ops = {
	.process_bo = sdrv_shrink_bo,
};

/**
 * sdrv_shrink_scan() - free up to @target bytes of VRAM and GTT.
 * @sdev: the device.
 * @target: bytes wanted.
 *
 * Context: Try-locks only: a shrinker may run under any lock (the
 * kernel's is called from reclaim), so it never waits on a reservation:
 * buffers locked by others are skipped. It does wait for the GPU work on
 * a buffer it moves (no_wait_gpu clear, as TTM's global swapout), so an
 * idle-looking LRU is emptied, not skipped over.
 * Return: the bytes swapped out (also added to @sdev->shrunk), or a
 * negative errno.
 */
long sdrv_shrink_scan(struct sdrv_device *sdev, long target)
{
	static const enum ttm_domain order[] = {
		TTM_DOMAIN_GTT, TTM_DOMAIN_VRAM,
	};
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_lru_walk walk = {
		.ops = &sdrv_shrink_ops, .ctx = &ctx, .trylock_only = true,
	};
	long freed = 0, ret;
	unsigned int i;

	for (i = 0; i < 2 && freed < target; i++) {
		ret = ttm_lru_walk_for_evict(&walk, sdev->ttm, order[i],
					     target - freed);
		if (ret < 0)
			return ret;
		freed += ret;
	}
	__atomic_fetch_add(&sdev->shrunk, (uint64_t)freed, __ATOMIC_RELAXED);
	return freed;
}
