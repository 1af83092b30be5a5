// SPDX-License-Identifier: MIT
/*
 * ttmsim stress: the reports. The JSON report (json-c, never by hand):
 * the run's seed and shard, iterations, jobs, per-feature counts, each
 * iteration's seed and outcome, the failures with their files and replay
 * command. The JUnit XML: one <testsuite> per run, one <testcase> per
 * iteration named by its seed, a <failure> with run's message; what
 * GitLab, GitHub Actions (through a JUnit action) and Jenkins render.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "stress.h"

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

static void add_str(struct json_object *o, const char *key, const char *v)
{
	if (v)
		json_object_object_add(o, key, json_object_new_string(v));
}

static struct json_object *result_json(const struct stress_result *res)
{
	struct json_object *o = json_object_new_object();
	struct json_object *feats = json_object_new_array();
	char sum[32];
	unsigned int f;

	json_object_object_add(o, "seed", json_object_new_uint64(res->seed));
	json_object_object_add(o, "status", json_object_new_int(res->status));
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
	add_str(o, "workload", res->workload_path);
	add_str(o, "shrunk", res->shrunk_path);
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
		if (r->results[i].status)
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

/* @s as XML character data or attribute value: no control bytes. */
static void xml_escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		switch (ch) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		case '\n': fputs("&#10;", f); break;
		case '\t': fputc(ch, f); break;
		default:
			/* XML 1.0 allows no other C0 control, even escaped. */
			fputc(ch < 0x20 || ch == 0x7f ? '?' : ch, f);
		}
	}
}

int stress_report_junit(const struct stress_report *r, const char *path)
{
	FILE *f = fopen(path, "w");
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
		if (!res->status) {
			fputs("/>\n", f);
			continue;
		}
		fprintf(f, ">\n      <failure type=\"exit %d\" message=\"",
			res->status);
		fprintf(f, "seed %llu: ttmsim run exited %d; replay: ",
			(unsigned long long)res->seed, res->status);
		xml_escape(f, res->replay);
		fputs("\">", f);
		xml_escape(f, res->message);
		fputs("</failure>\n    </testcase>\n", f);
	}
	fputs("  </testsuite>\n</testsuites>\n", f);
	return finish(f);
}
