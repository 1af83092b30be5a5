// SPDX-License-Identifier: MIT
/*
 * Buffer objects: creation and placement without eviction, freeing, and
 * the accessors. Destruction on the last reference is in bo_destroy.c.
 */
#include <errno.h>
#include <stdlib.h>

#include "bo/bo.h"
#include "util/compiler.h"

bool bo_placement_valid(const struct ttm_placement *placement)
{
	unsigned int i, j;

	if (!placement || placement->count == 0 ||
	    placement->count > TTM_PLACEMENT_MAX)
		return false;
	for (i = 0; i < placement->count; i++) {
		if ((unsigned int)placement->domains[i] >= TTM_DOMAIN_COUNT)
			return false;
		/* A domain twice would only be tried twice: a caller bug. */
		for (j = 0; j < i; j++)
			if (placement->domains[j] == placement->domains[i])
				return false;
	}
	return true;
}

/*
 * The first domain of @bo's placement with room for it, or -ENOSPC. With
 * @commit, account @bo there and put it at that LRU's tail; without, only
 * look (and count nothing), so that creation fails before allocating.
 */
static int bo_place(struct ttm_bo *bo, bool commit)
{
	struct ttm_device *dev = bo->dev;
	unsigned int i;
	int ret = -ENOSPC;

	pthread_mutex_lock(&dev->lock);
	for (i = 0; i < bo->placement.count; i++) {
		int d = bo->placement.domains[i];
		struct bo_domain *dom = &dev->domain[d];

		if (dom->capacity - dom->used < bo->size)
			continue;
		ret = d;
		if (!commit)
			break;
		dom->used += bo->size;
		dom->buffers++;
		dev->buffers++;
		__atomic_store_n(&bo->domain, d, __ATOMIC_RELAXED);
		bo_list_add_tail(&bo->node, &dom->lru);
		break;
	}
	if (ret < 0)
		dev->enospc++;
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

TTM_EXPORT int ttm_bo_create(struct ttm_device *dev, uint64_t size,
			     const struct ttm_placement *placement,
			     uint32_t flags, struct ttm_bo **ret_bo)
{
	struct ttm_bo *bo;
	int ret;

	if (size == 0 || size % 4 || size > TTM_BO_MAX_SIZE || flags ||
	    !bo_placement_valid(placement))
		return -EINVAL;

	bo = calloc(1, sizeof(*bo));
	if (!bo)
		return -ENOMEM;
	bo->dev = dev;
	bo->size = size;
	bo->placement = *placement;
	ret = bo_place(bo, false);
	if (ret < 0) {
		free(bo);
		return ret;
	}
	/*
	 * calloc(): zero-filled, and aligned for any type (at least 8
	 * bytes), more than the GPU's 4; for large sizes the zero pages come
	 * from mmap() lazily, so a big buffer costs nothing until touched.
	 */
	bo->mem = calloc(1, size);
	if (!bo->mem) {
		free(bo);
		return -ENOMEM;
	}
	bo->refcount = 1;
	bo_list_init(&bo->node);
	ttm_resv_init(&bo->resv, &dev->ww_class);

	/* Another thread may have taken the room meanwhile: place again. */
	ret = bo_place(bo, true);
	if (ret < 0) {
		ttm_resv_fini(&bo->resv);
		free(bo->mem);
		free(bo);
		return ret;
	}
	*ret_bo = bo;
	return 0;
}

void bo_free(struct ttm_bo *bo)
{
	struct ttm_device *dev = bo->dev;
	struct bo_domain *dom = &dev->domain[bo->domain];

	pthread_mutex_lock(&dev->lock);
	bo_list_del(&bo->node);
	dom->used -= bo->size;
	dom->buffers--;
	dev->buffers--;
	if (bo->destroy_cbs && --dev->zombies == 0)
		pthread_cond_broadcast(&dev->idle);
	pthread_mutex_unlock(&dev->lock);
	/*
	 * Past this point @dev may be gone (ttm_device_destroy() waited only
	 * for the count above): touch nothing of it.
	 */
	ttm_resv_fini(&bo->resv);
	free(bo->destroy_cbs);
	free(bo->mem);
	free(bo);
}

void bo_lru_bump_locked(struct ttm_bo *bo)
{
	if (bo->pin_count == 0)
		bo_list_move_tail(&bo->node, bo_lru_of(bo->dev, bo->domain));
}

TTM_EXPORT uint64_t ttm_bo_size(const struct ttm_bo *bo)
{
	return bo->size;
}

TTM_EXPORT enum ttm_domain ttm_bo_domain(const struct ttm_bo *bo)
{
	return (enum ttm_domain)__atomic_load_n(&bo->domain,
						__ATOMIC_RELAXED);
}

TTM_EXPORT struct ttm_resv *ttm_bo_resv(struct ttm_bo *bo)
{
	return &bo->resv;
}

TTM_EXPORT void ttm_bo_gpu_range(struct ttm_bo *bo,
				 struct ttm_gpu_range *range)
{
	range->addr = bo->mem;
	range->size = bo->size;
}
