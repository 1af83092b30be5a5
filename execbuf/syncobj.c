// SPDX-License-Identifier: MIT
/*
 * Syncobjs (ttmsim/syncobj.h): the object, a fence pointer replaced under
 * the syncobj's lock; each client's table of syncobj handles; signal,
 * reset, query; descriptors, as syncobjs (the PRIME registry,
 * execbuf/prime.c) or as sync files (the fence's own pipe). Waits are in
 * execbuf/syncobj_wait.c.
 *
 * The table is separate from the buffer handles, as the kernel's syncobj
 * idr per file beside the GEM one. It is a plain array searched for the
 * lowest free slot: syncobjs are few per client (a handful per frame in
 * flight), unlike buffers, whose table keeps a heap for that.
 *
 * Locking: the client's lock guards the table and nests nothing; a
 * syncobj's lock guards its fence pointer and waiters and nests only the
 * waiters' wake-ups. Fences are put after the syncobj's lock is dropped:
 * a last put runs callbacks, which may use syncobjs.
 *
 * Timelines are chains of ttm_fence_chain links, as the kernel's
 * dma_fence_chain in drm_syncobj: adding a point links a new head after
 * the old one (which takes no lock and calls out to nothing, so it is done
 * under the syncobj's lock); finding a point's fence walks the chain with
 * ttm_fence_chain_find_seqno(), which drops the signalled links as it
 * goes. Unlike the kernel, which walks under its syncobj spinlock, no walk
 * runs under our syncobj lock: a walk may signal fences (their callbacks
 * run) and put links, and the lock is a leaf. Under the lock a waiter only
 * learns that its point has a fence (the head, taken as it is), and finds
 * the point's own fence from it after (syncobj_point_resolve()).
 */
#include <errno.h>
#include <stdlib.h>

#include "execbuf/execbuf.h"
#include "execbuf/syncobj.h"
#include "gpu_sim/fence_container.h"
#include "util/compiler.h"
#include "ww/thread.h"

/* ---- the object ------------------------------------------------------- */

TTM_EXPORT int ttm_syncobj_create(uint32_t flags, struct ttm_fence *fence,
				  struct ttm_syncobj **ret_syncobj)
{
	struct ttm_syncobj *s;

	if (flags & ~TTM_SYNCOBJ_CREATE_SIGNALED)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->refcount = 1;
	pthread_mutex_init(&s->lock, NULL);
	if (fence)
		s->fence = ttm_fence_get(fence);
	else if (flags & TTM_SYNCOBJ_CREATE_SIGNALED)
		s->fence = ttm_fence_get_stub();
	*ret_syncobj = s;
	return 0;
}

TTM_EXPORT struct ttm_syncobj *ttm_syncobj_get(struct ttm_syncobj *syncobj)
{
	if (syncobj)
		__atomic_fetch_add(&syncobj->refcount, 1, __ATOMIC_RELAXED);
	return syncobj;
}

TTM_EXPORT void ttm_syncobj_put(struct ttm_syncobj *syncobj)
{
	if (!syncobj ||
	    __atomic_sub_fetch(&syncobj->refcount, 1, __ATOMIC_ACQ_REL))
		return;
	/* A waiter holds a reference: none can be queued now. */
	ttm_fence_put(syncobj->fence);
	pthread_mutex_destroy(&syncobj->lock);
	free(syncobj);
}

TTM_EXPORT struct ttm_fence *ttm_syncobj_fence_get(struct ttm_syncobj *syncobj)
{
	struct ttm_fence *fence;

	/*
	 * Under the lock: the replacer puts the old fence after dropping
	 * it, so a reference taken here is to a live fence.
	 */
	pthread_mutex_lock(&syncobj->lock);
	fence = ttm_fence_get(syncobj->fence);
	pthread_mutex_unlock(&syncobj->lock);
	return fence;
}

/*
 * Whether @head holds a fence for @point: the kernel's test in
 * drm_syncobj_fence_add_wait(), that dma_fence_chain_find_seqno() does
 * not fail (it fails only for no chain or a point after the head), without
 * the walk: for under s->lock.
 */
static bool point_available(const struct ttm_fence *head, uint64_t point)
{
	if (!head)
		return false;
	return point == 0 || (ttm_fence_is_chain(head) &&
			      ttm_fence_seqno(head) >= point);
}

/*
 * The fence of @point in @head, a reference that passes here: -EINVAL
 * (the reference put) if there is none; the stub if every point up to it
 * has signalled and the walk dropped them, as drm_syncobj_find_fence().
 */
static int point_fence(struct ttm_fence *head, uint64_t point,
		       struct ttm_fence **ret_fence)
{
	if (!head)
		return -EINVAL;
	if (ttm_fence_chain_find_seqno(&head, point)) {
		ttm_fence_put(head);
		return -EINVAL;
	}
	*ret_fence = head ? head : ttm_fence_get_stub();
	return 0;
}

struct ttm_fence *syncobj_point_resolve(struct ttm_fence *head,
					uint64_t point)
{
	struct ttm_fence *f;

	/* Cannot fail for a head point_available() said yes to. */
	if (point_fence(ttm_fence_get(head), point, &f))
		return head;
	ttm_fence_put(head);
	return f;
}

/*
 * Under s->lock, with a new fence in s->fence: hand each waiter whose
 * point now has a fence the head (it resolves the point itself, with no
 * lock held), and take it off the list.
 */
static void wake_waiters_locked(struct ttm_syncobj *s)
{
	struct syncobj_waiter *w, *next;
	struct ttm_fence *f;

	for (w = s->waiters; w; w = next) {
		struct ww_thread *t = w->thread;

		next = w->next;
		if (!point_available(s->fence, w->point))
			continue;
		f = ttm_fence_get(s->fence);
		*w->pprev = w->next;
		if (w->next)
			w->next->pprev = w->pprev;
		w->pprev = NULL;
		w->next = NULL;
		/*
		 * After this store the waiter may return: @t was read before,
		 * and a stale wake of a type-stable thread struct is harmless.
		 */
		__atomic_store_n(&w->fence, f, __ATOMIC_RELEASE);
		ww_thread_wake(t);
	}
}

TTM_EXPORT void ttm_syncobj_replace_fence(struct ttm_syncobj *syncobj,
					  struct ttm_fence *fence)
{
	struct ttm_fence *old;

	ttm_fence_get(fence);
	pthread_mutex_lock(&syncobj->lock);
	old = syncobj->fence;
	syncobj->fence = fence;
	if (fence)
		wake_waiters_locked(syncobj);
	pthread_mutex_unlock(&syncobj->lock);
	ttm_fence_put(old);
}

void syncobj_point_add(struct ttm_syncobj *s, struct ttm_fence_chain *link,
		       struct ttm_fence *fence, uint64_t point)
{
	/*
	 * The old head becomes the link's previous one (its reference moves
	 * with it); a point not above it is still added, as the kernel
	 * does (the chain keeps the timeline's seqno from going back). The
	 * link arms no callback until someone waits on it.
	 */
	ttm_fence_get(fence);
	pthread_mutex_lock(&s->lock);
	s->fence = ttm_fence_chain_init(link, s->fence, fence, point);
	wake_waiters_locked(s);
	pthread_mutex_unlock(&s->lock);
}

TTM_EXPORT int ttm_syncobj_add_point(struct ttm_syncobj *syncobj,
				     struct ttm_fence *fence, uint64_t point)
{
	struct ttm_fence_chain *link;
	int ret;

	if (!fence || point == 0)
		return -EINVAL;
	ret = ttm_fence_chain_alloc(&link);
	if (ret)
		return ret;
	syncobj_point_add(syncobj, link, fence, point);
	return 0;
}

TTM_EXPORT int ttm_syncobj_find_fence(struct ttm_syncobj *syncobj,
				      uint64_t point,
				      struct ttm_fence **ret_fence)
{
	return point_fence(ttm_syncobj_fence_get(syncobj), point, ret_fence);
}

void syncobj_waiter_add(struct ttm_syncobj *s, struct syncobj_waiter *w)
{
	pthread_mutex_lock(&s->lock);
	if (point_available(s->fence, w->point)) {
		w->fence = ttm_fence_get(s->fence);
	} else {
		w->next = s->waiters;
		if (w->next)
			w->next->pprev = &w->next;
		w->pprev = &s->waiters;
		s->waiters = w;
	}
	pthread_mutex_unlock(&s->lock);
}

void syncobj_waiter_remove(struct ttm_syncobj *s, struct syncobj_waiter *w)
{
	pthread_mutex_lock(&s->lock);
	if (w->pprev) {
		*w->pprev = w->next;
		if (w->next)
			w->next->pprev = w->pprev;
		w->pprev = NULL;
		w->next = NULL;
	}
	pthread_mutex_unlock(&s->lock);
}

/* ---- handles ---------------------------------------------------------- */

/* The syncobj of @handle, or NULL; under c->lock. */
static struct ttm_syncobj *handle_syncobj(const struct ttm_client *c,
					  uint32_t handle)
{
	if (handle == 0 || handle > c->n_syncobjs)
		return NULL;
	return c->syncobjs[handle - 1];
}

/* A handle for @s, taking over the caller's reference on success. */
static int handle_insert(struct ttm_client *c, struct ttm_syncobj *s,
			 uint32_t *ret_handle)
{
	uint32_t i;
	int ret = 0;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < c->n_syncobjs; i++)
		if (!c->syncobjs[i])
			break;
	if (i == c->n_syncobjs && i == c->cap_syncobjs) {
		uint32_t cap = c->cap_syncobjs ? 2 * c->cap_syncobjs : 8;
		void *p = NULL;

		/* Handles are u32 and 0 is not one. */
		if (c->cap_syncobjs <= (UINT32_MAX - 1) / 2)
			p = realloc(c->syncobjs, (size_t)cap * sizeof(s));
		if (p) {
			c->syncobjs = p;
			c->cap_syncobjs = cap;
		} else {
			ret = -ENOMEM;
		}
	}
	if (ret == 0) {
		if (i == c->n_syncobjs)
			c->n_syncobjs++;
		c->syncobjs[i] = s;
		*ret_handle = i + 1;
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

void client_syncobjs_release(struct ttm_client *client)
{
	uint32_t i;

	for (i = 0; i < client->n_syncobjs; i++)
		ttm_syncobj_put(client->syncobjs[i]);
	free(client->syncobjs);
	client->syncobjs = NULL;
	client->n_syncobjs = client->cap_syncobjs = 0;
}

TTM_EXPORT int ttm_client_syncobj_add(struct ttm_client *client,
				      struct ttm_syncobj *syncobj,
				      uint32_t *ret_handle)
{
	int ret;

	ttm_syncobj_get(syncobj);
	ret = handle_insert(client, syncobj, ret_handle);
	if (ret)
		ttm_syncobj_put(syncobj);
	return ret;
}

TTM_EXPORT int ttm_client_syncobj_create(struct ttm_client *client,
					 uint32_t flags, uint32_t *ret_handle)
{
	struct ttm_syncobj *s;
	int ret;

	ret = ttm_syncobj_create(flags, NULL, &s);
	if (ret)
		return ret;
	ret = handle_insert(client, s, ret_handle);
	if (ret)
		ttm_syncobj_put(s);
	return ret;
}

TTM_EXPORT int ttm_client_syncobj_destroy(struct ttm_client *client,
					  uint32_t handle)
{
	struct ttm_syncobj *s;

	pthread_mutex_lock(&client->lock);
	s = handle_syncobj(client, handle);
	if (s)
		client->syncobjs[handle - 1] = NULL;
	pthread_mutex_unlock(&client->lock);
	if (!s)
		return -EINVAL;
	ttm_syncobj_put(s);
	return 0;
}

TTM_EXPORT struct ttm_syncobj *
ttm_client_syncobj_lookup(struct ttm_client *client, uint32_t handle)
{
	struct ttm_syncobj *s;

	pthread_mutex_lock(&client->lock);
	s = ttm_syncobj_get(handle_syncobj(client, handle));
	pthread_mutex_unlock(&client->lock);
	return s;
}

int client_syncobj_lookup_array(struct ttm_client *client,
				const uint32_t *handles, unsigned int count,
				struct ttm_syncobj ***ret_objs)
{
	struct ttm_syncobj **objs;
	unsigned int i, j;

	if (count == 0 || !handles)
		return -EINVAL;
	objs = calloc(count, sizeof(*objs));
	if (!objs)
		return -ENOMEM;
	pthread_mutex_lock(&client->lock);
	for (i = 0; i < count; i++) {
		objs[i] = ttm_syncobj_get(handle_syncobj(client, handles[i]));
		if (!objs[i])
			break;
	}
	pthread_mutex_unlock(&client->lock);
	if (i < count) {
		for (j = 0; j < i; j++)
			ttm_syncobj_put(objs[j]);
		free(objs);
		return -ENOENT;
	}
	*ret_objs = objs;
	return 0;
}

/* Look every handle up, then put @fence (or NULL) in each syncobj. */
static int replace_many(struct ttm_client *client, const uint32_t *handles,
			unsigned int count, struct ttm_fence *fence)
{
	struct ttm_syncobj **objs;
	unsigned int i;
	int ret;

	ret = client_syncobj_lookup_array(client, handles, count, &objs);
	if (ret)
		return ret;
	for (i = 0; i < count; i++) {
		ttm_syncobj_replace_fence(objs[i], fence);
		ttm_syncobj_put(objs[i]);
	}
	free(objs);
	return 0;
}

TTM_EXPORT int ttm_client_syncobj_signal(struct ttm_client *client,
					 const uint32_t *handles,
					 unsigned int count)
{
	struct ttm_fence *stub = ttm_fence_get_stub();
	int ret = replace_many(client, handles, count, stub);

	ttm_fence_put(stub);
	return ret;
}

TTM_EXPORT int ttm_client_syncobj_reset(struct ttm_client *client,
					const uint32_t *handles,
					unsigned int count)
{
	return replace_many(client, handles, count, NULL);
}

/*
 * The last point of @head signalled in order (every point up to it has),
 * or with @last_submitted the newest; 0 for no chain. As the kernel's
 * query: walk back along @head's own timeline (the walk skips and drops
 * the signalled links) to the oldest link left; that point if it has
 * signalled, else the one before it. A lower point added last starts a
 * timeline of its own, so the query says 0 until it signals.
 */
static uint64_t timeline_query(struct ttm_fence *head, bool last_submitted)
{
	struct ttm_fence *it, *last;
	uint64_t point;

	if (!ttm_fence_is_chain(head))
		return 0;
	if (last_submitted)
		return ttm_fence_seqno(head);
	last = ttm_fence_get(head);
	ttm_fence_chain_for_each(it, head) {
		if (ttm_fence_context(it) != ttm_fence_context(head)) {
			ttm_fence_put(it);
			break;
		}
		ttm_fence_put(last);
		last = ttm_fence_get(it);
	}
	point = ttm_fence_is_signaled(last) ? ttm_fence_seqno(last)
					    : fence_chain_prev_seqno(last);
	ttm_fence_put(last);
	return point;
}

TTM_EXPORT int ttm_client_syncobj_query(struct ttm_client *client,
					const uint32_t *handles,
					uint64_t *ret_points,
					unsigned int count, uint32_t flags)
{
	struct ttm_syncobj **objs;
	unsigned int i;
	int ret;

	if (!ret_points || (flags & ~TTM_SYNCOBJ_QUERY_LAST_SUBMITTED))
		return -EINVAL;
	ret = client_syncobj_lookup_array(client, handles, count, &objs);
	if (ret)
		return ret;
	for (i = 0; i < count; i++) {
		/* A binary syncobj (no chain) has no points: 0. */
		struct ttm_fence *head = ttm_syncobj_fence_get(objs[i]);

		ret_points[i] = timeline_query(head,
				flags & TTM_SYNCOBJ_QUERY_LAST_SUBMITTED);
		ttm_fence_put(head);
		ttm_syncobj_put(objs[i]);
	}
	free(objs);
	return ret;
}

/* ---- descriptors ------------------------------------------------------ */

TTM_EXPORT int ttm_client_syncobj_export_fd(struct ttm_client *client,
					    uint32_t handle, int *ret_fd)
{
	struct ttm_syncobj *s = ttm_client_syncobj_lookup(client, handle);
	int ret;

	if (!s)
		return -ENOENT;
	ret = prime_syncobj_export(s, ret_fd);
	ttm_syncobj_put(s);
	return ret;
}

TTM_EXPORT int ttm_client_syncobj_import_fd(struct ttm_client *client, int fd,
					    uint32_t *ret_handle)
{
	struct ttm_syncobj *s = prime_syncobj_lookup(fd);
	int ret;

	/* The kernel: a file that is not a syncobj's is -EINVAL. */
	if (!s)
		return -EINVAL;
	ret = handle_insert(client, s, ret_handle);
	if (ret)
		ttm_syncobj_put(s);
	return ret;
}

TTM_EXPORT int ttm_client_syncobj_export_sync_file(struct ttm_client *client,
						   uint32_t handle,
						   int *ret_fd)
{
	struct ttm_syncobj *s = ttm_client_syncobj_lookup(client, handle);
	struct ttm_fence *fence;
	int fd;

	if (!s)
		return -ENOENT;
	fence = ttm_syncobj_fence_get(s);
	ttm_syncobj_put(s);
	/* Nothing to export, as the kernel's drm_syncobj_find_fence(). */
	if (!fence)
		return -EINVAL;
	fd = ttm_fence_export_fd(fence);
	ttm_fence_put(fence);
	if (fd < 0)
		return fd;
	*ret_fd = fd;
	return 0;
}

TTM_EXPORT int ttm_client_syncobj_import_sync_file(struct ttm_client *client,
						   uint32_t handle, int fd)
{
	struct ttm_syncobj *s;
	struct ttm_fence *fence;
	int ret;

	ret = ttm_fence_import_fd(fd, &fence);
	if (ret)
		return ret;
	s = ttm_client_syncobj_lookup(client, handle);
	if (s) {
		ttm_syncobj_replace_fence(s, fence);
		ttm_syncobj_put(s);
	}
	ttm_fence_put(fence);
	return s ? 0 : -ENOENT;
}

/* ---- timelines -------------------------------------------------------- */

TTM_EXPORT int ttm_client_syncobj_timeline_signal(struct ttm_client *client,
						  const uint32_t *handles,
						  const uint64_t *points,
						  unsigned int count)
{
	struct ttm_fence *stub;
	struct ttm_syncobj **objs;
	struct ttm_fence_chain **links;
	unsigned int i;
	int ret;

	if (!points)
		return -EINVAL;
	ret = client_syncobj_lookup_array(client, handles, count, &objs);
	if (ret)
		return ret;
	/* Every link first: nothing changes unless every point can. */
	links = calloc(count, sizeof(*links));
	for (i = 0; i < count && links; i++) {
		if (points[i] && ttm_fence_chain_alloc(&links[i]))
			break;
	}
	if (!links || i < count) {
		for (i = 0; i < count; i++) {
			if (links)
				ttm_fence_chain_free(links[i]);
			ttm_syncobj_put(objs[i]);
		}
		free(links);
		free(objs);
		return -ENOMEM;
	}
	stub = ttm_fence_get_stub();
	for (i = 0; i < count; i++) {
		/* Point 0 signals as a binary syncobj: the stub replaces. */
		if (points[i])
			syncobj_point_add(objs[i], links[i], stub, points[i]);
		else
			ttm_syncobj_replace_fence(objs[i], stub);
		ttm_syncobj_put(objs[i]);
	}
	ttm_fence_put(stub);
	free(links);
	free(objs);
	return 0;
}

TTM_EXPORT int ttm_client_syncobj_transfer(struct ttm_client *client,
					   uint32_t dst_handle,
					   uint64_t dst_point,
					   uint32_t src_handle,
					   uint64_t src_point, uint32_t flags)
{
	struct ttm_syncobj *src, *dst;
	struct ttm_fence *fence = NULL;
	struct ttm_fence_chain *link = NULL;
	int ret;

	if (flags & ~TTM_SYNCOBJ_WAIT_FOR_SUBMIT)
		return -EINVAL;
	src = ttm_client_syncobj_lookup(client, src_handle);
	dst = ttm_client_syncobj_lookup(client, dst_handle);
	if (!src || !dst) {
		ttm_syncobj_put(src);
		ttm_syncobj_put(dst);
		return -ENOENT;
	}
	if (flags & TTM_SYNCOBJ_WAIT_FOR_SUBMIT) {
		/* Until the point has a fence; the wait puts @src. */
		ret = syncobj_wait_many(&src, &src_point, 1,
					TTM_SYNCOBJ_TIMEOUT_INFINITE,
					TTM_SYNCOBJ_WAIT_AVAILABLE, NULL,
					&fence);
	} else {
		ret = ttm_syncobj_find_fence(src, src_point, &fence);
		ttm_syncobj_put(src);
	}
	if (ret == 0 && dst_point)
		ret = ttm_fence_chain_alloc(&link);
	if (ret == 0) {
		if (dst_point)
			syncobj_point_add(dst, link, fence, dst_point);
		else
			ttm_syncobj_replace_fence(dst, fence);
	}
	ttm_fence_put(fence);
	ttm_syncobj_put(dst);
	return ret;
}
