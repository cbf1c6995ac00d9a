#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-deb.sh [--keep] - builds lpc's Debian packages (debian/) and checks
# them as a user of Debian 12 gets them:
#   1. scripts/deps.sh --deb installs the build dependencies (debhelper,
#      dpkg-dev, lintian and the library's own);
#   2. a copy of the tree (tracked and untracked files, no build folder) is
#      built with `dpkg-buildpackage -us -uc -b` and DEB_BUILD_OPTIONS=
#      "nocheck parallel=N" (once; no test suite inside the package build),
#      and each package's files are listed (dpkg -c);
#   3. lintian finds no error in them (its warnings are printed);
#   4. dpkg-gensymbols found liblpc.so.0's symbols as debian/liblpc0.symbols
#      says (the build fails otherwise: dpkg-gensymbols -c4 in debian/rules);
#   5. `dpkg -i` installs liblpc0, liblpc-dev, liblpc-sqlite0, liblpc-rbd0 and lpc-tools
#      INTO THIS MACHINE (meant for CI's throwaway machine; on a machine of
#      your own they are purged again at the end unless --keep is given, or
#      were installed before);
#   6. examples/read_file.c, compiled with `pkg-config --cflags --libs lpc`
#      against the installed packages (and again with README.md's static
#      line, against the packaged liblpc.a), reads a file and prints its size
#      and Adler-32 as Python's zlib computes them;
#   7. the stock sqlite3 shell loads the packaged extension (`.load
#      liblpc_sqlite.so.0`), writes a table through the VFS "lpc" and reads
#      it back;
#   8. the installed lpcbench runs (`lpcbench --help`).
# Needs root (or sudo) for apt-get and dpkg.  Ends with "deb: N passed, N
# failed" and exits non-zero on any failure.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
keep=0
[[ ${1:-} == --keep ]] && keep=1
tmp=$(mktemp -d)
pass=0 fail=0 installed=() t0=$SECONDS
as_root=()
[[ $(id -u) -eq 0 ]] || as_root=(sudo)
PKGS=(liblpc0 liblpc-dev liblpc-sqlite0 liblpc-rbd0 lpc-tools)

cleanup() {
	if ((${#installed[@]} && !keep)); then
		echo "--- dpkg --purge ${installed[*]} (installed by this run)"
		"${as_root[@]}" dpkg --purge "${installed[@]}" >/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

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

finish() {
	echo "deb: $pass passed, $fail failed ($((SECONDS - t0)) s)"
	exit $((fail != 0))
}

bash "$here/deps.sh" --deb || { echo "check-deb: installing dependencies failed"; fail=1; finish; }

step_build() {
	local ver src start
	ver=$(cd "$root" && dpkg-parsechangelog -S Version) || return 1
	src="$tmp/lpc-${ver%-*}"
	mkdir -p "$src"
	# What the tree has, committed or not: git's list when it is a clone.
	if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
		(cd "$root" && git ls-files -z --cached --others --exclude-standard |
			while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
			tar -c --null -T - -f -) | tar -x -C "$src" -f - || return 1
	else
		tar -c -C "$root" --exclude='./build*' --exclude=./.git -f - . |
			tar -x -C "$src" -f - || return 1
	fi
	start=$SECONDS
	(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
		dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1 || {
		tail -n 60 "$tmp/build.log"
		return 1
	}
	echo "dpkg-buildpackage: $((SECONDS - start)) s"
	grep -E "^dpkg-gensymbols|^dpkg-shlibdeps: warning" "$tmp/build.log" || true
	for p in "${PKGS[@]}"; do
		compgen -G "$tmp/${p}_*.deb" >/dev/null || { echo "no ${p}_*.deb"; return 1; }
	done
	for d in "$tmp"/*.deb; do
		echo "dpkg -c $(basename "$d"):"
		dpkg -c "$d" | awk '{ $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print "  " $0 }'
	done
}

step_lintian() {
	local out
	# --allow-root: CI runs as root (the packages were built by dpkg-buildpackage
	# as the same user; lintian only reads them).
	out=$(lintian --fail-on error --tag-display-limit 0 --allow-root "$tmp"/*.changes 2>&1)
	local rc=$?
	echo "${out:-lintian: no tags}"
	((rc == 0))
}

step_install() {
	local p debs=()
	for p in "${PKGS[@]}"; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
			installed+=("$p")
		fi
		debs+=("$(compgen -G "$tmp/${p}_*.deb")")
	done
	"${as_root[@]}" dpkg -i "${debs[@]}" || return 1
	for p in "${PKGS[@]}"; do
		dpkg-query -W -f='${Package} ${Version} ${Status}\n' "$p" | grep "install ok installed" ||
			return 1
	done
}

step_example() {
	local data="$tmp/read_file.data" want so
	# 12345 bytes: three 4 KiB pages and 57 bytes of a fourth (as
	# examples/test_read_file.cmake).
	python3 - "$data" <<'PY' || return 1
import sys
text = ("lpc reads this file through its page cache.\n" * 300)[:12345]
open(sys.argv[1], "w").write(text)
PY
	want=$(python3 -c 'import sys, zlib; d = open(sys.argv[1], "rb").read(); print("%d bytes, adler32 %08x" % (len(d), zlib.adler32(d)))' "$data")
	# shellcheck disable=SC2046 # pkg-config prints a list of words
	cc -Wall -Wextra -Werror -o "$tmp/read_file" "$root/examples/read_file.c" \
	   $(pkg-config --cflags --libs lpc) || return 1
	# The packaged library: the file liblpc0 installed (/lib is /usr/lib).
	so=$(ldd "$tmp/read_file" | sed -n 's/.*liblpc\.so\.0 => \([^ ]*\) .*/\1/p')
	[[ -n $so ]] && dpkg -S "$(readlink -f "$so")" | grep -q '^liblpc0:' ||
		{ echo "read_file does not run with the packaged liblpc.so.0 (ldd: ${so:-none})"; return 1; }
	run_read_file "$tmp/read_file" "$data" "$want" || return 1
	# The README's static line, against the packaged liblpc.a.
	# shellcheck disable=SC2046
	cc -Wall -Wextra -Werror -o "$tmp/read_file_static" "$root/examples/read_file.c" \
	   $(pkg-config --cflags lpc) "$(pkg-config --variable=libdir lpc)/liblpc.a" \
	   $(pkg-config --libs liburcu-memb liburcu-cds liburing) -pthread || return 1
	if ldd "$tmp/read_file_static" | grep -q liblpc; then
		echo "read_file_static links liblpc.so"
		return 1
	fi
	run_read_file "$tmp/read_file_static" "$data" "$want"
}

# run_read_file PROG DATA WANT: PROG's first line must be WANT, its second
# count hits and at least one miss.
run_read_file() {
	local got
	got=$("$1" "$2") || { echo "$1 failed: $got"; return 1; }
	echo "$(basename "$1"): $got"
	[[ $(head -n 1 <<<"$got") == "$3" ]] || { echo "expected: $3"; return 1; }
	grep -qE '^hits [0-9]+ misses [1-9][0-9]*$' <<<"$got"
}

step_sqlite() {
	local db="$tmp/t.db" out
	out=$(sqlite3 -cmd '.load liblpc_sqlite.so.0' -cmd ".open file:$db?vfs=lpc" :memory: \
		'CREATE TABLE t(a); INSERT INTO t VALUES (6 * 7); SELECT a FROM t;' 2>&1)
	echo "sqlite3 .load liblpc_sqlite.so.0, vfs=lpc: $out"
	[[ $out == 42 ]] || return 1
	# The file is a database that SQLite's own unix VFS reads back.
	out=$(sqlite3 "$db" 'SELECT a FROM t; PRAGMA integrity_check;' 2>&1)
	[[ $out == $'42\nok' ]] || { echo "read back through unix: $out"; return 1; }
}

step_tools() {
	lpcbench --help >"$tmp/help.txt" 2>&1 || { cat "$tmp/help.txt"; return 1; }
	head -n 3 "$tmp/help.txt"
	[[ $(command -v lpcbench) == /usr/bin/lpcbench ]]
}

check "dpkg-buildpackage -us -uc -b (nocheck, parallel)" step_build
if ((fail)); then finish; fi
check "lintian: no error" step_lintian
before=$fail
check "dpkg -i ${PKGS[*]}" step_install
if ((fail == before)); then
	check "examples/read_file.c with pkg-config lpc against the packages (shared, static)" step_example
	check "sqlite3 shell loads the packaged extension" step_sqlite
	check "the packaged lpcbench runs" step_tools
fi
finish
