// SPDX-License-Identifier: MIT
/*
 * The core ioctls about the device and the file: VERSION, GET_CAP,
 * SET_CLIENT_CAP, GET_MAGIC and AUTH_MAGIC, answering as the kernel does
 * for a render-capable GEM driver without modesetting that has dumb
 * buffers (docs/drm-design.md, "Capabilities").
 */
#include <errno.h>
#include <string.h>

#include <drm.h>

#include "drm_priv.h"
#include "util/compiler.h"

/*
 * One string of VERSION: as much of @value as the caller's @len holds,
 * no NUL added, and *@len set to the full length, so that a first call
 * with zero lengths sizes the buffers (libdrm's drmGetVersion()). A NULL
 * buffer is skipped, as the kernel's drm_copy_field() does. A pointer
 * inside the address range but not mapped (or read-only) is -EFAULT, as
 * the kernel's copy_to_user() makes it, not a crash of the caller: the
 * copy goes through drm_copy_to_user().
 */
static int copy_field(uint64_t uptr, __kernel_size_t *len, const char *value)
{
	size_t full = value ? strlen(value) : 0;
	size_t n = full < *len ? full : *len;

	if (n && uptr) {
		int ret = drm_copy_to_user(uptr, value, n);

		if (ret)
			return ret;
	}
	*len = full;
	return 0;
}

int drm_ioctl_version(struct ttm_drm_file *file, void *data)
{
	const struct ttm_drm_driver *drv = file->ddev->driver;
	struct drm_version *v = data;
	struct drm_version out = *v;
	int ret;

	out.version_major = drv->major;
	out.version_minor = drv->minor;
	out.version_patchlevel = drv->patchlevel;
	ret = copy_field((uintptr_t)v->name, &out.name_len, drv->name);
	if (!ret)
		ret = copy_field((uintptr_t)v->date, &out.date_len, drv->date);
	if (!ret)
		ret = copy_field((uintptr_t)v->desc, &out.desc_len, drv->desc);
	if (!ret)
		*v = out;
	return ret;
}

int drm_ioctl_get_cap(struct ttm_drm_file *file, void *data)
{
	struct drm_get_cap *cap = data;

	(void)file;
	switch (cap->capability) {
	case DRM_CAP_DUMB_BUFFER:
	case DRM_CAP_TIMESTAMP_MONOTONIC:
	case DRM_CAP_SYNCOBJ:
	case DRM_CAP_SYNCOBJ_TIMELINE:
		cap->value = 1;
		return 0;
	case DRM_CAP_PRIME:
		cap->value = DRM_PRIME_CAP_IMPORT | DRM_PRIME_CAP_EXPORT;
		return 0;
	/* No preferred depth, no shadow needed: the kernel's defaults. */
	case DRM_CAP_DUMB_PREFERRED_DEPTH:
	case DRM_CAP_DUMB_PREFER_SHADOW:
		cap->value = 0;
		return 0;
	/* Modesetting's: the kernel's answer for a driver without it. */
	case DRM_CAP_VBLANK_HIGH_CRTC:
	case DRM_CAP_ASYNC_PAGE_FLIP:
	case DRM_CAP_CURSOR_WIDTH:
	case DRM_CAP_CURSOR_HEIGHT:
	case DRM_CAP_ADDFB2_MODIFIERS:
	case DRM_CAP_PAGE_FLIP_TARGET:
	case DRM_CAP_CRTC_IN_VBLANK_EVENT:
	case 0x15: /* DRM_CAP_ATOMIC_ASYNC_PAGE_FLIP, newer than our libdrm */
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}
}

int drm_ioctl_set_client_cap(struct ttm_drm_file *file, void *data)
{
	/*
	 * Every client cap is modesetting's (stereo, planes, atomic, aspect
	 * ratio, writeback, hotspots): the kernel refuses them all, known or
	 * not, on a driver without it, before looking at the cap.
	 */
	(void)file;
	(void)data;
	return -EOPNOTSUPP;
}

int drm_ioctl_get_magic(struct ttm_drm_file *file, void *data)
{
	struct drm_auth *auth = data;

	auth->magic = file->magic;
	return 0;
}

int drm_ioctl_auth_magic(struct ttm_drm_file *file, void *data)
{
	struct ttm_drm_device *ddev = file->ddev;
	struct drm_auth *auth = data;
	struct list_node *n;
	int ret = -EINVAL;

	pthread_mutex_lock(&ddev->lock);
	list_for_each(n, &ddev->files) {
		struct ttm_drm_file *f = list_entry(n, struct ttm_drm_file,
						    link);

		if (f->node == TTM_DRM_NODE_PRIMARY && f->magic == auth->magic) {
			f->authenticated = true;
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&ddev->lock);
	return ret;
}
