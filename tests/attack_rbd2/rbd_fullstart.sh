#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# rbd_fullstart.sh - defect 1 of README.md made faster than
# rbd_fullbeside.sh: the cluster goes full 0.2 s after rbd.model_api.threads
# starts (and has room again 2 s later): a reader's lpc_pread fails with -EIO.
#
# Contract: as rbd_fullbeside.sh (lpc_rbd.h, a full cluster: write-backs
# fail with -ENOSPC, "the pages stay dirty and lpc_fsync returns it";
# nothing fails a read).
#
# Run (release build's model_api_rbd; the `ceph` CLI of ceph-common):
#   LPC_CEPH_CONF=DIR/ceph.conf bash rbd_fullstart.sh [ROUNDS [DELAY]]
#   (defaults 10 rounds; DELAY unset: 0.2, 0.4, .. 1.0 s in turn).  Each round: model_api_rbd --threads 4
#   --page-size 4096 --lookup lockless --seconds 2 in the background; DELAY
#   later the three ratios lowered to 0.05/0.08/0.1 % (tests/rbd full's
#   values, nearfull first), 2 s later put back to 0.85/0.90/0.95 (full
#   first).  The ratios are put back at exit however it ends.
# Exit 1 when a model_api run failed a read with -EIO, 0 when none, 77
# without a cluster.
#
# Seen (release, load ~12 on 2 CPUs), 5 tries at delays 0.2..1.0 s:
#   tr 1 (0.2 s): FAIL reader: lpc_pread = -5   9 calls
#     seed 9987181027803358397
#   tr 2-5 (0.4..1.0 s): passed (794..1475 calls)
#   (those 5 tries ran back to back, right after other full periods)
#   this script: 0 of 6 (0.2 s, 3 s apart), then 0 of 10 (as above); so it
#   is a faster but less sure form of rbd_fullbeside.sh (1 in 17, 2 in
#   19); loop it.
# Not reproduced: 12 model runs beside `rbd bench` 4 MiB writes (load
# alone), 10 beside osdmap changes (nearfull ratio flipped), 5 started
# right after the ratio was put back with the pool still flagged full.
set -u
conf=${LPC_CEPH_CONF:-}
if [[ -z $conf || ! -r $conf ]] || ! command -v ceph >/dev/null; then
	echo "skipped: set LPC_CEPH_CONF=DIR/ceph.conf (scripts/ceph-cluster.sh up DIR); needs the ceph CLI" >&2
	exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
B=$here/../../build-release/tests/rbd
rounds=${1:-10} delay_arg=${2:-}
out=$(mktemp -d /tmp/att2-fullstart-XXXXXX)
ratios() { for r in "$@"; do timeout 20 ceph -c "$conf" osd set-$r >/dev/null 2>&1; done; }
restore() { ratios "full-ratio 0.95" "backfillfull-ratio 0.90" "nearfull-ratio 0.85"; }
trap restore EXIT
bad=0
for ((i = 1; i <= rounds; i++)); do
	timeout 90 "$B/model_api_rbd" --backend rbd --rbd-conf "$conf" --threads 4 \
		--page-size 4096 --lookup lockless --seconds 2 >"$out/run.$i" 2>&1 &
	mp=$!
	delay=${delay_arg:-0.$(( (i - 1) % 5 * 2 + 2 ))}
	[[ $delay == 0.10 ]] && delay=1.0
	sleep "$delay"
	ratios "nearfull-ratio 0.0005" "backfillfull-ratio 0.0008" "full-ratio 0.001"
	sleep 2
	restore
	wait $mp
	if grep -q "FAIL.*= -5$" "$out/run.$i"; then
		bad=$((bad + 1))
		echo "round $i: a read failed with -EIO:"
		grep -h "^threads:\|FAIL\|calls\|replay:" "$out/run.$i"
	fi
done
echo "rbd_fullstart: $rounds rounds, $bad with a read's -EIO (logs: $out)"
[[ $bad -eq 0 ]]
