// SPDX-License-Identifier: MIT
/*
 * Step 1 of a submission: handles to buffers, and duplicates judged by
 * buffer, not by handle (two handles of one client never name the same
 * buffer, but a buffer may be listed twice under one handle).
 */
#include <errno.h>
#include <stdlib.h>

#include "execbuf/submit.h"

/* Sort key: the buffer, then the entry's place in the user's list. */
static int cmp_entry(const void *a, const void *b)
{
	const struct submit_obj *x = a, *y = b;

	if (x->bo != y->bo)
		return (uintptr_t)x->bo < (uintptr_t)y->bo ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Restore the user's order, which locking follows. */
static int cmp_index(const void *a, const void *b)
{
	const struct submit_obj *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Fold each run of entries of one buffer into its first entry (placement
 * from it, written if any entry writes), or fail with the index of the
 * first entry, in the user's order, that repeats an earlier one.
 */
static int fold_duplicates(struct submit *s, bool allow)
{
	struct submit_obj *o = s->objs;
	unsigned int i, out = 0, n_entries = s->n, bad = s->n;

	if (s->n < 2)
		return 0;
	qsort(o, s->n, sizeof(*o), cmp_entry);
	for (i = 0; i < s->n; i++) {
		if (out && o[out - 1].bo == o[i].bo) {
			if (o[i].index < bad)
				bad = o[i].index;
			o[out - 1].write |= o[i].write;
			/* Drop the reference the lookup took on the repeat. */
			ttm_bo_put(o[i].bo);
			continue;
		}
		o[out++] = o[i];
	}
	s->n = out;
	qsort(o, s->n, sizeof(*o), cmp_index);
	if (bad < n_entries && !allow) {
		s->args->bad_index = (int)bad;
		return -EINVAL;
	}
	return 0;
}

int submit_lookup(struct submit *s)
{
	const struct ttm_execbuf_args *args = s->args;
	struct ttm_bo **bos;
	unsigned int i;
	int ret;

	s->objs = calloc(args->n_bos, sizeof(*s->objs) + sizeof(*bos));
	if (!s->objs)
		return -ENOMEM;
	bos = (struct ttm_bo **)(s->objs + args->n_bos);
	ret = client_lookup_many(s->client, args->bos, args->n_bos, bos,
				 &s->args->bad_index);
	if (ret)
		return ret;
	for (i = 0; i < args->n_bos; i++) {
		s->objs[i].bo = bos[i];
		s->objs[i].index = i;
		s->objs[i].write = args->bos[i].flags & TTM_EXECBUF_BO_WRITE;
		s->objs[i].placement = args->bos[i].placement;
	}
	s->n = args->n_bos;
	return fold_duplicates(s, args->flags & TTM_EXECBUF_ALLOW_DUPLICATES);
}
