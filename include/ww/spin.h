/* SPDX-License-Identifier: MIT */
/*
 * The adaptive spin budget of a ww_mutex waiter (ww/lock_slow.c).
 *
 * A waiter spins on a running owner for at most its thread's budget,
 * ww_spin_ns >> spin_shift. A spin that ran out of budget halves the
 * budget (down to ww_spin_ns >> WW_SPIN_SHIFT_MAX); a spin that got the
 * lock doubles it (up to ww_spin_ns). Why: with more threads than CPUs the
 * owner is often preempted, not running, and userspace cannot see that;
 * a spin that times out then burned the CPU the owner needed to finish
 * (measured: docs/benchmarks.md, [perf] ww). Where critical sections are
 * short and owners run, spins succeed and the budget stays full. Spins
 * that end because the owner went to sleep, changed, or we were wounded
 * say nothing about the owner's running and leave the budget alone.
 */
#ifndef TTMSIM_WW_SPIN_H
#define TTMSIM_WW_SPIN_H

#include <stdint.h>

#include "ww/thread.h"

/* The smallest budget is ww_spin_ns / 2^WW_SPIN_SHIFT_MAX (1.25 us at 20 us). */
#define WW_SPIN_SHIFT_MAX 4

enum ww_spin_outcome {
	WW_SPIN_TOOK,     /* the lock was taken while spinning */
	WW_SPIN_TIMEOUT,  /* the budget ran out, the owner still holding */
	WW_SPIN_STOPPED,  /* owner waits or changed, wounded, interrupted */
};

/* @t's spin budget in ns, out of the library's @max_ns. */
static inline uint64_t ww_spin_budget(const struct ww_thread *t,
				      uint64_t max_ns)
{
	return max_ns >> t->spin_shift;
}

/* Adapt @t's budget after a spin that ended with @outcome; @t's thread only. */
static inline void ww_spin_adapt(struct ww_thread *t,
				 enum ww_spin_outcome outcome)
{
	/* Threads that share the out-of-memory fallback do not adapt. */
	if (t->shared)
		return;
	if (outcome == WW_SPIN_TOOK && t->spin_shift > 0)
		t->spin_shift--;
	else if (outcome == WW_SPIN_TIMEOUT &&
		 t->spin_shift < WW_SPIN_SHIFT_MAX)
		t->spin_shift++;
}

#endif /* TTMSIM_WW_SPIN_H */
