// SPDX-License-Identifier: MIT
/*
 * A job's buffer list (struct ttm_exec_entry, ttmsim/exec.h): folding
 * the entries that name one buffer, and validating every entry when the
 * job's own buffers are in each other's way.
 *
 * Eviction never takes a buffer the job holds (TTM's rule: it is in use),
 * so a job whose VRAM-only buffer finds VRAM full of the job's own
 * VRAM-or-GTT buffers would get -ENOSPC although it fits. Then those
 * buffers move to another domain their placement allows, one at a time,
 * until the buffer fits: -ENOSPC is left for jobs that can never fit.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "ttmsim/exec.h"
#include "util/compiler.h"

/* Sort key: the buffer, then the entry's place in the caller's list. */
static int cmp_bo_index(const void *a, const void *b)
{
	const struct ttm_exec_entry *x = a, *y = b;

	if (x->bo != y->bo)
		return (uintptr_t)x->bo < (uintptr_t)y->bo ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Back to the caller's order. */
static int cmp_index(const void *a, const void *b)
{
	const struct ttm_exec_entry *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

static void entry_swap(struct ttm_exec_entry *a, struct ttm_exec_entry *b)
{
	struct ttm_exec_entry t = *a;

	*a = *b;
	*b = t;
}

/*
 * Entries a job lists are few (8 in bench execbuf): an insertion sort of
 * them costs a fraction of qsort()'s calls through a comparator pointer
 * (qsort was 7% of bench execbuf's CPU). Larger lists: qsort().
 */
#define ENTRIES_INSERTION_MAX 16

static void entries_sort(struct ttm_exec_entry *v, unsigned int n,
			 int (*cmp)(const void *, const void *))
{
	if (n > ENTRIES_INSERTION_MAX) {
		qsort(v, n, sizeof(*v), cmp);
		return;
	}
	for (unsigned int i = 1; i < n; i++) {
		struct ttm_exec_entry t = v[i];
		unsigned int j = i;

		for (; j && cmp(&v[j - 1], &t) > 0; j--)
			v[j] = v[j - 1];
		v[j] = t;
	}
}

/*
 * Whether a short list names no buffer twice: n(n-1)/2 compares of
 * pointers (28 for 8 entries) against the two sorts of a fold, which
 * leave such a list as it was anyway.
 */
static bool entries_distinct(const struct ttm_exec_entry *v, unsigned int n)
{
	if (n > ENTRIES_INSERTION_MAX)
		return false;  /* unknown: the sorts find out */
	for (unsigned int i = 1; i < n; i++)
		for (unsigned int j = 0; j < i; j++)
			if (v[i].bo == v[j].bo)
				return false;
	return true;
}

TTM_EXPORT unsigned int ttm_exec_entries_fold(struct ttm_exec_entry *entries,
					      unsigned int n,
					      unsigned int *ret_first_dup)
{
	unsigned int i, kept = 0, first_dup = n;

	for (i = 0; i < n; i++)
		entries[i].index = i;
	if (entries_distinct(entries, n)) {
		if (ret_first_dup)
			*ret_first_dup = n;
		return n;
	}
	entries_sort(entries, n, cmp_bo_index);
	/*
	 * Runs of one buffer are adjacent now, each led by its first entry.
	 * Kept entries gather at the front by swapping, which leaves the
	 * repeats behind them rather than overwriting them: the caller may
	 * own a reference per entry.
	 */
	for (i = 0; i < n; i++) {
		if (kept && entries[kept - 1].bo == entries[i].bo) {
			entries[kept - 1].write |= entries[i].write;
			if (entries[i].index < first_dup)
				first_dup = entries[i].index;
			continue;
		}
		if (i != kept)
			entry_swap(&entries[kept], &entries[i]);
		kept++;
	}
	entries_sort(entries, kept, cmp_index);
	entries_sort(entries + kept, n - kept, cmp_index);
	if (ret_first_dup)
		*ret_first_dup = first_dup;
	return kept;
}

static const struct ttm_placement *
entry_placement(const struct ttm_exec_entry *e)
{
	return e->placement ? e->placement : ttm_bo_placement(e->bo);
}

/* @pl without @domain's places, in order; count 0 if none is left. */
static struct ttm_placement placement_without(const struct ttm_placement *pl,
					      enum ttm_domain domain)
{
	struct ttm_placement out = { 0 };
	unsigned int k;

	for (k = 0; k < pl->count; k++)
		if (pl->places[k].domain != domain)
			out.places[out.count++] = pl->places[k];
	return out;
}

/*
 * Move the entries other than @i, unpinned and allowed elsewhere, out of
 * @domain one by one, validating @i again after each; the result of the
 * last validation of @i, or of a move that failed otherwise than for room
 * (-EDEADLK included: the caller backs off).
 */
static int make_room_among_own(const struct ttm_exec_entry *entries,
			       unsigned int n, unsigned int i,
			       enum ttm_domain domain,
			       struct ttm_operation_ctx *ctx,
			       const char *file, int line)
{
	const struct ttm_placement *pl = entry_placement(&entries[i]);
	unsigned int j;
	int ret = -ENOSPC;

	for (j = 0; j < n && ret == -ENOSPC; j++) {
		struct ttm_bo *bo = entries[j].bo;
		struct ttm_placement other;

		/* Another device's buffer takes none of this one's room. */
		if (j == i || ttm_bo_domain(bo) != domain ||
		    ttm_bo_device(bo) != ttm_bo_device(entries[i].bo) ||
		    ttm_bo_pin_count(bo))
			continue;
		other = placement_without(entry_placement(&entries[j]), domain);
		if (other.count == 0)
			continue;
		ret = ttm_bo_validate_at(bo, &other, ctx, file, line);
		if (ret == 0)
			ret = ttm_bo_validate_at(entries[i].bo, pl, ctx, file,
						 line);
	}
	return ret;
}

/*
 * An entry to place again: the most confined first (the narrowest window
 * of the domain it may take), then the largest.
 */
struct replace {
	uint64_t window, size;
	unsigned int pos;
};

static int cmp_replace(const void *a, const void *b)
{
	const struct replace *x = a, *y = b;

	if (x->window != y->window)
		return x->window < y->window ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/*
 * The pages of @domain (@pages of them, @visible CPU-visible) entry @e
 * may take: the widest window among its places there; UINT64_MAX if it
 * has none (it goes elsewhere, taking nothing here).
 */
static uint64_t entry_window(const struct ttm_exec_entry *e,
			     enum ttm_domain domain, uint64_t pages,
			     uint64_t visible)
{
	const struct ttm_placement *pl = entry_placement(e);
	uint64_t best = 0;
	bool any = false;
	unsigned int k;

	for (k = 0; k < pl->count; k++) {
		const struct ttm_place *place = &pl->places[k];
		uint64_t end = pages;

		if (place->domain != domain)
			continue;
		any = true;
		if (place->lpfn && place->lpfn < end)
			end = place->lpfn;
		if ((place->flags & TTM_PLACE_CPU_VISIBLE) && visible < end)
			end = visible;
		if (end > place->fpfn && end - place->fpfn > best)
			best = end - place->fpfn;
	}
	return any ? best : UINT64_MAX;
}

/*
 * The last resort when the job's own buffers that cannot go elsewhere
 * leave no hole for entry @i in @domain (enough pages, in the wrong
 * places): take them all out to SYSTEM, then place them and @i again,
 * those confined to the narrowest window of the domain first (visible
 * VRAM before anywhere in VRAM, which could take it), then the largest,
 * so that first fit packs them; whatever else is in the domain is
 * evictable. i915's execbuf does the same with its address
 * space (evict everything, then bind again). The result of the last
 * validation, or of a move that failed.
 */
static int repack_own(const struct ttm_exec_entry *entries, unsigned int n,
		      unsigned int i, enum ttm_domain domain,
		      struct ttm_operation_ctx *ctx, const char *file,
		      int line)
{
	static const struct ttm_placement system = TTM_PLACEMENT_SYSTEM_INIT;
	struct ttm_device *dev = ttm_bo_device(entries[i].bo);
	struct replace *order = malloc(n * sizeof(*order));
	uint64_t page = ttm_device_page_size(dev), pages, visible;
	struct ttm_device_stats st;
	unsigned int j, m = 0;
	int ret = 0;

	if (!order)
		return -ENOMEM;
	ttm_device_get_stats(dev, &st);
	pages = st.domain[domain].capacity / page;
	visible = ttm_device_visible_vram(dev) / page;
	for (j = 0; j < n && ret == 0; j++) {
		struct ttm_bo *bo = entries[j].bo;
		bool movable = ttm_bo_domain(bo) == domain &&
			       ttm_bo_device(bo) == dev &&
			       !ttm_bo_pin_count(bo) && ttm_bo_exporter(bo) == bo;

		if (j != i && !movable)
			continue;
		/*
		 * @i too, if it lies in the domain outside its window: its
		 * own range may be what stands in the way of its hole.
		 */
		if (movable)
			ret = ttm_bo_validate_at(bo, &system, ctx, file, line);
		order[m++] = (struct replace){
			entry_window(&entries[j], domain, pages, visible),
			ttm_bo_size(bo), j,
		};
	}
	if (ret == 0)
		qsort(order, m, sizeof(*order), cmp_replace);
	for (j = 0; j < m && ret == 0; j++) {
		const struct ttm_exec_entry *e = &entries[order[j].pos];

		ret = ttm_bo_validate_at(e->bo, entry_placement(e), ctx, file,
					 line);
	}
	free(order);
	return ret;
}

static bool domain_listed_before(const struct ttm_placement *pl,
				 unsigned int k)
{
	unsigned int j;

	for (j = 0; j < k; j++)
		if (pl->places[j].domain == pl->places[k].domain)
			return true;
	return false;
}

/*
 * One entry into its placement, the others moved out of its way: moving
 * them out of the domain frees their ranges, wherever the entry's place
 * wants its hole.
 */
static int validate_entry(const struct ttm_exec_entry *entries,
			  unsigned int n, unsigned int i,
			  struct ttm_operation_ctx *ctx, const char *file,
			  int line)
{
	const struct ttm_placement *pl = entry_placement(&entries[i]);
	unsigned int k;
	int ret;

	ret = ttm_bo_validate_at(entries[i].bo, pl, ctx, file, line);
	for (k = 0; k < pl->count && ret == -ENOSPC; k++) {
		/* A domain listed again (another range): done already. */
		if (domain_listed_before(pl, k))
			continue;
		ret = make_room_among_own(entries, n, i, pl->places[k].domain,
					  ctx, file, line);
	}
	for (k = 0; k < pl->count && ret == -ENOSPC; k++) {
		if (domain_listed_before(pl, k))
			continue;
		ret = repack_own(entries, n, i, pl->places[k].domain, ctx,
				 file, line);
	}
	return ret;
}

/* The caller's file:line goes to each buffer's check of its reservation. */
TTM_EXPORT int ttm_exec_entries_validate_at(
	const struct ttm_exec_entry *entries, unsigned int n,
	struct ttm_operation_ctx *ctx, unsigned int *ret_failed,
	const char *file, int line)
{
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = validate_entry(entries, n, i, ctx, file, line);
		if (ret) {
			if (ret_failed)
				*ret_failed = i;
			return ret;
		}
	}
	return 0;
}

/* Out of reach of the caller-site macro of ttmsim/exec.h. */
TTM_EXPORT int (ttm_exec_entries_validate)(
	const struct ttm_exec_entry *entries, unsigned int n,
	struct ttm_operation_ctx *ctx, unsigned int *ret_failed)
{
	return ttm_exec_entries_validate_at(entries, n, ctx, ret_failed, NULL,
					    0);
}
