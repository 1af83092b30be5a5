// SPDX-License-Identifier: MIT
/*
 * Pinning. A pinned buffer lives on the device's pinned list, not on an
 * LRU, so that eviction never even looks at it (as TTM does).
 */
#include <errno.h>
#include <limits.h>

#include "bo/bo.h"
#include "bo/resv.h"
#include "util/compiler.h"

TTM_EXPORT int ttm_bo_pin_at(struct ttm_bo *bo, const char *file, int line)
{
	struct ttm_device *dev = bo->dev;
	int ret = resv_assert_held_at(bo->resv, "ttm_bo_pin", file, line);

	if (ret)
		return ret;
	if (bo->pin_count == UINT_MAX)
		return -EOVERFLOW;
	/*
	 * An import's pages are its exporter's: pin those (the reservation
	 * is one), as the kernel's pin of an imported buffer pins the
	 * dma-buf's exporter.
	 */
	if (bo_exporter(bo)) {
		ret = ttm_bo_pin_at(bo_exporter(bo), file, line);
		if (ret)
			return ret;
	}
	/* pin_count is read under the device lock by the LRU bump. */
	pthread_mutex_lock(&dev->lock);
	if (bo->pin_count == 0) {
		/* Off its LRU, onto the pinned list: its bytes pinned. */
		bo_lru_del_locked(bo);
		bo->pin_count++;
		bo_lru_add_locked(bo);
	} else {
		bo->pin_count++;
	}
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

TTM_EXPORT int (ttm_bo_pin)(struct ttm_bo *bo)
{
	return ttm_bo_pin_at(bo, NULL, 0);
}

TTM_EXPORT int ttm_bo_unpin_at(struct ttm_bo *bo, const char *file,
			       int line)
{
	struct ttm_device *dev = bo->dev;
	int ret = resv_assert_held_at(bo->resv, "ttm_bo_unpin", file, line);

	if (ret)
		return ret;
	if (bo->pin_count == 0)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	if (bo->pin_count == 1) {
		bo_lru_del_locked(bo);
		bo->pin_count--;
		bo_lru_add_locked(bo);
	} else {
		bo->pin_count--;
	}
	bo_room_changed_locked(dev);
	pthread_mutex_unlock(&dev->lock);
	if (bo_exporter(bo))
		ttm_bo_unpin_at(bo_exporter(bo), file, line);
	return 0;
}

TTM_EXPORT int (ttm_bo_unpin)(struct ttm_bo *bo)
{
	return ttm_bo_unpin_at(bo, NULL, 0);
}

TTM_EXPORT unsigned int ttm_bo_pin_count(const struct ttm_bo *bo)
{
	return bo->pin_count;
}
