// SPDX-License-Identifier: MIT
/* Buffers for images of a DRM format: bytes per pixel of the usual ones. */
#include <errno.h>
#include <drm_fourcc.h>

#include "bo/bo.h"
#include "util/compiler.h"

/*
 * Single-plane formats only: a multi-planar one (NV12, YUV420, ...) is not
 * width * height * bytes per pixel, so it is left out and rejected.
 */
static const struct {
	uint32_t fourcc;
	uint8_t cpp;
} formats[] = {
	{ DRM_FORMAT_XRGB8888, 4 },
	{ DRM_FORMAT_ARGB8888, 4 },
	{ DRM_FORMAT_XBGR8888, 4 },
	{ DRM_FORMAT_ABGR8888, 4 },
	{ DRM_FORMAT_RGBX8888, 4 },
	{ DRM_FORMAT_RGBA8888, 4 },
	{ DRM_FORMAT_BGRX8888, 4 },
	{ DRM_FORMAT_BGRA8888, 4 },
	{ DRM_FORMAT_XRGB2101010, 4 },
	{ DRM_FORMAT_ARGB2101010, 4 },
	{ DRM_FORMAT_XBGR2101010, 4 },
	{ DRM_FORMAT_ABGR2101010, 4 },
	{ DRM_FORMAT_RG1616, 4 },
	{ DRM_FORMAT_GR1616, 4 },
	{ DRM_FORMAT_RGB565, 2 },
	{ DRM_FORMAT_BGR565, 2 },
	{ DRM_FORMAT_XRGB1555, 2 },
	{ DRM_FORMAT_ARGB1555, 2 },
	{ DRM_FORMAT_RG88, 2 },
	{ DRM_FORMAT_GR88, 2 },
	{ DRM_FORMAT_R16, 2 },
	{ DRM_FORMAT_R8, 1 },
};

TTM_EXPORT unsigned int ttm_fourcc_cpp(uint32_t fourcc)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(formats); i++)
		if (formats[i].fourcc == fourcc)
			return formats[i].cpp;
	return 0;
}

TTM_EXPORT int ttm_bo_create_fourcc(struct ttm_device *dev, uint32_t width,
				    uint32_t height, uint32_t fourcc,
				    const struct ttm_placement *placement,
				    uint32_t flags, struct ttm_bo **ret_bo)
{
	unsigned int cpp = ttm_fourcc_cpp(fourcc);

	if (cpp == 0 || width == 0 || height == 0)
		return -EINVAL;
	/* width * height fits in 64 bits; times cpp too once this holds. */
	if ((uint64_t)width * height > TTM_BO_MAX_SIZE)
		return -EINVAL;
	/* ttm_bo_create() checks the size's range and alignment. */
	return ttm_bo_create(dev, (uint64_t)width * height * cpp, placement,
			     flags, ret_bo);
}
