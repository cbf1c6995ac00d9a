#!/bin/sh
# Reruns every probe of this review (about 12 minutes on 2 CPUs); outputs go
# to $OUTDIR (default out/).  Needs a worktree of 42328fc at $NEW (default
# /tmp/rev2) built in release (and tsan for the TSan rows), and one of
# 3946151 at $BASE (default /tmp/base) built in release:
#   git -C /work/main worktree add --detach /tmp/rev2 42328fc
#   cd /tmp/rev2 && . scripts/lib.sh && lpc_build release
#   cmake -S . -B build-tsan -G Ninja $(lpc_variant_args tsan) &&
#     cmake --build build-tsan --target lpc test_workingset
# Big sparse files go under $DIR (default /var/tmp/atkws2) and are removed.
# dev.sh, dev2.sh, dev3.sh are the 16-core runs (device machine; their
# statically linked bin/dev_* are built below).
set -e
NEW=${NEW:-/tmp/rev2}
BASE=${BASE:-/tmp/base}
DIR=${DIR:-/var/tmp/atkws2}
O=${OUTDIR:-out}
cd "$(dirname "$0")"
export NEW BASE
mkdir -p "$O" "$DIR"
./build.sh policy ra_loop at_stale_loop at_shift at_streams phase scanres promo
S="-Wl,-Bstatic -lurcu-memb -lurcu-common -lurcu-cds -luring -Wl,-Bdynamic -lm"
for p in missbench at_streams ra_loop; do
	cc -O2 -pthread -D_GNU_SOURCE -D_LGPL_SOURCE -DWS -I$NEW/include -I$NEW/src $p.c $NEW/build-release/src/liblpc.a $S -o bin/dev_$p
	cc -O2 -pthread -D_GNU_SOURCE -D_LGPL_SOURCE -I$BASE/include -I$BASE/src $p.c $BASE/build-release/src/liblpc.a $S -o bin/dev_$p.base
done
cc -D_GNU_SOURCE -D_LGPL_SOURCE -I$NEW/include -I$NEW/src layout.c -o bin/layout
set +e
# 1. a file re-read through readahead beside an idle hot set
{
	for v in ra_loop.base ra_loop; do ./bin/$v $DIR/rl 30 85 256 1 pread 30; done
	for v in ra_loop.base ra_loop; do ./bin/$v $DIR/rl 30 85 256 1 get 30 | tail -1; done
	for b in 20 40; do for v in ra_loop.base ra_loop; do ./bin/$v $DIR/rl $b 85 256 1 pread 30 | tail -1; done; done
	for v in ra_loop.base ra_loop; do ./bin/$v $DIR/rl 30 85 512 1 pread 30 | tail -1; done
	echo "--- control: readahead off (the commit's case)"
	for v in ra_loop.base ra_loop; do ./bin/$v $DIR/rl 30 85 64 0 get 12 | tail -1; done
} > $O/ra_loop.txt 2>&1
# 2. a one-time lpc_pread scan promotes its own pages
{
	for m in pread get; do for v in promo.base promo; do ./bin/$v $DIR/pr 64 $m; done; done
	for v in promo.base promo; do ./bin/$v $DIR/pr 256 pread 128 1 96 | cut -c1-150; done
} > $O/promo.txt 2>&1
# 3. streams (2 vCPUs here; dev2.sh on 16 cores)
{
	for r in 1 2; do for K in 2 4; do for v in at_streams.base at_streams; do
		echo "--- $v K=$K run $r"; ./bin/$v $DIR/st $K 256 85 3 | tail -2; rm -f $DIR/st
	done; done; done
	for v in at_streams.base at_streams; do echo "--- $v K=2 hot 1% 8 s"; ./bin/$v $DIR/st 2 256 1 8 | tail -2; rm -f $DIR/st; done
} > $O/streams.txt 2>&1
# 4. a moved working set of 50-85 %
{
	for s in 50 55 60 65 70 85; do for v in at_shift.base at_shift; do printf "%s %s%% 64 MiB ra off: " $v $s; ./bin/$v $DIR/s $s 64 0 | grep -h "reached\|never"; done; done
	for s in 50 55 60 65 70 85; do for v in at_shift.base at_shift; do printf "%s %s%% 256 MiB ra on: " $v $s; ./bin/$v $DIR/s $s 256 1 | grep -h "reached\|never"; done; done
	F=$DIR/r ./rep.sh 2 shift 64 0 0.6 0.6
} > $O/shift.txt 2>&1
# 5. where the target's top is half the frames (small caches, readahead on up to 64 MiB)
{
	F=$DIR/r ./rep.sh 3 hotscan 1 0 0.5 1.0
	F=$DIR/r ./rep.sh 2 hotscan 2 0 0.5 1.0
	F=$DIR/r ./rep.sh 3 hotscan 4 0 0.5 1.0
	F=$DIR/r ./rep.sh 3 hotscan 64 1 0.5 1.0
	F=$DIR/r ./rep.sh 3 uniform 1 0 2
} > $O/small.txt 2>&1
# 6. broad sweeps: what did not break
F=$DIR/f ./sweep.sh > $O/sweep.txt 2>&1
F=$DIR/ph ./phase.sh > $O/phase.txt 2>&1
D=$DIR ./scanres.sh > $O/scanres.txt 2>&1
# 7. races
if [ -f $NEW/build-tsan/src/liblpc.a ]; then
	L="-lurcu-memb -lurcu-common -lurcu-cds -luring -lm"
	cc -g -O1 -fsanitize=thread -pthread -I$NEW/include stress.c $NEW/build-tsan/src/liblpc.a $L -o bin/stress.tsan
	mkdir -p $DIR/stress
	TSAN_OPTIONS="halt_on_error=1:suppressions=$NEW/tests/tsan.supp" timeout 300 ./bin/stress.tsan $DIR/stress 20 4 > $O/stress_tsan.txt 2>&1; echo "rc=$?" >> $O/stress_tsan.txt
	(cd $NEW && TSAN_OPTIONS="halt_on_error=1:suppressions=$NEW/tests/tsan.supp" ./build-tsan/tests/unit/test_workingset | tail -1) > $O/unit_tsan.txt 2>&1
fi
./bin/layout > $O/layout.txt
rm -rf "$DIR"
grep -h "SUMMARY\|reached\|rc=\|passed" $O/*.txt | head -60
