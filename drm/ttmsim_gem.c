// SPDX-License-Identifier: MIT
/*
 * The ttmsim driver's buffer ioctls: GEM_CREATE (a placement from domain
 * flags), GEM_MMAP_OFFSET (the core's fake offset) and GEM_WAIT (on the
 * device's clock, virtual or real).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "ttmsim_ioctl.h"
#include "gpu_sim/gpu.h"
#include "ttmsim/execbuf.h"
#include "ttmsim/ttmsim_drm.h"
#include "util/time.h"

/* The uAPI's domain bits, in the order a placement tries them. */
static const struct {
	uint32_t bit;
	enum ttm_domain domain;
} domain_order[] = {
	{ DRM_TTMSIM_GEM_DOMAIN_VRAM, TTM_DOMAIN_VRAM },
	{ DRM_TTMSIM_GEM_DOMAIN_GTT, TTM_DOMAIN_GTT },
	{ DRM_TTMSIM_GEM_DOMAIN_SYSTEM, TTM_DOMAIN_SYSTEM },
};

/*
 * @args' placement: one place per domain asked for. SYSTEM has no
 * addresses, so the range and the allocation flags go to VRAM and GTT
 * only; CPU_VISIBLE to VRAM only.
 */
static int gem_placement(const struct drm_ttmsim_gem_create *args,
			 struct ttm_placement *placement)
{
	const uint32_t alloc = DRM_TTMSIM_GEM_CONTIGUOUS |
			       DRM_TTMSIM_GEM_TOPDOWN;
	bool range = args->flags & DRM_TTMSIM_GEM_RANGE;
	unsigned int i;

	if ((args->flags & ~DRM_TTMSIM_GEM_CREATE_FLAGS) || args->pad ||
	    !args->domains || (args->domains & ~DRM_TTMSIM_GEM_DOMAIN_MASK) ||
	    (!range && (args->fpfn || args->lpfn)) ||
	    (range && args->lpfn && args->lpfn <= args->fpfn))
		return -EINVAL;
	if ((args->flags & DRM_TTMSIM_GEM_CPU_VISIBLE) &&
	    !(args->domains & DRM_TTMSIM_GEM_DOMAIN_VRAM))
		return -EINVAL;
	if ((range || (args->flags & alloc)) &&
	    args->domains == DRM_TTMSIM_GEM_DOMAIN_SYSTEM)
		return -EINVAL;

	placement->count = 0;
	for (i = 0; i < sizeof(domain_order) / sizeof(domain_order[0]); i++) {
		struct ttm_place *p = &placement->places[placement->count];

		if (!(args->domains & domain_order[i].bit))
			continue;
		*p = ttm_place_domain(domain_order[i].domain);
		if (p->domain != TTM_DOMAIN_SYSTEM) {
			if (range) {
				p->fpfn = args->fpfn;
				p->lpfn = args->lpfn;
			}
			if (args->flags & DRM_TTMSIM_GEM_CONTIGUOUS)
				p->flags |= TTM_PLACE_CONTIGUOUS;
			if (args->flags & DRM_TTMSIM_GEM_TOPDOWN)
				p->flags |= TTM_PLACE_TOPDOWN;
		}
		if (p->domain == TTM_DOMAIN_VRAM &&
		    (args->flags & DRM_TTMSIM_GEM_CPU_VISIBLE))
			p->flags |= TTM_PLACE_CPU_VISIBLE;
		placement->count++;
	}
	return 0;
}

int ttmsim_gem_create_ioctl(struct ttm_drm_file *file, void *data)
{
	struct drm_ttmsim_gem_create *args = data;
	struct ttm_client *client = ttm_drm_file_client(file);
	uint64_t page = ttm_device_page_size(ttm_client_device(client));
	struct ttm_placement placement;
	uint64_t size;
	uint32_t handle;
	int ret;

	ret = gem_placement(args, &placement);
	if (ret)
		return ret;
	/* Checked before rounding, which could wrap. */
	if (args->size == 0 || args->size > TTM_BO_MAX_SIZE)
		return -EINVAL;
	size = (args->size + page - 1) & ~(page - 1);
	if (size > TTM_BO_MAX_SIZE)
		return -EINVAL;
	ret = ttm_client_bo_create(client, size, &placement, 0, &handle);
	if (ret)
		return ret;
	args->size = size;
	args->handle = handle;
	return 0;
}

int ttmsim_gem_mmap_offset_ioctl(struct ttm_drm_file *file, void *data)
{
	struct drm_ttmsim_gem_mmap_offset *args = data;
	uint64_t offset;
	int ret;

	if (args->flags)
		return -EINVAL;
	ret = ttm_drm_mmap_offset(file, args->handle, &offset);
	if (ret)
		return ret;
	args->offset = offset;
	return 0;
}

struct wait_state {
	struct ttm_resv *resv;
	enum ttm_resv_usage usage;
};

static bool wait_busy(void *data)
{
	struct wait_state *w = data;

	return !ttm_resv_test_signaled(w->resv, w->usage);
}

/*
 * On the virtual clock a timeout is virtual time: let it pass event by
 * event (as ttm_sched_entity_destroy()) until @w is idle, so that the
 * outcome never depends on the machine's speed. A finite wait that finds
 * nothing left to happen on the GPU does not block: virtual time cannot
 * reach its deadline without an event.
 */
static int wait_virtual(struct ttm_gpu *gpu, struct wait_state *w,
			uint64_t deadline_ns, bool forever)
{
	uint64_t now_ns = ttm_gpu_now_us(gpu) * 1000u;
	uint64_t us;

	if (forever)
		us = UINT64_MAX / 2;  /* far, without wrapping now + us */
	else if (deadline_ns > now_ns)
		us = (deadline_ns - now_ns + 999) / 1000;
	else
		us = 0;
	if (us && wait_busy(w))
		gpu_clock_run(gpu, us, wait_busy, w);
	if (!wait_busy(w))
		return 0;
	if (forever)
		return ttm_resv_wait(w->resv, w->usage, true, -1);
	return -ETIME;
}

int ttmsim_gem_wait_ioctl(struct ttm_drm_file *file, void *data)
{
	const uint32_t rw = DRM_TTMSIM_WAIT_READ | DRM_TTMSIM_WAIT_WRITE;
	struct drm_ttmsim_gem_wait *args = data;
	struct ttm_client *client = ttm_drm_file_client(file);
	struct ttm_gpu *gpu = ttm_device_gpu(ttm_client_device(client));
	bool forever = args->timeout_ns > INT64_MAX;
	bool absolute = args->flags & DRM_TTMSIM_WAIT_ABSOLUTE;
	struct wait_state w;
	struct ttm_bo *bo;
	uint64_t now_ns;
	int ret;

	if ((args->flags & ~DRM_TTMSIM_WAIT_FLAGS) || !(args->flags & rw))
		return -EINVAL;
	bo = ttm_client_lookup(client, args->handle);
	if (!bo)
		return -ENOENT;
	w.resv = ttm_bo_resv(bo);
	/* A CPU write waits for readers too, a read only for writers. */
	w.usage = ttm_resv_usage_rw(args->flags & DRM_TTMSIM_WAIT_WRITE);

	if (gpu && gpu_is_virtual(gpu)) {
		now_ns = ttm_gpu_now_us(gpu) * 1000u;
		ret = wait_virtual(gpu, &w, absolute ? args->timeout_ns :
				   now_ns + args->timeout_ns, forever);
	} else if (forever) {
		ret = ttm_resv_wait(w.resv, w.usage, true, -1);
	} else {
		int64_t timeout = (int64_t)args->timeout_ns;

		if (absolute) {
			now_ns = mono_ns();
			timeout = args->timeout_ns > now_ns ?
				  (int64_t)(args->timeout_ns - now_ns) : 0;
		}
		ret = ttm_resv_wait(w.resv, w.usage, true, timeout);
	}
	ttm_bo_put(bo);
	return ret;
}
