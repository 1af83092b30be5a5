/* SPDX-License-Identifier: MIT */
/*
 * Wound/wait mutexes with the Linux kernel's API and semantics.
 *
 * A ww_mutex is a sleeping mutex that can be taken inside an acquire context
 * (a "transaction", struct ww_acquire_ctx). Contexts of one class are ordered
 * by a stamp: a lower stamp is older. When two contexts would deadlock, the
 * younger one is told to back off with -EDEADLK: it unlocks everything it
 * holds, sleeps on the contended lock with ww_mutex_lock_slow() and retries
 * with the same context (and so the same stamp, which is what guarantees that
 * it eventually becomes the oldest and wins).
 *
 * Two algorithms, chosen by the class:
 *  - Wait-Die (DEFINE_WD_CLASS): a younger context that holds locks dies
 *    (-EDEADLK) instead of waiting for an older one.
 *  - Wound-Wait (DEFINE_WW_CLASS): an older context that must wait for a
 *    younger one wounds it; the wounded context backs off at its next
 *    contended lock attempt (or at once, if it is already asleep on one).
 *
 * The layout of every struct here is the same whatever the build options;
 * see docs/ww-design.md for the lock word and the waiting protocol.
 */
#ifndef TTMSIM_WW_MUTEX_H
#define TTMSIM_WW_MUTEX_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct ww_class - a family of ww_mutexes that may be taken together.
 *
 * Define one with DEFINE_WW_CLASS() or DEFINE_WD_CLASS(); never initialise
 * the fields by hand. All locks taken under one acquire context must belong
 * to the context's class.
 */
struct ww_class {
	/* private: */
	unsigned long stamp;       /* last stamp handed out; atomic */
	const char *name;          /* for reports */
	unsigned int is_wait_die;  /* 1: Wait-Die, 0: Wound-Wait */
};

#define WW_CLASS_INITIALIZER(classname, wait_die) \
	{ .stamp = 0, .name = #classname, .is_wait_die = (wait_die) }

/**
 * DEFINE_WW_CLASS() - define a Wound-Wait class.
 * @classname: the name of the struct ww_class variable to define.
 */
#define DEFINE_WW_CLASS(classname) \
	struct ww_class classname = WW_CLASS_INITIALIZER(classname, 0)

/**
 * DEFINE_WD_CLASS() - define a Wait-Die class (the kernel's reservation
 * class).
 * @classname: the name of the struct ww_class variable to define.
 */
#define DEFINE_WD_CLASS(classname) \
	struct ww_class classname = WW_CLASS_INITIALIZER(classname, 1)

/**
 * struct ww_mutex - a wound/wait mutex: 16 bytes on LP64.
 *
 * The fields are private. The first, owner, is the lock word: the owning
 * context (or owning thread for a lock taken without context) with flag
 * bits in the low bits. Waiters do not live in the lock; they park in a
 * shared hashed table (docs/ww-design.md).
 */
struct ww_mutex {
	/* private: */
	uintptr_t owner;
	struct ww_class *ww_class;
};

struct ww_thread;

/**
 * struct ww_acquire_ctx - one locking transaction.
 *
 * Lives on the caller's stack between ww_acquire_init() and
 * ww_acquire_fini(). Only the thread that initialised it may use it. The
 * fields are private to ttmsim; they are visible only so that the context
 * can be allocated by the caller.
 */
struct ww_acquire_ctx {
	/* private: */
	struct ww_thread *task;          /* owning thread */
	unsigned long stamp;             /* lower is older */
	unsigned int acquired;           /* locks held through this ctx */
	unsigned int wounded;            /* atomic; Wound-Wait only */
	unsigned short is_wait_die;
	unsigned short done_acquire;     /* ww_acquire_done() was called */
	int last_result;                 /* result of the last lock call */
	struct ww_class *ww_class;
	struct ww_mutex *contending_lock; /* set when -EDEADLK is returned */
	unsigned int magic;              /* live / finished marker */
	unsigned int inject_exempt;      /* back-off injection: ww/inject.h */
	void *debug_reserved[2];
};

/**
 * ww_mutex_init() - initialise a ww_mutex, unlocked.
 * @lock: the mutex.
 * @ww_class: its class.
 *
 * There is no static initialiser, as in the kernel.
 *
 * Context: Does not sleep. @lock must not be in use.
 */
void ww_mutex_init(struct ww_mutex *lock, struct ww_class *ww_class);

/**
 * ww_mutex_destroy() - mark @lock as no longer usable.
 * @lock: the mutex.
 *
 * Its memory may then be freed or reused. The debug checker reports
 * destroying a locked mutex and locking a destroyed one.
 *
 * Context: Does not sleep. @lock unlocked, with no waiters.
 */
void ww_mutex_destroy(struct ww_mutex *lock);

/**
 * ww_mutex_is_locked() - whether anybody holds @lock.
 * @lock: the mutex.
 *
 * Context: Does not sleep. Takes no lock: the answer is a snapshot.
 * Return: true if @lock is held, by any thread.
 */
bool ww_mutex_is_locked(struct ww_mutex *lock);

/**
 * ww_acquire_init() - start a transaction of class @ww_class in @ctx.
 * @ctx: the acquire context to initialise.
 * @ww_class: the class of every lock the transaction will take.
 *
 * Takes the next stamp of the class: later contexts are younger.
 *
 * Context: Does not sleep. @ctx belongs to the calling thread until
 * ww_acquire_fini(); a thread may have only one context of a class open.
 */
void ww_acquire_init(struct ww_acquire_ctx *ctx, struct ww_class *ww_class);

/**
 * ww_acquire_done() - mark the end of the locking phase of @ctx.
 * @ctx: the acquire context.
 *
 * Optional; taking further locks with @ctx afterwards is a bug that the
 * debug checker reports.
 *
 * Context: Does not sleep. The thread that initialised @ctx only.
 */
void ww_acquire_done(struct ww_acquire_ctx *ctx);

/**
 * ww_acquire_fini() - end the transaction in @ctx.
 * @ctx: the acquire context.
 *
 * Context: Does not sleep. The thread that initialised @ctx only. Every
 * lock taken through @ctx must have been unlocked first.
 */
void ww_acquire_fini(struct ww_acquire_ctx *ctx);

/**
 * ww_mutex_lock() - acquire @lock, as part of the transaction @ctx.
 * @lock: the mutex to acquire.
 * @ctx: the acquire context, or NULL to take @lock as a plain mutex.
 *
 * With a NULL ctx it never returns an error. A SCHED_OTHER thread that
 * sleeps here with a ctx sleeps as SCHED_BATCH, so that its wake-up does
 * not preempt a running lock holder, and is SCHED_OTHER again once @ctx
 * holds no lock (its last ww_mutex_unlock(), or ww_acquire_fini());
 * TTMSIM_SCHED_BATCH=0 in the environment turns this off.
 *
 * Context: May sleep. Takes @lock on success (release it with
 * ww_mutex_unlock()); takes nothing on error.
 * Return: 0 on success; -EALREADY if @ctx already holds @lock; -EDEADLK if
 * @ctx must back off: unlock every lock it holds, then call
 * ww_mutex_lock_slow() on @lock. -EDEADLK is never returned while @ctx holds
 * no lock.
 */
int ww_mutex_lock(struct ww_mutex *lock, struct ww_acquire_ctx *ctx);

/**
 * ww_mutex_lock_interruptible() - ww_mutex_lock() that may be interrupted.
 * @lock: the mutex to acquire.
 * @ctx: the acquire context, or NULL to take @lock as a plain mutex.
 *
 * As ww_mutex_lock(), but a pending ttm_interrupt_thread() ends a wait with
 * -EINTR (the lock is not taken and the interrupt is consumed).
 *
 * Context: May sleep, interruptibly. Takes @lock on success; takes nothing
 * on error.
 * Return: as ww_mutex_lock(), or -EINTR.
 */
int ww_mutex_lock_interruptible(struct ww_mutex *lock,
				struct ww_acquire_ctx *ctx);

/**
 * ww_mutex_lock_slow() - sleep until the contended @lock is acquired.
 * @lock: the lock that returned -EDEADLK to @ctx.
 * @ctx: the acquire context that backed off.
 *
 * Call after -EDEADLK, on the lock that returned it. Cannot fail.
 *
 * Context: May sleep. @ctx holds no lock: every other lock of @ctx
 * released first. Takes @lock.
 */
void ww_mutex_lock_slow(struct ww_mutex *lock, struct ww_acquire_ctx *ctx);

/**
 * ww_mutex_lock_slow_interruptible() - ww_mutex_lock_slow() that may be
 * interrupted by ttm_interrupt_thread().
 * @lock: the lock that returned -EDEADLK to @ctx.
 * @ctx: the acquire context that backed off.
 *
 * Context: May sleep, interruptibly. @ctx holds no lock. Takes @lock on
 * success.
 * Return: 0 or -EINTR.
 */
int ww_mutex_lock_slow_interruptible(struct ww_mutex *lock,
				     struct ww_acquire_ctx *ctx);

/**
 * ww_mutex_trylock() - acquire @lock if that needs no waiting.
 * @lock: the mutex to acquire.
 * @ctx: acquire context, or NULL.
 *
 * Never returns -EALREADY: on a lock that @ctx already holds it returns 0.
 * A lock taken with a ctx counts as held by that ctx.
 *
 * Context: Does not sleep. Takes @lock when it returns 1.
 * Return: 1 if acquired, 0 otherwise.
 */
int ww_mutex_trylock(struct ww_mutex *lock, struct ww_acquire_ctx *ctx);

/**
 * ww_mutex_unlock() - release @lock.
 * @lock: the mutex, held by the calling thread.
 *
 * Context: Does not sleep. Releases @lock and wakes its next waiter.
 */
void ww_mutex_unlock(struct ww_mutex *lock);

/*
 * Introspection, for tests and watchdogs. Each is a snapshot that may be
 * stale by the time it returns.
 */

/**
 * ww_mutex_owner_ctx() - the context holding @lock.
 * @lock: the mutex.
 *
 * Only compare the result; never dereference it.
 *
 * Context: Does not sleep. Takes no lock.
 * Return: the owning context, NULL if unlocked or held without a context.
 */
struct ww_acquire_ctx *ww_mutex_owner_ctx(struct ww_mutex *lock);

/**
 * ww_mutex_owner_tid() - Linux thread id of the holder of @lock.
 * @lock: the mutex.
 *
 * Safe against the holder unlocking concurrently.
 *
 * Context: Does not sleep. Takes and releases the lock's wait-queue lock.
 * Return: the holder's thread id, 0 if unlocked.
 */
pid_t ww_mutex_owner_tid(struct ww_mutex *lock);

/**
 * ww_mutex_waiter_count() - number of threads queued on @lock.
 * @lock: the mutex.
 *
 * Counts the threads asleep or about to sleep on @lock. A thread counted
 * here has committed to waiting: tests use it to wait until another thread
 * blocks, without sleeping themselves.
 *
 * Context: Does not sleep. Takes and releases the lock's wait-queue lock.
 * Return: the number of waiters.
 */
unsigned int ww_mutex_waiter_count(struct ww_mutex *lock);

/*
 * Call-site variants. Each does exactly what the function of the same name
 * without "_at" does, and also tells the debug checker (ttmsim/ww_debug.h)
 * which line of the caller made the call, so that a report names it. The
 * macros below route every call through them; define
 * TTMSIM_WW_NO_CALLER_MACROS before including this header to call the plain
 * functions instead (a report then has no file:line). Each takes the
 * parameters of its plain function, then @file (the caller's __FILE__, may
 * be NULL) and @line (its __LINE__); their kernel-doc is that function's.
 */
void ww_mutex_destroy_at(struct ww_mutex *lock, const char *file, int line);
void ww_acquire_init_at(struct ww_acquire_ctx *ctx, struct ww_class *ww_class,
			const char *file, int line);
void ww_acquire_done_at(struct ww_acquire_ctx *ctx, const char *file,
			int line);
void ww_acquire_fini_at(struct ww_acquire_ctx *ctx, const char *file,
			int line);
int ww_mutex_lock_at(struct ww_mutex *lock, struct ww_acquire_ctx *ctx,
		     const char *file, int line);
int ww_mutex_lock_interruptible_at(struct ww_mutex *lock,
				   struct ww_acquire_ctx *ctx,
				   const char *file, int line);
void ww_mutex_lock_slow_at(struct ww_mutex *lock, struct ww_acquire_ctx *ctx,
			   const char *file, int line);
int ww_mutex_lock_slow_interruptible_at(struct ww_mutex *lock,
					struct ww_acquire_ctx *ctx,
					const char *file, int line);
int ww_mutex_trylock_at(struct ww_mutex *lock, struct ww_acquire_ctx *ctx,
			const char *file, int line);
void ww_mutex_unlock_at(struct ww_mutex *lock, const char *file, int line);

/*
 * Function-like macros: `&ww_mutex_lock` and `(ww_mutex_lock)(l, c)` still
 * name the functions themselves.
 */
#ifndef TTMSIM_WW_NO_CALLER_MACROS
#define ww_mutex_destroy(lock) ww_mutex_destroy_at(lock, __FILE__, __LINE__)
#define ww_acquire_init(ctx, cls) \
	ww_acquire_init_at(ctx, cls, __FILE__, __LINE__)
#define ww_acquire_done(ctx) ww_acquire_done_at(ctx, __FILE__, __LINE__)
#define ww_acquire_fini(ctx) ww_acquire_fini_at(ctx, __FILE__, __LINE__)
#define ww_mutex_lock(lock, ctx) \
	ww_mutex_lock_at(lock, ctx, __FILE__, __LINE__)
#define ww_mutex_lock_interruptible(lock, ctx) \
	ww_mutex_lock_interruptible_at(lock, ctx, __FILE__, __LINE__)
#define ww_mutex_lock_slow(lock, ctx) \
	ww_mutex_lock_slow_at(lock, ctx, __FILE__, __LINE__)
#define ww_mutex_lock_slow_interruptible(lock, ctx) \
	ww_mutex_lock_slow_interruptible_at(lock, ctx, __FILE__, __LINE__)
#define ww_mutex_trylock(lock, ctx) \
	ww_mutex_trylock_at(lock, ctx, __FILE__, __LINE__)
#define ww_mutex_unlock(lock) ww_mutex_unlock_at(lock, __FILE__, __LINE__)
#endif

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_WW_MUTEX_H */
