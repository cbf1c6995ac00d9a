/* SPDX-License-Identifier: MIT */
/*
 * stream.c - many misses in flight from one thread: lpc_page_get_batch (the
 * pages of an array of indices) and the read stream (lpc_stream_*: the pages
 * of a list a callback produces, read ahead of the consumer).
 *
 * Neither has a reader of its own.  Both hand the absent pages they will
 * need to readahead's window reader (run.c W1-W2: each run of adjacent
 * absent pages inserted LOCKED in one call, U1-U3, then one I/O per run
 * made by the readahead threads, ra_worker.c Q0-Q2, or here), and then get
 * each page as lpc_page_get does (miss.c M6: a page in flight is waited on,
 * a run still queued is read by the waiter itself, Q6; a page whose run
 * failed or was dropped is read again alone).  So every page keeps the miss
 * path's guarantees (C.1-C.3: one read per page however many threads want
 * it, errors only from a read of that page alone, nothing past the end of
 * the file, truncates and invalidates met as any miss meets them), and the
 * frames a batch or stream locks for reads are readahead's, within its
 * share (Q5: the queued and running runs hold at most a quarter of the
 * frames; free frames only, above the pool's reserve, run.c U2): a batch or
 * a stream never reclaims for its look-ahead, never makes another thread
 * wait for a frame, and reads less when it cannot have one.
 *
 * The batch, chunk by chunk (at most LPC_BATCH_CHUNK entries):
 *   GB1 probe every entry (lpc_filemap_present: no reference, no lock in
 *      lockless mode); the absent indices are sorted and deduplicated
 *   GB2 adjacent absent indices make one run; each run is a window handed to
 *      lpc_filemap_ra_window, asynchronous (the readahead threads; LOCKED
 *      mode reads it here, U3's rwlock being the reader's)
 *   GB3 the runs whose window ended early (no queue slot or no share, Q5)
 *      are offered to the window reader again, read here
 *      (lpc_filemap_ra_window_batch): still through Q5's page reservation,
 *      so this thread reads only the pages it is granted (a full queue
 *      leaves the share to it; a share taken grants nothing, and the rest
 *      is left to GB4's per-page misses, each a demand read of one frame,
 *      as lpc_page_get's), after every run was handed out, so this
 *      thread's reads overlap the threads'; and all of them with one
 *      batched read (run.c runs_finish: lpc_io_readv_batch, every run in
 *      one io_uring submission on this thread's ring, LPC_RUN_BATCH runs
 *      at a time), not one after another; each run's pages are unlocked,
 *      and its grant given back, as soon as its own request completes
 *      (run.c runs_end, io.c RQ3), so another thread's reader of one run
 *      never waits for another run of the batch, and a run short of share
 *      reads the batch first rather than refusing itself (run.c
 *      ra_window).  LOCKED mode reads them one by
 *      one (U3's rwlock is held per run), as does a backend that would
 *      read a batch run after run (sync: lpc_io_batches).  Reading a refused run unreserved would
 *      lock up to a chunk's frames beyond the share (a batch is not
 *      demand for its later entries until GB4 reaches them)
 *   GB4 each entry in array order: lpc_filemap_get_page (hit, or M6's wait,
 *      or a miss of its own for a page that was dropped, evicted, or never
 *      inserted: no free frame); its page or its own error
 *
 * The stream keeps a ring of the entries the callback produced and the
 * consumer has not taken (at most max_distance).  Only the thread that
 * calls lpc_stream_next (one at a time: a stream is not shared) touches it:
 * the stream has no state other threads read, and what is in flight is the
 * readahead threads' jobs, under ra_worker.c's protocol.  Steps:
 *   ST1 fill: while the ring holds fewer than `distance` entries and the
 *      callback has not ended, take its next entry; an entry whose page is
 *      absent *claims* a frame (claimed: the look-ahead frames the stream
 *      answers for), and the fill stops before an absent entry would make
 *      the claims exceed max_pages (the frame bound, rule STREAM-BOUND)
 *   ST2 merge: an absent entry that continues the pending run (its index the
 *      run's end) extends it; any other closes the run, which is handed to
 *      lpc_filemap_ra_window (GB2's way) and a new one starts; the pending
 *      run is handed out when it reaches a quarter of the distance, when it
 *      holds the ring's head (the consumer would wait on it), or when the
 *      list ended; else it waits for the next fill, which may extend it
 *      (so a sequential list is read in runs, not page by page)
 *   ST3 next: the head entry leaves the ring (rule STREAM-TWICE: an entry is
 *      handed out once) and its claim with it; its page is got as GB4 gets
 *      one.  Before that, its page's state decides the distance: not yet
 *      UPTODATE (the consumer will wait) doubles it up to max_distance; a
 *      page read ahead and ready leaves it; an entry that was cached when
 *      the fill saw it (no claim: no I/O) counts a hit, and `distance`
 *      hits in a row (the look-ahead read nothing for a whole distance)
 *      halve it, down to 1.  Any other entry ends the row of hits, so a
 *      list that hits in part keeps the distance its misses earned
 *   ST4 close: frees the ring.  The stream holds no page reference and no
 *      page lock: the runs in flight are the readahead threads' jobs (their
 *      pages are unlocked by the thread that reads them, Q2, and the last
 *      close of the file waits for them, Q3), so a close with reads in
 *      flight leaves them to finish, and their pages stay cached (RA: the
 *      first evicted when nobody uses them).
 * So the stream adds no protocol between threads (no Promela model of its
 * own): what crosses threads is the readahead jobs (ra_worker.c Q0-Q7, model
 * ra_pool.pml) and the pages (miss.c M1-M6, model spec_get.pml).
 * The frames the stream may have locked or filled ahead of its consumer are
 * at most `claimed` <= max_pages; the pages it has handed out are the
 * consumer's (one reference each, put by the consumer).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "filemap/stream.h"

/* Entries a batch probes and issues at once (GB1-GB3): on the stack. */
#define LPC_BATCH_CHUNK 64

/* The stream's defaults and limits. */
#define LPC_STREAM_DISTANCE 64
#define LPC_STREAM_MAX_DISTANCE 4096

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* GB2 for one run [s, e): handed to the readahead threads (or read here in
 * LOCKED mode, and with !async, GB3), within the share (Q5).  Return: where the window ended early (e: it did not). */
static uint64_t issue_run(struct lpc_file *f, struct lpc_tcache *t, uint64_t s, uint64_t e,
			  bool async)
{
	uint64_t stop;
	unsigned queued;

	(void)lpc_filemap_ra_window(f, s, e, false, async, t, &queued, &stop);
	return stop;
}

/* GB1-GB3 on v[0..n) (absent indices, any order, duplicates allowed;
 * sorted in place). */
static void issue(struct lpc_file *f, struct lpc_tcache *t, uint64_t *v, unsigned n)
{
	uint64_t left_s[LPC_BATCH_CHUNK], left_e[LPC_BATCH_CHUNK], stop;
	unsigned nleft = 0, i = 0;

	if (n > 1)
		qsort(v, n, sizeof(v[0]), cmp_u64);
	while (i < n) {					/* GB2 */
		uint64_t s = v[i], e = s + 1;

		while (++i < n && v[i] <= e)
			if (v[i] == e)
				e++;
		stop = issue_run(f, t, s, e, true);
		if (stop < e) {
			left_s[nleft] = stop;
			left_e[nleft++] = e;
		}
	}
	if (nleft) {						/* GB3 */
		struct lpc_filemap_batch b;

		lpc_filemap_batch_init(&b, f);
		for (unsigned k = 0; k < nleft; k++)
			(void)lpc_filemap_ra_window_batch(&b, left_s[k], left_e[k], t, &stop);
		lpc_filemap_batch_flush(&b, t);
	}
}

LPC_EXPORT int lpc_page_get_batch(struct lpc_file *f, const uint64_t *indices, size_t n,
				  unsigned flags, struct lpc_page **pages, int *errs)
{
	struct lpc_tcache *t;
	uint64_t v[LPC_BATCH_CHUNK];
	int got = 0;

	if (!f || (n && (!indices || !pages || !errs)) || flags || n > INT32_MAX)
		return -EINVAL;
	lpc_debug_file_check(f);
	t = lpc_file_tcache(f);
	if (!t)
		return -ENOMEM;
	for (size_t base = 0; base < n; base += LPC_BATCH_CHUNK) {
		size_t m = n - base < LPC_BATCH_CHUNK ? n - base : LPC_BATCH_CHUNK;
		unsigned nv = 0;

		for (size_t i = 0; i < m; i++)				/* GB1 */
			if (!lpc_filemap_present(f, indices[base + i]))
				v[nv++] = indices[base + i];
		if (nv)
			issue(f, t, v, nv);
		for (size_t i = base; i < base + m; i++) {		/* GB4 */
			errs[i] = lpc_filemap_get_page(f, indices[i], t, 0, &pages[i]);
			if (errs[i])
				pages[i] = NULL;
			else
				got++;
		}
	}
	return got;
}

#if LPC_DEBUG
#define stream_check_bound(s)                                                            \
	lpc_debug_check((s)->claimed <= (s)->max_pages && (s)->count <= (s)->max_distance,  \
			"STREAM-BOUND", NULL,                                            \
			"stream %p claims %u frames (bound %u) with %u entries (distance %u)", \
			(void *)(s), (s)->claimed, (s)->max_pages, (s)->count,           \
			(s)->max_distance)
#else
#define stream_check_bound(s) ((void)0)
#endif

/* ST2: the pending run handed out. */
static void stream_flush(struct lpc_stream *s, struct lpc_tcache *t)
{
	if (s->run_s == s->run_e)
		return;
	(void)issue_run(s->f, t, s->run_s, s->run_e, true);
	s->run_s = s->run_e = 0;
	s->pend = 0;
}

/* The callback's (or the array's) next entry.  Return: 1, or 0 at the end. */
static int stream_produce(struct lpc_stream *s, uint64_t *index, void **user)
{
	int rc;

	if (!s->cb) {
		if (s->pos >= s->n)
			return 0;
		*index = s->indices[s->pos];
		*user = s->users ? s->users[s->pos] : NULL;
		s->pos++;
		return 1;
	}
	*user = NULL;
	rc = s->cb(s->arg, index, user);
	if (rc < 0)
		s->cb_err = rc;
	return rc > 0;
}

/* ST1-ST2. */
static void stream_fill(struct lpc_stream *s, struct lpc_tcache *t)
{
	while (!s->ended && s->count < s->distance) {
		struct lpc_stream_ent *e;
		uint64_t index;
		void *user;
		bool absent;

		if (s->claimed >= s->max_pages)
			break; /* the frame bound (ST1): an absent entry would pass it */
		if (!stream_produce(s, &index, &user)) {
			s->ended = true;
			break;
		}
		e = &s->ring[(s->head + s->count) % s->max_distance];
		e->index = index;
		e->user = user;
		e->flags = 0;
		s->count++;
		absent = !lpc_filemap_present(s->f, index) &&
			 !(index >= s->run_s && index < s->run_e);
		if (!absent) {
			stream_check_bound(s);
			continue;
		}
		e->flags = LPC_STREAM_CLAIMED;
		s->claimed++;
		stream_check_bound(s);
		if (s->run_s != s->run_e && index != s->run_e)
			stream_flush(s, t);				/* ST2 */
		if (s->run_s == s->run_e) {
			s->run_s = s->run_e = index;
			s->run_first = s->taken + s->count - 1;
		}
		s->run_e++;
		s->pend++;
		if (s->pend >= s->distance / 4 || s->run_first <= s->taken)
			stream_flush(s, t);
	}
	/* The fill stopped (the ring at its distance, or the bound): the
	 * pending run waits for more adjacent entries (the next fill, after a
	 * page is taken, may extend it) while look-ahead that is not its own
	 * lies before it; it goes now when it holds the head (the consumer
	 * is about to wait on it) or the list ended. */
	if (s->run_first <= s->taken || s->ended)
		stream_flush(s, t);
}

LPC_EXPORT int lpc_stream_open(struct lpc_file *f, lpc_stream_cb *cb, void *arg,
			       const struct lpc_stream_opts *opts, struct lpc_stream **out)
{
	struct lpc_stream_opts o = { 0 };
	struct lpc_stream *s;
	uint32_t share;

	if (!f || !out)
		return -EINVAL;
	if (opts)
		o = *opts;
	if (!cb && o.n && !o.indices)
		return -EINVAL;
	if (o.max_distance > LPC_STREAM_MAX_DISTANCE)
		return -EINVAL;
	lpc_debug_file_check(f);
	if (!o.max_distance)
		o.max_distance = LPC_STREAM_DISTANCE;
	if (!o.max_pages || o.max_pages > o.max_distance)
		o.max_pages = o.max_distance;
	/* Readahead's share (ra_worker.c Q5): a stream alone never claims
	 * more than a quarter of the frames. */
	share = (uint32_t)(f->pool->nframes / 4 ? f->pool->nframes / 4 : 1);
	if (o.max_pages > share)
		o.max_pages = share;
	s = calloc(1, sizeof(*s) + o.max_distance * sizeof(s->ring[0]));
	if (!s)
		return -ENOMEM;
	s->f = f;
	s->cb = cb;
	s->arg = arg;
	s->indices = o.indices;
	s->users = o.users;
	s->n = cb ? 0 : o.n;
	s->max_distance = o.max_distance;
	s->max_pages = o.max_pages;
	s->distance = 1;
	*out = s;
	return 0;
}

LPC_EXPORT int lpc_stream_next(struct lpc_stream *s, struct lpc_page **page, void **user)
{
	struct lpc_tcache *t;
	struct lpc_stream_ent *e;
	struct lpc_page *p;
	bool ready = false;
	int rc;

	if (!s || !page)
		return -EINVAL;
	*page = NULL;
	if (user)
		*user = NULL;
	lpc_debug_file_check(s->f);
	t = lpc_file_tcache(s->f);
	if (!t)
		return -ENOMEM;
	stream_fill(s, t);						/* ST1-ST2 */
	stream_check_bound(s);
	if (s->count == 0) {
		rc = s->cb_err; /* the callback's error, once, then the end */
		s->cb_err = 0;
		return rc;
	}
	e = &s->ring[s->head];						/* ST3 */
	lpc_debug_check(!(e->flags & LPC_STREAM_HANDED), "STREAM-TWICE", NULL,
			"stream %p hands out its entry for index %llu a second time", (void *)s,
			(unsigned long long)e->index);
	e->flags |= LPC_STREAM_HANDED;
	s->head = (s->head + 1) % s->max_distance;
	s->count--;
	s->taken++;
	if (e->flags & LPC_STREAM_CLAIMED)
		s->claimed--;
	/* The distance: from the page's state now (no reference: descriptors
	 * are never freed, a stale answer only tunes the look-ahead). */
	if (s->f->locked_lookup) {
		ready = !(e->flags & LPC_STREAM_CLAIMED);
	} else {
		lpc_rcu_read_lock();
		p = lpc_radix_lookup(&s->f->tree, e->index, NULL);
		ready = p && (lpc_page_flags(p) & LPC_PG_UPTODATE);
		lpc_rcu_read_unlock();
	}
	if (!ready) {
		s->distance = s->distance * 2 > s->max_distance ? s->max_distance
								  : s->distance * 2;
		s->hits = 0;
	} else if (e->flags & LPC_STREAM_CLAIMED) {
		s->hits = 0; /* read ahead and ready: the look-ahead pays */
	} else if (++s->hits >= s->distance) {
		/* A whole distance of entries hit in a row: the look-ahead
		 * read nothing for them, halve it.  Shrinking on every hit
		 * (one smaller per cached entry) undid each doubling at the
		 * next cached entry of a list that half hits: 1, 2, 1, 2, so
		 * each cold page was issued one entry before it was taken
		 * and the consumer waited for every read. */
		s->distance = s->distance > 1 ? s->distance / 2 : 1;
		s->hits = 0;
	}
	if (user)
		*user = e->user;
	rc = lpc_filemap_get_page(s->f, e->index, t, 0, page);
	if (rc) {
		*page = NULL;
		return rc;
	}
	return 1;
}

LPC_EXPORT void lpc_stream_close(struct lpc_stream *s)
{
	free(s);							/* ST4 */
}
