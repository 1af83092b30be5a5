// SPDX-License-Identifier: MIT
/* Any bytes made valid UTF-8 (utf8.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

size_t cli_utf8_seq(const unsigned char *s, size_t n)
{
	uint32_t cp, min;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2, cp = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, cp = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, cp = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static bool is_control(unsigned char ch)
{
	return (ch < 0x20 && ch != '\t' && ch != '\n') || ch == 0x7f;
}

char *cli_utf8_clean(const char *s, bool controls)
{
	static const char fffd[] = "\xef\xbf\xbd";
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), i, k, out = 0;
	/* At most three bytes for each byte replaced. */
	char *copy = malloc(3 * n + 1);

	if (!copy)
		return NULL;
	for (i = 0; i < n; i += k) {
		k = cli_utf8_seq(u + i, n - i);
		if (k && !(controls && k == 1 && is_control(u[i]))) {
			memcpy(copy + out, s + i, k);
			out += k;
		} else {
			memcpy(copy + out, fffd, 3);
			out += 3;
			k = 1;
		}
	}
	copy[out] = '\0';
	return copy;
}
