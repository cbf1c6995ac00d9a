/* SPDX-License-Identifier: MIT */
/*
 * stress_evict_race.c - eviction (src/reclaim/evict.c, E1-E7) racing every
 * other way a page is reached or removed: lpc_page_find, lpc_page_get, the
 * page lock, lpc_invalidate and the last lpc_file_close, on a cache much
 * smaller than the files, with evictor threads that call the evictor
 * directly all the while (besides direct reclaim and the background
 * reclaimer).  Its .yield twin (tests/stress/CMakeLists.txt) injects yields
 * at every step, E1-E7 included, and the LPC_DEBUG checks watch the rules
 * (RESURRECT, GRACE-PERIOD, LOOKUP-NOT-IN-INDEX, GP-WHILE-FROZEN,
 * EVICT-SLOT, FRAME-HANDED-OUT-TWICE ...).
 *
 * A lookup must never return a page that was frozen and reused: every page
 * a thread gets or finds carries the null backend's stamp {id, index} of
 * the file and index it asked for, checked when it is returned and again
 * under the page lock and before the put.  Files are closed (the last
 * close) and reopened by a closer thread while the others use them through
 * their own opens (so the last close happens under evictors only).
 *
 * Usage: stress_evict_race [--seed N]; LPC_STRESS_SECONDS (default 4).
 * Exit: 0 pass, 1 fail, 77 skip.
 */
#include "../common/stress.h"
#include "cache/cache.h"

#define PS 4096u
#define NFRAMES 64u
#define NPAGES 512u
#define NFILES 2u
#define NW 3u

static struct lpc_cache *cache;
static char paths[NFILES][600], cpaths[NFILES][600];
static uint64_t ids[NFILES];
static struct lpc_file *files[NFILES]; /* opened once by main: never closed early */
static _Atomic uint64_t nops, nevict;

static bool stamp_ok(unsigned fi, uint64_t index, struct lpc_page *p)
{
	uint64_t w[2];

	memcpy(w, lpc_page_data(p), sizeof(w));
	return w[0] == ids[fi] && w[1] == index;
}

static void *worker(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	uint64_t rng = tst_seed ^ (0x9e3779b97f4a7c15ull * (me + 1));
	uint64_t ops = 0;

	while (!tst_stopping() && tst_failed < 20) {
		unsigned fi = (unsigned)(tst_rnd(&rng) % NFILES);
		uint64_t index = tst_rnd(&rng) % NPAGES;
		unsigned op = (unsigned)(tst_rnd(&rng) % 8);
		struct lpc_page *p = NULL;
		int rc;

		if (op == 0) {
			rc = lpc_invalidate(files[fi], index * PS, 4 * PS);
			if (rc < 0)
				CHECK(0, "invalidate = %d", rc);
			continue;
		}
		rc = op < 3 ? lpc_page_find(files[fi], index, &p)
			    : lpc_page_get(files[fi], index, 0, &p);
		if (rc == -ENOENT || rc == -EAGAIN || rc == -ENOMEM)
			continue;
		if (rc) {
			CHECK(0, "lookup %u/%" PRIu64 " = %d", fi, index, rc);
			continue;
		}
		if (!stamp_ok(fi, index, p))
			CHECK(0, "lookup %u/%" PRIu64 ": a page of another identity", fi, index);
		if (op >= 6) {
			lpc_page_lock(p);
			if (!stamp_ok(fi, index, p))
				CHECK(0, "locked %u/%" PRIu64 ": identity changed", fi, index);
			sched_yield();
			lpc_page_unlock(p);
		}
		if (!stamp_ok(fi, index, p))
			CHECK(0, "held %u/%" PRIu64 ": identity changed before put", fi, index);
		lpc_page_put(p);
		ops++;
	}
	atomic_fetch_add(&nops, ops);
	return NULL;
}

/* Evicts directly, as the background reclaimer does, without waiting. */
static void *evictor(void *arg)
{
	struct lpc_tcache *t = lpc_tcache(&cache->pool.owner);
	uint64_t n = 0;

	(void)arg;
	REQUIRE(t);
	while (!tst_stopping() && tst_failed < 20) {
		n += lpc_reclaim_evict(&cache->reclaim, 1, t);
		lpc_page_pending_flush(&cache->pool);
	}
	atomic_fetch_add(&nevict, n);
	return NULL;
}

/* The last close of a third open of each file, over and over: its pages
 * are removed while evictors look at them (E2: REMOVED, E3: empty tree). */
static void *closer(void *arg)
{
	uint64_t rng = tst_seed ^ 0x5555;

	(void)arg;
	while (!tst_stopping() && tst_failed < 20) {
		unsigned fi = (unsigned)(tst_rnd(&rng) % NFILES);
		struct lpc_file *f;
		struct lpc_page *p;

		/* A separate file (own identity) so its last close is real. */
		if (lpc_file_open(cache, cpaths[fi], O_RDONLY, 0, &f))
			continue;
		for (uint64_t i = 0; i < 16; i++)
			if (lpc_page_get(f, tst_rnd(&rng) % NPAGES, 0, &p) == 0) {
				if (i % 4 == 0) {
					/* held across its own file's close: REMOVED */
					lpc_file_close(f);
					lpc_page_put(p);
					f = NULL;
					break;
				}
				lpc_page_put(p);
			}
		if (f)
			lpc_file_close(f);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = tst_stress_init(argc, argv, 4);
	struct tst_threads th = { 0 };
	struct lpc_stats st;

	for (int mode = 0; mode < 2; mode++) {
		atomic_store(&nops, 0);
		atomic_store(&nevict, 0);
		cache = tst_cache_create(NFRAMES * PS, PS, LPC_IO_NULL, mode);
		for (unsigned i = 0; i < NFILES; i++) {
			char name[32];

			snprintf(name, sizeof(name), "race-%d-%u", mode, i);
			REQUIRE(tst_make_sparse(name, NPAGES * PS, paths[i], sizeof(paths[i])) == 0);
			snprintf(name, sizeof(name), "race-%d-%u-c", mode, i);
			REQUIRE(tst_make_sparse(name, NPAGES * PS, cpaths[i], sizeof(cpaths[i])) == 0);
			ids[i] = tst_file_id(paths[i]);
			files[i] = tst_file_open(cache, paths[i], O_RDONLY);
		}
		tst_threads_start(&th, NW, worker, NULL, 0);
		tst_threads_start(&th, 2, evictor, NULL, 0);
		tst_threads_start(&th, 1, closer, NULL, 0);
		tst_stress_wait(secs / 2);
		tst_threads_join(&th);
		lpc_stats(cache, &st);
		printf("%s: %" PRIu64 " lookups put, %" PRIu64 " evicted by the evictor threads, "
		       "evictions %" PRIu64 " retries %" PRIu64 " skipped busy %" PRIu64
		       " held %" PRIu64 "\n",
		       mode ? "LOCKED" : "LOCKLESS", atomic_load(&nops), atomic_load(&nevict),
		       st.evictions, st.retries, st.skipped_busy, st.skipped_held);
		CHECK(atomic_load(&nevict) > 0, "the evictors evicted");
		for (unsigned i = 0; i < NFILES; i++)
			CHECK_EQ(lpc_file_close(files[i]), 0);
		CHECK_EQ(tst_frames_allocatable(cache, NFRAMES), NFRAMES, "no frame lost");
		tst_cache_destroy(cache);
	}
	return tst_finish();
}
