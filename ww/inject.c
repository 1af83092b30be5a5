// SPDX-License-Identifier: MIT
/*
 * Back-off injection: a shared counter-based generator (splitmix64 of a
 * Weyl sequence), so that one seed gives one sequence of choices in a
 * single-threaded program, and threads need no state of their own.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ttmsim/ww_debug.h"
#include "util/compiler.h"
#include "ww/inject.h"

unsigned int ww_inject_every;
static uint64_t inject_state;

#define WEYL 0x9e3779b97f4a7c15ull

static uint64_t splitmix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

bool ww_inject_draw(unsigned int n)
{
	uint64_t x = __atomic_add_fetch(&inject_state, WEYL, __ATOMIC_RELAXED);

	return n && splitmix64(x) % n == 0;
}

TTM_EXPORT void ww_debug_inject(unsigned long seed, unsigned int n)
{
	__atomic_store_n(&inject_state, splitmix64(seed), __ATOMIC_RELAXED);
	__atomic_store_n(&ww_inject_every, n, __ATOMIC_RELAXED);
}

/*
 * TTMSIM_WW_INJECT=SEED:N. A malformed value is ignored with one line on
 * stderr: the program asked for a debugging aid it is not getting.
 */
__attribute__((constructor)) static void inject_from_env(void)
{
	const char *s = getenv("TTMSIM_WW_INJECT");
	unsigned long seed, n;
	char *end;

	if (!s || !*s)
		return;
	seed = strtoul(s, &end, 0);
	if (end != s && *end == ':') {
		const char *t = end + 1;

		n = strtoul(t, &end, 0);
		if (end != t && *end == '\0' && n <= 0xffffffffu) {
			ww_debug_inject(seed, (unsigned int)n);
			return;
		}
	}
	fprintf(stderr, "ttmsim: TTMSIM_WW_INJECT='%s' ignored: "
		"expected SEED:N, e.g. 1:100\n", s);
}
