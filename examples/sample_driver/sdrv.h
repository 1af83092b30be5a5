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

#include "sdrv_drm.h"

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* The fake GPU's engines: one for rendering, one for buffer moves. */
enum { SDRV_ENGINE_RENDER, SDRV_ENGINE_COPY, SDRV_NUM_ENGINES };

/* The scanout log keeps the last 1,024 flips (FLIP_STATUS). */
#define SDRV_LOG_SIZE 1024

/* A flip: its record, and what its cleanup (sdrv_flip.c) needs. */
struct sdrv_flip {
	struct drm_sdrv_flip_status st;
	struct ttm_fence *fence;        /* the flip fence, a reference */
	struct ttm_bo *old;             /* the fb it replaced, a reference */
};

/* The driver's device, the DRM device's private. */
struct sdrv_device {
	struct ttm_device *ttm;
	struct ttm_drm_device *ddev;
	struct ttm_sched *display;      /* the display engine, one CRTC: */
	struct ttm_sched_entity *crtc;  /* flips queue their jobs in order */
	pthread_mutex_t flip_lock;      /* one flip at a time (modeset lock) */
	struct ttm_bo *scanout;         /* shown now: pinned, a reference */
	pthread_mutex_t log_lock;       /* protects the scanout log: */
	pthread_cond_t log_cond;        /* a flip was made, or is done */
	struct sdrv_flip log[SDRV_LOG_SIZE]; /* flip N at N % size */
	uint64_t n_log, n_done;         /* flips made, cleaned up */
	pthread_t worker;               /* cleans up the flips in order */
	bool stopping;                  /* @worker: finish the queue, exit */
	uint64_t shrunk;                /* bytes the shrinker freed, in all */
	uint64_t backoffs;              /* exec passes redone, in all (tests) */
};

/* The driver's buffer, as amdgpu_bo: ttm_buffer_object (and GEM) embedded. */
struct sdrv_bo {
	struct ttm_bo tbo;
	uint32_t flags;                 /* DRM_SDRV_GEM_*, fixed at creation */
};

static inline struct sdrv_bo *to_sdrv_bo(struct ttm_bo *tbo)
{
	return container_of(tbo, struct sdrv_bo, tbo);
}

/* A file's fence table remembers its last 4,096 jobs (WAIT). */
#define SDRV_FENCE_RING 4096

/*
 * A job's entry: its fence until it signalled and the table noticed
 * ("retired" it, as msm's fence table), then only its status.
 */
struct sdrv_fence_slot {
	struct ttm_fence *fence;        /* a reference; NULL once retired */
	int status;                     /* once retired: 0 or its error */
};

/* Per-file state, the drm_file's driver_priv. */
struct sdrv_file {
	struct ttm_sched_entity *entity; /* on the render ring (a context) */
	pthread_mutex_t lock;            /* protects the fence table: */
	/* seqno N at (N - 1) % size; NULL fence, not retired: not queued */
	struct sdrv_fence_slot fences[SDRV_FENCE_RING];
	uint64_t n_fences;               /* seqnos given out */
	uint64_t n_retired;              /* seqnos 1..this: retired */
};

/* Probe and remove: the test plays the bus. */
int sdrv_device_create(struct ttm_gpu *gpu, uint64_t vram_size,
		       struct sdrv_device **ret_sdev);
void sdrv_device_destroy(struct sdrv_device *sdev);

static inline struct sdrv_device *sdrv_from_file(struct ttm_drm_file *file)
{
	return ttm_device_private(
		ttm_drm_device_ttm(ttm_drm_file_device(file)));
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
