#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-install.sh [BUILD_DIR] - checks what `cmake --install` gives a user.
# BUILD_DIR (default build-release) must be built.  Into a temporary prefix:
#   1. cmake --install BUILD_DIR --prefix TMP, and the expected files are there;
#   2. the installed liblpc.so exports exactly the API (cmake/check_exports.cmake);
#   3. lpc.pc validates; lpc.h compiles alone as strict C11 and as C++;
#   4. a program built with `pkg-config --cflags --libs lpc` runs (shared);
#   5. the same program linked with liblpc.a and `pkg-config --static` runs;
#   6. a CMake project with find_package(lpc) and lpc::lpc builds and runs;
#   7. the installed bin/lpcbench runs (finds liblpc through its RPATH);
#   8. with MANPATH=<prefix>/share/man, `man -w` finds a page for every
#      exported function of each installed library's version script
#      (src/lpc.map; src/sqlite/lpc_sqlite.map and src/rbd/lpc_rbd.map when
#      liblpc_sqlite and liblpc_rbd were installed), and lpc(7);
#   9. when liblpc_sqlite was built: lpc_sqlite.h compiles as C11 and C++, a
#      program linked with -llpc_sqlite -lsqlite3 opens a database through
#      the VFS "lpc", and the stock sqlite3 shell loads the extension.
# Ends with "install: N passed, N failed"; exits non-zero on any failure.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-build-release}
[[ $build == /* ]] || build="$root/$build"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
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

cat >"$tmp/consumer.c" <<'C'
/* A program that uses the installed lpc. */
#include <stdio.h>
#include <lpc/lpc.h>

int main(void)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_page *p;
	struct lpc_stats st;
	int rc;

	lpc_config_init(&cfg);
	cfg.cache_bytes = 1 << 20;
	rc = lpc_cache_create(&cfg, &c);
	if (rc < 0)
		return fprintf(stderr, "lpc_cache_create: %d\n", rc), 1;
	rc = lpc_page_alloc(c, &p);
	if (rc < 0)
		return fprintf(stderr, "lpc_page_alloc: %d\n", rc), 1;
	((char *)lpc_page_data(p))[0] = 1;
	lpc_page_put(p);
	lpc_stats(c, &st);
	printf("consumer: lpc %s (built with %s), %llu frames of %zu bytes\n", lpc_version(),
	       LPC_VERSION_STRING, (unsigned long long)st.frames, cfg.page_size);
	rc = lpc_cache_destroy(c);
	return rc < 0;
}
C

# Installed libdir: lib, or lib/<multiarch> under /usr.
find_libdir() { dirname "$(find "$prefix" -name lpc.pc -path '*/pkgconfig/*' | head -n 1)"; }

step_install() {
	cmake --install "$build" --prefix "$prefix" || return 1
	local pcdir
	pcdir=$(find_libdir)
	if [[ -z $pcdir || $pcdir == . ]]; then
		echo "no lpc.pc installed"
		return 1
	fi
	libdir=$(dirname "$pcdir")
	export PKG_CONFIG_PATH="$pcdir"
	local f ok=0
	for f in "$prefix/include/lpc/lpc.h" "$libdir/liblpc.so" "$libdir/liblpc.a" \
		 "$libdir/cmake/lpc/lpcConfig.cmake"; do
		[[ -e $f ]] || { echo "missing: $f"; ok=1; }
	done
	find "$prefix" \( -type f -o -type l \) | sed "s|^$prefix/|  |" | sort
	return $ok
}

step_exports() {
	cmake -DLIB="$libdir/liblpc.so" -DMAP="$root/src/lpc.map" \
	      -P "$root/cmake/check_exports.cmake"
}

step_header() {
	pkg-config --validate lpc || return 1
	echo "pkg-config --cflags --libs lpc: $(pkg-config --cflags --libs lpc)"
	echo '#include <lpc/lpc.h>' >"$tmp/h.c"
	# shellcheck disable=SC2046 # pkg-config prints a list of words
	cc -std=c11 -pedantic -Wall -Wextra -Werror $(pkg-config --cflags lpc) \
	   -fsyntax-only "$tmp/h.c" || return 1
	# shellcheck disable=SC2046
	c++ -std=c++11 -Wall -Wextra -Werror $(pkg-config --cflags lpc) \
	    -fsyntax-only -x c++ "$tmp/h.c"
}

step_shared() {
	# shellcheck disable=SC2046 # pkg-config prints a list of words
	cc -std=c11 -Wall -Wextra -Werror "$tmp/consumer.c" -o "$tmp/consumer" \
	   $(pkg-config --cflags --libs lpc) || return 1
	LD_LIBRARY_PATH="$(pkg-config --variable=libdir lpc)" "$tmp/consumer"
}

step_static() {
	local libs
	libs=$(pkg-config --static --libs lpc | sed 's/\(^\| \)-llpc\( \|$\)/ /')
	# shellcheck disable=SC2046,SC2086
	cc -std=c11 -Wall -Wextra -Werror "$tmp/consumer.c" -o "$tmp/consumer-static" \
	   $(pkg-config --cflags lpc) "$libdir/liblpc.a" $libs || return 1
	if ldd "$tmp/consumer-static" | grep -q liblpc; then
		echo "consumer-static links liblpc.so"
		return 1
	fi
	"$tmp/consumer-static"
}

step_cmake() {
	mkdir -p "$tmp/cm"
	cp "$tmp/consumer.c" "$tmp/cm/"
	cat >"$tmp/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(consumer LANGUAGES C)
find_package(lpc 0.3 REQUIRED)
add_executable(consumer consumer.c)
target_link_libraries(consumer PRIVATE lpc::lpc)
CM
	if ! cmake -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cm.log" 2>&1 ||
	   ! cmake --build "$tmp/cm/build" >>"$tmp/cm.log" 2>&1; then
		cat "$tmp/cm.log"
		return 1
	fi
	"$tmp/cm/build/consumer"
}

step_lpcbench() {
	env -u LD_LIBRARY_PATH "$prefix/bin/lpcbench" --help >"$tmp/lpcbench.txt" || return 1
	head -n 1 "$tmp/lpcbench.txt"
	! ldd "$prefix/bin/lpcbench" | grep -q 'liblpc.* not found'
}

step_man() {
	local mandir s ok=0 n=0 maps
	mandir=$(dirname "$(find "$prefix" -name lpc.7 -path '*/man7/*' | head -n 1)")
	mandir=$(dirname "$mandir")
	if [[ ! -f $mandir/man7/lpc.7 ]]; then
		echo "no man7/lpc.7 installed"
		return 1
	fi
	maps=("$root/src/lpc.map")
	[[ -e $libdir/liblpc_sqlite.so ]] && maps+=("$root/src/sqlite/lpc_sqlite.map")
	[[ -e $libdir/liblpc_rbd.so ]] && maps+=("$root/src/rbd/lpc_rbd.map")
	# Globals: names followed by ';' outside a node's "local:" part, after
	# the comments (which may span lines) are removed.
	for s in lpc $(cat "${maps[@]}" | tr '\n' '\v' | sed -e 's|/\*[^*]*\*\+\([^/*][^*]*\*\+\)*/||g' |
		       tr '\v' '\n' |
		       awk '/^[[:space:]]*local:/ { l = 1; next } /\{/ { l = 0 }
			    !l && /^[[:space:]]*[A-Za-z_][A-Za-z0-9_]*;/ { gsub(/[;[:space:]]/, ""); print }'); do
		n=$((n + 1))
		if ! MANPATH="$mandir" man -w "$s" >/dev/null 2>&1; then
			echo "MANPATH=$mandir man -w $s: no page"
			ok=1
		fi
	done
	echo "man -w: $n names looked up under $mandir"
	MANPATH="$mandir" MANWIDTH=80 man lpc_page_get 2>/dev/null | head -n 4
	return $ok
}

step_sqlite() {
	local so="$libdir/liblpc_sqlite.so"
	[[ -e $so && -f $prefix/include/lpc/lpc_sqlite.h ]] || { echo "not installed"; return 1; }
	[[ -f $libdir/liblpc_sqlite.a ]] || { echo "no liblpc_sqlite.a"; return 1; }
	[[ -n $(find "$prefix" -name lpc_sqlite.7 -path '*/man7/*') ]] || { echo "no lpc_sqlite(7)"; return 1; }
	echo '#include <lpc/lpc_sqlite.h>' >"$tmp/hs.c"
	# shellcheck disable=SC2046
	cc -std=c11 -pedantic -Wall -Wextra -Werror $(pkg-config --cflags lpc) \
	   -fsyntax-only "$tmp/hs.c" || return 1
	# shellcheck disable=SC2046
	c++ -std=c++11 -Wall -Wextra -Werror $(pkg-config --cflags lpc) \
	    -fsyntax-only -x c++ "$tmp/hs.c" || return 1
	cat >"$tmp/sq.c" <<'C'
#include <stdio.h>
#include <sqlite3.h>
#include <lpc/lpc_sqlite.h>
int main(int argc, char **argv)
{
	sqlite3 *db;
	struct lpc_stats st;
	if (argc < 2 || lpc_sqlite_register(0) != SQLITE_OK ||
	    sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "lpc") ||
	    sqlite3_exec(db, "CREATE TABLE t(a); INSERT INTO t VALUES(42)", 0, 0, 0) ||
	    sqlite3_close(db) || lpc_sqlite_stats(&st) || !st.writes)
		return 1;
	printf("sqlite consumer: a database written through lpc (%llu writes)\n",
	       (unsigned long long)st.writes);
	return 0;
}
C
	# shellcheck disable=SC2046
	cc -std=c11 -Wall -Wextra -Werror "$tmp/sq.c" -o "$tmp/sq" $(pkg-config --cflags lpc) \
	   -L"$libdir" -llpc_sqlite -lsqlite3 || return 1
	LD_LIBRARY_PATH="$libdir" "$tmp/sq" "$tmp/sq.db" || return 1
	if command -v sqlite3 >/dev/null 2>&1; then
		[[ $(sqlite3 -cmd ".load $libdir/liblpc_sqlite" -cmd ".open file:$tmp/sq.db?vfs=lpc" \
			:memory: 'SELECT a FROM t') == 42 ]] || { echo "the shell did not load it"; return 1; }
		echo "sqlite3 shell: .load $libdir/liblpc_sqlite: ok"
	fi
}

if [[ ! -f $build/CMakeCache.txt ]]; then
	echo "check-install: $build is not a build directory" >&2
	echo "install: 0 passed, 1 failed"
	exit 1
fi
libdir=""
check "cmake --install $(basename "$build") --prefix TMP" step_install
if [[ -n $libdir ]]; then
	check "installed liblpc.so exports exactly src/lpc.map" step_exports
	check "lpc.pc valid; lpc.h compiles as C11 and C++" step_header
	check "pkg-config --cflags --libs lpc: shared program runs" step_shared
	check "pkg-config --static with liblpc.a: static program runs" step_static
	check "find_package(lpc) + lpc::lpc: program runs" step_cmake
	if command -v man >/dev/null 2>&1; then
		check "MANPATH=PREFIX/share/man man -w: every exported function" step_man
	fi
	if [[ -e $build/src/sqlite/liblpc_sqlite.so ]]; then
		check "liblpc_sqlite: header, a linked program, the sqlite3 shell" step_sqlite
	fi
	if [[ -e $prefix/bin/lpcbench ]]; then
		check "installed bin/lpcbench runs" step_lpcbench
	fi
fi
echo "install: $pass passed, $fail failed"
((fail == 0))
