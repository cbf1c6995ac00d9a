#!/bin/sh
# scanres.c: hot sets of 50-85 % of the cache beside a scan 4x the cache, base and new interleaved.
cd "$(dirname "$0")"
D=${D:-/var/tmp/atkws2}
for mib in 4 64 256; do for h in 0.5 0.6 0.7 0.85; do for dist in zipf uni; do
	for v in scanres.base scanres; do
		./bin/$v $D $mib $h $dist 2 1 | sed "s/^SUMMARY //; s/(3946151, fixed 50 %)//; s/(42328fc, moving target)//"
	done
done; done; done
for h in 0.6 0.85; do for v in scanres.base scanres; do ./bin/$v $D 64 $h uni 2 0 | sed "s/^SUMMARY //; s/(3946151, fixed 50 %)//; s/(42328fc, moving target)//"; done; done
