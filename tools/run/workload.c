// SPDX-License-Identifier: MIT
/*
 * Workloads of `ttmsim run`: the text format's parser, the random
 * generator and the writer (workload.h).
 *
 * The format, line by line:
 *  - '#' starts a comment anywhere on a line (it cannot be part of a word:
 *    no word may contain it); blank and comment-only lines are ignored;
 *  - words are separated by spaces and tabs; a line may end in CR (CRLF
 *    files), which is dropped; a UTF-8 byte order mark that starts the
 *    file is skipped (columns on line 1 then count from after it);
 *  - a file is text: any other control byte (NUL, CR inside a line, ...)
 *    or DEL, and any byte that is not part of valid UTF-8 (comments may
 *    hold UTF-8 text), is an error naming its column;
 *  - a line holds at most WL_MAX_LINE bytes without its newline;
 *  - a buffer is defined by a bo line before any job line that uses it;
 *  - limits: THREAD < WL_MAX_THREADS, ENGINE < WL_MAX_ENGINES,
 *    DURATION_US <= WL_MAX_JOB_US (60 s), at most WL_MAX_JOB_BOS names in
 *    a job, sizes up to WL_MAX_BO_SIZE.
 * A job listing a buffer twice is not an error here: the run decides.
 *
 * Parsing is one pass with a hash table of the names; all the jobs' buffer
 * lists go in one array (workload.bo_arena).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ttmsim/bo.h"
#include "cli.h"
#include "outfile.h"
#include "parse.h"
#include "rng.h"
#include "workload.h"

#define CHUNK (64u * 1024)

/* --- reading lines ------------------------------------------------------ */

struct reader {
	FILE *f;
	char *buf;
	size_t cap, start, end;
	bool eof;
};

enum {
	LINE_EOF = 0,
	LINE_OK = 1,
	LINE_TOO_LONG = -1,
	LINE_READ_ERROR = -2,
	LINE_NOMEM = -3,
};

/* The next line (without its '\n') in *@ret_line, *@ret_len. */
static int next_line(struct reader *r, char **ret_line, size_t *ret_len)
{
	for (;;) {
		/* No offset on a NULL buffer (before the first read): UB. */
		char *s = r->buf ? r->buf + r->start : NULL;
		size_t avail = r->end - r->start;
		char *nl = avail ? memchr(s, '\n', avail) : NULL;

		if (nl) {
			*ret_line = s;
			*ret_len = (size_t)(nl - s);
			r->start += *ret_len + 1;
			if (*ret_len > WL_MAX_LINE) {
				return LINE_TOO_LONG;
			}
			return LINE_OK;
		}
		if (avail > WL_MAX_LINE) {
			return LINE_TOO_LONG;
		}
		if (r->eof) {
			if (avail == 0) {
				return LINE_EOF;
			}
			*ret_line = s;
			*ret_len = avail;
			r->start = r->end;
			return LINE_OK;
		}
		if (r->start > 0) {
			memmove(r->buf, s, avail);
			r->start = 0;
			r->end = avail;
		}
		if (r->cap - r->end < CHUNK) {
			size_t cap = r->cap ? r->cap * 2 : 4 * CHUNK;
			char *buf = realloc(r->buf, cap);

			if (!buf) {
				return LINE_NOMEM;
			}
			r->buf = buf;
			r->cap = cap;
		}
		size_t n = fread(r->buf + r->end, 1, r->cap - r->end, r->f);

		r->end += n;
		if (n == 0) {
			if (ferror(r->f)) {
				return LINE_READ_ERROR;
			}
			r->eof = true;
		}
	}
}

/* --- names -------------------------------------------------------------- */

/* Open addressing: a slot holds a buffer's index + 1 (0: empty) and hash. */
struct name_slot {
	uint32_t index1;
	uint32_t hash;
};

struct name_table {
	struct name_slot *slots;
	size_t mask;
};

static uint32_t hash_name(const char *s, size_t len)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= UINT64_C(0x100000001b3);
	}
	return (uint32_t)(h ^ (h >> 32));
}

/* The slot of @s in @t: holding its index + 1, or empty. */
/*
 * @arr: the array the slots index, of @stride-byte elements whose name
 * (NUL-terminated) is their first member: buffers or syncobjs.
 */
static struct name_slot *name_slot(const struct name_table *t,
				   const void *arr, size_t stride,
				   const char *s, size_t len, uint32_t hash)
{
	size_t i = hash & t->mask;

	for (;;) {
		struct name_slot *slot = &t->slots[i];

		if (slot->index1 == 0) {
			slot->hash = hash;
			return slot;
		}
		if (slot->hash == hash && len <= WL_MAX_NAME) {
			const char *name = (const char *)arr +
					   (size_t)(slot->index1 - 1) * stride;

			if (memcmp(name, s, len) == 0 && name[len] == '\0') {
				return slot;
			}
		}
		i = (i + 1) & t->mask;
	}
}

/* Make room for one more than @n names (load factor at most 1/2). */
static int name_table_reserve(struct name_table *t, const void *arr,
			      size_t stride, unsigned int n)
{
	size_t size = t->mask + 1;
	struct name_table nt;
	unsigned int i;

	if (t->slots && (size_t)n + 1 <= size / 2) {
		return 0;
	}
	size = t->slots ? size * 2 : 1024;
	nt.slots = calloc(size, sizeof(*nt.slots));
	if (!nt.slots) {
		return -ENOMEM;
	}
	nt.mask = size - 1;
	for (i = 0; i < n; i++) {
		const char *name = (const char *)arr + (size_t)i * stride;
		size_t len = strlen(name);

		name_slot(&nt, arr, stride, name, len,
			  hash_name(name, len))->index1 = i + 1;
	}
	free(t->slots);
	*t = nt;
	return 0;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

/* --- the parser --------------------------------------------------------- */

struct parser {
	const char *name;
	unsigned int line;
	struct workload wl;
	size_t cap_bos, cap_jobs;
	unsigned int *arena;
	size_t arena_len, arena_cap;
	struct name_table names;
	struct name_table sync_names;
	size_t cap_syncobjs;
	unsigned int shrink_line;  /* of the `shrink` line; 0: none yet */
	/* the words of the current line */
	const char *p, *stop;
};

static int perr(struct parser *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print "FILE:LINE: message". Return: CLI_EXIT_USAGE. */
static int perr(struct parser *ps, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%u: ", ps->name, ps->line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CLI_EXIT_USAGE;
}

static int nomem(struct parser *ps)
{
	return perr(ps, "out of memory");
}

/*
 * A word as printf arguments, "%.*s%s", W(s, len): cut to its first
 * CLI_ECHO_MAX bytes and "..." (a line may hold a 1 MiB word).
 */
#define W(s, len) CLI_ECHO(s, len)

/* The next word of the line into *@s, *@len; false at the end. */
static bool next_word(struct parser *ps, const char **s, size_t *len)
{
	const char *p = ps->p;

	while (p < ps->stop && (*p == ' ' || *p == '\t')) {
		p++;
	}
	if (p == ps->stop) {
		ps->p = p;
		return false;
	}
	*s = p;
	while (p < ps->stop && *p != ' ' && *p != '\t') {
		p++;
	}
	*len = (size_t)(p - *s);
	ps->p = p;
	return true;
}

#define BYTES(b) (UINT64_C(0x0101010101010101) * (b))

/*
 * Whether the 8 bytes of @x are all printable ASCII (0x20 to 0x7e), and
 * none is '#' if @no_hash. The usual bit tricks: each test is exact about
 * whether some byte matches, which is all that is needed.
 */
static bool plain_ascii8(uint64_t x, bool no_hash)
{
	uint64_t high = BYTES(0x80);
	uint64_t below = (x - BYTES(0x20)) & ~x;           /* a byte < 0x20 */
	uint64_t above = (x + BYTES(0x01)) | x;            /* a byte > 0x7e */
	uint64_t h = x ^ BYTES('#');
	uint64_t hash = no_hash ? (h - BYTES(0x01)) & ~h : 0; /* '#' */

	return ((below | above | hash) & high) == 0;
}

/*
 * Check that the line is text; find its end (a comment, a final CR).
 * Return: 0, or CLI_EXIT_USAGE after the message.
 */
static int check_text(struct parser *ps, const char *line, size_t len)
{
	const unsigned char *u = (const unsigned char *)line;
	const char *hash = NULL;
	size_t i = 0;

	if (len > 0 && line[len - 1] == '\r') {
		len--;
	}
	while (i < len) {
		unsigned char c;
		unsigned int need, cp;
		size_t j;

		if (len - i >= 8) {
			uint64_t x;

			memcpy(&x, u + i, 8);
			if (plain_ascii8(x, !hash)) {
				i += 8;
				continue;
			}
		}
		c = u[i];
		if (c >= 0x20 && c < 0x7f) {
			if (c == '#' && !hash) {
				hash = line + i;
			}
			i++;
			continue;
		}
		if (c == '\t') {
			i++;
			continue;
		}
		if (c < 0x80) {
			return perr(ps, "non-text byte 0x%02x at column %zu",
				    c, i + 1);
		}
		/* UTF-8: no overlong forms, surrogates or beyond U+10FFFF. */
		if (c >= 0xc2 && c <= 0xdf) {
			need = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3;
			cp = c & 0x07;
		} else {
			goto bad_utf8;
		}
		if (len - i <= need) {
			goto bad_utf8;
		}
		for (j = 1; j <= need; j++) {
			if ((u[i + j] & 0xc0) != 0x80) {
				goto bad_utf8;
			}
			cp = (cp << 6) | (u[i + j] & 0x3f);
		}
		if ((need == 2 && cp < 0x800) ||
		    (need == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff)) {
			goto bad_utf8;
		}
		i += need + 1;
		continue;
bad_utf8:
		return perr(ps, "invalid UTF-8 (byte 0x%02x) at column %zu",
			    c, i + 1);
	}
	ps->p = line;
	ps->stop = hash ? hash : line + len;
	return 0;
}

/* Decimal digits only: 0, -EINVAL (not a number) or -ERANGE (> @max). */
static int parse_dec(const char *s, size_t len, uint64_t max,
		     uint64_t *ret_value)
{
	uint64_t v = 0;
	bool range = false;
	size_t i;

	if (len == 0) {
		return -EINVAL;
	}
	for (i = 0; i < len; i++) {
		unsigned int d = (unsigned int)(s[i] - '0');

		if (d > 9) {
			return -EINVAL;
		}
		if (v > (max - d) / 10 || d > max) {
			range = true;
		} else {
			v = v * 10 + d;
		}
	}
	if (range) {
		return -ERANGE;
	}
	*ret_value = v;
	return 0;
}

/* A decimal field @what in [0, @max]; the message names the word. */
static int parse_field(struct parser *ps, const char *what, const char *s,
		       size_t len, uint64_t max, uint64_t *ret_value)
{
	int ret = parse_dec(s, len, max, ret_value);

	if (ret == 0) {
		return 0;
	}
	if (ret == -ERANGE) {
		return perr(ps, "%s '%.*s%s' is out of range (0 to %llu)", what,
			    W(s, len), (unsigned long long)max);
	}
	if (s[0] == '-' || s[0] == '+') {
		return perr(ps, "%s '%.*s%s' must be an unsigned decimal "
			    "number, without a sign", what, W(s, len));
	}
	return perr(ps, "%s '%.*s%s' is not a decimal number", what, W(s, len));
}

static int check_size(struct parser *ps, const char *s, size_t len,
		      uint64_t size)
{
	if (size == 0) {
		return perr(ps, "size '%.*s%s' is zero", W(s, len));
	}
	if (size > WL_MAX_BO_SIZE) {
		return perr(ps, "size '%.*s%s' is %llu bytes, more than 1 GiB "
			    "(%llu)", W(s, len), (unsigned long long)size,
			    (unsigned long long)WL_MAX_BO_SIZE);
	}
	if (size % 4) {
		return perr(ps, "size '%.*s%s' is %llu bytes, not a multiple "
			    "of 4", W(s, len), (unsigned long long)size);
	}
	return 0;
}

/* WIDTHxHEIGHT:FOURCC into @bo. */
static int parse_fourcc_size(struct parser *ps, const char *s, size_t len,
			     struct wl_bo *bo)
{
	const char *end = s + len;
	const char *x = memchr(s, 'x', len);
	const char *colon = x ? memchr(x, ':', (size_t)(end - x)) : NULL;
	uint64_t w, h, size;
	uint32_t code = 0;
	size_t code_len, i;
	unsigned int cpp;
	int ret;

	if (!x || !colon) {
		return perr(ps, "bad size '%.*s%s': a number of bytes or "
			    "WIDTHxHEIGHT:FOURCC", W(s, len));
	}
	ret = parse_dec(s, (size_t)(x - s), UINT32_MAX, &w);
	if (ret == 0) {
		ret = parse_dec(x + 1, (size_t)(colon - x - 1), UINT32_MAX,
				&h);
	}
	if (ret == -ERANGE) {
		return perr(ps, "size '%.*s%s': width or height out of range "
			    "(1 to %u)", W(s, len), UINT32_MAX);
	}
	if (ret) {
		return perr(ps, "bad size '%.*s%s': width and height must be "
			    "unsigned decimal numbers (WIDTHxHEIGHT:FOURCC)",
			    W(s, len));
	}
	if (w == 0 || h == 0) {
		return perr(ps, "size '%.*s%s' has a zero dimension",
			    W(s, len));
	}
	code_len = (size_t)(end - colon - 1);
	if (code_len < 2 || code_len > 4) {
		return perr(ps, "bad fourcc '%.*s%s' in '%.*s%s': 2 to 4 "
			    "characters", W(colon + 1, code_len), W(s, len));
	}
	for (i = 0; i < 4; i++) {
		unsigned char c = i < code_len ? (unsigned char)colon[1 + i]
					       : ' ';

		code |= (uint32_t)c << (8 * i);
	}
	cpp = ttm_fourcc_cpp(code);
	if (cpp == 0) {
		return perr(ps, "unknown fourcc '%.*s%s' (single-plane DRM "
			    "formats such as XR24, AR24, RG16, R8)",
			    W(colon + 1, code_len));
	}
	/* w * h < 2^64; check before multiplying by cpp. */
	size = w * h;
	if (size > WL_MAX_BO_SIZE / cpp) {
		return perr(ps, "size '%.*s%s' is more than 1 GiB (%llu)",
			    W(s, len), (unsigned long long)WL_MAX_BO_SIZE);
	}
	size *= cpp;
	if (size % 4) {
		return perr(ps, "size '%.*s%s' is %llu bytes (%llu x %llu x "
			    "%u), not a multiple of 4", W(s, len),
			    (unsigned long long)size, (unsigned long long)w,
			    (unsigned long long)h, cpp);
	}
	bo->size = size;
	bo->width = (uint32_t)w;
	bo->height = (uint32_t)h;
	bo->fourcc = code;
	return 0;
}

static bool word_is(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && memcmp(s, word, len) == 0;
}

/* Check a buffer name's characters and length. */
static int check_name(struct parser *ps, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (!name_char(s[i])) {
			unsigned char c = (unsigned char)s[i];

			if (c >= 0x80) {
				return perr(ps, "bad buffer name '%.*s%s': "
					    "non-ASCII byte 0x%02x (letters, "
					    "digits, '_', '-', '.')",
					    W(s, len), c);
			}
			return perr(ps, "bad character '%c' in buffer name "
				    "'%.*s%s' (letters, digits, '_', '-', '.')",
				    c, W(s, len));
		}
	}
	if (len > WL_MAX_NAME) {
		return perr(ps, "buffer name '%.*s%s' is too long (%zu bytes; "
			    "at most %u)", W(s, len), len, WL_MAX_NAME);
	}
	return 0;
}

/* vram@FPFN-LPFN or gtt@FPFN-LPFN into @bo; @at points at the '@'. */
static int parse_range(struct parser *ps, const char *s, size_t len,
		       const char *at, struct wl_bo *bo)
{
	const char *end = s + len;
	const char *dash = memchr(at, '-', (size_t)(end - at));
	uint64_t f, l;

	if (word_is(s, (size_t)(at - s), "vram")) {
		bo->placement = WL_PLACE_VRAM;
	} else if (word_is(s, (size_t)(at - s), "gtt")) {
		bo->placement = WL_PLACE_GTT;
	} else {
		return perr(ps, "bad range '%.*s%s': vram@FPFN-LPFN or "
			    "gtt@FPFN-LPFN", W(s, len));
	}
	if (!dash || parse_dec(at + 1, (size_t)(dash - at - 1), UINT32_MAX,
			       &f) ||
	    parse_dec(dash + 1, (size_t)(end - dash - 1), UINT32_MAX, &l)) {
		return perr(ps, "bad range '%.*s%s': FPFN-LPFN, unsigned "
			    "decimal page numbers (4 KiB pages) up to %u",
			    W(s, len), UINT32_MAX);
	}
	if (f >= l) {
		return perr(ps, "empty range '%.*s%s': pages [FPFN, LPFN), "
			    "FPFN below LPFN", W(s, len));
	}
	if (bo->size > (l - f) * TTM_DEFAULT_PAGE_SIZE) {
		return perr(ps, "range '%.*s%s' holds %llu pages, fewer than "
			    "the buffer's %llu bytes need", W(s, len),
			    (unsigned long long)(l - f),
			    (unsigned long long)bo->size);
	}
	bo->fpfn = (uint32_t)f;
	bo->lpfn = (uint32_t)l;
	return 0;
}

/* The words after SIZE: [PLACE] [pinned] [prime], in that order. */
static int parse_bo_words(struct parser *ps, struct wl_bo *bo)
{
	unsigned int at = 0, kind;
	const char *s, *sign;
	size_t len;
	int ret;

	while (next_word(ps, &s, &len)) {
		if (word_is(s, len, "vram")) {
			bo->placement = WL_PLACE_VRAM;
			kind = 0;
		} else if (word_is(s, len, "gtt")) {
			bo->placement = WL_PLACE_GTT;
			kind = 0;
		} else if (word_is(s, len, "system")) {
			bo->placement = WL_PLACE_SYSTEM;
			kind = 0;
		} else if (word_is(s, len, "visible")) {
			bo->placement = WL_PLACE_VISIBLE;
			kind = 0;
		} else if ((sign = memchr(s, '@', len))) {
			if (at == 0) {
				ret = parse_range(ps, s, len, sign, bo);
				if (ret) {
					return ret;
				}
			}
			kind = 0;
		} else if (word_is(s, len, "pinned")) {
			bo->pinned = true;
			kind = 1;
		} else if (word_is(s, len, "prime")) {
			bo->prime = true;
			kind = 2;
		} else {
			kind = UINT32_MAX;
		}
		if (kind == UINT32_MAX && at == 0) {
			return perr(ps, "unknown word '%.*s%s' (vram, gtt, "
				    "system, visible, vram@FPFN-LPFN, "
				    "gtt@FPFN-LPFN, pinned or prime)",
				    W(s, len));
		}
		if (kind < at || kind == UINT32_MAX) {
			return perr(ps, "extra word '%.*s%s' (after SIZE: "
				    "[PLACE] [pinned] [prime], in that order, "
				    "each at most once)", W(s, len));
		}
		at = kind + 1;
	}
	return 0;
}

static int parse_bo(struct parser *ps)
{
	struct workload *wl = &ps->wl;
	struct wl_bo *bo;
	const char *s;
	size_t len;
	struct name_slot *slot;
	int ret;

	if (!next_word(ps, &s, &len)) {
		return perr(ps, "bo: missing NAME and SIZE");
	}
	ret = check_name(ps, s, len);
	if (ret) {
		return ret;
	}
	if (name_table_reserve(&ps->names, wl->bos, sizeof(*wl->bos),
			       wl->n_bos)) {
		return nomem(ps);
	}
	slot = name_slot(&ps->names, wl->bos, sizeof(*wl->bos), s, len,
			 hash_name(s, len));
	if (slot->index1) {
		return perr(ps, "duplicate buffer name '%.*s%s' (defined on "
			    "line %u)", W(s, len),
			    wl->bos[slot->index1 - 1].line);
	}
	if (wl->n_bos == UINT32_MAX - 1) {
		return perr(ps, "too many buffers");
	}
	if (wl->n_bos == ps->cap_bos) {
		size_t cap = ps->cap_bos ? ps->cap_bos * 2 : 64;
		struct wl_bo *bos = realloc(wl->bos, cap * sizeof(*bos));

		if (!bos) {
			return nomem(ps);
		}
		wl->bos = bos;
		ps->cap_bos = cap;
	}
	bo = &wl->bos[wl->n_bos];
	memset(bo, 0, sizeof(*bo));
	memcpy(bo->name, s, len);
	bo->name[len] = '\0';
	bo->line = ps->line;

	if (!next_word(ps, &s, &len)) {
		return perr(ps, "bo %s: missing SIZE", bo->name);
	}
	if (len > 0 && s[0] >= '0' && s[0] <= '9' && !memchr(s, 'x', len) &&
	    !memchr(s, ':', len)) {
		ret = parse_dec(s, len, UINT64_MAX, &bo->size);
		if (ret == -ERANGE) {
			return perr(ps, "size '%.*s%s' is more than 1 GiB "
				    "(%llu)", W(s, len),
				    (unsigned long long)WL_MAX_BO_SIZE);
		}
		if (ret) {
			return perr(ps, "bad size '%.*s%s': not a decimal "
				    "number", W(s, len));
		}
		ret = check_size(ps, s, len, bo->size);
	} else if (s[0] == '-' || s[0] == '+') {
		return perr(ps, "bad size '%.*s%s': an unsigned decimal "
			    "number, without a sign", W(s, len));
	} else {
		ret = parse_fourcc_size(ps, s, len, bo);
	}
	if (ret) {
		return ret;
	}

	ret = parse_bo_words(ps, bo);
	if (ret) {
		return ret;
	}
	slot->index1 = ++wl->n_bos;
	return 0;
}

static int parse_op(struct parser *ps, const char *s, size_t len,
		    struct wl_job *job)
{
	if (word_is(s, len, "nop")) {
		job->op = WL_OP_NOP;
		return 0;
	}
	if (word_is(s, len, "hang")) {
		job->op = WL_OP_HANG;
		return 0;
	}
	if (len >= 4 && memcmp(s, "add=", 4) == 0) {
		const char *v = s + 4;
		size_t vlen = len - 4;
		uint64_t value = 0;
		size_t i;

		job->op = WL_OP_ADD;
		if (vlen > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
			for (i = 2; i < vlen; i++) {
				char c = v[i];
				unsigned int d;

				if (c >= '0' && c <= '9') {
					d = (unsigned int)(c - '0');
				} else if (c >= 'a' && c <= 'f') {
					d = (unsigned int)(c - 'a' + 10);
				} else if (c >= 'A' && c <= 'F') {
					d = (unsigned int)(c - 'A' + 10);
				} else {
					goto bad;
				}
				value = value * 16 + d;
				if (value > UINT32_MAX) {
					goto range;
				}
			}
		} else {
			int ret = parse_dec(v, vlen, UINT32_MAX, &value);

			if (ret == -ERANGE) {
				goto range;
			}
			if (ret) {
				goto bad;
			}
		}
		job->add_value = (uint32_t)value;
		return 0;
range:
		return perr(ps, "add value '%.*s%s' is out of range (0 to "
			    "4294967295, or 0x0 to 0xffffffff)", W(v, vlen));
bad:
		return perr(ps, "bad add value '%.*s%s' (a decimal or 0x "
			    "hexadecimal 32-bit number)", W(v, vlen));
	}
	return perr(ps, "bad op '%.*s%s' (add=U32, nop or hang)", W(s, len));
}

/* syncobj NAME [timeline] */
static int parse_syncobj(struct parser *ps)
{
	struct workload *wl = &ps->wl;
	struct wl_syncobj *so;
	struct name_slot *slot;
	const char *s;
	size_t len;
	int ret;

	if (!next_word(ps, &s, &len)) {
		return perr(ps, "syncobj: missing NAME (syncobj NAME "
			    "[timeline])");
	}
	ret = check_name(ps, s, len);
	if (ret) {
		return ret;
	}
	if (name_table_reserve(&ps->sync_names, wl->syncobjs,
			       sizeof(*wl->syncobjs), wl->n_syncobjs)) {
		return nomem(ps);
	}
	slot = name_slot(&ps->sync_names, wl->syncobjs, sizeof(*wl->syncobjs),
			 s, len, hash_name(s, len));
	if (slot->index1) {
		return perr(ps, "duplicate syncobj name '%.*s%s' (defined on "
			    "line %u)", W(s, len),
			    wl->syncobjs[slot->index1 - 1].line);
	}
	if (wl->n_syncobjs == WL_MAX_SYNCOBJS) {
		return perr(ps, "too many syncobjs (at most %u)",
			    WL_MAX_SYNCOBJS);
	}
	if (wl->n_syncobjs == ps->cap_syncobjs) {
		size_t cap = ps->cap_syncobjs ? ps->cap_syncobjs * 2 : 16;
		struct wl_syncobj *a = realloc(wl->syncobjs,
					       cap * sizeof(*a));

		if (!a) {
			return nomem(ps);
		}
		wl->syncobjs = a;
		ps->cap_syncobjs = cap;
	}
	so = &wl->syncobjs[wl->n_syncobjs];
	memset(so, 0, sizeof(*so));
	memcpy(so->name, s, len);
	so->line = ps->line;
	if (next_word(ps, &s, &len)) {
		if (!word_is(s, len, "timeline")) {
			return perr(ps, "unknown word '%.*s%s' (syncobj NAME "
				    "[timeline])", W(s, len));
		}
		so->timeline = true;
	}
	if (next_word(ps, &s, &len)) {
		return perr(ps, "extra word '%.*s%s' at the end of the "
			    "syncobj line", W(s, len));
	}
	slot->index1 = ++wl->n_syncobjs;
	return 0;
}

/* wait=SYNCOBJ[@POINT] or signal=SYNCOBJ[@POINT] of @job. */
static int parse_sync(struct parser *ps, const char *s, size_t len,
		      struct wl_job *job)
{
	const struct workload *wl = &ps->wl;
	const char *eq = memchr(s, '=', len), *name, *at;
	const struct wl_syncobj *so;
	struct name_slot *slot;
	struct wl_sync sync = { 0 };
	size_t nlen;
	unsigned int k;

	if (word_is(s, (size_t)(eq - s), "signal")) {
		sync.signal = true;
	} else if (!word_is(s, (size_t)(eq - s), "wait")) {
		return perr(ps, "bad word '%.*s%s' (wait=SYNCOBJ[@POINT], "
			    "signal=SYNCOBJ[@POINT] or a buffer name)",
			    W(s, len));
	}
	name = eq + 1;
	at = memchr(name, '@', (size_t)(s + len - name));
	nlen = (size_t)((at ? at : s + len) - name);
	slot = ps->sync_names.slots && nlen
		? name_slot(&ps->sync_names, wl->syncobjs,
			    sizeof(*wl->syncobjs), name, nlen,
			    hash_name(name, nlen))
		: NULL;
	if (!slot || slot->index1 == 0) {
		return perr(ps, "unknown syncobj '%.*s%s' in '%.*s%s' (a "
			    "syncobj line must define it before the jobs "
			    "that use it)", W(name, nlen), W(s, len));
	}
	sync.syncobj = slot->index1 - 1;
	so = &wl->syncobjs[sync.syncobj];
	if (at) {
		size_t plen = (size_t)(s + len - at - 1);
		int ret = parse_dec(at + 1, plen, UINT64_MAX, &sync.point);

		if (!so->timeline) {
			return perr(ps, "'%.*s%s': syncobj '%s' is binary: no "
				    "@POINT (a `syncobj NAME timeline` line "
				    "makes a timeline)", W(s, len), so->name);
		}
		if (ret || sync.point == 0) {
			return perr(ps, "bad point in '%.*s%s': an unsigned "
				    "decimal from 1", W(s, len));
		}
	} else if (so->timeline) {
		return perr(ps, "'%.*s%s': syncobj '%s' is a timeline: name a "
			    "point (%s=%s@POINT)", W(s, len), so->name,
			    sync.signal ? "signal" : "wait", so->name);
	}
	for (k = 0; k < job->n_syncs; k++) {
		if (job->syncs[k].syncobj == sync.syncobj &&
		    job->syncs[k].point == sync.point) {
			return perr(ps, "'%.*s%s': the job names that syncobj "
				    "point twice", W(s, len));
		}
	}
	if (job->n_syncs == WL_MAX_JOB_SYNCS) {
		return perr(ps, "more than %u wait= and signal= words in a job",
			    WL_MAX_JOB_SYNCS);
	}
	job->syncs[job->n_syncs++] = sync;
	return 0;
}

static int parse_job(struct parser *ps)
{
	static const char *const fields[] = { "THREAD", "ENGINE",
					      "DURATION_US", "OP" };
	struct workload *wl = &ps->wl;
	struct wl_job *job;
	uint64_t v[3];
	const char *s;
	size_t len, i;
	int ret;

	if (wl->n_jobs == ps->cap_jobs) {
		size_t cap = ps->cap_jobs ? ps->cap_jobs * 2 : 1024;
		struct wl_job *jobs = realloc(wl->jobs, cap * sizeof(*jobs));

		if (!jobs) {
			return nomem(ps);
		}
		wl->jobs = jobs;
		ps->cap_jobs = cap;
	}
	job = &wl->jobs[wl->n_jobs];
	memset(job, 0, sizeof(*job));
	job->line = ps->line;

	for (i = 0; i < 4; i++) {
		if (!next_word(ps, &s, &len)) {
			return perr(ps, "job: missing %s (job THREAD ENGINE "
				    "DURATION_US OP NAME...)", fields[i]);
		}
		if (i == 3) {
			break;
		}
		static const uint64_t max[3] = {
			WL_MAX_THREADS - 1, WL_MAX_ENGINES - 1, WL_MAX_JOB_US,
		};
		static const char *const what[3] = {
			"thread", "engine", "duration (us)",
		};

		ret = parse_field(ps, what[i], s, len, max[i], &v[i]);
		if (ret) {
			return ret;
		}
	}
	job->thread = (unsigned int)v[0];
	job->engine = (unsigned int)v[1];
	job->duration_us = v[2];
	ret = parse_op(ps, s, len, job);
	if (ret) {
		return ret;
	}

	/* The indexes go to the arena; job->bos holds the offset for now. */
	size_t first = ps->arena_len;

	while (next_word(ps, &s, &len)) {
		struct name_slot *slot;

		if (job->n_bos == WL_MAX_JOB_BOS) {
			return perr(ps, "job lists more than %u buffers",
				    WL_MAX_JOB_BOS);
		}
		if (memchr(s, '=', len)) {
			ret = parse_sync(ps, s, len, job);
			if (ret) {
				return ret;
			}
			continue;
		}
		slot = ps->names.slots
			? name_slot(&ps->names, wl->bos, sizeof(*wl->bos), s,
				    len, hash_name(s, len))
			: NULL;
		if (!slot || slot->index1 == 0) {
			ret = check_name(ps, s, len);
			if (ret) {
				return ret;
			}
			return perr(ps, "unknown buffer name '%.*s%s' (a bo "
				    "line must define it before the jobs "
				    "that use it)", W(s, len));
		}
		if (ps->arena_len == ps->arena_cap) {
			size_t cap = ps->arena_cap ? ps->arena_cap * 2 : 4096;
			unsigned int *a = realloc(ps->arena,
						  cap * sizeof(*a));

			if (!a) {
				return nomem(ps);
			}
			ps->arena = a;
			ps->arena_cap = cap;
		}
		ps->arena[ps->arena_len++] = slot->index1 - 1;
		job->n_bos++;
	}
	if (job->n_bos == 0) {
		return perr(ps, "job without buffers (job THREAD ENGINE "
			    "DURATION_US OP NAME...)");
	}
	job->bos = (unsigned int *)(uintptr_t)first;
	if (job->thread >= wl->n_threads) {
		wl->n_threads = job->thread + 1;
	}
	if (job->engine >= wl->n_engines) {
		wl->n_engines = job->engine + 1;
	}
	wl->n_jobs++;
	return 0;
}

/*
 * shrink MS: once per file, 1 to WL_MAX_SHRINK_MS. A period of 0 is an
 * error rather than "no shrinker": leaving the line out says that, and a
 * file that names a shrinker should get one.
 */
static int parse_shrink(struct parser *ps)
{
	const char *s;
	size_t len;
	uint64_t v;
	int ret;

	if (ps->shrink_line) {
		return perr(ps, "a second shrink line (the first is line %u)",
			    ps->shrink_line);
	}
	if (!next_word(ps, &s, &len)) {
		return perr(ps, "shrink: missing MS (shrink MS)");
	}
	ret = parse_dec(s, len, WL_MAX_SHRINK_MS, &v);
	if (ret == -EINVAL) {
		return perr(ps, "shrink period '%.*s%s' is not a number of "
			    "milliseconds (an unsigned decimal)", W(s, len));
	}
	if (ret || v == 0) {
		return perr(ps, "shrink period '%.*s%s' is out of range (1 to "
			    "%u ms)", W(s, len), WL_MAX_SHRINK_MS);
	}
	if (next_word(ps, &s, &len)) {
		return perr(ps, "extra word '%.*s%s' at the end of the shrink "
			    "line", W(s, len));
	}
	ps->wl.shrink_ms = (unsigned int)v;
	ps->shrink_line = ps->line;
	return 0;
}

static int parse_line(struct parser *ps, const char *line, size_t len)
{
	const char *s;
	size_t wlen;
	int ret;

	ret = check_text(ps, line, len);
	if (ret) {
		return ret;
	}
	if (!next_word(ps, &s, &wlen)) {
		return 0;
	}
	if (word_is(s, wlen, "bo")) {
		return parse_bo(ps);
	}
	if (word_is(s, wlen, "job")) {
		return parse_job(ps);
	}
	if (word_is(s, wlen, "shrink")) {
		return parse_shrink(ps);
	}
	if (word_is(s, wlen, "syncobj")) {
		return parse_syncobj(ps);
	}
	return perr(ps, "unknown directive '%.*s%s' (bo, syncobj, job or "
		    "shrink)",
		    W(s, wlen));
}

void workload_free(struct workload *wl)
{
	size_t i;

	if (!wl) {
		return;
	}
	if (wl->bo_arena) {
		free(wl->bo_arena);
	} else if (wl->jobs) {
		for (i = 0; i < wl->n_jobs; i++) {
			free(wl->jobs[i].bos);
		}
	}
	free(wl->jobs);
	free(wl->bos);
	free(wl->syncobjs);
	free(wl->source);
	memset(wl, 0, sizeof(*wl));
}

int workload_parse(FILE *f, const char *name, struct workload *wl)
{
	struct parser ps = { .name = name };
	struct reader r = { .f = f };
	char *line;
	size_t len, i;
	int ret = 0;

	memset(wl, 0, sizeof(*wl));
	for (;;) {
		int got = next_line(&r, &line, &len);

		if (got == LINE_EOF) {
			break;
		}
		if (ps.line == UINT32_MAX - 1) {
			ret = perr(&ps, "too many lines");
			goto fail;
		}
		ps.line++;
		/* A UTF-8 byte order mark (some editors write one): skip. */
		if (ps.line == 1 && got == LINE_OK && len >= 3 &&
		    memcmp(line, "\xef\xbb\xbf", 3) == 0) {
			line += 3;
			len -= 3;
		}
		if (got == LINE_TOO_LONG) {
			ret = perr(&ps, "line too long (more than %u bytes)",
				   WL_MAX_LINE);
			goto fail;
		}
		if (got == LINE_READ_ERROR) {
			cli_error("%s: %s", name, strerror(errno ? errno
								 : EIO));
			ret = CLI_EXIT_USAGE;
			goto fail;
		}
		if (got == LINE_NOMEM) {
			ret = nomem(&ps);
			goto fail;
		}
		ret = parse_line(&ps, line, len);
		if (ret) {
			goto fail;
		}
	}

	if (ps.arena_len) {
		unsigned int *a = realloc(ps.arena,
					  ps.arena_len * sizeof(*a));

		if (a) {
			ps.arena = a;
		}
	}
	for (i = 0; i < ps.wl.n_jobs; i++) {
		struct wl_job *job = &ps.wl.jobs[i];

		job->bos = ps.arena + (uintptr_t)job->bos;
	}
	ps.wl.bo_arena = ps.arena;
	ps.arena = NULL;
	ps.wl.source = strdup(name);
	if (!ps.wl.source) {
		ret = nomem(&ps);
		goto fail;
	}
	/* The rules across jobs: named at the waiting job's line. */
	ret = workload_sync_deps(&ps.wl, NULL);
	if (ret) {
		if (ret == -ENOMEM) {
			ret = nomem(&ps);
		}
		free(ps.names.slots);
		free(ps.sync_names.slots);
		free(r.buf);
		workload_free(&ps.wl);
		return ret;
	}
	*wl = ps.wl;
	free(ps.names.slots);
	free(ps.sync_names.slots);
	free(r.buf);
	return 0;

fail:
	/* The jobs' bos fields are offsets until the end: free by hand. */
	free(ps.arena);
	free(ps.wl.bo_arena);
	free(ps.wl.jobs);
	free(ps.wl.bos);
	free(ps.wl.syncobjs);
	free(ps.wl.source);
	free(ps.names.slots);
	free(ps.sync_names.slots);
	free(r.buf);
	return ret;
}

/*
 * Open @path for reading without blocking in open(): a FIFO with no
 * writer would block there forever. Reads block again afterwards, so a
 * FIFO or pipe whose writer is there is read to its end.
 */
static FILE *open_input(const char *path, bool *ret_fifo)
{
	struct stat st;
	FILE *f;
	int fd, flags, err;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 ||
	    fstat(fd, &st) < 0)
		goto fail;
	*ret_fifo = S_ISFIFO(st.st_mode);
	f = fdopen(fd, "r");
	if (f)
		return f;
fail:
	err = errno;
	close(fd);
	errno = err;
	return NULL;
}

int workload_load(const char *path, struct workload *wl)
{
	const char *name = path;
	bool fifo = false;
	FILE *f = stdin;
	int ret;

	if (strcmp(path, "-") == 0) {
		name = "<stdin>";
	} else {
		f = open_input(path, &fifo);
		if (!f) {
			memset(wl, 0, sizeof(*wl));
			cli_error("%s: %s", path, strerror(errno));
			return CLI_EXIT_USAGE;
		}
	}
	ret = workload_parse(f, name, wl);
	if (f != stdin)
		fclose(f);
	if (ret == 0 && wl->n_jobs == 0) {
		/* Nothing to run is a mistake: a wrong or truncated file. */
		cli_error("%s: no jobs: a workload needs at least one job "
			  "line%s", name, fifo ? " (a FIFO read with no "
			  "writer gives nothing: start the writer first)" : "");
		workload_free(wl);
		ret = CLI_EXIT_USAGE;
	}
	return ret;
}

/* --- the generator ------------------------------------------------------ */

/* Uniform in [@lo, @hi], without modulo bias. */
static uint64_t rng_range(uint64_t *state, uint64_t lo, uint64_t hi)
{
	uint64_t span = hi - lo + 1;
	uint64_t limit, x;

	if (span == 0) {
		return cli_splitmix64(state); /* the whole 64-bit range */
	}
	limit = -span % span; /* values below it would be biased */
	do {
		x = cli_splitmix64(state);
	} while (x < limit);
	return lo + x % span;
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a;
	unsigned int y = *(const unsigned int *)b;

	return (x > y) - (x < y);
}

static int cmp_uint_rev(const void *a, const void *b)
{
	return cmp_uint(b, a);
}

/* @a * @b + @c, saturated at UINT64_MAX. */
static uint64_t mul_add_sat(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t r;

	if (__builtin_mul_overflow(a, b, &r) ||
	    __builtin_add_overflow(r, c, &r))
		return UINT64_MAX;
	return r;
}

uint64_t workload_gen_bytes(const struct wl_gen_options *o)
{
	uint64_t jobs = mul_add_sat(o->jobs, o->threads, 0);
	/* A job, and its buffer indexes in the arena. */
	uint64_t per_job = mul_add_sat(o->per_job_max, sizeof(unsigned int),
				       sizeof(struct wl_job));
	uint64_t bos = mul_add_sat(o->bos, sizeof(struct wl_bo) +
				   sizeof(unsigned int), 0);

	return mul_add_sat(jobs, per_job, bos);
}

/*
 * PRIME, ranges and syncobjs for workload_generate(), on a stream of
 * their own (the buffers and jobs do not change with them). Jobs signal
 * a timeline's points in job order and wait only on what an earlier job
 * signals: every edge goes forward, so there is no cycle.
 */
static int gen_features(const struct wl_gen_options *o, struct workload *g,
			size_t n_jobs)
{
	uint64_t state = o->seed ^ UINT64_C(0x9e3779b97f4a7c15);
	uint64_t vram_pages = (o->vram ? o->vram : UINT64_C(256) << 20) /
			      TTM_DEFAULT_PAGE_SIZE;
	uint64_t *last = NULL;
	unsigned int i;
	size_t j;

	for (i = 0; i < g->n_bos; i++) {
		struct wl_bo *bo = &g->bos[i];
		uint64_t pages = (bo->size + TTM_DEFAULT_PAGE_SIZE - 1) /
				 TTM_DEFAULT_PAGE_SIZE;

		if (o->prime_percent &&
		    rng_range(&state, 0, 99) < o->prime_percent)
			bo->prime = true;
		if (!o->ranges)
			continue;
		switch (rng_range(&state, 0, 7)) {
		case 0:
			bo->placement = WL_PLACE_VISIBLE;
			break;
		case 1:
			if (2 * pages > vram_pages / 2 ||
			    vram_pages / 2 > UINT32_MAX)
				break;
			bo->placement = WL_PLACE_VRAM;
			bo->fpfn = (uint32_t)rng_range(&state, 0,
						       vram_pages / 2 -
						       2 * pages);
			bo->lpfn = bo->fpfn + (uint32_t)(2 * pages);
			break;
		}
	}
	if (!o->syncobjs)
		return 0;
	g->syncobjs = calloc(o->syncobjs, sizeof(*g->syncobjs));
	last = calloc(o->syncobjs, sizeof(*last));
	if (!g->syncobjs || !last) {
		free(last);
		return -ENOMEM;
	}
	g->n_syncobjs = o->syncobjs;
	for (i = 0; i < o->syncobjs; i++) {
		snprintf(g->syncobjs[i].name, sizeof(g->syncobjs[i].name),
			 "s%u", i);
		g->syncobjs[i].timeline = i % 2;
	}
	/* last[k]: the timeline's last point; 1 for a signalled binary. */
	for (j = 0; j < n_jobs; j++) {
		struct wl_job *job = &g->jobs[j];
		uint32_t k;

		if (rng_range(&state, 0, 3) == 0) {
			k = (uint32_t)rng_range(&state, 0, o->syncobjs - 1);
			if (last[k])
				job->syncs[job->n_syncs++] = (struct wl_sync){
					.syncobj = k,
					.point = k % 2 ?
						rng_range(&state, 1, last[k]) :
						0,
				};
		}
		if (rng_range(&state, 0, 3) == 0) {
			k = (uint32_t)rng_range(&state, 0, o->syncobjs - 1);
			if (k % 2 || !last[k]) {
				last[k]++;
				job->syncs[job->n_syncs++] = (struct wl_sync){
					.syncobj = k, .signal = true,
					.point = k % 2 ? last[k] : 0,
				};
			}
		}
	}
	free(last);
	return 0;
}

int workload_generate(const struct wl_gen_options *o, struct workload *wl)
{
	struct workload g = {
		.has_seed = true, .seed = o->seed, .shrink_ms = o->shrink_ms,
	};
	uint64_t state = o->seed;
	uint64_t size_min = o->bo_size_min & ~UINT64_C(3);
	uint64_t size_max = o->bo_size_max & ~UINT64_C(3);
	unsigned int *perm = NULL;
	size_t arena_len = 0, j, n_jobs;
	bool interrupted = false;
	unsigned int i, t;

	memset(wl, 0, sizeof(*wl));
	if (o->threads < 1 || o->threads > WL_MAX_THREADS || o->bos < 1 ||
	    o->bos >= UINT32_MAX || o->engines < 1 ||
	    o->engines > WL_MAX_ENGINES || size_max > WL_MAX_BO_SIZE ||
	    o->bo_size_min > o->bo_size_max || o->per_job_min < 1 ||
	    o->per_job_min > o->per_job_max || o->per_job_max > o->bos ||
	    o->per_job_max > WL_MAX_JOB_BOS || o->job_us_min > o->job_us_max ||
	    o->job_us_max > WL_MAX_JOB_US ||
	    o->shrink_ms > WL_MAX_SHRINK_MS || o->prime_percent > 100 ||
	    o->syncobjs > WL_MAX_SYNCOBJS ||
	    o->jobs > SIZE_MAX / WL_MAX_JOB_BOS / o->threads /
		      sizeof(*g.jobs)) {
		return -EINVAL;
	}
	if (size_min < 4) {
		size_min = 4;
	}
	if (size_max < size_min) {
		size_max = size_min;
	}
	n_jobs = (size_t)o->jobs * o->threads;

	g.bos = calloc(o->bos, sizeof(*g.bos));
	perm = malloc(o->bos * sizeof(*perm));
	if (n_jobs) {
		g.jobs = calloc(n_jobs, sizeof(*g.jobs));
	}
	if (!g.bos || !perm || (n_jobs && !g.jobs)) {
		goto nomem;
	}
	g.n_bos = o->bos;
	for (i = 0; i < o->bos; i++) {
		struct wl_bo *bo = &g.bos[i];

		snprintf(bo->name, sizeof(bo->name), "bo%u", i);
		bo->size = rng_range(&state, size_min, size_max) &
			   ~UINT64_C(3);
		if (bo->size < 4) {
			bo->size = 4;
		}
		bo->placement = WL_PLACE_DEFAULT;
		perm[i] = i;
	}

	/* Buffer counts first, so that the arena is allocated once. */
	size_t arena_size = 0;

	for (j = 0; j < n_jobs; j++) {
		g.jobs[j].n_bos = (unsigned int)rng_range(&state,
							  o->per_job_min,
							  o->per_job_max);
		arena_size += g.jobs[j].n_bos;
	}
	if (arena_size) {
		g.bo_arena = malloc(arena_size * sizeof(*g.bo_arena));
		if (!g.bo_arena) {
			goto nomem;
		}
	}

	/* Round robin over the threads: job j of thread t is j * T + t. */
	for (j = 0; j < n_jobs; j++) {
		struct wl_job *job = &g.jobs[j];
		unsigned int k;

		if (j % WL_GEN_POLL_JOBS == WL_GEN_POLL_JOBS - 1 &&
		    o->interrupted && o->interrupted()) {
			interrupted = true;
			break;
		}
		t = (unsigned int)(j % o->threads);
		job->thread = t;
		job->engine = (unsigned int)rng_range(&state, 0,
						       o->engines - 1);
		job->duration_us = rng_range(&state, o->job_us_min,
					     o->job_us_max);
		job->op = WL_OP_ADD;
		job->add_value = (uint32_t)rng_range(&state, 1, UINT32_MAX);
		job->bos = g.bo_arena + arena_len;
		/* A partial Fisher-Yates shuffle: distinct, in random order. */
		for (k = 0; k < job->n_bos; k++) {
			unsigned int r = (unsigned int)rng_range(&state, k,
								 o->bos - 1);
			unsigned int tmp = perm[k];

			perm[k] = perm[r];
			perm[r] = tmp;
			job->bos[k] = perm[k];
		}
		if (o->order == WL_ORDER_SORTED) {
			qsort(job->bos, job->n_bos, sizeof(*job->bos),
			      cmp_uint);
		} else if (o->order == WL_ORDER_REVERSE) {
			qsort(job->bos, job->n_bos, sizeof(*job->bos),
			      cmp_uint_rev);
		}
		arena_len += job->n_bos;
	}
	g.n_jobs = j;
	g.n_threads = o->threads;
	g.n_engines = o->engines;
	if (gen_features(o, &g, j)) {
		goto nomem;
	}
	free(perm);
	*wl = g;
	return interrupted ? -EINTR : 0;

nomem:
	free(perm);
	workload_free(&g); /* g.n_jobs is still 0 */
	return -ENOMEM;
}

/* --- the writer --------------------------------------------------------- */

static const char *const placement_words[] = {
	[WL_PLACE_DEFAULT] = NULL,
	[WL_PLACE_VRAM] = "vram",
	[WL_PLACE_GTT] = "gtt",
	[WL_PLACE_SYSTEM] = "system",
	[WL_PLACE_VISIBLE] = "visible",
};

static void save_bo(FILE *f, const struct wl_bo *bo)
{
	fprintf(f, "bo %s ", bo->name);
	if (bo->fourcc) {
		char code[5];
		int n = 4;
		int k;

		for (k = 0; k < 4; k++) {
			code[k] = (char)((bo->fourcc >> (8 * k)) & 0xff);
		}
		while (n > 0 && code[n - 1] == ' ') {
			n--;
		}
		code[n] = '\0';
		fprintf(f, "%" PRIu32 "x%" PRIu32 ":%s", bo->width,
			bo->height, code);
	} else {
		fprintf(f, "%" PRIu64, bo->size);
	}
	if ((unsigned int)bo->placement < 5 &&
	    placement_words[bo->placement]) {
		fprintf(f, " %s", placement_words[bo->placement]);
		if (bo->lpfn && (bo->placement == WL_PLACE_VRAM ||
				 bo->placement == WL_PLACE_GTT)) {
			fprintf(f, "@%" PRIu32 "-%" PRIu32, bo->fpfn,
				bo->lpfn);
		}
	}
	if (bo->pinned) {
		fputs(" pinned", f);
	}
	if (bo->prime) {
		fputs(" prime", f);
	}
	fputc('\n', f);
}

static void save_job(FILE *f, const struct workload *wl,
		     const struct wl_job *job)
{
	unsigned int k;

	fprintf(f, "job %u %u %" PRIu64 " ", job->thread, job->engine,
		job->duration_us);
	switch (job->op) {
	case WL_OP_ADD:
		fprintf(f, "add=%" PRIu32, job->add_value);
		break;
	case WL_OP_NOP:
		fputs("nop", f);
		break;
	case WL_OP_HANG:
		fputs("hang", f);
		break;
	}
	for (k = 0; k < job->n_syncs; k++) {
		const struct wl_sync *y = &job->syncs[k];

		fprintf(f, " %s=%s", y->signal ? "signal" : "wait",
			wl->syncobjs[y->syncobj].name);
		if (y->point) {
			fprintf(f, "@%" PRIu64, y->point);
		}
	}
	for (k = 0; k < job->n_bos; k++) {
		fputc(' ', f);
		fputs(wl->bos[job->bos[k]].name, f);
	}
	fputc('\n', f);
}

int workload_save(const struct workload *wl, const char *path)
{
	struct cli_outfile out;
	unsigned int i;
	size_t j;
	FILE *f;
	int ret;

	/* Whole or not at all, and a write error is exit 1 (outfile.h). */
	ret = cli_outfile_open(&out, path);
	if (ret)
		return ret;
	f = out.f;
	fprintf(f, "# ttmsim workload: %u buffers, %zu jobs, %u threads, "
		"%u engines\n", wl->n_bos, wl->n_jobs, wl->n_threads,
		wl->n_engines);
	if (wl->has_seed) {
		fprintf(f, "# generated by ttmsim run --seed %" PRIu64
			"; replay with --engines %u\n", wl->seed,
			wl->n_engines);
	} else if (wl->source) {
		fprintf(f, "# from %s\n", wl->source);
	}
	fputs("# bo NAME SIZE|WIDTHxHEIGHT:FOURCC [vram|gtt|system|visible|"
	      "vram@FPFN-LPFN|gtt@FPFN-LPFN] [pinned] [prime]\n"
	      "# syncobj NAME [timeline]\n"
	      "# job THREAD ENGINE DURATION_US OP [wait=S[@P]] "
	      "[signal=S[@P]] NAME...\n", f);
	if (wl->shrink_ms) {
		fprintf(f, "shrink %u\n", wl->shrink_ms);
	}
	for (i = 0; i < wl->n_syncobjs; i++) {
		fprintf(f, "syncobj %s%s\n", wl->syncobjs[i].name,
			wl->syncobjs[i].timeline ? " timeline" : "");
	}
	for (i = 0; i < wl->n_bos; i++) {
		save_bo(f, &wl->bos[i]);
	}
	for (j = 0; j < wl->n_jobs; j++) {
		save_job(f, wl, &wl->jobs[j]);
	}
	return cli_outfile_close(&out, true);
}
