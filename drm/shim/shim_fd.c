// SPDX-License-Identifier: MIT
/*
 * Which descriptors and mappings are ours.
 *
 * The fds the shim hands out are real ones (memfds: see shim_open.c), so
 * the kernel numbers them and close(), dup() and exec behave; this table
 * says which of them stand for a node, and which file they share. An
 * array indexed by fd, grown as needed: fds are small and dense.
 * Mappings are few, a list.
 *
 * Locking: table_lock guards both tables and the reference counts. It is
 * never held while calling into libttmsim, which itself opens and closes
 * pipes (through our interposers, which take table_lock): the last put
 * closes the file after unlocking.
 */
#include "shim.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct shim_map {
	struct shim_map *next;
	void *addr;
	size_t length;
	struct shim_file *sf;
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shim_file **fds;
static size_t n_fds;
static struct shim_map *maps;

/* Under table_lock: make room for @fd. */
static int grow(int fd)
{
	size_t n = n_fds ? n_fds : 64;
	struct shim_file **p;

	while (n <= (size_t)fd)
		n *= 2;
	p = realloc(fds, n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (size_t i = n_fds; i < n; i++)
		p[i] = NULL;
	fds = p;
	n_fds = n;
	return 0;
}

/*
 * shim_fd_set() - make @fd stand for @sf (NULL: for nothing).
 * Takes a reference on @sf; gives the caller the one of the file @fd
 * stood for before, returned in *@ret_old (NULL if none).
 */
int shim_fd_set(int fd, struct shim_file *sf, struct shim_file **ret_old)
{
	int ret = 0;

	*ret_old = NULL;
	if (fd < 0)
		return -EBADF;
	pthread_mutex_lock(&table_lock);
	if ((size_t)fd >= n_fds)
		ret = sf ? grow(fd) : 0;
	if (ret == 0 && (size_t)fd < n_fds) {
		*ret_old = fds[fd];
		fds[fd] = sf;
		if (sf)
			sf->refs++;
	}
	pthread_mutex_unlock(&table_lock);
	return ret;
}

struct shim_file *shim_fd_get(int fd)
{
	struct shim_file *sf = NULL;

	if (fd < 0)
		return NULL;
	pthread_mutex_lock(&table_lock);
	if ((size_t)fd < n_fds && fds[fd]) {
		sf = fds[fd];
		sf->refs++;
	}
	pthread_mutex_unlock(&table_lock);
	return sf;
}

void shim_file_put(struct shim_file *sf)
{
	unsigned int left;

	if (!sf)
		return;
	pthread_mutex_lock(&table_lock);
	left = --sf->refs;
	pthread_mutex_unlock(&table_lock);
	if (left == 0) {
		ttm_drm_close(sf->file);
		free(sf);
		shim_file_closed();
	}
}

int shim_map_add(void *addr, size_t length, struct shim_file *sf)
{
	struct shim_map *m = malloc(sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->addr = addr;
	m->length = length;
	m->sf = sf;
	pthread_mutex_lock(&table_lock);
	sf->refs++;
	m->next = maps;
	maps = m;
	pthread_mutex_unlock(&table_lock);
	return 0;
}

/*
 * The mapping made at @addr with @length, removed from the table; its
 * reference on the file goes to the caller. NULL if there is none: then
 * *@ret_err is -EINVAL if the range overlaps another of our mappings
 * (only whole mappings are undone), else 0.
 */
struct shim_file *shim_map_remove(void *addr, size_t length, int *ret_err)
{
	uintptr_t a = (uintptr_t)addr, end = a + length;
	struct shim_file *sf = NULL;
	struct shim_map **pp, *m = NULL;
	bool overlap = false;

	pthread_mutex_lock(&table_lock);
	for (pp = &maps; *pp; pp = &(*pp)->next) {
		uintptr_t lo = (uintptr_t)(*pp)->addr;

		if ((*pp)->addr == addr && (*pp)->length == length) {
			m = *pp;
			*pp = m->next;
			sf = m->sf;
			break;
		}
		if (a < lo + (*pp)->length && lo < end)
			overlap = true;
	}
	pthread_mutex_unlock(&table_lock);
	free(m);
	*ret_err = !sf && overlap ? -EINVAL : 0;
	return sf;
}

/* Forget the fds from @first to @last, closed behind our back. */
void shim_fd_forget_range(unsigned int first, unsigned int last)
{
	for (;;) {
		struct shim_file *sf = NULL;

		pthread_mutex_lock(&table_lock);
		for (size_t i = first; i < n_fds && i <= last && !sf; i++) {
			sf = fds[i];
			fds[i] = NULL;
		}
		pthread_mutex_unlock(&table_lock);
		if (!sf)
			break;
		shim_file_put(sf);
	}
}

/*
 * At exit: forget every fd (their files lose the table's references;
 * mappings keep theirs). The fds themselves are the kernel's to close.
 */
void shim_fd_forget_all(void)
{
	shim_fd_forget_range(0, UINT_MAX);
}
