// SPDX-License-Identifier: MIT
/*
 * The sample driver's device and driver table: probe and remove (a
 * kernel driver's pci_driver probe/remove with drm_dev_alloc() and
 * drm_dev_register()), its struct ttm_drm_driver with the private ioctl
 * table (struct drm_driver's ioctls), and per-file state made at open
 * and freed at postclose (drm_driver.open/postclose).
 */
#include <errno.h>
#include <stdlib.h>

#include "sdrv.h"

static int sdrv_open(struct ttm_drm_file *file)
{
	struct sdrv_device *sdev = sdrv_from_file(file);
	struct ttm_sched *render = ttm_device_sched(sdev->ttm,
						    SDRV_ENGINE_RENDER);
	struct sdrv_file *sfile = calloc(1, sizeof(*sfile));
	int ret;

	if (!sfile)
		return -ENOMEM;
	/*
	 * One queue per file on the render ring, as amdgpu's contexts' own
	 * drm_sched_entity: a file's jobs are ordered, not other files'.
	 */
	ret = ttm_sched_entity_create(render, TTM_SCHED_PRIORITY_NORMAL,
				      &sfile->entity);
	if (ret) {
		free(sfile);
		return ret;
	}
	pthread_mutex_init(&sfile->lock, NULL);
	ttm_drm_file_set_driver_priv(file, sfile);
	return 0;
}

static void sdrv_postclose(struct ttm_drm_file *file)
{
	struct sdrv_file *sfile = sdrv_file(file);
	uint64_t i;

	/* As drm_sched_entity_destroy() at close: a second to drain. */
	ttm_sched_entity_destroy(sfile->entity, 1000000000ull);
	for (i = 0; i < SDRV_FENCE_RING; i++)
		ttm_fence_put(sfile->fences[i].fence);
	pthread_mutex_destroy(&sfile->lock);
	free(sfile);
}

#define SDRV_IOCTL(name, func, flags) \
	[DRM_SDRV_##name] = { DRM_IOCTL_SDRV_##name, (flags), func, \
			      "SDRV_" #name }

/*
 * Render-node clients may render; only the master (the compositor) may
 * flip, as KMS ioctls are DRM_MASTER.
 */
static const struct ttm_drm_ioctl_desc sdrv_ioctls[] = {
	SDRV_IOCTL(GEM_CREATE, sdrv_gem_create_ioctl, TTM_DRM_RENDER_ALLOW),
	SDRV_IOCTL(GEM_MMAP_OFFSET, sdrv_gem_mmap_offset_ioctl,
		   TTM_DRM_RENDER_ALLOW),
	SDRV_IOCTL(GEM_INFO, sdrv_gem_info_ioctl, TTM_DRM_RENDER_ALLOW),
	SDRV_IOCTL(SUBMIT, sdrv_submit_ioctl, TTM_DRM_RENDER_ALLOW),
	SDRV_IOCTL(WAIT, sdrv_wait_ioctl, TTM_DRM_RENDER_ALLOW),
	SDRV_IOCTL(FLIP, sdrv_flip_ioctl, TTM_DRM_MASTER),
	SDRV_IOCTL(FLIP_STATUS, sdrv_flip_status_ioctl, TTM_DRM_MASTER),
};

static const struct ttm_drm_driver sdrv_driver = {
	.name = DRM_SDRV_DRIVER_NAME,
	.desc = "ttmsim's sample driver",
	.date = "20261204",
	.major = 1,
	.open = sdrv_open,
	.postclose = sdrv_postclose,
	.ioctls = sdrv_ioctls,
	.num_ioctls = sizeof(sdrv_ioctls) / sizeof(sdrv_ioctls[0]),
};

/*
 * Probe: the buffer device (ttm_device_init()), the DRM device, the
 * display. VRAM is the given size, a quarter of it CPU-visible (a small
 * BAR, as on many discrete GPUs); GTT four times as much.
 */
int sdrv_device_create(struct ttm_gpu *gpu, uint64_t vram_size,
		       struct sdrv_device **ret_sdev)
{
	struct ttm_device_options opts = {
		.vram_size = vram_size,
		.gtt_size = 4 * vram_size,
		.gpu = gpu,
		.copy_engine = SDRV_ENGINE_COPY,
	};
	struct sdrv_device *sdev;
	int ret;

	if (!gpu || ttm_gpu_engines(gpu) < SDRV_NUM_ENGINES)
		return -EINVAL;
	sdev = calloc(1, sizeof(*sdev));
	if (!sdev)
		return -ENOMEM;
	ret = ttm_device_create(&opts, &sdev->ttm);
	if (ret)
		goto err_free;
	ttm_device_set_private(sdev->ttm, sdev, NULL);
	ret = sdrv_flip_init(sdev, gpu);
	if (ret)
		goto err_ttm;
	ret = ttm_drm_device_create(sdev->ttm, &sdrv_driver, &sdev->ddev);
	if (ret)
		goto err_flip;
	*ret_sdev = sdev;
	return 0;

err_flip:
	sdrv_flip_fini(sdev);
err_ttm:
	ttm_device_destroy(sdev->ttm);
err_free:
	free(sdev);
	return ret;
}

/* Remove: every file must be closed. The display goes off first. */
void sdrv_device_destroy(struct sdrv_device *sdev)
{
	if (!sdev)
		return;
	ttm_drm_device_destroy(sdev->ddev);
	sdrv_flip_fini(sdev);
	ttm_device_destroy(sdev->ttm);
	free(sdev);
}
