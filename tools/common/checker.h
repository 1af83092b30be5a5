/* SPDX-License-Identifier: MIT */
/*
 * The library's debug checker (ttmsim/ww_debug.h) as a command sees it:
 * built in or not, on or off, and the --checker flag that switches it.
 */
#ifndef TTMSIM_TOOLS_CHECKER_H
#define TTMSIM_TOOLS_CHECKER_H

#include <stdbool.h>

enum cli_checker {
	CLI_CHECKER_ABSENT, /* libttmsim built with -Dww_debug=false */
	CLI_CHECKER_OFF,    /* built in, switched off (TTMSIM_WW_DEBUG=0) */
	CLI_CHECKER_ON,
};

/**
 * cli_checker_state - whether the checker is built in and on.
 *
 * Changes nothing. Locking: only while no thread holds a ww_mutex or has
 * an acquire context open, as for ww_debug_set_enabled(), which it uses.
 */
enum cli_checker cli_checker_state(void);

/**
 * cli_parse_checker - the value of a --checker flag, "on" or "off", into
 * *@on; "on" is a usage error when @state says it is not built in.
 */
int cli_parse_checker(const char *arg, enum cli_checker state, bool *on);

/** cli_checker_describe - @state in words, e.g. "not built in (...)". */
const char *cli_checker_describe(enum cli_checker state);

/**
 * cli_checker_switch - switch a built-in checker on or off.
 *
 * Only while no thread holds a ww_mutex or has an acquire context open.
 * Return: false if the checker is not built in (nothing changes).
 */
bool cli_checker_switch(bool on);

#endif /* TTMSIM_TOOLS_CHECKER_H */
