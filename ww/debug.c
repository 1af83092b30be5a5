// SPDX-License-Identifier: MIT
/*
 * The debug checker's rules (ttmsim/ww_debug.h, docs/ww-debug.md): each
 * checked entry point finds the first rule the call breaks, reports it and
 * does nothing, or performs the call and updates the thread's bookkeeping.
 *
 * Everything read here belongs to the calling thread (its state, its
 * contexts) or is the lock word, read once: no lock is taken unless a rule
 * is broken.
 */
#include "ww/debug.h"
#include "ww/debug_state.h"
#include "ww/lockword.h"

static const char *const lock_call_names[] = {
	[WW_CALL_LOCK] = "ww_mutex_lock",
	[WW_CALL_LOCK_INTERRUPTIBLE] = "ww_mutex_lock_interruptible",
	[WW_CALL_LOCK_SLOW] = "ww_mutex_lock_slow",
	[WW_CALL_LOCK_SLOW_INTERRUPTIBLE] = "ww_mutex_lock_slow_interruptible",
};

/* A broken rule: report it; the caller then refuses the call. */
static bool broken(enum ww_debug_rule rule, const struct ww_mutex *lock,
		   const struct ww_acquire_ctx *ctx, const char *call,
		   const char *file, int line)
{
	struct ww_callsite site = { .call = call, .file = file, .line = line };

	ww_debug_violation(rule, lock, ctx, &site);
	return true;
}

/* Rule 9: the lock must be initialised and not destroyed. */
static enum ww_debug_rule check_lock(const struct ww_mutex *lock)
{
	if (!lock->ww_class)
		return WW_DEBUG_LOCK_UNINIT;
	if (ww_lock_destroyed(lock))
		return WW_DEBUG_LOCK_DESTROYED;
	return 0;
}

/* Rule 4: @ctx is live and this thread's. */
static enum ww_debug_rule check_ctx(const struct ww_acquire_ctx *ctx,
				    const struct ww_thread *self)
{
	if (ctx->magic != WW_CTX_LIVE)
		return WW_DEBUG_CTX_DEAD;
	if (ctx->task != self)
		return WW_DEBUG_CTX_THREAD;
	return 0;
}

/*
 * Rules 3-7 for a lock taken with @ctx, in the order a developer should
 * fix them. @slow: lock_slow*; @blocking: not a trylock.
 */
static enum ww_debug_rule check_ctx_lock(const struct ww_mutex *lock,
					 const struct ww_acquire_ctx *ctx,
					 const struct ww_debug_class *c,
					 bool slow, bool blocking,
					 bool already)
{
	if (ctx->ww_class != lock->ww_class)
		return WW_DEBUG_CLASS_MISMATCH;
	if (ctx->done_acquire)
		return WW_DEBUG_LOCK_AFTER_DONE;
	if (slow) {
		if (!ctx->contending_lock)
			return WW_DEBUG_SLOW_NO_DEADLK;
		if (ctx->contending_lock != lock)
			return WW_DEBUG_SLOW_WRONG_LOCK;
		if (ctx->acquired)
			return WW_DEBUG_SLOW_HELD;
	} else if (ctx->contending_lock && ctx->contending_lock != lock &&
		   !already) {
		/* -EALREADY (or a trylock's 0) takes nothing: allowed. */
		return WW_DEBUG_NOT_CONTENDED;
	}
	if (blocking && c->held_noctx)
		return WW_DEBUG_CTX_AFTER_NULL;
	return 0;
}

/* Rules 1 and 3-9 for any lock call; 0 if the call may go ahead. */
static enum ww_debug_rule check_lock_call(struct ww_mutex *lock,
					  struct ww_acquire_ctx *ctx,
					  struct ww_thread *self,
					  struct ww_debug_thread *d,
					  const struct ww_debug_class *c,
					  bool slow, bool blocking)
{
	const struct ww_debug_held *h;
	enum ww_debug_rule rule = check_lock(lock);

	if (rule)
		return rule;
	if (!ctx) {
		/* lock_slow is the second half of a context's back-off. */
		if (slow)
			return WW_DEBUG_SLOW_NO_DEADLK;
		if (blocking && (c->held || c->open))
			return WW_DEBUG_NULL_CTX_NESTED;
		return 0;
	}
	rule = check_ctx(ctx, self);
	if (rule)
		return rule;
	h = ww_debug_held_find(d, lock);
	return check_ctx_lock(lock, ctx, c, slow, blocking,
			      h && h->ctx == ctx);
}

/*
 * The state of the thread about to lock @lock, with room made to record
 * it. Untracked threads (no memory for the state) are not checked at
 * all: a checker that forgot a lock would report its unlock as a bug. So
 * a thread whose bookkeeping cannot grow drops out here, before the lock
 * is taken, never after: all its held locks forgotten at once, its later
 * unlocks performed unchecked.
 */
static struct ww_debug_thread *state_for(struct ww_thread *self,
					 struct ww_mutex *lock,
					 struct ww_debug_class **c)
{
	struct ww_debug_thread *d = ww_debug_state(self);

	*c = NULL;
	if (!d)
		return NULL;
	/* A bad lock has no usable class: check it before looking it up. */
	if (check_lock(lock))
		return d;
	*c = ww_debug_class_of(d, lock->ww_class);
	if (!*c || !ww_debug_held_reserve(d)) {
		ww_debug_state_lose(self);
		return NULL;
	}
	return d;
}

/* A lock was taken: remember it, and that any back-off is over. */
static void took(struct ww_debug_thread *d, struct ww_debug_class *c,
		 struct ww_mutex *lock, struct ww_acquire_ctx *ctx,
		 const char *file, int line)
{
	if (ctx && ctx->contending_lock == lock)
		ctx->contending_lock = NULL;
	/* Cannot fail: state_for() made the room. */
	ww_debug_held_add(d, lock, ctx, c, file, line);
}

int ww_debug_lock(struct ww_mutex *lock, struct ww_acquire_ctx *ctx,
		  enum ww_lock_call kind, const char *file, int line)
{
	struct ww_thread *self = ww_thread_self();
	bool interruptible = kind & 1, slow = kind & 2;
	struct ww_debug_class *c;
	struct ww_debug_thread *d = state_for(self, lock, &c);
	enum ww_debug_rule rule;
	int ret;

	/* Rule 13 needs no state: an untracked thread is checked too. */
	rule = d ? check_lock_call(lock, ctx, self, d, c, slow, true) : 0;
	if (!rule && ww_debug_signalling)
		rule = WW_DEBUG_SIGNALLING_LOCK;
	if (rule && broken(rule, lock, ctx, lock_call_names[kind], file, line))
		return -EINVAL;
	ret = ww_raw_lock(lock, ctx, interruptible);
	if (!d)
		return ret;
	if (ctx)
		ctx->last_result = ret;
	if (ret == 0)
		took(d, c, lock, ctx, file, line);
	return ret;
}

int ww_debug_trylock(struct ww_mutex *lock, struct ww_acquire_ctx *ctx,
		     const char *file, int line)
{
	struct ww_thread *self = ww_thread_self();
	struct ww_debug_class *c;
	struct ww_debug_thread *d = state_for(self, lock, &c);
	enum ww_debug_rule rule;
	int ret;

	if (!d)
		return ww_raw_trylock(lock, ctx);
	rule = check_lock_call(lock, ctx, self, d, c, false, false);
	if (rule && broken(rule, lock, ctx, "ww_mutex_trylock", file, line))
		return -EINVAL;
	ret = ww_raw_trylock(lock, ctx);
	if (ret)
		took(d, c, lock, ctx, file, line);
	return ret;
}

void ww_debug_unlock(struct ww_mutex *lock, const char *file, int line)
{
	struct ww_debug_thread *d = ww_debug_state(ww_thread_self());
	struct ww_debug_held *h;

	if (!d) {
		ww_raw_unlock(lock);
		return;
	}
	h = ww_debug_held_find(d, lock);
	if (!h) {
		/*
		 * Not ours. The word tells which bug; its owner is never
		 * dereferenced, it may be any other thread's.
		 */
		enum ww_debug_rule rule = ww_token(ww_word_load(lock)) ?
			WW_DEBUG_UNLOCK_FOREIGN : WW_DEBUG_UNLOCK_UNLOCKED;

		broken(rule, lock, NULL, "ww_mutex_unlock", file, line);
		return;
	}
	ww_debug_held_remove(d, h);
	ww_raw_unlock(lock);
}

void ww_debug_destroy(struct ww_mutex *lock, const char *file, int line)
{
	if (ww_token(ww_word_load(lock)) &&
	    broken(WW_DEBUG_DESTROY_LOCKED, lock, NULL, "ww_mutex_destroy",
		   file, line))
		return;
	ww_raw_destroy(lock);
}

void ww_debug_acquire_init(struct ww_acquire_ctx *ctx, struct ww_class *cls,
			   const char *file, int line)
{
	struct ww_thread *self = ww_thread_self();
	struct ww_debug_thread *d = ww_debug_state(self);
	struct ww_debug_class *c = d ? ww_debug_class_of(d, cls) : NULL;

	if (!c) {
		/* Out of memory: an unrecorded context, an untracked thread. */
		if (d)
			ww_debug_state_lose(self);
		ww_raw_acquire_init(ctx, cls);
		return;
	}
	if (c->open) {
		/* Name the context already open: that is the one to look at. */
		struct ww_debug_report r = {
			.rule = WW_DEBUG_CTX_NESTED,
			.call = "ww_acquire_init",
			.class_name = cls->name,
			.ctx = c->ctx,
			.stamp = c->ctx_stamp,
			.file = file,
			.line = line,
		};

		ww_debug_raise(&r);
		return;
	}
	ww_raw_acquire_init(ctx, cls);
	c->open++;
	c->ctx = ctx;
	c->ctx_stamp = ctx->stamp;
	c->ctx_file = file;
	c->ctx_line = line;
}

void ww_debug_acquire_done(struct ww_acquire_ctx *ctx, const char *file,
			   int line)
{
	enum ww_debug_rule rule = check_ctx(ctx, ww_thread_self());

	if (!rule && ctx->done_acquire)
		rule = WW_DEBUG_DONE_TWICE;
	if (rule && broken(rule, NULL, ctx, "ww_acquire_done", file, line))
		return;
	ww_raw_acquire_done(ctx);
}

void ww_debug_acquire_fini(struct ww_acquire_ctx *ctx, const char *file,
			   int line)
{
	struct ww_thread *self = ww_thread_self();
	struct ww_debug_thread *d = ww_debug_state(self);
	enum ww_debug_rule rule;

	if (ctx->magic == WW_CTX_FINISHED)
		rule = WW_DEBUG_FINI_TWICE;
	else
		rule = check_ctx(ctx, self);
	if (!rule && ctx->acquired)
		rule = WW_DEBUG_FINI_HELD;
	if (rule && broken(rule, NULL, ctx, "ww_acquire_fini", file, line))
		return;
	if (d) {
		/* Find, never add: an allocation here could only fail. */
		struct ww_debug_class *c = ww_debug_class_find(d, ctx->ww_class);

		if (c && c->open) {
			c->open--;
			if (c->ctx == ctx)
				c->ctx = NULL;
		}
	}
	ww_raw_acquire_fini(ctx);
}

bool ww_debug_lock_held(const struct ww_mutex *lock)
{
	struct ww_debug_thread *d;

	if (!ww_debug_active())
		return true;
	d = ww_debug_state(ww_thread_self());
	return !d || ww_debug_held_find(d, lock);
}

bool ww_debug_thread_exit(struct ww_thread *t)
{
	struct ww_debug_thread *d = t->debug;
	struct ww_debug_report r = { .call = "thread exit" };
	bool leaked = d && !d->lost && d->held_n;
	size_t i;

	if (!d || d->lost) {
		ww_debug_state_free(t);
		return false;
	}
	/*
	 * Nothing here may dereference a context: it may have lived in the
	 * stack frame the thread just left.
	 */
	if (d->held_n) {
		struct ww_debug_held *h = ww_debug_held_oldest(d);

		r.rule = WW_DEBUG_EXIT_HELD;
		r.class_name = d->classes[h->cls].cls->name;
		r.lock = h->lock;
		r.ctx = h->ctx;
		r.stamp = h->stamp;
		r.file = h->file; /* where the first leaked lock was taken */
		r.line = h->line;
		ww_debug_raise(&r);
	} else {
		for (i = 0; i < d->n_classes; i++) {
			const struct ww_debug_class *c = &d->classes[i];

			if (!c->open || !c->ctx)
				continue;
			r.rule = WW_DEBUG_EXIT_CTX;
			r.class_name = c->cls->name;
			r.ctx = c->ctx;
			r.stamp = c->ctx_stamp;
			r.file = c->ctx_file; /* where it was opened */
			r.line = c->ctx_line;
			ww_debug_raise(&r);
			break;
		}
	}
	ww_debug_state_free(t);
	return leaked;
}
