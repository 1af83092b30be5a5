// SPDX-License-Identifier: MIT
/* The placements of the buffer-object suites. */
#include "bo_helpers.h"

const struct ttm_placement vram_gtt = TTM_PLACEMENT_VRAM_GTT_INIT;
const struct ttm_placement vram_only = TTM_PLACEMENT_VRAM_INIT;
const struct ttm_placement gtt_only = TTM_PLACEMENT_GTT_INIT;
const struct ttm_placement system_only = TTM_PLACEMENT_SYSTEM_INIT;
