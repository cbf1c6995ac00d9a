#!/bin/sh
# F3: comments of the mreuse branch that name checks which do not exist, and
# comments MR1-MR5 made false.  Run from anywhere; exit 1 while any stands.
# Each line printed is one claim and where it is.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
bad=0
for v in MISS_REUSE BUG_MR_REF_EARLY BUG_MR_PRIVATE_UNPREP BUG_MR_TO_PRIVATE; do
	if grep -q "$v" "$ROOT/src/page/alloc.c" && ! grep -q "$v" "$ROOT/tests/model/spec_get.pml"; then
		echo "alloc.c names spin variant $v; tests/model/spec_get.pml has no $v"
		bad=1
	fi
done
if grep -q "removed page: impossible inside the read section" "$ROOT/src/filemap/pin.c"; then
	echo "pin.c header: 'reuse of a removed page: impossible inside the read section, C's grace period' (MR1: a miss reuses it at once)"
	bad=1
fi
if grep -q "must never see the page reused for another identity" "$ROOT/src/page/alloc.c" ||
   grep -q "page reused for another identity within its read section" "$ROOT/src/page/alloc.c"; then
	echo "alloc.c 'Where a frame goes': a speculative getter 'must never see the page reused for another identity within its read section' (MR5 says it may)"
	bad=1
fi
if grep -q "(none can: a grace" "$ROOT/src/page/alloc.c"; then
	echo "alloc.c page_init_private: 'an optimistic reader that somehow still looked at the old page (none can: a grace period ...)' (a miss's frame: one can, and the seq section is what refuses it)"
	bad=1
fi
if grep -q "a miss never does" "$ROOT/src/reclaim/evict.c"; then
	echo "evict.c policy: 'a miss never does' set REFERENCED (F2: a stale optimistic mark does, on a miss's new page)"
	bad=1
fi
exit $bad
