#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check_version.sh --project V --root SRC --build BUILD --prog PROG --lib LIB
#                  [--sqlite LIBSQLITE] [--selftest]
#
# Fails unless every place that states lpc's version states V (CMake's
# project(VERSION), passed by CMake):
#   lpc.h        LPC_VERSION_MAJOR.MINOR.PATCH and LPC_VERSION_STRING, as a
#                program compiled against it sees them (PROG);
#   lpc_version() of the liblpc.so that PROG runs with;
#   liblpc.so    the real file name (liblpc.so.V);
#   man pages    every .TH header of man/man1, man/man3 and man/man7 ("lpc V");
#   lpc.pc       `pkg-config --modversion lpc` after `cmake --install` into a
#                temporary prefix;
#   CMake        in a CMake project against that prefix, find_package(lpc
#                MAJOR.MINOR) finds lpc_VERSION V, and find_package(lpc
#                MAJOR.(MINOR+1)) finds nothing;
#   liblpc_sqlite its real file name (liblpc_sqlite.so.V), when built;
#   NEWS.md      the first "## " heading;
#   debian/changelog  the upstream version of its top entry (0.2.0 of 0.2.0-1).
# --selftest: the same checks told that the project is 9.9.9, which every one
# of them must then report as a disagreement (the checks can fail).
# Prints one line per check ("ok" or "MISMATCH"); exits 1 on any mismatch.
set -uo pipefail

project='' root='' build='' prog='' lib='' sqlite='' selftest=0
while (($#)); do
	case $1 in
	--project) project=$2; shift 2 ;;
	--root) root=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--prog) prog=$2; shift 2 ;;
	--lib) lib=$2; shift 2 ;;
	--sqlite) sqlite=$2; shift 2 ;;
	--selftest) selftest=1; shift ;;
	*) echo "check_version.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
[[ -n $project && -n $root && -n $build && -n $prog && -n $lib ]] || {
	echo "check_version.sh: --project, --root, --build, --prog and --lib are needed" >&2
	exit 2
}
real_project=$project
((selftest)) && project=9.9.9
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
checks=0 mismatches=0

# same WHAT VALUE: VALUE must be $project.
same() {
	checks=$((checks + 1))
	if [[ $2 == "$project" ]]; then
		echo "ok: $1 $2"
	else
		echo "MISMATCH: $1 says '$2', project(VERSION) $project"
		mismatches=$((mismatches + 1))
	fi
}

read -r _ macros string _ runtime < <("$prog") || { echo "FAILED: $prog did not run"; exit 1; }
same "lpc.h LPC_VERSION_MAJOR.MINOR.PATCH" "$macros"
same "lpc.h LPC_VERSION_STRING" "$string"
same "lpc_version()" "$runtime"
real=$(basename "$(readlink -f "$lib")")
same "liblpc.so's file" "${real#liblpc.so.}"

man_bad=() man_n=0
for m in "$root"/man/man1/*.1 "$root"/man/man3/*.3 "$root"/man/man7/*.7; do
	th=$(sed -n 's/^\.TH [^"]*"lpc \([^"]*\)".*/\1/p' "$m" | head -n 1)
	[[ -n $th ]] || continue # a .so link to another page
	man_n=$((man_n + 1))
	[[ $th == "$project" ]] || man_bad+=("$(basename "$m"): $th")
done
if ((${#man_bad[@]})); then
	same "man page headers (${#man_bad[@]} of $man_n, first: ${man_bad[0]})" "${man_bad[0]##*: }"
else
	same "man page headers ($man_n)" "$project"
fi

news=$(sed -n 's/^## *\([0-9][0-9.]*\).*/\1/p' "$root/NEWS.md" | head -n 1)
same "NEWS.md's top entry" "${news:-none}"

# debian/changelog's top entry: the upstream part of "lpc (0.2.0-1) ...".
deb=$(sed -n '1s/^lpc (\([^)-]*\)\(-[^)]*\)\?).*/\1/p' "$root/debian/changelog")
same "debian/changelog's top entry" "${deb:-none}"

if [[ -n $sqlite ]]; then
	real=$(basename "$(readlink -f "$sqlite")")
	same "liblpc_sqlite.so's file" "${real#liblpc_sqlite.so.}"
fi

if ! cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1; then
	cat "$tmp/install.log"
	echo "FAILED: cmake --install $build"
	exit 1
fi
pcdir=$(dirname "$(find "$tmp/prefix" -name lpc.pc | head -n 1)")
pc=$(PKG_CONFIG_PATH=$pcdir pkg-config --modversion lpc 2>&1)
same "lpc.pc (pkg-config --modversion)" "$pc"

# find_package(lpc MAJOR.MINOR) must find this version, MAJOR.(MINOR+1) none.
IFS=. read -r maj min _ <<<"$project"
IFS=. read -r rmaj rmin _ <<<"$real_project"
mkdir -p "$tmp/cm"
cat >"$tmp/cm/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.25)
project(version_check LANGUAGES C)
find_package(lpc $maj.$((min + 1)) QUIET)
message(STATUS "next minor: lpc_FOUND=[\${lpc_FOUND}]")
unset(lpc_FOUND)
unset(lpc_DIR CACHE)
find_package(lpc $maj.$min QUIET)
message(STATUS "this minor: lpc_FOUND=[\${lpc_FOUND}] lpc_VERSION=[\${lpc_VERSION}]")
CM
cmake -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/cm.log" 2>&1 || {
	cat "$tmp/cm.log"
	echo "FAILED: the find_package project did not configure"
	exit 1
}
found=$(sed -n 's/.*this minor: lpc_FOUND=\[\([^]]*\)\] lpc_VERSION=\[\([^]]*\)\].*/\1 \2/p' "$tmp/cm.log")
next=$(sed -n 's/.*next minor: lpc_FOUND=\[\([^]]*\)\].*/\1/p' "$tmp/cm.log")
read -r f v <<<"$found"
if [[ $f == 1 ]]; then
	same "find_package(lpc $maj.$min) lpc_VERSION" "$v"
else
	same "find_package(lpc $maj.$min) (not found)" "none"
fi
checks=$((checks + 1))
if [[ $next == 1 || $next == TRUE ]]; then
	echo "MISMATCH: find_package(lpc $maj.$((min + 1))) found lpc $rmaj.$rmin"
	mismatches=$((mismatches + 1))
elif ((selftest)); then
	# 9.10 is not found either way: the check of the next minor is shown
	# able to fail by asking for this build's own minor instead.
	rm -rf "$tmp/cm/build"
	sed -i "s/find_package(lpc $maj.$((min + 1)) QUIET)/find_package(lpc $rmaj.$rmin QUIET)/" \
		"$tmp/cm/CMakeLists.txt"
	cmake -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/cm.log" 2>&1
	next=$(sed -n 's/.*next minor: lpc_FOUND=\[\([^]]*\)\].*/\1/p' "$tmp/cm.log")
	if [[ $next == 1 ]]; then
		echo "MISMATCH: find_package(lpc $rmaj.$rmin) asked as the next minor was found"
		mismatches=$((mismatches + 1))
	else
		echo "ok: find_package(lpc $rmaj.$rmin) asked as the next minor: not found"
	fi
else
	echo "ok: find_package(lpc $maj.$((min + 1))) finds nothing"
fi

echo "version: $checks checks, $mismatches mismatches"
if ((selftest)); then
	if ((mismatches == checks)); then
		echo "selftest: every check reported 9.9.9 as a mismatch"
		exit 0
	fi
	echo "selftest: FAILED: $((checks - mismatches)) checks did not see 9.9.9"
	exit 1
fi
((mismatches == 0))
