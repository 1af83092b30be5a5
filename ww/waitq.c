// SPDX-License-Identifier: MIT
/* The hashed wait queues of ww_mutexes; see include/ww/waitq.h. */
#include "ww/waitq.h"

#define WW_BUCKET_BITS 9

static struct ww_bucket buckets[1u << WW_BUCKET_BITS] = {
	[0 ... (1u << WW_BUCKET_BITS) - 1] = {
		.mutex = PTHREAD_MUTEX_INITIALIZER,
	},
};

struct ww_bucket *ww_bucket_of(const struct ww_mutex *lock)
{
	uint64_t h = (uint64_t)(uintptr_t)lock * 0x9e3779b97f4a7c15ull;

	return &buckets[h >> (64 - WW_BUCKET_BITS)];
}

struct ww_waiter *ww_waitq_first(struct ww_bucket *b,
				 const struct ww_mutex *lock)
{
	struct ww_waiter *w;

	for (w = b->head; w; w = w->next)
		if (w->lock == lock)
			return w;
	return NULL;
}

struct ww_waiter *ww_waitq_next(struct ww_waiter *w)
{
	const struct ww_mutex *lock = w->lock;

	for (w = w->next; w; w = w->next)
		if (w->lock == lock)
			return w;
	return NULL;
}

static struct ww_waiter *waitq_prev(struct ww_waiter *w)
{
	const struct ww_mutex *lock = w->lock;

	for (w = w->prev; w; w = w->prev)
		if (w->lock == lock)
			return w;
	return NULL;
}

static struct ww_waiter *waitq_last(struct ww_bucket *b,
				    const struct ww_mutex *lock)
{
	struct ww_waiter *w;

	for (w = b->tail; w; w = w->prev)
		if (w->lock == lock)
			return w;
	return NULL;
}

static void insert_before(struct ww_bucket *b, struct ww_waiter *pos,
			  struct ww_waiter *w)
{
	w->next = pos;
	w->prev = pos ? pos->prev : b->tail;
	if (w->prev)
		w->prev->next = w;
	else
		b->head = w;
	if (pos)
		pos->prev = w;
	else
		b->tail = w;
}

/*
 * Walk this lock's waiters from the back: @w goes in front of every younger
 * context waiter and behind the youngest older one. Context-less waiters
 * are stepped over, which keeps them in FIFO order among themselves.
 */
void ww_waitq_add(struct ww_bucket *b, struct ww_waiter *w)
{
	struct ww_waiter *cur, *pos = NULL;

	if (w->ctx) {
		for (cur = waitq_last(b, w->lock); cur; cur = waitq_prev(cur)) {
			if (!cur->ctx)
				continue;
			if ((long)(w->ctx->stamp - cur->ctx->stamp) > 0)
				break;
			pos = cur;
		}
	}
	insert_before(b, pos, w);
}

void ww_waitq_remove(struct ww_bucket *b, struct ww_waiter *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		b->head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		b->tail = w->prev;
	w->prev = w->next = NULL;
}

unsigned int ww_waitq_count(struct ww_bucket *b, const struct ww_mutex *lock)
{
	struct ww_waiter *w;
	unsigned int n = 0;

	for (w = ww_waitq_first(b, lock); w; w = ww_waitq_next(w))
		n++;
	return n;
}
