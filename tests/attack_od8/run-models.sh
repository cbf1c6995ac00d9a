#!/bin/sh
# SPDX-License-Identifier: MIT
# run-models.sh - does tests/model/own_defer.pml check what alloc.c OD2-OD8
# claim?  own_defer_od7.pml is a copy of it with two additions:
#   LIST_CHECK            asserts, after every OD2 and OD5 (owner, inside
#                         S1-S3), the invariant alloc.c's OD2 states: nd is
#                         the list's length, dcov <= nd while the list is
#                         not empty, and each of the first dcov frames has
#                         a stamp below gdone.  The committed model says
#                         "nd is the list's length" is checked; no assert
#                         of it is there (only nd > 0 at own_take).
#   BUG_TAKE_KEEPS_DCOV   OD5/OD7 leaves dcov at avail instead of avail - 1
#                         (the frame moved still counted as covered front).
# Checks: the protocol passes with LIST_CHECK (R=2, R=3); the mutant is
# caught by the committed R=3 world (CI: model.own_defer.3rounds) but not by
# R=2, and by LIST_CHECK at R=2.
# Exit 0 while every check comes out so; 2 if the protocol fails LIST_CHECK
# (a defect as modelled); 1 if a mutant is not caught.
cd "$(dirname "$0")" || exit 2
SPIN=../model/run-spin.sh
M=own_defer_od7.pml
rc=0
for r in 2 3; do
	echo "== LIST_CHECK, R=$r (must pass)"
	$SPIN -DLIST_CHECK -DR=$r $M >/tmp/od8_spin.$$ 2>&1 || { tail -20 /tmp/od8_spin.$$; rc=2; }
done
echo "== BUG_TAKE_KEEPS_DCOV, R=3 (as CI's model.own_defer.3rounds; must fail)"
$SPIN --expect assert -DBUG_TAKE_KEEPS_DCOV -DR=3 $M >/tmp/od8_spin.$$ 2>&1 || { echo "not caught"; rc=1; }
echo "== BUG_TAKE_KEEPS_DCOV, LIST_CHECK, R=2 (must fail)"
$SPIN --expect assert -DLIST_CHECK -DBUG_TAKE_KEEPS_DCOV $M >/tmp/od8_spin.$$ 2>&1 || { echo "not caught"; rc=1; }
echo "== BUG_TAKE_KEEPS_DCOV, R=2 (the committed default world: passes, for the record)"
if ! $SPIN -DBUG_TAKE_KEEPS_DCOV $M >/tmp/od8_spin.$$ 2>&1; then
	echo "R=2 now catches BUG_TAKE_KEEPS_DCOV: update README.md"
fi
rm -f /tmp/od8_spin.$$
exit $rc
