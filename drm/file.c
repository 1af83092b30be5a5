// SPDX-License-Identifier: MIT
/*
 * DRM devices and the files opened on their nodes: a file is a ttm_client
 * (GEM handles and syncobjs) plus its node, mastership and driver state.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <drm.h>

#include "drm_priv.h"
#include "util/compiler.h"

TTM_EXPORT int ttm_drm_device_create(struct ttm_device *dev,
				     const struct ttm_drm_driver *driver,
				     struct ttm_drm_device **ret_ddev)
{
	struct ttm_drm_device *ddev;
	long host_page = sysconf(_SC_PAGESIZE);

	if (!dev || !driver || !driver->name || !ret_ddev)
		return -EINVAL;
	if (driver->num_ioctls > DRM_COMMAND_END - DRM_COMMAND_BASE ||
	    (driver->num_ioctls && !driver->ioctls))
		return -EINVAL;
	/*
	 * A mapping is the buffer's own memory; the shim returns it from
	 * mmap(2), so it must start on a page of the host: device pages
	 * smaller than the host's would give unaligned buffers.
	 */
	if (host_page <= 0 || ttm_device_page_size(dev) % (uint64_t)host_page)
		return -EINVAL;
	ddev = calloc(1, sizeof(*ddev));
	if (!ddev)
		return -ENOMEM;
	ddev->dev = dev;
	ddev->driver = driver;
	ddev->page_size = ttm_device_page_size(dev);
	pthread_mutex_init(&ddev->lock, NULL);
	list_init(&ddev->files);
	*ret_ddev = ddev;
	return 0;
}

TTM_EXPORT void ttm_drm_device_destroy(struct ttm_drm_device *ddev)
{
	if (!ddev)
		return;
	/* The caller's bug; leaking beats a use after free of the files. */
	if (!list_empty(&ddev->files))
		return;
	drm_offset_fini(ddev);
	pthread_mutex_destroy(&ddev->lock);
	free(ddev);
}

TTM_EXPORT struct ttm_device *ttm_drm_device_ttm(struct ttm_drm_device *ddev)
{
	return ddev->dev;
}

TTM_EXPORT int ttm_drm_open(struct ttm_drm_device *ddev,
			    enum ttm_drm_node node,
			    struct ttm_drm_file **ret_file)
{
	struct ttm_drm_file *file;
	int ret;

	if (node != TTM_DRM_NODE_PRIMARY && node != TTM_DRM_NODE_RENDER)
		return -EINVAL;
	file = calloc(1, sizeof(*file));
	if (!file)
		return -ENOMEM;
	file->ddev = ddev;
	file->node = node;
	ret = ttm_client_open(ddev->dev, &file->client);
	if (ret) {
		free(file);
		return ret;
	}
	if (ddev->driver->open) {
		ret = ddev->driver->open(file);
		if (ret) {
			ttm_client_close(file->client);
			free(file);
			return ret;
		}
	}
	pthread_mutex_lock(&ddev->lock);
	/* As the kernel: the first opener of the primary node is master. */
	if (node == TTM_DRM_NODE_PRIMARY && !ddev->master)
		ddev->master = file;
	file->magic = ++ddev->next_magic;
	/* CAP_SYS_ADMIN is authenticated from the start, as the kernel's. */
	file->authenticated = geteuid() == 0;
	list_add_tail(&file->link, &ddev->files);
	pthread_mutex_unlock(&ddev->lock);
	*ret_file = file;
	return 0;
}

TTM_EXPORT void ttm_drm_close(struct ttm_drm_file *file)
{
	struct ttm_drm_device *ddev;

	if (!file)
		return;
	ddev = file->ddev;
	if (ddev->driver->postclose)
		ddev->driver->postclose(file);
	drm_mmap_release(file);
	drm_offset_revoke_put(file, NULL);
	pthread_mutex_lock(&ddev->lock);
	/* No master until the next primary-node open, as the kernel's. */
	if (ddev->master == file)
		ddev->master = NULL;
	list_del(&file->link);
	pthread_mutex_unlock(&ddev->lock);
	ttm_client_close(file->client);
	free(file->maps);
	free(file);
}

TTM_EXPORT struct ttm_client *ttm_drm_file_client(struct ttm_drm_file *file)
{
	return file->client;
}

TTM_EXPORT void *ttm_drm_file_driver_priv(struct ttm_drm_file *file)
{
	return file->driver_priv;
}

TTM_EXPORT void ttm_drm_file_set_driver_priv(struct ttm_drm_file *file,
					     void *priv)
{
	file->driver_priv = priv;
}

TTM_EXPORT enum ttm_drm_node ttm_drm_file_node(const struct ttm_drm_file *file)
{
	return file->node;
}

TTM_EXPORT struct ttm_drm_device *ttm_drm_file_device(struct ttm_drm_file *file)
{
	return file->ddev;
}

TTM_EXPORT bool ttm_drm_file_is_master(struct ttm_drm_file *file)
{
	bool master;

	pthread_mutex_lock(&file->ddev->lock);
	master = file->ddev->master == file;
	pthread_mutex_unlock(&file->ddev->lock);
	return master;
}
