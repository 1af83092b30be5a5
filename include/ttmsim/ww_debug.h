/* SPDX-License-Identifier: MIT */
/*
 * Debugging aids for users of ww_mutexes.
 *
 * The checker: built in unless libttmsim is configured with
 * -Dww_debug=false, and on unless TTMSIM_WW_DEBUG=0 is in the environment.
 * It keeps, per thread, the ww_mutexes the thread holds and the acquire
 * contexts it has open, and catches misuse of the API at the call that
 * breaks a rule (docs/ww-debug.md lists them with examples). By default it
 * prints a report on stderr and calls abort(): it is the one place where
 * libttmsim aborts. A program may install a handler instead.
 *
 * Back-off injection: like the kernel's CONFIG_DEBUG_WW_MUTEX_SLOWPATH, make
 * ww_mutex_lock*() fail with -EDEADLK now and then, so that a caller's
 * back-off path (unlock everything, ww_mutex_lock_slow(), retry) runs even
 * without real contention. Available in every build.
 */
#ifndef TTMSIM_WW_DEBUG_H
#define TTMSIM_WW_DEBUG_H

#include <stdbool.h>
#include <sys/types.h>

#include "ttmsim/ww_mutex.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * enum ww_debug_rule - the rules the checker enforces.
 * @WW_DEBUG_NULL_CTX_NESTED: 1: blocking NULL-ctx lock while holding the
 *	class.
 * @WW_DEBUG_CTX_AFTER_NULL: 1: ctx lock while holding a NULL-ctx lock of
 *	the class.
 * @WW_DEBUG_CTX_NESTED: 2: second open ctx of one class in a thread.
 * @WW_DEBUG_LOCK_AFTER_DONE: 3: lock after ww_acquire_done().
 * @WW_DEBUG_DONE_TWICE: 3: ww_acquire_done() twice.
 * @WW_DEBUG_FINI_HELD: 4: ww_acquire_fini() with locks held.
 * @WW_DEBUG_FINI_TWICE: 4: ww_acquire_fini() twice.
 * @WW_DEBUG_CTX_DEAD: 4: ctx used after fini, or never initialised.
 * @WW_DEBUG_CTX_THREAD: 4: ctx used by another thread.
 * @WW_DEBUG_CLASS_MISMATCH: 5: ctx and lock of different classes.
 * @WW_DEBUG_SLOW_NO_DEADLK: 6: lock_slow without a pending -EDEADLK.
 * @WW_DEBUG_SLOW_WRONG_LOCK: 6: lock_slow on another lock than the
 *	contended one.
 * @WW_DEBUG_SLOW_HELD: 6: lock_slow while the ctx holds locks.
 * @WW_DEBUG_NOT_CONTENDED: 7: after -EDEADLK, another lock first.
 * @WW_DEBUG_UNLOCK_UNLOCKED: 8: unlock of an unlocked mutex.
 * @WW_DEBUG_UNLOCK_FOREIGN: 8: unlock of a mutex another thread holds.
 * @WW_DEBUG_DESTROY_LOCKED: 9: destroy of a locked mutex.
 * @WW_DEBUG_LOCK_UNINIT: 9: use of a never-initialised mutex.
 * @WW_DEBUG_LOCK_DESTROYED: 9: use of a destroyed mutex.
 * @WW_DEBUG_EXIT_HELD: 10: thread exit holding ww_mutexes.
 * @WW_DEBUG_EXIT_CTX: 10: thread exit with an open ctx.
 * @WW_DEBUG_RESV_NOT_HELD: 11: a call that needs a reservation held by
 *	the calling thread (adding a fence, pin, unpin, validate, the GPU
 *	range, reserving fence slots) made without it.
 * @WW_DEBUG_RESV_NO_SLOT: 11: fence added without a slot.
 * @WW_DEBUG_DEVICE_BUSY: 12: ttm_device_destroy() while buffers of the
 *	device are still alive.
 * @WW_DEBUG_SIGNALLING_LOCK: 13: a blocking ww_mutex lock (a blocking
 *	reservation) inside a fence-signalling section.
 * @WW_DEBUG_SIGNALLING_WAIT: 13: a fence, reservation or destroy-worker
 *	wait that may sleep inside a fence-signalling section.
 * @WW_DEBUG_SIGNALLING_ALLOC: 13: a buffer creation or validation (which
 *	may evict and wait to make room) inside a fence-signalling section.
 * @WW_DEBUG_SIGNALLING_UNBALANCED: 13: ttm_fence_end_signalling() with a
 *	cookie that is not the innermost open section's.
 *
 * The number that starts each description is the rule of docs/ww-debug.md
 * (also in struct ww_debug_report::rule_number); one numbered rule may be
 * broken in several ways.
 */
enum ww_debug_rule {
	WW_DEBUG_NULL_CTX_NESTED = 1,
	WW_DEBUG_CTX_AFTER_NULL,
	WW_DEBUG_CTX_NESTED,
	WW_DEBUG_LOCK_AFTER_DONE,
	WW_DEBUG_DONE_TWICE,
	WW_DEBUG_FINI_HELD,
	WW_DEBUG_FINI_TWICE,
	WW_DEBUG_CTX_DEAD,
	WW_DEBUG_CTX_THREAD,
	WW_DEBUG_CLASS_MISMATCH,
	WW_DEBUG_SLOW_NO_DEADLK,
	WW_DEBUG_SLOW_WRONG_LOCK,
	WW_DEBUG_SLOW_HELD,
	WW_DEBUG_NOT_CONTENDED,
	WW_DEBUG_UNLOCK_UNLOCKED,
	WW_DEBUG_UNLOCK_FOREIGN,
	WW_DEBUG_DESTROY_LOCKED,
	WW_DEBUG_LOCK_UNINIT,
	WW_DEBUG_LOCK_DESTROYED,
	WW_DEBUG_EXIT_HELD,
	WW_DEBUG_EXIT_CTX,
	WW_DEBUG_RESV_NOT_HELD,
	WW_DEBUG_RESV_NO_SLOT,
	WW_DEBUG_DEVICE_BUSY,
	WW_DEBUG_SIGNALLING_LOCK,
	WW_DEBUG_SIGNALLING_WAIT,
	WW_DEBUG_SIGNALLING_ALLOC,
	WW_DEBUG_SIGNALLING_UNBALANCED,
};

/**
 * struct ww_debug_report - one broken rule, as passed to a handler.
 * @rule: the rule broken.
 * @rule_number: 1..13, see enum ww_debug_rule.
 * @name: short tag, e.g. "null-ctx-nested".
 * @what: the rule broken, in plain words.
 * @call: the API function, e.g. "ww_mutex_lock".
 * @class_name: NULL when there is no class.
 * @lock: NULL when the call has no lock.
 * @ctx: NULL when the call has no ctx.
 * @stamp: ctx stamp, 0 without ctx.
 * @file: the caller's file; NULL if unknown.
 * @line: the caller's line.
 * @tid: the offending thread.
 * @object: what a rule that is not about a lock is about (device-busy:
 *	the struct ttm_device; signalling-wait: the struct ttm_fence,
 *	struct ttm_resv or struct ttm_device waited on, NULL for
 *	ttm_fence_rcu_barrier(); signalling-alloc:
 *	the struct ttm_bo validated or the struct ttm_device created on);
 *	NULL otherwise.
 * @count: device-busy: the buffers of @object still alive; rule 13: how
 *	many fence-signalling sections the thread is in (for
 *	signalling-unbalanced, before the call); 0 otherwise.
 * @ctx_class_name: class-mismatch: the class of @ctx, while @class_name
 *	is the lock's; NULL otherwise.
 *
 * Every pointer is valid only during the handler call.
 */
struct ww_debug_report {
	enum ww_debug_rule rule;
	unsigned int rule_number;
	const char *name;
	const char *what;
	const char *call;
	const char *class_name;
	const struct ww_mutex *lock;
	const struct ww_acquire_ctx *ctx;
	unsigned long stamp;
	const char *file;
	int line;
	pid_t tid;
	const void *object;
	unsigned long count;
	const char *ctx_class_name;
};

/**
 * typedef ww_debug_handler_fn - a report handler.
 * @report: the broken rule.
 * @data: ww_debug_set_handler()'s.
 *
 * Context: May sleep. Runs in the offending thread, which may hold
 * ww_mutexes: it must not lock any of them.
 */
typedef void ww_debug_handler_fn(const struct ww_debug_report *report,
				 void *data);

/**
 * ww_debug_set_handler() - call @fn instead of printing and aborting.
 * @fn: the handler, or NULL for the default (report on stderr, abort()).
 * @data: passed to @fn.
 *
 * After the handler returns, the offending call does nothing: a call that
 * returns int returns -EINVAL (ww_mutex_trylock() included), a void call
 * just returns; except ttm_device_destroy(), which returns -EBUSY as it
 * does with the checker off (device-busy), and ttm_fence_end_signalling(),
 * which still closes the sections it can (signalling-unbalanced). The
 * handler runs in the offending thread, which may hold ww_mutexes: it must
 * not lock any of them.
 *
 * Context: Does not sleep. Takes and releases the handler lock. Any
 * thread, any time; the change is seen by the next report.
 */
void ww_debug_set_handler(ww_debug_handler_fn *fn, void *data);

/**
 * ww_debug_print_report() - write @report the way the default handler does.
 * @report: the report a handler was given.
 * @fd: the file descriptor to write to.
 *
 * Writes the report with the calling thread's held locks and open contexts
 * and a backtrace. For handlers that want the standard text.
 *
 * Context: May sleep: writes to @fd. From a handler, in the thread that
 * broke the rule (the held locks listed are the calling thread's).
 */
void ww_debug_print_report(const struct ww_debug_report *report, int fd);

/**
 * ww_debug_enabled() - whether the checker runs.
 *
 * Context: Does not sleep.
 * Return: true if the checker is built in and switched on.
 */
bool ww_debug_enabled(void);

/**
 * ww_debug_set_enabled() - switch the checker on or off at run time.
 * @on: true to switch it on.
 *
 * Context: Does not sleep. Only while no thread holds a ww_mutex or has an
 * acquire context open: the checker does not see what happens while it is
 * off.
 * Return: 0, or -EOPNOTSUPP if libttmsim was built with -Dww_debug=false.
 */
int ww_debug_set_enabled(bool on);

/**
 * ww_debug_inject() - inject a back-off about once every @n calls.
 * @seed: seeds the pseudo-random choice: the same seed gives the same
 *        sequence of injections in a single-threaded program.
 * @n: 0 turns injection off. 1 makes every candidate call back off: only
 *     for single-step tests, since a loop that must hold two locks at once
 *     then never finishes; use 2 or more for whole programs.
 *
 * Only ww_mutex_lock() and ww_mutex_lock_interruptible() with a context
 * that already holds a lock are candidates (a context holding nothing never
 * backs off). An injected call takes nothing and returns -EDEADLK; the lock
 * it was asked for becomes the contended lock, so the caller's normal
 * back-off path runs. The environment variable TTMSIM_WW_INJECT=SEED:N does
 * the same from program start.
 *
 * Progress, for @n >= 2: a context that got an injected -EDEADLK is no
 * candidate again until it has completed a pass without backing off, that
 * is until it let go of every lock (the back-off), then held locks and let
 * go of them all again with no -EDEADLK in between (the transaction is
 * over). So however many locks a transaction takes, injection costs it at
 * most one more pass; a context reused for the next transaction is a
 * candidate again. With @n == 1 every candidate call backs off, injected
 * before or not.
 *
 * Context: Does not sleep. Any thread, any time.
 */
void ww_debug_inject(unsigned long seed, unsigned int n);

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_WW_DEBUG_H */
