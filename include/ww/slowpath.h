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
void ww_unlock_slowpath(struct ww_mutex *lock);

/* Take @lock, free but with queued waiters, without sleeping. */
bool ww_trylock_slowpath(struct ww_mutex *lock, struct ww_acquire_ctx *ctx,
			 uintptr_t token);

#endif /* TTMSIM_WW_SLOWPATH_H */
