#!/bin/bash
# Applies mutant_plateau.patch in a worktree of 7d5071c (arg 1, default
# /tmp/rev39b), rebuilds test_readahead and liblpc.a, runs the test and the
# window probe at 64..128 MiB, then restores cache.c and rebuilds.
set -e
T=${1:-/tmp/rev39b}
D=$(cd "$(dirname "$0")" && pwd)
cd "$T"
patch -p1 --no-backup-if-mismatch < "$D/mutant_plateau.patch"
trap 'git -C "$T" checkout src/cache/cache.c; cmake --build "$T/build-release" -j2 >/dev/null' EXIT
cmake --build build-release --target test_readahead lpc_static -j2 >/dev/null
./build-release/tests/unit/test_readahead | grep -E "t_default_window|passed"
cc -O1 -std=gnu11 -I"$T/src" -I"$T/include" "$D/ra_window.c" build-release/src/liblpc.a \
	$(pkg-config --libs liburcu-memb liburcu-cds liburing) -pthread -o /tmp/ra_window_mutant
for mb in 64 65 96 127 128; do /tmp/ra_window_mutant $((mb << 20)) 4096 | cut -c1-105; done
