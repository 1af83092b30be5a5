// SPDX-License-Identifier: MIT
/*
 * Validating one buffer of a job, when the job's own buffers are in its
 * way. Eviction never takes a buffer the job holds (TTM's rule: it is in
 * use), so a job whose VRAM-only buffer finds VRAM full of the job's own
 * VRAM-or-GTT buffers would get -ENOSPC although it fits. Then those
 * buffers move to another domain their placement allows, one at a time,
 * until the buffer fits: -ENOSPC is left for jobs that can never fit.
 */
#include <errno.h>

#include "execbuf/submit.h"

static const struct ttm_placement *obj_placement(const struct submit_obj *o)
{
	return o->placement ? o->placement : ttm_bo_placement(o->bo);
}

/* @pl without @domain, in order; count 0 if nothing is left. */
static struct ttm_placement placement_without(const struct ttm_placement *pl,
					      enum ttm_domain domain)
{
	struct ttm_placement out = { 0 };
	unsigned int k;

	for (k = 0; k < pl->count; k++)
		if (pl->domains[k] != domain)
			out.domains[out.count++] = pl->domains[k];
	return out;
}

/*
 * Move the job's buffers other than @i, unpinned and allowed elsewhere,
 * out of @domain one by one, validating @i again after each; the result of
 * the last validation of @i, or of a move that failed otherwise than for
 * room (-EDEADLK included: the caller backs off).
 */
static int make_room_among_own(struct submit *s, unsigned int i,
			       enum ttm_domain domain,
			       struct ttm_operation_ctx *ctx)
{
	const struct ttm_placement *pl = obj_placement(&s->objs[i]);
	unsigned int j;
	int ret = -ENOSPC;

	for (j = 0; j < s->n && ret == -ENOSPC; j++) {
		struct ttm_bo *bo = s->objs[j].bo;
		struct ttm_placement other;

		if (j == i || ttm_bo_domain(bo) != domain ||
		    ttm_bo_pin_count(bo))
			continue;
		other = placement_without(obj_placement(&s->objs[j]), domain);
		if (other.count == 0)
			continue;
		ret = ttm_bo_validate(bo, &other, ctx);
		if (ret == 0)
			ret = ttm_bo_validate(s->objs[i].bo, pl, ctx);
	}
	return ret;
}

int submit_validate_obj(struct submit *s, unsigned int i,
			struct ttm_operation_ctx *ctx)
{
	const struct ttm_placement *pl = obj_placement(&s->objs[i]);
	unsigned int k;
	int ret;

	ret = ttm_bo_validate(s->objs[i].bo, pl, ctx);
	for (k = 0; k < pl->count && ret == -ENOSPC; k++)
		ret = make_room_among_own(s, i, pl->domains[k], ctx);
	return ret;
}
