#!/bin/bash
# run_compare.sh - runs PROG (fed_nodrop or room_nodrop) with ARGS against
# the parent's library (out-parent/) and this one (out-release/), N pairs
# interleaved, and prints each run's line and the medians of the windows
# read and of the pages the scanner(s) read at the device themselves (not
# on the readahead threads: windows cut for want of a frame).
# Usage: run_compare.sh N PROG ARGS...
# Exit: 1 when this library's median of the scanners' own pages is more
# than twice the parent's and more than 512 pages above it (a window's
# worth), else 0.
n=${1:?usage: run_compare.sh N PROG ARGS...}
prog=${2:?}
shift 2
cd "$(dirname "$0")" || exit 2
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A own win
for i in $(seq 1 "$n"); do
	for v in parent release; do
		line=$(nice -n 10 timeout 120 "./out-$v/$prog" "$@" | head -1)
		echo "$v: $line"
		own[$v]+="$(sed 's/.*own reads *[0-9]* calls *\([0-9]*\) pages.*/\1/' <<<"$line") "
		win[$v]+="$(sed 's/.*windows *\([0-9]*\).*/\1/' <<<"$line") "
	done
done
for v in parent release; do
	mo=$(tr ' ' '\n' <<<"${own[$v]}" | grep . | med)
	mw=$(tr ' ' '\n' <<<"${win[$v]}" | grep . | med)
	echo "$v: median windows $mw, median pages the scanners read themselves $mo"
	eval "med_$v=$mo"
done
if [ "$med_release" -gt $((2 * med_parent)) ] && [ "$med_release" -gt $((med_parent + 512)) ]; then
	echo "WORSE: the scanners read $med_release pages at the device themselves against $med_parent"
	exit 1
fi
echo "within: $med_release against $med_parent"
exit 0
