/* SPDX-License-Identifier: MIT */
/*
 * The mock fence of the kernel's dma-buf self-tests, as a driver fence:
 * struct ttm_fence embedded in a malloc()ed struct of the tests', name ops
 * and a release op that frees it and counts, so that a case can check
 * each mock fence it made was released exactly once.
 */
#ifndef TTMSIM_TEST_MOCK_FENCE_H
#define TTMSIM_TEST_MOCK_FENCE_H

struct ttm_fence;

/*
 * A new unsignalled driver fence on a context of its own, seqno 0, one
 * reference; @name is what both of its name ops answer (kept, not copied).
 */
struct ttm_fence *mock_fence_new(const char *name);

/* cmocka setup: forget the counts, reset the soft checks. */
int mock_fence_setup(void **state);
/*
 * cmocka teardown: run the deferred releases, then fail unless every
 * mock fence made since the setup went through its release op.
 */
int mock_fence_teardown(void **state);

#endif /* TTMSIM_TEST_MOCK_FENCE_H */
