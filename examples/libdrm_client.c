// SPDX-License-Identifier: MIT
/*
 * libdrm_client: an ordinary libdrm program, run on ttmsim by the shim.
 *
 *	LD_PRELOAD=build/drm/shim/libttmsim-drm-shim.so build/examples/libdrm_client
 *
 * It uses libdrm's public functions only, and nothing of ttmsim: on a
 * real DRM driver with dumb buffers, PRIME and timeline syncobjs it would
 * do the same. Two files on the primary node and one on the render node:
 *  - each node's type (drmGetNodeTypeFromFd()), the driver's name and
 *    caps (drmGetVersion(), drmGetCap());
 *  - a dumb buffer made and mapped on one primary file, written through
 *    the mapping, shared with PRIME (drmPrimeHandleToFD()) to the other
 *    primary file and to the render file (drmPrimeFDToHandle()), and read
 *    back through the second file's own mapping, both ways;
 *  - syncobjs on the render file: a signalled one waited for
 *    (drmSyncobjWait()), a timeline one signalled at a point and queried
 *    (drmSyncobjTimelineSignal(), drmSyncobjQuery()), its fence exported
 *    as a sync file and polled.
 *
 * Usage: libdrm_client [PRIMARY_NODE [RENDER_NODE]]
 * (defaults /dev/dri/card0 and /dev/dri/renderD128). Exits 0 when every
 * step worked; otherwise 1, with a message naming the call that failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>
#include <drm_mode.h>

#define WIDTH 64u
#define HEIGHT 64u

static const char *progname = "libdrm_client";

/* @call failed with @err (an errno value): say so and stop. */
static void fail(const char *call, int err)
{
	fprintf(stderr, "%s: %s: %s\n", progname, call, strerror(err));
	exit(1);
}

/* libdrm's two conventions: -1 and errno, or a negative errno. */
static void check(const char *call, int ret)
{
	if (ret == -1)
		fail(call, errno);
	if (ret < 0)
		fail(call, -ret);
}

static void check_that(const char *what, int ok)
{
	if (!ok) {
		fprintf(stderr, "%s: %s\n", progname, what);
		exit(1);
	}
}

static int open_node(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "%s: open %s: %s\n", progname, path,
			strerror(errno));
		exit(1);
	}
	return fd;
}

static void check_driver(int fd)
{
	static const uint64_t caps[] = {
		DRM_CAP_DUMB_BUFFER, DRM_CAP_PRIME, DRM_CAP_SYNCOBJ,
		DRM_CAP_SYNCOBJ_TIMELINE,
	};
	drmVersionPtr v = drmGetVersion(fd);
	uint64_t value;

	if (!v)
		fail("drmGetVersion", errno);
	printf("driver: %s %d.%d.%d (%s)\n", v->name, v->version_major,
	       v->version_minor, v->version_patchlevel, v->desc);
	check_that("drmGetVersion: the driver's name is empty",
		   v->name_len > 0);
	drmFreeVersion(v);
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		check("drmGetCap", drmGetCap(fd, caps[i], &value));
		if (!value) {
			fprintf(stderr, "%s: drmGetCap: cap %" PRIu64
				" is not supported\n", progname, caps[i]);
			exit(1);
		}
	}
}

/* libdrm's own check that @fd is a DRM node, and of which kind. */
static void check_node_type(int fd, int type)
{
	int ret = drmGetNodeTypeFromFd(fd);

	if (ret < 0)
		fail("drmGetNodeTypeFromFd", errno);
	if (ret != type) {
		fprintf(stderr, "%s: drmGetNodeTypeFromFd: node type %d, not "
			"%d\n", progname, ret, type);
		exit(1);
	}
}

/* A dumb buffer's mapping on @fd. */
static uint32_t *map_dumb(int fd, uint32_t handle, uint64_t size)
{
	struct drm_mode_map_dumb map = { .handle = handle };
	void *p;

	check("drmIoctl(DRM_IOCTL_MODE_MAP_DUMB)",
	      drmIoctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &map));
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)map.offset);
	if (p == MAP_FAILED)
		fail("mmap", errno);
	return p;
}

static void check_dumb_and_prime(int card_a, int card_b, int render)
{
	struct drm_mode_create_dumb create = {
		.width = WIDTH, .height = HEIGHT, .bpp = 32,
	};
	struct drm_mode_destroy_dumb destroy;
	uint32_t handle_b, handle_r, *a, *b;
	size_t words;
	int prime_fd;

	check("drmIoctl(DRM_IOCTL_MODE_CREATE_DUMB)",
	      drmIoctl(card_a, DRM_IOCTL_MODE_CREATE_DUMB, &create));
	check_that("DRM_IOCTL_MODE_CREATE_DUMB: the buffer is too small",
		   create.pitch >= WIDTH * 4 &&
		   create.size >= (uint64_t)create.pitch * HEIGHT);
	words = create.size / 4;
	a = map_dumb(card_a, create.handle, create.size);
	for (size_t i = 0; i < words; i++)
		a[i] = 0xc0de0000u ^ (uint32_t)i;

	check("drmPrimeHandleToFD",
	      drmPrimeHandleToFD(card_a, create.handle, DRM_CLOEXEC | DRM_RDWR,
				 &prime_fd));
	check("drmPrimeFDToHandle",
	      drmPrimeFDToHandle(card_b, prime_fd, &handle_b));
	/* A render node may import too (PRIME is RENDER_ALLOW). */
	check("drmPrimeFDToHandle (render node)",
	      drmPrimeFDToHandle(render, prime_fd, &handle_r));
	close(prime_fd);

	b = map_dumb(card_b, handle_b, create.size);
	for (size_t i = 0; i < words; i++)
		if (b[i] != (0xc0de0000u ^ (uint32_t)i))
			check_that("PRIME: the importer's mapping does not "
				   "show what the exporter wrote", 0);
	/* And back: one buffer, two mappings, coherent both ways. */
	b[words - 1] = 0x12345678u;
	check_that("PRIME: the exporter's mapping does not show what the "
		   "importer wrote", a[words - 1] == 0x12345678u);
	printf("dumb buffer: %" PRIu64 " bytes, shared by PRIME, contents "
	       "match\n", (uint64_t)create.size);

	if (munmap(b, create.size))
		fail("munmap", errno);
	check("drmCloseBufferHandle", drmCloseBufferHandle(card_b, handle_b));
	check("drmCloseBufferHandle (render node)",
	      drmCloseBufferHandle(render, handle_r));
	if (munmap(a, create.size))
		fail("munmap", errno);
	destroy.handle = create.handle;
	check("drmIoctl(DRM_IOCTL_MODE_DESTROY_DUMB)",
	      drmIoctl(card_a, DRM_IOCTL_MODE_DESTROY_DUMB, &destroy));
}

static int64_t in_one_second(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)(ts.tv_sec + 1) * 1000000000 + ts.tv_nsec;
}

static void check_syncobjs(int fd)
{
	uint32_t done, timeline, first = ~0u;
	uint64_t point = 3, value = 0;
	struct pollfd pfd;
	int sync_fd, ret;

	check("drmSyncobjCreate",
	      drmSyncobjCreate(fd, DRM_SYNCOBJ_CREATE_SIGNALED, &done));
	check("drmSyncobjWait",
	      drmSyncobjWait(fd, &done, 1, in_one_second(),
			     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, &first));
	check_that("drmSyncobjWait: the signalled syncobj is not the first",
		   first == 0);

	check("drmSyncobjCreate", drmSyncobjCreate(fd, 0, &timeline));
	check("drmSyncobjTimelineSignal",
	      drmSyncobjTimelineSignal(fd, &timeline, &point, 1));
	check("drmSyncobjQuery", drmSyncobjQuery(fd, &timeline, &value, 1));
	if (value != point) {
		fprintf(stderr, "%s: drmSyncobjQuery: point %" PRIu64
			", not %" PRIu64 "\n", progname, value, point);
		exit(1);
	}
	check("drmSyncobjExportSyncFile",
	      drmSyncobjExportSyncFile(fd, timeline, &sync_fd));
	pfd = (struct pollfd){ .fd = sync_fd, .events = POLLIN };
	ret = poll(&pfd, 1, 1000);
	if (ret < 0)
		fail("poll (sync file)", errno);
	check_that("poll: the sync file of a signalled point is not readable",
		   ret == 1 && (pfd.revents & POLLIN));
	close(sync_fd);
	printf("syncobjs: waited, timeline at point %" PRIu64 ", sync file "
	       "polled\n", value);
	check("drmSyncobjDestroy", drmSyncobjDestroy(fd, timeline));
	check("drmSyncobjDestroy", drmSyncobjDestroy(fd, done));
}

int main(int argc, char **argv)
{
	const char *primary = argc > 1 ? argv[1] : "/dev/dri/card0";
	const char *render_path = argc > 2 ? argv[2] : "/dev/dri/renderD128";
	int card_a, card_b, render;

	if (argc > 3) {
		fprintf(stderr, "usage: %s [PRIMARY_NODE [RENDER_NODE]]\n",
			progname);
		return 2;
	}
	card_a = open_node(primary);
	card_b = open_node(primary);
	render = open_node(render_path);
	check_node_type(card_a, DRM_NODE_PRIMARY);
	check_node_type(render, DRM_NODE_RENDER);
	check_driver(card_a);
	check_dumb_and_prime(card_a, card_b, render);
	check_syncobjs(render);
	close(render);
	close(card_b);
	close(card_a);
	printf("ok\n");
	return 0;
}
