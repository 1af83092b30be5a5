/* SPDX-License-Identifier: MIT */
/*
 * Text that goes into a report (JSON, XML) made valid UTF-8, whatever the
 * bytes it came from (a program's stderr, a path): one place decides what
 * is replaced.
 */
#ifndef TTMSIM_TOOLS_UTF8_H
#define TTMSIM_TOOLS_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/**
 * cli_utf8_seq - the length of the valid UTF-8 sequence at @s.
 * @s: the bytes.
 * @n: how many there are (at least 1).
 *
 * Valid: no overlong form, no surrogate, nothing above U+10FFFF, not cut
 * by the end of @n.
 * Return: 1 to 4, or 0 if the bytes at @s do not start a valid sequence.
 */
size_t cli_utf8_seq(const unsigned char *s, size_t n);

/**
 * cli_utf8_clean - a copy of @s that is valid UTF-8.
 * @s: a NUL-terminated string of any bytes.
 * @controls: also replace the control characters (C0 but tab and
 *            newline, and DEL), which XML 1.0 does not allow even
 *            escaped.
 *
 * Each byte that is not part of a valid sequence (and, with @controls,
 * each control character) becomes U+FFFD.
 * Return: a malloc()ed string, or NULL without memory.
 */
char *cli_utf8_clean(const char *s, bool controls);

#endif /* TTMSIM_TOOLS_UTF8_H */
