/* SPDX-License-Identifier: MIT */
/*
 * ra_worker.c - asynchronous readahead: a small pool of readahead threads
 * per cache reads the runs of the windows that marker hits and WILLNEED
 * start (readahead.c A2, lpc_fadvise), so the thread that started a window
 * returns at once, several windows (of several streams and files) are at
 * the device at once, and a window's pages become readable when the device
 * completes them, whoever submitted it.
 *
 * Why threads and not a shared ring reaped by one: each readahead thread
 * reads a batch of runs of one file with the cache's backend (sync: one
 * preadv per run, in turn; io_uring: one READV/READ_FIXED per run, all of
 * them in one submission on the thread's own ring, every completion reaped
 * by that thread: lpc_io_readv_batch), so one thread keeps up to a batch
 * of reads at the device, and the completion of each is reaped by the
 * thread that issued it, which never blocks on anything but its own reads:
 * no completion waits on a submitter.  One thread per run (as before)
 * held one stream to LPC_RA_PER_FILE reads in flight, whatever its
 * look-ahead; more threads per file were measured no fix (lpcbench stream:
 * 0.31x of the device's queue-depth-32 IOPS at 4, 0.61x at 8).
 *
 * Protocol (under w->lock, a mutex no hit or miss takes; signals after it):
 *   Q0 the starting thread inserts the run's absent pages LOCKED (run.c
 *      U1-U3: free frames only), in its own call, so a reader that gets
 *      there first finds them in flight and waits on their locks (M6)
 *      rather than missing and reading them again
 *   Q1 lpc_ra_submit: a slot at the queue's tail and f->ra_inflight + 1,
 *      the pages' locks handed to the threads (the debug owner and count
 *      move with them), or false (queue full, stopping, or no thread could
 *      be started: the caller reads the run itself, U4-U5); a new thread is
 *      started (signals blocked) when none is idle, fewer than
 *      LPC_RA_THREADS run, and f has fewer than LPC_RA_PER_FILE threads
 *      reading it (f->ra_reading: what Q2's cap counts, not f's jobs, of
 *      which one thread's batch may hold many) or a queued job waits for a
 *      thread (not for its file's cap): a thread more could not take a job
 *      of f at its cap before one of f's readers is done, and that reader
 *      takes it (Q2); the submitter waits until
 *      it has its block (or failed to get one: then no more are started);
 *      after the unlock, one idle thread is signalled if a job can be
 *      taken now (a job f's cap holds back is taken by one of f's readers
 *      at its Q2, which looks again before it sleeps)
 *   Q2 a thread takes the oldest job whose file has fewer than
 *      LPC_RA_PER_FILE threads reading it (f->ra_reading + 1: the cap
 *      counts threads, and a reader of Q6, not jobs), and with it, under
 *      the same hold, where f's backend submits batches together
 *      (lpc_io_batches: io_uring; sync would read them in turn, and takes
 *      one job as before), the queued jobs of the same file after it, oldest
 *      first, up to LPC_RUN_BATCH runs and LPC_RUN_BATCH_PAGES pages (a
 *      batch: one file only, so a slow file's batch holds no other file's
 *      pages, the head-of-line rule below; jobs of other files stay
 *      queued, in order, for other threads).  A job in a batch is out of
 *      the queue: Q6 no longer finds it, and a reader of its pages waits on
 *      their locks (M6) for the batch's read, which is at the device
 *      already.  The thread signals one idle thread after the unlock if
 *      another job can be taken (a chain: each taker wakes at most one
 *      more), reads the batch (U4-U5: one lpc_io_readv_batch, every run in
 *      one submission, and each run's pages UPTODATE or removed, and
 *      unlocked, as soon as that run's own request completes, while the
 *      batch's other runs are still at the device: run.c runs_end, io.c
 *      RQ3, uring.c UB2; so a reader of a run's page waits for that run's
 *      request only, as Q6 promises, never for the batch's slowest run),
 *      takes the lock once every run is reaped, f->ra_reading
 *      - 1 and f->ra_inflight - the batch's jobs (`idle` broadcast at 0),
 *      and looks for its next job under the same hold (the job f's cap
 *      held back is now its to take; it wakes no other thread there,
 *      which would find nothing).  Reads in flight on one file are thus at
 *      most LPC_RA_PER_FILE batches (plus Q6's readers), and what bounds
 *      the pages in flight is still Q5's share.  No job waits while
 *      a thread that could take it sleeps: a job that can be taken when
 *      it is queued or when a job is taken was signalled for, and one that
 *      becomes takable when a reader of its file is done is that reader's
 *      next look; a signalled thread that finds its job taken sleeps
 *      again.  The cap is why a file whose device
 *      stalls (a hung NFS server, a held fault gate) holds at most
 *      LPC_RA_PER_FILE threads: the other files' runs are read by the rest
 *      (a queue in arrival order would keep them behind it: head-of-line)
 * The pool must never let one slow file hold another file's reader, nor let
 * readahead starve demand reads of frames:
 *   Q5 readahead's share, counted in pages, strictly: the pages locked by
 *      reads lpc starts ahead of demand (the queued and running jobs,
 *      w->npages, and the runs reserved but not queued: being built, or
 *      read by their caller, w->respages; a run's holes, run.c U1, count
 *      as its pages there, so the bound holds with room to spare) never
 *      exceed a quarter of the frames together.  Before U1-U3 insert a
 *      run, its window reserves
 *      (lpc_ra_reserve, under w->lock) at most what is left of the share,
 *      nframes / 4 - npages - respages, and caps the run at what it was
 *      granted (run.c W1); a grant of 0 ends the window.  The grant moves
 *      to the job when lpc_ra_submit queues it (respages - granted, npages
 *      + the run's pages: what the run did not use is given back there),
 *      or stays the caller's until its own read's U5 (LOCKED mode, a batch's
 *      GB3, a job Q1 refused) and is then given back (lpc_ra_unreserve).
 *      Every increment checks the sum under the same lock, so windows of
 *      any number of threads cannot pass the share together (rule
 *      RA-SHARE: LPC_DEBUG builds check the sum after each).  An
 *      asynchronous window also reserves its queue slot (w->nres), so a run
 *      whose pages are inserted is always queued (the window's caller never
 *      reads it at the device: WILLNEED and a marker hit return at once);
 *      a slot is refused while the queue is full.  So frames locked by reads
 *      at a slow device stay a bounded share, the rest serve demand misses.
 *      The share is split between the streams that read ahead (QS1-QS3):
 *      a marker's window (readahead.c A2) is started while the stream's
 *      window before it may still be at the device (the marker is on that
 *      window's first page), so a stream keeps two windows in flight; two
 *      streams of windows of ra_max (1/8 of the frames by default) asked
 *      for four, twice the share, and whichever stream's marker came second
 *      was granted what the other left: windows cut, the next miss read by
 *      the scanner at the device (lpcbench scan, two scanners at 128 KiB:
 *      217 of 309 marker windows cut)
 *   QS1 every sizing of a stream's window (readahead.c S1, A2:
 *      lpc_ra_window_cap, under w->lock) stamps the stream in w->act (its
 *      key: the stream's slot; a new stream takes the entry sized longest
 *      ago, or an empty one) with ++w->wclock, and counts the streams active:
 *      the entries stamped within the last LPC_RA_ACTIVE_AGE sizings, the
 *      caller's own among them.  A window that reaches the end of the
 *      file is its stream's last: sized as the others, then the stream's
 *      entry is emptied.  A stream that stopped elsewhere (its reader done
 *      or gone random, a random reader's chance stream, S3) stops counting
 *      after that many sizings of the others, which meanwhile read smaller
 *      windows; one that is slower than the device (its windows read before
 *      its reader reaches them, nothing of it in flight) still counts, so
 *      the others do not grow back over its next window
 *   QS2 with two streams active or more, the window is at most share / (2
 *      x active) pages (at least 1; a lone stream's is not capped: ra_max,
 *      1/8 of the frames by default, is half the share, and a small cache's
 *      lone stream keeps the windows it had): the two windows of each
 *      active stream fit the share together, so in a steady state (the same streams, each window sized after the last
 *      stream started) no stream's marker window is cut by another's: the
 *      grant of Q5 covers it.  Every stream keeps its next window in
 *      flight, a smaller one; a run is still at most run_max
 *   QS3 what QS2 does not promise: a window sized before a stream joined
 *      may still be in flight, bigger than the new split, and the joining
 *      stream's first windows may be cut (Q5 grants what is left, as
 *      before; readahead reads less, never waits); QS2's windows end that
 *      within two windows of each stream.  Windows not of a stream (WILLNEED,
 *      read streams' GB3) are not split: they take what is left.  Q5's
 *      bound is the strict one; the split only sizes windows, so a wrong
 *      count costs speed, never the bound (rule RA-SHARE checks both: the
 *      sum, and that no stream is counted twice in w->act)
 *   QS4 the frames for those windows: a window takes free frames only
 *      (run.c U2), and a refill for readahead (reclaimer.c ra_target) made
 *      room for one largest window, ra_max (half the share by default).
 *      A lone stream's markers come one a window, and the refill has that
 *      window's read to land; the markers of two streams come in pairs,
 *      each a window of share / 4: the pair took the whole room, and the
 *      next pair came while the refill of the last one was still evicting
 *      (lpcbench scan, two scanners: about 1 page in 8 of the pass in
 *      windows cut for want of a free frame, against 1 in 25 for one
 *      scanner).  So a marker's window that QS2 split and that ended
 *      before its end for want of a frame or share (readahead.c A2) stores
 *      in the pool's ra_room the room for two windows of every active
 *      stream, the share; a sizing that counts fewer than two streams
 *      active stores 0 (the lone stream's room, as before); each written
 *      only when it changes.  The reclaimer reads it at each turn of a
 *      refill for readahead, and evicts a quarter of it beyond (reclaimer.c
 *      RF4: one grace period per two windows, not per window).  Not a
 *      window cut by a full queue alone (Q5 refused the slot while the
 *      share had the whole run; the frames are not looked at), nor one of
 *      a stream that feeds its windows with its own drops (readahead.c
 *      A4-A5).  Only a cut grows it: streams over a file the cache
 *      holds never cut a window, and a refill to the share there
 *      evicted cached pages for frames nobody took (test_readahead
 *      t_many_streams read pages twice).  A hint both ways (relaxed): a
 *      stale room sizes one refill wrongly, never the share's bound (Q5)
 *   QS5 the last close of f (file.c, after Q3: lpc_ra_forget) takes f's
 *      streams out of the active set and, with fewer than two streams
 *      left, puts ra_room back to 0.  A sizing clears it, but nothing sizes
 *      a window once the scanners' files are closed, and a refill for
 *      readahead without a stream (lpc_fadvise WILLNEED) then kept evicting
 *      to the streams' room and RF4's slack beyond it
 *      (regress_ra_room_close.c; tests/attack_scan3 att_ra_room).  Streams
 *      that stop without a close keep the room until the next sizing (they
 *      may go on: their room is the one they would need)
 *   Q6 a reader that would wait on a page of a run still queued (M6), and
 *      the last close waiting for its file's runs (Q3), take that run out
 *      of the queue and read it themselves: a demand read never waits for
 *      a readahead thread, only for the device (the threads may all be
 *      held by other files' slow reads)
 *   Q7 a new thread is started when the queued runs outnumber the idle
 *      threads (a thread signalled but not yet awake still counts as idle,
 *      so "no idle thread" missed a burst of windows)
 * LOCKED mode reads its windows in the starting thread (U3 holds the
 * file's rwlock for reading to U5, and a rwlock is unlocked by its holder).
 *   Q3 the last close of f (file.c, before it removes the pages) waits
 *      until f->ra_inflight is 0: a job never outlives its file, and f is
 *      valid for a thread from Q1 to Q2's decrement
 *   Q4 lpc_cache_destroy stops the threads first (lpc_ra_worker_stop):
 *      they finish every queued job, then exit, and are joined, so no
 *      window holds a page reference when destroy counts them, and no frame
 *      is read into after destroy frees the arena
 * Why no page stays locked for ever: every page a run inserts is unlocked
 * at U5 of the same run, by the thread that took the job (or the submitter,
 * when Q1 said false), after its read returned (a backend call always
 * returns: an error is a failed page); a queued job is always taken: a
 * thread that sees jobs waits only while every one of them is of a file at
 * its cap, whose readers look for a job after their U5 (Q2); stop (Q4)
 * exits a thread only with the queue empty.  The submitter's later fate
 * (blocked, exited) does not enter into it; a reader that needs such a page
 * waits on its lock (M6) and is woken at U5.
 */
#include <errno.h>
#include <stdlib.h>

#include "filemap/filemap.h"

/* Rule RA-SHARE (Q5): the pages of the queued and running jobs and the
 * pages reserved by windows being built or read by their callers never
 * pass a quarter of the frames together.  Checked under w->lock wherever
 * either count grows (lpc_ra_reserve, lpc_ra_submit). */
#define ra_check_share(fs)                                                              \
	lpc_debug_check((fs)->ra.npages + (fs)->ra.respages <= (fs)->pool->nframes / 4,     \
			"RA-SHARE", NULL,                                                   \
			"readahead holds %llu pages queued or being read and %llu reserved, " \
			"over its share of %llu (a quarter of the frames)",                 \
			(unsigned long long)(fs)->ra.npages,                                \
			(unsigned long long)(fs)->ra.respages,                              \
			(unsigned long long)((fs)->pool->nframes / 4))

/* Rule RA-SHARE (QS1): a stream is counted once among the active ones
 * (twice, it would halve every stream's window for nothing).  Checked under
 * w->lock after each stamp. */
static void ra_check_act(const struct lpc_ra_worker *w)
{
#if LPC_DEBUG
	for (unsigned i = 0; i < LPC_RA_ACTIVE; i++)
		for (unsigned k = i + 1; k < LPC_RA_ACTIVE; k++)
			lpc_debug_check(!w->act[i].stamp || !w->act[k].stamp ||
						w->act[i].key != w->act[k].key,
					"RA-SHARE", NULL,
					"stream %p is counted twice among readahead's active streams "
					"(entries %u and %u)",
					w->act[i].key, i, k);
#else
	(void)w;
#endif
}

/* Q2's pick: the oldest job whose file is below its cap, or -1. */
static int ra_pick(struct lpc_ra_worker *w)
{
	for (unsigned i = 0; i < w->n; i++)
		if (w->q[i]->f->ra_reading < LPC_RA_PER_FILE)
			return (int)i;
	return -1;
}

/* Job i out of the queue.  Context: w->lock. */
static struct lpc_ra_job *ra_remove(struct lpc_ra_worker *w, unsigned i)
{
	struct lpc_ra_job *j = w->q[i];

	w->n--;
	for (unsigned k = i; k < w->n; k++)
		w->q[k] = w->q[k + 1];
	return j;
}

/* Q2/Q6: takes job i out of the queue for this thread, one more reader of
 * its file.  Context: w->lock. */
static struct lpc_ra_job *ra_take(struct lpc_ra_worker *w, unsigned i)
{
	struct lpc_ra_job *j = ra_remove(w, i);

	j->f->ra_reading++;
	return j;
}

/* Q2's batch: after taking jobs[0] from slot i, the queued jobs of the same
 * file after it, oldest first, while the batch has fewer than LPC_RUN_BATCH
 * runs and they add up to at most LPC_RUN_BATCH_PAGES pages (a first job
 * larger than that goes alone).  Return: the jobs in the batch.  Context:
 * w->lock. */
static unsigned ra_take_more(struct lpc_ra_worker *w, unsigned i, struct lpc_ra_job **jobs)
{
	struct lpc_file *f = jobs[0]->f;
	uint64_t np = jobs[0]->n;
	unsigned nj = 1;

	/* A backend that reads a batch run after run (sync): one run per
	 * thread, the threads overlap the reads (lpc_io_batches). */
	if (!lpc_io_batches(f->iodev, &f->io))
		return 1;
	while (i < w->n && nj < LPC_RUN_BATCH) {
		struct lpc_ra_job *x = w->q[i];

		if (x->f == f && np + x->n <= LPC_RUN_BATCH_PAGES) {
			jobs[nj++] = ra_remove(w, i);
			np += x->n;
		} else {
			i++;
		}
	}
	return nj;
}

/* Reads nj taken jobs of one file (U4-U5: one batched read) and accounts
 * for them.  wake_first: signal one idle thread once the lock is dropped
 * (Q2's chain); wake_end: at the end, signal one for a job now takeable (a
 * reader that took the job, Q6, is not a readahead thread: nobody else
 * would pick the next).  Context: called and returns with w->lock held;
 * drops it for the read. */
static void ra_read(struct lpc_ra_worker *w, struct lpc_ra_job **jobs, unsigned nj,
		    struct lpc_tcache *t, bool wake_first, bool wake_end)
{
	struct lpc_file *f = jobs[0]->f;
	uint64_t n = 0;

	for (unsigned i = 0; i < nj; i++)
		n += jobs[i]->n;
	pthread_mutex_unlock(&w->lock);
	if (wake_first)
		pthread_cond_signal(&w->cond);
#if LPC_DEBUG
	/* The page locks pass to this thread with the jobs (Q1). */
	for (unsigned i = 0; i < nj; i++)
		for (uint64_t k = 0; k < jobs[i]->n; k++)
			if (jobs[i]->pages[k]) {
				atomic_store_explicit(&jobs[i]->pages[k]->dbg_owner,
						      lpc_debug_tid(), memory_order_relaxed);
				lpc_debug_page_locks++;
			}
#endif
	lpc_filemap_ra_finish_batch(jobs, nj, t); /* frees them */
	pthread_mutex_lock(&w->lock);
	w->npages -= n;
	f->ra_reading--;
	f->ra_inflight -= nj;
	if (f->ra_inflight == 0)
		pthread_cond_broadcast(&w->idle);
	if (wake_end && w->nidle && ra_pick(w) >= 0)
		pthread_cond_signal(&w->cond); /* a job f's cap held back */
}

/* Q6: one job, taken from slot i by a reader of its file.  Context: w->lock. */
static void ra_read_one(struct lpc_ra_worker *w, unsigned i, struct lpc_tcache *t)
{
	struct lpc_ra_job *j = ra_take(w, i);

	ra_read(w, &j, 1, t, false, true);
}

static void *ra_worker_main(void *arg)
{
	struct lpc_files *fs = arg;
	struct lpc_ra_worker *w = &fs->ra;
	struct lpc_tcache *t = lpc_tcache(&fs->pool->owner);

	pthread_mutex_lock(&w->lock);
	/* Without its block (RCU registration, counters) the thread takes
	 * nothing, and no other is started (Q1). */
	if (t)
		w->nready++;
	else
		w->failed = true;
	pthread_cond_broadcast(&w->idle);
	while (t) {
		struct lpc_ra_job *jobs[LPC_RUN_BATCH];
		unsigned nj;
		bool wake;
		int i = ra_pick(w);

		if (i < 0) {
			if (!w->n && w->stop) {
				/* Stopped, and nothing left (Q4): the others
				 * too, one of which may have gone to sleep on
				 * a job the cap held back after stop's
				 * broadcast (no Q2 wakes it). */
				pthread_cond_broadcast(&w->cond);
				break;
			}
			w->nidle++;
			pthread_cond_wait(&w->cond, &w->lock);
			w->nidle--;
			continue;
		}
		jobs[0] = ra_take(w, (unsigned)i);			/* Q2 */
		nj = ra_take_more(w, (unsigned)i, jobs);
		wake = w->nidle && ra_pick(w) >= 0; /* Q2's chain wake */
		/* No wake at the batch's end: this thread picks next, with the
		 * lock held (a job f's cap held back is its own to take). */
		ra_read(w, jobs, nj, t, wake, false);
	}
	if (t)
		w->nready--;
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

void lpc_ra_worker_init(struct lpc_files *fs)
{
	struct lpc_ra_worker *w = &fs->ra;

	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	pthread_cond_init(&w->idle, NULL);
	w->n = w->nthreads = w->nready = w->nidle = w->nres = 0;
	w->npages = w->respages = 0;
	for (unsigned i = 0; i < LPC_RA_ACTIVE; i++)
		w->act[i].key = NULL, w->act[i].stamp = 0;
	w->wclock = 0;
	w->failed = w->stop = false;
}

void lpc_ra_worker_destroy(struct lpc_files *fs)
{
	pthread_mutex_destroy(&fs->ra.lock);
	pthread_cond_destroy(&fs->ra.cond);
	pthread_cond_destroy(&fs->ra.idle);
}

/* Q1's start of one more thread; w->lock held.  Waits until it has its
 * block or failed (once per thread and cache). */
static void ra_start_thread(struct lpc_files *fs)
{
	struct lpc_ra_worker *w = &fs->ra;
	unsigned ready = w->nready;

	if (lpc_thread_spawn(&w->threads[w->nthreads], ra_worker_main, fs, "lpc-readahead") == 0)
		w->nthreads++;
	else
		w->failed = true;
	while (!w->failed && w->nready == ready)
		pthread_cond_wait(&w->idle, &w->lock);
}

bool lpc_ra_submit(struct lpc_ra_job *j, uint64_t granted)
{
	struct lpc_file *f = j->f;
	struct lpc_ra_worker *w = &f->files->ra;
	bool ok = false, wake = false;

	pthread_mutex_lock(&w->lock);					/* Q1 */
	if (!w->stop && !w->failed && w->n + 1 > w->nidle && w->nthreads < LPC_RA_THREADS &&
	    (w->nthreads == 0 || f->ra_reading < LPC_RA_PER_FILE || ra_pick(w) >= 0))
		ra_start_thread(f->files);				/* Q7 */
	if (w->nready && !w->stop && w->n < LPC_RA_QUEUE) {
		w->q[w->n++] = j;
		/* Q5: the slot and the grant become the job's (j->n <= granted:
		 * the rest is given back); refused, both stay the caller's. */
		w->nres--;
		w->respages -= granted;
		w->npages += j->n;
		f->ra_inflight++;
#if LPC_DEBUG
		for (unsigned k = 0; k < j->n; k++)
			lpc_debug_page_locks -= j->pages[k] != NULL; /* the threads' from here */
		/* Nobody's until a thread takes the job: the submitter may
		 * wait for one of these locks meanwhile (a truncate after a pin
		 * that fired the marker), and a thread unlocks it (Q2), so
		 * that wait is not LOCK-RECURSIVE. */
		for (unsigned k = 0; k < j->n; k++)
			if (j->pages[k]) /* not a hole (run.c U1) */
				atomic_store_explicit(&j->pages[k]->dbg_owner, 0,
						      memory_order_relaxed);
#endif
		ok = true;
		wake = w->nidle && ra_pick(w) >= 0;
	}
	ra_check_share(f->files);
	pthread_mutex_unlock(&w->lock);
	/* After the unlock: a thread woken here does not block at once on
	 * the lock this thread still holds.  No wake is lost: a thread that
	 * goes to sleep between the unlock and the signal saw the job first
	 * (it tests ra_pick under the lock); f is open (its caller reads it),
	 * so the cache and its condition variable outlive this call. */
	if (wake)
		pthread_cond_signal(&w->cond);
	return ok;
}

uint64_t lpc_ra_reserve(struct lpc_files *fs, uint64_t want, bool slot, bool *queue_full)
{
	struct lpc_ra_worker *w = &fs->ra;
	uint64_t share = fs->pool->nframes / 4, used, got = 0;

	pthread_mutex_lock(&w->lock);					/* Q5 */
	used = w->npages + w->respages;
	if (used < share && (!slot || (!w->stop && !w->failed && w->n + w->nres < LPC_RA_QUEUE))) {
		got = share - used < want ? share - used : want;
		w->respages += got;
		if (slot && got)
			w->nres++;
	} else if (queue_full && slot && !w->stop && !w->failed && share - used >= want) {
		*queue_full = true; /* the share had the whole run: the queue alone */
	}
	ra_check_share(fs);
	pthread_mutex_unlock(&w->lock);
	return got;
}

/* QS1: entry i stamped within the last LPC_RA_ACTIVE_AGE sizings.
 * Context: w->lock. */
static bool ra_act_live(const struct lpc_ra_worker *w, unsigned i)
{
	return w->act[i].stamp && w->wclock - w->act[i].stamp < LPC_RA_ACTIVE_AGE;
}

/* QS4, QS5: with fewer than two streams active, the refill's room back to
 * one window (written on a change only). */
static void ra_room_lone(struct lpc_pool *pool, unsigned active)
{
	if (active < 2 && atomic_load_explicit(&pool->ra_room, memory_order_relaxed))
		atomic_store_explicit(&pool->ra_room, 0, memory_order_relaxed);
}

uint32_t lpc_ra_window_cap(struct lpc_files *fs, const void *key, bool last)
{
	struct lpc_ra_worker *w = &fs->ra;
	uint64_t share = fs->pool->nframes / 4, cap;
	unsigned i, e = LPC_RA_ACTIVE, active = 0;

	pthread_mutex_lock(&w->lock);					/* QS1 */
	w->wclock++;
	for (i = 0; i < LPC_RA_ACTIVE; i++)
		if (w->act[i].stamp && w->act[i].key == key) {
			e = i;
			break;
		}
	if (e == LPC_RA_ACTIVE) {
		e = 0;
		for (i = 1; i < LPC_RA_ACTIVE; i++)
			if (w->act[i].stamp < w->act[e].stamp)
				e = i;
	}
	w->act[e].key = key;
	w->act[e].stamp = w->wclock;
	for (i = 0; i < LPC_RA_ACTIVE; i++)
		if (ra_act_live(w, i))
			active++; /* the caller's own among them */
	ra_check_act(w);
	if (last)
		w->act[e].stamp = 0; /* its last window: counted no more */
	pthread_mutex_unlock(&w->lock);
	ra_room_lone(fs->pool, active); /* QS4: a lone stream again */
	/* QS2; a lone stream as before the split (its windows up to ra_max,
	 * its synchronous window's first run outside the share, run.c U6) */
	if (active < 2)
		return UINT32_MAX;
	cap = share / (2 * (uint64_t)active);
	if (cap < 1)
		cap = 1;
	return cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
}

void lpc_ra_unreserve(struct lpc_files *fs, uint64_t pages, bool slot)
{
	pthread_mutex_lock(&fs->ra.lock);
	fs->ra.respages -= pages;
	if (slot)
		fs->ra.nres--;
	pthread_mutex_unlock(&fs->ra.lock);
}

/* The queued job of f holding page p, or -1.  Context: w->lock. */
static int ra_find(struct lpc_ra_worker *w, struct lpc_file *f, struct lpc_page *p)
{
	for (unsigned i = 0; i < w->n; i++) {
		struct lpc_ra_job *j = w->q[i];

		if (j->f != f)
			continue;
		if (!p)
			return (int)i;
		for (uint64_t k = 0; k < j->n; k++)
			if (j->pages[k] == p)
				return (int)i;
	}
	return -1;
}

bool lpc_ra_steal(struct lpc_file *f, struct lpc_page *p, struct lpc_tcache *t)
{
	struct lpc_ra_worker *w = &f->files->ra;
	int i;

	/* The lock every time: M6 waits for a read anyway, and ra_inflight
	 * is the lock's. */
	if (!t)
		return false;
	pthread_mutex_lock(&w->lock);					/* Q6 */
	i = ra_find(w, f, p);
	if (i >= 0)
		ra_read_one(w, (unsigned)i, t);
	pthread_mutex_unlock(&w->lock);
	return i >= 0;
}

void lpc_ra_quiesce(struct lpc_file *f)
{
	struct lpc_ra_worker *w = &f->files->ra;
	struct lpc_tcache *t = lpc_file_tcache(f);
	int i;

	pthread_mutex_lock(&w->lock);					/* Q3 */
	/* Q6: the file's queued runs are read here, not behind others'. */
	while (t && (i = ra_find(w, f, NULL)) >= 0)
		ra_read_one(w, (unsigned)i, t);
	while (f->ra_inflight)
		pthread_cond_wait(&w->idle, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

void lpc_ra_forget(struct lpc_file *f)
{
	struct lpc_ra_worker *w = &f->files->ra;
	unsigned active = 0;

	pthread_mutex_lock(&w->lock);					/* QS5 */
	for (unsigned k = 0; k < LPC_RA_ACTIVE; k++) {
		/* Keys are compared as numbers, never followed (QS1). */
		uintptr_t key = (uintptr_t)w->act[k].key;

		if (!w->act[k].stamp)
			continue;
		if (key >= (uintptr_t)&f->ra_streams[0] &&
		    key < (uintptr_t)&f->ra_streams[LPC_RA_STREAMS])
			w->act[k].stamp = 0; /* f's: counted no more */
		else if (ra_act_live(w, k))
			active++;
	}
	pthread_mutex_unlock(&w->lock);
	ra_room_lone(f->pool, active);
}

void lpc_ra_worker_stop(struct lpc_files *fs)
{
	struct lpc_ra_worker *w = &fs->ra;
	unsigned n;

	pthread_mutex_lock(&w->lock);					/* Q4 */
	n = w->nthreads;
	w->stop = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	for (unsigned i = 0; i < n; i++)
		pthread_join(w->threads[i], NULL);
	pthread_mutex_lock(&w->lock);
	w->nthreads = 0;
	w->stop = false; /* a cache that stays (destroy said -EBUSY) starts them again */
	pthread_mutex_unlock(&w->lock);
}
