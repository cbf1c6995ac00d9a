#!/bin/sh
# Traces the block layer's accounting of the device under DIR (block_io_start
# / block_io_done: the interval the stat file's read ticks sum; block_rq_issue
# / block_rq_complete: the time at the driver) during one small lpcbench scan
# run, with statshim marking each stat file read; then inflight.py compares
# lpcbench's "in flight" estimate with the bytes really in flight.
# usage: trace_inflight.sh LPCBENCH DIR DISK_MAJ DISK_MIN OUTDIR [scan options]
# (root; DISK_*: the whole disk's numbers, which the block events carry)
set -e
B=$1 DIR=$2 MAJ=$3 MIN=$4 OUT=$5
shift 5
HERE=$(cd "$(dirname "$0")" && pwd)
I=/sys/kernel/tracing/instances/attack_devstat
mkdir -p "$OUT"
cc -shared -fPIC -O2 -o "$OUT/statshim.so" "$HERE/statshim.c" -ldl
mkdir "$I"
trap 'echo 0 > "$I/tracing_on"; rmdir "$I"' EXIT
echo 16384 > "$I/buffer_size_kb"
for e in block_io_start block_io_done block_rq_issue block_rq_complete; do
	echo "dev == $(( (MAJ << 20) | MIN ))" > "$I/events/block/$e/filter"
	echo 1 > "$I/events/block/$e/enable"
done
echo 1 > "$I/tracing_on"
DEVSTAT_MARKER="$I/trace_marker" LD_PRELOAD="$OUT/statshim.so" \
	nice -n 10 "$B" scan --dir "$DIR" --csv "$OUT/run.csv" "$@" > "$OUT/run.out" 2> "$OUT/run.err"
echo 0 > "$I/tracing_on"
cat "$I/trace" > "$OUT/trace.txt"
python3 "$HERE/inflight.py" "$OUT/trace.txt" "$OUT/run.csv"
