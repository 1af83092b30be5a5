// SPDX-License-Identifier: MIT
/*
 * ttmsim stress: what a case's `ttmsim run` did, from what it printed and
 * how it ended (stress_child.c feeds it).
 *
 * Failed: a non-zero exit, death by a signal, or a sanitizer's report on
 * its stderr, even with exit 0 (UBSan goes on after a report unless told
 * to halt; a report in a passing run must not be lost).
 *
 * The failure signature, which the shrinker compares so that it cannot
 * drift from one bug to another that also exits 1: the exit status (or
 * signal), whether a sanitizer reported, and the class of the first
 * error line: the sanitizer's first line if there is one, else the first
 * line run printed (a TTMSIM_TEST_FAULT announcement left out), with
 * every number (decimal, or hex after 0x) written '#', so that the same
 * check failing on other counts, buffers or addresses is the same class.
 *
 * What it printed is kept for the reports as its first STRESS_HEAD bytes
 * and its last STRESS_TAIL ones (a sanitizer report can be long; its
 * start and run's verdict at the end are what a reader needs).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "stress.h"

/* What marks a sanitizer's report: UBSan, TSan, ASan, LSan. */
static const char *const sanitizer_marks[] = {
	"runtime error:",
	"WARNING: ThreadSanitizer",
	"ERROR: AddressSanitizer",
	"ERROR: LeakSanitizer",
};

void stress_outcome_init(struct stress_outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->status = -1;
}

/* @line, numbers as '#', trailing blanks off, into @out. */
static void classify(const char *line, char *out, size_t len)
{
	const char *p = line;
	size_t n = 0;

	while (*p && n + 1 < len) {
		if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
		    strchr("0123456789abcdefABCDEF", p[2]) && p[2]) {
			for (p += 2; *p && strchr("0123456789abcdefABCDEF", *p);
			     p++)
				;
			out[n++] = '#';
		} else if (*p >= '0' && *p <= '9') {
			while (*p >= '0' && *p <= '9')
				p++;
			out[n++] = '#';
		} else {
			out[n++] = *p++;
		}
	}
	while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\r'))
		n--;
	out[n] = '\0';
}

static bool is_sanitizer_line(const char *line)
{
	size_t i;

	for (i = 0; i < sizeof(sanitizer_marks) / sizeof(sanitizer_marks[0]);
	     i++)
		if (strstr(line, sanitizer_marks[i]))
			return true;
	return false;
}

/* run's "TTMSIM_TEST_FAULT=X: a fault is injected for a test". */
static bool is_announcement(const char *line)
{
	static const char end[] = ": a fault is injected for a test";
	size_t len = strlen(line), n = sizeof(end) - 1;

	return strstr(line, "TTMSIM_TEST_FAULT=") && len >= n &&
	       !strcmp(line + len - n, end);
}

/* One whole line (cut at STRESS_LINE - 1 bytes), NUL-terminated. */
static void take_line(struct stress_outcome *o, const char *line)
{
	if (!*line)
		return;
	if (!o->sanitizer && is_sanitizer_line(line)) {
		o->sanitizer = true;
		classify(line, o->klass, sizeof(o->klass));
	} else if (!o->sanitizer && !o->have_line && !is_announcement(line)) {
		o->have_line = true;
		classify(line, o->klass, sizeof(o->klass));
	}
}

void stress_outcome_feed(struct stress_outcome *o, const char *buf, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char ch = buf[i];

		if (o->head_len < STRESS_HEAD)
			o->head[o->head_len++] = ch;
		o->tail[o->total++ % STRESS_TAIL] = ch;
		if (ch == '\n') {
			o->line[o->line_len] = '\0';
			take_line(o, o->line);
			o->line_len = 0;
		} else if (o->line_len < STRESS_LINE - 1) {
			o->line[o->line_len++] = ch;
		}
	}
}

void stress_outcome_end(struct stress_outcome *o, int wait_status)
{
	if (o->line_len) {
		o->line[o->line_len] = '\0';
		take_line(o, o->line);
		o->line_len = 0;
	}
	if (WIFSIGNALED(wait_status)) {
		o->signal = WTERMSIG(wait_status);
		o->status = 128 + o->signal;
	} else {
		o->signal = 0;
		o->status = WEXITSTATUS(wait_status);
	}
}

bool stress_outcome_failed(const struct stress_outcome *o)
{
	return o->status != 0 || o->sanitizer;
}

bool stress_outcome_same(const struct stress_outcome *a,
			 const struct stress_outcome *b)
{
	return a->status == b->status && a->signal == b->signal &&
	       a->sanitizer == b->sanitizer && !a->timed_out &&
	       !b->timed_out && !strcmp(a->klass, b->klass);
}

char *stress_outcome_message(const struct stress_outcome *o)
{
	size_t cut = o->total > STRESS_HEAD + STRESS_TAIL ?
		     o->total - STRESS_HEAD - STRESS_TAIL : 0;
	size_t tail = o->total > STRESS_HEAD ? o->total - STRESS_HEAD : 0;
	char *m, *p;
	size_t i;

	if (tail > STRESS_TAIL)
		tail = STRESS_TAIL;
	m = malloc(o->head_len + tail + 64);
	if (!m)
		return NULL;
	memcpy(m, o->head, o->head_len);
	p = m + o->head_len;
	if (cut)
		p += sprintf(p, "\n[... %zu bytes ...]\n", cut);
	for (i = o->total - tail; i < o->total; i++)
		*p++ = o->tail[i % STRESS_TAIL];
	*p = '\0';
	return m;
}

void stress_outcome_describe(const struct stress_outcome *o, char *buf,
			     size_t len)
{
	const char *name = o->signal ? sigabbrev_np(o->signal) : NULL;

	if (o->timed_out)
		snprintf(buf, len, "killed at the time limit");
	else if (o->signal)
		snprintf(buf, len, "killed by SIG%s%s", name ? name : "?",
			 o->sanitizer ? ", a sanitizer report" : "");
	else
		snprintf(buf, len, "exit %d%s", o->status,
			 o->sanitizer ? ", a sanitizer report" : "");
}
