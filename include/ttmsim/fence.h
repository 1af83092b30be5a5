/* SPDX-License-Identifier: MIT */
/*
 * Fences: one-shot completion events, modelled on the kernel's dma_fence.
 *
 * A fence belongs to a context (a timeline, from ttm_fence_context_alloc())
 * and has a sequence number on it. It is signalled exactly once, maybe
 * with an error; waiters and callbacks learn of it. Fences are reference
 * counted. ttmsim allocates its own (ttm_fence_create(), the GPU's job
 * fences) from type-stable memory that is never freed; a driver embeds
 * struct ttm_fence in its own object, gives it its ops
 * (struct ttm_fence_ops) with ttm_fence_init(), and gets the object back
 * in its release op after the last reference is gone and a grace period
 * has passed: no thread that found the fence without a reference (a
 * reservation object's lockless reader, ttmsim/resv.h, or anyone inside
 * ttm_fence_read_lock()) can still be looking at it by then.
 *
 * A fence can be exported as a file descriptor, like a sync_file: a pipe
 * whose read end becomes readable (POLLIN) when the fence signals, so
 * libdrm's sync_wait() works on it. See ttm_fence_export_fd().
 */
#ifndef TTMSIM_FENCE_H
#define TTMSIM_FENCE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ttm_fence;
struct ttm_fence_cb;
struct ttm_fence_ops;

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
 * callbacks to and put other fences, and queue work (the full list is at
 * ttm_fence_begin_signalling(); the ww debug checker reports the rest,
 * rule 13). Runs in the signalling thread, or the one that dropped the
 * last reference, holding whatever that thread holds: the fence's own
 * lock is released, but a GPU on the virtual clock signals its job fences
 * with its clock held (ttm_gpu_advance()), and a last put may come from a
 * thread holding reservations. It must not call ttm_gpu_destroy() or
 * ttm_gpu_advance() (ttmsim/gpu.h). A driver fence with a signaled op
 * (struct ttm_fence_ops) is signalled by whichever thread polls it, which
 * may be a reservation's writer or lockless reader in the middle of its
 * walk: so a callback must not read a reservation object either, and must
 * not call ttm_fence_rcu_barrier(). The lock order is in docs/locking.md.
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
 * struct ttm_fence_cb_list - callbacks in the order they were added.
 *
 * The fields are private to ttmsim.
 */
struct ttm_fence_cb_list {
	/* private: */
	struct ttm_fence_cb *head;
	struct ttm_fence_cb **tail;     /* &last->next, or &head */
};

/**
 * struct ttm_fence - a fence, for drivers to embed in their own object.
 *
 * A driver embeds it, initialises it with ttm_fence_init() and finds its
 * object again with container_of() (in its ops, say). The fields are
 * private to ttmsim: read them with ttm_fence_context(),
 * ttm_fence_seqno(), ttm_fence_get_status() and the others. Their layout
 * is part of the ABI (see the README).
 */
struct ttm_fence {
	/* private: */
	uint32_t refcount;      /* atomic; 0: free, or being released */
	int32_t status;         /* atomic: 0 pending, 1 ok, <0 error */
	uint64_t context;
	uint64_t seqno;
	const struct ttm_fence_ops *ops;
	uint32_t flags;         /* atomic: FENCE_F_* of gpu_sim/fence.h */
	int32_t error;          /* ttm_fence_set_error(), under @lock */
	uint64_t timestamp;     /* CLOCK_MONOTONIC ns, once signalled */
	/*
	 * Guards the lists, @error and the pipe; never held while calling
	 * out.
	 */
	pthread_mutex_t lock;
	uint32_t running;       /* atomic: signalling runs the callbacks */
	struct ttm_fence_cb_list cbs;     /* ttm_fence_add_callback() */
	struct ttm_fence_cb_list waiters; /* the waits, after cbs */
	/* The exported pipe, -1 until the first export. */
	int pipe_rd, pipe_wr;
	dev_t pipe_dev;
	ino_t pipe_ino;
	struct ttm_fence *reg_next;     /* registry bucket */
	/* A driver fence waiting for its grace period. */
	struct ttm_fence *rcu_next;
	uint64_t rcu_epoch;
	/* A library fence in the pool: free list links. */
	struct ttm_fence *pool_next;
	struct ttm_fence *batch_next;
	unsigned int batch_len;
};

/**
 * struct ttm_fence_ops - what a driver's fence does, as the kernel's
 *	struct dma_fence_ops.
 * @use_64bit_seqno: the timeline's seqnos are 64-bit and never wrap:
 *	ttm_fence_is_later() compares them as they are. False: they are
 *	32-bit and wrap, as on most hardware rings: compared modulo 2^32.
 * @get_driver_name: the driver's name, for debugging. Mandatory.
 *	Context: Does not sleep. Any thread, any locks held.
 * @get_timeline_name: the name of the fence's timeline. Mandatory.
 *	Context: Does not sleep. Any thread, any locks held.
 * @enable_signaling: the first time anyone waits for the fence or adds a
 *	callback to it (or calls ttm_fence_enable_sw_signaling()), once, and
 *	only if it had not signalled when that started; it runs without the
 *	fence's lock, so the driver may signal the fence meanwhile: the op
 *	must cope with a fence that has just signalled (the kernel calls it
 *	under the lock instead). Make sure it will signal (arm an
 *	interrupt...). Return false if it turns out to have signalled
 *	already: ttmsim then signals it (with the error set by
 *	ttm_fence_set_error(), if any). Optional: without it, a driver
 *	signals each fence anyway.
 *	Context: Does not sleep. Called without the fence's lock, in the
 *	thread that adds the callback or waits: maybe inside another fence's
 *	callback (a merge, a GPU job adding its dependencies' callbacks), so
 *	with whatever that holds, as a callback (ttm_fence_func_t). So it may
 *	signal this fence or others and take locks of its own that no
 *	signalling path waits on, but must not reserve a buffer or wait for
 *	a fence.
 * @signaled: peek at whether the fence has signalled although nobody
 *	signalled it yet (a hardware seqno read). ttm_fence_is_signaled()
 *	and ttm_fence_get_status() poll it while the fence is pending; true
 *	makes them signal the fence. Optional.
 *	Context: Does not sleep. Any thread, any locks held, including the
 *	reservation locks and the lockless readers' read-side sections
 *	(ttm_fence_read_lock()). Must not signal the fence itself.
 * @release: the last reference is gone and no lockless reader can see
 *	the fence any more: free the object that embeds it. Its callbacks
 *	ran, its pipe is closed, its lock destroyed. Optional: without it,
 *	ttmsim calls free() on the fence, which must then be the start of a
 *	malloc()ed block.
 *	Context: Does not sleep. In the thread of the last put itself when
 *	no reader is inside a section, else of a later last put of a driver
 *	fence (with whatever locks that thread holds), or in
 *	ttm_fence_rcu_barrier(): a driver that unloads calls the barrier,
 *	or a release held back by a reader may wait for the next put. Must not call ttm_fence_rcu_barrier(); may
 *	put other fences.
 * @set_deadline: a hint from ttm_fence_set_deadline(): someone would like
 *	the fence signalled by @deadline_ns (CLOCK_MONOTONIC). Optional.
 *	Context: Does not sleep. Any thread, any locks held.
 */
struct ttm_fence_ops {
	bool use_64bit_seqno;
	const char *(*get_driver_name)(struct ttm_fence *fence);
	const char *(*get_timeline_name)(struct ttm_fence *fence);
	bool (*enable_signaling)(struct ttm_fence *fence);
	bool (*signaled)(struct ttm_fence *fence);
	void (*release)(struct ttm_fence *fence);
	void (*set_deadline)(struct ttm_fence *fence, uint64_t deadline_ns);
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
 * ttm_fence_init() - initialise a fence a driver embeds in its object.
 * @fence: the fence, in memory of the driver's.
 * @ops: its ops; they must outlive the fence.
 * @context: its timeline, from ttm_fence_context_alloc().
 * @seqno: its sequence number on @context.
 *
 * The fence holds one reference, the caller's. From now on its memory is
 * ttmsim's until @ops->release (or free()) gets it back: never free it
 * otherwise, even after the last ttm_fence_put(), which only queues the
 * release for the end of a grace period. There is no lock parameter as
 * in the kernel's dma_fence_init(): each fence has its own, never held
 * while any op or callback runs, so ops take the driver's own locks.
 *
 * Context: Does not sleep. Any thread.
 */
void ttm_fence_init(struct ttm_fence *fence, const struct ttm_fence_ops *ops,
		    uint64_t context, uint64_t seqno);

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
 * POLLHUP. A driver's fence then goes to its release op once no lockless
 * reader can see it: at once if none is in a read-side section, else
 * later (see struct ttm_fence_ops).
 *
 * Context: Does not sleep. The last put of an unsignalled fence takes and
 * releases its lock and runs its callbacks in the calling thread, with
 * whatever locks the caller holds (the fence's own released). The last
 * put of a driver's fence may run release ops, of this fence or of others
 * whose grace period ended, in the calling thread.
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
 * Records the time (ttm_fence_timestamp()), runs the callbacks, then
 * wakes the waiters. An @error of 0 signals with the error set by
 * ttm_fence_set_error(), if any.
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
 * While @fence is pending, polls its ops' signaled (struct ttm_fence_ops)
 * and signals it if that says so, as the kernel's dma_fence_is_signaled().
 *
 * Context: Does not sleep. Takes no lock, unless the signaled op makes it
 * signal @fence: then as ttm_fence_signal(), running the callbacks in the
 * calling thread.
 * Return: true once @fence has signalled.
 */
bool ttm_fence_is_signaled(const struct ttm_fence *fence);

/**
 * ttm_fence_get_status() - the state of @fence.
 * @fence: the fence.
 *
 * Context: Does not sleep. As ttm_fence_is_signaled(), which it calls
 * while @fence is pending.
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
 * interrupt. A non-interruptible wait leaves an interrupt pending. Any
 * other wait enables signalling (ttm_fence_enable_sw_signaling()) first.
 * It returns once every callback of @fence has run, unless @fence had
 * signalled when it was called: see ttm_fence_cb_barrier().
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
 * Enables signalling first (ttm_fence_enable_sw_signaling()).
 *
 * Context: Does not sleep; @func never runs in this call, though the
 * fence's enable_signaling op may, and may signal @fence. Takes and
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
 * Enables signalling first (ttm_fence_enable_sw_signaling()), as a wait
 * would: a poll() of the descriptor is one.
 *
 * Context: Does not sleep. As ttm_fence_enable_sw_signaling(); takes and
 * releases the fence's lock and the registry lock of exported fences.
 * Return: the descriptor, or a negative errno (-EMFILE, -ENOMEM).
 */
int ttm_fence_export_fd(struct ttm_fence *fence);

/**
 * ttm_fence_import_fd() - the fence behind a descriptor from
 * ttm_fence_export_fd().
 * @fd: the descriptor; it stays the caller's.
 * @ret_fence: the fence.
 *
 * Once the fence is gone, its pipe is known by its marks: the read end of
 * a pipe of one page (F_GETPIPE_SZ; the default is 16), its write end
 * closed, holding at most 4096 bytes. A pipe of anyone else (another size,
 * or still open for writing, or a write end) is -EINVAL, unless its owner
 * gave it all these marks.
 *
 * The write end must be closed everywhere (POLLHUP) for a gone fence to
 * be recognised: while its fence is alive in another process, or a
 * forked child still holds the write end (it is close-on-exec, not
 * close-on-fork), a signalled fence's descriptor from another process is
 * -EINVAL, as the kernel's sync_file cannot cross processes either. The
 * marks are a heuristic, not proof: any one-page pipe with its write end
 * closed and at most 4096 bytes in it is taken for a fence's, with the
 * status its byte count says.
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
 * struct ttm_fence_fd_slot - a descriptor reserved for a fence that does not
 * exist yet (the kernel's get_unused_fd_flags() before fd_install()).
 * @fd: the descriptor ttm_fence_fd_install() will return, -1 when none is
 *	reserved. Do not use or close it before then.
 *
 * A submission that must hand out its job's fence as a descriptor reserves
 * one first, where failing (-EMFILE) still leaves nothing done, and installs
 * it once the job is committed, which cannot fail. On the caller's stack or
 * anywhere; its layout is part of the ABI.
 */
struct ttm_fence_fd_slot {
	int fd;
	/* private: */
	int pipe_rd, pipe_wr;   /* the pipe a fence without one gets */
	/*
	 * Its st_dev and st_ino, as uint64_t: dev_t and ino_t would make the
	 * layout depend on the caller's _FILE_OFFSET_BITS.
	 */
	uint64_t pipe_dev;
	uint64_t pipe_ino;
};

/**
 * ttm_fence_fd_reserve() - reserve what ttm_fence_export_fd() needs, before
 * the fence exists.
 * @slot: filled in: the descriptor to come in @slot->fd.
 *
 * Takes the three descriptors an export may need (a pipe for the fence
 * and the caller's end of it). Give @slot to ttm_fence_fd_install() or
 * ttm_fence_fd_unreserve(), exactly once.
 *
 * Context: Does not sleep. Takes no lock.
 * Return: 0; -EMFILE or -ENFILE (no descriptor left), -ENOMEM. After a
 * failure @slot is empty (@slot->fd -1): ttm_fence_fd_unreserve() on it
 * is safe and does nothing, so one error path fits both cases.
 */
int ttm_fence_fd_reserve(struct ttm_fence_fd_slot *slot);

/**
 * ttm_fence_fd_install() - make @slot's descriptor @fence's, as
 * ttm_fence_export_fd() would have.
 * @slot: a slot from ttm_fence_fd_reserve(), emptied.
 * @fence: the fence.
 *
 * Cannot fail: everything it uses was reserved. The descriptor is then
 * exactly what ttm_fence_export_fd() returns; it is the caller's to close.
 *
 * Context: Does not sleep. As ttm_fence_export_fd().
 * Return: the descriptor (@slot->fd before the call).
 */
int ttm_fence_fd_install(struct ttm_fence_fd_slot *slot,
			 struct ttm_fence *fence);

/**
 * ttm_fence_fd_unreserve() - give back a slot not installed (the kernel's
 * put_unused_fd()).
 * @slot: a slot from ttm_fence_fd_reserve(), emptied; or one already empty
 *	(nothing happens).
 *
 * Context: Does not sleep. Takes no lock.
 */
void ttm_fence_fd_unreserve(struct ttm_fence_fd_slot *slot);

/**
 * ttm_fence_enable_sw_signaling() - call @fence's enable_signaling op now,
 * unless it was called already or @fence has signalled.
 * @fence: the fence; the caller holds a reference.
 *
 * Waits and ttm_fence_add_callback() do it themselves; this is for a
 * caller that will poll.
 *
 * Context: Does not sleep. As struct ttm_fence_ops' enable_signaling,
 * which runs in the calling thread and may signal @fence.
 */
void ttm_fence_enable_sw_signaling(struct ttm_fence *fence);

/**
 * ttm_fence_set_error() - have @fence signal with @error.
 * @fence: a pending fence; the caller holds a reference.
 * @error: a negative errno such as -EIO.
 *
 * For a driver that learns of the failure before it signals (a reset):
 * the next ttm_fence_signal() of @fence with error 0, or a signal after
 * the enable_signaling op returned false, carries @error. The last call
 * wins. Setting an error on a signalled fence is a bug of the caller (the
 * kernel warns and stores it anyway); here it is refused and the status
 * stays as signalled.
 *
 * Context: Does not sleep. Takes and releases the fence's lock.
 * Return: 0, or -EINVAL if @fence has signalled already or @error is not
 * a negative errno.
 */
int ttm_fence_set_error(struct ttm_fence *fence, int error);

/**
 * ttm_fence_timestamp() - when @fence signalled.
 * @fence: the fence.
 * @ret_ns: its signal time, CLOCK_MONOTONIC in nanoseconds.
 *
 * Context: Does not sleep. Takes no lock; never polls an op.
 * Return: 0 and *@ret_ns, or -EBUSY if @fence has not signalled.
 */
int ttm_fence_timestamp(const struct ttm_fence *fence, uint64_t *ret_ns);

/**
 * ttm_fence_is_later() - whether @a comes after @b on their timeline.
 * @a: a fence.
 * @b: a fence of the same context.
 *
 * Compares the seqnos: as they are if the ops say use_64bit_seqno (the
 * library's own fences do), else modulo 2^32 (so 1 is later than
 * 0xffffffff), as the kernel's __dma_fence_is_later().
 *
 * Context: Does not sleep. Takes no lock.
 * Return: true if @a is later; false if not, or if @a and @b are on
 * different contexts (the kernel warns then).
 */
bool ttm_fence_is_later(const struct ttm_fence *a, const struct ttm_fence *b);

/**
 * ttm_fence_get_stub() - a reference to the stub fence, always signalled.
 *
 * One fence, shared by every caller, signalled without error: for a slot
 * that must hold a fence when there is nothing to wait for.
 *
 * Context: Does not sleep. Any thread.
 * Return: the stub fence, with a new reference.
 */
struct ttm_fence *ttm_fence_get_stub(void);

/**
 * ttm_fence_driver_name() - the driver's name, from @fence's ops.
 * @fence: the fence; the caller holds a reference.
 *
 * Context: Does not sleep. Calls the op.
 * Return: the name ("ttmsim" for the library's fences).
 */
const char *ttm_fence_driver_name(struct ttm_fence *fence);

/**
 * ttm_fence_timeline_name() - the name of @fence's timeline, from its ops.
 * @fence: the fence; the caller holds a reference.
 *
 * Context: Does not sleep. Calls the op.
 * Return: the name.
 */
const char *ttm_fence_timeline_name(struct ttm_fence *fence);

/**
 * ttm_fence_set_deadline() - tell @fence's driver when it is needed.
 * @fence: the fence; the caller holds a reference.
 * @deadline_ns: the time, CLOCK_MONOTONIC in nanoseconds.
 *
 * A hint, passed to the set_deadline op while @fence is pending; nothing
 * for the library's fences.
 *
 * Context: Does not sleep. Calls the op.
 */
void ttm_fence_set_deadline(struct ttm_fence *fence, uint64_t deadline_ns);

/**
 * ttm_fence_wait_any() - sleep until one of @fences signals.
 * @fences: @count fences, none NULL; the caller holds references.
 * @count: how many; at least 1.
 * @interruptible: ttm_interrupt_thread() ends the wait with -EINTR.
 * @timeout_ns: how long at most; negative: forever; 0: just test.
 * @ret_index: the index of the first signalled fence in @fences (the
 *	lowest, if several have).
 *
 * Enables signalling on the fences it waits for, in order, up to the
 * first one found signalled (as the kernel's dma_fence_wait_any_timeout());
 * interrupts as in ttm_fence_wait().
 *
 * Context: May sleep unless @timeout_ns is 0; interruptibly with
 * @interruptible. Takes and releases the fences' locks. Allocates.
 * Return: 0 and *@ret_index, -ETIME if the timeout passed first, -EINTR,
 * -ENOMEM, or -EINVAL if @count is 0.
 */
int ttm_fence_wait_any(struct ttm_fence *const *fences, unsigned int count,
		       bool interruptible, int64_t timeout_ns,
		       unsigned int *ret_index);

/**
 * ttm_fence_cb_barrier() - wait until every callback of @fence has run.
 * @fence: the fence; the caller holds a reference.
 *
 * ttm_fence_is_signaled() and ttm_fence_wait() say true and 0 as soon as
 * @fence is marked signalled, which is before its callbacks run in the
 * signalling thread. A thread that must see what a callback of its own
 * did (the kernel's callback-race self-test), or free what it uses, waits
 * here after that. Returns at once if @fence is pending (nothing runs
 * yet), or if called from one of @fence's own callbacks (that would wait
 * for itself).
 *
 * Context: May sleep (yielding) while another thread runs @fence's
 * callbacks. Takes and releases the fence's lock.
 */
void ttm_fence_cb_barrier(struct ttm_fence *fence);

/**
 * ttm_fence_read_lock() - enter a read-side section: fences found without
 * a reference stay in memory until the matching ttm_fence_read_unlock().
 *
 * For a driver that keeps fence pointers it reads without a reference
 * (the way the reservation readers of ttmsim/resv.h do, which enter such
 * a section themselves): inside the section a fence whose last reference
 * is dropped stays allocated (its release op is deferred), so taking a
 * reference with a compare-and-swap that refuses 0 is safe. Sections
 * nest. They are cheap (a thread-local count and one atomic exchange for
 * the outermost), and must be short: every deferred release waits for
 * them.
 *
 * Context: Does not sleep. The first call of a thread allocates its
 * record (failing that, it counts in a shared one). Sleeping inside the
 * section is allowed but holds back releases.
 */
void ttm_fence_read_lock(void);

/**
 * ttm_fence_read_unlock() - leave the section of ttm_fence_read_lock().
 *
 * Context: Does not sleep. In the thread that entered it.
 */
void ttm_fence_read_unlock(void);

/**
 * ttm_fence_rcu_barrier() - run every deferred fence release now pending.
 *
 * Waits for the readers that hold them back, then runs the release ops of
 * every driver fence whose last reference was dropped before the call,
 * like the kernel's rcu_barrier(): for a driver about to unload, or a
 * test counting releases.
 *
 * Context: May sleep (yielding) while readers are in their sections.
 * Runs release ops in the calling thread. Not inside a read-side section,
 * a fence callback or a release op.
 * Return: 0, or -EDEADLK if the calling thread is inside a read-side
 * section or a release op (it would wait for itself); -EINVAL if the ww
 * debug checker's handler refused it inside a fence-signalling section.
 */
int ttm_fence_rcu_barrier(void);

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
 * - signal fences, add callbacks, remove them (but a remove that comes
 *   as another thread signals that fence waits for its callbacks, as
 *   ttm_fence_cb_barrier(): two sections removing callbacks of each
 *   other's fences deadlock, unreported), take and drop fence
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
