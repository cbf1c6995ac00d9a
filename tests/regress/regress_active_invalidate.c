/* SPDX-License-Identifier: MIT */
/*
 * regress_active_invalidate.c - CLOCK2's active count against the fast
 * invalidate (reclaim/evict.c, rule ACTIVE-COUNT; remove.c's
 * invalidate_one_fast, radix.c FD1-FD3).
 *
 * The evictor decides a promotion or a demotion at E3, under f's index
 * lock, where "p cannot leave".  The fast invalidate removes a page under
 * its radix leaf's lock alone, so it could: between E3's look at the slot
 * and the policy's change of ACTIVE, an invalidate froze p, deleted it and
 * freed it, and the free (page/alloc.c deferred_prep) took p out of the
 * count.  Then
 *   (a) demote: the evictor cleared ACTIVE again and decremented nactive
 *       a second time: the count went 1 -> 0 -> UINT32_MAX, and CLOCK2
 *       saw itself above its target for ever (every hot page demoted:
 *       scan resistance lost);
 *   (b) promote: the evictor set ACTIVE on the freed frame and counted it;
 *       the allocator clears the flags when it hands the frame out again,
 *       with no decrement: the count stays one above the pages marked
 *       active for ever (the target reached with fewer hot pages).
 * Each story stops the evictor at the yield point E3P (after E3, before
 * the policy), lets lpc_invalidate remove the page through its fast path,
 * then lets the evictor go and compares pool->nactive with a walk of the
 * descriptors.  Before the fix (the policy's change of ACTIVE under the
 * leaf's lock too, with the slot checked there) both stories fail.
 *
 * Usage: regress_active_invalidate [--seed N]   Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>

#include "../common/lpc_test.h"
#include "../common/yield_stop.h"
#include "cache/cache.h"

#define PS 4096u
#define NFRAMES 64u

static struct lpc_cache *c;
static struct lpc_file *f;

/* Pages that carry ACTIVE: in an index (ref > 0), and, separately, frames
 * that are free or in transit (ref 0) and still carry it. */
static void walk(uint32_t *live, uint32_t *freed)
{
	*live = *freed = 0;
	for (uint32_t i = 0; i < c->pool.nframes; i++) {
		struct lpc_page *p = &c->pool.pages[i];

		if (!(atomic_load(&p->flags) & LPC_PG_ACTIVE))
			continue;
		if (atomic_load(&p->ref))
			(*live)++;
		else
			(*freed)++;
	}
}

static void *evictor_main(void *arg)
{
	struct lpc_tcache *t;
	struct lpc_page *p;

	(void)arg;
	/* A registered thread with its block (an API call does both). */
	if (lpc_page_find(f, 1, &p) == 0)
		lpc_page_put(p);
	t = lpc_tcache(&c->pool.owner);
	REQUIRE(t, "thread block");
	tst_stop_me();
	lpc_reclaim_evict(&c->reclaim, 4, t);
	return NULL;
}

static void setup(const char *path)
{
	struct lpc_config cfg;

	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_kb = LPC_READAHEAD_OFF; /* no page but the story's */
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	REQUIRE(c->reclaim.policy == LPC_RECLAIM_CLOCK2, "CLOCK2 is the default");
	f = tst_file_open(c, path, O_RDONLY);
}

static void teardown(void)
{
	lpc_file_close(f);
	lpc_cache_destroy(c);
}

/* demote: page 0 active and not referenced, the target 0. */
static void story(const char *path, bool demote)
{
	const char *what = demote ? "demote" : "promote";
	struct lpc_page *p, *p0 = NULL, *held;
	struct lpc_tcache *t;
	pthread_t et;
	uint32_t live, freed;

	setup(path);
	/* Pages 0 and 1, referenced (a hit each). */
	for (uint64_t i = 0; i < 2; i++) {
		REQUIRE(lpc_page_get(f, i, 0, &p) == 0, "get %" PRIu64, i);
		lpc_page_put(p);
		REQUIRE(lpc_page_find(f, i, &p) == 0, "hit %" PRIu64, i); /* REFERENCED */
		lpc_page_put(p);
		if (i == 0)
			p0 = p;
	}
	lpc_reclaim_stop(&c->reclaim); /* only the story's evictor from here */
	t = lpc_tcache(&c->pool.owner);
	REQUIRE(t, "thread block");
	if (demote) {
		/* Both promoted first (E3); then the target 0: an active page
		 * not referenced since is demoted while one is active. */
		for (int i = 0; i < 8 && atomic_load(&c->pool.nactive) < 2; i++)
			lpc_reclaim_evict(&c->reclaim, 1, t);
		REQUIRE(atomic_load(&c->pool.nactive) == 2, "pages 0 and 1 promoted");
		/* Rule WS-TARGET-BOUNDS: the bound too, a plain field the
		 * reclaimer reads: written with no reclaimer thread (a
		 * pending list's kick may have started it again). */
		lpc_reclaim_stop(&c->reclaim);
		c->pool.ws.min = 0;
		atomic_store(&c->pool.ws.target, 0);
	}
	/* Page 1 held from here: E1 skips it, and page 0's leaf keeps
	 * another entry, so its invalidate takes the fast path (FD2). */
	REQUIRE(lpc_page_find(f, 1, &held) == 0, "hold 1");
	REQUIRE((lpc_page_flags(p0) & (LPC_PG_ACTIVE | LPC_PG_REFERENCED)) ==
			(demote ? LPC_PG_ACTIVE : LPC_PG_REFERENCED),
		"page 0 %s", demote ? "active, not referenced" : "inactive, referenced");
	tst_stop_arm(LPC_YP_E3P);
	REQUIRE(pthread_create(&et, NULL, evictor_main, NULL) == 0, "evictor");
	REQUIRE(tst_stop_wait(), "%s: the evictor reached E3P", what);
	/* The evictor holds f's index lock, p in its slot; the fast path
	 * needs the leaf's lock only. */
	CHECK_EQ(lpc_invalidate(f, 0, PS), 1, "%s: page 0 invalidated while the evictor is at E3P",
		 what);
	tst_stop_release();
	pthread_join(et, NULL);
	tst_stop_disarm();

	walk(&live, &freed);
	CHECK_EQ(freed, 0u, "%s: a freed frame carries ACTIVE", what);
	CHECK_EQ(atomic_load(&c->pool.nactive), live,
		 "%s: nactive against the pages marked active, after the invalidate", what);
	/* Every frame handed out again (the flags cleared at hand-out): a
	 * count the frames no longer carry shows here. */
	for (uint64_t i = 2; i < 2 * NFRAMES; i++) {
		REQUIRE(lpc_page_get(f, i, 0, &p) == 0, "get %" PRIu64, i);
		lpc_page_put(p);
	}
	walk(&live, &freed);
	CHECK_EQ(atomic_load(&c->pool.nactive), live + freed,
		 "%s: nactive against the frames marked active, after every frame was reused", what);
	lpc_page_put(held);
	teardown();
}

int main(int argc, char **argv)
{
	char path[512];

	tst_init(argc, argv, 60);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield points)");
	tst_require_tmpdir();
	REQUIRE(tst_make_sparse("active", 4 * NFRAMES * PS, path, sizeof(path)) == 0, "file");
	story(path, true);
	story(path, false);
	tst_rm_dir();
	return tst_finish();
}
