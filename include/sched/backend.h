/* SPDX-License-Identifier: MIT */
/*
 * What the backends of sched/ (sched_cb.c) need from the core beyond the
 * public ttmsim/sched.h. Private to the library.
 */
#ifndef TTMSIM_SCHED_BACKEND_H
#define TTMSIM_SCHED_BACKEND_H

struct ttm_sched;
struct ttm_sched_backend_ops;

/*
 * Have ttm_sched_destroy() call @fini(@data) once the ring has drained and
 * the scheduler's thread is joined, before the scheduler is freed: the
 * backend's own teardown (joining its workers, freeing its state), so
 * that drivers destroy every scheduler the same way. Call it right after
 * ttm_sched_create(), before any entity exists.
 */
void sched_set_fini(struct ttm_sched *sched, void (*fini)(void *data),
		    void *data);

/*
 * The ops @sched was created with: a backend that embeds its ops in its
 * own state finds that state again from a job (job->sched) with
 * container_of(), and checks that a job's entity is one of its own.
 */
const struct ttm_sched_backend_ops *sched_ops(const struct ttm_sched *sched);

#endif /* TTMSIM_SCHED_BACKEND_H */
