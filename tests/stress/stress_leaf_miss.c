/* SPDX-License-Identifier: MIT */
/*
 * stress_leaf_miss.c - misses and invalidates of many threads in one file,
 * in leaves of their own and in leaves they share: the fast insert and
 * delete under a radix leaf's lock (index/radix.c FI1-FI4, FD1-FD3) against
 * each other, against the index lock's structural writers (a leaf's first
 * insert makes it, its last delete frees it) and against lockless lookups.
 *
 * K threads; thread t owns the pages of its own range (distinct leaves) and,
 * in a common range, the pages whose index % K == t (every leaf there is
 * shared by all K).  Only a page's owner inserts it (lpc_page_get) or drops
 * it (lpc_invalidate of that one page, or of its whole own range, which
 * empties and frees its leaves), so each owner knows which of its pages are
 * in the index: a get of a page it dropped must read it again and find the
 * right bytes, an invalidate that returned 1 must leave lpc_page_find
 * -ENOENT, and one that returned 0 (a reader held the page) must leave it
 * found.  Other threads look the pages up (lpc_page_find) and check the
 * bytes of what they find.  At the end, when nothing was evicted, the
 * file's count of pages (lpc_file_nrpages: the leaves' counts) equals the
 * pages the owners say are present.  Debug builds run it again with yield
 * injection (FI2 and FD2 among the points: tests/stress/CMakeLists.txt).
 *
 * Usage: stress_leaf_miss [--seed N]; LPC_STRESS_SECONDS (default 4).
 * Exit: 0 pass, 1 fail, 77 skip.
 */
#include "../common/stress.h"
#include "cache/cache.h"

#define PS 4096u
#define KMAX 8
#define OWN 192u    /* pages of a thread's own range: 3 leaves of 64 */
#define SHARED 512u /* the common range: 8 leaves of 64, each shared */

static struct lpc_cache *cache;
static struct lpc_file *file;
static uint64_t file_id, file_size;
static unsigned K;
static uint64_t shared_first; /* the common range starts here */
static bool present[KMAX][OWN + SHARED / 2]; /* the owner's */
static _Atomic unsigned long n_gets, n_reads_again, n_inval, n_inval_held, n_found, n_ranges;

/* The j-th page thread t owns. */
static uint64_t own_page(unsigned t, unsigned j)
{
	if (j < OWN)
		return (uint64_t)t * OWN + j;
	return shared_first + (uint64_t)(j - OWN) * K + t;
}

static unsigned own_pages(void)
{
	return OWN + SHARED / K;
}

static __thread unsigned char scratch[PS];

static bool check_data(struct lpc_page *p, uint64_t index, const char *what)
{
	int rc = tst_null_check_page(file_id, index, PS, file_size, lpc_page_data(p), scratch);

	CHECK_EQ(rc, 0, "%s: page %" PRIu64 " bytes", what, index);
	return rc == 0;
}

static void *worker(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg, n = own_pages();
	uint64_t r = tst_seed * 1000003u + t;

	while (!tst_stopping()) {
		unsigned op = (unsigned)(tst_rnd(&r) % 100), j = (unsigned)(tst_rnd(&r) % n);
		uint64_t index = own_page(t, j);
		struct lpc_page *p = NULL;
		int rc;

		if (op < 45) {
			/* Nobody else inserts our pages: a dropped one is not
			 * in the index until we get it (and read it) again. */
			if (!present[t][j]) {
				rc = lpc_page_find(file, index, &p);
				CHECK_EQ(rc, -ENOENT, "page %" PRIu64 " dropped by its owner is back",
					 index);
				if (rc == 0)
					lpc_page_put(p);
				atomic_fetch_add_explicit(&n_reads_again, 1, memory_order_relaxed);
			}
			rc = lpc_page_get(file, index, 0, &p);
			CHECK_EQ(rc, 0, "get %" PRIu64, index);
			if (rc)
				continue;
			check_data(p, index, "get");
			lpc_page_put(p);
			present[t][j] = true;
			atomic_fetch_add_explicit(&n_gets, 1, memory_order_relaxed);
		} else if (op < 80) {
			rc = lpc_invalidate(file, index * PS, PS);
			CHECK(rc == 0 || rc == 1, "invalidate %" PRIu64 ": %d", index, rc);
			if (rc == 1) {
				CHECK(present[t][j], "invalidate dropped page %" PRIu64
						     " its owner never got", index);
				present[t][j] = false;
				atomic_fetch_add_explicit(&n_inval, 1, memory_order_relaxed);
			} else if (present[t][j]) {
				atomic_fetch_add_explicit(&n_inval_held, 1, memory_order_relaxed);
			}
			rc = lpc_page_find(file, index, &p);
			if (rc == 0) {
				check_data(p, index, "find after invalidate");
				lpc_page_put(p);
			}
			/* Held by a reader (0 returned): still there, unless
			 * the reclaimer evicted it meanwhile. */
			CHECK(present[t][j] ? rc == 0 || rc == -ENOENT : rc == -ENOENT,
			      "page %" PRIu64 " after its invalidate: find %d (present %d)", index, rc,
			      present[t][j]);
			if (rc == -ENOENT)
				present[t][j] = false; /* evicted, if it was there */
		} else if (op < 82) {
			/* The whole own range: its leaves empty, die, and the
			 * next gets make them again. */
			rc = lpc_invalidate(file, (uint64_t)t * OWN * PS, (uint64_t)OWN * PS);
			CHECK(rc >= 0, "range invalidate: %d", rc);
			for (unsigned i = 0; i < OWN; i++)
				if (present[t][i] &&
				    lpc_page_find(file, own_page(t, i), &p) == -ENOENT)
					present[t][i] = false;
				else if (present[t][i])
					lpc_page_put(p);
			atomic_fetch_add_explicit(&n_ranges, 1, memory_order_relaxed);
		} else {
			/* Someone's page, in our leaves or theirs. */
			uint64_t any = tst_rnd(&r) % 2 ? shared_first + tst_rnd(&r) % SHARED
						       : tst_rnd(&r) % ((uint64_t)K * OWN);

			if (lpc_page_find(file, any, &p) == 0) {
				check_data(p, any, "find");
				lpc_page_put(p);
				atomic_fetch_add_explicit(&n_found, 1, memory_order_relaxed);
			}
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct tst_threads th = { 0 };
	struct lpc_stats st;
	uint64_t want = 0, have;
	double secs;

	tst_readahead_kb = LPC_READAHEAD_OFF; /* a miss is one page */
	secs = tst_stress_init(argc, argv, 4.0);
	K = 4;
	shared_first = (uint64_t)KMAX * OWN;
	file_size = (shared_first + SHARED) * PS;
	/* Room for every page twice over: eviction stays rare (its count is
	 * checked below; the exact count needs none). */
	cache = tst_cache_create(4 * file_size, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	file = tst_stress_file(cache, file_size, &file_id, "leaf-miss");
	tst_threads_start(&th, K, worker, NULL, 0);
	tst_stress_wait(secs);
	tst_threads_join(&th);

	lpc_stats(cache, &st);
	for (unsigned t = 0; t < K; t++)
		for (unsigned j = 0; j < own_pages(); j++)
			want += present[t][j];
	have = lpc_file_nrpages(file);
	printf("leaf-miss: %u threads, gets %lu (read again %lu), invalidated %lu (held %lu), "
	       "range invalidates %lu, found %lu; evictions %" PRIu64 ", pages %" PRIu64 "\n",
	       K, n_gets, n_reads_again, n_inval, n_inval_held, n_ranges, n_found, st.evictions,
	       have);
	if (st.evictions == 0)
		CHECK_EQ(have, want, "pages in the index (the leaves' counts) against the owners'");
	else
		CHECK(have <= want, "%" PRIu64 " pages in the index, owners have %" PRIu64, have,
		      want);
	CHECK(n_reads_again > 0 && n_inval > 0 && n_ranges > 0, "too few operations ran");
	if (st.evictions == 0) {
		CHECK_EQ(lpc_invalidate(file, 0, 0), (int)have, "the last invalidate");
	} else {
		/* The reclaimer may still evict: a page it has frozen (evict.c
		 * E4) is skipped and leaves at E6 (regress_inval_evicting). */
		CHECK(lpc_invalidate(file, 0, 0) <= (int)have, "the last invalidate");
		for (int k = 0; k < 2000 && lpc_file_nrpages(file); k++) {
			tst_sleep_us(1000);
			CHECK(lpc_invalidate(file, 0, 0) >= 0);
		}
	}
	CHECK_EQ(lpc_file_nrpages(file), 0, "pages left");
	CHECK_EQ(lpc_file_close(file), 0);
	CHECK_EQ(lpc_cache_destroy(cache), 0);
	return tst_finish();
}
