#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# soak.sh [-n ROUNDS] [-s SECONDS] [-o stress|model|rbd|sqldiff|mutants] [-m] [release|asan|tsan ...] -
# the long stress runs that do not fit in CI: every stress test, ROUNDS times
# per variant, each time with a new seed and with yield injection at every
# protocol step (LPC_YIELD=all) at a probability that cycles through 0.005,
# 0.02, 0.1 and 0.3, so that both narrow and very wide race windows are tried.
# Run it before a release or after a change to a protocol; CI runs each stress
# test once, and once with yields.
# Then the model-based test of the file API (tests/model_api), once per variant:
# the whole matrix (both backends, both lookup modes, every page size) for
# SECONDS per combination, and its multi-threaded mode for SECONDS per
# combination up to 64 KiB pages.  -o runs only one part; -m is -o model.
#
# Defaults: 10 rounds of 10 s, in asan and tsan (both LPC_DEBUG builds, so the
# protocol checks are on).  Prints one line per run, with the seed and the
# probability to replay a failure:
#   LPC_YIELD=all LPC_YIELD_PROB=P LPC_STRESS_SECONDS=S build-V/tests/stress/X --seed N
# and a closing "soak: N passed, N failed" line.  Exits non-zero on any failure.
#
# Then the RBD backend's tests (tests/rbd) against a throw-away cluster
# (scripts/ceph-cluster.sh): every case of test_rbd once per variant, and
# the multi-threaded model over an image ROUNDS times for SECONDS each.
# Then the SQLite differential test (tests/sqlite/test_sqlite_diff), ROUNDS
# times per variant for SECONDS each, with the workers in a unix/lpc mix and
# unix alone (the control), without yield injection (its races are between
# processes); its transactions and kills are summed in a "sqldiff:" line.
# Last, every protocol mutant (tests/mutants/run.sh, all of them: CI runs
# only the --quick few), once.
# -o runs only one of the five parts (stress, model, rbd, sqldiff, mutants).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

rounds=10 seconds=10 only=
variants=()
while (($#)); do
	case $1 in
	-n) rounds=$2; shift 2 ;;
	-s) seconds=$2; shift 2 ;;
	-o) only=$2; shift 2 ;;
	-m) only=model; shift ;;
	release | asan | tsan) variants+=("$1"); shift ;;
	-h | --help) sed -n '3,32p' "$0"; exit 0 ;;
	*) echo "soak.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
((${#variants[@]})) || variants=(asan tsan)

probs=(0.005 0.02 0.1 0.3)
pass=0 fail=0
txns=0 kills=0
for v in "${variants[@]}"; do
	lpc_build "$v" >/dev/null || { echo "soak: building $v failed" >&2; exit 1; }
	dir="$LPC_ROOT/build-$v"
	wrap=()
	case $v in
	release) san=() ;;
	asan) san=(ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1) ;;
	tsan) san=(TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$LPC_ROOT/tests/tsan.supp") ;;
	esac
	if [[ $v == tsan && $(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 28) -gt 28 ]]; then
		wrap=(setarch "$(uname -m)" -R) # see test.sh
	fi
	for ((r = 0; r < rounds; r++)); do
		[[ $only == "" || $only == stress ]] || break
		p=${probs[r % ${#probs[@]}]}
		for t in "$dir"/tests/stress/stress_*; do
			[[ -x $t ]] || continue
			seed=$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')
			log=$(mktemp)
			if env "${san[@]}" LPC_YIELD=all LPC_YIELD_PROB="$p" LPC_YIELD_SEED="$seed" \
				LPC_STRESS_SECONDS="$seconds" "${wrap[@]}" "$t" --seed "$seed" >"$log" 2>&1; then
				pass=$((pass + 1))
				echo "ok   $v $(basename "$t") p=$p seed=$seed"
			else
				fail=$((fail + 1))
				echo "FAIL $v $(basename "$t") p=$p seed=$seed: replay with"
				echo "     LPC_YIELD=all LPC_YIELD_PROB=$p LPC_YIELD_SEED=$seed LPC_STRESS_SECONDS=$seconds build-$v/tests/stress/$(basename "$t") --seed $seed"
				tail -n 20 "$log" | sed 's/^/     | /'
			fi
			rm -f "$log"
		done
	done
	# The model-based test: a seed per run, printed by the test itself
	# with the replay command of each failing sequence.
	m="$dir/tests/model_api/model_api"
	if [[ -x $m && ( $only == "" || $only == model ) ]]; then
		for args in "--seconds $seconds" "--threads 4 --seconds $seconds"; do
			seed=$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')
			log=$(mktemp)
			# shellcheck disable=SC2086 # $args is a list of words
			if env "${san[@]}" "${wrap[@]}" "$m" $args --seed "$seed" >"$log" 2>&1; then
				pass=$((pass + 1))
				echo "ok   $v model_api $args seed=$seed"
			else
				fail=$((fail + 1))
				echo "FAIL $v model_api $args seed=$seed:"
				grep -A3 '^FAIL\|shrunk\|replay' "$log" | head -n 60 | sed 's/^/     | /'
			fi
			rm -f "$log"
		done
	fi
	# The RBD backend (tests/rbd) against a cluster of its own: every
	# case of test_rbd, TSan included (CI's TSan runs only basic, crash,
	# resizeby and batch: osd, second, deadowner and full wait for the
	# cluster, about 100 s more of its 30 minutes), then the
	# multi-threaded model over an image for SECONDS, ROUNDS times (its
	# rare failures are races with the flusher growing the image).
	# Skipped (one line) without Ceph's daemons.
	if [[ ( $only == "" || $only == rbd ) && -x $dir/tests/rbd/test_rbd ]]; then
		cl=$(mktemp -d)
		if bash "$LPC_ROOT/scripts/ceph-cluster.sh" up "$cl/c" >/dev/null 2>"$cl/up.log"; then
			for c in basic crash osd second resizeby deadowner full batch; do
				log=$(mktemp)
				if env "${san[@]}" "${wrap[@]}" "$dir/tests/rbd/test_rbd" "$cl/c" \
					"$LPC_ROOT/scripts/ceph-cluster.sh" "$c" >"$log" 2>&1; then
					pass=$((pass + 1))
					echo "ok   $v test_rbd $c"
				else
					fail=$((fail + 1))
					echo "FAIL $v test_rbd $c: $(grep -m1 'seed' "$log")"
					grep -v 'librbd::io::ObjectRequest\|^$' "$log" | tail -n 12 | sed 's/^/     | /'
				fi
				rm -f "$log"
			done
			for ((r = 0; r < rounds; r++)); do
				log=$(mktemp)
				if env "${san[@]}" "${wrap[@]}" "$dir/tests/rbd/model_api_rbd" --backend rbd \
					--rbd-conf "$cl/c/ceph.conf" --threads 4 --page-size 4096 \
					--lookup lockless --seconds "$seconds" >"$log" 2>&1; then
					pass=$((pass + 1))
					echo "ok   $v model_api_rbd --threads 4 --seconds $seconds"
				else
					fail=$((fail + 1))
					echo "FAIL $v model_api_rbd --threads 4 --seconds $seconds:"
					grep -A3 '^FAIL\|replay' "$log" | head -n 20 | sed 's/^/     | /'
				fi
				rm -f "$log"
			done
		else
			echo "skip $v rbd: no cluster ($(tail -n 1 "$cl/up.log"))"
		fi
		bash "$LPC_ROOT/scripts/ceph-cluster.sh" down "$cl/c" >/dev/null 2>&1
		rm -rf "$cl"
	fi
	t=$dir/tests/sqlite/test_sqlite_diff
	for ((r = 0; r < rounds; r++)); do
		[[ $only == "" || $only == sqldiff ]] || break
		[[ -x $t ]] || break
		for mix in mix unix; do
			seed=$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')
			log=$(mktemp)
			if env "${san[@]}" LPC_SQLITE_DIFF_VFS=$mix LPC_STRESS_SECONDS="$seconds" \
				"${wrap[@]}" "$t" --seed "$seed" >"$log" 2>&1; then
				pass=$((pass + 1))
				echo "ok   $v test_sqlite_diff vfs=$mix seed=$seed"
			else
				fail=$((fail + 1))
				echo "FAIL $v test_sqlite_diff vfs=$mix seed=$seed: replay with"
				echo "     LPC_SQLITE_DIFF_VFS=$mix LPC_STRESS_SECONDS=$seconds build-$v/tests/sqlite/test_sqlite_diff --seed $seed"
				grep -v '^    step' "$log" | tail -n 12 | sed 's/^/     | /'
			fi
			# "diff: R runs, S steps, T transactions (...), K kills (...)"
			line=$(grep '^diff: ' "$log" | tail -n 1)
			if [[ $line =~ ,\ ([0-9]+)\ transactions.*\),\ ([0-9]+)\ kills ]]; then
				txns=$((txns + BASH_REMATCH[1]))
				kills=$((kills + BASH_REMATCH[2]))
			fi
			rm -f "$log"
		done
	done
done
[[ $only == "" || $only == sqldiff ]] && echo "sqldiff: $txns transactions, $kills kills"
# Every protocol mutant (CI's mutants.quick runs only a few, for its time):
# each must be killed by the rule it breaks.
if [[ $only == "" || $only == mutants ]]; then
	if bash "$LPC_ROOT/tests/mutants/run.sh"; then
		pass=$((pass + 1))
		echo "ok   mutants (every one killed by its rule)"
	else
		fail=$((fail + 1))
		echo "FAIL mutants: see the list above"
	fi
fi
echo "soak: $pass passed, $fail failed"
((fail == 0))
