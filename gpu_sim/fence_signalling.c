// SPDX-License-Identifier: MIT
/*
 * Fence-signalling sections (ttmsim/fence.h): the annotation that the
 * debug checker's rule 13 enforces (ww/debug_signal.c). With the checker
 * off a section costs a load and a branch; with it not built in, nothing
 * but the call.
 */
#include "gpu_sim/fence.h"
#include "util/compiler.h"
#include "ww/debug.h"

TTM_EXPORT unsigned int ttm_fence_begin_signalling(void)
{
	/* 0: not counted, and ttm_fence_end_signalling(0) does nothing. */
	if (!ww_debug_active())
		return 0;
	return ++ww_debug_signalling;
}

TTM_EXPORT void ttm_fence_end_signalling(unsigned int cookie)
{
	if (cookie)
		ww_debug_signalling_end(cookie);
}
