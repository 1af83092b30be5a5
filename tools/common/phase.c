// SPDX-License-Identifier: MIT
/* The names of a submission's phases. */
#include <stddef.h>

#include "phase.h"

const char *cli_phase_name(enum ttm_execbuf_phase phase)
{
	/* A switch, not a table: -Wswitch names a phase added later. */
	switch (phase) {
	case TTM_EXECBUF_PHASE_SUBMIT:
		return "submit";
	case TTM_EXECBUF_PHASE_LOOKUP:
		return "lookup";
	case TTM_EXECBUF_PHASE_LOCK:
		return "lock";
	case TTM_EXECBUF_PHASE_BACKOFF:
		return "backoff";
	case TTM_EXECBUF_PHASE_VALIDATE:
		return "validate";
	case TTM_EXECBUF_PHASE_QUEUE:
		return "queue";
	}
	return NULL;
}
