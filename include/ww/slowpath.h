/* SPDX-License-Identifier: MIT */
/* Slow paths of the ww_mutex, behind the inline fast paths in ww_mutex.c. */
#ifndef TTMSIM_WW_SLOWPATH_H
#define TTMSIM_WW_SLOWPATH_H

#include <stdbool.h>
#include <stdint.h>

#include "ttmsim/ww_mutex.h"
#include "ww/thread.h"

/*
 * Wait for @lock on behalf of @token (@ctx, or thread @self without a
 * ctx). Return: 0 once acquired, -EDEADLK (back off) or -EINTR.
 */
int ww_lock_slowpath(struct ww_mutex *lock, struct ww_acquire_ctx *ctx,
		     uintptr_t token, struct ww_thread *self,
		     bool interruptible);

/* Release @lock whose word carries flags: wake or hand off to a waiter. */
bool ww_unlock_slowpath(struct ww_mutex *lock);

/* Take @lock, free but with queued waiters, without sleeping. */
bool ww_trylock_slowpath(struct ww_mutex *lock, struct ww_acquire_ctx *ctx,
			 uintptr_t token);

/*
 * For tests only: a program that defines this function
 * (tests/test_ww_handoff.c does) is called by every waiter of @lock each
 * time it wakes up, before it looks at the lock again, and may hold it
 * there: a test can then let another thread take the lock first (a
 * steal) deterministically. Weak and undefined in the library, so not
 * part of the ABI; NULL in every other program, which pays one test of it
 * per wake-up.
 */
void ttmsim_test_ww_woken(const struct ww_mutex *lock)
	__attribute__((weak, visibility("default")));

#endif /* TTMSIM_WW_SLOWPATH_H */
