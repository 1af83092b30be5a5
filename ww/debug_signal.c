// SPDX-License-Identifier: MIT
/*
 * Rule 13 of the debug checker: nothing that may block inside a
 * fence-signalling section (ttm_fence_begin_signalling()).
 *
 * A section is code that must run to its end for a fence to signal: a
 * fence's callbacks, a GPU retiring a job. Whoever waits for that fence
 * may hold reservations, so a section that waits for a reservation, a
 * fence or room for a buffer may wait for itself. The kernel learns this
 * from lockdep once both halves of a cycle were seen; here the blocking
 * call is reported the first time it is made inside a section.
 *
 * The depth is a plain thread-local counter: only its own thread reads
 * or writes it.
 */
#include "ww/debug.h"

__thread unsigned int ww_debug_signalling
	__attribute__((tls_model("initial-exec")));

bool ww_debug_signalling_broken(enum ww_debug_rule rule, const void *object,
				const char *call, const char *file, int line)
{
	struct ww_debug_report r = {
		.rule = rule,
		.call = call,
		.file = file,
		.line = line,
		.object = object,
		.count = ww_debug_signalling,
	};

	ww_debug_raise(&r);
	return true;
}

/*
 * Sections close innermost first, each with its own cookie (its depth).
 * Another cookie is a bug of the caller's: report it, then close what
 * the cookie names, and the sections inside it, if it is open at all.
 * Checked only while the checker is on; closed in any case, so that
 * switching the checker off inside a section leaves no depth behind.
 */
void ww_debug_signalling_end(unsigned int cookie)
{
	if (cookie != ww_debug_signalling && ww_debug_active()) {
		struct ww_debug_report r = {
			.rule = WW_DEBUG_SIGNALLING_UNBALANCED,
			.call = "ttm_fence_end_signalling",
			.count = ww_debug_signalling,
		};

		ww_debug_raise(&r);
	}
	if (cookie <= ww_debug_signalling)
		ww_debug_signalling = cookie - 1;
}
