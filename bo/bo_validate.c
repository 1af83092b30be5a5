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

static bool placement_has(const struct ttm_placement *placement, int domain)
{
	unsigned int i;

	for (i = 0; i < placement->count; i++)
		if ((int)placement->domains[i] == domain)
			return true;
	return false;
}

/* Take @bo's bytes in @domain if it has room now. */
static bool domain_take(struct ttm_bo *bo, int domain)
{
	struct ttm_device *dev = bo->dev;
	bool ok;

	pthread_mutex_lock(&dev->lock);
	ok = bo_domain_take_locked(dev, domain, bo->size);
	pthread_mutex_unlock(&dev->lock);
	return ok;
}

/*
 * Make room in @domain until @bo fits there, then take its bytes. The
 * room is taken under the same lock as the check, so that another thread
 * cannot take it in between; if one takes what was freed, go on.
 *
 * An eviction frees nothing at once: its source stays accounted until
 * its copy signals. So while sources are in flight in @domain, wait for
 * them (they free room for sure) rather than evict more than needed.
 */
static int domain_evict_take(struct ttm_bo *bo, int domain,
			     const struct ttm_operation_ctx *ctx)
{
	uint64_t vetoed = 0;
	int ret;

	/* Larger than the whole domain: evicting everything would not do. */
	if (bo->dev->domain[domain].capacity < bo->size)
		return -ENOSPC;
	while (!domain_take(bo, domain)) {
		ret = bo_ghost_wait(bo->dev, domain, ctx);
		/*
		 * No copy in flight now; but one may have ended since the
		 * room was checked, freeing its room: look again before
		 * evicting something that need not go.
		 */
		if (ret == -ENOSPC && domain_take(bo, domain))
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
 * Make room for @bo in the first domain of @placement that can, and take
 * its bytes there: the domain, or an error. A domain that could make
 * room only by waiting for the GPU (@ctx->no_wait_gpu) does not stop the
 * walk: the next may have room to evict, as in TTM; -EBUSY only if none
 * did. -ENOSPC is counted in the stats.
 */
static int evict_take_any(struct ttm_bo *bo,
			  const struct ttm_placement *placement,
			  const struct ttm_operation_ctx *ctx)
{
	int busy = 0, ret;
	unsigned int i;

	for (i = 0; i < placement->count; i++) {
		ret = domain_evict_take(bo, placement->domains[i], ctx);
		if (ret == 0)
			return placement->domains[i];
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
	/* Even a buffer already in place: the next call may have to move. */
	if (ww_debug_blocks(WW_DEBUG_SIGNALLING_ALLOC, bo, "ttm_bo_validate",
			    file, line))
		return -EINVAL;
	if (!bo_placement_valid(placement))
		return -EINVAL;

	/* An import's pages are where its exporter keeps them. */
	if (placement_has(placement, bo->domain) || bo->exporter)
		return 0;
	/*
	 * Pinned buffers never move. -EINVAL as in TTM: asking to move one
	 * is the caller's mistake, not a state that waiting would change
	 * (as -EBUSY would suggest).
	 */
	if (bo->pin_count)
		return -EINVAL;

	for (i = 0; i < placement->count; i++)
		if (domain_take(bo, placement->domains[i]))
			return bo_move(bo, placement->domains[i], ctx);
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
