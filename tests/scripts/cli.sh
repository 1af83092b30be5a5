#!/usr/bin/env bash
# The ttmsim CLI: help and version, exit status 2 with a message naming the
# bad word for every kind of bad input, the ABBA scenario resolving every
# round, the naive ABBA deadlock reported by the watchdog (exit 3), the qxl
# scenario stopped by the ww_debug checker (exit 1), the benchmarks' smallest
# runs, bench ww's checker on/off figures, and a write error on stdout
# (/dev/full) failing a command with a message. Passes in both library
# flavours: with the checker built in (the default) and with
# -Dww_debug=false, told apart by `ttmsim --version`.
set -uo pipefail
ttmsim="$1"
fails=0
out=$(mktemp) err=$(mktemp) wdir=$(mktemp -d)
trap 'rm -rf "$out" "$err" "$wdir"' EXIT

# expect STATUS STDERR-PATTERN ARGS...: run, check status and stderr.
expect() {
	local want="$1" pattern="$2" got
	shift 2
	"$ttmsim" "$@" >"$out" 2>"$err"
	got=$?
	if [ "$got" -ne "$want" ]; then
		echo "FAIL: ttmsim $* exited $got, expected $want"; cat "$err"
		fails=$((fails + 1))
	elif [ -n "$pattern" ] && ! grep -Eq -- "$pattern" "$err"; then
		echo "FAIL: ttmsim $*: stderr lacks /$pattern/:"; cat "$err"
		fails=$((fails + 1))
	fi
}

# fail_unless_out PATTERN WHAT: the last stdout must match PATTERN.
fail_unless_out() {
	if ! grep -Eq -- "$1" "$out"; then
		echo "FAIL: $2: stdout lacks /$1/"
		fails=$((fails + 1))
	fi
}

# fail_unless_err PATTERN WHAT: the last stderr must match PATTERN.
fail_unless_err() {
	if ! grep -Eq -- "$1" "$err"; then
		echo "FAIL: $2: stderr lacks /$1/"; cat "$err"
		fails=$((fails + 1))
	fi
}

# expect_out ARGS... with stdout matching the pattern in $want_out.
expect_out() {
	local pattern="$1"
	shift
	expect 0 "" "$@"
	if ! grep -Eq -- "$pattern" "$out"; then
		echo "FAIL: ttmsim $*: stdout lacks /$pattern/"
		fails=$((fails + 1))
	fi
}

# json_holds WHAT EXPR: the last stdout is one JSON document, d, for which
# the Python expression EXPR holds (num(x): x is a number).
json_holds() {
	if ! python3 -c 'import json, sys
num = lambda x: isinstance(x, (int, float)) and not isinstance(x, bool)
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$out" "$2"; then
		echo "FAIL: $1: the JSON fails: $2"
		fails=$((fails + 1))
	fi
}

expect_out '^ttmsim 0\.[0-9]+\.[0-9]+$' --version
fail_unless_out '^ww_debug checker: (built in|not built in)' "--version"
# The library flavour: 1 if the checker is built in.
checker=1
grep -q '^ww_debug checker: not built in' "$out" && checker=0
echo "cli: ww_debug checker built in: $checker"

for args in "--help" "-h" "help" "help bench ww" "bench --help" \
	"scenario --help" "bench ww --help" "scenario abba --help" \
	"scenario qxl --help" "help scenario qxl"; do
	# shellcheck disable=SC2086
	expect_out '[Uu]sage' $args
done

expect 2 "missing command"
expect 2 "unknown command 'frob'" frob
expect 2 "unknown option '--frob'" --frob
expect 2 "unknown benchmark 'frob'" bench frob
expect 2 "unknown scenario 'frob'" scenario frob
expect 2 "bench ww: unknown option '--frob'" bench ww --frob
expect 2 "bench ww: unknown option '-x'" bench ww -x
expect 2 "unexpected argument 'extra'" bench ww extra
expect 2 "'--json' takes no value" bench ww --json=1
expect 2 "--reps: missing value" bench ww --reps
expect 2 "--reps: 'abc' is not a number" bench ww --reps abc
expect 2 "--reps: '0' is out of range" bench ww --reps 0
expect 2 "--per-tx: '8' is more than --locks" bench ww --locks 4 --per-tx 8
expect 2 "--hold-us: 'abc' in '0,abc'" bench ww --hold-us 0,abc
expect 2 "scenario abba: unknown option '--frob'" scenario abba --frob
expect 2 "--rounds: 'abc' is not a number" scenario abba --rounds abc
expect 2 "--watchdog: '0' is out of range" scenario abba --watchdog 0
expect 2 "--class: 'xx' is not one of" scenario abba --class xx
expect 2 "scenario qxl: unknown option '--bogus'" scenario qxl --bogus
expect 2 "scenario qxl: unexpected argument 'extra'" scenario qxl extra
expect 2 "--watchdog: 'x' is not a number" scenario qxl --watchdog x
expect 2 "--checker: 'maybe' is not one of on, off" bench ww --checker maybe

# The smallest runs that still go through every row.
quick="--quick --iterations 100000 --duration-ms 10"
# shellcheck disable=SC2086
expect_out "counters: ok" bench ww $quick --hold-us 0,2
fail_unless_out '^  lock +checker off' "bench ww"
fail_unless_out 'checker( off during these runs|: not built in)' "bench ww"
if [ "$checker" = 1 ]; then
	fail_unless_out '^  lock +checker off +checker on$' "bench ww"
	fail_unless_out '^  ww_mutex, ctx +[0-9.]+ +[0-9.]+$' "bench ww"
	# shellcheck disable=SC2086
	expect_out "checker on during these runs" bench ww $quick \
		--hold-us 2 --checker on
else
	fail_unless_out '^  ww_debug checker: not built in' "bench ww"
	expect 2 "--checker: 'on' needs a libttmsim built with -Dww_debug=true" \
		bench ww --checker on
fi
# shellcheck disable=SC2086
expect 0 "" bench ww $quick --json --hold-us 2
json_holds "bench ww --json" 'd["checks_ok"] is True'
json_holds "bench ww --json" \
	'isinstance(d["config"]["checker"]["built_in"], bool)'
if [ "$checker" = 1 ]; then
	json_holds "bench ww --json" 'any(r.get("lock") ==
		"ww_mutex_ctx_checker_on" and r["checker"] == "on"
		for r in d["results"])'
fi

expect 0 "" scenario abba --rounds 200
if [ "$(grep -c 'no deadlock occurred' "$out")" -ne 2 ]; then
	echo "FAIL: scenario abba did not report two deadlock-free runs"
	fails=$((fails + 1))
fi

# bench gpu: usage errors, then the smallest run with both modes.
for args in "bench gpu --help" "help bench gpu"; do
	# shellcheck disable=SC2086
	expect_out '[Uu]sage' $args
done
expect 2 "bench gpu: unknown option '--frob'" bench gpu --frob
expect 2 "bench gpu: unexpected argument 'extra'" bench gpu extra
expect 2 "--deps: 'maybe' is not one of on, off, both" bench gpu --deps maybe
expect 2 "--engines: '0' is out of range" bench gpu --engines 0
expect 2 "--jobs: 'x' is not a number" bench gpu --jobs x
expect 2 "--path: 'fast' is not one of direct, sched, both" bench gpu \
	--path fast
# Both paths by default, a row each per deps mode; the sched rows give
# their ratio to the direct ones.
expect_out '^  direct +off +[0-9]+ +[0-9]+ +- ' bench gpu --quick --jobs 2000
fail_unless_out '^  direct +on +[0-9]+ ' "bench gpu"
fail_unless_out '^  sched +off +[0-9]+ +[0-9]+ +[0-9]+\.[0-9]{2} ' "bench gpu"
fail_unless_out '^  sched +on +[0-9]+ +[0-9]+ +[0-9]+\.[0-9]{2} ' "bench gpu"
fail_unless_out '^counters: ok$' "bench gpu"
expect_out '"benchmark": "gpu"' bench gpu --quick --jobs 2000 --deps on --json
json_holds "bench gpu --json" 'any(r.get("deps") == "on" and
	r.get("path") == "direct" and num(r.get("jobs_per_s"))
	for r in d["results"])'
json_holds "bench gpu --json" 'any(r.get("deps") == "on" and
	r.get("path") == "sched" and num(r.get("jobs_per_s")) and
	num(r.get("ratio_to_direct")) for r in d["results"])'
if grep -q '"deps": "off"' "$out"; then
	echo "FAIL: bench gpu --deps on ran without deps too"
	fails=$((fails + 1))
fi
expect 0 "" bench gpu --quick --jobs 2000 --path sched --deps off --json
json_holds "bench gpu --path sched --json" '[(r["path"], r["deps"],
	r["ratio_to_direct"]) for r in d["results"]] == [("sched", "off",
	None)] and d["config"]["path"] == "sched" and d["checks_ok"] is True'

# run --priorities: every kind of bad value exits 2 naming the flag; a
# good one gives each priority's clients and latency, in text and JSON.
expect 2 "--priorities: 'foo' in 'high=1,foo' is not NAME=COUNT" run \
	--priorities high=1,foo
expect 2 "--priorities: 'urgent' in 'urgent=1' is not one of kernel, high, normal, low" \
	run --priorities urgent=1
expect 2 "--priorities: 'High' in 'High=1' is not one of" run \
	--priorities High=1
expect 2 "--priorities: 'high' is given twice in 'high=1,high=2'" run \
	--priorities high=1,high=2
expect 2 "--priorities: 'x' is not a number" run --priorities high=x
expect 2 "--priorities: '-1' is not a number" run --priorities low=-1
expect 2 "--priorities: an empty item in 'high=1,,low=1'" run \
	--priorities high=1,,low=1
expect 2 "--priorities: an empty item in ''" run --priorities ''
expect 2 "--priorities: '=3' in '=3' is not NAME=COUNT" run --priorities =3
expect 2 "--priorities: 'high=0' gives 0 clients \(1 to 1024\)" run \
	--priorities high=0
expect 2 "--priorities: '1025' is out of range" run --priorities low=1025
expect 2 "--priorities: 'high=1000,low=25' gives 1025 clients" run \
	--priorities high=1000,low=25
expect 2 "--priorities: 3 clients but --threads is 4" run --threads 4 \
	--priorities high=1,normal=2
expect 2 "--priorities: 2 clients but the workload has 3 threads" run \
	--workload "$(dirname "$0")/../../examples/compose.txt" \
	--priorities high=2 --check
expect 2 "--priorities: missing value" run --priorities
# Without --threads, --priorities gives their number.
expect_out "generated: .* 3 threads, " run --priorities high=1,low=2 --check
prun="run --jobs 50 --bos 64 --job-us 0:20 --no-progress"
# shellcheck disable=SC2086
expect_out '^priorities: high=1 normal=2 low=1$' $prun \
	--priorities low=1,normal=2,high=1
fail_unless_out '^latency_high: count=50 p50_us=[0-9]+ p99_us=[0-9]+$' \
	"run --priorities"
fail_unless_out '^latency_normal: count=100 p50_us=[0-9]+ p99_us=[0-9]+$' \
	"run --priorities"
fail_unless_out '^latency_low: count=50 ' "run --priorities"
# shellcheck disable=SC2086
expect_out '^priorities: normal=2$' $prun --threads 2
# shellcheck disable=SC2086
expect 0 "" $prun --priorities high=2,low=1 --json
json_holds "run --priorities --json" 'd["priorities"] == {"high": 2,
	"low": 1} and d["threads"] == 3'
json_holds "run --priorities --json" 'sorted(d["latency"]) == ["high",
	"low"] and all(sorted(l) == ["count", "p50_us", "p99_us"] and
	all(num(v) for v in l.values()) and l["p50_us"] <= l["p99_us"]
	for l in d["latency"].values())'
json_holds "run --priorities --json" '(d["latency"]["high"]["count"],
	d["latency"]["low"]["count"]) == (100, 50)'
# kernel, a privileged client's: every job completes, accounted for.
# shellcheck disable=SC2086
expect 0 "" $prun --priorities kernel=1,normal=1 --json
json_holds "run --priorities kernel=1 --json" '(d["priorities"],
	d["latency"]["kernel"]["count"], d["completed"]) == ({"kernel": 1,
	"normal": 1}, 50, 100)'

# run's input (issue 20): each check failed before its fix.
# A UTF-8 byte order mark at the start of a file is skipped.
printf '\xef\xbb\xbfbo a 4\njob 0 0 0 nop a\n' >"$wdir/bom.txt"
expect_out "bom.txt: 1 buffers, 1 jobs, 1 threads, 1 engines: ok" run \
	--workload "$wdir/bom.txt" --check
# A workload without jobs is refused, naming it.
printf '# only a comment\nbo a 4\n' >"$wdir/empty.txt"
expect 2 "empty.txt: no jobs: a workload needs at least one job line" run \
	--workload "$wdir/empty.txt" --check
expect 2 "/dev/null: no jobs" run --workload /dev/null
# A FIFO with no writer: an error at once, not a wait for ever; a pipe
# with its writer (process substitution) reads as a file.
mkfifo "$wdir/fifo"
timeout 20 "$ttmsim" run --workload "$wdir/fifo" --check >"$out" 2>"$err"
got=$?
if [ "$got" -ne 2 ] || ! grep -q "fifo: no jobs.*FIFO.* no writer" "$err"; then
	echo "FAIL: run --workload FIFO-without-writer exited $got, expected 2"
	cat "$err"; fails=$((fails + 1))
fi
expect_out ": 1 buffers, 1 jobs, 1 threads, 1 engines: ok" run --workload \
	<(printf 'bo a 4\njob 0 0 0 nop a\n') --check
# A 500 KB word is echoed as its first 40 bytes and "...", in a workload
# and on the command line (a failure shows only the message's start).
{ printf 'bo a 4\njob 0 0 '; head -c 500000 /dev/zero | tr '\0' 7
  printf ' nop a\n'; } >"$wdir/word.txt"
short_error() { # WHAT PATTERN ARGS...: exit 2, one short line matching
	local what="$1" pattern="$2" got
	shift 2
	"$ttmsim" "$@" >"$out" 2>"$err"
	got=$?
	if [ "$got" -ne 2 ] || [ "$(wc -c <"$err")" -gt 200 ] ||
		! grep -Eq -- "$pattern" "$err"; then
		echo "FAIL: $what: exit $got, $(wc -c <"$err") bytes:"
		head -c 300 "$err"; echo; fails=$((fails + 1))
	fi
}
short_error "a 500 KB word in a workload" \
	"word.txt:2: duration \(us\) '7{40}\.\.\.' is out of range" \
	run --workload "$wdir/word.txt" --check
short_error "a 100 KB --seed" "--seed: '9{40}\.\.\.' is out of range" \
	run --seed "$(head -c 100000 /dev/zero | tr '\0' 9)"
# A generated workload that cannot be allocated is a usage error naming
# the flags, not an allocation failure (exit 1).
expect 2 "--jobs 16777216 x --threads 1024 .*memory" run --jobs 16777216 \
	--threads 1024 --check
# SIGTERM and SIGINT while generating (sent by the test hook halfway, at
# the generator's first poll): the usual interrupted summary, exit 130.
TTMSIM_TEST_GEN_SIGNAL=15 expect 130 "interrupted while generating" run \
	--threads 1 --jobs 10000 --json --no-progress
json_holds "run interrupted while generating" '(d["interrupted"],
	d["submitted"], d["jobs"], d["not_submitted"]) == (True, 0, 4095, 4095)'
TTMSIM_TEST_GEN_SIGNAL=2 expect 130 "interrupted while generating" run \
	--threads 1 --jobs 10000 --no-progress
fail_unless_out "^interrupted: yes$" "run SIGINT while generating"
TTMSIM_TEST_GEN_SIGNAL=2 expect 130 "interrupted while generating" run \
	--threads 1 --jobs 10000 --check --save-workload "$wdir/part.txt"
[ -e "$wdir/part.txt" ] && { echo "FAIL: part of a workload was saved"
	fails=$((fails + 1)); }
# A hang job whose GPU timeout (1.5 s) is longer than --watchdog (0.3 s)
# is the GPU at work, not a deadlock: it fails with -ETIMEDOUT, exit 0.
printf 'bo a 4096\njob 0 0 0 hang a\njob 0 1 0 add=1 a\n' >"$wdir/hang.txt"
expect 0 "" run --workload "$wdir/hang.txt" --hang-timeout-ms 1500 \
	--watchdog 0.3 --no-progress --json
json_holds "run hang-timeout > watchdog" '(d["failed"],
	d["completed"]) == (1, 1)'
# A job that runs 2.5 s, longer than --watchdog (1 s): work, exit 0.
# The margins are wide so that a loaded machine cannot blur them.
printf 'bo a 4096\njob 0 0 2500000 add=1 a\n' >"$wdir/long.txt"
expect 0 "" run --workload "$wdir/long.txt" --watchdog 1 --no-progress \
	--json
json_holds "run long job > watchdog" 'd["completed"] == 1'
# A real stall (TTMSIM_TEST_FAULT=stall: thread 0 holds buffer a with
# its 1 ms job in flight forever) while the workload has a 60 s job that
# never runs: exit 3 after --watchdog plus the 1 ms in flight, not 60 s.
printf 'bo a 4096\nbo b 4096\njob 0 0 1000 add=1 a\njob 0 1 60000000 add=1 b\n' \
	>"$wdir/stall.txt"
TTMSIM_TEST_FAULT=stall timeout 20 "$ttmsim" run --workload "$wdir/stall.txt" \
	--watchdog 0.3 --no-progress >"$out" 2>"$err"
got=$?
if [ "$got" -ne 3 ] || ! grep -q "no progress for" "$err"; then
	echo "FAIL: a stall beside a 60 s job not running: exit $got (124:" \
		"still running after 20 s), expected 3 promptly"; cat "$err"
	fails=$((fails + 1))
fi

# bench bo: usage errors, then the smallest run of both parts.
for args in "bench bo --help" "help bench bo"; do
	# shellcheck disable=SC2086
	expect_out '[Uu]sage' $args
done
expect 2 "bench bo: unknown option '--frob'" bench bo --frob
expect 2 "bench bo: unexpected argument 'extra'" bench bo extra
expect 2 "--size: '6' is not a multiple of 4" bench bo --size 6
expect 2 "--buffers: '0' in '1000,0' is out of range" bench bo \
	--buffers 1000,0
expect 2 "--reps: 'x' is not a number" bench bo --reps x
expect_out '^  +1000 +[0-9.]+ +[0-9.]+ ' bench bo --quick --buffers 1000,2000 \
	--evictions 64
fail_unless_out '^  +2000 +[0-9.]+ +[0-9.]+ ' "bench bo"
fail_unless_out ' MiB/s moved, [0-9]+ evictions/s \(64 evictions, 128 MiB ' \
	"bench bo"
fail_unless_out '^accounting: ok' "bench bo"
expect_out '"benchmark": "bo"' bench bo --quick --buffers 1000 --evictions 32 \
	--json
json_holds "bench bo --json" 'd["checks_ok"] is True'
json_holds "bench bo --json" 'any(r.get("buffers") == 1000 and
	num(r.get("single_ns_per_buffer")) for r in d["results"])'

# bench execbuf: usage errors, then the smallest run of all four modes.
for args in "bench execbuf --help" "help bench execbuf"; do
	# shellcheck disable=SC2086
	expect_out '[Uu]sage' $args
done
expect 2 "bench execbuf: unknown option '--frob'" bench execbuf --frob
expect 2 "bench execbuf: unexpected argument 'extra'" bench execbuf extra
expect 2 "--threads: '0' is out of range" bench execbuf --threads 0
expect 2 "--jobs: 'x' is not a number" bench execbuf --jobs x
expect 2 "--per-job: '9' is more than --bos \(8\)" bench execbuf --bos 8 \
	--per-job 9
expect 2 "--vram: '8192' cannot hold one job's 8 buffers" bench execbuf \
	--vram 8192
expect 2 "--checker: 'maybe' is not one of on, off" bench execbuf \
	--checker maybe
xquick="--quick --jobs 200 --reps 1"
# shellcheck disable=SC2086
expect_out '^  unsorted +wait-die +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +0\.00$' \
	bench execbuf $xquick
fail_unless_out '^  unsorted +wound-wait +[0-9]+ ' "bench execbuf"
fail_unless_out '^  sorted +wait-die +[0-9]+ ' "bench execbuf"
fail_unless_out '^  sorted +wound-wait +[0-9]+ ' "bench execbuf"
fail_unless_out '^counters: ok \(4 runs' "bench execbuf"
fail_unless_out 'checker: (off during these runs|not built in)' \
	"bench execbuf"
# A VRAM of 64 buffers for 200: jobs evict, and still all complete.
row='^  sorted +wound-wait +[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+ +[1-9][0-9.]*$'
# shellcheck disable=SC2086
expect_out "$row" \
	bench execbuf $xquick --bos 200 --vram 262144 --jobs 50
# shellcheck disable=SC2086
expect_out '"benchmark": "execbuf"' bench execbuf $xquick --threads 2 --json \
	--phases
if ! python3 -m json.tool "$out" >/dev/null; then
	echo "FAIL: bench execbuf --json is not valid JSON"
	fails=$((fails + 1))
fi
json_holds "bench execbuf --json" 'd["checks_ok"] is True'
json_holds "bench execbuf --json" 'any(r.get("order") == "sorted" and
	r.get("class") == "wound-wait" and "jobs_per_s" in r
	for r in d["results"])'
json_holds "bench execbuf --json --phases" 'any(num(r.get("phase_ns_per_job",
	{}).get("submit")) and "lookup" in r["phase_ns_per_job"]
	for r in d["results"])'
if [ "$checker" = 1 ]; then
	# shellcheck disable=SC2086
	expect_out "checker: on during these runs" bench execbuf $xquick \
		--checker on
else
	expect 2 "--checker: 'on' needs a libttmsim built with -Dww_debug=true" \
		bench execbuf --checker on
fi

expect 3 '^deadlock: T1 \(tid [0-9]+\) holds A, waits for B \(held by T2\)$' \
	scenario abba --naive --watchdog 0.3
grep -Eq '^deadlock: T2 \(tid [0-9]+\) holds B, waits for A \(held by T1\)$' "$err" ||
	{ echo "FAIL: naive abba report lacks T2's line"; fails=$((fails + 1)); }

# qxl: the fixed page flip runs in every flavour; the buggy one needs the
# checker, which stops it with its report (rule 1) naming the caller.
expect_out "fixed version completed" scenario qxl --fixed
if [ "$checker" = 1 ]; then
	expect 1 "rule 1 broken \(ctx-after-null\)" scenario qxl
	fail_unless_err "class: +reservation_ww_class" "scenario qxl"
	fail_unless_err "ww_mutex_lock\(\) at [^ ]*scenario_qxl\.c:[0-9]+" \
		"scenario qxl"
	fail_unless_out "stopped by the checker \(SIGABRT\)" "scenario qxl"
	fail_unless_out "fixed version completed" "scenario qxl"
	TTMSIM_WW_DEBUG=0 expect 2 "switched off by TTMSIM_WW_DEBUG=0" \
		scenario qxl
else
	expect 2 "needs a libttmsim built with -Dww_debug=true" scenario qxl
fi

# Output that cannot be written is an error, whatever the command: exit 1
# with a message naming standard output, not a silent success.
if [ -w /dev/full ]; then
	for args in "--version" "--help" "bench --help" "run --help"; do
		# shellcheck disable=SC2086
		"$ttmsim" $args >/dev/full 2>"$err"
		got=$?
		if [ "$got" -ne 1 ] || ! grep -q "standard output" "$err"; then
			echo "FAIL: ttmsim $args >/dev/full exited $got," \
				"expected 1 naming standard output:"; cat "$err"
			fails=$((fails + 1))
		fi
	done
fi

[ "$fails" -eq 0 ] && echo "cli: all checks passed"
exit $((fails != 0))
