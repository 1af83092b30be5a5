#!/usr/bin/env bash
# Run one spin check of model/ww.pml and say whether it came out as expected.
#
#   check.sh MODEL NAME pass|fail|fail:REGEX KIND [SPIN -D FLAGS...]
#
# KIND is "safety" (assertions and invalid end states: mutual exclusion and
# no deadlock) or "progress" (the LTL claim `oldest`, <> done[0], under weak
# fairness: an acceptance cycle is a run where the oldest never gets all its
# locks). "fail" means spin must find a counterexample: the check for a
# seeded bug; "fail:REGEX" also requires pan's first error line ("pan:1:
# assertion violated ...", "pan:1: invalid end state", "pan:1: acceptance
# cycle") to match the extended REGEX, so that a bug seeded against one
# property is not passed by spin finding another (a deadlock for an
# exclusion bug). Prints spin's state count, depth, memory and time; on an
# unexpected counterexample prints the trail. Needs spin and a C compiler
# (CC, default cc). See model/README.md.
set -euo pipefail

if [ $# -lt 4 ]; then
	echo "usage: $0 MODEL NAME pass|fail|fail:REGEX safety|progress [-DFLAG...]" >&2
	exit 2
fi
model=$1 name=$2 expect=$3 kind=$4
shift 4
want=
case $expect in
pass | fail) ;;
fail:?*) want=${expect#fail:} expect=fail ;;
*)
	echo "$0: expectation '$expect' is neither pass nor fail" >&2
	exit 2
	;;
esac
[ -r "$model" ] || { echo "$0: model '$model' cannot be read" >&2; exit 2; }
model=$(realpath "$model")

# The bounds README.md states: a run that hits one is an error, not a pass.
#   VECTORSZ  the state vector is ~100 bytes; 128 catches a model that grows
#   MEMLIM    MB for the whole verifier (hash table included); MODEL_MEMLIM
#             in the environment overrides it (to test that the bound is seen)
#   -m        search depth; the deepest run is ~17,000 steps (MODEL_DEPTH
#             overrides it: the all-orders progress checks reach ~245,000)
#   -w22      4M-slot hash table (32 MB), resized by pan as it fills
ccflags=(-O2 -w -DVECTORSZ=128 -DMEMLIM=${MODEL_MEMLIM:-1024} -DCOLLAPSE)
panflags=(-m${MODEL_DEPTH:-100000} -w22)
case $kind in
safety) ccflags+=(-DSAFETY -DNOCLAIM) ;;
progress) panflags+=(-a -f) ;;
*)
	echo "$0: kind '$kind' is neither safety nor progress" >&2
	exit 2
	;;
esac

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
spin -a "$@" "$model" >spin.log 2>&1 || { cat spin.log; exit 1; }
"${CC:-cc}" "${ccflags[@]}" -o pan pan.c
start=$(date +%s.%N)
./pan "${panflags[@]}" >pan.log 2>&1 || true
end=$(date +%s.%N)

errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log)
states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.log)
depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' pan.log)
mem=$(sed -n 's/^ *\([0-9.]*\).total actual memory usage.*/\1/p' pan.log)
vec=$(sed -n 's/^State-vector \([0-9]*\) byte.*/\1/p' pan.log)
secs=$(echo "$start $end" | awk '{ printf "%.1f", $2 - $1 }')
found=$(grep -m1 -E '^pan:1:' pan.log || true)
# pan's messages (spin 6.5.2 pan.c) for a search it cut short. pan may still
# print "errors: 0" after them, and "depth limit reached" is even counted as
# an error, so a seeded-bug check would "catch" it: any of them fails the
# check whatever the expectation. "hash table is full" is BFS mode's.
incomplete='reached -DMEMLIM bound|out of memory|out of non-shared memory|max search depth too small|depth limit reached|VECTORSZ too small|hash table is full'

printf '%s: %s states, depth %s, vector %s B, %s MB, %s s (spin %s, %s)\n' \
	"$name" "${states:-?}" "${depth:-?}" "${vec:-?}" "${mem:-?}" "$secs" \
	"$*" "$kind"
if grep -qE "$incomplete" pan.log; then
	echo "$name: FAILED: a bound was hit, the search is incomplete:"
	grep -E "$incomplete" pan.log
	exit 1
fi
if [ -z "$errors" ]; then
	echo "$name: pan did not finish:"
	cat pan.log
	exit 1
fi

if [ "$errors" -eq 0 ]; then
	[ "$expect" = pass ] && { echo "$name: ok, no counterexample"; exit 0; }
	echo "$name: FAILED: expected a counterexample (seeded bug), spin found none"
	exit 1
fi
if [ "$expect" = fail ]; then
	if [ -n "$want" ] && ! grep -qE -- "$want" <<<"$found"; then
		echo "$name: FAILED: spin found a counterexample, but not the one expected (/$want/): $found"
		exit 1
	fi
	echo "$name: ok, the seeded bug is caught: $found"
	exit 0
fi
echo "$name: FAILED: $found"
echo "--- counterexample (spin -t -p), last 80 lines:"
spin -t -p -g -l "$@" "$model" 2>&1 | tail -n 80
exit 1
