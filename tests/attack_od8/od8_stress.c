/* SPDX-License-Identifier: MIT */
/*
 * od8_stress.c - the covered front and borrowing (page/alloc.c OD2, OD3,
 * OD5, OD7, OD8; core/thread.h dcov, dborrow), in a small cache where the
 * takers (the reclaimer's RT1-RT4, reclaim()'s steal T1-T4, thread exit)
 * move the owners' deferred lists all the time, against lockless readers
 * that found the old pages.
 *
 * Claims attacked:
 *   1. no frame is reused within a read section that found its page before
 *      the removal (DEFERRED-GRACE at OD5, GRACE-PERIOD in lookup.c), when
 *      OD3 takes the covered front (dcov) while a newer chain, not covered,
 *      is behind it, and a taker empties the list between an owner's
 *      chains (a stale dcov would cover the new chain);
 *   2. no frame is lost or counted twice (FRAMES-ACCOUNTED: the census of
 *      a quiet pool finds every frame once);
 *   3. no thread starves the others by borrowing (OD8): a blocking get of
 *      a clean, reclaimable working set never fails with ENOMEM.
 *
 * Threads:
 *   NOWN owner slots; each runs a chain of short-lived owner threads (1-16
 *     rounds each, then exit: lpc_pool_thread_exit moves dfree to pending
 *     and resets dborrow; the next thread may get the block back).  A round
 *     reads region A, invalidates it (OD2), sometimes lpc_page_alloc's 4
 *     private pages (scribbled 0xa5), reads B (misses: OD3 front, OD8
 *     borrow, OD4), invalidates B (OD2 behind A's rest), reads A again;
 *   a filler reads pages past the owners' regions, more than the cache
 *     holds: evictions, the reclaimer's takes of every dfree, direct
 *     reclaim's steals;
 *   NRD readers get/find/pread every region and check the bytes against the
 *     null backend's pattern, also after a yield while held;
 *   a waiter (argv[2] != 0) loops lpc_rcu_synchronize, so that stamps pass
 *     while chains are kept: OD2 makes covered fronts, OD3 takes them.
 * Exit 1 on a wrong page, an ENOMEM of a blocking get, or a census that
 * does not find every frame once; 0 if every check held.
 *   make && LPC_YIELD=all LPC_YIELD_PROB=0.05 out-asan/od8_stress [secs] [waiter] [filler] [long]
 * (waiter, filler: 1 on, 0 off; both on by default; long 1: the owners never
 * exit, so only the reclaimer's takes and steals reset dborrow).
 */
#include "cache/cache.h"
#include "core/rcu.h"
#include "../attack_miss/mh.h"

#define PS 4096u
#define NFRAMES 512u /* tbatch 8: OD8's cap is 256 frames, half the cache */
#define NOWN 3
#define NRD 2
#define REG 40u     /* pages per region; regions 2 per owner */
#define FILL 1024u  /* the filler's pages, past the owners' */

static struct lpc_cache *cache;
static struct lpc_file *file;
static uint64_t fid;
static _Atomic bool stop;
static _Atomic long bad, enomem, rounds, lives, privs, reads, waits, fills;
/* What the owners' own blocks showed after their misses (the owner's
 * fields, read by the owner): rounds with a borrow counted, with a covered
 * front, the largest dborrow. */
static _Atomic long saw_borrow, saw_front, max_borrow;
static bool with_filler = true, long_lives;

static bool page_ok(const void *buf, uint64_t index, const char *what)
{
	uint64_t e[PS / 8];
	const uint64_t *w = buf;
	size_t k;

	lpc_io_null_pattern(fid, index, e, sizeof(e));
	if (!memcmp(buf, e, PS))
		return true;
	for (k = 0; k < PS / 8 && w[k] == e[k]; k++)
		;
	if (atomic_fetch_add(&bad, 1) < 10)
		printf("  FAIL %s: index %" PRIu64 ": word %zu is %#" PRIx64 ", want %#" PRIx64
		       " (the page holds id %#" PRIx64 " index %" PRIu64 ")\n",
		       what, index, k, w[k], e[k], w[0], w[1]);
	return false;
}

static void get_check(uint64_t i, const char *what)
{
	struct lpc_page *p;
	int rc = lpc_page_get(file, i, 0, &p);

	if (rc == 0) {
		page_ok(lpc_page_data(p), i, what);
		lpc_page_put(p);
	} else if (rc == -ENOMEM) {
		if (atomic_fetch_add(&enomem, 1) < 10)
			printf("  FAIL %s: get %" PRIu64 ": ENOMEM (starved)\n", what, i);
	} else if (atomic_fetch_add(&bad, 1) < 10) {
		printf("  FAIL %s: get %" PRIu64 ": %d\n", what, i, rc);
	}
}

static void read_region(uint64_t first, char *buf, bool pread)
{
	for (uint64_t i = first; i < first + REG; i++) {
		if (pread) {
			ssize_t r = lpc_pread(file, buf, PS, i * PS);

			if (r == (ssize_t)PS)
				page_ok(buf, i, "owner pread");
			else if (r != -ENOMEM && atomic_fetch_add(&bad, 1) < 10)
				printf("  FAIL owner pread: %zd\n", r);
			continue;
		}
		get_check(i, "owner get");
	}
}

struct life {
	uintptr_t o;
	uint64_t rs;
	unsigned n;
};

static void *owner_life(void *arg)
{
	struct life *l = arg;
	uint64_t a = (2 * l->o) * REG, b = (2 * l->o + 1) * REG;
	char *buf = aligned_alloc(4096, PS);
	struct lpc_tcache *t;

	for (unsigned k = 0; k < l->n && !atomic_load(&stop); k++) {
		unsigned r = (unsigned)(mh_rand(&l->rs) % 8);

		read_region(a, buf, false);
		(void)lpc_invalidate(file, a * PS, (uint64_t)REG * PS);		/* OD2 */
		if (r == 0) {
			struct lpc_page *p;

			for (int j = 0; j < 4; j++)
				if (lpc_page_alloc(cache, &p) == 0) {
					memset(lpc_page_data(p), 0xa5, PS);
					atomic_fetch_add(&privs, 1);
					lpc_page_put(p);
				}
		}
		read_region(b, buf, r & 1);				/* OD3, OD8, OD4 */
#ifndef LPC_TSAN /* a plain read outside S1-S3: a taker may write meanwhile */
		if ((t = lpc_tcache(&cache->pool.owner))) {
			long m = atomic_load(&max_borrow);

			if (t->dborrow)
				atomic_fetch_add(&saw_borrow, 1);
			if (t->dfree && t->dcov)
				atomic_fetch_add(&saw_front, 1);
			while ((long)t->dborrow > m &&
			       !atomic_compare_exchange_weak(&max_borrow, &m, (long)t->dborrow))
				;
		}
#else
		(void)t;
#endif
		(void)lpc_invalidate(file, b * PS, (uint64_t)REG * PS);	/* behind A's rest */
		read_region(a, buf, r & 2);
		atomic_fetch_add(&rounds, 1);
	}
	free(buf);
	return NULL;
}

/* A chain of short-lived owner threads: each exit is a taker (OD6). */
static void *owner_slot(void *arg)
{
	struct life l = { .o = (uintptr_t)arg, .rs = (uintptr_t)arg * 77 + 3 };
	pthread_t th;

	while (!atomic_load(&stop)) {
		l.n = long_lives ? ~0u : 1 + (unsigned)(mh_rand(&l.rs) % 16);
		if (pthread_create(&th, NULL, owner_life, &l))
			break;
		pthread_join(th, NULL);
		atomic_fetch_add(&lives, 1);
	}
	return NULL;
}

static void *filler(void *arg)
{
	uint64_t i = 0, base = 2 * NOWN * REG;

	(void)arg;
	while (!atomic_load(&stop)) {
		get_check(base + i, "filler get");
		i = (i + 1) % FILL;
		atomic_fetch_add(&fills, 1);
	}
	return NULL;
}

static void *reader(void *arg)
{
	uint64_t rs = (uintptr_t)arg * 0x9e3779b97f4a7c15ULL + 1;
	char *buf = aligned_alloc(4096, PS);
	struct lpc_page *p;

	while (!atomic_load(&stop)) {
		uint64_t i = mh_rand(&rs) % (2 * NOWN * REG);
		unsigned op = (unsigned)(mh_rand(&rs) % 3);

		if (op == 0) {
			ssize_t r = lpc_pread(file, buf, PS, i * PS);

			if (r == (ssize_t)PS)
				page_ok(buf, i, "reader pread");
		} else if ((op == 1 ? lpc_page_find(file, i, &p) : lpc_page_get(file, i, 0, &p)) == 0) {
			if (page_ok(lpc_page_data(p), i, "reader get/find")) {
				sched_yield();
				page_ok(lpc_page_data(p), i, "reader, held across a yield");
			}
			lpc_page_put(p);
		}
		atomic_fetch_add(&reads, 1);
	}
	free(buf);
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		bool entered = lpc_rcu_scope_enter();

		lpc_rcu_synchronize();
		lpc_rcu_scope_exit(entered);
		atomic_fetch_add(&waits, 1);
		usleep(200);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 20;
	bool with_waiter = argc > 2 ? atoi(argv[2]) != 0 : true;
	struct lpc_config cfg;
	struct lpc_pool_census cs;
	pthread_t own[NOWN], rd[NRD], w, fl;
	char path[512];
	struct lpc_page *p;
	uint64_t gp0;
	double t0;
	int crc = -EAGAIN, census_bad = 0;

	lpc_config_init(&cfg);
	cfg.cache_bytes = (size_t)NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.lookup_mode = LPC_LOOKUP_LOCKLESS;
	cfg.readahead_kb = 0;
	cfg.alloc_wait_ms = 5000;
	with_filler = argc > 3 ? atoi(argv[3]) != 0 : true;
	long_lives = argc > 4 && atoi(argv[4]) != 0;
	if (lpc_cache_create(&cfg, &cache)) {
		printf("create failed\n");
		return 1;
	}
	mh_hole_file("od8", (uint64_t)(2 * NOWN * REG + FILL) * PS, path, sizeof(path));
	if (lpc_file_open(cache, path, O_RDONLY, 0, &file) || lpc_page_get(file, 0, 0, &p)) {
		printf("open failed\n");
		return 1;
	}
	fid = ((uint64_t *)lpc_page_data(p))[0];
	lpc_page_put(p);
	printf("od8_stress: tbatch %u, low_free %u, wake_below %u, waiter %d, filler %d, "
	       "owners never exit %d\n",
	       cache->pool.tbatch, cache->pool.low_free, cache->pool.wake_below, with_waiter,
	       with_filler, long_lives);
	gp0 = atomic_load(&lpc_rcu_gp_begun);
	for (uintptr_t i = 0; i < NOWN; i++)
		pthread_create(&own[i], NULL, owner_slot, (void *)i);
	for (uintptr_t i = 0; i < NRD; i++)
		pthread_create(&rd[i], NULL, reader, (void *)(i + 1));
	if (with_filler)
		pthread_create(&fl, NULL, filler, NULL);
	if (with_waiter)
		pthread_create(&w, NULL, waiter, NULL);
	t0 = mh_now();
	while (mh_now() - t0 < secs && atomic_load(&bad) == 0 && atomic_load(&enomem) == 0)
		usleep(100000);
	atomic_store(&stop, true);
	for (int i = 0; i < NOWN; i++)
		pthread_join(own[i], NULL);
	for (int i = 0; i < NRD; i++)
		pthread_join(rd[i], NULL);
	if (with_filler)
		pthread_join(fl, NULL);
	if (with_waiter)
		pthread_join(w, NULL);

	/* Quiet: drop every page; every frame is then free, once, somewhere
	 * the census looks (FRAMES-ACCOUNTED). */
	if (lpc_invalidate(file, 0, 0) < 0 || lpc_file_nrpages(file) != 0) {
		printf("  FAIL pages left in the index after the invalidate\n");
		census_bad = 1;
	}
	for (int i = 0; i < 5000 && (crc = lpc_pool_census(&cache->pool, 0, &cs)) == -EAGAIN; i++)
		usleep(1000);
	if (crc || cs.total != NFRAMES || cs.counted != NFRAMES) {
		printf("  FAIL census rc %d: %u shared + %u fresh + %u private + %u pending = %u, "
		       "counted %u, frames %u\n",
		       crc, cs.shared, cs.fresh, cs.private_frames, cs.pending, cs.total, cs.counted,
		       NFRAMES);
		census_bad = 1;
	}
	printf("od8_stress: %.0f s, owner rounds %ld in %ld thread lives, private pages %ld, "
	       "filler gets %ld, reader ops %ld, waiter's waits %ld, grace periods in all %" PRIu64
	       ", rounds after B's misses with a borrow counted %ld (largest dborrow %ld), with a "
	       "covered front %ld, wrong pages %ld, ENOMEM %ld, census %s\n",
	       mh_now() - t0, atomic_load(&rounds), atomic_load(&lives), atomic_load(&privs),
	       atomic_load(&fills), atomic_load(&reads), atomic_load(&waits),
	       atomic_load(&lpc_rcu_gp_begun) - gp0, atomic_load(&saw_borrow),
	       atomic_load(&max_borrow), atomic_load(&saw_front), atomic_load(&bad), atomic_load(&enomem),
	       census_bad ? "WRONG" : "ok");
	lpc_file_close(file);
	lpc_cache_destroy(cache);
	att_cleanup();
	return atomic_load(&bad) || atomic_load(&enomem) || census_bad ? 1 : 0;
}
