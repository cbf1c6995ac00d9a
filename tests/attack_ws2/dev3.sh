#!/bin/sh
# Device-machine check 3 (16 cores), under a minute: streams with no hot set
# to speak of (1 % of the cache), 256 MiB, default readahead: the streams'
# own promoted pages fill the active side up to the target.
cd "$(dirname "$0")"
D=/tmp/atkws2; mkdir -p $D
for r in 1 2; do for K in 2 4; do for v in dev_at_streams.base dev_at_streams; do
	echo "--- $v K=$K hot 1% run $r"; timeout 30 ./bin/$v $D/st $K 256 1 3 | tail -2; rm -f $D/st
done; done; done
rm -rf $D
