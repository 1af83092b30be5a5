// SPDX-License-Identifier: MIT
/*
 * Moving a buffer to another domain: the driver's move hook, or a copy
 * job on the device's GPU, or a CPU copy without one. The source stays
 * remembered as a ghost until the copy's fence signals: a range of VRAM or
 * GTT is given back at once (pipelined, bo/bo_pipeline.c), SYSTEM's block
 * when the copy ends.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bo/bo.h"
#include "ttmsim/sched.h"
#include "util/compiler.h"

/* The copy's simulated duration: 1 us, plus 1 us per MiB. */
static uint64_t move_duration_us(uint64_t size)
{
	return 1 + (size >> 20);
}

/* Give back @ghost's bytes and free it: the copy reading it is done. */
static void ghost_release(struct bo_ghost *ghost)
{
	struct ttm_device *dev = ghost->dev;
	struct ttm_fence *move = NULL;

	pthread_mutex_lock(&dev->lock);
	list_del(&ghost->node);
	/* A pipelined source's room went back with its switch. */
	if (!ghost->pipelined) {
		bo_res_release_locked(dev, ghost->res);
		dev->domain[bo_res_domain(ghost->res)].ghosts--;
		bo_room_changed_locked(dev);
	} else {
		move = bo_ghost_untrack_locked(dev, ghost);
	}
	if (--dev->n_ghosts == 0)
		pthread_cond_broadcast(&dev->idle);
	pthread_mutex_unlock(&dev->lock);
	/* @dev may be gone from here on (see bo_free()). */
	ttm_fence_put(move);
	ttm_fence_put(ghost->fence);
	bo_res_free(ghost->res);
	free(ghost);
}

int bo_ghost_wait(struct ttm_device *dev, int domain,
		  const struct ttm_operation_ctx *ctx)
{
	struct ttm_fence *fence = NULL;
	struct list_node *n;
	unsigned int gen;
	int ret;

	pthread_mutex_lock(&dev->lock);
	/* The release of the ghost found below bumps it. */
	gen = bo_room_gen(dev);
	/* The count keeps the common case, nothing in flight, O(1). */
	for (n = dev->ghosts.next;
	     dev->domain[domain].ghosts && n != &dev->ghosts; n = n->next) {
		struct bo_ghost *g = list_entry(n, struct bo_ghost, node);

		if (bo_res_domain(g->res) == domain) {
			fence = ttm_fence_get(g->fence);
			break;
		}
	}
	pthread_mutex_unlock(&dev->lock);
	if (!fence)
		return -ENOSPC;
	if (ctx->no_wait_gpu && !ttm_fence_is_signaled(fence))
		ret = -EBUSY;
	else
		ret = ttm_fence_wait(fence, ctx->interruptible, -1);
	ttm_fence_put(fence);
	/*
	 * A waiter may wake before the callback that frees the source has
	 * run: sleep until that release (or any other) rather than spin
	 * back here.
	 */
	if (ret == 0)
		ret = bo_room_sleep(dev, gen, ctx->interruptible);
	return ret;
}

static void ghost_cb_func(struct ttm_fence *fence, struct ttm_fence_cb *cb)
{
	(void)fence;
	ghost_release(container_of(cb, struct bo_ghost, cb));
}

/*
 * Switch @bo to @res, whose room is taken. @ghost (NULL: the old room is
 * given back at once) keeps the old resource until its copy ends.
 * Return: the old resource for the caller to free, or NULL if @ghost
 * took it.
 */
static struct ttm_resource *move_switch(struct ttm_bo *bo,
					struct ttm_resource *res,
					struct bo_ghost *ghost)
{
	struct ttm_device *dev = bo->dev;
	struct ttm_resource *old = bo->res;
	struct bo_domain *from = &dev->domain[bo_res_domain(old)];

	pthread_mutex_lock(&dev->lock);
	old->bo = NULL;
	/* Out of the old domain's LRU (and bulk group) before it changes. */
	bo_lru_del_locked(bo);
	if (ghost) {
		ghost->res = old;
		list_add_tail(&ghost->node, &dev->ghosts);
		dev->n_ghosts++;
		/*
		 * Pipelined: a range is free at once, its next owner's
		 * writes ordered after the copy (bo/bo_pipeline.c). SYSTEM's
		 * block is the copy's source alone: kept until it ends.
		 */
		ghost->pipelined = bo_res_domain(old) != TTM_DOMAIN_SYSTEM;
		if (ghost->pipelined) {
			bo_res_release_locked(dev, old);
			bo_ghost_track_locked(dev, ghost);
		} else {
			from->ghosts++;
		}
	} else {
		bo_res_release_locked(dev, old);
	}
	from->buffers--;
	dev->domain[bo_res_domain(res)].buffers++;
	dev->domain[bo_res_domain(res)].incoming -= bo_res_bytes(dev, res);
	bo->res = res;
	__atomic_store_n(&bo->domain, bo_res_domain(res), __ATOMIC_RELAXED);
	bo_lru_add_locked(bo);
	dev->moves++;
	dev->bytes_moved += bo->size;
	bo_room_changed_locked(dev);
	pthread_mutex_unlock(&dev->lock);
	return ghost ? NULL : old;
}

/*
 * Switch @bo to @res, tell the driver its old memory goes, and let it go:
 * at once without @ghost, else when @ghost's fence signals. The notice
 * comes first, so that nothing reuses the memory before the driver knows.
 */
static void move_finish(struct ttm_bo *bo, struct ttm_resource *res,
			struct bo_ghost *ghost)
{
	struct ttm_device *dev = bo->dev;
	int from = bo->domain;
	struct ttm_resource *old = move_switch(bo, res, ghost);

	/* Alive until its callback is added below. */
	if (ghost)
		ttm_fence_put(ghost->stale);
	if (dev->funcs->delete_mem_notify)
		dev->funcs->delete_mem_notify(bo, (enum ttm_domain)from,
					      dev->funcs_data);
	bo_res_free(old);
	/* Already signalled: the callback will not run, release now. */
	if (ghost && ttm_fence_add_callback(ghost->fence, &ghost->cb,
					    ghost_cb_func))
		ghost_release(ghost);
}

/*
 * What a move with a fence needs, taken before the copy starts so that
 * nothing fails after it: the ghost, and one fence slot on top of those
 * the caller reserved (ttm_exec_prepare_bo() before validating), since
 * the move's fence must not use theirs. *@ret_reserved: the caller's
 * count, for move_unprepare().
 */
static int move_prepare(struct ttm_bo *bo, struct bo_ghost **ret_ghost,
			unsigned int *ret_reserved)
{
	struct bo_ghost *ghost = calloc(1, sizeof(*ghost));
	int ret;

	if (!ghost)
		return -ENOMEM;
	ghost->dev = bo->dev;
	*ret_reserved = bo->resv->reserved;
	ret = ttm_resv_reserve_fences(bo->resv, bo->resv->reserved + 1);
	if (ret) {
		free(ghost);
		return ret;
	}
	*ret_ghost = ghost;
	return 0;
}

/*
 * The move's slot is its own: drop it if nothing used it (no fence, a
 * failure, or a fence that replaced one of its context or took a pruned
 * entry's place), so that the caller is left with @reserved, as before
 * the move. Only lowered: never give back slots the driver's hook used.
 */
static void move_unprepare(struct ttm_bo *bo, unsigned int reserved)
{
	if (bo->resv->reserved > reserved)
		bo->resv->reserved = reserved;
}

/* Copy on the GPU after every fence of @bo; the copy's fence goes in. */
static int move_gpu(struct ttm_bo *bo, struct ttm_resource *res)
{
	struct ttm_device *dev = bo->dev;
	struct ttm_gpu_range ranges[2] = {
		{ bo_res_mem(dev, bo->res), bo->size },
		{ bo_res_mem(dev, res), bo->size },
	};
	struct ttm_gpu_job job = {
		.engine = dev->copy_engine,
		.duration_us = move_duration_us(bo->size),
		.op = TTM_GPU_OP_COPY,
		.ranges = ranges,
		.n_ranges = 2,
	};
	struct ttm_gpu_dep *deps = NULL;
	struct ttm_fence **fences = NULL, *fence;
	struct bo_ghost *ghost;
	unsigned int i, n = 0, reserved;
	int ret;

	/* Everything that can fail comes before the submission. */
	ret = move_prepare(bo, &ghost, &reserved);
	if (ret)
		return ret;
	ret = ttm_resv_get_fences(bo->resv, TTM_RESV_USAGE_BOOKKEEP, &fences,
				  &n);
	if (ret == 0 && n) {
		deps = calloc(n, sizeof(*deps));
		if (!deps)
			ret = -ENOMEM;
	}
	if (ret == 0) {
		/*
		 * Ordering only: the memory must not change under a job
		 * still using it, but a failed job's buffer still moves.
		 */
		for (i = 0; i < n; i++)
			deps[i].fence = fences[i];
		job.deps = deps;
		job.n_deps = n;
		/* Through the copy ring, at the KERNEL priority. */
		ret = ttm_sched_gpu_submit(dev->move_entity, &job, &fence);
	}
	for (i = 0; i < n; i++)
		ttm_fence_put(fences[i]);
	free(fences);
	free(deps);
	if (ret) {
		move_unprepare(bo, reserved);
		free(ghost);
		return ret;
	}

	ttm_resv_add_fence(bo->resv, fence, TTM_RESV_USAGE_KERNEL);
	move_unprepare(bo, reserved);
	ghost->fence = fence;
	move_finish(bo, res, ghost);
	return 0;
}

/* Copy on the CPU once @bo is idle; the old memory goes at once. */
static int move_cpu(struct ttm_bo *bo, struct ttm_resource *res,
		    const struct ttm_operation_ctx *ctx)
{
	int ret;

	if (ctx->no_wait_gpu &&
	    !ttm_resv_test_signaled(bo->resv, TTM_RESV_USAGE_BOOKKEEP))
		return -EBUSY;
	ret = ttm_resv_wait(bo->resv, TTM_RESV_USAGE_BOOKKEEP,
			    ctx->interruptible, -1);
	if (ret)
		return ret;
	memcpy(bo_res_mem(bo->dev, res), bo_res_mem(bo->dev, bo->res),
	       bo->size);
	move_finish(bo, res, NULL);
	return 0;
}

/*
 * The driver's move: it copies (or vetoes, or asks for a hop, or for the
 * default copy); ttmsim keeps the accounting. *@ret_hop: NULL if no hop
 * may be asked for (this is the hop, or the move after it).
 */
static int move_hook(struct ttm_bo *bo, struct ttm_resource *res,
		     const struct ttm_operation_ctx *ctx, int *ret_hop)
{
	struct ttm_device *dev = bo->dev;
	struct ttm_gpu_range src = { bo_res_mem(dev, bo->res), bo->size };
	struct ttm_gpu_range dst = { bo_res_mem(dev, res), bo->size };
	enum ttm_domain hop = TTM_DOMAIN_GTT;
	struct ttm_fence *fence = NULL;
	struct bo_ghost *ghost;
	unsigned int reserved;
	int ret;

	/* As for move_gpu(): nothing may fail once the driver copied. */
	ret = move_prepare(bo, &ghost, &reserved);
	if (ret)
		return ret;
	ret = dev->funcs->move(bo, (enum ttm_domain)bo->domain,
			       (enum ttm_domain)bo_res_domain(res), &src, &dst,
			       ctx, dev->funcs_data, &fence, &hop);
	if (ret || !fence)
		move_unprepare(bo, reserved);
	if (ret == 0 && !fence) {
		free(ghost);
		ghost = NULL;
	} else if (ret) {
		/* A fence given with an error is the driver's bug: drop it. */
		ttm_fence_put(fence);
		free(ghost);
		if (ret == -EMULTIHOP) {
			if (!ret_hop)
				return -EINVAL;
			*ret_hop = (int)hop;
		}
		return ret;
	}
	if (ghost) {
		ttm_resv_add_fence(bo->resv, fence, TTM_RESV_USAGE_KERNEL);
		move_unprepare(bo, reserved);
		ghost->fence = fence;
	}
	move_finish(bo, res, ghost);
	return 0;
}

/* One move, without giving @res back on failure. */
static int move_once(struct ttm_bo *bo, struct ttm_resource *res,
		     const struct ttm_operation_ctx *ctx, int *ret_hop)
{
	struct ttm_device *dev = bo->dev;
	int ret;

	/* Not zeroed: the copy overwrites every byte. */
	ret = bo_res_fill(dev, res, bo->size, false);
	/* After the copies still reading @res's range (pipelined). */
	if (ret == 0)
		ret = bo_ghost_order(bo, res, ctx);
	if (ret)
		return ret;
	ret = TTM_MOVE_DEFAULT;
	if (dev->funcs->move)
		ret = move_hook(bo, res, ctx, ret_hop);
	if (ret == TTM_MOVE_DEFAULT)
		ret = dev->gpu ? move_gpu(bo, res) : move_cpu(bo, res, ctx);
	return ret;
}

/* Give back @res, taken for a move that did not happen. */
static void move_untake(struct ttm_bo *bo, struct ttm_resource *res)
{
	struct ttm_device *dev = bo->dev;

	pthread_mutex_lock(&dev->lock);
	bo_res_untake_locked(dev, res);
	bo_room_changed_locked(dev);
	pthread_mutex_unlock(&dev->lock);
	bo_res_free(res);
}

/*
 * The driver asked for a bounce through @hop: move there, then to @res,
 * which stays taken meanwhile. As the kernel's temporary placement, the
 * hop must have room now: nothing is evicted for it.
 */
static int move_hop(struct ttm_bo *bo, struct ttm_resource *res, int hop,
		    const struct ttm_operation_ctx *ctx)
{
	struct ttm_device *dev = bo->dev;
	struct bo_want want = bo_want_domain(hop);
	struct ttm_resource *via;
	int ret;

	if (hop < 0 || hop >= TTM_DOMAIN_COUNT || hop == bo_res_domain(res) ||
	    hop == bo->domain)
		return -EINVAL;
	pthread_mutex_lock(&dev->lock);
	/* -ENOMEM without memory for it: not a want of room to evict for. */
	via = bo_res_take_err_locked(dev, bo, &want, bo->size, &ret);
	pthread_mutex_unlock(&dev->lock);
	if (!via)
		return ret;
	ret = move_once(bo, via, ctx, NULL);
	if (ret) {
		move_untake(bo, via);
		return ret;
	}
	return move_once(bo, res, ctx, NULL);
}

int bo_move(struct ttm_bo *bo, struct ttm_resource *res,
	    const struct ttm_operation_ctx *ctx)
{
	int hop = TTM_DOMAIN_GTT, ret;

	ret = move_once(bo, res, ctx, &hop);
	if (ret == -EMULTIHOP)
		ret = move_hop(bo, res, hop, ctx);
	if (ret)
		move_untake(bo, res);
	return ret;
}
