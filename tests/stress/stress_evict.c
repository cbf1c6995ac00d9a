/* SPDX-License-Identifier: MIT */
/*
 * stress_evict.c - eviction under lockless readers (src/reclaim/evict.c,
 * E1-E7): a working set 8x the cache, 4 threads reading random pages,
 * uniform and Zipf (theta 0.99), in both lookup modes, while the background
 * reclaimer and direct reclaim evict all the while.
 *
 * Every page a thread gets (lpc_page_get) or finds (lpc_page_find) is
 * checked whole against the null backend's stamp {id, index} and pattern,
 * and checked again just before its put: a page frozen, evicted and reused
 * for another identity while held, or returned by a lookup after its
 * eviction, shows another stamp.  Each thread holds up to HOLD pages at a
 * time (so held pages are skipped and the hand must move on); some reads go
 * through lpc_pread (checked byte for byte).  A sampler checks, all along,
 * that the cache's frames stay within its budget: frames is constant, the
 * free frames and the pages in the index never exceed it.  At the end, with
 * everything put, every frame can be allocated again (none lost) and the
 * counters show that eviction ran.
 *
 * Usage: stress_evict [--seed N]; LPC_STRESS_SECONDS (default 4).
 * Exit: 0 pass, 1 fail, 77 skip.
 */
#include <math.h>

#include "../common/stress.h"
#include "cache/cache.h"

#define PS 4096u
#define NFRAMES 256u
#define NPAGES (8u * NFRAMES) /* the working set: 8x the cache */
#define NW 4u
#define HOLD 3u

static struct lpc_cache *cache;
static struct lpc_file *file;
static uint64_t file_id;
static double *zipf_cdf; /* NPAGES entries; NULL: uniform */
static _Atomic uint64_t nops, nbad;

static uint64_t pick(uint64_t *rng)
{
	double u;
	size_t lo = 0, hi = NPAGES - 1;

	if (!zipf_cdf)
		return tst_rnd(rng) % NPAGES;
	u = (double)(tst_rnd(rng) >> 11) / (double)(1ull << 53);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (zipf_cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Spread the hot pages over the file (not all in one radix leaf). */
	return (lo * 7919u) % NPAGES;
}

static void zipf_init(double theta)
{
	double sum = 0;

	zipf_cdf = malloc(NPAGES * sizeof(double));
	REQUIRE(zipf_cdf);
	for (unsigned i = 0; i < NPAGES; i++)
		sum += 1.0 / pow((double)(i + 1), theta);
	for (unsigned i = 0; i < NPAGES; i++) {
		zipf_cdf[i] = (i ? zipf_cdf[i - 1] : 0) + 1.0 / pow((double)(i + 1), theta) / sum;
	}
	zipf_cdf[NPAGES - 1] = 1.0;
}

static bool page_ok(struct lpc_page *p, uint64_t index, void *scratch)
{
	return tst_null_check_page(file_id, index, PS, (uint64_t)NPAGES * PS, lpc_page_data(p),
				   scratch) == 0;
}

static void *worker(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	uint64_t rng = tst_seed ^ (0x9e3779b97f4a7c15ull * (me + 1));
	struct lpc_page *held[HOLD] = { 0 };
	uint64_t hidx[HOLD] = { 0 };
	unsigned char *scratch = malloc(PS), *buf = malloc(PS + 64);
	uint64_t ops = 0, bad = 0;

	REQUIRE(scratch && buf);
	while (!tst_stopping() && tst_failed < 20) {
		uint64_t index = pick(&rng);
		unsigned slot = (unsigned)(tst_rnd(&rng) % HOLD);
		unsigned op = (unsigned)(tst_rnd(&rng) % 8);
		struct lpc_page *p = NULL;
		int rc;

		if (held[slot]) {
			if (!page_ok(held[slot], hidx[slot], scratch)) {
				bad++;
				CHECK(0, "held page %" PRIu64 " changed under its holder", hidx[slot]);
			}
			lpc_page_put(held[slot]);
			held[slot] = NULL;
		}
		if (op == 0) {
			uint64_t off = index * PS + tst_rnd(&rng) % PS, bad_off = 0;
			size_t len = 1 + tst_rnd(&rng) % PS;
			ssize_t r = lpc_pread(file, buf, len, off);

			if (r < 0 || !tst_null_check_range(file_id, PS, (uint64_t)NPAGES * PS, off,
							  buf, (size_t)r, scratch, &bad_off)) {
				bad++;
				CHECK(0, "pread %zu at %" PRIu64 " = %zd, bad at %" PRIu64, len, off,
				      r, bad_off);
			}
		} else {
			rc = op == 1 ? lpc_page_find(file, index, &p) : lpc_page_get(file, index, 0, &p);
			if (rc == 0) {
				if (!page_ok(p, index, scratch)) {
					bad++;
					CHECK(0, "page %" PRIu64 ": wrong stamp or data", index);
				}
				held[slot] = p;
				hidx[slot] = index;
			} else if (!(op == 1 && (rc == -ENOENT || rc == -EAGAIN))) {
				bad++;
				CHECK(0, "%s %" PRIu64 " = %d", op == 1 ? "find" : "get", index, rc);
			}
		}
		ops++;
	}
	for (unsigned i = 0; i < HOLD; i++)
		if (held[i])
			lpc_page_put(held[i]);
	atomic_fetch_add(&nops, ops);
	atomic_fetch_add(&nbad, bad);
	free(scratch);
	free(buf);
	return NULL;
}

/* Frames within budget at every sample. */
static void *sampler(void *arg)
{
	uint64_t samples = 0;

	(void)arg;
	while (!tst_stopping()) {
		struct lpc_stats st;
		uint64_t cached;

		lpc_stats(cache, &st);
		pthread_mutex_lock(&cache->files.lock);
		cached = lpc_files_nrpages(&cache->files);
		pthread_mutex_unlock(&cache->files.lock);
		if (st.frames != NFRAMES || st.frames_free > NFRAMES || cached > NFRAMES ||
		    st.descriptor_bytes != (uint64_t)NFRAMES * sizeof(struct lpc_page))
			CHECK(0, "budget: frames %" PRIu64 " free %" PRIu64 " cached %" PRIu64,
			      st.frames, st.frames_free, cached);
		samples++;
		tst_sleep_us(2000);
	}
	CHECK(samples > 0, "sampler ran");
	return NULL;
}

/* The work the checks after the run need: a batch scanned, a page evicted. */
static bool evict_enough(void *arg)
{
	struct lpc_stats st;

	lpc_stats(arg, &st);
	return st.evictions > 0 && st.reclaim_scans > 0;
}

static void run(int mode, bool zipf, double seconds)
{
	struct tst_threads th = { 0 };
	struct lpc_stats st;
	unsigned got;

	atomic_store(&nops, 0);
	atomic_store(&nbad, 0);
	zipf_cdf = NULL;
	if (zipf)
		zipf_init(0.99);
	cache = tst_cache_create(NFRAMES * PS, PS, LPC_IO_NULL, mode);
	file = tst_stress_file(cache, (uint64_t)NPAGES * PS, &file_id, "evict-%d-%d", mode, zipf);
	tst_threads_start(&th, NW, worker, NULL, 0);
	tst_threads_start(&th, 1, sampler, NULL, 0);
	tst_stress_wait_for(seconds, evict_enough, cache);
	tst_threads_join(&th);

	lpc_stats(cache, &st);
	printf("%s %s: %" PRIu64 " ops, hits %" PRIu64 " misses %" PRIu64 " evictions %" PRIu64
	       " scans %" PRIu64 " direct %" PRIu64 " wakeups %" PRIu64 " skipped held %" PRIu64
	       " locked %" PRIu64 " referenced %" PRIu64 " busy %" PRIu64
	       " read_around %" PRIu64 " index_bytes %" PRIu64 "\n",
	       mode ? "LOCKED" : "LOCKLESS", zipf ? "zipf" : "uniform", atomic_load(&nops),
	       st.hits, st.misses, st.evictions, st.reclaim_scans, st.direct_reclaims,
	       st.reclaimer_wakeups, st.skipped_held, st.skipped_locked, st.skipped_referenced,
	       st.skipped_busy, st.read_around, st.index_bytes);
	CHECK_EQ(atomic_load(&nbad), 0, "wrong data");
	CHECK(st.evictions > 0, "nothing was evicted");
	CHECK(st.reclaim_scans > 0, "no batch scanned");
	CHECK(st.index_bytes > 0, "index nodes reported");
	/* Everything put: every frame can be had again, cached ones by
	 * eviction (none was lost or leaked). */
	got = tst_frames_allocatable(cache, NFRAMES);
	CHECK_EQ(got, NFRAMES, "frames allocatable at the end");
	CHECK_EQ(lpc_file_close(file), 0);
	tst_cache_destroy(cache);
	free(zipf_cdf);
	zipf_cdf = NULL;
}

int main(int argc, char **argv)
{
	double secs = tst_stress_init(argc, argv, 4);

	for (int mode = 0; mode < 2; mode++)
		for (int z = 0; z < 2; z++)
			run(mode, z, secs / 4);
	return tst_finish();
}
