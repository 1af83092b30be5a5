// SPDX-License-Identifier: MIT
/*
 * A reservation's fences as one fence, and the implicit dependencies of a
 * job (ttmsim/resv.h): both read the lists as ttm_resv_get_fences() does,
 * without the lock, and flatten what they found with the merge of
 * gpu_sim/fence_unwrap.c, so a container kept in a reservation (a merge
 * added as a fence) does not end up nested in another.
 */
#include <errno.h>
#include <stdlib.h>

#include "gpu_sim/fence_container.h"
#include "ttmsim/resv.h"
#include "util/compiler.h"

static void fences_put(struct ttm_fence **fences, unsigned int count)
{
	unsigned int i;

	for (i = 0; i < count; i++)
		ttm_fence_put(fences[i]);
	free(fences);
}

TTM_EXPORT int ttm_resv_get_singleton(struct ttm_resv *resv,
				      enum ttm_resv_usage usage,
				      struct ttm_fence **ret_fence)
{
	struct ttm_fence **fences, *f;
	unsigned int count;
	int ret;

	ret = ttm_resv_get_fences(resv, usage, &fences, &count);
	if (ret)
		return ret;
	if (count <= 1) {
		*ret_fence = count ? fences[0] : NULL;
		free(fences);
		return 0;
	}
	ret = ttm_fence_unwrap_merge(count, fences, &f);
	fences_put(fences, count);
	if (ret)
		return ret;
	/* All signalled since the snapshot: nothing to wait for. */
	if (ttm_fence_get_status(f) == 1) {
		ttm_fence_put(f);
		f = NULL;
	}
	*ret_fence = f;
	return 0;
}

TTM_EXPORT int ttm_resv_implicit_deps(const struct ttm_resv_access *access,
				      unsigned int count,
				      struct ttm_fence ***ret_fences,
				      unsigned int *ret_count)
{
	struct ttm_fence **all = NULL, **fences, **v;
	unsigned int i, j, n = 0, k;
	int ret = 0;

	for (i = 0; i < count && !ret; i++) {
		ret = ttm_resv_get_fences(access[i].resv,
					  ttm_resv_usage_rw(access[i].write),
					  &fences, &k);
		if (ret || !k)
			continue;
		v = realloc(all, (n + k) * sizeof(*all));
		if (!v) {
			fences_put(fences, k);
			ret = -ENOMEM;
			break;
		}
		all = v;
		for (j = 0; j < k; j++)
			all[n++] = fences[j];
		free(fences);
	}
	if (ret == 0)
		ret = fence_unwrap_collect(n, all, ret_fences, ret_count);
	fences_put(all, n);
	return ret;
}
