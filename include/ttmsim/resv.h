/* SPDX-License-Identifier: MIT */
/*
 * Reservation objects: a ww_mutex plus the fences of the work that uses a
 * buffer, modelled on the kernel's dma_resv.
 *
 * Fences are kept by usage, ordered KERNEL < WRITE < READ < BOOKKEEP; asking
 * "for usage U" covers every fence whose usage is at most U, so waiting for
 * READ waits for KERNEL, WRITE and READ fences. Adding a fence needs the
 * reservation held and a slot reserved first (ttm_resv_reserve_fences()),
 * so that adding cannot fail: it runs after a job was submitted, when
 * failing is no longer an option. A new fence replaces an older one of the
 * same context whose usage is the same or lower in priority (numerically
 * at least as high); signalled fences are pruned.
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

/** How a fence uses the buffer; lower values must be waited for first. */
enum ttm_resv_usage {
	TTM_RESV_USAGE_KERNEL,   /* moves and evictions */
	TTM_RESV_USAGE_WRITE,    /* implicit sync: writers */
	TTM_RESV_USAGE_READ,     /* implicit sync: readers */
	TTM_RESV_USAGE_BOOKKEEP, /* no implicit sync */
};

/** The usage to wait for before an access (the kernel's dma_resv_usage_rw). */
static inline enum ttm_resv_usage ttm_resv_usage_rw(bool write)
{
	/* A write waits for readers too; a read only for writers. */
	return write ? TTM_RESV_USAGE_READ : TTM_RESV_USAGE_WRITE;
}

struct ttm_resv_list;

/**
 * struct ttm_resv - a reservation object; embed it in a buffer.
 *
 * Only @lock is for the caller (it is a ww_mutex like any other); the
 * other fields are private.
 */
struct ttm_resv {
	struct ww_mutex lock;
	uint32_t seq;                   /* sequence lock of @fences */
	unsigned int reserved;          /* slots reserved, under @lock */
	struct ttm_resv_list *fences;   /* current list */
	struct ttm_resv_list *retired;  /* older lists, freed by fini */
};

/** ttm_resv_init - an empty reservation object whose lock is of @cls. */
void ttm_resv_init(struct ttm_resv *resv, struct ww_class *cls);

/** ttm_resv_fini - drop every fence and free; @resv must be unlocked. */
void ttm_resv_fini(struct ttm_resv *resv);

/**
 * ttm_resv_reserve_fences - make room for @n more fences.
 *
 * Prunes signalled fences, then grows the list if needed. Room for @n
 * more, not @n on top of an earlier reservation (as in the kernel): each
 * ttm_resv_add_fence() then uses up one slot.
 *
 * Locking: @resv held. Reserve again after relocking: the kernel forgets
 * reserved slots on unlock. ttmsim cannot see the unlock, so slots left
 * over from an earlier holding stay usable here; code relying on them is
 * wrong, but only a missing slot is reported.
 * Return: 0 or -ENOMEM.
 */
int ttm_resv_reserve_fences(struct ttm_resv *resv, unsigned int n);

/**
 * ttm_resv_add_fence - keep @fence with @usage, taking a new reference
 * (the caller keeps its own).
 *
 * Prunes signalled fences, then replaces the fence of @fence's context
 * whose usage is @usage or numerically higher and whose seqno is not later
 * than @fence's, or else appends. Uses up one reserved slot either way.
 *
 * Locking: @resv held by the caller, and a slot reserved. Cannot fail:
 * adding without a reserved slot (or without the lock) is a programming
 * error reported through the ww debug checker's report path (by default a
 * report on stderr and abort(); with a handler, the fence is not added).
 * A missing slot is reported in every build, the lock not held only while
 * the checker is on.
 */
void ttm_resv_add_fence(struct ttm_resv *resv, struct ttm_fence *fence,
			enum ttm_resv_usage usage);

/*
 * The same, naming the caller's @file (may be NULL) and @line in a report.
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
 * ttm_resv_get_fences - a snapshot of the unsignalled fences with usage
 * at most @usage.
 * @ret_fences: a malloc()ed array of new references (NULL if none): put
 * each, then free() it.
 *
 * Locking: none needed.
 * Return: 0 and *@ret_count, or -ENOMEM.
 */
int ttm_resv_get_fences(struct ttm_resv *resv, enum ttm_resv_usage usage,
			struct ttm_fence ***ret_fences,
			unsigned int *ret_count);

/**
 * ttm_resv_wait - wait for every fence with usage at most @usage.
 * @timeout_ns: as for ttm_fence_wait(): negative forever, 0 test.
 *
 * Locking: none needed; fences added meanwhile may or may not be waited
 * for. Return: 0, -ETIME or -EINTR.
 */
int ttm_resv_wait(struct ttm_resv *resv, enum ttm_resv_usage usage,
		  bool interruptible, int64_t timeout_ns);

/** ttm_resv_test_signaled - true if every fence up to @usage signalled. */
bool ttm_resv_test_signaled(struct ttm_resv *resv, enum ttm_resv_usage usage);

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_RESV_H */
