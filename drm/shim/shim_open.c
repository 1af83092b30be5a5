// SPDX-License-Identifier: MIT
/*
 * open(), close(), dup() and fcntl() and their variants.
 *
 * Programs built with _FILE_OFFSET_BITS=64 (meson's default) call open64
 * and fcntl64, fortified ones __open_2 and friends: each is a name of its
 * own in the C library, so each needs an interposer of its own. Opens of
 * a node's path go to shim_open_node(); everything else, and every fd
 * that is not ours, goes to the C library untouched.
 */
#include "shim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

/* open()'s mode argument is there only with O_CREAT or O_TMPFILE. */
#define OPEN_MODE(flags, last)                                              \
	({                                                                  \
		mode_t mode_ = 0;                                           \
		if ((flags) & (O_CREAT | __O_TMPFILE)) {                    \
			va_list ap_;                                        \
			va_start(ap_, last);                                \
			mode_ = va_arg(ap_, mode_t);                        \
			va_end(ap_);                                        \
		}                                                           \
		mode_;                                                      \
	})

SHIM_EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags, flags);
	enum ttm_drm_node node;

	if (shim_node_at(AT_FDCWD, path, &node))
		return shim_open_node(node, flags);
	return SHIM_REAL(open)(path, flags, mode);
}

SHIM_EXPORT int open64(const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags, flags);
	enum ttm_drm_node node;

	if (shim_node_at(AT_FDCWD, path, &node))
		return shim_open_node(node, flags);
	return SHIM_REAL(open64)(path, flags, mode);
}

SHIM_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags, flags);
	enum ttm_drm_node node;

	if (shim_node_at(dirfd, path, &node))
		return shim_open_node(node, flags);
	return SHIM_REAL(openat)(dirfd, path, flags, mode);
}

SHIM_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = OPEN_MODE(flags, flags);
	enum ttm_drm_node node;

	if (shim_node_at(dirfd, path, &node))
		return shim_open_node(node, flags);
	return SHIM_REAL(openat64)(dirfd, path, flags, mode);
}

SHIM_EXPORT int __open_2(const char *path, int flags)
{
	enum ttm_drm_node node;

	if (shim_node_at(AT_FDCWD, path, &node))
		return shim_open_node(node, flags);
	return SHIM_REAL(__open_2)(path, flags);
}

SHIM_EXPORT int __open64_2(const char *path, int flags)
{
	enum ttm_drm_node node;

	if (shim_node_at(AT_FDCWD, path, &node))
		return shim_open_node(node, flags);
	return SHIM_REAL(__open64_2)(path, flags);
}

SHIM_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	enum ttm_drm_node node;

	if (shim_node_at(dirfd, path, &node))
		return shim_open_node(node, flags);
	return SHIM_REAL(__openat_2)(dirfd, path, flags);
}

SHIM_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	enum ttm_drm_node node;

	if (shim_node_at(dirfd, path, &node))
		return shim_open_node(node, flags);
	return SHIM_REAL(__openat64_2)(dirfd, path, flags);
}

/*
 * The entry goes before the fd: once the kernel has the number back,
 * another thread's open may get it, and must not find our entry there.
 */
SHIM_EXPORT int close(int fd)
{
	struct shim_file *old;
	int ret;

	shim_fd_set(fd, NULL, &old);
	ret = SHIM_REAL(close)(fd);
	shim_file_put(old);
	return ret;
}

/*
 * After a dup of any kind to @newfd (ret >= 0): @newfd stands for what
 * @sf stands for (nothing if NULL), and drops what it stood for before,
 * as the kernel closes the old file of dup2()'s target.
 */
static int after_dup(int newfd, struct shim_file *sf)
{
	struct shim_file *old = NULL;
	int ret = 0;

	if (newfd >= 0)
		ret = shim_fd_set(newfd, sf, &old);
	shim_file_put(old);
	shim_file_put(sf);
	if (ret) {
		SHIM_REAL(close)(newfd);
		errno = -ret;
		return -1;
	}
	return newfd;
}

SHIM_EXPORT int dup(int fd)
{
	struct shim_file *sf = shim_fd_get(fd);

	return after_dup(SHIM_REAL(dup)(fd), sf);
}

SHIM_EXPORT int dup2(int fd, int newfd)
{
	struct shim_file *sf;

	if (fd == newfd)
		return SHIM_REAL(dup2)(fd, newfd);
	sf = shim_fd_get(fd);
	return after_dup(SHIM_REAL(dup2)(fd, newfd), sf);
}

SHIM_EXPORT int dup3(int fd, int newfd, int flags)
{
	struct shim_file *sf = fd == newfd ? NULL : shim_fd_get(fd);

	return after_dup(SHIM_REAL(dup3)(fd, newfd, flags), sf);
}

/*
 * fcntl's third argument is an int or a pointer depending on @cmd; like
 * every such wrapper we pass it on as a pointer-sized value, which the
 * x86-64 and AArch64 calling conventions make the same for both.
 */
static int fcntl_common(int (*real)(int, int, ...), int fd, int cmd, void *arg)
{
	struct shim_file *sf;

	if (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC)
		return real(fd, cmd, arg);
	sf = shim_fd_get(fd);
	return after_dup(real(fd, cmd, arg), sf);
}

SHIM_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(SHIM_REAL(fcntl), fd, cmd, arg);
}

SHIM_EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(SHIM_REAL(fcntl64), fd, cmd, arg);
}

/*
 * close_range() closes fds without close(): forget those of ours in the
 * range, or a pipe or socket later given one of their numbers would be
 * taken for a node. With CLOSE_RANGE_CLOEXEC nothing is closed now.
 */
SHIM_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	int ret = SHIM_REAL(close_range)(first, last, flags);

	if (ret == 0 && !(flags & CLOSE_RANGE_CLOEXEC))
		shim_fd_forget_range(first, last);
	return ret;
}
