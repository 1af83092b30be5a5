// SPDX-License-Identifier: MIT
/*
 * The DRM front end (ttmsim/drm.h): files on the two nodes and the master,
 * the dispatcher's rules (unknown requests, flags, DRM's struct sizes,
 * bad pointers), VERSION, GET_CAP, SET_CLIENT_CAP, the magic, GEM_CLOSE,
 * PRIME between two files, dumb buffers, the offset space and mappings,
 * among them a mapping that stays valid while other buffers move.
 */
#include <fcntl.h>
#include <unistd.h>

#include "drm_helpers.h"

#define BAD_PTR ((void *)0xdead000000000000ull)

/* ---- files and nodes ----------------------------------------------------- */

static int opens, closes, open_error;

static int hook_open(struct ttm_drm_file *file)
{
	if (open_error)
		return open_error;
	opens++;
	ttm_drm_file_set_driver_priv(file, &opens);
	return 0;
}

static void hook_postclose(struct ttm_drm_file *file)
{
	assert_ptr_equal(ttm_drm_file_driver_priv(file), &opens);
	closes++;
}

static void test_open_master(void **state)
{
	struct drm_fixture *fx = *state;
	struct ttm_drm_file *p2, *p3, *f = NULL;

	assert_true(ttm_drm_file_is_master(fx->primary));
	assert_false(ttm_drm_file_is_master(fx->render));
	assert_int_equal(ttm_drm_file_node(fx->render), TTM_DRM_NODE_RENDER);
	assert_ptr_equal(ttm_drm_file_device(fx->render), fx->ddev);
	assert_ptr_equal(ttm_drm_device_ttm(fx->ddev), fx->dev);
	assert_non_null(ttm_drm_file_client(fx->render));
	assert_ptr_not_equal(ttm_drm_file_client(fx->render),
			     ttm_drm_file_client(fx->primary));
	p2 = drm_open_file(fx->ddev, TTM_DRM_NODE_PRIMARY);
	assert_false(ttm_drm_file_is_master(p2));
	/* The master gone, the next primary opener is master, as the kernel. */
	ttm_drm_close(fx->primary);
	fx->primary = drm_open_file(fx->ddev, TTM_DRM_NODE_RENDER);
	assert_false(ttm_drm_file_is_master(p2));
	assert_false(ttm_drm_file_is_master(fx->primary));
	p3 = drm_open_file(fx->ddev, TTM_DRM_NODE_PRIMARY);
	assert_true(ttm_drm_file_is_master(p3));
	ttm_drm_close(p3);
	ttm_drm_close(p2);
	assert_int_equal(ttm_drm_open(fx->ddev, 7, &f), -EINVAL);
	assert_null(f);
	ttm_drm_close(NULL);
}

static void test_driver_hooks(void **state)
{
	struct ttm_drm_driver drv = drm_test_driver;
	struct ttm_drm_device *ddev;
	struct ttm_drm_file *f = NULL;
	struct drm_fixture *fx = *state;

	drv.open = hook_open;
	drv.postclose = hook_postclose;
	opens = closes = open_error = 0;
	assert_int_equal(ttm_drm_device_create(fx->dev, &drv, &ddev), 0);
	f = drm_open_file(ddev, TTM_DRM_NODE_RENDER);
	assert_int_equal(opens, 1);
	ttm_drm_close(f);
	assert_int_equal(closes, 1);
	open_error = -ENOSPC;
	f = NULL;
	assert_int_equal(ttm_drm_open(ddev, TTM_DRM_NODE_PRIMARY, &f), -ENOSPC);
	assert_null(f);
	assert_int_equal(closes, 1);
	ttm_drm_device_destroy(ddev);

	drv.name = NULL;
	assert_int_equal(ttm_drm_device_create(fx->dev, &drv, &ddev), -EINVAL);
	drv = drm_test_driver;
	drv.num_ioctls = DRM_COMMAND_END - DRM_COMMAND_BASE + 1;
	assert_int_equal(ttm_drm_device_create(fx->dev, &drv, &ddev), -EINVAL);
	assert_int_equal(ttm_drm_device_create(NULL, &drm_test_driver, &ddev),
			 -EINVAL);
}

static void test_device_page_size(void **state)
{
	struct drm_fixture *fx = *state;
	struct ttm_device *dev;
	struct ttm_drm_device *ddev = NULL;

	/* Pages smaller than the host's would give unmappable buffers. */
	assert_int_equal(ttm_device_create(&(struct ttm_device_options){
				.gpu = fx->gpu, .page_size = 512 }, &dev), 0);
	assert_int_equal(ttm_drm_device_create(dev, &drm_test_driver, &ddev),
			 -EINVAL);
	assert_null(ddev);
	assert_int_equal(ttm_device_destroy(dev), 0);
}

/* ---- the dispatcher -------------------------------------------------------- */

static void test_unknown_requests(void **state)
{
	struct drm_fixture *fx = *state;
	struct drm_get_cap cap = { .capability = DRM_CAP_PRIME };

	/* Core numbers with no handler, the driver range without ioctls. */
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_REQ(RW, 0x3f, 16),
				       &cap), -EINVAL);
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_SET_VERSION,
				       &cap), -EINVAL);
	assert_int_equal(ttm_drm_ioctl(fx->primary,
				       DRM_REQ(RW, DRM_COMMAND_BASE, 16), &cap),
			 -EINVAL);
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_REQ(RW, 0xff, 16),
				       &cap), -EINVAL);
	/* Not DRM's type at all: ioctl(2)'s "inappropriate ioctl". */
	assert_int_equal(ttm_drm_ioctl(fx->primary,
				       _IOWR('T', 0x0c, struct drm_get_cap),
				       &cap), -ENOTTY);
	assert_int_equal(cap.value, 0);
}

static void test_struct_sizes(void **state)
{
	struct drm_fixture *fx = *state;
	struct {
		struct drm_get_cap cap;
		uint64_t extra[2];
	} big = { .cap.capability = DRM_CAP_SYNCOBJ };
	unsigned char small[12];
	uint64_t capability = DRM_CAP_PRIME;

	/* Longer than ours, extra bytes zero: fine, copied back at ours. */
	big.cap.value = 77;
	assert_int_equal(ttm_drm_ioctl(fx->primary,
				       DRM_REQ(RW, 0x0c, sizeof(big)), &big), 0);
	assert_int_equal(big.cap.value, 1);
	/* ... not zero: -EINVAL, nothing done. */
	big.extra[1] = 1;
	big.cap.value = 77;
	assert_int_equal(ttm_drm_ioctl(fx->primary,
				       DRM_REQ(RW, 0x0c, sizeof(big)), &big),
			 -EINVAL);
	assert_int_equal(big.cap.value, 77);

	/* Shorter: zero-extended in, cut short out. */
	memset(small, 0xaa, sizeof(small));
	memcpy(small, &capability, sizeof(capability));
	assert_int_equal(ttm_drm_ioctl(fx->primary,
				       DRM_REQ(RW, 0x0c, sizeof(small)), small),
			 0);
	assert_memory_equal(small, &capability, sizeof(capability));
	assert_int_equal(small[8], (DRM_PRIME_CAP_IMPORT |
				    DRM_PRIME_CAP_EXPORT) & 0xff);
	/* Nothing in (size 0): capability 0 is unknown. */
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_REQ(RW, 0x0c, 0), NULL),
			 -EINVAL);
	/* Write-only from the caller's side: the answer is not copied out. */
	big.extra[1] = 0;
	big.cap.value = 55;
	assert_int_equal(ttm_drm_ioctl(fx->primary,
				       DRM_REQ(_IOC_WRITE, 0x0c,
					       sizeof(big.cap)), &big.cap), 0);
	assert_int_equal(big.cap.value, 55);
	/* Read-only: nothing in, so capability 0: -EINVAL. */
	assert_int_equal(ttm_drm_ioctl(fx->primary,
				       DRM_REQ(_IOC_READ, 0x0c,
					       sizeof(big.cap)), &big.cap),
			 -EINVAL);
}

static void test_bad_pointers(void **state)
{
	struct drm_fixture *fx = *state;

	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_GET_CAP, NULL),
			 -EFAULT);
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_GET_CAP,
				       (void *)8), -EFAULT);
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_GET_CAP,
				       BAD_PTR), -EFAULT);
	assert_int_equal(ttm_drm_ioctl(fx->primary,
				       DRM_REQ(RW, 0x0c, 64), BAD_PTR), -EFAULT);
}

/* ---- VERSION, caps, magic ---------------------------------------------- */

static void test_version(void **state)
{
	struct drm_fixture *fx = *state;
	struct drm_version v = { 0 };
	char name[32], date[4], desc[64];

	/* First the lengths, as drmGetVersion() asks. */
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_VERSION, &v), 0);
	assert_int_equal(v.version_major, 1);
	assert_int_equal(v.version_minor, 2);
	assert_int_equal(v.version_patchlevel, 3);
	assert_int_equal(v.name_len, strlen("drmtest"));
	assert_int_equal(v.date_len, 8);
	assert_int_equal(v.desc_len, strlen("ttmsim drm suite"));
	/* Then the strings; a short buffer truncates, no NUL added. */
	memset(name, 'x', sizeof(name));
	memset(date, 'x', sizeof(date));
	memset(desc, 'x', sizeof(desc));
	v.name = name;
	v.name_len = sizeof(name);
	v.date = date;
	v.date_len = sizeof(date);
	v.desc = desc;
	v.desc_len = 3;
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_VERSION, &v), 0);
	assert_memory_equal(name, "drmtestx", 8);
	assert_memory_equal(date, "2026", 4);
	assert_memory_equal(desc, "ttmx", 4);
	assert_int_equal(v.name_len, 7);
	assert_int_equal(v.date_len, 8);
	assert_int_equal(v.desc_len, 16);
	/* A NULL buffer is skipped; a bad one is -EFAULT. */
	v.name = NULL;
	v.name_len = 7;
	v.date_len = sizeof(date);
	v.desc_len = 0;
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_VERSION, &v), 0);
	v.name = BAD_PTR;
	v.name_len = 7;
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_VERSION, &v),
			 -EFAULT);
	assert_ptr_equal(v.name, BAD_PTR);
	/*
	 * In the address range but not mapped (fuzz-drm's crash: a page
	 * near 0x1a00), or mapped read-only: -EFAULT too, not a SIGSEGV.
	 */
	v.name = (char *)(uintptr_t)0x1a00;
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_VERSION, &v),
			 -EFAULT);
	v.name = (char *)"read-only";
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_VERSION, &v),
			 -EFAULT);
}

static int get_cap(struct ttm_drm_file *f, uint64_t cap, uint64_t *value)
{
	struct drm_get_cap c = { .capability = cap, .value = 99 };
	int ret = ttm_drm_ioctl(f, DRM_IOCTL_GET_CAP, &c);

	*value = c.value;
	return ret;
}

static void test_get_cap(void **state)
{
	struct drm_fixture *fx = *state;
	uint64_t v;

	assert_int_equal(get_cap(fx->render, DRM_CAP_PRIME, &v), 0);
	assert_int_equal(v, DRM_PRIME_CAP_IMPORT | DRM_PRIME_CAP_EXPORT);
	assert_int_equal(get_cap(fx->render, DRM_CAP_SYNCOBJ, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(get_cap(fx->render, DRM_CAP_SYNCOBJ_TIMELINE, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(get_cap(fx->primary, DRM_CAP_DUMB_BUFFER, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(get_cap(fx->primary, DRM_CAP_TIMESTAMP_MONOTONIC, &v),
			 0);
	assert_int_equal(v, 1);
	assert_int_equal(get_cap(fx->primary, DRM_CAP_DUMB_PREFER_SHADOW, &v),
			 0);
	assert_int_equal(v, 0);
	assert_int_equal(get_cap(fx->primary, DRM_CAP_DUMB_PREFERRED_DEPTH, &v),
			 0);
	/* Modesetting's: no KMS here. */
	assert_int_equal(get_cap(fx->primary, DRM_CAP_CURSOR_WIDTH, &v),
			 -EOPNOTSUPP);
	assert_int_equal(get_cap(fx->primary, DRM_CAP_ADDFB2_MODIFIERS, &v),
			 -EOPNOTSUPP);
	assert_int_equal(get_cap(fx->primary, 0, &v), -EINVAL);
	assert_int_equal(get_cap(fx->primary, 0x1000, &v), -EINVAL);
	assert_int_equal(v, 99); /* untouched on failure */
}

static void test_set_client_cap(void **state)
{
	struct drm_fixture *fx = *state;
	struct drm_set_client_cap c = {
		.capability = DRM_CLIENT_CAP_UNIVERSAL_PLANES, .value = 1,
	};

	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_SET_CLIENT_CAP,
				       &c), -EOPNOTSUPP);
	c.capability = 1000;
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_SET_CLIENT_CAP,
				       &c), -EOPNOTSUPP);
	/* Not RENDER_ALLOW in the kernel's table. */
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_SET_CLIENT_CAP,
				       &c), -EACCES);
}

/* ---- flags: render nodes, auth, master, root ------------------------------ */

struct drm_test_big {
	uint32_t in;
	uint32_t out;
	uint8_t fill[200];  /* larger than the dispatcher's stack buffer */
};

static int big_ioctl(struct ttm_drm_file *file, void *data)
{
	struct drm_test_big *b = data;

	(void)file;
	for (size_t i = 0; i < sizeof(b->fill); i++)
		if (b->fill[i] != (uint8_t)i)
			return -EINVAL;
	b->out = b->in + 1;
	return 0;
}

#define T_AUTH    DRM_IOWR(DRM_COMMAND_BASE + 0, struct drm_test_big)
#define T_MASTER  DRM_IOWR(DRM_COMMAND_BASE + 1, struct drm_test_big)
#define T_ROOT    DRM_IOWR(DRM_COMMAND_BASE + 2, struct drm_test_big)
#define T_RENDER  DRM_IOWR(DRM_COMMAND_BASE + 3, struct drm_test_big)
#define T_HOLE    DRM_IOWR(DRM_COMMAND_BASE + 4, struct drm_test_big)

static const struct ttm_drm_ioctl_desc test_ioctls[] = {
	{ T_AUTH, TTM_DRM_AUTH, big_ioctl, "T_AUTH" },
	{ T_MASTER, TTM_DRM_MASTER | TTM_DRM_AUTH, big_ioctl, "T_MASTER" },
	{ T_ROOT, TTM_DRM_ROOT_ONLY | TTM_DRM_RENDER_ALLOW, big_ioctl,
	  "T_ROOT" },
	{ T_RENDER, TTM_DRM_AUTH | TTM_DRM_RENDER_ALLOW, big_ioctl,
	  "T_RENDER" },
	{ 0 },  /* a hole in the table */
};

static const struct ttm_drm_driver flags_driver = {
	.name = "flags", .desc = "", .date = "",
	.ioctls = test_ioctls, .num_ioctls = 5,
};

static int flags_setup(void **state)
{
	return drm_fixture_setup_opts(state, &flags_driver, 0);
}

static int call(struct ttm_drm_file *f, unsigned long req)
{
	struct drm_test_big b = { .in = 41 };
	int ret;

	for (size_t i = 0; i < sizeof(b.fill); i++)
		b.fill[i] = (uint8_t)i;
	ret = ttm_drm_ioctl(f, req, &b);
	if (ret == 0)
		assert_int_equal(b.out, 42);
	return ret;
}

static void test_flags(void **state)
{
	struct drm_fixture *fx = *state;
	struct ttm_drm_file *p2 = drm_open_file(fx->ddev, TTM_DRM_NODE_PRIMARY);
	int root = geteuid() == 0 ? 0 : -EACCES;
	struct drm_auth auth = { 0 };

	/* The master is authenticated. */
	assert_int_equal(call(fx->primary, T_AUTH), 0);
	assert_int_equal(call(fx->primary, T_MASTER), 0);
	assert_int_equal(call(fx->primary, T_RENDER), 0);
	assert_int_equal(call(fx->primary, T_ROOT), root);
	/* Render nodes: RENDER_ALLOW only, AUTH not asked of them. */
	assert_int_equal(call(fx->render, T_AUTH), -EACCES);
	assert_int_equal(call(fx->render, T_MASTER), -EACCES);
	assert_int_equal(call(fx->render, T_RENDER), 0);
	assert_int_equal(call(fx->render, T_ROOT), root);
	assert_int_equal(call(fx->render, T_HOLE), -EINVAL);
	assert_int_equal(call(fx->render, DRM_IOWR(DRM_COMMAND_BASE + 5,
						   struct drm_test_big)),
			 -EINVAL);
	/* Another primary file: not master; authenticated only if root. */
	assert_int_equal(call(p2, T_MASTER), -EACCES);
	if (!root) {
		assert_int_equal(call(p2, T_AUTH), 0);
	} else {
		assert_int_equal(call(p2, T_AUTH), -EACCES);
		assert_int_equal(call(p2, T_RENDER), -EACCES);
	}
	/* The magic: GET_MAGIC by anyone on the primary node ... */
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_GET_MAGIC, &auth),
			 -EACCES);
	assert_int_equal(ttm_drm_ioctl(p2, DRM_IOCTL_GET_MAGIC, &auth), 0);
	assert_int_not_equal(auth.magic, 0);
	/* ... AUTH_MAGIC by the master only, and only for a real magic. */
	assert_int_equal(ttm_drm_ioctl(p2, DRM_IOCTL_AUTH_MAGIC, &auth),
			 -EACCES);
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_AUTH_MAGIC, &auth),
			 -EACCES);
	auth.magic += 1000;
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_AUTH_MAGIC,
				       &auth), -EINVAL);
	auth.magic -= 1000;
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_AUTH_MAGIC,
				       &auth), 0);
	assert_int_equal(call(p2, T_AUTH), 0);
	assert_int_equal(call(p2, T_RENDER), 0);
	assert_int_equal(call(p2, T_MASTER), -EACCES);
	ttm_drm_close(p2);
}

static void test_driver_sizes(void **state)
{
	struct drm_fixture *fx = *state;
	struct drm_test_big b = { .in = 1 };

	/* A driver struct past the stack buffer, cut short by the caller:
	 * zero-extended, so the handler sees fill[] zero and refuses. */
	assert_int_equal(ttm_drm_ioctl(fx->primary,
				       DRM_REQ(RW, DRM_COMMAND_BASE + 3, 8),
				       &b), -EINVAL);
	assert_int_equal(b.out, 0);
}

/* ---- GEM_CLOSE, dumb buffers, PRIME -------------------------------------- */

static void test_render_no_dumb(void **state)
{
	struct drm_fixture *fx = *state;
	struct drm_mode_create_dumb c = { .width = 4, .height = 4, .bpp = 32 };
	struct drm_mode_map_dumb m = { .handle = 1 };
	struct drm_mode_destroy_dumb d = { .handle = 1 };

	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_MODE_CREATE_DUMB,
				       &c), -EACCES);
	assert_int_equal(c.handle, 0);
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_MODE_MAP_DUMB, &m),
			 -EACCES);
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_MODE_DESTROY_DUMB, &d),
			 -EACCES);
}

static void test_create_dumb(void **state)
{
	struct drm_fixture *fx = *state;
	struct drm_mode_create_dumb c = { .width = 100, .height = 3, .bpp = 24 };
	uint64_t page = ttm_device_page_size(fx->dev);

	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_MODE_CREATE_DUMB,
				       &c), 0);
	assert_int_equal(c.pitch, 300);
	assert_int_equal(c.size, page);
	assert_int_equal(c.handle, 1);
	/* bpp rounds up to whole bytes. */
	c = (struct drm_mode_create_dumb){ .width = 9, .height = 1, .bpp = 1 };
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_MODE_CREATE_DUMB,
				       &c), 0);
	assert_int_equal(c.pitch, 9);

	struct drm_mode_create_dumb bad[] = {
		{ .width = 0, .height = 1, .bpp = 32 },
		{ .width = 1, .height = 0, .bpp = 32 },
		{ .width = 1, .height = 1, .bpp = 0 },
		{ .width = 1, .height = 1, .bpp = 32, .flags = 1 },
		{ .width = 1, .height = 1, .bpp = UINT32_MAX - 7 },
		{ .width = UINT32_MAX, .height = 1, .bpp = 32 },
		{ .width = 65536, .height = 65536, .bpp = 32 },
		/* 4 GiB minus a bit: the page round-up passes 32 bits. */
		{ .width = 0x3fffffff, .height = 1, .bpp = 32 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		c = bad[i];
		assert_int_equal(ttm_drm_ioctl(fx->primary,
					       DRM_IOCTL_MODE_CREATE_DUMB, &c),
				 -EINVAL);
		assert_int_equal(c.handle, 0);
	}
	/* Past the library's largest buffer (TTM_BO_MAX_SIZE): its -EINVAL. */
	c = (struct drm_mode_create_dumb){ .width = 32768, .height = 16384,
					   .bpp = 32 };
	assert_true((uint64_t)32768 * 16384 * 4 > TTM_BO_MAX_SIZE);
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_MODE_CREATE_DUMB,
				       &c), -EINVAL);
	assert_int_equal(c.handle, 0);
}

static void test_map_destroy_dumb(void **state)
{
	struct drm_fixture *fx = *state;
	uint32_t a = drm_dumb(fx->primary, 16, 16, NULL);
	uint32_t b = drm_dumb(fx->primary, 16, 16, NULL);
	struct drm_mode_map_dumb m = { .handle = a };
	struct drm_mode_destroy_dumb d = { .handle = a };
	uint64_t off_a;

	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_MODE_MAP_DUMB,
				       &m), 0);
	off_a = m.offset;
	assert_int_equal(off_a % ttm_device_page_size(fx->dev), 0);
	assert_true(off_a >= (1ull << 32));
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_MODE_MAP_DUMB,
				       &m), 0);
	assert_int_equal(m.offset, off_a); /* stable */
	m.handle = b;
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_MODE_MAP_DUMB,
				       &m), 0);
	assert_true(m.offset >= off_a + 16 * 16 * 4);
	m.pad = 1;
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_MODE_MAP_DUMB,
				       &m), -EINVAL);
	m = (struct drm_mode_map_dumb){ .handle = 99 };
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_MODE_MAP_DUMB,
				       &m), -ENOENT);
	assert_int_equal(m.offset, 0);

	assert_int_equal(ttm_drm_ioctl(fx->primary,
				       DRM_IOCTL_MODE_DESTROY_DUMB, &d), 0);
	assert_int_equal(ttm_drm_ioctl(fx->primary,
				       DRM_IOCTL_MODE_DESTROY_DUMB, &d),
			 -EINVAL);
	/* The offset went with the last handle. */
	void *p = NULL;
	assert_int_equal(ttm_drm_mmap(fx->primary, off_a, 4096, &p), -EINVAL);
}

static void test_gem_close(void **state)
{
	struct drm_fixture *fx = *state;
	uint32_t h = drm_dumb(fx->primary, 8, 8, NULL);
	struct drm_gem_close c = { .handle = h };

	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_GEM_CLOSE, &c), 0);
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_GEM_CLOSE, &c),
			 -EINVAL);
	c.handle = 0;
	assert_int_equal(ttm_drm_ioctl(fx->render, DRM_IOCTL_GEM_CLOSE, &c),
			 -EINVAL);
	assert_null(ttm_client_lookup(ttm_drm_file_client(fx->primary), h));
}

static void test_prime_share(void **state)
{
	struct drm_fixture *fx = *state;
	uint64_t size;
	uint32_t h = drm_dumb(fx->primary, 32, 32, &size);
	struct drm_prime_handle ph = { .handle = h, .flags = DRM_CLOEXEC };
	unsigned char *pa, *pb;
	int fd;

	pa = drm_map(fx->primary, h, size);
	for (uint64_t i = 0; i < size; i++)
		pa[i] = (unsigned char)(i * 7);
	assert_int_equal(ttm_drm_ioctl(fx->primary,
				       DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph), 0);
	fd = ph.fd;
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);

	/* The render file imports it and maps it: same contents. A render
	 * file cannot MAP_DUMB, so it asks ttm_drm_mmap_offset(), as a
	 * driver's mmap-offset ioctl would. */
	ph = (struct drm_prime_handle){ .fd = fd };
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_PRIME_FD_TO_HANDLE, &ph), 0);
	uint64_t off;
	assert_int_equal(ttm_drm_mmap_offset(fx->render, ph.handle, &off), 0);
	assert_int_equal(ttm_drm_mmap(fx->render, off, size, (void **)&pb), 0);
	assert_ptr_equal(pa, pb);
	assert_memory_equal(pa, pb, size);
	pb[5] = 0x5a;
	assert_int_equal(pa[5], 0x5a);
	assert_int_equal(drm_pins(fx->primary, h), 2);
	assert_int_equal(ttm_drm_munmap(fx->render, pb, size), 0);
	assert_int_equal(ttm_drm_munmap(fx->primary, pa, size), 0);
	assert_int_equal(drm_pins(fx->primary, h), 0);
	close(fd);

	/* Without DRM_CLOEXEC the descriptor survives exec. */
	ph = (struct drm_prime_handle){ .handle = h, .flags = DRM_RDWR };
	assert_int_equal(ttm_drm_ioctl(fx->primary,
				       DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph), 0);
	assert_false(fcntl(ph.fd, F_GETFD) & FD_CLOEXEC);
	close(ph.fd);
	ph = (struct drm_prime_handle){ .handle = h, .flags = 1u << 30,
					.fd = -1 };
	assert_int_equal(ttm_drm_ioctl(fx->primary,
				       DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph),
			 -EINVAL);
	assert_int_equal(ph.fd, -1);
	ph = (struct drm_prime_handle){ .handle = 77, .fd = -1 };
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph),
			 -ENOENT);
	ph = (struct drm_prime_handle){ .fd = 0 };
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_PRIME_FD_TO_HANDLE, &ph),
			 -EBADF);
	ph = (struct drm_prime_handle){ .fd = -1 };
	assert_int_equal(ttm_drm_ioctl(fx->render,
				       DRM_IOCTL_PRIME_FD_TO_HANDLE, &ph),
			 -EBADF);
}

/* ---- mmap ------------------------------------------------------------------ */

static void test_mmap_errors(void **state)
{
	struct drm_fixture *fx = *state;
	uint64_t size, off;
	uint32_t h = drm_dumb(fx->primary, 16, 16, &size);
	struct ttm_drm_file *p2 = drm_open_file(fx->ddev, TTM_DRM_NODE_PRIMARY);
	void *p = NULL, *q = NULL;

	assert_int_equal(ttm_drm_mmap_offset(fx->primary, h, &off), 0);
	assert_int_equal(ttm_drm_mmap_offset(fx->primary, 50, &off), -ENOENT);
	assert_int_equal(ttm_drm_mmap(fx->primary, off, 0, &p), -EINVAL);
	assert_int_equal(ttm_drm_mmap(fx->primary, off, size + 1, &p), -EINVAL);
	assert_int_equal(ttm_drm_mmap(fx->primary, off + 4096, 1, &p), -EINVAL);
	assert_int_equal(ttm_drm_mmap(fx->primary, 0, 1, &p), -EINVAL);
	/* Another file that has no handle for it may not map it. */
	assert_int_equal(ttm_drm_mmap(p2, off, size, &p), -EACCES);
	assert_null(p);

	/* Two mappings: two pins; each munmap undoes one. */
	assert_int_equal(ttm_drm_mmap(fx->primary, off, size, &p), 0);
	assert_int_equal(ttm_drm_mmap(fx->primary, off, 8, &q), 0);
	assert_ptr_equal(p, q);
	assert_int_equal((uintptr_t)p % sysconf(_SC_PAGESIZE), 0);
	assert_int_equal(drm_pins(fx->primary, h), 2);
	assert_int_equal(ttm_drm_munmap(fx->primary, p, 7), -EINVAL);
	assert_int_equal(ttm_drm_munmap(p2, p, size), -EINVAL);
	assert_int_equal(ttm_drm_munmap(fx->primary, p, size), 0);
	assert_int_equal(drm_pins(fx->primary, h), 1);
	assert_int_equal(ttm_drm_munmap(fx->primary, p, size), -EINVAL);
	/* Closing the handle leaves the mapping (and its pin) until munmap. */
	struct drm_gem_close c = { .handle = h };
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_GEM_CLOSE, &c), 0);
	memset(q, 1, 8);
	assert_int_equal(ttm_drm_munmap(fx->primary, q, 8), 0);
	/* Closing a file with a mapping unmaps it. */
	h = drm_dumb(p2, 16, 16, &size);
	p = drm_map(p2, h, size);
	ttm_drm_close(p2);
}


static void test_mmap_from_system(void **state)
{
	struct drm_fixture *fx = *state;
	struct ttm_placement sys = {
		.count = 1, .places = { TTM_PLACE_INIT(TTM_DOMAIN_SYSTEM) },
	};
	struct ttm_operation_ctx ctx = { 0 };
	uint64_t size;
	uint32_t h = drm_dumb(fx->primary, 64, 64, &size);
	struct ttm_bo *bo = ttm_client_lookup(ttm_drm_file_client(fx->primary),
					      h);
	unsigned char pattern[64], *p;

	/* Evicted to SYSTEM (malloc()ed), written there through the library. */
	for (size_t i = 0; i < sizeof(pattern); i++)
		pattern[i] = (unsigned char)(0xc0 + i);
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_bo_validate(bo, &sys, &ctx), 0);
	assert_int_equal(ttm_bo_write(bo, 100, pattern, sizeof(pattern)), 0);
	ttm_bo_unreserve(bo);
	/* Mapping it brings it back where a process can map it. */
	p = drm_map(fx->primary, h, size);
	assert_int_equal((uintptr_t)p % sysconf(_SC_PAGESIZE), 0);
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_GTT);
	assert_memory_equal(p + 100, pattern, sizeof(pattern));
	assert_int_equal(ttm_drm_munmap(fx->primary, p, size), 0);
	ttm_bo_put(bo);
}

/*
 * Pinned in SYSTEM, a buffer cannot be moved where a process can map it:
 * the mapping is refused rather than given a malloc()ed address, which
 * mmap(2) could not return (the one chance in 256 that malloc() gave a
 * page-aligned block is a legal mapping).
 */
static void test_mmap_pinned_in_system(void **state)
{
	struct drm_fixture *fx = *state;
	struct ttm_placement sys = {
		.count = 1, .places = { TTM_PLACE_INIT(TTM_DOMAIN_SYSTEM) },
	};
	struct ttm_operation_ctx ctx = { 0 };
	struct drm_mode_map_dumb m = { 0 };
	uint64_t size;
	uint32_t h = drm_dumb(fx->primary, 64, 64, &size);
	struct ttm_bo *bo = ttm_client_lookup(ttm_drm_file_client(fx->primary),
					      h);
	void *p = NULL;
	int ret;

	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_bo_validate(bo, &sys, &ctx), 0);
	assert_int_equal(ttm_bo_pin(bo), 0);
	ttm_bo_unreserve(bo);
	m.handle = h;
	assert_int_equal(ttm_drm_ioctl(fx->primary, DRM_IOCTL_MODE_MAP_DUMB,
				       &m), 0);
	ret = ttm_drm_mmap(fx->primary, m.offset, size, &p);
	if (ret == 0) {
		assert_int_equal((uintptr_t)p % sysconf(_SC_PAGESIZE), 0);
		assert_int_equal(ttm_drm_munmap(fx->primary, p, size), 0);
	} else {
		assert_int_equal(ret, -EINVAL);
	}
	assert_int_equal(ttm_bo_domain(bo), TTM_DOMAIN_SYSTEM);
	assert_int_equal(ttm_bo_reserve(bo, false, false, NULL), 0);
	assert_int_equal(ttm_bo_pin_count(bo), 1);
	ttm_bo_unpin(bo);
	ttm_bo_unreserve(bo);
	ttm_bo_put(bo);
}

static int small_gtt_setup(void **state)
{
	/* 16 pages of GTT: a few buffers fill it. */
	return drm_fixture_setup_opts(state, &drm_test_driver, 16 * 4096);
}

static void test_mmap_while_moving(void **state)
{
	struct drm_fixture *fx = *state;
	struct ttm_client *client = ttm_drm_file_client(fx->primary);
	struct ttm_placement gtt = {
		.count = 1, .places = { TTM_PLACE_INIT(TTM_DOMAIN_GTT) },
	};
	struct ttm_placement sys = {
		.count = 1, .places = { TTM_PLACE_INIT(TTM_DOMAIN_SYSTEM) },
	};
	struct ttm_placement gtt_sys = {
		.count = 2, .places = { TTM_PLACE_INIT(TTM_DOMAIN_GTT),
					TTM_PLACE_INIT(TTM_DOMAIN_SYSTEM) },
	};
	struct ttm_operation_ctx ctx = { 0 };
	struct ttm_device_stats before, after;
	uint64_t size;
	uint32_t h = drm_dumb(fx->primary, 32, 32, &size);  /* 1 page x 4 */
	struct ttm_bo *mapped = ttm_client_lookup(client, h);
	unsigned char *p = drm_map(fx->primary, h, size);
	unsigned char back[256];
	uint32_t others[8];

	assert_int_equal(ttm_bo_domain(mapped), TTM_DOMAIN_GTT);
	memset(p, 0x11, size);
	ttm_device_get_stats(fx->dev, &before);

	/* Others, 3 pages each, fill GTT over and over: each validate into
	 * GTT evicts earlier ones, never the mapped buffer. */
	for (unsigned int round = 0; round < 3; round++) {
		for (unsigned int i = 0; i < ARRAY_SIZE(others); i++) {
			struct ttm_bo *bo;

			if (round == 0)
				assert_int_equal(ttm_client_bo_create(
					client, 3 * 4096, &gtt_sys, 0,
					&others[i]), 0);
			bo = ttm_client_lookup(client, others[i]);
			assert_int_equal(ttm_bo_reserve(bo, false, false,
							NULL), 0);
			assert_int_equal(ttm_bo_validate(bo, &gtt, &ctx), 0);
			ttm_bo_unreserve(bo);
			ttm_bo_put(bo);
			/* Write through the mapping while others move. */
			p[round * 64 + i] = (unsigned char)(round * 16 + i);
		}
	}
	ttm_device_get_stats(fx->dev, &after);
	assert_true(after.evictions > before.evictions);
	/* The mapped one itself cannot be moved or evicted. */
	assert_int_equal(ttm_bo_reserve(mapped, false, false, NULL), 0);
	assert_int_equal(ttm_bo_validate(mapped, &sys, &ctx), -EINVAL);
	assert_int_equal(ttm_bo_domain(mapped), TTM_DOMAIN_GTT);
	/* Read back through the library what went through the mapping. */
	assert_int_equal(ttm_bo_read(mapped, 0, back, sizeof(back)), 0);
	ttm_bo_unreserve(mapped);
	for (unsigned int round = 0; round < 3; round++)
		for (unsigned int i = 0; i < ARRAY_SIZE(others); i++)
			assert_int_equal(back[round * 64 + i],
					 round * 16 + i);
	assert_int_equal(back[200], 0x11);

	/* Unmapped, it is evictable again. */
	assert_int_equal(ttm_drm_munmap(fx->primary, p, size), 0);
	assert_int_equal(ttm_bo_reserve(mapped, false, false, NULL), 0);
	assert_int_equal(ttm_bo_validate(mapped, &sys, &ctx), 0);
	assert_int_equal(ttm_bo_read(mapped, 0, back, 4), 0);
	ttm_bo_unreserve(mapped);
	assert_int_equal(back[0], 0);
	assert_int_equal(back[1], 1);
	ttm_bo_put(mapped);
}

#define DRM_TEST(fn) \
	cmocka_unit_test_setup_teardown(fn, drm_fixture_setup, \
					drm_fixture_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		DRM_TEST(test_open_master),
		DRM_TEST(test_driver_hooks),
		DRM_TEST(test_device_page_size),
		DRM_TEST(test_unknown_requests),
		DRM_TEST(test_struct_sizes),
		DRM_TEST(test_bad_pointers),
		DRM_TEST(test_version),
		DRM_TEST(test_get_cap),
		DRM_TEST(test_set_client_cap),
		cmocka_unit_test_setup_teardown(test_flags, flags_setup,
						drm_fixture_teardown),
		cmocka_unit_test_setup_teardown(test_driver_sizes, flags_setup,
						drm_fixture_teardown),
		DRM_TEST(test_render_no_dumb),
		DRM_TEST(test_create_dumb),
		DRM_TEST(test_map_destroy_dumb),
		DRM_TEST(test_gem_close),
		DRM_TEST(test_prime_share),
		DRM_TEST(test_mmap_errors),
		DRM_TEST(test_mmap_from_system),
		DRM_TEST(test_mmap_pinned_in_system),
		cmocka_unit_test_setup_teardown(test_mmap_while_moving,
						small_gtt_setup,
						drm_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
