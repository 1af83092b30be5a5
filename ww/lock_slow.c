// SPDX-License-Identifier: MIT
/*
 * The ww_mutex slow paths: deciding between waiting and backing off
 * (Wait-Die or Wound-Wait), spinning on a running owner, queueing, sleeping,
 * and handing the lock over on unlock. docs/ww-design.md explains why this
 * cannot deadlock, livelock or lose a wake-up.
 *
 * Every decision is taken with the lock's bucket locked and WW_WAITERS set
 * in the lock word: the flag forces the owner's unlock through the bucket,
 * so the owner's context cannot go away while we read its stamp.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/compiler.h"
#include "util/time.h"
#include "ww/lockword.h"
#include "ww/park_batch.h"
#include "ww/slowpath.h"
#include "ww/spin.h"
#include "ww/waitq.h"

/* How long a waiter spins on a running owner before it sleeps. */
static uint64_t ww_spin_ns = 20000;

/* Longer, a waiter would burn a CPU for what a sleep does better. */
#define WW_SPIN_NS_MAX 1000000000ull

/*
 * TTMSIM_WW_SPIN_NS=N, in decimal nanoseconds, 0 (never spin) to 1 s.
 * Anything else is ignored with one line on stderr, as TTMSIM_WW_INJECT
 * and TTMSIM_WW_DEBUG are: a typo must not silently turn spinning off.
 */
__attribute__((constructor)) static void read_spin_env(void)
{
	const char *s = getenv("TTMSIM_WW_SPIN_NS");
	unsigned long long n;
	char *end;

	if (!s || !*s)
		return;
	errno = 0;
	n = strtoull(s, &end, 10);
	/* strtoull() takes a sign and blanks first: digits only here. */
	if (*s >= '0' && *s <= '9' && *end == '\0' && !errno &&
	    n <= WW_SPIN_NS_MAX) {
		ww_spin_ns = n;
		return;
	}
	fprintf(stderr, "ttmsim: TTMSIM_WW_SPIN_NS='%s' ignored: expected "
		"nanoseconds from 0 to %llu\n", s, WW_SPIN_NS_MAX);
}

static void wound(struct ww_acquire_ctx *victim)
{
	__atomic_store_n(&victim->wounded, 1, __ATOMIC_RELEASE);
	ww_thread_wake(victim->task);
}

/*
 * Wait-Die: @ctx takes or waits for @lock, so younger waiters that hold
 * locks must die rather than wait behind it. Wake them to notice.
 */
static void wake_younger_to_die(struct ww_bucket *b, struct ww_mutex *lock,
				struct ww_acquire_ctx *ctx)
{
	struct ww_waiter *cur;

	for (cur = ww_waitq_first(b, lock); cur; cur = ww_waitq_next(b, cur)) {
		if (cur->ctx && cur->ctx != ctx && cur->ctx->acquired > 0 &&
		    ww_ctx_younger(cur->ctx, ctx))
			ww_thread_wake(cur->thread);
	}
}

/* Is an older context queued on @lock (other than @ctx itself)? */
static struct ww_acquire_ctx *older_waiter(struct ww_bucket *b,
					   struct ww_mutex *lock,
					   struct ww_acquire_ctx *ctx,
					   bool holding_only)
{
	struct ww_waiter *cur;

	for (cur = ww_waitq_first(b, lock); cur; cur = ww_waitq_next(b, cur)) {
		if (cur->ctx && cur->ctx != ctx &&
		    ww_ctx_younger(ctx, cur->ctx) &&
		    (!holding_only || cur->ctx->acquired > 0))
			return cur->ctx;
	}
	return NULL;
}

/*
 * @ctx just took @lock while others were queued on it (a steal, or a woken
 * waiter winning). Wait-Die: younger waiters holding locks must now die.
 * Wound-Wait: an older waiter holding locks wounds us, as it would have
 * had it queued after we took the lock.
 */
static void after_contended_acquire(struct ww_bucket *b, struct ww_mutex *lock,
				    struct ww_acquire_ctx *ctx)
{
	if (!ctx)
		return;
	if (ctx->is_wait_die)
		wake_younger_to_die(b, lock, ctx);
	else if (older_waiter(b, lock, ctx, true))
		__atomic_store_n(&ctx->wounded, 1, __ATOMIC_RELAXED);
}

/*
 * @ctx must wait for @lock, held by @holder (a token; WW_WAITERS is set so
 * its context is safe to look at). Return -EDEADLK if it must back off
 * instead; otherwise do to the others what a new waiter owes them. Both
 * actions are idempotent and are redone at every judgement: the holder may
 * have unlocked and relocked in between (same token, wound forgotten).
 */
static int judge(struct ww_bucket *b, struct ww_mutex *lock,
		 struct ww_acquire_ctx *ctx, uintptr_t holder)
{
	struct ww_acquire_ctx *hold_ctx = ww_token_ctx(holder);

	if (ctx->is_wait_die) {
		/*
		 * Even holding nothing we make younger lock holders queued
		 * behind us die: they would otherwise wait behind an older
		 * context, the one thing Wait-Die forbids.
		 */
		if (ctx->acquired > 0) {
			if (hold_ctx && ww_ctx_younger(ctx, hold_ctx))
				return -EDEADLK;
			if (older_waiter(b, lock, ctx, false))
				return -EDEADLK;
		}
		wake_younger_to_die(b, lock, ctx);
	} else {
		if (ctx->acquired == 0)
			return 0; /* holds nothing: wounds nobody, never dies */
		if (__atomic_load_n(&ctx->wounded, __ATOMIC_ACQUIRE))
			return -EDEADLK;
		if (hold_ctx && ww_ctx_younger(hold_ctx, ctx) &&
		    !__atomic_load_n(&hold_ctx->wounded, __ATOMIC_ACQUIRE))
			wound(hold_ctx);
	}
	return 0;
}

/*
 * Spin while @holder keeps @lock and runs, for at most our thread's budget
 * (ww/spin.h): most critical sections are shorter than a sleep and
 * wake-up. An owner that sleeps, or is itself waiting for a ww lock, will
 * not unlock soon: spinning on it only takes a CPU from whoever it waits
 * for. Called without the bucket lock; @holder_thread is type-stable, so
 * peeking at its flags is safe even if it has since unlocked. Return
 * WW_SPIN_TOOK if we took the lock (free and without waiters, so no ww
 * bookkeeping is due).
 */
static enum ww_spin_outcome
spin_on_owner(struct ww_mutex *lock, uintptr_t token, uintptr_t holder,
	      struct ww_thread *holder_thread, struct ww_acquire_ctx *ctx,
	      struct ww_thread *self, bool interruptible)
{
	uint64_t deadline = 0;
	unsigned int i;

	for (i = 0;; i++) {
		uintptr_t word = ww_word_load(lock);

		if (word == 0) {
			if (ww_word_cas(lock, &word, token))
				return WW_SPIN_TOOK;
			continue;
		}
		if (ww_token(word) != holder ||
		    __atomic_load_n(&holder_thread->parked, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&holder_thread->waiting, __ATOMIC_RELAXED))
			return WW_SPIN_STOPPED;
		if (ctx && __atomic_load_n(&ctx->wounded, __ATOMIC_RELAXED))
			return WW_SPIN_STOPPED;
		if (interruptible &&
		    __atomic_load_n(&self->interrupt, __ATOMIC_RELAXED))
			return WW_SPIN_STOPPED;
		if ((i & 63) == 0) {
			uint64_t now = mono_ns();

			if (!deadline)
				deadline = now + ww_spin_budget(self,
								ww_spin_ns);
			else if (now >= deadline)
				return WW_SPIN_TIMEOUT;
		}
		cpu_relax();
	}
}

/*
 * Called after a waiter left the queue without the lock. Clear the flags
 * if nobody is left; if the lock is free, the waiter may have been the one
 * woken to take it, so pass the wake-up on. Return the thread to wake.
 */
static struct ww_thread *settle_after_leave(struct ww_bucket *b,
					    struct ww_mutex *lock)
{
	struct ww_waiter *first = ww_waitq_first(b, lock);
	uintptr_t word = ww_word_load(lock);

	if (!first) {
		while (word & WW_FLAGS) {
			if (ww_word_cas(lock, &word, ww_token(word)))
				break;
		}
		return NULL;
	}
	if (ww_token(word) == 0) {
		ww_thread_wake_prepare(first->thread);
		return first->thread;
	}
	return NULL;
}

int ww_lock_slowpath(struct ww_mutex *lock, struct ww_acquire_ctx *ctx,
		     uintptr_t token, struct ww_thread *self, bool interruptible)
{
	struct ww_bucket *b = ww_bucket_of(lock);
	struct ww_waiter me = {
		.lock = lock, .ctx = ctx, .thread = self, .token = token,
	};
	struct ww_thread *wake = NULL;
	bool queued = false, slept = false, spun = ww_spin_ns == 0;
	int ret;

	/* Until we return: spinners on what we hold stop (spin_on_owner()). */
	__atomic_store_n(&self->waiting, 1, __ATOMIC_RELAXED);
	ww_bucket_lock(b);
	for (;;) {
		/* Before any check: a wake-up after this point is not lost. */
		uint32_t seq = ww_thread_seq(self);
		uintptr_t word, holder;

		if (me.granted) {
			ret = 0; /* handed over by the unlocker, dequeued */
			break;
		}
		word = ww_word_load(lock);
		holder = ww_token(word);
		if (holder == 0) {
			uintptr_t more;

			if (queued)
				ww_waitq_remove(&me);
			queued = false;
			more = ww_waitq_first(b, lock) ? WW_WAITERS : 0;
			if (!ww_word_cas(lock, &word, token | more))
				continue;
			if (word & WW_WAITERS)
				after_contended_acquire(b, lock, ctx);
			ret = 0;
			break;
		}
		if (interruptible && ww_thread_take_interrupt(self)) {
			ret = -EINTR;
			break;
		}
		if (!(word & WW_WAITERS)) {
			if (!ww_word_cas(lock, &word, word | WW_WAITERS))
				continue;
			word |= WW_WAITERS;
		}
		if (ctx) {
			ret = judge(b, lock, ctx, holder);
			if (ret)
				break;
		}
		if (!queued && !spun) {
			struct ww_thread *holder_thread = ww_token_thread(holder);
			enum ww_spin_outcome spin;

			spun = true;
			ww_bucket_unlock(b);
			spin = spin_on_owner(lock, token, holder, holder_thread,
					     ctx, self, interruptible);
			ww_spin_adapt(self, spin);
			if (spin == WW_SPIN_TOOK) {
				__atomic_store_n(&self->waiting, 0,
						 __ATOMIC_RELAXED);
				return 0;
			}
			ww_bucket_lock(b);
			continue;
		}
		if (!queued) {
			ww_waitq_add(b, &me);
			queued = true;
		} else if (slept && !(word & WW_HANDOFF) &&
			   ww_waitq_first(b, lock) == &me) {
			/* Woken but beaten to it: the next unlock is ours. */
			if (!ww_word_cas(lock, &word, word | WW_HANDOFF))
				continue;
		}
		ww_bucket_unlock(b);
		/* Our wake-up must not preempt a lock holder: ww/park_batch.c. */
		if (ctx)
			ww_park_batch_begin(self);
		ww_thread_park(self, seq, NULL);
		slept = true;
		if (ttmsim_test_ww_woken)
			ttmsim_test_ww_woken(lock);
		ww_bucket_lock(b);
	}
	if (ret && queued) {
		ww_waitq_remove(&me);
		wake = settle_after_leave(b, lock);
	}
	ww_bucket_unlock(b);
	__atomic_store_n(&self->waiting, 0, __ATOMIC_RELAXED);
	if (wake)
		ww_thread_wake_commit(wake);
	/* Interrupted holding nothing: the transaction may never lock again. */
	if (ret && self->batch && ctx && ctx->acquired == 0)
		ww_park_batch_end(self);
	return ret;
}

bool ww_unlock_slowpath(struct ww_mutex *lock)
{
	struct ww_bucket *b = ww_bucket_of(lock);
	struct ww_thread *wake = NULL;
	struct ww_waiter *first;

	ww_bucket_lock(b);
	first = ww_waitq_first(b, lock);
	if (!first) {
		ww_word_store(lock, 0);
	} else if (ww_word_load(lock) & WW_HANDOFF) {
		ww_waitq_remove(first);
		first->granted = true;
		ww_word_store(lock, first->token |
			      (ww_waitq_first(b, lock) ? WW_WAITERS : 0));
		wake = first->thread;
	} else {
		ww_word_store(lock, WW_WAITERS);
		wake = first->thread;
	}
	if (wake)
		ww_thread_wake_prepare(wake);
	ww_bucket_unlock(b);
	/* After the bucket: the woken thread need not wait for it. */
	if (wake)
		ww_thread_wake_commit(wake);
	return wake != NULL;
}

bool ww_trylock_slowpath(struct ww_mutex *lock, struct ww_acquire_ctx *ctx,
			 uintptr_t token)
{
	struct ww_bucket *b = ww_bucket_of(lock);
	uintptr_t word;
	bool taken = false;

	ww_bucket_lock(b);
	word = ww_word_load(lock);
	if (word == WW_WAITERS && ww_word_cas(lock, &word, token | WW_WAITERS)) {
		after_contended_acquire(b, lock, ctx);
		taken = true;
	}
	ww_bucket_unlock(b);
	return taken;
}
