/* SPDX-License-Identifier: MIT */
/*
 * The drm-shim's private declarations: an LD_PRELOAD library that serves
 * a primary and a render node from one ttmsim device per process.
 *
 * Every file of the shim includes this first: it undoes
 * _FILE_OFFSET_BITS=64 (which meson passes, and which makes glibc's
 * headers rename open() to open64() and so on), so that each interposer
 * is defined under its own name, and _FORTIFY_SOURCE, whose inline
 * wrappers would clash with our definitions of open() and friends.
 */
#ifndef TTMSIM_DRM_SHIM_H
#define TTMSIM_DRM_SHIM_H

#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "ttmsim/drm.h"

/* The symbols a program reaches through the shim. */
#define SHIM_EXPORT __attribute__((visibility("default")))

/* The major number of DRM's character devices, as in the kernel. */
#define SHIM_DRM_MAJOR 226

/*
 * A C library function, found with dlsym(RTLD_NEXT) on first use and
 * kept: SHIM_REAL(open) is a pointer of open's type.
 */
void *shim_real_lookup(void **slot, const char *name);
#define SHIM_REAL(fn)                                                       \
	({                                                                  \
		static void *slot_;                                         \
		(__typeof__(&fn))shim_real_lookup(&slot_, #fn);             \
	})

/**
 * struct shim_file - one open of a node, shared by its dups and mappings.
 * @file: the front end's file.
 * @refs: fds and mappings using it; the last put closes @file.
 */
struct shim_file {
	struct ttm_drm_file *file;
	unsigned int refs;
};

/* shim_dev.c: the nodes, and the device behind them, made on first use. */
bool shim_node_at(int dirfd, const char *path, enum ttm_drm_node *node);
int shim_open_node(enum ttm_drm_node node, int flags);
void shim_fake_stat(enum ttm_drm_node node, struct stat *st);
bool shim_sysfs_drm_dir(const char *path);
void shim_fake_sysfs_stat(struct stat *st);

/* shim_fd.c: fd -> file and mapping -> file tables. */
int shim_fd_set(int fd, struct shim_file *sf, struct shim_file **ret_old);
struct shim_file *shim_fd_get(int fd);
void shim_file_put(struct shim_file *sf);
int shim_map_add(void *addr, size_t length, struct shim_file *sf);
struct shim_file *shim_map_remove(void *addr, size_t length, int *ret_err);
void shim_fd_forget_range(unsigned int first, unsigned int last);
void shim_fd_forget_all(void);

/* shim_dev.c: one shim_file fewer (the device may go at exit). */
void shim_file_closed(void);
/* Does the range touch the device's memory (ttm_drm_device_mem_overlaps())? */
bool shim_dev_mem_overlaps(const void *addr, size_t length);

#endif
