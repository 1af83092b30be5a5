// SPDX-License-Identifier: MIT
/*
 * The nodes the shim serves, and the one ttmsim device behind them.
 *
 * The device is made on the first open of a node, from the environment
 * (so that a program that never opens one pays nothing, and a bad
 * setting fails that open with EINVAL and a message naming the variable,
 * rather than the whole program at load time). It is destroyed at exit if
 * nothing of it is left in use (see shim_fini()).
 *
 * Every node open gives a real fd: a memfd, never the node's path, so the
 * kernel never sees the device (which need not exist), and close(),
 * dup() and exec's close-on-exec work on it as on any fd.
 */
#include "shim.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ttmsim/bo.h"
#include "ttmsim/gpu.h"
#include "ttmsim/ttmsim_drm.h"

#define DEFAULT_PRIMARY "/dev/dri/card0"
#define DEFAULT_RENDER "/dev/dri/renderD128"
#define DEFAULT_VRAM (256ull << 20)
#define DEFAULT_GTT (1ull << 30)
#define DEFAULT_ENGINES 2u
/* One more engine runs moves; the GPU has at most 64. */
#define MAX_ENGINES 63u

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ttm_gpu *gpu;
static struct ttm_device *dev;
static struct ttm_drm_device *ddev;
/* ddev for shim_dev_mem_overlaps(), read without the lock. */
static struct ttm_drm_device *mem_ddev;
/* shim_files alive: fds or mappings of them. */
static unsigned long live_files;

static const char *node_path(enum ttm_drm_node node)
{
	const char *p = getenv(node == TTM_DRM_NODE_PRIMARY ?
				       "TTMSIM_DRM_PRIMARY" : "TTMSIM_DRM_RENDER");

	if (!p || !*p)
		p = node == TTM_DRM_NODE_PRIMARY ? DEFAULT_PRIMARY : DEFAULT_RENDER;
	return p;
}

/*
 * @path (absolute) with "//", "." and ".." resolved by name, into @out
 * (PATH_MAX bytes); false if it does not fit.
 */
static bool path_normalise(const char *path, char *out)
{
	size_t len = 0;

	while (*path) {
		const char *seg = path, *end;
		size_t n;

		while (*seg == '/')
			seg++;
		end = strchrnul(seg, '/');
		n = (size_t)(end - seg);
		path = end;
		if (n == 0 || (n == 1 && seg[0] == '.'))
			continue;
		if (n == 2 && seg[0] == '.' && seg[1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--; /* the slash before the dropped segment */
			continue;
		}
		if (len + 1 + n >= PATH_MAX)
			return false;
		out[len++] = '/';
		memcpy(out + len, seg, n);
		len += n;
	}
	if (len == 0)
		out[len++] = '/';
	out[len] = '\0';
	return true;
}

/* Is @p, absolute, the node at @node_p: by name, or by what it resolves to. */
static bool same_node(const char *p, const char *node_p)
{
	char a[PATH_MAX], b[PATH_MAX];

	if (!path_normalise(p, a) || !path_normalise(node_p, b))
		return false;
	if (strcmp(a, b) == 0)
		return true;
	/* Another name (a symlink, /dev/dri/by-path/...) of an existing one. */
	return realpath(p, a) && realpath(node_p, b) && strcmp(a, b) == 0;
}

/*
 * Is @path, relative to @dirfd as for openat(), one of our nodes? By
 * name: the node's path need not exist. A relative path is joined to
 * the working directory or to @dirfd's path (from /proc/self/fd); "//",
 * "." and ".." are resolved by name, and symlinks where both exist, so
 * no other spelling of a node reaches the real device.
 */
bool shim_node_at(int dirfd, const char *path, enum ttm_drm_node *node)
{
	char base[PATH_MAX], full[PATH_MAX];
	const char *p = path;

	if (!path || !*path)
		return false;
	if (path[0] != '/') {
		char link[64];
		ssize_t n;

		if (dirfd == AT_FDCWD) {
			if (!getcwd(base, sizeof(base)))
				return false;
		} else {
			snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
			n = readlink(link, base, sizeof(base) - 1);
			if (n <= 0)
				return false;
			base[n] = '\0';
		}
		if (snprintf(full, sizeof(full), "%s/%s",
			     strcmp(base, "/") ? base : "", path) >=
		    (int)sizeof(full))
			return false;
		p = full;
	}
	for (int i = TTM_DRM_NODE_PRIMARY; i <= TTM_DRM_NODE_RENDER; i++) {
		if (same_node(p, node_path(i))) {
			*node = i;
			return true;
		}
	}
	return false;
}

/* @name's size in bytes, with an optional K, M or G (binary) suffix. */
static int env_size(const char *name, uint64_t def, uint64_t *ret)
{
	const char *s = getenv(name);
	unsigned int shift = 0;
	char *end;
	uint64_t v;

	*ret = def;
	if (!s)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (errno || end == s || *end || s[0] == '-' || v == 0 ||
	    v > (UINT64_MAX >> shift)) {
		fprintf(stderr,
			"ttmsim-drm-shim: %s=\"%s\": not a size in bytes "
			"(a positive number, optionally followed by K, M or G)\n",
			name, s);
		return -EINVAL;
	}
	*ret = v << shift;
	return 0;
}

static int env_engines(unsigned int *ret)
{
	const char *s = getenv("TTMSIM_DRM_ENGINES");
	char *end;
	unsigned long v;

	*ret = DEFAULT_ENGINES;
	if (!s)
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < 1 ||
	    v > MAX_ENGINES) {
		fprintf(stderr,
			"ttmsim-drm-shim: TTMSIM_DRM_ENGINES=\"%s\": not a "
			"number of engines from 1 to %u\n", s, MAX_ENGINES);
		return -EINVAL;
	}
	*ret = (unsigned int)v;
	return 0;
}

static int env_class(bool *wound_wait)
{
	const char *s = getenv("TTMSIM_DRM_CLASS");

	*wound_wait = false;
	if (!s || strcmp(s, "wait-die") == 0)
		return 0;
	if (strcmp(s, "wound-wait") == 0) {
		*wound_wait = true;
		return 0;
	}
	fprintf(stderr,
		"ttmsim-drm-shim: TTMSIM_DRM_CLASS=\"%s\": not a ww class "
		"(wait-die or wound-wait)\n", s);
	return -EINVAL;
}

/* Under dev_lock: make the device if it is not there yet. */
static int device_get(void)
{
	struct ttm_device_options opts = { 0 };
	unsigned int engines;
	int ret;

	if (ddev)
		return 0;
	ret = env_size("TTMSIM_DRM_VRAM", DEFAULT_VRAM, &opts.vram_size);
	if (ret == 0)
		ret = env_size("TTMSIM_DRM_GTT", DEFAULT_GTT, &opts.gtt_size);
	if (ret == 0)
		ret = env_class(&opts.wound_wait);
	if (ret == 0)
		ret = env_engines(&engines);
	if (ret)
		return ret;
	/* Moves get an engine of their own, after the jobs'. */
	opts.copy_engine = engines;
	ret = ttm_gpu_create(engines + 1, NULL, &gpu);
	if (ret)
		goto fail;
	opts.gpu = gpu;
	ret = ttm_device_create(&opts, &dev);
	if (ret)
		goto fail_gpu;
	ret = ttm_drm_device_create(dev, ttm_drm_ttmsim_driver(), &ddev);
	if (ret)
		goto fail_dev;
	__atomic_store_n(&mem_ddev, ddev, __ATOMIC_RELEASE);
	return 0;

fail_dev:
	ttm_device_destroy(dev);
	dev = NULL;
fail_gpu:
	ttm_gpu_destroy(gpu);
	gpu = NULL;
fail:
	fprintf(stderr, "ttmsim-drm-shim: cannot create the device: %s\n",
		strerror(-ret));
	return ret;
}

/* A new fd standing for @sf; -1 and errno on failure. */
static int fd_new(struct shim_file *sf, enum ttm_drm_node node, int flags)
{
	struct shim_file *old;
	int fd, ret;

	fd = memfd_create(node == TTM_DRM_NODE_PRIMARY ? "ttmsim-drm-card" :
							 "ttmsim-drm-render",
			  flags & O_CLOEXEC ? MFD_CLOEXEC : 0);
	if (fd < 0)
		return -1;
	ret = shim_fd_set(fd, sf, &old);
	if (ret) {
		SHIM_REAL(close)(fd);
		errno = -ret;
		return -1;
	}
	/* A stale entry: its fd was closed behind our back (close_range()). */
	shim_file_put(old);
	return fd;
}

/**
 * shim_open_node() - open @node as open() would.
 * @node: the node.
 * @flags: open()'s flags; only O_CLOEXEC matters.
 *
 * Context: Takes dev_lock; may create the device.
 * Return: a new fd, or -1 and errno (EINVAL for a bad setting, named on
 * stderr).
 */
int shim_open_node(enum ttm_drm_node node, int flags)
{
	struct shim_file *sf;
	struct ttm_drm_file *file;
	int ret, fd;

	sf = calloc(1, sizeof(*sf));
	if (!sf) {
		errno = ENOMEM;
		return -1;
	}
	pthread_mutex_lock(&dev_lock);
	ret = device_get();
	if (ret == 0)
		ret = ttm_drm_open(ddev, node, &file);
	if (ret == 0)
		live_files++;
	pthread_mutex_unlock(&dev_lock);
	if (ret) {
		free(sf);
		errno = -ret;
		return -1;
	}
	sf->file = file;
	fd = fd_new(sf, node, flags);
	if (fd < 0) {
		int err = errno;

		/* No reference was taken: close it by hand. */
		ttm_drm_close(file);
		free(sf);
		shim_file_closed();
		errno = err;
	}
	return fd;
}

/*
 * Without dev_lock: the library itself munmap()s its arenas when the
 * device goes, under dev_lock, through our munmap. So the device is
 * published here once made, and withdrawn before it is destroyed (its
 * own arena unmaps then go to the C library, as they must).
 */
bool shim_dev_mem_overlaps(const void *addr, size_t length)
{
	struct ttm_drm_device *d = __atomic_load_n(&mem_ddev,
						   __ATOMIC_ACQUIRE);

	return d && ttm_drm_device_mem_overlaps(d, addr, length);
}

void shim_file_closed(void)
{
	pthread_mutex_lock(&dev_lock);
	live_files--;
	pthread_mutex_unlock(&dev_lock);
}

/*
 * Is @path the sysfs directory /sys/dev/char/226:N/device/drm of a node?
 * libdrm's drmGetNodeTypeFromFd() (drmNodeIsDRM()) stats it to tell a DRM
 * device from another character device with the same numbers.
 */
bool shim_sysfs_drm_dir(const char *path)
{
	return path && (strcmp(path, "/sys/dev/char/226:0/device/drm") == 0 ||
			strcmp(path, "/sys/dev/char/226:128/device/drm") == 0);
}

/* A character device with DRM's major, minor 0 (primary) or 128 (render). */
void shim_fake_stat(enum ttm_drm_node node, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFCHR | 0666;
	st->st_rdev = makedev(SHIM_DRM_MAJOR,
			      node == TTM_DRM_NODE_PRIMARY ? 0 : 128);
	st->st_nlink = 1;
	st->st_blksize = 4096;
	st->st_ino = node == TTM_DRM_NODE_PRIMARY ? 1 : 2;
}

/* That directory: an empty one, its only use being to exist. */
void shim_fake_sysfs_stat(struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFDIR | 0755;
	st->st_nlink = 2;
	st->st_blksize = 4096;
	st->st_ino = 3;
}

/*
 * At exit: the program's fds are gone for us; if no mapping still holds
 * a file and no buffer is left (a PRIME fd still open keeps one), the
 * device can go, and with it the GPU's threads. Otherwise it is left as
 * it is, as the kernel keeps a device with users: ttm_device_destroy()
 * would refuse, and with the ww debug checker on report it and abort.
 */
__attribute__((destructor)) static void shim_fini(void)
{
	struct ttm_device_stats stats;

	shim_fd_forget_all();
	pthread_mutex_lock(&dev_lock);
	if (ddev && live_files == 0) {
		__atomic_store_n(&mem_ddev, NULL, __ATOMIC_RELEASE);
		ttm_drm_device_destroy(ddev);
		ddev = NULL;
		ttm_device_get_stats(dev, &stats);
		/* Buffers in delayed destroy are waited for, not refused. */
		if (stats.buffers == stats.zombies &&
		    ttm_device_destroy(dev) == 0) {
			dev = NULL;
			ttm_gpu_destroy(gpu);
			gpu = NULL;
		}
	}
	pthread_mutex_unlock(&dev_lock);
}
