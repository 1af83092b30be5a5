// SPDX-License-Identifier: MIT
/*
 * ioctl(), mmap() and munmap() on the nodes' fds.
 *
 * An ioctl on one of our fds goes to the front end, whose 0 or -errno
 * becomes the C library's 0 or -1 and errno. A mapping is the front
 * end's (ttm_drm_mmap(): the buffer's memory, pinned while mapped), not
 * the kernel's: munmap() must find it again, so the shim records every
 * mapping with a reference to its file, which lets the mapping outlive
 * the fd as a kernel mapping does.
 */
#include "shim.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

SHIM_EXPORT int ioctl(int fd, unsigned long request, ...)
{
	struct shim_file *sf;
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	sf = shim_fd_get(fd);
	if (!sf)
		return SHIM_REAL(ioctl)(fd, request, arg);
	ret = ttm_drm_ioctl(sf->file, request, arg);
	shim_file_put(sf);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

/*
 * Ours if @fd is. The front end chooses the address: MAP_FIXED (a
 * mapping at the caller's address) cannot be had, nor can a private
 * copy-on-write mapping, so both fail with EINVAL.
 */
static void *map_fd(struct shim_file *sf, void *addr, size_t length,
		    int flags, uint64_t offset)
{
	void *p;
	int ret;

	(void)addr;
	/* MAP_SHARED_VALIDATE holds MAP_PRIVATE's bit: compare the type. */
	if ((flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) ||
	    ((flags & MAP_TYPE) != MAP_SHARED &&
	     (flags & MAP_TYPE) != MAP_SHARED_VALIDATE)) {
		ret = -EINVAL;
		goto out;
	}
	ret = ttm_drm_mmap(sf->file, offset, length, &p);
	if (ret == 0) {
		ret = shim_map_add(p, length, sf);
		if (ret)
			ttm_drm_munmap(sf->file, p, length);
	}
out:
	shim_file_put(sf);
	if (ret) {
		errno = -ret;
		return MAP_FAILED;
	}
	return p;
}

SHIM_EXPORT void *mmap(void *addr, size_t length, int prot, int flags, int fd,
		       off_t offset)
{
	struct shim_file *sf = shim_fd_get(fd);

	if (!sf)
		return SHIM_REAL(mmap)(addr, length, prot, flags, fd, offset);
	return map_fd(sf, addr, length, flags, (uint64_t)offset);
}

SHIM_EXPORT void *mmap64(void *addr, size_t length, int prot, int flags, int fd,
			 off64_t offset)
{
	struct shim_file *sf = shim_fd_get(fd);

	if (!sf)
		return SHIM_REAL(mmap64)(addr, length, prot, flags, fd, offset);
	return map_fd(sf, addr, length, flags, (uint64_t)offset);
}

SHIM_EXPORT int munmap(void *addr, size_t length)
{
	struct shim_file *sf;
	int err, ret;

	sf = shim_map_remove(addr, length, &err);
	if (err) {
		errno = -err;
		return -1;
	}
	if (!sf) {
		/*
		 * Not a live mapping of ours: a second munmap, or a piece of
		 * one. Those pages are the device's arena, shared by other
		 * buffers: the C library must never unmap them.
		 */
		if (shim_dev_mem_overlaps(addr, length)) {
			errno = EINVAL;
			return -1;
		}
		return SHIM_REAL(munmap)(addr, length);
	}
	ret = ttm_drm_munmap(sf->file, addr, length);
	shim_file_put(sf);
	if (ret) {
		errno = -ret;
		return -1;
	}
	return 0;
}
