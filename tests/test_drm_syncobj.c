// SPDX-License-Identifier: MIT
/*
 * The SYNCOBJ_* ioctls (ttmsim/drm.h on ttmsim/syncobj.h): each one's
 * argument checks as the kernel's drm_syncobj.c (flags, pads, counts, bad
 * handles, bad user arrays, misaligned ones that work), and the semantics through them: binary
 * signal, reset and waits (any, all, WAIT_FOR_SUBMIT, first_signaled),
 * timelines (signal, query, waits, transfer), sharing between two files
 * by descriptor, sync-file export and import, and polling a sync file.
 */
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "drm_helpers.h"
#include "lib/mock_fence.h"

#include "ttmsim/fence.h"
#include "ttmsim/syncobj.h"

#define BAD_PTR 0xdead000000000000ull

static uint32_t create(struct ttm_drm_file *f, uint32_t flags)
{
	struct drm_syncobj_create c = { .flags = flags };

	assert_int_equal(ttm_drm_ioctl(f, DRM_IOCTL_SYNCOBJ_CREATE, &c), 0);
	assert_int_not_equal(c.handle, 0);
	return c.handle;
}

static int wait(struct ttm_drm_file *f, uint32_t *h, uint32_t n,
		uint32_t flags, uint32_t *first)
{
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)h, .count_handles = n, .flags = flags,
		.first_signaled = 99,
	};
	int ret = ttm_drm_ioctl(f, DRM_IOCTL_SYNCOBJ_WAIT, &w);

	if (first)
		*first = w.first_signaled;
	return ret;
}

static int array_op(struct ttm_drm_file *f, unsigned long req, uint32_t *h,
		    uint32_t n)
{
	struct drm_syncobj_array a = {
		.handles = (uintptr_t)h, .count_handles = n,
	};

	return ttm_drm_ioctl(f, req, &a);
}

/* Put a new unsignalled fence in @h; the caller signals and puts it. */
static struct ttm_fence *pending(struct ttm_drm_file *f, uint32_t h)
{
	struct ttm_syncobj *s =
		ttm_client_syncobj_lookup(ttm_drm_file_client(f), h);
	struct ttm_fence *fence = mock_fence_new("drm");

	assert_non_null(s);
	ttm_syncobj_replace_fence(s, fence);
	ttm_syncobj_put(s);
	return fence;
}

static int setup(void **state)
{
	mock_fence_setup(state);
	return drm_fixture_setup(state);
}

static int teardown(void **state)
{
	drm_fixture_teardown(state);
	return mock_fence_teardown(state);
}

static void test_create_destroy(void **state)
{
	struct drm_fixture *fx = *state;
	struct drm_syncobj_create c = { .flags = 2 };
	struct drm_syncobj_destroy d = { 0 };

	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_CREATE,
				       &c), -EINVAL);
	assert_int_equal(c.handle, 0);
	d.handle = create(fx->render, 0);
	d.pad = 1;
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_DESTROY,
				       &d), -EINVAL);
	d.pad = 0;
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_DESTROY,
				       &d), 0);
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_DESTROY,
				       &d), -EINVAL);
	/* Each file has its own table. */
	uint32_t h = create(fx->primary, 0);
	d.handle = h;
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_DESTROY,
				       &d), -EINVAL);
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_SYNCOBJ_DESTROY,
				       &d), 0);
}

static void test_signal_reset_wait(void **state)
{
	struct drm_fixture *fx = *state;
	uint32_t h[2] = { create(fx->render, DRM_SYNCOBJ_CREATE_SIGNALED),
			  create(fx->render, 0) };
	uint32_t first;

	/* Signalled: a wait for it is done. An empty one: -EINVAL. */
	assert_int_equal(wait(fx->render, h, 1, 0, &first), 0);
	assert_int_equal(first, 0);
	assert_int_equal(wait(fx->render, &h[1], 1, 0, NULL), -EINVAL);
	/* Wait for any: the lowest signalled; all: -ETIME (deadline 0),
	 * FOR_SUBMIT turning "empty" into "not yet". */
	assert_int_equal(wait(fx->render, h, 2,
			      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, &first),
			 0);
	assert_int_equal(first, 0);
	assert_int_equal(wait(fx->render, h, 2,
			      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL |
			      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL),
			 -ETIME);
	assert_int_equal(array_op(fx->render, DRM_IOCTL_SYNCOBJ_SIGNAL, &h[1], 1),
			 0);
	assert_int_equal(wait(fx->render, h, 2,
			      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL), 0);
	assert_int_equal(array_op(fx->render, DRM_IOCTL_SYNCOBJ_RESET, h, 1), 0);
	assert_int_equal(wait(fx->render, h, 2, 0, &first), -EINVAL);
	/* A pending fence: -ETIME until it signals. */
	struct ttm_fence *fence = pending(fx->render, h[0]);
	assert_int_equal(wait(fx->render, h, 1, 0, NULL), -ETIME);
	assert_int_equal(wait(fx->render, h, 2, 0, &first), 0);
	assert_int_equal(first, 1);
	ttm_fence_signal(fence, 0);
	assert_int_equal(wait(fx->render, h, 2,
			      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL), 0);
	ttm_fence_put(fence);
}

static void test_wait_timeout(void **state)
{
	struct drm_fixture *fx = *state;
	uint32_t h = create(fx->render, 0);
	struct ttm_fence *fence = pending(fx->render, h);
	struct timespec ts;
	struct drm_syncobj_wait w = { .handles = (uintptr_t)&h,
				      .count_handles = 1 };

	/* An absolute CLOCK_MONOTONIC deadline a little ahead: -ETIME. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	w.timeout_nsec = ts.tv_sec * 1000000000ll + ts.tv_nsec + 1000000;
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_WAIT, &w),
			 -ETIME);
	ttm_fence_signal(fence, 0);
	w.timeout_nsec = INT64_MAX;
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_WAIT, &w),
			 0);
	ttm_fence_put(fence);
}

static void test_array_errors(void **state)
{
	struct drm_fixture *fx = *state;
	uint32_t h = create(fx->render, DRM_SYNCOBJ_CREATE_SIGNALED);
	uint32_t bad = 1234;
	struct drm_syncobj_array a = { .handles = (uintptr_t)&h,
				       .count_handles = 1, .pad = 1 };
	uint64_t point = 1;
	struct drm_syncobj_timeline_array ta = {
		.handles = (uintptr_t)&h, .points = (uintptr_t)&point,
		.count_handles = 1,
	};

	/* Pads, counts, flags, pointers, handles. */
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_RESET, &a),
			 -EINVAL);
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_SIGNAL,
				       &a), -EINVAL);
	assert_int_equal(array_op(fx->render, DRM_IOCTL_SYNCOBJ_RESET, &h, 0),
			 -EINVAL);
	assert_int_equal(array_op(fx->render, DRM_IOCTL_SYNCOBJ_SIGNAL, NULL, 1),
			 -EFAULT);
	assert_int_equal(array_op(fx->render, DRM_IOCTL_SYNCOBJ_SIGNAL,
				  (uint32_t *)(uintptr_t)BAD_PTR, 1), -EFAULT);
	assert_int_equal(array_op(fx->render, DRM_IOCTL_SYNCOBJ_RESET, &bad, 1),
			 -ENOENT);
	assert_int_equal(wait(fx->render, &h, 1, 1u << 7, NULL), -EINVAL);
	/* WAIT_AVAILABLE is for timeline waits only. */
	assert_int_equal(wait(fx->render, &h, 1,
			      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE, NULL),
			 -EINVAL);
	assert_int_equal(wait(fx->render, &h, 0, 0, NULL), -EINVAL);
	assert_int_equal(wait(fx->render, NULL, 1, 0, NULL), -EFAULT);
	assert_int_equal(wait(fx->render, &bad, 1, 0, NULL), -ENOENT);
	ta.flags = 1;
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &ta),
			 -EINVAL);
	ta.flags = 2;
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_QUERY,
				       &ta), -EINVAL);
	ta.flags = 0;
	ta.points = BAD_PTR;
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_QUERY,
				       &ta), -EFAULT);
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &ta),
			 -EFAULT);
	ta.points = (uintptr_t)&point;
	ta.count_handles = 0;
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_QUERY,
				       &ta), -EINVAL);
	ta.count_handles = 1;
	ta.handles = (uintptr_t)&bad;
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_QUERY,
				       &ta), -ENOENT);
}

/* What one run of the array ioctls answered (misaligned_run()). */
struct array_results {
	int signal, wait_any, reset, wait_reset, tl_signal, query, tl_wait;
	uint32_t first;
	uint64_t queried[2];
};

/*
 * SIGNAL, WAIT, RESET, TIMELINE_SIGNAL, QUERY and TIMELINE_WAIT on new
 * syncobjs, every handle and point array placed @off bytes into an
 * 8-aligned buffer (the kernel copies user arrays in and out at any
 * alignment; memcpy() here, since the pointer may not be a valid
 * uint32_t *).
 */
static struct array_results misaligned_run(struct ttm_drm_file *f, size_t off)
{
	uint64_t hbuf[4] = { 0 }, pbuf[4] = { 0 };
	unsigned char *hp = (unsigned char *)hbuf + off;
	unsigned char *pp = (unsigned char *)pbuf + off;
	uint32_t bin[3] = { create(f, 0), create(f, 0), create(f, 0) };
	uint32_t tl[2] = { create(f, 0), create(f, 0) };
	uint64_t points[2] = { 3, 5 };
	struct drm_syncobj_timeline_array ta = {
		.handles = (uintptr_t)hp, .points = (uintptr_t)pp,
		.count_handles = 2,
	};
	struct drm_syncobj_timeline_wait tw = {
		.handles = (uintptr_t)hp, .points = (uintptr_t)pp,
		.count_handles = 2, .flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL,
	};
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)hp, .count_handles = 3,
		.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
	};
	struct array_results r = { 0 };

	/* Signal the middle one: a wait for any finds it first. */
	memcpy(hp, &bin[1], sizeof(bin[1]));
	r.signal = ttm_drm_ioctl(f, DRM_IOCTL_SYNCOBJ_SIGNAL,
				 &(struct drm_syncobj_array){
					.handles = (uintptr_t)hp,
					.count_handles = 1 });
	memcpy(hp, bin, sizeof(bin));
	r.wait_any = ttm_drm_ioctl(f, DRM_IOCTL_SYNCOBJ_WAIT, &w);
	r.first = w.first_signaled;
	/* Reset it: all three empty, not yet submitted: -ETIME (deadline 0). */
	memcpy(hp, &bin[1], sizeof(bin[1]));
	r.reset = ttm_drm_ioctl(f, DRM_IOCTL_SYNCOBJ_RESET,
				&(struct drm_syncobj_array){
					.handles = (uintptr_t)hp,
					.count_handles = 1 });
	memcpy(hp, bin, sizeof(bin));
	r.wait_reset = ttm_drm_ioctl(f, DRM_IOCTL_SYNCOBJ_WAIT, &w);
	/* Timelines: signal points 3 and 5, read them back, wait for both. */
	memcpy(hp, tl, sizeof(tl));
	memcpy(pp, points, sizeof(points));
	r.tl_signal = ttm_drm_ioctl(f, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &ta);
	memset(pp, 0, sizeof(points));
	r.query = ttm_drm_ioctl(f, DRM_IOCTL_SYNCOBJ_QUERY, &ta);
	memcpy(r.queried, pp, sizeof(r.queried));
	memcpy(pp, points, sizeof(points));
	r.tl_wait = ttm_drm_ioctl(f, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &tw);
	return r;
}

/*
 * A misaligned handle or point array works, with the same answers as an
 * aligned one: the kernel's copy_from_user() takes any alignment, so
 * ttmsim must too (fuzz/corpus/drm/ubsan_misaligned_syncobj_array.bin
 * found them read in place, undefined in C; they were then -EFAULT).
 */
static void test_misaligned_arrays(void **state)
{
	struct drm_fixture *fx = *state;
	struct array_results want = misaligned_run(fx->render, 0);
	size_t off;

	assert_int_equal(want.signal, 0);
	assert_int_equal(want.wait_any, 0);
	assert_int_equal(want.first, 1);
	assert_int_equal(want.reset, 0);
	assert_int_equal(want.wait_reset, -ETIME);
	assert_int_equal(want.tl_signal, 0);
	assert_int_equal(want.query, 0);
	assert_int_equal(want.queried[0], 3);
	assert_int_equal(want.queried[1], 5);
	assert_int_equal(want.tl_wait, 0);
	for (off = 1; off < 8; off++) {
		struct array_results got = misaligned_run(fx->render, off);

		assert_memory_equal(&got, &want, sizeof(got));
	}
}

static void test_timeline(void **state)
{
	struct drm_fixture *fx = *state;
	uint32_t h[2] = { create(fx->render, 0), create(fx->render, 0) };
	uint64_t points[2] = { 3, 5 }, got[2] = { 0 };
	struct drm_syncobj_timeline_array ta = {
		.handles = (uintptr_t)h, .points = (uintptr_t)points,
		.count_handles = 2,
	};
	struct drm_syncobj_timeline_wait tw = {
		.handles = (uintptr_t)h, .points = (uintptr_t)points,
		.count_handles = 2, .flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL,
	};

	/* Points not yet submitted: -EINVAL, as the kernel. */
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &tw),
			 -EINVAL);
	tw.flags |= DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &tw),
			 -ETIME);
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &ta),
			 0);
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &tw), 0);
	ta.points = (uintptr_t)got;
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_QUERY,
				       &ta), 0);
	assert_int_equal(got[0], 3);
	assert_int_equal(got[1], 5);
	tw.flags = 1u << 9;
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &tw),
			 -EINVAL);
	tw.flags = 0;
	tw.points = 0;
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &tw),
			 -EFAULT);

	/* TRANSFER h[1]'s point 5 to h[0]'s point 9. */
	struct drm_syncobj_transfer t = {
		.src_handle = h[1], .src_point = 5,
		.dst_handle = h[0], .dst_point = 9,
	};
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_TRANSFER,
				       &t), 0);
	ta.count_handles = 1;
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_QUERY,
				       &ta), 0);
	assert_int_equal(got[0], 9);
	t.pad = 1;
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_TRANSFER,
				       &t), -EINVAL);
	t.pad = 0;
	t.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_TRANSFER,
				       &t), -EINVAL);
	t.flags = 0;
	t.src_point = 50; /* not submitted */
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_TRANSFER,
				       &t), -EINVAL);
	t.src_handle = 999;
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SYNCOBJ_TRANSFER,
				       &t), -ENOENT);
}

static void test_share_fd(void **state)
{
	struct drm_fixture *fx = *state;
	uint32_t h = create(fx->render, 0);
	struct drm_syncobj_handle sh = { .handle = h };
	uint32_t first;

	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &sh), 0);
	assert_true(sh.fd >= 0);
	int fd = sh.fd;
	sh = (struct drm_syncobj_handle){ .fd = fd };
	assert_int_equal(ttm_drm_ioctl(fx->primary,
				       DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &sh), 0);
	close(fd);
	/* Signalled in one file, seen in the other. */
	assert_int_equal(array_op(fx->render, DRM_IOCTL_SYNCOBJ_SIGNAL, &h, 1),
			 0);
	assert_int_equal(wait(fx->primary, &sh.handle, 1, 0, &first), 0);

	/* Errors: flags, pads, bad handle, bad descriptor. */
	sh = (struct drm_syncobj_handle){ .handle = h, .flags = 2, .fd = -1 };
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &sh),
			 -EINVAL);
	sh = (struct drm_syncobj_handle){ .handle = h, .pad = 1, .fd = -1 };
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &sh),
			 -EINVAL);
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &sh),
			 -EINVAL);
	sh = (struct drm_syncobj_handle){ .handle = 77, .fd = -1 };
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &sh),
			 -EINVAL);
	assert_int_equal(sh.fd, -1);
	sh = (struct drm_syncobj_handle){ .fd = 0 };
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &sh),
			 -EINVAL);
	sh = (struct drm_syncobj_handle){ .fd = 0, .flags = 4 };
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &sh),
			 -EINVAL);
}

static void test_sync_file(void **state)
{
	struct drm_fixture *fx = *state;
	uint32_t a = create(fx->render, 0), b = create(fx->primary, 0);
	struct ttm_fence *fence = pending(fx->render, a);
	struct drm_syncobj_handle sh = {
		.handle = a,
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
	};
	struct pollfd pfd = { .events = POLLIN };

	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &sh), 0);
	pfd.fd = sh.fd;
	assert_int_equal(poll(&pfd, 1, 0), 0);
	/* Into another file's syncobj: that one waits for the same fence. */
	sh = (struct drm_syncobj_handle){
		.handle = b, .fd = pfd.fd,
		.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE,
	};
	assert_int_equal(ttm_drm_ioctl(fx->primary,
				       DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &sh), 0);
	assert_int_equal(sh.handle, b);
	assert_int_equal(wait(fx->primary, &b, 1, 0, NULL), -ETIME);
	ttm_fence_signal(fence, 0);
	assert_int_equal(poll(&pfd, 1, -1), 1);
	assert_true(pfd.revents & POLLIN);
	assert_int_equal(wait(fx->primary, &b, 1, 0, NULL), 0);
	/* Into a handle that does not exist: -ENOENT, as the kernel. */
	sh.handle = 55;
	assert_int_equal(ttm_drm_ioctl(fx->primary,
				       DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &sh),
			 -ENOENT);
	close(pfd.fd);
	/* An empty syncobj has no fence to export. */
	sh = (struct drm_syncobj_handle){
		.handle = create(fx->render, 0), .fd = -1,
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
	};
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &sh),
			 -EINVAL);
	ttm_fence_put(fence);
}

static void test_eventfd_unsupported(void **state)
{
	struct drm_fixture *fx = *state;
	struct { uint32_t handle, flags; uint64_t point; int32_t fd;
		 uint32_t pad; } e = { .handle = create(fx->render, 0) };

	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOWR(0xCF, typeof(e)), &e),
			 -EOPNOTSUPP);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_create_destroy),
		T(test_signal_reset_wait),
		T(test_wait_timeout),
		T(test_array_errors),
		T(test_misaligned_arrays),
		T(test_timeline),
		T(test_share_fd),
		T(test_sync_file),
		T(test_eventfd_unsupported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
