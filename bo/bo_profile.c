// SPDX-License-Identifier: MIT
/*
 * Interned placements: each device keeps one immutable copy of every
 * (placement, destroy) pair its buffers were created with, and a buffer
 * points at its pair instead of carrying the 100-byte placement itself
 * (docs/bo-design.md, "Bytes per buffer"). Drivers use a handful of
 * placements, so the table stays small. Each copy counts the buffers
 * created with it and goes with the last of them: placements come from
 * userspace too (GEM_CREATE's fpfn and lpfn), and a table only freed with
 * the device would grow with every distinct window a client ever asked
 * for, its chains walked under the device lock at each creation.
 */
#include <stdlib.h>
#include <string.h>

#include "bo/bo.h"

/* @placement with its unused places zeroed: the key compared whole. */
static struct ttm_placement profile_key(const struct ttm_placement *placement)
{
	struct ttm_placement key;

	memset(&key, 0, sizeof(key));
	key.count = placement->count;
	memcpy(key.places, placement->places,
	       placement->count * sizeof(key.places[0]));
	return key;
}

/*
 * A multiplicative hash of the places in use and the destroy's address,
 * word by word: creation looks it up every time, so it stays a few dozen
 * instructions (a byte-wise hash of the whole key cost ~700 a buffer).
 */
static unsigned int profile_hash(const struct ttm_placement *key,
				 void (*destroy)(struct ttm_bo *bo))
{
	uint64_t h = (uint64_t)(uintptr_t)destroy ^ key->count;
	unsigned int i;

	for (i = 0; i < key->count; i++) {
		const struct ttm_place *pl = &key->places[i];

		h = (h ^ ((uint64_t)pl->domain << 32 | pl->flags)) *
		    0x9e3779b97f4a7c15ull;
		h = (h ^ ((uint64_t)pl->fpfn << 32 | pl->lpfn)) *
		    0x9e3779b97f4a7c15ull;
	}
	return (unsigned int)(h >> 59) % BO_PROFILE_BUCKETS;
}

const struct ttm_bo_profile *
bo_profile_get(struct ttm_device *dev, const struct ttm_placement *placement,
	       void (*destroy)(struct ttm_bo *bo))
{
	struct ttm_placement key = profile_key(placement);
	unsigned int b = profile_hash(&key, destroy);
	struct ttm_bo_profile *p;

	pthread_mutex_lock(&dev->lock);
	for (p = dev->profiles[b]; p; p = p->next)
		if (p->destroy == destroy &&
		    !memcmp(&p->placement, &key, sizeof(key)))
			break;
	if (p) {
		p->refs++;
	} else {
		p = malloc(sizeof(*p));
		if (p) {
			p->placement = key;
			p->destroy = destroy;
			p->refs = 1;
			p->next = dev->profiles[b];
			dev->profiles[b] = p;
		}
	}
	pthread_mutex_unlock(&dev->lock);
	return p;
}

void bo_profile_put_locked(struct ttm_device *dev,
			   const struct ttm_bo_profile *profile)
{
	struct ttm_bo_profile **link;

	if (--((struct ttm_bo_profile *)profile)->refs)
		return;
	link = &dev->profiles[profile_hash(&profile->placement,
					   profile->destroy)];
	for (; *link; link = &(*link)->next) {
		if (*link == profile) {
			*link = profile->next;
			break;
		}
	}
	free((void *)profile);
}

void bo_profile_fini(struct ttm_device *dev)
{
	struct ttm_bo_profile *p, *next;
	unsigned int b;

	for (b = 0; b < BO_PROFILE_BUCKETS; b++) {
		for (p = dev->profiles[b]; p; p = next) {
			next = p->next;
			free(p);
		}
		dev->profiles[b] = NULL;
	}
}
