// SPDX-License-Identifier: MIT
/*
 * Step 1 of a submission: handles to buffers, and duplicates judged by
 * buffer, not by handle (two handles of one client never name the same
 * buffer, but a buffer may be listed twice under one handle), folded by
 * ttm_exec_entries_fold().
 */
#include <errno.h>
#include <stdlib.h>

#include "execbuf/submit.h"

int submit_lookup(struct submit *s)
{
	const struct ttm_execbuf_args *args = s->args;
	struct ttm_bo **bos;
	unsigned int i, first_dup;
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
		s->objs[i].write = args->bos[i].flags & TTM_EXECBUF_BO_WRITE;
		s->objs[i].placement = args->bos[i].placement;
	}
	s->n_entries = args->n_bos;
	s->n = ttm_exec_entries_fold(s->objs, s->n_entries, &first_dup);
	if (first_dup < s->n_entries &&
	    !(args->flags & TTM_EXECBUF_ALLOW_DUPLICATES)) {
		s->args->bad_index = (int)first_dup;
		return -EINVAL;
	}
	return 0;
}
