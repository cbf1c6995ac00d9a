#!/bin/sh
# Device-machine check (16 cores), about 3 minutes: F1 (ra_loop) and F3
# (streams) with real parallelism, and the miss path's cost at 16 threads.
cd "$(dirname "$0")"
D=/tmp/atkws2; mkdir -p $D
nproc
for v in dev_ra_loop.base dev_ra_loop; do timeout 60 ./bin/$v $D/rl 30 85 256 1 pread 25 | sed -n '1p;3,6p;$p'; done
for K in 4 8; do for r in 1 2; do for v in dev_at_streams.base dev_at_streams; do
	echo "--- $v K=$K run $r"; timeout 30 ./bin/$v $D/st $K 256 85 3 | tail -1; rm -f $D/st
done; done; done
for x in 2 0.5; do for r in 1 2 3 4; do
	./bin/dev_missbench.base $D/m $x 16 1
	./bin/dev_missbench $D/m $x 16 1
done; done
rm -rf $D
