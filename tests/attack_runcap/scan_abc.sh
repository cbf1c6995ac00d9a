#!/bin/sh
# As scan_ab.sh, three libraries: OLD (82ef274), WS (4b0b03f: the shadow
# key's commit alone, 4 MiB runs; a worktree built with
# cmake --build build-release --target lpc) and NEW (main: both commits),
# the order rotating each triple.
TAG=$1 N=$2; shift 2
OLD=/tmp/w82/build-release/src WS=/tmp/rev40/build-release/src NEW=/work/main/build-release/src
B=/work/main/build-release/tools/lpcbench/lpcbench
O=/tmp/rc3
mkdir -p $O
for p in $(seq 1 $N); do
  case $((p % 3)) in 1) order="OLD WS NEW";; 2) order="WS NEW OLD";; 0) order="NEW OLD WS";; esac
  for lib in $order; do
    eval d=\$$lib
    LD_LIBRARY_PATH=$d $B scan "$@" --csv $O/$TAG.$lib.$p.csv > $O/$TAG.$lib.$p.log 2>&1
    echo "$TAG triple $p $lib rc $?"
  done
done
