#!/usr/bin/env bash
# The library must export exactly the symbols listed in ttmsim.sym, like
# libdrm's symbol check: the ABI cannot change by accident. A new public
# function needs a line there; a symbol leaking out of a .c file fails here.
set -euo pipefail
lib="$1"
list="$2"

actual=$(nm -D --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sort)
expected=$(grep -v '^#' "$list" | sed '/^$/d' | sort)

if [ "$actual" != "$expected" ]; then
	echo "exported symbols of $lib differ from $list:"
	diff <(echo "$expected") <(echo "$actual") | sed -n 's/^</  missing: /p; s/^>/  unexpected: /p'
	exit 1
fi
echo "$(echo "$actual" | wc -l) symbols, as listed in $list"
