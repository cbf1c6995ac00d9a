#!/bin/bash
# run_self_fed.sh - runs tests/unit/test_drop_behind N times (nice -n 10),
# counts the runs that fail and prints what failed, and the three
# t_self_fed lines' "after page 512" refill counts (drop / drop off / used
# twice) as count-of-runs tables.
# Usage: run_self_fed.sh BIN N     Exit: 0 when every run passed, else 1.
bin=${1:?usage: run_self_fed.sh BIN N}
n=${2:-100}
fails=0
log=$(mktemp)
acc=$(mktemp)
for i in $(seq 1 "$n"); do
	if ! nice -n 10 timeout 120 "$bin" >"$log" 2>&1; then
		fails=$((fails + 1))
		grep -h "^FAIL" "$log" | sed 's/^/  run '"$i"': /'
	fi
	grep -E "^  (drop|drop off|used twice): " "$log" |
		sed -E 's/^  ([a-z ]+): ([0-9]+) dropped.* ([0-9]+) after page.*/\1 | dropped \2 | after \3/' >>"$acc"
done
for c in "drop" "drop off" "used twice"; do
	echo "t_self_fed($c): refills after page 512 (runs: value)"
	grep "^$c |" "$acc" | sed 's/.*after //' | sort -n | uniq -c | awk '{printf "  %s:%s", $1, $2} END {print ""}'
	echo "t_self_fed($c): pages dropped, min / max"
	grep "^$c |" "$acc" | sed 's/.*dropped \([0-9]*\).*/\1/' | sort -n | sed -n '1p;$p' | tr '\n' ' '; echo
done
echo "$fails of $n runs failed"
rm -f "$log" "$acc"
[ "$fails" -eq 0 ]
