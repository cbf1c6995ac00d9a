#!/bin/sh
# builds each probe twice: NAME (the 90 % target, ee19aa5, built in the
# worktree $NEW) and NAME.old (d5f434a, the 50 % target, in the worktree $OLD)
set -e
NEW=${NEW:-/tmp/new}
OLD=${OLD:-/tmp/old}
cd "$(dirname "$0")"
for p in "$@"; do
	cc -O2 -pthread -I$NEW/include $p.c -L$NEW/build-release/src -llpc -Wl,-rpath,$NEW/build-release/src -o $p
	cc -O2 -pthread -I$OLD/include $p.c -L$OLD/build-release/src -llpc -Wl,-rpath,$OLD/build-release/src -o $p.old
done
