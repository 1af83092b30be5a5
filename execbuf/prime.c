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
 * Syncobjs (ttm_client_syncobj_export_fd()) share the registry: an entry
 * holds a buffer or a syncobj, and each import takes only its own kind.
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

/*
 * A buffer's descriptor or a syncobj's (ttm_client_syncobj_export_fd()):
 * one registry and one collection for both, so that each kind of import
 * refuses the other's descriptors by finding no object of its kind.
 */
struct prime_entry {
	dev_t pipe_dev;
	ino_t pipe_ino;
	struct ttm_bo *bo;            /* a reference, or NULL */
	struct ttm_syncobj *syncobj;  /* a reference, or NULL */
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
	ttm_syncobj_put(entries[i].syncobj);
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

/*
 * A new pipe registered for @entry (its references become the entry's on
 * success); its read end in *@ret_fd.
 */
static int registry_add(struct prime_entry entry, int *ret_fd)
{
	struct stat st;
	int fds[2], ret;

	prime_collect();
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	if (fstat(fds[0], &st)) {
		ret = -errno;
		goto err_close;
	}
	entry.pipe_dev = st.st_dev;
	entry.pipe_ino = st.st_ino;

	pthread_mutex_lock(&registry_lock);
	ret = registry_reserve();
	if (ret == 0) {
		entries[n_entries] = entry;
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
	return ret;
}

/* The entry of @fd's pipe, with new references to its objects. */
static bool registry_find(int fd, struct prime_entry *ret_entry)
{
	struct stat st;
	bool found = false;
	size_t i;

	/* The caller's fd is open, so collecting cannot take its entry. */
	prime_collect();
	if (fd < 0 || fstat(fd, &st) || !S_ISFIFO(st.st_mode))
		return false;

	pthread_mutex_lock(&registry_lock);
	for (i = 0; i < n_entries; i++) {
		if (entries[i].pipe_ino == st.st_ino &&
		    entries[i].pipe_dev == st.st_dev) {
			*ret_entry = entries[i];
			ttm_bo_get(entries[i].bo);
			ttm_syncobj_get(entries[i].syncobj);
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&registry_lock);
	return found;
}

TTM_EXPORT int ttm_client_export_fd(struct ttm_client *client,
				    uint32_t handle, int *ret_fd)
{
	struct ttm_bo *bo;
	int ret;

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
	/* The lookup's reference becomes the entry's. */
	ret = registry_add((struct prime_entry){ .bo = bo }, ret_fd);
	if (ret)
		ttm_bo_put(bo);
	return ret;
}

int prime_syncobj_export(struct ttm_syncobj *syncobj, int *ret_fd)
{
	int ret;

	ttm_syncobj_get(syncobj);
	ret = registry_add((struct prime_entry){ .syncobj = syncobj },
			   ret_fd);
	if (ret)
		ttm_syncobj_put(syncobj);
	return ret;
}

struct ttm_syncobj *prime_syncobj_lookup(int fd)
{
	struct prime_entry e;

	if (!registry_find(fd, &e))
		return NULL;
	ttm_bo_put(e.bo);
	return e.syncobj;
}

TTM_EXPORT int ttm_client_import_fd(struct ttm_client *client, int fd,
				    uint32_t *ret_handle, bool *ret_new)
{
	struct ttm_bo *imported;
	struct prime_entry e;
	int ret;

	if (!registry_find(fd, &e))
		return -EBADF;
	/* A syncobj's descriptor is no buffer's. */
	ttm_syncobj_put(e.syncobj);
	if (!e.bo)
		return -EBADF;

	/*
	 * Another device's buffer gets a buffer of this device that shares
	 * its reservation and pages; this device's own comes back as is.
	 */
	ret = ttm_bo_import(client->dev, e.bo, &imported);
	ttm_bo_put(e.bo);
	if (ret)
		return ret;
	ret = ttm_client_bo_add(client, imported, ret_handle, ret_new);
	ttm_bo_put(imported);
	return ret;
}
