// SPDX-License-Identifier: MIT
/*
 * The address-range allocator of a limited domain (bo/range_mgr.h).
 *
 * Structure. The nodes are kept twice, in address order: in a list, for
 * O(1) neighbours, walks and the eviction scan, and in an AVL tree keyed
 * by start. Each node's hole is the free pages between the end of the
 * node before it in the list and its own start (derived, not stored:
 * 48-byte nodes, 32-bit page numbers as TTM's fpfn and lpfn), and each
 * tree node records the largest hole in its subtree. A tail sentinel
 * at page npages, always in the tree, holds the hole at the top, so
 * every hole is some node's and a new node's successor always exists.
 *
 * Searching. First fit descends from the root, left subtree first, then
 * the node's own hole, then the right subtree; last fit (RANGE_TOPDOWN)
 * mirrors it. A subtree is skipped when its largest hole is smaller than
 * the request, or when the addresses its holes can span (known from the
 * ancestors' bounds) leave less than the request inside [fpfn, lpfn).
 * Without alignment a subtree that survives both tests inside the window
 * holds a fit, so a search costs O(log n): one descent, plus the two
 * paths along the window's edges. Holes that are big enough until
 * alignment trims them make the search look further; that is the only
 * case beyond O(log n) (drm_mm's walk of its holes has it too).
 *
 * Why AVL: deletion is simpler than a red-black tree's, the tree is
 * shallower (height under 1.45 log2 n, against 2 log2 n), which pays in
 * the search every insert does, and, unlike a treap, the shape is
 * deterministic. The augmented maxima are recomputed on the recursion's
 * way back up, which every rotation passes through anyway. Inserting a
 * node changes the hole of its successor, and removing one that of its
 * successor (the list is updated first, so the derived hole is the new
 * one): that node is always on the path the tree operation
 * recomputes (an ancestor of the new leaf; on removal an ancestor, or
 * the successor that replaces the node), so holes cost nothing extra.
 *
 * On the way back up, a node whose child kept its subtree's height and
 * largest hole, and whose own hole is unchanged, is left as it was: the
 * sibling off the path, a cache miss in a big tree, is not read.
 *
 * Costs (n nodes): insert O(log n) plus the holes of at least the size
 * that alignment defeats (an aligned insert that fails visits each of
 * them); reserve, remove and largest hole O(log n); scan add and remove
 * O(1); could_fit and check O(n). At 1M nodes (48 bytes each) a
 * remove at a random place costs microseconds, nearly all cache misses.
 *
 * drm_mm keeps separate trees of holes by size and address and offers
 * best fit, which TTM's range manager uses by default; this allocator
 * offers first and last fit only: deterministic and simple to model.
 *
 * The eviction scan takes each added node off the list, keeping its own
 * links (dancing links), so the list neighbours of the node just added
 * bound the free space around it merged with the nodes added before;
 * putting the nodes back in the reverse order restores the list exactly.
 * The tree is never touched by a scan.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "bo/range_mgr.h"

/* A placement request, checked and with lpfn resolved. */
struct range_req {
	uint64_t size, align, fpfn, lpfn;
	bool topdown;
};

static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t node_end(const struct range_node *n)
{
	return (uint64_t)n->start + n->size;
}

/* The free pages below @n: derived from its list predecessor. */
static inline uint64_t node_hole(const struct range_node *n)
{
	return n->start - node_end(n->prev);
}

static inline uint64_t hole_start(const struct range_node *n)
{
	return node_end(n->prev);
}

/*
 * Check a request's arguments and resolve lpfn 0. -EINVAL for bad ones,
 * -ENOSPC for a size larger than the window (a request that never fits).
 */
static int req_init(struct range_req *r, const struct range_mgr *mm,
		    uint64_t size, uint64_t align, uint64_t fpfn,
		    uint64_t lpfn, unsigned int flags)
{
	if (!size || (flags & ~RANGE_FLAGS_ALL))
		return -EINVAL;
	if (!lpfn)
		lpfn = mm->npages;
	if (fpfn >= lpfn || lpfn > mm->npages)
		return -EINVAL;
	r->size = size;
	r->align = align > 1 ? align : 1;
	r->fpfn = fpfn;
	r->lpfn = lpfn;
	r->topdown = flags & RANGE_TOPDOWN;
	return size > lpfn - fpfn ? -ENOSPC : 0;
}

/*
 * Where @r goes in the free pages [@hs, @he): the lowest (highest) aligned
 * start inside the window. False if it does not fit there.
 */
static bool req_fit(const struct range_req *r, uint64_t hs, uint64_t he,
		    uint64_t *ret_start)
{
	uint64_t s = max_u64(hs, r->fpfn), e = min_u64(he, r->lpfn);
	uint64_t start;

	if (s >= e || e - s < r->size)
		return false;
	if (r->topdown) {
		start = e - r->size;
		start -= start % r->align;
		if (start < s)
			return false;
	} else {
		uint64_t rem = s % r->align;

		start = s;
		if (rem) {
			/* start + size <= e, without overflow */
			if (r->align - rem > e - s - r->size)
				return false;
			start += r->align - rem;
		}
	}
	*ret_start = start;
	return true;
}

/*
 * Whether a subtree whose holes lie within [@lo, @hi) and whose largest
 * is @max_hole may hold a fit of @r.
 */
static inline bool subtree_may_fit(const struct range_req *r,
				   uint64_t max_hole, uint64_t lo, uint64_t hi)
{
	uint64_t s = max_u64(lo, r->fpfn), e = min_u64(hi, r->lpfn);

	return max_hole >= r->size && s < e && e - s >= r->size;
}

/* The AVL tree. */

static inline int height(const struct range_node *n)
{
	return n ? n->height : 0;
}

static inline uint64_t max_hole(const struct range_node *n)
{
	return n ? n->max_hole : 0;
}

static inline void update(struct range_node *n)
{
	int hl = height(n->left), hr = height(n->right);

	n->height = (uint8_t)(1 + (hl > hr ? hl : hr));
	n->max_hole = (uint32_t)max_u64(node_hole(n),
					max_u64(max_hole(n->left),
						max_hole(n->right)));
}

static struct range_node *rotate_right(struct range_node *n)
{
	struct range_node *l = n->left;

	n->left = l->right;
	l->right = n;
	update(n);
	update(l);
	return l;
}

static struct range_node *rotate_left(struct range_node *n)
{
	struct range_node *r = n->right;

	n->right = r->left;
	r->left = n;
	update(n);
	update(r);
	return r;
}

/* Recompute @n from its children, rotating it back into balance. */
static struct range_node *rebalance(struct range_node *n)
{
	int bf = height(n->left) - height(n->right);

	if (bf > 1) {
		if (height(n->left->left) < height(n->left->right))
			n->left = rotate_left(n->left);
		return rotate_right(n);
	}
	if (bf < -1) {
		if (height(n->right->right) < height(n->right->left))
			n->right = rotate_right(n->right);
		return rotate_left(n);
	}
	update(n);
	return n;
}

/*
 * Whether @t needs recomputing now that its child @c (which had @height
 * and @max) was replaced by @nc: not if the child is the same with the
 * same summary and @t's own hole is unchanged (@t is not @dirty). This
 * spares reading the sibling off the path, a cache miss in a big tree.
 */
static inline bool stale(const struct range_node *t,
			 const struct range_node *dirty,
			 const struct range_node *c,
			 const struct range_node *nc,
			 int h, uint64_t max)
{
	return t == dirty || nc != c || !c || c->height != h ||
	       c->max_hole != max;
}

/* Insert the leaf @x under @t; @dirty's hole changed, and is on the path. */
static struct range_node *tree_insert(struct range_node *t,
				      struct range_node *x,
				      const struct range_node *dirty)
{
	struct range_node **link, *c;
	uint64_t max;
	int h;

	if (!t)
		return x;
	link = x->start < t->start ? &t->left : &t->right;
	c = *link;
	h = height(c);
	max = max_hole(c);
	*link = tree_insert(c, x, dirty);
	return stale(t, dirty, c, *link, h, max) ? rebalance(t) : t;
}

static struct range_node *tree_remove_min(struct range_node *t,
					  struct range_node **ret_min)
{
	if (!t->left) {
		*ret_min = t;
		return t->right;
	}
	t->left = tree_remove_min(t->left, ret_min);
	return rebalance(t);
}

/* Remove @x from under @t; as tree_insert() for @dirty. */
static struct range_node *tree_remove(struct range_node *t,
				      struct range_node *x,
				      const struct range_node *dirty)
{
	struct range_node **link, *c, *m, *r;
	uint64_t max;
	int h;

	if (t == x) {
		if (!t->right)
			return t->left;
		/*
		 * The successor takes @t's place; the path down to it is
		 * recomputed, and so is it.
		 */
		r = tree_remove_min(t->right, &m);
		m->left = t->left;
		m->right = r;
		return rebalance(m);
	}
	link = x->start < t->start ? &t->left : &t->right;
	c = *link;
	h = height(c);
	max = max_hole(c);
	*link = tree_remove(c, x, dirty);
	return stale(t, dirty, c, *link, h, max) ? rebalance(t) : t;
}

/* First fit in the subtree @n, whose holes lie within [@lo, @hi). */
static struct range_node *find_low(struct range_node *n, uint64_t lo,
				   uint64_t hi, const struct range_req *r,
				   uint64_t *ret_start)
{
	while (n && subtree_may_fit(r, n->max_hole, lo, hi)) {
		struct range_node *found;
		uint64_t hs = hole_start(n);

		found = find_low(n->left, lo, hs, r, ret_start);
		if (found)
			return found;
		if (n->start - hs >= r->size &&
		    req_fit(r, hs, n->start, ret_start))
			return n;
		lo = node_end(n);
		n = n->right;
	}
	return NULL;
}

/* Last fit: find_low() mirrored. */
static struct range_node *find_high(struct range_node *n, uint64_t lo,
				    uint64_t hi, const struct range_req *r,
				    uint64_t *ret_start)
{
	while (n && subtree_may_fit(r, n->max_hole, lo, hi)) {
		struct range_node *found;
		uint64_t hs = hole_start(n);

		found = find_high(n->right, node_end(n), hi, r, ret_start);
		if (found)
			return found;
		if (n->start - hs >= r->size &&
		    req_fit(r, hs, n->start, ret_start))
			return n;
		hi = hs;
		n = n->left;
	}
	return NULL;
}

/*
 * Put @x, its start and size set, into the hole below @succ, which
 * holds it.
 */
static void link_node(struct range_mgr *mm, struct range_node *x,
		      struct range_node *succ)
{
	struct range_node *pred = succ->prev;

	x->left = x->right = NULL;
	x->height = 1;
	x->scanned = false;
	x->max_hole = (uint32_t)(x->start - node_end(pred));
	/* Linked first: the holes update() derives are the new ones. */
	x->prev = pred;
	x->next = succ;
	pred->next = x;
	succ->prev = x;
	/* @succ is an ancestor of the new leaf: recomputed on the way up */
	mm->root = tree_insert(mm->root, x, succ);
	mm->used += x->size;
	mm->count++;
}

int range_mgr_init(struct range_mgr *mm, uint64_t npages)
{
	if (!npages || npages > RANGE_MGR_MAX_PAGES)
		return -EINVAL;
	memset(mm, 0, sizeof(*mm));
	mm->npages = npages;
	mm->head.next = &mm->tail;
	mm->tail.start = (uint32_t)npages;
	mm->tail.prev = &mm->head;
	mm->tail.max_hole = (uint32_t)npages;
	mm->tail.height = 1;
	mm->root = &mm->tail;
	return 0;
}

int range_mgr_fini(struct range_mgr *mm)
{
	if (mm->count || mm->scan)
		return -EBUSY;
	mm->root = NULL;
	mm->head.next = mm->tail.prev = NULL;
	return 0;
}

int range_mgr_insert(struct range_mgr *mm, struct range_node *node,
		     uint64_t size, uint64_t align, uint64_t fpfn,
		     uint64_t lpfn, unsigned int flags)
{
	struct range_node *succ;
	struct range_req r;
	uint64_t start;
	int ret;

	if (node->next)
		return -EINVAL;
	ret = req_init(&r, mm, size, align, fpfn, lpfn, flags);
	if (ret)
		return ret;
	if (mm->scan)
		return -EBUSY;
	if (r.topdown)
		succ = find_high(mm->root, 0, mm->npages, &r, &start);
	else
		succ = find_low(mm->root, 0, mm->npages, &r, &start);
	if (!succ)
		return -ENOSPC;
	node->start = (uint32_t)start;
	node->size = (uint32_t)size;
	link_node(mm, node, succ);
	return 0;
}

int range_mgr_reserve(struct range_mgr *mm, struct range_node *node)
{
	struct range_node *n = mm->root, *succ = NULL;
	uint64_t end;

	if (node->next || !node->size || node->start >= mm->npages ||
	    node->size > mm->npages - node->start)
		return -EINVAL;
	if (mm->scan)
		return -EBUSY;
	end = node_end(node);
	/* The first node at or above the end: the tail at worst. */
	while (n) {
		if (n->start >= end) {
			succ = n;
			n = n->left;
		} else {
			n = n->right;
		}
	}
	if (hole_start(succ) > node->start)
		return -ENOSPC;
	link_node(mm, node, succ);
	return 0;
}

void range_mgr_remove(struct range_mgr *mm, struct range_node *node)
{
	struct range_node *succ = node->next;

	if (!node->next || node == &mm->tail || node == &mm->head)
		return;
	/*
	 * Unlinked first: the successor's hole, derived from the list,
	 * takes in @node and its hole. The successor is an ancestor of
	 * @node or the node replacing it: recomputed.
	 */
	node->prev->next = succ;
	succ->prev = node->prev;
	mm->root = tree_remove(mm->root, node, succ);
	node->left = node->right = node->prev = node->next = NULL;
	mm->used -= node->size;
	mm->count--;
}

/* The largest clipped hole in the subtree @n, its holes within [lo, hi). */
static uint64_t largest_in(const struct range_node *n, uint64_t lo,
			   uint64_t hi, uint64_t fpfn, uint64_t lpfn)
{
	uint64_t best = 0;

	while (n && lo < lpfn && hi > fpfn) {
		uint64_t hs = hole_start(n), s, e;

		if (lo >= fpfn && hi <= lpfn)
			return max_u64(best, n->max_hole);
		s = max_u64(hs, fpfn);
		e = min_u64(n->start, lpfn);
		if (s < e)
			best = max_u64(best, e - s);
		/*
		 * Only subtrees that cross an edge of the window go further
		 * than their maximum: two paths down the tree at most.
		 */
		best = max_u64(best, largest_in(n->left, lo, hs, fpfn, lpfn));
		lo = node_end(n);
		n = n->right;
	}
	return best;
}

uint64_t range_mgr_largest_hole(const struct range_mgr *mm, uint64_t fpfn,
				uint64_t lpfn)
{
	if (!lpfn)
		lpfn = mm->npages;
	if (fpfn >= lpfn || lpfn > mm->npages)
		return 0;
	return largest_in(mm->root, 0, mm->npages, fpfn, lpfn);
}

bool range_mgr_could_fit(const struct range_mgr *mm, uint64_t size,
			 uint64_t align, uint64_t fpfn, uint64_t lpfn,
			 bool (*removable)(const struct range_node *node,
					   void *data),
			 void *data)
{
	const struct range_node *n;
	struct range_req r;
	uint64_t free_start = 0, start;

	if (req_init(&r, mm, size, align, fpfn, lpfn, 0))
		return false;
	/* The free run grows over removable nodes; others end it. */
	for (n = mm->head.next; n; n = n->next) {
		if (n != &mm->tail && removable && removable(n, data))
			continue;
		if (req_fit(&r, free_start, n->start, &start))
			return true;
		free_start = node_end(n);
		if (free_start >= r.lpfn)
			break;
	}
	return false;
}

/* State of range_mgr_check()'s in-order walk. */
struct check_walk {
	const struct range_mgr *mm;
	const struct range_node *prev;  /* the node visited last */
	uint64_t used, count;
};

/* Check the subtree @n; its height in *@ret_height. 0 or -EFAULT. */
static int check_subtree(struct check_walk *w, const struct range_node *n,
			 int depth, int *ret_height)
{
	int hl, hr;

	*ret_height = 0;
	if (!n)
		return 0;
	/* A balanced tree of 2^64 nodes is less than 93 deep. */
	if (depth > 100)
		return -EFAULT;
	if (check_subtree(w, n->left, depth + 1, &hl))
		return -EFAULT;
	/* The list and the tree agree on the order. */
	if (n->scanned || n->prev != w->prev || w->prev->next != n)
		return -EFAULT;
	if (n->start < node_end(w->prev))
		return -EFAULT;
	if (n != &w->mm->tail) {
		if (!n->size || n->start >= w->mm->npages ||
		    n->size > w->mm->npages - n->start)
			return -EFAULT;
		w->used += n->size;
		w->count++;
	}
	w->prev = n;
	if (check_subtree(w, n->right, depth + 1, &hr))
		return -EFAULT;
	if (hl - hr > 1 || hr - hl > 1 ||
	    n->height != 1 + (hl > hr ? hl : hr) ||
	    n->max_hole != max_u64(node_hole(n),
				   max_u64(max_hole(n->left),
					   max_hole(n->right))))
		return -EFAULT;
	*ret_height = n->height;
	return 0;
}

int range_mgr_check(const struct range_mgr *mm)
{
	struct check_walk w = { .mm = mm, .prev = &mm->head };
	int h;

	if (mm->scan)
		return -EBUSY;
	if (mm->head.start || mm->head.size || mm->head.prev ||
	    mm->tail.start != mm->npages || mm->tail.size || mm->tail.next)
		return -EFAULT;
	if (check_subtree(&w, mm->root, 0, &h))
		return -EFAULT;
	/* The tail is the last node, and the walk met every node. */
	if (w.prev != &mm->tail || w.used != mm->used || w.count != mm->count)
		return -EFAULT;
	return 0;
}

int range_scan_init(struct range_scan *scan, struct range_mgr *mm,
		    uint64_t size, uint64_t align, uint64_t fpfn,
		    uint64_t lpfn, unsigned int flags)
{
	struct range_req r;

	if (req_init(&r, mm, size, align, fpfn, lpfn, flags))
		return -EINVAL;
	memset(scan, 0, sizeof(*scan));
	scan->mm = mm;
	scan->size = r.size;
	scan->align = r.align;
	scan->fpfn = r.fpfn;
	scan->lpfn = r.lpfn;
	scan->flags = flags;
	return 0;
}

bool range_scan_add(struct range_scan *scan, struct range_node *node)
{
	struct range_mgr *mm = scan->mm;
	struct range_req r = {
		.size = scan->size, .align = scan->align,
		.fpfn = scan->fpfn, .lpfn = scan->lpfn,
		.topdown = scan->flags & RANGE_TOPDOWN,
	};
	struct range_node *prev = node->prev, *next = node->next;
	uint64_t start;

	if (!node->next || node == &mm->tail || node->scanned ||
	    (mm->scan && mm->scan != scan))
		return false;
	mm->scan = scan;
	mm->scanned++;
	node->scanned = true;
	/* Off the list, keeping its own links for range_scan_remove(). */
	prev->next = next;
	next->prev = prev;
	if (scan->found)
		return true;
	/* Its list neighbours now bound the free run around it. */
	if (!req_fit(&r, node_end(prev), next->start, &start))
		return false;
	scan->found = true;
	scan->hit_start = start;
	scan->hit_end = start + scan->size;
	return true;
}

bool range_scan_remove(struct range_scan *scan, struct range_node *node)
{
	struct range_mgr *mm = scan->mm;

	if (!node->scanned || !node->next || mm->scan != scan)
		return false;
	node->prev->next = node;
	node->next->prev = node;
	node->scanned = false;
	if (!--mm->scanned)
		mm->scan = NULL;
	return scan->found && node->start < scan->hit_end &&
	       node_end(node) > scan->hit_start;
}
