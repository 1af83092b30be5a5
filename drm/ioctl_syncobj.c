// SPDX-License-Identifier: MIT
/*
 * The SYNCOBJ_* ioctls on the file's client's syncobj table
 * (ttmsim/syncobj.h): argument checks as the kernel's drm_syncobj.c
 * makes them (flags, pads, counts), the user arrays checked for
 * -EFAULT, the work done by the library.
 */
#include <errno.h>

#include <drm.h>

#include "drm_priv.h"
#include "ttmsim/syncobj.h"
#include "util/compiler.h"

/* The library's flags are DRM's bits, so they pass through unchanged. */
_Static_assert(TTM_SYNCOBJ_CREATE_SIGNALED == DRM_SYNCOBJ_CREATE_SIGNALED,
	       "create flag");
_Static_assert(TTM_SYNCOBJ_WAIT_ALL == DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL &&
	       TTM_SYNCOBJ_WAIT_FOR_SUBMIT ==
	       DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT &&
	       TTM_SYNCOBJ_WAIT_AVAILABLE ==
	       DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE, "wait flags");
_Static_assert(TTM_SYNCOBJ_QUERY_LAST_SUBMITTED ==
	       DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED, "query flag");

/*
 * A user array of @count elements of @size bytes: -EINVAL for none (as
 * the kernel's), -EFAULT for a bad pointer, else the array itself: the
 * caller's memory is this process's, no copy is needed. Used in place, it
 * must be aligned to its elements (@size: 4 or 8): reading a misaligned
 * __u32 is undefined in C (UBSan stops on it; some CPUs trap), so such a
 * pointer is -EFAULT, where the kernel's copy_from_user() would take it.
 */
static int user_array(uint64_t uptr, uint32_t count, size_t size, void **ret)
{
	if (!count)
		return -EINVAL;
	if (!drm_user_ptr_ok(uptr, (uint64_t)count * size) || uptr % size)
		return -EFAULT;
	*ret = (void *)(uintptr_t)uptr;
	return 0;
}

int drm_ioctl_syncobj_create(struct ttm_drm_file *file, void *data)
{
	struct drm_syncobj_create *args = data;

	if (args->flags & ~DRM_SYNCOBJ_CREATE_SIGNALED)
		return -EINVAL;
	return ttm_client_syncobj_create(file->client, args->flags,
					 &args->handle);
}

int drm_ioctl_syncobj_destroy(struct ttm_drm_file *file, void *data)
{
	struct drm_syncobj_destroy *args = data;

	int ret;

	if (args->pad)
		return -EINVAL;
	ret = ttm_client_syncobj_destroy(file->client, args->handle);
	/* The kernel's idr_remove() miss is -EINVAL. */
	return ret == -ENOENT ? -EINVAL : ret;
}

int drm_ioctl_syncobj_handle_to_fd(struct ttm_drm_file *file, void *data)
{
	struct drm_syncobj_handle *args = data;
	int ret;

	if (args->pad ||
	    (args->flags & ~DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE))
		return -EINVAL;
	if (args->flags)
		return ttm_client_syncobj_export_sync_file(file->client,
							   args->handle,
							   &args->fd);
	ret = ttm_client_syncobj_export_fd(file->client, args->handle,
					   &args->fd);
	/* The kernel's drm_syncobj_find() miss is -EINVAL here. */
	return ret == -ENOENT ? -EINVAL : ret;
}

int drm_ioctl_syncobj_fd_to_handle(struct ttm_drm_file *file, void *data)
{
	struct drm_syncobj_handle *args = data;

	if (args->pad ||
	    (args->flags & ~DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE))
		return -EINVAL;
	if (args->flags)
		return ttm_client_syncobj_import_sync_file(file->client,
							   args->handle,
							   args->fd);
	return ttm_client_syncobj_import_fd(file->client, args->fd,
					    &args->handle);
}

int drm_ioctl_syncobj_wait(struct ttm_drm_file *file, void *data)
{
	struct drm_syncobj_wait *args = data;
	unsigned int first = 0;
	void *handles;
	int ret;

	if (args->flags & ~(DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL |
			    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT))
		return -EINVAL;
	ret = user_array(args->handles, args->count_handles, sizeof(uint32_t),
			 &handles);
	if (ret)
		return ret;
	ret = ttm_client_syncobj_wait(file->client, handles,
				      args->count_handles, args->timeout_nsec,
				      args->flags, &first);
	if (ret == 0)
		args->first_signaled = first;
	return ret;
}

int drm_ioctl_syncobj_timeline_wait(struct ttm_drm_file *file, void *data)
{
	struct drm_syncobj_timeline_wait *args = data;
	unsigned int first = 0;
	void *handles, *points;
	int ret;

	if (args->flags & ~(DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL |
			    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT |
			    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE))
		return -EINVAL;
	ret = user_array(args->handles, args->count_handles, sizeof(uint32_t),
			 &handles);
	if (!ret)
		ret = user_array(args->points, args->count_handles,
				 sizeof(uint64_t), &points);
	if (ret)
		return ret;
	ret = ttm_client_syncobj_timeline_wait(file->client, handles, points,
					       args->count_handles,
					       args->timeout_nsec,
					       args->flags, &first);
	if (ret == 0)
		args->first_signaled = first;
	return ret;
}

/* RESET's and SIGNAL's struct: pad zero, the handles. */
static int array_args(const struct drm_syncobj_array *args, void **handles)
{
	if (args->pad)
		return -EINVAL;
	return user_array(args->handles, args->count_handles, sizeof(uint32_t),
			  handles);
}

int drm_ioctl_syncobj_reset(struct ttm_drm_file *file, void *data)
{
	struct drm_syncobj_array *args = data;
	void *handles;
	int ret = array_args(args, &handles);

	return ret ? ret : ttm_client_syncobj_reset(file->client, handles,
						    args->count_handles);
}

int drm_ioctl_syncobj_signal(struct ttm_drm_file *file, void *data)
{
	struct drm_syncobj_array *args = data;
	void *handles;
	int ret = array_args(args, &handles);

	return ret ? ret : ttm_client_syncobj_signal(file->client, handles,
						     args->count_handles);
}

/* TIMELINE_SIGNAL's and QUERY's struct: the handles and their points. */
static int timeline_args(const struct drm_syncobj_timeline_array *args,
			 void **handles, void **points)
{
	int ret = user_array(args->handles, args->count_handles,
			     sizeof(uint32_t), handles);

	return ret ? ret : user_array(args->points, args->count_handles,
				      sizeof(uint64_t), points);
}

int drm_ioctl_syncobj_timeline_signal(struct ttm_drm_file *file, void *data)
{
	struct drm_syncobj_timeline_array *args = data;
	void *handles, *points;
	int ret;

	/* The kernel defines no flag for a signal. */
	if (args->flags)
		return -EINVAL;
	ret = timeline_args(args, &handles, &points);
	return ret ? ret :
		ttm_client_syncobj_timeline_signal(file->client, handles,
						   points,
						   args->count_handles);
}

int drm_ioctl_syncobj_query(struct ttm_drm_file *file, void *data)
{
	struct drm_syncobj_timeline_array *args = data;
	void *handles, *points;
	int ret;

	if (args->flags & ~DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED)
		return -EINVAL;
	ret = timeline_args(args, &handles, &points);
	return ret ? ret :
		ttm_client_syncobj_query(file->client, handles, points,
					 args->count_handles, args->flags);
}

int drm_ioctl_syncobj_transfer(struct ttm_drm_file *file, void *data)
{
	struct drm_syncobj_transfer *args = data;

	if (args->pad ||
	    (args->flags & ~DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT))
		return -EINVAL;
	return ttm_client_syncobj_transfer(file->client, args->dst_handle,
					   args->dst_point, args->src_handle,
					   args->src_point, args->flags);
}

int drm_ioctl_syncobj_eventfd(struct ttm_drm_file *file, void *data)
{
	/*
	 * Not yet: it needs a fence callback that writes an eventfd, and a
	 * way to wait for a point not yet submitted. Refused as a kernel
	 * without the feature refuses it (docs/drm-design.md).
	 */
	(void)file;
	(void)data;
	return -EOPNOTSUPP;
}
