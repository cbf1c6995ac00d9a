#!/bin/sh
# SPDX-License-Identifier: MIT
# probe_check.sh - lpcbench fault's membarrier probe (tools/lpcbench/fault/
# fault.c fault_membarrier_probe) on machines without what it needs: it must
# print "membarrier probe skipped: <reason>" (and the run still succeed)
# where membarrier is missing (ENOSYS), PRIVATE_EXPEDITED is not offered,
# the registration or the call fails (out-$VARIANT/mb_shim.so, for the main
# program's calls only), or the process has one CPU (taskset -c 0); and
# print a cost where it has what it needs.  Also --csv and --plot write
# their files.
# Usage: VARIANT=release ./probe_check.sh     Exit 0 holds, 1 a case failed,
# 77 skip (no lpcbench, or no taskset).
VARIANT=${VARIANT:-release}
here=$(cd "$(dirname "$0")" && pwd)
L=$here/../../build-$VARIANT/tools/lpcbench/lpcbench
SHIM=$here/out-$VARIANT/mb_shim.so
[ -x "$L" ] && [ -f "$SHIM" ] && command -v taskset >/dev/null || exit 77
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
FA="fault --rounds 1 --warmup 0 --threads 1 --slice-ms 20 --variants lockless"
fails=0
check() { # name, expected fixed string, command...
	name=$1 want=$2
	shift 2
	out=$("$@" 2>/dev/null)
	rc=$?
	line=$(printf '%s\n' "$out" | grep 'membarrier probe')
	if [ $rc -eq 0 ] && printf '%s\n' "$line" | grep -qF -- "$want"; then
		echo "  ok   $name: $line"
	else
		echo "  FAIL $name (rc $rc): '$line', want '$want'"
		fails=$((fails + 1))
	fi
}
echo "probe_check ($VARIANT):"
check enosys "skipped: membarrier PRIVATE_EXPEDITED unavailable (Function not implemented)" \
	env GPS_MB=enosys LD_PRELOAD="$SHIM" "$L" $FA
check noexp "skipped: membarrier PRIVATE_EXPEDITED unavailable (not in the query's answer)" \
	env GPS_MB=noexp LD_PRELOAD="$SHIM" "$L" $FA
check noreg "skipped: membarrier register: Operation not permitted" \
	env GPS_MB=noreg LD_PRELOAD="$SHIM" "$L" $FA
check failcall "skipped: membarrier failed: Invalid argument" \
	env GPS_MB=failcall LD_PRELOAD="$SHIM" "$L" $FA
check one_cpu "skipped: one CPU only" \
	taskset -c 0 "$L" $FA
if [ "$(nproc)" -ge 2 ]; then
	check two_cpus "PRIVATE_EXPEDITED costs" \
		"$L" $FA \
		--csv "$tmp/f.csv" --plot "$tmp/plot"
	for m in grace_periods_per_kmiss us_per_grace_period us_per_call busy_thread_speed; do
		grep -q ",$m," "$tmp/f.csv" 2>/dev/null || {
			echo "  FAIL csv: no $m row"
			fails=$((fails + 1))
		}
	done
	[ -s "$tmp/plot/fault.csv" ] || {
		echo "  FAIL plot: no fault.csv"
		fails=$((fails + 1))
	}
fi
[ $fails -eq 0 ] && echo "probe_check: holds" || echo "probe_check: FAIL ($fails)"
[ $fails -eq 0 ]
