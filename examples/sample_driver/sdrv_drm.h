/* SPDX-License-Identifier: MIT */
/*
 * The sample driver's uAPI, as a kernel driver's include/uapi/drm/<name>_drm.h:
 * what a libdrm-style client includes to drive it through ttm_drm_ioctl()
 * (or drmIoctl() under the drm-shim).
 *
 * The usual uAPI rules: fixed-size fields at natural alignment, sizes a
 * multiple of 8, user pointers as __u64, and every pad and unknown flag
 * bit must be zero (-EINVAL), so that a later version can give them a
 * meaning. Numbers are never reused.
 */
#ifndef SDRV_DRM_H
#define SDRV_DRM_H

#include <drm.h>   /* libdrm's */

#define DRM_SDRV_DRIVER_NAME "sdrv"

#define DRM_SDRV_GEM_CREATE       0x00
#define DRM_SDRV_GEM_MMAP_OFFSET  0x01
#define DRM_SDRV_GEM_INFO         0x02
#define DRM_SDRV_SUBMIT           0x03
#define DRM_SDRV_WAIT             0x04
#define DRM_SDRV_FLIP             0x05
#define DRM_SDRV_FLIP_STATUS      0x06

/* drm_sdrv_gem_create::flags: the buffer may be scanned out (FLIP). */
#define DRM_SDRV_GEM_SCANOUT      (1u << 0)

/**
 * struct drm_sdrv_gem_create - a new zeroed buffer, VRAM preferred, GTT else.
 * @size: in: bytes, a multiple of 4, at most 1 GiB.
 * @flags: in: DRM_SDRV_GEM_*.
 * @handle: out: its GEM handle.
 */
struct drm_sdrv_gem_create {
	__u64 size;
	__u32 flags;
	__u32 handle;
};

/**
 * struct drm_sdrv_gem_mmap_offset - the fake offset to mmap a buffer at.
 * @handle: in.
 * @pad: must be 0.
 * @offset: out.
 */
struct drm_sdrv_gem_mmap_offset {
	__u32 handle;
	__u32 pad;
	__u64 offset;
};

/* drm_sdrv_gem_info::domain */
#define DRM_SDRV_DOMAIN_VRAM      0
#define DRM_SDRV_DOMAIN_GTT       1
#define DRM_SDRV_DOMAIN_SYSTEM    2

/**
 * struct drm_sdrv_gem_info - where a buffer lives and how often it is
 *	pinned (scanout, mappings): a debugging aid.
 * @handle: in.
 * @domain: out: DRM_SDRV_DOMAIN_*.
 * @pin_count: out.
 * @pad: must be 0.
 */
struct drm_sdrv_gem_info {
	__u32 handle;
	__u32 domain;
	__u32 pin_count;
	__u32 pad;
};

/* drm_sdrv_submit_bo::flags */
#define DRM_SDRV_BO_READ          (1u << 0)
#define DRM_SDRV_BO_WRITE         (1u << 1)

/**
 * struct drm_sdrv_submit_bo - one buffer of a job.
 * @handle: the buffer; it may be listed more than once (READ and WRITE
 *	entries of one buffer make one WRITE use).
 * @flags: DRM_SDRV_BO_READ and/or _WRITE, at least one.
 */
struct drm_sdrv_submit_bo {
	__u32 handle;
	__u32 flags;
};

/* drm_sdrv_submit::flags: the job hangs (tests the GPU watchdog). */
#define DRM_SDRV_SUBMIT_HANG      (1u << 0)

#define DRM_SDRV_MAX_BOS          256u
/* drm_sdrv_submit::duration_ns: at most ten seconds. */
#define DRM_SDRV_MAX_DURATION_NS  10000000000ull

/**
 * struct drm_sdrv_submit - run one job on the render engine: add @value
 *	to every 32-bit word of every buffer it writes.
 * @bos: in: pointer to @bo_count struct drm_sdrv_submit_bo.
 * @bo_count: in: 1 to DRM_SDRV_MAX_BOS.
 * @flags: in: DRM_SDRV_SUBMIT_*.
 * @value: in: what to add.
 * @pad: must be 0.
 * @duration_ns: in: how long the job runs on the GPU, at most
 *	DRM_SDRV_MAX_DURATION_NS.
 * @seqno: out: the job's fence for DRM_IOCTL_SDRV_WAIT, never 0.
 *
 * Return: 0; -EFAULT for a bad @bos; -ENOENT for a bad handle or one of
 * a buffer not of this driver (a dumb buffer, a PRIME import); -EINVAL
 * for flags, pad, counts; -ENOSPC if the buffers cannot fit; -EBUSY if
 * the file's job of 4,096 submits ago is still running (WAIT's table
 * keeps that many); -EINTR.
 */
struct drm_sdrv_submit {
	__u64 bos;
	__u32 bo_count;
	__u32 flags;
	__u32 value;
	__u32 pad;
	__u64 duration_ns;
	__u64 seqno;
};

/**
 * struct drm_sdrv_wait - wait for a job of this file.
 * @seqno: in: from SUBMIT.
 * @timeout_ns: in: relative; 0 just tests; above INT64_MAX: forever.
 *	Not updated on -EINTR: a restarted WAIT waits the whole timeout
 *	again (msm's absolute timeouts avoid that; this one is simpler).
 * @status: out: 0 if the job ran, else its negative error (-ETIMEDOUT:
 *	it hung and the watchdog reset the engine).
 * @pad: must be 0.
 *
 * Return: 0 once done (see @status); -ETIME; -ENOENT for an unknown
 * @seqno, or one of more than 4,096 submits ago; -EINTR.
 */
struct drm_sdrv_wait {
	__u64 seqno;
	__u64 timeout_ns;
	__s32 status;
	__u32 pad;
};

/**
 * struct drm_sdrv_flip - show a framebuffer on the one CRTC (master only).
 * @handle: in: a DRM_SDRV_GEM_SCANOUT buffer; 0 turns the display off.
 * @flags: in: must be 0.
 * @flip_id: out: for DRM_IOCTL_SDRV_FLIP_STATUS.
 *
 * Non-blocking: the flip happens once the GPU work writing the buffer
 * is done. Return: 0; -ENOENT; -EINVAL (not a scanout buffer, such as
 * a dumb buffer or an import, flags, or pinned elsewhere: mapped while
 * in GTT); -EBUSY if the flip made
 * 1,024 flips ago is not done yet (its scanout log slot is reused);
 * -ENOSPC if it cannot be placed in CPU-visible VRAM; -EINTR.
 */
struct drm_sdrv_flip {
	__u32 handle;
	__u32 flags;
	__u64 flip_id;
};

/* drm_sdrv_flip_status::flags: wait until the flip is done. */
#define DRM_SDRV_FLIP_STATUS_WAIT (1u << 0)

/**
 * struct drm_sdrv_flip_status - what a flip scanned out (the scanout log).
 * @flip_id: in.
 * @flags: in: DRM_SDRV_FLIP_STATUS_*.
 * @done: out: 1 once the flip is shown and the framebuffer it replaced
 *	is released (unpinned).
 * @status: out: with @done, 0 or the display job's error.
 * @word0: out: the first 32-bit word of the buffer scanned out.
 * @checksum: out: the sum of its 32-bit words.
 * @size: out: its bytes; 0 for "display off".
 *
 * The driver keeps the records of the last 1,024 flips.
 *
 * Return: 0; -ENOENT for an unknown @flip_id, or one older than the last
 * 1,024; -EINVAL for flags.
 */
struct drm_sdrv_flip_status {
	__u64 flip_id;
	__u32 flags;
	__u32 done;
	__s32 status;
	__u32 word0;
	__u64 checksum;
	__u64 size;
};

#define DRM_IOCTL_SDRV_GEM_CREATE DRM_IOWR(DRM_COMMAND_BASE + \
	DRM_SDRV_GEM_CREATE, struct drm_sdrv_gem_create)
#define DRM_IOCTL_SDRV_GEM_MMAP_OFFSET DRM_IOWR(DRM_COMMAND_BASE + \
	DRM_SDRV_GEM_MMAP_OFFSET, struct drm_sdrv_gem_mmap_offset)
#define DRM_IOCTL_SDRV_GEM_INFO DRM_IOWR(DRM_COMMAND_BASE + \
	DRM_SDRV_GEM_INFO, struct drm_sdrv_gem_info)
#define DRM_IOCTL_SDRV_SUBMIT DRM_IOWR(DRM_COMMAND_BASE + \
	DRM_SDRV_SUBMIT, struct drm_sdrv_submit)
#define DRM_IOCTL_SDRV_WAIT DRM_IOWR(DRM_COMMAND_BASE + \
	DRM_SDRV_WAIT, struct drm_sdrv_wait)
#define DRM_IOCTL_SDRV_FLIP DRM_IOWR(DRM_COMMAND_BASE + \
	DRM_SDRV_FLIP, struct drm_sdrv_flip)
#define DRM_IOCTL_SDRV_FLIP_STATUS DRM_IOWR(DRM_COMMAND_BASE + \
	DRM_SDRV_FLIP_STATUS, struct drm_sdrv_flip_status)

#endif /* SDRV_DRM_H */
