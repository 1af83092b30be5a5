// SPDX-License-Identifier: MIT
/*
 * Where a buffer's bytes live (struct ttm_resource, as TTM's): a range of
 * pages of a limited domain, VRAM or GTT, or a block of its own in SYSTEM.
 *
 * Each limited domain has a range manager (bo/range_mgr.c, drm_mm-like)
 * over its pages and an arena: one anonymous mapping of the domain's
 * capacity, reserved but not committed (the kernel gives it pages as they
 * are touched). A resident buffer's bytes are the arena's at its offset,
 * so two buffers placed on overlapping ranges would overwrite each other
 * and the content checks of the tests and of `ttmsim run` would see it.
 * Accounting is in whole pages there: a buffer of 5 bytes takes a page,
 * as in the kernel. SYSTEM, unlimited, keeps one malloc()ed block per
 * buffer and exact bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bo/bo.h"
#include "util/compiler.h"

static bool domain_limited(int domain)
{
	return domain != TTM_DOMAIN_SYSTEM;
}

int bo_res_init_device(struct ttm_device *dev)
{
	int d, ret;

	for (d = 0; d < TTM_DOMAIN_COUNT; d++) {
		struct bo_domain *dom = &dev->domain[d];
		void *arena;

		if (!domain_limited(d))
			continue;
		/* Whole pages, as TTM's range managers (p_size in pages). */
		dom->capacity -= dom->capacity % dev->page_size;
		ret = range_mgr_init(&dom->mm, dom->capacity / dev->page_size);
		if (ret)
			goto err;
		arena = mmap(NULL, dom->capacity, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			     0);
		if (arena == MAP_FAILED) {
			range_mgr_fini(&dom->mm);
			ret = -ENOMEM;
			goto err;
		}
		dom->arena = arena;
	}
	return 0;

err:
	while (d-- > 0) {
		if (!domain_limited(d))
			continue;
		munmap(dev->domain[d].arena, dev->domain[d].capacity);
		dev->domain[d].arena = NULL;
		range_mgr_fini(&dev->domain[d].mm);
	}
	return ret;
}

void bo_res_fini_device(struct ttm_device *dev)
{
	int d;

	for (d = 0; d < TTM_DOMAIN_COUNT; d++) {
		if (!dev->domain[d].arena)
			continue;
		munmap(dev->domain[d].arena, dev->domain[d].capacity);
		range_mgr_fini(&dev->domain[d].mm);
	}
}

struct ttm_resource *bo_res_take_locked(struct ttm_device *dev,
					struct ttm_bo *bo,
					const struct bo_want *want,
					uint64_t size)
{
	int err;

	return bo_res_take_err_locked(dev, bo, want, size, &err);
}

struct ttm_resource *bo_res_take_err_locked(struct ttm_device *dev,
					    struct ttm_bo *bo,
					    const struct bo_want *want,
					    uint64_t size, int *ret_err)
{
	struct bo_domain *dom = &dev->domain[want->domain];
	struct ttm_resource *res;
	uint64_t bytes = size;

	*ret_err = -ENOSPC;
	if (domain_limited(want->domain)) {
		bytes = bo_pages(dev, size) * dev->page_size;
		/* Cheap refusal before the allocation and the search. */
		if (dom->capacity - dom->used < bytes)
			return NULL;
	}
	res = calloc(1, sizeof(*res));
	if (!res) {
		*ret_err = -ENOMEM;
		return NULL;
	}
	if (domain_limited(want->domain)) {
		if (range_mgr_insert(&dom->mm, &res->node, bytes >> dev->page_shift,
				     1, want->fpfn, want->lpfn, want->flags)) {
			free(res);
			return NULL;
		}
	} else {
		res->node.size = (uint32_t)bytes; /* at most TTM_BO_MAX_SIZE */
	}
	res->node.tag = (uint8_t)want->domain;
	res->bo = bo;
	dom->used += bytes;
	dom->incoming += bytes;
	*ret_err = 0;
	return res;
}

void bo_res_release_locked(struct ttm_device *dev, struct ttm_resource *res)
{
	struct bo_domain *dom = &dev->domain[bo_res_domain(res)];

	if (domain_limited(bo_res_domain(res)))
		range_mgr_remove(&dom->mm, &res->node);
	dom->used -= bo_res_bytes(dev, res);
}

void bo_res_untake_locked(struct ttm_device *dev, struct ttm_resource *res)
{
	dev->domain[bo_res_domain(res)].incoming -= bo_res_bytes(dev, res);
	bo_res_release_locked(dev, res);
}

void bo_res_free(struct ttm_resource *res)
{
	if (res && !domain_limited(bo_res_domain(res)))
		free(res->sys.mem);
	free(res);
}

int bo_res_fill(struct ttm_device *dev, struct ttm_resource *res,
		uint64_t size, bool zero)
{
	if (domain_limited(bo_res_domain(res)) || res->sys.mem) {
		if (zero)
			memset(bo_res_mem(dev, res), 0, size);
		return 0;
	}
	/*
	 * calloc(): aligned for any type (at least 8 bytes, more than the
	 * GPU's 4), and for large sizes the zero pages come from mmap()
	 * lazily: a big buffer costs nothing until touched.
	 */
	res->sys.mem = zero ? calloc(1, size) : malloc(size);
	return res->sys.mem ? 0 : -ENOMEM;
}

struct bo_want bo_want_of(const struct ttm_device *dev,
			  const struct ttm_place *place)
{
	struct bo_want want = { .domain = place->domain };

	if (!domain_limited(place->domain))
		return want;
	bo_place_range(dev, place, &want.fpfn, &want.lpfn);
	/*
	 * Empty: no take nor scan can succeed in it (range_mgr_insert()),
	 * and no range lies in it. Never lpfn 0, which means the whole
	 * domain: an empty window at page 0 (no visible VRAM) would be.
	 */
	if (want.lpfn <= want.fpfn)
		want.fpfn = want.lpfn = UINT64_MAX;
	if (place->flags & TTM_PLACE_TOPDOWN)
		want.flags |= RANGE_TOPDOWN;
	return want;
}

bool bo_res_fits(const struct ttm_bo *bo, const struct bo_want *want)
{
	const struct ttm_resource *res = bo->res;
	uint64_t end;

	if (bo_res_domain(res) != want->domain)
		return false;
	if (!domain_limited(bo_res_domain(res)))
		return true;
	end = (uint64_t)res->node.start + res->node.size;
	return res->node.start >= want->fpfn &&
	       (!want->lpfn || end <= want->lpfn);
}

TTM_EXPORT uint64_t ttm_bo_offset(const struct ttm_bo *bo)
{
	const struct ttm_resource *res = bo->res;

	if (!domain_limited(bo_res_domain(res)))
		return 0;
	return (uint64_t)res->node.start * bo->dev->page_size;
}
