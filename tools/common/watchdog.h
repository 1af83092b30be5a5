/* SPDX-License-Identifier: MIT */
/*
 * The stall watchdog of the commands that run threads (`run`, `scenario
 * abba`), and the words its reports use for who holds a lock.
 *
 * A thread wakes every tick and reads a progress counter that the
 * watched threads bump. When the counter has not moved for the limit
 * (plus the grace the command allows, e.g. for a long GPU job in flight)
 * while work is left, the command's report says on stderr who waits for
 * what, and the process ends with CLI_EXIT_DEADLOCK: threads stuck in a
 * lock cannot be freed from inside, and the report is what one needs to
 * see why they are stuck.
 */
#ifndef TTMSIM_TOOLS_WATCHDOG_H
#define TTMSIM_TOOLS_WATCHDOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cli_watchdog;

/* What a command tells the watchdog; each gets the @data of the start. */
struct cli_watchdog_ops {
	/*
	 * The progress counter, into *@ret_count; false while there is
	 * nothing to watch yet (the limit counts from the first true).
	 */
	bool (*progress)(void *data, uint64_t *ret_count);
	/* Whether work is left, so that no progress is a stall. NULL: yes. */
	bool (*working)(void *data);
	/*
	 * How much longer than the limit no progress is still no stall,
	 * asked right after working() said yes: e.g. while a GPU job runs,
	 * which may legitimately take that long before its retirement (or
	 * its timeout) is progress again. NULL: 0.
	 */
	uint64_t (*grace_ns)(void *data);
	/*
	 * Say on stderr who waits for what, after @stalled_ns without
	 * progress. Stdout is flushed before; after it, stderr is flushed
	 * and the process ends with _exit(CLI_EXIT_DEADLOCK).
	 */
	void (*report)(void *data, uint64_t stalled_ns);
	/* Every tick once progress() is true (a progress bar). NULL: none. */
	void (*tick)(void *data, uint64_t now_ns);
};

/**
 * cli_watchdog_start - start the watchdog thread.
 * @limit_ns: how long without progress is a stall; 0: never.
 * @tick_ns: how often it looks.
 *
 * Return: 0 and *@ret_wd, or a negative errno (nothing started).
 */
int cli_watchdog_start(const struct cli_watchdog_ops *ops, void *data,
		       uint64_t limit_ns, uint64_t tick_ns,
		       struct cli_watchdog **ret_wd);

/**
 * cli_watchdog_stop - stop the thread at once (not at its next tick) and
 * free @wd; NULL is fine. No callback runs after it returns.
 */
void cli_watchdog_stop(struct cli_watchdog *wd);

/*
 * The name of thread @tid if the command knows it (in @buf, of @size
 * bytes, or a string of its own), or NULL.
 */
typedef const char *cli_thread_name_fn(void *data, pid_t tid, char *buf,
				       size_t size);

/**
 * cli_print_holder - say on stderr who holds a lock, by its owner's
 * thread id @tid: "held by NAME" when @name_of(@data, ...) names it,
 * "held by tid N" when not, and @if_free when @tid is 0 (no owner).
 */
void cli_print_holder(pid_t tid, const char *if_free,
		      cli_thread_name_fn *name_of, void *data);

#endif /* TTMSIM_TOOLS_WATCHDOG_H */
