#!/bin/bash
# Sweep: hot set share x window, interleaved, null backend, scanner at
# HOTSCAN_MBPS (default 1000 MiB/s).  $1: library dir of the new tree.
NEW=${1:-/tmp/rev39b/build-release/src}
OLD=${2:-/tmp/rev39b_old/build-release/src}
export HOTSCAN_MBPS=${HOTSCAN_MBPS:-1000}
for rep in 1 2; do
for hot in ${HOTS:-70 76 80 85}; do
	LD_LIBRARY_PATH=$NEW ./hotscan ${CACHE:-256} $hot 0 ${NS:-1} ${SECS:-6} | sed 's/^/new-default   /'
	LD_LIBRARY_PATH=$NEW ./hotscan ${CACHE:-256} $hot 8192 ${NS:-1} ${SECS:-6} | sed 's/^/new-ra8192    /'
	LD_LIBRARY_PATH=$OLD ./hotscan ${CACHE:-256} $hot 0 ${NS:-1} ${SECS:-6} | sed 's/^/old-default   /'
done
done
