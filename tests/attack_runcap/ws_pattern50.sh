#!/bin/sh
# ws_pattern's workload 4 with a loop over 50 % of the cache (refault
# distances nearer the cache's size), old against new library.
OLD=/tmp/w82/build-release/src NEW=/work/main/build-release/src
for lay in "1 16384" "8 16384" "files 2048"; do
  set -- $lay
  for seed in 1 2; do
    for lib in OLD NEW; do
      eval d=\$$lib
      printf '%s workload 4 seed %s: ' $lib $seed
      LD_LIBRARY_PATH=$d /tmp/ws_pattern $1 4 $2 $seed 50
    done
  done
done
