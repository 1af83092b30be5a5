// SPDX-License-Identifier: MIT
/*
 * The locking helper (ttmsim/exec.h): a list of reserved buffers under
 * one ticket, and the back-off protocol of the ww_mutex API around it.
 *
 * States: between passes at most one buffer is "contended" (held by a
 * reference, not locked); every pass starts by slow-locking it, after
 * which it is "prelocked" until the body asks for it. A contention
 * unlocks everything at once, so a pass never starts with anything held
 * but the buffers of an earlier, finished loop on the same helper.
 *
 * The list (@bos) holds the body's buffers only. A buffer slow-locked
 * for an eviction's back-off is "evictable" and kept beside the list
 * until the body locks it, or a buffer sharing its reservation: callers
 * add the job's fence to every listed buffer (the kernel's idiom), and
 * nobody reserved a slot in that one.
 *
 * Every call is its *_at() twin, which passes the caller's file:line
 * down to each reservation it takes or releases, so that a report of the
 * ww debug checker names the driver's line; the plain functions, defined
 * as (name) out of reach of the macros of ttmsim/exec.h, name none.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bo/bo.h"
#include "ttmsim/exec.h"
#include "util/compiler.h"

TTM_EXPORT void ttm_exec_init_at(struct ttm_exec *exec,
				 struct ttm_device *dev, uint32_t flags,
				 const char *file, int line)
{
	exec->flags = flags;
	exec->num_bos = 0;
	/* Most jobs fit in the struct itself: no allocation per job. */
	exec->max_bos = TTM_EXEC_INLINE_BOS;
	exec->bos = exec->inline_bos;
	exec->contended = NULL;
	exec->contended_evictable = false;
	exec->prelocked = NULL;
	exec->evictable = NULL;
	exec->error = 0;
	exec->in_pass = false;
	ww_acquire_init_at(&exec->ticket, ttm_device_ww_class(dev), file,
			   line);
}

TTM_EXPORT void (ttm_exec_init)(struct ttm_exec *exec, struct ttm_device *dev,
				uint32_t flags)
{
	ttm_exec_init_at(exec, dev, flags, NULL, 0);
}

/*
 * Whether @exec holds a reference on the buffers it lists: not with
 * TTM_EXEC_CALLER_REFS, where the caller's own outlives the listing. A
 * contended or evictable buffer always has one of @exec's: an eviction
 * victim is nobody's, and a contended buffer's one is simplest kept.
 */
static bool exec_refs(const struct ttm_exec *exec)
{
	return !(exec->flags & TTM_EXEC_CALLER_REFS);
}

/* Drop @exec's reference on a buffer entering its list, if it keeps none. */
static void exec_list_ref(struct ttm_exec *exec, struct ttm_bo *bo)
{
	/* Not the last one: the caller holds its own. */
	if (!exec_refs(exec))
		ttm_bo_put(bo);
}

/*
 * Unlock one buffer and drop @exec's reference if @put. @used: it served
 * the caller's work, so it moves to its LRU's tail; a back-off used
 * nothing, and an evictable buffer was never the caller's.
 */
static void exec_unlock(struct ttm_bo *bo, bool used, bool put,
			const char *file, int line)
{
	if (used)
		ttm_bo_unreserve_at(bo, file, line);
	else {
		ww_mutex_unlock_at(&ttm_bo_resv(bo)->lock, file, line);
		bo_room_notify(bo->dev);
	}
	/* After the unlock: the last reference may go here. */
	if (put)
		ttm_bo_put(bo);
}

/*
 * Unlock every buffer, newest first: the evictable one was locked first.
 * Used buffers go to their LRU tails in one device lock round trip
 * (bo_unreserve_list_at()), in the order single unreserves would give.
 */
static void exec_unlock_all(struct ttm_exec *exec, bool used,
			    const char *file, int line)
{
	struct ttm_bo *evictable = exec->evictable;
	unsigned int n = exec->num_bos;

	if (used) {
		bo_unreserve_list_at(exec->bos, n, file, line);
		/* After every unlock: the last references may go here. */
		while (exec_refs(exec) && exec->num_bos)
			ttm_bo_put(exec->bos[--exec->num_bos]);
		exec->num_bos = 0;
	} else {
		while (exec->num_bos)
			exec_unlock(exec->bos[--exec->num_bos], false,
				    exec_refs(exec), file, line);
	}
	exec->prelocked = NULL;
	exec->evictable = NULL;
	if (evictable)
		exec_unlock(evictable, false, true, file, line);
}

/* Remember @bo for the next pass, dropping everything held now. */
static void exec_contend(struct ttm_exec *exec, struct ttm_bo *bo,
			 bool evictable, const char *file, int line)
{
	exec_unlock_all(exec, false, file, line);
	ttm_bo_get(bo);
	/* Two back-offs in a row: only the latest -EDEADLK counts. */
	ttm_bo_put(exec->contended);
	exec->contended = bo;
	exec->contended_evictable = evictable;
}

/* Make room for one more buffer before locking it: no unlock on -ENOMEM. */
static int exec_reserve_slot(struct ttm_exec *exec)
{
	unsigned int max = exec->max_bos * 2;
	struct ttm_bo **bos;

	if (exec->num_bos < exec->max_bos)
		return 0;
	if (max < exec->max_bos)
		return -ENOMEM;
	if (exec->bos == exec->inline_bos) {
		bos = malloc(max * sizeof(*bos));
		if (bos)
			memcpy(bos, exec->inline_bos,
			       sizeof(exec->inline_bos));
	} else {
		bos = realloc(exec->bos, max * sizeof(*bos));
	}
	if (!bos)
		return -ENOMEM;
	exec->bos = bos;
	exec->max_bos = max;
	return 0;
}

static void exec_track(struct ttm_exec *exec, struct ttm_bo *bo)
{
	exec->bos[exec->num_bos++] = exec_refs(exec) ? ttm_bo_get(bo) : bo;
}

/*
 * Start a pass: sleep on the contended buffer first, holding nothing. Its
 * reference passes to the list, or to @evictable, which is not listed and
 * so needs no room on the list yet.
 */
static void exec_lock_contended(struct ttm_exec *exec, const char *file,
				int line)
{
	struct ttm_bo *bo = exec->contended;
	bool evictable = exec->contended_evictable;
	int ret = 0;

	exec->contended = NULL;
	if (!evictable)
		ret = exec_reserve_slot(exec);
	if (!ret)
		ret = ttm_bo_reserve_slowpath_at(bo,
				exec->flags & TTM_EXEC_INTERRUPTIBLE,
				&exec->ticket, file, line);
	if (ret) {
		/* Kept for the body's next lock call, which reports it. */
		exec->error = ret;
		ttm_bo_put(bo);
		return;
	}
	exec->prelocked = bo;
	if (evictable) {
		exec->evictable = bo;
	} else {
		exec->bos[exec->num_bos++] = bo;
		exec_list_ref(exec, bo);
	}
}

/*
 * The body locks the prelocked buffer: it is held already. An evictable
 * one becomes the body's: listed from now on, out of eviction's reach.
 */
static int exec_claim_prelocked(struct ttm_exec *exec, struct ttm_bo *bo)
{
	int ret;

	if (bo == exec->evictable) {
		/* On -ENOMEM it stays evictable, and held until fini. */
		ret = exec_reserve_slot(exec);
		if (ret)
			return ret;
		exec->bos[exec->num_bos++] = bo;
		exec->evictable = NULL;
		/* The body asked for it: the caller holds it now. */
		exec_list_ref(exec, bo);
	}
	exec->prelocked = NULL;
	return 0;
}

/*
 * @bo's reservation is held already (-EALREADY from the reserve). If it
 * is held for the evictable buffer, another buffer sharing it, the body
 * never asked for that reservation: without this, nothing lists it, the
 * job's fence never reaches it and fini unlocks it without the LRU bump.
 * The lock passes to @bo, listed like any buffer the body locks; the
 * evictable buffer is dropped, so eviction no longer takes it, and a
 * later lock of it counts as a duplicate, as for any other pair of
 * buffers sharing one reservation. The room on the list was made before
 * the reserve. A reservation held for a listed buffer, prelocked or not,
 * is a duplicate: the job's fence reaches it through that buffer.
 */
static bool exec_claim_shared(struct ttm_exec *exec, struct ttm_bo *bo)
{
	struct ttm_bo *evictable = exec->evictable;

	if (!evictable || ttm_bo_resv(evictable) != ttm_bo_resv(bo))
		return false;
	exec_track(exec, bo);
	if (exec->prelocked == evictable)
		exec->prelocked = NULL;
	exec->evictable = NULL;
	/* Still locked, now for @bo: drop the reference only. */
	ttm_bo_put(evictable);
	return true;
}

TTM_EXPORT bool ttm_exec_next_pass_at(struct ttm_exec *exec,
				      const char *file, int line)
{
	if (exec->contended) {
		exec->error = 0;
		exec_lock_contended(exec, file, line);
	} else if (exec->in_pass) {
		/* The body ran to its end without contention. */
		exec->in_pass = false;
		return false;
	}
	exec->in_pass = true;
	return true;
}

TTM_EXPORT bool (ttm_exec_next_pass)(struct ttm_exec *exec)
{
	return ttm_exec_next_pass_at(exec, NULL, 0);
}

TTM_EXPORT int ttm_exec_lock_bo_at(struct ttm_exec *exec, struct ttm_bo *bo,
				   const char *file, int line)
{
	int ret;

	if (exec->error)
		return exec->error;
	/* Locking on without the back-off would break the ww rules. */
	if (exec->contended)
		return -EDEADLK;
	if (bo == exec->prelocked)
		return exec_claim_prelocked(exec, bo);

	ret = exec_reserve_slot(exec);
	if (ret)
		return ret;
	ret = ttm_bo_reserve_at(bo, exec->flags & TTM_EXEC_INTERRUPTIBLE,
				false, &exec->ticket, file, line);
	switch (ret) {
	case 0:
		exec_track(exec, bo);
		return 0;
	case -EDEADLK:
		exec_contend(exec, bo, false, file, line);
		return -EDEADLK;
	case -EALREADY:
		if (exec_claim_shared(exec, bo))
			return 0;
		if (exec->flags & TTM_EXEC_IGNORE_DUPLICATES)
			return 0;
		return -EALREADY;
	default:
		return ret;
	}
}

TTM_EXPORT int (ttm_exec_lock_bo)(struct ttm_exec *exec, struct ttm_bo *bo)
{
	return ttm_exec_lock_bo_at(exec, bo, NULL, 0);
}

TTM_EXPORT int ttm_exec_prepare_bo_at(struct ttm_exec *exec,
				      struct ttm_bo *bo,
				      unsigned int num_fences,
				      const char *file, int line)
{
	int ret = ttm_exec_lock_bo_at(exec, bo, file, line);

	if (ret)
		return ret;
	/* Just locked: its check of the reservation cannot report. */
	return ttm_resv_reserve_fences(ttm_bo_resv(bo), num_fences);
}

TTM_EXPORT int (ttm_exec_prepare_bo)(struct ttm_exec *exec, struct ttm_bo *bo,
				     unsigned int num_fences)
{
	return ttm_exec_prepare_bo_at(exec, bo, num_fences, NULL, 0);
}

TTM_EXPORT int ttm_exec_prepare_array_at(struct ttm_exec *exec,
					 struct ttm_bo *const *bos,
					 unsigned int n,
					 unsigned int num_fences,
					 const char *file, int line)
{
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = ttm_exec_prepare_bo_at(exec, bos[i], num_fences, file,
					     line);
		if (ret)
			return ret;
	}
	return 0;
}

TTM_EXPORT int (ttm_exec_prepare_array)(struct ttm_exec *exec,
					struct ttm_bo *const *bos,
					unsigned int n, unsigned int num_fences)
{
	return ttm_exec_prepare_array_at(exec, bos, n, num_fences, NULL, 0);
}

TTM_EXPORT void ttm_exec_unlock_bo_at(struct ttm_exec *exec,
				      struct ttm_bo *bo, const char *file,
				      int line)
{
	unsigned int i;

	if (!bo)
		return;
	if (bo == exec->prelocked)
		exec->prelocked = NULL;
	if (bo == exec->evictable) {
		exec->evictable = NULL;
		exec_unlock(bo, false, true, file, line);
		return;
	}
	/* Newest first: a buffer just locked is the likely one. */
	for (i = exec->num_bos; i-- > 0;) {
		if (exec->bos[i] != bo)
			continue;
		exec->num_bos--;
		memmove(&exec->bos[i], &exec->bos[i + 1],
			(exec->num_bos - i) * sizeof(*exec->bos));
		exec_unlock(bo, true, exec_refs(exec), file, line);
		return;
	}
}

TTM_EXPORT void (ttm_exec_unlock_bo)(struct ttm_exec *exec, struct ttm_bo *bo)
{
	ttm_exec_unlock_bo_at(exec, bo, NULL, 0);
}

TTM_EXPORT void ttm_exec_set_contended_at(struct ttm_exec *exec,
					  struct ttm_bo *bo, const char *file,
					  int line)
{
	exec_contend(exec, bo, true, file, line);
}

TTM_EXPORT void (ttm_exec_set_contended)(struct ttm_exec *exec,
					 struct ttm_bo *bo)
{
	ttm_exec_set_contended_at(exec, bo, NULL, 0);
}

TTM_EXPORT bool ttm_exec_is_evictable(const struct ttm_exec *exec,
				      const struct ttm_bo *bo)
{
	return bo && bo == exec->evictable;
}

TTM_EXPORT int ttm_exec_error(const struct ttm_exec *exec)
{
	return exec->error;
}

TTM_EXPORT struct ww_acquire_ctx *ttm_exec_ticket(struct ttm_exec *exec)
{
	return &exec->ticket;
}

TTM_EXPORT unsigned int ttm_exec_count(const struct ttm_exec *exec)
{
	return exec->num_bos;
}

TTM_EXPORT struct ttm_bo *ttm_exec_locked_bo(const struct ttm_exec *exec,
					     unsigned int index)
{
	return index < exec->num_bos ? exec->bos[index] : NULL;
}

TTM_EXPORT struct ttm_bo *ttm_exec_evictable_bo(const struct ttm_exec *exec,
					        unsigned int index)
{
	return index == 0 ? exec->evictable : NULL;
}

TTM_EXPORT void ttm_exec_done_at(struct ttm_exec *exec, const char *file,
				 int line)
{
	ww_acquire_done_at(&exec->ticket, file, line);
}

TTM_EXPORT void (ttm_exec_done)(struct ttm_exec *exec)
{
	ttm_exec_done_at(exec, NULL, 0);
}

TTM_EXPORT void ttm_exec_fini_at(struct ttm_exec *exec, const char *file,
				 int line)
{
	exec_unlock_all(exec, true, file, line);
	ttm_bo_put(exec->contended);
	exec->contended = NULL;
	if (exec->bos != exec->inline_bos)
		free(exec->bos);
	exec->bos = exec->inline_bos;
	exec->max_bos = TTM_EXEC_INLINE_BOS;
	ww_acquire_fini_at(&exec->ticket, file, line);
}

TTM_EXPORT void (ttm_exec_fini)(struct ttm_exec *exec)
{
	ttm_exec_fini_at(exec, NULL, 0);
}
