/* SPDX-License-Identifier: MIT */
/*
 * The inside of devices and buffer objects (ttmsim/bo.h), shared by the
 * files of bo/.
 *
 * Locking:
 *  - struct ttm_device::lock (a plain mutex, never held while sleeping on
 *    anything else) protects the accounting, the LRU and pinned lists, the
 *    counters and each buffer's list node.
 *  - A buffer's reservation protects its pin count and (later) its domain
 *    and memory; the domain is also stored atomically so that
 *    ttm_bo_domain() may take a snapshot without it. A buffer changes
 *    lists only with its reservation held, or when it is freed.
 *  - The reference count is atomic.
 */
#ifndef TTMSIM_BO_BO_H
#define TTMSIM_BO_BO_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "ttmsim/bo.h"
#include "ttmsim/fence.h"

/* An intrusive, circular, doubly linked list: O(1) insert and removal. */
struct bo_list {
	struct bo_list *prev, *next;
};

static inline void bo_list_init(struct bo_list *head)
{
	head->prev = head->next = head;
}

static inline bool bo_list_empty(const struct bo_list *head)
{
	return head->next == head;
}

static inline void bo_list_del(struct bo_list *node)
{
	node->prev->next = node->next;
	node->next->prev = node->prev;
	bo_list_init(node);
}

static inline void bo_list_add_tail(struct bo_list *node,
				    struct bo_list *head)
{
	node->prev = head->prev;
	node->next = head;
	head->prev->next = node;
	head->prev = node;
}

static inline void bo_list_move_tail(struct bo_list *node,
				     struct bo_list *head)
{
	bo_list_del(node);
	bo_list_add_tail(node, head);
}

/* One memory domain's manager. */
struct bo_domain {
	uint64_t capacity;     /* UINT64_MAX: unlimited */
	uint64_t used;         /* bytes, exact */
	uint64_t buffers;      /* resident, pinned or not */
	struct bo_list lru;    /* unpinned residents, head evicted first */
};

struct ttm_device {
	pthread_mutex_t lock;
	pthread_cond_t idle;      /* zombies reached 0 */
	struct bo_domain domain[TTM_DOMAIN_COUNT];
	struct bo_list pinned;    /* pinned residents, any domain */
	struct ww_class ww_class; /* of every reservation of the device */
	struct ttm_gpu *gpu;
	unsigned int copy_engine;
	uint64_t buffers, zombies;
	uint64_t evictions, moves, bytes_moved, enospc;
};

/*
 * Waiting for the fences of a buffer whose last reference went: one node
 * per fence; the last callback to run frees the buffer.
 */
struct bo_destroy_cb {
	struct ttm_fence_cb cb;
	struct ttm_bo *bo;
};

struct ttm_bo {
	struct ttm_resv resv;
	struct ttm_device *dev;
	uint64_t size;
	void *mem;                    /* the backing memory, zero-filled */
	int domain;                   /* enum ttm_domain; atomic */
	int refcount;                 /* atomic */
	unsigned int pin_count;       /* under the reservation */
	struct ttm_placement placement;
	struct bo_list node;          /* on an LRU or the pinned list */
	/* Delayed destroy: callbacks still to run, and their nodes. */
	unsigned int destroy_pending; /* atomic */
	struct bo_destroy_cb *destroy_cbs;
};

/* The list of @dev that an unpinned buffer of @domain belongs on. */
static inline struct bo_list *bo_lru_of(struct ttm_device *dev, int domain)
{
	return &dev->domain[domain].lru;
}

/* Free @bo's memory and give its bytes back to its domain (bo/bo.c). */
void bo_free(struct ttm_bo *bo);

/* Put @bo on its domain's LRU tail unless pinned; caller holds dev->lock. */
void bo_lru_bump_locked(struct ttm_bo *bo);

#endif /* TTMSIM_BO_BO_H */
