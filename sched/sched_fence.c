// SPDX-License-Identifier: MIT
/*
 * A job's scheduled and finished fences (include/sched/fence.h), in one
 * allocation, as the kernel's drm_sched_fence; from the per-thread cache
 * (gpu_sim/obj_cache.h), as the kernel's come from a slab.
 *
 * The two fences have their own references but share the memory: the
 * scheduled fence holds a reference to the finished one, and the memory
 * goes with the finished fence's release. Each release op runs after its
 * fence's grace period (driver fences, gpu_sim/fence_rcu.c), so a
 * lockless reader of either sees a fence until it has left its section.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_sim/fence.h"
#include "gpu_sim/obj_cache.h"
#include "sched/fence.h"
#include "util/compiler.h"

struct sched_name {
	uint32_t refcount;      /* atomic */
	/*
	 * The rings that wait for each other's jobs themselves
	 * (sched_name_set_group()): compared, never dereferenced.
	 */
	const void *group;
	char str[32];
};

struct sched_fences {
	struct ttm_fence scheduled;
	struct ttm_fence finished;
	struct sched_name *name;
};

struct sched_name *sched_name_new(const char *name)
{
	struct sched_name *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->refcount = 1;
	strncpy(n->str, name, sizeof(n->str) - 1);
	return n;
}

static struct sched_name *sched_name_get(struct sched_name *n)
{
	__atomic_fetch_add(&n->refcount, 1, __ATOMIC_RELAXED);
	return n;
}

void sched_name_put(struct sched_name *n)
{
	if (n && __atomic_sub_fetch(&n->refcount, 1, __ATOMIC_ACQ_REL) == 0)
		free(n);
}

const char *sched_name_str(const struct sched_name *n)
{
	return n->str;
}

void sched_name_set_group(struct sched_name *n, const void *group)
{
	n->group = group;
}

static const char *sched_fence_driver_name(struct ttm_fence *fence)
{
	(void)fence;
	return "ttm_sched";
}

static const char *scheduled_timeline_name(struct ttm_fence *fence)
{
	return container_of(fence, struct sched_fences, scheduled)->name->str;
}

static const char *finished_timeline_name(struct ttm_fence *fence)
{
	return container_of(fence, struct sched_fences, finished)->name->str;
}

/* The scheduled fence is gone: drop its hold on the memory. */
static void scheduled_release(struct ttm_fence *fence)
{
	ttm_fence_put(&container_of(fence, struct sched_fences,
				    scheduled)->finished);
}

static void finished_release(struct ttm_fence *fence)
{
	struct sched_fences *f = container_of(fence, struct sched_fences,
					      finished);

	sched_name_put(f->name);
	/*
	 * The finished fence's release op: its grace period is over (and
	 * the scheduled fence's before it, which held a reference), so no
	 * lockless reader can reach either fence; recycling the memory is
	 * as safe as free() was (gpu_sim/fence_rcu.c).
	 */
	obj_cache_free(OBJ_CACHE_SCHED_FENCES, f, sizeof(*f));
}

static const struct ttm_fence_ops scheduled_ops = {
	.use_64bit_seqno = true,
	.get_driver_name = sched_fence_driver_name,
	.get_timeline_name = scheduled_timeline_name,
	.release = scheduled_release,
};

static const struct ttm_fence_ops finished_ops = {
	.use_64bit_seqno = true,
	.get_driver_name = sched_fence_driver_name,
	.get_timeline_name = finished_timeline_name,
	.release = finished_release,
};

int sched_fences_alloc(struct sched_name *name,
		       struct ttm_fence **scheduled,
		       struct ttm_fence **finished)
{
	/* One per job: this thread's cache, zeroed as calloc() did. */
	struct sched_fences *f = obj_cache_alloc(OBJ_CACHE_SCHED_FENCES,
						 sizeof(*f));

	if (!f)
		return -ENOMEM;
	memset(f, 0, sizeof(*f));
	f->name = sched_name_get(name);
	*scheduled = &f->scheduled;
	*finished = &f->finished;
	return 0;
}

void sched_fences_arm(struct ttm_fence *scheduled, uint64_t context,
		      uint64_t seqno)
{
	struct sched_fences *f = container_of(scheduled, struct sched_fences,
					      scheduled);

	ttm_fence_init(&f->scheduled, &scheduled_ops, context, seqno);
	ttm_fence_init(&f->finished, &finished_ops, context + 1, seqno);
	/* The scheduled fence's hold on the memory. */
	ttm_fence_get(&f->finished);
}

void sched_fences_free_unarmed(struct ttm_fence *scheduled)
{
	struct sched_fences *f;

	if (!scheduled)
		return;
	f = container_of(scheduled, struct sched_fences, scheduled);
	sched_name_put(f->name);
	/* Never armed: never seen by anyone but the job's owner. */
	obj_cache_free(OBJ_CACHE_SCHED_FENCES, f, sizeof(*f));
}

struct ttm_fence *sched_fence_scheduled_of(struct ttm_fence *fence,
					   const struct sched_name *name)
{
	struct sched_fences *f;

	/* Only an armed finished fence has these ops. */
	if (fence->ops != &finished_ops)
		return NULL;
	f = container_of(fence, struct sched_fences, finished);
	if (f->name != name)
		return NULL;
	/*
	 * The scheduled fence holds the finished one, not the reverse: at
	 * refcount 0 it is released (or soon), and a get would release it
	 * twice. The caller's reference to @fence keeps the memory.
	 */
	return ttm_fence_tryget(&f->scheduled);
}

struct ttm_fence *sched_fence_scheduled_in_group(struct ttm_fence *fence,
						 const struct sched_name *self)
{
	struct sched_fences *f;

	if (!self->group || fence->ops != &finished_ops)
		return NULL;
	f = container_of(fence, struct sched_fences, finished);
	if (f->name == self || f->name->group != self->group)
		return NULL;
	/*
	 * Not signalled: its ring, so the group's owner, is still alive (a
	 * ring drains before it goes, and its GPU after it), so the group's
	 * pointer cannot be another one's at a reused address. Signalled:
	 * nothing to wait for anyway.
	 */
	if (ttm_fence_is_signaled(fence))
		return NULL;
	return ttm_fence_tryget(&f->scheduled);
}
