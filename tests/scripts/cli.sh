#!/usr/bin/env bash
# The ttmsim CLI: help and version, exit status 2 with a message naming the
# bad word for every kind of bad input, the ABBA scenario resolving every
# round, and the naive ABBA deadlock reported by the watchdog (exit 3).
set -uo pipefail
ttmsim="$1"
fails=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

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

expect_out '^ttmsim 0\.[0-9]+\.[0-9]+$' --version
for args in "--help" "-h" "help" "help bench ww" "bench --help" \
	"scenario --help" "bench ww --help" "scenario abba --help"; do
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

expect_out "counters: ok" bench ww --quick --hold-us 0,2 --duration-ms 20
expect_out '"counters_ok": true' bench ww --quick --json --hold-us 2 --duration-ms 20

expect 0 "" scenario abba --rounds 200
if [ "$(grep -c 'no deadlock occurred' "$out")" -ne 2 ]; then
	echo "FAIL: scenario abba did not report two deadlock-free runs"
	fails=$((fails + 1))
fi

expect 3 '^deadlock: T1 \(tid [0-9]+\) holds A, waits for B \(held by T2\)$' \
	scenario abba --naive --watchdog 0.3
grep -Eq '^deadlock: T2 \(tid [0-9]+\) holds B, waits for A \(held by T1\)$' "$err" ||
	{ echo "FAIL: naive abba report lacks T2's line"; fails=$((fails + 1)); }

[ "$fails" -eq 0 ] && echo "cli: all checks passed"
exit $((fails != 0))
