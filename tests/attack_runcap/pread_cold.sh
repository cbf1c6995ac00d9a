#!/bin/sh
# pread_cold old against new, interleaved, 6 pairs per backend and call size;
# a 1 GiB file of real data written once.
OLD=/tmp/w82/build-release/src NEW=/work/main/build-release/src
F=/var/tmp/pread_cold.dat
[ -s $F ] || dd if=/dev/urandom of=$F bs=1M count=1024 status=none
for p in $(seq 1 ${PAIRS:-6}); do
  for be in ${BES:-uring sync}; do
    for call in ${CALLS:-8192 4096}; do
      if [ $((p % 2)) = 1 ]; then order="NEW OLD"; else order="OLD NEW"; fi
      for lib in $order; do
        eval d=\$$lib
        printf '%s pair %s: ' $lib $p
        LD_LIBRARY_PATH=$d /tmp/pread_cold $F $call $be
      done
    done
  done
done
rm -f $F
