// SPDX-License-Identifier: MIT
/*
 * What the randomized stress suites share: [--short | --long], a seed
 * that replays a run, and a cheap random sequence per thread.
 */
#include "helpers.h"

/*
 * The command line of the stress suites: [--short | --long], starting
 * from @long_run. False (usage printed) on anything else.
 */
bool stress_args(int argc, char **argv, bool *long_run,
		 const char *long_doc)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--long")) {
			*long_run = true;
		} else if (!strcmp(argv[i], "--short")) {
			*long_run = false;
		} else {
			fprintf(stderr, "usage: %s [--short | --long]\n"
				"  %s\n"
				"  TTMSIM_SEED=n: replay a run\n", argv[0],
				long_doc);
			return false;
		}
	}
	return true;
}

unsigned int stress_seed(void)
{
	const char *env = getenv("TTMSIM_SEED");

	return env && *env ? (unsigned int)strtoul(env, NULL, 0)
			   : (unsigned int)now_ns();
}

uint32_t xorshift32(uint32_t *state)
{
	uint32_t x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}
