/* SPDX-License-Identifier: MIT */
/*
 * stress_lookup_race.c - the lookup/removal race (lookup.c R1-R5 against
 * remove.c A-C and frame reuse, page/alloc.c).
 *
 * A small cache (256 frames) and several null-backend files whose pages
 * outnumber the frames many times over, so frames are recycled for other
 * identities all the time:
 *  - readers lpc_page_find (and, on half their misses, lpc_page_get) random
 *    pages, mostly of a small hot set, and check each page they get: its
 *    16-byte stamp {file id, index} and every other byte of
 *    lpc_io_null_pattern, its descriptor's identity and UPTODATE, and the
 *    stamp again after holding it a moment (a frame reused while held shows);
 *  - removers lpc_invalidate random ranges of the hot set (now and then a
 *    whole file), freezing and removing pages under the readers' feet;
 *  - churners lpc_page_get cold pages and invalidate each at once, so frames
 *    go back to the allocator and return with another identity.
 * A lookup that takes a reference on a frozen page (R3 without
 * inc-unless-zero), or an invalidate that removes a held page (A without the
 * freeze), hands out a page whose stamp is another page's, or hangs (the
 * watchdog fails it).  A free that skips the grace period (C) is mostly masked
 * here by the slot re-check (R4) and is left to tests/model/spec_get.pml.
 * Both lookup modes run (LOCKLESS, then LOCKED), each for half the time;
 * only LOCKLESS can count retries.
 *
 * The threads pace themselves (a sleep after each churn and each successful
 * invalidate): an allocation that finds only frames waiting for a grace
 * period waits for a call_rcu barrier (page/alloc.c), and without the pacing
 * the readers on a 2-CPU machine spend the run waiting there.
 *
 * Printed per mode: finds (and how many hit), gets, -ENOMEM, stats.retries,
 * reads, invalidated, and frames the readers saw come back recycled.
 *
 * Usage: stress_lookup_race [--seed N]; LPC_STRESS_SECONDS (default 4) is the
 * total run time.  Exit: 0 pass, 1 fail, 77 skip.
 */
#include <sched.h>

#include "../common/stress.h"
#include "cache/cache.h"

#define NFRAMES 256
#define NFILES 4
#define PS 4096u

static const uint64_t file_pages[NFILES] = { 512, 700, 300, 1000 };

static struct lpc_cache *cache;
static struct lpc_file *files[NFILES];
static uint64_t ids[NFILES], sizes[NFILES];

struct counts {
	uint64_t finds, find_hits, find_again, gets, get_ok, enomem, checks;
	uint64_t bad_stamp, bad_data, bad_ident, bad_held, bad_rc, recycled;
	uint64_t invalidates, dropped;
};

struct worker {
	int kind; /* 0 reader, 1 remover, 2 churner */
	uint64_t rng;
	struct counts n;
	unsigned char *scratch;
	uint64_t *seen; /* per descriptor: last identity seen + 1, or 0 */
};

static void report_bad(struct worker *w, const char *what, int fi, uint64_t index,
		       struct lpc_page *p)
{
	uint64_t stamp[2];

	memcpy(stamp, lpc_page_data(p), sizeof(stamp));
	/* First few only: the counters tell the rest. */
	if (w->n.bad_stamp + w->n.bad_data + w->n.bad_ident + w->n.bad_held < 5)
		fprintf(stderr,
			"BAD %s: wanted file %d (id %" PRIu64 ") index %" PRIu64
			", page #%u holds stamp {%" PRIu64 ", %" PRIu64 "}\n",
			what, fi, ids[fi], index, p->id, stamp[0], stamp[1]);
}

/* Checks a page got for (fi, index); holds it a little when `hold`. */
/* Checks guarantee A.1 of include/lpc/lpc.h. */
static void check_page(struct worker *w, int fi, uint64_t index, struct lpc_page *p, bool hold)
{
	int r = tst_null_check_page(ids[fi], index, PS, sizes[fi], lpc_page_data(p), w->scratch);

	w->n.checks++;
	if (r == 1) {
		w->n.bad_stamp++;
		report_bad(w, "stamp", fi, index, p);
	} else if (r == 2) {
		w->n.bad_data++;
		report_bad(w, "data", fi, index, p);
	}
	/* The descriptor's identity is stable while we hold a reference. */
	if (atomic_load_explicit(&p->file, memory_order_relaxed) != files[fi] ||
	    atomic_load_explicit(&p->index, memory_order_relaxed) != index) {
		w->n.bad_ident++;
		report_bad(w, "identity", fi, index, p);
	}
	if (!(lpc_page_flags(p) & LPC_PG_UPTODATE)) {
		w->n.bad_ident++;
		report_bad(w, "not uptodate", fi, index, p);
	}
	if (w->seen) {
		uint64_t ident = ((uint64_t)fi << 40 | index) + 1;

		if (w->seen[p->id] && w->seen[p->id] != ident)
			w->n.recycled++;
		w->seen[p->id] = ident;
	}
	if (hold) {
		for (int i = 0; i < 3; i++)
			sched_yield();
		uint64_t stamp[2];

		memcpy(stamp, lpc_page_data(p), sizeof(stamp));
		if (stamp[0] != ids[fi] || stamp[1] != index) {
			w->n.bad_held++;
			report_bad(w, "held page changed", fi, index, p);
		}
	}
}

/*
 * Readers mostly hit a hot set (the first HOT pages of each file) that the
 * removers keep invalidating, so lookups race with freezes and removals;
 * churners read cold pages and drop each again at once, so frames keep
 * coming back from the free list with other identities.
 */
#define HOT 8

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct lpc_page *p;
	int rc;

	while (!tst_stopping()) {
		uint64_t r = tst_rnd(&w->rng);
		int fi = (int)(r % NFILES);
		bool hot = w->kind != 2 && (r >> 4) % 10 != 0;
		uint64_t index = hot ? (r >> 8) % HOT : HOT + (r >> 8) % (file_pages[fi] - HOT);

		switch (w->kind) {
		case 0: /* reader: find; on a miss (or now and then) get */
			if ((r >> 60) % 8 != 0) {
				w->n.finds++;
				rc = lpc_page_find(files[fi], index, &p);
				if (rc == 0) {
					w->n.find_hits++;
					check_page(w, fi, index, p, (r >> 50) % 8 == 0);
					lpc_page_put(p);
					break;
				} else if (rc == -EAGAIN) {
					w->n.find_again++;
					break;
				} else if (rc != -ENOENT) {
					w->n.bad_rc++;
					break;
				}
				if ((r >> 58) & 1)
					break; /* half the misses only: gets may wait for frames */
			}
			__attribute__((fallthrough));
		case 2: /* churner (or a reader's get) */
			w->n.gets++;
			rc = lpc_page_get(files[fi], index, 0, &p);
			if (rc == 0) {
				w->n.get_ok++;
				check_page(w, fi, index, p, w->kind == 0 && (r >> 50) % 8 == 0);
				lpc_page_put(p);
				if (w->kind == 2) {
					/* Drop it again: its frame goes back for reuse. */
					rc = lpc_invalidate(files[fi], index * PS, PS);
					if (rc < 0)
						w->n.bad_rc++;
					else
						w->n.dropped += (uint64_t)rc;
					/* Pace: an allocation that finds only frames
					 * waiting for a grace period waits for one. */
					tst_sleep_us(30);
				}
			} else if (rc == -ENOMEM) {
				w->n.enomem++;
				sched_yield();
			} else {
				w->n.bad_rc++;
				if (w->n.bad_rc < 5)
					fprintf(stderr, "BAD get(%d, %" PRIu64 ") = %d\n", fi, index, rc);
			}
			break;
		case 1: { /* remover */
			uint64_t off, len;

			if ((r >> 56) % 64 == 0) {
				off = 0;
				len = 0; /* the whole file */
			} else {
				off = index * PS + (r >> 44) % PS;
				len = (1 + (r >> 32) % 8) * PS;
			}
			rc = lpc_invalidate(files[fi], off, len);
			w->n.invalidates++;
			if (rc < 0)
				w->n.bad_rc++;
			else
				w->n.dropped += (uint64_t)rc;
			/* Leave the readers time to bring pages back (few CPUs). */
			if (rc <= 0)
				sched_yield();
			else
				tst_sleep_us(20);
			break;
		}
		}
	}
	return NULL;
}

/* The work the end checks need: frames recycled, hits, pages invalidated. */
static bool race_enough(void *arg)
{
	struct lpc_stats st;

	lpc_stats(arg, &st);
	return st.reads > 2 * NFRAMES && st.hits > 0 && st.invalidated > 0;
}

static void run_mode(int mode, double seconds, uint64_t seed)
{
	struct lpc_stats st;
	struct counts tot = { 0 };
	struct worker *ws;
	struct tst_threads th = { 0 };
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned nread = ncpu >= 8 ? 4 : 2, nremove = ncpu >= 8 ? 2 : 1,
		 nchurn = ncpu >= 8 ? 2 : 1, nw = nread + nremove + nchurn;

	cache = tst_cache_create(NFRAMES * PS, PS, LPC_IO_NULL, mode);
	for (int i = 0; i < NFILES; i++) {
		/* The last file ends inside a page: its tail must read as zeros. */
		sizes[i] = file_pages[i] * PS - (i == NFILES - 1 ? 1000 : 0);
		files[i] = tst_stress_file(cache, sizes[i], &ids[i], "race-%d-%d", mode, i);
	}

	ws = calloc(nw, sizeof(*ws));
	REQUIRE(ws);
	for (unsigned i = 0; i < nw; i++) {
		ws[i].kind = i < nread ? 0 : i < nread + nremove ? 1 : 2;
		ws[i].rng = seed + 0x1000 * (i + 1) + (uint64_t)mode;
		ws[i].scratch = malloc(PS);
		ws[i].seen = ws[i].kind == 0 ? calloc(NFRAMES, sizeof(uint64_t)) : NULL;
		REQUIRE(ws[i].scratch);
	}
	tst_threads_start(&th, nw, worker_main, ws, sizeof(*ws));
	/* Until the run did what the checks below count on: a short run on a
	 * loaded machine read 474 pages, too few to recycle the frames (seed
	 * 251896179086996 at 0.3 s, found by scripts/seed-sweep.sh). */
	tst_stress_wait_for(seconds, race_enough, cache);
	tst_threads_join(&th);
	for (unsigned i = 0; i < nw; i++) {
		tot.finds += ws[i].n.finds;
		tot.find_hits += ws[i].n.find_hits;
		tot.find_again += ws[i].n.find_again;
		tot.gets += ws[i].n.gets;
		tot.get_ok += ws[i].n.get_ok;
		tot.enomem += ws[i].n.enomem;
		tot.checks += ws[i].n.checks;
		tot.bad_stamp += ws[i].n.bad_stamp;
		tot.bad_data += ws[i].n.bad_data;
		tot.bad_ident += ws[i].n.bad_ident;
		tot.bad_held += ws[i].n.bad_held;
		tot.bad_rc += ws[i].n.bad_rc;
		tot.recycled += ws[i].n.recycled;
		tot.invalidates += ws[i].n.invalidates;
		tot.dropped += ws[i].n.dropped;
		free(ws[i].scratch);
		free(ws[i].seen);
	}
	free(ws);
	lpc_stats(cache, &st);
	printf("%s: %u readers, %u removers, %u churners, %.1f s\n",
	       mode ? "LOCKED" : "LOCKLESS", nread, nremove, nchurn, seconds);
	printf("  finds %" PRIu64 " (hit %" PRIu64 ", in flight %" PRIu64 "), gets %" PRIu64
	       " (ok %" PRIu64 ", -ENOMEM %" PRIu64 "), pages checked %" PRIu64 "\n",
	       tot.finds, tot.find_hits, tot.find_again, tot.gets, tot.get_ok, tot.enomem,
	       tot.checks);
	printf("  stats: lookups %" PRIu64 " hits %" PRIu64 " misses %" PRIu64
	       " retries %" PRIu64 " reads %" PRIu64 " invalidated %" PRIu64
	       " alloc_failures %" PRIu64 "\n",
	       st.lookups, st.hits, st.misses, st.retries, st.reads, st.invalidated,
	       st.alloc_failures);
	printf("  invalidate calls %" PRIu64 ", pages dropped %" PRIu64 "\n", tot.invalidates,
	       tot.dropped);
	printf("  recycled frames: %" PRIu64 " reads beyond the %u frames; readers saw %" PRIu64
	       " descriptors come back with another identity\n",
	       st.reads > NFRAMES ? st.reads - NFRAMES : 0, NFRAMES, tot.recycled);

	CHECK_EQ(tot.bad_stamp, 0, "%s: pages with another page's stamp", mode ? "LOCKED" : "LOCKLESS");
	CHECK_EQ(tot.bad_data, 0, "%s: pages with wrong bytes", mode ? "LOCKED" : "LOCKLESS");
	CHECK_EQ(tot.bad_ident, 0, "%s: descriptor identity or UPTODATE wrong",
		 mode ? "LOCKED" : "LOCKLESS");
	CHECK_EQ(tot.bad_held, 0, "%s: a held page changed", mode ? "LOCKED" : "LOCKLESS");
	CHECK_EQ(tot.bad_rc, 0, "%s: unexpected return codes", mode ? "LOCKED" : "LOCKLESS");
	CHECK_EQ(st.invalidated, tot.dropped, "invalidated counter vs returns");
	/* The run must have exercised what it claims to. */
	CHECK(st.reads > 2 * NFRAMES, "too few reads (%" PRIu64 ") to recycle frames", st.reads);
	CHECK(tot.find_hits > 0 && tot.get_ok > 0, "no hits at all");
	CHECK(tot.dropped > 0, "nothing invalidated");

	/* Quiet now: every page unheld, so everything can be dropped, once
	 * the readahead thread has read the windows still in flight (their
	 * pages are locked, and lpc_invalidate skips those).  The background
	 * reclaimer still evicts: a page it has frozen (E4) is skipped by the
	 * invalidate and leaves its slot at E6, moments later
	 * (tests/regress/regress_inval_evicting.c); so again, a bounded number
	 * of times, for as long as pages are left.  A page that never leaves
	 * (a freeze nobody undoes or completes) still fails. */
	for (int i = 0; i < NFILES; i++) {
		int r;

		lpc_ra_quiesce(files[i]);
		r = lpc_invalidate(files[i], 0, 0);
		CHECK(r >= 0);
		for (int k = 0; k < 2000 && lpc_file_nrpages(files[i]); k++) {
			tst_sleep_us(1000);
			CHECK(lpc_invalidate(files[i], 0, 0) >= 0);
		}
		CHECK_EQ(lpc_file_nrpages(files[i]), 0, "file %d: pages left after invalidate", i);
		CHECK_EQ(lpc_file_close(files[i]), 0);
	}
	CHECK_EQ(lpc_cache_destroy(cache), 0, "destroy");
}

int main(int argc, char **argv)
{
	double secs;

	secs = tst_stress_init(argc, argv, 4.0);
	run_mode(LPC_LOOKUP_LOCKLESS, secs / 2, tst_seed);
	run_mode(LPC_LOOKUP_LOCKED, secs / 2, tst_seed ^ 0x5555);
	return tst_finish();
}
