#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# shell.sh LIB SCRIPT - the stock sqlite3 shell loads liblpc_sqlite (LIB)
# and runs SCRIPT on a database through the VFS "lpc", then on another
# through "unix"; the outputs must be byte-identical, the shell must name
# the VFS "lpc", and the two files (dumped through unix) must be equal.
# Exits 0 pass, 1 fail, 77 skip (no sqlite3 shell).
set -uo pipefail
lib=${1%.so}
script=$2
command -v sqlite3 >/dev/null || { echo "SKIP: no sqlite3 shell (Debian: sqlite3)"; exit 77; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail=0

run() { # VFS OUT
	sqlite3 -batch -bail -cmd ".load $lib" -cmd ".open file:$d/$1.db?vfs=$1" :memory: \
		<"$script" >"$d/$2" 2>&1
}
run lpc out.lpc || { echo "FAIL: the script through lpc exited $?"; fail=1; }
run unix out.unix || { echo "FAIL: the script through unix exited $?"; fail=1; }
if ! cmp -s "$d/out.lpc" "$d/out.unix"; then
	echo "FAIL: the outputs differ (< lpc, > unix):"
	diff "$d/out.lpc" "$d/out.unix" | head -n 20
	fail=1
fi
echo "output: $(wc -l <"$d/out.lpc") lines"
vfs=$(sqlite3 -cmd ".load $lib" -cmd ".open file:$d/lpc.db?vfs=lpc" :memory: .vfsname)
[[ $vfs == lpc ]] || { echo "FAIL: .vfsname says '$vfs', not lpc"; fail=1; }
sqlite3 "$d/lpc.db" .dump >"$d/dump.lpc" && sqlite3 "$d/unix.db" .dump >"$d/dump.unix"
if ! cmp -s "$d/dump.lpc" "$d/dump.unix"; then
	echo "FAIL: the files differ when dumped through unix"
	fail=1
fi
# LPC_SQLITE_DEFAULT=1: a plain .open goes through lpc.
vfs=$(LPC_SQLITE_DEFAULT=1 sqlite3 -cmd ".load $lib" -cmd ".open $d/lpc.db" :memory: .vfsname)
[[ $vfs == lpc ]] || { echo "FAIL: with LPC_SQLITE_DEFAULT=1 .vfsname says '$vfs'"; fail=1; }
((fail)) && exit 1
echo "PASS: sqlite3 shell, byte-identical output through lpc and unix"
