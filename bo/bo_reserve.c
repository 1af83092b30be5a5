// SPDX-License-Identifier: MIT
/*
 * Reserving buffers: TTM's return values on top of the ww_mutex API, and
 * the LRU bump on unreserve.
 */
#include <errno.h>

#include "bo/bo.h"
#include "util/compiler.h"

TTM_EXPORT int ttm_bo_reserve(struct ttm_bo *bo, bool interruptible,
			      bool no_wait, struct ww_acquire_ctx *ticket)
{
	if (no_wait) {
		/*
		 * A ticketed transaction that cannot wait could never take
		 * the lock it backed off for: TTM warns and refuses.
		 */
		if (ticket)
			return -EINVAL;
		return ww_mutex_trylock(&bo->resv->lock, NULL) ? 0 : -EBUSY;
	}
	if (interruptible)
		return ww_mutex_lock_interruptible(&bo->resv->lock, ticket);
	return ww_mutex_lock(&bo->resv->lock, ticket);
}

TTM_EXPORT int ttm_bo_reserve_slowpath(struct ttm_bo *bo, bool interruptible,
				       struct ww_acquire_ctx *ticket)
{
	if (interruptible)
		return ww_mutex_lock_slow_interruptible(&bo->resv->lock,
							ticket);
	ww_mutex_lock_slow(&bo->resv->lock, ticket);
	return 0;
}

TTM_EXPORT void ttm_bo_unreserve(struct ttm_bo *bo)
{
	struct ttm_device *dev = bo->dev;

	/* Bump before unlocking: the buffer cannot move between the two. */
	pthread_mutex_lock(&dev->lock);
	bo_lru_bump_locked(bo);
	pthread_mutex_unlock(&dev->lock);
	ww_mutex_unlock(&bo->resv->lock);
}
