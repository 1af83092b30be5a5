// SPDX-License-Identifier: MIT
/*
 * Devices and buffer objects (ttmsim/bo.h): argument checks, places
 * (struct ttm_place) and the page options they need, contents,
 * placement without eviction and its accounting, reservation semantics
 * with and without tickets, pinning, LRU order, delayed destroy, a device
 * destroyed under a live buffer (-EBUSY), and interrupt tokens waking
 * each kind of interruptible wait.
 *
 * Every test checks the device's accounting invariant after each
 * operation. Threads meet through actors (lib/helpers.h): a step that must
 * block is shown to block by the lock's waiter count, never by sleeping.
 */
#include <drm_fourcc.h>

#include "lib/bo_helpers.h"

#include "bo/bo.h"  /* to break the invariant on purpose */
#include "ttmsim/bo.h"
#include "ttmsim/fence.h"
#include "util/compiler.h"

/* A device of 16 KiB VRAM and 16 KiB GTT, of the class in @state. */
static struct ttm_device *small_device(bool wound_wait)
{
	struct ttm_device_options opts = {
		.vram_size = 16 * KiB,
		.gtt_size = 16 * KiB,
		.wound_wait = wound_wait,
	};
	struct ttm_device *dev;

	assert_int_equal(ttm_device_create(&opts, &dev), 0);
	assert_dev_ok(dev);
	return dev;
}

static bool wound_wait_of(void **state)
{
	return *state && *(const bool *)*state;
}

static void put_bo(struct ttm_device *dev, struct ttm_bo *bo)
{
	ttm_bo_put(bo);
	assert_dev_ok(dev);
}

static void get_stats(struct ttm_device *dev, struct ttm_device_stats *s)
{
	memset(s, 0xa5, sizeof(*s));
	ttm_device_get_stats(dev, s);
}

/* ---- creation ----------------------------------------------------------- */

static void test_defaults(void **state)
{
	struct ttm_device_stats s;
	struct ttm_device *dev;

	(void)state;
	assert_int_equal(ttm_device_create(NULL, &dev), 0);
	get_stats(dev, &s);
	assert_int_equal(s.domain[TTM_DOMAIN_VRAM].capacity, 256u << 20);
	assert_int_equal(s.domain[TTM_DOMAIN_GTT].capacity, 1u << 30);
	assert_true(s.domain[TTM_DOMAIN_SYSTEM].capacity == UINT64_MAX);
	for (int d = 0; d < TTM_DOMAIN_COUNT; d++) {
		assert_int_equal(s.domain[d].used, 0);
		assert_int_equal(s.domain[d].buffers, 0);
	}
	assert_int_equal(s.buffers, 0);
	assert_int_equal(s.zombies, 0);
	assert_int_equal(s.evictions, 0);
	assert_int_equal(s.moves, 0);
	assert_int_equal(s.bytes_moved, 0);
	assert_int_equal(s.enospc, 0);
	/* Wait-Die by default, like the kernel's reservation class. */
	assert_int_equal(ttm_device_ww_class(dev)->is_wait_die, 1);
	assert_dev_ok(dev);
	assert_int_equal(ttm_device_destroy(dev), 0);
	assert_int_equal(ttm_device_destroy(NULL), 0);

	dev = small_device(true);
	assert_int_equal(ttm_device_ww_class(dev)->is_wait_die, 0);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

static void test_device_gpu(void **state)
{
	struct ttm_device_options opts = { 0 };
	struct ttm_device *dev;
	struct ttm_gpu *gpu;

	(void)state;
	assert_int_equal(ttm_gpu_create(2, NULL, &gpu), 0);
	opts.gpu = gpu;
	opts.copy_engine = 2;
	assert_int_equal(ttm_device_create(&opts, &dev), -EINVAL);
	opts.copy_engine = 1;
	assert_int_equal(ttm_device_create(&opts, &dev), 0);
	assert_int_equal(ttm_device_destroy(dev), 0);
	ttm_gpu_destroy(gpu);
}

static void test_create_args(void **state)
{
	struct ttm_device *dev = small_device(false);
	struct ttm_placement bad = { 0 };
	struct ttm_device_stats s;
	struct ttm_bo *bo = NULL;

	(void)state;
	assert_int_equal(ttm_bo_create(dev, 0, &gtt_only, 0, &bo), -EINVAL);
	assert_int_equal(ttm_bo_create(dev, 2, &gtt_only, 0, &bo), -EINVAL);
	assert_int_equal(ttm_bo_create(dev, 4 * KiB + 1, &gtt_only, 0, &bo),
			 -EINVAL);
	assert_int_equal(ttm_bo_create(dev, 4 * KiB + 2, &gtt_only, 0, &bo),
			 -EINVAL);
	assert_int_equal(ttm_bo_create(dev, TTM_BO_MAX_SIZE + 4, &system_only,
				       0, &bo), -EINVAL);
	/* 1 GiB passes the checks: only room is missing. */
	assert_int_equal(ttm_bo_create(dev, TTM_BO_MAX_SIZE, &vram_only, 0,
				       &bo), -ENOSPC);
	assert_int_equal(ttm_bo_create(dev, 4, &gtt_only, 2, &bo), -EINVAL);
	assert_int_equal(ttm_bo_create(dev, 4, &gtt_only, 1u << 31, &bo),
			 -EINVAL);
	assert_int_equal(ttm_bo_create(dev, 4, NULL, 0, &bo), -EINVAL);
	assert_int_equal(ttm_bo_create(dev, 4, &bad, 0, &bo), -EINVAL);
	bad.count = TTM_PLACEMENT_MAX + 1;
	assert_int_equal(ttm_bo_create(dev, 4, &bad, 0, &bo), -EINVAL);
	bad = (struct ttm_placement){ 2, { TTM_PLACE_INIT(TTM_DOMAIN_GTT),
					   TTM_PLACE_INIT(TTM_DOMAIN_GTT) } };
	assert_int_equal(ttm_bo_create(dev, 4, &bad, 0, &bo), -EINVAL);
	bad = (struct ttm_placement){ 1, { TTM_PLACE_INIT(TTM_DOMAIN_COUNT) } };
	assert_int_equal(ttm_bo_create(dev, 4, &bad, 0, &bo), -EINVAL);
	assert_null(bo);

	get_stats(dev, &s);
	assert_int_equal(s.buffers, 0);
	assert_int_equal(s.enospc, 1);
	assert_dev_ok(dev);

	bo = create_bo(dev, 4, &gtt_only);
	assert_int_equal(ttm_bo_size(bo), 4);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_GTT);
	put_bo(dev, bo);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* ---- struct ttm_place and the device options it needs -------------- */

static int try_create(struct ttm_device *dev, uint64_t size,
		      const struct ttm_placement *pl)
{
	struct ttm_bo *bo = NULL;
	int ret = ttm_bo_create(dev, size, pl, 0, &bo);

	if (ret == 0)
		put_bo(dev, bo);
	else
		assert_null(bo);
	assert_dev_ok(dev);
	return ret;
}

/* Creation and validation agree on which placements are valid. */
static int try_both(struct ttm_device *dev, struct ttm_bo *bo,
		    const struct ttm_placement *pl)
{
	struct ttm_operation_ctx ctx = { 0 };
	int created = try_create(dev, 4, pl), validated;

	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	validated = ttm_bo_validate(bo, pl, &ctx);
	ttm_bo_unreserve(bo);
	assert_dev_ok(dev);
	assert_int_equal(created, validated);
	return created;
}

#define PLACE(d, f, l, fl) \
	{ .domain = TTM_DOMAIN_##d, .fpfn = (f), .lpfn = (l), .flags = (fl) }
#define PL1(a) ((struct ttm_placement){ 1, { a } })
#define PL2(a, b) ((struct ttm_placement){ 2, { a, b } })

/*
 * small_device(): 16 KiB of VRAM and GTT, 4 pages each; 4 KiB visible
 * VRAM, a quarter.
 */
static void test_place_valid(void **state)
{
	struct ttm_device *dev = small_device(false);
	struct ttm_placement pl = {
		3, { PLACE(VRAM, 0, 0, TTM_PLACE_CPU_VISIBLE),
		     PLACE(VRAM, 0, 0, 0), PLACE(GTT, 0, 0, 0) },
	};
	struct ttm_placement full = { TTM_PLACEMENT_MAX, { { 0 } } };
	struct ttm_bo *bo;
	unsigned int i;

	(void)state;
	bo = create_bo(dev, 4, &system_only);
	/* One domain twice: visible VRAM, then anywhere in VRAM. */
	assert_int_equal(try_both(dev, bo, &pl), 0);
	assert_int_equal(try_both(dev, bo, &PL2(PLACE(VRAM, 0, 2, 0),
						 PLACE(VRAM, 2, 0, 0))), 0);
	/* The same range with other flags is another place. */
	assert_int_equal(try_both(dev, bo, &PL2(PLACE(VRAM, 0, 2, 0),
					PLACE(VRAM, 0, 2, TTM_PLACE_TOPDOWN))),
			 0);
	/* As many places as fit, all different. */
	for (i = 0; i < TTM_PLACEMENT_MAX; i++)
		full.places[i] = (struct ttm_place)PLACE(GTT, i % 4, 0,
				i / 4 ? TTM_PLACE_CONTIGUOUS : 0);
	assert_int_equal(try_both(dev, bo, &full), 0);

	/* The same place twice is still a caller bug. */
	assert_int_equal(try_both(dev, bo, &PL2(PLACE(VRAM, 1, 3, 0),
						 PLACE(VRAM, 1, 3, 0))),
			 -EINVAL);
	assert_int_equal(try_both(dev, bo, &PL2(PLACE(VRAM, 0, 0, 0),
						 PLACE(VRAM, 0, 0, 0))),
			 -EINVAL);
	/* Unknown flags; CPU_VISIBLE outside VRAM. */
	assert_int_equal(try_both(dev, bo, &PL1(PLACE(VRAM, 0, 0, 1u << 3))),
			 -EINVAL);
	assert_int_equal(try_both(dev, bo, &PL1(PLACE(VRAM, 0, 0,
						       1u << 31))), -EINVAL);
	assert_int_equal(try_both(dev, bo, &PL1(PLACE(GTT, 0, 0,
					TTM_PLACE_CPU_VISIBLE))), -EINVAL);
	assert_int_equal(try_both(dev, bo, &PL1(PLACE(SYSTEM, 0, 0,
					TTM_PLACE_CPU_VISIBLE))), -EINVAL);
	/* An empty or reversed range. */
	assert_int_equal(try_both(dev, bo, &PL1(PLACE(VRAM, 2, 2, 0))),
			 -EINVAL);
	assert_int_equal(try_both(dev, bo, &PL1(PLACE(GTT, 3, 1, 0))),
			 -EINVAL);
	/* A range starting past the domain; one ending past it stops. */
	assert_int_equal(try_both(dev, bo, &PL1(PLACE(VRAM, 4, 0, 0))),
			 -EINVAL);
	assert_int_equal(try_both(dev, bo, &PL1(PLACE(GTT, 4, 8, 0))),
			 -EINVAL);
	assert_int_equal(try_both(dev, bo, &PL1(PLACE(VRAM, 3, 0, 0))), 0);
	assert_int_equal(try_both(dev, bo, &PL1(PLACE(VRAM, 3, 100, 0))), 0);
	/* SYSTEM has no addresses; its flags other than visible do no harm. */
	assert_int_equal(try_both(dev, bo, &PL1(PLACE(SYSTEM, 1, 0, 0))),
			 -EINVAL);
	assert_int_equal(try_both(dev, bo, &PL1(PLACE(SYSTEM, 0, 1, 0))),
			 -EINVAL);
	assert_int_equal(try_both(dev, bo, &PL1(PLACE(SYSTEM, 0, 0,
					TTM_PLACE_CONTIGUOUS))), 0);
	/* A bad place anywhere in the list spoils it. */
	pl.places[2].flags = TTM_PLACE_CPU_VISIBLE;
	assert_int_equal(try_both(dev, bo, &pl), -EINVAL);
	put_bo(dev, bo);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* A range smaller than a buffer can never hold it: -ENOSPC at once. */
static void test_place_range_size(void **state)
{
	struct ttm_device *dev = small_device(false);
	struct ttm_placement vis_gtt = PL2(PLACE(VRAM, 0, 0,
						 TTM_PLACE_CPU_VISIBLE),
					   PLACE(GTT, 0, 0, 0));
	struct ttm_device_stats s;
	struct ttm_bo *bo;

	(void)state;
	assert_int_equal(try_create(dev, 8 * KiB, &PL1(PLACE(VRAM, 0, 1, 0))),
			 -ENOSPC);
	assert_int_equal(try_create(dev, 8 * KiB, &PL1(PLACE(VRAM, 3, 0, 0))),
			 -ENOSPC);
	assert_int_equal(try_create(dev, 8 * KiB, &PL1(PLACE(VRAM, 0, 0,
					TTM_PLACE_CPU_VISIBLE))), -ENOSPC);
	get_stats(dev, &s);
	assert_int_equal(s.enospc, 3);
	/* Exactly the range's size fits. */
	assert_int_equal(try_create(dev, 8 * KiB, &PL1(PLACE(VRAM, 2, 0, 0))),
			 0);
	assert_int_equal(try_create(dev, 4 * KiB, &PL1(PLACE(VRAM, 0, 0,
					TTM_PLACE_CPU_VISIBLE))), 0);
	/* Too large for visible VRAM: the next place takes it. */
	bo = create_bo(dev, 8 * KiB, &vis_gtt);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_GTT);
	put_bo(dev, bo);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

static int create_opts(uint64_t vram, uint64_t page, uint64_t visible,
		       struct ttm_device **ret_dev)
{
	struct ttm_device_options opts = {
		.vram_size = vram,
		.page_size = page,
		.visible_vram = visible,
	};

	*ret_dev = NULL;
	return ttm_device_create(&opts, ret_dev);
}

static void test_device_page_options(void **state)
{
	static const uint64_t bad_pages[] = { 1, 2, 3, 6, 4097, 3 * 4096 };
	struct ttm_device *dev;
	unsigned int i;

	(void)state;
	/* Defaults: the kernel's page, a quarter of VRAM visible. */
	assert_int_equal(ttm_device_create(NULL, &dev), 0);
	assert_int_equal(ttm_device_page_size(dev), 4096);
	assert_int_equal(ttm_device_visible_vram(dev),
			 TTM_DEFAULT_VRAM_SIZE / 4);
	assert_int_equal(ttm_device_destroy(dev), 0);
	/* A quarter rounds down to whole pages. */
	assert_int_equal(create_opts(20 * KiB, 0, 0, &dev), 0);
	assert_int_equal(ttm_device_visible_vram(dev), 4 * KiB);
	assert_int_equal(ttm_device_destroy(dev), 0);
	assert_int_equal(create_opts(64 * KiB, 16 * KiB, 0, &dev), 0);
	assert_int_equal(ttm_device_page_size(dev), 16 * KiB);
	assert_int_equal(ttm_device_visible_vram(dev), 16 * KiB);
	assert_int_equal(ttm_device_destroy(dev), 0);

	for (i = 0; i < ARRAY_SIZE(bad_pages); i++) {
		assert_int_equal(create_opts(0, bad_pages[i], 0, &dev),
				 -EINVAL);
		assert_null(dev);
	}
	assert_int_equal(create_opts(0, 4, 0, &dev), 0);
	assert_int_equal(ttm_device_page_size(dev), 4);
	assert_int_equal(ttm_device_destroy(dev), 0);
	/* More pages than 32-bit page numbers reach. */
	assert_int_equal(create_opts(16ull << 30, 4, 0, &dev), -EINVAL);
	assert_int_equal(create_opts(16ull << 30, 8, 0, &dev), 0);
	assert_int_equal(ttm_device_destroy(dev), 0);

	/* Visible VRAM: whole pages, at most all of VRAM. */
	assert_int_equal(create_opts(64 * KiB, 0, 64 * KiB + 4 * KiB, &dev),
			 -EINVAL);
	assert_int_equal(create_opts(64 * KiB, 0, 6 * KiB, &dev), -EINVAL);
	assert_int_equal(create_opts(64 * KiB, 0, 64 * KiB, &dev), 0);
	assert_int_equal(ttm_device_visible_vram(dev), 64 * KiB);
	assert_int_equal(ttm_device_destroy(dev), 0);
	assert_int_equal(create_opts(64 * KiB, 64, 192, &dev), 0);
	assert_int_equal(ttm_device_visible_vram(dev), 192);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

static const struct {
	uint32_t fourcc;
	unsigned int cpp;
} fourccs[] = {
	{ DRM_FORMAT_XRGB8888, 4 }, { DRM_FORMAT_ARGB8888, 4 },
	{ DRM_FORMAT_XBGR8888, 4 }, { DRM_FORMAT_ABGR8888, 4 },
	{ DRM_FORMAT_RGBX8888, 4 }, { DRM_FORMAT_RGBA8888, 4 },
	{ DRM_FORMAT_BGRX8888, 4 }, { DRM_FORMAT_BGRA8888, 4 },
	{ DRM_FORMAT_XRGB2101010, 4 }, { DRM_FORMAT_ARGB2101010, 4 },
	{ DRM_FORMAT_XBGR2101010, 4 }, { DRM_FORMAT_ABGR2101010, 4 },
	{ DRM_FORMAT_RG1616, 4 }, { DRM_FORMAT_GR1616, 4 },
	{ DRM_FORMAT_RGB565, 2 }, { DRM_FORMAT_BGR565, 2 },
	{ DRM_FORMAT_XRGB1555, 2 }, { DRM_FORMAT_ARGB1555, 2 },
	{ DRM_FORMAT_RG88, 2 }, { DRM_FORMAT_GR88, 2 },
	{ DRM_FORMAT_R16, 2 }, { DRM_FORMAT_R8, 1 },
};

static void test_create_fourcc(void **state)
{
	struct ttm_device *dev = small_device(false);
	struct ttm_bo *bo = NULL;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(fourccs); i++) {
		/* 4 pixels: a multiple of 4 bytes whatever the format. */
		assert_int_equal(ttm_bo_create_fourcc(dev, 2, 2,
				 fourccs[i].fourcc, &gtt_only, 0, &bo), 0);
		assert_int_equal(ttm_bo_size(bo), 4 * fourccs[i].cpp);
		put_bo(dev, bo);
	}
	bo = NULL;
	assert_int_equal(ttm_bo_create_fourcc(dev, 16, 8, DRM_FORMAT_XRGB8888,
					      &vram_gtt, 0, &bo), 0);
	assert_int_equal(ttm_bo_size(bo), 16 * 8 * 4);
	put_bo(dev, bo);
	bo = NULL;
	/* Sizes that are not a multiple of 4. */
	assert_int_equal(ttm_bo_create_fourcc(dev, 3, 1, DRM_FORMAT_RGB565,
					      &gtt_only, 0, &bo), -EINVAL);
	assert_int_equal(ttm_bo_create_fourcc(dev, 3, 3, DRM_FORMAT_R8,
					      &gtt_only, 0, &bo), -EINVAL);
	/* Multi-planar, unknown, empty, too big. */
	assert_int_equal(ttm_bo_create_fourcc(dev, 4, 4, DRM_FORMAT_NV12,
					      &gtt_only, 0, &bo), -EINVAL);
	assert_int_equal(ttm_bo_create_fourcc(dev, 4, 4,
					      fourcc_code('Z', 'Z', 'Z', 'Z'),
					      &gtt_only, 0, &bo), -EINVAL);
	assert_int_equal(ttm_bo_create_fourcc(dev, 0, 4, DRM_FORMAT_R8,
					      &gtt_only, 0, &bo), -EINVAL);
	assert_int_equal(ttm_bo_create_fourcc(dev, 4, 0, DRM_FORMAT_R8,
					      &gtt_only, 0, &bo), -EINVAL);
	assert_int_equal(ttm_bo_create_fourcc(dev, 32768, 8193,
					      DRM_FORMAT_XRGB8888, &system_only,
					      0, &bo), -EINVAL);
	assert_int_equal(ttm_bo_create_fourcc(dev, UINT32_MAX, UINT32_MAX,
					      DRM_FORMAT_XRGB8888, &system_only,
					      0, &bo), -EINVAL);
	assert_null(bo);
	assert_dev_ok(dev);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* ---- contents ----------------------------------------------------------- */

static void test_contents(void **state)
{
	struct ttm_device *dev = small_device(false);
	struct ttm_bo *bo = create_bo(dev, 4 * KiB, &vram_gtt);
	unsigned char buf[4 * KiB], pat[200];
	struct ttm_gpu_range range;
	size_t i;

	(void)state;
	/* Not reserved: refused. */
	assert_int_equal(ttm_bo_read(bo, 0, buf, 4), -EPERM);
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);

	memset(buf, 0xff, sizeof(buf));
	assert_int_equal(ttm_bo_read(bo, 0, buf, sizeof(buf)), 0);
	for (i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0);

	for (i = 0; i < sizeof(pat); i++)
		pat[i] = (unsigned char)(i * 7 + 1);
	assert_int_equal(ttm_bo_write(bo, 101, pat, sizeof(pat)), 0);
	assert_int_equal(ttm_bo_read(bo, 0, buf, sizeof(buf)), 0);
	for (i = 0; i < sizeof(buf); i++) {
		unsigned char want = i >= 101 && i < 101 + sizeof(pat) ?
				     pat[i - 101] : 0;

		assert_int_equal(buf[i], want);
	}

	/* The GPU's view is the same memory. */
	ttm_bo_gpu_range(bo, &range);
	assert_non_null(range.addr);
	assert_int_equal(range.size, 4 * KiB);
	assert_int_equal((uintptr_t)range.addr % 4, 0);
	assert_memory_equal((char *)range.addr + 101, pat, sizeof(pat));

	/* Bounds. */
	assert_int_equal(ttm_bo_read(bo, 4 * KiB, buf, 0), 0);
	assert_int_equal(ttm_bo_read(bo, 4 * KiB - 4, buf, 4), 0);
	assert_int_equal(ttm_bo_read(bo, 4 * KiB - 3, buf, 4), -EINVAL);
	assert_int_equal(ttm_bo_read(bo, 4 * KiB, buf, 1), -EINVAL);
	assert_int_equal(ttm_bo_read(bo, 4 * KiB + 1, buf, 0), -EINVAL);
	assert_int_equal(ttm_bo_read(bo, 0, buf, 4 * KiB + 1), -EINVAL);
	assert_int_equal(ttm_bo_read(bo, UINT64_MAX, buf, 2), -EINVAL);
	assert_int_equal(ttm_bo_write(bo, 4 * KiB - 1, pat, 2), -EINVAL);
	assert_int_equal(ttm_bo_write(bo, 1, pat, SIZE_MAX), -EINVAL);
	ttm_bo_unreserve(bo);
	assert_dev_ok(dev);
	put_bo(dev, bo);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* ---- placement ---------------------------------------------------------- */

static void expect_domain(struct ttm_device *dev, int d, uint64_t used,
			  uint64_t buffers)
{
	struct ttm_device_stats s;

	get_stats(dev, &s);
	assert_int_equal(s.domain[d].used, used);
	assert_int_equal(s.domain[d].buffers, buffers);
}

static void test_placement(void **state)
{
	struct ttm_device *dev = small_device(false);
	struct ttm_bo *bos[8], *sys;
	struct ttm_device_stats s;
	int i;

	(void)state;
	/* VRAM+GTT: four fill VRAM, four more GTT. */
	for (i = 0; i < 8; i++) {
		bos[i] = create_bo(dev, 4 * KiB, &vram_gtt);
		assert_int_equal(ttm_bo_domain(bos[i]),
				 i < 4 ? TTM_DOMAIN_VRAM : TTM_DOMAIN_GTT);
	}
	expect_domain(dev, TTM_DOMAIN_VRAM, 16 * KiB, 4);
	expect_domain(dev, TTM_DOMAIN_GTT, 16 * KiB, 4);

	/* SYSTEM has no limit. */
	sys = create_bo(dev, 64 * KiB, &system_only);
	assert_int_equal(ttm_bo_domain(sys), TTM_DOMAIN_SYSTEM);
	expect_domain(dev, TTM_DOMAIN_SYSTEM, 64 * KiB, 1);

	/* Room freed in VRAM is used again, by VRAM-only too. */
	put_bo(dev, bos[1]);
	expect_domain(dev, TTM_DOMAIN_VRAM, 12 * KiB, 3);
	bos[1] = create_bo(dev, 2 * KiB, &vram_only);
	assert_int_equal(ttm_bo_domain(bos[1]), TTM_DOMAIN_VRAM);
	/* In whole pages of the device's granularity, as the kernel. */
	expect_domain(dev, TTM_DOMAIN_VRAM, 16 * KiB, 4);
	assert_int_equal(ttm_bo_offset(bos[1]), 4 * KiB);
	get_stats(dev, &s);
	assert_int_equal(s.enospc, 0);
	assert_int_equal(s.moves + s.evictions + s.bytes_moved, 0);

	for (i = 0; i < 8; i++)
		put_bo(dev, bos[i]);
	put_bo(dev, sys);
	get_stats(dev, &s);
	assert_int_equal(s.buffers, 0);
	for (i = 0; i < TTM_DOMAIN_COUNT; i++)
		assert_int_equal(s.domain[i].used, 0);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* The check itself must catch a broken invariant. */
/* The last word of @bo, read or written under a short reservation. */
static void last_word(struct ttm_bo *bo, uint32_t *word, bool write)
{
	uint64_t at = ttm_bo_size(bo) - 4;

	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(write ? ttm_bo_write(bo, at, word, 4) :
				 ttm_bo_read(bo, at, word, 4), 0);
	ttm_bo_unreserve(bo);
}

static void expect_word(struct ttm_bo *bo, uint32_t want)
{
	uint32_t got = 0;

	last_word(bo, &got, false);
	assert_int_equal(got, want);
}

/*
 * With no room left, creation evicts like validation, without a ticket:
 * the first allowed domain's LRU head goes (to SYSTEM, GTT being full),
 * contents intact; a reserved buffer is skipped; pinned ones never go.
 */
static void test_create_evicts(void **state)
{
	struct ttm_bo *bos[8], *bo, *bo2, *bo3, *none = NULL;
	struct ttm_device *dev = small_device(false);
	struct ttm_device_stats s;
	uint32_t word;
	int i;

	(void)state;
	for (i = 0; i < 8; i++) {
		bos[i] = create_bo(dev, 4 * KiB, &vram_gtt);
		word = 0x100 + i;
		last_word(bos[i], &word, true);
	}
	bo = create_bo(dev, 4 * KiB, &vram_gtt);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(bos[0]), TTM_DOMAIN_SYSTEM);
	expect_word(bos[0], 0x100);
	get_stats(dev, &s);
	assert_int_equal(s.evictions, 1);
	assert_int_equal(s.bytes_moved, 4 * KiB);

	/* GTT-only: GTT's head goes. */
	bo2 = create_bo(dev, 4 * KiB, &gtt_only);
	assert_int_equal(ttm_bo_domain(bo2), TTM_DOMAIN_GTT);
	assert_int_equal(ttm_bo_domain(bos[4]), TTM_DOMAIN_SYSTEM);
	expect_word(bos[4], 0x104);

	/* VRAM's head is reserved: the next one goes. */
	assert_int_equal(ttm_bo_reserve(bos[1], false, false, NULL), 0);
	bo3 = create_bo(dev, 4 * KiB, &vram_only);
	assert_int_equal(ttm_bo_domain(bos[1]), TTM_DOMAIN_VRAM);
	assert_int_equal(ttm_bo_domain(bos[2]), TTM_DOMAIN_SYSTEM);
	ttm_bo_unreserve(bos[1]);
	expect_word(bos[2], 0x102);
	get_stats(dev, &s);
	assert_int_equal(s.evictions, 3);
	assert_int_equal(s.enospc, 0);

	/* Everything left in VRAM and GTT pinned: nothing can go. */
	pin_bo(bos[1]);
	pin_bo(bos[3]);
	pin_bo(bo);
	pin_bo(bo3);
	for (i = 5; i < 8; i++)
		pin_bo(bos[i]);
	pin_bo(bo2);
	assert_int_equal(ttm_bo_create(dev, 4, &vram_gtt, 0, &none), -ENOSPC);
	assert_null(none);
	assert_dev_ok(dev);
	get_stats(dev, &s);
	assert_int_equal(s.enospc, 1);
	assert_int_equal(s.evictions, 3);
	for (i = 0; i < 8; i++)
		expect_word(bos[i], 0x100 + i);

	for (i = 0; i < 8; i++)
		put_bo(dev, bos[i]);
	put_bo(dev, bo);
	put_bo(dev, bo2);
	put_bo(dev, bo3);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

static void test_check_detects(void **state)
{
	struct ttm_device *dev = small_device(false);
	struct ttm_bo *bo = create_bo(dev, 4 * KiB, &gtt_only);
	char msg[128];

	(void)state;
	pthread_mutex_lock(&dev->lock);
	dev->domain[TTM_DOMAIN_GTT].used += 4;
	pthread_mutex_unlock(&dev->lock);
	assert_int_equal(ttm_device_check(dev, msg, sizeof(msg)), -EUCLEAN);
	assert_non_null(strstr(msg, "domain 1"));
	assert_int_equal(ttm_device_check(dev, NULL, 0), -EUCLEAN);

	pthread_mutex_lock(&dev->lock);
	dev->domain[TTM_DOMAIN_GTT].used -= 4;
	dev->domain[TTM_DOMAIN_GTT].capacity = 2 * KiB;
	pthread_mutex_unlock(&dev->lock);
	assert_int_equal(ttm_device_check(dev, msg, sizeof(msg)), -EUCLEAN);
	assert_non_null(strstr(msg, "capacity"));

	pthread_mutex_lock(&dev->lock);
	dev->domain[TTM_DOMAIN_GTT].capacity = 16 * KiB;
	bo->domain = TTM_DOMAIN_VRAM;
	pthread_mutex_unlock(&dev->lock);
	assert_int_equal(ttm_device_check(dev, msg, sizeof(msg)), -EUCLEAN);

	pthread_mutex_lock(&dev->lock);
	bo->domain = TTM_DOMAIN_GTT;
	pthread_mutex_unlock(&dev->lock);
	assert_dev_ok(dev);
	put_bo(dev, bo);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* ---- reservation -------------------------------------------------------- */

static int act_reserve(struct actor *a, void *bo)
{
	return ttm_bo_reserve(bo, false, false, &a->ctx);
}

static int act_reserve_intr(struct actor *a, void *bo)
{
	return ttm_bo_reserve(bo, true, false, &a->ctx);
}

static int act_reserve_intr_noticket(struct actor *a, void *bo)
{
	(void)a;
	return ttm_bo_reserve(bo, true, false, NULL);
}

static int act_reserve_nowait(struct actor *a, void *bo)
{
	(void)a;
	return ttm_bo_reserve(bo, false, true, NULL);
}

static int act_slowpath(struct actor *a, void *bo)
{
	return ttm_bo_reserve_slowpath(bo, false, &a->ctx);
}

static int act_slowpath_intr(struct actor *a, void *bo)
{
	return ttm_bo_reserve_slowpath(bo, true, &a->ctx);
}

static int act_unreserve(struct actor *a, void *bo)
{
	(void)a;
	ttm_bo_unreserve(bo);
	return 0;
}

static void test_reserve_basic(void **state)
{
	struct ttm_device *dev = small_device(wound_wait_of(state));
	struct ttm_bo *bo = create_bo(dev, 4 * KiB, &gtt_only);
	struct ww_acquire_ctx ticket;
	struct actor a;

	/* Without a ticket. */
	assert_int_equal(ttm_bo_reserve(bo, false, true, NULL), 0);
	assert_true(ww_mutex_is_locked(&ttm_bo_resv(bo)->lock));
	assert_int_equal(ttm_bo_reserve(bo, false, true, NULL), -EBUSY);
	actor_start(&a, ttm_device_ww_class(dev));
	assert_int_equal(actor_run(&a, act_reserve_nowait, bo), -EBUSY);
	ttm_bo_unreserve(bo);
	assert_false(ww_mutex_is_locked(&ttm_bo_resv(bo)->lock));
	assert_dev_ok(dev);

	assert_int_equal(actor_run(&a, act_reserve_nowait, bo), 0);
	assert_int_equal(ttm_bo_reserve(bo, false, true, NULL), -EBUSY);
	assert_int_equal(actor_run(&a, act_unreserve, bo), 0);
	actor_stop(&a);

	/*
	 * With a ticket. No waiting is refused, the buffer free or not,
	 * with TTM's -EBUSY (it warns too).
	 */
	ww_acquire_init(&ticket, ttm_device_ww_class(dev));
	assert_int_equal(ttm_bo_reserve(bo, false, true, &ticket), -EBUSY);
	assert_int_equal(ttm_bo_reserve(bo, true, true, &ticket), -EBUSY);
	assert_false(ww_mutex_is_locked(&ttm_bo_resv(bo)->lock));
	assert_int_equal(ttm_bo_reserve(bo, false, false, &ticket), 0);
	assert_ptr_equal(ww_mutex_owner_ctx(&ttm_bo_resv(bo)->lock), &ticket);
	assert_int_equal(ttm_bo_reserve(bo, false, false, &ticket), -EALREADY);
	assert_int_equal(ttm_bo_reserve(bo, true, false, &ticket), -EALREADY);
	ttm_bo_unreserve(bo);
	assert_int_equal(ttm_bo_reserve(bo, true, false, &ticket), 0);
	ttm_bo_unreserve(bo);
	ww_acquire_fini(&ticket);
	assert_dev_ok(dev);

	put_bo(dev, bo);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * Two tickets, two buffers, opposite order: the younger one is told to
 * back off (Wait-Die: it dies at once; Wound-Wait: the older one wounds
 * it), then takes the contended buffer with the slow path.
 */
static void test_reserve_deadlk(void **state)
{
	struct ttm_device *dev = small_device(wound_wait_of(state));
	struct ttm_bo *b1 = create_bo(dev, 4 * KiB, &vram_gtt);
	struct ttm_bo *b2 = create_bo(dev, 4 * KiB, &vram_gtt);
	struct actor old, young;

	actor_start(&old, ttm_device_ww_class(dev));
	actor_start(&young, ttm_device_ww_class(dev));
	assert_int_equal(actor_run(&old, act_init, NULL), 0);
	assert_int_equal(actor_run(&young, act_init, NULL), 0);

	assert_int_equal(actor_run(&young, act_reserve, b2), 0);
	assert_int_equal(actor_run(&old, act_reserve, b1), 0);
	/* The older one waits for b2. */
	assert_true(actor_post(&old, act_reserve, b2));
	assert_true(wait_for_waiters(&ttm_bo_resv(b2)->lock, 1));
	/* The younger one, holding b2, must back off on b1. */
	assert_int_equal(actor_run(&young, act_reserve, b1), -EDEADLK);
	assert_int_equal(actor_run(&young, act_unreserve, b2), 0);
	assert_true(actor_wait(&old));
	assert_int_equal(actor_ret(&old), 0);

	/* An interrupt ends an interruptible slow path; retrying is fine. */
	assert_true(actor_post(&young, act_slowpath_intr, b1));
	assert_true(wait_for_waiters(&ttm_bo_resv(b1)->lock, 1));
	assert_int_equal(ttm_interrupt_thread(young.thread), 0);
	assert_true(actor_wait(&young));
	assert_int_equal(actor_ret(&young), -EINTR);

	/* Slow path: the younger one sleeps on b1 until the older is done. */
	assert_true(actor_post(&young, act_slowpath, b1));
	assert_true(wait_for_waiters(&ttm_bo_resv(b1)->lock, 1));
	assert_true(actor_busy(&young));
	assert_int_equal(actor_run(&old, act_unreserve, b2), 0);
	assert_int_equal(actor_run(&old, act_unreserve, b1), 0);
	assert_true(actor_wait(&young));
	assert_int_equal(actor_ret(&young), 0);
	assert_ptr_equal(ww_mutex_owner_ctx(&ttm_bo_resv(b1)->lock),
			 &young.ctx);
	assert_int_equal(actor_run(&young, act_reserve, b2), 0);
	assert_int_equal(actor_run(&young, act_unreserve, b1), 0);
	assert_int_equal(actor_run(&young, act_unreserve, b2), 0);

	assert_int_equal(actor_run(&old, act_fini, NULL), 0);
	assert_int_equal(actor_run(&young, act_fini, NULL), 0);
	actor_stop(&old);
	actor_stop(&young);
	assert_checks_passed();
	assert_dev_ok(dev);
	put_bo(dev, b1);
	put_bo(dev, b2);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* An interrupt ends interruptible waits, with or without a ticket. */
static void test_reserve_eintr(void **state)
{
	struct ttm_device *dev = small_device(wound_wait_of(state));
	struct ttm_bo *bo = create_bo(dev, 4 * KiB, &gtt_only);
	struct actor a;
	int ticket;

	actor_start(&a, ttm_device_ww_class(dev));
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	for (ticket = 0; ticket < 2; ticket++) {
		/* A context open while locking without it would be misuse. */
		if (ticket)
			assert_int_equal(actor_run(&a, act_init, NULL), 0);
		assert_true(actor_post(&a, ticket ? act_reserve_intr :
				       act_reserve_intr_noticket, bo));
		assert_true(wait_for_waiters(&ttm_bo_resv(bo)->lock, 1));
		assert_int_equal(ttm_interrupt_thread(a.thread), 0);
		assert_true(actor_wait(&a));
		assert_int_equal(actor_ret(&a), -EINTR);
		if (ticket)
			assert_int_equal(actor_run(&a, act_fini, NULL), 0);
	}
	ttm_bo_unreserve(bo);
	/* Consumed: the next interruptible reserve just succeeds. */
	assert_int_equal(actor_run(&a, act_reserve_intr_noticket, bo), 0);
	assert_int_equal(actor_run(&a, act_unreserve, bo), 0);
	actor_stop(&a);
	assert_checks_passed();
	put_bo(dev, bo);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* ---- LRU and pinning ---------------------------------------------------- */

/* The LRU of @d must be exactly @want[0..n-1], head first. */
static void expect_lru(struct ttm_device *dev, int d, struct ttm_bo **want,
		       long n)
{
	struct ttm_bo *got[8];
	long i, count = lru_order(dev, d, got, ARRAY_SIZE(got));

	assert_int_equal(count, n);
	for (i = 0; i < n; i++)
		assert_ptr_equal(got[i], want[i]);
}

static void touch(struct ttm_device *dev, struct ttm_bo *bo)
{
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	ttm_bo_unreserve(bo);
	assert_dev_ok(dev);
}

static void test_lru(void **state)
{
	struct ttm_device *dev = small_device(false);
	struct ttm_bo *a = create_bo(dev, 4 * KiB, &vram_only);
	struct ttm_bo *b = create_bo(dev, 4 * KiB, &vram_only);
	struct ttm_bo *c = create_bo(dev, 4 * KiB, &vram_only);
	struct ttm_bo *g = create_bo(dev, 4 * KiB, &gtt_only);
	struct ttm_bo *one[1];

	(void)state;
	expect_lru(dev, TTM_DOMAIN_VRAM, (struct ttm_bo *[]){ a, b, c }, 3);
	expect_lru(dev, TTM_DOMAIN_GTT, (struct ttm_bo *[]){ g }, 1);
	expect_lru(dev, TTM_DOMAIN_SYSTEM, NULL, 0);
	touch(dev, a);
	expect_lru(dev, TTM_DOMAIN_VRAM, (struct ttm_bo *[]){ b, c, a }, 3);
	touch(dev, c);
	expect_lru(dev, TTM_DOMAIN_VRAM, (struct ttm_bo *[]){ b, a, c }, 3);
	touch(dev, c);
	expect_lru(dev, TTM_DOMAIN_VRAM, (struct ttm_bo *[]){ b, a, c }, 3);
	touch(dev, g);
	expect_lru(dev, TTM_DOMAIN_GTT, (struct ttm_bo *[]){ g }, 1);

	/* The count is the whole list's, whatever fits. */
	assert_int_equal(lru_order(dev, TTM_DOMAIN_VRAM, one, 1), 3);
	assert_ptr_equal(one[0], b);
	assert_int_equal(lru_order(dev, TTM_DOMAIN_VRAM, NULL, 0), 3);
	assert_int_equal(lru_order(dev, TTM_DOMAIN_COUNT, NULL, 0),
			 -EINVAL);

	put_bo(dev, a);
	expect_lru(dev, TTM_DOMAIN_VRAM, (struct ttm_bo *[]){ b, c }, 2);
	put_bo(dev, b);
	put_bo(dev, c);
	put_bo(dev, g);
	expect_lru(dev, TTM_DOMAIN_VRAM, NULL, 0);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

static void test_pin(void **state)
{
	struct ttm_device *dev = small_device(false);
	struct ttm_bo *a = create_bo(dev, 4 * KiB, &vram_only);
	struct ttm_bo *b = create_bo(dev, 4 * KiB, &vram_only);
	struct ttm_bo *c = create_bo(dev, 4 * KiB, &vram_only);
	struct ttm_device_stats s;

	(void)state;
	assert_int_equal(ttm_bo_reserve(a, false, false, NULL), 0);
	assert_int_equal(ttm_bo_pin_count(a), 0);
	assert_int_equal(ttm_bo_pin(a), 0);
	assert_int_equal(ttm_bo_pin(a), 0);
	assert_int_equal(ttm_bo_pin_count(a), 2);
	assert_dev_ok(dev);
	/* Off the LRU, still resident and accounted. */
	expect_lru(dev, TTM_DOMAIN_VRAM, (struct ttm_bo *[]){ b, c }, 2);
	expect_domain(dev, TTM_DOMAIN_VRAM, 12 * KiB, 3);
	ttm_bo_unreserve(a);
	expect_lru(dev, TTM_DOMAIN_VRAM, (struct ttm_bo *[]){ b, c }, 2);
	assert_dev_ok(dev);

	touch(dev, b);
	expect_lru(dev, TTM_DOMAIN_VRAM, (struct ttm_bo *[]){ c, b }, 2);

	assert_int_equal(ttm_bo_reserve(a, false, false, NULL), 0);
	assert_int_equal(ttm_bo_unpin(a), 0);
	assert_int_equal(ttm_bo_pin_count(a), 1);
	expect_lru(dev, TTM_DOMAIN_VRAM, (struct ttm_bo *[]){ c, b }, 2);
	assert_int_equal(ttm_bo_unpin(a), 0);
	assert_int_equal(ttm_bo_pin_count(a), 0);
	/* The last unpin puts it back, at the tail. */
	expect_lru(dev, TTM_DOMAIN_VRAM, (struct ttm_bo *[]){ c, b, a }, 3);
	assert_int_equal(ttm_bo_unpin(a), -EINVAL);
	assert_int_equal(ttm_bo_pin_count(a), 0);
	ttm_bo_unreserve(a);
	assert_dev_ok(dev);

	/* The last put of a pinned buffer still frees it. */
	assert_int_equal(ttm_bo_reserve(c, false, false, NULL), 0);
	assert_int_equal(ttm_bo_pin(c), 0);
	ttm_bo_unreserve(c);
	put_bo(dev, c);
	get_stats(dev, &s);
	assert_int_equal(s.buffers, 2);
	expect_domain(dev, TTM_DOMAIN_VRAM, 8 * KiB, 2);

	put_bo(dev, a);
	put_bo(dev, b);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* ---- references and delayed destroy ------------------------------------ */

static struct ttm_fence *new_fence(void)
{
	struct ttm_fence *f;

	assert_int_equal(ttm_fence_create(ttm_fence_context_alloc(1), 1, &f),
			 0);
	return f;
}

static void add_fence(struct ttm_bo *bo, struct ttm_fence *f,
		      enum ttm_resv_usage usage)
{
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_resv_reserve_fences(ttm_bo_resv(bo), 1), 0);
	ttm_resv_add_fence(ttm_bo_resv(bo), f, usage);
	ttm_bo_unreserve(bo);
}

static void expect_buffers(struct ttm_device *dev, uint64_t buffers,
			   uint64_t zombies, uint64_t gtt_used)
{
	struct ttm_device_stats s;

	assert_dev_ok(dev);
	get_stats(dev, &s);
	assert_int_equal(s.buffers, buffers);
	assert_int_equal(s.zombies, zombies);
	assert_int_equal(s.domain[TTM_DOMAIN_GTT].used, gtt_used);
}

static void test_refcount(void **state)
{
	struct ttm_device *dev = small_device(false);
	struct ttm_bo *bo = create_bo(dev, 4 * KiB, &gtt_only);
	struct ttm_fence *f = new_fence();

	(void)state;
	assert_ptr_equal(ttm_bo_get(bo), bo);
	assert_null(ttm_bo_get(NULL));
	put_bo(dev, bo);
	expect_buffers(dev, 1, 0, 4 * KiB);
	/* A signalled fence does not delay anything. */
	add_fence(bo, f, TTM_RESV_USAGE_WRITE);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	put_bo(dev, bo);
	expect_buffers(dev, 0, 0, 0);
	ttm_bo_put(NULL);
	ttm_fence_put(f);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

static void test_delayed_destroy(void **state)
{
	struct ttm_device *dev = small_device(false);
	struct ttm_bo *bo = create_bo(dev, 4 * KiB, &gtt_only);
	struct ttm_bo *other = create_bo(dev, 8 * KiB, &gtt_only);
	struct ttm_fence *w = new_fence(), *bk = new_fence();
	struct ttm_bo *bos[2];

	(void)state;
	add_fence(bo, w, TTM_RESV_USAGE_WRITE);
	add_fence(bo, bk, TTM_RESV_USAGE_BOOKKEEP);
	put_bo(dev, bo);
	/*
	 * Busy: still there, still accounted, still on the LRU, but a
	 * snapshot cannot reference it and leaves it out.
	 */
	expect_buffers(dev, 2, 1, 12 * KiB);
	assert_int_equal(lru_order(dev, TTM_DOMAIN_GTT, bos, 2), 1);
	assert_ptr_equal(bos[0], other);
	assert_int_equal(ttm_fence_signal(w, 0), 0);
	expect_buffers(dev, 2, 1, 12 * KiB);
	/* Even bookkeeping work may touch the memory: wait for it too. */
	assert_int_equal(ttm_fence_signal(bk, -EIO), 0);
	/* Freed by the device's worker, not in the signalling thread. */
	ttm_device_flush_destroys(dev);
	expect_buffers(dev, 1, 0, 8 * KiB);
	assert_int_equal(lru_order(dev, TTM_DOMAIN_GTT, bos, 2), 1);
	assert_ptr_equal(bos[0], other);
	ttm_fence_put(w);
	ttm_fence_put(bk);

	/* A pending read delays it too. */
	w = new_fence();
	add_fence(other, w, TTM_RESV_USAGE_READ);
	put_bo(dev, other);
	expect_buffers(dev, 1, 1, 8 * KiB);
	assert_int_equal(ttm_fence_signal(w, 0), 0);
	ttm_fence_put(w);
	ttm_device_flush_destroys(dev);
	expect_buffers(dev, 0, 0, 0);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * The device waits for its zombies: destroyed in another thread while the
 * fence is pending, it must not be freed before the fence signals, since
 * the zombie's free then touches it. The fence signals only once the
 * destroy is seen waiting (the device's destroy_waiting, under its lock);
 * a destroy that does not wait returns first, which the test reports
 * (and ASan as a use of the freed device).
 */
static int act_device_destroy(struct actor *a, void *dev)
{
	(void)a;
	return ttm_device_destroy(dev);
}

struct destroy_watch {
	struct actor *actor;
	struct ttm_device *dev;
};

/* The destroy returned, or waits: the device is not read once it may be gone. */
static bool destroy_returned_or_waiting(void *arg)
{
	struct destroy_watch *w = arg;
	bool waiting;

	if (!actor_busy(w->actor))
		return true;
	pthread_mutex_lock(&w->dev->lock);
	waiting = w->dev->destroy_waiting;
	pthread_mutex_unlock(&w->dev->lock);
	return waiting;
}

static void test_destroy_waits(void **state)
{
	struct ttm_device *dev = small_device(false);
	struct ttm_bo *bo = create_bo(dev, 4 * KiB, &gtt_only);
	struct ttm_fence *f = new_fence();
	struct actor a;
	struct destroy_watch w = { &a, dev };

	(void)state;
	add_fence(bo, f, TTM_RESV_USAGE_KERNEL);
	put_bo(dev, bo);
	expect_buffers(dev, 1, 1, 4 * KiB);
	actor_start(&a, ttm_device_ww_class(dev));
	assert_true(actor_post(&a, act_device_destroy, dev));
	assert_true(wait_until(destroy_returned_or_waiting, &w));
	if (!actor_busy(&a)) {
		/* The fence and zombie are left: the device is gone. */
		assert_true(actor_wait(&a));
		actor_stop(&a);
		fail_msg("ttm_device_destroy() returned with a zombie pending");
	}
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	assert_true(actor_wait(&a));
	assert_int_equal(actor_ret(&a), 0);
	actor_stop(&a);
	ttm_fence_put(f);
	assert_checks_passed();
}

/* Reports of the ww debug checker, as a handler sees them. */
static struct {
	unsigned int count;
	struct ww_debug_report first; /* its strings are static */
} busy_seen;

static void busy_count(const struct ww_debug_report *r, void *data)
{
	(void)data;
	if (busy_seen.count++ == 0)
		busy_seen.first = *r;
}

/*
 * ttm_device_destroy(@dev), expected to refuse: -EBUSY, and one
 * device-busy report naming @dev and @live buffers if the checker is on.
 */
static void expect_destroy_busy(struct ttm_device *dev, unsigned long live)
{
	const struct ww_debug_report *r = &busy_seen.first;
	bool checker = ww_debug_enabled();

	memset(&busy_seen, 0, sizeof(busy_seen));
	ww_debug_set_handler(busy_count, NULL);
	assert_int_equal(ttm_device_destroy(dev), -EBUSY);
	ww_debug_set_handler(NULL, NULL);
	assert_int_equal(busy_seen.count, checker ? 1 : 0);
	if (!checker)
		return;
	assert_int_equal(r->rule, WW_DEBUG_DEVICE_BUSY);
	assert_int_equal(r->rule_number, 12);
	assert_string_equal(r->name, "device-busy");
	assert_string_equal(r->call, "ttm_device_destroy");
	assert_string_equal(r->class_name, ttm_device_ww_class(dev)->name);
	assert_ptr_equal(r->object, dev);
	assert_int_equal(r->count, live);
	assert_null(r->lock);
	assert_null(r->ctx);
}

/*
 * ttm_device_destroy() with a buffer still held: -EBUSY with nothing
 * destroyed (the buffer's later put would free into a freed device: a
 * use-after-free under ASan), and, with the checker on, one device-busy
 * report naming the device and the buffers still alive, after which the
 * handler's return changes nothing. A buffer waiting for delayed destroy
 * is the device's own: not counted. Once the buffer is put, the device
 * is destroyed.
 */
static void test_destroy_busy(void **state)
{
	struct ttm_device *dev = small_device(false);
	struct ttm_bo *held = create_bo(dev, 4 * KiB, &gtt_only);
	struct ttm_bo *zombie, *later;
	struct ttm_fence *f = new_fence();
	bool checker = ww_debug_enabled();

	(void)state;
	expect_destroy_busy(dev, 1);

	/* Nothing changed: the device and its buffer work as before. */
	expect_buffers(dev, 1, 0, 4 * KiB);
	assert_int_equal(ttm_bo_reserve(held, false, false, NULL), 0);
	assert_int_equal(ttm_bo_write(held, 0, "busy", 4), 0);
	ttm_bo_unreserve(held);
	later = create_bo(dev, 4 * KiB, &gtt_only);
	zombie = create_bo(dev, 4 * KiB, &gtt_only);
	add_fence(zombie, f, TTM_RESV_USAGE_WRITE);
	put_bo(dev, zombie);
	expect_buffers(dev, 3, 1, 12 * KiB);

	/* The zombie is not the callers': two buffers alive, not three. */
	expect_destroy_busy(dev, 2);
	expect_buffers(dev, 3, 1, 12 * KiB);

	/* Checker off: the same refusal, unreported. */
	if (ww_debug_set_enabled(false) == 0) {
		expect_destroy_busy(dev, 2);
		ww_debug_set_enabled(checker);
	}

	put_bo(dev, later);
	put_bo(dev, held);
	expect_buffers(dev, 1, 1, 4 * KiB);
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	ttm_fence_put(f);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* ---- interrupt tokens --------------------------------------------------- */

static int act_fence_wait_intr(struct actor *a, void *f)
{
	(void)a;
	return ttm_fence_wait(f, true, -1);
}

/* Validate @bo to GTT, interruptibly; the domain it is in after. */
struct token_validate {
	struct ttm_bo *bo;
	int ret;
	enum ttm_domain domain;
};

static int act_validate_intr(struct actor *a, void *arg)
{
	struct ttm_operation_ctx ctx = { .interruptible = true };
	struct token_validate *v = arg;

	(void)a;
	if (!CHECK_INT(ttm_bo_reserve(v->bo, false, false, NULL), 0))
		return -EINVAL;
	v->ret = ttm_bo_validate(v->bo, &gtt_only, &ctx);
	v->domain = ttm_bo_domain(v->bo);
	ttm_bo_unreserve(v->bo);
	return v->ret;
}

/* @a's step, asleep (@asleep tells), ends with -EINTR on its token. */
static void expect_interrupted(struct actor *a, bool asleep)
{
	assert_true(asleep);
	assert_true(actor_busy(a));
	assert_int_equal(ttm_interrupt(a->token), 0);
	assert_true(actor_wait(a));
	assert_int_equal(actor_ret(a), -EINTR);
	/* Consumed by the wait. */
	assert_int_equal(actor_run(a, act_interrupt_clear, NULL), 0);
}

/*
 * A thread whose wait state ttm_interrupt_self() set up (the actor takes
 * its token first thing) is woken from each kind of interruptible wait
 * by its token: a reservation, a fence wait, and a validation whose CPU
 * move waits for the buffer's fence. Each wait is seen to sleep first.
 */
static void test_interrupt_token_waits(void **state)
{
	struct ttm_device *dev = small_device(false);
	struct ttm_bo *held = create_bo(dev, 4 * KiB, &gtt_only);
	struct ttm_bo *busy = create_bo(dev, 4 * KiB, &system_only);
	struct ttm_fence *f = new_fence();
	struct token_validate v = { .bo = busy };
	struct actor a;

	(void)state;
	add_fence(busy, f, TTM_RESV_USAGE_WRITE);
	actor_start(&a, ttm_device_ww_class(dev));
	assert_non_null(a.token);

	assert_int_equal(ttm_bo_reserve(held, false, false, NULL), 0);
	assert_true(actor_post(&a, act_reserve_intr_noticket, held));
	expect_interrupted(&a, wait_for_waiters(&ttm_bo_resv(held)->lock, 1));
	ttm_bo_unreserve(held);

	assert_true(actor_post(&a, act_fence_wait_intr, f));
	expect_interrupted(&a, wait_for_fence_waiters(f, 1));
	assert_int_equal(fence_waiters(f), 0);

	assert_true(actor_post(&a, act_validate_intr, &v));
	expect_interrupted(&a, wait_for_fence_waiters(f, 1));
	assert_int_equal(v.domain, TTM_DOMAIN_SYSTEM);

	actor_stop(&a);
	assert_checks_passed();
	assert_int_equal(ttm_fence_signal(f, 0), 0);
	ttm_fence_put(f);
	put_bo(dev, held);
	put_bo(dev, busy);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/*
 * Threads creating, filling, checking and dropping buffers at once on a
 * small device: the invariant holds at every step, contents stay each
 * buffer's own, and everything is given back.
 */
#define CC_THREADS 4
#define CC_ROUNDS 300
#define CC_HELD 6

struct cc_arg {
	struct ttm_device *dev;
	unsigned int seed;
};

static bool cc_fill_check(struct ttm_bo *bo, uint32_t tag, bool fill)
{
	uint32_t words[1024];
	size_t n = ttm_bo_size(bo) / 4, i;
	bool ok = true;

	if (!CHECK(ttm_bo_reserve(bo, false, false, NULL) == 0))
		return false;
	if (fill) {
		for (i = 0; i < n; i++)
			words[i] = tag + (uint32_t)i;
		ok = CHECK(ttm_bo_write(bo, 0, words, n * 4) == 0);
	} else {
		ok = CHECK(ttm_bo_read(bo, 0, words, n * 4) == 0);
		for (i = 0; ok && i < n; i++)
			ok = CHECK_INT(words[i], tag + (uint32_t)i);
	}
	ttm_bo_unreserve(bo);
	return ok;
}

static void *cc_main(void *p)
{
	struct cc_arg *arg = p;
	struct ttm_bo *held[CC_HELD] = { NULL };
	uint32_t tags[CC_HELD] = { 0 };
	char msg[256];
	int r, slot, ret;

	for (r = 0; r < CC_ROUNDS; r++) {
		slot = rand_r(&arg->seed) % CC_HELD;
		if (held[slot]) {
			cc_fill_check(held[slot], tags[slot], false);
			ttm_bo_put(held[slot]);
			held[slot] = NULL;
		} else {
			uint64_t size = 4 * (1 + rand_r(&arg->seed) % 1024);

			ret = ttm_bo_create(arg->dev, size, &vram_gtt, 0,
					    &held[slot]);
			CHECK(ret == 0 || ret == -ENOSPC);
			if (ret == 0) {
				tags[slot] = (uint32_t)rand_r(&arg->seed);
				cc_fill_check(held[slot], tags[slot], true);
			} else {
				held[slot] = NULL;
			}
		}
		if (!CHECK_MSG(ttm_device_check(arg->dev, msg,
						sizeof(msg)) == 0, "%s", msg))
			break;
	}
	for (slot = 0; slot < CC_HELD; slot++) {
		if (held[slot]) {
			cc_fill_check(held[slot], tags[slot], false);
			ttm_bo_put(held[slot]);
		}
	}
	return NULL;
}

static void test_concurrent_create(void **state)
{
	struct ttm_device *dev = small_device(false);
	struct cc_arg args[CC_THREADS];
	pthread_t threads[CC_THREADS];
	struct ttm_device_stats s;
	int i;

	(void)state;
	for (i = 0; i < CC_THREADS; i++) {
		args[i] = (struct cc_arg){ dev, 1234u + (unsigned int)i };
		threads[i] = start_thread(cc_main, &args[i]);
	}
	for (i = 0; i < CC_THREADS; i++)
		join_thread(threads[i]);
	assert_checks_passed();
	assert_dev_ok(dev);
	get_stats(dev, &s);
	assert_int_equal(s.buffers, 0);
	for (i = 0; i < TTM_DOMAIN_COUNT; i++)
		assert_int_equal(s.domain[i].used, 0);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* ---- CPU access after GPU work ------------------------------------------ */

static int act_read_word(struct actor *a, void *bo)
{
	uint32_t v = 0;
	int ret;

	(void)a;
	ret = ttm_bo_reserve(bo, false, false, NULL);
	if (ret)
		return ret;
	ret = ttm_bo_read(bo, 0, &v, sizeof(v));
	ttm_bo_unreserve(bo);
	return ret ? ret : (int)v;
}

static int act_write_word(struct actor *a, void *bo)
{
	uint32_t v = 0x5678;
	int ret;

	(void)a;
	ret = ttm_bo_reserve(bo, false, false, NULL);
	if (ret)
		return ret;
	ret = ttm_bo_write(bo, 0, &v, sizeof(v));
	ttm_bo_unreserve(bo);
	return ret;
}

static void test_access_waits(void **state)
{
	struct ttm_device *dev = small_device(false);
	struct ttm_bo *bo = create_bo(dev, 4 * KiB, &gtt_only);
	struct ttm_fence *rd = new_fence(), *wr = new_fence();
	struct ttm_fence *rd2 = new_fence();
	struct ttm_gpu_range range;
	uint32_t v = 7;
	struct actor a;

	(void)state;
	/* A pending read does not hold up a CPU read... */
	add_fence(bo, rd, TTM_RESV_USAGE_READ);
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	/* No move exists yet: the range stays valid after unreserving. */
	ttm_bo_gpu_range(bo, &range);
	assert_int_equal(ttm_bo_read(bo, 0, &v, sizeof(v)), 0);
	assert_int_equal(v, 0);
	/* ...but it is among what a CPU write waits for. */
	assert_false(ttm_resv_test_signaled(ttm_bo_resv(bo),
					    ttm_resv_usage_rw(true)));
	assert_int_equal(ttm_fence_signal(rd, 0), 0);
	ttm_bo_unreserve(bo);

	/*
	 * A "GPU write" the actor's read must wait for: the value is stored
	 * only just before the fence signals, so a read that did not wait
	 * would see 0 (and race, which TSan reports).
	 */
	add_fence(bo, wr, TTM_RESV_USAGE_WRITE);
	actor_start(&a, ttm_device_ww_class(dev));
	assert_true(actor_post(&a, act_read_word, bo));
	/* The actor may hold the reservation: write through the GPU's view. */
	__atomic_store_n((uint32_t *)range.addr, 0x1234, __ATOMIC_RELAXED);
	assert_int_equal(ttm_fence_signal(wr, 0), 0);
	assert_true(actor_wait(&a));
	assert_int_equal(actor_ret(&a), 0x1234);

	/*
	 * A CPU write waits for a "GPU read", which looks at the word just
	 * before its fence signals: it must still see the old value (a write
	 * that did not wait may have changed it, and races, which TSan
	 * reports).
	 */
	add_fence(bo, rd2, TTM_RESV_USAGE_READ);
	assert_true(actor_post(&a, act_write_word, bo));
	assert_int_equal(__atomic_load_n((uint32_t *)range.addr,
					 __ATOMIC_RELAXED), 0x1234);
	assert_int_equal(ttm_fence_signal(rd2, 0), 0);
	assert_true(actor_wait(&a));
	assert_int_equal(actor_ret(&a), 0);
	assert_int_equal(actor_run(&a, act_read_word, bo), 0x5678);
	actor_stop(&a);
	assert_checks_passed();
	put_bo(dev, bo);
	ttm_fence_put(rd);
	ttm_fence_put(wr);
	ttm_fence_put(rd2);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

static const bool wait_die = false, wound_wait = true;

#define BO_TEST(fn) cmocka_unit_test_setup(fn, checks_reset)
#define BO_CLASS_TEST(fn, cls)                                          \
	{ .name = #fn "(" #cls ")", .test_func = fn,                    \
	  .setup_func = checks_reset, .initial_state = (void *)&cls }
#define BO_BOTH(fn) BO_CLASS_TEST(fn, wait_die), BO_CLASS_TEST(fn, wound_wait)

int main(void)
{
	const struct CMUnitTest tests[] = {
		BO_TEST(test_defaults),
		BO_TEST(test_device_gpu),
		BO_TEST(test_create_args),
		BO_TEST(test_place_valid),
		BO_TEST(test_place_range_size),
		BO_TEST(test_device_page_options),
		BO_TEST(test_create_fourcc),
		BO_TEST(test_contents),
		BO_TEST(test_placement),
		BO_TEST(test_create_evicts),
		BO_TEST(test_check_detects),
		BO_BOTH(test_reserve_basic),
		BO_BOTH(test_reserve_deadlk),
		BO_BOTH(test_reserve_eintr),
		BO_TEST(test_lru),
		BO_TEST(test_pin),
		BO_TEST(test_refcount),
		BO_TEST(test_delayed_destroy),
		BO_TEST(test_destroy_waits),
		BO_TEST(test_destroy_busy),
		BO_TEST(test_interrupt_token_waits),
		BO_TEST(test_access_waits),
		BO_TEST(test_concurrent_create),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
