/* SPDX-License-Identifier: MIT */
/* Shared by the drm suite's tests: a device, files, and raw requests. */
#ifndef TTMSIM_TESTS_DRM_HELPERS_H
#define TTMSIM_TESTS_DRM_HELPERS_H

#include <drm.h>
#include <drm_mode.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/helpers.h"

#include "ttmsim/bo.h"
#include "ttmsim/drm.h"
#include "ttmsim/execbuf.h"
#include "ttmsim/gpu.h"

struct drm_fixture {
	struct ttm_gpu *gpu;
	struct ttm_device *dev;
	struct ttm_drm_device *ddev;
	struct ttm_drm_file *primary;    /* the master */
	struct ttm_drm_file *render;
};

/* A request of DRM's type for @nr with any direction and size. */
#define DRM_REQ(dir, nr, size) _IOC((dir), DRM_IOCTL_BASE, (nr), (size))
#define RW (_IOC_READ | _IOC_WRITE)
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

static inline struct ttm_drm_file *drm_open_file(struct ttm_drm_device *ddev,
						 enum ttm_drm_node node)
{
	struct ttm_drm_file *f = NULL;

	assert_int_equal(ttm_drm_open(ddev, node, &f), 0);
	assert_non_null(f);
	return f;
}

/* A dumb buffer of @width x @height at 32 bpp; its handle. */
static inline uint32_t drm_dumb(struct ttm_drm_file *f, uint32_t width,
				uint32_t height, uint64_t *ret_size)
{
	struct drm_mode_create_dumb c = {
		.width = width, .height = height, .bpp = 32,
	};

	assert_int_equal(ttm_drm_ioctl(f, DRM_IOCTL_MODE_CREATE_DUMB, &c), 0);
	assert_int_not_equal(c.handle, 0);
	if (ret_size)
		*ret_size = c.size;
	return c.handle;
}

/* MAP_DUMB then ttm_drm_mmap() of the whole buffer. */
static inline void *drm_map(struct ttm_drm_file *f, uint32_t handle,
			    uint64_t size)
{
	struct drm_mode_map_dumb m = { .handle = handle };
	void *p = NULL;

	assert_int_equal(ttm_drm_ioctl(f, DRM_IOCTL_MODE_MAP_DUMB, &m), 0);
	assert_int_equal(ttm_drm_mmap(f, m.offset, size, &p), 0);
	assert_non_null(p);
	return p;
}

/* The pin count of @handle's buffer. */
static inline unsigned int drm_pins(struct ttm_drm_file *f, uint32_t handle)
{
	struct ttm_bo *bo = ttm_client_lookup(ttm_drm_file_client(f), handle);
	unsigned int n;

	assert_non_null(bo);
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	n = ttm_bo_pin_count(bo);
	ttm_bo_unreserve(bo);
	ttm_bo_put(bo);
	return n;
}

int drm_fixture_setup_opts(void **state, const struct ttm_drm_driver *drv,
			   uint64_t gtt_size);
int drm_fixture_setup(void **state);
int drm_fixture_teardown(void **state);
extern const struct ttm_drm_driver drm_test_driver;

#endif /* TTMSIM_TESTS_DRM_HELPERS_H */
