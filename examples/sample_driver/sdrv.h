/* SPDX-License-Identifier: MIT */
/*
 * The sample driver's internals: a small DRM driver on ttmsim's public
 * API only, what a driver author copies to start a prototype. One file
 * per job, as a kernel driver:
 *   sdrv_drv.c    probe/remove, the driver and ioctl tables, files
 *   sdrv_bo.c     the buffer type (drm_gem_object + ttm_buffer_object)
 *   sdrv_submit.c the submit path (amdgpu_cs / xe_exec on drm_exec)
 *   sdrv_flip.c   page flips (drm_atomic_helper_prepare/cleanup_planes)
 *   sdrv_shrink.c the shrinker (a shrinker's scan_objects on ttm_lru_walk)
 * The uAPI is sdrv_drm.h.
 */
#ifndef SDRV_H
#define SDRV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ttmsim/bo.h>
#include <ttmsim/drm.h>
#include <ttmsim/sched.h>

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* The fake GPU's engines: one for rendering, one for buffer moves. */
enum { SDRV_ENGINE_RENDER, SDRV_ENGINE_COPY, SDRV_NUM_ENGINES };

/* Work the flip path hands to the driver's worker (sdrv_flip.c). */
struct sdrv_flip_work;

/* The scanout log keeps the last 1,024 flips (FLIP_STATUS). */
#define SDRV_LOG_SIZE 1024

/* One scanout log record (drm_sdrv_flip_status). */
struct sdrv_flip_rec {
	bool done;
	int status;
	uint32_t word0;
	uint64_t checksum;
	uint64_t size;
};

/**
 * struct sdrv_device - the driver's device, the DRM device's private.
 * @ttm: the buffer device.
 * @ddev: the DRM device on it.
 * @display: the display engine: a callback-backend scheduler (a CRTC).
 * @crtc: its one entity; flips queue display jobs on it, in order.
 * @flip_lock: serialises flips (the CRTC's modeset lock).
 * @scanout: the buffer shown now (a reference, pinned), under @flip_lock.
 * @log_lock: protects @log and the worker's queue.
 * @log_cond: a flip is done, or work was queued.
 * @log: the scanout log: flip N's record is @log[N % SDRV_LOG_SIZE].
 * @n_log: flips made so far.
 * @work: the worker's queue of flips to clean up (FIFO).
 * @worker: unpins replaced framebuffers (the kernel's commit work).
 * @stopping: the worker is to finish its queue and exit.
 * @shrunk: bytes the shrinker freed, in all.
 */
struct sdrv_device {
	struct ttm_device *ttm;
	struct ttm_drm_device *ddev;
	struct ttm_sched *display;
	struct ttm_sched_entity *crtc;
	pthread_mutex_t flip_lock;
	struct ttm_bo *scanout;
	pthread_mutex_t log_lock;
	pthread_cond_t log_cond;
	struct sdrv_flip_rec log[SDRV_LOG_SIZE];
	uint64_t n_log;
	struct sdrv_flip_work *work, **work_tail;
	pthread_t worker;
	bool stopping;
	uint64_t shrunk;
};

/**
 * struct sdrv_bo - the driver's buffer: drm_gem_object and
 *	ttm_buffer_object in one, as amdgpu_bo or xe_bo.
 * @tbo: ttmsim's buffer, embedded: container_of() finds the sdrv_bo.
 * @flags: DRM_SDRV_GEM_*, fixed at creation.
 */
struct sdrv_bo {
	struct ttm_bo tbo;
	uint32_t flags;
};

static inline struct sdrv_bo *to_sdrv_bo(struct ttm_bo *tbo)
{
	return container_of(tbo, struct sdrv_bo, tbo);
}

/**
 * struct sdrv_file - per-file state, the drm_file's driver_priv.
 * @entity: the file's queue on the render engine (amdgpu's context).
 * @lock: protects the fence table.
 * @fences: the fences of the file's jobs; seqno N is @fences[N - 1].
 * @n_fences: used entries of @max_fences.
 */
struct sdrv_file {
	struct ttm_sched_entity *entity;
	pthread_mutex_t lock;
	struct ttm_fence **fences;
	uint64_t n_fences, max_fences;
};

/* Probe and remove: the test plays the bus. */
int sdrv_device_create(struct ttm_gpu *gpu, uint64_t vram_size,
		       struct sdrv_device **ret_sdev);
void sdrv_device_destroy(struct sdrv_device *sdev);

static inline struct sdrv_device *sdrv_from_file(struct ttm_drm_file *file)
{
	return ttm_device_private(ttm_drm_device_ttm(ttm_drm_file_device(file)));
}

static inline struct sdrv_file *sdrv_file(struct ttm_drm_file *file)
{
	return ttm_drm_file_driver_priv(file);
}

/* sdrv_bo.c */
struct sdrv_bo *sdrv_bo_lookup(struct ttm_drm_file *file, uint32_t handle);
int sdrv_gem_create_ioctl(struct ttm_drm_file *file, void *data);
int sdrv_gem_mmap_offset_ioctl(struct ttm_drm_file *file, void *data);
int sdrv_gem_info_ioctl(struct ttm_drm_file *file, void *data);

/* sdrv_submit.c */
int sdrv_submit_ioctl(struct ttm_drm_file *file, void *data);
int sdrv_wait_ioctl(struct ttm_drm_file *file, void *data);

/* sdrv_flip.c */
int sdrv_flip_init(struct sdrv_device *sdev, struct ttm_gpu *gpu);
void sdrv_flip_fini(struct sdrv_device *sdev);
int sdrv_flip_ioctl(struct ttm_drm_file *file, void *data);
int sdrv_flip_status_ioctl(struct ttm_drm_file *file, void *data);

/* sdrv_shrink.c */
long sdrv_shrink_scan(struct sdrv_device *sdev, long target);

#endif /* SDRV_H */
