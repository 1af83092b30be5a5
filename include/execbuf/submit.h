/* SPDX-License-Identifier: MIT */
/*
 * One ttm_execbuf_submit() call in progress, shared by its steps:
 * lookup (execbuf/lookup.c), lock and validate (execbuf/submit.c), queue
 * (execbuf/queue.c).
 */
#ifndef TTMSIM_EXECBUF_SUBMIT_H
#define TTMSIM_EXECBUF_SUBMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "execbuf/execbuf.h"
#include "ttmsim/exec.h"

struct ttm_fence_chain;

/* Dependencies a submission holds without an allocation. */
#define SUBMIT_DEPS_INLINE 16
/* Buffer entries a submission looks up without an allocation. */
#define SUBMIT_OBJS_INLINE 16

/*
 * A job's dependencies, growing; @v is @inline_v until they outgrow it (a
 * job of 8 buffers has about that many: no malloc per job). The struct
 * must not be copied while @v points into it. The first @owned hold a
 * reference each (the explicit in-fences, taken first); the rest, the
 * implicit ones, are borrowed from the reservations, which keep them
 * while they stay locked, until the job is queued.
 */
struct submit_deps {
	struct ttm_gpu_dep *v;
	unsigned int n, cap, owned;
	struct ttm_gpu_dep inline_v[SUBMIT_DEPS_INLINE];
};

/*
 * A submission's entries and the lookup's buffer array, for up to
 * SUBMIT_OBJS_INLINE entries: no malloc per job. Not zeroed (the lookup
 * writes what it uses): a local of the caller's, outside struct submit,
 * whose initialiser zeroes it whole.
 */
struct submit_objs {
	struct ttm_exec_entry objs[SUBMIT_OBJS_INLINE];
	struct ttm_bo *bos[SUBMIT_OBJS_INLINE];
};

struct submit {
	struct ttm_client *client;
	struct ttm_execbuf_args *args;
	/*
	 * One per entry of args->bos, each with a reference: the first @n
	 * are the distinct buffers in the user's order, @index the first
	 * entry of each; then the folded repeats (ttm_exec_entries_fold()).
	 */
	struct ttm_exec_entry *objs;
	unsigned int n, n_entries;
	/* @objs's storage for small jobs, on submit_steps()' stack. */
	struct submit_objs *objs_inline;
	struct ttm_exec exec;
	unsigned int backoffs;   /* -EDEADLK results seen */
	unsigned int passes;
	uint64_t backoff_begin;  /* backing off since then; 0: not */
	uint64_t seqno;          /* the client's count of this call */
	struct submit_deps deps; /* explicit in-fences first, then implicit */
	/*
	 * args->out_syncobjs, looked up: references; and for each with a
	 * point, its chain link, allocated before the job is submitted.
	 */
	struct ttm_syncobj **out_syncobjs;
	struct ttm_fence_chain **out_links;
};

/*
 * Step 1: fill @s->objs from the handles; -ENOENT or -EINVAL with
 * args->bad_index. @s->objs is set even on error (submit_lookup_fini()
 * it after putting the first @s->n_entries references).
 */
int submit_lookup(struct submit *s);
/* Free @s->objs unless it is @s->objs_inline's (or NULL). */
void submit_lookup_fini(struct submit *s);

/*
 * Before anything is locked: take the explicit in-fences (importing the
 * descriptors, then the in-syncobjs' fences) into @s->deps and look the
 * out-syncobjs up into @s->out_syncobjs; -EINVAL or -ENOENT with
 * args->bad_index = n_bos + the index in in_fences, then in_fence_fds,
 * in_syncobjs and out_syncobjs, for a bad one; -ENOMEM.
 */
int submit_in_fences(struct submit *s);

/* Put every fence of @s->deps and free it, and the out-syncobjs. */
void submit_deps_fini(struct submit *s);

/*
 * Step 3, everything locked and validated: build the dependencies, submit
 * the job, add its fence to every buffer, set args->out_fence (and its
 * fd). Nothing is submitted if it fails.
 */
int submit_queue(struct submit *s);

/* A phase event for the client's sink, if any (execbuf/submit.c). */
void submit_event(struct submit *s, enum ttm_execbuf_phase phase,
		  uint64_t begin_ns, int result);

#endif /* TTMSIM_EXECBUF_SUBMIT_H */
