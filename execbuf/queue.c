// SPDX-License-Identifier: MIT
/*
 * Step 3 of a submission, every buffer locked and validated: implicit
 * sync, the GPU job, and the job's fence in every buffer.
 *
 * Implicit sync is read off the reservations (the kernel's
 * dma_resv_usage_rw()): a write waits for every earlier reader and writer,
 * a read for earlier writers, and both for KERNEL fences, the moves that
 * validation just queued. Those are ordering dependencies: an earlier job
 * that failed does not fail this one. Explicit in-fences do propagate
 * their error: the job then fails without touching memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "execbuf/submit.h"
#include "execbuf/syncobj.h"
#include "ttmsim/fence_container.h"
#include "ttmsim/resv.h"
#include "ttmsim/syncobj.h"

/*
 * Append @fence; @explicit: a reference of ours (put on -ENOMEM), which
 * must come before any borrowed one.
 */
static int deps_add(struct submit_deps *d, struct ttm_fence *fence,
		    bool explicit)
{
	if (!d->cap) {
		d->v = d->inline_v;
		d->cap = SUBMIT_DEPS_INLINE;
	}
	if (d->n == d->cap) {
		unsigned int cap = 2 * d->cap;
		struct ttm_gpu_dep *v = d->v == d->inline_v ?
					malloc(cap * sizeof(*v)) :
					realloc(d->v, cap * sizeof(*v));

		if (!v) {
			if (explicit)
				ttm_fence_put(fence);
			return -ENOMEM;
		}
		if (d->v == d->inline_v)
			memcpy(v, d->inline_v, d->n * sizeof(*v));
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n++] = (struct ttm_gpu_dep){ fence, explicit };
	if (explicit)
		d->owned = d->n;
	return 0;
}

void submit_deps_fini(struct submit *s)
{
	unsigned int i;

	/* The implicit ones after them are the reservations'. */
	for (i = 0; i < s->deps.owned; i++)
		ttm_fence_put(s->deps.v[i].fence);
	if (s->deps.v != s->deps.inline_v)
		free(s->deps.v);
	s->deps.v = NULL;
	s->deps.n = s->deps.cap = s->deps.owned = 0;
	if (s->out_syncobjs) {
		for (i = 0; i < s->args->n_out_syncobjs; i++) {
			ttm_syncobj_put(s->out_syncobjs[i]);
			/* Left if the job was not submitted. */
			ttm_fence_chain_free(s->out_links[i]);
		}
	}
	free(s->out_syncobjs);
	s->out_syncobjs = NULL;
	s->out_links = NULL;
}

/*
 * The in-syncobjs' fences (of their points) as explicit in-fences, and
 * the out-syncobjs looked up and their points' chain links allocated now,
 * so that nothing can fail once the job is submitted. A flag is -EINVAL.
 */
static int take_syncobjs(struct submit *s)
{
	struct ttm_execbuf_args *args = s->args;
	unsigned int base = args->n_bos + args->n_in_fences +
			    args->n_in_fence_fds;
	struct ttm_syncobj *obj;
	struct ttm_fence *fence;
	unsigned int i;
	int ret;

	for (i = 0; i < args->n_in_syncobjs; i++) {
		const struct ttm_execbuf_syncobj *e = &args->in_syncobjs[i];

		args->bad_index = (int)(base + i);
		if (e->flags)
			return -EINVAL;
		obj = ttm_client_syncobj_lookup(s->client, e->handle);
		if (!obj)
			return -ENOENT;
		ret = ttm_syncobj_find_fence(obj, e->point, &fence);
		ttm_syncobj_put(obj);
		if (ret)
			return ret;
		ret = deps_add(&s->deps, fence, true);
		if (ret) {
			args->bad_index = -1;
			return ret;
		}
	}
	base += args->n_in_syncobjs;
	if (args->n_out_syncobjs) {
		s->out_syncobjs = calloc(args->n_out_syncobjs,
					 sizeof(*s->out_syncobjs) +
					 sizeof(*s->out_links));
		if (!s->out_syncobjs) {
			args->bad_index = -1;
			return -ENOMEM;
		}
		s->out_links = (struct ttm_fence_chain **)
			(s->out_syncobjs + args->n_out_syncobjs);
	}
	for (i = 0; i < args->n_out_syncobjs; i++) {
		const struct ttm_execbuf_syncobj *e = &args->out_syncobjs[i];

		args->bad_index = (int)(base + i);
		if (e->flags)
			return -EINVAL;
		s->out_syncobjs[i] = ttm_client_syncobj_lookup(s->client,
							       e->handle);
		if (!s->out_syncobjs[i])
			return -ENOENT;
		if (e->point && ttm_fence_chain_alloc(&s->out_links[i])) {
			args->bad_index = -1;
			return -ENOMEM;
		}
	}
	args->bad_index = -1;
	return 0;
}

int submit_in_fences(struct submit *s)
{
	struct ttm_execbuf_args *args = s->args;
	struct ttm_fence *fence;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < args->n_in_fences && !ret; i++) {
		if (!args->in_fences[i]) {
			args->bad_index = (int)(args->n_bos + i);
			return -EINVAL;
		}
		ret = deps_add(&s->deps, ttm_fence_get(args->in_fences[i]),
			       true);
	}
	for (i = 0; i < args->n_in_fence_fds && !ret; i++) {
		ret = ttm_fence_import_fd(args->in_fence_fds[i], &fence);
		if (ret) {
			args->bad_index = (int)(args->n_bos +
						args->n_in_fences + i);
			return ret;
		}
		ret = deps_add(&s->deps, fence, true);
	}
	if (ret == 0)
		ret = take_syncobjs(s);
	return ret;
}

/*
 * What each buffer's reservation says the job must wait for: its
 * unsignalled fences, as ttm_resv_get_fences() would snapshot them, but
 * read under the lock the submission holds (the kernel's locked
 * dma_resv_for_each_fence()): no read-side section with its full barrier,
 * no snapshot array, and no reference, since the reservations keep the
 * fences until the job is queued (ttm_sched_gpu_submit() takes its own).
 */
static int add_implicit(struct submit *s, struct submit_deps *d)
{
	struct ttm_resv_iter cursor;
	struct ttm_fence *f;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < s->n && !ret; i++) {
		ttm_resv_iter_begin(&cursor, ttm_bo_resv(s->objs[i].bo),
				    ttm_resv_usage_rw(s->objs[i].write));
		for (f = ttm_resv_iter_first(&cursor); f && !ret;
		     f = ttm_resv_iter_next(&cursor))
			if (!ttm_fence_is_signaled(f))
				ret = deps_add(d, f, false);
		ttm_resv_iter_end(&cursor);
	}
	return ret;
}

int submit_queue(struct submit *s)
{
	struct ttm_execbuf_args *args = s->args;
	struct ttm_gpu_job job = {
		.engine = args->engine,
		.duration_us = args->duration_us,
		.op = args->op,
		.add_value = args->add_value,
		.hang = args->flags & TTM_EXECBUF_HANG,
		.tag = args->tag,
	};
	struct ttm_gpu_range *ranges, ranges_inline[SUBMIT_DEPS_INLINE];
	struct ttm_fence_fd_slot slot = { .fd = -1 };
	struct ttm_fence *fence = NULL;
	struct execbuf_job *tracking;
	struct submit_deps *d = &s->deps;
	struct ttm_sched_entity *entity = NULL;
	unsigned int i;
	int ret, fd = -1;

	/* Only written buffers change: a read range would be added to. */
	ranges = s->n <= SUBMIT_DEPS_INLINE ? ranges_inline :
					       calloc(s->n, sizeof(*ranges));
	tracking = execbuf_job_new(s->client->edev);
	ret = ranges && tracking ? 0 : -ENOMEM;
	if (ret == 0)
		ret = client_entity(s->client, args->engine, &entity);
	if (ret == 0 && args->op == TTM_GPU_OP_COPY) {
		/*
		 * Source then destination, two distinct buffers of one
		 * size: the duplicates' fold may have left one.
		 */
		if (s->n != 2 ||
		    ttm_bo_size(s->objs[0].bo) != ttm_bo_size(s->objs[1].bo)) {
			args->bad_index = 1;
			ret = -EINVAL;
		}
		for (i = 0; i < s->n && !ret; i++)
			ttm_bo_gpu_range(s->objs[i].bo, &ranges[job.n_ranges++]);
	}
	for (i = 0; i < s->n && !ret && args->op != TTM_GPU_OP_COPY; i++)
		if (s->objs[i].write)
			ttm_bo_gpu_range(s->objs[i].bo, &ranges[job.n_ranges++]);
	if (ret == 0)
		ret = add_implicit(s, d);
	/*
	 * The out-fence's descriptor, reserved before the job is committed:
	 * one that runs short (-EMFILE) rejects the submission with nothing
	 * run, and the install after the commit cannot fail.
	 */
	if (ret == 0 && (args->flags & TTM_EXECBUF_FENCE_FD_OUT))
		ret = ttm_fence_fd_reserve(&slot);
	if (ret == 0) {
		job.ranges = ranges;
		job.deps = d->v;
		job.n_deps = d->n;
		/* Through the client's entity of the engine. */
		ret = ttm_sched_gpu_submit(entity, &job, &fence);
	}
	if (ranges != ranges_inline)
		free(ranges);
	if (ret) {
		ttm_fence_fd_unreserve(&slot);
		execbuf_job_discard(tracking);
		return ret;
	}
	if (slot.fd >= 0)
		fd = ttm_fence_fd_install(&slot, fence);

	for (i = 0; i < s->n; i++)
		ttm_resv_add_fence(ttm_bo_resv(s->objs[i].bo), fence,
				   s->objs[i].write ? TTM_RESV_USAGE_WRITE :
						      TTM_RESV_USAGE_READ);
	for (i = 0; i < args->n_out_syncobjs; i++) {
		if (args->out_syncobjs[i].point) {
			syncobj_point_add(s->out_syncobjs[i], s->out_links[i],
					  fence, args->out_syncobjs[i].point);
			s->out_links[i] = NULL;  /* the syncobj's now */
		} else {
			ttm_syncobj_replace_fence(s->out_syncobjs[i], fence);
		}
	}
	execbuf_job_track(tracking, fence);
	args->out_fence = fence;
	args->out_fence_fd = fd;
	return 0;
}
