// SPDX-License-Identifier: MIT
/* The benchmark harness (bench.h): options, header, statistics, JSON. */
#include <ctype.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "parse.h"

#ifndef TTMSIM_VERSION
#error "TTMSIM_VERSION must be defined by the build"
#endif

/* Readable as it is printed; '/' unescaped, as in `ttmsim run`. */
#define BENCH_JSON_FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | \
			  JSON_C_TO_STRING_NOSLASHESCAPE)

#define MAX_OPTIONS 16 /* of one benchmark's own */
#define HELP_SHOWN (-1)

/* Common options first; a benchmark's own option i is NR_COMMON + i. */
enum { OPT_HELP, OPT_REPS, OPT_SEED, OPT_QUICK, OPT_CHECKER, OPT_JSON,
       NR_COMMON };

static const struct option common_options[NR_COMMON] = {
	{ "help", no_argument, NULL, CLI_OPT_LONG + OPT_HELP },
	{ "reps", required_argument, NULL, CLI_OPT_LONG + OPT_REPS },
	{ "seed", required_argument, NULL, CLI_OPT_LONG + OPT_SEED },
	{ "quick", no_argument, NULL, CLI_OPT_LONG + OPT_QUICK },
	{ "checker", required_argument, NULL, CLI_OPT_LONG + OPT_CHECKER },
	{ "json", no_argument, NULL, CLI_OPT_LONG + OPT_JSON },
};

/* The field at @offset of a benchmark's config. */
static void *at(void *cfg, size_t offset)
{
	return (char *)cfg + offset;
}

/* -------------------------------------------------------------------- */
/* Usage. */

/* One option's lines: its words, then @help in a column. */
static void usage_option(const char *words, const char *arg,
			 const char *help)
{
	char left[64];

	snprintf(left, sizeof(left), "%s%s%s", words, arg ? " " : "",
		 arg ? arg : "");
	printf("  %-16s  ", left);
	for (; *help; help++) {
		putchar(*help);
		if (*help == '\n')
			printf("%20s", "");
	}
	putchar('\n');
}

static void usage(const struct bench *b, const char *path)
{
	const struct bench_option *o;
	char words[64];

	printf("usage: ttmsim %s [OPTIONS]\n\n%s\nOptions:\n", path, b->about);
	for (o = b->options; o && o->name; o++) {
		snprintf(words, sizeof(words), "--%s", o->name);
		usage_option(words, o->arg, o->help);
	}
	usage_option("--reps", "N", "repetitions, the best counts (default 5)");
	usage_option("--seed", "N", b->seed_help);
	usage_option("--quick", NULL, b->quick_help);
	usage_option("--checker", "on|off", b->checker_help ? b->checker_help :
		     "the ww_debug checker during the runs\n"
		     "(default off: measure the library)");
	usage_option("--json", NULL, "print one JSON object instead of tables");
	usage_option("-h, --help", NULL, "show this help");
	if (b->notes)
		printf("\n%s", b->notes);
}

/* -------------------------------------------------------------------- */
/* Parsing. */

static int parse_choice(const char *flag, const char *const *choices,
			const char *arg, unsigned int *ret_index)
{
	char list[128] = "";
	unsigned int i;

	for (i = 0; choices[i]; i++) {
		if (!strcmp(arg, choices[i])) {
			*ret_index = i;
			return 0;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
			 "%s%s", i ? ", " : "", choices[i]);
	}
	cli_error("%s: '%s' is not one of %s", flag, arg, list);
	return CLI_EXIT_USAGE;
}

static int parse_option(const struct bench_option *o, const char *arg,
			void *cfg)
{
	char flag[64];

	snprintf(flag, sizeof(flag), "--%s", o->name);
	switch (o->type) {
	case BENCH_UINT:
		return cli_parse_uint(flag, arg, o->min, o->max,
				      at(cfg, o->offset));
	case BENCH_LIST:
		return cli_parse_uint_list(flag, arg, o->min, o->max,
					   at(cfg, o->offset), o->max_n,
					   at(cfg, o->count_offset));
	case BENCH_FLAG:
		*(bool *)at(cfg, o->offset) = true;
		return 0;
	case BENCH_CHOICE:
		return parse_choice(flag, o->choices, arg, at(cfg, o->offset));
	case BENCH_STRING:
		if (!*arg) {
			cli_error("%s: empty", flag);
			return CLI_EXIT_USAGE;
		}
		*(const char **)at(cfg, o->offset) = arg;
		return 0;
	}
	return CLI_EXIT_USAGE;
}

/* A config with @b's defaults, the common part not parsed yet. */
static void *config_new(const struct bench *b)
{
	struct bench_common *c = malloc(b->config_size);

	if (!c)
		return NULL;
	memcpy(c, b->defaults, b->config_size);
	*c = (struct bench_common){
		.seed = 1, .checker = cli_checker_state(),
	};
	return c;
}

/*
 * After the options: the defaults that depend on --quick (for the
 * options not @given; NULL: none given), then @b's own checks.
 */
static int config_finish(const struct bench *b, void *cfg, const bool *given)
{
	struct bench_common *c = cfg;
	size_t i;

	if (!c->reps)
		c->reps = c->quick ? 2 : 5;
	for (i = 0; c->quick && b->options && b->options[i].name; i++) {
		const struct bench_option *o = &b->options[i];

		if (o->type == BENCH_UINT && o->quick && !(given && given[i]))
			*(uint64_t *)at(cfg, o->offset) = o->quick;
	}
	return b->check ? b->check(cfg) : 0;
}

/* Return 0, HELP_SHOWN or CLI_EXIT_USAGE. */
static int parse(const struct bench *b, int argc, char **argv,
		 const char *path, void *cfg)
{
	struct option longopts[NR_COMMON + MAX_OPTIONS + 1] = { { 0 } };
	bool given[MAX_OPTIONS] = { false };
	struct bench_common *c = cfg;
	size_t n = 0, i;
	int opt, ret = 0;

	memcpy(longopts, common_options, sizeof(common_options));
	for (; b->options && b->options[n].name; n++) {
		const struct bench_option *o = &b->options[n];

		if (n == MAX_OPTIONS) {
			cli_error("%s: more than %d options", path,
				  MAX_OPTIONS);
			return CLI_EXIT_USAGE;
		}
		longopts[NR_COMMON + n] = (struct option){
			o->name, o->type == BENCH_FLAG ? no_argument :
							 required_argument,
			NULL, CLI_OPT_LONG + NR_COMMON + (int)n,
		};
	}
	cli_getopt_reset();
	while (!ret && (opt = getopt_long(argc, argv, ":h", longopts,
					  NULL)) != -1) {
		switch (opt) {
		case 'h':
		case CLI_OPT_LONG + OPT_HELP:
			usage(b, path);
			return HELP_SHOWN;
		case CLI_OPT_LONG + OPT_REPS:
			ret = cli_parse_uint("--reps", optarg, 1,
					     BENCH_MAX_REPS, &c->reps);
			break;
		case CLI_OPT_LONG + OPT_SEED:
			ret = cli_parse_uint("--seed", optarg, 0, UINT64_MAX,
					     &c->seed);
			break;
		case CLI_OPT_LONG + OPT_QUICK:
			c->quick = true;
			break;
		case CLI_OPT_LONG + OPT_CHECKER:
			ret = cli_parse_checker(optarg, c->checker,
						&c->checker_runs);
			break;
		case CLI_OPT_LONG + OPT_JSON:
			c->json = true;
			break;
		default:
			i = (size_t)(opt - CLI_OPT_LONG - NR_COMMON);
			if (opt < CLI_OPT_LONG + NR_COMMON || i >= n)
				return cli_getopt_error(path, opt, argv);
			ret = parse_option(&b->options[i], optarg, cfg);
			given[i] = true;
			break;
		}
	}
	if (ret || cli_no_operands(path, argc, argv))
		return CLI_EXIT_USAGE;
	return config_finish(b, cfg, given);
}

/* -------------------------------------------------------------------- */
/* The machine. */

static long online_cpus(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN);
}

/*
 * The CPU's name from /proc/cpuinfo into @buf; false if it names none.
 * x86 says "model name", most ARM boards "Model", MIPS "cpu model",
 * POWER "cpu": the first key of this list that it has wins.
 */
static bool cpu_model(char *buf, size_t size)
{
	static const char *const keys[] = { "model name", "Model",
					    "cpu model", "cpu" };
	size_t found = sizeof(keys) / sizeof(keys[0]), k, len;
	char line[256], *value;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return false;
	while (found && fgets(line, sizeof(line), f)) {
		value = strchr(line, ':');
		if (!value)
			continue;
		for (len = (size_t)(value - line); len && isspace(
			     (unsigned char)line[len - 1]); len--)
			;
		for (k = 0; k < found; k++)
			if (strlen(keys[k]) == len && !strncmp(line, keys[k],
							       len))
				break;
		if (k == found)
			continue;
		found = k;
		for (value++; isspace((unsigned char)*value); value++)
			;
		snprintf(buf, size, "%.*s", (int)strcspn(value, "\n"), value);
	}
	fclose(f);
	return found < sizeof(keys) / sizeof(keys[0]) && *buf;
}

static void print_header(const struct bench *b, const void *cfg)
{
	const struct bench_common *c = cfg;
	char model[128];

	printf("ttmsim %s bench %s\n", TTMSIM_VERSION, b->name);
	printf("online CPUs %ld, CPU %s\n", online_cpus(),
	       cpu_model(model, sizeof(model)) ? model : "unknown");
	if (c->checker == CLI_CHECKER_ABSENT)
		printf("ww_debug checker: %s\n",
		       cli_checker_describe(c->checker));
	else
		printf("ww_debug checker: %s during these runs "
		       "(--checker on|off); at start: %s\n",
		       c->checker_runs ? "on" : "off",
		       cli_checker_describe(c->checker));
	if (b->print_config)
		b->print_config(cfg);
	fflush(stdout);
}

/* -------------------------------------------------------------------- */
/* JSON. */

struct json_object *bench_fixed(double v, int decimals)
{
	char buf[64];

	if (!isfinite(v))
		return NULL;
	/* json-c's default is %.17g: noise digits. */
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return json_object_new_double_s(v, buf);
}

void bench_add_fixed(struct json_object *o, const char *key, double v,
		     int decimals)
{
	json_object_object_add(o, key, bench_fixed(v, decimals));
}

void bench_add_u64(struct json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

void bench_add_string(struct json_object *o, const char *key, const char *s)
{
	json_object_object_add(o, key, s ? json_object_new_string(s) : NULL);
}

struct json_object *bench_add_array(struct json_object *o, const char *key)
{
	struct json_object *a = json_object_new_array();

	json_object_object_add(o, key, a);
	return a;
}

struct json_object *bench_record(struct json_object *results,
				 const char *part)
{
	struct json_object *r = json_object_new_object();

	bench_add_string(r, "part", part);
	json_object_array_add(results, r);
	return r;
}

void bench_add_stat(struct json_object *record, const char *key,
		    const struct bench_stat *s, int decimals)
{
	struct json_object *stats, *o = json_object_new_object();

	/* "stats" stays after the figures: take it out, put it back. */
	if (json_object_object_get_ex(record, "stats", &stats)) {
		json_object_get(stats);
		json_object_object_del(record, "stats");
	} else {
		stats = json_object_new_object();
	}
	bench_add_fixed(record, key, s->best, decimals);
	bench_add_fixed(o, "best", s->best, decimals);
	bench_add_fixed(o, "median", s->median, decimals);
	bench_add_fixed(o, "min", s->min, decimals);
	bench_add_fixed(o, "max", s->max, decimals);
	bench_add_fixed(o, "spread", s->spread, 4);
	json_object_object_add(stats, key, o);
	json_object_object_add(record, "stats", stats);
}

/* An option's value in the config, under its key. */
static void add_option(struct json_object *config,
		       const struct bench_option *o, const void *cfg)
{
	const void *v = (const char *)cfg + o->offset;
	const uint64_t *list = v;
	struct json_object *a;
	char key[64];
	size_t i, n;

	snprintf(key, sizeof(key), "%s", o->key ? o->key : o->name);
	for (i = 0; key[i]; i++)
		if (key[i] == '-')
			key[i] = '_';
	switch (o->type) {
	case BENCH_UINT:
		bench_add_u64(config, key, *list);
		break;
	case BENCH_LIST:
		a = bench_add_array(config, key);
		n = *(const size_t *)((const char *)cfg + o->count_offset);
		for (i = 0; i < n; i++)
			json_object_array_add(a,
					      json_object_new_uint64(list[i]));
		break;
	case BENCH_FLAG:
		json_object_object_add(config, key, json_object_new_boolean(
					       *(const bool *)v));
		break;
	case BENCH_CHOICE:
		bench_add_string(config, key,
				 o->choices[*(const unsigned int *)v]);
		break;
	case BENCH_STRING:
		bench_add_string(config, key, *(const char *const *)v);
		break;
	}
}

static struct json_object *config_json(const struct bench *b,
				       const void *cfg)
{
	const struct bench_common *c = cfg;
	struct json_object *o = json_object_new_object();
	struct json_object *checker = json_object_new_object();
	const struct bench_option *opt;
	bool built_in = c->checker != CLI_CHECKER_ABSENT;
	char model[128];

	bench_add_u64(o, "reps", c->reps);
	bench_add_u64(o, "seed", c->seed);
	json_object_object_add(o, "quick", json_object_new_boolean(c->quick));
	for (opt = b->options; opt && opt->name; opt++)
		add_option(o, opt, cfg);
	if (b->json_config)
		b->json_config(cfg, o);
	bench_add_u64(o, "online_cpus", (uint64_t)online_cpus());
	bench_add_string(o, "cpu_model", cpu_model(model, sizeof(model)) ?
			 model : NULL);
	json_object_object_add(checker, "built_in",
			       json_object_new_boolean(built_in));
	bench_add_string(checker, "at_start", !built_in ? NULL :
			 c->checker == CLI_CHECKER_ON ? "on" : "off");
	bench_add_string(checker, "runs", c->checker_runs ? "on" : "off");
	json_object_object_add(o, "checker", checker);
	return o;
}

static struct json_object *envelope(const struct bench *b, const void *cfg,
				    struct json_object *results, bool ok,
				    double wall_s)
{
	struct json_object *e = json_object_new_object();

	bench_add_string(e, "tool", "ttmsim");
	bench_add_string(e, "version", TTMSIM_VERSION);
	bench_add_string(e, "benchmark", b->name);
	json_object_object_add(e, "config", config_json(b, cfg));
	json_object_object_add(e, "results", results);
	json_object_object_add(e, "checks_ok", json_object_new_boolean(ok));
	bench_add_fixed(e, "wall_s", wall_s, 3);
	return e;
}

static void print_json(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, BENCH_JSON_FLAGS));
	json_object_put(o);
}

/* -------------------------------------------------------------------- */
/* Statistics, ratios, random picks. */

double bench_ratio(double a, double b)
{
	return b > 0 ? a / b : NAN;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void bench_stat(struct bench_stat *ret, const double *first, size_t stride,
		size_t n, enum bench_better better)
{
	double v[BENCH_MAX_REPS];
	size_t i;

	if (n == 0 || n > BENCH_MAX_REPS) {
		*ret = (struct bench_stat){ NAN, NAN, NAN, NAN, NAN };
		return;
	}
	for (i = 0; i < n; i++)
		v[i] = *(const double *)((const char *)first + i * stride);
	qsort(v, n, sizeof(v[0]), cmp_double);
	ret->min = v[0];
	ret->max = v[n - 1];
	ret->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	ret->best = better == BENCH_LOWER ? ret->min : ret->max;
	ret->spread = bench_ratio(ret->max - ret->min, ret->median);
}

void bench_pick(unsigned int *perm, unsigned int n, unsigned int k,
		uint64_t *rng)
{
	unsigned int i;

	for (i = 0; i < k; i++) {
		unsigned int j = i + (unsigned int)(cli_xorshift64(rng) %
						    (n - i));
		unsigned int tmp = perm[i];

		perm[i] = perm[j];
		perm[j] = tmp;
	}
}

/* @iters steps of a dependent chain the compiler cannot drop. */
uint64_t bench_work_loop(uint64_t iters)
{
	uint64_t x = 0x9e3779b97f4a7c15ull, i;

	for (i = 0; i < iters; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/*
 * The best of a few tries, so that a preemption during one does not
 * count.
 */
double bench_work_iters_per_us(void)
{
	const uint64_t iters = 200000;
	double best = 0;
	int i;

	for (i = 0; i < 7; i++) {
		uint64_t start = cli_now_ns();
		double rate;

		bench_work_loop(iters);
		rate = (double)iters * 1000 / (double)(cli_now_ns() - start + 1);
		if (rate > best)
			best = rate;
	}
	return best;
}

/* -------------------------------------------------------------------- */
/* Running. */

/*
 * Run @b with @cfg, parsed: the header and tables, or with --json the
 * envelope into *@ret_envelope. Return the exit status.
 */
static int run(const struct bench *b, const void *cfg,
	       struct json_object **ret_envelope)
{
	const struct bench_common *c = cfg;
	struct json_object *results = json_object_new_array();
	uint64_t start = cli_now_ns();
	double wall_s;
	int ret;

	if (!results) {
		cli_error("bench %s: out of memory", b->name);
		return CLI_EXIT_FAILURE;
	}
	if (!c->json)
		print_header(b, cfg);
	/* Between runs no lock is held: the checker may be switched. */
	cli_checker_switch(c->checker_runs);
	ret = b->measure(cfg, results);
	cli_checker_switch(c->checker == CLI_CHECKER_ON);
	wall_s = (double)(cli_now_ns() - start) / 1e9;
	if (c->json) {
		*ret_envelope = envelope(b, cfg, results, !ret, wall_s);
		return ret;
	}
	json_object_put(results);
	if (!ret)
		printf("wall time: %.1f s\n", wall_s);
	fflush(stdout);
	return ret;
}

int bench_main(const struct bench *b, int argc, char **argv,
	       const char *path)
{
	struct json_object *e = NULL;
	void *cfg = config_new(b);
	int ret;

	if (!cfg) {
		cli_error("%s: out of memory", path);
		return CLI_EXIT_FAILURE;
	}
	ret = parse(b, argc, argv, path, cfg);
	if (ret == HELP_SHOWN)
		ret = CLI_EXIT_OK;
	else if (!ret)
		ret = run(b, cfg, &e);
	if (e)
		print_json(e);
	free(cfg);
	return ret;
}

/* -------------------------------------------------------------------- */
/* bench all. */

static const struct bench *const all_benches[] = {
	&bench_ww, &bench_hellstrom, &bench_gpu, &bench_bo, &bench_execbuf,
};

#define NR_BENCHES (sizeof(all_benches) / sizeof(all_benches[0]))

static const struct bench_common all_defaults;

static const char all_about[] =
	"Runs every benchmark in turn (ww, hellstrom, gpu, bo, execbuf)\n"
	"with its default options and the ones below, and fails (exit 1)\n"
	"if any of them does. With --json, prints one JSON object whose\n"
	"results are the benchmarks' own objects.\n";

static const struct bench bench_all = {
	.name = "all",
	.about = all_about,
	.seed_help = "passed to every benchmark (default 1)",
	.quick_help = "every benchmark's --quick",
	.checker_help = "passed to every benchmark (default off)",
	.defaults = &all_defaults,
	.config_size = sizeof(all_defaults),
};

int cmd_bench_all(int argc, char **argv, const char *path)
{
	struct json_object *results = NULL;
	struct bench_common *all = config_new(&bench_all);
	uint64_t start = cli_now_ns();
	char failed[64] = ""; /* their names */
	size_t i;
	int ret;

	if (!all) {
		cli_error("%s: out of memory", path);
		return CLI_EXIT_FAILURE;
	}
	ret = parse(&bench_all, argc, argv, path, all);
	if (ret) {
		free(all);
		return ret == HELP_SHOWN ? CLI_EXIT_OK : ret;
	}
	if (all->json && !(results = json_object_new_array())) {
		cli_error("%s: out of memory", path);
		free(all);
		return CLI_EXIT_FAILURE;
	}
	for (i = 0; i < NR_BENCHES; i++) {
		const struct bench *b = all_benches[i];
		struct json_object *e = NULL;
		void *cfg = config_new(b);

		if (!cfg) {
			cli_error("%s: out of memory", path);
			ret = CLI_EXIT_FAILURE;
		} else {
			*(struct bench_common *)cfg = *all;
			if (!all->json && i)
				putchar('\n');
			ret = config_finish(b, cfg, NULL);
			if (!ret)
				ret = run(b, cfg, &e);
		}
		if (ret)
			snprintf(failed + strlen(failed),
				 sizeof(failed) - strlen(failed), " %s",
				 b->name);
		if (e)
			json_object_array_add(results, e);
		free(cfg);
	}
	if (all->json)
		print_json(envelope(&bench_all, all, results, !*failed,
				    (double)(cli_now_ns() - start) / 1e9));
	else
		printf("\nbench all: %zu benchmarks, failed:%s; wall time "
		       "%.1f s\n", NR_BENCHES, *failed ? failed : " none",
		       (double)(cli_now_ns() - start) / 1e9);
	free(all);
	return *failed ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}
