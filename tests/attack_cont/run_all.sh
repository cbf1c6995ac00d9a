#!/bin/sh
# Builds the probes (build.sh: bin/NAME = 411b57d, bin/NAME.before = 00a9888)
# and runs them; outputs in out/.  Single-threaded except marks' scenario 2c
# and 4 (two short threads); each probe runs in about a second.
set -e
cd "$(dirname "$0")"
DIR=${DIR:-/var/tmp}
./build.sh marks evict
mkdir -p out
./bin/marks.before "$DIR" > out/marks.before.txt
./bin/marks "$DIR" > out/marks.txt
for b in evict.before evict; do
	echo "== $b"
	for m in lockless locked inter; do for i in 1 2 3; do ./bin/$b "$DIR" scan $m; done; done
	for k in rec rec2 aligned; do ./bin/$b "$DIR" hot $k; CLOCK=1 ./bin/$b "$DIR" hot $k; done
done > out/evict.txt 2>&1
