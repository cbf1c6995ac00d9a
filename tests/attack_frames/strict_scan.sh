#!/usr/bin/env bash
# Builds tests/unit/test_drop_behind.c with t_scan's far-behind check back to
# "none" (far == 0, before c473488) against the release library and runs it
# RUNS times (default 100) beside two CPU hogs: how often the new tolerance
# (far <= LPC_RA_PER_FILE) is what lets a run pass.
# Usage, from tests/attack_frames after lpc_build release:
#   nice -n 10 bash strict_scan.sh [RUNS]
set -u
runs=${1:-100}
mkdir -p out
sed 's/CHECK(far <= LPC_RA_PER_FILE,/CHECK(far == 0,/' ../unit/test_drop_behind.c > out/strict_drop_behind.c
grep -q 'CHECK(far == 0,' out/strict_drop_behind.c || { echo "pattern not found"; exit 2; }
cc -O2 -g -std=gnu11 -D_GNU_SOURCE -D_LGPL_SOURCE -I../../include -I../../src -I../unit \
	-o out/strict_drop_behind out/strict_drop_behind.c ../../build-release/src/liblpc.a \
	$(pkg-config --libs liburcu-memb liburcu-cds liburing) -lpthread -lm || exit 2
hogs=()
for _ in 1 2; do (while :; do :; done) & hogs+=($!); done
trap 'for p in "${hogs[@]}"; do kill "$p"; done' EXIT
fail=0
for ((i = 0; i < runs; i++)); do
	if ! o=$(out/strict_drop_behind 2>&1); then
		fail=$((fail + 1)); grep -iE "far behind|fail" <<<"$o" | head -2
	fi
done
echo "strict t_scan: $fail of $runs runs kept a page far behind"
