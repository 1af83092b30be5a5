/* SPDX-License-Identifier: MIT */
/*
 * The inside of devices and buffer objects (ttmsim/bo.h), shared by the
 * files of bo/.
 *
 * Locking (the design is in docs/bo-design.md; the order in which these
 * locks nest with every other lock of the library in docs/locking.md):
 *  - struct ttm_device::lock protects the accounting, the LRU, pinned and
 *    ghost lists, the counters and each buffer's list node. Under it,
 *    reservations are only try-locked.
 *  - A buffer's reservation protects its pin count, its domain and its
 *    memory; the domain is also stored atomically so that
 *    ttm_bo_domain() may take a snapshot without it. A buffer changes
 *    lists only with its reservation held, or when it is freed.
 *  - The reference count is atomic.
 */
#ifndef TTMSIM_BO_BO_H
#define TTMSIM_BO_BO_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "bo/layer.h"
#include "ttmsim/bo.h"
#include "ttmsim/fence.h"
#include "util/list.h"

/* One memory domain's manager. */
struct bo_domain {
	uint64_t capacity;     /* UINT64_MAX: unlimited */
	uint64_t used;         /* bytes, exact */
	uint64_t buffers;      /* resident, pinned or not */
	uint64_t ghosts;       /* move sources in flight, in @used */
	/*
	 * Bytes taken for moves into this domain whose buffer has not been
	 * switched in yet, in @used: the lock is dropped between taking the
	 * room and switching, and ttm_device_check() may run in between.
	 */
	uint64_t incoming;
	uint64_t pinned;       /* bytes of the pinned residents, exact */
	/*
	 * Unpinned residents, head evicted first, and the walks' hitches
	 * (bo/bo_lru.c): skip those with bo_lru_is_hitch().
	 */
	struct list_node lru;
};

struct ttm_device {
	pthread_mutex_t lock;
	pthread_cond_t idle;      /* zombies reached 0 */
	pthread_cond_t changed;   /* room may have been freed somewhere */
	struct bo_domain domain[TTM_DOMAIN_COUNT];
	struct list_node pinned;  /* pinned residents, any domain */
	struct list_node walks;   /* the LRU walks' cursors (bo/bo_lru.c) */
	uint64_t lru_gen;         /* stamps each LRU addition (bo_lru.c) */
	/*
	 * The class of every reservation of the device: the shared
	 * reservation_ww_class, or @own_class (wound-wait devices).
	 */
	struct ww_class *ww_class;
	struct ww_class own_class;
	char own_class_name[40];
	struct ttm_gpu *gpu;
	unsigned int copy_engine;
	/* The driver's hooks: never NULL, NULL members for the defaults. */
	const struct ttm_device_funcs *funcs;
	void *funcs_data;
	uint64_t buffers, zombies;
	uint64_t evictions, moves, bytes_moved, enospc, room_waits;
	struct list_node ghosts;  /* sources of moves in flight */
	uint64_t n_ghosts;        /* on @ghosts; destroy waits for 0 */
	void *private;            /* the driver's; atomic */
	void (*release_private)(void *data);
	/*
	 * The destroy worker (bo/bo_destroy.c): buffers whose delayed
	 * destroy is due, oldest first, under @work_lock (taken alone, or
	 * inside a fence callback: a leaf).
	 */
	pthread_t worker;
	pthread_mutex_t work_lock;
	pthread_cond_t work_cond;    /* work queued, or stop */
	pthread_cond_t work_idle;    /* queue empty, worker idle */
	struct ttm_bo *work_head, **work_tail;
	bool work_stop;
	bool work_busy;              /* freeing one it took off the queue */
	bool work_started;           /* @worker runs (from the first zombie) */
	bool work_free_dev;          /* the worker frees @dev when idle */
	struct {                  /* the library's layers' (bo/layer.h) */
		void *data;       /* atomic */
		void (*release)(void *data);
	} layer[BO_LAYER_COUNT];
};

/*
 * The source of a move still in flight: its memory stays allocated and
 * accounted in its domain until the copy's fence signals, when the
 * callback frees it (bo/bo_move.c).
 */
struct bo_ghost {
	struct ttm_fence_cb cb;
	struct ttm_fence *fence;  /* the copy's; a reference */
	struct ttm_device *dev;
	void *mem;
	uint64_t size;
	int domain;
	struct list_node node;    /* on dev->ghosts, under dev->lock */
};

/*
 * Waiting for the fences of a buffer whose last reference went: one node
 * per fence; the last callback to run queues the buffer for the worker.
 */
struct ttm_bo_destroy_cb {
	struct ttm_fence_cb cb;
	struct ttm_bo *bo;
};

/* struct ttm_bo is public (ttmsim/bo.h): drivers embed it. */

/* A reference unless the last one is gone (a delayed destroy is due). */
static inline bool bo_get_unless_zero(struct ttm_bo *bo)
{
	int old = __atomic_load_n(&bo->refcount, __ATOMIC_RELAXED);

	do {
		if (old == 0)
			return false;
	} while (!__atomic_compare_exchange_n(&bo->refcount, &old, old + 1,
					      true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

/*
 * @bo's memory: an import's is its exporter's, read under the shared
 * reservation, which keeps the exporter from moving.
 */
static inline void *bo_mem(const struct ttm_bo *bo)
{
	return bo->exporter ? bo->exporter->mem : bo->mem;
}

/* An import leaves its exporter's list and drops it (bo/bo_import.c). */
void bo_import_release(struct ttm_bo *bo);

/* The list of @dev that an unpinned buffer of @domain belongs on. */
static inline struct list_node *bo_lru_of(struct ttm_device *dev, int domain)
{
	return &dev->domain[domain].lru;
}

/* A placement lists 1 to TTM_PLACEMENT_MAX distinct, known domains. */
bool bo_placement_valid(const struct ttm_placement *placement);

/*
 * Free @bo's memory, give its bytes back to its domain and call its
 * destroy (bo/bo.c). Not under the device lock, nor in a fence callback.
 */
void bo_free(struct ttm_bo *bo);

/*
 * @dev's destroy worker (bo/bo_destroy.c): set up with the device;
 * started by the first delayed destroy (0 or a negative errno); stopped
 * once no delayed destroy is pending, after it drained its queue.
 */
void bo_worker_init(struct ttm_device *dev);
int bo_worker_ensure(struct ttm_device *dev);
void bo_worker_stop(struct ttm_device *dev);

/*
 * For ttm_device_destroy() called by a destroy the worker runs: whether
 * this is @dev's worker; then the worker frees @dev (bo_device_free())
 * itself once its queue, the other delayed destroys and the moves in
 * flight are done, since it cannot join itself.
 */
bool bo_worker_is_self(struct ttm_device *dev);
void bo_worker_free_device(struct ttm_device *dev);
/* The end of ttm_device_destroy(): its worker stopped, nothing pending. */
void bo_device_free(struct ttm_device *dev);

/*
 * Wait until the worker has done every destroy queued so far; whether
 * there was any. Does nothing in the worker itself.
 */
bool bo_worker_flush(struct ttm_device *dev);

/* Account @bo in @domain, whose bytes are taken; caller holds dev->lock. */
void bo_account_in_locked(struct ttm_bo *bo, int domain);

/*
 * Creation's fallback when no domain of @bo's placement has room: make
 * room as validation does, but without a ticket (@ctx->exec is NULL:
 * victims are only try-locked), and account @bo in there. 0, -ENOSPC
 * (counted), -EBUSY for @ctx->no_wait_gpu, -ENOMEM.
 */
int bo_create_make_room(struct ttm_bo *bo, const struct ttm_operation_ctx *ctx);

/*
 * The LRU lists (bo/bo_lru.c). Besides buffers, an LRU holds the hitches
 * of the walks running over it (ttm_lru_walk_for_evict()): every loop over
 * an LRU skips the nodes for which bo_lru_is_hitch() is true. A buffer's
 * node is followed by its node_kind, 0; a hitch's by a kind of its own.
 */
static inline bool bo_lru_is_hitch(const struct list_node *n)
{
	return container_of(n, const struct ttm_bo, node)->node_kind != 0;
}

/*
 * Put accounted @bo on its list: the pinned list if pinned (its bytes
 * counted in its domain's pinned bytes), else its domain's LRU tail, or
 * the tail of its bulk move's group there. Caller holds dev->lock.
 */
void bo_lru_add_locked(struct ttm_bo *bo);
/* Take @bo off the list bo_lru_add_locked() put it on; dev->lock held. */
void bo_lru_del_locked(struct ttm_bo *bo);
/* Put @bo on its domain's LRU tail unless pinned; caller holds dev->lock. */
void bo_lru_bump_locked(struct ttm_bo *bo);
/*
 * @bo's last reference went: out of its bulk move (takes dev->lock), so
 * that the bulk's owner may finalise it while @bo waits for its fences.
 */
void bo_lru_release(struct ttm_bo *bo);

/*
 * Evict reserved, unpinned @victim out of @domain (bo/bo_evict.c): the
 * driver's evict_flags, a target with room (else SYSTEM), swap_notify for
 * SYSTEM, the move. 0 or the move's error.
 */
int bo_evict_victim(struct ttm_bo *victim, int domain,
		    const struct ttm_operation_ctx *ctx);

/*
 * Account @size bytes in @domain if it has room for them; false if not.
 * Caller holds dev->lock.
 */
static inline bool bo_domain_take_locked(struct ttm_device *dev, int domain,
					 uint64_t size)
{
	struct bo_domain *dom = &dev->domain[domain];

	if (dom->capacity - dom->used < size)
		return false;
	dom->used += size;
	dom->incoming += size;
	return true;
}

/*
 * Move reserved, unpinned @bo to @domain, where its bytes were already
 * taken (bo_domain_take_locked()); gives them back on failure
 * (bo/bo_move.c). Through the driver's move hook if it has one, with its
 * bounce (-EMULTIHOP) through a domain that must have room now: @bo may
 * then be left there if the second move fails.
 */
int bo_move(struct ttm_bo *bo, int domain, const struct ttm_operation_ctx *ctx);

/*
 * Wait until the oldest move source in flight in @domain is freed
 * (bo/bo_move.c). Return: 0; -ENOSPC if there is none; -EBUSY for
 * @ctx->no_wait_gpu; -EINTR.
 */
int bo_ghost_wait(struct ttm_device *dev, int domain,
		  const struct ttm_operation_ctx *ctx);

/*
 * Make room for @size bytes in @domain by evicting one buffer other than
 * @bo (bo/bo_evict.c). *@ret_vetoed: the bytes of the candidates the
 * driver's eviction_valuable hook refused. Return: 0 if one was evicted
 * (try again), -ENOSPC if none can be, -EDEADLK (marked contended in
 * @ctx->exec), -EINTR, -ENOMEM, or the move hook's error.
 */
int bo_evict_one(struct ttm_bo *bo, int domain,
		 const struct ttm_operation_ctx *ctx, uint64_t *ret_vetoed);

/*
 * bo_evict_one() found nothing to evict in @domain for @bo. -ENOSPC if
 * nothing ever could be: @bo does not fit beside the pinned buffers,
 * those of @ctx->exec's job and the @vetoed bytes the driver refused to
 * evict (bo_evict_one()), or there is no ticket (then buffers held by
 * anyone are as good as pinned, the caller itself may hold them).
 * Otherwise what is left is held only for a moment: by another thread's
 * eviction, by a reservation without a ticket (a move may run under it),
 * or by a buffer waiting for delayed destroy. Wait a little for the
 * device's accounting to change, and return 0 to try again;
 * -EBUSY for @ctx->no_wait_gpu, -EINTR if interruptible.
 */
int bo_room_wait(struct ttm_bo *bo, int domain,
		 const struct ttm_operation_ctx *ctx, uint64_t vetoed);

/* Wake bo_room_wait(): room came free; caller holds dev->lock. */
static inline void bo_room_changed_locked(struct ttm_device *dev)
{
	pthread_cond_broadcast(&dev->changed);
}

#endif /* TTMSIM_BO_BO_H */
