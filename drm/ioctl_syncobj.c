// SPDX-License-Identifier: MIT
/*
 * The SYNCOBJ_* ioctls on the file's client's syncobj table
 * (ttmsim/syncobj.h): argument checks as the kernel's drm_syncobj.c
 * makes them (flags, pads, counts), the user arrays copied in (and
 * QUERY's points out) as the kernel copies them, the work done by the
 * library on the copies.
 */
#include <errno.h>
#include <stdlib.h>

#include <drm.h>

#include "drm_priv.h"
#include "ttmsim/drm.h"
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
 * A user array of @count elements of @size bytes, copied in as the
 * kernel's copy_from_user() copies it (ttm_drm_copy_from_user()): at any
 * alignment, since the copy is bytes (the kernel's takes a misaligned
 * pointer too); the library then reads the aligned copy, never the
 * caller's memory in place, where a misaligned __u32 load is undefined in
 * C. -EINVAL for none (as the kernel's), -EFAULT for a bad pointer,
 * -ENOMEM. The caller frees *@ret.
 */
static int user_array(uint64_t uptr, uint32_t count, size_t size, void **ret)
{
	*ret = NULL;
	return count ? drm_copy_array(uptr, count, size, ret) : -EINVAL;
}

/* The handles and the points of the timeline ioctls, copied in. */
static int timeline_arrays(uint64_t uhandles, uint64_t upoints,
			   uint32_t count, uint32_t **handles,
			   uint64_t **points)
{
	int ret = user_array(uhandles, count, sizeof(**handles),
			     (void **)handles);

	if (!ret)
		ret = user_array(upoints, count, sizeof(**points),
				 (void **)points);
	if (ret) {
		free(*handles);
		*handles = NULL;
	}
	return ret;
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
	uint32_t *handles;
	int ret;

	if (args->flags & ~(DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL |
			    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT))
		return -EINVAL;
	ret = user_array(args->handles, args->count_handles, sizeof(*handles),
			 (void **)&handles);
	if (ret)
		return ret;
	ret = ttm_client_syncobj_wait(file->client, handles,
				      args->count_handles, args->timeout_nsec,
				      args->flags, &first);
	free(handles);
	if (ret == 0)
		args->first_signaled = first;
	return ret;
}

int drm_ioctl_syncobj_timeline_wait(struct ttm_drm_file *file, void *data)
{
	struct drm_syncobj_timeline_wait *args = data;
	unsigned int first = 0;
	uint32_t *handles;
	uint64_t *points;
	int ret;

	if (args->flags & ~(DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL |
			    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT |
			    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE))
		return -EINVAL;
	ret = timeline_arrays(args->handles, args->points, args->count_handles,
			      &handles, &points);
	if (ret)
		return ret;
	ret = ttm_client_syncobj_timeline_wait(file->client, handles, points,
					       args->count_handles,
					       args->timeout_nsec,
					       args->flags, &first);
	free(handles);
	free(points);
	if (ret == 0)
		args->first_signaled = first;
	return ret;
}

/* RESET and SIGNAL: pad zero, the handles copied in, then @op on them. */
static int array_op(struct ttm_drm_file *file,
		    const struct drm_syncobj_array *args,
		    int (*op)(struct ttm_client *, const uint32_t *,
			      unsigned int))
{
	uint32_t *handles;
	int ret;

	if (args->pad)
		return -EINVAL;
	ret = user_array(args->handles, args->count_handles, sizeof(*handles),
			 (void **)&handles);
	if (ret)
		return ret;
	ret = op(file->client, handles, args->count_handles);
	free(handles);
	return ret;
}

int drm_ioctl_syncobj_reset(struct ttm_drm_file *file, void *data)
{
	return array_op(file, data, ttm_client_syncobj_reset);
}

int drm_ioctl_syncobj_signal(struct ttm_drm_file *file, void *data)
{
	return array_op(file, data, ttm_client_syncobj_signal);
}

int drm_ioctl_syncobj_timeline_signal(struct ttm_drm_file *file, void *data)
{
	struct drm_syncobj_timeline_array *args = data;
	uint32_t *handles;
	uint64_t *points;
	int ret;

	/* The kernel defines no flag for a signal. */
	if (args->flags)
		return -EINVAL;
	ret = timeline_arrays(args->handles, args->points, args->count_handles,
			      &handles, &points);
	if (ret)
		return ret;
	ret = ttm_client_syncobj_timeline_signal(file->client, handles, points,
						 args->count_handles);
	free(handles);
	free(points);
	return ret;
}

/*
 * QUERY's points are written, not read: copied in only to check the
 * range and readability the way the other ioctls do, answered into the
 * copy, and copied back out (the kernel's copy_to_user(), any alignment)
 * on success only.
 */
int drm_ioctl_syncobj_query(struct ttm_drm_file *file, void *data)
{
	struct drm_syncobj_timeline_array *args = data;
	uint32_t *handles;
	uint64_t *points;
	int ret;

	if (args->flags & ~DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED)
		return -EINVAL;
	ret = timeline_arrays(args->handles, args->points, args->count_handles,
			      &handles, &points);
	if (ret)
		return ret;
	ret = ttm_client_syncobj_query(file->client, handles, points,
				       args->count_handles, args->flags);
	if (ret == 0)
		ret = drm_copy_to_user(args->points, points,
				       (size_t)args->count_handles *
				       sizeof(*points));
	free(handles);
	free(points);
	return ret;
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
