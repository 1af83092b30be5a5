// SPDX-License-Identifier: MIT
/*
 * The built-in "ttmsim" driver's private ioctls (ttmsim/ttmsim_drm.h)
 * through ttm_drm_ioctl(): each one's success and error paths, a
 * submission chained by timeline syncobj points with its effect on the
 * buffers' contents, GEM_WAIT's timeouts on the virtual clock, and who
 * may raise a file's priority. The GPU runs on the virtual clock: every
 * job runs when the test advances it, never by timing.
 */
#include "lib/bo_helpers.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "ttmsim/drm.h"
#include "ttmsim/execbuf.h"
#include "ttmsim/gpu.h"
#include "ttmsim/syncobj.h"
#include "ttmsim/ttmsim_drm.h"

/* Jobs on engines 0 and 1, moves on 2. */
#define ENGINES 3
#define VRAM (1024 * KiB)
#define GTT (1024 * KiB)

struct fixture {
	struct ttm_gpu *gpu;
	struct ttm_device *dev;
	struct ttm_drm_device *ddev;
	struct ttm_drm_file *render;   /* most tests' file */
	struct ttm_drm_file *primary;
};

static void fixture_init(struct fixture *f)
{
	struct ttm_gpu_options gopts = { .flags = TTM_GPU_DETERMINISTIC };
	struct ttm_device_options opts = {
		.vram_size = VRAM,
		.gtt_size = GTT,
		.copy_engine = ENGINES - 1,
	};

	memset(f, 0, sizeof(*f));
	assert_int_equal(ttm_gpu_create(ENGINES, &gopts, &f->gpu), 0);
	opts.gpu = f->gpu;
	assert_int_equal(ttm_device_create(&opts, &f->dev), 0);
	assert_int_equal(ttm_drm_device_create(f->dev,
					       ttm_drm_ttmsim_driver(),
					       &f->ddev), 0);
	assert_int_equal(ttm_drm_open(f->ddev, TTM_DRM_NODE_RENDER,
				      &f->render), 0);
	assert_int_equal(ttm_drm_open(f->ddev, TTM_DRM_NODE_PRIMARY,
				      &f->primary), 0);
}

static void fixture_fini(struct fixture *f)
{
	/* Let every job run, so that the files' close finds none queued. */
	assert_int_equal(ttm_gpu_advance(f->gpu, 10 * 1000 * 1000), 0);
	ttm_execbuf_wait_idle(f->dev);
	assert_dev_ok(f->dev);
	ttm_drm_close(f->render);
	ttm_drm_close(f->primary);
	ttm_drm_device_destroy(f->ddev);
	assert_int_equal(ttm_device_destroy(f->dev), 0);
	ttm_gpu_destroy(f->gpu);
}

static uint64_t now_us(struct fixture *f)
{
	return ttm_gpu_now_us(f->gpu);
}

static int ioc(struct ttm_drm_file *file, unsigned long request, void *arg)
{
	return ttm_drm_ioctl(file, request, arg);
}

/* @request with the size its encoding gives changed to @size. */
static unsigned long resized(unsigned long request, unsigned int size)
{
	return _IOC(_IOC_READ | _IOC_WRITE, _IOC_TYPE(request),
		    _IOC_NR(request), size);
}

static uint32_t gem_create(struct ttm_drm_file *file, uint64_t size,
			   uint32_t domains)
{
	struct drm_ttmsim_gem_create c = { .size = size, .domains = domains };

	assert_int_equal(ioc(file, DRM_IOCTL_TTMSIM_GEM_CREATE, &c), 0);
	assert_int_not_equal(c.handle, 0);
	return c.handle;
}

/* The buffer of @handle; the file's handle keeps it alive. */
static struct ttm_bo *bo_of(struct ttm_drm_file *file, uint32_t handle)
{
	struct ttm_bo *bo = ttm_client_lookup(ttm_drm_file_client(file),
					      handle);

	assert_non_null(bo);
	ttm_bo_put(bo);
	return bo;
}

/* Every 32-bit word of the buffer must be @want (read by the library). */
static void expect_words(struct ttm_drm_file *file, uint32_t handle,
			 uint32_t want)
{
	expect_bo_words(bo_of(file, handle), want);
}

static void fill_words(struct ttm_drm_file *file, uint32_t handle,
		       uint32_t value)
{
	fill_bo_words(bo_of(file, handle), value);
}

/* An ADD of @value, @duration_us long, on @engine, writing @handle. */
static struct drm_ttmsim_submit add_job(struct drm_ttmsim_submit_bo *bo,
					uint32_t handle, uint32_t value,
					uint32_t engine, uint64_t duration_us)
{
	bo->handle = handle;
	bo->flags = DRM_TTMSIM_BO_WRITE;
	return (struct drm_ttmsim_submit){
		.bos = (uintptr_t)bo,
		.bo_count = 1,
		.engine = engine,
		.op = DRM_TTMSIM_OP_ADD,
		.value = value,
		.duration_ns = duration_us * 1000,
	};
}

/* ---- the table ---------------------------------------------------------- */

static void test_table(void **state)
{
	const struct ttm_drm_driver *drv = ttm_drm_ttmsim_driver();
	unsigned int i;

	(void)state;
	assert_string_equal(drv->name, DRM_TTMSIM_DRIVER_NAME);
	assert_int_equal(drv->num_ioctls, DRM_TTMSIM_SET_PRIORITY + 1);
	for (i = 0; i < drv->num_ioctls; i++) {
		const struct ttm_drm_ioctl_desc *d = &drv->ioctls[i];

		assert_non_null(d->func);
		assert_non_null(d->name);
		assert_int_equal(_IOC_NR(d->cmd), DRM_COMMAND_BASE + i);
		/* A render node's client needs every one of them. */
		assert_int_equal(d->flags, TTM_DRM_RENDER_ALLOW);
	}
	/* The layout rules: sizes a multiple of 8, no hidden padding. */
	assert_int_equal(sizeof(struct drm_ttmsim_get_param), 16);
	assert_int_equal(sizeof(struct drm_ttmsim_gem_create), 32);
	assert_int_equal(sizeof(struct drm_ttmsim_gem_mmap_offset), 16);
	assert_int_equal(sizeof(struct drm_ttmsim_gem_wait), 16);
	assert_int_equal(sizeof(struct drm_ttmsim_submit_bo), 8);
	assert_int_equal(sizeof(struct drm_ttmsim_syncobj), 16);
	assert_int_equal(sizeof(struct drm_ttmsim_submit), 80);
	assert_int_equal(sizeof(struct drm_ttmsim_set_priority), 8);
}

/* ---- GET_PARAM ---------------------------------------------------------- */

static uint64_t get_param(struct ttm_drm_file *file, uint32_t param)
{
	struct drm_ttmsim_get_param p = { .param = param };

	assert_int_equal(ioc(file, DRM_IOCTL_TTMSIM_GET_PARAM, &p), 0);
	return p.value;
}

static void test_get_param(void **state)
{
	struct drm_ttmsim_get_param p = { 0 };
	struct fixture f;

	(void)state;
	fixture_init(&f);
	assert_int_equal(get_param(f.render, DRM_TTMSIM_PARAM_VRAM_SIZE),
			 VRAM);
	assert_int_equal(get_param(f.render, DRM_TTMSIM_PARAM_GTT_SIZE), GTT);
	assert_int_equal(get_param(f.render,
				   DRM_TTMSIM_PARAM_VISIBLE_VRAM_SIZE),
			 VRAM / 4);
	assert_int_equal(get_param(f.render, DRM_TTMSIM_PARAM_PAGE_SIZE),
			 4096);
	assert_int_equal(get_param(f.render, DRM_TTMSIM_PARAM_NUM_ENGINES),
			 ENGINES);
	assert_int_equal(get_param(f.render, DRM_TTMSIM_PARAM_MAX_BO_SIZE),
			 TTM_BO_MAX_SIZE);
	assert_int_equal(get_param(f.render,
				   DRM_TTMSIM_PARAM_VIRTUAL_CLOCK), 1);
	/* The virtual clock's time, in ns. */
	assert_int_equal(ttm_gpu_advance(f.gpu, 7), 0);
	assert_int_equal(get_param(f.render, DRM_TTMSIM_PARAM_CLOCK_NS),
			 now_us(&f) * 1000);

	p.param = DRM_TTMSIM_PARAM_VIRTUAL_CLOCK + 1;
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_GET_PARAM, &p),
			 -EINVAL);
	p.param = DRM_TTMSIM_PARAM_VRAM_SIZE;
	p.pad = 1;
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_GET_PARAM, &p),
			 -EINVAL);
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_GET_PARAM, NULL),
			 -EFAULT);
	fixture_fini(&f);
}

/* ---- GEM_CREATE --------------------------------------------------------- */

static int try_create(struct fixture *f, struct drm_ttmsim_gem_create c)
{
	return ioc(f->render, DRM_IOCTL_TTMSIM_GEM_CREATE, &c);
}

static void test_gem_create(void **state)
{
	const uint32_t vram = DRM_TTMSIM_GEM_DOMAIN_VRAM;
	const uint32_t sys = DRM_TTMSIM_GEM_DOMAIN_SYSTEM;
	struct drm_ttmsim_gem_create c = { .size = 5, .domains = vram };
	struct ttm_bo *bo;
	struct fixture f;

	(void)state;
	fixture_init(&f);
	/* Whole pages, as GEM objects, and the size says so. */
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_GEM_CREATE, &c), 0);
	assert_int_equal(c.size, 4096);
	bo = bo_of(f.render, c.handle);
	assert_int_equal(ttm_bo_size(bo), 4096);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	expect_words(f.render, c.handle, 0);

	/* GTT first when VRAM is not asked for; SYSTEM last. */
	bo = bo_of(f.render, gem_create(f.render, 4096,
					DRM_TTMSIM_GEM_DOMAIN_GTT | sys));
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_GTT);
	bo = bo_of(f.render, gem_create(f.render, 4096, sys));
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_SYSTEM);

	/* A page range, top-down: the buffer's pages lie in it. */
	c = (struct drm_ttmsim_gem_create){
		.size = 8192, .domains = vram, .fpfn = 16, .lpfn = 32,
		.flags = DRM_TTMSIM_GEM_RANGE | DRM_TTMSIM_GEM_TOPDOWN,
	};
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_GEM_CREATE, &c), 0);
	assert_int_equal(ttm_bo_offset(bo_of(f.render, c.handle)),
			 30 * 4096);
	/* CPU-visible VRAM: below VRAM / 4. */
	c = (struct drm_ttmsim_gem_create){
		.size = 4096, .domains = vram,
		.flags = DRM_TTMSIM_GEM_CPU_VISIBLE | DRM_TTMSIM_GEM_TOPDOWN,
	};
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_GEM_CREATE, &c), 0);
	assert_int_equal(ttm_bo_offset(bo_of(f.render, c.handle)),
			 VRAM / 4 - 4096);

	/* Bad domains, flags, pads, ranges and sizes. */
	assert_int_equal(try_create(&f, (struct drm_ttmsim_gem_create){
		.size = 4096 }), -EINVAL);
	assert_int_equal(try_create(&f, (struct drm_ttmsim_gem_create){
		.size = 4096, .domains = 1u << 3 | vram }), -EINVAL);
	assert_int_equal(try_create(&f, (struct drm_ttmsim_gem_create){
		.size = 4096, .domains = vram, .flags = 1u << 4 }), -EINVAL);
	assert_int_equal(try_create(&f, (struct drm_ttmsim_gem_create){
		.size = 4096, .domains = vram, .pad = 1 }), -EINVAL);
	assert_int_equal(try_create(&f, (struct drm_ttmsim_gem_create){
		.size = 4096, .domains = vram, .handle = 1 }), 0);
	assert_int_equal(try_create(&f, (struct drm_ttmsim_gem_create){
		.size = 4096, .domains = vram, .fpfn = 1 }), -EINVAL);
	assert_int_equal(try_create(&f, (struct drm_ttmsim_gem_create){
		.size = 4096, .domains = vram, .flags = DRM_TTMSIM_GEM_RANGE,
		.fpfn = 8, .lpfn = 8 }), -EINVAL);
	assert_int_equal(try_create(&f, (struct drm_ttmsim_gem_create){
		.size = 4096, .domains = sys, .flags = DRM_TTMSIM_GEM_RANGE,
		.lpfn = 8 }), -EINVAL);
	assert_int_equal(try_create(&f, (struct drm_ttmsim_gem_create){
		.size = 4096, .domains = DRM_TTMSIM_GEM_DOMAIN_GTT,
		.flags = DRM_TTMSIM_GEM_CPU_VISIBLE }), -EINVAL);
	assert_int_equal(try_create(&f, (struct drm_ttmsim_gem_create){
		.domains = vram }), -EINVAL);
	assert_int_equal(try_create(&f, (struct drm_ttmsim_gem_create){
		.size = TTM_BO_MAX_SIZE + 1, .domains = sys }), -EINVAL);
	assert_int_equal(try_create(&f, (struct drm_ttmsim_gem_create){
		.size = UINT64_MAX, .domains = sys }), -EINVAL);
	/* Never fits. */
	assert_int_equal(try_create(&f, (struct drm_ttmsim_gem_create){
		.size = 2 * VRAM, .domains = vram }), -ENOSPC);
	/* A range too small for the buffer. */
	assert_int_equal(try_create(&f, (struct drm_ttmsim_gem_create){
		.size = 8192, .domains = vram, .flags = DRM_TTMSIM_GEM_RANGE,
		.fpfn = 4, .lpfn = 5 }), -ENOSPC);
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_GEM_CREATE, NULL),
			 -EFAULT);
	fixture_fini(&f);
}

/* ---- GEM_MMAP_OFFSET ---------------------------------------------------- */

static void test_gem_mmap_offset(void **state)
{
	struct drm_ttmsim_gem_mmap_offset m = { 0 }, again;
	uint32_t *words;
	uint32_t h;
	struct fixture f;

	(void)state;
	fixture_init(&f);
	h = gem_create(f.render, 8192, DRM_TTMSIM_GEM_DOMAIN_VRAM);
	m.handle = h;
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_GEM_MMAP_OFFSET, &m),
			 0);
	assert_int_equal(m.offset % 4096, 0);
	again = (struct drm_ttmsim_gem_mmap_offset){ .handle = h };
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_GEM_MMAP_OFFSET,
			     &again), 0);
	assert_int_equal(again.offset, m.offset);

	/* Written through the mapping, read back through the library. */
	assert_int_equal(ttm_drm_mmap(f.render, m.offset, 8192,
				      (void **)&words), 0);
	words[0] = 0x1234;
	words[2047] = 0x5678;
	assert_int_equal(ttm_drm_munmap(f.render, words, 8192), 0);
	{
		struct ttm_bo *bo = bo_of(f.render, h);
		uint32_t w[2];

		assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
		assert_int_equal(ttm_bo_read(bo, 0, &w[0], 4), 0);
		assert_int_equal(ttm_bo_read(bo, 8188, &w[1], 4), 0);
		ttm_bo_unreserve(bo);
		assert_int_equal(w[0], 0x1234);
		assert_int_equal(w[1], 0x5678);
	}

	m = (struct drm_ttmsim_gem_mmap_offset){ .handle = h, .flags = 1 };
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_GEM_MMAP_OFFSET, &m),
			 -EINVAL);
	m = (struct drm_ttmsim_gem_mmap_offset){ .handle = h + 1 };
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_GEM_MMAP_OFFSET, &m),
			 -ENOENT);
	/* Another file's handle means nothing here. */
	m = (struct drm_ttmsim_gem_mmap_offset){ .handle = h };
	assert_int_equal(ioc(f.primary, DRM_IOCTL_TTMSIM_GEM_MMAP_OFFSET,
			     &m), -ENOENT);
	fixture_fini(&f);
}

/* ---- GEM_WAIT ----------------------------------------------------------- */

static int gem_wait(struct ttm_drm_file *file, uint32_t handle,
		    uint32_t flags, uint64_t timeout_ns)
{
	struct drm_ttmsim_gem_wait w = {
		.handle = handle, .flags = flags, .timeout_ns = timeout_ns,
	};

	return ioc(file, DRM_IOCTL_TTMSIM_GEM_WAIT, &w);
}

static void test_gem_wait_errors(void **state)
{
	const uint32_t rd = DRM_TTMSIM_WAIT_READ;
	struct fixture f;
	uint32_t h;

	(void)state;
	fixture_init(&f);
	h = gem_create(f.render, 4096, DRM_TTMSIM_GEM_DOMAIN_VRAM);
	/* Idle: at once, whatever the intent. */
	assert_int_equal(gem_wait(f.render, h, rd, 0), 0);
	assert_int_equal(gem_wait(f.render, h, DRM_TTMSIM_WAIT_WRITE, 0), 0);
	assert_int_equal(gem_wait(f.render, h, rd | DRM_TTMSIM_WAIT_ABSOLUTE,
				  0), 0);
	assert_int_equal(gem_wait(f.render, h, rd,
				  DRM_TTMSIM_TIMEOUT_INFINITE), 0);

	assert_int_equal(gem_wait(f.render, h, 0, 0), -EINVAL);
	assert_int_equal(gem_wait(f.render, h, rd | 1u << 3, 0), -EINVAL);
	assert_int_equal(gem_wait(f.render, h, DRM_TTMSIM_WAIT_ABSOLUTE, 0),
			 -EINVAL);
	assert_int_equal(gem_wait(f.render, h + 1, rd, 0), -ENOENT);
	assert_int_equal(gem_wait(f.render, 0, rd, 0), -ENOENT);
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_GEM_WAIT, NULL),
			 -EFAULT);
	fixture_fini(&f);
}

/*
 * The timeout counts on the virtual clock, which the wait lets pass: a
 * wait shorter than the job says -ETIME, a longer one returns when the
 * job has run, at its time, whatever the machine's speed.
 */
static void test_gem_wait_virtual(void **state)
{
	const uint32_t rd = DRM_TTMSIM_WAIT_READ;
	const uint32_t wr = DRM_TTMSIM_WAIT_WRITE;
	struct drm_ttmsim_submit_bo bo;
	struct drm_ttmsim_submit s;
	struct fixture f;
	uint64_t t0;
	uint32_t h, r;

	(void)state;
	fixture_init(&f);
	h = gem_create(f.render, 4096, DRM_TTMSIM_GEM_DOMAIN_VRAM);
	t0 = now_us(&f);
	s = add_job(&bo, h, 5, 0, 1000);
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_SUBMIT, &s), 0);

	/* A test, then 400 us: the job needs 1000. */
	assert_int_equal(gem_wait(f.render, h, rd, 0), -ETIME);
	assert_int_equal(gem_wait(f.render, h, rd, 400 * 1000), -ETIME);
	assert_true(now_us(&f) <= t0 + 400);
	/* Absolute: a deadline before the job's end, on the same clock. */
	assert_int_equal(gem_wait(f.render, h,
				  rd | DRM_TTMSIM_WAIT_ABSOLUTE,
				  (t0 + 900) * 1000), -ETIME);
	assert_true(now_us(&f) <= t0 + 900);
	/* Long enough: done when the job is, not at the deadline. */
	assert_int_equal(gem_wait(f.render, h, wr, 5000 * 1000), 0);
	assert_int_equal(now_us(&f), t0 + 1000);
	expect_words(f.render, h, 5);

	/* Read intent: a job that only reads @h does not hold a reader. */
	r = gem_create(f.render, 4096, DRM_TTMSIM_GEM_DOMAIN_VRAM);
	s = add_job(&bo, h, 0, 1, 300);
	bo.flags = DRM_TTMSIM_BO_READ;
	s.op = DRM_TTMSIM_OP_NOP;
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_SUBMIT, &s), 0);
	assert_int_equal(gem_wait(f.render, h, rd, 0), 0);
	assert_int_equal(gem_wait(f.render, h, wr, 0), -ETIME);
	/* Forever: as long as it takes, on the virtual clock too. */
	assert_int_equal(gem_wait(f.render, h, wr,
				  DRM_TTMSIM_TIMEOUT_INFINITE), 0);
	assert_int_equal(now_us(&f), t0 + 1300);
	assert_int_equal(gem_wait(f.render, r, wr, 0), 0);

	/* A deadline already past only tests. */
	s = add_job(&bo, h, 1, 0, 100);
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_SUBMIT, &s), 0);
	assert_int_equal(gem_wait(f.render, h,
				  rd | DRM_TTMSIM_WAIT_ABSOLUTE, 1), -ETIME);
	assert_int_equal(now_us(&f), t0 + 1300);
	fixture_fini(&f);
}

/* ---- SUBMIT ------------------------------------------------------------- */

/* The last point of @handle's timeline that has signalled. */
static uint64_t signalled_point(struct ttm_client *client, uint32_t handle)
{
	uint64_t point = UINT64_MAX;

	assert_int_equal(ttm_client_syncobj_query(client, &handle, &point, 1,
						  0), 0);
	return point;
}

/*
 * Job a adds 1 to buffer x and signals point 1 of a timeline; job b, on
 * the other engine and touching another buffer (no implicit sync between
 * them), waits for point 1, adds 2 to y and signals point 2 and a sync
 * file. Only the syncobj orders them.
 */
static void test_submit_timeline(void **state)
{
	struct drm_ttmsim_submit_bo bo_a, bo_b;
	struct drm_ttmsim_syncobj out1 = { .point = 1 };
	struct drm_ttmsim_syncobj in1 = { .point = 1 };
	struct drm_ttmsim_syncobj out2 = { .point = 2 };
	struct drm_ttmsim_submit a, b;
	struct ttm_client *client;
	struct pollfd pfd;
	uint32_t x, y, sobj;
	struct fixture f;

	(void)state;
	fixture_init(&f);
	client = ttm_drm_file_client(f.render);
	x = gem_create(f.render, 4096, DRM_TTMSIM_GEM_DOMAIN_VRAM);
	y = gem_create(f.render, 4096, DRM_TTMSIM_GEM_DOMAIN_GTT);
	assert_int_equal(ttm_client_syncobj_create(client, 0, &sobj), 0);
	out1.handle = in1.handle = out2.handle = sobj;

	/* b first waits for a point nobody submitted: -EINVAL, named. */
	b = add_job(&bo_b, y, 2, 1, 100);
	b.in_syncobjs = (uintptr_t)&in1;
	b.in_syncobj_count = 1;
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_SUBMIT, &b), -EINVAL);
	assert_int_equal(b.error_array, DRM_TTMSIM_ARRAY_IN_SYNCOBJS);
	assert_int_equal(b.error_index, 0);

	a = add_job(&bo_a, x, 1, 0, 100);
	a.out_syncobjs = (uintptr_t)&out1;
	a.out_syncobj_count = 1;
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_SUBMIT, &a), 0);
	assert_int_equal(a.error_array, DRM_TTMSIM_ARRAY_NONE);
	assert_int_equal(a.fence_fd, -1);

	b = add_job(&bo_b, y, 2, 1, 100);
	b.in_syncobjs = (uintptr_t)&in1;
	b.in_syncobj_count = 1;
	b.out_syncobjs = (uintptr_t)&out2;
	b.out_syncobj_count = 1;
	b.flags = DRM_TTMSIM_SUBMIT_FENCE_FD_OUT;
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_SUBMIT, &b), 0);
	assert_true(b.fence_fd >= 0);
	pfd = (struct pollfd){ .fd = b.fence_fd, .events = POLLIN };

	/* Halfway through a: nothing yet, b not started. */
	assert_int_equal(ttm_gpu_advance(f.gpu, 50), 0);
	assert_int_equal(signalled_point(client, sobj), 0);
	assert_int_equal(gem_wait(f.render, x, DRM_TTMSIM_WAIT_READ, 0), -ETIME);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	/* a done (point 1), b halfway. */
	assert_int_equal(ttm_gpu_advance(f.gpu, 100), 0);
	assert_int_equal(signalled_point(client, sobj), 1);
	expect_words(f.render, x, 1);
	assert_int_equal(gem_wait(f.render, y, DRM_TTMSIM_WAIT_READ, 0),
			 -ETIME);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	/* b done: point 2, its sync file, y's contents. */
	assert_int_equal(ttm_gpu_advance(f.gpu, 100), 0);
	assert_int_equal(signalled_point(client, sobj), 2);
	expect_words(f.render, y, 2);
	/* And as userspace sees it: through a mapping. */
	{
		struct drm_ttmsim_gem_mmap_offset m = { .handle = y };
		uint32_t *words;
		unsigned int i;

		assert_int_equal(ioc(f.render,
				     DRM_IOCTL_TTMSIM_GEM_MMAP_OFFSET, &m), 0);
		assert_int_equal(ttm_drm_mmap(f.render, m.offset, 4096,
					      (void **)&words), 0);
		for (i = 0; i < 1024; i++)
			assert_int_equal(words[i], 2);
		assert_int_equal(ttm_drm_munmap(f.render, words, 4096), 0);
	}
	assert_int_equal(poll(&pfd, 1, 0), 1);
	close(b.fence_fd);
	fixture_fini(&f);
}

/* A sync file in: the job waits for it, and fails with its error. */
static void test_submit_fence_fd_in(void **state)
{
	struct drm_ttmsim_submit_bo bo;
	struct drm_ttmsim_submit s;
	struct ttm_fence *gate;
	struct fixture f;
	uint32_t h;
	int fd;

	(void)state;
	fixture_init(&f);
	h = gem_create(f.render, 4096, DRM_TTMSIM_GEM_DOMAIN_VRAM);
	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1,
					  &gate), 0);
	fd = ttm_fence_export_fd(gate);
	assert_true(fd >= 0);
	s = add_job(&bo, h, 3, 0, 10);
	s.flags = DRM_TTMSIM_SUBMIT_FENCE_FD_IN;
	s.fence_fd = fd;
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_SUBMIT, &s), 0);
	assert_int_equal(s.fence_fd, -1);
	assert_int_equal(ttm_gpu_advance(f.gpu, 100), 0);
	assert_int_equal(gem_wait(f.render, h, DRM_TTMSIM_WAIT_READ, 0), -ETIME);
	ttm_fence_signal(gate, 0);
	assert_int_equal(ttm_gpu_advance(f.gpu, 100), 0);
	expect_words(f.render, h, 3);

	/* Not a sync file. */
	s = add_job(&bo, h, 3, 0, 10);
	s.flags = DRM_TTMSIM_SUBMIT_FENCE_FD_IN;
	s.fence_fd = 0;
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_SUBMIT, &s), -EINVAL);
	assert_int_equal(s.error_array, DRM_TTMSIM_ARRAY_FENCE_FD);
	close(fd);
	ttm_fence_put(gate);
	fixture_fini(&f);
}

static void test_submit_copy(void **state)
{
	struct drm_ttmsim_submit_bo bos[3];
	struct drm_ttmsim_submit s = {
		.bos = (uintptr_t)bos, .bo_count = 2,
		.op = DRM_TTMSIM_OP_COPY, .duration_ns = 10000,
	};
	struct fixture f;
	uint32_t src, dst, small;

	(void)state;
	fixture_init(&f);
	src = gem_create(f.render, 8192, DRM_TTMSIM_GEM_DOMAIN_VRAM);
	dst = gem_create(f.render, 8192, DRM_TTMSIM_GEM_DOMAIN_GTT);
	small = gem_create(f.render, 4096, DRM_TTMSIM_GEM_DOMAIN_GTT);
	fill_words(f.render, src, 0xabcd);
	bos[0] = (struct drm_ttmsim_submit_bo){ src, DRM_TTMSIM_BO_READ };
	bos[1] = (struct drm_ttmsim_submit_bo){ dst, DRM_TTMSIM_BO_WRITE };
	bos[2] = (struct drm_ttmsim_submit_bo){ small, DRM_TTMSIM_BO_WRITE };
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_SUBMIT, &s), 0);
	assert_int_equal(gem_wait(f.render, dst, DRM_TTMSIM_WAIT_READ,
				  DRM_TTMSIM_TIMEOUT_INFINITE), 0);
	expect_words(f.render, dst, 0xabcd);
	expect_words(f.render, src, 0xabcd);

	/* A source that is written; sizes that differ; three buffers. */
	bos[0].flags |= DRM_TTMSIM_BO_WRITE;
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_SUBMIT, &s), -EINVAL);
	assert_int_equal(s.error_array, DRM_TTMSIM_ARRAY_BOS);
	assert_int_equal(s.error_index, 0);
	bos[0].flags = DRM_TTMSIM_BO_READ;
	bos[1].handle = small;
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_SUBMIT, &s), -EINVAL);
	assert_int_equal(s.error_array, DRM_TTMSIM_ARRAY_BOS);
	assert_int_equal(s.error_index, 1);
	bos[1].handle = dst;
	s.bo_count = 3;
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_SUBMIT, &s), -EINVAL);
	/* Nothing ran. */
	assert_int_equal(gem_wait(f.render, small, DRM_TTMSIM_WAIT_WRITE, 0),
			 0);
	fixture_fini(&f);
}

static int try_submit(struct fixture *f, struct drm_ttmsim_submit *s)
{
	s->error_array = 99;
	s->error_index = 99;
	return ioc(f->render, DRM_IOCTL_TTMSIM_SUBMIT, s);
}

static void expect_entry(const struct drm_ttmsim_submit *s, uint32_t array,
			 uint32_t index)
{
	assert_int_equal(s->error_array, array);
	assert_int_equal(s->error_index, index);
}

static void test_submit_errors(void **state)
{
	struct drm_ttmsim_submit_bo bos[2];
	struct drm_ttmsim_syncobj sync[2];
	struct drm_ttmsim_submit s;
	struct fixture f;
	uint32_t h, h2, sobj;
	void *noaccess;

	(void)state;
	fixture_init(&f);
	h = gem_create(f.render, 4096, DRM_TTMSIM_GEM_DOMAIN_VRAM);
	h2 = gem_create(f.render, 4096, DRM_TTMSIM_GEM_DOMAIN_VRAM);
	assert_int_equal(ttm_client_syncobj_create(ttm_drm_file_client(
		f.render), TTM_SYNCOBJ_CREATE_SIGNALED, &sobj), 0);
	bos[1] = (struct drm_ttmsim_submit_bo){ h2, DRM_TTMSIM_BO_READ };
	memset(sync, 0, sizeof(sync));
	sync[0].handle = sync[1].handle = sobj;

#define FRESH() (s = add_job(&bos[0], h, 1, 0, 10))
	/* Reserved flags, pad, counts, op, value, engine. */
	FRESH();
	s.flags = 1u << 2;
	assert_int_equal(try_submit(&f, &s), -EINVAL);
	FRESH();
	s.pad = 1;
	assert_int_equal(try_submit(&f, &s), -EINVAL);
	FRESH();
	s.bo_count = 0;
	assert_int_equal(try_submit(&f, &s), -EINVAL);
	FRESH();
	s.bo_count = DRM_TTMSIM_MAX_BOS + 1;
	assert_int_equal(try_submit(&f, &s), -EINVAL);
	FRESH();
	s.in_syncobj_count = DRM_TTMSIM_MAX_SYNCOBJS + 1;
	s.in_syncobjs = (uintptr_t)sync;
	assert_int_equal(try_submit(&f, &s), -EINVAL);
	FRESH();
	s.op = DRM_TTMSIM_OP_COPY + 1;
	assert_int_equal(try_submit(&f, &s), -EINVAL);
	FRESH();
	s.op = DRM_TTMSIM_OP_NOP;
	assert_int_equal(try_submit(&f, &s), -EINVAL);   /* value 1 */
	FRESH();
	s.engine = ENGINES;
	assert_int_equal(try_submit(&f, &s), -EINVAL);
	expect_entry(&s, DRM_TTMSIM_ARRAY_NONE, 0);

	/* Bad pointers: NULL with a count, and memory nobody may read. */
	noaccess = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	assert_true(noaccess != MAP_FAILED);
	FRESH();
	s.bos = 0;
	assert_int_equal(try_submit(&f, &s), -EFAULT);
	expect_entry(&s, DRM_TTMSIM_ARRAY_BOS, 0);
	FRESH();
	s.bos = (uintptr_t)noaccess;
	assert_int_equal(try_submit(&f, &s), -EFAULT);
	FRESH();
	s.in_syncobj_count = 1;
	assert_int_equal(try_submit(&f, &s), -EFAULT);
	expect_entry(&s, DRM_TTMSIM_ARRAY_IN_SYNCOBJS, 0);
	FRESH();
	s.out_syncobjs = (uintptr_t)noaccess;
	s.out_syncobj_count = 2;
	assert_int_equal(try_submit(&f, &s), -EFAULT);
	expect_entry(&s, DRM_TTMSIM_ARRAY_OUT_SYNCOBJS, 0);
	munmap(noaccess, 4096);
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_SUBMIT, NULL),
			 -EFAULT);

	/* Entries: bad flags, bad handles, duplicates, syncobj flags. */
	FRESH();
	s.bo_count = 2;
	bos[1].flags = 1u << 2 | DRM_TTMSIM_BO_READ;
	assert_int_equal(try_submit(&f, &s), -EINVAL);
	expect_entry(&s, DRM_TTMSIM_ARRAY_BOS, 1);
	bos[1].flags = 0;
	assert_int_equal(try_submit(&f, &s), -EINVAL);
	expect_entry(&s, DRM_TTMSIM_ARRAY_BOS, 1);
	bos[1] = (struct drm_ttmsim_submit_bo){ h2 + 7, DRM_TTMSIM_BO_READ };
	assert_int_equal(try_submit(&f, &s), -ENOENT);
	expect_entry(&s, DRM_TTMSIM_ARRAY_BOS, 1);
	bos[1].handle = h;
	assert_int_equal(try_submit(&f, &s), -EINVAL);
	expect_entry(&s, DRM_TTMSIM_ARRAY_BOS, 1);
	bos[1].handle = h2;
	s.in_syncobjs = (uintptr_t)sync;
	s.in_syncobj_count = 2;
	sync[1].flags = 1;
	assert_int_equal(try_submit(&f, &s), -EINVAL);
	expect_entry(&s, DRM_TTMSIM_ARRAY_IN_SYNCOBJS, 1);
	sync[1].flags = 0;
	sync[1].handle = sobj + 1;
	assert_int_equal(try_submit(&f, &s), -ENOENT);
	expect_entry(&s, DRM_TTMSIM_ARRAY_IN_SYNCOBJS, 1);
	s.in_syncobj_count = 1;
	s.out_syncobjs = (uintptr_t)sync;
	s.out_syncobj_count = 2;
	assert_int_equal(try_submit(&f, &s), -ENOENT);
	expect_entry(&s, DRM_TTMSIM_ARRAY_OUT_SYNCOBJS, 1);
	/* And it all works once right. */
	sync[1].handle = sobj;
	sync[1].point = 5;
	assert_int_equal(try_submit(&f, &s), 0);
	expect_entry(&s, DRM_TTMSIM_ARRAY_NONE, 0);
	assert_int_equal(gem_wait(f.render, h, DRM_TTMSIM_WAIT_READ,
				  DRM_TTMSIM_TIMEOUT_INFINITE), 0);
	expect_words(f.render, h, 1);
	/* Nothing the failures did ran or stayed: h got one add. */
	expect_words(f.render, h2, 0);
#undef FRESH
	fixture_fini(&f);
}

/* ---- struct sizes ------------------------------------------------------- */

/*
 * The core's size rules on the driver's structs: an older, shorter
 * struct is zero-extended, a newer, longer one must have zeros beyond.
 */
static void test_struct_sizes(void **state)
{
	struct {
		struct drm_ttmsim_gem_wait w;
		uint64_t extra;
	} longer;
	struct drm_ttmsim_submit_bo bo;
	struct drm_ttmsim_submit s;
	struct fixture f;
	uint32_t h;

	(void)state;
	fixture_init(&f);
	h = gem_create(f.render, 4096, DRM_TTMSIM_GEM_DOMAIN_VRAM);
	s = add_job(&bo, h, 1, 0, 1000);
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_SUBMIT, &s), 0);

	/* handle and flags only: timeout_ns reads as 0, a test. */
	longer.w = (struct drm_ttmsim_gem_wait){
		.handle = h, .flags = DRM_TTMSIM_WAIT_READ,
		.timeout_ns = DRM_TTMSIM_TIMEOUT_INFINITE,
	};
	assert_int_equal(ioc(f.render, resized(DRM_IOCTL_TTMSIM_GEM_WAIT, 8),
			     &longer.w), -ETIME);
	assert_int_equal(now_us(&f), 0);
	/* Longer, zeros beyond: as ours; anything else beyond: -EINVAL. */
	longer.extra = 0;
	assert_int_equal(ioc(f.render,
			     resized(DRM_IOCTL_TTMSIM_GEM_WAIT, sizeof(longer)),
			     &longer), 0);
	assert_int_equal(now_us(&f), 1000);
	longer.extra = 1;
	assert_int_equal(ioc(f.render,
			     resized(DRM_IOCTL_TTMSIM_GEM_WAIT, sizeof(longer)),
			     &longer), -EINVAL);
	/* A newer SUBMIT with a field we do not know set: refused, unrun. */
	{
		struct {
			struct drm_ttmsim_submit s;
			uint64_t extension;
		} newer = { .s = add_job(&bo, h, 1, 0, 10), .extension = 1 };

		assert_int_equal(ioc(f.render,
				     resized(DRM_IOCTL_TTMSIM_SUBMIT,
					     sizeof(newer)), &newer), -EINVAL);
		newer.extension = 0;
		assert_int_equal(ioc(f.render,
				     resized(DRM_IOCTL_TTMSIM_SUBMIT,
					     sizeof(newer)), &newer), 0);
	}
	/* GET_PARAM without room for the value: as much as fits comes back. */
	{
		struct drm_ttmsim_get_param p = {
			.param = DRM_TTMSIM_PARAM_VRAM_SIZE, .value = 7,
		};

		assert_int_equal(ioc(f.render,
				     resized(DRM_IOCTL_TTMSIM_GET_PARAM, 8), &p),
				 0);
		assert_int_equal(p.value, 7);
	}
	assert_int_equal(gem_wait(f.render, h, DRM_TTMSIM_WAIT_READ,
				  DRM_TTMSIM_TIMEOUT_INFINITE), 0);
	expect_words(f.render, h, 2);
	fixture_fini(&f);
}

/* ---- SET_PRIORITY ------------------------------------------------------- */

static int set_priority(struct ttm_drm_file *file, uint32_t priority,
			uint32_t pad)
{
	struct drm_ttmsim_set_priority p = { priority, pad };

	return ioc(file, DRM_IOCTL_TTMSIM_SET_PRIORITY, &p);
}

static void test_set_priority(void **state)
{
	struct fixture f;

	(void)state;
	fixture_init(&f);
	/* Any file may lower its priority or go back to normal. */
	assert_int_equal(set_priority(f.render, DRM_TTMSIM_PRIORITY_LOW, 0),
			 0);
	assert_int_equal(set_priority(f.render, DRM_TTMSIM_PRIORITY_NORMAL,
				      0), 0);
	/* Only the master (the first primary file) may go above. */
	assert_int_equal(set_priority(f.render, DRM_TTMSIM_PRIORITY_HIGH, 0),
			 -EACCES);
	assert_int_equal(set_priority(f.render, DRM_TTMSIM_PRIORITY_KERNEL,
				      0), -EACCES);
	assert_int_equal(set_priority(f.primary, DRM_TTMSIM_PRIORITY_HIGH,
				      0), 0);
	assert_int_equal(set_priority(f.primary, DRM_TTMSIM_PRIORITY_KERNEL,
				      0), 0);
	assert_int_equal(set_priority(f.primary, DRM_TTMSIM_PRIORITY_LOW, 0),
			 0);
	{
		struct ttm_drm_file *second;

		/* A primary file that is not the master is refused too. */
		assert_int_equal(ttm_drm_open(f.ddev, TTM_DRM_NODE_PRIMARY,
					      &second), 0);
		assert_false(ttm_drm_file_is_master(second));
		assert_int_equal(set_priority(second,
					      DRM_TTMSIM_PRIORITY_HIGH, 0),
				 -EACCES);
		assert_int_equal(set_priority(second,
					      DRM_TTMSIM_PRIORITY_LOW, 0), 0);
		ttm_drm_close(second);
	}
	assert_int_equal(set_priority(f.render,
				      DRM_TTMSIM_PRIORITY_KERNEL + 1, 0),
			 -EINVAL);
	assert_int_equal(set_priority(f.primary, DRM_TTMSIM_PRIORITY_LOW, 1),
			 -EINVAL);
	assert_int_equal(ioc(f.render, DRM_IOCTL_TTMSIM_SET_PRIORITY, NULL),
			 -EFAULT);
	fixture_fini(&f);
}

/*
 * Which of two jobs, a render file's at NORMAL and the primary file's at
 * @priority, gets engine 0 first once it is free. A job straight on the
 * GPU holds the engine until the test opens its gate; 64 NOPs of the
 * render file fill the ring's credits behind it (the backend's default
 * limit), so that the two jobs wait in their entities, where the
 * scheduler picks by priority. Return: true if the primary's ran first.
 */
static bool primary_first(struct fixture *f, uint32_t priority)
{
	struct drm_ttmsim_submit_bo b;
	struct drm_ttmsim_submit s;
	struct ttm_fence *gate, *blocker;
	struct ttm_gpu_dep dep;
	struct ttm_gpu_job job = { .engine = 0, .op = TTM_GPU_OP_NOP,
				   .deps = &dep, .n_deps = 1 };
	uint32_t nop, lo, hi;
	bool lo_done, hi_done;
	int i;

	nop = gem_create(f->render, 4096, DRM_TTMSIM_GEM_DOMAIN_VRAM);
	lo = gem_create(f->render, 4096, DRM_TTMSIM_GEM_DOMAIN_VRAM);
	hi = gem_create(f->primary, 4096, DRM_TTMSIM_GEM_DOMAIN_VRAM);
	assert_int_equal(set_priority(f->primary, priority, 0), 0);
	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1,
					  &gate), 0);
	dep = (struct ttm_gpu_dep){ .fence = gate };
	assert_int_equal(ttm_gpu_submit(f->gpu, &job, &blocker), 0);
	for (i = 0; i < 64; i++) {
		s = add_job(&b, nop, 0, 0, 1);
		b.flags = DRM_TTMSIM_BO_READ;
		s.op = DRM_TTMSIM_OP_NOP;
		assert_int_equal(ioc(f->render, DRM_IOCTL_TTMSIM_SUBMIT, &s),
				 0);
	}
	/* The scheduler fills the ring at this event time. */
	assert_int_equal(ttm_gpu_advance(f->gpu, 1), 0);
	s = add_job(&b, lo, 1, 0, 100);
	assert_int_equal(ioc(f->render, DRM_IOCTL_TTMSIM_SUBMIT, &s), 0);
	s = add_job(&b, hi, 1, 0, 100);
	assert_int_equal(ioc(f->primary, DRM_IOCTL_TTMSIM_SUBMIT, &s), 0);
	ttm_fence_signal(gate, 0);
	/* The NOPs' 64 us, then one of the two jobs, not both. */
	assert_int_equal(ttm_gpu_advance(f->gpu, 64 + 100 + 10), 0);
	lo_done = gem_wait(f->render, lo, DRM_TTMSIM_WAIT_READ, 0) == 0;
	hi_done = gem_wait(f->primary, hi, DRM_TTMSIM_WAIT_READ, 0) == 0;
	assert_true(lo_done != hi_done);
	assert_int_equal(ttm_gpu_advance(f->gpu, 1000), 0);
	assert_int_equal(ttm_fence_wait(blocker, false, 0), 0);
	ttm_fence_put(blocker);
	ttm_fence_put(gate);
	return hi_done;
}

/*
 * The priority orders the files' jobs on an engine: HIGH overtakes the
 * render file's NORMAL job, LOW lets it go first (with priorities
 * ignored, one of the two would fail: the setup is the same).
 */
static void test_priority_order(void **state)
{
	struct fixture f;

	(void)state;
	fixture_init(&f);
	assert_true(primary_first(&f, DRM_TTMSIM_PRIORITY_HIGH));
	assert_false(primary_first(&f, DRM_TTMSIM_PRIORITY_LOW));
	fixture_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_get_param),
		cmocka_unit_test(test_gem_create),
		cmocka_unit_test(test_gem_mmap_offset),
		cmocka_unit_test(test_gem_wait_errors),
		cmocka_unit_test(test_gem_wait_virtual),
		cmocka_unit_test(test_submit_timeline),
		cmocka_unit_test(test_submit_fence_fd_in),
		cmocka_unit_test(test_submit_copy),
		cmocka_unit_test(test_submit_errors),
		cmocka_unit_test(test_struct_sizes),
		cmocka_unit_test(test_set_priority),
		cmocka_unit_test(test_priority_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
