// SPDX-License-Identifier: MIT
/*
 * Fences as file descriptors, our stand-in for sync_file.
 *
 * Each exported fence owns one pipe, made on its first export; every
 * export hands out a dup of the read end. Signalling writes 1 - error
 * bytes (1 for success, 6 for -EIO; at most 4096 = PIPE_BUF, so the write
 * is atomic and always fits in an empty pipe), which makes the read end
 * POLLIN for poll() and libdrm's sync_wait(). Why a pipe and not an
 * eventfd: the status must stay readable without being consumed, by any
 * number of importers, and FIONREAD on a pipe reads the byte count without
 * taking the bytes; an eventfd only gives its value by resetting it.
 *
 * The fence keeps both ends until it is freed. A fence freed unsignalled
 * closes the write end without writing, so its readers see POLLHUP.
 *
 * Importing maps the pipe (device and inode of the read end) back to its
 * fence through a registry that holds no references: the fence leaves it
 * when freed, and closes its write end in the same critical section, so an
 * importer that misses in the registry always finds the pipe's final state.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu_sim/fence.h"
#include "util/compiler.h"

#define REGISTRY_BUCKETS 256u
/*
 * Our pipes' size, which tells them from others once their fence is gone:
 * one page (the kernel rounds a pipe up to whole pages), PIPE_BUF at least.
 */
static int fence_pipe_size(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 4096 ? (int)page : 4096;
}

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ttm_fence *registry[REGISTRY_BUCKETS];

static struct ttm_fence **registry_bucket(ino_t ino)
{
	return &registry[(uint64_t)ino % REGISTRY_BUCKETS];
}

/* Under registry_lock: the registered fence of the pipe @dev:@ino. */
static struct ttm_fence *registry_find(dev_t dev, ino_t ino)
{
	struct ttm_fence *f;

	for (f = *registry_bucket(ino); f; f = f->reg_next)
		if (f->pipe_ino == ino && f->pipe_dev == dev)
			return f;
	return NULL;
}

/* Write the status bytes; @f->lock is held and @f has signalled. */
void fence_fd_signal(struct ttm_fence *f)
{
	static const char bytes[FENCE_MAX_ERRNO + 1];
	int status = __atomic_load_n(&f->status, __ATOMIC_RELAXED);
	size_t n = status > 0 ? 1 : 1 + (size_t)-status;

	/* Cannot fail short of a bug: we are the only writer. */
	if (write(f->pipe_wr, bytes, n) < 0)
		return;
}

/*
 * A new pipe of ours: one page (F_SETPIPE_SZ), which marks it (a pipe's
 * default is 16 pages), enough for the status bytes (at most PIPE_BUF);
 * its read end's identity in @dev and @ino.
 */
static int fence_pipe_make(int fds[2], dev_t *dev, ino_t *ino)
{
	struct stat st;
	int ret;

	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	if (fcntl(fds[1], F_SETPIPE_SZ, fence_pipe_size()) < 0 ||
	    fstat(fds[0], &st)) {
		ret = -errno;
		close(fds[0]);
		close(fds[1]);
		return ret;
	}
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

/* With @f->lock held: give @f the pipe @fds and register it. */
static void fence_fd_attach(struct ttm_fence *f, const int fds[2], dev_t dev,
			    ino_t ino)
{
	f->pipe_rd = fds[0];
	f->pipe_wr = fds[1];
	f->pipe_dev = dev;
	f->pipe_ino = ino;
	if (__atomic_load_n(&f->status, __ATOMIC_RELAXED))
		fence_fd_signal(f);

	pthread_mutex_lock(&registry_lock);
	f->reg_next = *registry_bucket(ino);
	*registry_bucket(ino) = f;
	pthread_mutex_unlock(&registry_lock);
}

/* With @f->lock held: make @f's pipe and register it. */
static int fence_fd_create(struct ttm_fence *f)
{
	dev_t dev;
	ino_t ino;
	int fds[2];
	int ret = fence_pipe_make(fds, &dev, &ino);

	if (ret == 0)
		fence_fd_attach(f, fds, dev, ino);
	return ret;
}

/* The last reference went: leave the registry, close the pipe. */
void fence_fd_release(struct ttm_fence *f)
{
	struct ttm_fence **p;

	pthread_mutex_lock(&registry_lock);
	for (p = registry_bucket(f->pipe_ino); *p != f; p = &(*p)->reg_next)
		;
	*p = f->reg_next;
	close(f->pipe_wr);
	pthread_mutex_unlock(&registry_lock);
	close(f->pipe_rd);
	f->pipe_rd = -1;
	f->pipe_wr = -1;
}

TTM_EXPORT int ttm_fence_export_fd(struct ttm_fence *fence)
{
	int fd = 0;

	/*
	 * A poll() of the descriptor waits: so does the export, as the
	 * kernel's sync_file poll adds a callback. Without it a fence that
	 * signals only once enabled (a container) never would.
	 */
	fence_enable_signaling(fence);
	pthread_mutex_lock(&fence->lock);
	if (fence->pipe_rd < 0)
		fd = fence_fd_create(fence);
	if (fd == 0) {
		fd = fcntl(fence->pipe_rd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			fd = -errno;
	}
	pthread_mutex_unlock(&fence->lock);
	return fd;
}

TTM_EXPORT int ttm_fence_fd_reserve(struct ttm_fence_fd_slot *slot)
{
	int fds[2], fd, ret;
	dev_t dev;
	ino_t ino;

	/* Empty until it all worked: unreserve after a failure is safe. */
	*slot = (struct ttm_fence_fd_slot){ .fd = -1, .pipe_rd = -1,
					    .pipe_wr = -1 };
	ret = fence_pipe_make(fds, &dev, &ino);
	if (ret)
		return ret;
	fd = fcntl(fds[0], F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		close(fds[0]);
		close(fds[1]);
		return ret;
	}
	slot->fd = fd;
	slot->pipe_dev = dev;
	slot->pipe_ino = ino;
	slot->pipe_rd = fds[0];
	slot->pipe_wr = fds[1];
	return 0;
}

TTM_EXPORT int ttm_fence_fd_install(struct ttm_fence_fd_slot *slot,
				    struct ttm_fence *fence)
{
	const int fds[2] = { slot->pipe_rd, slot->pipe_wr };
	int fd = slot->fd;

	fence_enable_signaling(fence);
	pthread_mutex_lock(&fence->lock);
	if (fence->pipe_rd < 0) {
		/* The slot's descriptor reads the pipe @fence now owns. */
		fence_fd_attach(fence, fds, (dev_t)slot->pipe_dev,
				(ino_t)slot->pipe_ino);
	} else {
		/*
		 * Already exported: the slot's descriptor becomes one more
		 * on @fence's pipe. dup3() onto a descriptor we hold takes
		 * no new one, so nothing can run short; the spare pipe goes.
		 */
		while (dup3(fence->pipe_rd, fd, O_CLOEXEC) < 0 &&
		       (errno == EINTR || errno == EBUSY))
			;
		close(fds[0]);
		close(fds[1]);
	}
	pthread_mutex_unlock(&fence->lock);
	*slot = (struct ttm_fence_fd_slot){ .fd = -1, .pipe_rd = -1,
					    .pipe_wr = -1 };
	return fd;
}

TTM_EXPORT void ttm_fence_fd_unreserve(struct ttm_fence_fd_slot *slot)
{
	if (slot->fd >= 0) {
		close(slot->fd);
		close(slot->pipe_rd);
		close(slot->pipe_wr);
	}
	*slot = (struct ttm_fence_fd_slot){ .fd = -1, .pipe_rd = -1,
					    .pipe_wr = -1 };
}

/* Fences rebuilt from an orphaned pipe all share one context. */
static uint64_t orphan_context;
static pthread_once_t orphan_once = PTHREAD_ONCE_INIT;

static void orphan_context_init(void)
{
	orphan_context = ttm_fence_context_alloc(1);
}

/*
 * The fence of @fd is gone: a new signalled fence with the status its pipe
 * still holds. The write end is closed (see the top of the file), so the
 * byte count is final.
 */
static int fence_fd_orphan(int fd, struct ttm_fence **ret_fence)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct ttm_fence *f;
	int n, error, ret;

	/*
	 * Ours, from its marks: a pipe's read end of one page whose write
	 * end is closed (as the fence's release does), holding at most
	 * the status bytes. Anything else is -EINVAL: a pipe still written
	 * to is not a fence that is gone.
	 */
	if ((fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDONLY ||
	    fcntl(fd, F_GETPIPE_SZ) != fence_pipe_size() ||
	    poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLHUP) ||
	    ioctl(fd, FIONREAD, &n) || n > FENCE_MAX_ERRNO + 1)
		return -EINVAL;
	error = n > 0 ? -(n - 1) : -ECANCELED;

	pthread_once(&orphan_once, orphan_context_init);
	ret = ttm_fence_create(orphan_context, 0, &f);
	if (ret)
		return ret;
	ttm_fence_signal(f, error);
	*ret_fence = f;
	return 0;
}

TTM_EXPORT int ttm_fence_import_fd(int fd, struct ttm_fence **ret_fence)
{
	struct ttm_fence *f;
	struct stat st;

	if (fstat(fd, &st) || !S_ISFIFO(st.st_mode))
		return -EINVAL;
	for (;;) {
		pthread_mutex_lock(&registry_lock);
		f = registry_find(st.st_dev, st.st_ino);
		if (f && ttm_fence_tryget(f)) {
			pthread_mutex_unlock(&registry_lock);
			*ret_fence = f;
			return 0;
		}
		pthread_mutex_unlock(&registry_lock);
		if (!f)
			return fence_fd_orphan(fd, ret_fence);
		/*
		 * Its last reference is being dropped: it is about to
		 * leave the registry. Ask again.
		 */
		sched_yield();
	}
}
