#!/bin/sh
# Device-machine check (16 cores): miss throughput base vs new with 1-16
# threads (shared atomics on refault), and the TSan stress with 12 readers.
cd "$(dirname "$0")"
F=/tmp/atkws_m; D=/tmp
nproc
for x in 2 8 0.5; do
  for t in 1 4 8 16; do
    for r in 1 2 3; do
      ./bin/dev_missbench.base $F $x $t 1
      ./bin/dev_missbench $F $x $t 1
    done
  done
done
W=""; [ "$(cat /proc/sys/vm/mmap_rnd_bits)" -gt 28 ] && W="setarch -R"
TSAN_OPTIONS="halt_on_error=1:suppressions=./tsan.supp" timeout 120 $W ./bin/dev_stress.tsan $D 40 12; echo "tsan stress rc=$?"
