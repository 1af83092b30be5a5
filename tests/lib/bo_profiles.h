/* SPDX-License-Identifier: MIT */
/*
 * The interned placements a device holds (bo/bo_profile.c), for tests
 * that they go with the buffers using them. Reads the device's private
 * table: only for test programs that include bo/bo.h anyway.
 */
#ifndef TTMSIM_TEST_BO_PROFILES_H
#define TTMSIM_TEST_BO_PROFILES_H

#include <pthread.h>

#include "bo/bo.h"

/* The profiles @dev holds now. */
static inline unsigned int profiles_of(struct ttm_device *dev)
{
	const struct ttm_bo_profile *p;
	unsigned int b, n = 0;

	pthread_mutex_lock(&dev->lock);
	for (b = 0; dev->profiles && b < (1u << dev->profile_bits); b++)
		for (p = dev->profiles[b]; p; p = p->next)
			n++;
	pthread_mutex_unlock(&dev->lock);
	return n;
}

#endif
