/* SPDX-License-Identifier: MIT */
/*
 * The execbuf submitter: clients with GEM-like handles, PRIME-like
 * sharing, and ttm_execbuf_submit(), which locks an arbitrary, user-ordered
 * list of buffers with the wound/wait protocol, validates them, builds the
 * job's implicit-sync dependencies and hands it to the fake GPU, through
 * the client's scheduler entity of the engine (ttm_client_set_priority()).
 *
 *	static int submit_one(struct ttm_device *dev,
 *			      struct ttm_fence **ret_fence)
 *	{
 *		static const struct ttm_placement vram_gtt =
 *			TTM_PLACEMENT_VRAM_GTT_INIT;
 *		struct ttm_client *client;
 *		uint32_t a, b;
 *		int ret;
 *
 *		ret = ttm_client_open(dev, &client);
 *		if (ret)
 *			return ret;
 *		ret = ttm_client_bo_create(client, 4096, &vram_gtt, 0, &a);
 *		if (ret == 0)
 *			ret = ttm_client_bo_create(client, 4096, &vram_gtt,
 *						   0, &b);
 *		if (ret == 0) {
 *			struct ttm_execbuf_bo list[] = {
 *				{ .handle = b, .flags = TTM_EXECBUF_BO_WRITE },
 *				{ .handle = a, .flags = TTM_EXECBUF_BO_READ },
 *			};
 *			struct ttm_execbuf_args args = {
 *				.bos = list, .n_bos = 2,
 *				.op = TTM_GPU_OP_ADD, .add_value = 1,
 *			};
 *
 *			ret = ttm_execbuf_submit(client, &args);
 *			// args.out_fence signals when the job has run.
 *			if (ret == 0)
 *				*ret_fence = args.out_fence;
 *		}
 *		// Jobs in flight keep their buffers alive.
 *		ttm_client_close(client);
 *		return ret;
 *	}
 *
 * A client is the analog of a DRM file: its handles mean nothing to
 * another client. Every call on a client is thread-safe, but a client is
 * meant to be used by one submitting thread, as a DRM file by one process.
 */
#ifndef TTMSIM_EXECBUF_H
#define TTMSIM_EXECBUF_H

#include <stdbool.h>
#include <stdint.h>

#include "ttmsim/bo.h"
#include "ttmsim/fence.h"
#include "ttmsim/gpu.h"
#include "ttmsim/sched.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ttm_client;

/* ---- clients and handles --------------------------------------------- */

/**
 * ttm_client_open() - a new client of @dev, with an empty handle table.
 * @dev: the device; it must have a GPU (struct ttm_device_options::gpu):
 *	jobs run there.
 * @ret_client: the new client.
 *
 * Context: Does not sleep. The first client of @dev takes and releases
 * the device lock, attaching execbuf's per-device state (in a slot of its
 * own: ttm_device_set_private() stays the driver's).
 * Return: 0 and *@ret_client; -EINVAL if @dev has no GPU; -ENOMEM.
 */
int ttm_client_open(struct ttm_device *dev, struct ttm_client **ret_client);

/**
 * ttm_client_close() - release every handle of @client and free it.
 * @client: the client, or NULL.
 *
 * Buffers stay alive while other clients, PRIME fds or jobs in flight use
 * them. The client's jobs still queued in the scheduler (waiting for
 * their dependencies or for room on the ring) get up to one second to
 * reach the ring, as at a DRM file's close; those still queued then are
 * killed: they never run, and their fences signal -ESRCH. On a
 * deterministic GPU that second is virtual: the close lets the shared
 * virtual clock run (up to a second, event by event, as ttm_gpu_advance()
 * does) until the client's queue has reached the ring, so other clients'
 * jobs due meanwhile run too.
 *
 * Context: May sleep: waits for the client's queued jobs, up to a second.
 * Puts buffers, as ttm_bo_put(). Takes and releases the PRIME registry
 * lock, and on a deterministic GPU its advance lock: not from a fence
 * callback, the GPU's retire hook or a scheduler op. No call on @client
 * may be running.
 */
void ttm_client_close(struct ttm_client *client);

/**
 * ttm_client_set_priority() - the priority of @client's jobs.
 * @client: the client.
 * @priority: one of enum ttm_sched_priority; TTM_SCHED_PRIORITY_NORMAL
 *	until this is called.
 *
 * A client's jobs go through one scheduler entity per engine (made on
 * its first submission there) on the device's scheduler of that engine;
 * ready jobs of higher-priority entities run first. The change applies
 * to the jobs already queued too (the kernel's
 * drm_sched_entity_set_priority()). TTM_SCHED_PRIORITY_KERNEL is the
 * device's own (its moves): a client may take it, as a privileged DRM
 * file may.
 *
 * Context: Does not sleep for long: may wait for the scheduler to finish
 * looking at an entity's next job. Takes and releases @client's lock and
 * the schedulers'.
 * Return: 0; -EINVAL for a bad priority.
 */
int ttm_client_set_priority(struct ttm_client *client,
			    enum ttm_sched_priority priority);

/**
 * ttm_client_device() - the device @client was opened on.
 * @client: the client.
 *
 * Context: Does not sleep.
 * Return: the device.
 */
struct ttm_device *ttm_client_device(const struct ttm_client *client);

/**
 * ttm_client_bo_create() - ttm_bo_create() and a handle for the new buffer.
 * @client: the client.
 * @size: as for ttm_bo_create().
 * @placement: as for ttm_bo_create().
 * @flags: as for ttm_bo_create().
 * @ret_handle: the new handle.
 *
 * Handles are small integers, never 0, the lowest free one first, and
 * reused only after ttm_client_bo_close(), as GEM's.
 *
 * Context: May sleep, as ttm_bo_create(). Takes and releases @client's
 * lock.
 * Return: 0 and *@ret_handle; as ttm_bo_create(); -ENOMEM.
 */
int ttm_client_bo_create(struct ttm_client *client, uint64_t size,
			 const struct ttm_placement *placement, uint32_t flags,
			 uint32_t *ret_handle);

/**
 * ttm_client_bo_create_fourcc() - ttm_bo_create_fourcc() and a handle for
 * the new buffer.
 * @client: the client.
 * @width: as for ttm_bo_create_fourcc().
 * @height: as for ttm_bo_create_fourcc().
 * @fourcc: as for ttm_bo_create_fourcc().
 * @placement: as for ttm_bo_create_fourcc().
 * @flags: as for ttm_bo_create_fourcc().
 * @ret_handle: the new handle.
 *
 * Context: May sleep, as ttm_bo_create(). Takes and releases @client's
 * lock.
 * Return: as ttm_client_bo_create() and ttm_bo_create_fourcc().
 */
int ttm_client_bo_create_fourcc(struct ttm_client *client, uint32_t width,
				uint32_t height, uint32_t fourcc,
				const struct ttm_placement *placement,
				uint32_t flags, uint32_t *ret_handle);

/**
 * ttm_client_bo_add() - a handle of @client for @bo (a new reference).
 * @client: the client.
 * @bo: the buffer.
 * @ret_handle: the handle.
 * @ret_new: NULL, or set to whether the handle is new.
 *
 * If @client already has a handle for @bo, that one, and no new
 * reference (as GEM does): *@ret_new is false, and one
 * ttm_client_bo_close() still drops the handle. True means this call made
 * it: a driver keeping a GEM-style count of the handles of its buffers
 * adds one for each true and takes one off for each close. Of two racing
 * calls for one buffer and client, exactly one gets true.
 *
 * Context: Does not sleep. Takes and releases @client's lock.
 * Return: 0, *@ret_handle and *@ret_new; -EINVAL if @bo is of another
 * device or a kernel buffer (TTM_BO_TYPE_KERNEL); -ENOMEM. Neither is
 * written on failure.
 */
int ttm_client_bo_add(struct ttm_client *client, struct ttm_bo *bo,
		      uint32_t *ret_handle, bool *ret_new);

/**
 * ttm_client_bo_close() - drop @handle (and its reference to the buffer).
 * @client: the client.
 * @handle: the handle.
 *
 * Context: Does not sleep (but puts the buffer, as ttm_bo_put()). Takes
 * and releases @client's lock.
 * Return: 0, or -ENOENT if @client has no such handle.
 */
int ttm_client_bo_close(struct ttm_client *client, uint32_t handle);

/**
 * ttm_client_lookup() - the buffer of @handle.
 * @client: the client.
 * @handle: the handle.
 *
 * Context: Does not sleep. Takes and releases @client's lock.
 * Return: the buffer, with a new reference the caller puts with
 * ttm_bo_put(); NULL if @client has no such handle.
 */
struct ttm_bo *ttm_client_lookup(struct ttm_client *client, uint32_t handle);

/**
 * ttm_client_export_fd() - a file descriptor naming the buffer of @handle,
 * which any client may import (PRIME's handle-to-fd).
 * @client: the client.
 * @handle: the handle.
 * @ret_fd: the new descriptor.
 *
 * The descriptor holds a reference to the buffer until it, and every dup
 * of it (in any process), is closed. ttmsim notices that lazily, at the
 * next ttm_client_export_fd(), ttm_client_import_fd() or ttm_client_close()
 * of any client: the buffer outlives the last close until then. So close
 * the descriptors before the device's last client, if the device is to be
 * destroyed (ttm_device_destroy() wants every buffer put). Each call makes
 * a new descriptor, even for a buffer exported before. Close-on-exec. A
 * buffer imported from another device (TTM_BO_TYPE_SG) exports its
 * exporter's buffer, as the kernel re-exports an import's dma-buf.
 *
 * Context: Does not sleep. Takes and releases @client's lock and the
 * PRIME registry lock.
 * Return: 0 and *@ret_fd; -ENOENT for a bad handle; -EMFILE, -ENFILE,
 * -ENOMEM.
 */
int ttm_client_export_fd(struct ttm_client *client, uint32_t handle,
			 int *ret_fd);

/**
 * ttm_client_import_fd() - a handle of @client for the buffer @fd names
 * (PRIME's fd-to-handle).
 * @client: the client.
 * @fd: from ttm_client_export_fd(); it stays the caller's.
 * @ret_handle: the handle: the one @client already has for that buffer if
 *	any.
 * @ret_new: NULL, or set to whether the handle is new, as for
 *	ttm_client_bo_add().
 *
 * A buffer of @client's device is the buffer itself. A buffer of another
 * device is seen through @client's device's import of it (ttm_bo_import():
 * the exporter's reservation and pages, shared), the same import for
 * every client of the device while it lives.
 *
 * Context: Does not sleep. Takes and releases the PRIME registry lock,
 * the import lock and @client's device's lock (ttm_bo_import()), and
 * @client's lock.
 * Return: 0, *@ret_handle and *@ret_new; -EBADF if @fd is not a
 * descriptor from ttm_client_export_fd(); -EXDEV if the buffer's device
 * has a reservation class other than @client's device's (a Wound-Wait
 * device's own, see struct ttm_device_options); -ENOMEM. Neither is
 * written on failure.
 */
int ttm_client_import_fd(struct ttm_client *client, int fd,
			 uint32_t *ret_handle, bool *ret_new);

/* ---- submission ------------------------------------------------------- */

/* struct ttm_execbuf_bo::flags: the job reads the buffer. */
#define TTM_EXECBUF_BO_READ  (1u << 0)
/* struct ttm_execbuf_bo::flags: the job writes the buffer. */
#define TTM_EXECBUF_BO_WRITE (1u << 1)

/**
 * struct ttm_execbuf_bo - one entry of a job's buffer list.
 * @handle: the buffer's handle.
 * @flags: TTM_EXECBUF_BO_READ and/or _WRITE (at least one).
 * @placement: where the job needs it; NULL: the buffer's own placement.
 */
struct ttm_execbuf_bo {
	uint32_t handle;
	uint32_t flags;
	const struct ttm_placement *placement;
};

/**
 * struct ttm_execbuf_syncobj - a syncobj a job waits for or signals
 *	(ttmsim/syncobj.h), as amdgpu's syncobj chunks and i915's fence
 *	array.
 * @handle: the syncobj handle, of the submitting client.
 * @flags: 0; reserved.
 * @point: 0: the syncobj's fence as it is (binary); else a point of its
 *	timeline: an in-syncobj's must have been submitted (-EINVAL if
 *	not), an out-syncobj's is added (ttm_syncobj_add_point()).
 */
struct ttm_execbuf_syncobj {
	uint32_t handle;
	uint32_t flags;
	uint64_t point;
};

/* struct ttm_execbuf_args::flags: a buffer listed twice is used once. */
#define TTM_EXECBUF_ALLOW_DUPLICATES (1u << 0)
/* ... waits may be interrupted (ttm_interrupt_thread(): -EINTR). */
#define TTM_EXECBUF_INTERRUPTIBLE    (1u << 1)
/* ... also export the out-fence as a descriptor (out_fence_fd). */
#define TTM_EXECBUF_FENCE_FD_OUT     (1u << 2)
/* ... the job hangs: the GPU's watchdog fails it with -ETIMEDOUT. */
#define TTM_EXECBUF_HANG             (1u << 3)

/**
 * struct ttm_execbuf_args - the arguments and results of
 * ttm_execbuf_submit().
 * @engine: in: the GPU engine to run the job on.
 * @bos: in: the buffers, in the user's order, any order.
 * @n_bos: in: 1 to TTM_EXECBUF_MAX_BOS.
 * @op: in: NOP, ADD (to every buffer written), or COPY: exactly two
 *	distinct buffers of one size, bos[0] the source (READ only), bos[1]
 *	the destination (WRITE); else -EINVAL.
 * @add_value: in: for TTM_GPU_OP_ADD.
 * @duration_us: in: how long the job runs, at most
 *	TTM_GPU_MAX_DURATION_US; else -EINVAL.
 * @in_fences: in: explicit in-fences: the job fails with their error
 *	without running if one of them failed.
 * @n_in_fences: in: the number of @in_fences.
 * @in_fence_fds: in: explicit in-fences from ttm_fence_export_fd(), as
 *	@in_fences.
 * @n_in_fence_fds: in: the number of @in_fence_fds.
 * @in_syncobjs: in: syncobjs whose fences (taken at the call) the job
 *	waits for, as @in_fences; an empty one is -EINVAL, as the kernel's
 *	drivers say when they find no fence.
 * @n_in_syncobjs: in: the number of @in_syncobjs.
 * @out_syncobjs: in: syncobjs that get the job's fence once it is
 *	submitted, in place of theirs (ttm_syncobj_replace_fence()) or at
 *	their point.
 * @n_out_syncobjs: in: the number of @out_syncobjs.
 * @flags: in: TTM_EXECBUF_*.
 * @tag: in: passed to the GPU's retire hook.
 * @out_fence: out: a reference for the caller.
 * @out_fence_fd: out: with FENCE_FD_OUT; else -1.
 * @bad_index: out: what an error is about: an entry of bos[] (0 to
 *	n_bos - 1), or of in_fences[] (from n_bos), then in_fence_fds[]
 *	(from n_bos + n_in_fences), then in_syncobjs[] (from n_bos +
 *	n_in_fences + n_in_fence_fds), then out_syncobjs[] (after
 *	those); -1: none.
 */
struct ttm_execbuf_args {
	/* In. */
	unsigned int engine;
	const struct ttm_execbuf_bo *bos;
	unsigned int n_bos;
	enum ttm_gpu_op op;
	uint32_t add_value;
	uint64_t duration_us;
	struct ttm_fence *const *in_fences;
	unsigned int n_in_fences;
	const int *in_fence_fds;
	unsigned int n_in_fence_fds;
	const struct ttm_execbuf_syncobj *in_syncobjs;
	unsigned int n_in_syncobjs;
	const struct ttm_execbuf_syncobj *out_syncobjs;
	unsigned int n_out_syncobjs;
	uint32_t flags;
	uint64_t tag;

	/* Out. */
	struct ttm_fence *out_fence;
	int out_fence_fd;
	int bad_index;
};

/* At most this many buffers per job. */
#define TTM_EXECBUF_MAX_BOS 4096u

/**
 * ttm_execbuf_submit() - lock, validate, fence and submit one job.
 * @client: the client whose handles @args names.
 * @args: in and out.
 *
 * 1. Looks up every handle; a buffer listed twice (by any handles) is
 *    -EINVAL unless TTM_EXECBUF_ALLOW_DUPLICATES, which uses it once,
 *    written if any entry writes it, placed by its first entry.
 * 2. Locks the buffers in the user's order with one ticket and validates
 *    each into its placement, in one ttm_exec_until_all_locked() loop: on
 *    -EDEADLK, from a lock or from an eviction, everything is unlocked,
 *    the contended buffer is slow-locked and the pass restarts with the
 *    same ticket, so no submission deadlocks and none fails for lack of
 *    room that a back-off would give.
 * 3. Builds the job's dependencies (implicit sync: every job waits for
 *    KERNEL fences, moves; a write also waits for earlier readers and
 *    writers; a read for earlier writers; plus the in-fences and the
 *    in-syncobjs' fences), submits it, adds its fence to every buffer
 *    (WRITE or READ usage) and puts it in every out-syncobj (at its
 *    point), unlocks.
 * On any error nothing is left locked, referenced or half-submitted.
 *
 * Context: May sleep; interruptibly with TTM_EXECBUF_INTERRUPTIBLE. No
 * reservation of @client's device held by the caller (the debug checker
 * reports that). Takes and releases reservations of that device, the
 * device lock, @client's lock and the syncobjs' locks.
 * Return: 0 with @args->out_fence (and out_fence_fd); -ENOENT for a bad
 * handle (buffer or syncobj) and -EINVAL for a duplicate, bad flags,
 * in-fence, in-syncobj without a fence (at its point) or syncobj flag,
 * with @args->bad_index; -EINVAL for a bad engine, op, count or duration;
 * -ENOSPC if the job can never fit (its buffers exceed a domain, or
 * everything else is pinned); -EINTR (interruptible only); -EINVAL with @args->bad_index if
 * a buffer is pinned outside the placement asked for (ttm_bo_validate());
 * -ENOMEM; -EMFILE or -ENFILE (no descriptor for the fence fd: nothing
 * submitted, as for every error).
 */
int ttm_execbuf_submit(struct ttm_client *client,
		       struct ttm_execbuf_args *args);

/* ---- counters and events ---------------------------------------------- */

/* Errno values counted one by one in struct ttm_execbuf_stats. */
#define TTM_EXECBUF_ERRNO_MAX 134

/**
 * struct ttm_execbuf_stats - counters of every submission on a device, over
 * all its clients.
 * @submitted: every ttm_execbuf_submit() call.
 * @rejected: returned an error.
 * @completed: out-fence signalled without error.
 * @failed: out-fence signalled with an error.
 * @in_flight: submitted = rejected + completed + failed + in_flight,
 *	always.
 * @backoffs: -EDEADLK results seen, locks and evictions.
 * @restarts: lock passes restarted.
 * @rejected_by_errno: rejections by errno: rejected_by_errno[EINVAL], ...
 *	(the last entry counts errno values beyond the table).
 */
struct ttm_execbuf_stats {
	uint64_t submitted;
	uint64_t rejected;
	uint64_t completed;
	uint64_t failed;
	uint64_t in_flight;
	uint64_t backoffs;
	uint64_t restarts;
	uint64_t rejected_by_errno[TTM_EXECBUF_ERRNO_MAX + 1];
};

/**
 * ttm_execbuf_get_stats() - a consistent snapshot of @dev's counters.
 * @dev: the device.
 * @stats: filled in: all zero before @dev's first client.
 *
 * Evictions and bytes moved are in ttm_device_get_stats(), out-of-order
 * retirements in ttm_gpu_get_stats().
 *
 * Context: Does not sleep. Takes and releases the lock of @dev's execbuf
 * counters.
 */
void ttm_execbuf_get_stats(struct ttm_device *dev,
			   struct ttm_execbuf_stats *stats);

/**
 * ttm_execbuf_wait_idle() - wait until no job submitted through @dev's
 * clients is in flight (every out-fence signalled and counted).
 * @dev: the device.
 *
 * Context: May sleep, until the jobs retire: with a virtual-clock GPU,
 * another thread must advance it. Takes and releases the lock of @dev's
 * execbuf counters. Not from a fence callback or the retire hook.
 */
void ttm_execbuf_wait_idle(struct ttm_device *dev);

/**
 * enum ttm_execbuf_phase - the phases of a submission, for struct
 * ttm_execbuf_event.
 * @TTM_EXECBUF_PHASE_SUBMIT: the whole call; encloses the others.
 * @TTM_EXECBUF_PHASE_LOOKUP: handles to buffers.
 * @TTM_EXECBUF_PHASE_LOCK: the locking loop, validation in it.
 * @TTM_EXECBUF_PHASE_BACKOFF: from -EDEADLK to the slow lock.
 * @TTM_EXECBUF_PHASE_VALIDATE: one pass' validation.
 * @TTM_EXECBUF_PHASE_QUEUE: dependencies, GPU submit, fences.
 */
enum ttm_execbuf_phase {
	TTM_EXECBUF_PHASE_SUBMIT,
	TTM_EXECBUF_PHASE_LOOKUP,
	TTM_EXECBUF_PHASE_LOCK,
	TTM_EXECBUF_PHASE_BACKOFF,
	TTM_EXECBUF_PHASE_VALIDATE,
	TTM_EXECBUF_PHASE_QUEUE,
};

/**
 * struct ttm_execbuf_event - one phase of one submission.
 * @phase: which phase.
 * @begin_ns: when it began, on CLOCK_MONOTONIC.
 * @end_ns: when it ended, on CLOCK_MONOTONIC.
 * @seqno: the client's submission count, from 1.
 * @result: 0 or the phase's error.
 *
 * Phases of one client nest strictly: SUBMIT holds LOOKUP, LOCK and QUEUE,
 * in that order; LOCK holds the BACKOFF and VALIDATE phases, which do not
 * overlap.
 */
struct ttm_execbuf_event {
	enum ttm_execbuf_phase phase;
	uint64_t begin_ns, end_ns;
	uint64_t seqno;
	int result;
};

/**
 * typedef ttm_execbuf_event_fn - receives the events of a client's
 * submissions.
 * @event: the phase that ended; valid during the call only.
 * @data: as given to ttm_client_set_event_sink().
 *
 * Context: May sleep, though that delays the submission. Runs in the
 * thread that called ttm_execbuf_submit(), inside it, possibly with the
 * job's buffers reserved: it must not reserve buffers of the device or
 * submit on the same client.
 */
typedef void ttm_execbuf_event_fn(const struct ttm_execbuf_event *event,
				  void *data);

/**
 * ttm_client_set_event_sink() - send @client's phase events to @fn.
 * @client: the client.
 * @fn: the sink; NULL: none, the default, which costs nothing.
 * @data: passed to @fn.
 *
 * Context: Does not sleep. Takes and releases @client's lock. Only while no
 * submission of @client runs.
 */
void ttm_client_set_event_sink(struct ttm_client *client,
			       ttm_execbuf_event_fn *fn, void *data);

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_EXECBUF_H */
