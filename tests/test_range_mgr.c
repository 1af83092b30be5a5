// SPDX-License-Identifier: MIT
/*
 * The range allocator behind a limited domain (bo/range_mgr.h), on its
 * own: placement (first fit, last fit, alignment, windows), the
 * fragmentation that leaves free pages but no hole, the eviction scan
 * and the "could ever fit" judgement, the queries and walks, a long
 * random run checked op by op against a page-by-page model, and a
 * million nodes in and out.
 *
 * Pages are the unit throughout; range_mgr_check() runs after every
 * change.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bo/range_mgr.h"

#define CHECK(mm) assert_int_equal(range_mgr_check(mm), 0)

/* Insert and expect success at @start, the invariants holding. */
static void insert_at(struct range_mgr *mm, struct range_node *node,
		      uint64_t size, uint64_t align, uint64_t fpfn,
		      uint64_t lpfn, unsigned int flags, uint64_t start)
{
	assert_int_equal(range_mgr_insert(mm, node, size, align, fpfn, lpfn,
					  flags), 0);
	assert_int_equal(node->start, start);
	assert_int_equal(node->size, size);
	assert_true(range_node_allocated(node));
	CHECK(mm);
}

static void remove_node(struct range_mgr *mm, struct range_node *node)
{
	range_mgr_remove(mm, node);
	assert_false(range_node_allocated(node));
	CHECK(mm);
}

/* Fill [0, n) with n nodes of one page: node i at page i. */
static void fill_pages(struct range_mgr *mm, struct range_node *nodes,
		       unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		insert_at(mm, &nodes[i], 1, 0, 0, 0, 0, i);
}

static void test_basic(void **state)
{
	struct range_node a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
	struct range_mgr mm;

	(void)state;
	assert_int_equal(range_mgr_init(&mm, 0), -EINVAL);
	assert_int_equal(range_mgr_init(&mm, RANGE_MGR_MAX_PAGES + 1),
			 -EINVAL);
	assert_int_equal(range_mgr_init(&mm, 100), 0);
	CHECK(&mm);
	assert_int_equal(range_mgr_size(&mm), 100);
	assert_int_equal(range_mgr_largest_hole(&mm, 0, 0), 100);

	insert_at(&mm, &a, 10, 0, 0, 0, 0, 0);
	insert_at(&mm, &b, 20, 0, 0, 0, 0, 10);
	assert_int_equal(range_mgr_used(&mm), 30);
	assert_int_equal(range_mgr_count(&mm), 2);
	assert_int_equal(range_mgr_fini(&mm), -EBUSY);
	CHECK(&mm);

	/* Bad arguments, and a node already in. */
	assert_int_equal(range_mgr_insert(&mm, &c, 0, 0, 0, 0, 0), -EINVAL);
	assert_int_equal(range_mgr_insert(&mm, &c, 1, 0, 0, 101, 0),
			 -EINVAL);
	assert_int_equal(range_mgr_insert(&mm, &c, 1, 0, 50, 50, 0),
			 -EINVAL);
	assert_int_equal(range_mgr_insert(&mm, &c, 1, 0, 100, 0, 0),
			 -EINVAL);
	assert_int_equal(range_mgr_insert(&mm, &c, 1, 0, 0, 0, 1u << 7),
			 -EINVAL);
	assert_int_equal(range_mgr_insert(&mm, &a, 1, 0, 0, 0, 0), -EINVAL);
	/* Larger than the manager, or than the window: never fits. */
	assert_int_equal(range_mgr_insert(&mm, &c, 101, 0, 0, 0, 0),
			 -ENOSPC);
	assert_int_equal(range_mgr_insert(&mm, &c, 11, 0, 40, 50, 0),
			 -ENOSPC);
	assert_false(range_node_allocated(&c));
	CHECK(&mm);

	/* The hole left by a: a small node goes there, a larger one not. */
	remove_node(&mm, &a);
	insert_at(&mm, &c, 5, 0, 0, 0, 0, 0);
	insert_at(&mm, &d, 6, 0, 0, 0, 0, 30);
	insert_at(&mm, &a, 5, 0, 0, 0, 0, 5);
	assert_int_equal(range_mgr_used(&mm), 36);

	/* Removing a node twice, or one never in, changes nothing. */
	remove_node(&mm, &a);
	range_mgr_remove(&mm, &a);
	CHECK(&mm);
	assert_int_equal(range_mgr_used(&mm), 31);
	assert_int_equal(range_mgr_count(&mm), 3);

	/* Full: -ENOSPC, nothing changed. */
	insert_at(&mm, &a, 64, 0, 0, 0, 0, 36);
	assert_int_equal(range_mgr_insert(&mm, &a, 1, 0, 0, 0, 0), -EINVAL);
	{
		struct range_node e = { 0 }, f = { 0 };

		/* 5 pages at 5..10 are free */
		assert_int_equal(range_mgr_insert(&mm, &e, 6, 0, 0, 0, 0),
				 -ENOSPC);
		insert_at(&mm, &e, 5, 0, 0, 0, RANGE_TOPDOWN, 5);
		assert_int_equal(range_mgr_used(&mm), 100);
		assert_int_equal(range_mgr_largest_hole(&mm, 0, 0), 0);
		assert_int_equal(range_mgr_insert(&mm, &f, 1, 0, 0, 0, 0),
				 -ENOSPC);
		assert_int_equal(range_mgr_insert(&mm, &f, 1, 0, 0, 0,
						  RANGE_TOPDOWN), -ENOSPC);
		remove_node(&mm, &e);
	}
	remove_node(&mm, &a);
	remove_node(&mm, &b);
	remove_node(&mm, &c);
	remove_node(&mm, &d);
	assert_int_equal(range_mgr_used(&mm), 0);
	assert_int_equal(range_mgr_count(&mm), 0);
	assert_int_equal(range_mgr_fini(&mm), 0);
}

/*
 * The largest manager: page numbers are 32-bit, and ends (start + size)
 * reach 2^32 - 1 without wrapping; the tag byte is the caller's.
 */
static void test_32bit_top(void **state)
{
	struct range_node a = { 0 }, b = { 0 }, c = { 0 };
	struct range_mgr mm;

	(void)state;
	assert_int_equal(range_mgr_init(&mm, RANGE_MGR_MAX_PAGES), 0);
	a.tag = 0xa5;
	insert_at(&mm, &a, 10, 0, 0, 0, RANGE_TOPDOWN,
		  RANGE_MGR_MAX_PAGES - 10);
	assert_int_equal(a.tag, 0xa5);
	insert_at(&mm, &b, 1u << 31, 0, 0, 0, 0, 0);
	assert_int_equal(range_mgr_largest_hole(&mm, 0, 0),
			 RANGE_MGR_MAX_PAGES - 10 - (1u << 31));
	/* The rest, exactly: the window ends at the manager's end. */
	insert_at(&mm, &c, RANGE_MGR_MAX_PAGES - 10 - (1u << 31), 0,
		  1u << 31, 0, 0, 1u << 31);
	assert_int_equal(range_mgr_largest_hole(&mm, 0, 0), 0);
	range_mgr_remove(&mm, &a);
	CHECK(&mm);
	assert_int_equal(range_mgr_largest_hole(&mm, 0, 0), 10);
	range_mgr_remove(&mm, &b);
	range_mgr_remove(&mm, &c);
	CHECK(&mm);
	assert_int_equal(range_mgr_largest_hole(&mm, 0, 0),
			 RANGE_MGR_MAX_PAGES);
	assert_int_equal(range_mgr_fini(&mm), 0);
}

static void test_reserve(void **state)
{
	struct range_node a = { .start = 10, .size = 10 };
	struct range_node b = { .start = 19, .size = 2 };
	struct range_node c = { .start = 5, .size = 5 };
	struct range_node d = { 0 };
	struct range_mgr mm;

	(void)state;
	assert_int_equal(range_mgr_init(&mm, 64), 0);
	assert_int_equal(range_mgr_reserve(&mm, &a), 0);
	CHECK(&mm);
	assert_int_equal(range_mgr_reserve(&mm, &b), -ENOSPC);
	b.start = 20;
	assert_int_equal(range_mgr_reserve(&mm, &b), 0);
	assert_int_equal(range_mgr_reserve(&mm, &c), 0);
	CHECK(&mm);
	/* first fit now skips 5..22 */
	insert_at(&mm, &d, 5, 0, 0, 0, 0, 0);
	remove_node(&mm, &d);
	insert_at(&mm, &d, 6, 0, 0, 0, 0, 22);
	remove_node(&mm, &d);
	d.start = 60;
	d.size = 5;
	assert_int_equal(range_mgr_reserve(&mm, &d), -EINVAL);
	d.size = 0;
	assert_int_equal(range_mgr_reserve(&mm, &d), -EINVAL);
	d.start = 64;
	d.size = 1;
	assert_int_equal(range_mgr_reserve(&mm, &d), -EINVAL);
	assert_int_equal(range_mgr_reserve(&mm, &a), -EINVAL);
	remove_node(&mm, &a);
	remove_node(&mm, &b);
	remove_node(&mm, &c);
	assert_int_equal(range_mgr_fini(&mm), 0);
}

static void test_alignment(void **state)
{
	struct range_node n[8] = { 0 };
	struct range_mgr mm;

	(void)state;
	assert_int_equal(range_mgr_init(&mm, 100), 0);
	insert_at(&mm, &n[0], 1, 0, 0, 0, 0, 0);
	insert_at(&mm, &n[1], 4, 8, 0, 0, 0, 8);
	/* align 1 is none; 3 is not a power of two */
	insert_at(&mm, &n[2], 2, 1, 0, 0, 0, 1);
	insert_at(&mm, &n[3], 2, 3, 0, 0, 0, 3);
	/* 5..8 is free, but 3 pages at a multiple of 4 go at 12 */
	insert_at(&mm, &n[4], 3, 4, 0, 0, 0, 12);
	insert_at(&mm, &n[5], 3, 0, 0, 0, 0, 5);
	/* top down: the highest multiple of 32 that fits below 100 */
	insert_at(&mm, &n[6], 10, 32, 0, 0, RANGE_TOPDOWN, 64);
	/* an alignment beyond the manager: only page 0, taken */
	assert_int_equal(range_mgr_insert(&mm, &n[7], 1, 1000, 0, 0, 0),
			 -ENOSPC);
	assert_int_equal(range_mgr_insert(&mm, &n[7], 1, UINT64_MAX, 0, 0,
					  RANGE_TOPDOWN), -ENOSPC);
	remove_node(&mm, &n[0]);
	insert_at(&mm, &n[7], 1, UINT64_MAX, 0, 0, RANGE_TOPDOWN, 0);
	for (unsigned int i = 1; i < 8; i++)
		remove_node(&mm, &n[i]);
	assert_int_equal(range_mgr_fini(&mm), 0);
}

static void test_window(void **state)
{
	struct range_node n[6] = { 0 };
	struct range_mgr mm;

	(void)state;
	assert_int_equal(range_mgr_init(&mm, 100), 0);
	insert_at(&mm, &n[0], 4, 0, 10, 20, 0, 10);
	insert_at(&mm, &n[1], 4, 0, 10, 20, RANGE_TOPDOWN, 16);
	/* 14..16 is free, but not 3 pages: the free space outside is not */
	assert_int_equal(range_mgr_insert(&mm, &n[2], 3, 0, 10, 20, 0),
			 -ENOSPC);
	assert_int_equal(range_mgr_insert(&mm, &n[2], 3, 0, 10, 20,
					  RANGE_TOPDOWN), -ENOSPC);
	/* A hole crossing the window's edge counts for its inside part. */
	insert_at(&mm, &n[2], 3, 0, 19, 30, 0, 20);
	insert_at(&mm, &n[3], 3, 0, 0, 12, RANGE_TOPDOWN, 7);
	assert_int_equal(range_mgr_insert(&mm, &n[4], 2, 0, 8, 12, 0),
			 -ENOSPC);
	insert_at(&mm, &n[4], 2, 0, 8, 16, 0, 14);
	/* lpfn 0 is the end of the manager */
	insert_at(&mm, &n[5], 5, 0, 50, 0, RANGE_TOPDOWN, 95);
	assert_int_equal(range_mgr_largest_hole(&mm, 0, 0), 95 - 23);
	assert_int_equal(range_mgr_largest_hole(&mm, 0, 10), 7);
	assert_int_equal(range_mgr_largest_hole(&mm, 5, 10), 2);
	assert_int_equal(range_mgr_largest_hole(&mm, 10, 20), 0);
	assert_int_equal(range_mgr_largest_hole(&mm, 90, 0), 5);
	assert_int_equal(range_mgr_largest_hole(&mm, 96, 0), 0);
	assert_int_equal(range_mgr_largest_hole(&mm, 0, 101), 0);
	for (unsigned int i = 0; i < 6; i++)
		remove_node(&mm, &n[i]);
	assert_int_equal(range_mgr_fini(&mm), 0);
}

static void test_topdown(void **state)
{
	struct range_node n[64] = { 0 }, x = { 0 }, y = { 0 };
	struct range_mgr mm;

	(void)state;
	assert_int_equal(range_mgr_init(&mm, 64), 0);
	fill_pages(&mm, n, 64);
	/* holes of 2 at 4, of 3 at 20, of 2 at 50 */
	remove_node(&mm, &n[4]);
	remove_node(&mm, &n[5]);
	remove_node(&mm, &n[20]);
	remove_node(&mm, &n[21]);
	remove_node(&mm, &n[22]);
	remove_node(&mm, &n[50]);
	remove_node(&mm, &n[51]);
	insert_at(&mm, &x, 2, 0, 0, 0, RANGE_TOPDOWN, 50);
	insert_at(&mm, &y, 2, 0, 0, 0, RANGE_TOPDOWN, 21);
	remove_node(&mm, &x);
	remove_node(&mm, &y);
	insert_at(&mm, &x, 2, 0, 0, 0, 0, 4);
	remove_node(&mm, &x);
	insert_at(&mm, &x, 1, 2, 0, 0, RANGE_TOPDOWN, 50);
	insert_at(&mm, &y, 1, 2, 0, 0, RANGE_TOPDOWN, 22);
	remove_node(&mm, &x);
	remove_node(&mm, &y);
	/* inside a window: the highest hole in it */
	insert_at(&mm, &x, 2, 0, 0, 50, RANGE_TOPDOWN, 21);
	for (unsigned int i = 0; i < 64; i++)
		range_mgr_remove(&mm, &n[i]);
	remove_node(&mm, &x);
	assert_int_equal(range_mgr_fini(&mm), 0);
}

/* Removable unless marked pinned (the test's flag array in @data). */
static bool not_pinned(const struct range_node *node, void *data)
{
	const bool *pinned = data;

	return !pinned[node->start];
}

static void test_fragmentation(void **state)
{
	struct range_node n[64] = { 0 }, x = { 0 };
	bool pinned[64] = { false };
	struct range_mgr mm;
	uint64_t hs, he, holes = 0;
	struct range_node *pos;

	(void)state;
	assert_int_equal(range_mgr_init(&mm, 64), 0);
	fill_pages(&mm, n, 64);
	for (unsigned int i = 0; i < 64; i += 2)
		remove_node(&mm, &n[i]);
	assert_int_equal(range_mgr_used(&mm), 32);
	assert_int_equal(range_mgr_largest_hole(&mm, 0, 0), 1);
	/* half free, no two pages together */
	assert_int_equal(range_mgr_insert(&mm, &x, 2, 0, 0, 0, 0), -ENOSPC);
	assert_int_equal(range_mgr_insert(&mm, &x, 2, 0, 0, 0,
					  RANGE_TOPDOWN), -ENOSPC);
	range_mgr_for_each_hole(pos, &mm, hs, he) {
		assert_int_equal(hs, 2 * holes);
		assert_int_equal(he, hs + 1);
		holes++;
	}
	assert_int_equal(holes, 32);
	/* every node may go: it fits; none may: it does not */
	assert_true(range_mgr_could_fit(&mm, 2, 0, 0, 0, not_pinned,
					pinned));
	assert_true(range_mgr_could_fit(&mm, 64, 0, 0, 0, not_pinned,
					pinned));
	assert_false(range_mgr_could_fit(&mm, 2, 0, 0, 0, NULL, NULL));
	assert_true(range_mgr_could_fit(&mm, 1, 0, 0, 0, NULL, NULL));
	for (unsigned int i = 1; i < 64; i += 2)
		remove_node(&mm, &n[i]);
	assert_int_equal(range_mgr_fini(&mm), 0);
}

static void test_could_fit(void **state)
{
	struct range_node n[8] = { 0 };
	bool pinned[64] = { false };
	struct range_mgr mm;

	(void)state;
	assert_int_equal(range_mgr_init(&mm, 32), 0);
	for (unsigned int i = 0; i < 8; i++)
		insert_at(&mm, &n[i], 4, 0, 0, 0, 0, 4 * i);
	/* pinned at 12..16 and 20..24; free runs 0..12, 16..20, 24..32 */
	pinned[12] = pinned[20] = true;
	assert_true(range_mgr_could_fit(&mm, 12, 0, 0, 0, not_pinned,
					pinned));
	assert_false(range_mgr_could_fit(&mm, 13, 0, 0, 0, not_pinned,
					 pinned));
	assert_true(range_mgr_could_fit(&mm, 8, 0, 14, 0, not_pinned,
					pinned));
	assert_false(range_mgr_could_fit(&mm, 8, 0, 14, 31, not_pinned,
					 pinned));
	/* aligned: 8 at a multiple of 16 fits at 0, not above page 1 */
	assert_true(range_mgr_could_fit(&mm, 8, 16, 0, 0, not_pinned,
					pinned));
	assert_false(range_mgr_could_fit(&mm, 8, 16, 1, 0, not_pinned,
					 pinned));
	assert_true(range_mgr_could_fit(&mm, 4, 16, 1, 0, not_pinned,
					pinned));
	assert_false(range_mgr_could_fit(&mm, 3, 3, 10, 20, not_pinned,
					 pinned));
	assert_true(range_mgr_could_fit(&mm, 3, 2, 10, 20, not_pinned,
					pinned));
	assert_false(range_mgr_could_fit(&mm, 5, 0, 10, 20, not_pinned,
					 pinned));
	/* bad arguments */
	assert_false(range_mgr_could_fit(&mm, 0, 0, 0, 0, not_pinned,
					 pinned));
	assert_false(range_mgr_could_fit(&mm, 33, 0, 0, 0, not_pinned,
					 pinned));
	assert_false(range_mgr_could_fit(&mm, 1, 0, 0, 33, not_pinned,
					 pinned));
	/* nothing removable and full */
	assert_false(range_mgr_could_fit(&mm, 1, 0, 0, 0, NULL, NULL));
	pinned[0] = pinned[28] = true;
	assert_true(range_mgr_could_fit(&mm, 8, 0, 0, 0, not_pinned,
					pinned));
	assert_false(range_mgr_could_fit(&mm, 9, 0, 0, 0, not_pinned,
					 pinned));
	for (unsigned int i = 0; i < 8; i++)
		remove_node(&mm, &n[i]);
	assert_true(range_mgr_could_fit(&mm, 32, 0, 0, 0, NULL, NULL));
	assert_int_equal(range_mgr_fini(&mm), 0);
}

/* The nodes in address order, as starts. */
static unsigned int snapshot(struct range_mgr *mm, uint64_t *starts,
			     unsigned int max)
{
	struct range_node *pos;
	unsigned int k = 0;

	range_mgr_for_each_node(pos, mm) {
		assert_true(k < max);
		starts[k++] = pos->start;
	}
	return k;
}

/*
 * Scan for @size pages with the nodes of @order (indices into @n, pages
 * of one each, in LRU order): expect add to say true first at
 * @order[@hit_at], and remove to pick @evict (a bitmask of indices).
 */
static void scan_expect(struct range_mgr *mm, struct range_node *n,
			const unsigned int *order, unsigned int count,
			uint64_t size, uint64_t align, uint64_t fpfn,
			uint64_t lpfn, unsigned int flags, unsigned int hit_at,
			uint64_t hit_start, uint64_t evict)
{
	uint64_t before[64], after[64], start = ~UINT64_C(0), got = 0;
	unsigned int nb = snapshot(mm, before, 64), added = 0;
	struct range_scan scan;

	assert_int_equal(range_scan_init(&scan, mm, size, align, fpfn, lpfn,
					 flags), 0);
	for (unsigned int i = 0; i < count; i++) {
		bool hit = range_scan_add(&scan, &n[order[i]]);

		added++;
		assert_int_equal(hit, i >= hit_at);
		if (hit)
			break;
	}
	assert_int_equal(range_mgr_check(mm), -EBUSY);
	assert_int_equal(range_mgr_insert(mm, &n[63], 1, 0, 0, 0, 0),
			 -EBUSY);
	assert_int_equal(range_scan_hit(&scan, &start), hit_at < count);
	if (hit_at < count)
		assert_int_equal(start, hit_start);
	while (added--)
		if (range_scan_remove(&scan, &n[order[added]]))
			got |= UINT64_C(1) << order[added];
	assert_int_equal(got, evict);
	/* the manager is as before */
	CHECK(mm);
	assert_int_equal(snapshot(mm, after, 64), nb);
	assert_memory_equal(before, after, nb * sizeof(before[0]));
}

static void test_scan_neighbours(void **state)
{
	struct range_node n[64] = { 0 }, x = { 0 };
	struct range_mgr mm;
	const unsigned int lru[] = { 3, 9, 10, 0, 11, 12 };
	const unsigned int merge[] = { 8, 6, 7, 9 };
	const unsigned int none[] = { 1, 2, 14 };

	(void)state;
	assert_int_equal(range_mgr_init(&mm, 16), 0);
	fill_pages(&mm, n, 16);
	/* 9, 10, 11 make 3 pages; 3 and 0 were added but are not needed */
	scan_expect(&mm, n, lru, 6, 3, 0, 0, 0, 0, 4, 9,
		    1u << 9 | 1u << 10 | 1u << 11);
	/* top down in the same hole: the same three */
	scan_expect(&mm, n, lru, 6, 3, 0, 0, 0, RANGE_TOPDOWN, 4, 9,
		    1u << 9 | 1u << 10 | 1u << 11);
	/* aligned to 2: 9..11 holds none; 9..12 holds 10..12: 9 stays */
	scan_expect(&mm, n, lru, 6, 2, 2, 0, 0, 0, 4, 10,
		    1u << 10 | 1u << 11);
	/* not enough: nothing found, nothing to evict */
	scan_expect(&mm, n, none, 3, 3, 0, 0, 0, 0, 3, 0, 0);

	/* Merged with free pages: 5 is free; 5..9 opens with 6, 7, 8. */
	remove_node(&mm, &n[5]);
	scan_expect(&mm, n, merge, 4, 3, 0, 0, 0, 0, 2, 5,
		    1u << 6 | 1u << 7);
	/* top down the placement is 6..9: 6, 7, 8 go */
	scan_expect(&mm, n, merge, 4, 3, 0, 0, 0, RANGE_TOPDOWN, 2, 6,
		    1u << 6 | 1u << 7 | 1u << 8);
	/* five pages: 5..10 once 9 is added too; all four go */
	scan_expect(&mm, n, merge, 4, 5, 0, 0, 0, 0, 3, 5,
		    1u << 6 | 1u << 7 | 1u << 8 | 1u << 9);

	/* The caller evicts what the scan chose, then the insert fits. */
	{
		struct range_scan scan;
		unsigned int added = 0;
		bool evict[16] = { false };
		uint64_t hit;

		assert_int_equal(range_scan_init(&scan, &mm, 3, 0, 0, 0, 0),
				 0);
		while (!range_scan_add(&scan, &n[lru[added++]]))
			;
		assert_true(range_scan_hit(&scan, &hit));

		while (added--)
			evict[lru[added]] = range_scan_remove(&scan,
							      &n[lru[added]]);
		for (unsigned int i = 0; i < 16; i++)
			if (evict[i])
				remove_node(&mm, &n[i]);
		insert_at(&mm, &x, 3, 0, 0, 0, 0, hit);
		assert_int_equal(hit, 9);
		remove_node(&mm, &x);
	}
	for (unsigned int i = 0; i < 16; i++)
		range_mgr_remove(&mm, &n[i]);
	assert_int_equal(range_mgr_fini(&mm), 0);
}

static void test_scan_window(void **state)
{
	struct range_node n[64] = { 0 };
	struct range_mgr mm;
	const unsigned int lru[] = { 2, 3, 4, 17, 18, 19, 20 };
	const unsigned int edge[] = { 14, 15, 16, 17 };
	struct range_scan scan;

	(void)state;
	assert_int_equal(range_mgr_init(&mm, 32), 0);
	fill_pages(&mm, n, 32);
	/* 2..5 opens first, outside the window: only 17..20 counts */
	scan_expect(&mm, n, lru, 7, 3, 0, 16, 24, 0, 5, 17,
		    1u << 17 | 1u << 18 | 1u << 19);
	/* 14..18 crosses the window's edge: only 16, 17 are inside */
	scan_expect(&mm, n, edge, 4, 2, 0, 16, 24, 0, 3, 16,
		    1u << 16 | 1u << 17);
	scan_expect(&mm, n, edge, 4, 3, 0, 16, 24, 0, 4, 0, 0);
	/* and the same from the top */
	scan_expect(&mm, n, edge, 4, 2, 0, 0, 16, RANGE_TOPDOWN, 1, 14,
		    1u << 14 | 1u << 15);
	/* bad windows */
	assert_int_equal(range_scan_init(&scan, &mm, 1, 0, 16, 16, 0),
			 -EINVAL);
	assert_int_equal(range_scan_init(&scan, &mm, 9, 0, 16, 24, 0),
			 -EINVAL);
	assert_int_equal(range_scan_init(&scan, &mm, 0, 0, 0, 0, 0),
			 -EINVAL);
	/* a node added twice, or not in the manager, is refused */
	{
		struct range_node stray = { 0 };

		assert_int_equal(range_scan_init(&scan, &mm, 2, 0, 0, 0, 0),
				 0);
		assert_false(range_scan_add(&scan, &stray));
		assert_false(range_scan_add(&scan, &n[1]));
		assert_false(range_scan_add(&scan, &n[1]));
		assert_true(range_scan_add(&scan, &n[2]));
		assert_false(range_scan_remove(&scan, &stray));
		assert_true(range_scan_remove(&scan, &n[2]));
		assert_true(range_scan_remove(&scan, &n[1]));
		assert_false(range_scan_remove(&scan, &n[1]));
		CHECK(&mm);
	}
	for (unsigned int i = 0; i < 32; i++)
		remove_node(&mm, &n[i]);
	assert_int_equal(range_mgr_fini(&mm), 0);
}

static void test_walks(void **state)
{
	struct range_node n[10] = { 0 }, *pos, *tmp;
	struct range_mgr mm;
	uint64_t hs, he, last = 0;
	unsigned int k = 0;

	(void)state;
	assert_int_equal(range_mgr_init(&mm, 1000), 0);
	/* top down, so that address order is the reverse of insertion */
	for (unsigned int i = 0; i < 10; i++)
		insert_at(&mm, &n[i], i + 1, 16, 0, 0, RANGE_TOPDOWN,
			  992 - 16 * i);
	range_mgr_for_each_node(pos, &mm) {
		assert_ptr_equal(pos, &n[9 - k]);
		assert_true(pos->start >= last);
		last = pos->start + pos->size;
		k++;
	}
	assert_int_equal(k, 10);
	k = 0;
	last = 0;
	range_mgr_for_each_hole(pos, &mm, hs, he) {
		assert_true(hs >= last);
		assert_true(he > hs);
		assert_int_equal(he, pos->start);
		last = he;
		k++;
	}
	/* below the lowest node, between each two, above the highest */
	assert_int_equal(k, 11);
	range_mgr_for_each_node_safe(pos, tmp, &mm)
		remove_node(&mm, pos);
	assert_int_equal(range_mgr_count(&mm), 0);
	assert_int_equal(range_mgr_fini(&mm), 0);
}

/* range_mgr_check() sees each kind of damage (then undone). */
static void test_check_detects(void **state)
{
	struct range_node n[8] = { 0 };
	struct range_mgr mm;
	uint64_t saved;

	(void)state;
	assert_int_equal(range_mgr_init(&mm, 64), 0);
	for (unsigned int i = 0; i < 8; i++)
		insert_at(&mm, &n[i], 4, 0, 0, 0, 0, 4 * i);
	/* overlap: a node moved into its neighbour */
	saved = n[3].start;
	n[3].start = n[2].start + 1;
	assert_int_equal(range_mgr_check(&mm), -EFAULT);
	n[3].start = saved;
	CHECK(&mm);
	/* past the end */
	saved = n[7].size;
	n[7].size = 64;
	assert_int_equal(range_mgr_check(&mm), -EFAULT);
	n[7].size = saved;
	/* a subtree maximum wrong (holes are derived from the list) */
	n[4].max_hole++;
	assert_int_equal(range_mgr_check(&mm), -EFAULT);
	n[4].max_hole--;
	/* the used sum or the count wrong */
	mm.used++;
	assert_int_equal(range_mgr_check(&mm), -EFAULT);
	mm.used--;
	mm.count--;
	assert_int_equal(range_mgr_check(&mm), -EFAULT);
	mm.count++;
	/* the list out of step with the tree */
	n[1].next = &n[3];
	assert_int_equal(range_mgr_check(&mm), -EFAULT);
	n[1].next = &n[2];
	/* a height wrong */
	n[6].height += 2;
	assert_int_equal(range_mgr_check(&mm), -EFAULT);
	n[6].height -= 2;
	CHECK(&mm);
	for (unsigned int i = 0; i < 8; i++)
		remove_node(&mm, &n[i]);
	assert_int_equal(range_mgr_fini(&mm), 0);
}

/* A small fixed-seed generator: the same run on every libc. */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(2685821657736338717);
}

static uint64_t rnd_below(uint64_t n)
{
	return rnd() % n;
}

#define MODEL_SLOTS 160

/* The allocator's state page by page: the brute-force model. */
struct model {
	struct range_mgr mm;
	uint64_t npages;
	int *owner;                     /* slot per page, -1: free */
	uint64_t *run;                  /* free pages from each page on */
	struct range_node nodes[MODEL_SLOTS];
	uint64_t start[MODEL_SLOTS], size[MODEL_SLOTS];
	bool in[MODEL_SLOTS];
	bool gone[MODEL_SLOTS];         /* scan added / removable */
	uint64_t used, count;
};

/* A page free, or taken by a node the model counts as gone. */
static bool model_free(const struct model *m, uint64_t p, bool with_gone)
{
	return m->owner[p] < 0 || (with_gone && m->gone[m->owner[p]]);
}

static void model_runs(struct model *m, bool with_gone)
{
	m->run[m->npages] = 0;
	for (uint64_t p = m->npages; p-- > 0;)
		m->run[p] = model_free(m, p, with_gone) ? m->run[p + 1] + 1 : 0;
}

/* The placement of a request in the free pages of m->run, or -ENOSPC. */
static int model_place(const struct model *m, uint64_t size, uint64_t align,
		       uint64_t fpfn, uint64_t lpfn, bool topdown,
		       uint64_t *ret_start)
{
	uint64_t a = align > 1 ? align : 1;

	for (uint64_t i = 0; i + size <= lpfn - fpfn; i++) {
		uint64_t s = topdown ? lpfn - size - i : fpfn + i;

		if (s % a == 0 && m->run[s] >= size) {
			*ret_start = s;
			return 0;
		}
	}
	return -ENOSPC;
}

/* Check a request's arguments as the allocator must; lpfn resolved. */
static int model_args(const struct model *m, uint64_t size,
		      unsigned int flags, uint64_t fpfn, uint64_t *lpfn)
{
	if (!size || (flags & ~RANGE_FLAGS_ALL))
		return -EINVAL;
	if (!*lpfn)
		*lpfn = m->npages;
	if (fpfn >= *lpfn || *lpfn > m->npages)
		return -EINVAL;
	return size > *lpfn - fpfn ? -ENOSPC : 0;
}

static void model_take(struct model *m, int k, uint64_t start, uint64_t size)
{
	for (uint64_t p = start; p < start + size; p++) {
		assert_int_equal(m->owner[p], -1);
		m->owner[p] = k;
	}
	m->start[k] = start;
	m->size[k] = size;
	m->in[k] = true;
	m->used += size;
	m->count++;
}

/* The allocator agrees with the model: nodes, holes, sums. */
static void model_verify(struct model *m)
{
	struct range_node *pos;
	uint64_t hs, he, p = 0, nodes = 0;

	CHECK(&m->mm);
	assert_int_equal(range_mgr_used(&m->mm), m->used);
	assert_int_equal(range_mgr_count(&m->mm), m->count);
	range_mgr_for_each_node(pos, &m->mm) {
		ptrdiff_t k = pos - m->nodes;

		assert_true(k >= 0 && k < MODEL_SLOTS && m->in[k]);
		assert_int_equal(pos->start, m->start[k]);
		assert_int_equal(pos->size, m->size[k]);
		nodes++;
	}
	assert_int_equal(nodes, m->count);
	/* the holes are exactly the model's maximal free runs */
	range_mgr_for_each_hole(pos, &m->mm, hs, he) {
		while (p < m->npages && m->owner[p] >= 0)
			p++;
		assert_int_equal(hs, p);
		while (p < m->npages && m->owner[p] < 0)
			p++;
		assert_int_equal(he, p);
	}
	while (p < m->npages && m->owner[p] >= 0)
		p++;
	assert_int_equal(p, m->npages);
}

static void random_window(const struct model *m, uint64_t *fpfn,
			  uint64_t *lpfn)
{
	uint64_t r = rnd_below(100);

	*fpfn = 0;
	*lpfn = 0;
	if (r < 55)
		return;
	if (r < 95) {
		*fpfn = rnd_below(m->npages);
		*lpfn = *fpfn + 1 + rnd_below(m->npages - *fpfn);
		if (*lpfn == m->npages && rnd_below(2))
			*lpfn = 0;
		return;
	}
	/* a bad one */
	*fpfn = rnd_below(m->npages + 2);
	*lpfn = rnd_below(2) ? *fpfn : m->npages + 1;
}

static uint64_t random_size(const struct model *m)
{
	uint64_t r = rnd_below(100);

	if (r < 1)
		return 0;
	if (r < 70)
		return 1 + rnd_below(8);
	if (r < 95)
		return 1 + rnd_below(m->npages / 8);
	return 1 + rnd_below(m->npages + 4);
}

static uint64_t random_align(void)
{
	static const uint64_t aligns[] = { 0, 1, 1, 1, 2, 3, 4, 8, 16, 7, 64 };

	return aligns[rnd_below(sizeof(aligns) / sizeof(aligns[0]))];
}

static int op_insert(struct model *m, int k)
{
	uint64_t size = random_size(m), align = random_align();
	uint64_t fpfn, lpfn, mlpfn, want = 0;
	unsigned int flags = rnd_below(2) ? RANGE_TOPDOWN : 0;
	int ret, expect;

	random_window(m, &fpfn, &lpfn);
	if (!rnd_below(200))
		flags |= 1u << 5;
	mlpfn = lpfn;
	expect = model_args(m, size, flags, fpfn, &mlpfn);
	if (!expect) {
		model_runs(m, false);
		expect = model_place(m, size, align, fpfn, mlpfn,
				     flags & RANGE_TOPDOWN, &want);
	}
	ret = range_mgr_insert(&m->mm, &m->nodes[k], size, align, fpfn,
			       lpfn, flags);
	if (ret != expect)
		fail_msg("insert %" PRIu64 " align %" PRIu64 " [%" PRIu64
			 ", %" PRIu64 ") flags %u: %d, model %d", size, align,
			 fpfn, lpfn, flags, ret, expect);
	if (ret)
		return ret;
	if (m->nodes[k].start != want)
		fail_msg("insert %" PRIu64 " align %" PRIu64 " [%" PRIu64
			 ", %" PRIu64 ") flags %u: at %" PRIu64 ", model %"
			 PRIu64, size, align, fpfn, lpfn, flags,
			 (uint64_t)m->nodes[k].start, want);
	model_take(m, k, want, size);
	return 0;
}

static void op_reserve(struct model *m, int k)
{
	uint64_t start = rnd_below(m->npages + 1);
	uint64_t size = rnd_below(12), p;
	int expect = 0;

	if (!size || start + size > m->npages) {
		expect = -EINVAL;
	} else {
		for (p = start; p < start + size; p++)
			if (m->owner[p] >= 0)
				expect = -ENOSPC;
	}
	m->nodes[k].start = start;
	m->nodes[k].size = size;
	assert_int_equal(range_mgr_reserve(&m->mm, &m->nodes[k]), expect);
	if (!expect)
		model_take(m, k, start, size);
}

static void op_remove(struct model *m, int k)
{
	range_mgr_remove(&m->mm, &m->nodes[k]);
	for (uint64_t p = m->start[k]; p < m->start[k] + m->size[k]; p++)
		m->owner[p] = -1;
	m->in[k] = false;
	m->used -= m->size[k];
	m->count--;
}

static void op_largest(struct model *m)
{
	uint64_t fpfn, lpfn, mlpfn, best = 0, p;

	random_window(m, &fpfn, &lpfn);
	mlpfn = lpfn ? lpfn : m->npages;
	if (fpfn < mlpfn && mlpfn <= m->npages) {
		model_runs(m, false);
		for (p = fpfn; p < mlpfn; p++) {
			uint64_t r = m->run[p] < mlpfn - p ? m->run[p] :
							     mlpfn - p;

			if (r > best)
				best = r;
		}
	}
	assert_int_equal(range_mgr_largest_hole(&m->mm, fpfn, lpfn), best);
}

static bool model_removable(const struct range_node *node, void *data)
{
	const struct model *m = data;

	return m->gone[node - m->nodes];
}

static void op_could_fit(struct model *m)
{
	uint64_t size = random_size(m), align = random_align();
	uint64_t fpfn, lpfn, mlpfn, start;
	bool expect, none = !rnd_below(4);
	int pct = rnd_below(101);

	random_window(m, &fpfn, &lpfn);
	for (int k = 0; k < MODEL_SLOTS; k++)
		m->gone[k] = !none && (int)rnd_below(100) < pct;
	mlpfn = lpfn;
	expect = !model_args(m, size, 0, fpfn, &mlpfn);
	if (expect) {
		model_runs(m, true);
		expect = !model_place(m, size, align, fpfn, mlpfn, false,
				      &start);
	}
	assert_int_equal(range_mgr_could_fit(&m->mm, size, align, fpfn, lpfn,
					     none ? NULL : model_removable, m),
			 expect);
	memset(m->gone, 0, sizeof(m->gone));
}

/*
 * A scan with a random LRU order of a random share of the nodes: each
 * add's answer from the model's merged free run around the node, then
 * the evictions, then the manager unchanged.
 */
static bool op_scan(struct model *m)
{
	uint64_t size = 1 + rnd_below(m->npages / 4), align = random_align();
	uint64_t fpfn, lpfn, mlpfn, hit = 0;
	unsigned int flags = rnd_below(2) ? RANGE_TOPDOWN : 0;
	int order[MODEL_SLOTS], n = 0, added = 0;
	struct range_scan scan;
	bool found = false, fits;

	random_window(m, &fpfn, &lpfn);
	mlpfn = lpfn;
	if (model_args(m, size, flags, fpfn, &mlpfn)) {
		assert_int_equal(range_scan_init(&scan, &m->mm, size, align,
						 fpfn, lpfn, flags), -EINVAL);
		return false;
	}
	assert_int_equal(range_scan_init(&scan, &m->mm, size, align, fpfn,
					 lpfn, flags), 0);
	/* whether it fits already (the caller would not scan then) */
	model_runs(m, false);
	fits = !model_place(m, size, align, fpfn, mlpfn, flags, &hit);
	hit = 0;
	for (int k = 0; k < MODEL_SLOTS; k++)
		if (m->in[k] && rnd_below(3))
			order[n++] = k;
	for (int i = n - 1; i > 0; i--) {
		int j = rnd_below(i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	while (added < n && !found) {
		int k = order[added++];
		uint64_t l = m->start[k], r = m->start[k] + m->size[k], s;

		m->gone[k] = true;
		while (l > 0 && model_free(m, l - 1, true))
			l--;
		while (r < m->npages && model_free(m, r, true))
			r++;
		/* the placement inside the merged run and the window */
		for (uint64_t i = 0; !found && i + size <= mlpfn - fpfn; i++) {
			s = flags ? mlpfn - size - i : fpfn + i;
			if (s >= l && s + size <= r &&
			    s % (align > 1 ? align : 1) == 0) {
				found = true;
				hit = s;
			}
		}
		assert_int_equal(range_scan_add(&scan, &m->nodes[k]), found);
	}
	if (found) {
		uint64_t got;

		assert_true(range_scan_hit(&scan, &got));
		assert_int_equal(got, hit);
	}
	while (added-- > 0) {
		int k = order[added];
		bool evict = found && m->start[k] < hit + size &&
			     m->start[k] + m->size[k] > hit;

		assert_int_equal(range_scan_remove(&scan, &m->nodes[k]),
				 evict);
		m->gone[k] = false;
	}
	model_verify(m);
	/*
	 * Evict the chosen ones and insert: where nothing fitted before,
	 * the insert must land on the hit; else put a node there.
	 */
	if (found && rnd_below(2)) {
		int slot = -1;
		uint64_t want = 0;

		for (int k = 0; k < MODEL_SLOTS; k++) {
			if (m->in[k] && m->start[k] < hit + size &&
			    m->start[k] + m->size[k] > hit)
				op_remove(m, k);
		}
		for (int k = 0; k < MODEL_SLOTS && slot < 0; k++)
			if (!m->in[k])
				slot = k;
		if (slot < 0)
			return true;
		model_runs(m, false);
		assert_int_equal(model_place(m, size, align, fpfn, mlpfn,
					     flags, &want), 0);
		if (fits) {
			m->nodes[slot].start = hit;
			m->nodes[slot].size = size;
			assert_int_equal(range_mgr_reserve(&m->mm,
							   &m->nodes[slot]), 0);
		} else {
			assert_int_equal(want, hit);
			assert_int_equal(range_mgr_insert(&m->mm,
							  &m->nodes[slot], size,
							  align, fpfn, lpfn,
							  flags), 0);
			assert_int_equal(m->nodes[slot].start, hit);
		}
		model_take(m, slot, hit, size);
	}
	return found;
}

static void run_model(uint64_t seed, uint64_t npages, unsigned int ops)
{
	struct model *m = calloc(1, sizeof(*m));
	unsigned int counts[7] = { 0 }, placed = 0, full = 0, hits = 0;

	assert_non_null(m);
	rng_state = seed;
	m->npages = npages;
	m->owner = malloc(npages * sizeof(*m->owner));
	m->run = malloc((npages + 1) * sizeof(*m->run));
	assert_non_null(m->owner);
	assert_non_null(m->run);
	for (uint64_t p = 0; p < npages; p++)
		m->owner[p] = -1;
	assert_int_equal(range_mgr_init(&m->mm, npages), 0);
	for (unsigned int i = 0; i < ops; i++) {
		uint64_t r = rnd_below(100);
		int k = rnd_below(MODEL_SLOTS);

		if (r < 45 && !m->in[k]) {
			int ret = op_insert(m, k);

			placed += !ret;
			full += ret == -ENOSPC;
			counts[0]++;
		} else if (r < 52 && !m->in[k]) {
			op_reserve(m, k);
			counts[1]++;
		} else if (r < 90 && m->in[k]) {
			op_remove(m, k);
			counts[2]++;
		} else if (r < 94) {
			op_largest(m);
			counts[3]++;
		} else if (r < 97) {
			op_could_fit(m);
			counts[4]++;
		} else if (r < 100) {
			hits += op_scan(m);
			counts[5]++;
		} else {
			counts[6]++;
		}
		model_verify(m);
	}
	print_message("seed %" PRIu64 ", %" PRIu64 " pages: %u inserts (%u "
		      "placed, %u -ENOSPC), %u reserves, %u removes, %u "
		      "largest, %u could_fit, %u scans (%u hits); %" PRIu64
		      " nodes at the end\n", seed, npages, counts[0], placed,
		      full, counts[1], counts[2], counts[3], counts[4],
		      counts[5], hits, m->count);
	for (int k = 0; k < MODEL_SLOTS; k++)
		if (m->in[k])
			op_remove(m, k);
	model_verify(m);
	assert_int_equal(range_mgr_fini(&m->mm), 0);
	free(m->owner);
	free(m->run);
	free(m);
}

/* Dense: 256 pages, nearly full most of the time. */
static void test_random_small(void **state)
{
	(void)state;
	run_model(1, 256, 40000);
}

/* Sparse: 4096 pages, large nodes, wide windows. */
static void test_random_large(void **state)
{
	(void)state;
	run_model(0x5eed, 4096, 20000);
}

/*
 * A million nodes: in, a quarter out in a scattered order, back into
 * the holes (first fit finds each in O(log n)), all out along the list.
 * Not timed; it must just finish, in well under 2 s in a debugoptimized
 * build.
 */
static void test_million(void **state)
{
	const unsigned int n = 1u << 20;
	struct range_node *nodes = calloc(n, sizeof(*nodes)), *pos, *tmp;
	struct range_mgr mm;
	unsigned int i, j;

	(void)state;
	assert_non_null(nodes);
	assert_int_equal(range_mgr_init(&mm, 2 * (uint64_t)n), 0);
	/* two from the bottom, two from the top, and so on */
	for (i = 0; i < n; i++) {
		unsigned int flags = i & 2 ? RANGE_TOPDOWN : 0;

		if (range_mgr_insert(&mm, &nodes[i], 2, 0, 0, 0, flags))
			fail_msg("insert %u failed", i);
	}
	assert_int_equal(range_mgr_used(&mm), 2 * (uint64_t)n);
	assert_int_equal(range_mgr_largest_hole(&mm, 0, 0), 0);
	CHECK(&mm);
	/* a quarter out in a scattered order: every other bottom node */
	for (i = 0, j = 0; i < n / 4; i++, j = (j + 4 * 7919) % n)
		range_mgr_remove(&mm, &nodes[j]);
	assert_int_equal(range_mgr_count(&mm), n - n / 4);
	assert_int_equal(range_mgr_largest_hole(&mm, 0, 0), 2);
	CHECK(&mm);
	/* back in, a page each: first fit fills the lowest holes */
	for (i = 0, j = 0; i < n / 4; i++, j = (j + 4 * 7919) % n)
		if (range_mgr_insert(&mm, &nodes[j], 1, 0, 0, 0, 0))
			fail_msg("reinsert %u failed", j);
	assert_int_equal(range_mgr_largest_hole(&mm, 0, 0), 2);
	assert_int_equal(range_mgr_largest_hole(&mm, 0, n / 2), 0);
	assert_int_equal(range_mgr_largest_hole(&mm, 0, n / 2 + 1), 1);
	CHECK(&mm);
	/* the rest out in address order, from the walk */
	range_mgr_for_each_node_safe(pos, tmp, &mm)
		range_mgr_remove(&mm, pos);
	assert_int_equal(range_mgr_count(&mm), 0);
	assert_int_equal(range_mgr_largest_hole(&mm, 0, 0), 2 * n);
	CHECK(&mm);
	assert_int_equal(range_mgr_fini(&mm), 0);
	free(nodes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_32bit_top),
		cmocka_unit_test(test_reserve),
		cmocka_unit_test(test_alignment),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_topdown),
		cmocka_unit_test(test_fragmentation),
		cmocka_unit_test(test_could_fit),
		cmocka_unit_test(test_scan_neighbours),
		cmocka_unit_test(test_scan_window),
		cmocka_unit_test(test_walks),
		cmocka_unit_test(test_check_detects),
		cmocka_unit_test(test_random_small),
		cmocka_unit_test(test_random_large),
		cmocka_unit_test(test_million),
	};

	return cmocka_run_group_tests_name("range_mgr", tests, NULL, NULL);
}
