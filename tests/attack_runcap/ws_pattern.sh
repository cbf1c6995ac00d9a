#!/bin/sh
# Old (82ef274, /tmp/w82) against new (main) library, same binary, three
# seeds; the probe links -llpc and the library is picked by LD_LIBRARY_PATH.
# cc -O2 -I include -o /tmp/ws_pattern tests/attack_runcap/ws_pattern.c -L build-release/src -llpc
OLD=/tmp/w82/build-release/src NEW=/work/main/build-release/src
for w in 4 3; do
  for lay in "1 16384" "8 16384" "1 2048" "files 2048"; do
    set -- $lay
    for seed in 1 2 3; do
      for lib in OLD NEW; do
        eval d=\$$lib
        printf "%s workload %s seed %s: " $lib $w $seed
        LD_LIBRARY_PATH=$d /tmp/ws_pattern $1 $w $2 $seed
      done
    done
  done
done
