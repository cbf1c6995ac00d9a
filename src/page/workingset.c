/* SPDX-License-Identifier: MIT */
/*
 * workingset.c - shadow entries of evicted pages, and the active target that
 * their refaults move: see workingset.h for the policy, the table and why
 * every access may be relaxed.
 */
#include <errno.h>
#include <stdlib.h>

#include "page/pool.h"
#include "page/workingset.h"

/* A word: fingerprint (30 bits) | DROPPED (1) | WORKINGSET (1) | clock (32). */
#define WS_FP_SHIFT 34
#define WS_DROPPED_BIT (1ull << 33)
#define WS_ACTIVE_BIT (1ull << 32)
/* The largest step of the target on one refault: a sixteenth of the window. */
#define WS_STEP_MAX_DIV 16

/* The group's hash bits, and the page's place in its group: in a table
 * of fewer than a group's slots two pages of one group share a slot. */
static uint64_t ws_fp(uint64_t key)
{
	return ((key >> WS_FP_SHIFT) ^ ((key & LPC_WS_GROUP_MASK) << 1)) |
	       1; /* never 0: 0 is an empty slot */
}

int lpc_pool_ws_init(struct lpc_workingset *ws, uint32_t nframes, bool with_table)
{
	uint64_t slots = 1;

	ws->shadow = NULL;
	ws->mask = 0;
	ws->window = nframes;
	ws->min = ws->max = 0;
	atomic_init(&ws->live, false);
	atomic_init(&ws->clock, 0);
	atomic_init(&ws->recent_all, 0);
	atomic_init(&ws->recent_active, 0);
	atomic_init(&ws->target, 0);
	atomic_init(&ws->refaults, 0);
	atomic_init(&ws->refaults_active, 0);
	if (!with_table)
		return 0;
	while (slots < nframes)
		slots <<= 1;
	/* calloc: untouched slots cost no memory (workingset.h, Cost). */
	ws->shadow = calloc(slots, sizeof(*ws->shadow));
	if (!ws->shadow)
		return -ENOMEM;
	ws->mask = slots - 1;
	return 0;
}

void lpc_pool_ws_destroy(struct lpc_workingset *ws)
{
	free(ws->shadow);
	ws->shadow = NULL;
}

void lpc_pool_ws_set_bounds(struct lpc_workingset *ws, uint32_t min, uint32_t max)
{
	ws->min = min < max ? min : max;
	ws->max = max;
	atomic_store_explicit(&ws->target, max, memory_order_relaxed);
}

static void ws_store(struct lpc_workingset *ws, uint64_t key, uint64_t word)
{
	if (!ws->shadow)
		return;
	atomic_store_explicit(&ws->shadow[key & ws->mask], word, memory_order_relaxed);
	if (!atomic_load_explicit(&ws->live, memory_order_relaxed))
		atomic_store_explicit(&ws->live, true, memory_order_relaxed);
}

void lpc_pool_ws_dropped(struct lpc_workingset *ws, uint64_t key, uint32_t clock)
{
	ws_store(ws, key, ws_fp(key) << WS_FP_SHIFT | WS_DROPPED_BIT | clock);
}

void lpc_pool_ws_evicted(struct lpc_workingset *ws, uint64_t key, bool workingset, uint32_t clock)
{
	ws_store(ws, key, ws_fp(key) << WS_FP_SHIFT | (workingset ? WS_ACTIVE_BIT : 0) | clock);
}

int lpc_pool_ws_refault(struct lpc_pool *c, uint64_t key)
{
	struct lpc_workingset *ws = &c->ws;
	_Atomic uint64_t *slot;
	uint64_t word;
	uint32_t distance, nactive, span;

	if (!atomic_load_explicit(&ws->live, memory_order_relaxed))
		return LPC_WS_NO_REFAULT;
	slot = &ws->shadow[key & ws->mask];
	word = atomic_load_explicit(slot, memory_order_relaxed);
	if (!word || word >> WS_FP_SHIFT != ws_fp(key))
		return LPC_WS_NO_REFAULT;
	/* One eviction, one refault: the miss that clears it counts it. */
	if (!atomic_compare_exchange_strong_explicit(slot, &word, 0, memory_order_relaxed,
						     memory_order_relaxed))
		return LPC_WS_NO_REFAULT;
	/* Would it have stayed, had the other side given way?  A page never
	 * active: if the inactive side had had the active pages' frames too;
	 * one that had been: if the active side had had the inactive ones'.
	 * Further back, no split of this cache would have kept it: no sign
	 * either way (a loop over more than the cache, for one).  A page a
	 * stream dropped behind it (DROPPED): if it had been left to the
	 * evictor, within a cache's worth of turnover (filemap/readahead.c
	 * A5 guessed wrong: a loop over part of a file larger than the
	 * cache).  It says nothing of the split, so it moves no target: the
	 * page is kept from the next drops (REFAULTED, page/page.h), and the
	 * evictor's own refaults decide the split from there.  (Moving it as
	 * a page never active's would let Zipf readers that miss pages a
	 * scanner dropped a moment ago shrink the hot set's side.) */
	distance = lpc_pool_ws_clock(ws) - (uint32_t)word;
	nactive = atomic_load_explicit(&c->nactive, memory_order_relaxed);
	if (word & WS_DROPPED_BIT)
		span = c->nframes;
	else if (word & WS_ACTIVE_BIT)
		span = c->nframes > nactive ? c->nframes - nactive : 0;
	else
		span = nactive;
	if (distance > span)
		return LPC_WS_NO_REFAULT;
	if (word & WS_DROPPED_BIT)
		return LPC_WS_REFAULT_DROPPED;
	atomic_fetch_add_explicit(&ws->refaults, 1, memory_order_relaxed);
	if (word & WS_ACTIVE_BIT)
		atomic_fetch_add_explicit(&ws->refaults_active, 1, memory_order_relaxed);
	lpc_pool_ws_nudge(ws, word & WS_ACTIVE_BIT);
	return LPC_WS_REFAULT;
}

void lpc_pool_ws_advance(struct lpc_workingset *ws, uint32_t evicted, uint32_t evicted_active)
{
	uint32_t all;

	if (!evicted)
		return;
	atomic_fetch_add_explicit(&ws->clock, evicted, memory_order_relaxed);
	all = atomic_fetch_add_explicit(&ws->recent_all, evicted, memory_order_relaxed) + evicted;
	if (evicted_active)
		atomic_fetch_add_explicit(&ws->recent_active, evicted_active, memory_order_relaxed);
	if (all > ws->window) {
		/* Halved: an add between the loads and the stores is lost,
		 * which only blurs a ratio that is a hint anyway. */
		uint32_t act = atomic_load_explicit(&ws->recent_active, memory_order_relaxed);

		atomic_store_explicit(&ws->recent_all, all / 2, memory_order_relaxed);
		atomic_store_explicit(&ws->recent_active, (act < all ? act : all) / 2,
				      memory_order_relaxed);
	}
}

/* One refault's weight: the other kind's recent evictions per own kind's,
 * at least 1, at most WS_STEP_MAX_DIV-th of the window (workingset.h). */
static uint32_t ws_weight(struct lpc_workingset *ws, bool up)
{
	uint32_t all = atomic_load_explicit(&ws->recent_all, memory_order_relaxed);
	uint32_t act = atomic_load_explicit(&ws->recent_active, memory_order_relaxed);
	uint32_t rest = all > act ? all - act : 0;
	uint32_t own = up ? act : rest, other = up ? rest : act;
	uint32_t w = own ? other / own : other;
	uint32_t cap = ws->window / WS_STEP_MAX_DIV;

	if (w > cap)
		w = cap;
	return w ? w : 1;
}

void lpc_pool_ws_nudge(struct lpc_workingset *ws, bool up)
{
	uint32_t w = ws_weight(ws, up);
	uint32_t old = atomic_load_explicit(&ws->target, memory_order_relaxed), want;

	do {
		if (up)
			want = ws->max - old > w ? old + w : ws->max;
		else
			want = old - ws->min > w ? old - w : ws->min;
		if (want == old)
			return;
	} while (!atomic_compare_exchange_weak_explicit(&ws->target, &old, want,
							memory_order_relaxed,
							memory_order_relaxed));
}
