/* SPDX-License-Identifier: MIT */
/*
 * Syncobjs, modelled on the kernel's drm_syncobj: a container for a fence
 * that can be replaced, named by a handle in a client's table and shared
 * between clients as a file descriptor.
 *
 * A (binary) syncobj holds one fence or none. Signalling it puts the stub
 * fence in (ttm_fence_get_stub()), resetting it empties it, and a job
 * submitted with it as an out-syncobj (struct ttm_execbuf_args) puts the
 * job's fence in. A wait samples the fence each syncobj holds when the
 * wait starts; with TTM_SYNCOBJ_WAIT_FOR_SUBMIT, an empty syncobj is
 * waited on until a fence is put in, and then that fence.
 *
 * Syncobj handles are a namespace of their own in each client, separate
 * from its buffer handles, as the kernel keeps a syncobj table per DRM
 * file beside the GEM one: handle 1 may name a buffer and a syncobj.
 *
 *	// Client a's jobs signal a syncobj that client b waits for. The
 *	// caller closes *ret_fd (the syncobj lives on in both tables).
 *	static int share(struct ttm_client *a, struct ttm_client *b,
 *			 uint32_t *ret_a, uint32_t *ret_b, int *ret_fd)
 *	{
 *		int ret;
 *
 *		ret = ttm_client_syncobj_create(a, 0, ret_a);
 *		if (ret == 0)
 *			ret = ttm_client_syncobj_export_fd(a, *ret_a, ret_fd);
 *		if (ret == 0)
 *			ret = ttm_client_syncobj_import_fd(b, *ret_fd, ret_b);
 *		return ret;
 *	}
 *
 *	// Then a submits with .out_syncobjs = { { .handle = *ret_a } }
 *	// (struct ttm_execbuf_args), and b waits, before or after that:
 *	//	ttm_client_syncobj_wait(b, &hb, 1,
 *	//				TTM_SYNCOBJ_TIMEOUT_INFINITE,
 *	//				TTM_SYNCOBJ_WAIT_FOR_SUBMIT, NULL);
 *
 * A timeline syncobj holds a chain of points instead (ttm_syncobj_add_point(),
 * ttm_client_syncobj_timeline_signal()): its fence is the newest point's,
 * which signals once every point has; each point signals once its own
 * fence and every earlier point have. Any syncobj is a timeline once a
 * point is added; the binary calls still work on it (point 0: the whole
 * timeline), and a binary signal or reset replaces the whole chain. The
 * chain is a stand-in until the fence containers' (docs/execbuf-design.md,
 * "Syncobjs").
 */
#ifndef TTMSIM_SYNCOBJ_H
#define TTMSIM_SYNCOBJ_H

#include <stdint.h>

#include "ttmsim/fence.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ttm_client;
struct ttm_syncobj;

/* Create flag: start signalled (holding the stub fence). */
#define TTM_SYNCOBJ_CREATE_SIGNALED        (1u << 0)

/* Wait flag: every syncobj must signal, not just one. */
#define TTM_SYNCOBJ_WAIT_ALL               (1u << 0)
/* Wait flag: wait for an empty syncobj to get a fence, then for that. */
#define TTM_SYNCOBJ_WAIT_FOR_SUBMIT        (1u << 1)
/* Timeline wait flag: a point is done once it has a fence, signalled or
 * not (and waited for until it has one). */
#define TTM_SYNCOBJ_WAIT_AVAILABLE         (1u << 2)

/* Query flag: the last point submitted rather than signalled. */
#define TTM_SYNCOBJ_QUERY_LAST_SUBMITTED   (1u << 0)

/* An absolute timeout that never comes (so does any negative one). */
#define TTM_SYNCOBJ_TIMEOUT_INFINITE       INT64_MAX

/* ---- the object ------------------------------------------------------- */

/**
 * ttm_syncobj_create() - a new syncobj holding one reference.
 * @flags: 0 or TTM_SYNCOBJ_CREATE_SIGNALED.
 * @fence: NULL, or a fence to put in (a new reference is taken); wins
 *	over TTM_SYNCOBJ_CREATE_SIGNALED.
 * @ret_syncobj: the new syncobj.
 *
 * Context: Does not sleep. Any thread.
 * Return: 0 and *@ret_syncobj; -EINVAL for unknown @flags; -ENOMEM.
 */
int ttm_syncobj_create(uint32_t flags, struct ttm_fence *fence,
		       struct ttm_syncobj **ret_syncobj);

/**
 * ttm_syncobj_get() - take a reference.
 * @syncobj: a syncobj the caller holds a reference to, or NULL.
 *
 * Context: Does not sleep.
 * Return: @syncobj.
 */
struct ttm_syncobj *ttm_syncobj_get(struct ttm_syncobj *syncobj);

/**
 * ttm_syncobj_put() - drop a reference; the last one frees @syncobj and
 * puts its fence.
 * @syncobj: the syncobj, or NULL.
 *
 * Context: Does not sleep, but the last put puts a fence, as
 * ttm_fence_put(): maybe running callbacks in the calling thread.
 */
void ttm_syncobj_put(struct ttm_syncobj *syncobj);

/**
 * ttm_syncobj_fence_get() - the fence @syncobj holds now.
 * @syncobj: the syncobj.
 *
 * Context: Does not sleep. Takes and releases @syncobj's lock.
 * Return: a new reference to the fence, or NULL if @syncobj is empty.
 */
struct ttm_fence *ttm_syncobj_fence_get(struct ttm_syncobj *syncobj);

/**
 * ttm_syncobj_replace_fence() - put @fence in @syncobj, in place of the
 * one it held.
 * @syncobj: the syncobj.
 * @fence: the new fence (a new reference is taken), or NULL to empty it.
 *
 * Atomic for every reader: each sees the old fence or the new one. Waits
 * with TTM_SYNCOBJ_WAIT_FOR_SUBMIT on an empty @syncobj take @fence.
 *
 * Context: Does not sleep. Takes and releases @syncobj's lock, wakes its
 * waiters, then puts the old fence (as ttm_fence_put()).
 */
void ttm_syncobj_replace_fence(struct ttm_syncobj *syncobj,
			       struct ttm_fence *fence);

/**
 * ttm_syncobj_add_point() - add @point, signalled by @fence, to the
 * timeline of @syncobj.
 * @syncobj: the syncobj.
 * @fence: the point's fence (a new reference is taken).
 * @point: the point, not 0.
 *
 * As the kernel's drm_syncobj_add_point(): the new point becomes the
 * syncobj's fence, after the old one. A point not above the last is still
 * added (the kernel only logs it), but the timeline does not go back: it
 * takes the last point's number, so a wait for any point up to that one
 * waits for everything added so far, and a query does not say more until
 * all of it has signalled.
 *
 * Context: Does not sleep. Allocates; takes and releases @syncobj's lock,
 * wakes its waiters; callbacks may run in the calling thread (@fence's
 * and the previous point's, if signalled).
 * Return: 0; -EINVAL if @point is 0 or @fence NULL; -ENOMEM.
 */
int ttm_syncobj_add_point(struct ttm_syncobj *syncobj,
			  struct ttm_fence *fence, uint64_t point);

/**
 * ttm_syncobj_find_fence() - the fence of @point in @syncobj, now.
 * @syncobj: the syncobj.
 * @point: the point; 0: the syncobj's fence as it is (binary).
 * @ret_fence: the fence.
 *
 * As the kernel's drm_syncobj_find_fence() without flags: a point of a
 * timeline is the chain's node for it, which signals once every point up
 * to it has.
 *
 * Context: Does not sleep. Takes and releases @syncobj's lock.
 * Return: 0 and a new reference in *@ret_fence; -EINVAL if there is none
 * (an empty syncobj, a point not submitted yet, a point of a binary one).
 */
int ttm_syncobj_find_fence(struct ttm_syncobj *syncobj, uint64_t point,
			   struct ttm_fence **ret_fence);

/* ---- handles ---------------------------------------------------------- */

/**
 * ttm_client_syncobj_create() - ttm_syncobj_create() and a handle for it.
 * @client: the client.
 * @flags: 0 or TTM_SYNCOBJ_CREATE_SIGNALED.
 * @ret_handle: the new handle.
 *
 * Syncobj handles are small integers, never 0, the lowest free one first,
 * in a namespace separate from @client's buffer handles.
 *
 * Context: Does not sleep. Takes and releases @client's lock.
 * Return: 0 and *@ret_handle; -EINVAL for unknown @flags; -ENOMEM.
 */
int ttm_client_syncobj_create(struct ttm_client *client, uint32_t flags,
			      uint32_t *ret_handle);

/**
 * ttm_client_syncobj_destroy() - drop @handle and its reference.
 * @client: the client.
 * @handle: the syncobj handle.
 *
 * The syncobj lives on while other handles, descriptors or waits hold it.
 *
 * Context: Does not sleep (but puts the syncobj, as ttm_syncobj_put()).
 * Takes and releases @client's lock.
 * Return: 0, or -EINVAL if @client has no such handle (as the kernel's
 * SYNCOBJ_DESTROY; other calls say -ENOENT).
 */
int ttm_client_syncobj_destroy(struct ttm_client *client, uint32_t handle);

/**
 * ttm_client_syncobj_lookup() - the syncobj of @handle.
 * @client: the client.
 * @handle: the syncobj handle.
 *
 * Context: Does not sleep. Takes and releases @client's lock.
 * Return: a new reference, or NULL if @client has no such handle.
 */
struct ttm_syncobj *ttm_client_syncobj_lookup(struct ttm_client *client,
					      uint32_t handle);

/**
 * ttm_client_syncobj_add() - a new handle of @client for @syncobj.
 * @client: the client.
 * @syncobj: the syncobj; the handle takes a new reference.
 * @ret_handle: the new handle.
 *
 * Every call makes a new handle, even if @client has one for @syncobj
 * already, as the kernel's drm_syncobj_get_handle().
 *
 * Context: Does not sleep. Takes and releases @client's lock.
 * Return: 0 and *@ret_handle, or -ENOMEM.
 */
int ttm_client_syncobj_add(struct ttm_client *client,
			   struct ttm_syncobj *syncobj, uint32_t *ret_handle);

/**
 * ttm_client_syncobj_signal() - signal each syncobj of @handles.
 * @client: the client.
 * @handles: @count syncobj handles.
 * @count: how many; at least 1.
 *
 * Each gets the stub fence (ttm_fence_get_stub()) in place of its own.
 * Every handle is looked up first: on a bad one, nothing changes.
 *
 * Context: Does not sleep (puts the old fences). Takes and releases
 * @client's lock and the syncobjs' locks.
 * Return: 0; -ENOENT for a bad handle; -EINVAL if @count is 0; -ENOMEM.
 */
int ttm_client_syncobj_signal(struct ttm_client *client,
			      const uint32_t *handles, unsigned int count);

/**
 * ttm_client_syncobj_reset() - empty each syncobj of @handles.
 * @client: the client.
 * @handles: @count syncobj handles.
 * @count: how many; at least 1.
 *
 * Every handle is looked up first: on a bad one, nothing changes.
 *
 * Context: Does not sleep (puts the old fences). Takes and releases
 * @client's lock and the syncobjs' locks.
 * Return: 0; -ENOENT for a bad handle; -EINVAL if @count is 0; -ENOMEM.
 */
int ttm_client_syncobj_reset(struct ttm_client *client,
			     const uint32_t *handles, unsigned int count);

/**
 * ttm_client_syncobj_wait() - sleep until one or all of the syncobjs of
 * @handles signal.
 * @client: the client.
 * @handles: @count syncobj handles.
 * @count: how many; at least 1.
 * @abs_timeout_ns: when to give up, an absolute CLOCK_MONOTONIC time in
 *	ns, as the kernel's ioctl; 0 or any past time: just test; negative
 *	or TTM_SYNCOBJ_TIMEOUT_INFINITE: never.
 * @flags: TTM_SYNCOBJ_WAIT_ALL, TTM_SYNCOBJ_WAIT_FOR_SUBMIT (not
 *	_AVAILABLE: that is for ttm_client_syncobj_timeline_wait()).
 * @ret_first: NULL, or (a wait for any) the index in @handles of the first
 *	syncobj found signalled, the lowest if several; not written by a
 *	wait for all.
 *
 * Each syncobj's fence is taken when the wait starts: a later replace or
 * reset does not change what this wait waits for. Without
 * TTM_SYNCOBJ_WAIT_FOR_SUBMIT an empty syncobj is an error, even in a
 * wait for any of which another has signalled; with it, the wait takes
 * the first fence put in. A fence that signalled with an error counts as
 * signalled. The wait is interruptible, as the kernel's ioctl:
 * ttm_interrupt_thread() ends it with -EINTR.
 *
 * Context: May sleep unless the deadline is 0 (a deadline already past
 * does not sleep either, but the debug checker's rule 13 counts any
 * other than 0 as a wait). Takes and releases
 * @client's lock and the syncobjs' and fences' locks. Allocates.
 * Return: 0 (and *@ret_first); -ETIME if the timeout came first; -EINVAL
 * for an empty syncobj without TTM_SYNCOBJ_WAIT_FOR_SUBMIT, unknown
 * @flags or a @count of 0; -ENOENT for a bad handle; -EINTR; -ENOMEM.
 */
int ttm_client_syncobj_wait(struct ttm_client *client,
			    const uint32_t *handles, unsigned int count,
			    int64_t abs_timeout_ns, uint32_t flags,
			    unsigned int *ret_first);

/**
 * ttm_client_syncobj_query() - the point each syncobj of @handles has
 * reached.
 * @client: the client.
 * @handles: @count syncobj handles.
 * @ret_points: @count points, written on success.
 * @count: how many; at least 1.
 * @flags: 0 (the last point signalled) or
 *	TTM_SYNCOBJ_QUERY_LAST_SUBMITTED.
 *
 * The last point signalled is the highest with every point up to it
 * signalled (after a point added out of order, the kernel's quirk: 0
 * until all has signalled). A binary syncobj has no points: 0, as the
 * kernel says for one.
 *
 * Context: Does not sleep. Takes and releases @client's lock and the
 * syncobjs' locks.
 * Return: 0; -ENOENT for a bad handle; -EINVAL for unknown @flags or a
 * @count of 0; -ENOMEM.
 */
int ttm_client_syncobj_query(struct ttm_client *client,
			     const uint32_t *handles, uint64_t *ret_points,
			     unsigned int count, uint32_t flags);

/**
 * ttm_client_syncobj_export_fd() - a descriptor naming the syncobj of
 * @handle, which any client imports to the same syncobj (the kernel's
 * HANDLE_TO_FD).
 * @client: the client.
 * @handle: the syncobj handle.
 * @ret_fd: the new descriptor, close-on-exec.
 *
 * The descriptor holds a reference to the syncobj, dropped lazily after
 * it and every dup of it are closed, as a buffer's descriptor (see
 * ttm_client_export_fd()). It is not pollable: a fence's descriptor is
 * ttm_client_syncobj_export_sync_file().
 *
 * Context: Does not sleep. Takes and releases @client's lock and the
 * PRIME registry lock.
 * Return: 0 and *@ret_fd; -ENOENT for a bad handle; -EMFILE, -ENFILE,
 * -ENOMEM.
 */
int ttm_client_syncobj_export_fd(struct ttm_client *client, uint32_t handle,
				 int *ret_fd);

/**
 * ttm_client_syncobj_import_fd() - a new handle of @client for the syncobj
 * @fd names (the kernel's FD_TO_HANDLE).
 * @client: the client.
 * @fd: from ttm_client_syncobj_export_fd(); it stays the caller's.
 * @ret_handle: the new handle.
 *
 * Each import makes a new handle, even in a client that has one for that
 * syncobj (unlike a buffer's import), as the kernel.
 *
 * Context: Does not sleep. Takes and releases the PRIME registry lock and
 * @client's lock.
 * Return: 0 and *@ret_handle; -EINVAL if @fd is not a descriptor from
 * ttm_client_syncobj_export_fd(); -ENOMEM.
 */
int ttm_client_syncobj_import_fd(struct ttm_client *client, int fd,
				 uint32_t *ret_handle);

/**
 * ttm_client_syncobj_export_sync_file() - the fence of the syncobj of
 * @handle as a sync-file descriptor (the kernel's HANDLE_TO_FD with
 * EXPORT_SYNC_FILE).
 * @client: the client.
 * @handle: the syncobj handle.
 * @ret_fd: the descriptor, from ttm_fence_export_fd().
 *
 * Context: Does not sleep. Takes and releases @client's lock, the
 * syncobj's lock, and the locks of ttm_fence_export_fd().
 * Return: 0 and *@ret_fd; -ENOENT for a bad handle; -EINVAL if the
 * syncobj is empty; as ttm_fence_export_fd().
 */
int ttm_client_syncobj_export_sync_file(struct ttm_client *client,
					uint32_t handle, int *ret_fd);

/**
 * ttm_client_syncobj_import_sync_file() - put the fence of a sync-file
 * descriptor in the syncobj of @handle (the kernel's FD_TO_HANDLE with
 * IMPORT_SYNC_FILE).
 * @client: the client.
 * @handle: the syncobj handle, which must exist.
 * @fd: from ttm_fence_export_fd(); it stays the caller's.
 *
 * Context: Does not sleep. As ttm_fence_import_fd() and
 * ttm_syncobj_replace_fence(); takes and releases @client's lock.
 * Return: 0; -ENOENT for a bad handle; -EINVAL if @fd is not a fence's
 * descriptor.
 */
int ttm_client_syncobj_import_sync_file(struct ttm_client *client,
					uint32_t handle, int fd);

/**
 * ttm_client_syncobj_timeline_signal() - signal @points of the syncobjs of
 * @handles.
 * @client: the client.
 * @handles: @count syncobj handles.
 * @points: @count points: each adds that point, signalled (the stub
 *	fence), as ttm_syncobj_add_point(); 0 signals the syncobj as
 *	ttm_client_syncobj_signal().
 * @count: how many; at least 1.
 *
 * Every handle is looked up and every point allocated first: on a
 * failure, nothing changes.
 *
 * Context: Does not sleep. As ttm_syncobj_add_point().
 * Return: 0; -ENOENT for a bad handle; -EINVAL if @count is 0; -ENOMEM.
 */
int ttm_client_syncobj_timeline_signal(struct ttm_client *client,
				       const uint32_t *handles,
				       const uint64_t *points,
				       unsigned int count);

/**
 * ttm_client_syncobj_timeline_wait() - ttm_client_syncobj_wait() for a
 * point of each syncobj.
 * @client: the client.
 * @handles: @count syncobj handles.
 * @points: @count points (0: the syncobj's fence as it is).
 * @count: how many; at least 1.
 * @abs_timeout_ns: as for ttm_client_syncobj_wait().
 * @flags: TTM_SYNCOBJ_WAIT_ALL, TTM_SYNCOBJ_WAIT_FOR_SUBMIT,
 *	TTM_SYNCOBJ_WAIT_AVAILABLE.
 * @ret_first: as for ttm_client_syncobj_wait().
 *
 * A point not submitted yet is -EINVAL, unless TTM_SYNCOBJ_WAIT_FOR_SUBMIT
 * or TTM_SYNCOBJ_WAIT_AVAILABLE: then it is waited for until a point at
 * least as high is added, and, with WAIT_AVAILABLE, that is the end of it
 * (the point need not signal).
 *
 * Context: May sleep unless the deadline is 0. As
 * ttm_client_syncobj_wait().
 * Return: as ttm_client_syncobj_wait(); -EINVAL also for a NULL @points.
 */
int ttm_client_syncobj_timeline_wait(struct ttm_client *client,
				     const uint32_t *handles,
				     const uint64_t *points,
				     unsigned int count,
				     int64_t abs_timeout_ns, uint32_t flags,
				     unsigned int *ret_first);

/**
 * ttm_client_syncobj_transfer() - put the fence of a point of one syncobj
 * into a point of another, or of a binary one (the kernel's
 * SYNCOBJ_TRANSFER).
 * @client: the client.
 * @dst_handle: the syncobj that gets the fence.
 * @dst_point: its point (as ttm_syncobj_add_point()); 0: the fence
 *	replaces the syncobj's, as a binary one.
 * @src_handle: the syncobj whose fence is taken.
 * @src_point: its point; 0: its fence as it is.
 * @flags: 0 or TTM_SYNCOBJ_WAIT_FOR_SUBMIT: wait (interruptibly) until the
 *	source point has a fence, instead of -EINVAL.
 *
 * A source point that has signalled and been passed gives the node that
 * stands for it, signalled too.
 *
 * Context: May sleep with TTM_SYNCOBJ_WAIT_FOR_SUBMIT; else does not.
 * Takes and releases @client's lock and the syncobjs' locks.
 * Return: 0; -ENOENT for a bad handle; -EINVAL for unknown @flags or a
 * source point with no fence; -EINTR; -ENOMEM.
 */
int ttm_client_syncobj_transfer(struct ttm_client *client,
				uint32_t dst_handle, uint64_t dst_point,
				uint32_t src_handle, uint64_t src_point,
				uint32_t flags);

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_SYNCOBJ_H */
