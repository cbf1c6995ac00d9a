/* SPDX-License-Identifier: MIT */
/*
 * regress_ra_mark_lock.c - two streams' marker hits at once (readahead.c
 * A1-A2): the second must still start its stream's next window.
 *
 * test_readahead's t_two_streams_share failed once in CI ("both streams'
 * next windows in flight": page 1097 0x0, reads 7 of 8, ra_async 3 of 4):
 * its two readers, one per stream, reach their markers (pages 33 and 1033)
 * at about the same time.  lpc_ra_on_mark only tried f->ra_lock: the
 * reader whose try came while the other held the lock (scanning the stream
 * table, sizing its window under QS1's w->lock) returned at once.  Its
 * marker was taken (A1: exactly one thread sees it), so nothing would ever
 * start that window: the scanner's next miss read it at the device.  (Made
 * certain there by a 3 ms sleep under the lock in lpc_ra_on_mark: that
 * failure, exactly, on every run.)  The interleaving, both lookup modes:
 *   1. this thread starts two streams, A at page 0 and B at 1000 (misses
 *      of 0, 1 and 1000, 1001: windows [1, 33) and [1001, 1033), markers on
 *      pages 2 and 1002);
 *   2. G reads page 2, A's marker, and is stopped at A2 with f->ra_lock
 *      held (yield point A2);
 *   3. H reads page 1002, B's marker: it takes the marker (A1) and comes
 *      to A2's lock while G holds it; this thread waits until H returns
 *      or 500 ms pass;
 *   4. G goes on; both are joined.
 * Now H waits for the lock (A2) and reads B's window [1033, 1097) after
 * G's [33, 97): both windows cached, two marker windows counted.  Before,
 * H returned at step 3 having started nothing: page 1033 absent, one window
 * counted (checked when written).
 */
#include <fcntl.h>

#include "../common/lpc_test.h"
#include "../common/yield_stop.h"
#include "cache/cache.h"

#define PS 4096u

struct reader {
	struct lpc_file *f;
	uint64_t index;
	bool stop_me;
	_Atomic bool done;
	ssize_t rc;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	char buf[PS];

	if (r->stop_me)
		tst_stop_me();
	r->rc = lpc_pread(r->f, buf, PS, r->index * PS);
	atomic_store(&r->done, true);
	return NULL;
}

static bool cached(struct lpc_file *f, uint64_t index)
{
	struct lpc_page *p;

	lpc_rcu_read_lock();
	p = lpc_radix_lookup(&f->tree, index, NULL);
	lpc_rcu_read_unlock();
	return p != NULL;
}

static void read_one(struct lpc_file *f, uint64_t index)
{
	char buf[PS];

	REQUIRE(lpc_pread(f, buf, PS, index * PS) == (ssize_t)PS, "read of page %llu",
		(unsigned long long)index);
}

static void story(int mode)
{
	const char *name = mode == LPC_LOOKUP_LOCKED ? "LOCKED" : "lockless";
	struct reader g = { .index = 2, .stop_me = true }, h = { .index = 1002 };
	struct lpc_stats before, after;
	struct lpc_cache *c;
	struct lpc_file *f;
	pthread_t gt, ht;
	bool h_early;
	char path[512];

	tst_readahead_kb = 0; /* readahead on: the default */
	c = tst_cache_create(1024 * PS, PS, LPC_IO_NULL, mode);
	REQUIRE(tst_make_sparse(mode == LPC_LOOKUP_LOCKED ? "m_l" : "m", 2000 * PS, path,
				sizeof(path)) == 0,
		"file");
	f = tst_file_open(c, path, O_RDONLY);
	g.f = h.f = f;
	/* 1: streams A and B, their markers on 2 and 1002. */
	read_one(f, 0);
	read_one(f, 1);
	read_one(f, 1000);
	read_one(f, 1001);
	REQUIRE(cached(f, 32) && !cached(f, 33) && cached(f, 1032) && !cached(f, 1033),
		"%s: the first windows [1, 33) and [1001, 1033)", name);
	lpc_stats(c, &before);
	/* 2: G at A2, A's marker taken, f->ra_lock held. */
	tst_stop_arm(LPC_YP_A2);
	REQUIRE(pthread_create(&gt, NULL, reader_main, &g) == 0, "G");
	REQUIRE(tst_stop_wait(), "%s: G stopped at A2", name);
	/* 3: H hits B's marker meanwhile. */
	REQUIRE(pthread_create(&ht, NULL, reader_main, &h) == 0, "H");
	for (int ms = 0; ms < 500 && !atomic_load(&h.done); ms++)
		usleep(1000);
	h_early = atomic_load(&h.done);
	/* 4 */
	tst_stop_release();
	pthread_join(gt, NULL);
	pthread_join(ht, NULL);
	tst_stop_disarm();
	lpc_ra_quiesce(f);
	lpc_stats(c, &after);
	CHECK(g.rc == (ssize_t)PS && h.rc == (ssize_t)PS, "%s: the reads: %zd, %zd", name, g.rc,
	      h.rc);
	CHECK(!h_early, "%s: H's marker hit returned while G held the stream table", name);
	CHECK(cached(f, 33), "%s: A's next window [33, ...) read", name);
	CHECK(cached(f, 1033), "%s: B's next window [1033, ...) read: its marker was taken and "
			       "started nothing",
	      name);
	CHECK_EQ(after.ra_windows - before.ra_windows, 2, "%s: both markers' windows", name);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 60);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield points)");
	tst_require_tmpdir();
	story(LPC_LOOKUP_LOCKLESS);
	story(LPC_LOOKUP_LOCKED);
	return tst_finish();
}
