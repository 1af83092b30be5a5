// SPDX-License-Identifier: MIT
/*
 * The debug checker's reports: the rule table, the handler, the default
 * report (stderr, then abort()), and the on/off switch.
 */
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/compiler.h"
#include "ww/debug.h"
#include "ww/debug_state.h"

bool ww_debug_on = TTMSIM_WW_DEBUG_BUILD;

/*
 * @object and @count name the fields of struct ww_debug_report that the
 * rule fills in besides the lock and the context, for the printed report.
 */
static const struct {
	unsigned int number;
	const char *name;
	const char *what;
	const char *object;
	const char *count;
} rules[] = {
	[WW_DEBUG_NULL_CTX_NESTED] = { 1, "null-ctx-nested",
		"blocking lock without an acquire context while this thread "
		"holds a lock or an open context of the same class (the qxl "
		"bug: it cannot back off, so it can deadlock against any "
		"context); take every lock of the class through one context" },
	[WW_DEBUG_CTX_AFTER_NULL] = { 1, "ctx-after-null",
		"blocking lock with an acquire context while this thread "
		"holds a lock of the same class taken without one (the qxl "
		"bug: backing off cannot release that lock, so it can "
		"deadlock); take every lock of the class through one context" },
	[WW_DEBUG_CTX_NESTED] = { 2, "ctx-nested",
		"second acquire context of the same class opened in a thread "
		"that already has one open; use one context per class" },
	[WW_DEBUG_LOCK_AFTER_DONE] = { 3, "lock-after-done",
		"lock with an acquire context after ww_acquire_done() was "
		"called on it" },
	[WW_DEBUG_DONE_TWICE] = { 3, "done-twice",
		"ww_acquire_done() called twice on one acquire context" },
	[WW_DEBUG_FINI_HELD] = { 4, "fini-held",
		"ww_acquire_fini() while the context still holds locks; "
		"unlock them first" },
	[WW_DEBUG_FINI_TWICE] = { 4, "fini-twice",
		"ww_acquire_fini() called twice on one acquire context" },
	[WW_DEBUG_CTX_DEAD] = { 4, "ctx-dead",
		"acquire context used after ww_acquire_fini(), or never "
		"initialised with ww_acquire_init()" },
	[WW_DEBUG_CTX_THREAD] = { 4, "ctx-thread",
		"acquire context used by a thread other than the one that "
		"initialised it" },
	[WW_DEBUG_CLASS_MISMATCH] = { 5, "class-mismatch",
		"the acquire context's class is not the lock's class" },
	[WW_DEBUG_SLOW_NO_DEADLK] = { 6, "slow-without-edeadlk",
		"ww_mutex_lock_slow() without a pending -EDEADLK: the last "
		"lock call of this context did not return -EDEADLK" },
	[WW_DEBUG_SLOW_WRONG_LOCK] = { 6, "slow-wrong-lock",
		"ww_mutex_lock_slow() on a lock other than the one that "
		"returned -EDEADLK" },
	[WW_DEBUG_SLOW_HELD] = { 6, "slow-held",
		"ww_mutex_lock_slow() while the context still holds locks; "
		"after -EDEADLK unlock everything first" },
	[WW_DEBUG_NOT_CONTENDED] = { 7, "not-contended",
		"after -EDEADLK, a lock other than the contended one was "
		"taken first; take the contended lock first (ww_mutex_lock_"
		"slow), or finish the context and start a new one" },
	[WW_DEBUG_UNLOCK_UNLOCKED] = { 8, "unlock-unlocked",
		"unlock of a ww_mutex that is not locked" },
	[WW_DEBUG_UNLOCK_FOREIGN] = { 8, "unlock-foreign",
		"unlock of a ww_mutex that another thread holds" },
	[WW_DEBUG_DESTROY_LOCKED] = { 9, "destroy-locked",
		"ww_mutex_destroy() on a locked mutex" },
	[WW_DEBUG_LOCK_UNINIT] = { 9, "lock-uninit",
		"use of a ww_mutex that was never initialised with "
		"ww_mutex_init()" },
	[WW_DEBUG_LOCK_DESTROYED] = { 9, "lock-destroyed",
		"use of a ww_mutex after ww_mutex_destroy()" },
	[WW_DEBUG_EXIT_HELD] = { 10, "exit-held",
		"thread exited while holding ww_mutexes; they stay locked "
		"forever" },
	[WW_DEBUG_EXIT_CTX] = { 10, "exit-ctx",
		"thread exited with an acquire context still open" },
	[WW_DEBUG_RESV_NOT_HELD] = { 11, "resv-not-held",
		"call that needs a reservation object held (adding a fence, "
		"reserving fence slots, pinning, unpinning, validating, "
		"taking a buffer's GPU range) on one this thread does not "
		"hold; reserve it first" },
	[WW_DEBUG_RESV_NO_SLOT] = { 11, "resv-no-slot",
		"fence added to a reservation object without a reserved "
		"slot; call ttm_resv_reserve_fences() after locking it" },
	[WW_DEBUG_DEVICE_BUSY] = { 12, "device-busy",
		"ttm_device_destroy() while buffers of the device are still "
		"alive: their last ttm_bo_put() would free into a freed "
		"device. Nothing was destroyed; put every buffer first "
		"(buffers waiting for delayed destroy and moves in flight "
		"are waited for)", "device:", "buffers still alive" },
	[WW_DEBUG_SIGNALLING_LOCK] = { 13, "signalling-lock",
		"blocking lock (a ww_mutex, a reservation) inside a fence-"
		"signalling section: whoever waits for the fence may hold it, "
		"so the fence may never signal; trylock, or hand the work to "
		"another thread" },
	[WW_DEBUG_SIGNALLING_WAIT] = { 13, "signalling-wait",
		"wait for a fence, a reservation's fences or a device's "
		"destroy worker inside a fence-signalling section: what is "
		"waited for may need this section's fence first; test with "
		"a zero timeout, add a callback, or hand the work to another "
		"thread", "on:" },
	[WW_DEBUG_SIGNALLING_ALLOC] = { 13, "signalling-alloc",
		"buffer creation or validation inside a fence-signalling "
		"section: making room may evict and wait for fences and "
		"reservations; allocate before the section, or hand the work "
		"to another thread", "on:" },
	[WW_DEBUG_SIGNALLING_UNBALANCED] = { 13, "signalling-unbalanced",
		"ttm_fence_end_signalling() with a cookie that is not the "
		"innermost open section's: sections end innermost first, "
		"each in the thread that began it, with its own cookie" },
};

static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static ww_debug_handler_fn *handler_fn;
static void *handler_data;

TTM_EXPORT void ww_debug_set_handler(ww_debug_handler_fn *fn, void *data)
{
	pthread_mutex_lock(&handler_lock);
	handler_fn = fn;
	handler_data = data;
	pthread_mutex_unlock(&handler_lock);
}

TTM_EXPORT bool ww_debug_enabled(void)
{
	return ww_debug_active();
}

TTM_EXPORT int ww_debug_set_enabled(bool on)
{
	if (!TTMSIM_WW_DEBUG_BUILD)
		return -EOPNOTSUPP;
	__atomic_store_n(&ww_debug_on, on, __ATOMIC_RELAXED);
	return 0;
}

/*
 * TTMSIM_WW_DEBUG=0 (or "off") turns the checker off from program start;
 * "1" or "on" leaves it on. Anything else is ignored with one line on
 * stderr, as TTMSIM_WW_INJECT does.
 */
__attribute__((constructor)) static void debug_from_env(void)
{
	const char *s = getenv("TTMSIM_WW_DEBUG");

	if (!s || !*s)
		return;
	if (!strcmp(s, "0") || !strcmp(s, "off"))
		ww_debug_on = false;
	else if (strcmp(s, "1") && strcmp(s, "on"))
		fprintf(stderr, "ttmsim: TTMSIM_WW_DEBUG='%s' ignored: "
			"expected 0 or 1\n", s);
}

TTM_EXPORT void ww_debug_print_report(const struct ww_debug_report *r,
				      int fd)
{
	void *frames[32];
	int n;

	dprintf(fd, "\n==== ttmsim ww_debug: rule %u broken (%s) ====\n",
		r->rule_number, r->name);
	dprintf(fd, "  %s\n", r->what);
	dprintf(fd, "  %-9s %s()", "call:", r->call);
	if (r->file)
		dprintf(fd, " at %s:%d", r->file, r->line);
	else
		dprintf(fd, " (caller unknown: no caller-site macro; see "
			"the backtrace)");
	dprintf(fd, "\n  %-9s %d\n", "thread:", (int)r->tid);
	dprintf(fd, "  %-9s %s\n", "class:",
		r->class_name ? r->class_name : "(none)");
	if (r->ctx_class_name)
		dprintf(fd, "  %-9s %s\n", "ctx class:", r->ctx_class_name);
	if (r->lock)
		dprintf(fd, "  %-9s %p\n", "lock:", (const void *)r->lock);
	if (r->ctx)
		dprintf(fd, "  %-9s %p, stamp %lu\n", "ctx:",
			(const void *)r->ctx, r->stamp);
	else
		dprintf(fd, "  %-9s none\n", "ctx:");
	if (r->object && rules[r->rule].count)
		dprintf(fd, "  %-9s %p, %s: %lu\n", rules[r->rule].object,
			r->object, rules[r->rule].count, r->count);
	else if (r->object && rules[r->rule].object)
		dprintf(fd, "  %-9s %p\n", rules[r->rule].object, r->object);
	if (rules[r->rule].number == 13)
		dprintf(fd, "  %-9s %lu fence-signalling section%s open in "
			"this thread\n", "sections:", r->count,
			r->count == 1 ? "" : "s");
	ww_debug_state_print(ww_thread_self(), fd);
	n = backtrace(frames, (int)ARRAY_SIZE(frames));
	if (n > 0) {
		dprintf(fd, "  backtrace:\n");
		backtrace_symbols_fd(frames, n, fd);
	}
	dprintf(fd, "==== end of ww_debug report ====\n");
}

void ww_debug_raise(struct ww_debug_report *r)
{
	ww_debug_handler_fn *fn;
	void *data;

	r->rule_number = rules[r->rule].number;
	r->name = rules[r->rule].name;
	r->what = rules[r->rule].what;
	r->tid = (pid_t)syscall(SYS_gettid);

	pthread_mutex_lock(&handler_lock);
	fn = handler_fn;
	data = handler_data;
	pthread_mutex_unlock(&handler_lock);
	if (fn) {
		fn(r, data);
		return;
	}
	ww_debug_print_report(r, STDERR_FILENO);
	abort();
}

void ww_debug_violation(enum ww_debug_rule rule, const struct ww_mutex *lock,
			const struct ww_acquire_ctx *ctx,
			const struct ww_callsite *site)
{
	struct ww_debug_report r = {
		.rule = rule,
		.call = site->call,
		.lock = lock,
		.ctx = ctx,
		.file = site->file,
		.line = site->line,
	};
	/* A context never initialised has no fields worth reading. */
	bool ctx_readable = ctx && (ctx->magic == WW_CTX_LIVE ||
				    ctx->magic == WW_CTX_FINISHED);

	/*
	 * The lock's class names the family, unless the lock has none;
	 * then the context's.
	 */
	if (lock && ww_lock_class(lock))
		r.class_name = ww_lock_class(lock)->name;
	else if (ctx_readable && ctx->ww_class)
		r.class_name = ctx->ww_class->name;
	if (ctx_readable)
		r.stamp = ctx->stamp;
	/* Both families, or the report could read "x is not x". */
	if (rule == WW_DEBUG_CLASS_MISMATCH && ctx_readable && ctx->ww_class)
		r.ctx_class_name = ctx->ww_class->name;
	if (rule == WW_DEBUG_SIGNALLING_LOCK)
		r.count = ww_debug_signalling;
	ww_debug_raise(&r);
}
