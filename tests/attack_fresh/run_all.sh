#!/bin/sh
# Reproduces every finding of README.md.  Needs worktrees /tmp/rev3 (00a9888),
# /tmp/rev2 (42328fc), /tmp/base (3946151) built with `lpc_build release`.
# Null backend; files under /var/tmp, removed by the probes.  ~1 min.
set -e
cd "$(dirname "$0")"
./build.sh scan policy 2>&1 | grep -v warning || true
D=$(mktemp -d /var/tmp/attack_fresh.XXXXXX)
mkdir -p out
# 1, 2, 3: one-time sequential scans (4x a 64 MiB cache, 2x a 256 MiB one)
{
	for a in "pread 131072" "pread 130000" "pread 4096" "pread 1000" "pin 32" "pin 1"; do
		for v in scan.base scan.rev2 scan; do ./bin/$v $D/f 64 $a; done
	done
	for a in "pread 1000" "pread 130000" "pread 131072"; do
		for v in scan.base scan.rev2 scan; do ./bin/$v $D/f 256 $a 2; done
	done
} > out/scan.txt 2>&1
# 4: read-ahead pages' shadow lookups beside a hot set (loop slightly over the cache)
{
	for args in "64 1 0.5 1.1" "256 1 0.5 1.1" "256 1 0.7 1.05"; do
		for v in policy.base policy.rev2 policy; do ./bin/$v $D/f hotscan $args 2>&1 | tail -1 | sed "s/^/[$args] /"; done
	done
} > out/policy.txt 2>&1
# 5: the hit path's code (lpc_pread's inlined lpc_page_mark_referenced)
for w in rev2 rev3; do
	objdump -d --no-show-raw-insn /tmp/$w/build-release/src/liblpc.a 2>/dev/null |
		awk '/<lpc_pread>:/{p=1} p&&/^$/{exit} p' > out/af_pread_$w.s
done
rm -rf "$D"
cat out/scan.txt out/policy.txt
