// SPDX-License-Identifier: MIT
/*
 * ww_mutex fast paths: one compare-and-swap to lock, one to unlock, when
 * nobody waits. Everything else is in lock_slow.c; the debug checker's
 * path is in debug.c. Public functions are defined as (name) so that the
 * caller-site macros of ttmsim/ww_mutex.h do not apply to them.
 */
#include "ttmsim/ww_mutex.h"
#include "util/compiler.h"
#include "ww/debug.h"
#include "ww/inject.h"
#include "ww/lockword.h"
#include "ww/park_batch.h"
#include "ww/slowpath.h"
#include "ww/waitq.h"

TTM_EXPORT void ww_mutex_init(struct ww_mutex *lock, struct ww_class *ww_class)
{
	__atomic_store_n(&lock->owner, 0, __ATOMIC_RELAXED);
	lock->ww_class = ww_class;
}

/*
 * The lock paths never read the class, so it can carry the mark: the
 * checker still names the class of a destroyed mutex.
 */
void ww_raw_destroy(struct ww_mutex *lock)
{
	lock->ww_class = (struct ww_class *)((uintptr_t)lock->ww_class |
					     WW_CLASS_DESTROYED);
}

TTM_EXPORT void ww_mutex_destroy_at(struct ww_mutex *lock, const char *file,
				    int line)
{
	if (ww_debug_active())
		ww_debug_destroy(lock, file, line);
	else
		ww_raw_destroy(lock);
}

TTM_EXPORT void (ww_mutex_destroy)(struct ww_mutex *lock)
{
	ww_mutex_destroy_at(lock, NULL, 0);
}

TTM_EXPORT bool ww_mutex_is_locked(struct ww_mutex *lock)
{
	return ww_token(ww_word_load(lock)) != 0;
}

/*
 * A context that holds nothing cannot have been wounded by anyone still
 * waiting, so a stale wound is forgotten here, as in the kernel. It must
 * happen before the CAS that makes us an owner others can wound.
 */
static inline void forget_stale_wound(struct ww_acquire_ctx *ctx)
{
	if (ctx->acquired == 0 &&
	    __atomic_load_n(&ctx->wounded, __ATOMIC_RELAXED))
		__atomic_store_n(&ctx->wounded, 0, __ATOMIC_RELAXED);
}

/* The owner value a lock attempt by @ctx (or this thread) will write. */
static inline uintptr_t locker_token(struct ww_acquire_ctx *ctx)
{
	if (!ctx)
		return ww_thread_token(ww_thread_self());
	forget_stale_wound(ctx);
	return (uintptr_t)ctx;
}

/* Out of line so that the fast path needs no stack frame. */
static __attribute__((noinline)) int
lock_contended(struct ww_mutex *lock, struct ww_acquire_ctx *ctx,
	       uintptr_t token, uintptr_t word, bool interruptible)
{
	int ret;

	if (ctx && ww_token(word) == token)
		return -EALREADY;

	ret = ww_lock_slowpath(lock, ctx, token, ww_token_thread(token),
			       interruptible);
	if (ctx) {
		if (ret == 0) {
			ctx->acquired++;
		} else if (ret == -EDEADLK) {
			ctx->contending_lock = lock;
			ww_inject_deadlk(ctx);
		}
	}
	return ret;
}

/*
 * A back-off injected by ww_debug_inject() (1 in @n): takes nothing, and
 * exempts @ctx until it completed a pass (include/ww/inject.h), unless
 * every candidate is to back off (@n == 1, single-step tests).
 */
static __attribute__((noinline)) int
lock_injected(struct ww_mutex *lock, struct ww_acquire_ctx *ctx,
	      unsigned int n)
{
	if (ww_token(ww_word_load(lock)) == (uintptr_t)ctx)
		return -EALREADY;
	ctx->contending_lock = lock;
	if (n != 1)
		ctx->inject_exempt = WW_INJECT_BACKOFF;
	return -EDEADLK;
}

static inline int lock_common(struct ww_mutex *lock,
			      struct ww_acquire_ctx *ctx, bool interruptible)
{
	uintptr_t token = locker_token(ctx), word = 0;
	/*
	 * Read once: the exemption test, the draw and lock_injected() all
	 * see the same n, even if ww_debug_inject() changes it meanwhile;
	 * with n == 1 a context left exempt by an earlier n still backs
	 * off, as ww_debug_inject() documents.
	 */
	unsigned int n = ctx ? __atomic_load_n(&ww_inject_every,
					       __ATOMIC_RELAXED) : 0;

	if (unlikely(n) && ctx->acquired > 0 &&
	    (n == 1 || ctx->inject_exempt == WW_INJECT_ARMED) &&
	    ww_inject_draw(n))
		return lock_injected(lock, ctx, n);

	if (likely(ww_word_cas(lock, &word, token))) {
		if (ctx)
			ctx->acquired++;
		return 0;
	}
	return lock_contended(lock, ctx, token, word, interruptible);
}

int ww_raw_lock(struct ww_mutex *lock, struct ww_acquire_ctx *ctx,
		bool interruptible)
{
	return lock_common(lock, ctx, interruptible);
}

/*
 * The public entry points. Each *_at() is the real one; the plain
 * function is for callers that bypass the caller-site macros.
 */
TTM_EXPORT int ww_mutex_lock_at(struct ww_mutex *lock,
				struct ww_acquire_ctx *ctx, const char *file,
				int line)
{
	if (ww_debug_active())
		return ww_debug_lock(lock, ctx, WW_CALL_LOCK, file, line);
	return lock_common(lock, ctx, false);
}

TTM_EXPORT int (ww_mutex_lock)(struct ww_mutex *lock,
			       struct ww_acquire_ctx *ctx)
{
	return ww_mutex_lock_at(lock, ctx, NULL, 0);
}

TTM_EXPORT int ww_mutex_lock_interruptible_at(struct ww_mutex *lock,
					      struct ww_acquire_ctx *ctx,
					      const char *file, int line)
{
	if (ww_debug_active())
		return ww_debug_lock(lock, ctx, WW_CALL_LOCK_INTERRUPTIBLE,
				     file, line);
	return lock_common(lock, ctx, true);
}

TTM_EXPORT int (ww_mutex_lock_interruptible)(struct ww_mutex *lock,
					     struct ww_acquire_ctx *ctx)
{
	return ww_mutex_lock_interruptible_at(lock, ctx, NULL, 0);
}

/* With nothing held, ww_mutex_lock() can only wait: never -EDEADLK. */
TTM_EXPORT void ww_mutex_lock_slow_at(struct ww_mutex *lock,
				      struct ww_acquire_ctx *ctx,
				      const char *file, int line)
{
	if (ww_debug_active())
		ww_debug_lock(lock, ctx, WW_CALL_LOCK_SLOW, file, line);
	else
		lock_common(lock, ctx, false);
}

TTM_EXPORT void (ww_mutex_lock_slow)(struct ww_mutex *lock,
				     struct ww_acquire_ctx *ctx)
{
	ww_mutex_lock_slow_at(lock, ctx, NULL, 0);
}

TTM_EXPORT int ww_mutex_lock_slow_interruptible_at(struct ww_mutex *lock,
						   struct ww_acquire_ctx *ctx,
						   const char *file, int line)
{
	if (ww_debug_active())
		return ww_debug_lock(lock, ctx,
				     WW_CALL_LOCK_SLOW_INTERRUPTIBLE, file,
				     line);
	return lock_common(lock, ctx, true);
}

TTM_EXPORT int (ww_mutex_lock_slow_interruptible)(struct ww_mutex *lock,
						  struct ww_acquire_ctx *ctx)
{
	return ww_mutex_lock_slow_interruptible_at(lock, ctx, NULL, 0);
}

static inline int trylock_common(struct ww_mutex *lock,
				 struct ww_acquire_ctx *ctx)
{
	uintptr_t token = locker_token(ctx), word = 0;

	if (!ww_word_cas(lock, &word, token)) {
		/* Free but with waiters queued: may be stolen, as in the kernel. */
		if (word != WW_WAITERS || !ww_trylock_slowpath(lock, ctx, token))
			return 0;
	}
	if (ctx)
		ctx->acquired++;
	return 1;
}

int ww_raw_trylock(struct ww_mutex *lock, struct ww_acquire_ctx *ctx)
{
	return trylock_common(lock, ctx);
}

TTM_EXPORT int ww_mutex_trylock_at(struct ww_mutex *lock,
				   struct ww_acquire_ctx *ctx,
				   const char *file, int line)
{
	if (ww_debug_active())
		return ww_debug_trylock(lock, ctx, file, line);
	return trylock_common(lock, ctx);
}

TTM_EXPORT int (ww_mutex_trylock)(struct ww_mutex *lock,
				  struct ww_acquire_ctx *ctx)
{
	return ww_mutex_trylock_at(lock, ctx, NULL, 0);
}

/* @ctx let go of one lock; the last one ends a back-off or a pass. */
static inline void ctx_released(struct ww_acquire_ctx *ctx)
{
	if (--ctx->acquired == 0) {
		if (unlikely(ctx->inject_exempt))
			ww_inject_released_all(ctx);
		/* Holding nothing: a preemption costs nobody a wait. */
		ww_park_batch_released(ctx->task);
	}
}

/*
 * After an unlock of @ctx's (ours): a transaction whose unlocks woke
 * waiters yields once it holds nothing (ww/park_batch.c says why).
 */
static inline void yield_if_woke(struct ww_acquire_ctx *ctx, bool woke)
{
	struct ww_thread *self = ctx->task;

	/* NULL: a ticket never initialised (test_zeroed_ticket). */
	if (!self || likely(!woke && !self->woke) ||
	    self != ww_thread_current || self->shared)
		return;
	if (ctx->acquired > 0)
		self->woke = true;
	else
		ww_park_batch_yield(self);
}

static inline void unlock_common(struct ww_mutex *lock)
{
	uintptr_t token = ww_token(ww_word_load(lock));
	struct ww_acquire_ctx *ctx = ww_token_ctx(token);
	bool woke;

	/*
	 * Acquire as well as release: waiters may have read our context
	 * (under the bucket, before a flag was cleared); their reads must
	 * happen before we reuse it. Free on x86, where every CAS is a full
	 * barrier.
	 */
	if (likely(__atomic_compare_exchange_n(&lock->owner, &token, 0, false,
					       __ATOMIC_ACQ_REL,
					       __ATOMIC_RELAXED))) {
		if (ctx) {
			ctx_released(ctx);
			yield_if_woke(ctx, false);
		}
		return;
	}
	if (ctx)
		ctx_released(ctx);
	woke = ww_unlock_slowpath(lock);
	if (ctx)
		yield_if_woke(ctx, woke);
}

void ww_raw_unlock(struct ww_mutex *lock)
{
	unlock_common(lock);
}

TTM_EXPORT void ww_mutex_unlock_at(struct ww_mutex *lock, const char *file,
				   int line)
{
	if (ww_debug_active())
		ww_debug_unlock(lock, file, line);
	else
		unlock_common(lock);
}

TTM_EXPORT void (ww_mutex_unlock)(struct ww_mutex *lock)
{
	ww_mutex_unlock_at(lock, NULL, 0);
}

TTM_EXPORT struct ww_acquire_ctx *ww_mutex_owner_ctx(struct ww_mutex *lock)
{
	return ww_token_ctx(ww_token(ww_word_load(lock)));
}

TTM_EXPORT pid_t ww_mutex_owner_tid(struct ww_mutex *lock)
{
	struct ww_bucket *b = ww_bucket_of(lock);
	uintptr_t word;
	pid_t tid = 0;

	ww_bucket_lock(b);
	word = ww_word_load(lock);
	/* WW_WAITERS pins a context owner until we let go of the bucket. */
	while (ww_token(word) && !(word & WW_WAITERS) &&
	       !ww_word_cas(lock, &word, word | WW_WAITERS))
		;
	if (ww_token(word))
		tid = ww_token_thread(ww_token(word))->tid;
	ww_bucket_unlock(b);
	return tid;
}

TTM_EXPORT unsigned int ww_mutex_waiter_count(struct ww_mutex *lock)
{
	struct ww_bucket *b = ww_bucket_of(lock);
	unsigned int n;

	ww_bucket_lock(b);
	n = ww_waitq_count(b, lock);
	ww_bucket_unlock(b);
	return n;
}
