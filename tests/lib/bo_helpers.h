/* SPDX-License-Identifier: MIT */
/* What the buffer-object suites share, on top of helpers.h. */
#ifndef TTMSIM_TEST_BO_HELPERS_H
#define TTMSIM_TEST_BO_HELPERS_H

#include "helpers.h"

#include "ttmsim/bo.h"
#include "ttmsim/lru.h"

#define KiB 1024u

extern const struct ttm_placement vram_gtt;
extern const struct ttm_placement vram_only;
extern const struct ttm_placement gtt_only;
extern const struct ttm_placement system_only;

/* Fail the test with the description if the invariant is broken. */
#define assert_dev_ok(dev)                                              \
	do {                                                            \
		char msg_[256];                                         \
		if (ttm_device_check(dev, msg_, sizeof(msg_)))          \
			fail_msg("ttm_device_check: %s", msg_);         \
	} while (0)

/* The same as a soft check, from any thread; @when goes in the message. */
bool check_dev_ok(struct ttm_device *dev, const char *when);

/*
 * The LRU of @domain, head first, as pointers to compare: a snapshot
 * (ttm_device_lru_snapshot()) whose references are dropped at once, the
 * caller holding its own. Buffers waiting for delayed destroy are left
 * out. Return: the list's length, or -EINVAL.
 */
long lru_order(struct ttm_device *dev, enum ttm_domain domain,
	       struct ttm_bo **ret_bos, size_t max);

/*
 * A new unsignalled fence of a context of its own, added for writing to
 * @bo's reservation (reserved and unreserved here): @bo is busy until the
 * caller signals it. The caller owns the returned reference.
 */
struct ttm_fence *busy_fence(struct ttm_bo *bo);

/*
 * Every 32-bit word of @bo must be @want, read once the jobs writing it
 * are done (ttm_bo_read() waits for them); fail the test otherwise.
 */
void expect_bo_words(struct ttm_bo *bo, uint32_t want);

/* Write @value to every 32-bit word of @bo, through the CPU. */
void fill_bo_words(struct ttm_bo *bo, uint32_t value);

/* ttm_bo_create() with no flags, 0 and the invariant asserted. */
struct ttm_bo *create_bo(struct ttm_device *dev, uint64_t size,
			 const struct ttm_placement *placement);

/* Reserve @bo without a ticket, pin (unpin) it, unreserve: 0 asserted. */
void pin_bo(struct ttm_bo *bo);
void unpin_bo(struct ttm_bo *bo);

#endif /* TTMSIM_TEST_BO_HELPERS_H */
