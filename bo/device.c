// SPDX-License-Identifier: MIT
/* Devices: their domains, accounting, statistics and invariant check. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bo/bo.h"
#include "ttmsim/lru.h"
#include "util/compiler.h"
#include "ww/debug.h"

/*
 * Free the library's layers' state, after the driver's private data (the
 * driver sits above them all) and the highest layer first: each may use
 * those below it until its release returns.
 */
static void device_release_layers(struct ttm_device *dev)
{
	int i;

	for (i = BO_LAYER_COUNT - 1; i >= 0; i--)
		if (dev->layer[i].data && dev->layer[i].release)
			dev->layer[i].release(dev->layer[i].data);
}

/*
 * The class of every device that does not ask for its own, as the kernel's
 * global reservation_ww_class: one ticket may lock buffers of several
 * devices, which a buffer imported from another device (sharing the
 * exporter's reservation) needs.
 */
static DEFINE_WD_CLASS(reservation_ww_class);

/*
 * A Wound-Wait device's class of its own, named after the device's serial
 * number so that a class-mismatch report tells the two families apart.
 */
static void device_own_class(struct ttm_device *dev)
{
	static unsigned int serial;

	snprintf(dev->own_class_name, sizeof(dev->own_class_name),
		 "reservation_ww_class.wound_wait.%u",
		 __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED));
	dev->own_class = (struct ww_class){ .name = dev->own_class_name };
	dev->ww_class = &dev->own_class;
}

/*
 * Check @opts' sizes and fill in their defaults: capacities, page size
 * and visible VRAM of the new device; -EINVAL for bad ones.
 */
static int device_sizes(const struct ttm_device_options *opts,
			uint64_t *vram, uint64_t *gtt, uint64_t *page,
			uint64_t *visible)
{
	*vram = opts->vram_size ? opts->vram_size : TTM_DEFAULT_VRAM_SIZE;
	*gtt = opts->gtt_size ? opts->gtt_size : TTM_DEFAULT_GTT_SIZE;
	*page = opts->page_size ? opts->page_size : TTM_DEFAULT_PAGE_SIZE;
	if (*page < 4 || (*page & (*page - 1)))
		return -EINVAL;
	/* struct ttm_place counts pages in 32 bits, as TTM's. */
	if ((*vram - 1) / *page >= UINT32_MAX ||
	    (*gtt - 1) / *page >= UINT32_MAX)
		return -EINVAL;
	if (opts->visible_vram) {
		*visible = opts->visible_vram;
		if (*visible > *vram || *visible % *page)
			return -EINVAL;
	} else {
		/* Rounded down: visible pages are whole pages. */
		*visible = *vram / 4 / *page * *page;
	}
	return 0;
}

/* The hooks of a device without a driver's, or whose driver is done. */
static const struct ttm_device_funcs no_funcs;

TTM_EXPORT int ttm_device_create(const struct ttm_device_options *opts,
				 struct ttm_device **ret_dev)
{
	uint64_t vram, gtt, page, visible;
	static const struct ttm_device_options defaults;
	pthread_condattr_t attr;
	struct ttm_device *dev;
	int d, ret;

	if (!opts)
		opts = &defaults;
	if (opts->gpu && opts->copy_engine >= ttm_gpu_engines(opts->gpu))
		return -EINVAL;
	if (device_sizes(opts, &vram, &gtt, &page, &visible))
		return -EINVAL;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	bo_worker_init(dev);
	pthread_mutex_init(&dev->lock, NULL);
	pthread_cond_init(&dev->idle, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&dev->changed, &attr);
	pthread_condattr_destroy(&attr);
	for (d = 0; d < TTM_DOMAIN_COUNT; d++)
		list_init(&dev->domain[d].lru);
	list_init(&dev->pinned);
	list_init(&dev->walks);
	list_init(&dev->room_sleepers);
	list_init(&dev->ghosts);
	dev->domain[TTM_DOMAIN_VRAM].capacity = vram;
	dev->domain[TTM_DOMAIN_GTT].capacity = gtt;
	dev->page_size = page;
	dev->page_shift = (unsigned int)__builtin_ctzll(page);
	dev->visible_vram = visible;
	dev->domain[TTM_DOMAIN_SYSTEM].capacity = UINT64_MAX;
	ret = bo_res_init_device(dev);
	if (ret) {
		bo_worker_stop(dev);
		pthread_cond_destroy(&dev->changed);
		pthread_cond_destroy(&dev->idle);
		pthread_mutex_destroy(&dev->lock);
		free(dev);
		return ret;
	}

	if (opts->wound_wait)
		device_own_class(dev);
	else
		dev->ww_class = &reservation_ww_class;
	dev->gpu = opts->gpu;
	dev->copy_engine = opts->copy_engine;
	dev->funcs = opts->funcs ? opts->funcs : &no_funcs;
	dev->funcs_data = opts->funcs_data;
	ret = dev->gpu ? bo_device_sched_init(dev) : 0;
	if (ret) {
		bo_worker_stop(dev);
		bo_device_free(dev);
		return ret;
	}
	*ret_dev = dev;
	return 0;
}

/* Rule 12 of the ww debug checker: @live buffers of @dev outlive it. */
static void device_busy_report(struct ttm_device *dev, uint64_t live)
{
	struct ww_debug_report r = {
		.rule = WW_DEBUG_DEVICE_BUSY,
		.call = "ttm_device_destroy",
		.class_name = dev->ww_class->name,
		.object = dev,
		.count = (unsigned long)live,
	};

	ww_debug_raise(&r);
}

TTM_EXPORT int ttm_device_destroy(struct ttm_device *dev)
{
	uint64_t live;
	bool self;

	if (!dev)
		return 0;
	/*
	 * A buffer a caller still holds frees into the device at its last
	 * put, which would then touch freed memory: refuse, changing
	 * nothing. Buffers waiting for delayed destroy (counted in both
	 * numbers) and move sources in flight are the device's own, and
	 * free into it without anyone's help: wait for those.
	 */
	self = bo_worker_is_self(dev);
	pthread_mutex_lock(&dev->lock);
	live = dev->buffers - dev->zombies;
	if (live) {
		pthread_mutex_unlock(&dev->lock);
		if (ww_debug_active())
			device_busy_report(dev, live);
		return -EBUSY;
	}
	/*
	 * From a destroy on the worker (the device's last object went):
	 * the worker cannot wait for the delayed destroys it runs itself,
	 * nor join itself, and its loop still uses @dev after this
	 * returns. It frees @dev when done instead.
	 */
	if (self) {
		/*
		 * The driver may free its hooks' data once this returns:
		 * the delayed destroys still to come here call none. Only
		 * this worker reads funcs now (no buffer is alive).
		 */
		dev->funcs = &no_funcs;
		pthread_mutex_unlock(&dev->lock);
		bo_worker_free_device(dev);
		return 0;
	}
	dev->destroy_waiting = true;
	while (dev->zombies || dev->n_ghosts)
		pthread_cond_wait(&dev->idle, &dev->lock);
	dev->destroy_waiting = false;
	pthread_mutex_unlock(&dev->lock);
	/* Every delayed destroy is queued or done: let the worker finish. */
	bo_worker_stop(dev);
	bo_device_free(dev);
	return 0;
}

void bo_device_free(struct ttm_device *dev)
{
	if (dev->private && dev->release_private)
		dev->release_private(dev->private);
	device_release_layers(dev);
	/* After the layers: their entities feed these rings. */
	bo_device_sched_fini(dev);
	bo_res_fini_device(dev);
	bo_ghost_fini_device(dev);
	bo_profile_fini(dev);
	pthread_cond_destroy(&dev->changed);
	pthread_cond_destroy(&dev->idle);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

TTM_EXPORT struct ww_class *ttm_device_ww_class(struct ttm_device *dev)
{
	return dev->ww_class;
}

TTM_EXPORT struct ttm_gpu *ttm_device_gpu(struct ttm_device *dev)
{
	return dev->gpu;
}

TTM_EXPORT uint64_t ttm_device_page_size(const struct ttm_device *dev)
{
	return dev->page_size;
}

TTM_EXPORT uint64_t ttm_device_visible_vram(const struct ttm_device *dev)
{
	return dev->visible_vram;
}

TTM_EXPORT bool ttm_device_mem_overlaps(const struct ttm_device *dev,
					const void *addr, size_t length)
{
	uintptr_t a = (uintptr_t)addr;
	uintptr_t end = length > UINTPTR_MAX - a ? UINTPTR_MAX : a + length;

	if (!length)
		return false;
	for (int d = 0; d < TTM_DOMAIN_COUNT; d++) {
		uintptr_t lo = (uintptr_t)dev->domain[d].arena;

		if (lo && a < lo + dev->domain[d].capacity && lo < end)
			return true;
	}
	return false;
}

TTM_EXPORT void *ttm_device_set_private(struct ttm_device *dev, void *data,
					void (*release)(void *data))
{
	void *ret;

	pthread_mutex_lock(&dev->lock);
	if (!dev->private) {
		dev->release_private = release;
		__atomic_store_n(&dev->private, data, __ATOMIC_RELEASE);
	}
	ret = dev->private;
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

TTM_EXPORT void *ttm_device_private(struct ttm_device *dev)
{
	/* Acquire: the attached data was set up before it was published. */
	return __atomic_load_n(&dev->private, __ATOMIC_ACQUIRE);
}

void *bo_device_layer_attach(struct ttm_device *dev, enum bo_layer layer,
			     void *data, void (*release)(void *data))
{
	void *ret;

	/* As ttm_device_set_private(): the lock orders the racing firsts. */
	pthread_mutex_lock(&dev->lock);
	if (!dev->layer[layer].data) {
		dev->layer[layer].release = release;
		__atomic_store_n(&dev->layer[layer].data, data,
				 __ATOMIC_RELEASE);
	}
	ret = dev->layer[layer].data;
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

void *bo_device_layer(struct ttm_device *dev, enum bo_layer layer)
{
	/* Acquire: the state was set up before it was published. */
	return __atomic_load_n(&dev->layer[layer].data, __ATOMIC_ACQUIRE);
}

TTM_EXPORT void ttm_device_get_stats(struct ttm_device *dev,
				     struct ttm_device_stats *stats)
{
	int d;

	pthread_mutex_lock(&dev->lock);
	for (d = 0; d < TTM_DOMAIN_COUNT; d++) {
		stats->domain[d].capacity = dev->domain[d].capacity;
		stats->domain[d].used = dev->domain[d].used;
		stats->domain[d].buffers = dev->domain[d].buffers;
		stats->domain[d].pinned = dev->domain[d].pinned;
	}
	stats->buffers = dev->buffers;
	stats->zombies = dev->zombies;
	stats->evictions = dev->evictions;
	stats->moves = dev->moves;
	stats->bytes_moved = dev->bytes_moved;
	stats->enospc = dev->enospc;
	stats->room_waits = dev->room_waits;
	stats->room_wait_timeouts = dev->room_wait_timeouts;
	pthread_mutex_unlock(&dev->lock);
}

/*
 * On an LRU of domain @d, @bo follows @prev (NULL: @bo is the first, or
 * @prev the last): a bulk move's group is contiguous, and its ends are
 * the ones it records. false and a description in @buf if not.
 */
static bool bulk_ok(const struct ttm_bo *prev, const struct ttm_bo *bo,
		    int d, char *buf, size_t len)
{
	struct ttm_lru_bulk_move *pb = prev ? prev->bulk : NULL;
	struct ttm_lru_bulk_move *b = bo ? bo->bulk : NULL;

	if (pb == b)
		return true;
	if (pb && pb->pos[d].last != prev) {
		snprintf(buf, len, "buffer %p ends its bulk move's group on "
			 "the LRU of domain %d, which says %p", (void *)prev,
			 d, (void *)pb->pos[d].last);
		return false;
	}
	if (b && b->pos[d].first != bo) {
		snprintf(buf, len, "buffer %p starts its bulk move's group "
			 "on the LRU of domain %d, which says %p", (void *)bo,
			 d, (void *)b->pos[d].first);
		return false;
	}
	return true;
}

/*
 * Add up the buffers on @head into @bytes and @count per domain; false and
 * a description in @buf if a node is badly linked or a buffer's domain is
 * not @want (-1: any).
 */
static bool sum_list(struct list_node *head, int want, uint64_t *bytes,
		     uint64_t *count, uint64_t *pinned, char *buf, size_t len)
{
	struct ttm_bo *prev = NULL;
	struct list_node *n;

	list_for_each(n, head) {
		struct ttm_bo *bo = list_entry(n, struct ttm_bo, node);
		int d;

		if (n->next->prev != n || n->prev->next != n) {
			snprintf(buf, len, "node %p: list badly linked",
				 (void *)n);
			return false;
		}
		/* A walk's place on an LRU (bo/bo_lru.c), no buffer. */
		if (want >= 0 && bo_lru_is_hitch(n))
			continue;
		d = __atomic_load_n(&bo->domain, __ATOMIC_RELAXED);
		if (want >= 0 && !bulk_ok(prev, bo, want, buf, len))
			return false;
		prev = bo;
		if (d < 0 || d >= TTM_DOMAIN_COUNT ||
		    (want >= 0 && d != want) || !bo->res ||
		    bo_res_domain(bo->res) != d || bo->res->bo != bo) {
			snprintf(buf, len, "buffer %p of domain %d on the "
				 "list of domain %d, or its resource not "
				 "there", (void *)bo, d, want);
			return false;
		}
		bytes[d] += bo_res_bytes(bo->dev, bo->res);
		count[d]++;
		if (pinned)
			pinned[d] += bo_res_bytes(bo->dev, bo->res);
	}
	return want < 0 || bulk_ok(prev, NULL, want, buf, len);
}

/* Add up the move sources in flight into @bytes per domain. */
static bool sum_ghosts(struct ttm_device *dev, uint64_t *bytes, char *buf,
		       size_t len)
{
	struct list_node *n;
	uint64_t count = 0;

	for (n = dev->ghosts.next; n != &dev->ghosts; n = n->next, count++) {
		struct bo_ghost *g = list_entry(n, struct bo_ghost, node);

		if (n->next->prev != n || n->prev->next != n ||
		    bo_res_domain(g->res) >= TTM_DOMAIN_COUNT) {
			snprintf(buf, len, "move source %p: badly linked or "
				 "of domain %d", (void *)g,
				 bo_res_domain(g->res));
			return false;
		}
		/* A pipelined source's range is already given back. */
		if (!g->pipelined)
			bytes[bo_res_domain(g->res)] += bo_res_bytes(dev, g->res);
	}
	if (count != dev->n_ghosts) {
		snprintf(buf, len, "%" PRIu64 " move sources counted != %"
			 PRIu64 " listed", dev->n_ghosts, count);
		return false;
	}
	return true;
}

TTM_EXPORT int ttm_device_check(struct ttm_device *dev, char *buf,
				size_t len)
{
	uint64_t bytes[TTM_DOMAIN_COUNT] = { 0 };
	uint64_t count[TTM_DOMAIN_COUNT] = { 0 };
	uint64_t pinned[TTM_DOMAIN_COUNT] = { 0 };
	uint64_t total = 0;
	char dummy[1];
	bool ok = true;
	int d;

	/* snprintf() with a size of 0 writes nothing: no NULL checks below. */
	if (!buf) {
		buf = dummy;
		len = 0;
	}
	if (len)
		buf[0] = '\0';

	pthread_mutex_lock(&dev->lock);
	for (d = 0; ok && d < TTM_DOMAIN_COUNT; d++)
		ok = sum_list(&dev->domain[d].lru, d, bytes, count, NULL, buf,
			      len);
	if (ok)
		ok = sum_list(&dev->pinned, -1, bytes, count, pinned, buf,
			      len);
	if (ok)
		ok = sum_ghosts(dev, bytes, buf, len);
	for (d = 0; ok && d < TTM_DOMAIN_COUNT; d++) {
		const struct bo_domain *dom = &dev->domain[d];

		if (dom->used > dom->capacity) {
			snprintf(buf, len, "domain %d: %" PRIu64 " bytes used "
				 "> capacity %" PRIu64, d, dom->used,
				 dom->capacity);
			ok = false;
		} else if (dom->used != bytes[d] + dom->incoming) {
			snprintf(buf, len, "domain %d: %" PRIu64 " bytes used "
				 "!= %" PRIu64 " resident or moving + %" PRIu64
				 " being moved in", d, dom->used, bytes[d],
				 dom->incoming);
			ok = false;
		} else if (dom->pinned != pinned[d]) {
			snprintf(buf, len, "domain %d: %" PRIu64 " bytes "
				 "pinned != %" PRIu64 " listed", d,
				 dom->pinned, pinned[d]);
			ok = false;
		} else if (dom->buffers != count[d]) {
			snprintf(buf, len, "domain %d: %" PRIu64 " buffers "
				 "counted != %" PRIu64 " listed", d,
				 dom->buffers, count[d]);
			ok = false;
		} else if (dom->arena && (range_mgr_check(&dom->mm) ||
			   range_mgr_used(&dom->mm) * dev->page_size !=
			   dom->used)) {
			/*
			 * The ranges lie inside the domain, do not overlap,
			 * and add up to the used bytes (resident, moving
			 * out, being moved in).
			 */
			snprintf(buf, len, "domain %d: ranges broken, or "
				 "%" PRIu64 " pages in ranges for %" PRIu64
				 " bytes used", d, range_mgr_used(&dom->mm),
				 dom->used);
			ok = false;
		}
		total += count[d];
	}
	if (ok && total != dev->buffers) {
		snprintf(buf, len, "%" PRIu64 " buffers counted != %" PRIu64
			 " resident", dev->buffers, total);
		ok = false;
	}
	pthread_mutex_unlock(&dev->lock);
	return ok ? 0 : -EUCLEAN;
}
