// SPDX-License-Identifier: MIT
/*
 * The drm-shim, from the outside: this program is run with
 * LD_PRELOAD=libttmsim-drm-shim.so and the nodes pointed, through
 * TTMSIM_DRM_PRIMARY and TTMSIM_DRM_RENDER, at paths in a directory that
 * does not exist. So every successful open of a node proves the shim
 * served it: the kernel could only have answered ENOENT. The descriptors
 * are also checked through raw system calls the shim cannot see: the
 * path stays absent, and each fd is a memfd, never a device.
 *
 * Cases: bad settings (EINVAL, the variable named on stderr, no failure
 * cached), good ones reaching the device (the driver's GET_PARAM), every open variant (fortified and relative ones included, and
 * the default paths), the stat family, dup/dup2/dup3/fcntl, close,
 * calls passed through on other fds, a mapping outliving its fd, and
 * threads opening and closing at once.
 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>
#include <dlfcn.h>
#include <drm.h>
#include <drm_mode.h>

#include "ttmsim/ttmsim_drm.h"

int __open_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);

static const char *primary, *render;

/* The kernel's own view of @path: it must not exist. */
static void assert_absent(const char *path)
{
	struct stat st;

	assert_int_equal(syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0), -1);
	assert_int_equal(errno, ENOENT);
}

/* @fd is a node of ours: a memfd for the kernel, the device for us. */
static void assert_node_fd(int fd, unsigned int minor_nr)
{
	char link[64], target[PATH_MAX];
	struct drm_version v = { 0 };
	struct stat st;
	long n;

	assert_true(fd >= 0);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = syscall(SYS_readlinkat, AT_FDCWD, link, target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	assert_non_null(strstr(target, "memfd:ttmsim-drm-"));
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(major(st.st_rdev), 226);
	assert_int_equal(minor(st.st_rdev), minor_nr);
	assert_int_equal(ioctl(fd, DRM_IOCTL_VERSION, &v), 0);
	assert_true(v.name_len > 0);
}

static void assert_not_node(int fd)
{
	struct drm_version v = { 0 };

	assert_int_equal(ioctl(fd, DRM_IOCTL_VERSION, &v), -1);
	assert_int_not_equal(errno, 0);
}

/*
 * Open the primary node with @var=@value: EINVAL, and stderr (caught in
 * a pipe) names @var. The device is made on the first good open, so this
 * case runs first.
 */
static void check_bad_setting(const char *var, const char *value)
{
	const char *before = getenv(var);
	char *old = before ? strdup(before) : NULL;
	int pipefd[2], saved, fd;
	char buf[512] = "";
	ssize_t n;

	assert_int_equal(pipe(pipefd), 0);
	saved = dup(STDERR_FILENO);
	assert_true(saved >= 0);
	assert_int_equal(dup2(pipefd[1], STDERR_FILENO), STDERR_FILENO);
	setenv(var, value, 1);
	errno = 0;
	fd = open(primary, O_RDWR);
	if (old)
		setenv(var, old, 1);
	else
		unsetenv(var);
	free(old);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	close(pipefd[1]);
	n = read(pipefd[0], buf, sizeof(buf) - 1);
	close(pipefd[0]);
	assert_int_equal(fd, -1);
	assert_int_equal(errno, EINVAL);
	assert_true(n > 0);
	buf[n] = '\0';
	if (!strstr(buf, var))
		fail_msg("the message \"%s\" does not name %s", buf, var);
}

static void test_bad_settings(void **state)
{
	int fd;

	(void)state;
	check_bad_setting("TTMSIM_DRM_VRAM", "lots");
	check_bad_setting("TTMSIM_DRM_VRAM", "0");
	check_bad_setting("TTMSIM_DRM_GTT", "12Q");
	check_bad_setting("TTMSIM_DRM_CLASS", "wait-wound");
	check_bad_setting("TTMSIM_DRM_ENGINES", "0");
	check_bad_setting("TTMSIM_DRM_ENGINES", "64");
	/* Nothing cached: good settings work afterwards. */
	fd = open(primary, O_RDWR);
	assert_node_fd(fd, 0);
	close(fd);
}

/*
 * The settings reach the device: the "ttmsim" driver's GET_PARAM reports
 * the sizes meson test sets (TTMSIM_DRM_VRAM=64M, TTMSIM_DRM_GTT=128M).
 */
static void test_settings_reach_the_device(void **state)
{
	struct drm_ttmsim_get_param p = { .param = DRM_TTMSIM_PARAM_VRAM_SIZE };
	int fd;

	(void)state;
	fd = open(render, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(ioctl(fd, DRM_IOCTL_TTMSIM_GET_PARAM, &p), 0);
	assert_int_equal(p.value, 64ull << 20);
	p = (struct drm_ttmsim_get_param){ .param = DRM_TTMSIM_PARAM_GTT_SIZE };
	assert_int_equal(ioctl(fd, DRM_IOCTL_TTMSIM_GET_PARAM, &p), 0);
	assert_int_equal(p.value, 128ull << 20);
	close(fd);
}

static void test_never_opens_the_path(void **state)
{
	int fd;

	(void)state;
	fd = open(primary, O_RDWR | O_CLOEXEC);
	assert_node_fd(fd, 0);
	assert_int_equal(fcntl(fd, F_GETFD), FD_CLOEXEC);
	assert_absent(primary);
	close(fd);
	fd = open(render, O_RDWR);
	assert_node_fd(fd, 128);
	assert_int_equal(fcntl(fd, F_GETFD), 0);
	assert_absent(render);
	close(fd);
}

static void test_open_variants(void **state)
{
	char cwd[PATH_MAX];
	int fds[7], n = 0, root;

	(void)state;
	fds[n++] = open64(primary, O_RDWR);
	fds[n++] = openat(AT_FDCWD, primary, O_RDWR);
	fds[n++] = openat64(AT_FDCWD, primary, O_RDWR);
	fds[n++] = __open_2(primary, O_RDWR);
	fds[n++] = __openat_2(AT_FDCWD, primary, O_RDWR);
	/* Relative to the working directory. */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir("/"), 0);
	fds[n++] = open(primary + 1, O_RDWR);
	assert_int_equal(chdir(cwd), 0);
	/* Relative to a directory fd. */
	root = open("/", O_RDONLY | O_DIRECTORY);
	assert_true(root >= 0);
	fds[n++] = openat(root, render + 1, O_RDWR);
	close(root);
	for (int i = 0; i < n; i++) {
		assert_node_fd(fds[i], i == n - 1 ? 128 : 0);
		close(fds[i]);
	}
	/* Any other path is the C library's. */
	assert_int_equal(open("/nonexistent-ttmsim-shim/other", O_RDONLY), -1);
	assert_int_equal(errno, ENOENT);
}

/* The defaults, /dev/dri/card0 and renderD128, taken whether or not the machine has them. */
static void test_default_paths(void **state)
{
	char *p = strdup(primary), *r = strdup(render);
	int fd;

	(void)state;
	unsetenv("TTMSIM_DRM_PRIMARY");
	unsetenv("TTMSIM_DRM_RENDER");
	fd = open("/dev/dri/card0", O_RDWR);
	assert_node_fd(fd, 0);
	close(fd);
	fd = open("/dev/dri/renderD128", O_RDWR);
	assert_node_fd(fd, 128);
	close(fd);
	setenv("TTMSIM_DRM_PRIMARY", p, 1);
	setenv("TTMSIM_DRM_RENDER", r, 1);
	free(p);
	free(r);
}

static void test_stat_family(void **state)
{
	struct statx stx;
	struct stat st;
	int fd;

	(void)state;
	assert_int_equal(stat(primary, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(st.st_rdev, makedev(226, 0));
	assert_int_equal(lstat(render, &st), 0);
	assert_int_equal(st.st_rdev, makedev(226, 128));
	assert_int_equal(fstatat(AT_FDCWD, render, &st, 0), 0);
	assert_int_equal(st.st_rdev, makedev(226, 128));
	assert_int_equal(statx(AT_FDCWD, primary, 0, STATX_BASIC_STATS, &stx), 0);
	assert_true(S_ISCHR(stx.stx_mode));
	assert_int_equal(stx.stx_rdev_major, 226);
	assert_int_equal(stx.stx_rdev_minor, 0);

	fd = open(render, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(fstatat(fd, "", &st, AT_EMPTY_PATH), 0);
	assert_int_equal(st.st_rdev, makedev(226, 128));
	assert_int_equal(statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx), 0);
	assert_true(S_ISCHR(stx.stx_mode));
	assert_int_equal(stx.stx_rdev_minor, 128);
	close(fd);
	/*
	 * Binaries built before glibc 2.33 call __fxstat and __xstat: found
	 * by name as the loader finds them for such a binary, the shim's.
	 */
	{
		int (*fxstat)(int, int, struct stat *) =
			(int (*)(int, int, struct stat *))dlsym(RTLD_DEFAULT, "__fxstat");
		int (*xstat)(int, const char *, struct stat *) =
			(int (*)(int, const char *, struct stat *))dlsym(RTLD_DEFAULT,
									 "__xstat");

		assert_non_null(fxstat);
		assert_non_null(xstat);
		fd = open(primary, O_RDWR);
		assert_int_equal(fxstat(1, fd, &st), 0);
		assert_int_equal(st.st_rdev, makedev(226, 0));
		close(fd);
		assert_int_equal(xstat(1, render, &st), 0);
		assert_int_equal(st.st_rdev, makedev(226, 128));
	}
	/* The nodes' sysfs directories, where libdrm checks they are DRM's. */
	assert_int_equal(stat("/sys/dev/char/226:0/device/drm", &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(statx(AT_FDCWD, "/sys/dev/char/226:128/device/drm", 0,
			       STATX_BASIC_STATS, &stx), 0);
	assert_true(S_ISDIR(stx.stx_mode));
	/* Other paths keep their own answers. */
	assert_int_equal(stat("/", &st), 0);
	assert_true(S_ISDIR(st.st_mode));
}

static void test_dup_family(void **state)
{
	int fd, a, b, c, d, pipefd[2];

	(void)state;
	fd = open(primary, O_RDWR);
	assert_true(fd >= 0);
	a = dup(fd);
	b = fcntl(fd, F_DUPFD, 100);
	c = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	assert_true(b >= 100);
	assert_int_equal(fcntl(c, F_GETFD), FD_CLOEXEC);
	assert_int_equal(fcntl(c, F_SETFD, 0), 0);
	assert_int_equal(fcntl(c, F_GETFD), 0);
	d = dup3(fd, 200, O_CLOEXEC);
	assert_int_equal(d, 200);
	/* The dups keep the file open once the first fd is gone. */
	assert_int_equal(close(fd), 0);
	assert_not_node(fd);
	assert_node_fd(a, 0);
	assert_node_fd(b, 0);
	assert_node_fd(c, 0);
	assert_node_fd(d, 0);

	/* dup2 onto one of ours replaces it; and onto another fd, makes one. */
	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(dup2(pipefd[0], a), a);
	assert_not_node(a);
	assert_int_equal(dup2(b, pipefd[1]), pipefd[1]);
	assert_node_fd(pipefd[1], 0);
	assert_int_equal(dup2(c, c), c);
	assert_node_fd(c, 0);
	close(pipefd[0]);
	close(pipefd[1]);
	close(a);
	close(b);
	close(c);
	close(d);
}

static void test_passthrough(void **state)
{
	int pipefd[2], avail = -1;
	void *p;

	(void)state;
	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(write(pipefd[1], "abc", 3), 3);
	assert_int_equal(ioctl(pipefd[0], FIONREAD, &avail), 0);
	assert_int_equal(avail, 3);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	memset(p, 1, 4096);
	assert_int_equal(munmap(p, 4096), 0);
	close(pipefd[0]);
	close(pipefd[1]);
}

/* The kernel's rule: a mapping holds its file, not its fd. */
static void test_mapping_outlives_fd(void **state)
{
	struct drm_mode_create_dumb create = { .width = 16, .height = 16,
					       .bpp = 32 };
	struct drm_mode_map_dumb map = { 0 };
	uint32_t *p;
	int fd;

	(void)state;
	fd = open(primary, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(ioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &create), 0);
	map.handle = create.handle;
	assert_int_equal(ioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &map), 0);
	p = mmap(NULL, create.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)map.offset);
	assert_true(p != MAP_FAILED);
	/* Ours cannot be placed or copied on write. */
	assert_true(mmap(p, create.size, PROT_READ, MAP_SHARED | MAP_FIXED, fd,
			 (off_t)map.offset) == MAP_FAILED);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(close(fd), 0);
	for (size_t i = 0; i < create.size / 4; i++)
		p[i] = (uint32_t)i;
	for (size_t i = 0; i < create.size / 4; i++)
		assert_int_equal(p[i], i);
	/* Only whole mappings are undone. */
	assert_int_equal(munmap(p, create.size / 2), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(munmap(p, create.size), 0);
}

/* Other spellings of a node's path are the node too, never the device. */
static void test_node_spellings(void **state)
{
	const char *base = strrchr(primary, '/');
	char path[PATH_MAX];
	const char *forms[] = { "%.*s/.%s", "%.*s/%s", "%.*s/zz/..%s",
				"/.%.*s%s" };
	int fd;

	(void)state;
	for (unsigned int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), forms[i], (int)(base - primary),
			 primary, base);
		fd = open(path, O_RDWR);
		assert_node_fd(fd, 0);
		assert_absent(primary);
		close(fd);
	}
}

static void *map_dumb(int fd, uint64_t *size, uint64_t *offset, int flags)
{
	struct drm_mode_create_dumb create = { .width = 64, .height = 32,
					       .bpp = 32 };
	struct drm_mode_map_dumb map = { 0 };
	void *p;

	assert_int_equal(ioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &create), 0);
	map.handle = create.handle;
	assert_int_equal(ioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &map), 0);
	*size = create.size;
	*offset = map.offset;
	p = mmap(NULL, create.size, PROT_READ | PROT_WRITE, flags, fd,
		 (off_t)map.offset);
	assert_true(p != MAP_FAILED);
	return p;
}

/*
 * munmap() never lets the C library unmap the device's memory: a piece of
 * a mapping, or a mapping undone twice, is EINVAL, and the other buffers
 * (whose pages sit next to it) stay usable. Two mappings of one buffer
 * have one address: each is undone by its own length. MAP_SHARED_VALIDATE
 * is a shared mapping too.
 */
static void test_munmap_guards(void **state)
{
	uint64_t size, size2, off, off2;
	uint32_t *p, *q, *r;
	int fd;

	(void)state;
	fd = open(primary, O_RDWR);
	assert_true(fd >= 0);
	p = map_dumb(fd, &size, &off, MAP_SHARED);
	assert_int_equal(size, 8192);
	q = map_dumb(fd, &size2, &off2, MAP_SHARED_VALIDATE);
	assert_int_equal(munmap((char *)p + 4096, 4096), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(munmap(p, size), 0);
	assert_int_equal(munmap(p, size), -1);
	assert_int_equal(errno, EINVAL);
	for (size_t i = 0; i < size2 / 4; i++)
		q[i] = (uint32_t)i;
	for (size_t i = 0; i < size2 / 4; i++)
		assert_int_equal(q[i], i);
	/* A second, shorter mapping of the same buffer: the same address. */
	r = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)off2);
	assert_true(r == q);
	assert_int_equal(munmap(q, size2), 0);
	assert_int_equal(r[5], 5);
	assert_int_equal(munmap(r, 4096), 0);
	close(fd);
}

#define THREADS 2
#define ROUNDS 200

static pthread_barrier_t start;

static void *open_close_loop(void *arg)
{
	const char *path = arg;
	long bad = 0;

	pthread_barrier_wait(&start);
	for (int i = 0; i < ROUNDS; i++) {
		struct drm_version v = { 0 };
		int fd = open(path, O_RDWR), d;

		if (fd < 0) {
			bad++;
			continue;
		}
		d = dup(fd);
		close(fd);
		if (ioctl(d, DRM_IOCTL_VERSION, &v) || v.name_len == 0)
			bad++;
		close(d);
	}
	return (void *)bad;
}

static void test_threads(void **state)
{
	pthread_t t[THREADS];

	(void)state;
	pthread_barrier_init(&start, NULL, THREADS);
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, open_close_loop,
						(void *)(i ? render : primary)), 0);
	for (int i = 0; i < THREADS; i++) {
		void *bad;

		assert_int_equal(pthread_join(t[i], &bad), 0);
		assert_null(bad);
	}
	pthread_barrier_destroy(&start);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_settings),
		cmocka_unit_test(test_settings_reach_the_device),
		cmocka_unit_test(test_never_opens_the_path),
		cmocka_unit_test(test_open_variants),
		cmocka_unit_test(test_default_paths),
		cmocka_unit_test(test_stat_family),
		cmocka_unit_test(test_dup_family),
		cmocka_unit_test(test_passthrough),
		cmocka_unit_test(test_mapping_outlives_fd),
		cmocka_unit_test(test_node_spellings),
		cmocka_unit_test(test_munmap_guards),
		cmocka_unit_test(test_threads),
	};

	primary = getenv("TTMSIM_DRM_PRIMARY");
	render = getenv("TTMSIM_DRM_RENDER");
	if (!primary || !render || primary[0] != '/' || render[0] != '/') {
		fprintf(stderr, "test-drm-shim: run it under the shim, with "
			"TTMSIM_DRM_PRIMARY and TTMSIM_DRM_RENDER absolute paths "
			"that do not exist (meson test does)\n");
		return 1;
	}
	assert_absent(primary);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
