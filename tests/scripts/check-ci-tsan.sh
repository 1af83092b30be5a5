#!/usr/bin/env bash
# .ci/run's ThreadSanitizer build must run suites ww and ww-debug: some
# bugs of the ww_mutex core (an unlock without release ordering) pass
# every suite on x86 and only TSan catches them (tests/test_ww_stress.c).
set -euo pipefail
ci="$1"

# The extra_build call of build-tsan, continuation lines included.
call=$(awk '/extra_build build-tsan/ { on = 1 } on { print; if ($0 !~ /\\$/) exit }' "$ci")
if [ -z "$call" ]; then
	echo "$ci: no 'extra_build build-tsan' call"
	exit 1
fi
status=0
for suite in ww ww-debug; do
	if ! grep -Eq -- "--suite $suite( |\\\\|$)" <<<"$call"; then
		echo "$ci: the TSan build does not run suite $suite"
		status=1
	fi
done
[ "$status" -eq 0 ] && echo "$ci: the TSan build runs suites ww and ww-debug"
exit "$status"
