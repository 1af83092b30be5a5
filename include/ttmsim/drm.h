/* SPDX-License-Identifier: MIT */
/*
 * A DRM front end on a ttmsim device: files opened on a primary ("card")
 * or render node, and ttm_drm_ioctl() taking the requests and argument
 * structs of libdrm's drm.h and drm_mode.h, as the kernel's drm_ioctl()
 * does, plus the driver-private ioctls of a struct ttm_drm_driver.
 *
 * A file wraps one struct ttm_client: its buffer handles are the GEM
 * handles, its syncobj table the DRM file's. The first file opened on the
 * primary node while no master exists is the master, as in the kernel
 * (which makes the first opener of a primary node master); render-node
 * files are never master and never authenticated, and only ioctls flagged
 * TTM_DRM_RENDER_ALLOW work on them.
 *
 * Every ioctl returns 0 or a negative errno, never sets errno: a shim that
 * serves ioctl(2) turns that into -1 and errno.
 *
 *	// Fill a buffer through a mapping: @offset from
 *	// DRM_IOCTL_MODE_MAP_DUMB (struct drm_mode_map_dumb's offset).
 *	static int fill(struct ttm_drm_file *file, uint64_t offset, size_t size)
 *	{
 *		unsigned char *p;
 *		int ret = ttm_drm_mmap(file, offset, size, (void **)&p);
 *
 *		if (ret)
 *			return ret;
 *		for (size_t i = 0; i < size; i++)
 *			p[i] = 0xff;
 *		return ttm_drm_munmap(file, p, size);
 *	}
 *
 * The built-in "ttmsim" driver, ttm_drm_ttmsim_driver(), and its uAPI are
 * declared in ttmsim/ttmsim_drm.h, not here (a change from issue 18's
 * contract: only the name's header moved), so that this header, and its
 * symbols, stand without the driver.
 *
 * See docs/drm-design.md.
 */
#ifndef TTMSIM_DRM_H
#define TTMSIM_DRM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ttmsim/bo.h"
#include "ttmsim/execbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * enum ttm_drm_node - The kind of node a file is opened on.
 * @TTM_DRM_NODE_PRIMARY: /dev/dri/cardN: every ioctl, subject to its
 *	master and auth flags.
 * @TTM_DRM_NODE_RENDER: /dev/dri/renderD128+N: only TTM_DRM_RENDER_ALLOW
 *	ioctls; the rest fail with -EACCES, as the kernel's.
 */
enum ttm_drm_node {
	TTM_DRM_NODE_PRIMARY,
	TTM_DRM_NODE_RENDER,
};

/*
 * Flags of an ioctl, the kernel's DRM_AUTH, DRM_MASTER, DRM_ROOT_ONLY and
 * DRM_RENDER_ALLOW (same bits). TTM_DRM_AUTH: a primary-node file must be
 * authenticated: the master is, and a file the master
 * authenticated (DRM_IOCTL_GET_MAGIC, then DRM_IOCTL_AUTH_MAGIC), or root's. TTM_DRM_MASTER: only
 * the master. TTM_DRM_ROOT_ONLY: only a process with CAP_SYS_ADMIN, which
 * ttmsim takes to be euid 0. TTM_DRM_RENDER_ALLOW: allowed on render nodes.
 */
#define TTM_DRM_AUTH          (1u << 0)
#define TTM_DRM_MASTER        (1u << 1)
#define TTM_DRM_ROOT_ONLY     (1u << 2)
#define TTM_DRM_RENDER_ALLOW  (1u << 5)

struct ttm_drm_device;
struct ttm_drm_file;

/**
 * typedef ttm_drm_ioctl_fn - An ioctl's handler.
 * @file: the file the ioctl is made on.
 * @data: the argument, a kernel-side copy of the size of the table
 *	entry's @cmd: zero-extended if the caller's struct was shorter, and
 *	copied back (as much as the caller's size) if @cmd has _IOC_READ.
 *
 * Context: May sleep. Called from ttm_drm_ioctl() with no lock of
 * ttmsim held.
 * Return: 0 or a negative errno; the copy goes back either way, as the
 * kernel's, so a failing handler leaves @data as it found it.
 */
typedef int ttm_drm_ioctl_fn(struct ttm_drm_file *file, void *data);

/**
 * struct ttm_drm_ioctl_desc - One ioctl of a table, as drm_ioctl_desc.
 * @cmd: the full request, DRM_IOWR(nr, struct ...): its size is the size
 *	of the handler's struct; its direction says what is copied.
 * @flags: TTM_DRM_* flags.
 * @func: the handler; NULL makes the entry unused (-EINVAL).
 * @name: for messages, e.g. "TTMSIM_GEM_CREATE".
 */
struct ttm_drm_ioctl_desc {
	unsigned int cmd;
	unsigned int flags;
	ttm_drm_ioctl_fn *func;
	const char *name;
};

/**
 * struct ttm_drm_driver - A driver on the front end, as drm_driver.
 * @name: DRM_IOCTL_VERSION's name.
 * @desc: its description.
 * @date: its date.
 * @major: its version.
 * @minor: its version.
 * @patchlevel: its version.
 * @open: optional: called at ttm_drm_open() once the file is set up, to
 *	give it per-file driver state (ttm_drm_file_set_driver_priv()); an
 *	error fails the open.
 * @postclose: optional: called at ttm_drm_close() before the file's
 *	handles are dropped, to free that state.
 * @ioctls: the driver-private ioctls, index nr - DRM_COMMAND_BASE.
 * @num_ioctls: their number (at most DRM_COMMAND_END - DRM_COMMAND_BASE).
 */
struct ttm_drm_driver {
	const char *name;
	const char *desc;
	const char *date;
	int major;
	int minor;
	int patchlevel;
	int (*open)(struct ttm_drm_file *file);
	void (*postclose)(struct ttm_drm_file *file);
	const struct ttm_drm_ioctl_desc *ioctls;
	unsigned int num_ioctls;
};

/**
 * ttm_drm_device_create() - a DRM device on @dev.
 * @dev: the ttmsim device; it stays the caller's and must outlive the
 *	DRM device.
 * @driver: the driver; must outlive the DRM device.
 * @ret_ddev: the new DRM device.
 *
 * Context: Does not sleep.
 * Return: 0 and *@ret_ddev; -EINVAL for a NULL @dev or @driver, a NULL
 * name, or too many driver ioctls; -ENOMEM.
 */
int ttm_drm_device_create(struct ttm_device *dev,
			  const struct ttm_drm_driver *driver,
			  struct ttm_drm_device **ret_ddev);

/**
 * ttm_drm_device_destroy() - free @ddev.
 * @ddev: the DRM device, or NULL. Every file must be closed.
 *
 * Context: Does not sleep.
 */
void ttm_drm_device_destroy(struct ttm_drm_device *ddev);

/**
 * ttm_drm_device_ttm() - the ttmsim device under @ddev.
 * @ddev: the DRM device.
 *
 * Context: Does not sleep.
 * Return: the device given to ttm_drm_device_create().
 */
struct ttm_device *ttm_drm_device_ttm(struct ttm_drm_device *ddev);

/**
 * ttm_drm_open() - open a file on a node of @ddev.
 * @ddev: the DRM device.
 * @node: the node.
 * @ret_file: the new file.
 *
 * The file gets a new struct ttm_client. On the primary node, it becomes
 * the master if no file is master.
 *
 * Context: May sleep (the driver's open()). Takes and releases @ddev's
 * lock.
 * Return: 0 and *@ret_file; -EINVAL for an unknown @node; -ENOMEM; the
 * driver's open() error.
 */
int ttm_drm_open(struct ttm_drm_device *ddev, enum ttm_drm_node node,
		 struct ttm_drm_file **ret_file);

/**
 * ttm_drm_close() - close @file.
 * @file: the file, or NULL.
 *
 * Calls the driver's postclose(), unmaps what @file still has mapped
 * (the kernel keeps a mapping past close(); ttmsim cannot, since the
 * mapping is the pinned buffer's own memory: its address stops being
 * valid), drops its handles and syncobjs, and its mastership.
 *
 * Context: May sleep (unpinning waits for reservations). No reservation
 * of the device held. Takes and releases the device's lock.
 */
void ttm_drm_close(struct ttm_drm_file *file);

/**
 * ttm_drm_ioctl() - an ioctl on @file, as the kernel's drm_ioctl().
 * @file: the file.
 * @request: the request: DRM_IOCTL_* of drm.h/drm_mode.h, or a driver's.
 * @arg: the caller's argument struct (a user pointer), of the size the
 *	request encodes; NULL or an obviously bad pointer is -EFAULT.
 *
 * The size in @request may differ from ttmsim's struct: a shorter one is
 * zero-extended, bytes past ttmsim's must be zero (else -EINVAL), and as
 * much as the caller's size is copied back.
 *
 * Context: May sleep (waits, reservations). No reservation of the
 * device held.
 * Return: 0 or a negative errno: -EINVAL for an unknown request, -EACCES
 * or -EPERM for one the file may not make, -EFAULT for a bad pointer, and
 * each ioctl's own (docs/drm-design.md).
 */
int ttm_drm_ioctl(struct ttm_drm_file *file, unsigned long request,
		  void *arg);

/**
 * ttm_drm_file_client() - the client behind @file.
 * @file: the file.
 *
 * Context: Does not sleep.
 * Return: the client, valid until ttm_drm_close().
 */
struct ttm_client *ttm_drm_file_client(struct ttm_drm_file *file);

/**
 * ttm_drm_file_driver_priv() - the driver's per-file state.
 * @file: the file.
 *
 * Context: Does not sleep.
 * Return: what ttm_drm_file_set_driver_priv() set, or NULL.
 */
void *ttm_drm_file_driver_priv(struct ttm_drm_file *file);

/**
 * ttm_drm_file_set_driver_priv() - set the driver's per-file state.
 * @file: the file.
 * @priv: the state; the driver frees it in its postclose().
 *
 * Context: Does not sleep. Normally called from the driver's open().
 */
void ttm_drm_file_set_driver_priv(struct ttm_drm_file *file, void *priv);

/**
 * ttm_drm_file_node() - the node @file was opened on.
 * @file: the file.
 *
 * Context: Does not sleep.
 * Return: the node.
 */
enum ttm_drm_node ttm_drm_file_node(const struct ttm_drm_file *file);

/**
 * ttm_drm_file_device() - the DRM device of @file.
 * @file: the file.
 *
 * Context: Does not sleep.
 * Return: the device.
 */
struct ttm_drm_device *ttm_drm_file_device(struct ttm_drm_file *file);

/**
 * ttm_drm_file_is_master() - whether @file is its device's master.
 * @file: the file.
 *
 * Context: Does not sleep. Takes and releases the device's lock.
 * Return: true for the master.
 */
bool ttm_drm_file_is_master(struct ttm_drm_file *file);

/**
 * ttm_drm_mmap_offset() - the fake mmap offset of @handle's buffer.
 * @file: the file.
 * @handle: a buffer handle of @file's client.
 * @ret_offset: the offset, a multiple of the page size, unique in the
 *	device's offset space, the same for the buffer every time (and in
 *	every file: the space is the device's, as drm_vma_offset_manager).
 *
 * What DRM_IOCTL_MODE_MAP_DUMB answers, for a driver's own mmap-offset
 * ioctl to use too.
 *
 * Context: Does not sleep. Takes and releases the device's lock.
 * Return: 0 and *@ret_offset; -ENOENT for a bad handle; -ENOSPC when the
 * offset space is full; -ENOMEM.
 */
int ttm_drm_mmap_offset(struct ttm_drm_file *file, uint32_t handle,
			uint64_t *ret_offset);

/**
 * ttm_drm_mmap() - map the buffer at fake @offset.
 * @file: the file.
 * @offset: from DRM_IOCTL_MODE_MAP_DUMB or ttm_drm_mmap_offset().
 * @length: bytes from the buffer's start; at most its size.
 * @ret_addr: the buffer's CPU address, page-aligned.
 *
 * The buffer is pinned while mapped (once per mapping): it stays where it
 * is, so the address stays valid and coherent while other buffers move,
 * and eviction passes it by. If the buffer is in SYSTEM, whose memory is
 * not page-aligned, it is first moved to GTT (docs/drm-design.md). Only
 * @file's handles can be mapped, as the kernel checks drm_vma_node_is_allowed().
 *
 * Context: May sleep (the buffer's reservation, a move). No reservation
 * of the device held. Takes and releases the device's lock.
 * Return: 0 and *@ret_addr; -EINVAL for a zero @length or an offset not
 * a buffer's start, or a buffer pinned where its memory is not
 * page-aligned (in SYSTEM); -EACCES if @file has no handle for the buffer;
 * -ENOMEM, -ENOSPC if it could not be placed.
 */
int ttm_drm_mmap(struct ttm_drm_file *file, uint64_t offset, size_t length,
		 void **ret_addr);

/**
 * ttm_drm_munmap() - undo ttm_drm_mmap().
 * @file: the file that mapped it.
 * @addr: the address ttm_drm_mmap() gave.
 * @length: the length it was given.
 *
 * Unpins the buffer and drops the mapping's reference.
 *
 * Context: May sleep (the buffer's reservation). No reservation of the
 * device held. Takes and releases the device's lock.
 * Return: 0; -EINVAL if @addr and @length are not a mapping of @file.
 */
int ttm_drm_munmap(struct ttm_drm_file *file, void *addr, size_t length);

/**
 * ttm_drm_copy_from_user() - copy a driver ioctl's user array in, as the
 * kernel's copy_from_user().
 * @dst: where to copy to, @len bytes of the driver's.
 * @uptr: the user pointer, as a uAPI struct's __u64 carries it.
 * @len: how many bytes; 0 copies nothing and always succeeds.
 *
 * The core checks the argument struct of every ioctl; an array the struct
 * points to is the driver's to copy. This applies the same rules, so a
 * driver's -EFAULT says what the core's does: a pointer no process could
 * own (the first page, past the user address space, a range that wraps)
 * is refused without being touched, and memory the process cannot read
 * is refused too where the kernel lets ttmsim check that
 * (process_vm_readv(); a sandbox that forbids it leaves the range check).
 *
 * Context: Does not sleep. Takes no lock.
 * Return: 0; -EFAULT, with @dst unspecified.
 */
int ttm_drm_copy_from_user(void *dst, uint64_t uptr, size_t len);

/**
 * ttm_drm_device_mem_overlaps() - does a range touch the device's memory?
 * @ddev: the device.
 * @addr: the start of the range.
 * @length: its length in bytes.
 *
 * Buffers in VRAM and GTT live in arenas the library mapped once for the
 * device's life; a mapping hands out their addresses. A front end that
 * stands in for munmap(2) (the drm-shim) asks this before passing a range
 * that is not a live mapping on to the C library: unmapping arena pages
 * would pull the memory from under other buffers, so such a call must
 * fail instead (the kernel, which owns its mappings, has no such hazard).
 *
 * Context: Does not sleep. Takes no lock: the arenas do not move.
 * Return: true if [@addr, @addr + @length) overlaps an arena.
 */
bool ttm_drm_device_mem_overlaps(struct ttm_drm_device *ddev,
				 const void *addr, size_t length);

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_DRM_H */
