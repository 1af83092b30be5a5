// SPDX-License-Identifier: MIT
/*
 * Waiting for syncobjs (ttm_client_syncobj_wait()), as the kernel's
 * SYNCOBJ_WAIT: each syncobj's fence is sampled once, when the wait starts
 * or, with WAIT_FOR_SUBMIT, when the first fence is put in an empty one;
 * the wait then watches those fences, not the syncobjs.
 *
 * One entry per handle, each with a callback on its fence and, while its
 * syncobj is empty, a node on the syncobj's waiter list; both wake this
 * thread's parking word (ww/thread.h), so ttm_interrupt_thread() reaches
 * the wait, and a wake-up racing with the checks is never lost (the
 * sequence is read before them). The answer is always read from the
 * fences themselves, in handle order.
 */
#include <errno.h>
#include <stdlib.h>

#include "execbuf/execbuf.h"
#include "execbuf/syncobj.h"
#include "util/compiler.h"
#include "util/time.h"
#include "ww/debug.h"
#include "ww/thread.h"

struct wait_entry {
	struct ttm_syncobj *syncobj;    /* a reference */
	struct syncobj_waiter waiter;   /* waiter.fence: a reference */
	struct ttm_fence_cb cb;
	bool cb_added;
	bool resolved;                  /* waiter.fence is the point's */
};

static void wait_entry_wake(struct ttm_fence *fence, struct ttm_fence_cb *cb)
{
	struct wait_entry *e = container_of(cb, struct wait_entry, cb);

	(void)fence;
	/* Type-stable: a stale wake-up is harmless, see ww/thread.h. */
	ww_thread_wake(e->waiter.thread);
}

static struct ttm_fence *entry_fence(struct wait_entry *e)
{
	return __atomic_load_n(&e->waiter.fence, __ATOMIC_ACQUIRE);
}

/*
 * The fence of @e's point, once its syncobj has handed a head over. Only
 * this thread writes waiter.fence then: the syncobj hands it over once,
 * and the entry is off the syncobj's list by then.
 */
static struct ttm_fence *entry_point_fence(struct wait_entry *e)
{
	struct ttm_fence *f = entry_fence(e);

	if (f && !e->resolved) {
		f = syncobj_point_resolve(f, e->waiter.point);
		__atomic_store_n(&e->waiter.fence, f, __ATOMIC_RELAXED);
		e->resolved = true;
	}
	return f;
}

/*
 * One look at every entry: give each new fence a callback, and say
 * whether the wait is over (*@ret_first: the first signalled entry).
 */
static bool wait_done(struct wait_entry *v, unsigned int count, bool all,
		      bool available, unsigned int *ret_first)
{
	unsigned int i, signalled = 0;
	bool first_found = false;

	for (i = 0; i < count; i++) {
		struct ttm_fence *f = entry_point_fence(&v[i]);

		if (!f)
			continue;
		/* WAIT_AVAILABLE: a fence for the point is enough. */
		if (available) {
			signalled++;
			if (!first_found) {
				first_found = true;
				*ret_first = i;
			}
			continue;
		}
		if (!v[i].cb_added &&
		    ttm_fence_add_callback(f, &v[i].cb, wait_entry_wake) == 0)
			v[i].cb_added = true;
		if (!ttm_fence_is_signaled(f))
			continue;
		signalled++;
		if (!first_found) {
			first_found = true;
			*ret_first = i;
		}
	}
	return all ? signalled == count : signalled > 0;
}

/* A negative or an unrepresentable time: no deadline (NULL). */
static const struct timespec *deadline_of(int64_t abs_ns, struct timespec *ts)
{
	if (abs_ns < 0 || abs_ns == TTM_SYNCOBJ_TIMEOUT_INFINITE)
		return NULL;
	*ts = mono_timespec((uint64_t)abs_ns);
	return ts;
}

/*
 * The wait of every call: @objs (references, put here) at @points (NULL:
 * all 0). With @ret_fences, each entry's fence is handed over on success.
 */
int syncobj_wait_many(struct ttm_syncobj **objs, const uint64_t *points,
		      unsigned int count, int64_t abs_timeout_ns,
		      uint32_t flags, unsigned int *ret_first,
		      struct ttm_fence **ret_fences)
{
	bool all = flags & TTM_SYNCOBJ_WAIT_ALL;
	bool available = flags & TTM_SYNCOBJ_WAIT_AVAILABLE;
	bool queue = flags & (TTM_SYNCOBJ_WAIT_FOR_SUBMIT |
			      TTM_SYNCOBJ_WAIT_AVAILABLE);
	struct ww_thread *self = ww_thread_self();
	const struct timespec *deadline;
	struct wait_entry *v;
	struct timespec ts;
	unsigned int i, first = 0;
	int ret = 0;

	/* A deadline of 0 only tests; any other may sleep (rule 13). */
	if (abs_timeout_ns && count &&
	    ww_debug_blocks(WW_DEBUG_SIGNALLING_WAIT, objs[0],
			    "ttm_client_syncobj_wait", NULL, 0)) {
		for (i = 0; i < count; i++)
			ttm_syncobj_put(objs[i]);
		return -EINVAL;
	}
	v = calloc(count, sizeof(*v));
	if (!v) {
		for (i = 0; i < count; i++)
			ttm_syncobj_put(objs[i]);
		return -ENOMEM;
	}
	for (i = 0; i < count; i++) {
		v[i].syncobj = objs[i];
		v[i].waiter.thread = self;
		v[i].waiter.point = points ? points[i] : 0;
		/* Found from the syncobj's fence now, or a head later. */
		v[i].resolved = !queue;
	}

	/*
	 * Sample the fences. Without WAIT_FOR_SUBMIT (or _AVAILABLE) a point
	 * with no fence (an empty binary syncobj) fails the whole wait,
	 * whatever the others hold (the kernel's -EINVAL).
	 */
	for (i = 0; i < count; i++) {
		if (queue) {
			syncobj_waiter_add(v[i].syncobj, &v[i].waiter);
		} else if (ttm_syncobj_find_fence(v[i].syncobj,
						  v[i].waiter.point,
						  &v[i].waiter.fence)) {
			ret = -EINVAL;
			break;
		}
	}

	deadline = deadline_of(abs_timeout_ns, &ts);
	while (ret == 0) {
		/* Before the checks: a wake-up after this is not lost. */
		uint32_t seq = ww_thread_seq(self);

		if (wait_done(v, count, all, available, &first))
			break;
		if (deadline && mono_ns() >= (uint64_t)abs_timeout_ns) {
			ret = -ETIME;
			break;
		}
		if (ww_thread_take_interrupt(self)) {
			ret = -EINTR;
			break;
		}
		ww_thread_park(self, seq, deadline);
	}

	/*
	 * Off the syncobjs first (a fence may still be put in as we go),
	 * then off the fences: each callback has finished when removal
	 * returns, so @v can go.
	 */
	for (i = 0; i < count; i++) {
		struct ttm_fence *f;

		if (queue)
			syncobj_waiter_remove(v[i].syncobj, &v[i].waiter);
		f = entry_point_fence(&v[i]);
		if (v[i].cb_added)
			ttm_fence_remove_callback(f, &v[i].cb);
		if (ret == 0 && ret_fences)
			ret_fences[i] = f;
		else
			ttm_fence_put(f);
		ttm_syncobj_put(v[i].syncobj);
	}
	free(v);
	if (ret == 0 && !all && ret_first)
		*ret_first = first;
	return ret;
}

/* Look the handles up and wait; flags checked by the caller. */
static int client_wait(struct ttm_client *client, const uint32_t *handles,
		       const uint64_t *points, unsigned int count,
		       int64_t abs_timeout_ns, uint32_t flags,
		       unsigned int *ret_first)
{
	struct ttm_syncobj **objs;
	int ret;

	ret = client_syncobj_lookup_array(client, handles, count, &objs);
	if (ret)
		return ret;
	/* The wait puts the references; the array is ours. */
	ret = syncobj_wait_many(objs, points, count, abs_timeout_ns, flags,
				ret_first, NULL);
	free(objs);
	return ret;
}

TTM_EXPORT int ttm_client_syncobj_wait(struct ttm_client *client,
				       const uint32_t *handles,
				       unsigned int count,
				       int64_t abs_timeout_ns, uint32_t flags,
				       unsigned int *ret_first)
{
	/* WAIT_AVAILABLE is for timelines only, as the kernel's ioctls. */
	if (flags & ~(TTM_SYNCOBJ_WAIT_ALL | TTM_SYNCOBJ_WAIT_FOR_SUBMIT))
		return -EINVAL;
	return client_wait(client, handles, NULL, count, abs_timeout_ns,
			   flags, ret_first);
}

TTM_EXPORT int ttm_client_syncobj_timeline_wait(struct ttm_client *client,
						const uint32_t *handles,
						const uint64_t *points,
						unsigned int count,
						int64_t abs_timeout_ns,
						uint32_t flags,
						unsigned int *ret_first)
{
	if (!points || (flags & ~(TTM_SYNCOBJ_WAIT_ALL |
				  TTM_SYNCOBJ_WAIT_FOR_SUBMIT |
				  TTM_SYNCOBJ_WAIT_AVAILABLE)))
		return -EINVAL;
	return client_wait(client, handles, points, count, abs_timeout_ns,
			   flags, ret_first);
}
