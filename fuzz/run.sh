#!/usr/bin/env bash
# Fuzz one target, or all, for SECONDS each with libFuzzer, merging the
# new interesting inputs into fuzz/corpus/<target>/ (fuzz/README.md).
#
#	fuzz/run.sh [TARGET|all] [SECONDS]	(default: all 60)
#
# Configures build-fuzz/ with clang (-Dfuzz=true) on first use. A crash
# leaves its input as build-fuzz/crash-<target>-*: copy it into the corpus
# once the bug is fixed, so that suite fuzz replays it in every build.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(workload ww drm)
which="${1:-all}"
seconds="${2:-60}"
if [ "$which" != all ] && [[ ! " ${targets[*]} " =~ " $which " ]]; then
	echo "fuzz/run.sh: unknown target '$which' (one of: ${targets[*]}, all)" >&2
	exit 2
fi
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
	echo "fuzz/run.sh: SECONDS must be a positive integer, not '$seconds'" >&2
	exit 2
fi
[ "$which" = all ] || targets=("$which")

if [ ! -f build-fuzz/build.ninja ]; then
	CC=clang meson setup build-fuzz -Dfuzz=true -Db_lundef=false \
		-Dtests=false
fi
ninja -C build-fuzz

# Reports of allocation sizes the device refuses are not bugs: malloc may
# say NULL. A parse error's message on stderr is noise here (fd 2 closed).
export ASAN_OPTIONS="${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
status=0
for t in "${targets[@]}"; do
	corpus="fuzz/corpus/$t"
	new="build-fuzz/new-corpus-$t"
	rm -rf "$new"
	mkdir -p "$new"
	echo "::: fuzz-$t for ${seconds}s"
	if ! build-fuzz/fuzz/fuzz-"$t" -max_total_time="$seconds" \
		-timeout=10 -close_fd_mask=2 -print_final_stats=1 \
		-artifact_prefix="build-fuzz/crash-$t-" "$new" "$corpus"; then
		echo "fuzz/run.sh: fuzz-$t found a failure: build-fuzz/crash-$t-*" >&2
		status=1
	fi
	# Keep only what adds coverage to the committed corpus.
	build-fuzz/fuzz/fuzz-"$t" -merge=1 -close_fd_mask=2 \
		-artifact_prefix="build-fuzz/crash-$t-" "$corpus" "$new" \
		2>&1 | grep -E 'MERGE-OUTER: [0-9]+ new files' || true
done
exit "$status"
