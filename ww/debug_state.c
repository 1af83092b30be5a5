// SPDX-License-Identifier: MIT
/*
 * Per-thread bookkeeping of the debug checker (include/ww/debug_state.h):
 * a hash set of held locks and a small table of classes.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ww/debug_state.h"

/* At most this many held locks are listed in a report. */
#define PRINT_MAX 16

/* The state of every thread the checker gave up on. */
static struct ww_debug_thread lost_state = { .lost = true };

/* Whether a test asked for the allocation at @site to fail. */
static bool alloc_fails(enum ww_debug_alloc_site site)
{
	return ttmsim_test_ww_debug_alloc_fails &&
	       ttmsim_test_ww_debug_alloc_fails(site);
}

struct ww_debug_thread *ww_debug_state(struct ww_thread *t)
{
	struct ww_debug_thread *d = t->debug;

	if (__builtin_expect(d != NULL, 1))
		return d->lost ? NULL : d;
	if (t->shared)
		return NULL;
	d = alloc_fails(WW_DEBUG_ALLOC_STATE) ? NULL : calloc(1, sizeof(*d));
	if (!d)
		ww_debug_state_lose(t);
	else
		t->debug = d;
	return d;
}

struct ww_debug_class *ww_debug_class_find(struct ww_debug_thread *d,
					   const struct ww_class *cls)
{
	size_t i;

	/* A thread uses few classes: a scan beats hashing here. */
	for (i = 0; i < d->n_classes; i++)
		if (d->classes[i].cls == cls)
			return &d->classes[i];
	return NULL;
}

struct ww_debug_class *ww_debug_class_of(struct ww_debug_thread *d,
					 struct ww_class *cls)
{
	struct ww_debug_class *c = ww_debug_class_find(d, cls);

	if (c)
		return c;
	if (d->n_classes == d->classes_cap) {
		size_t cap = d->classes_cap ? 2 * d->classes_cap : 4;

		c = alloc_fails(WW_DEBUG_ALLOC_CLASSES) ? NULL :
			realloc(d->classes, cap * sizeof(*c));
		if (!c)
			return NULL;
		d->classes = c;
		d->classes_cap = cap;
	}
	c = &d->classes[d->n_classes++];
	*c = (struct ww_debug_class){ .cls = cls };
	return c;
}

static size_t slot_of(const struct ww_mutex *lock, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)lock * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (cap - 1);
}

static void insert(struct ww_debug_held *tab, size_t cap,
		   const struct ww_debug_held *e)
{
	size_t i = slot_of(e->lock, cap);

	while (tab[i].lock)
		i = (i + 1) & (cap - 1);
	tab[i] = *e;
}

/* Keep the load at most one half: probes stay short. */
static bool grow(struct ww_debug_thread *d)
{
	size_t cap = d->held_cap ? 2 * d->held_cap : 16, i;
	struct ww_debug_held *tab = alloc_fails(WW_DEBUG_ALLOC_HELD) ? NULL :
		calloc(cap, sizeof(*tab));

	if (!tab)
		return false;
	for (i = 0; i < d->held_cap; i++)
		if (d->held[i].lock)
			insert(tab, cap, &d->held[i]);
	free(d->held);
	d->held = tab;
	d->held_cap = cap;
	return true;
}

bool ww_debug_held_reserve(struct ww_debug_thread *d)
{
	return 2 * (d->held_n + 1) <= d->held_cap || grow(d);
}

void ww_debug_held_add(struct ww_debug_thread *d, struct ww_mutex *lock,
		       struct ww_acquire_ctx *ctx, struct ww_debug_class *c,
		       const char *file, int line)
{
	struct ww_debug_held e = {
		.lock = lock,
		.ctx = ctx,
		.stamp = ctx ? ctx->stamp : 0,
		.file = file,
		.line = line,
		.cls = (unsigned int)(c - d->classes),
		.seq = ++d->seq,
	};

	insert(d->held, d->held_cap, &e);
	d->held_n++;
	c->held++;
	if (!ctx)
		c->held_noctx++;
}

struct ww_debug_held *ww_debug_held_find(struct ww_debug_thread *d,
					 const struct ww_mutex *lock)
{
	size_t i;

	if (!d->held_n)
		return NULL;
	for (i = slot_of(lock, d->held_cap); d->held[i].lock;
	     i = (i + 1) & (d->held_cap - 1))
		if (d->held[i].lock == lock)
			return &d->held[i];
	return NULL;
}

/*
 * Deletion without tombstones: shift back every later entry of the probe
 * run that the hole would otherwise cut off from its home slot.
 */
void ww_debug_held_remove(struct ww_debug_thread *d, struct ww_debug_held *h)
{
	size_t mask = d->held_cap - 1, hole = (size_t)(h - d->held), i = hole;
	struct ww_debug_class *c = &d->classes[h->cls];

	c->held--;
	if (!h->ctx)
		c->held_noctx--;
	d->held_n--;
	for (;;) {
		size_t home;

		i = (i + 1) & mask;
		if (!d->held[i].lock)
			break;
		home = slot_of(d->held[i].lock, d->held_cap);
		/* Movable if home is not cyclically in (hole, i]. */
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			d->held[hole] = d->held[i];
			hole = i;
		}
	}
	d->held[hole].lock = NULL;
}

struct ww_debug_held *ww_debug_held_oldest(struct ww_debug_thread *d)
{
	struct ww_debug_held *best = NULL;
	size_t i;

	for (i = 0; i < d->held_cap; i++)
		if (d->held[i].lock && (!best || d->held[i].seq < best->seq))
			best = &d->held[i];
	return best;
}

static int by_seq(const void *a, const void *b)
{
	const struct ww_debug_held *x = *(const struct ww_debug_held *const *)a;
	const struct ww_debug_held *y = *(const struct ww_debug_held *const *)b;

	return (x->seq > y->seq) - (x->seq < y->seq);
}

static void print_held(struct ww_debug_thread *d, int fd)
{
	struct ww_debug_held **list;
	size_t i, n = 0;

	dprintf(fd, "  held by this thread: %zu lock%s\n", d->held_n,
		d->held_n == 1 ? "" : "s");
	if (!d->held_n)
		return;
	list = malloc(d->held_n * sizeof(*list));
	if (!list)
		return;
	for (i = 0; i < d->held_cap; i++)
		if (d->held[i].lock)
			list[n++] = &d->held[i];
	qsort(list, n, sizeof(*list), by_seq);
	for (i = 0; i < n && i < PRINT_MAX; i++) {
		const struct ww_debug_held *h = list[i];

		dprintf(fd, "    %p  class %s, ", (void *)h->lock,
			d->classes[h->cls].cls->name);
		if (h->ctx)
			dprintf(fd, "ctx stamp %lu", h->stamp);
		else
			dprintf(fd, "no ctx");
		if (h->file)
			dprintf(fd, ", taken at %s:%d", h->file, h->line);
		dprintf(fd, "\n");
	}
	if (n > PRINT_MAX)
		dprintf(fd, "    ... and %zu more\n", n - PRINT_MAX);
	free(list);
}

static void print_open(struct ww_debug_thread *d, int fd)
{
	size_t i;

	for (i = 0; i < d->n_classes; i++) {
		const struct ww_debug_class *c = &d->classes[i];

		if (!c->open || !c->ctx)
			continue;
		dprintf(fd, "  open context: %p, class %s, stamp %lu",
			(void *)c->ctx, c->cls->name, c->ctx_stamp);
		if (c->ctx_file)
			dprintf(fd, ", opened at %s:%d", c->ctx_file,
				c->ctx_line);
		dprintf(fd, "\n");
	}
}

void ww_debug_state_print(struct ww_thread *t, int fd)
{
	struct ww_debug_thread *d = t->debug;

	if (!d || d->lost) {
		dprintf(fd, "  held by this thread: (not tracked)\n");
		return;
	}
	print_held(d, fd);
	print_open(d, fd);
}

void ww_debug_state_lose(struct ww_thread *t)
{
	ww_debug_state_free(t);
	t->debug = &lost_state;
	dprintf(2, "ttmsim: ww_debug: out of memory, thread %d no longer "
		"checked\n", (int)t->tid);
}

void ww_debug_state_free(struct ww_thread *t)
{
	struct ww_debug_thread *d = t->debug;

	t->debug = NULL;
	if (!d || d == &lost_state)
		return;
	free(d->held);
	free(d->classes);
	free(d);
}
