// SPDX-License-Identifier: MIT
/*
 * The stat() family: a node, by path or by fd, is a character device
 * with DRM's major number (libdrm checks it: drmGetNodeTypeFromFd(),
 * drmGetDevice2()), and its sysfs directory .../device/drm exists (the
 * same check looks for it). Paths name the node without it existing; an fd of
 * ours keeps what the kernel says of the memfd behind it (times, inode)
 * and gets the device's type and number.
 *
 * glibc before 2.33 compiled stat() calls into __xstat(ver, ...), and
 * binaries built then still call those: they are interposed too. On the
 * 64-bit targets we build for, struct stat and struct stat64 are one
 * layout, which the assertion below checks.
 */
#include "shim.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/sysmacros.h>

_Static_assert(sizeof(struct stat) == sizeof(struct stat64),
	       "the shim assumes a 64-bit struct stat");

int __fxstat(int ver, int fd, struct stat *st);
int __fxstat64(int ver, int fd, struct stat64 *st);
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st,
		 int flags);

/* After the C library filled @st for @fd: make it the node's, if ours. */
static void fix_fd(int fd, struct stat *st)
{
	struct shim_file *sf = shim_fd_get(fd);
	struct stat mem;

	if (!sf)
		return;
	mem = *st;
	shim_fake_stat(ttm_drm_file_node(sf->file), st);
	st->st_dev = mem.st_dev;
	st->st_ino = mem.st_ino;
	st->st_atim = mem.st_atim;
	st->st_mtim = mem.st_mtim;
	st->st_ctim = mem.st_ctim;
	st->st_uid = mem.st_uid;
	st->st_gid = mem.st_gid;
	shim_file_put(sf);
}

/*
 * "" with AT_EMPTY_PATH: the fd itself. Also NULL, which statx() takes
 * (the C library declares the path non-null; the kernel does not).
 */
static bool empty_path(const char *path)
{
	return !path || !*path;
}

/* fstatat()'s meaning of @dirfd, @path and @flags, for @st. */
#define STAT_AT(real, dirfd, path, st, flags, ...)                          \
	({                                                                  \
		enum ttm_drm_node node_;                                    \
		int ret_;                                                   \
		if (shim_node_at((dirfd), (path), &node_)) {                \
			shim_fake_stat(node_, (struct stat *)(st));         \
			ret_ = 0;                                           \
		} else if (shim_sysfs_drm_dir(path)) {                      \
			shim_fake_sysfs_stat((struct stat *)(st));          \
			ret_ = 0;                                           \
		} else {                                                    \
			ret_ = SHIM_REAL(real)(__VA_ARGS__);                \
			if (ret_ == 0 && (flags) & AT_EMPTY_PATH &&         \
			    empty_path(path))                               \
				fix_fd((dirfd), (struct stat *)(st));       \
		}                                                           \
		ret_;                                                       \
	})

SHIM_EXPORT int fstat(int fd, struct stat *st)
{
	int ret = SHIM_REAL(fstat)(fd, st);

	if (ret == 0)
		fix_fd(fd, st);
	return ret;
}

SHIM_EXPORT int fstat64(int fd, struct stat64 *st)
{
	int ret = SHIM_REAL(fstat64)(fd, st);

	if (ret == 0)
		fix_fd(fd, (struct stat *)st);
	return ret;
}

SHIM_EXPORT int __fxstat(int ver, int fd, struct stat *st)
{
	int ret = SHIM_REAL(__fxstat)(ver, fd, st);

	if (ret == 0)
		fix_fd(fd, st);
	return ret;
}

SHIM_EXPORT int __fxstat64(int ver, int fd, struct stat64 *st)
{
	int ret = SHIM_REAL(__fxstat64)(ver, fd, st);

	if (ret == 0)
		fix_fd(fd, (struct stat *)st);
	return ret;
}

SHIM_EXPORT int stat(const char *path, struct stat *st)
{
	return STAT_AT(stat, AT_FDCWD, path, st, 0, path, st);
}

SHIM_EXPORT int stat64(const char *path, struct stat64 *st)
{
	return STAT_AT(stat64, AT_FDCWD, path, st, 0, path, st);
}

SHIM_EXPORT int lstat(const char *path, struct stat *st)
{
	return STAT_AT(lstat, AT_FDCWD, path, st, 0, path, st);
}

SHIM_EXPORT int lstat64(const char *path, struct stat64 *st)
{
	return STAT_AT(lstat64, AT_FDCWD, path, st, 0, path, st);
}

SHIM_EXPORT int __xstat(int ver, const char *path, struct stat *st)
{
	return STAT_AT(__xstat, AT_FDCWD, path, st, 0, ver, path, st);
}

SHIM_EXPORT int __xstat64(int ver, const char *path, struct stat64 *st)
{
	return STAT_AT(__xstat64, AT_FDCWD, path, st, 0, ver, path, st);
}

SHIM_EXPORT int __lxstat(int ver, const char *path, struct stat *st)
{
	return STAT_AT(__lxstat, AT_FDCWD, path, st, 0, ver, path, st);
}

SHIM_EXPORT int __lxstat64(int ver, const char *path, struct stat64 *st)
{
	return STAT_AT(__lxstat64, AT_FDCWD, path, st, 0, ver, path, st);
}

SHIM_EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return STAT_AT(fstatat, dirfd, path, st, flags, dirfd, path, st, flags);
}

SHIM_EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st,
			  int flags)
{
	return STAT_AT(fstatat64, dirfd, path, st, flags, dirfd, path, st,
		       flags);
}

SHIM_EXPORT int __fxstatat(int ver, int dirfd, const char *path,
			   struct stat *st, int flags)
{
	return STAT_AT(__fxstatat, dirfd, path, st, flags, ver, dirfd, path,
		       st, flags);
}

SHIM_EXPORT int __fxstatat64(int ver, int dirfd, const char *path,
			     struct stat64 *st, int flags)
{
	return STAT_AT(__fxstatat64, dirfd, path, st, flags, ver, dirfd, path,
		       st, flags);
}

/* statx() fills a struct of its own: copy the node's fields into it. */
static void fill_statx(enum ttm_drm_node node, struct statx *stx, bool keep)
{
	struct stat st;

	shim_fake_stat(node, &st);
	if (!keep) {
		memset(stx, 0, sizeof(*stx));
		stx->stx_mask = STATX_TYPE | STATX_MODE | STATX_NLINK |
				STATX_INO;
		stx->stx_nlink = (uint32_t)st.st_nlink;
		stx->stx_ino = st.st_ino;
		stx->stx_blksize = (uint32_t)st.st_blksize;
	}
	stx->stx_mode = (uint16_t)st.st_mode;
	stx->stx_rdev_major = SHIM_DRM_MAJOR;
	stx->stx_rdev_minor = minor(st.st_rdev);
}

SHIM_EXPORT int statx(int dirfd, const char *path, int flags,
		      unsigned int mask, struct statx *stx)
{
	enum ttm_drm_node node;
	struct shim_file *sf;
	int ret;

	if (shim_node_at(dirfd, path, &node)) {
		fill_statx(node, stx, false);
		return 0;
	}
	if (shim_sysfs_drm_dir(path)) {
		memset(stx, 0, sizeof(*stx));
		stx->stx_mask = STATX_TYPE | STATX_MODE;
		stx->stx_mode = S_IFDIR | 0755;
		return 0;
	}
	ret = SHIM_REAL(statx)(dirfd, path, flags, mask, stx);
	if (ret || !(flags & AT_EMPTY_PATH) || !empty_path(path))
		return ret;
	sf = shim_fd_get(dirfd);
	if (sf) {
		fill_statx(ttm_drm_file_node(sf->file), stx, true);
		shim_file_put(sf);
	}
	return 0;
}
