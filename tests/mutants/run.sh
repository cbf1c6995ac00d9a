#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run.sh [--quick] [MUTANT ...] - the protocol mutants the C tests must kill.
#
# Copies the working tree to a temporary directory, builds it once with
# -DLPC_DEBUG=ON (no sanitizer), then for each mutant: applies it (a sed on
# one file), rebuilds, runs the C suite (spin models and packaging excluded)
# with yield injection at every step, restores the file.  A mutant is KILLED
# only when an LPC_DEBUG check or a test names the broken rule ("rule X
# violated") within the time limit; a plain failure, a hang or a timeout
# counts as SURVIVED.  First the same suite runs on the unmutated tree (the
# baseline): if it fails, the run stops there.  A mutant whose tests failed
# naming no rule is charged to the mutant unless every test that failed also
# fails without it: each is run again (up to 10 tries, until it fails) on
# the unmutated build, and if all fail there the mutant's verdict is
# "ERROR (flaky test X)", the run's fault, not a survivor.
# Exit: 0 if every mutant was killed; 1 if one survived (or its sed no
# longer matches, or it does not build); 2 if the baseline or the build of
# the unmutated tree failed, or none survived but a flaky test left a
# mutant unjudged.
#
#   --quick        the mutants with a known killing test (killer[]), each
#                  judged by that test; shorter stress runs (CI: the
#                  mutants.quick CTest test; scripts/soak.sh runs them all)
#   MUTANT         run only these (names below)
#   LPC_MUTANT_TIMEOUT  seconds per mutant (default 120)
#   LPC_JOBS       build and ctest parallelism (default 2)
#
# Mutants (one per protocol step; add one for each step you add):
#   no-r4          lookup.c: skip the R4 re-check of the slot
#   no-grace       alloc.c: free a removed page's frame at once (no C)
#   plain-inc      lookup.c: R3 increments without "unless zero"
#   no-wake        lock.c: unlock never wakes sleepers (no U2)
#   keep-failed    miss.c: a failed read leaves its page in the index (M5)
#   no-p4          pin.c: skip the P4 re-check of the slot (range pin)
#   pin-plain-inc  pin.c: P3 adds the pin without "unless zero"
#   evict-check-then-store  evict.c: E4 loads ref == 1, then freezes whatever
#                  the count is by then (a check-then-store, not one CAS)
#   dirty-late     writeback/dirty.c: K3 clears the DIRTY tag but not the flag
#                  (a change made during the write could be lost)
#   no-redirty     writeback/dirty.c: a failed write (K5) does not re-dirty
#                  its page (the data would be dropped)
#   opt-no-seq-recheck  optimistic.h: O5 accepts the copy without comparing
#                  seq again (torn copies: rule OPTIMISTIC-TORN, named by
#                  tests/stress/stress_optimistic.c)
#   opt-no-slot-check   optimistic.h: O5 validates seq only, not the slot
#                  (rule OPTIMISTIC-NOT-IN-INDEX)
#   active-no-leaf-lock  evict.c: a promotion or demotion without its leaf
#                  lock (AC1): a fast invalidate frees the page between E3
#                  and AC2, and the promotion marks the freed frame (rule
#                  ACTIVE-COUNT, in regress_active_invalidate)
#   no-y3          writeback.c: lpc_fsync does not wait for writes in flight
#                  (Y3; rule FSYNC-INFLIGHT, in regress_fsync_inflight, which
#                  ctest runs first).  Not in --quick (CI's time stays put):
#                  the story itself runs in every debug variant.
#   open-no-revive file.c: an open ignores a copy in its last close (no ZA
#                  for it) and makes a second one (rule ONE-COPY, in
#                  regress_open_closing).  Not in --quick: the story runs
#                  in every debug variant.
#   close-unlink-early  file.c: the last close takes f out of the table at
#                  Z1, not Z5 (an open in its flush makes a second copy
#                  while the first one's writes run; rule ONE-COPY, in
#                  regress_open_closing).  Not in --quick, as open-no-revive.
#   size-dirty-first  write.c: SZ1 raises lpc's size after the page is
#                  dirty (window (a); rule SIZE-CUT at D3, in any write test
#                  that extends a file)
#   size-raise-unlocked  write.c: SZ1 raises the size without size_lock
#                  (window (b); rule SIZE-CUT at the publish's cut, in
#                  regress_size_publish story 2)
#   publish-unlocked  writeback.c: the publish (SZ3-SZ5) without size_lock
#                  (rule SIZE-CUT, regress_size_publish story 2)
#   publish-trust  writeback.c: the publish after a writeback's write trusts
#                  io.size (S4; rule SIZE-SEEN, regress_size_publish story
#                  4).  SZ5's CAS has no mutant of its own: with S4 a plain
#                  store there loses nothing a test can see (the write whose
#                  raise it overwrites trims its own tail).
#   ra-referenced  run.c: read-ahead pages enter REFERENCED instead of RA (a
#                  scan would flush the hot set: rule RA-INACTIVE, named by
#                  tests/unit/test_readahead.c; SCAN-RESISTANCE by
#                  test_evict_scan)
#   drop-referenced  remove.c: a drop behind a stream takes pages referenced
#                  again since their first use (rule DROP-USED-ONCE, named by
#                  tests/unit/test_drop_behind.c)
#   drop-no-slack  readahead.c: A5 drops up to the marker, not a window
#                  behind it (rule DROP-BEHIND, test_drop_behind)
#   bulk-marks     read.c: a bulk read marks what it hits REFERENCED (rule
#                  BULK-READ, test_drop_behind)
#   fed-refills    readahead.c: a stream that feeds itself still asks for
#                  a refill at each marker (rule SELF-FED, test_drop_behind)
#   run-late-release  run.c: a run drops its references after the whole
#                  run, not each with its page's unlock (U5d; rule
#                  RUN-RELEASE, regress_run_release)
#   frames-unsorted  alloc.c: a freed chain goes to the shared list in the
#                  order it came (no SG0; rule FRAMES-IN-ORDER,
#                  test_page_alloc)
#   ra-share-twice  ra_worker.c: QS1 never finds a stream's own entry in
#                  the active streams (each sizing takes another: the stream
#                  counted twice, every window halved; rule RA-SHARE, named
#                  by tests/unit/test_readahead.c at a stream's second window)
#   ra-failed-kept run.c: a failed or dropped page of a run or window stays
#                  in the index (U5c; rule FAILED-PAGE-IN-INDEX, a waiter in
#                  test_read_run)
#   free-in-flight run.c: a run lets its last page go (out of the index,
#                  its reference dropped) once the page's read is issued
#                  (U4): the frame is freed while the device writes into it
#                  (rule FRAME-FREED-IN-FLIGHT, in any test that reads a
#                  run: test_read_run first)
#   handle-no-park  file.c: a read-write open of a copy over a user backend
#                  open read-only releases the old handle at once (ZN3), while
#                  an operation may still use it (rule HANDLE-PARKED, named by
#                  tests/unit/test_backend.c).  Not in --quick.
#   pending-tail-stale  alloc.c: an invalidate's gang joins an empty
#                  pending list without setting its tail (a drain would splice
#                  the list by a stale tail: rule PENDING-CHAIN, in
#                  test_invalidate_drain).  Not in --quick.
#   wpin-no-dirty  writeback/wpin.c: lpc_unpin(LPC_PIN_WRITE) does not mark
#                  its pages dirty (WU1; rule WPIN-CLEAN, in test_wpin)
#   wb-on-wpin     writeback.c: K1 goes on with a page another holds locked
#                  (writeback starts on a write-pinned page; rule
#                  WPIN-WRITEBACK, test_wpin's fsync case)
#   wpin-no-stable writeback/write.c: a write pin does not wait for the
#                  page's write in flight (WP3, in the lock step lpc_pwrite
#                  shares; rule WPIN-WRITEBACK, in
#                  regress_wpin story "stable")
#   wpin-no-gate   writeback/truncate.c: lpc_truncate does not wait for the
#                  file's write pins before it takes its locks (wpin.c WC6;
#                  rule WPIN-GATE, checked by truncate.c under its locks:
#                  any test that truncates)
#   seg-split-count  alloc.c: a split of the shared list's top segment
#                  counts the rest one short (SP2; rule SEG-COUNT when the
#                  rest is taken: stress_alloc and stress_mixed, seconds
#                  into each).  Not in --quick.
#   mr-to-private  alloc.c: MR1 pops an uncovered deferred frame for every
#                  allocation, private ones too (rule DEFERRED-GRACE at
#                  page_init_private, in test_own_defer's private pages)
#   own-no-grace   alloc.c: OD5 lands a thread's deferred frames (the ones
#                  its lpc_invalidate kept) without OD4's grace period (rule
#                  DEFERRED-GRACE, in test_own_defer)
#   drain-no-grace alloc.c: lpc_page_pending_drain frees the evicted frames
#                  without its grace period (T2; rule GRACE-PERIOD).  Not
#                  in --quick: test_evict_pending and the stress tests run
#                  the drain in every variant.
#   stream-twice   filemap/stream.c: ST3 hands out the ring's head without
#                  moving past it (an entry, its page, handed out twice;
#                  rule STREAM-TWICE, in test_stream)
#   stream-bound   filemap/stream.c: ST1's fill ignores the frame bound
#                  (claims past max_pages; rule STREAM-BOUND, in
#                  test_stream's bounded streams)
#   stream-close-keeps  filemap/stream.c: ST7's close walks the ring but puts
#                  no held reference (rule STREAM-HELD, in test_stream_hold)
#   stream-share   filemap/stream.c: ST6's credit ignores the cache-wide
#                  quarter (rule STREAM-BOUND, in test_stream_hold's two
#                  streams)
#   retire-restart reclaim/reclaimer.c: start_locked ignores r->retired (a
#                  kick after lpc_reclaim_retire starts the thread again,
#                  over a pool destroy is about to free; rule
#                  RECLAIM-RETIRED, in test_pending_linger's retired case)
#   leaf-no-dead   index/radix.c: a fast insert (FI3) does not check that
#                  its leaf is dead, and puts its entry into a leaf that a
#                  delete emptied and is unlinking (rule RADIX-LEAF-COUNT at
#                  the unlock: a dead leaf with an entry; test_radix's
#                  story "dead", a yield hook at FI2)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
jobs=${LPC_JOBS:-2}
limit=${LPC_MUTANT_TIMEOUT:-120}
stress_s=3
quick=0
want=()
for a in "$@"; do
	case $a in
	--quick) quick=1 ;;
	-h | --help) awk 'NR > 2 && /^set /{exit} NR > 2' "$0"; exit 0 ;;
	*) want+=("$a") ;;
	esac
done
((quick)) && stress_s=2

# name|file|sed expression (must change the file)
mutants=(
	'no-r4|src/filemap/lookup.c|s@if (unlikely(atomic_load_explicit(slot, memory_order_acquire) != p)) /\* R4 \*/@if (0) /* MUTANT: no R4 */@'
	'no-grace|src/page/alloc.c|s@^\t/\* The caller.s read section (registered, or scoped) also makes@\tlpc_page_free_chain(c, p, p, 1); return; /* MUTANT: no grace period */\n&@'
	'plain-inc|src/filemap/lookup.c|s@if (unlikely(!lpc_page_try_get(p)))@if (unlikely(!(atomic_fetch_add_explicit(\&p->ref, 1, memory_order_acquire), 1))) /* MUTANT */@'
	'no-wake|src/page/lock.c|s@^\t\tfutex_wake_all(\&p->flags);@\t\t(void)0; /* MUTANT: no U2 */@'
	'keep-failed|src/filemap/miss.c|s@^\t\tlpc_filemap_delete(f, p, index);@\t\t(void)0; /* MUTANT: failed page kept */@'
	'no-p4|src/filemap/pin.c|s@if (unlikely(atomic_load_explicit((void \*_Atomic \*)slot,\t/\* P4 \*/@if (0 \&\& (atomic_load_explicit((void *_Atomic *)slot, /* MUTANT: no P4 */@'
	'pin-plain-inc|src/filemap/pin.c|s@if (unlikely(!lpc_page_try_pin(p)))@if (unlikely(!(atomic_fetch_add_explicit(\&p->ref, LPC_PIN_BIAS, memory_order_acquire), 1))) /* MUTANT */@'
	'evict-check-then-store|src/reclaim/evict.c|s@if (!lpc_page_freeze(p, 1)) {@if (atomic_load(\&p->ref) != 1 || (sched_yield(), !lpc_page_freeze(p, atomic_load(\&p->ref)))) { /* MUTANT: E4 check-then-store */@'
	'dirty-late|src/writeback/dirty.c|s@(old \& ~LPC_PG_DIRTY) | LPC_PG_WRITEBACK,@old | LPC_PG_WRITEBACK, /* MUTANT: K3 keeps DIRTY */@'
	'no-redirty|src/writeback/dirty.c|s@if (err \&\& !(lpc_page_flags(p) \& LPC_PG_DIRTY)) {@if (0) { /* MUTANT: K5 drops a failed page */@'
	'opt-no-seq-recheck|src/filemap/optimistic.h|s@if (unlikely(atomic_load_explicit(\&p->seq, memory_order_relaxed) != s1 ||@if (unlikely(0 /* MUTANT: no seq re-check */ ||@'
	'opt-no-slot-check|src/filemap/optimistic.h|s@^\t\t     atomic_load_explicit(slot, memory_order_relaxed) != p))@\t\t     0 /* MUTANT: seq only, no slot check */))@'
	'active-no-leaf-lock|src/reclaim/evict.c|s@^\tif (!f->locked_lookup) {$@\tif (0) { /* MUTANT: AC1 without the leaf lock */@'
	'no-y3|src/writeback/writeback.c|s@^\twait_writeback_all(f);\t\t\t\t\t\t/\* Y3 \*/@\t(void)wait_writeback_all; /* MUTANT: no Y3 */@'
	'open-no-revive|src/filemap/file.c|s@^\tif (f) {\t*/\* ZA \*/@\tif (f \&\& f->closing)\n\t\tf = NULL; /* MUTANT: no revival */\n\tif (f) {@'
	'close-unlink-early|src/filemap/file.c|s@^\tf->closing = true;\(\t*/\* Z1 \*/\)$@\tf->closing = true;\1\n\tfor (pp = \&c->head; *pp != f; pp = \&(*pp)->next)\n\t\t;\n\t*pp = f->next; /* MUTANT: unlink at Z1 */@;s@^\tfor (pp = \&c->head; \*pp != f; pp = \&(\*pp)->next)$@\tfor (pp = \&f->next; 0;) /* MUTANT: not at Z5 */@'
	'ra-referenced|src/filemap/run.c|s@^\t\treturn fl | LPC_PG_RA;@\t\treturn fl | LPC_PG_REFERENCED; /* MUTANT */@'
	'drop-referenced|src/filemap/remove.c|s@\.keep = INVAL_BUSY | LPC_PG_REFERENCED | @.keep = INVAL_BUSY | /* MUTANT */ @'
	'drop-no-slack|src/filemap/readahead.c|s@^\tend = index - s->size;@\tend = index; /* MUTANT: no window behind */@'
	'bulk-marks|src/filemap/read.c|s@^\t\tlpc_page_mark_bulk(p, @\t\tlpc_page_mark_referenced(p, /* MUTANT */ @'
	'fed-refills|src/filemap/readahead.c|s@^\tif (!fed)$@\tif (1) /* MUTANT: a fed stream refills */@'
	'run-late-release|src/filemap/run.c|s@^\t\tif (k || !nr)$@\t\tif (0) /* MUTANT: no U5d */@;s@^\tif (nr == 0)$@\tfor (k = nr ? 1 : 0; k < n; k++)\n\t\tif (pages[k] \&\& res[k] >= 0)\n\t\t\tlpc_page_release(pages[k]); /* MUTANT: after the run */\n\tif (nr == 0)@'
	'frames-unsorted|src/page/alloc.c|s@^\tq = head = chain_sort(head);\t*/\* SG0 \*/@\tq = head; (void)chain_sort; /* MUTANT: no SG0 */@'
	'ra-failed-kept|src/filemap/run.c|s@^\t\tlpc_filemap_delete(f, pages\[k\], index + k);@\t\t(void)0; /* MUTANT: failed run page kept */@'
	'free-in-flight|src/filemap/run.c|s@^\t\tlpc_page_debug_read_begin(pages\[k\]);@&\n\t\tif (k \&\& k == n - 1) { lpc_filemap_delete(f, pages[k], index + k); lpc_page_release(pages[k]); } /* MUTANT */@'
	'pending-tail-stale|src/page/alloc.c|s@^\t\tc->pending_tail = tail;@\t\t(void)0; /* MUTANT: stale pending tail */@'
	'seg-split-count|src/page/alloc.c|s@^\t\tc->free->fl.seg_n = s->fl.seg_n - n;@\t\tc->free->fl.seg_n = s->fl.seg_n - n - 1; /* MUTANT: SP2 miscounts the rest */@'
	'mr-to-private|src/page/alloc.c|s@} else if (t->dfree \&\& (flags \& LPC_ALLOC_MISS)) {@} else if (t->dfree \&\& 1) { /* MUTANT: MR1 for every allocation */@'
	'own-no-grace|src/page/alloc.c|s@^\tlpc_rcu_synchronize();\t\t\t\t\t\t/\* OD4 \*/@\t(void)0; /* MUTANT: OD5 without OD4 */@'
	'drain-no-grace|src/page/alloc.c|s@^\t\tlpc_rcu_synchronize();\t\t\t\t\t/\* T2 \*/@\t\t(void)0; /* MUTANT: drain without T2 */@'
	'size-dirty-first|src/writeback/write.c|s@^\t\tsize0 = lpc_wb_extend(f, pos + n);\t\t\t\t/\* SZ1 \*/@\t\tsize0 = atomic_load_explicit(\&f->size, memory_order_acquire); /* MUTANT: SZ1 after D3 */@;s@^\t\tdone += n;$@\t\tdone += n; lpc_wb_extend(f, off + done); /* MUTANT */@'
	'size-raise-unlocked|src/writeback/write.c|s@^\tpthread_mutex_lock(\&f->size_lock);@\t(void)0; /* MUTANT: SZ1 without size_lock */@;s@^\tpthread_mutex_unlock(\&f->size_lock);@\t(void)0; /* MUTANT */@'
	'publish-unlocked|src/writeback/writeback.c|s@^\tpthread_mutex_lock(\&f->size_lock);@\t(void)0; /* MUTANT: publish without size_lock */@;s@^\tpthread_mutex_unlock(\&f->size_lock);@\t(void)0; /* MUTANT */@'
	'publish-trust|src/writeback/writeback.c|s@^\town = wend > seen ? wend : seen;@\town = seen; wend = 0; /* MUTANT: trust io.size */@'
	'wpin-no-dirty|src/writeback/wpin.c|s@(void)lpc_wb_dirty_pinned(f, pages + c, m, rcs);@memset(rcs, 0, sizeof(rcs)); /* MUTANT: unpin forgets to dirty */@'
	'wb-on-wpin|src/writeback/writeback.c|s@if (!lpc_page_trylock(p)) {\t\t\t\t/\* K1 \*/@if (!lpc_page_trylock(p) \&\& 0) { /* MUTANT: K1 goes on without the lock */@'
	'wpin-no-stable|src/writeback/write.c|s@if (!(how \& LPC_WB_GET_STABLE) || likely(!(lpc_page_flags(p) \& LPC_PG_WRITEBACK)))@if (1) /* MUTANT: no WP3 */@'
	'wpin-no-gate|src/writeback/truncate.c|s@\tlpc_wb_wpins_cut_begin(f);@\t(void)0; /* MUTANT: no WC6 */@'
	'stream-twice|src/filemap/stream.c|s@^\ts->head = (s->head + 1) % s->max_distance;@\t(void)0; /* MUTANT: ST3 keeps the head */@'
	'stream-bound|src/filemap/stream.c|s@^\t\tif (s->claimed >= s->max_pages)$@\t\tif (0) /* MUTANT: ST1 ignores the bound */@'
	'batch-einval-in-reap|src/io/io.c|s@^\t\t\treturn; /\* RQ4.s \*/@\t\t\t(void)0; /* MUTANT: RQ3 reads a refused run again inside the reap */@'
	'stream-close-keeps|src/filemap/stream.c|s@^\t\tif (e->page)\t/\* ST7 \*/$@\t\tif (0) /* MUTANT: ST7 keeps its references */@'
	'stream-share|src/filemap/stream.c|s@^\t\tif (cur >= cap)$@\t\tif (0) /* MUTANT: ST6 past the quarter */@'
	'retire-restart|src/reclaim/reclaimer.c|s@if (r->started || r->failed || r->stop || r->retired)@if (r->started || r->failed || r->stop) /* MUTANT: start after retire */@'
	'ra-share-twice|src/filemap/ra_worker.c|s@if (w->act\[i\].stamp \&\& w->act\[i\].key == key) {@if (0) { /* MUTANT: QS1 misses the stream entry */@'
	'leaf-no-dead|src/index/radix.c|s@^\tif (atomic_load_explicit(\&leaf->lock, memory_order_relaxed) \& RADIX_LEAF_DEAD) { /\* FI3 \*/@\tif (0) { /* MUTANT: FI3 without the dead check */@'
	'handle-no-park|src/filemap/file.c|s@^\t\t\tp->handle = atomic_load_explicit(\&f->io.handle, memory_order_relaxed);@&\n\t\t\tif (ops->release) ops->release(p->handle); /* MUTANT: ZN3 releases at once */@'
)
# Run by a plain run and when named, skipped by --quick.
# The mutants of the file's size, of readahead and of the last close are
# killed by rules their stories and tests check in every debug variant of CI
# (regress_size_publish, test_readahead, test_read_run, regress_open_closing),
# so --quick leaves them out and CI's time stays put.  So are the write
# pins' four (test_wpin: WPIN-CLEAN, WPIN-WRITEBACK; any truncate:
# WPIN-GATE), the read stream's (test_stream, every debug variant) and the
# user backends' (test_backend): all killed by their rules.  --quick (CI)
# keeps only mutants whose killing test is known (killer[]): each is judged
# by one test, in seconds; the others ran the whole suite up to the test
# that kills them, 2-5 minutes a mutant on the 2-CPU machine at load 15-20
# (the write pins' 196-293 s each), and are judged by scripts/soak.sh (-o
# mutants), which runs every mutant.  retire-restart is killed in
# test_pending_linger by rule RECLAIM-RETIRED, but only after that test's
# lingers (131 s by run.sh at load 20), so it is full-only too.
full_only=(no-y3 drain-no-grace open-no-revive close-unlink-early size-dirty-first
	size-raise-unlocked publish-unlocked publish-trust ra-referenced ra-failed-kept
	free-in-flight pending-tail-stale seg-split-count drop-referenced drop-no-slack bulk-marks
	fed-refills run-late-release frames-unsorted
	wpin-no-dirty wb-on-wpin wpin-no-stable wpin-no-gate
	stream-twice stream-bound stream-close-keeps stream-share handle-no-park
	no-p4 pin-plain-inc evict-check-then-store dirty-late no-redirty opt-no-slot-check
	retire-restart)

# The tests that kill each mutant first (ctest -R; seen in full runs): run
# alone before the whole suite, which runs only if they name no rule.
# no-r4: regress_r4_failed_read's second story stops a lookup before R3
# while a failed read takes its page out of the index, so R3 succeeds on a
# removed page and LOOKUP-NOT-IN-INDEX fires at once, every run (the stress
# tests find that window by chance: in CI both passed three tries of 4 s
# and the mutant fell through to the suite).
declare -A killer=(
	[no-r4]='^(regress\.regress_r4_failed_read|stress\.stress_(pin_evict|lookup_race))$'
	[no-grace]='^regress\.regress_stale_private$'
	[own-no-grace]='^unit\.test_own_defer$'
	[mr-to-private]='^unit\.test_own_defer$'
	[plain-inc]='^unit\.test_guarantees$'
	[no-wake]='^stress\.stress_pin_evict$'
	[keep-failed]='^stress\.stress_pin_evict$'
	[opt-no-seq-recheck]='^stress\.stress_optimistic$'
	[batch-einval-in-reap]='^unit\.test_read_batch$'
	[stream-close-keeps]='^unit\.test_stream_hold$'
	[stream-share]='^unit\.test_stream_hold$'
	[retire-restart]='^unit\.test_pending_linger$'
	[ra-share-twice]='^unit\.test_readahead$'
	[leaf-no-dead]='^unit\.test_radix(_shift2)?$'
	[active-no-leaf-lock]='^regress\.regress_active_invalidate$'
	[drop-referenced]='^unit\.test_drop_behind$'
	[drop-no-slack]='^unit\.test_drop_behind$'
	[bulk-marks]='^unit\.test_drop_behind$'
	[fed-refills]='^unit\.test_drop_behind$'
	[run-late-release]='^regress\.regress_run_release$'
	[frames-unsorted]='^unit\.test_page_alloc$'
)

work=$(mktemp -d /tmp/lpc-mutants.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "mutants: copying the tree to $work"
(cd "$root" && git ls-files -co --exclude-standard -z | grep -zv '^build' |
	tar --null -cf - -T - 2>/dev/null) | tar -xf - -C "$work" || exit 2
mkdir -p "$work/src-orig"
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
cmake -S "$work" -B "$work/build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DLPC_DEBUG=ON \
	-DLPC_SANITIZE= -DLPC_SQLITE=OFF >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 2; }
cmake --build "$work/build" -j "$jobs" >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 2; }

# suite LOG: the C suite as each mutant runs it (unit, debug and regression
# tests first, they kill fast; then stress), in the copy's build.
# stress_wpin is left out: its checks name the contract (I.5: "mixes two
# write pins' bytes"), not a debug rule, and with --stop-on-failure its
# failure stopped the suite before the test that names the rule
# (no-redirty and opt-no-seq-recheck survived so; test_wpin and regress_wpin
# still run).  bench.scan is left out: a check that `lpcbench scan` runs
# (about 2 s), it reads 12 passes of a 64 MiB file, and under yield injection
# (a yield or a 1-50 us sleep at 5% of the steps) it took 36 s alone at load
# 13 and 102 s at load 24, and ran past its 120 s TIMEOUT beside the rbd
# tests in ctest -j2: a timeout that names no rule, charged to the mutant.
# No mutant is known to be killed by it alone (readahead's rules are named
# by test_readahead), and every CI variant runs it without yields.
suite() {
	(cd "$work/build" && LPC_YIELD=all LPC_YIELD_PROB=0.05 LPC_STRESS_SECONDS=$stress_s \
		timeout -k 5 "${2:-$limit}" ctest -j "$jobs" -LE 'model|packaging|examples|yield' \
		-E '^(stress\.stress_wpin|bench\.scan)$' --stop-on-failure --output-on-failure) >>"$1" 2>&1
}

# killers LOG REGEX: the tests that killed a mutant before (killer[] below),
# alone, with the suite's settings; a mutant they kill is judged without the
# rest of the suite (a run of the whole suite took 2-5 minutes a mutant on a
# loaded 2-CPU machine, mostly in tests that cannot kill it).
# A stress test kills by chance: each runs up to three times (until it
# fails), 4 s each.  LIMIT (default the mutant's limit) bounds the run.
killers() {
	(cd "$work/build" && LPC_YIELD=all LPC_YIELD_PROB=0.05 LPC_STRESS_SECONDS=4 \
		timeout -k 5 "${3:-$limit}" ctest -j "$jobs" -R "$2" --repeat until-fail:3 \
		--stop-on-failure --output-on-failure) >>"$1" 2>&1
}

# The baseline: the unmutated tree must pass the same suite.  A mutant's
# verdict rests on its failure naming a rule; when the suite fails without
# any mutant (a test that fails by chance, a machine without a feature) no
# verdict means anything, so that is an error of the run, never survivors.
echo "mutants: baseline (the unmutated tree)"
start=$SECONDS
# The whole suite, where a mutant's run stops at its first failure: four
# times a mutant's limit (it took 121 s of the 120 once on a loaded machine).
# --quick: only the killers' tests (the CI variants run the whole suite).
if ((quick)); then
	all_killers=$(printf '%s|' "${killer[@]}")
	# Every killer, three passes each: as long as a mutant's whole suite
	# (four limits), not one mutant's killers (it took 121 s on a loaded
	# machine once the killers grew to 17 tests).
	killers "$work/baseline.log" "${all_killers%|}" $((4 * limit))
else
	suite "$work/baseline.log" $((4 * limit))
fi
if (($? != 0)); then
	grep -E 'FAIL|Failed|\*\*\*' "$work/baseline.log" | head -n 20
	by=$(grep -oE 'Test +#[0-9]+: [^ ]+ \.*\**(Failed|Subprocess aborted|Exception|Timeout)' \
		"$work/baseline.log" | head -n 1 | awk '{print $3}')
	echo "mutants: ERROR: the baseline failed (${by:-ctest}, $((SECONDS - start)) s): the suite fails" \
		"without a mutant, so no mutant can be judged"
	exit 2
fi
echo "mutants: baseline passed ($((SECONDS - start)) s)"

# flaky LOG TESTS...: run each failed test again on the unmutated tree (the
# caller has restored the mutated file), with the suite's settings, up to
# 10 tries until it fails.  Return: 0 if every one failed there too (the
# failures were not the mutant's), 1 if one passed its 10 tries or the
# tree did not build.
flaky() {
	local log=$1 t
	shift
	cmake --build "$work/build" -j "$jobs" >>"$log" 2>&1 || return 1
	for t in "$@"; do
		(cd "$work/build" && LPC_YIELD=all LPC_YIELD_PROB=0.05 LPC_STRESS_SECONDS=$stress_s \
			timeout -k 5 "$limit" ctest -R "^${t//./\\.}\$" --repeat until-fail:10 \
			--output-on-failure) >>"$log" 2>&1 && return 1
	done
	return 0
}

killed=0 survived=0 errors=0 results=()
for m in "${mutants[@]}"; do
	IFS='|' read -r name file expr <<<"$m"
	if ((${#want[@]})) && [[ " ${want[*]} " != *" $name "* ]]; then
		continue
	fi
	if ((quick && ${#want[@]} == 0)) && [[ " ${full_only[*]} " == *" $name "* ]]; then
		continue
	fi
	cp "$work/$file" "$work/src-orig/cur"
	sed -i "$expr" "$work/$file"
	if cmp -s "$work/$file" "$work/src-orig/cur"; then
		results+=("$name: ERROR (the sed no longer matches $file)")
		survived=$((survived + 1))
		continue
	fi
	start=$SECONDS
	log="$work/$name.log"
	if ! cmake --build "$work/build" -j "$jobs" >"$log" 2>&1; then
		results+=("$name: ERROR (does not build)")
		survived=$((survived + 1))
		cp "$work/src-orig/cur" "$work/$file"
		continue
	fi
	rc=1
	if [[ -n ${killer[$name]:-} ]]; then
		killers "$log" "${killer[$name]}"
		rc=$?
	fi
	rule=$(grep -oE 'rule [A-Z0-9-]+ violated' "$log" | head -n 1 | awk '{print $2}')
	if [[ -z $rule && $rc != 124 && $rc != 137 ]]; then
		suite "$log" $((4 * limit))
		rc=$?
		rule=$(grep -oE 'rule [A-Z0-9-]+ violated' "$log" | head -n 1 | awk '{print $2}')
	fi
	took=$((SECONDS - start))
	# The test whose output (ctest prints it after the test's result line)
	# named the rule, or else the first test that failed.
	by=$(awk '/Test +#[0-9]+: [^ ]+ \.*\**(Failed|Subprocess aborted|Exception)/ {
			t = $0; sub(/.*Test +#[0-9]+: /, "", t); sub(/ .*/, "", t) }
		/rule [A-Z0-9-]+ violated/ { print t; exit }' "$log")
	[[ -n $by ]] || by=$(grep -oE 'Test +#[0-9]+: [^ ]+ \.*\**(Failed|Subprocess aborted|Exception)' "$log" |
		head -n 1 | awk '{print $3}')
	if [[ -n $rule ]]; then
		results+=("$name: KILLED by rule $rule in ${by:-?} (${took} s)")
		killed=$((killed + 1))
	elif ((rc == 124 || rc == 137)); then
		results+=("$name: SURVIVED (timeout after ${took} s; a timeout does not count)")
		survived=$((survived + 1))
	else
		grep -E 'FAIL|Failed|\*\*\*' "$log" | head -n 5
		mapfile -t failed < <(grep -oE 'Test +#[0-9]+: [^ ]+ \.*\**(Failed|Subprocess aborted|Exception|Timeout)' \
			"$log" | awk '{print $3}' | sort -u)
		cp "$work/src-orig/cur" "$work/$file"
		if ((${#failed[@]})) && flaky "$work/$name.flaky.log" "${failed[@]}"; then
			grep -E 'FAIL|\*\*\*' "$work/$name.flaky.log" | head -n 5
			msg="flaky test ${failed[*]}: fails without the mutant too; not judged"
			results+=("$name: ERROR ($msg; logs: $log, $work/$name.flaky.log)")
			errors=$((errors + 1))
		else
			results+=("$name: SURVIVED (ctest exit $rc, no rule named; log: $log)")
			survived=$((survived + 1))
		fi
	fi
	cp "$work/src-orig/cur" "$work/$file"
done
# Leave the copy's build as the unmutated tree (not needed: removed on exit).
echo
echo "=== mutants"
printf '%s\n' "${results[@]}"
echo "killed $killed, survived $survived, not judged (flaky tests) $errors"
((survived == 0)) || exit 1
((errors == 0)) || exit 2
