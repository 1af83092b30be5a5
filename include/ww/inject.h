/* SPDX-License-Identifier: MIT */
/* Back-off injection (ttmsim/ww_debug.h), as seen by the lock paths. */
#ifndef TTMSIM_WW_INJECT_H
#define TTMSIM_WW_INJECT_H

#include <stdbool.h>

#include "ttmsim/ww_mutex.h"

/* 0 when off: the one thing the lock fast path reads (relaxed). */
extern unsigned int ww_inject_every;

/*
 * Draw the next choice for 1 in @n (ww_inject_every, read once by the
 * caller): true if this lock call is to back off.
 */
bool ww_inject_draw(unsigned int n);

/*
 * Progress under injection (struct ww_acquire_ctx::inject_exempt). With a
 * fixed 1-in-N chance a lock call backs off, a transaction of many more
 * than N locks would never complete. So, like the kernel's slow-path
 * injection (whose interval grows with each injection), a context that
 * got an injected -EDEADLK is exempt from injection until it has completed
 * a whole pass without backing off:
 *  - WW_INJECT_ARMED: a candidate;
 *  - WW_INJECT_BACKOFF: injected (or, while exempt, a real -EDEADLK): the
 *    context is backing off; when it holds nothing any more, it starts...
 *  - WW_INJECT_PASS: the pass after the back-off; when it holds nothing
 *    again, the context is armed again. A real -EDEADLK in this pass
 *    sends it back to WW_INJECT_BACKOFF. "Holds nothing" is all there is
 *    to see: the PASS state ends when `acquired` first reaches 0, so a
 *    pass that drops all its locks part-way (not a back-off, just an
 *    unlock of everything) is a candidate again from its next lock.
 * So an injected back-off is never followed by another before a pass
 * completed: a transaction needs at most one more pass than it would
 * without injection. n == 1 (every candidate backs off) exempts nothing:
 * it is for single-step tests.
 */
enum ww_inject_exempt {
	WW_INJECT_ARMED = 0,
	WW_INJECT_BACKOFF,
	WW_INJECT_PASS,
};

/* @ctx got -EDEADLK (real): a back-off inside an exempt pass. */
static inline void ww_inject_deadlk(struct ww_acquire_ctx *ctx)
{
	if (ctx->inject_exempt == WW_INJECT_PASS)
		ctx->inject_exempt = WW_INJECT_BACKOFF;
}

/* @ctx released its last lock: a back-off, or a pass, is over. */
static inline void ww_inject_released_all(struct ww_acquire_ctx *ctx)
{
	if (ctx->inject_exempt == WW_INJECT_BACKOFF)
		ctx->inject_exempt = WW_INJECT_PASS;
	else
		ctx->inject_exempt = WW_INJECT_ARMED;
}

#endif /* TTMSIM_WW_INJECT_H */
