/* SPDX-License-Identifier: MIT */
/*
 * The debug checker (ttmsim/ww_debug.h) as seen by the ww_mutex entry
 * points, and its report path for the layers above (a reservation object
 * reports a fence added without a reserved slot through it).
 *
 * Each entry point costs one predictable branch when the checker is built
 * in but off, and nothing when TTMSIM_WW_DEBUG_BUILD is 0: the branch is on
 * a constant and the compiler drops the checked path.
 */
#ifndef TTMSIM_WW_DEBUG_PRIV_H
#define TTMSIM_WW_DEBUG_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "ttmsim/ww_debug.h"
#include "ttmsim/ww_mutex.h"
#include "ww/thread.h"

#ifndef TTMSIM_WW_DEBUG_BUILD
#error "TTMSIM_WW_DEBUG_BUILD must be defined by the build (0 or 1)"
#endif

/* Read relaxed on every call; written only by ww_debug_set_enabled(). */
extern bool ww_debug_on;

static inline bool ww_debug_active(void)
{
	return TTMSIM_WW_DEBUG_BUILD &&
	       __builtin_expect(__atomic_load_n(&ww_debug_on,
						 __ATOMIC_RELAXED), 0);
}

/* The four blocking lock calls: bit 0 interruptible, bit 1 slow. */
enum ww_lock_call {
	WW_CALL_LOCK = 0,
	WW_CALL_LOCK_INTERRUPTIBLE = 1,
	WW_CALL_LOCK_SLOW = 2,
	WW_CALL_LOCK_SLOW_INTERRUPTIBLE = 3,
};

/* Where a call came from, for reports. */
struct ww_callsite {
	const char *call; /* API function name */
	const char *file; /* NULL if unknown */
	int line;
};

/*
 * The unchecked operations (ww_mutex.c, acquire.c): what the public
 * functions do when the checker is off.
 */
int ww_raw_lock(struct ww_mutex *lock, struct ww_acquire_ctx *ctx,
		bool interruptible);
int ww_raw_trylock(struct ww_mutex *lock, struct ww_acquire_ctx *ctx);
void ww_raw_unlock(struct ww_mutex *lock);
void ww_raw_destroy(struct ww_mutex *lock);
void ww_raw_acquire_init(struct ww_acquire_ctx *ctx, struct ww_class *cls);
void ww_raw_acquire_done(struct ww_acquire_ctx *ctx);
void ww_raw_acquire_fini(struct ww_acquire_ctx *ctx);

/* The checked operations (debug.c): check, then do or refuse. */
int ww_debug_lock(struct ww_mutex *lock, struct ww_acquire_ctx *ctx,
		  enum ww_lock_call kind, const char *file, int line);
int ww_debug_trylock(struct ww_mutex *lock, struct ww_acquire_ctx *ctx,
		     const char *file, int line);
void ww_debug_unlock(struct ww_mutex *lock, const char *file, int line);
void ww_debug_destroy(struct ww_mutex *lock, const char *file, int line);
void ww_debug_acquire_init(struct ww_acquire_ctx *ctx, struct ww_class *cls,
			   const char *file, int line);
void ww_debug_acquire_done(struct ww_acquire_ctx *ctx, const char *file,
			   int line);
void ww_debug_acquire_fini(struct ww_acquire_ctx *ctx, const char *file,
			   int line);

/*
 * Whether the calling thread holds @lock, as far as the checker knows:
 * true whenever it cannot tell (checker off or not built in, thread not
 * tracked), so callers use it only to report bugs, never to decide.
 */
bool ww_debug_lock_held(const struct ww_mutex *lock);

/*
 * Thread exit (thread.c's destructor): reports leaks, frees the state.
 * Return: true if @t exits holding locks (known only with the checker on).
 */
bool ww_debug_thread_exit(struct ww_thread *t);

/*
 * Report a broken rule: fills the rest of the report from @lock and @ctx
 * (either may be NULL), then runs the handler, or prints and aborts.
 * Returns only if a handler is installed.
 */
void ww_debug_violation(enum ww_debug_rule rule, const struct ww_mutex *lock,
			const struct ww_acquire_ctx *ctx,
			const struct ww_callsite *site);

/*
 * Rule 13: how many fence-signalling sections (ttm_fence_begin_signalling())
 * the calling thread is in; counted only while the checker is on.
 */
extern __thread unsigned int ww_debug_signalling
	__attribute__((tls_model("initial-exec")));

/* Report rule 13 (@rule, about @object) for @call; see ww_debug_blocks(). */
bool ww_debug_signalling_broken(enum ww_debug_rule rule, const void *object,
				const char *call, const char *file, int line);

/*
 * Rule 13, for a call that may block (@rule: signalling-lock, -wait or
 * -alloc) about to be made by the calling thread on @object. One TLS load
 * when the checker is on and the thread signals nothing; nothing when it
 * is not built in.
 * Return: true if the call must be refused: the thread is inside a
 * fence-signalling section, and a handler took the report.
 */
static inline bool ww_debug_blocks(enum ww_debug_rule rule,
				   const void *object, const char *call,
				   const char *file, int line)
{
	if (!ww_debug_active() ||
	    __builtin_expect(ww_debug_signalling == 0, 1))
		return false;
	return ww_debug_signalling_broken(rule, object, call, file, line);
}

/* ttm_fence_end_signalling() of a section the checker counted. */
void ww_debug_signalling_end(unsigned int cookie);

/* struct ww_acquire_ctx::magic: live between init and fini. */
#define WW_CTX_LIVE 0x57574358u     /* "WWCX" */
#define WW_CTX_FINISHED 0x57574446u /* "WWDF" */

/*
 * Report @r, whose rule, call, class, lock, ctx, stamp, file and line the
 * caller filled in, for callers that must not dereference the context
 * (thread exit). Returns only if a handler is installed.
 */
void ww_debug_raise(struct ww_debug_report *r);

/* Set in struct ww_mutex::ww_class by ww_mutex_destroy(). */
#define WW_CLASS_DESTROYED ((uintptr_t)1)

static inline bool ww_lock_destroyed(const struct ww_mutex *lock)
{
	return (uintptr_t)lock->ww_class & WW_CLASS_DESTROYED;
}

/* @lock's class, destroyed or not; NULL if never initialised. */
static inline struct ww_class *ww_lock_class(const struct ww_mutex *lock)
{
	return (struct ww_class *)((uintptr_t)lock->ww_class &
				   ~WW_CLASS_DESTROYED);
}

#endif /* TTMSIM_WW_DEBUG_PRIV_H */
