// SPDX-License-Identifier: MIT
/*
 * PRIME-like sharing: buffers as file descriptors.
 *
 * Each export makes a new pipe (both ends close-on-exec) and hands out its
 * read end. A process-wide registry maps the pipe, by the device and inode
 * numbers fstat() gives for either end, to the buffer and the write end;
 * importing an fd is fstat() and a registry lookup. Two exports of one
 * buffer are two pipes and two entries: nothing is shared between them,
 * and importing either finds the same buffer.
 *
 * Lifetime. An entry holds one reference to its buffer and owns the write
 * end. The reference lasts while a read end of the pipe is open anywhere:
 * the fd handed out, its dups, copies in forked children or received over
 * a socket. The kernel counts those readers for us: poll() on the write
 * end reports POLLERR once there are none left. Nobody tells us when that
 * happens, so prime_collect() looks, with one poll() over every entry's
 * write end, at each export and import and in ttm_client_close(); an entry
 * found without readers drops its reference and closes its write end. A
 * buffer therefore outlives the close of its last descriptor until the
 * next of those calls, in any client of any device. The registry does not
 * keep a read end of its own: that reader would never go away.
 *
 * Keeping the write end until the entry goes is also what makes the
 * inode a safe key: a pipe's inode lives while either end is open, so no
 * new pipe can reuse the number of a registered one, and an fd that misses
 * in the registry was never ours (a plain pipe, a fence fd) or was closed.
 *
 * Costs: export, import and collection are O(live exports); this is a
 * simulation of a few shared buffers, not a server of millions of them.
 *
 * Locking: registry_lock guards the registry and is taken with no client
 * lock held. A collected buffer is put under it: ttm_bo_put() takes the
 * device's and fences' locks, which never lead back here. Putting after
 * the unlock would be wrong: a collection that returns must have freed
 * what it found, whoever found it, because ttm_client_close() is the last
 * PRIME call before ttm_device_destroy(); a collector that came second
 * and found nothing would return while the first still puts a buffer of
 * the device being destroyed. The price: a last put that sleeps (delayed
 * destroy out of memory, bo/bo_destroy.c) holds up every PRIME call.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "execbuf/execbuf.h"
#include "util/compiler.h"

struct prime_entry {
	dev_t pipe_dev;
	ino_t pipe_ino;
	struct ttm_bo *bo;  /* a reference */
};

/*
 * Parallel arrays, so that polls[] goes to poll() as it is: polls[i].fd is
 * entries[i]'s write end, with no events asked for (POLLERR always comes).
 */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct prime_entry *entries;
static struct pollfd *polls;
static size_t n_entries, cap_entries;

/* Under registry_lock: drop entry @i, moving the last one into its place. */
static void entry_release(size_t i)
{
	/*
	 * POLLNVAL: someone closed our write end behind our back, and its
	 * number may be another file's by now. Not ours to close again.
	 */
	if (!(polls[i].revents & POLLNVAL))
		close(polls[i].fd);
	ttm_bo_put(entries[i].bo);
	n_entries--;
	entries[i] = entries[n_entries];
	polls[i] = polls[n_entries];
}

void prime_collect(void)
{
	size_t i;
	int n;

	pthread_mutex_lock(&registry_lock);
	if (n_entries == 0) {
		pthread_mutex_unlock(&registry_lock);
		return;
	}
	do {
		n = poll(polls, n_entries, 0);
	} while (n < 0 && errno == EINTR);
	/* On failure (-ENOMEM in the kernel), the next call looks again. */
	for (i = n_entries; n > 0 && i-- > 0;) {
		if (polls[i].revents & (POLLERR | POLLNVAL)) {
			entry_release(i);
			n--;
		}
	}
	pthread_mutex_unlock(&registry_lock);
}

/* Under registry_lock: room for one more entry. */
static int registry_reserve(void)
{
	size_t cap;
	void *p;

	if (n_entries < cap_entries)
		return 0;
	cap = cap_entries ? cap_entries * 2 : 16;
	p = realloc(entries, cap * sizeof(*entries));
	if (!p)
		return -ENOMEM;
	entries = p;
	p = realloc(polls, cap * sizeof(*polls));
	if (!p)
		return -ENOMEM; /* the larger entries[] is kept: harmless */
	polls = p;
	cap_entries = cap;
	return 0;
}

TTM_EXPORT int ttm_client_export_fd(struct ttm_client *client,
				    uint32_t handle, int *ret_fd)
{
	struct ttm_bo *bo;
	struct stat st;
	int fds[2], ret;

	bo = ttm_client_lookup(client, handle);
	if (!bo)
		return -ENOENT;
	/*
	 * An import exports its exporter's buffer, as the kernel re-exports
	 * an imported object's dma-buf: imported back into that device, it
	 * is that device's own buffer again.
	 */
	if (ttm_bo_exporter(bo) != bo) {
		struct ttm_bo *exporter = ttm_bo_get(ttm_bo_exporter(bo));

		ttm_bo_put(bo);
		bo = exporter;
	}
	prime_collect();
	if (pipe2(fds, O_CLOEXEC)) {
		ret = -errno;
		goto err_put;
	}
	if (fstat(fds[0], &st)) {
		ret = -errno;
		goto err_close;
	}

	pthread_mutex_lock(&registry_lock);
	ret = registry_reserve();
	if (ret == 0) {
		entries[n_entries] = (struct prime_entry){
			.pipe_dev = st.st_dev,
			.pipe_ino = st.st_ino,
			.bo = bo,  /* the lookup's reference */
		};
		polls[n_entries] = (struct pollfd){ .fd = fds[1] };
		n_entries++;
	}
	pthread_mutex_unlock(&registry_lock);
	if (ret)
		goto err_close;
	*ret_fd = fds[0];
	return 0;

err_close:
	close(fds[0]);
	close(fds[1]);
err_put:
	ttm_bo_put(bo);
	return ret;
}

TTM_EXPORT int ttm_client_import_fd(struct ttm_client *client, int fd,
				    uint32_t *ret_handle, bool *ret_new)
{
	struct ttm_bo *bo = NULL, *imported;
	struct stat st;
	size_t i;
	int ret;

	/* The caller's fd is open, so collecting cannot take its entry. */
	prime_collect();
	if (fd < 0 || fstat(fd, &st) || !S_ISFIFO(st.st_mode))
		return -EBADF;

	pthread_mutex_lock(&registry_lock);
	for (i = 0; i < n_entries; i++) {
		if (entries[i].pipe_ino == st.st_ino &&
		    entries[i].pipe_dev == st.st_dev) {
			bo = ttm_bo_get(entries[i].bo);
			break;
		}
	}
	pthread_mutex_unlock(&registry_lock);
	if (!bo)
		return -EBADF;

	/*
	 * Another device's buffer gets a buffer of this device that shares
	 * its reservation and pages; this device's own comes back as is.
	 */
	ret = ttm_bo_import(client->dev, bo, &imported);
	ttm_bo_put(bo);
	if (ret)
		return ret;
	ret = ttm_client_bo_add(client, imported, ret_handle, ret_new);
	ttm_bo_put(imported);
	return ret;
}
