/* SPDX-License-Identifier: MIT */
/*
 * Debugging aids for users of ww_mutexes.
 *
 * Back-off injection: like the kernel's CONFIG_DEBUG_WW_MUTEX_SLOWPATH, make
 * ww_mutex_lock*() fail with -EDEADLK now and then, so that a caller's
 * back-off path (unlock everything, ww_mutex_lock_slow(), retry) runs even
 * without real contention. Available in every build.
 */
#ifndef TTMSIM_WW_DEBUG_H
#define TTMSIM_WW_DEBUG_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ww_debug_inject - inject a back-off about once every @n calls.
 * @seed: seeds the pseudo-random choice: the same seed gives the same
 *        sequence of injections in a single-threaded program.
 * @n: 0 turns injection off.
 *
 * Only ww_mutex_lock() and ww_mutex_lock_interruptible() with a context
 * that already holds a lock are candidates (a context holding nothing never
 * backs off). An injected call takes nothing and returns -EDEADLK; the lock
 * it was asked for becomes the contended lock, so the caller's normal
 * back-off path runs. The environment variable TTMSIM_WW_INJECT=SEED:N does
 * the same from program start.
 *
 * Locking: may be called at any time from any thread.
 */
void ww_debug_inject(unsigned long seed, unsigned int n);

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_WW_DEBUG_H */
