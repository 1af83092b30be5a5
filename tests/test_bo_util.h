/* SPDX-License-Identifier: MIT */
/* What the buffer-object suites (test_bo.c, test_validate.c) share. */
#ifndef TTMSIM_TEST_BO_UTIL_H
#define TTMSIM_TEST_BO_UTIL_H

#include "test_util.h"

#include "ttmsim/bo.h"

#define KiB 1024u

static const struct ttm_placement vram_gtt = TTM_PLACEMENT_VRAM_GTT_INIT;
static const struct ttm_placement vram_only = TTM_PLACEMENT_VRAM_INIT;
static const struct ttm_placement gtt_only = TTM_PLACEMENT_GTT_INIT;
static const struct ttm_placement system_only = TTM_PLACEMENT_SYSTEM_INIT;

/* Fail the test with the description if the invariant is broken. */
#define assert_dev_ok(dev)                                              \
	do {                                                            \
		char msg_[256];                                         \
		if (ttm_device_check(dev, msg_, sizeof(msg_)))          \
			fail_msg("ttm_device_check: %s", msg_);         \
	} while (0)

#endif /* TTMSIM_TEST_BO_UTIL_H */
