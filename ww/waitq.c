// SPDX-License-Identifier: MIT
/* The hashed wait queues of ww_mutexes; see include/ww/waitq.h. */
#include "ww/lockword.h"
#include "ww/waitq.h"

#define WW_BUCKET_BITS 9

static struct ww_bucket buckets[1u << WW_BUCKET_BITS] = {
	[0 ... (1u << WW_BUCKET_BITS) - 1] = {
		.mutex = PTHREAD_MUTEX_INITIALIZER,
	},
};

/* An empty queue points to itself: not a constant initialiser. */
__attribute__((constructor)) static void buckets_init(void)
{
	size_t i;

	for (i = 0; i < sizeof(buckets) / sizeof(buckets[0]); i++)
		list_init(&buckets[i].waiters);
}

struct ww_bucket *ww_bucket_of(const struct ww_mutex *lock)
{
	uint64_t h = (uint64_t)(uintptr_t)lock * 0x9e3779b97f4a7c15ull;

	return &buckets[h >> (64 - WW_BUCKET_BITS)];
}

/*
 * The first waiter of @lock from node @n on, @n included, towards the
 * tail (or the head if @back), or NULL: the bucket mixes several locks.
 */
static struct ww_waiter *waitq_from(struct ww_bucket *b, struct list_node *n,
				    const struct ww_mutex *lock, bool back)
{
	for (; n != &b->waiters; n = back ? n->prev : n->next) {
		struct ww_waiter *w = list_entry(n, struct ww_waiter, node);

		if (w->lock == lock)
			return w;
	}
	return NULL;
}

struct ww_waiter *ww_waitq_first(struct ww_bucket *b,
				 const struct ww_mutex *lock)
{
	return waitq_from(b, b->waiters.next, lock, false);
}

struct ww_waiter *ww_waitq_next(struct ww_bucket *b, struct ww_waiter *w)
{
	return waitq_from(b, w->node.next, w->lock, false);
}

/*
 * Walk this lock's waiters from the back: @w goes in front of every younger
 * context waiter and behind the youngest older one. Context-less waiters
 * are stepped over, which keeps them in FIFO order among themselves.
 */
void ww_waitq_add(struct ww_bucket *b, struct ww_waiter *w)
{
	struct list_node *pos = &b->waiters; /* the tail */
	struct ww_waiter *cur;

	if (w->ctx) {
		for (cur = waitq_from(b, b->waiters.prev, w->lock, true); cur;
		     cur = waitq_from(b, cur->node.prev, w->lock, true)) {
			if (!cur->ctx)
				continue;
			if (ww_ctx_younger(w->ctx, cur->ctx))
				break;
			pos = &cur->node;
		}
	}
	list_add_before(&w->node, pos);
}

void ww_waitq_remove(struct ww_waiter *w)
{
	list_del(&w->node);
}

unsigned int ww_waitq_count(struct ww_bucket *b, const struct ww_mutex *lock)
{
	struct ww_waiter *w;
	unsigned int n = 0;

	for (w = ww_waitq_first(b, lock); w; w = ww_waitq_next(b, w))
		n++;
	return n;
}
