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

	if (args->n_bos <= SUBMIT_OBJS_INLINE) {
		s->objs = s->objs_inline->objs;
		bos = s->objs_inline->bos;
	} else {
		s->objs = calloc(args->n_bos, sizeof(*s->objs) + sizeof(*bos));
		if (!s->objs)
			return -ENOMEM;
		bos = (struct ttm_bo **)(s->objs + args->n_bos);
	}
	ret = client_lookup_many(s->client, args->bos, args->n_bos, bos,
				 &s->args->bad_index);
	if (ret)
		return ret;
	for (i = 0; i < args->n_bos; i++)
		s->objs[i] = (struct ttm_exec_entry){
			.bo = bos[i],
			.placement = args->bos[i].placement,
			.write = args->bos[i].flags & TTM_EXECBUF_BO_WRITE,
		};
	s->n_entries = args->n_bos;
	s->n = ttm_exec_entries_fold(s->objs, s->n_entries, &first_dup);
	if (first_dup < s->n_entries &&
	    !(args->flags & TTM_EXECBUF_ALLOW_DUPLICATES)) {
		s->args->bad_index = (int)first_dup;
		return -EINVAL;
	}
	return 0;
}

void submit_lookup_fini(struct submit *s)
{
	if (s->objs != s->objs_inline->objs)
		free(s->objs);
	s->objs = NULL;
}
