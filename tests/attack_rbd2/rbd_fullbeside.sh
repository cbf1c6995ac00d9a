#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# rbd_fullbeside.sh - rbd.model_api.threads run beside rbd.full (the cluster
# going full and back): a READ fails with -EIO.
#
# Contract: lpc_rbd.h, a full cluster: "the OSD refuses those [writes] that
# need space ... a write-back fails with -ENOSPC ..., the pages stay dirty
# and lpc_fsync returns it" -- nothing there fails a read; lpc.h BK4: "a
# read error fails the pages of that read" (an -EIO read is a storage's
# read error, and librbd reads need no space).  tests/rbd/test_rbd.c's full
# case itself checks "lpc_pread still returns the new bytes" while full.
# Expected beside a full cluster: writers' lpc_fsync/close -ENOSPC (-28),
# which this script ignores; never a read's -EIO (-5).  CI's unexplained
# -EIO in rbd.model_api.threads right after rbd.full is this.
#
# Run (needs the release build's test binaries:
#   cmake --build ../../build-release --target test_rbd model_api_rbd):
#   LPC_CEPH_CONF=DIR/ceph.conf bash rbd_fullbeside.sh [ROUNDS]   (default 6)
# Each round: test_rbd DIR SCRIPT full in the background and
# model_api_rbd --threads 4 ... --seconds 2 back to back until it ends.
# Exit 1 when some model_api run failed a read with -EIO (prints its log's
# FAIL lines and replay line), 0 when none did, 77 without a cluster.
#
# Seen (release, load ~12-16 on 2 CPUs): 6 rounds, 17 model_api runs
# beside rbd.full; one failed at its 13th call (round 2, its first run,
# while the ratio was being lowered):
#   threads: 4 writers (34829 bytes each) + 2 readers, backend rbd, page
#   size 4096, lookup lockless, 16 frames, 2.0 s, seed 9073539730388229202
#   FAIL reader: lpc_pread = -5
#   replay: --threads 4 --backend rbd --page-size 4096 --lookup lockless
#   --frames 16 --seed 9073539730388229202
# (others: "FAIL writer N: lpc_fsync = -28", "FAIL lpc_file_close = -28",
# which are the contract's).  A later run of this script: 0 of 19; a third:
# once more (seed 8099292023911512346, 6 calls).  In all 4 of about 70 runs
# beside rbd.full; loop it (6 rounds take about 90 s).
set -u
conf=${LPC_CEPH_CONF:-}
if [[ -z $conf || ! -r $conf ]]; then
	echo "skipped: set LPC_CEPH_CONF=DIR/ceph.conf (scripts/ceph-cluster.sh up DIR)" >&2
	exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
B=$here/../../build-release/tests/rbd
S=$here/../../scripts/ceph-cluster.sh
dir=$(dirname "$conf")
rounds=${1:-6}
out=$(mktemp -d /tmp/att2-fullbeside-XXXXXX)
bad=0 runs=0
for ((i = 1; i <= rounds; i++)); do
	timeout 170 "$B/test_rbd" "$dir" "$S" full >"$out/full.$i" 2>&1 &
	fp=$!
	j=0
	while kill -0 $fp 2>/dev/null; do
		j=$((j + 1)) runs=$((runs + 1))
		log=$out/beside.$i.$j
		timeout 110 "$B/model_api_rbd" --backend rbd --rbd-conf "$conf" --threads 4 \
			--page-size 4096 --lookup lockless --seconds 2 >"$log" 2>&1
		if grep -q "FAIL.*= -5$" "$log"; then
			bad=$((bad + 1))
			echo "round $i run $j: a read failed with -EIO:"
			grep -h "^threads:\|FAIL\|replay:" "$log"
		fi
	done
	wait $fp || echo "round $i: test_rbd full itself failed (see $out/full.$i)"
done
echo "rbd_fullbeside: $runs model_api runs beside rbd.full, $bad with a read's -EIO (logs: $out)"
[[ $bad -eq 0 ]]
