#!/usr/bin/env bash
# Install every build and test dependency of ttmsim on Debian 12 (apt-get),
# then configure and build into build/. Idempotent: when everything is
# installed and configured it only runs ninja. With CI=true warnings are
# errors (-Dwerror=true).
set -euo pipefail
cd "$(dirname "$0")"

packages=(
	meson ninja-build pkg-config gcc binutils python3
	libcmocka-dev libdrm-dev
	libjson-c-dev scdoc          # the CLI's JSON output; the man page
	libtsan2 libasan8 libubsan1   # sanitizer builds (.ci/run)
	spin                          # suite model: model/README.md
	clang libclang-rt-14-dev     # the clang UBSan build (.ci/run), libFuzzer (fuzz/)
)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if ((${#missing[@]})); then
	sudo=()
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	echo "setup.sh: installing ${missing[*]}"
	"${sudo[@]}" apt-get update
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y \
		--no-install-recommends "${missing[@]}"
fi

opts=()
[ "${CI:-}" = true ] && opts+=(-Dwerror=true)
if [ -f build/build.ninja ]; then
	((${#opts[@]} == 0)) || meson configure build "${opts[@]}"
else
	meson setup build "${opts[@]}"
fi
ninja -C build
