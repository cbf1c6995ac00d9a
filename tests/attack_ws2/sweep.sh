#!/bin/sh
# policy.c over many workloads, base vs new; prints the SUMMARY lines.
cd "$(dirname "$0")"
F=${F:-/var/tmp/atkws2/f}
mkdir -p "$(dirname "$F")"
for args in "uniform 64 0 1.25" "uniform 64 0 2" "uniform 64 0 4" \
	"zipf 64 0 2 0.9" "zipf 64 0 4 1.0" "zipf 64 0 4 0.7" \
	"loop 64 0 1.1" "loop 64 0 1.5" "loop 64 1 1.1" \
	"hotscan 64 0 0.5 1.0" "hotscan 64 0 0.4 0.8" "hotscan 64 0 0.6 1.2" "hotscan 64 0 0.3 2.0" "hotscan 64 1 0.5 1.0" \
	"zipfscan 64 1 1.0" "zipfscan 256 1 1.0" \
	"shift 64 0 0.85 0.7" "shift 64 0 0.85 0.5" \
	"twofile 64 0 0.5 1.0" "reopen 64 0 0.8" "reopen 64 0 1.2" \
	"uniform 1 0 2" "zipf 1 0 4 1.0" "hotscan 1 0 0.5 1.0"; do
	for v in policy.base policy; do
		./bin/$v $F $args | grep SUMMARY | sed "s/^SUMMARY /[$args] /"
	done
done
