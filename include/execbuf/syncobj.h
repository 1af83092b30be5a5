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
 * A wait with TTM_SYNCOBJ_WAIT_FOR_SUBMIT on an empty syncobj: the first
 * fence put in is stored in @fence (a reference) and @thread woken.
 */
struct syncobj_waiter {
	struct syncobj_waiter *next, **pprev;  /* under the syncobj's lock */
	struct ww_thread *thread;
	struct ttm_fence *fence;  /* atomic: NULL until a fence comes */
};

struct ttm_syncobj {
	uint32_t refcount;              /* atomic */
	pthread_mutex_t lock;           /* @fence's pointer and @waiters */
	struct ttm_fence *fence;        /* a reference, or NULL: empty */
	struct syncobj_waiter *waiters;
};

/*
 * Queue @w on @s unless @s holds a fence: then a reference to it in
 * w->fence, and @w is not queued. Remove takes a queued @w off again
 * (harmless if a fence took it off already).
 */
void syncobj_waiter_add(struct ttm_syncobj *s, struct syncobj_waiter *w);
void syncobj_waiter_remove(struct ttm_syncobj *s, struct syncobj_waiter *w);

/*
 * Look up @count handles of @client at once into @ret (new references);
 * -ENOENT with none kept if one is bad, and its index in *@bad_index
 * (execbuf/syncobj.c).
 */
int client_syncobj_lookup_many(struct ttm_client *client,
			       const uint32_t *handles, unsigned int count,
			       struct ttm_syncobj **ret, unsigned int *bad_index);

#endif /* TTMSIM_EXECBUF_SYNCOBJ_H */
