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

/* The pages of @domain: a last partial page counts. */
static uint64_t domain_pages(const struct ttm_device *dev, int domain)
{
	uint64_t cap = dev->domain[domain].capacity;

	return (cap >> dev->page_shift) + ((cap & (dev->page_size - 1)) != 0);
}

void bo_place_range(const struct ttm_device *dev,
		    const struct ttm_place *place, uint64_t *ret_first,
		    uint64_t *ret_end)
{
	uint64_t end = domain_pages(dev, place->domain);

	if (place->lpfn && place->lpfn < end)
		end = place->lpfn;
	if ((place->flags & TTM_PLACE_CPU_VISIBLE) &&
	    dev->visible_vram >> dev->page_shift < end)
		end = dev->visible_vram >> dev->page_shift;
	*ret_first = place->fpfn;
	*ret_end = end;
}

uint64_t bo_place_bytes(const struct ttm_device *dev,
			const struct ttm_place *place)
{
	uint64_t first, end;

	if (place->domain == TTM_DOMAIN_SYSTEM)
		return UINT64_MAX;
	bo_place_range(dev, place, &first, &end);
	if (end <= first)
		return 0;
	/* The last partial page of the domain is not a whole page. */
	if (end * dev->page_size > dev->domain[place->domain].capacity)
		return dev->domain[place->domain].capacity -
		       first * dev->page_size;
	return (end - first) * dev->page_size;
}

bool bo_place_valid(const struct ttm_device *dev,
		    const struct ttm_place *place)
{
	if ((unsigned int)place->domain >= TTM_DOMAIN_COUNT ||
	    (place->flags & ~TTM_PLACE_FLAGS_ALL))
		return false;
	/* The whole of a domain, the usual place: every validation asks. */
	if (!place->fpfn && !place->lpfn)
		return !(place->flags & TTM_PLACE_CPU_VISIBLE) ||
		       place->domain == TTM_DOMAIN_VRAM;
	if (place->lpfn && place->fpfn >= place->lpfn)
		return false;
	if ((place->flags & TTM_PLACE_CPU_VISIBLE) &&
	    place->domain != TTM_DOMAIN_VRAM)
		return false;
	/* SYSTEM has no addresses to restrict. */
	if (place->domain == TTM_DOMAIN_SYSTEM)
		return !place->fpfn && !place->lpfn;
	/* A range that starts past the domain can hold nothing. */
	return place->fpfn < domain_pages(dev, place->domain);
}

static bool place_equal(const struct ttm_place *a, const struct ttm_place *b)
{
	return a->domain == b->domain && a->fpfn == b->fpfn &&
	       a->lpfn == b->lpfn && a->flags == b->flags;
}

bool bo_placement_valid(const struct ttm_device *dev,
			const struct ttm_placement *placement)
{
	unsigned int i, j;

	if (!placement || placement->count == 0 ||
	    placement->count > TTM_PLACEMENT_MAX)
		return false;
	for (i = 0; i < placement->count; i++) {
		if (!bo_place_valid(dev, &placement->places[i]))
			return false;
		/*
		 * A place twice would only be tried twice: a caller bug. One
		 * domain with other ranges or flags is another place.
		 */
		for (j = 0; j < i; j++)
			if (place_equal(&placement->places[j],
					&placement->places[i]))
				return false;
	}
	return true;
}

/* Account @bo in @res, whose bytes bo_res_take_locked() took. */
void bo_account_in_locked(struct ttm_bo *bo, struct ttm_resource *res)
{
	struct ttm_device *dev = bo->dev;
	struct bo_domain *dom = &dev->domain[bo_res_domain(res)];

	dom->incoming -= bo_res_bytes(dev, res);
	dom->buffers++;
	dev->buffers++;
	bo->res = res;
	__atomic_store_n(&bo->domain, bo_res_domain(res), __ATOMIC_RELAXED);
	bo_lru_add_locked(bo);
}

int bo_res_settle(struct ttm_bo *bo, struct ttm_resource *res,
		  const struct ttm_operation_ctx *ctx)
{
	struct ttm_device *dev = bo->dev;
	int ret = bo_ghost_await(dev, res, ctx);

	if (ret == 0)
		ret = bo_res_fill(dev, res, bo->size, true);

	pthread_mutex_lock(&dev->lock);
	if (ret)
		bo_res_untake_locked(dev, res);
	else
		bo_account_in_locked(bo, res);
	bo_room_changed_locked(dev);
	pthread_mutex_unlock(&dev->lock);
	if (ret)
		bo_res_free(res);
	return ret;
}

/* Place @bo in the first domain of its placement with room, or -ENOSPC. */
static int bo_place(struct ttm_bo *bo, const struct ttm_operation_ctx *ctx)
{
	struct ttm_device *dev = bo->dev;
	struct ttm_resource *res = NULL;
	unsigned int i;
	const struct ttm_placement *placement = bo_placement(bo);

	pthread_mutex_lock(&dev->lock);
	for (i = 0; i < placement->count && !res; i++) {
		struct bo_want want = bo_want_of(dev, &placement->places[i]);

		res = bo_res_take_locked(dev, bo, &want, bo->size);
	}
	pthread_mutex_unlock(&dev->lock);
	return res ? bo_res_settle(bo, res, ctx) : -ENOSPC;
}

/* Whether some place of @placement could ever hold @size bytes. */
static bool placement_can_hold(struct ttm_device *dev,
			       const struct ttm_placement *placement,
			       uint64_t size)
{
	unsigned int i;

	for (i = 0; i < placement->count; i++)
		if (bo_place_can_hold(dev, &placement->places[i], size))
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
	int ret;

	if (ww_debug_blocks(WW_DEBUG_SIGNALLING_ALLOC, dev,
			    "ttm_bo_init_reserved", NULL, 0))
		return -EINVAL;
	if (size == 0 || size % 4 || size > TTM_BO_MAX_SIZE ||
	    (unsigned int)type > TTM_BO_TYPE_KERNEL || !destroy ||
	    !bo_placement_valid(dev, placement))
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
	*bo = (struct ttm_bo){
		.dev = dev,
		.size = size,
		.refcount = 1,
		.type = type,
		.profile = bo_profile_get(dev, placement, destroy),
	};
	if (!bo->profile)
		return -ENOMEM;
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
	ret = bo_place(bo, &room);
	if (ret == -ENOSPC)
		ret = bo_create_make_room(bo, &room);
	if (ret < 0) {
		if (!resv)
			ww_mutex_unlock(&bo->base.lock);
		ttm_resv_fini(&bo->base);
		pthread_mutex_lock(&dev->lock);
		bo_profile_put_locked(dev, bo->profile);
		pthread_mutex_unlock(&dev->lock);
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
	struct ttm_resource *res = bo->res;
	/* Its profile goes below; the device may be gone before the call. */
	void (*destroy)(struct ttm_bo *bo) = bo->profile->destroy;

	/*
	 * As TTM's cleanup of a released buffer's memory: once no fence
	 * is left (the GPU is done with it), before the memory can be
	 * reused. A driver tears its GPU mappings down here.
	 */
	if (dev->funcs->delete_mem_notify)
		dev->funcs->delete_mem_notify(bo, (enum ttm_domain)bo->domain,
					      dev->funcs_data);
	pthread_mutex_lock(&dev->lock);
	bo_lru_del_locked(bo);
	bo_res_release_locked(dev, res);
	bo_profile_put_locked(dev, bo->profile);
	dom->buffers--;
	dev->buffers--;
	if (bo->destroy_pending && --dev->zombies == 0)
		pthread_cond_broadcast(&dev->idle);
	bo_room_changed_locked(dev);
	pthread_mutex_unlock(&dev->lock);
	/*
	 * Past this point @dev may be gone, unless this is its worker
	 * (ttm_device_destroy() waited only for the count above): touch
	 * nothing of it. Nor of @bo->resv: a shared one may be gone too
	 * (a busy release switched to @bo->base, by its copy of the fences
	 * or the worker's; one that could allocate neither is still on it,
	 * and its owner finalises it only after this destroy).
	 */
	ttm_resv_fini(&bo->base);
	bo_res_free(res);
	if (bo_exporter(bo))
		bo_import_release(bo);
	free(bo->prime);
	destroy(bo);
}

TTM_EXPORT bool ttm_bo_is_driver_bo(const struct ttm_bo *bo,
				     void (*destroy)(struct ttm_bo *bo))
{
	return bo->profile->destroy == destroy;
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
	return bo_placement(bo);
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
