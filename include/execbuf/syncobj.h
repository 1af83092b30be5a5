/* SPDX-License-Identifier: MIT */
/*
 * The syncobj's private structure, shared by execbuf/syncobj.c (the object,
 * handles, fds) and execbuf/syncobj_wait.c (waits).
 */
#ifndef TTMSIM_EXECBUF_SYNCOBJ_H
#define TTMSIM_EXECBUF_SYNCOBJ_H

#include <pthread.h>
#include <stdint.h>

#include "ttmsim/syncobj.h"

struct ww_thread;

/*
 * A wait with TTM_SYNCOBJ_WAIT_FOR_SUBMIT (or _AVAILABLE) for a point not
 * submitted yet (point 0: an empty syncobj): the first fence found for
 * @point is stored in @fence (a reference) and @thread woken.
 */
struct syncobj_waiter {
	struct syncobj_waiter *next, **pprev;  /* under the syncobj's lock */
	struct ww_thread *thread;
	uint64_t point;
	/*
	 * Atomic: NULL until a fence comes; then the syncobj's head (the
	 * point's fence is found from it with no lock held).
	 */
	struct ttm_fence *fence;
};

struct ttm_syncobj {
	uint32_t refcount;              /* atomic */
	pthread_mutex_t lock;           /* @fence's pointer and @waiters */
	struct ttm_fence *fence;        /* a reference, or NULL: empty */
	struct syncobj_waiter *waiters;
};

/*
 * Queue @w on @s unless @s has a fence for w->point: then a reference to
 * it in w->fence, and @w is not queued. Remove takes a queued @w off again
 * (harmless if a fence took it off already).
 */
void syncobj_waiter_add(struct ttm_syncobj *s, struct syncobj_waiter *w);
void syncobj_waiter_remove(struct ttm_syncobj *s, struct syncobj_waiter *w);

/*
 * Look up @count handles of @client at once (one lock round trip) into a
 * new array of new references, *@ret_objs, for the caller to put and
 * free; -EINVAL for no handles, -ENOENT with nothing kept if one is bad,
 * -ENOMEM (execbuf/syncobj.c).
 */
int client_syncobj_lookup_array(struct ttm_client *client,
				const uint32_t *handles, unsigned int count,
				struct ttm_syncobj ***ret_objs);

/*
 * Wait for @objs at @points (NULL: all 0), as ttm_client_syncobj_wait();
 * puts the syncobj references. With @ret_fences: each one's fence, handed
 * over on success (execbuf/syncobj_wait.c).
 */
int syncobj_wait_many(struct ttm_syncobj **objs, const uint64_t *points,
		      unsigned int count, int64_t abs_timeout_ns,
		      uint32_t flags, unsigned int *ret_first,
		      struct ttm_fence **ret_fences);

/*
 * A timeline point's chain link, allocated before and initialised after
 * something that must not fail in between (a job's submission):
 * syncobj_point_add() makes @link the new head of @s for @fence (a new
 * reference is taken) at @point; the link is the syncobj's then.
 */
struct ttm_fence_chain;
void syncobj_point_add(struct ttm_syncobj *s, struct ttm_fence_chain *link,
		       struct ttm_fence *fence, uint64_t point);

/*
 * The fence of @point in @head, a head that a waiter was handed because it
 * holds one (the reference passes here): the point's link, or the stub if
 * the walk found every point up to it signalled (execbuf/syncobj.c). With
 * no lock held: it walks the chain.
 */
struct ttm_fence *syncobj_point_resolve(struct ttm_fence *head,
					uint64_t point);

#endif /* TTMSIM_EXECBUF_SYNCOBJ_H */
