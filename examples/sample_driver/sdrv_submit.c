// SPDX-License-Identifier: MIT
/*
 * The sample driver's submit path, as amdgpu_cs_ioctl() or
 * xe_exec_ioctl() on drm_exec: copy the user's buffer list in, look the
 * handles up in the user's order (duplicates folded), lock them all with
 * the exec helper's back-off loop, validate them all, collect the
 * implicit dependencies from their reservations, queue the job on the
 * file's scheduler entity, and publish its finished fence in every
 * reservation (WRITE for the buffers it writes, READ for the others).
 * WAIT waits for one of the file's fences (msm's WAIT_FENCE); the file
 * keeps only the fences of jobs not yet seen done, and the status of its
 * last SDRV_FENCE_RING jobs.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <ttmsim/exec.h>
#include <ttmsim/execbuf.h>

#include "sdrv.h"

/* A job's buffers, copied in and looked up: one allocation. */
struct sdrv_job_bos {
	struct drm_sdrv_submit_bo ubos[DRM_SDRV_MAX_BOS];
	struct ttm_exec_entry entries[DRM_SDRV_MAX_BOS]; /* a ref each */
	struct ttm_resv_access access[DRM_SDRV_MAX_BOS]; /* @n_unique */
	struct ttm_gpu_range ranges[DRM_SDRV_MAX_BOS];   /* written ones */
	unsigned int n, n_unique;
};

static void job_bos_free(struct sdrv_job_bos *jb)
{
	unsigned int i;

	for (i = 0; i < jb->n; i++)
		ttm_bo_put(jb->entries[i].bo);
	free(jb);
}

/* Copy the user's array and look every handle up, in the user's order. */
static int job_bos_get(struct ttm_drm_file *file,
		       const struct drm_sdrv_submit *args,
		       struct sdrv_job_bos *jb)
{
	const uint32_t rw = DRM_SDRV_BO_READ | DRM_SDRV_BO_WRITE;
	unsigned int i;
	int ret;

	ret = ttm_drm_copy_from_user(jb->ubos, args->bos,
				     args->bo_count * sizeof(*jb->ubos));
	if (ret)
		return ret;
	for (i = 0; i < args->bo_count; i++) {
		const struct drm_sdrv_submit_bo *u = &jb->ubos[i];
		struct sdrv_bo *bo;

		if (!(u->flags & rw) || (u->flags & ~rw))
			return -EINVAL;
		bo = sdrv_bo_lookup(file, u->handle);
		if (!bo)
			return -ENOENT;
		jb->entries[jb->n++] = (struct ttm_exec_entry){
			.bo = &bo->tbo, .write = u->flags & DRM_SDRV_BO_WRITE };
	}
	/*
	 * A buffer listed twice is used once, written if any entry writes it
	 * (amdgpu's bo_list); repeats go to the end, their references kept
	 * until job_bos_free() puts every entry's.
	 */
	jb->n_unique = ttm_exec_entries_fold(jb->entries, jb->n, NULL);
	return 0;
}

/*
 * Lock and validate every buffer: drm_exec_until_all_locked() with
 * drm_exec_prepare_obj() (a fence slot each for the job's fence), then
 * validate all, which backs off too if an eviction contends.
 */
static int job_lock_and_validate(struct sdrv_device *sdev,
				 struct ttm_exec *exec,
				 struct sdrv_job_bos *jb)
{
	struct ttm_operation_ctx ctx = { .interruptible = true, .exec = exec };
	unsigned int i, passes = 0;
	int ret = 0;

	ttm_exec_until_all_locked(exec) {
		passes++;
		for (i = 0; i < jb->n_unique; i++) {
			ret = ttm_exec_prepare_bo(exec, jb->entries[i].bo, 1);
			ttm_exec_retry_on_contention(exec);
			if (ret)
				return ret;
		}
		ret = ttm_exec_entries_validate(jb->entries, jb->n_unique,
						&ctx, NULL);
		ttm_exec_retry_on_contention(exec);
		if (ret)
			return ret;
	}
	ttm_exec_done(exec);
	/* The back-offs (ww_debug_inject() makes some): a test counts them. */
	__atomic_fetch_add(&sdev->backoffs, passes - 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * Retire the file's oldest jobs that are done, in order: their fences
 * put, their status kept (msm's fence table keeps the last completed
 * seqno). Stops at the first still running, or not yet queued.
 */
static void file_retire(struct sdrv_file *sfile)
{
	while (sfile->n_retired < sfile->n_fences) {
		struct sdrv_fence_slot *slot =
			&sfile->fences[sfile->n_retired % SDRV_FENCE_RING];
		int status;

		if (!slot->fence || !ttm_fence_is_signaled(slot->fence))
			break;
		status = ttm_fence_get_status(slot->fence);
		slot->status = status < 0 ? status : 0;
		ttm_fence_put(slot->fence);
		slot->fence = NULL;
		sfile->n_retired++;
	}
}

/*
 * A seqno for the job, taken before it is queued, so that nothing can
 * fail once it is (msm allocates its fence id the same way); its slot
 * stays empty until the job is queued (or not). -EBUSY if the slot's
 * job, SDRV_FENCE_RING seqnos ago, is still running.
 */
static int file_reserve_seqno(struct sdrv_file *sfile, uint64_t *ret_seqno)
{
	int ret = 0;

	pthread_mutex_lock(&sfile->lock);
	file_retire(sfile);
	if (sfile->n_fences - sfile->n_retired >= SDRV_FENCE_RING) {
		ret = -EBUSY;
	} else {
		sfile->fences[sfile->n_fences % SDRV_FENCE_RING] =
			(struct sdrv_fence_slot){ 0 };
		*ret_seqno = ++sfile->n_fences;
	}
	pthread_mutex_unlock(&sfile->lock);
	return ret;
}

/*
 * Queue the job, then publish its fence. Its ranges are the buffers'
 * memory now: later moves wait for this fence before touching it.
 */
static int job_push(struct sdrv_file *sfile, const struct drm_sdrv_submit *args,
		    struct sdrv_job_bos *jb, struct ttm_fence **ret_fence)
{
	struct ttm_resv_access *access = jb->access;
	struct ttm_gpu_dep *deps = NULL;
	struct ttm_fence **fences = NULL;
	unsigned int i, n_fences = 0, n_ranges = 0;
	struct ttm_gpu_job job;
	int ret;

	for (i = 0; i < jb->n_unique; i++) {
		access[i].resv = ttm_bo_resv(jb->entries[i].bo);
		access[i].write = jb->entries[i].write;
		if (jb->entries[i].write)
			ttm_bo_gpu_range(jb->entries[i].bo,
					 &jb->ranges[n_ranges++]);
	}
	/*
	 * Implicit sync (drm_sched_job_add_implicit_dependencies()): a
	 * writer waits for earlier readers and writers, a reader for
	 * writers, moves (KERNEL) included.
	 */
	ret = ttm_resv_implicit_deps(access, jb->n_unique, &fences, &n_fences);
	if (ret)
		goto out;
	deps = calloc(n_fences ? n_fences : 1, sizeof(*deps));
	if (!deps) {
		ret = -ENOMEM;
		goto out;
	}
	/* Ordering only: the kernel ignores implicit fences' errors (hangs). */
	for (i = 0; i < n_fences; i++)
		deps[i] = (struct ttm_gpu_dep){ .fence = fences[i] };
	job = (struct ttm_gpu_job){
		.op = n_ranges ? TTM_GPU_OP_ADD : TTM_GPU_OP_NOP,
		.deps = deps, .n_deps = n_fences,
		.ranges = jb->ranges, .n_ranges = n_ranges,
		.duration_us = (args->duration_ns + 999) / 1000,
		.add_value = args->value,
		.hang = args->flags & DRM_SDRV_SUBMIT_HANG,
	};
	ret = ttm_sched_gpu_submit(sfile->entity, &job, ret_fence);
	if (ret)
		goto out;
	/* No failure past this point: the slots were reserved when locking. */
	for (i = 0; i < jb->n_unique; i++)
		ttm_resv_add_fence(access[i].resv, *ret_fence,
				   jb->entries[i].write ? TTM_RESV_USAGE_WRITE :
				   TTM_RESV_USAGE_READ);
out:
	for (i = 0; i < n_fences; i++)
		ttm_fence_put(fences[i]);
	free(fences);
	free(deps);
	return ret;
}

int sdrv_submit_ioctl(struct ttm_drm_file *file, void *data)
{
	struct drm_sdrv_submit *args = data;
	struct sdrv_file *sfile = sdrv_file(file);
	struct sdrv_job_bos *jb;
	struct ttm_fence *fence = NULL;
	struct ttm_exec exec;
	uint64_t seqno;
	int ret;

	if ((args->flags & ~DRM_SDRV_SUBMIT_HANG) || args->pad ||
	    args->bo_count == 0 || args->bo_count > DRM_SDRV_MAX_BOS ||
	    args->duration_ns > DRM_SDRV_MAX_DURATION_NS)
		return -EINVAL;
	jb = calloc(1, sizeof(*jb));
	if (!jb)
		return -ENOMEM;
	ret = job_bos_get(file, args, jb);
	if (ret == 0)
		ret = file_reserve_seqno(sfile, &seqno);
	if (ret)
		goto out_bos;
	ttm_exec_init(&exec, ttm_bo_device(jb->entries[0].bo),
		      TTM_EXEC_INTERRUPTIBLE);
	ret = job_lock_and_validate(sdrv_from_file(file), &exec, jb);
	if (ret == 0)
		ret = job_push(sfile, args, jb, &fence);
	/* Unlocking puts every buffer back at its LRU's tail: just used. */
	ttm_exec_fini(&exec);
	/* The slot gets the job's fence, or a signalled stub if none ran. */
	pthread_mutex_lock(&sfile->lock);
	sfile->fences[(seqno - 1) % SDRV_FENCE_RING].fence =
		fence ? fence : ttm_fence_get_stub();
	pthread_mutex_unlock(&sfile->lock);
	if (ret == 0)
		args->seqno = seqno;
out_bos:
	job_bos_free(jb);
	return ret;
}

int sdrv_wait_ioctl(struct ttm_drm_file *file, void *data)
{
	struct drm_sdrv_wait *args = data;
	struct sdrv_file *sfile = sdrv_file(file);
	struct ttm_fence *fence = NULL;
	struct sdrv_fence_slot *slot;
	int64_t timeout = args->timeout_ns > INT64_MAX ? -1 :
			  (int64_t)args->timeout_ns;
	int ret = 0;

	if (args->pad)
		return -EINVAL;
	pthread_mutex_lock(&sfile->lock);
	slot = &sfile->fences[(args->seqno - 1) % SDRV_FENCE_RING];
	/* Unknown, forgotten (its slot reused), or not yet queued. */
	if (args->seqno < 1 || args->seqno > sfile->n_fences ||
	    args->seqno + SDRV_FENCE_RING <= sfile->n_fences)
		ret = -ENOENT;
	else if (args->seqno <= sfile->n_retired)
		args->status = slot->status;
	else if (slot->fence)
		fence = ttm_fence_get(slot->fence);
	else
		ret = -ENOENT;
	pthread_mutex_unlock(&sfile->lock);
	if (!fence)
		return ret;
	ret = ttm_fence_wait(fence, true, timeout);
	if (ret == 0) {
		int status = ttm_fence_get_status(fence);

		args->status = status < 0 ? status : 0;
	}
	ttm_fence_put(fence);
	return ret;
}
