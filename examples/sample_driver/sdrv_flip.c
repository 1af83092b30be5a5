// SPDX-License-Identifier: MIT
/*
 * Page flips on the sample driver's one CRTC, done as the kernel's atomic
 * helpers do them:
 * - prepare (drm_atomic_helper_prepare_planes(), amdgpu_dm_plane_helper_
 *   prepare_fb()): the new framebuffer and the one shown now are locked
 *   under one acquire context, the new one validated into CPU-visible
 *   VRAM (the scanout engine reads it there) and pinned; the old one
 *   stays pinned, since it is on screen until the flip happens;
 * - commit: a display job on the CRTC's queue, a scheduler of the
 *   driver's own whose run_job "scans out": records a checksum in the
 *   scanout log, which FLIP_STATUS reports. The new buffer's write
 *   fences are its dependencies, ordering only (TTM_SCHED_DEP_ORDER):
 *   a hung render must not stop the display, as commit_tail's
 *   drm_atomic_helper_wait_for_fences() ignores fence errors. Its
 *   finished fence is the flip fence;
 * - cleanup (drm_atomic_helper_cleanup_planes()): the old framebuffer is
 *   unpinned by a worker thread once the flip fence signalled. Never in
 *   the fence callback itself: unpinning takes the buffer's reservation,
 *   a sleeping lock, and fence callbacks run in the signaller's context
 *   (with a GPU engine's or another buffer's locks held), so the
 *   callback only queues the work, as the kernel's commit_work.
 */
#include <errno.h>
#include <stdlib.h>

#include <ttmsim/exec.h>

#include "sdrv.h"
#include "sdrv_drm.h"

/* The scanout engine reads from CPU-visible VRAM only. */
static const struct ttm_placement sdrv_scanout_placement = {
	1, { { .domain = TTM_DOMAIN_VRAM, .flags = TTM_PLACE_CPU_VISIBLE } }
};

/* One flip's cleanup: the old framebuffer to unpin once @fence signals. */
struct sdrv_flip_work {
	struct sdrv_device *sdev;
	struct ttm_fence *fence;      /* the flip fence, a reference */
	struct ttm_fence_cb cb;
	struct ttm_bo *old;           /* a reference, or NULL */
	uint64_t id;                  /* its scanout log record */
	struct sdrv_flip_work *next;
};

/* A display job: scan @fb out into log record @id. */
struct sdrv_scanout {
	struct ttm_sched_job base;
	struct sdrv_device *sdev;
	uint64_t id;
	struct ttm_gpu_range fb;      /* pinned: it stays put; size 0: off */
};

/*
 * run_job: "scan out" the buffer, i.e. checksum it into the log. The
 * scheduler has waited for its writers, so this never sleeps and can run
 * inside ttm_gpu_advance() on a deterministic GPU. The display is
 * instant: the hardware fence is the signalled stub.
 */
static struct ttm_fence *sdrv_display_run(struct ttm_sched_job *job)
{
	struct sdrv_scanout *s = container_of(job, struct sdrv_scanout, base);
	struct sdrv_flip_rec *rec = &s->sdev->log[s->id % SDRV_LOG_SIZE];
	const uint32_t *w = s->fb.addr;
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < s->fb.size / 4; i++)
		sum += w[i];
	pthread_mutex_lock(&s->sdev->log_lock);
	rec->word0 = s->fb.size ? w[0] : 0;
	rec->checksum = sum;
	rec->size = s->fb.size;
	pthread_mutex_unlock(&s->sdev->log_lock);
	return ttm_fence_get_stub();
}

static void sdrv_display_free(struct ttm_sched_job *job)
{
	ttm_sched_job_cleanup(job);
	free(container_of(job, struct sdrv_scanout, base));
}

static const struct ttm_sched_backend_ops sdrv_display_ops = {
	.run_job = sdrv_display_run,
	.free_job = sdrv_display_free,
};

/* The flip fence signalled: hand the cleanup to the worker, nothing else. */
static void sdrv_flip_done(struct ttm_fence *fence, struct ttm_fence_cb *cb)
{
	struct sdrv_flip_work *w = container_of(cb, struct sdrv_flip_work, cb);
	struct sdrv_device *sdev = w->sdev;

	(void)fence;
	pthread_mutex_lock(&sdev->log_lock);
	*sdev->work_tail = w;
	sdev->work_tail = &w->next;
	pthread_cond_broadcast(&sdev->log_cond);
	pthread_mutex_unlock(&sdev->log_lock);
}

/* The flip's record is final: FLIP_STATUS waiters may go. */
static void sdrv_log_finish(struct sdrv_device *sdev, uint64_t id, int status)
{
	pthread_mutex_lock(&sdev->log_lock);
	sdev->log[id % SDRV_LOG_SIZE].status = status;
	sdev->log[id % SDRV_LOG_SIZE].done = true;
	pthread_cond_broadcast(&sdev->log_cond);
	pthread_mutex_unlock(&sdev->log_lock);
}

/* Unpin a framebuffer no longer shown; not interruptible: a pin must never leak. */
static void sdrv_fb_release(struct ttm_bo *fb)
{
	ttm_bo_reserve(fb, false, false, NULL);
	ttm_bo_unpin(fb);
	ttm_bo_unreserve(fb);
	ttm_bo_put(fb);
}

static void *sdrv_flip_worker(void *arg)
{
	struct sdrv_device *sdev = arg;
	struct sdrv_flip_work *w;
	int status;

	pthread_mutex_lock(&sdev->log_lock);
	for (;;) {
		while (!sdev->work && !sdev->stopping)
			pthread_cond_wait(&sdev->log_cond, &sdev->log_lock);
		w = sdev->work;
		if (!w)
			break;  /* stopping, and the queue is empty */
		sdev->work = w->next;
		if (!sdev->work)
			sdev->work_tail = &sdev->work;
		pthread_mutex_unlock(&sdev->log_lock);
		/* Cleanup: unpin the replaced framebuffer, then log the flip done. */
		if (w->old)
			sdrv_fb_release(w->old);
		status = ttm_fence_get_status(w->fence);
		sdrv_log_finish(sdev, w->id, status < 0 ? status : 0);
		ttm_fence_put(w->fence);
		free(w);
		pthread_mutex_lock(&sdev->log_lock);
	}
	pthread_mutex_unlock(&sdev->log_lock);
	return NULL;
}

/*
 * A new record in the scanout log, a ring of the last SDRV_LOG_SIZE
 * flips; -EBUSY while the flip that used the slot before is not done
 * (the kernel's nonblocking commits return -EBUSY too).
 */
static int sdrv_log_add(struct sdrv_device *sdev, uint64_t *ret_id)
{
	struct sdrv_flip_rec *rec;
	int ret = 0;

	pthread_mutex_lock(&sdev->log_lock);
	rec = &sdev->log[sdev->n_log % SDRV_LOG_SIZE];
	if (sdev->n_log >= SDRV_LOG_SIZE && !rec->done) {
		ret = -EBUSY;
	} else {
		*rec = (struct sdrv_flip_rec){ 0 };
		*ret_id = sdev->n_log++;
	}
	pthread_mutex_unlock(&sdev->log_lock);
	return ret;
}

/*
 * Prepare: lock @new and @old (either may be NULL, or both the same)
 * under one ticket, then validate @new into visible VRAM and pin it.
 * Each gets a fence slot for the flip fence.
 */
static int sdrv_flip_prepare(struct ttm_exec *exec, struct ttm_bo *new,
			     struct ttm_bo *old)
{
	struct ttm_operation_ctx ctx = { .interruptible = true, .exec = exec };
	struct ttm_bo *bos[2] = { new, old };
	unsigned int i;
	int ret = 0;

	ttm_exec_until_all_locked(exec) {
		for (i = 0; i < 2; i++) {
			if (!bos[i])
				continue;
			ret = ttm_exec_prepare_bo(exec, bos[i], 1);
			ttm_exec_retry_on_contention(exec);
			if (ret)
				return ret;
		}
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
 * Commit: the display job for @new (NULL: display off), its fence
 * published as a read of both buffers: writers of either must wait
 * until the display is done with it.
 */
static int sdrv_flip_commit(struct sdrv_device *sdev, struct ttm_bo *new,
			    struct ttm_bo *old, uint64_t id,
			    struct ttm_fence **ret_fence)
{
	struct sdrv_scanout *s = calloc(1, sizeof(*s));
	struct ttm_fence **deps = NULL;
	unsigned int i, n_deps = 0;
	int ret;

	if (!s)
		return -ENOMEM;
	s->sdev = sdev;
	s->id = id;
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
	ttm_sched_job_arm(&s->base);
	*ret_fence = ttm_fence_get(ttm_sched_job_finished(&s->base));
	ttm_sched_entity_push_job(&s->base);
	if (new)
		ttm_resv_add_fence(ttm_bo_resv(new), *ret_fence,
				   TTM_RESV_USAGE_READ);
	if (old && old != new)
		ttm_resv_add_fence(ttm_bo_resv(old), *ret_fence,
				   TTM_RESV_USAGE_READ);
	return 0;
}

int sdrv_flip_ioctl(struct ttm_drm_file *file, void *data)
{
	struct drm_sdrv_flip *args = data;
	struct sdrv_device *sdev = sdrv_from_file(file);
	struct sdrv_flip_work *w = NULL;
	struct ttm_bo *new = NULL, *old;
	struct ttm_exec exec;
	int ret;

	if (args->flags)
		return -EINVAL;
	if (args->handle) {
		struct sdrv_bo *bo = sdrv_bo_lookup(file, args->handle);

		if (!bo)
			return -ENOENT;
		new = &bo->tbo;
		if (!(bo->flags & DRM_SDRV_GEM_SCANOUT)) {
			ttm_bo_put(new);
			return -EINVAL;
		}
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		ttm_bo_put(new);
		return -ENOMEM;
	}
	/* One flip at a time on the CRTC, as its modeset lock does. */
	pthread_mutex_lock(&sdev->flip_lock);
	old = sdev->scanout;
	ttm_exec_init(&exec, sdev->ttm,
		      TTM_EXEC_INTERRUPTIBLE | TTM_EXEC_IGNORE_DUPLICATES);
	ret = sdrv_flip_prepare(&exec, new, old);
	if (ret)
		goto out;
	ret = sdrv_log_add(sdev, &w->id);
	if (ret == 0) {
		ret = sdrv_flip_commit(sdev, new, old, w->id, &w->fence);
		if (ret)   /* nothing was shown */
			sdrv_log_finish(sdev, w->id, ret);
	}
	if (ret) {
		if (new)
			ttm_bo_unpin(new);
		goto out;
	}
	args->flip_id = w->id;
	/* The CRTC's references move: @new's to it, @old's to the cleanup. */
	sdev->scanout = new;
	new = NULL;
	w->sdev = sdev;
	w->old = old;
	if (ttm_fence_add_callback(w->fence, &w->cb, sdrv_flip_done))
		sdrv_flip_done(w->fence, &w->cb);   /* signalled already */
	w = NULL;
out:
	ttm_exec_fini(&exec);
	pthread_mutex_unlock(&sdev->flip_lock);
	ttm_bo_put(new);
	free(w);
	return ret;
}

int sdrv_flip_status_ioctl(struct ttm_drm_file *file, void *data)
{
	struct drm_sdrv_flip_status *args = data;
	struct sdrv_device *sdev = sdrv_from_file(file);
	struct sdrv_flip_rec *rec = &sdev->log[args->flip_id % SDRV_LOG_SIZE];
	int ret = 0;

	if (args->flags & ~DRM_SDRV_FLIP_STATUS_WAIT)
		return -EINVAL;
	pthread_mutex_lock(&sdev->log_lock);
	/* Not yet made, or forgotten (the slot was reused) meanwhile. */
	while (args->flip_id < sdev->n_log &&
	       args->flip_id + SDRV_LOG_SIZE >= sdev->n_log &&
	       (args->flags & DRM_SDRV_FLIP_STATUS_WAIT) && !rec->done)
		pthread_cond_wait(&sdev->log_cond, &sdev->log_lock);
	if (args->flip_id >= sdev->n_log ||
	    args->flip_id + SDRV_LOG_SIZE < sdev->n_log)
		ret = -ENOENT;
	else
		*args = (struct drm_sdrv_flip_status){
			.flip_id = args->flip_id, .flags = args->flags,
			.done = rec->done, .status = rec->status,
			.word0 = rec->word0, .checksum = rec->checksum,
			.size = rec->size,
		};
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
	sdev->work_tail = &sdev->work;
	ret = ttm_sched_create(&opts, &sdev->display);
	if (ret)
		return ret;
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
	return ret;
}

/*
 * Display off for good: drain the CRTC's queue (its flip fences then
 * queue their cleanups), let the worker finish them, then unpin what is
 * still on screen.
 */
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
