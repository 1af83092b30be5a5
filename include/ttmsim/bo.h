/* SPDX-License-Identifier: MIT */
/*
 * Buffer objects and the device they live on, modelled on TTM.
 *
 * A device has three memory domains: VRAM and GTT, limited, and SYSTEM,
 * unlimited. Each buffer resident in a domain has a real, zero-filled
 * allocation of its own, and the device accounts every byte: the bytes
 * used in a domain never exceed its capacity and always equal the sizes of
 * the buffers resident there plus the sources of moves still in flight.
 * ttm_device_check() verifies that.
 *
 * Each buffer embeds a reservation object (ttmsim/resv.h): its ww_mutex,
 * of the device's class, is the buffer's reservation lock, and its fences
 * say which GPU work still uses the buffer. Each domain keeps its unpinned
 * resident buffers on an LRU list; unreserving a buffer moves it to the
 * tail, so the head is the buffer used longest ago. Every LRU operation is
 * O(1).
 *
 * Several buffers are reserved together with the locking helper of
 * ttmsim/exec.h. ttm_bo_validate() makes a buffer resident in its
 * placement, evicting others under the helper's ticket when a domain is
 * full. A move is a copy job on the device's fake GPU; the source memory
 * stays allocated and accounted (a "ghost", as TTM's ghost objects) until
 * the copy's fence signals, so nothing reuses it early.
 */
#ifndef TTMSIM_BO_H
#define TTMSIM_BO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ttmsim/gpu.h"
#include "ttmsim/resv.h"
#include "ttmsim/ww_mutex.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ttm_device;
struct ttm_bo;
struct ttm_exec;
struct ttm_lru_bulk_move;

/**
 * enum ttm_domain - a memory domain.
 * @TTM_DOMAIN_VRAM: device memory: limited.
 * @TTM_DOMAIN_GTT: GPU-mapped system memory: limited.
 * @TTM_DOMAIN_SYSTEM: plain system memory: unlimited.
 * @TTM_DOMAIN_COUNT: the number of domains.
 */
enum ttm_domain {
	TTM_DOMAIN_VRAM,
	TTM_DOMAIN_GTT,
	TTM_DOMAIN_SYSTEM,
	TTM_DOMAIN_COUNT,
};

/*
 * Flags of struct ttm_place. TTM_PLACE_CONTIGUOUS and TTM_PLACE_TOPDOWN
 * are TTM's TTM_PL_FLAG_CONTIGUOUS and TTM_PL_FLAG_TOPDOWN.
 * TTM_PLACE_CPU_VISIBLE has no TTM flag: amdgpu says the same by setting
 * lpfn to the visible VRAM's pages (AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED
 * in amdgpu_bo_placement_from_domain()); ttmsim clips the range itself.
 */
#define TTM_PLACE_CONTIGUOUS  (1u << 0)
#define TTM_PLACE_TOPDOWN     (1u << 1)
#define TTM_PLACE_CPU_VISIBLE (1u << 2)
/* Every flag ttmsim knows; any other bit is refused. */
#define TTM_PLACE_FLAGS_ALL \
	(TTM_PLACE_CONTIGUOUS | TTM_PLACE_TOPDOWN | TTM_PLACE_CPU_VISIBLE)

/**
 * struct ttm_place - one place a buffer may live: a domain, a page range
 * in it and how to allocate there, as TTM's struct ttm_place.
 * @domain: the domain.
 * @fpfn: the first page of the range, in units of the device's page size
 *	(ttm_device_page_size()); it must lie inside the domain.
 * @lpfn: the page after the range's last one: the range is
 *	[@fpfn, @lpfn), as TTM's range manager uses it (drm_mm's exclusive
 *	end, although TTM's comment calls it the "last valid" page); 0: to
 *	the end of the domain. Past the end of the domain, it stops there.
 *	A range in SYSTEM, which has no addresses, is refused.
 * @flags: TTM_PLACE_CONTIGUOUS: in one piece; TTM_PLACE_TOPDOWN: from the
 *	top of the range down; TTM_PLACE_CPU_VISIBLE (VRAM only): inside
 *	the CPU-visible part of VRAM (struct ttm_device_options::
 *	visible_vram), i.e. @lpfn clipped to the visible pages.
 *
 * A buffer resident in @domain matches the place when its whole range of
 * pages lies inside the place's window ([@fpfn, @lpfn), clipped to the
 * visible VRAM with TTM_PLACE_CPU_VISIBLE); a buffer larger than the
 * window gets -ENOSPC at once.
 */
struct ttm_place {
	enum ttm_domain domain;
	uint32_t fpfn;
	uint32_t lpfn;
	uint32_t flags;
};

/*
 * The most places a placement can list: one domain may be listed more
 * than once with different ranges (VRAM visible, VRAM anywhere, GTT,
 * SYSTEM, ...).
 */
#define TTM_PLACEMENT_MAX 6

/**
 * struct ttm_placement - where a buffer may live, most preferred first.
 * @count: 1 to TTM_PLACEMENT_MAX.
 * @places: the places, tried in order. A domain may come more than once
 *	with different ranges or flags; the same place twice is refused.
 */
struct ttm_placement {
	unsigned int count;
	struct ttm_place places[TTM_PLACEMENT_MAX];
};

/* An initialiser of a struct ttm_place for all of domain @d. */
#define TTM_PLACE_INIT(d) { .domain = (d) }

/**
 * ttm_place_domain() - a place for all of a domain, without flags.
 * @domain: the domain.
 *
 * Context: Does not sleep.
 * Return: the place.
 */
static inline struct ttm_place ttm_place_domain(enum ttm_domain domain)
{
	return (struct ttm_place)TTM_PLACE_INIT(domain);
}

#ifndef TTM_LIST_NODE_DEFINED
#define TTM_LIST_NODE_DEFINED
/**
 * struct ttm_list_node - a link of one of ttmsim's lists, in its structs.
 *
 * The fields are private to ttmsim.
 */
struct ttm_list_node {
	/* private: */
	struct ttm_list_node *prev, *next;
};
#endif

/**
 * enum ttm_bo_type - what a buffer is for, as TTM's buffer types.
 * @TTM_BO_TYPE_DEVICE: a buffer clients may see: it can get handles
 *	(ttm_client_bo_add()) and be exported.
 * @TTM_BO_TYPE_KERNEL: the driver's own: it never gets a client handle.
 * @TTM_BO_TYPE_SG: another device's buffer seen by this one, as TTM's sg
 *	buffers of a PRIME import (ttm_bo_import()): its pages are the
 *	exporter's, it shares the exporter's reservation, and it can get
 *	handles.
 */
enum ttm_bo_type {
	TTM_BO_TYPE_DEVICE,
	TTM_BO_TYPE_KERNEL,
	TTM_BO_TYPE_SG,
};

struct ttm_bo_profile;
struct ttm_bo_prime;
struct ttm_resource;

/**
 * struct ttm_bo - a buffer object, for drivers to embed in their own.
 * @resv: the reservation that protects the buffer: its own, or the one
 *	it shares with others (see ttm_bo_init_reserved()). Read it with
 *	ttm_bo_resv(); never change it.
 *
 * A driver that embeds the struct in its object finds the object again
 * with container_of() and initialises the buffer with
 * ttm_bo_init_reserved(). The other fields are private to ttmsim; their
 * layout is part of the ABI (the library's soname version changes with
 * it, see the README).
 */
struct ttm_bo {
	struct ttm_resv *resv;
	/* private: */
	/*
	 * What a reserve, the validate of a buffer in place and an unreserve
	 * touch comes first, in as few cache lines as can be (at 1M buffers
	 * each line is a miss): the reservation's lock next, then the LRU.
	 * 168 bytes in all, so that a buffer of ttm_bo_create() and its
	 * malloc() header take 176 (docs/bo-design.md, "Bytes per buffer").
	 */
	struct ttm_resv base;           /* own; @resv unless shared */
	struct ttm_device *dev;
	int domain;                     /* enum ttm_domain; atomic */
	unsigned int pin_count;         /* under the reservation */
	struct ttm_list_node node;      /* on an LRU or the pinned list */
	unsigned int node_kind;         /* 0; a walk's hitch's is not */
	uint8_t type;                   /* enum ttm_bo_type */
	bool evict_mark;                /* the eviction search's, dev lock */
	uint8_t destroy_pending;        /* a zombie: waits for its fences */
	bool individualize;             /* the worker copies the fences */
	uint64_t lru_gen;               /* when it last joined its LRU */
	struct ttm_lru_bulk_move *bulk; /* under the reservation */
	/* Cold from here on. */
	struct ttm_resource *res;       /* where the bytes are */
	int refcount;                   /* atomic */
	uint32_t size;                  /* at most TTM_BO_MAX_SIZE */
	/*
	 * The placement and destroy it was created with: the device's one
	 * copy of that pair, shared by every buffer created with it
	 * (bo/bo_profile.c), immutable, freed with the last of them.
	 */
	const struct ttm_bo_profile *profile;
	/*
	 * Delayed destroy: the one fence callback node, armed on one
	 * fence at a time; once none is armed (its callback ran and found
	 * no fence left), the link on the device's worker queue instead.
	 */
	union {
		struct ttm_fence_cb destroy_cb;
		struct ttm_bo *destroy_next;
	};
	/*
	 * PRIME, allocated by an import or the first import of this one:
	 * TTM_BO_TYPE_SG, the buffer whose pages these are and the next
	 * import of it; an exported buffer, its imports (bo/bo_import.c).
	 */
	struct ttm_bo_prime *prime;
	/* The eviction search's, under the device lock (bo/bo_evict.c). */
	struct ttm_bo *scan_next;
};

/*
 * Initialisers of the usual placements, for struct ttm_placement variables
 * (the example of ttmsim/execbuf.h uses one).
 */
#define TTM_PLACEMENT_VRAM_GTT_INIT \
	{ 2, { TTM_PLACE_INIT(TTM_DOMAIN_VRAM), \
	       TTM_PLACE_INIT(TTM_DOMAIN_GTT) } }
#define TTM_PLACEMENT_VRAM_INIT   { 1, { TTM_PLACE_INIT(TTM_DOMAIN_VRAM) } }
#define TTM_PLACEMENT_GTT_INIT    { 1, { TTM_PLACE_INIT(TTM_DOMAIN_GTT) } }
#define TTM_PLACEMENT_SYSTEM_INIT \
	{ 1, { TTM_PLACE_INIT(TTM_DOMAIN_SYSTEM) } }

/* Default capacities. */
#define TTM_DEFAULT_VRAM_SIZE (256ull << 20)
#define TTM_DEFAULT_GTT_SIZE  (1ull << 30)
/* The default allocation granularity: the kernel's PAGE_SIZE. */
#define TTM_DEFAULT_PAGE_SIZE 4096ull

/* The largest buffer: 1 GiB. */
#define TTM_BO_MAX_SIZE (1ull << 30)

/* ttm_bo_create() flag: never wait for the GPU (as no_wait_gpu). */
#define TTM_BO_CREATE_NO_WAIT_GPU (1u << 0)

struct ttm_operation_ctx;

/*
 * ttm_device_funcs::move's return asking for ttmsim's own copy (the
 * default move) after the hook did what it needed (a veto it did not
 * use, mappings invalidated).
 */
#define TTM_MOVE_DEFAULT 1

/**
 * struct ttm_device_funcs - a driver's hooks into buffer moves, eviction
 * and destruction, as the kernel's struct ttm_device_funcs.
 * @move: move reserved @bo from @from to @to: copy @bo's memory, @src,
 *	to @dst, new memory of @bo's size that ttmsim allocated in @to
 *	(drivers also invalidate their mappings of @bo here, as in the
 *	kernel). Either way the copy must come after every fence of @bo
 *	(ttm_bo_resv()): its KERNEL ones include the copies still reading
 *	@dst's range, which an earlier eviction gave back before its copy
 *	ended (pipelined eviction). Return 0 with *@ret_fence NULL if the
 *	copy is done (a CPU copy waits for those fences first), or with
 *	the fence of the copy job (a reference, passed to ttmsim), which
 *	must depend on them; ttmsim adds it to @bo's reservation with
 *	KERNEL usage. @src stays allocated until it signals: a SYSTEM
 *	block stays accounted too; a VRAM or GTT range is given back at
 *	once, and whoever takes it next writes it only after this fence. TTM_MOVE_DEFAULT: ttmsim copies as without the
 *	hook. -EMULTIHOP: the move needs a bounce through the domain set in
 *	*@ret_hop (left as set, TTM_DOMAIN_GTT): ttmsim moves @bo there
 *	first (the hook is called for that move too, which may not ask for
 *	a hop again), then to @to. Any other negative errno vetoes the
 *	move: ttm_bo_validate() (or the eviction) fails with it, and @bo
 *	stays where it was, its contents untouched. @ctx is the caller's.
 *	Context: May sleep (ctx->no_wait_gpu: should not wait for the GPU).
 *	@bo reserved by the calling thread; no other lock of ttmsim held.
 * @evict_flags: where eviction moves reserved @bo out of @from: fill
 *	@placement (preset with the default: GTT then SYSTEM for VRAM,
 *	SYSTEM for GTT, whole domains). The first valid place listed whose
 *	domain is not @from and that has room now is taken, without
 *	evicting further; if none has, SYSTEM. A place in @from itself
 *	(another range of it) is skipped for now.
 *	Context: Does not sleep. @bo reserved for the eviction (by the
 *	evicting thread, possibly through its ticket); no other lock of
 *	ttmsim held.
 * @eviction_valuable: whether eviction may take @bo, a candidate on the
 *	LRU of @domain, to make room for @for_bo; false vetoes it and the
 *	walk goes on to the next buffer. When no candidate is left, the
 *	vetoed ones count as pinned: -ENOSPC if @for_bo could fit only
 *	were they moved (no hole, or not enough bytes, beside them);
 *	if only buffers held for a moment stand in the way, the
 *	validation waits a little and asks the driver again.
 *	Context: Does not sleep. @bo reserved for the eviction as in
 *	@evict_flags; @for_bo reserved by the calling thread, or (creation)
 *	not yet visible to anyone; no other lock of ttmsim held.
 * @delete_mem_notify: @bo's memory in @domain is about to be freed: after
 *	a move, its old memory (freed once the move's fence signals); at
 *	destroy, its memory, once its last fence signalled (as TTM's
 *	cleanup after the delayed delete: the GPU is done with it, so a
 *	driver may tear its mappings down). Called once per memory, before
 *	anything can reuse it.
 *	Context: Does not sleep. After a move @bo is reserved by the calling
 *	thread. At destroy its last reference is gone and nobody else may
 *	use it; called in the thread of the last ttm_bo_put() for an idle
 *	buffer, in the device's worker for a busy one. No other lock of
 *	ttmsim held, except at destroy when the last reference was the
 *	PRIME registry's (see @release_notify).
 * @swap_notify: @bo is about to be evicted to SYSTEM. ttmsim has no
 *	swap-out (the kernel calls this before swapping a buffer out to the
 *	shmem backing); eviction to SYSTEM is its nearest equivalent. Called
 *	before the move, which may still fail.
 *	Context: Does not sleep. @bo reserved as in @evict_flags; no other
 *	lock of ttmsim held.
 * @release_notify: @bo's last reference went; called before its
 *	delayed destroy starts waiting for its fences, so before
 *	@delete_mem_notify.
 *	Context: Does not sleep. Called in the thread of the last
 *	ttm_bo_put(); @bo is not reserved and nobody else may use it. No
 *	lock of ttmsim held, except when that put is the PRIME registry's
 *	dropping a descriptor's reference: its lock is held then
 *	(docs/locking.md), so neither hook may make a PRIME call
 *	(ttm_client_export_fd(), ttm_client_import_fd(), ttm_client_close()).
 *
 * Every hook is optional: NULL keeps ttmsim's own behaviour. Each gets
 * struct ttm_device_options::funcs_data as @data.
 *
 * No hook runs with the device lock held or inside a fence callback: a
 * hook may take the driver's own locks, call ttm_device_get_stats() or
 * ttm_device_check(), and sleep where its Context says so. None may
 * reserve, validate or put another buffer of the device, or release the
 * reservation it was given (docs/locking.md).
 */
struct ttm_device_funcs {
	int (*move)(struct ttm_bo *bo, enum ttm_domain from,
		    enum ttm_domain to, const struct ttm_gpu_range *src,
		    const struct ttm_gpu_range *dst,
		    const struct ttm_operation_ctx *ctx, void *data,
		    struct ttm_fence **ret_fence, enum ttm_domain *ret_hop);
	void (*evict_flags)(struct ttm_bo *bo, enum ttm_domain from,
			    struct ttm_placement *placement, void *data);
	bool (*eviction_valuable)(struct ttm_bo *bo, enum ttm_domain domain,
				  struct ttm_bo *for_bo, void *data);
	void (*delete_mem_notify)(struct ttm_bo *bo, enum ttm_domain domain,
				  void *data);
	void (*swap_notify)(struct ttm_bo *bo, void *data);
	void (*release_notify)(struct ttm_bo *bo, void *data);
};

/**
 * struct ttm_device_options - how to build a device; all zeros (or a NULL
 * pointer) means the defaults.
 * @vram_size: VRAM capacity in bytes; 0: TTM_DEFAULT_VRAM_SIZE. Rounded
 *	down to whole pages of @page_size (less than one: -EINVAL).
 * @gtt_size: GTT capacity in bytes; 0: TTM_DEFAULT_GTT_SIZE. Rounded as
 *	@vram_size.
 * @wound_wait: give the device a reservation class of its own, of the
 *	Wound-Wait kind, named "reservation_ww_class.wound_wait.<n>" in
 *	checker reports; its tickets lock only its buffers. false (the
 *	default): the one Wait-Die class every such device shares, as the
 *	kernel's global reservation_ww_class, so that one ticket may lock
 *	buffers of several devices.
 * @gpu: the fake GPU that runs moves (ttm_bo_validate()); it must
 *	outlive the device. The device makes a scheduler per engine of it
 *	(ttm_device_sched()), and moves go through the copy engine's at
 *	the KERNEL priority. NULL: moves copy on the CPU, synchronously.
 * @copy_engine: the engine of @gpu that runs moves.
 * @funcs: the driver's hooks (struct ttm_device_funcs), which must
 *	outlive the device; NULL: none.
 * @funcs_data: passed to every hook.
 * @page_size: the allocation granularity in bytes, the unit of struct
 *	ttm_place's @fpfn and @lpfn: a power of two, at least 4; 0: 4096,
 *	the kernel's PAGE_SIZE. VRAM and GTT must have at most UINT32_MAX
 *	pages of it.
 * @visible_vram: the bytes of VRAM the CPU can see, from its start
 *	(TTM_PLACE_CPU_VISIBLE): at most the VRAM's size and a multiple of
 *	@page_size; 0: a quarter of VRAM, rounded down to @page_size.
 */
struct ttm_device_options {
	uint64_t vram_size;
	uint64_t gtt_size;
	bool wound_wait;
	struct ttm_gpu *gpu;
	unsigned int copy_engine;
	const struct ttm_device_funcs *funcs;
	void *funcs_data;
	uint64_t page_size;
	uint64_t visible_vram;
};

/**
 * struct ttm_domain_stats - one domain, in bytes.
 * @capacity: UINT64_MAX for SYSTEM.
 * @used: bytes allocated in the domain, SYSTEM's move sources in flight
 *	included (a VRAM or GTT source's range is free once its copy is
 *	queued);
 *	whole pages in VRAM and GTT (a buffer of 5 bytes takes a page).
 * @buffers: resident buffers, pinned or not.
 * @pinned: bytes of the pinned buffers resident in the domain, in @used.
 */
struct ttm_domain_stats {
	uint64_t capacity;
	uint64_t used;
	uint64_t buffers;
	uint64_t pinned;
};

/**
 * struct ttm_device_stats - a snapshot of a device.
 * @domain: each domain, indexed by enum ttm_domain.
 * @buffers: buffers whose memory is still allocated, including those
 *	waiting for their delayed destroy.
 * @zombies: buffers whose last reference is gone but whose fences have
 *	not all signalled (delayed destroy).
 * @evictions: buffers moved out of a domain to make room.
 * @moves: moves done (evictions included).
 * @bytes_moved: the bytes of those moves.
 * @enospc: -ENOSPC returns.
 * @room_waits: waits of validations that found nothing to evict but
 *	room that buffers held for a moment would free (another thread's
 *	eviction, a reservation without a ticket, a buffer waiting for
 *	delayed destroy), rather than fail a job that fits. Each sleeps until
 *	room is freed or a reservation is released.
 * @room_wait_timeouts: those of @room_waits whose safety timeout (10 ms)
 *	made up for a lost wake-up: the room changed while the waiter slept
 *	and no wake-up reached it. 0 unless ttmsim has a bug. A wait that
 *	times out with nothing changed (what ttmsim cannot see: a
 *	reservation unlocked with a bare ww_mutex_unlock(), use
 *	ttm_resv_unlock(); an import's reservation released on the
 *	exporter's device) is not counted.
 */
struct ttm_device_stats {
	struct ttm_domain_stats domain[TTM_DOMAIN_COUNT];
	uint64_t buffers;
	uint64_t zombies;
	uint64_t evictions;
	uint64_t moves;
	uint64_t bytes_moved;
	uint64_t enospc;
	uint64_t room_waits;
	uint64_t room_wait_timeouts;
};

/**
 * ttm_device_create() - a new device with empty domains.
 * @opts: NULL for the defaults.
 * @ret_dev: the new device.
 *
 * Context: May sleep: with a TTM_GPU_DETERMINISTIC @opts->gpu it waits
 * for a concurrent ttm_gpu_advance() (its schedulers join the GPU's
 * clock: ttm_sched_gpu_create()). Otherwise it does not sleep; with a
 * real-time GPU it starts a scheduler thread per engine.
 * Return: 0 and *@ret_dev; -EINVAL if @opts->copy_engine is not an engine
 * of @opts->gpu, or for a bad @opts->page_size or @opts->visible_vram;
 * -ENOMEM; -EAGAIN (no thread).
 */
int ttm_device_create(const struct ttm_device_options *opts,
		      struct ttm_device **ret_dev);

/**
 * ttm_device_destroy() - free @dev, once no caller holds a buffer of it.
 * @dev: the device, or NULL.
 *
 * Every buffer must have been put: while a buffer of @dev still has a
 * reference, nothing is destroyed and -EBUSY is returned (the buffer's
 * last put would free into the device); with the ww debug checker on,
 * that is also reported (rule 12, device-busy: the report names @dev and
 * the number of buffers still alive; a handler's return does not change
 * the -EBUSY). Buffers waiting for their delayed destroy and the sources
 * of moves in flight are waited for: their fences must signal eventually.
 * Unlike the kernel's ttm_device_fini(), which returns nothing and leaves
 * the check to the driver.
 *
 * From a buffer's destroy (ttm_bo_init_reserved()) run by the device's
 * worker, as when the last object's destroy tears the device down, it
 * returns at once without waiting: the worker finishes the delayed
 * destroys still pending, calling none of the driver's hooks (whose data
 * the driver may free once this returns), then frees @dev itself and
 * ends. @dev must not be used after the call, there as anywhere.
 *
 * Context: May sleep. Takes and releases the device lock, and destroys
 * the device's schedulers (on a deterministic GPU that takes its advance
 * lock). Not from a fence callback (the delayed destroys it waits for run
 * in them), the GPU's retire hook or a scheduler op.
 * Return: 0 (also for NULL), or -EBUSY with @dev unchanged and usable.
 */
int ttm_device_destroy(struct ttm_device *dev);

/**
 * ttm_device_flush_destroys() - wait for the delayed destroys that are due.
 * @dev: the device.
 *
 * A buffer whose last reference went while it was busy is freed by the
 * device's worker thread once its fences signalled (ttm_bo_put()): its
 * memory and its count in the stats stay until then. This waits until the
 * worker has freed every buffer whose fences had all signalled when it was
 * called, as flushing TTM's delayed-delete workqueue.
 *
 * Context: May sleep. Not from a buffer's destroy (it returns at once
 * there), nor while holding a lock that destroy takes.
 */
void ttm_device_flush_destroys(struct ttm_device *dev);

/**
 * ttm_device_ww_class() - the class of @dev's reservation locks.
 * @dev: the device.
 *
 * Initialise the acquire contexts (tickets) that reserve its buffers with
 * it. Every device created without struct ttm_device_options::wound_wait
 * returns the same class, so a ticket of any of them locks the buffers of
 * all (as with the kernel's reservation_ww_class).
 *
 * Context: Does not sleep.
 * Return: the class, which lives as long as @dev (the shared one: as long
 * as the library).
 */
struct ww_class *ttm_device_ww_class(struct ttm_device *dev);

/**
 * ttm_device_gpu() - the GPU @dev moves buffers with.
 * @dev: the device.
 *
 * Context: Does not sleep.
 * Return: struct ttm_device_options::gpu; NULL if none.
 */
struct ttm_gpu *ttm_device_gpu(struct ttm_device *dev);

struct ttm_sched;

/**
 * ttm_device_sched() - the scheduler of one engine of @dev's GPU.
 * @dev: the device.
 * @engine: the engine.
 *
 * A device with a GPU makes one fake-GPU scheduler per engine
 * (ttm_sched_gpu_create()) and submits its moves through a
 * KERNEL-priority entity on the copy engine's; execbuf's clients get
 * entities on them too. A driver that submits its own jobs to the
 * device's GPU should create its entities here and use
 * ttm_sched_gpu_submit(), as a kernel driver goes through its
 * scheduler: a job given to ttm_gpu_submit() directly waits for its
 * dependencies at the head of its engine, and if one is a scheduler's
 * fence whose job has not reached that engine yet (a move's, say), the
 * engine stops for good: the job it waits for would run behind it.
 * Entities must be destroyed before the device.
 *
 * Context: Does not sleep.
 * Return: the scheduler, which lives as long as @dev and follows its GPU's
 * clock (the virtual one of a TTM_GPU_DETERMINISTIC GPU: its jobs then
 * reach the GPU in ttm_gpu_advance()); NULL if @dev has no GPU or
 * @engine is out of range.
 */
struct ttm_sched *ttm_device_sched(struct ttm_device *dev, unsigned int engine);

/**
 * ttm_device_page_size() - @dev's allocation granularity.
 * @dev: the device.
 *
 * The unit of struct ttm_place's @fpfn and @lpfn.
 *
 * Context: Does not sleep.
 * Return: the page size in bytes (struct ttm_device_options::page_size).
 */
uint64_t ttm_device_page_size(const struct ttm_device *dev);

/**
 * ttm_device_visible_vram() - the bytes of @dev's CPU-visible VRAM.
 * @dev: the device.
 *
 * Context: Does not sleep.
 * Return: the bytes from the start of VRAM that the CPU can see (struct
 * ttm_device_options::visible_vram).
 */
uint64_t ttm_device_visible_vram(const struct ttm_device *dev);

/**
 * ttm_device_mem_overlaps() - does a range touch @dev's VRAM or GTT?
 * @dev: the device.
 * @addr: the start of the range.
 * @length: its length in bytes.
 *
 * VRAM and GTT buffers live in one arena per domain, mapped once for the
 * device's life; ttm_bo_vmap() hands out addresses in them. A caller
 * that would unmap or free memory by address (the drm-shim's munmap(2),
 * through ttm_drm_device_mem_overlaps()) asks this first: releasing arena
 * pages would pull them from under every buffer there. SYSTEM buffers
 * are allocated one by one and are not counted.
 *
 * Context: Does not sleep. Takes no lock: the arenas do not move.
 * Return: true if [@addr, @addr + @length) overlaps an arena (a range
 * running past the end of the address space is cut there); false for
 * @length 0.
 */
bool ttm_device_mem_overlaps(const struct ttm_device *dev, const void *addr,
			     size_t length);

/**
 * ttm_device_set_private() - attach the driver's per-device data, once,
 * as a DRM device's dev_private.
 * @dev: the device.
 * @data: the state to attach.
 * @release: called with the attached data by ttm_device_destroy(), after
 *	every delayed destroy and move; may be NULL.
 *
 * The slot is the driver's alone: ttmsim's own layers (execbuf's
 * counters) keep their per-device state elsewhere, so clients and
 * submissions work the same before and after it is set.
 *
 * Context: Does not sleep. Takes and releases the device lock. Any thread:
 * of two racing callers, the first wins.
 * Return: the attached data: @data, or the data attached before (then
 * @data was not taken and @release will not see it).
 */
void *ttm_device_set_private(struct ttm_device *dev, void *data,
			     void (*release)(void *data));

/**
 * ttm_device_private() - the data attached by ttm_device_set_private().
 * @dev: the device.
 *
 * Context: Does not sleep. Takes no lock.
 * Return: the data, or NULL if none is attached.
 */
void *ttm_device_private(struct ttm_device *dev);

/**
 * ttm_device_get_stats() - a snapshot of @dev's accounting and counters.
 * @dev: the device.
 * @stats: filled in.
 *
 * Context: Does not sleep. Takes and releases the device lock: the
 * snapshot is consistent.
 */
void ttm_device_get_stats(struct ttm_device *dev,
			  struct ttm_device_stats *stats);

/**
 * ttm_device_check() - verify @dev's accounting invariant.
 * @dev: the device.
 * @buf: where to describe the first violation found (may be NULL).
 * @len: size of @buf.
 *
 * Checks, for every domain, that the bytes used do not exceed the
 * capacity and equal the sum of the sizes of its resident buffers and of
 * the sources of moves in flight, that every buffer on a
 * domain's lists says it lives there, that the lists are well linked,
 * that the pinned bytes of each domain are those of its pinned buffers,
 * and that each bulk move's group (ttmsim/lru.h) is contiguous on its LRU
 * between the ends it records.
 * Walks every buffer: for tests and the CLI, not for hot paths.
 *
 * Context: Does not sleep. Takes and releases the device lock; callable
 * any time.
 * Return: 0, or -EUCLEAN if the invariant does not hold.
 */
int ttm_device_check(struct ttm_device *dev, char *buf, size_t len);

/**
 * ttm_bo_offset() - where @bo's bytes start in its domain, as TTM's
 * resource start (bo->resource->start, in pages there).
 * @bo: the buffer, reserved by the caller: a move changes it.
 *
 * VRAM and GTT are ranges of addresses (an arena each): a buffer lives
 * at its offset there, in whole pages of the device's granularity, and
 * no two resident buffers' ranges overlap.
 *
 * Context: Does not sleep.
 * Return: the offset in bytes, a multiple of the device's page size; 0
 * in SYSTEM, which has no addresses.
 */
uint64_t ttm_bo_offset(const struct ttm_bo *bo);

/**
 * ttm_bo_import() - @dev's buffer for @exported, as a driver's PRIME
 * import (the kernel's drm_gem_prime_import() with a TTM sg buffer).
 * @dev: the importing device.
 * @exported: a buffer of any device, referenced by the caller.
 * @ret_bo: a reference to the buffer @dev sees it as.
 *
 * A buffer of @dev itself is returned as it is (a new reference), as is
 * the exporter's own buffer when @exported is itself an import into
 * another device. Otherwise the result is a buffer of @dev of type
 * TTM_BO_TYPE_SG, the one @dev already has for that buffer if it is still
 * alive, else a new one: it shares the exporter's reservation (one lock,
 * one set of fences), so a job of either device waits for the other's,
 * and its contents are the exporter's pages, wherever the exporter moves
 * them while the reservation is free. It holds a reference to the
 * exporter's buffer until its own last put (the exporter's reservation
 * keeps its work, which the exporter's delayed destroy waits for), and
 * pinning it pins the exporter. @dev never moves or evicts it: it is
 * accounted in
 * SYSTEM (it takes none of @dev's VRAM or GTT), and validating it
 * succeeds at once whatever the placement, as the exporter decides where
 * its pages live. The kernel's non-dynamic importers pin the exporter
 * instead; ttmsim's importers are all dynamic: the shared reservation,
 * held for every use, keeps the pages where they are.
 *
 * Context: Does not sleep. Takes and releases @dev's lock and the import
 * lock (docs/locking.md).
 * Return: 0 and *@ret_bo; -EXDEV if @exported's reservation is of another
 * class than @dev's (a Wound-Wait device's own class); -EINVAL for a
 * TTM_BO_TYPE_KERNEL buffer, which is never shared; -ENOMEM.
 */
int ttm_bo_import(struct ttm_device *dev, struct ttm_bo *exported,
		  struct ttm_bo **ret_bo);

/**
 * ttm_bo_exporter() - the buffer whose pages an import shows.
 * @bo: a buffer.
 *
 * Context: Does not sleep.
 * Return: the exporter's buffer for a TTM_BO_TYPE_SG buffer (no new
 * reference: it lives as long as @bo); @bo itself otherwise.
 */
struct ttm_bo *ttm_bo_exporter(struct ttm_bo *bo);

/**
 * ttm_bo_create() - a new zero-filled buffer holding one reference.
 * @dev: the device.
 * @size: in bytes: a multiple of 4, more than 0, at most TTM_BO_MAX_SIZE.
 * @placement: where it may live; copied.
 * @flags: 0, or TTM_BO_CREATE_NO_WAIT_GPU: fail with -EBUSY rather than
 *	wait for copies in flight to free room.
 * @ret_bo: the new buffer.
 *
 * Places the buffer in the first place of @placement with room for it;
 * if none has room, makes room as ttm_bo_validate() does, place by
 * place, but without a ticket: victims are only try-locked, so buffers
 * reserved by anyone are skipped, and there is no back-off. This is
 * ttm_bo_init_reserved() of a device buffer on a reservation of its own,
 * allocated here and freed by its last put, returned unreserved.
 *
 * Context: May sleep (allocation, waiting for copies in flight). Takes and
 * releases the device lock, and try-locks and releases the reservations
 * of eviction victims.
 * Return: 0 and *@ret_bo; -EINVAL for a bad size, placement or flags;
 * -ENOSPC if no allowed place can make room, or none could ever hold
 * @size bytes (counted in the stats); -EBUSY (see @flags); -ENOMEM.
 */
int ttm_bo_create(struct ttm_device *dev, uint64_t size,
		  const struct ttm_placement *placement, uint32_t flags,
		  struct ttm_bo **ret_bo);

/**
 * ttm_bo_create_fourcc() - ttm_bo_create() for a @width x @height image of
 * the DRM format @fourcc (libdrm's drm_fourcc.h), tightly packed.
 * @dev: the device.
 * @width: in pixels.
 * @height: in pixels.
 * @fourcc: the format.
 * @placement: as for ttm_bo_create().
 * @flags: as for ttm_bo_create().
 * @ret_bo: the new buffer.
 *
 * Single-plane formats of 1, 2 or 4 bytes per pixel are known (XRGB8888,
 * ARGB8888, XBGR8888, ABGR8888, RGBX8888, RGBA8888, BGRX8888, BGRA8888,
 * XRGB2101010, ARGB2101010, XBGR2101010, ABGR2101010, RG1616, GR1616,
 * RGB565, BGR565, XRGB1555, ARGB1555, RG88, GR88, R16, R8).
 *
 * Context: May sleep; locks as ttm_bo_create().
 * Return: as ttm_bo_create(); -EINVAL also for an unknown or multi-planar
 * format (NV12, ...), a zero dimension, or a size that is not a multiple
 * of 4 or exceeds TTM_BO_MAX_SIZE.
 */
int ttm_bo_create_fourcc(struct ttm_device *dev, uint32_t width,
			 uint32_t height, uint32_t fourcc,
			 const struct ttm_placement *placement,
			 uint32_t flags, struct ttm_bo **ret_bo);

/**
 * ttm_fourcc_cpp() - bytes per pixel of the DRM format @fourcc.
 * @fourcc: the format.
 *
 * Context: Does not sleep.
 * Return: the bytes per pixel of the formats ttm_bo_create_fourcc() knows;
 * 0 for any other (unknown, multi-planar).
 */
unsigned int ttm_fourcc_cpp(uint32_t fourcc);

/**
 * ttm_bo_get() - take a reference.
 * @bo: a buffer the caller holds a reference to, or NULL.
 *
 * Context: Does not sleep.
 * Return: @bo.
 */
struct ttm_bo *ttm_bo_get(struct ttm_bo *bo);

/**
 * ttm_bo_put() - drop a reference.
 * @bo: the buffer, or NULL.
 *
 * The last one destroys the buffer: at once, in the calling thread, if
 * its reservation holds no unsignalled fence (as TTM); otherwise (delayed
 * destroy) once the last of those fences signalled, in the device's
 * worker thread (TTM's delayed-delete workqueue), never in the signalling
 * thread. Either way the buffer's destroy (ttm_bo_init_reserved()) is
 * called exactly once, after its memory went back to its domain, without
 * the device lock. Until then the buffer keeps its memory, which stays
 * accounted, and its fences: a fence that never signals keeps it forever,
 * as in the kernel. A pin left on the buffer is dropped with it.
 *
 * A buffer on a shared reservation that is still busy first takes a copy
 * of the reservation's fences (TTM's "individualize"): its destroy waits
 * for those only, and the reservation is not used after this call
 * returns. Without memory for that copy (the one allocation a last put
 * may make) it stays on the shared reservation, whose owner may finalise
 * it only after @bo's destroy anyway, and waits for the fences found
 * there, later work included.
 *
 * Context: Does not sleep, never waits for a fence (the caller may be who
 * signals them), even without memory: the delayed destroy's one callback
 * is allocated with the buffer. Only when no thread can be created for
 * the device's worker does it wait for @bo's fences. The last put takes and
 * releases the device lock, and may call @bo's destroy. @bo's own
 * reservation must not be held by anyone when the last reference goes; a
 * shared one may be, by anyone, the caller included.
 */
void ttm_bo_put(struct ttm_bo *bo);

/**
 * ttm_bo_device() - the device @bo was created on.
 * @bo: the buffer.
 *
 * Context: Does not sleep.
 * Return: the device.
 */
struct ttm_device *ttm_bo_device(const struct ttm_bo *bo);

/**
 * ttm_bo_placement() - where @bo may live, as given at creation.
 * @bo: the buffer.
 *
 * Eviction may put it elsewhere, validation brings it back.
 *
 * Context: Does not sleep.
 * Return: the placement, which lives at least as long as @bo: the
 * device's one copy of it, shared by every buffer created with an equal
 * placement (places past its count ignored) and the same destroy.
 */
const struct ttm_placement *ttm_bo_placement(const struct ttm_bo *bo);

/**
 * ttm_bo_is_driver_bo() - whether @bo was initialised with @destroy.
 * @bo: the buffer.
 * @destroy: a driver's destroy callback, as given to ttm_bo_init_reserved().
 *
 * A driver asks it of a buffer behind a handle before it uses
 * container_of() to reach its object embedding @bo
 * (amdgpu_bo_is_amdgpu_bo()): the core's dumb buffers, ttm_bo_create()'s
 * and PRIME imports have the library's own destroy.
 *
 * Context: Does not sleep; no lock needed (fixed at initialisation).
 * Return: true if @bo's destroy callback is @destroy.
 */
bool ttm_bo_is_driver_bo(const struct ttm_bo *bo,
			 void (*destroy)(struct ttm_bo *bo));

/**
 * ttm_bo_size() - @bo's size.
 * @bo: the buffer.
 *
 * Context: Does not sleep.
 * Return: the size in bytes.
 */
uint64_t ttm_bo_size(const struct ttm_bo *bo);

/**
 * ttm_bo_domain() - where @bo lives now.
 * @bo: the buffer.
 *
 * Context: Does not sleep. Takes no lock: stable while @bo is reserved,
 * otherwise a snapshot.
 * Return: the domain.
 */
enum ttm_domain ttm_bo_domain(const struct ttm_bo *bo);

/**
 * ttm_bo_resv() - @bo's reservation object.
 * @bo: the buffer.
 *
 * Context: Does not sleep.
 * Return: the reservation object, @bo's own or the one it shares
 * (ttm_bo_init_reserved()); @bo's lock is its lock.
 */
struct ttm_resv *ttm_bo_resv(struct ttm_bo *bo);

/**
 * ttm_bo_type() - what @bo is for.
 * @bo: the buffer.
 *
 * Context: Does not sleep.
 * Return: its type, fixed at creation (ttm_bo_create(): a device buffer).
 */
enum ttm_bo_type ttm_bo_type(const struct ttm_bo *bo);

/**
 * ttm_bo_reserve() - lock @bo's reservation.
 * @bo: the buffer.
 * @interruptible: an interrupt (ttm_interrupt()) ends the wait with -EINTR.
 * @no_wait: only try: -EBUSY if anyone (this thread included) holds it;
 *	only without @ticket.
 * @ticket: the acquire context of a multi-buffer transaction, of the
 *	device's class; NULL for a single buffer.
 *
 * Context: May sleep unless @no_wait; interruptibly with @interruptible.
 * Takes @bo's reservation on success (release it with ttm_bo_unreserve());
 * takes nothing on error.
 * Return: 0; -EBUSY (@no_wait only); -EALREADY if @ticket already holds
 * @bo; -EDEADLK if @ticket must back off: release every reservation it
 * holds, wait for this one with ttm_bo_reserve_slowpath(), then retry;
 * -EINTR (@interruptible only). @no_wait with a ticket is refused with
 * -EBUSY, taking nothing, as TTM does (with a warning there): a ticketed
 * transaction must be able to wait. -EXDEV, taking nothing, if @ticket is
 * of another class than @bo's reservation (a Wound-Wait device's own, see
 * struct ttm_device_options): reported as rule 5 (class-mismatch), naming
 * both classes, with the checker on. The kernel, which has one class,
 * only warns.
 */
int ttm_bo_reserve(struct ttm_bo *bo, bool interruptible, bool no_wait,
		   struct ww_acquire_ctx *ticket);

/**
 * ttm_bo_reserve_slowpath() - after -EDEADLK, sleep until @bo can be
 * reserved, then reserve it.
 * @bo: the buffer whose reservation returned -EDEADLK to @ticket.
 * @interruptible: an interrupt (ttm_interrupt()) ends the wait with -EINTR.
 * @ticket: the acquire context that backed off.
 *
 * Context: May sleep; interruptibly with @interruptible. @ticket holds no
 * reservation. Takes @bo's reservation on success.
 * Return: 0, -EINTR (@interruptible only), or -EXDEV as ttm_bo_reserve().
 */
int ttm_bo_reserve_slowpath(struct ttm_bo *bo, bool interruptible,
			    struct ww_acquire_ctx *ticket);

/**
 * ttm_bo_unreserve() - unlock @bo's reservation.
 * @bo: the buffer.
 *
 * Moves @bo to the tail of its domain's LRU list, or of its bulk move's
 * group there (ttmsim/lru.h), unless pinned.
 *
 * Context: Does not sleep. @bo reserved by the calling thread. Takes and
 * releases the device lock; releases @bo's reservation.
 */
void ttm_bo_unreserve(struct ttm_bo *bo);

/**
 * ttm_bo_pin() - pin @bo where it is.
 * @bo: the buffer.
 *
 * A pinned buffer is never evicted or moved. Counted: each pin needs an
 * unpin. Takes @bo off the LRU list. Pinning an import (TTM_BO_TYPE_SG)
 * pins its exporter's buffer too, whose pages it shows; unpin it before
 * its last put, as any buffer (TTM warns about a pinned buffer released).
 *
 * Context: Does not sleep. @bo reserved by the calling thread (checked
 * by the ww debug checker while it is on: rule resv-not-held). Takes and
 * releases the device lock (an import's: both devices').
 * Return: 0; -EOVERFLOW if the count would wrap; -EINVAL if the checker's
 * handler refused a call without the reservation (nothing changes).
 */
int ttm_bo_pin(struct ttm_bo *bo);

/**
 * ttm_bo_unpin() - drop one pin; the last puts @bo back at its LRU's tail.
 * @bo: the buffer.
 *
 * Context: Does not sleep. @bo reserved by the calling thread (checked
 * by the ww debug checker while it is on: rule resv-not-held). Takes and
 * releases the device lock.
 * Return: 0, or -EINVAL if @bo is not pinned or the checker's handler
 * refused a call without the reservation (nothing changes).
 */
int ttm_bo_unpin(struct ttm_bo *bo);

/**
 * ttm_bo_pin_count() - how many pins @bo holds.
 * @bo: the buffer.
 *
 * Context: Does not sleep. @bo reserved by the caller.
 * Return: the pin count.
 */
unsigned int ttm_bo_pin_count(const struct ttm_bo *bo);

/**
 * ttm_bo_read() - copy @len bytes at @offset of @bo to @buf.
 * @bo: the buffer.
 * @offset: where to start, in bytes.
 * @buf: where to copy to.
 * @len: how many bytes.
 *
 * Copies once the work that writes @bo is done (fences up to WRITE usage,
 * moves included).
 *
 * Context: May sleep, not interruptibly. @bo reserved by the caller (a
 * move would change its memory).
 * Return: 0; -EINVAL if the range is not inside @bo; -EPERM if @bo is not
 * reserved by the caller (with the ww debug checker on; with it off,
 * only if not reserved at all).
 */
int ttm_bo_read(struct ttm_bo *bo, uint64_t offset, void *buf, size_t len);

/**
 * ttm_bo_write() - copy @len bytes from @buf to @offset of @bo.
 * @bo: the buffer.
 * @offset: where to start, in bytes.
 * @buf: where to copy from.
 * @len: how many bytes.
 *
 * Copies once all the work that reads or writes @bo is done (fences up to
 * READ usage).
 *
 * Context: May sleep, not interruptibly. @bo reserved by the caller.
 * Return: as ttm_bo_read().
 */
int ttm_bo_write(struct ttm_bo *bo, uint64_t offset, const void *buf,
		 size_t len);

/**
 * ttm_bo_vmap() - the CPU address of @bo's contents.
 * @bo: the buffer.
 * @ret_addr: where the address of its first byte goes.
 *
 * As the kernel's ttm_bo_vmap(): it neither waits nor pins. The address
 * is @bo's bytes where @bo is now, in its domain's arena or its own
 * SYSTEM block (an import's are its exporter's), valid while @bo stays
 * there: as long as the caller keeps it reserved, or pinned
 * (ttm_bo_pin()). Wait for the fences the access must follow first
 * (ttm_resv_wait()); a move's copy may still be writing. Pair it with
 * ttm_bo_vunmap().
 *
 * Context: Does not sleep. @bo reserved by the caller.
 * Return: 0 and *@ret_addr set; -EPERM if @bo is not reserved by the
 * caller (with the ww debug checker on; with it off, only if not reserved
 * at all), *@ret_addr untouched.
 */
int ttm_bo_vmap(struct ttm_bo *bo, void **ret_addr);

/**
 * ttm_bo_vunmap() - end a use of an address from ttm_bo_vmap().
 * @bo: the buffer.
 * @addr: the address ttm_bo_vmap() gave.
 *
 * ttmsim maps nothing, so nothing is released; the call checks that
 * @addr is still @bo's, which it is not once @bo moved (a mapping kept
 * while @bo was neither reserved nor pinned), and keeps the pairs of
 * code written for the kernel.
 *
 * Context: Does not sleep. @bo reserved by the caller.
 * Return: 0; -EPERM if @bo is not reserved at all; -EINVAL if @addr is
 * not where @bo's bytes are now.
 */
int ttm_bo_vunmap(struct ttm_bo *bo, void *addr);

/**
 * ttm_bo_gpu_range() - the memory backing @bo now, for a GPU job.
 * @bo: the buffer.
 * @range: filled in.
 *
 * The range stays valid until @bo is unreserved (a move may replace it
 * afterwards). Jobs using it must add their fences to @bo's reservation
 * before unreserving, so that a move waits for them.
 *
 * Context: Does not sleep. @bo reserved by the calling thread (checked
 * by the ww debug checker while it is on: rule resv-not-held; when its
 * handler refuses the call, @range is empty: no memory, size 0).
 */
void ttm_bo_gpu_range(struct ttm_bo *bo, struct ttm_gpu_range *range);

/**
 * struct ttm_operation_ctx - how ttm_bo_validate() may go about its work.
 * @interruptible: waits (reservations, CPU copies) end with -EINTR on an
 *	interrupt (ttm_interrupt()).
 * @no_wait_gpu: never wait for the GPU on the CPU: -EBUSY instead when
 *	room would come only from a copy in flight, or, without a GPU, when
 *	a buffer to move is still busy. (With a GPU, a move itself never
 *	waits: its copy job depends on the buffer's fences.)
 * @exec: the locking helper of the caller's submission, or NULL. Its
 *	ticket reserves eviction victims held by other tickets; the buffers
 *	it holds are in use and never evicted, except the one it holds only
 *	because an earlier eviction contended on it (ttm_exec_is_evictable()).
 *	Without it, eviction only try-locks.
 * @allow_res_evict: with @resv, eviction may also take the buffers
 *	reserved by @resv, which the caller holds (TTM's allow_res_evict):
 *	the other buffers of a shared reservation, whether the caller holds
 *	it with @exec's ticket or without one. They are moved under the
 *	caller's lock, which stays held.
 * @resv: the reservation the caller holds, for @allow_res_evict.
 */
struct ttm_operation_ctx {
	bool interruptible;
	bool no_wait_gpu;
	struct ttm_exec *exec;
	bool allow_res_evict;
	struct ttm_resv *resv;
};

/**
 * ttm_bo_validate() - make @bo resident in a place of @placement.
 * @bo: the buffer.
 * @placement: where @bo may live, most preferred first (@bo's own
 *	placement is not changed: a victim of eviction goes back to its own).
 * @ctx: see struct ttm_operation_ctx.
 *
 * Nothing to do if @bo already matches a place of @placement (lives in
 * its domain, its range inside the place's window; struct ttm_place).
 * Otherwise each place is tried in order without evicting, then in order
 * making room (a place whose range is smaller than @bo is passed over):
 * while sources of moves out of SYSTEM are in flight, by waiting for
 * their copies (their block is freed only then; a VRAM or GTT source's
 * range is free at once, its next owner's writes ordered after the copy
 * by KERNEL fences, -EBUSY with @ctx->no_wait_gpu), else by evicting,
 * in LRU order, buffers whose going opens a hole @bo fits in inside the
 * place's window (free bytes elsewhere do not help). Eviction skips
 * pinned buffers, the buffers of @ctx->exec (in use), and buffers locked
 * by a thread without a ticket; it try-locks the others and, if none
 * could be, reserves one buffer held by another ticket with @ctx->exec's
 * ticket. A VRAM victim goes to GTT, or SYSTEM if GTT is full; a GTT
 * victim goes to SYSTEM. The device's hooks (struct ttm_device_funcs)
 * may veto victims, send them elsewhere, and perform or veto the moves.
 *
 * A move allocates @bo's new memory, submits a copy job on the device's
 * GPU depending on every fence of @bo, adds the job's fence to @bo's
 * reservation with KERNEL usage (so later jobs wait for it), and switches
 * @bo to the new memory at once; the old memory stays accounted until
 * the copy signals. Without a GPU the copy runs on the CPU once @bo's
 * fences signalled, and the old memory goes at once.
 *
 * Context: May sleep; interruptibly with @ctx->interruptible. @bo reserved
 * by the calling thread (through @ctx->exec if given; checked by the ww
 * debug checker while it is on: rule resv-not-held, whose handler's
 * refusal returns -EINVAL with nothing done). Takes and releases the device
 * lock and the reservations of eviction victims. On -EDEADLK, releases
 * every reservation @ctx->exec holds, @bo's included.
 * Return: 0; -EINVAL if @bo is pinned outside @placement (pinned buffers
 * never move; validating to where they are is fine; as in TTM), or for a
 * bad @placement; -EBUSY for @ctx->no_wait_gpu;
 * -ENOSPC if no place of @placement can make room because the buffers
 * left there, pinned or in use by @ctx->exec's job (@bo's own range
 * included, should it already lie in the domain), leave no hole for @bo
 * in the place's window, or, without @ctx->exec, busy (counted). With
 * @ctx->exec, room held for a moment (another thread's eviction, a
 * reservation without a ticket, a buffer waiting for delayed destroy) is
 * waited for, since such a job fits (counted in room_waits); -EDEADLK if
 * reserving a victim demands a back-off: the victim is marked contended in
 * @ctx->exec, whose ttm_exec_retry_on_contention() then restarts the
 * pass; -EINTR; -ENOMEM; -EINVAL for a hop the move hook asked for that
 * cannot be (the destination, the source, or a second hop); or the move
 * hook's own error, for @bo's move or a victim's.
 */
int ttm_bo_validate(struct ttm_bo *bo, const struct ttm_placement *placement,
		    struct ttm_operation_ctx *ctx);

/**
 * ttm_bo_init_reserved() - initialise a buffer embedded in the caller's
 * object, and return it reserved (TTM's ttm_bo_init_reserved()).
 * @dev: the device.
 * @bo: the buffer to initialise, in the caller's object; its old contents
 *	are ignored.
 * @type: TTM_BO_TYPE_DEVICE, or TTM_BO_TYPE_KERNEL for a buffer that never
 *	gets a client handle (ttm_client_bo_add() refuses it).
 * @size: in bytes: a multiple of 4, more than 0, at most TTM_BO_MAX_SIZE.
 * @placement: where it may live; copied.
 * @ctx: how to make room (NULL: uninterruptible, may wait). Its @exec is
 *	ignored: creation only try-locks victims, as ttm_bo_create(); with
 *	@allow_res_evict, buffers of @ctx->resv may be evicted.
 * @ticket: the caller's transaction, or NULL. @bo's own reservation is
 *	locked with it (it cannot contend: nobody else sees @bo yet), so that
 *	the caller's ttm_exec or ww_acquire_fini() rules cover it; without a
 *	ticket it is locked with none.
 * @resv: NULL for a reservation of @bo's own; or a reservation to share
 *	with other buffers (the VM-private buffers of amdgpu, xe or panthor),
 *	of @dev's class and held by the caller. Locking any buffer on it locks
 *	them all and they share its fences; each keeps its own placement, pin
 *	count and LRU position. The caller owns @resv: it initialises it,
 *	and may ttm_resv_fini() it once the @destroy of every buffer on it
 *	has run, not before: the caller cannot see the short references
 *	ttmsim takes (an eviction walk may hold a buffer and its reservation
 *	for a moment after the caller's last put). A buffer still waiting for
 *	its fences at its last put holds a copy of them (see ttm_bo_put()),
 *	so its @destroy comes only after them.
 * @destroy: called exactly once when @bo is gone, to free the caller's
 *	object: after the last reference and every fence of @bo, from
 *	ttm_bo_put() or the device's worker thread, never from a fence
 *	callback nor under the device lock. @bo's memory and own reservation
 *	are already freed then; only container_of() on @bo is left to do.
 *	It must not reserve a buffer or wait for one: creation and
 *	validation may wait for the worker (ttm_device_flush_destroys()).
 *	It may destroy the device once no buffer of it is left
 *	(ttm_device_destroy()), also when it runs on the worker.
 *
 * Places the buffer as ttm_bo_create() does and holds one reference.
 * Unlike TTM, a failure leaves nothing to undo and never calls @destroy:
 * the caller frees its object itself.
 *
 * Context: May sleep (allocation, waiting for copies in flight). Takes and
 * releases the device lock, and try-locks and releases the reservations
 * of eviction victims. @resv, if given, held by the calling thread (rule
 * 11 of the ww debug checker, resv-not-held, while it is on).
 * Return: 0 with @bo reserved (@resv: still held by the caller; else
 * @bo's own, locked with @ticket): ttm_bo_unreserve() it, or let the
 * ticket's transaction do so; -EINVAL for a bad size, type, placement, a
 * NULL @destroy, or if the checker's handler refused an unheld @resv;
 * -ENOSPC if no allowed domain can make room (counted in the stats);
 * -EBUSY (@ctx->no_wait_gpu); -EXDEV if @resv or @ticket is of another
 * class than @dev's (ttm_device_ww_class(); @ticket: also reported as
 * ttm_bo_reserve() does); -ENOMEM.
 */
int ttm_bo_init_reserved(struct ttm_device *dev, struct ttm_bo *bo,
			 enum ttm_bo_type type, uint64_t size,
			 const struct ttm_placement *placement,
			 const struct ttm_operation_ctx *ctx,
			 struct ww_acquire_ctx *ticket, struct ttm_resv *resv,
			 void (*destroy)(struct ttm_bo *bo));

/*
 * Call-site twins of the calls that take, release or check a reservation,
 * as those of ttmsim/ww_mutex.h: each does exactly what the function of
 * the same name without "_at" does, and passes @file (the caller's
 * __FILE__, may be NULL) and @line (its __LINE__) down to the ww_mutex
 * calls it makes and to its own checks, so that a report of the ww debug
 * checker names the caller's line rather than a file of libttmsim. The
 * macros below route every call through them; TTMSIM_WW_NO_CALLER_MACROS
 * turns them off as for ttmsim/ww_mutex.h (a report then has no
 * file:line). Each takes the parameters of its plain function, then @file
 * and @line; their kernel-doc is that function's. The plain functions
 * still exist: `&ttm_bo_reserve` names the function (the macros are
 * function-like).
 */
int ttm_bo_reserve_at(struct ttm_bo *bo, bool interruptible, bool no_wait,
		      struct ww_acquire_ctx *ticket, const char *file,
		      int line);
int ttm_bo_reserve_slowpath_at(struct ttm_bo *bo, bool interruptible,
			       struct ww_acquire_ctx *ticket,
			       const char *file, int line);
void ttm_bo_unreserve_at(struct ttm_bo *bo, const char *file, int line);
int ttm_bo_pin_at(struct ttm_bo *bo, const char *file, int line);
int ttm_bo_unpin_at(struct ttm_bo *bo, const char *file, int line);
void ttm_bo_gpu_range_at(struct ttm_bo *bo, struct ttm_gpu_range *range,
			 const char *file, int line);
int ttm_bo_validate_at(struct ttm_bo *bo,
		       const struct ttm_placement *placement,
		       struct ttm_operation_ctx *ctx, const char *file,
		       int line);

#ifndef TTMSIM_WW_NO_CALLER_MACROS
#define ttm_bo_reserve(bo, interruptible, no_wait, ticket) \
	ttm_bo_reserve_at(bo, interruptible, no_wait, ticket, __FILE__, \
			  __LINE__)
#define ttm_bo_reserve_slowpath(bo, interruptible, ticket) \
	ttm_bo_reserve_slowpath_at(bo, interruptible, ticket, __FILE__, \
				   __LINE__)
#define ttm_bo_unreserve(bo) ttm_bo_unreserve_at(bo, __FILE__, __LINE__)
#define ttm_bo_pin(bo) ttm_bo_pin_at(bo, __FILE__, __LINE__)
#define ttm_bo_unpin(bo) ttm_bo_unpin_at(bo, __FILE__, __LINE__)
#define ttm_bo_gpu_range(bo, range) \
	ttm_bo_gpu_range_at(bo, range, __FILE__, __LINE__)
#define ttm_bo_validate(bo, placement, ctx) \
	ttm_bo_validate_at(bo, placement, ctx, __FILE__, __LINE__)
#endif

#ifdef __cplusplus
}
#endif

#endif /* TTMSIM_BO_H */
