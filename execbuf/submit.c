// SPDX-License-Identifier: MIT
/*
 * ttm_execbuf_submit(): the steps of a submission and step 2, locking
 * and validating every buffer in one ttm_exec_until_all_locked() loop.
 *
 * Validation sits inside the loop because an eviction may reserve a
 * victim with the ticket and be told to back off: then, as for a lock,
 * everything is dropped, the contended buffer is slow-locked and the pass
 * restarts. So the only -ENOSPC left is a job that can never fit.
 */
#include <errno.h>
#include <stdlib.h>

#include "execbuf/submit.h"
#include "ttmsim/exec.h"
#include "util/compiler.h"
#include "util/time.h"

static bool tracing(const struct submit *s)
{
	return s->client->event_fn != NULL;
}

void submit_event(struct submit *s, enum ttm_execbuf_phase phase,
		  uint64_t begin_ns, int result)
{
	struct ttm_execbuf_event ev = {
		.phase = phase,
		.begin_ns = begin_ns,
		.seqno = s->seqno,
		.result = result,
	};

	/* The clock only for a sink: 5 reads a job were 5% of its CPU. */
	if (tracing(s)) {
		ev.end_ns = mono_ns();
		s->client->event_fn(&ev, s->client->event_data);
	}
}

/* The checks that need no lookup; bad_index for a bad entry's flags. */
static int check_args(struct ttm_execbuf_args *args,
		      struct ttm_device *dev)
{
	const uint32_t rw = TTM_EXECBUF_BO_READ | TTM_EXECBUF_BO_WRITE;
	const uint32_t known = TTM_EXECBUF_ALLOW_DUPLICATES |
			       TTM_EXECBUF_INTERRUPTIBLE |
			       TTM_EXECBUF_FENCE_FD_OUT | TTM_EXECBUF_HANG;
	unsigned int i;

	if (args->n_bos == 0 || args->n_bos > TTM_EXECBUF_MAX_BOS ||
	    !args->bos || (args->flags & ~known) ||
	    args->engine >= ttm_gpu_engines(ttm_device_gpu(dev)) ||
	    (args->op != TTM_GPU_OP_NOP && args->op != TTM_GPU_OP_ADD &&
	     args->op != TTM_GPU_OP_COPY) ||
	    args->duration_us > TTM_GPU_MAX_DURATION_US ||
	    (args->n_in_fences && !args->in_fences) ||
	    (args->n_in_fence_fds && !args->in_fence_fds) ||
	    (args->n_in_syncobjs && !args->in_syncobjs) ||
	    (args->n_out_syncobjs && !args->out_syncobjs))
		return -EINVAL;
	for (i = 0; i < args->n_bos; i++) {
		const struct ttm_execbuf_bo *e = &args->bos[i];

		if (!(e->flags & rw) || (e->flags & ~rw)) {
			args->bad_index = (int)i;
			return -EINVAL;
		}
	}
	/* COPY reads its source, bos[0], and writes its destination. */
	if (args->op == TTM_GPU_OP_COPY) {
		if (args->n_bos != 2)
			return -EINVAL;
		if (args->bos[0].flags != TTM_EXECBUF_BO_READ ||
		    !(args->bos[1].flags & TTM_EXECBUF_BO_WRITE)) {
			args->bad_index =
				args->bos[0].flags != TTM_EXECBUF_BO_READ ? 0 : 1;
			return -EINVAL;
		}
	}
	return 0;
}

/* An -EDEADLK: the back-off phase lasts until the next pass starts. */
static void backoff_start(struct submit *s)
{
	s->backoffs++;
	/* Not 0, which means "not backing off", even when not tracing. */
	s->backoff_begin = tracing(s) ? mono_ns() : 1;
}

/*
 * Step 2. Each buffer is locked with a slot for the job's fence, then
 * validated; either may ask for a back-off.
 */
static int lock_and_validate(struct submit *s)
{
	struct ttm_operation_ctx ctx = {
		.interruptible = s->args->flags & TTM_EXECBUF_INTERRUPTIBLE,
		.exec = &s->exec,
	};
	uint64_t lock_begin = tracing(s) ? mono_ns() : 0;
	uint64_t validate_begin = 0;
	unsigned int i, failed = 0;
	int ret = 0;

	ttm_exec_until_all_locked(&s->exec) {
		s->passes++;
		if (s->backoff_begin) {
			/*
			 * The slow lock of the contended buffer is taken, or
			 * was interrupted: then every lock below fails.
			 */
			submit_event(s, TTM_EXECBUF_PHASE_BACKOFF,
				     s->backoff_begin,
				     ttm_exec_error(&s->exec));
			s->backoff_begin = 0;
		}
		for (i = 0; i < s->n; i++) {
			ret = ttm_exec_prepare_bo(&s->exec, s->objs[i].bo, 1);
			if (ret == -EDEADLK)
				backoff_start(s);
			ttm_exec_retry_on_contention(&s->exec);
			if (ret)
				goto out;
		}
		validate_begin = tracing(s) ? mono_ns() : 0;
		ret = ttm_exec_entries_validate(s->objs, s->n, &ctx, &failed);
		if (ret == -EDEADLK) {
			submit_event(s, TTM_EXECBUF_PHASE_VALIDATE,
				     validate_begin, ret);
			backoff_start(s);
		}
		ttm_exec_retry_on_contention(&s->exec);
		if (ret) {
			/* Only a bad placement is the entry's fault. */
			if (ret == -EINVAL)
				s->args->bad_index = (int)s->objs[failed].index;
			goto out_validate;
		}
		submit_event(s, TTM_EXECBUF_PHASE_VALIDATE, validate_begin, 0);
	}
	ttm_exec_done(&s->exec);
	goto out;

out_validate:
	submit_event(s, TTM_EXECBUF_PHASE_VALIDATE, validate_begin, ret);
out:
	submit_event(s, TTM_EXECBUF_PHASE_LOCK, lock_begin, ret);
	return ret;
}

/* Steps 1 to 3; whatever happens, nothing stays locked or referenced. */
static int submit_steps(struct submit *s)
{
	struct ttm_execbuf_args *args = s->args;
	uint64_t t = tracing(s) ? mono_ns() : 0;
	struct submit_objs objs_inline;
	unsigned int i;
	int ret;

	s->objs_inline = &objs_inline;
	ret = submit_in_fences(s);
	if (ret == 0)
		ret = submit_lookup(s);
	submit_event(s, TTM_EXECBUF_PHASE_LOOKUP, t, ret);
	if (ret == 0) {
		/* The lookup's references outlive the helper: it lends them. */
		ttm_exec_init(&s->exec, s->client->dev,
			      ((args->flags & TTM_EXECBUF_INTERRUPTIBLE) ?
			       TTM_EXEC_INTERRUPTIBLE : 0) |
			      TTM_EXEC_CALLER_REFS);
		ret = lock_and_validate(s);
		execbuf_count_backoffs(s->client->edev, s->backoffs,
				       s->passes ? s->passes - 1 : 0);
		if (ret == 0) {
			t = tracing(s) ? mono_ns() : 0;
			ret = submit_queue(s);
			submit_event(s, TTM_EXECBUF_PHASE_QUEUE, t, ret);
		}
		ttm_exec_fini(&s->exec);
	}
	/* The folded repeats hold a reference too. */
	for (i = 0; i < s->n_entries; i++)
		ttm_bo_put(s->objs[i].bo);
	submit_lookup_fini(s);
	submit_deps_fini(s);
	return ret;
}

TTM_EXPORT int ttm_execbuf_submit(struct ttm_client *client,
				  struct ttm_execbuf_args *args)
{
	struct submit s = { .client = client, .args = args };
	uint64_t begin;
	int ret;

	execbuf_count_submitted(client->edev);
	/*
	 * Atomic: nothing stops two threads from sharing a client, even
	 * though it gains them nothing.
	 */
	s.seqno = __atomic_add_fetch(&client->seqno, 1, __ATOMIC_RELAXED);
	begin = tracing(&s) ? mono_ns() : 0;
	args->out_fence = NULL;
	args->out_fence_fd = -1;
	args->bad_index = -1;

	ret = check_args(args, client->dev);
	if (ret == 0)
		ret = submit_steps(&s);
	if (ret)
		execbuf_count_rejected(client->edev, ret);
	submit_event(&s, TTM_EXECBUF_PHASE_SUBMIT, begin, ret);
	return ret;
}
