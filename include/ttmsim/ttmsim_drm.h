/* SPDX-License-Identifier: MIT */
/*
 * The uAPI of ttmsim's built-in DRM driver, "ttmsim"
 * (ttm_drm_ttmsim_driver()): its private ioctls, as a kernel driver's
 * include/uapi/drm/<driver>_drm.h. Userspace includes it with libdrm's
 * headers on its include path (pkg-config libdrm) and calls drmIoctl()
 * on a node the drm-shim serves, or ttm_drm_ioctl() on a file.
 *
 * The rules every struct here follows, so that the layout is the same
 * for 32- and 64-bit userspace and the ABI can grow:
 * - fixed-size types only (__u32, __u64; __s32 for a file descriptor,
 *   as drm.h's), each field at its natural alignment, explicit padding,
 *   the size a multiple of 8;
 * - user pointers are __u64 (cast through uintptr_t);
 * - every flag bit not defined below, and every pad or reserved field,
 *   must be zero: -EINVAL otherwise, so that a later version can give
 *   them a meaning and old kernels refuse what they do not know;
 * - the core's size rules apply (docs/drm-design.md): a struct shorter
 *   than this header's is zero-extended, so fields appended later read
 *   as 0 for old userspace; extra bytes of a longer one must be zero.
 *
 * Errors, as a kernel driver's: -EFAULT for a user pointer the driver
 * can tell is bad (NULL with a non-zero count, or the core's check),
 * -EINVAL for reserved bits, pads, unknown values and bad counts,
 * -ENOENT for a handle (buffer or syncobj) the file does not have,
 * -EACCES for a priority the file may not take. SUBMIT says which array
 * entry an error is about (error_array, error_index).
 */
#ifndef TTMSIM_TTMSIM_DRM_H
#define TTMSIM_TTMSIM_DRM_H

#include <drm.h>   /* libdrm's, not ttmsim/drm.h: hence the brackets */

#ifdef __cplusplus
extern "C" {
#endif

/* The driver's name, as DRM_IOCTL_VERSION reports it. */
#define DRM_TTMSIM_DRIVER_NAME "ttmsim"

/* Ioctl numbers, from DRM_COMMAND_BASE; never reused. */
#define DRM_TTMSIM_GET_PARAM		0x00
#define DRM_TTMSIM_GEM_CREATE		0x01
#define DRM_TTMSIM_GEM_MMAP_OFFSET	0x02
#define DRM_TTMSIM_GEM_WAIT		0x03
#define DRM_TTMSIM_SUBMIT		0x04
#define DRM_TTMSIM_SET_PRIORITY		0x05

/* ---- GET_PARAM ---------------------------------------------------------- */

/**
 * enum drm_ttmsim_param - what DRM_IOCTL_TTMSIM_GET_PARAM reports.
 * @DRM_TTMSIM_PARAM_VRAM_SIZE: VRAM's capacity in bytes.
 * @DRM_TTMSIM_PARAM_GTT_SIZE: GTT's capacity in bytes.
 * @DRM_TTMSIM_PARAM_VISIBLE_VRAM_SIZE: the CPU-visible bytes of VRAM,
 *	from its start (DRM_TTMSIM_GEM_CPU_VISIBLE).
 * @DRM_TTMSIM_PARAM_PAGE_SIZE: the allocation granularity in bytes: the
 *	unit of drm_ttmsim_gem_create's fpfn and lpfn; sizes are rounded
 *	up to it.
 * @DRM_TTMSIM_PARAM_NUM_ENGINES: the GPU's engines; SUBMIT's engine is
 *	below it.
 * @DRM_TTMSIM_PARAM_MAX_BO_SIZE: the largest buffer, in bytes.
 * @DRM_TTMSIM_PARAM_CLOCK_NS: the time now on the clock GEM_WAIT's
 *	absolute timeouts count on: CLOCK_MONOTONIC, or the virtual
 *	clock's time (in ns) on a deterministic GPU.
 * @DRM_TTMSIM_PARAM_VIRTUAL_CLOCK: 1 if the GPU runs on a virtual clock
 *	(TTM_GPU_DETERMINISTIC), else 0.
 */
enum drm_ttmsim_param {
	DRM_TTMSIM_PARAM_VRAM_SIZE = 0,
	DRM_TTMSIM_PARAM_GTT_SIZE = 1,
	DRM_TTMSIM_PARAM_VISIBLE_VRAM_SIZE = 2,
	DRM_TTMSIM_PARAM_PAGE_SIZE = 3,
	DRM_TTMSIM_PARAM_NUM_ENGINES = 4,
	DRM_TTMSIM_PARAM_MAX_BO_SIZE = 5,
	DRM_TTMSIM_PARAM_CLOCK_NS = 6,
	DRM_TTMSIM_PARAM_VIRTUAL_CLOCK = 7,
};

/**
 * struct drm_ttmsim_get_param - DRM_IOCTL_TTMSIM_GET_PARAM.
 * @param: in: an enum drm_ttmsim_param; another is -EINVAL.
 * @pad: must be 0.
 * @value: out.
 */
struct drm_ttmsim_get_param {
	__u32 param;
	__u32 pad;
	__u64 value;
};

/* ---- GEM_CREATE --------------------------------------------------------- */

/*
 * drm_ttmsim_gem_create::domains: where the buffer may live, tried in
 * this order (VRAM first); at least one.
 */
#define DRM_TTMSIM_GEM_DOMAIN_VRAM	(1u << 0)
#define DRM_TTMSIM_GEM_DOMAIN_GTT	(1u << 1)
#define DRM_TTMSIM_GEM_DOMAIN_SYSTEM	(1u << 2)
#define DRM_TTMSIM_GEM_DOMAIN_MASK	0x7u

/* drm_ttmsim_gem_create::flags: in one piece (TTM_PL_FLAG_CONTIGUOUS). */
#define DRM_TTMSIM_GEM_CONTIGUOUS	(1u << 0)
/* ... from the top of the range down (TTM_PL_FLAG_TOPDOWN). */
#define DRM_TTMSIM_GEM_TOPDOWN		(1u << 1)
/* ... in VRAM, only its CPU-visible part (needs DOMAIN_VRAM). */
#define DRM_TTMSIM_GEM_CPU_VISIBLE	(1u << 2)
/* ... the VRAM and GTT places take fpfn and lpfn (else both must be 0). */
#define DRM_TTMSIM_GEM_RANGE		(1u << 3)
#define DRM_TTMSIM_GEM_CREATE_FLAGS	0xfu

/**
 * struct drm_ttmsim_gem_create - DRM_IOCTL_TTMSIM_GEM_CREATE: a new,
 *	zero-filled buffer and a handle for it.
 * @size: in: bytes, not 0; rounded up to DRM_TTMSIM_PARAM_PAGE_SIZE, as
 *	GEM objects are whole pages; at most DRM_TTMSIM_PARAM_MAX_BO_SIZE
 *	(-EINVAL). out: the rounded size.
 * @domains: in: DRM_TTMSIM_GEM_DOMAIN_*.
 * @flags: in: DRM_TTMSIM_GEM_*.
 * @fpfn: in: with DRM_TTMSIM_GEM_RANGE, the first page of the range the
 *	buffer must lie in, in VRAM and GTT (SYSTEM has no addresses).
 * @lpfn: in: with DRM_TTMSIM_GEM_RANGE, the page after the range's last
 *	(0: to the end of the domain).
 * @handle: out: the buffer's handle (never 0).
 * @pad: must be 0.
 *
 * Return: 0; -EINVAL (flags, domains, size, pads, a range that cannot
 * be); -ENOSPC if no domain allowed has room (after eviction).
 */
struct drm_ttmsim_gem_create {
	__u64 size;
	__u32 domains;
	__u32 flags;
	__u32 fpfn;
	__u32 lpfn;
	__u32 handle;
	__u32 pad;
};

/* ---- GEM_MMAP_OFFSET ---------------------------------------------------- */

/**
 * struct drm_ttmsim_gem_mmap_offset - DRM_IOCTL_TTMSIM_GEM_MMAP_OFFSET:
 *	the fake offset to mmap a buffer at (ttm_drm_mmap(), or mmap() on
 *	the node under the drm-shim), as MODE_MAP_DUMB gives for a dumb
 *	buffer, but on any node.
 * @handle: in: the buffer.
 * @flags: in: must be 0.
 * @offset: out: page-aligned; the same for every call on one buffer.
 *
 * Return: 0; -ENOENT for a bad handle; -EINVAL for flags.
 */
struct drm_ttmsim_gem_mmap_offset {
	__u32 handle;
	__u32 flags;
	__u64 offset;
};

/* ---- GEM_WAIT ----------------------------------------------------------- */

/* drm_ttmsim_gem_wait::flags: the caller will read: wait for writers. */
#define DRM_TTMSIM_WAIT_READ		(1u << 0)
/* ... will write: wait for readers and writers (with READ too: as this). */
#define DRM_TTMSIM_WAIT_WRITE		(1u << 1)
/* ... timeout_ns is a time on the device's clock (PARAM_CLOCK_NS). */
#define DRM_TTMSIM_WAIT_ABSOLUTE	(1u << 2)
#define DRM_TTMSIM_WAIT_FLAGS		0x7u

/* A timeout that never comes: any timeout_ns above INT64_MAX. */
#define DRM_TTMSIM_TIMEOUT_INFINITE	(~(__u64)0)

/**
 * struct drm_ttmsim_gem_wait - DRM_IOCTL_TTMSIM_GEM_WAIT: wait until the
 *	GPU work a CPU access must wait for is done (moves included).
 * @handle: in: the buffer.
 * @flags: in: DRM_TTMSIM_WAIT_READ and/or _WRITE (at least one),
 *	DRM_TTMSIM_WAIT_ABSOLUTE.
 * @timeout_ns: in: relative (default): how long, 0 just tests; absolute:
 *	until when, a time past just tests. Above INT64_MAX: forever.
 *
 * On a GPU with a virtual clock (DRM_TTMSIM_PARAM_VIRTUAL_CLOCK) the
 * timeout is virtual time, and the wait lets it pass: it advances the
 * GPU's clock event by event until the buffer is idle or no event is
 * left before the deadline (the clock stays at the last event's time),
 * so a wait's outcome is the same on every run. If the buffer is then
 * still busy only another thread (a syncobj signal, an advance) can make
 * it idle: a finite wait says -ETIME at once, a forever one blocks for it.
 * A wait that blocks is interruptible (ttm_interrupt_thread(): -EINTR),
 * as a kernel driver's; letting virtual time pass is not (it lasts as
 * long as the events it runs).
 *
 * Return: 0 once idle; -ETIME if the timeout came first; -ENOENT for a
 * bad handle; -EINVAL for flags or pad; -EINTR.
 */
struct drm_ttmsim_gem_wait {
	__u32 handle;
	__u32 flags;
	__u64 timeout_ns;
};

/* ---- SUBMIT ------------------------------------------------------------- */

/* drm_ttmsim_submit_bo::flags: the job reads the buffer. */
#define DRM_TTMSIM_BO_READ		(1u << 0)
/* ... writes it (ADD adds to it, COPY's destination). */
#define DRM_TTMSIM_BO_WRITE		(1u << 1)

/**
 * struct drm_ttmsim_submit_bo - one entry of a job's buffer list.
 * @handle: the buffer.
 * @flags: DRM_TTMSIM_BO_READ and/or _WRITE, at least one: implicit sync
 *	(a write waits for earlier readers and writers, a read for writers).
 */
struct drm_ttmsim_submit_bo {
	__u32 handle;
	__u32 flags;
};

/**
 * struct drm_ttmsim_syncobj - a syncobj a job waits for or signals, as
 *	the core's drm_syncobj_* ioctls name it.
 * @handle: a syncobj handle of the file.
 * @flags: must be 0.
 * @point: 0: binary: an in-syncobj's fence as it is, an out-syncobj's
 *	fence replaced; else a timeline point: an in-point must have been
 *	submitted (-EINVAL), an out-point is added.
 */
struct drm_ttmsim_syncobj {
	__u32 handle;
	__u32 flags;
	__u64 point;
};

/**
 * enum drm_ttmsim_op - what the fake GPU's job does when it runs.
 * @DRM_TTMSIM_OP_NOP: nothing (a job for its fences).
 * @DRM_TTMSIM_OP_ADD: add drm_ttmsim_submit::value to every 32-bit word
 *	of every buffer the job writes.
 * @DRM_TTMSIM_OP_COPY: exactly two buffers of one size: copy bos[0] (the
 *	source, READ) to bos[1] (the destination, WRITE).
 */
enum drm_ttmsim_op {
	DRM_TTMSIM_OP_NOP = 0,
	DRM_TTMSIM_OP_ADD = 1,
	DRM_TTMSIM_OP_COPY = 2,
};

/* drm_ttmsim_submit::flags: also wait for the sync file in fence_fd. */
#define DRM_TTMSIM_SUBMIT_FENCE_FD_IN	(1u << 0)
/* ... return the job's fence as a sync file in fence_fd. */
#define DRM_TTMSIM_SUBMIT_FENCE_FD_OUT	(1u << 1)
#define DRM_TTMSIM_SUBMIT_FLAGS		0x3u

/*
 * drm_ttmsim_submit::error_array: which array error_index is about
 * (NONE: the error is not about an entry).
 */
#define DRM_TTMSIM_ARRAY_NONE		0u
#define DRM_TTMSIM_ARRAY_BOS		1u
#define DRM_TTMSIM_ARRAY_IN_SYNCOBJS	2u
#define DRM_TTMSIM_ARRAY_OUT_SYNCOBJS	3u
#define DRM_TTMSIM_ARRAY_FENCE_FD	4u

/* At most this many entries in each array of a submission. */
#define DRM_TTMSIM_MAX_BOS		4096u
#define DRM_TTMSIM_MAX_SYNCOBJS		256u

/**
 * struct drm_ttmsim_submit - DRM_IOCTL_TTMSIM_SUBMIT: run one job on an
 *	engine of the fake GPU.
 * @bos: in: pointer to @bo_count struct drm_ttmsim_submit_bo, any order;
 *	a buffer listed twice is -EINVAL.
 * @in_syncobjs: in: pointer to @in_syncobj_count struct
 *	drm_ttmsim_syncobj the job waits for (their fences at the call); if
 *	one fails, the job fails with its error without running.
 * @out_syncobjs: in: pointer to @out_syncobj_count struct
 *	drm_ttmsim_syncobj that get the job's fence.
 * @duration_ns: in: how long the job runs on the GPU's clock, in ns,
 *	rounded up to whole microseconds (-EINVAL if that exceeds
 *	TTM_GPU_MAX_DURATION_US: from UINT64_MAX - 614 ns on).
 * @bo_count: in: 1 to DRM_TTMSIM_MAX_BOS.
 * @in_syncobj_count: in: 0 to DRM_TTMSIM_MAX_SYNCOBJS.
 * @out_syncobj_count: in: 0 to DRM_TTMSIM_MAX_SYNCOBJS.
 * @engine: in: below DRM_TTMSIM_PARAM_NUM_ENGINES.
 * @op: in: an enum drm_ttmsim_op.
 * @value: in: DRM_TTMSIM_OP_ADD's value; must be 0 for other ops.
 * @flags: in: DRM_TTMSIM_SUBMIT_*.
 * @fence_fd: in: with FENCE_FD_IN, a sync-file descriptor (it stays the
 *	caller's); out: with FENCE_FD_OUT, the job's fence as a new sync
 *	file (close-on-exec); else -1.
 * @error_array: out: DRM_TTMSIM_ARRAY_*: the array of the entry an
 *	error is about, NONE on success or an error about no entry.
 * @error_index: out: that entry's index in its array; 0 with NONE.
 * @pad: must be 0.
 *
 * The job goes through the file's scheduler entity of @engine
 * (DRM_IOCTL_TTMSIM_SET_PRIORITY sets their priority), after the
 * buffers are locked and validated into their own placements: see
 * ttm_execbuf_submit().
 *
 * Return: 0; -EFAULT for a NULL array with a non-zero count or a bad
 * user pointer; -ENOENT for a bad buffer or syncobj handle; -EINVAL for
 * flags, pads, op, value, engine or counts, a duplicate buffer, entry
 * flags, an in-point not submitted, an empty in-syncobj, a bad
 * FENCE_FD_IN descriptor, or COPY's buffers; -ENOSPC if the buffers can
 * never fit; -EINTR; -ENOMEM; -EMFILE (FENCE_FD_OUT).
 */
struct drm_ttmsim_submit {
	__u64 bos;
	__u64 in_syncobjs;
	__u64 out_syncobjs;
	__u64 duration_ns;
	__u32 bo_count;
	__u32 in_syncobj_count;
	__u32 out_syncobj_count;
	__u32 engine;
	__u32 op;
	__u32 value;
	__u32 flags;
	__s32 fence_fd;
	__u32 error_array;
	__u32 error_index;
	__u64 pad;
};

/* ---- SET_PRIORITY ------------------------------------------------------- */

/**
 * enum drm_ttmsim_priority - the priority of a file's jobs; higher ones
 *	run first on each engine.
 * @DRM_TTMSIM_PRIORITY_LOW: background work.
 * @DRM_TTMSIM_PRIORITY_NORMAL: the default.
 * @DRM_TTMSIM_PRIORITY_HIGH: before NORMAL; the master only.
 * @DRM_TTMSIM_PRIORITY_KERNEL: the device's own (its moves); the master only.
 */
enum drm_ttmsim_priority {
	DRM_TTMSIM_PRIORITY_LOW = 0,
	DRM_TTMSIM_PRIORITY_NORMAL = 1,
	DRM_TTMSIM_PRIORITY_HIGH = 2,
	DRM_TTMSIM_PRIORITY_KERNEL = 3,
};

/**
 * struct drm_ttmsim_set_priority - DRM_IOCTL_TTMSIM_SET_PRIORITY: the
 *	priority of the file's jobs, queued ones included.
 * @priority: in: an enum drm_ttmsim_priority.
 * @pad: must be 0.
 *
 * LOW and NORMAL are any file's. HIGH and KERNEL are the DRM master's
 * only (the first primary-node file while there is no master): the
 * kernel's drivers also let CAP_SYS_NICE in; ttmsim does not look at
 * capabilities, so that the answer is the same for root and others.
 * Another file (render node, or a primary one not master) gets -EACCES.
 *
 * Return: 0; -EINVAL for an unknown priority or pad; -EACCES.
 */
struct drm_ttmsim_set_priority {
	__u32 priority;
	__u32 pad;
};

/* ---- requests ----------------------------------------------------------- */

#define DRM_IOCTL_TTMSIM_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TTMSIM_GET_PARAM, \
		 struct drm_ttmsim_get_param)
#define DRM_IOCTL_TTMSIM_GEM_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TTMSIM_GEM_CREATE, \
		 struct drm_ttmsim_gem_create)
#define DRM_IOCTL_TTMSIM_GEM_MMAP_OFFSET \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TTMSIM_GEM_MMAP_OFFSET, \
		 struct drm_ttmsim_gem_mmap_offset)
#define DRM_IOCTL_TTMSIM_GEM_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TTMSIM_GEM_WAIT, \
		 struct drm_ttmsim_gem_wait)
#define DRM_IOCTL_TTMSIM_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TTMSIM_SUBMIT, \
		 struct drm_ttmsim_submit)
#define DRM_IOCTL_TTMSIM_SET_PRIORITY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_TTMSIM_SET_PRIORITY, \
		 struct drm_ttmsim_set_priority)

/* ---- the library's side -------------------------------------------- */

struct ttm_drm_driver;

/**
 * ttm_drm_ttmsim_driver() - the driver these ioctls belong to, for
 * ttm_drm_device_create() (ttmsim/drm.h).
 *
 * Userspace that only issues the ioctls never calls it; it is here so
 * that ttmsim/drm.h stands without the driver.
 *
 * Context: Does not sleep. Any thread.
 * Return: the driver, static: never freed.
 */
const struct ttm_drm_driver *ttm_drm_ttmsim_driver(void);

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_TTMSIM_DRM_H */
