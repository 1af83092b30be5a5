/* SPDX-License-Identifier: MIT */
/*
 * The locking helper: take the reservations of a set of buffers with one
 * ticket, backing off and retrying on contention. Modelled on the kernel's
 * drm_exec.
 *
 *	static int lock_and_validate(struct ttm_device *dev,
 *				     struct ttm_bo **bos, unsigned int n)
 *	{
 *		struct ttm_exec exec;
 *		struct ttm_operation_ctx ctx = {
 *			.interruptible = true,
 *			.exec = &exec,
 *		};
 *		unsigned int i;
 *		int ret = 0;
 *
 *		ttm_exec_init(&exec, dev, TTM_EXEC_INTERRUPTIBLE);
 *		ttm_exec_until_all_locked(&exec) {
 *			for (i = 0; i < n; i++) {
 *				ret = ttm_exec_prepare_bo(&exec, bos[i], 1);
 *				ttm_exec_retry_on_contention(&exec);
 *				if (ret)
 *					goto out;
 *			}
 *			// An eviction that needs a back-off calls
 *			// ttm_exec_set_contended(): retry the same way.
 *			for (i = 0; i < n; i++) {
 *				ret = ttm_bo_validate(bos[i],
 *						      ttm_bo_placement(bos[i]),
 *						      &ctx);
 *				ttm_exec_retry_on_contention(&exec);
 *				if (ret)
 *					goto out;
 *			}
 *		}
 *		ttm_exec_done(&exec);
 *		// Use the buffers: submit a job, then add its fence to
 *		// each with ttm_exec_for_each_locked_bo() (each has the
 *		// slot reserved above).
 *	out:
 *		ttm_exec_fini(&exec);
 *		return ret;
 *	}
 *
 * The ticket, and so its stamp, is the same for every pass: that is what
 * makes a transaction that keeps backing off eventually the oldest, which
 * then wins. On -EDEADLK the helper unlocks everything at once and keeps
 * the contended buffer; the next pass starts by sleeping on it with
 * ttm_bo_reserve_slowpath(), as the ww_mutex rules demand, and then the
 * body takes the others again.
 *
 * Unlike drm_exec, leaving the loop does not end the locking phase:
 * validation inside the loop may still evict with the ticket and need a
 * back-off. Call ttm_exec_done() once everything is locked and validated.
 *
 * Only the thread that called ttm_exec_init() may use the helper: its
 * ticket belongs to that thread.
 */
#ifndef TTMSIM_EXEC_H
#define TTMSIM_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "ttmsim/bo.h"
#include "ttmsim/ww_mutex.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Waits may be interrupted: ttm_interrupt_thread() makes them -EINTR. */
#define TTM_EXEC_INTERRUPTIBLE     (1u << 0)
/* Locking a buffer twice is not an error: the second lock returns 0. */
#define TTM_EXEC_IGNORE_DUPLICATES (1u << 1)
/*
 * The caller holds a reference on every buffer it locks through the helper
 * until ttm_exec_fini() (or ttm_exec_unlock_bo() of it), so the helper
 * takes none of its own: two atomic operations fewer per buffer on a
 * count other threads share. A submission whose handle lookup took one
 * (as drm_gem_objects_lookup() does) can lend it. "Locks" includes a lock
 * that returned -EDEADLK: that buffer is slow-locked and listed at the
 * start of the next pass, whether or not the body names it again, so its
 * reference must last until fini too.
 */
#define TTM_EXEC_CALLER_REFS       (1u << 2)

/* Buffers a transaction holds without allocating. */
#define TTM_EXEC_INLINE_BOS 8

/**
 * struct ttm_exec - one multi-buffer locking transaction.
 *
 * Allocated by the caller (usually on its stack) between ttm_exec_init()
 * and ttm_exec_fini(). The fields are private to ttmsim; they are visible
 * only so that the caller can allocate the struct.
 */
struct ttm_exec {
	/* private: */
	struct ww_acquire_ctx ticket;
	uint32_t flags;
	unsigned int num_bos, max_bos;
	struct ttm_bo **bos;        /* locked, each with a reference
				       unless TTM_EXEC_CALLER_REFS:
				       @inline_bos, or malloc()ed */
	struct ttm_bo *contended;   /* to lock first next pass; a reference */
	bool contended_evictable;   /* it came from ttm_exec_set_contended() */
	struct ttm_bo *prelocked;   /* slow-locked, unclaimed by the body */
	struct ttm_bo *evictable;   /* held for eviction only, not in @bos;
				       a reference */
	int error;                  /* this pass' slow lock failed */
	bool in_pass;
	struct ttm_bo *inline_bos[TTM_EXEC_INLINE_BOS];
};

/**
 * ttm_exec_init() - start a transaction on the buffers of @dev.
 * @exec: the helper to initialise.
 * @dev: the device.
 * @flags: TTM_EXEC_INTERRUPTIBLE, TTM_EXEC_IGNORE_DUPLICATES,
 *	TTM_EXEC_CALLER_REFS, or 0.
 *
 * Initialises the ticket with @dev's class (ttm_device_ww_class()) at
 * once: it takes its stamp now, and keeps it until ttm_exec_fini(). Every
 * buffer locked through @exec must belong to a device of that class.
 * Allocates nothing: up to TTM_EXEC_INLINE_BOS buffers are listed in
 * @exec itself (so it must not be copied or moved while in use); the list
 * moves to the heap only beyond that.
 *
 * Context: Does not sleep. @exec then belongs to the calling thread until
 * ttm_exec_fini(); like any acquire context, a thread may have only one
 * open per class.
 */
void ttm_exec_init(struct ttm_exec *exec, struct ttm_device *dev,
		   uint32_t flags);

/**
 * ttm_exec_fini() - end the transaction.
 * @exec: the helper.
 *
 * Unreserves every buffer @exec holds (in reverse order of locking, so
 * that the first one locked ends last on its LRU, as single unreserves
 * would leave them; one device lock round trip for the LRU moves of them
 * all), drops the references it took, frees its list and finishes the
 * ticket. Allowed
 * at any point after ttm_exec_init(), inside the loop or after it, with or
 * without ttm_exec_done().
 *
 * Context: Does not sleep. The thread of ttm_exec_init() only. Releases
 * every reservation @exec holds; takes and releases the device lock.
 */
void ttm_exec_fini(struct ttm_exec *exec);

/**
 * ttm_exec_done() - end the locking phase: every buffer is locked and
 * validated.
 * @exec: the helper.
 *
 * Calls ww_acquire_done() on the ticket; taking another lock with it
 * afterwards is a bug that the ww debug checker reports.
 *
 * Context: Does not sleep. The thread of ttm_exec_init() only.
 */
void ttm_exec_done(struct ttm_exec *exec);

/**
 * ttm_exec_lock_bo() - reserve @bo within the transaction.
 * @exec: the helper.
 * @bo: the buffer, of a device of @exec's class.
 *
 * On success @bo is on @exec's list with a reference (none with
 * TTM_EXEC_CALLER_REFS: the caller's must last), until
 * ttm_exec_fini() or a back-off. A buffer slow-locked at the start of the
 * pass (the one contended on last) is already held: the first lock of it
 * returns 0 without locking again.
 *
 * Buffers sharing one reservation (ttm_bo_init_reserved()) count as
 * duplicates, as two objects on one reservation do in drm_exec: once one
 * is listed, locking another returns -EALREADY (0 with
 * TTM_EXEC_IGNORE_DUPLICATES) and lists nothing, since the job's fence
 * reaches the reservation through the listed one. If the reservation is
 * held for eviction only (ttm_exec_is_evictable()), the lock passes to
 * @bo instead: @bo is listed, 0 is returned, and the evictable buffer is
 * dropped (no longer evictable; locking it later is a duplicate).
 *
 * Context: May sleep; interruptibly with TTM_EXEC_INTERRUPTIBLE. The thread
 * of ttm_exec_init() only. Takes @bo's reservation on success; on -EDEADLK
 * releases every reservation @exec holds.
 * Return: 0; -EDEADLK: contention, everything @exec held is unlocked
 * already and @bo is remembered: call ttm_exec_retry_on_contention() next;
 * -EALREADY if @exec already holds @bo, or another listed buffer on its
 * reservation (0 with TTM_EXEC_IGNORE_DUPLICATES);
 * -EINTR (TTM_EXEC_INTERRUPTIBLE only), also when the slow lock that
 * started this pass was interrupted (then from every later call: nothing
 * is held, call ttm_exec_fini()); -ENOMEM. After an error other than
 * -EDEADLK, what @exec holds stays held until ttm_exec_fini().
 */
int ttm_exec_lock_bo(struct ttm_exec *exec, struct ttm_bo *bo);

/**
 * ttm_exec_prepare_bo() - ttm_exec_lock_bo(), then reserve fence slots.
 * @exec: the helper.
 * @bo: the buffer, of a device of @exec's class.
 * @num_fences: how many slots to reserve in @bo's reservation
 *	(ttm_resv_reserve_fences()).
 *
 * Context: May sleep; interruptibly with TTM_EXEC_INTERRUPTIBLE. The thread
 * of ttm_exec_init() only. Takes @bo's reservation on success; on -EDEADLK
 * releases every reservation @exec holds.
 * Return: as ttm_exec_lock_bo(), or -ENOMEM from the slot reservation, in
 * which case @bo stays locked and listed until ttm_exec_fini(). No slot is
 * reserved when -EALREADY is returned.
 */
int ttm_exec_prepare_bo(struct ttm_exec *exec, struct ttm_bo *bo,
			unsigned int num_fences);

/**
 * ttm_exec_prepare_array() - ttm_exec_prepare_bo() on each buffer of an
 * array, in order.
 * @exec: the helper.
 * @bos: the buffers, of devices of @exec's class.
 * @n: how many.
 * @num_fences: how many slots to reserve in each buffer's reservation.
 *
 * The kernel's drm_exec_prepare_array(). It stops at the first error;
 * call ttm_exec_retry_on_contention() right after it, as after one lock.
 *
 * Context: May sleep; interruptibly with TTM_EXEC_INTERRUPTIBLE. The thread
 * of ttm_exec_init() only. Takes the reservations of @bos; on -EDEADLK
 * releases every reservation @exec holds.
 * Return: 0, or the first error of ttm_exec_prepare_bo(), with the buffers
 * before it locked (none after -EDEADLK): -EDEADLK, -EALREADY (a buffer
 * or reservation listed twice without TTM_EXEC_IGNORE_DUPLICATES), -EINTR,
 * -ENOMEM.
 */
int ttm_exec_prepare_array(struct ttm_exec *exec, struct ttm_bo *const *bos,
			   unsigned int n, unsigned int num_fences);

/**
 * ttm_exec_unlock_bo() - unreserve one buffer @exec holds, and forget it.
 * @exec: the helper.
 * @bo: the buffer.
 *
 * The kernel's drm_exec_unlock_obj(): for a buffer the caller turns out
 * not to need after all. @bo leaves the list (the others keep their
 * order), is unreserved with ttm_bo_unreserve() (a buffer held for
 * eviction only, ttm_exec_is_evictable(), without the LRU bump) and loses
 * @exec's reference. Locking it again later in the transaction is an
 * ordinary lock. Nothing happens if @exec does not hold @bo. As after any
 * unlock, reserve fence slots again before adding a fence (the kernel's
 * rule).
 *
 * Context: Does not sleep. The thread of ttm_exec_init() only, not inside
 * ttm_exec_for_each_locked_bo(). Releases @bo's reservation; takes and
 * releases the device lock.
 */
void ttm_exec_unlock_bo(struct ttm_exec *exec, struct ttm_bo *bo);

/**
 * ttm_exec_set_contended() - back off for @bo after an -EDEADLK that came
 * from elsewhere than ttm_exec_lock_bo().
 * @exec: the helper.
 * @bo: the buffer whose reservation returned -EDEADLK to the ticket.
 *
 * For an -EDEADLK from a reservation taken with ttm_exec_ticket(),
 * typically by an eviction during validation.
 *
 * Unlocks everything @exec holds, as for a contention in
 * ttm_exec_lock_bo(), and takes a reference on @bo; the caller must then
 * call ttm_exec_retry_on_contention(). The next pass starts by
 * slow-locking @bo, which then stays held (and is unlocked by
 * ttm_exec_fini()) but is not one of the caller's buffers:
 * ttm_exec_is_evictable() says so, and @bo is left out of
 * ttm_exec_for_each_locked_bo() and ttm_exec_count() (see
 * ttm_exec_for_each_evictable_bo()), until the body locks @bo itself.
 * @bo must be the buffer whose reservation returned -EDEADLK to the ticket,
 * as the ww_mutex rules require for the slow path.
 *
 * Context: Does not sleep. The thread of ttm_exec_init() only. Releases
 * every reservation @exec holds.
 */
void ttm_exec_set_contended(struct ttm_exec *exec, struct ttm_bo *bo);

/**
 * ttm_exec_is_evictable() - whether eviction may take @bo although @exec
 * holds it.
 * @exec: the helper.
 * @bo: the buffer.
 *
 * At most one buffer is such at a time. O(1).
 *
 * Context: Does not sleep.
 * Return: true if @exec holds @bo only because an eviction contended on it
 * (ttm_exec_set_contended()); false for the buffers the body locked, and
 * for buffers @exec does not hold.
 */
bool ttm_exec_is_evictable(const struct ttm_exec *exec,
			   const struct ttm_bo *bo);

/**
 * ttm_exec_ticket() - @exec's acquire context.
 * @exec: the helper.
 *
 * For reservations taken outside the helper (eviction).
 *
 * Context: Does not sleep. The ticket belongs to the thread of
 * ttm_exec_init().
 * Return: the ticket, valid until ttm_exec_fini().
 */
struct ww_acquire_ctx *ttm_exec_ticket(struct ttm_exec *exec);

/**
 * ttm_exec_count() - how many buffers the body locked through @exec.
 * @exec: the helper.
 *
 * Context: Does not sleep.
 * Return: the number of buffers ttm_exec_for_each_locked_bo() lists: the
 * buffer held for eviction only (ttm_exec_is_evictable()) is not counted.
 */
unsigned int ttm_exec_count(const struct ttm_exec *exec);

/**
 * ttm_exec_locked_bo() - the @index-th buffer the body locked through
 * @exec, in locking order (the kernel's drm_exec_obj()).
 * @exec: the helper.
 * @index: from 0.
 *
 * The buffer slow-locked at the start of a pass after a lock's back-off
 * counts as locked first; one held for eviction only counts from the
 * body's lock of it. No reference is taken: @exec holds one until it
 * unlocks the buffer.
 *
 * Context: Does not sleep.
 * Return: the buffer, or NULL if @index >= ttm_exec_count().
 */
struct ttm_bo *ttm_exec_locked_bo(const struct ttm_exec *exec,
				  unsigned int index);

/**
 * ttm_exec_for_each_locked_bo() - iterate over the buffers the body locked
 * through @exec, in locking order.
 * @exec: the helper.
 * @index: an unsigned int.
 * @bo: a struct ttm_bo *.
 *
 * The kernel's drm_exec_for_each_locked_object(): every buffer listed is
 * one the caller asked for, so "add the job's fence to each" is safe for
 * those prepared with a slot. A buffer held for eviction only
 * (ttm_exec_is_evictable()) is not listed: see
 * ttm_exec_for_each_evictable_bo(). Do not lock, unlock or back off inside
 * the iteration: the list would change.
 *
 * Context: Does not sleep.
 */
#define ttm_exec_for_each_locked_bo(exec, index, bo)                    \
	for ((index) = 0;                                               \
	     ((bo) = ttm_exec_locked_bo((exec), (index))) != NULL;      \
	     (index)++)

/**
 * ttm_exec_for_each_locked_bo_reverse() - iterate over the buffers the body
 * locked through @exec, newest first.
 * @exec: the helper.
 * @index: an unsigned int (it wraps below 0, which ends the loop).
 * @bo: a struct ttm_bo *.
 *
 * The kernel's drm_exec_for_each_locked_object_reverse(): the order in
 * which to undo what was done in locking order. As
 * ttm_exec_for_each_locked_bo() otherwise.
 *
 * Context: Does not sleep.
 */
#define ttm_exec_for_each_locked_bo_reverse(exec, index, bo)            \
	for ((index) = ttm_exec_count(exec) - 1;                        \
	     ((bo) = ttm_exec_locked_bo((exec), (index))) != NULL;      \
	     (index)--)

/**
 * ttm_exec_evictable_bo() - the @index-th buffer @exec holds for eviction
 * only.
 * @exec: the helper.
 * @index: from 0.
 *
 * Such a buffer was slow-locked because an eviction contended on it
 * (ttm_exec_set_contended()); it is the caller's only once the body locks
 * it. There is at most one today. No reference is taken.
 *
 * Context: Does not sleep.
 * Return: the buffer, or NULL if there is no @index-th one.
 */
struct ttm_bo *ttm_exec_evictable_bo(const struct ttm_exec *exec,
				     unsigned int index);

/**
 * ttm_exec_for_each_evictable_bo() - iterate over the buffers @exec holds
 * for eviction only.
 * @exec: the helper.
 * @index: an unsigned int.
 * @bo: a struct ttm_bo *.
 *
 * The buffers ttm_exec_for_each_locked_bo() leaves out
 * (ttm_exec_is_evictable()). @exec unlocks them in ttm_exec_fini(); their
 * reservations hold no fence slot reserved for the caller.
 *
 * Context: Does not sleep.
 */
#define ttm_exec_for_each_evictable_bo(exec, index, bo)                 \
	for ((index) = 0;                                               \
	     ((bo) = ttm_exec_evictable_bo((exec), (index))) != NULL;   \
	     (index)++)

/**
 * ttm_exec_is_contended() - whether @exec must back off.
 * @exec: the helper.
 *
 * Context: Does not sleep.
 * Return: true between an -EDEADLK (or ttm_exec_set_contended()) and the
 * start of the next pass.
 */
static inline bool ttm_exec_is_contended(const struct ttm_exec *exec)
{
	return exec->contended != NULL;
}

/**
 * ttm_exec_error() - the error every lock call of this pass returns.
 * @exec: the helper.
 *
 * A pass after a back-off starts with the slow lock of the contended
 * buffer, which can fail (-EINTR with TTM_EXEC_INTERRUPTIBLE, -ENOMEM
 * making room on the list); then nothing is held, and every lock call of
 * the pass returns that error. This tells the body at the top of the pass
 * how the back-off ended, without trying a lock.
 *
 * Context: Does not sleep.
 * Return: 0, or the negative errno of the failed slow lock.
 */
int ttm_exec_error(const struct ttm_exec *exec);

/**
 * ttm_exec_next_pass() - the loop condition of ttm_exec_until_all_locked();
 * not for direct use.
 * @exec: the helper.
 *
 * Context: May sleep, on the contended buffer's reservation; interruptibly
 * with TTM_EXEC_INTERRUPTIBLE. The thread of ttm_exec_init() only. Takes
 * that reservation (an interrupted slow lock is reported by the body's
 * next lock call).
 * Return: true to run a pass: the first one, or another after a contention
 * (once the contended buffer is slow-locked); false after a pass that ran
 * to its end.
 */
bool ttm_exec_next_pass(struct ttm_exec *exec);

/*
 * The loop's initialiser, run on entry and on each restart: a loop left by
 * break must not make the next one look finished.
 */
static inline void *ttm_exec_loop_start_(struct ttm_exec *exec, void *restart)
{
	exec->in_pass = false;
	return restart;
}

#define TTM_EXEC_PASTE_(a, b) a##b
#define TTM_EXEC_LABEL_(line) TTM_EXEC_PASTE_(ttm_exec_restart_, line)

/**
 * ttm_exec_until_all_locked() - run the following block until it completes
 * one pass without contention.
 * @exec: the helper.
 *
 * A GNU C loop (labels as values, as drm_exec): the block restarts from
 * the top when ttm_exec_retry_on_contention() sees a contention, even from
 * inside a nested loop. `break` leaves it; so does a goto out of it.
 * It may be used again on the same @exec, after a first loop, to lock more
 * buffers: what is held stays held. GCC and Clang accept it in any -std
 * mode; -pedantic warns about it, -pedantic-errors rejects it.
 *
 * Context: May sleep (ttm_exec_next_pass()). The thread of ttm_exec_init()
 * only.
 */
#define ttm_exec_until_all_locked(exec)                                 \
	TTM_EXEC_LABEL_(__LINE__):                                      \
	for (void *ttm_exec_restart_ptr_ = ttm_exec_loop_start_((exec), \
		     __extension__ &&TTM_EXEC_LABEL_(__LINE__));        \
	     (void)ttm_exec_restart_ptr_, ttm_exec_next_pass(exec);)

/**
 * ttm_exec_retry_on_contention() - restart the block of
 * ttm_exec_until_all_locked() if the last lock (or
 * ttm_exec_set_contended()) asked for a back-off.
 * @exec: the helper.
 *
 * Call it right after each lock, before looking at the return value.
 *
 * Context: Does not sleep.
 */
#define ttm_exec_retry_on_contention(exec)                              \
	do {                                                            \
		if (__builtin_expect(ttm_exec_is_contended(exec), 0))   \
			goto *ttm_exec_restart_ptr_;                    \
	} while (0)

/*
 * A job's buffer list: the steps of ttm_execbuf_submit() between the
 * lookup of the handles and the submission, for drivers that write their
 * own submit path on the helper.
 */

/**
 * struct ttm_exec_entry - one entry of a job's buffer list.
 * @bo: the buffer.
 * @placement: where the job needs it, most preferred first; NULL: the
 *	buffer's own (ttm_bo_placement()).
 * @index: the entry's position in the list given to
 *	ttm_exec_entries_fold(), which sets it (to report an entry back in
 *	the caller's terms); unused otherwise.
 * @write: the job writes the buffer (for the job's fence: WRITE usage,
 *	else READ).
 */
struct ttm_exec_entry {
	struct ttm_bo *bo;
	const struct ttm_placement *placement;
	unsigned int index;
	bool write;
};

/**
 * ttm_exec_entries_fold() - fold the entries of a job's list that name
 * one buffer.
 * @entries: the list, reordered in place.
 * @n: its length.
 * @ret_first_dup: NULL, or set to the position, in the list as given, of
 *	the first entry that repeats an earlier one; @n if none does.
 *
 * Duplicates are judged by buffer, not by handle: two handles of one
 * buffer, or an import of a buffer also listed directly, are duplicates.
 * Each buffer's first entry stays, with its placement, and writes if any
 * entry of the buffer writes. Afterwards the first (returned) entries are
 * the distinct buffers in the list's order, each with @index its position
 * in the list as given, and the others are the folded repeats, in the
 * same order, so that a caller who holds a reference per entry still
 * finds each one to put. A driver rejects duplicates (ttm_execbuf_submit()
 * returns -EINVAL naming *@ret_first_dup) or allows them; either way it
 * then locks, validates and fences each buffer once, written if any entry
 * writes it. O(n log n); allocates nothing.
 *
 * Context: Does not sleep. No lock needed: only the pointers are compared.
 * Return: the number of distinct buffers.
 */
unsigned int ttm_exec_entries_fold(struct ttm_exec_entry *entries,
				   unsigned int n,
				   unsigned int *ret_first_dup);

/**
 * ttm_exec_entries_validate() - validate every entry of a job into its
 * placement, moving the job's own buffers out of each other's way.
 * @entries: the job's buffers, each once (ttm_exec_entries_fold()).
 * @n: how many.
 * @ctx: as for ttm_bo_validate(); @ctx->exec is normally the helper that
 *	holds @entries.
 * @ret_failed: NULL, or set on error to the position in @entries of the
 *	entry that could not be validated.
 *
 * ttm_bo_validate() on each entry, in order. Eviction never takes a buffer
 * the caller holds (TTM's rule: it is in use), so when the job's own
 * buffers are what fills a domain an entry needs, ttm_bo_validate() alone
 * returns -ENOSPC for a job that fits (a VRAM-only buffer after
 * VRAM-or-GTT buffers of the same job that took the VRAM). Then the job's
 * other unpinned buffers in that domain whose placement allows another
 * domain move there, one at a time in list order, each move followed by a
 * new try, until the entry fits. With ranges, the job's buffers may also
 * hold enough pages but in the wrong places (no hole of the entry's size
 * between them, or the entry's own range in the way): then, as a last
 * resort, the job's unpinned buffers in that domain, the entry included,
 * go out to SYSTEM and come back, those
 * confined to the narrowest window of the domain first (visible VRAM
 * before anywhere in VRAM), then the largest, packed by first fit (as
 * i915's execbuf evicts its address space and binds again). An entry
 * validated earlier may so end in a less preferred domain of its
 * placement, never outside it. -ENOSPC means that this packing found no
 * room: by bytes the job cannot fit, or its windows and sizes defeat
 * first fit around the pinned buffers (a heuristic, as i915's: an
 * exact packing is a bin-packing problem).
 *
 * Context: May sleep; interruptibly with @ctx->interruptible. Every buffer
 * of @entries reserved by the calling thread (through @ctx->exec if
 * given). Takes and releases the device lock and the reservations of
 * eviction victims. On -EDEADLK, releases every reservation @ctx->exec
 * holds.
 * Return: 0; or the first error, with *@ret_failed set: of
 * ttm_bo_validate() for an entry (-EDEADLK: call
 * ttm_exec_retry_on_contention() next; -ENOSPC: with @ctx->exec, no room
 * for the job beside the pinned buffers, above; -EINVAL: that entry's placement is bad), or of a move out
 * of its way that failed otherwise than for room.
 */
int ttm_exec_entries_validate(const struct ttm_exec_entry *entries,
			      unsigned int n, struct ttm_operation_ctx *ctx,
			      unsigned int *ret_failed);

/*
 * Call-site twins of the calls that take, release or check reservations,
 * as those of ttmsim/ww_mutex.h and ttmsim/bo.h: each does exactly what
 * the function of the same name without "_at" does, and passes @file (the
 * caller's __FILE__, may be NULL) and @line (its __LINE__) down to the
 * reservation and ww_mutex calls it makes, so that a report of the ww
 * debug checker names the caller's line. ttm_exec_until_all_locked()
 * names its own line for the slow lock at the start of a pass. The macros
 * route every call through them; TTMSIM_WW_NO_CALLER_MACROS turns them
 * off. Each takes the parameters of its plain function, then @file and
 * @line; their kernel-doc is that function's.
 */
void ttm_exec_init_at(struct ttm_exec *exec, struct ttm_device *dev,
		      uint32_t flags, const char *file, int line);
void ttm_exec_fini_at(struct ttm_exec *exec, const char *file, int line);
void ttm_exec_done_at(struct ttm_exec *exec, const char *file, int line);
int ttm_exec_lock_bo_at(struct ttm_exec *exec, struct ttm_bo *bo,
			const char *file, int line);
int ttm_exec_prepare_bo_at(struct ttm_exec *exec, struct ttm_bo *bo,
			   unsigned int num_fences, const char *file,
			   int line);
int ttm_exec_prepare_array_at(struct ttm_exec *exec,
			      struct ttm_bo *const *bos, unsigned int n,
			      unsigned int num_fences, const char *file,
			      int line);
void ttm_exec_unlock_bo_at(struct ttm_exec *exec, struct ttm_bo *bo,
			   const char *file, int line);
void ttm_exec_set_contended_at(struct ttm_exec *exec, struct ttm_bo *bo,
			       const char *file, int line);
bool ttm_exec_next_pass_at(struct ttm_exec *exec, const char *file,
			   int line);
int ttm_exec_entries_validate_at(const struct ttm_exec_entry *entries,
				 unsigned int n,
				 struct ttm_operation_ctx *ctx,
				 unsigned int *ret_failed, const char *file,
				 int line);

#ifndef TTMSIM_WW_NO_CALLER_MACROS
#define ttm_exec_init(exec, dev, flags) \
	ttm_exec_init_at(exec, dev, flags, __FILE__, __LINE__)
#define ttm_exec_fini(exec) ttm_exec_fini_at(exec, __FILE__, __LINE__)
#define ttm_exec_done(exec) ttm_exec_done_at(exec, __FILE__, __LINE__)
#define ttm_exec_lock_bo(exec, bo) \
	ttm_exec_lock_bo_at(exec, bo, __FILE__, __LINE__)
#define ttm_exec_prepare_bo(exec, bo, num_fences) \
	ttm_exec_prepare_bo_at(exec, bo, num_fences, __FILE__, __LINE__)
#define ttm_exec_prepare_array(exec, bos, n, num_fences) \
	ttm_exec_prepare_array_at(exec, bos, n, num_fences, __FILE__, \
				  __LINE__)
#define ttm_exec_unlock_bo(exec, bo) \
	ttm_exec_unlock_bo_at(exec, bo, __FILE__, __LINE__)
#define ttm_exec_set_contended(exec, bo) \
	ttm_exec_set_contended_at(exec, bo, __FILE__, __LINE__)
#define ttm_exec_next_pass(exec) \
	ttm_exec_next_pass_at(exec, __FILE__, __LINE__)
#define ttm_exec_entries_validate(entries, n, ctx, ret_failed) \
	ttm_exec_entries_validate_at(entries, n, ctx, ret_failed, __FILE__, \
				     __LINE__)
#endif

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_EXEC_H */
