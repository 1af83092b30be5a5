// SPDX-License-Identifier: MIT
/*
 * Page flips on the sample driver's one CRTC, as the kernel's atomic
 * helpers do them:
 * - prepare (drm_atomic_helper_prepare_planes(), amdgpu_dm_plane_helper_
 *   prepare_fb()): the new framebuffer and the one shown now locked under
 *   one acquire context, the new one validated into CPU-visible VRAM
 *   (where the scanout engine reads) and pinned; the old one stays
 *   pinned: it is on screen until the flip happens;
 * - commit: a display job on the CRTC, a scheduler of the driver's own
 *   whose run_job "scans out" (checksums into the scanout log that
 *   FLIP_STATUS reads). The new buffer's write fences are its
 *   dependencies, ordering only (TTM_SCHED_DEP_ORDER): a hung render must
 *   not stop the display (drm_atomic_helper_wait_for_fences() ignores
 *   errors). Its finished fence is the flip fence;
 * - cleanup (drm_atomic_helper_cleanup_planes()): a worker waits for each
 *   flip fence in turn and unpins the framebuffer the flip replaced, as
 *   the kernel's commit work. Never in a fence callback: unpinning takes
 *   a reservation, a sleeping lock, and fence callbacks run in the
 *   signaller's context (a GPU engine's or another buffer's locks held).
 */
#include <errno.h>
#include <stdlib.h>

#include <ttmsim/exec.h>

#include "sdrv.h"

/* The scanout engine reads from CPU-visible VRAM only. */
static const struct ttm_placement sdrv_scanout_placement = {
	1, { { .domain = TTM_DOMAIN_VRAM, .flags = TTM_PLACE_CPU_VISIBLE } }
};

/* A display job: scan @fb out into its flip's log record. */
struct sdrv_scanout {
	struct ttm_sched_job base;
	struct sdrv_device *sdev;
	struct drm_sdrv_flip_status *rec;
	struct ttm_gpu_range fb;      /* pinned: it stays put; size 0: off */
};

/*
 * run_job: "scan out" (checksum) the buffer into the log. The scheduler
 * waited for its writers: no sleep, fit for ttm_gpu_advance() on a
 * deterministic GPU. Instant display: the hardware fence is the stub.
 */
static struct ttm_fence *sdrv_display_run(struct ttm_sched_job *job)
{
	struct sdrv_scanout *s = container_of(job, struct sdrv_scanout, base);
	const uint32_t *w = s->fb.addr;
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < s->fb.size / 4; i++)
		sum += w[i];
	pthread_mutex_lock(&s->sdev->log_lock);
	s->rec->word0 = s->fb.size ? w[0] : 0;
	s->rec->checksum = sum;
	s->rec->size = s->fb.size;
	pthread_mutex_unlock(&s->sdev->log_lock);
	return ttm_fence_get_stub();
}

static void sdrv_display_free(struct ttm_sched_job *job)
{
	ttm_sched_job_cleanup(job);
	free(container_of(job, struct sdrv_scanout, base));
}

static const struct ttm_sched_backend_ops sdrv_display_ops = {
	.run_job = sdrv_display_run, .free_job = sdrv_display_free,
};

/*
 * Unpin a framebuffer no longer shown; uninterruptibly: no pin may leak.
 * Without a ticket nor @interruptible, ttm_bo_reserve() waits until it
 * has the lock and returns 0 (its errors need one or the other); checked
 * all the same: never unpin without the reservation.
 */
static void sdrv_fb_release(struct ttm_bo *fb)
{
	if (ttm_bo_reserve(fb, false, false, NULL) == 0) {
		ttm_bo_unpin(fb);
		ttm_bo_unreserve(fb);
	}
	ttm_bo_put(fb);
}

/* The cleanup worker: the flips in order, each once its fence signalled. */
static void *sdrv_flip_worker(void *arg)
{
	struct sdrv_device *sdev = arg;
	struct sdrv_flip *f;
	int status;

	pthread_mutex_lock(&sdev->log_lock);
	for (;;) {
		while (sdev->n_done == sdev->n_log && !sdev->stopping)
			pthread_cond_wait(&sdev->log_cond, &sdev->log_lock);
		if (sdev->n_done == sdev->n_log)
			break;  /* stopping, and every flip is cleaned up */
		f = &sdev->log[sdev->n_done % SDRV_LOG_SIZE];
		pthread_mutex_unlock(&sdev->log_lock);
		ttm_fence_wait(f->fence, false, -1);
		if (f->old)
			sdrv_fb_release(f->old);
		status = ttm_fence_get_status(f->fence);
		/*
		 * The record is final: FLIP_STATUS waiters may go. The
		 * fence goes under the lock: FLIP_STATUS takes references
		 * to the fences of flips not done.
		 */
		pthread_mutex_lock(&sdev->log_lock);
		f->st.status = status < 0 ? status : 0;
		f->st.done = 1;
		sdev->n_done++;
		pthread_cond_broadcast(&sdev->log_cond);
		ttm_fence_put(f->fence);
		f->fence = NULL;
	}
	pthread_mutex_unlock(&sdev->log_lock);
	return NULL;
}

/*
 * Prepare: lock @new and @old (either may be NULL, or both the same),
 * a fence slot each, under one ticket; @new into visible VRAM, pinned.
 */
static int sdrv_flip_prepare(struct ttm_exec *exec, struct ttm_bo *new,
			     struct ttm_bo *old)
{
	struct ttm_operation_ctx ctx = { .interruptible = true, .exec = exec };
	struct ttm_bo *bos[2];
	unsigned int n = 0;
	int ret = 0;

	if (new)
		bos[n++] = new;
	if (old)
		bos[n++] = old;   /* if it is @new, exec ignores it */
	ttm_exec_until_all_locked(exec) {
		ret = ttm_exec_prepare_array(exec, bos, n, 1);
		ttm_exec_retry_on_contention(exec);
		if (ret)
			return ret;
		if (new) {
			ret = ttm_bo_validate(new, &sdrv_scanout_placement,
					      &ctx);
			ttm_exec_retry_on_contention(exec);
			if (ret)
				return ret;
		}
	}
	ttm_exec_done(exec);
	return new ? ttm_bo_pin(new) : 0;
}

/*
 * Commit: the display job for @new (NULL: display off) into @f, its
 * fence a read of both buffers: their writers wait for the display.
 */
static int sdrv_flip_commit(struct sdrv_device *sdev, struct ttm_bo *new,
			    struct ttm_bo *old, struct sdrv_flip *f)
{
	struct sdrv_scanout *s = calloc(1, sizeof(*s));
	struct ttm_fence **deps = NULL;
	unsigned int i, n_deps = 0;
	int ret;

	if (!s)
		return -ENOMEM;
	s->sdev = sdev;
	s->rec = &f->st;
	ret = ttm_sched_job_init(&s->base, sdev->crtc, 1);
	if (ret) {
		free(s);
		return ret;
	}
	/* Writers and moves (KERNEL): the display reads the buffer. */
	if (new) {
		ttm_bo_gpu_range(new, &s->fb);
		ret = ttm_resv_get_fences(ttm_bo_resv(new),
					  TTM_RESV_USAGE_WRITE, &deps, &n_deps);
	}
	/* Each call takes a reference over, even on error. */
	for (i = 0; i < n_deps; i++) {
		if (ret == 0)
			ret = ttm_sched_job_add_dependency_flags(&s->base,
					deps[i], TTM_SCHED_DEP_ORDER);
		else
			ttm_fence_put(deps[i]);
	}
	free(deps);
	if (ret) {
		sdrv_display_free(&s->base);
		return ret;
	}
	/*
	 * Nothing fails from here: the slot is this flip's now, before its
	 * job can write the record; a failed flip leaves the record of the
	 * flip made SDRV_LOG_SIZE ago readable.
	 */
	pthread_mutex_lock(&sdev->log_lock);
	*f = (struct sdrv_flip){ .st.flip_id = sdev->n_log };
	pthread_mutex_unlock(&sdev->log_lock);
	ttm_sched_job_arm(&s->base);
	f->fence = ttm_fence_get(ttm_sched_job_finished(&s->base));
	ttm_sched_entity_push_job(&s->base);
	if (new)
		ttm_resv_add_fence(ttm_bo_resv(new), f->fence,
				   TTM_RESV_USAGE_READ);
	if (old && old != new)
		ttm_resv_add_fence(ttm_bo_resv(old), f->fence,
				   TTM_RESV_USAGE_READ);
	return 0;
}

int sdrv_flip_ioctl(struct ttm_drm_file *file, void *data)
{
	struct drm_sdrv_flip *args = data;
	struct sdrv_device *sdev = sdrv_from_file(file);
	struct ttm_bo *new, *old;
	struct sdrv_bo *bo;
	struct sdrv_flip *f;
	struct ttm_exec exec;
	int ret;

	if (args->flags)
		return -EINVAL;
	bo = args->handle ? sdrv_bo_lookup(file, args->handle) : NULL;
	if (args->handle && !bo) {
		/* A buffer not of ours (dumb, imported) is no scanout one. */
		struct ttm_bo *tbo = ttm_client_lookup(
			ttm_drm_file_client(file), args->handle);

		ttm_bo_put(tbo);
		return tbo ? -EINVAL : -ENOENT;
	}
	if (bo && !(bo->flags & DRM_SDRV_GEM_SCANOUT)) {
		ttm_bo_put(&bo->tbo);
		return -EINVAL;
	}
	new = bo ? &bo->tbo : NULL;
	/* One flip at a time on the CRTC, as its modeset lock does. */
	pthread_mutex_lock(&sdev->flip_lock);
	old = sdev->scanout;
	ttm_exec_init(&exec, sdev->ttm,
		      TTM_EXEC_INTERRUPTIBLE | TTM_EXEC_IGNORE_DUPLICATES);
	/* Its log slot; -EBUSY if still in use, as nonblocking commits. */
	pthread_mutex_lock(&sdev->log_lock);
	f = &sdev->log[sdev->n_log % SDRV_LOG_SIZE];
	ret = sdev->n_log - sdev->n_done < SDRV_LOG_SIZE ? 0 : -EBUSY;
	pthread_mutex_unlock(&sdev->log_lock);
	if (ret == 0)
		ret = sdrv_flip_prepare(&exec, new, old);
	if (ret == 0) {
		ret = sdrv_flip_commit(sdev, new, old, f);
		if (ret && new)   /* nothing was queued */
			ttm_bo_unpin(new);
	}
	if (ret == 0) {
		/* The CRTC's references move: @new's to it, @old's to @f. */
		f->old = old;
		sdev->scanout = new;
		new = NULL;
		pthread_mutex_lock(&sdev->log_lock);
		args->flip_id = sdev->n_log++;
		pthread_cond_broadcast(&sdev->log_cond);   /* the worker's */
		pthread_mutex_unlock(&sdev->log_lock);
	}
	ttm_exec_fini(&exec);
	pthread_mutex_unlock(&sdev->flip_lock);
	ttm_bo_put(new);
	return ret;
}

int sdrv_flip_status_ioctl(struct ttm_drm_file *file, void *data)
{
	struct drm_sdrv_flip_status *args = data;
	struct sdrv_device *sdev = sdrv_from_file(file);
	struct sdrv_flip *f = &sdev->log[args->flip_id % SDRV_LOG_SIZE];
	struct drm_sdrv_flip_status *rec = &f->st;
	struct ttm_fence *fence;
	int ret = 0;

	if (args->flags & ~DRM_SDRV_FLIP_STATUS_WAIT)
		return -EINVAL;
	pthread_mutex_lock(&sdev->log_lock);
	/*
	 * Until done, unless not yet made or forgotten (its slot reused).
	 * The long wait, for the flip fence, is interruptible; the worker's
	 * cleanup after it is short, a plain condition wait.
	 */
	while ((args->flags & DRM_SDRV_FLIP_STATUS_WAIT) && !rec->done &&
	       rec->flip_id == args->flip_id && args->flip_id < sdev->n_log) {
		fence = ttm_fence_get(f->fence);
		if (!ttm_fence_is_signaled(fence)) {
			pthread_mutex_unlock(&sdev->log_lock);
			ret = ttm_fence_wait(fence, true, -1);
			ttm_fence_put(fence);
			if (ret < 0)
				return ret;   /* -EINTR */
			pthread_mutex_lock(&sdev->log_lock);
			continue;
		}
		ttm_fence_put(fence);
		pthread_cond_wait(&sdev->log_cond, &sdev->log_lock);
	}
	if (rec->flip_id != args->flip_id || args->flip_id >= sdev->n_log)
		ret = -ENOENT;
	else
		*args = *rec;   /* flags out: 0 */
	pthread_mutex_unlock(&sdev->log_lock);
	return ret;
}

int sdrv_flip_init(struct sdrv_device *sdev, struct ttm_gpu *gpu)
{
	struct ttm_sched_options opts = {
		.name = "display", .credit_limit = 1,
		.ops = &sdrv_display_ops, .gpu = gpu,
	};
	int ret;

	pthread_mutex_init(&sdev->flip_lock, NULL);
	pthread_mutex_init(&sdev->log_lock, NULL);
	pthread_cond_init(&sdev->log_cond, NULL);
	ret = ttm_sched_create(&opts, &sdev->display);
	if (ret)
		goto err_locks;
	ret = ttm_sched_entity_create(sdev->display, TTM_SCHED_PRIORITY_HIGH,
				      &sdev->crtc);
	if (ret)
		goto err_sched;
	ret = -pthread_create(&sdev->worker, NULL, sdrv_flip_worker, sdev);
	if (ret)
		goto err_entity;
	return 0;

err_entity:
	ttm_sched_entity_destroy(sdev->crtc, 0);
err_sched:
	ttm_sched_destroy(sdev->display);
err_locks:
	pthread_cond_destroy(&sdev->log_cond);
	pthread_mutex_destroy(&sdev->log_lock);
	pthread_mutex_destroy(&sdev->flip_lock);
	return ret;
}

/* Display off for good: drain the CRTC, clean up, unpin what is shown. */
void sdrv_flip_fini(struct sdrv_device *sdev)
{
	ttm_sched_entity_destroy(sdev->crtc, 1000000000ull);
	ttm_sched_destroy(sdev->display);
	pthread_mutex_lock(&sdev->log_lock);
	sdev->stopping = true;
	pthread_cond_broadcast(&sdev->log_cond);
	pthread_mutex_unlock(&sdev->log_lock);
	pthread_join(sdev->worker, NULL);
	if (sdev->scanout)
		sdrv_fb_release(sdev->scanout);
	pthread_cond_destroy(&sdev->log_cond);
	pthread_mutex_destroy(&sdev->log_lock);
	pthread_mutex_destroy(&sdev->flip_lock);
}
