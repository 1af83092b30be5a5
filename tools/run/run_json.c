// SPDX-License-Identifier: MIT
/*
 * ttmsim run: json-c under allocation failure (run_json.h): builders that
 * note failures, strings made valid UTF-8, serialized text checked
 * against the object it was made from.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_json.h"
#include "utf8.h"

void run_json_add(struct json_object *o, const char *key,
		  struct json_object *v, bool *ok)
{
	if (!o || !v || json_object_object_add(o, key, v)) {
		json_object_put(v);
		*ok = false;
	}
}

void run_json_add_null(struct json_object *o, const char *key, bool *ok)
{
	if (!o || json_object_object_add(o, key, NULL))
		*ok = false;
}

void run_json_add_u64(struct json_object *o, const char *key, uint64_t v,
		      bool *ok)
{
	run_json_add(o, key, json_object_new_uint64(v), ok);
}

void run_json_append(struct json_object *a, struct json_object *v,
		     bool *ok)
{
	if (!a || !v || json_object_array_add(a, v)) {
		json_object_put(v);
		*ok = false;
	}
}

struct json_object *run_json_string(const char *s, bool *replaced)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), i, k;
	struct json_object *o;
	char *copy;

	if (replaced)
		*replaced = false;
	for (i = 0; i < n; i += k)
		if (!(k = cli_utf8_seq(u + i, n - i)))
			break;
	if (i == n)
		return json_object_new_string_len(s, (int)n);
	copy = cli_utf8_clean(s, false);
	if (!copy)
		return NULL;
	if (replaced)
		*replaced = true;
	o = json_object_new_string(copy);
	free(copy);
	return o;
}

struct json_object *run_json_fixed(double v, int decimals)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return json_object_new_double_s(strtod(buf, NULL), buf);
}

/*
 * Checking the text against the object it came from, without allocating
 * (the check must work when memory is short, and json-c's own parser
 * crashes when an allocation fails). The text is RUN_JSON_FLAGS output:
 * no white space, object keys in the order json-c iterates them.
 */
struct cursor {
	const char *p, *end;
};

static bool take(struct cursor *c, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n))
		return false;
	c->p += n;
	return true;
}

/* The next byte a JSON string literal stands for, escapes decoded. */
static bool string_byte(struct cursor *c, unsigned char *ret)
{
	static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
	const char *e;
	unsigned int v = 0;
	int i;

	if (c->p == c->end)
		return false;
	if (*c->p != '\\') {
		*ret = (unsigned char)*c->p++;
		return true;
	}
	if (c->end - c->p < 2)
		return false;
	if (c->p[1] != 'u') {
		e = c->p[1] ? strchr(esc_in, c->p[1]) : NULL;
		if (!e)
			return false;
		*ret = (unsigned char)esc_out[e - esc_in];
		c->p += 2;
		return true;
	}
	/* json-c writes \u00XX for control characters only. */
	if (c->end - c->p < 6)
		return false;
	for (i = 2; i < 6; i++) {
		char h = c->p[i];

		v = v * 16 + (unsigned int)(h >= '0' && h <= '9' ? h - '0' :
			      h >= 'a' && h <= 'f' ? h - 'a' + 10 :
			      h >= 'A' && h <= 'F' ? h - 'A' + 10 : 256);
	}
	if (v >= 0x80)
		return false;
	*ret = (unsigned char)v;
	c->p += 6;
	return true;
}

static bool match_string(struct cursor *c, const char *s, size_t len)
{
	unsigned char b;
	size_t i;

	if (!take(c, "\""))
		return false;
	for (i = 0; i < len; i++)
		if (c->p == c->end || *c->p == '"' || !string_byte(c, &b) ||
		    b != (unsigned char)s[i])
			return false;
	return take(c, "\"");
}

/* The characters of a number, copied into @buf (@len bytes at most). */
static bool number_text(struct cursor *c, char *buf, size_t len)
{
	size_t n = 0;

	while (c->p < c->end && strchr("+-0123456789.eE", *c->p) && *c->p) {
		if (n + 1 >= len)
			return false;
		buf[n++] = *c->p++;
	}
	buf[n] = '\0';
	return n > 0;
}

static bool match_value(struct cursor *c, struct json_object *o,
			unsigned int depth)
{
	char num[64], *end;
	bool first = true;
	size_t i, n;

	if (depth > 64)
		return false;
	switch (json_object_get_type(o)) {
	case json_type_null:
		return take(c, "null");
	case json_type_boolean:
		return take(c, json_object_get_boolean(o) ? "true" : "false");
	case json_type_int:
		if (!number_text(c, num, sizeof(num)))
			return false;
		errno = 0;
		if (num[0] == '-')
			return strtoll(num, &end, 10) ==
			       json_object_get_int64(o) && !*end && !errno;
		return strtoull(num, &end, 10) == json_object_get_uint64(o) &&
		       !*end && !errno;
	case json_type_double:
		if (!number_text(c, num, sizeof(num)))
			return false;
		return strtod(num, &end) == json_object_get_double(o) && !*end;
	case json_type_string:
		return match_string(c, json_object_get_string(o),
				    (size_t)json_object_get_string_len(o));
	case json_type_object:
		if (!take(c, "{"))
			return false;
		json_object_object_foreach(o, key, val) {
			if ((!first && !take(c, ",")) ||
			    !match_string(c, key, strlen(key)) ||
			    !take(c, ":") || !match_value(c, val, depth + 1))
				return false;
			first = false;
		}
		return take(c, "}");
	case json_type_array:
		if (!take(c, "["))
			return false;
		n = json_object_array_length(o);
		for (i = 0; i < n; i++)
			if ((i && !take(c, ",")) ||
			    !match_value(c, json_object_array_get_idx(o, i),
					 depth + 1))
				return false;
		return take(c, "]");
	}
	return false;
}

const char *run_json_text(struct json_object *o)
{
	struct cursor c;
	size_t len;
	const char *text;

	if (!o)
		return NULL;
	text = json_object_to_json_string_length(o, RUN_JSON_FLAGS, &len);
	if (!text)
		return NULL;
	c = (struct cursor){ text, text + len };
	return match_value(&c, o, 0) && c.p == c.end ? text : NULL;
}
