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
 * signaled(), ttm_resv_get_fences(), the unlocked iterator) use a sequence
 * lock: they start over if a writer changed the list meanwhile. Fences
 * stay in memory while they read (ttm_fence_read_lock()) and the lists they
 * read are freed only by ttm_resv_fini(), so a reader never touches freed
 * memory. Readers never block writers.
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
 * ttm_resv_unlock() - unlock a reservation object the caller locked.
 * @resv: the reservation object, locked by the caller (a ww_mutex_lock()
 *	of @resv->lock, ttm_bo_reserve() of a buffer using it, ...).
 *
 * Unlocks @resv->lock and wakes validations of any device waiting for
 * room a buffer held (ttm_bo_validate()): a driver that unlocks a
 * buffer's reservation itself must use this, not a bare
 * ww_mutex_unlock(), which such a waiter sees only on its safety timeout
 * (10 ms, counted in room_wait_timeouts).
 *
 * Context: Does not sleep; may take a short internal lock when a room
 * wait sleeps. @resv locked by the caller.
 */
void ttm_resv_unlock(struct ttm_resv *resv);

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
 * ttm_resv_replace_fences() - put @replacement in the place of every fence
 * of @context (the kernel's dma_resv_replace_fences()).
 * @resv: the reservation object.
 * @context: the fence context whose fences go.
 * @replacement: the fence that takes their place; a reference is taken
 *	for each (the caller keeps its own).
 * @usage: how @replacement uses the buffer.
 *
 * Only valid when the work of the replaced fences no longer touches the
 * buffer once @replacement signals: a preemption fence replaced by the
 * fence of the page-table update that unmaps the buffer, for instance.
 * Replaces in place, so no slot is needed. Each entry is replaced in a
 * write section of its own (the old fence is put outside it): a lockless
 * reader may see some replaced and others not yet.
 *
 * Context: Does not sleep. @resv held by the calling thread (rule 11 of
 * the ww debug checker, resv-not-held, while it is on; a refused call
 * changes nothing). Puts the replaced fences (see ttm_fence_put()).
 */
void ttm_resv_replace_fences(struct ttm_resv *resv, uint64_t context,
			     struct ttm_fence *replacement,
			     enum ttm_resv_usage usage);

/**
 * ttm_resv_copy_fences() - give @dst the fences of @src (the kernel's
 * dma_resv_copy_fences()).
 * @dst: the reservation object to change.
 * @src: the reservation object to copy from; no lock needed.
 *
 * Every unsignalled fence of @src, with its usage, takes the place of all
 * of @dst's own, which are dropped, as in the kernel. @src is read as the
 * lockless readers read it (the copy starts over if a writer changed it;
 * it never holds a writer up). Slots reserved on @dst are gone afterwards:
 * the kernel's new list has room for the copies only, so reserve again
 * before adding. TTM uses this to give a buffer that leaves a shared
 * reservation a private copy of its fences ("individualize").
 *
 * Context: Does not sleep. @dst held by the calling thread (rule 11 of the
 * ww debug checker, resv-not-held, while it is on). Puts @dst's old
 * fences (see ttm_fence_put()).
 * Return: 0; -ENOMEM with @dst unchanged; -EINVAL if the checker's handler
 * refused a call without the lock (nothing changes).
 */
int ttm_resv_copy_fences(struct ttm_resv *dst, struct ttm_resv *src);

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
 * ttm_resv_get_singleton() - the unsignalled fences with usage at most
 * @usage as one fence (the kernel's dma_resv_get_singleton()).
 * @resv: the reservation object.
 * @usage: the highest usage to include.
 * @ret_fence: NULL if there is none; the fence itself if there is one;
 *	else a merge of them (ttm_fence_unwrap_merge(): an array, flat even
 *	if the reservation holds containers). With a reference for the
 *	caller.
 *
 * For a caller that wants one fence to export, or to keep in a syncobj.
 * Reads the list as ttm_resv_get_fences() does; the kernel's wants the
 * lock held, this one does not need it.
 *
 * Context: Does not sleep. No lock needed. Allocates.
 * Return: 0 and *@ret_fence, or -ENOMEM.
 */
int ttm_resv_get_singleton(struct ttm_resv *resv, enum ttm_resv_usage usage,
			   struct ttm_fence **ret_fence);

/**
 * struct ttm_resv_access - how a job uses a buffer, for
 *	ttm_resv_implicit_deps().
 * @resv: the buffer's reservation object.
 * @write: the job writes to the buffer; else it only reads it.
 */
struct ttm_resv_access {
	struct ttm_resv *resv;
	bool write;
};

/**
 * ttm_resv_implicit_deps() - the fences a job must wait for before it
 * touches its buffers (the kernel's drm_sched_job_add_implicit_dependencies()
 * over a job's buffers).
 * @access: the job's buffers and how it uses each.
 * @count: the number of @access entries.
 * @ret_fences: a malloc()ed array of new references (NULL if none): put
 *	each, then free() it.
 * @ret_count: the number of fences.
 *
 * Implicit sync by ttm_resv_usage_rw(): a write waits for every KERNEL,
 * WRITE and READ fence of its buffer, a read for the KERNEL and WRITE
 * ones; BOOKKEEP fences never. The fences are flattened (containers
 * unwrapped), those signalled without an error left out, and kept one per
 * context, the later (ttm_fence_is_later()), as the kernel's
 * drm_sched_job_add_dependency() does, sorted by context. Hand them to
 * the job as dependencies, or merge them (ttm_fence_unwrap_merge()).
 *
 * Context: Does not sleep. No lock needed (call it with the buffers
 * reserved, so that nobody adds fences between it and the job's own).
 * Allocates.
 * Return: 0 and *@ret_fences, *@ret_count; or -ENOMEM.
 */
int ttm_resv_implicit_deps(const struct ttm_resv_access *access,
			   unsigned int count, struct ttm_fence ***ret_fences,
			   unsigned int *ret_count);

/**
 * struct ttm_resv_iter - a cursor over the fences of a reservation object
 * (the kernel's struct dma_resv_iter).
 *
 * On the caller's stack, from ttm_resv_iter_begin() to ttm_resv_iter_end();
 * walked either locked (ttm_resv_iter_first(), ttm_resv_for_each_fence())
 * or unlocked (ttm_resv_iter_first_unlocked(),
 * ttm_resv_for_each_fence_unlocked()), not both. The fields are private:
 * visible only so that the caller can allocate it.
 */
struct ttm_resv_iter {
	/* private: */
	struct ttm_resv *resv;
	const struct ttm_resv_list *list; /* the list walked */
	struct ttm_fence *fence;        /* unlocked: the last one, a ref */
	unsigned int usage;             /* the highest usage walked */
	unsigned int fence_usage;       /* the usage of the last fence */
	unsigned int index;             /* the next entry */
	unsigned int count;             /* unlocked: entries of this pass */
	uint32_t seq;                   /* unlocked: resv->seq of this pass */
	bool restarted;
};

/**
 * ttm_resv_iter_begin() - set up @cursor to walk the fences of @resv with
 * usage at most @usage (the kernel's dma_resv_iter_begin()).
 * @cursor: the cursor.
 * @resv: the reservation object.
 * @usage: the highest usage to walk: KERNEL < WRITE < READ < BOOKKEEP, so
 *	READ walks the KERNEL, WRITE and READ fences.
 *
 * Context: Does not sleep.
 */
void ttm_resv_iter_begin(struct ttm_resv_iter *cursor, struct ttm_resv *resv,
			 enum ttm_resv_usage usage);

/**
 * ttm_resv_iter_end() - finish a walk (the kernel's dma_resv_iter_end()).
 * @cursor: the cursor.
 *
 * Drops the reference the unlocked walk holds on its last fence; after a
 * locked walk it does nothing, but is harmless. Needed after leaving an
 * unlocked loop early, and after it ran to its end.
 *
 * Context: Does not sleep; may free the last fence (see ttm_fence_put()).
 */
void ttm_resv_iter_end(struct ttm_resv_iter *cursor);

/**
 * ttm_resv_iter_first_unlocked() - the first fence of an unlocked walk (the
 * kernel's dma_resv_iter_first_unlocked()).
 * @cursor: the cursor, from ttm_resv_iter_begin().
 *
 * Walks the unsignalled fences up to the cursor's usage, in list order,
 * without the lock. Each fence handed out carries a reference the cursor
 * holds until the next call or ttm_resv_iter_end(): take one of your own
 * to keep it. The walk reads under the reservation's sequence lock: if a
 * writer changed the list, it starts over, and the first fence after that
 * has ttm_resv_iter_is_restarted() set. Fences handed out since the last
 * (re)start were all in the list at once; a caller that collects them
 * must drop what it collected when the walk restarts. Readers never block
 * writers.
 *
 * Context: Does not sleep (yields while a writer is inside its section).
 * No lock needed.
 * Return: the first fence, or NULL if none.
 */
struct ttm_fence *ttm_resv_iter_first_unlocked(struct ttm_resv_iter *cursor);

/**
 * ttm_resv_iter_next_unlocked() - the next fence of an unlocked walk (the
 * kernel's dma_resv_iter_next_unlocked()).
 * @cursor: the cursor, after ttm_resv_iter_first_unlocked().
 *
 * Drops the cursor's reference to the previous fence. See
 * ttm_resv_iter_first_unlocked() for restarts.
 *
 * Context: Does not sleep (yields while a writer is inside its section).
 * No lock needed.
 * Return: the next fence, or NULL at the end. A NULL with
 * ttm_resv_iter_is_restarted() set means the walk restarted and found no
 * fence: what was collected before is stale too.
 */
struct ttm_fence *ttm_resv_iter_next_unlocked(struct ttm_resv_iter *cursor);

/**
 * ttm_resv_iter_first() - the first fence of a walk under the lock (the
 * kernel's dma_resv_iter_first()).
 * @cursor: the cursor, from ttm_resv_iter_begin().
 *
 * Walks every fence up to the cursor's usage, in list order, signalled or
 * not (the list prunes signalled fences only when it changes). No
 * reference is taken: the list keeps the fences while the lock is held and
 * the list is not changed. Never restarts.
 *
 * Context: Does not sleep. The cursor's reservation held by the calling
 * thread (rule 11 of the ww debug checker, resv-not-held, while it is on;
 * a refused call returns NULL).
 * Return: the first fence, or NULL if none.
 */
struct ttm_fence *ttm_resv_iter_first(struct ttm_resv_iter *cursor);

/**
 * ttm_resv_iter_next() - the next fence of a walk under the lock (the
 * kernel's dma_resv_iter_next()).
 * @cursor: the cursor, after ttm_resv_iter_first().
 *
 * Context: Does not sleep. The cursor's reservation held by the calling
 * thread (checked as for ttm_resv_iter_first()).
 * Return: the next fence, or NULL at the end.
 */
struct ttm_fence *ttm_resv_iter_next(struct ttm_resv_iter *cursor);

/**
 * ttm_resv_iter_usage() - how the fence last handed out uses the buffer
 * (the kernel's dma_resv_iter_usage()).
 * @cursor: the cursor.
 *
 * Context: Does not sleep.
 * Return: the usage the fence was added with, at most the cursor's.
 */
enum ttm_resv_usage ttm_resv_iter_usage(const struct ttm_resv_iter *cursor);

/**
 * ttm_resv_iter_is_restarted() - whether the walk (re)started with the
 * fence last handed out (the kernel's dma_resv_iter_is_restarted()).
 * @cursor: the cursor.
 *
 * True for the first fence of a walk, and for the first one after an
 * unlocked walk started over; false otherwise. After the last call
 * returned NULL: true if that call restarted the walk (or it was empty
 * from the start), so that nothing collected before it is current.
 *
 * Context: Does not sleep.
 * Return: true if the caller must drop what it collected before.
 */
bool ttm_resv_iter_is_restarted(const struct ttm_resv_iter *cursor);

/**
 * ttm_resv_for_each_fence_unlocked() - walk the fences without the lock
 * (the kernel's dma_resv_for_each_fence_unlocked()).
 * @cursor: a cursor set up with ttm_resv_iter_begin(); call
 *	ttm_resv_iter_end() after the loop.
 * @fence: a struct ttm_fence * set to each fence in turn.
 *
 * See ttm_resv_iter_first_unlocked(): check ttm_resv_iter_is_restarted()
 * in the body if the body collects anything.
 */
#define ttm_resv_for_each_fence_unlocked(cursor, fence)                 \
	for ((fence) = ttm_resv_iter_first_unlocked(cursor); (fence);   \
	     (fence) = ttm_resv_iter_next_unlocked(cursor))

/**
 * ttm_resv_for_each_fence() - walk the fences with the lock held (the
 * kernel's dma_resv_for_each_fence()).
 * @cursor: a struct ttm_resv_iter.
 * @resv: the reservation object, held by the calling thread.
 * @usage: the highest usage to walk.
 * @fence: a struct ttm_fence * set to each fence in turn.
 *
 * Sets up @cursor itself; no ttm_resv_iter_end() is needed.
 */
#define ttm_resv_for_each_fence(cursor, resv, usage, fence)             \
	for (ttm_resv_iter_begin(cursor, resv, usage),                  \
	     (fence) = ttm_resv_iter_first(cursor); (fence);            \
	     (fence) = ttm_resv_iter_next(cursor))

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
