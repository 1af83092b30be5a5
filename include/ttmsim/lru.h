/* SPDX-License-Identifier: MIT */
/*
 * The LRU tools of a driver's shrinker and suspend path, modelled on TTM's
 * (ttm_lru_walk, ttm_bo_swapout(), ttm_resource_manager_evict_all(),
 * ttm_lru_bulk_move): a walker over a domain's LRU that hands out
 * referenced, reserved buffers while the device lock is dropped, swap-out
 * to SYSTEM, evict-all of a domain, and bulk LRU moves for the buffers of
 * one group (a driver's VM).
 *
 * The design is in docs/bo-design.md (*LRU walks, swap-out and bulk
 * moves*); the lock order in docs/locking.md.
 */
#ifndef TTMSIM_LRU_H
#define TTMSIM_LRU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ttmsim/bo.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ttm_lru_walk;

/**
 * struct ttm_lru_walk_ops - what a walk does with each buffer.
 * @process_bo: called for each buffer the walk could reserve, in LRU
 *	order: @bo is referenced and reserved for the walk (by the walk, by
 *	its ticket, or by the caller through @walk->ctx->resv). It may move
 *	or evict @bo, but must neither unreserve nor put it. Return the bytes
 *	it freed (counted towards the walk's target), 0 to go on without
 *	counting, or a negative errno to end the walk with it.
 *	Context: May sleep. No lock of ttmsim held but @bo's reservation
 *	(and those of the walk's ticket).
 */
struct ttm_lru_walk_ops {
	long (*process_bo)(struct ttm_lru_walk *walk, struct ttm_bo *bo);
};

/**
 * struct ttm_lru_walk - a walk over one domain's LRU, as TTM's.
 * @ops: what to do with each buffer.
 * @ctx: the operation's context, never NULL (interruptible, no_wait_gpu,
 *	and allow_res_evict with resv: the caller's own reservation, whose
 *	buffers are handed out without locking); passed on to process_bo.
 * @ticket: NULL: buffers are only try-locked. Else a buffer another
 *	thread holds is reserved with @ticket, sleeping, after the device
 *	lock is dropped (unless @trylock_only); an -EDEADLK ends the walk
 *	with it (the buffer marked contended in @ctx->exec if set) for the
 *	caller's back-off. Buffers @ticket already holds are handed out
 *	only if @ctx->exec says they are evictable (ttm_exec_is_evictable()).
 * @trylock_only: never sleep on a reservation, even with @ticket.
 *
 * The caller fills it in; it lives as long as the walk.
 */
struct ttm_lru_walk {
	const struct ttm_lru_walk_ops *ops;
	struct ttm_operation_ctx *ctx;
	struct ww_acquire_ctx *ticket;
	bool trylock_only;
};

/**
 * ttm_lru_walk_for_evict() - walk @domain's LRU from its head until
 * @target bytes were freed.
 * @walk: the walk.
 * @dev: the device.
 * @domain: the domain whose LRU to walk.
 * @target: the bytes to free; the walk ends once @walk's process_bo
 *	returned that many in all.
 *
 * The walk keeps its place with a hitch, a node of its own on the LRU,
 * so the device lock is dropped around each buffer: buffers removed or
 * moved meanwhile do not break it. It covers the buffers on the LRU when
 * it starts, each at most once: those that join or are used again (moved
 * to the tail) after it started are left out, so it always ends. A
 * buffer is handed out referenced and reserved; the walk releases its
 * reservation without moving it on the LRU (it was not used) and drops
 * the reference. Buffers waiting for their delayed destroy, and those
 * the walk cannot reserve, are skipped.
 *
 * Context: May sleep (with @walk->ticket, on reservations; and in
 * process_bo). Takes and releases the device lock; the caller holds no
 * reservation of @dev but those of @walk->ticket or @walk->ctx->resv.
 * Return: the bytes process_bo freed (possibly less than @target, or
 * more), or the first negative errno: process_bo's, -EDEADLK (back off),
 * -EINTR (interruptible), -EINVAL for a bad @domain.
 */
long ttm_lru_walk_for_evict(struct ttm_lru_walk *walk, struct ttm_device *dev,
			    enum ttm_domain domain, long target);

/**
 * ttm_device_lru_snapshot() - the buffers on @domain's LRU, head
 * (evicted first) to tail, referenced.
 * @dev: the device.
 * @domain: the domain.
 * @ret_bos: filled with references to up to @max buffers, which the
 *	caller puts (ttm_bo_put()); may be NULL if @max is 0.
 * @max: the size of @ret_bos.
 *
 * Pinned buffers are on no LRU list. Buffers waiting for their delayed
 * destroy cannot be referenced: they are left out. A view for tests and
 * debugging, O(length of the list): for work on the buffers, use
 * ttm_lru_walk_for_evict(), which reserves them.
 *
 * Context: Does not sleep. Takes and releases the device lock: the
 * snapshot is consistent, the list may change once it returns.
 * Return: the number of referenceable buffers on the list (possibly more
 * than @max: only @max are referenced), or -EINVAL for a bad @domain.
 */
long ttm_device_lru_snapshot(struct ttm_device *dev, enum ttm_domain domain,
			     struct ttm_bo **ret_bos, size_t max);

/**
 * ttm_bo_swapout() - move one buffer out to SYSTEM, as TTM's swap-out.
 * @bo: the buffer, reserved by the caller.
 * @ctx: the operation's context (interruptible, no_wait_gpu).
 *
 * The kernel swaps a buffer's pages out to shmem; ttmsim's nearest is
 * SYSTEM: the device's swap_notify hook is called, then @bo moves there
 * through the normal move path (the driver's move hook, or a copy on the
 * device's GPU after @bo's fences), counted as an eviction. Its contents
 * are kept; a later validation brings it back.
 *
 * Context: May sleep (the move; not with @ctx->no_wait_gpu). @bo reserved
 * by the calling thread; takes and releases the device lock.
 * Return: 0 (also when @bo already lives in SYSTEM); -EBUSY if @bo is
 * pinned, or busy with @ctx->no_wait_gpu and no GPU to copy; -EINVAL for
 * an import (its pages are its exporter's) or if the reservation is not
 * held (the checker's handler refused the call); -ENOMEM; -EINTR; or the
 * move hook's error. On failure @bo stays where it was, unless the
 * driver's move hook bounced it through another domain (-EMULTIHOP) and
 * the second move failed: then it stays in that domain, as after a
 * failed eviction.
 */
int ttm_bo_swapout(struct ttm_bo *bo, struct ttm_operation_ctx *ctx);

/**
 * ttm_device_swapout() - a shrinker: swap unpinned buffers out of GTT,
 * then VRAM, least recently used first, until @target bytes went.
 * @dev: the device.
 * @ctx: the operation's context (NULL: all defaults); @ctx->exec is not
 *	used.
 * @target: the bytes to swap out.
 *
 * Walks each LRU with ttm_lru_walk_for_evict(), try-locking only (as the
 * kernel's shrinker, which may run under any lock), and calls
 * ttm_bo_swapout() on each buffer. Buffers busy with @ctx->no_wait_gpu
 * are skipped. The kernel swaps out only TT-backed buffers (its VRAM is
 * evicted first); ttmsim's VRAM buffers go straight to SYSTEM.
 *
 * Context: May sleep (moves). Takes and releases the device lock; the
 * caller may hold reservations (they are skipped).
 * Return: the bytes swapped out (their memory is freed once each copy is
 * done), or a negative errno (-EINTR, -ENOMEM, a move hook's error).
 */
long ttm_device_swapout(struct ttm_device *dev, struct ttm_operation_ctx *ctx,
			long target);

/**
 * ttm_device_evict_all() - empty @domain of every unpinned buffer, as the
 * kernel's ttm_resource_manager_evict_all() at suspend.
 * @dev: the device.
 * @domain: TTM_DOMAIN_VRAM or TTM_DOMAIN_GTT.
 * @ctx: the operation's context (NULL: all defaults); @ctx->exec must be
 *	NULL.
 *
 * Evicts each buffer as validation's eviction does (the driver's
 * evict_flags; VRAM to GTT, or SYSTEM if GTT is full; GTT to SYSTEM),
 * reserving each with a ticket of its own and sleeping on buffers other
 * threads hold, then waits for the moves' copies and for buffers waiting
 * for their delayed destroy, until only pinned buffers are left. Buffers
 * that arrive meanwhile are evicted too: quiesce submitters first, or it
 * may not end.
 *
 * Context: May sleep. The caller holds no reservation of @dev. Takes and
 * releases the device lock.
 * Return: 0 if @domain holds nothing any more; -EBUSY if pinned buffers
 * are left (everything else was evicted); -EBUSY also for
 * @ctx->no_wait_gpu when it would have to wait; -EINVAL for a bad
 * @domain or a @ctx->exec; -EINTR; -ENOMEM; a move hook's error.
 */
int ttm_device_evict_all(struct ttm_device *dev, enum ttm_domain domain,
			 struct ttm_operation_ctx *ctx);

/**
 * struct ttm_lru_bulk_move_pos - one domain's group of a bulk move.
 *
 * The fields are private to ttmsim.
 */
struct ttm_lru_bulk_move_pos {
	/* private: */
	struct ttm_bo *first, *last;
};

/**
 * struct ttm_lru_bulk_move - buffers kept together on each domain's LRU,
 * moved to the tail at once, as TTM's (a driver's VM: all its buffers are
 * used by each of its jobs).
 *
 * The fields are private to ttmsim. Set up with ttm_lru_bulk_move_init().
 */
struct ttm_lru_bulk_move {
	/* private: */
	struct ttm_device *dev;         /* of its first buffer */
	unsigned long count;            /* its buffers */
	struct ttm_lru_bulk_move_pos pos[TTM_DOMAIN_COUNT];
};

/**
 * ttm_lru_bulk_move_init() - an empty bulk move.
 * @bulk: the bulk move.
 *
 * Context: Does not sleep.
 */
void ttm_lru_bulk_move_init(struct ttm_lru_bulk_move *bulk);

/**
 * ttm_lru_bulk_move_fini() - check that no buffer uses @bulk any more.
 * @bulk: the bulk move.
 *
 * A buffer leaves its bulk move with ttm_bo_set_bulk_move(@bo, NULL), or
 * when its last reference goes.
 *
 * Context: Does not sleep. Takes and releases the device lock.
 * Return: 0, then @bulk may be freed; -EBUSY if buffers still use it.
 */
int ttm_lru_bulk_move_fini(struct ttm_lru_bulk_move *bulk);

/**
 * ttm_bo_set_bulk_move() - make @bo a member of @bulk, or of none.
 * @bo: the buffer, reserved by the caller.
 * @bulk: the bulk move (NULL: leave the one @bo is in).
 *
 * A member's place on its domain's LRU is within its bulk's group there:
 * it joins at the group's tail (or the LRU's, starting the group), and
 * its uses (ttm_bo_unreserve(), ttm_bo_move_to_lru_tail()) move it to the
 * group's tail. A buffer leaving the group is put right after it.
 *
 * Context: Does not sleep. @bo reserved by the calling thread. Takes and
 * releases the device lock.
 * Return: 0; -EXDEV if @bulk has members of another device; -EINVAL if
 * the reservation is not held (the checker's handler refused the call).
 */
int ttm_bo_set_bulk_move(struct ttm_bo *bo, struct ttm_lru_bulk_move *bulk);

/**
 * ttm_lru_bulk_move_tail() - move each domain's group of @bulk to the tail
 * of the domain's LRU, keeping its order.
 * @bulk: the bulk move.
 *
 * One splice a domain, plus a pass over the group's buffers (each is
 * stamped as just used) and over the walks running in the domain, whose
 * cursors stay where the group was (a walk does not see the group's
 * buffers it had not reached: they were just used).
 *
 * Context: Does not sleep. Takes and releases the device lock; the
 * caller holds the reservations of the group's buffers, or knows they
 * were used (as TTM, which asks for none).
 */
void ttm_lru_bulk_move_tail(struct ttm_lru_bulk_move *bulk);

/**
 * ttm_bo_move_to_lru_tail() - mark @bo used: the tail of its domain's
 * LRU, or of its bulk move's group there.
 * @bo: the buffer, reserved by the caller.
 *
 * What ttm_bo_unreserve() does before unlocking. Nothing for a pinned
 * buffer.
 *
 * Context: Does not sleep. @bo reserved by the calling thread. Takes and
 * releases the device lock.
 */
void ttm_bo_move_to_lru_tail(struct ttm_bo *bo);

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_LRU_H */
