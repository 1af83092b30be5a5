// SPDX-License-Identifier: MIT
/*
 * Validation: making a buffer resident in one of the domains a job
 * allows, first where there is room, then by evicting, like TTM's
 * ttm_bo_validate() and ttm_bo_mem_space().
 */
#include <errno.h>

#include "bo/bo.h"
#include "bo/resv.h"
#include "util/compiler.h"

bool place_matches(const struct ttm_bo *bo, const struct ttm_place *place)
{
	/* ranges: and bo's offset inside bo_place_range(), flags met. */
	return (int)place->domain ==
	       __atomic_load_n(&bo->domain, __ATOMIC_RELAXED);
}

static bool placement_has(const struct ttm_bo *bo,
			  const struct ttm_placement *placement)
{
	unsigned int i;

	for (i = 0; i < placement->count; i++)
		if (place_matches(bo, &placement->places[i]))
			return true;
	return false;
}

/* Take @bo's bytes in @place if it has room now. */
static bool place_take(struct ttm_bo *bo, const struct ttm_place *place)
{
	struct ttm_device *dev = bo->dev;
	bool ok;

	pthread_mutex_lock(&dev->lock);
	/* ranges: a range allocation in @place instead. */
	ok = bo_place_can_hold(dev, place, bo->size) &&
	     bo_domain_take_locked(dev, place->domain, bo->size);
	pthread_mutex_unlock(&dev->lock);
	return ok;
}

/*
 * Make room in @place until @bo fits there, then take its bytes. The
 * room is taken under the same lock as the check, so that another thread
 * cannot take it in between; if one takes what was freed, go on.
 *
 * An eviction frees nothing at once: its source stays accounted until
 * its copy signals. So while sources are in flight in the domain, wait
 * for them (they free room for sure) rather than evict more than needed.
 *
 * ranges: the waits and the eviction see the domain only; they will
 * need @place to free a hole inside its range.
 */
static int place_evict_take(struct ttm_bo *bo, const struct ttm_place *place,
			    const struct ttm_operation_ctx *ctx)
{
	int domain = place->domain;
	uint64_t vetoed = 0;
	int ret;

	/* Larger than the range: evicting everything would not do. */
	if (!bo_place_can_hold(bo->dev, place, bo->size))
		return -ENOSPC;
	while (!place_take(bo, place)) {
		ret = bo_ghost_wait(bo->dev, domain, ctx);
		/*
		 * No copy in flight now; but one may have ended since the
		 * room was checked, freeing its room: look again before
		 * evicting something that need not go.
		 */
		if (ret == -ENOSPC && place_take(bo, place))
			return 0;
		if (ret == -ENOSPC)
			ret = bo_evict_one(bo, domain, ctx, &vetoed);
		if (ret == -ENOSPC)
			ret = bo_room_wait(bo, domain, ctx, vetoed);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Make room for @bo in the first place of @placement that can, and take
 * its bytes there: the place's domain, or an error. A place that could
 * make room only by waiting for the GPU (@ctx->no_wait_gpu) does not stop
 * the walk: the next may have room to evict, as in TTM; -EBUSY only if
 * none did. -ENOSPC is counted in the stats.
 */
static int evict_take_any(struct ttm_bo *bo,
			  const struct ttm_placement *placement,
			  const struct ttm_operation_ctx *ctx)
{
	int busy = 0, ret;
	unsigned int i;

	for (i = 0; i < placement->count; i++) {
		ret = place_evict_take(bo, &placement->places[i], ctx);
		if (ret == 0)
			return placement->places[i].domain;
		if (ret == -EBUSY)
			busy = ret;
		else if (ret != -ENOSPC)
			return ret;
	}
	if (busy)
		return busy;
	pthread_mutex_lock(&bo->dev->lock);
	bo->dev->enospc++;
	pthread_mutex_unlock(&bo->dev->lock);
	return -ENOSPC;
}

/*
 * The caller's file:line reaches the reservation check only: eviction
 * reports name bo/bo_evict.c.
 */
TTM_EXPORT int ttm_bo_validate_at(struct ttm_bo *bo,
				  const struct ttm_placement *placement,
				  struct ttm_operation_ctx *ctx,
				  const char *file, int line)
{
	unsigned int i;
	int ret;

	ret = resv_assert_held_at(bo->resv, "ttm_bo_validate", file, line);
	if (ret)
		return ret;
	if (!bo_placement_valid(bo->dev, placement))
		return -EINVAL;

	/* An import's pages are where its exporter keeps them. */
	if (placement_has(bo, placement) || bo->exporter)
		return 0;
	/*
	 * Pinned buffers never move. -EINVAL as in TTM: asking to move one
	 * is the caller's mistake, not a state that waiting would change
	 * (as -EBUSY would suggest).
	 */
	if (bo->pin_count)
		return -EINVAL;

	for (i = 0; i < placement->count; i++)
		if (place_take(bo, &placement->places[i]))
			return bo_move(bo, placement->places[i].domain, ctx);
	ret = evict_take_any(bo, placement, ctx);
	return ret < 0 ? ret : bo_move(bo, ret, ctx);
}

/* Out of reach of the caller-site macro of ttmsim/bo.h. */
TTM_EXPORT int (ttm_bo_validate)(struct ttm_bo *bo,
				 const struct ttm_placement *placement,
				 struct ttm_operation_ctx *ctx)
{
	return ttm_bo_validate_at(bo, placement, ctx, NULL, 0);
}

int bo_create_make_room(struct ttm_bo *bo, const struct ttm_operation_ctx *ctx)
{
	int ret = evict_take_any(bo, &bo->placement, ctx);

	if (ret < 0)
		return ret;
	pthread_mutex_lock(&bo->dev->lock);
	bo_account_in_locked(bo, ret);
	pthread_mutex_unlock(&bo->dev->lock);
	return 0;
}
