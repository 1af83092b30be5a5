/* SPDX-License-Identifier: MIT */
/*
 * Fences: one-shot completion events, modelled on the kernel's dma_fence.
 *
 * A fence belongs to a context (a timeline, from ttm_fence_context_alloc())
 * and has a sequence number on it. It is signalled exactly once, maybe
 * with an error; waiters and callbacks learn of it. Fences are reference
 * counted and allocated by ttmsim (never embedded): their memory is
 * type-stable, which is what lets a reservation object's readers look at
 * fences without holding its lock (ttmsim/resv.h).
 *
 * A fence can be exported as a file descriptor, like a sync_file: a pipe
 * whose read end becomes readable (POLLIN) when the fence signals, so
 * libdrm's sync_wait() works on it. See ttm_fence_export_fd().
 */
#ifndef TTMSIM_FENCE_H
#define TTMSIM_FENCE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ttm_fence;
struct ttm_fence_cb;

/**
 * typedef ttm_fence_func_t - a fence callback.
 * @fence: the fence that signalled.
 * @cb: the node given to ttm_fence_add_callback().
 *
 * Called once, when the fence signals; or, if the last reference to an
 * unsignalled fence is dropped, with the fence already dead: then it must
 * not take a reference to @fence or export or import it.
 *
 * Context: Does not sleep: runs in a fence-signalling section, so it must
 * not take a ww_mutex or a reservation blocking, wait for a fence, nor
 * create or validate a buffer; it may signal fences, try-lock, add
 * callbacks and queue work (the full list is at
 * ttm_fence_begin_signalling(); the ww debug checker reports the rest,
 * rule 13). Runs in the signalling thread, or the one that dropped the
 * last reference, holding whatever that thread holds: the fence's own
 * lock is released, but a GPU on the virtual clock signals its job fences
 * with its clock held (ttm_gpu_advance()), and a last put may come from a
 * thread holding reservations. It must not call ttm_gpu_destroy() or
 * ttm_gpu_advance() (ttmsim/gpu.h). The lock order is in docs/locking.md.
 */
typedef void ttm_fence_func_t(struct ttm_fence *fence,
			      struct ttm_fence_cb *cb);

/**
 * struct ttm_fence_cb - a callback node, embedded in the caller's struct.
 *
 * The fields are private to ttmsim.
 */
struct ttm_fence_cb {
	/* private: */
	struct ttm_fence_cb *next;
	struct ttm_fence_cb **pprev;
	ttm_fence_func_t *func;
};

/**
 * ttm_fence_context_alloc() - reserve @n consecutive fence contexts.
 * @n: how many.
 *
 * Contexts are never reused.
 *
 * Context: Does not sleep. Any thread.
 * Return: the first.
 */
uint64_t ttm_fence_context_alloc(unsigned int n);

/**
 * ttm_fence_create() - a new, unsignalled fence holding one reference.
 * @context: its timeline, from ttm_fence_context_alloc().
 * @seqno: its sequence number on @context.
 * @ret_fence: the new fence.
 *
 * Context: Does not sleep. Any thread.
 * Return: 0 and *@ret_fence, or -ENOMEM.
 */
int ttm_fence_create(uint64_t context, uint64_t seqno,
		     struct ttm_fence **ret_fence);

/**
 * ttm_fence_get() - take a reference.
 * @fence: a fence the caller holds a reference to, or NULL.
 *
 * Context: Does not sleep.
 * Return: @fence.
 */
struct ttm_fence *ttm_fence_get(struct ttm_fence *fence);

/**
 * ttm_fence_put() - drop a reference; the last one frees.
 * @fence: the fence, or NULL.
 *
 * A fence freed before it signalled runs its callbacks with status
 * -ECANCELED (in the calling thread), and its exported descriptors see
 * POLLHUP.
 *
 * Context: Does not sleep. The last put of an unsignalled fence takes and
 * releases its lock and runs its callbacks in the calling thread, with
 * whatever locks the caller holds (the fence's own released).
 */
void ttm_fence_put(struct ttm_fence *fence);

/**
 * ttm_fence_context() - the timeline of @fence.
 * @fence: the fence.
 *
 * Context: Does not sleep.
 * Return: the context given to ttm_fence_create().
 */
uint64_t ttm_fence_context(const struct ttm_fence *fence);

/**
 * ttm_fence_seqno() - the sequence number of @fence on its timeline.
 * @fence: the fence.
 *
 * Context: Does not sleep.
 * Return: the seqno given to ttm_fence_create().
 */
uint64_t ttm_fence_seqno(const struct ttm_fence *fence);

/**
 * ttm_fence_signal() - signal @fence.
 * @fence: the fence; the caller holds a reference.
 * @error: 0, or a negative errno such as -EIO, -ETIMEDOUT, -ECANCELED.
 *
 * Runs the callbacks, then wakes the waiters.
 *
 * Context: Does not sleep itself, but runs the callbacks in the calling
 * thread with the fence's lock released, so they may take locks of their
 * own and use other fences; they run under whatever locks the caller
 * holds. Takes and releases the fence's lock. Any thread.
 * Return: 0, or -EINVAL if @fence was already signalled (nothing changes)
 * or @error is not a negative errno.
 */
int ttm_fence_signal(struct ttm_fence *fence, int error);

/**
 * ttm_fence_is_signaled() - whether @fence has signalled.
 * @fence: the fence.
 *
 * Context: Does not sleep. Takes no lock.
 * Return: true once @fence has signalled.
 */
bool ttm_fence_is_signaled(const struct ttm_fence *fence);

/**
 * ttm_fence_get_status() - the state of @fence.
 * @fence: the fence.
 *
 * Context: Does not sleep. Takes no lock.
 * Return: 0 while pending, 1 if signalled without error, the negative error
 * if signalled with one.
 */
int ttm_fence_get_status(const struct ttm_fence *fence);

/**
 * ttm_fence_wait() - sleep until @fence signals.
 * @fence: the fence; the caller holds a reference.
 * @interruptible: ttm_interrupt_thread() ends the wait with -EINTR.
 * @timeout_ns: how long at most; negative: forever; 0: just test.
 *
 * A timeout of 0 only tests: it never returns -EINTR nor consumes an
 * interrupt. A non-interruptible wait leaves an interrupt pending.
 *
 * Context: May sleep unless @timeout_ns is 0; interruptibly with
 * @interruptible. Takes and releases the fence's lock.
 * Return: 0 once signalled (with or without an error: read it with
 * ttm_fence_get_status()), -ETIME if the timeout passed first, -EINTR;
 * -EINVAL if the ww debug checker's handler refused a wait inside a
 * fence-signalling section (ttm_fence_begin_signalling()).
 */
int ttm_fence_wait(struct ttm_fence *fence, bool interruptible,
		   int64_t timeout_ns);

/**
 * ttm_fence_add_callback() - have @func(@fence, @cb) called when @fence
 * signals.
 * @fence: the fence.
 * @cb: a node of the caller's, unused until @func runs or is removed.
 * @func: the callback.
 *
 * Context: Does not sleep; @func never runs in this call. Takes and
 * releases the fence's lock.
 * Return: 0; -ENOENT if @fence has already signalled (as in the kernel:
 * @func is then never called).
 */
int ttm_fence_add_callback(struct ttm_fence *fence, struct ttm_fence_cb *cb,
			   ttm_fence_func_t *func);

/**
 * ttm_fence_remove_callback() - cancel a callback added to @fence.
 * @fence: the fence.
 * @cb: the node given to ttm_fence_add_callback().
 *
 * A remove that races with a signal returns false only once the callbacks
 * have finished, so @cb may be freed at once; from one of @fence's own
 * callbacks it returns false at once, and the callback removed still runs.
 *
 * Context: May sleep: a remove that races with a signal waits (yielding)
 * for the signalling thread's callbacks. Takes and releases the fence's
 * lock.
 * Return: true if it was removed and will not run; false if it has run
 * (or was never added).
 */
bool ttm_fence_remove_callback(struct ttm_fence *fence,
			       struct ttm_fence_cb *cb);

/**
 * ttm_fence_export_fd() - a file descriptor for @fence, like a sync_file.
 * @fence: the fence.
 *
 * The read end of a pipe, close-on-exec: it becomes readable (POLLIN) when
 * the fence signals, so poll() and libdrm's sync_wait() work on it. Every
 * export returns a new descriptor (all on one pipe per fence); close each.
 * The descriptor does not keep @fence alive, but once @fence has signalled
 * it stays readable and ttm_fence_import_fd() still reads its status.
 *
 * The status is the number of bytes in the pipe, 1 - error (1: success;
 * 6: -EIO), which FIONREAD reads without consuming them; do not read()
 * the descriptor. A pipe rather than an eventfd for that reason: an
 * eventfd's value can only be read by resetting it. A fence freed without
 * signalling closes the pipe's write end: POLLHUP, no bytes.
 *
 * Context: Does not sleep. Takes and releases the fence's lock and the
 * registry lock of exported fences.
 * Return: the descriptor, or a negative errno (-EMFILE, -ENOMEM).
 */
int ttm_fence_export_fd(struct ttm_fence *fence);

/**
 * ttm_fence_import_fd() - the fence behind a descriptor from
 * ttm_fence_export_fd().
 * @fd: the descriptor; it stays the caller's.
 * @ret_fence: the fence.
 *
 * Context: Does not sleep. Takes and releases the registry lock of
 * exported fences.
 * Return: 0 and a new reference in *@ret_fence: the same fence while it
 * lives; after it is gone, a new signalled fence with its status
 * (-ECANCELED if it was freed unsignalled). -EINVAL if @fd is not such a
 * descriptor.
 */
int ttm_fence_import_fd(int fd, struct ttm_fence **ret_fence);

/**
 * ttm_fence_merge() - a fence that signals once both @a and @b have.
 * @a: the first fence.
 * @b: the second fence.
 * @ret_fence: the merged fence, with a reference for the caller.
 *
 * The merged fence fails with the first error of the two (@a's if both
 * failed). It holds no reference on @a and @b: one freed unsignalled
 * counts as failed with -ECANCELED.
 *
 * Context: Does not sleep. Takes and releases the locks of @a and @b.
 * Return: 0 and *@ret_fence, or -ENOMEM.
 */
int ttm_fence_merge(struct ttm_fence *a, struct ttm_fence *b,
		    struct ttm_fence **ret_fence);

/**
 * ttm_fence_begin_signalling() - open a fence-signalling section.
 *
 * A fence-signalling section is code that must run to its end before
 * some fence can signal: a fence's callbacks, a GPU retiring a job, a
 * driver's own completion path. Whoever waits for that fence may hold
 * reservations or ww_mutexes, or wait for them, so the section must not
 * wait for any of those, nor for fences, nor for room for memory: it
 * could be waiting for itself. ttmsim annotates its own sections (every
 * fence callback, and the GPU's retire hook and job fence signal); a
 * driver annotates its own signalling paths with this call and
 * ttm_fence_end_signalling().
 *
 * Inside a section, as in the kernel's "may be called from atomic
 * context", a thread may:
 *
 * - signal fences, add and remove callbacks, take and drop fence
 *   references, test fences (ttm_fence_is_signaled(), ttm_fence_wait()
 *   and ttm_resv_wait() with a zero timeout);
 * - try-lock: ww_mutex_trylock(), ttm_bo_reserve() with @no_wait;
 * - take its own short non-ww locks (pthread mutexes) that no fence
 *   waiter holds while waiting, malloc() and free(), submit GPU jobs,
 *   and queue work for another thread, which may then block.
 *
 * It must not:
 *
 * - take a ww_mutex blocking (ww_mutex_lock() and its interruptible and
 *   slow forms), nor reserve a buffer blocking (ttm_bo_reserve() without
 *   @no_wait, ttm_bo_reserve_slowpath(), the ttm_exec helpers);
 * - wait for a fence or a reservation's fences (ttm_fence_wait(),
 *   ttm_resv_wait() with a non-zero timeout; ttm_bo_read() and
 *   ttm_bo_write(), which wait), or for the device's destroy worker
 *   (ttm_device_flush_destroys());
 * - allocate in a way that may wait: ttm_bo_create(),
 *   ttm_bo_create_fourcc(), ttm_bo_init_reserved(), ttm_bo_validate(),
 *   which may evict and wait for fences and reservations to make room.
 *
 * With the ww debug checker on (ttmsim/ww_debug.h), each of those is
 * reported at the call (rule 13), whether or not it would have blocked
 * this time, and refused with -EINVAL if a handler returns. Sections nest
 * and are per thread.
 *
 * Context: Does not sleep. Any thread. One load and a branch with the
 * checker off; with libttmsim built without it (-Dww_debug=false), no
 * more than the call.
 * Return: the cookie to pass to ttm_fence_end_signalling(); 0 when the
 * checker did not count the section (it was off).
 */
unsigned int ttm_fence_begin_signalling(void);

/**
 * ttm_fence_end_signalling() - close a fence-signalling section.
 * @cookie: what its ttm_fence_begin_signalling() returned.
 *
 * Sections close innermost first, in the thread that opened them. A
 * cookie that is not the innermost open section's is reported by the
 * checker (rule 13, signalling-unbalanced); the section it names is still
 * closed, with any left open inside it.
 *
 * Context: Does not sleep. The thread that opened the section.
 */
void ttm_fence_end_signalling(unsigned int cookie);

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_FENCE_H */
