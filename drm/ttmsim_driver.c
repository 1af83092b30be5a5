// SPDX-License-Identifier: MIT
/*
 * The built-in "ttmsim" DRM driver: its ioctl table, the small ioctls
 * (GET_PARAM, SET_PRIORITY) and the user-array copy the others share.
 * Buffers are drm/ttmsim_gem.c's, submission drm/ttmsim_submit.c's; the
 * uAPI is include/ttmsim/ttmsim_drm.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drm_priv.h"
#include "ttmsim_ioctl.h"
#include "gpu_sim/gpu.h"
#include "ttmsim/execbuf.h"
#include "ttmsim/ttmsim_drm.h"
#include "util/compiler.h"
#include "util/time.h"

/* The clock GEM_WAIT's absolute timeouts count on. */
static uint64_t clock_ns(struct ttm_gpu *gpu)
{
	if (gpu && gpu_is_virtual(gpu))
		return ttm_gpu_now_us(gpu) * 1000u;
	return mono_ns();
}

static int get_param_ioctl(struct ttm_drm_file *file, void *data)
{
	struct drm_ttmsim_get_param *args = data;
	struct ttm_device *dev =
		ttm_client_device(ttm_drm_file_client(file));
	struct ttm_gpu *gpu = ttm_device_gpu(dev);
	struct ttm_device_stats stats;

	if (args->pad)
		return -EINVAL;
	switch (args->param) {
	case DRM_TTMSIM_PARAM_VRAM_SIZE:
	case DRM_TTMSIM_PARAM_GTT_SIZE:
		ttm_device_get_stats(dev, &stats);
		args->value = stats.domain[args->param ==
					   DRM_TTMSIM_PARAM_VRAM_SIZE ?
					   TTM_DOMAIN_VRAM :
					   TTM_DOMAIN_GTT].capacity;
		return 0;
	case DRM_TTMSIM_PARAM_VISIBLE_VRAM_SIZE:
		args->value = ttm_device_visible_vram(dev);
		return 0;
	case DRM_TTMSIM_PARAM_PAGE_SIZE:
		args->value = ttm_device_page_size(dev);
		return 0;
	case DRM_TTMSIM_PARAM_NUM_ENGINES:
		args->value = gpu ? ttm_gpu_engines(gpu) : 0;
		return 0;
	case DRM_TTMSIM_PARAM_MAX_BO_SIZE:
		args->value = TTM_BO_MAX_SIZE;
		return 0;
	case DRM_TTMSIM_PARAM_CLOCK_NS:
		args->value = clock_ns(gpu);
		return 0;
	case DRM_TTMSIM_PARAM_VIRTUAL_CLOCK:
		args->value = gpu && gpu_is_virtual(gpu);
		return 0;
	default:
		return -EINVAL;
	}
}

static int set_priority_ioctl(struct ttm_drm_file *file, void *data)
{
	static const enum ttm_sched_priority map[] = {
		[DRM_TTMSIM_PRIORITY_LOW] = TTM_SCHED_PRIORITY_LOW,
		[DRM_TTMSIM_PRIORITY_NORMAL] = TTM_SCHED_PRIORITY_NORMAL,
		[DRM_TTMSIM_PRIORITY_HIGH] = TTM_SCHED_PRIORITY_HIGH,
		[DRM_TTMSIM_PRIORITY_KERNEL] = TTM_SCHED_PRIORITY_KERNEL,
	};
	struct drm_ttmsim_set_priority *args = data;

	if (args->pad || args->priority > DRM_TTMSIM_PRIORITY_KERNEL)
		return -EINVAL;
	/*
	 * Above NORMAL a client takes the GPU from others: the master
	 * only, as amdgpu and panthor ask for the master or CAP_SYS_NICE.
	 */
	if (args->priority > DRM_TTMSIM_PRIORITY_NORMAL &&
	    !ttm_drm_file_is_master(file))
		return -EACCES;
	return ttm_client_set_priority(ttm_drm_file_client(file),
				       map[args->priority]);
}

#define TTMSIM_IOCTL(name, func) \
	[DRM_TTMSIM_##name] = { DRM_IOCTL_TTMSIM_##name, \
				TTM_DRM_RENDER_ALLOW, func, \
				"TTMSIM_" #name }

static const struct ttm_drm_ioctl_desc ttmsim_ioctls[] = {
	TTMSIM_IOCTL(GET_PARAM, get_param_ioctl),
	TTMSIM_IOCTL(GEM_CREATE, ttmsim_gem_create_ioctl),
	TTMSIM_IOCTL(GEM_MMAP_OFFSET, ttmsim_gem_mmap_offset_ioctl),
	TTMSIM_IOCTL(GEM_WAIT, ttmsim_gem_wait_ioctl),
	TTMSIM_IOCTL(SUBMIT, ttmsim_submit_ioctl),
	TTMSIM_IOCTL(SET_PRIORITY, set_priority_ioctl),
};

static const struct ttm_drm_driver ttmsim_driver = {
	.name = DRM_TTMSIM_DRIVER_NAME,
	.desc = "ttmsim's simulated GPU",
	.date = "20261204",
	.major = 1,
	.minor = 0,
	.patchlevel = 0,
	.ioctls = ttmsim_ioctls,
	.num_ioctls = sizeof(ttmsim_ioctls) / sizeof(ttmsim_ioctls[0]),
};

TTM_EXPORT const struct ttm_drm_driver *ttm_drm_ttmsim_driver(void)
{
	return &ttmsim_driver;
}
