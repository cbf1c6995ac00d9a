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
 * The batch:
 *   GB0 the plan, once per call: the array's distinct indices sorted, each
 *      with a state (OPEN: not looked at; OWN: the current chunk's, absent;
 *      DONE: handed out in a run, or found cached), so that adjacency is
 *      found across the whole array, whatever the order of its entries (0,
 *      2, 4, ..., 1, 3, ... is one run).  On the stack up to LPC_BATCH_CHUNK
 *      entries, else one malloc of 9 bytes an entry, freed at return; when
 *      that fails the call goes on without a plan (never fails for it):
 *      GB1-GB3 per chunk alone, adjacency found within a chunk only.
 *   Then chunk by chunk (LPC_BATCH_CHUNK entries in array order), so the
 *   reads go out a chunk ahead of GB4, not the whole array at once:
 *   GB1 probe every entry of the chunk still OPEN (lpc_filemap_present: no
 *      reference, no lock in lockless mode): absent is OWN, cached DONE
 *   GB2 each OWN index, ascending, starts a run, extended over the plan's
 *      adjacent indices both ways: the chunk's OWN ones, and OPEN ones of
 *      later chunks found absent, the latter at most min(run_max, a quarter
 *      of the frames) pages per chunk (so a chunk pulls forward at most one
 *      request's worth, within the share, of what GB4 reaches later; a
 *      sorted array is read in runs of up to that plus a chunk); every index
 *      of a run is DONE, probed at most once in the call.  Each run is a
 *      window handed to lpc_filemap_ra_window, asynchronous (the readahead
 *      threads; LOCKED mode reads it here, U3's rwlock being the reader's)
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
 * Counted (lpc_stats(3), count_run): each call with entries one batch;
 * each window GB2 or GB3 hands out (ST2's, for a stream) that inserted
 * pages one run, of the pages it inserted.
 *
 * The stream keeps a ring of the entries the callback produced and the
 * consumer has not taken (at most max_distance).  Only the thread that
 * calls lpc_stream_next (one at a time: a stream is not shared) touches it;
 * what crosses threads is the readahead threads' jobs (ra_worker.c's
 * protocol), the page references the stream holds (ST4) and two counters
 * (ST5, ST6).  Steps:
 *   ST1 fill: while the ring holds fewer than `distance` entries and the
 *      callback has not ended, take its next entry.  An entry *claims* a
 *      frame (claimed: the look-ahead frames the stream answers for) when
 *      its page is absent (the stream reads it: ABSENT) or when the stream
 *      holds its cached page (ST4); the fill stops before an entry would
 *      make the claims exceed max_pages (the frame bound, rule
 *      STREAM-BOUND).  A cached page with no credit left (ST6) is neither
 *      held nor claimed; an index already in the pending run claims
 *      nothing (the run's own entry holds its page)
 *   ST2 merge: an absent entry that continues the pending run at either end
 *      (its index the run's end: forwards; the one before its start:
 *      backwards, a descending list) extends it; any other closes the run,
 *      which is handed to lpc_filemap_ra_window (GB2's way, its pages held
 *      from their insert: ST4 b) and a new one
 *      starts; the pending run is handed out when it reaches a quarter of
 *      the distance, when it holds the ring's head (the consumer would wait
 *      on it), or when the list ended; else it waits for the next fill,
 *      which may extend it (so a sequential list is read in runs, not page
 *      by page, in either direction).  Runs are merged in list order only:
 *      an index adjacent to a run already handed out starts a new one
 *   ST3 next: the head entry leaves the ring (rule STREAM-TWICE: an entry is
 *      handed out once) and its claim with it; its page is got as GB4 gets
 *      one.  Before that, its page's state decides the distance: not yet
 *      UPTODATE (the consumer will wait) doubles it up to max_distance; a
 *      page read ahead and ready leaves it; an entry that was cached when
 *      the fill saw it (no I/O) counts a hit, and `distance` hits in a row
 *      (the look-ahead read nothing for a whole distance) halve it, down
 *      to 1.  Any other entry ends the row of hits, so a list that hits in
 *      part keeps the distance its misses earned
 *   ST4 the references: the stream holds one reference on each claimed
 *      entry's page, so that eviction (evict.c E1/E4: ref 1 only) never
 *      takes look-ahead its consumer is about to use:
 *        a) a cached entry: from the fill's lookup (lpc_filemap_lookup: a
 *           reference whatever the page's state) to its hand-out;
 *        b) an absent entry: from its page's insert to its hand-out.
 *           ST2's window takes the reference on each page it inserts
 *           while the page is LOCKED and only this thread's, after U3
 *           and before W2 hands the run to a reader (run.c W2: `held`),
 *           so no read of it can have completed and no evictor taken it
 *           (E4: ref 1 only) before the stream holds it: there is no
 *           window between the hand-out and the hold.  (Taken by a lookup
 *           after the hand-out, as before, the run's read could complete
 *           and eviction take the page, read ahead and so unreferenced
 *           and inactive, in between: the stream held nothing and the
 *           consumer read the page twice; regress_stream_hold.c.)  A page
 *           of the run the window did not insert: another thread's,
 *           cached or in flight, looked up after the hand-out as at a);
 *           none (no frame or share): none held, the consumer reads it
 *           itself.  Beyond credit (ST6) the reference is put back at
 *           once.  The reader's protocol is unchanged: a reference on a
 *           LOCKED page is what any waiter of M6 holds; a failed or
 *           dropped run's pages are removed with the holders keeping
 *           them (lpc_filemap_delete), and c) reads them again;
 *        c) the hand-out: lpc_filemap_get_page gives the consumer its own
 *           reference (a hit on the held page while it is f's page at that
 *           index and UPTODATE; otherwise the miss path: a page truncated
 *           or removed is read again, or -ENXIO past the end, with
 *           lpc_page_get's guarantees), and only then is the stream's put,
 *           so the page is never unreferenced in between;
 *        d) a held page is never evicted; lpc_invalidate skips it (ST5);
 *           lpc_truncate removes it past the end as any holder's (the
 *           stream's put then frees it) and zeroes the cut page's tail in
 *           place, which c) hands out;
 *        e) the stream's put is lpc_page_release: the index's own
 *           reference keeps every page still cached.
 *      held counts the entries with a page (rule STREAM-HELD: each also
 *      claims; so held <= claimed <= max_pages)
 *   ST5 invalidate: lpc_invalidate skips a page the stream holds, which
 *      must not leave the consumer a page older than an invalidate that
 *      returned before lpc_stream_next was called.  lpc_invalidate adds
 *      one to f->inval_seq after its walk (release, remove.c); each
 *      lpc_stream_next, after its fill (whose callback may invalidate) and
 *      before the hand-out, loads it (acquire): changed since the stream
 *      last looked, every held page is put and offered to lpc_invalidate
 *      again (dropped unless dirty, locked or held by another; over-broad,
 *      the range not being known: re-reads of look-ahead only), and the
 *      count loaded after those is the one seen.  An invalidate that
 *      returned before the call bumped the count before this load (the
 *      caller's ordering): seen, unless an earlier load saw it already;
 *      a load takes in a new count only with no page held (the open's, or
 *      the one after the puts), and its acquire puts the whole walk before
 *      every reference taken since, which the walk never skipped for
 *   ST6 credit: the pages all streams of the cache hold are at most a
 *      quarter of its frames (files->stream_held, readahead's share's
 *      size, beside it: readahead's in-flight quarter and the streams'
 *      held quarter leave demand at least half the frames, held pages
 *      being unevictable).  A stream takes credit LPC_STREAM_CREDIT pages
 *      at a time (one CAS, relaxed: a count, it orders nothing; never past
 *      the quarter), holds a page only within its credit (else ST1/ST4's
 *      "none held"), gives back what exceeds held + 2 LPC_STREAM_CREDIT
 *      down to held + LPC_STREAM_CREDIT, all at the end of its list and at
 *      close.  Short of credit a stream reads as it did without holds: it
 *      never waits and never makes another thread wait
 *   ST7 close: puts every held reference (ST4 e: the pages stay cached; one
 *      in flight stays LOCKED, the reader's, and its read completes into
 *      the cache: ra_worker.c Q2, the last close of the file waits for it,
 *      Q3), gives back its credit, frees the ring.  The runs in flight are
 *      the readahead threads' jobs, so a close with reads in flight leaves
 *      them to finish.
 * What crosses threads is the readahead jobs (ra_worker.c Q0-Q7, model
 * ra_pool.pml), the pages (miss.c M1-M6, model spec_get.pml: the stream's
 * references are a holder's like lpc_page_get's, taken by the same
 * lookup, or on its own run's pages by a plain increment before any other
 * thread can reach them but through the index, where the run's reference
 * keeps them from being frozen: ST4 b) and the two counters above (ST5:
 * one writer's release bump, one reader's acquire load; ST6: a bounded CAS
 * count): no Promela model of the stream's own.  The frames the stream may
 * have locked, filled or held ahead of its consumer are at most `claimed`
 * <= max_pages; the pages it has handed out are the consumer's (one
 * reference each, put by the consumer).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "filemap/stream.h"

/* Entries a batch probes and issues at once (GB1-GB3), and the largest
 * array whose plan (GB0) is on the stack. */
#define LPC_BATCH_CHUNK 64

/* The stream's defaults and limits. */
#define LPC_STREAM_DISTANCE 64
#define LPC_STREAM_MAX_DISTANCE 4096
/* Credit a stream takes from the cache's stream_held at once (ST6). */
#define LPC_STREAM_CREDIT 16

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* lpc_stats' batch_runs and batch_pages (stream_runs and stream_pages for
 * a stream): a window that inserted pages is one run read, one read I/O
 * (unless another thread cached a page inside it meanwhile, which splits
 * it: run.c W1), of the pages it inserted. */
static void count_run(struct lpc_tcache *t, bool stream, uint64_t pages)
{
	if (!pages)
		return;
	lpc_count(t, stream ? LPC_C_STREAM_RUNS : LPC_C_BATCH_RUNS);
	lpc_count_add(t, stream ? LPC_C_STREAM_PAGES : LPC_C_BATCH_PAGES, pages);
}

/* GB2 (and ST2: `held`, a stream's) for one run [s, e): handed to the
 * readahead threads (or read here in LOCKED mode), within the share (Q5);
 * held (ST4 b): held[k] gets the stream's reference on page s + k if the
 * window inserted it (run.c W2).  Return: where the window ended early (e:
 * it did not). */
static uint64_t issue_run(struct lpc_file *f, struct lpc_tcache *t, uint64_t s, uint64_t e,
			  struct lpc_page **held)
{
	uint64_t stop;
	unsigned queued;

	count_run(t, held != NULL,
		  lpc_filemap_ra_window(f, s, e, false, true, t, &queued, &stop, held, NULL));
	return stop;
}

/* GB3 on the runs whose window ended early: [left_s[k], left_e[k]). */
static void issue_left(struct lpc_file *f, struct lpc_tcache *t, const uint64_t *left_s,
		       const uint64_t *left_e, unsigned nleft)
{
	struct lpc_filemap_batch b;
	uint64_t stop;

	if (!nleft)
		return;
	lpc_filemap_batch_init(&b, f);
	for (unsigned k = 0; k < nleft; k++)
		count_run(t, false, lpc_filemap_ra_window_batch(&b, left_s[k], left_e[k], t, &stop));
	lpc_filemap_batch_flush(&b, t);
}

/* GB1-GB3 of one chunk without GB0's plan (its allocation failed): on
 * v[0..n) (absent indices, any order, duplicates allowed; sorted in place),
 * so adjacency is found within the chunk only. */
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
		stop = issue_run(f, t, s, e, NULL);
		if (stop < e) {
			left_s[nleft] = stop;
			left_e[nleft++] = e;
		}
	}
	issue_left(f, t, left_s, left_e, nleft);			/* GB3 */
}

/* GB0's plan: the array's distinct indices, ascending, and each one's state. */
enum { GB_OPEN, GB_OWN, GB_PULLED, GB_DONE };
struct gb_plan {
	uint64_t *u;
	uint8_t *st;
	size_t nu;
	uint64_t budget; /* GB2: pages of later chunks this chunk may still take */
	uint64_t cap;    /* GB2: pages of one run, its own and pulled ones */
};

/* The slot of index x in the plan (every entry of the array has one). */
static size_t plan_find(const struct gb_plan *pl, uint64_t x)
{
	size_t lo = 0, hi = pl->nu;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (pl->u[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* GB2: whether slot k joins the run being built: this chunk's own absent
 * entries always (then DONE); a later chunk's entry if it is absent and the
 * chunk's budget allows (then PULLED until the run is issued; a cached one
 * is DONE, never probed again). */
static bool plan_take(struct lpc_file *f, struct gb_plan *pl, size_t k)
{
	if (pl->st[k] == GB_OWN) {
		pl->st[k] = GB_DONE;
		return true;
	}
	if (pl->st[k] != GB_OPEN || !pl->budget)
		return false;
	if (lpc_filemap_present(f, pl->u[k])) {
		pl->st[k] = GB_DONE;
		return false;
	}
	pl->st[k] = GB_PULLED;
	pl->budget--;
	return true;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* GB1-GB3 of the chunk ix[0..m) with GB0's plan. */
static void issue_planned(struct lpc_file *f, struct lpc_tcache *t, struct gb_plan *pl,
			  const uint64_t *ix, size_t m)
{
	uint64_t left_s[LPC_BATCH_CHUNK], left_e[LPC_BATCH_CHUNK], share, stop;
	uint32_t own[LPC_BATCH_CHUNK];
	unsigned nown = 0, nleft = 0;

	for (size_t i = 0; i < m; i++) {				/* GB1 */
		size_t k = plan_find(pl, ix[i]);

		if (pl->st[k] != GB_OPEN)
			continue; /* a duplicate, or taken by an earlier run */
		if (lpc_filemap_present(f, ix[i])) {
			pl->st[k] = GB_DONE;
			continue;
		}
		pl->st[k] = GB_OWN;
		own[nown++] = (uint32_t)k;
	}
	if (!nown)
		return;
	share = f->pool->nframes / 4;
	pl->budget = f->files->run_max < share ? f->files->run_max : share;
	pl->cap = pl->budget ? pl->budget : 1;
	if (nown > 1)
		qsort(own, nown, sizeof(own[0]), cmp_u32);
	for (unsigned j = 0; j < nown; j++) {				/* GB2 */
		size_t lo = own[j], hi = own[j];

		if (pl->st[lo] != GB_OWN)
			continue; /* in an earlier run of this chunk */
		pl->st[lo] = GB_DONE;
		/* A run is at most a request, and at most readahead's share:
		 * the share's check (Q5) lets in what fits, and a longer run's
		 * tail would go to GB3, short of frames, and be read page by
		 * page in GB4. */
		while (hi - lo + 1 < pl->cap && lo > 0 && pl->u[lo - 1] == pl->u[lo] - 1 &&
		       plan_take(f, pl, lo - 1))
			lo--;
		while (hi - lo + 1 < pl->cap && hi + 1 < pl->nu &&
		       pl->u[hi + 1] == pl->u[hi] + 1 && plan_take(f, pl, hi + 1))
			hi++;
		stop = issue_run(f, t, pl->u[lo], pl->u[hi] + 1, NULL);
		/* Pulled pages the run did not take (the share was held by
		 * other reads) are open again: their own chunk issues them. */
		for (size_t k = lo; k <= hi; k++)
			if (pl->st[k] == GB_PULLED)
				pl->st[k] = pl->u[k] >= stop ? GB_OPEN : GB_DONE;
		if (stop < pl->u[hi] + 1) {
			left_s[nleft] = stop;
			left_e[nleft++] = pl->u[hi] + 1;
		}
	}
	issue_left(f, t, left_s, left_e, nleft);			/* GB3 */
}

/* GB0: the plan of indices[0..n) in u/st (room for n each).  Return: the
 * number of distinct indices. */
static size_t plan_make(uint64_t *u, uint8_t *st, const uint64_t *indices, size_t n)
{
	size_t nu = 0;

	memcpy(u, indices, n * sizeof(u[0]));
	if (n > 1)
		qsort(u, n, sizeof(u[0]), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!nu || u[i] != u[nu - 1])
			u[nu++] = u[i];
	memset(st, GB_OPEN, nu);
	return nu;
}

LPC_EXPORT int lpc_page_get_batch(struct lpc_file *f, const uint64_t *indices, size_t n,
				  unsigned flags, struct lpc_page **pages, int *errs)
{
	struct lpc_tcache *t;
	uint64_t v[LPC_BATCH_CHUNK];
	uint8_t vst[LPC_BATCH_CHUNK];
	struct gb_plan pl = { .u = v, .st = vst }, *plan = &pl;
	void *mem = NULL;
	int got = 0;

	if (!f || (n && (!indices || !pages || !errs)) || flags || n > INT32_MAX)
		return -EINVAL;
	lpc_debug_file_check(f);
	t = lpc_file_tcache(f);
	if (!t)
		return -ENOMEM;
	if (n)
		lpc_count(t, LPC_C_BATCHES);
	if (n > LPC_BATCH_CHUNK) {					/* GB0 */
		mem = n <= SIZE_MAX / (sizeof(uint64_t) + 1)
			      ? malloc(n * (sizeof(uint64_t) + 1))
			      : NULL;
		if (mem) {
			pl.u = mem;
			pl.st = (uint8_t *)(pl.u + n);
		} else {
			plan = NULL; /* chunk by chunk, as GB1-GB3 alone */
		}
	}
	if (plan && n)
		pl.nu = plan_make(pl.u, pl.st, indices, n);
	for (size_t base = 0; base < n; base += LPC_BATCH_CHUNK) {
		size_t m = n - base < LPC_BATCH_CHUNK ? n - base : LPC_BATCH_CHUNK;
		unsigned nv = 0;

		if (plan) {
			issue_planned(f, t, plan, indices + base, m);
		} else {
			for (size_t i = 0; i < m; i++)			/* GB1 */
				if (!lpc_filemap_present(f, indices[base + i]))
					v[nv++] = indices[base + i];
			if (nv)
				issue(f, t, v, nv);
		}
		for (size_t i = base; i < base + m; i++) {		/* GB4 */
			errs[i] = lpc_filemap_get_page(f, indices[i], t, 0, &pages[i]);
			if (errs[i])
				pages[i] = NULL;
			else
				got++;
		}
	}
	free(mem);
	return got;
}

#if LPC_DEBUG
#define stream_check_bound(s)                                                            \
	lpc_debug_check((s)->claimed <= (s)->max_pages && (s)->count <= (s)->max_distance &&  \
				(s)->held <= (s)->credit && (s)->credit <= (s)->max_pages &&     \
				atomic_load_explicit(&(s)->f->files->stream_held,                \
						     memory_order_relaxed) <=                    \
					(s)->f->pool->nframes / 4,                               \
			"STREAM-BOUND", NULL,                                            \
			"stream %p claims %u frames (bound %u), holds %u pages (credit %u; " \
			"the cache's streams %llu of %llu frames) with %u entries (distance %u)", \
			(void *)(s), (s)->claimed, (s)->max_pages, (s)->held, (s)->credit, \
			(unsigned long long)atomic_load_explicit(&(s)->f->files->stream_held, \
								 memory_order_relaxed),  \
			(unsigned long long)(s)->f->pool->nframes, (s)->count,           \
			(s)->max_distance)

/* Rule STREAM-HELD: `held` is the number of ring entries with a page (each
 * one reference, ST4), and every held entry has a claim (the bound counts
 * it).  want: the count expected, or UINT32_MAX for the ring's own. */
static void stream_check_held(const struct lpc_stream *s, uint32_t want)
{
	uint32_t n = 0, unclaimed = 0;

	for (uint32_t k = 0; k < s->count; k++) {
		const struct lpc_stream_ent *e = &s->ring[(s->head + k) % s->max_distance];

		if (e->page) {
			n++;
			if (!(e->flags & LPC_STREAM_CLAIMED))
				unclaimed++;
		}
	}
	if (want == UINT32_MAX)
		want = n;
	lpc_debug_check(s->held == n && n == want && !unclaimed, "STREAM-HELD", NULL,
			"stream %p: %u entries hold a page (%u without a claim), counted %u, "
			"%u expected",
			(void *)s, n, unclaimed, s->held, want);
}
#else
#define stream_check_bound(s) ((void)0)
#define stream_check_held(s, want) ((void)0)
#endif

/* ST6: one more page held, within the stream's credit, or with more credit
 * taken from the cache's stream_held (LPC_STREAM_CREDIT at a time, never
 * past a quarter of the frames nor the stream's max_pages).  Return: false
 * when none is left: the page is then not held. */
static bool stream_credit(struct lpc_stream *s)
{
	struct lpc_files *fs = s->f->files;
	uint64_t cap = fs->pool->nframes / 4, cur, got;
	uint32_t want;

	if (s->held < s->credit)
		return true;
	want = s->max_pages - s->credit < LPC_STREAM_CREDIT ? s->max_pages - s->credit
							     : LPC_STREAM_CREDIT;
	if (!want)
		return false;
	cur = atomic_load_explicit(&fs->stream_held, memory_order_relaxed);
	do {
		if (cur >= cap)
			return false;
		got = cap - cur < want ? cap - cur : want;
	} while (!atomic_compare_exchange_weak_explicit(&fs->stream_held, &cur, cur + got,
							memory_order_relaxed,
							memory_order_relaxed));
	s->credit += (uint32_t)got;
	return true;
}

/* ST6: credit beyond what the stream holds now and may hold soon goes back. */
static void stream_credit_trim(struct lpc_stream *s, uint32_t keep)
{
	if (s->credit <= keep)
		return;
	atomic_fetch_sub_explicit(&s->f->files->stream_held, s->credit - keep,
				  memory_order_relaxed);
	s->credit = keep;
}

/* ST4: entry e holds p (a reference the caller took), if the credit allows;
 * else p is put back.  e has its claim already. */
static void stream_hold(struct lpc_stream *s, struct lpc_stream_ent *e, struct lpc_page *p)
{
	if (!stream_credit(s)) {
		lpc_page_release(p);
		return;
	}
	e->page = p;
	s->held++;
}

/* ST4: e's reference put (the page stays cached: the index holds its own). */
static void stream_drop(struct lpc_stream *s, struct lpc_stream_ent *e)
{
	lpc_page_release(e->page);
	e->page = NULL;
	s->held--;
}

/* ST2: the pending run handed out, and its entries' pages held (ST4 b). */
static void stream_flush(struct lpc_stream *s, struct lpc_tcache *t)
{
	uint64_t n = s->run_e - s->run_s;
	struct lpc_page **got = s->run_pages;

	if (!n)
		return;
	/* The window takes the stream's reference on each page it inserts
	 * before the run goes to a reader (run.c W2), so no read of it has
	 * completed and no evictor can have taken it by the time it is held
	 * here.  n <= max_distance: each page of the run is one entry's. */
	memset(got, 0, n * sizeof(got[0]));
	(void)issue_run(s->f, t, s->run_s, s->run_e, got);
	lpc_yield_point(LPC_YP_ST2); /* handed out (regress_stream_hold.c) */
	/* Its entries lie from the run's first one to the ring's tail (the
	 * fill flushes a run before the head reaches it). */
	for (uint32_t k = (uint32_t)(s->run_first - s->taken); k < s->count; k++) {
		struct lpc_stream_ent *e = &s->ring[(s->head + k) % s->max_distance];
		struct lpc_page *p;

		if (!(e->flags & LPC_STREAM_PENDING))
			continue;
		e->flags &= ~LPC_STREAM_PENDING;
		/* Inserted by the run: its reference from W2.  Not: another
		 * thread's page (cached or in flight, looked up as the fill
		 * looks up a cached entry), or none (no frame or share: the
		 * consumer reads it itself). */
		p = got[e->index - s->run_s];
		got[e->index - s->run_s] = NULL;
		if (!p)
			p = lpc_filemap_lookup(s->f, e->index, t);
		if (p)
			stream_hold(s, e, p);	/* or put back: no credit (ST6) */
	}
#if LPC_DEBUG
	for (uint64_t k = 0; k < n; k++)
		lpc_debug_check(!got[k], "STREAM-HELD", got[k],
				"stream %p: page %llu of its run [%llu, %llu) is no entry's",
				(void *)s, (unsigned long long)(s->run_s + k),
				(unsigned long long)s->run_s, (unsigned long long)s->run_e);
#endif
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
		struct lpc_page *p = NULL;
		uint64_t index;
		void *user;

		if (s->claimed >= s->max_pages)
			break; /* the frame bound (ST1): an absent entry would pass it */
		if (!stream_produce(s, &index, &user)) {
			s->ended = true;
			break;
		}
		e = &s->ring[(s->head + s->count) % s->max_distance];
		e->index = index;
		e->user = user;
		e->page = NULL;
		e->flags = 0;
		s->count++;
		if (index >= s->run_s && index < s->run_e) {
			stream_check_bound(s);
			continue; /* the pending run reads it: held by its first entry */
		}
		p = lpc_filemap_lookup(s->f, index, t);
		if (p) {
			/* Cached or in flight: not read; held with a claim
			 * (ST1) while the credit allows (ST6), else neither
			 * held nor claimed (eviction may take it before the
			 * hand-out, which then reads it again). */
			if (stream_credit(s)) {
				e->flags = LPC_STREAM_CLAIMED;
				s->claimed++;
				stream_hold(s, e, p);
			} else {
				lpc_page_release(p);
			}
			stream_check_bound(s);
			continue;
		}
		e->flags = LPC_STREAM_CLAIMED | LPC_STREAM_ABSENT;
		s->claimed++;
		stream_check_bound(s);
		if (index == UINT64_MAX)
			continue; /* past any end: no run holds it (run_e would wrap) */
		if (s->run_s != s->run_e && index != s->run_e && index + 1 != s->run_s)
			stream_flush(s, t);				/* ST2 */
		e->flags |= LPC_STREAM_PENDING; /* after the flush of the run it ends */
		if (s->run_s == s->run_e) {
			s->run_s = s->run_e = index;
			s->run_first = s->taken + s->count - 1;
		}
		if (index == s->run_e)
			s->run_e++;	/* forwards (and a new run) */
		else
			s->run_s--;	/* backwards: index + 1 == run_s */
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

/* ST5: an lpc_invalidate since the stream last looked may have skipped a
 * page because the stream held it: every held page is put, then offered to
 * lpc_invalidate again (dropped if clean, unlocked and held by nobody else;
 * an invalidate that skipped it for another holder would have anyway).
 * Over-broad (the invalidate's range is not known): only costs re-reads of
 * look-ahead, when a file is invalidated while a stream reads it. */
static void stream_revalidate(struct lpc_stream *s)
{
	struct lpc_file *f = s->f;
	uint64_t seq = atomic_load_explicit(&f->inval_seq, memory_order_acquire);

	if (seq == s->inval_seq)
		return;
	for (uint32_t k = 0; k < s->count; k++) {
		struct lpc_stream_ent *e = &s->ring[(s->head + k) % s->max_distance];
		uint64_t index = e->index;

		if (!e->page)
			continue;
		stream_drop(s, e);
		(void)lpc_invalidate(f, index << f->page_shift, 1ull << f->page_shift);
	}
	/* Its own invalidates bumped the count: what it has seen now (a
	 * foreign one that raced them drops nothing of a later hold). */
	s->inval_seq = atomic_load_explicit(&f->inval_seq, memory_order_acquire);
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
	s = calloc(1, sizeof(*s) + o.max_distance * sizeof(s->ring[0]) +
			      o.max_distance * sizeof(s->run_pages[0]));
	if (!s)
		return -ENOMEM;
	s->run_pages = (struct lpc_page **)&s->ring[o.max_distance];
	s->f = f;
	s->cb = cb;
	s->arg = arg;
	s->indices = o.indices;
	s->users = o.users;
	s->n = cb ? 0 : o.n;
	s->max_distance = o.max_distance;
	s->max_pages = o.max_pages;
	s->distance = 1;
	s->inval_seq = atomic_load_explicit(&f->inval_seq, memory_order_acquire);
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
	stream_revalidate(s);						/* ST5 */
	stream_check_bound(s);
	stream_check_held(s, UINT32_MAX);
	if (s->count == 0) {
		rc = s->cb_err; /* the callback's error, once, then the end */
		s->cb_err = 0;
		stream_credit_trim(s, 0);				/* ST6 */
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
	/* The distance: from the page's state now (held, or with no
	 * reference: descriptors are never freed, a stale answer only tunes
	 * the look-ahead). */
	if (s->f->locked_lookup) {
		ready = !(e->flags & LPC_STREAM_ABSENT);
	} else if (e->page) {
		ready = lpc_page_flags(e->page) & LPC_PG_UPTODATE;
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
	} else if (e->flags & LPC_STREAM_ABSENT) {
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
	/* ST4: the consumer's page is got as GB4 gets one (a hit on the held
	 * page while it is still f's page at that index), then the stream's
	 * reference is put: the page is never unreferenced in between. */
	rc = lpc_filemap_get_page(s->f, e->index, t, 0, page);
	if (e->page)
		stream_drop(s, e);
	if (s->credit > s->held + 2 * LPC_STREAM_CREDIT)		/* ST6 */
		stream_credit_trim(s, s->held + LPC_STREAM_CREDIT);
	if (rc) {
		*page = NULL;
		return rc;
	}
	return 1;
}

LPC_EXPORT void lpc_stream_close(struct lpc_stream *s)
{
	if (!s)
		return;
	stream_check_held(s, UINT32_MAX);
	for (uint32_t k = 0; k < s->count; k++) {			/* ST7 */
		struct lpc_stream_ent *e = &s->ring[(s->head + k) % s->max_distance];

		if (e->page)	/* ST7 */
			stream_drop(s, e);
	}
	stream_check_held(s, 0);
	stream_credit_trim(s, 0);
	free(s);
}
