// SPDX-License-Identifier: MIT
/*
 * ttm_drm_ioctl(): the request's number picks a table entry (the core's,
 * or the driver's in [DRM_COMMAND_BASE, DRM_COMMAND_END)), its flags are
 * checked against the file, the argument is copied in at the table's
 * size, the handler runs on the copy, and the copy goes back: as the
 * kernel's drm_ioctl(), so that a driver written here behaves as one
 * written there.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <drm.h>
#include <drm_mode.h>

#include "drm_priv.h"
#include "util/compiler.h"

/* Not in Debian 12's libdrm (2.4.114): the kernel's number, refused. */
#define TTM_DRM_IOCTL_SYNCOBJ_EVENTFD_NR 0xCF
struct ttm_drm_syncobj_eventfd {
	__u32 handle;
	__u32 flags;
	__u64 point;
	__s32 fd;
	__u32 pad;
};

#define CORE(ioctl, fn, fl) \
	[_IOC_NR(DRM_IOCTL_##ioctl)] = { \
		.cmd = DRM_IOCTL_##ioctl, .flags = (fl), .func = (fn), \
		.name = "DRM_IOCTL_" #ioctl }

#define RA TTM_DRM_RENDER_ALLOW

/* The flags are the kernel's for the same ioctls (drm_ioctl.c's table). */
static const struct ttm_drm_ioctl_desc core_ioctls[] = {
	CORE(VERSION, drm_ioctl_version, RA),
	CORE(GET_MAGIC, drm_ioctl_get_magic, 0),
	CORE(GEM_CLOSE, drm_ioctl_gem_close, RA),
	CORE(GET_CAP, drm_ioctl_get_cap, RA),
	CORE(SET_CLIENT_CAP, drm_ioctl_set_client_cap, 0),
	CORE(AUTH_MAGIC, drm_ioctl_auth_magic, TTM_DRM_MASTER),
	CORE(PRIME_HANDLE_TO_FD, drm_ioctl_prime_handle_to_fd, RA),
	CORE(PRIME_FD_TO_HANDLE, drm_ioctl_prime_fd_to_handle, RA),
	/* No RENDER_ALLOW: dumb buffers are for KMS, on the primary node. */
	CORE(MODE_CREATE_DUMB, drm_ioctl_create_dumb, 0),
	CORE(MODE_MAP_DUMB, drm_ioctl_map_dumb, 0),
	CORE(MODE_DESTROY_DUMB, drm_ioctl_destroy_dumb, 0),
	CORE(SYNCOBJ_CREATE, drm_ioctl_syncobj_create, RA),
	CORE(SYNCOBJ_DESTROY, drm_ioctl_syncobj_destroy, RA),
	CORE(SYNCOBJ_HANDLE_TO_FD, drm_ioctl_syncobj_handle_to_fd, RA),
	CORE(SYNCOBJ_FD_TO_HANDLE, drm_ioctl_syncobj_fd_to_handle, RA),
	CORE(SYNCOBJ_WAIT, drm_ioctl_syncobj_wait, RA),
	CORE(SYNCOBJ_RESET, drm_ioctl_syncobj_reset, RA),
	CORE(SYNCOBJ_SIGNAL, drm_ioctl_syncobj_signal, RA),
	CORE(SYNCOBJ_TIMELINE_WAIT, drm_ioctl_syncobj_timeline_wait, RA),
	CORE(SYNCOBJ_QUERY, drm_ioctl_syncobj_query, RA),
	CORE(SYNCOBJ_TRANSFER, drm_ioctl_syncobj_transfer, RA),
	CORE(SYNCOBJ_TIMELINE_SIGNAL, drm_ioctl_syncobj_timeline_signal, RA),
	[TTM_DRM_IOCTL_SYNCOBJ_EVENTFD_NR] = {
		.cmd = DRM_IOWR(TTM_DRM_IOCTL_SYNCOBJ_EVENTFD_NR,
				struct ttm_drm_syncobj_eventfd),
		.flags = RA, .func = drm_ioctl_syncobj_eventfd,
		.name = "DRM_IOCTL_SYNCOBJ_EVENTFD" },
};

/*
 * User space ends below 2^47 on x86-64 (2^56 with 5-level paging, 2^52 on
 * arm64): a pointer past 2^57 is no user pointer on any Linux. The first
 * page is never mapped (vm.mmap_min_addr is at least 4096).
 */
#define USER_PTR_LIMIT (1ull << 57)
#define USER_PTR_MIN 4096ull

bool drm_user_ptr_ok(uint64_t uptr, uint64_t len)
{
	if (!len)
		return true;
	if (uptr < USER_PTR_MIN || uptr >= USER_PTR_LIMIT)
		return false;
	return len <= USER_PTR_LIMIT - uptr;
}

/*
 * Copy @len bytes between @local (ours) and the user pointer @uptr, into
 * @local unless @to_user. The kernel's copy_from_user()/copy_to_user()
 * also fail on memory the process cannot read or write. Going through
 * the kernel to our own memory does the same check here, where memcpy()
 * would crash. A sandbox may refuse the call (seccomp): then the range
 * check is all there is.
 */
static int copy_user(void *local_buf, uint64_t uptr, size_t len, bool to_user)
{
	struct iovec local, remote;
	void *user = (void *)(uintptr_t)uptr;
	ssize_t n;

	if (len == 0)
		return 0;
	if (!drm_user_ptr_ok(uptr, len))
		return -EFAULT;
	local = (struct iovec){ .iov_base = local_buf, .iov_len = len };
	remote = (struct iovec){ .iov_base = user, .iov_len = len };
	n = to_user ? process_vm_writev(getpid(), &local, 1, &remote, 1, 0) :
		      process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
		memcpy(to_user ? user : local_buf, to_user ? local_buf : user,
		       len);
		n = (ssize_t)len;
	}
	return n == (ssize_t)len ? 0 : -EFAULT;
}

TTM_EXPORT int ttm_drm_copy_from_user(void *dst, uint64_t uptr, size_t len)
{
	return copy_user(dst, uptr, len, false);
}

int drm_copy_to_user(uint64_t uptr, const void *src, size_t len)
{
	/* process_vm_writev() only reads the local side. */
	return copy_user((void *)(uintptr_t)src, uptr, len, true);
}

int drm_copy_array(uint64_t uptr, uint32_t count, size_t size, void **ret)
{
	size_t len = (size_t)count * size;
	void *buf;
	int err;

	*ret = NULL;
	if (count == 0)
		return 0;
	/* The range check before malloc(): a wild count is -EFAULT alike. */
	if (!drm_user_ptr_ok(uptr, len))
		return -EFAULT;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	err = ttm_drm_copy_from_user(buf, uptr, len);
	if (err) {
		free(buf);
		return err;
	}
	*ret = buf;
	return 0;
}

/* The kernel's drm_ioctl_permit(): -EACCES for a file the flags refuse. */
static int ioctl_permit(struct ttm_drm_file *file, unsigned int flags)
{
	struct ttm_drm_device *ddev = file->ddev;
	bool render = file->node == TTM_DRM_NODE_RENDER;
	bool master, auth;

	/* CAP_SYS_ADMIN, which only root has unless granted. */
	if ((flags & TTM_DRM_ROOT_ONLY) && geteuid() != 0)
		return -EACCES;
	pthread_mutex_lock(&ddev->lock);
	master = ddev->master == file;
	auth = file->authenticated || master;
	pthread_mutex_unlock(&ddev->lock);
	if ((flags & TTM_DRM_AUTH) && !render && !auth)
		return -EACCES;
	if ((flags & TTM_DRM_MASTER) && !master)
		return -EACCES;
	if (!(flags & TTM_DRM_RENDER_ALLOW) && render)
		return -EACCES;
	return 0;
}

/* The entry for @nr, or NULL: unknown numbers are -EINVAL, as the kernel's. */
static const struct ttm_drm_ioctl_desc *ioctl_find(struct ttm_drm_file *file,
						   unsigned int nr)
{
	const struct ttm_drm_driver *drv = file->ddev->driver;
	const struct ttm_drm_ioctl_desc *desc;

	if (nr >= DRM_COMMAND_BASE && nr < DRM_COMMAND_END) {
		if (nr - DRM_COMMAND_BASE >= drv->num_ioctls)
			return NULL;
		desc = &drv->ioctls[nr - DRM_COMMAND_BASE];
	} else {
		if (nr >= ARRAY_SIZE(core_ioctls))
			return NULL;
		desc = &core_ioctls[nr];
	}
	return desc->func ? desc : NULL;
}

/* Whether the @len bytes at @p are all zero. */
static bool all_zero(const unsigned char *p, size_t len)
{
	while (len--)
		if (*p++)
			return false;
	return true;
}

TTM_EXPORT int ttm_drm_ioctl(struct ttm_drm_file *file, unsigned long request,
			     void *arg)
{
	const struct ttm_drm_ioctl_desc *desc;
	unsigned int cmd = (unsigned int)request;
	size_t usize, ksize, in, out;
	unsigned char stack[128] __attribute__((aligned(16)));
	unsigned char *kdata = stack;
	int ret;

	/*
	 * ioctl(2)'s request is an int the C library widens: bits above 32
	 * are not the caller's. The kernel picks the entry by number only;
	 * ttmsim also wants DRM's type, so that the shim's stray requests
	 * (TCGETS from isatty()) get ioctl(2)'s "not a tty" answer.
	 */
	if (_IOC_TYPE(cmd) != DRM_IOCTL_BASE)
		return -ENOTTY;
	desc = ioctl_find(file, _IOC_NR(cmd));
	if (!desc)
		return -EINVAL;
	ret = ioctl_permit(file, desc->flags);
	if (ret)
		return ret;

	/* Copy what both sides say goes in or out (the kernel's rule). */
	usize = _IOC_SIZE(cmd);
	ksize = _IOC_SIZE(desc->cmd);
	in = (cmd & desc->cmd & IOC_IN) ? usize : 0;
	out = (cmd & desc->cmd & IOC_OUT) ? usize : 0;
	if (in > ksize) {
		/* A newer caller's fields past ours must be unused. */
		if (!drm_user_ptr_ok((uintptr_t)arg, usize))
			return -EFAULT;
		if (!all_zero((const unsigned char *)arg + ksize, in - ksize))
			return -EINVAL;
		in = ksize;
	}
	if (out > ksize)
		out = ksize;
	if ((in || out) && !drm_user_ptr_ok((uintptr_t)arg, usize))
		return -EFAULT;
	if (ksize > sizeof(stack)) {
		kdata = malloc(ksize);
		if (!kdata)
			return -ENOMEM;
	}
	if (in)
		memcpy(kdata, arg, in);
	memset(kdata + in, 0, ksize - in);
	ret = desc->func(file, kdata);
	/* Back even on failure, as the kernel's (a handler leaves it as was). */
	if (out)
		memcpy(arg, kdata, out);
	if (kdata != stack)
		free(kdata);
	return ret;
}
