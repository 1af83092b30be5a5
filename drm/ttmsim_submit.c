// SPDX-License-Identifier: MIT
/*
 * The ttmsim driver's SUBMIT: the user's arrays copied in and checked,
 * then one ttm_execbuf_submit() on the file's client, whose entity of
 * the engine runs the job; an error's entry named back to the user
 * (error_array, error_index).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "drm_priv.h"
#include "ttmsim_ioctl.h"
#include "ttmsim/execbuf.h"
#include "ttmsim/syncobj.h"
#include "ttmsim/ttmsim_drm.h"

/* Everything a submission allocates, freed at once. */
struct submit_arrays {
	struct drm_ttmsim_submit_bo *ubos;
	struct drm_ttmsim_syncobj *uin, *uout;
	struct ttm_execbuf_bo *bos;
	struct ttm_execbuf_syncobj *in, *out;
};

static void arrays_free(struct submit_arrays *a)
{
	free(a->ubos);
	free(a->uin);
	free(a->uout);
	free(a->bos);
	free(a->in);
	free(a->out);
}

static void set_error(struct drm_ttmsim_submit *args, uint32_t array,
		      uint32_t index)
{
	args->error_array = array;
	args->error_index = index;
}

/* The user's syncobj entries as execbuf's; flags must be 0. */
static int convert_syncobjs(struct drm_ttmsim_submit *args, uint32_t array,
			    const struct drm_ttmsim_syncobj *u,
			    uint32_t count, struct ttm_execbuf_syncobj **ret)
{
	struct ttm_execbuf_syncobj *v;
	uint32_t i;

	*ret = NULL;
	if (count == 0)
		return 0;
	v = calloc(count, sizeof(*v));
	if (!v)
		return -ENOMEM;
	*ret = v;
	for (i = 0; i < count; i++) {
		if (u[i].flags) {
			set_error(args, array, i);
			return -EINVAL;
		}
		v[i].handle = u[i].handle;
		v[i].point = u[i].point;
	}
	return 0;
}

/* Copy in and check everything that needs no lookup. */
static int submit_prepare(struct drm_ttmsim_submit *args,
			  struct submit_arrays *a)
{
	const uint32_t rw = DRM_TTMSIM_BO_READ | DRM_TTMSIM_BO_WRITE;
	uint32_t i;
	int ret;

	if ((args->flags & ~DRM_TTMSIM_SUBMIT_FLAGS) || args->pad ||
	    args->bo_count == 0 || args->bo_count > DRM_TTMSIM_MAX_BOS ||
	    args->in_syncobj_count > DRM_TTMSIM_MAX_SYNCOBJS ||
	    args->out_syncobj_count > DRM_TTMSIM_MAX_SYNCOBJS ||
	    args->op > DRM_TTMSIM_OP_COPY ||
	    (args->op != DRM_TTMSIM_OP_ADD && args->value))
		return -EINVAL;

	ret = drm_copy_array(args->bos, args->bo_count,
				sizeof(*a->ubos), (void **)&a->ubos);
	if (ret) {
		set_error(args, DRM_TTMSIM_ARRAY_BOS, 0);
		return ret;
	}
	ret = drm_copy_array(args->in_syncobjs, args->in_syncobj_count,
				sizeof(*a->uin), (void **)&a->uin);
	if (ret) {
		set_error(args, DRM_TTMSIM_ARRAY_IN_SYNCOBJS, 0);
		return ret;
	}
	ret = drm_copy_array(args->out_syncobjs, args->out_syncobj_count,
				sizeof(*a->uout), (void **)&a->uout);
	if (ret) {
		set_error(args, DRM_TTMSIM_ARRAY_OUT_SYNCOBJS, 0);
		return ret;
	}

	a->bos = calloc(args->bo_count, sizeof(*a->bos));
	if (!a->bos)
		return -ENOMEM;
	for (i = 0; i < args->bo_count; i++) {
		uint32_t f = a->ubos[i].flags;

		if (!(f & rw) || (f & ~rw)) {
			set_error(args, DRM_TTMSIM_ARRAY_BOS, i);
			return -EINVAL;
		}
		a->bos[i].handle = a->ubos[i].handle;
		a->bos[i].flags = (f & DRM_TTMSIM_BO_READ ?
				   TTM_EXECBUF_BO_READ : 0) |
				  (f & DRM_TTMSIM_BO_WRITE ?
				   TTM_EXECBUF_BO_WRITE : 0);
	}
	ret = convert_syncobjs(args, DRM_TTMSIM_ARRAY_IN_SYNCOBJS, a->uin,
			       args->in_syncobj_count, &a->in);
	if (ret == 0)
		ret = convert_syncobjs(args, DRM_TTMSIM_ARRAY_OUT_SYNCOBJS,
				       a->uout, args->out_syncobj_count,
				       &a->out);
	return ret;
}

/* execbuf's one bad_index over all its arrays, as the uAPI's pair. */
static void name_bad_entry(struct drm_ttmsim_submit *args,
			   const struct ttm_execbuf_args *e)
{
	uint32_t i, n_fds = e->n_in_fence_fds;

	if (e->bad_index < 0)
		return;
	i = (uint32_t)e->bad_index;
	if (i < e->n_bos) {
		set_error(args, DRM_TTMSIM_ARRAY_BOS, i);
		return;
	}
	i -= e->n_bos;   /* no in_fences: the driver passes none */
	if (i < n_fds) {
		set_error(args, DRM_TTMSIM_ARRAY_FENCE_FD, 0);
		return;
	}
	i -= n_fds;
	if (i < e->n_in_syncobjs) {
		set_error(args, DRM_TTMSIM_ARRAY_IN_SYNCOBJS, i);
		return;
	}
	i -= e->n_in_syncobjs;
	if (i < e->n_out_syncobjs)
		set_error(args, DRM_TTMSIM_ARRAY_OUT_SYNCOBJS, i);
}

static const enum ttm_gpu_op ops[] = {
	[DRM_TTMSIM_OP_NOP] = TTM_GPU_OP_NOP,
	[DRM_TTMSIM_OP_ADD] = TTM_GPU_OP_ADD,
	[DRM_TTMSIM_OP_COPY] = TTM_GPU_OP_COPY,
};

int ttmsim_submit_ioctl(struct ttm_drm_file *file, void *data)
{
	struct drm_ttmsim_submit *args = data;
	struct ttm_client *client = ttm_drm_file_client(file);
	struct submit_arrays a = { 0 };
	struct ttm_execbuf_args e = { 0 };
	int in_fd = args->fence_fd;
	int ret;

	set_error(args, DRM_TTMSIM_ARRAY_NONE, 0);
	ret = submit_prepare(args, &a);
	if (ret)
		goto out;

	e.engine = args->engine;
	e.bos = a.bos;
	e.n_bos = args->bo_count;
	e.op = ops[args->op];
	e.add_value = args->value;
	/* Whole microseconds of the GPU's clock, never shorter. */
	e.duration_us = args->duration_ns / 1000u +
			(args->duration_ns % 1000u != 0);
	e.in_syncobjs = a.in;
	e.n_in_syncobjs = args->in_syncobj_count;
	e.out_syncobjs = a.out;
	e.n_out_syncobjs = args->out_syncobj_count;
	if (args->flags & DRM_TTMSIM_SUBMIT_FENCE_FD_IN) {
		e.in_fence_fds = &in_fd;
		e.n_in_fence_fds = 1;
	}
	/* Kernel ioctls wait interruptibly. */
	e.flags = TTM_EXECBUF_INTERRUPTIBLE;
	if (args->flags & DRM_TTMSIM_SUBMIT_FENCE_FD_OUT)
		e.flags |= TTM_EXECBUF_FENCE_FD_OUT;
	e.out_fence_fd = -1;
	e.bad_index = -1;

	ret = ttm_execbuf_submit(client, &e);
	if (ret) {
		name_bad_entry(args, &e);
		goto out;
	}
	ttm_fence_put(e.out_fence);
	args->fence_fd = e.out_fence_fd;
out:
	arrays_free(&a);
	return ret;
}
