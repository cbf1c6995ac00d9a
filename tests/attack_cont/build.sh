#!/bin/sh
# Builds each probe twice: bin/NAME against 411b57d (worktree $NEW, the
# change) and bin/NAME.before against 00a9888 ($OLD, its parent).
# Only liblpc.a of each worktree is needed (cmake --build ... --target lpc_static).
set -e
NEW=${NEW:-/tmp/rev4}
OLD=${OLD:-/tmp/rev3}
cd "$(dirname "$0")"
mkdir -p bin
LIBS="-lurcu-memb -lurcu-common -lurcu-cds -luring -lm"
for p in "$@"; do
	cc -O2 -pthread -D_GNU_SOURCE -D_LGPL_SOURCE -I$NEW/include -I$NEW/src $p.c $NEW/build-release/src/liblpc.a $LIBS -o bin/$p
	cc -O2 -pthread -D_GNU_SOURCE -D_LGPL_SOURCE -I$OLD/include -I$OLD/src $p.c $OLD/build-release/src/liblpc.a $LIBS -o bin/$p.before
done
