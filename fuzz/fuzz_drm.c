// SPDX-License-Identifier: MIT
/*
 * Fuzz target: the argument blocks of the DRM ioctls (drm/ioctl.c and the
 * built-in "ttmsim" driver's), through ttm_drm_ioctl().
 *
 * One device serves every input (creating it per input would dominate
 * the time); each input opens a render and a
 * primary file and closes them at its end, so that inputs do not share
 * handles. An input is a list of records:
 *
 *	byte 0: the ioctl, an index into ioctls[] below (modulo its size);
 *	byte 1: bit 0: the primary file (else the render one); bit 1: the
 *		size in the request is byte 2 instead of the struct's; bit 2:
 *		a NULL argument;
 *	[byte 2: that size;]
 *	then the argument block, that many bytes (zeros past the input).
 *
 * Every aligned 64-bit word of a block whose high half is FUZZ_PTR_TAG
 * becomes a pointer into a scratch copy of the input, at the offset in
 * its low 16 bits: how the arrays of SUBMIT or SYNCOBJ_WAIT get real
 * contents, at any alignment (a misaligned array must work). Another
 * pointer is kept if the library copies through it with
 * ttm_drm_copy_from_user() (SUBMIT) or writes through
 * drm_copy_to_user() (VERSION's strings); for the syncobj arrays, a
 * pointer that is not
 * detectably bad is made so (the library cannot see an unmapped page
 * where process_vm_readv() is forbidden: docs/drm-design.md, "Bad user
 * pointers"), and the count of an array in the scratch copy is cut to
 * MAX_COUNT (the syncobj arrays are copied in, but a huge count would
 * make an input slow). The library must say -EFAULT or
 * -EINVAL, never crash. Timeouts are cut to at most 1 ms
 * and job durations to 100 us so that an input ends quickly.
 *
 * The GPU runs in real time, not on the virtual clock: there a creation
 * or a submission that must wait for an eviction's copy blocks until
 * another thread advances the clock (docs/bo-design.md, "ghosts"), and
 * the fuzzer has no such thread.
 *
 * After every input: every job done (ttm_execbuf_wait_idle()), no buffer of either file left reserved (ww_mutex_is_locked() of each
 * handle's reservation), ttm_device_check() holds; then after closing the
 * files and every descriptor the input's ioctls returned, ttm_device_check()
 * again. Only those: the library has descriptors of its own (fence pipes),
 * which it closes when the last reference to their fence goes, possibly
 * later, from a GPU or scheduler thread. Closing whatever appeared in
 * /proc/self/fd during the input closed some of those, and the library
 * then closed their numbers again once reused (the replay's next fopen()).
 * The ww debug checker's reports abort (its default handler).
 */
#include <drm.h>
#include <fcntl.h>
#include <drm_mode.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fuzz.h"
#include "ttmsim/bo.h"
#include "ttmsim/drm.h"
#include "ttmsim/execbuf.h"
#include "ttmsim/gpu.h"
#include "ttmsim/resv.h"
#include "ttmsim/ttmsim_drm.h"
#include "ttmsim/ww_mutex.h"

#define FUZZ_PTR_TAG 0xf022f022u
#define SCRATCH_SIZE 65536u
#define MAX_HANDLE 512u  /* handles looked at after an input */
#define MAX_IOCTLS 64    /* a longer input's rest is ignored */

/*
 * A user pointer the harness keeps in the scratch buffer or makes
 * detectably bad (the comment at the top), with the field counting its
 * elements.
 */
struct ptr_field {
	int off;        /* 0: none (no such pointer is at offset 0 but one) */
	int count_off;  /* a __u32, or a __u64 if count_u64 */
	bool count_u64;
	bool used;
};

struct ioctl_entry {
	unsigned long request;
	/* offsets of fields to cut (timeouts, durations); -1: none */
	int timeout_off;
	int duration_off;
	struct ptr_field ptrs[3];
	/* offset of the __s32 of a descriptor it returns; 0: none */
	int fd_out;
	/* offset of the __s32 of a descriptor it takes; 0: none */
	int fd_in;
};

#define E(req) { (req), -1, -1, { { 0 } } }
#define T(req, type, field) { (req), offsetof(type, field), -1, { { 0 } } }
#define F(req, type, field) { (req), -1, -1, { { 0 } }, offsetof(type, field) }
#define I(req, type, field) \
	{ (req), -1, -1, { { 0 } }, 0, offsetof(type, field) }
#define P(type, ptr, count, u64) \
	{ offsetof(type, ptr), offsetof(type, count), (u64), true }

static const struct ioctl_entry ioctls[] = {
	{ DRM_IOCTL_VERSION, -1, -1, {
		P(struct drm_version, name, name_len, true),
		P(struct drm_version, date, date_len, true),
		P(struct drm_version, desc, desc_len, true) } },
	E(DRM_IOCTL_GET_MAGIC),
	E(DRM_IOCTL_GEM_CLOSE),
	E(DRM_IOCTL_GET_CAP),
	E(DRM_IOCTL_SET_CLIENT_CAP),
	E(DRM_IOCTL_AUTH_MAGIC),
	F(DRM_IOCTL_PRIME_HANDLE_TO_FD, struct drm_prime_handle, fd),
	I(DRM_IOCTL_PRIME_FD_TO_HANDLE, struct drm_prime_handle, fd),
	E(DRM_IOCTL_MODE_CREATE_DUMB),
	E(DRM_IOCTL_MODE_MAP_DUMB),
	E(DRM_IOCTL_MODE_DESTROY_DUMB),
	E(DRM_IOCTL_SYNCOBJ_CREATE),
	E(DRM_IOCTL_SYNCOBJ_DESTROY),
	F(DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, struct drm_syncobj_handle, fd),
	I(DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, struct drm_syncobj_handle, fd),
	{ DRM_IOCTL_SYNCOBJ_WAIT, offsetof(struct drm_syncobj_wait,
					   timeout_nsec), -1, {
		P(struct drm_syncobj_wait, handles, count_handles, false) } },
	{ DRM_IOCTL_SYNCOBJ_RESET, -1, -1, {
		P(struct drm_syncobj_array, handles, count_handles, false) } },
	{ DRM_IOCTL_SYNCOBJ_SIGNAL, -1, -1, {
		P(struct drm_syncobj_array, handles, count_handles, false) } },
	{ DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT,
	  offsetof(struct drm_syncobj_timeline_wait, timeout_nsec), -1, {
		P(struct drm_syncobj_timeline_wait, handles, count_handles,
		  false),
		P(struct drm_syncobj_timeline_wait, points, count_handles,
		  false) } },
	{ DRM_IOCTL_SYNCOBJ_QUERY, -1, -1, {
		P(struct drm_syncobj_timeline_array, handles, count_handles,
		  false),
		P(struct drm_syncobj_timeline_array, points, count_handles,
		  false) } },
	E(DRM_IOCTL_SYNCOBJ_TRANSFER),
	{ DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, -1, -1, {
		P(struct drm_syncobj_timeline_array, handles, count_handles,
		  false),
		P(struct drm_syncobj_timeline_array, points, count_handles,
		  false) } },
	E(DRM_IOCTL_TTMSIM_GET_PARAM),
	E(DRM_IOCTL_TTMSIM_GEM_CREATE),
	E(DRM_IOCTL_TTMSIM_GEM_MMAP_OFFSET),
	T(DRM_IOCTL_TTMSIM_GEM_WAIT, struct drm_ttmsim_gem_wait, timeout_ns),
	/* Its arrays go through ttm_drm_copy_from_user(): any pointer. */
	{ DRM_IOCTL_TTMSIM_SUBMIT, -1,
	  offsetof(struct drm_ttmsim_submit, duration_ns), { { 0 } },
	  offsetof(struct drm_ttmsim_submit, fence_fd),
	  offsetof(struct drm_ttmsim_submit, fence_fd) },
	E(DRM_IOCTL_TTMSIM_SET_PRIORITY),
	/* requests no table has: -EINVAL */
	E(DRM_IOWR(0xCF, struct drm_syncobj_wait)),
	E(DRM_IOWR(DRM_COMMAND_BASE + 0x30, struct drm_ttmsim_submit)),
	E(_IOWR('x', 0x01, struct drm_version)),
};

static struct ttm_gpu *gpu;
static struct ttm_device *dev;
static struct ttm_drm_device *ddev;
/* The pointed-to arrays: 1,024 elements of 8 bytes past its end too. */
#define MAX_COUNT 1024u
static uint8_t scratch[SCRATCH_SIZE + MAX_COUNT * 8];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct ttm_gpu_options gopts = { .flags = 0 };
	struct ttm_device_options opts = {
		.vram_size = 4u << 20,
		.gtt_size = 4u << 20,
		.copy_engine = 1,
	};

	(void)argc;
	(void)argv;
	FUZZ_CHECK(ttm_gpu_create(2, &gopts, &gpu) == 0, "gpu");
	opts.gpu = gpu;
	FUZZ_CHECK(ttm_device_create(&opts, &dev) == 0, "device");
	FUZZ_CHECK(ttm_drm_device_create(dev, ttm_drm_ttmsim_driver(),
					 &ddev) == 0, "drm device");
	return 0;
}

/* The descriptors the input's ioctls returned, each the caller's. */
struct user_fds {
	int fd[MAX_IOCTLS];
	unsigned int n;
};

/*
 * After a successful @e: the descriptor it returned in @arg, if any, is
 * open and not one the caller already has (the library must not hand out
 * a number it or the caller still uses).
 */
static void take_fd(struct user_fds *u, const struct ioctl_entry *e,
		    const uint8_t *arg)
{
	int32_t fd;

	if (!e->fd_out) {
		return;
	}
	memcpy(&fd, arg + e->fd_out, sizeof(fd));
	if (fd < 0) {
		return; /* SUBMIT without FENCE_FD_OUT: -1 */
	}
	FUZZ_CHECK(fcntl(fd, F_GETFD) >= 0, "ioctl %#lx returned fd %d, "
		   "which is not open", e->request, fd);
	for (unsigned int i = 0; i < u->n; i++) {
		FUZZ_CHECK(u->fd[i] != fd, "ioctl %#lx returned fd %d twice",
			   e->request, fd);
	}
	u->fd[u->n++] = fd;
}

/*
 * The descriptor @e takes: one this input's ioctls returned, stdin (open,
 * not a DRM object), -1 or one never open. Never a raw number from the
 * input: descriptors are the process's, and the library's own (a fence
 * pipe's end) would be used while the library closes it in another
 * thread, a race of the harness's making (TSan saw one), where the
 * kernel's per-file table gives a caller only its own.
 */
static void fix_fd(uint8_t *arg, size_t size, const struct ioctl_entry *e,
		   const struct user_fds *u)
{
	uint32_t raw, pick;
	int32_t fd;

	if (!e->fd_in || (size_t)e->fd_in + 4 > size) {
		return;
	}
	memcpy(&raw, arg + e->fd_in, 4);
	pick = raw % (u->n + 3);
	if (pick < u->n) {
		fd = u->fd[pick];
	} else if (pick == u->n) {
		fd = 0;
	} else if (pick == u->n + 1) {
		fd = -1;
	} else {
		fd = 1 << 20;
	}
	memcpy(arg + e->fd_in, &fd, 4);
}

static void close_user_fds(struct user_fds *u)
{
	for (unsigned int i = 0; i < u->n; i++) {
		FUZZ_CHECK(close(u->fd[i]) == 0, "close of returned fd %d",
			   u->fd[i]);
	}
	u->n = 0;
}

/*
 * A pointer of ioctls[].ptrs: into the scratch buffer if tagged
 * (its count cut to MAX_COUNT, which the slack past the buffer holds),
 * else made detectably bad (below 4096 or past 2^57: -EFAULT) unless it is.
 */
static void fix_ptr(uint8_t *arg, size_t size, const struct ptr_field *p)
{
	uint64_t v, count = 0;

	if ((size_t)p->off + 8 > size) {
		return;
	}
	memcpy(&v, arg + p->off, 8);
	if ((v >> 32) == FUZZ_PTR_TAG) {
		v = (uint64_t)(uintptr_t)
			(scratch + (v & 0xffff) % SCRATCH_SIZE);
		if ((size_t)p->count_off + (p->count_u64 ? 8 : 4) <= size) {
			memcpy(&count, arg + p->count_off,
			       p->count_u64 ? 8 : 4);
			count %= MAX_COUNT + 1;
			memcpy(arg + p->count_off, &count,
			       p->count_u64 ? 8 : 4);
		}
	} else if (v >= 4096 && v < (UINT64_C(1) << 57)) {
		v |= UINT64_C(1) << 63;
	}
	memcpy(arg + p->off, &v, 8);
}

static void fix_block(uint8_t *arg, size_t size, const struct ioctl_entry *e)
{
	uint64_t v;
	size_t off;
	int i;

	for (i = 0; i < 3 && e->ptrs[i].used; i++) {
		fix_ptr(arg, size, &e->ptrs[i]);
	}
	/* Any other tagged word: SUBMIT's arrays, or a value in a field. */
	for (off = 0; off + 8 <= size; off += 8) {
		memcpy(&v, arg + off, 8);
		if ((v >> 32) == FUZZ_PTR_TAG) {
			v = (uint64_t)(uintptr_t)
				(scratch + (v & 0xffff) % SCRATCH_SIZE);
			memcpy(arg + off, &v, 8);
		}
	}
	if (e->timeout_off >= 0 && (size_t)e->timeout_off + 8 <= size) {
		memcpy(&v, arg + e->timeout_off, 8);
		v %= 1000000;
		memcpy(arg + e->timeout_off, &v, 8);
	}
	if (e->duration_off >= 0 && (size_t)e->duration_off + 8 <= size) {
		memcpy(&v, arg + e->duration_off, 8);
		v %= 100000;
		memcpy(arg + e->duration_off, &v, 8);
	}
}

/* No buffer of @file is reserved, now that every ioctl has returned. */
static void check_unlocked(struct ttm_drm_file *file)
{
	struct ttm_client *client = ttm_drm_file_client(file);
	uint32_t h;

	for (h = 1; h < MAX_HANDLE; h++) {
		struct ttm_bo *bo = ttm_client_lookup(client, h);

		if (!bo) {
			continue;
		}
		FUZZ_CHECK(!ww_mutex_is_locked(&bo->resv->lock),
			   "buffer of handle %u left reserved", h);
		ttm_bo_put(bo);
	}
}

static void check_device(const char *when)
{
	char why[256] = "";

	FUZZ_CHECK(ttm_device_check(dev, why, sizeof(why)) == 0,
		   "accounting broken %s: %s", when, why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ttm_drm_file *files[2];
	struct user_fds fds = { .n = 0 };
	size_t pos = 0, i;
	unsigned int n = 0;

	if (!ddev) {
		LLVMFuzzerInitialize(NULL, NULL);
	}
	for (i = 0; i < sizeof(scratch); i++) {
		scratch[i] = size ? data[i % size] : 0;
	}
	FUZZ_CHECK(ttm_drm_open(ddev, TTM_DRM_NODE_RENDER, &files[0]) == 0,
		   "open render");
	FUZZ_CHECK(ttm_drm_open(ddev, TTM_DRM_NODE_PRIMARY, &files[1]) == 0,
		   "open primary");

	/* A few ioctls an input: each is checked, not a long run. */
	while (pos + 2 <= size && n++ < MAX_IOCTLS) {
		const struct ioctl_entry *e =
			&ioctls[data[pos] % (sizeof(ioctls) / sizeof(ioctls[0]))];
		uint8_t how = data[pos + 1];
		unsigned long req = e->request;
		size_t len = _IOC_SIZE(req), take;
		uint8_t arg[256] = { 0 };
		int ret;

		pos += 2;
		if ((how & 2) && pos < size) {
			len = data[pos++];
			/*
			 * A returned descriptor must reach the caller, or
			 * it would leak, unknown (as in the kernel).
			 */
			if (e->fd_out && len < (size_t)e->fd_out + 4) {
				len = (size_t)e->fd_out + 4;
			}
			req = _IOC(_IOC_DIR(req), _IOC_TYPE(req), _IOC_NR(req),
				   len);
		}
		take = size - pos < len ? size - pos : len;
		memcpy(arg, data + pos, take);
		pos += take;
		fix_block(arg, len, e);
		fix_fd(arg, len, e, &fds);
		ret = ttm_drm_ioctl(files[how & 1], req, (how & 4) ? NULL : arg);
		FUZZ_CHECK(ret <= 0, "ioctl %#lx returned %d", req, ret);
		if (ret == 0 && !(how & 4)) {
			take_fd(&fds, e, arg);
		}
	}

	ttm_execbuf_wait_idle(dev);
	check_unlocked(files[0]);
	check_unlocked(files[1]);
	check_device("after the ioctls");
	ttm_drm_close(files[0]);
	ttm_drm_close(files[1]);
	close_user_fds(&fds);
	check_device("after close");
	return 0;
}
