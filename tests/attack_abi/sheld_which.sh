#!/bin/sh
# SPDX-License-Identifier: MIT
# sheld_which.sh - branch sheld's second STREAM-HELD death test: does it
# pass every time, and does the check that kills the child come from
# stream_flush's loop after the run (stream.c: "page N of its run ... is no
# entry's") rather than stream_check_held ("entries hold a page")?  Runs
# the asan build's test_debug_death STREAM-HELD N times (default 20).
# Exit 1 if any run fails or the second case is reported by another check.
set -u
b=${LPC_SHELD_BUILD:-/work/wt-sheld/build-asan}
n=${1:-20}
bad=0
i=0
while [ "$i" -lt "$n" ]; do
	out=$("$b/tests/debug/test_debug_death" STREAM-HELD 2>&1)
	rc=$?
	second=$(printf '%s\n' "$out" | grep '^ok STREAM-HELD' | sed -n 2p)
	case "$second" in
	*"is no entry's"*) ;;
	*) bad=1; printf 'run %d: rc %d, second case: %s\n%s\n' "$i" "$rc" "$second" "$out" ;;
	esac
	[ "$rc" -eq 0 ] || bad=1
	i=$((i + 1))
done
printf '%s\n' "$out" | grep '^ok STREAM-HELD'
echo "$n runs: $([ $bad = 0 ] && echo 'all passed, the second fired by the loop after the run' || echo FAILED)"
exit $bad
