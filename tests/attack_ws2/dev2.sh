#!/bin/sh
# Device-machine check 2 (16 cores), about 1 minute: F3 (streams beside an
# idle hot set, 256 MiB, default readahead), 3 rounds of K = 2 and 4.
cd "$(dirname "$0")"
D=/tmp/atkws2; mkdir -p $D
for r in 1 2 3; do for K in 2 4; do for v in dev_at_streams.base dev_at_streams; do
	echo "--- $v K=$K run $r"; timeout 30 ./bin/$v $D/st $K 256 85 3 | tail -2; rm -f $D/st
done; done; done
rm -rf $D
