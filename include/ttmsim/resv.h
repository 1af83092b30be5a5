/* SPDX-License-Identifier: MIT */
/*
 * Reservation objects: a ww_mutex plus the fences of the work that uses a
 * buffer, modelled on the kernel's dma_resv.
 *
 * Fences are kept by usage, ordered KERNEL < WRITE < READ < BOOKKEEP; asking
 * "for usage U" covers every fence whose usage is at most U, so waiting for
 * READ waits for KERNEL, WRITE and READ fences. Adding a fence needs the
 * reservation held, and a slot reserved first (ttm_resv_reserve_fences())
 * if the fence is appended, so that adding cannot fail: it runs after a job
 * was submitted, when failing is no longer an option. A new fence replaces
 * an older one of the same context whose usage is the same or lower in
 * priority (numerically at least as high), or takes the place of a
 * signalled one; only a fence that does neither is appended and uses up a
 * slot, as in the kernel's dma_resv_add_fence().
 *
 * Readers that do not hold the lock (ttm_resv_wait(), ttm_resv_test_
 * signaled(), ttm_resv_get_fences()) use a sequence lock: they retry if a
 * writer changed the list meanwhile. Fences are type-stable and the lists
 * they read are freed only by ttm_resv_fini(), so a reader never touches
 * freed memory. Readers never block writers.
 */
#ifndef TTMSIM_RESV_H
#define TTMSIM_RESV_H

#include <stdbool.h>
#include <stdint.h>

#include "ttmsim/fence.h"
#include "ttmsim/ww_mutex.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * enum ttm_resv_usage - how a fence uses the buffer.
 * @TTM_RESV_USAGE_KERNEL: moves and evictions.
 * @TTM_RESV_USAGE_WRITE: implicit sync: writers.
 * @TTM_RESV_USAGE_READ: implicit sync: readers.
 * @TTM_RESV_USAGE_BOOKKEEP: no implicit sync.
 *
 * Lower values must be waited for first.
 */
enum ttm_resv_usage {
	TTM_RESV_USAGE_KERNEL,
	TTM_RESV_USAGE_WRITE,
	TTM_RESV_USAGE_READ,
	TTM_RESV_USAGE_BOOKKEEP,
};

/**
 * ttm_resv_usage_rw() - the usage to wait for before an access (the
 * kernel's dma_resv_usage_rw).
 * @write: the access writes.
 *
 * Context: Does not sleep.
 * Return: the usage to pass to ttm_resv_wait().
 */
static inline enum ttm_resv_usage ttm_resv_usage_rw(bool write)
{
	/* A write waits for readers too; a read only for writers. */
	return write ? TTM_RESV_USAGE_READ : TTM_RESV_USAGE_WRITE;
}

struct ttm_resv_list;

/**
 * struct ttm_resv - a reservation object; embed it in a buffer.
 * @lock: the reservation lock, a ww_mutex like any other: for the caller.
 *
 * The other fields are private.
 */
struct ttm_resv {
	struct ww_mutex lock;
	/* private: */
	uint32_t seq;                   /* sequence lock of @fences */
	unsigned int reserved;          /* slots reserved, under @lock */
	struct ttm_resv_list *fences;   /* current list */
	struct ttm_resv_list *retired;  /* older lists, freed by fini */
};

/**
 * ttm_resv_init() - an empty reservation object.
 * @resv: the object to initialise.
 * @cls: the class of its lock.
 *
 * Context: Does not sleep. @resv must not be in use.
 */
void ttm_resv_init(struct ttm_resv *resv, struct ww_class *cls);

/**
 * ttm_resv_fini() - drop every fence and free.
 * @resv: the reservation object.
 *
 * Context: Does not sleep; a fence freed unsignalled here runs its
 * callbacks in the calling thread. @resv unlocked, and no reader left.
 */
void ttm_resv_fini(struct ttm_resv *resv);

/**
 * ttm_resv_reserve_fences() - make room for @n more fences.
 * @resv: the reservation object.
 * @n: how many.
 *
 * Prunes signalled fences, then grows the list if needed. Room for @n
 * more, not @n on top of an earlier reservation (as in the kernel): each
 * ttm_resv_add_fence() that appends then uses up one slot; one that
 * replaces a fence of its context, or a signalled one, uses none.
 *
 * Reserve again after relocking: the kernel forgets reserved slots on
 * unlock. ttmsim cannot see the unlock, so slots left over from an earlier
 * holding stay usable here; code relying on them is wrong, but only a
 * missing slot is reported.
 *
 * Context: Does not sleep. @resv held by the calling thread (checked by
 * the ww debug checker while it is on: rule resv-not-held).
 * Return: 0; -ENOMEM; -EINVAL if the checker's handler refused a call
 * without the lock (nothing changes).
 */
int ttm_resv_reserve_fences(struct ttm_resv *resv, unsigned int n);

/**
 * ttm_resv_add_fence() - keep @fence with @usage.
 * @resv: the reservation object.
 * @fence: the fence; a new reference is taken (the caller keeps its own).
 * @usage: how @fence uses the buffer.
 *
 * Prunes signalled fences, then replaces the fence of @fence's context
 * whose usage is @usage or numerically higher and whose seqno is not later
 * than @fence's, or else appends. As in the kernel's dma_resv_add_fence(),
 * only appending needs a slot: if a fence of the list is replaced, or one
 * has signalled (the kernel reuses its entry; ttmsim prunes it), no slot
 * is used up.
 *
 * Cannot fail: appending without a reserved slot (or adding without the
 * lock) is a programming error reported through the ww debug checker's
 * report path (by default a report on stderr and abort(); with a handler,
 * the fence is not added). A missing slot is reported in every build, the
 * lock not held only while the checker is on.
 *
 * Context: Does not sleep. @resv held by the caller, and a slot reserved
 * (ttm_resv_reserve_fences()) unless @fence replaces one.
 */
void ttm_resv_add_fence(struct ttm_resv *resv, struct ttm_fence *fence,
			enum ttm_resv_usage usage);

/*
 * The call-site twin: the same, naming the caller's @file (may be NULL)
 * and @line in a report.
 * The macro routes calls through it, like those of ttmsim/ww_mutex.h (and
 * TTMSIM_WW_NO_CALLER_MACROS turns it off the same way); the function
 * ttm_resv_add_fence() still exists.
 */
void ttm_resv_add_fence_at(struct ttm_resv *resv, struct ttm_fence *fence,
			   enum ttm_resv_usage usage, const char *file,
			   int line);

#ifndef TTMSIM_WW_NO_CALLER_MACROS
#define ttm_resv_add_fence(resv, fence, usage) \
	ttm_resv_add_fence_at(resv, fence, usage, __FILE__, __LINE__)
#endif

/**
 * ttm_resv_assert_held() - report a caller that does not hold @resv (the
 * kernel's dma_resv_assert_held()).
 * @resv: the reservation object.
 *
 * For a driver's own functions that need a reservation held: the check
 * ttmsim makes at the top of its own (rule 11 of the ww debug checker,
 * resv-not-held), through the same report path (by default a report on
 * stderr and abort(); with a handler installed, it returns). Only the
 * checker knows which thread holds what, so the check is made while it is
 * on: one relaxed load while it is off, nothing if it is not built in.
 * Held means held by the calling thread, with or without a context.
 *
 * Context: Does not sleep. @resv held by the calling thread.
 */
void ttm_resv_assert_held(const struct ttm_resv *resv);

void ttm_resv_assert_held_at(const struct ttm_resv *resv, const char *file,
			     int line);

#ifndef TTMSIM_WW_NO_CALLER_MACROS
#define ttm_resv_assert_held(resv) \
	ttm_resv_assert_held_at(resv, __FILE__, __LINE__)
#endif

/**
 * ttm_resv_locking_ctx() - the acquire context that holds @resv (the
 * kernel's dma_resv_locking_ctx()).
 * @resv: the reservation object.
 *
 * Lets code that meets a reservation tell whether its own transaction
 * holds it, as TTM's eviction compares it with its ticket.
 *
 * Context: Does not sleep. Takes no lock: a snapshot, stable only when
 * compared with a context of the calling thread (which only that thread
 * can lock or unlock with).
 * Return: the context @resv was locked with, or NULL if it is not held or
 * was locked without one.
 */
struct ww_acquire_ctx *ttm_resv_locking_ctx(const struct ttm_resv *resv);

/**
 * ttm_resv_get_fences() - a snapshot of the unsignalled fences with usage
 * at most @usage.
 * @resv: the reservation object.
 * @usage: the highest usage to include.
 * @ret_fences: a malloc()ed array of new references (NULL if none): put
 *	each, then free() it.
 * @ret_count: the number of fences.
 *
 * Context: Does not sleep. No lock needed: it retries while a writer
 * changes the list.
 * Return: 0 and *@ret_count, or -ENOMEM.
 */
int ttm_resv_get_fences(struct ttm_resv *resv, enum ttm_resv_usage usage,
			struct ttm_fence ***ret_fences,
			unsigned int *ret_count);

/**
 * ttm_resv_wait() - wait for every fence with usage at most @usage.
 * @resv: the reservation object.
 * @usage: the highest usage to wait for.
 * @interruptible: ttm_interrupt_thread() ends the wait with -EINTR.
 * @timeout_ns: as for ttm_fence_wait(): negative forever, 0 test.
 *
 * Fences added meanwhile may or may not be waited for.
 *
 * Context: May sleep unless @timeout_ns is 0; interruptibly with
 * @interruptible. No lock needed.
 * Return: 0, -ETIME or -EINTR.
 */
int ttm_resv_wait(struct ttm_resv *resv, enum ttm_resv_usage usage,
		  bool interruptible, int64_t timeout_ns);

/**
 * ttm_resv_test_signaled() - whether every fence up to @usage signalled.
 * @resv: the reservation object.
 * @usage: the highest usage to test.
 *
 * Context: Does not sleep. No lock needed.
 * Return: true if every fence with usage at most @usage has signalled.
 */
bool ttm_resv_test_signaled(struct ttm_resv *resv, enum ttm_resv_usage usage);

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_RESV_H */
