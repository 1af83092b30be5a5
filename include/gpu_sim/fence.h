/* SPDX-License-Identifier: MIT */
/*
 * Fences, private side: the struct, the pool and what the fence*.c files
 * share. Not installed.
 *
 * Type stability. Fences come from a pool (gpu_sim/fence_pool.c) and their
 * memory is never returned to malloc: a freed fence only goes back to a
 * free list and may come back as another fence. Its refcount keeps its
 * offset and is only ever changed atomically, never overwritten by the free
 * list. So a reader that found a fence pointer without holding a reference
 * (a reservation object's lockless reader, under its sequence lock) may
 * always call ttm_fence_tryget() on it: the memory is still a fence.
 * Anything else on a freed fence is a bug, which AddressSanitizer reports
 * as a "use-after-poison": the pool poisons all of a free fence but its
 * refcount.
 */
#ifndef TTMSIM_GPU_SIM_FENCE_H
#define TTMSIM_GPU_SIM_FENCE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ttmsim/fence.h"

/* A list of callbacks in the order they were added. */
struct fence_cb_list {
	struct ttm_fence_cb *head;
	struct ttm_fence_cb **tail;     /* &last->next, or &head */
};

struct ttm_fence {
	uint32_t refcount;      /* atomic; 0 while in the pool */
	int32_t status;         /* atomic: 0 pending, 1 ok, <0 error */
	uint64_t context;
	uint64_t seqno;
	/*
	 * Guards the lists and the pipe; never held while calling out.
	 * Initialised once, never destroyed.
	 */
	pthread_mutex_t lock;
	uint32_t running;       /* atomic: signalling runs the callbacks */
	struct fence_cb_list cbs;       /* ttm_fence_add_callback() */
	struct fence_cb_list waiters;   /* ttm_fence_wait(), after cbs */

	/* fence_fd.c: the exported pipe, -1 until the first export. */
	int pipe_rd, pipe_wr;
	dev_t pipe_dev;
	ino_t pipe_ino;
	struct ttm_fence *reg_next;     /* registry bucket, its lock */

	/* fence_pool.c: free list links, only while refcount is 0. */
	struct ttm_fence *pool_next;
	struct ttm_fence *batch_next;
	unsigned int batch_len;
} __attribute__((aligned(64)));

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
 * fence_cb.c: signal @f, whose lock the caller holds; it is released
 * before the callbacks run. @write_fd says whether an exported pipe learns
 * of it (not when a fence dies unsignalled).
 */
void fence_signal_unlock(struct ttm_fence *f, int status, bool write_fd);
void fence_cb_list_add(struct fence_cb_list *list, struct ttm_fence_cb *cb,
		       ttm_fence_func_t *func);
bool fence_cb_list_remove(struct fence_cb_list *list,
			  struct ttm_fence_cb *cb);

/* fence_fd.c: hooks called with @f->lock held / on the last put. */
void fence_fd_signal(struct ttm_fence *f);
void fence_fd_release(struct ttm_fence *f);

#endif /* TTMSIM_GPU_SIM_FENCE_H */
