#!/usr/bin/env bash
# Install ttmsim into a scratch prefix and build an outside program against
# it with nothing but pkg-config: every installed header must compile on its
# own, and the program must link and run against the installed library;
# the man page is installed when scdoc is available.
set -euo pipefail
src="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

meson setup "$tmp/build" "$src" --prefix="$tmp/prefix" -Dtests=false >/dev/null
ninja -C "$tmp/build" >/dev/null
meson install -C "$tmp/build" >/dev/null

pcdir=$(dirname "$(find "$tmp/prefix" -name ttmsim.pc)")
export PKG_CONFIG_PATH="$pcdir"

# The man page ttmsim(1), if scdoc was there to build it (docs/meson.build).
if command -v scdoc >/dev/null; then
	man1="$tmp/prefix/share/man/man1/ttmsim.1"
	if [ ! -s "$man1" ] || ! grep -q '^\.TH "ttmsim" "1"' "$man1"; then
		echo "ttmsim(1) not installed as share/man/man1/ttmsim.1"
		exit 1
	fi
fi

headers=("$tmp"/prefix/include/ttmsim/*.h)
[ -e "${headers[0]}" ] || { echo "no headers installed"; exit 1; }

# Each header alone, so none relies on another being included first.
for h in "${headers[@]}"; do
	printf '#include <ttmsim/%s>\nint main(void) { return 0; }\n' \
		"$(basename "$h")" >"$tmp/one.c"
	cc -std=c11 -Wall -Werror "$tmp/one.c" -o "$tmp/one" \
		$(pkg-config --cflags --libs ttmsim)
done

cat >"$tmp/x.c" <<'C'
#include <stdio.h>
#include <ttmsim/ww_mutex.h>

static DEFINE_WD_CLASS(outside_class);

int main(void)
{
	struct ww_mutex a, b;
	struct ww_acquire_ctx ctx;

	ww_mutex_init(&a, &outside_class);
	ww_mutex_init(&b, &outside_class);
	ww_acquire_init(&ctx, &outside_class);
	if (ww_mutex_lock(&a, &ctx) || ww_mutex_lock(&b, &ctx) ||
	    ww_mutex_lock(&a, &ctx) != -EALREADY)
		return 1;
	ww_acquire_done(&ctx);
	ww_mutex_unlock(&b);
	ww_mutex_unlock(&a);
	ww_acquire_fini(&ctx);
	puts("outside program: ok");
	return 0;
}
C
cc -std=c11 -Wall -Werror "$tmp/x.c" -o "$tmp/x" $(pkg-config --cflags --libs ttmsim)
LD_LIBRARY_PATH="$(pkg-config --variable=libdir ttmsim)" "$tmp/x"
