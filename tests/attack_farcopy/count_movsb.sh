#!/usr/bin/env bash
# count_movsb.sh - shows that the release library's pread_slow runs its
# inline `rep movsb` under out/pread_cmp: reads copy_erms and copy_vec at
# start-up and counts the hits of a breakpoint on the instruction before
# each `rep movsb` of pread_slow (found with objdump; a breakpoint on the
# `rep movsb` itself would trap once per byte).  Needs gdb; run `make` first.
# Usage: ./count_movsb.sh [library]   (default ../../build-release/src/liblpc.so)
set -euo pipefail
cd "$(dirname "$0")"
lib=${1:-../../build-release/src/liblpc.so}
start=$(nm "$lib" | awk '$3 == "pread_slow" { print $1 }')
offs=$(objdump -d --no-show-raw-insn "$lib" | awk '/<pread_slow>:/,/^$/' |
	awk '/rep movsb/ { print prev } { sub(":", "", $1); prev = $1 }')
[[ -n $start && -n $offs ]] || { echo "no rep movsb in pread_slow"; exit 1; }
script=$(mktemp)
trap 'rm -f "$script"' EXIT
{
	echo "set pagination off"
	echo "set confirm off"
	echo "break lpc_cache_create"
	echo "run 1 40 > /dev/null"
	echo 'printf "copy_erms=%d copy_vec=%d\n", *(unsigned char *)&copy_erms, *(unsigned char *)&copy_vec'
	echo "delete"
	for o in $offs; do
		echo "break *(pread_slow+$((0x$o - 0x$start)))"
	done
	n=2
	for o in $offs; do
		echo "ignore $n 100000000"
		n=$((n + 1))
	done
	echo "continue"
	echo "info breakpoints"
} >"$script"
LD_LIBRARY_PATH=$(dirname "$lib") gdb -q -batch -x "$script" ./out/pread_cmp 2>&1 |
	grep -E "copy_erms=|pread_slow\+|already hit|exited (normally|with)"
