// SPDX-License-Identifier: MIT
/*
 * ttm_drm_mmap(): a mapping is the buffer's own memory, pinned while
 * mapped. A buffer in SYSTEM (malloc()ed, not page-aligned) is first
 * moved to GTT, whose arena is mmap()ed and page-aligned, so the address
 * can be what mmap(2) returns in the shim. Why pinning rather than memory
 * a move remaps in place: docs/drm-design.md, "mmap".
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "drm_priv.h"
#include "ttmsim/bo.h"
#include "ttmsim/resv.h"
#include "util/compiler.h"

/*
 * Pin @bo, reserved, where a process can map it: moved to GTT if it is in
 * SYSTEM, and with its move done, so that the memory under the address
 * (*@ret_addr, ttm_bo_vmap()'s, valid while the pin lasts) holds its
 * contents.
 */
static int pin_mappable(struct ttm_bo *bo, void **ret_addr)
{
	struct ttm_placement gtt = {
		.count = 1, .places = { TTM_PLACE_INIT(TTM_DOMAIN_GTT) },
	};
	struct ttm_operation_ctx ctx = { .interruptible = true };
	int ret;

	if (ttm_bo_domain(bo) == TTM_DOMAIN_SYSTEM && !ttm_bo_pin_count(bo)) {
		ret = ttm_bo_validate(bo, &gtt, &ctx);
		if (ret)
			return ret;
	}
	ret = ttm_bo_pin(bo);
	if (ret)
		return ret;
	/* The move's copy must land before the CPU writes. */
	ret = ttm_resv_wait(ttm_bo_resv(bo), TTM_RESV_USAGE_KERNEL, true, -1);
	if (ret == 0)
		ret = ttm_bo_vmap(bo, ret_addr);
	/*
	 * A buffer already pinned in SYSTEM (or an import whose exporter
	 * is there) stays in malloc()ed memory: mmap(2) cannot return
	 * that address, so it cannot be mapped.
	 */
	if (ret == 0 && (uintptr_t)*ret_addr % (uintptr_t)sysconf(_SC_PAGESIZE)) {
		ttm_bo_vunmap(bo, *ret_addr);
		ret = -EINVAL;
	}
	if (ret)
		ttm_bo_unpin(bo);
	return ret;
}

static int add_mapping(struct ttm_drm_file *file, void *addr, size_t length,
		       struct ttm_bo *bo)
{
	if (file->num_maps == file->cap_maps) {
		unsigned int cap = file->cap_maps ? 2 * file->cap_maps : 8;
		struct drm_mapping *maps;

		maps = realloc(file->maps, cap * sizeof(*maps));
		if (!maps)
			return -ENOMEM;
		file->maps = maps;
		file->cap_maps = cap;
	}
	file->maps[file->num_maps++] = (struct drm_mapping){
		.addr = addr, .length = length, .bo = bo,
	};
	return 0;
}

/* Undo pin_mappable(): @addr was its address. */
static void unpin(struct ttm_bo *bo, void *addr)
{
	/* Without an interrupt to end it, the reservation always comes. */
	if (ttm_bo_reserve(bo, false, false, NULL) == 0) {
		ttm_bo_vunmap(bo, addr);
		ttm_bo_unpin(bo);
		ttm_bo_unreserve(bo);
	}
}

TTM_EXPORT int ttm_drm_mmap(struct ttm_drm_file *file, uint64_t offset,
			    size_t length, void **ret_addr)
{
	struct ttm_drm_device *ddev = file->ddev;
	struct drm_offset_node *node;
	struct ttm_bo *bo = NULL;
	void *addr;
	int ret = 0;

	if (!length)
		return -EINVAL;
	pthread_mutex_lock(&ddev->lock);
	node = drm_offset_lookup(ddev, offset);
	/* Only whole buffers, from their start: no partial mappings. */
	if (!node || node->start != offset || length > node->size)
		ret = -EINVAL;
	else if (!drm_offset_allowed(node, file))
		ret = -EACCES;
	else
		bo = ttm_bo_get(node->bo);
	pthread_mutex_unlock(&ddev->lock);
	if (ret)
		return ret;

	ret = ttm_bo_reserve(bo, true, false, NULL);
	if (ret)
		goto put;
	ret = pin_mappable(bo, &addr);
	ttm_bo_unreserve(bo);
	if (ret)
		goto put;
	pthread_mutex_lock(&ddev->lock);
	ret = add_mapping(file, addr, length, bo);
	pthread_mutex_unlock(&ddev->lock);
	if (ret) {
		unpin(bo, addr);
		goto put;
	}
	*ret_addr = addr;
	return 0;   /* the mapping keeps the reference */
put:
	ttm_bo_put(bo);
	return ret;
}

TTM_EXPORT int ttm_drm_munmap(struct ttm_drm_file *file, void *addr,
			      size_t length)
{
	struct ttm_drm_device *ddev = file->ddev;
	struct ttm_bo *bo = NULL;

	pthread_mutex_lock(&ddev->lock);
	for (unsigned int i = 0; i < file->num_maps; i++) {
		if (file->maps[i].addr == addr &&
		    file->maps[i].length == length) {
			bo = file->maps[i].bo;
			file->maps[i] = file->maps[--file->num_maps];
			break;
		}
	}
	pthread_mutex_unlock(&ddev->lock);
	if (!bo)
		return -EINVAL;
	unpin(bo, addr);
	ttm_bo_put(bo);
	return 0;
}

void drm_mmap_release(struct ttm_drm_file *file)
{
	/* The file is going: no other thread uses it any more. */
	while (file->num_maps) {
		struct drm_mapping *m = &file->maps[--file->num_maps];

		unpin(m->bo, m->addr);
		ttm_bo_put(m->bo);
	}
}

TTM_EXPORT bool ttm_drm_device_mem_overlaps(struct ttm_drm_device *ddev,
					    const void *addr, size_t length)
{
	return ttm_device_mem_overlaps(ttm_drm_device_ttm(ddev), addr, length);
}
