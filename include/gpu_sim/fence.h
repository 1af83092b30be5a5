/* SPDX-License-Identifier: MIT */
/*
 * Fences, private side (the struct is in ttmsim/fence.h): the pool, the
 * grace period and what the fence*.c files share. Not installed.
 *
 * Lockless readers. A reader that found a fence pointer without holding a
 * reference (a reservation object's lockless reader, under its sequence
 * lock) may call ttm_fence_tryget() on it as long as the memory is still a
 * fence. Two kinds of fence keep that true:
 *
 * - The library's fences come from a pool (gpu_sim/fence_pool.c) and their
 *   memory is never returned to malloc: a freed fence only goes back to a
 *   free list and may come back as another fence. Its refcount keeps its
 *   offset and is only ever changed atomically, never overwritten by the
 *   free list. So this holds anywhere, at any time. Anything else on a
 *   freed fence is a bug, which AddressSanitizer reports as a
 *   "use-after-poison": the pool poisons all of a free fence but its
 *   refcount.
 * - A driver's fence (ttm_fence_init()) is freed by its release op, which
 *   waits for a grace period (gpu_sim/fence_rcu.c): a fence whose last
 *   reference went stays in memory, refcount 0, until every thread that
 *   was inside a read-side section (ttm_fence_read_lock()) when it went
 *   has left it. So this holds inside a read-side section entered before
 *   the pointer was read.
 *
 * Readers do not know which kind they meet: every lockless reader enters a
 * read-side section.
 */
#ifndef TTMSIM_GPU_SIM_FENCE_H
#define TTMSIM_GPU_SIM_FENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "ttmsim/fence.h"

/* struct ttm_fence::flags */
#define FENCE_F_ENABLED  (1u << 0)  /* enable_signaling was called */

/* The ops of the library's own fences, from the pool. */
extern const struct ttm_fence_ops fence_lib_ops;

/* The largest error a fence can carry (the kernel's MAX_ERRNO). */
#define FENCE_MAX_ERRNO 4095

/**
 * ttm_fence_tryget - take a reference on @f unless its refcount is zero.
 *
 * For readers that hold no reference: @f may have been freed, or freed and
 * reused as another fence, since the pointer was read. Type stability (see
 * above) makes the call itself safe on any pointer that was once a fence;
 * after it succeeds the caller must check that @f is still the fence it
 * meant (re-read its source, e.g. retry the sequence lock) and put it if
 * not.
 * Inline, so the tests can use it too (the library exports no private
 * symbols).
 * Return: @f with a new reference, or NULL if it was being freed.
 */
static inline struct ttm_fence *ttm_fence_tryget(struct ttm_fence *f)
{
	/*
	 * Acquire even when it fails: a reader that sees 0 must also see
	 * what the writer did before dropping the last reference (replacing
	 * the fence in a resv list), or its seqlock re-check could pass on
	 * a stale sequence and miss the replacement.
	 */
	uint32_t ref = __atomic_load_n(&f->refcount, __ATOMIC_ACQUIRE);

	do {
		if (ref == 0)
			return NULL;
	} while (!__atomic_compare_exchange_n(&f->refcount, &ref, ref + 1,
					      true, __ATOMIC_ACQUIRE,
					      __ATOMIC_ACQUIRE));
	return f;
}

/*
 * fence_pool.c: a fence with refcount 0 and its lock initialised, the rest
 * for the caller to set; NULL if out of memory.
 */
struct ttm_fence *fence_pool_alloc(void);
void fence_pool_free(struct ttm_fence *f);

/*
 * fence.c: ttm_fence_create() in two steps, so that a fence can be set up
 * where nothing may fail: fence_pool_alloc() first, then this, which
 * makes @f a library fence with its first reference.
 */
void fence_lib_setup(struct ttm_fence *f, uint64_t context, uint64_t seqno);

/*
 * fence_cb.c: signal @f, whose lock the caller holds; it is released
 * before the callbacks run. @write_fd says whether an exported pipe learns
 * of it (not when a fence dies unsignalled). @timestamp_ns is the time to
 * record, or 0 to read the clock now.
 */
void fence_signal_unlock(struct ttm_fence *f, int status, bool write_fd,
			 uint64_t timestamp_ns);

/*
 * fence_cb.c: ttm_fence_signal() recording @timestamp_ns (CLOCK_MONOTONIC
 * ns, as ttm_fence_timestamp() returns; 0: read the clock) instead of
 * reading the clock: for a fence that stands for an event another fence
 * already timed, as dma_fence_signal_timestamp() does. Same returns.
 */
int fence_signal_timestamp(struct ttm_fence *fence, int error,
			   uint64_t timestamp_ns);
void fence_cb_list_add(struct ttm_fence_cb_list *list,
		       struct ttm_fence_cb *cb,
		       ttm_fence_func_t *func);
bool fence_cb_list_remove(struct ttm_fence_cb_list *list,
			  struct ttm_fence_cb *cb);

/*
 * fence_rcu.c: queue driver fence @f, refcount 0, for fence_destroy() once
 * every reader that may see it left its section; and run those whose
 * grace period ended (not waiting for the others).
 */
void fence_rcu_retire(struct ttm_fence *f);
/* fence.c: the end of a driver fence: its lock, then its release op. */
void fence_destroy(struct ttm_fence *f);
/* fence_cb.c: whether this thread runs @f's callbacks now. */
bool fence_signalling_now(const struct ttm_fence *f);

/*
 * Wait (yielding) until the callbacks of @f, seen signalled under its lock
 * or after taking it once, have finished in the signalling thread; at once
 * if this thread is running them (fence_cb.c).
 */
void fence_callbacks_wait(struct ttm_fence *f);
/* fence.c: the enable_signaling op, once. */
void fence_enable_signaling(struct ttm_fence *f);

/* fence_fd.c: hooks called with @f->lock held / on the last put. */
void fence_fd_signal(struct ttm_fence *f);
void fence_fd_release(struct ttm_fence *f);

#endif /* TTMSIM_GPU_SIM_FENCE_H */
