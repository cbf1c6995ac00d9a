/* SPDX-License-Identifier: MIT */
/*
 * test_own_defer.c - lpc_invalidate keeps its frames for its own thread
 * (page/alloc.c OD1-OD6, lpc_page_keep_removed_chain).  Checked with values:
 *  - an invalidate of fewer than half the frames keeps every one on the
 *    thread's deferred list (ndfree), puts none on pending and hands none to
 *    call_rcu, and the census counts them (FRAMES-ACCOUNTED: free + pending
 *    + private + deferred + in use == total);
 *  - the thread's next misses take those frames at once (MR1): no grace
 *    period, no borrow, one deferred frame per own frame used, and the
 *    pages read back byte for byte;
 *  - private pages (lpc_page_alloc), the list not covered yet and the
 *    shared list full, never get one of those frames: they borrow from
 *    the shared list (OD8) instead of waiting: no grace period, the
 *    deferred list left whole, t->dborrow counts the borrowed frames
 *    (test_own_borrow: the cap, and the one wait that lands the list once
 *    the cap is reached);
 *  - after a wait of another thread's that began after the second
 *    invalidate, private pages land the list with no wait of their own
 *    (OD3's shortcut, core/rcu.h GC1-GC3) (in LPC_DEBUG builds rule
 *    DEFERRED-GRACE checks every frame moved);
 *  - a thread that invalidates and exits leaves its frames on pending and
 *    kicks (OD6): a bounded wait sees pending drained and every frame free
 *    but the cached ones (no frame stranded on a dead thread's list);
 *  - after all that every frame can be had.
 *
 * Usage: test_own_defer [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>
#include <time.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

#define PS 4096u
#define NFRAMES 1024u
#define NPAGES 128u /* well under half the frames: all kept */

static struct lpc_file *file;
static uint64_t file_id;
static unsigned char *scratch;

static uint32_t npending(struct lpc_pool *pool)
{
	uint32_t n;

	pthread_mutex_lock(&pool->free_lock);
	n = pool->npending;
	pthread_mutex_unlock(&pool->free_lock);
	return n;
}

/* A thread that caches pages [NPAGES, 2 NPAGES), invalidates them and
 * exits: its deferred frames must not stay with its dead block. */
static void *invalidate_and_exit(void *arg)
{
	struct lpc_page *p;
	int *dropped = arg;

	for (unsigned i = NPAGES; i < 2 * NPAGES; i++) {
		REQUIRE(lpc_page_get(file, i, 0, &p) == 0, "get %u", i);
		lpc_page_put(p);
	}
	*dropped = lpc_invalidate(file, (uint64_t)NPAGES * PS, (uint64_t)NPAGES * PS);
	return NULL;
}

static bool is_one_of(const struct lpc_page *p, struct lpc_page *const *set, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		if (set[k] == p)
			return true;
	return false;
}

/* The frames on t's deferred list (the owner's, quiet: no taker runs). */
static unsigned deferred_frames(struct lpc_tcache *t, struct lpc_page **out, unsigned max)
{
	unsigned n = 0;

	for (struct lpc_page *q = t->dfree; q && n < max; q = q->next)
		out[n++] = q;
	return n;
}

/* Another thread's grace period (a landing, a steal's T2, a drain). */
static void *other_wait(void *arg)
{
	bool entered = lpc_rcu_scope_enter();

	lpc_rcu_synchronize();
	lpc_rcu_scope_exit(entered);
	return arg;
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_pool *pool;
	struct lpc_tcache *t;
	struct lpc_page *p, *frames[NPAGES], *priv[NPAGES], *deferred[NFRAMES];
	struct lpc_pool_census cs;
	struct lpc_stats s;
	char path[600];
	uint32_t pend0;
	unsigned b0;
	uint64_t gp0;
	unsigned mine = 0, bad = 0, nd, ndef;
	int dropped, rc = -EAGAIN;
	pthread_t th;

	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	scratch = malloc(PS);
	REQUIRE(scratch);
	REQUIRE(tst_make_sparse("owndefer", 4 * NPAGES * PS, path, sizeof(path)) == 0, "file");
	file_id = tst_file_id(path);
	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_kb = LPC_READAHEAD_OFF; /* one page per miss, no thread */
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	pool = &c->pool;
	file = tst_file_open(c, path, O_RDONLY);

	for (unsigned i = 0; i < NPAGES; i++) {
		REQUIRE(lpc_page_get(file, i, 0, &p) == 0, "get %u", i);
		frames[i] = p;
		lpc_page_put(p);
	}
	t = lpc_tcache(&pool->owner);
	REQUIRE(t, "thread block");
	pend0 = npending(pool);

	/* OD1-OD2: all kept, nothing on pending, no call_rcu batch. */
	dropped = lpc_invalidate(file, 0, (uint64_t)NPAGES * PS);
	CHECK_EQ(dropped, (int)NPAGES, "pages invalidated");
	CHECK_EQ(atomic_load(&t->ndfree), NPAGES, "frames kept by the invalidating thread");
	CHECK_EQ(npending(pool), pend0, "kept frames went to pending");
	CHECK_EQ(atomic_load(&pool->batches_in_flight), 0u, "a call_rcu batch in flight");
	for (int i = 0; i < 10000 && (rc = lpc_pool_census(pool, 0, &cs)) == -EAGAIN; i++)
		tst_sleep_us(1000);
	CHECK_EQ(rc, 0, "census of a quiet pool");
	CHECK_EQ(cs.total, NFRAMES, "census: every frame free (deferred ones counted)");
	CHECK(cs.private_frames >= NPAGES, "census: the deferred frames as the thread's");
	lpc_stats(c, &s);
	CHECK_EQ(s.frames_free, (uint64_t)NFRAMES, "frames_free counts the deferred frames");

	/* MR1: the next misses take the thread's own frames, not covered
	 * yet, with no grace period and no borrow (the private list's
	 * leftover refill first). */
	gp0 = atomic_load(&lpc_rcu_gp_begun);
	b0 = t->dborrow;
	for (unsigned i = 0; i < NPAGES; i++) {
		REQUIRE(lpc_page_get(file, i, 0, &p) == 0, "get again %u", i);
		if (is_one_of(p, frames, NPAGES))
			mine++;
		if (tst_null_check_page(file_id, i, PS, 4 * NPAGES * PS, lpc_page_data(p), scratch))
			bad++;
		lpc_page_put(p);
	}
	CHECK_EQ(bad, 0u, "pages read back on the thread's own reused frames");
	CHECK(mine + pool->tbatch >= NPAGES, "the misses got only %u of the thread's own frames",
	      mine);
	CHECK_EQ(atomic_load(&t->ndfree), NPAGES - mine, "one deferred frame per own frame used");
	CHECK_EQ(t->dborrow, b0, "MR1: the misses borrowed");
	CHECK_EQ(atomic_load(&lpc_rcu_gp_begun) - gp0, 0u, "MR1: the misses waited for a grace period");

	/* OD8: private pages (lpc_page_alloc) never take an uncovered frame:
	 * they borrow from the shared list (the private list's leftover
	 * first) instead of waiting, and the deferred list stays whole. */
	CHECK_EQ(lpc_invalidate(file, 0, (uint64_t)NPAGES * PS), (int)NPAGES, "invalidate again");
	nd = atomic_load(&t->ndfree);
	CHECK_EQ(nd, 2 * NPAGES - mine, "the second chain kept");
	ndef = deferred_frames(t, deferred, NFRAMES);
	CHECK_EQ(ndef, nd, "walk of the deferred list");
	gp0 = atomic_load(&lpc_rcu_gp_begun);
	b0 = t->dborrow;
	mine = 0;
	for (unsigned i = 0; i < NPAGES; i++) {
		REQUIRE(lpc_page_alloc(c, &priv[i]) == 0, "private page %u", i);
		if (is_one_of(priv[i], deferred, ndef))
			mine++;
	}
	CHECK_EQ(mine, 0u, "private pages got %u uncovered deferred frames", mine);
	CHECK_EQ(atomic_load(&t->ndfree), nd, "the deferred list is whole (nothing landed)");
	CHECK(t->dborrow - b0 + pool->tbatch >= NPAGES && t->dborrow - b0 <= NPAGES &&
		      (t->dborrow - b0) % pool->tbatch == 0,
	      "OD8 borrowed %u frames for %u private pages (tbatch %u)", t->dborrow - b0, NPAGES,
	      pool->tbatch);
	CHECK_EQ(atomic_load(&lpc_rcu_gp_begun) - gp0, 0u, "grace periods waited for, not borrowed");
	for (unsigned i = 0; i < NPAGES; i++)
		lpc_page_put(priv[i]);

	/* OD3's shortcut: a wait another thread paid after the invalidate
	 * (here a plain lpc_rcu_synchronize) covers the list, and private
	 * pages land its front (after the private list's leftover) with no
	 * wait of their own. */
	REQUIRE(pthread_create(&th, NULL, other_wait, NULL) == 0, "thread");
	REQUIRE(pthread_join(th, NULL) == 0, "join");
	gp0 = atomic_load(&lpc_rcu_gp_begun);
	b0 = t->dborrow;
	mine = 0;
	for (unsigned i = 0; i < NPAGES; i++) {
		REQUIRE(lpc_page_alloc(c, &priv[i]) == 0, "private page again %u", i);
		if (is_one_of(priv[i], deferred, ndef))
			mine++;
	}
	CHECK_EQ(atomic_load(&lpc_rcu_gp_begun) - gp0, 0u,
		 "grace periods waited for though another's covered the list");
	CHECK_EQ(t->dborrow, b0, "borrowed though the list was covered");
	CHECK(mine + 2 * pool->tbatch >= NPAGES, "private pages got %u of the covered frames", mine);
	CHECK_EQ(atomic_load(&t->ndfree), nd - mine, "landed frames left the deferred list");
	for (unsigned i = 0; i < NPAGES; i++)
		lpc_page_put(priv[i]);
	/* Cached again for the checks below (NFRAMES - NPAGES free). */
	for (unsigned i = 0; i < NPAGES; i++) {
		REQUIRE(lpc_page_get(file, i, 0, &p) == 0, "get a third time %u", i);
		if (tst_null_check_page(file_id, i, PS, 4 * NPAGES * PS, lpc_page_data(p), scratch))
			bad++;
		lpc_page_put(p);
	}
	CHECK_EQ(bad, 0u, "pages read back a third time");

	/* OD6: an exiting thread's deferred frames reach pending, and its
	 * kick has them drained (bounded wait, not a timing). */
	REQUIRE(pthread_create(&th, NULL, invalidate_and_exit, &dropped) == 0, "thread");
	REQUIRE(pthread_join(th, NULL) == 0, "join");
	CHECK_EQ(dropped, (int)NPAGES, "pages invalidated by the exiting thread");
	for (int i = 0; i < 10000 && npending(pool); i++)
		tst_sleep_us(1000);
	CHECK_EQ(npending(pool), 0u, "an exited thread's deferred frames stranded on pending");
	for (int i = 0; i < 10000; i++) {
		lpc_stats(c, &s);
		if (s.frames_free == NFRAMES - NPAGES)
			break;
		tst_sleep_us(1000);
	}
	CHECK_EQ(s.frames_free, (uint64_t)(NFRAMES - NPAGES), "frames free after the exit");

	CHECK_EQ(lpc_invalidate(file, 0, (uint64_t)NPAGES * PS), (int)NPAGES, "last invalidate");
	CHECK_EQ(tst_frames_allocatable(c, NFRAMES), NFRAMES, "every frame allocatable");
	CHECK_EQ(lpc_file_close(file), 0);
	tst_cache_destroy(c);
	free(scratch);
	return tst_finish();
}
