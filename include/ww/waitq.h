/* SPDX-License-Identifier: MIT */
/*
 * Wait queues of ww_mutexes, kept outside the locks (a "parking lot").
 *
 * A ww_mutex is only a lock word and a class pointer; threads that must
 * sleep on it queue in one of a fixed number of hashed buckets, each with
 * its own mutex. A bucket's queue mixes the waiters of every lock that
 * hashes to it; the per-lock order is what matters: waiters with a context
 * are sorted by stamp (oldest first), waiters without one keep FIFO order
 * among them (the kernel's rule). Waiter records live on the sleeping
 * thread's stack.
 */
#ifndef TTMSIM_WW_WAITQ_H
#define TTMSIM_WW_WAITQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "ttmsim/ww_mutex.h"
#include "util/list.h"

struct ww_thread;

struct ww_waiter {
	struct list_node node;        /* on the bucket's queue */
	struct ww_mutex *lock;
	struct ww_acquire_ctx *ctx;   /* NULL: a plain (context-less) lock */
	struct ww_thread *thread;
	uintptr_t token;              /* the owner value this waiter writes */
	bool granted;                 /* the lock was handed to us */
};

struct ww_bucket {
	pthread_mutex_t mutex;
	struct list_node waiters;
} __attribute__((aligned(64)));

struct ww_bucket *ww_bucket_of(const struct ww_mutex *lock);

static inline void ww_bucket_lock(struct ww_bucket *b)
{
	pthread_mutex_lock(&b->mutex);
}

static inline void ww_bucket_unlock(struct ww_bucket *b)
{
	pthread_mutex_unlock(&b->mutex);
}

/** First waiter of @lock in @b, or NULL. Bucket locked. */
struct ww_waiter *ww_waitq_first(struct ww_bucket *b,
				 const struct ww_mutex *lock);

/** Next waiter of the same lock after @w in @b, or NULL. Bucket locked. */
struct ww_waiter *ww_waitq_next(struct ww_bucket *b, struct ww_waiter *w);

/** Queue @w (its lock, ctx, thread and token filled in). Bucket locked. */
void ww_waitq_add(struct ww_bucket *b, struct ww_waiter *w);

/** Unqueue @w. Its bucket locked. */
void ww_waitq_remove(struct ww_waiter *w);

/** Number of waiters of @lock. Bucket locked. */
unsigned int ww_waitq_count(struct ww_bucket *b, const struct ww_mutex *lock);

#endif /* TTMSIM_WW_WAITQ_H */
