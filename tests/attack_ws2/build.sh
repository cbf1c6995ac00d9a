#!/bin/sh
# Builds each probe twice: NAME (the change, 42328fc, worktree $NEW, -DWS)
# and NAME.base (3946151, the fixed 50 % target, worktree $BASE).
# Probes link the static library and use internal headers (cache/cache.h)
# to read the active target.
set -e
NEW=${NEW:-/tmp/rev2}
BASE=${BASE:-/tmp/base}
cd "$(dirname "$0")"
mkdir -p bin
LIBS="-lurcu-memb -lurcu-common -lurcu-cds -luring -lm"
for p in "$@"; do
	cc -O2 -pthread -D_GNU_SOURCE -D_LGPL_SOURCE -DWS -I$NEW/include -I$NEW/src $p.c $NEW/build-release/src/liblpc.a $LIBS -o bin/$p
	cc -O2 -pthread -D_GNU_SOURCE -D_LGPL_SOURCE -I$BASE/include -I$BASE/src $p.c $BASE/build-release/src/liblpc.a $LIBS -o bin/$p.base
done
