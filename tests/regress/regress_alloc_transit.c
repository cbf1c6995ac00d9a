/* SPDX-License-Identifier: MIT */
/*
 * regress_alloc_transit.c - frames in transit to the pending list or to
 * call_rcu (commit 62bc225, "no -ENOMEM while a frame
 * is in transit to the pending list or call_rcu").
 *
 * page/alloc.c promises that -ENOMEM means no frame was free anywhere.  Two
 * windows once broke the promise: a frame that a thread P is freeing is, for
 * a moment, on no list a reclaimer reads.  Each story holds every other frame
 * of the cache, parks P inside its window at a yield point (a hook, not a
 * sleep), and has another thread Q allocate.  Q must get the frame P is
 * freeing: it may wait for P, it must not fail.
 *
 * Story 1, the final put (yield point C0).
 *   1. Page 0 is cached and held by the test; the last close of its file
 *      removes it from the index, so the holder's reference is the last one.
 *      Every other frame is allocated and held: the cache is full.
 *   2. P puts page 0: ref goes 1 -> 0 (lpc_page_release_last), and P stops at
 *      C0, before C puts the frame on the pending list.
 *   3. Q allocates: the shared list is empty, nothing is pending, no batch is
 *      in flight.  The old reclaim returned -ENOMEM at once, though the frame
 *      was on its way.  Now P's free runs inside a read section, so Q's grace
 *      period (T2) waits for P, and Q's next round finds the frame.
 *
 * Story 2, the batch hand-off (yield point C1).
 *   1. 64 pages held by the test; the last close of their file removes them
 *      from the index, so the holder's references are the last ones.  Every
 *      other frame is held.
 *   2. P puts them: each is deferred (C), and the 64th C hands the pending
 *      batch to call_rcu.  P stops at C1: the batch is counted in
 *      batches_in_flight and free_lock dropped, but call_rcu has not queued
 *      it.  (Until lpc_invalidate freed through pending alone, P invalidated
 *      64 cached pages here.)
 *   3. Q allocates, sees the batch in flight and waits with rcu_barrier,
 *      which waited for nothing (the batch was not queued), found nothing and
 *      tried again: the old code ended 64 such rounds with -ENOMEM.  Now the
 *      hand-off runs inside a read section, and Q's T2 waits for it.
 *
 * Story 3, an invalidate's gang on its way to pending (yield point C).
 *   1. 64 cached pages nobody holds; every other frame is held.
 *   2. P invalidates them: a gang is frozen and deleted (A, B) under one
 *      index lock, and P stops at C in lpc_page_free_removed_chain, before
 *      the gang's chain is on pending: its frames are on no list.
 *   3. Q allocates: nothing free, nothing pending, no batch in flight.  The
 *      gang's frames are in transit inside P's read section, so Q's T2 waits
 *      for P, and Q's next round takes them from pending.
 *
 * Each story also checks that Q began at most one reclaim round (its T2 yield
 * points) while P was parked: Q waits for P's read section instead of
 * spinning.
 *
 * Usage: regress_alloc_transit [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"
#include "core/debug.h"

#define PS 4096u
#define NFRAMES 128u
#define PARK_MS 1500 /* how long P stays parked if Q does not return first */

static _Atomic int park_at = -1;      /* the point P parks at, once */
static _Atomic bool parked, go;
static _Atomic unsigned q_rounds;     /* reclaim rounds Q began */
static __thread bool is_p, is_q;

/* Runs at the armed yield points (C0, C1, T2), in any thread. */
static void hook(enum lpc_yield_point yp)
{
	int want = (int)yp;

	if (yp == LPC_YP_T2 && is_q)
		atomic_fetch_add(&q_rounds, 1);
	if (!is_p || !atomic_compare_exchange_strong(&park_at, &want, -1))
		return;
	atomic_store(&parked, true);
	while (!atomic_load(&go))
		tst_sleep_us(1000);
}

struct story {
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_page *held;           /* story 1: the page P puts */
	struct lpc_page *held64[64];     /* story 2: the pages P puts */
	unsigned nheld;
	struct lpc_page *priv[NFRAMES];  /* private pages filling the cache */
	unsigned npriv;
	int q_rc;
	_Atomic bool q_done;
	struct lpc_page *q_page;
};

static void *p_main(void *arg)
{
	struct story *s = arg;

	is_p = true;
	if (s->held) {
		lpc_page_put(s->held);			/* story 1 */
	} else if (s->nheld) {
		for (unsigned i = 0; i < s->nheld; i++)	/* story 2 */
			lpc_page_put(s->held64[i]);
	} else {
		int n = lpc_invalidate(s->f, 0, 0);	/* story 3 */

		CHECK_EQ(n, 64, "story 3: P invalidates every cached page");
	}
	return NULL;
}

static void *q_main(void *arg)
{
	struct story *s = arg;

	is_q = true;
	s->q_rc = lpc_page_alloc(s->c, &s->q_page);
	atomic_store(&s->q_done, true);
	return NULL;
}

/* Allocates private pages until none is left. */
static void fill(struct story *s)
{
	struct lpc_page *p;

	while (s->npriv < NFRAMES && lpc_page_alloc(s->c, &p) == 0)
		s->priv[s->npriv++] = p;
}

static void run(struct story *s, enum lpc_yield_point point, const char *name)
{
	pthread_t pt, qt;
	bool done_while_parked;
	unsigned rounds_while_parked;
	uint64_t t0;
	char armed[32];

	atomic_store(&parked, false);
	atomic_store(&go, false);
	atomic_store(&q_rounds, 0);
	atomic_store(&park_at, (int)point);
	lpc_yield_set_hook(hook);
	snprintf(armed, sizeof(armed), "%s,T2", lpc_yield_name(point));
	REQUIRE(lpc_yield_arm(armed, 1.0, 1) == 0, "arm %s", armed);
	REQUIRE(pthread_create(&pt, NULL, p_main, s) == 0, "%s", name);
	t0 = tst_now_ns();
	while (!atomic_load(&parked)) {
		REQUIRE(tst_now_ns() - t0 < 10000000000ull, "%s: P never reached its window", name);
		tst_sleep_us(1000);
	}
	REQUIRE(pthread_create(&qt, NULL, q_main, s) == 0, "%s", name);
	t0 = tst_now_ns();
	while (!atomic_load(&s->q_done) && tst_now_ns() - t0 < PARK_MS * 1000000ull)
		tst_sleep_us(1000);
	done_while_parked = atomic_load(&s->q_done);
	rounds_while_parked = atomic_load(&q_rounds);
	atomic_store(&go, true);
	pthread_join(pt, NULL);
	pthread_join(qt, NULL);
	lpc_yield_arm(NULL, 0, 0);
	lpc_yield_set_hook(NULL);

	CHECK(!done_while_parked || s->q_rc == 0,
	      "%s: Q returned %d while the frame was in transit", name, s->q_rc);
	CHECK_EQ(s->q_rc, 0, "%s: Q must get the frame P was freeing", name);
	CHECK(rounds_while_parked <= 1,
	      "%s: Q ran %u reclaim rounds while P was parked (should wait for it)", name,
	      rounds_while_parked);
	if (s->q_rc == 0)
		lpc_page_put(s->q_page);
}

static void story_setup(struct story *s, const char *path)
{
	struct lpc_config cfg;

	memset(s, 0, sizeof(*s));
	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	/* The stories count frames: only the pages they get are cached. */
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	REQUIRE(lpc_cache_create(&cfg, &s->c) == 0, "cache");
	/* The stories need cached pages that fill() cannot evict: turn
	 * eviction off (reclaim/ installs it in the pool at create). */
	s->c->pool.evict = NULL;
	s->c->pool.wake = NULL;
	REQUIRE(lpc_file_open(s->c, path, O_RDONLY, 0, &s->f) == 0, "open");
}

static void story_teardown(struct story *s)
{
	for (unsigned i = 0; i < s->npriv; i++)
		lpc_page_put(s->priv[i]);
	if (s->f)
		CHECK_EQ(lpc_file_close(s->f), 0);
	CHECK_EQ(lpc_cache_destroy(s->c), 0, "every frame came back");
}

/* Story 1: the final put of a page that is no longer cached. */
static void story_final_put(const char *path)
{
	struct story s;
	struct lpc_page *p;

	story_setup(&s, path);
	REQUIRE(lpc_page_get(s.f, 0, 0, &s.held) == 0, "page 0");
	CHECK_EQ(lpc_file_close(s.f), 0, "the last close uncaches page 0");
	s.f = NULL;
	fill(&s);
	CHECK_EQ(s.npriv, NFRAMES - 1, "every frame but page 0's is held");
	CHECK_EQ(lpc_page_alloc(s.c, &p), -ENOMEM, "the cache is full");
	run(&s, LPC_YP_C0, "story 1 (final put, C0)");
	story_teardown(&s);
}

/* Story 2: a pending batch on its way to call_rcu. */
static void story_submit(const char *path)
{
	struct story s;

	story_setup(&s, path);
	for (uint64_t i = 0; i < 64; i++)
		REQUIRE(lpc_page_get(s.f, i, 0, &s.held64[i]) == 0, "page %" PRIu64, i);
	s.nheld = 64;
	CHECK_EQ(lpc_file_close(s.f), 0, "the last close uncaches the held pages");
	s.f = NULL;
	fill(&s);
	CHECK_EQ(s.npriv, NFRAMES - 64, "every frame but the held ones is held");
	run(&s, LPC_YP_C1, "story 2 (batch hand-off, C1)");
	story_teardown(&s);
}

/* Story 3: an invalidate's gang on its way to pending. */
static void story_gang(const char *path)
{
	struct story s;
	struct lpc_page *p;

	story_setup(&s, path);
	for (uint64_t i = 0; i < 64; i++) {
		REQUIRE(lpc_page_get(s.f, i, 0, &p) == 0, "page %" PRIu64, i);
		lpc_page_put(p); /* the index keeps it: ref 1 */
	}
	fill(&s);
	CHECK_EQ(s.npriv, NFRAMES - 64, "every frame but the cached ones is held");
	run(&s, LPC_YP_C, "story 3 (an invalidate's gang, C)");
	story_teardown(&s);
}

int main(int argc, char **argv)
{
	char path[600];

	tst_init(argc, argv, 100);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield points)");
	REQUIRE(tst_make_sparse("transit", 256 * PS, path, sizeof(path)) == 0, "file");
	story_final_put(path);
	story_submit(path);
	story_gang(path);
	return tst_finish();
}
