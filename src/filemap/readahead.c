/* SPDX-License-Identifier: MIT */
/*
 * readahead.c - on-demand readahead after the kernel's (mm/readahead.c):
 * sequential streams detected per file, a window that ramps up, and an
 * asynchronous marker page whose hit reads the next window.
 *
 * Streams.  A file keeps LPC_RA_STREAMS stream slots (several readers of one
 * file scanning different parts each keep their own) and LPC_RA_CANDS
 * candidate slots (misses that may start a stream), under f->ra_lock.  A
 * miss only tries it (pthread_mutex_trylock): one that finds it taken
 * reads no window this time, so misses never wait for each other here (the
 * stream's next miss at slot.next continues it, S1).  A marker hit (A1)
 * waits for it: the marker is gone once taken, so a hit that gave up
 * started nothing and left the scanner to read the next window at the
 * device (A2).  A plain hit never sees the lock.  Candidates and
 * streams are apart so that random misses, which churn the candidates,
 * never take an established stream's slot.
 *   S1 a miss of pages [i, i + nr) that starts where a stream expects its
 *      next window (slot.next == i) continues it: its window grows ×4 while
 *      under 1/16 of ra_max, then ×2, up to ra_max (the kernel's
 *      get_next_ra_size); a window shrinks by half instead when a page it
 *      read ahead was evicted unused since (ra_thrash: the cache cannot
 *      hold what is read ahead); and it is at most the stream's part of
 *      readahead's share (ra_fair: ra_worker.c QS1-QS2, share / (2 x the
 *      streams active)), so that several streams each keep their next
 *      window in flight (A2) rather than cut each other's
 *   S2 the window is read with the miss (run.c U1-U6): the nr pages asked
 *      for in the same I/O as the window's start, the rest of the window
 *      after them, its cached pages skipped; the first page past what was
 *      asked for carries RA_MARK; the slot covers [i, i + size) and expects
 *      its next window at its end
 *   S3 a miss that starts where the calling thread's previous miss ended
 *      (a thread-local record: the kernel's per-descriptor prev_pos), or
 *      where the file's last miss ended (its candidate is the newest: the
 *      stream's reads handed from one thread to another), starts a stream:
 *      S1's first window, ra_init pages, in the oldest stream slot; one that
 *      starts where an older candidate ends (cand.next == i: several streams
 *      interleaved) confirms it once more, and the LPC_RA_CONFIRM-th
 *      confirmation (three misses in a row, each where the last ended)
 *      starts the stream.  So a uniform random reader over N pages starts
 *      a window with probability about 2/N per miss (its own previous miss
 *      or the file's: the kernel's rule is 1/N), plus (LPC_RA_CANDS / N)^2
 *      through the older candidates
 *   S4 any other miss starts no readahead: it takes the oldest candidate
 *      slot, expecting [i + nr, ...).  So strided or backward access never
 *      reads ahead either
 * Marker (asynchronous windows).
 *   A1 a lookup of a page with RA_MARK (lpc_filemap_get_pages: a hit, or a
 *      page still in flight, before its M6 wait; the optimistic and pin
 *      fast paths refuse such pages, at no cost: the same flag test)
 *      clears it with an atomic and: exactly one thread sees it set.  The
 *      marker is set as its page is inserted, before the read (run.c U3),
 *      so a reader that catches up with a window still at the device
 *      starts the next one at once, and two windows of the stream are in
 *      flight together (the kernel's PG_readahead); set at the read's end,
 *      the reader waited for the window first and the device had one
 *      window at a time.  LOCKED mode takes the marker after the wait (the
 *      window is read by this thread there)
 *   A2 that thread takes f->ra_lock, waiting for it (the one place that
 *      does: the marker is this thread's alone, A1, and no other hit will
 *      start the stream's window, so a trylock that failed while another
 *      stream's reader held the lock lost the window: two scanners of one
 *      file that reached their markers together, one of them then read its
 *      next window at the device, test_readahead t_two_streams_share and
 *      regress_ra_mark_lock.c); the lock is held for the table's scan and
 *      QS1's sizing (w->lock, whose holders never wait for ra_lock: no
 *      cycle), never across a read or a page lock.  It finds the stream
 *      whose last window holds the marker
 *      (next - size <= index < next) and is fresh (LPC_RA_FRESH), grows
 *      the window (S1's ramp, within its part of the share), and reads
 *      [next, next + size): its absent pages, cached ones skipped (run.c
 *      W1), RA_MARK on the first page inserted, so that a reader that keeps
 *      going hits the next marker one window before the data runs out; a window with nothing absent counts nothing; a window that
 *      ended early (no free frame: run.c W1) moves the stream's next back
 *      to where it ended (lpc_ra_cut), so the reader's miss there
 *      continues the stream (S1) instead of starting one from ra_init
 *   A3 no stream holds the marker (the table moved on): nothing; the
 *      stream's next miss (S1 at slot.next, or S3) picks it up again
 *   A4 after A2's window, with fewer frames free than the largest window
 *      above twice readahead's reserve (while several streams read ahead:
 *      room for two windows of each, the share, ra_worker.c QS4): the
 *      background reclaimer woken for readahead (ra_refill: reclaimer.c
 *      refills to room for a whole window, or the streams' room and a
 *      quarter of it more: RF4), so that
 *      the next marker's window finds its frames free and is read whole:
 *      two windows at the device or unread ahead of the reader, not one
 *      cut to what the last refill happened to leave; a window of a split
 *      stream (ra_worker.c QS2) cut before its end anyway grows the
 *      streams' room to the share (ra_room_grow, QS4), unless it ended
 *      for want of a queue slot alone (run.c W1, with share for the whole
 *      run: free frames do not fix that; beside a hot set a window is many short runs, and the
 *      queue ended most of lpcbench read's scan-mix windows).  Neither
 *      for a stream that feeds itself (slot.fed: its last drop, A5, left
 *      at most half of its range cached; ra_fed): its windows take the
 *      frames of its drops (a window short of them takes free frames as
 *      any, or ends early), and a refill for it kept free frames that the
 *      other readers' pages could have held (lpcbench read, scan-mix:
 *      14.5-17.8 k of the 64 k frames free at the slices' ends, and one
 *      refill for a stream that restarted, its room grown by a full
 *      queue, evicted 12.9 k pages at once; tests/unit/test_drop_behind.c
 *      t_self_fed)
 * A2's window is read by the cache's readahead threads (ra_worker.c), one
 * I/O per run of at most run_max pages, several at once, so the reader that
 * hit the marker returns at once and an established scanner finds the next
 * window read or in flight (its pages locked: it waits on the page, M6, not
 * on the submitter); when no thread can take a run, or in LOCKED mode, the
 * marker's reader reads it itself (counted in ra_windows, not ra_async).
 *
 *   A5 drop-behind: over a file larger than the cache (what the stream
 *      reads now is evicted before a loop could come back to it anyway),
 *      with CLOCK2's shadows (page/workingset.h: without them no loop is
 *      seen, and plain CLOCK's hand clears the REFERENCED that keeps a
 *      page others use, leaving ONCE alone: tests/attack_drop),
 *      A2's thread first takes the stream's used-once pages out of the
 *      cache, from where its last drop ended (slot.behind) to one window
 *      behind the marker (ra_behind: [behind, index - size), size the
 *      last window's, so a reader a little behind the marker, or a call
 *      still copying, finds its pages), with lpc_invalidate's removal
 *      (remove.c: clean, unlocked, held by nobody), of only the pages read
 *      for a stream (ahead, or a stream's miss's own) and used once since
 *      (ONCE), not referenced again, promoted nor refaulted (remove.c
 *      drop_rule).  Their frames stay with this thread
 *      (page/alloc.c OD1-OD2) and the window read next takes them at once
 *      (MR1: a miss's frame needs no grace period), so a scan feeds itself
 *      and the clock hand turns for the other readers' misses alone; else
 *      a faster scanner evicted the hot set's new pages sooner (lpcbench
 *      read, scan-mix: the readers' hit ratio fell as the scanner's
 *      speed rose).  The kernel keeps a scan's pages until its LRU gets to
 *      them (FADV_NOREUSE aside).  Pages of the range that others use
 *      stay: a hit on them set REFERENCED (a bulk read's does not:
 *      read.c), a cached page the stream did not read has no ONCE.  A
 *      loop over part of such a file: each drop leaves a shadow and moves
 *      the eviction clock (page/workingset.h, DROPPED), a stream's read
 *      of a page dropped within a cache's turnover counts in
 *      f->ra_drop_refaults (run.c U5) and marks the page REFAULTED (never
 *      dropped, marked by any hit), and while that count grows no stream
 *      of the file drops (ra_behind): the loop's pages are left to the
 *      evictor, as without drop-behind.
 *      No step of its own against lookups, writers or eviction: the
 *      removal is lpc_invalidate's, A-C (lookup.c, tests/model/
 *      spec_get.pml; its fast delete FD1-FD3 under the leaf lock,
 *      tests/model/leaf_lock.pml), and the flags only choose which pages
 *      it tries.  Its rules (tests/unit/test_drop_behind.c): DROP-USED-ONCE,
 *      a page referenced again, promoted, or not read for the stream
 *      stays; DROP-BEHIND, the last window behind the marker stays.
 *      Counted in ra_dropped; files->ra_drop off (tests): none
 * Memory: read-ahead pages take only free frames (run.c U2, NORECLAIM),
 * enter unreferenced and inactive (CLOCK2 evicts them first unless used),
 * with RA set until their first hit or write (page/page.c
 * lpc_page_ra_used, counted ra_used); eviction of a page still RA counts
 * ra_wasted and sets ra_thrash.
 */
#include <errno.h>

#include "filemap/filemap.h"

/* A2: a stream whose last window is older than this many of the file's
 * stream events (misses, windows) is stale: a marker hit in it starts
 * nothing (its next miss at slot.next still continues it, S1).  So a
 * random reader that hits markers left by an old window does not keep a
 * chain of windows going. */
#define LPC_RA_FRESH (2 * LPC_RA_STREAMS)

/* S3: confirmations that make a candidate a stream (when the miss is not
 * the calling thread's next). */
#define LPC_RA_CONFIRM 2

/* S3: the calling thread's last miss: its file (compared, never followed:
 * a file freed and another allocated at its address costs at most one
 * window) and where that miss ended. */
static _Thread_local struct {
	const struct lpc_file *f;
	uint64_t next;
} ra_last;

void lpc_ra_init(struct lpc_file *f)
{
	pthread_mutex_init(&f->ra_lock, NULL);
	for (unsigned i = 0; i < LPC_RA_STREAMS; i++)
		f->ra_streams[i] = (struct lpc_ra_stream){ .next = UINT64_MAX };
	for (unsigned i = 0; i < LPC_RA_CANDS; i++)
		f->ra_cands[i] = (struct lpc_ra_stream){ .next = UINT64_MAX };
	f->ra_clock = 0;
	atomic_store_explicit(&f->ra_advice, LPC_FADV_NORMAL, memory_order_relaxed);
	atomic_store_explicit(&f->ra_thrash, false, memory_order_relaxed);
	atomic_store_explicit(&f->ra_drop_refaults, 0, memory_order_relaxed);
}

/* A4: room for the stream's next window.  A window takes free frames
 * only (run.c U2), and the allocations wake the reclaimer only once they
 * leave fewer than twice readahead's reserve free: a window that left more
 * (the last refill's room less one window, but not yet that low) woke
 * nobody, and the next marker's window was cut to what was left.  So after
 * every marker's window, with less than a window free above twice the
 * reserve (or less than the room for two windows of every stream while
 * several read ahead: ra_worker.c QS4), a refill for readahead
 * (reclaimer.c ra_target: to `ra_high`, room for the largest window, or
 * the streams' room, sparing the pages read ahead and not used yet), while
 * the reader reads this window.  One relaxed load when the reclaimer is
 * already awake.  Counted (LPC_C_RA_REFILLS, tests only); never for a
 * stream that feeds itself (the caller's slot.fed). */
static void ra_refill(struct lpc_file *f, struct lpc_tcache *t)
{
	struct lpc_pool *c = f->pool;
	uint32_t room = atomic_load_explicit(&c->ra_room, memory_order_relaxed);

	if (room < f->files->ra_max)
		room = f->files->ra_max;
	if (c->wake && atomic_load_explicit(&c->nfree, memory_order_relaxed) <
			       2 * (uint64_t)lpc_pool_ra_reserve(c) + room) {
		lpc_count(t, LPC_C_RA_REFILLS);
		c->wake(c->reclaim_arg, true);
	}
}

/* S1's ramp; a thrashed file halves instead. */
static uint32_t ra_next_size(struct lpc_file *f, uint32_t cur)
{
	uint32_t max = f->files->ra_max;

	if (atomic_load_explicit(&f->ra_thrash, memory_order_relaxed) &&
	    atomic_exchange_explicit(&f->ra_thrash, false, memory_order_relaxed))
		return cur / 2 ? cur / 2 : 1;
	if (cur == 0)
		return f->files->ra_init;
	if (cur < max / 16)
		cur *= 4;
	else
		cur *= 2;
	return cur > max ? max : cur;
}

/* S1/A2's window [start, start + size) for stream s, at most its part of
 * readahead's share (ra_worker.c QS1-QS2: two windows of every active
 * stream fit the share, so no stream's marker window is cut by another's);
 * a window that reaches the end of the file is the stream's last (QS1: it
 * stops counting).  The ramp goes on from the size returned: a stream
 * alone again grows back x2 a window. */
static uint32_t ra_fair(struct lpc_file *f, const struct lpc_ra_stream *s, uint64_t start,
			uint32_t size, bool *split)
{
	uint64_t eof = (atomic_load_explicit(&f->size, memory_order_relaxed) + f->pool->page_size - 1) >>
		       f->page_shift;
	uint32_t cap = lpc_ra_window_cap(f->files, s, start + size >= eof);

	*split = cap != UINT32_MAX;
	return size > cap ? cap : size;
}

/* A4 (ra_worker.c QS4): a split window cut short: the refill's room for
 * two windows of every stream, the share (written on a change only). */
static void ra_room_grow(struct lpc_file *f)
{
	uint32_t share = f->pool->nframes / 4;

	if (atomic_load_explicit(&f->pool->ra_room, memory_order_relaxed) != share)
		atomic_store_explicit(&f->pool->ra_room, share, memory_order_relaxed);
}

/* A5: a stream starts at index: nothing behind it to drop yet.  Context:
 * f->ra_lock. */
static void ra_behind_start(struct lpc_file *f, struct lpc_ra_stream *s, uint64_t index)
{
	s->behind = index;
	s->fed = false;
	s->refaults_seen = atomic_load_explicit(&f->ra_drop_refaults, memory_order_relaxed);
}

/* A5: the pages of stream s to drop behind its reader, which is at index
 * (the marker of its last window, [s->next - s->size, s->next)): those from
 * where its last drop ended (s->behind) to one window behind the marker,
 * when the file (eof pages) is larger than the cache, the cache has
 * shadows (CLOCK2), and no stream of the
 * file read a dropped page again since this stream's last drop (a loop: its
 * pages are left to the evictor, whose refaults tell whether they belong
 * to the working set).  Moves s->behind past them; clears s->fed when a
 * loop is seen or the file fits (A4; ra_fed sets it).  Return: how many,
 * from *from.  Context: f->ra_lock. */
static uint64_t ra_behind(struct lpc_file *f, struct lpc_ra_stream *s, uint64_t index,
			  uint64_t eof, uint64_t *from)
{
	uint64_t end, refaults;

	if (!f->files->ra_drop || !f->pool->ws.shadow || eof <= f->pool->nframes) {
		s->fed = false;
		return 0;
	}
	if (index < s->size)
		return 0;
	end = index - s->size;
	if (end <= s->behind)
		return 0;
	refaults = atomic_load_explicit(&f->ra_drop_refaults, memory_order_relaxed);
	if (refaults != s->refaults_seen) {
		s->refaults_seen = refaults;
		s->behind = end;
		s->fed = false;
		return 0;
	}
	*from = s->behind;
	s->behind = end;
	return end - *from;
}

/* A4-A5: whether the stream whose next window starts at `next` feeds
 * itself: its last drop left at most half of the range it tried cached
 * (pages used again, held or dirty stay; a stream none of whose pages can
 * go asks for refills as before: tests/attack_refill).  Pages of the range
 * that were gone already (evicted first) count for it: the drops behind
 * catch up once the refills for the stream stop.  The slot is found again
 * by its next (the caller's window, not yet cut); one that moved on
 * meanwhile is left alone. */
static void ra_fed(struct lpc_file *f, uint64_t next, bool fed)
{
	pthread_mutex_lock(&f->ra_lock);
	for (unsigned i = 0; i < LPC_RA_STREAMS; i++)
		if (f->ra_streams[i].size && f->ra_streams[i].next == next) {
			f->ra_streams[i].fed = fed;
			break;
		}
	pthread_mutex_unlock(&f->ra_lock);
}

static struct lpc_ra_stream *ra_oldest(struct lpc_ra_stream *v, unsigned n)
{
	struct lpc_ra_stream *o = &v[0];

	for (unsigned i = 1; i < n; i++)
		if (v[i].stamp < o->stamp)
			o = &v[i];
	return o;
}

uint64_t lpc_ra_on_miss(struct lpc_file *f, uint64_t index, uint64_t nr, uint64_t *mark)
{
	int advice = atomic_load_explicit(&f->ra_advice, memory_order_relaxed);
	struct lpc_ra_stream *s = NULL;
	uint64_t ra = 0;
	uint32_t size;
	bool mine, split;

	*mark = UINT64_MAX;
	if (!f->files->ra_max || advice == LPC_FADV_RANDOM)
		return 0;
	/* S3: this thread's previous miss (of any file) ended here. */
	mine = ra_last.f == f && ra_last.next == index;
	ra_last.f = f;
	ra_last.next = index + nr;
	if (pthread_mutex_trylock(&f->ra_lock))
		return 0;
	for (unsigned i = 0; i < LPC_RA_STREAMS; i++)
		if (f->ra_streams[i].size && f->ra_streams[i].next == index) {
			s = &f->ra_streams[i];
			break;
		}
	if (!s && advice != LPC_FADV_SEQUENTIAL) {
		struct lpc_ra_stream *cand = NULL;

		for (unsigned i = 0; i < LPC_RA_CANDS; i++)
			if (f->ra_cands[i].next == index) {
				cand = &f->ra_cands[i];
				break;
			}
		if (!cand && !mine) {
			/* S4: a new candidate. */
			cand = ra_oldest(f->ra_cands, LPC_RA_CANDS);
			cand->seen = 0;
		} else if (cand) {
			/* S3: the file's last miss (any thread's) confirms
			 * at once, an older candidate once more. */
			if (cand->stamp == f->ra_clock)
				mine = true;
			cand->seen++;
		}
		if (!mine && cand->seen < LPC_RA_CONFIRM) {
			cand->next = index + nr;
			cand->stamp = ++f->ra_clock;
			pthread_mutex_unlock(&f->ra_lock);
			return 0;
		}
		/* Confirmed: a stream from here, the candidate's slot free. */
		if (cand)
			*cand = (struct lpc_ra_stream){ .next = UINT64_MAX };
		s = ra_oldest(f->ra_streams, LPC_RA_STREAMS);
		s->size = 0;
		ra_behind_start(f, s, index);
	}
	if (!s) {
		/* SEQUENTIAL: every miss is a stream, at the largest window. */
		s = ra_oldest(f->ra_streams, LPC_RA_STREAMS);
		ra_behind_start(f, s, index);
	}
	/* S1, within the stream's part of the share (ra_worker.c QS2) */
	size = advice == LPC_FADV_SEQUENTIAL ? f->files->ra_max : ra_next_size(f, s->size);
	size = ra_fair(f, s, index, size, &split);
	if (size < nr)
		size = (uint32_t)(nr < UINT32_MAX ? nr : UINT32_MAX);
	if (size > nr) {
		ra = size - nr;
		*mark = index + nr;			/* S2 */
	}
	s->size = size;
	s->next = index + size;
	s->stamp = ++f->ra_clock;
	pthread_mutex_unlock(&f->ra_lock);
	return ra;
}

void lpc_ra_on_mark(struct lpc_file *f, uint64_t index, struct lpc_tcache *t)
{
	struct lpc_ra_stream *s = NULL;
	uint64_t start, got, stop, eof, drop, drop_from = 0;
	unsigned queued;
	uint32_t size;
	bool split, fed, queue_cut = false;

	if (!f->files->ra_max ||
	    atomic_load_explicit(&f->ra_advice, memory_order_relaxed) == LPC_FADV_RANDOM)
		return;
	/* A2: waited for, not tried (the marker is taken: a hit that gave up
	 * here lost the stream's window for good). */
	pthread_mutex_lock(&f->ra_lock);
	lpc_yield_point(LPC_YP_A2);
	for (unsigned i = 0; i < LPC_RA_STREAMS; i++) {		/* A2 */
		struct lpc_ra_stream *x = &f->ra_streams[i];

		if (x->size && index < x->next && index >= x->next - x->size &&
		    f->ra_clock - x->stamp <= LPC_RA_FRESH) {
			s = x;
			break;
		}
	}
	if (!s) {						/* A3 */
		pthread_mutex_unlock(&f->ra_lock);
		return;
	}
	size = atomic_load_explicit(&f->ra_advice, memory_order_relaxed) == LPC_FADV_SEQUENTIAL
		       ? f->files->ra_max
		       : ra_next_size(f, s->size);
	start = s->next;
	eof = (atomic_load_explicit(&f->size, memory_order_acquire) + f->pool->page_size - 1) >>
	      f->page_shift;
	if (start >= eof) {
		/* The stream reached the end of the file: no window (nor
		 * activity: QS1 stops counting it). */
		pthread_mutex_unlock(&f->ra_lock);
		return;
	}
	size = ra_fair(f, s, start, size, &split); /* QS2: its part of the share */
	drop = ra_behind(f, s, index, eof, &drop_from);			/* A5 */
	fed = s->fed;
	s->size = size;
	s->next = start + size;
	s->stamp = ++f->ra_clock;
	pthread_mutex_unlock(&f->ra_lock);
	/* A5 before the window: its frames are then the dropped pages' (this
	 * thread's own, page/alloc.c MR1), so a scan takes none from the
	 * shared list and makes the reclaimer evict nothing. */
	if (drop) {
		uint64_t kept;

		lpc_filemap_drop_behind(f, drop_from, drop_from + drop, t, &kept);
		fed = 2 * kept <= drop;
		ra_fed(f, start + size, fed);
	}
	/* The pages are inserted here, locked; the readahead threads read
	 * them (ra_worker.c Q0-Q2) and this call returns at once.  LOCKED
	 * mode, or no thread to take a run: read here. */
	got = lpc_filemap_ra_window(f, start, start + size, true, true, t, &queued, &stop, NULL,
				    &queue_cut);
	if (stop < start + size) {
		lpc_ra_cut(f, start + size, stop);
		/* QS4: not for a full queue, which frames do not fix (a
		 * scan beside a hot set: windows of many short runs) */
		if (split && !fed && !queue_cut)
			ra_room_grow(f);
	}
	if (got) {
		lpc_count(t, LPC_C_RA_WINDOWS);
		if (queued)
			lpc_count(t, LPC_C_RA_ASYNC);
	}
	if (!fed)
		ra_refill(f, t); /* A4; a stream that drops feeds itself (A5) */
}

void lpc_ra_cut(struct lpc_file *f, uint64_t old_next, uint64_t new_next)
{
	if (pthread_mutex_trylock(&f->ra_lock))
		return;
	for (unsigned i = 0; i < LPC_RA_STREAMS; i++) {
		struct lpc_ra_stream *s = &f->ra_streams[i];

		if (s->size && s->next == old_next) {
			uint64_t start = old_next - s->size;

			/* The window is [start, new_next) now; nothing read
			 * (new_next == start): keep its size, the ramp goes on
			 * from it at the next miss (S1). */
			if (new_next > start)
				s->size = (uint32_t)(new_next - start);
			s->next = new_next;
			break;
		}
	}
	pthread_mutex_unlock(&f->ra_lock);
}

void lpc_ra_evicted_unused(struct lpc_file *f, struct lpc_tcache *t)
{
	if (t)
		lpc_count(t, LPC_C_RA_WASTED);
	if (!atomic_load_explicit(&f->ra_thrash, memory_order_relaxed))
		atomic_store_explicit(&f->ra_thrash, true, memory_order_relaxed);
}

LPC_EXPORT int lpc_fadvise(struct lpc_file *f, uint64_t off, uint64_t len, int advice)
{
	struct lpc_tcache *t;
	uint64_t size, end, first, last;
	int rc;

	/* Past 2^64 only: [off, 2^64) is the range to the end, as
	 * lpc_invalidate takes it (off + len wraps to exactly 0 there). */
	if (!f || (off && len > (uint64_t)0 - off))
		return -EINVAL;
	lpc_debug_file_check(f);
	switch (advice) {
	case LPC_FADV_NORMAL:
	case LPC_FADV_RANDOM:
	case LPC_FADV_SEQUENTIAL:
		atomic_store_explicit(&f->ra_advice, advice, memory_order_relaxed);
		return 0;
	case LPC_FADV_DONTNEED:
		rc = lpc_invalidate(f, off, len);
		return rc < 0 ? rc : 0;
	case LPC_FADV_WILLNEED:
		break;
	default:
		return -EINVAL;
	}
	t = lpc_file_tcache(f);
	if (!t)
		return -ENOMEM;
	size = lpc_filemap_refresh_size(f);
	if (off >= size)
		return 0;
	end = len == 0 || len > size - off ? size : off + len;
	first = off >> f->page_shift;
	last = (end - 1) >> f->page_shift;
	/* Window by window (ra_max pages), each of its absent pages, cached
	 * ones skipped (run.c W1), handed to the readahead threads: WILLNEED
	 * returns once the reads are started; in LOCKED mode, or with no
	 * thread to take a run, read here.  A window that read nothing is not
	 * counted (nor ra_async: no marker started it). */
	while (first <= last) {
		uint64_t n = last - first + 1, max = f->files->ra_max ? f->files->ra_max
								      : f->files->run_max;
		uint64_t stop;
		unsigned queued;

		if (n > max)
			n = max;
		if (lpc_filemap_ra_window(f, first, first + n, false, true, t, &queued, &stop,
					  NULL, NULL))
			lpc_count(t, LPC_C_RA_WINDOWS);
		first += n;
	}
	return 0;
}
