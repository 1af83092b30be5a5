/* SPDX-License-Identifier: MIT */
/*
 * The benchmark harness: what every `ttmsim bench` command shares.
 *
 * A benchmark is a struct bench: a config struct whose first member is a
 * struct bench_common, a table of its own options, and a measure callback.
 * bench_main() does the rest, the same way for every benchmark: the common
 * options (--reps, --seed, --quick, --checker, --json, --help) and the
 * table's, the usage text, the header (version, CPUs, CPU model, checker),
 * the checker's state during the runs, and the output's frame: the wall
 * time after the text tables, or one JSON envelope
 *
 *   {tool, version, benchmark, config, results, checks_ok, wall_s}
 *
 * where config echoes every option and results holds the records the
 * benchmark appended (docs/benchmarks.md has the schema). JSON is built
 * with json-c, never by hand.
 */
#ifndef TTMSIM_TOOLS_BENCH_H
#define TTMSIM_TOOLS_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "checker.h"
#include "cli.h"
#include "clock.h"
#include "rng.h"

#define BENCH_MAX_REPS 1000

/*
 * The common options, after parsing: the first member of every
 * benchmark's config, so that the harness finds them.
 */
struct bench_common {
	uint64_t reps;            /* --reps: default 5, with --quick 2 */
	uint64_t seed;            /* --seed: default 1 */
	bool quick, json;
	bool checker_runs;        /* --checker: on during the runs */
	enum cli_checker checker; /* as the program started */
};

enum bench_option_type {
	BENCH_UINT,   /* a uint64_t in [min, max] */
	BENCH_LIST,   /* up to max_n of them, comma-separated, count a size_t */
	BENCH_FLAG,   /* a bool, set by the option */
	BENCH_CHOICE, /* the index of one of choices[], an unsigned int */
	BENCH_STRING, /* a const char *, argv's; NULL unless given */
};

/*
 * The offset of @field in config struct @T; it must have type @type, or
 * the build fails (an option table cannot write the wrong type).
 */
#define BENCH_AT(T, field, type) \
	(offsetof(T, field) + _Generic(((T *)0)->field, type: 0))

/**
 * struct bench_option - one option of a benchmark's own.
 * @name: the long option without "--".
 * @arg: its value in the usage ("N"); NULL for a flag.
 * @help: the usage text; each '\n' starts a new, indented line.
 * @key: its key in the JSON config; NULL: @name with '_' for '-'.
 * @offset: where the value is in the config (BENCH_AT()).
 * @quick: BENCH_UINT: the value with --quick unless given; 0: the same.
 * @count_offset: BENCH_LIST: where the number of values goes (a size_t).
 * @choices: BENCH_CHOICE: the values, NULL-terminated.
 */
struct bench_option {
	const char *name;
	const char *arg;
	const char *help;
	const char *key;
	enum bench_option_type type;
	size_t offset;
	uint64_t min, max;
	uint64_t quick;
	size_t count_offset, max_n;
	const char *const *choices;
};

/**
 * struct bench - a benchmark.
 * @name: its word after "bench", and "benchmark" in the JSON.
 * @about: the usage text between the synopsis and the options.
 * @seed_help, @quick_help: what --seed seeds, what --quick changes.
 * @checker_help: what --checker does; NULL: the common text.
 * @notes: the usage text after the options, or NULL.
 * @options: its own options, ended by one with a NULL @name; or NULL.
 * @defaults: the config before parsing; @config_size: its size.
 * @check: after parsing: cross-checks and derived defaults; 0 or
 *	CLI_EXIT_USAGE after a message. Optional.
 * @print_config: the text header's lines after the common ones. Optional.
 * @json_config: add what the option table does not echo. Optional.
 * @measure: run, print the text tables unless json, append the records
 *	to @results (a JSON array) in any case; 0 if every check passed,
 *	else CLI_EXIT_FAILURE after a message.
 */
struct bench {
	const char *name;
	const char *about;
	const char *seed_help;
	const char *quick_help;
	const char *checker_help;
	const char *notes;
	const struct bench_option *options;
	const void *defaults;
	size_t config_size;
	int (*check)(void *cfg);
	void (*print_config)(const void *cfg);
	void (*json_config)(const void *cfg, struct json_object *config);
	int (*measure)(const void *cfg, struct json_object *results);
};

extern const struct bench bench_bo, bench_execbuf, bench_gpu, bench_hellstrom,
	bench_ww;

/**
 * bench_main - the whole command for @bench: parse, run, report.
 *
 * Return: the exit status: CLI_EXIT_OK, CLI_EXIT_FAILURE if a check
 * failed (the JSON then says "checks_ok": false), CLI_EXIT_USAGE.
 */
int bench_main(const struct bench *bench, int argc, char **argv,
	       const char *path);

/** cmd_bench_all - `ttmsim bench all`: every benchmark in turn. */
int cmd_bench_all(int argc, char **argv, const char *path);

/*
 * Statistics over the repetitions. Values may sit in an array of structs:
 * @first is the first one, @stride the distance in bytes to the next.
 */
enum bench_better { BENCH_HIGHER, BENCH_LOWER };

struct bench_stat {
	double best; /* the highest or the lowest, as the figure wants */
	double median, min, max;
	double spread; /* (max - min) / median: the noise of the machine */
};

void bench_stat(struct bench_stat *ret, const double *first, size_t stride,
		size_t n, enum bench_better better);

/* JSON records. */

/** bench_record - a new record of @part ("contended"), added to @results. */
struct json_object *bench_record(struct json_object *results,
				 const char *part);

/** bench_fixed - @v with @decimals decimals; NULL (null) if infinite. */
struct json_object *bench_fixed(double v, int decimals);

void bench_add_fixed(struct json_object *o, const char *key, double v,
		     int decimals);
void bench_add_u64(struct json_object *o, const char *key, uint64_t v);
void bench_add_string(struct json_object *o, const char *key,
		      const char *s);

/** bench_add_array - a new array under @key of @o. */
struct json_object *bench_add_array(struct json_object *o, const char *key);

/**
 * bench_add_stat - figure @key of a record: its best value under @key
 * and all of @s under "stats"/@key.
 */
void bench_add_stat(struct json_object *record, const char *key,
		    const struct bench_stat *s, int decimals);

/** bench_ratio - @a / @b, NaN (null in JSON) unless @b > 0. */
double bench_ratio(double a, double b);

/**
 * bench_pick - move @k distinct random entries of @perm[0..@n) to
 * @perm[0..@k), in a random order: a partial Fisher-Yates shuffle, driven
 * by the xorshift64* state *@rng. The rest of @perm keeps the others.
 */
void bench_pick(unsigned int *perm, unsigned int n, unsigned int k,
		uint64_t *rng);

/*
 * Busy work: bench_work_loop() runs @iters steps of a dependent chain the
 * compiler cannot drop (its result is returned); bench_work_iters_per_us()
 * is how many steps take a microsecond on this CPU, alone (the best of a
 * few tries). Work, not a wall-clock wait: a thread preempted in the
 * middle still owes the rest.
 */
uint64_t bench_work_loop(uint64_t iters);
double bench_work_iters_per_us(void);

#endif /* TTMSIM_TOOLS_BENCH_H */
