// SPDX-License-Identifier: MIT
/*
 * Clients and their handle tables, GEM's semantics: a handle is an index
 * + 1 into an array of buffer references, so 0 is never one; the lowest
 * free handle is handed out first, and a handle is free only once closed.
 *
 * Free handles below the high mark (n_handles) sit in a binary min-heap,
 * so that "lowest first" costs O(log n) however the closes were ordered;
 * a linear scan for a hole would make a create after closing handle 1 of
 * a large table walk all of it. The heap's array is as large as the handle
 * array, so closing never allocates and never fails. The high mark never
 * goes down: as GEM's idr, the table keeps its size.
 *
 * A second table maps buffers back to handles (open addressing, linear
 * probing, deletion by backward shift, at most half full), so that adding
 * or importing a buffer the client already has finds its handle in O(1)
 * expected time instead of a walk over every handle.
 *
 * One mutex per client guards both. Buffers are put after it is dropped:
 * the last put destroys a buffer and takes the device's lock, which has no
 * business nesting inside ours.
 */
#include <errno.h>
#include <stdlib.h>

#include "execbuf/execbuf.h"
#include "util/compiler.h"

/* The free-handle heap: indices (handle - 1), smallest at [0]. */
static void heap_push(struct ttm_client *c, uint32_t idx)
{
	uint32_t i = c->n_free++;

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (c->free_heap[parent] <= idx)
			break;
		c->free_heap[i] = c->free_heap[parent];
		i = parent;
	}
	c->free_heap[i] = idx;
}

static uint32_t heap_pop(struct ttm_client *c)
{
	uint32_t top = c->free_heap[0];
	uint32_t last = c->free_heap[--c->n_free];
	uint32_t i = 0, n = c->n_free;

	for (;;) {
		uint32_t child = 2 * i + 1;

		if (child >= n)
			break;
		if (child + 1 < n && c->free_heap[child + 1] < c->free_heap[child])
			child++;
		if (last <= c->free_heap[child])
			break;
		c->free_heap[i] = c->free_heap[child];
		i = child;
	}
	if (n > 0)
		c->free_heap[i] = last;
	return top;
}

/* Keep free_hint what the struct says: no free handle below it. */
static void update_free_hint(struct ttm_client *c)
{
	c->free_hint = c->n_free ? c->free_heap[0] + 1 : c->n_handles + 1;
}

/* ---- bo -> handle ----------------------------------------------------- */

static uint32_t bo_hash(const struct ttm_bo *bo, uint32_t mask)
{
	/* Fibonacci hashing: allocation addresses differ in the middle bits. */
	uint64_t h = (uint64_t)(uintptr_t)bo * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32) & mask;
}

/* The slot holding @bo, or the empty slot where it would go. */
static struct client_slot *by_bo_find(struct ttm_client *c,
				      const struct ttm_bo *bo)
{
	uint32_t mask = c->by_bo_cap - 1, i = bo_hash(bo, mask);

	while (c->by_bo[i].bo && c->by_bo[i].bo != bo)
		i = (i + 1) & mask;
	return &c->by_bo[i];
}

/* Make room for one more entry; the table stays at most half full. */
static int by_bo_reserve(struct ttm_client *c)
{
	struct client_slot *old = c->by_bo;
	uint32_t old_cap = c->by_bo_cap, cap, i;

	if ((c->by_bo_used + 1) * 2 <= old_cap)
		return 0;
	if (old_cap > UINT32_MAX / 4)
		return -ENOMEM;
	cap = old_cap ? old_cap * 2 : 16;
	c->by_bo = calloc(cap, sizeof(*c->by_bo));
	if (!c->by_bo) {
		c->by_bo = old;
		return -ENOMEM;
	}
	c->by_bo_cap = cap;
	for (i = 0; i < old_cap; i++)
		if (old[i].bo)
			*by_bo_find(c, old[i].bo) = old[i];
	free(old);
	return 0;
}

/*
 * Remove @slot, shifting back the entries after it that probed past it, so
 * that lookups never need tombstones.
 */
static void by_bo_remove(struct ttm_client *c, struct client_slot *slot)
{
	uint32_t mask = c->by_bo_cap - 1;
	uint32_t hole = (uint32_t)(slot - c->by_bo), i = hole;

	for (;;) {
		uint32_t home;

		i = (i + 1) & mask;
		if (!c->by_bo[i].bo)
			break;
		home = bo_hash(c->by_bo[i].bo, mask);
		/* Movable iff its home is not cyclically in (hole, i]. */
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			c->by_bo[hole] = c->by_bo[i];
			hole = i;
		}
	}
	c->by_bo[hole].bo = NULL;
	c->by_bo_used--;
}

/* ---- handles ---------------------------------------------------------- */

/* Room for one more handle at the high mark, heap included. */
static int handles_reserve(struct ttm_client *c)
{
	uint32_t cap;
	void *p;

	if (c->n_handles < c->cap_handles)
		return 0;
	/* Handles are u32 and 0 is not one: UINT32_MAX - 1 slots at most. */
	if (c->cap_handles >= UINT32_MAX - 1)
		return -ENOMEM;
	if (c->cap_handles == 0)
		cap = 16;
	else if (c->cap_handles > (UINT32_MAX - 1) / 2)
		cap = UINT32_MAX - 1;
	else
		cap = c->cap_handles * 2;
	p = realloc(c->handles, (size_t)cap * sizeof(*c->handles));
	if (!p)
		return -ENOMEM;
	c->handles = p;
	p = realloc(c->free_heap, (size_t)cap * sizeof(*c->free_heap));
	if (!p)
		return -ENOMEM; /* the larger handle array is kept: harmless */
	c->free_heap = p;
	c->cap_handles = cap;
	return 0;
}

/* The buffer of @handle, or NULL; under c->lock. */
static struct ttm_bo *handle_bo(const struct ttm_client *c, uint32_t handle)
{
	if (handle == 0 || handle > c->n_handles)
		return NULL;
	return c->handles[handle - 1];
}

/*
 * Give @bo a handle, taking over the caller's reference @bo holds for it,
 * unless the client has one already: then return that, and the caller keeps
 * its reference. *@is_new says which; nothing is written on failure.
 * Under c->lock.
 */
static int handle_insert(struct ttm_client *c, struct ttm_bo *bo,
			 uint32_t *handle, bool *is_new)
{
	struct client_slot *slot;
	uint32_t idx;
	int ret;

	if (c->by_bo_cap) {
		slot = by_bo_find(c, bo);
		if (slot->bo) {
			*handle = slot->handle;
			*is_new = false;
			return 0;
		}
	}
	ret = by_bo_reserve(c);
	if (!ret && c->n_free == 0)
		ret = handles_reserve(c);
	if (ret)
		return ret;

	idx = c->n_free ? heap_pop(c) : c->n_handles++;
	c->handles[idx] = bo;
	slot = by_bo_find(c, bo);
	slot->bo = bo;
	slot->handle = idx + 1;
	c->by_bo_used++;
	update_free_hint(c);
	*handle = idx + 1;
	*is_new = true;
	return 0;
}

TTM_EXPORT int ttm_client_open(struct ttm_device *dev,
			       struct ttm_client **ret_client)
{
	struct ttm_client *c;

	if (!dev || !ttm_device_gpu(dev))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->dev = dev;
	c->edev = execbuf_dev_get(dev);
	if (!c->edev) {
		free(c);
		return -ENOMEM;
	}
	c->free_hint = 1;
	c->priority = TTM_SCHED_PRIORITY_NORMAL;
	pthread_mutex_init(&c->lock, NULL);
	*ret_client = c;
	return 0;
}

TTM_EXPORT void ttm_client_close(struct ttm_client *client)
{
	uint32_t i;

	if (!client)
		return;
	/* First: its queued jobs use its buffers' memory. */
	client_entities_destroy(client);
	/* Descriptors closed since the last PRIME call free their buffers. */
	prime_collect();
	for (i = 0; i < client->n_handles; i++)
		ttm_bo_put(client->handles[i]);
	client_syncobjs_release(client);
	free(client->handles);
	free(client->free_heap);
	free(client->by_bo);
	pthread_mutex_destroy(&client->lock);
	free(client);
}

TTM_EXPORT struct ttm_device *ttm_client_device(const struct ttm_client *client)
{
	return client->dev;
}

TTM_EXPORT int ttm_client_bo_add(struct ttm_client *client, struct ttm_bo *bo,
				 uint32_t *ret_handle, bool *ret_new)
{
	bool is_new;
	int ret;

	/*
	 * Its reservation is of another class, and its memory elsewhere;
	 * a kernel buffer is the driver's alone (TTM's ttm_bo_type_kernel).
	 */
	if (ttm_bo_device(bo) != client->dev ||
	    ttm_bo_type(bo) == TTM_BO_TYPE_KERNEL)
		return -EINVAL;
	/*
	 * The reference is taken before the lock and dropped if unused:
	 * ttm_bo_get() is a plain atomic add, and this keeps puts out of it.
	 */
	ttm_bo_get(bo);
	pthread_mutex_lock(&client->lock);
	ret = handle_insert(client, bo, ret_handle, &is_new);
	pthread_mutex_unlock(&client->lock);
	if (ret || !is_new)
		ttm_bo_put(bo);
	if (!ret && ret_new)
		*ret_new = is_new;
	return ret;
}

/* A new buffer's creation reference becomes the handle's. */
static int add_new_bo(struct ttm_client *client, struct ttm_bo *bo,
		      uint32_t *ret_handle)
{
	bool is_new;
	int ret;

	pthread_mutex_lock(&client->lock);
	ret = handle_insert(client, bo, ret_handle, &is_new);
	pthread_mutex_unlock(&client->lock);
	if (ret)
		ttm_bo_put(bo);
	return ret;
}

TTM_EXPORT int ttm_client_bo_create(struct ttm_client *client, uint64_t size,
				    const struct ttm_placement *placement,
				    uint32_t flags, uint32_t *ret_handle)
{
	struct ttm_bo *bo;
	int ret;

	ret = ttm_bo_create(client->dev, size, placement, flags, &bo);
	if (ret)
		return ret;
	return add_new_bo(client, bo, ret_handle);
}

TTM_EXPORT int ttm_client_bo_create_fourcc(struct ttm_client *client,
					   uint32_t width, uint32_t height,
					   uint32_t fourcc,
					   const struct ttm_placement *placement,
					   uint32_t flags, uint32_t *ret_handle)
{
	struct ttm_bo *bo;
	int ret;

	ret = ttm_bo_create_fourcc(client->dev, width, height, fourcc,
				   placement, flags, &bo);
	if (ret)
		return ret;
	return add_new_bo(client, bo, ret_handle);
}

TTM_EXPORT int ttm_client_bo_close(struct ttm_client *client, uint32_t handle)
{
	struct ttm_bo *bo;

	pthread_mutex_lock(&client->lock);
	bo = handle_bo(client, handle);
	if (bo) {
		client->handles[handle - 1] = NULL;
		by_bo_remove(client, by_bo_find(client, bo));
		heap_push(client, handle - 1);
		update_free_hint(client);
	}
	pthread_mutex_unlock(&client->lock);
	if (!bo)
		return -ENOENT;
	ttm_bo_put(bo);
	return 0;
}

TTM_EXPORT struct ttm_bo *ttm_client_lookup(struct ttm_client *client,
					    uint32_t handle)
{
	struct ttm_bo *bo;

	pthread_mutex_lock(&client->lock);
	bo = ttm_bo_get(handle_bo(client, handle));
	pthread_mutex_unlock(&client->lock);
	return bo;
}

int client_lookup_many(struct ttm_client *client,
		       const struct ttm_execbuf_bo *entries, unsigned int n,
		       struct ttm_bo **bos, int *bad_index)
{
	unsigned int i, j;

	pthread_mutex_lock(&client->lock);
	for (i = 0; i < n; i++) {
		bos[i] = ttm_bo_get(handle_bo(client, entries[i].handle));
		if (!bos[i])
			break;
	}
	pthread_mutex_unlock(&client->lock);
	if (i == n)
		return 0;
	for (j = 0; j < i; j++) {
		ttm_bo_put(bos[j]);
		bos[j] = NULL;
	}
	*bad_index = (int)i;
	return -ENOENT;
}

TTM_EXPORT void ttm_client_set_event_sink(struct ttm_client *client,
					  ttm_execbuf_event_fn *fn, void *data)
{
	pthread_mutex_lock(&client->lock);
	client->event_fn = fn;
	client->event_data = data;
	pthread_mutex_unlock(&client->lock);
}
