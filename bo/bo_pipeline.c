// SPDX-License-Identifier: MIT
/*
 * Pipelined eviction, as TTM's move fence: a move's source range in VRAM
 * or GTT is given back as soon as its copy is queued, not when the copy
 * ends, so that a validation short of room takes it at once instead of
 * sleeping on the copy while it holds reservations. Its bytes are still
 * read by that copy: whoever takes an overlapping range orders its first
 * write after the copy's fence. The move into the range (on the GPU, by
 * the driver or on the CPU) waits for the KERNEL fences of the buffer's
 * reservation, where bo_ghost_order() puts them; creation, which zeroes
 * on the CPU, waits for them there (bo_ghost_await()). As TTM, each
 * domain keeps the latest copy's fence (its move fence): the moves'
 * entity is one timeline, so it covers every earlier copy, at O(1) per
 * move. A copy on another timeline (a driver's move hook) is not covered
 * by it: its ghost is looked up by range instead, and only an overlapping
 * one is waited for. docs/bo-design.md, "Pipelined eviction".
 */
#include <errno.h>
#include <stdlib.h>

#include "bo/bo.h"

/*
 * Whether @fence has signalled, without polling its driver's signaled op:
 * that may signal it here and run a ghost's callback, which takes
 * dev->lock, held by the callers.
 */
static bool fence_done(const struct ttm_fence *fence)
{
	return __atomic_load_n(&fence->status, __ATOMIC_ACQUIRE) != 0;
}

void bo_ghost_track_locked(struct ttm_device *dev, struct bo_ghost *ghost)
{
	struct bo_domain *dom = &dev->domain[bo_res_domain(ghost->res)];
	struct ttm_fence *cur = dom->move_fence, *fence = ghost->fence;

	/*
	 * The moves' entity is one timeline whose fences signal in order:
	 * its latest fence covers every earlier copy, and the common case
	 * needs no list walk at all. A driver's copy on another timeline
	 * (its move hook's fence) is looked up by its range instead.
	 */
	if (!cur || fence_done(cur) ||
	    (ttm_fence_context(cur) == ttm_fence_context(fence) &&
	     ttm_fence_is_later(fence, cur))) {
		dom->move_fence = ttm_fence_get(fence);
		/* Its last reference may go: put once dev->lock is dropped. */
		ghost->stale = cur;
	} else if (ttm_fence_context(cur) != ttm_fence_context(fence)) {
		ghost->scanned = true;
		dev->n_scanned_ghosts++;
	}
}

struct ttm_fence *bo_ghost_untrack_locked(struct ttm_device *dev,
					  struct bo_ghost *ghost)
{
	struct bo_domain *dom = &dev->domain[bo_res_domain(ghost->res)];
	struct ttm_fence *move = NULL;

	if (ghost->scanned)
		dev->n_scanned_ghosts--;
	/*
	 * Its copy ended, and every earlier one of its timeline: nothing
	 * is left to order after. Dropped here, not at the device's free,
	 * so that a driver's fence does not outlive the device's last
	 * ghost (the driver may tear its rings down once destroy returns).
	 */
	if (dom->move_fence == ghost->fence) {
		move = dom->move_fence;
		dom->move_fence = NULL;
	}
	return move;
}

void bo_ghost_fini_device(struct ttm_device *dev)
{
	int d;

	for (d = 0; d < TTM_DOMAIN_COUNT; d++) {
		ttm_fence_put(dev->domain[d].move_fence);
		dev->domain[d].move_fence = NULL;
	}
}

/* Whether scanned @g's range, given back, overlaps @res's. */
static bool ghost_overlaps(const struct bo_ghost *g,
			   const struct ttm_resource *res)
{
	return g->scanned && bo_res_domain(g->res) == bo_res_domain(res) &&
	       range_node_overlaps(&g->res->node, &res->node);
}

/*
 * Up to @max references to the fences @res's first write must follow
 * (bo_ghost_fences()); their count. dev->lock held.
 */
static unsigned int ghost_fences_locked(struct ttm_device *dev,
					const struct ttm_resource *res,
					struct ttm_fence **fences,
					unsigned int max)
{
	struct ttm_fence *move = dev->domain[bo_res_domain(res)].move_fence;
	unsigned int n = 0;
	struct list_node *node;

	if (move && !fence_done(move)) {
		if (n < max)
			fences[n] = ttm_fence_get(move);
		n++;
	}
	if (!dev->n_scanned_ghosts)
		return n;
	list_for_each(node, &dev->ghosts) {
		struct bo_ghost *g = list_entry(node, struct bo_ghost, node);

		if (!ghost_overlaps(g, res))
			continue;
		if (n < max)
			fences[n] = ttm_fence_get(g->fence);
		n++;
	}
	return n;
}

int bo_ghost_fences(struct ttm_device *dev, const struct ttm_resource *res,
		    struct ttm_fence ***ret_fences, unsigned int *ret_n)
{
	struct ttm_fence **fences = NULL, *one[1] = { NULL };
	unsigned int n, got;

	*ret_fences = NULL;
	*ret_n = 0;
	/* SYSTEM's blocks are never shared: nothing to order after. */
	if (bo_res_domain(res) == TTM_DOMAIN_SYSTEM)
		return 0;
	pthread_mutex_lock(&dev->lock);
	n = ghost_fences_locked(dev, res, one, 1);
	pthread_mutex_unlock(&dev->lock);
	/* The common case: nothing in flight, or only the move fence. */
	if (n <= 1) {
		if (!n)
			return 0;
		fences = malloc(sizeof(*fences));
		if (!fences) {
			ttm_fence_put(one[0]);
			return -ENOMEM;
		}
		fences[0] = one[0];
		*ret_fences = fences;
		*ret_n = 1;
		return 0;
	}
	ttm_fence_put(one[0]);
	/*
	 * Overlapping ghosts can only go meanwhile (@res's range is taken,
	 * and a ghost is a range some buffer held); a move fence may come:
	 * one slot more.
	 */
	fences = calloc(++n, sizeof(*fences));
	if (!fences)
		return -ENOMEM;
	pthread_mutex_lock(&dev->lock);
	got = ghost_fences_locked(dev, res, fences, n);
	pthread_mutex_unlock(&dev->lock);
	n = got < n ? got : n;
	*ret_fences = fences;
	*ret_n = n;
	return 0;
}

/* Put the @n references of @fences and free the array. */
static void fences_put(struct ttm_fence **fences, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		ttm_fence_put(fences[i]);
	free(fences);
}

/* Whether one of @fences has not signalled. */
static bool any_pending(struct ttm_fence **fences, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!ttm_fence_is_signaled(fences[i]))
			return true;
	return false;
}

int bo_ghost_order(struct ttm_bo *bo, const struct ttm_resource *res,
		   const struct ttm_operation_ctx *ctx)
{
	struct ttm_resv *resv = bo->resv;
	struct ttm_fence **fences;
	unsigned int i, n, reserved;
	int ret;

	ret = bo_ghost_fences(bo->dev, res, &fences, &n);
	if (ret || !n)
		return ret;
	/*
	 * As TTM's move fence with no_wait_gpu: the room is there, but
	 * using it means waiting for the GPU, if only on its ring.
	 */
	if (ctx->no_wait_gpu && any_pending(fences, n)) {
		fences_put(fences, n);
		return -EBUSY;
	}
	reserved = resv->reserved;
	ret = ttm_resv_reserve_fences(resv, reserved + n);
	if (ret == 0)
		for (i = 0; i < n; i++)
			ttm_resv_add_fence(resv, fences[i],
					   TTM_RESV_USAGE_KERNEL);
	/* The caller's slots only: as move_unprepare() (bo/bo_move.c). */
	if (resv->reserved > reserved)
		resv->reserved = reserved;
	fences_put(fences, n);
	return ret;
}

/*
 * A reference to the fence of a pending copy still reading @domain (@b
 * NULL) or the part of it @b covers, or NULL. For a range only
 * overlapping copies count, not the whole move fence (a CPU write into
 * @b touches nothing else). dev->lock held.
 */
static struct ttm_fence *pending_locked(struct ttm_device *dev, int domain,
					const struct range_node *b)
{
	struct ttm_fence *move = dev->domain[domain].move_fence;
	bool move_pending = move && !fence_done(move);
	struct list_node *node;

	/* Its timeline done and nothing off it: the common case, O(1). */
	if (!move_pending && !dev->n_scanned_ghosts)
		return NULL;
	/* It covers every copy of its timeline: the walk is for the rest. */
	if (!b && move_pending)
		return ttm_fence_get(move);
	list_for_each(node, &dev->ghosts) {
		struct bo_ghost *g = list_entry(node, struct bo_ghost, node);

		if (g->pipelined && bo_res_domain(g->res) == domain &&
		    (!b || range_node_overlaps(&g->res->node, b)) &&
		    !fence_done(g->fence))
			return ttm_fence_get(g->fence);
	}
	return NULL;
}

/*
 * Wait for every copy pending_locked() finds, one at a time (the lock is
 * dropped to wait). 0, -EBUSY for @ctx->no_wait_gpu (NULL: wait), -EINTR.
 */
static int pending_wait(struct ttm_device *dev, int domain,
			const struct range_node *b,
			const struct ttm_operation_ctx *ctx)
{
	struct ttm_fence *fence;
	int ret;

	for (;;) {
		pthread_mutex_lock(&dev->lock);
		fence = pending_locked(dev, domain, b);
		pthread_mutex_unlock(&dev->lock);
		if (!fence)
			return 0;
		/* Polled outside the lock: it may signal here. */
		if (ctx && ctx->no_wait_gpu && !ttm_fence_is_signaled(fence))
			ret = -EBUSY;
		else
			ret = ttm_fence_wait(fence, ctx && ctx->interruptible,
					     -1);
		ttm_fence_put(fence);
		if (ret)
			return ret;
	}
}

int bo_ghost_await(struct ttm_device *dev, const struct ttm_resource *res,
		   const struct ttm_operation_ctx *ctx)
{
	/* SYSTEM's blocks are never shared: nothing to order after. */
	if (bo_res_domain(res) == TTM_DOMAIN_SYSTEM)
		return 0;
	/*
	 * Unlike a move, no fence can carry the order: the zero fill is
	 * the CPU's, now.
	 */
	return pending_wait(dev, bo_res_domain(res), &res->node, ctx);
}

int bo_ghost_drain(struct ttm_device *dev, int domain,
		   const struct ttm_operation_ctx *ctx)
{
	return pending_wait(dev, domain, NULL, ctx);
}
