// SPDX-License-Identifier: MIT
/*
 * Buffer objects: creation and placement without eviction, freeing, and
 * the accessors. Destruction on the last reference is in bo_destroy.c.
 */
#include <errno.h>
#include <stdlib.h>

#include "bo/bo.h"
#include "bo/resv.h"
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

/* Account @bo in @domain, whose bytes bo_domain_take_locked() took. */
void bo_account_in_locked(struct ttm_bo *bo, int domain)
{
	struct ttm_device *dev = bo->dev;
	struct bo_domain *dom = &dev->domain[domain];

	dom->incoming -= bo->size;
	dom->buffers++;
	dev->buffers++;
	__atomic_store_n(&bo->domain, domain, __ATOMIC_RELAXED);
	list_add_tail(&bo->node, &dom->lru);
}

/* Place @bo in the first domain of its placement with room, or -ENOSPC. */
static int bo_place(struct ttm_bo *bo)
{
	struct ttm_device *dev = bo->dev;
	unsigned int i;
	int ret = -ENOSPC;

	pthread_mutex_lock(&dev->lock);
	for (i = 0; i < bo->placement.count && ret < 0; i++) {
		int d = bo->placement.domains[i];

		if (bo_domain_take_locked(dev, d, bo->size)) {
			bo_account_in_locked(bo, d);
			ret = 0;
		}
	}
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

/* Whether some domain of @placement could ever hold @size bytes. */
static bool placement_can_hold(struct ttm_device *dev,
			       const struct ttm_placement *placement,
			       uint64_t size)
{
	unsigned int i;

	for (i = 0; i < placement->count; i++)
		if (dev->domain[placement->domains[i]].capacity >= size)
			return true;
	return false;
}

/* Lock the new buffer's own reservation: nobody else can see it yet. */
static void bo_lock_new(struct ttm_bo *bo, struct ww_acquire_ctx *ticket)
{
	/*
	 * Under a ticket the lock joins the caller's transaction, which
	 * unlocks it with the rest; it cannot contend, hence no back-off.
	 */
	if (ticket)
		(void)ww_mutex_lock(&bo->base.lock, ticket);
	else
		(void)ww_mutex_trylock(&bo->base.lock, NULL);
}

TTM_EXPORT int ttm_bo_init_reserved(struct ttm_device *dev, struct ttm_bo *bo,
				    enum ttm_bo_type type, uint64_t size,
				    const struct ttm_placement *placement,
				    const struct ttm_operation_ctx *ctx,
				    struct ww_acquire_ctx *ticket,
				    struct ttm_resv *resv,
				    void (*destroy)(struct ttm_bo *bo))
{
	struct ttm_operation_ctx room = { 0 };
	void *mem;
	int ret;

	if (ww_debug_blocks(WW_DEBUG_SIGNALLING_ALLOC, dev,
			    "ttm_bo_init_reserved", NULL, 0))
		return -EINVAL;
	if (size == 0 || size % 4 || size > TTM_BO_MAX_SIZE ||
	    (unsigned int)type > TTM_BO_TYPE_KERNEL || !destroy ||
	    !bo_placement_valid(placement))
		return -EINVAL;
	/* As TTM: a shared reservation comes locked by the caller. */
	if (resv && resv_assert_held(resv, "ttm_bo_init_reserved"))
		return -EINVAL;
	/* One family per device: its tickets must be able to lock it. */
	if (resv && ww_lock_class(&resv->lock) != dev->ww_class)
		return -EXDEV;
	if (!resv && ticket && ticket->ww_class &&
	    ticket->ww_class != dev->ww_class) {
		if (ww_debug_active())
			resv_class_mismatch(NULL, dev->ww_class, ticket,
					    "ttm_bo_init_reserved", NULL, 0);
		return -EXDEV;
	}
	if (!placement_can_hold(dev, placement, size)) {
		pthread_mutex_lock(&dev->lock);
		dev->enospc++;
		pthread_mutex_unlock(&dev->lock);
		return -ENOSPC;
	}
	/*
	 * calloc(): zero-filled, and aligned for any type (at least 8
	 * bytes), more than the GPU's 4; for large sizes the zero pages come
	 * from mmap() lazily, so a big buffer costs nothing until touched.
	 */
	mem = calloc(1, size);
	if (!mem)
		return -ENOMEM;

	*bo = (struct ttm_bo){
		.dev = dev,
		.size = size,
		.mem = mem,
		.refcount = 1,
		.type = type,
		.placement = *placement,
		.destroy = destroy,
	};
	list_init(&bo->node);
	/*
	 * Always initialised, shared or not: a buffer that leaves a shared
	 * reservation takes a copy of its fences in there (bo_destroy.c).
	 */
	ttm_resv_init(&bo->base, dev->ww_class);
	bo->resv = resv ? resv : &bo->base;
	if (!resv)
		bo_lock_new(bo, ticket);

	/*
	 * Like TTM's creation, which validates: room first, else evict,
	 * try-locking only (creation has no back-off to offer).
	 */
	if (ctx) {
		room.interruptible = ctx->interruptible;
		room.no_wait_gpu = ctx->no_wait_gpu;
		room.allow_res_evict = ctx->allow_res_evict;
		room.resv = ctx->resv;
	}
	ret = bo_place(bo);
	if (ret == -ENOSPC)
		ret = bo_create_make_room(bo, &room);
	if (ret < 0) {
		if (!resv)
			ww_mutex_unlock(&bo->base.lock);
		ttm_resv_fini(&bo->base);
		free(mem);
		return ret;
	}
	return 0;
}

/* The destroy of the buffers ttm_bo_create() allocates. */
static void bo_destroy_free(struct ttm_bo *bo)
{
	free(bo);
}

TTM_EXPORT int ttm_bo_create(struct ttm_device *dev, uint64_t size,
			     const struct ttm_placement *placement,
			     uint32_t flags, struct ttm_bo **ret_bo)
{
	struct ttm_operation_ctx ctx = {
		.no_wait_gpu = flags & TTM_BO_CREATE_NO_WAIT_GPU,
	};
	struct ttm_bo *bo;
	int ret;

	if (flags & ~TTM_BO_CREATE_NO_WAIT_GPU)
		return -EINVAL;
	/* Even with NO_WAIT_GPU: making room still waits for the device. */
	if (ww_debug_blocks(WW_DEBUG_SIGNALLING_ALLOC, dev, "ttm_bo_create",
			    NULL, 0))
		return -EINVAL;
	bo = malloc(sizeof(*bo));
	if (!bo)
		return -ENOMEM;
	ret = ttm_bo_init_reserved(dev, bo, TTM_BO_TYPE_DEVICE, size,
				   placement, &ctx, NULL, NULL,
				   bo_destroy_free);
	if (ret) {
		free(bo);
		return ret;
	}
	ttm_bo_unreserve(bo);
	*ret_bo = bo;
	return 0;
}

void bo_free(struct ttm_bo *bo)
{
	struct ttm_device *dev = bo->dev;
	struct bo_domain *dom = &dev->domain[bo->domain];

	/*
	 * As TTM's cleanup of a released buffer's memory: once no fence
	 * is left (the GPU is done with it), before the memory can be
	 * reused. A driver tears its GPU mappings down here.
	 */
	if (dev->funcs->delete_mem_notify)
		dev->funcs->delete_mem_notify(bo, (enum ttm_domain)bo->domain,
					      dev->funcs_data);
	pthread_mutex_lock(&dev->lock);
	list_del(&bo->node);
	dom->used -= bo->size;
	dom->buffers--;
	dev->buffers--;
	if (bo->destroy_cbs && --dev->zombies == 0)
		pthread_cond_broadcast(&dev->idle);
	bo_room_changed_locked(dev);
	pthread_mutex_unlock(&dev->lock);
	/*
	 * Past this point @dev may be gone, unless this is its worker
	 * (ttm_device_destroy() waited only for the count above): touch
	 * nothing of it. Nor of @bo->resv: a shared one may be gone too
	 * (the release switched to @bo->base if it was busy).
	 */
	ttm_resv_fini(&bo->base);
	free(bo->destroy_cbs);
	free(bo->mem);
	if (bo->exporter)
		bo_import_release(bo);
	bo->destroy(bo);
}

void bo_lru_bump_locked(struct ttm_bo *bo)
{
	if (bo->pin_count == 0)
		list_move_tail(&bo->node, bo_lru_of(bo->dev, bo->domain));
}

TTM_EXPORT uint64_t ttm_bo_size(const struct ttm_bo *bo)
{
	return bo->size;
}

TTM_EXPORT struct ttm_device *ttm_bo_device(const struct ttm_bo *bo)
{
	return bo->dev;
}

TTM_EXPORT const struct ttm_placement *
ttm_bo_placement(const struct ttm_bo *bo)
{
	return &bo->placement;
}

TTM_EXPORT enum ttm_domain ttm_bo_domain(const struct ttm_bo *bo)
{
	return (enum ttm_domain)__atomic_load_n(&bo->domain,
						__ATOMIC_RELAXED);
}

TTM_EXPORT struct ttm_resv *ttm_bo_resv(struct ttm_bo *bo)
{
	return bo->resv;
}

TTM_EXPORT enum ttm_bo_type ttm_bo_type(const struct ttm_bo *bo)
{
	return (enum ttm_bo_type)bo->type;
}

TTM_EXPORT void ttm_bo_gpu_range_at(struct ttm_bo *bo,
				    struct ttm_gpu_range *range,
				    const char *file, int line)
{
	/* Refused: an empty range, so that a job given it touches nothing. */
	if (resv_assert_held_at(bo->resv, "ttm_bo_gpu_range", file, line)) {
		*range = (struct ttm_gpu_range){ NULL, 0 };
		return;
	}
	range->addr = bo_mem(bo);
	range->size = bo->size;
}

/* Out of reach of the caller-site macro of ttmsim/bo.h. */
TTM_EXPORT void (ttm_bo_gpu_range)(struct ttm_bo *bo,
				   struct ttm_gpu_range *range)
{
	ttm_bo_gpu_range_at(bo, range, NULL, 0);
}
