// SPDX-License-Identifier: MIT
/* Placements and the accounting check of the buffer-object suites. */
#include "bo_helpers.h"

const struct ttm_placement vram_gtt = TTM_PLACEMENT_VRAM_GTT_INIT;
const struct ttm_placement vram_only = TTM_PLACEMENT_VRAM_INIT;
const struct ttm_placement gtt_only = TTM_PLACEMENT_GTT_INIT;
const struct ttm_placement system_only = TTM_PLACEMENT_SYSTEM_INIT;

bool check_dev_ok(struct ttm_device *dev, const char *when)
{
	char msg[256];

	return CHECK_MSG(ttm_device_check(dev, msg, sizeof(msg)) == 0,
			 "ttm_device_check %s: %s", when, msg);
}
