/* SPDX-License-Identifier: MIT */
/*
 * What the debug checker knows about one thread: the ww_mutexes it holds
 * (a hash table keyed by lock, no size limit) and, per class, how many of
 * those it holds, how many without a context, and its open contexts.
 *
 * Only the owning thread touches its state, so none of this is locked.
 */
#ifndef TTMSIM_WW_DEBUG_STATE_H
#define TTMSIM_WW_DEBUG_STATE_H

#include <stddef.h>

#include "ttmsim/ww_mutex.h"
#include "ww/thread.h"

struct ww_debug_class {
	struct ww_class *cls;
	unsigned long held;        /* locks of this class held */
	unsigned long held_noctx;  /* ... of which taken without a ctx */
	unsigned long open;        /* acquire contexts open */
	/*
	 * The open one, if any. Its fields are copied: at thread exit the
	 * context's stack frame may be gone.
	 */
	struct ww_acquire_ctx *ctx;
	unsigned long ctx_stamp;
	const char *ctx_file;      /* where it was opened */
	int ctx_line;
};

struct ww_debug_held {
	struct ww_mutex *lock;     /* NULL: free slot */
	struct ww_acquire_ctx *ctx;
	unsigned long stamp;       /* ctx's, copied: ctx may be gone */
	const char *file;
	int line;
	unsigned int cls;          /* index into the class table */
	unsigned long seq;         /* order of acquisition, for reports */
};

struct ww_debug_thread {
	struct ww_debug_held *held; /* open addressing, linear probing */
	size_t held_cap;            /* a power of two, or 0 */
	size_t held_n;
	unsigned long seq;
	struct ww_debug_class *classes;
	size_t n_classes, classes_cap;
	bool lost;                  /* out of memory: no longer tracked */
};

/*
 * The calling thread's state, created on first use; NULL if the checker
 * cannot track this thread (out of memory, or the shared thread struct):
 * the caller then checks nothing, rather than report false positives.
 */
struct ww_debug_thread *ww_debug_state(struct ww_thread *t);

/* The entry of @cls, created if needed; NULL on out of memory. */
struct ww_debug_class *ww_debug_class_of(struct ww_debug_thread *d,
					 struct ww_class *cls);

/* The entry of @cls, or NULL: never allocates. */
struct ww_debug_class *ww_debug_class_find(struct ww_debug_thread *d,
					   const struct ww_class *cls);

/*
 * Make room to record one more held lock; false on out of memory. Called
 * before a lock is taken, so that recording it afterwards cannot fail: a
 * lock taken but not recorded would make its correct unlock look foreign.
 */
bool ww_debug_held_reserve(struct ww_debug_thread *d);

/* Record @lock as held, in the room ww_debug_held_reserve() made. */
void ww_debug_held_add(struct ww_debug_thread *d, struct ww_mutex *lock,
		       struct ww_acquire_ctx *ctx, struct ww_debug_class *c,
		       const char *file, int line);

/* The entry of @lock, or NULL if this thread does not hold it. */
struct ww_debug_held *ww_debug_held_find(struct ww_debug_thread *d,
					 const struct ww_mutex *lock);

/* Forget entry @h (from ww_debug_held_find()). */
void ww_debug_held_remove(struct ww_debug_thread *d, struct ww_debug_held *h);

/* The earliest-taken lock still held, or NULL. */
struct ww_debug_held *ww_debug_held_oldest(struct ww_debug_thread *d);

/* Print @t's held locks and open contexts, for a report. */
void ww_debug_state_print(struct ww_thread *t, int fd);

/*
 * Stop tracking @t for good (out of memory), with one line on stderr: its
 * held locks and open contexts are forgotten, and from then on its calls
 * are made unchecked (an unlock of a lock the checker never recorded is
 * performed, not reported). Call it before taking a lock that could not
 * be recorded, never after: a checker that forgot a lock would report its
 * unlock as a bug.
 */
void ww_debug_state_lose(struct ww_thread *t);

/*
 * The checker's allocations, for tests: a program that defines this
 * function (tests/test_ww_debug_oom.c does) is asked before each of them,
 * and the allocation fails when it returns true. Weak and undefined in
 * the library, so not part of the ABI; NULL in every other program.
 */
enum ww_debug_alloc_site {
	WW_DEBUG_ALLOC_STATE,   /* a thread's state, on its first call */
	WW_DEBUG_ALLOC_CLASSES, /* growing the class table */
	WW_DEBUG_ALLOC_HELD,    /* growing the held-lock table */
};

bool ttmsim_test_ww_debug_alloc_fails(enum ww_debug_alloc_site site)
	__attribute__((weak, visibility("default")));

/* Free @t's state (thread exit). */
void ww_debug_state_free(struct ww_thread *t);

#endif /* TTMSIM_WW_DEBUG_STATE_H */
