/* SPDX-License-Identifier: MIT */
/*
 * Per-thread caches of the blocks made and freed once per job
 * (gpu_sim/obj_cache.c). Private to the library.
 *
 * A job through the scheduler used to cost four calloc() and four free()
 * (its sched job, its scheduled and finished fences, the GPU's job, the
 * submission's lookup array) and one malloc() (execbuf's completion
 * count): ~2 000 instructions of its ~16 000, glibc's
 * calloc() never taking its per-thread cache. Each class here is a LIFO
 * of same-size blocks per thread, at most OBJ_CACHE_MAX of them: a free
 * beyond that goes to free(), an alloc of an empty cache to malloc(). No
 * lock, no atomic: a thread only ever touches its own cache. A block may
 * be freed by a thread other than the one that made it (a job retired by
 * an engine's worker, a fence destroyed by whoever ends its grace
 * period); it then joins the freeing thread's cache.
 *
 * Recycling a block is no less safe than free(): a caller hands a block
 * back only where it would have freed it, so nothing may touch it after
 * (for fences: their release op, after the grace period). Under
 * AddressSanitizer a cached block is poisoned but for its link, so a use
 * after free is still reported. A thread's cache is freed when it exits.
 */
#ifndef TTMSIM_GPU_SIM_OBJ_CACHE_H
#define TTMSIM_GPU_SIM_OBJ_CACHE_H

#include <stddef.h>

/* The classes, one slot each; every block of a class has one size. */
enum obj_cache_id {
	OBJ_CACHE_GPU_JOB,      /* gpu_sim/gpu_job.c, small jobs */
	OBJ_CACHE_SCHED_JOB,    /* sched/sched_gpu.c */
	OBJ_CACHE_SCHED_FENCES, /* sched/sched_fence.c */
	OBJ_CACHE_EXECBUF_JOB,  /* execbuf/stats.c, the completion count */
	OBJ_CACHE_COUNT
};

/* Blocks kept per thread and class, at most. */
#define OBJ_CACHE_MAX 32u

/*
 * A block of @size bytes (the same at every call for @id), not zeroed:
 * the calling thread's last freed one, or malloc()'s. NULL if out of
 * memory.
 */
void *obj_cache_alloc(enum obj_cache_id id, size_t size);
/*
 * Give back @p (of obj_cache_alloc(@id, @size)): to the calling thread's
 * cache, or to free() if it is full or the thread is exiting. NULL is
 * ignored.
 */
void obj_cache_free(enum obj_cache_id id, void *p, size_t size);
/* How many blocks of @id the calling thread's cache holds (tests). */
unsigned int obj_cache_count(enum obj_cache_id id);

#endif /* TTMSIM_GPU_SIM_OBJ_CACHE_H */
