/* SPDX-License-Identifier: MIT */
/*
 * ttmsim run: building JSON with json-c when any allocation may fail.
 *
 * Every json-c call can fail for lack of memory: a constructor returns
 * NULL, an add returns -1 (and leaves the value to the caller), and the
 * serializer may even drop a piece of the text (a key, a comma) and still
 * return a string, since it ignores some of its own append errors. So the
 * builders below note any failure in a flag the caller checks at the end
 * instead of crashing on a NULL or leaving a key out, and
 * run_json_text() only returns text that it has read back, without
 * allocating, and found equal to the object.
 */
#ifndef TTMSIM_TOOLS_RUN_JSON_H
#define TTMSIM_TOOLS_RUN_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

/* json-c's default escapes '/', which makes paths ugly ("a\/b"). */
#define RUN_JSON_FLAGS (JSON_C_TO_STRING_PLAIN | \
			JSON_C_TO_STRING_NOSLASHESCAPE)

/*
 * Add @v under @key to object @o; on any failure (@o or @v NULL, the add
 * refused) *@ok = false and @v is put. Keys are string constants.
 */
void run_json_add(struct json_object *o, const char *key,
		  struct json_object *v, bool *ok);
/* Add a JSON null under @key (which json-c represents as NULL). */
void run_json_add_null(struct json_object *o, const char *key, bool *ok);
void run_json_add_u64(struct json_object *o, const char *key, uint64_t v,
		      bool *ok);
/* Append @v to array @a; the same rules. */
void run_json_append(struct json_object *a, struct json_object *v,
		     bool *ok);

/*
 * A JSON string of @s that is valid UTF-8 whatever @s holds: each byte
 * that is not part of a valid UTF-8 sequence becomes U+FFFD, and
 * *@replaced (if not NULL) tells whether one did. NULL without memory.
 */
struct json_object *run_json_string(const char *s, bool *replaced);

/*
 * A number written with exactly @decimals decimals, whose value is what
 * that text reads back as (so that run_json_text() can compare).
 */
struct json_object *run_json_fixed(double v, int decimals);

/*
 * @o as text (RUN_JSON_FLAGS), checked against @o: NULL if json-c could
 * not write all of it. The text belongs to @o.
 */
const char *run_json_text(struct json_object *o);

#endif /* TTMSIM_TOOLS_RUN_JSON_H */
