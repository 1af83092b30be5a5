// SPDX-License-Identifier: MIT
/*
 * Eviction: moving the least recently used buffer out of a full domain.
 *
 * The walk runs under the device lock, which must never be held while
 * sleeping on a reservation (ttm_bo_unreserve() takes it with one held):
 * under it, buffers are only try-locked. At most one buffer held by
 * another ticket is then reserved with the caller's ticket, after the
 * device lock is dropped, as TTM does; its -EDEADLK goes back to the
 * caller's locking helper, so that the submission backs off and restarts
 * instead of failing with -ENOSPC.
 *
 * The driver's hooks (eviction_valuable, evict_flags, swap_notify) are
 * called with the victim reserved and referenced, after the device lock
 * is dropped: a vetoed victim is released and left out of the next walk.
 */
#include <errno.h>
#include <stdlib.h>

#include "bo/bo.h"
#include "ttmsim/exec.h"
#include "util/compiler.h"
#include "util/time.h"
#include "ww/thread.h"

/* How long bo_room_wait() sleeps at most before looking again. */
#define ROOM_POLL_NS 1000000

/* Where a victim of @domain goes by default: GTT for VRAM, then SYSTEM. */
static void evict_placement_default(int domain, struct ttm_placement *pl)
{
	pl->count = 0;
	if (domain == TTM_DOMAIN_VRAM)
		pl->domains[pl->count++] = TTM_DOMAIN_GTT;
	pl->domains[pl->count++] = TTM_DOMAIN_SYSTEM;
}

/*
 * Take a victim's @size bytes in the first domain of @pl other than
 * @domain with room, else in SYSTEM, which always has. A placement from
 * the driver is only read, so a bad one cannot do harm.
 */
static int evict_target_locked(struct ttm_device *dev, int domain,
			       const struct ttm_placement *pl, uint64_t size)
{
	unsigned int i;

	for (i = 0; i < pl->count && i < TTM_PLACEMENT_MAX; i++) {
		int d = pl->domains[i];

		if (d >= 0 && d < TTM_DOMAIN_COUNT && d != domain &&
		    bo_domain_take_locked(dev, d, size))
			return d;
	}
	bo_domain_take_locked(dev, TTM_DOMAIN_SYSTEM, size);
	return TTM_DOMAIN_SYSTEM;
}

/* Move reserved @victim out of @domain; it goes back on its next use. */
int bo_evict_victim(struct ttm_bo *victim, int domain,
		    const struct ttm_operation_ctx *ctx)
{
	struct ttm_device *dev = victim->dev;
	const struct ttm_device_funcs *funcs = dev->funcs;
	struct ttm_placement pl;
	int target, ret;

	evict_placement_default(domain, &pl);
	if (funcs->evict_flags)
		funcs->evict_flags(victim, (enum ttm_domain)domain, &pl,
				   dev->funcs_data);
	pthread_mutex_lock(&dev->lock);
	target = evict_target_locked(dev, domain, &pl, victim->size);
	pthread_mutex_unlock(&dev->lock);
	/* No swap-out in ttmsim: going to SYSTEM is the nearest thing. */
	if (target == TTM_DOMAIN_SYSTEM && funcs->swap_notify)
		funcs->swap_notify(victim, dev->funcs_data);
	ret = bo_move(victim, target, ctx);
	if (ret == 0) {
		pthread_mutex_lock(&dev->lock);
		dev->evictions++;
		pthread_mutex_unlock(&dev->lock);
	}
	return ret;
}

/*
 * Candidates the driver's eviction_valuable hook refused during one
 * bo_evict_one(): skipped by the walks that follow. Each holds a
 * reference, so that its address cannot be reused by a new buffer.
 */
struct vetoed {
	struct ttm_bo **bos;
	unsigned int n, cap;
	uint64_t bytes;
};

static bool vetoed_has(const struct vetoed *v, const struct ttm_bo *bo)
{
	unsigned int i;

	for (i = 0; i < v->n; i++)
		if (v->bos[i] == bo)
			return true;
	return false;
}

/* Keep @bo and its reference; -ENOMEM (the reference put) if no room. */
static int vetoed_add(struct vetoed *v, struct ttm_bo *bo)
{
	if (v->n == v->cap) {
		unsigned int cap = v->cap ? 2 * v->cap : 4;
		struct ttm_bo **bos = realloc(v->bos, cap * sizeof(*bos));

		if (!bos) {
			ttm_bo_put(bo);
			return -ENOMEM;
		}
		v->bos = bos;
		v->cap = cap;
	}
	v->bos[v->n++] = bo;
	v->bytes += bo->size;
	return 0;
}

static void vetoed_fini(struct vetoed *v)
{
	unsigned int i;

	for (i = 0; i < v->n; i++)
		ttm_bo_put(v->bos[i]);
	free(v->bos);
}

/*
 * Pick a victim on @domain's LRU, head first, other than @bo and those
 * of @vetoed, holding a reference to it.
 * *@locked: we reserved it (else the caller's helper holds it, evictable).
 * *@contended: none could be taken without waiting; this one is held by
 * another ticket. NULL: nothing to evict.
 *
 * No reference is needed to look at a buffer on the list: it is freed
 * only off the list, under the device lock, under which its reservation
 * pointer also changes (bo/bo_destroy.c). A buffer whose last reference
 * is gone waits for its delayed destroy: skipped. The driver is asked
 * about the victim by the caller, once the device lock is dropped.
 */
static struct ttm_bo *pick_victim(struct ttm_bo *bo, int domain,
				  const struct ttm_operation_ctx *ctx,
				  struct ww_acquire_ctx *ticket,
				  const struct vetoed *vetoed, bool *locked,
				  bool *contended)
{
	struct ttm_device *dev = bo->dev;
	struct list_node *head = bo_lru_of(dev, domain), *n;
	struct ttm_bo *victim = NULL, *other = NULL;

	*locked = false;
	pthread_mutex_lock(&dev->lock);
	for (n = head->next; n != head && !victim; n = n->next) {
		struct ttm_bo *cand = list_entry(n, struct ttm_bo, node);
		struct ww_acquire_ctx *owner;

		/* A walk's place (bo/bo_lru.c), no buffer. */
		if (bo_lru_is_hitch(n))
			continue;
		if (cand == bo || (vetoed->n && vetoed_has(vetoed, cand)))
			continue;
		if (ctx->allow_res_evict && ctx->resv &&
		    cand->resv == ctx->resv) {
			/* The caller holds it and lets it go (TTM's rule). */
			if (bo_get_unless_zero(cand))
				victim = cand;
			continue;
		}
		owner = ww_mutex_owner_ctx(&cand->resv->lock);
		if (ticket && owner == ticket) {
			/* In use by the caller's job, unless evictable. */
			if (ttm_exec_is_evictable(ctx->exec, cand) &&
			    bo_get_unless_zero(cand))
				victim = cand;
		} else if (ww_mutex_trylock(&cand->resv->lock, NULL)) {
			if (bo_get_unless_zero(cand)) {
				*locked = true;
				victim = cand;
			} else {
				ww_mutex_unlock(&cand->resv->lock);
			}
		} else if (ticket && owner && !other &&
			   bo_get_unless_zero(cand)) {
			/* Held by another ticket: the fallback. */
			other = cand;
		}
	}
	pthread_mutex_unlock(&dev->lock);
	*contended = !victim && other;
	if (victim) {
		ttm_bo_put(other);
		return victim;
	}
	return other;
}

/*
 * One victim, reserved and asked about, evicted. 1: the driver vetoed
 * it (now in @vetoed; ask for another).
 */
static int evict_one_pass(struct ttm_bo *bo, int domain,
			  const struct ttm_operation_ctx *ctx,
			  struct ww_acquire_ctx *ticket, struct vetoed *vetoed)
{
	const struct ttm_device_funcs *funcs = bo->dev->funcs;
	struct ttm_bo *victim;
	bool locked, contended;
	int ret;

	victim = pick_victim(bo, domain, ctx, ticket, vetoed, &locked,
			     &contended);
	if (!victim)
		return -ENOSPC;
	if (contended) {
		ret = ttm_bo_reserve(victim, ctx->interruptible, false,
				     ticket);
		if (ret == -EDEADLK)
			ttm_exec_set_contended(ctx->exec, victim);
		if (ret) {
			ttm_bo_put(victim);
			return ret;
		}
		locked = true;
		/* It may have moved or been pinned while we waited. */
		if (victim->pin_count ||
		    ttm_bo_domain(victim) != (enum ttm_domain)domain) {
			ttm_bo_unreserve(victim);
			ttm_bo_put(victim);
			return 0;
		}
	}
	/* Asked without the device lock, the victim reserved. */
	if (funcs->eviction_valuable &&
	    !funcs->eviction_valuable(victim, (enum ttm_domain)domain, bo,
				      bo->dev->funcs_data)) {
		/*
		 * Not ttm_bo_unreserve(): a refused buffer keeps its place
		 * on the LRU, as an unused one should.
		 */
		if (locked)
			ww_mutex_unlock(&victim->resv->lock);
		ret = vetoed_add(vetoed, victim);
		return ret ? ret : 1;
	}
	ret = bo_evict_victim(victim, domain, ctx);
	if (locked)
		ttm_bo_unreserve(victim);
	ttm_bo_put(victim);
	return ret;
}

int bo_evict_one(struct ttm_bo *bo, int domain,
		 const struct ttm_operation_ctx *ctx, uint64_t *ret_vetoed)
{
	struct ww_acquire_ctx *ticket =
		ctx->exec ? ttm_exec_ticket(ctx->exec) : NULL;
	struct vetoed vetoed = { 0 };
	int ret;

	/* Each veto takes one candidate out of the walk: it ends. */
	do
		ret = evict_one_pass(bo, domain, ctx, ticket, &vetoed);
	while (ret == 1);
	*ret_vetoed = vetoed.bytes;
	vetoed_fini(&vetoed);
	return ret;
}

/* Bytes in @domain that no eviction by @ctx can free; dev->lock held. */
static uint64_t fixed_bytes_locked(struct ttm_device *dev, int domain,
				   const struct ttm_operation_ctx *ctx)
{
	struct ww_acquire_ctx *ticket = ttm_exec_ticket(ctx->exec);
	struct list_node *head = bo_lru_of(dev, domain), *n;
	uint64_t bytes = 0;

	list_for_each(n, &dev->pinned) {
		struct ttm_bo *p = list_entry(n, struct ttm_bo, node);

		if (p->domain == domain)
			bytes += p->size;
	}
	/*
	 * Buffers the job's ticket holds cannot move, and pick_victim()
	 * skips them (its own rules, kept in step). Not the exec's list:
	 * a buffer of a shared reservation may be locked without being
	 * listed (an ignored duplicate, or a sibling never named), and
	 * counted as movable it would make the caller wait for ever.
	 */
	list_for_each(n, head) {
		struct ttm_bo *cand = list_entry(n, struct ttm_bo, node);

		if (bo_lru_is_hitch(n))
			continue;
		if (ctx->allow_res_evict && ctx->resv &&
		    cand->resv == ctx->resv)
			continue;
		if (ticket && ww_mutex_owner_ctx(&cand->resv->lock) == ticket &&
		    !ttm_exec_is_evictable(ctx->exec, cand))
			bytes += cand->size;
	}
	return bytes;
}

int bo_room_wait(struct ttm_bo *bo, int domain,
		 const struct ttm_operation_ctx *ctx, uint64_t vetoed)
{
	struct ttm_device *dev = bo->dev;
	struct timespec ts;
	bool never;

	/*
	 * Without a ticket nothing held is worth waiting for, but buffers
	 * whose fences all signalled are as good as free: their delayed
	 * destroy only waits for the device's worker. It may also have
	 * freed some since the caller looked: then look again too.
	 */
	if (!ctx->exec) {
		struct bo_domain *dom = &dev->domain[domain];
		bool room;

		if (bo_worker_flush(dev))
			return 0;
		pthread_mutex_lock(&dev->lock);
		room = dom->capacity - dom->used >= bo->size;
		pthread_mutex_unlock(&dev->lock);
		return room ? 0 : -ENOSPC;
	}
	pthread_mutex_lock(&dev->lock);
	never = fixed_bytes_locked(dev, domain, ctx) + vetoed + bo->size >
		dev->domain[domain].capacity;
	pthread_mutex_unlock(&dev->lock);
	if (never)
		return -ENOSPC;
	if (ctx->no_wait_gpu)
		return -EBUSY;
	if (ctx->interruptible && ww_thread_take_interrupt(ww_thread_self()))
		return -EINTR;
	/*
	 * A bounded sleep: the holders that free room signal the change,
	 * but a buffer's unlock does not (that would cost every unreserve a
	 * second trip through the device lock), so look again soon anyway.
	 */
	ts = mono_deadline_in(ROOM_POLL_NS);
	pthread_mutex_lock(&dev->lock);
	dev->room_waits++;
	pthread_cond_timedwait(&dev->changed, &dev->lock, &ts);
	pthread_mutex_unlock(&dev->lock);
	return 0;
}
