#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# seed-sweep.sh [-n SEEDS] [-j JOBS] [-s SECONDS] [-R REGEX] [release|asan|tsan ...]
#
# Runs every seeded test of the suite with many seeds, to find the seeds a
# random test fails on before CI draws one.  A test is seeded when it takes
# --seed N (tst_init: it prints "seed N (replay: ...)"); each is found by
# running it once, then run with SEEDS fresh random seeds (default 200),
# JOBS at a time (default: the CPUs), under the environment ctest gives it
# (its ENVIRONMENT property, e.g. the .sync twins' LPC_TEST_IO=sync) and the
# variant's sanitizer options (scripts/lib.sh lpc_test_env).  Stress tests
# race for SECONDS each (LPC_STRESS_SECONDS, default 0.3): the sweep is
# about seeds, soak.sh about long races.  Not part of CI: a full release
# sweep takes about an hour on two CPUs.
#
# Prints one line per test and each failing seed with its replay command,
# whether a second run of that seed failed too, and its first FAIL lines:
#   FAIL NAME --seed S (fails again|passed on replay: timing): (cd DIR && ENV... COMMAND --seed S)
# and ends with "sweep: N passed, N failed".  Exit: 0 when no run failed.
# Default variant: release.  -R limits the tests to names matching REGEX.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

nseeds=200 jobs=$LPC_JOBS seconds=0.3 regex=. variants=()
while (($#)); do
	case $1 in
	-n) nseeds=$2; shift 2 ;;
	-j) jobs=$2; shift 2 ;;
	-s) seconds=$2; shift 2 ;;
	-R) regex=$2; shift 2 ;;
	release | asan | tsan) variants+=("$1"); shift ;;
	-h | --help) sed -n '3,19p' "$0"; exit 0 ;;
	*) echo "seed-sweep.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
((${#variants[@]})) || variants=(release)

pass=0 fail=0
for v in "${variants[@]}"; do
	dir="$LPC_ROOT/build-$v"
	lpc_build "$v" >/dev/null || { echo "sweep: building $v failed" >&2; exit 1; }
	lpc_test_env "$v"
	work=$(mktemp -d)
	# One line per test: NAME, DIR, ENV (space separated), COMMAND..., the
	# fields apart by US (0x1f: a tab is IFS white space, and an empty ENV
	# between two would vanish).
	(cd "$dir" && ctest --show-only=json-v1) | python3 -c '
import json, re, sys
for t in json.load(sys.stdin)["tests"]:
    if not re.search(sys.argv[1], t["name"]) or not t.get("command"):
        continue
    try:  # programs only: scripts (spin, mutants, shells) take no --seed
        with open(t["command"][0], "rb") as f:
            if f.read(4) != b"\x7fELF":
                continue
    except OSError:
        continue
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    env = " ".join(props.get("ENVIRONMENT", []))
    print("\x1f".join([t["name"], props.get("WORKING_DIRECTORY", "."), env] + t["command"]))
' "$regex" >"$work/tests"
	ntests=0
	while IFS=$'\x1f' read -r name wd tenv cmd; do
		IFS=$'\x1f ' read -r -a local_cmd <<<"$cmd"
		read -r -a local_env <<<"$tenv"
		probe=$(cd "$wd" && env "${lpc_env[@]}" "${local_env[@]}" LPC_STRESS_SECONDS=$seconds \
			timeout 300 "${lpc_wrap[@]}" "${local_cmd[@]}" --seed 1 2>&1 | head -c 100000)
		grep -q '^seed 1 (replay:' <<<"$probe" || continue
		ntests=$((ntests + 1))
		for ((i = 0; i < nseeds; i++)); do
			printf '%s\x1f%s\x1f%s\x1f%s\x1f%s\n' "$name" "$wd" "$tenv" \
				"$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')" "${local_cmd[*]}"
		done
	done <"$work/tests" >"$work/runs"
	echo "sweep: $v: $ntests seeded tests, $nseeds seeds each, $jobs at a time," \
		"LPC_STRESS_SECONDS=$seconds"
	export LPC_SWEEP_ENV="${lpc_env[*]}" LPC_SWEEP_WRAP="${lpc_wrap[*]}" LPC_SWEEP_S=$seconds
	export LPC_SWEEP_V=$v
	# shellcheck disable=SC2016 # expanded by the inner shell
	tr '\n' '\0' <"$work/runs" | xargs -0 -r -P "$jobs" -n 1 bash -c '
		IFS=$'"'\x1f'"' read -r name wd tenv seed cmd <<<"$1"
		run() {
			(cd "$wd" && env $LPC_SWEEP_ENV $tenv LPC_STRESS_SECONDS=$LPC_SWEEP_S \
				timeout -k 5 300 $LPC_SWEEP_WRAP $cmd --seed "$seed") >"$2" 2>&1
		}
		out=$(mktemp)
		if run "$seed" "$out"; then
			echo "ok $name"
		else
			# Once more with the same seed: a seed that fails again is
			# the seed'"'"'s; one that passes, the machine'"'"'s (timing).
			if run "$seed" "$out.2"; then again="passed on replay: timing"; else again="fails again"; fi
			echo "FAIL $name --seed $seed ($again): (cd $wd && $LPC_SWEEP_ENV $tenv LPC_STRESS_SECONDS=$LPC_SWEEP_S $cmd --seed $seed)"
			grep -E "FAIL|rule .* violated|ERROR|Timeout|watchdog" "$out" | head -n 3 | sed "s/^/    | /"
		fi
		rm -f "$out" "$out.2"' _ >"$work/results"
	grep -A3 '^FAIL' "$work/results" | grep -E '^(FAIL|    \|)' 
	while read -r name; do
		ok=$(grep -cFx "ok $name" "$work/results")
		bad=$(grep -cF "FAIL $name --seed" "$work/results")
		echo "$v $name: $ok passed, $bad failed"
		pass=$((pass + ok)) fail=$((fail + bad))
	done < <(cut -d $'\x1f' -f1 "$work/runs" | uniq)
	rm -rf "$work"
done
echo "sweep: $pass passed, $fail failed"
((fail == 0))
