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

/*
 * drm/ttmsim_driver.c: copy @count entries of @size bytes from the user
 * array at @uptr into a new allocation (*@ret, NULL for 0 entries):
 * -EFAULT for a NULL @uptr with entries or memory the process cannot
 * read, -ENOMEM.
 */
int ttmsim_copy_array(uint64_t uptr, uint32_t count, size_t size,
		      void **ret);

#endif /* TTMSIM_DRM_TTMSIM_IOCTL_H */
