#!/bin/sh
# ws_pattern's workload 4 (loop over 30 % and 50 %) with the remedy of
# remedy.diff (a worktree of main with that diff, library built with
# cmake --build build-release --target lpc), beside old and new.
OLD=/tmp/w82/build-release/src NEW=/work/main/build-release/src FIX=/tmp/rev40fix/build-release/src
for b in 50 30; do
for lay in "1 16384" "8 16384" "files 2048"; do
  set -- $lay
  for seed in 1 2; do
    for lib in OLD NEW FIX; do
      eval d=\$$lib
      printf '%s workload 4 seed %s: ' $lib $seed
      LD_LIBRARY_PATH=$d /tmp/ws_pattern $1 4 $2 $seed $b
    done
  done
done
done
