/* SPDX-License-Identifier: MIT */
/*
 * run_unprep_stale.c - MR4 in run.c U3: a run's pages are all prepped (M2,
 * ref 2, frames this thread's lpc_invalidate removed a moment ago: MR1),
 * then one insert fails and the pages from it on are unprepped together,
 * while a stale getter holds a reference on one of them.  Expected (sound):
 * the unprep drops its two references per page, the stale getter's put is
 * the last and frees its frame the published way (pending), nothing is
 * lost or freed twice, no debug rule fires, the census adds up, the pread
 * returns the file's bytes.
 *   1. f's pages 10..13 cached (frames a < b < c < d by id), the test
 *      thread T's private list emptied, no background reclaimer.
 *   2. G looks up the page whose frame is c (the third lowest: run.c U2
 *      orders a run's frames by id, so c becomes the run's page 2) and parks
 *      at R3.
 *   3. T invalidates 10..13 (a..d on its deferred list, uncovered) and
 *      preads pages 0..3: one run (U1-U3), M1 takes a..d at once (MR1), M2
 *      preps pages 0..3 in a, b, c, d; T parks at M3, before any insert.
 *   4. G's R3 succeeds on c (now f's page 2, ref 2 -> 3): G parks at R4.
 *   5. Thread U gets f's page 1 (its own frame): T's insert of page 1 will
 *      fail (-EEXIST), so pages 1..3 (b, c, d) are unprepped at once.
 *   6. T goes on; G goes on (R4 fails: its slot, f's page 12, is empty) and
 *      puts c: the last reference.
 * Checks: pread 4 pages with the file's bytes; c free (ref 0) and on
 * pending; G's find -ENOENT; census with in_use = cached + held.
 * Exit: 0 sound, 1 a defect, 77 the story could not be set up.
 *
 * RUS_LOCKED=1: the same in LOCKED mode without G (lookups there take the
 * rwlock: no stale getter); the unprep runs with the rwlock held for
 * reading (run.c U3), its frees through lpc_page_release_last.
 *
 * Usage: [RUS_LOCKED=1] run_unprep_stale [--seed N]
 */
#include <pthread.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"
#include "core/debug.h"

#define PS 4096u
#define NFRAMES 512u
#define NPRIV 64u

static _Atomic int tpark, tgo, gpark, gstage;
static __thread bool is_t, is_g;
static struct lpc_file *f;
static uint64_t g_index;
static bool locked; /* RUS_LOCKED=1: LOCKED mode, no G (no stale getter there) */
static int g_rc = 1;

static void hook(enum lpc_yield_point yp)
{
	if (is_t && yp == LPC_YP_M3 && atomic_load(&tpark) == 0) {
		atomic_store(&tpark, 1);
		while (!atomic_load(&tgo))
			tst_sleep_us(1000);
	} else if (is_g && yp == LPC_YP_R3 && atomic_load(&gpark) == 0) {
		atomic_store(&gpark, 1);
		while (atomic_load(&gstage) < 1)
			tst_sleep_us(1000);
	} else if (is_g && yp == LPC_YP_R4 && atomic_load(&gpark) == 1) {
		atomic_store(&gpark, 2);
		while (atomic_load(&gstage) < 2)
			tst_sleep_us(1000);
	}
}

static void *g_main(void *arg)
{
	struct lpc_page *p;

	(void)arg;
	if (lpc_page_find(f, 30, &p) == 0) /* registers the thread */
		lpc_page_put(p);
	is_g = true;
	g_rc = lpc_page_find(f, g_index, &p);
	if (g_rc == 0)
		lpc_page_put(p);
	return NULL;
}

static void *u_main(void *arg)
{
	struct lpc_page *p;

	(void)arg;
	if (lpc_page_get(f, 1, 0, &p) == 0)
		lpc_page_put(p);
	return NULL;
}

static bool wait_for_ext(_Atomic int *v, int want);

/* D: drives 4-5 while T (the main thread) is parked at M3. */
static void *d_main(void *arg)
{
	pthread_t ut;

	(void)arg;
	if (!wait_for_ext(&tpark, 1))
		return (void *)1;
	atomic_store(&gstage, 1); /* 4. G's R3 on c */
	if (!locked && !wait_for_ext(&gpark, 2))
		return (void *)2;
	if (pthread_create(&ut, NULL, u_main, NULL)) /* 5. */
		return (void *)3;
	pthread_join(ut, NULL);
	atomic_store(&tgo, 1); /* 6. T goes on */
	return NULL;
}

static bool wait_for_ext(_Atomic int *v, int want)
{
	uint64_t t0 = tst_now_ns();

	while (atomic_load(v) != want) {
		if (tst_now_ns() - t0 > 10000000000ull)
			return false;
		tst_sleep_us(1000);
	}
	return true;
}

static int by_id(const void *a, const void *b)
{
	uint32_t x = (*(struct lpc_page *const *)a)->id, y = (*(struct lpc_page *const *)b)->id;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_page *fr[4], *sorted[4], *priv[NPRIV], *cf;
	struct lpc_pool_census cs;
	struct lpc_tcache *t;
	unsigned char *buf = malloc(4 * PS);
	void *dres;
	ssize_t n;
	unsigned char *scratch = malloc(4 * PS);
	char fpath[600];
	unsigned npriv = 0, pend = 0;
	uint64_t fid;
	pthread_t gt, dt;
	int rc;

	locked = getenv("RUS_LOCKED") && atoi(getenv("RUS_LOCKED"));
	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	REQUIRE(scratch);
	REQUIRE(buf);
	REQUIRE(tst_make_sparse("rus-f", 64 * PS, fpath, sizeof(fpath)) == 0, "file f");
	fid = tst_file_id(fpath);
	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.lookup_mode = locked ? LPC_LOOKUP_LOCKED : LPC_LOOKUP_LOCKLESS;
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	c->pool.wake = NULL;
	f = tst_file_open(c, fpath, O_RDONLY);

	/* 1. */
	for (unsigned i = 0; i < 4; i++) {
		REQUIRE(lpc_page_get(f, 10 + i, 0, &fr[i]) == 0, "f's page %u", 10 + i);
		lpc_page_put(fr[i]);
		sorted[i] = fr[i];
	}
	qsort(sorted, 4, sizeof(*sorted), by_id);
	cf = sorted[2];
	for (unsigned i = 0; i < 4; i++)
		if (fr[i] == cf)
			g_index = 10 + i;
	t = lpc_tcache(&c->pool.owner);
	REQUIRE(t, "thread block");
	while (atomic_load(&t->nfree) && npriv < NPRIV)
		REQUIRE(lpc_page_alloc(c, &priv[npriv++]) == 0, "private page");
	REQUIRE(atomic_load(&t->nfree) == 0, "the private list is not empty");

	/* 2. */
	lpc_yield_set_hook(hook);
	REQUIRE(lpc_yield_arm("R3,R4,M3", 1.0, 1) == 0, "arm");
	if (!locked) {
		REQUIRE(pthread_create(&gt, NULL, g_main, NULL) == 0, "G");
		REQUIRE(wait_for_ext(&gpark, 1), "G never reached R3");
	}

	/* 3.  T (this thread: MR1 takes from the caller's own list) parks at
	 * M3 inside the pread; D drives 4-5 meanwhile. */
	CHECK_EQ(lpc_invalidate(f, 10 * PS, 4 * PS), 4, "invalidate of 10..13");
	CHECK_EQ(atomic_load(&t->ndfree), 4u, "a..d on the deferred list");
	REQUIRE(pthread_create(&dt, NULL, d_main, NULL) == 0, "D");
	is_t = true;
	n = lpc_pread(f, buf, 4 * PS, 0);
	is_t = false;
	pthread_join(dt, &dres);
	REQUIRE(dres == NULL, "the story did not run (step %ld)", (long)(intptr_t)dres);

	/* 6. G goes on and puts c. */
	printf("after the unprep, before G's put: frame %u ref %u\n", cf->id,
	       atomic_load(&cf->ref));
	CHECK_EQ(atomic_load(&cf->ref), locked ? 0u : 1u,
		 "c after the unprep: G's reference alone (LOCKED: none)");
	atomic_store(&gstage, 2);
	if (!locked)
		pthread_join(gt, NULL);
	lpc_yield_arm(NULL, 0, 0);
	lpc_yield_set_hook(NULL);

	CHECK_EQ(n, (ssize_t)(4 * PS), "pread of pages 0..3");
	CHECK(tst_null_check_range(fid, PS, 64 * PS, 0, buf, 4 * PS, scratch, NULL),
	      "pread returned wrong bytes");
	CHECK_EQ(g_rc, locked ? 1 : -ENOENT, "G's lookup of f's page %" PRIu64, g_index);
	CHECK_EQ(atomic_load(&cf->ref), 0u, "c not free after G's put");
	pthread_mutex_lock(&c->pool.free_lock);
	for (struct lpc_page *q = c->pool.pending; q; q = q->next)
		pend += q == cf;
	pthread_mutex_unlock(&c->pool.free_lock);
	CHECK_EQ(pend, 1u, "c is not on pending once (MR4: freed the published way)");
	CHECK_EQ(lpc_file_nrpages(f), 4u, "f caches pages 0..3");
	for (int i = 0; i < 10000 && (rc = lpc_pool_census(&c->pool, 4 + npriv, &cs)) == -EAGAIN;
	     i++)
		tst_sleep_us(1000);
	CHECK_EQ(rc, 0, "census");
	CHECK_EQ(cs.total + 4 + npriv, NFRAMES, "census: free + cached + held");
	for (unsigned i = 0; i < npriv; i++)
		lpc_page_put(priv[i]);
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
	free(buf);
	free(scratch);
	return tst_finish();
}
