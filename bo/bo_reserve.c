// SPDX-License-Identifier: MIT
/*
 * Reserving buffers: TTM's return values on top of the ww_mutex API, and
 * the LRU bump on unreserve.
 *
 * Each call is its *_at() twin, which hands the caller's file:line to the
 * ww_mutex calls so that a checker report names the driver's line, not
 * this file. The plain functions are defined as (name), so that the
 * caller-site macros of ttmsim/bo.h do not apply to them; they name no
 * line, as the plain ww_mutex functions.
 */
#include <errno.h>

#include "bo/bo.h"
#include "bo/resv.h"
#include "util/compiler.h"

TTM_EXPORT int ttm_bo_reserve_at(struct ttm_bo *bo, bool interruptible,
				 bool no_wait, struct ww_acquire_ctx *ticket,
				 const char *file, int line)
{
	int ret;

	if (no_wait) {
		/*
		 * A ticketed transaction that cannot wait could never take
		 * the lock it backed off for: TTM warns and refuses with
		 * -EBUSY, which callers of a no_wait reserve handle anyway.
		 */
		if (ticket)
			return -EBUSY;
		return ww_mutex_trylock_at(&bo->resv->lock, NULL, file, line) ?
		       0 : -EBUSY;
	}
	/* The LRU's line, fetched alongside the lock's (bo_lru_prefetch()). */
	__builtin_prefetch(&bo->node, 1);
	ret = resv_check_class_at(bo->resv, ticket, "ttm_bo_reserve", file,
				  line);
	if (ret)
		return ret;
	if (interruptible)
		ret = ww_mutex_lock_interruptible_at(&bo->resv->lock, ticket,
						     file, line);
	else
		ret = ww_mutex_lock_at(&bo->resv->lock, ticket, file, line);
	if (ret == 0)
		bo_lru_prefetch(bo);
	return ret;
}

TTM_EXPORT int (ttm_bo_reserve)(struct ttm_bo *bo, bool interruptible,
				bool no_wait, struct ww_acquire_ctx *ticket)
{
	return ttm_bo_reserve_at(bo, interruptible, no_wait, ticket, NULL, 0);
}

TTM_EXPORT int ttm_bo_reserve_slowpath_at(struct ttm_bo *bo,
					  bool interruptible,
					  struct ww_acquire_ctx *ticket,
					  const char *file, int line)
{
	int ret = resv_check_class_at(bo->resv, ticket,
				      "ttm_bo_reserve_slowpath", file, line);

	if (ret)
		return ret;
	if (interruptible)
		return ww_mutex_lock_slow_interruptible_at(&bo->resv->lock,
							   ticket, file, line);
	ww_mutex_lock_slow_at(&bo->resv->lock, ticket, file, line);
	return 0;
}

TTM_EXPORT int (ttm_bo_reserve_slowpath)(struct ttm_bo *bo,
					 bool interruptible,
					 struct ww_acquire_ctx *ticket)
{
	return ttm_bo_reserve_slowpath_at(bo, interruptible, ticket, NULL, 0);
}

TTM_EXPORT void ttm_bo_unreserve_at(struct ttm_bo *bo, const char *file,
				    int line)
{
	struct ttm_device *dev = bo->dev;

	/* Bump before unlocking: the buffer cannot move between the two. */
	pthread_mutex_lock(&dev->lock);
	bo_lru_bump_locked(bo);
	pthread_mutex_unlock(&dev->lock);
	ww_mutex_unlock_at(&bo->resv->lock, file, line);
	/* A validation may wait behind it (bo/bo_room.c). */
	bo_room_notify(dev);
}

/*
 * The LRU bumps of @bos[@first] down to @bos[@last], all of @dev, under
 * one device lock; then their unlocks and one wake-up check. The bumps
 * come in the order of single unreserves (the LRU order is the same), and
 * all happen before any unlock, so each still happens with its buffer
 * reserved; a walker that meets the run's buffers between the two
 * try-locks them and finds them held, as it would have one at a time. The
 * wake-up check is the Dekker pair of bo/bo_room.c: one full barrier after
 * the run's unlocks covers them all.
 */
static void unreserve_run(struct ttm_device *dev, struct ttm_bo *const *bos,
			  unsigned int first, unsigned int last,
			  const char *file, int line)
{
	unsigned int i;

	pthread_mutex_lock(&dev->lock);
	for (i = first + 1; i-- > last;)
		bo_lru_bump_locked(bos[i]);
	pthread_mutex_unlock(&dev->lock);
	for (i = first + 1; i-- > last;)
		ww_mutex_unlock_at(&bos[i]->resv->lock, file, line);
	bo_room_notify(dev);
}

void bo_unreserve_list_at(struct ttm_bo *const *bos, unsigned int n,
			  const char *file, int line)
{
	unsigned int first, i;

	/* Runs of one device, newest first; usually the whole list. */
	for (first = n; first-- > 0; first = i) {
		for (i = first; i > 0 && bos[i - 1]->dev == bos[first]->dev;)
			i--;
		unreserve_run(bos[first]->dev, bos, first, i, file, line);
	}
}

TTM_EXPORT void (ttm_bo_unreserve)(struct ttm_bo *bo)
{
	ttm_bo_unreserve_at(bo, NULL, 0);
}
