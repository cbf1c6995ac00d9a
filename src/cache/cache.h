/* SPDX-License-Identifier: MIT */
/*
 * cache.h - the cache object: the top of the parts, and the only one that
 * includes every other.  A cache is a descriptor pool (page/pool.h, which
 * also owns the per-thread blocks), the cache's I/O (io/io.h), its file
 * table (filemap/filemap.h) and its eviction (reclaim/reclaim.h, which
 * installs itself in the pool at create).
 *
 * Lock order (outer to inner):
 *
 *   pool->reclaim_lock
 *     lpc_threads_lock
 *       pool->free_lock
 *   files->lock
 *     lpc_threads_lock
 *     file index lock (file->tree_lock, or tree_rwlock in LOCKED mode)
 *   file->trunc_lock (rwlock: lpc_pwrite shared, lpc_truncate exclusive)
 *     file->size_lock (lpc_truncate; writeback's publish of the size;
 *                      lpc_pwrite's raise of the size, SZ1: each taken with
 *                      no page lock and no WRITEBACK page held)
 *       page lock
 *       WRITEBACK (not a lock, but waited for like one: lpc_truncate waits
 *                  for a page's write in flight to end, under both locks)
 *       file->dio_lock (write: a growing ftruncate, rule S5 in
 *                       writeback/writeback.c; read: writeback's write in
 *                       flight, K4, with no other lock held: a leaf)
 *   wb->lock (the flusher's sleep; a leaf)
 *   page lock (the LOCKED bit: a sleeping lock)
 *     file index lock
 *       radix leaf lock (a spin lock, index/radix.c: taken after the index
 *                        lock by a structural writer, or alone by a fast
 *                        insert or delete; one at a time; its holder takes
 *                        no other lock, never sleeps, and waits for no grace
 *                        period, so it is a leaf of this order)
 *       lpc_threads_lock
 *         pool->free_lock (leaf)
 *
 * Each edge, with the call path that takes it:
 *   reclaim_lock -> lpc_threads_lock   page/alloc.c reclaim -> steal_begin,
 *                                      steal_end -> lpc_towner_for_each (T1, T3-T4);
 *                                      a grace period's count by a thread with
 *                                      no block for the cache (core/thread.c
 *                                      lpc_count_gp: reclaim's T2, the drain's
 *                                      T2, RT3)
 *   reclaim_lock -> free_lock          reclaim -> shared_take, the pending
 *                                      list, lpc_page_free_chain
 *   lpc_threads_lock -> free_lock      thread exit: lpc_thread_exit ->
 *                                      tcache_retire -> lpc_pool_thread_exit ->
 *                                      lpc_page_free_chain
 *   files->lock -> lpc_threads_lock   filemap/file.c lpc_files_open counting a
 *                                      direct-I/O fallback (lpc_tcache or
 *                                      lpc_count_noblock)
 *   files->lock -> index lock          lpc_cache_destroy -> cache_busy ->
 *                                      lpc_files_nrpages (lpc_file_close and
 *                                      lpc_files_close_all drop files->lock
 *                                      before removing pages)
 *   page lock -> index lock            miss.c filemap_read_page (M5, a failed
 *                                      read) -> lpc_filemap_delete
 *   tree_rwlock (read) -> tree_lock    LOCKED mode's miss: the read lock held
 *                                      from M3 to M5, the insert under tree_lock
 *                                      (miss.c); a failed read drops the read
 *                                      lock before its delete takes the write lock
 *   index lock -> radix leaf lock      index/radix.c: lpc_radix_insert, delete,
 *                                      delete_if, tag_set, tag_clear lock the
 *                                      leaf they write (under the caller's
 *                                      index lock); lpc_radix_insert_fast and
 *                                      lpc_radix_leaf_lock take it with no
 *                                      index lock (miss.c M3, remove.c)
 *   index lock -> free_lock            filemap/remove.c lpc_filemap_remove_all
 *                                      -> lpc_page_release -> lpc_page_free_deferred
 *                                      (the last reference of a page)
 *   index lock -> lpc_threads_lock     the same path's lpc_tcache(), only for
 *                                      a thread without its block (close and
 *                                      destroy take theirs before)
 *   (trylock) index lock -> free_lock  reclaim/evict.c E2-E7: the evictor
 *                                      takes index locks with trylock only,
 *                                      inside a read section, in any order;
 *                                      E7's deferred free takes free_lock
 *   reclaimer lock                     reclaim/reclaimer.c: a leaf, taken by
 *                                      an allocation that wakes the
 *                                      reclaimer (it may hold page locks),
 *                                      by a thread's exit under
 *                                      lpc_threads_lock (page/alloc.c OD6's
 *                                      kick) and by destroy; never held while
 *                                      evicting or across a grace period
 *   trunc_lock -> size_lock -> page lock  writeback/truncate.c: lpc_truncate
 *                                      locks each page past the end and waits
 *                                      for its WRITEBACK; a writeback ends
 *                                      WRITEBACK (K5) before it takes
 *                                      size_lock, so the wait ends
 *   files->lock (wb_idle) -> a flusher pass   filemap/file.c: the last close
 *                                      waits on files->lock's condition for
 *                                      a flusher pass on f to end; the pass
 *                                      takes page locks with trylock only,
 *                                      and size_lock, which no lpc_truncate
 *                                      holds during the last close
 *   page lock -> index lock (writes)   writeback/dirty.c: D3, K3 under the page
 *                                      lock; K5 takes the index lock alone
 *   page lock -> io->reg_lock          io/uring.c: a thread's first I/O through
 *                                      the cache (a miss holds the page lock)
 *                                      makes its ring and, once per cache,
 *                                      registers the arena under reg_lock (a
 *                                      leaf: nothing is taken inside it)
 *   page lock -> lpc_threads_lock      io/uring.c: the ring lives in the
 *                                      thread's block (lpc_tcache); ring_free
 *                                      runs under lpc_threads_lock (exit,
 *                                      orphan) and takes nothing
 * Writes: lpc_pwrite, lpc_fsync and writeback take page locks one at a
 * time; a WB_SYNC pass submits the pages it holds in WRITEBACK before it
 * blocks on a page lock, so no wait for a lock is made with an unsubmitted
 * write that another thread may wait for.
 * Rules: lpc waits for a page lock (or a page's WRITEBACK) with another lock
 * held in one place only: lpc_truncate, under trunc_lock and size_lock.
 * Everywhere else the wait is made with nothing held (miss.c M6, write.c
 * D1, writeback.c K1 and K2; invalidate_one and the evictor only test
 * LOCKED).  Hence, with a page lock held, no thread (lpc's or a user's)
 * takes trunc_lock or size_lock or calls what does:
 *   - lpc_pwrite (trunc_lock shared; its throttling flushes batches),
 *     lpc_truncate, lpc_fsync and the last lpc_file_close (a WB_SYNC pass
 *     and lpc_wb_publish_size): the caller holds no page lock (lpc.h);
 *   - batch_flush (writeback.c: after K5 it may take size_lock through
 *     lpc_wb_publish_size): K1 flushes before it waits for a lock, K2
 *     unlocks its page before it flushes (8befe9c; with the page locked it
 *     deadlocked against lpc_truncate: tests/regress/regress_k2_size_lock.c),
 *     a full batch is flushed between two pages, throttling runs after
 *     lpc_pwrite dropped trunc_lock.
 * And a thread holding pages in WRITEBACK that it has not submitted waits
 * for nothing (a page lock, size_lock) before it submits them (K1, K2;
 * batch_flush ends WRITEBACK at K5 before lpc_wb_publish_size), since
 * lpc_truncate waits for WRITEBACK under size_lock.  LPC_DEBUG checks the
 * first rule where those locks are taken (PAGE-LOCK-HELD: debug.h).
 * A user may make the other calls with page locks held (reads of other
 * pages, lpc_page_mark_dirty, lpc_invalidate).  free_lock is never held across I/O or a
 * grace period.  reclaim_lock is held across one (T2, and rcu_barrier), so it
 * is never taken in a read section, under an index lock, or with a frozen
 * page.
 *
 * Grace periods and frozen pages.  Never wait for a grace period
 * (lpc_rcu_synchronize, lpc_rcu_barrier, or anything that calls them:
 * lpc_page_alloc_frame -> reclaim) while this thread holds a frozen page in
 * a slot (remover step A done, step B not yet): a lockless reader that loaded
 * the slot spins R2 -> R3 -> R2 inside its read section until B, so the grace
 * period would never end.  Relied on by: remove.c's invalidate_one (A and B
 * under the index lock, nothing between them but flag checks, C after the
 * lock is dropped); page/alloc.c's reclaim (T2 and its barrier run with no
 * index lock and no page frozen: callers of lpc_page_alloc_frame hold
 * neither); reclaim/evict.c (E4 to E6 under an index lock taken with
 * trylock, nothing but flag loads and the radix delete between them; the
 * direct reclaim's grace period and the reclaimer's barrier come after the
 * batch's read section); core/rcu.h's lpc_rcu_synchronize context.
 * Modelled by spin's BUG_GP_WHILE_FROZEN (tests/model/spec_get.pml) and, for
 * eviction, tests/model/evict.pml.
 *
 * Taken inside an RCU read section (so never held across a grace-period
 * wait, nor while waiting for one): lpc_threads_lock (lookup.c's find_slow
 * makes the thread's block there), a file's index lock (remove.c keeps a
 * frozen page's A..C in one section; LOCKED-mode lookups take the rwlock in
 * theirs; the LPC_DEBUG check LOOKUP-NOT-IN-INDEX), and free_lock (a final
 * put: page/alloc.c).
 */
#ifndef LPC_CACHE_CACHE_H
#define LPC_CACHE_CACHE_H

#include <pthread.h>

#include <lpc/lpc.h>

#include "core/compiler.h"
#include "core/rcu.h"
#include "core/thread.h"
#include "filemap/filemap.h"
#include "index/radix.h"
#include "io/io.h"
#include "page/page.h"
#include "page/pool.h"
#include "reclaim/reclaim.h"
#include "writeback/writeback.h"

struct lpc_cache {
	/* First: c->pool.owner.id is at offset 0, where the cache's id was. */
	struct lpc_pool pool;
	bool locked_lookup;
	struct lpc_io io; /* backend (io.ops) and fault hook (io.faults) */
	struct lpc_files files lpc_cacheline_aligned;
	struct lpc_reclaim reclaim; /* eviction: reclaim/reclaim.h */
	struct lpc_wb wb; /* limits and the flusher (writeback/) */
};

#endif /* LPC_CACHE_CACHE_H */
