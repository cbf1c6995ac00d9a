/* SPDX-License-Identifier: MIT */
/*
 * writeback.c - dirty pages to the file: writeback passes, lpc_fsync, and
 * what the last close and eviction need.
 *
 * Dirtying (write.c: lpc_pwrite, lpc_page_mark_dirty), with the page lock:
 *   D1 lock the page; re-check it is still in f's index at `index`
 *   D2 change the data between lpc_page_seq_write_begin and _end
 *   D3 set DIRTY; if it was clean, set the DIRTY tag under the index lock
 *      (writeback/dirty.c: flag and tag move together), then unlock
 * A page a write creates whole (or past the end) is filled while private
 * and inserted with UPTODATE|DIRTY and its tag in one index-lock section.
 *
 * A writeback pass (lpc_wb_file), per page in index order of the
 * tag it walks (TOWRITE for fsync and close, DIRTY for the flusher):
 *   K1 take a reference (under the index lock) and lock the page; WB_SYNC
 *      waits for the lock (after submitting what it holds), WB_ASYNC skips
 *      a locked page; re-check the page is still at `index`
 *   K2 under writeback already: WB_ASYNC skips it; WB_SYNC unlocks, waits
 *      for the write in flight (its data may predate the dirtying fsync
 *      must cover) and goes back to K1.  Clean: nothing to do (clear
 *      TOWRITE)
 *   K3 DIRTY -> WRITEBACK in one RMW, tags DIRTY/TOWRITE -> WRITEBACK,
 *      under the index lock; unlock the page.  A writer may dirty it again
 *      at once (D1-D3): it is then DIRTY|WRITEBACK and written again later
 *   K4 coalesce each run of contiguous pages in WRITEBACK into one vectored
 *      write, and submit the runs of the pass together (up to WB_RUNS runs
 *      and WB_PAGES pages: lpc_io_write_batch, one io_uring submission; the
 *      sync backend loops over pwritev); a short write is completed.  The
 *      batch is submitted before the pass waits for anything (a page lock,
 *      a write in flight) and at its end, so no wait is made with pages in
 *      WRITEBACK that are not submitted
 *   K5 per page: on failure record the error on the file (errseq) and set
 *      DIRTY again (the data is kept); then clear WRITEBACK and wake its
 *      waiters (release: they see DIRTY and the error)
 * DIRTY is cleared before the write (K3) so that a change made during the
 * write (after K3) leaves the page dirty: it is never lost.
 *
 * lpc_fsync (Y1-Y4):
 *   Y1 sample the file's errseq
 *   Y2 tag every DIRTY page TOWRITE (under the index lock), then write the
 *      TOWRITE pages (WB_SYNC): a writer that keeps dirtying pages adds
 *      DIRTY tags, not TOWRITE ones, so the pass ends
 *   Y3 wait for every page still tagged WRITEBACK (a flusher's write that
 *      began before Y2 took the page's DIRTY away: its data is older than
 *      the call, and must be on disk before it returns)
 *   Y4 publish lpc's size (ftruncate), fdatasync (its error is recorded
 *      too), then return the errseq's verdict on the window since Y1.
 * No lost write: a page dirtied before Y1 is DIRTY at Y2 (tagged TOWRITE,
 * and written by Y2 after any write in flight), or was taken to WRITEBACK
 * by another pass before Y2 (Y3 waits for it, and a failure is recorded
 * before its WRITEBACK clears, so Y4 sees it).  tests/model/writeback.pml
 * checks this, with broken variants; in LPC_DEBUG builds rule
 * FSYNC-INFLIGHT checks Y3 (every write begun before Y1 has ended after
 * Y3, by counts kept at K3 and K5), which the mutant no-y3 and
 * tests/regress/regress_fsync_inflight.c show firing.
 *
 * The file's size (SZ1-SZ5).  Three sizes exist:
 *   f->size   lpc's size: what lpc_pread, lpc_pin and writeback read up to
 *             (DESIGN: all use the same size).  Until lpc first writes or
 *             truncates the file (size_kept) it follows the kernel's (fstat,
 *             filemap/miss.c); from then on only lpc changes it: SZ1 raises
 *             it, lpc_truncate sets it.  Both under f->size_lock; readers
 *             take no lock (acquire loads).
 *   the file  the kernel's file on disk.  lpc changes it in three places:
 *             writeback's whole-page writes (K4) extend it, up to the end of
 *             the last page written; a publish (lpc_wb_publish_size: after a
 *             batch whose end passes lpc's size, at lpc_fsync's Y4 and at the
 *             last close) extends it to lpc's size or cuts the tail of lpc's
 *             last page that K4 wrote past lpc's size; lpc_truncate sets it.
 *             Other processes may change it too.
 *   io.size   lpc's end of the file, as last made or seen by lpc: the
 *             kernel's size (fstat) while lpc does not keep the size; after,
 *             raised by SZ2 (CAS-max) when a write reached further, set by a
 *             publish (SZ5, CAS) and lpc_truncate (CAS), never by fstat (what
 *             another process appended is not lpc's).
 * The rule (DESIGN, "The file's size"): the file is never cut below a byte
 * that a write, a writeback or another process put there and that lpc still
 * promises; lpc_truncate is the only call that shrinks the file below what
 * lpc's size was.  Hence:
 *   S1 no byte is dirty (or in a page being written) past lpc's size: SZ1
 *      raises the size before the bytes are in the page (D2-D3, or the new
 *      page's insert);
 *   S2 a publish cuts only to lpc's size read under size_lock (SZ3), and
 *      every raise holds size_lock, so no raise runs between the read and
 *      the ftruncate: with S1, every byte dirtied so far lies below the size
 *      it cuts to, and every byte dirtied later is dirtied after the
 *      ftruncate (its writer waited for size_lock), so written after it;
 *   S3 a publish cuts only what lies in lpc's own writes (kernel's end K <=
 *      io.size): bytes another process appended past them stay;
 *   S4 a writeback whose write ended past lpc's size publishes after it
 *      (after K5) with that end as lpc's own, and asks the kernel for the
 *      file's size: a write that landed after another publish's (or a
 *      truncate's) ftruncate is trimmed by its own publish, whatever io.size
 *      says.  io.size changes by CAS only (SZ2 max, SZ5 and truncate from the
 *      value they read), so a raise is not lost either: it is the hint that
 *      lets lpc_fsync's and the last close's publish do nothing (no system
 *      call) when lpc's end of the file is lpc's size.
 *   S5 no ftruncate of lpc's that may grow the kernel's file runs while a
 *      write of lpc's to the file is in the kernel (K4).  A growing
 *      ftruncate on ext4 zeroes the tail of the old last block through the
 *      kernel's page cache without waiting for direct I/O in flight (a
 *      shrinking one waits); an asynchronous O_DIRECT write (io_uring) of
 *      that block completing after it cannot invalidate the now dirty
 *      cached page: the kernel records EIO on the file ("Page cache
 *      invalidation failure on direct I/O", the next fdatasync fails) and
 *      later writes the stale cached block back over lpc's data.  (A sync
 *      O_DIRECT write holds the inode lock until done, so the sync backend
 *      never met it.)  f->dio_lock: batch_flush holds it for reading
 *      around lpc_io_write_batch only (K4W: no other lock held, none taken
 *      under it); lpc_wb_ftruncate holds it for writing around a growing
 *      ftruncate: a publish's extend (SZ4, kend < T) and every
 *      lpc_truncate (it does not know the kernel's size; a shrinking one
 *      waits for the writes anyway).  Writers first (file.c), so a stream
 *      of batches does not starve it.  A write whose pages are in
 *      WRITEBACK but not yet submitted (parked at K4) is not in flight:
 *      the ftruncate runs, and the write's own submission then flushes
 *      and invalidates the kernel's cached block first.  Lock order:
 *      size_lock -> dio_lock (write); dio_lock (read) is a leaf.
 *      Whole-file, not per block: ftruncates are rare, and a growing one
 *      waits for at most one batch per writing thread.
 * Steps:
 *   SZ1 lpc_pwrite, per page, before D1 or the new page (write.c): if the
 *      bytes end past lpc's size, take size_lock and store the new size
 *      (release); the size just before is the bound below which the file
 *      may hold bytes (a page wholly past it needs no read)
 *   SZ2 batch_flush, after K4: io.size = max(io.size, end of the runs written)
 *      by CAS, and f->wb_end likewise; then K5; then, if the end passes
 *      lpc's size, a publish with that end (wend)
 *   SZ3 publish: take size_lock (no page lock, no WRITEBACK page held: K5
 *      came first); T = lpc's size; seen = io.size; wb = wb_end; own =
 *      max(seen, wend, wb); no wend, seen == T and wb <= T: done.  wb > T
 *      is a tail a write's own publish owes (it ran SZ2 and K5 but has not
 *      got size_lock yet): lpc_fsync's Y4 (after Y3 saw that K5) and the
 *      last close cut it themselves, so they never return with it there
 *      (tests/regress/regress_size_publish.c, story 6)
 *   SZ4 K = the file's size now (fstat, or the backend's size op); K < T:
 *      ftruncate(T) (extend); T < K <= own: ftruncate(T) (cut lpc's own
 *      page tail); K > own: nothing (another's bytes)
 *   SZ5 io.size: CAS from seen to T (a SZ2 raise since SZ3 wins); unlock
 *   SZ6 every ftruncate of lpc's (lpc_wb_ftruncate) sets wb_end to its size
 *      just before the call (a write landing after it raises it after);
 *      a publish that finds the file at T takes wb_end from wb to T (CAS)
 * Interleavings that matter:
 *   - a write raising past T while a publish holds T (window (b)): the
 *     raise waits for size_lock, so its page is dirtied, and written, only
 *     after the ftruncate (S2).  Without the lock the write's page could be
 *     written between SZ3 and the ftruncate and be cut, clean, for good.
 *   - a page dirtied before its size is raised (window (a)): impossible by
 *     S1; with the old order a pass in between wrote it and cut it at the
 *     old size (tests/regress/regress_size_publish.c, story 1).
 *   - a write completing between a publish's ftruncate and its SZ5 (K4 after
 *     the cut): its SZ2 raises io.size and SZ5's CAS fails (story 3); or, when
 *     io.size was already past the write's end (a truncate that read it
 *     before it cut the file: story 4, found by tests/model/size.pml), its
 *     SZ2 changes nothing and SZ5 succeeds: either way the write's own
 *     publish, with wend, cuts its tail (S4).
 *   - a last close after another process grew the file past lpc's size
 *     (the SQLite VFS in detect mode): io.size stayed lpc's, K > seen, the
 *     publish does nothing (S3; regress_size_kernel.c, story 2).
 * tests/model/size.pml checks S1-S4 with broken variants; in LPC_DEBUG
 * builds rule SIZE-CUT checks S1 at D3 and S2-S3 at a cut, rule SIZE-SEEN
 * checks S4 (a publish that does nothing must not leave lpc's own tail,
 * with no write in flight).
 * Limits: a failed lpc_pwrite has raised the size over the page it failed
 * on (those bytes read as what the file held: zeros past the old end); the
 * cut of S3 trusts that another process does not write inside lpc's last
 * page past lpc's size without telling lpc (the SQLite VFS refreshes lpc's
 * size under SQLite's locks).
 *
 * Errors: each write error is returned once to each lpc_fsync (or last
 * lpc_file_close) whose call it happened during, and an error that happened
 * while none ran to the first one that checks after it (writeback/dirty.c,
 * lpc_wb_err_check).  A failed page stays dirty, so the next fsync
 * writes it again: 0 then means it is on disk.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "writeback/writeback.h"

#define WB_GANG 64
/*
 * A batch: up to WB_PAGES pages and WB_BYTES (4 MiB: 1024 pages of 4 KiB;
 * a run, one vectored write, is at most LPC_IO_MAX_IOV = 1024 pages; with
 * pages over 128 KiB a batch still takes WB_PAGES_MIN) in up to WB_RUNS runs, all
 * submitted at once (io_uring: WB_RUNS = URING_ENTRIES, one submission).
 * The queue is deep because the device's is: random dirty pages are runs of
 * one page, and the kernel keeps that many in flight at its fsync.  The
 * batch lives on the heap (about 32 KiB; a pass makes one), so a throttled
 * writer's stack is not charged for it; without memory a pass uses the
 * small batch on its stack (WB_PAGES_MIN pages, WB_RUNS_MIN runs).
 */
#define WB_PAGES 1024
#define WB_BYTES ((size_t)4 << 20)
#define WB_RUNS 128
#define WB_PAGES_MIN 32
#define WB_RUNS_MIN 8

static void count(struct lpc_tcache *t, enum lpc_counter i, uint64_t n)
{
	if (t)
		lpc_count_add(t, i, n);
}

/* SZ5: io.size goes from `seen` (read at SZ3) to `size`, unless a writeback
 * raised it in between (SZ2's CAS-max): that write may have landed after
 * our ftruncate.  A higher io.size than the file's costs one needless
 * fstat at the next publish; a lower one would let lpc_fsync's publish do
 * nothing over a tail (the writeback's own publish does not trust it: S4). */
static void io_size_settle(struct lpc_file *f, uint64_t seen, uint64_t size)
{
	atomic_compare_exchange_strong_explicit(&f->io.size, &seen, size, memory_order_relaxed,
						memory_order_relaxed);
}

#if LPC_DEBUG
/*
 * Rule SIZE-CUT, the publisher's half: a cut to `size` happens with lpc's
 * size still `size` (no SZ1 raise ran since SZ3: it needs size_lock) and
 * only over lpc's own page tail (the kernel's file ended at `kend`, no
 * further than lpc's own writes, `seen`).
 * Rule SIZE-SEEN: a publish that finds io.size equal to lpc's size does
 * nothing; then, with no write of f in flight, the file must not end inside
 * lpc's last page past the size (a tail io.size lost: SZ5 as a plain store).
 * Context: size_lock held.
 */
static void debug_check_cut(struct lpc_file *f, uint64_t size, uint64_t kend, uint64_t seen)
{
	uint64_t now = atomic_load_explicit(&f->size, memory_order_relaxed);

	lpc_debug_check(now == size && kend <= seen, "SIZE-CUT", NULL,
			"ftruncate(%llu) from %llu: lpc's size is %llu now, its own writes "
			"reach %llu (a raise since the size was read, or another's bytes)",
			(unsigned long long)size, (unsigned long long)kend,
			(unsigned long long)now, (unsigned long long)seen);
}

static void debug_check_seen(struct lpc_file *f, uint64_t size)
{
	size_t ps = f->pool->page_size;
	uint64_t began = atomic_load_explicit(&f->dbg_wb_started, memory_order_acquire);
	uint64_t ended = atomic_load_explicit(&f->dbg_wb_ended, memory_order_acquire);
	/* A write that ended (K5) may still owe its publish (it waits for
	 * the size_lock we hold): counted from before its K5 (SZ2). */
	int64_t owed = atomic_load_explicit(&f->dbg_publish_owed, memory_order_acquire);
	uint64_t kend;

	if (began != ended || owed || lpc_io_size(f->iodev, &f->io, &kend) != 0)
		return;
	if (atomic_load_explicit(&f->dbg_wb_started, memory_order_acquire) != began)
		return; /* a write began during the look: it publishes itself */
	/* Only a tail lpc's own writes made (dbg_wb_end: the highest end
	 * since the last ftruncate): another process may append too. */
	lpc_debug_check(!(kend > size && kend <= ((size + ps - 1) & ~(uint64_t)(ps - 1)) &&
			  kend <= atomic_load_explicit(&f->dbg_wb_end, memory_order_relaxed)),
			"SIZE-SEEN", NULL,
			"io.size says %llu, lpc's size, but the kernel's file ends at %llu "
			"inside lpc's last page, with no write in flight (a writeback's raise "
			"of io.size was lost, or its publish trusted io.size)",
			(unsigned long long)size, (unsigned long long)kend);
}
#else
#define debug_check_cut(f, size, kend, seen) ((void)0)
#define debug_check_seen(f, size) ((void)0)
#endif

/*
 * SZ3-SZ5.  wend: the end of the file that the caller's own write (K4) just
 * reached past lpc's size, or 0 (lpc_fsync's Y4, the last close).  Return:
 * 0 or the negative errno of the fstat or ftruncate.
 */
static int publish_size(struct lpc_file *f, uint64_t wend)
{
	uint64_t size, seen, own, kend, wb;
	int rc = 0;

	lpc_debug_no_page_lock("size_lock taken (lpc_wb_publish_size)");
	pthread_mutex_lock(&f->size_lock);
	if (!atomic_load_explicit(&f->size_kept, memory_order_acquire))
		goto out; /* the kernel's size is lpc's: nothing to publish */
	/* SZ3: exact while size_lock is held (SZ1 and lpc_truncate take it). */
	size = atomic_load_explicit(&f->size, memory_order_acquire);
	lpc_yield_point(LPC_YP_SZ3);
	seen = atomic_load_explicit(&f->io.size, memory_order_relaxed);
	/* lpc's own end of the file: io.size, or the caller's write, which
	 * may have landed after another publish's ftruncate while io.size
	 * was already past its end (its CAS-max at SZ2 then changed nothing,
	 * and that publish's SZ5 took io.size down to the size). */
	own = wend > seen ? wend : seen;
	/* And a write whose own publish is still owed (its SZ2 ran, it has
	 * not taken size_lock yet): wb_end past the size.  Without it an
	 * lpc_fsync after a truncate that set io.size to lpc's size would
	 * find seen == size and return with that write's tail in the file. */
	wb = atomic_load_explicit(&f->wb_end, memory_order_relaxed);
	own = wb > own ? wb : own;
	if (!wend && seen == size && wb <= size) {
		debug_check_seen(f, size);
		goto out;
	}
	rc = lpc_io_size(f->iodev, &f->io, &kend);				/* SZ4 */
	lpc_yield_point(LPC_YP_SZ4);
	if (rc)
		goto out;
	if (kend < size || (kend > size && kend <= own)) {
		/* Extend to lpc's size, or cut the tail lpc's own whole-page
		 * writes left past it; past what lpc wrote (kend > seen) the
		 * bytes are another's, and stay. */
		rc = lpc_wb_ftruncate(f, size, kend < size);
		if (!rc && kend > size)
			debug_check_cut(f, size, kend, own);
		if (!rc)
			lpc_debug_wb_end_set(f, size);
	} else if (kend == size && wb > size) {
		/* The owed tail is gone (cut by the ftruncate it landed
		 * before): a CAS, so a raise since the load stays. */
		atomic_compare_exchange_strong_explicit(&f->wb_end, &wb, size,
							memory_order_relaxed,
							memory_order_relaxed);
	}
	lpc_yield_point(LPC_YP_SZ5);
	if (!rc)
		io_size_settle(f, seen, size);					/* SZ5 */
out:
	pthread_mutex_unlock(&f->size_lock);
	return rc;
}

int lpc_wb_ftruncate(struct lpc_file *f, uint64_t size, bool grows)
{
	uint64_t old;
	int rc;

	/* SZ6: before the call, so a write landing after the ftruncate
	 * raises wb_end after this store (its SZ2 follows its write); one
	 * landing before it and raising after costs a needless fstat. */
	old = atomic_exchange_explicit(&f->wb_end, size, memory_order_seq_cst);
	if (!grows) {
		rc = lpc_io_truncate(f->iodev, &f->io, size);
	} else {
		pthread_rwlock_wrlock(&f->dio_lock);			/* S5 */
		rc = lpc_io_truncate(f->iodev, &f->io, size);
		pthread_rwlock_unlock(&f->dio_lock);
	}
	if (rc) {
		/* Nothing cut: the tail wb_end knew is still owed. */
		uint64_t e = atomic_load_explicit(&f->wb_end, memory_order_relaxed);

		while (e < old && !atomic_compare_exchange_weak_explicit(
					  &f->wb_end, &e, old, memory_order_relaxed,
					  memory_order_relaxed))
			;
	}
	return rc;
}

int lpc_wb_publish_size(struct lpc_file *f)
{
	return publish_size(f, 0);
}

/* Runs of contiguous pages in WRITEBACK, each page with a reference: run r
 * is pages[start[r] .. start[r] + len[r]), at file index first[r]. */
struct wb_batch {
	unsigned n, nruns, max_pages, max_runs;
	struct lpc_page **pages;  /* [max_pages] */
	struct iovec *iov;        /* [max_pages]: batch_flush's */
	uint64_t *first;          /* [max_runs] */
	unsigned *start, *len;    /* [max_runs] */
	struct lpc_io_wrun *w;    /* [max_runs]: batch_flush's */
};

/* The arrays of a batch, big (heap) and small (stack). */
#define WB_STORE(P, R)                          \
	struct {                                \
		struct lpc_page *pages[P];      \
		struct iovec iov[P];            \
		uint64_t first[R];              \
		unsigned start[R], len[R];      \
		struct lpc_io_wrun w[R];        \
	}
typedef WB_STORE(WB_PAGES, WB_RUNS) wb_store_big;
typedef WB_STORE(WB_PAGES_MIN, WB_RUNS_MIN) wb_store_small;

#define BATCH_INIT(b, st, P, R)                                                          \
	((b)->n = (b)->nruns = 0, (b)->max_pages = (P), (b)->max_runs = (R),             \
	 (b)->pages = (st)->pages, (b)->iov = (st)->iov, (b)->first = (st)->first,      \
	 (b)->start = (st)->start, (b)->len = (st)->len, (b)->w = (st)->w)

/* Points b at a heap store (*big, to free) or at *small.  Big pages make
 * fewer of them per batch: WB_BYTES at most, but WB_PAGES_MIN at least. */
static void batch_init(struct wb_batch *b, wb_store_big **big, wb_store_small *small, size_t ps)
{
	size_t cap = WB_BYTES / ps;

	cap = cap > WB_PAGES ? WB_PAGES : cap < WB_PAGES_MIN ? WB_PAGES_MIN : cap;
	*big = malloc(sizeof(**big));
	if (*big)
		BATCH_INIT(b, *big, (unsigned)cap, WB_RUNS);
	else
		BATCH_INIT(b, small, WB_PAGES_MIN, WB_RUNS_MIN);
}

/* Adds page p at index to b, extending the last run if it is contiguous.
 * Context: b has room (batch_full is false). */
static void batch_add(struct wb_batch *b, struct lpc_page *p, uint64_t index)
{
	unsigned r = b->nruns;

	if (!r || b->first[r - 1] + b->len[r - 1] != index || b->len[r - 1] == LPC_IO_MAX_IOV) {
		b->first[r] = index;
		b->start[r] = b->n;
		b->len[r] = 0;
		b->nruns = ++r;
	}
	b->len[r - 1]++;
	b->pages[b->n++] = p;
}

/* True if page `index` would not fit in b. */
static bool batch_full(const struct wb_batch *b, uint64_t index)
{
	unsigned r = b->nruns;

	bool joins = r && b->first[r - 1] + b->len[r - 1] == index;

	return b->n == b->max_pages || (r == b->max_runs && !joins) ||
	       (joins && b->len[r - 1] == LPC_IO_MAX_IOV);
}

/* K4-K5: writes the batch's runs and ends each page's writeback.  Return: 0
 * or the first run's error. */
static int batch_flush(struct lpc_file *f, struct wb_batch *b, struct lpc_tcache *t)
{
	struct iovec *iov = b->iov;
	struct lpc_io_wrun *w = b->w;
	size_t ps = f->pool->page_size;
	unsigned calls = 0;
	uint64_t end = 0;
	int err = 0;

	if (!b->n)
		return 0;
	lpc_debug_no_page_lock("a writeback batch flushed");
	for (unsigned i = 0; i < b->n; i++) {
		iov[i].iov_base = lpc_page_frame(b->pages[i]);
		iov[i].iov_len = ps;
	}
	for (unsigned r = 0; r < b->nruns; r++)
		w[r] = (struct lpc_io_wrun){ .iov = iov + b->start[r], .iovcnt = (int)b->len[r],
					     .off = b->first[r] << f->page_shift };
	lpc_yield_point(LPC_YP_K4);
	/* S5: no ftruncate of lpc's that may grow the file while this write
	 * is in the kernel.  No other lock is held here, none is taken
	 * under it. */
	pthread_rwlock_rdlock(&f->dio_lock);
	lpc_yield_point(LPC_YP_K4W);
	/* A writer may change a frame while the kernel copies it (core/rcu.h). */
	lpc_tsan_ignore_begin();
	lpc_io_write_batch(f->iodev, &f->io, w, (int)b->nruns, &calls);	/* K4 */
	lpc_tsan_ignore_end();
	pthread_rwlock_unlock(&f->dio_lock);
	count(t, LPC_C_WB_PAGES, b->n);
	count(t, LPC_C_WB_WRITES, calls);
	for (unsigned r = 0; r < b->nruns; r++) {
		if (w[r].err) {
			count(t, LPC_C_WRITE_ERRORS, 1);
			err = err ? err : w[r].err;
		} else if (((b->first[r] + b->len[r]) << f->page_shift) > end) {
			end = (b->first[r] + b->len[r]) << f->page_shift;
		}
	}
	if (end) {
		/* SZ2: the kernel's file now reaches at least `end`; io.size,
		 * lpc's end of it, rises to it (CAS-max: the publisher's SZ5 is
		 * a CAS too, so neither loses the other's value). */
		uint64_t ks;

		lpc_debug_publish_owed(f, 1); /* before K5: rule SIZE-SEEN */
		lpc_yield_point(LPC_YP_SZ2);
		ks = atomic_load_explicit(&f->io.size, memory_order_relaxed);
		while (ks < end && !atomic_compare_exchange_weak_explicit(
					   &f->io.size, &ks, end, memory_order_relaxed,
					   memory_order_relaxed))
			;
		lpc_debug_wb_end_raise(f, end);
		ks = atomic_load_explicit(&f->wb_end, memory_order_relaxed);
		while (ks < end && !atomic_compare_exchange_weak_explicit(
					   &f->wb_end, &ks, end, memory_order_relaxed,
					   memory_order_relaxed))
			;
	}
	for (unsigned r = 0; r < b->nruns; r++) {
		for (unsigned i = 0; i < b->len[r]; i++) {
			struct lpc_page *p = b->pages[b->start[r] + i];

			lpc_wb_end_writeback(f, p, b->first[r] + i, w[r].err);	/* K5 */
			lpc_page_release(p);
		}
	}
	b->n = 0;
	b->nruns = 0;
	/* A whole last page wrote past lpc's size: cut the kernel's file back
	 * (after K5: a truncate waiting for these pages holds size_lock). */
	if (end > atomic_load_explicit(&f->size, memory_order_acquire)) {
		int rc = publish_size(f, end);					/* SZ2 */

		if (rc) {
			lpc_wb_err_record(f, rc);
			err = err ? err : rc;
		}
	}
	if (end)
		lpc_debug_publish_owed(f, -1);
	return err;
}

int lpc_wb_file(struct lpc_file *f, enum lpc_wb_mode mode, uint64_t budget,
		       struct lpc_tcache *t)
{
	return lpc_wb_pass(f, mode, budget, t, NULL);
}

int lpc_wb_pass(struct lpc_file *f, enum lpc_wb_mode mode, uint64_t budget,
		struct lpc_tcache *t, uint64_t *written)
{
	unsigned tag = mode == LPC_WB_SYNC ? LPC_TAG_TOWRITE : LPC_TAG_DIRTY;
	struct lpc_page *pages[WB_GANG];
	uint64_t idx[WB_GANG];
	struct wb_batch run;
	wb_store_big *big;
	wb_store_small small;
	uint64_t next = 0, done = 0;
	unsigned n;
	int err = 0, rc;

	batch_init(&run, &big, &small, f->pool->page_size);

	while ((n = lpc_wb_gang_tag_get(f, next, tag, pages, idx, WB_GANG)) > 0) {
		unsigned i;

		next = idx[n - 1] + 1;
		for (i = 0; i < n; i++) {
			struct lpc_page *p = pages[i];
			uint32_t fl;

			if (budget && done >= budget)
				break;
			if (batch_full(&run, idx[i])) {
				rc = batch_flush(f, &run, t);
				err = err ? err : rc;
			}
			lpc_yield_point(LPC_YP_K1);
			if (!lpc_page_trylock(p)) {				/* K1 */
				if (mode == LPC_WB_ASYNC) {
					lpc_page_release(p);
					continue;
				}
				/* Never wait holding pages not yet submitted. */
				rc = batch_flush(f, &run, t);
				err = err ? err : rc;
				lpc_page_lock_noseq(p);
			}
			for (;;) {
				if (!lpc_wb_holds(f, p, idx[i])) {
					fl = 0;
					break;
				}
				fl = lpc_page_flags(p);
				lpc_yield_point(LPC_YP_K2);
				if (!(fl & LPC_PG_WRITEBACK) || mode == LPC_WB_ASYNC)
					break;
				/* K2, WB_SYNC: wait for the write in flight.  p is
				 * unlocked before the flush: batch_flush may take
				 * size_lock (lpc_wb_publish_size), which a truncate
				 * holds while it waits for page locks (truncate.c) —
				 * flushing with p locked deadlocked against
				 * lpc_truncate (stress_write, io_uring, ASan). */
				lpc_page_unlock_noseq(p);
				rc = batch_flush(f, &run, t);
				err = err ? err : rc;
				lpc_page_wait_writeback(p);
				lpc_page_lock_noseq(p);
			}
			if ((fl & (LPC_PG_DIRTY | LPC_PG_WRITEBACK)) != LPC_PG_DIRTY) {
				if (mode == LPC_WB_SYNC && fl && !(fl & LPC_PG_DIRTY))
					lpc_wb_clear_towrite(f, idx[i]);
				lpc_page_unlock_noseq(p);
				lpc_page_release(p);
				continue;
			}
			lpc_yield_point(LPC_YP_K3);
			if (!lpc_wb_start_writeback(f, p, idx[i])) {	/* K3 */
				lpc_page_unlock_noseq(p);
				lpc_page_release(p);
				continue;
			}
			lpc_page_unlock_noseq(p);
			batch_add(&run, p, idx[i]); /* keeps the reference */
			done++;
		}
		/* References of pages the budget left unvisited. */
		for (; i < n; i++)
			lpc_page_release(pages[i]);
		if (budget && done >= budget)
			break;
	}
	/* The batch spans gangs: nothing between them waits (the gang lookup
	 * takes only the index lock). */
	rc = batch_flush(f, &run, t);
	err = err ? err : rc;
	free(big);
	if (written)
		*written = done;
	return err;
}

/* Y2's first half: every DIRTY page is tagged TOWRITE. */
static void tag_towrite(struct lpc_file *f)
{
	void *pages[WB_GANG];
	uint64_t idx[WB_GANG];
	uint64_t next = 0;
	unsigned n;

	do {
		lpc_file_index_lock(f);
		n = lpc_radix_gang_tag(&f->tree, next, LPC_TAG_DIRTY, pages, idx, WB_GANG);
		for (unsigned i = 0; i < n; i++)
			lpc_radix_tag_set(&f->tree, idx[i], LPC_TAG_TOWRITE);
		lpc_file_index_unlock(f);
		if (n)
			next = idx[n - 1] + 1;
	} while (n == WB_GANG);
}

/* Y3: waits for every write in flight on f. */
static void wait_writeback_all(struct lpc_file *f)
{
	struct lpc_page *pages[WB_GANG];
	uint64_t idx[WB_GANG];
	uint64_t next = 0;
	unsigned n;

	while ((n = lpc_wb_gang_tag_get(f, next, LPC_TAG_WRITEBACK, pages, idx, WB_GANG)) > 0) {
		next = idx[n - 1] + 1;
		for (unsigned i = 0; i < n; i++) {
			lpc_page_wait_writeback(pages[i]);
			lpc_page_release(pages[i]);
		}
	}
}

/* Y1-Y3 (and Y4 when sync): the body of lpc_fsync and of the last close. */
static int wb_sync_file(struct lpc_file *f, bool sync, struct lpc_tcache *t)
{
	uint64_t since;
	int rc;
#if LPC_DEBUG
	uint64_t dbg_begun, dbg_ended;
#endif

	lpc_debug_no_page_lock("lpc_fsync or the last close");
	lpc_yield_point(LPC_YP_Y1);
#if LPC_DEBUG
	dbg_begun = atomic_load_explicit(&f->dbg_wb_started, memory_order_acquire);
#endif
	since = lpc_wb_err_sample(f);					/* Y1 */
	lpc_yield_point(LPC_YP_Y2);
	tag_towrite(f);							/* Y2 */
	lpc_wb_file(f, LPC_WB_SYNC, 0, t);
	lpc_yield_point(LPC_YP_Y3);
	wait_writeback_all(f);						/* Y3 */
#if LPC_DEBUG
	/* Every write begun (K3) before Y1 has ended (K5) by now: a sound
	 * bound (the counts, not the pages: others may have ended too). */
	dbg_ended = atomic_load_explicit(&f->dbg_wb_ended, memory_order_acquire);
	lpc_debug_check(dbg_ended >= dbg_begun, "FSYNC-INFLIGHT", NULL,
			"fsync past Y3 with writes begun before it still in flight (%llu begun before Y1, %llu ended)",
			(unsigned long long)dbg_begun, (unsigned long long)dbg_ended);
#endif
	lpc_yield_point(LPC_YP_Y4);
	rc = lpc_wb_publish_size(f);					/* Y4 */
	if (rc)
		lpc_wb_err_record(f, rc);
	if (sync) {
		rc = lpc_io_sync(f->iodev, &f->io);
		if (rc)
			lpc_wb_err_record(f, rc);
	}
	return lpc_wb_err_check(f, since);
}

int lpc_wb_flush_file(struct lpc_file *f)
{
	struct lpc_tcache *t = lpc_file_tcache(f);

	return wb_sync_file(f, false, t);
}

LPC_EXPORT int lpc_fsync(struct lpc_file *f)
{
	struct lpc_tcache *t;

	if (unlikely(!f))
		return -EINVAL;
	lpc_debug_file_check(f);
	t = lpc_file_tcache(f);
	if (unlikely(!t))
		return -ENOMEM;
	lpc_count(t, LPC_C_FSYNCS);
	return wb_sync_file(f, true, t);
}
