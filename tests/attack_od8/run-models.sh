#!/bin/sh
# SPDX-License-Identifier: MIT
# run-models.sh - does tests/model/own_defer.pml check what alloc.c OD2-OD8
# claim?  This review first ran a copy of the model with two additions: the
# OD2 list invariant asserted after every OD2 and OD5, and the mutant
# BUG_TAKE_KEEPS_DCOV (OD5/OD7 leaves dcov at avail instead of avail - 1).
# Both are in the committed model now (its list_check, and CI's
# model.own_defer.bug_take_keeps_dcov), so this runs the committed model
# itself rather than a copy that would drift from it.
# Checks: the protocol passes at R=2 and R=3; the mutant is caught at both.
# Exit 0 while every check comes out so; 2 if the protocol fails (a defect
# as modelled); 1 if the mutant is not caught.
cd "$(dirname "$0")" || exit 2
SPIN=../model/run-spin.sh
M=../model/own_defer.pml
rc=0
for r in 2 3; do
	echo "== protocol, R=$r (must pass)"
	$SPIN -DR=$r $M >/tmp/od8_spin.$$ 2>&1 || { tail -20 /tmp/od8_spin.$$; rc=2; }
	echo "== BUG_TAKE_KEEPS_DCOV, R=$r (must fail)"
	$SPIN --expect assert -DBUG_TAKE_KEEPS_DCOV -DR=$r $M >/tmp/od8_spin.$$ 2>&1 ||
		{ echo "not caught"; [ $rc = 0 ] && rc=1; }
done
rm -f /tmp/od8_spin.$$
exit $rc
