// SPDX-License-Identifier: MIT
/*
 * The sample driver on a deterministic GPU (TTM_GPU_DETERMINISTIC): time
 * moves only in ttm_gpu_advance(), so what a flip shows, and when, is
 * exact. Checks that the display job waits for the new framebuffer's
 * writers as scheduler dependencies (it runs inside ttm_gpu_advance(),
 * where it could not wait itself), that a hung render is still shown,
 * and that a write to the framebuffer a flip replaces waits for that
 * flip's display job (the flip fence is a READ of the old buffer too).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <ttmsim/interrupt.h>

#include "sdrv.h"

#define CHECK_EQ(a, b) do { long long a_ = (a), b_ = (b); if (a_ != b_) { \
	fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", \
		__FILE__, __LINE__, #a, a_, #b, b_); exit(1); } } while (0)

#define FB_SIZE (1u << 20)   /* a move of it takes 2 us */

static struct ttm_gpu *gpu;
static struct ttm_drm_file *file;

static uint32_t create(uint32_t flags)
{
	struct drm_sdrv_gem_create c = { .size = FB_SIZE, .flags = flags };

	CHECK_EQ(ttm_drm_ioctl(file, DRM_IOCTL_SDRV_GEM_CREATE, &c), 0);
	return c.handle;
}

static uint64_t submit(uint32_t handle, uint32_t value, uint64_t ns,
		       bool hang)
{
	struct drm_sdrv_submit_bo bo = { handle, DRM_SDRV_BO_WRITE };
	struct drm_sdrv_submit s = {
		.bos = (uintptr_t)&bo, .bo_count = 1, .value = value,
		.duration_ns = ns, .flags = hang ? DRM_SDRV_SUBMIT_HANG : 0,
	};

	CHECK_EQ(ttm_drm_ioctl(file, DRM_IOCTL_SDRV_SUBMIT, &s), 0);
	return s.seqno;
}

/* 0 if job @seqno is done, -ETIME if not: never waits. */
static int job_busy(uint64_t seqno)
{
	struct drm_sdrv_wait w = { .seqno = seqno, .timeout_ns = 0 };

	return ttm_drm_ioctl(file, DRM_IOCTL_SDRV_WAIT, &w);
}

static uint64_t flip(uint32_t handle)
{
	struct drm_sdrv_flip f = { .handle = handle };

	CHECK_EQ(ttm_drm_ioctl(file, DRM_IOCTL_SDRV_FLIP, &f), 0);
	return f.flip_id;
}

/* The flip's record; with @wait, once the worker has cleaned it up. */
static struct drm_sdrv_flip_status status(uint64_t id, bool wait)
{
	struct drm_sdrv_flip_status st = {
		.flip_id = id, .flags = wait ? DRM_SDRV_FLIP_STATUS_WAIT : 0,
	};

	CHECK_EQ(ttm_drm_ioctl(file, DRM_IOCTL_SDRV_FLIP_STATUS, &st), 0);
	return st;
}

/*
 * The file's fence table: the last SDRV_FENCE_RING jobs, fences dropped
 * once done, their status kept. A full table of running jobs refuses
 * one more (-EBUSY); once they ran, the next submit retires them.
 */
static void check_fence_ring(uint32_t handle)
{
	struct drm_sdrv_submit_bo bo = { handle, DRM_SDRV_BO_READ };
	struct drm_sdrv_submit s = {
		.bos = (uintptr_t)&bo, .bo_count = 1, .duration_ns = 1000,
	};
	struct drm_sdrv_wait w = { 0 };
	uint64_t first, last;
	unsigned int i;

	s.flags = 0;
	CHECK_EQ(ttm_drm_ioctl(file, DRM_IOCTL_SDRV_SUBMIT, &s), 0);
	first = s.seqno;
	s.flags = DRM_SDRV_SUBMIT_HANG;
	CHECK_EQ(ttm_drm_ioctl(file, DRM_IOCTL_SDRV_SUBMIT, &s), 0);
	s.flags = 0;
	for (i = 2; i < SDRV_FENCE_RING; i++)
		CHECK_EQ(ttm_drm_ioctl(file, DRM_IOCTL_SDRV_SUBMIT, &s), 0);
	last = s.seqno;
	CHECK_EQ(last, first + SDRV_FENCE_RING - 1);
	CHECK_EQ(ttm_drm_ioctl(file, DRM_IOCTL_SDRV_SUBMIT, &s), -EBUSY);
	CHECK_EQ(ttm_gpu_advance(gpu, 100000), 0);
	/* It retires them all, and takes @first's slot: forgotten. */
	CHECK_EQ(ttm_drm_ioctl(file, DRM_IOCTL_SDRV_SUBMIT, &s), 0);
	CHECK_EQ(s.seqno, last + 1);
	w.seqno = first;
	CHECK_EQ(ttm_drm_ioctl(file, DRM_IOCTL_SDRV_WAIT, &w), -ENOENT);
	/* The hung job's fence is gone: its status was kept. */
	w = (struct drm_sdrv_wait){ .seqno = first + 1 };
	CHECK_EQ(ttm_drm_ioctl(file, DRM_IOCTL_SDRV_WAIT, &w), 0);
	CHECK_EQ(w.status, -ETIMEDOUT);
	w = (struct drm_sdrv_wait){ .seqno = last };
	CHECK_EQ(ttm_drm_ioctl(file, DRM_IOCTL_SDRV_WAIT, &w), 0);
	CHECK_EQ(w.status, 0);
	/* Done jobs hold no fence. */
	CHECK_EQ(!sdrv_file(file)->fences[(last - 1) % SDRV_FENCE_RING].fence,
		 1);
	CHECK_EQ(ttm_gpu_advance(gpu, 10), 0);
}

int main(void)
{
	struct ttm_gpu_options gopts = {
		.flags = TTM_GPU_DETERMINISTIC, .hang_timeout_ms = 1,
	};
	struct sdrv_device *sdev;
	struct drm_sdrv_flip_status st;
	struct drm_gem_close close = { 0 };
	uint32_t a, filler, b;
	struct ttm_interrupt_token *token;
	uint64_t fa, fb, w;
	int busy;

	CHECK_EQ(ttm_gpu_create(SDRV_NUM_ENGINES, &gopts, &gpu), 0);
	/* Visible VRAM (a quarter) holds two framebuffers. */
	CHECK_EQ(sdrv_device_create(gpu, 8 * FB_SIZE, &sdev), 0);
	CHECK_EQ(ttm_drm_open(sdev->ddev, TTM_DRM_NODE_PRIMARY, &file), 0);
	a = create(DRM_SDRV_GEM_SCANOUT);
	filler = create(0);
	b = create(DRM_SDRV_GEM_SCANOUT);

	/* The display job waits for the render, in virtual time. */
	submit(a, 7, 100000, false);
	fa = flip(a);
	CHECK_EQ(ttm_gpu_advance(gpu, 50), 0);
	CHECK_EQ(status(fa, false).done, 0);
	/* Waiting for it can be interrupted, as any interruptible wait. */
	CHECK_EQ(ttm_interrupt_self(&token), 0);
	CHECK_EQ(ttm_interrupt(token), 0);
	st = (struct drm_sdrv_flip_status){
		.flip_id = fa, .flags = DRM_SDRV_FLIP_STATUS_WAIT };
	CHECK_EQ(ttm_drm_ioctl(file, DRM_IOCTL_SDRV_FLIP_STATUS, &st), -EINTR);
	ttm_interrupt_token_put(token);
	CHECK_EQ(ttm_gpu_advance(gpu, 60), 0);
	st = status(fa, true);
	CHECK_EQ(st.status, 0);
	CHECK_EQ(st.word0, 7);
	CHECK_EQ(st.checksum, 7ull * (FB_SIZE / 4));

	/* A hung render (the watchdog fails it) is shown all the same. */
	submit(a, 100, 1000, true);
	fa = flip(a);
	CHECK_EQ(ttm_gpu_advance(gpu, 5000), 0);
	st = status(fa, true);
	CHECK_EQ(st.status, 0);
	CHECK_EQ(st.word0, 7);

	/*
	 * Flip to @b, which is outside visible VRAM (it was made behind @a
	 * and the filler, now gone): its display job waits for the copy
	 * engine to move it into the filler's place. Meanwhile a 1 us write
	 * to @a, still on screen, must wait for that display job: the flip
	 * fence is a READ of @a. Without it, the write would be done after
	 * 1 us. (Evicting the filler at the flip instead would make the
	 * flip wait for the copy engine, which only ttm_gpu_advance() runs.)
	 */
	close.handle = filler;
	CHECK_EQ(ttm_drm_ioctl(file, DRM_IOCTL_GEM_CLOSE, &close), 0);
	ttm_device_flush_destroys(sdev->ttm);
	fb = flip(b);
	w = submit(a, 1, 1000, false);
	CHECK_EQ(ttm_gpu_advance(gpu, 1), 0);
	busy = job_busy(w);
	CHECK_EQ(status(fb, false).done, 0);
	CHECK_EQ(busy, -ETIME);
	CHECK_EQ(ttm_gpu_advance(gpu, 100), 0);
	CHECK_EQ(job_busy(w), 0);
	st = status(fb, true);
	CHECK_EQ(st.status, 0);
	CHECK_EQ(st.size, FB_SIZE);
	CHECK_EQ(st.word0, 0);

	check_fence_ring(b);
	flip(0);   /* display off: @b is released */
	CHECK_EQ(ttm_gpu_advance(gpu, 10), 0);
	ttm_drm_close(file);
	sdrv_device_destroy(sdev);
	ttm_gpu_destroy(gpu);
	printf("ok\n");
	return 0;
}
