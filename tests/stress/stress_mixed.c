/* SPDX-License-Identifier: MIT */
/*
 * stress_mixed.c - DESIGN's stress test, reduced to today's API: threads doing
 * random lpc_page_get / lpc_page_put / lpc_page_find / lpc_pread /
 * lpc_invalidate / lpc_page_alloc + put / lpc_page_lock + unlock on several
 * null-backend files whose sizes end inside a page, with a cache smaller than
 * the working set, so eviction and frame reuse happen all the
 * time.  Every byte read (pages got or found, pread buffers) is checked
 * against lpc_io_null_pattern (and zeros past the end of the file); pages a
 * thread holds are checked again before their put; private pages are filled
 * with a marker and checked before theirs (a frame handed out twice would
 * show on one side or the other).
 *
 * At the end, with every page put: lpc_invalidate drops every page of every
 * file (nothing left in any index), and once no frame is in transit (call_rcu
 * batches, the reclaimer's drain: lpc_pool_census), the frames on the lists
 * and the counters of them both add up to `frames`; allocating private pages
 * until -ENOMEM gets exactly `frames` of them (no frame lost), after which
 * frames_free == frames, and lpc_cache_destroy returns 0.  Both lookup modes run, each for
 * half the time.
 *
 * Usage: stress_mixed [--seed N]; LPC_STRESS_SECONDS (default 4).
 * Exit: 0 pass, 1 fail, 77 skip.
 */
#include <sched.h>

#include "../common/stress.h"
#include "cache/cache.h"

#define PS 4096u
#define NFRAMES 128
#define NFILES 3
#define HOLD 4

static const uint64_t fsizes[NFILES] = { 300 * PS + 123, 200 * PS, 500 * PS - 7 };
static struct lpc_cache *cache;
static struct lpc_file *files[NFILES];
static uint64_t ids[NFILES];

enum op { OP_GET, OP_PUT, OP_FIND, OP_PREAD, OP_INVAL, OP_ALLOC, OP_LOCK, OP_N };
static const char *const op_names[OP_N] = { "get", "put", "find", "pread",
					    "invalidate", "alloc", "lock" };
/* Weights in percent: they add up to 100. */
static const unsigned op_weight[OP_N] = { 22, 10, 20, 22, 14, 7, 5 };

struct held {
	struct lpc_page *p;
	int fi;
	uint64_t index;
};

struct worker {
	uint64_t rng;
	struct held held[HOLD];
	unsigned nheld;
	unsigned char *scratch, *buf;
	uint64_t ops[OP_N], enomem_get, enomem_alloc, find_miss, pread_bytes, dropped;
	uint64_t bad;
};

static void bad(struct worker *w, const char *fmt, int fi, uint64_t a, uint64_t b)
{
	if (w->bad++ < 5) {
		fprintf(stderr, "BAD: ");
		fprintf(stderr, fmt, fi, a, b);
		fprintf(stderr, "\n");
	}
}

/* Checks guarantees A.1, A.3 of include/lpc/lpc.h. */
static void check_page(struct worker *w, int fi, uint64_t index, struct lpc_page *p)
{
	int r = tst_null_check_page(ids[fi], index, PS, fsizes[fi], lpc_page_data(p), w->scratch);

	if (r)
		bad(w, "file %d page %" PRIu64 ": %s", fi, index,
		    (uint64_t)(uintptr_t)(r == 1 ? "wrong stamp" : "wrong bytes"));
}

static void put_held(struct worker *w, unsigned i)
{
	struct held h = w->held[i];

	check_page(w, h.fi, h.index, h.p); /* unchanged while held */
	lpc_page_put(h.p);
	w->held[i] = w->held[--w->nheld];
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct lpc_page *p;
	int rc;

	while (!tst_stopping()) {
		uint64_t r = tst_rnd(&w->rng), r2 = tst_rnd(&w->rng);
		int fi = (int)(r % NFILES);
		uint64_t npages = (fsizes[fi] + PS - 1) / PS;
		uint64_t index = (r >> 8) % npages;
		unsigned pick = (unsigned)(r2 % 100), op = 0;

		while (pick >= op_weight[op]) {
			pick -= op_weight[op];
			op++;
		}
		w->ops[op]++;
		switch (op) {
		case OP_GET:
			rc = lpc_page_get(files[fi], index, 0, &p);
			if (rc == 0) {
				if (lpc_page_data(p) == NULL) {
					bad(w, "file %d page %" PRIu64 ": no data %" PRIu64, fi, index, 0);
					break;
				}
				check_page(w, fi, index, p);
				if (w->nheld == HOLD)
					put_held(w, (unsigned)(r2 >> 20) % HOLD);
				w->held[w->nheld++] = (struct held){ p, fi, index };
			} else if (rc == -ENOMEM) {
				w->enomem_get++;
			} else {
				bad(w, "file %d get %" PRIu64 " = %" PRId64, fi, index, (uint64_t)rc);
			}
			break;
		case OP_PUT:
			if (w->nheld)
				put_held(w, (unsigned)(r2 >> 20) % w->nheld);
			break;
		case OP_FIND:
			rc = lpc_page_find(files[fi], index, &p);
			if (rc == 0) {
				check_page(w, fi, index, p);
				lpc_page_put(p);
			} else if (rc == -ENOENT || rc == -EAGAIN) {
				w->find_miss++;
			} else {
				bad(w, "file %d find %" PRIu64 " = %" PRId64, fi, index, (uint64_t)rc);
			}
			break;
		case OP_PREAD: {
			uint64_t off = (r >> 8) % (fsizes[fi] + PS);
			size_t len = (size_t)((r2 >> 20) % (3 * PS + 1));
			size_t want = off >= fsizes[fi] ? 0
				      : fsizes[fi] - off < len ? (size_t)(fsizes[fi] - off) : len;
			ssize_t got = lpc_pread(files[fi], w->buf, len, off);
			uint64_t where = 0;

			if (got != (ssize_t)want) {
				bad(w, "file %d pread at %" PRIu64 " returned %" PRId64, fi, off,
				    (uint64_t)got);
				break;
			}
			if (!tst_null_check_range(ids[fi], PS, fsizes[fi], off, w->buf, want,
						  w->scratch, &where))
				bad(w, "file %d pread at %" PRIu64 ": wrong byte at %" PRIu64, fi, off,
				    where);
			w->pread_bytes += want;
			break;
		}
		case OP_INVAL: {
			/* A whole file now and then, else up to 64 pages. */
			bool all = (r2 >> 8) % 8 == 0;
			uint64_t off = all ? 0 : index * PS + (r2 >> 12) % PS;
			uint64_t len = all ? 0 : (1 + (r2 >> 24) % 64) * PS;

			rc = lpc_invalidate(files[fi], off, len);
			if (rc < 0)
				bad(w, "file %d invalidate %" PRIu64 " = %" PRId64, fi, off,
				    (uint64_t)rc);
			else
				w->dropped += (uint64_t)rc;
			break;
		}
		case OP_ALLOC:
			rc = lpc_page_alloc(cache, &p);
			if (rc == 0) {
				unsigned char *d = lpc_page_data(p);
				unsigned char mark = (unsigned char)(0xa0 | (r & 15));

				memset(d, mark, PS);
				sched_yield();
				for (size_t i = 0; i < PS; i += 64)
					if (d[i] != mark || d[i + 63] != mark) {
						bad(w, "private frame %d overwritten at %" PRIu64 " %" PRIu64,
						    0, i, 0);
						break;
					}
				lpc_page_put(p);
			} else if (rc == -ENOMEM) {
				w->enomem_alloc++;
			} else {
				bad(w, "alloc = %d %" PRIu64 "%" PRIu64, rc, 0, 0);
			}
			break;
		case OP_LOCK:
			if (w->nheld) {
				struct held *h = &w->held[(r2 >> 20) % w->nheld];

				lpc_page_lock(h->p);
				check_page(w, h->fi, h->index, h->p);
				if ((r2 >> 40) % 4 == 0)
					sched_yield(); /* invalidate must skip it meanwhile */
				lpc_page_unlock(h->p);
			}
			break;
		}
	}
	while (w->nheld)
		put_held(w, w->nheld - 1);
	return NULL;
}

/* The work the checks after the run need: eviction ran, frames reused. */
static bool mixed_enough(void *arg)
{
	struct lpc_stats st;

	lpc_stats(arg, &st);
	return st.evictions > 0 && st.reads > NFRAMES;
}

static void run_mode(int mode, double seconds, uint64_t seed)
{
	struct lpc_stats st;
	struct worker *ws;
	struct tst_threads th = { 0 };
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned nw = ncpu < 2 ? 2 : ncpu > 4 ? 8 : (unsigned)ncpu * 2;
	uint64_t tot[OP_N] = { 0 }, enomem_get = 0, enomem_alloc = 0, find_miss = 0;
	uint64_t nbad = 0, bytes = 0, dropped = 0;

	cache = tst_cache_create(NFRAMES * PS, PS, LPC_IO_NULL, mode);
	for (int i = 0; i < NFILES; i++)
		files[i] = tst_stress_file(cache, fsizes[i], &ids[i], "mixed-%d-%d", mode, i);
	ws = calloc(nw, sizeof(*ws));
	REQUIRE(ws);
	for (unsigned i = 0; i < nw; i++) {
		ws[i].rng = seed * 31 + i + 1;
		ws[i].scratch = malloc(PS);
		ws[i].buf = malloc(3 * PS + 1);
		REQUIRE(ws[i].scratch && ws[i].buf);
	}
	tst_threads_start(&th, nw, worker_main, ws, sizeof(*ws));
	tst_stress_wait_for(seconds, mixed_enough, cache);
	tst_threads_join(&th);
	for (unsigned i = 0; i < nw; i++) {
		for (int o = 0; o < OP_N; o++)
			tot[o] += ws[i].ops[o];
		enomem_get += ws[i].enomem_get;
		enomem_alloc += ws[i].enomem_alloc;
		find_miss += ws[i].find_miss;
		nbad += ws[i].bad;
		bytes += ws[i].pread_bytes;
		dropped += ws[i].dropped;
		free(ws[i].scratch);
		free(ws[i].buf);
	}
	free(ws);

	lpc_stats(cache, &st);
	printf("%s: %u threads, %.1f s, %u frames for %" PRIu64 " pages\n  ops:",
	       mode ? "LOCKED" : "LOCKLESS", nw, seconds, NFRAMES,
	       (fsizes[0] + fsizes[1] + fsizes[2]) / PS);
	for (int o = 0; o < OP_N; o++)
		printf(" %s %" PRIu64, op_names[o], tot[o]);
	printf("\n  get -ENOMEM %" PRIu64 ", alloc -ENOMEM %" PRIu64 ", find misses %" PRIu64
	       ", pread bytes %" PRIu64 ", dropped %" PRIu64 "\n",
	       enomem_get, enomem_alloc, find_miss, bytes, dropped);
	printf("  stats: hits %" PRIu64 " misses %" PRIu64 " retries %" PRIu64 " reads %" PRIu64
	       " read_around %" PRIu64 " alloc_failures %" PRIu64 " invalidated %" PRIu64 "\n",
	       st.hits, st.misses, st.retries, st.reads, st.read_around, st.alloc_failures,
	       st.invalidated);
	CHECK_EQ(nbad, 0, "%s: wrong data or return codes", mode ? "LOCKED" : "LOCKLESS");
	CHECK_EQ(st.invalidated, dropped, "invalidated counter vs returns");
	/* The cache fills (1000 pages, 128 frames): eviction makes room.
	 * Read-around needs every frame held: test_evict_exhaust. */
	CHECK(st.evictions > 0, "the cache was never full: nothing evicted");
	CHECK(st.reads > NFRAMES, "frames never reused");

	/* Quiet: everything put, so everything can be dropped, once the
	 * readahead thread has read the windows still in flight (their pages
	 * are locked, and lpc_invalidate skips those).  A page the background
	 * reclaimer has frozen (evict.c E4) is skipped too and leaves at E6:
	 * again, a bounded number of times, while pages are left
	 * (tests/regress/regress_inval_evicting.c). */
	for (int i = 0; i < NFILES; i++) {
		lpc_ra_quiesce(files[i]);
		CHECK(lpc_invalidate(files[i], 0, 0) >= 0);
		for (int k = 0; k < 2000 && lpc_file_nrpages(files[i]); k++) {
			tst_sleep_us(1000);
			CHECK(lpc_invalidate(files[i], 0, 0) >= 0);
		}
		CHECK_EQ(lpc_file_nrpages(files[i]), 0, "file %d: pages left in the index", i);
	}
	/* Every frame is free now, on a list or in transit: pending (waiting
	 * for a grace period), in a call_rcu batch, or in the hands of the
	 * reclaimer's drain, which an invalidate that leaves a batch pending
	 * starts at any time after it.  Count them once none is in transit
	 * (lpc_pool_census: -EAGAIN until then).  Adding lpc_stats's
	 * frames_free and npending, read apart, missed a drain that began
	 * between the two (regress_quiet_drain). */
	struct lpc_pool_census cs;
	int crc;

	for (int i = 0; i < 2000 && (crc = lpc_pool_census(&cache->pool, 0, &cs)) == -EAGAIN; i++)
		tst_sleep_us(1000);
	CHECK_EQ(crc, 0, "frames still in transit after 2 s");
	CHECK_EQ(cs.total, NFRAMES,
		 "free frames: %u shared + %u fresh + %u private + %u pending != frames", cs.shared,
		 cs.fresh, cs.private_frames, cs.pending);
	CHECK_EQ(cs.counted, NFRAMES, "nfree + the threads' + npending != frames");
	/* Every frame can be had again, and not one more. */
	CHECK_EQ(tst_frames_allocatable(cache, NFRAMES), NFRAMES,
		 "private pages allocated from an idle cache");
	lpc_stats(cache, &st);
	CHECK_EQ(st.frames_free, NFRAMES, "frames_free after every put");
	for (int i = 0; i < NFILES; i++)
		CHECK_EQ(lpc_file_close(files[i]), 0);
	CHECK_EQ(lpc_cache_destroy(cache), 0, "destroy");
}

int main(int argc, char **argv)
{
	double secs;
	unsigned sum = 0;

	secs = tst_stress_init(argc, argv, 4.0);
	for (int o = 0; o < OP_N; o++)
		sum += op_weight[o];
	REQUIRE(sum == 100, "op weights add up to %u", sum);
	run_mode(LPC_LOOKUP_LOCKLESS, secs / 2, tst_seed);
	run_mode(LPC_LOOKUP_LOCKED, secs / 2, tst_seed ^ 0xabcdef);
	return tst_finish();
}
