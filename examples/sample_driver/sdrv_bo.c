// SPDX-License-Identifier: MIT
/*
 * The sample driver's buffer type: struct sdrv_bo embeds ttmsim's
 * struct ttm_bo as amdgpu_bo embeds ttm_buffer_object (whose base is the
 * drm_gem_object), is initialised with ttm_bo_init_reserved() and freed
 * by its destroy callback; userspace sees it through GEM handles of the
 * file's client. The ioctls: GEM_CREATE, GEM_MMAP_OFFSET, GEM_INFO.
 */
#include <errno.h>
#include <stdlib.h>

#include <ttmsim/execbuf.h>

#include "sdrv.h"

/*
 * VRAM first, GTT when VRAM is full: amdgpu's default for
 * AMDGPU_GEM_DOMAIN_VRAM | _GTT. Scanout buffers start the same way:
 * the flip moves them into visible VRAM only when they are shown.
 */
static const struct ttm_placement sdrv_default_placement =
	TTM_PLACEMENT_VRAM_GTT_INIT;

/* Called once the last reference and the last fence are gone. */
static void sdrv_bo_destroy(struct ttm_bo *tbo)
{
	free(to_sdrv_bo(tbo));
}

/*
 * The file's buffer of @handle, referenced (drm_gem_object_lookup()), if
 * it is one of ours: the core's dumb buffers and PRIME imports are bare
 * struct ttm_bo, so container_of() only after checking the destroy
 * callback (amdgpu_bo_is_amdgpu_bo()). NULL for no buffer or another's.
 */
struct sdrv_bo *sdrv_bo_lookup(struct ttm_drm_file *file, uint32_t handle)
{
	struct ttm_bo *tbo = ttm_client_lookup(ttm_drm_file_client(file),
					       handle);

	if (tbo && !ttm_bo_is_driver_bo(tbo, sdrv_bo_destroy)) {
		ttm_bo_put(tbo);
		return NULL;
	}
	return tbo ? to_sdrv_bo(tbo) : NULL;
}

int sdrv_gem_create_ioctl(struct ttm_drm_file *file, void *data)
{
	struct drm_sdrv_gem_create *args = data;
	struct sdrv_device *sdev = sdrv_from_file(file);
	struct ttm_operation_ctx ctx = { .interruptible = true };
	struct sdrv_bo *bo;
	int ret;

	if (args->flags & ~DRM_SDRV_GEM_SCANOUT)
		return -EINVAL;
	/* ttm_bo_init_reserved() checks the size, as ttm does. */
	bo = calloc(1, sizeof(*bo));
	if (!bo)
		return -ENOMEM;
	bo->flags = args->flags;
	ret = ttm_bo_init_reserved(sdev->ttm, &bo->tbo, TTM_BO_TYPE_DEVICE,
				   args->size, &sdrv_default_placement, &ctx,
				   NULL, NULL, sdrv_bo_destroy);
	if (ret) {
		free(bo);   /* a failed init never calls the destroy */
		return ret;
	}
	ttm_bo_unreserve(&bo->tbo);
	/* As drm_gem_handle_create() then drm_gem_object_put(). */
	ret = ttm_client_bo_add(ttm_drm_file_client(file), &bo->tbo,
				&args->handle, NULL);
	ttm_bo_put(&bo->tbo);
	return ret;
}

int sdrv_gem_mmap_offset_ioctl(struct ttm_drm_file *file, void *data)
{
	struct drm_sdrv_gem_mmap_offset *args = data;
	uint64_t offset;
	int ret;

	if (args->pad)
		return -EINVAL;
	/* The core's fake offset, as drm_gem_create_mmap_offset(). */
	ret = ttm_drm_mmap_offset(file, args->handle, &offset);
	if (ret == 0)
		args->offset = offset;
	return ret;
}

/* The uAPI's numbers are its own: ttmsim's enum may change, they may not. */
static const uint32_t sdrv_domain[TTM_DOMAIN_COUNT] = {
	[TTM_DOMAIN_VRAM] = DRM_SDRV_DOMAIN_VRAM,
	[TTM_DOMAIN_GTT] = DRM_SDRV_DOMAIN_GTT,
	[TTM_DOMAIN_SYSTEM] = DRM_SDRV_DOMAIN_SYSTEM,
};

int sdrv_gem_info_ioctl(struct ttm_drm_file *file, void *data)
{
	struct drm_sdrv_gem_info *args = data;
	struct sdrv_bo *bo;
	int ret;

	if (args->pad)
		return -EINVAL;
	bo = sdrv_bo_lookup(file, args->handle);
	if (!bo)
		return -ENOENT;
	/* The pin count and domain are the reservation's to change. */
	ret = ttm_bo_reserve(&bo->tbo, true, false, NULL);
	if (ret == 0) {
		args->domain = sdrv_domain[ttm_bo_domain(&bo->tbo)];
		args->pin_count = ttm_bo_pin_count(&bo->tbo);
		ttm_bo_unreserve(&bo->tbo);
	}
	ttm_bo_put(&bo->tbo);
	return ret;
}
