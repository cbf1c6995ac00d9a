#!/bin/bash
# run_self_fed.sh - runs tests/unit/test_drop_behind N times and counts the
# runs that fail, with what failed and t_self_fed's refill counts.
# Usage: run_self_fed.sh BIN N       (environment passed through: e.g.
#        LPC_YIELD=all for an LPC_DEBUG build's yield injection)
# Exit: 0 when every run passed, 1 when any failed.
bin=${1:?usage: run_self_fed.sh BIN N}
n=${2:-100}
fails=0
log=$(mktemp)
after=$(mktemp)
for i in $(seq 1 "$n"); do
	if ! nice -n 10 timeout 120 "$bin" >"$log" 2>&1; then
		fails=$((fails + 1))
		grep -h "^FAIL" "$log" | sed 's/ (seed [0-9]*)//; s/^/  /'
	fi
	grep -o "drop on: .*after page 512" "$log" | sed 's/.* \([0-9]*\) after page 512/\1/' >>"$after"
done
echo "t_self_fed(true): refills after page 512 (count of runs):"
sort -n "$after" | uniq -c | sed 's/^/  /'
echo "$fails of $n runs failed"
rm -f "$log" "$after"
[ "$fails" -eq 0 ]
