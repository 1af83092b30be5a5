// SPDX-License-Identifier: MIT
/*
 * The buffer ioctls of the core: GEM_CLOSE, PRIME's two, and the dumb
 * buffers (CREATE, MAP, DESTROY), on the file's client's handles.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <drm.h>
#include <drm_mode.h>

#include "drm_priv.h"
#include "util/compiler.h"

/*
 * Close @handle and, if that was the file's handle for the buffer, its
 * right to map it. A bad handle is -EINVAL, as the kernel's
 * drm_gem_handle_delete() says.
 */
static int gem_close(struct ttm_drm_file *file, uint32_t handle)
{
	struct ttm_bo *bo = ttm_client_lookup(file->client, handle);
	int ret;

	if (!bo)
		return -EINVAL;
	ret = ttm_client_bo_close(file->client, handle);
	if (ret == 0)
		drm_offset_revoke_put(file, bo);
	ttm_bo_put(bo);
	return ret == -ENOENT ? -EINVAL : ret;
}

int drm_ioctl_gem_close(struct ttm_drm_file *file, void *data)
{
	struct drm_gem_close *args = data;

	/* The kernel does not look at pad: neither do we. */
	return gem_close(file, args->handle);
}

int drm_ioctl_prime_handle_to_fd(struct ttm_drm_file *file, void *data)
{
	struct drm_prime_handle *args = data;
	int fd, ret;

	if (args->flags & ~(DRM_CLOEXEC | DRM_RDWR))
		return -EINVAL;
	ret = ttm_client_export_fd(file->client, args->handle, &fd);
	if (ret)
		return ret;
	/* The library's are close-on-exec; DRM's only with DRM_CLOEXEC. */
	if (!(args->flags & DRM_CLOEXEC) &&
	    fcntl(fd, F_SETFD, 0) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	args->fd = fd;
	return 0;
}

int drm_ioctl_prime_fd_to_handle(struct ttm_drm_file *file, void *data)
{
	struct drm_prime_handle *args = data;

	/* The kernel ignores flags here (they are handle-to-fd's). */
	return ttm_client_import_fd(file->client, args->fd, &args->handle,
				    NULL);
}

/* The placement of dumb buffers: CPU-mappable GTT, SYSTEM when evicted. */
static const struct ttm_placement dumb_placement = {
	.count = 2,
	.places = {
		TTM_PLACE_INIT(TTM_DOMAIN_GTT),
		TTM_PLACE_INIT(TTM_DOMAIN_SYSTEM),
	},
};

int drm_ioctl_create_dumb(struct ttm_drm_file *file, void *data)
{
	struct drm_mode_create_dumb *args = data;
	uint64_t page = file->ddev->page_size;
	uint64_t cpp, pitch, size;
	uint32_t handle;
	int ret;

	/* The kernel's drm_mode_create_dumb() checks, in its order. */
	if (!args->width || !args->height || !args->bpp)
		return -EINVAL;
	if (args->flags)
		return -EINVAL;   /* none defined: reserved */
	if (args->bpp > UINT32_MAX - 8)
		return -EINVAL;
	cpp = (args->bpp + 7) / 8;
	if (cpp > UINT32_MAX / args->width)
		return -EINVAL;
	pitch = cpp * args->width;
	if (args->height > UINT32_MAX / pitch)
		return -EINVAL;
	size = pitch * args->height;
	/* Whole pages; a size that rounds past 32 bits is refused too. */
	size = (size + page - 1) / page * page;
	if (size > UINT32_MAX)
		return -EINVAL;
	ret = ttm_client_bo_create(file->client, size, &dumb_placement, 0,
				   &handle);
	if (ret)
		return ret;
	args->handle = handle;
	args->pitch = pitch;
	args->size = size;
	return 0;
}

int drm_ioctl_map_dumb(struct ttm_drm_file *file, void *data)
{
	struct drm_mode_map_dumb *args = data;
	uint64_t offset;
	int ret;

	if (args->pad)
		return -EINVAL;
	ret = ttm_drm_mmap_offset(file, args->handle, &offset);
	if (ret == 0)
		args->offset = offset;
	return ret;
}

int drm_ioctl_destroy_dumb(struct ttm_drm_file *file, void *data)
{
	struct drm_mode_destroy_dumb *args = data;

	return gem_close(file, args->handle);
}
