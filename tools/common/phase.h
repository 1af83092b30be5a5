/* SPDX-License-Identifier: MIT */
/*
 * The names of a submission's phases (enum ttm_execbuf_phase), as the
 * trace of `run` and the figures of `bench execbuf` print them.
 */
#ifndef TTMSIM_TOOLS_PHASE_H
#define TTMSIM_TOOLS_PHASE_H

#include "ttmsim/execbuf.h"

/** cli_phase_name - "submit", "lookup", ...; NULL for no phase. */
const char *cli_phase_name(enum ttm_execbuf_phase phase);

#endif /* TTMSIM_TOOLS_PHASE_H */
