/* SPDX-License-Identifier: MIT */
/* Back-off injection (ttmsim/ww_debug.h), as seen by the lock paths. */
#ifndef TTMSIM_WW_INJECT_H
#define TTMSIM_WW_INJECT_H

#include <stdbool.h>

/* 0 when off: the one thing the lock fast path reads (relaxed). */
extern unsigned int ww_inject_every;

/* Draw the next choice: true if this lock call is to back off. */
bool ww_inject_draw(void);

#endif /* TTMSIM_WW_INJECT_H */
