/* SPDX-License-Identifier: MIT */
/*
 * miss.c - getting a page, reading it on a miss: the speculative fault.
 *
 * A miss takes no lock that other misses or hits share, except its radix
 * leaf's lock for the insert itself (the file's index lock when the leaf
 * must be made); nothing is held across the read but the
 * new page's own lock:
 *   M1 allocate a frame for a miss (LPC_ALLOC_MISS, ref 0): maybe one this
 *      thread's lpc_invalidate removed, not yet past a grace period
 *      (page/alloc.c MR1-MR5), which a stale getter may still try
 *   M2 give it its identity, LOCKED and PUBLISHED (relaxed stores: no
 *      reader relies on them before it holds a reference), then two
 *      references (ours and the index's) with a release store from 0
 *      (MR3): a getter's R3 fails on the frame until then, and one that
 *      succeeds after it sees PUBLISHED.  A
 *      seq write section (page/page.h) opens before the identity is set and
 *      closes at M5, so seq is odd from here until the data is in place:
 *      an optimistic reader (optimistic.c) never accepts the page before
 *      M5, whether it is published yet or not
 *   M3 insert it: lockless mode, under the lock of its radix leaf alone when
 *      the leaf exists (radix.c FI1-FI4), else (and LOCKED mode) under the
 *      index lock (the radix tree publishes it with a release store either
 *      way).  -EEXIST: another thread inserted first; our page was
 *      never in a slot, so we drop its two references (MR4: a stale
 *      getter's may be the last, and frees it the published way) and wait
 *      on theirs (M6)
 *   M4 read into the frame (O_DIRECT), zero what lies past end of file; a
 *      read short of a page where the storage's file does not end (its
 *      size now, whether or not lpc keeps the size: C.3) is read once
 *      more, then an error (lpc_filemap_read_one); a shrinking truncate
 *      that raced the read (lpc_filemap_trunc_from) drops the page if it
 *      lies wholly past the cut (look up again: -EEXIST), zeroes it past
 *      the cut if the cut is inside it, and leaves a page below the cut
 *      alone; then lpc's size, loaded after the read, cuts it
 *   M5 success: close the seq section (release), set UPTODATE and unlock in
 *      one release (waiters wake); failure: delete the page from the index,
 *      close the seq section, set ERROR and unlock, return the error:
 *      nothing is cached, the next get reads again (dropped for a truncate
 *      or past the end: no ERROR, waiters look up again)
 *   M6 a thread that finds a page not UPTODATE waits for its lock to be
 *      released (lpc_page_wait_unlocked), then re-checks: UPTODATE -> hit;
 *      ERROR -> -EIO (it shared the failed read); neither (removed for
 *      another reason) -> look up again
 * Exactly one read per page is issued however many threads miss on it at
 * once: only the thread whose insert succeeded reads.
 *
 * LOCKED mode (LPC_LOOKUP_LOCKED) is the pre-speculative-fault kernel, kept
 * to be measured against (lpcbench fault): a miss holds the file's rwlock
 * (tree_rwlock, the seed's mmap_sem) for reading from M3 to M5, across the
 * read.  Misses on other pages share it; lpc_invalidate and the last close,
 * which take it for writing, wait for every read in flight.  The insert
 * (M3) runs under the read lock, so inserts serialise among themselves on
 * tree_lock, the lockless mode's index mutex.  Everything that drops the
 * index's reference of a page (a failed read's delete at M5, invalidate,
 * close) holds the rwlock for writing: a LOCKED lookup, holding it for
 * reading, can then take a plain reference on any page it finds.  So a
 * failed read leaves the read lock first and then deletes under the write
 * lock (page lock -> index lock, cache.h).  M1 allocates before the read
 * lock is taken: the allocator may wait for a grace period, and a thread
 * waiting for the write lock may be inside a read section (remove.c).
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "filemap/filemap.h"

uint64_t lpc_filemap_refresh_size(struct lpc_file *f)
{
	struct stat st;
	int rc;

	/* A user backend's storage answers through its size operation (lpc.h
	 * BK5), a path's kernel file through fstat. */
	if (f->io.user) {
		uint64_t n = 0;

		rc = lpc_io_size(f->iodev, &f->io, &n);
		st.st_size = (off_t)n;
	} else {
		rc = fstat(f->io.fd, &st);
	}
	if (rc == 0 && st.st_size >= 0) {
		uint64_t size = atomic_load_explicit(&f->size, memory_order_relaxed);

		/* Until lpc writes the file, its size is the kernel's (it may
		 * grow or shrink behind our back), and so is io.size; after,
		 * lpc's own, which writeback publishes, and io.size is lpc's
		 * end of the kernel's file (SZ2-SZ5, writeback.c): what another
		 * process appended is not lpc's, and no publish may cut it (a
		 * write of a whole last page makes the kernel's larger for a
		 * moment: it must not leak in here either). */
		if (!atomic_load_explicit(&f->size_kept, memory_order_acquire))
			atomic_store_explicit(&f->io.size, (uint64_t)st.st_size,
					      memory_order_relaxed);
		while (!atomic_load_explicit(&f->size_kept, memory_order_acquire) &&
		       !atomic_compare_exchange_weak_explicit(&f->size, &size, (uint64_t)st.st_size,
							      memory_order_relaxed,
							      memory_order_relaxed))
			;
	}
	return atomic_load_explicit(&f->size, memory_order_acquire);
}

static void size_raise(_Atomic uint64_t *v, uint64_t to)
{
	uint64_t cur = atomic_load_explicit(v, memory_order_relaxed);

	while (cur < to && !atomic_compare_exchange_weak_explicit(v, &cur, to, memory_order_release,
								  memory_order_relaxed))
		;
}

uint64_t lpc_filemap_size_seen(struct lpc_file *f, uint64_t seen)
{
	size_raise(&f->io.size, seen);
	size_raise(&f->size, seen);
	return atomic_load_explicit(&f->size, memory_order_acquire);
}

bool lpc_filemap_short_at_eof(struct lpc_file *f, uint64_t end)
{
	uint64_t size;

	/* Until lpc keeps the size, the refresh is that look (io.size is the
	 * kernel's); after, lpc's sizes say what lpc wrote, not where the
	 * storage's file ends now, so ask the storage.  A truncate that cut
	 * the file after the read is no matter here: a read it raced is
	 * judged by the cut (lpc_filemap_trunc_from) and lpc's size. */
	if (!atomic_load_explicit(&f->size_kept, memory_order_acquire)) {
		lpc_filemap_refresh_size(f);
		size = atomic_load_explicit(&f->io.size, memory_order_relaxed);
	} else if (lpc_io_size(f->iodev, &f->io, &size) != 0) {
		return false; /* unknown: read again, or fail */
	}
	return end >= size;
}

/* True if page `index` lies wholly past the end of the file. */
static bool past_eof(struct lpc_file *f, uint64_t index)
{
	uint64_t size = atomic_load_explicit(&f->size, memory_order_acquire);

	if (index < (size + f->pool->page_size - 1) >> f->page_shift)
		return false;
	/* It may have grown behind our back: ask the kernel once. */
	size = lpc_filemap_refresh_size(f);
	return index >= (size + f->pool->page_size - 1) >> f->page_shift;
}

ssize_t lpc_filemap_read_frame(struct lpc_file *f, void *frame, uint64_t index,
			       struct lpc_tcache *t)
{
	size_t ps = f->pool->page_size;
	uint64_t start = index << f->page_shift;
	int fellback = 0;
	ssize_t r = -EIO;

	for (int tries = 0; tries < 2; tries++) {
		/* Sampled (filemap.h), by this thread's reads. */
		bool timed = lpc_miss_sampled(t, LPC_C_READS);
		uint64_t t0 = timed ? lpc_clock_ns() : 0;

		r = lpc_io_read(f->iodev, &f->io, frame, ps, start, index, &fellback);
		if (timed)
			lpc_count_add(t, LPC_C_MISS_NS_READ,
				      (lpc_clock_ns() - t0) * LPC_MISS_SAMPLE);
		lpc_count(t, LPC_C_READS);
		lpc_count(t, LPC_C_READ_PAGES);
		if (r < 0 || (size_t)r >= ps || lpc_filemap_short_at_eof(f, start + (uint64_t)r))
			break;
		/* Short where the file goes on: once more, then an error.  The
		 * storage may have grown between the read and the size (a
		 * writeback of a later page extends it: rbd.c RB1 over a hole);
		 * the second read then gets the bytes (zeros for a hole). */
		r = -EIO;
	}
	if (fellback)
		lpc_count(t, LPC_C_DIRECT_FALLBACKS);
	return r;
}

ssize_t lpc_filemap_read_one(struct lpc_file *f, struct lpc_page *p, uint64_t index,
			     struct lpc_tcache *t)
{
	ssize_t r;

	lpc_page_debug_read_begin(p);
	r = lpc_filemap_read_frame(f, lpc_page_frame(p), index, t);
	lpc_page_debug_read_end(p);
	return r;
}

/* M4-M5.  Return: 0 with p UPTODATE, or a negative errno with p removed. */
static int filemap_read_page(struct lpc_file *f, struct lpc_page *p, uint64_t index,
			     struct lpc_tcache *t)
{
	struct lpc_pool *c = f->pool;
	void *frame = lpc_page_frame(p);
	/* The page is in the index (M3): a shrinking truncate from here on
	 * finds it and waits for its lock, or is seen by the check below. */
	uint64_t s0 = atomic_load_explicit(&f->trunc_seq, memory_order_seq_cst);
	ssize_t r;

	lpc_yield_point(LPC_YP_M4);
	r = lpc_filemap_read_one(f, p, index, t);
	lpc_yield_point(LPC_YP_M4D);
	if (r >= 0) {
		/* A shrinking truncate that raced the read: from its cut on,
		 * the bytes may be from before it (filemap.h trunc_seq).  A
		 * page wholly past the cut is read again (-EEXIST: it is past
		 * the end now, or the file grew again); the cut's own page
		 * keeps its bytes below the cut, zeros after; a page below it
		 * is the file's.  Then lpc's size, loaded after the read (M4):
		 * a truncate that set a smaller one before it removed pages
		 * either finds this page in the index (and waits for its lock)
		 * or made its size visible here, so no byte past the end is
		 * ever cached (writeback/truncate.c).  Wholly past it: the
		 * file shrank. */
		uint64_t from = lpc_filemap_trunc_from(f, s0);
		uint64_t size = atomic_load_explicit(&f->size, memory_order_seq_cst);
		uint64_t start = index << f->page_shift;

		if (start >= from) {
			r = -EEXIST;
		} else if (start >= size) {
			r = -ENXIO;
		} else {
			if ((uint64_t)r > from - start)
				r = (ssize_t)(from - start);
			if ((uint64_t)r > size - start)
				r = (ssize_t)(size - start);
		}
	}
	if (r < 0) {
		if (r != -ENXIO && r != -EEXIST)
			lpc_count(t, LPC_C_READ_ERRORS);
		lpc_yield_point(LPC_YP_M5);
		if (f->locked_lookup)
			pthread_rwlock_unlock(&f->tree_rwlock); /* taken at M3 */
		lpc_filemap_delete(f, p, index);
		lpc_page_seq_write_end(p); /* M2's section: nothing to read here */
		/* -ENXIO, -EEXIST: removed, no ERROR: waiters look up again (M6). */
		lpc_page_unlock_set(p, r == -ENXIO || r == -EEXIST ? 0 : LPC_PG_ERROR);
		return (int)r;
	}
	if ((size_t)r < c->page_size)
		memset((char *)frame + r, 0, c->page_size - (size_t)r);
	lpc_count_add(t, LPC_C_READ_BYTES, (uint64_t)r);
	lpc_yield_point(LPC_YP_M5);
	/* M2's write section ends with the data in place (release), before
	 * UPTODATE is published by the unlock's release. */
	lpc_page_seq_write_end(p);
	/* A refault moves CLOCK2's active target (page/workingset.h), and
	 * says the page was used before (REFAULTED: page.h); not one of a
	 * page a stream dropped: the stream used it, not this reader. */
	lpc_page_unlock_set(p, LPC_PG_UPTODATE |
				       (lpc_pool_ws_refault(c, lpc_pool_ws_key(f->ws_id, index)) ==
						LPC_WS_REFAULT
						? LPC_PG_REFAULTED
						: 0));
	if (f->locked_lookup)
		pthread_rwlock_unlock(&f->tree_rwlock); /* taken at M3 */
	return 0;
}

int lpc_filemap_insert(struct lpc_file *f, uint64_t index, struct lpc_page *p)
{
	int rc;

	lpc_debug_check(atomic_load_explicit(&p->flags, memory_order_relaxed) & LPC_PG_PUBLISHED,
			"PUBLISH-UNPUBLISHED", p,
			"page inserted in an index without PUBLISHED (its free would skip the grace period)");
	/* Lockless mode: into the existing leaf under its lock alone (radix.c
	 * FI1-FI4), so that misses in different leaves of one file share no
	 * lock and no written line; the read section keeps the leaf valid
	 * between the walk and its lock.  -EAGAIN (no leaf yet, or a dead
	 * one): the insert allocates, under tree_lock. */
	if (!f->locked_lookup) {
		lpc_rcu_read_lock();
		rc = lpc_radix_insert_fast(&f->tree, index, p);
		lpc_rcu_read_unlock();
		if (rc != -EAGAIN)
			return rc;
	}
	/* tree_lock in both modes: LOCKED mode's caller holds the rwlock for
	 * reading (see the top of the file). */
	pthread_mutex_lock(&f->tree_lock);
	rc = lpc_radix_insert(&f->tree, index, p);
	pthread_mutex_unlock(&f->tree_lock);
	return rc;
}

void lpc_filemap_prep_miss(struct lpc_file *f, struct lpc_page *p, uint64_t index)
{
	lpc_yield_point(LPC_YP_M2);
	/* M2: locked (by this thread: lpc_page_unlock_set at M5 is ours), then
	 * the identity, then PUBLISHED; plain stores, nobody can see it yet. */
	atomic_store_explicit(&p->flags, LPC_PG_LOCKED, memory_order_relaxed);
#if LPC_DEBUG
	atomic_store_explicit(&p->dbg_owner, lpc_debug_tid(), memory_order_relaxed);
#endif
	/* A seq write section from here to M5 (the page lock is ours): the
	 * identity changes now and the data at M4, and optimistic readers
	 * that find the page in the index before M5 see seq odd and take the
	 * referenced path, which waits for the read (M6). */
	lpc_page_seq_write_begin(p);
	lpc_page_set_identity(p, f, index);
	atomic_store_explicit(&p->flags, LPC_PG_LOCKED | LPC_PG_PUBLISHED,
			      memory_order_relaxed);
	/* MR3: the references last, from 0 (LPC_ALLOC_MISS), with a release
	 * store: the frame may be this thread's own deferred one, reused with
	 * no grace period (page/alloc.c MR1), so a getter that loaded it from
	 * its old slot may be about to try R3; one that succeeds now sees
	 * PUBLISHED (its acquire pairs with this release), and its put takes
	 * the published way.  From here on ref changes by RMW only (MR4). */
	atomic_store_explicit(&p->ref, 2, memory_order_release);
}

void lpc_filemap_unprep_miss(struct lpc_page *p)
{
	/* MR4: never in a slot since M2, but a stale getter (MR5) may hold
	 * a reference for a moment: our two go with atomic decrements, and
	 * whoever drops the last frees the frame the published way (pending,
	 * a grace period before any private use).  Nobody waits on the
	 * lock: nobody could find the page. */
	lpc_page_seq_write_end(p);
	atomic_fetch_and_explicit(&p->flags, ~LPC_PG_LOCKED, memory_order_relaxed);
	lpc_page_release(p);
	lpc_page_release(p);
}

/* M1-M3.  Return: 0 with *out locked and inserted; -EEXIST; -ENOMEM. */
static int filemap_add_page(struct lpc_file *f, uint64_t index, unsigned alloc_flags,
			    struct lpc_tcache *t, struct lpc_page **out)
{
	/* Sampled (filemap.h), by this thread's misses: this one is counted. */
	bool timed = lpc_miss_sampled(t, LPC_C_MISSES);
	struct lpc_page *p;
	uint64_t t0 = 0;
	int rc;

	lpc_yield_point(LPC_YP_M1);
	if (timed)
		t0 = lpc_clock_ns();
	rc = lpc_page_alloc_frame(f->pool, alloc_flags | LPC_ALLOC_MISS, &p);	/* M1 */
	if (timed)
		lpc_count_add(t, LPC_C_MISS_NS_ALLOC, (lpc_clock_ns() - t0) * LPC_MISS_SAMPLE);
	if (rc)
		return rc;
	lpc_filemap_prep_miss(f, p, index);				/* M2 */

	lpc_yield_point(LPC_YP_M3);
	if (f->locked_lookup)
		pthread_rwlock_rdlock(&f->tree_rwlock); /* held to M5 */
	if (timed)
		t0 = lpc_clock_ns();
	rc = lpc_filemap_insert(f, index, p);				/* M3 */
	if (timed)
		lpc_count_add(t, LPC_C_MISS_NS_INSERT, (lpc_clock_ns() - t0) * LPC_MISS_SAMPLE);
	if (rc) {
		if (f->locked_lookup)
			pthread_rwlock_unlock(&f->tree_rwlock);
		lpc_filemap_unprep_miss(p);
		return rc;
	}
#if LPC_DEBUG
	lpc_debug_page_locks++; /* M2's lock, now sure to end at M5's unlock */
#endif
	*out = p;
	return 0;
}

int lpc_filemap_get_pages(struct lpc_file *f, uint64_t index, uint64_t nr,
			  struct lpc_tcache *t, unsigned alloc_flags, struct lpc_page **out)
{
	struct lpc_page *p;
	uint64_t ra, mark;
	uint32_t flags;
	bool counted = false;
	int rc;

	for (;;) {
		p = lpc_filemap_lookup(f, index, t);
		if (p) {
			flags = lpc_page_flags(p);
			if (likely(flags & LPC_PG_UPTODATE)) {
				lpc_page_mark_referenced(p, flags);
				/* The async marker: whoever clears it starts the
				 * next window (readahead.c A1). */
				if (unlikely(flags & LPC_PG_RA_MARK) &&
				    (atomic_fetch_and_explicit(&p->flags, ~LPC_PG_RA_MARK,
							       memory_order_relaxed) &
				     LPC_PG_RA_MARK))
					lpc_ra_on_mark(f, index, t);
				if (!counted)
					lpc_count(t, LPC_C_HITS);
				*out = p;
				return 0;
			}
			if (!counted) {
				lpc_count(t, LPC_C_MISSES);
				counted = true;
			}
			lpc_yield_point(LPC_YP_M6);
			if (!f->locked_lookup) {
				/* A page read ahead and still in flight with the
				 * marker (set as it was inserted, run.c U3): the
				 * next window starts now, before the wait, so it is
				 * at the device while this one is (readahead.c A1).
				 * LOCKED mode reads that window in this thread:
				 * there the marker is taken after the wait. */
				if (unlikely(flags & LPC_PG_RA_MARK) &&
				    (atomic_fetch_and_explicit(&p->flags, ~LPC_PG_RA_MARK,
							       memory_order_relaxed) &
				     LPC_PG_RA_MARK))
					lpc_ra_on_mark(f, index, t);
				/* A run still queued for the readahead threads
				 * is read here rather than waited for (ra_worker.c
				 * Q6). */
				(void)lpc_ra_steal(f, p, t);
			}
			lpc_page_wait_unlocked(p);				/* M6 */
			flags = lpc_page_flags(p);
#if LPC_DEBUG
			/* Unlocked and not UPTODATE: its read failed (ERROR) or
			 * was dropped (run.c U5, a raced truncate), and it left
			 * the index before the unlock (our reference keeps it
			 * from being reused meanwhile). */
			if (!(flags & LPC_PG_UPTODATE)) {
				struct lpc_page *q;

				lpc_rcu_read_lock();
				q = lpc_radix_lookup(&f->tree, index, NULL);
				lpc_rcu_read_unlock();
				lpc_debug_check(q != p, "FAILED-PAGE-IN-INDEX", p,
						"a page whose read failed or was dropped is still in the index");
			}
#endif
			if (flags & LPC_PG_UPTODATE) {
				/* A page read ahead and waited for: its first use
				 * (RA), and maybe the marker of the next window,
				 * as on a hit (readahead.c A1). */
				if (unlikely(flags & LPC_PG_RA))
					lpc_page_ra_used(p);
				if (unlikely(flags & LPC_PG_RA_MARK) &&
				    (atomic_fetch_and_explicit(&p->flags, ~LPC_PG_RA_MARK,
							       memory_order_relaxed) &
				     LPC_PG_RA_MARK))
					lpc_ra_on_mark(f, index, t);
				*out = p;
				return 0;
			}
			lpc_page_release(p);
			if (flags & LPC_PG_ERROR)
				return -EIO;
			continue;
		}
		if (!counted) {
			lpc_count(t, LPC_C_MISSES);
			counted = true;
		}
		if (past_eof(f, index))
			return -ENXIO;
		ra = lpc_ra_on_miss(f, index, nr, &mark);
		if (nr > 1 || ra) {
			/* Several absent pages ahead, or a window to read
			 * ahead: one I/O (run.c, which counts the window when
			 * it read one). */
			rc = lpc_filemap_read_run(f, index, nr, ra, mark, t, alloc_flags, &p);
			if (rc == -EEXIST)
				continue;
			if (rc)
				return rc;
			*out = p;
			return 0;
		}
		rc = filemap_add_page(f, index, alloc_flags, t, &p);
		if (rc == -EEXIST)
			continue;
		if (rc)
			return rc;
		rc = filemap_read_page(f, p, index, t);
		if (rc) {
			lpc_page_release(p); /* ours; the index's went with the delete */
			if (rc == -EEXIST)
				continue; /* it raced a truncate: look up again */
			return rc;
		}
		*out = p;
		return 0;
	}
}

int lpc_filemap_get_page(struct lpc_file *f, uint64_t index, struct lpc_tcache *t,
			 unsigned alloc_flags, struct lpc_page **out)
{
	return lpc_filemap_get_pages(f, index, 1, t, alloc_flags, out);
}

LPC_EXPORT int lpc_page_get(struct lpc_file *f, uint64_t index, unsigned flags,
			    struct lpc_page **out)
{
	struct lpc_tcache *t;

	if (unlikely(!f || !out || flags))
		return -EINVAL;
	lpc_debug_file_check(f);
	t = lpc_file_tcache(f);
	if (unlikely(!t))
		return -ENOMEM;
	return lpc_filemap_get_page(f, index, t, 0, out);
}
