#!/bin/sh
# phase.c over earlier phases x caches x readahead, base and new interleaved.
cd "$(dirname "$0")"
F=${F:-/var/tmp/atkws2/ph}
for args in "64 1 none 0.45 once" "64 1 loopra 0.45 once" "64 1 hotloop 0.45 once" "64 0 hotloop 0.45 once" \
	"64 0 uniform4 0.45 once" "64 0 hotloop 0.45 loop" "4 0 hotloop 0.45 once" "4 1 none 0.45 once" \
	"256 1 none 0.7 once" "256 1 hotloop 0.7 once" "256 0 hotloop 0.7 once" "256 1 uniform4 0.7 once"; do
	for v in phase.base phase; do
		./bin/$v $F $args | grep SUMMARY | sed "s/^SUMMARY //; s/(3946151, fixed 50 %)//; s/(42328fc, moving target)//"
	done
done
