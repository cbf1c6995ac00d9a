/* SPDX-License-Identifier: MIT */
/*
 * opt_stale_mark.c - F2: an optimistic reader's lpc_page_mark_referenced
 * (filemap/optimistic.h, after O5) writes the flags of ANOTHER file's page
 * when the frame it read was invalidated and cached again in between by the
 * remover's own miss (page/alloc.c MR1).
 *
 * After O5 accepts the copy the reader holds no reference and re-loads the
 * flags to mark the page referenced (K.2: "writes no shared line but, once,
 * the page's REFERENCED bit").  Before MR1-MR5 a grace period kept the frame
 * free (or the same page) until the reader's section ended, so a late mark
 * fell on a free frame whose flags the allocator clears.  Now it can fall
 * on a page a miss just cached for another file: that page is born
 * REFERENCED (evict.c: "a miss never does"; CLOCK2 promotes it on its first
 * sweep instead of evicting it), and one read ahead and unused loses RA
 * (lpc_page_ra_used: ra_used counted for a page nobody used, and neither
 * its first use nor its eviction is counted later).
 *
 * No yield point lies between O5's check and the mark, so the reader (R) is
 * parked with a signal at a random instruction of its loop of optimistic
 * reads of f's page 0 (lpc_filemap_read_optimistic called directly, inside
 * its own read section, no fallback).  Per round, with R parked:
 *   the test thread invalidates f's page 0 (frame p, kept on its deferred
 *   list; its private list was emptied first) and gets g's page j: the miss
 *   reuses p at once (MR1).  It lets R go, waits for R to finish two more
 *   reads, and looks at REFERENCED on g's page j, which it holds and which
 *   nothing but a stale mark can have set (no hit on g, no evictor).  Then
 *   it puts it, invalidates it, and gets f's page 0 again (frame p again).
 * A round whose signal landed after O5's slot check and before the mark
 * shows the defect; about one round in ten does on a quiet machine.
 * Exit: 1 if any of ROUNDS rounds saw a stale mark (the defect), 77 if no
 * round reused the frame (MR1 absent), 0 if none saw one (with the defect present, P(no hit in 400 rounds) is negligible, but
 * this is a probability: the count of rounds that landed is printed).
 *
 * Usage: opt_stale_mark [--seed N]
 */
#include <pthread.h>
#include <signal.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"
#include "core/debug.h"
#include "filemap/optimistic.h"

#define PS 4096u
#define NFRAMES 512u
#define NPRIV 64u
#define ROUNDS 400u
/* The page R reads; a control build (-DOSM_READ_INDEX=7: a page never
 * cached, so R never marks anything) must see no stale mark. */
#ifndef OSM_READ_INDEX
#define OSM_READ_INDEX 0
#endif

static struct lpc_file *f;
static _Atomic int parked, go, stop;
static _Atomic unsigned long reads;
static pthread_t rt;

static void on_sig(int sig)
{
	(void)sig;
	atomic_store(&parked, 1);
	while (!atomic_load(&go))
		;
	atomic_store(&parked, 0);
}

static void fn(const void *data, size_t len, void *arg)
{
	(void)len;
	*(unsigned char *)arg = *(const unsigned char *)data;
}

static void *r_main(void *arg)
{
	struct lpc_page *p;
	unsigned char b;

	(void)arg;
	if (lpc_page_find(f, 0, &p) == 0) /* registers the thread */
		lpc_page_put(p);
	while (!atomic_load(&stop)) {
		lpc_rcu_read_lock();
		(void)lpc_filemap_read_optimistic(f, OSM_READ_INDEX, fn, &b);
		lpc_rcu_read_unlock();
		atomic_fetch_add(&reads, 1);
	}
	return NULL;
}

static void park_r(void)
{
	atomic_store(&go, 0);
	pthread_kill(rt, SIGUSR1);
	while (!atomic_load(&parked))
		;
}

static void release_r(void)
{
	unsigned long n;

	atomic_store(&go, 1);
	while (atomic_load(&parked))
		;
	n = atomic_load(&reads);
	while (atomic_load(&reads) < n + 2)
		;
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_page *p, *q, *priv[NPRIV];
	struct lpc_tcache *t;
	struct sigaction sa;
	char fpath[600], gpath[600];
	unsigned npriv = 0, stale = 0, reused = 0;
	struct lpc_file *g;

	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	REQUIRE(tst_make_sparse("osm-f", 8 * PS, fpath, sizeof(fpath)) == 0, "file f");
	REQUIRE(tst_make_sparse("osm-g", 8 * PS, gpath, sizeof(gpath)) == 0, "file g");
	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.lookup_mode = LPC_LOOKUP_LOCKLESS;
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	c->pool.wake = NULL; /* no evictor: nothing else touches REFERENCED */
	f = tst_file_open(c, fpath, O_RDONLY);
	g = tst_file_open(c, gpath, O_RDONLY);
	REQUIRE(lpc_page_get(f, 0, 0, &p) == 0, "f's page 0");
	lpc_page_put(p);
	t = lpc_tcache(&c->pool.owner);
	REQUIRE(t, "thread block");
	while (atomic_load(&t->nfree) && npriv < NPRIV)
		REQUIRE(lpc_page_alloc(c, &priv[npriv++]) == 0, "private page");
	REQUIRE(atomic_load(&t->nfree) == 0, "the private list is not empty");

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sig;
	sigemptyset(&sa.sa_mask);
	REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction");
	REQUIRE(pthread_create(&rt, NULL, r_main, NULL) == 0, "R");
	while (atomic_load(&reads) < 100)
		tst_sleep_us(100);

	for (unsigned r = 0; r < ROUNDS; r++) {
		uint64_t j = 1 + r % 6;

		park_r();
		REQUIRE(lpc_invalidate(f, 0, PS) == 1, "round %u: invalidate of f's page 0", r);
		REQUIRE(lpc_page_get(g, j, 0, &q) == 0, "round %u: g's page %" PRIu64, r, j);
		reused += q == p;
		release_r();
		if (lpc_page_flags(q) & LPC_PG_REFERENCED) {
			if (!stale)
				printf("round %u: g's page %" PRIu64 " (frame %u), just read by a "
				       "miss and never hit, is REFERENCED\n",
				       r, j, q->id);
			stale++;
		}
		lpc_page_put(q);
		REQUIRE(lpc_invalidate(g, j * PS, PS) == 1, "round %u: invalidate of g", r);
		REQUIRE(lpc_page_get(f, 0, 0, &p) == 0, "round %u: f's page 0 again", r);
		lpc_page_put(p);
	}
	atomic_store(&stop, 1);
	atomic_store(&go, 1);
	pthread_join(rt, NULL);
	printf("%u rounds, %u reused f's frame for g at once (MR1), %u with a stale mark on "
	       "g's page\n",
	       ROUNDS, reused, stale);
	if (!reused) {
		printf("SKIP: no round reused f's frame for g (MR1 absent)\n");
		return 77;
	}
	CHECK_EQ(stale, 0u, "an optimistic read of f marked g's new page REFERENCED");

	for (unsigned i = 0; i < npriv; i++)
		lpc_page_put(priv[i]);
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_file_close(g), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
	return tst_finish();
}
