#!/bin/sh
# Reproduces every finding of README.md; outputs in out/.  Needs two
# worktrees built with lpc_build release: $NEW at ee19aa5 (the 90 % target,
# reverted since) and $OLD at d5f434a (the 50 % target), e.g.
#   git worktree add --detach /tmp/new ee19aa5; git worktree add --detach /tmp/old d5f434a
#   (cd /tmp/new && . scripts/lib.sh && lpc_build release); the same in /tmp/old
# About 2 minutes.  DIR: where the test files go [/var/tmp/atk].
set -e
cd "$(dirname "$0")"
NEW=${NEW:-/tmp/new}
OLD=${OLD:-/tmp/old}
export NEW OLD
D=${DIR:-/var/tmp/atk}
mkdir -p out "$D"
./build.sh stale_loop shift streams tiny
cc -O2 -pthread -I$NEW/include -I$NEW/src shift_diag.c -L$NEW/build-release/src -llpc -Wl,-rpath,$NEW/build-release/src -o shift_diag
new() { echo "--- new (70f1298: 90 % target) $*"; "./$@"; }
old() { p=$1; shift; echo "--- old (d5f434a: 50 % target) $p $*"; "./$p.old" "$@"; }
{
	for b in 20 30 40; do new stale_loop "$D/f1" $b; old stale_loop "$D/f1" $b; done
	new stale_loop "$D/f1" 30 85 256 1; old stale_loop "$D/f1" 30 85 256 1
	new stale_loop "$D/f1" 30 85 64 1;  old stale_loop "$D/f1" 30 85 64 1
} > out/stale_loop.txt 2>&1
{
	for s in 50 70 85; do new shift "$D/f2" $s; old shift "$D/f2" $s; done
	new shift "$D/f3" 70 256 1; old shift "$D/f3" 70 256 1
	echo "=== MIX=1: A read first interleaved with cold pages (A's frames scattered)"
	export MIX=1
	new shift "$D/f2" 70; old shift "$D/f2" 70
	unset MIX
	echo "--- new, census (internal headers)"; ./shift_diag "$D/f2" 70
} > out/shift.txt 2>&1
{
	for r in 1 2; do for k in 1 2 4; do new streams "$D/f4" $k 256 85 3; old streams "$D/f4" $k 256 85 3; done; done
	if [ -f "$D/real" ]; then # 2 GiB of written data: dd if=/dev/zero of=$D/real bs=4M count=512 conv=fsync
		for r in 1 2; do
			REGION=2 new streams "$D/real" 2 256 85 4 sync; REGION=2 old streams "$D/real" 2 256 85 4 sync
			REGION=1 new streams "$D/real" 4 256 85 4 sync; REGION=1 old streams "$D/real" 4 256 85 4 sync
		done
	fi
} > out/streams.txt 2>&1
{
	for r in 1 2 3; do RA_OFF=1 new tiny "$D/f5" 0.3; RA_OFF=1 old tiny "$D/f5" 0.3; done
	new tiny "$D/f5" 0.3; old tiny "$D/f5" 0.3
} > out/tiny.txt 2>&1
echo done
