/* SPDX-License-Identifier: MIT */
/*
 * run.c - a miss that reads a run of absent pages with one I/O.
 *
 * A call that will read pages [index, index + nr) (lpc_pread's range,
 * lpc_pin's slow path) and misses on `index` reads the absent pages that
 * follow it in the same request.  Each page of the run is an ordinary miss
 * (miss.c M1-M6): its own frame, inserted LOCKED and not UPTODATE in its own
 * slot, its own waiters; only the read (M4) is shared.  Steps:
 *   U1 the run: at most nr pages, the cache's run_max (one request's size
 *      cap) and LPC_IO_MAX_IOV, and never past lpc's end of file; probe the
 *      index for pages 1.. (no reference taken, nothing relied on: a page
 *      present now ends the run, one inserted later is met at U3).  A
 *      readahead run (nr 0) bridges instead: a page present within its
 *      first files->run_bridge pages does not end it when an absent page
 *      follows within that reach.  Those pages are holes: not the run's
 *      (pages[k] NULL), nothing of them touched (no reference, no lock, no
 *      flag: they may be evicted, written, truncated meanwhile), their
 *      bytes read into a discard buffer (the reading thread's own,
 *      lpc_thread_scratch; the cache's files->discard if it has none),
 *      which is no page's frame and whose bytes nobody reads, so a hole's
 *      page never sees the request's bytes (no stale data over new data);
 *      a run begins and ends with a page of its own.  Holes add no step to
 *      the protocol: a run's pages are what they were, fewer requests read
 *      them.  So a window that a cached hot set splits into runs of a few
 *      pages is a few requests, not hundreds (cache.c LPC_RUN_BRIDGE_KB).
 *      io_uring reads a run with holes with READV (the discard buffer is
 *      not registered); a file over a user backend never bridges
 *      (run_start says why)
 *   U2 M1 for every page of the run before any insert, so that no frame is
 *      allocated (direct reclaim, a grace period) while this thread holds a
 *      locked page in the index or the LOCKED-mode rwlock; page 0 with the
 *      caller's flags, the others with LPC_ALLOC_NOWAIT: a frame that cannot
 *      be had at once ends the run there (page 0 is read anyway)
 *   U3 M2 and M3 page by page in index order (LOCKED mode: under one read
 *      hold of the rwlock, from here to U5).  -EEXIST on page 0: nothing
 *      done, the caller looks up again; on page k > 0: the run ends before
 *      k (a page cached splits a run), pages k.. are freed privately (never
 *      visible).  The inserted pages are LOCKED and referenced by this
 *      thread (ref 2: the index's and the run's) until U5; a window with
 *      `held` (a stream's, W2) adds one more reference per page here,
 *      before any reader has the run: a holder's like any M6 waiter's
 *   U4 M4 once: lpc_io_readv of the run's frames, iov[k] = page index + k;
 *      or the run is one of a batch of runs of the same file (a readahead
 *      thread's, ra_worker.c Q2, or stream.c GB3's), read together with
 *      one lpc_io_readv_batch (runs_finish): each run still one request,
 *      its result its own, trunc_seq loaded once before them all
 *   U5 M5 for each page: (a) its share of the bytes: all of them, or a
 *      count short where the storage's file ends (lpc_filemap_short_at_eof:
 *      its size now, C.3), which zero-fills the page it ends in and leaves
 *      the pages after it holes; a count short where the file goes on (a
 *      later part of the request failed, or the file grew since) or a
 *      failed request gives nothing to the pages from the first one it did
 *      not fill: the caller's own pages among them ([0, nr)) are read again
 *      one by one (lpc_filemap_read_one), until one of them fails alone
 *      (ERROR: its waiters get -EIO; the caller learns it for page 0, or
 *      its read ends before that page, C.2), and every other page is
 *      dropped (removed with no ERROR: a waiter looks up again and reads
 *      its page itself); (b) a shrinking truncate that raced the reads
 *      (lpc_filemap_trunc_from): pages wholly past its cut dropped, the
 *      cut's page zero-filled past it, pages below untouched; (c) lpc's
 *      size loaded after the reads: pages wholly past it removed (-ENXIO,
 *      no ERROR), the last one zero-filled past it.  Successes are
 *      published first (UPTODATE, unlock), then the LOCKED rwlock is left,
 *      then the others are deleted (the delete takes the write lock there,
 *      as miss.c's M5).  (d) The run's reference on each page goes right
 *      after the page's unlock (page 0's to the caller when it asked for
 *      it and it is good), not after the whole run: the unlock wakes the
 *      page's waiter, which may take this thread's CPU (a readahead
 *      thread beside two scanners on two CPUs), and a run that kept its
 *      references until it ran again kept every page it had unlocked held
 *      meanwhile, so the stream's drop behind its reader (readahead.c A5:
 *      only a page nobody holds goes) left them all to the evictor, and
 *      the stream counted as not feeding itself (A4's refill; seen as
 *      test_drop_behind t_self_fed's flaky refills, 64 pages held by a
 *      descheduled thread; tests/regress/regress_run_release.c, yield
 *      point M5R).  A page unlocked and still held is safe either way (the
 *      index holds it too): this is about what a drop or an invalidate
 *      finds, not about the page's life
 *   U6 a synchronous window whose run ended early: the rest of the window
 *      read ahead (lpc_filemap_read_run, W1-W2)
 * Readahead (readahead.c) adds `ra` pages after the nr the caller asked for,
 * or reads a window alone (nr 0: from its first absent page, nothing
 * returned; lpc_filemap_ra_window, W1-W2, skips cached pages and reads
 * the rest of the window in runs): those pages are allocated from free frames only, above the
 * pool's readahead reserve (U2: LPC_ALLOC_NORECLAIM, page/pool.h), enter
 * UPTODATE with RA (inactive, unreferenced: CLOCK2 evicts them first unless
 * used), one of them with RA_MARK (from its insert, U3); one that a failed request did not fill is
 * dropped (U5a), never an error: nobody asked for it.
 * What meets a run in flight (U3-U5), page by page, as any page in flight:
 *  - lookups: lpc_page_find says -EAGAIN; get, pread and pin wait on the
 *    page's lock (M6) and see how its read ended; the optimistic and pin
 *    fast paths refuse it (not UPTODATE); invalidate and eviction skip it
 *    (locked);
 *  - lpc_pwrite (writeback/write.c): a write of a whole page, or of part of
 *    one, finds the page in the slot (never inserts a private frame over
 *    it: the insert is -EEXIST) and waits for its lock, then writes into it
 *    under the lock: the write's bytes come after the read's, never under
 *    them (no stale data over new data);
 *  - lpc_truncate (writeback/truncate.c): it sets the smaller size before
 *    it removes pages and waits for each page's lock; U5 loads the size
 *    after the read (seq_cst, as M5), so a page wholly past the new end is
 *    removed (-ENXIO) and a last page is zero-filled past it: nothing past
 *    the end is cached or resurrected; a read it raced drops what it read
 *    from the cut on (U5b), even once the file has grown again, and keeps
 *    what lies below the cut: a run far below a cut is not read twice;
 *  - frames: every page of the run holds this thread's reference and its
 *    lock from U3 until U5, and the read is reaped before U5 (every backend
 *    completes its requests before returning: io/uring.c), so no frame of
 *    a run is freed or reused while the device writes into it; a run handed
 *    to the readahead threads (W2) keeps its references and locks in its
 *    job until a thread's U5, and the last close and lpc_cache_destroy wait
 *    for every job of the file or cache first (ra_worker.c Q3, Q4), so they
 *    never meet a read in flight either (rule RUN-FRAME-IN-FLIGHT
 *    checks at U5 that each frame still is the page of (f, index + k);
 *    rule FRAME-FREED-IN-FLIGHT, that no frame is freed while a read into
 *    it, the request or a page's own, is in flight).
 * Errors stay with their pages: a page is failed (ERROR) only by a read of
 * that page alone, so one bad page fails no other page of its request, and
 * no waiter of another page learns its error; the caller learns page 0's
 * result only, and its own next page is a new miss.  Pages 1.. keep only
 * the index's reference (and a stream's, W2's `held`) and enter FRESH
 * (those the caller asked for) or RA: the caller's next lookup of each is
 * their first use, which clears the flag and does not mark them referenced
 * (page.h, lpc_page_mark_referenced).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "filemap/filemap.h"

/* U1's probe (filemap.h). */
bool lpc_filemap_present(struct lpc_file *f, uint64_t index)
{
	void *p;

	if (f->locked_lookup) {
		pthread_rwlock_rdlock(&f->tree_rwlock);
		p = lpc_radix_lookup(&f->tree, index, NULL);
		pthread_rwlock_unlock(&f->tree_rwlock);
	} else {
		lpc_rcu_read_lock();
		p = lpc_radix_lookup(&f->tree, index, NULL);
		lpc_rcu_read_unlock();
	}
	return p != NULL;
}

/* qsort's order of U2's frames: by frame, ascending (lpc_page_frame is
 * monotonic in the descriptor's id). */
static int run_frame_cmp(const void *a, const void *b)
{
	uint32_t x = (*(struct lpc_page *const *)a)->id, y = (*(struct lpc_page *const *)b)->id;

	return (x > y) - (x < y);
}

/*
 * U2's frames in ascending address order, before U3 gives them their
 * indices: page index + k gets the k-th lowest frame, so a run's iovecs
 * are ascending and, where frames are adjacent (the arena is advised
 * MADV_HUGEPAGE, pool.c), the block layer merges them into one segment.
 * Why: the free lists hand frames out last-freed first, and eviction frees
 * them in the clock hand's ascending order, so a run got its frames in
 * descending order, every 4 KiB iovec its own segment; a device with
 * max_segments 254 (virtio-blk) split each 4 MiB run into five requests of
 * at most 1016 KiB, each of 254 segments (lpcbench scan: mean request
 * 993 KiB against the kernel's 3913 KiB, traced with block:block_rq_issue),
 * and the scanner waited on them.  The frames are private here (allocated,
 * not yet inserted), so their order is free to choose.  Allocation order
 * is descending or ascending almost always: one pass to tell, a reversal,
 * and a sort only for a mixed order.
 */
static void run_order_frames(struct lpc_page **pages, uint64_t n)
{
	uint64_t k;

	for (k = 1; k < n && pages[k]->id < pages[k - 1]->id; k++)
		;
	if (k == n) {
		for (uint64_t i = 0, j = n - 1; i < j; i++, j--) {
			struct lpc_page *x = pages[i];

			pages[i] = pages[j];
			pages[j] = x;
		}
		return;
	}
	for (k = 1; k < n && pages[k]->id > pages[k - 1]->id; k++)
		;
	if (k < n)
		qsort(pages, n, sizeof(*pages), run_frame_cmp);
}

/* filemap.h: U2's order, for write.c WB2 too. */
void lpc_filemap_order_frames(struct lpc_page **pages, uint64_t n)
{
	run_order_frames(pages, n);
}

/* U1's holes of a bridged run: bit k set, page index + k was cached at
 * the probe (pages[k] NULL from U2 on). */
#define RUN_HOLE_WORDS (LPC_IO_MAX_IOV / 64)
static bool run_hole(const uint64_t *holes, uint64_t k)
{
	return holes[k / 64] >> (k % 64) & 1;
}

/* U2's order (run_order_frames) for a run with holes: the frames are
 * gathered to the front, ordered, and put back into the slots that are
 * not holes, from the back (in place: the j-th frame goes to a slot at j
 * or after it, never over a frame not yet moved). */
static void run_order_frames_holes(struct lpc_page **pages, uint64_t n, const uint64_t *holes)
{
	uint64_t m = 0, j;

	for (uint64_t k = 0; k < n; k++)
		if (pages[k])
			pages[m++] = pages[k];
	run_order_frames(pages, m);
	j = m;
	for (uint64_t k = n; k-- > 0;)
		pages[k] = run_hole(holes, k) ? NULL : pages[--j];
}

/* The pages of a run of n slots, holes (NULL) not counted. */
static uint64_t run_pages(struct lpc_page *const *pages, uint64_t n)
{
	uint64_t m = 0;

	for (uint64_t k = 0; k < n; k++)
		m += pages[k] != NULL;
	return m;
}

/* run_start's mark for a window's first run: its first page inserted. */
#define RUN_MARK_FIRST (UINT64_MAX - 1)

/* U1-U3: *np pages inserted LOCKED at *indexp.. (0: nothing to read, for
 * nr 0); the page at `mark` (RUN_MARK_FIRST: page *indexp; UINT64_MAX:
 * none), if the run holds it, inserted with RA_MARK (U3).  Return: 0;
 * -EEXIST (page *indexp was there, nr > 0); the allocation's -ENOMEM for
 * page 0 (nr > 0). */
static int run_start(struct lpc_file *f, uint64_t *indexp, uint64_t nr, uint64_t ra,
		     uint64_t mark, struct lpc_tcache *t, unsigned alloc_flags,
		     struct lpc_page **pages, uint64_t *np)
{
	struct lpc_pool *c = f->pool;
	size_t ps = c->page_size;
	uint64_t index = *indexp;
	uint64_t size, end, n, k, last, nholes = 0;
	uint64_t holes[RUN_HOLE_WORDS];
	int rc = 0;
	uint64_t t0;

	*np = 0;

	/* U1.  Readahead alone (nr 0): from the first absent page of the
	 * window; none absent, nothing to do. */
	if (nr == 0) {
		while (ra > 0 && lpc_filemap_present(f, index)) {
			index++;
			ra--;
		}
		*indexp = index; /* where it stops, with *np 0 (W1) */
		if (ra == 0)
			return 0;
	}
	n = nr + ra;
	if (n > f->files->run_max)
		n = f->files->run_max;
	if (n > LPC_IO_MAX_IOV)
		n = LPC_IO_MAX_IOV;
	size = atomic_load_explicit(&f->size, memory_order_acquire);
	end = (size + ps - 1) >> f->page_shift;
	if (end <= index) {
		if (nr == 0)
			return 0; /* a window past the end */
		n = 1; /* the caller found it inside the file a moment ago */
	} else if (n > end - index) {
		n = end - index;
	}
	if (n == 0)
		n = 1;
	/* U1's probe.  A readahead run (nr 0) bridges: a page cached within
	 * its first run_bridge pages is a hole, not a page of the run (nothing
	 * of it is touched: no reference, no lock; the request reads its bytes
	 * into a discard buffer: run_iov), so one request reads what a cached
	 * hot set split into runs of a few pages (cache.c LPC_RUN_BRIDGE_KB).
	 * A run never ends in a hole.  Not over a user backend: its reads
	 * write with the CPU, maybe from several threads at once for one
	 * batch (read_batch), and two requests' writes into the reading
	 * thread's one discard buffer would race. */
	memset(holes, 0, ((n + 63) / 64) * sizeof(holes[0]));
	last = 0;
	for (k = 1; k < n; k++) {
		if (!lpc_filemap_present(f, index + k)) {
			last = k;
			continue;
		}
		if (nr || k >= f->files->run_bridge || f->io.user)
			break;
		holes[k / 64] |= (uint64_t)1 << (k % 64);
		nholes++;
	}
	n = last + 1;

	/* U2: demand pages wait as the caller's flags say (page 0) or not at
	 * all; read-ahead pages take only free frames above the pool's
	 * reserve (NORECLAIM: readahead never reclaims, waits, or makes a
	 * demand read fail or wait: it reads less; lpc_pool_ra_reserve). */
	lpc_yield_point(LPC_YP_M1);
	t0 = lpc_clock_ns();
	for (k = 0; k < n; k++) {
		unsigned fl = k == 0 ? alloc_flags : alloc_flags | LPC_ALLOC_NOWAIT;

		if (run_hole(holes, k)) {
			pages[k] = NULL;
			continue;
		}
		if (k >= nr)
			fl |= LPC_ALLOC_NOWAIT | LPC_ALLOC_NORECLAIM;
		rc = lpc_page_alloc_frame(c, fl | LPC_ALLOC_MISS, &pages[k]);
		if (rc)
			break;
	}
	lpc_count_add(t, LPC_C_MISS_NS_ALLOC, lpc_clock_ns() - t0);
	if (k == 0)
		return nr ? rc : 0;
	for (n = k; !pages[n - 1]; n--)
		; /* no run ends in a hole (page 0 is none) */
	rc = 0;
	if (nholes)
		run_order_frames_holes(pages, n, holes);
	else
		run_order_frames(pages, n);

	/* U3.  The marker is set before the insert, never after it: a reader
	 * that finds the page in flight sees RA_MARK already and starts the
	 * next window before it waits for this one (readahead.c A1), so two
	 * windows of a stream are at the device at once (the kernel's
	 * PG_readahead, set as the page enters the cache). */
	if (mark == RUN_MARK_FIRST)
		mark = index;
	for (k = 0; k < n; k++) {
		if (!pages[k])
			continue;
		lpc_filemap_prep_miss(f, pages[k], index + k);
		if (index + k == mark)
			atomic_fetch_or_explicit(&pages[k]->flags, LPC_PG_RA_MARK,
						 memory_order_relaxed);
	}
	lpc_yield_point(LPC_YP_M3);
	if (f->locked_lookup)
		pthread_rwlock_rdlock(&f->tree_rwlock); /* held to U5 */
	t0 = lpc_clock_ns();
	for (k = 0; k < n; k++)
		if (pages[k] && lpc_filemap_insert(f, index + k, pages[k]))
			break;
	lpc_count_add(t, LPC_C_MISS_NS_INSERT, lpc_clock_ns() - t0);
	for (uint64_t j = k; j < n; j++)
		if (pages[j])
			lpc_filemap_unprep_miss(pages[j]);
	while (k > 0 && !pages[k - 1])
		k--; /* the run ends before a hole (and the page that failed) */
	n = k;
	if (n == 0) {
		if (f->locked_lookup)
			pthread_rwlock_unlock(&f->tree_rwlock);
		return nr ? -EEXIST : 0;
	}
#if LPC_DEBUG
	lpc_debug_page_locks += (int)run_pages(pages, n); /* M2's locks, each ending at U5 */
#endif
	*np = n;
	return 0;
}

/* U5's verdict on a page that is neither cached nor failed by its own
 * read: removed with no ERROR, so its waiters look up again (M6) and read
 * it themselves. */
#define RUN_DROPPED (-EEXIST)

/* U4's frames of a run: iov[k] = page k's frame, each page's read begun
 * (rule FRAME-FREED-IN-FLIGHT). */
/* U5's flags for page k of a run at `index` whose first nr pages were asked
 * for: a page read ahead (k >= nr) enters RA, a later page of the caller's
 * range (0 < k < nr) FRESH: neither is used yet, and the caller's first use
 * must not count as a second (page.h, lpc_page_mark_referenced); with a
 * marker, the pages asked for are ONCE besides (below); a page that
 * refaults is REFAULTED, never ONCE.  Every
 * page is looked up among the shadows, as miss.c's M5 (a refault moves
 * CLOCK2's active target: page/workingset.h): a file read again through
 * readahead refaults as one read by demand does. */
static uint32_t run_unlock_flags(struct lpc_file *f, uint64_t index, uint64_t k, uint64_t nr,
				 uint64_t mark)
{
	int refault = lpc_pool_ws_refault(f->pool, lpc_pool_ws_key(f->ws_id, index + k));
	bool stream = k >= nr || mark != UINT64_MAX;
	uint32_t fl;

	/* A stream read again a page a stream dropped a moment ago: a loop,
	 * whose streams stop dropping (readahead.c A5, ra_behind), and whose
	 * pages were used before.  A demand read of such a page is no reuse
	 * (the stream used it, not this reader): as miss.c M5. */
	if (refault == LPC_WS_REFAULT_DROPPED) {
		if (stream)
			atomic_fetch_add_explicit(&f->ra_drop_refaults, 1, memory_order_relaxed);
		else
			refault = LPC_WS_NO_REFAULT;
	}
	fl = refault ? LPC_PG_REFAULTED : 0;
	if (k >= nr)
		return fl | LPC_PG_RA;
	fl |= k ? LPC_PG_FRESH : 0;
	/* A miss that continues or starts a stream (readahead.c S1-S2: it
	 * reads ahead, so it has a marker): its own pages are the stream's
	 * too, used once by this call, what a drop behind the stream may
	 * take (A5), as the pages read ahead are once used; not a page that
	 * refaulted (page.h REFAULTED). */
	if (mark != UINT64_MAX && !refault)
		fl |= LPC_PG_ONCE;
	return fl;
}

static void run_iov(struct lpc_file *f, struct lpc_page **pages, uint64_t n, struct iovec *iov)
{
	void *discard = NULL;

	for (uint64_t k = 0; k < n; k++) {
		iov[k].iov_len = f->pool->page_size;
		if (!pages[k]) {
			/* A hole (U1): this thread's discard buffer, written by
			 * its own reads only (two threads' reads into one
			 * buffer would be a data race, if a harmless one);
			 * the cache's when this thread has none. */
			if (!discard)
				discard = lpc_thread_scratch(f->pool->page_size);
			if (!discard)
				discard = f->files->discard;
			iov[k].iov_base = discard;
			continue;
		}
		iov[k].iov_base = lpc_page_frame(pages[k]);
		lpc_page_debug_read_begin(pages[k]);
	}
}

static int run_done(struct lpc_file *f, uint64_t index, uint64_t nr, uint64_t mark,
		    struct lpc_tcache *t, struct lpc_page **pages, uint64_t n,
		    struct lpc_page **out, uint64_t s0, ssize_t r, int fellback);

/* U4-U5 for the n pages of run_start.  Return: as lpc_filemap_read_run. */
static int run_finish(struct lpc_file *f, uint64_t index, uint64_t nr, uint64_t mark,
		      struct lpc_tcache *t, struct lpc_page **pages, uint64_t n,
		      struct lpc_page **out)
{
	struct iovec iov[LPC_IO_MAX_IOV];
	int fellback = 0;
	uint64_t t0;
	ssize_t r;

	/* U4.  The pages are in the index (U3): a shrinking truncate from
	 * here on finds them and waits for their locks, or is seen at U5. */
	uint64_t s0 = atomic_load_explicit(&f->trunc_seq, memory_order_seq_cst);

	run_iov(f, pages, n, iov);
	lpc_yield_point(LPC_YP_M4);
	t0 = lpc_clock_ns();
	r = lpc_io_readv(f->iodev, &f->io, iov, (int)n, index << f->page_shift, index,
			 &fellback);
	lpc_count_add(t, LPC_C_MISS_NS_READ, lpc_clock_ns() - t0);
	return run_done(f, index, nr, mark, t, pages, n, out, s0, r, fellback);
}

/* U4's end and U5 for a run whose request returned r (s0: trunc_seq loaded
 * before the request). */
static int run_done(struct lpc_file *f, uint64_t index, uint64_t nr, uint64_t mark,
		    struct lpc_tcache *t, struct lpc_page **pages, uint64_t n,
		    struct lpc_page **out, uint64_t s0, ssize_t r, int fellback)
{
	size_t ps = f->pool->page_size;
	ssize_t res[LPC_IO_MAX_IOV];
	uint64_t k, whole, from, size, npg;
	bool failed = false;

	for (k = 0; k < n; k++)
		if (pages[k])
			lpc_page_debug_read_end(pages[k]);
	lpc_yield_point(LPC_YP_M4D);
#if LPC_DEBUG
	for (k = 0; k < n; k++)
		lpc_debug_check(!pages[k] || /* a hole: no page */
					(atomic_load_explicit(&pages[k]->ref, memory_order_relaxed) >= 1 &&
					 atomic_load_explicit(&pages[k]->file, memory_order_relaxed) == f &&
					 atomic_load_explicit(&pages[k]->index, memory_order_relaxed) ==
						 index + k &&
					 (lpc_page_flags(pages[k]) & LPC_PG_LOCKED)),
				"RUN-FRAME-IN-FLIGHT", pages[k],
				"a frame read into by a run is no longer its locked page (f, index + %llu)",
				(unsigned long long)k);
#endif
	npg = run_pages(pages, n); /* holes not counted (U1) */
	lpc_count(t, LPC_C_READS);
	lpc_count_add(t, LPC_C_READ_PAGES, npg);
	if (npg > nr)
		lpc_count_add(t, LPC_C_RA_PAGES, npg - nr);
	if (fellback)
		lpc_count(t, LPC_C_DIRECT_FALLBACKS);

	/* U5a: what the request gave each page.  All of it, or a count short
	 * where the storage's file ends (C.3): each page its share, the one
	 * the count ends in zero-filled past it, the pages after it holes
	 * (0 bytes; lpc's size decides below whether they exist).  Short
	 * where the file goes on (a later part of the request failed, or the
	 * file grew since), or failed outright: the pages from the first one
	 * it did not fill (`whole`) on are not taken from this request. */
	whole = n;
	if (r < 0 || ((uint64_t)r < n * ps &&
		      !lpc_filemap_short_at_eof(f, (index << f->page_shift) + (uint64_t)r))) {
		whole = r < 0 ? 0 : (uint64_t)r / ps;
		lpc_count(t, LPC_C_READ_ERRORS);
	}
	for (k = 0; k < n; k++) {
		uint64_t off = k * ps;

		if (!pages[k]) {
			res[k] = RUN_DROPPED; /* a hole: its bytes were discarded */
			continue;
		}
		if (k < whole) {
			res[k] = (uint64_t)r <= off ? 0
				 : (ssize_t)((uint64_t)r - off > ps ? ps : (uint64_t)r - off);
		} else if (k >= nr || failed) {
			/* Nobody asked for it (read ahead), or the caller's
			 * read ends before it: dropped, not failed; a waiter
			 * reads it alone. */
			res[k] = RUN_DROPPED;
		} else if (n == 1 && r < 0) {
			res[k] = r; /* the request was this page alone */
		} else {
			/* The caller's own page: read alone before anything is
			 * reported (the kernel's filemap_read retries a failed
			 * readahead page the same way), so one bad page fails
			 * only itself; the first that fails ends the caller's
			 * read there (C.2), the rest of its pages dropped. */
			res[k] = lpc_filemap_read_one(f, pages[k], index + k, t);
			if (res[k] < 0)
				lpc_count(t, LPC_C_READ_ERRORS);
		}
		if (res[k] < 0 && res[k] != RUN_DROPPED)
			failed = true;
	}

	/* U5b: a shrinking truncate that raced the reads: from its cut on,
	 * their bytes may be from before it (filemap.h trunc_seq): pages
	 * wholly past it are dropped (their readers look up again), the cut's
	 * own page keeps its bytes below the cut and zeros after, pages below
	 * it are the file's.  Then lpc's size, loaded after the reads (as
	 * miss.c's M5: see there why nothing past the end of a truncate is
	 * cached): a page wholly past it is removed (-ENXIO, no ERROR), the
	 * last one zero-filled past it. */
	from = lpc_filemap_trunc_from(f, s0);
	size = atomic_load_explicit(&f->size, memory_order_seq_cst);
	for (k = 0; k < n; k++) {
		uint64_t start = (index + k) << f->page_shift;

		if (res[k] < 0)
			continue;
		if (start >= from) {
			res[k] = RUN_DROPPED;
		} else if (start >= size) {
			res[k] = -ENXIO;
		} else {
			if ((uint64_t)res[k] > from - start)
				res[k] = (ssize_t)(from - start);
			if ((uint64_t)res[k] > size - start)
				res[k] = (ssize_t)(size - start);
		}
	}

	/* U5c: successes are published first (UPTODATE, unlock), then the
	 * LOCKED rwlock is left, then the others are deleted (the delete
	 * takes the write lock there, as miss.c's M5): ERROR only on a page
	 * whose own read failed.  Each page's reference goes with its unlock
	 * (U5d), page 0's to the caller when it asked for it and it is good. */
	lpc_yield_point(LPC_YP_M5);
	for (k = 0; k < n; k++) {
		if (res[k] < 0)
			continue;
		if ((size_t)res[k] < ps)
			memset((char *)lpc_page_frame(pages[k]) + res[k], 0, ps - (size_t)res[k]);
		lpc_count_add(t, LPC_C_READ_BYTES, (uint64_t)res[k]);
		lpc_page_seq_write_end(pages[k]);
		/* A read-ahead page: RA until its first use, in the same
		 * release (its marker, if any, was set at U3). */
		lpc_page_unlock_set(pages[k], LPC_PG_UPTODATE | run_unlock_flags(f, index, k, nr, mark));
		if (k || !nr)
			lpc_page_release(pages[k]);
	}
	if (f->locked_lookup)
		pthread_rwlock_unlock(&f->tree_rwlock); /* taken at U3 */
	lpc_yield_point(LPC_YP_M5R); /* the good pages published (U5d) */
	for (k = 0; k < n; k++) {
		if (res[k] >= 0 || !pages[k])
			continue;
		lpc_filemap_delete(f, pages[k], index + k);
		lpc_page_seq_write_end(pages[k]); /* M2's section: nothing here */
		lpc_page_unlock_set(pages[k], res[k] == -ENXIO || res[k] == RUN_DROPPED
						      ? 0 : LPC_PG_ERROR);
		lpc_page_release(pages[k]); /* page 0's too: the caller gets an error */
	}
	if (nr == 0)
		return 0;
	if (res[0] < 0)
		return (int)res[0];
	*out = pages[0];
	return 0;
}

int lpc_filemap_read_run(struct lpc_file *f, uint64_t index, uint64_t nr, uint64_t ra,
			 uint64_t mark, struct lpc_tcache *t, unsigned alloc_flags,
			 struct lpc_page **out)
{
	struct lpc_page *pages[LPC_IO_MAX_IOV];
	uint64_t n, rest = 0, from, stop;
	unsigned queued = 0;
	int rc = run_start(f, &index, nr, ra, mark, t, alloc_flags, pages, &n);

	if (rc || n == 0)
		return rc;
	rc = run_finish(f, index, nr, mark, t, pages, n, out);
	if (nr == 0 || ra == 0)
		return rc;
	/* U6: a synchronous window (readahead.c S2) whose run ended before the
	 * window did (a page cached, run_max, a frame missing): the rest of
	 * the window from past the pages asked for, its cached pages skipped,
	 * read ahead as an asynchronous window would be (so the stream's next
	 * miss or marker finds it read, and the slot's next is where the
	 * reader's next miss comes), the marker on its first page read when
	 * the run ended before the marker; a window that ended early (no free
	 * frame) moves its stream's next back to where it ended
	 * (lpc_ra_cut), so that the reader's miss there continues the stream
	 * rather than starting one from ra_init.  Counted as one window, and only
	 * when it read something beyond the pages asked for. */
	from = index + (n > nr ? n : nr);
	stop = index + nr + ra;
	if (from < stop)
		rest = lpc_filemap_ra_window(f, from, index + nr + ra,
					     mark != UINT64_MAX && mark >= index + n, true, t,
					     &queued, &stop, NULL, NULL);
	if (n > nr || rest)
		lpc_count(t, LPC_C_RA_WINDOWS);
	if (stop < index + nr + ra)
		lpc_ra_cut(f, index + nr + ra, stop);
	return rc;
}

/* A job for the n pages of a run (U1-U3 done), or NULL (no memory). */
static struct lpc_ra_job *ra_job(struct lpc_file *f, uint64_t start, uint64_t mark,
				 struct lpc_page **pages, uint64_t n)
{
	struct lpc_ra_job *j = malloc(sizeof(*j) + n * sizeof(j->pages[0]));

	if (!j)
		return NULL;
	j->f = f;
	j->index = start;
	j->mark = mark;
	j->n = n;
	memcpy(j->pages, pages, n * sizeof(pages[0]));
	return j;
}

/* One run of a batch: its first page, the marker (UINT64_MAX: none), its
 * pages (inserted LOCKED, U1-U3), and the readahead grant its U5 gives
 * back (GB3's batch, Q5; 0 for a readahead thread's job, whose pages the
 * thread's Q2 accounts for). */
struct run_ref {
	uint64_t index, mark, n, granted;
	struct lpc_page **pages;
};

/* runs_finish's batch, for its end callback. */
struct runs_ctx {
	struct lpc_file *f;
	const struct run_ref *rr;
	const struct lpc_io_rrun *io;
	struct lpc_tcache *t;
	uint64_t s0;
};

/* U5 of one run of a batch, called by lpc_io_readv_batch as soon as that
 * run's own request is done (io.c RQ5), while other runs of the batch may
 * still be at the device: its pages are published or removed and unlocked
 * here, and its grant given back, whatever the other runs do. */
static void runs_end(void *arg, struct lpc_io_rrun *w)
{
	struct runs_ctx *x = arg;
	const struct run_ref *r = &x->rr[w - x->io];

	(void)run_done(x->f, r->index, 0, r->mark, x->t, r->pages, r->n, NULL, x->s0, w->res, 0);
	if (r->granted)
		lpc_ra_unreserve(x->f->files, r->granted, false); /* Q5: held to U5 */
}

/* U4 for nr runs of f together (at most LPC_RUN_BATCH runs, LPC_IO_MAX_IOV
 * pages): one lpc_io_readv_batch, so every run is at the device at once
 * (io_uring: one submission on this thread's ring, reaped by this thread);
 * U5 run by run as each run's own request completes (runs_end, io.c RQ3:
 * the batch's result for a run is that run's alone, the fault hook passed
 * per run, one run's error or short read no other's), so a reader of one
 * run's page waits for that run's request only, never for the batch's
 * slowest run (ra_worker.c Q6). */
static void runs_finish(struct lpc_file *f, const struct run_ref *rr, unsigned nr,
			struct lpc_tcache *t)
{
	struct iovec iov[LPC_IO_MAX_IOV];
	struct lpc_io_rrun io[LPC_RUN_BATCH];
	uint64_t used = 0, t0;
	int fellback = 0;
	/* U4, as run_finish's: loaded once the pages of every run are in the
	 * index, before any request. */
	struct runs_ctx x = { f, rr, io, t,
			      atomic_load_explicit(&f->trunc_seq, memory_order_seq_cst) };

	for (unsigned i = 0; i < nr; i++) {
		run_iov(f, rr[i].pages, rr[i].n, iov + used);
		io[i] = (struct lpc_io_rrun){ .iov = iov + used,
					      .iovcnt = (int)rr[i].n,
					      .off = rr[i].index << f->page_shift,
					      .index = rr[i].index };
		used += rr[i].n;
	}
	lpc_yield_point(LPC_YP_M4);
	t0 = lpc_clock_ns();
	lpc_io_readv_batch(f->iodev, &f->io, io, (int)nr, &fellback, runs_end, &x);
	/* The batch's time, its runs' U5 included. */
	lpc_count_add(t, LPC_C_MISS_NS_READ, lpc_clock_ns() - t0);
	if (fellback)
		lpc_count(t, LPC_C_DIRECT_FALLBACKS); /* once per batch, as before */
}

static uint64_t ra_window(struct lpc_file *f, uint64_t start, uint64_t end, bool mark_first,
			  bool async, struct lpc_tcache *t, unsigned *queued, uint64_t *stop,
			  struct lpc_filemap_batch *b, struct lpc_page **held, bool *queue_cut);

uint64_t lpc_filemap_ra_window(struct lpc_file *f, uint64_t start, uint64_t end,
			       bool mark_first, bool async, struct lpc_tcache *t,
			       unsigned *queued, uint64_t *stop, struct lpc_page **held,
			       bool *queue_cut)
{
	return ra_window(f, start, end, mark_first, async, t, queued, stop, NULL, held, queue_cut);
}

void lpc_filemap_batch_init(struct lpc_filemap_batch *b, struct lpc_file *f)
{
	b->f = f;
	b->nruns = 0;
	b->npages = 0;
}

void lpc_filemap_batch_flush(struct lpc_filemap_batch *b, struct lpc_tcache *t)
{
	struct run_ref rr[LPC_RUN_BATCH];
	uint64_t used = 0;

	if (!b->nruns)
		return;
	for (unsigned i = 0; i < b->nruns; i++) {
		rr[i] = (struct run_ref){ .index = b->runs[i].index, .mark = UINT64_MAX,
					  .n = b->runs[i].n, .granted = b->runs[i].granted,
					  .pages = b->pages + used };
		used += b->runs[i].n;
	}
	/* Q5: each run's grant is held to its own U5 (runs_end). */
	runs_finish(b->f, rr, b->nruns, t);
	lpc_filemap_batch_init(b, b->f);
}

/* The pages the runs of GB3's batch b were granted, held to their U5. */
static uint64_t batch_granted(const struct lpc_filemap_batch *b)
{
	uint64_t g = 0;

	for (unsigned i = 0; i < b->nruns; i++)
		g += b->runs[i].granted;
	return g;
}

uint64_t lpc_filemap_ra_window_batch(struct lpc_filemap_batch *b, uint64_t start,
				     uint64_t end, struct lpc_tcache *t, uint64_t *stop)
{
	unsigned queued;

	if (b->f->locked_lookup || !lpc_io_batches(b->f->iodev, &b->f->io))
		return lpc_filemap_ra_window(b->f, start, end, false, false, t, &queued, stop,
					     NULL, NULL);
	return ra_window(b->f, start, end, false, false, t, &queued, stop, b, NULL, NULL);
}

static uint64_t ra_window(struct lpc_file *f, uint64_t start, uint64_t end, bool mark_first,
			  bool async, struct lpc_tcache *t, unsigned *queued, uint64_t *stop,
			  struct lpc_filemap_batch *b, struct lpc_page **held, bool *queue_cut)
{
	struct lpc_page *buf[LPC_IO_MAX_IOV];
	const uint64_t base = start; /* held[k] is page base + k's */
	uint64_t total = 0;

	*queued = 0;
	*stop = end;
	/* W1 run by run: the cached pages from `start` are skipped (so a
	 * cached page never ends a window: the kernel's
	 * page_cache_ra_unbounded), then the run's pages are reserved from
	 * readahead's share (ra_worker.c Q5: at most what is left of a quarter
	 * of the frames, counted in pages, with a queue slot when the threads
	 * will read it), and U1 (nr 0) caps the run at what was granted, at
	 * the next cached page (bridged over a few: U1's holes) and at
	 * run_max (the holes count in the grant); a run granted nothing or that
	 * gets no frame ends the window (readahead reads less, never waits:
	 * U2).  W2 each run is a job for the readahead threads (ra_worker.c
	 * Q0-Q2: its grant becomes the job's, what it did not use given back),
	 * or read here when they cannot take it, and in LOCKED mode (U3's
	 * rwlock is the reader's) and when !async (stream.c GB3): then the
	 * grant is held until the read's U5 and given back after it, so the
	 * frames locked by read-ahead stay within the share whoever reads
	 * them.  With `held` (a stream's run, stream.c ST4 b), W2 first takes
	 * the caller's reference on each page the run inserted, after U3 and
	 * before the hand-out: no reader has the run yet, so the page is
	 * LOCKED, unread and unevictable then, and from then on it has a
	 * holder, so no read that completes and no evictor can leave the
	 * caller without it (a lookup after the hand-out could).  NULL (GB2,
	 * GB3, readahead): nothing taken, one branch per run.  *stop: where
	 * the window ended early (no share, no frame, end of file), or end. */
	while (start < end) {
		uint64_t i = start, n, mark, want, got;
		struct lpc_page **pages;
		struct lpc_ra_job *j;
		bool pool = async && !f->locked_lookup;

		while (i < end && lpc_filemap_present(f, i))
			i++;
		if (i == end)
			break; /* nothing absent left */
		want = end - i;
		if (want > f->files->run_max)
			want = f->files->run_max;
		if (want > LPC_IO_MAX_IOV)
			want = LPC_IO_MAX_IOV;
		if (b && b->nruns &&
		    (b->nruns == LPC_RUN_BATCH || b->npages + want > LPC_RUN_BATCH_PAGES))
			lpc_filemap_batch_flush(b, t); /* full: read, then on */
		got = lpc_ra_reserve(f->files, want, pool, queue_cut);	/* Q5 */
		if (b && b->nruns && got < want && batch_granted(b) >= want - got) {
			/* Short of share by no more than this batch's own
			 * grants: read the batch first (each run gives its
			 * grant back at its U5), then ask again, so that GB3's
			 * batch never refuses its own later runs.  A share
			 * that others hold keeps the batch going (and the
			 * run shorter, or the window ended). */
			lpc_ra_unreserve(f->files, got, pool);
			lpc_filemap_batch_flush(b, t);
			got = lpc_ra_reserve(f->files, want, pool, queue_cut);
		}
		pages = b ? b->pages + b->npages : buf;
		if (!got) {
			*stop = i;
			break;
		}
		start = i;
		if (run_start(f, &i, 0, got, mark_first && total == 0 ? RUN_MARK_FIRST : UINT64_MAX,
			      t, 0, pages, &n) ||
		    n == 0) {
			lpc_ra_unreserve(f->files, got, pool);
			if (n == 0 && i > start)
				continue; /* pages inserted since the skip: past them */
			/* No frame or the end of the file at i: the window ends. */
			*stop = i < end ? i : end;
			break;
		}
		mark = mark_first && total == 0 ? i : UINT64_MAX;
		total += run_pages(pages, n);
		start = i + n;
		if (held) {
			/* W2's holds (stream.c ST4 b): the run's pages are
			 * LOCKED and referenced by this thread (U3), and
			 * nobody reads them before the hand-out below, so
			 * the caller's reference is taken while no read can
			 * have completed and no evictor can take them (E4:
			 * ref 1 only).  A plain increment: the run's own
			 * reference keeps the page from being frozen. */
			for (uint64_t k = 0; k < n; k++) {
				if (!pages[k])
					continue; /* a hole: cached, as a page skipped */
				atomic_fetch_add_explicit(&pages[k]->ref, 1, memory_order_relaxed);
				held[i + k - base] = pages[k];
			}
		}
		if (pool) {
			j = ra_job(f, i, mark, pages, n);
			if (j && lpc_ra_submit(j, got)) {
				(*queued)++;
				continue;
			}
			free(j);
		}
		if (b) {
			/* GB3's batch: read with the batch's other runs
			 * (lpc_filemap_batch_flush), the grant held to this
			 * run's U5 (runs_end). */
			b->runs[b->nruns].index = i;
			b->runs[b->nruns].n = n;
			b->runs[b->nruns++].granted = got;
			b->npages += n;
			continue;
		}
		/* LOCKED mode, !async; or no memory for the job, or no thread
		 * could ever start (Q1): read here, within the grant. */
		(void)run_finish(f, i, 0, mark, t, pages, n, NULL);
		lpc_ra_unreserve(f->files, got, pool);
	}
	return total;
}

void lpc_filemap_ra_finish(struct lpc_ra_job *j, struct lpc_tcache *t)
{
	(void)run_finish(j->f, j->index, 0, j->mark, t, j->pages, j->n, NULL);
	free(j);
}

void lpc_filemap_ra_finish_batch(struct lpc_ra_job **jobs, unsigned nj, struct lpc_tcache *t)
{
	struct run_ref rr[LPC_RUN_BATCH];

	if (nj <= 1 || nj > LPC_RUN_BATCH) {
		for (unsigned i = 0; i < nj; i++)
			lpc_filemap_ra_finish(jobs[i], t);
		return;
	}
	for (unsigned i = 0; i < nj; i++)
		rr[i] = (struct run_ref){ .index = jobs[i]->index, .mark = jobs[i]->mark,
					  .n = jobs[i]->n, .pages = jobs[i]->pages };
	runs_finish(jobs[0]->f, rr, nj, t);
	for (unsigned i = 0; i < nj; i++)
		free(jobs[i]);
}
