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
#include "ww/thread.h"

/* Where a victim of @domain goes by default: GTT for VRAM, then SYSTEM. */
static void evict_placement_default(int domain, struct ttm_placement *pl)
{
	pl->count = 0;
	if (domain == TTM_DOMAIN_VRAM)
		pl->places[pl->count++] = ttm_place_domain(TTM_DOMAIN_GTT);
	pl->places[pl->count++] = ttm_place_domain(TTM_DOMAIN_SYSTEM);
}

/*
 * Take room for @victim in the first domain of @pl other than @domain
 * with room, else in SYSTEM, which always has. A placement from the
 * driver is only read, so a bad one cannot do harm. NULL only without
 * memory for the resource.
 */
static struct ttm_resource *evict_target_locked(struct ttm_bo *victim,
						int domain,
						const struct ttm_placement *pl)
{
	struct ttm_device *dev = victim->dev;
	struct ttm_resource *res;
	struct bo_want want;
	unsigned int i;

	for (i = 0; i < pl->count && i < TTM_PLACEMENT_MAX; i++) {
		const struct ttm_place *place = &pl->places[i];

		/*
		 * Not @domain itself: the victim's new range could take the
		 * very hole its going was meant to open.
		 */
		if (!bo_place_valid(dev, place) ||
		    (int)place->domain == domain ||
		    !bo_place_can_hold(dev, place, victim->size))
			continue;
		want = bo_want_of(dev, place);
		res = bo_res_take_locked(dev, victim, &want, victim->size);
		if (res)
			return res;
	}
	want = bo_want_domain(TTM_DOMAIN_SYSTEM);
	return bo_res_take_locked(dev, victim, &want, victim->size);
}

/* Move reserved @victim out of @domain; it goes back on its next use. */
int bo_evict_victim(struct ttm_bo *victim, int domain,
		    const struct ttm_operation_ctx *ctx)
{
	struct ttm_device *dev = victim->dev;
	const struct ttm_device_funcs *funcs = dev->funcs;
	struct ttm_resource *res;
	struct ttm_placement pl;
	int ret;

	evict_placement_default(domain, &pl);
	if (funcs->evict_flags)
		funcs->evict_flags(victim, (enum ttm_domain)domain, &pl,
				   dev->funcs_data);
	pthread_mutex_lock(&dev->lock);
	res = evict_target_locked(victim, domain, &pl);
	pthread_mutex_unlock(&dev->lock);
	if (!res)
		return -ENOMEM;
	/* No swap-out in ttmsim: going to SYSTEM is the nearest thing. */
	if (bo_res_domain(res) == TTM_DOMAIN_SYSTEM && funcs->swap_notify)
		funcs->swap_notify(victim, dev->funcs_data);
	ret = bo_move(victim, res, ctx);
	if (ret == 0) {
		pthread_mutex_lock(&dev->lock);
		dev->evictions++;
		pthread_mutex_unlock(&dev->lock);
	}
	return ret;
}

static bool vetoed_has(const struct bo_vetoed *v, const struct ttm_bo *bo)
{
	unsigned int i;

	for (i = 0; i < v->n; i++)
		if (v->bos[i] == bo)
			return true;
	return false;
}

/* Keep @bo and its reference; -ENOMEM (the reference put) if no room. */
static int vetoed_add(struct bo_vetoed *v, struct ttm_bo *bo)
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
	return 0;
}

void bo_vetoed_fini(struct bo_vetoed *v)
{
	unsigned int i;

	for (i = 0; i < v->n; i++)
		ttm_bo_put(v->bos[i]);
	free(v->bos);
	*v = (struct bo_vetoed){ 0 };
}

/*
 * Whether pick_victim() could take @cand for @bo at all (it may still
 * fail to lock it). dev->lock held.
 */
static bool victim_possible(const struct ttm_bo *bo, struct ttm_bo *cand,
			    const struct ttm_operation_ctx *ctx,
			    struct ww_acquire_ctx *ticket,
			    const struct bo_vetoed *vetoed)
{
	struct ww_acquire_ctx *owner;

	if (cand == bo || (vetoed->n && vetoed_has(vetoed, cand)))
		return false;
	/* Its last reference went: its delayed destroy frees it. */
	if (__atomic_load_n(&cand->refcount, __ATOMIC_RELAXED) == 0)
		return false;
	if (ctx->allow_res_evict && ctx->resv && cand->resv == ctx->resv)
		return true;
	owner = ww_mutex_owner_ctx(&cand->resv->lock);
	if (ticket && owner == ticket)
		return ttm_exec_is_evictable(ctx->exec, cand);
	/*
	 * Held without a ticket, or by a ticket and we have none to wait
	 * with: not now (a moment later, the room wait looks again).
	 */
	if (ww_mutex_is_locked(&cand->resv->lock) && (!owner || !ticket))
		return false;
	return true;
}

/*
 * Mark the buffers on the LRU of @want's domain whose eviction opens a
 * hole @bo fits in where @want says, choosing among those pick_victim()
 * could take, in LRU order: range_scan, as TTM evicts with drm_mm_scan.
 * Enough free bytes are not enough: the victims must be neighbours of
 * each other and of free pages. false, nothing marked, if no set of them
 * would do (what remains is pinned, the job's own, or in flight).
 * dev->lock held; unmark_victims_locked() after.
 */
static bool mark_victims_locked(struct ttm_bo *bo, const struct bo_want *want,
				const struct ttm_operation_ctx *ctx,
				struct ww_acquire_ctx *ticket,
				const struct bo_vetoed *vetoed,
				struct ttm_bo **ret_scanned)
{
	struct ttm_device *dev = bo->dev;
	struct bo_domain *dom = &dev->domain[want->domain];
	struct list_node *head = &dom->lru, *n;
	struct ttm_bo *scanned = NULL, *cand;
	struct range_scan scan;
	bool found = false;

	*ret_scanned = NULL;
	if (range_scan_init(&scan, &dom->mm, bo_pages(dev, bo->size), 1,
			    want->fpfn, want->lpfn, want->flags))
		return false;
	for (n = head->next; n != head && !found; n = n->next) {
		if (bo_lru_is_hitch(n))
			continue;
		cand = list_entry(n, struct ttm_bo, node);
		if (!victim_possible(bo, cand, ctx, ticket, vetoed))
			continue;
		found = range_scan_add(&scan, &cand->res->node);
		cand->scan_next = scanned;
		scanned = cand;
	}
	/* Newest first, as the scan wants them back. */
	for (cand = scanned; cand; cand = cand->scan_next)
		cand->evict_mark = range_scan_remove(&scan, &cand->res->node);
	*ret_scanned = scanned;
	return found;
}

static void unmark_victims_locked(struct ttm_bo *scanned)
{
	for (; scanned; scanned = scanned->scan_next)
		scanned->evict_mark = false;
}

/*
 * Pick a victim on @domain's LRU, head first, other than @bo and those
 * of @vetoed, holding a reference to it. In a limited domain, only one
 * of those mark_victims_locked() chose.
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
static struct ttm_bo *pick_victim(struct ttm_bo *bo,
				  const struct bo_want *want,
				  const struct ttm_operation_ctx *ctx,
				  struct ww_acquire_ctx *ticket,
				  const struct bo_vetoed *vetoed, bool *locked,
				  bool *contended)
{
	struct ttm_device *dev = bo->dev;
	struct list_node *head = bo_lru_of(dev, want->domain), *n;
	struct ttm_bo *victim = NULL, *other = NULL, *scanned = NULL;
	bool ranged = want->domain != TTM_DOMAIN_SYSTEM;

	*locked = false;
	*contended = false;
	pthread_mutex_lock(&dev->lock);
	if (ranged &&
	    !mark_victims_locked(bo, want, ctx, ticket, vetoed, &scanned)) {
		unmark_victims_locked(scanned);
		pthread_mutex_unlock(&dev->lock);
		return NULL;
	}
	for (n = head->next; n != head && !victim; n = n->next) {
		struct ttm_bo *cand = list_entry(n, struct ttm_bo, node);
		struct ww_acquire_ctx *owner;

		/* A walk's place (bo/bo_lru.c), no buffer. */
		if (bo_lru_is_hitch(n))
			continue;
		if (cand == bo || (vetoed->n && vetoed_has(vetoed, cand)) ||
		    (ranged && !cand->evict_mark))
			continue;
		/* Its delayed destroy frees it (as victim_possible()). */
		if (!ranged &&
		    __atomic_load_n(&cand->refcount, __ATOMIC_RELAXED) == 0)
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
				/*
				 * Its last reference just went. No bump of the
				 * room generation: a room wait's attempt runs
				 * under dev->lock, so none saw it held, and a
				 * bump would keep the caller's own wait from
				 * sleeping while the buffer waits for fences.
				 */
				ww_mutex_unlock(&cand->resv->lock);
			}
		} else if (ticket && owner && !other &&
			   bo_get_unless_zero(cand)) {
			/* Held by another ticket: the fallback. */
			other = cand;
		}
	}
	unmark_victims_locked(scanned);
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
static int evict_one_pass(struct ttm_bo *bo, const struct bo_want *want,
			  const struct ttm_operation_ctx *ctx,
			  struct ww_acquire_ctx *ticket, struct bo_vetoed *vetoed)
{
	const struct ttm_device_funcs *funcs = bo->dev->funcs;
	int domain = want->domain;
	struct ttm_bo *victim;
	bool locked, contended;
	int ret;

	victim = pick_victim(bo, want, ctx, ticket, vetoed, &locked,
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
			bo_resv_unlock(victim);
		ret = vetoed_add(vetoed, victim);
		return ret ? ret : 1;
	}
	ret = bo_evict_victim(victim, domain, ctx);
	if (locked)
		ttm_bo_unreserve(victim);
	ttm_bo_put(victim);
	return ret;
}

int bo_evict_one(struct ttm_bo *bo, const struct bo_want *want,
		 const struct ttm_operation_ctx *ctx, struct bo_vetoed *vetoed)
{
	struct ww_acquire_ctx *ticket =
		ctx->exec ? ttm_exec_ticket(ctx->exec) : NULL;
	int ret;

	/* The driver is asked again each time: its answer may change. */
	bo_vetoed_fini(vetoed);
	/* Each veto takes one candidate out of the walk: it ends. */
	do
		ret = evict_one_pass(bo, want, ctx, ticket, vetoed);
	while (ret == 1);
	return ret;
}

/*
 * Whether no eviction by @ctx can move @cand: pinned, or held by the
 * job's ticket and not merely for eviction (pick_victim()'s own rules,
 * kept in step). Not the exec's list: a buffer of a shared reservation
 * may be locked without being listed (an ignored duplicate, or a sibling
 * never named), and counted as movable it would make the caller wait for
 * ever. dev->lock held.
 */
static bool fixed_for(const struct ttm_bo *cand,
		      const struct ttm_operation_ctx *ctx,
		      struct ww_acquire_ctx *ticket)
{
	if (cand->pin_count)
		return true;
	if (ctx->allow_res_evict && ctx->resv && cand->resv == ctx->resv)
		return false;
	return ticket && ww_mutex_owner_ctx(&cand->resv->lock) == ticket &&
	       !ttm_exec_is_evictable(ctx->exec, cand);
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
			bytes += bo_res_bytes(dev, p->res);
	}
	list_for_each(n, head) {
		struct ttm_bo *cand = list_entry(n, struct ttm_bo, node);

		if (bo_lru_is_hitch(n))
			continue;
		if (fixed_for(cand, ctx, ticket))
			bytes += bo_res_bytes(dev, cand->res);
	}
	return bytes;
}

/*
 * The bytes of @vetoed in @domain that no eviction by @ctx can free but
 * for the veto: each counted where it is now, as it may have moved away
 * or been pinned (then fixed_bytes_locked() counts it) since the driver
 * refused it. dev->lock held.
 */
static uint64_t vetoed_bytes_locked(const struct bo_vetoed *vetoed,
				    int domain,
				    const struct ttm_operation_ctx *ctx)
{
	struct ww_acquire_ctx *ticket = ttm_exec_ticket(ctx->exec);
	uint64_t bytes = 0;
	unsigned int i;

	for (i = 0; i < vetoed->n; i++) {
		const struct ttm_bo *v = vetoed->bos[i];

		if (v->domain == domain && !fixed_for(v, ctx, ticket))
			bytes += bo_res_bytes(v->dev, v->res);
	}
	return bytes;
}

struct removable_args {
	const struct ttm_bo *bo;
	const struct ttm_operation_ctx *ctx;
	struct ww_acquire_ctx *ticket;
	const struct bo_vetoed *vetoed;
};

/* range_mgr_could_fit()'s question: can the range of @node ever go? */
static bool node_removable(const struct range_node *node, void *data)
{
	const struct ttm_resource *res =
		container_of(node, const struct ttm_resource, node);
	const struct removable_args *a = data;

	/*
	 * A ghost's goes with its copy; one taken for a move in flight is
	 * another buffer's next home, evictable once there.
	 */
	if (!res->bo || res->bo->res != res)
		return true;
	/*
	 * The buffer being placed is never its own victim (pick_victim()),
	 * whatever the rules say of its reservation (allow_res_evict): its
	 * range is in the way for good, or the caller would wait for ever.
	 */
	if (res->bo == a->bo)
		return false;
	if (a->vetoed->n && vetoed_has(a->vetoed, res->bo))
		return false;
	return !fixed_for(res->bo, a->ctx, a->ticket);
}

/*
 * Whether @bo could ever fit where @want says beside what @ctx cannot
 * evict: by bytes (the driver's vetoes counted as fixed) and, in a limited
 * domain, by holes. dev->lock held.
 */
static bool want_never_fits_locked(struct ttm_bo *bo,
				   const struct bo_want *want,
				   const struct ttm_operation_ctx *ctx,
				   const struct bo_vetoed *vetoed)
{
	struct ttm_device *dev = bo->dev;
	struct bo_domain *dom = &dev->domain[want->domain];
	struct removable_args args = {
		bo, ctx, ttm_exec_ticket(ctx->exec), vetoed,
	};

	if (fixed_bytes_locked(dev, want->domain, ctx) +
	    vetoed_bytes_locked(vetoed, want->domain, ctx) + bo->size >
	    dom->capacity)
		return true;
	if (want->domain == TTM_DOMAIN_SYSTEM)
		return false;
	return !range_mgr_could_fit(&dom->mm, bo_pages(dev, bo->size), 1,
				    want->fpfn, want->lpfn, node_removable,
				    &args);
}

/* Whether a take where @want says would succeed now; dev->lock held. */
static bool want_has_room_locked(struct ttm_bo *bo, const struct bo_want *want)
{
	struct ttm_device *dev = bo->dev;
	struct bo_domain *dom = &dev->domain[want->domain];

	if (want->domain == TTM_DOMAIN_SYSTEM)
		return true;
	return range_mgr_largest_hole(&dom->mm, want->fpfn, want->lpfn) >=
	       bo_pages(dev, bo->size);
}

int bo_room_wait(struct ttm_bo *bo, const struct bo_want *want,
		 const struct ttm_operation_ctx *ctx,
		 const struct bo_vetoed *vetoed, unsigned int gen)
{
	struct ttm_device *dev = bo->dev;
	bool never;

	/*
	 * Without a ticket nothing held is worth waiting for, but buffers
	 * whose fences all signalled are as good as free: their delayed
	 * destroy only waits for the device's worker. It may also have
	 * freed some since the caller looked: then look again too.
	 */
	if (!ctx->exec) {
		bool room;

		if (bo_worker_flush(dev))
			return 0;
		pthread_mutex_lock(&dev->lock);
		room = want_has_room_locked(bo, want);
		pthread_mutex_unlock(&dev->lock);
		return room ? 0 : -ENOSPC;
	}
	pthread_mutex_lock(&dev->lock);
	never = want_never_fits_locked(bo, want, ctx, vetoed);
	pthread_mutex_unlock(&dev->lock);
	if (never)
		return -ENOSPC;
	if (ctx->no_wait_gpu)
		return -EBUSY;
	if (ctx->interruptible && ww_thread_take_interrupt(ww_thread_self()))
		return -EINTR;
	pthread_mutex_lock(&dev->lock);
	dev->room_waits++;
	pthread_mutex_unlock(&dev->lock);
	/*
	 * Until whatever held the room lets go of it: a release of room or
	 * of a reservation since @gen was read, before the failed attempt
	 * (bo/bo_room.c).
	 */
	return bo_room_sleep(dev, gen, ctx->interruptible);
}
