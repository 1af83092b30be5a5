// SPDX-License-Identifier: MIT
/*
 * Buffers of one device seen by another (PRIME across devices), as TTM's
 * sg buffers behind drm_gem_prime_import().
 *
 * An import is a buffer of the importing device with no memory of its
 * own: it shares the exporter's reservation and shows the exporter's
 * pages (bo_mem()). Every use of those pages holds the reservation, which
 * is also the exporter's, so the exporter cannot move while they are in
 * use; and every job on them leaves its fence in that one reservation, so
 * a move of the exporter waits for the importer's jobs, and the other way
 * round. That is the kernel's dynamic importer (dma_buf_dynamic_attach()
 * with the exporter's resv), without a move_notify: there is no mapping
 * to invalidate, the pages are read through the exporter at each use.
 *
 * Imports are deduplicated per device: the exporter lists its imports, so
 * importing one buffer twice into a device gives the same buffer (and so
 * the same handle in a client). import_lock guards every such list; under
 * it only the importing device's lock is taken (to account a new import).
 *
 * An import drops its exporter at its last put, once it took a copy of
 * its fences (bo/bo_destroy.c): from then on its pages are not its own to
 * read, and the exporter's reservation keeps the import's work, so the
 * exporter's own delayed destroy waits for it.
 */
#include <errno.h>
#include <stdlib.h>

#include "bo/bo.h"
#include "bo/resv.h"
#include "util/compiler.h"

static pthread_mutex_t import_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct ttm_placement import_placement =
	TTM_PLACEMENT_SYSTEM_INIT;

/* @exporter's live import into @dev, with a new reference; or NULL. */
static struct ttm_bo *import_find_locked(struct ttm_bo *exporter,
					 struct ttm_device *dev)
{
	struct ttm_bo *bo;

	if (!exporter->prime)
		return NULL;
	/* A released one (waiting for its fences) is not reused. */
	for (bo = exporter->prime->imports; bo; bo = bo->prime->import_next)
		if (bo->dev == dev && bo_get_unless_zero(bo))
			return bo;
	return NULL;
}

static void import_free(struct ttm_bo *bo)
{
	free(bo);
}

/* A new import of @exporter into @dev, accounted there, unreserved. */
static struct ttm_bo *import_create(struct ttm_device *dev,
				    struct ttm_bo *exporter)
{
	struct bo_want want = bo_want_domain(TTM_DOMAIN_SYSTEM);
	struct ttm_bo *bo = malloc(sizeof(*bo));
	struct ttm_bo_prime *prime = calloc(1, sizeof(*prime));
	const struct ttm_bo_profile *profile =
		bo_profile_get(dev, &import_placement, import_free);
	struct ttm_resource *res;

	if (!bo || !prime || !profile) {
		if (profile) {
			pthread_mutex_lock(&dev->lock);
			bo_profile_put_locked(dev, profile);
			pthread_mutex_unlock(&dev->lock);
		}
		free(prime);
		free(bo);
		return NULL;
	}
	*bo = (struct ttm_bo){
		.dev = dev,
		.size = exporter->size,
		.refcount = 1,
		.type = TTM_BO_TYPE_SG,
		.profile = profile,
		.prime = prime,
	};
	prime->exporter = ttm_bo_get(exporter);
	list_init(&bo->node);
	ttm_resv_init(&bo->base, dev->ww_class);
	/*
	 * The exporter's reservation only changes at its release, which
	 * the caller's reference holds off.
	 */
	bo->resv = exporter->resv;

	/* Accounted in SYSTEM, with no bytes of its own (bo_mem()). */
	pthread_mutex_lock(&dev->lock);
	res = bo_res_take_locked(dev, bo, &want, bo->size);
	if (res)
		bo_account_in_locked(bo, res);
	else
		bo_profile_put_locked(dev, profile);
	pthread_mutex_unlock(&dev->lock);
	/*
	 * SYSTEM has no limit: only the resource's allocation can fail.
	 * The put is not the last (the caller's reference holds the
	 * exporter), so nothing is destroyed under import_lock.
	 */
	if (!res) {
		ttm_resv_fini(&bo->base);
		ttm_bo_put(exporter);
		free(prime);
		free(bo);
		return NULL;
	}
	return bo;
}

TTM_EXPORT int ttm_bo_import(struct ttm_device *dev, struct ttm_bo *exported,
			     struct ttm_bo **ret_bo)
{
	struct ttm_bo *exporter = ttm_bo_exporter(exported);
	struct ttm_bo *bo;

	if (exported->type == TTM_BO_TYPE_KERNEL)
		return -EINVAL;
	/* Its own buffer, or one it exported that comes back. */
	if (exporter->dev == dev) {
		*ret_bo = ttm_bo_get(exporter);
		return 0;
	}
	/* Its tickets must be able to lock the shared reservation. */
	if (ww_lock_class(&exporter->resv->lock) != dev->ww_class)
		return -EXDEV;

	pthread_mutex_lock(&import_lock);
	bo = import_find_locked(exporter, dev);
	/* The exporter's list of imports, at its first. */
	if (!bo && !exporter->prime)
		exporter->prime = calloc(1, sizeof(*exporter->prime));
	if (!bo && exporter->prime) {
		bo = import_create(dev, exporter);
		if (bo) {
			bo->prime->import_next = exporter->prime->imports;
			exporter->prime->imports = bo;
		}
	}
	pthread_mutex_unlock(&import_lock);
	if (!bo)
		return -ENOMEM;
	*ret_bo = bo;
	return 0;
}

TTM_EXPORT struct ttm_bo *ttm_bo_exporter(struct ttm_bo *bo)
{
	struct ttm_bo *exporter = bo_exporter(bo);

	return exporter ? exporter : bo;
}

void bo_import_release(struct ttm_bo *bo)
{
	struct ttm_bo *exporter = bo->prime->exporter, **link;

	pthread_mutex_lock(&import_lock);
	for (link = &exporter->prime->imports; *link;
	     link = &(*link)->prime->import_next) {
		if (*link == bo) {
			*link = bo->prime->import_next;
			break;
		}
	}
	pthread_mutex_unlock(&import_lock);
	bo->prime->exporter = NULL;
	/* May be the exporter's last reference: nothing held here. */
	ttm_bo_put(exporter);
}
