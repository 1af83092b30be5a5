// SPDX-License-Identifier: MIT
/*
 * Page flips on the sample driver's one CRTC, done as the kernel's atomic
 * helpers do them:
 * - prepare (drm_atomic_helper_prepare_planes(), amdgpu_dm_plane_helper_
 *   prepare_fb()): the new framebuffer and the one shown now are locked
 *   under one acquire context, the new one validated into CPU-visible
 *   VRAM (the scanout engine reads it there) and pinned; the old one
 *   stays pinned, since it is on screen until the flip happens;
 * - commit: a display job on the CRTC's queue that first waits for the
 *   new buffer's write fences, whatever their error, as commit_tail's
 *   drm_atomic_helper_wait_for_fences() (a hung render job must not
 *   stop the display; as a scheduler dependency, an error would fail
 *   the job), then "scans out": records a checksum in the scanout log,
 *   which FLIP_STATUS reports. Its finished fence is the flip fence;
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

/* What the display job scans out, and where it logs it. */
struct sdrv_scanout {
	struct sdrv_device *sdev;
	uint64_t id;
	struct ttm_gpu_range fb;      /* pinned: it stays put; size 0: off */
	struct ttm_fence **deps;      /* the fb's writers, references */
	unsigned int n_deps;
};

static void sdrv_scanout_free(void *data)
{
	struct sdrv_scanout *s = data;
	unsigned int i;

	for (i = 0; i < s->n_deps; i++)
		ttm_fence_put(s->deps[i]);
	free(s->deps);
	free(s);
}

/* The display job: "scan out" the buffer, i.e. checksum it into the log. */
static int sdrv_display_run(struct ttm_sched_job *job, void *data)
{
	struct sdrv_scanout *s = data;
	const uint32_t *w = s->fb.addr;
	uint64_t sum = 0;
	size_t i;

	(void)job;
	/*
	 * Sleeps in the display's worker, as the kernel's commit work does
	 * (a deterministic GPU's advance thread could not wait here).
	 */
	for (i = 0; i < s->n_deps; i++)
		ttm_fence_wait(s->deps[i], false, -1);
	for (i = 0; i < s->fb.size / 4; i++)
		sum += w[i];
	pthread_mutex_lock(&s->sdev->log_lock);
	s->sdev->log[s->id].word0 = s->fb.size ? w[0] : 0;
	s->sdev->log[s->id].checksum = sum;
	s->sdev->log[s->id].size = s->fb.size;
	pthread_mutex_unlock(&s->sdev->log_lock);
	return 0;
}

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
	sdev->log[id].status = status;
	sdev->log[id].done = true;
	pthread_cond_broadcast(&sdev->log_cond);
	pthread_mutex_unlock(&sdev->log_lock);
}

/* Cleanup: unpin the replaced framebuffer, then mark the flip done. */
static void sdrv_flip_cleanup(struct sdrv_flip_work *w)
{
	struct sdrv_device *sdev = w->sdev;
	int status = ttm_fence_get_status(w->fence);

	if (w->old) {
		/* Not interruptible: a pin must never leak. */
		ttm_bo_reserve(w->old, false, false, NULL);
		ttm_bo_unpin(w->old);
		ttm_bo_unreserve(w->old);
		ttm_bo_put(w->old);
	}
	sdrv_log_finish(sdev, w->id, status < 0 ? status : 0);
	ttm_fence_put(w->fence);
	free(w);
}

static void *sdrv_flip_worker(void *arg)
{
	struct sdrv_device *sdev = arg;
	struct sdrv_flip_work *w;

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
		sdrv_flip_cleanup(w);
		pthread_mutex_lock(&sdev->log_lock);
	}
	pthread_mutex_unlock(&sdev->log_lock);
	return NULL;
}

/* A new record in the scanout log; its index. */
static int sdrv_log_add(struct sdrv_device *sdev, uint64_t *ret_id)
{
	int ret = 0;

	pthread_mutex_lock(&sdev->log_lock);
	if (sdev->n_log == sdev->max_log) {
		uint64_t max = sdev->max_log ? 2 * sdev->max_log : 64;
		struct sdrv_flip_rec *log = realloc(sdev->log,
						    max * sizeof(*log));

		if (!log) {
			ret = -ENOMEM;
			goto out;
		}
		sdev->log = log;
		sdev->max_log = max;
	}
	sdev->log[sdev->n_log] = (struct sdrv_flip_rec){ 0 };
	*ret_id = sdev->n_log++;
out:
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
	int ret = 0;

	ttm_exec_until_all_locked(exec) {
		if (new) {
			ret = ttm_exec_prepare_bo(exec, new, 1);
			ttm_exec_retry_on_contention(exec);
			if (ret)
				return ret;
		}
		if (old) {
			ret = ttm_exec_prepare_bo(exec, old, 1);
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
 * Commit: the display job for @new (NULL: display off), its fence published as a read of both buffers: writers of either must wait
 * until the display is done with it.
 */
static int sdrv_flip_commit(struct sdrv_device *sdev, struct ttm_bo *new,
			    struct ttm_bo *old, uint64_t id,
			    struct ttm_fence **ret_fence)
{
	struct sdrv_scanout *s = calloc(1, sizeof(*s));
	struct ttm_sched_cb_args args = {
		.fn = sdrv_display_run, .data = s, .release = sdrv_scanout_free,
	};
	int ret;

	if (!s)
		return -ENOMEM;
	s->sdev = sdev;
	s->id = id;
	if (new) {
		ttm_bo_gpu_range(new, &s->fb);
		/* Writers and moves (KERNEL): the display reads the buffer. */
		ret = ttm_resv_get_fences(ttm_bo_resv(new),
					  TTM_RESV_USAGE_WRITE, &s->deps,
					  &s->n_deps);
		if (ret) {
			free(s);
			return ret;
		}
	}
	ret = ttm_sched_cb_submit(sdev->crtc, &args, ret_fence);
	if (ret) {
		sdrv_scanout_free(s);
		return ret;
	}
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
	struct sdrv_flip_rec rec;

	if (args->flags & ~DRM_SDRV_FLIP_STATUS_WAIT)
		return -EINVAL;
	pthread_mutex_lock(&sdev->log_lock);
	if (args->flip_id >= sdev->n_log) {
		pthread_mutex_unlock(&sdev->log_lock);
		return -ENOENT;
	}
	while ((args->flags & DRM_SDRV_FLIP_STATUS_WAIT) &&
	       !sdev->log[args->flip_id].done)
		pthread_cond_wait(&sdev->log_cond, &sdev->log_lock);
	rec = sdev->log[args->flip_id];
	pthread_mutex_unlock(&sdev->log_lock);
	args->done = rec.done;
	args->status = rec.status;
	args->word0 = rec.word0;
	args->checksum = rec.checksum;
	args->size = rec.size;
	return 0;
}

int sdrv_flip_init(struct sdrv_device *sdev, struct ttm_gpu *gpu)
{
	struct ttm_sched_options opts = {
		.name = "display", .credit_limit = 1, .gpu = gpu,
	};
	int ret;

	pthread_mutex_init(&sdev->flip_lock, NULL);
	pthread_mutex_init(&sdev->log_lock, NULL);
	pthread_cond_init(&sdev->log_cond, NULL);
	sdev->work_tail = &sdev->work;
	ret = ttm_sched_cb_create(&opts, 1, &sdev->display);
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
	if (sdev->scanout) {
		ttm_bo_reserve(sdev->scanout, false, false, NULL);
		ttm_bo_unpin(sdev->scanout);
		ttm_bo_unreserve(sdev->scanout);
		ttm_bo_put(sdev->scanout);
	}
	free(sdev->log);
	pthread_cond_destroy(&sdev->log_cond);
	pthread_mutex_destroy(&sdev->log_lock);
	pthread_mutex_destroy(&sdev->flip_lock);
}
