#!/bin/sh
# Rebuilds and reruns every probe of this review; outputs go to out/.
# Needs: a worktree of 97f7724 at $NEW (default /tmp/rev-ws) built in
# release, tsan and asan, and one of 3946151 at $BASE (default /tmp/base)
# built in release:
#   git -C /work/main worktree add --detach /tmp/rev-ws 97f7724
#   cd /tmp/rev-ws && . scripts/lib.sh && lpc_build release
#   for v in tsan asan; do cmake -S . -B build-$v -G Ninja $(lpc_variant_args $v) &&
#     cmake --build build-$v --target lpc test_workingset test_evict_active; done
# About 6 minutes on 2 CPUs.  Big files go under $DIR (default /var/tmp/atkws)
# and are removed.  dev.sh is the 16-core run (run it on such a machine after
# building bin/dev_* as below).
set -e
NEW=${NEW:-/tmp/rev-ws}
BASE=${BASE:-/tmp/base}
DIR=${DIR:-/var/tmp/atkws}
cd "$(dirname "$0")"
export NEW BASE
mkdir -p out "$DIR"
./build.sh policy missbench reopen_mix stress at_shift at_stale_loop at_streams at_tiny
L="-lurcu-memb -lurcu-common -lurcu-cds -luring -lm"
S="-Wl,-Bstatic -lurcu-memb -lurcu-common -lurcu-cds -luring -Wl,-Bdynamic -lm"
cc -g -O1 -fsanitize=thread -pthread -I$NEW/include stress.c $NEW/build-tsan/src/liblpc.a $L -o bin/stress.tsan
cc -g -O1 -fsanitize=address,undefined -pthread -I$NEW/include stress.c $NEW/build-asan/src/liblpc.a $L -o bin/stress.asan
cc -D_GNU_SOURCE -D_LGPL_SOURCE -I$NEW/include -I$NEW/src layout.c -o bin/layout
# statically linked copies for dev.sh (a machine without liburcu)
cc -O2 -pthread -D_GNU_SOURCE -D_LGPL_SOURCE -DWS -I$NEW/include -I$NEW/src missbench.c $NEW/build-release/src/liblpc.a $S -o bin/dev_missbench
cc -O2 -pthread -D_GNU_SOURCE -D_LGPL_SOURCE -I$BASE/include -I$BASE/src missbench.c $BASE/build-release/src/liblpc.a $S -o bin/dev_missbench.base
cc -g -O1 -fsanitize=thread -static-libtsan -pthread -I$NEW/include stress.c $NEW/build-tsan/src/liblpc.a $S -o bin/dev_stress.tsan
cp $NEW/tests/tsan.supp ./tsan.supp
set +e
F=$DIR/f ./sweep.sh > out/sweep.txt 2>&1
{
	for v in at_shift at_shift.base; do
		for s in 70 85; do echo "--- $v $s"; ./bin/$v $DIR/s $s | tail -4; done
		echo "--- $v MIX=1 70"; MIX=1 ./bin/$v $DIR/s 70 | tail -4
	done
	echo "--- policy shift 0.85 -> 0.7 (target trace)"
	./bin/policy $DIR/f shift 64 0 0.85 0.7
	./bin/policy.base $DIR/f shift 64 0 0.85 0.7 | tail -1
} > out/shift.txt 2>&1
{
	for K in 2 4; do for v in at_streams.base at_streams; do echo "--- $v K=$K"; ./bin/$v $DIR/st $K 256 85 3 | tail -2; done; done
	for m in 1 4; do for v in policy.base policy; do ./bin/$v $DIR/f hotscan $m 0 0.5 1.0 | grep SUMMARY; done; done
	for v in at_tiny.base at_tiny; do echo "--- $v"; ./bin/$v $DIR/t 0.3 | tail -6; done
} > out/streams_tiny.txt 2>&1
{
	for r in 0 1; do for v in reopen_mix.base reopen_mix; do ./bin/$v $DIR/r $r 256 | tail -1; done; done
	./bin/policy $DIR/f reopen 64 0 0.8
} > out/reopen.txt 2>&1
TSAN_OPTIONS="halt_on_error=1:suppressions=$NEW/tests/tsan.supp" timeout 300 ./bin/stress.tsan $DIR 20 4 > out/stress_tsan.txt 2>&1; echo "rc=$?" >> out/stress_tsan.txt
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 timeout 300 ./bin/stress.asan $DIR 15 4 > out/stress_asan.txt 2>&1; echo "rc=$?" >> out/stress_asan.txt
./bin/stress $DIR 5 4 >> out/stress_asan.txt 2>&1
(cd $NEW && TSAN_OPTIONS="halt_on_error=1:suppressions=$NEW/tests/tsan.supp" ./build-tsan/tests/unit/test_workingset | tail -1;
 ASAN_OPTIONS=detect_leaks=1 ./build-asan/tests/unit/test_workingset | tail -1;
 ./build-asan/tests/unit/test_evict_active | tail -1) > out/unit_san.txt 2>&1
./bin/layout > out/layout.txt
F=$DIR/m ./perf.sh > out/perf_1thread.txt 2>&1
rm -rf "$DIR"
grep -h "SUMMARY\|rc=\|passed\|never\|reached" out/*.txt | head -80
