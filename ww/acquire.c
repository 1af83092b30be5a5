// SPDX-License-Identifier: MIT
/* Acquire contexts: the stamp that orders transactions of one class. */
#include "ttmsim/ww_mutex.h"
#include "util/compiler.h"
#include "ww/thread.h"

#define WW_CTX_LIVE 0x57574358u     /* "WWCX" */
#define WW_CTX_FINISHED 0x57574446u /* "WWDF" */

TTM_EXPORT void ww_acquire_init(struct ww_acquire_ctx *ctx,
				struct ww_class *ww_class)
{
	*ctx = (struct ww_acquire_ctx){
		.task = ww_thread_self(),
		.stamp = __atomic_add_fetch(&ww_class->stamp, 1,
					    __ATOMIC_RELAXED),
		.is_wait_die = (unsigned short)ww_class->is_wait_die,
		.ww_class = ww_class,
		.magic = WW_CTX_LIVE,
		.inject_countdown = ~0u,
	};
}

TTM_EXPORT void ww_acquire_done(struct ww_acquire_ctx *ctx)
{
	ctx->done_acquire = 1;
}

TTM_EXPORT void ww_acquire_fini(struct ww_acquire_ctx *ctx)
{
	ctx->magic = WW_CTX_FINISHED;
}
