// SPDX-License-Identifier: MIT
/* Acquire contexts: the stamp that orders transactions of one class. */
#include "ttmsim/ww_mutex.h"
#include "util/compiler.h"
#include "ww/debug.h"
#include "ww/park_batch.h"
#include "ww/thread.h"

#include <stddef.h>

/*
 * struct ww_acquire_ctx lives on callers' stacks: its size and the place
 * of inject_exempt (main's inject_countdown, renamed) are ABI. Pinned
 * for LP64, the platforms ttmsim is built for.
 */
#if __SIZEOF_POINTER__ == 8 && __SIZEOF_LONG__ == 8
_Static_assert(offsetof(struct ww_acquire_ctx, inject_exempt) == 52,
	       "struct ww_acquire_ctx: inject_exempt moved (ABI)");
_Static_assert(sizeof(struct ww_acquire_ctx) == 72,
	       "struct ww_acquire_ctx: size changed (ABI)");
#endif

void ww_raw_acquire_init(struct ww_acquire_ctx *ctx, struct ww_class *ww_class)
{
	*ctx = (struct ww_acquire_ctx){
		.task = ww_thread_self(),
		.stamp = __atomic_add_fetch(&ww_class->stamp, 1,
					    __ATOMIC_RELAXED),
		.is_wait_die = (unsigned short)ww_class->is_wait_die,
		.ww_class = ww_class,
		.magic = WW_CTX_LIVE,
	};
}

void ww_raw_acquire_done(struct ww_acquire_ctx *ctx)
{
	ctx->done_acquire = 1;
}

void ww_raw_acquire_fini(struct ww_acquire_ctx *ctx)
{
	/* A transaction that parked holding nothing and gave up. */
	ww_park_batch_released(ctx->task);
	ctx->magic = WW_CTX_FINISHED;
}

TTM_EXPORT void ww_acquire_init_at(struct ww_acquire_ctx *ctx,
				   struct ww_class *ww_class,
				   const char *file, int line)
{
	if (ww_debug_active())
		ww_debug_acquire_init(ctx, ww_class, file, line);
	else
		ww_raw_acquire_init(ctx, ww_class);
}

TTM_EXPORT void (ww_acquire_init)(struct ww_acquire_ctx *ctx,
				  struct ww_class *ww_class)
{
	ww_acquire_init_at(ctx, ww_class, NULL, 0);
}

TTM_EXPORT void ww_acquire_done_at(struct ww_acquire_ctx *ctx,
				   const char *file, int line)
{
	if (ww_debug_active())
		ww_debug_acquire_done(ctx, file, line);
	else
		ww_raw_acquire_done(ctx);
}

TTM_EXPORT void (ww_acquire_done)(struct ww_acquire_ctx *ctx)
{
	ww_acquire_done_at(ctx, NULL, 0);
}

TTM_EXPORT void ww_acquire_fini_at(struct ww_acquire_ctx *ctx,
				   const char *file, int line)
{
	if (ww_debug_active())
		ww_debug_acquire_fini(ctx, file, line);
	else
		ww_raw_acquire_fini(ctx);
}

TTM_EXPORT void (ww_acquire_fini)(struct ww_acquire_ctx *ctx)
{
	ww_acquire_fini_at(ctx, NULL, 0);
}
