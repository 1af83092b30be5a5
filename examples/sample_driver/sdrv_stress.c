// SPDX-License-Identifier: MIT
/*
 * The sample driver's stress test, driving it as userspace would: each
 * thread opens its own file and speaks only the driver's uAPI through
 * ttm_drm_ioctl() (drmIoctl() under the drm-shim would do the same).
 * Submitters run ADD jobs on random, overlapping buffer lists (duplicates
 * included, some jobs hanging), a compositor renders into framebuffers
 * and flips them, a shrinker thread swaps buffers out, every lock may be
 * made to back off (ww_debug_inject()), and VRAM is small enough that
 * validation evicts. At the end every word of every buffer must equal
 * what the jobs that succeeded added, every flip must have shown what its
 * framebuffer held then, and every pin must be gone.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ttmsim/ww_debug.h>

#include "sdrv.h"
#include "sdrv_drm.h"

#define CHECK(cond) do { if (!(cond)) { \
	fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
		#cond); exit(1); } } while (0)
#define CHECK_EQ(a, b) do { long long a_ = (a), b_ = (b); if (a_ != b_) { \
	fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", \
		__FILE__, __LINE__, #a, a_, #b, b_); exit(1); } } while (0)

#define N_SUBMITTERS 3
#define N_BUFS       4          /* per submitter */
#define BUF_SIZE     (16 << 10)
#define N_FBS        3
#define FB_SIZE      (8 << 10)
#define VRAM_SIZE    (192 << 10) /* less than the buffers: evictions */
#define HANG_MS      20

struct job {
	uint64_t seqno;
	uint32_t value;
	unsigned int written;   /* bitmask of buffers */
	bool hang;
};

struct submitter {
	struct ttm_drm_file *file;
	uint32_t handles[N_BUFS];
	uint32_t model[N_BUFS];
	struct job *jobs;
	unsigned int n_jobs, seed, hangs;
};

struct flip {
	uint64_t id;
	int fb;                 /* -1: display off */
	unsigned int renders;   /* renders submitted before it */
};

struct compositor {
	struct ttm_drm_file *file;
	uint32_t fbs[N_FBS];
	struct job *renders;    /* written = the fb's index */
	struct flip *flips;
	unsigned int n_renders, n_flips, n_iter;
};

static struct sdrv_device *sdev;
static unsigned int scale = 1;
static int stop_shrinker;

static uint32_t create(struct ttm_drm_file *f, uint64_t size, uint32_t flags)
{
	struct drm_sdrv_gem_create c = { .size = size, .flags = flags };

	CHECK_EQ(ttm_drm_ioctl(f, DRM_IOCTL_SDRV_GEM_CREATE, &c), 0);
	return c.handle;
}

static int submit(struct ttm_drm_file *f, struct drm_sdrv_submit_bo *bos,
		  unsigned int n, uint32_t value, bool hang, uint64_t *seqno)
{
	struct drm_sdrv_submit s = {
		.bos = (uintptr_t)bos, .bo_count = n, .value = value,
		.flags = hang ? DRM_SDRV_SUBMIT_HANG : 0,
		.duration_ns = 20000,
	};
	int ret = ttm_drm_ioctl(f, DRM_IOCTL_SDRV_SUBMIT, &s);

	*seqno = s.seqno;
	return ret;
}

/* The job's status: 0 if it ran, else its error. */
static int wait_job(struct ttm_drm_file *f, uint64_t seqno)
{
	struct drm_sdrv_wait w = { .seqno = seqno, .timeout_ns = ~0ull };

	CHECK_EQ(ttm_drm_ioctl(f, DRM_IOCTL_SDRV_WAIT, &w), 0);
	return w.status;
}

static uint32_t pin_count(struct ttm_drm_file *f, uint32_t handle)
{
	struct drm_sdrv_gem_info info = { .handle = handle };

	CHECK_EQ(ttm_drm_ioctl(f, DRM_IOCTL_SDRV_GEM_INFO, &info), 0);
	return info.pin_count;
}

/* Bad input fails cleanly, naming the right error; nothing is queued. */
static void check_bad_input(struct submitter *s)
{
	struct drm_sdrv_submit_bo bo = { s->handles[0], DRM_SDRV_BO_WRITE };
	struct drm_sdrv_submit_bo bad = { 0xdead, DRM_SDRV_BO_READ };
	struct drm_sdrv_submit_bo noflag = { s->handles[0], 0 };
	struct drm_sdrv_submit sub = { .bo_count = 1 };
	struct drm_sdrv_flip flip = { .handle = s->handles[0] };
	uint64_t seqno;

	CHECK_EQ(submit(s->file, &bad, 1, 1, false, &seqno), -ENOENT);
	CHECK_EQ(submit(s->file, &noflag, 1, 1, false, &seqno), -EINVAL);
	CHECK_EQ(submit(s->file, &bo, 0, 1, false, &seqno), -EINVAL);
	CHECK_EQ(ttm_drm_ioctl(s->file, DRM_IOCTL_SDRV_SUBMIT, &sub), -EFAULT);
	sub.bos = (uintptr_t)&bo;
	sub.pad = 1;
	CHECK_EQ(ttm_drm_ioctl(s->file, DRM_IOCTL_SDRV_SUBMIT, &sub), -EINVAL);
	sub.pad = 0;
	/* Too long a job; ~0 would wrap to 0 microseconds. */
	sub.duration_ns = DRM_SDRV_MAX_DURATION_NS + 1;
	CHECK_EQ(ttm_drm_ioctl(s->file, DRM_IOCTL_SDRV_SUBMIT, &sub), -EINVAL);
	sub.duration_ns = ~0ull;
	CHECK_EQ(ttm_drm_ioctl(s->file, DRM_IOCTL_SDRV_SUBMIT, &sub), -EINVAL);
	sub.duration_ns = 0;
	sub.duration_ns = 0;
	sub.flags = 1u << 31;   /* unknown */
	CHECK_EQ(ttm_drm_ioctl(s->file, DRM_IOCTL_SDRV_SUBMIT, &sub), -EINVAL);
	sub.flags = 0;
	sub.bo_count = DRM_SDRV_MAX_BOS + 1;
	CHECK_EQ(ttm_drm_ioctl(s->file, DRM_IOCTL_SDRV_SUBMIT, &sub), -EINVAL);
	bad = (struct drm_sdrv_submit_bo){ s->handles[0], 0x4 | DRM_SDRV_BO_READ };
	CHECK_EQ(submit(s->file, &bad, 1, 1, false, &seqno), -EINVAL);
	CHECK_EQ(ttm_drm_ioctl(s->file, DRM_IOCTL_SDRV_GEM_CREATE,
			       &(struct drm_sdrv_gem_create){ .size = 4096,
							      .flags = 1u << 31 }),
		 -EINVAL);
	CHECK_EQ(ttm_drm_ioctl(s->file, DRM_IOCTL_SDRV_GEM_INFO,
			       &(struct drm_sdrv_gem_info){
				       .handle = s->handles[0], .pad = 1 }),
		 -EINVAL);
	CHECK_EQ(ttm_drm_ioctl(s->file, DRM_IOCTL_SDRV_GEM_MMAP_OFFSET,
			       &(struct drm_sdrv_gem_mmap_offset){
				       .handle = s->handles[0], .pad = 1 }),
		 -EINVAL);
	/* Render nodes cannot flip. */
	CHECK_EQ(ttm_drm_ioctl(s->file, DRM_IOCTL_SDRV_FLIP, &flip), -EACCES);
	/* Nothing was queued: there is no seqno 1. */
	CHECK_EQ(ttm_drm_ioctl(s->file, DRM_IOCTL_SDRV_WAIT,
			       &(struct drm_sdrv_wait){ .seqno = 1 }), -ENOENT);
	/* A real one, then a WAIT with pad. */
	CHECK_EQ(submit(s->file, &bo, 1, 0, false, &seqno), 0);
	CHECK_EQ(ttm_drm_ioctl(s->file, DRM_IOCTL_SDRV_WAIT,
			       &(struct drm_sdrv_wait){ .seqno = seqno,
							.pad = 1 }), -EINVAL);
	CHECK_EQ(wait_job(s->file, seqno), 0);
}

/* FLIP and FLIP_STATUS refuse bad input; a refused flip pins nothing. */
static void check_bad_flip(struct ttm_drm_file *master)
{
	uint32_t fb = create(master, FB_SIZE, DRM_SDRV_GEM_SCANOUT);
	uint32_t plain = create(master, FB_SIZE, 0);
	struct drm_sdrv_flip flip = { .handle = fb, .flags = 1 };
	struct drm_sdrv_flip_status st = { .flags = 1u << 31 };

	CHECK_EQ(ttm_drm_ioctl(master, DRM_IOCTL_SDRV_FLIP, &flip), -EINVAL);
	CHECK_EQ(pin_count(master, fb), 0);
	flip = (struct drm_sdrv_flip){ .handle = plain };
	CHECK_EQ(ttm_drm_ioctl(master, DRM_IOCTL_SDRV_FLIP, &flip), -EINVAL);
	CHECK_EQ(pin_count(master, plain), 0);
	CHECK_EQ(ttm_drm_ioctl(master, DRM_IOCTL_SDRV_FLIP_STATUS, &st),
		 -EINVAL);
	CHECK_EQ(ttm_drm_ioctl(master, DRM_IOCTL_GEM_CLOSE,
			       &(struct drm_gem_close){ fb }), 0);
	CHECK_EQ(ttm_drm_ioctl(master, DRM_IOCTL_GEM_CLOSE,
			       &(struct drm_gem_close){ plain }), 0);
}

/*
 * The core's buffers behind a handle (a dumb buffer) are not the
 * driver's: refused, never read as one (container_of() past their end).
 */
static void check_foreign(struct ttm_drm_file *master)
{
	struct drm_mode_create_dumb d = { .width = 16, .height = 16,
					  .bpp = 32 };
	struct drm_sdrv_submit_bo bo = { 0, DRM_SDRV_BO_WRITE };
	struct drm_sdrv_gem_info info = { 0 };
	struct drm_sdrv_flip flip = { 0 };
	uint64_t seqno;

	CHECK_EQ(ttm_drm_ioctl(master, DRM_IOCTL_MODE_CREATE_DUMB, &d), 0);
	flip.handle = bo.handle = info.handle = d.handle;
	CHECK_EQ(ttm_drm_ioctl(master, DRM_IOCTL_SDRV_FLIP, &flip), -EINVAL);
	CHECK_EQ(submit(master, &bo, 1, 1, false, &seqno), -ENOENT);
	CHECK_EQ(ttm_drm_ioctl(master, DRM_IOCTL_SDRV_GEM_INFO, &info),
		 -ENOENT);
	CHECK_EQ(ttm_drm_ioctl(master, DRM_IOCTL_MODE_DESTROY_DUMB,
			       &(struct drm_mode_destroy_dumb){ d.handle }), 0);
}

/*
 * The scanout log keeps the last SDRV_LOG_SIZE flips, a failed flip
 * changes none of them and no pin: SDRV_LOG_SIZE + 1 flips of one
 * framebuffer, then one of a buffer too big for CPU-visible VRAM.
 */
static void check_flip_log(struct ttm_drm_file *master)
{
	uint32_t fb = create(master, FB_SIZE, DRM_SDRV_GEM_SCANOUT);
	uint32_t big = create(master, VRAM_SIZE / 2, DRM_SDRV_GEM_SCANOUT);
	struct drm_sdrv_flip flip = { .handle = fb };
	struct drm_sdrv_flip_status st;
	unsigned int i;

	for (i = 0; i <= SDRV_LOG_SIZE; i++) {
		CHECK_EQ(ttm_drm_ioctl(master, DRM_IOCTL_SDRV_FLIP, &flip), 0);
		st = (struct drm_sdrv_flip_status){
			.flip_id = flip.flip_id,
			.flags = DRM_SDRV_FLIP_STATUS_WAIT };
		CHECK_EQ(ttm_drm_ioctl(master, DRM_IOCTL_SDRV_FLIP_STATUS,
				       &st), 0);
	}
	CHECK_EQ(pin_count(master, fb), 1);
	flip.handle = big;
	CHECK_EQ(ttm_drm_ioctl(master, DRM_IOCTL_SDRV_FLIP, &flip), -ENOSPC);
	CHECK_EQ(pin_count(master, fb), 1);
	CHECK_EQ(pin_count(master, big), 0);
	/* The oldest record kept, in the slot the failed flip would use. */
	st = (struct drm_sdrv_flip_status){ .flip_id = 1 };
	CHECK_EQ(ttm_drm_ioctl(master, DRM_IOCTL_SDRV_FLIP_STATUS, &st), 0);
	CHECK_EQ(st.done, 1);
	CHECK_EQ(st.size, FB_SIZE);
	st = (struct drm_sdrv_flip_status){ .flip_id = 0 };
	CHECK_EQ(ttm_drm_ioctl(master, DRM_IOCTL_SDRV_FLIP_STATUS, &st),
		 -ENOENT);
	/* The CRTC holds @fb until the compositor's first flip. */
	CHECK_EQ(ttm_drm_ioctl(master, DRM_IOCTL_GEM_CLOSE,
			       &(struct drm_gem_close){ fb }), 0);
	CHECK_EQ(ttm_drm_ioctl(master, DRM_IOCTL_GEM_CLOSE,
			       &(struct drm_gem_close){ big }), 0);
}

static void *submitter_thread(void *arg)
{
	struct submitter *s = arg;
	unsigned int i, k;

	for (i = 0; i < N_BUFS; i++)
		s->handles[i] = create(s->file, BUF_SIZE, 0);
	for (i = 0; i < s->n_jobs; i++) {
		struct drm_sdrv_submit_bo bos[6];
		unsigned int n = 1 + rand_r(&s->seed) % 6;
		struct job *j = &s->jobs[i];

		j->value = 1 + rand_r(&s->seed) % 1000;
		j->hang = i % 40 == 5;
		s->hangs += j->hang;
		for (k = 0; k < n; k++) {
			unsigned int b = rand_r(&s->seed) % N_BUFS;

			bos[k].handle = s->handles[b];
			bos[k].flags = 1 + rand_r(&s->seed) % 3;
			if (bos[k].flags & DRM_SDRV_BO_WRITE)
				j->written |= 1u << b;
		}
		CHECK_EQ(submit(s->file, bos, n, j->value, j->hang,
				&j->seqno), 0);
		/*
		 * Keep pace with the GPU, as a client waits for an old
		 * frame, so that submissions, flips and the shrinker's
		 * evictions overlap for the whole run.
		 */
		if (i >= 8)
			wait_job(s->file, s->jobs[i - 8].seqno);
	}
	return NULL;
}

static void *compositor_thread(void *arg)
{
	struct compositor *c = arg;
	struct drm_sdrv_flip flip = { 0 };
	unsigned int i, k;

	for (i = 0; i < N_FBS; i++)
		c->fbs[i] = create(c->file, FB_SIZE, DRM_SDRV_GEM_SCANOUT);
	for (i = 0; i < c->n_iter; i++) {
		int fb = i % N_FBS;
		struct drm_sdrv_submit_bo bo = { c->fbs[fb], DRM_SDRV_BO_WRITE };
		struct job *r = &c->renders[c->n_renders++];

		r->value = i + 1;
		r->written = fb;
		r->hang = i % 11 == 4;
		CHECK_EQ(submit(c->file, &bo, 1, r->value, r->hang,
				&r->seqno), 0);
		/* Every fifth frame is shown twice: new == old. */
		for (k = 0; k < (i % 5 == 2 ? 2u : 1u); k++) {
			flip.handle = c->fbs[fb];
			CHECK_EQ(ttm_drm_ioctl(c->file, DRM_IOCTL_SDRV_FLIP,
					       &flip), 0);
			c->flips[c->n_flips++] = (struct flip){
				flip.flip_id, fb, c->n_renders };
		}
	}
	flip.handle = 0;   /* display off: the last framebuffer is released */
	CHECK_EQ(ttm_drm_ioctl(c->file, DRM_IOCTL_SDRV_FLIP, &flip), 0);
	c->flips[c->n_flips++] = (struct flip){ flip.flip_id, -1, 0 };
	return NULL;
}

/* Memory pressure: the MM calling the shrinker while everything runs. */
static void *shrinker_thread(void *arg)
{
	long *scans = arg;

	while (!__atomic_load_n(&stop_shrinker, __ATOMIC_ACQUIRE)) {
		CHECK(sdrv_shrink_scan(sdev, 32 << 10) >= 0);
		(*scans)++;
		sched_yield();
	}
	return NULL;
}

/* Every word of buffer @handle equals @expect, read through a mapping. */
static void check_contents(struct ttm_drm_file *f, uint32_t handle,
			   uint64_t size, uint32_t expect)
{
	struct drm_sdrv_gem_mmap_offset mo = { .handle = handle };
	struct drm_sdrv_gem_info info = { .handle = handle };
	uint32_t *p;
	uint64_t i;

	CHECK_EQ(ttm_drm_ioctl(f, DRM_IOCTL_SDRV_GEM_INFO, &info), 0);
	CHECK_EQ(info.pin_count, 0);
	CHECK_EQ(ttm_drm_ioctl(f, DRM_IOCTL_SDRV_GEM_MMAP_OFFSET, &mo), 0);
	CHECK_EQ(ttm_drm_mmap(f, mo.offset, size, (void **)&p), 0);
	for (i = 0; i < size / 4; i++)
		if (p[i] != expect) {
			fprintf(stderr, "handle %u word %" PRIu64 ": %u, "
				"expected %u\n", handle, i, p[i], expect);
			exit(1);
		}
	CHECK_EQ(ttm_drm_munmap(f, p, size), 0);
}

/* Each flip showed its framebuffer as the renders before it left it. */
static void check_flips(struct compositor *c)
{
	unsigned int i, k;

	for (i = 0; i < c->n_renders; i++) {
		int status = wait_job(c->file, c->renders[i].seqno);

		CHECK_EQ(status, c->renders[i].hang ? -ETIMEDOUT : 0);
	}
	for (i = 0; i < c->n_flips; i++) {
		struct drm_sdrv_flip_status st = {
			.flip_id = c->flips[i].id,
			.flags = DRM_SDRV_FLIP_STATUS_WAIT,
		};
		uint32_t expect = 0;

		CHECK_EQ(ttm_drm_ioctl(c->file, DRM_IOCTL_SDRV_FLIP_STATUS,
				       &st), 0);
		CHECK_EQ(st.done, 1);
		CHECK_EQ(st.status, 0);
		if (c->flips[i].fb < 0) {
			CHECK_EQ(st.size, 0);
			continue;
		}
		for (k = 0; k < c->flips[i].renders; k++)
			if ((int)c->renders[k].written == c->flips[i].fb &&
			    !c->renders[k].hang)
				expect += c->renders[k].value;
		CHECK_EQ(st.size, FB_SIZE);
		CHECK_EQ(st.word0, expect);
		CHECK_EQ(st.checksum, (uint64_t)expect * (FB_SIZE / 4));
	}
	/* The display is off and every flip cleaned up: no pin is left. */
	for (i = 0; i < N_FBS; i++) {
		struct drm_sdrv_gem_info info = { .handle = c->fbs[i] };

		CHECK_EQ(ttm_drm_ioctl(c->file, DRM_IOCTL_SDRV_GEM_INFO,
				       &info), 0);
		CHECK_EQ(info.pin_count, 0);
	}
}

int main(void)
{
	struct ttm_gpu_options gopts = { .hang_timeout_ms = HANG_MS };
	struct submitter subs[N_SUBMITTERS] = { 0 };
	struct compositor comp = { 0 };
	pthread_t threads[N_SUBMITTERS], comp_thread, shrink_thread;
	unsigned int seed = (unsigned int)time(NULL), i, b, k;
	struct ttm_device_stats stats;
	struct timespec t0, t1;
	struct ttm_gpu *gpu;
	long scans = 0, shrunk;
	uint64_t swapped;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (getenv("TTMSIM_STRESS"))
		scale = 10;
	if (getenv("SDRV_SEED"))
		seed = (unsigned int)strtoul(getenv("SDRV_SEED"), NULL, 0);
	printf("seed %u (SDRV_SEED=%u reruns it)\n", seed, seed);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ww_debug_inject(seed, 5);

	CHECK_EQ(ttm_gpu_create(SDRV_NUM_ENGINES, &gopts, &gpu), 0);
	CHECK_EQ(sdrv_device_create(gpu, VRAM_SIZE, &sdev), 0);
	/* The first primary-node file is the master: the compositor. */
	CHECK_EQ(ttm_drm_open(sdev->ddev, TTM_DRM_NODE_PRIMARY, &comp.file), 0);
	comp.n_iter = 30 * scale;
	comp.renders = calloc(comp.n_iter, sizeof(*comp.renders));
	comp.flips = calloc(2 * comp.n_iter + 1, sizeof(*comp.flips));
	CHECK(comp.renders && comp.flips);
	for (i = 0; i < N_SUBMITTERS; i++) {
		CHECK_EQ(ttm_drm_open(sdev->ddev, TTM_DRM_NODE_RENDER,
				      &subs[i].file), 0);
		subs[i].n_jobs = 120 * scale;
		subs[i].seed = seed + i;
		subs[i].jobs = calloc(subs[i].n_jobs, sizeof(*subs[i].jobs));
		CHECK(subs[i].jobs);
	}
	subs[0].handles[0] = create(subs[0].file, BUF_SIZE, 0);
	check_bad_input(&subs[0]);
	check_foreign(comp.file);
	check_flip_log(comp.file);
	check_bad_flip(comp.file);
	CHECK_EQ(ttm_drm_ioctl(subs[0].file, DRM_IOCTL_GEM_CLOSE,
			       &(struct drm_gem_close){ subs[0].handles[0] }),
		 0);

	CHECK_EQ(pthread_create(&shrink_thread, NULL, shrinker_thread,
				&scans), 0);
	CHECK_EQ(pthread_create(&comp_thread, NULL, compositor_thread,
				&comp), 0);
	for (i = 0; i < N_SUBMITTERS; i++)
		CHECK_EQ(pthread_create(&threads[i], NULL, submitter_thread,
					&subs[i]), 0);
	for (i = 0; i < N_SUBMITTERS; i++)
		pthread_join(threads[i], NULL);
	pthread_join(comp_thread, NULL);

	/* The model: what the jobs that ran added; hung ones add nothing. */
	for (i = 0; i < N_SUBMITTERS; i++) {
		unsigned int hangs = 0;

		for (k = 0; k < subs[i].n_jobs; k++) {
			struct job *j = &subs[i].jobs[k];
			int status = wait_job(subs[i].file, j->seqno);

			CHECK_EQ(status, j->hang ? -ETIMEDOUT : 0);
			hangs += status == -ETIMEDOUT;
			for (b = 0; b < N_BUFS; b++)
				if (!j->hang && (j->written & (1u << b)))
					subs[i].model[b] += j->value;
		}
		CHECK_EQ(hangs, subs[i].hangs);
	}
	check_flips(&comp);
	/* The GPU is idle now: the shrinker has run alongside all of it. */
	__atomic_store_n(&stop_shrinker, 1, __ATOMIC_RELEASE);
	pthread_join(shrink_thread, NULL);

	/* Everything idle and unpinned: a full scan empties VRAM and GTT. */
	shrunk = sdrv_shrink_scan(sdev, LONG_MAX);
	CHECK(shrunk >= 0);
	CHECK(__atomic_load_n(&sdev->shrunk, __ATOMIC_RELAXED) > 0);
	ttm_device_get_stats(sdev->ttm, &stats);
	CHECK_EQ(stats.domain[TTM_DOMAIN_VRAM].buffers, 0);
	CHECK_EQ(stats.domain[TTM_DOMAIN_GTT].buffers, 0);
	CHECK(stats.evictions > 0);
	/* The injected back-offs happened (none with the checker out). */
	if (ww_debug_enabled())
		CHECK(__atomic_load_n(&sdev->backoffs, __ATOMIC_RELAXED) > 0);

	for (i = 0; i < N_SUBMITTERS; i++)
		for (b = 0; b < N_BUFS; b++)
			check_contents(subs[i].file, subs[i].handles[b],
				       BUF_SIZE, subs[i].model[b]);
	for (i = 0; i < N_FBS; i++) {
		uint32_t expect = 0;

		for (k = 0; k < comp.n_renders; k++)
			if (comp.renders[k].written == i &&
			    !comp.renders[k].hang)
				expect += comp.renders[k].value;
		check_contents(comp.file, comp.fbs[i], FB_SIZE, expect);
	}
	CHECK_EQ(ttm_device_check(sdev->ttm, NULL, 0), 0);

	for (i = 0; i < N_SUBMITTERS; i++) {
		ttm_drm_close(subs[i].file);
		free(subs[i].jobs);
	}
	ttm_drm_close(comp.file);
	ttm_device_flush_destroys(sdev->ttm);
	ttm_device_get_stats(sdev->ttm, &stats);
	CHECK_EQ(stats.buffers, 0);   /* no leak, failed ioctls included */
	swapped = __atomic_load_n(&sdev->shrunk, __ATOMIC_RELAXED);
	sdrv_device_destroy(sdev);
	ttm_gpu_destroy(gpu);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("ok: %u jobs, %u flips, %ld shrinker scans (%" PRIu64
	       " bytes swapped out), %" PRIu64 " evictions, %.2f s\n",
	       N_SUBMITTERS * subs[0].n_jobs + comp.n_renders, comp.n_flips,
	       scans, swapped, stats.evictions,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	free(comp.renders);
	free(comp.flips);
	return 0;
}
