/* SPDX-License-Identifier: MIT */
/*
 * att_mark_lock.c - readahead.c A2 (cda600f): a marker hit now waits for
 * f->ra_lock (pthread_mutex_lock) where it only tried it.  Can a thread now
 * block for long, or deadlock?
 *
 * What the code says (read for this review): lpc_ra_on_mark is called from
 * lpc_filemap_get_pages only (miss.c: a hit, a page in flight in lockless
 * mode before M6's wait, a page waited for), with the caller's reference
 * on the marked page and nothing else held: no page lock, no RCU read
 * section (R5 ended it), no index or tree lock (filemap_lookup_locked
 * drops tree_rwlock before it returns).  Under ra_lock its holders
 * (lpc_ra_on_miss, lpc_ra_on_mark; lpc_ra_cut only tries it) scan the
 * stream table and call lpc_ra_window_cap, which takes w->lock; no holder
 * of w->lock takes ra_lock, and w->lock is never held across a read
 * (ra_read drops it), a frame wait or a grace period (ra_start_thread
 * waits on a condition variable, which drops it).  The read of the window
 * (lpc_filemap_ra_window: frames, page locks, LOCKED mode's read, the sync
 * backend) comes after the unlock.  So no cycle, and the wait is bounded by
 * a table scan plus one w->lock hold.  A plain hit (optimistic.h: RA_MARK
 * goes the slow way; pin.c the same) never reaches the lock.
 *
 * Part 1, deterministic (LPC_DEBUG: yield point A2, after the lock is
 * taken): G takes stream A's marker (page 2) and is parked at A2 holding
 * f->ra_lock; meanwhile other threads, each with 2 s to return, do on the
 * same file: a hit by lpc_pread (page 5) and by lpc_page_get (page 1010),
 * a lpc_pin of cached pages, a miss with no stream (page 500), the miss
 * that continues stream B (1033: its trylock fails, S1), lpc_fadvise
 * WILLNEED [1500, 1600) (lpc_ra_cut only tries), lpc_invalidate of [20, 26)
 * (pages of A's window) and lpc_ra_quiesce.  Each must return while G is
 * parked.  H, B's marker hit (page 1002), waits (A2 as designed) and must
 * return once G goes on.  Both lookup modes.
 * Part 2, stress: 2 scanners (their markers), 2 random readers of cached
 * and absent pages (lpc_pread, lpc_page_get, lpc_pin), 1 thread that
 * invalidates and WILLNEEDs, on a 512-frame cache (reclaim busy), 3 s per
 * lookup mode; run it with LPC_YIELD=all LPC_YIELD_PROB=0.05 too.  A hang
 * is the watchdog's exit 1.
 * Exit 1 while a defect stands (a probe blocked, a hang, a read failed),
 * 0 if A2 holds, 77 without LPC_DEBUG (part 1 needs the yield point).
 *
 * Run: make VARIANT=asan out-asan/att_mark_lock && out-asan/att_mark_lock
 */
#include <fcntl.h>

#include "../common/lpc_test.h"
#include "../common/yield_stop.h"
#include "cache/cache.h"

#define PS 4096u

enum op { OP_PREAD, OP_GET, OP_PIN, OP_WILLNEED, OP_INVAL, OP_QUIESCE };

struct probe {
	const char *what;
	struct lpc_file *f;
	enum op op;
	uint64_t index, n;
	bool stop_me;
	_Atomic bool done;
	long rc;
	pthread_t th;
};

static void *probe_main(void *arg)
{
	struct probe *p = arg;
	char buf[PS];
	struct lpc_page *pg, *pins[16];

	if (p->stop_me)
		tst_stop_me();
	switch (p->op) {
	case OP_PREAD:
		p->rc = lpc_pread(p->f, buf, PS, p->index * PS) == (ssize_t)PS ? 0 : -1;
		break;
	case OP_GET:
		p->rc = lpc_page_get(p->f, p->index, 0, &pg);
		if (!p->rc)
			lpc_page_put(pg);
		break;
	case OP_PIN:
		p->rc = lpc_pin(p->f, p->index * PS, p->n * PS, LPC_PIN_READ, pins, 16);
		if (p->rc == (long)p->n) {
			lpc_unpin(pins, (unsigned)p->n, LPC_PIN_READ);
			p->rc = 0;
		}
		break;
	case OP_WILLNEED:
		p->rc = lpc_fadvise(p->f, p->index * PS, p->n * PS, LPC_FADV_WILLNEED);
		break;
	case OP_INVAL:
		p->rc = lpc_invalidate(p->f, p->index * PS, p->n * PS) < 0 ? -1 : 0;
		break;
	case OP_QUIESCE:
		lpc_ra_quiesce(p->f);
		p->rc = 0;
		break;
	}
	atomic_store(&p->done, true);
	return NULL;
}

static bool wait_done(struct probe *p, int ms)
{
	for (int i = 0; i < ms && !atomic_load(&p->done); i++)
		usleep(1000);
	return atomic_load(&p->done);
}

static void read_one(struct lpc_file *f, uint64_t index)
{
	char buf[PS];

	REQUIRE(lpc_pread(f, buf, PS, index * PS) == (ssize_t)PS, "read of page %llu",
		(unsigned long long)index);
}

static void part1(int mode)
{
	const char *name = mode == LPC_LOOKUP_LOCKED ? "LOCKED" : "lockless";
	struct probe g = { "G: A's marker", .op = OP_PREAD, .index = 2, .stop_me = true };
	struct probe h = { "H: B's marker", .op = OP_PREAD, .index = 1002 };
	struct probe pr[] = {
		{ "hit (lpc_pread 5)", .op = OP_PREAD, .index = 5 },
		{ "hit (lpc_page_get 1010)", .op = OP_GET, .index = 1010 },
		{ "lpc_pin [8, 16)", .op = OP_PIN, .index = 8, .n = 8 },
		{ "miss, no stream (500)", .op = OP_PREAD, .index = 500 },
		{ "miss continuing B (1033)", .op = OP_PREAD, .index = 1033 },
		{ "WILLNEED [1500, 1600)", .op = OP_WILLNEED, .index = 1500, .n = 100 },
		{ "invalidate [20, 26)", .op = OP_INVAL, .index = 20, .n = 6 },
		{ "lpc_ra_quiesce", .op = OP_QUIESCE },
	};
	unsigned np = sizeof(pr) / sizeof(pr[0]);
	struct lpc_cache *c;
	struct lpc_file *f;
	char path[512];

	tst_readahead_kb = 0;
	c = tst_cache_create(1024 * PS, PS, LPC_IO_NULL, mode);
	REQUIRE(tst_make_sparse(mode == LPC_LOOKUP_LOCKED ? "ml" : "m", 2000 * PS, path,
				sizeof(path)) == 0);
	f = tst_file_open(c, path, O_RDONLY);
	g.f = h.f = f;
	for (unsigned i = 0; i < np; i++)
		pr[i].f = f;
	/* Streams A at 0 and B at 1000: windows [1, 33) and [1001, 1033),
	 * markers on 2 and 1002 (regress_ra_mark_lock.c). */
	read_one(f, 0);
	read_one(f, 1);
	read_one(f, 1000);
	read_one(f, 1001);
	lpc_ra_quiesce(f);
	tst_stop_arm(LPC_YP_A2);
	REQUIRE(pthread_create(&g.th, NULL, probe_main, &g) == 0);
	REQUIRE(tst_stop_wait(), "%s: G parked at A2 (f->ra_lock held)", name);
	CHECK(pthread_mutex_trylock(&f->ra_lock) == EBUSY, "%s: ra_lock held by G", name);
	for (unsigned i = 0; i < np; i++) {
		REQUIRE(pthread_create(&pr[i].th, NULL, probe_main, &pr[i]) == 0);
		CHECK(wait_done(&pr[i], 2000),
		      "%s: %s blocked for 2 s while a marker hit holds f->ra_lock (A2)", name,
		      pr[i].what);
		if (atomic_load(&pr[i].done))
			CHECK_EQ(pr[i].rc, 0, "%s: %s", name, pr[i].what);
	}
	REQUIRE(pthread_create(&h.th, NULL, probe_main, &h) == 0);
	usleep(100000);
	printf("%s: B's marker hit %s while G holds ra_lock (A2 waits, as designed)\n", name,
	       atomic_load(&h.done) ? "returned" : "waits");
	tst_stop_release();
	CHECK(wait_done(&g, 5000), "%s: G did not return after its release", name);
	CHECK(wait_done(&h, 5000), "%s: H (B's marker) did not return after G let go", name);
	for (unsigned i = 0; i < np; i++)
		if (wait_done(&pr[i], 5000))
			pthread_join(pr[i].th, NULL);
	pthread_join(g.th, NULL);
	pthread_join(h.th, NULL);
	tst_stop_disarm();
	CHECK_EQ(g.rc, 0, "%s: G's read", name);
	CHECK_EQ(h.rc, 0, "%s: H's read", name);
	lpc_ra_quiesce(f);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

/* --- part 2: stress --- */

#define FPAGES 8192u
static _Atomic bool stop;
static _Atomic long bad;

struct worker {
	struct lpc_file *f;
	int kind; /* 0 scanner, 1 random reader, 2 invalidate + WILLNEED */
	uint64_t seed, from;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t s = w->seed, pos = w->from;
	char buf[4 * PS];
	struct lpc_page *pg, *pins[4];

	while (!atomic_load(&stop)) {
		uint64_t i = tst_rnd(&s) % (FPAGES - 8);

		switch (w->kind) {
		case 0:
			if (lpc_pread(w->f, buf, sizeof(buf), pos * PS) != (ssize_t)sizeof(buf))
				atomic_fetch_add(&bad, 1);
			pos += 4;
			if (pos + 4 > w->from + FPAGES / 2)
				pos = w->from;
			break;
		case 1:
			switch (tst_rnd(&s) % 3) {
			case 0:
				if (lpc_pread(w->f, buf, PS, i * PS) != (ssize_t)PS)
					atomic_fetch_add(&bad, 1);
				break;
			case 1:
				if (lpc_page_get(w->f, i, 0, &pg) == 0)
					lpc_page_put(pg);
				else
					atomic_fetch_add(&bad, 1);
				break;
			default:
				if (lpc_pin(w->f, i * PS, 4 * PS, LPC_PIN_READ, pins, 4) == 4)
					lpc_unpin(pins, 4, LPC_PIN_READ);
				else
					atomic_fetch_add(&bad, 1);
			}
			break;
		default:
			if (tst_rnd(&s) & 1)
				(void)lpc_invalidate(w->f, i * PS, 64 * PS);
			else
				(void)lpc_fadvise(w->f, i * PS, 64 * PS, LPC_FADV_WILLNEED);
			usleep(200);
		}
	}
	return NULL;
}

static void part2(int mode)
{
	const char *name = mode == LPC_LOOKUP_LOCKED ? "LOCKED" : "lockless";
	struct worker w[5];
	pthread_t th[5];
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_stats st;
	char path[512];

	tst_readahead_kb = 0;
	c = tst_cache_create(512 * PS, PS, LPC_IO_NULL, mode);
	REQUIRE(tst_make_sparse(mode == LPC_LOOKUP_LOCKED ? "sl" : "s", (uint64_t)FPAGES * PS,
				path, sizeof(path)) == 0);
	f = tst_file_open(c, path, O_RDONLY);
	atomic_store(&stop, false);
	for (int i = 0; i < 5; i++) {
		w[i] = (struct worker){ f, i < 2 ? 0 : i < 4 ? 1 : 2, tst_seed + (uint64_t)i,
					i == 1 ? FPAGES / 2 : 0 };
		REQUIRE(pthread_create(&th[i], NULL, worker_main, &w[i]) == 0);
	}
	tst_sleep_us((unsigned)(tst_stress_seconds(3.0) * 1e6));
	atomic_store(&stop, true);
	for (int i = 0; i < 5; i++)
		pthread_join(th[i], NULL);
	lpc_stats(c, &st);
	printf("%s stress: ra_windows %llu, hits %llu, misses %llu, evictions %llu\n", name,
	       (unsigned long long)st.ra_windows, (unsigned long long)st.hits,
	       (unsigned long long)st.misses, (unsigned long long)st.evictions);
	CHECK_EQ(atomic_load(&bad), 0, "%s stress: failed reads", name);
	CHECK(st.ra_windows > 0, "%s stress: markers fired (windows read)", name);
	lpc_ra_quiesce(f);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 120);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield point A2): make VARIANT=asan");
	tst_require_tmpdir();
	part1(LPC_LOOKUP_LOCKLESS);
	part1(LPC_LOOKUP_LOCKED);
	part2(LPC_LOOKUP_LOCKLESS);
	part2(LPC_LOOKUP_LOCKED);
	return tst_finish();
}
