#!/usr/bin/env bash
# Runs test_drop_behind RUNS times (default 100) beside two CPU hogs (the
# commit's story: the unlock's wake-up takes the readahead thread's CPU) and
# counts failures, printing each failing line (t_scan's far-behind count,
# t_self_fed's refills).  Usage, from the repo root after lpc_build release:
#   nice -n 10 bash tests/attack_frames/drop_behind_loop.sh [RUNS] [build-dir]
set -u
runs=${1:-100} b=${2:-build-release}
hogs=()
for _ in 1 2; do (while :; do :; done) & hogs+=($!); done
trap 'for p in "${hogs[@]}"; do kill "$p"; done' EXIT
fail=0
for ((i = 0; i < runs; i++)); do
	if ! out=$("$b/tests/unit/test_drop_behind" 2>&1); then
		fail=$((fail + 1))
		grep -iE "fail|violated|far behind|refill" <<<"$out" | head -3
	fi
done
echo "test_drop_behind: $fail of $runs runs failed"
