/* SPDX-License-Identifier: MIT */
/*
 * The execbuf layer's private structures: a client's handle table, and the
 * per-device state (counters) in execbuf's slot of the device
 * (bo/layer.h), not in ttm_device_set_private(), which is the driver's.
 */
#ifndef TTMSIM_EXECBUF_EXECBUF_H
#define TTMSIM_EXECBUF_EXECBUF_H

#include <pthread.h>
#include <stdint.h>

#include "ttmsim/execbuf.h"
#include "ttmsim/syncobj.h"

/* Per device, shared by its clients (execbuf/stats.c). */
struct execbuf_dev {
	pthread_mutex_t lock;
	pthread_cond_t idle;            /* stats.in_flight reached 0 */
	struct ttm_execbuf_stats stats; /* under @lock */
};

/* One slot of a client's bo-to-handle hash (open addressing). */
struct client_slot {
	struct ttm_bo *bo;  /* NULL: empty */
	uint32_t handle;
};

struct ttm_client {
	struct ttm_device *dev;
	struct execbuf_dev *edev;
	pthread_mutex_t lock;         /* the tables below */
	struct ttm_bo **handles;      /* [handle - 1], a reference; NULL: free */
	uint32_t n_handles;           /* slots in use at the end: high mark */
	uint32_t cap_handles;
	uint32_t free_hint;           /* no free handle below it */
	uint32_t *free_heap;          /* free slots below the high mark, a
					 min-heap; cap_handles long */
	uint32_t n_free;
	struct client_slot *by_bo;    /* bo -> handle, for import and add */
	uint32_t by_bo_cap, by_bo_used;
	/*
	 * Syncobj handles, a namespace of their own (execbuf/syncobj.c):
	 * [handle - 1], a reference; NULL: free.
	 */
	struct ttm_syncobj **syncobjs;
	uint32_t n_syncobjs, cap_syncobjs;
	/* Phase events: set while no submission runs. */
	ttm_execbuf_event_fn *event_fn;
	void *event_data;
	uint64_t seqno;               /* submissions of this client */
	/*
	 * Scheduler entities, [engine], made on first use under @lock
	 * (execbuf/entity.c); NULL until the first submission. Published
	 * with release stores and read without the lock by submissions:
	 * neither the array nor an entity changes until the client closes.
	 */
	struct ttm_sched_entity **entities;
	enum ttm_sched_priority priority;
};

/*
 * How long ttm_client_close() lets a client's queued jobs reach the ring
 * before it kills the rest: the kernel's wait at file close
 * (MAX_WAIT_SCHED_ENTITY_Q_EMPTY, one second).
 */
#define TTM_CLIENT_FLUSH_TIMEOUT_NS 1000000000ull

/*
 * @client's entity of @engine, made on first use (execbuf/entity.c):
 * 0 and *@ret_entity; -EINVAL for a bad engine; -ENOMEM. Takes and
 * releases @client's lock.
 */
int client_entity(struct ttm_client *client, unsigned int engine,
		  struct ttm_sched_entity **ret_entity);
/* At close: flush, kill what is left, destroy (execbuf/entity.c). */
void client_entities_destroy(struct ttm_client *client);

/*
 * The execbuf state of @dev, attached on first use (any thread: racing
 * firsts share the winner's): NULL only if that allocation failed. Freed
 * by ttm_device_destroy(), once no job is in flight (execbuf/stats.c).
 */
struct execbuf_dev *execbuf_dev_get(struct ttm_device *dev);

/*
 * Look up @n handles of @entries at once (one lock round trip), storing a
 * new reference to each buffer in @bos[i]. On a bad handle: -ENOENT and
 * *@bad_index, with no reference kept (execbuf/client.c).
 */
int client_lookup_many(struct ttm_client *client,
		       const struct ttm_execbuf_bo *entries, unsigned int n,
		       struct ttm_bo **bos, int *bad_index);

/*
 * Drop the buffer references of exported descriptors that every process
 * has closed since the last call (execbuf/prime.c). Any thread, any time.
 */
void prime_collect(void);

/*
 * Syncobj descriptors, in the PRIME registry beside the buffers'
 * (execbuf/prime.c): a new descriptor holding a reference to @syncobj;
 * the syncobj a descriptor names, with a new reference, or NULL.
 */
int prime_syncobj_export(struct ttm_syncobj *syncobj, int *ret_fd);
struct ttm_syncobj *prime_syncobj_lookup(int fd);

/* Put every syncobj of @client's table (execbuf/syncobj.c). */
void client_syncobjs_release(struct ttm_client *client);

/*
 * Counting (execbuf/stats.c): a call started; a call failed with @err
 * (< 0); -EDEADLK results and restarts seen by one call.
 */
void execbuf_count_submitted(struct execbuf_dev *edev);
void execbuf_count_rejected(struct execbuf_dev *edev, int err);
void execbuf_count_backoffs(struct execbuf_dev *edev, unsigned int backoffs,
			    unsigned int restarts);

/*
 * A job's tracking, allocated before its submission (so that nothing can
 * fail after it), then armed on its out-fence, which counts it completed
 * or failed when it signals and frees the tracking.
 */
struct execbuf_job *execbuf_job_new(struct execbuf_dev *edev);
/* Give back a tracking never armed (its submission failed); NULL is ignored. */
void execbuf_job_discard(struct execbuf_job *job);
void execbuf_job_track(struct execbuf_job *job, struct ttm_fence *fence);

/* Wait until @edev counts nothing in flight. */
void execbuf_wait_idle(struct execbuf_dev *edev);

#endif /* TTMSIM_EXECBUF_EXECBUF_H */
