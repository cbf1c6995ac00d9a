/* SPDX-License-Identifier: MIT */
/*
 * test_own_borrow.c - a thread's covered front and its borrowing
 * (page/alloc.c OD2, OD7, OD8).  4096 frames (tbatch 32, OD8's cap 32
 * tbatch's: 1024 frames), readahead off, the null backend, one thread that
 * invalidates NP pages and reads them again, as seed 002's loop.  Checked
 * with values:
 *  - the covered front: the thread invalidates A, another thread's grace
 *    period covers it, the thread invalidates B (OD2: A becomes the covered
 *    front, t->dcov, and B goes behind it); the misses on A's pages then
 *    take A's frames with no wait and no borrow, and never one of B's (B's
 *    stamp has not passed; in LPC_DEBUG builds rule DEFERRED-GRACE checks
 *    every frame moved).  Without OD2's front the misses borrow or wait;
 *  - the cap: loops of invalidate + NP private pages (lpc_page_alloc,
 *    which never takes an uncovered frame) + a read of the pages again;
 *    whatever the grace periods, the thread never holds more than the cap
 *    borrowed (t->dborrow), and once at the cap its private pages get only
 *    frames it held before (its own frames, reused: never the shared
 *    list's), with at most one wait of its own per loop (OD4).  Without
 *    the cap it borrowed until OD1's half of the cache.  The reads
 *    (misses) never borrow and never wait (MR1);
 *  - a take of its deferred list (the reclaimer's RT1-RT4) resets the
 *    count (OD6), and the census adds every frame up.
 *
 * Usage: test_own_borrow [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>
#include <time.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

#define PS 4096u
#define NFRAMES 4096u
#define NP 256u /* pages per loop: each of A and B */
#define LOOPS 10u
#define CAP_BATCHES 32u /* alloc.c's LPC_OWN_BORROW_BATCHES */

static struct lpc_file *file;
static unsigned char held[NFRAMES]; /* frames the thread has had (by id) */

/* Another thread's grace period (a landing, a steal's T2, a drain). */
static void *other_wait(void *arg)
{
	bool entered = lpc_rcu_scope_enter();

	lpc_rcu_synchronize();
	lpc_rcu_scope_exit(entered);
	return arg;
}

/* Reads pages [first, first + NP); counts the frames got that are in
 * `in` (by id; NULL: none) and those the thread never had before. */
static void read_range(unsigned first, const unsigned char *in, unsigned *n_in, unsigned *n_new)
{
	struct lpc_page *p;

	*n_in = *n_new = 0;
	for (unsigned i = first; i < first + NP; i++) {
		REQUIRE(lpc_page_get(file, i, 0, &p) == 0, "get %u", i);
		REQUIRE(p->id < NFRAMES, "frame id %u", p->id);
		if (in && in[p->id])
			(*n_in)++;
		if (!held[p->id])
			(*n_new)++;
		held[p->id] = 1;
		lpc_page_put(p);
	}
}

/* Allocates NP private pages (lpc_page_alloc: never an uncovered frame,
 * MR1 being for misses), held until all are had, then put; counts those
 * the thread never had before. */
static void alloc_range(struct lpc_cache *c, unsigned *n_new)
{
	static struct lpc_page *pv[NP];

	*n_new = 0;
	for (unsigned i = 0; i < NP; i++) {
		REQUIRE(lpc_page_alloc(c, &pv[i]) == 0, "private page %u", i);
		REQUIRE(pv[i]->id < NFRAMES, "frame id %u", pv[i]->id);
		if (!held[pv[i]->id])
			(*n_new)++;
		held[pv[i]->id] = 1;
	}
	for (unsigned i = 0; i < NP; i++)
		lpc_page_put(pv[i]);
}

/* Marks the frames caching pages [first, first + NP) in set (and as had). */
static void frames_of(unsigned first, unsigned char *set)
{
	struct lpc_page *p;

	memset(set, 0, NFRAMES);
	for (unsigned i = first; i < first + NP; i++) {
		REQUIRE(lpc_page_get(file, i, 0, &p) == 0, "get %u", i);
		set[p->id] = 1;
		held[p->id] = 1;
		lpc_page_put(p);
	}
}

int main(int argc, char **argv)
{
	static unsigned char fa[NFRAMES], fb[NFRAMES];
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_pool *pool;
	struct lpc_tcache *t;
	struct lpc_pool_census cs;
	char path[600];
	unsigned n_in, n_new, b0, cap, capped = 0;
	uint32_t fr, pend;
	uint64_t gp0;
	pthread_t th;
	int rc = -EAGAIN;

	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	REQUIRE(tst_make_sparse("ownborrow", 4 * NP * PS, path, sizeof(path)) == 0, "file");
	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_kb = LPC_READAHEAD_OFF; /* one page per miss, no thread */
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	pool = &c->pool;
	file = tst_file_open(c, path, O_RDONLY);
	cap = CAP_BATCHES * pool->tbatch;
	REQUIRE(pool->tbatch == 32u, "tbatch %u", pool->tbatch);

	/* The covered front (OD2, OD7). */
	frames_of(0, fa);
	frames_of(NP, fb);
	t = lpc_tcache(&pool->owner);
	REQUIRE(t, "thread block");
	CHECK_EQ(lpc_invalidate(file, 0, (uint64_t)NP * PS), (int)NP, "invalidate A");
	REQUIRE(pthread_create(&th, NULL, other_wait, NULL) == 0, "thread");
	REQUIRE(pthread_join(th, NULL) == 0, "join");
	CHECK_EQ(lpc_invalidate(file, (uint64_t)NP * PS, (uint64_t)NP * PS), (int)NP,
		 "invalidate B");
	CHECK_EQ(atomic_load(&t->ndfree), 2 * NP, "A and B kept");
	CHECK_EQ(t->dcov, NP, "A is the covered front (OD2)");
	gp0 = atomic_load(&lpc_rcu_gp_begun);
	b0 = t->dborrow;
	read_range(0, fa, &n_in, &n_new);
	CHECK_EQ(atomic_load(&lpc_rcu_gp_begun) - gp0, 0u, "waits though A was covered");
	CHECK_EQ(t->dborrow, b0, "borrowed though A was covered");
	CHECK(n_in + pool->tbatch >= NP, "the misses got %u of A's frames", n_in);
	read_range(0, fb, &n_in, &n_new); /* hits now: which frames cache A */
	CHECK_EQ(n_in, 0u, "B's frames, not covered yet, taken");
	read_range(2 * NP, fb, &n_in, &n_new); /* pages never read: misses too */
	CHECK(atomic_load(&lpc_rcu_gp_begun) - gp0 <= 1u, "more than one wait for B");

	/* The cap (OD8): loops of invalidate, private pages, and a read of
	 * the same pages again (misses: MR1, no borrow, no wait). */
	for (unsigned loop = 0; loop < LOOPS; loop++) {
		bool at_cap = t->dborrow + pool->tbatch > cap;
		unsigned b1;

		CHECK_EQ(lpc_invalidate(file, 0, (uint64_t)NP * PS), (int)NP, "invalidate, loop %u",
			 loop);
		gp0 = atomic_load(&lpc_rcu_gp_begun);
		alloc_range(c, &n_new);
		CHECK(t->dborrow <= cap, "loop %u: %u frames borrowed, cap %u", loop, t->dborrow,
		      cap);
		if (at_cap) {
			capped++;
			CHECK_EQ(n_new, 0u, "loop %u, at the cap: frames the thread never had", loop);
			CHECK(atomic_load(&lpc_rcu_gp_begun) - gp0 <= 1u,
			      "loop %u, at the cap: more than one wait", loop);
		}
		b1 = t->dborrow;
		gp0 = atomic_load(&lpc_rcu_gp_begun);
		read_range(0, NULL, &n_in, &n_new);
		CHECK_EQ(t->dborrow, b1, "loop %u: the misses borrowed", loop);
		CHECK_EQ(atomic_load(&lpc_rcu_gp_begun) - gp0, 0u, "loop %u: the misses waited", loop);
	}
	CHECK(capped >= 2, "the thread reached the cap in %u loops only (%u borrowed)", capped,
	      t->dborrow);

	/* OD6: the reclaimer's take of the deferred lists resets the count
	 * (the loop's misses used the list up: one more invalidate). */
	CHECK_EQ(lpc_invalidate(file, 0, (uint64_t)NP * PS), (int)NP, "invalidate before the take");
	CHECK(atomic_load(&t->ndfree) >= NP, "deferred frames before the take");
	lpc_page_deferred_take(pool, &fr, &pend);
	CHECK_EQ(atomic_load(&t->ndfree), 0u, "deferred frames left after the take");
	CHECK_EQ(t->dborrow, 0u, "the take left the borrowed count");
	for (int i = 0; i < 10000 && (rc = lpc_pool_census(pool, NP, &cs)) == -EAGAIN; i++)
		tst_sleep_us(1000);
	CHECK_EQ(rc, 0, "census of a quiet pool");
	CHECK_EQ(cs.total + NP, NFRAMES, "census: free frames + cached pages");

	CHECK_EQ(lpc_file_close(file), 0);
	tst_cache_destroy(c);
	return tst_finish();
}
