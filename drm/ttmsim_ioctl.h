/* SPDX-License-Identifier: MIT */
/*
 * The built-in "ttmsim" driver's ioctl handlers (drm/ttmsim_*.c), shared
 * with its table (drm/ttmsim_driver.c), and the helpers they share. The
 * uAPI they implement is include/ttmsim/ttmsim_drm.h.
 */
#ifndef TTMSIM_DRM_TTMSIM_IOCTL_H
#define TTMSIM_DRM_TTMSIM_IOCTL_H

#include <stddef.h>
#include <stdint.h>

#include "ttmsim/drm.h"

/* drm/ttmsim_gem.c */
int ttmsim_gem_create_ioctl(struct ttm_drm_file *file, void *data);
int ttmsim_gem_mmap_offset_ioctl(struct ttm_drm_file *file, void *data);
int ttmsim_gem_wait_ioctl(struct ttm_drm_file *file, void *data);

/* drm/ttmsim_submit.c */
int ttmsim_submit_ioctl(struct ttm_drm_file *file, void *data);

#endif /* TTMSIM_DRM_TTMSIM_IOCTL_H */
