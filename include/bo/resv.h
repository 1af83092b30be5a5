/* SPDX-License-Identifier: MIT */
/*
 * The inside of a reservation object (ttmsim/resv.h), shared by its writers
 * (bo/resv.c, bo/resv_add.c) and its lockless readers (bo/resv_read.c).
 *
 * The fences live in a struct ttm_resv_list that is changed in place by the
 * holder of the lock, inside a write section of the sequence lock
 * struct ttm_resv::seq:
 *
 *   writer (holds resv->lock)          reader (holds nothing)
 *   seq = odd                          s = seq, again while odd
 *   stores to the list, release        loads from the list, acquire;
 *   seq = even, release                  a reference to each fence
 *                                      seq != s: put them, start again
 *
 * Every store to a list a reader can see is a release store and every load
 * a reader makes is an acquire load, so a reader that saw a store of a
 * section also sees that section's odd seq when it reads seq again: it
 * cannot take a torn list for a consistent one. A reader may meanwhile
 * hold a fence pointer the list no longer owns; inside its read-side
 * section (ttm_fence_read_lock()) the fence stays in memory (see
 * include/gpu_sim/fence.h), so ttm_fence_tryget() on it is safe, and the
 * retry puts what it got.
 *
 * Growing allocates a bigger list and publishes it; the old one goes on
 * struct ttm_resv::retired, unchanged, until ttm_resv_fini(), because a
 * reader may still be reading it.
 */
#ifndef TTMSIM_BO_RESV_H
#define TTMSIM_BO_RESV_H

#include <errno.h>

#include "ttmsim/resv.h"
#include "ww/debug.h"

/* One fence and how it uses the buffer. */
struct ttm_resv_entry {
	struct ttm_fence *fence;
	unsigned int usage;             /* enum ttm_resv_usage */
};

struct ttm_resv_list {
	unsigned int count;             /* entries in use */
	unsigned int max;               /* entries allocated; fixed */
	struct ttm_resv_list *next;     /* on resv->retired; writers only */
	struct ttm_resv_entry entries[];
};

/* The smallest list, as in the kernel. */
#define TTM_RESV_LIST_MIN 4

/* ---- writers: resv->lock held ---------------------------------------- */

static inline void resv_write_begin(struct ttm_resv *resv)
{
	uint32_t seq = __atomic_load_n(&resv->seq, __ATOMIC_RELAXED);

	/* Ordered before the section's stores by their release. */
	__atomic_store_n(&resv->seq, seq + 1, __ATOMIC_RELAXED);
}

static inline void resv_write_end(struct ttm_resv *resv)
{
	uint32_t seq = __atomic_load_n(&resv->seq, __ATOMIC_RELAXED);

	__atomic_store_n(&resv->seq, seq + 1, __ATOMIC_RELEASE);
}

static inline void resv_entry_set(struct ttm_resv_list *list, unsigned int i,
				  struct ttm_fence *fence, unsigned int usage)
{
	__atomic_store_n(&list->entries[i].fence, fence, __ATOMIC_RELEASE);
	__atomic_store_n(&list->entries[i].usage, usage, __ATOMIC_RELEASE);
}

static inline void resv_count_set(struct ttm_resv_list *list,
				  unsigned int count)
{
	__atomic_store_n(&list->count, count, __ATOMIC_RELEASE);
}

/*
 * Drop the signalled fences of the current list, keeping the order of the
 * others. Inside a write section.
 */
void resv_prune_locked(struct ttm_resv *resv);

/* ---- misuse ------------------------------------------------------------ */

/*
 * Report @rule (rule 11 of the ww debug checker) for @resv, misused by API
 * call @call made at @file:@line (NULL: unknown). Returns only if a
 * handler is installed (bo/resv_add.c).
 */
void resv_misuse(const struct ttm_resv *resv, enum ww_debug_rule rule,
		 const char *call, const char *file, int line);

/*
 * The "Locking: reserved" of a call that has no error of its own for it,
 * backed at run time: rule 11, resv-not-held, if the calling thread does
 * not hold @resv, as far as the checker's record of held locks tells.
 * Nothing with the checker not built in (the branch is on a constant),
 * one relaxed load with it off. The public ttm_resv_assert_held() is this
 * check, for drivers (named resv_ here so that the two cannot clash).
 * Return: 0, or -EINVAL once reported with a handler installed: the call
 * then does nothing (a void one just returns).
 */
static inline int resv_assert_held_at(const struct ttm_resv *resv,
				      const char *call, const char *file,
				      int line)
{
	if (!ww_debug_active() || ww_debug_lock_held(&resv->lock))
		return 0;
	resv_misuse(resv, WW_DEBUG_RESV_NOT_HELD, call, file, line);
	return -EINVAL;
}

/*
 * Rule 5 (class-mismatch) for @ticket used by @call on @lock (NULL: a lock
 * about to be made) of class @cls: both classes go into the report
 * (bo/resv_add.c).
 */
void resv_class_mismatch(const struct ww_mutex *lock,
			 const struct ww_class *cls,
			 const struct ww_acquire_ctx *ticket,
			 const char *call, const char *file, int line);

/*
 * A ticket orders only the locks of its own class: locking one of another
 * family into it would let two transactions each wait for the other with
 * neither told to back off. The kernel only WARNs (there is one
 * reservation class); ttmsim has a class per Wound-Wait device, and says
 * -EXDEV, after a checker report when the checker is on.
 */
static inline int resv_check_class_at(const struct ttm_resv *resv,
				      const struct ww_acquire_ctx *ticket,
				      const char *call, const char *file,
				      int line)
{
	const struct ww_class *cls = ww_lock_class(&resv->lock);

	/*
	 * A ticket or lock without a class was never initialised: the ww
	 * calls report that (rules 4 and 9), not a mismatch.
	 */
	if (!ticket || !ticket->ww_class || !cls || ticket->ww_class == cls)
		return 0;
	if (ww_debug_active())
		resv_class_mismatch(&resv->lock, cls, ticket, call, file,
				    line);
	return -EXDEV;
}

/* For the calls without a caller-site macro. */
static inline int resv_assert_held(const struct ttm_resv *resv,
				   const char *call)
{
	return resv_assert_held_at(resv, call, NULL, 0);
}

/*
 * A new reference to the first unsignalled fence of @resv up to @usage, or
 * NULL: a lockless read that allocates nothing (bo_destroy.c's delayed
 * destroy re-arms on it from fence callbacks).
 */
struct ttm_fence *resv_first_pending(struct ttm_resv *resv,
				     enum ttm_resv_usage usage);

#endif /* TTMSIM_BO_RESV_H */
