/* SPDX-License-Identifier: MIT */
/*
 * alloc.c - the frame allocator and the deferred free of published pages.
 *
 * Where a frame comes from: this thread's private list (no atomic RMW, no
 * lock), else a batch from the cache's shared list (free_lock) and, when
 * that runs short, frames never handed out before (fresh_carve: their
 * descriptors are written then, not at create), else
 * reclaim(): one thread at a time takes the frames that wait only for a grace
 * period (the pending list) and the frames on other threads' private lists,
 * waits for one grace period, and puts them on the shared list.  When that
 * finds nothing, the allocator evicts (direct reclaim through the pool's
 * evict callback, reclaim/evict.c: at most LPC_DIRECT_BATCHES batches), and
 * the next reclaim() takes the evicted frames from pending with one grace
 * period.  When nothing can be evicted either (every frame
 * held or locked), the allocation sleeps and retries with a backoff for
 * alloc_wait_ms, then fails with -ENOMEM; LPC_ALLOC_NOWAIT (lpc_pread)
 * fails after a few rounds without sleeping.  An allocation that takes
 * frames from the shared list and leaves fewer than wake_below wakes the
 * background reclaimer (one relaxed load of nfree: no shared write above
 * the watermark).
 *
 * Private lists, and how another thread takes one.  The owner pushes and
 * pops its list with plain loads and stores.  A taker (steal_begin and
 * steal_end below, walking the blocks with core's lpc_towner_for_each) must
 * therefore know the owner is off the list, for as long as it works on it.  Steps, the owner's (S) and the taker's (T):
 *   S1 rcu_read_lock, then load t->steal (acquire); if set, leave the list
 *      alone and use the shared list;
 *   S2 else push or pop the list;
 *   S3 rcu_read_unlock.
 *   T1 set t->steal on every block (relaxed: T2 orders it);
 *   T2 synchronize_rcu;
 *   T3 take each flagged list (reclaim keeps one frame for its caller and
 *      puts the rest on the shared list);
 *   T4 clear t->steal (release: S1 of the owner's next section then sees
 *      the list empty).
 * Why it holds: a section that began before T1's store became visible ends
 * before T2 returns (the grace period waits for it); one that began after
 * reads the flag set (the grace period's membarrier orders T1's store before
 * every later section's load: the store-buffering pattern that RCU forbids).
 * So between T2 and T4 no owner touches its list.  The owner pays an inlined
 * read lock and one load of its own line: no atomic RMW, the page-free fast
 * path is kept.  Checked, with broken variants spin must catch (no T2:
 * BUG_NO_GRACE_STEAL; no flag check in S1: BUG_OWNER_IGNORES_FLAG), in
 * tests/model/steal.pml; tests/stress/stress_alloc.c runs it.
 *
 * Hoarding is still bounded so that reclaim (a grace period) stays rare: a
 * refill takes at most an eighth of the shared free frames, and once fewer
 * than low_free remain, private frees go to the shared list.
 *
 * Every wait for a grace period here (OD4, T2 of reclaim() and of the
 * drain, RT3, reclaim()'s rcu_barrier) is counted for the cache by the
 * thread that waits (core/thread.h lpc_count_gp: lpc_stats grace_periods
 * and grace_period_ns), around the wait only: counting only, no step moves.
 *
 * Segments.  The shared list is a stack of segments of at most tbatch
 * frames: a segment's head frame holds the next segment's head and its
 * count (page.h fl, the descriptor's spare words, unused by a free frame),
 * and its frames are chained by next, NULL after the last.  Whoever frees a
 * chain cuts it into segments before it takes free_lock (the chain is its
 * own: the reclaimer's drain, call_rcu's batch, reclaim()); under the lock
 * a free pushes its segments and a refill pops one, O(1) either way.  Before,
 * a refill walked tbatch cold descriptors under free_lock, and with two
 * threads missing the lock was held long enough to be waited for (and, on a
 * loaded machine, preempted in).  A take of fewer frames than the top
 * segment holds (one frame, or a refill short of frames) walks that many.
 * Steps (the chain's owner O frees, a taker T takes):
 *   SG0 O sorts its chain by frame, ascending (chain_sort: so that
 *       segments, and the refills that take them, are frames back to back)
 *   SG1 O cuts its chain, outside free_lock (nobody else reaches it: a
 *       drain's, a call_rcu batch's, reclaim()'s, a thread's give-back or
 *       exit), into segments of 1..tbatch frames: each head's fl.seg_n is
 *       its count, fl.seg_next the next head, next NULL after each
 *       segment's last frame (lpc_page_free_chain; a give-back is one).
 *   SG2 Under free_lock O pushes them (the last head's seg_next = free,
 *       free = the first head) and adds their frames to nfree.
 *   SP1 Under free_lock T takes the top segment whole when seg_n <= want
 *       (free = its seg_next); else splits it: walks `want` frames,
 *   SP2 makes the frame after the last one taken the rest's head (seg_n
 *       less what it took, the same seg_next) and free,
 *   SP3 and ends its own part (the last taken frame's next = NULL);
 *       with no segment at all it reserves fresh frames (fresh_carve).
 *       It subtracts what it took from nfree before the unlock.
 *   SG3 After the unlock the chain is T's alone (fresh_init writes the
 *       reserved descriptors).  fl is read and written only in SG1, SG2,
 *       SG4 and SP1-SP3: a frame's spare words mean nothing once it is
 *       taken.
 *   SG4 A thread whose private list grows past 2 * tbatch cuts tbatch
 *       frames off its front as one segment, inside its S1-S3 section
 *       (lpc_page_free_private), and pushes it (SG2).
 * Pending, the frames that wait for a grace period:
 *   PD1 a deferred free pushes its frame (lpc_page_free_deferred,
 *       lpc_page_free_evicted; a chain: lpc_page_free_removed_chain) on
 *       pending under free_lock, npending counted with it;
 *   PD2 a drain (lpc_page_pending_drain, under reclaim_lock) takes pending
 *       whole under free_lock and counts itself in batches_in_flight in
 *       the same critical section;
 *   PD3 after its grace period (T2) it frees the chain (SG1-SG2) and
 *       uncounts itself.
 * Checked in tests/model/free_segs.pml, with the census (CS1-CS3 in
 * lpc_pool_census) and broken variants spin must catch (a split that
 * miscounts the rest: BUG_SPLIT_MISCOUNT; no SP3: BUG_NO_SP3; SG4's
 * segment pushed twice: BUG_PUSH_TWICE).
 * Invariant under free_lock (rule SEG-COUNT, on each segment taken and in
 * lpc_pool_census): every segment's chain is seg_n long, and the frames on
 * the segments plus the fresh ones are nfree.
 *
 * Counting the frames (lpc_pool_census, for tests and the debug rule
 * FRAMES-ACCOUNTED).  A free frame is on a segment, fresh, on a thread's
 * private list, on pending, or in transit: in a call_rcu batch, a drain's
 * or a reclaim()'s hands (batches_in_flight, reclaim_lock), or a free's
 * between its decrement and its list.  Only a census that sees none in
 * transit can add them up: reading nfree (lpc_stats) and npending in two
 * sections, with a drain taking pending between the two, counts the
 * drain's frames in neither (the reclaimer runs a drain whenever an
 * invalidate leaves a batch pending, at any time after it: that was the
 * "frames missing once the cache was quiet" that stress_mixed reported,
 * regress_quiet_drain.c).
 *
 * Where a frame goes:
 *  - A private page (PUBLISHED clear: never in an index since it was
 *    allocated) has exactly one user, its owner.  lpc_page_free_private puts
 *    it on the thread's list with plain stores: the page-free fast path.
 *  - A published page may still be in the hands of a speculative getter that
 *    loaded its pointer from a slot before it was removed: such a getter can
 *    still try to increment ref (it fails, ref is 0) and must never see the
 *    frame reused as a private page within its read section (a miss of the
 *    remover's thread may reuse it at once: MR1-MR5 below).  So it goes on
 *    the cache's pending list; every LPC_FREE_BATCH pages the list is handed to
 *    call_rcu as one batch (one grace period per batch, not per page), whose
 *    callback moves it to the shared free list.  Evicted pages
 *    (lpc_page_free_evicted) stay on pending: their evictor's caller takes
 *    pending with its own grace period at once (lpc_page_pending_drain, the
 *    reclaimer; reclaim(), direct reclaim), which call_rcu would delay by
 *    its thread's 10 ms sleep after each batch (reclaim/reclaimer.c).  So
 *    do lpc_invalidate's when its thread does not keep them (OD1-OD6
 *    below; lpc_page_free_removed_chain: a gang of pages with one take of
 *    free_lock), and the invalidate wakes the reclaimer
 *    once a batch's worth waits (lpc_page_pending_kick), whose next turn
 *    drains them before it evicts anything (fewer than a batch: it drains
 *    them after its linger, RL1-RL4, so a quiet cache's frames_free comes
 *    back whole): a thread that invalidates and
 *    reads again (seed 002's loop) finds its frames back on the free list
 *    within one grace period, with no malloc, no call_rcu and no eviction
 *    of the pages it still caches.
 *
 * Frames in transit, and why -ENOMEM still means "none free anywhere".  A
 * frame is out of every list for a moment while it is being freed: between a
 * put's decrement to 0 and its push on the pending list, and between a
 * batch's removal from the pending list and call_rcu queueing it.  (Before
 * commit 62bc225, a reclaimer in either window found nothing and returned -ENOMEM, 64 rounds
 * in a row in the second, since its rcu_barrier waited for a batch not yet
 * queued.)  Rule: every step from a published frame's decrement to 0 (or
 * freeze) to "on pending" or "queued by call_rcu" runs in one RCU read
 * section (lpc_page_release_last, and lpc_invalidate for a frozen page; a
 * thread that is not registered is registered for the call).  Then a
 * reclaimer, after its grace period T2, knows that every frame whose free
 * began before T2 is on pending, or on the shared list, or in a batch
 * counted in batches_in_flight whose call_rcu has returned; so it reads
 * pending and batches_in_flight together under free_lock and waits for the
 * batches (rcu_barrier) or retries for pending (-EAGAIN: the next round
 * takes them with its own grace period).  A free that began after T2 began
 * is seen the same way by the next round, whose T2 waits for it; so a frame
 * in transit costs at most one extra round, never -ENOMEM.  The cost: a put
 * that is not the last takes no read section (page.h: one CAS, as before);
 * the last one takes an inlined read lock.  The same argument is the reason
 * call_rcu need not be called under free_lock.  The background reclaimer's
 * lpc_page_pending_drain takes pending too; it holds reclaim_lock from the
 * take until its frames are on the shared list, so a reclaim() never runs
 * while frames are in a drain's hands (it waits for the lock, then finds
 * them free), and it counts itself in batches_in_flight meanwhile for the
 * readers that add up free, pending and in flight.
 *
 * A thread's own deferred frames (lpc_invalidate's; seed 002's loop).  With
 * every invalidated frame on pending, the reclaimer's drain landed them on
 * the shared list, and two threads that each invalidate and read again
 * allocated each other's frames: the descriptor and the 4 KiB of data last
 * written on the other CPU (and free_lock, the drain and its wake-ups
 * between them).  lpc_invalidate now keeps its chains for its own thread,
 * as the kernel's per-CPU page lists keep a CPU's frees for it.
 * Fields (struct lpc_tcache, core/thread.h): t->dfree and t->dfree_tail, the
 * chain by next, are written by the owner inside S1-S3 (OD2, OD5), by a
 * taker between T2 and T4 (OD6), and by the thread's exit or core's orphan
 * under lpc_threads_lock once the owner makes no more calls: the same
 * hand-off as t->free, so plain stores.  t->ndfree counts them; relaxed
 * atomic because lpc_stats (lpc_towner_sum: frames_free) and the census
 * read it without the owner.  Steps, the owner's (OD) against a taker's
 * (T above):
 *   OD1 inside the read section that froze and removed the chain
 *       (remove.c: B, then C), S1 (tlist_enter: the flag's acquire load
 *       comes after the removal in program order): if t->steal is set,
 *       the shared list runs short (nfree < low_free) or the thread would
 *       keep more than half the frames (private plus deferred), give up:
 *       the chain goes to pending (PD1) as before;
 *   OD2 else, still inside S1-S3, stamp the chain (core/rcu.h
 *       lpc_rcu_gp_stamp: a seq_cst fence after the removal, then the
 *       number of grace periods begun, GC1); first the covered front
 *       (t->dcov, the owner's alone, plain): an empty dfree (nothing kept
 *       yet, or a taker emptied it, OD6) has none, dcov = 0; a list whose
 *       stamp has passed (lpc_rcu_gp_passed(t->dfree_gp), before the
 *       raise below) is covered whole, dcov = ndfree; else dcov stays
 *       (those front frames were covered already).  Then append the chain
 *       BEHIND dfree (dfree_tail's next: the covered front stays in
 *       front), raise t->dfree_gp to the stamp (the newest chain's: it
 *       covers the list) and add to t->ndfree (LPC_DEBUG: each frame
 *       keeps the stamp).  Invariant (owner's, inside S1-S3): while dfree
 *       is not empty, dcov <= ndfree and each of its first dcov frames
 *       has a stamp below lpc_rcu_gp_done.  A taker (OD6) empties dfree
 *       and leaves dcov alone: the owner reads dcov only with dfree not
 *       empty (after T4's release, its S1 sees the list empty), and the
 *       list becomes non-empty again only at the owner's OD2, which finds
 *       it empty and resets dcov (else a stale dcov would cover the new,
 *       uncovered chain: own_defer.pml BUG_DCOV_NO_RESET);
 *   OD3 an allocation that finds t->free empty and t->dfree not, inside
 *       its section: if lpc_rcu_gp_passed(t->dfree_gp) (a grace period
 *       that took its number after the stamp has completed, GC3: the
 *       thread's own earlier one, another thread's landing, a steal's
 *       T2, the reclaimer's drain) it goes on to OD5 at once with the
 *       whole list covered; else, with dcov > 0, OD5 at once with the
 *       covered front alone (at most dcov frames); else, when it may wait
 *       (not NOWAIT, not NORECLAIM), it borrows if OD8 allows, or leaves
 *       its section (S3) and
 *   OD4 waits for a grace period of its own (lpc_rcu_synchronize).  Every
 *       frame on dfree was removed from its index before that grace period
 *       began: this thread removed it, before OD3, in program order, and
 *       only this thread pushes on its dfree (a taker only empties it).  A
 *       getter that loaded the page from its slot did so in a read section
 *       that began before the removal, so before OD4 began: it has ended.
 *       OD3's shortcut is the same argument for a wait begun after the
 *       stamp, so after the removal (core/rcu.h GC1-GC3);
 *   OD5 then (after OD4: in a new section, S1) moves at most tbatch
 *       frames off dfree's front onto t->free (own_take), never more than
 *       the covered ones (all after OD4 or a passed stamp, else dcov),
 *       and leaves dcov at the covered ones not moved; the rest stay
 *       on dfree (OD7).  If a taker
 *       flagged the block meanwhile, it leaves the lists alone: the taker
 *       moves dfree to pending (OD6) and this allocation tries again (with
 *       the flag set, from the shared list).  Rule DEFERRED-GRACE
 *       (LPC_DEBUG) checks here that a grace period which began after each
 *       moved frame's OD2 has completed (its stamp is below
 *       lpc_rcu_gp_done).
 *   OD6 A taker at T3, and the thread's exit (lpc_pool_thread_exit), put
 *       dfree on pending, never on a free list.  The exit must: no grace
 *       period need have passed since the last OD2.  The taker need not (OD1
 *       loads the flag after the removal, so a chain kept with the flag
 *       clear was removed before T1 and T2 covers it: tests/model/
 *       own_defer.pml finds no error with that move) but shares the code;
 *       the path is rare.  Both then kick (lpc_page_pending_kick: the
 *       reclaimer's linger, RL1-RL4, or a drain), or frames of a thread
 *       that exits or stops allocating would wait on pending until some
 *       later kick; reclaim() after its steal returns -EAGAIN if it took
 *       nothing else (its next round's T2 covers them).  The background
 *       reclaimer is such a taker too (RT1-RT4, lpc_page_deferred_take),
 *       of the deferred lists only.
 *   OD7 the frames OD5 does not move stay on dfree, covered (t->dfree_gp
 *       has passed until the next OD2 raises it; then OD2 counts them in
 *       dcov, the covered front, and the new chain goes behind them): the
 *       next OD3 moves another tbatch with no wait, from the front while
 *       the new chain is not covered yet.  So the private list stays within
 *       SG4's bound, and what a landing does not use stays where RT1-RT4
 *       and the steal take it.  (Before, OD7 gave them to the shared list
 *       inside OD5's section: each landing pushed about 4 MiB of frames
 *       on the shared stack for seed 002's loop, and with two threads
 *       each one's refills popped the other's, descriptors and data last
 *       written on the other CPU, and took free_lock every tbatch misses.)
 *   OD8 (own_borrow_ok) an allocation that may wait, whose dfree is not
 *       covered (OD3 found no passed stamp and dcov 0), takes a tbatch
 *       from the shared list instead of OD4's wait (a borrow: it goes on
 *       t->free as any refill, is counted in t->dborrow, and cycles through
 *       the thread's dfree after its next invalidate) while the shared
 *       list holds at least 2 * wake_below + tbatch + low_free frames, the
 *       thread keeps at most half the frames (private plus deferred, as
 *       OD1), and dborrow + tbatch <= LPC_OWN_BORROW_BATCHES * tbatch: the
 *       cap.  The next chain then lands about a loop later, behind the
 *       front the borrowed frames refill, usually covered by another
 *       thread's grace period meanwhile (seed 002's two threads: one wait
 *       covers both) instead of one wait per chain each.  dborrow is
 *       written by the owner inside S1-S3 and reset to 0 by a taker
 *       between T2 and T4 (steal_take, RT3) and by the exit, which move
 *       dfree (and, the steal, t->free) back within the pool's reach: the
 *       hand-off of t->free, plain.  The bound: between two such takes a
 *       thread borrows at most LPC_OWN_BORROW_BATCHES tbatch's (1024
 *       frames with the largest tbatch, 32: 4 MiB of 4 KiB pages, one of
 *       seed 002's loops), on top of the frames it removed itself; once
 *       at the cap it lands its own frames with OD4's wait as before,
 *       so a thread in a large cache (where nothing takes its lists)
 *       still reuses its own frames, never the shared list's, for ever
 *       (why OD7 stopped giving frames to the shared list, above).  A
 *       borrow never moves a deferred frame: DEFERRED-GRACE at OD5 is
 *       unchanged, and OD6's takers see dfree as before.
 * What the others see.  The background reclaimer (reclaim/reclaimer.c
 * refill) counts only the shared list and pending, but before it evicts
 * (free below `high`) it takes every dfree to pending (RT1-RT4 below) and
 * counts them there: a thread that invalidates and then idles, or reads
 * with lpc_pread only (NOWAIT: OD3 lands only what others' waits
 * covered), no longer holds its
 * frames while the reclaimer evicts cached pages for want of them (before
 * RT1-RT4: up to OD1's half of the cache, for as long as the thread lived;
 * tests/unit/test_own_hoard.c).  A frame lands on a private list only
 * within SG4's bound (OD5, OD7), which the reclaimer does not take.  An
 * allocator that finds the shared list empty takes every dfree with
 * reclaim()'s steal (before it evicts anything: "-ENOMEM means none free
 * anywhere" still holds, the steal reaches every dfree).  Cache
 * destroy: its closes and lpc_reclaim_retire come first, then core's
 * lpc_towner_orphan drops every block's lists (the frames are the pool's
 * memory, freed with it); a kick after the retire starts nothing.  Counts:
 * on dfree a frame is counted by lpc_pool_census (FRAMES-ACCOUNTED: free +
 * pending + private + deferred + in flight + in use == total) and by
 * lpc_stats' frames_free.  Checked, with broken variants spin must catch
 * (no OD4: BUG_OWN_NO_GRACE; OD5 ignores the flag: BUG_OD5_IGNORES_FLAG;
 * OD2 keeps the oldest chain's stamp: BUG_STAMP_OLDEST; the stamp loaded
 * before the removal: BUG_STAMP_EARLY; OD2 marks a front covered whose
 * stamp has not passed: BUG_FRONT_UNPASSED; OD2 keeps dcov on a list a
 * taker emptied: BUG_DCOV_NO_RESET), in tests/model/own_defer.pml; the
 * mutant own-no-grace (tests/mutants/run.sh) drops OD4 and rule
 * DEFERRED-GRACE names it.
 * Costs: at most one grace period per chain kept (per lpc_invalidate),
 * paid by the thread's first allocation that finds its private list empty
 * and no covered front after it, and no borrow allowed (OD8; not by
 * lpc_invalidate, which never waits for one), and none when another wait
 * covered the chain first, nor for a miss (MR1 below): with two threads in
 * seed 002's loop, misses take the uncovered frames and nothing waits.
 *
 * A thread's own frames reused by its misses at once (MR1-MR5).  The grace
 * period OD4 waits for protects one thing: a speculative getter (filemap/
 * lookup.c R2-R4) that loaded a page from its slot before the removal may
 * still try R3 on the frame.  The descriptors are type-stable (an array,
 * never freed), R3 is increment-unless-zero and R4 re-checks the slot, so
 * the kernel's scheme needs no grace period for a frame that is published
 * again at once; what breaks without one is a frame reused as a PRIVATE
 * page, whose owner writes ref with plain stores and whose put takes the
 * private fast path (PUBLISHED clear: spin's BUG_NO_GRACE).  So:
 *   MR1 An allocation with LPC_ALLOC_MISS (the miss path: miss.c M1, run.c
 *       U2; nothing else) that finds t->free empty after OD3, and so no
 *       covered frame on dfree (no passed stamp, dcov 0), pops dfree's
 *       front frame (own_pop_uncovered, the owner inside S1-S3) with no
 *       wait.  Uncovered frames never go on t->free, which every
 *       allocation takes from; they leave dfree only here, at OD5 once
 *       covered (rule DEFERRED-GRACE), and at OD6 (to pending).
 *   MR2 page_init_private leaves such a frame's ref at 0: a stale getter's
 *       R3 fails on it throughout the re-initialisation (seq section,
 *       identity cleared, flags 0).
 *   MR3 M2 (lpc_filemap_prep_miss) stores the identity, LOCKED|PUBLISHED,
 *       then ref = 2 with a release store.  A getter whose R3 (acquire
 *       CAS) succeeds after that sees PUBLISHED, so its put is the
 *       published one (lpc_page_release: atomic decrements; the last,
 *       lpc_page_release_last, frees to pending).
 *   MR4 From M2 on ref changes only by RMW: an insert that fails (M3
 *       -EEXIST) drops its two references with lpc_page_release
 *       (lpc_filemap_unprep_miss), never the private free, so a stale
 *       getter's reference is not lost, and the frame, never in a slot
 *       since M2, reaches a private use only after pending's grace period.
 *   MR5 A stale getter that wins R3 on the reused frame fails R4 (its slot
 *       no longer holds the frame) and puts; unless the frame was reused
 *       for that very slot, where it is a true hit on the new page, locked
 *       until M5 (M6 waits).  So a lookup may see a frame's identity change
 *       between R2 and R4, never a page R4 accepts with another identity
 *       (rule GRACE-PERIOD, after R4: lookup.c).
 * The lockless readers that use a descriptor without a reference cope with
 * a reuse as they cope with a removal: the evictor's scan (evict.c E1-E3:
 * ref 0 until MR3, then LOCKED, and the slot re-checked under the index
 * lock), optimistic reads (seq moves at page_init_private and M2; the slot
 * is re-checked after the copy: optimistic.h), gang walks (the slot
 * re-checked under the leaf or index lock: remove.c, writeback/dirty.c).
 * Checked in tests/model/spec_get.pml (MISS_REUSE, with broken variants:
 * references before PUBLISHED, BUG_MR_REF_EARLY; the old private free of
 * a failed insert, BUG_MR_PRIVATE_UNPREP; an uncovered frame handed to a
 * private use, BUG_MR_TO_PRIVATE).
 *
 * The "count is 1, so it is mine" shortcut is never taken on a published page:
 * a speculative getter may be about to increment that count.  Both rules are
 * checked, with broken variants that spin must catch, in
 * tests/model/spec_get.pml (BUG_NO_GRACE, BUG_COUNT_ONE_IS_MINE).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "page/pool.h"

#define LPC_FREE_BATCH 64
#define LPC_DIRECT_BATCHES 4   /* direct reclaim's effort per round */
#define LPC_NOWAIT_ROUNDS 4    /* eviction rounds of a LPC_ALLOC_NOWAIT call */
#define LPC_OWN_BORROW_BATCHES 32 /* OD8's cap per thread, in tbatch's */

/* Pushes the segments first..last (heads, chained by fl.seg_next; n frames in
 * all) on the shared list: O(1) under free_lock. */
static void segs_push(struct lpc_pool *c, struct lpc_page *first, struct lpc_page *last,
		      uint32_t n)
{
	pthread_mutex_lock(&c->free_lock);
	last->fl.seg_next = c->free;					/* SG2 */
	c->free = first;
	atomic_store_explicit(&c->nfree, atomic_load_explicit(&c->nfree, memory_order_relaxed) + n,
			      memory_order_relaxed);
	pthread_mutex_unlock(&c->free_lock);
}

/* SG0: two chains in ascending frame order (NULL-terminated) made one. */
static struct lpc_page *chain_merge(struct lpc_page *a, struct lpc_page *b)
{
	struct lpc_page *head = NULL, **at = &head;

	while (a && b) {
		if (a->id < b->id) {
			*at = a;
			a = a->next;
		} else {
			*at = b;
			b = b->next;
		}
		at = &(*at)->next;
	}
	*at = a ? a : b;
	return head;
}

/* SG0: the longest ascending or descending stretch at the front of *rest,
 * cut off and returned ascending (a descending one reversed); *rest is
 * what follows it. */
static struct lpc_page *chain_cut_run(struct lpc_page **rest)
{
	struct lpc_page *h = *rest, *q = h, *rev = NULL, *nx;

	if (!h->next || h->next->id > h->id) {
		while (q->next && q->next->id > q->id)
			q = q->next;
		*rest = q->next;
		q->next = NULL;
		return h;
	}
	for (;;) {
		nx = q->next;
		q->next = rev;
		rev = q;
		if (!nx || nx->id > q->id)
			break;
		q = nx;
	}
	*rest = nx;
	return rev;
}

/*
 * SG0: a chain of free frames in ascending frame order, so that SG1's
 * segments, and the refills that pop them, hand out frames that lie back
 * to back (the arena's order, lpc_page_frame): a run's frames (run.c U2,
 * sorted there too) are then few stretches, one READ_FIXED each on
 * io_uring (uring.c io_pieces), rather than one stretch per page.
 * Why: frames come back in whatever order their pages were freed, and
 * that order stayed.  Two streams' windows take frames from the shared
 * list in turn, a segment each, so each stream's frames alternate with
 * the other's; the invalidate of the file (lpcbench scan's cold start,
 * lpc_fadvise DONTNEED) freed them in page order, which kept them mixed
 * for every later pass: 40-55 % of the readahead requests had more than
 * URING_PIECES stretches and went as READV (the kernel pins each page),
 * and a one-scanner pass after two-scanner ones took 105-117 us of CPU
 * per MiB instead of 75-81 and read 12-15 % slower (lpcbench scan --calls
 * 128 --threads 1,2 --variants lpc_uring against --threads 1, counted by
 * request kind).  Natural merge sort: the chain's ascending and
 * descending stretches (an eviction batch is ascending, a private list
 * descending) are merged in a binary counter of levels, O(n log r) for r
 * stretches; no allocation.  A long chain is first dealt into buckets by
 * frame, slices of its span (chain_sort), and each bucket merged alone:
 * its descriptors lie together in the array and stay in the caches
 * through its merges, where over a whole long chain in random order every
 * step of every merge missed them (65536 shuffled frames: 27-46 ms
 * against 1 ms for one walk of the chain; tests/attack_frames
 * att_sortcost).  A chain already in order costs one walk more.  The chain
 * is the caller's alone (SG1), so its order is free to choose: no step of
 * the protocol sees it (tests/model/free_segs.pml models SG1 on).
 */
#define SORT_SMALL 1024	/* frames: a chain this short is merged as it is */
#define SORT_BUCKETS 256	/* slices of a longer chain's span, sorted one by one */

static struct lpc_page *chain_sort_block(struct lpc_page *head)
{
	struct lpc_page *level[33] = { NULL }, *carry;
	unsigned top = 0, i;

	while (head) {
		carry = chain_cut_run(&head);
		for (i = 0; i < top && level[i]; i++) {
			carry = chain_merge(level[i], carry);
			level[i] = NULL;
		}
		if (i == top)
			top++;
		level[i] = carry;
	}
	carry = NULL;
	for (i = 0; i < top; i++)
		if (level[i])
			carry = chain_merge(level[i], carry);
	return carry;
}

/* SG0 over a chain: already in order, as it is; short, chain_sort_block;
 * else dealt into SORT_BUCKETS buckets by frame (each the frames of one
 * slice of the chain's span, its descriptors next to each other in the
 * array: its sort stays in the caches), each sorted, joined in order. */
static struct lpc_page *chain_sort(struct lpc_page *head)
{
	struct lpc_page *bh[SORT_BUCKETS], *bt[SORT_BUCKETS], *q, *out = NULL, **at = &out;
	uint32_t lo = UINT32_MAX, hi = 0, prev = 0, n = 0, down = 0;
	uint64_t span;

	for (q = head; q; q = q->next, n++) {
		lo = q->id < lo ? q->id : lo;
		hi = q->id > hi ? q->id : hi;
		down += n && q->id < prev;
		prev = q->id;
	}
	if (!down)
		return head;
	if (n <= SORT_SMALL)
		return chain_sort_block(head);
	span = (uint64_t)hi - lo + 1;
	for (unsigned b = 0; b < SORT_BUCKETS; b++)
		bh[b] = NULL;
	for (q = head; q;) {
		struct lpc_page *nx = q->next;
		unsigned b = (unsigned)((uint64_t)(q->id - lo) * SORT_BUCKETS / span);

		if (bh[b])
			bt[b]->next = q;
		else
			bh[b] = q;
		bt[b] = q;
		q = nx;
	}
	for (unsigned b = 0; b < SORT_BUCKETS; b++) {
		if (!bh[b])
			continue;
		bt[b]->next = NULL;
		*at = chain_sort_block(bh[b]);
		while (*at)
			at = &(*at)->next;
	}
	return out;
}

void lpc_page_free_chain(struct lpc_pool *c, struct lpc_page *head, struct lpc_page *tail,
			 uint32_t n)
{
	struct lpc_page *first = NULL, *last = NULL, *q;
	uint32_t left = n;

	if (!n)
		return;
#if LPC_DEBUG
	uint32_t len = 0;

	for (struct lpc_page *d = head;; d = d->next) {
		lpc_debug_check(atomic_load_explicit(&d->ref, memory_order_relaxed) == 0,
				"FREE-FRAME-REF", d, "frame put on the free list with ref != 0");
		len++;
		if (d == tail)
			break;
	}
	lpc_debug_check(len == n, "PENDING-CHAIN", head,
			"chain of %u frames to free is %u long to its tail", n, len);
#endif
	tail->next = NULL;
	q = head = chain_sort(head);					/* SG0 */
	/* Segments of at most tbatch frames, cut here, outside free_lock (the
	 * chain is ours): a taker then pops one whole under the lock. */
	while (left) {							/* SG1 */
		uint32_t k = left < c->tbatch ? left : c->tbatch;
		struct lpc_page *h = q, *t = q;

		for (uint32_t i = 1; i < k; i++)
			t = t->next;
		left -= k;
		if (left)
			q = t->next;
		t->next = NULL;
		h->fl.seg_n = k;
		h->fl.seg_next = NULL;
		if (last)
			last->fl.seg_next = h;
		else
			first = h;
		last = h;
	}
	if (first)
		segs_push(c, first, last, n);
}

/* Rule PENDING-CHAIN (LPC_DEBUG): a chain put on or taken off pending is
 * head..tail, NULL after tail, and n long: the counts that lpc_stats' readers
 * and reclaim() add up, and the tail a take splices by, are the list's. */
static void debug_chain(const struct lpc_page *head, const struct lpc_page *tail, uint32_t n)
{
#if LPC_DEBUG
	const struct lpc_page *q = head, *last = NULL;
	uint32_t k = 0;

	for (; q && k <= n; q = q->next, k++)
		last = q;
	lpc_debug_check(k == n && last == tail, "PENDING-CHAIN", head,
			"pending chain of %u frames ending at frame %u, counted %u ending at %u", k,
			last ? last->id : 0u, n, tail ? tail->id : 0u);
#else
	(void)head;
	(void)tail;
	(void)n;
#endif
}

struct lpc_free_batch {
	struct rcu_head rcu;
	struct lpc_pool *pool;
	struct lpc_page *head, *tail;
	uint32_t n;
};

static void free_batch_rcu(struct rcu_head *head)
{
	struct lpc_free_batch *b = caa_container_of(head, struct lpc_free_batch, rcu);
	struct lpc_pool *c;

	lpc_rcu_callback_enter(head);
	c = b->pool;

	lpc_page_free_chain(c, b->head, b->tail, b->n);
	/* Release: the barrier's waiter that sees the count drop sees the list. */
	atomic_fetch_sub_explicit(&c->batches_in_flight, 1, memory_order_release);
	free(b);
}

/*
 * Hands the pending list to call_rcu.  Context: free_lock held; drops it.
 * Return: true if a batch was submitted.
 */
static bool pending_submit_unlock(struct lpc_pool *c)
{
	struct lpc_free_batch *b;
	struct lpc_page *head = c->pending, *tail;
	uint32_t n = atomic_load_explicit(&c->npending, memory_order_relaxed);

	if (!head) {
		pthread_mutex_unlock(&c->free_lock);
		return false;
	}
	b = malloc(sizeof(*b));
	if (!b) {
		/* Keep them pending; the next free or allocation retries. */
		pthread_mutex_unlock(&c->free_lock);
		return false;
	}
	tail = c->pending_tail;
	c->pending = NULL;
	c->pending_tail = NULL;
	atomic_store_explicit(&c->npending, 0, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->batches_in_flight, 1, memory_order_relaxed);
	pthread_mutex_unlock(&c->free_lock);

	debug_chain(head, tail, n);
	b->pool = c;
	b->head = head;
	b->tail = tail;
	b->n = n;
	lpc_yield_point(LPC_YP_C1);
	/* call_rcu is legal inside a read section: a put may run in one. */
	lpc_call_rcu(&b->rcu, free_batch_rcu);
	return true;
}

/* A published frame's state as it leaves for pending: the debug rules, and
 * CLOCK2's active count. */
static void deferred_prep(struct lpc_pool *c, struct lpc_page *p)
{
#if LPC_DEBUG
	lpc_debug_check(atomic_load_explicit(&p->ref, memory_order_relaxed) == 0,
			"FREE-FRAME-REF", p, "deferred free of a page with ref != 0");
	lpc_debug_check(atomic_load_explicit(&p->dbg_state, memory_order_relaxed) != LPC_DBG_FREE,
			"FRAME-FREED-TWICE", p, "deferred free of a frame already free");
	lpc_page_debug_not_reading(p, "deferred free");
	lpc_page_debug_seq_closed(p, "deferred free");
	atomic_store_explicit(&p->dbg_state, LPC_DBG_FREE, memory_order_relaxed);
	/* DEFERRED-GRACE's stamp: none on pending, which is left only through
	 * a grace period (call_rcu's is one that lpc_rcu_gp_done does not
	 * count); OD2 stamps a kept chain after this. */
	p->dbg_gp = 0;
#endif
	/* An active page leaves CLOCK2's active count here (reclaim/evict.c):
	 * its flags change only by RMW now (ref 0: nobody can lock it). */
	if (atomic_fetch_and_explicit(&p->flags, ~LPC_PG_ACTIVE, memory_order_relaxed) &
	    LPC_PG_ACTIVE)
		atomic_fetch_sub_explicit(&c->nactive, 1, memory_order_relaxed);
}

/* Puts p on pending; with `submit`, a full batch goes to call_rcu. */
static void free_deferred(struct lpc_page *p, bool submit)
{
	struct lpc_pool *c = p->pool;
	uint32_t n;

	lpc_yield_point(LPC_YP_C);
	deferred_prep(c, p);
	/* The caller's read section (registered, or scoped) also makes
	 * call_rcu below legal. */
	pthread_mutex_lock(&c->free_lock);
	p->next = c->pending;						/* PD1 */
	if (!c->pending)
		c->pending_tail = p;
	c->pending = p;
	n = atomic_load_explicit(&c->npending, memory_order_relaxed) + 1;
	atomic_store_explicit(&c->npending, n, memory_order_relaxed);
	if (n < LPC_FREE_BATCH || !submit) {
		pthread_mutex_unlock(&c->free_lock);
		/* The first frame on an empty pending list asks for the
		 * reclaimer's linger (RL1-RL4): a last put of pages a truncate
		 * or an invalidate removed while they were held, or a last
		 * close's, would otherwise wait there until the next kick
		 * (tests/attack_batch att_trunc_held, att_close_pend).  Once
		 * per emptied list, never on a hit: a deferred free is the
		 * last put of a page already out of its index. */
		if (n == 1 && submit)
			lpc_page_pending_kick(c);
		return;
	}
	pending_submit_unlock(c);
}

/* Puts a prepared chain (deferred_prep) of n frames on pending. */
static void pending_push(struct lpc_pool *c, struct lpc_page *head, struct lpc_page *tail,
			 uint32_t n)
{
#if LPC_DEBUG
	/* A kept chain moved here (OD6) drops its stamp: deferred_prep. */
	for (struct lpc_page *q = head;; q = q->next) {
		q->dbg_gp = 0;
		if (q == tail)
			break;
	}
#endif
	pthread_mutex_lock(&c->free_lock);
	tail->next = c->pending;					/* PD1 */
	if (!c->pending)
		c->pending_tail = tail;
	c->pending = head;
	atomic_store_explicit(&c->npending,
			      atomic_load_explicit(&c->npending, memory_order_relaxed) + n,
			      memory_order_relaxed);
	pthread_mutex_unlock(&c->free_lock);
}

static bool tlist_enter(const struct lpc_tcache *t);
static void tlist_exit(void);

void lpc_page_free_removed_chain(struct lpc_pool *c, struct lpc_page *head,
				 struct lpc_page *tail, uint32_t n)
{
	lpc_yield_point(LPC_YP_C);
	debug_chain(head, tail, n);
	for (struct lpc_page *q = head;; q = q->next) {
		deferred_prep(c, q);
		if (q == tail)
			break;
	}
	pending_push(c, head, tail, n);
}

bool lpc_page_keep_removed_chain(struct lpc_pool *c, struct lpc_page *head,
				 struct lpc_page *tail, uint32_t n)
{
	struct lpc_tcache *t = lpc_tcache(&c->owner);
	uint64_t stamp;
	unsigned kept;

	if (!tlist_enter(t))						/* OD1 */
		return false;
	kept = atomic_load_explicit(&t->nfree, memory_order_relaxed) +
	       atomic_load_explicit(&t->ndfree, memory_order_relaxed);
	/* Short of shared frames, or a hoard past its bound: pending, where
	 * the reclaimer and every allocator's reclaim() find them. */
	if (atomic_load_explicit(&c->nfree, memory_order_relaxed) < c->low_free ||
	    kept + n > c->nframes / 2) {
		tlist_exit();
		return false;
	}
	lpc_yield_point(LPC_YP_C);
	debug_chain(head, tail, n);
	/* After the removal (B): a fence, then the count of grace periods
	 * begun (core/rcu.h GC1-GC3).  One that takes a higher number
	 * covers the chain once it completes (OD5). */
	stamp = lpc_rcu_gp_stamp();
	for (struct lpc_page *q = head;; q = q->next) {
		deferred_prep(c, q);
#if LPC_DEBUG
		q->dbg_gp = stamp; /* DEFERRED-GRACE at OD5 */
#endif
		if (q == tail)
			break;
	}
	/* OD2: the chain goes behind what dfree holds.  A list that is
	 * empty (a taker may have emptied it) has no covered front; a list
	 * the old stamp covers becomes the covered front whole (OD7). */
	if (!t->dfree)
		t->dcov = 0;
	else if (lpc_rcu_gp_passed(t->dfree_gp))
		t->dcov = atomic_load_explicit(&t->ndfree, memory_order_relaxed);
	tail->next = NULL;						/* OD2 */
	if (t->dfree)
		((struct lpc_page *)t->dfree_tail)->next = head;
	else
		t->dfree = head;
	t->dfree_tail = tail;
	/* The newest stamp covers the whole list: stamps only grow, and
	 * older chains' are below it. */
	if (stamp > t->dfree_gp)
		t->dfree_gp = stamp;
	atomic_store_explicit(&t->ndfree, atomic_load_explicit(&t->ndfree, memory_order_relaxed) + n,
			      memory_order_relaxed);
	tlist_exit();
	return true;
}

/*
 * OD5: up to tbatch frames off the front of dfree join the private list,
 * which is empty (OD3); the rest stay on dfree, where the reclaimer's take
 * (RT1-RT4) and reclaim()'s steal still reach them, and the next OD3 finds
 * them covered.  Context: the owner inside S1-S3 with t->steal clear, the
 * first `avail` frames on dfree covered (all of them: OD4 returned, or
 * lpc_rcu_gp_passed(t->dfree_gp); else the covered front, dcov).  It moves
 * at most min(tbatch, avail) and leaves dcov at the covered ones left.
 */
static void own_take(struct lpc_pool *c, struct lpc_tcache *t, uint32_t avail)
{
	struct lpc_page *head = t->dfree, *last = head;
	uint32_t n = atomic_load_explicit(&t->ndfree, memory_order_relaxed), k = 1;
#if LPC_DEBUG
	uint64_t done = atomic_load(&lpc_rcu_gp_done);
#endif

	for (;;) {
#if LPC_DEBUG
		lpc_debug_check(last->dbg_gp < done, "DEFERRED-GRACE", last,
				"a deferred frame joins its thread's free list before a grace period "
				"that began after its removal ended (stamp %llu, done %llu)",
				(unsigned long long)last->dbg_gp, (unsigned long long)done);
#endif
		if (k >= c->tbatch || k >= avail || !last->next)
			break;
		last = last->next;
		k++;
	}
	t->dcov = avail > k ? avail - k : 0; /* OD7 */
	t->dfree = last->next;
	if (!t->dfree)
		t->dfree_tail = NULL;
	last->next = NULL;
	atomic_store_explicit(&t->ndfree, n - k, memory_order_relaxed);
	t->free = head;							/* OD5 */
	atomic_store_explicit(&t->nfree, k, memory_order_relaxed);
}

/*
 * OD8: instead of OD4's wait, a thread whose deferred frames are not covered
 * yet takes a batch from the shared list while that holds plenty (above
 * twice the reclaimer's low watermark and a batch) and the thread keeps at
 * most half the frames: the batch stays the thread's (it cycles through its
 * dfree), so the next chains land a loop later, when another thread's grace
 * period has covered them more often than not.
 */
static bool own_borrow_ok(const struct lpc_pool *c, const struct lpc_tcache *t)
{
	uint32_t kept = atomic_load_explicit(&t->nfree, memory_order_relaxed) +
			atomic_load_explicit(&t->ndfree, memory_order_relaxed);

	return t->dborrow + c->tbatch <= LPC_OWN_BORROW_BATCHES * c->tbatch &&
	       kept + c->tbatch <= c->nframes / 2 &&
	       atomic_load_explicit(&c->nfree, memory_order_relaxed) >=
		       2 * c->wake_below + c->tbatch + c->low_free;
}

/*
 * OD4-OD5: one grace period of this thread's own, then the front of its
 * deferred frames joins its private list.  Context: an allocation that may
 * wait, outside any read section, holding no frozen page
 * (lpc_rcu_synchronize's rule).
 */
static void own_land(struct lpc_pool *c, struct lpc_tcache *t)
{
	uint64_t t0;

	lpc_yield_point(LPC_YP_T2);
	t0 = lpc_clock_ns();
	lpc_rcu_synchronize();						/* OD4 */
	lpc_count_gp(&c->owner, t, t0);
	lpc_yield_point(LPC_YP_OD5);
	if (!tlist_enter(t))
		return; /* a taker is on the lists: T3 moves dfree to pending */
	if (t->dfree && !t->free)
		own_take(c, t, atomic_load_explicit(&t->ndfree, memory_order_relaxed));
	tlist_exit();
}

void lpc_page_pending_kick(struct lpc_pool *c)
{
	uint32_t n;

	if (!c->wake)
		return;
	/* Pending was written (free_lock) before `awake` (or `lingering`)
	 * is read in the wake: with the reclaimer's fence between its clear
	 * of both and its look at pending (reclaim/reclaimer.c RL1), one of
	 * the two sees the other (store buffering, which seq_cst fences
	 * forbid). */
	atomic_thread_fence(memory_order_seq_cst);
	n = atomic_load_explicit(&c->npending, memory_order_relaxed);
	if (n >= LPC_FREE_BATCH)
		c->wake(c->reclaim_arg, true);
	else if (n && c->linger)
		c->linger(c->reclaim_arg); /* fewer: drained after the linger */
}

void lpc_page_free_deferred(struct lpc_page *p)
{
	free_deferred(p, true);
}

void lpc_page_free_evicted(struct lpc_page *p)
{
	free_deferred(p, false);
}

void lpc_page_pending_flush(struct lpc_pool *c)
{
	pthread_mutex_lock(&c->free_lock);
	pending_submit_unlock(c);
}

uint32_t lpc_page_pending_drain(struct lpc_pool *c)
{
	struct lpc_page *head, *tail;
	uint32_t n;

	/* Under reclaim_lock, as a reclaim() round (which this is, without
	 * the steal): a reclaim() that finds nothing free must not run while
	 * frames are in our hands between the take and the free list. */
	pthread_mutex_lock(&c->reclaim_lock);
	pthread_mutex_lock(&c->free_lock);
	head = c->pending;						/* PD2 */
	tail = c->pending_tail;
	n = atomic_load_explicit(&c->npending, memory_order_relaxed);
	c->pending = NULL;
	c->pending_tail = NULL;
	atomic_store_explicit(&c->npending, 0, memory_order_relaxed);
	/* Counted as a batch in flight, taken off pending in the same
	 * critical section (as pending_submit_unlock does): whoever adds up
	 * free, pending and in flight (lpc_stats' readers, the tests' quiet
	 * checks) waits for it to land rather than miss its frames.
	 * reclaim() never sees this count: it holds reclaim_lock. */
	if (head)
		atomic_fetch_add_explicit(&c->batches_in_flight, 1, memory_order_relaxed);
	pthread_mutex_unlock(&c->free_lock);
	if (head) {
		uint64_t t0;

		debug_chain(head, tail, n);
		lpc_yield_point(LPC_YP_T2);
		t0 = lpc_clock_ns();
		lpc_rcu_synchronize();					/* T2 */
		lpc_count_gp(&c->owner, lpc_tcache_peek(&c->owner), t0);
		lpc_page_free_chain(c, head, tail, n);			/* PD3 */
		/* Release: as free_batch_rcu's. */
		atomic_fetch_sub_explicit(&c->batches_in_flight, 1, memory_order_release);
	}
	pthread_mutex_unlock(&c->reclaim_lock);
	return n;
}

void lpc_page_release_last(struct lpc_page *p)
{
	/* A thread that only ever puts may not be registered: call_rcu needs
	 * it, and the read section below is only a read section if it is. */
	bool scoped = lpc_rcu_scope_enter();
	uint32_t r = 1;

	lpc_rcu_read_lock();
	/* Still the last?  Another holder may have let go, or a getter may
	 * have taken one, since lpc_page_release read the count. */
	while (!atomic_compare_exchange_weak_explicit(&p->ref, &r, r - 1, memory_order_acq_rel,
						      memory_order_relaxed))
		lpc_debug_check(r != 0, "REF-UNDERFLOW", p, "reference count went below 0");
	if (r == 1) {
		/* ref is 0: in transit until free_deferred has it on pending
		 * (or queued), inside this read section. */
		lpc_yield_point(LPC_YP_C0);
		lpc_page_free_deferred(p);
	}
	lpc_rcu_read_unlock();
	lpc_rcu_scope_exit(scoped);
}

/*
 * S1: enters the owner's side of the private-list protocol.  Return: true if
 * t's list may be used, until tlist_exit; false if t is NULL or being taken.
 */
static bool tlist_enter(const struct lpc_tcache *t)
{
	if (unlikely(t == NULL))
		return false;
	lpc_rcu_read_lock();
	if (likely(!atomic_load_explicit(&t->steal, memory_order_acquire))) {
		lpc_yield_point(LPC_YP_S1);
		return true;
	}
	lpc_rcu_read_unlock();
	return false;
}

/* S3 */
static void tlist_exit(void)
{
	lpc_yield_point(LPC_YP_S3);
	lpc_rcu_read_unlock();
}

void lpc_page_free_private(struct lpc_page *p)
{
	struct lpc_pool *c = p->pool;
	struct lpc_tcache *t = lpc_tcache(&c->owner);
	struct lpc_page *head = p, *tail = p;
	unsigned n = 1;

#if LPC_DEBUG
	lpc_debug_check(atomic_load_explicit(&p->ref, memory_order_relaxed) == 1,
			"FREE-FRAME-REF", p, "private free of a page with ref != 1 (someone else holds it)");
	lpc_debug_check(atomic_load_explicit(&p->dbg_state, memory_order_relaxed) != LPC_DBG_FREE,
			"FRAME-FREED-TWICE", p, "private free of a frame already free");
	lpc_page_debug_not_reading(p, "private free");
	lpc_page_debug_seq_closed(p, "private free");
	atomic_store_explicit(&p->dbg_state, LPC_DBG_FREE, memory_order_relaxed);
#endif
	/* Nobody else can see this page: plain (relaxed) stores, no RMW. */
	atomic_store_explicit(&p->ref, 0, memory_order_relaxed);
	atomic_store_explicit(&p->flags, 0, memory_order_relaxed);
	/* Keep it for this thread's next allocation, unless the shared list
	 * runs low: then a frame kept here would cost another thread a grace
	 * period to take. */
	if (tlist_enter(t)) {
		if (atomic_load_explicit(&c->nfree, memory_order_relaxed) < c->low_free) {
			tlist_exit();
			goto shared;
		}
		lpc_yield_point(LPC_YP_S2);
		p->next = t->free;					/* S2 */
		t->free = p;
		n = atomic_load_explicit(&t->nfree, memory_order_relaxed) + 1;
		if (likely(n <= 2 * c->tbatch)) {
			atomic_store_explicit(&t->nfree, n, memory_order_relaxed);
			tlist_exit();
			return;
		}
		/* Too many kept: give a batch back to the shared list, as one
		 * segment. */
		head = tail = t->free;					/* SG4 */
		for (unsigned i = 1; i < c->tbatch; i++)
			tail = tail->next;
		t->free = tail->next;
		tail->next = NULL;
		head->fl.seg_n = c->tbatch;
		head->fl.seg_next = NULL;
		atomic_store_explicit(&t->nfree, n - c->tbatch, memory_order_relaxed);
		/* Still inside S1-S3: a reclaimer that found nothing anywhere
		 * must not have missed frames in our hands. */
		segs_push(c, head, head, c->tbatch);
		tlist_exit();
		return;
	}
shared:
	lpc_page_free_chain(c, head, tail, n);
}

static void page_init_private(struct lpc_page *p, unsigned flags)
{
#if LPC_DEBUG
	lpc_debug_check(atomic_load_explicit(&p->dbg_state, memory_order_relaxed) == LPC_DBG_FREE &&
				atomic_load_explicit(&p->ref, memory_order_relaxed) == 0,
			"FRAME-HANDED-OUT-TWICE", p,
			"allocator handed out a frame that is not free (another owner has it)");
	/* DEFERRED-GRACE for any private use (MR1): a frame some thread's
	 * lpc_invalidate kept (OD2 stamped it) reaches one only after a grace
	 * period that began after the stamp; a frame never kept has stamp 0
	 * (and so does one kept before any grace period began: not checked). */
	lpc_debug_check((flags & LPC_ALLOC_MISS) || !p->dbg_gp ||
				p->dbg_gp < atomic_load(&lpc_rcu_gp_done),
			"DEFERRED-GRACE", p,
			"a private use takes a deferred frame before its grace period (stamp %llu, "
			"done %llu)",
			(unsigned long long)p->dbg_gp, (unsigned long long)atomic_load(&lpc_rcu_gp_done));
	lpc_page_debug_not_reading(p, "hand-out");
#endif
	p->next = NULL;
	/* Recycling changes the frame's identity (and, for its next owner,
	 * its data): a seq write section around it, so that an optimistic
	 * reader that still looks at the old page (only where a miss reuses
	 * it at once, MR1; before a private use a grace period separates its
	 * last publication from now) rejects its copy.  The section also
	 * makes seq of every handed-out frame differ from what it was under
	 * its previous identity. */
	lpc_page_seq_write_begin(p);
	lpc_page_set_identity(p, NULL, 0);
	lpc_page_seq_write_end(p);
#if LPC_DEBUG
	atomic_store_explicit(&p->dbg_state, LPC_DBG_LIVE, memory_order_relaxed);
	atomic_store_explicit(&p->dbg_owner, 0, memory_order_relaxed);
#endif
	atomic_store_explicit(&p->flags, 0, memory_order_relaxed);
	/* MR2: a miss's frame keeps ref 0 (a stale getter's R3 fails on it)
	 * until M2 stores its references after PUBLISHED. */
	if (flags & LPC_ALLOC_MISS)
		return;
	/* No reader can reach a frame handed out for a private use (a grace
	 * period separates its last publication from now), but the evictor
	 * may load ref (it scans every descriptor): release, so that one that
	 * sees 1 sees the identity and flags cleared above (reclaim/evict.c
	 * E1).  A plain mov on x86. */
	atomic_store_explicit(&p->ref, 1, memory_order_release);
}

/*
 * MR1: the front frame of t->dfree, none of which is covered (OD3 found no
 * passed stamp and dcov 0), for a miss (LPC_ALLOC_MISS).  Context: the
 * owner inside S1-S3 with t->steal clear, t->free empty, t->dfree not.
 */
static struct lpc_page *own_pop_uncovered(struct lpc_tcache *t)
{
	struct lpc_page *p = t->dfree;

	lpc_debug_check(t->dcov == 0, "DEFERRED-GRACE", p,
			"a miss takes an uncovered frame while %u covered ones wait", t->dcov);
	t->dfree = p->next;
	if (!t->dfree)
		t->dfree_tail = NULL;
	p->next = NULL;
	atomic_store_explicit(&t->ndfree, atomic_load_explicit(&t->ndfree, memory_order_relaxed) - 1,
			      memory_order_relaxed);
	return p;
}

/* Rule SEG-COUNT (LPC_DEBUG): a segment taken off the shared list whole is
 * seg_n frames chained by next, NULL after the last (a count that is not its
 * chain's length loses the frames past it, or hands out a frame twice, and
 * nfree no longer adds up: "Segments" above). */
static void debug_segment(const struct lpc_page *head, uint32_t n)
{
#if LPC_DEBUG
	const struct lpc_page *q = head;
	uint32_t k = 0;

	for (; q && k <= n; q = q->next)
		k++;
	lpc_debug_check(k == n, "SEG-COUNT", head,
			"segment counted %u frames, its chain holds %s%u", n, k > n ? "more than " : "",
			k > n ? n : k);
#else
	(void)head;
	(void)n;
#endif
}

/*
 * Fresh frames (pool.h: [fresh, nframes), never handed out).  The shared
 * list holds only frames that were handed out before; a taker that finds
 * it empty carves frames off the fresh range: under free_lock it advances
 * fresh (fresh_carve: the range is now its own, nobody else hands those
 * frames out), and after the unlock it writes their descriptors for the
 * first time (fresh_init: id, pool, the chain).  Those first writes fault
 * the descriptor pages in, and a fault is a place to be preempted: never
 * under free_lock, which every allocation and free of the cache waits for.
 * So a cache that holds k frames has written k descriptors and k frames,
 * whatever its budget (pool.c).  Who else reads an uncarved or reserved
 * descriptor: the evictor (E1) and cache_busy load its ref, find 0 and
 * skip it as free; page_init_private's release store of ref 1 orders the
 * carver's plain stores of id and pool before any evictor that sees 1.
 * Context: free_lock held.  Return: the first of *got (<= want) frames.
 */
static uint32_t fresh_carve(struct lpc_pool *c, unsigned want, unsigned *got)
{
	uint32_t first = atomic_load_explicit(&c->fresh, memory_order_relaxed);
	uint32_t k = c->nframes - first < want ? c->nframes - first : want;

	lpc_pool_hint_huge(c, first, first + k); /* before the first touch */
	atomic_store_explicit(&c->fresh, first + k, memory_order_relaxed);
	*got = k;
	return first;
}

/* Context: frames [first, first + k) reserved by this thread, free_lock not
 * held.  Return: their chain, NULL-terminated. */
static struct lpc_page *fresh_init(struct lpc_pool *c, uint32_t first, unsigned k)
{
	for (uint32_t i = first; i < first + k; i++) {
		struct lpc_page *p = &c->pages[i];

		p->id = i;
		p->pool = c;
		p->next = i + 1 < first + k ? &c->pages[i + 1] : NULL;
#if LPC_DEBUG
		atomic_store_explicit(&p->dbg_state, LPC_DBG_FREE, memory_order_relaxed);
#endif
	}
	return k ? &c->pages[first] : NULL;
}

/* Takes up to `want` frames from the shared list, else from the fresh
 * range, leaving at least `keep` free (readahead's reserve: 0 for any
 * other allocation).  The top segment whole when it is no longer than
 * `want` (a refill's usual case: one pop, no walk under the lock), else
 * `want` frames off its front.  Return: the chain, NULL-terminated. */
static struct lpc_page *shared_take(struct lpc_pool *c, unsigned want, uint32_t keep,
				    unsigned *got)
{
	struct lpc_page *head = NULL, *tail, *s;
	uint32_t nfree, first = 0;
	unsigned n;

	pthread_mutex_lock(&c->free_lock);
	nfree = atomic_load_explicit(&c->nfree, memory_order_relaxed);
	if (nfree <= keep) {
		pthread_mutex_unlock(&c->free_lock);
		*got = 0;
		return NULL;
	}
	/* Take a batch for this thread's list only while frames are plenty:
	 * a thread's hoard is then at most an eighth of what was free. */
	if (want > nfree / 8)
		want = nfree / 8 ? nfree / 8 : 1;
	if (want > nfree - keep)
		want = nfree - keep;
	s = c->free;
	if (s && s->fl.seg_n <= want) {					/* SP1 */
		head = s;
		n = s->fl.seg_n;
		c->free = s->fl.seg_next;
	} else if (s) {
		/* Split: the rest stays a segment, headed by the frame after
		 * the last one taken (SP1-SP3 above). */
		head = tail = s;
		for (n = 1; n < want; n++)
			tail = tail->next;
		lpc_debug_check(tail->next != NULL, "SEG-COUNT", s,
				"segment of %u frames ends after %u", s->fl.seg_n, n);
		c->free = tail->next;					/* SP2 */
		c->free->fl.seg_n = s->fl.seg_n - n;
		c->free->fl.seg_next = s->fl.seg_next;
		tail->next = NULL;					/* SP3 */
	} else {
		first = fresh_carve(c, want, &n);
	}
	atomic_store_explicit(&c->nfree, nfree - n, memory_order_relaxed);
	pthread_mutex_unlock(&c->free_lock);
	if (!s)
		head = fresh_init(c, first, n);				/* SG3 */
	else
		debug_segment(head, n); /* ours now: walked outside the lock */
	*got = n;
	return n ? head : NULL;
}

/* Takes the block's free frames.  Return: how many; the chain in *head..*tail.
 * Context: lpc_threads_lock, and t's owner off its list (its own thread at
 * exit, or S1-S3 made sure). */
static uint32_t tcache_take(struct lpc_tcache *t, struct lpc_page **head, struct lpc_page **tail)
{
	struct lpc_page *p;
	uint32_t n = 0;

	*head = t->free;
	*tail = NULL;
	for (p = t->free; p; p = p->next) {
		*tail = p;
		n++;
	}
	t->free = NULL;
	atomic_store_explicit(&t->nfree, 0, memory_order_relaxed);
	return n;
}

void lpc_pool_thread_exit(struct lpc_tcache *t)
{
	struct lpc_pool *c = caa_container_of(t->owner, struct lpc_pool, owner);
	struct lpc_page *head, *tail;
	uint32_t n;

	n = tcache_take(t, &head, &tail);
	if (n)
		lpc_page_free_chain(c, head, tail, n);
	/* Its deferred frames still need a grace period (OD6), and nobody
	 * else would ask for one: a thread that invalidated and exited (or a
	 * process whose only user thread did) left them on pending until the
	 * next kick.  The kick asks for the reclaimer's linger (RL1-RL4) or a
	 * drain; the reclaimer lock is a leaf (cache/cache.h). */
	if (t->dfree) {
		pending_push(c, t->dfree, t->dfree_tail,
			     atomic_load_explicit(&t->ndfree, memory_order_relaxed));
		t->dfree = t->dfree_tail = NULL;
		atomic_store_explicit(&t->ndfree, 0, memory_order_relaxed);
		lpc_page_pending_kick(c);
	}
	t->dborrow = 0;
}

/* NULL arg: flag every block (reclaim()); else the reclaimer's RT2, which
 * flags only the blocks holding deferred frames and counts them. */
struct steal_flag_arg {
	uint32_t flagged;
};

static void steal_flag(struct lpc_tcache *t, void *arg)
{
	struct steal_flag_arg *a = arg;

	/* RT2: ndfree is a hint (relaxed, the owner's); a block that keeps
	 * frames after this load stays unflagged, as a block made after T1,
	 * and the next refill turn takes them. */
	if (a && !atomic_load_explicit(&t->ndfree, memory_order_relaxed))
		return;
	if (a)
		a->flagged++;
	atomic_store_explicit(&t->steal, true, memory_order_relaxed);	/* T1 */
}

/*
 * Taking other threads' free frames, for an allocator that found none
 * anywhere else (the kernel's drain_all_pages): flag every block, wait for a
 * grace period, take the lists (T1-T4 above).  Context: c->reclaim_lock (one
 * taker at a time), outside any read section; the grace period goes between
 * steal_begin and steal_end.
 */
static void steal_begin(struct lpc_pool *c)
{
	lpc_towner_for_each(&c->owner, steal_flag, NULL);
}

struct steal_take_arg {
	struct lpc_pool *pool;
	struct lpc_page **head;
	uint32_t n;
	uint32_t deferred; /* frames moved from deferred lists to pending */
	bool deferred_only; /* RT3: leave the private lists alone */
};

static void steal_take(struct lpc_tcache *t, void *arg)
{
	struct steal_take_arg *a = arg;
	struct lpc_page *h, *tail;

	/* Blocks made since steal_begin are not flagged: their owners may be
	 * on their lists. */
	if (!atomic_load_explicit(&t->steal, memory_order_relaxed))
		return;
	lpc_yield_point(LPC_YP_T3);
	if (t->free && !a->deferred_only) {				/* T3 */
		a->n += tcache_take(t, &h, &tail);
		tail->next = *a->head;
		*a->head = h;
	}
	/* OD6: deferred frames go to pending, never to a free list: T2
	 * would cover them (OD1 loads the flag after the removal;
	 * tests/model/own_defer.pml), but the move is the exit's too, which
	 * has no grace period of its own, and it is rare. */
	if (t->dfree) {
		a->deferred += atomic_load_explicit(&t->ndfree, memory_order_relaxed);
		pending_push(a->pool, t->dfree, t->dfree_tail,
			     atomic_load_explicit(&t->ndfree, memory_order_relaxed));
		t->dfree = t->dfree_tail = NULL;
		atomic_store_explicit(&t->ndfree, 0, memory_order_relaxed);
	}
	t->dborrow = 0; /* OD8: its borrowed frames are back in the pool's reach */
	/* Release: the owner that sees the flag clear sees the list empty
	 * (S1's acquire). */
	lpc_yield_point(LPC_YP_T4);
	atomic_store_explicit(&t->steal, false, memory_order_release);	/* T4 */
}

/* Takes the free frames of flagged blocks, putting them in front of the
 * chain *head (which may be NULL); the caller owns them.  *deferred: how
 * many deferred frames went to pending (OD6).  Return: how many taken. */
static uint32_t steal_end(struct lpc_pool *c, struct lpc_page **head, uint32_t *deferred)
{
	struct steal_take_arg a = {
		.pool = c, .head = head, .n = 0, .deferred = 0, .deferred_only = false
	};

	lpc_towner_for_each(&c->owner, steal_take, &a);
	*deferred = a.deferred;
	return a.n;
}

static void sum_deferred(struct lpc_tcache *t, void *arg)
{
	*(uint32_t *)arg += atomic_load_explicit(&t->ndfree, memory_order_relaxed);
}

/*
 * The background reclaimer's take of the deferred frames
 * (reclaim/reclaimer.c refill, below `high` and about to evict).  Without
 * it a thread's deferred list (OD2) reached the free list only through its
 * own allocation that may wait (OD3: lpc_pread's NOWAIT one only when
 * another wait covered it) or an
 * allocation that found the shared list empty (reclaim()'s steal); a
 * reader the reclaimer kept supplied never emptied it, and the reclaimer,
 * seeing only the shared list and pending, evicted cached pages while up to
 * half the frames sat on an idle thread's list
 * (tests/unit/test_own_hoard.c).  Steps:
 *   RT1 sum ndfree over the blocks (relaxed: a hint); none, and the counts
 *       are read as in RT4 with no steal;
 *   RT2 under reclaim_lock (one taker at a time, as reclaim()), T1 on the
 *       blocks that hold deferred frames only;
 *   RT3 T2 (a grace period), then T3 takes only their deferred lists, to
 *       pending (OD6, then the refill's drain lands them after a grace
 *       period of its own), never a private list (bounded by SG4 and OD7:
 *       at most 2 * tbatch, what the steal-free design always allowed);
 *       T4 clears the flags;
 *   RT4 still under reclaim_lock, reads nfree, then npending (free_lock):
 *       no drain and no reclaim() holds frames between its take and the
 *       free list meanwhile (both hold reclaim_lock for it), so what the
 *       refill compares with `high` counts every frame they would land;
 *       one read outside the lock could miss a reclaim()'s whole pending
 *       take and evict for it.
 * The owners' side is S1-S3 and OD1-OD5 unchanged: this is reclaim()'s
 * taker (tests/model/own_defer.pml's), on fewer blocks.
 */
uint32_t lpc_page_deferred_take(struct lpc_pool *c, uint32_t *free, uint32_t *pend)
{
	struct steal_flag_arg f = { .flagged = 0 };
	struct steal_take_arg a = {
		.pool = c, .head = NULL, .n = 0, .deferred = 0, .deferred_only = true
	};
	uint32_t sum = 0;

	lpc_towner_for_each(&c->owner, sum_deferred, &sum);		/* RT1 */
	pthread_mutex_lock(&c->reclaim_lock);
	if (sum) {
		lpc_towner_for_each(&c->owner, steal_flag, &f);		/* RT2 */
		if (f.flagged) {
			uint64_t t0;

			lpc_yield_point(LPC_YP_T2);
			t0 = lpc_clock_ns();
			lpc_rcu_synchronize();				/* RT3 */
			lpc_count_gp(&c->owner, lpc_tcache_peek(&c->owner), t0);
			lpc_towner_for_each(&c->owner, steal_take, &a);
		}
	}
	pthread_mutex_lock(&c->free_lock);				/* RT4 */
	*free = atomic_load_explicit(&c->nfree, memory_order_relaxed);
	*pend = atomic_load_explicit(&c->npending, memory_order_relaxed);
	pthread_mutex_unlock(&c->free_lock);
	pthread_mutex_unlock(&c->reclaim_lock);
	return a.deferred;
}

/*
 * The allocator found no free frame: collect every frame that is free but
 * out of reach (the module comment) and keep one for the caller.  One thread
 * at a time; the others wait here and then take what it left.  Context: no
 * RCU read section, no frozen page held (the grace period would wait for us).
 * Return: 0 with *out; -EAGAIN if frames were found but others took them
 * first, or frames are on their way (worth another try); -ENOMEM if no frame
 * was free anywhere (the module comment: frames in transit).
 */
static int reclaim(struct lpc_pool *c, struct lpc_page **out)
{
	struct lpc_page *head, *tail;
	uint32_t n, in_flight, deferred = 0;
	uint64_t t0;
	bool more_pending;
	unsigned got;
	int rc = 0;

	pthread_mutex_lock(&c->reclaim_lock);
	*out = shared_take(c, 1, 0, &got); /* another thread reclaimed meanwhile */
	if (*out)
		goto unlock;
	lpc_yield_point(LPC_YP_T1);
	steal_begin(c);							/* T1 */
	pthread_mutex_lock(&c->free_lock);
	head = c->pending;
	n = atomic_load_explicit(&c->npending, memory_order_relaxed);
	c->pending = NULL;
	c->pending_tail = NULL;
	atomic_store_explicit(&c->npending, 0, memory_order_relaxed);
	pthread_mutex_unlock(&c->free_lock);
	/* One grace period for both: the pending pages' readers are gone, and
	 * no owner is on a flagged list. */
	lpc_yield_point(LPC_YP_T2);
	t0 = lpc_clock_ns();
	lpc_rcu_synchronize();						/* T2 */
	lpc_count_gp(&c->owner, lpc_tcache_peek(&c->owner), t0);
	n += steal_end(c, &head, &deferred);				/* T3, T4 */
	if (head) {
		/* Keep one: others cannot take it before we return. */
		*out = head;
		head = head->next;
		if (head) {
			for (tail = head; tail->next; tail = tail->next)
				;
			lpc_page_free_chain(c, head, tail, n - 1);
		}
		goto unlock;
	}
	/* Frames whose free began before T2 are now on pending, or in a batch
	 * counted in flight and queued.  Read both under free_lock: a batch
	 * taken off pending is counted in the same critical section. */
	pthread_mutex_lock(&c->free_lock);
	more_pending = c->pending != NULL;
	in_flight = atomic_load_explicit(&c->batches_in_flight, memory_order_acquire);
	pthread_mutex_unlock(&c->free_lock);
	if (in_flight) {
		/* Batches handed to call_rcu: wait for them to land.  One
		 * whose submitter began after T2 may not be queued yet: then
		 * the next round's T2 waits for it. */
		t0 = lpc_clock_ns();
		lpc_rcu_barrier();
		lpc_count_gp(&c->owner, lpc_tcache_peek(&c->owner), t0);
		*out = shared_take(c, 1, 0, &got);
		rc = *out ? 0 : -EAGAIN;
		goto unlock;
	}
	/* Frames freed while we looked landed on the shared list; those on
	 * pending need the next round's grace period. */
	*out = shared_take(c, 1, 0, &got);
	rc = *out ? 0 : more_pending ? -EAGAIN : -ENOMEM;
unlock:
	pthread_mutex_unlock(&c->reclaim_lock);
	/* Deferred frames the steal put on pending (OD6): this round found
	 * others or returns -EAGAIN for the next, but a caller that stops
	 * allocating leaves them there; ask for the drain (the linger's kick,
	 * as a put that empties pending does). */
	if (deferred)
		lpc_page_pending_kick(c);
	return rc;
}

struct census_arg {
	uint32_t nframes;
	uint32_t frames, counted;
};

static void census_block(struct lpc_tcache *t, void *arg)
{
	struct census_arg *a = arg;
	uint32_t k = 0, n = atomic_load_explicit(&t->nfree, memory_order_relaxed);

	for (struct lpc_page *q = t->free; q && k <= a->nframes; q = q->next)
		k++;
	lpc_debug_check(k == n, "SEG-COUNT", t->free,
			"a thread's private list holds %u frames, counted %u", k, n);
	a->frames += k;
	a->counted += n;
	k = 0;
	for (struct lpc_page *q = t->dfree; q && k <= a->nframes; q = q->next)
		k++;
	n = atomic_load_explicit(&t->ndfree, memory_order_relaxed);
	lpc_debug_check(k == n, "SEG-COUNT", t->dfree,
			"a thread's deferred list holds %u frames, counted %u", k, n);
	a->frames += k;
	a->counted += n;
}

/*
 * The census's steps:
 *   CS1 trylock reclaim_lock: no drain or reclaim() holds frames;
 *   CS2 every thread's private list against its nfree (read without the
 *       owners: meaningful only on a quiet pool, as tests call it);
 *   CS3 under free_lock, with no call_rcu batch in flight: every segment
 *       against its seg_n (1..tbatch), the segments plus the fresh frames
 *       against nfree (SEG-COUNT), pending; then FRAMES-ACCOUNTED.
 */
int lpc_pool_census(struct lpc_pool *c, uint32_t in_use, struct lpc_pool_census *out)
{
	struct census_arg a = { .nframes = c->nframes, .frames = 0, .counted = 0 };
	uint32_t fresh, nfree, k = 0;

	memset(out, 0, sizeof(*out));
	/* No drain or reclaim() holds frames while we hold reclaim_lock (both
	 * keep it from their take to their free list); trylock, so that a
	 * test may call this with a drain parked (regress_quiet_drain). */
	if (pthread_mutex_trylock(&c->reclaim_lock) != 0)		/* CS1 */
		return -EAGAIN;
	lpc_towner_for_each(&c->owner, census_block, &a);		/* CS2 */
	pthread_mutex_lock(&c->free_lock);				/* CS3 */
	if (atomic_load_explicit(&c->batches_in_flight, memory_order_acquire)) {
		pthread_mutex_unlock(&c->free_lock);
		pthread_mutex_unlock(&c->reclaim_lock);
		return -EAGAIN; /* a call_rcu batch not yet on the shared list */
	}
	fresh = atomic_load_explicit(&c->fresh, memory_order_relaxed);
	nfree = atomic_load_explicit(&c->nfree, memory_order_relaxed);
	for (struct lpc_page *s = c->free; s && out->shared <= c->nframes; s = s->fl.seg_next) {
		k = 0;
		for (struct lpc_page *q = s; q && k <= c->nframes; q = q->next)
			k++;
		lpc_debug_check(k == s->fl.seg_n && k >= 1 && k <= c->tbatch, "SEG-COUNT", s,
				"segment of %u frames (1..%u) holds %u", s->fl.seg_n, c->tbatch, k);
		out->shared += k;
	}
	for (struct lpc_page *q = c->pending; q && out->pending <= c->nframes; q = q->next)
		out->pending++;
	out->fresh = c->nframes - fresh;
	out->counted = nfree + a.counted + atomic_load_explicit(&c->npending, memory_order_relaxed);
	pthread_mutex_unlock(&c->free_lock);
	pthread_mutex_unlock(&c->reclaim_lock);
	out->private_frames = a.frames;
	lpc_debug_check(out->shared + out->fresh == nfree, "SEG-COUNT", NULL,
			"%u frames on the segments + %u fresh, nfree %u", out->shared, out->fresh,
			nfree);
	out->total = out->shared + out->fresh + out->private_frames + out->pending;
	lpc_debug_check(out->total + in_use == c->nframes && out->counted == out->total,
			"FRAMES-ACCOUNTED", NULL,
			"quiet pool: %u shared + %u fresh + %u private + %u pending (counted %u)"
			" + %u in use != %u frames",
			out->shared, out->fresh, out->private_frames, out->pending, out->counted, in_use,
			c->nframes);
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Sleeps for *us microseconds (doubling it, up to 10 ms) but not past the
 * deadline.  Return: false if the deadline has passed. */
static bool backoff(uint64_t deadline, unsigned *us)
{
	uint64_t now = now_ms();
	struct timespec ts;
	unsigned d = *us;

	if (now >= deadline)
		return false;
	if ((uint64_t)d > (deadline - now) * 1000)
		d = (unsigned)((deadline - now) * 1000);
	ts.tv_sec = d / 1000000;
	ts.tv_nsec = (long)(d % 1000000) * 1000;
	nanosleep(&ts, NULL);
	*us = *us >= 5000 ? 10000 : *us * 2;
	return true;
}

uint32_t lpc_pool_ra_reserve(const struct lpc_pool *c)
{
	return c->wake_below > 1 ? c->wake_below : 1;
}

int lpc_page_alloc_frame(struct lpc_pool *c, unsigned flags, struct lpc_page **out)
{
	struct lpc_tcache *t = lpc_tcache(&c->owner);
	uint32_t keep = flags & LPC_ALLOC_NORECLAIM ? lpc_pool_ra_reserve(c) : 0;
	struct lpc_page *p;
	uint64_t deadline = 0;
	unsigned got, again = 0, rounds = 0, sleep_us = 100;
	uint64_t t0;
	int rc;
	bool evicted, borrow;

	for (;;) {
		got = 0;
		borrow = false;
		if (tlist_enter(t)) {
			lpc_yield_point(LPC_YP_S2);
			p = t->free;					/* S2 */
			if (!p && t->dfree) {
				/* OD3: this thread's own frames, covered
				 * by a grace period that began after the
				 * newest was removed (anyone's: OD5 with
				 * no wait of its own), or the covered
				 * front alone (OD7). */
				uint32_t nd = atomic_load_explicit(&t->ndfree,
								   memory_order_relaxed);

				if (lpc_rcu_gp_passed(t->dfree_gp))
					own_take(c, t, nd);
				else if (t->dcov)
					own_take(c, t, t->dcov < nd ? t->dcov : nd);
				p = t->free;
			}
			if (p) {
				t->free = p->next;
				atomic_store_explicit(&t->nfree,
						      atomic_load_explicit(&t->nfree,
									   memory_order_relaxed) - 1,
						      memory_order_relaxed);
			} else if (t->dfree && (flags & LPC_ALLOC_MISS)) {
				/* MR1: a miss reuses its thread's own
				 * frames with no grace period. */
				p = own_pop_uncovered(t);
			} else if (t->dfree && !(flags & (LPC_ALLOC_NOWAIT | LPC_ALLOC_NORECLAIM)) &&
				   !(borrow = own_borrow_ok(c, t))) {
				/* OD3: else, after a grace period of its
				 * own (an allocation that may wait). */
				tlist_exit();
				own_land(c, t);
				continue;
			} else {
				p = shared_take(c, c->tbatch, keep, &got);
				if (p && got > 1) { /* keep the rest */
					t->free = p->next;
					atomic_store_explicit(&t->nfree, got - 1,
							      memory_order_relaxed);
				}
				if (borrow)
					t->dborrow += got;		/* OD8 */
			}
			tlist_exit();
		} else {
			p = shared_take(c, 1, keep, &got);
		}
		if (p) {
			/* Took from the shared list: below the low watermark,
			 * wake the background reclaimer (above it, nothing
			 * shared is written); readahead, which never goes
			 * below its reserve (the low watermark), a reserve
			 * earlier, with ra: its refill spares the pages read
			 * ahead and not used yet (pool.h). */
			if (got && c->wake &&
			    atomic_load_explicit(&c->nfree, memory_order_relaxed) <
				    c->wake_below + keep)
				c->wake(c->reclaim_arg, keep != 0);
			break;
		}
		/* A thread without a block is not registered with RCU (and is
		 * out of memory anyway). */
		if (!t)
			goto nomem;
		/* Readahead reads less instead, and asks for a refill that
		 * spares what it read ahead (pool.h). */
		if (flags & LPC_ALLOC_NORECLAIM) {
			if (c->wake)
				c->wake(c->reclaim_arg, true);
			return -ENOMEM;
		}
		/* Frames free but out of reach first (pending, in flight,
		 * other threads' lists): evicting while they land would throw
		 * cached pages away for nothing. */
		rc = reclaim(c, &p);
		if (!rc)
			break;
		/* -EAGAIN: frames landed but others took them; they are in
		 * use or on lists the next reclaim reaches.  Bounded, in case
		 * others keep winning. */
		if (rc == -EAGAIN && ++again < 64)
			continue;
		if (!c->evict)
			goto nomem;
		/* Direct reclaim: evict a capped number of batches; what it
		 * frees waits on pending for the next reclaim()'s grace
		 * period.  Wake the reclaimer too: the free list ran dry. */
		lpc_count(t, LPC_C_DIRECT_RECLAIMS);
		if (c->wake)
			c->wake(c->reclaim_arg, false);
		t0 = lpc_clock_ns();
		evicted = c->evict(c->reclaim_arg, LPC_DIRECT_BATCHES, t);
		lpc_count_add(t, LPC_C_MISS_NS_EVICT, lpc_clock_ns() - t0);
		if (evicted) {
			again = 0;
			continue;
		}
		/* Nothing free and nothing evicted this round: every frame
		 * is held or locked, or was kept by the policy this round. */
		if (flags & LPC_ALLOC_NOWAIT) {
			if (++rounds >= LPC_NOWAIT_ROUNDS)
				goto nomem;
			continue;
		}
		if (!deadline)
			deadline = now_ms() + c->alloc_wait_ms;
		if (!backoff(deadline, &sleep_us))
			goto nomem;
		again = 0;
	}
	page_init_private(p, flags);
	*out = p;
	return 0;
nomem:
	if (t) /* a thread without a block goes uncounted */
		lpc_count(t, LPC_C_ALLOC_FAILURES);
	return -ENOMEM;
}
