/* SPDX-License-Identifier: MIT */
/*
 * The DRM front end's private state (drm/): devices, files, the fake
 * mmap offset space and the mappings. Not installed.
 */
#ifndef TTMSIM_DRM_PRIV_H
#define TTMSIM_DRM_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ttmsim/drm.h"
#include "util/list.h"

/*
 * One buffer's range in the device's fake offset space, as the kernel's
 * drm_vma_offset_node: it holds a reference to the buffer, and the files
 * allowed to map it (those that asked for its offset). It goes when the
 * last of them closes its handle (GEM_CLOSE, DESTROY_DUMB) or the file.
 */
struct drm_offset_node {
	struct ttm_bo *bo;
	uint64_t start;                  /* bytes, page-aligned */
	uint64_t size;                   /* bytes, whole pages */
	struct ttm_drm_file **allowed;
	unsigned int num_allowed;
};

/* One ttm_drm_mmap() of a file: the buffer is pinned once for it. */
struct drm_mapping {
	void *addr;
	size_t length;
	struct ttm_bo *bo;               /* a reference */
};

struct ttm_drm_device {
	struct ttm_device *dev;
	const struct ttm_drm_driver *driver;
	uint64_t page_size;              /* the offset space's granule */
	pthread_mutex_t lock;            /* what follows */
	struct ttm_drm_file *master;
	struct list_node files;          /* open files, for AUTH_MAGIC */
	uint32_t next_magic;
	struct drm_offset_node **nodes;  /* sorted by start */
	unsigned int num_nodes, cap_nodes;
};

struct ttm_drm_file {
	struct ttm_drm_device *ddev;
	struct ttm_client *client;
	enum ttm_drm_node node;
	void *driver_priv;
	uint32_t magic;                  /* GET_MAGIC's, unique in the device */
	/* Under ddev->lock: */
	bool authenticated;              /* AUTH_MAGIC by the master */
	struct list_node link;           /* in ddev->files */
	/* Under ddev->lock: */
	struct drm_mapping *maps;
	unsigned int num_maps, cap_maps;
};

/* drm/offset.c: the offset space, under ddev->lock unless said. */
/* The node whose range holds @offset, or NULL. */
struct drm_offset_node *drm_offset_lookup(struct ttm_drm_device *ddev,
					  uint64_t offset);
/* Whether @file may map @node's buffer. */
bool drm_offset_allowed(const struct drm_offset_node *node,
			const struct ttm_drm_file *file);
/*
 * Take @file's right to map @bo (every buffer, for NULL). The first node
 * left with no right goes, and its buffer is returned, for the caller to
 * put once unlocked and call again; NULL when done.
 */
struct ttm_bo *drm_offset_revoke(struct ttm_drm_file *file,
				 struct ttm_bo *bo);
/* drm_offset_revoke() to the end, taking and releasing ddev->lock. */
void drm_offset_revoke_put(struct ttm_drm_file *file, struct ttm_bo *bo);
/* Free the space, empty by then: at device destroy. */
void drm_offset_fini(struct ttm_drm_device *ddev);

/* drm/mmap.c: unmap everything @file still has mapped (at close). */
void drm_mmap_release(struct ttm_drm_file *file);

/* drm/ioctl_*.c: the core ioctls' handlers. */
int drm_ioctl_get_magic(struct ttm_drm_file *file, void *data);
int drm_ioctl_auth_magic(struct ttm_drm_file *file, void *data);
int drm_ioctl_version(struct ttm_drm_file *file, void *data);
int drm_ioctl_get_cap(struct ttm_drm_file *file, void *data);
int drm_ioctl_set_client_cap(struct ttm_drm_file *file, void *data);
int drm_ioctl_gem_close(struct ttm_drm_file *file, void *data);
int drm_ioctl_prime_handle_to_fd(struct ttm_drm_file *file, void *data);
int drm_ioctl_prime_fd_to_handle(struct ttm_drm_file *file, void *data);
int drm_ioctl_create_dumb(struct ttm_drm_file *file, void *data);
int drm_ioctl_map_dumb(struct ttm_drm_file *file, void *data);
int drm_ioctl_destroy_dumb(struct ttm_drm_file *file, void *data);
int drm_ioctl_syncobj_create(struct ttm_drm_file *file, void *data);
int drm_ioctl_syncobj_destroy(struct ttm_drm_file *file, void *data);
int drm_ioctl_syncobj_handle_to_fd(struct ttm_drm_file *file, void *data);
int drm_ioctl_syncobj_fd_to_handle(struct ttm_drm_file *file, void *data);
int drm_ioctl_syncobj_wait(struct ttm_drm_file *file, void *data);
int drm_ioctl_syncobj_timeline_wait(struct ttm_drm_file *file, void *data);
int drm_ioctl_syncobj_reset(struct ttm_drm_file *file, void *data);
int drm_ioctl_syncobj_signal(struct ttm_drm_file *file, void *data);
int drm_ioctl_syncobj_timeline_signal(struct ttm_drm_file *file, void *data);
int drm_ioctl_syncobj_query(struct ttm_drm_file *file, void *data);
int drm_ioctl_syncobj_transfer(struct ttm_drm_file *file, void *data);
int drm_ioctl_syncobj_eventfd(struct ttm_drm_file *file, void *data);

/*
 * Whether @uptr, a __u64 user pointer of @len bytes, may be dereferenced:
 * false for NULL (with @len > 0), a value beyond the user address space
 * or that wraps. It cannot see an unmapped page (no signal handler):
 * docs/drm-design.md.
 */
bool drm_user_ptr_ok(uint64_t uptr, uint64_t len);

/*
 * The kernel's copy_to_user(): @len bytes of @src to the user pointer
 * @uptr, at any alignment, with ttm_drm_copy_from_user()'s checks (range,
 * and writable memory where process_vm_writev() is allowed). 0 or -EFAULT.
 */
int drm_copy_to_user(uint64_t uptr, const void *src, size_t len);

/*
 * Copy @count entries of @size bytes from the user array at @uptr into a
 * new allocation (*@ret, NULL for 0 entries), at any alignment:
 * -EFAULT for a NULL @uptr with entries or memory the process cannot
 * read, -ENOMEM. The caller frees *@ret.
 */
int drm_copy_array(uint64_t uptr, uint32_t count, size_t size, void **ret);

#endif /* TTMSIM_DRM_PRIV_H */
