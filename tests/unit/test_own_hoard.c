/* SPDX-License-Identifier: MIT */
/*
 * test_own_hoard.c - frames that lpc_invalidate kept on a thread's deferred
 * list (page/alloc.c OD2) are not stranded while the background reclaimer
 * evicts cached pages for want of them (the reclaimer's take, RT1-RT4 in
 * page/alloc.c and RF1 in reclaim/reclaimer.c refill; OD7's bound on a
 * landing).  1024 frames, readahead off, the null backend; X's NA pages are
 * cached and invalidated (kept: fewer than half the frames), then NB pages
 * of Y are read three times.  NA + NB and the reclaimer's `high` fit the
 * cache once X's frames are free, and NB alone leaves the shared list below
 * the reclaimer's `low` while they are not, so it is woken.  Checked with
 * values, each scenario on a new cache:
 *  - idle: thread A invalidates and idles; the main thread reads Y with
 *    lpc_page_get.  A's deferred list is taken back (bounded wait for its
 *    ndfree to reach 0), no page is evicted, passes 2 and 3 read nothing
 *    from the backend, and the census counts every frame;
 *  - pread: one thread, lpc_pread only (LPC_ALLOC_NOWAIT: its OD3 lands
 *    its own deferred list only once another wait, the reclaimer's, has
 *    covered it): the same;
 *  - landed: A lands its deferred list with allocations that may wait
 *    (OD3-OD5) once another thread's grace period has covered it (else
 *    OD8 borrows from the shared list instead of landing: its list stays
 *    whole): one tbatch of it moves, its private list then holds at
 *    most 2 * tbatch frames (spliced whole it held all NA of them), the
 *    rest stays deferred (OD7) and is taken back as in idle, and the same.
 * Before RT1-RT4 and OD7 each evicted Y's pages and read them again on every
 * pass (the review's attack programs att_hoard, att_hoard_pread and
 * att_hoard_landed).
 *
 * Usage: test_own_hoard [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>
#include <time.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

#define PS 4096u
#define NFRAMES 1024u
#define NA 400u /* X: kept by the invalidate (under half the frames) */
#define NB 560u /* Y: NA + NB + high (256) + private lists fit 1024 */
#define NX (NA + 64u) /* X's pages the landing reads after the invalidate */

enum scenario { IDLE, PREAD, LANDED };
static const char *const names[] = { "idle", "pread", "landed" };

static struct lpc_cache *cache;
static struct lpc_pool *pool;
static struct lpc_file *fx, *fy;
static struct lpc_tcache *ta; /* A's block */
static unsigned a_private, a_extra; /* after A's landing: its nfree, X pages cached */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool a_ready, a_exit;

static void get_put(struct lpc_file *f, unsigned i)
{
	struct lpc_page *p;

	REQUIRE(lpc_page_get(f, i, 0, &p) == 0, "get %u", i);
	lpc_page_put(p);
}

/* Another thread's grace period (a landing, a steal's T2, a drain). */
static void *other_wait(void *arg)
{
	bool entered = lpc_rcu_scope_enter();

	lpc_rcu_synchronize();
	lpc_rcu_scope_exit(entered);
	return arg;
}

/* A: caches X, invalidates it (kept, OD2); LANDED: then, once another
 * thread's grace period covers it, misses on new pages of X until its
 * deferred list has landed (OD3-OD5). */
static void *thread_a(void *arg)
{
	enum scenario sc = *(enum scenario *)arg;
	int dropped;

	for (unsigned i = 0; i < NA; i++)
		get_put(fx, i);
	ta = lpc_tcache(&pool->owner);
	REQUIRE(ta, "A's block");
	dropped = lpc_invalidate(fx, 0, 0);
	CHECK_EQ(dropped, (int)NA, "X's pages invalidated");
	CHECK_EQ(atomic_load(&ta->ndfree), NA, "X's frames kept by A (OD2)");
	if (sc == LANDED) {
		unsigned i = NA;
		pthread_t th;

		REQUIRE(pthread_create(&th, NULL, other_wait, NULL) == 0, "thread");
		REQUIRE(pthread_join(th, NULL) == 0, "join");

		/* The private list's leftover first, then the landing (no
		 * borrow, OD8: the list is covered): one tbatch of the
		 * deferred frames (OD5), the rest stay on the deferred list
		 * (OD7), where the reclaimer takes them. */
		while (atomic_load(&ta->ndfree) == NA && i < NX)
			get_put(fx, i++);
		a_extra = i - NA;
		CHECK_EQ(atomic_load(&ta->ndfree), NA - pool->tbatch,
			 "A's landing moved one tbatch of its deferred frames (OD5)");
		a_private = atomic_load(&ta->nfree);
		CHECK(a_private <= 2 * pool->tbatch,
		      "A's private list holds %u frames after its landing, bound %u (OD7)", a_private,
		      2 * pool->tbatch);
	}
	pthread_mutex_lock(&mu);
	a_ready = true;
	pthread_cond_broadcast(&cv);
	while (!a_exit)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void read_y(enum scenario sc)
{
	unsigned char buf[PS];

	for (unsigned i = 0; i < NB; i++) {
		if (sc == PREAD)
			REQUIRE(lpc_pread(fy, buf, PS, (uint64_t)i * PS) == (ssize_t)PS, "pread %u", i);
		else
			get_put(fy, i);
	}
}

static void run(enum scenario sc, const char *px, const char *py)
{
	struct lpc_config cfg;
	struct lpc_stats s0, s1, s2;
	struct lpc_pool_census cs;
	struct lpc_tcache *t;
	pthread_t th;
	unsigned cached;
	int rc = -EAGAIN;

	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_kb = LPC_READAHEAD_OFF; /* one page per miss, no thread */
	REQUIRE(lpc_cache_create(&cfg, &cache) == 0, "cache");
	pool = &cache->pool;
	fx = tst_file_open(cache, px, O_RDONLY);
	fy = tst_file_open(cache, py, O_RDONLY);
	a_ready = a_exit = false;
	a_extra = 0;

	if (sc == PREAD) {
		unsigned char buf[PS];

		for (unsigned i = 0; i < NA; i++)
			REQUIRE(lpc_pread(fx, buf, PS, (uint64_t)i * PS) == (ssize_t)PS, "pread X %u",
				i);
		ta = lpc_tcache(&pool->owner);
		REQUIRE(ta, "the thread's block");
		CHECK_EQ(lpc_invalidate(fx, 0, 0), (int)NA, "%s: X's pages invalidated",
			 names[sc]);
		CHECK_EQ(atomic_load(&ta->ndfree), NA, "%s: X's frames kept (OD2)", names[sc]);
	} else {
		REQUIRE(pthread_create(&th, NULL, thread_a, &sc) == 0, "thread A");
		pthread_mutex_lock(&mu);
		while (!a_ready)
			pthread_cond_wait(&cv, &mu);
		pthread_mutex_unlock(&mu);
	}
	lpc_stats(cache, &s0);

	/* Pass 1 reads Y from the backend and leaves the shared list below
	 * `low`: the reclaimer wakes and (RF1) takes A's deferred frames
	 * rather than evicting.  Bounded wait, not a timing: on a loaded
	 * machine it may run after the pass. */
	read_y(sc);
	for (int i = 0; i < 5000 && atomic_load(&ta->ndfree); i++)
		tst_sleep_us(1000);
	CHECK_EQ(atomic_load(&ta->ndfree), 0u, "%s: deferred frames still on the thread's list",
		 names[sc]);
	for (int pass = 2; pass <= 3; pass++) {
		lpc_stats(cache, &s1);
		read_y(sc);
		lpc_stats(cache, &s2);
		CHECK_EQ(s2.reads - s1.reads, 0u, "%s: pass %d read Y's pages from the backend again",
			 names[sc], pass);
	}
	CHECK_EQ(s2.evictions - s0.evictions, 0u, "%s: pages evicted while %u + %u fit %u frames",
		 names[sc], NA, NB, NFRAMES);

	/* Every frame is free or caches Y (or the landing's X pages). */
	cached = NB + a_extra;
	for (int i = 0; i < 10000 && (rc = lpc_pool_census(pool, cached, &cs)) == -EAGAIN; i++)
		tst_sleep_us(1000);
	CHECK_EQ(rc, 0, "%s: census of a quiet pool", names[sc]);
	CHECK_EQ(cs.total + cached, NFRAMES, "%s: census: free frames + cached pages", names[sc]);
	t = lpc_tcache(&pool->owner);
	CHECK(t && atomic_load(&t->ndfree) == 0, "%s: the reader keeps no deferred frames",
	      names[sc]);

	if (sc != PREAD) {
		pthread_mutex_lock(&mu);
		a_exit = true;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
		REQUIRE(pthread_join(th, NULL) == 0, "join A");
	}
	CHECK_EQ(lpc_file_close(fx), 0);
	CHECK_EQ(lpc_file_close(fy), 0);
	tst_cache_destroy(cache);
}

int main(int argc, char **argv)
{
	char px[600], py[600];

	tst_init(argc, argv, 100);
	tst_require_tmpdir();
	REQUIRE(tst_make_sparse("hoardx", 4096ull * PS, px, sizeof(px)) == 0, "file X");
	REQUIRE(tst_make_sparse("hoardy", 4096ull * PS, py, sizeof(py)) == 0, "file Y");
	run(IDLE, px, py);
	run(PREAD, px, py);
	run(LANDED, px, py);
	return tst_finish();
}
