// SPDX-License-Identifier: MIT
/*
 * CPU access to a buffer's contents: copies ordered after the GPU's, and
 * the address itself for a caller that orders its own accesses.
 */
#include <errno.h>
#include <string.h>

#include "bo/bo.h"
#include "util/compiler.h"
#include "ww/debug.h"

/*
 * Reserved by the caller: with the checker on, its record of the thread's
 * held locks says so; with it off, only that someone holds it (cheap, and
 * catches the common mistake).
 */
static bool bo_reserved(struct ttm_bo *bo)
{
	if (!ww_mutex_is_locked(&bo->resv->lock))
		return false;
	return !ww_debug_active() || ww_debug_lock_held(&bo->resv->lock);
}

/* Check the range, then wait for the work a @write access must follow. */
static int bo_access_begin(struct ttm_bo *bo, uint64_t offset, size_t len,
			   bool write)
{
	if (offset > bo->size || len > bo->size - offset)
		return -EINVAL;
	if (!bo_reserved(bo))
		return -EPERM;
	return ttm_resv_wait(bo->resv, ttm_resv_usage_rw(write), false, -1);
}

TTM_EXPORT int ttm_bo_read(struct ttm_bo *bo, uint64_t offset, void *buf,
			   size_t len)
{
	int ret = bo_access_begin(bo, offset, len, false);

	if (ret == 0 && len)
		memcpy(buf, (char *)bo_mem(bo) + offset, len);
	return ret;
}

TTM_EXPORT int ttm_bo_write(struct ttm_bo *bo, uint64_t offset,
			    const void *buf, size_t len)
{
	int ret = bo_access_begin(bo, offset, len, true);

	if (ret == 0 && len)
		memcpy((char *)bo_mem(bo) + offset, buf, len);
	return ret;
}

TTM_EXPORT int ttm_bo_vmap(struct ttm_bo *bo, void **ret_addr)
{
	if (!bo_reserved(bo))
		return -EPERM;
	*ret_addr = bo_mem(bo);
	return 0;
}

TTM_EXPORT int ttm_bo_vunmap(struct ttm_bo *bo, void *addr)
{
	if (!bo_reserved(bo))
		return -EPERM;
	return addr == bo_mem(bo) ? 0 : -EINVAL;
}
