#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-nosqlite.sh [--hide] [BUILD_DIR] - checks that lpc and lpcbench build
# without SQLite, as on a machine without libsqlite3-dev.  Configures
# BUILD_DIR (default build-nosqlite, at the repository root) as a Release
# build with -DBUILD_TESTING=OFF (only what is installed) and
#   -DLPC_SQLITE=OFF, the switch that hides SQLite from the whole tree (what
#       a configure without libsqlite3-dev finds: src/sqlite/CMakeLists.txt,
#       tools/lpcbench/CMakeLists.txt); or, with --hide (root, Debian: dpkg,
#       unshare), LPC_SQLITE left on and libsqlite3-dev's files hidden in a
#       private mount namespace: its headers replaced by an #error, its
#       libraries by empty files, sqlite3.pc gone from pkg-config's directory;
# then:
#   1. it configures, saying lpcbench is built without its sqlite benchmark,
#      and builds (no liblpc_sqlite);
#   2. lpcbench links no libsqlite3;
#   3. `lpcbench --help` lists sqlite as not built;
#   4. ctest bench.sqlite_none: `lpcbench sqlite,walk` says sqlite was not
#      built and runs walk after it (bench.sqlite is not there).
# About a minute on 2 CPUs (it compiles lpc).  Ends with
# "nosqlite: N passed, N failed"; exits non-zero on any failure.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
hide=0
if [[ ${1:-} == --hide ]]; then
	hide=1
	shift
fi
build=${1:-build-nosqlite}
[[ $build == /* ]] || build="$root/$build"
jobs=${LPC_JOBS:-$(nproc 2>/dev/null || echo 2)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

check() {
	local name=$1
	shift
	echo "--- $name"
	if "$@"; then
		echo "ok: $name"
		pass=$((pass + 1))
	else
		echo "FAILED: $name"
		fail=$((fail + 1))
	fi
}

# --hide: runs "$@" in a mount namespace without libsqlite3-dev's files.
hidden() {
	local pc=$tmp/pkgconfig f

	if ((!hide)); then
		"$@"
		return
	fi
	mkdir -p "$pc"
	printf '#error "libsqlite3-dev is hidden (scripts/check-nosqlite.sh --hide)"\n' >"$tmp/gone.h"
	: >"$tmp/gone"
	{
		echo 'set -e'
		for f in $(dpkg -L libsqlite3-dev); do
			case $f in
			*.h) echo "mount --bind '$tmp/gone.h' '$f'" ;;
			*/pkgconfig/*.pc)
				cp -a "$(dirname "$f")"/. "$pc"/
				rm -f "$pc/$(basename "$f")"
				echo "mount --bind '$pc' '$(dirname "$f")'"
				;;
			*.a | *.so) echo "mount --bind '$tmp/gone' '$(readlink -f "$f")'" ;;
			esac
		done
		echo '! pkg-config --exists sqlite3'
		echo 'exec "$@"'
	} >"$tmp/hide.sh"
	unshare -m --propagation private bash "$tmp/hide.sh" "$@"
}

step_build() {
	local gen=() sw=-DLPC_SQLITE=OFF

	((hide)) && sw=-DLPC_SQLITE=ON
	if [[ ! -f $build/CMakeCache.txt ]] && command -v ninja >/dev/null 2>&1; then
		gen=(-G Ninja)
	fi
	hidden cmake -S "$root" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
		-DLPC_SANITIZE= $sw -DBUILD_TESTING=OFF >"$tmp/configure.txt" 2>&1 ||
		{ cat "$tmp/configure.txt"; return 1; }
	grep 'lpcbench is built without its sqlite benchmark' "$tmp/configure.txt" || return 1
	hidden cmake --build "$build" -j "$jobs" >"$tmp/build.txt" 2>&1 ||
		{ tail -n 40 "$tmp/build.txt"; return 1; }
	[[ -x $build/tools/lpcbench/lpcbench ]] || return 1
	! ls "$build"/src/sqlite/liblpc_sqlite* 2>/dev/null
}

step_ldd() {
	ldd "$build/tools/lpcbench/lpcbench" >"$tmp/ldd.txt" || return 1
	! grep 'libsqlite3' "$tmp/ldd.txt"
}

step_help() {
	"$build/tools/lpcbench/lpcbench" --help >"$tmp/help.txt" || return 1
	grep -E '^  sqlite .*not built' "$tmp/help.txt"
}

step_ctest() {
	(cd "$build" && ctest -R '^bench\.sqlite' --output-on-failure) >"$tmp/ctest.txt" 2>&1 ||
		{ cat "$tmp/ctest.txt"; return 1; }
	grep -E 'bench\.sqlite_none .*Passed' "$tmp/ctest.txt" &&
		grep -q '1 tests passed\|tests passed, 0 tests failed out of 1$' "$tmp/ctest.txt"
}

if ((hide)); then
	check "configure and build with libsqlite3-dev hidden" step_build
else
	check "configure and build with -DLPC_SQLITE=OFF" step_build
fi
if ((fail == 0)); then
	check "lpcbench links no libsqlite3" step_ldd
	check "lpcbench --help says sqlite is not built" step_help
	check "ctest bench.sqlite_none: lpcbench sqlite says so, the next benchmark runs" step_ctest
fi
echo "nosqlite: $pass passed, $fail failed"
((fail == 0))
