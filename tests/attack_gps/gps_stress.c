/* SPDX-License-Identifier: MIT */
/*
 * gps_stress.c - the grace-period counters exact once threads are quiet,
 * under churn: two caches, workers using one or both, exiting and
 * replaced, both reclaimers running, allocation bursts that exhaust a pool
 * (reclaim()'s T2 and rcu_barrier), invalidates (OD1-OD8, pending, call_rcu
 * batches).
 *
 * Claim attacked (ab33fde): every wait a cache's thread takes for that
 * cache is counted exactly once, in that cache; an exited thread's counts
 * are kept; the counters are exact once threads are quiet.  At the end the
 * workers are joined and each reclaimer retired and joined (its block's
 * counts folded at its exit); then for each cache lpc_stats' grace_periods
 * must equal the waits gps.h tallied for its pool (every synchronize_rcu
 * and rcu_barrier lpc made, attributed by the page/alloc.c entry point on
 * the waiting thread's stack), grace_period_ns at least their time, none
 * unattributed, and lpc_rcu_gp_begun's growth the synchronize calls.
 *
 * Usage: gps_stress [secs 10] [threads 4] [seed 1]
 * Exit 1 on a mismatch (or a failed lpc call), 0 if it holds.  Meant for
 * the asan build with LPC_YIELD=all LPC_YIELD_PROB=0.05 and for tsan.
 */
#include "gps.h"

#define PS 4096u
#define NFRAMES 256u
#define FPAGES (4 * NFRAMES)
#define SLOT 32u
#define MAXT 16

static struct lpc_cache *cc[2];
static struct lpc_file *ff[2], *tf[2]; /* tf: O_RDWR, truncated while held */
static pthread_mutex_t tlock[2] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };
static _Atomic int errors;
static _Atomic uint64_t iters_done, exits, bursts;
static double deadline;

struct worker {
	pthread_t th;
	unsigned slot, kind; /* 0: A only, 1: B only, 2: both */
	uint64_t seed;
	_Atomic int done;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	unsigned life = 20 + (unsigned)(mh_rand(&w->seed) % 200);
	struct lpc_page *p, *v[NFRAMES];

	for (unsigned it = 0; it < life && mh_now() < deadline; it++) {
		unsigned k = w->kind == 2 ? (unsigned)(mh_rand(&w->seed) & 1) : w->kind;
		struct lpc_file *f = ff[k];
		unsigned op = (unsigned)(mh_rand(&w->seed) % 10), first = w->slot * SLOT;
		int rc;

		if (op < 5) {
			rc = lpc_invalidate(f, (uint64_t)first * PS, (uint64_t)SLOT * PS);
			if (rc < 0)
				atomic_fetch_add(&errors, 1);
			for (unsigned i = first; i < first + SLOT; i++) {
				if (lpc_page_get(f, i, 0, &p) == 0)
					lpc_page_put(p);
			}
		} else if (op < 7) {
			for (unsigned i = 0; i < 64; i++) {
				if (lpc_page_get(f, (unsigned)(mh_rand(&w->seed) % FPAGES), 0, &p) == 0)
					lpc_page_put(p);
			}
		} else if (op < 8) {
			/* Held across a shrinking lpc_truncate: their last puts
			 * free them deferred, a full batch (LPC_FREE_BATCH)
			 * to call_rcu, in flight for reclaim()'s rcu_barrier. */
			struct lpc_page *h[2 * SLOT];
			unsigned n = 0;

			pthread_mutex_lock(&tlock[k]);
			for (unsigned i = 0; i < 2 * SLOT; i++)
				if (lpc_page_get(tf[k], i, 0, &h[n]) == 0)
					n++;
			/* (a get may fail: -ENOMEM while bursts hold the pool) */
			if (lpc_truncate(tf[k], 0))
				atomic_fetch_add(&errors, 1);
			for (unsigned i = 0; i < n; i++)
				lpc_page_put(h[i]);
			if (lpc_truncate(tf[k], 2ull * SLOT * PS))
				atomic_fetch_add(&errors, 1);
			pthread_mutex_unlock(&tlock[k]);
			for (unsigned i = 0; i < 32; i++) {
				if (lpc_page_get(f, (unsigned)(mh_rand(&w->seed) % FPAGES), 0, &p) == 0)
					lpc_page_put(p);
			}
		} else if (op < 9) {
			unsigned n = 0, want = NFRAMES / 2 + (unsigned)(mh_rand(&w->seed) % NFRAMES);

			while (n < want && n < NFRAMES && lpc_page_alloc(cc[k], &v[n]) == 0)
				n++;
			for (unsigned i = 0; i < n; i++)
				lpc_page_put(v[i]);
			atomic_fetch_add(&bursts, 1);
		} else {
			unsigned at = (unsigned)(mh_rand(&w->seed) % (FPAGES - 128));

			rc = lpc_invalidate(f, (uint64_t)at * PS, 128ull * PS);
			if (rc < 0)
				atomic_fetch_add(&errors, 1);
		}
		atomic_fetch_add(&iters_done, 1);
	}
	atomic_store(&w->done, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	unsigned nt = argc > 2 ? (unsigned)atoi(argv[2]) : 4;
	uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1, seed0 = seed;
	struct worker w[MAXT];
	struct gps_snap s0, s1;
	struct lpc_config cfg;
	char path[2][600], tpath[2][600];
	int bad;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (nt < 1 || nt > MAXT || FPAGES / SLOT < MAXT)
		return 77;
	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	cfg.alloc_wait_ms = 20;
	for (int k = 0; k < 2; k++) {
		mh_hole_file(k ? "gpsB" : "gpsA", (uint64_t)FPAGES * PS, path[k], sizeof(path[k]));
		mh_hole_file(k ? "gpsTB" : "gpsTA", 2ull * SLOT * PS, tpath[k], sizeof(tpath[k]));
		if (lpc_cache_create(&cfg, &cc[k]) || lpc_file_open(cc[k], path[k], O_RDONLY, 0, &ff[k]) ||
		    lpc_file_open(cc[k], tpath[k], O_RDWR, 0, &tf[k]))
			return 77;
		gps_register(cc[k]);
	}
	gps_take(&s0);
	deadline = mh_now() + secs;
	for (unsigned i = 0; i < nt; i++) {
		w[i] = (struct worker){ .slot = i, .kind = i % 3, .seed = seed * 7919 + i + 1 };
		pthread_create(&w[i].th, NULL, work, &w[i]);
	}
	while (mh_now() < deadline) {
		for (unsigned i = 0; i < nt; i++) {
			if (!atomic_load(&w[i].done))
				continue;
			pthread_join(w[i].th, NULL);
			atomic_fetch_add(&exits, 1);
			w[i].done = 0;
			w[i].seed = mh_rand(&seed) | 1;
			pthread_create(&w[i].th, NULL, work, &w[i]);
		}
		usleep(2000);
	}
	for (unsigned i = 0; i < nt; i++) {
		pthread_join(w[i].th, NULL);
		atomic_fetch_add(&exits, 1);
	}
	/* Quiet: no reclaimer may start again; the running one is joined. */
	for (int k = 0; k < 2; k++) {
		lpc_reclaim_retire(&cc[k]->reclaim);
		lpc_reclaim_stop(&cc[k]->reclaim);
	}
	gps_take(&s1);
	printf("gps_stress: %.0f s, %u threads, seed %" PRIu64 ": %" PRIu64 " iterations, %" PRIu64
	       " thread exits, %" PRIu64 " allocation bursts, %d errors\n",
	       secs, nt, seed0, atomic_load(&iters_done), atomic_load(&exits),
	       atomic_load(&bursts), atomic_load(&errors));
	bad = gps_compare("end", &s0, &s1, 1);
	if (atomic_load(&errors))
		bad++;
	for (int k = 0; k < 2; k++) {
		lpc_file_close(ff[k]);
		lpc_file_close(tf[k]);
		lpc_cache_destroy(cc[k]);
	}
	att_cleanup();
	printf("gps_stress: %s\n", bad ? "FAIL" : "holds");
	return bad ? 1 : 0;
}
