/* SPDX-License-Identifier: MIT */
/*
 * ra_worker.c - asynchronous readahead windows: the cache's readahead
 * thread reads the windows that marker hits start (readahead.c A2), so the
 * reader that hit the marker returns at once, and a window's pages become
 * readable when the device completes them whoever submitted it.
 *
 * Protocol (all under w->lock, a mutex no hit or miss takes):
 *   Q0 the marker's reader inserts the window's absent pages LOCKED (run.c
 *      U1-U3, lpc_filemap_ra_start: free frames only), in its own call, so a
 *      reader that gets there first finds them in flight and waits on their
 *      locks (M6) rather than missing and reading them again
 *   Q1 lpc_ra_submit: a slot in the ring of LPC_RA_QUEUE jobs and
 *      f->ra_inflight + 1, the pages' locks handed to the thread (the debug
 *      owner and count move with them), or false (ring full, or the thread
 *      not ready: the caller reads the window itself, U4-U5); the thread is
 *      started on the first submission (signals blocked), and woken
 *   Q2 the thread takes the oldest job, drops the lock, reads the window
 *      (U4-U5: the read, which it reaps before going on, then each page
 *      UPTODATE or removed, and unlocked), takes the lock, f->ra_inflight -
 *      1, broadcasts `idle` at 0
 * LOCKED mode reads its windows in the marker's reader (U3 holds the file's
 * rwlock for reading to U5, and a rwlock is unlocked by its holder).
 *   Q3 the last close of f (file.c, before it removes the pages) waits
 *      until f->ra_inflight is 0: a job never outlives its file, and f is
 *      valid for the thread from Q1 to Q2's decrement
 *   Q4 lpc_cache_destroy stops the thread first (lpc_ra_worker_stop): it
 *      finishes every queued job, then exits, so no window holds a page
 *      reference when destroy counts them, and no frame is read into after
 *      destroy frees the arena
 * Why no page stays locked for ever: every page a window inserts is
 * unlocked at U5 of the same read_run call, by the thread, after its read
 * returned (a backend call always returns: an error is a failed page); the
 * submitter's later fate (blocked, exited) does not enter into it; a reader
 * that needs such a page waits on its lock (M6) and is woken at U5.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>

#include "filemap/filemap.h"

static void *ra_worker_main(void *arg)
{
	struct lpc_files *fs = arg;
	struct lpc_ra_worker *w = &fs->ra;
	struct lpc_tcache *t = lpc_tcache(&fs->pool->owner);

	pthread_mutex_lock(&w->lock);
	/* Without its block (RCU registration, counters) the thread takes
	 * nothing: submitters read their windows themselves. */
	if (t)
		w->ready = true;
	else
		w->failed = true;
	pthread_cond_broadcast(&w->idle);
	for (;;) {
		struct lpc_ra_job *j;
		struct lpc_file *f;

		while (!w->n && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->n)
			break; /* stopped, and nothing left (Q4) */
		j = w->q[w->head];					/* Q2 */
		w->head = (w->head + 1) % LPC_RA_QUEUE;
		w->n--;
		pthread_mutex_unlock(&w->lock);
		f = j->f;
#if LPC_DEBUG
		/* The page locks pass to this thread with the job (Q1). */
		for (uint64_t k = 0; k < j->n; k++)
			atomic_store_explicit(&j->pages[k]->dbg_owner, lpc_debug_tid(),
					      memory_order_relaxed);
		lpc_debug_page_locks += (int)j->n;
#endif
		lpc_filemap_ra_finish(j, t);
		pthread_mutex_lock(&w->lock);
		if (--f->ra_inflight == 0)
			pthread_cond_broadcast(&w->idle);
	}
	w->ready = false;
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

void lpc_ra_worker_init(struct lpc_files *fs)
{
	struct lpc_ra_worker *w = &fs->ra;

	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	pthread_cond_init(&w->idle, NULL);
	w->head = w->n = 0;
	w->started = w->failed = w->stop = w->ready = false;
}

void lpc_ra_worker_destroy(struct lpc_files *fs)
{
	pthread_mutex_destroy(&fs->ra.lock);
	pthread_cond_destroy(&fs->ra.cond);
	pthread_cond_destroy(&fs->ra.idle);
}

bool lpc_ra_submit(struct lpc_ra_job *j)
{
	struct lpc_file *f = j->f;
	struct lpc_ra_worker *w = &f->files->ra;
	bool ok = false;

	pthread_mutex_lock(&w->lock);					/* Q1 */
	if (!w->started && !w->failed && !w->stop) {
		sigset_t all, old;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (pthread_create(&w->thread, NULL, ra_worker_main, f->files) == 0)
			w->started = true;
		else
			w->failed = true;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		/* Once per cache: until the thread has its block. */
		while (w->started && !w->ready && !w->failed)
			pthread_cond_wait(&w->idle, &w->lock);
	}
	if (w->ready && !w->stop && w->n < LPC_RA_QUEUE) {
		w->q[(w->head + w->n) % LPC_RA_QUEUE] = j;
		w->n++;
		f->ra_inflight++;
#if LPC_DEBUG
		lpc_debug_page_locks -= (int)j->n; /* the thread's from here */
		/* Nobody's until the thread takes the job: the submitter may
		 * wait for one of these locks meanwhile (a truncate after a pin
		 * that fired the marker), and the thread unlocks it (Q2), so
		 * that wait is not LOCK-RECURSIVE. */
		for (unsigned k = 0; k < j->n; k++)
			atomic_store_explicit(&j->pages[k]->dbg_owner, 0, memory_order_relaxed);
#endif
		pthread_cond_signal(&w->cond);
		ok = true;
	}
	pthread_mutex_unlock(&w->lock);
	return ok;
}

void lpc_ra_quiesce(struct lpc_file *f)
{
	struct lpc_ra_worker *w = &f->files->ra;

	pthread_mutex_lock(&w->lock);					/* Q3 */
	while (f->ra_inflight)
		pthread_cond_wait(&w->idle, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

void lpc_ra_worker_stop(struct lpc_files *fs)
{
	struct lpc_ra_worker *w = &fs->ra;
	bool started;

	pthread_mutex_lock(&w->lock);					/* Q4 */
	started = w->started;
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	if (started)
		pthread_join(w->thread, NULL);
	pthread_mutex_lock(&w->lock);
	w->started = false;
	w->stop = false; /* a cache that stays (destroy said -EBUSY) starts it again */
	pthread_mutex_unlock(&w->lock);
}
