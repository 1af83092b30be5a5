// SPDX-License-Identifier: MIT
/*
 * ttmsim stress: the reports. The JSON report (json-c, never by hand):
 * the run's seed and shard, iterations, jobs, per-feature counts, each
 * iteration's seed and outcome, the failures with their files and replay
 * command. The JUnit XML: one <testsuite> per run, one <testcase> per
 * iteration named by its seed, a <failure> with run's message; what
 * GitLab, GitHub Actions (through a JUnit action) and Jenkins render.
 *
 * Every string from outside (what run printed, paths, the replay command)
 * goes through clean() first, the one place that makes it valid UTF-8
 * without control bytes (U+FFFD for each bad byte): an XML parser
 * rejects the whole file for one such byte, and a JSON one for invalid
 * UTF-8.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "stress.h"
#include "utf8.h"

#ifndef TTMSIM_VERSION
#define TTMSIM_VERSION "unknown"
#endif

#define STRESS_JSON_FLAGS (JSON_C_TO_STRING_PRETTY | \
			   JSON_C_TO_STRING_NOSLASHESCAPE)

bool stress_path_writable(const char *path)
{
	bool existed = access(path, F_OK) == 0;
	FILE *f = fopen(path, "a");

	if (!f)
		return false;
	fclose(f);
	if (!existed)
		unlink(path);
	return true;
}

static int finish(FILE *f)
{
	int err = 0;

	if (fflush(f) || ferror(f))
		err = errno ? errno : EIO;
	if (fclose(f) && !err)
		err = errno ? errno : EIO;
	return -err;
}

/* @s as valid UTF-8 with no control byte but tab and newline; malloc. */
static char *clean(const char *s)
{
	return cli_utf8_clean(s ? s : "", true);
}

static void add_str(struct json_object *o, const char *key, const char *v)
{
	char *c;

	if (!v)
		return;
	c = clean(v);
	json_object_object_add(o, key, json_object_new_string(c ? c : "?"));
	free(c);
}

/* "SIGABRT" for 6, in @buf. */
static const char *signame(int sig, char *buf, size_t len)
{
	const char *name = sigabbrev_np(sig);

	if (name)
		snprintf(buf, len, "SIG%s", name);
	else
		snprintf(buf, len, "signal %d", sig);
	return buf;
}

static struct json_object *result_json(const struct stress_result *res)
{
	char sig[32];
	struct json_object *o = json_object_new_object();
	struct json_object *feats = json_object_new_array();
	char sum[32];
	unsigned int f;

	json_object_object_add(o, "seed", json_object_new_uint64(res->seed));
	json_object_object_add(o, "status", json_object_new_int(res->status));
	json_object_object_add(o, "failed",
			       json_object_new_boolean(res->failed));
	if (res->signal)
		add_str(o, "signal", signame(res->signal, sig, sizeof(sig)));
	if (res->sanitizer)
		json_object_object_add(o, "sanitizer",
				       json_object_new_boolean(true));
	json_object_object_add(o, "threads",
			       json_object_new_int((int)res->threads));
	json_object_object_add(o, "bos", json_object_new_int((int)res->bos));
	json_object_object_add(o, "jobs", json_object_new_uint64(res->jobs));
	snprintf(sum, sizeof(sum), "%016llx",
		 (unsigned long long)res->checksum);
	add_str(o, "workload_fnv1a", sum);
	for (f = 0; f < SF_COUNT; f++)
		if (res->features & (1u << f))
			json_object_array_add(feats, json_object_new_string(
					stress_feature_names[f]));
	json_object_object_add(o, "features", feats);
	add_str(o, "message", res->message);
	add_str(o, "signature", res->klass);
	add_str(o, "workload", res->workload_path);
	add_str(o, "shrunk", res->shrunk_path);
	add_str(o, "shrink", res->shrink);
	add_str(o, "replay", res->replay);
	return o;
}

int stress_report_json(const struct stress_report *r, const char *path)
{
	struct json_object *root = json_object_new_object();
	struct json_object *feats = json_object_new_object();
	struct json_object *iters = json_object_new_array();
	struct json_object *fails = json_object_new_array();
	char shard[32];
	FILE *f;
	size_t i;
	unsigned int k;

	snprintf(shard, sizeof(shard), "%u/%u", r->shard, r->shards);
	add_str(root, "version", TTMSIM_VERSION);
	json_object_object_add(root, "seed", json_object_new_uint64(r->seed));
	add_str(root, "shard", shard);
	json_object_object_add(root, "limit_s",
			       json_object_new_double(r->limit_s));
	json_object_object_add(root, "limit_iterations",
			       json_object_new_uint64(r->limit_iterations));
	json_object_object_add(root, "wall_s",
			       json_object_new_double(r->seconds));
	json_object_object_add(root, "iterations",
			       json_object_new_uint64(r->n_results));
	json_object_object_add(root, "jobs", json_object_new_uint64(r->jobs));
	json_object_object_add(root, "failures",
			       json_object_new_uint64(r->failures));
	for (k = 0; k < SF_COUNT; k++)
		json_object_object_add(feats, stress_feature_names[k],
			json_object_new_uint64(r->feature_counts[k]));
	json_object_object_add(root, "features", feats);
	for (i = 0; i < r->n_results; i++) {
		json_object_array_add(iters, result_json(&r->results[i]));
		if (r->results[i].failed)
			json_object_array_add(fails,
					      result_json(&r->results[i]));
	}
	json_object_object_add(root, "failed", fails);
	json_object_object_add(root, "iteration_list", iters);

	f = fopen(path, "w");
	if (!f) {
		json_object_put(root);
		return -errno;
	}
	fputs(json_object_to_json_string_ext(root, STRESS_JSON_FLAGS), f);
	fputc('\n', f);
	json_object_put(root);
	return finish(f);
}

/* @s as XML character data or attribute value, clean()ed. */
static void xml_escape(FILE *f, const char *str)
{
	char *c = clean(str), *s;

	for (s = c ? c : "?"; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		switch (ch) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		case '\n': fputs("&#10;", f); break;
		default: fputc(ch, f); break;
		}
	}
	free(c);
}

/* "exit 1", "SIGABRT", "exit 0, sanitizer": the failure's type. */
static void describe(const struct stress_result *res, char *buf,
		     size_t len)
{
	if (res->signal)
		signame(res->signal, buf, len);
	else
		snprintf(buf, len, "exit %d", res->status);
	if (res->sanitizer)
		snprintf(buf + strlen(buf), len - strlen(buf), ", sanitizer");
}

int stress_report_junit(const struct stress_report *r, const char *path)
{
	FILE *f = fopen(path, "w");
	char how[64];
	size_t i;

	if (!f)
		return -errno;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<testsuites name=\"ttmsim stress\" tests=\"%zu\" "
		"failures=\"%zu\" time=\"%.3f\">\n"
		"  <testsuite name=\"ttmsim stress shard %u/%u seed %llu\" "
		"tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\" "
		"time=\"%.3f\">\n", r->n_results, r->failures, r->seconds,
		r->shard, r->shards, (unsigned long long)r->seed,
		r->n_results, r->failures, r->seconds);
	for (i = 0; i < r->n_results; i++) {
		const struct stress_result *res = &r->results[i];

		fprintf(f, "    <testcase classname=\"ttmsim.stress\" "
			"name=\"seed %llu\" time=\"%.3f\"",
			(unsigned long long)res->seed, res->seconds);
		if (!res->failed) {
			fputs("/>\n", f);
			continue;
		}
		describe(res, how, sizeof(how));
		fprintf(f, ">\n      <failure type=\"%s\" message=\"", how);
		fprintf(f, "seed %llu: ttmsim run: %s; ",
			(unsigned long long)res->seed, how);
		if (res->shrink) {
			fprintf(f, "%s: ", res->shrink);
			xml_escape(f, res->shrunk_path);
			fputs("; ", f);
		}
		fputs("replay: ", f);
		xml_escape(f, res->replay);
		fputs("\">", f);
		xml_escape(f, res->message);
		fputs("</failure>\n    </testcase>\n", f);
	}
	fputs("  </testsuite>\n</testsuites>\n", f);
	return finish(f);
}
