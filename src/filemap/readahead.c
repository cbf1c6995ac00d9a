/* SPDX-License-Identifier: MIT */
/*
 * readahead.c - on-demand readahead after the kernel's (mm/readahead.c):
 * sequential streams detected per file, a window that ramps up, and an
 * asynchronous marker page whose hit reads the next window.
 *
 * Streams.  A file keeps LPC_RA_STREAMS stream slots (several readers of one
 * file scanning different parts each keep their own), under f->ra_lock,
 * which is only ever tried (pthread_mutex_trylock): a miss or a marker hit
 * that finds it taken reads no window this time, so misses never wait for
 * each other here and the hit path never sees the lock.
 *   S1 a miss of pages [i, i + nr) that starts where a slot expects its next
 *      window (slot.next == i) continues that stream: a candidate (size 0:
 *      one earlier miss ended at i) becomes a stream with the first window,
 *      ra_init pages; a stream grows its window ×4 while under 1/16 of
 *      ra_max, then ×2, up to ra_max (the kernel's get_next_ra_size); a
 *      window shrinks by half instead when a page it read ahead was evicted
 *      unused since (ra_thrash: the cache cannot hold what is read ahead)
 *   S2 the window is read with the miss, in the same I/O (run.c): the nr
 *      pages asked for and the rest of the window after them; the first
 *      page past what was asked for carries RA_MARK; the slot expects its
 *      next window at the window's end
 *   S3 any other miss starts no readahead: it takes the oldest slot as a
 *      candidate expecting [i + nr, ...).  So random access never reads
 *      ahead (a candidate is confirmed only by a miss exactly where it
 *      ends), strided or backward access neither
 * Marker (asynchronous windows).
 *   A1 a hit on a page with RA_MARK (lpc_filemap_get_pages; the optimistic
 *      and pin fast paths refuse such pages, at no cost: the same flag test)
 *      clears it with an atomic and: exactly one thread sees it set
 *   A2 that thread finds the slot whose window the marker is in (slot.next
 *      is past it, and the marker is the slot's), grows the window (S1's
 *      ramp), reads it from slot.next (only its absent pages: run.c with nr
 *      0), putting RA_MARK on its first page, so that a reader that keeps
 *      going hits the next marker one window before the data runs out
 *   A3 no slot has the marker (the table moved on): nothing; the stream's
 *      next miss (S1 at slot.next, or S3) picks it up again
 * A2's window is read by the cache's readahead thread (ra_worker.c), one I/O
 * per window, so the reader that hit the marker returns at once and an
 * established scanner finds the next window read or in flight (its pages
 * locked: it waits on the page, M6, not on the submitter); when the thread's
 * queue is full or it cannot be started, the marker's reader reads the
 * window itself.
 *
 * Memory: read-ahead pages take only free frames (run.c U2, NORECLAIM),
 * enter unreferenced and inactive (CLOCK2 evicts them first unless used),
 * with RA set until their first hit (page/page.c lpc_page_ra_used, counted
 * ra_used);
 * eviction of a page still RA counts ra_wasted and sets ra_thrash.
 */
#include <errno.h>

#include "filemap/filemap.h"

void lpc_ra_init(struct lpc_file *f)
{
	pthread_mutex_init(&f->ra_lock, NULL);
	for (unsigned i = 0; i < LPC_RA_STREAMS; i++) {
		f->ra_streams[i].next = UINT64_MAX;
		f->ra_streams[i].mark = UINT64_MAX;
		f->ra_streams[i].stamp = 0;
		f->ra_streams[i].size = 0;
	}
	f->ra_clock = 0;
	atomic_store_explicit(&f->ra_advice, LPC_FADV_NORMAL, memory_order_relaxed);
	atomic_store_explicit(&f->ra_thrash, false, memory_order_relaxed);
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

static struct lpc_ra_stream *ra_oldest(struct lpc_file *f)
{
	struct lpc_ra_stream *o = &f->ra_streams[0];

	for (unsigned i = 1; i < LPC_RA_STREAMS; i++)
		if (f->ra_streams[i].stamp < o->stamp)
			o = &f->ra_streams[i];
	return o;
}

uint64_t lpc_ra_on_miss(struct lpc_file *f, uint64_t index, uint64_t nr, uint64_t *mark)
{
	int advice = atomic_load_explicit(&f->ra_advice, memory_order_relaxed);
	struct lpc_ra_stream *s = NULL;
	uint64_t ra = 0;
	uint32_t size;

	*mark = UINT64_MAX;
	if (!f->files->ra_max || advice == LPC_FADV_RANDOM)
		return 0;
	if (pthread_mutex_trylock(&f->ra_lock))
		return 0;
	for (unsigned i = 0; i < LPC_RA_STREAMS; i++)
		if (f->ra_streams[i].next == index) {
			s = &f->ra_streams[i];
			break;
		}
	if (!s && advice != LPC_FADV_SEQUENTIAL) {
		/* S3: a candidate. */
		s = ra_oldest(f);
		s->next = index + nr;
		s->mark = UINT64_MAX;
		s->size = 0;
		s->stamp = ++f->ra_clock;
		pthread_mutex_unlock(&f->ra_lock);
		return 0;
	}
	if (!s) {
		/* SEQUENTIAL: every miss is a stream, at the largest window. */
		s = ra_oldest(f);
		s->size = f->files->ra_max;
	}
	/* S1 */
	size = advice == LPC_FADV_SEQUENTIAL ? f->files->ra_max : ra_next_size(f, s->size);
	s->size = size;
	if (size > nr) {
		ra = size - nr;
		*mark = index + nr;			/* S2 */
	}
	s->next = index + nr + ra;
	s->mark = *mark;
	s->stamp = ++f->ra_clock;
	pthread_mutex_unlock(&f->ra_lock);
	return ra;
}

void lpc_ra_on_mark(struct lpc_file *f, uint64_t index, struct lpc_tcache *t)
{
	struct lpc_ra_stream *s = NULL;
	uint64_t start, mark;
	uint32_t size;

	if (!f->files->ra_max ||
	    atomic_load_explicit(&f->ra_advice, memory_order_relaxed) == LPC_FADV_RANDOM)
		return;
	if (pthread_mutex_trylock(&f->ra_lock))
		return;
	for (unsigned i = 0; i < LPC_RA_STREAMS; i++)		/* A2 */
		if (f->ra_streams[i].mark == index) {
			s = &f->ra_streams[i];
			break;
		}
	if (!s) {						/* A3 */
		pthread_mutex_unlock(&f->ra_lock);
		return;
	}
	size = atomic_load_explicit(&f->ra_advice, memory_order_relaxed) == LPC_FADV_SEQUENTIAL
		       ? f->files->ra_max
		       : ra_next_size(f, s->size);
	start = s->next;
	mark = start;
	if (start >= (atomic_load_explicit(&f->size, memory_order_acquire) + f->pool->page_size - 1) >>
			     f->page_shift) {
		/* The stream reached the end of the file: no window. */
		s->mark = UINT64_MAX;
		pthread_mutex_unlock(&f->ra_lock);
		return;
	}
	s->size = size;
	s->next = start + size;
	s->mark = mark;
	s->stamp = ++f->ra_clock;
	pthread_mutex_unlock(&f->ra_lock);
	lpc_count(t, LPC_C_RA_WINDOWS);
	lpc_count(t, LPC_C_RA_ASYNC);
	/* The pages are inserted here, locked; the readahead thread reads
	 * them (ra_worker.c Q0-Q2) and this call returns at once.  LOCKED
	 * mode, or a thread that cannot take it: the window is read here. */
	if (f->locked_lookup) {
		(void)lpc_filemap_read_run(f, start, 0, size, mark, t, 0, NULL);
	} else {
		struct lpc_ra_job *j = lpc_filemap_ra_start(f, start, size, mark, t);

		if (j && !lpc_ra_submit(j))
			lpc_filemap_ra_finish(j, t);
	}
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
	/* Window by window, each from its first absent page (run.c, nr 0). */
	while (first <= last) {
		uint64_t n = last - first + 1;

		if (n > f->files->run_max)
			n = f->files->run_max;
		lpc_count(t, LPC_C_RA_WINDOWS);
		(void)lpc_filemap_read_run(f, first, 0, n, UINT64_MAX, t, 0, NULL);
		first += n;
	}
	return 0;
}
