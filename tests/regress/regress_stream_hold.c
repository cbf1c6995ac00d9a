/* SPDX-License-Identifier: MIT */
/*
 * regress_stream_hold.c - a stream's look-ahead evicted between its run's
 * hand-out and the stream's hold (stream.c ST2, ST4 b; run.c W2).
 *
 * test_stream_hold's evict case failed once in CI under yield injection
 * ("257 pages of A read for 256 entries"): stream_flush handed a run to
 * the readahead threads and only then took the stream's reference on each
 * of its pages by a lookup.  In between, the run's read could complete
 * (its pages enter unreferenced, RA: inactive, evicted first) and eviction
 * take the page; the lookup found nothing, the stream held nothing, and the
 * consumer read the page again.  The interleaving:
 *   1. G opens a stream over one cold page and calls lpc_stream_next: the
 *      fill finds the page absent and flushes its run (ST2): the run's page
 *      is inserted LOCKED (U3) and handed to the readers (W2);
 *   2. G is stopped right after the hand-out (yield point ST2);
 *   3. the run's read completes (lpc_ra_quiesce: the file's queued run is
 *      read, every job of the file done; LOCKED mode read it inside the
 *      window call already) and this thread evicts (lpc_reclaim_evict)
 *      until the page is gone or a bound of rounds passed;
 *   4. G goes on and takes its entry.
 * Now the stream's reference is taken at W2, before the hand-out, from the
 * run's own pages: at step 3 the page has a holder (ref 2) and eviction
 * skips it; G's entry is a hit, and the page is read once.  Before, step 3
 * evicted it and G read it twice (checked when written).  Both lookup
 * modes.
 */
#include <fcntl.h>

#include "../common/lpc_test.h"
#include "../common/yield_stop.h"
#include "cache/cache.h"
#include "filemap/stream.h"

#define PS 4096u
#define SALT 23u
#define INDEX 5u

struct g_arg {
	struct lpc_file *f;
	uint64_t index;
	int rc;
	bool bytes_ok;
};

/* G: one lpc_stream_next over one cold page, stopped at ST2. */
static void *g_main(void *arg)
{
	struct g_arg *g = arg;
	struct lpc_stream *s;
	struct lpc_page *p = NULL;
	char want[PS];

	tst_stop_me();
	g->rc = lpc_stream_open(g->f, NULL, NULL,
				&(struct lpc_stream_opts){ .indices = &g->index, .n = 1 }, &s);
	if (g->rc)
		return NULL;
	g->rc = lpc_stream_next(s, &p, NULL);
	if (g->rc == 1 && p) {
		tst_file_bytes(SALT, g->index * PS, want, sizeof(want));
		g->bytes_ok = !memcmp(lpc_page_data(p), want, sizeof(want));
		lpc_page_put(p);
	}
	lpc_stream_close(s);
	return NULL;
}

/* The reference count of page `index` of f if cached, else 0. */
static uint32_t ref_of(struct lpc_file *f, uint64_t index)
{
	struct lpc_page *p;
	uint32_t r = 0;

	lpc_rcu_read_lock();
	p = lpc_radix_lookup(&f->tree, index, NULL);
	if (p)
		r = atomic_load(&p->ref);
	lpc_rcu_read_unlock();
	return r;
}

static void story(int mode)
{
	const char *name = mode == LPC_LOOKUP_LOCKED ? "LOCKED" : "lockless";
	struct lpc_cache *c = tst_cache_create(64 * PS, PS, LPC_IO_SYNC, mode);
	struct g_arg g = { .index = INDEX, .rc = -1 };
	struct lpc_stats before, after;
	struct lpc_tcache *t;
	char path[512];
	unsigned rounds = 0, evicted = 0;
	pthread_t gt;
	uint32_t ref;

	REQUIRE(tst_make_file(mode == LPC_LOOKUP_LOCKED ? "a_l" : "a", 16 * PS, SALT, path,
			      sizeof(path)) == 0,
		"file");
	REQUIRE(lpc_file_open(c, path, O_RDONLY, 0, &g.f) == 0, "open");
	(void)lpc_fadvise(g.f, 0, 0, LPC_FADV_RANDOM); /* the stream's read only */
	t = lpc_tcache(&c->pool.owner);
	REQUIRE(t != NULL, "thread block");

	lpc_stats(c, &before);
	tst_stop_arm(LPC_YP_ST2);
	REQUIRE(pthread_create(&gt, NULL, g_main, &g) == 0, "G");
	REQUIRE(tst_stop_wait(), "%s: G stopped after its run's hand-out (ST2)", name);
	/* 3: the run's read done (its job's reference put), then eviction. */
	lpc_ra_quiesce(g.f);
	REQUIRE(ref_of(g.f, INDEX) >= 1, "%s: the run's page is cached", name);
	while (ref_of(g.f, INDEX) && rounds++ < 64)
		evicted += lpc_reclaim_evict(&c->reclaim, 4, t);
	ref = ref_of(g.f, INDEX);
	printf("  %s: after %u eviction rounds (%u pages evicted) the page has ref %u\n", name,
	       rounds, evicted, ref);
	CHECK_EQ(ref, 2u, "%s: the page has the index's and the stream's references", name);
	tst_stop_release();
	pthread_join(gt, NULL);
	lpc_stats(c, &after);
	CHECK_EQ(g.rc, 1, "%s: G's lpc_stream_next", name);
	CHECK(g.bytes_ok, "%s: G's page has the file's bytes", name);
	CHECK_EQ(after.reads - before.reads, 1,
		 "%s: reads of the page: its look-ahead was evicted before the stream held it",
		 name);
	tst_stop_disarm();
	REQUIRE(lpc_file_close(g.f) == 0, "close");
	REQUIRE(lpc_cache_destroy(c) == 0, "destroy");
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 60);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield points)");
	story(LPC_LOOKUP_LOCKLESS);
	story(LPC_LOOKUP_LOCKED);
	tst_rm_dir();
	return tst_finish();
}
