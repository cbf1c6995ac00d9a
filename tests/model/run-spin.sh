#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-spin.sh - checks one Promela model exhaustively with spin.
#
# usage: run-spin.sh [--np [--fair]] [--expect KIND] [-DNAME[=VALUE]]... MODEL.pml
#
#   -D...          passed to spin (selects a broken variant or a size)
#   --np           look for non-progress cycles (pan -DNP, run with -l)
#                  instead of the safety search (-DSAFETY: assertions and
#                  invalid end states)
#   --fair         with --np: only weakly fair cycles count (pan -f)
#   --expect KIND  the model is a broken variant: pass only if spin finds an
#                  error of this kind: assert | end | np
#
# Generates and compiles pan in a temporary directory, runs it with a search
# depth large enough that a truncated search is an error (so is one cut short
# by memory), prints pan's summary
# (and the counterexample trail when an error is found).
# Exit: 0 pass, 1 fail, 77 skip (no spin or no C compiler), 2 usage.

mode=safety
expect=
defs=
fair=
while [ $# -gt 1 ]; do
	case $1 in
	--np) mode=np; shift ;;
	--fair) fair=1; shift ;;
	--expect) expect=$2; shift 2 ;;
	-D*) defs="$defs $1"; shift ;;
	*) echo "run-spin.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
if [ $# -ne 1 ] || [ ! -f "$1" ]; then
	echo "usage: run-spin.sh [--np [--fair]] [--expect assert|end|np] [-DNAME]... MODEL.pml" >&2
	exit 2
fi
case $expect in
'') ;;
assert) pattern='assertion violated' ;;
end) pattern='invalid end state' ;;
np) pattern='non-progress cycle' ;;
*) echo "run-spin.sh: --expect takes assert, end or np" >&2; exit 2 ;;
esac

cc=${CC:-cc}
if ! command -v spin >/dev/null 2>&1; then
	echo "SKIP: spin is not on PATH"
	exit 77
fi
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "SKIP: no C compiler ($cc) to build pan"
	exit 77
fi

model=$(basename "$1")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lpc-spin.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cp "$1" "$tmp/$model" || exit 1
cd "$tmp" || exit 1

if [ "$mode" = np ]; then
	panflags=-DNP
	runflags=-l
	if [ -n "$fair" ]; then
		panflags="-DNP -DNFAIR=3"	# the default (2) allows 6 processes
		runflags="-l -f"
	fi
else
	panflags=-DSAFETY
	runflags=
fi

echo "== spin$defs -a $model"
# shellcheck disable=SC2086 # $defs is a list of words on purpose
spin $defs -a "$model" || { echo "FAIL: spin could not generate pan"; exit 1; }
echo "== $cc -O2 $panflags -o pan pan.c"
# shellcheck disable=SC2086 # word lists on purpose
"$cc" -O2 $panflags -o pan pan.c || { echo "FAIL: pan does not compile"; exit 1; }
echo "== ./pan -m100000 $runflags"
# shellcheck disable=SC2086
./pan -m100000 $runflags >pan.out 2>&1
rc=$?
cat pan.out

errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.out | tail -n 1)
if [ -z "$errors" ]; then
	echo "FAIL: pan exited ($rc) without a summary"
	exit 1
fi
if grep -q 'max search depth too small' pan.out; then
	echo "FAIL: search truncated (depth)"
	exit 1
fi
# pan prints its summary, "errors: 0" included, after running out of
# memory too: a search cut short proves nothing
if grep -q 'out of memory' pan.out; then
	echo "FAIL: search cut short (pan ran out of memory)"
	exit 1
fi

if [ "$errors" -gt 0 ] && [ -f "$model.trail" ]; then
	echo "== counterexample (spin -t -p)"
	# shellcheck disable=SC2086
	spin $defs -t -p "$model" | head -n 400
fi

if [ -z "$expect" ]; then
	if [ "$errors" -eq 0 ] && ! grep -Eq '^pan:[0-9]+: ' pan.out; then
		echo "PASS: $model$defs: no errors"
		exit 0
	fi
	echo "FAIL: $model$defs: spin found $errors error(s)"
	exit 1
fi
if [ "$errors" -gt 0 ] && grep -q "^pan:[0-9]*: $pattern" pan.out; then
	echo "PASS: $model$defs: the broken variant is caught ($pattern)"
	exit 0
fi
echo "FAIL: $model$defs: expected '$pattern', spin found $errors error(s)"
exit 1
