#!/bin/sh
# Builds each probe three times: NAME (00a9888, worktree $NEW, -DWS -DV3),
# NAME.rev2 (42328fc, $REV2, -DWS) and NAME.base (3946151, $BASE).
set -e
NEW=${NEW:-/tmp/rev3}
REV2=${REV2:-/tmp/rev2}
BASE=${BASE:-/tmp/base}
cd "$(dirname "$0")"
mkdir -p bin
LIBS="-lurcu-memb -lurcu-common -lurcu-cds -luring -lm"
for p in "$@"; do
	cc -O2 -pthread -D_GNU_SOURCE -D_LGPL_SOURCE -DWS -DV3 -I$NEW/include -I$NEW/src $p.c $NEW/build-release/src/liblpc.a $LIBS -o bin/$p
	cc -O2 -pthread -D_GNU_SOURCE -D_LGPL_SOURCE -DWS -I$REV2/include -I$REV2/src $p.c $REV2/build-release/src/liblpc.a $LIBS -o bin/$p.rev2
	cc -O2 -pthread -D_GNU_SOURCE -D_LGPL_SOURCE -I$BASE/include -I$BASE/src $p.c $BASE/build-release/src/liblpc.a $LIBS -o bin/$p.base
done
