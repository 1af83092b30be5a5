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
	struct bo_want want;

	/* The whole of a domain, the usual place: no range to work out. */
	if (!place->fpfn && !place->lpfn &&
	    !(place->flags & TTM_PLACE_CPU_VISIBLE))
		/*
		 * The buffer's own copy of its resource's domain, in its hot
		 * cache line: no miss on the resource (both change together
		 * under the reservation, which the caller holds).
		 */
		return __atomic_load_n(&bo->domain, __ATOMIC_RELAXED) ==
		       (int)place->domain;
	want = bo_want_of(bo->dev, place);
	/* Every range is contiguous: TTM_PLACE_CONTIGUOUS always holds. */
	return bo_res_fits(bo, &want);
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

/*
 * Take room for @bo where @want says if there is some now; or NULL, and
 * why in *@ret_err (-ENOSPC, -ENOMEM).
 */
static struct ttm_resource *want_take(struct ttm_bo *bo,
				      const struct bo_want *want,
				      int *ret_err)
{
	struct ttm_device *dev = bo->dev;
	struct ttm_resource *res;

	pthread_mutex_lock(&dev->lock);
	res = bo_res_take_err_locked(dev, bo, want, bo->size, ret_err);
	pthread_mutex_unlock(&dev->lock);
	return res;
}

/*
 * Make room where @want says until @bo fits there, then take it. The
 * room is taken under the same lock as the check, so that another thread
 * cannot take it in between; if one takes what was freed, go on.
 *
 * An eviction frees nothing at once: its source stays accounted until
 * its copy signals. So while sources are in flight in the domain, wait
 * for them (they free room for sure) rather than evict more than needed;
 * that also lets the next eviction's search see the room they held.
 */
static int want_evict_take(struct ttm_bo *bo, const struct bo_want *want,
			   const struct ttm_operation_ctx *ctx,
			   struct ttm_resource **ret_res)
{
	struct bo_vetoed vetoed = { 0 };
	unsigned int gen;
	int ret = 0;

	/* Larger than the whole domain: evicting everything would not do. */
	if (bo->dev->domain[want->domain].capacity < bo->size)
		return -ENOSPC;
	/*
	 * Registered before the first attempt: see bo/bo_room.c. Out of
	 * memory for the resource itself: no room made would do, and
	 * looking again at once would spin as long as memory is short.
	 */
	bo_room_enter(bo->dev);
	while (gen = bo_room_gen(bo->dev),
	       !(*ret_res = want_take(bo, want, &ret)) && ret != -ENOMEM) {
		ret = bo_ghost_wait(bo->dev, want->domain, ctx);
		/*
		 * No copy in flight now; but one may have ended since the
		 * room was checked, freeing its room: look again before
		 * evicting something that need not go.
		 */
		if (ret == -ENOSPC && (*ret_res = want_take(bo, want, &ret))) {
			ret = 0;
			break;
		}
		if (ret == -ENOSPC)
			ret = bo_evict_one(bo, want, ctx, &vetoed);
		if (ret == -ENOSPC)
			ret = bo_room_wait(bo, want, ctx, &vetoed, gen);
		if (ret)
			break;
	}
	bo_room_leave(bo->dev);
	bo_vetoed_fini(&vetoed);
	return ret;
}

/*
 * Make room for @bo in the first domain of @placement that can, and take
 * it there: *@ret_res, or an error. A domain that could make room only by
 * waiting for the GPU (@ctx->no_wait_gpu) does not stop the walk: the
 * next may have room to evict, as in TTM; -EBUSY only if none did.
 * -ENOSPC is counted in the stats.
 */
static int evict_take_any(struct ttm_bo *bo,
			  const struct ttm_placement *placement,
			  const struct ttm_operation_ctx *ctx,
			  struct ttm_resource **ret_res)
{
	int busy = 0, ret;
	unsigned int i;

	for (i = 0; i < placement->count; i++) {
		const struct ttm_place *place = &placement->places[i];
		struct bo_want want = bo_want_of(bo->dev, place);

		/* Larger than its range: evicting everything would not do. */
		if (!bo_place_can_hold(bo->dev, place, bo->size))
			continue;
		ret = want_evict_take(bo, &want, ctx, ret_res);
		if (ret == 0)
			return 0;
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
	struct ttm_resource *res;
	unsigned int i;
	int ret;

	ret = resv_assert_held_at(bo->resv, "ttm_bo_validate", file, line);
	if (ret)
		return ret;
	/* Even a buffer already in place: the next call may have to move. */
	if (ww_debug_blocks(WW_DEBUG_SIGNALLING_ALLOC, bo, "ttm_bo_validate",
			    file, line))
		return -EINVAL;
	if (!bo_placement_valid(bo->dev, placement))
		return -EINVAL;

	/* An import's pages are where its exporter keeps them. */
	if (placement_has(bo, placement) || bo_exporter(bo))
		return 0;
	/*
	 * Pinned buffers never move. -EINVAL as in TTM: asking to move one
	 * is the caller's mistake, not a state that waiting would change
	 * (as -EBUSY would suggest).
	 */
	if (bo->pin_count)
		return -EINVAL;

	for (i = 0; i < placement->count; i++) {
		struct bo_want want = bo_want_of(bo->dev,
						 &placement->places[i]);

		/* Out of memory: evict_take_any() finds so too. */
		res = want_take(bo, &want, &ret);
		if (res)
			return bo_move(bo, res, ctx);
	}
	ret = evict_take_any(bo, placement, ctx, &res);
	return ret ? ret : bo_move(bo, res, ctx);
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
	struct ttm_resource *res;
	int ret = evict_take_any(bo, bo_placement(bo), ctx, &res);

	return ret ? ret : bo_res_settle(bo, res, ctx);
}
