/* SPDX-License-Identifier: MIT */
/*
 * Pseudo-random numbers, the same on every platform, so that a seed
 * replays a run: splitmix64 (any state, 0 too), and xorshift64* (faster;
 * its state must not be 0: seed it from splitmix64).
 */
#ifndef TTMSIM_TOOLS_RNG_H
#define TTMSIM_TOOLS_RNG_H

#include <stdint.h>

static inline uint64_t cli_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static inline uint64_t cli_xorshift64(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(0x2545f4914f6cdd1d);
}

#endif /* TTMSIM_TOOLS_RNG_H */
