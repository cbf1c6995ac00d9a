#!/bin/sh
# SPDX-License-Identifier: MIT
# run-models.sh - own_defer_overlap.pml: does tests/model/own_defer.pml's
# world (one owner, the taker's waits only) see a wrong GC3 at all?
# Exit 1 while the committed model's world misses BUG_DONE_BEGUN (a GC3 that
# counts a wait begun later and not yet ended): the model gap; 0 once the
# world without OVERLAP catches it too.  Exit 2 if the protocol itself fails
# with overlapping waits (a defect in core/rcu.h GC1-GC3 as modelled).
cd "$(dirname "$0")" || exit 2
SPIN=../model/run-spin.sh
rc=0
echo "== protocol as committed, with overlapping counted waits (OVERLAP)"
if ! $SPIN -DOVERLAP -DW=1 own_defer_overlap.pml; then
	echo "DEFECT: the protocol fails with overlapping waits"
	exit 2
fi
echo "== BUG_DONE_BEGUN with OVERLAP (must fail)"
$SPIN --expect assert -DOVERLAP -DW=1 -DBUG_DONE_BEGUN own_defer_overlap.pml || rc=2
echo "== BUG_DONE_BEGUN in the committed model's world (no OVERLAP)"
if $SPIN -DBUG_DONE_BEGUN own_defer_overlap.pml; then
	echo "GAP: without a third waiter the model accepts a GC3 that counts a wait not ended"
	[ $rc = 0 ] && rc=1
fi
exit $rc
