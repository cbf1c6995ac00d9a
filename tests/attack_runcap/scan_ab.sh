#!/bin/sh
# lpcbench scan, the run cap before (82ef274's library: 4 MiB runs) and
# after (main's: 2 MiB), main's lpcbench binary, the library picked with
# LD_LIBRARY_PATH; one run of each per pair, the order alternating.
# usage: scan_ab.sh TAG PAIRS lpcbench-scan-options...
TAG=$1 PAIRS=$2; shift 2
OLD=/tmp/w82/build-release/src NEW=/work/main/build-release/src
B=/work/main/build-release/tools/lpcbench/lpcbench
O=/tmp/rc
mkdir -p $O
for p in $(seq 1 $PAIRS); do
  if [ $((p % 2)) = 1 ]; then order="NEW OLD"; else order="OLD NEW"; fi
  for lib in $order; do
    eval d=\$$lib
    LD_LIBRARY_PATH=$d $B scan "$@" --csv $O/$TAG.$lib.$p.csv > $O/$TAG.$lib.$p.log 2>&1
    echo "$TAG pair $p $lib rc $?"
  done
done
