/* SPDX-License-Identifier: MIT */
/*
 * The address-range allocator behind each limited domain (VRAM, GTT), as
 * TTM's range manager puts a drm_mm behind one: it hands out ranges of
 * pages of [0, npages), first fit from the bottom or last fit from the
 * top, inside an optional [fpfn, lpfn) window and at an alignment, and
 * finds the eviction victims that open a hole where the free pages alone
 * do not (struct range_scan, as drm_mm_scan).
 *
 * Units are pages: the caller converts from bytes with its granularity.
 * The caller embeds a struct range_node in each of its objects, so
 * inserting never allocates and never fails for memory. A zeroed node is
 * out of every manager; range_mgr_remove() makes it so again.
 *
 * No locking: the caller serialises every call on one manager (the bo
 * layer does it under its device lock). The manager lives where it was
 * initialised (it holds pointers to itself): never copy one.
 */
#ifndef TTMSIM_BO_RANGE_MGR_H
#define TTMSIM_BO_RANGE_MGR_H

#include <stdbool.h>
#include <stdint.h>

/* Placement flags of range_mgr_insert() and range_scan_init(). */
/* The highest address that fits, instead of the lowest. */
#define RANGE_TOPDOWN (1u << 0)
#define RANGE_FLAGS_ALL RANGE_TOPDOWN

/*
 * The largest manager: page numbers are 32-bit, as TTM's fpfn and lpfn
 * (the tail sentinel starts at npages).
 */
#define RANGE_MGR_MAX_PAGES UINT32_MAX

struct range_mgr;

/**
 * struct range_node - An allocated range, embedded in the caller's object.
 * @start: The first page, set by range_mgr_insert() (read only while the
 *         node is in a manager; the caller sets it for range_mgr_reserve()).
 * @size: Pages, likewise.
 *
 * @tag: The caller's byte; the manager never reads nor writes it.
 *
 * The other members are the manager's: the node's place in the tree of
 * nodes by address and in the list of them in address order (a node is
 * in a manager while it is linked), and the largest hole in its subtree.
 */
struct range_node {
	/* private: */
	struct range_node *left, *right;
	struct range_node *prev, *next; /* address order; NULL: in none */

	/* public: */
	uint32_t start;
	uint32_t size;

	/* private: */
	/*
	 * The largest hole in the subtree. A node's own hole (the free
	 * pages below @start) is not stored: it is @start minus the end of
	 * @prev (node_hole()), which keeps the node at 48 bytes.
	 */
	uint32_t max_hole;
	uint8_t height;                 /* of the subtree; a leaf is 1 */
	bool scanned;                   /* added to the active scan */

	/* public: */
	uint8_t tag;                    /* the caller's; never touched */
};

/**
 * struct range_mgr - The allocator of one domain's pages.
 *
 * All members are private. @head ends at page 0 and is only on the list;
 * @tail starts at page npages, is in the tree as its last node, and holds
 * the hole at the top, so every hole is the one below some node.
 */
struct range_mgr {
	/* private: */
	uint64_t npages;
	uint64_t used;                  /* pages in nodes */
	uint64_t count;                 /* nodes, sentinels not counted */
	struct range_node *root;
	struct range_node head, tail;
	const struct range_scan *scan;  /* with nodes added, or NULL */
	uint64_t scanned;               /* nodes it added, not removed */
};

/**
 * struct range_scan - A search for eviction victims (as drm_mm_scan).
 *
 * Initialised by range_scan_init(); all members are private. @hit_start
 * and @hit_end bound the placement found, once @found.
 */
struct range_scan {
	/* private: */
	struct range_mgr *mm;
	uint64_t size, align, fpfn, lpfn;
	unsigned int flags;
	bool found;
	uint64_t hit_start, hit_end;
};

/**
 * range_mgr_init() - Set up an empty manager of @npages pages.
 * @mm: The manager.
 * @npages: Pages it manages: [0, @npages).
 *
 * Context: Does not sleep.
 * Return: 0, or -EINVAL if @npages is 0 or above RANGE_MGR_MAX_PAGES.
 */
int range_mgr_init(struct range_mgr *mm, uint64_t npages);

/**
 * range_mgr_fini() - Tear down an empty manager.
 * @mm: The manager.
 *
 * Context: Does not sleep.
 * Return: 0, or -EBUSY (and @mm left as it was) if nodes are still in it.
 */
int range_mgr_fini(struct range_mgr *mm);

/**
 * range_mgr_insert() - Place a node in the first hole that fits.
 * @mm: The manager.
 * @node: A node in no manager; its @start and @size are set.
 * @size: Pages, at least 1.
 * @align: The start is a multiple of @align pages (0 and 1: any start).
 * @fpfn: The node lies wholly inside [@fpfn, @lpfn).
 * @lpfn: The end of that window; 0 means the end of the manager.
 * @flags: RANGE_TOPDOWN: the highest start that fits; else the lowest.
 *
 * The placement is exact: the lowest (highest) aligned start at which
 * @size free pages lie inside the window.
 * Context: Does not sleep. Not during a scan with nodes added. O(log n),
 * plus each hole of at least @size pages that the alignment defeats.
 * Return: 0; -ENOSPC if no hole fits (also when @size exceeds the
 * window, as drm_mm); -EINVAL if @size is 0, the window is empty or not
 * inside the manager, @flags are unknown or @node is in a manager;
 * -EBUSY during a scan.
 */
int range_mgr_insert(struct range_mgr *mm, struct range_node *node,
		     uint64_t size, uint64_t align, uint64_t fpfn,
		     uint64_t lpfn, unsigned int flags);

/**
 * range_mgr_reserve() - Place a node at the range it names.
 * @mm: The manager.
 * @node: A node in no manager, its @start and @size set by the caller.
 *
 * Context: Does not sleep. Not during a scan with nodes added.
 * Return: 0; -ENOSPC if a page of the range is in use; -EINVAL if @size
 * is 0, the range is not inside the manager or @node is in a manager;
 * -EBUSY during a scan.
 */
int range_mgr_reserve(struct range_mgr *mm, struct range_node *node);

/**
 * range_mgr_remove() - Take a node out of its manager.
 * @mm: The manager.
 * @node: The node: in @mm, or in no manager (then nothing happens).
 *
 * The node may then be inserted again, in any manager.
 * Context: Does not sleep. Never during a scan with nodes added.
 */
void range_mgr_remove(struct range_mgr *mm, struct range_node *node);

/* Whether @node is in a manager. */
static inline bool range_node_allocated(const struct range_node *node)
{
	return node->next != NULL;
}

/* Whether the pages of @a and @b (of one manager, linked or not) meet. */
static inline bool range_node_overlaps(const struct range_node *a,
				       const struct range_node *b)
{
	return (uint64_t)a->start < (uint64_t)b->start + b->size &&
	       (uint64_t)b->start < (uint64_t)a->start + a->size;
}

/**
 * range_mgr_used() - Pages in nodes.
 * @mm: The manager.
 *
 * Context: Does not sleep.
 * Return: The sum of the sizes of @mm's nodes.
 */
static inline uint64_t range_mgr_used(const struct range_mgr *mm)
{
	return mm->used;
}

/**
 * range_mgr_count() - Nodes in a manager.
 * @mm: The manager.
 *
 * Context: Does not sleep.
 * Return: How many nodes are in @mm.
 */
static inline uint64_t range_mgr_count(const struct range_mgr *mm)
{
	return mm->count;
}

/**
 * range_mgr_size() - Pages managed.
 * @mm: The manager.
 *
 * Context: Does not sleep.
 * Return: The npages of range_mgr_init().
 */
static inline uint64_t range_mgr_size(const struct range_mgr *mm)
{
	return mm->npages;
}

/**
 * range_mgr_largest_hole() - The largest run of free pages in a window.
 * @mm: The manager.
 * @fpfn: The window's first page.
 * @lpfn: Its end; 0 means the end of the manager.
 *
 * Holes that cross the window's edges count for their part inside it.
 * Context: Does not sleep. O(log n).
 * Return: Pages; 0 for an empty window or one outside the manager.
 */
uint64_t range_mgr_largest_hole(const struct range_mgr *mm, uint64_t fpfn,
				uint64_t lpfn);

/**
 * range_mgr_could_fit() - Whether evicting could ever make room.
 * @mm: The manager.
 * @size: Pages, as range_mgr_insert().
 * @align: As range_mgr_insert().
 * @fpfn: As range_mgr_insert().
 * @lpfn: As range_mgr_insert().
 * @removable: Whether a node may go (NULL: none may).
 * @data: Passed to @removable.
 *
 * The judgement behind "-ENOSPC: can never fit": a placement fits once
 * every removable node is gone, only the others staying (pinned buffers,
 * the job's own). Both placement directions fit the same holes.
 * Context: Does not sleep. Not during a scan with nodes added. O(n).
 * Return: true if it would fit; false if not or on bad arguments.
 */
bool range_mgr_could_fit(const struct range_mgr *mm, uint64_t size,
			 uint64_t align, uint64_t fpfn, uint64_t lpfn,
			 bool (*removable)(const struct range_node *node,
					   void *data),
			 void *data);

/**
 * range_mgr_check() - Verify a manager's invariants.
 * @mm: The manager.
 *
 * Nodes in address order in both the tree and the list, not overlapping,
 * inside [0, npages), none empty; each hole, subtree maximum and height
 * right and the tree balanced; the used pages and the count the sums.
 * Context: Does not sleep. O(n).
 * Return: 0; -EFAULT if one is broken; -EBUSY during a scan with nodes
 * added (the list is cut around them then).
 */
int range_mgr_check(const struct range_mgr *mm);

/**
 * range_scan_init() - Start a search for victims.
 * @scan: The scan.
 * @mm: The manager.
 * @size: As range_mgr_insert().
 * @align: As range_mgr_insert().
 * @fpfn: As range_mgr_insert().
 * @lpfn: As range_mgr_insert().
 * @flags: As range_mgr_insert(): the placement inside the hole found.
 *
 * Then range_scan_add() each candidate in the order of preference (LRU)
 * until it returns true or the candidates run out, then
 * range_scan_remove() every node added, in the reverse order, and evict
 * those it returns true for. In between, @mm must not change; after the
 * last range_scan_remove() it is as before.
 * Context: Does not sleep.
 * Return: 0, or -EINVAL on arguments range_mgr_insert() refuses, or a
 * size larger than the window.
 */
int range_scan_init(struct range_scan *scan, struct range_mgr *mm,
		    uint64_t size, uint64_t align, uint64_t fpfn,
		    uint64_t lpfn, unsigned int flags);

/**
 * range_scan_add() - Add a candidate victim.
 * @scan: The scan.
 * @node: A node of the scan's manager.
 *
 * Context: Does not sleep. O(1).
 * Return: true once removing the nodes added would open a hole (merged
 * with the free pages around them) that the request fits in; false if
 * not yet, or if @node cannot be added (in no manager, already
 * added, another scan's nodes still added).
 */
bool range_scan_add(struct range_scan *scan, struct range_node *node);

/**
 * range_scan_remove() - Take back a node range_scan_add() took.
 * @scan: The scan.
 * @node: The last node added and not yet removed.
 *
 * Context: Does not sleep. O(1).
 * Return: true if @node overlaps the placement found: it must be evicted;
 * false if it may stay (or was not added).
 */
bool range_scan_remove(struct range_scan *scan, struct range_node *node);

/**
 * range_scan_hit() - The placement a scan found.
 * @scan: The scan, after range_scan_add() returned true.
 * @ret_start: Its first page.
 *
 * Context: Does not sleep.
 * Return: Whether the scan found one.
 */
static inline bool range_scan_hit(const struct range_scan *scan,
				  uint64_t *ret_start)
{
	if (scan->found)
		*ret_start = scan->hit_start;
	return scan->found;
}

/*
 * range_mgr_for_each_node - Walk the nodes in address order.
 * @pos: A struct range_node *, the node.
 * @mm: The manager.
 *
 * Not during a scan with nodes added (the list skips them then). @pos
 * must stay in; range_mgr_for_each_node_safe() lets the body remove it.
 */
#define range_mgr_for_each_node(pos, mm)                                \
	for ((pos) = (mm)->head.next; (pos) != &(mm)->tail;            \
	     (pos) = (pos)->next)

#define range_mgr_for_each_node_safe(pos, n, mm)                        \
	for ((pos) = (mm)->head.next, (n) = (pos)->next;               \
	     (pos) != &(mm)->tail; (pos) = (n), (n) = (pos)->next)

/* The free pages below @n, a node in a manager other than its head. */
static inline uint64_t range_node_hole(const struct range_node *n)
{
	return n->start - ((uint64_t)n->prev->start + n->prev->size);
}

/* The next node with free pages below it, after @pos; NULL at the end. */
static inline struct range_node *range_hole_next(struct range_node *pos)
{
	for (pos = pos->next; pos && !range_node_hole(pos); pos = pos->next)
		;
	return pos;
}

/*
 * range_mgr_for_each_hole - Walk the holes in address order.
 * @pos: A struct range_node *: the node above the hole (at the top, the
 *       manager's tail, which is no caller's node).
 * @mm: The manager.
 * @hs: A uint64_t, the hole's first page.
 * @he: A uint64_t, its end.
 *
 * O(n) in nodes, not holes. Not during a scan with nodes added; the
 * body must not change the manager.
 */
#define range_mgr_for_each_hole(pos, mm, hs, he)                        \
	for ((pos) = range_hole_next(&(mm)->head);                     \
	     (pos) && ((hs) = (pos)->start - range_node_hole(pos),     \
		       (he) = (pos)->start, true);                     \
	     (pos) = range_hole_next(pos))

#endif /* TTMSIM_BO_RANGE_MGR_H */
