// SPDX-License-Identifier: MIT
/* The ww_debug checker's state, in words and from --checker. */
#include <errno.h>
#include <string.h>

#include "ttmsim/ww_debug.h"
#include "checker.h"
#include "cli.h"

enum cli_checker cli_checker_state(void)
{
	if (ww_debug_enabled())
		return CLI_CHECKER_ON;
	/* Off already, so switching it off only tells whether it exists. */
	if (ww_debug_set_enabled(false) == -EOPNOTSUPP)
		return CLI_CHECKER_ABSENT;
	return CLI_CHECKER_OFF;
}

const char *cli_checker_describe(enum cli_checker state)
{
	switch (state) {
	case CLI_CHECKER_ON:
		return "built in, on";
	case CLI_CHECKER_OFF:
		return "built in, off (TTMSIM_WW_DEBUG=0)";
	case CLI_CHECKER_ABSENT:
		break;
	}
	return "not built in (-Dww_debug=false)";
}

bool cli_checker_switch(bool on)
{
	return ww_debug_set_enabled(on) == 0;
}

int cli_parse_checker(const char *arg, enum cli_checker state, bool *on)
{
	if (strcmp(arg, "on") && strcmp(arg, "off")) {
		cli_error("--checker: '%s' is not one of on, off", arg);
		return CLI_EXIT_USAGE;
	}
	*on = !strcmp(arg, "on");
	if (*on && state == CLI_CHECKER_ABSENT) {
		cli_error("--checker: 'on' needs a libttmsim built with "
			  "-Dww_debug=true; this one has no checker");
		return CLI_EXIT_USAGE;
	}
	return 0;
}
