// SPDX-License-Identifier: MIT
/*
 * The LRU lists: adding and removing buffers (pinned bytes, bulk moves),
 * the LRU walk and its cursor, snapshots and bulk moves (ttmsim/lru.h).
 *
 * A walk drops the device lock around each buffer it hands out (it may
 * sleep on a reservation, and process_bo may move the buffer), so it
 * cannot keep a pointer to a buffer as its place: the buffer may leave
 * the list. It keeps a hitch instead, a node of its own linked into the
 * LRU right after the last buffer it took, which nobody but the walk
 * removes. A second hitch, put at the tail when the walk starts, marks
 * its end: a buffer used meanwhile goes to the tail, behind it, so the
 * walk never meets it again. Inside a bulk move's group a use moves a
 * buffer to the group's tail, which may be ahead of the walk: each buffer
 * is stamped with the generation it joined its LRU at, and the walk skips
 * those newer than itself.
 *
 * Every other loop over an LRU skips hitches (bo_lru_is_hitch()).
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>

#include "bo/bo.h"
#include "bo/resv.h"
#include "ttmsim/exec.h"
#include "ttmsim/lru.h"
#include "util/compiler.h"

enum {
	HITCH_CURSOR = 1,
	HITCH_END,
};

/* A node that is no buffer's; @kind where a buffer has its node_kind. */
struct lru_hitch {
	struct list_node node;
	unsigned int kind;
};

_Static_assert(offsetof(struct lru_hitch, kind) -
	       offsetof(struct lru_hitch, node) ==
	       offsetof(struct ttm_bo, node_kind) -
	       offsetof(struct ttm_bo, node),
	       "a hitch's kind must sit where a buffer's node_kind does");

/* A walk's place: its hitch, and its entry on dev->walks. */
struct lru_cursor {
	struct lru_hitch hitch;
	struct list_node link;
	int domain;
};

/* Insert @node right after @pos. */
static void list_add_after(struct list_node *node, struct list_node *pos)
{
	list_add_before(node, pos->next);
}

/* The buffer after @bo on its LRU, past any hitch; NULL at the end. */
static struct ttm_bo *lru_next_bo(struct ttm_bo *bo, struct list_node *head)
{
	struct list_node *n = bo->node.next;

	while (n != head && bo_lru_is_hitch(n))
		n = n->next;
	return n == head ? NULL : list_entry(n, struct ttm_bo, node);
}

static struct ttm_bo *lru_prev_bo(struct ttm_bo *bo, struct list_node *head)
{
	struct list_node *n = bo->node.prev;

	while (n != head && bo_lru_is_hitch(n))
		n = n->prev;
	return n == head ? NULL : list_entry(n, struct ttm_bo, node);
}

/*
 * @bo, on its LRU, leaves its bulk's group there: the group's ends are
 * moved in if it was one. Returns whether @bo sits inside the group
 * (neither end), where it must not stay.
 */
static bool bulk_unlink_locked(struct ttm_bo *bo)
{
	struct ttm_lru_bulk_move_pos *pos = &bo->bulk->pos[bo->domain];
	struct list_node *head = bo_lru_of(bo->dev, bo->domain);

	if (pos->first == bo && pos->last == bo) {
		pos->first = pos->last = NULL;
	} else if (pos->first == bo) {
		pos->first = lru_next_bo(bo, head);
	} else if (pos->last == bo) {
		pos->last = lru_prev_bo(bo, head);
	} else {
		return true;
	}
	return false;
}

void bo_lru_del_locked(struct ttm_bo *bo)
{
	if (bo->pin_count) {
		bo->dev->domain[bo->domain].pinned -=
			bo_res_bytes(bo->dev, bo->res);
	} else if (bo->bulk) {
		bulk_unlink_locked(bo);
	}
	list_del(&bo->node);
}

void bo_lru_add_locked(struct ttm_bo *bo)
{
	struct ttm_device *dev = bo->dev;
	struct ttm_lru_bulk_move_pos *pos;

	if (bo->pin_count) {
		dev->domain[bo->domain].pinned += bo_res_bytes(dev, bo->res);
		list_add_tail(&bo->node, &dev->pinned);
		return;
	}
	bo->lru_gen = ++dev->lru_gen;
	if (!bo->bulk) {
		list_add_tail(&bo->node, bo_lru_of(dev, bo->domain));
		return;
	}
	pos = &bo->bulk->pos[bo->domain];
	if (pos->last) {
		list_add_after(&bo->node, &pos->last->node);
	} else {
		list_add_tail(&bo->node, bo_lru_of(dev, bo->domain));
		pos->first = bo;
	}
	pos->last = bo;
}

void bo_lru_bump_locked(struct ttm_bo *bo)
{
	if (bo->pin_count)
		return;
	bo_lru_del_locked(bo);
	bo_lru_add_locked(bo);
}

/* @bo leaves its bulk; if inside its group, it goes right after it. */
static void bulk_leave_locked(struct ttm_bo *bo)
{
	struct ttm_lru_bulk_move *bulk = bo->bulk;

	if (!bo->pin_count && bulk_unlink_locked(bo)) {
		list_del(&bo->node);
		list_add_after(&bo->node, &bulk->pos[bo->domain].last->node);
		/* Maybe ahead of a walk that already took it. */
		bo->lru_gen = ++bo->dev->lru_gen;
	}
	bulk->count--;
	bo->bulk = NULL;
}

void bo_lru_release(struct ttm_bo *bo)
{
	struct ttm_device *dev = bo->dev;

	/* Nobody else can set it any more: no lock needed to look. */
	if (!bo->bulk)
		return;
	pthread_mutex_lock(&dev->lock);
	bulk_leave_locked(bo);
	pthread_mutex_unlock(&dev->lock);
}

TTM_EXPORT void ttm_lru_bulk_move_init(struct ttm_lru_bulk_move *bulk)
{
	*bulk = (struct ttm_lru_bulk_move){ 0 };
}

TTM_EXPORT int ttm_lru_bulk_move_fini(struct ttm_lru_bulk_move *bulk)
{
	struct ttm_device *dev = bulk->dev;
	unsigned long count;

	if (!dev)
		return 0;
	pthread_mutex_lock(&dev->lock);
	count = bulk->count;
	pthread_mutex_unlock(&dev->lock);
	return count ? -EBUSY : 0;
}

TTM_EXPORT int ttm_bo_set_bulk_move(struct ttm_bo *bo,
				    struct ttm_lru_bulk_move *bulk)
{
	struct ttm_device *dev = bo->dev;
	int ret = resv_assert_held(bo->resv, "ttm_bo_set_bulk_move");

	if (ret)
		return ret;
	if (bo->bulk == bulk)
		return 0;
	pthread_mutex_lock(&dev->lock);
	if (bulk && bulk->dev && bulk->dev != dev) {
		pthread_mutex_unlock(&dev->lock);
		return -EXDEV;
	}
	if (bo->bulk)
		bulk_leave_locked(bo);
	if (bulk) {
		bulk->dev = dev;
		bulk->count++;
		/* Off the LRU, then back on as a member: its group's tail. */
		if (!bo->pin_count)
			list_del(&bo->node);
		bo->bulk = bulk;
		if (!bo->pin_count)
			bo_lru_add_locked(bo);
	}
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

TTM_EXPORT void ttm_bo_move_to_lru_tail(struct ttm_bo *bo)
{
	struct ttm_device *dev = bo->dev;

	if (resv_assert_held(bo->resv, "ttm_bo_move_to_lru_tail"))
		return;
	pthread_mutex_lock(&dev->lock);
	bo_lru_bump_locked(bo);
	pthread_mutex_unlock(&dev->lock);
}

/*
 * Whether @cur sits inside the group @pos of @bulk: the buffer before it
 * is a member other than the group's last. The group's buffers are
 * contiguous apart from hitches.
 */
static bool cursor_in_group(struct lru_cursor *cur,
			    struct ttm_lru_bulk_move *bulk,
			    struct ttm_lru_bulk_move_pos *pos,
			    struct list_node *head)
{
	struct list_node *n = cur->hitch.node.prev;
	struct ttm_bo *bo;

	while (n != head && bo_lru_is_hitch(n))
		n = n->prev;
	if (n == head)
		return false;
	bo = list_entry(n, struct ttm_bo, node);
	return bo->bulk == bulk && bo != pos->last;
}

/* Cut first..last out and link them at @head's tail, in order. */
static void list_splice_range_tail(struct list_node *first,
				   struct list_node *last,
				   struct list_node *head)
{
	if (last->next == head)
		return;
	list_link_set(first->prev->next, last->next);
	list_link_set(last->next->prev, first->prev);
	list_link_set(first->prev, head->prev);
	list_link_set(last->next, head);
	list_link_set(head->prev->next, first);
	list_link_set(head->prev, last);
}

TTM_EXPORT void ttm_lru_bulk_move_tail(struct ttm_lru_bulk_move *bulk)
{
	struct ttm_device *dev = bulk->dev;
	struct list_node *n;
	int d;

	if (!dev)
		return;
	pthread_mutex_lock(&dev->lock);
	for (d = 0; d < TTM_DOMAIN_COUNT; d++) {
		struct ttm_lru_bulk_move_pos *pos = &bulk->pos[d];
		struct list_node *head = bo_lru_of(dev, d);
		struct ttm_bo *bo;

		if (!pos->first)
			continue;
		/*
		 * A walk inside the group stays where the group was: the
		 * hitch must not travel with it, or the walk would jump
		 * over everything between (and past its end).
		 */
		list_for_each(n, &dev->walks) {
			struct lru_cursor *cur =
				list_entry(n, struct lru_cursor, link);

			if (cur->domain == d &&
			    cursor_in_group(cur, bulk, pos, head)) {
				list_del(&cur->hitch.node);
				list_add_after(&cur->hitch.node,
					       &pos->last->node);
			}
		}
		list_splice_range_tail(&pos->first->node, &pos->last->node,
				       head);
		/* Used now: newer than every walk running. */
		for (bo = pos->first;; bo = lru_next_bo(bo, head)) {
			bo->lru_gen = ++dev->lru_gen;
			if (bo == pos->last)
				break;
		}
	}
	pthread_mutex_unlock(&dev->lock);
}

TTM_EXPORT long ttm_device_lru_snapshot(struct ttm_device *dev,
					enum ttm_domain domain,
					struct ttm_bo **ret_bos, size_t max)
{
	struct list_node *head, *n;
	long count = 0;

	if ((unsigned int)domain >= TTM_DOMAIN_COUNT)
		return -EINVAL;
	head = bo_lru_of(dev, domain);
	pthread_mutex_lock(&dev->lock);
	list_for_each(n, head) {
		struct ttm_bo *bo;

		if (bo_lru_is_hitch(n))
			continue;
		bo = list_entry(n, struct ttm_bo, node);
		if ((size_t)count < max) {
			if (!bo_get_unless_zero(bo))
				continue;
			ret_bos[count] = bo;
		} else if (__atomic_load_n(&bo->refcount,
					   __ATOMIC_RELAXED) == 0) {
			continue;
		}
		count++;
	}
	pthread_mutex_unlock(&dev->lock);
	return count;
}

/* ---- The walk -------------------------------------------------------- */

/* How the walk holds the buffer it hands out. */
enum walk_hold {
	HOLD_NONE,      /* could not reserve it: skip */
	HOLD_LOCKED,    /* reserved by the walk: unlock after */
	HOLD_CALLER,    /* the caller's (ctx->resv, or evictable): keep */
	HOLD_TICKET,    /* held by another: reserve with the ticket */
};

/* Under the device lock: how @bo can be held, reserving it if it can. */
static enum walk_hold walk_trylock_locked(struct ttm_lru_walk *walk,
					  struct ttm_bo *bo)
{
	const struct ttm_operation_ctx *ctx = walk->ctx;
	struct ww_acquire_ctx *owner;

	if (ctx && ctx->allow_res_evict && ctx->resv && bo->resv == ctx->resv)
		return HOLD_CALLER;
	if (ww_mutex_trylock(&bo->resv->lock, NULL))
		return HOLD_LOCKED;
	owner = ww_mutex_owner_ctx(&bo->resv->lock);
	if (walk->ticket && owner == walk->ticket)
		return ctx && ttm_exec_is_evictable(ctx->exec, bo) ?
		       HOLD_CALLER : HOLD_NONE;
	if (walk->ticket && !walk->trylock_only)
		return HOLD_TICKET;
	return HOLD_NONE;
}

/*
 * The next buffer of the walk, referenced, and how it is held; NULL at
 * the end. Advances the cursor past it. dev->lock held.
 */
static struct ttm_bo *walk_next_locked(struct ttm_lru_walk *walk,
				       struct lru_cursor *cur,
				       struct list_node *head,
				       struct lru_hitch *end, uint64_t gen,
				       enum walk_hold *hold)
{
	struct list_node *n;

	for (;;) {
		struct ttm_bo *bo;

		n = cur->hitch.node.next;
		if (n == &end->node || n == head)
			return NULL;
		/* Past the node, buffer or another walk's hitch. */
		list_del(&cur->hitch.node);
		list_add_after(&cur->hitch.node, n);
		if (bo_lru_is_hitch(n))
			continue;
		bo = list_entry(n, struct ttm_bo, node);
		if (bo->lru_gen > gen)
			continue;
		/*
		 * Locked before referenced, as pick_victim(): a reference
		 * taken first might be the last to go if we skip it, and
		 * its release must not run under the device lock.
		 */
		*hold = walk_trylock_locked(walk, bo);
		if (*hold == HOLD_NONE)
			continue;
		if (bo_get_unless_zero(bo))
			return bo;
		/* Waiting for its delayed destroy: not ours to touch. */
		/*
		 * No room bump: under dev->lock no room wait's attempt saw
		 * it held, and a bump would keep the waiter from sleeping.
		 */
		if (*hold == HOLD_LOCKED)
			ww_mutex_unlock(&bo->resv->lock);
	}
}

/*
 * Reserve @bo with the walk's ticket, sleeping; then check it is still
 * one to hand out. 1: skip it; 0: reserved; or a negative errno.
 */
static int walk_ticketlock(struct ttm_lru_walk *walk, struct ttm_bo *bo,
			   int domain)
{
	struct ttm_operation_ctx *ctx = walk->ctx;
	bool intr = ctx && ctx->interruptible;
	int ret = ttm_bo_reserve(bo, intr, false, walk->ticket);

	if (ret == -EALREADY)
		return 1;
	if (ret == -EDEADLK && ctx && ctx->exec)
		ttm_exec_set_contended(ctx->exec, bo);
	if (ret)
		return ret;
	/* It may have been pinned or moved while we slept. */
	if (bo->pin_count || ttm_bo_domain(bo) != (enum ttm_domain)domain) {
		bo_resv_unlock(bo);
		return 1;
	}
	return 0;
}

TTM_EXPORT long ttm_lru_walk_for_evict(struct ttm_lru_walk *walk,
				       struct ttm_device *dev,
				       enum ttm_domain domain, long target)
{
	struct lru_cursor cur = {
		.hitch.kind = HITCH_CURSOR,
		.domain = (int)domain,
	};
	struct lru_hitch end = { .kind = HITCH_END };
	struct list_node *head;
	long progress = 0, ret = 0;
	enum walk_hold hold;
	struct ttm_bo *bo;
	uint64_t gen;

	if ((unsigned int)domain >= TTM_DOMAIN_COUNT)
		return -EINVAL;
	head = bo_lru_of(dev, domain);
	pthread_mutex_lock(&dev->lock);
	list_add_after(&cur.hitch.node, head);
	list_add_tail(&end.node, head);
	list_add_tail(&cur.link, &dev->walks);
	gen = dev->lru_gen;
	while (progress < target &&
	       (bo = walk_next_locked(walk, &cur, head, &end, gen, &hold))) {
		long freed = 0;

		pthread_mutex_unlock(&dev->lock);
		ret = 0;
		if (hold == HOLD_TICKET) {
			ret = walk_ticketlock(walk, bo, domain);
			hold = HOLD_LOCKED;
		}
		if (ret == 0) {
			freed = walk->ops->process_bo(walk, bo);
			/* Not ttm_bo_unreserve(): a walk does not use it. */
			if (hold == HOLD_LOCKED)
				bo_resv_unlock(bo);
			ret = freed < 0 ? freed : 0;
		}
		ttm_bo_put(bo);
		pthread_mutex_lock(&dev->lock);
		if (ret < 0)
			break;
		if (freed > 0)
			progress += freed > LONG_MAX - progress ?
				    LONG_MAX - progress : freed;
	}
	list_del(&cur.link);
	list_del(&cur.hitch.node);
	list_del(&end.node);
	pthread_mutex_unlock(&dev->lock);
	return ret < 0 ? ret : progress;
}
