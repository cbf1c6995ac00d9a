/* SPDX-License-Identifier: MIT */
/*
 * att_long_section.c - lpc_invalidate's read section is bounded by the pages
 * it frees, not by the pages it visits (LPC_DEBUG build: yield hook at A).
 *
 * remove.c (43cf51a): "the freed frames go to pending in chains of up to
 * INVAL_CHAIN pages ... From the first freeze (A) of a chain to its pending
 * list (C), one read section".  The section is closed only when k (pages
 * freed) reaches 256 or the range ends; a page that is skipped (held, locked,
 * dirty, under writeback) adds nothing to k.  So an invalidate of a range
 * whose pages are mostly busy runs its whole range - every gang, every take
 * of the index lock (in LOCKED mode a write lock that waits for every read
 * in flight on the file) - inside ONE read section, and every grace period
 * (reclaim()'s T2: any allocation that found the free list empty, the
 * background reclaimer's drain) waits for all of it.  Before 43cf51a the
 * section was one gang (16 pages).
 *
 * Here: 2048 cached pages, all held by the test (so lpc_invalidate drops
 * none); the hook makes each visit (step A) take ~100 us so the other thread
 * can look; a second thread waits for one grace period that starts once the
 * invalidate is inside its section and counts the visits it waited for.
 * The design's own bound is a chain: 256 freed pages + a gang.  Exit 1 when
 * the grace period waited for more than 256 + 16 visits (observed: all
 * 2047 of the rest, for the whole call).  Also run with every page free
 * (the chain case: bounded) and in LOCKED mode; and the user's view: an
 * lpc_page_alloc that finds the free list empty and one frame on pending
 * (reclaim(), T2) waits for the whole invalidate.
 *
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_long_section
 */
#include <urcu/urcu-memb.h>

#include "core/debug.h"
#include "mh.h"

#if !LPC_DEBUG
int main(void)
{
	printf("needs an LPC_DEBUG build (make VARIANT=asan or tsan)\n");
	return 77;
}
#else
#define PS 4096u
#define NP 2048u

static _Atomic unsigned visits;
static _Atomic bool in_inval, inval_done;
static __thread bool is_inval;

static void hook(enum lpc_yield_point yp)
{
	if (yp != LPC_YP_A || !is_inval)
		return;
	atomic_fetch_add(&visits, 1);
	atomic_store(&in_inval, true);
	usleep(100);
}

struct job {
	struct lpc_file *f;
	int dropped;
};

static void *invalidator(void *arg)
{
	struct job *j = arg;

	is_inval = true;
	j->dropped = lpc_invalidate(j->f, 0, 0);
	atomic_store(&inval_done, true);
	return NULL;
}

/* Return: visits the grace period waited for. */
static unsigned story(int mode, bool hold, int *dropped)
{
	struct lpc_cache *c = att_cache(2 * NP * PS, PS, LPC_IO_NULL, mode, 0, 0);
	static struct lpc_page *held[NP];
	struct lpc_file *f;
	struct job j;
	pthread_t th;
	char path[512];
	unsigned a0, a1;

	mh_hole_file("f", (uint64_t)NP * PS, path, sizeof(path));
	if (lpc_file_open(c, path, O_RDONLY, 0, &f))
		exit(1);
	for (unsigned i = 0; i < NP; i++) {
		if (lpc_page_get(f, i, 0, &held[i]))
			exit(1);
		if (!hold) {
			lpc_page_put(held[i]);
			held[i] = NULL;
		}
	}
	atomic_store(&visits, 0);
	atomic_store(&in_inval, false);
	atomic_store(&inval_done, false);
	j.f = f;
	pthread_create(&th, NULL, invalidator, &j);
	while (!atomic_load(&in_inval))
		usleep(50);
	a0 = atomic_load(&visits);
	urcu_memb_synchronize_rcu();
	a1 = atomic_load(&visits);
	pthread_join(th, NULL);
	*dropped = j.dropped;
	printf("  %s, pages %s: invalidate visited %u pages, dropped %d; a grace period that "
	       "began at visit %u ended at visit %u (waited for %u visits)%s\n",
	       mode == LPC_LOOKUP_LOCKED ? "LOCKED" : "lockless", hold ? "all held" : "free",
	       atomic_load(&visits), j.dropped, a0, a1, a1 - a0,
	       atomic_load(&inval_done) && a1 >= atomic_load(&visits) ? " = the whole call" : "");
	for (unsigned i = 0; i < NP; i++)
		lpc_page_put(held[i]);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	return a1 - a0;
}

/*
 * The user's view: an allocation that needs a grace period (the free list
 * empty, one frame on pending) waits for the whole invalidate.  Return:
 * visits lpc_page_alloc waited for.
 */
static unsigned story_alloc(void)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	static struct lpc_page *held[NP], *priv[NP + 64];
	struct lpc_file *f, *g;
	struct lpc_page *p, *y;
	struct job j;
	pthread_t th;
	char path[512], path2[512];
	unsigned a0, a1, m = 0;
	int rc;

	lpc_config_init(&cfg);
	cfg.cache_bytes = (NP + 64) * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	cfg.alloc_wait_ms = 50;
	if (lpc_cache_create(&cfg, &c))
		exit(1);
	mh_hole_file("f", (uint64_t)NP * PS, path, sizeof(path));
	mh_hole_file("g", (uint64_t)PS, path2, sizeof(path2));
	if (lpc_file_open(c, path, O_RDONLY, 0, &f) || lpc_file_open(c, path2, O_RDONLY, 0, &g))
		exit(1);
	for (unsigned i = 0; i < NP; i++)
		if (lpc_page_get(f, i, 0, &held[i]))
			exit(1);
	while (m < NP + 64 && lpc_page_alloc(c, &priv[m]) == 0)
		m++;
	/* One frame back, cached as g's page 0, then invalidated: on pending
	 * (one frame: no wake). */
	lpc_page_put(priv[--m]);
	if (lpc_page_get(g, 0, 0, &y))
		exit(1);
	lpc_page_put(y);
	(void)lpc_invalidate(g, 0, 0);
	atomic_store(&visits, 0);
	atomic_store(&in_inval, false);
	atomic_store(&inval_done, false);
	j.f = f;
	pthread_create(&th, NULL, invalidator, &j);
	while (!atomic_load(&in_inval))
		usleep(50);
	a0 = atomic_load(&visits);
	rc = lpc_page_alloc(c, &p);
	a1 = atomic_load(&visits);
	pthread_join(th, NULL);
	printf("  an allocation with the free list empty (%u frames held privately, 1 on pending): "
	       "lpc_page_alloc = %d after waiting for %u of the invalidate's %u visits%s\n",
	       m, rc, a1 - a0, atomic_load(&visits),
	       a1 >= atomic_load(&visits) ? " (the whole call)" : "");
	if (rc == 0)
		lpc_page_put(p);
	for (unsigned i = 0; i < m; i++)
		lpc_page_put(priv[i]);
	for (unsigned i = 0; i < NP; i++)
		lpc_page_put(held[i]);
	lpc_file_close(g);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	return a1 - a0;
}

int main(void)
{
	int fails = 0, d;
	unsigned w;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (lpc_yield_arm("A", 1.0, 1) < 0) {
		printf("needs an LPC_DEBUG build (make VARIANT=asan or tsan)\n");
		return 77;
	}
	lpc_yield_set_hook(hook);
	for (int mode = 0; mode < 2; mode++) {
		int m = mode ? LPC_LOOKUP_LOCKED : LPC_LOOKUP_LOCKLESS;

		w = story(m, true, &d);
		if (w > 256 + 16) {
			printf("  FAIL: %u pages visited, none freed, in one read section "
			       "(bound: a chain, 256 + 16)\n", w);
			fails++;
		}
		w = story(m, false, &d);
		if (w > 256 + 16) {
			printf("  FAIL: %u visits in one read section with every page freed\n", w);
			fails++;
		}
	}
	w = story_alloc();
	if (w > 256 + 16) {
		printf("  FAIL: an allocation waited for %u visits of an invalidate that freed "
		       "nothing\n", w);
		fails++;
	}
	lpc_yield_set_hook(NULL);
	att_cleanup();
	printf("%s\n", fails ? "DEFECT: see FAIL lines" : "held");
	return fails ? 1 : 0;
}
#endif
