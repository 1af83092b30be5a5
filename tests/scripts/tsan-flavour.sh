#!/usr/bin/env bash
# The ThreadSanitizer flavour as a driver project uses it (built with
# -Dtsan_flavour=true): install the build into a scratch DESTDIR, build a
# two-thread ww_mutex program with nothing but
# `pkg-config --cflags --libs ttmsim-tsan`, and check that it is
# instrumented, that it loads libttmsim-tsan.so (not libttmsim.so), that
# the library is instrumented, and that the run is clean under TSan.
# Usage: tsan-flavour.sh BUILD_DIR CLIENT_C CC...
set -euo pipefail
build="$1"
client="$2"
shift 2
cc=("$@")
# The tools it checks with: without them, a skip (77), not a failure.
for tool in nm ldd pkg-config; do
	command -v "$tool" >/dev/null ||
		{ echo "tsan-flavour: $tool not found: skipped" >&2; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "tsan-flavour: $*" >&2
	exit 1
}

meson install -C "$build" --no-rebuild --destdir "$tmp/root" >"$tmp/install.log" ||
	{ cat "$tmp/install.log"; fail "meson install --destdir failed"; }

pc=$(find "$tmp/root" -name ttmsim-tsan.pc)
[ -n "$pc" ] || fail "ttmsim-tsan.pc not installed"
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
[ -e "$libdir/libttmsim-tsan.so" ] || fail "no libttmsim-tsan.so beside $pc"
[ -e "$libdir/libttmsim.so" ] || fail "the plain libttmsim.so is not installed beside it"
# The .pc files name the configured prefix; the files are under DESTDIR.
sed -i "s|^prefix=|prefix=$tmp/root|" "$pc" "$pcdir/ttmsim.pc"
export PKG_CONFIG_PATH="$pcdir"

cflags=$(pkg-config --cflags ttmsim-tsan)
libs=$(pkg-config --libs ttmsim-tsan)
[[ " $cflags " == *" -fsanitize=thread "* ]] || fail "Cflags lack -fsanitize=thread: $cflags"
[[ " $libs " == *" -lttmsim-tsan "* ]] || fail "Libs lack -lttmsim-tsan: $libs"
[[ " $libs " == *" -fsanitize=thread "* ]] || fail "Libs lack -fsanitize=thread: $libs"

# shellcheck disable=SC2086 # pkg-config's output is a list of flags
"${cc[@]}" -std=gnu11 -g -O1 -Wall -Werror "$client" -o "$tmp/client" \
	$cflags $libs

# The library the program loads: the instrumented flavour, from DESTDIR.
export LD_LIBRARY_PATH="$libdir"
loaded=$(ldd "$tmp/client")
grep -q "libttmsim-tsan\.so\.[0-9]* => $libdir/" <<<"$loaded" ||
	{ echo "$loaded"; fail "the client does not load $libdir/libttmsim-tsan.so"; }
! grep -q "libttmsim\.so" <<<"$loaded" ||
	{ echo "$loaded"; fail "the client loads the plain libttmsim.so"; }
grep -q "libtsan\.so" <<<"$loaded" || fail "the client is not linked with the TSan runtime"
lib=$(readlink -f "$libdir/libttmsim-tsan.so")
# Read whole before the search: grep -q stops at the first match, and
# under pipefail nm's SIGPIPE then failed an instrumented library.
undefined=$(nm -D --undefined-only "$lib")
grep -q " __tsan_func_entry$" <<<"$undefined" ||
	fail "$lib is not instrumented (no __tsan_func_entry import)"

# A clean run: any report makes TSan exit 66.
rc=0
TSAN_OPTIONS="halt_on_error=1:exitcode=66${TSAN_OPTIONS:+:$TSAN_OPTIONS}" \
	"$tmp/client" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 0 ] || { cat "$tmp/err"; fail "the client failed under TSan (status $rc)"; }
! grep -q "ThreadSanitizer" "$tmp/err" || { cat "$tmp/err"; fail "TSan reported"; }
cat "$tmp/err"
echo "tsan-flavour: $(basename "$lib") installed, loaded and instrumented; run clean"
