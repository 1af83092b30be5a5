/* SPDX-License-Identifier: MIT */
/*
 * The inside of devices and buffer objects (ttmsim/bo.h), shared by the
 * files of bo/.
 *
 * Locking (the design is in docs/bo-design.md; the order in which these
 * locks nest with every other lock of the library in docs/locking.md):
 *  - struct ttm_device::lock protects the accounting, the LRU, pinned and
 *    ghost lists, the counters and each buffer's list node. Under it,
 *    reservations are only try-locked.
 *  - A buffer's reservation protects its pin count, its domain and its
 *    memory; the domain is also stored atomically so that
 *    ttm_bo_domain() may take a snapshot without it. A buffer changes
 *    lists only with its reservation held, or when it is freed.
 *  - The reference count is atomic.
 */
#ifndef TTMSIM_BO_BO_H
#define TTMSIM_BO_BO_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "bo/layer.h"
#include "bo/range_mgr.h"
#include "util/compiler.h"
#include "ttmsim/bo.h"
#include "ttmsim/fence.h"
#include "util/list.h"

/* The first hash chains of a device's profiles (struct ttm_bo_profile). */
#define BO_PROFILE_BUCKETS 16

/* One memory domain's manager. */
struct bo_domain {
	uint64_t capacity;     /* UINT64_MAX: unlimited */
	uint64_t used;         /* bytes, exact */
	uint64_t buffers;      /* resident, pinned or not */
	uint64_t ghosts;       /* move sources holding room, in @used */
	/*
	 * The latest pipelined move source's fence (TTM's manager move
	 * fence), a reference: every earlier one of its timeline signals
	 * before it. Whoever takes a range here writes it after this one
	 * (bo/bo_pipeline.c). Under dev->lock; NULL: none yet.
	 */
	struct ttm_fence *move_fence;
	/*
	 * Bytes taken for moves into this domain whose buffer has not been
	 * switched in yet, in @used: the lock is dropped between taking the
	 * room and switching, and ttm_device_check() may run in between.
	 */
	uint64_t incoming;
	uint64_t pinned;       /* bytes of the pinned residents, exact */
	/*
	 * Unpinned residents, head evicted first, and the walks' hitches
	 * (bo/bo_lru.c): skip those with bo_lru_is_hitch().
	 */
	struct list_node lru;
	/*
	 * VRAM and GTT: the pages of the domain and who has which, in
	 * units of struct ttm_device::page_size (bo/bo_res.c). @arena is
	 * the domain's memory: a resident buffer's bytes live at its
	 * offset in it. NULL for SYSTEM, whose buffers are allocated one
	 * by one.
	 */
	struct range_mgr mm;
	char *arena;
};

/*
 * Where a buffer's bytes are, as TTM's struct ttm_resource: a range of a
 * limited domain's pages, or a block of its own in SYSTEM. A buffer has
 * one, plus one per move in flight (taken before the copy, or left to a
 * ghost after it).
 */
struct ttm_resource {
	/*
	 * 56 bytes, so that with its malloc() header it takes 64
	 * (docs/bo-design.md, "Bytes per buffer"). In every domain
	 * @node.tag is the domain (bo_res_domain()). VRAM, GTT: @node is
	 * the range of pages in the domain's manager, the bytes are the
	 * arena's at its start, whole pages accounted. SYSTEM: in no
	 * manager; @node.size is the exact bytes, @sys.mem (over the
	 * node's tree links, which SYSTEM does not use) its own block.
	 * Read them with bo_res_bytes() and bo_res_mem().
	 */
	union {
		struct range_node node;
		struct {
			void *mem;
		} sys;
	};
	/*
	 * The buffer, under dev->lock; NULL once a ghost's (the buffer may
	 * be gone before its old bytes are).
	 */
	struct ttm_bo *bo;
};

/*
 * The bookkeeping per buffer (docs/bo-design.md, "Bytes per buffer"): a
 * buffer of ttm_bo_create() and its resource take 176 + 64 bytes of
 * malloc() chunks on 64-bit glibc. Growing either is a choice to make
 * knowingly (and struct ttm_bo's layout is ABI).
 */
_Static_assert(sizeof(void *) != 8 || (sizeof(struct ttm_bo) <= 168 &&
				       sizeof(struct ttm_resource) <= 56),
	       "struct ttm_bo or struct ttm_resource grew: bytes per buffer");

/* The domain of @res. */
static inline int bo_res_domain(const struct ttm_resource *res)
{
	return res->node.tag;
}

struct ttm_device {
	pthread_mutex_t lock;
	pthread_cond_t idle;      /* zombies reached 0 */
	pthread_cond_t changed;   /* room may have been freed somewhere */
	/*
	 * The room wait's event (bo/bo_room.c): validations making room
	 * (atomic), the generation every release of room or of a
	 * reservation bumps (atomic, written under @lock), and the threads
	 * asleep for it (struct bo_room_sleeper, under @lock).
	 */
	unsigned int room_waiters;
	unsigned int room_gen;
	struct list_node room_sleepers;
	struct bo_domain domain[TTM_DOMAIN_COUNT];
	struct list_node pinned;  /* pinned residents, any domain */
	struct list_node walks;   /* the LRU walks' cursors (bo/bo_lru.c) */
	uint64_t lru_gen;         /* stamps each LRU addition (bo_lru.c) */
	/*
	 * The class of every reservation of the device: the shared
	 * reservation_ww_class, or @own_class (wound-wait devices).
	 */
	struct ww_class *ww_class;
	struct ww_class own_class;
	char own_class_name[40];
	struct ttm_gpu *gpu;
	unsigned int copy_engine;
	/*
	 * One scheduler per engine of @gpu, and the moves' entity on the
	 * copy engine's (bo/device_sched.c); none without a GPU.
	 */
	struct ttm_sched **scheds;
	unsigned int n_scheds;
	struct ttm_sched_entity *move_entity;
	/*
	 * Allocation granularity and CPU-visible VRAM, in bytes: fixed. The
	 * page size is a power of two: the hot paths shift by @page_shift
	 * rather than divide (a 64-bit division costs tens of cycles).
	 */
	uint64_t page_size;
	unsigned int page_shift;
	uint64_t visible_vram;
	/* The driver's hooks: never NULL, NULL members for the defaults. */
	const struct ttm_device_funcs *funcs;
	void *funcs_data;
	uint64_t buffers, zombies;
	uint64_t evictions, moves, bytes_moved, enospc, room_waits;
	uint64_t room_wait_timeouts;
	/*
	 * Interned placements (bo/bo_profile.c), under @lock: a hash table
	 * of 1 << @profile_bits chains, @profile_first until it grows.
	 */
	struct ttm_bo_profile **profiles;
	struct ttm_bo_profile *profile_first[BO_PROFILE_BUCKETS];
	unsigned int profile_bits;
	uint64_t n_profiles;
	struct list_node ghosts;  /* sources of moves in flight */
	uint64_t n_ghosts;        /* on @ghosts; destroy waits for 0 */
	/* Pipelined ghosts not covered by their domain's move_fence. */
	uint64_t n_scanned_ghosts;
	/*
	 * Whether ttm_device_destroy() is waiting for zombies and ghosts:
	 * what a test reads to signal a fence only once it is (test_bo.c).
	 */
	bool destroy_waiting;
	void *private;            /* the driver's; atomic */
	void (*release_private)(void *data);
	/*
	 * The destroy worker (bo/bo_destroy.c): buffers whose delayed
	 * destroy is due, oldest first, under @work_lock (taken alone, or
	 * inside a fence callback: a leaf).
	 */
	pthread_t worker;
	pthread_mutex_t work_lock;
	pthread_cond_t work_cond;    /* work queued, or stop */
	pthread_cond_t work_idle;    /* queue empty, worker idle */
	struct ttm_bo *work_head, **work_tail;
	bool work_stop;
	bool work_busy;              /* freeing one it took off the queue */
	bool work_started;           /* @worker runs (from the first zombie) */
	bool work_free_dev;          /* the worker frees @dev when idle */
	struct {                  /* the library's layers' (bo/layer.h) */
		void *data;       /* atomic */
		void (*release)(void *data);
	} layer[BO_LAYER_COUNT];
};

/*
 * The source of a move still in flight. A range of a limited domain is
 * given back at once (pipelined, as TTM's move fence): the ghost only
 * remembers it, so that whoever takes an overlapping range writes it
 * after the copy read it (bo/bo_pipeline.c). SYSTEM's block stays
 * allocated and accounted until the copy's fence signals, when the
 * callback frees it (bo/bo_move.c).
 */
struct bo_ghost {
	struct ttm_fence_cb cb;
	struct ttm_fence *fence;  /* the copy's; a reference */
	struct ttm_device *dev;
	struct ttm_resource *res; /* the source, given back at the fence */
	struct list_node node;    /* on dev->ghosts, under dev->lock */
	bool pipelined;           /* @res's range already given back */
	bool scanned;             /* not on its domain's move_fence timeline */
	/* The move fence it replaced, for move_finish() to put unlocked. */
	struct ttm_fence *stale;
};

/*
 * A placement and destroy that buffers of a device were created with,
 * interned (bo/bo_profile.c): one immutable copy per distinct pair, owned
 * by the device and counting the buffers that use it (freed with the
 * last), so that a buffer holds a pointer rather than its own 100-byte
 * placement. bo_free() takes the destroy before it drops its count.
 */
struct ttm_bo_profile {
	struct ttm_placement placement; /* unused places zeroed */
	void (*destroy)(struct ttm_bo *bo);
	struct ttm_bo_profile *next;    /* in its hash chain */
	unsigned long refs;             /* buffers using it, under dev->lock */
};

/*
 * @dev's one copy of (@placement, @destroy), made on first use, counted
 * (bo_profile_put_locked()); NULL without memory. @placement valid.
 * Takes dev->lock.
 */
const struct ttm_bo_profile *
bo_profile_get(struct ttm_device *dev, const struct ttm_placement *placement,
	       void (*destroy)(struct ttm_bo *bo));
/*
 * Drop a buffer's count of @profile, freed with the last. Under
 * dev->lock.
 */
void bo_profile_put_locked(struct ttm_device *dev,
			   const struct ttm_bo_profile *profile);
/* Free @dev's profiles: no buffer of it is left. */
void bo_profile_fini(struct ttm_device *dev);

/*
 * PRIME links (bo/bo_import.c), allocated on demand: an import's
 * (@exporter, @import_next) with it, an exporter's (@imports) at its
 * first import. Under import_lock, except an import's @exporter, which
 * is set before the import is visible and cleared at its last put.
 */
struct ttm_bo_prime {
	struct ttm_bo *exporter;
	struct ttm_bo *import_next;
	struct ttm_bo *imports;
};

/*
 * The buffer whose pages @bo shows, if it is an import still holding it;
 * else NULL. Only imports (TTM_BO_TYPE_SG, which never change type) have
 * one, set at creation: another buffer's @prime, which an import of it
 * may be allocating, is not read.
 */
static inline struct ttm_bo *bo_exporter(const struct ttm_bo *bo)
{
	return bo->type == TTM_BO_TYPE_SG ? bo->prime->exporter : NULL;
}

/* The placement @bo was created with. */
static inline const struct ttm_placement *
bo_placement(const struct ttm_bo *bo)
{
	return &bo->profile->placement;
}

/* struct ttm_bo is public (ttmsim/bo.h): drivers embed it. */

/* The bytes @res accounts in its domain of @dev. */
static inline uint64_t bo_res_bytes(const struct ttm_device *dev,
				    const struct ttm_resource *res)
{
	if (bo_res_domain(res) == TTM_DOMAIN_SYSTEM)
		return res->node.size;
	return (uint64_t)res->node.size << dev->page_shift;
}

/* The bytes of @res on @dev: in its domain's arena, or its own block. */
static inline void *bo_res_mem(const struct ttm_device *dev,
			       const struct ttm_resource *res)
{
	int d = bo_res_domain(res);

	if (d == TTM_DOMAIN_SYSTEM)
		return res->sys.mem;
	return dev->domain[d].arena + ((uint64_t)res->node.start
				       << dev->page_shift);
}

/* A reference unless the last one is gone (a delayed destroy is due). */
static inline bool bo_get_unless_zero(struct ttm_bo *bo)
{
	int old = __atomic_load_n(&bo->refcount, __ATOMIC_RELAXED);

	do {
		if (old == 0)
			return false;
	} while (!__atomic_compare_exchange_n(&bo->refcount, &old, old + 1,
					      true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

/*
 * @bo's memory: an import's is its exporter's, read under the shared
 * reservation, which keeps the exporter from moving.
 */
static inline void *bo_mem(const struct ttm_bo *bo)
{
	struct ttm_bo *exporter = bo_exporter(bo);

	return exporter ? bo_res_mem(exporter->dev, exporter->res) :
			  bo_res_mem(bo->dev, bo->res);
}

/*
 * An import leaves its exporter's list and drops it, at its last put
 * (bo/bo_import.c); bo_exporter() is NULL after.
 */
void bo_import_release(struct ttm_bo *bo);

/* The list of @dev that an unpinned buffer of @domain belongs on. */
static inline struct list_node *bo_lru_of(struct ttm_device *dev, int domain)
{
	return &dev->domain[domain].lru;
}

/*
 * A place is valid on @dev: a known domain and flags, CPU_VISIBLE only in
 * VRAM, fpfn < lpfn unless lpfn is 0, no range in SYSTEM, and fpfn inside
 * the domain (bo/bo.c).
 */
bool bo_place_valid(const struct ttm_device *dev,
		    const struct ttm_place *place);

/*
 * A placement lists 1 to TTM_PLACEMENT_MAX valid places, no two the
 * same; one domain may come more than once with other ranges or flags.
 */
bool bo_placement_valid(const struct ttm_device *dev,
			const struct ttm_placement *placement);

/*
 * The pages [*@ret_first, *@ret_end) of valid @place's domain that it
 * allows: lpfn 0 and past the domain's end stop at the end (a last
 * partial page counts), CPU_VISIBLE at the visible VRAM's end. Empty
 * (*@ret_end <= *@ret_first) if CPU_VISIBLE leaves nothing.
 */
void bo_place_range(const struct ttm_device *dev,
		    const struct ttm_place *place, uint64_t *ret_first,
		    uint64_t *ret_end);

/* The bytes valid @place spans: UINT64_MAX for SYSTEM. */
uint64_t bo_place_bytes(const struct ttm_device *dev,
			const struct ttm_place *place);

/*
 * Whether @place could ever hold @size bytes, were it empty: the domain's
 * capacity and the place's range both large enough. Both are whole
 * pages, so comparing bytes is comparing @size rounded up to pages.
 */
static inline bool bo_place_can_hold(const struct ttm_device *dev,
				     const struct ttm_place *place,
				     uint64_t size)
{
	return dev->domain[place->domain].capacity >= size &&
	       bo_place_bytes(dev, place) >= size;
}

/*
 * Whether @bo, resident somewhere, already satisfies @place: in its
 * domain, its range inside the place's window (bo/bo_validate.c). TOPDOWN
 * is where to look first, not a property a resident range must have.
 */
bool place_matches(const struct ttm_bo *bo, const struct ttm_place *place);

/*
 * Free @bo's memory, give its bytes back to its domain and call its
 * destroy (bo/bo.c). Not under the device lock, nor in a fence callback.
 */
void bo_free(struct ttm_bo *bo);

/*
 * @dev's destroy worker (bo/bo_destroy.c): set up with the device;
 * started by the first delayed destroy (0 or a negative errno); stopped
 * once no delayed destroy is pending, after it drained its queue.
 */
void bo_worker_init(struct ttm_device *dev);
int bo_worker_ensure(struct ttm_device *dev);
void bo_worker_stop(struct ttm_device *dev);

/*
 * For ttm_device_destroy() called by a destroy the worker runs: whether
 * this is @dev's worker; then the worker frees @dev (bo_device_free())
 * itself once its queue, the other delayed destroys and the moves in
 * flight are done, since it cannot join itself.
 */
bool bo_worker_is_self(struct ttm_device *dev);
void bo_worker_free_device(struct ttm_device *dev);
/* The end of ttm_device_destroy(): its worker stopped, nothing pending. */
void bo_device_free(struct ttm_device *dev);

/*
 * bo/device_sched.c: make @dev's schedulers and the moves' entity;
 * destroy them, once every move has finished.
 */
int bo_device_sched_init(struct ttm_device *dev);
void bo_device_sched_fini(struct ttm_device *dev);

/*
 * Wait until the worker has done every destroy queued so far; whether
 * there was any. Does nothing in the worker itself.
 */
bool bo_worker_flush(struct ttm_device *dev);

/* Account @bo in @res, whose bytes are taken; caller holds dev->lock. */
void bo_account_in_locked(struct ttm_bo *bo, struct ttm_resource *res);

/*
 * A new buffer's first resource: its bytes zeroed once no copy reads its
 * range any more (bo_ghost_await() with @ctx), then @bo accounted in it;
 * on failure (-ENOMEM, -EBUSY, -EINTR) the room goes back. No lock held.
 */
int bo_res_settle(struct ttm_bo *bo, struct ttm_resource *res,
		  const struct ttm_operation_ctx *ctx);

/*
 * Creation's fallback when no domain of @bo's placement has room: make
 * room as validation does, but without a ticket (@ctx->exec is NULL:
 * victims are only try-locked), and account @bo in there. 0, -ENOSPC
 * (counted), -EBUSY for @ctx->no_wait_gpu, -ENOMEM.
 */
int bo_create_make_room(struct ttm_bo *bo, const struct ttm_operation_ctx *ctx);

/*
 * The LRU lists (bo/bo_lru.c). Besides buffers, an LRU holds the hitches
 * of the walks running over it (ttm_lru_walk_for_evict()): every loop over
 * an LRU skips the nodes for which bo_lru_is_hitch() is true. A buffer's
 * node is followed by its node_kind, 0; a hitch's by a kind of its own.
 */
static inline bool bo_lru_is_hitch(const struct list_node *n)
{
	return container_of(n, const struct ttm_bo, node)->node_kind != 0;
}

/*
 * Start fetching what the LRU bump of @bo's unreserve will write: its
 * own node and, once that is read, its neighbours' (at 1M buffers each is
 * a cache miss, and the bump's are otherwise taken one after the other
 * under the device lock). A hint only: the pointers are read without the
 * device lock and may be stale by the time they are used, which a
 * prefetch does not mind (it never faults). Relaxed atomic loads: the
 * compiler may not tear or re-read them, and TSan models them.
 */
static inline void bo_lru_prefetch(const struct ttm_bo *bo)
{
	const struct ttm_list_node *node = &bo->node;

	__builtin_prefetch(__atomic_load_n(&node->prev, __ATOMIC_RELAXED), 1);
	__builtin_prefetch(__atomic_load_n(&node->next, __ATOMIC_RELAXED), 1);
}

/*
 * Put accounted @bo on its list: the pinned list if pinned (its bytes
 * counted in its domain's pinned bytes), else its domain's LRU tail, or
 * the tail of its bulk move's group there. Caller holds dev->lock.
 */
void bo_lru_add_locked(struct ttm_bo *bo);
/* Take @bo off the list bo_lru_add_locked() put it on; dev->lock held. */
void bo_lru_del_locked(struct ttm_bo *bo);
/* Put @bo on its domain's LRU tail unless pinned; caller holds dev->lock. */
void bo_lru_bump_locked(struct ttm_bo *bo);
/*
 * ttm_bo_unreserve() of @bos[@n - 1] down to @bos[0], in that order, with
 * one device lock round trip per run of buffers of one device rather than
 * one per buffer (bo/bo_reserve.c): every LRU bump first, under the lock,
 * then every unlock, then one wake-up check per run. Each buffer's
 * reservation must be held, and no two may share one.
 */
void bo_unreserve_list_at(struct ttm_bo *const *bos, unsigned int n,
			  const char *file, int line);
/*
 * @bo's last reference went: out of its bulk move (takes dev->lock), so
 * that the bulk's owner may finalise it while @bo waits for its fences.
 */
void bo_lru_release(struct ttm_bo *bo);

/*
 * Evict reserved, unpinned @victim out of @domain (bo/bo_evict.c): the
 * driver's evict_flags, a target with room (else SYSTEM), swap_notify for
 * SYSTEM, the move. 0 or the move's error.
 */
int bo_evict_victim(struct ttm_bo *victim, int domain,
		    const struct ttm_operation_ctx *ctx);

/*
 * Where in a domain a buffer may go: the window [@fpfn, @lpfn) of its
 * pages (@lpfn 0: to the end) and RANGE_* @flags, for the limited
 * domains; SYSTEM ignores them.
 */
struct bo_want {
	int domain;
	uint64_t fpfn, lpfn;
	unsigned int flags;
};

/* The whole of @domain. */
static inline struct bo_want bo_want_domain(int domain)
{
	return (struct bo_want){ .domain = domain };
}

struct ttm_place;

/*
 * Valid @place on @dev: its window of pages (visible VRAM applied; empty
 * if nothing is left) and the allocator's flags (bo/bo_res.c).
 */
struct bo_want bo_want_of(const struct ttm_device *dev,
			  const struct ttm_place *place);

/* ---- resources (bo/bo_res.c) ------------------------------------------- */

/*
 * Set up and tear down @dev's limited domains: a range manager and an
 * arena each (capacities, page size set). 0 or -ENOMEM, -EINVAL.
 */
int bo_res_init_device(struct ttm_device *dev);
void bo_res_fini_device(struct ttm_device *dev);

/* Pages of @size bytes on @dev. */
static inline uint64_t bo_pages(const struct ttm_device *dev, uint64_t size)
{
	return (size + dev->page_size - 1) >> dev->page_shift;
}

/*
 * Take room for @size bytes of @bo where @want says, if there is some
 * now: a new resource, its bytes accounted in the domain as incoming; NULL
 * if there is no room (or no memory for the struct). dev->lock held. Its
 * bytes are in the arena; SYSTEM's come with bo_res_fill().
 */
struct ttm_resource *bo_res_take_locked(struct ttm_device *dev,
					struct ttm_bo *bo,
					const struct bo_want *want,
					uint64_t size);

/*
 * bo_res_take_locked(), saying why it took nothing in *@ret_err:
 * -ENOSPC no room, -ENOMEM no memory for the struct. A caller that waits
 * or evicts for room must stop on -ENOMEM: no room it makes would do.
 */
struct ttm_resource *bo_res_take_err_locked(struct ttm_device *dev,
					    struct ttm_bo *bo,
					    const struct bo_want *want,
					    uint64_t size, int *ret_err);

/* Give back the room of a take whose move or creation did not happen. */
void bo_res_untake_locked(struct ttm_device *dev, struct ttm_resource *res);

/* The room of a resource that held a buffer's bytes goes back. */
void bo_res_release_locked(struct ttm_device *dev, struct ttm_resource *res);

/* Free @res and SYSTEM bytes, once out of its domain; no lock held. */
void bo_res_free(struct ttm_resource *res);

/*
 * Give @res its bytes if it has none yet (SYSTEM), zeroed if @zero (the
 * arena's too). No lock held. 0 or -ENOMEM.
 */
int bo_res_fill(struct ttm_device *dev, struct ttm_resource *res,
		uint64_t size, bool zero);

/* Whether @bo's resource lies where @want allows. */
bool bo_res_fits(const struct ttm_bo *bo, const struct bo_want *want);

/*
 * Move reserved, unpinned @bo to @res, taken for it
 * (bo_res_take_locked()); gives it back on failure
 * (bo/bo_move.c). Through the driver's move hook if it has one, with its
 * bounce (-EMULTIHOP) through a domain that must have room now: @bo may
 * then be left there if the second move fails.
 */
int bo_move(struct ttm_bo *bo, struct ttm_resource *res,
	    const struct ttm_operation_ctx *ctx);

/*
 * Wait until the oldest move source in flight in @domain is freed
 * (bo/bo_move.c). Return: 0; -ENOSPC if there is none; -EBUSY for
 * @ctx->no_wait_gpu; -EINTR.
 */
int bo_ghost_wait(struct ttm_device *dev, int domain,
		  const struct ttm_operation_ctx *ctx);

/*
 * Pipelined eviction (bo/bo_pipeline.c): a move source's range of a
 * limited domain is free as soon as its copy is queued; whoever takes an
 * overlapping range must not write it before that copy read it.
 *
 * bo_ghost_fences() - references to the fences @res's first write must
 * come after: its domain's move fence (the latest copy on the moves'
 * timeline, if not signalled) and those of the other move sources in
 * flight whose range overlaps @res's (a malloc()ed array in *@ret_fences,
 * NULL if none; their count in *@ret_n). No lock held. 0 or -ENOMEM.
 */
int bo_ghost_fences(struct ttm_device *dev, const struct ttm_resource *res,
		    struct ttm_fence ***ret_fences, unsigned int *ret_n);

/*
 * Order every later use of reserved @bo after the copies still reading
 * @res's range: their fences go into @bo's reservation as KERNEL fences,
 * which the move into @res (on the GPU, the driver's or on the CPU)
 * waits for. 0, -ENOMEM, or -EBUSY for @ctx->no_wait_gpu if one has not
 * signalled (as TTM's move fence); the caller's reserved slots are left
 * as they were.
 */
/*
 * Track pipelined @ghost (fence set, on dev->ghosts): its fence becomes
 * its domain's move fence if it is on the same timeline and later (or
 * the old one signalled), else it is scanned for overlaps. Untrack it
 * when it is released (its copy ended): if it was its domain's move
 * fence, that reference comes back, for the caller to put once dev->lock
 * is dropped. dev->lock held.
 */
void bo_ghost_track_locked(struct ttm_device *dev, struct bo_ghost *ghost);
struct ttm_fence *bo_ghost_untrack_locked(struct ttm_device *dev,
					  struct bo_ghost *ghost);

/*
 * Wait until no copy reads @domain's given-back ranges any more (the
 * suspend path, as TTM's evict-all waiting for the manager's move fence):
 * their room is free, but the memory is not yet. 0, -EBUSY for
 * @ctx->no_wait_gpu, -EINTR. No lock held.
 */
int bo_ghost_drain(struct ttm_device *dev, int domain,
		   const struct ttm_operation_ctx *ctx);

/* Drop the domains' move fences; at the device's free. */
void bo_ghost_fini_device(struct ttm_device *dev);

int bo_ghost_order(struct ttm_bo *bo, const struct ttm_resource *res,
		   const struct ttm_operation_ctx *ctx);

/*
 * For a CPU write into fresh @res (creation zeroes it): wait until the
 * copies still reading its range are done. 0, -EBUSY for
 * @ctx->no_wait_gpu (NULL: wait), -EINTR.
 */
int bo_ghost_await(struct ttm_device *dev, const struct ttm_resource *res,
		   const struct ttm_operation_ctx *ctx);

/*
 * Candidates the driver's eviction_valuable hook refused during the last
 * bo_evict_one() of a validation (bo/bo_evict.c): skipped by its walks,
 * and as good as pinned to the room wait that follows. Each holds a
 * reference, so that its address cannot be reused by a new buffer. Zero
 * it before the first bo_evict_one(); bo_vetoed_fini() after the last
 * bo_room_wait().
 */
struct bo_vetoed {
	struct ttm_bo **bos;
	unsigned int n, cap;
};

void bo_vetoed_fini(struct bo_vetoed *v);

/*
 * Make room for @bo where @want says by evicting one buffer other than
 * @bo, one of those whose going opens a hole it fits in (bo/bo_evict.c).
 * @vetoed: emptied, then filled with the candidates the driver's
 * eviction_valuable hook refused. Return: 0 if one was evicted (try
 * again), -ENOSPC if none can be, -EDEADLK (marked contended in
 * @ctx->exec), -EINTR, -ENOMEM, or the move hook's error.
 */
int bo_evict_one(struct ttm_bo *bo, const struct bo_want *want,
		 const struct ttm_operation_ctx *ctx,
		 struct bo_vetoed *vetoed);

/*
 * bo_evict_one() found nothing to evict where @want says for @bo. -ENOSPC
 * if nothing ever could be: @bo fits in no hole left by the pinned buffers,
 * those of @ctx->exec's job and those the driver refused to evict in
 * @vetoed (bo_evict_one()), or there is no ticket (then buffers held by
 * anyone are as good as pinned, the caller itself may hold them).
 * Otherwise what is left is held only for a moment: by another thread's
 * eviction, by a reservation without a ticket (a move may run under it),
 * or by a buffer waiting for delayed destroy. Wait a little for the
 * device's accounting to change, and return 0 to try again;
 * -EBUSY for @ctx->no_wait_gpu, -EINTR if interruptible.
 */
int bo_room_wait(struct ttm_bo *bo, const struct bo_want *want,
		 const struct ttm_operation_ctx *ctx,
		 const struct bo_vetoed *vetoed, unsigned int gen);

/*
 * The room wait's event (bo/bo_room.c). A validation that must make room
 * registers (bo_room_enter()) before its first attempt, and reads the
 * generation (bo_room_gen()) before each attempt; bo_room_wait() sleeps
 * only while the generation is still the one read. Whatever frees room
 * or releases a reservation bumps the generation: under dev->lock,
 * bo_room_changed_locked(); after a reservation's unlock, without it,
 * bo_room_notify(), which looks at the count of registered validations
 * after a full barrier, so that either it sees the validation or the
 * validation's attempt sees the lock released (Dekker): no lost wake-up,
 * and no device lock taken by an unreserve nobody waits for.
 */
void bo_room_enter(struct ttm_device *dev);
void bo_room_leave(struct ttm_device *dev);

/* Bumped by every ttm_resv_unlock(), of any device's reservation. */
extern unsigned int bo_room_resv_gen;

/* The device's generation plus ttm_resv_unlock()'s (bo/bo_room.c). */
static inline unsigned int bo_room_gen(struct ttm_device *dev)
{
	return __atomic_load_n(&dev->room_gen, __ATOMIC_ACQUIRE) +
	       __atomic_load_n(&bo_room_resv_gen, __ATOMIC_SEQ_CST);
}

/* Room came free or a reservation was released; dev->lock held. */
void bo_room_changed_locked(struct ttm_device *dev);

void bo_room_notify_slow(struct ttm_device *dev);

/*
 * Whether a validation is registered, read after a full barrier that
 * follows the caller's unlock. ThreadSanitizer does not model fences (GCC
 * warns, util/compiler.h's TTM_TSAN): under it the count is read with a
 * read-modify-write, which it does model.
 */

static inline unsigned int bo_room_waiters_after_barrier(
	struct ttm_device *dev)
{
#ifdef TTM_TSAN
	return __atomic_fetch_add(&dev->room_waiters, 0, __ATOMIC_SEQ_CST);
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&dev->room_waiters, __ATOMIC_RELAXED);
#endif
}

/* A reservation of @dev was just unlocked; no lock of @dev held. */
static inline void bo_room_notify(struct ttm_device *dev)
{
	if (__builtin_expect(bo_room_waiters_after_barrier(dev) != 0, 0))
		bo_room_notify_slow(dev);
}

/* ww_mutex_unlock() of a buffer's reservation, then bo_room_notify(). */
void bo_resv_unlock(struct ttm_bo *bo);

/*
 * Sleep until the generation moves from @gen (or an interrupt with
 * @interruptible: -EINTR), at most the safety timeout, counted in
 * room_wait_timeouts. 0 otherwise.
 */
int bo_room_sleep(struct ttm_device *dev, unsigned int gen,
		  bool interruptible);

/*
 * For tests only, as ttmsim_test_ww_woken() (include/ww/slowpath.h): a
 * program defining it is called by bo_room_sleep() once the thread is
 * registered as a sleeper, just before it sleeps, and may change the
 * safety timeout *@timeout_ns (to prove that the wake-up does not depend
 * on it). Weak and undefined in the library: not part of the ABI.
 */
void ttmsim_test_bo_room_sleep(struct ttm_device *dev, uint64_t *timeout_ns)
	__attribute__((weak, visibility("default")));

#endif /* TTMSIM_BO_BO_H */
