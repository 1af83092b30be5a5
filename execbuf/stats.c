// SPDX-License-Identifier: MIT
/*
 * The per-device counters of the execbuf layer, and the tracking of jobs
 * in flight: a callback on each out-fence counts it completed or failed.
 *
 * A call counts as in flight from its start, not only once its job is
 * queued: then submitted = rejected + completed + failed + in_flight holds
 * in every snapshot, not just at rest.
 */
#include <errno.h>
#include <stdlib.h>

#include "bo/layer.h"
#include "execbuf/execbuf.h"
#include "gpu_sim/obj_cache.h"
#include "util/compiler.h"

/* A job in flight: the callback node on its out-fence. */
struct execbuf_job {
	struct ttm_fence_cb cb;
	struct execbuf_dev *edev;
};

static void edev_release(void *data)
{
	struct execbuf_dev *edev = data;

	/*
	 * Fence callbacks of jobs still in flight point here: the device's
	 * own destroy waited for buffers and moves, not for those.
	 */
	execbuf_wait_idle(edev);
	pthread_cond_destroy(&edev->idle);
	pthread_mutex_destroy(&edev->lock);
	free(edev);
}

/*
 * The state lives in execbuf's own slot of the device, never in
 * ttm_device_set_private(): that one is the driver's.
 */
struct execbuf_dev *execbuf_dev_get(struct ttm_device *dev)
{
	struct execbuf_dev *edev = bo_device_layer(dev, BO_LAYER_EXECBUF);
	struct execbuf_dev *got;

	if (edev)
		return edev;
	edev = calloc(1, sizeof(*edev));
	if (!edev)
		return NULL;
	pthread_mutex_init(&edev->lock, NULL);
	pthread_cond_init(&edev->idle, NULL);
	got = bo_device_layer_attach(dev, BO_LAYER_EXECBUF, edev,
				     edev_release);
	if (got != edev) {
		/* Another client's first open won the race. */
		pthread_cond_destroy(&edev->idle);
		pthread_mutex_destroy(&edev->lock);
		free(edev);
	}
	return got;
}

void execbuf_count_submitted(struct execbuf_dev *edev)
{
	pthread_mutex_lock(&edev->lock);
	edev->stats.submitted++;
	edev->stats.in_flight++;
	pthread_mutex_unlock(&edev->lock);
}

/* One call or job is over; under edev->lock. */
static void end_in_flight_locked(struct execbuf_dev *edev)
{
	if (--edev->stats.in_flight == 0)
		pthread_cond_broadcast(&edev->idle);
}

void execbuf_count_rejected(struct execbuf_dev *edev, int err)
{
	unsigned int e = (unsigned int)-err;

	if (e > TTM_EXECBUF_ERRNO_MAX)
		e = TTM_EXECBUF_ERRNO_MAX;
	pthread_mutex_lock(&edev->lock);
	edev->stats.rejected++;
	edev->stats.rejected_by_errno[e]++;
	end_in_flight_locked(edev);
	pthread_mutex_unlock(&edev->lock);
}

/* Count a job that signalled; @job is freed unless NULL. */
static void job_done(struct execbuf_dev *edev, int status,
		     struct execbuf_job *job)
{
	pthread_mutex_lock(&edev->lock);
	if (status < 0)
		edev->stats.failed++;
	else
		edev->stats.completed++;
	end_in_flight_locked(edev);
	pthread_mutex_unlock(&edev->lock);
	/* From here on @edev may be gone (edev_release() waited for 0). */
	execbuf_job_discard(job);
}

static void job_cb_func(struct ttm_fence *fence, struct ttm_fence_cb *cb)
{
	struct execbuf_job *job = container_of(cb, struct execbuf_job, cb);

	job_done(job->edev, ttm_fence_get_status(fence), job);
}

struct execbuf_job *execbuf_job_new(struct execbuf_dev *edev)
{
	/* One per job: a thread's cache, not malloc() (gpu_sim/obj_cache.h). */
	struct execbuf_job *job = obj_cache_alloc(OBJ_CACHE_EXECBUF_JOB,
						  sizeof(*job));

	if (job)
		job->edev = edev;
	return job;
}

void execbuf_job_discard(struct execbuf_job *job)
{
	obj_cache_free(OBJ_CACHE_EXECBUF_JOB, job, sizeof(*job));
}

void execbuf_job_track(struct execbuf_job *job, struct ttm_fence *fence)
{
	/* Signalled already (a failed in-fence): count it now. */
	if (ttm_fence_add_callback(fence, &job->cb, job_cb_func))
		job_done(job->edev, ttm_fence_get_status(fence), job);
}

void execbuf_count_backoffs(struct execbuf_dev *edev, unsigned int backoffs,
			    unsigned int restarts)
{
	if (!backoffs && !restarts)
		return;
	pthread_mutex_lock(&edev->lock);
	edev->stats.backoffs += backoffs;
	edev->stats.restarts += restarts;
	pthread_mutex_unlock(&edev->lock);
}

TTM_EXPORT void ttm_execbuf_get_stats(struct ttm_device *dev,
				      struct ttm_execbuf_stats *stats)
{
	struct execbuf_dev *edev = bo_device_layer(dev, BO_LAYER_EXECBUF);

	if (!edev) {
		*stats = (struct ttm_execbuf_stats){ 0 };
		return;
	}
	pthread_mutex_lock(&edev->lock);
	*stats = edev->stats;
	pthread_mutex_unlock(&edev->lock);
}

void execbuf_wait_idle(struct execbuf_dev *edev)
{
	pthread_mutex_lock(&edev->lock);
	while (edev->stats.in_flight)
		pthread_cond_wait(&edev->idle, &edev->lock);
	pthread_mutex_unlock(&edev->lock);
}

TTM_EXPORT void ttm_execbuf_wait_idle(struct ttm_device *dev)
{
	struct execbuf_dev *edev = bo_device_layer(dev, BO_LAYER_EXECBUF);

	if (edev)
		execbuf_wait_idle(edev);
}
