#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test.sh [release|asan|tsan|all ...] - build and run lpc's test suite.
#
# Default: all = release, asan, tsan, in that order.  Each variant is configured
# and built in build-<variant> at the repository root (see scripts/lib.sh) and
# tested with ctest.  A failing variant does not stop the others; the script
# ends with one summary line per variant and a total line, and exits non-zero
# if anything failed (a build, a test, or a variant that ran no test).
#
#   release  every test, including the spin models (label `model`)
#   asan     ASan + UBSan + LPC_DEBUG (stress tests twice: plain and with
#            yield injection, label yield); ASAN_OPTIONS=detect_leaks=1,
#            UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1; no models
#   tsan     TSan + LPC_DEBUG (stress twice, as asan); TSAN_OPTIONS=
#            halt_on_error=1 with tests/tsan.supp; no models
#
# The spin models check Promela, not the compiled code, so they run once (in
# release) rather than three times.  Options already in ASAN_OPTIONS,
# UBSAN_OPTIONS or TSAN_OPTIONS are kept and win over these defaults.
# LPC_JOBS sets the build and ctest parallelism (default: the CPUs);
# LPC_CTEST_ARGS adds ctest arguments, e.g. LPC_CTEST_ARGS='-L unit'.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

usage() { echo "usage: $0 [release|asan|tsan|all ...]" >&2; exit 2; }

variants=()
(($#)) || set -- all
for a in "$@"; do
	case $a in
	all) variants+=(release asan tsan) ;;
	release | asan | tsan) variants+=("$a") ;;
	-h | --help) usage ;;
	*) echo "$0: unknown variant '$a'" >&2; usage ;;
	esac
done

bash "$here/deps.sh" || { echo "test.sh: installing dependencies failed" >&2; exit 1; }

total_pass=0 total_fail=0 total_skip=0
summary=()

# run_ctest VARIANT: runs ctest in build-VARIANT with the variant's environment
# and adds its counts to the totals.
run_ctest() {
	local v=$1 dir="$LPC_ROOT/build-$1" log rc line total failed skipped passed
	local -a env=() args=(--output-on-failure -j "$LPC_JOBS" --no-tests=error)
	local -a wrap=()
	lpc_test_env "$v"
	env=("${lpc_env[@]}") wrap=("${lpc_wrap[@]}")
	# The spin models check Promela, not the compiled code: release only.
	[[ $v == release ]] || args+=(-LE model)
	# shellcheck disable=SC2206 # LPC_CTEST_ARGS is a list of words
	args+=(${LPC_CTEST_ARGS:-})
	log="$dir/ctest.log"
	echo "+ cd build-$v && ${env[*]} ${wrap[*]} ctest ${args[*]}"
	(cd "$dir" && env "${env[@]}" "${wrap[@]}" ctest "${args[@]}") 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}

	line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
	if [[ -z $line ]]; then
		# ctest did not get as far as running tests (or found none).
		summary+=("$v: 0 passed, 1 failed (ctest ran no test, exit $rc)")
		total_fail=$((total_fail + 1))
		return
	fi
	total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")
	failed=$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<<"$line")
	skipped=$(sed -n '/^The following tests did not run:/,/^$/p' "$log" | grep -c '(Skipped)')
	passed=$((total - failed - skipped))
	if ((rc != 0 && failed == 0)); then
		failed=1 # ctest failed for a reason its counts do not show
	fi
	summary+=("$v: $passed passed, $failed failed, $skipped skipped")
	total_pass=$((total_pass + passed))
	total_fail=$((total_fail + failed))
	total_skip=$((total_skip + skipped))
}

for v in "${variants[@]}"; do
	echo
	echo "=== $v: configure and build"
	start=$SECONDS
	if ! lpc_build "$v"; then
		summary+=("$v: 0 passed, 1 failed (configure or build failed)")
		total_fail=$((total_fail + 1))
		continue
	fi
	echo "=== $v: test"
	run_ctest "$v"
	summary[-1]+=" ($((SECONDS - start)) s)"
done

echo
echo "=== summary"
printf '%s\n' "${summary[@]}"
echo "total: $total_pass passed, $total_fail failed, $total_skip skipped"
((total_fail == 0))
