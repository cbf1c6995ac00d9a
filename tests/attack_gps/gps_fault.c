/* SPDX-License-Identifier: MIT */
/*
 * gps_fault.c - what lpc_stats' grace_period_ns / grace_periods measures in
 * lpcbench fault's loop (tools/lpcbench/fault/fault.c, seed 002): each
 * thread invalidates its own 4 MiB of a shared file and gets every page
 * again (null backend, no readahead, a cache of threads x 4 MiB + 8 MiB,
 * as lpcbench's), with gps.h's tally splitting the waits into
 * synchronize_rcu (OD4, T2, RT3: what the probe and the man page call a
 * grace period's cost) and rcu_barrier (reclaim()'s, which also waits for
 * liburcu's call_rcu thread to run the callbacks), and by thread: the
 * loop's threads and the background reclaimer.
 *
 * Claim checked (ab33fde lpc_stats.3, lpc.h; 91ab29b's "us each"):
 * "grace_period_ns / grace_periods is what one costs on this machine".
 * Exit 1 if lpc_stats' ratio is more than twice the synchronize_rcu
 * waits' own mean (barriers or something else counted in it dominate), 0
 * otherwise; the counts must also match the tally (as gps_stress).
 * Usage: gps_fault [secs 3] [threads 2]
 */
#include "gps.h"

#define PS 4096u
#define RANGE (4u << 20)
#define NPG (RANGE / PS)

static struct lpc_cache *c;
static struct lpc_file *f;
static double deadline;
static _Atomic uint64_t misses_done;
static _Atomic int errors;

static void *loop(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg * NPG;
	struct lpc_page *p;

	gps_marked = true;
	while (mh_now() < deadline) {
		if (lpc_invalidate(f, base * PS, RANGE) < 0)
			atomic_fetch_add(&errors, 1);
		for (unsigned i = 0; i < NPG; i++) {
			if (lpc_page_get(f, base + i, 0, &p)) {
				atomic_fetch_add(&errors, 1);
				return NULL;
			}
			lpc_page_put(p);
		}
		atomic_fetch_add(&misses_done, NPG);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	unsigned nt = argc > 2 ? (unsigned)atoi(argv[2]) : 2;
	struct lpc_config cfg;
	struct gps_snap s0, s1;
	pthread_t th[16];
	char path[600];
	double ratio, sync_mean, bar_mean;
	uint64_t g, sy, ba, syns_total;
	int bad;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (nt < 1 || nt > 16)
		return 77;
	mh_hole_file("gpsF", (uint64_t)nt * RANGE, path, sizeof(path));
	lpc_config_init(&cfg);
	cfg.cache_bytes = (uint64_t)nt * RANGE + (8u << 20);
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	if (lpc_cache_create(&cfg, &c) || lpc_file_open(c, path, O_RDONLY, 0, &f))
		return 77;
	gps_register(c);
	gps_take(&s0);
	deadline = mh_now() + secs;
	for (unsigned i = 0; i < nt; i++)
		pthread_create(&th[i], NULL, loop, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	lpc_reclaim_retire(&c->reclaim);
	lpc_reclaim_stop(&c->reclaim);
	gps_take(&s1);
	bad = gps_compare("fault loop", &s0, &s1, 1);
	g = s1.gp[0] - s0.gp[0];
	sy = s1.sync[1] - s0.sync[1];
	ba = s1.barrier[1] - s0.barrier[1];
	ratio = g ? (double)(s1.gp_ns[0] - s0.gp_ns[0]) / 1e3 / (double)g : 0;
	printf("gps_fault: %u threads, %.1f s: %" PRIu64 " misses, %" PRIu64
	       " grace_periods (%.2f per 1,000 misses): %" PRIu64 " synchronize_rcu, %" PRIu64
	       " rcu_barrier\n",
	       nt, secs, atomic_load(&misses_done), g,
	       atomic_load(&misses_done) ? 1000.0 * (double)g / (double)atomic_load(&misses_done) : 0,
	       sy, ba);
	/* The tally's ns per kind: synchronize alone = total - barrier share;
	 * the wrapper sums both kinds, so time the kinds apart here. */
	syns_total = atomic_load(&gps_sync_ns);
	sync_mean = sy ? (double)syns_total / 1e3 / (double)sy : 0;
	bar_mean = ba ? (double)atomic_load(&gps_barrier_ns) / 1e3 / (double)ba : 0;
	printf("  waits by the loop's threads %" PRIu64 ", by others (the reclaimer) %" PRIu64 "\n",
	       atomic_load(&gps_marked_waits), sy + ba - atomic_load(&gps_marked_waits));
	printf("  lpc_stats: %.1f us per grace period; synchronize_rcu alone %.1f us each, "
	       "rcu_barrier %.1f us each\n",
	       ratio, sync_mean, bar_mean);
	if (sy && ratio > 2 * sync_mean) {
		printf("  FAIL: lpc_stats' grace_period_ns / grace_periods is %.1fx a grace period's "
		       "cost (synchronize_rcu's mean)\n",
		       ratio / sync_mean);
		bad++;
	}
	lpc_file_close(f);
	lpc_cache_destroy(c);
	att_cleanup();
	printf("gps_fault: %s\n", bad || atomic_load(&errors) ? "FAIL" : "holds");
	return bad || atomic_load(&errors) ? 1 : 0;
}
