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
 * for, its chains walked under the device lock at each creation. For
 * the same reason the table grows with what is live (two placements a
 * chain on average): a client asking for thousands of distinct windows
 * makes creation no slower than one asking for a few.
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
static uint64_t profile_hash(const struct ttm_placement *key,
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
	return h;
}

/* @dev's chain of hash @h: the hash's top bits. dev->lock held. */
static struct ttm_bo_profile **profile_chain(struct ttm_device *dev,
					     uint64_t h)
{
	return &dev->profiles[h >> (64 - dev->profile_bits)];
}

/*
 * Twice the chains once they hold two profiles each on average. Without
 * memory the table stays as it is: slower lookups, nothing lost.
 * dev->lock held.
 */
static void profile_table_grow(struct ttm_device *dev)
{
	unsigned int bits = dev->profile_bits + 1, b;
	struct ttm_bo_profile **old = dev->profiles, *p, *next;
	size_t n = (size_t)1 << dev->profile_bits;

	if (dev->n_profiles <= 2 * n || bits > 24)
		return;
	dev->profiles = calloc((size_t)1 << bits, sizeof(*dev->profiles));
	if (!dev->profiles) {
		dev->profiles = old;
		return;
	}
	dev->profile_bits = bits;
	for (b = 0; b < n; b++) {
		for (p = old[b]; p; p = next) {
			struct ttm_bo_profile **chain = profile_chain(
				dev, profile_hash(&p->placement, p->destroy));

			next = p->next;
			p->next = *chain;
			*chain = p;
		}
	}
	if (old != dev->profile_first)
		free(old);
}

const struct ttm_bo_profile *
bo_profile_get(struct ttm_device *dev, const struct ttm_placement *placement,
	       void (*destroy)(struct ttm_bo *bo))
{
	struct ttm_placement key = profile_key(placement);
	uint64_t h = profile_hash(&key, destroy);
	struct ttm_bo_profile *p;

	pthread_mutex_lock(&dev->lock);
	if (!dev->profiles) {
		dev->profiles = dev->profile_first;
		dev->profile_bits = __builtin_ctz(BO_PROFILE_BUCKETS);
	}
	for (p = *profile_chain(dev, h); p; p = p->next)
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
			p->next = *profile_chain(dev, h);
			*profile_chain(dev, h) = p;
			dev->n_profiles++;
			profile_table_grow(dev);
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
	dev->n_profiles--;
	link = profile_chain(dev, profile_hash(&profile->placement,
					       profile->destroy));
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

	if (!dev->profiles)
		return;
	for (b = 0; b < (1u << dev->profile_bits); b++) {
		for (p = dev->profiles[b]; p; p = next) {
			next = p->next;
			free(p);
		}
	}
	if (dev->profiles != dev->profile_first)
		free(dev->profiles);
	dev->profiles = NULL;
	dev->n_profiles = 0;
}
