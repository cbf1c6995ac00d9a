/* SPDX-License-Identifier: MIT */
/*
 * workingset.h - refaults: a shadow entry for each page eviction takes out,
 * and CLOCK2's active target, which refaults move (workingset.c).
 *
 * CLOCK2 (reclaim/evict.c, "Policy") keeps its active pages while their
 * count is at most the active target, and evicts inactive pages that were
 * not hit again since they came in.  A fixed target is wrong for some
 * workload whatever its value: half the frames let a scanner reading ahead
 * at device speed take a third of a Zipf hot set away; nine tenths kept an
 * idle hot set for ever, so that a loop over a fifth of the cache never hit
 * (tests/attack_target).  The target here starts high and moves with what
 * eviction got wrong, as the kernel's refault distances (mm/workingset.c)
 * and ARC's ghost lists do:
 *  - a page evicted from the inactive side that is missed again within as
 *    many evictions as there are active pages (a "refault": the kernel's
 *    refault distance test) would have hit had the active side given its
 *    frames to the inactive one: the target goes down;
 *  - a page that had been active (promoted, then demoted and evicted:
 *    LPC_PG_WORKINGSET), missed again within as many evictions as there
 *    are inactive pages, would have hit had the active side taken the
 *    inactive one's frames: up.
 *  Further back, no split of this cache would have kept the page (a loop
 *  over more than the cache): no refault, no sign either way.
 *  - a page read ahead and evicted before its first use says the inactive
 *    side did not hold readahead's windows: down.
 * Every page a miss reads is looked up, those read ahead too: a file read
 * again through readahead refaults as one read again by demand does.  So a
 * stream that reads again what another stream read shortly before is a
 * loop here, as it is: three scanners of one file at positions of their
 * own beside Zipf readers (lpcbench read's scan-mix before its rows shared
 * one scanner; a third of lpc's scanned pages were read again within a
 * cache's worth of pages: tests/attack_scanmix) brought the target down,
 * and the readers kept 0.57 of their reads where one scanner leaves them
 * 0.83, while the scanners read 1.5-2.1x the kernel's pages.  Counting for
 * readahead only the shadows readahead left (an experiment) changed
 * neither figure, and was not kept.
 * Each step is weighted as ARC weighs a ghost hit: by how many recent
 * evictions were of the other kind per one of its own (at least 1, at most
 * a sixteenth of the window).  A scanner makes nearly every eviction one of
 * a page never active, so one refault of a page that had been active
 * counts for many of the scan's, and the hot set keeps its share; where
 * the evictions are of active pages that nobody hits any more, a loop's
 * refaults bring the target down quickly.
 * A scan's pages are never missed again, so a scan moves nothing by itself.
 * A refaulting page starts as any miss's, inactive and not REFERENCED: only
 * hits promote.  (Starting it REFERENCED, as ARC moves a ghost hit to its
 * frequency list, made a moving working set feed itself: its refaulting
 * pages were promoted, demoted unhit within a pass into a small inactive
 * side, evicted, and refaulted as pages that had been active, which held
 * the target at its top while the idle old set kept its frames; and a loop
 * over the cache beside a hot set promoted its own pages over the hot set's.
 * tests/attack_ws.)
 *
 * The shadow table: one 64-bit word per slot, a power of two at least the
 * frame count, indexed by a hash of (file, page index) that keeps a file's
 * groups of eight neighbouring pages on one line (lpc_pool_ws_key); a word
 * holds 30 bits of the hash (the fingerprint, with the page's place in its
 * group folded in and the low bit forced so that no entry is 0), a DROPPED
 * bit (a stream's drop-behind took it, not the evictor:
 * lpc_pool_ws_dropped), the WORKINGSET bit, and the eviction clock (evictions so far, 32 bits, taken
 * per batch of the hand) at the eviction.  An eviction overwrites its slot
 * (the older shadow is forgotten: a refault counts only within a cache's
 * worth of evictions anyway, and the table holds about that many); a miss
 * that finds its fingerprint clears the slot with a CAS, so one eviction
 * counts one refault at most.
 *
 * Concurrency.  Every access is a relaxed atomic on one word (the table,
 * the clock, the target), and no decision about data or identity depends on
 * it: a shadow is a hint.  A collision, a lost or a stale shadow, or two
 * threads' updates of the target in either order only change where
 * demotion stops, never what a read returns or whether a dirty page is
 * kept (the evictor's checks, E1-E8, are unchanged).  What must hold is
 * that the target stays within [min, max] (rule WS-TARGET-BOUNDS, checked
 * where it is read: lpc_pool_ws_target): it is changed only by a CAS loop
 * that computes the clamped value from the one it replaces
 * (lpc_pool_ws_nudge), so concurrent nudges cannot push it past a bound (a
 * fetch_add then a clamp could; tests/model/ws_target.pml, with that broken
 * variant).
 *
 * Cost.  Nothing on a hit.  On a miss, one relaxed load of `live` until the
 * first eviction; then one load of a shadow word (a cache miss, beside the
 * miss's own read, shared by the neighbours of its group: readahead's
 * lookups of a window's pages in order, and a scan's evictions, which the
 * hand takes in frame order, and a window's frames are mostly in file
 * order, run.c).  A refault writes shared lines: a CAS on the shadow's
 * slot, and on the line of the target and the refault counts, one or two
 * adds and the target's CAS (only where it changes).  On an eviction, one
 * relaxed store; per batch of the hand, two or three adds on the clock's
 * line.  The table is calloc'd: its memory is paid as evictions touch it,
 * 8 to 16 bytes per frame (0.2-0.4 % of a 4 KiB frame).
 */
#ifndef LPC_PAGE_WORKINGSET_H
#define LPC_PAGE_WORKINGSET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/compiler.h"
#include "core/debug.h"

struct lpc_pool;

struct lpc_workingset {
	/* Read-mostly: set at init (min, max by the reclaimer's init). */
	_Atomic uint64_t *shadow; /* [mask + 1]; NULL: no shadows (CLOCK, no memory) */
	uint64_t mask;
	uint32_t window;          /* the frames: when the recent counts halve, and
				   * the largest step (ws_weight) */
	uint32_t min, max;        /* the target's bounds */
	/* Set (relaxed) by the first shadow stored: until then a miss does
	 * not look in the table. */
	_Atomic bool live;
	/* Evictions so far (mod 2^32), advanced once per batch of the hand;
	 * and recent evictions, all and those of pages that had been active
	 * (both halved when `all` passes the window): how many shadows of
	 * each kind a refault was drawn from (lpc_pool_ws_refault's weight). */
	_Atomic uint32_t clock lpc_cacheline_aligned;
	_Atomic uint32_t recent_all, recent_active;
	/* CLOCK2's active target, in [min, max]: lpc_pool_ws_nudge only; on
	 * its own line, written by refaults and by an eviction of a page read
	 * ahead and never used (the clock's line is the evictors' per batch). */
	_Atomic uint32_t target lpc_cacheline_aligned;
	/* Refaults seen, and of them those of a page that had been active. */
	_Atomic uint64_t refaults, refaults_active;
};

/* Sets ws up for a pool of nframes; with_table false: no shadows (policy
 * CLOCK), the target fixed.  Return: 0 or -ENOMEM.  Context: pool init. */
int lpc_pool_ws_init(struct lpc_workingset *ws, uint32_t nframes, bool with_table);
void lpc_pool_ws_destroy(struct lpc_workingset *ws);

/* The target's bounds and its start (the upper bound).  Context: cache
 * creation, before any allocation (reclaim/reclaimer.c). */
void lpc_pool_ws_set_bounds(struct lpc_workingset *ws, uint32_t min, uint32_t max);

/* Pages of a file whose shadows share a line of the table: a group of
 * 2^LPC_WS_GROUP_SHIFT neighbours (8 words, 64 bytes). */
#define LPC_WS_GROUP_SHIFT 3
#define LPC_WS_GROUP_MASK ((1ull << LPC_WS_GROUP_SHIFT) - 1)

/* Two words mixed into one well-spread word. */
static inline uint64_t lpc_pool_ws_mix(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ (b * 0x9e3779b97f4a7c15ull);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return x;
}

/* The key of (file, index): file_id is the file's lpc_file ws_id.  The
 * group's hash, with the page's place in its group in the low bits, so
 * that the eight neighbours take the eight slots of one line (the table's
 * slot is key & mask): a scan evicts and readahead looks up runs of
 * neighbours, one cache miss per eight pages, not per page ("Cost").  The
 * place is XORed with three bits of the group's hash: where every page
 * touched has the same place (one-page files, a stride of 8 pages, the
 * first page of each 32 KiB record) the plain place used one slot of each
 * line, an eighth of the table, and refaults near the cache's span went
 * unseen: a loop beside an idle hot set hit from its tenth pass, not its
 * fifth (tests/attack_runcap). */
static inline uint64_t lpc_pool_ws_key(uint64_t file_id, uint64_t index)
{
	uint64_t h = lpc_pool_ws_mix(file_id, index >> LPC_WS_GROUP_SHIFT);

	return (h & ~LPC_WS_GROUP_MASK) | ((index ^ (h >> 58)) & LPC_WS_GROUP_MASK);
}

/* A stable id for a file from its device and inode. */
static inline uint64_t lpc_pool_ws_file_id(uint64_t dev, uint64_t ino)
{
	return lpc_pool_ws_mix(dev * 0xff51afd7ed558ccdull, ino);
}

/* The evictor took page `key` out (reclaim/evict.c E6); workingset: it had
 * been active.  clock: the batch's lpc_pool_ws_clock. */
void lpc_pool_ws_evicted(struct lpc_workingset *ws, uint64_t key, bool workingset, uint32_t clock);

/* A stream dropped page `key` behind its reader (filemap/readahead.c A5):
 * its shadow says so, and a refault of it counts within a cache's worth of
 * turnover (the evictor would have kept it that long), whatever the split.
 * clock: as lpc_pool_ws_evicted's; the dropper advances the clock by its
 * drops as the evictor does by its evictions. */
void lpc_pool_ws_dropped(struct lpc_workingset *ws, uint64_t key, uint32_t clock);

/* The clock for a batch, and its advance by the batch's evictions. */
static inline uint32_t lpc_pool_ws_clock(struct lpc_workingset *ws)
{
	return atomic_load_explicit(&ws->clock, memory_order_relaxed);
}

void lpc_pool_ws_advance(struct lpc_workingset *ws, uint32_t evicted, uint32_t evicted_active);

/* A demand miss of `key` read its page: whether it refaults (its shadow
 * within the span of its kind: counted, the target moved; a dropped page's
 * moves nothing).  Return: LPC_WS_NO_REFAULT (0), LPC_WS_REFAULT, or
 * LPC_WS_REFAULT_DROPPED (its shadow was a drop-behind's).  Context: any; a
 * relaxed load when no page was evicted yet. */
enum { LPC_WS_NO_REFAULT, LPC_WS_REFAULT, LPC_WS_REFAULT_DROPPED };
int lpc_pool_ws_refault(struct lpc_pool *c, uint64_t key);

/* Moves the target up (the active side was too small) or down (the
 * inactive side) by one refault's weight, clamped to [min, max]. */
void lpc_pool_ws_nudge(struct lpc_workingset *ws, bool up);

/* The target, as the evictor reads it (reclaim/evict.c, at each look at
 * the active count).  Rule WS-TARGET-BOUNDS (LPC_DEBUG): it is within
 * [min, max] whenever anyone reads it (lpc_pool_ws_nudge's clamp; a store
 * that bypassed it, or a clamp broken by a race, fires here). */
static inline uint32_t lpc_pool_ws_target(const struct lpc_workingset *ws)
{
	uint32_t t = atomic_load_explicit(&ws->target, memory_order_relaxed);

	lpc_debug_check(t >= ws->min && t <= ws->max, "WS-TARGET-BOUNDS", NULL,
			"active target %u outside [%u, %u]", t, ws->min, ws->max);
	return t;
}

#endif /* LPC_PAGE_WORKINGSET_H */
