/* SPDX-License-Identifier: MIT */
/*
 * test_guarantees.c - the ordering guarantees of include/lpc/lpc.h, one test
 * function per guarantee, named after it (g_a1_... checks A.1).  Each test
 * states what would make it fail.  Guarantees checked elsewhere are named
 * there too: A.4 by the close-while-lookup regression test, C.3 by
 * test_io_errors.c t_short, G.2 also by test_page_lock.c.
 *
 * Exits 0 pass, 1 fail.  --seed N replays the randomised parts.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

#include "../common/gate_io.h"
#include "../common/lpc_test.h"

#define PS 4096u

static uint64_t seed_state;

struct tfile {
	char path[600];
	uint64_t id, size;
	struct lpc_file *f;
};

static void mk_file(struct lpc_cache *c, struct tfile *t, const char *name, uint64_t size)
{
	REQUIRE(tst_make_sparse(name, size, t->path, sizeof(t->path)) == 0, "%s", name);
	t->id = tst_file_id(t->path);
	t->size = size;
	REQUIRE(lpc_file_open(c, t->path, O_RDONLY, 0, &t->f) == 0, "open %s", name);
}

static bool page_ok(const struct tfile *t, uint64_t index, const struct lpc_page *p)
{
	unsigned char scratch[PS];

	return tst_null_check_page(t->id, index, PS, t->size, lpc_page_data(p), scratch) == 0;
}

static struct lpc_cache *mk_cache(unsigned frames, int mode)
{
	return tst_cache_create((size_t)frames * PS, PS, LPC_IO_NULL, mode);
}

/* Is p the page at f's `index` now?  (The internal lookup, any state.) */
static bool in_index(struct lpc_file *f, uint64_t index, struct lpc_page *p)
{
	struct lpc_page *q = lpc_filemap_lookup(f, index, lpc_file_tcache(f));
	bool same = q == p;

	if (q)
		lpc_page_put(q);
	return same;
}

/* --- A: lookups --------------------------------------------------------- */

struct race {
	struct tfile *t;
	_Atomic bool stop;
	_Atomic unsigned long found, bad_data, bad_identity, dropped_held;
	int mode;
};

static void *invalidator(void *arg)
{
	struct race *r = arg;

	while (!atomic_load(&r->stop)) {
		lpc_invalidate(r->t->f, 0, 0);
		sched_yield();
	}
	return NULL;
}

static void *race_reader(void *arg)
{
	struct race *r = arg;
	uint64_t rng = seed_state ^ (uint64_t)pthread_self();

	while (!atomic_load(&r->stop)) {
		uint64_t index = tst_rnd(&rng) % 16;
		struct lpc_page *p;
		int rc = (tst_rnd(&rng) & 1) ? lpc_page_find(r->t->f, index, &p)
					    : lpc_page_get(r->t->f, index, 0, &p);

		if (rc != 0)
			continue;
		atomic_fetch_add(&r->found, 1);
		/* A.1: the page of (f, index), with its data. */
		if (atomic_load(&p->file) != r->t->f || atomic_load(&p->index) != index)
			atomic_fetch_add(&r->bad_identity, 1);
		if (!page_ok(r->t, index, p))
			atomic_fetch_add(&r->bad_data, 1);
		/* A.3/B.1: held, so the invalidator cannot drop it. */
		sched_yield();
		if (!in_index(r->t->f, index, p))
			atomic_fetch_add(&r->dropped_held, 1);
		lpc_page_put(p);
	}
	return NULL;
}

static void run_race(int mode, struct race *r)
{
	enum { R = 3 };
	struct lpc_cache *c = mk_cache(64, mode);
	struct tfile t;
	pthread_t th[R + 1];

	mk_file(c, &t, mode ? "race-locked" : "race", 16 * PS + 100);
	*r = (struct race){ .t = &t, .mode = mode };
	REQUIRE(pthread_create(&th[R], NULL, invalidator, r) == 0);
	for (int i = 0; i < R; i++)
		REQUIRE(pthread_create(&th[i], NULL, race_reader, r) == 0);
	tst_sleep_us((unsigned)(tst_stress_seconds(0.3) * 1e6 / 2));
	atomic_store(&r->stop, true);
	for (int i = 0; i <= R; i++)
		pthread_join(th[i], NULL);
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* Guarantee A.1: a page returned was at (f, index) during the call and holds
 * its data.  Fails if a lookup racing with removal returns a recycled page. */
static void g_a1_page_in_index_with_its_data(int mode)
{
	struct race r;

	run_race(mode, &r);
	CHECK(atomic_load(&r.found) > 0, "no lookup succeeded");
	CHECK_EQ(atomic_load(&r.bad_identity), 0, "pages of another identity (mode %d)", mode);
	CHECK_EQ(atomic_load(&r.bad_data), 0, "pages with wrong data (mode %d)", mode);
}

/* Guarantee A.3 (and B.1 under concurrency): beside lpc_invalidate, a page
 * returned stays in the index while held.  Fails if invalidate drops it. */
static void g_a3_find_beside_invalidate(int mode)
{
	struct race r;

	run_race(mode, &r);
	CHECK(atomic_load(&r.found) > 0, "no lookup succeeded");
	CHECK_EQ(atomic_load(&r.dropped_held), 0, "invalidate dropped a held page (mode %d)",
		 mode);
}

/* Guarantee A.2: lpc_page_find does not wait for a read in flight.  Fails
 * (by the watchdog) if find waits, or if it returns the page in flight. */
static void g_a2_find_never_waits(int mode)
{
	struct lpc_cache *c = mk_cache(16, mode);
	struct tst_getter g;
	struct lpc_page *p;
	struct tfile t;
	pthread_t th;

	mk_file(c, &t, mode ? "a2-locked" : "a2", 8 * PS);
	tst_gate_install(c);
	tst_gate_close();
	g = (struct tst_getter){ .f = t.f, .index = 3 };
	REQUIRE(pthread_create(&th, NULL, tst_getter_main, &g) == 0);
	if (CHECK(tst_gate_wait_entered(1, 5000), "read never started")) {
		CHECK_EQ(lpc_page_find(t.f, 3, &p), -EAGAIN, "find on a page in flight");
		CHECK_EQ(lpc_page_find(t.f, 4, &p), -ENOENT, "find on an absent page");
		CHECK_EQ(tst_gate_entered(), 1, "find issued a read");
	}
	tst_gate_open(0);
	pthread_join(th, NULL);
	if (CHECK_EQ(g.rc, 0)) {
		CHECK(page_ok(&t, 3, g.p));
		lpc_page_put(g.p);
	}
	if (CHECK_EQ(lpc_page_find(t.f, 3, &p), 0, "find after the read")) {
		CHECK(p == g.p, "another page");
		lpc_page_put(p);
	}
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* Guarantee A.5: one cached copy per file.  Fails if a second open of the
 * same file (by another path) returns another lpc_file. */
static void g_a5_one_copy_per_file(void)
{
	struct lpc_cache *c = mk_cache(16, LPC_LOOKUP_LOCKLESS);
	struct lpc_file *f2 = NULL;
	struct lpc_page *p, *q;
	struct tfile t;
	char link[700];

	mk_file(c, &t, "a5", 4 * PS);
	snprintf(link, sizeof(link), "%s.link", t.path);
	REQUIRE(symlink(t.path, link) == 0);
	REQUIRE(lpc_file_open(c, link, O_RDWR, 0, &f2) == 0);
	CHECK(f2 == t.f, "two lpc_files for one file");
	REQUIRE(lpc_page_get(t.f, 1, 0, &p) == 0);
	if (CHECK_EQ(lpc_page_find(f2, 1, &q), 0, "page not shared by the second open")) {
		CHECK(q == p);
		lpc_page_put(q);
	}
	lpc_page_put(p);
	CHECK_EQ(lpc_file_close(f2), 0);
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* --- B: references ------------------------------------------------------ */

/* Guarantee B.1: invalidate skips held and locked pages.  Fails if it drops
 * either, or if it does not drop the others. */
static void g_b1_invalidate_skips_held_and_locked(int mode)
{
	struct lpc_cache *c = mk_cache(16, mode);
	struct lpc_page *held, *locked, *p;
	struct tfile t;

	mk_file(c, &t, mode ? "b1-locked" : "b1", 8 * PS);
	for (uint64_t i = 0; i < 8; i++) {
		REQUIRE(lpc_page_get(t.f, i, 0, &p) == 0);
		lpc_page_put(p);
	}
	REQUIRE(lpc_page_get(t.f, 2, 0, &held) == 0);
	REQUIRE(lpc_page_get(t.f, 5, 0, &locked) == 0);
	lpc_page_lock(locked);
	lpc_page_put(locked); /* locked, not held: the lock alone must keep it */
	CHECK_EQ(lpc_invalidate(t.f, 0, 0), 6, "dropped");
	CHECK(in_index(t.f, 2, held), "held page dropped");
	CHECK(in_index(t.f, 5, locked), "locked page dropped");
	CHECK(page_ok(&t, 2, held));
	lpc_page_unlock(locked);
	lpc_page_put(held);
	CHECK_EQ(lpc_invalidate(t.f, 0, 0), 2, "dropped once free");
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* Guarantee B.2: a page held across the last close keeps its frame and data
 * until put, while every other frame is recycled.  Fails if its frame is
 * handed out again before the put. */
static void g_b2_held_page_outlives_close(void)
{
	enum { N = 8 };
	struct lpc_cache *c = mk_cache(N, LPC_LOOKUP_LOCKLESS);
	struct lpc_page *held, *pg[N + 1];
	struct tfile a, b;
	int n = 0;

	mk_file(c, &a, "b2-a", 4 * PS);
	mk_file(c, &b, "b2-b", 4 * N * PS);
	REQUIRE(lpc_page_get(a.f, 1, 0, &held) == 0);
	CHECK_EQ(lpc_file_close(a.f), 0);
	/* Cycle every other frame through b, then take them all privately. */
	for (int round = 0; round < 3; round++) {
		for (uint64_t i = 0; i < 4 * N; i++) {
			struct lpc_page *p;
			int rc = lpc_page_get(b.f, i, 0, &p);

			if (rc == -ENOMEM) {
				lpc_invalidate(b.f, 0, 0);
				rc = lpc_page_get(b.f, i, 0, &p);
			}
			if (!CHECK_EQ(rc, 0, "get b %" PRIu64, i))
				continue;
			CHECK(p != held, "the held page reused for b");
			lpc_page_put(p);
		}
		lpc_invalidate(b.f, 0, 0);
	}
	while (n <= N && lpc_page_alloc(c, &pg[n]) == 0) {
		CHECK(pg[n] != held, "the held page handed out by lpc_page_alloc");
		n++;
	}
	CHECK_EQ(n, N - 1, "every other frame allocated");
	CHECK(page_ok(&a, 1, held), "held page's data changed after close");
	for (int i = 0; i < n; i++)
		lpc_page_put(pg[i]);
	lpc_page_put(held);
	CHECK_EQ(lpc_file_close(b.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

struct putter {
	struct lpc_page **pages;
	unsigned n;
};

static void *putter_main(void *arg)
{
	struct putter *pt = arg;

	for (unsigned i = 0; i < pt->n; i++)
		lpc_page_put(pt->pages[i]);
	return NULL;
}

/* Guarantee B.3: one put per reference, from any thread.  Fails if puts from
 * a fresh thread leave a reference behind (destroy says -EBUSY) or a frame
 * lost (frames_free short). */
static void g_b3_put_from_any_thread(void)
{
	enum { N = 16 };
	struct lpc_cache *c = mk_cache(N, LPC_LOOKUP_LOCKLESS);
	struct lpc_page *pg[N];
	struct putter pt = { .pages = pg, .n = N };
	struct lpc_stats st;
	struct tfile t;
	pthread_t th;

	/* The story is about references, not eviction: with eviction on, the
	 * full cache wakes the reclaimer, which can hold a page frozen while
	 * invalidate runs and count it only later (reclaim/ installs it). */
	c->pool.evict = NULL;
	c->pool.wake = NULL;
	mk_file(c, &t, "b3", N * PS);
	for (unsigned i = 0; i < N / 2; i++)
		REQUIRE(lpc_page_get(t.f, i, 0, &pg[i]) == 0);
	for (unsigned i = N / 2; i < N; i++)
		REQUIRE(lpc_page_alloc(c, &pg[i]) == 0);
	REQUIRE(pthread_create(&th, NULL, putter_main, &pt) == 0);
	pthread_join(th, NULL);
	CHECK_EQ(lpc_invalidate(t.f, 0, 0), N / 2, "cached pages still held");
	CHECK_EQ(lpc_file_close(t.f), 0);
	/* The deferred frees land after a grace period: allocate them all. */
	for (unsigned i = 0; i < N; i++)
		CHECK_EQ(lpc_page_alloc(c, &pg[i]), 0, "frame %u", i);
	for (unsigned i = 0; i < N; i++)
		lpc_page_put(pg[i]);
	lpc_stats(c, &st);
	CHECK_EQ(st.frames_free, N);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* Guarantee B.4: destroy with a reference held is -EBUSY and changes
 * nothing.  Fails if destroy frees the cache or breaks it. */
static void g_b4_destroy_busy_changes_nothing(void)
{
	struct lpc_cache *c = mk_cache(16, LPC_LOOKUP_LOCKLESS);
	struct lpc_page *priv, *p, *q;
	struct tfile t;

	mk_file(c, &t, "b4", 4 * PS);
	REQUIRE(lpc_page_get(t.f, 0, 0, &p) == 0);
	CHECK_EQ(lpc_cache_destroy(c), -EBUSY, "destroy with a cached page held");
	CHECK(page_ok(&t, 0, p));
	if (CHECK_EQ(lpc_page_find(t.f, 0, &q), 0, "page gone after a refused destroy")) {
		CHECK(q == p);
		lpc_page_put(q);
	}
	lpc_page_put(p);
	REQUIRE(lpc_page_alloc(c, &priv) == 0);
	CHECK_EQ(lpc_cache_destroy(c), -EBUSY, "destroy with a private page held");
	if (CHECK_EQ(lpc_page_get(t.f, 1, 0, &q), 0, "file unusable after a refused destroy")) {
		CHECK(page_ok(&t, 1, q));
		lpc_page_put(q);
	}
	lpc_page_put(priv);
	CHECK_EQ(lpc_cache_destroy(c), 0, "destroy once nothing is held (file still open)");
}

/* --- C: misses ---------------------------------------------------------- */

struct preader {
	struct lpc_file *f;
	uint64_t off;
	size_t len;
	ssize_t r;
	unsigned char buf[PS];
};

static void *preader_main(void *arg)
{
	struct preader *pr = arg;

	pr->r = lpc_pread(pr->f, pr->buf, pr->len, pr->off);
	return NULL;
}

/*
 * One read held at the gate; W-1 getters and one lpc_pread of the same page
 * join it; then the gate opens with `err`.  Return via out-params.
 */
static void gated_miss(struct lpc_cache *c, struct tfile *t, uint64_t index, int err,
		       struct tst_getter *g, unsigned w, struct preader *pr,
		       struct lpc_stats *s0, struct lpc_stats *s1)
{
	pthread_t th[16], pth;

	tst_gate_close();
	lpc_stats(c, s0);
	g[0] = (struct tst_getter){ .f = t->f, .index = index };
	REQUIRE(pthread_create(&th[0], NULL, tst_getter_main, &g[0]) == 0);
	REQUIRE(tst_gate_wait_entered(1, 5000), "read never started");
	for (unsigned i = 1; i < w; i++) {
		g[i] = (struct tst_getter){ .f = t->f, .index = index };
		REQUIRE(pthread_create(&th[i], NULL, tst_getter_main, &g[i]) == 0);
	}
	pr->f = t->f;
	pr->off = index * PS + 10;
	pr->len = 100;
	REQUIRE(pthread_create(&pth, NULL, preader_main, pr) == 0);
	/* Every waiter holds the page in flight and has counted its miss
	 * (see tst_wait_page_holders for why both). */
	CHECK(tst_wait_page_holders(t->f, index, w + 1, 5000), "waiters never came");
	CHECK(tst_wait_misses(c, s0->misses + w + 1, 5000), "waiters never re-checked");
	tst_gate_open(err);
	for (unsigned i = 0; i < w; i++)
		pthread_join(th[i], NULL);
	pthread_join(pth, NULL);
	tst_gate_clear_error();
	lpc_stats(c, s1);
}

/* Guarantee C.1: one read however many threads miss at once.  Fails if a
 * waiter issues its own read or returns another page. */
static void g_c1_one_read_per_page(int mode)
{
	enum { W = 4 };
	struct lpc_cache *c = mk_cache(32, mode);
	struct tst_getter g[W];
	struct preader pr;
	struct lpc_stats s0, s1;
	struct tfile t;
	unsigned char scratch[PS];

	mk_file(c, &t, mode ? "c1-locked" : "c1", 8 * PS);
	tst_gate_install(c);
	gated_miss(c, &t, 2, 0, g, W, &pr, &s0, &s1);
	for (unsigned i = 0; i < W; i++) {
		if (CHECK_EQ(g[i].rc, 0, "getter %u", i)) {
			CHECK(g[i].p == g[0].p, "getter %u got another page", i);
			lpc_page_put(g[i].p);
		}
	}
	CHECK_EQ(pr.r, 100, "pread waiting on the read");
	tst_null_expect(t.id, 2, PS, t.size, scratch);
	CHECK(!memcmp(pr.buf, scratch + 10, 100), "pread data");
	CHECK_EQ(s1.reads - s0.reads, 1, "reads for %d getters and a pread", W);
	CHECK_EQ(tst_gate_entered(), 1);
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* Guarantee C.2: a failed read fails every waiter, caches nothing, and the
 * next call reads again.  Fails if a waiter gets data (zeros) or 0, or if the
 * failed page stays cached. */
static void g_c2_failed_read_fails_waiters(int mode)
{
	enum { W = 3 };
	struct lpc_cache *c = mk_cache(32, mode);
	struct tst_getter g[W];
	struct preader pr;
	struct lpc_stats s0, s1;
	struct lpc_page *p;
	struct tfile t;
	unsigned char buf[2 * PS];

	mk_file(c, &t, mode ? "c2-locked" : "c2", 8 * PS);
	tst_gate_install(c);
	gated_miss(c, &t, 3, EIO, g, W, &pr, &s0, &s1);
	for (unsigned i = 0; i < W; i++) {
		CHECK_EQ(g[i].rc, -EIO, "getter %u", i);
		if (g[i].rc == 0)
			lpc_page_put(g[i].p);
	}
	CHECK_EQ(pr.r, -EIO, "pread of the failed page");
	CHECK_EQ(s1.reads - s0.reads, 1);
	CHECK_EQ(s1.read_errors - s0.read_errors, 1);
	CHECK_EQ(lpc_page_find(t.f, 3, &p), -ENOENT, "failed page cached");
	/* A later failure ends a pread short before it. */
	REQUIRE(lpc_page_get(t.f, 2, 0, &p) == 0);
	lpc_page_put(p);
	tst_gate_open(EIO);
	CHECK_EQ(lpc_pread(t.f, buf, 200, 3 * PS - 100), 100, "pread short before the failure");
	tst_gate_clear_error();
	CHECK_EQ(lpc_page_find(t.f, 3, &p), -ENOENT, "failed page cached");
	lpc_stats(c, &s0);
	if (CHECK_EQ(lpc_page_get(t.f, 3, 0, &p), 0, "get after the failure")) {
		CHECK(page_ok(&t, 3, p));
		lpc_page_put(p);
	}
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 1, "the next get read again");
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* Guarantee C.4: pread never fails for want of a frame.  Fails if pread
 * returns -ENOMEM with every frame held. */
static void g_c4_pread_reads_around_full_cache(int mode)
{
	enum { N = 4 };
	struct lpc_cache *c = mk_cache(N, mode);
	struct lpc_page *held[N], *p;
	struct lpc_stats s0, s1;
	struct tfile t;
	unsigned char buf[3 * PS], scratch[PS];
	uint64_t bad = 0;

	mk_file(c, &t, mode ? "c4-locked" : "c4", 16 * PS);
	for (int i = 0; i < N; i++)
		REQUIRE(lpc_page_get(t.f, (uint64_t)i, 0, &held[i]) == 0);
	CHECK_EQ(lpc_page_get(t.f, N, 0, &p), -ENOMEM, "get with every frame held");
	lpc_stats(c, &s0);
	CHECK_EQ(lpc_pread(t.f, buf, sizeof(buf), (N + 1) * PS), (long long)sizeof(buf));
	CHECK(tst_null_check_range(t.id, PS, t.size, (N + 1) * PS, buf, sizeof(buf), scratch,
				   &bad), "bad byte at %" PRIu64, bad);
	lpc_stats(c, &s1);
	CHECK_EQ(s1.read_around - s0.read_around, 3);
	for (int i = 0; i < N; i++)
		lpc_page_put(held[i]);
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* --- D: removal --------------------------------------------------------- */

/* Guarantee D.1: invalidate returns what it dropped, and those pages are
 * gone.  Fails on a wrong count or a dropped page still found. */
static void g_d1_invalidate_count_and_gone(int mode)
{
	struct lpc_cache *c = mk_cache(32, mode);
	struct lpc_stats s0, s1;
	struct lpc_page *p;
	struct tfile t;

	mk_file(c, &t, mode ? "d1-locked" : "d1", 12 * PS);
	for (uint64_t i = 0; i < 12; i++) {
		REQUIRE(lpc_page_get(t.f, i, 0, &p) == 0);
		lpc_page_put(p);
	}
	lpc_stats(c, &s0);
	CHECK_EQ(lpc_invalidate(t.f, 2 * PS + 1, 3 * PS), 4, "pages 2..5 overlap the range");
	lpc_stats(c, &s1);
	CHECK_EQ(s1.invalidated - s0.invalidated, 4);
	for (uint64_t i = 0; i < 12; i++) {
		int rc = lpc_page_find(t.f, i, &p);

		CHECK_EQ(rc, i >= 2 && i <= 5 ? -ENOENT : 0, "page %" PRIu64, i);
		if (rc == 0)
			lpc_page_put(p);
	}
	CHECK_EQ(lpc_invalidate(t.f, 0, 0), 8);
	CHECK_EQ(lpc_invalidate(t.f, 0, 0), 0);
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* Guarantee D.2: after the last close nothing of the file is cached.  Fails
 * if a reopen finds a page without reading it. */
static void g_d2_last_close_uncaches(void)
{
	struct lpc_cache *c = mk_cache(32, LPC_LOOKUP_LOCKLESS);
	struct lpc_stats s0, s1;
	struct lpc_file *f2;
	struct lpc_page *p;
	struct tfile t;

	mk_file(c, &t, "d2", 6 * PS);
	REQUIRE(lpc_file_open(c, t.path, O_RDONLY, 0, &f2) == 0);
	for (uint64_t i = 0; i < 6; i++) {
		REQUIRE(lpc_page_get(t.f, i, 0, &p) == 0);
		lpc_page_put(p);
	}
	CHECK_EQ(lpc_file_close(f2), 0);
	if (CHECK_EQ(lpc_page_find(t.f, 0, &p), 0, "a close that was not the last uncached"))
		lpc_page_put(p);
	CHECK_EQ(lpc_file_close(t.f), 0);
	REQUIRE(lpc_file_open(c, t.path, O_RDONLY, 0, &t.f) == 0);
	for (uint64_t i = 0; i < 6; i++)
		CHECK_EQ(lpc_page_find(t.f, i, &p), -ENOENT, "page %" PRIu64 " survived close", i);
	lpc_stats(c, &s0);
	for (uint64_t i = 0; i < 6; i++) {
		REQUIRE(lpc_page_get(t.f, i, 0, &p) == 0);
		lpc_page_put(p);
	}
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 6, "every page read again");
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* --- E: frames ---------------------------------------------------------- */

struct hoarder {
	struct lpc_cache *c;
	unsigned want, got;
	pthread_barrier_t *parked, *release;
};

static void *hoard_main(void *arg)
{
	struct hoarder *h = arg;
	struct lpc_page *pg[64];

	while (h->got < h->want && lpc_page_alloc(h->c, &pg[h->got]) == 0)
		h->got++;
	for (unsigned i = 0; i < h->got; i++)
		lpc_page_put(pg[i]); /* onto this thread's private list */
	if (h->parked) {
		pthread_barrier_wait(h->parked);
		pthread_barrier_wait(h->release);
	}
	return NULL;
}

/* Guarantee E.1: -ENOMEM only when no frame is free anywhere: frames on
 * another (live) thread's private list and frames waiting for a grace period
 * are found first.  Fails if an allocation fails while such frames exist. */
static void g_e1_enomem_only_when_none_free(void)
{
	enum { N = 64 };
	struct lpc_cache *c = mk_cache(N, LPC_LOOKUP_LOCKLESS);
	struct lpc_page *pg[N + 1], *p;
	pthread_barrier_t parked, release;
	struct hoarder h = { .want = N / 2 };
	struct tfile t;
	pthread_t th;
	unsigned n = 0;

	h.c = c;
	h.parked = &parked;
	h.release = &release;
	pthread_barrier_init(&parked, NULL, 2);
	pthread_barrier_init(&release, NULL, 2);
	mk_file(c, &t, "e1", N * PS);
	REQUIRE(pthread_create(&th, NULL, hoard_main, &h) == 0);
	pthread_barrier_wait(&parked);
	/* A quarter cached then dropped: they wait for a grace period. */
	for (uint64_t i = 0; i < N / 4; i++) {
		REQUIRE(lpc_page_get(t.f, i, 0, &p) == 0);
		lpc_page_put(p);
	}
	CHECK_EQ(lpc_invalidate(t.f, 0, 0), N / 4);
	while (n <= N && lpc_page_alloc(c, &pg[n]) == 0)
		n++;
	CHECK_EQ(n, N, "frames allocated before -ENOMEM (hoarder kept %u)", h.got);
	CHECK_EQ(lpc_page_get(t.f, 0, 0, &p), -ENOMEM, "no frame left: -ENOMEM");
	for (unsigned i = 0; i < n; i++)
		lpc_page_put(pg[i]);
	pthread_barrier_wait(&release);
	pthread_join(th, NULL);
	pthread_barrier_destroy(&parked);
	pthread_barrier_destroy(&release);
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* Guarantee E.2: a thread that exits gives its private frames back.  Fails
 * if frames stay on a dead thread's list. */
static void g_e2_thread_exit_returns_frames(void)
{
	enum { N = 32 };
	struct lpc_cache *c = mk_cache(N, LPC_LOOKUP_LOCKLESS);
	struct hoarder h = { .want = N };
	struct lpc_page *pg[N + 1];
	struct lpc_stats st;
	pthread_t th;
	unsigned n = 0;

	h.c = c;
	REQUIRE(pthread_create(&th, NULL, hoard_main, &h) == 0);
	pthread_join(th, NULL);
	CHECK_EQ(h.got, N);
	lpc_stats(c, &st);
	CHECK_EQ(st.frames_free, N, "frames_free after the thread exited");
	while (n <= N && lpc_page_alloc(c, &pg[n]) == 0)
		n++;
	CHECK_EQ(n, N, "frames allocated after the thread exited");
	for (unsigned i = 0; i < n; i++)
		lpc_page_put(pg[i]);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* --- F: counters -------------------------------------------------------- */

struct counter_worker {
	struct lpc_file *f;
	unsigned k;
};

static void *count_main(void *arg)
{
	struct counter_worker *w = arg;
	struct lpc_page *p;

	for (unsigned i = 0; i < w->k; i++) {
		if (lpc_page_find(w->f, 0, &p) == 0) /* a hit */
			lpc_page_put(p);
		(void)lpc_page_find(w->f, 7, &p); /* a miss: never cached */
	}
	return NULL;
}

/* Guarantee F.1: counts are exact once the counting threads are quiet.
 * Fails if a count is lost (a shared counter without atomics, a dead
 * thread's counts dropped). */
static void g_f1_counters_exact_when_quiet(void)
{
	enum { T = 4, K = 5000 };
	struct lpc_cache *c = mk_cache(16, LPC_LOOKUP_LOCKLESS);
	struct counter_worker w[T];
	struct lpc_stats s0, s1;
	struct lpc_page *p;
	struct tfile t;
	pthread_t th[T];

	mk_file(c, &t, "f1", 8 * PS);
	REQUIRE(lpc_page_get(t.f, 0, 0, &p) == 0);
	lpc_page_put(p);
	lpc_stats(c, &s0);
	CHECK_EQ(s0.lookups, s0.hits + s0.misses);
	for (int i = 0; i < T; i++) {
		w[i] = (struct counter_worker){ .f = t.f, .k = K };
		REQUIRE(pthread_create(&th[i], NULL, count_main, &w[i]) == 0);
	}
	for (int i = 0; i < T; i++)
		pthread_join(th[i], NULL); /* exited: their blocks are retired */
	lpc_stats(c, &s1);
	CHECK_EQ(s1.hits - s0.hits, T * K);
	CHECK_EQ(s1.misses - s0.misses, T * K);
	CHECK_EQ(s1.lookups - s0.lookups, 2 * T * K);
	CHECK_EQ(s1.lookups, s1.hits + s1.misses);
	CHECK_EQ(s1.reads - s0.reads, 0);
	CHECK_EQ(s1.frames, 16);
	CHECK_EQ(lpc_file_close(t.f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* --- G: the page lock --------------------------------------------------- */

struct locker {
	struct lpc_page *p;
	unsigned n;
};

static void *lock_main(void *arg)
{
	struct locker *l = arg;

	for (unsigned i = 0; i < l->n; i++) {
		uint64_t *v = lpc_page_data(l->p);

		lpc_page_lock(l->p);
		*v = *v + 1; /* plain: only the lock orders it */
		lpc_page_unlock(l->p);
	}
	return NULL;
}

/* Guarantee G.1 and G.2: exclusion and release/acquire ordering (a plain
 * counter in the frame adds up), and no lost wake-up (the watchdog catches a
 * sleeper never woken).  Also tests/unit/test_page_lock.c. */
static void g_g1_g2_page_lock(void)
{
	enum { T = 4, K = 20000 };
	struct lpc_cache *c = mk_cache(4, LPC_LOOKUP_LOCKLESS);
	struct locker l[T];
	struct lpc_page *p;
	pthread_t th[T];

	REQUIRE(lpc_page_alloc(c, &p) == 0);
	*(uint64_t *)lpc_page_data(p) = 0;
	lpc_page_lock(p); /* they all start asleep: G.2 */
	for (int i = 0; i < T; i++) {
		l[i] = (struct locker){ .p = p, .n = K };
		REQUIRE(pthread_create(&th[i], NULL, lock_main, &l[i]) == 0);
	}
	tst_sleep_us(20000);
	lpc_page_unlock(p);
	for (int i = 0; i < T; i++)
		pthread_join(th[i], NULL);
	lpc_page_lock(p);
	CHECK_EQ(*(uint64_t *)lpc_page_data(p), (uint64_t)T * K, "increments under the lock");
	lpc_page_unlock(p);
	lpc_page_put(p);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

#define RUN(call)                                                                  \
	do {                                                                       \
		unsigned long f0_ = atomic_load(&tst_failed);                      \
		call;                                                              \
		printf("%s %s\n", atomic_load(&tst_failed) == f0_ ? "ok  " : "FAIL", \
		       #call);                                                     \
	} while (0)

int main(int argc, char **argv)
{
	/* Reads and pages are counted page by page here: readahead (its own
	 * tests: test_readahead) would read pages no call asked for. */
	tst_readahead_kb = LPC_READAHEAD_OFF;
	tst_init(argc, argv, 120);
	seed_state = tst_seed;
	for (int mode = LPC_LOOKUP_LOCKLESS; mode <= LPC_LOOKUP_LOCKED; mode++) {
		RUN(g_a1_page_in_index_with_its_data(mode));
		RUN(g_a2_find_never_waits(mode));
		RUN(g_a3_find_beside_invalidate(mode));
		RUN(g_b1_invalidate_skips_held_and_locked(mode));
		RUN(g_c1_one_read_per_page(mode));
		RUN(g_c2_failed_read_fails_waiters(mode));
		RUN(g_c4_pread_reads_around_full_cache(mode));
		RUN(g_d1_invalidate_count_and_gone(mode));
	}
	RUN(g_a5_one_copy_per_file());
	RUN(g_b2_held_page_outlives_close());
	RUN(g_b3_put_from_any_thread());
	RUN(g_b4_destroy_busy_changes_nothing());
	RUN(g_d2_last_close_uncaches());
	RUN(g_e1_enomem_only_when_none_free());
	RUN(g_e2_thread_exit_returns_frames());
	RUN(g_f1_counters_exact_when_quiet());
	RUN(g_g1_g2_page_lock());
	return tst_finish();
}
