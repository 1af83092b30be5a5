/* SPDX-License-Identifier: MIT */
/*
 * The ww_mutex lock word (struct ww_mutex::owner); docs/ww-design.md has
 * the state diagram.
 *
 *   bits 63..3  owner: a struct ww_acquire_ctx *, or, with WW_NOCTX, the
 *               struct ww_thread * of a thread that locked without a ctx
 *   bit 2       WW_NOCTX   owner is a thread, not a context
 *   bit 1       WW_HANDOFF the next unlock hands the lock to the first waiter
 *   bit 0       WW_WAITERS threads may be queued; unlock takes the slow path
 *
 * The owner part plus WW_NOCTX is the "token" of a locker; 0 means free.
 * Only two transitions happen without the bucket lock: 0 -> token (fast
 * lock) and token -> 0 (fast unlock); both fail if a flag is set, so a flag
 * forces both sides through the bucket where the waiters are.
 */
#ifndef TTMSIM_WW_LOCKWORD_H
#define TTMSIM_WW_LOCKWORD_H

#include <stdbool.h>
#include <stdint.h>

#include "ttmsim/ww_mutex.h"
#include "ww/thread.h"

#define WW_WAITERS ((uintptr_t)1)
#define WW_HANDOFF ((uintptr_t)2)
#define WW_NOCTX ((uintptr_t)4)
#define WW_FLAGS (WW_WAITERS | WW_HANDOFF)

static inline uintptr_t ww_word_load(const struct ww_mutex *lock)
{
	return __atomic_load_n(&lock->owner, __ATOMIC_RELAXED);
}

/* Acquire on success for lock, release for whatever we publish. */
static inline bool ww_word_cas(struct ww_mutex *lock, uintptr_t *expected,
			       uintptr_t desired)
{
	return __atomic_compare_exchange_n(&lock->owner, expected, desired,
					   false, __ATOMIC_ACQ_REL,
					   __ATOMIC_RELAXED);
}

static inline void ww_word_store(struct ww_mutex *lock, uintptr_t word)
{
	__atomic_store_n(&lock->owner, word, __ATOMIC_RELEASE);
}

static inline uintptr_t ww_token(uintptr_t word)
{
	return word & ~WW_FLAGS;
}

static inline uintptr_t ww_thread_token(struct ww_thread *t)
{
	return (uintptr_t)t | WW_NOCTX;
}

static inline struct ww_acquire_ctx *ww_token_ctx(uintptr_t token)
{
	return (token & WW_NOCTX) ? NULL : (struct ww_acquire_ctx *)token;
}

/*
 * The thread behind a token. For a context this dereferences it: only
 * safe while the owner cannot finish unlocking (bucket locked and
 * WW_WAITERS set, see docs/ww-design.md).
 */
static inline struct ww_thread *ww_token_thread(uintptr_t token)
{
	struct ww_acquire_ctx *ctx = ww_token_ctx(token);

	return ctx ? ctx->task : (struct ww_thread *)(token & ~WW_NOCTX);
}

/* True if @a is younger than @b; wrap-around safe like the kernel's. */
static inline bool ww_ctx_younger(const struct ww_acquire_ctx *a,
				  const struct ww_acquire_ctx *b)
{
	return (long)(a->stamp - b->stamp) > 0;
}

#endif /* TTMSIM_WW_LOCKWORD_H */
