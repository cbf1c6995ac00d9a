/* SPDX-License-Identifier: MIT */
/*
 * att_bg_stop - bg_on left true with no thread, no failed create needed:
 * a writer crosses dirty_background_pct (lpc_wb_kick_bg sets bg_on, kicks);
 * before the flusher is scheduled, lpc_fsync writes every page and
 * lpc_cache_destroy (a page reference held: -EBUSY) stops it; flusher_main
 * sees stop first and leaves bg_on set; F0 sees ndirty 0 and starts
 * nothing.  Under LPC_DIRTY_EXPIRE_NEVER later writers above the
 * threshold then skip their kick (bg_on) and no thread starts before the
 * hard limit.  "The flusher not yet scheduled" is made deterministic by
 * dropping the kicks' pthread_cond_broadcast of these writes (--wrap): the flusher
 * sleeps on as a thread that has not run yet would.
 * The window opens right after the flusher went to sleep (--wrap of
 * pthread_cond_timedwait), so its 500 ms tick does not clear bg_on.
 * Control: the flusher runs its round (100 ms) before the fsync.
 * Exit 1 while the defect is open.
 */
#include "fl.h"
#include "cache/cache.h" /* c->wb.cond: which broadcast to hold back */

static pthread_cond_t *_Atomic fl_hold_cond;
int __real_pthread_cond_broadcast(pthread_cond_t *cv);
int __wrap_pthread_cond_broadcast(pthread_cond_t *cv)
{
	if (cv == fl_hold_cond)
		return 0;
	return __real_pthread_cond_broadcast(cv);
}

/* The flusher's entries into its sleep: the run starts its window right
 * after one, so that the 500 ms tick cannot fall into it. */
static pthread_cond_t *_Atomic fl_watch_cond;
static _Atomic unsigned fl_sleeps;
int __real_pthread_cond_timedwait(pthread_cond_t *cv, pthread_mutex_t *m, const struct timespec *ts);
int __wrap_pthread_cond_timedwait(pthread_cond_t *cv, pthread_mutex_t *m, const struct timespec *ts)
{
	if (cv == fl_watch_cond)
		fl_sleeps++;
	return __real_pthread_cond_timedwait(cv, m, ts);
}

static uint64_t run(bool hold, const char *path, int *threads)
{
	struct lpc_cache *c = fl_cache(4u << 20, LPC_DIRTY_EXPIRE_NEVER, 10, 50);
	struct lpc_stats s;
	struct lpc_file *f;
	struct lpc_page *pg;
	int rc;

	if (lpc_file_open(c, path, O_RDWR, 0, &f) || lpc_page_get(f, 900, 0, &pg))
		exit(1);
	for (uint64_t i = 0; i < 110; i++) /* the thread starts, writes, sleeps */
		fl_write_page(f, i, 7);
	usleep(1000000);
	fl_watch_cond = &c->wb.cond;
	for (unsigned n = fl_sleeps; fl_sleeps == n;)
		usleep(1000);
	if (hold)
		fl_hold_cond = &c->wb.cond;
	for (uint64_t i = 110; i < 230; i++) /* across the threshold again */
		fl_write_page(f, i, 7);
	fl_hold_cond = NULL;
	if (!hold)
		usleep(100000);
	lpc_fsync(f);
	rc = lpc_cache_destroy(c);
	printf("  after destroy: bg_on %d, %d lpc-flusher\n", (int)atomic_load(&c->wb.bg_on), fl_flushers());
	fl_watch_cond = NULL;
	for (uint64_t i = 230; i < 530; i++) { /* 300 dirty: above 102, below 512 */
		fl_write_page(f, i, 7);
		if (i % 20 == 0)
			usleep(20000);
	}
	usleep(1500000);
	lpc_stats(c, &s);
	*threads = fl_flushers();
	printf("  %s: destroy -> %d, then 300 pages written: dirty_pages %" PRIu64 ", %d lpc-flusher\n",
	       hold ? "flusher not yet run at the stop" : "control", rc, s.dirty_pages, *threads);
	lpc_page_put(pg);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	return s.dirty_pages;
}

int main(void)
{
	char p1[300], p2[300];
	int th1, th2;
	uint64_t d1, d2;

	att_make_file("a", 4 << 20, 1, p1, sizeof(p1));
	att_make_file("b", 4 << 20, 1, p2, sizeof(p2));
	d2 = run(false, p2, &th2);
	d1 = run(true, p1, &th1);
	ATT_CHECK(d2 <= 102, "control: %" PRIu64 " dirty", d2);
	ATT_CHECK(d1 <= 102, "%" PRIu64 " pages dirty above the background threshold (102), no kick: bg_on stuck", d1);
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
