/* SPDX-License-Identifier: MIT */
/*
 * writeback.h - writes through the cache and their way to the file: lpc_pwrite
 * and lpc_page_mark_dirty (write.c), writeback and lpc_fsync (writeback.c),
 * the index side of both (dirty.c: flags, tags, the errseq), lpc_truncate
 * (truncate.c), the flusher and throttling (flusher.c).
 *
 * Above filemap/ (it uses the file object and the index's tags), below
 * cache/ (which owns one struct lpc_wb per cache and starts and stops
 * its flusher).  The protocol is told in writeback.c.
 */
#ifndef LPC_WRITEBACK_WRITEBACK_H
#define LPC_WRITEBACK_WRITEBACK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "filemap/filemap.h"

/* How a pass writes: WB_SYNC (fsync, close): the TOWRITE pages, waiting for
 * page locks and for writes in flight; WB_ASYNC (the flusher and
 * throttling; reclaim only kicks the flusher, E8): DIRTY pages it can lock
 * at once, skipping those in flight. */
enum lpc_wb_mode { LPC_WB_SYNC = 0, LPC_WB_ASYNC = 1 };

/* A cache's writeback state: limits and the flusher thread. */
struct lpc_wb {
	struct lpc_files *files;
	uint64_t expire_ns;   /* flusher age */
	int64_t bg_pages;     /* background threshold (dirty pages) */
	int64_t limit_pages;  /* hard limit: writers above it write back */
	pthread_mutex_t lock; /* stop, kick */
	pthread_cond_t cond;  /* the flusher's sleep; writers waiting for it */
	pthread_t thread;
	bool stop, kick;
	/* The flusher starts when first needed (flusher.c F0-F3): allowed,
	 * started and thread change under spawn_lock, a mutex held only
	 * around pthread_create and stop's hand-over (never while waiting
	 * for anything, so it may be taken under an index lock); running
	 * mirrors started for the lock-free check of lpc_wb_need. */
	pthread_mutex_t spawn_lock;
	bool allowed, started;
	_Atomic bool running;
	bool timed; /* writeback by age (expire_ns not "never"): the first
		     * dirty page needs the thread */
	/* Writers above the background threshold kick the flusher once
	 * (lpc_wb_kick_bg sets it); the flusher clears it when it goes back to
	 * sleep.  A flag, not the lock: a streaming writer looks at it on
	 * every write, and only the first one above the threshold writes it. */
	_Atomic bool bg_on;
};

/* Defaults of the config fields (0 in lpc_config means these). */
#define LPC_WB_EXPIRE_MS 5000
#define LPC_WB_BACKGROUND_PCT 10
#define LPC_WB_LIMIT_PCT 20

/* Sets limits from cfg (0 fields: defaults) for nframes frames; starts no
 * thread.  Return: 0; -EINVAL for a percentage over 100 or a background
 * above the limit. */
int lpc_wb_init(struct lpc_wb *wb, struct lpc_files *fs, uint64_t expire_ms, uint64_t bg_pct,
		uint64_t limit_pct, uint32_t nframes);
/* Lets the flusher run (F0): it starts now if a page is dirty, else when
 * first needed (lpc_wb_need).  Context: any, not under an index lock. */
void lpc_wb_start(struct lpc_wb *wb);
/* The flusher is needed (F1): starts its thread unless it runs or
 * lpc_wb_stop forbade it; a failed pthread_create is tried again at the
 * next need.  Context: any; may hold an index lock; one relaxed load when
 * the thread runs. */
void lpc_wb_need(struct lpc_wb *wb);
/* Stops and joins the flusher (if started) and keeps it from starting
 * (F3); lpc_wb_start allows it again.  lpc_wb_destroy stops it for good
 * and frees what init made. */
void lpc_wb_stop(struct lpc_wb *wb);
void lpc_wb_destroy(struct lpc_wb *wb);

/*
 * One pass over f.  budget: at most this many pages (0: no limit).
 * Return: 0, or the first write error of this pass (the pages it failed
 * are dirty again and the error is recorded on f).
 */
int lpc_wb_file(struct lpc_file *f, enum lpc_wb_mode mode, uint64_t budget,
		       struct lpc_tcache *t);
/* The same, telling how many pages the pass started writing (*written). */
int lpc_wb_pass(struct lpc_file *f, enum lpc_wb_mode mode, uint64_t budget,
		struct lpc_tcache *t, uint64_t *written);

/* What the last close runs (files->flush): writes every dirty page back
 * and waits for writes in flight, no fdatasync.  Return: 0 or an error per
 * lpc_fsync's rule. */
int lpc_wb_flush_file(struct lpc_file *f);

/* Wakes the flusher for a round now (eviction's hand-off, E8 of
 * reclaim/evict.c; throttling).  Context: takes wb->lock; not in an RCU
 * read section (it may wait for the flusher's lock). */
void lpc_wb_kick(struct lpc_wb *wb);

/* A writer that left the cache above the background threshold: wakes the
 * flusher unless a writer has since it last slept, so writeback runs beside
 * a streaming writer instead of after it (throttling, or the 500 ms tick).
 * Context: as lpc_wb_kick when it kicks; otherwise one shared load. */
static inline void lpc_wb_kick_bg(struct lpc_wb *wb)
{
	/* No flusher runs (its start failed, or it was stopped before its
	 * round cleared bg_on): kick whatever bg_on says, so the start is
	 * tried again (flusher.c F2). */
	if (!atomic_load_explicit(&wb->running, memory_order_relaxed)) {
		atomic_store_explicit(&wb->bg_on, true, memory_order_relaxed);
		lpc_wb_kick(wb);
		return;
	}
	if (!atomic_load_explicit(&wb->bg_on, memory_order_relaxed) &&
	    !atomic_exchange_explicit(&wb->bg_on, true, memory_order_relaxed))
		lpc_wb_kick(wb);
}

/* Throttling: a writer that left the cache over the hard limit. */
void lpc_wb_throttle(struct lpc_wb *wb, struct lpc_file *f, struct lpc_tcache *t);

/* ftruncate(size) of f's kernel file; grows: it may extend the file, so
 * it waits for writeback's writes in flight and keeps new ones out until
 * done (rule S5, writeback.c).  Return: 0 or negative errno.  Context:
 * f->size_lock held, no page lock. */
int lpc_wb_ftruncate(struct lpc_file *f, uint64_t size, bool grows);

/* SZ1 (write.c): raises lpc's size of f to at least `end` under size_lock
 * before bytes below `end` are in a page.  Return: the size just before (the
 * bound below which the file may hold bytes).  Context: f->trunc_lock held
 * shared, no page lock. */
uint64_t lpc_wb_extend(struct lpc_file *f, uint64_t end);
/* The find/make/wait loop of lpc_pwrite (D1) and a write pin's slow path
 * (WP1-WP3), write.c: page `index` of f held and locked for writing.  `how`:
 * LPC_WB_GET_PIN hold a pin (the write pin's), not a reference;
 * LPC_WB_GET_STABLE wait for a write of the page in flight (WP3: stable
 * pages); LPC_WB_GET_RA_USED a page read ahead counts as used.  yp: the
 * yield point before the lock (LPC_YP_D1, LPC_YP_WP1).  make() makes an
 * absent page the caller's range needs no read for: 0 with *out set (the
 * page held and locked as above, or NULL: inserted, nothing held), -EEXIST
 * (another inserted first: looked up again), -ENOMEM.  Return: 0 with *out
 * (NULL only as make() left it); negative errno.  Context: f->trunc_lock
 * held shared, no page lock; may sleep. */
enum {
	LPC_WB_GET_PIN = 1,
	LPC_WB_GET_STABLE = 2,
	LPC_WB_GET_RA_USED = 4,
	LPC_WB_LOCK_HELD_LATER = 8, /* lock step only: no re-check that p is
				     * still f's; the caller makes it (WP2) */
};
typedef int (*lpc_wb_make_fn)(struct lpc_file *f, uint64_t index, void *arg,
			      struct lpc_page **out);
int lpc_wb_get_locked(struct lpc_file *f, uint64_t index, bool fresh, unsigned how,
		      enum lpc_yield_point yp, lpc_wb_make_fn make, void *arg,
		      struct lpc_tcache *t, struct lpc_page **out);
/* Its lock step, also a write pin's fast path's (WP1-WP3) on p, held by
 * the caller: yield point yp, lock, still f's at `index` (else unlocked:
 * false; not checked with LPC_WB_LOCK_HELD_LATER), with LPC_WB_GET_STABLE
 * no write in flight.  Return: true, p
 * locked. */
bool lpc_wb_lock_for_write(struct lpc_file *f, struct lpc_page *p, uint64_t index,
			   unsigned how, enum lpc_yield_point yp);
/* After dirtying (lpc_pwrite, a write unpin): throttles the caller when the
 * cache's dirty pages pass the limit, or kicks the flusher past the
 * background threshold.  Context: no page lock of f held. */
void lpc_wb_balance(struct lpc_file *f, struct lpc_tcache *t);

/* Publishes lpc's size of f to the kernel file (ftruncate) if they differ.
 * Return: 0 or negative errno.  Context: takes f->size_lock. */
int lpc_wb_publish_size(struct lpc_file *f);

/*
 * Dirty pages, writeback states and write errors (dirty.c): the index side
 * of the protocol.  Each keeps the DIRTY flag and the DIRTY tag equal, both
 * changed under the index lock; see writeback.c for the protocol (D1-D3,
 * K1-K5, Y1-Y4).
 */
/* D3: marks p (locked by the caller) DIRTY at `index` with its tag.
 * Return: 0; -ENOENT if p is no longer in f's index at `index`. */
int lpc_wb_dirty_locked(struct lpc_file *f, struct lpc_page *p, uint64_t index);
/* D3 for a write unpin's pages[0..n) (WU1, wpin.c): pages of f, each
 * locked by the caller, NULL entries skipped; those not DIRTY yet become
 * DIRTY with their tags under one index lock, and the counts move once.
 * rcs[i]: 0; -ENOENT if pages[i] is no longer in f's index; -EBADF (all,
 * nothing dirtied) if f is open read-only.  Return: the
 * pages this call made DIRTY.  Context: f valid (its write pins count). */
unsigned lpc_wb_dirty_pinned(struct lpc_file *f, struct lpc_page *const *pages, unsigned n,
			     int *rcs);
/* M3 for a page filled by a write: inserts p (PUBLISHED|UPTODATE|DIRTY) and
 * tags it DIRTY.  Return: 0, -EEXIST, -ENOMEM. */
int lpc_wb_insert_dirty(struct lpc_file *f, uint64_t index, struct lpc_page *p);
/* K3: p (locked, DIRTY, in the index) goes DIRTY -> WRITEBACK, tags too.
 * Return: true; false if p left the index (nothing changed). */
bool lpc_wb_start_writeback(struct lpc_file *f, struct lpc_page *p, uint64_t index);
/* K5: ends p's writeback; err != 0 re-dirties it (its data is kept).
 * Context: no page lock needed; takes the index lock. */
void lpc_wb_end_writeback(struct lpc_file *f, struct lpc_page *p, uint64_t index, int err);
/* Clears p's TOWRITE tag (a page fsync found clean). */
void lpc_wb_clear_towrite(struct lpc_file *f, uint64_t index);
/* True if p is in f's index at `index` now.  Context: any (RCU inside). */
bool lpc_wb_holds(struct lpc_file *f, struct lpc_page *p, uint64_t index);
/* Truncate's removal of p (locked, not under writeback): deletes it from
 * the index if there, un-dirties it, drops the index's reference.
 * Return: true if removed. */
bool lpc_wb_truncate_page(struct lpc_file *f, struct lpc_page *p, uint64_t index);
/* lpc_truncate's gate against write pins (wpin.c WC6): begin sleeps until
 * no page of f is write-pinned, then keeps new write pins out; end lets
 * them in.  Context: no lock held; may sleep. */
void lpc_wb_wpins_cut_begin(struct lpc_file *f);
void lpc_wb_wpins_cut_end(struct lpc_file *f);
/*
 * Up to max pages of f tagged `tag` at index >= first, in index order, each
 * with a reference taken (under the index lock).  Return: the number.
 */
unsigned lpc_wb_gang_tag_get(struct lpc_file *f, uint64_t first, unsigned tag,
				  struct lpc_page **pages, uint64_t *idx, unsigned max);
/* The same for every page (tag LPC_RADIX_NTAGS means untagged). */
#define LPC_WB_ANY LPC_RADIX_NTAGS

/*
 * Write errors: an errseq per file, as the kernel's (lib/errseq.c).  A
 * record bumps a counter and clears SEEN; lpc_wb_err_sample at the start
 * of a call, lpc_wb_err_check at its end returns an error recorded in
 * between (to every caller whose window holds it), or else one recorded
 * before that no caller has returned yet (to exactly one: it sets SEEN).
 */
void lpc_wb_err_record(struct lpc_file *f, int err);
uint64_t lpc_wb_err_sample(struct lpc_file *f);
int lpc_wb_err_check(struct lpc_file *f, uint64_t since);

#endif /* LPC_WRITEBACK_WRITEBACK_H */
