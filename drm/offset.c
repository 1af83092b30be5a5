// SPDX-License-Identifier: MIT
/*
 * The device's fake mmap offset space, as the kernel's
 * drm_vma_offset_manager: each buffer asked for gets a range of page
 * offsets of its size, unique in the device, stable while the node lives,
 * and a list of the files allowed to map it (drm_vma_node_allow()). Here
 * a file is allowed when it asks (MAP_DUMB, ttm_drm_mmap_offset()), and
 * loses the right when it closes its handle through the front end or
 * closes; the node, which holds a reference to the buffer, goes with the
 * last right (docs/drm-design.md, "mmap").
 *
 * Offsets start at 4 GiB, past anything a 32-bit-offset mistake makes,
 * as the kernel's DRM_FILE_PAGE_OFFSET_START; nodes are kept sorted in an
 * array, new ones at the end of the space (first fit after the last),
 * which is enough for a simulator's few thousand buffers.
 */
#include <errno.h>
#include <stdlib.h>

#include "drm_priv.h"
#include "util/compiler.h"

#define OFFSET_START (1ull << 32)
/* Keep off the top: off_t is signed, and offset + size must not wrap. */
#define OFFSET_END (1ull << 62)

static struct drm_offset_node *node_of_bo(struct ttm_drm_device *ddev,
					  struct ttm_bo *bo)
{
	for (unsigned int i = 0; i < ddev->num_nodes; i++)
		if (ddev->nodes[i]->bo == bo)
			return ddev->nodes[i];
	return NULL;
}

struct drm_offset_node *drm_offset_lookup(struct ttm_drm_device *ddev,
					  uint64_t offset)
{
	unsigned int lo = 0, hi = ddev->num_nodes;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		struct drm_offset_node *n = ddev->nodes[mid];

		if (offset < n->start)
			hi = mid;
		else if (offset >= n->start + n->size)
			lo = mid + 1;
		else
			return n;
	}
	return NULL;
}

bool drm_offset_allowed(const struct drm_offset_node *node,
			const struct ttm_drm_file *file)
{
	for (unsigned int i = 0; i < node->num_allowed; i++)
		if (node->allowed[i] == file)
			return true;
	return false;
}

static int node_allow(struct drm_offset_node *node, struct ttm_drm_file *file)
{
	struct ttm_drm_file **a;

	if (drm_offset_allowed(node, file))
		return 0;
	a = realloc(node->allowed, (node->num_allowed + 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	a[node->num_allowed++] = file;
	node->allowed = a;
	return 0;
}

/* A new node for @bo at the end of the space; takes a reference. */
static int node_add(struct ttm_drm_device *ddev, struct ttm_bo *bo,
		    struct drm_offset_node **ret)
{
	uint64_t size = ttm_bo_size(bo);
	uint64_t start = OFFSET_START;
	struct drm_offset_node *node;

	size = (size + ddev->page_size - 1) / ddev->page_size * ddev->page_size;
	if (ddev->num_nodes) {
		struct drm_offset_node *last = ddev->nodes[ddev->num_nodes - 1];

		start = last->start + last->size;
	}
	if (size > OFFSET_END - start)
		return -ENOSPC;
	if (ddev->num_nodes == ddev->cap_nodes) {
		unsigned int cap = ddev->cap_nodes ? 2 * ddev->cap_nodes : 16;
		struct drm_offset_node **nodes;

		nodes = realloc(ddev->nodes, cap * sizeof(*nodes));
		if (!nodes)
			return -ENOMEM;
		ddev->nodes = nodes;
		ddev->cap_nodes = cap;
	}
	node = calloc(1, sizeof(*node));
	if (!node)
		return -ENOMEM;
	node->bo = ttm_bo_get(bo);
	node->start = start;
	node->size = size;
	ddev->nodes[ddev->num_nodes++] = node;
	*ret = node;
	return 0;
}

/* Drop node @i; the buffer's reference goes after the lock is let go. */
static struct ttm_bo *node_remove(struct ttm_drm_device *ddev, unsigned int i)
{
	struct drm_offset_node *node = ddev->nodes[i];
	struct ttm_bo *bo = node->bo;

	for (; i + 1 < ddev->num_nodes; i++)
		ddev->nodes[i] = ddev->nodes[i + 1];
	ddev->num_nodes--;
	free(node->allowed);
	free(node);
	return bo;
}

TTM_EXPORT int ttm_drm_mmap_offset(struct ttm_drm_file *file, uint32_t handle,
				   uint64_t *ret_offset)
{
	struct ttm_drm_device *ddev = file->ddev;
	struct drm_offset_node *node;
	struct ttm_bo *bo, *dropped = NULL;
	int ret = 0;

	bo = ttm_client_lookup(file->client, handle);
	if (!bo)
		return -ENOENT;
	pthread_mutex_lock(&ddev->lock);
	node = node_of_bo(ddev, bo);
	if (!node)
		ret = node_add(ddev, bo, &node);
	if (!ret) {
		ret = node_allow(node, file);
		if (!ret)
			*ret_offset = node->start;
		else if (!node->num_allowed) /* just added: the last one */
			dropped = node_remove(ddev, ddev->num_nodes - 1);
	}
	pthread_mutex_unlock(&ddev->lock);
	ttm_bo_put(bo);
	if (dropped)
		ttm_bo_put(dropped);
	return ret;
}

struct ttm_bo *drm_offset_revoke(struct ttm_drm_file *file,
				 struct ttm_bo *bo)
{
	struct ttm_drm_device *ddev = file->ddev;

	for (unsigned int i = 0; i < ddev->num_nodes; i++) {
		struct drm_offset_node *node = ddev->nodes[i];

		if (bo && node->bo != bo)
			continue;
		for (unsigned int j = 0; j < node->num_allowed; j++) {
			if (node->allowed[j] == file) {
				node->allowed[j] =
					node->allowed[--node->num_allowed];
				break;
			}
		}
		if (!node->num_allowed)
			return node_remove(ddev, i);
	}
	return NULL;
}

void drm_offset_revoke_put(struct ttm_drm_file *file, struct ttm_bo *bo)
{
	struct ttm_bo *put;

	/* One node at a time: its buffer is put with the lock let go. */
	do {
		pthread_mutex_lock(&file->ddev->lock);
		put = drm_offset_revoke(file, bo);
		pthread_mutex_unlock(&file->ddev->lock);
		if (put)
			ttm_bo_put(put);
	} while (put);
}

void drm_offset_fini(struct ttm_drm_device *ddev)
{
	/* Every file closed revoked its rights: no node is left. */
	free(ddev->nodes);
}
